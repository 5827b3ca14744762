//===- Npy.cpp - Reading and writing .npy files ---------------------------===//
#include "tessel/GPUSim/Npy.h"

#include "tessel/GPUSim/Error.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace tessel::gpusim {

static std::string field(const std::string &h, const std::string &key) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos)
    return "";
  size_t colon = h.find(':', k);
  size_t b = h.find_first_not_of(' ', colon + 1);
  if (h[b] == '\'') {
    size_t e = h.find('\'', b + 1);
    return h.substr(b + 1, e - b - 1);
  }
  if (h[b] == '(') {
    size_t e = h.find(')', b);
    return h.substr(b + 1, e - b - 1);
  }
  size_t e = h.find_first_of(",}", b);
  return h.substr(b, e - b);
}

NpyArray readNpy(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw SimError("cannot open " + path);
  std::string all((std::istreambuf_iterator<char>(f)), {});
  if (all.size() < 10 || all.compare(0, 6, "\x93NUMPY") != 0)
    throw SimError(path + " is not a .npy file");
  unsigned major = uint8_t(all[6]);
  size_t hlen, start;
  if (major == 1) {
    hlen = uint8_t(all[8]) | uint8_t(all[9]) << 8;
    start = 10;
  } else {
    hlen = uint32_t(uint8_t(all[8])) | uint32_t(uint8_t(all[9])) << 8 |
           uint32_t(uint8_t(all[10])) << 16 | uint32_t(uint8_t(all[11])) << 24;
    start = 12;
  }
  std::string h = all.substr(start, hlen);
  NpyArray a;
  a.dtype = field(h, "descr");
  if (field(h, "fortran_order") != "False")
    throw SimError(path + ": Fortran-ordered arrays are not supported");
  if (a.dtype.empty() || a.dtype[0] == '>')
    throw SimError(path + ": big-endian or unknown dtype '" + a.dtype + "'");
  std::stringstream ss(field(h, "shape"));
  std::string dim;
  while (std::getline(ss, dim, ','))
    if (dim.find_first_not_of(' ') != std::string::npos)
      a.shape.push_back(std::stoull(dim));
  a.data.assign(all.begin() + start + hlen, all.end());
  return a;
}

void writeNpy(const std::string &path, const NpyArray &a) {
  std::string shape = "(";
  for (uint64_t d : a.shape)
    shape += std::to_string(d) + ",";
  if (a.shape.size() > 1)
    shape.pop_back();
  shape += ")";
  std::string h = "{'descr': '" + a.dtype + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f)
    throw SimError("cannot write " + path);
  f.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = uint16_t(h.size());
  char l[2] = {char(len & 0xff), char(len >> 8)};
  f.write(l, 2);
  f.write(h.data(), std::streamsize(h.size()));
  f.write(reinterpret_cast<const char *>(a.data.data()), std::streamsize(a.data.size()));
}

} // namespace tessel::gpusim
