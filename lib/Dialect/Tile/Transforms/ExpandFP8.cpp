//===- ExpandFP8.cpp - 8-bit floats as fp32 arithmetic and integer bits ---===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace tessel::tile {
#define GEN_PASS_DEF_TILEEXPANDFP8
#include "tessel/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tessel::tile

using namespace mlir;
using namespace tessel::tile;

namespace {

/// An 8-bit float format: sign, `expBits` exponent bits with `bias`,
/// `mantBits` mantissa bits.
struct FP8Format {
  enum class Specials {
    IEEE,  ///< e5m2: infinities and NaNs at the largest exponent
    FN,    ///< e4m3: no infinities, S.1111.111 is NaN
    FNUZ,  ///< e4m3fnuz, e5m2fnuz: 0x80 (negative zero's code) is the NaN
    None,  ///< e4m3 with bias 15: every code is a finite number
  };
  int expBits, mantBits, bias;
  Specials specials;
  int64_t maxFinite; ///< the code of the largest finite magnitude
  int minExponent() const { return 1 - bias; }
  /// The code NaN rounds to: the format's NaN, or (without one) the largest
  /// finite value, as every other unrepresentable magnitude.
  int64_t nanCode() const {
    return specials == Specials::FNUZ ? 0x80
           : specials == Specials::None ? maxFinite
                                        : 0x7F;
  }
};

std::optional<FP8Format> formatOf(Type t) {
  using S = FP8Format::Specials;
  t = getElementTypeOrSelf(t);
  if (isa<Float8E4M3FNType>(t))
    return FP8Format{4, 3, 7, S::FN, 0x7E};      // 448
  if (isa<Float8E5M2Type>(t))
    return FP8Format{5, 2, 15, S::IEEE, 0x7B};   // 57344
  if (isa<Float8E4M3FNUZType>(t))
    return FP8Format{4, 3, 8, S::FNUZ, 0x7F};    // 240
  if (isa<Float8E5M2FNUZType>(t))
    return FP8Format{5, 2, 16, S::FNUZ, 0x7F};   // 57344
  if (isa<Float8E4M3B11FNUZType>(t))             // tl.float8e4b15's carrier
    return FP8Format{4, 3, 15, S::None, 0x7F};   // 1.875
  return std::nullopt;
}

/// `like`'s shape (a tensor or a scalar) with element type `elt`.
Type withElement(Type like, Type elt) {
  if (auto shaped = dyn_cast<ShapedType>(like))
    return shaped.clone(elt);
  return elt;
}

class Expander {
public:
  Expander(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// The fp32 value of 8-bit float `x` (scalar or tensor).
  Value decode(Value x) {
    FP8Format f = *formatOf(x.getType());
    Type i8 = b.getI8Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
    Type like = x.getType();
    Value bits = arith::BitcastOp::create(b, loc, withElement(like, i8), x);
    Value c = arith::ExtUIOp::create(b, loc, withElement(like, i32), bits);
    auto k = [&](int64_t v) { return intConst(like, i32, v); };
    Value sign = shl(andi(c, k(0x80)), k(24));
    Value e = andi(shrui(c, k(f.mantBits)), k((1 << f.expBits) - 1));
    Value m = andi(c, k((1 << f.mantBits) - 1));
    // |x| = significand * 2^(max(e, 1) - bias - mantBits), exactly in fp32.
    Value eIsZero = cmpi(arith::CmpIPredicate::eq, e, k(0));
    Value significand = select(eIsZero, m, ori(m, k(1 << f.mantBits)));
    Value scaleExp = arith::MaxSIOp::create(b, loc, e, k(1));
    Value scale = arith::BitcastOp::create(
        b, loc, withElement(like, f32),
        shl(arith::AddIOp::create(b, loc, scaleExp,
                                  k(127 - f.bias - f.mantBits)),
            k(23)));
    Value magnitude = arith::MulFOp::create(
        b, loc,
        arith::SIToFPOp::create(b, loc, withElement(like, f32), significand),
        scale);
    Value magBits =
        arith::BitcastOp::create(b, loc, withElement(like, i32), magnitude);
    Value quietNaN = k(0x7FC00000);
    switch (f.specials) {
    case FP8Format::Specials::IEEE: {
      // The largest exponent: infinity (mantissa 0) or a quiet NaN.
      Value special =
          cmpi(arith::CmpIPredicate::eq, e, k((1 << f.expBits) - 1));
      Value mNonZero = cmpi(arith::CmpIPredicate::ne, m, k(0));
      Value infOrNaN = select(mNonZero, quietNaN, k(0x7F800000));
      magBits = select(special, infOrNaN, magBits);
      break;
    }
    case FP8Format::Specials::FN: {
      Value isNaN = cmpi(arith::CmpIPredicate::eq, andi(c, k(0x7F)), k(0x7F));
      magBits = select(isNaN, quietNaN, magBits);
      break;
    }
    case FP8Format::Specials::FNUZ: {
      // 0x80 is NaN; with the sign ored below it stays one.
      magBits = select(cmpi(arith::CmpIPredicate::eq, c, k(0x80)), quietNaN,
                       magBits);
      break;
    }
    case FP8Format::Specials::None:
      break;
    }
    return arith::BitcastOp::create(b, loc, withElement(like, f32),
                                    ori(magBits, sign));
  }

  /// `x` (fp32 or fp64, scalar or tensor) rounded to the nearest even value
  /// of 8-bit float type `to`'s format, saturating to its largest finite
  /// value; NaN becomes 0x7F.
  Value encode(Value x, Type to) {
    FP8Format f = *formatOf(to);
    Type like = x.getType();
    auto ft = cast<FloatType>(getElementTypeOrSelf(like));
    int width = ft.getWidth();
    int srcMant = ft.getFPMantissaWidth() - 1; // stored bits: 23 or 52
    int srcBias = width == 32 ? 127 : 1023;
    Type it = b.getIntegerType(width);
    auto k = [&](int64_t v) { return intConst(like, it, v); };
    auto kf = [&](double v) { return floatConst(like, ft, v); };
    Value bits = arith::BitcastOp::create(b, loc, withElement(like, it), x);
    Value sign = shrui(bits, k(width - 1));
    Value absBits = andi(bits, k(int64_t((~uint64_t(0)) >> (65 - width))));
    Value a = arith::BitcastOp::create(b, loc, like, absBits);
    Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, a, a);
    // At or above twice the largest finite value's binade: saturate (inf
    // included). Below it every step here stays finite and exact.
    int maxExp = (f.maxFinite >> f.mantBits) - f.bias;
    Value big = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, a,
                                      kf(std::ldexp(1.0, maxExp + 1)));
    Value zero = kf(0.0);
    a = select(arith::OrIOp::create(b, loc, isNaN, big), zero, a);
    absBits = arith::BitcastOp::create(b, loc, withElement(like, it), a);
    // The quantum of a's binade in the 8-bit format (subnormals share the
    // smallest normal binade's): 2^qExp with qExp = max(e, eMin) - mantBits.
    Value e = arith::SubIOp::create(b, loc, shrui(absBits, k(srcMant)),
                                    k(srcBias));
    Value eClamped = arith::MaxSIOp::create(b, loc, e, k(f.minExponent()));
    Value qExp = arith::SubIOp::create(b, loc, eClamped, k(f.mantBits));
    Value invQuantum = arith::BitcastOp::create(
        b, loc, like,
        shl(arith::SubIOp::create(b, loc, k(srcBias), qExp), k(srcMant)));
    // a / quantum < 2^(mantBits+1) rounds to an integer, ties to even, by
    // adding and subtracting 2^srcMant (both exact but for that rounding).
    Value y = arith::MulFOp::create(b, loc, a, invQuantum);
    Value magic = kf(std::ldexp(1.0, srcMant));
    Value r = arith::SubFOp::create(b, loc,
                                    arith::AddFOp::create(b, loc, y, magic),
                                    magic);
    // Code: the binade's exponent field times 2^mantBits plus r, where r in
    // [2^mantBits, 2^(mantBits+1)] supplies the implicit bit (and a carry
    // into the next binade); subnormals have field 0 and r < 2^mantBits.
    Value rInt = arith::FPToSIOp::create(b, loc, withElement(like, it), r);
    Value field = arith::SubIOp::create(b, loc, eClamped, k(f.minExponent()));
    Value code = arith::AddIOp::create(b, loc, shl(field, k(f.mantBits)), rInt);
    Value over = cmpi(arith::CmpIPredicate::sgt, code, k(f.maxFinite));
    code = select(arith::OrIOp::create(b, loc, big, over), k(f.maxFinite),
                  code);
    Value withSign = ori(code, shl(sign, k(7)));
    // fnuz formats have no negative zero: its code is their NaN.
    if (f.specials == FP8Format::Specials::FNUZ)
      withSign = select(cmpi(arith::CmpIPredicate::eq, code, k(0)), code,
                       withSign);
    code = select(isNaN, k(f.nanCode()), withSign);
    Value narrow = arith::TruncIOp::create(
        b, loc, withElement(like, b.getI8Type()), code);
    return arith::BitcastOp::create(
        b, loc, withElement(like, getElementTypeOrSelf(to)), narrow);
  }

  /// Constants of `like`'s shape (a splat for a tensor).
  Value intConst(Type like, Type elt, int64_t v) {
    return constantOf(like, b.getIntegerAttr(elt, v));
  }
  Value floatConst(Type like, Type elt, double v) {
    return constantOf(like, b.getFloatAttr(elt, v));
  }
  Value constantOf(Type like, TypedAttr scalar) {
    if (auto shaped = dyn_cast<ShapedType>(like))
      return arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(shaped.clone(scalar.getType()), scalar));
    return arith::ConstantOp::create(b, loc, scalar);
  }

private:
  Value andi(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value shl(Value x, Value y) { return arith::ShLIOp::create(b, loc, x, y); }
  Value shrui(Value x, Value y) { return arith::ShRUIOp::create(b, loc, x, y); }
  Value cmpi(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }

  OpBuilder &b;
  Location loc;
};

/// Float `x` as fp32 (exactly) where it is narrower; fp32 and fp64 as they
/// are. `native`: OCP 8-bit floats through the target's widening to fp16.
Value widen(OpBuilder &b, Location loc, Value x, bool native) {
  Type like = x.getType();
  Type f32 = withElement(like, b.getF32Type());
  if (isOCPFP8Type(like) && native)
    return arith::ExtFOp::create(
        b, loc, f32,
        arith::ExtFOp::create(b, loc, withElement(like, b.getF16Type()), x)
            .getResult());
  if (isFP8Type(like))
    return Expander(b, loc).decode(x);
  if (getElementTypeOrSelf(like).getIntOrFloatBitWidth() < 32)
    return arith::ExtFOp::create(b, loc, f32, x);
  return x;
}

/// fp32/fp64 `x` converted to float type `to` (of x's shape). `native`: to
/// OCP 8-bit floats from fp32 by the target's rounding.
Value fromWide(OpBuilder &b, Location loc, Value x, Type to, bool native) {
  Type elt = getElementTypeOrSelf(to);
  if (isOCPFP8Type(elt) && native && getElementTypeOrSelf(x.getType()).isF32())
    return arith::TruncFOp::create(b, loc, to, x);
  if (isFP8Type(elt))
    return Expander(b, loc).encode(x, to);
  unsigned from = getElementTypeOrSelf(x.getType()).getIntOrFloatBitWidth();
  if (elt.getIntOrFloatBitWidth() == from)
    return x;
  if (elt.getIntOrFloatBitWidth() > from)
    return arith::ExtFOp::create(b, loc, to, x);
  return arith::TruncFOp::create(b, loc, to, x);
}

/// Whether an AMD chip's matrix cores multiply `dot` as it is: both
/// operands of the chip's 8-bit family `mfma` ("fnuz" or "ocp"), fp32
/// accumulation, and whole 32x32x16 or 16x16x32 instructions.
bool mfmaKeeps(DotOp dot, StringRef mfma) {
  auto ofFamily = [&](Type t) {
    return mfma == "fnuz" ? isFnuzFP8Type(t) : mfma == "ocp" && isOCPFP8Type(t);
  };
  if (!ofFamily(dot.getA().getType()) || !ofFamily(dot.getB().getType()) ||
      !getElementTypeOrSelf(dot.getC().getType()).isF32())
    return false;
  auto a = cast<ShapedType>(dot.getA().getType());
  auto d = cast<ShapedType>(dot.getD().getType());
  if (a.getRank() != 2)
    return false;
  int64_t m = d.getDimSize(0), n = d.getDimSize(1), k = a.getDimSize(1);
  return (m % 32 == 0 && n % 32 == 0 && k % 16 == 0) ||
         (m % 16 == 0 && n % 16 == 0 && k % 32 == 0);
}

/// Rewrites `op` if it touches 8-bit floats.
void expand(Operation *op, bool native, StringRef mfma) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    if (!isFP8Type(c.getType()))
      return;
    Expander ex(b, loc);
    Attribute value = c.getValue();
    std::optional<APFloat> v;
    if (auto f = dyn_cast<FloatAttr>(value))
      v = f.getValue();
    else if (auto dense = dyn_cast<DenseElementsAttr>(value); dense && dense.isSplat())
      v = dense.getSplatValue<APFloat>();
    else
      return; // the builder makes only scalar and splat constants
    Value replacement;
    if (isa<Float8E4M3B11FNUZType>(getElementTypeOrSelf(c.getType()))) {
      // APFloat's semantics of the carrier (bias 11) are not tl.float8e4b15's
      // (bias 15): its value, rounded into the language's format.
      replacement = ex.encode(
          ex.floatConst(c.getType(), b.getF64Type(), v->convertToDouble()),
          c.getType());
    } else {
      Value i = ex.constantOf(
          c.getType(), b.getIntegerAttr(b.getI8Type(), v->bitcastToAPInt()));
      replacement = arith::BitcastOp::create(b, loc, c.getType(), i);
    }
    c.replaceAllUsesWith(replacement);
    c.erase();
    return;
  }
  if (auto dot = dyn_cast<DotOp>(op)) {
    if (!isFP8Type(dot.getA().getType()) && !isFP8Type(dot.getB().getType()))
      return;
    if (mfmaKeeps(dot, mfma))
      return;
    // The target's 8-bit MMAs (m16n8k32, m64nNk32) take K in steps of 32.
    auto aType = cast<ShapedType>(dot.getA().getType());
    if (native && isOCPFP8Type(dot.getA().getType()) &&
        isOCPFP8Type(dot.getB().getType()) &&
        getElementTypeOrSelf(dot.getC().getType()).isF32() &&
        aType.getShape().back() % 32 == 0)
      return;
    for (OpOperand *operand : {&dot.getAMutable(), &dot.getBMutable()}) {
      Value x = operand->get();
      Type f16 = withElement(x.getType(), b.getF16Type());
      if (native && isOCPFP8Type(x.getType()))
        operand->set(arith::ExtFOp::create(b, loc, f16, x).getResult());
      else
        operand->set(fromWide(b, loc, widen(b, loc, x, false), f16, false));
    }
    return;
  }
  if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
      isa<arith::BitcastOp, arith::SelectOp>(op))
    return;
  bool touches = llvm::any_of(op->getOperandTypes(), isFP8Type) ||
                 llvm::any_of(op->getResultTypes(), isFP8Type);
  if (!touches)
    return;
  if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
    Type from = getElementTypeOrSelf(op->getOperand(0).getType());
    Type to = getElementTypeOrSelf(op->getResult(0).getType());
    if (native && ((isOCPFP8Type(from) && to.isF16()) ||
                   (from.isF32() && isOCPFP8Type(to))))
      return; // the target's own
    // fp64 rounds to 8 bits from fp64 itself: via fp32 would round twice.
    Value result = fromWide(b, loc, widen(b, loc, op->getOperand(0), native),
                            op->getResult(0).getType(), native);
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
    return;
  }
  // Any other op: on the fp32 values, its 8-bit results rounded back.
  OperationState state(loc, op->getName());
  for (Value v : op->getOperands())
    state.addOperands(isFP8Type(v.getType()) ? widen(b, loc, v, native) : v);
  for (Type t : op->getResultTypes())
    state.addTypes(isFP8Type(t) ? withElement(t, b.getF32Type()) : t);
  state.addAttributes(op->getAttrs());
  Operation *wide = b.create(state);
  for (auto [old, now] : llvm::zip(op->getResults(), wide->getResults()))
    old.replaceAllUsesWith(isFP8Type(old.getType())
                               ? fromWide(b, loc, now, old.getType(), native)
                               : now);
  op->erase();
}

struct TileExpandFP8 : tessel::tile::impl::TileExpandFP8Base<TileExpandFP8> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) { ops.push_back(op); });
    for (Operation *op : ops)
      expand(op, native, mfma);
  }
};

} // namespace
