//===- Memory.cpp - Global allocations, shared memory and its race shadow -===//
#include "tessel/GPUSim/Memory.h"

#include "tessel/GPUSim/Error.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace tessel::gpusim {

uint64_t GlobalMemory::allocate(uint64_t bytes, std::string name) {
  uint64_t base = next_;
  Allocation a;
  a.base = base;
  a.data.assign(bytes, 0);
  a.name = std::move(name);
  allocs_.push_back(std::move(a));
  next_ = (base + bytes + 4096 + 255) / 256 * 256;
  return base;
}

void GlobalMemory::allocateAt(uint64_t base, std::vector<uint8_t> init,
                              std::string name) {
  if ((!allocs_.empty() && allocs_.back().base >= base) || base >= next_)
    throw SimError("internal: fixed allocations must come first, in order");
  Allocation a;
  a.base = base;
  a.data = std::move(init);
  a.name = std::move(name);
  allocs_.push_back(std::move(a));
}

Allocation &GlobalMemory::allocation(uint64_t base) {
  for (Allocation &a : allocs_)
    if (a.base == base)
      return a;
  throw SimError("internal: no allocation at this base");
}

uint8_t *GlobalMemory::translate(uint64_t addr, uint64_t size) {
  size_t last = last_.load(std::memory_order_relaxed);
  if (last < allocs_.size()) {
    Allocation &a = allocs_[last];
    if (addr >= a.base && addr - a.base + size <= a.data.size() &&
        addr + size >= addr)
      return a.data.data() + (addr - a.base);
  }
  auto it = std::upper_bound(
      allocs_.begin(), allocs_.end(), addr,
      [](uint64_t v, const Allocation &a) { return v < a.base; });
  if (it == allocs_.begin())
    return nullptr;
  --it;
  if (addr - it->base + size > it->data.size() || addr + size < addr)
    return nullptr;
  last_.store(size_t(it - allocs_.begin()), std::memory_order_relaxed);
  return it->data.data() + (addr - it->base);
}

std::string GlobalMemory::describe(uint64_t addr, uint64_t size) const {
  std::ostringstream os;
  os << "address 0x" << std::hex << addr << std::dec;
  const Allocation *best = nullptr;
  for (const Allocation &a : allocs_)
    if (a.base <= addr)
      best = &a;
  if (best) {
    uint64_t off = addr - best->base, n = best->data.size();
    // An access that starts inside the allocation and runs off its end (a
    // v4 store straddling it) has no "bytes past the end" of its start.
    if (off < n)
      os << " is byte " << off << " of " << best->name << " (" << n
         << " bytes): the " << size << "-byte access reaches "
         << off + size - n << " bytes past its end";
    else
      os << " is " << off - n << " bytes past the end of " << best->name
         << " (" << n << " bytes)";
  } else if (!allocs_.empty()) {
    os << " is below every allocation";
  } else {
    os << " (no global allocations)";
  }
  return os.str();
}

void SharedMemory::reset(uint32_t bytes, bool raceCheck) {
  data_.assign(bytes, 0);
  raceCheck_ = raceCheck;
  if (raceCheck)
    shadow_.assign(bytes, ShadowByte());
  else
    shadow_.clear();
  epoch_ = 1;
}

static std::string raceText(const char *kind, uint32_t offset, uint32_t other,
                            uint32_t otherLine) {
  std::ostringstream os;
  os << kind << " race on shared memory byte " << offset << " with thread "
     << other << " (PTX line " << otherLine
     << ") with no bar.sync in between";
  return os.str();
}

std::string SharedMemory::recordWrite(uint32_t offset, uint32_t size,
                                      uint32_t thread, uint32_t line,
                                      const uint8_t *newBytes) {
  for (uint32_t i = 0; i < size; ++i) {
    ShadowByte &s = shadow_[offset + i];
    if (s.writeEpoch == epoch_ && s.writer != thread &&
        data_[offset + i] != newBytes[i])
      return raceText("write/write", offset + i, s.writer, s.writeLine);
    if (s.readEpoch == epoch_ && (s.reader != thread || s.manyReaders))
      return raceText("read/write", offset + i, s.reader, s.readLine);
    s.writeEpoch = epoch_;
    s.writer = thread;
    s.writeLine = line;
  }
  return {};
}

std::string SharedMemory::recordRead(uint32_t offset, uint32_t size,
                                     uint32_t thread, uint32_t line) {
  for (uint32_t i = 0; i < size; ++i) {
    ShadowByte &s = shadow_[offset + i];
    if (s.writeEpoch == epoch_ && s.writer != thread)
      return raceText("write/read", offset + i, s.writer, s.writeLine);
    if (s.readEpoch == epoch_ && s.reader != thread)
      s.manyReaders = true;
    else if (s.readEpoch != epoch_) {
      s.manyReaders = false;
      s.reader = thread;
      s.readLine = line;
    }
    s.readEpoch = epoch_;
  }
  return {};
}

} // namespace tessel::gpusim
