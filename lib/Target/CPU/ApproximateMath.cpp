//===- ApproximateMath.cpp - Vectorizable math for the CPU ----------------===//
//
// Transcendental functions become polynomial arithmetic that LLVM's loop
// vectorizer can vectorize, instead of scalar libm calls in hot loops, where
// the polynomials are accurate over the whole range (not sin and cos).
// Subnormals are kept as on the GPUs: exp's results below 2^-126 and log's,
// log2's and cbrt's subnormal operands, which MLIR's polynomials flush to
// zero, are handled here.
//
//===----------------------------------------------------------------------===//
#include "tessel/Target/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
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

/// A constant of `type` (a scalar, or a splat of `scalar` when shaped).
Value constant(ImplicitLocOpBuilder &b, Type type, TypedAttr scalar) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return arith::ConstantOp::create(b, DenseElementsAttr::get(shaped, scalar));
  return arith::ConstantOp::create(b, scalar);
}

Value floatConstant(ImplicitLocOpBuilder &b, Type type, double v) {
  return constant(b, type, b.getFloatAttr(getElementTypeOrSelf(type), v));
}

/// exp on f32: MLIR's argument reduction and polynomial (Cephes'), but 2^n is
/// applied in two halves, so results below 2^-126 are subnormals, rounded
/// once. MLIR's version returns 0 there (it assumes FTZ): e^-88 was 0 where
/// the GPUs and numpy give 6.05e-39.
/// With `scalef`, 2^n is one llvm.ldexp (vscalefps), which rounds once too.
struct ExpKeepingSubnormals : OpRewritePattern<math::ExpOp> {
  ExpKeepingSubnormals(MLIRContext *ctx, bool scalef)
      : OpRewritePattern(ctx, /*benefit=*/2), scalef(scalef) {}
  bool scalef;
  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    Type t = op.getType();
    if (!getElementTypeOrSelf(t).isF32())
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    auto c = [&](double v) { return floatConstant(b, t, v); };
    auto fma = [&](Value x, Value y, Value z) -> Value {
      return math::FmaOp::create(b, x, y, z);
    };
    auto clamp = [&](Value x, arith::CmpFPredicate pred, double bound) {
      // Ordered comparisons: a NaN stays a NaN.
      Value limit = c(bound);
      return arith::SelectOp::create(
          b, arith::CmpFOp::create(b, pred, x, limit), limit, x);
    };
    // Below -104, e^x < 2^-150 rounds to 0; above 88.8 it overflows.
    Value x = clamp(op.getOperand(), arith::CmpFPredicate::OLT, -104.0);
    x = clamp(x, arith::CmpFPredicate::OGT, 88.8);
    // n = round(x / ln 2) in [-150, 128]; r = x - n ln 2 in two parts.
    Value n = math::FloorOp::create(b, fma(x, c(1.44269504088896341), c(0.5)));
    Value r = fma(n, c(-0.693359375), x);
    r = fma(n, c(2.12194440e-4), r);
    Value z = c(1.9875691500E-4);
    for (double coefficient : {1.3981999507E-3, 8.3334519073E-3,
                               4.1665795894E-2, 1.6666665459E-1,
                               5.0000001201E-1})
      z = fma(z, r, c(coefficient));
    z = fma(z, arith::MulFOp::create(b, r, r), r);
    z = arith::AddFOp::create(b, z, c(1.0));
    // 2^n as 2^(n >> 1) * 2^(n - (n >> 1)), each a normal number.
    Type i32 = b.getI32Type();
    if (auto shaped = dyn_cast<ShapedType>(t))
      i32 = shaped.clone(i32);
    auto intConstant = [&](int64_t v) {
      return constant(b, i32, b.getI32IntegerAttr(v));
    };
    Value isNaN = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, n, n);
    Value k = arith::FPToSIOp::create(
        b, i32, arith::SelectOp::create(b, isNaN, c(0.0), n));
    if (scalef && !isa<TensorType>(t)) {
      rewriter.replaceOp(op, LLVM::LoadExpOp::create(b, t, z, k));
      return success();
    }
    Value k1 = arith::ShRSIOp::create(b, k, intConstant(1));
    Value k2 = arith::SubIOp::create(b, k, k1);
    auto pow2 = [&](Value e) -> Value {
      Value biased = arith::AddIOp::create(b, e, intConstant(127));
      return arith::BitcastOp::create(
          b, t, arith::ShLIOp::create(b, biased, intConstant(23)));
    };
    Value result = arith::MulFOp::create(
        b, arith::MulFOp::create(b, z, pow2(k1)), pow2(k2));
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// log, log2 and cbrt of f32 subnormals: MLIR's polynomials take the operand
/// as the smallest normal number (log) or misread its bits (cbrt). The
/// operand is scaled by 2^24 into the normal range and the result corrected:
/// log(x) = log(2^24 x) - 24 ln 2, log2(x) = log2(2^24 x) - 24,
/// cbrt(x) = cbrt(2^24 x) / 2^8.
void scaleSubnormalOperand(Operation *op) {
  ImplicitLocOpBuilder b(op->getLoc(), op);
  Value x = op->getOperand(0);
  Type t = x.getType();
  Value magnitude = isa<math::CbrtOp>(op) ? math::AbsFOp::create(b, x) : x;
  Value small = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, magnitude,
                                      floatConstant(b, t, 0x1p-126));
  Value scaled = arith::MulFOp::create(b, x, floatConstant(b, t, 0x1p24));
  IRMapping operand;
  operand.map(x, arith::SelectOp::create(b, small, scaled, x));
  Value y = b.clone(*op, operand)->getResult(0);
  Value corrected;
  if (isa<math::CbrtOp>(op))
    corrected = arith::MulFOp::create(b, y, floatConstant(b, t, 0x1p-8));
  else
    corrected = arith::SubFOp::create(
        b, y,
        floatConstant(b, t, isa<math::LogOp>(op) ? 24 * 0.693147180559945309
                                                 : 24.0));
  op->getResult(0).replaceAllUsesWith(
      arith::SelectOp::create(b, small, corrected, y));
  op->erase();
}

struct ApproximateMath
    : public tessel::cpu::impl::ApproximateMathBase<ApproximateMath> {
  using ApproximateMathBase::ApproximateMathBase;
  void runOnOperation() override {
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
    RewritePatternSet widen(&getContext());
    populateMathF32ExpansionPatterns(widen, approximable);
    if (failed(applyPatternsGreedily(getOperation(), std::move(widen))))
      return signalPassFailure();

    SmallVector<Operation *> subnormalOperands;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::LogOp, math::Log2Op, math::CbrtOp>(op) &&
          getElementTypeOrSelf(op->getResult(0)).isF32())
        subnormalOperands.push_back(op);
    });
    for (Operation *op : subnormalOperands)
      scaleSubnormalOperand(op);

    RewritePatternSet patterns(&getContext());
    // Not sin and cos: MLIR's polynomials reduce the argument in fp32, and
    // their error grows with it (3e-6 at |x| = 100, 3e-4 at 1e4, garbage
    // past 1e8), where Triton's GPUs are accurate to an ulp or two. They stay
    // calls to libm, which reduces exactly (and does not vectorize).
    populateMathPolynomialApproximationPatterns(patterns, [&](StringRef name) {
      return approximable(name) && name != math::SinOp::getOperationName() &&
             name != math::CosOp::getOperationName();
    });
    patterns.add<ErfToLibm>(&getContext());
    patterns.add<ExpKeepingSubnormals>(&getContext(), scalef);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
