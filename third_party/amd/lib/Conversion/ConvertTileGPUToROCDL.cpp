//===- ConvertTileGPUToROCDL.cpp - The per-thread lowering for AMD -------===//
#include "tessel/AMD/AMDTargetInfo.h"
#include "tessel/AMD/Passes.h"

namespace tessel::amd {
#define GEN_PASS_DEF_CONVERTTILEGPUTOROCDL
#include "tessel/AMD/Passes.h.inc"
} // namespace tessel::amd

using namespace mlir;

namespace {
struct ConvertTileGPUToROCDL
    : public tessel::amd::impl::ConvertTileGPUToROCDLBase<
          ConvertTileGPUToROCDL> {
  using ConvertTileGPUToROCDLBase::ConvertTileGPUToROCDLBase;
  void runOnOperation() override {
    tessel::amd::AMDTargetInfo target(chip);
    if (failed(tessel::gpu::lowerTileGPUToLLVM(getOperation(), target)))
      signalPassFailure();
  }
};
} // namespace
