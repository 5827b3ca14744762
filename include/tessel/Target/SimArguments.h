//===- SimArguments.h - Launch arguments for the GPU simulator --*- C++ -*-===//
//
// The sim targets (PTX and AMDGCN) copy a launch's arrays into the
// simulator's memory: arrays whose bytes overlap are views of one array and
// become one allocation spanning their union, owned by the first of them.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TARGET_SIMARGUMENTS_H
#define TESSEL_TARGET_SIMARGUMENTS_H

#include "tessel/GPUSim/Launch.h"
#include "tessel/Runtime/LaunchArgs.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tessel::target {

struct SimArguments {
  std::vector<gpusim::LaunchArg> args;
  /// Per argument: the argument owning its allocation, and for owners the
  /// first byte of the allocation (host address).
  std::vector<size_t> owner;
  std::vector<uint64_t> lo;
};

/// The simulator's arguments of a launch of `kernel`; an error for an array
/// whose extent is unknown.
llvm::Expected<SimArguments> simArguments(const std::string &kernel,
                          llvm::ArrayRef<runtime::LaunchArg> args);

} // namespace tessel::target

#endif // TESSEL_TARGET_SIMARGUMENTS_H
