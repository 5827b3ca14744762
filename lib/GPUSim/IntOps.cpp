//===- IntOps.cpp - Integer, bit and move instructions --------------------===//
//
// add sub mul mad (.lo .hi .wide) div rem min max abs neg (.sat on s32 add/
// sub), the extended-precision forms with the carry flag (add.cc addc sub.cc
// subc mad.cc madc), and or xor not cnot, shl shr, popc clz brev bfe bfi bfind prmt lop3 shf,
// setp on integers, selp, mov (with vector pack/unpack). Values are kept as
// zero-extended bits of their type in 64-bit register slots.
//
//===----------------------------------------------------------------------===//
#include "Decode.h"

#include <algorithm>
#include <climits>
#include <type_traits>

namespace tessel::gpusim {
namespace {

enum IntOp : uint8_t {
  Add, Sub, AddSat, SubSat, MulLo, MulHi, MulWide, MadLo, MadHi, MadWide,
  Div, Rem, Min, Max, MinRelu, MaxRelu, Abs, Neg, And, Or, Xor, Not, CNot, Shl, Shr, Popc, Clz,
  Brev, Bfe, Bfi,
};

template <class T> using U = std::make_unsigned_t<T>;
template <class T> using Wide =
    std::conditional_t<sizeof(T) == 8, std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>,
    std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

template <class T> T mulHi(T a, T b) {
  constexpr int W = sizeof(T) * 8;
  return T(Wide<T>(Wide<T>(a) * Wide<T>(b)) >> W);
}

template <class T, IntOp OP> void intOp(ExecContext &c, const Inst &I,
                                        uint32_t mask) {
  constexpr unsigned W = sizeof(T) * 8;
  forLanes(mask, [&](int l) {
    T a = T(readOp(c, I.ops[1], l));
    T b = I.nops > 2 ? T(readOp(c, I.ops[2], l)) : T(0);
    uint64_t r = 0;
    if constexpr (OP == Add) r = U<T>(U<T>(a) + U<T>(b));
    else if constexpr (OP == Sub) r = U<T>(U<T>(a) - U<T>(b));
    else if constexpr (OP == AddSat || OP == SubSat) {
      int64_t v = OP == AddSat ? int64_t(a) + int64_t(b) : int64_t(a) - int64_t(b);
      v = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
      r = uint32_t(int32_t(v));
    } else if constexpr (OP == MulLo) r = U<T>(U<T>(a) * U<T>(b));
    else if constexpr (OP == MulHi) r = U<T>(mulHi<T>(a, b));
    else if constexpr (OP == MulWide) r = uint64_t(Wide<T>(a) * Wide<T>(b));
    else if constexpr (OP == MadLo) r = U<T>(U<T>(a) * U<T>(b) + U<T>(T(readOp(c, I.ops[3], l))));
    else if constexpr (OP == MadHi) r = U<T>(U<T>(mulHi<T>(a, b)) + U<T>(T(readOp(c, I.ops[3], l))));
    else if constexpr (OP == MadWide) {
      using WT = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
      r = uint64_t(WT(Wide<T>(a) * Wide<T>(b)) + WT(readOp(c, I.ops[3], l)));
    } else if constexpr (OP == Div || OP == Rem) {
      // Division by zero is unspecified in the ISA: all ones (quotient) and
      // the dividend (remainder), as NVIDIA GPUs return.
      if (b == 0) r = OP == Div ? U<T>(~U<T>(0)) : U<T>(a);
      else if (std::is_signed_v<T> && b == T(-1)) r = OP == Div ? U<T>(U<T>(0) - U<T>(a)) : 0;
      else r = OP == Div ? U<T>(a / b) : U<T>(a % b);
    } else if constexpr (OP == Min) r = U<T>(a < b ? a : b);
    else if constexpr (OP == Max) r = U<T>(a > b ? a : b);
    // .relu (sm_90, .s32): a negative result becomes 0.
    else if constexpr (OP == MinRelu) r = U<T>(std::max(T(0), a < b ? a : b));
    else if constexpr (OP == MaxRelu) r = U<T>(std::max(T(0), a > b ? a : b));
    else if constexpr (OP == Abs) r = U<T>(a < 0 ? U<T>(0) - U<T>(a) : U<T>(a));
    else if constexpr (OP == Neg) r = U<T>(U<T>(0) - U<T>(a));
    else if constexpr (OP == And) r = U<T>(a & b);
    else if constexpr (OP == Or) r = U<T>(a | b);
    else if constexpr (OP == Xor) r = U<T>(a ^ b);
    else if constexpr (OP == Not) r = U<T>(~U<T>(a));
    else if constexpr (OP == CNot) r = a == 0;
    else if constexpr (OP == Shl) {
      uint32_t n = uint32_t(readOp(c, I.ops[2], l));
      r = n >= W ? 0 : U<T>(U<T>(a) << n);
    } else if constexpr (OP == Shr) {
      uint32_t n = uint32_t(readOp(c, I.ops[2], l));
      if (std::is_signed_v<T>) r = U<T>(T(a >> (n >= W ? W - 1 : n)));
      else r = n >= W ? 0 : U<T>(U<T>(a) >> n);
    } else if constexpr (OP == Popc) r = __builtin_popcountll(U<T>(a));
    else if constexpr (OP == Clz) r = U<T>(a) == 0 ? W : __builtin_clzll(uint64_t(U<T>(a))) - (64 - W);
    else if constexpr (OP == Brev) {
      U<T> x = U<T>(a), y = 0;
      for (unsigned i = 0; i < W; ++i) y |= U<T>((x >> i) & 1) << (W - 1 - i);
      r = y;
    } else if constexpr (OP == Bfe) {
      uint32_t pos = uint32_t(readOp(c, I.ops[2], l)) & 0xff;
      uint32_t len = uint32_t(readOp(c, I.ops[3], l)) & 0xff;
      U<T> x = U<T>(a);
      unsigned sbit = 0;
      if (std::is_signed_v<T> && len != 0) {
        unsigned top = pos + len - 1 < W - 1 ? pos + len - 1 : W - 1;
        sbit = (x >> top) & 1;
      }
      U<T> y = 0;
      for (unsigned i = 0; i < W; ++i) {
        unsigned bit = (i < len && pos + i <= W - 1) ? (x >> (pos + i)) & 1 : sbit;
        y |= U<T>(bit) << i;
      }
      r = y;
    } else if constexpr (OP == Bfi) {
      uint32_t pos = uint32_t(readOp(c, I.ops[3], l)) & 0xff;
      uint32_t len = uint32_t(readOp(c, I.ops[4], l)) & 0xff;
      U<T> y = U<T>(b), x = U<T>(a);
      for (unsigned i = 0; i < len && pos + i < W; ++i) {
        y &= ~(U<T>(1) << (pos + i));
        y |= U<T>((x >> i) & 1) << (pos + i);
      }
      r = y;
    }
    writeReg(c, I.ops[0], l, r);
  });
}

// Extended-precision arithmetic: d = a + b (+ CC.CF), d = a - (b (+ CC.CF)),
// d = (a * b).lo/.hi + c (+ CC.CF). The carry (for sub: the borrow) out of
// the unsigned addition or subtraction of the operands' bits goes to CC.CF
// when .cc is given. The signedness of the type only matters for mad.hi's
// product.
enum CarryOp : uint8_t { CAdd, CSub, CMadLo, CMadHi };

template <class T, CarryOp OP, bool In, bool Out>
void carryOp(ExecContext &c, const Inst &I, uint32_t mask) {
  using UT = U<T>;
  using WU = Wide<UT>;
  constexpr unsigned W = sizeof(T) * 8;
  uint32_t &cf = c.warp->carry;
  uint32_t outCf = cf;
  forLanes(mask, [&](int l) {
    UT a = UT(readOp(c, I.ops[1], l)), b = UT(readOp(c, I.ops[2], l));
    WU ci = In ? WU((cf >> l) & 1) : WU(0);
    UT r;
    bool co;
    if constexpr (OP == CSub) {
      WU sub = WU(b) + ci;
      r = UT(WU(a) - sub);
      co = WU(a) < sub;
    } else {
      UT x = a, y = b;
      if constexpr (OP == CMadLo || OP == CMadHi) {
        x = OP == CMadLo ? UT(a * b) : UT(mulHi<T>(T(a), T(b)));
        y = UT(readOp(c, I.ops[3], l));
      }
      WU sum = WU(x) + WU(y) + ci;
      r = UT(sum);
      co = (sum >> W) != 0;
    }
    writeReg(c, I.ops[0], l, uint64_t(r));
    if (Out)
      outCf = (outCf & ~(1u << l)) | (uint32_t(co) << l);
  });
  // Every lane reads its carry-in before any lane's carry-out lands.
  if (Out)
    cf = outCf;
}

template <class T, CarryOp OP> Handler carryFor(bool in, bool out) {
  return in ? (out ? carryOp<T, OP, true, true> : carryOp<T, OP, true, false>)
            : (out ? carryOp<T, OP, false, true> : carryOp<T, OP, false, false>);
}

template <CarryOp OP> Handler pickCarry(DecodeInput &in, PType t, bool cin, bool cout) {
  switch (t) {
  case PType::S32: return carryFor<int32_t, OP>(cin, cout);
  case PType::U32: return carryFor<uint32_t, OP>(cin, cout);
  case PType::S64: return carryFor<int64_t, OP>(cin, cout);
  case PType::U64: return carryFor<uint64_t, OP>(cin, cout);
  default:
    in.fail(std::string("type .") + typeName(t) + " is not supported by '" + in.base +
            "' with a carry (.u32 .s32 .u64 .s64)");
  }
}

// add.cc sub.cc mad{.lo,.hi}.cc addc{.cc} subc{.cc} madc{.lo,.hi}{.cc}.
void decodeCarry(DecodeInput &in, Inst &inst, bool carryIn) {
  const std::string b = carryIn ? in.base.substr(0, in.base.size() - 1) : in.base;
  inst.cls = InstClass::IntArith;
  int part = b == "mad" ? in.takeOneOf({"lo", "hi"}) : -1;
  bool cc = in.take("cc");
  PType t = oneType(in);
  in.finish();
  if (b == "mad" && part < 0) in.fail("'" + in.base + "' needs .lo or .hi");
  expectOperands(in, inst, b == "mad" ? "dsss" : "dss");
  for (unsigned i = 1; i < inst.nops; ++i)
    resolveImm(in, inst.ops[i], t);
  inst.exec = b == "add" ? pickCarry<CAdd>(in, t, carryIn, cc)
            : b == "sub" ? pickCarry<CSub>(in, t, carryIn, cc)
            : part == 0  ? pickCarry<CMadLo>(in, t, carryIn, cc)
                         : pickCarry<CMadHi>(in, t, carryIn, cc);
}

void decodeCarryIn(DecodeInput &in, Inst &inst) { decodeCarry(in, inst, true); }

template <IntOp OP> Handler pick(DecodeInput &in, PType t) {
  switch (t) {
  case PType::S16: return intOp<int16_t, OP>;
  case PType::S32: return intOp<int32_t, OP>;
  case PType::S64: return intOp<int64_t, OP>;
  case PType::U16: case PType::B16: return intOp<uint16_t, OP>;
  case PType::U32: case PType::B32: return intOp<uint32_t, OP>;
  case PType::U64: case PType::B64: return intOp<uint64_t, OP>;
  case PType::Pred: return intOp<uint8_t, OP>;
  default:
    in.fail(std::string("type .") + typeName(t) + " is not supported by '" + in.base + "'");
  }
}

bool allowed(PType t, std::initializer_list<PType> ok) {
  for (PType p : ok) if (p == t) return true;
  return false;
}
#define INTTYPES {PType::S16, PType::S32, PType::S64, PType::U16, PType::U32, PType::U64}
#define BITTYPES {PType::B16, PType::B32, PType::B64, PType::Pred}

void decodeArithLike(DecodeInput &in, Inst &inst) {
  if (hasFloatType(in))
    return decodeFloatArith(in, inst);
  const std::string &b = in.base;
  inst.cls = InstClass::IntArith;
  if (b == "setp") {
    decodeCompare(in, inst);
    return;
  }
  if ((b == "add" || b == "sub" || b == "mad") &&
      std::find(in.mods.begin(), in.mods.end(), "cc") != in.mods.end()) {
    decodeCarry(in, inst, false);
    return;
  }
  int part = in.takeOneOf({"lo", "hi", "wide"});
  bool sat = in.take("sat");
  bool relu = in.take("relu");
  PType t = oneType(in);
  in.finish();
  if (!allowed(t, INTTYPES) && !(isBits(t) && (b == "add" || b == "sub")))
    in.fail(std::string("type .") + typeName(t) + " is not supported by '" + b + "'");
  bool three = b == "mad";
  bool one = b == "abs" || b == "neg";
  expectOperands(in, inst, three ? "dsss" : one ? "ds" : "dss");
  PType srcT = t;
  for (unsigned i = 1; i < inst.nops; ++i)
    resolveImm(in, inst.ops[i], srcT);
  if ((b == "mul" || b == "mad") && part == 2) {
    if (bitWidth(t) == 64) in.fail("mul.wide/mad.wide take 16- or 32-bit sources");
    if (three) resolveImm(in, inst.ops[3], isSigned(t) ? PType::S64 : PType::U64);
  }
  if (sat && !((b == "add" || b == "sub") && t == PType::S32))
    in.fail(".sat is only supported on add/sub.s32");
  if (relu && !((b == "min" || b == "max") && t == PType::S32))
    in.fail(".relu is only supported on min/max.s32");
  if (b == "add") inst.exec = sat ? pick<AddSat>(in, t) : pick<Add>(in, t);
  else if (b == "sub") inst.exec = sat ? pick<SubSat>(in, t) : pick<Sub>(in, t);
  else if (b == "mul" || b == "mad") {
    if (part < 0) in.fail("'" + b + "' needs .lo, .hi or .wide");
    bool mad = b == "mad";
    inst.exec = part == 0 ? (mad ? pick<MadLo>(in, t) : pick<MulLo>(in, t))
              : part == 1 ? (mad ? pick<MadHi>(in, t) : pick<MulHi>(in, t))
                          : (mad ? pick<MadWide>(in, t) : pick<MulWide>(in, t));
  } else if (part >= 0) in.fail("unexpected .lo/.hi/.wide");
  else if (b == "div") inst.exec = pick<Div>(in, t);
  else if (b == "rem") inst.exec = pick<Rem>(in, t);
  else if (b == "min") inst.exec = relu ? pick<MinRelu>(in, t) : pick<Min>(in, t);
  else if (b == "max") inst.exec = relu ? pick<MaxRelu>(in, t) : pick<Max>(in, t);
  else if (b == "abs") { if (!isSigned(t)) in.fail("abs needs a signed type"); inst.exec = pick<Abs>(in, t); }
  else if (b == "neg") { if (!isSigned(t)) in.fail("neg needs a signed type"); inst.exec = pick<Neg>(in, t); }
  else in.fail("internal: unhandled arithmetic opcode");
}

void decodeLogic(DecodeInput &in, Inst &inst) {
  const std::string &b = in.base;
  inst.cls = InstClass::Logic;
  PType t = oneType(in);
  in.finish();
  if (!allowed(t, BITTYPES) && !(b == "cnot" && isBits(t)))
    in.fail(std::string("type .") + typeName(t) + " is not supported by '" + b + "'");
  bool unary = b == "not" || b == "cnot";
  expectOperands(in, inst, unary ? "ds" : "dss");
  for (unsigned i = 1; i < inst.nops; ++i) resolveImm(in, inst.ops[i], t);
  inst.exec = b == "and" ? pick<And>(in, t) : b == "or" ? pick<Or>(in, t)
            : b == "xor" ? pick<Xor>(in, t)
            // A predicate is 0 or 1: its complement is cnot's, not ~.
            : b == "not" && t != PType::Pred ? pick<Not>(in, t)
                                             : pick<CNot>(in, t);
}

void decodeShift(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::Logic;
  PType t = oneType(in);
  in.finish();
  bool left = in.base == "shl";
  if (left ? !(isBits(t) && t != PType::B8) : !allowed(t, {PType::B16, PType::B32, PType::B64, PType::U16, PType::U32, PType::U64, PType::S16, PType::S32, PType::S64}))
    in.fail(std::string("type .") + typeName(t) + " is not supported by '" + in.base + "'");
  expectOperands(in, inst, "dss");
  resolveImm(in, inst.ops[1], t);
  resolveImm(in, inst.ops[2], PType::U32);
  inst.exec = left ? pick<Shl>(in, t) : pick<Shr>(in, t);
}

void decodeBitCount(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::Logic;
  PType t = oneType(in);
  in.finish();
  const std::string &b = in.base;
  if (b == "bfe") {
    if (!allowed(t, {PType::U32, PType::U64, PType::S32, PType::S64})) in.fail("bfe takes .u32 .u64 .s32 .s64");
    expectOperands(in, inst, "dsss");
    resolveImm(in, inst.ops[1], t);
    resolveImm(in, inst.ops[2], PType::U32);
    resolveImm(in, inst.ops[3], PType::U32);
    inst.exec = pick<Bfe>(in, t);
    return;
  }
  if (!allowed(t, {PType::B32, PType::B64})) in.fail("'" + b + "' takes .b32 or .b64");
  if (b == "bfi") {
    expectOperands(in, inst, "dssss");
    resolveImm(in, inst.ops[1], t);
    resolveImm(in, inst.ops[2], t);
    resolveImm(in, inst.ops[3], PType::U32);
    resolveImm(in, inst.ops[4], PType::U32);
    inst.exec = pick<Bfi>(in, t);
    return;
  }
  expectOperands(in, inst, "ds");
  resolveImm(in, inst.ops[1], t);
  inst.exec = b == "popc" ? pick<Popc>(in, t) : b == "clz" ? pick<Clz>(in, t) : pick<Brev>(in, t);
}

/// bfind: the position of the most significant 1 bit (of a signed value's
/// complement when negative: its most significant non-sign bit), 0xffffffff
/// when there is none; with .shiftamt, the left shift that moves it to the
/// top (width - 1 - position).
template <class T> void bfindOp(ExecContext &c, const Inst &I, uint32_t mask) {
  constexpr int W = sizeof(T) * 8;
  forLanes(mask, [&](int l) {
    T a = T(readOp(c, I.ops[1], l));
    U<T> bits = U<T>(a);
    if (std::is_signed_v<T> && a < 0)
      bits = U<T>(~bits);
    uint32_t d = 0xffffffffu;
    if (bits) {
      int pos = 63 - __builtin_clzll(uint64_t(bits));
      d = uint32_t(I.mode ? W - 1 - pos : pos);
    }
    writeReg(c, I.ops[0], l, d);
  });
}

void decodeBfind(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::Logic;
  inst.mode = in.take("shiftamt");
  PType t = oneType(in);
  in.finish();
  expectOperands(in, inst, "ds");
  resolveImm(in, inst.ops[1], t);
  switch (t) {
  case PType::U32: inst.exec = bfindOp<uint32_t>; break;
  case PType::U64: inst.exec = bfindOp<uint64_t>; break;
  case PType::S32: inst.exec = bfindOp<int32_t>; break;
  case PType::S64: inst.exec = bfindOp<int64_t>; break;
  default: in.fail("bfind takes .u32 .u64 .s32 .s64");
  }
}

void prmtOp(ExecContext &c, const Inst &I, uint32_t mask) {
  forLanes(mask, [&](int l) {
    uint64_t bytes = (readOp(c, I.ops[2], l) & 0xffffffffull) << 32 |
                     (readOp(c, I.ops[1], l) & 0xffffffffull);
    uint32_t sel = uint32_t(readOp(c, I.ops[3], l));
    uint32_t r = 0;
    for (int i = 0; i < 4; ++i) {
      uint32_t s = (sel >> (4 * i)) & 0xf;
      uint32_t byte = (bytes >> (8 * (s & 7))) & 0xff;
      if (s & 8) byte = (byte & 0x80) ? 0xff : 0;
      r |= byte << (8 * i);
    }
    writeReg(c, I.ops[0], l, r);
  });
}

void lop3Op(ExecContext &c, const Inst &I, uint32_t mask) {
  uint32_t lut = uint32_t(I.ops[4].imm) & 0xff;
  forLanes(mask, [&](int l) {
    uint32_t a = uint32_t(readOp(c, I.ops[1], l)), b = uint32_t(readOp(c, I.ops[2], l)),
             cc = uint32_t(readOp(c, I.ops[3], l));
    uint32_t r = 0;
    for (int k = 0; k < 8; ++k) {
      if (!(lut >> k & 1)) continue;
      uint32_t ta = (k & 4) ? a : ~a, tb = (k & 2) ? b : ~b, tc = (k & 1) ? cc : ~cc;
      r |= ta & tb & tc;
    }
    writeReg(c, I.ops[0], l, r);
  });
}

template <bool Left, bool Clamp> void shfOp(ExecContext &c, const Inst &I, uint32_t mask) {
  forLanes(mask, [&](int l) {
    uint64_t a = readOp(c, I.ops[1], l) & 0xffffffffull, b = readOp(c, I.ops[2], l) & 0xffffffffull;
    uint32_t n = uint32_t(readOp(c, I.ops[3], l));
    n = Clamp ? (n > 32 ? 32 : n) : (n & 31);
    uint64_t both = b << 32 | a;
    uint32_t r = Left ? uint32_t((both << n) >> 32) : uint32_t(both >> n);
    writeReg(c, I.ops[0], l, r);
  });
}

void decodeBitPerm(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::Logic;
  const std::string &b = in.base;
  if (b == "shf") {
    int dir = in.takeOneOf({"l", "r"});
    int mode = in.takeOneOf({"wrap", "clamp"});
    PType t = oneType(in);
    in.finish();
    if (dir < 0 || mode < 0 || t != PType::B32) in.fail("shf needs .l/.r, .wrap/.clamp and .b32");
    expectOperands(in, inst, "dsss");
    for (int i = 1; i < 4; ++i) resolveImm(in, inst.ops[i], PType::B32);
    inst.exec = dir == 0 ? (mode == 0 ? shfOp<true, false> : shfOp<true, true>)
                         : (mode == 0 ? shfOp<false, false> : shfOp<false, true>);
    return;
  }
  PType t = oneType(in);
  in.finish(); // prmt modes (.f4e ...) and lop3's predicate form are unknown
  if (t != PType::B32) in.fail("'" + b + "' takes .b32");
  if (b == "prmt") {
    expectOperands(in, inst, "dsss");
    for (int i = 1; i < 4; ++i) resolveImm(in, inst.ops[i], PType::B32);
    inst.exec = prmtOp;
  } else {
    expectOperands(in, inst, "dssss");
    for (int i = 1; i < 5; ++i) resolveImm(in, inst.ops[i], PType::B32);
    if (inst.ops[4].kind != OpKind::Imm) in.fail("lop3's lookup table must be an immediate");
    inst.exec = lop3Op;
  }
}

template <class T, CmpOp OP> void setpInt(ExecContext &c, const Inst &I, uint32_t mask) {
  forLanes(mask, [&](int l) {
    T a = T(readOp(c, I.ops[1], l)), b = T(readOp(c, I.ops[2], l));
    bool r;
    if constexpr (OP == EQ) r = a == b;
    else if constexpr (OP == NE) r = a != b;
    else if constexpr (OP == LT || OP == LO) r = a < b;
    else if constexpr (OP == LE || OP == LS) r = a <= b;
    else if constexpr (OP == GT || OP == HI) r = a > b;
    else r = a >= b;
    writeSetp(c, I, l, r);
  });
}

template <class T> Handler setpIntFor(DecodeInput &in, uint8_t op) {
  switch (op) {
  case EQ: return setpInt<T, EQ>;
  case NE: return setpInt<T, NE>;
  case LT: case LO: return setpInt<T, LT>;
  case LE: case LS: return setpInt<T, LE>;
  case GT: case HI: return setpInt<T, GT>;
  case GE: case HS: return setpInt<T, GE>;
  default: in.fail("comparison not defined on integers");
  }
}

void selpOp(ExecContext &c, const Inst &I, uint32_t mask) {
  forLanes(mask, [&](int l) {
    writeReg(c, I.ops[0], l, readOp(c, I.ops[3], l) ? readOp(c, I.ops[1], l) : readOp(c, I.ops[2], l));
  });
}

void movOp(ExecContext &c, const Inst &I, uint32_t mask) {
  forLanes(mask, [&](int l) { writeReg(c, I.ops[0], l, readOp(c, I.ops[1], l)); });
}
// mov.b32/.b64 d, {a, b[, c, d]}: pack; mov {a, b}, d: unpack.
void movPack(ExecContext &c, const Inst &I, uint32_t mask) {
  const Operand &v = I.ops[1];
  unsigned w = I.mode;
  forLanes(mask, [&](int l) {
    uint64_t r = 0;
    for (unsigned i = 0; i < v.vecLen; ++i)
      if (v.vec[i] != kNoReg)
        r |= truncBits(regRef(c, v.vec[i], l), w) << (w * i);
    writeReg(c, I.ops[0], l, r);
  });
}
void movUnpack(ExecContext &c, const Inst &I, uint32_t mask) {
  const Operand &v = I.ops[0];
  unsigned w = I.mode;
  forLanes(mask, [&](int l) {
    uint64_t x = readOp(c, I.ops[1], l);
    for (unsigned i = 0; i < v.vecLen; ++i)
      if (v.vec[i] != kNoReg)
        regRef(c, v.vec[i], l) = truncBits(x >> (w * i), w);
  });
}

void decodeMove(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::Move;
  PType t = oneType(in);
  in.finish();
  if (inst.nops != 2) in.fail("mov takes 2 operands");
  Operand &d = inst.ops[0], &s = inst.ops[1];
  unsigned w = bitWidth(t);
  if (d.kind == OpKind::Vec || s.kind == OpKind::Vec) {
    Operand &v = d.kind == OpKind::Vec ? d : s;
    if (v.vecLen < 2 || w % v.vecLen || !(isBits(t) || t == PType::F16x2 || t == PType::BF16x2))
      in.fail("bad vector mov");
    inst.mode = uint8_t(w / v.vecLen);
    if (d.kind == OpKind::Vec) {
      if (s.kind != OpKind::Reg && s.kind != OpKind::Imm) in.fail("bad vector mov");
      resolveImm(in, s, t);
      inst.exec = movUnpack;
    } else {
      if (d.kind != OpKind::Reg) in.fail("bad vector mov");
      inst.exec = movPack;
    }
    return;
  }
  expectOperands(in, inst, "ds");
  if (s.hasSymbol) {
    // A variable's address in its state space; for a kernel parameter, its
    // offset in the parameter buffer (cvta.param makes it generic).
  } else {
    resolveImm(in, s, t);
  }
  inst.exec = movOp;
}

void decodeSelp(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::Move;
  PType t = oneType(in);
  in.finish();
  expectOperands(in, inst, "dsss");
  resolveImm(in, inst.ops[1], t);
  resolveImm(in, inst.ops[2], t);
  resolveImm(in, inst.ops[3], PType::Pred);
  inst.exec = selpOp;
}

} // namespace

bool hasFloatType(const DecodeInput &in) {
  for (const std::string &m : in.mods) {
    PType t = parseType(m);
    if (isFloat(t) || t == PType::F16x2 || t == PType::BF16x2)
      return true;
  }
  return false;
}

void decodeCompare(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::Compare;
  int cmp = in.takeOneOf({"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
                          "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"});
  int bop = in.takeOneOf({"and", "or", "xor"});
  bool ftz = in.take("ftz");
  PType t = oneType(in);
  in.finish();
  if (cmp < 0) in.fail("setp needs a comparison");
  inst.mode = uint8_t(cmp);
  inst.mode2 = uint8_t(bop < 0 ? BNone : bop + 1);
  inst.ftz = ftz;
  inst.type = t;
  expectOperands(in, inst, bop < 0 ? "dss" : "dsss");
  if (inst.ops[0].kind == OpKind::Sink) in.fail("setp needs a predicate destination");
  resolveImm(in, inst.ops[1], t);
  resolveImm(in, inst.ops[2], t);
  if (bop >= 0) resolveImm(in, inst.ops[3], PType::Pred);
  if (isFloat(t)) return; // FloatOps picks the handler
  if (ftz) in.fail(".ftz applies to float comparisons only");
  if (cmp >= EQU) in.fail("unordered comparisons apply to floats only");
  bool sgn = isSigned(t);
  if (!sgn && (cmp == LT || cmp == LE || cmp == GT || cmp == GE) && !isBits(t)) {
    // lt/le/gt/ge on unsigned types compare unsigned (same as lo/ls/hi/hs).
  }
  if (isBits(t) && cmp != EQ && cmp != NE) in.fail("only eq/ne compare .b types");
  switch (t) {
  case PType::S16: inst.exec = setpIntFor<int16_t>(in, cmp); break;
  case PType::S32: inst.exec = setpIntFor<int32_t>(in, cmp); break;
  case PType::S64: inst.exec = setpIntFor<int64_t>(in, cmp); break;
  case PType::U16: case PType::B16: inst.exec = setpIntFor<uint16_t>(in, cmp); break;
  case PType::U32: case PType::B32: inst.exec = setpIntFor<uint32_t>(in, cmp); break;
  case PType::U64: case PType::B64: inst.exec = setpIntFor<uint64_t>(in, cmp); break;
  default: in.fail(std::string("setp does not take .") + typeName(t));
  }
}

void registerIntOps(DecoderTable &t) {
  for (const char *n : {"add", "sub", "mul", "mad", "div", "rem", "min", "max", "abs", "neg", "setp"})
    t[n] = decodeArithLike;
  for (const char *n : {"and", "or", "xor", "not", "cnot"})
    t[n] = decodeLogic;
  t["shl"] = decodeShift;
  t["shr"] = decodeShift;
  for (const char *n : {"popc", "clz", "brev", "bfe", "bfi"})
    t[n] = decodeBitCount;
  t["bfind"] = decodeBfind;
  for (const char *n : {"prmt", "lop3", "shf"})
    t[n] = decodeBitPerm;
  for (const char *n : {"addc", "subc", "madc"})
    t[n] = decodeCarryIn;
  t["mov"] = decodeMove;
  t["selp"] = decodeSelp;
}

} // namespace tessel::gpusim
