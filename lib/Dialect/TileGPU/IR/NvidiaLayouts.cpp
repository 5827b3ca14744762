//===- NvidiaLayouts.cpp - NVIDIA's matrix-unit layouts -------------------===//
//
// The register fragments of mma.sync and wgmma (PTX ISA "Matrix Fragments"
// and "Register Fragments and Shared Memory Matrix Layouts"), wgmma's
// shared-memory operand swizzles and the word-gather layout of mma.sync
// operands, as LinearLayouts.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/TileGPU/IR/NvidiaLayouts.h"

#include "LayoutSupport.h"

#include <algorithm>

namespace tessel::gpu {

LinearLayout mmaAccumulatorLayout(const std::vector<int32_t> &shape,
                                  const std::vector<int32_t> &warpsPerCTA) {
  checkRank(shape, 2, "shape");
  checkRank(warpsPerCTA, 2, "warpsPerCTA");
  // One warp's 16x8 tile (PTX ISA, "Matrix Fragments for mma.m16n8k16",
  // accumulator D): c0,c1 are row groupID, columns 2*threadID_in_group + {0,1};
  // c2,c3 the same 8 rows below.
  std::string m = dimName(0), n = dimName(1);
  LinearLayout tile(
      {{kRegister, {{0, 1}, {8, 0}}},
       {kLane, {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}}},
      {{m, 16}, {n, 8}});
  LinearLayout warps =
      LinearLayout::identity1D(warpsPerCTA[1], kWarp, n) *
      LinearLayout::identity1D(warpsPerCTA[0], kWarp, m);
  LinearLayout layout = (tile * warps).transposeOuts({m, n});
  return fitToShape(repeatToShape(layout, shape, {1, 0}), shape);
}

std::optional<std::vector<int32_t>>
mmaAccumulatorWarps(const LinearLayout &layout,
                    const std::vector<int32_t> &shape) {
  if (shape.size() != 2 || shape[0] % 16 || shape[1] % 8)
    return std::nullopt;
  return warpSplitOf(layout, [&](const std::vector<int32_t> &warps) {
    return mmaAccumulatorLayout(shape, warps);
  });
}

LinearLayout mmaOperandLayout(unsigned operand, const std::vector<int32_t> &shape,
                              const std::vector<int32_t> &warpsPerCTA,
                              int32_t elementBits) {
  checkRank(shape, 2, "shape");
  checkRank(warpsPerCTA, 2, "warpsPerCTA");
  if (operand > 1)
    bad("an mma operand is 0 (A) or 1 (B)");
  if (elementBits != 8 && elementBits != 16 && elementBits != 32)
    bad("mma.sync operands have 8-, 16- or 32-bit elements, not " +
        std::to_string(elementBits));
  int32_t perRegister = 32 / elementBits, instrK = 8 * perRegister;
  int32_t k = shape[operand == 0 ? 1 : 0];
  if (k % instrK)
    bad("K = " + std::to_string(k) + " is not a multiple of the mma.sync K (" +
        std::to_string(instrK) + ") for " + std::to_string(elementBits) +
        "-bit elements");
  // One instruction's fragment, as (mn, k) with mn A's row or B's column: a
  // register's elements are consecutive along K; then, for A, the same
  // columns 8 rows below; then the second half of K. threadID_in_group
  // (lane bits 0-1) picks a register's worth of K, groupID (bits 2-4) the
  // row or column.
  std::vector<std::pair<int32_t, int32_t>> regs, lanes;
  for (int32_t e = 1; e < perRegister; e *= 2)
    regs.push_back({0, e});
  if (operand == 0)
    regs.push_back({8, 0});
  regs.push_back({0, 4 * perRegister});
  lanes = {{0, perRegister}, {0, 2 * perRegister}, {1, 0}, {2, 0}, {4, 0}};
  auto bases = [&](const std::vector<std::pair<int32_t, int32_t>> &mnk) {
    std::vector<LinearLayout::Basis> out;
    for (auto [mn, kk] : mnk)
      out.push_back(operand == 0 ? LinearLayout::Basis{mn, kk}
                                 : LinearLayout::Basis{kk, mn});
    return out;
  };
  std::string d0 = dimName(0), d1 = dimName(1);
  int32_t tileMN = operand == 0 ? 16 : 8;
  LinearLayout tile({{kRegister, bases(regs)}, {kLane, bases(lanes)}},
                    operand == 0 ? std::vector<LinearLayout::OutDim>{{d0, tileMN}, {d1, instrK}}
                                 : std::vector<LinearLayout::OutDim>{{d0, instrK}, {d1, tileMN}});
  // The accumulator's warp bits: N first, then M. The operand follows its own
  // dimension and repeats along the other.
  LinearLayout warps =
      operand == 0
          ? LinearLayout::zeros1D(warpsPerCTA[1], kWarp, d0) *
                LinearLayout::identity1D(warpsPerCTA[0], kWarp, d0)
          : LinearLayout::identity1D(warpsPerCTA[1], kWarp, d1) *
                LinearLayout::zeros1D(warpsPerCTA[0], kWarp, d1);
  LinearLayout layout = (tile * warps).transposeOuts({d0, d1});
  std::vector<unsigned> kFirst =
      operand == 0 ? std::vector<unsigned>{1, 0} : std::vector<unsigned>{0, 1};
  return fitToShape(repeatToShape(layout, shape, kFirst), shape);
}

int32_t wgmmaInstrN(const std::vector<int32_t> &shape,
                    const std::vector<int32_t> &warpsPerCTA) {
  checkRank(shape, 2, "shape");
  checkRank(warpsPerCTA, 2, "warpsPerCTA");
  return std::min(256, shape[1] / warpsPerCTA[1]);
}

LinearLayout wgmmaAccumulatorLayout(const std::vector<int32_t> &shape,
                                    const std::vector<int32_t> &warpsPerCTA) {
  int32_t instrN = wgmmaInstrN(shape, warpsPerCTA);
  if (warpsPerCTA[0] % 4)
    bad("wgmma needs whole warpgroups along M (warps a multiple of 4)");
  if (instrN < 8 || shape[0] < 16 * warpsPerCTA[0])
    bad("the block is smaller than its warpgroups' wgmma tiles");
  std::string m = dimName(0), n = dimName(1);
  // One warp's 16 rows of the instruction (PTX ISA, wgmma .m64nNk16
  // accumulator D): d0,d1 at row groupID, columns 2*threadID_in_group +
  // {0,1}; d2,d3 the same 8 rows below; d4.. the next 8 columns, and so on
  // for N/8 column groups.
  LinearLayout fragment(
      {{kRegister, {{0, 1}, {8, 0}}},
       {kLane, {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}}},
      {{m, 16}, {n, 8}});
  LinearLayout tile =
      fragment * LinearLayout::identity1D(instrN / 8, kRegister, n);
  // Warps along M first: warp 4g+w of warpgroup g owns its rows 16w..16w+15.
  LinearLayout warps =
      LinearLayout::identity1D(warpsPerCTA[0], kWarp, m) *
      LinearLayout::identity1D(warpsPerCTA[1], kWarp, n);
  LinearLayout layout = (tile * warps).transposeOuts({m, n});
  return fitToShape(repeatToShape(layout, shape, {1, 0}), shape);
}

int32_t wgmmaSwizzleBytes(int32_t k, int32_t elementBytes) {
  int32_t rowBytes = k * elementBytes;
  if (rowBytes < 32)
    return 0;
  return std::min(128, rowBytes);
}

LinearLayout wgmmaOperandLayout(int32_t rows, int32_t k, int32_t elementBytes,
                                int32_t swizzleBytes) {
  if (swizzleBytes != 32 && swizzleBytes != 64 && swizzleBytes != 128)
    bad("wgmma swizzles span 32, 64 or 128 bytes");
  if (!isPow2(elementBytes) || elementBytes > 16)
    bad("element size must be a power of two up to 16 bytes");
  int32_t atomK = swizzleBytes / elementBytes;
  if (k % atomK || rows % 8)
    bad("a wgmma operand is whole swizzle atoms: rows a multiple of 8, K of " +
        std::to_string(atomK));
  // A row's 16-byte chunks XOR with address bits 7.. : for a span of S bytes
  // that is row / (128 / S), over S / 16 chunks.
  LinearLayout atom = swizzledSharedLayout(rows, atomK, 16 / elementBytes,
                                           128 / swizzleBytes, swizzleBytes / 16);
  return atom * LinearLayout::identity1D(k / atomK, kOffset, dimName(1));
}

LinearLayout wgmmaMNMajorOperandLayout(int32_t k, int32_t mn,
                                       int32_t elementBytes,
                                       int32_t swizzleBytes) {
  if (swizzleBytes != 32 && swizzleBytes != 64 && swizzleBytes != 128)
    bad("wgmma swizzles span 32, 64 or 128 bytes");
  if (!isPow2(elementBytes) || elementBytes > 16)
    bad("element size must be a power of two up to 16 bytes");
  int32_t atomMN = swizzleBytes / elementBytes;
  if (mn % atomMN || k % 8)
    bad("an MN-major wgmma operand is whole swizzle atoms: K a multiple of "
        "8, MN of " + std::to_string(atomMN));
  // The same swizzle as K-major with the roles of the two dimensions
  // swapped: a row of the atom is one k, its chunks hold consecutive mn.
  // Every row of K of one atom column, then the next column (a box of the
  // copy engine each).
  LinearLayout atom = swizzledSharedLayout(8, atomMN, 16 / elementBytes,
                                           128 / swizzleBytes, swizzleBytes / 16);
  return atom * LinearLayout::identity1D(k / 8, kOffset, dimName(0)) *
         LinearLayout::identity1D(mn / atomMN, kOffset, dimName(1));
}

LinearLayout gatherOperandLayout(int32_t k, int32_t columns,
                                 int32_t elementBytes, int32_t windowBytes) {
  if (elementBytes != 1 && elementBytes != 4)
    bad("gather layouts hold 8-bit or 32-bit elements");
  int32_t perWord = 4 / elementBytes;
  if (!isPow2(k) || !isPow2(columns) || k < 4 * perWord ||
      windowBytes != std::min(128, columns * elementBytes) || windowBytes < 32)
    bad("a gather layout is whole row windows of at least 32 bytes");
  // A warp's read reaches rows k0 + perWord * t (t = 0..3): those rows go
  // next to each other (the two row bits of t lowest), and where rows
  // narrower than the 128 bytes of the banks leave fewer than 4 of them in
  // one window, the chunks of each next window are XORed by its index.
  int32_t chunk = std::max(16, 8 * elementBytes) / elementBytes;
  int32_t perWindow = 128 / windowBytes; // rows in one 128-byte window
  int32_t phases = std::max(1, 4 / perWindow);
  int tBit = log2Exact(perWord); // k's lowest bit of t
  auto logicalBit = [&](int r) { // stored row bit r is k's bit
    if (tBit == 0 || r >= tBit + 2)
      return r;
    return r < 2 ? r + tBit : r - 2;
  };
  std::vector<LinearLayout::Basis> bases;
  for (int32_t c = 1; c < columns; c <<= 1)
    bases.push_back({0, c});
  int phaseShift = log2Exact(perWindow);
  for (int r = 0; (int32_t(1) << r) < k; ++r) {
    int32_t colXor = 0;
    if (r >= phaseShift && (int32_t(1) << (r - phaseShift)) < phases)
      colXor = chunk << (r - phaseShift);
    bases.push_back({int32_t(1) << logicalBit(r), colXor});
  }
  return LinearLayout({{kOffset, bases}},
                      {{dimName(0), k}, {dimName(1), columns}});
}

} // namespace tessel::gpu
