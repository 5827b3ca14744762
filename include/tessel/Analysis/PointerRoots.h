//===- PointerRoots.h - Which kernel argument a pointer comes from -*- C++ -*-===//
//
// Every address a kernel touches is computed from one of its pointer
// arguments. Knowing which one tells the launcher which arrays a kernel may
// write (read-only arrays are refused for those) and tells the CPU lowering
// which loads and stores may touch the same array.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_ANALYSIS_POINTERROOTS_H
#define TESSEL_ANALYSIS_POINTERROOTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace tessel {

/// The kernel argument every address of the pointer (or pointer block) `ptr`
/// is derived from, through pointer arithmetic, views and loop-carried
/// pointers advanced by pointer arithmetic; null when that cannot be seen
/// (e.g. a pointer chosen by a select between two arguments).
mlir::BlockArgument pointerRootArgument(mlir::Value ptr);

/// The indices of the pointer arguments of `kernel` that it may store to
/// (tile.store, tile.descriptor_store, tile.atomic_rmw, tile.atomic_cas),
/// itself or through a function it calls (func.call of a @jit(noinline=True)
/// function): every pointer argument if some store's root cannot be seen.
llvm::SmallVector<unsigned> writtenArguments(mlir::func::FuncOp kernel);

} // namespace tessel

#endif // TESSEL_ANALYSIS_POINTERROOTS_H
