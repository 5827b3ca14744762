//===- Passes.h - Transformations of the tile dialect ----------*- C++ -*-===//
#ifndef TESSEL_DIALECT_TILE_TRANSFORMS_PASSES_H
#define TESSEL_DIALECT_TILE_TRANSFORMS_PASSES_H

#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Pass/Pass.h"

namespace tessel::tile {

#define GEN_PASS_DECL
#include "tessel/Dialect/Tile/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/Dialect/Tile/Transforms/Passes.h.inc"

} // namespace tessel::tile

#endif // TESSEL_DIALECT_TILE_TRANSFORMS_PASSES_H
