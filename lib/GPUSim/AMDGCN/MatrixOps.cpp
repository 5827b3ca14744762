//===- MatrixOps.cpp - MFMA: the matrix cores -----------------------------===//
//
// The single-block MFMAs: v_mfma_f32_{32x32x8,16x16x16}_{f16,bf16} (and
// gfx90a's spellings, f16 and bf16_1k) and gfx950's {32x32x16,16x16x32};
// v_mfma_f32_{32x32x2,16x16x4}_f32; v_mfma_i32_{32x32x8,16x16x16}_i8
// (gfx90a), {32x32x16,16x16x32}_i8 (CDNA3) and {32x32x32,16x16x64}_i8
// (gfx950); v_mfma_f32_{32x32x16,16x16x32}_{fp8,bf8}_{fp8,bf8}, whose
// 8-bit floats are e4m3 (fp8) and e5m2 (bf8) in gfx942's fnuz formats (biases
// 8 and 16, 0x80 the NaN, no infinities) and gfx950's OCP ones (e4m3fn,
// e5m2); gfx950's v_mfma_f32_{32x32x64,16x16x128}_f8f6f4 with 8-bit
// operands (cbsz and blgp name A's and B's format: 0 e4m3, 1 e5m2). They
// have the register/lane layouts of AMD's matrix instruction
// calculator (P = K M / 64 elements per lane, packed low first in
// registers): A[i][k] in lane i + M (k / P), element k % P; B[k][j] in lane
// j + N (k / P), element k % P; D[i][j] in lane j + N ((i / 4) % (64 / N)),
// register i % 4 + 4 (i / (4 * 64 / N)). A float result is C plus the exact
// sum of the products, rounded once to f32; an int8 one is C plus the sum
// of the signed products, modulo 2^32. The broadcast controls (cbsz, abid,
// blgp) are not modeled. v_mfma_f64_16x16x4_f64 has layouts of its own
// (mfmaF64).
//
//===----------------------------------------------------------------------===//
#include "Wave.h"

#include "../SmallFloat.h"

#include <cmath>

namespace tessel::gpusim::amdgcn {
namespace {

enum class Elt { F16, BF16, F32, I8, FP8, BF8, F8F6F4 };

/// What every MFMA the simulator models needs: a destination and three
/// sources, every lane of the wave on.
void checkMfmaForm(Wave &w, const Inst &I) {
  if (I.ops.size() != 4)
    w.fail(I.op + " takes a destination and three sources");
  if (w.exec != ~uint64_t(0))
    w.fail("MFMA with lanes disabled in EXEC");
}

template <int M, int K, Elt E, Elt EB = E>
void mfma(Wave &w, const Inst &I) {
  constexpr int N = M, Groups = 64 / M, Regs = M * N / 64, PerLane = K / Groups;
  constexpr bool Byte = E == Elt::I8 || E == Elt::FP8 || E == Elt::BF8 || E == Elt::F8F6F4;
  constexpr int Bits = E == Elt::F32 ? 32 : Byte ? 8 : 16, PerReg = 32 / Bits;
  checkMfmaForm(w, I);
  Elt ea = E, eb = EB;
  if (E == Elt::F8F6F4) {
    // gfx950's f8f6f4: cbsz names A's format, blgp B's (0 e4m3, 1 e5m2, 2
    // and 3 the 6-bit floats, 4 e2m1).
    auto format = [&](uint8_t f) {
      if (f > 1)
        w.fail(I.op + ": only its 8-bit formats (cbsz and blgp 0 or 1) are modeled");
      return f ? Elt::BF8 : Elt::FP8;
    };
    ea = format(I.mods.cbsz);
    eb = format(I.mods.blgp);
  } else if (I.mods.cbsz || I.mods.abid || I.mods.blgp) {
    w.fail("MFMA broadcast controls (cbsz, abid, blgp) are not modeled");
  }
  const Operand &d = I.ops[0], &a = I.ops[1], &b = I.ops[2], &c = I.ops[3];
  // 8-bit floats: gfx942's fnuz formats, gfx950's OCP ones.
  bool fnuz = w.kernel && w.kernel->target != "gfx950";
  auto value = [&](uint32_t bits, Elt e) -> double {
    switch (e) {
    case Elt::F16: return halfToDouble(uint16_t(bits));
    case Elt::BF16: return bf16ToDouble(uint16_t(bits));
    case Elt::F32: return double(asFloat(bits));
    case Elt::I8: return double(int8_t(uint8_t(bits)));
    case Elt::FP8: return fp8Value(bits, false, fnuz);
    case Elt::BF8: return fp8Value(bits, true, fnuz);
    case Elt::F8F6F4: break; // resolved to FP8 or BF8 above
    }
    return 0;
  };
  double A[M][K], B[K][N];
  for (int lane = 0; lane < 64; ++lane)
    for (int r = 0; r < PerLane; ++r) {
      uint32_t av = readLane(w, a, lane, Ty::B32, r / PerReg), bv = readLane(w, b, lane, Ty::B32, r / PerReg);
      int k = r + PerLane * (lane / M), shift = Bits * (r % PerReg);
      A[lane % M][k] = value(Bits == 32 ? av : av >> shift, ea);
      B[k][lane % N] = value(Bits == 32 ? bv : bv >> shift, eb);
    }
  bool scalarC = c.kind == OpKind::Int || c.kind == OpKind::Float;
  uint32_t out[Regs][64];
  for (int lane = 0; lane < 64; ++lane)
    for (int r = 0; r < Regs; ++r) {
      int j = lane % N, i = r % 4 + 4 * (lane / N) + 4 * Groups * (r / 4);
      uint32_t cv = readLane(w, c, lane, E == Elt::I8 ? Ty::B32 : Ty::F32, scalarC ? 0 : r);
      if (E == Elt::I8) {
        int64_t sum = int32_t(cv); // products of int8 are exact in doubles
        for (int k = 0; k < K; ++k)
          sum += int64_t(A[i][k] * B[k][j]);
        out[r][lane] = uint32_t(uint64_t(sum));
      } else {
        double sum = asFloat(cv);
        for (int k = 0; k < K; ++k)
          sum += A[i][k] * B[k][j];
        out[r][lane] = asBits(float(sum));
      }
    }
  for (int r = 0; r < Regs; ++r)
    for (int lane = 0; lane < 64; ++lane)
      laneRef(w, d, lane, r) = out[r][lane];
}

/// v_mfma_f64_16x16x4_f64 (gfx90a: v_mfma_f64_16x16x4f64), by the
/// calculator's 64-bit layouts: one f64 per lane in a register pair, A[i][k]
/// in lane i + 16 k, B[k][j] in lane j + 16 k; D[i][j] in lane j + 16 (i % 4),
/// register pair i / 4 (one row per pair, where 32-bit results take four).
/// Each result is C plus the products in the order of k, each through a
/// fused multiply-add: AMD does not document the order and rounding of the
/// f64 MFMA, and a test's tolerance covers either.
void mfmaF64(Wave &w, const Inst &I) {
  checkMfmaForm(w, I);
  if (I.mods.cbsz || I.mods.abid || I.mods.blgp)
    w.fail("MFMA broadcast controls (cbsz, abid, blgp) are not modeled");
  const Operand &d = I.ops[0], &a = I.ops[1], &b = I.ops[2], &c = I.ops[3];
  auto pairAt = [&](const Operand &o, int lane, int pair) {
    return asDouble(uint64_t(readLane(w, o, lane, Ty::B32, 2 * pair)) |
                    uint64_t(readLane(w, o, lane, Ty::B32, 2 * pair + 1)) << 32);
  };
  double A[16][4], B[4][16];
  for (int lane = 0; lane < 64; ++lane) {
    A[lane % 16][lane / 16] = pairAt(a, lane, 0);
    B[lane / 16][lane % 16] = pairAt(b, lane, 0);
  }
  bool scalarC = c.kind == OpKind::Int || c.kind == OpKind::Float;
  uint32_t out[8][64];
  for (int lane = 0; lane < 64; ++lane)
    for (int p = 0; p < 4; ++p) {
      int i = 4 * p + lane / 16, j = lane % 16;
      double sum = scalarC ? asDouble(readLane64(w, c, lane, Ty::F64))
                           : pairAt(c, lane, p);
      for (int k = 0; k < 4; ++k)
        sum = std::fma(A[i][k], B[k][j], sum);
      uint64_t bits = asBits64(sum);
      out[2 * p][lane] = uint32_t(bits);
      out[2 * p + 1][lane] = uint32_t(bits >> 32);
    }
  for (int r = 0; r < 8; ++r)
    for (int lane = 0; lane < 64; ++lane)
      laneRef(w, d, lane, r) = out[r][lane];
}

} // namespace

void registerMatrixOps(Table &t) {
  t["v_mfma_f32_32x32x8_f16"] = mfma<32, 8, Elt::F16>;
  t["v_mfma_f32_32x32x8f16"] = mfma<32, 8, Elt::F16>;
  t["v_mfma_f32_32x32x8_bf16"] = mfma<32, 8, Elt::BF16>;
  t["v_mfma_f32_32x32x8bf16_1k"] = mfma<32, 8, Elt::BF16>;
  t["v_mfma_f32_16x16x16_f16"] = mfma<16, 16, Elt::F16>;
  t["v_mfma_f32_16x16x16f16"] = mfma<16, 16, Elt::F16>;
  t["v_mfma_f32_16x16x16_bf16"] = mfma<16, 16, Elt::BF16>;
  t["v_mfma_f32_16x16x16bf16_1k"] = mfma<16, 16, Elt::BF16>;
  // gfx950's double-K forms: eight consecutive k per lane.
  t["v_mfma_f32_32x32x16_f16"] = mfma<32, 16, Elt::F16>;
  t["v_mfma_f32_32x32x16_bf16"] = mfma<32, 16, Elt::BF16>;
  t["v_mfma_f32_16x16x32_f16"] = mfma<16, 32, Elt::F16>;
  t["v_mfma_f32_16x16x32_bf16"] = mfma<16, 32, Elt::BF16>;
  // fp32 (gfx90a's spelling, then CDNA3's).
  t["v_mfma_f32_32x32x2f32"] = mfma<32, 2, Elt::F32>;
  t["v_mfma_f32_32x32x2_f32"] = mfma<32, 2, Elt::F32>;
  t["v_mfma_f32_16x16x4f32"] = mfma<16, 4, Elt::F32>;
  t["v_mfma_f32_16x16x4_f32"] = mfma<16, 4, Elt::F32>;
  // int8: gfx90a's four per lane, CDNA3's eight, gfx950's sixteen.
  t["v_mfma_i32_32x32x8i8"] = mfma<32, 8, Elt::I8>;
  t["v_mfma_i32_16x16x16i8"] = mfma<16, 16, Elt::I8>;
  t["v_mfma_i32_32x32x16_i8"] = mfma<32, 16, Elt::I8>;
  t["v_mfma_i32_16x16x32_i8"] = mfma<16, 32, Elt::I8>;
  t["v_mfma_i32_32x32x32_i8"] = mfma<32, 32, Elt::I8>;
  t["v_mfma_i32_16x16x64_i8"] = mfma<16, 64, Elt::I8>;
  // 8-bit floats (CDNA3 on): A's format, then B's.
  t["v_mfma_f32_32x32x16_fp8_fp8"] = mfma<32, 16, Elt::FP8, Elt::FP8>;
  t["v_mfma_f32_32x32x16_fp8_bf8"] = mfma<32, 16, Elt::FP8, Elt::BF8>;
  t["v_mfma_f32_32x32x16_bf8_fp8"] = mfma<32, 16, Elt::BF8, Elt::FP8>;
  t["v_mfma_f32_32x32x16_bf8_bf8"] = mfma<32, 16, Elt::BF8, Elt::BF8>;
  t["v_mfma_f32_16x16x32_fp8_fp8"] = mfma<16, 32, Elt::FP8, Elt::FP8>;
  t["v_mfma_f32_16x16x32_fp8_bf8"] = mfma<16, 32, Elt::FP8, Elt::BF8>;
  t["v_mfma_f32_16x16x32_bf8_fp8"] = mfma<16, 32, Elt::BF8, Elt::FP8>;
  t["v_mfma_f32_16x16x32_bf8_bf8"] = mfma<16, 32, Elt::BF8, Elt::BF8>;
  // gfx950's: each operand's format from cbsz / blgp, 32 per lane.
  t["v_mfma_f32_32x32x64_f8f6f4"] = mfma<32, 64, Elt::F8F6F4>;
  t["v_mfma_f32_16x16x128_f8f6f4"] = mfma<16, 128, Elt::F8F6F4>;
  // fp64 (gfx90a's spelling, then CDNA3's).
  t["v_mfma_f64_16x16x4f64"] = mfmaF64;
  t["v_mfma_f64_16x16x4_f64"] = mfmaF64;
}

} // namespace tessel::gpusim::amdgcn
