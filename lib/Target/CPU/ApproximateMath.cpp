//===- ApproximateMath.cpp - Vectorizable math for the CPU ----------------===//
//
// Transcendental functions become polynomial arithmetic that LLVM's loop
// vectorizer can vectorize, instead of scalar libm calls in hot loops.
//
//===----------------------------------------------------------------------===//
#include "tessel/Target/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessel::cpu {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "tessel/Target/CPU/Passes.h.inc"
} // namespace tessel::cpu

using namespace mlir;

namespace {

/// erf on f64 has no polynomial form here and no LLVM intrinsic: call libm.
struct ErfToLibm : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ErfOp op,
                                PatternRewriter &rewriter) const override {
    Type t = op.getType();
    if (!t.isF64())
      return failure();
    auto module = op->getParentOfType<ModuleOp>();
    if (!module)
      return failure();
    auto fn = module.lookupSymbol<func::FuncOp>("erf");
    if (!fn) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(module.getBody());
      fn = func::FuncOp::create(rewriter, op.getLoc(), "erf",
                                rewriter.getFunctionType({t}, {t}));
      fn.setPrivate();
    }
    rewriter.replaceOpWithNewOp<func::CallOp>(op, fn, op.getOperand());
    return success();
  }
};

struct ApproximateMath
    : public tessel::cpu::impl::ApproximateMathBase<ApproximateMath> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    patterns.add<ErfToLibm>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
