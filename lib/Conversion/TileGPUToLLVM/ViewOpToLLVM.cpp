//===- ViewOpToLLVM.cpp - Ranges, splats and register views -------------------===//
//
// make_range and splat from the layout; broadcast, expand_dims, trans and
// reshape keep the operand's registers.
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"
#include "Utility.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace {

struct MakeRangeLowering : TileGPUPattern<tile::MakeRangeOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::MakeRangeOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    LinearLayout layout = layoutOf(op.getType());
    auto coords = elementCoords(rw, loc, layout, threadIds(rw, loc, target));
    SmallVector<Value> values;
    for (auto &c : coords)
      values.push_back(
          op.getStart() ? rw.create<arith::AddIOp>(
                              loc, c[0], i32Const(rw, loc, op.getStart()))
                        : c[0]);
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

struct SplatLowering : TileGPUPattern<tile::SplatOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::SplatOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    int n = layoutOf(op.getType()).inSize(gpu::kRegister);
    SmallVector<Value> values(n, adaptor.getSrc()[0]);
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

/// Ops whose operand already sits in the result's registers (the layout
/// pass made sure of it): broadcast, expand_dims, trans, reshape.
template <class Op> struct SameRegistersLowering : TileGPUPattern<Op> {
  using TileGPUPattern<Op>::TileGPUPattern;
  LogicalResult
  matchAndRewrite(Op op, typename OpConversionPattern<Op>::OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    ValueRange src = adaptor.getOperands()[0];
    int n = layoutOf(op.getType()).inSize(gpu::kRegister);
    if (int(src.size()) != n)
      return rw.notifyMatchFailure(op, "operand layout not prepared");
    rw.replaceOpWithMultiple(op, {SmallVector<Value>(src)});
    return success();
  }
};

} // namespace

void gpu::lowering::populateViewOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<MakeRangeLowering, SplatLowering, SameRegistersLowering<tile::BroadcastOp>, SameRegistersLowering<tile::ExpandDimsOp>, SameRegistersLowering<tile::TransOp>, SameRegistersLowering<tile::ReshapeOp>>(tc, patterns.getContext(), target);
}
