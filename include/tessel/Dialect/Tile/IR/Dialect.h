//===- Dialect.h - The tile dialect -----------------------------*- C++ -*-===//
//
// Block-level, target-independent IR of Tessel kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TILE_IR_DIALECT_H
#define TESSEL_DIALECT_TILE_IR_DIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessel/Dialect/Tile/IR/TileDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tessel/Dialect/Tile/IR/TileTypes.h.inc"

#define GET_OP_CLASSES
#include "tessel/Dialect/Tile/IR/TileOps.h.inc"

namespace tessel::tile {

/// The shape of a ranked tensor, or an empty shape for a scalar.
llvm::ArrayRef<int64_t> getShapeOrEmpty(mlir::Type type);

/// `elementType` with the shape of `like` (a scalar when `like` is a scalar).
mlir::Type getTypeWithShapeOf(mlir::Type elementType, mlir::Type like);

} // namespace tessel::tile

#endif // TESSEL_DIALECT_TILE_IR_DIALECT_H
