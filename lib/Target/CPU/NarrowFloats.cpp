//===- NarrowFloats.cpp - bf16 arithmetic, narrow roundings ---------------===//
//
// What LLVM's x86 code gets wrong for bf16 and fp16 (see the pass's
// description in Passes.td): afterwards bf16 values are only moved, and every
// rounding to fp16/bf16 happens once, from fp32, with subnormals kept.
//
//===----------------------------------------------------------------------===//
#include "tessel/Target/CPU/Passes.h"

#include "tessel/Dialect/Tile/Transforms/RoundToOdd.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tessel::cpu {
#define GEN_PASS_DEF_NARROWFLOATS
#include "tessel/Target/CPU/Passes.h.inc"
} // namespace tessel::cpu

using namespace mlir;
using tessel::tile::intConstant;
using tessel::tile::oddSum;
using tessel::tile::truncateF64ToOddF32;
using tessel::tile::withElement;

namespace {

/// bf16 to fp32: the bits moved up (exact, subnormals and NaNs included).
Value extendBF16(OpBuilder &b, Location loc, Value x) {
  Type i16 = withElement(x.getType(), b.getI16Type());
  Type i32 = withElement(x.getType(), b.getI32Type());
  Value bits = arith::ExtUIOp::create(
      b, loc, i32, arith::BitcastOp::create(b, loc, i16, x));
  Value high =
      arith::ShLIOp::create(b, loc, bits, intConstant(b, loc, i32, 16));
  return arith::BitcastOp::create(
      b, loc, withElement(x.getType(), b.getF32Type()), high);
}

/// fp32 to bf16 rounded to nearest even, subnormals included, in integer
/// arithmetic (x86's VCVTNEPS2BF16 flushes subnormal inputs and results).
Value truncateF32ToBF16(OpBuilder &b, Location loc, Value x) {
  Type i32 = withElement(x.getType(), b.getI32Type());
  auto cst = [&](int64_t v) { return intConstant(b, loc, i32, v); };
  Value bits = arith::BitcastOp::create(b, loc, i32, x);
  // Add just under half a bf16 ulp, plus one when the kept part is odd, and
  // drop the low half: ties go to even, carries reach the exponent.
  Value kept = arith::ShRUIOp::create(b, loc, bits, cst(16));
  Value lsb = arith::AndIOp::create(b, loc, kept, cst(1));
  Value rounded = arith::AddIOp::create(
      b, loc, bits, arith::AddIOp::create(b, loc, lsb, cst(0x7FFF)));
  Value high = arith::ShRUIOp::create(b, loc, rounded, cst(16));
  // A NaN keeps its sign and becomes quiet (rounding could make it inf).
  Value quietNaN = arith::OrIOp::create(b, loc, kept, cst(0x40));
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  Value result = arith::SelectOp::create(b, loc, isNaN, quietNaN, high);
  return arith::BitcastOp::create(
      b, loc, withElement(x.getType(), b.getBF16Type()),
      arith::TruncIOp::create(
          b, loc, withElement(x.getType(), b.getI16Type()), result));
}

/// fp32 to `to` (fp16 or bf16), rounded to nearest even once.
Value truncateF32(OpBuilder &b, Location loc, Value x, Type to) {
  if (getElementTypeOrSelf(to).isBF16())
    return truncateF32ToBF16(b, loc, x);
  return arith::TruncFOp::create(b, loc, to, x);
}

/// Any float to fp64, exactly (bf16 through its bits).
Value extendToF64(OpBuilder &b, Location loc, Value x) {
  if (getElementTypeOrSelf(x).isBF16())
    x = extendBF16(b, loc, x);
  return arith::ExtFOp::create(
      b, loc, withElement(x.getType(), b.getF64Type()), x);
}

bool isNarrow(Type t) {
  Type e = getElementTypeOrSelf(t);
  return e.isF16() || e.isBF16();
}

/// fma on fp16/bf16: the product is exact in fp64, the sum rounded to odd
/// there, then to fp32 (odd again), then to nearest: one rounding in all.
/// (fp32's fma, then the narrow type, rounds twice.)
struct NarrowFma : OpRewritePattern<math::FmaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::FmaOp op,
                                PatternRewriter &rewriter) const override {
    if (!isNarrow(op.getType()))
      return failure();
    Location loc = op.getLoc();
    Value a = extendToF64(rewriter, loc, op.getA());
    Value b = extendToF64(rewriter, loc, op.getB());
    Value c = extendToF64(rewriter, loc, op.getC());
    Value product = arith::MulFOp::create(rewriter, loc, a, b);
    Value sum = oddSum(rewriter, loc, product, c);
    rewriter.replaceOp(
        op, truncateF32(rewriter, loc, truncateF64ToOddF32(rewriter, loc, sum),
                        op.getType()));
    return success();
  }
};

/// bf16 to fp32 (or fp64, through fp32) in integer arithmetic.
struct ExtendFromBF16 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getIn()).isBF16())
      return failure();
    Value x = extendBF16(rewriter, op.getLoc(), op.getIn());
    if (x.getType() != op.getType())
      x = arith::ExtFOp::create(rewriter, op.getLoc(), op.getType(), x);
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// Rounding to bf16 in integer arithmetic, and fp64 to fp16/bf16 through
/// fp32 rounded to odd (no __truncdfhf2 / __truncdfbf2, which the kernel
/// loader does not have).
struct TruncateToNarrow : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type from = getElementTypeOrSelf(op.getIn());
    Type to = getElementTypeOrSelf(op.getType());
    if (!isNarrow(to) || op.getRoundingmodeAttr() ||
        !(from.isF64() || (from.isF32() && to.isBF16())))
      return failure();
    Value x = op.getIn();
    if (from.isF64())
      x = truncateF64ToOddF32(rewriter, op.getLoc(), x);
    rewriter.replaceOp(op, truncateF32(rewriter, op.getLoc(), x, op.getType()));
    return success();
  }
};

/// `t` with bf16 (alone, or the element of a shaped or function type) as
/// i16.
Type bf16AsBits(Type t) {
  MLIRContext *ctx = t.getContext();
  Type i16 = IntegerType::get(ctx, 16);
  if (t.isBF16())
    return i16;
  if (auto shaped = dyn_cast<ShapedType>(t))
    return shaped.getElementType().isBF16() ? shaped.clone(i16) : t;
  if (auto fn = dyn_cast<FunctionType>(t)) {
    auto map = [](TypeRange types) {
      return llvm::map_to_vector(types, [](Type x) { return bf16AsBits(x); });
    };
    return FunctionType::get(ctx, map(fn.getInputs()), map(fn.getResults()));
  }
  return t;
}

/// What is left of bf16 once no op computes with it (constants, selects,
/// bitcasts, loads, stores, buffers, loop-carried values) becomes i16, its
/// bits. LLVM's x86 code keeps a bf16 value that crosses a branch (a masked
/// load's phi) in an fp32 register and rounds it back with VCVTNEPS2BF16,
/// which flushes subnormals (bits 0x0001 tested as zero), or, without
/// AVX512-BF16, with a call to __truncsfbf2.
void keepBF16AsBits(Operation *root) {
  SmallVector<arith::BitcastOp> identities;
  root->walk([&](Operation *op) {
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      Type i16 = IntegerType::get(op->getContext(), 16);
      if (auto f = dyn_cast<FloatAttr>(constant.getValue());
          f && f.getType().isBF16())
        constant.setValueAttr(
            IntegerAttr::get(i16, f.getValue().bitcastToAPInt()));
      else if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
               dense && dense.getElementType().isBF16())
        constant.setValueAttr(dense.bitcast(i16));
    }
    if (auto fn = dyn_cast<FunctionOpInterface>(op))
      fn.setType(bf16AsBits(fn.getFunctionType()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          arg.setType(bf16AsBits(arg.getType()));
    // An llvm.bitcast to bf16 makes the operand of an intrinsic that takes
    // bf16 (vdpbf16ps in the dot micro-kernels): it stays.
    if (!isa<LLVM::BitcastOp>(op))
      for (OpResult result : op->getResults())
        result.setType(bf16AsBits(result.getType()));
    if (auto cast = dyn_cast<arith::BitcastOp>(op);
        cast && cast.getIn().getType() == cast.getType())
      identities.push_back(cast);
  });
  for (arith::BitcastOp cast : identities) {
    cast.getResult().replaceAllUsesWith(cast.getIn());
    cast.erase();
  }
}

struct NarrowFloats
    : public tessel::cpu::impl::NarrowFloatsBase<NarrowFloats> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    Operation *root = getOperation();
    // 1. What would round twice through fp32 (integers to bf16 are exact
    // already: tile-exact-int-to-bf16).
    RewritePatternSet exact(ctx);
    exact.add<NarrowFma>(ctx);
    if (failed(applyPatternsGreedily(root, std::move(exact))))
      return signalPassFailure();

    // 2. Every other arith and math op on bf16 computes in fp32.
    Type f32 = Float32Type::get(ctx);
    Type bf16 = BFloat16Type::get(ctx);
    {
      TypeConverter converter;
      arith::populateEmulateUnsupportedFloatsConversions(converter, {bf16},
                                                         f32);
      ConversionTarget target(*ctx);
      arith::populateEmulateUnsupportedFloatsLegality(target, converter);
      RewritePatternSet patterns(ctx);
      arith::populateEmulateUnsupportedFloatsPatterns(patterns, converter);
      if (failed(applyPartialConversion(root, target, std::move(patterns))))
        return signalPassFailure();
    }
    {
      // Every float type but bf16 keeps its math ops.
      SetVector<Type> kept;
      kept.insert(Float16Type::get(ctx));
      kept.insert(f32);
      kept.insert(Float64Type::get(ctx));
      TypeConverter converter;
      math::populateExtendToSupportedTypesTypeConverter(converter, kept, f32);
      ConversionTarget target(*ctx);
      target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      math::populateExtendToSupportedTypesConversionTarget(target, converter);
      RewritePatternSet patterns(ctx);
      math::populateExtendToSupportedTypesPatterns(patterns, converter);
      if (failed(applyPartialConversion(root, target, std::move(patterns))))
        return signalPassFailure();
    }

    // 3. The conversions those left, in integer arithmetic.
    RewritePatternSet conversions(ctx);
    conversions.add<ExtendFromBF16, TruncateToNarrow>(ctx);
    if (failed(applyPatternsGreedily(root, std::move(conversions))))
      return signalPassFailure();

    // 4. No bf16 values for LLVM's code generators.
    keepBF16AsBits(root);
  }
};
} // namespace
