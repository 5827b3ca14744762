//===- CudaDriver.cpp - The CUDA driver API, loaded at run time ----------===//
#include "tessel/NVIDIA/CudaDriver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

using namespace tessel::nvidia;

namespace {

llvm::Error failWith(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

// The symbol a cuda.h name stands for: cuda.h maps some names to versioned
// ones (cuMemAlloc -> cuMemAlloc_v2), which are the ones to look up.
#define TESSEL_SYMBOL_TEXT(name) #name
#define TESSEL_SYMBOL(name) TESSEL_SYMBOL_TEXT(name)

} // namespace

llvm::Expected<const CudaDriver &> CudaDriver::get() {
  static CudaDriver driver;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *env = std::getenv("TESSEL_LIBCUDA_PATH");
    driver.path = env && *env ? env : "libcuda.so.1";
    // Never closed: modules and contexts live as long as the process.
    void *lib = dlopen(driver.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = dlerror();
      error = "the CUDA driver (" + driver.path + ") cannot be loaded: " +
              (why ? why : "unknown error") +
              "; kernels of cuda targets need an NVIDIA driver (the simulator "
              "runs the same code on the CPU: TESSEL_TARGET=sim:sm_80)";
      return;
    }
    std::string missing;
    auto bind = [&](auto &fn, const char *symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lib, symbol));
      if (!fn)
        missing += std::string(missing.empty() ? "" : ", ") + symbol;
    };
#define TESSEL_BIND(field, name) bind(driver.field, TESSEL_SYMBOL(name))
    TESSEL_BIND(getErrorName, cuGetErrorName);
    TESSEL_BIND(getErrorString, cuGetErrorString);
    TESSEL_BIND(init, cuInit);
    TESSEL_BIND(driverGetVersion, cuDriverGetVersion);
    TESSEL_BIND(deviceGetCount, cuDeviceGetCount);
    TESSEL_BIND(deviceGet, cuDeviceGet);
    TESSEL_BIND(deviceGetAttribute, cuDeviceGetAttribute);
    TESSEL_BIND(devicePrimaryCtxRetain, cuDevicePrimaryCtxRetain);
    TESSEL_BIND(ctxGetCurrent, cuCtxGetCurrent);
    TESSEL_BIND(ctxSetCurrent, cuCtxSetCurrent);
    TESSEL_BIND(ctxGetDevice, cuCtxGetDevice);
    TESSEL_BIND(moduleLoadData, cuModuleLoadData);
    TESSEL_BIND(moduleGetFunction, cuModuleGetFunction);
    TESSEL_BIND(funcSetAttribute, cuFuncSetAttribute);
    TESSEL_BIND(launchKernel, cuLaunchKernel);
    TESSEL_BIND(streamSynchronize, cuStreamSynchronize);
    TESSEL_BIND(tensorMapEncodeTiled, cuTensorMapEncodeTiled);
    TESSEL_BIND(pointerGetAttribute, cuPointerGetAttribute);
#undef TESSEL_BIND
    if (!missing.empty()) {
      error = "the CUDA driver " + driver.path + " lacks " + missing +
              " (a driver for CUDA 12 or newer is needed)";
      return;
    }
    if (CUresult r = driver.init(0); r != CUDA_SUCCESS)
      error = "the CUDA driver (" + driver.path +
              ") does not initialize: " + driver.describe(r);
  });
  if (!error.empty())
    return failWith(error);
  return driver;
}

std::string CudaDriver::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (getErrorName(result, &name) != CUDA_SUCCESS || !name)
    return "CUDA error " + std::to_string(int(result));
  getErrorString(result, &text);
  return std::string(name) + (text ? std::string(" (") + text + ")" : "");
}

llvm::Error CudaDriver::check(CUresult result, const llvm::Twine &what) const {
  if (result == CUDA_SUCCESS)
    return llvm::Error::success();
  return failWith(what + ": " + describe(result));
}

llvm::Expected<CUcontext> CudaDriver::currentContext() const {
  CUcontext context = nullptr;
  if (auto err = check(ctxGetCurrent(&context), "cuCtxGetCurrent"))
    return std::move(err);
  if (context)
    return context;
  int count = 0;
  if (auto err = check(deviceGetCount(&count), "cuDeviceGetCount"))
    return std::move(err);
  if (count == 0)
    return failWith("the CUDA driver (" + path + ") sees no GPU");
  CUdevice device;
  if (auto err = check(deviceGet(&device, 0), "cuDeviceGet"))
    return std::move(err);
  if (auto err = check(devicePrimaryCtxRetain(&context, device),
                       "cuDevicePrimaryCtxRetain"))
    return std::move(err);
  if (auto err = check(ctxSetCurrent(context), "cuCtxSetCurrent"))
    return std::move(err);
  return context;
}

llvm::Expected<int> CudaDriver::capability(CUcontext context) const {
  CUcontext previous = nullptr;
  ctxGetCurrent(&previous);
  if (previous != context)
    if (auto err = check(ctxSetCurrent(context), "cuCtxSetCurrent"))
      return std::move(err);
  CUdevice device;
  llvm::Error err = check(ctxGetDevice(&device), "cuCtxGetDevice");
  int major = 0, minor = 0;
  if (!err)
    err = check(deviceGetAttribute(&major,
                                   CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                   device),
                "cuDeviceGetAttribute");
  if (!err)
    err = check(deviceGetAttribute(&minor,
                                   CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                   device),
                "cuDeviceGetAttribute");
  if (previous != context)
    ctxSetCurrent(previous);
  if (err)
    return std::move(err);
  return major * 10 + minor;
}

llvm::Expected<std::map<std::string, int>>
CudaDriver::deviceProperties(int ordinal) const {
  CUdevice device;
  if (auto err = check(deviceGet(&device, ordinal),
                       "GPU " + llvm::Twine(ordinal)))
    return std::move(err);
  static const std::pair<const char *, CUdevice_attribute> attributes[] = {
      {"multiprocessor_count", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {"max_shared_mem", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
      {"max_num_regs", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
      {"warpSize", CU_DEVICE_ATTRIBUTE_WARP_SIZE},
      {"sm_clock_rate", CU_DEVICE_ATTRIBUTE_CLOCK_RATE},
      {"mem_clock_rate", CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE},
      {"mem_bus_width", CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH},
      {"major", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
      {"minor", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
  };
  std::map<std::string, int> properties;
  for (const auto &[name, attribute] : attributes) {
    int value = 0;
    if (auto err = check(deviceGetAttribute(&value, attribute, device),
                         "cuDeviceGetAttribute(" + llvm::Twine(name) + ")"))
      return std::move(err);
    properties[name] = value;
  }
  properties["capability"] = properties["major"] * 10 + properties["minor"];
  properties.erase("major");
  properties.erase("minor");
  return properties;
}
