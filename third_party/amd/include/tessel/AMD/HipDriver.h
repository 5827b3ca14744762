//===- HipDriver.h - The HIP runtime, loaded at run time --------*- C++ -*-===//
//
// The entry points of libamdhip64.so that Tessel's HIP launcher calls, found
// with dlopen/dlsym the first time a kernel runs: nothing links against ROCm
// and no HIP header is needed, so every machine builds and imports Tessel.
// TESSEL_LIBHIP_PATH names another library (tests load a fake runtime
// through it). The declarations are those of HIP's C API (hip_runtime_api.h)
// for the calls used: opaque handles, an int error code (hipSuccess is 0).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_AMD_HIPDRIVER_H
#define TESSEL_AMD_HIPDRIVER_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace tessel::amd {

using HipError = int; ///< hipError_t
using HipModule = struct HipModuleOpaque *;
using HipFunction = struct HipFunctionOpaque *;
using HipStream = struct HipStreamOpaque *;

class HipDriver {
public:
  /// The runtime of this process, loaded and initialized (hipInit) once;
  /// the error says why there is none.
  static llvm::Expected<const HipDriver &> get();
  /// success, or an error "<what>: <hipErrorName> (<the runtime's text>)".
  llvm::Error check(HipError result, const llvm::Twine &what) const;
  std::string describe(HipError result) const;

  HipError (*init)(unsigned flags) = nullptr;
  HipError (*getDeviceCount)(int *count) = nullptr;
  HipError (*getDevice)(int *device) = nullptr;
  HipError (*moduleLoadData)(HipModule *module, const void *image) = nullptr;
  HipError (*moduleGetFunction)(HipFunction *function, HipModule module,
                                const char *name) = nullptr;
  HipError (*moduleLaunchKernel)(HipFunction f, unsigned gridX, unsigned gridY,
                                 unsigned gridZ, unsigned blockX,
                                 unsigned blockY, unsigned blockZ,
                                 unsigned sharedBytes, HipStream stream,
                                 void **params, void **extra) = nullptr;
  HipError (*streamSynchronize)(HipStream stream) = nullptr;
  const char *(*getErrorName)(HipError error) = nullptr;
  const char *(*getErrorString)(HipError error) = nullptr;

private:
  HipDriver() = default;
  std::string path; ///< the library loaded, for messages
};

/// Whether a HIP runtime with a GPU is there (loaded on first call).
bool hipRuntimeAvailable();

} // namespace tessel::amd

#endif // TESSEL_AMD_HIPDRIVER_H
