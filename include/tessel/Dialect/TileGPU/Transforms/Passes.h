//===- Passes.h - tilegpu passes --------------------------------*- C++ -*-===//
#ifndef TESSEL_DIALECT_TILEGPU_TRANSFORMS_PASSES_H
#define TESSEL_DIALECT_TILEGPU_TRANSFORMS_PASSES_H

#include "tessel/Dialect/TileGPU/IR/Dialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace tessel::tilegpu {

#define GEN_PASS_DECL
#include "tessel/Dialect/TileGPU/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/Dialect/TileGPU/Transforms/Passes.h.inc"

} // namespace tessel::tilegpu

#endif // TESSEL_DIALECT_TILEGPU_TRANSFORMS_PASSES_H
