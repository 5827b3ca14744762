//===- LinearLayout.h - Layouts as linear maps over GF(2) -------*- C++ -*-===//
//
// Every GPU layout in Tessel -- blocked, slice, mma.sync and wgmma
// accumulators, dot operands, swizzled shared memory -- is one object: a
// linear map over GF(2) from hardware indices to tensor indices. This header
// has the algebra and the layouts every GPU has; each vendor's matrix-unit
// layouts have their own (NvidiaLayouts.h).
//
// The inputs are named dimensions of power-of-two size ("register", "lane",
// "warp", "block" for registers; "offset" for shared memory). Bit b of input
// dimension d maps to a basis vector: one coordinate per output dimension
// (the tensor's dimensions, also of power-of-two size). An input maps to the
// XOR of the basis vectors of its set bits. A basis vector of all zeros means
// that bit does not move the element: the value is broadcast (replicated)
// along it.
//
// Conversions between layouts, vector widths, whether a layout is a
// bijection, and swizzles are computed from these maps rather than written
// per layout kind.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TILEGPU_IR_LINEARLAYOUT_H
#define TESSEL_DIALECT_TILEGPU_IR_LINEARLAYOUT_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessel::gpu {

class LinearLayout {
public:
  /// A basis vector: one coordinate per output dimension.
  using Basis = std::vector<int32_t>;

  struct InDim {
    std::string name;
    std::vector<Basis> bases; // bases[bit]; the dimension has 2^bases.size()
  };
  struct OutDim {
    std::string name;
    int32_t size; // a power of two
  };

  LinearLayout() = default;
  /// Builds a layout from its bases. Throws std::invalid_argument when a
  /// size is not a power of two, a basis has the wrong length, or a
  /// coordinate does not fit its output dimension.
  LinearLayout(std::vector<InDim> ins, std::vector<OutDim> outs);

  /// The empty layout: no inputs, no outputs (the unit of operator*).
  static LinearLayout empty() { return {}; }
  /// `in` of `size` maps onto `out` of `size`, element i to i.
  static LinearLayout identity1D(int32_t size, const std::string &in,
                                 const std::string &out);
  /// `in` of `size` maps every index to 0 of `out` (size 1 unless given):
  /// the values along `in` are copies.
  static LinearLayout zeros1D(int32_t size, const std::string &in,
                              const std::string &out, int32_t outSize = 1);

  /// The product of two layouts: input dimensions present in both get this
  /// layout's bits first (low) and the other's after them (high); output
  /// dimensions present in both multiply in size, the other's coordinates
  /// scaled past this one's. Dimensions only in one keep their order, this
  /// layout's first.
  LinearLayout operator*(const LinearLayout &other) const;

  const std::vector<InDim> &ins() const { return ins_; }
  const std::vector<OutDim> &outs() const { return outs_; }
  int inIndex(const std::string &name) const;  // -1 when absent
  int outIndex(const std::string &name) const; // -1 when absent
  int32_t inSize(const std::string &name) const;  // 1 when absent
  int32_t outSize(const std::string &name) const; // 1 when absent
  int inLog2(const std::string &name) const;
  int64_t totalInSize() const;
  int64_t totalOutSize() const;
  int totalInBits() const;
  int totalOutBits() const;

  /// Maps named input coordinates (absent names are 0) to output
  /// coordinates in outs() order.
  std::vector<int32_t>
  apply(const std::vector<std::pair<std::string, int32_t>> &in) const;
  /// Maps a flat input index (input dimensions in order, first fastest) to a
  /// flat output index (output dimensions in order, first fastest).
  int64_t applyFlat(int64_t in) const;

  /// Every output is reached by some input.
  bool isSurjective() const;
  /// No two inputs reach the same output.
  bool isInjective() const;
  bool isInvertible() const { return isSurjective() && isInjective(); }

  /// this: A -> B, outer: B -> C gives A -> C. outer's input dimensions must
  /// be this layout's output dimensions with the same sizes.
  LinearLayout compose(const LinearLayout &outer) const;
  /// The inverse of a bijective layout (out dims become in dims and back).
  LinearLayout invert() const;
  /// For a surjective layout: a right inverse that picks, for each output,
  /// the input with the fewest set bits among broadcast copies (free bits
  /// set to zero).
  LinearLayout pseudoinvert() const;
  /// this: A -> T and other: B -> T over the same outputs; the map A -> B
  /// that sends each A index to a B index holding the same element (other
  /// must be surjective). This is what a layout conversion moves.
  LinearLayout invertAndCompose(const LinearLayout &other) const;

  /// The layout with output dimensions renamed/reordered to `order`, which
  /// must be a permutation of the current names.
  LinearLayout transposeOuts(const std::vector<std::string> &order) const;
  /// Keeps only the given input dimensions (others fixed at 0).
  LinearLayout sublayout(const std::vector<std::string> &inNames) const;
  /// Removes output dimension `name` (a slice): its coordinates are dropped.
  LinearLayout dropOut(const std::string &name) const;
  /// Merges all output dimensions into one named `name` (the first fastest,
  /// i.e. column-major over outs(); pass dims in minor-to-major order).
  LinearLayout flattenOuts(const std::string &name) const;
  /// Splits the single output dimension into `dims` (first fastest).
  LinearLayout reshapeOuts(const std::vector<OutDim> &dims) const;

  /// The number of consecutive elements along output dimension `out` held in
  /// consecutive values of input dimension `in` from index 0: the widest
  /// vector access (register bits 0..k-1 map to out bits 0..k-1).
  int32_t contiguousRun(const std::string &in, const std::string &out) const;
  /// Input bits of `in` whose basis is zero: the copies a value has.
  uint32_t freeBits(const std::string &in) const;

  /// The same map: input dimensions of size 1 (no bases) are as absent.
  bool operator==(const LinearLayout &o) const;
  bool operator!=(const LinearLayout &o) const { return !(*this == o); }
  std::string str() const;

private:
  /// The basis of every input bit as a flat output bit mask.
  std::vector<uint64_t> flatColumns() const;
  static LinearLayout fromFlatColumns(const std::vector<InDim> &inShape,
                                      const std::vector<OutDim> &outs,
                                      const std::vector<uint64_t> &cols);

  std::vector<InDim> ins_;
  std::vector<OutDim> outs_;
};

// Hardware input dimensions.
inline const char *kRegister = "register";
inline const char *kLane = "lane";
inline const char *kWarp = "warp";
inline const char *kBlock = "block";
inline const char *kOffset = "offset";
/// The name of tensor dimension i ("dim0", "dim1", ...).
std::string dimName(unsigned i);

/// Triton-style blocked layout: each thread holds sizePerThread elements,
/// threadsPerWarp and warpsPerCTA tile the tensor; `order` lists dimensions
/// from fastest to slowest. A tensor smaller than the CTA tile is broadcast
/// over the extra lanes/warps; a larger one repeats in registers.
LinearLayout blockedLayout(const std::vector<int32_t> &shape,
                           const std::vector<int32_t> &sizePerThread,
                           const std::vector<int32_t> &threadsPerWarp,
                           const std::vector<int32_t> &warpsPerCTA,
                           const std::vector<unsigned> &order);

/// Shared memory with an XOR swizzle of `vec`-element chunks: the chunk
/// column of row r is XORed with (r / perPhase) % maxPhase. Maps "offset"
/// (elements) to [dim0 = row, dim1 = column] of a rows x cols tile; order
/// is row-major (columns fastest).
LinearLayout swizzledSharedLayout(int32_t rows, int32_t cols, int32_t vec,
                                  int32_t perPhase, int32_t maxPhase);
/// The general linear XOR swizzle: a rows x cols tile stored row-major whose
/// row bit r XORs the column by `colXor[r]` (0 past its end).
/// swizzledSharedLayout is the one whose row bits each flip one chunk bit.
LinearLayout xorSwizzledLayout(int32_t rows, int32_t cols,
                               const std::vector<int32_t> &colXor);

//===----------------------------------------------------------------------===//
// How tile ops move layouts. Tensor dimensions are dim0..dim{rank-1}.
//===----------------------------------------------------------------------===//

/// The layout Tessel gives a tensor of `shape` by default on `numWarps`
/// warps of `threadsPerWarp` lanes: blocked, up to `vector` (4 by default) consecutive
/// elements of dimension `fastest` (the last by default) per thread, lanes
/// along `fastest` first and then along the other dimensions from the last
/// to the first, warps the other way round (the first dimension first,
/// `fastest` last).
/// `atLeast` forces that many consecutive elements per thread (a divisor of
/// the fastest dimension), whatever the tensor's size.
LinearLayout defaultBlockedLayout(const std::vector<int32_t> &shape,
                                  int numWarps, int threadsPerWarp,
                                  int32_t vector = 4,
                                  std::optional<unsigned> fastest = {},
                                  int32_t atLeast = 1);
/// The layout a scan along `axis` of a tensor of `shape` runs in on
/// `numWarps` warps of `threadsPerWarp` lanes: lanes over the other
/// dimensions from the last to the first, those left over along the axis,
/// each thread holding consecutive elements of it; warps over the other
/// dimensions, those left over holding copies (a row of the axis is whole
/// within a warp).
LinearLayout scanLayout(const std::vector<int32_t> &shape, unsigned axis,
                        int numWarps, int threadsPerWarp);
/// A tensor's layout without dimension `axis` (expand_dims' operand, from its
/// result; the dimensions after `axis` move down by one).
LinearLayout dropDim(const LinearLayout &layout, unsigned axis);
/// `layout` with a new dimension of size 1 at `axis`.
LinearLayout insertDim(const LinearLayout &layout, unsigned axis);
/// The layout of a broadcast's operand of shape `srcShape` whose elements
/// sit in the same registers as the result's (`layout`): coordinates along
/// size-1 dimensions become 0.
LinearLayout broadcastSource(const LinearLayout &layout,
                             const std::vector<int32_t> &srcShape);
/// The transposed layout: dimension i of the result is `perm[i]` of `layout`.
LinearLayout transposeLayout(const LinearLayout &layout,
                             const std::vector<int32_t> &perm);
/// The same elements in the same registers, viewed with row-major `shape`.
LinearLayout reshapeLayout(const LinearLayout &layout,
                           const std::vector<int32_t> &shape);
/// Whether every register, lane and warp basis of `layout` with a nonzero
/// coordinate along `axis` has no other nonzero coordinate (so a reduction
/// combines registers, then lanes by shuffles, then warps, each along axis).
bool canReduceAlong(const LinearLayout &layout, unsigned axis);
/// The layout of a reduction along `axis` (canReduceAlong): register bits
/// along the axis are gone, lane and warp bits along it hold copies, and the
/// axis is dropped.
LinearLayout reduceLayout(const LinearLayout &layout, unsigned axis);

} // namespace tessel::gpu

#endif // TESSEL_DIALECT_TILEGPU_IR_LINEARLAYOUT_H
