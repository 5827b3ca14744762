//===- Dialect.h - The tilegpu dialect --------------------------*- C++ -*-===//
//
// Tile IR whose tensors carry GPU register layouts.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TILEGPU_IR_DIALECT_H
#define TESSEL_DIALECT_TILEGPU_IR_DIALECT_H

#include "tessel/Dialect/TileGPU/IR/LinearLayout.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessel/Dialect/TileGPU/IR/TileGPUDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/TileGPU/IR/TileGPUAttrs.h.inc"

#define GET_OP_CLASSES
#include "tessel/Dialect/TileGPU/IR/TileGPUOps.h.inc"

namespace tessel::tilegpu {

/// The layout of a tensor type (its LinearEncodingAttr), or nothing.
std::optional<gpu::LinearLayout> getLayout(mlir::Type type);
/// `type` (a ranked tensor) with `layout` as its encoding.
mlir::RankedTensorType withLayout(mlir::Type type,
                                  const gpu::LinearLayout &layout);

} // namespace tessel::tilegpu

#endif // TESSEL_DIALECT_TILEGPU_IR_DIALECT_H
