//===- DoubleOps.cpp - VALU on f64 ----------------------------------------===//
//
// f64 arithmetic, conversions and the division steps on register pairs, IEEE
// binary64 with denormals; v_rcp_f64, v_rsq_f64 and v_sqrt_f64 are computed
// correctly rounded (the hardware's approximations are within an ulp or so,
// and the compiler refines them).
//
//===----------------------------------------------------------------------===//
#include "Lanes.h"

namespace tessel::gpusim::amdgcn {
namespace {

#define D1(NAME, ...) t[NAME] = [](Wave &w, const Inst &I) { each64(w, I, [&](const Src &s) -> uint64_t { __VA_ARGS__ }); }

int exponentOf(double d) { return int((asBits64(d) >> 52) & 0x7ff); }

/// V_DIV_FIXUP_F64: the special cases of n/d, else q with the sign.
double divFixup(double q, double d, double n) {
  bool sign = std::signbit(d) != std::signbit(n);
  if (std::isnan(n)) return n;
  if (std::isnan(d)) return d;
  if ((d == 0 && n == 0) || (std::isinf(d) && std::isinf(n))) return std::nan("");
  if (d == 0 || std::isinf(n)) return sign ? -INFINITY : INFINITY;
  if (std::isinf(d) || n == 0) return sign ? -0.0 : 0.0;
  // A quotient below every denormal: zero, whatever the iteration made.
  if (exponentOf(n) - exponentOf(d) < -1075) return sign ? -0.0 : 0.0;
  if (std::isnan(q)) return sign ? -INFINITY : INFINITY; // the iteration overflowed
  return sign ? -std::fabs(q) : std::fabs(q);
}

/// 2/pi to 1201 bits: floor(2/pi * 2^1201), least significant word first
/// (computed from Machin's formula for pi with exact integers).
constexpr uint64_t kTwoOverPi[19] = {
    0xba10ac06608df8f6ull, 0x25d4d7f6bf623f1aull, 0xe2f67a0e73ef14a5ull,
    0xd45aea4f758fd7cbull, 0x136e9e8c7ecd3cbfull, 0xda3eda6cfd9e4f96ull,
    0x301fde5e2316b414ull, 0x50763ff12fffbc0bull, 0x73e93908bf177bf2ull,
    0xfc827323ac7306a6ull, 0x8909d338e04d68beull, 0x4e7dd1046bea5d76ull,
    0x2439fc3bd6396253ull, 0xa5c00c925dd413a3ull, 0x8ac36e48dc74849bull,
    0x2083fca2c757bd77ull, 0xbb81b6c52b327887ull, 0x2a53f84eafa3ea69ull,
    0x000145f306dc9c88ull};

/// The 53 bits of 2/pi from bit `top` down (bit i of floor(2/pi 2^1201)).
uint64_t twoOverPiBits(int top) {
  uint64_t r = 0;
  for (int i = 0; i < 53; ++i) {
    int bit = top - i;
    uint64_t b = bit < 0 ? 0 : (kTwoOverPi[bit / 64] >> (bit % 64)) & 1;
    r = r << 1 | b;
  }
  return r;
}

/// V_TRIG_PREOP_F64: the segment of 2/pi that reducing x needs: 53 bits
/// from bit 1200 - shift, shift = 53 segment (+ exponent(x) - 1077 when
/// larger), scaled by 2^(-53 - shift) (and 2^128 for exponents from 1968).
double trigPreop(double x, uint32_t segment) {
  int e = exponentOf(x);
  int shift = int(segment & 31) * 53 + (e > 1077 ? e - 1077 : 0);
  int scale = -53 - shift + (e >= 1968 ? 128 : 0);
  return std::ldexp(double(twoOverPiBits(1200 - shift)), scale);
}

uint32_t toI32(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 2147483647.0) return 0x7fffffffu;
  if (d <= -2147483648.0) return 0x80000000u;
  return uint32_t(int32_t(d));
}
uint32_t toU32(double d) {
  if (std::isnan(d) || d <= 0) return 0;
  if (d >= 4294967295.0) return 0xffffffffu;
  return uint32_t(d);
}

} // namespace

void registerDoubleOps(Table &t) {
  D1("v_add_f64", return asBits64(s.f64(1) + s.f64(2)););
  D1("v_mul_f64", return asBits64(s.f64(1) * s.f64(2)););
  D1("v_fma_f64", return asBits64(std::fma(s.f64(1), s.f64(2), s.f64(3))););
  D1("v_fmac_f64", return asBits64(std::fma(s.f64(1), s.f64(2), asDouble(readLane64(s.w, op(s.w, s.I, 0), s.lane, Ty::F64)))););
  D1("v_max_f64", return asBits64(maxNum(s.f64(1), s.f64(2))););
  D1("v_min_f64", return asBits64(minNum(s.f64(1), s.f64(2))););
  D1("v_ldexp_f64", return asBits64(std::ldexp(s.f64(1), int32_t(s.bits(2, Ty::B32)))););
  D1("v_frexp_mant_f64", double x = s.f64(1); int e; return asBits64(std::isfinite(x) ? std::frexp(x, &e) : x););
  D1("v_trunc_f64", return asBits64(std::trunc(s.f64(1))););
  D1("v_floor_f64", return asBits64(std::floor(s.f64(1))););
  D1("v_ceil_f64", return asBits64(std::ceil(s.f64(1))););
  D1("v_rndne_f64", return asBits64(std::nearbyint(s.f64(1))););
  D1("v_fract_f64", double x = s.f64(1); return asBits64(std::fmin(x - std::floor(x), 0x1.fffffffffffffp-1)););
  D1("v_rcp_f64", return asBits64(1.0 / s.f64(1)););
  D1("v_rsq_f64", return asBits64(1.0 / std::sqrt(s.f64(1))););
  D1("v_sqrt_f64", return asBits64(std::sqrt(s.f64(1))););
  D1("v_trig_preop_f64", return asBits64(trigPreop(s.f64(1), s.bits(2, Ty::B32))););
  D1("v_cvt_f64_i32", return asBits64(double(int32_t(s.bits(1, Ty::B32)))););
  D1("v_cvt_f64_u32", return asBits64(double(s.bits(1, Ty::B32))););
  D1("v_div_fixup_f64", return asBits64(divFixup(s.f64(1), s.f64(2), s.f64(3))););
  // VCC set: scaled back by 2^128 up or down, as v_div_fmas_f32 by 2^64,
  // rounded once: the product is exact in binary128 and the scaling too.
  D1("v_div_fmas_f64", double a = s.f64(1), b = s.f64(2), c = s.f64(3);
     if (!((s.w.vcc >> s.lane) & 1)) return asBits64(std::fma(a, b, c));
     __float128 r = __float128(a) * __float128(b) + __float128(c);
     __float128 scale = exponentOf(c) >= 0x400 ? __float128(0x1p64) * __float128(0x1p64)
                                               : __float128(0x1p-64) * __float128(0x1p-64);
     return asBits64(double(r * scale)););
  // V_DIV_SCALE_F64 (CDNA3 ISA): as V_DIV_SCALE_F32, by 2^128, for the
  // double range (quotients whose exponents differ by 768, a numerator
  // within 53 of the bottom).
  t["v_div_scale_f64"] = [](Wave &w, const Inst &I) {
    uint64_t out[kLanes], flags = 0;
    for (int lane = 0; lane < kLanes; ++lane) {
      if (!w.active(lane))
        continue;
      Src s{w, I, lane, 2};
      double a = s.f64(2), d = s.f64(3), n = s.f64(4), r = a;
      bool vcc = false;
      int ed = exponentOf(d), en = exponentOf(n);
      if (n == 0 || d == 0) {
        r = std::nan("");
      } else if (en - ed >= 768) {
        vcc = true;
        r = a == d ? std::ldexp(a, 128) : a;
      } else if (std::fpclassify(d) == FP_SUBNORMAL) {
        r = std::ldexp(a, 128);
      } else {
        bool rcpTiny = std::fpclassify(1.0 / d) == FP_SUBNORMAL;
        bool qTiny = std::fpclassify(n / d) == FP_SUBNORMAL;
        if (rcpTiny && qTiny) {
          // A huge denominator of a denormal quotient: the denominator
          // scaled down, the quotient's scaling undone by v_div_fmas.
          vcc = true;
          r = a == d ? std::ldexp(a, -128) : a;
        } else if (rcpTiny) {
          r = std::ldexp(a, -128);
        } else if (qTiny) {
          vcc = true;
          r = a == n ? std::ldexp(a, 128) : a;
        } else if (en <= 53) {
          r = std::ldexp(a, 128);
        }
      }
      out[lane] = asBits64(r);
      flags |= uint64_t(vcc) << lane;
    }
    write64(w, I, out);
    writeScalar64(w, op(w, I, 1), flags);
  };
  // Results of 32 bits from f64 sources.
  t["v_cvt_i32_f64"] = [](Wave &w, const Inst &I) {
    each(w, I, 0, 1, [](const Src &s) -> uint32_t { return toI32(s.f64(1)); });
  };
  t["v_cvt_u32_f64"] = [](Wave &w, const Inst &I) {
    each(w, I, 0, 1, [](const Src &s) -> uint32_t { return toU32(s.f64(1)); });
  };
  t["v_frexp_exp_i32_f64"] = [](Wave &w, const Inst &I) {
    each(w, I, 0, 1, [](const Src &s) -> uint32_t {
      double x = s.f64(1);
      int e = 0;
      if (std::isfinite(x))
        std::frexp(x, &e);
      return uint32_t(e);
    });
  };
}

} // namespace tessel::gpusim::amdgcn
