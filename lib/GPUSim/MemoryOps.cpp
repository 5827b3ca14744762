//===- MemoryOps.cpp - ld, st and their state spaces ----------------------===//
//
// ld/st on global, shared, local, param and generic addresses, scalar and
// .v2/.v4, with the cache and ordering qualifiers LLVM and Triton emit
// (accepted; they do not change single-launch semantics). Every access is
// bounds- and alignment-checked: a global access must lie inside one
// argument's allocation, a shared access inside the CTA's shared memory.
// Counters: one request per warp instruction, 32-byte sectors for global,
// bank-conflict wavefronts for shared; shared accesses feed the race check.
//
//===----------------------------------------------------------------------===//
#include "Decode.h"

#include <cstring>
#include <sstream>

namespace tessel::gpusim {
namespace {

struct Access {
  uint8_t *ptr;
  StateSpace space;
  uint32_t sharedOffset;
};

[[noreturn]] void accessError(ExecContext &c, int lane, const char *what,
                              StateSpace sp, uint64_t addr, unsigned size,
                              const std::string &detail) {
  std::ostringstream os;
  os << what << " of " << size << " bytes at " << spaceName(sp)
     << " address 0x" << std::hex << addr << std::dec << ": " << detail;
  throw LaneError(lane, os.str());
}

Access resolve(ExecContext &c, int lane, StateSpace sp, uint64_t addr,
               unsigned size, bool store) {
  const char *what = store ? "out-of-bounds store" : "out-of-bounds load";
  if (addr % size != 0)
    accessError(c, lane, store ? "misaligned store" : "misaligned load", sp,
                addr, size, "the address must be a multiple of the access size");
  if (sp == StateSpace::Generic) {
    if (addr >= kSharedWindow && addr < kSharedWindow + kWindowSize)
      return resolve(c, lane, StateSpace::Shared, addr - kSharedWindow, size, store);
    if (addr >= kLocalWindow && addr < kLocalWindow + kWindowSize)
      return resolve(c, lane, StateSpace::Local, addr - kLocalWindow, size, store);
    sp = StateSpace::Global;
  }
  switch (sp) {
  case StateSpace::Const: // module .const variables are global allocations
  case StateSpace::Global: {
    uint8_t *p = c.global.translate(addr, size);
    if (!p)
      accessError(c, lane, what, sp, addr, size, c.global.describe(addr, size));
    return {p, sp, 0};
  }
  case StateSpace::Shared: {
    if (addr + size > c.cta.shared.size() || addr + size < addr)
      accessError(c, lane, what, sp, addr, size,
                  "the CTA has " + std::to_string(c.cta.shared.size()) +
                      " bytes of shared memory");
    return {c.cta.shared.at(uint32_t(addr)), sp, uint32_t(addr)};
  }
  case StateSpace::Local: {
    uint64_t per = c.kernel.localBytes;
    if (addr + size > per || addr + size < addr)
      accessError(c, lane, what, sp, addr, size,
                  "the thread has " + std::to_string(per) + " bytes of local memory");
    return {c.cta.local.data() + size_t(c.threadIndex(lane)) * per + addr, sp, 0};
  }
  case StateSpace::Param: {
    if (store)
      accessError(c, lane, "store", sp, addr, size, "kernel parameters are read-only");
    if (addr + size > c.params.size())
      accessError(c, lane, what, sp, addr, size, "past the kernel parameters");
    return {const_cast<uint8_t *>(c.params.data()) + addr, sp, 0};
  }
  default:
    accessError(c, lane, what, sp, addr, size, "state space not simulated");
  }
}

inline uint64_t address(ExecContext &c, const Inst &I, const Operand &a, int lane) {
  uint64_t base = a.reg == kNoReg ? 0 : regRef(c, a.reg, lane);
  return effectiveAddress(base, a.imm, I.mode3); // mode3: a 32-bit register
}

template <bool Store> void memOp(ExecContext &c, const Inst &I, uint32_t mask) {
  const Operand &addrOp = I.ops[Store ? 0 : 1];
  const Operand &val = I.ops[Store ? 1 : 0];
  const unsigned elem = I.mode, n = I.vec, size = elem * n;
  const bool sgn = I.mode2;
  uint64_t addrs[32];
  uint32_t lanes[32], offs[32];
  unsigned count = 0;
  StateSpace seen = StateSpace::Generic;
  bool mixed = false;
  forLanes(mask, [&](int l) {
    uint64_t addr = address(c, I, addrOp, l);
    Access acc = resolve(c, l, I.space, addr, size, Store);
    if (count && acc.space != seen)
      mixed = true;
    seen = acc.space;
    addrs[count] = addr;
    lanes[count] = uint32_t(l);
    offs[count] = acc.sharedOffset;
    ++count;
    uint8_t buf[32];
    if (Store) {
      for (unsigned i = 0; i < n; ++i) {
        uint64_t v;
        if (val.kind == OpKind::Vec)
          v = val.vec[i] == kNoReg ? 0 : regRef(c, val.vec[i], l);
        else
          v = readOp(c, val, l);
        std::memcpy(buf + i * elem, &v, elem);
      }
      if (acc.space == StateSpace::Shared && c.cta.shared.raceCheck()) {
        std::string race = c.cta.shared.recordWrite(acc.sharedOffset, size, c.threadIndex(l), I.line, buf);
        if (!race.empty())
          throw LaneError(l, race);
      }
      std::memcpy(acc.ptr, buf, size);
    } else {
      if (acc.space == StateSpace::Shared && c.cta.shared.raceCheck()) {
        std::string race = c.cta.shared.recordRead(acc.sharedOffset, size, c.threadIndex(l), I.line);
        if (!race.empty())
          throw LaneError(l, race);
      }
      std::memcpy(buf, acc.ptr, size);
      for (unsigned i = 0; i < n; ++i) {
        uint64_t v = 0;
        std::memcpy(&v, buf + i * elem, elem);
        if (sgn)
          v = uint64_t(signExtend(v, elem * 8));
        if (val.kind == OpKind::Vec) {
          if (val.vec[i] != kNoReg)
            regRef(c, val.vec[i], l) = v;
        } else {
          writeReg(c, val, l, v);
        }
      }
    }
  });
  if (!count || mixed)
    return;
  Counters &k = c.counters;
  if (seen == StateSpace::Global) {
    unsigned sectors = countSectors(addrs, count, size);
    if (Store) {
      ++k.globalStoreRequests;
      k.globalStoreSectors += sectors;
      k.globalStoreBytes += uint64_t(count) * size;
    } else {
      ++k.globalLoadRequests;
      k.globalLoadSectors += sectors;
      k.globalLoadBytes += uint64_t(count) * size;
    }
  } else if (seen == StateSpace::Shared) {
    SharedWavefronts w = countWavefronts(lanes, offs, count, size);
    if (Store) {
      ++k.sharedStoreRequests;
      k.sharedStoreWavefronts += w.wavefronts;
      k.sharedStoreConflicts += w.conflicts();
    } else {
      ++k.sharedLoadRequests;
      k.sharedLoadWavefronts += w.wavefronts;
      k.sharedLoadConflicts += w.conflicts();
    }
  }
}

void decodeLdSt(DecodeInput &in, Inst &inst) {
  bool store = in.base == "st";
  // Ordering, scope and cache qualifiers: no effect within one launch.
  for (const char *q : {"weak", "volatile", "relaxed", "acquire", "release", "cta", "gpu",
                        "sys", "cluster", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc",
                        "L1::evict_normal", "L1::evict_unchanged", "L1::evict_first",
                        "L1::evict_last", "L1::no_allocate", "L2::evict_first",
                        "L2::evict_last", "L2::evict_normal", "L2::64B", "L2::128B",
                        "L2::256B"})
    in.take(q);
  bool hint = in.take("L2::cache_hint");
  StateSpace sp = in.takeSpace();
  int v = in.takeOneOf({"v2", "v4"});
  PType t = oneType(in);
  in.finish();
  if (sp == StateSpace::Const && store)
    in.fail("st.const does not exist");
  if (store && sp == StateSpace::Param)
    in.fail("st.param is not simulated (device function calls)");
  if (t == PType::Pred || t == PType::None)
    in.fail("bad type for ld/st");
  inst.space = sp;
  inst.type = t;
  inst.vec = uint8_t(v < 0 ? 1 : v == 0 ? 2 : 4);
  inst.mode = uint8_t(byteWidth(t));
  inst.mode2 = isSigned(t);
  unsigned want = 2 + hint;
  if (inst.nops != want)
    in.fail("expected " + std::to_string(want) + " operands");
  Operand &a = inst.ops[store ? 0 : 1];
  Operand &val = inst.ops[store ? 1 : 0];
  if (a.kind != OpKind::Addr)
    in.fail("expected an address operand");
  if (a.hasSymbol) {
    if (sp == StateSpace::Generic) {
      if (a.symSpace == StateSpace::Shared) a.imm += kSharedWindow;
      else if (a.symSpace == StateSpace::Local) a.imm += kLocalWindow;
      else if (a.symSpace == StateSpace::Global || a.symSpace == StateSpace::Const) ;
      else in.fail("a parameter cannot be accessed through a generic address");
    } else if (a.symSpace != sp) {
      in.fail(std::string("variable of the .") + spaceName(a.symSpace) +
              " state space accessed as ." + spaceName(sp));
    }
  }
  if (a.reg != kNoReg && in.regs && bitWidth((*in.regs)[a.reg].type) == 32)
    inst.mode3 = 1;
  if (val.kind == OpKind::Vec) {
    if (val.vecLen != inst.vec)
      in.fail("vector operand length does not match the .v modifier");
  } else if (inst.vec != 1) {
    in.fail("a vector access needs a { } operand");
  } else if (store) {
    if (val.kind != OpKind::Reg && val.kind != OpKind::Imm)
      in.fail("bad store value");
    resolveImm(in, val, t);
  } else if (val.kind != OpKind::Reg && val.kind != OpKind::Sink) {
    in.fail("bad load destination");
  }
  inst.cls = store ? (sp == StateSpace::Shared ? InstClass::StoreShared
                      : sp == StateSpace::Local ? InstClass::StoreLocal
                                                : InstClass::StoreGlobal)
                   : (sp == StateSpace::Shared ? InstClass::LoadShared
                      : sp == StateSpace::Local ? InstClass::LoadLocal
                      : sp == StateSpace::Param ? InstClass::LoadParam
                                                : InstClass::LoadGlobal);
  inst.exec = store ? memOp<true> : memOp<false>;
}

} // namespace

const char *spaceName(StateSpace s) {
  switch (s) {
  case StateSpace::Generic: return "generic";
  case StateSpace::Global: return "global";
  case StateSpace::Shared: return "shared";
  case StateSpace::Local: return "local";
  case StateSpace::Param: return "param";
  case StateSpace::Const: return "const";
  }
  return "?";
}

uint8_t *hostAddress(ExecContext &c, int lane, StateSpace space, uint64_t addr,
                     unsigned size, bool store) {
  return resolve(c, lane, space, addr, size, store).ptr;
}

void registerMemoryOps(DecoderTable &t) {
  t["ld"] = decodeLdSt;
  t["st"] = decodeLdSt;
}

} // namespace tessel::gpusim
