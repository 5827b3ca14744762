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

/// A thread called __assertfail (CUDA's failed device assertion): the launch
/// fails with the assertion's message, file, line and function and where it
/// failed (CTA, thread).
class DeviceAssertion : public SimError {
public:
  DeviceAssertion(const std::string &what, std::string message,
                  std::string file, unsigned line, std::string function,
                  const uint32_t ctaid[3], const uint32_t tid[3])
      : SimError(what), message(std::move(message)), file(std::move(file)),
        function(std::move(function)), line(line),
        ctaid{ctaid[0], ctaid[1], ctaid[2]}, tid{tid[0], tid[1], tid[2]} {}
  std::string message, file, function;
  unsigned line;
  uint32_t ctaid[3], tid[3];
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
