//===- Memory.h - Simulated state spaces ------------------------*- C++ -*-===//
//
// Global memory is a set of separate allocations (one per array argument) in
// a 64-bit address space with unmapped gaps between them, so any access
// outside every allocation is detected. Shared memory is one array per CTA
// with an optional shadow that detects races between barriers. Generic
// addresses map the shared and local windows at fixed bases (cvta).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_GPUSIM_MEMORY_H
#define TESSEL_GPUSIM_MEMORY_H

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace tessel::gpusim {

/// Generic-address windows of the per-CTA spaces.
constexpr uint64_t kSharedWindow = 0x0000'7e00'0000'0000ull;
constexpr uint64_t kLocalWindow = 0x0000'7f00'0000'0000ull;
/// Kernel parameters seen through generic addresses (cvta.param), e.g. a
/// CUtensorMap passed by value to cp.async.bulk.tensor.
constexpr uint64_t kParamWindow = 0x0000'7d00'0000'0000ull;
constexpr uint64_t kWindowSize = 0x0000'0001'0000'0000ull;
/// The address [reg + offset]. With a 32-bit register (32-bit shared and
/// local pointers) the sum is computed in 32 bits and wraps, as the hardware
/// computes it: LLVM's short pointers give [%r+24] with %r = depot - 4.
inline uint64_t effectiveAddress(uint64_t reg, uint64_t offset, bool reg32) {
  return reg32 ? uint64_t(uint32_t(reg) + uint32_t(offset)) : reg + offset;
}
/// First global allocation; allocations are 256-byte aligned with at least
/// 4 KiB unmapped between them.
constexpr uint64_t kGlobalBase = 0x0000'1000'0000'0000ull;
/// Module-scope .global/.const variables live below the arguments.
constexpr uint64_t kGlobalVarBase = 0x0000'0800'0000'0000ull;

struct Allocation {
  uint64_t base = 0;
  std::vector<uint8_t> data;
  std::string name;
};

class GlobalMemory {
public:
  /// Returns the simulated address of a new zero-filled allocation.
  uint64_t allocate(uint64_t bytes, std::string name);
  /// An allocation at a fixed address (module variables); must be made
  /// before allocate() and in increasing address order.
  void allocateAt(uint64_t base, std::vector<uint8_t> init, std::string name);
  Allocation &allocation(uint64_t base);
  /// Host pointer to [addr, addr + size) if it lies inside one allocation,
  /// else nullptr.
  uint8_t *translate(uint64_t addr, uint64_t size);
  /// Describes where an access of `size` bytes at addr lies relative to the
  /// allocations (for errors): how far past an allocation's end it starts,
  /// or, when it starts inside one, its offset there and how far past the
  /// end it reaches.
  std::string describe(uint64_t addr, uint64_t size) const;

private:
  std::vector<Allocation> allocs_; // sorted by base
  uint64_t next_ = kGlobalBase;
  // Cache of the last hit; CTAs on several threads share it.
  std::atomic<size_t> last_{0};
};

/// The shadow state of one shared-memory byte for the race check. Epochs
/// count barriers; an access conflicts with one of another thread in the same
/// epoch.
struct ShadowByte {
  uint32_t writeEpoch = 0, writer = 0;
  uint32_t readEpoch = 0, reader = 0;
  uint32_t writeLine = 0, readLine = 0;
  bool manyReaders = false;
};

class SharedMemory {
public:
  void reset(uint32_t bytes, bool raceCheck);
  uint32_t size() const { return uint32_t(data_.size()); }
  uint8_t *at(uint32_t offset) { return data_.data() + offset; }
  bool raceCheck() const { return raceCheck_; }
  /// Advances the epoch (a CTA-wide barrier completed).
  void barrier() { ++epoch_; }
  /// Record accesses by CTA thread `thread`; return an empty string or a
  /// description of the race found.
  std::string recordWrite(uint32_t offset, uint32_t size, uint32_t thread,
                          uint32_t line, const uint8_t *newBytes);
  std::string recordRead(uint32_t offset, uint32_t size, uint32_t thread,
                         uint32_t line);

private:
  std::vector<uint8_t> data_;
  std::vector<ShadowByte> shadow_;
  uint32_t epoch_ = 1;
  bool raceCheck_ = false;
};

} // namespace tessel::gpusim

#endif // TESSEL_GPUSIM_MEMORY_H
