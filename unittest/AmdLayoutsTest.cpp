//===- AmdLayoutsTest.cpp - MFMA layouts against AMD's tables ------------===//
//
// Every register of every lane of every wave of the MFMA layouts, against
// the register/lane tables of AMD's matrix instruction calculator for
// v_mfma_f32_32x32x8f16 (CDNA2/3): A[i][k] sits in lane i + 32 (k / 4),
// register k % 4; B[k][j] in lane j + 32 (k / 4), register k % 4; D[i][j]
// in lane j + 32 ((i / 4) % 2), register i % 4 + 4 (i / 8). The 16x16
// instructions and the 64-bit results of v_mfma_f64_16x16x4_f64 below.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/TileGPU/IR/AmdLayouts.h"
#include "tessel/Dialect/TileGPU/IR/LinearLayout.h"

#include <gtest/gtest.h>

using namespace tessel::gpu;

namespace {

using Coord = std::vector<int32_t>;

const Coord kWaves[] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 1},
                        {1, 4}, {4, 2}, {2, 4}, {8, 2}};
const Coord kShapes[] = {{32, 32}, {64, 32}, {32, 64}, {64, 64},
                         {128, 64}, {64, 128}, {256, 128}};

TEST(AmdLayouts, MfmaAccumulatorIsTheCalculatorsDMatrix) {
  for (const Coord &waves : kWaves)
    for (const Coord &shape : kShapes) {
      if (shape[0] < 32 * waves[0] || shape[1] < 32 * waves[1])
        continue;
      LinearLayout l = mfmaAccumulatorLayout(shape, waves);
      EXPECT_TRUE(l.isInvertible()) << l.str();
      ASSERT_EQ(l.inSize(kLane), 64);
      int repN = shape[1] / (32 * waves[1]);
      for (int wave = 0; wave < waves[0] * waves[1]; ++wave)
        for (int lane = 0; lane < 64; ++lane)
          for (int reg = 0; reg < l.inSize(kRegister); ++reg) {
            int r = reg % 16, rep = reg / 16;
            int wn = wave % waves[1], wm = wave / waves[1];
            int rn = rep % repN, rm = rep / repN;
            int row = r % 4 + 4 * (lane / 32) + 8 * (r / 4) +
                      32 * (wm + waves[0] * rm);
            int col = lane % 32 + 32 * (wn + waves[1] * rn);
            Coord got = l.apply({{kRegister, reg}, {kLane, lane}, {kWarp, wave}});
            ASSERT_EQ(got, (Coord{row, col}))
                << "wave " << wave << " lane " << lane << " reg " << reg;
          }
    }
}

// The instruction run with its operands' registers swapped computes D^T:
// D[i][j] sits where the table puts D^T[j][i], lane i + 32 ((j / 4) % 2),
// register j % 4 + 4 (j / 8).
TEST(AmdLayouts, TransposedMfmaAccumulatorIsTheCalculatorsDTransposed) {
  for (const Coord &waves : kWaves)
    for (const Coord &shape : kShapes) {
      if (shape[0] < 32 * waves[0] || shape[1] < 32 * waves[1])
        continue;
      LinearLayout l = mfmaAccumulatorLayout(shape, waves, true);
      EXPECT_TRUE(l.isInvertible()) << l.str();
      int repN = shape[1] / (32 * waves[1]);
      for (int wave = 0; wave < waves[0] * waves[1]; ++wave)
        for (int lane = 0; lane < 64; ++lane)
          for (int reg = 0; reg < l.inSize(kRegister); ++reg) {
            int r = reg % 16, rep = reg / 16;
            int wn = wave % waves[1], wm = wave / waves[1];
            int rn = rep % repN, rm = rep / repN;
            int row = lane % 32 + 32 * (wm + waves[0] * rm);
            int col = r % 4 + 4 * (lane / 32) + 8 * (r / 4) +
                      32 * (wn + waves[1] * rn);
            Coord got = l.apply({{kRegister, reg}, {kLane, lane}, {kWarp, wave}});
            ASSERT_EQ(got, (Coord{row, col}))
                << "wave " << wave << " lane " << lane << " reg " << reg;
          }
      auto split = mfmaAccumulatorWarps(l, shape, true);
      ASSERT_TRUE(split.has_value());
      EXPECT_EQ(*split, waves);
      EXPECT_FALSE(mfmaAccumulatorWarps(l, shape, false).has_value());
    }
}

// A transposed M x K accumulator whose waves all split M (N waves beyond
// its 32 columns hold copies) is the A operand of a dot on the same waves:
// chained dots keep the scores in place. Waves that split K are not.
TEST(AmdLayouts, TransposedAccumulatorIsTheNextDotsAOperand) {
  for (int32_t wm : {1, 2, 4})
    for (int32_t wn : {1, 2})
      for (int32_t k : {32, 64}) {
        int32_t m = 32 * wm;
        bool same = mfmaAccumulatorLayout({m, k}, {wm, wn}, true) ==
                    mfmaOperandLayout(0, {m, k}, {wm, wn});
        EXPECT_EQ(same, wn == 1 || k == 32) << wm << " " << wn << " " << k;
      }
}

// For every 32x32 MFMA (P elements of K per lane: 4 for 32x32x8 f16/bf16, 1
// for 32x32x2 f32, 2 for 32x32x4 xf32, 4 and 8 for 32x32x8 and 32x32x16
// int8), the calculator's A[i][k] sits in lane i + 32 ((k / P) % 2),
// element k % P of the K step k / 2P; B[k][j] in lane j + 32 ((k / P) % 2).
TEST(AmdLayouts, MfmaOperandsAreTheCalculatorsAAndBMatrices) {
  for (int32_t p : {1, 2, 4, 8})
    for (const Coord &waves : kWaves)
      for (int32_t mn : {32, 64, 128})
        for (int32_t k : {16, 32}) {
          if (mn < 32 * waves[0] || mn < 32 * waves[1])
            continue;
          LinearLayout a = mfmaOperandLayout(0, {mn, k}, waves, p);
          LinearLayout b = mfmaOperandLayout(1, {k, mn}, waves, p);
          int steps = k / (2 * p);
          for (int wave = 0; wave < waves[0] * waves[1]; ++wave)
            for (int lane = 0; lane < 64; ++lane)
              for (int reg = 0; reg < a.inSize(kRegister); ++reg) {
                int j = reg % p, step = reg / p % steps, rep = reg / p / steps;
                int kk = j + p * (lane / 32) + 2 * p * step;
                int wm = wave / waves[1], wn = wave % waves[1];
                int row = lane % 32 + 32 * (wm + waves[0] * rep);
                ASSERT_EQ(a.apply({{kRegister, reg}, {kLane, lane}, {kWarp, wave}}),
                          (Coord{row, kk}))
                    << "P " << p << " A wave " << wave << " lane " << lane
                    << " reg " << reg;
                if (reg >= b.inSize(kRegister))
                  continue;
                int col = lane % 32 + 32 * (wn + waves[1] * rep);
                ASSERT_EQ(b.apply({{kRegister, reg}, {kLane, lane}, {kWarp, wave}}),
                          (Coord{kk, col}))
                    << "P " << p << " B wave " << wave << " lane " << lane
                    << " reg " << reg;
              }
        }
}

// The 16x16 instructions (v_mfma_f32_16x16x16f16, 16x16x4f32,
// 16x16x16i8, ...): D[i][j] in lane j + 16 (i / 4), register i % 4 (and
// transposed, D[i][j] where the table puts D^T[j][i]); A[i][k] in lane
// i + 16 ((k / P) % 4), element k % P of the K step k / 4P; B[k][j] in lane
// j + 16 ((k / P) % 4).
/// The 16x16 accumulator layouts (32-bit results, or `doubles`) of every
/// wave split and shape, transposed or not, against `across(r, lane)`: the
/// row (the column, transposed) the table puts in register r of the lane's
/// 16x16 tile; its column (row) is lane % 16.
template <typename Across>
void expectSixteenBySixteenAccumulators(bool doubles, Across across) {
  for (const Coord &waves : kWaves)
    for (const Coord &shape : {Coord{16, 16}, Coord{32, 16}, Coord{16, 64},
                               Coord{64, 64}, Coord{128, 32}}) {
      if (shape[0] < 16 * waves[0] || shape[1] < 16 * waves[1])
        continue;
      for (bool transposed : {false, true}) {
        LinearLayout l =
            mfmaAccumulatorLayout(shape, waves, transposed, 16, doubles);
        EXPECT_TRUE(l.isInvertible()) << l.str();
        int repN = shape[1] / (16 * waves[1]);
        for (int wave = 0; wave < waves[0] * waves[1]; ++wave)
          for (int lane = 0; lane < 64; ++lane)
            for (int reg = 0; reg < l.inSize(kRegister); ++reg) {
              int r = reg % 4, rep = reg / 4;
              int wn = wave % waves[1], wm = wave / waves[1];
              int rn = rep % repN, rm = rep / repN;
              int a = across(r, lane), along = lane % 16;
              int row = (transposed ? along : a) + 16 * (wm + waves[0] * rm);
              int col = (transposed ? a : along) + 16 * (wn + waves[1] * rn);
              ASSERT_EQ(l.apply({{kRegister, reg}, {kLane, lane}, {kWarp, wave}}),
                        (Coord{row, col}))
                  << "doubles " << doubles << " transposed " << transposed
                  << " wave " << wave << " lane " << lane << " reg " << reg;
            }
        auto split = mfmaAccumulatorWarps(l, shape, transposed, 16, doubles);
        ASSERT_TRUE(split.has_value());
        EXPECT_EQ(*split, waves);
        // Not the other results' layout, nor the other orientation.
        EXPECT_FALSE(mfmaAccumulatorWarps(l, shape, transposed, 16, !doubles));
        if (doubles)
          EXPECT_FALSE(mfmaAccumulatorWarps(l, shape, !transposed, 16, true));
      }
    }
}

TEST(AmdLayouts, SixteenBySixteenMfmaLayoutsAreTheCalculators) {
  expectSixteenBySixteenAccumulators(
      false, [](int r, int lane) { return r + 4 * (lane / 16); });
  for (int32_t p : {1, 4, 8})
    for (const Coord &waves : {Coord{1, 1}, Coord{2, 2}, Coord{4, 1}})
      for (int32_t k : {16 * p / (p == 1 ? 2 : 1), 64}) {
        if (k % (4 * p))
          continue;
        int32_t mn = 64;
        LinearLayout a = mfmaOperandLayout(0, {mn, k}, waves, p, 16);
        LinearLayout b = mfmaOperandLayout(1, {k, mn}, waves, p, 16);
        int steps = k / (4 * p);
        for (int wave = 0; wave < waves[0] * waves[1]; ++wave)
          for (int lane = 0; lane < 64; ++lane)
            for (int reg = 0; reg < a.inSize(kRegister); ++reg) {
              int j = reg % p, step = reg / p % steps, rep = reg / p / steps;
              int kk = j + p * (lane / 16) + 4 * p * step;
              int wm = wave / waves[1], wn = wave % waves[1];
              int row = lane % 16 + 16 * (wm + waves[0] * rep);
              ASSERT_EQ(a.apply({{kRegister, reg}, {kLane, lane}, {kWarp, wave}}),
                        (Coord{row, kk}))
                  << "P " << p << " A wave " << wave << " lane " << lane
                  << " reg " << reg;
              if (reg >= b.inSize(kRegister))
                continue;
              int col = lane % 16 + 16 * (wn + waves[1] * rep);
              ASSERT_EQ(b.apply({{kRegister, reg}, {kLane, lane}, {kWarp, wave}}),
                        (Coord{kk, col}))
                  << "P " << p << " B wave " << wave << " lane " << lane
                  << " reg " << reg;
            }
      }
}

// v_mfma_f64_16x16x4_f64's 64-bit results, by the calculator's 64-bit
// output layout (one row per register pair): D[i][j] in lane
// j + 16 (i % 4), register pair i / 4; transposed, where the table puts
// D^T[j][i]. Its operands are the 16x16 layouts with P = 1 (above):
// A[i][k] in lane i + 16 k, B[k][j] in lane j + 16 k.
TEST(AmdLayouts, SixtyFourBitMfmaAccumulatorIsTheCalculators) {
  // The table: D[i][j] at pair i / 4, lane j + 16 (i % 4).
  expectSixteenBySixteenAccumulators(
      true, [](int r, int lane) { return 4 * r + lane / 16; });
  EXPECT_THROW(mfmaAccumulatorLayout({32, 32}, {1, 1}, false, 32, true),
               std::invalid_argument);
}

TEST(AmdLayouts, MfmaAccumulatorWarpsRecoversTheSplit) {
  for (const Coord &waves : kWaves) {
    Coord shape{256, 128};
    auto got = mfmaAccumulatorWarps(mfmaAccumulatorLayout(shape, waves), shape);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, waves);
  }
  EXPECT_FALSE(mfmaAccumulatorWarps(
      defaultBlockedLayout({64, 64}, 4, 64, 4, std::nullopt), {64, 64}));
  EXPECT_FALSE(mfmaAccumulatorWarps(mfmaAccumulatorLayout({32, 32}, {1, 1}),
                                    {16, 32}));
}

} // namespace
