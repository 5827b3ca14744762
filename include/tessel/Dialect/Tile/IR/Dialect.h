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
#include "mlir/Interfaces/InferIntRangeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessel/Dialect/Tile/IR/TileDialect.h.inc"
#include "tessel/Dialect/Tile/IR/TileEnums.h.inc"

namespace tessel::tile {
/// The abstract resource tile.assume writes: it keeps assumptions from being
/// erased as dead code without ordering them against memory accesses.
struct AssumptionResource
    : public mlir::SideEffects::Resource::Base<AssumptionResource> {
  llvm::StringRef getName() final { return "tile.assumption"; }
};

/// The abstract resource tile.print and tile.assert write: it keeps them from
/// being erased and in program order among themselves, without ordering them
/// against memory accesses.
struct DebugOutputResource
    : public mlir::SideEffects::Resource::Base<DebugOutputResource> {
  llvm::StringRef getName() final { return "tile.debug_output"; }
};

/// Names of the hint attributes (`tl.multiple_of`, `tl.max_contiguous`,
/// `tl.max_constancy`) on the op defining the hinted value: one entry per
/// dimension (one for a scalar), see the dialect's description.
inline constexpr llvm::StringLiteral kDivisibilityAttr = "tile.divisibility";
inline constexpr llvm::StringLiteral kContiguityAttr = "tile.contiguity";
inline constexpr llvm::StringLiteral kConstancyAttr = "tile.constancy";
/// On an scf.for: `tl.range(num_stages=N)`, the pipeline stages of this loop
/// in place of the kernel's num_stages (i32).
inline constexpr llvm::StringLiteral kLoopStagesAttr = "tile.num_stages";
/// The pipeline stages of `loop`: its own (kLoopStagesAttr), else
/// `kernelStages`.
inline int loopStages(mlir::Operation *loop, int kernelStages) {
  if (auto own = loop->getAttrOfType<mlir::IntegerAttr>(kLoopStagesAttr))
    return int(own.getInt());
  return kernelStages;
}
} // namespace tessel::tile

#define GET_TYPEDEF_CLASSES
#include "tessel/Dialect/Tile/IR/TileTypes.h.inc"

#define GET_OP_CLASSES
#include "tessel/Dialect/Tile/IR/TileOps.h.inc"

namespace tessel::tile {

/// The shape of a ranked tensor, or an empty shape for a scalar.
llvm::ArrayRef<int64_t> getShapeOrEmpty(mlir::Type type);

/// `elementType` with the shape of `like` (a scalar when `like` is a scalar).
mlir::Type getTypeWithShapeOf(mlir::Type elementType, mlir::Type like);

/// Whether `type` (a scalar, or a tensor's elements) is one of the language's
/// 8-bit floats: e4m3 (tl.float8e4nv), e5m2 (tl.float8e5), their "fnuz"
/// forms e4m3fnuz (tl.float8e4b8) and e5m2fnuz (tl.float8e5b16), or Triton's
/// e4m3 with bias 15 (tl.float8e4b15, carried by f8E4M3B11FNUZ).
inline bool isFP8Type(mlir::Type type) {
  return mlir::isa<mlir::Float8E4M3FNType, mlir::Float8E5M2Type,
                   mlir::Float8E4M3FNUZType, mlir::Float8E5M2FNUZType,
                   mlir::Float8E4M3B11FNUZType>(
      mlir::getElementTypeOrSelf(type));
}

/// Whether `type` is an OCP 8-bit float (e4m3 or e5m2), the ones targets
/// convert and multiply natively (NVIDIA sm_89 and newer).
inline bool isOCPFP8Type(mlir::Type type) {
  return mlir::isa<mlir::Float8E4M3FNType, mlir::Float8E5M2Type>(
      mlir::getElementTypeOrSelf(type));
}

/// Whether `type` is an "fnuz" 8-bit float (e4m3fnuz, e5m2fnuz), the ones
/// AMD's CDNA3 multiplies natively.
inline bool isFnuzFP8Type(mlir::Type type) {
  return mlir::isa<mlir::Float8E4M3FNUZType, mlir::Float8E5M2FNUZType>(
      mlir::getElementTypeOrSelf(type));
}

/// Whether `type` is an 8-bit float with 5 exponent bits (e5m2, e5m2fnuz).
inline bool isE5M2Type(mlir::Type type) {
  return mlir::isa<mlir::Float8E5M2Type, mlir::Float8E5M2FNUZType>(
      mlir::getElementTypeOrSelf(type));
}

/// tile.print's lines, as every target prints them (Triton's GPU format):
/// the printf format of one element of operand `operand` (or, for an op
/// without operands, of its one line), whose arguments are the program ids
/// (3 x u32), the element's index (u32 per dimension) and the value as
/// printfArgument makes it. '%' in the prefix is doubled; ends with '\n'.
std::string printFormat(PrintOp op, unsigned operand);
/// The value `v` (a scalar of the printed operand's element type; pointers
/// as their address, i64) as C's variadic printf takes it: integers of up
/// to 32 bits as i32 (sign-extended where `isSigned`), 64-bit ones as i64,
/// floats as f64; with `hex`, floats as their bits (i32 or i64).
mlir::Value printfArgument(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value v, bool isSigned, bool hex);

} // namespace tessel::tile

#endif // TESSEL_DIALECT_TILE_IR_DIALECT_H
