//===- Counters.h - What a launch did ----------------------------*- C++ -*-===//
#ifndef TESSEL_GPUSIM_COUNTERS_H
#define TESSEL_GPUSIM_COUNTERS_H

#include "tessel/GPUSim/Program.h"

#include <cstdint>
#include <map>
#include <string>

namespace tessel::gpusim {

struct Counters {
  uint64_t warpInstructions = 0;
  uint64_t threadInstructions = 0; // lanes that executed (guard true)
  uint64_t byClass[size_t(InstClass::Count)] = {};
  // Global memory: one request per warp-level ld/st/atom that touches memory,
  // sectors are the distinct 32-byte segments its lanes touch.
  uint64_t globalLoadRequests = 0, globalLoadSectors = 0;
  uint64_t globalStoreRequests = 0, globalStoreSectors = 0;
  uint64_t globalLoadBytes = 0, globalStoreBytes = 0;
  // Shared memory: requests, wavefronts (1 per phase of a request when there
  // is no bank conflict: a 16-byte access by a whole warp takes 4), and the
  // bank conflicts, the wavefronts beyond one per phase (what Nsight Compute
  // counts as l1tex__data_bank_conflicts_pipe_lsu_mem_shared).
  uint64_t sharedLoadRequests = 0, sharedLoadWavefronts = 0;
  uint64_t sharedStoreRequests = 0, sharedStoreWavefronts = 0;
  uint64_t sharedLoadConflicts = 0, sharedStoreConflicts = 0;
  uint64_t barriers = 0; // CTA-wide barrier completions
  // Bytes copied global->shared by cp.async and TMA (cp.async.bulk).
  uint64_t asyncCopyBytes = 0;
  uint64_t ctas = 0, warps = 0;

  void add(const Counters &o);
  /// Flat name -> value map (the Python dict).
  std::map<std::string, uint64_t> toMap() const;
};

/// Distinct 32-byte sectors among the addresses of one request.
unsigned countSectors(const uint64_t *addrs, unsigned n, unsigned size);
/// Wavefronts of one shared-memory request: 32 banks of 4 bytes; lanes that
/// read the same word share it (broadcast); 8- and 16-byte accesses are
/// served in 2 and 4 phases of 16 and 8 consecutive lanes. `phases` is the
/// number of phases with an active lane: the wavefronts without conflicts.
struct SharedWavefronts {
  unsigned wavefronts = 0, phases = 0;
  unsigned conflicts() const { return wavefronts - phases; }
};
SharedWavefronts countWavefronts(const uint32_t *lanes, const uint32_t *addrs,
                                 unsigned n, unsigned size);

} // namespace tessel::gpusim

#endif // TESSEL_GPUSIM_COUNTERS_H
