//===- AsyncCopyOps.cpp - cp.async and its groups --------------------------===//
//
// cp.async.{ca,cg}.shared{::cta}.global{.L2::cache_hint}{.L2::64B,128B,256B}
//     [dst], [src], cp-size{, src-size | ignore-src}{, cache-policy};
// copies 4, 8 or 16 bytes (.cg: 16 only) from global to shared memory
// asynchronously. Modelled per thread as the ISA defines it: the source is
// read when the instruction issues (only its first src-size bytes; the rest,
// or everything when the ignore-src predicate is true, is zero-filled), but
// the bytes reach shared memory only when cp.async.wait_group N (or
// wait_all) retires the copy's group. cp.async.commit_group closes the
// thread's open copies into a group; wait_group N retires the thread's
// oldest committed groups until at most N are pending; wait_all commits and
// retires everything. A thread that reads the destination before its wait
// sees the old contents, exactly the bug a missing wait causes on hardware.
//
// The race check sees the destination written both when the copy is issued
// (the hardware may write any time from then on) and when it lands. Counters:
// async_copy_bytes (cp-size per thread), the global sectors read, and every
// cp.async* instruction in the async_copy class.
//
//===----------------------------------------------------------------------===//
#include "Decode.h"

#include <cstring>
#include <sstream>

namespace tessel::gpusim {
namespace {

enum SrcKind : uint8_t { NoSrcOperand, SrcSize, IgnoreSrc };

std::vector<LaneAsyncCopies> &laneState(ExecContext &c) {
  if (c.warp->asyncCopies.empty())
    c.warp->asyncCopies.resize(32);
  return c.warp->asyncCopies;
}

uint64_t addressOf(ExecContext &c, const Operand &a, bool base32, int lane) {
  uint64_t base = a.reg == kNoReg ? 0 : regRef(c, a.reg, lane);
  return effectiveAddress(base, a.imm, base32);
}

[[noreturn]] void copyError(int lane, const char *what, const char *space,
                            uint64_t addr, unsigned size, const std::string &detail) {
  std::ostringstream os;
  os << "cp.async: " << what << " of " << size << " bytes at " << space
     << " address 0x" << std::hex << addr << std::dec << ": " << detail;
  throw LaneError(lane, os.str());
}

void cpAsyncOp(ExecContext &c, const Inst &I, uint32_t mask) {
  const unsigned size = I.vec;
  auto &state = laneState(c);
  SharedMemory &sh = c.cta.shared;
  uint64_t gaddrs[32];
  unsigned reads = 0;
  uint64_t readBytes = 0;
  forLanes(mask, [&](int l) {
    uint64_t dst = addressOf(c, I.ops[0], I.mode3 & 1, l);
    uint64_t src = addressOf(c, I.ops[1], false, l);
    unsigned srcSize = size;
    if (I.mode == SrcSize) {
      uint64_t v = readOp(c, I.ops[3], l);
      srcSize = unsigned(uint32_t(v));
      if (srcSize > size)
        throw LaneError(l, "cp.async: src-size " + std::to_string(srcSize) +
                               " is larger than the copy size " + std::to_string(size));
    } else if (I.mode == IgnoreSrc) {
      if (readOp(c, I.ops[3], l) != 0)
        srcSize = 0;
    }
    if (dst % size)
      copyError(l, "misaligned destination", "shared", dst, size,
                "the address must be a multiple of the copy size");
    if (dst + size > sh.size())
      copyError(l, "out-of-bounds destination", "shared", dst, size,
                "the CTA has " + std::to_string(sh.size()) + " bytes of shared memory");
    AsyncCopy cp;
    cp.sharedOffset = uint32_t(dst);
    cp.size = size;
    cp.line = I.line;
    std::memset(cp.bytes, 0, sizeof cp.bytes);
    if (srcSize) {
      if (src % size)
        copyError(l, "misaligned source", "global", src, size,
                  "the address must be a multiple of the copy size");
      const uint8_t *p = c.global.translate(src, srcSize);
      if (!p)
        copyError(l, "out-of-bounds source", "global", src, srcSize,
                  c.global.describe(src, srcSize));
      std::memcpy(cp.bytes, p, srcSize);
      gaddrs[reads++] = src;
      readBytes += srcSize;
    }
    if (sh.raceCheck()) {
      std::string race = sh.recordWrite(cp.sharedOffset, size, c.threadIndex(l), I.line,
                                        cp.bytes);
      if (!race.empty())
        throw LaneError(l, race);
    }
    state[l].open.push_back(cp);
  });
  c.counters.asyncCopyBytes += uint64_t(__builtin_popcount(mask)) * size;
  if (reads) {
    ++c.counters.globalLoadRequests;
    c.counters.globalLoadSectors += countSectors(gaddrs, reads, size);
    c.counters.globalLoadBytes += readBytes;
  }
}

void commitOp(ExecContext &c, const Inst &, uint32_t mask) {
  auto &state = laneState(c);
  forLanes(mask, [&](int l) {
    // An empty group is still a group (wait_group counts it).
    state[l].groups.push_back(std::move(state[l].open));
    state[l].open.clear();
  });
}

void land(ExecContext &c, int lane, const std::vector<AsyncCopy> &group) {
  SharedMemory &sh = c.cta.shared;
  for (const AsyncCopy &cp : group) {
    if (sh.raceCheck()) {
      std::string race = sh.recordWrite(cp.sharedOffset, cp.size, c.threadIndex(lane),
                                        cp.line, cp.bytes);
      if (!race.empty())
        throw LaneError(lane, race + " (a cp.async copy landing at this wait)");
    }
    std::memcpy(sh.at(cp.sharedOffset), cp.bytes, cp.size);
  }
}

void waitOp(ExecContext &c, const Inst &I, uint32_t mask) {
  auto &state = laneState(c);
  const bool all = I.mode2;
  const size_t keep = all ? 0 : size_t(I.ops[0].imm);
  forLanes(mask, [&](int l) {
    LaneAsyncCopies &s = state[l];
    if (all && !s.open.empty()) {
      s.groups.push_back(std::move(s.open));
      s.open.clear();
    }
    while (s.groups.size() > keep) {
      land(c, l, s.groups.front());
      s.groups.pop_front();
    }
  });
}

void decodeCpAsync(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::AsyncCopy;
  if (in.take("commit_group")) {
    in.finish();
    expectOperands(in, inst, "");
    inst.exec = commitOp;
    return;
  }
  if (in.take("wait_group")) {
    in.finish();
    expectOperands(in, inst, "s");
    if (inst.ops[0].kind != OpKind::Imm || inst.ops[0].immIsFloat)
      in.fail("cp.async.wait_group takes an integer constant");
    inst.exec = waitOp;
    return;
  }
  if (in.take("wait_all")) {
    in.finish();
    expectOperands(in, inst, "");
    inst.mode2 = 1;
    inst.exec = waitOp;
    return;
  }
  int level = in.takeOneOf({"ca", "cg"});
  if (level < 0)
    in.fail("cp.async needs .ca or .cg (or is a form not simulated)");
  // .shared{::cta}.global, in that order (destination, then source).
  bool toShared = in.mods.size() >= 2 &&
                  (in.mods[0] == "shared" || in.mods[0] == "shared::cta") &&
                  in.mods[1] == "global";
  if (toShared)
    in.mods.erase(in.mods.begin(), in.mods.begin() + 2);
  else
    in.fail("cp.async copies .shared (destination) from .global (source)");
  bool hint = in.take("L2::cache_hint");
  in.takeOneOf({"L2::64B", "L2::128B", "L2::256B"});
  in.finish();
  if (inst.nops < 3 || inst.nops > 5)
    in.fail("cp.async takes [dst], [src], cp-size, an optional src-size or ignore-src "
            "and an optional cache policy");
  if (inst.ops[0].kind != OpKind::Addr || inst.ops[1].kind != OpKind::Addr)
    in.fail("cp.async needs [dst] and [src] address operands");
  const Operand &sz = inst.ops[2];
  if (sz.kind != OpKind::Imm || sz.immIsFloat || !(sz.imm == 4 || sz.imm == 8 || sz.imm == 16))
    in.fail("cp.async copy size must be the constant 4, 8 or 16");
  if (level == 1 && sz.imm != 16)
    in.fail("cp.async.cg copies 16 bytes");
  inst.vec = uint8_t(sz.imm);
  unsigned extra = inst.nops - 3;
  if (hint) {
    if (extra == 0)
      in.fail(".L2::cache_hint needs a cache-policy operand");
    const Operand &pol = inst.ops[inst.nops - 1];
    if (pol.kind != OpKind::Reg && pol.kind != OpKind::Imm)
      in.fail("bad cache-policy operand");
    --extra;
  }
  if (extra > 1)
    in.fail("too many operands for cp.async");
  inst.mode = NoSrcOperand;
  if (extra == 1) {
    Operand &o = inst.ops[3];
    if (o.kind == OpKind::Reg && in.regs && (*in.regs)[o.reg].type == PType::Pred) {
      inst.mode = IgnoreSrc;
    } else if (o.kind == OpKind::Reg || o.kind == OpKind::Imm) {
      if (o.kind == OpKind::Imm && o.immIsFloat)
        in.fail("cp.async src-size must be an integer");
      if (o.kind == OpKind::Reg && o.reg2 != kNoReg)
        in.fail("bad src-size operand");
      inst.mode = SrcSize;
    } else {
      in.fail("bad src-size / ignore-src operand");
    }
  }
  for (int i = 0; i < 2; ++i) {
    Operand &a = inst.ops[i];
    if (a.hasSymbol && a.symSpace != (i == 0 ? StateSpace::Shared : StateSpace::Global))
      in.fail("cp.async operand in the wrong state space");
  }
  const Operand &d = inst.ops[0];
  if (d.reg != kNoReg && in.regs && bitWidth((*in.regs)[d.reg].type) == 32)
    inst.mode3 = 1;
  inst.exec = cpAsyncOp;
}

} // namespace

void registerAsyncCopyOps(DecoderTable &t) { t["cp.async"] = decodeCpAsync; }

} // namespace tessel::gpusim
