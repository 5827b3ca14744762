//===- Decode.cpp - Modifier handling, immediates, small-float rounding ---===//
#include "Decode.h"

#include <cmath>
#include <cstring>

namespace tessel::gpusim {

void DecodeInput::fail(const std::string &why) const {
  throw SimError("PTX line " + std::to_string(line) + ": " + why + " in '" +
                 text + "'");
}

bool DecodeInput::take(const char *mod) {
  for (size_t i = 0; i < mods.size(); ++i)
    if (mods[i] == mod) {
      mods.erase(mods.begin() + i);
      return true;
    }
  return false;
}

int DecodeInput::takeOneOf(std::initializer_list<const char *> choices) {
  int idx = 0, found = -1;
  for (const char *c : choices) {
    if (take(c)) {
      if (found >= 0)
        fail(std::string("conflicting modifiers (.") + c + ")");
      found = idx;
    }
    ++idx;
  }
  return found;
}

std::vector<PType> DecodeInput::takeTypes() {
  std::vector<PType> out;
  for (size_t i = 0; i < mods.size();) {
    PType t = parseType(mods[i]);
    if (t != PType::None) {
      out.push_back(t);
      mods.erase(mods.begin() + i);
    } else {
      ++i;
    }
  }
  return out;
}

Rounding DecodeInput::takeRounding() {
  static const char *names[] = {"rn", "rz", "rm", "rp", "rna",
                                "rni", "rzi", "rmi", "rpi"};
  Rounding r = Rounding::None;
  for (int i = 0; i < 9; ++i)
    if (take(names[i])) {
      if (r != Rounding::None)
        fail("two rounding modifiers");
      r = Rounding(i + 1);
    }
  return r;
}

StateSpace DecodeInput::takeSpace() {
  int s = takeOneOf({"global", "shared", "local", "param", "const"});
  if (take("shared::cta")) // the CTA's own shared memory
    s = 1;
  if (s < 0)
    return StateSpace::Generic;
  return StateSpace(s + 1);
}

void DecodeInput::finish() const {
  if (!mods.empty())
    fail("unknown or unsupported modifier '." + mods.front() + "' of '" +
         base + "'");
}

PType oneType(DecodeInput &in) {
  std::vector<PType> t = in.takeTypes();
  if (t.size() != 1)
    in.fail("expected one type modifier");
  return t[0];
}

void resolveImm(const DecodeInput &in, Operand &o, PType type) {
  if (o.kind != OpKind::Imm || o.hasSymbol)
    return;
  unsigned w = bitWidth(type);
  if (type == PType::Pred) {
    o.imm = o.immIsFloat ? (o.immFloat != 0) : (o.imm != 0);
  } else if (type == PType::F32) {
    if (o.immIsFloat && o.immFloatWidth == 32)
      return;
    float f = o.immIsFloat ? float(o.immFloat) : float(int64_t(o.imm));
    uint32_t b;
    std::memcpy(&b, &f, 4);
    o.imm = b;
  } else if (type == PType::F64) {
    if (o.immIsFloat && o.immFloatWidth == 64)
      return;
    double d = o.immIsFloat ? o.immFloat : double(int64_t(o.imm));
    std::memcpy(&o.imm, &d, 8);
  } else if (type == PType::F16 || type == PType::BF16) {
    double d = o.immIsFloat ? o.immFloat : double(int64_t(o.imm));
    o.imm = type == PType::F16
                ? roundToSmallFloat(d, 5, 10, Rounding::RN, false)
                : roundToSmallFloat(d, 8, 7, Rounding::RN, false);
  } else if (o.immIsFloat) {
    if (o.immFloatWidth == 0 || o.immFloatWidth != w)
      in.fail("floating-point immediate for a ." + std::string(typeName(type)) +
              " operand");
  } else {
    // A literal must fit the operand's width as a signed or an unsigned
    // value, [-2^(w-1), 2^w - 1] (-1 is a fine .u32, 0xffffffff a fine
    // .s32), as ptxas requires: 4294967296 is not a .u32 that is 0.
    if (w > 0 && w < 64) {
      uint64_t magnitude = o.immNeg ? uint64_t(0) - o.imm : o.imm;
      if (o.immNeg ? magnitude > (uint64_t(1) << (w - 1))
                   : magnitude >> w != 0)
        in.fail("immediate " + std::string(o.immNeg ? "-" : "") +
                std::to_string(magnitude) + " does not fit a ." +
                typeName(type) + " operand");
    }
    o.imm = truncBits(o.imm, w);
    o.immNeg = false; // a second resolveImm sees the operand's bits
  }
}

void expectOperands(const DecodeInput &in, const Inst &inst,
                    const char *kinds) {
  size_t n = std::strlen(kinds);
  if (inst.nops != n)
    in.fail("expected " + std::to_string(n) + " operands, found " +
            std::to_string(inst.nops));
  for (size_t i = 0; i < n; ++i) {
    const Operand &o = inst.ops[i];
    bool ok = true;
    switch (kinds[i]) {
    case 'd':
      ok = o.kind == OpKind::Reg || o.kind == OpKind::Sink;
      break;
    case 's':
      ok = o.kind == OpKind::Reg || o.kind == OpKind::Imm ||
           o.kind == OpKind::Sreg;
      break;
    case 'a':
      ok = o.kind == OpKind::Addr;
      break;
    case 'v':
      ok = o.kind == OpKind::Vec || o.kind == OpKind::Reg;
      break;
    case 'l':
      ok = o.kind == OpKind::Label;
      break;
    }
    if (!ok)
      in.fail("operand " + std::to_string(i + 1) + " has the wrong kind");
    if (kinds[i] != 'd' && o.kind == OpKind::Reg && o.reg2 != kNoReg)
      in.fail("'a|b' is only allowed for destinations");
  }
}

const DecoderTable &decoders() {
  static const DecoderTable table = [] {
    DecoderTable t;
    registerIntOps(t);
    registerFloatOps(t);
    registerConvertOps(t);
    registerMemoryOps(t);
    registerControlOps(t);
    registerWarpOps(t);
    registerTensorCoreOps(t);
    registerMatrixLoadOps(t);
    registerAsyncCopyOps(t);
    registerAtomicOps(t);
    registerWgmmaOps(t);
    registerMBarrierOps(t);
    registerTmaOps(t);
    registerSystemCalls(t);
    return t;
  }();
  return table;
}

// Rounds to a format with a hidden bit, `mbits` stored mantissa bits and an
// exponent bias of 2^(ebits-1)-1; infinities at the all-ones exponent.
uint32_t roundToSmallFloat(double v, int ebits, int mbits, Rounding mode,
                           bool satfinite) {
  const uint32_t expMask = (1u << ebits) - 1;
  const uint32_t signBit = 1u << (ebits + mbits);
  const uint32_t inf = expMask << mbits;
  const uint32_t maxFinite = inf - 1;
  if (std::isnan(v))
    return inf | (1u << (mbits - 1)) | 0; // canonical quiet NaN (positive)
  uint32_t sign = std::signbit(v) ? signBit : 0;
  double a = std::fabs(v);
  auto overflow = [&]() -> uint32_t {
    bool toInf = !satfinite &&
                 (mode == Rounding::RN || mode == Rounding::RNA ||
                  (mode == Rounding::RP && !sign) ||
                  (mode == Rounding::RM && sign));
    return sign | (toInf ? inf : maxFinite);
  };
  if (std::isinf(a))
    return satfinite ? sign | maxFinite : sign | inf;
  if (a == 0)
    return sign;
  const int bias = (1 << (ebits - 1)) - 1;
  int e;
  std::frexp(a, &e); // a = f * 2^e, f in [0.5, 1)
  int exp = e - 1;   // a = 1.x * 2^exp
  int minExp = 1 - bias;
  // Quantum of the result at this magnitude.
  int q = (exp < minExp ? minExp : exp) - mbits;
  double scaled = std::ldexp(a, -q); // integer part = significand bits
  double fl = std::floor(scaled);
  double frac = scaled - fl;
  uint64_t m = uint64_t(fl);
  bool up = false;
  switch (mode) {
  case Rounding::RZ:
    break;
  case Rounding::RM:
    up = sign && frac > 0;
    break;
  case Rounding::RP:
    up = !sign && frac > 0;
    break;
  case Rounding::RNA:
    up = frac >= 0.5;
    break;
  default: // RN: ties to even
    up = frac > 0.5 || (frac == 0.5 && (m & 1));
    break;
  }
  m += up;
  // Rebuild: m * 2^q.
  double r = std::ldexp(double(m), q);
  if (r == 0)
    return sign;
  std::frexp(r, &e);
  exp = e - 1;
  if (exp > bias)
    return overflow();
  if (exp < minExp) // subnormal
    return sign | uint32_t(std::ldexp(r, -(minExp - mbits)));
  uint32_t mant = uint32_t(std::ldexp(r, -(exp - mbits))) & ((1u << mbits) - 1);
  return sign | (uint32_t(exp + bias) << mbits) | mant;
}

double fp8Value(uint32_t bits, bool e5m2, bool fnuz) {
  bits &= 0xff;
  if (fnuz ? bits == 0x80 : !e5m2 && (bits & 0x7f) == 0x7f)
    return NAN;
  if (e5m2 && !fnuz)
    return smallFloatValue(bits, 5, 2);
  int mbits = e5m2 ? 2 : 3, ebits = e5m2 ? 5 : 4;
  int bias = (e5m2 ? 15 : 7) + (fnuz ? 1 : 0);
  uint32_t e = (bits >> mbits) & ((1u << ebits) - 1), m = bits & ((1u << mbits) - 1);
  double v = e == 0 ? std::ldexp(double(m), 1 - bias - mbits)
                    : std::ldexp(double((1u << mbits) | m), int(e) - bias - mbits);
  return bits & 0x80 ? -v : v;
}

double smallFloatValue(uint32_t bits, int ebits, int mbits) {
  const uint32_t expMask = (1u << ebits) - 1;
  const int bias = (1 << (ebits - 1)) - 1;
  bool sign = bits >> (ebits + mbits) & 1;
  uint32_t ex = (bits >> mbits) & expMask;
  uint32_t man = bits & ((1u << mbits) - 1);
  double v;
  if (ex == expMask)
    v = man ? NAN : INFINITY;
  else if (ex == 0)
    v = std::ldexp(double(man), 1 - bias - mbits);
  else
    v = std::ldexp(double(man | (1u << mbits)), int(ex) - bias - mbits);
  return sign ? -v : v;
}

} // namespace tessel::gpusim
