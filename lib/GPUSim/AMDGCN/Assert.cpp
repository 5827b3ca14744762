//===- Assert.cpp - s_trap and the assertion report printed before it -----===//
//
// s_trap stops the kernel: the launch fails. A failed device assertion is a
// report printed through the hostcall, then the trap; the report has one of
// two forms:
//
//   HIP's __assert_fail (Tessel's AMD backend), the trap right after it:
//     <file>:<line>: <function>: Device-side assertion `<message>' failed.
//   Triton's AMD tl.device_assert, a barrier between it and the trap:
//     device assertion failed: '<message>', in <function> at <file>:<line>
//
// When the trapping wave's latest printf is such a report, the launch fails
// with a DeviceAssertion naming the message, file, line, function,
// workgroup and the work-item of the lowest lane that printed it, worded as
// the PTX path words CUDA's __assertfail; the reports of the workgroup's
// waves leave the output, as __assertfail prints nothing there.
//
//===----------------------------------------------------------------------===//
#include "Hostcall.h"
#include "Wave.h"

#include <cctype>
#include <sstream>

namespace tessel::gpusim::amdgcn {
namespace {

struct Report {
  std::string message, file, function;
  unsigned line = 0;
};

/// "<file>:<line>" into its parts; false when it does not end in a number.
bool fileAndLine(const std::string &s, Report &r) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon + 1 == s.size() || colon + 10 < s.size())
    return false;
  for (size_t i = colon + 1; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i])))
      return false;
  r.file = s.substr(0, colon);
  r.line = unsigned(std::stoul(s.substr(colon + 1)));
  return true;
}

bool parseReport(std::string text, Report &r) {
  if (!text.empty() && text.back() == '\n')
    text.pop_back();
  static const std::string hipMark = ": Device-side assertion `", hipEnd = "' failed.";
  size_t mark = text.find(hipMark);
  if (mark != std::string::npos && text.size() >= hipEnd.size() &&
      text.compare(text.size() - hipEnd.size(), hipEnd.size(), hipEnd) == 0 &&
      mark + hipMark.size() <= text.size() - hipEnd.size()) {
    std::string where = text.substr(0, mark);
    size_t sep = where.rfind(": ");
    if (sep == std::string::npos || !fileAndLine(where.substr(0, sep), r))
      return false;
    r.function = where.substr(sep + 2);
    r.message = text.substr(mark + hipMark.size(), text.size() - hipEnd.size() - mark - hipMark.size());
    return true;
  }
  static const std::string tritonStart = "device assertion failed: '", tritonIn = "', in ";
  if (text.compare(0, tritonStart.size(), tritonStart) != 0)
    return false;
  size_t in = text.rfind(tritonIn);
  if (in == std::string::npos || in < tritonStart.size())
    return false;
  size_t at = text.find(" at ", in + tritonIn.size());
  if (at == std::string::npos || !fileAndLine(text.substr(at + 4), r))
    return false;
  r.message = text.substr(tritonStart.size(), in - tritonStart.size());
  r.function = text.substr(in + tritonIn.size(), at - in - tritonIn.size());
  return true;
}

bool isReport(const std::string &text) {
  Report r;
  return parseReport(text, r);
}

void trap(Wave &w, const Inst &I) {
  std::string id = I.ops.empty() ? "" : " " + std::to_string(I.ops[0].bits);
  if (w.host)
    for (const Hostcall::Printed &p : w.host->lastPrinted(w.id)) {
      Report r;
      if (!parseReport(p.text, r))
        continue;
      w.host->dropReports(isReport);
      const uint32_t *size = w.group->size;
      uint32_t item = w.id * kLanes + uint32_t(p.lane);
      uint32_t tid[3] = {item % size[0], item / size[0] % size[1], item / (size[0] * size[1])};
      std::ostringstream os;
      os << r.file << ":" << r.line << ": " << r.function << ": block: [" << w.group->id[0] << ","
         << w.group->id[1] << "," << w.group->id[2] << "], thread: [" << tid[0] << "," << tid[1] << "," << tid[2]
         << "] Assertion `" << r.message << "` failed.\n  at " << w.where(p.lane);
      throw DeviceAssertion(os.str(), r.message, r.file, r.line, r.function, w.group->id, tid);
    }
  w.fail("s_trap" + id + ": the wave stopped the kernel (no assertion report printed before it)");
}

} // namespace

void registerTrapOps(Table &t) { t["s_trap"] = trap; }

} // namespace tessel::gpusim::amdgcn
