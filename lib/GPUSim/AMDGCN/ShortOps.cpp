//===- ShortOps.cpp - VALU on 16-bit integers and halves, mixed precision -===//
//
// 16-bit results go to the low half of the destination with the high half
// zeroed, as gfx9 writes them (SDWA selects otherwise). f16 arithmetic is
// computed in double and rounded once. v_fma_mix* take each source as f32 or
// as the f16 half op_sel names (op_sel_hi set: f16), and v_dot4c_i32_i8
// accumulates four int8 products into its destination.
//
//===----------------------------------------------------------------------===//
#include "Lanes.h"

#include <algorithm>

namespace tessel::gpusim::amdgcn {
namespace {

#define V1(NAME, ...) t[NAME] = [](Wave &w, const Inst &I) { each(w, I, 0, 1, [&](const Src &s) -> uint32_t { __VA_ARGS__ }); }

uint32_t half(double v) { return roundToSmallFloat(v, 5, 10, Rounding::RN, false); }

uint16_t u16(const Src &s, size_t i) { return uint16_t(s.bits(i, Ty::B32)); }
int16_t i16(const Src &s, size_t i) { return int16_t(s.bits(i, Ty::B32)); }

/// Source i of a mixed-precision fma: f16 (the half op_sel picks) when
/// op_sel_hi's bit is set, else f32; then abs and neg.
double mixSource(const Src &s, size_t i) {
  const Operand &o = op(s.w, s.I, i);
  unsigned bit = unsigned(i - 1);
  double v;
  if (s.I.mods.opSelHiGiven && ((s.I.mods.opSelHi >> bit) & 1)) {
    uint32_t bits = readLane(s.w, o, s.lane, Ty::F16);
    v = halfToDouble(uint16_t((s.I.mods.opSel >> bit) & 1 ? bits >> 16 : bits));
  } else {
    v = asFloat(readLane(s.w, o, s.lane, Ty::F32));
  }
  if (o.abs) v = std::fabs(v);
  if (o.neg) v = -v;
  return v;
}

/// The fma rounded once to f32 (every source, f16 or f32, is exact as f32).
float fmaMix(const Src &s) {
  return std::fma(float(mixSource(s, 1)), float(mixSource(s, 2)), float(mixSource(s, 3)));
}

/// Packed operand i's half `h` (0 low, 1 high) as VOP3P picks it: op_sel
/// (low result) or op_sel_hi (high result) chooses the source half; `ty`
/// reads inline constants as f16 or as integers.
uint16_t packedBits(const Src &s, size_t i, int h, Ty ty = Ty::B32) {
  uint32_t bits = readLane(s.w, op(s.w, s.I, i), s.lane, ty);
  bool upper = ((h ? s.I.mods.opSelHi : s.I.mods.opSel) >> (i - 1)) & 1;
  return uint16_t(upper ? bits >> 16 : bits);
}

/// Packed f16 operand i's half `h`, negated by neg_lo / neg_hi (float
/// modifiers, which integer sources ignore).
double packedHalf(const Src &s, size_t i, int h) {
  double v = halfToDouble(packedBits(s, i, h, Ty::F16));
  if (((h ? s.I.mods.negHi : s.I.mods.negLo) >> (i - 1)) & 1)
    v = -v;
  return v;
}

/// A packed 16-bit integer operation of `n` sources: f on each half's
/// sources (as unsigned 16-bit values widened to 32), its result's low 16
/// bits to that half.
template <int N, typename F> uint32_t packedInt(const Src &s, F f) {
  uint32_t r = 0;
  for (int h = 0; h < 2; ++h) {
    uint32_t v[3] = {0, 0, 0};
    for (int i = 0; i < N; ++i)
      v[i] = packedBits(s, size_t(i + 1), h);
    r |= uint32_t(uint16_t(f(v[0], v[1], v[2]))) << (16 * h);
  }
  return r;
}

/// A 16-bit result, saturated to the signed or unsigned range when the
/// instruction clamps, else wrapped.
uint16_t clampedU16(const Src &s, int64_t v) {
  return s.I.mods.clamp ? uint16_t(std::clamp<int64_t>(v, 0, 0xffff)) : uint16_t(v);
}
uint16_t clampedI16(const Src &s, int64_t v) {
  return s.I.mods.clamp ? uint16_t(int16_t(std::clamp<int64_t>(v, -0x8000, 0x7fff))) : uint16_t(v);
}

/// A packed f16 operation: f on each half, each result rounded once (sums,
/// products, max and min of halves are exact in double).
template <typename F> uint32_t packedF16(const Src &s, F f) {
  uint32_t r = 0;
  for (int h = 0; h < 2; ++h)
    r |= half(f(packedHalf(s, 1, h), packedHalf(s, 2, h))) << (16 * h);
  return r;
}

} // namespace

void registerShortOps(Table &t) {
  V1("v_pk_add_f16", return packedF16(s, [](double a, double b) { return a + b; }););
  V1("v_pk_mul_f16", return packedF16(s, [](double a, double b) { return a * b; }););
  V1("v_pk_max_f16", return packedF16(s, [](double a, double b) { return maxNum(a, b); }););
  V1("v_pk_min_f16", return packedF16(s, [](double a, double b) { return minNum(a, b); }););
  V1("v_pk_fma_f16", uint32_t r = 0;
     for (int h = 0; h < 2; ++h)
       r |= half(std::fma(packedHalf(s, 1, h), packedHalf(s, 2, h), packedHalf(s, 3, h))) << (16 * h);
     return r;);
  // Packed 16-bit integers (the SLP vectorizer pairs i16 operations).
  V1("v_pk_add_u16", return packedInt<2>(s, [&](uint32_t a, uint32_t b, uint32_t) { return clampedU16(s, int64_t(a) + b); }););
  V1("v_pk_sub_u16", return packedInt<2>(s, [&](uint32_t a, uint32_t b, uint32_t) { return clampedU16(s, int64_t(a) - int64_t(b)); }););
  V1("v_pk_add_i16", return packedInt<2>(s, [&](uint32_t a, uint32_t b, uint32_t) {
       return clampedI16(s, int64_t(int16_t(a)) + int64_t(int16_t(b))); }););
  V1("v_pk_sub_i16", return packedInt<2>(s, [&](uint32_t a, uint32_t b, uint32_t) {
       return clampedI16(s, int64_t(int16_t(a)) - int64_t(int16_t(b))); }););
  V1("v_pk_mul_lo_u16", return packedInt<2>(s, [](uint32_t a, uint32_t b, uint32_t) { return a * b; }););
  V1("v_pk_mad_u16", return packedInt<3>(s, [&](uint32_t a, uint32_t b, uint32_t c) {
       return clampedU16(s, int64_t(a) * int64_t(b) + int64_t(c)); }););
  V1("v_pk_mad_i16", return packedInt<3>(s, [&](uint32_t a, uint32_t b, uint32_t c) {
       return clampedI16(s, int64_t(int16_t(a)) * int64_t(int16_t(b)) + int64_t(int16_t(c))); }););
  V1("v_pk_lshlrev_b16", return packedInt<2>(s, [](uint32_t a, uint32_t b, uint32_t) { return b << (a & 15); }););
  V1("v_pk_lshrrev_b16", return packedInt<2>(s, [](uint32_t a, uint32_t b, uint32_t) { return b >> (a & 15); }););
  V1("v_pk_ashrrev_i16", return packedInt<2>(s, [](uint32_t a, uint32_t b, uint32_t) {
       return uint32_t(int32_t(int16_t(b)) >> (a & 15)); }););
  V1("v_pk_max_u16", return packedInt<2>(s, [](uint32_t a, uint32_t b, uint32_t) { return std::max(a, b); }););
  V1("v_pk_min_u16", return packedInt<2>(s, [](uint32_t a, uint32_t b, uint32_t) { return std::min(a, b); }););
  V1("v_pk_max_i16", return packedInt<2>(s, [](uint32_t a, uint32_t b, uint32_t) {
       return uint32_t(std::max(int16_t(a), int16_t(b))); }););
  V1("v_pk_min_i16", return packedInt<2>(s, [](uint32_t a, uint32_t b, uint32_t) {
       return uint32_t(std::min(int16_t(a), int16_t(b))); }););
  t["v_cmp_class_f16"] = [](Wave &w, const Inst &I) {
    compareLanes(w, I, [](const Src &s) {
      uint16_t h = uint16_t(s.raw(1, Ty::F16));
      double d = halfToDouble(h);
      if (op(s.w, s.I, 1).abs) d = std::fabs(d);
      if (op(s.w, s.I, 1).neg) d = -d;
      bool neg = std::signbit(d);
      int k = std::isnan(d) ? ((h & 0x200) ? 1 : 0) : std::isinf(d) ? (neg ? 2 : 9) : d == 0 ? (neg ? 5 : 6)
              : std::fabs(d) < 0x1p-14 ? (neg ? 4 : 7) : (neg ? 3 : 8);
      return ((s.bits(2, Ty::B32) >> k) & 1) != 0;
    }, false);
  };
  V1("v_add_u16", uint32_t r = uint32_t(u16(s, 1)) + u16(s, 2);
     return s.I.mods.clamp && r > 0xffff ? 0xffffu : uint16_t(r););
  V1("v_sub_u16", uint32_t a = u16(s, 1), b = u16(s, 2);
     return s.I.mods.clamp && b > a ? 0u : uint16_t(a - b););
  V1("v_subrev_u16", return uint16_t(u16(s, 2) - u16(s, 1)););
  V1("v_mul_lo_u16", return uint16_t(u16(s, 1) * u16(s, 2)););
  // gfx950's three-input bit function of 16-bit sources (bitop3: the truth
  // table, bit 4a + 2b + c), as v_bitop3_b32.
  V1("v_bitop3_b16", uint16_t a = u16(s, 1), b = u16(s, 2), c = u16(s, 3), r = 0;
     for (int i = 0; i < 8; ++i)
       if ((s.I.mods.bitop3 >> i) & 1)
         r |= ((i & 4) ? a : ~a) & ((i & 2) ? b : ~b) & ((i & 1) ? c : ~c);
     return r;);
  V1("v_mad_u16", return uint16_t(u16(s, 1) * u16(s, 2) + u16(s, 3)););
  V1("v_mad_legacy_u16", return uint16_t(u16(s, 1) * u16(s, 2) + u16(s, 3)););
  V1("v_max_u16", return std::max(u16(s, 1), u16(s, 2)););
  V1("v_min_u16", return std::min(u16(s, 1), u16(s, 2)););
  V1("v_max_i16", return uint16_t(std::max(i16(s, 1), i16(s, 2))););
  V1("v_min_i16", return uint16_t(std::min(i16(s, 1), i16(s, 2))););
  V1("v_lshrrev_b16", return uint16_t(u16(s, 2) >> (u16(s, 1) & 15)););
  V1("v_ashrrev_i16", return uint16_t(i16(s, 2) >> (u16(s, 1) & 15)););
  V1("v_sub_f16", return half(s.f16(1) - s.f16(2)););
  V1("v_subrev_f16", return half(s.f16(2) - s.f16(1)););
  V1("v_max_f16", return half(maxNum(s.f16(1), s.f16(2))););
  V1("v_min_f16", return half(minNum(s.f16(1), s.f16(2))););
  V1("v_max3_i16", return uint16_t(std::max({i16(s, 1), i16(s, 2), i16(s, 3)})););
  V1("v_min3_i16", return uint16_t(std::min({i16(s, 1), i16(s, 2), i16(s, 3)})););
  V1("v_max3_u16", return std::max({u16(s, 1), u16(s, 2), u16(s, 3)}););
  V1("v_min3_u16", return std::min({u16(s, 1), u16(s, 2), u16(s, 3)}););
  V1("v_med3_i16", int16_t a = i16(s, 1), b = i16(s, 2), c = i16(s, 3);
     return uint16_t(std::max(std::min(a, b), std::min(std::max(a, b), c))););
  V1("v_med3_u16", uint16_t a = u16(s, 1), b = u16(s, 2), c = u16(s, 3);
     return std::max(std::min(a, b), std::min(std::max(a, b), c)););
  V1("v_med3_f16", double a = s.f16(1), b = s.f16(2), c = s.f16(3);
     return half(maxNum(minNum(a, b), minNum(maxNum(a, b), c))););
  V1("v_ceil_f16", return half(std::ceil(s.f16(1))););
  V1("v_floor_f16", return half(std::floor(s.f16(1))););
  V1("v_trunc_f16", return half(std::trunc(s.f16(1))););
  V1("v_rndne_f16", return half(std::nearbyint(s.f16(1))););
  V1("v_fract_f16", double x = s.f16(1); return half(std::fmin(x - std::floor(x), 0x1.ffcp-1)););
  V1("v_sqrt_f16", return half(std::sqrt(s.f16(1))););
  V1("v_rcp_f16", return half(1.0 / s.f16(1)););
  V1("v_rsq_f16", return half(1.0 / std::sqrt(s.f16(1))););
  V1("v_exp_f16", return half(std::exp2(s.f16(1))););
  V1("v_log_f16", return half(std::log2(s.f16(1))););
  V1("v_ldexp_f16", return half(std::ldexp(s.f16(1), int16_t(s.bits(2, Ty::B32)))););
  V1("v_fmac_f16", return half(std::fma(s.f16(1), s.f16(2), halfToDouble(uint16_t(readLane(s.w, op(s.w, s.I, 0), s.lane, Ty::F16))))););
  V1("v_max3_f16", return half(maxNum(maxNum(s.f16(1), s.f16(2)), s.f16(3))););
  V1("v_min3_f16", return half(minNum(minNum(s.f16(1), s.f16(2)), s.f16(3))););
  V1("v_fma_mix_f32", return asBits(fmaMix(s)););
  // The f16 result to one half of the destination, the other half kept.
  V1("v_fma_mixlo_f16", uint32_t old = readLane(s.w, op(s.w, s.I, 0), s.lane, Ty::B32);
     return (old & 0xffff0000u) | half(std::fma(mixSource(s, 1), mixSource(s, 2), mixSource(s, 3))););
  V1("v_fma_mixhi_f16", uint32_t old = readLane(s.w, op(s.w, s.I, 0), s.lane, Ty::B32);
     return (old & 0xffffu) | half(std::fma(mixSource(s, 1), mixSource(s, 2), mixSource(s, 3))) << 16;);
  V1("v_dot4c_i32_i8", uint32_t a = s.bits(1, Ty::B32), b = s.bits(2, Ty::B32);
     int32_t acc = int32_t(readLane(s.w, op(s.w, s.I, 0), s.lane, Ty::B32));
     for (int i = 0; i < 4; ++i) acc += int32_t(int8_t(a >> (8 * i))) * int32_t(int8_t(b >> (8 * i)));
     return uint32_t(acc););
  V1("v_dot4_u32_u8", uint32_t a = s.bits(1, Ty::B32), b = s.bits(2, Ty::B32), acc = s.bits(3, Ty::B32);
     for (int i = 0; i < 4; ++i) acc += ((a >> (8 * i)) & 0xff) * ((b >> (8 * i)) & 0xff);
     return acc;);
  V1("v_dot4_i32_i8", uint32_t a = s.bits(1, Ty::B32), b = s.bits(2, Ty::B32);
     int32_t acc = int32_t(s.bits(3, Ty::B32));
     for (int i = 0; i < 4; ++i) acc += int32_t(int8_t(a >> (8 * i))) * int32_t(int8_t(b >> (8 * i)));
     return uint32_t(acc););
}

} // namespace tessel::gpusim::amdgcn
