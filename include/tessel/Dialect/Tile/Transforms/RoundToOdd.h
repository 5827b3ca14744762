//===- RoundToOdd.h - Rounding once through a wider type --------*- C++ -*-===//
//
// A value rounded toward zero with its last bit set when inexact ("rounded to
// odd") keeps what a later rounding to a type two or more bits narrower
// needs: rounding to odd, then to nearest even, rounds once. The passes that
// must not round twice (integers or fp64 to bf16, fma on fp16/bf16) build on
// these. Every helper works on scalars and on shaped values alike.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TILE_TRANSFORMS_ROUNDTOODD_H
#define TESSEL_DIALECT_TILE_TRANSFORMS_ROUNDTOODD_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace tessel::tile {

/// `element` in the shape of `like` (scalars stay scalars).
mlir::Type withElement(mlir::Type like, mlir::Type element);

/// An integer or float constant of `type` (a splat when it is shaped).
mlir::Value intConstant(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Type type, int64_t v);
mlir::Value floatConstant(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Type type, double v);

/// fp64 `x` to fp32, rounded to odd (NaNs and infinities as they are).
mlir::Value truncateF64ToOddF32(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value x);

/// The fp64 sum x + y rounded to odd: the nearest sum and its exact error
/// (two-sum, exact where nothing overflows), one step toward zero where the
/// error points there, the last bit set where it is not zero.
mlir::Value oddSum(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                   mlir::Value y);

/// An integer (signed or not) as fp64 rounded to odd: exact up to 32 bits;
/// 64 bits as the odd sum of its high and low halves.
mlir::Value integerToOddF64(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value x, bool isSigned);

} // namespace tessel::tile

#endif // TESSEL_DIALECT_TILE_TRANSFORMS_ROUNDTOODD_H
