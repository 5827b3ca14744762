//===- AmdLayouts.cpp - AMD's matrix-core layouts -------------------------===//
#include "tessel/Dialect/TileGPU/IR/AmdLayouts.h"

#include "LayoutSupport.h"

namespace tessel::gpu {

namespace {

/// Throws unless `instr` is an MFMA block size this file knows (16 or 32).
int32_t groupsOf(int32_t instr) {
  if (instr != 16 && instr != 32)
    bad("MFMA blocks are 16x16 or 32x32, not " + std::to_string(instr));
  return 64 / instr;
}

} // namespace

LinearLayout mfmaAccumulatorLayout(const std::vector<int32_t> &shape,
                                   const std::vector<int32_t> &warpsPerCTA,
                                   bool transposed, int32_t instr,
                                   bool doubles) {
  checkRank(shape, 2, "shape");
  checkRank(warpsPerCTA, 2, "warpsPerCTA");
  int32_t groups = groupsOf(instr);
  if (doubles && instr != 16)
    bad("64-bit MFMA results come in 16x16 blocks");
  std::string m = dimName(0), n = dimName(1);
  // Bases given as the transposed layout's (M, N); swapped otherwise.
  auto bases = [&](std::vector<std::pair<int32_t, int32_t>> pairs) {
    std::vector<LinearLayout::Basis> out;
    for (auto [x, y] : pairs)
      out.push_back(transposed ? LinearLayout::Basis{x, y}
                               : LinearLayout::Basis{y, x});
    return out;
  };
  // Lanes: first along the lanes' dimension, then groups of four along the
  // other; registers: four consecutive, then the next rows of groups.
  std::vector<std::pair<int32_t, int32_t>> regs{{0, 1}, {0, 2}}, lanes;
  for (int32_t v = 4 * groups; v < instr; v *= 2)
    regs.push_back({0, v});
  for (int32_t v = 1; v < instr; v *= 2)
    lanes.push_back({v, 0});
  for (int32_t v = 4; v < 4 * groups; v *= 2)
    lanes.push_back({0, v});
  if (doubles) { // one row per register, the groups' rows in between
    regs = {{0, 4}, {0, 8}};
    lanes = {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 1}, {0, 2}};
  }
  LinearLayout tile({{kRegister, bases(regs)}, {kLane, bases(lanes)}},
                    {{m, instr}, {n, instr}});
  LinearLayout warps = LinearLayout::identity1D(warpsPerCTA[1], kWarp, n) *
                       LinearLayout::identity1D(warpsPerCTA[0], kWarp, m);
  LinearLayout layout = (tile * warps).transposeOuts({m, n});
  return fitToShape(repeatToShape(layout, shape, {1, 0}), shape);
}

std::optional<std::vector<int32_t>>
mfmaAccumulatorWarps(const LinearLayout &layout,
                     const std::vector<int32_t> &shape, bool transposed,
                     int32_t instr, bool doubles) {
  if (shape.size() != 2 || (instr != 16 && instr != 32) || shape[0] % instr ||
      shape[1] % instr || (doubles && instr != 16))
    return std::nullopt;
  return warpSplitOf(layout, [&](const std::vector<int32_t> &warps) {
    return mfmaAccumulatorLayout(shape, warps, transposed, instr, doubles);
  });
}

LinearLayout mfmaOperandLayout(unsigned operand,
                               const std::vector<int32_t> &shape,
                               const std::vector<int32_t> &warpsPerCTA,
                               int32_t kWidth, int32_t instr) {
  checkRank(shape, 2, "shape");
  checkRank(warpsPerCTA, 2, "warpsPerCTA");
  int32_t groups = groupsOf(instr);
  if (operand > 1)
    bad("an mfma operand is 0 (A) or 1 (B)");
  if (kWidth < 1 || kWidth > 32 || (kWidth & (kWidth - 1)))
    bad("an mfma operand holds 1 to 32 (a power of two) elements of K per "
        "lane, not " + std::to_string(kWidth));
  int32_t k = shape[operand == 0 ? 1 : 0], instK = groups * kWidth;
  if (k % instK)
    bad("K = " + std::to_string(k) + " is not a multiple of " +
        std::to_string(instK));
  // (mn, k) pairs, transposed for B.
  auto bases = [&](std::vector<std::pair<int32_t, int32_t>> mnk) {
    std::vector<LinearLayout::Basis> out;
    for (auto [mn, kk] : mnk)
      out.push_back(operand == 0 ? LinearLayout::Basis{mn, kk}
                                 : LinearLayout::Basis{kk, mn});
    return out;
  };
  std::vector<std::pair<int32_t, int32_t>> regs, lanes;
  for (int32_t e = 1; e < kWidth; e *= 2)
    regs.push_back({0, e});
  for (int32_t v = 1; v < instr; v *= 2)
    lanes.push_back({v, 0});
  for (int32_t v = kWidth; v < instK; v *= 2)
    lanes.push_back({0, v});
  std::string d0 = dimName(0), d1 = dimName(1);
  LinearLayout tile(
      {{kRegister, bases(regs)}, {kLane, bases(lanes)}},
      operand == 0 ? std::vector<LinearLayout::OutDim>{{d0, instr}, {d1, instK}}
                   : std::vector<LinearLayout::OutDim>{{d0, instK}, {d1, instr}});
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

} // namespace tessel::gpu
