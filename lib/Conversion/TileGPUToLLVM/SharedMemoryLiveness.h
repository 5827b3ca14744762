//===- SharedMemoryLiveness.h - When shared bytes are in use ----*- C++ -*-===//
//
// The live ranges of a function's claims on shared memory (pipeline
// buffers, the scratch of the ops that stage through shared memory) in
// program order, and their placement in the program's shared array so that
// claims live at the same time never share a byte.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_SHAREDMEMORYLIVENESS_H
#define TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_SHAREDMEMORYLIVENESS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

namespace tessel::gpu::lowering {

/// Positions of a function's ops in program order (a pre-order walk): an op
/// with regions comes before everything in them, and `end` is the last
/// position of its subtree.
struct LiveRange {
  int64_t start = 0, end = 0; // inclusive
  bool intersects(const LiveRange &o) const {
    return start <= o.end && o.start <= end;
  }
};

/// The ranges of one function (`func`): a scratch user is live over its own
/// op; a buffer from its first to its last access, through its aliases
/// (values it flows into through region ops and terminators) and the dots
/// that read its local_loads in place. An access inside a loop the buffer
/// is defined outside of keeps it live over that whole loop; a buffer that
/// async copies write stays live until an `async_wait {pending = 0}` after
/// its last access (copies masked off still land), or to the function's
/// end.
class SharedMemoryLiveness {
public:
  explicit SharedMemoryLiveness(mlir::Operation *func);

  /// The range of the scratch `op` stages through.
  LiveRange scratchRange(mlir::Operation *op) const { return rangeOf(op); }
  /// The range of the buffer `alloc` (a tilegpu.local_alloc) returns; its
  /// first op, before which its bytes are first touched, in `first`.
  LiveRange bufferRange(mlir::Operation *alloc, mlir::Operation *&first) const;
  /// The outermost loop around `op` that does not contain `def`, else `op`.
  mlir::Operation *liveUnit(mlir::Operation *op, mlir::Operation *def) const;
  /// Whether ops within `earlier` may run before `op`: they come first in
  /// program order, or a loop around `op` holds them (its previous
  /// iteration's).
  bool runsBefore(const LiveRange &earlier, mlir::Operation *op) const;

private:
  LiveRange rangeOf(mlir::Operation *op) const {
    return {position.lookup(op), subtreeEnd.lookup(op)};
  }
  mlir::Operation *func;
  llvm::DenseMap<mlir::Operation *, int64_t> position, subtreeEnd;
};

/// A claim on shared memory: `bytes` from a multiple of `alignment`, live
/// over `range`; `offset` is set by placeSharedClaims, except for `pinned`
/// claims, which start at 0.
struct SharedClaim {
  mlir::Operation *op;
  int64_t bytes;
  int64_t alignment;
  LiveRange range;
  bool pinned = false;
  int64_t offset = 0;
};

/// Gives each claim that is not pinned the lowest offset (largest claims
/// first) where its bytes meet no claim whose range intersects its own.
/// Pinned claims must not be live at the same time. Returns the bytes used.
int64_t placeSharedClaims(llvm::MutableArrayRef<SharedClaim> claims);

} // namespace tessel::gpu::lowering

#endif // TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_SHAREDMEMORYLIVENESS_H
