#ifndef TESSEL_NVIDIA_PASSES
#define TESSEL_NVIDIA_PASSES

include "mlir/Pass/PassBase.td"

def ConvertTileGPUToNVVM : Pass<"convert-tilegpu-to-nvvm", "mlir::ModuleOp"> {
  let summary = "Lower tile IR with GPU layouts to the LLVM and NVVM dialects";
  let description = [{
    The per-thread lowering of lib/Conversion/TileGPUToLLVM with NVIDIA's
    special registers, barriers, warp shuffles and libdevice math; kernels
    become `nvvm.kernel` functions with `nvvm.maxntid` set to the program's
    thread count, and the module records the dynamic shared memory a program
    needs as `tilegpu.shared`. With `num-ctas` > 1, a program runs on a
    thread block cluster of that many CTAs along x (`nvvm.cluster_dim`):
    program ids and counts are the cluster's, `tile.get_cta_rank` the CTA's
    rank in it.
  }];
  let options = [
    Option<"numCtas", "num-ctas", "int", /*default=*/"1",
           "The CTAs of one program (a thread block cluster)">,
    Option<"computeCapability", "compute-capability", "int",
           /*default=*/"80",
           "The architecture (90: stmatrix for 16-bit register tiles)">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::NVVM::NVVMDialect",
                           "mlir::cf::ControlFlowDialect"];
}

#endif // TESSEL_NVIDIA_PASSES
