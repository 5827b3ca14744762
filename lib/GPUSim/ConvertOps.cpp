//===- ConvertOps.cpp - cvt and cvta ---------------------------------------===//
//
// cvt between every integer width, f16, bf16, f32 and f64, with the integer
// roundings (.rni .rzi .rmi .rpi: to an integral value), float roundings
// (.rn .rz .rm .rp), .ftz, .sat and .relu, and the packed .f16x2/.bf16x2
// forms from two f32 values (d[31:16] from a, d[15:0] from b), and
// cvt.rna.tf32.f32 (an f32 rounded to tf32's 10 mantissa bits, ties away
// from zero, in a .b32 whose low 13 bits are zero).
// Float-to-integer conversions saturate to the destination range and turn
// NaN into 0, as the ISA specifies. Sources are widened exactly (to int64 or
// double) and rounded once to the destination.
//
//===----------------------------------------------------------------------===//
#include "Decode.h"

#include <cfenv>
#include <cfloat>
#include <climits>
#include <cmath>

namespace tessel::gpusim {
namespace {

double readFloat(PType t, uint64_t bits) {
  switch (t) {
  case PType::F16: return halfToDouble(uint16_t(bits));
  case PType::BF16: return bf16ToDouble(uint16_t(bits));
  case PType::F32: return double(asF32(bits));
  default: return asF64(bits);
  }
}

double roundIntegral(double v, Rounding r) {
  switch (r) {
  case Rounding::RZI: return std::trunc(v);
  case Rounding::RMI: return std::floor(v);
  case Rounding::RPI: return std::ceil(v);
  default: return std::nearbyint(v); // ties to even in the default mode
  }
}

uint64_t floatToInt(double v, PType d) {
  unsigned w = bitWidth(d);
  if (std::isnan(v))
    return 0;
  if (isSigned(d)) {
    double lim = std::ldexp(1.0, int(w) - 1);
    int64_t hi = w == 64 ? INT64_MAX : (int64_t(1) << (w - 1)) - 1;
    int64_t lo = -hi - 1;
    if (v <= -lim) return truncBits(uint64_t(lo), w);
    if (v >= lim) return truncBits(uint64_t(hi), w);
    return truncBits(uint64_t(int64_t(v)), w);
  }
  double hi = std::ldexp(1.0, int(w));
  if (v <= 0) return 0;
  if (v >= hi) return w == 64 ? UINT64_MAX : (uint64_t(1) << w) - 1;
  return uint64_t(v);
}

template <class F> double withRounding(Rounding r, F f) {
  int mode = r == Rounding::RZ ? FE_TOWARDZERO : r == Rounding::RM ? FE_DOWNWARD
           : r == Rounding::RP ? FE_UPWARD : FE_TONEAREST;
  int old = std::fegetround();
  std::fesetround(mode);
  double v = f();
  std::fesetround(old);
  return v;
}

// An integer as a double rounded to odd: exact up to 53 bits; beyond, the
// bits cut off set the last one kept, so that rounding it again to f16 or
// bf16 rounds once (as double(x) it rounded twice: cvt.rn.bf16.s64 of
// 2^62 + 2^54 + 1, just above a bf16 midpoint, gave 2^62, not 2^62 + 2^55).
double intToOddDouble(bool sgn, int64_t si, uint64_t ui) {
  bool negative = sgn && si < 0;
  uint64_t mag = !sgn ? ui : negative ? 0 - uint64_t(si) : uint64_t(si);
  int drop = 0;
  while ((mag >> drop) >> 53)
    ++drop;
  uint64_t kept = mag >> drop;
  if (drop && (mag & ((uint64_t(1) << drop) - 1)))
    kept |= 1;
  double v = std::ldexp(double(kept), drop);
  return negative ? -v : v;
}

// Converts one value; src bits are in the source type.
uint64_t convert(const Inst &I, PType dt, PType st, uint64_t bits) {
  Rounding r = Rounding(I.rnd);
  bool relu = I.mode;
  if (isFloat(st)) {
    double v = readFloat(st, bits);
    if (I.ftz && st == PType::F32 && std::fpclassify(float(v)) == FP_SUBNORMAL)
      v = std::copysign(0.0, v);
    if (!isFloat(dt)) { // float -> int
      return floatToInt(roundIntegral(v, r), dt);
    }
    if (int(r) >= int(Rounding::RNI)) // round to integral, same type family
      v = roundIntegral(v, r);
    if (I.sat)
      v = std::isnan(v) ? 0.0 : v < 0 ? 0.0 : v > 1 ? 1.0 : v;
    if (relu && !std::isnan(v) && v < 0)
      v = 0;
    switch (dt) {
    case PType::F64:
      return bitsF64(v);
    case PType::F32: {
      float f = r == Rounding::RN || r == Rounding::None || int(r) >= int(Rounding::RNI)
                    ? float(v)
                    : float(withRounding(r, [&] { volatile double x = v; return double(float(x)); }));
      if (I.ftz && std::fpclassify(f) == FP_SUBNORMAL) f = std::copysign(0.0f, f);
      if (std::isnan(f)) return 0x7fffffffu;
      return bitsF32(f);
    }
    case PType::F16:
      return roundToSmallFloat(v, 5, 10, r == Rounding::None ? Rounding::RN : r, false);
    case PType::BF16:
      return roundToSmallFloat(v, 8, 7, r == Rounding::None ? Rounding::RN : r, false);
    default:
      return 0;
    }
  }
  // Integer source.
  unsigned sw = bitWidth(st);
  bool sgn = isSigned(st);
  int64_t si = signExtend(bits, sw);
  uint64_t ui = truncBits(bits, sw);
  if (!isFloat(dt)) {
    unsigned dw = bitWidth(dt);
    if (!I.sat)
      return truncBits(sgn ? uint64_t(si) : ui, dw);
    if (isSigned(dt)) {
      int64_t hi = dw == 64 ? INT64_MAX : (int64_t(1) << (dw - 1)) - 1, lo = -hi - 1;
      if (sgn) return truncBits(uint64_t(si < lo ? lo : si > hi ? hi : si), dw);
      return truncBits(ui > uint64_t(hi) ? uint64_t(hi) : ui, dw);
    }
    uint64_t hi = dw == 64 ? UINT64_MAX : (uint64_t(1) << dw) - 1;
    if (sgn) return si < 0 ? 0 : (uint64_t(si) > hi ? hi : uint64_t(si));
    return ui > hi ? hi : ui;
  }
  switch (dt) {
  case PType::F32: {
    float f = float(withRounding(r, [&] {
      volatile int64_t a = si; volatile uint64_t b = ui;
      return sgn ? double(float(a)) : double(float(b));
    }));
    return bitsF32(f);
  }
  case PType::F64:
    return bitsF64(withRounding(r, [&] {
      volatile int64_t a = si; volatile uint64_t b = ui;
      return sgn ? double(a) : double(b);
    }));
  case PType::F16:
    return roundToSmallFloat(intToOddDouble(sgn, si, ui), 5, 10, r, false);
  case PType::BF16:
    return roundToSmallFloat(intToOddDouble(sgn, si, ui), 8, 7, r, false);
  default:
    return 0;
  }
}

void cvtOp(ExecContext &c, const Inst &I, uint32_t mask) {
  // An 8-bit integer result fills its (wider) register: sign-extended for
  // .s8, zero-extended for .u8 (PTX ISA, cvt: "the result is extended to the
  // destination register width").
  bool extendS8 = I.type == PType::S8;
  forLanes(mask, [&](int l) {
    uint64_t r = convert(I, I.type, I.type2, readOp(c, I.ops[1], l));
    if (extendS8)
      r = uint64_t(int64_t(int8_t(uint8_t(r))));
    writeReg(c, I.ops[0], l, r);
  });
}

void cvtPackOp(ExecContext &c, const Inst &I, uint32_t mask) {
  PType half = I.type == PType::F16x2 ? PType::F16 : PType::BF16;
  forLanes(mask, [&](int l) {
    uint64_t hi = convert(I, half, PType::F32, readOp(c, I.ops[1], l));
    uint64_t lo = convert(I, half, PType::F32, readOp(c, I.ops[2], l));
    writeReg(c, I.ops[0], l, (hi & 0xffff) << 16 | (lo & 0xffff));
  });
}

// f32 -> tf32, round to nearest with ties away from zero: half a tf32 unit
// (bit 12) added to the magnitude carries into the kept bits exactly when
// the dropped part is at least half. Overflow carries into the exponent and
// gives infinity, as IEEE rounding does; NaN stays NaN.
void cvtTf32Op(ExecContext &c, const Inst &I, uint32_t mask) {
  forLanes(mask, [&](int l) {
    uint32_t f = uint32_t(readOp(c, I.ops[1], l));
    uint32_t r = (f & 0x7fffffffu) > 0x7f800000u ? 0x7fffffffu
                                                 : (f + 0x1000u) & 0xffffe000u;
    writeReg(c, I.ops[0], l, r);
  });
}

void decodeCvt(DecodeInput &in, Inst &inst) {
  if (isFp8Cvt(in))
    return decodeFp8Cvt(in, inst); // HalfOps.cpp
  inst.cls = InstClass::Convert;
  Rounding r = in.takeRounding();
  inst.ftz = in.take("ftz");
  inst.sat = in.take("sat");
  inst.mode = in.take("relu");
  std::vector<PType> t = in.takeTypes();
  in.finish(); // .satfinite forms: not simulated yet
  if (t.size() != 2)
    in.fail("cvt needs a destination and a source type");
  PType d = t[0], s = t[1];
  inst.type = d;
  inst.type2 = s;
  inst.rnd = uint8_t(r);
  bool irnd = int(r) >= int(Rounding::RNI), frnd = r != Rounding::None && !irnd;
  if (d == PType::TF32 || r == Rounding::RNA) {
    if (r != Rounding::RNA || d != PType::TF32 || s != PType::F32 || inst.ftz ||
        inst.sat || inst.mode)
      in.fail("of the tf32 conversions only cvt.rna.tf32.f32 is simulated");
    expectOperands(in, inst, "ds");
    resolveImm(in, inst.ops[1], s);
    inst.exec = cvtTf32Op;
    return;
  }
  if (d == PType::F16x2 || d == PType::BF16x2) {
    if (s != PType::F32 || !frnd)
      in.fail("packed cvt needs .f32 sources and a float rounding");
    expectOperands(in, inst, "dss");
    resolveImm(in, inst.ops[1], s);
    resolveImm(in, inst.ops[2], s);
    inst.exec = cvtPackOp;
    return;
  }
  auto known = [](PType x) { return isInteger(x) || isFloat(x); };
  if (!known(d) || !known(s) || d == PType::TF32 || s == PType::TF32 ||
      d == PType::B8 || s == PType::B8)
    in.fail("cvt between these types is not simulated");
  bool fd = isFloat(d), fs = isFloat(s);
  if (fs && !fd && !irnd)
    in.fail("float-to-integer cvt needs .rni, .rzi, .rmi or .rpi");
  if (!fs && fd && !frnd)
    in.fail("integer-to-float cvt needs .rn, .rz, .rm or .rp");
  if (!fs && !fd && r != Rounding::None)
    in.fail("integer-to-integer cvt takes no rounding");
  if (fs && fd) {
    bool narrowing = bitWidth(d) < bitWidth(s) ||
                     (bitWidth(d) == bitWidth(s) && d != s);
    if (narrowing && !frnd)
      in.fail("narrowing float cvt needs .rn, .rz, .rm or .rp");
    if (!narrowing && frnd)
      in.fail("a widening float cvt takes no float rounding");
    if (d == s && !irnd && !inst.sat && !inst.ftz)
      in.fail("cvt to the same float type needs a modifier");
    if (irnd && d != s)
      in.fail("integer rounding between different float types");
  }
  if (inst.mode && !(d == PType::F16 || d == PType::BF16))
    in.fail(".relu applies to f16/bf16 destinations");
  if (inst.ftz && s != PType::F32 && d != PType::F32)
    in.fail(".ftz applies to f32 conversions");
  if (inst.sat && !fd && fs)
    ; // float->int saturates anyway
  expectOperands(in, inst, "ds");
  resolveImm(in, inst.ops[1], s);
  inst.exec = cvtOp;
}

void cvtaOp(ExecContext &c, const Inst &I, uint32_t mask) {
  uint64_t base = I.space == StateSpace::Shared ? kSharedWindow : kLocalWindow;
  forLanes(mask, [&](int l) {
    uint64_t a = readOp(c, I.ops[1], l);
    uint64_t r;
    if (I.mode) { // to generic -> space
      if (a < base || a >= base + kWindowSize)
        throw LaneError(l, "cvta.to." + std::string(spaceName(I.space)) +
                               ": generic address is not in the " + spaceName(I.space) + " window");
      r = a - base;
    } else {
      r = a + base;
    }
    writeReg(c, I.ops[0], l, truncBits(r, bitWidth(I.type)));
  });
}
void cvtaGlobal(ExecContext &c, const Inst &I, uint32_t mask) {
  forLanes(mask, [&](int l) { writeReg(c, I.ops[0], l, readOp(c, I.ops[1], l)); });
}

void decodeCvta(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::Convert;
  inst.mode = in.take("to");
  StateSpace s = in.takeSpace();
  PType t = oneType(in);
  in.finish();
  if (t != PType::U64 && t != PType::U32)
    in.fail("cvta takes .u32 or .u64");
  expectOperands(in, inst, "ds");
  inst.space = s;
  inst.type = t;
  if (inst.ops[1].kind == OpKind::Imm && inst.ops[1].hasSymbol &&
      inst.ops[1].symSpace != s)
    in.fail("variable in another state space");
  if (s == StateSpace::Global)
    inst.exec = cvtaGlobal; // global addresses are generic addresses
  else if (s == StateSpace::Shared || s == StateSpace::Local)
    inst.exec = cvtaOp;
  else
    in.fail("cvta for this state space is not simulated");
}

} // namespace

void registerConvertOps(DecoderTable &t) {
  t["cvt"] = decodeCvt;
  t["cvta"] = decodeCvta;
}

} // namespace tessel::gpusim
