//===- WarpOps.cpp - shfl.sync, vote.sync, activemask ---------------------===//
//
// Lane-exchange instructions read the operands of all named lanes before
// writing any destination. Every lane in the member mask must be active
// (converged) and executing: the ISA leaves other cases undefined, so they
// are errors here.
//
//===----------------------------------------------------------------------===//
#include "Decode.h"

namespace tessel::gpusim {
namespace {

enum ShflMode : uint8_t { Up, Down, Bfly, Idx };

uint32_t checkMembers(ExecContext &c, const Inst &I, uint32_t mask,
                      const Operand &memberOp) {
  int first = __builtin_ctz(mask);
  uint32_t members = uint32_t(readOp(c, memberOp, first));
  forLanes(mask, [&](int l) {
    if (uint32_t(readOp(c, memberOp, l)) != members)
      throw LaneError(l, "lanes disagree on the member mask");
    if (!(members >> l & 1))
      throw LaneError(l, "executing lane is not in the member mask");
  });
  uint32_t live = members & c.warp->valid & ~c.warp->exited;
  if ((live & mask) != live)
    throw LaneError(first, "member lanes are not all converged here (active "
                           "mask 0x" + [&] {
                             char b[16];
                             snprintf(b, sizeof b, "%08x", mask);
                             return std::string(b);
                           }() + ")");
  return members;
}

template <ShflMode M> void shflOp(ExecContext &c, const Inst &I, uint32_t mask) {
  checkMembers(c, I, mask, I.ops[4]);
  uint32_t src[32];
  for (int l = 0; l < 32; ++l)
    src[l] = (mask >> l & 1) ? uint32_t(readOp(c, I.ops[1], l)) : 0;
  forLanes(mask, [&](int l) {
    uint32_t b = uint32_t(readOp(c, I.ops[2], l)) & 31;
    uint32_t cc = uint32_t(readOp(c, I.ops[3], l));
    uint32_t clamp = cc & 31, seg = (cc >> 8) & 31;
    int maxLane = int((uint32_t(l) & seg) | (clamp & ~seg));
    int minLane = int(uint32_t(l) & seg);
    int j;
    bool ok;
    if (M == Up) { j = l - int(b); ok = j >= maxLane; }
    else if (M == Down) { j = l + int(b); ok = j <= maxLane; }
    else if (M == Bfly) { j = l ^ int(b); ok = j <= maxLane; }
    else { j = minLane | int(b & ~seg); ok = j <= maxLane; }
    if (!ok) j = l;
    if (!(mask >> j & 1))
      throw LaneError(l, "shfl.sync reads lane " + std::to_string(j) + ", which is not executing it");
    const Operand &d = I.ops[0];
    if (d.kind == OpKind::Reg) {
      regRef(c, d.reg, l) = src[j];
      if (d.reg2 != kNoReg)
        regRef(c, d.reg2, l) = ok;
    }
  });
}

void decodeShfl(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::Warp;
  if (!in.take("sync"))
    in.fail("shfl without .sync is not supported on sm_70+");
  int mode = in.takeOneOf({"up", "down", "bfly", "idx"});
  PType t = oneType(in);
  in.finish();
  if (mode < 0 || t != PType::B32)
    in.fail("shfl.sync needs a mode and .b32");
  expectOperands(in, inst, "dssss");
  for (int i = 1; i < 5; ++i)
    resolveImm(in, inst.ops[i], PType::B32);
  inst.exec = mode == 0 ? shflOp<Up> : mode == 1 ? shflOp<Down> : mode == 2 ? shflOp<Bfly> : shflOp<Idx>;
}

enum VoteMode : uint8_t { All, Any, Uni, Ballot };

template <VoteMode M> void voteOp(ExecContext &c, const Inst &I, uint32_t mask) {
  uint32_t members = checkMembers(c, I, mask, I.ops[2]);
  (void)members;
  uint32_t ballot = 0;
  forLanes(mask, [&](int l) {
    if (readOp(c, I.ops[1], l))
      ballot |= 1u << l;
  });
  forLanes(mask, [&](int l) {
    uint64_t r;
    if (M == Ballot) r = ballot;
    else if (M == All) r = ballot == mask;
    else if (M == Any) r = ballot != 0;
    else r = ballot == 0 || ballot == mask;
    writeReg(c, I.ops[0], l, r);
  });
}

void decodeVote(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::Warp;
  if (!in.take("sync"))
    in.fail("vote without .sync is not supported on sm_70+");
  int mode = in.takeOneOf({"all", "any", "uni", "ballot"});
  PType t = oneType(in);
  in.finish();
  if (mode < 0 || (mode == 3 ? t != PType::B32 : t != PType::Pred))
    in.fail("vote.sync needs .all/.any/.uni with .pred or .ballot with .b32");
  expectOperands(in, inst, "dss");
  resolveImm(in, inst.ops[1], PType::Pred);
  resolveImm(in, inst.ops[2], PType::B32);
  inst.exec = mode == 0 ? voteOp<All> : mode == 1 ? voteOp<Any> : mode == 2 ? voteOp<Uni> : voteOp<Ballot>;
}

void activemaskOp(ExecContext &c, const Inst &I, uint32_t mask) {
  forLanes(mask, [&](int l) { writeReg(c, I.ops[0], l, c.activeMask); });
}

void decodeActivemask(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::Warp;
  PType t = oneType(in);
  in.finish();
  if (t != PType::B32)
    in.fail("activemask takes .b32");
  expectOperands(in, inst, "d");
  inst.exec = activemaskOp;
}

} // namespace

void registerWarpOps(DecoderTable &t) {
  t["shfl"] = decodeShfl;
  t["vote"] = decodeVote;
  t["activemask"] = decodeActivemask;
}

} // namespace tessel::gpusim
