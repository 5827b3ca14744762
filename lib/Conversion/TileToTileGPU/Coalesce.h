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

/// How a thread holds a tensor whose loads and stores want another layout
/// than the default: `width` consecutive elements of dimension `dim` per
/// thread, lanes along `dim` first (gpu::defaultBlockedLayout).
struct CoalescedAccess {
  unsigned dim;
  int32_t width;
};

/// The layouts of the tensors of `root` whose loads and stores move more
/// than the default layout allows: addresses contiguous along a dimension
/// other than the last (lanes go along it, as Triton's coalescing orders
/// dimensions by contiguity), or elements narrower than 4 bytes along the
/// last (8 fp16 or 16 int8 values are one 16-byte access).
///
/// A layout is a property of every value that must agree with the others:
/// the operands and results of element-wise ops, addptr, loads and stores,
/// and the values a loop or an `if` carries. Such a group gets one layout.
/// Each memory op prefers the dimension its addresses are proved most
/// contiguous along (the last on ties) and up to 16 bytes along it; a group
/// whose memory ops agree on the dimension takes the narrowest width they
/// want, one whose ops disagree keeps the last dimension. A group touched
/// by anything else (while loops, unknown ops) keeps the default. Ops that
/// relate tensors of different layouts (expand_dims, broadcast, reduce,
/// dot, ...) separate groups: their lowering takes any layout, or the pass
/// converts between them.
llvm::DenseMap<mlir::Value, CoalescedAccess>
coalescedAccesses(mlir::Operation *root, const AxisInfoResult &axis,
                  int numThreads);

} // namespace tessel

#endif // TESSEL_LIB_CONVERSION_TILETOTILEGPU_COALESCE_H
