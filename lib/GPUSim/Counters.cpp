//===- Counters.cpp - Coalescing, bank conflicts, the counter map ---------===//
#include "tessel/GPUSim/Counters.h"

#include <algorithm>

namespace tessel::gpusim {

const char *instClassName(InstClass c) {
  static const char *names[] = {
      "int_arith",  "float_arith",  "special",     "convert",     "move",
      "logic",      "compare",      "load_global", "store_global", "load_shared",
      "store_shared", "load_param", "load_local",  "store_local", "atomic",
      "warp",       "barrier",      "control",     "tensor_core",
      "async_copy", "other"};
  static_assert(sizeof(names) / sizeof(names[0]) == size_t(InstClass::Count),
                "one name per instruction class");
  return names[size_t(c)];
}

void Counters::add(const Counters &o) {
  warpInstructions += o.warpInstructions;
  threadInstructions += o.threadInstructions;
  for (size_t i = 0; i < size_t(InstClass::Count); ++i)
    byClass[i] += o.byClass[i];
  globalLoadRequests += o.globalLoadRequests;
  globalLoadSectors += o.globalLoadSectors;
  globalStoreRequests += o.globalStoreRequests;
  globalStoreSectors += o.globalStoreSectors;
  globalLoadBytes += o.globalLoadBytes;
  globalStoreBytes += o.globalStoreBytes;
  sharedLoadRequests += o.sharedLoadRequests;
  sharedLoadWavefronts += o.sharedLoadWavefronts;
  sharedStoreRequests += o.sharedStoreRequests;
  sharedStoreWavefronts += o.sharedStoreWavefronts;
  sharedLoadConflicts += o.sharedLoadConflicts;
  sharedStoreConflicts += o.sharedStoreConflicts;
  barriers += o.barriers;
  asyncCopyBytes += o.asyncCopyBytes;
  ctas += o.ctas;
  warps += o.warps;
}

std::map<std::string, uint64_t> Counters::toMap() const {
  std::map<std::string, uint64_t> m;
  m["warp_instructions"] = warpInstructions;
  m["thread_instructions"] = threadInstructions;
  for (size_t i = 0; i < size_t(InstClass::Count); ++i)
    m[std::string("inst_") + instClassName(InstClass(i))] = byClass[i];
  m["global_load_requests"] = globalLoadRequests;
  m["global_load_sectors"] = globalLoadSectors;
  m["global_store_requests"] = globalStoreRequests;
  m["global_store_sectors"] = globalStoreSectors;
  m["global_load_bytes"] = globalLoadBytes;
  m["global_store_bytes"] = globalStoreBytes;
  m["shared_load_requests"] = sharedLoadRequests;
  m["shared_load_wavefronts"] = sharedLoadWavefronts;
  m["shared_store_requests"] = sharedStoreRequests;
  m["shared_store_wavefronts"] = sharedStoreWavefronts;
  m["shared_load_bank_conflicts"] = sharedLoadConflicts;
  m["shared_store_bank_conflicts"] = sharedStoreConflicts;
  m["barriers"] = barriers;
  m["async_copy_bytes"] = asyncCopyBytes;
  m["ctas"] = ctas;
  m["warps"] = warps;
  return m;
}

unsigned countSectors(const uint64_t *addrs, unsigned n, unsigned size) {
  uint64_t sectors[32 * 4];
  unsigned k = 0;
  for (unsigned i = 0; i < n; ++i) {
    uint64_t first = addrs[i] / 32, last = (addrs[i] + size - 1) / 32;
    for (uint64_t s = first; s <= last && k < 128; ++s)
      sectors[k++] = s;
  }
  std::sort(sectors, sectors + k);
  return unsigned(std::unique(sectors, sectors + k) - sectors);
}

SharedWavefronts countWavefronts(const uint32_t *lanes, const uint32_t *addrs,
                                 unsigned n, unsigned size) {
  // Lanes per phase: 32 for <= 4 bytes, 16 for 8 bytes, 8 for 16 bytes.
  unsigned perPhase = size <= 4 ? 32 : 128 / size;
  SharedWavefronts total;
  for (unsigned phase = 0; phase < 32 / perPhase; ++phase) {
    // Distinct 4-byte words per bank in this phase.
    uint32_t words[32][32];
    unsigned count[32] = {};
    bool any = false;
    for (unsigned i = 0; i < n; ++i) {
      if (lanes[i] / perPhase != phase)
        continue;
      any = true;
      for (uint32_t w = addrs[i] / 4; w <= (addrs[i] + size - 1) / 4; ++w) {
        unsigned bank = w % 32;
        bool seen = false;
        for (unsigned j = 0; j < count[bank]; ++j)
          seen |= words[bank][j] == w;
        if (!seen && count[bank] < 32)
          words[bank][count[bank]++] = w;
      }
    }
    if (!any)
      continue;
    unsigned worst = 1;
    for (unsigned b = 0; b < 32; ++b)
      worst = std::max(worst, count[b]);
    total.wavefronts += worst;
    ++total.phases;
  }
  return total;
}

} // namespace tessel::gpusim
