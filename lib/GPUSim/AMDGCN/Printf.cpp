//===- Printf.cpp - The hostcall printf service's formatting --------------===//
//
// A printf message is a list of 64-bit words (Hostcall.h). Each conversion
// of the format takes its argument from the next word as C's printf would
// take it from a variadic argument of that type: int conversions the low 32
// bits (h, hh: 16, 8; l, ll, j, z, t: all 64), floating ones the word's
// bits as a double, %c the low byte, %p the word as a pointer, %s the
// string stored in the following words, '*' widths and precisions an int
// word before the argument. The words are printed with the host's snprintf,
// so the text is what C prints.
//
//===----------------------------------------------------------------------===//
#include "Hostcall.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace tessel::gpusim::amdgcn {
namespace {

/// Reads the words of a message in order.
struct Reader {
  const std::vector<uint64_t> &words;
  size_t next = 0;
  const std::string *format = nullptr;

  uint64_t word() {
    if (next >= words.size())
      throw std::runtime_error("the format '" + (format ? *format : std::string()) +
                               "' reads more arguments than the message holds");
    return words[next++];
  }
  /// A string stored in whole words, up to its NUL or the end of the
  /// message: OCKL sends the bytes it is given, and Triton's messages leave
  /// the NUL out, which a length that is a multiple of 8 then does not pad
  /// in (ROCclr reads the last string of a message to its end).
  std::string string(const char *what) {
    if (next >= words.size())
      throw std::runtime_error(std::string(what) + " is missing: the message has ended");
    std::string s;
    while (next < words.size()) {
      uint64_t w = words[next++];
      for (int i = 0; i < 8; ++i) {
        char c = char(w >> (8 * i));
        if (!c)
          return s;
        s.push_back(c);
      }
    }
    return s;
  }
};

/// snprintf of one conversion into a string of its length.
template <typename T> std::string print(const std::string &spec, T value) {
  int n = std::snprintf(nullptr, 0, spec.c_str(), value);
  if (n < 0)
    throw std::runtime_error("cannot print '" + spec + "'");
  std::string out(size_t(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), spec.c_str(), value);
  out.resize(size_t(n));
  return out;
}

/// The int an argument word holds for a '*' or int conversion.
int asInt(uint64_t w) { return int(int32_t(uint32_t(w))); }

} // namespace

std::string formatPrintf(const std::vector<uint64_t> &words) {
  Reader r{words};
  uint64_t control = r.word();
  if (control > 1)
    throw std::runtime_error("control word " + std::to_string(control) + " (only 0, stdout, and 1, stderr)");
  const std::string fmt = r.string("the format string");
  r.format = &fmt;
  std::string out;
  for (size_t i = 0; i < fmt.size();) {
    if (fmt[i] != '%') {
      out.push_back(fmt[i++]);
      continue;
    }
    size_t start = i++;
    // The flags, width and precision as written; '*' takes an int argument.
    std::string spec = "%";
    int numStars = 0;
    while (i < fmt.size() && std::strchr("-+ #0", fmt[i]))
      spec.push_back(fmt[i++]);
    while (i < fmt.size() && (std::isdigit((unsigned char)fmt[i]) || fmt[i] == '.' || fmt[i] == '*')) {
      if (fmt[i] == '*') {
        if (numStars == 2)
          throw std::runtime_error("the conversion in '" + fmt + "' has more than two '*'");
        int v = asInt(r.word());
        ++numStars;
        ++i;
        // A negative precision is as if none were given.
        if (spec.back() == '.' && v < 0)
          spec.pop_back();
        else
          spec += std::to_string(v);
        continue;
      }
      spec.push_back(fmt[i++]);
    }
    // Length: bits of an integer argument.
    unsigned bits = 32;
    while (i < fmt.size() && std::strchr("hljztL", fmt[i])) {
      char c = fmt[i++];
      if (c == 'L')
        throw std::runtime_error("long double (in '" + fmt + "') is not simulated");
      bits = c == 'h' ? (bits == 16 ? 8 : 16) : 64;
    }
    if (i >= fmt.size())
      throw std::runtime_error("the format '" + fmt + "' ends inside a conversion");
    char conv = fmt[i++];
    switch (conv) {
    case '%':
      out.push_back('%');
      break;
    case 'd':
    case 'i': {
      uint64_t w = r.word();
      int64_t v = bits == 64 ? int64_t(w) : bits == 32 ? int64_t(int32_t(w)) : bits == 16 ? int64_t(int16_t(w))
                                                                                           : int64_t(int8_t(w));
      out += print(spec + "lld", (long long)v);
      break;
    }
    case 'u':
    case 'o':
    case 'x':
    case 'X': {
      uint64_t w = r.word();
      uint64_t v = bits == 64 ? w : w & ((uint64_t(1) << bits) - 1);
      out += print(spec + "ll" + conv, (unsigned long long)v);
      break;
    }
    case 'c':
      out += print(spec + "c", int(uint8_t(r.word())));
      break;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A': {
      uint64_t w = r.word();
      double d;
      std::memcpy(&d, &w, 8);
      out += print(spec + conv, d);
      break;
    }
    case 'p':
      out += print(spec + "p", reinterpret_cast<void *>(uintptr_t(r.word())));
      break;
    case 's':
      out += print(spec + "s", r.string("a %s argument").c_str());
      break;
    default:
      throw std::runtime_error("the conversion '" + fmt.substr(start, i - start) + "' (in '" + fmt +
                               "') is not simulated");
    }
  }
  return out;
}

} // namespace tessel::gpusim::amdgcn
