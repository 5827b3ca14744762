//===- LinearLayout.h - Layouts as linear maps over GF(2) -------*- C++ -*-===//
//
// Every GPU layout in Tessel -- blocked, slice, mma.sync and wgmma
// accumulators, dot operands, swizzled shared memory -- is one object: a
// linear map over GF(2) from hardware indices to tensor indices.
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

/// The accumulator (C/D) layout of mma.sync m16n8 (PTX ISA "Matrix
/// Fragments for mma.m16n8k*"), tiled over warpsPerCTA [M, N] warps and
/// repeated in registers to cover shape [M, N].
LinearLayout mmaAccumulatorLayout(const std::vector<int32_t> &shape,
                                  const std::vector<int32_t> &warpsPerCTA);
/// The warps [M, N] whose mmaAccumulatorLayout for `shape` [M, N] is
/// `layout`, or nothing where it is no mma.sync accumulator (or M, N are not
/// whole 16x8 tiles).
std::optional<std::vector<int32_t>>
mmaAccumulatorWarps(const LinearLayout &layout,
                    const std::vector<int32_t> &shape);

/// The layout of an mma.sync operand, `operand` 0 (A, shape [M, K]) or 1 (B,
/// shape [K, N]), as the instruction for `elementBits`-bit elements reads it
/// (PTX ISA "Matrix Fragments for mma.m16n8k8" for 32-bit tf32,
/// "mma.m16n8k16" for 16-bit, "mma.m16n8k32" for 8-bit elements): each
/// 32-bit register holds 32 / elementBits consecutive elements along K, the
/// first in the low bits. An instruction covers K = 256 / elementBits; its
/// registers come first, then the instructions along K, then along M (A) or
/// N (B). warpsPerCTA [M, N] is the accumulator's split
/// (mmaAccumulatorLayout): A's warps along N, and B's along M, hold copies.
/// Throws std::invalid_argument for other widths or a K that is not a
/// multiple of the instruction's.
LinearLayout mmaOperandLayout(unsigned operand, const std::vector<int32_t> &shape,
                              const std::vector<int32_t> &warpsPerCTA,
                              int32_t elementBits);

/// The accumulator (D) layout of warpgroup MMA, wgmma.mma_async m64nNk16
/// (PTX ISA "Register Fragments and Shared Memory Matrix Layouts"): the four
/// warps of a warpgroup cover 64 rows, 16 each, and every thread holds the
/// mma.sync 16x8 fragment repeated along the instruction's N columns.
/// warpsPerCTA [M, N] counts warps: M a multiple of 4 (warps along M come
/// first, so each group of four consecutive warps is a warpgroup), N
/// warpgroups side by side. The instruction's N is wgmmaInstrN(shape,
/// warpsPerCTA); instructions repeat in registers, along N first, to cover
/// shape [M, N].
LinearLayout wgmmaAccumulatorLayout(const std::vector<int32_t> &shape,
                                    const std::vector<int32_t> &warpsPerCTA);
/// The N of the wgmma instruction for a block of `shape` on warpsPerCTA
/// [M, N] warps: a warpgroup's columns, at most 256.
int32_t wgmmaInstrN(const std::vector<int32_t> &shape,
                    const std::vector<int32_t> &warpsPerCTA);

/// The span in bytes of the swizzle a K-major wgmma operand with `k`
/// elements of `elementBytes` per row uses: 128, or 64 or 32 when a row is
/// that short.
int32_t wgmmaSwizzleBytes(int32_t k, int32_t elementBytes);

/// A K-major wgmma operand (A as M x K, B as N x K) in shared memory, as a
/// matrix descriptor with `swizzleBytes` (32, 64 or 128) swizzle reads it:
/// "offset" (elements) maps to [dim0 = row, dim1 = k]. The tile is cut along
/// K into swizzle atoms of swizzleBytes / elementBytes columns, each atom
/// rows x that many elements stored row after row (stride offset 8 rows),
/// the atoms one after another; within an atom the 16-byte chunks of a row
/// are XORed with the address bits above the row's span, as the hardware
/// does when the tile starts at a multiple of 8 * swizzleBytes.
LinearLayout wgmmaOperandLayout(int32_t rows, int32_t k, int32_t elementBytes,
                                int32_t swizzleBytes);
/// An MN-major wgmma operand (B as K x N, its N contiguous) in shared
/// memory, as a descriptor with `swizzleBytes` swizzle and the transpose
/// flag reads it: "offset" (elements) maps to [dim0 = k, dim1 = mn]. A
/// swizzle atom is 8 rows of K, each swizzleBytes / elementBytes
/// consecutive MN elements (16-byte chunks XORed as in wgmmaOperandLayout);
/// atoms follow each other along K (the stride offset, 8 * swizzleBytes),
/// then along MN (the leading offset, k * swizzleBytes): each column of
/// atoms is k rows of swizzleBytes, what one box of the copy engine with
/// that swizzle lands.
LinearLayout wgmmaMNMajorOperandLayout(int32_t k, int32_t mn,
                                       int32_t elementBytes,
                                       int32_t swizzleBytes);

/// An mma.sync operand whose K is not contiguous (B as K x N, N contiguous,
/// or A as K x M) for fragment registers read a 32-bit word at a time,
/// each word `perWord` = 4 / elementBytes elements consecutive along K
/// (tf32: 1; 8-bit: 4, gathered a byte at a time), the warp's lanes reading
/// 8 consecutive columns of rows k0 + perWord * t, t = 0..3: rows of K,
/// row-major in 16-byte (8-bit) or 32-byte (tf32) chunks, the row bits of
/// t lowest, and where `windowBytes` (the row's bytes, at most 128) leaves
/// fewer than 4 rows in 128 bytes, the chunks of each next group of rows
/// XORed by its index: the 4 rows' reads fall on different banks.
/// "offset" (elements) maps to [dim0 = k, dim1 = column].
LinearLayout gatherOperandLayout(int32_t k, int32_t columns,
                                 int32_t elementBytes, int32_t windowBytes);

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
/// `numWarps` warps of `threadsPerWarp` lanes: every element along the axis in one thread's registers
/// (the scan is then sequential in each thread), lanes and warps over the
/// other dimensions from the last to the first, extra threads holding copies.
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
