//===- Launch.h - Running a kernel over a grid -------------------*- C++ -*-===//
#ifndef TESSEL_GPUSIM_LAUNCH_H
#define TESSEL_GPUSIM_LAUNCH_H

#include "tessel/GPUSim/Counters.h"
#include "tessel/GPUSim/Program.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessel::gpusim {

/// One kernel argument. Buffers are copied into their own global allocation
/// before the launch and (when writeBack) copied back after it.
struct LaunchArg {
  enum Kind { Buffer, Int, Float, Null, Bytes } kind = Null;
  void *host = nullptr;
  uint64_t bytes = 0;
  bool writeBack = false;
  int64_t i = 0;
  bool isUnsigned = false; // i holds a uint64 (values >= 2^63)
  double f = 0;
  std::string name; // for error messages ("argument 2")
  /// Buffer: the pointer passed is this many bytes into the allocation;
  /// with shareWith >= 0 (an earlier Buffer argument), into that argument's
  /// allocation instead of one of its own (two views of one array).
  uint64_t offset = 0;
  int shareWith = -1;
  /// Bytes: the whole value of a .b8 array parameter (a 128-byte tensor map,
  /// TensorMap.h). When `host` is set, that array is placed in global memory
  /// as a Buffer is (sharing the allocation of an earlier argument with the
  /// same host array) and its address plus the u64 already at `addressAt` is
  /// written there.
  std::vector<uint8_t> value;
  uint32_t addressAt = 0;
};

struct LaunchConfig {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {128, 1, 1};
  uint32_t dynamicSharedBytes = 0;
  bool raceCheck = true;
  /// Stops a runaway kernel (warp instructions, whole launch).
  uint64_t instructionLimit = 20'000'000'000ull;
  /// Stops it by wall-clock time too (seconds, whole launch; 0: no limit):
  /// an endless loop reaches the instruction limit in about 90 s, but one of
  /// slow instructions (wgmma, TMA) may take hours to.
  double timeLimit = 600;
  /// Called on the launching thread about every 20 ms while CTAs run; true
  /// stops the launch, which then throws Interrupted. The Python binding
  /// checks for signals here (Ctrl-C), so this library needs no Python.
  std::function<bool()> interrupt;
  /// Worker threads running CTAs (0: one per hardware thread).
  unsigned threads = 0;
  /// Receives what the kernel printed (vprintf), CTA by CTA in the grid's
  /// order, each CTA's lines in the order its threads ran them, when the
  /// launch ends (CTAs up to the failing one when it fails). Null: written
  /// to the process's stdout and flushed.
  std::function<void(const std::string &)> output;
};

struct LaunchResult {
  Counters counters;
  double seconds = 0;
};

/// Runs `kernel` of `module`; throws SimError on any failure and Interrupted
/// when `config.interrupt` asked it to stop (the buffers are then left as
/// they were).
LaunchResult launch(const Module &module, const std::string &kernel,
                    const LaunchConfig &config, std::vector<LaunchArg> &args);

} // namespace tessel::gpusim

#endif // TESSEL_GPUSIM_LAUNCH_H
