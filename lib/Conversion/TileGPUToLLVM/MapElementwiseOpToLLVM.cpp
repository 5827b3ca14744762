//===- MapElementwiseOpToLLVM.cpp - tl.map_elementwise --------------------===//
//
// tile.map_elementwise: the scalar region cloned once per group of `pack`
// registers of the thread (its sources and results share one layout), so
// control flow in it runs per element, in each thread.
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"


using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;

namespace {

struct MapElementwiseLowering : TileGPUPattern<tile::MapElementwiseOp> {
  using TileGPUPattern::TileGPUPattern;

  LogicalResult
  matchAndRewrite(tile::MapElementwiseOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    auto layout = layoutOf(op.getSrcs()[0].getType());
    for (Value v : llvm::concat<Value>(op.getSrcs(), op.getResults()))
      if (layoutOf(v.getType()) != layout)
        return op.emitOpError("sources and results have different layouts");
    int numRegs = layout.inSize(gpu::kRegister);
    int pack = op.getPack();
    if (numRegs % pack != 0)
      return op.emitOpError("pack ")
             << pack << " does not divide a thread's " << numRegs
             << " registers";
    Block &body = op.getBody().front();
    size_t numResults = op.getResults().size();
    SmallVector<SmallVector<Value>> results(numResults,
                                            SmallVector<Value>(numRegs));
    for (int first = 0; first < numRegs; first += pack) {
      SmallVector<Value> args;
      for (ValueRange src : adaptor.getSrcs())
        for (int j = 0; j < pack; ++j)
          args.push_back(src[first + j]);
      SmallVector<Value> returned = inlineBlock(rw, body, args);
      for (size_t r = 0; r < numResults; ++r)
        for (int j = 0; j < pack; ++j)
          results[r][first + j] = returned[r * pack + j];
    }
    SmallVector<SmallVector<Value>> asRanges(results.begin(), results.end());
    rw.replaceOpWithMultiple(op, asRanges);
    return success();
  }
};

} // namespace

void gpu::lowering::populateMapElementwiseOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<MapElementwiseLowering>(tc, patterns.getContext(), target);
}
