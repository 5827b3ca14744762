//===- HalfOps.cpp - f16/bf16 arithmetic (scalar and packed), fp8 cvt -----===//
//
// add sub mul fma neg abs min max on .f16 .bf16 and the packed .f16x2
// .bf16x2 (each 16-bit half independently, the low half first), as Triton
// emits them for fp16/bf16 element-wise code. Each operation is computed in
// double precision and rounded once to the 16-bit format (.rn, the only
// rounding of these instructions): exact for f16 and for bf16 add/mul, and
// for bf16 fma except when the addends' magnitudes differ by more than 2^45.
// .ftz (f16 only) flushes subnormal inputs and results to sign-preserving
// zero, .sat clamps to [0, 1], .relu turns negative results into +0; a NaN
// result is the canonical NaN 0x7fff. min/max return the non-NaN operand
// unless both are NaN (or .NaN is given), with -0 < +0.
//
// cvt to and from the 8-bit floats of sm_89 (.e4m3x2, .e5m2x2):
//   cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32   d, a, b   (d[15:8] from a)
//   cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a      (d[15:8] from a[31:16])
//   cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2}           d, a      (d[31:16] from a[15:8])
// e4m3 (bias 7) has no infinities, its largest finite value is 448 and
// S.1111.111 is NaN; e5m2 is IEEE-like (bias 15). .satfinite clamps finite
// overflow and infinities to the largest finite value; NaN stays NaN.
//
//===----------------------------------------------------------------------===//
#include "Decode.h"

#include <cmath>

namespace tessel::gpusim {
namespace {

enum HOp : uint8_t { HAdd, HSub, HMul, HFma, HNeg, HAbs, HMin, HMax };

inline double toD(bool bf, uint16_t h) { return bf ? bf16ToDouble(h) : halfToDouble(h); }

inline bool isSub16(bool bf, uint16_t h) {
  uint16_t e = bf ? (h >> 7) & 0xff : (h >> 10) & 0x1f;
  uint16_t m = bf ? h & 0x7f : h & 0x3ff;
  return e == 0 && m != 0;
}

uint16_t round16(bool bf, double v) {
  if (std::isnan(v))
    return 0x7fff;
  return uint16_t(bf ? roundToSmallFloat(v, 8, 7, Rounding::RN, false)
                     : roundToSmallFloat(v, 5, 10, Rounding::RN, false));
}

uint16_t halfOp(const Inst &I, bool bf, uint16_t a, uint16_t b, uint16_t c) {
  const HOp op = HOp(I.mode);
  const bool ftz = I.ftz;
  auto in = [&](uint16_t x) { return ftz && isSub16(bf, x) ? uint16_t(x & 0x8000) : x; };
  a = in(a);
  b = in(b);
  c = in(c);
  uint16_t sign = 0x8000;
  switch (op) {
  case HNeg:
    return std::isnan(toD(bf, a)) ? 0x7fff : uint16_t(a ^ sign);
  case HAbs:
    return std::isnan(toD(bf, a)) ? 0x7fff : uint16_t(a & ~sign);
  case HMin:
  case HMax: {
    double x = toD(bf, a), y = toD(bf, b);
    bool nx = std::isnan(x), ny = std::isnan(y);
    if (nx || ny) {
      if (I.mode2 || (nx && ny)) // .NaN
        return 0x7fff;
      return nx ? b : a;
    }
    if (x == y) { // -0 < +0
      bool aNeg = a & sign;
      return (op == HMax) == aNeg ? b : a;
    }
    return (op == HMax) == (x > y) ? a : b;
  }
  default:
    break;
  }
  double x = toD(bf, a), y = toD(bf, b), r;
  switch (op) {
  case HAdd: r = x + y; break;
  case HSub: r = x - y; break;
  case HMul: r = x * y; break;
  default: r = x * y + toD(bf, c); break; // HFma: the product is exact in double
  }
  if (I.sat)
    r = std::isnan(r) ? 0.0 : r < 0 ? 0.0 : r > 1 ? 1.0 : r;
  if (I.mode3 && !std::isnan(r) && r < 0) // .relu
    r = 0;
  uint16_t bits = round16(bf, r);
  if (ftz && isSub16(bf, bits))
    bits &= sign;
  return bits;
}

template <bool BF, bool PACKED>
void halfArith(ExecContext &c, const Inst &I, uint32_t mask) {
  forLanes(mask, [&](int l) {
    uint32_t a = uint32_t(readOp(c, I.ops[1], l));
    uint32_t b = I.nops > 2 ? uint32_t(readOp(c, I.ops[2], l)) : 0;
    uint32_t cc = I.nops > 3 ? uint32_t(readOp(c, I.ops[3], l)) : 0;
    uint32_t r = halfOp(I, BF, uint16_t(a), uint16_t(b), uint16_t(cc));
    if (PACKED)
      r |= uint32_t(halfOp(I, BF, uint16_t(a >> 16), uint16_t(b >> 16), uint16_t(cc >> 16))) << 16;
    writeReg(c, I.ops[0], l, r);
  });
}

// --- 8-bit floats ----------------------------------------------------------

uint8_t roundE4M3(double v, bool relu) {
  if (std::isnan(v))
    return 0x7f;
  if (relu && v < 0)
    return 0;
  uint8_t sign = std::signbit(v) ? 0x80 : 0;
  double a = std::fabs(v);
  if (a == 0)
    return sign;
  if (std::isinf(a))
    return sign | 0x7e; // .satfinite
  int e;
  std::frexp(a, &e);
  int exp = e - 1;
  int q = (exp < -6 ? -6 : exp) - 3; // quantum: 3 mantissa bits, min normal 2^-6
  double m = std::ldexp(a, -q);
  double fl = std::floor(m), frac = m - fl;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(fl, 2.0) == 1.0))
    fl += 1;
  double r = std::ldexp(fl, q);
  if (r > 448)
    return sign | 0x7e; // .satfinite: the largest finite value
  if (r == 0)
    return sign;
  std::frexp(r, &e);
  exp = e - 1;
  if (exp < -6)
    return sign | uint8_t(std::ldexp(r, 9)); // subnormal: multiples of 2^-9
  uint8_t mant = uint8_t(std::ldexp(r, 3 - exp)) & 7;
  return sign | uint8_t((exp + 7) << 3) | mant;
}

uint8_t roundE5M2(double v, bool relu) {
  if (std::isnan(v))
    return 0x7f;
  if (relu && v < 0)
    return 0;
  return uint8_t(roundToSmallFloat(v, 5, 2, Rounding::RN, true));
}

enum Fp8Form : uint8_t { FromF32, FromF16x2, ToF16x2 };

template <Fp8Form F> void cvtFp8(ExecContext &c, const Inst &I, uint32_t mask) {
  const bool e5m2 = I.mode2, relu = I.mode3;
  auto narrow = [&](double v) { return e5m2 ? roundE5M2(v, relu) : roundE4M3(v, relu); };
  forLanes(mask, [&](int l) {
    uint32_t a = uint32_t(readOp(c, I.ops[1], l));
    uint32_t r;
    if (F == FromF32) {
      uint32_t b = uint32_t(readOp(c, I.ops[2], l));
      r = uint32_t(narrow(double(asF32(a)))) << 8 | narrow(double(asF32(b)));
    } else if (F == FromF16x2) {
      r = uint32_t(narrow(halfToDouble(uint16_t(a >> 16)))) << 8 |
          narrow(halfToDouble(uint16_t(a)));
    } else { // exact: every e4m3 and e5m2 value is an f16
      auto widen = [&](uint8_t x) {
        double v = fp8Value(x, e5m2);
        if (relu && !std::isnan(v) && v < 0)
          v = 0;
        return uint32_t(round16(false, v));
      };
      r = widen(uint8_t(a >> 8)) << 16 | widen(uint8_t(a));
    }
    writeReg(c, I.ops[0], l, r);
  });
}

} // namespace

bool isHalfArith(const DecodeInput &in) {
  for (const std::string &m : in.mods)
    if (m == "f16" || m == "bf16" || m == "f16x2" || m == "bf16x2")
      return true;
  return false;
}

void decodeHalfArith(DecodeInput &in, Inst &inst) {
  const std::string &b = in.base;
  static const std::pair<const char *, HOp> ops[] = {
      {"add", HAdd}, {"sub", HSub}, {"mul", HMul}, {"fma", HFma},
      {"neg", HNeg}, {"abs", HAbs}, {"min", HMin}, {"max", HMax}};
  int op = -1;
  for (auto &[n, o] : ops)
    if (b == n)
      op = o;
  if (op < 0)
    in.fail("'" + b + "' on 16-bit floats is not simulated");
  Rounding r = in.takeRounding();
  inst.ftz = in.take("ftz");
  inst.sat = in.take("sat");
  inst.mode3 = in.take("relu");
  inst.mode2 = in.take("NaN");
  PType t = oneType(in);
  in.finish();
  bool bf = t == PType::BF16 || t == PType::BF16x2;
  bool packed = t == PType::F16x2 || t == PType::BF16x2;
  bool arith = op <= HFma;
  if (r != Rounding::None && (r != Rounding::RN || !arith))
    in.fail("16-bit float arithmetic rounds with .rn only");
  if (op == HFma && r != Rounding::RN)
    in.fail("fma needs .rn");
  if (bf && (inst.ftz || inst.sat))
    in.fail(".ftz and .sat apply to .f16 and .f16x2 only");
  if (inst.sat && !arith)
    in.fail(".sat not allowed");
  if (inst.mode3 && op != HFma)
    in.fail(".relu applies to fma");
  if (inst.mode3 && inst.sat)
    in.fail(".relu and .sat exclude each other");
  if (inst.mode2 && op != HMin && op != HMax)
    in.fail(".NaN applies to min/max");
  bool one = op == HNeg || op == HAbs;
  expectOperands(in, inst, op == HFma ? "dsss" : one ? "ds" : "dss");
  for (unsigned i = 1; i < inst.nops; ++i) {
    Operand &o = inst.ops[i];
    if (o.kind == OpKind::Imm && o.immIsFloat)
      in.fail("a 16-bit float operand must be a register or a bit pattern");
    resolveImm(in, o, packed ? PType::B32 : PType::B16);
  }
  inst.type = t;
  inst.mode = uint8_t(op);
  inst.cls = InstClass::FloatArith;
  inst.exec = bf ? (packed ? halfArith<true, true> : halfArith<true, false>)
                 : (packed ? halfArith<false, true> : halfArith<false, false>);
}

void setpHalf(ExecContext &c, const Inst &I, uint32_t mask) {
  const bool bf = I.type == PType::BF16;
  forLanes(mask, [&](int l) {
    uint16_t ha = uint16_t(readOp(c, I.ops[1], l)), hb = uint16_t(readOp(c, I.ops[2], l));
    if (I.ftz) {
      if (isSub16(bf, ha)) ha &= 0x8000;
      if (isSub16(bf, hb)) hb &= 0x8000;
    }
    double a = toD(bf, ha), b = toD(bf, hb);
    bool un = std::isnan(a) || std::isnan(b);
    bool r;
    switch (CmpOp(I.mode)) {
    case EQ: r = !un && a == b; break;
    case NE: r = !un && a != b; break;
    case LT: r = !un && a < b; break;
    case LE: r = !un && a <= b; break;
    case GT: r = !un && a > b; break;
    case GE: r = !un && a >= b; break;
    case EQU: r = un || a == b; break;
    case NEU: r = un || a != b; break;
    case LTU: r = un || a < b; break;
    case LEU: r = un || a <= b; break;
    case GTU: r = un || a > b; break;
    case GEU: r = un || a >= b; break;
    case NUM: r = !un; break;
    case NAN_: r = un; break;
    default:
      throw LaneError(l, "comparison not defined on floats");
    }
    writeSetp(c, I, l, r);
  });
}

bool isFp8Cvt(const DecodeInput &in) {
  for (const std::string &m : in.mods)
    if (m == "e4m3x2" || m == "e5m2x2")
      return true;
  return false;
}

void decodeFp8Cvt(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::Convert;
  Rounding r = in.takeRounding();
  bool satfinite = in.take("satfinite");
  inst.mode3 = in.take("relu");
  std::vector<PType> t = in.takeTypes();
  in.finish();
  if (r != Rounding::RN || t.size() != 2)
    in.fail("cvt with 8-bit floats needs .rn and two types");
  PType d = t[0], s = t[1];
  bool toFp8 = d == PType::E4M3x2 || d == PType::E5M2x2;
  if (toFp8) {
    if (!satfinite)
      in.fail("cvt to .e4m3x2/.e5m2x2 needs .satfinite");
    inst.mode2 = d == PType::E5M2x2;
    if (s == PType::F32) {
      expectOperands(in, inst, "dss");
      resolveImm(in, inst.ops[1], s);
      resolveImm(in, inst.ops[2], s);
      inst.exec = cvtFp8<FromF32>;
    } else if (s == PType::F16x2) {
      expectOperands(in, inst, "ds");
      inst.exec = cvtFp8<FromF16x2>;
    } else {
      in.fail("cvt to 8-bit floats from this type is not simulated");
    }
  } else {
    if (d != PType::F16x2 || !(s == PType::E4M3x2 || s == PType::E5M2x2))
      in.fail("cvt from 8-bit floats goes to .f16x2");
    if (satfinite)
      in.fail(".satfinite does not apply to cvt from 8-bit floats");
    inst.mode2 = s == PType::E5M2x2;
    expectOperands(in, inst, "ds");
    inst.exec = cvtFp8<ToF16x2>;
  }
  inst.type = d;
  inst.type2 = s;
}

} // namespace tessel::gpusim
