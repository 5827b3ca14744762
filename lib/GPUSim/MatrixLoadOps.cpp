//===- MatrixLoadOps.cpp - ldmatrix and stmatrix ---------------------------===//
//
// ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16 moves one,
// two or four 8x8 matrices of 16-bit elements from shared memory into the
// warp's registers; stmatrix (same shapes and layout) moves them back. Lanes
// 8m..8m+7 supply the addresses of the eight 16-byte rows of matrix m (for
// .x1 and .x2 the other lanes' addresses are ignored). Register m of lane l
// holds row l/4, elements 2(l%4) and 2(l%4)+1 of matrix m (the lower index
// in the low half); with .trans it holds column l/4, rows 2(l%4) and
// 2(l%4)+1 instead. Every row address must be 16-byte aligned and inside the
// CTA's shared memory. Each row access is recorded for the race check by the
// lane that supplied its address; the counters see one shared request whose
// wavefronts are those of 16-byte accesses by the address lanes.
//
//===----------------------------------------------------------------------===//
#include "Decode.h"

#include <cstring>
#include <sstream>

namespace tessel::gpusim {
namespace {

template <bool Store> void matrixOp(ExecContext &c, const Inst &I, uint32_t mask) {
  const char *name = Store ? "stmatrix" : "ldmatrix";
  uint32_t live = c.warp->valid & ~c.warp->exited;
  if (mask != 0xffffffffu || live != 0xffffffffu)
    throw LaneError(__builtin_ctz(mask), std::string(name) +
                                             ".sync.aligned must be executed by all 32 lanes "
                                             "of the warp together");
  const unsigned num = I.vec;
  const bool trans = I.mode2;
  const Operand &addrOp = I.ops[Store ? 0 : 1];
  const Operand &regs = I.ops[Store ? 1 : 0];
  uint32_t rowOff[32], lanes[32];
  SharedMemory &sh = c.cta.shared;
  for (unsigned r = 0; r < 8 * num; ++r) {
    int lane = int(r);
    uint64_t base = addrOp.reg == kNoReg ? 0 : regRef(c, addrOp.reg, lane);
    uint64_t addr = effectiveAddress(base, addrOp.imm, I.mode3);
    uint64_t off = addr;
    if (I.space == StateSpace::Generic) {
      if (addr < kSharedWindow || addr >= kSharedWindow + kWindowSize) {
        std::ostringstream os;
        os << name << ": generic row address 0x" << std::hex << addr
           << " is not in shared memory";
        throw LaneError(lane, os.str());
      }
      off = addr - kSharedWindow;
    }
    if (off % 16) {
      std::ostringstream os;
      os << name << ": misaligned row address 0x" << std::hex << off << std::dec
         << " (shared): rows must be 16-byte aligned";
      throw LaneError(lane, os.str());
    }
    if (off + 16 > sh.size()) {
      std::ostringstream os;
      os << name << ": out-of-bounds row of 16 bytes at shared address 0x" << std::hex
         << off << std::dec << ": the CTA has " << sh.size() << " bytes of shared memory";
      throw LaneError(lane, os.str());
    }
    rowOff[r] = uint32_t(off);
    lanes[r] = r;
  }
  // elems[m][row][col]
  uint16_t elems[4][8][8];
  if (!Store) {
    for (unsigned r = 0; r < 8 * num; ++r) {
      if (sh.raceCheck()) {
        std::string race = sh.recordRead(rowOff[r], 16, c.threadIndex(int(r)), I.line);
        if (!race.empty())
          throw LaneError(int(r), race);
      }
      std::memcpy(elems[r / 8][r % 8], sh.at(rowOff[r]), 16);
    }
    for (unsigned m = 0; m < num; ++m) {
      if (regs.vec[m] == kNoReg)
        continue;
      for (int l = 0; l < 32; ++l) {
        int a = l >> 2, b = 2 * (l & 3);
        uint16_t lo = trans ? elems[m][b][a] : elems[m][a][b];
        uint16_t hi = trans ? elems[m][b + 1][a] : elems[m][a][b + 1];
        regRef(c, regs.vec[m], l) = uint32_t(lo) | uint32_t(hi) << 16;
      }
    }
    SharedWavefronts w = countWavefronts(lanes, rowOff, 8 * num, 16);
    ++c.counters.sharedLoadRequests;
    c.counters.sharedLoadWavefronts += w.wavefronts;
    c.counters.sharedLoadConflicts += w.conflicts();
  } else {
    for (unsigned m = 0; m < num; ++m)
      for (int l = 0; l < 32; ++l) {
        uint32_t v = uint32_t(regRef(c, regs.vec[m], l));
        int a = l >> 2, b = 2 * (l & 3);
        (trans ? elems[m][b][a] : elems[m][a][b]) = uint16_t(v);
        (trans ? elems[m][b + 1][a] : elems[m][a][b + 1]) = uint16_t(v >> 16);
      }
    for (unsigned r = 0; r < 8 * num; ++r) {
      const uint8_t *bytes = reinterpret_cast<const uint8_t *>(elems[r / 8][r % 8]);
      if (sh.raceCheck()) {
        std::string race = sh.recordWrite(rowOff[r], 16, c.threadIndex(int(r)), I.line, bytes);
        if (!race.empty())
          throw LaneError(int(r), race);
      }
      std::memcpy(sh.at(rowOff[r]), bytes, 16);
    }
    SharedWavefronts w = countWavefronts(lanes, rowOff, 8 * num, 16);
    ++c.counters.sharedStoreRequests;
    c.counters.sharedStoreWavefronts += w.wavefronts;
    c.counters.sharedStoreConflicts += w.conflicts();
  }
}

void decodeMatrix(DecodeInput &in, Inst &inst) {
  bool store = in.base == "stmatrix";
  if (!in.take("sync") || !in.take("aligned"))
    in.fail(in.base + " needs .sync.aligned");
  if (!in.take("m8n8"))
    in.fail(in.base + ": only the .m8n8 shape (16-bit elements) is simulated");
  int num = in.takeOneOf({"x1", "x2", "x4"});
  if (num < 0)
    in.fail(in.base + " needs .x1, .x2 or .x4");
  inst.mode2 = in.take("trans");
  StateSpace sp = in.takeSpace();
  if (sp != StateSpace::Shared && sp != StateSpace::Generic)
    in.fail(in.base + " works on shared memory");
  if (!in.take("b16"))
    in.fail(in.base + ": only .b16 is simulated");
  in.finish();
  inst.vec = uint8_t(1u << num);
  inst.space = sp;
  expectOperands(in, inst, store ? "av" : "va");
  const Operand &a = inst.ops[store ? 0 : 1];
  const Operand &r = inst.ops[store ? 1 : 0];
  if (r.kind != OpKind::Vec || r.vecLen != inst.vec)
    in.fail(in.base + " needs a vector of " + std::to_string(inst.vec) + " registers");
  if (store)
    for (uint32_t x : r.vec)
      if (x == kNoReg)
        in.fail("stmatrix sources cannot contain '_'");
  if (a.hasSymbol) {
    if (a.symSpace != StateSpace::Shared)
      in.fail(in.base + " on a variable outside shared memory");
    if (sp == StateSpace::Generic)
      inst.ops[store ? 0 : 1].imm += kSharedWindow;
  }
  if (a.reg != kNoReg && in.regs && bitWidth((*in.regs)[a.reg].type) == 32)
    inst.mode3 = 1;
  inst.cls = store ? InstClass::StoreShared : InstClass::LoadShared;
  inst.exec = store ? matrixOp<true> : matrixOp<false>;
}

} // namespace

void registerMatrixLoadOps(DecoderTable &t) {
  t["ldmatrix"] = decodeMatrix;
  t["stmatrix"] = decodeMatrix;
}

} // namespace tessel::gpusim
