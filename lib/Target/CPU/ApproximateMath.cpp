//===- ApproximateMath.cpp - Vectorizable math for the CPU ----------------===//
//
// Transcendental functions become polynomial arithmetic that LLVM's loop
// vectorizer can vectorize, instead of scalar libm calls in hot loops, where
// the polynomials are accurate over the whole range (not sin and cos).
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
    // fp16/bf16 math through fp32, as the approximations are written for it.
    auto approximable = [](StringRef name) {
      return llvm::is_contained(
          {math::AtanOp::getOperationName(), math::Atan2Op::getOperationName(),
           math::TanhOp::getOperationName(), math::LogOp::getOperationName(),
           math::Log2Op::getOperationName(), math::Log1pOp::getOperationName(),
           math::ErfOp::getOperationName(), math::AsinOp::getOperationName(),
           math::AcosOp::getOperationName(), math::ExpOp::getOperationName(),
           math::ExpM1Op::getOperationName(), math::CbrtOp::getOperationName(),
           math::SinOp::getOperationName(), math::CosOp::getOperationName()},
          name);
    };
    populateMathF32ExpansionPatterns(patterns, approximable);
    // Not sin and cos: MLIR's polynomials reduce the argument in fp32, and
    // their error grows with it (3e-6 at |x| = 100, 3e-4 at 1e4, garbage
    // past 1e8), where Triton's GPUs are accurate to an ulp or two. They stay
    // calls to libm, which reduces exactly (and does not vectorize).
    populateMathPolynomialApproximationPatterns(patterns, [&](StringRef name) {
      return approximable(name) && name != math::SinOp::getOperationName() &&
             name != math::CosOp::getOperationName();
    });
    patterns.add<ErfToLibm>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
