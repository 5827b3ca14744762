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
    needs as `tilegpu.shared`.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::NVVM::NVVMDialect",
                           "mlir::cf::ControlFlowDialect"];
}

#endif // TESSEL_NVIDIA_PASSES
