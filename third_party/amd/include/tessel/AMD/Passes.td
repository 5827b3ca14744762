#ifndef TESSEL_AMD_PASSES
#define TESSEL_AMD_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTileGPUToROCDL : Pass<"convert-tilegpu-to-rocdl", "mlir::ModuleOp"> {
  let summary = "Lower tile IR with GPU layouts to the LLVM and ROCDL dialects";
  let description = [{
    The per-thread lowering of lib/Conversion/TileGPUToLLVM for AMD's CDNA
    GPUs (wave64): work-item and workgroup ids, the grid's size from the HSA
    dispatch packet, s_barrier between workgroup fences, ds_bpermute for
    exchanges between lanes, LLVM atomics with AMDGPU's sync scopes, OCKL's
    printf and OCML's math. Kernels become `rocdl.kernel` functions whose
    workgroup size is the program's thread count; the module records the
    LDS a program needs as `tilegpu.shared`.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"gfx942\"",
           "The GPU (gfx90a, gfx942, gfx950)">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::ROCDL::ROCDLDialect",
                           "mlir::cf::ControlFlowDialect"];
}

#endif // TESSEL_AMD_PASSES
