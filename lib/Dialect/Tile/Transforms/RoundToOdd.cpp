//===- RoundToOdd.cpp - Rounding once through a wider type ----------------===//
#include "tessel/Dialect/Tile/Transforms/RoundToOdd.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace tessel::tile {
namespace {

Value constant(OpBuilder &b, Location loc, Type type, TypedAttr scalar) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(shaped, scalar));
  return arith::ConstantOp::create(b, loc, scalar);
}

/// The integer type of `x`'s width, in its shape.
Type bitsType(OpBuilder &b, Value x) {
  unsigned width = getElementTypeOrSelf(x).getIntOrFloatBitWidth();
  return withElement(x.getType(), b.getIntegerType(width));
}

/// `nearest`, the value nearest an exact one, rounded to odd instead: one
/// step toward zero where `away` (nearest is farther from zero than the exact
/// value), then the last bit set where `inexact`.
Value roundedToOdd(OpBuilder &b, Location loc, Value nearest, Value away,
                   Value inexact) {
  Type bitsTy = bitsType(b, nearest);
  Value bits = arith::BitcastOp::create(b, loc, bitsTy, nearest);
  Value one = intConstant(b, loc, bitsTy, 1);
  Value towardZero = arith::SelectOp::create(
      b, loc, away, arith::SubIOp::create(b, loc, bits, one), bits);
  Value odd = arith::OrIOp::create(b, loc, towardZero, one);
  return arith::BitcastOp::create(
      b, loc, nearest.getType(),
      arith::SelectOp::create(b, loc, inexact, odd, bits));
}

} // namespace

Type withElement(Type like, Type element) {
  if (auto shaped = dyn_cast<ShapedType>(like))
    return shaped.clone(element);
  return element;
}

Value intConstant(OpBuilder &b, Location loc, Type type, int64_t v) {
  return constant(b, loc, type,
                  b.getIntegerAttr(getElementTypeOrSelf(type), v));
}

Value floatConstant(OpBuilder &b, Location loc, Type type, double v) {
  return constant(b, loc, type, b.getFloatAttr(getElementTypeOrSelf(type), v));
}

Value truncateF64ToOddF32(OpBuilder &b, Location loc, Value x) {
  Type f32 = withElement(x.getType(), b.getF32Type());
  Value nearest = arith::TruncFOp::create(b, loc, f32, x);
  Value back = arith::ExtFOp::create(b, loc, x.getType(), nearest);
  Value inexact =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, back, x);
  Value away = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OGT, math::AbsFOp::create(b, loc, back),
      math::AbsFOp::create(b, loc, x));
  return roundedToOdd(b, loc, nearest, away, inexact);
}

Value oddSum(OpBuilder &b, Location loc, Value x, Value y) {
  Value s = arith::AddFOp::create(b, loc, x, y);
  Value yPart = arith::SubFOp::create(b, loc, s, x);
  Value xPart = arith::SubFOp::create(b, loc, s, yPart);
  Value err = arith::AddFOp::create(
      b, loc, arith::SubFOp::create(b, loc, x, xPart),
      arith::SubFOp::create(b, loc, y, yPart));
  Value zero = floatConstant(b, loc, s.getType(), 0.0);
  // An infinite or NaN sum has a NaN error: not inexact.
  Value inexact =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, err, zero);
  Type bitsTy = bitsType(b, s);
  Value signs = arith::XOrIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, bitsTy, s),
      arith::BitcastOp::create(b, loc, bitsTy, err));
  Value away = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, signs,
                                     intConstant(b, loc, bitsTy, 0));
  return roundedToOdd(b, loc, s, away, inexact);
}

Value integerToOddF64(OpBuilder &b, Location loc, Value x, bool isSigned) {
  Type f64 = withElement(x.getType(), b.getF64Type());
  Type i64 = withElement(x.getType(), b.getI64Type());
  unsigned width = getElementTypeOrSelf(x).getIntOrFloatBitWidth();
  if (width <= 32) {
    // Widened first, so that a signed conversion is exact for unsigned values
    // too (and no uitofp, which LLVM 22 narrows wrongly on x86).
    x = isSigned ? Value(arith::ExtSIOp::create(b, loc, i64, x))
                 : Value(arith::ExtUIOp::create(b, loc, i64, x));
    return arith::SIToFPOp::create(b, loc, f64, x);
  }
  Value c32 = intConstant(b, loc, i64, 32);
  Value high = isSigned ? Value(arith::ShRSIOp::create(b, loc, x, c32))
                        : Value(arith::ShRUIOp::create(b, loc, x, c32));
  Value low =
      arith::AndIOp::create(b, loc, x, intConstant(b, loc, i64, 0xFFFFFFFFll));
  Value highF = arith::MulFOp::create(
      b, loc, arith::SIToFPOp::create(b, loc, f64, high),
      floatConstant(b, loc, f64, 4294967296.0));
  return oddSum(b, loc, highF, arith::SIToFPOp::create(b, loc, f64, low));
}

} // namespace tessel::tile
