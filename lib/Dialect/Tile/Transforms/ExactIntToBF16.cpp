//===- ExactIntToBF16.cpp - Integers to bf16, rounded once ----------------===//
#include "tessel/Dialect/Tile/Transforms/Passes.h"
#include "tessel/Dialect/Tile/Transforms/RoundToOdd.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessel::tile {
#define GEN_PASS_DEF_TILEEXACTINTTOBF16
#include "tessel/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tessel::tile

using namespace mlir;

namespace {

template <class IntToFp>
struct IntToBF16 : OpRewritePattern<IntToFp> {
  using OpRewritePattern<IntToFp>::OpRewritePattern;
  LogicalResult matchAndRewrite(IntToFp op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getType()).isBF16())
      return failure();
    Value wide = tessel::tile::integerToOddF64(
        rewriter, op.getLoc(), op.getIn(),
        std::is_same_v<IntToFp, arith::SIToFPOp>);
    // Odd in fp32 too: truncf(sitofp x to f64) would fold back into the
    // sitofp that rounds twice.
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(
        op, op.getType(),
        tessel::tile::truncateF64ToOddF32(rewriter, op.getLoc(), wide));
    return success();
  }
};

struct ExactIntToBF16
    : public tessel::tile::impl::TileExactIntToBF16Base<ExactIntToBF16> {
  using TileExactIntToBF16Base::TileExactIntToBF16Base;
  void runOnOperation() override {
    if (native)
      return;
    RewritePatternSet patterns(&getContext());
    patterns.add<IntToBF16<arith::SIToFPOp>, IntToBF16<arith::UIToFPOp>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
