//===- ControlOps.cpp - bra, ret, exit, trap, bar.sync, fences ------------===//
//
// Control instructions only decode here; the executor (Runner.cpp) acts on
// Inst::op because they change the warp's stack or stop it at a barrier.
// Memory fences are no-ops: warps of a CTA run one at a time between
// barriers, so every store is visible to every later load.
//
//===----------------------------------------------------------------------===//
#include "Decode.h"

namespace tessel::gpusim {
namespace {

void nopOp(ExecContext &, const Inst &, uint32_t) {}

void decodeBra(DecodeInput &in, Inst &inst) {
  in.take("uni");
  in.finish();
  expectOperands(in, inst, "l");
  inst.op = Op::Bra;
  inst.cls = InstClass::Control;
}

void decodeRet(DecodeInput &in, Inst &inst) {
  in.take("uni");
  in.finish();
  expectOperands(in, inst, "");
  inst.op = in.base == "ret" ? Op::Ret : Op::Exit;
  inst.cls = InstClass::Control;
}

void decodeBar(DecodeInput &in, Inst &inst) {
  bool bar = in.base == "bar";
  if (bar && in.take("warp")) {
    in.take("sync");
    in.finish();
    expectOperands(in, inst, "s");
    resolveImm(in, inst.ops[0], PType::B32);
    inst.cls = InstClass::Warp;
    inst.op = Op::WarpSync;
    return;
  }
  int kind = in.takeOneOf({"sync", "arrive", "red"});
  in.take("aligned");
  in.finish();
  if (kind < 0 && bar)
    kind = 0; // `bar 0` is bar.sync
  if (kind != 0)
    in.fail("only bar.sync/barrier.sync are simulated");
  if (inst.nops < 1 || inst.nops > 2)
    in.fail("bar.sync takes a barrier number and an optional thread count");
  for (unsigned i = 0; i < inst.nops; ++i) {
    if (inst.ops[i].kind != OpKind::Imm && inst.ops[i].kind != OpKind::Reg)
      in.fail("bad bar.sync operand");
    resolveImm(in, inst.ops[i], PType::U32);
  }
  inst.op = Op::BarSync;
  inst.cls = InstClass::Barrier;
}

/// trap: the kernel stops with an error (what follows CUDA's __assertfail in
/// code that knows it does not return).
void trapOp(ExecContext &, const Inst &, uint32_t mask) {
  if (mask)
    throw LaneError(__builtin_ctz(mask),
                    "trap: the thread stopped the kernel (an illegal "
                    "instruction error on a GPU)");
}

void decodeTrap(DecodeInput &in, Inst &inst) {
  in.finish();
  expectOperands(in, inst, "");
  inst.cls = InstClass::Control;
  inst.exec = trapOp;
}

void decodeFence(DecodeInput &in, Inst &inst) {
  in.mods.clear(); // every scope and ordering is satisfied by sequential warps
  if (inst.nops)
    in.fail("unexpected operands");
  inst.cls = InstClass::Other;
  inst.exec = nopOp;
}

} // namespace

void registerControlOps(DecoderTable &t) {
  t["bra"] = decodeBra;
  t["ret"] = decodeRet;
  t["exit"] = decodeRet;
  t["bar"] = decodeBar;
  t["barrier"] = decodeBar;
  t["membar"] = decodeFence;
  t["trap"] = decodeTrap;
  // Programmatic dependent launch (sm_90): the simulator runs one kernel at
  // a time, so a kernel's predecessors have completed and its dependents
  // start after it; waiting and releasing them do nothing.
  t["griddepcontrol"] = [](DecodeInput &in, Inst &inst) {
    if (in.mods.size() != 1 ||
        (in.mods[0] != "wait" && in.mods[0] != "launch_dependents"))
      in.fail("griddepcontrol takes .wait or .launch_dependents");
    decodeFence(in, inst);
  };
  t["fence"] = [](DecodeInput &in, Inst &inst) {
    for (const std::string &m : in.mods)
      if (m.rfind("proxy", 0) == 0 || m == "mbarrier_init")
        in.fail("fence.proxy/mbarrier fences are not simulated yet");
    decodeFence(in, inst);
  };
}

} // namespace tessel::gpusim
