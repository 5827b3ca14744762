//===- ApproximateMath.cpp - Vectorizable math for the CPU ----------------===//
//
// Transcendental functions become polynomial arithmetic that LLVM's loop
// vectorizer can vectorize, instead of scalar libm calls in hot loops.
//
//===----------------------------------------------------------------------===//
#include "tessel/Target/CPU/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessel::cpu {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "tessel/Target/CPU/Passes.h.inc"
} // namespace tessel::cpu

using namespace mlir;

namespace {
struct ApproximateMath
    : public tessel::cpu::impl::ApproximateMathBase<ApproximateMath> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
