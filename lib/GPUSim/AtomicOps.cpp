//===- AtomicOps.cpp - atom, red and redux.sync ----------------------------===//
//
// atom{.sem}{.scope}{.space}.op.type d, [a], b{, c} and red (the same without
// the result) on global, shared and generic addresses:
//   .and .or .xor (.b32 .b64), .exch (.b32 .b64), .cas (.b16 .b32 .b64),
//   .add (.u32 .s32 .u64 .f32 .f64; .noftz .f16 .f16x2 .bf16 .bf16x2),
//   .inc .dec (.u32), .min .max (.u32 .s32 .u64 .s64).
// The lanes of a warp apply their operations one after the other in lane
// order (the ISA leaves the order unspecified; this one is deterministic).
// Global atomics hold a process-wide lock while a warp applies them, since
// CTAs run on several threads; shared memory belongs to one CTA. Float adds
// round to nearest even; .f32 adds flush subnormal inputs and results to
// zero, as the ISA specifies for atom.add.f32. Atomic accesses are not
// entered into the shared-memory race check (atomics never race with one
// another). Ordering and scope qualifiers are accepted: one launch runs its
// CTAs to completion, so they do not change results here.
//
// redux.sync.{add,min,max}.{u32,s32} and redux.sync.{and,or,xor}.b32
// d, a, membermask reduce over the member lanes, all of which must execute
// it together.
//
//===----------------------------------------------------------------------===//
#include "Decode.h"

#include <cmath>
#include <cstring>
#include <mutex>
#include <sstream>

namespace tessel::gpusim {
namespace {

enum AOp : uint8_t { AAnd, AOr, AXor, AExch, ACas, AAdd, AInc, ADec, AMin, AMax };

std::mutex &globalAtomicLock() {
  static std::mutex m;
  return m;
}

uint8_t *atomicAddress(ExecContext &c, const Inst &I, int lane, unsigned size,
                       bool &isGlobal) {
  const Operand &a = I.ops[I.mode2 ? 0 : 1];
  uint64_t base = a.reg == kNoReg ? 0 : regRef(c, a.reg, lane);
  uint64_t addr = effectiveAddress(base, a.imm, I.mode3);
  StateSpace sp = I.space;
  auto fail = [&](const char *what, const std::string &detail) {
    std::ostringstream os;
    os << what << " of " << size << " bytes at " << spaceName(sp) << " address 0x"
       << std::hex << addr << std::dec << ": " << detail;
    throw LaneError(lane, os.str());
  };
  if (addr % size)
    fail("misaligned atomic", "the address must be a multiple of the access size");
  if (sp == StateSpace::Generic) {
    if (addr >= kSharedWindow && addr < kSharedWindow + kWindowSize) {
      sp = StateSpace::Shared;
      addr -= kSharedWindow;
    } else if (addr >= kLocalWindow && addr < kLocalWindow + kWindowSize) {
      fail("atomic", "atomics on local memory are undefined");
    } else {
      sp = StateSpace::Global;
    }
  }
  if (sp == StateSpace::Shared) {
    isGlobal = false;
    if (addr + size > c.cta.shared.size())
      fail("out-of-bounds atomic", "the CTA has " + std::to_string(c.cta.shared.size()) +
                                       " bytes of shared memory");
    return c.cta.shared.at(uint32_t(addr));
  }
  isGlobal = true;
  uint8_t *p = c.global.translate(addr, size);
  if (!p)
    fail("out-of-bounds atomic", c.global.describe(addr, size));
  return p;
}

double ftz32(double v) {
  return std::fabs(v) < 0x1p-126 ? std::copysign(0.0, v) : v;
}

// Applies `op` to the old value; returns the new value (bits of `t`).
uint64_t combine(AOp op, PType t, uint64_t old, uint64_t b, uint64_t cmp) {
  unsigned w = bitWidth(t);
  switch (op) {
  case AAnd: return old & b;
  case AOr: return old | b;
  case AXor: return old ^ b;
  case AExch: return b;
  case ACas: return truncBits(old, w) == truncBits(cmp, w) ? b : old;
  case AInc: return uint32_t(old) >= uint32_t(b) ? 0 : uint32_t(old) + 1;
  case ADec:
    return (uint32_t(old) == 0 || uint32_t(old) > uint32_t(b)) ? uint32_t(b)
                                                               : uint32_t(old) - 1;
  case AMin:
  case AMax: {
    bool less = isSigned(t) ? signExtend(old, w) < signExtend(b, w)
                            : truncBits(old, w) < truncBits(b, w);
    return (op == AMin) == less ? old : b;
  }
  case AAdd:
    switch (t) {
    case PType::F32: {
      float r = float(ftz32(ftz32(double(asF32(old))) + ftz32(double(asF32(b)))));
      return bitsF32(float(ftz32(r)));
    }
    case PType::F64: return bitsF64(asF64(old) + asF64(b));
    case PType::F16:
      return roundToSmallFloat(halfToDouble(uint16_t(old)) + halfToDouble(uint16_t(b)), 5, 10,
                               Rounding::RN, false);
    case PType::BF16:
      return roundToSmallFloat(bf16ToDouble(uint16_t(old)) + bf16ToDouble(uint16_t(b)), 8, 7,
                               Rounding::RN, false);
    case PType::F16x2:
    case PType::BF16x2: {
      bool h = t == PType::F16x2;
      uint64_t r = 0;
      for (int i = 0; i < 2; ++i) {
        uint16_t x = uint16_t(old >> (16 * i)), y = uint16_t(b >> (16 * i));
        double s = h ? halfToDouble(x) + halfToDouble(y) : bf16ToDouble(x) + bf16ToDouble(y);
        r |= uint64_t(h ? roundToSmallFloat(s, 5, 10, Rounding::RN, false)
                        : roundToSmallFloat(s, 8, 7, Rounding::RN, false))
             << (16 * i);
      }
      return r;
    }
    default: return truncBits(old + b, w);
    }
  }
  return old;
}

void atomOp(ExecContext &c, const Inst &I, uint32_t mask) {
  const bool red = I.mode2;
  const AOp op = AOp(I.mode);
  const unsigned size = byteWidth(I.type);
  const Operand &bOp = I.ops[red ? 1 : 2];
  std::unique_lock<std::mutex> lock(globalAtomicLock(), std::defer_lock);
  forLanes(mask, [&](int l) {
    bool isGlobal;
    uint8_t *p = atomicAddress(c, I, l, size, isGlobal);
    if (isGlobal && !lock.owns_lock())
      lock.lock();
    uint64_t old = 0;
    std::memcpy(&old, p, size);
    uint64_t b = readOp(c, bOp, l);
    uint64_t cmp = 0;
    if (op == ACas) {
      cmp = b;
      b = readOp(c, I.ops[3], l);
    }
    uint64_t v = combine(op, I.type, old, b, cmp);
    std::memcpy(p, &v, size);
    if (!red)
      writeReg(c, I.ops[0], l, isSigned(I.type) ? truncBits(uint64_t(signExtend(old, size * 8)), 64)
                                                : old);
  });
}

void decodeAtom(DecodeInput &in, Inst &inst) {
  bool red = in.base == "red";
  for (const char *q : {"relaxed", "acquire", "release", "acq_rel", "cta", "gpu", "sys",
                        "cluster"})
    in.take(q);
  bool hint = in.take("L2::cache_hint");
  StateSpace sp = in.takeSpace();
  if (sp != StateSpace::Global && sp != StateSpace::Shared && sp != StateSpace::Generic)
    in.fail(in.base + " works on global, shared or generic addresses");
  static const char *opNames[] = {"and", "or", "xor", "exch", "cas",
                                  "add", "inc", "dec", "min", "max"};
  int op = in.takeOneOf({"and", "or", "xor", "exch", "cas", "add", "inc", "dec", "min", "max"});
  if (op < 0)
    in.fail(in.base + " needs an operation (.add, .min, .cas, ...)");
  bool noftz = in.take("noftz");
  if (in.take("v2") || in.take("v4") || in.take("v8"))
    in.fail("vector atomics are not simulated");
  PType t = oneType(in);
  in.finish();
  AOp o = AOp(op);
  bool ok;
  switch (o) {
  case AAnd: case AOr: case AXor: case AExch:
    ok = t == PType::B32 || t == PType::B64;
    break;
  case ACas:
    ok = t == PType::B32 || t == PType::B64 || t == PType::B16;
    break;
  case AAdd:
    ok = t == PType::U32 || t == PType::S32 || t == PType::U64 || t == PType::F32 ||
         t == PType::F64 || t == PType::F16 || t == PType::F16x2 || t == PType::BF16 ||
         t == PType::BF16x2;
    break;
  case AInc: case ADec:
    ok = t == PType::U32;
    break;
  default:
    ok = t == PType::U32 || t == PType::S32 || t == PType::U64 || t == PType::S64;
  }
  if (!ok)
    in.fail(in.base + "." + opNames[op] + " is not defined (or not simulated) on ." +
            typeName(t));
  bool halfAdd = o == AAdd && (t == PType::F16 || t == PType::F16x2 || t == PType::BF16 ||
                               t == PType::BF16x2);
  if (halfAdd != noftz)
    in.fail(halfAdd ? "16-bit float atomic adds need .noftz" : ".noftz applies to f16/bf16 adds");
  if (red && o == ACas)
    in.fail("red has no .cas");
  if (red && o == AExch)
    in.fail("red has no .exch");
  unsigned n = (red ? 2 : 3) + (o == ACas) + hint;
  if (inst.nops != n)
    in.fail("expected " + std::to_string(n) + " operands, found " + std::to_string(inst.nops));
  Operand &a = inst.ops[red ? 0 : 1];
  if (a.kind != OpKind::Addr)
    in.fail("expected an address operand");
  if (!red && inst.ops[0].kind != OpKind::Reg && inst.ops[0].kind != OpKind::Sink)
    in.fail("bad destination");
  for (unsigned i = red ? 1 : 2; i < n - hint; ++i) {
    Operand &v = inst.ops[i];
    if (v.kind != OpKind::Reg && v.kind != OpKind::Imm)
      in.fail("operand " + std::to_string(i + 1) + " has the wrong kind");
    resolveImm(in, v, t);
  }
  if (a.hasSymbol) {
    if (sp == StateSpace::Generic) {
      if (a.symSpace == StateSpace::Shared) a.imm += kSharedWindow;
      else if (a.symSpace != StateSpace::Global) in.fail("atomic on a variable of this state space");
    } else if (a.symSpace != sp) {
      in.fail("variable of another state space");
    }
  }
  if (a.reg != kNoReg && in.regs && bitWidth((*in.regs)[a.reg].type) == 32)
    inst.mode3 = 1;
  inst.space = sp;
  inst.type = t;
  inst.mode = uint8_t(o);
  inst.mode2 = red;
  inst.cls = InstClass::Atomic;
  inst.exec = atomOp;
}

enum ROp : uint8_t { RAdd, RMin, RMax, RAnd, ROr, RXor };

void reduxOp(ExecContext &c, const Inst &I, uint32_t mask) {
  int first = __builtin_ctz(mask);
  uint32_t members = uint32_t(readOp(c, I.ops[2], first));
  forLanes(mask, [&](int l) {
    if (uint32_t(readOp(c, I.ops[2], l)) != members)
      throw LaneError(l, "redux.sync: lanes disagree on the member mask");
    if (!(members >> l & 1))
      throw LaneError(l, "redux.sync: executing lane is not in the member mask");
  });
  uint32_t live = members & c.warp->valid & ~c.warp->exited;
  if ((live & mask) != live)
    throw LaneError(first, "redux.sync: member lanes are not all executing it together");
  const bool sgn = I.type == PType::S32;
  uint32_t acc = 0;
  bool have = false;
  forLanes(mask, [&](int l) {
    uint32_t v = uint32_t(readOp(c, I.ops[1], l));
    if (!have) { acc = v; have = true; return; }
    switch (ROp(I.mode)) {
    case RAdd: acc += v; break;
    case RAnd: acc &= v; break;
    case ROr: acc |= v; break;
    case RXor: acc ^= v; break;
    case RMin: acc = sgn ? uint32_t(std::min(int32_t(acc), int32_t(v))) : std::min(acc, v); break;
    case RMax: acc = sgn ? uint32_t(std::max(int32_t(acc), int32_t(v))) : std::max(acc, v); break;
    }
  });
  forLanes(mask, [&](int l) { writeReg(c, I.ops[0], l, acc); });
}

void decodeRedux(DecodeInput &in, Inst &inst) {
  if (!in.take("sync"))
    in.fail("redux needs .sync");
  int op = in.takeOneOf({"add", "min", "max", "and", "or", "xor"});
  if (op < 0)
    in.fail("redux.sync needs .add, .min, .max, .and, .or or .xor");
  PType t = oneType(in);
  in.finish();
  bool logic = op >= RAnd;
  if (logic ? t != PType::B32 : (t != PType::U32 && t != PType::S32))
    in.fail(std::string("redux.sync.") + (logic ? "and/or/xor take .b32" : "add/min/max take .u32 or .s32") +
            " (float forms are not simulated)");
  expectOperands(in, inst, "dss");
  resolveImm(in, inst.ops[1], t);
  resolveImm(in, inst.ops[2], PType::B32);
  inst.type = t;
  inst.mode = uint8_t(op);
  inst.cls = InstClass::Warp;
  inst.exec = reduxOp;
}

} // namespace

void registerAtomicOps(DecoderTable &t) {
  t["atom"] = decodeAtom;
  t["red"] = decodeAtom;
  t["redux"] = decodeRedux;
}

} // namespace tessel::gpusim
