//===- GatherOpToLLVM.cpp - Gathers ---------------------------------------===//
//
// tile.gather through shared memory: every owned element of the source is
// written at its row-major index (the op's scratch, from offset 0), then each
// thread reads, for each element of the result it holds, the source element
// at its own coordinates but along the axis, where its index says.
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"
#include "SharedAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace {

struct GatherLowering : TileGPUPattern<tile::GatherOp> {
  using TileGPUPattern::TileGPUPattern;

  LogicalResult
  matchAndRewrite(tile::GatherOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    LinearLayout resultLayout = layoutOf(resultType);
    if (layoutOf(op.getIndices().getType()) != resultLayout)
      return op.emitOpError("indices and result layouts differ");
    std::vector<int32_t> srcShape(srcType.getShape().begin(),
                                  srcType.getShape().end());
    unsigned axis = op.getAxis();
    Type elt = getTypeConverter()->convertType(resultType.getElementType());
    unsigned space = target.sharedAddressSpace();
    target.barrier(rw, loc);
    writeTensorToShared(rw, loc, target, layoutOf(srcType), srcShape,
                        adaptor.getSrc(), 0);
    target.barrier(rw, loc);
    ThreadIds ids = threadIds(rw, loc, target);
    auto coords = elementCoords(rw, loc, resultLayout, ids);
    Value len = i32Const(rw, loc, srcShape[axis]);
    SmallVector<Value> results;
    for (auto [r, index] : llvm::enumerate(adaptor.getIndices())) {
      Value i = index;
      unsigned width = i.getType().getIntOrFloatBitWidth();
      if (width > 32)
        i = rw.create<arith::TruncIOp>(loc, rw.getI32Type(), i);
      else if (width < 32)
        i = rw.create<arith::ExtSIOp>(loc, rw.getI32Type(), i);
      // An index outside the source reads its first element (negative ones
      // are large unsigned), never outside the scratch.
      Value inside = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                              i, len);
      SmallVector<Value> at(coords[r]);
      at[axis] = rw.create<arith::SelectOp>(loc, inside, i, i32Const(rw, loc, 0));
      results.push_back(loadShared(rw, loc, space, elt, 0,
                                   flatIndex(rw, loc, at, srcShape)));
    }
    rw.replaceOpWithMultiple(op, {results});
    return success();
  }
};

} // namespace

void gpu::lowering::populateGatherOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<GatherLowering>(tc, patterns.getContext(), target);
}
