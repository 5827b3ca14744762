//===- ObjectLoader.h - Loads kernel objects into the process --*- C++ -*-===//
#ifndef TESSEL_TARGET_CPU_OBJECTLOADER_H
#define TESSEL_TARGET_CPU_OBJECTLOADER_H

#include <cstdint>
#include <string>

namespace tessel::cpu {

/// The launch entry of a CPU kernel: runs programs [begin, end) of a
/// gx * gy * gz grid; argv[i] points to the value of kernel argument i.
using CPUEntry = void (*)(void **argv, int64_t begin, int64_t end, int32_t gx,
                          int32_t gy, int32_t gz);

/// Links an ELF object produced by the CPU compiler into this process (LLVM
/// ORC, no external linker) and returns the address of `entryName`, or null
/// with `error` set. Objects stay loaded for the life of the process.
CPUEntry loadCPUObject(const std::string &object, const std::string &entryName,
                       std::string &error);

/// Whether the ELF object calls the function `symbol` (it is undefined
/// there: the loader provides it).
bool objectCalls(const std::string &object, const char *symbol);

} // namespace tessel::cpu

#endif // TESSEL_TARGET_CPU_OBJECTLOADER_H
