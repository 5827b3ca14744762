//===- Error.h - Errors of the PTX simulator --------------------*- C++ -*-===//
//
// Every failure the simulator can report (PTX it cannot parse, instructions
// or modifiers it does not know, out-of-bounds accesses, races, deadlocks) is
// a SimError carrying a complete, human-readable message. The simulator never
// guesses: what it does not model is an error, never a silent wrong answer.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_GPUSIM_ERROR_H
#define TESSEL_GPUSIM_ERROR_H

#include <stdexcept>
#include <string>

namespace tessel::gpusim {

class SimError : public std::runtime_error {
public:
  explicit SimError(const std::string &message)
      : std::runtime_error(message) {}
};

/// Raised by instruction semantics for one lane; the executor adds the CTA,
/// thread, PTX line and instruction text before it reaches the user.
class LaneError : public std::runtime_error {
public:
  LaneError(int lane, const std::string &message)
      : std::runtime_error(message), lane(lane) {}
  int lane;
};

/// Thrown by launch() when its interrupt callback asked it to stop (Ctrl-C
/// in Python): not a SimError, since nothing is wrong with the kernel; the
/// caller raises whatever its callback saw.
class Interrupted : public std::runtime_error {
public:
  Interrupted() : std::runtime_error("the launch was interrupted") {}
};

} // namespace tessel::gpusim

#endif // TESSEL_GPUSIM_ERROR_H
