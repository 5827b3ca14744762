//===- HipKernel.h - Kernels of hip targets launched through HIP -*- C++ -*-===//
#ifndef TESSEL_AMD_HIPKERNEL_H
#define TESSEL_AMD_HIPKERNEL_H

#include "tessel/Runtime/CacheEntry.h"
#include "tessel/Target/Target.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace tessel::amd {

/// What a launch needs besides the hsaco.
struct HipLaunchData {
  int numWarps = 4;        ///< waves of 64 work-items per program
  int64_t sharedBytes = 0; ///< dynamic LDS per program
  /// The kernel prints (OCKL's hostcall printf) or asserts: a launch waits
  /// for it, so that its lines come out before the caller's next ones and a
  /// trap is reported by the launch that made it.
  bool waits = false;
};

/// The hsaco of `kernel` as a launchable kernel: its module is loaded on the
/// current device at the first launch; launches go on the stream given
/// (torch's current one), the arguments passed as HIP's kernelParams.
std::unique_ptr<target::LoadedKernel>
loadHipKernel(const runtime::CacheEntry &kernel, const HipLaunchData &data);

} // namespace tessel::amd

#endif // TESSEL_AMD_HIPKERNEL_H
