//===- DebugRuntime.h - What CPU kernels call to print, assert -*- C++ -*-===//
//
// The functions of CPURuntime.h, defined in this library: the object loader
// resolves kernels' calls to them. A launch that may assert runs its
// programs inside an AssertionScope, which collects the failure of the
// lowest program; print writes each line to stdout at once, flushed.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TARGET_CPU_DEBUGRUNTIME_H
#define TESSEL_TARGET_CPU_DEBUGRUNTIME_H

#include "tessel/Target/Target.h"

#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace tessel::cpu {

/// The runtime's symbols kernels may call: name, address.
std::vector<std::pair<const char *, void *>> runtimeSymbols();

/// The failed assertions of one launch: programs on any thread report to it
/// while the calling thread's scope is installed on theirs.
class AssertionRecord {
public:
  /// Records the failure of a program; keeps the lowest program's.
  void report(target::DeviceAssertError::Info info, uint64_t program);
  /// The failure kept, if any.
  std::optional<target::DeviceAssertError::Info> failure() const;

private:
  mutable std::mutex mutex;
  std::optional<target::DeviceAssertError::Info> first;
  uint64_t firstProgram = 0;
};

/// While alive, assertions failing on this thread report to `record`.
class AssertionScope {
public:
  explicit AssertionScope(AssertionRecord *record);
  ~AssertionScope();
  AssertionScope(const AssertionScope &) = delete;
  AssertionScope &operator=(const AssertionScope &) = delete;

private:
  AssertionRecord *previous;
};

} // namespace tessel::cpu

#endif // TESSEL_TARGET_CPU_DEBUGRUNTIME_H
