//===- Dialect.cpp - The tile dialect -------------------------------------===//
#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tessel::tile;

#include "tessel/Dialect/Tile/IR/TileDialect.cpp.inc"
#include "tessel/Dialect/Tile/IR/TileEnums.cpp.inc"

namespace {
/// Calls of @jit(noinline=True) functions may be inlined anywhere, and any
/// tile op (and region: reductions' and scans' combine bodies) into them.
struct TileInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Operation *, bool) const final {
    return true;
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void TileDialect::initialize() {
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "tessel/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
  addInterfaces<TileInlinerInterface>();
}

Operation *TileDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

LogicalResult TileDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (name != kDivisibilityAttr && name != kContiguityAttr &&
      name != kConstancyAttr)
    return success();
  // A hint on the op that defines the hinted value: one positive entry per
  // dimension of its (single) result.
  auto values = dyn_cast<DenseI32ArrayAttr>(attr.getValue());
  if (!values)
    return op->emitOpError("'") << name << "' must be an array of i32";
  if (op->getNumResults() != 1)
    return op->emitOpError("'") << name << "' needs an op with one result";
  size_t rank = std::max<size_t>(
      1, getShapeOrEmpty(op->getResult(0).getType()).size());
  if (values.size() != rank)
    return op->emitOpError("'") << name << "' has " << values.size()
                                << " entries, expected " << rank;
  for (int32_t v : values.asArrayRef())
    if (v < 1)
      return op->emitOpError("'") << name << "' entries must be positive, got "
                                  << v;
  return success();
}

namespace tessel::tile {

ArrayRef<int64_t> getShapeOrEmpty(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getShape();
  return {};
}

Type getTypeWithShapeOf(Type elementType, Type like) {
  if (auto tensor = dyn_cast<RankedTensorType>(like))
    return RankedTensorType::get(tensor.getShape(), elementType,
                                 tensor.getEncoding());
  return elementType;
}

} // namespace tessel::tile
