//===- CudaKernel.cpp - A compiled kernel run by the CUDA driver ---------===//
#include "tessel/NVIDIA/CudaKernel.h"

#include "tessel/NVIDIA/CudaDriver.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <mutex>
#include <vector>
#include <stdexcept>
#include <string>

using namespace tessel;
using namespace tessel::nvidia;

namespace {

llvm::Error failWith(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

/// Shared memory a kernel may use without opting in (bytes).
constexpr int64_t kDefaultSharedLimit = 48 * 1024;

std::string smName(int capability) {
  return "sm_" + std::to_string(capability);
}

class CudaKernel : public target::LoadedKernel {
public:
  CudaKernel(const CudaDriver &driver, const runtime::CacheEntry &entry,
             const CudaLaunchData &data)
      : driver(driver), name(entry.name), entryName(entry.entryName),
        target(entry.target), image(entry.object), data(data) {
    isPTX = !llvm::StringRef(image).starts_with("\x7f" "ELF");
  }

  void launch(int64_t gx, int64_t gy, int64_t gz, void **argv,
              llvm::ArrayRef<runtime::LaunchArg> args,
              void *stream) const override {
    if (gx == 0 || gy == 0 || gz == 0)
      return;
    if (gx * data.numCtas > 0x7fffffff || gy > 65535 || gz > 65535)
      throw std::runtime_error(
          "kernel " + name + ": grid (" + std::to_string(gx) + ", " +
          std::to_string(gy) + ", " + std::to_string(gz) +
          ") exceeds what CUDA launches (at most 2^31-1 CTAs along axis "
          "0 and 65535 along axes 1 and 2)");
    CUfunction fn = unwrap(function());
    for (const runtime::LaunchArg &arg : args) {
      if (!arg.isPointer() || arg.bits == 0)
        continue;
      CUdeviceptr device = 0;
      CUresult r = driver.pointerGetAttribute(
          &device, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CUdeviceptr(arg.bits));
      if (r != CUDA_SUCCESS)
        throw std::runtime_error(
            "kernel " + name + ": argument '" + arg.name.str() +
            "' is not memory the GPU can address (" + driver.describe(r) +
            "); pass a CUDA tensor, e.g. torch.from_numpy(a).cuda()");
    }
    // Tensor maps follow the runtime arguments, encoded by the driver.
    std::vector<CUtensorMap> maps(data.tensorMaps.size());
    std::vector<void *> params(argv, argv + args.size());
    for (auto [spec, map] : llvm::zip(data.tensorMaps, maps)) {
      encode(spec, args, map);
      params.push_back(&map);
    }
    CUresult r = driver.launchKernel(
        fn, unsigned(gx * data.numCtas), unsigned(gy), unsigned(gz),
        unsigned(32 * data.numWarps),
        1, 1, unsigned(data.sharedBytes), static_cast<CUstream>(stream),
        params.data(), nullptr);
    if (r == CUDA_SUCCESS && data.waits)
      r = driver.streamSynchronize(static_cast<CUstream>(stream));
    if (r == CUDA_ERROR_ASSERT) {
      // The GPU printed which assertion failed, where (stderr); the context
      // is unusable from now on, as for any CUDA program.
      target::DeviceAssertError::Info info;
      info.kernel = name;
      info.message = "device-side assertion failed (" + driver.describe(r) +
                     "; the GPU printed the assertion, its file and line, "
                     "the block and the thread on stderr)";
      throw target::DeviceAssertError(std::move(info));
    }
    if (r != CUDA_SUCCESS)
      throw std::runtime_error("kernel " + name + ": cuLaunchKernel: " +
                               driver.describe(r));
  }

  bool printsOutput() const override { return data.waits; }

private:
  /// The driver's tensor map of `spec` at this launch.
  void encode(const TensorMapSpec &spec,
              llvm::ArrayRef<runtime::LaunchArg> args, CUtensorMap &map) const {
    TensorMapView view = unwrap(tensorMapView(spec, args));
    static const CUtensorMapDataType types[] = {
        CU_TENSOR_MAP_DATA_TYPE_UINT8,   CU_TENSOR_MAP_DATA_TYPE_UINT16,
        CU_TENSOR_MAP_DATA_TYPE_INT32,   CU_TENSOR_MAP_DATA_TYPE_INT64,
        CU_TENSOR_MAP_DATA_TYPE_FLOAT16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        CU_TENSOR_MAP_DATA_TYPE_FLOAT32, CU_TENSOR_MAP_DATA_TYPE_FLOAT64};
    std::vector<cuuint64_t> dims(view.dims.begin(), view.dims.end());
    std::vector<cuuint64_t> strides(view.strides.begin(), view.strides.end());
    std::vector<cuuint32_t> box(view.box.begin(), view.box.end());
    std::vector<cuuint32_t> elementStrides(box.size(), 1);
    CUresult r = driver.tensorMapEncodeTiled(
        &map, types[unsigned(spec.element)], cuuint32_t(dims.size()),
        reinterpret_cast<void *>(view.address), dims.data(), strides.data(),
        box.data(), elementStrides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
        CUtensorMapSwizzle(swizzleMode(spec.swizzle)),
        CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        spec.nan ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                 : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
      throw std::runtime_error("kernel " + name + ": the tensor map of '" +
                               args[spec.arg].name.str() +
                               "': cuTensorMapEncodeTiled: " +
                               driver.describe(r));
  }

  template <typename T> T unwrap(llvm::Expected<T> value) const {
    if (!value)
      throw std::runtime_error(llvm::toString(value.takeError()));
    return *value;
  }

  /// The kernel's function in the current context, its module loaded there
  /// at the first launch.
  llvm::Expected<CUfunction> function() const {
    auto context = driver.currentContext();
    if (!context)
      return context.takeError();
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto &[ctx, fn] : functions)
      if (ctx == *context)
        return fn;
    auto capability = driver.capability(*context);
    if (!capability)
      return capability.takeError();
    if (llvm::Error err = checkArchitecture(*capability))
      return std::move(err);
    CUmodule module;
    if (llvm::Error err = driver.check(
            driver.moduleLoadData(&module, image.c_str()),
            "kernel " + name + ": loading its " + (isPTX ? "PTX" : "cubin") +
                " into the " + smName(*capability) + " GPU"))
      return std::move(err);
    CUfunction fn;
    if (llvm::Error err = driver.check(
            driver.moduleGetFunction(&fn, module, entryName.c_str()),
            "kernel " + name + ": finding " + entryName + " in its module"))
      return std::move(err);
    if (data.sharedBytes > kDefaultSharedLimit) {
      CUresult r = driver.funcSetAttribute(
          fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
          int(data.sharedBytes));
      if (r != CUDA_SUCCESS)
        return failWith("kernel " + name + " needs " +
                        llvm::Twine(data.sharedBytes) +
                        " bytes of shared memory per program, more than this " +
                        smName(*capability) + " GPU allows: " +
                        driver.describe(r));
    }
    functions.push_back({*context, fn});
    return fn;
  }

  /// A cubin runs on its architecture's family (sm_80 on sm_8x, x >= 0);
  /// sm_90a code on sm_90 only; PTX on its architecture and newer ones.
  llvm::Error checkArchitecture(int capability) const {
    int built = data.sm;
    bool ok = data.archSpecific ? capability == built
              : isPTX           ? capability >= built
                                : capability / 10 == built / 10 &&
                            capability >= built;
    if (ok)
      return llvm::Error::success();
    return failWith("kernel " + name + " was compiled for " + target +
                    " and cannot run on this " + smName(capability) +
                    " GPU: compile it for cuda:" + llvm::Twine(capability) +
                    (capability >= 90 ? "a" : ""));
  }

  const CudaDriver &driver;
  std::string name, entryName, target;
  std::string image; ///< the cubin, or NUL-terminated PTX
  bool isPTX = false;
  CudaLaunchData data;
  mutable std::mutex mutex;
  mutable llvm::SmallVector<std::pair<CUcontext, CUfunction>, 1> functions;
};

} // namespace

llvm::Expected<std::unique_ptr<target::LoadedKernel>>
nvidia::loadCudaKernel(const runtime::CacheEntry &kernel,
                       const CudaLaunchData &data) {
  auto driver = CudaDriver::get();
  if (!driver)
    return failWith("it cannot run here: " +
                    llvm::toString(driver.takeError()));
  if (kernel.object.empty())
    return failWith("kernel " + kernel.name + " has no binary");
  return std::make_unique<CudaKernel>(*driver, kernel, data);
}

bool nvidia::cudaDriverAvailable() {
  auto driver = CudaDriver::get();
  if (!driver) {
    llvm::consumeError(driver.takeError());
    return false;
  }
  int count = 0;
  return driver->deviceGetCount(&count) == CUDA_SUCCESS && count > 0;
}
