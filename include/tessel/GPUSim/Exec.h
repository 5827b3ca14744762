//===- Exec.h - What instruction semantics see ------------------*- C++ -*-===//
//
// The context a handler runs in (one warp of one CTA) and the helpers to read
// operands and write registers for one lane. Handlers loop over the lanes of
// the mask they are given (the active lanes whose guard predicate holds).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_GPUSIM_EXEC_H
#define TESSEL_GPUSIM_EXEC_H

#include "tessel/GPUSim/Counters.h"
#include "tessel/GPUSim/Error.h"
#include "tessel/GPUSim/Memory.h"
#include "tessel/GPUSim/Program.h"
#include "tessel/GPUSim/Warp.h"

#include <cstring>
#include <memory>
#include <string>

namespace tessel::gpusim {

/// The sm_90 asynchronous units of one CTA (wgmma groups, bulk-copy groups,
/// mbarrier waits); lib/GPUSim/AsyncUnits.h. Made on first use, dropped when
/// the CTA starts.
struct AsyncUnits;

struct CTAState {
  uint32_t ctaid[3] = {0, 0, 0};
  SharedMemory shared;
  std::vector<uint8_t> local; // localBytes per thread
  std::shared_ptr<AsyncUnits> async;
  /// What the CTA printed (vprintf), written out in CTA order after the
  /// launch.
  std::string output;
};

struct ExecContext {
  const Kernel &kernel;
  GlobalMemory &global;
  const std::vector<uint8_t> &params;
  Counters &counters;
  CTAState &cta;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t numWarps;
  uint32_t dynamicShared;
  Warp *warp = nullptr;
  uint64_t *r = nullptr; // warp->regs.data()
  const Inst *inst = nullptr;
  uint32_t activeMask = 0; // the stack top's mask (before the guard)
  /// Set by a handler whose warp must wait (mbarrier.try_wait): the warp
  /// yields and retries the instruction later; pc does not advance.
  bool blocked = false;
  /// Set by the scheduler when a whole round of the CTA's warps made no
  /// progress (every warp blocked or at a barrier): a blocked wait may then
  /// time out (try_wait returns false) instead of blocking again.
  bool stalled = false;

  uint32_t threadIndex(int lane) const { return warp->index * 32 + lane; }
  uint32_t tid(int lane, int dim) const {
    uint32_t t = threadIndex(lane);
    if (dim == 0)
      return t % block[0];
    if (dim == 1)
      return (t / block[0]) % block[1];
    return t / (block[0] * block[1]);
  }
  uint64_t sreg(Sreg s, int lane) const;
  /// Describes the current instruction, CTA and thread for an error.
  std::string where(int lane) const;
};

inline uint64_t &regRef(ExecContext &c, uint32_t reg, int lane) {
  return c.r[size_t(reg) * 32 + lane];
}

/// The value of a source operand for one lane (bits of the operand's type).
inline uint64_t readOp(ExecContext &c, const Operand &o, int lane) {
  switch (o.kind) {
  case OpKind::Reg: {
    uint64_t v = c.r[size_t(o.reg) * 32 + lane];
    return o.neg ? uint64_t(v == 0) : v;
  }
  case OpKind::Imm:
    return o.imm;
  case OpKind::Sreg:
    return c.sreg(o.sreg, lane);
  default:
    return 0;
  }
}

inline void writeReg(ExecContext &c, const Operand &o, int lane, uint64_t v) {
  if (o.kind == OpKind::Reg)
    c.r[size_t(o.reg) * 32 + lane] = v;
}

template <class F> inline void forLanes(uint32_t mask, F f) {
  while (mask) {
    int lane = __builtin_ctz(mask);
    mask &= mask - 1;
    f(lane);
  }
}

inline float asF32(uint64_t v) {
  float f;
  uint32_t b = uint32_t(v);
  std::memcpy(&f, &b, 4);
  return f;
}
inline double asF64(uint64_t v) {
  double d;
  std::memcpy(&d, &v, 8);
  return d;
}
inline uint64_t bitsF32(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline uint64_t bitsF64(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

} // namespace tessel::gpusim

#endif // TESSEL_GPUSIM_EXEC_H
