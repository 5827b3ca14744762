//===- Warp.h - A warp: registers, active mask, reconvergence ---*- C++ -*-===//
//
// The 32 lanes of a warp execute together. Divergence is handled with the
// classic reconvergence stack: a divergent branch replaces the top entry's pc
// with the branch's immediate post-dominator and pushes one entry per side;
// an entry is popped when its pc reaches its reconvergence pc.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_GPUSIM_WARP_H
#define TESSEL_GPUSIM_WARP_H

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace tessel::gpusim {

struct StackEntry {
  uint32_t pc;
  uint32_t reconverge; // pop when pc reaches it (~0u: never)
  uint32_t mask;
};

/// A cp.async copy in flight: its bytes are read from global memory when it
/// is issued and land in shared memory when a wait retires its group.
struct AsyncCopy {
  uint32_t sharedOffset, size, line;
  uint8_t bytes[16];
};
/// One lane's cp.async state: copies not yet committed, then the committed
/// groups, oldest first.
struct LaneAsyncCopies {
  std::vector<AsyncCopy> open;
  std::deque<std::vector<AsyncCopy>> groups;
};

struct Warp {
  uint32_t index = 0;     // warp number in the CTA
  uint32_t valid = 0;     // lanes that exist (a partial last warp has fewer)
  uint32_t exited = 0;    // lanes that executed ret/exit
  bool atBarrier = false; // waiting at bar.sync
  bool done = false;
  /// The condition code's carry flag (CC.CF) of each lane, one bit per lane:
  /// written by add.cc/sub.cc/mad.cc/addc.cc/... and read by addc/subc/madc.
  uint32_t carry = 0;
  std::vector<StackEntry> stack;
  std::vector<uint64_t> regs; // [register][lane]
  std::vector<LaneAsyncCopies> asyncCopies; // per lane; empty before any cp.async

  void start(uint32_t numRegs, uint32_t lanes);
  /// Pops finished entries; false when no thread is left to run.
  bool settle();
  /// Removes lanes from every entry (they exited).
  void retire(uint32_t lanes);
  /// A branch taken by `taken` among the top entry's lanes.
  void branch(uint32_t taken, uint32_t target, uint32_t fallthrough,
              uint32_t reconverge);
};

} // namespace tessel::gpusim

#endif // TESSEL_GPUSIM_WARP_H
