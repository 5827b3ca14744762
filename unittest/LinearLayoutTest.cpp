//===- LinearLayoutTest.cpp - GPU layouts as GF(2) linear maps ------------===//
//
// Each layout kind is checked exhaustively against a reference written here
// from its definition with integer division and remainders (blocked layouts,
// swizzles) or from the PTX ISA's fragment table (the mma.sync accumulator),
// never from LinearLayout's own algebra.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/TileGPU/IR/LinearLayout.h"
#include "tessel/Dialect/TileGPU/IR/NvidiaLayouts.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace tessel::gpu;

namespace {

using Coord = std::vector<int32_t>;

/// The element a blocked layout gives (register, lane, warp), by the classic
/// definition: per dimension, elem + spt * (lane_d + tpw * (warp_d + wpc *
/// rep_d)), wrapped to the shape; lane, warp and the register's repetition
/// index split over dimensions fastest-first in `order`.
Coord blockedReference(const Coord &shape, const Coord &spt, const Coord &tpw,
                       const Coord &wpc, const std::vector<unsigned> &order,
                       int reg, int lane, int warp) {
  size_t r = shape.size();
  Coord reps(r);
  for (size_t d = 0; d < r; ++d) {
    int tile = spt[d] * tpw[d] * wpc[d];
    reps[d] = shape[d] > tile ? shape[d] / tile : 1;
  }
  Coord elem(r), laneD(r), warpD(r), repD(r);
  int regInTile = reg, repIndex = reg;
  int perThread = 1;
  for (size_t d = 0; d < r; ++d)
    perThread *= spt[d];
  regInTile = reg % perThread;
  repIndex = reg / perThread;
  for (unsigned d : order) {
    elem[d] = regInTile % spt[d];
    regInTile /= spt[d];
    laneD[d] = lane % tpw[d];
    lane /= tpw[d];
    warpD[d] = warp % wpc[d];
    warp /= wpc[d];
  }
  for (unsigned d : order) {
    repD[d] = repIndex % reps[d];
    repIndex /= reps[d];
  }
  Coord out(r);
  for (size_t d = 0; d < r; ++d)
    out[d] = (elem[d] + spt[d] * (laneD[d] + tpw[d] * (warpD[d] + wpc[d] * repD[d]))) %
             shape[d];
  return out;
}

struct BlockedCase {
  Coord shape, spt, tpw, wpc;
  std::vector<unsigned> order;
};

void checkBlocked(const BlockedCase &c) {
  LinearLayout l = blockedLayout(c.shape, c.spt, c.tpw, c.wpc, c.order);
  int regs = l.inSize(kRegister), lanes = l.inSize(kLane),
      warps = l.inSize(kWarp);
  int threads = 1, warpCount = 1;
  for (size_t d = 0; d < c.shape.size(); ++d) {
    threads *= c.tpw[d];
    warpCount *= c.wpc[d];
  }
  ASSERT_EQ(lanes, threads);
  ASSERT_EQ(warps, warpCount);
  std::map<Coord, int> seen;
  for (int reg = 0; reg < regs; ++reg)
    for (int lane = 0; lane < lanes; ++lane)
      for (int warp = 0; warp < warps; ++warp) {
        Coord got = l.apply({{kRegister, reg}, {kLane, lane}, {kWarp, warp}});
        Coord want = blockedReference(c.shape, c.spt, c.tpw, c.wpc, c.order,
                                      reg, lane, warp);
        ASSERT_EQ(got, want) << "reg " << reg << " lane " << lane << " warp "
                             << warp << "\n"
                             << l.str();
        seen[got]++;
      }
  // Every element is held; each the same number of times.
  int64_t elems = 1;
  for (int32_t s : c.shape)
    elems *= s;
  ASSERT_EQ(int64_t(seen.size()), elems);
  EXPECT_TRUE(l.isSurjective());
  int copies = seen.begin()->second;
  for (auto &[coord, n] : seen)
    ASSERT_EQ(n, copies);
  EXPECT_EQ(l.isInjective(), copies == 1);
}

} // namespace

TEST(LinearLayout, IdentityAndZeros) {
  LinearLayout id = LinearLayout::identity1D(16, kLane, "dim0");
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(id.apply({{kLane, i}})[0], i);
  EXPECT_TRUE(id.isInvertible());
  LinearLayout z = LinearLayout::zeros1D(8, kWarp, "dim0");
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(z.apply({{kWarp, i}})[0], 0);
  EXPECT_FALSE(z.isInjective());
  EXPECT_EQ(z.freeBits(kWarp), 7u);
}

TEST(LinearLayout, RejectsBadInput) {
  EXPECT_THROW(LinearLayout::identity1D(12, kLane, "dim0"),
               std::invalid_argument);
  EXPECT_THROW(LinearLayout({{kLane, {{4}}}}, {{"dim0", 4}}),
               std::invalid_argument);
  EXPECT_THROW(blockedLayout({48}, {1}, {32}, {4}, {0}), std::invalid_argument);
  EXPECT_THROW(LinearLayout::identity1D(4, kLane, "dim0")
                   .compose(LinearLayout::identity1D(8, "dim0", "x")),
               std::invalid_argument);
  EXPECT_THROW(LinearLayout::zeros1D(4, kLane, "dim0", 4).invert(),
               std::invalid_argument);
}

TEST(LinearLayout, BlockedExhaustive1D) {
  for (int32_t n : {1, 2, 16, 64, 128, 256, 1024, 4096})
    for (int32_t spt : {1, 2, 4, 8})
      for (int32_t warps : {1, 2, 4, 8})
        checkBlocked({{n}, {spt}, {32}, {warps}, {0}});
}

TEST(LinearLayout, BlockedExhaustive2D) {
  std::vector<Coord> shapes = {{1, 1},   {1, 64}, {64, 1},  {16, 16},
                               {32, 64}, {128, 8}, {8, 128}, {64, 64}};
  std::vector<std::pair<Coord, Coord>> threadSplits = {
      {{1, 4}, {32, 1}}, {{4, 1}, {8, 4}}, {{1, 8}, {4, 8}},
      {{2, 2}, {16, 2}}, {{1, 1}, {2, 16}}};
  std::vector<Coord> warpSplits = {{1, 1}, {4, 1}, {1, 4}, {2, 2}, {8, 1}};
  for (auto &shape : shapes)
    for (auto &[spt, tpw] : threadSplits)
      for (auto &wpc : warpSplits)
        for (std::vector<unsigned> order :
             {std::vector<unsigned>{1, 0}, std::vector<unsigned>{0, 1}})
          checkBlocked({shape, spt, tpw, wpc, order});
}

TEST(LinearLayout, Blocked3D) {
  checkBlocked({{4, 8, 16}, {1, 1, 4}, {2, 4, 4}, {2, 1, 2}, {2, 1, 0}});
  checkBlocked({{2, 32, 8}, {2, 1, 2}, {1, 8, 4}, {1, 4, 1}, {0, 2, 1}});
}

TEST(LinearLayout, MmaAccumulatorMatchesPtxIsaTable) {
  // PTX ISA, mma.m16n8k16 (and k8/k32) accumulator fragment: groupID =
  // laneid >> 2, threadID_in_group = laneid % 4; ci for i < 2 is at row
  // groupID, col threadID_in_group * 2 + (i & 1); for i >= 2 at row
  // groupID + 8.
  for (Coord warps : {Coord{1, 1}, Coord{2, 2}, Coord{4, 1}, Coord{1, 4},
                      Coord{2, 1}}) {
    for (Coord shape : {Coord{16, 8}, Coord{64, 64}, Coord{128, 32},
                        Coord{32, 128}}) {
      if (shape[0] < 16 * warps[0] || shape[1] < 8 * warps[1])
        continue;
      LinearLayout l = mmaAccumulatorLayout(shape, warps);
      EXPECT_TRUE(l.isInvertible()) << l.str();
      int repN = shape[1] / (8 * warps[1]);
      for (int warp = 0; warp < warps[0] * warps[1]; ++warp)
        for (int lane = 0; lane < 32; ++lane)
          for (int reg = 0; reg < l.inSize(kRegister); ++reg) {
            int i = reg % 4, rep = reg / 4;
            int wn = warp % warps[1], wm = warp / warps[1];
            int rn = rep % repN, rm = rep / repN;
            int row = (lane >> 2) + (i >= 2 ? 8 : 0) + 16 * (wm + warps[0] * rm);
            int col = (lane % 4) * 2 + (i & 1) + 8 * (wn + warps[1] * rn);
            Coord got = l.apply({{kRegister, reg}, {kLane, lane}, {kWarp, warp}});
            ASSERT_EQ(got, (Coord{row, col}))
                << "warp " << warp << " lane " << lane << " reg " << reg;
          }
    }
  }
}

TEST(LinearLayout, MmaAccumulatorWarpsRecoversTheSplit) {
  // Each split's accumulator layout gives back that split; a blocked layout
  // and shapes of partial 16x8 tiles give nothing. (A wgmma accumulator of
  // one warpgroup is the mma.sync one with the 4 warps along M.)
  for (Coord warps : {Coord{1, 1}, Coord{2, 2}, Coord{4, 1}, Coord{1, 4},
                      Coord{2, 1}, Coord{8, 1}, Coord{2, 4}}) {
    Coord shape{128, 64};
    auto got = mmaAccumulatorWarps(mmaAccumulatorLayout(shape, warps), shape);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, warps);
  }
  Coord shape{64, 64};
  EXPECT_FALSE(mmaAccumulatorWarps(
      defaultBlockedLayout({64, 64}, 4, 32, 4, std::nullopt), shape));
  EXPECT_EQ(mmaAccumulatorWarps(wgmmaAccumulatorLayout(shape, {4, 1}), shape),
            (std::optional<std::vector<int32_t>>{{4, 1}}));
  EXPECT_FALSE(mmaAccumulatorWarps(mmaAccumulatorLayout({16, 8}, {1, 1}), {8, 8}));
}

/// Element i of lane `lane`'s A fragment as (row, k), written out from the PTX
/// ISA's "Matrix Fragments for mma.m16n8k8" (.tf32), "mma.m16n8k16" (.f16,
/// .bf16) and "mma.m16n8k32" (.s8, .u8, .e4m3, .e5m2) tables.
Coord mmaAFragment(int bits, int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  if (bits == 32) // row g for a0 a2, g + 8 for a1 a3; col t for a0 a1, t + 4 for a2 a3
    return {g + (i == 1 || i == 3 ? 8 : 0), t + (i >= 2 ? 4 : 0)};
  if (bits == 16) // row g for a0 a1 a4 a5, else g + 8; col 2t + (i & 1), + 8 for i >= 4
    return {g + (i == 2 || i == 3 || i == 6 || i == 7 ? 8 : 0),
            t * 2 + (i & 1) + (i >= 4 ? 8 : 0)};
  // row g for a0..a3 and a8..a11, else g + 8; col 4t + (i & 3), + 16 for i >= 8
  return {g + ((i >= 4 && i < 8) || i >= 12 ? 8 : 0),
          t * 4 + (i & 3) + (i >= 8 ? 16 : 0)};
}

/// Element i of lane `lane`'s B fragment as (k, col), from the same tables.
Coord mmaBFragment(int bits, int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  if (bits == 32) // row t for b0, t + 4 for b1; col g
    return {t + (i == 1 ? 4 : 0), g};
  if (bits == 16) // row 2t + (i & 1), + 8 for b2 b3; col g
    return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
  return {t * 4 + (i & 3) + (i >= 4 ? 16 : 0), g}; // + 16 for b4..b7
}

TEST(LinearLayout, MmaOperandsMatchPtxIsaTables) {
  for (int bits : {32, 16, 8}) {
    int instrK = 256 / bits;
    for (unsigned operand : {0u, 1u}) {
      int perLane = (operand == 0 ? 16 : 8) * instrK / 32;
      for (Coord warps : {Coord{1, 1}, Coord{2, 2}, Coord{4, 1}, Coord{1, 4},
                          Coord{2, 1}, Coord{1, 2}})
        for (Coord mnk : {Coord{16, 8, 32}, Coord{64, 64, 64}, Coord{128, 32, 32},
                          Coord{32, 128, 128}}) {
          int M = mnk[0], N = mnk[1], K = mnk[2];
          if (M < 16 * warps[0] || N < 8 * warps[1])
            continue;
          Coord shape = operand == 0 ? Coord{M, K} : Coord{K, N};
          LinearLayout l = mmaOperandLayout(operand, shape, warps, bits);
          EXPECT_TRUE(l.isSurjective()) << l.str();
          int kSteps = K / instrK;
          std::set<Coord> seen;
          for (int warp = 0; warp < warps[0] * warps[1]; ++warp)
            for (int lane = 0; lane < 32; ++lane)
              for (int reg = 0; reg < l.inSize(kRegister); ++reg) {
                int i = reg % perLane, step = reg / perLane % kSteps,
                    rep = reg / perLane / kSteps;
                int wn = warp % warps[1], wm = warp / warps[1];
                Coord want;
                if (operand == 0) {
                  Coord f = mmaAFragment(bits, lane, i);
                  want = {f[0] + 16 * (wm + warps[0] * rep), f[1] + instrK * step};
                } else {
                  Coord f = mmaBFragment(bits, lane, i);
                  want = {f[0] + instrK * step, f[1] + 8 * (wn + warps[1] * rep)};
                }
                Coord got = l.apply({{kRegister, reg}, {kLane, lane}, {kWarp, warp}});
                ASSERT_EQ(got, want) << bits << "-bit operand " << operand << " warp "
                                     << warp << " lane " << lane << " reg " << reg;
                seen.insert(got);
              }
          EXPECT_EQ(int64_t(seen.size()), int64_t(shape[0]) * shape[1]);
          // A register's elements are consecutive along K.
          EXPECT_EQ(l.contiguousRun(kRegister, dimName(operand == 0 ? 1 : 0)),
                    32 / bits);
        }
    }
  }
  EXPECT_THROW(mmaOperandLayout(0, {16, 16}, {1, 1}, 32 * 2), std::invalid_argument);
  EXPECT_THROW(mmaOperandLayout(1, {16, 8}, {1, 1}, 8), std::invalid_argument);
  EXPECT_THROW(mmaOperandLayout(2, {16, 16}, {1, 1}, 16), std::invalid_argument);
}

TEST(LinearLayout, WgmmaAccumulatorMatchesPtxIsaTable) {
  // PTX ISA, wgmma.mma_async .m64nNk16, accumulator D (f32, N/2 registers
  // d0..d{N/2-1}): warp w of the warpgroup holds rows 16w..16w+15; with
  // groupID = laneid >> 2 and threadID_in_group = laneid % 4, di is at row
  // 16w + groupID + 8 * ((i >> 1) & 1) and column 8 * (i >> 2) +
  // threadID_in_group * 2 + (i & 1).
  struct Case {
    Coord shape, warps;
    int32_t instrN;
  };
  for (const Case &c : std::vector<Case>{{{64, 8}, {4, 1}, 8},
                                         {{64, 16}, {4, 1}, 16},
                                         {{64, 256}, {4, 1}, 256},
                                         {{64, 512}, {4, 1}, 256},
                                         {{128, 64}, {4, 1}, 64},
                                         {{128, 128}, {8, 1}, 128},
                                         {{64, 128}, {4, 2}, 64},
                                         {{256, 32}, {8, 2}, 16},
                                         {{128, 32}, {4, 4}, 8}}) {
    LinearLayout l = wgmmaAccumulatorLayout(c.shape, c.warps);
    ASSERT_EQ(wgmmaInstrN(c.shape, c.warps), c.instrN);
    EXPECT_TRUE(l.isInvertible()) << l.str();
    int32_t perInstr = c.instrN / 2; // registers of one instruction
    int32_t wgM = c.warps[0] / 4, wgN = c.warps[1];
    int32_t repN = c.shape[1] / (c.instrN * wgN);
    ASSERT_EQ(l.inSize(kRegister) % perInstr, 0);
    for (int warp = 0; warp < c.warps[0] * c.warps[1]; ++warp)
      for (int lane = 0; lane < 32; ++lane)
        for (int reg = 0; reg < l.inSize(kRegister); ++reg) {
          // Registers: an instruction's N/2 first, then instructions along
          // N, then along M. Warps: four per warpgroup, warpgroups along M
          // first.
          int i = reg % perInstr, instr = reg / perInstr;
          int rn = instr % repN, rm = instr / repN;
          int w = warp % 4, wg = warp / 4;
          int gm = wg % wgM, gn = wg / wgM;
          int row = 64 * (gm + wgM * rm) + 16 * w + (lane >> 2) +
                    8 * ((i >> 1) & 1);
          int col = c.instrN * (gn + wgN * rn) + 8 * (i >> 2) +
                    (lane % 4) * 2 + (i & 1);
          Coord got = l.apply({{kRegister, reg}, {kLane, lane}, {kWarp, warp}});
          ASSERT_EQ(got, (Coord{row, col}))
              << "shape " << c.shape[0] << "x" << c.shape[1] << " warp "
              << warp << " lane " << lane << " reg " << reg;
        }
  }
  // One warpgroup along N holds the same elements in the same registers as
  // mma.sync with all warps along M: converting between them moves nothing.
  EXPECT_EQ(wgmmaAccumulatorLayout({128, 64}, {4, 1}),
            mmaAccumulatorLayout({128, 64}, {4, 1}));
  EXPECT_THROW(wgmmaAccumulatorLayout({64, 64}, {2, 2}), std::invalid_argument);
  EXPECT_THROW(wgmmaAccumulatorLayout({32, 64}, {4, 1}), std::invalid_argument);
}

TEST(LinearLayout, WgmmaOperandMatchesDescriptorAddressing) {
  // PTX ISA, "Shared Memory Matrix Layout" / "Matrix Descriptor Format": a
  // K-major operand with swizzle span S bytes is read at byte
  //   start + (r % 8) * S + (r / 8) * SBO + k * size
  // for k within one swizzle atom (S / size elements), and the hardware then
  // XORs address bits [4, 4 + log2(S / 16)) with bits [7, 7 + log2(S / 16)).
  // Our tiles use SBO = 8 * S, put the atoms along K one after another
  // (rows * S bytes each) and start at a multiple of 1024 bytes.
  for (int32_t size : {2, 4})
    for (int32_t rows : {8, 64, 128})
      for (int32_t k : {16, 32, 64, 128}) {
        int32_t swizzle = wgmmaSwizzleBytes(k, size);
        if (!swizzle)
          continue;
        EXPECT_EQ(swizzle, std::min(128, k * size));
        int32_t atomK = swizzle / size;
        LinearLayout l = wgmmaOperandLayout(rows, k, size, swizzle);
        ASSERT_TRUE(l.isInvertible()) << l.str();
        LinearLayout inv = l.invert();
        for (int32_t r = 0; r < rows; ++r)
          for (int32_t kk = 0; kk < k; ++kk) {
            int64_t start = int64_t(kk / atomK) * rows * swizzle;
            int64_t byte = start + (r % 8) * swizzle + (r / 8) * (8 * swizzle) +
                           (kk % atomK) * size;
            int64_t mask = swizzle / 16 - 1;
            byte ^= ((byte >> 7) & mask) << 4;
            Coord got = inv.apply({{dimName(0), r}, {dimName(1), kk}});
            ASSERT_EQ(int64_t(got[0]) * size, byte)
                << "size " << size << " rows " << rows << " k " << k
                << " at (" << r << ", " << kk << ")";
          }
      }
  EXPECT_EQ(wgmmaSwizzleBytes(8, 2), 0);
  EXPECT_THROW(wgmmaOperandLayout(64, 32, 2, 128), std::invalid_argument);
}

TEST(LinearLayout, WgmmaMNMajorOperandMatchesDescriptorAddressing) {
  // PTX ISA, the same sections, MN-major (transposed) with swizzle span S:
  // element (mn, k) is read at byte
  //   start + (mn % T) * size + (mn / T) * LBO + (k % 8) * S + (k / 8) * SBO
  // with T = S / size, then the same XOR of address bits. Our tiles use
  // LBO = K * S (columns of atoms along MN, each all of K: a copy engine's
  // box) and SBO = 8 * S.
  for (int32_t size : {2, 4})
    for (int32_t mn : {16, 64, 256})
      for (int32_t k : {16, 32, 64})
        for (int32_t swizzle : {32, 64, 128}) {
          int32_t T = swizzle / size;
          if (mn % T)
            continue;
          LinearLayout l = wgmmaMNMajorOperandLayout(k, mn, size, swizzle);
          ASSERT_TRUE(l.isInvertible()) << l.str();
          LinearLayout inv = l.invert();
          int64_t lbo = int64_t(k) * swizzle, sbo = 8 * swizzle;
          for (int32_t kk = 0; kk < k; ++kk)
            for (int32_t r = 0; r < mn; ++r) {
              int64_t byte = (r % T) * size + (r / T) * lbo +
                             (kk % 8) * swizzle + (kk / 8) * sbo;
              int64_t mask = swizzle / 16 - 1;
              byte ^= ((byte >> 7) & mask) << 4;
              Coord got = inv.apply({{dimName(0), kk}, {dimName(1), r}});
              ASSERT_EQ(int64_t(got[0]) * size, byte)
                  << "size " << size << " mn " << mn << " k " << k
                  << " swizzle " << swizzle << " at (" << kk << ", " << r << ")";
            }
        }
  EXPECT_THROW(wgmmaMNMajorOperandLayout(16, 32, 2, 128), std::invalid_argument);
}

TEST(LinearLayout, SwizzleMatchesXorDefinition) {
  // Physical offset = row * cols + ((chunk ^ ((row / perPhase) % maxPhase))
  // * vec + col % vec) for logical (row, col), chunk = col / vec.
  for (int32_t cols : {16, 32, 64})
    for (int32_t vec : {1, 2, 4, 8})
      for (int32_t perPhase : {1, 2, 4})
        for (int32_t maxPhase : {1, 2, 4, 8}) {
          if (vec * maxPhase > cols)
            continue;
          int32_t rows = 32;
          LinearLayout l = swizzledSharedLayout(rows, cols, vec, perPhase, maxPhase);
          ASSERT_TRUE(l.isInvertible());
          for (int row = 0; row < rows; ++row)
            for (int col = 0; col < cols; ++col) {
              int chunk = col / vec;
              int phys = row * cols +
                         (chunk ^ ((row / perPhase) % maxPhase)) * vec + col % vec;
              Coord got = l.apply({{kOffset, phys}});
              ASSERT_EQ(got, (Coord{row, col}))
                  << "offset " << phys << " vec " << vec << " perPhase "
                  << perPhase << " maxPhase " << maxPhase;
            }
        }
}

TEST(LinearLayout, LinearXorSwizzleMatchesDefinition) {
  // Physical offset = row * cols + (col ^ X(row)), X(row) the XOR of
  // colXor[r] over row's set bits r (0 past the list's end).
  const std::vector<std::vector<int32_t>> cases = {
      {}, {2}, {0, 4, 8}, {2, 2, 8, 16, 1}, {24, 8, 16, 0, 0, 4}};
  for (const std::vector<int32_t> &colXor : cases) {
    int32_t rows = 64, cols = 32;
    LinearLayout l = xorSwizzledLayout(rows, cols, colXor);
    ASSERT_TRUE(l.isInvertible());
    for (int row = 0; row < rows; ++row) {
      int32_t x = 0;
      for (size_t r = 0; r < colXor.size(); ++r)
        if (row >> r & 1)
          x ^= colXor[r];
      for (int col = 0; col < cols; ++col)
        ASSERT_EQ(l.apply({{kOffset, row * cols + (col ^ x)}}),
                  (Coord{row, col}))
            << "row " << row << " col " << col;
    }
  }
}

TEST(LinearLayout, GatherLayoutReadsFragmentWordsWithoutBankConflicts) {
  // mma.sync's B fragment, one load instruction of the warp: lane l reads
  // column n0 + l / 4 at K row k0 + (l % 4) * perWord + j (tf32 m16n8k8:
  // perWord 1, j 0; int8 m16n8k32: perWord 4, j 0..3, a byte each). No
  // bank may see two different 4-byte words (Nsight's bank conflict).
  struct Case {
    int32_t bytes, k, columns, swizzle;
  };
  // Rows of 32, 64, 128 and 256 bytes.
  for (Case c : {Case{4, 8, 8, 32}, Case{4, 16, 16, 64}, Case{4, 16, 32, 128},
                 Case{4, 32, 64, 128}, Case{1, 32, 32, 32}, Case{1, 64, 64, 64},
                 Case{1, 32, 128, 128}, Case{1, 16, 256, 128}}) {
    LinearLayout l =
        gatherOperandLayout(c.k, c.columns, c.bytes, c.swizzle).invert();
    ASSERT_TRUE(l.isInvertible());
    int32_t perWord = 4 / c.bytes;
    for (int32_t k0 = 0; k0 < c.k; k0 += 4 * perWord)
      for (int32_t n0 = 0; n0 < c.columns; n0 += 8)
        for (int32_t j = 0; j < perWord; ++j) {
          std::map<int32_t, std::set<int64_t>> words; // bank -> words
          for (int32_t lane = 0; lane < 32; ++lane) {
            int32_t k = k0 + (lane % 4) * perWord + j, n = n0 + lane / 4;
            int64_t byte =
                int64_t(l.apply({{dimName(0), k}, {dimName(1), n}})[0]) *
                c.bytes;
            words[(byte / 4) % 32].insert(byte / 4);
          }
          for (auto &[bank, set] : words)
            ASSERT_EQ(set.size(), 1u)
                << "bytes " << c.bytes << " k0 " << k0 << " n0 " << n0
                << " j " << j << " bank " << bank;
        }
  }
}

TEST(LinearLayout, InverseRoundTrips) {
  LinearLayout l = blockedLayout({64, 32}, {2, 4}, {8, 4}, {4, 1}, {1, 0});
  ASSERT_TRUE(l.isInvertible());
  LinearLayout inv = l.invert();
  for (int64_t x = 0; x < l.totalInSize(); ++x)
    ASSERT_EQ(inv.applyFlat(l.applyFlat(x)), x);
  LinearLayout s = swizzledSharedLayout(64, 64, 8, 1, 8);
  LinearLayout sinv = s.invert();
  for (int64_t x = 0; x < s.totalInSize(); ++x)
    ASSERT_EQ(s.applyFlat(sinv.applyFlat(x)), x);
}

TEST(LinearLayout, PseudoinverseOfBroadcastLayout) {
  // 64 elements over 4 warps of 32 lanes: each element is held twice.
  LinearLayout l = blockedLayout({64}, {1}, {32}, {4}, {0});
  ASSERT_FALSE(l.isInjective());
  LinearLayout p = l.pseudoinvert();
  for (int e = 0; e < 64; ++e) {
    int64_t hw = p.applyFlat(e);
    EXPECT_EQ(l.applyFlat(hw), e);
  }
}

TEST(LinearLayout, ConversionMapsToHolderOfSameElement) {
  // A conversion from a blocked layout to the mma accumulator layout of the
  // same 64x64 tile: each source (reg, lane, warp) maps to a destination
  // (reg, lane, warp) holding the same element.
  Coord shape = {64, 64};
  LinearLayout src = blockedLayout(shape, {1, 4}, {4, 8}, {4, 1}, {1, 0});
  LinearLayout dst = mmaAccumulatorLayout(shape, {2, 2});
  LinearLayout conv = src.invertAndCompose(dst);
  for (int reg = 0; reg < src.inSize(kRegister); ++reg)
    for (int lane = 0; lane < 32; ++lane)
      for (int warp = 0; warp < 4; ++warp) {
        Coord hw = conv.apply({{kRegister, reg}, {kLane, lane}, {kWarp, warp}});
        Coord d = dst.apply({{kRegister, hw[0]}, {kLane, hw[1]}, {kWarp, hw[2]}});
        Coord s = src.apply({{kRegister, reg}, {kLane, lane}, {kWarp, warp}});
        ASSERT_EQ(d, s);
      }
}

TEST(LinearLayout, ContiguousRunIsTheVectorWidth) {
  EXPECT_EQ(blockedLayout({1024}, {4}, {32}, {4}, {0})
                .contiguousRun(kRegister, "dim0"),
            4);
  EXPECT_EQ(blockedLayout({64, 64}, {1, 8}, {8, 4}, {4, 1}, {1, 0})
                .contiguousRun(kRegister, "dim1"),
            8);
  // Repetitions in registers are not contiguous with the first run.
  EXPECT_EQ(blockedLayout({64, 64}, {1, 8}, {8, 4}, {4, 1}, {1, 0})
                .contiguousRun(kRegister, "dim0"),
            1);
  EXPECT_EQ(mmaAccumulatorLayout({16, 8}, {1, 1}).contiguousRun(kRegister, "dim1"),
            2);
}

TEST(LinearLayout, SliceDropsADimension) {
  // Slicing dim1 away from a [32, 16] blocked layout: the lanes spread
  // over dim1 become copies.
  LinearLayout l = blockedLayout({32, 16}, {1, 1}, {8, 4}, {4, 1}, {1, 0});
  LinearLayout s = l.dropOut(dimName(1));
  EXPECT_EQ(s.outs().size(), 1u);
  EXPECT_EQ(s.freeBits(kLane), 0b11u);
  for (int lane = 0; lane < 32; ++lane)
    for (int warp = 0; warp < 4; ++warp)
      EXPECT_EQ(s.apply({{kLane, lane}, {kWarp, warp}})[0],
                l.apply({{kLane, lane}, {kWarp, warp}})[0]);
  EXPECT_TRUE(s.isSurjective());
}

TEST(LinearLayout, ComposeAndFlatten) {
  LinearLayout l = blockedLayout({16, 16}, {1, 2}, {4, 8}, {4, 1}, {1, 0});
  LinearLayout flat = l.transposeOuts({dimName(1), dimName(0)}).flattenOuts("linear");
  for (int64_t x = 0; x < l.totalInSize(); ++x) {
    int64_t e = l.applyFlat(x); // dim0 bits low, then dim1
    int64_t r = e & 15, c = e >> 4;
    ASSERT_EQ(flat.applyFlat(x), r * 16 + c);
  }
  LinearLayout back =
      flat.reshapeOuts({{dimName(1), 16}, {dimName(0), 16}}).transposeOuts({dimName(0), dimName(1)});
  EXPECT_EQ(back, l);
  // Composition with an identity on the outputs changes nothing.
  LinearLayout id = LinearLayout::identity1D(16, dimName(0), dimName(0)) *
                    LinearLayout::identity1D(16, dimName(1), dimName(1));
  EXPECT_EQ(l.compose(id), l);
}

namespace {
int64_t rowMajor(const Coord &c, const Coord &shape) {
  int64_t i = 0;
  for (size_t d = 0; d < c.size(); ++d)
    i = i * shape[d] + c[d];
  return i;
}
Coord fromRowMajor(int64_t i, const Coord &shape) {
  Coord c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = int32_t(i % shape[d]);
    i /= shape[d];
  }
  return c;
}
Coord hwAt(const LinearLayout &l, int reg, int lane, int warp) {
  return l.apply({{kRegister, reg}, {kLane, lane}, {kWarp, warp}});
}
} // namespace

TEST(LinearLayout, DefaultLayoutsCoverEveryShape) {
  // NVIDIA's warps of 32 threads and AMD CDNA's wavefronts of 64.
  for (int lanes : {32, 64})
    for (Coord shape : {Coord{1}, Coord{2}, Coord{32}, Coord{128}, Coord{1024},
                        Coord{65536}, Coord{1, 1}, Coord{1, 128}, Coord{128, 1},
                        Coord{16, 16}, Coord{64, 128}, Coord{2, 4, 8}})
      for (int warps : {1, 2, 4, 8}) {
        LinearLayout l = defaultBlockedLayout(shape, warps, lanes);
        EXPECT_TRUE(l.isSurjective());
        EXPECT_EQ(l.inSize(kLane), lanes);
        EXPECT_EQ(l.inSize(kWarp), warps);
        int64_t numel = 1;
        for (int32_t s : shape)
          numel *= s;
        // No thread holds an element twice in its registers.
        EXPECT_EQ(l.freeBits(kRegister), 0u);
        // Elements are not copied when there are enough of them.
        if (numel >= lanes * warps)
          EXPECT_TRUE(l.isInjective()) << l.str();
      }
}

TEST(LinearLayout, ScanLayoutsKeepTheAxisInOneWarp) {
  for (int lanes : {32, 64})
    for (Coord shape : {Coord{8}, Coord{256}, Coord{4096}, Coord{16, 64},
                        Coord{64, 16}, Coord{256, 4}})
      for (unsigned axis = 0; axis < shape.size(); ++axis) {
        LinearLayout l = scanLayout(shape, axis, 4, lanes);
        EXPECT_TRUE(l.isSurjective()) << l.str();
        EXPECT_EQ(l.inSize(kLane), lanes);
        EXPECT_EQ(l.inSize(kWarp), 4);
        // Along the axis: registers first (a thread's consecutive
        // elements), then lanes; no warp moves along it, and no basis moves
        // along the axis and off it at once.
        int32_t run = l.contiguousRun(kRegister, dimName(axis));
        int32_t maxRegister = 0, minLane = INT32_MAX;
        for (const auto &in : l.ins())
          for (const auto &basis : in.bases) {
            if (basis[axis] == 0)
              continue;
            for (size_t d = 0; d < basis.size(); ++d)
              if (d != axis)
                EXPECT_EQ(basis[d], 0) << l.str();
            EXPECT_NE(in.name, std::string(kWarp)) << l.str();
            if (in.name == kRegister)
              maxRegister = std::max(maxRegister, basis[axis]);
            else
              minLane = std::min(minLane, basis[axis]);
          }
        EXPECT_LT(maxRegister, minLane) << l.str();
        EXPECT_EQ(run, std::max<int32_t>(1, maxRegister * 2)) << l.str();
      }
}

TEST(LinearLayout, DefaultLayoutsRunAlongTheFastestDimension) {
  for (Coord shape : {Coord{64, 32}, Coord{32, 64}, Coord{8, 256},
                      Coord{128, 4}, Coord{4, 8}, Coord{2, 4, 8}})
    for (unsigned fastest = 0; fastest < shape.size(); ++fastest)
      for (int warps : {1, 4, 8})
        for (int32_t vector : {1, 4, 8}) {
          LinearLayout l = defaultBlockedLayout(shape, warps, 32, vector, fastest);
          EXPECT_TRUE(l.isSurjective()) << l.str();
          EXPECT_EQ(l.inSize(kLane), 32);
          EXPECT_EQ(l.inSize(kWarp), warps);
          EXPECT_EQ(l.freeBits(kRegister), 0u) << l.str();
          int64_t numel = 1;
          for (int32_t s : shape)
            numel *= s;
          if (numel >= 32 * warps)
            EXPECT_TRUE(l.isInjective()) << l.str();
          // A thread's first registers run along `fastest`, as many as the
          // vector, the block and an even share of it allow.
          int64_t want = std::min<int64_t>(
              {vector, shape[fastest], std::max<int64_t>(1, numel / (32 * warps))});
          EXPECT_EQ(l.contiguousRun(kRegister, dimName(fastest)), want)
              << l.str();
          // The first lane that moves off `fastest` comes only after the
          // lanes along it fill it.
          std::vector<int32_t> lane1 = l.apply({{kLane, 1}});
          if (shape[fastest] > want)
            EXPECT_EQ(lane1[fastest], want) << l.str();
        }
  // The last dimension is the default's fastest.
  EXPECT_EQ(defaultBlockedLayout({64, 32}, 4, 32, 8, 1u),
            defaultBlockedLayout({64, 32}, 4, 32, 8));
}

TEST(LinearLayout, ReduceKeepsEachElementsRow) {
  for (Coord shape : {Coord{64, 32}, Coord{8, 256}, Coord{128, 4}, Coord{4, 8}})
    for (unsigned axis : {0u, 1u}) {
      LinearLayout l = defaultBlockedLayout(shape, 4, 32);
      ASSERT_TRUE(canReduceAlong(l, axis));
      LinearLayout r = reduceLayout(l, axis);
      EXPECT_TRUE(r.isSurjective());
      // Output register r' of a thread is the reduction of input registers
      // whose non-axis coordinate is the same: the input with the axis
      // register bits cleared maps to that coordinate.
      uint32_t axisRegBits = 0;
      for (size_t b = 0; b < l.ins()[0].bases.size(); ++b)
        if (l.ins()[0].bases[b][axis] != 0)
          axisRegBits |= 1u << b;
      for (int reg = 0; reg < l.inSize(kRegister); ++reg)
        for (int lane = 0; lane < 32; ++lane)
          for (int warp = 0; warp < 4; ++warp) {
            Coord in = hwAt(l, reg, lane, warp);
            // Compress reg: drop the axis bits.
            int out = 0, k = 0;
            for (int b = 0; b < l.inLog2(kRegister); ++b)
              if (!(axisRegBits >> b & 1))
                out |= (reg >> b & 1) << k++;
            Coord got = hwAt(r, out, lane, warp);
            Coord want = in;
            want.erase(want.begin() + axis);
            ASSERT_EQ(got, want);
          }
    }
}

TEST(LinearLayout, TransposeReshapeBroadcastMoveNoValues) {
  Coord shape = {16, 64};
  LinearLayout l = defaultBlockedLayout(shape, 4, 32);
  LinearLayout t = transposeLayout(l, {1, 0});
  LinearLayout rs = reshapeLayout(l, {4, 4, 64});
  LinearLayout flat1 = reshapeLayout(l, {1024});
  LinearLayout x = insertDim(l, 1);
  for (int reg = 0; reg < l.inSize(kRegister); ++reg)
    for (int lane = 0; lane < 32; ++lane)
      for (int warp = 0; warp < 4; ++warp) {
        Coord e = hwAt(l, reg, lane, warp);
        ASSERT_EQ(hwAt(t, reg, lane, warp), (Coord{e[1], e[0]}));
        ASSERT_EQ(rowMajor(hwAt(rs, reg, lane, warp), {4, 4, 64}), rowMajor(e, shape));
        ASSERT_EQ(hwAt(flat1, reg, lane, warp), (Coord{int32_t(rowMajor(e, shape))}));
        ASSERT_EQ(hwAt(x, reg, lane, warp), (Coord{e[0], 0, e[1]}));
        ASSERT_EQ(hwAt(dropDim(x, 1), reg, lane, warp), e);
      }
  LinearLayout b = broadcastSource(l, {1, 64});
  for (int reg = 0; reg < l.inSize(kRegister); ++reg)
    for (int lane = 0; lane < 32; ++lane)
      ASSERT_EQ(hwAt(b, reg, lane, 3), (Coord{0, hwAt(l, reg, lane, 3)[1]}));
  (void)fromRowMajor;
}

TEST(LinearLayout, EqualityIgnoresSizeOneInputs) {
  LinearLayout l = blockedLayout({64}, {1}, {32}, {2}, {0});
  LinearLayout withBlock = l * LinearLayout::zeros1D(1, kBlock, dimName(0));
  EXPECT_EQ(withBlock.ins().size(), l.ins().size() + 1);
  EXPECT_EQ(l, withBlock);
  EXPECT_NE(l, blockedLayout({64}, {2}, {32}, {1}, {0}));
}
