//===- MatrixOps.cpp - MFMA: the matrix cores -----------------------------===//
//
// v_mfma_f32_{32x32x8,16x16x16}_{f16,bf16} (and gfx90a's spellings, f16 and
// bf16_1k) and gfx950's {32x32x16,16x16x32} of one block, with the
// register/lane layouts of AMD's matrix instruction calculator (P = K M / 64
// elements per lane): A[i][k] in lane i + M (k / P), element k % P;
// B[k][j] in lane j + N (k / P), element k % P; D[i][j] in lane
// j + N ((i / 4) % (64 / N)), register i % 4 + 4 (i / (4 * 64 / N)).
// Each result is C plus the exact sum of the products, rounded once to f32.
// The broadcast controls (cbsz, abid, blgp) are not modeled.
//
//===----------------------------------------------------------------------===//
#include "Wave.h"

#include "../SmallFloat.h"

namespace tessel::gpusim::amdgcn {
namespace {

template <int M, int K, bool BF16>
void mfma(Wave &w, const Inst &I) {
  constexpr int N = M, Groups = 64 / M, Regs = M * N / 64, PerLane = K / Groups;
  if (I.ops.size() != 4)
    w.fail(I.op + " takes a destination and three sources");
  if (I.mods.cbsz || I.mods.abid || I.mods.blgp)
    w.fail("MFMA broadcast controls (cbsz, abid, blgp) are not modeled");
  if (w.exec != ~uint64_t(0))
    w.fail("MFMA with lanes disabled in EXEC");
  const Operand &d = I.ops[0], &a = I.ops[1], &b = I.ops[2], &c = I.ops[3];
  auto value = [](uint32_t bits) { return BF16 ? bf16ToDouble(uint16_t(bits)) : halfToDouble(uint16_t(bits)); };
  double A[M][K], B[K][N];
  for (int lane = 0; lane < 64; ++lane)
    for (int r = 0; r < PerLane; ++r) {
      uint32_t av = readLane(w, a, lane, Ty::B32, r / 2), bv = readLane(w, b, lane, Ty::B32, r / 2);
      int k = r + PerLane * (lane / M);
      A[lane % M][k] = value(av >> (16 * (r % 2)));
      B[k][lane % N] = value(bv >> (16 * (r % 2)));
    }
  uint32_t out[Regs][64];
  for (int lane = 0; lane < 64; ++lane)
    for (int r = 0; r < Regs; ++r) {
      int j = lane % N, i = r % 4 + 4 * (lane / N) + 4 * Groups * (r / 4);
      double sum = asFloat(readLane(w, c, lane, Ty::F32, (c.kind == OpKind::Int || c.kind == OpKind::Float) ? 0 : r));
      for (int k = 0; k < K; ++k)
        sum += A[i][k] * B[k][j];
      out[r][lane] = asBits(float(sum));
    }
  for (int r = 0; r < Regs; ++r)
    for (int lane = 0; lane < 64; ++lane)
      laneRef(w, d, lane, r) = out[r][lane];
}

} // namespace

void registerMatrixOps(Table &t) {
  t["v_mfma_f32_32x32x8_f16"] = mfma<32, 8, false>;
  t["v_mfma_f32_32x32x8f16"] = mfma<32, 8, false>;
  t["v_mfma_f32_32x32x8_bf16"] = mfma<32, 8, true>;
  t["v_mfma_f32_32x32x8bf16_1k"] = mfma<32, 8, true>;
  t["v_mfma_f32_16x16x16_f16"] = mfma<16, 16, false>;
  t["v_mfma_f32_16x16x16f16"] = mfma<16, 16, false>;
  t["v_mfma_f32_16x16x16_bf16"] = mfma<16, 16, true>;
  t["v_mfma_f32_16x16x16bf16_1k"] = mfma<16, 16, true>;
  // gfx950's double-K forms: eight consecutive k per lane.
  t["v_mfma_f32_32x32x16_f16"] = mfma<32, 16, false>;
  t["v_mfma_f32_32x32x16_bf16"] = mfma<32, 16, true>;
  t["v_mfma_f32_16x16x32_f16"] = mfma<16, 32, false>;
  t["v_mfma_f32_16x16x32_bf16"] = mfma<16, 32, true>;
}

} // namespace tessel::gpusim::amdgcn
