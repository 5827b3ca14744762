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

def FenceHalfProducts : Pass<"amd-fence-half-products", "mlir::ModuleOp"> {
  let summary = "Keep fp32 products apart from their rounding to fp16";
  let description = [{
    LLVM's AMDGPU backend (22) selects an fp32 product of fp16 values rounded
    back to fp16, fptrunc(fmul(fpext a, b)), as one v_fma_mixlo_f16 whose
    addend is +0: a product of -0 comes out +0. A fence between each fp32
    `llvm.fmul` and the `llvm.fptrunc` to fp16 that takes it (directly or as
    an element of the vector it rounds) keeps the multiply exact in sign: a
    multiply, then a conversion. The fence is an empty inline asm statement
    that takes and gives the value in one VGPR (`"=v,0"`): LLVM 22 fails to
    select `llvm.arithmetic.fence` of a uniform value ("illegal VGPR to SGPR
    copy"), as in `x * 3.0` of a kernel argument stored as fp16.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // TESSEL_AMD_PASSES
