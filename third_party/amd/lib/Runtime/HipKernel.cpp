//===- HipKernel.cpp - Kernels of hip targets launched through HIP -------===//
#include "tessel/AMD/HipKernel.h"

#include "tessel/AMD/HipDriver.h"

#include <map>
#include <mutex>
#include <stdexcept>

using namespace tessel;
using namespace tessel::amd;

namespace {

class HipKernel : public target::LoadedKernel {
public:
  HipKernel(const runtime::CacheEntry &entry, const HipLaunchData &data)
      : name(entry.name), entryName(entry.entryName), target(entry.target),
        image(entry.object), data(data) {}

  void launch(int64_t gx, int64_t gy, int64_t gz, void **argv,
              llvm::ArrayRef<runtime::LaunchArg> args,
              void *stream) const override {
    if (gx == 0 || gy == 0 || gz == 0)
      return;
    // The HSA dispatch packet counts a grid's work-items in 32 bits.
    int64_t threads = 64 * int64_t(data.numWarps);
    if (gx * threads > 0xffffffffLL || gy > 0xffffffffLL ||
        gz > 0xffffffffLL)
      throw std::runtime_error(
          "kernel " + name + ": grid (" + std::to_string(gx) + ", " +
          std::to_string(gy) + ", " + std::to_string(gz) +
          ") exceeds what HIP launches (at most 2^32-1 work-items along each "
          "axis, " + std::to_string(threads) + " per program along axis 0)");
    const HipDriver &driver = unwrap(HipDriver::get());
    HipFunction fn = unwrap(function(driver));
    HipError r = driver.moduleLaunchKernel(
        fn, unsigned(gx), unsigned(gy), unsigned(gz), unsigned(threads), 1, 1,
        unsigned(data.sharedBytes), static_cast<HipStream>(stream), argv,
        nullptr);
    if (r == 0 && data.waits)
      r = driver.streamSynchronize(static_cast<HipStream>(stream));
    if (r != 0)
      throw std::runtime_error("kernel " + name +
                               ": hipModuleLaunchKernel: " + driver.describe(r));
  }

  bool printsOutput() const override { return data.waits; }

private:
  template <typename T> T unwrap(llvm::Expected<T> value) const {
    if (!value)
      throw std::runtime_error(llvm::toString(value.takeError()));
    return *value;
  }

  /// The kernel's function on the current device, its module loaded once.
  llvm::Expected<HipFunction> function(const HipDriver &driver) const {
    int device = 0;
    if (llvm::Error err = driver.check(driver.getDevice(&device),
                                       "kernel " + name + ": hipGetDevice"))
      return std::move(err);
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = functions.find(device); it != functions.end())
      return it->second;
    HipModule module;
    if (llvm::Error err = driver.check(
            driver.moduleLoadData(&module, image.data()),
            "kernel " + name + ": loading its " + target + " code object "
            "on GPU " + std::to_string(device)))
      return std::move(err);
    HipFunction fn;
    if (llvm::Error err = driver.check(
            driver.moduleGetFunction(&fn, module, entryName.c_str()),
            "kernel " + name + ": finding " + entryName + " in its module"))
      return std::move(err);
    functions[device] = fn;
    return fn;
  }

  std::string name, entryName, target, image;
  HipLaunchData data;
  mutable std::mutex mutex;
  mutable std::map<int, HipFunction> functions;
};

} // namespace

std::unique_ptr<target::LoadedKernel>
amd::loadHipKernel(const runtime::CacheEntry &kernel,
                   const HipLaunchData &data) {
  return std::make_unique<HipKernel>(kernel, data);
}
