//===- AsyncUnits.h - sm_90 asynchronous state of a CTA ---------*- C++ -*-===//
//
// Internal to lib/GPUSim. What the wgmma, mbarrier and bulk-copy groups keep
// between instructions, per CTA (CTAState::async, dropped when a CTA starts):
//
// * wgmma.mma_async is recorded when a warp issues it (with the descriptor and
//   scale-d values it was given) and performed when wgmma.wait_group retires
//   its group, reading shared memory and the A and accumulator registers
//   then. A program that reads the accumulators or rewrites the operands
//   before the wait sees what hardware may show it: the old values.
// * mbarrier objects live in shared memory (their 8 bytes, see
//   MBarrierOps.cpp); only the deadlock watch is kept here.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_GPUSIM_ASYNCUNITS_H
#define TESSEL_LIB_GPUSIM_ASYNCUNITS_H

#include "Decode.h"

#include <memory>
#include <vector>

namespace tessel::gpusim {

struct PendingMma {
  const Inst *inst;
  uint64_t descA, descB; // descA unused when A comes from registers
  bool scaleD;
};

struct WarpAsyncUnits {
  std::vector<PendingMma> mma;   // issued, not performed, oldest first
  std::vector<size_t> mmaGroups; // committed groups: their ends in `mma`
  bool fenced = false;           // a wgmma.fence was executed
};

struct AsyncUnits {
  std::vector<WarpAsyncUnits> warps;
  uint64_t mbarrierEvents = 0; // any mbarrier state change
  uint64_t eventsAtTimeout = ~0ull;
  uint32_t timeouts = 0; // consecutive wait timeouts without any change
};

inline AsyncUnits &asyncUnits(ExecContext &c) {
  if (!c.cta.async) {
    c.cta.async = std::make_shared<AsyncUnits>();
    c.cta.async->warps.resize(c.numWarps);
  }
  return *c.cta.async;
}

inline WarpAsyncUnits &warpAsync(ExecContext &c) {
  return asyncUnits(c).warps[c.warp->index];
}

/// Byte offset in the CTA's shared memory of [addr .. addr+size) given as a
/// shared-space (space == Shared) or generic address; LaneError when it is
/// outside the CTA's shared memory or not aligned to `align`.
uint32_t sharedOffset(ExecContext &c, int lane, StateSpace space,
                      uint64_t addr, uint64_t size, uint64_t align,
                      const char *what);
/// The address an Addr operand names for one lane ([reg + imm]; a 32-bit
/// register is zero-extended).
uint64_t operandAddress(ExecContext &c, const Operand &a, int lane);

/// Performs mbarrier complete_tx of `bytes` on the object at shared offset
/// `off` (TMA loads signal their mbarrier this way).
void mbarrierCompleteTx(ExecContext &c, int lane, uint32_t off, int64_t bytes);

} // namespace tessel::gpusim

#endif
