//===- TensorMapArguments.h - A kernel's tensor-map parameters --*- C++ -*-===//
//
// The copy engine reads a host-made descriptor's blocks through a tensor map:
// a 128-byte kernel parameter passed by value, appended after the runtime
// arguments. Each says what it describes in its `tilegpu.tensor_map`
// attribute, for the launcher, which encodes it from the descriptor's runtime
// arguments (see tilegpu-tensor-maps in Passes.td).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TILEGPU_TRANSFORMS_TENSORMAPARGUMENTS_H
#define TESSEL_DIALECT_TILEGPU_TRANSFORMS_TENSORMAPARGUMENTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tessel::tilegpu {

/// The attribute of a tensor-map parameter: {arg, box, element, nan,
/// swizzle} (TensorMapKey).
constexpr llvm::StringLiteral kTensorMapAttr = "tilegpu.tensor_map";

/// What a tensor map describes: the descriptor whose first kernel argument
/// (its base) is `arg`, read or written in boxes of `box` (outermost first)
/// of `element`s, landing in shared memory with `swizzle` (0, 32, 64 or 128
/// bytes), out-of-bounds elements read as NaN with `nan`.
struct TensorMapKey {
  int32_t arg;
  mlir::Type element;
  llvm::SmallVector<int64_t> box;
  int32_t swizzle = 0;
  bool nan = false;
};

/// The parameter of `func` holding the map `key` describes: the one already
/// appended for the same descriptor, box and swizzle (its fill NaN if
/// either asks), or a new one appended to the parameters. Null if the
/// parameter cannot be added.
mlir::BlockArgument tensorMapArgument(mlir::func::FuncOp func,
                                      const TensorMapKey &key);

/// The `tilegpu.tensor_map` attribute of parameter `index`, if it is a
/// tensor map.
mlir::DictionaryAttr tensorMapOf(mlir::func::FuncOp func, unsigned index);

} // namespace tessel::tilegpu

#endif // TESSEL_DIALECT_TILEGPU_TRANSFORMS_TENSORMAPARGUMENTS_H
