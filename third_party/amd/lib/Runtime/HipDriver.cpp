//===- HipDriver.cpp - The HIP runtime, loaded at run time ---------------===//
#include "tessel/AMD/HipDriver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

using namespace tessel::amd;

namespace {
llvm::Error failWith(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}
} // namespace

llvm::Expected<const HipDriver &> HipDriver::get() {
  static HipDriver driver;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *env = std::getenv("TESSEL_LIBHIP_PATH");
    driver.path = env && *env ? env : "libamdhip64.so";
    // Never closed: modules live as long as the process.
    void *lib = dlopen(driver.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = dlerror();
      error = "the HIP runtime (" + driver.path + ") cannot be loaded: " +
              (why ? why : "unknown error") +
              "; kernels of hip targets need ROCm's libamdhip64.so";
      return;
    }
    std::string missing;
    auto bind = [&](auto &fn, const char *symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lib, symbol));
      if (!fn)
        missing += std::string(missing.empty() ? "" : ", ") + symbol;
    };
    bind(driver.init, "hipInit");
    bind(driver.getDeviceCount, "hipGetDeviceCount");
    bind(driver.getDevice, "hipGetDevice");
    bind(driver.moduleLoadData, "hipModuleLoadData");
    bind(driver.moduleGetFunction, "hipModuleGetFunction");
    bind(driver.moduleLaunchKernel, "hipModuleLaunchKernel");
    bind(driver.streamSynchronize, "hipStreamSynchronize");
    bind(driver.getErrorName, "hipGetErrorName");
    bind(driver.getErrorString, "hipGetErrorString");
    if (!missing.empty()) {
      error = "the HIP runtime " + driver.path + " lacks " + missing;
      return;
    }
    if (HipError r = driver.init(0); r != 0)
      error = "the HIP runtime (" + driver.path +
              ") does not initialize: " + driver.describe(r);
  });
  if (!error.empty())
    return failWith(error);
  return driver;
}

std::string HipDriver::describe(HipError result) const {
  const char *name = getErrorName ? getErrorName(result) : nullptr;
  const char *text = getErrorString ? getErrorString(result) : nullptr;
  return std::string(name ? name : "hipError " + std::to_string(result)) +
         (text ? std::string(" (") + text + ")" : "");
}

llvm::Error HipDriver::check(HipError result, const llvm::Twine &what) const {
  if (result == 0)
    return llvm::Error::success();
  return failWith(what + ": " + describe(result));
}

bool tessel::amd::hipRuntimeAvailable() {
  auto driver = HipDriver::get();
  if (!driver) {
    llvm::consumeError(driver.takeError());
    return false;
  }
  int count = 0;
  return driver->getDeviceCount(&count) == 0 && count > 0;
}
