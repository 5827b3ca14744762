//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// The entry points of libcuda.so.1 that Tessel's CUDA launcher calls, found
// with dlopen/dlsym the first time they are needed: nothing links against the
// driver, so every machine builds and imports Tessel, and a machine without
// a driver says so only when a kernel is to run. TESSEL_LIBCUDA_PATH names
// another library (tests load a fake driver through it).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_NVIDIA_CUDADRIVER_H
#define TESSEL_NVIDIA_CUDADRIVER_H

#include <cuda.h>

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>

namespace tessel::nvidia {

class CudaDriver {
public:
  /// The driver of this process, loaded and initialized (cuInit) once; the
  /// error says why there is none.
  static llvm::Expected<const CudaDriver &> get();

  /// success, or an error "<what>: CUDA_ERROR_<NAME> (<the driver's text>)".
  llvm::Error check(CUresult result, const llvm::Twine &what) const;
  /// The driver's name and text of an error code.
  std::string describe(CUresult result) const;

  /// The context current on this thread; without one, device 0's primary
  /// context is made current (torch and the CUDA runtime use that one too).
  llvm::Expected<CUcontext> currentContext() const;
  /// The compute capability (major * 10 + minor) of a context's device.
  llvm::Expected<int> capability(CUcontext context) const;

  // The entry points (the versions cuda.h's macros name, e.g. cuMemAlloc_v2).
  decltype(&::cuGetErrorName) getErrorName = nullptr;
  decltype(&::cuGetErrorString) getErrorString = nullptr;
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driverGetVersion = nullptr;
  decltype(&::cuDeviceGetCount) deviceGetCount = nullptr;
  decltype(&::cuDeviceGet) deviceGet = nullptr;
  decltype(&::cuDeviceGetAttribute) deviceGetAttribute = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) devicePrimaryCtxRetain = nullptr;
  decltype(&::cuCtxGetCurrent) ctxGetCurrent = nullptr;
  decltype(&::cuCtxSetCurrent) ctxSetCurrent = nullptr;
  decltype(&::cuCtxGetDevice) ctxGetDevice = nullptr;
  decltype(&::cuModuleLoadData) moduleLoadData = nullptr;
  decltype(&::cuModuleGetFunction) moduleGetFunction = nullptr;
  decltype(&::cuFuncSetAttribute) funcSetAttribute = nullptr;
  decltype(&::cuLaunchKernel) launchKernel = nullptr;
  decltype(&::cuStreamSynchronize) streamSynchronize = nullptr;
  decltype(&::cuTensorMapEncodeTiled) tensorMapEncodeTiled = nullptr;
  decltype(&::cuPointerGetAttribute) pointerGetAttribute = nullptr;

  /// What Triton's `driver.active.utils.get_device_properties` gives of GPU
  /// `device`: multiprocessor_count, max_shared_mem (with the opt-in),
  /// max_num_regs (per program), warpSize, sm_clock_rate, mem_clock_rate
  /// (kHz), mem_bus_width (bits), and the compute capability as
  /// "capability" (major * 10 + minor).
  llvm::Expected<std::map<std::string, int>> deviceProperties(int device) const;

private:
  CudaDriver() = default;
  std::string path; ///< the library loaded, for messages
};

} // namespace tessel::nvidia

#endif // TESSEL_NVIDIA_CUDADRIVER_H
