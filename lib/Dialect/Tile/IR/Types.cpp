//===- Types.cpp - Types of the tile dialect ------------------------------===//
#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tessel::tile;

#define GET_TYPEDEF_CLASSES
#include "tessel/Dialect/Tile/IR/TileTypes.cpp.inc"

LogicalResult PointerType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  Type pointeeType, int addressSpace) {
  if (!isa<IntegerType, FloatType>(pointeeType))
    return emitError() << "pointers point to integer or float elements, not "
                       << pointeeType;
  if (addressSpace < 0)
    return emitError() << "address space must be non-negative";
  return success();
}

void TileDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tessel/Dialect/Tile/IR/TileTypes.cpp.inc"
      >();
}
