//===- Dialect.cpp - The tile dialect -------------------------------------===//
#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tessel::tile;

#include "tessel/Dialect/Tile/IR/TileDialect.cpp.inc"

void TileDialect::initialize() {
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "tessel/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
}

Operation *TileDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

namespace tessel::tile {

ArrayRef<int64_t> getShapeOrEmpty(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getShape();
  return {};
}

Type getTypeWithShapeOf(Type elementType, Type like) {
  if (auto tensor = dyn_cast<RankedTensorType>(like))
    return RankedTensorType::get(tensor.getShape(), elementType);
  return elementType;
}

} // namespace tessel::tile
