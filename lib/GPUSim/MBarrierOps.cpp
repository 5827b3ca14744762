//===- MBarrierOps.cpp - mbarrier, elect, proxy fences, tensor-map upkeep -===//
//
// mbarrier.{init,inval,arrive,arrive.expect_tx,arrive_drop,expect_tx,
//   complete_tx,test_wait,try_wait}{.parity} on .shared::cta .b64 objects.
// An object is its 8 bytes of shared memory, encoded as
//   bits  0-19  pending arrivals of the current phase
//   bits 20-39  expected arrivals (the init count; arrive_drop lowers it)
//   bits 40-60  transaction count (21-bit two's complement: expect_tx adds,
//               complete_tx subtracts; it may go negative when bytes land
//               before they are expected)
//   bit  61     phase parity
//   bit  62     initialized (set by init, cleared by inval)
// A phase completes when no arrival is pending and the transaction count is
// zero: the parity flips and the pending count is reset to the expected one.
// The state an arrive returns is the parity of the phase it arrived on;
// test_wait/try_wait with a state are true once that phase completed, and
// with .parity P once the phase of parity P completed (the current phase has
// the other parity).
//
// A wait that sees its phase complete advances the race check's epoch as
// bar.sync does (shared-memory writes before an arrive are ordered before
// the reads after the wait).
//
// try_wait may suspend the thread: here the warp yields (Runner retries the
// instruction) while other warps of the CTA make progress. When no warp can
// make progress, the suspend time limit expires and try_wait returns false;
// after many expiries with no mbarrier changing anywhere in the CTA, the wait
// is reported as a deadlock. test_wait never waits.
//
// Also here: elect.sync, setmaxnreg (validated; registers are not limited),
// fence.proxy.* and fence.mbarrier_init (single-CTA ordering already holds:
// warps run one at a time and every async copy lands when issued),
// cvta(.to).param (the kParamWindow generic window), prefetch.tensormap,
// tensormap.replace (writes the simulator's tensor-map encoding,
// TensorMap.h) and tensormap.cp_fenceproxy (copies a tensor map shared ->
// global).
//
//===----------------------------------------------------------------------===//
#include "AsyncUnits.h"

#include "tessel/GPUSim/TensorMap.h"

#include <cstring>
#include <sstream>

namespace tessel::gpusim {

uint64_t operandAddress(ExecContext &c, const Operand &a, int lane) {
  uint64_t base = 0;
  if (a.reg != kNoReg) {
    base = regRef(c, a.reg, lane);
    if (bitWidth(c.kernel.regs[a.reg].type) == 32)
      base = uint32_t(base);
  }
  return base + a.imm;
}

uint32_t sharedOffset(ExecContext &c, int lane, StateSpace space,
                      uint64_t addr, uint64_t size, uint64_t align,
                      const char *what) {
  uint64_t off = addr;
  if (space == StateSpace::Generic) {
    if (addr < kSharedWindow || addr >= kSharedWindow + kWindowSize) {
      std::ostringstream os;
      os << what << ": generic address 0x" << std::hex << addr
         << " is not in shared memory";
      throw LaneError(lane, os.str());
    }
    off = addr - kSharedWindow;
  }
  if (off + size > c.cta.shared.size() || off + size < off) {
    std::ostringstream os;
    os << what << ": " << size << " bytes at shared address 0x" << std::hex
       << off << std::dec << " are outside the CTA's "
       << c.cta.shared.size() << " bytes of shared memory";
    throw LaneError(lane, os.str());
  }
  if (align > 1 && off % align) {
    std::ostringstream os;
    os << what << ": shared address 0x" << std::hex << off << std::dec
       << " is not aligned to " << align << " bytes";
    throw LaneError(lane, os.str());
  }
  return uint32_t(off);
}

namespace {

// ---------------------------------------------------------------- mbarrier

constexpr uint64_t kCountMask = (1u << 20) - 1;
constexpr int64_t kTxMax = (1 << 20) - 1;

struct MBarrier {
  uint32_t pending, expected;
  int64_t tx;
  bool parity, init;

  static MBarrier load(const uint8_t *p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    MBarrier b;
    b.pending = uint32_t(v & kCountMask);
    b.expected = uint32_t((v >> 20) & kCountMask);
    b.tx = signExtend(v >> 40, 21);
    b.parity = (v >> 61) & 1;
    b.init = (v >> 62) & 1;
    return b;
  }
  void store(uint8_t *p) const {
    uint64_t v = uint64_t(pending) | uint64_t(expected) << 20 |
                 (uint64_t(tx) & ((1ull << 21) - 1)) << 40 |
                 uint64_t(parity) << 61 | uint64_t(init) << 62;
    std::memcpy(p, &v, 8);
  }
  void maybeComplete() {
    if (pending == 0 && tx == 0) {
      parity = !parity;
      pending = expected;
    }
  }
};

enum MbKind : uint8_t {
  MbInit, MbInval, MbArrive, MbArriveDrop, MbExpectTx, MbCompleteTx,
  MbTestWait, MbTryWait
};

std::string barrierName(uint32_t off) {
  std::ostringstream os;
  os << "the mbarrier at shared address 0x" << std::hex << off;
  return os.str();
}

uint32_t barrierOffset(ExecContext &c, const Inst &I, const Operand &a,
                       int lane) {
  return sharedOffset(c, lane, I.space, operandAddress(c, a, lane), 8, 8,
                      "mbarrier");
}

MBarrier loadInit(ExecContext &c, int lane, uint32_t off, const char *op) {
  MBarrier b = MBarrier::load(c.cta.shared.at(off));
  if (!b.init)
    throw LaneError(lane, std::string("mbarrier.") + op + " on " +
                              barrierName(off) +
                              ", which is not initialized (mbarrier.init)");
  return b;
}

void changed(ExecContext &c) { ++asyncUnits(c).mbarrierEvents; }

void addTx(ExecContext &c, int lane, uint32_t off, MBarrier &b, int64_t d) {
  b.tx += d;
  if (b.tx > kTxMax || b.tx < -kTxMax)
    throw LaneError(lane, "mbarrier transaction count out of range on " +
                              barrierName(off));
}

void arrive(ExecContext &c, int lane, uint32_t off, MBarrier &b,
            uint32_t count) {
  if (count == 0 || count > b.pending)
    throw LaneError(lane, "mbarrier arrive with count " +
                              std::to_string(count) + " on " +
                              barrierName(off) + ", which has " +
                              std::to_string(b.pending) +
                              " pending arrivals in its current phase");
  b.pending -= count;
}

} // namespace

void mbarrierCompleteTx(ExecContext &c, int lane, uint32_t off, int64_t bytes) {
  MBarrier b = loadInit(c, lane, off, "complete_tx (by an async copy)");
  addTx(c, lane, off, b, -bytes);
  b.maybeComplete();
  b.store(c.cta.shared.at(off));
  changed(c);
}

namespace {

void mbarrierOp(ExecContext &c, const Inst &I, uint32_t mask) {
  const MbKind kind = MbKind(I.mode);
  const bool parity = I.mode2;
  const bool hasCount = I.mode3 & 1, expectTx = I.mode3 & 2;
  // Operand positions: the waits and arrives have a destination first.
  const bool hasDest = kind == MbArrive || kind == MbArriveDrop ||
                       kind == MbTestWait || kind == MbTryWait;
  const Operand &addr = I.ops[hasDest ? 1 : 0];
  if (kind == MbTestWait || kind == MbTryWait) {
    bool allDone = true;
    uint32_t results = 0;
    forLanes(mask, [&](int l) {
      uint32_t off = barrierOffset(c, I, addr, l);
      MBarrier b = loadInit(c, l, off, kind == MbTryWait ? "try_wait" : "test_wait");
      uint64_t s = readOp(c, I.ops[2], l);
      if (parity && s > 1)
        throw LaneError(l, "mbarrier wait: phase parity must be 0 or 1");
      // The phase of parity s completed iff the current phase has the other.
      bool done = b.parity != bool(s & 1);
      results |= uint32_t(done) << l;
      allDone &= done;
    });
    if (kind == MbTryWait && !allDone) {
      AsyncUnits &u = asyncUnits(c);
      if (!c.stalled) {
        c.blocked = true; // retried after the other warps ran
        return;
      }
      // Nothing else can move: the suspend time limit expires.
      c.stalled = false;
      if (u.eventsAtTimeout == u.mbarrierEvents) {
        if (++u.timeouts > 1000)
          throw LaneError(__builtin_ctz(mask & ~results),
                          "deadlock: mbarrier.try_wait can never complete (no "
                          "warp of the CTA can arrive on the mbarrier or "
                          "complete its transactions)");
      } else {
        u.eventsAtTimeout = u.mbarrierEvents;
        u.timeouts = 1;
      }
    }
    forLanes(mask, [&](int l) {
      writeReg(c, I.ops[0], l, (results >> l) & 1);
    });
    // A completed phase orders the arrivals (and the writes before them)
    // before the waiters' later accesses: for the race check it acts as a
    // barrier (coarsely: for every thread of the CTA).
    if (allDone)
      c.cta.shared.barrier();
    return;
  }
  forLanes(mask, [&](int l) {
    uint32_t off = barrierOffset(c, I, addr, l);
    uint8_t *p = c.cta.shared.at(off);
    switch (kind) {
    case MbInit: {
      uint64_t n = readOp(c, I.ops[1], l);
      if (n < 1 || n > kCountMask)
        throw LaneError(l, "mbarrier.init: the count must be in [1, 2^20 - 1], not " +
                               std::to_string(n));
      MBarrier b{uint32_t(n), uint32_t(n), 0, false, true};
      b.store(p);
      break;
    }
    case MbInval: {
      loadInit(c, l, off, "inval");
      std::memset(p, 0, 8);
      break;
    }
    case MbArrive:
    case MbArriveDrop: {
      MBarrier b = loadInit(c, l, off, kind == MbArrive ? "arrive" : "arrive_drop");
      uint32_t count = 1;
      if (expectTx) // the third operand is the byte count
        addTx(c, l, off, b, int64_t(uint32_t(readOp(c, I.ops[2], l))));
      else if (hasCount)
        count = uint32_t(readOp(c, I.ops[2], l));
      bool phase = b.parity;
      arrive(c, l, off, b, count);
      if (kind == MbArriveDrop) {
        if (b.expected < count)
          throw LaneError(l, "mbarrier.arrive_drop below zero expected arrivals");
        b.expected -= count;
      }
      b.maybeComplete();
      b.store(p);
      writeReg(c, I.ops[0], l, uint64_t(phase));
      break;
    }
    case MbExpectTx:
    case MbCompleteTx: {
      MBarrier b = loadInit(c, l, off, kind == MbExpectTx ? "expect_tx" : "complete_tx");
      int64_t n = int64_t(uint32_t(readOp(c, I.ops[1], l)));
      addTx(c, l, off, b, kind == MbExpectTx ? n : -n);
      b.maybeComplete();
      b.store(p);
      break;
    }
    default:
      break;
    }
    changed(c);
  });
}

void decodeMBarrier(DecodeInput &in, Inst &inst) {
  int k = in.takeOneOf({"arrive", "arrive_drop"});
  k = k < 0 ? -1 : k + MbArrive;
  bool expectTx = k >= 0 && in.take("expect_tx");
  if (k < 0) {
    static const MbKind kinds[] = {MbInit, MbInval, MbExpectTx, MbCompleteTx,
                                   MbTestWait, MbTryWait};
    int j = in.takeOneOf({"init", "inval", "expect_tx", "complete_tx",
                          "test_wait", "try_wait"});
    if (j < 0)
      in.fail("unknown mbarrier operation");
    k = kinds[j];
  }
  inst.mode = uint8_t(k);
  inst.mode2 = in.take("parity");
  if (in.take("noComplete"))
    in.fail(".noComplete is not simulated");
  for (const char *q : {"release", "acquire", "relaxed", "cta", "cluster"})
    in.take(q);
  if (in.take("shared::cluster"))
    in.fail("mbarrier on .shared::cluster addresses (other CTAs of a cluster) "
            "is not simulated");
  inst.space = in.takeSpace();
  if (inst.space != StateSpace::Shared && inst.space != StateSpace::Generic)
    in.fail("mbarrier objects live in shared memory");
  if (!in.take("b64"))
    in.fail("mbarrier takes .b64 objects");
  in.finish();
  inst.cls = InstClass::Barrier;
  auto addrAt = [&](unsigned i) {
    if (inst.ops[i].kind != OpKind::Addr)
      in.fail("operand " + std::to_string(i + 1) + " must be an address");
    if (inst.ops[i].hasSymbol && inst.ops[i].symSpace != StateSpace::Shared)
      in.fail("mbarrier objects live in shared memory");
    if (inst.ops[i].hasSymbol && inst.space == StateSpace::Generic)
      inst.ops[i].imm += kSharedWindow;
  };
  auto value = [&](unsigned i, PType t) {
    Operand &o = inst.ops[i];
    if (o.kind != OpKind::Reg && o.kind != OpKind::Imm)
      in.fail("operand " + std::to_string(i + 1) + " must be a register or an immediate");
    resolveImm(in, o, t);
  };
  auto dest = [&](unsigned i) {
    if (inst.ops[i].kind != OpKind::Reg && inst.ops[i].kind != OpKind::Sink)
      in.fail("operand " + std::to_string(i + 1) + " must be a register or _");
  };
  switch (MbKind(k)) {
  case MbInit:
    if (inst.nops != 2) in.fail("mbarrier.init takes [addr], count");
    addrAt(0);
    value(1, PType::B32);
    break;
  case MbInval:
    if (inst.nops != 1) in.fail("mbarrier.inval takes [addr]");
    addrAt(0);
    break;
  case MbArrive:
  case MbArriveDrop:
    if (expectTx ? inst.nops != 3 : (inst.nops < 2 || inst.nops > 3))
      in.fail(expectTx ? "mbarrier.arrive.expect_tx takes state, [addr], tx-count"
                       : "mbarrier.arrive takes state, [addr]{, count}");
    dest(0);
    addrAt(1);
    if (inst.nops == 3)
      value(2, PType::B32);
    inst.mode3 = uint8_t((inst.nops == 3 && !expectTx) | (expectTx << 1));
    break;
  case MbExpectTx:
  case MbCompleteTx:
    if (inst.nops != 2) in.fail("expected [addr], tx-count");
    addrAt(0);
    value(1, PType::B32);
    break;
  case MbTestWait:
  case MbTryWait:
    if (inst.nops < 3 || inst.nops > (k == MbTryWait ? 4 : 3))
      in.fail("expected waitComplete, [addr], state|phaseParity");
    dest(0);
    addrAt(1);
    value(2, inst.mode2 ? PType::B32 : PType::B64);
    if (inst.nops == 4)
      value(3, PType::B32); // suspend-time hint: ignored
    break;
  }
  inst.exec = mbarrierOp;
}

// -------------------------------------------------------------- elect.sync

void electOp(ExecContext &c, const Inst &I, uint32_t mask) {
  uint32_t members = uint32_t(readOp(c, I.ops[1], __builtin_ctz(mask)));
  uint32_t live = members & c.warp->valid & ~c.warp->exited;
  if ((live & c.activeMask) != live)
    throw LaneError(__builtin_ctz(mask),
                    "elect.sync: lanes of the member mask are not converged");
  uint32_t cand = mask & members;
  int leader = cand ? __builtin_ctz(cand) : -1;
  forLanes(mask, [&](int l) {
    if (uint32_t(readOp(c, I.ops[1], l)) != members)
      throw LaneError(l, "elect.sync: lanes disagree on the member mask");
    const Operand &d = I.ops[0];
    if (d.kind == OpKind::Reg) {
      if (d.reg != kNoReg)
        regRef(c, d.reg, l) = uint32_t(leader < 0 ? 0 : leader);
      if (d.reg2 != kNoReg)
        regRef(c, d.reg2, l) = l == leader;
    }
  });
}

void decodeElect(DecodeInput &in, Inst &inst) {
  if (!in.take("sync"))
    in.fail("elect needs .sync");
  in.finish();
  expectOperands(in, inst, "ds");
  resolveImm(in, inst.ops[1], PType::B32);
  inst.cls = InstClass::Warp;
  inst.exec = electOp;
}

// ------------------------------------------------- setmaxnreg, fences, ...

void nopOp(ExecContext &, const Inst &, uint32_t) {}

void decodeSetmaxnreg(DecodeInput &in, Inst &inst) {
  if (in.takeOneOf({"inc", "dec"}) < 0)
    in.fail("setmaxnreg needs .inc or .dec");
  if (!in.take("sync") || !in.take("aligned") || !in.take("u32"))
    in.fail("setmaxnreg is .sync.aligned.u32");
  in.finish();
  if (inst.nops != 1 || inst.ops[0].kind != OpKind::Imm || inst.ops[0].immIsFloat)
    in.fail("setmaxnreg takes an immediate register count");
  uint64_t n = inst.ops[0].imm;
  if (n < 24 || n > 256 || n % 8)
    in.fail("setmaxnreg: the register count must be a multiple of 8 in [24, 256], not " +
            std::to_string(n));
  inst.cls = InstClass::Other;
  inst.exec = nopOp;
}

void decodeFenceProxy(DecodeInput &in, Inst &inst) {
  // fence.proxy.async{.shared::cta,.shared::cluster,.global},
  // fence.proxy.tensormap::generic.{release,acquire}.{cta,cluster,gpu,sys}
  //   [addr], 128, fence.proxy.{alias}.
  bool tensormap = in.take("tensormap::generic");
  if (!tensormap && !in.take("async") && !in.take("alias"))
    in.fail("unknown proxy fence");
  for (const char *q : {"shared::cta", "shared::cluster", "global", "shared",
                        "release", "acquire", "cta", "cluster", "gpu", "sys"})
    in.take(q);
  in.finish();
  if (tensormap && inst.nops == 2) {
    if (inst.ops[0].kind != OpKind::Addr || inst.ops[1].kind != OpKind::Imm ||
        inst.ops[1].imm != kTensorMapBytes)
      in.fail("fence.proxy.tensormap::generic.acquire takes [addr], 128");
  } else if (inst.nops) {
    in.fail("unexpected operands");
  }
  inst.cls = InstClass::Other;
  inst.exec = nopOp;
}

void decodeFenceMbarrierInit(DecodeInput &in, Inst &inst) {
  in.take("release");
  in.take("cluster");
  in.finish();
  if (inst.nops)
    in.fail("unexpected operands");
  inst.cls = InstClass::Other;
  inst.exec = nopOp;
}

void cvtaParamOp(ExecContext &c, const Inst &I, uint32_t mask) {
  forLanes(mask, [&](int l) {
    uint64_t a = readOp(c, I.ops[1], l);
    uint64_t r;
    if (I.mode) {
      if (a < kParamWindow || a >= kParamWindow + kWindowSize)
        throw LaneError(l, "cvta.to.param: generic address is not in the param window");
      r = a - kParamWindow;
    } else {
      r = a + kParamWindow;
    }
    writeReg(c, I.ops[0], l, truncBits(r, bitWidth(I.type)));
  });
}

void decodeCvtaParam(DecodeInput &in, Inst &inst, bool to) {
  PType t = oneType(in);
  in.finish();
  if (t != PType::U64)
    in.fail("cvta.param takes .u64");
  expectOperands(in, inst, "ds");
  const Operand &s = inst.ops[1];
  if (s.kind == OpKind::Imm && s.hasSymbol && s.symSpace != StateSpace::Param)
    in.fail("variable in another state space");
  inst.type = t;
  inst.mode = to;
  inst.cls = InstClass::Convert;
  inst.exec = cvtaParamOp;
}

void decodePrefetchTensormap(DecodeInput &in, Inst &inst) {
  in.takeSpace();
  in.finish();
  if (inst.nops != 1 || inst.ops[0].kind != OpKind::Addr)
    in.fail("prefetch.tensormap takes [addr]");
  inst.cls = InstClass::Other;
  inst.exec = nopOp;
}

// -------------------------------------------------------- tensormap.replace

enum TmField : uint8_t {
  FAddress, FRank, FBoxDim, FGlobalDim, FGlobalStride, FElementStride,
  FElemType, FInterleave, FSwizzle, FFill
};

uint8_t *tensorMapAt(ExecContext &c, const Inst &I, int lane, uint64_t addr,
                     const char *what) {
  if (I.space == StateSpace::Shared)
    return c.cta.shared.at(sharedOffset(c, lane, StateSpace::Shared, addr,
                                        kTensorMapBytes, 64, what));
  if (I.space == StateSpace::Generic && addr >= kSharedWindow &&
      addr < kSharedWindow + kWindowSize)
    return c.cta.shared.at(sharedOffset(c, lane, StateSpace::Generic, addr,
                                        kTensorMapBytes, 64, what));
  if (addr % 64)
    throw LaneError(lane, std::string(what) + ": a tensor map must be 64-byte aligned");
  uint8_t *p = c.global.translate(addr, kTensorMapBytes);
  if (!p)
    throw LaneError(lane, std::string(what) + ": " +
                              c.global.describe(addr, kTensorMapBytes));
  return p;
}

void tensormapReplaceOp(ExecContext &c, const Inst &I, uint32_t mask) {
  const TmField f = TmField(I.mode);
  const bool ordinal = I.nops == 3;
  forLanes(mask, [&](int l) {
    uint8_t *m = tensorMapAt(c, I, l, operandAddress(c, I.ops[0], l), "tensormap.replace");
    uint32_t ord = ordinal ? uint32_t(I.ops[1].imm) : 0;
    uint64_t v = readOp(c, I.ops[ordinal ? 2 : 1], l);
    auto put = [&](unsigned off, uint64_t val, unsigned bytes) {
      std::memcpy(m + off, &val, bytes);
    };
    uint32_t magic = kTensorMapMagic;
    std::memcpy(m + tensormap::Magic, &magic, 4);
    switch (f) {
    case FAddress: put(tensormap::Address, v, 8); break;
    case FRank:
      if (v > 4)
        throw LaneError(l, "tensormap.replace.rank: the value is rank - 1, at most 4");
      put(tensormap::Rank, v + 1, 1);
      break;
    case FBoxDim: put(tensormap::BoxDim + 4 * ord, v, 4); break;
    case FGlobalDim: put(tensormap::GlobalDim + 4 * ord, v, 4); break;
    case FGlobalStride: put(tensormap::GlobalStride + 8 * ord, v, 8); break;
    case FElementStride: put(tensormap::ElementStride + 4 * ord, v, 4); break;
    case FElemType:
      if (!tensormap::elementBytes(unsigned(v)))
        throw LaneError(l, "tensormap.replace.elemtype: element type " +
                               std::to_string(v) + " is not simulated");
      put(tensormap::ElemType, v, 1);
      break;
    case FInterleave: put(tensormap::Interleave, v, 1); break;
    case FSwizzle: put(tensormap::Swizzle, v, 1); break;
    case FFill: put(tensormap::Fill, v, 1); break;
    }
  });
}

void decodeTensormapReplace(DecodeInput &in, Inst &inst) {
  if (!in.take("replace"))
    in.fail("only tensormap.replace is simulated");
  if (!in.take("tile"))
    in.fail("tensormap.replace: only .tile mode is simulated");
  int f = in.takeOneOf({"global_address", "rank", "box_dim", "global_dim",
                        "global_stride", "element_stride", "elemtype",
                        "interleave_layout", "swizzle_mode", "fill_mode"});
  if (f < 0)
    in.fail("tensormap.replace: unknown or unsupported field");
  inst.space = in.takeSpace();
  if (inst.space != StateSpace::Shared && inst.space != StateSpace::Global &&
      inst.space != StateSpace::Generic)
    in.fail("tensormap.replace: bad state space");
  if (!in.take("b1024"))
    in.fail("tensormap.replace needs .b1024");
  int w = in.takeOneOf({"b32", "b64"});
  in.finish();
  bool wide = f == FAddress || f == FGlobalStride;
  if (w != (wide ? 1 : 0))
    in.fail(wide ? "this field is .b64" : "this field is .b32");
  bool ordinal = f == FBoxDim || f == FGlobalDim || f == FGlobalStride ||
                 f == FElementStride;
  if (inst.nops != (ordinal ? 3u : 2u) || inst.ops[0].kind != OpKind::Addr)
    in.fail(ordinal ? "expected [addr], ordinal, value" : "expected [addr], value");
  if (ordinal) {
    if (inst.ops[1].kind != OpKind::Imm || inst.ops[1].immIsFloat ||
        inst.ops[1].imm > (f == FGlobalStride ? 3u : 4u))
      in.fail("tensormap.replace: the ordinal must be an immediate dimension");
  }
  Operand &v = inst.ops[ordinal ? 2 : 1];
  if (v.kind != OpKind::Reg && v.kind != OpKind::Imm)
    in.fail("bad value operand");
  resolveImm(in, v, wide ? PType::B64 : PType::B32);
  inst.mode = uint8_t(f);
  inst.cls = InstClass::Other;
  inst.exec = tensormapReplaceOp;
}

void tensormapCopyOp(ExecContext &c, const Inst &I, uint32_t mask) {
  // Warp-collective (.sync.aligned): one copy of 128 bytes shared -> global.
  int l0 = __builtin_ctz(mask);
  uint64_t dst = operandAddress(c, I.ops[0], l0), src = operandAddress(c, I.ops[1], l0);
  forLanes(mask, [&](int l) {
    if (operandAddress(c, I.ops[0], l) != dst || operandAddress(c, I.ops[1], l) != src)
      throw LaneError(l, "tensormap.cp_fenceproxy: lanes disagree on the addresses");
  });
  uint32_t off = sharedOffset(c, l0, StateSpace::Shared, src, kTensorMapBytes,
                              64, "tensormap.cp_fenceproxy source");
  if (dst % 64)
    throw LaneError(l0, "tensormap.cp_fenceproxy: the global tensor map must be 64-byte aligned");
  uint8_t *g = c.global.translate(dst, kTensorMapBytes);
  if (!g)
    throw LaneError(l0, "tensormap.cp_fenceproxy: " +
                            c.global.describe(dst, kTensorMapBytes));
  std::memcpy(g, c.cta.shared.at(off), kTensorMapBytes);
}

void decodeTensormapCopy(DecodeInput &in, Inst &inst) {
  // tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.
  //   {cta,cluster,gpu,sys}.sync.aligned [dst], [src], 128
  for (const char *q : {"global", "shared::cta", "tensormap::generic", "release",
                        "sync", "aligned"})
    if (!in.take(q))
      in.fail(std::string("tensormap.cp_fenceproxy needs .") + q);
  in.takeOneOf({"cta", "cluster", "gpu", "sys"});
  in.finish();
  if (inst.nops != 3 || inst.ops[0].kind != OpKind::Addr ||
      inst.ops[1].kind != OpKind::Addr || inst.ops[2].kind != OpKind::Imm ||
      inst.ops[2].imm != kTensorMapBytes)
    in.fail("tensormap.cp_fenceproxy takes [dst], [src], 128");
  inst.cls = InstClass::Other;
  inst.exec = tensormapCopyOp;
}

} // namespace

void registerMBarrierOps(DecoderTable &t) {
  t["mbarrier"] = decodeMBarrier;
  t["elect"] = decodeElect;
  t["setmaxnreg"] = decodeSetmaxnreg;
  t["fence.proxy"] = decodeFenceProxy;
  t["fence.mbarrier_init"] = decodeFenceMbarrierInit;
  t["cvta.param"] = [](DecodeInput &in, Inst &inst) { decodeCvtaParam(in, inst, false); };
  t["cvta.to.param"] = [](DecodeInput &in, Inst &inst) { decodeCvtaParam(in, inst, true); };
  t["prefetch.tensormap"] = decodePrefetchTensormap;
  t["prefetch.param.tensormap"] = decodePrefetchTensormap;
  t["prefetch.global.tensormap"] = decodePrefetchTensormap;
  t["prefetch.const.tensormap"] = decodePrefetchTensormap;
  t["tensormap"] = decodeTensormapReplace;
  t["tensormap.cp_fenceproxy"] = decodeTensormapCopy;
}

} // namespace tessel::gpusim
