//===- FloatOps.cpp - Floating-point arithmetic ---------------------------===//
//
// f32 and f64: add sub mul fma mad div abs neg min max copysign, rcp sqrt
// rsqrt ex2 lg2 sin cos tanh, setp on floats. Directed roundings (.rz .rm
// .rp) switch the host FPU's rounding mode around the instruction (this file
// is compiled with -frounding-math). `.ftz` flushes subnormal inputs and
// results to sign-preserving zero; `.sat` clamps to [0, 1] (NaN to 0).
// A NaN result of f32 arithmetic is the canonical NaN 0x7fffffff.
//
// rcp.approx.ftz.f64 is the ISA's gross approximation: the reciprocal of the
// upper 32 bits of a (1.11.20 format), its lower 32 mantissa bits zero.
// Approximate instructions (.approx: rcp sqrt rsqrt ex2 lg2 sin cos tanh,
// div.approx/div.full) are computed in double precision and rounded to
// nearest: the result is within 0.5 ulp of the exact value (1 ulp for
// div.full via double then float), inside every bound the ISA documents
// (ex2/lg2 2 ulp, rcp/sqrt/rsqrt approx 1 ulp, div.full 2 ulp, sin/cos
// absolute error 2^-20.5 over [-pi, pi], tanh relative 2^-10.987).
//
//===----------------------------------------------------------------------===//
#include "Decode.h"

#include <cfenv>
#include <cfloat>
#include <cmath>

namespace tessel::gpusim {
namespace {

enum FOp : uint8_t {
  FAdd, FSub, FMul, FFma, FDiv, FDivApprox, FAbs, FNeg, FMin, FMax, FMinNaN,
  FMaxNaN, FCopysign, FRcp, FSqrt, FRsqrt, FEx2, FLg2, FSin, FCos, FTanh,
  FRcpHi,
};

struct RoundScope {
  int old = -1;
  explicit RoundScope(uint8_t r) {
    Rounding m = Rounding(r);
    int mode = m == Rounding::RZ ? FE_TOWARDZERO
             : m == Rounding::RM ? FE_DOWNWARD
             : m == Rounding::RP ? FE_UPWARD : -1;
    if (mode >= 0) {
      old = std::fegetround();
      std::fesetround(mode);
    }
  }
  ~RoundScope() {
    if (old >= 0)
      std::fesetround(old);
  }
};

template <class T> T flush(T x) {
  if (std::fpclassify(x) == FP_SUBNORMAL)
    return std::copysign(T(0), x);
  return x;
}

template <class T> uint64_t toBits(T v) {
  if constexpr (sizeof(T) == 4) {
    if (std::isnan(v))
      return 0x7fffffffu;
    return bitsF32(v);
  } else {
    return bitsF64(v);
  }
}
template <class T> T fromBits(uint64_t b) {
  if constexpr (sizeof(T) == 4) return asF32(b);
  else return asF64(b);
}

template <class T> T minmax(T a, T b, bool isMax, bool nanProp) {
  if (std::isnan(a) || std::isnan(b)) {
    if (nanProp || (std::isnan(a) && std::isnan(b)))
      return T(NAN);
    return std::isnan(a) ? b : a;
  }
  if (a == b) // -0 < +0
    return isMax ? (std::signbit(a) ? b : a) : (std::signbit(a) ? a : b);
  return isMax ? (a > b ? a : b) : (a < b ? a : b);
}

template <class T, FOp OP, bool FTZ, bool SAT>
void floatOp(ExecContext &c, const Inst &I, uint32_t mask) {
  RoundScope rs(I.rnd);
  forLanes(mask, [&](int l) {
    T a = fromBits<T>(readOp(c, I.ops[1], l));
    T b = I.nops > 2 ? fromBits<T>(readOp(c, I.ops[2], l)) : T(0);
    if (FTZ) { a = flush(a); b = flush(b); }
    T r;
    if constexpr (OP == FAdd) r = a + b;
    else if constexpr (OP == FSub) r = a - b;
    else if constexpr (OP == FMul) r = a * b;
    else if constexpr (OP == FFma) {
      T cc = fromBits<T>(readOp(c, I.ops[3], l));
      if (FTZ) cc = flush(cc);
      r = std::fma(a, b, cc);
    } else if constexpr (OP == FDiv) {
      if (I.mode) r = T(double(a) / double(b)); // div.full: double, then round
      else r = a / b;
    } else if constexpr (OP == FDivApprox) {
      // a * (1/b); for 2^126 <= |b| <= 2^128 the ISA specifies zero.
      if (std::isfinite(b) && std::fabs(b) >= T(8.507059e37f) && std::isfinite(a)) r = T(0) * a * b;
      else r = T(double(a) / double(b));
    } else if constexpr (OP == FAbs) r = std::fabs(a);
    else if constexpr (OP == FNeg) r = -a;
    else if constexpr (OP == FMin) r = minmax(a, b, false, false);
    else if constexpr (OP == FMax) r = minmax(a, b, true, false);
    else if constexpr (OP == FMinNaN) r = minmax(a, b, false, true);
    else if constexpr (OP == FMaxNaN) r = minmax(a, b, true, true);
    else if constexpr (OP == FCopysign) r = std::copysign(b, a);
    else if constexpr (OP == FRcp) r = I.mode ? T(1.0 / double(a)) : T(1) / a;
    else if constexpr (OP == FSqrt) r = I.mode ? T(std::sqrt(double(a))) : std::sqrt(a);
    else if constexpr (OP == FRsqrt) r = T(1.0 / std::sqrt(double(a)));
    else if constexpr (OP == FEx2) r = T(std::exp2(double(a)));
    else if constexpr (OP == FLg2) r = T(std::log2(double(a)));
    else if constexpr (OP == FSin) r = T(std::sin(double(a)));
    else if constexpr (OP == FCos) r = T(std::cos(double(a)));
    else if constexpr (OP == FTanh) r = T(std::tanh(double(a)));
    else if constexpr (OP == FRcpHi) {
      // rcp.approx.ftz.f64: the reciprocal of a's upper 32 bits (sign,
      // exponent, 20 mantissa bits), kept to its upper 32 bits.
      double hi = asF64(bitsF64(double(a)) & 0xffffffff00000000ull);
      double q = flush(1.0 / hi);
      r = T(std::isnan(q) ? q : asF64(bitsF64(q) & 0xffffffff00000000ull));
    }
    if (SAT) r = std::isnan(r) ? T(0) : r < T(0) ? T(0) : r > T(1) ? T(1) : r;
    if (FTZ) r = flush(r);
    uint64_t bits = toBits<T>(r);
    if constexpr (OP == FAbs || OP == FNeg || OP == FCopysign)
      if (std::isnan(r)) { // bit operations keep the payload
        uint64_t ia = readOp(c, I.ops[OP == FCopysign ? 2 : 1], l);
        constexpr uint64_t sign = sizeof(T) == 4 ? 0x80000000ull : 0x8000000000000000ull;
        uint64_t s = OP == FAbs ? 0 : OP == FNeg ? (~ia & sign) : (readOp(c, I.ops[1], l) & sign);
        bits = (ia & ~sign) | s;
      }
    writeReg(c, I.ops[0], l, bits);
  });
}

template <class T, FOp OP> Handler pickF(bool ftz, bool sat) {
  if (ftz) return sat ? floatOp<T, OP, true, true> : floatOp<T, OP, true, false>;
  return sat ? floatOp<T, OP, false, true> : floatOp<T, OP, false, false>;
}

template <FOp OP> Handler pickT(DecodeInput &in, PType t, bool ftz, bool sat,
                                bool f64Ftz = false) {
  if (t == PType::F32) return pickF<float, OP>(ftz, sat);
  if (t == PType::F64) {
    if ((ftz && !f64Ftz) || sat) in.fail(".ftz/.sat apply to .f32 only");
    return pickF<double, OP>(ftz, false);
  }
  in.fail(std::string("type .") + typeName(t) + " is not simulated for '" + in.base + "' yet");
}

template <class T, CmpOp OP, bool FTZ>
void setpFloat(ExecContext &c, const Inst &I, uint32_t mask) {
  forLanes(mask, [&](int l) {
    T a = fromBits<T>(readOp(c, I.ops[1], l)), b = fromBits<T>(readOp(c, I.ops[2], l));
    if (FTZ) { a = flush(a); b = flush(b); }
    bool un = std::isnan(a) || std::isnan(b);
    bool r;
    switch (OP) {
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
    default: r = un; break;
    }
    writeSetp(c, I, l, r);
  });
}

template <class T, bool FTZ> Handler setpFor(DecodeInput &in, uint8_t op) {
  switch (op) {
#define C(X) case X: return setpFloat<T, X, FTZ>;
  C(EQ) C(NE) C(LT) C(LE) C(GT) C(GE) C(EQU) C(NEU) C(LTU) C(LEU) C(GTU) C(GEU) C(NUM) C(NAN_)
#undef C
  default: in.fail("comparison not defined on floats");
  }
}

void decodeSpecial(DecodeInput &in, Inst &inst);

} // namespace

void decodeFloatArith(DecodeInput &in, Inst &inst) {
  const std::string &b = in.base;
  if (b != "setp" && b != "div" && isHalfArith(in))
    return decodeHalfArith(in, inst); // HalfOps.cpp
  inst.cls = InstClass::FloatArith;
  if (b == "setp") {
    decodeCompare(in, inst);
    PType t = inst.type;
    if (t == PType::F32)
      inst.exec = inst.ftz ? setpFor<float, true>(in, inst.mode) : setpFor<float, false>(in, inst.mode);
    else if (t == PType::F64 && !inst.ftz)
      inst.exec = setpFor<double, false>(in, inst.mode);
    else if ((t == PType::F16 || (t == PType::BF16 && !inst.ftz)) &&
             (inst.mode < LO || inst.mode >= EQU))
      inst.exec = setpHalf; // HalfOps.cpp
    else
      in.fail(std::string("setp on .") + typeName(t) + " is not simulated yet");
    return;
  }
  if (b == "div") {
    int kind = in.takeOneOf({"approx", "full"});
    Rounding r = in.takeRounding();
    bool ftz = in.take("ftz");
    PType t = oneType(in);
    in.finish();
    expectOperands(in, inst, "dss");
    resolveImm(in, inst.ops[1], t);
    resolveImm(in, inst.ops[2], t);
    if (kind >= 0 && (r != Rounding::None || t != PType::F32))
      in.fail("div.approx/div.full take .f32 and no rounding");
    if (kind < 0 && (r == Rounding::None || int(r) > int(Rounding::RP)))
      in.fail("div needs .approx, .full or a rounding modifier");
    inst.rnd = uint8_t(r);
    inst.mode = kind == 1;
    inst.cls = InstClass::Special;
    inst.exec = kind == 0 ? pickT<FDivApprox>(in, t, ftz, false) : pickT<FDiv>(in, t, ftz, false);
    return;
  }
  Rounding r = in.takeRounding();
  bool ftz = in.take("ftz");
  bool sat = in.take("sat");
  bool nan = in.take("NaN");
  PType t = oneType(in);
  in.finish();
  if (int(r) > int(Rounding::RP)) in.fail("integer rounding on a float operation");
  inst.rnd = uint8_t(r);
  bool three = b == "mad" || b == "fma";
  bool one = b == "abs" || b == "neg";
  expectOperands(in, inst, three ? "dsss" : one ? "ds" : "dss");
  for (unsigned i = 1; i < inst.nops; ++i) resolveImm(in, inst.ops[i], t);
  bool roundOk = b == "add" || b == "sub" || b == "mul" || three;
  if (r != Rounding::None && !roundOk) in.fail("rounding modifier not allowed");
  if (sat && !(roundOk || b == "div")) in.fail(".sat not allowed");
  if (nan && b != "min" && b != "max") in.fail(".NaN applies to min/max");
  if (b == "fma" && r == Rounding::None) in.fail("fma needs a rounding modifier");
  if (b == "add") inst.exec = pickT<FAdd>(in, t, ftz, sat);
  else if (b == "sub") inst.exec = pickT<FSub>(in, t, ftz, sat);
  else if (b == "mul") inst.exec = pickT<FMul>(in, t, ftz, sat);
  else if (three) inst.exec = pickT<FFma>(in, t, ftz, sat);
  else if (b == "abs") inst.exec = pickT<FAbs>(in, t, ftz, false);
  else if (b == "neg") inst.exec = pickT<FNeg>(in, t, ftz, false);
  else if (b == "min") inst.exec = nan ? pickT<FMinNaN>(in, t, ftz, false) : pickT<FMin>(in, t, ftz, false);
  else if (b == "max") inst.exec = nan ? pickT<FMaxNaN>(in, t, ftz, false) : pickT<FMax>(in, t, ftz, false);
  else in.fail("'" + b + "' is not defined on floats");
}

namespace {
void decodeSpecial(DecodeInput &in, Inst &inst) {
  const std::string &b = in.base;
  inst.cls = InstClass::Special;
  bool approx = in.take("approx");
  Rounding r = in.takeRounding();
  bool ftz = in.take("ftz");
  PType t = oneType(in);
  in.finish();
  if (b == "copysign") {
    expectOperands(in, inst, "dss");
    resolveImm(in, inst.ops[1], t);
    resolveImm(in, inst.ops[2], t);
    inst.cls = InstClass::FloatArith;
    inst.exec = pickT<FCopysign>(in, t, false, false);
    return;
  }
  expectOperands(in, inst, "ds");
  resolveImm(in, inst.ops[1], t);
  bool roundable = b == "rcp" || b == "sqrt";
  if (roundable) {
    if (approx == (r != Rounding::None) || int(r) > int(Rounding::RP))
      in.fail("'" + b + "' needs either .approx or one of .rn .rz .rm .rp");
    inst.rnd = uint8_t(r);
    inst.mode = approx; // approx: computed in double and rounded
    if (approx && t == PType::F64) {
      if (!(b == "rcp" && ftz))
        in.fail("only rcp.approx.ftz.f64 exists among the f64 approximations");
      inst.exec = pickT<FRcpHi>(in, t, true, false, true);
      return;
    }
    inst.exec = b == "rcp" ? pickT<FRcp>(in, t, ftz, false) : pickT<FSqrt>(in, t, ftz, false);
    return;
  }
  if (!approx || r != Rounding::None)
    in.fail("'" + b + "' needs .approx");
  if (t == PType::F64 && !(b == "rsqrt" || ((b == "ex2" || b == "lg2") && false)))
    in.fail("'" + b + ".approx.f64' is not simulated");
  if (b == "tanh" && ftz) in.fail("tanh.approx takes no .ftz");
  // rsqrt.approx.f64 and rsqrt.approx.ftz.f64 both exist.
  inst.exec = b == "rsqrt" ? pickT<FRsqrt>(in, t, ftz, false, true)
            : b == "ex2" ? pickT<FEx2>(in, t, ftz, false)
            : b == "lg2" ? pickT<FLg2>(in, t, ftz, false)
            : b == "sin" ? pickT<FSin>(in, t, ftz, false)
            : b == "cos" ? pickT<FCos>(in, t, ftz, false)
                         : pickT<FTanh>(in, t, false, false);
}
} // namespace

void registerFloatOps(DecoderTable &t) {
  for (const char *n : {"fma", "copysign", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh"})
    t[n] = std::string(n) == "fma" ? decodeFloatArith : decodeSpecial;
}

} // namespace tessel::gpusim
