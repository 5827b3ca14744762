//===- ConvertTileGPUToNVVM.cpp - The per-thread lowering for NVIDIA -----===//
#include "tessel/NVIDIA/NVIDIATargetInfo.h"
#include "tessel/NVIDIA/Passes.h"

namespace tessel::nvidia {
#define GEN_PASS_DEF_CONVERTTILEGPUTONVVM
#include "tessel/NVIDIA/Passes.h.inc"
} // namespace tessel::nvidia

using namespace mlir;

namespace {
struct ConvertTileGPUToNVVM
    : public tessel::nvidia::impl::ConvertTileGPUToNVVMBase<
          ConvertTileGPUToNVVM> {
  void runOnOperation() override {
    tessel::nvidia::NVIDIATargetInfo target;
    if (failed(tessel::gpu::lowerTileGPUToLLVM(getOperation(), target)))
      signalPassFailure();
  }
};
} // namespace
