//===- SimArguments.cpp - Launch arguments for the GPU simulator ----------===//
#include "tessel/Target/SimArguments.h"

#include <algorithm>

using namespace tessel;

llvm::Expected<target::SimArguments>
target::simArguments(const std::string &kernel,
                     llvm::ArrayRef<runtime::LaunchArg> args) {
  SimArguments out;
  out.args.resize(args.size());
  std::vector<size_t> &owner = out.owner;
  std::vector<uint64_t> &lo = out.lo;
  owner.resize(args.size());
  lo.resize(args.size());
  std::vector<uint64_t> hi(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    owner[i] = i;
    lo[i] = args[i].lo;
    hi[i] = args[i].hi;
    if (args[i].isPointer() && !args[i].extentKnown)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "kernel " + kernel + ": the simulator needs the extent of argument '" +
              args[i].name.str() + "'");
  }
  // Merge groups (roots: owner[i] == i; a root's lo/hi span its group)
  // until no two overlap.
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t i = 0; i < args.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (args[i].isPointer() && args[j].isPointer() && owner[i] == i &&
            owner[j] == j && lo[j] < hi[i] && lo[i] < hi[j]) {
          for (size_t k = 0; k < args.size(); ++k)
            if (owner[k] == i)
              owner[k] = j;
          lo[j] = std::min(lo[j], lo[i]);
          hi[j] = std::max(hi[j], hi[i]);
          merged = true;
        }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const runtime::LaunchArg &a = args[i];
    gpusim::LaunchArg &s = out.args[i];
    s.name = a.name.str();
    if (a.isPointer()) {
      size_t o = owner[i];
      s.kind = gpusim::LaunchArg::Buffer;
      s.offset = a.bits - lo[o];
      if (o != i) {
        s.shareWith = int(o);
        continue;
      }
      s.host = reinterpret_cast<void *>(lo[o]);
      s.bytes = hi[o] - lo[o];
      s.writeBack = false;
      for (size_t k = 0; k < args.size(); ++k)
        if (owner[k] == o && !args[k].readonly)
          s.writeBack = true;
    } else if (a.type == "fp32" || a.type == "fp64") {
      s.kind = gpusim::LaunchArg::Float;
      s.f = a.real;
    } else {
      // Integers reach the kernel as their bits: NVPTX declares i32
      // parameters .u32, so -1 is passed as 0xffffffff.
      s.kind = gpusim::LaunchArg::Int;
      bool wide = a.type == "i64" || a.type == "u64";
      s.i = wide ? int64_t(a.bits) : int64_t(uint32_t(a.bits));
      s.isUnsigned = wide && (a.bits >> 63);
    }
  }
  return out;
}
