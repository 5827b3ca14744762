//===- Hostcall.h - The host side of OCKL's hostcall ------------*- C++ -*-===//
//
// HIP's printf (and the assertion reports printed before a trap) reach the
// host through the ROCm device library's hostcall: the kernel's
// hidden_hostcall_buffer argument points to a buffer of packets the waves
// fill and hand to the host, ringing a doorbell signal whose event mailbox
// makes them send an interrupt (s_sendmsg sendmsg(MSG_INTERRUPT)). The
// launch owns one such buffer; the interrupt serves the packets at once, so
// the spinning wave finds its answer on its next look.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_GPUSIM_AMDGCN_HOSTCALL_H
#define TESSEL_LIB_GPUSIM_AMDGCN_HOSTCALL_H

#include "tessel/GPUSim/Memory.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessel::gpusim::amdgcn {

struct Wave;

class Hostcall {
public:
  /// Allocates the buffer, its packets (one per wave of a workgroup: a wave
  /// holds at most one) and its doorbell in `global`.
  Hostcall(GlobalMemory &global, uint32_t waves);
  /// The value of hidden_hostcall_buffer.
  uint64_t buffer() const { return buffer_; }
  /// A new workgroup: its waves have printed nothing yet.
  void startWorkgroup();
  /// s_sendmsg sendmsg(MSG_INTERRUPT) of `w`: serves every ready packet.
  void interrupt(Wave &w);
  /// What a wave printed with its latest printf, lane by lane.
  struct Printed {
    int lane;
    std::string text;
  };
  std::vector<Printed> lastPrinted(uint32_t wave) const;
  /// Leaves the latest printf of every wave of the workgroup out of the
  /// output where `isReport` says it is an assertion's report.
  void dropReports(bool (*isReport)(const std::string &));
  /// Everything printed, in order, less the dropped lines.
  std::string output() const;

private:
  void serveLane(Wave &w, uint8_t *slot, int lane, std::vector<size_t> &printed);

  struct Line {
    std::string text;
    int lane;
    bool dropped = false;
  };
  GlobalMemory &global_;
  uint32_t packets_;
  uint64_t indexMask_;
  uint64_t buffer_, headers_, payloads_;
  std::map<uint64_t, std::vector<uint64_t>> open_; // messages by id
  uint64_t nextId_ = 0;
  std::vector<Line> lines_;
  std::vector<std::vector<size_t>> lastPrint_; // per wave: its lines of the latest packet that printed
};

/// The text of a printf message as ROCclr's host handler makes it: a control
/// word (0 stdout, 1 stderr), the format string's bytes padded to whole
/// words, then the arguments, one word each (integers, doubles' bits,
/// pointers) except strings, which are their bytes padded to whole words.
/// A string ends at its NUL or at the end of the message. Throws
/// std::runtime_error for a malformed message.
std::string formatPrintf(const std::vector<uint64_t> &words);

} // namespace tessel::gpusim::amdgcn

#endif // TESSEL_LIB_GPUSIM_AMDGCN_HOSTCALL_H
