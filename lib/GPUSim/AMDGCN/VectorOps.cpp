//===- VectorOps.cpp - VALU: integer, float, compare, cross-lane ----------===//
//
// Per-lane operations under EXEC in their VOP1/VOP2/VOP3 (_e32, _e64), DPP
// and SDWA forms: the result of an inactive lane is not written, compares
// write 0 for it. Float operations follow IEEE binary32/64 with denormals
// (the kernels' float_denorm_mode 3); the transcendental approximations
// (v_exp_f32, v_log_f32, v_rcp_f32, v_rsq_f32, v_sqrt_f32, v_sin_f32,
// v_cos_f32) are computed correctly rounded, within the hardware's 1 ulp.
// f16 results zero the upper half of their register, as on gfx9.
//
//===----------------------------------------------------------------------===//
#include "Lanes.h"

#include "../SmallFloat.h"

#include <algorithm>
#include <cmath>

namespace tessel::gpusim::amdgcn {
namespace {

uint32_t half(double v) { return roundToSmallFloat(v, 5, 10, Rounding::RN, false); }

/// f32 -> integer conversions: toward zero, saturating, NaN to 0.
uint32_t toI32(float f) {
  if (std::isnan(f)) return 0;
  if (f >= 2147483648.0f) return 0x7fffffffu;
  if (f <= -2147483648.0f) return 0x80000000u;
  return uint32_t(int32_t(f));
}
uint32_t toU32(float f) {
  if (std::isnan(f) || f <= 0) return 0;
  if (f >= 4294967296.0f) return 0xffffffffu;
  return uint32_t(f);
}

int exponentOf(float f) { return (asBits(f) >> 23) & 0xff; }

/// V_DIV_SCALE_F32 (CDNA3 ISA): scales the operand (numerator or
/// denominator, `a`) of a quotient n/d whose reciprocal iteration would
/// leave the normal range, and flags the lanes whose final result the
/// matching v_div_fmas_f32 must scale back.
float divScale(float a, float d, float n, bool &vcc) {
  vcc = false;
  if (n == 0 || d == 0)
    return std::nanf("");
  int ed = exponentOf(d), en = exponentOf(n);
  if (en - ed >= 96) {
    vcc = true;
    return a == d ? std::ldexp(a, 64) : a;
  }
  if (std::fpclassify(d) == FP_SUBNORMAL)
    return std::ldexp(a, 64);
  // The ISA tests 1/d in double precision: denormal for no finite float.
  double rcp = 1.0 / double(d);
  float q = n / d;
  bool rcpTiny = std::fpclassify(rcp) == FP_SUBNORMAL;
  bool qTiny = std::fpclassify(q) == FP_SUBNORMAL;
  if (rcpTiny && qTiny) {
    vcc = true;
    return a == d ? std::ldexp(a, 64) : a;
  }
  if (rcpTiny)
    return std::ldexp(a, -64);
  if (qTiny) {
    vcc = true;
    return a == n ? std::ldexp(a, 64) : a;
  }
  if (en <= 23)
    return std::ldexp(a, 64);
  return a;
}

/// V_DIV_FIXUP_F32: the special cases of n/d, else the quotient q with the
/// quotient's sign.
float divFixup(float q, float d, float n) {
  bool sign = std::signbit(d) != std::signbit(n);
  float inf = sign ? -INFINITY : INFINITY;
  if (std::isnan(n)) return n;
  if (std::isnan(d)) return d;
  if (d == 0 && n == 0) return std::nanf("");
  if (std::isinf(d) && std::isinf(n)) return std::nanf("");
  if (d == 0 || std::isinf(n)) return inf;
  if (std::isinf(d) || n == 0) return sign ? -0.0f : 0.0f;
  // A quotient below every denormal: zero, whatever the iteration made.
  if (exponentOf(n) - exponentOf(d) < -150) return sign ? -0.0f : 0.0f;
  if (std::isnan(q)) return inf; // the iteration overflowed
  return sign ? -std::fabs(q) : std::fabs(q);
}

/// v_cmp_class's bit of a value: signaling and quiet NaN, -inf, -normal,
/// -denormal, -0, +0, +denormal, +normal, +inf.
template <typename T> int floatClass(T f, bool quiet) {
  bool neg = std::signbit(f);
  if (std::isnan(f)) return quiet ? 1 : 0;
  if (std::isinf(f)) return neg ? 2 : 9;
  if (f == 0) return neg ? 5 : 6;
  if (std::fpclassify(f) == FP_SUBNORMAL) return neg ? 4 : 7;
  return neg ? 3 : 8;
}

uint32_t permByte(uint64_t in, uint32_t sel) {
  sel &= 0xff;
  if (sel >= 13) return 0xff;
  if (sel == 12) return 0;
  if (sel >= 8) return ((in >> (16 * (sel - 8) + 15)) & 1) ? 0xff : 0;
  return uint32_t(in >> (8 * sel)) & 0xff;
}

/// v_add_co/v_addc_co/v_sub_co/v_subb_co and their _rev forms: a + b (+ the
/// carry in), or a - b (- the borrow in), with the carry or borrow out of
/// each lane in the mask of operand 1.
template <bool Sub, bool Reverse, bool CarryIn>
void carryOp(Wave &w, const Inst &I) {
  uint64_t flags = 0;
  each(w, I, 0, 2, [&](const Src &s) -> uint32_t {
    uint64_t a = s.bits(Reverse ? 3 : 2, Ty::B32), b = s.bits(Reverse ? 2 : 3, Ty::B32);
    uint64_t in = CarryIn ? maskBit(s.w, op(s.w, s.I, 4), s.lane) : 0;
    uint64_t r = Sub ? a - b - in : a + b + in;
    bool carry = Sub ? b + in > a : (r >> 32) != 0;
    flags |= uint64_t(carry) << s.lane;
    if (s.I.mods.clamp && carry) // saturated: 0 below, all ones above
      return Sub ? 0u : 0xffffffffu;
    return uint32_t(r);
  });
  writeScalar64(w, op(w, I, 1), flags);
}

template <typename T> bool cmpInt(int c, T a, T b) {
  switch (c) {
  case 0: return false;    // f
  case 1: return a < b;    // lt
  case 2: return a == b;   // eq
  case 3: return a <= b;   // le
  case 4: return a > b;    // gt
  case 5: return a != b;   // ne (lg)
  case 6: return a >= b;   // ge
  default: return true;    // t
  }
}

template <typename T> bool cmpFloat(int c, T a, T b) {
  bool u = std::isnan(a) || std::isnan(b);
  switch (c) {
  case 0: return false;            // f
  case 1: return a < b;            // lt
  case 2: return a == b;           // eq
  case 3: return a <= b;           // le
  case 4: return a > b;            // gt
  case 5: return !u && a != b;     // lg
  case 6: return a >= b;           // ge
  case 7: return !u;               // o
  case 8: return u;                // u
  case 9: return !(a >= b);        // nge
  case 10: return u || a == b;     // nlg
  case 11: return !(a > b);        // ngt
  case 12: return !(a <= b);       // nle
  case 13: return !(a == b);       // neq
  case 14: return !(a < b);        // nlt
  default: return true;            // tru
  }
}

} // namespace

int dppSourceLane(uint16_t c, int lane) {
  int row = lane & ~15, inRow = lane & 15;
  if (c < 0x100)
    return (lane & ~3) | ((c >> (2 * (lane & 3))) & 3);
  if (c > 0x100 && c <= 0x10f)
    return inRow + (c - 0x100) < 16 ? lane + (c - 0x100) : -1;
  if (c > 0x110 && c <= 0x11f)
    return inRow >= (c - 0x110) ? lane - (c - 0x110) : -1;
  if (c > 0x120 && c <= 0x12f)
    return row + ((inRow - (c - 0x120)) & 15);
  switch (c) {
  case 0x130: return lane < 63 ? lane + 1 : -1;
  case 0x134: return (lane + 1) & 63;
  case 0x138: return lane > 0 ? lane - 1 : -1;
  case 0x13c: return (lane - 1) & 63;
  case 0x140: return row + 15 - inRow;
  case 0x141: return (lane & ~7) + 7 - (lane & 7);
  case 0x142: return row > 0 ? row - 1 : -1;
  case 0x143: return lane >= 32 ? 31 : -1;
  default: return -1;
  }
}

#define V1(NAME, ...) t[NAME] = [](Wave &w, const Inst &I) { each(w, I, 0, 1, [&](const Src &s) -> uint32_t { __VA_ARGS__ }); }

void registerVectorOps(Table &t) {
  // Moves and bit operations.
  V1("v_mov_b32", return s.bits(1, Ty::B32););
  V1("v_not_b32", return ~s.bits(1, Ty::B32););
  V1("v_bfrev_b32", uint32_t x = s.bits(1, Ty::B32); uint32_t r = 0;
     for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i); return r;);
  V1("v_ffbh_u32", uint32_t x = s.bits(1, Ty::B32); return x ? uint32_t(__builtin_clz(x)) : ~0u;);
  V1("v_ffbh_i32", int32_t a = int32_t(s.bits(1, Ty::B32)); uint32_t x = a < 0 ? ~uint32_t(a) : uint32_t(a);
     return (a == 0 || a == -1) ? ~0u : uint32_t(__builtin_clz(x)););
  V1("v_ffbl_b32", uint32_t x = s.bits(1, Ty::B32); return x ? uint32_t(__builtin_ctz(x)) : ~0u;);
  V1("v_bcnt_u32_b32", return uint32_t(__builtin_popcount(s.bits(1, Ty::B32))) + s.bits(2, Ty::B32););
  V1("v_and_b32", return s.bits(1, Ty::B32) & s.bits(2, Ty::B32););
  V1("v_or_b32", return s.bits(1, Ty::B32) | s.bits(2, Ty::B32););
  V1("v_xor_b32", return s.bits(1, Ty::B32) ^ s.bits(2, Ty::B32););
  V1("v_xnor_b32", return ~(s.bits(1, Ty::B32) ^ s.bits(2, Ty::B32)););
  V1("v_or3_b32", return s.bits(1, Ty::B32) | s.bits(2, Ty::B32) | s.bits(3, Ty::B32););
  V1("v_bitop3_b32", uint32_t a = s.bits(1, Ty::B32), b = s.bits(2, Ty::B32), c = s.bits(3, Ty::B32), r = 0;
     for (int i = 0; i < 8; ++i)
       if ((s.I.mods.bitop3 >> i) & 1)
         r |= ((i & 4) ? a : ~a) & ((i & 2) ? b : ~b) & ((i & 1) ? c : ~c);
     return r;);
  V1("v_and_or_b32", return (s.bits(1, Ty::B32) & s.bits(2, Ty::B32)) | s.bits(3, Ty::B32););
  V1("v_lshl_or_b32", return (s.bits(1, Ty::B32) << (s.bits(2, Ty::B32) & 31)) | s.bits(3, Ty::B32););
  V1("v_lshlrev_b32", return s.bits(2, Ty::B32) << (s.bits(1, Ty::B32) & 31););
  V1("v_lshrrev_b32", return s.bits(2, Ty::B32) >> (s.bits(1, Ty::B32) & 31););
  V1("v_ashrrev_i32", return uint32_t(int32_t(s.bits(2, Ty::B32)) >> (s.bits(1, Ty::B32) & 31)););
  V1("v_lshlrev_b16", return (s.bits(2, Ty::B32) << (s.bits(1, Ty::B32) & 15)) & 0xffff;);
  V1("v_bfe_u32", uint32_t x = s.bits(1, Ty::B32), o = s.bits(2, Ty::B32) & 31, n = s.bits(3, Ty::B32) & 31;
     return n == 0 ? 0 : (x >> o) & ((n == 32 ? 0 : 1u << n) - 1););
  V1("v_bfe_i32", uint32_t x = s.bits(1, Ty::B32), o = s.bits(2, Ty::B32) & 31, n = s.bits(3, Ty::B32) & 31;
     return n == 0 ? 0 : uint32_t(int32_t((x >> o) << (32 - n)) >> (32 - n)););
  V1("v_bfi_b32", uint32_t m = s.bits(1, Ty::B32); return (m & s.bits(2, Ty::B32)) | (~m & s.bits(3, Ty::B32)););
  V1("v_alignbit_b32", uint64_t x = uint64_t(s.bits(1, Ty::B32)) << 32 | s.bits(2, Ty::B32);
     return uint32_t(x >> (s.bits(3, Ty::B32) & 31)););
  V1("v_alignbyte_b32", uint64_t x = uint64_t(s.bits(1, Ty::B32)) << 32 | s.bits(2, Ty::B32);
     return uint32_t(x >> (8 * (s.bits(3, Ty::B32) & 3))););
  V1("v_perm_b32", uint64_t in = uint64_t(s.bits(1, Ty::B32)) << 32 | s.bits(2, Ty::B32);
     uint32_t sel = s.bits(3, Ty::B32), r = 0;
     for (int i = 0; i < 4; ++i) r |= permByte(in, sel >> (8 * i)) << (8 * i); return r;);
  V1("v_cndmask_b32", return maskBit(s.w, op(s.w, s.I, 3), s.lane) ? s.bits(2, Ty::B32) : s.bits(1, Ty::B32););
  // Integer arithmetic.
  // With clamp, unsigned results saturate (LLVM's 64-bit ctlz adds 32 to
  // v_ffbh_u32's 0xffffffff for a zero low half and relies on it).
  V1("v_add_u32", uint64_t r = uint64_t(s.bits(1, Ty::B32)) + s.bits(2, Ty::B32);
     return s.I.mods.clamp && r >> 32 ? 0xffffffffu : uint32_t(r););
  V1("v_sub_u32", uint32_t a = s.bits(1, Ty::B32), b = s.bits(2, Ty::B32);
     return s.I.mods.clamp && b > a ? 0u : a - b;);
  V1("v_subrev_u32", uint32_t a = s.bits(2, Ty::B32), b = s.bits(1, Ty::B32);
     return s.I.mods.clamp && b > a ? 0u : a - b;);
  // Signed sums and differences; with clamp they saturate to the int32 range.
  V1("v_add_i32", int64_t r = int64_t(int32_t(s.bits(1, Ty::B32))) + int32_t(s.bits(2, Ty::B32));
     return uint32_t(s.I.mods.clamp ? std::clamp<int64_t>(r, INT32_MIN, INT32_MAX) : r););
  V1("v_sub_i32", int64_t r = int64_t(int32_t(s.bits(1, Ty::B32))) - int32_t(s.bits(2, Ty::B32));
     return uint32_t(s.I.mods.clamp ? std::clamp<int64_t>(r, INT32_MIN, INT32_MAX) : r););
  V1("v_add3_u32", return s.bits(1, Ty::B32) + s.bits(2, Ty::B32) + s.bits(3, Ty::B32););
  V1("v_xad_u32", return (s.bits(1, Ty::B32) ^ s.bits(2, Ty::B32)) + s.bits(3, Ty::B32););
  V1("v_lshl_add_u32", return (s.bits(1, Ty::B32) << (s.bits(2, Ty::B32) & 31)) + s.bits(3, Ty::B32););
  V1("v_add_lshl_u32", return (s.bits(1, Ty::B32) + s.bits(2, Ty::B32)) << (s.bits(3, Ty::B32) & 31););
  V1("v_mul_lo_u32", return s.bits(1, Ty::B32) * s.bits(2, Ty::B32););
  V1("v_mul_hi_u32", return uint32_t((uint64_t(s.bits(1, Ty::B32)) * s.bits(2, Ty::B32)) >> 32););
  V1("v_mul_hi_i32", return uint32_t(uint64_t(int64_t(int32_t(s.bits(1, Ty::B32))) *
                                               int32_t(s.bits(2, Ty::B32))) >> 32););
  V1("v_mul_u32_u24", return (s.bits(1, Ty::B32) & 0xffffff) * (s.bits(2, Ty::B32) & 0xffffff););
  V1("v_mul_i32_i24", return uint32_t(int32_t(s.bits(1, Ty::B32) << 8) >> 8) * uint32_t(int32_t(s.bits(2, Ty::B32) << 8) >> 8););
  V1("v_mul_hi_u32_u24",
     return uint32_t((uint64_t(s.bits(1, Ty::B32) & 0xffffff) * (s.bits(2, Ty::B32) & 0xffffff)) >> 32););
  V1("v_mul_hi_i32_i24", return uint32_t(uint64_t(int64_t(int32_t(s.bits(1, Ty::B32) << 8) >> 8) *
                                                  (int32_t(s.bits(2, Ty::B32) << 8) >> 8)) >> 32););
  V1("v_mad_i32_i24", return uint32_t(int32_t(s.bits(1, Ty::B32) << 8) >> 8) * uint32_t(int32_t(s.bits(2, Ty::B32) << 8) >> 8) +
                             s.bits(3, Ty::B32););
  V1("v_mad_u32_u24", return (s.bits(1, Ty::B32) & 0xffffff) * (s.bits(2, Ty::B32) & 0xffffff) + s.bits(3, Ty::B32););
  V1("v_max_i32", return uint32_t(std::max(int32_t(s.bits(1, Ty::B32)), int32_t(s.bits(2, Ty::B32)))););
  V1("v_min_i32", return uint32_t(std::min(int32_t(s.bits(1, Ty::B32)), int32_t(s.bits(2, Ty::B32)))););
  V1("v_max_u32", return std::max(s.bits(1, Ty::B32), s.bits(2, Ty::B32)););
  V1("v_min_u32", return std::min(s.bits(1, Ty::B32), s.bits(2, Ty::B32)););
  V1("v_max3_i32", return uint32_t(std::max({int32_t(s.bits(1, Ty::B32)), int32_t(s.bits(2, Ty::B32)),
                                             int32_t(s.bits(3, Ty::B32))})););
  V1("v_min3_i32", return uint32_t(std::min({int32_t(s.bits(1, Ty::B32)), int32_t(s.bits(2, Ty::B32)),
                                             int32_t(s.bits(3, Ty::B32))})););
  V1("v_max3_u32", return std::max({s.bits(1, Ty::B32), s.bits(2, Ty::B32), s.bits(3, Ty::B32)}););
  V1("v_min3_u32", return std::min({s.bits(1, Ty::B32), s.bits(2, Ty::B32), s.bits(3, Ty::B32)}););
  V1("v_med3_i32", int32_t a = int32_t(s.bits(1, Ty::B32)), b = int32_t(s.bits(2, Ty::B32)), c = int32_t(s.bits(3, Ty::B32));
     return uint32_t(std::max(std::min(a, b), std::min(std::max(a, b), c))););
  // Carries: the carry-out (borrow-out) mask is operand 1; v_addc/v_subb
  // read theirs last; the _rev forms subtract the first source.
  t["v_add_co_u32"] = carryOp<false, false, false>;
  t["v_addc_co_u32"] = carryOp<false, false, true>;
  t["v_sub_co_u32"] = carryOp<true, false, false>;
  t["v_subb_co_u32"] = carryOp<true, false, true>;
  t["v_subrev_co_u32"] = carryOp<true, true, false>;
  t["v_subbrev_co_u32"] = carryOp<true, true, true>;
  // Lanes below this one whose bit is set in the mask, plus the source.
  V1("v_mbcnt_lo_u32_b32", uint32_t m = s.bits(1, Ty::B32);
     uint32_t below = s.lane >= 32 ? m : m & ((1u << s.lane) - 1);
     return uint32_t(__builtin_popcount(below)) + s.bits(2, Ty::B32););
  V1("v_mbcnt_hi_u32_b32", uint32_t m = s.bits(1, Ty::B32);
     uint32_t below = s.lane < 32 ? 0 : m & ((1u << (s.lane - 32)) - 1);
     return uint32_t(__builtin_popcount(below)) + s.bits(2, Ty::B32););
  t["v_mad_i64_i32"] = [](Wave &w, const Inst &I) {
    uint64_t out[kLanes];
    uint64_t carry = 0;
    for (int lane = 0; lane < kLanes; ++lane)
      if (w.active(lane)) {
        Src s{w, I, lane, 2};
        __int128 r = (__int128)(int64_t(int32_t(s.bits(2, Ty::B32))) * int32_t(s.bits(3, Ty::B32))) +
                     (__int128)int64_t(s.bits64(4, Ty::B64));
        out[lane] = uint64_t(r);
        carry |= uint64_t(r != (__int128)int64_t(r)) << lane;
      }
    write64(w, I, out);
    writeScalar64(w, op(w, I, 1), carry);
  };
  t["v_mad_u64_u32"] = [](Wave &w, const Inst &I) {
    uint64_t carry = 0;
    uint64_t out[kLanes];
    for (int lane = 0; lane < kLanes; ++lane)
      if (w.active(lane)) {
        Src s{w, I, lane, 2};
        unsigned __int128 r = (unsigned __int128)(uint64_t(s.bits(2, Ty::B32)) * s.bits(3, Ty::B32)) +
                              s.bits64(4, Ty::B64);
        out[lane] = uint64_t(r);
        carry |= uint64_t(r >> 64) << lane;
      }
    write64(w, I, out);
    writeScalar64(w, op(w, I, 1), carry);
  };
  // 64-bit shifts and address arithmetic.
  t["v_lshlrev_b64"] = [](Wave &w, const Inst &I) {
    each64(w, I, [](const Src &s) { return s.bits64(2, Ty::B64) << (s.bits(1, Ty::B32) & 63); });
  };
  t["v_lshrrev_b64"] = [](Wave &w, const Inst &I) {
    each64(w, I, [](const Src &s) { return s.bits64(2, Ty::B64) >> (s.bits(1, Ty::B32) & 63); });
  };
  t["v_ashrrev_i64"] = [](Wave &w, const Inst &I) {
    each64(w, I, [](const Src &s) { return uint64_t(int64_t(s.bits64(2, Ty::B64)) >> (s.bits(1, Ty::B32) & 63)); });
  };
  t["v_lshl_add_u64"] = [](Wave &w, const Inst &I) {
    each64(w, I, [](const Src &s) {
      return (s.bits64(1, Ty::B64) << (s.bits(2, Ty::B32) & 7)) + s.bits64(3, Ty::B64);
    });
  };
  t["v_mov_b64"] = [](Wave &w, const Inst &I) { each64(w, I, [](const Src &s) { return s.bits64(1, Ty::B64); }); };
  // f32 arithmetic.
  V1("v_add_f32", return asBits(outF32(s.I, s.f32(1) + s.f32(2))););
  V1("v_sub_f32", return asBits(outF32(s.I, s.f32(1) - s.f32(2))););
  V1("v_subrev_f32", return asBits(outF32(s.I, s.f32(2) - s.f32(1))););
  V1("v_mul_f32", return asBits(outF32(s.I, s.f32(1) * s.f32(2))););
  V1("v_fma_f32", return asBits(outF32(s.I, std::fma(s.f32(1), s.f32(2), s.f32(3)))););
  V1("v_fmaak_f32", return asBits(outF32(s.I, std::fma(s.f32(1), s.f32(2), s.f32(3)))););
  V1("v_fmamk_f32", return asBits(outF32(s.I, std::fma(s.f32(1), s.f32(2), s.f32(3)))););
  V1("v_fmac_f32", return asBits(outF32(s.I, std::fma(s.f32(1), s.f32(2), asFloat(readLane(s.w, op(s.w, s.I, 0), s.lane, Ty::F32))))););
  V1("v_max_f32", return asBits(outF32(s.I, maxNum(s.f32(1), s.f32(2)))););
  V1("v_min_f32", return asBits(outF32(s.I, minNum(s.f32(1), s.f32(2)))););
  V1("v_max3_f32", return asBits(outF32(s.I, maxNum(maxNum(s.f32(1), s.f32(2)), s.f32(3)))););
  V1("v_min3_f32", return asBits(outF32(s.I, minNum(minNum(s.f32(1), s.f32(2)), s.f32(3)))););
  V1("v_med3_f32", float a = s.f32(1), b = s.f32(2), c = s.f32(3);
     return asBits(outF32(s.I, maxNum(minNum(a, b), minNum(maxNum(a, b), c)))););
  V1("v_exp_f32", return asBits(outF32(s.I, std::exp2(s.f32(1)))););
  V1("v_log_f32", return asBits(outF32(s.I, std::log2(s.f32(1)))););
  V1("v_rcp_f32", return asBits(outF32(s.I, 1.0f / s.f32(1))););
  V1("v_rcp_iflag_f32", return asBits(outF32(s.I, 1.0f / s.f32(1))););
  V1("v_rsq_f32", return asBits(outF32(s.I, float(1.0 / std::sqrt(double(s.f32(1))))));  );
  V1("v_sqrt_f32", return asBits(outF32(s.I, std::sqrt(s.f32(1)))););
  V1("v_sin_f32", return asBits(outF32(s.I, float(std::sin(double(s.f32(1)) * 6.283185307179586)))););
  V1("v_cos_f32", return asBits(outF32(s.I, float(std::cos(double(s.f32(1)) * 6.283185307179586)))););
  V1("v_trunc_f32", return asBits(outF32(s.I, std::trunc(s.f32(1)))););
  V1("v_floor_f32", return asBits(outF32(s.I, std::floor(s.f32(1)))););
  V1("v_ceil_f32", return asBits(outF32(s.I, std::ceil(s.f32(1)))););
  V1("v_rndne_f32", return asBits(outF32(s.I, std::nearbyint(s.f32(1)))););
  V1("v_fract_f32", float x = s.f32(1); return asBits(outF32(s.I, std::fmin(x - std::floor(x), 0x1.fffffep-1f))););
  V1("v_ldexp_f32", return asBits(outF32(s.I, std::ldexp(s.f32(1), int32_t(s.bits(2, Ty::B32))))););
  V1("v_frexp_mant_f32", float x = s.f32(1); int e;
     return asBits(std::isfinite(x) ? std::frexp(x, &e) : x););
  V1("v_frexp_exp_i32_f32", float x = s.f32(1); int e = 0;
     if (std::isfinite(x)) std::frexp(x, &e); return uint32_t(e););
  V1("v_div_fixup_f32", return asBits(divFixup(s.f32(1), s.f32(2), s.f32(3))););
  // VCC set: a quotient v_div_scale_f32 scaled (near either end of the
  // float range) is scaled back, up by 2^64 where the partial quotient (S2)
  // is at least 2 (the denominator was scaled up), else down, rounded once.
  V1("v_div_fmas_f32", float a = s.f32(1), b = s.f32(2), c = s.f32(3);
     if (!((s.w.vcc >> s.lane) & 1)) return asBits(std::fma(a, b, c));
     int e = exponentOf(c) >= 0x80 ? 64 : -64;
     return asBits(float(std::fma(std::ldexp(double(a), e), double(b), std::ldexp(double(c), e)))););
  t["v_div_scale_f32"] = [](Wave &w, const Inst &I) {
    uint64_t flags = 0;
    each(w, I, 0, 2, [&](const Src &s) -> uint32_t {
      bool vcc;
      float r = divScale(s.f32(2), s.f32(3), s.f32(4), vcc);
      flags |= uint64_t(vcc) << s.lane;
      return asBits(r);
    });
    writeScalar64(w, op(w, I, 1), flags);
  };
  // Conversions.
  V1("v_cvt_f32_i32", return asBits(float(int32_t(s.bits(1, Ty::B32)))););
  V1("v_cvt_f32_u32", return asBits(float(s.bits(1, Ty::B32))););
  V1("v_cvt_i32_f32", return toI32(s.f32(1)););
  V1("v_cvt_u32_f32", return toU32(s.f32(1)););
  V1("v_cvt_f16_f32", return half(s.f32(1)););
  V1("v_cvt_f32_f16", return asBits(float(s.f16(1))););
  V1("v_cvt_pkrtz_f16_f32", return roundToSmallFloat(s.f32(1), 5, 10, Rounding::RZ, false) |
                                   roundToSmallFloat(s.f32(2), 5, 10, Rounding::RZ, false) << 16;);
  V1("v_cvt_pk_f16_f32", return half(s.f32(1)) | half(s.f32(2)) << 16;);
  V1("v_cvt_pk_bf16_f32", return roundToSmallFloat(s.f32(1), 8, 7, Rounding::RN, false) |
                                 roundToSmallFloat(s.f32(2), 8, 7, Rounding::RN, false) << 16;);
  V1("v_cvt_f32_ubyte0", return asBits(float(s.bits(1, Ty::B32) & 0xff)););
  V1("v_cvt_f32_ubyte1", return asBits(float((s.bits(1, Ty::B32) >> 8) & 0xff)););
  V1("v_cvt_f32_ubyte2", return asBits(float((s.bits(1, Ty::B32) >> 16) & 0xff)););
  V1("v_cvt_f32_ubyte3", return asBits(float(s.bits(1, Ty::B32) >> 24)););
  V1("v_cvt_f16_u16", return half(double(uint16_t(s.bits(1, Ty::B32)))););
  V1("v_cvt_f16_i16", return half(double(int16_t(s.bits(1, Ty::B32)))););
  V1("v_cvt_u16_f16", double d = s.f16(1); return std::isnan(d) || d <= 0 ? 0u : d >= 65535 ? 0xffffu : uint32_t(d););
  V1("v_cvt_i16_f16", double d = s.f16(1);
     return std::isnan(d) ? 0u : d >= 32767 ? 0x7fffu : d <= -32768 ? 0x8000u : uint32_t(uint16_t(int16_t(d))););
  t["v_cvt_f64_f32"] = [](Wave &w, const Inst &I) {
    each64(w, I, [](const Src &s) { return asBits64(double(s.f32(1))); });
  };
  V1("v_cvt_f32_f64", return asBits(float(s.f64(1))););
  V1("v_pack_b32_f16", uint32_t a = s.raw(1, Ty::F16), b = s.raw(2, Ty::F16);
     a = (s.I.mods.opSel & 1) ? a >> 16 : a; b = (s.I.mods.opSel & 2) ? b >> 16 : b;
     auto mods = [](const Operand &o, uint32_t h) {
       if (o.abs) h &= 0x7fffu;
       if (o.neg) h ^= 0x8000u;
       return h & 0xffffu;
     };
     return mods(op(s.w, s.I, 1), a) | mods(op(s.w, s.I, 2), b) << 16;);
  // f16 arithmetic (the low halves).
  V1("v_add_f16", return half(s.f16(1) + s.f16(2)););
  V1("v_mul_f16", return half(s.f16(1) * s.f16(2)););
  V1("v_fma_f16", return half(std::fma(s.f16(1), s.f16(2), s.f16(3))););
  // Packed f32 (a register pair per operand): op_sel picks each result
  // half's source halves.
  auto packed = [](Wave &w, const Inst &I, int n, double (*f)(double, double, double)) {
    uint64_t out[kLanes];
    for (int lane = 0; lane < kLanes; ++lane) {
      if (!w.active(lane))
        continue;
      float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
      for (int i = 0; i < n; ++i) {
        const Operand &o = op(w, I, size_t(i + 1));
        uint64_t v = readLane64(w, o, lane, Ty::F32);
        if (o.kind == OpKind::Int || o.kind == OpKind::Float) // one constant for both halves
          v = uint64_t(readLane(w, o, lane, Ty::F32)) * 0x100000001ull;
        float l = asFloat(uint32_t((I.mods.opSel >> i) & 1 ? v >> 32 : v));
        float h = asFloat(uint32_t((I.mods.opSelHi >> i) & 1 ? v >> 32 : v));
        if ((I.mods.negLo >> i) & 1) l = -l;
        if ((I.mods.negHi >> i) & 1) h = -h;
        lo[i] = l;
        hi[i] = h;
      }
      out[lane] = uint64_t(asBits(float(f(lo[0], lo[1], lo[2])))) |
                  uint64_t(asBits(float(f(hi[0], hi[1], hi[2])))) << 32;
    }
    write64(w, I, out);
  };
  static auto packedOp = packed;
  t["v_pk_add_f32"] = [](Wave &w, const Inst &I) {
    packedOp(w, I, 2, [](double a, double b, double) { return double(float(a) + float(b)); });
  };
  t["v_pk_mul_f32"] = [](Wave &w, const Inst &I) {
    packedOp(w, I, 2, [](double a, double b, double) { return double(float(a) * float(b)); });
  };
  t["v_pk_fma_f32"] = [](Wave &w, const Inst &I) {
    packedOp(w, I, 3, [](double a, double b, double c) { return double(std::fma(float(a), float(b), float(c))); });
  };
  t["v_pk_mov_b32"] = [](Wave &w, const Inst &I) {
    uint64_t out[kLanes];
    for (int lane = 0; lane < kLanes; ++lane)
      if (w.active(lane)) {
        uint64_t a = readLane64(w, op(w, I, 1), lane, Ty::B64), b = readLane64(w, op(w, I, 2), lane, Ty::B64);
        uint32_t lo = uint32_t(I.mods.opSel & 1 ? a >> 32 : a), hi = uint32_t(I.mods.opSel & 2 ? b >> 32 : b);
        out[lane] = uint64_t(lo) | uint64_t(hi) << 32;
      }
    write64(w, I, out);
  };
  // Compares: v_cmp_<op>_<type> and v_cmpx_ (EXEC too).
  static const char *intOps[] = {"f", "lt", "eq", "le", "gt", "ne", "ge", "t"};
  static const char *floatOps[] = {"f", "lt", "eq", "le", "gt", "lg", "ge", "o",
                                   "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "tru"};
  // One handler per (type, op): the op's index is recovered from the name
  // at run time through a small table, built once.
  static std::unordered_map<std::string, int> cmpIndex;
  for (int x = 0; x < 2; ++x) {
    std::string prefix = x ? "v_cmpx_" : "v_cmp_";
    for (int c = 0; c < 8; ++c)
      for (const char *ty : {"i32", "u32", "i64", "u64", "i16", "u16"})
        cmpIndex[prefix + intOps[c] + "_" + ty] = c;
    for (int c = 0; c < 16; ++c)
      for (const char *ty : {"f32", "f64", "f16"})
        cmpIndex[prefix + floatOps[c] + "_" + ty] = c;
  }
  for (auto &[name, c] : cmpIndex) {
    (void)c;
    t[name] = [](Wave &w, const Inst &I) {
      int c = cmpIndex.at(I.base);
      bool x = I.base.compare(0, 7, "v_cmpx_") == 0;
      std::string ty = I.base.substr(I.base.size() - 3);
      if (ty == "f32")
        compareLanes(w, I, [&](const Src &s) { return cmpFloat<float>(c, s.f32(1), s.f32(2)); }, x);
      else if (ty == "f64")
        compareLanes(w, I, [&](const Src &s) { return cmpFloat<double>(c, s.f64(1), s.f64(2)); }, x);
      else if (ty == "f16")
        compareLanes(w, I, [&](const Src &s) { return cmpFloat<double>(c, s.f16(1), s.f16(2)); }, x);
      else if (ty == "i32")
        compareLanes(w, I, [&](const Src &s) { return cmpInt<int32_t>(c, int32_t(s.bits(1, Ty::B32)), int32_t(s.bits(2, Ty::B32))); }, x);
      else if (ty == "u32")
        compareLanes(w, I, [&](const Src &s) { return cmpInt<uint32_t>(c, s.bits(1, Ty::B32), s.bits(2, Ty::B32)); }, x);
      else if (ty == "i64")
        compareLanes(w, I, [&](const Src &s) { return cmpInt<int64_t>(c, int64_t(s.bits64(1, Ty::B64)), int64_t(s.bits64(2, Ty::B64))); }, x);
      else if (ty == "u64")
        compareLanes(w, I, [&](const Src &s) { return cmpInt<uint64_t>(c, s.bits64(1, Ty::B64), s.bits64(2, Ty::B64)); }, x);
      else if (ty == "i16")
        compareLanes(w, I, [&](const Src &s) { return cmpInt<int16_t>(c, int16_t(s.bits(1, Ty::B32)), int16_t(s.bits(2, Ty::B32))); }, x);
      else
        compareLanes(w, I, [&](const Src &s) { return cmpInt<uint16_t>(c, uint16_t(s.bits(1, Ty::B32)), uint16_t(s.bits(2, Ty::B32))); }, x);
    };
  }
  t["v_cmp_class_f32"] = [](Wave &w, const Inst &I) {
    compareLanes(w, I, [](const Src &s) {
      float f = s.f32(1);
      return ((s.bits(2, Ty::B32) >> floatClass(f, (asBits(f) & 0x400000) != 0)) & 1) != 0;
    }, false);
  };
  t["v_cmp_class_f64"] = [](Wave &w, const Inst &I) {
    compareLanes(w, I, [](const Src &s) {
      double d = s.f64(1);
      return ((s.bits(2, Ty::B32) >> floatClass(d, (asBits64(d) >> 51) & 1)) & 1) != 0;
    }, false);
  };
  // Cross-lane.
  t["v_readfirstlane_b32"] = [](Wave &w, const Inst &I) {
    int lane = w.exec ? __builtin_ctzll(w.exec) : 0;
    writeScalar(w, op(w, I, 0), readLane(w, op(w, I, 1), lane, Ty::B32));
  };
  t["v_readlane_b32"] = [](Wave &w, const Inst &I) {
    uint32_t lane = readScalar(w, op(w, I, 2), Ty::B32) & 63;
    writeScalar(w, op(w, I, 0), readLane(w, op(w, I, 1), int(lane), Ty::B32));
  };
  // gfx950's swaps between lane halves (rows of 16): lane i + 32 of the
  // destination with lane i of the source (permlane32), lane i + 16 of each
  // 32-lane half of the destination with lane i of the source's
  // (permlane16); both registers are written.
  t["v_permlane32_swap_b32"] = [](Wave &w, const Inst &I) {
    if (w.exec != ~uint64_t(0))
      w.fail(I.op + " with lanes disabled in EXEC is not modeled");
    for (int lane = 0; lane < 32; ++lane)
      std::swap(laneRef(w, op(w, I, 0), lane + 32), laneRef(w, op(w, I, 1), lane));
  };
  t["v_permlane16_swap_b32"] = [](Wave &w, const Inst &I) {
    if (w.exec != ~uint64_t(0))
      w.fail(I.op + " with lanes disabled in EXEC is not modeled");
    for (int half = 0; half < 64; half += 32)
      for (int lane = 0; lane < 16; ++lane)
        std::swap(laneRef(w, op(w, I, 0), half + lane + 16), laneRef(w, op(w, I, 1), half + lane));
  };
  t["v_writelane_b32"] = [](Wave &w, const Inst &I) {
    uint32_t lane = readScalar(w, op(w, I, 2), Ty::B32) & 63;
    laneRef(w, op(w, I, 0), int(lane)) = readScalar(w, op(w, I, 1), Ty::B32);
  };
  // Accumulation registers.
  V1("v_accvgpr_write_b32", return s.bits(1, Ty::B32););
  V1("v_accvgpr_read_b32", return s.bits(1, Ty::B32););
  V1("v_accvgpr_mov_b32", return s.bits(1, Ty::B32););
}

} // namespace tessel::gpusim::amdgcn
