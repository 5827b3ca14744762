//===- CudaKernel.h - A compiled kernel run by the CUDA driver --*- C++ -*-===//
//
// The launcher of the cuda targets: a kernel's cubin (or its PTX, which the
// driver compiles, where no ptxas was found at compile time) loaded into the
// CUDA context current at each launch (one module per context, loaded on its
// first launch there), and launched with cuLaunchKernel on the caller's
// stream. Arrays must be memory the GPU can address.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_NVIDIA_CUDAKERNEL_H
#define TESSEL_NVIDIA_CUDAKERNEL_H

#include "tessel/Runtime/CacheEntry.h"
#include "tessel/Target/Target.h"

#include "tessel/NVIDIA/TensorMapSpec.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace tessel::nvidia {

/// What a launch needs beside the binary.
struct CudaLaunchData {
  int sm = 80;               ///< the architecture compiled for
  bool archSpecific = false; ///< sm_90a: runs on exactly that architecture
  int numWarps = 4;
  /// CTAs per program: the programs along x are clusters of this many CTAs
  /// (the kernel's .reqnctapercluster).
  int numCtas = 1;
  int64_t sharedBytes = 0;   ///< dynamic shared memory per program
  /// The tensor maps passed after the runtime arguments.
  std::vector<TensorMapSpec> tensorMaps;
  /// The kernel calls vprintf or __assertfail (debugging): a launch waits
  /// for it to finish, so that its lines are printed and a failed device
  /// assertion (CUDA_ERROR_ASSERT) is raised by the launch that made it.
  bool waits = false;
};

/// A launchable kernel from its cache entry; the driver is loaded here (an
/// error when this process has none), the module at the first launch.
llvm::Expected<std::unique_ptr<target::LoadedKernel>>
loadCudaKernel(const runtime::CacheEntry &kernel, const CudaLaunchData &data);

/// Whether the CUDA driver loads and sees a GPU.
bool cudaDriverAvailable();

} // namespace tessel::nvidia

#endif // TESSEL_NVIDIA_CUDAKERNEL_H
