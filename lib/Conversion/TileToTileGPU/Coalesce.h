//===- Coalesce.h - Per-thread vectors of loads and stores ------*- C++ -*-===//
//
// Part of convert-tile-to-tilegpu (private to it).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CONVERSION_TILETOTILEGPU_COALESCE_H
#define TESSEL_LIB_CONVERSION_TILETOTILEGPU_COALESCE_H

#include "tessel/Analysis/AxisInfo.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

namespace tessel {

/// How many consecutive elements of the last dimension each thread should
/// hold, for the tensors of `root` that deserve more than the default
/// layout's 4: those whose loads and stores move elements narrower than 4
/// bytes along a contiguous last dimension (8 fp16 or 16 int8 values are one
/// 16-byte access, as Triton's coalescing chooses).
///
/// A layout is a property of every value that must agree with the others:
/// the operands and results of element-wise ops, addptr, loads and stores,
/// and the values a loop or an `if` carries. Such a group gets one width:
/// the narrowest its memory ops want (16 bytes of the widest element, at
/// most the proved contiguity), and only when it exceeds the default. A
/// group touched by anything else (while loops, unknown ops) keeps the
/// default. Ops that relate tensors of different layouts (expand_dims,
/// broadcast, reduce, dot, ...) separate groups: their lowering takes any
/// layout, or the pass converts between them.
llvm::DenseMap<mlir::Value, int32_t>
coalescedVectors(mlir::Operation *root, const AxisInfoResult &axis,
                 int numWarps);

} // namespace tessel

#endif // TESSEL_LIB_CONVERSION_TILETOTILEGPU_COALESCE_H
