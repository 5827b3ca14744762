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

def AmdBufferAccesses : Pass<"amd-buffer-accesses", "mlir::ModuleOp"> {
  let summary = "Global loads and stores through buffer resources where offsets provably fit";
  let description = [{
    A `tile.load` or `tile.store` of pointers that are one scalar pointer
    plus i32 element offsets (`tile.addptr` of a `tile.splat`) becomes a
    `tilegpu.buffer_load` or `tilegpu.buffer_store` where MLIR's integer
    range analysis proves every offset non-negative and every byte of
    every access below the resource's range (`tilegpu::kBufferRange`).
    The pointer's base then sits in scalar registers (the resource) and
    each access takes a 32-bit offset in one vector register instead of a
    64-bit address in two; masked lanes need no branch, as their offset
    moves past the range. Offsets the analysis cannot bound (kernel
    arguments, products that may overflow) keep global accesses, as do
    volatile loads.
  }];
  let dependentDialects = ["tessel::tilegpu::TileGPUDialect",
                           "mlir::arith::ArithDialect"];
}

#endif // TESSEL_AMD_PASSES
