//===- AxisInfo.h - Divisibility, contiguity, constancy per dimension -*- C++ -*-===//
//
// For every integer or pointer value of a kernel (a scalar, or a block of
// them) the analysis proves, per dimension, three powers of 2:
//
//   contiguity c: along the dimension the elements come in groups of c,
//     starting at indices that are multiples of c, whose values rise by one
//     (one element for pointers) from each element to the next;
//   divisibility d: the first element of every such group is a multiple of d
//     (bytes for pointers); with c == 1 that is every element;
//   constancy k: along the dimension the elements come in groups of k,
//     starting at indices that are multiples of k, of equal values.
//
// A scalar is a block of one dimension of size 1. Facts come from constants,
// tile.make_range, the views (splat, broadcast, expand_dims, trans),
// arithmetic (add, sub, mul, div, rem, shifts), tile.addptr, selects, loop
// bounds, the `tile.divisibility` argument attribute of the kernel, the hint
// attributes (`tile.divisibility`, `tile.contiguity`, `tile.constancy`) and
// `tile.assume(x % 2^k == 0)`. GPU backends use them to vectorize and
// coalesce memory accesses; the CPU gives each element access the alignment
// proved for every element.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_ANALYSIS_AXISINFO_H
#define TESSEL_ANALYSIS_AXISINFO_H

#include "mlir/Analysis/DataFlow/SparseAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace tessel {

/// The largest divisibility the analysis states (that of zero).
inline constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

/// The per-dimension facts about one value (see the file comment).
class AxisInfo {
public:
  using Dims = llvm::SmallVector<int64_t, 4>;

  /// The uninitialized state (nothing known yet: the optimistic start).
  AxisInfo() = default;
  AxisInfo(Dims divisibility, Dims contiguity, Dims constancy,
           std::optional<int64_t> constant = std::nullopt);

  /// Nothing proved about a value of `shape` ([] for a scalar): every
  /// element a multiple of `divisibility` only.
  static AxisInfo unknown(llvm::ArrayRef<int64_t> shape,
                          int64_t divisibility = 1);

  bool isUninitialized() const { return divisibility.empty(); }
  unsigned getRank() const { return divisibility.size(); }
  int64_t getDivisibility(unsigned d) const { return divisibility[d]; }
  int64_t getContiguity(unsigned d) const { return contiguity[d]; }
  int64_t getConstancy(unsigned d) const { return constancy[d]; }
  llvm::ArrayRef<int64_t> getDivisibility() const { return divisibility; }
  llvm::ArrayRef<int64_t> getContiguity() const { return contiguity; }
  llvm::ArrayRef<int64_t> getConstancy() const { return constancy; }
  std::optional<int64_t> getConstantValue() const { return constant; }

  /// What every element is a multiple of (for pointers with elements of
  /// `step` bytes: at least `step`).
  int64_t elementDivisibility(int64_t step = 1) const;
  /// What the elements at indices that are multiples of `groupSize` along
  /// `dim` are multiples of (`step`: 1 for integers, the element size for
  /// pointers).
  int64_t divisibilityAt(unsigned dim, int64_t groupSize,
                         int64_t step = 1) const;

  /// The facts that hold for both (a value that may be either).
  static AxisInfo join(const AxisInfo &lhs, const AxisInfo &rhs);
  bool operator==(const AxisInfo &other) const {
    return divisibility == other.divisibility &&
           contiguity == other.contiguity && constancy == other.constancy &&
           constant == other.constant;
  }
  void print(llvm::raw_ostream &os) const;

private:
  Dims divisibility, contiguity, constancy;
  std::optional<int64_t> constant;
};

class AxisInfoLattice : public mlir::dataflow::Lattice<AxisInfo> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AxisInfoLattice)
  using Lattice::Lattice;
};

/// The sparse forward data-flow analysis computing AxisInfo. Load it into a
/// DataFlowSolver with the baseline analyses (dead code, constants), or use
/// AxisInfoResult.
class AxisInfoAnalysis
    : public mlir::dataflow::SparseForwardDataFlowAnalysis<AxisInfoLattice> {
public:
  using SparseForwardDataFlowAnalysis::SparseForwardDataFlowAnalysis;

  mlir::LogicalResult
  visitOperation(mlir::Operation *op,
                 llvm::ArrayRef<const AxisInfoLattice *> operands,
                 llvm::ArrayRef<AxisInfoLattice *> results) override;
  void visitNonControlFlowArguments(
      mlir::Operation *op, const mlir::RegionSuccessor &successor,
      llvm::ArrayRef<AxisInfoLattice *> argLattices,
      unsigned firstIndex) override;
  void setToEntryState(AxisInfoLattice *lattice) override;
};

/// Runs the analysis over `root` (a kernel function or a module) and answers
/// queries about its values.
class AxisInfoResult {
public:
  explicit AxisInfoResult(mlir::Operation *root);
  ~AxisInfoResult();

  /// The facts about `value`; null when the analysis did not reach it (dead
  /// code) or it is neither an integer nor a pointer value.
  const AxisInfo *lookup(mlir::Value value) const;

  /// The alignment in bytes that every address in the pointer (or block of
  /// pointers) `ptr` has: at least the pointee's size, a power of 2.
  uint64_t elementAlignment(mlir::Value ptr) const;

private:
  std::unique_ptr<mlir::DataFlowSolver> solver;
};

/// The size in bytes of the elements a pointer type (or a block of pointers)
/// points to, as stored in memory (bools take a byte).
int64_t pointeeBytes(mlir::Type ptrLike);

} // namespace tessel

#endif // TESSEL_ANALYSIS_AXISINFO_H
