//===- Npy.h - Reading and writing .npy files (for the CLI) -----*- C++ -*-===//
#ifndef TESSEL_GPUSIM_NPY_H
#define TESSEL_GPUSIM_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::gpusim {

struct NpyArray {
  std::string dtype; // numpy descr, e.g. "<f4"
  std::vector<uint64_t> shape;
  std::vector<uint8_t> data; // C order
};

/// Reads a little-endian, C-ordered .npy file (format 1.0-3.0); throws
/// SimError on anything else.
NpyArray readNpy(const std::string &path);
void writeNpy(const std::string &path, const NpyArray &a);

} // namespace tessel::gpusim

#endif
