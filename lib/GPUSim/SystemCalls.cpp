//===- SystemCalls.cpp - CUDA's vprintf and __assertfail ------------------===//
//
// Device code prints and fails assertions through two functions CUDA
// provides and no PTX module defines (the parser makes each call one
// instruction whose operands are the call's .param variables):
//
//   int vprintf(const char *format, void *args)
//     printf's format and a buffer of the arguments, each at the next
//     multiple of its size (int, long long, double, pointers: what C's
//     variadic promotions make of them). Each active lane, in lane order,
//     appends its line to the CTA's output, which the launch writes out in
//     CTA order: the same output for any number of worker threads. Returns
//     the number of arguments.
//   void __assertfail(const char *message, const char *file, unsigned line,
//                     const char *function, size_t charSize)
//     the thread traps: the launch fails with a DeviceAssertion naming the
//     message, file, line, function, CTA and thread (lowest active lane).
//
// Strings and buffers are read with the checks of ld (bounds, alignment): a
// bad pointer is an error at the call, never a read of the host's memory.
//
//===----------------------------------------------------------------------===//
#include "Decode.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace tessel::gpusim {
namespace {

/// The longest string vprintf and __assertfail read.
constexpr size_t kMaxString = 64 * 1024;

uint64_t readParam(ExecContext &c, int lane, const Operand &param,
                   unsigned size) {
  uint8_t *p = hostAddress(c, lane, StateSpace::Local, param.imm, size, false);
  uint64_t v = 0;
  std::memcpy(&v, p, size);
  return v;
}

std::string readString(ExecContext &c, int lane, uint64_t addr,
                       const char *what) {
  if (!addr)
    throw LaneError(lane, std::string(what) + " is a null pointer");
  std::string s;
  for (size_t i = 0;; ++i) {
    if (i == kMaxString)
      throw LaneError(lane, std::string(what) + " has no NUL in its first " +
                                std::to_string(kMaxString) + " bytes");
    uint8_t b = *hostAddress(c, lane, StateSpace::Generic, addr + i, 1, false);
    if (!b)
      return s;
    s.push_back(char(b));
  }
}

/// printf's `format` over the argument buffer at `args` (generic) of `lane`;
/// `count` is set to the number of arguments read.
std::string format(ExecContext &c, int lane, const std::string &fmt,
                   uint64_t args, unsigned &count) {
  std::string out;
  uint64_t offset = 0;
  count = 0;
  auto next = [&](unsigned size) {
    if (!args)
      throw LaneError(lane, "vprintf: the format '" + fmt +
                                "' reads arguments, but the argument buffer "
                                "is a null pointer");
    offset = (offset + size - 1) / size * size;
    uint8_t *p =
        hostAddress(c, lane, StateSpace::Generic, args + offset, size, false);
    uint64_t v = 0;
    std::memcpy(&v, p, size);
    offset += size;
    ++count;
    return v;
  };
  for (size_t i = 0; i < fmt.size();) {
    if (fmt[i] != '%') {
      out.push_back(fmt[i++]);
      continue;
    }
    size_t start = i++;
    std::string spec = "%";
    while (i < fmt.size() && std::strchr("-+ #0", fmt[i]))
      spec.push_back(fmt[i++]);
    while (i < fmt.size() && (std::isdigit((unsigned char)fmt[i]) ||
                              fmt[i] == '.' || fmt[i] == '*')) {
      if (fmt[i] == '*')
        throw LaneError(lane, "vprintf: '*' widths are not simulated (in '" +
                                  fmt + "')");
      spec.push_back(fmt[i++]);
    }
    // Length: h and hh read an int as well; l, ll, j, z, t are 64 bits.
    bool wide = false;
    while (i < fmt.size() && std::strchr("hljztL", fmt[i])) {
      if (fmt[i] == 'L')
        throw LaneError(lane, "vprintf: long double is not simulated");
      wide |= fmt[i] != 'h';
      ++i;
    }
    if (i >= fmt.size())
      throw LaneError(lane, "vprintf: the format '" + fmt +
                                "' ends inside a conversion");
    char conv = fmt[i++];
    char buf[512];
    int n = 0;
    switch (conv) {
    case '%':
      out.push_back('%');
      continue;
    case 'd':
    case 'i': {
      uint64_t v = next(wide ? 8 : 4);
      n = wide ? std::snprintf(buf, sizeof buf, (spec + "lld").c_str(),
                               (long long)int64_t(v))
               : std::snprintf(buf, sizeof buf, (spec + "d").c_str(),
                               int(int32_t(uint32_t(v))));
      break;
    }
    case 'u':
    case 'x':
    case 'X':
    case 'o': {
      uint64_t v = next(wide ? 8 : 4);
      n = wide ? std::snprintf(buf, sizeof buf, (spec + "ll" + conv).c_str(),
                               (unsigned long long)v)
               : std::snprintf(buf, sizeof buf, (spec + conv).c_str(),
                               unsigned(uint32_t(v)));
      break;
    }
    case 'c':
      n = std::snprintf(buf, sizeof buf, (spec + "c").c_str(),
                        int(uint32_t(next(4))));
      break;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A': {
      double d;
      uint64_t v = next(8);
      std::memcpy(&d, &v, 8);
      n = std::snprintf(buf, sizeof buf, (spec + conv).c_str(), d);
      break;
    }
    case 'p':
      n = std::snprintf(buf, sizeof buf, (spec + "p").c_str(),
                        reinterpret_cast<void *>(uintptr_t(next(8))));
      break;
    case 's': {
      std::string text = readString(c, lane, next(8), "vprintf's %s argument");
      std::vector<char> big(text.size() + 512);
      n = std::snprintf(big.data(), big.size(), (spec + "s").c_str(),
                        text.c_str());
      out.append(big.data(), size_t(std::max(n, 0)));
      continue;
    }
    default:
      throw LaneError(lane, "vprintf: the conversion '" +
                                fmt.substr(start, i - start) +
                                "' is not simulated");
    }
    if (n < 0)
      throw LaneError(lane, "vprintf: cannot format '" +
                                fmt.substr(start, i - start) + "'");
    out.append(buf, size_t(std::min<int>(n, sizeof buf - 1)));
  }
  return out;
}

void vprintfOp(ExecContext &c, const Inst &I, uint32_t mask) {
  forLanes(mask, [&](int lane) {
    std::string fmt = readString(c, lane, readParam(c, lane, I.ops[0], 8),
                                 "vprintf's format");
    unsigned count = 0;
    uint64_t args = readParam(c, lane, I.ops[1], 8);
    c.cta.output += format(c, lane, fmt, args, count);
    if (I.nops > 2) {
      uint32_t result = count;
      std::memcpy(hostAddress(c, lane, StateSpace::Local, I.ops[2].imm, 4,
                              true),
                  &result, 4);
    }
  });
}

void assertfailOp(ExecContext &c, const Inst &I, uint32_t mask) {
  if (!mask)
    return;
  int lane = __builtin_ctz(mask);
  std::string message = readString(c, lane, readParam(c, lane, I.ops[0], 8),
                                   "__assertfail's message");
  std::string file = readString(c, lane, readParam(c, lane, I.ops[1], 8),
                                "__assertfail's file");
  unsigned line = unsigned(readParam(c, lane, I.ops[2], 4));
  std::string function = readString(c, lane, readParam(c, lane, I.ops[3], 8),
                                    "__assertfail's function");
  uint32_t tid[3] = {c.tid(lane, 0), c.tid(lane, 1), c.tid(lane, 2)};
  // CUDA's words, then where in the PTX.
  std::ostringstream os;
  os << file << ":" << line << ": " << function << ": block: ["
     << c.cta.ctaid[0] << "," << c.cta.ctaid[1] << "," << c.cta.ctaid[2]
     << "], thread: [" << tid[0] << "," << tid[1] << "," << tid[2]
     << "] Assertion `" << message << "` failed.\n  at " << c.where(lane);
  throw DeviceAssertion(os.str(), message, file, line, function,
                        c.cta.ctaid, tid);
}

void decodeSystemCall(DecodeInput &in, Inst &inst) {
  in.finish();
  for (unsigned i = 0; i < inst.nops; ++i)
    if (inst.ops[i].kind != OpKind::Addr || !inst.ops[i].hasSymbol ||
        inst.ops[i].symSpace != StateSpace::Local)
      in.fail("the arguments of a call must be the call's .param variables");
  inst.cls = InstClass::Control;
  inst.exec = in.base == "vprintf" ? vprintfOp : assertfailOp;
}

} // namespace

void registerSystemCalls(DecoderTable &t) {
  t["vprintf"] = decodeSystemCall;
  t["__assertfail"] = decodeSystemCall;
}

} // namespace tessel::gpusim
