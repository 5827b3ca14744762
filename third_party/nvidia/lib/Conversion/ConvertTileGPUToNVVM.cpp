//===- ConvertTileGPUToNVVM.cpp - The per-thread lowering for NVIDIA -----===//
#include "tessel/NVIDIA/NVIDIATargetInfo.h"
#include "tessel/NVIDIA/Passes.h"

#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessel::nvidia {
#define GEN_PASS_DEF_CONVERTTILEGPUTONVVM
#include "tessel/NVIDIA/Passes.h.inc"
} // namespace tessel::nvidia

using namespace mlir;

namespace {
struct ConvertTileGPUToNVVM
    : public tessel::nvidia::impl::ConvertTileGPUToNVVMBase<
          ConvertTileGPUToNVVM> {
  using ConvertTileGPUToNVVMBase::ConvertTileGPUToNVVMBase;
  void runOnOperation() override {
    tessel::nvidia::NVIDIATargetInfo target(numCtas, computeCapability);
    if (failed(tessel::gpu::lowerTileGPUToLLVM(getOperation(), target)))
      return signalPassFailure();
    // NVVM ops without an LLVM intrinsic (wgmma.mma_async) become the PTX
    // they stand for, as inline assembly.
    RewritePatternSet patterns(&getContext());
    populateNVVMToLLVMConversionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
