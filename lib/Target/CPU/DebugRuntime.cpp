//===- DebugRuntime.cpp - What CPU kernels call to print and assert -------===//
#include "tessel/Target/CPU/DebugRuntime.h"

#include "tessel/Conversion/TileToLoops/CPURuntime.h"

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>

using namespace tessel;
using namespace tessel::cpu;

namespace {

/// The record of the launch running on this thread, if any.
thread_local AssertionRecord *current = nullptr;

/// One line at a time: lines of programs on different threads never mix.
std::mutex &outputMutex() {
  static std::mutex mutex;
  return mutex;
}

} // namespace

extern "C" {

/// Formats one line (tile::printFormat) and writes it to stdout, flushed.
__attribute__((visibility("default"))) void tessel_cpu_print(const char *format,
                                                             ...) {
  char small[512];
  std::string line;
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  int n = std::vsnprintf(small, sizeof small, format, args);
  va_end(args);
  if (n >= 0 && size_t(n) < sizeof small) {
    line.assign(small, size_t(n));
  } else if (n >= 0) {
    line.resize(size_t(n) + 1);
    std::vsnprintf(line.data(), line.size(), format, again);
    line.resize(size_t(n));
  }
  va_end(again);
  std::lock_guard<std::mutex> lock(outputMutex());
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

/// A failed assertion of program (pidX, pidY, pidZ) of a gridX x gridY x ...
/// grid, at the element whose `rank` int32 indices follow.
__attribute__((visibility("default"))) void
tessel_cpu_assert_fail(const char *message, const char *file, int32_t line,
                       const char *function, int32_t pidX, int32_t pidY,
                       int32_t pidZ, int32_t gridX, int32_t gridY,
                       int32_t rank, ...) {
  target::DeviceAssertError::Info info;
  info.kernel = function;
  info.message = message;
  info.file = file;
  info.function = function;
  info.line = line;
  info.pid = {pidX, pidY, pidZ};
  info.indexKnown = true;
  va_list args;
  va_start(args, rank);
  for (int32_t i = 0; i < rank; ++i)
    info.index.push_back(va_arg(args, int32_t));
  va_end(args);
  uint64_t program = uint64_t(pidX) +
                     uint64_t(gridX) * (uint64_t(pidY) +
                                        uint64_t(gridY) * uint64_t(pidZ));
  if (current) {
    current->report(std::move(info), program);
    return;
  }
  // A kernel run outside a launch that collects failures (none does today):
  // say so rather than lose it.
  std::lock_guard<std::mutex> lock(outputMutex());
  std::fprintf(stderr, "%s\n", target::DeviceAssertError(info).what());
  std::fflush(stderr);
}

} // extern "C"

std::vector<std::pair<const char *, void *>> tessel::cpu::runtimeSymbols() {
  return {{kCPUPrintFunction, reinterpret_cast<void *>(&tessel_cpu_print)},
          {kCPUAssertFunction,
           reinterpret_cast<void *>(&tessel_cpu_assert_fail)}};
}

void AssertionRecord::report(target::DeviceAssertError::Info info,
                             uint64_t program) {
  std::lock_guard<std::mutex> lock(mutex);
  if (first && firstProgram <= program)
    return;
  first = std::move(info);
  firstProgram = program;
}

std::optional<target::DeviceAssertError::Info>
AssertionRecord::failure() const {
  std::lock_guard<std::mutex> lock(mutex);
  return first;
}

AssertionScope::AssertionScope(AssertionRecord *record) : previous(current) {
  current = record;
}

AssertionScope::~AssertionScope() { current = previous; }
