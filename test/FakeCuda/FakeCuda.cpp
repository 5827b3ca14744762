//===- FakeCuda.cpp - A CUDA driver that runs PTX in the simulator -------===//
//
// libtessel-fake-cuda.so: the part of the CUDA driver API that Tessel's
// launcher and its tests call, for machines without a GPU. Tests load it in
// place of libcuda.so.1 (TESSEL_LIBCUDA_PATH) so that the real launcher
// path runs: driver loading, contexts, module loading, the opt-in to more
// shared memory, argument passing, streams and errors.
//
// - "Device memory" is host memory from cuMemAlloc; the fake knows every
//   allocation, so cuPointerGetAttribute tells device from host memory as
//   the driver does.
// - Modules are PTX, run at cuLaunchKernel by Tessel's PTX simulator
//   (synchronously) on the allocations the arguments point into. A cubin
//   loads (its kernel names are found in it) but a launch of it is
//   CUDA_ERROR_NOT_SUPPORTED: SASS cannot be simulated.
// - One device; its compute capability is TESSEL_FAKE_CUDA_CAPABILITY
//   (default 80), its shared memory per program that of an A100 (sm_8x) or
//   H100 (sm_9x).
// - tesselFakeCuda* functions let a test see the last launch.
//
//===----------------------------------------------------------------------===//
#include <cuda.h>

#include "tessel/GPUSim/Error.h"
#include "tessel/GPUSim/Launch.h"
#include "tessel/GPUSim/Program.h"
#include "tessel/GPUSim/TensorMap.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace tessel;

struct CUctx_st {
  int device = 0;
};
struct CUmod_st {
  CUcontext context = nullptr;
  std::string image;
  std::unique_ptr<gpusim::Module> ptx; ///< null for a cubin
};
struct CUfunc_st {
  CUmod_st *module = nullptr;
  std::string name;
  int maxDynamicShared = 48 * 1024;
};

namespace {

std::mutex mutex;
CUctx_st primaryContext;
thread_local CUcontext current = nullptr;
bool initialized = false;
/// Allocations by base address: their sizes.
std::map<uint64_t, uint64_t> allocations;
std::vector<std::unique_ptr<CUmod_st>> modules;
std::vector<std::unique_ptr<CUfunc_st>> functions;

struct {
  int count = 0;
  uint64_t stream = 0;
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0}, shared = 0;
  std::string error;
} lastLaunch;
/// A failed device assertion corrupts the context, as on a GPU: every later
/// launch and synchronization returns it.
CUresult sticky = CUDA_SUCCESS;

int capability() {
  const char *env = std::getenv("TESSEL_FAKE_CUDA_CAPABILITY");
  return env && *env ? std::atoi(env) : 80;
}

int sharedOptIn() {
  return capability() >= 90 ? 227 * 1024 : capability() == 80 ? 163 * 1024
                                                               : 99 * 1024;
}

/// The allocation holding `address`: (base, size), or size 0.
std::pair<uint64_t, uint64_t> allocationOf(uint64_t address) {
  auto it = allocations.upper_bound(address);
  if (it == allocations.begin())
    return {0, 0};
  --it;
  if (address >= it->first + it->second)
    return {0, 0};
  return *it;
}

} // namespace

extern "C" {

CUresult cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
#define FAKE_NAME(code)                                                        \
  case code:                                                                   \
    *name = #code;                                                             \
    return CUDA_SUCCESS;
    FAKE_NAME(CUDA_SUCCESS)
    FAKE_NAME(CUDA_ERROR_INVALID_VALUE)
    FAKE_NAME(CUDA_ERROR_NOT_INITIALIZED)
    FAKE_NAME(CUDA_ERROR_INVALID_DEVICE)
    FAKE_NAME(CUDA_ERROR_INVALID_IMAGE)
    FAKE_NAME(CUDA_ERROR_INVALID_CONTEXT)
    FAKE_NAME(CUDA_ERROR_INVALID_PTX)
    FAKE_NAME(CUDA_ERROR_INVALID_HANDLE)
    FAKE_NAME(CUDA_ERROR_NOT_FOUND)
    FAKE_NAME(CUDA_ERROR_LAUNCH_FAILED)
    FAKE_NAME(CUDA_ERROR_NOT_SUPPORTED)
    FAKE_NAME(CUDA_ERROR_ASSERT)
#undef FAKE_NAME
  default:
    *name = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  switch (error) {
  case CUDA_ERROR_INVALID_VALUE:
    *text = "invalid argument";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_PTX:
    *text = "a PTX JIT compilation failed";
    return CUDA_SUCCESS;
  case CUDA_ERROR_LAUNCH_FAILED:
    *text = lastLaunch.error.c_str();
    return CUDA_SUCCESS;
  case CUDA_ERROR_NOT_SUPPORTED:
    *text = "operation not supported (the fake driver runs PTX only)";
    return CUDA_SUCCESS;
  case CUDA_ERROR_ASSERT:
    *text = "device-side assert triggered";
    return CUDA_SUCCESS;
  default:
    // Other codes: their names.
    return cuGetErrorName(error, text);
  }
}

CUresult cuInit(unsigned int flags) {
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  initialized = true;
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version) {
  *version = 13000;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  if (!initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                              CUdevice device) {
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = capability() / 10;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = capability() % 10;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = capability() >= 90 ? 132 : 108;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = sharedOptIn();
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
    *value = 65536;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    *value = 32;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
    *value = 0;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *context = &primaryContext;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *context) {
  *context = current;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext context) {
  current = context;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device) {
  if (!current)
    return CUDA_ERROR_INVALID_CONTEXT;
  *device = current->device;
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr *pointer, size_t bytes) {
  if (!current)
    return CUDA_ERROR_INVALID_CONTEXT;
  void *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(mutex);
  allocations[reinterpret_cast<uint64_t>(p)] = bytes;
  *pointer = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

CUresult cuMemFree(CUdeviceptr pointer) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!allocations.erase(pointer))
    return CUDA_ERROR_INVALID_VALUE;
  std::free(reinterpret_cast<void *>(pointer));
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD(CUdeviceptr to, const void *from, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  auto [base, size] = allocationOf(to);
  if (!size || to + bytes > base + size)
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(reinterpret_cast<void *>(to), from, bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH(void *to, CUdeviceptr from, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  auto [base, size] = allocationOf(from);
  if (!size || from + bytes > base + size)
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(to, reinterpret_cast<const void *>(from), bytes);
  return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                               CUdeviceptr pointer) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!allocationOf(pointer).second)
    return CUDA_ERROR_INVALID_VALUE; // what the driver says of pageable memory
  switch (attribute) {
  case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    *static_cast<CUdeviceptr *>(data) = pointer;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    *static_cast<unsigned *>(data) = CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  if (!current)
    return CUDA_ERROR_INVALID_CONTEXT;
  auto m = std::make_unique<CUmod_st>();
  m->context = current;
  const char *bytes = static_cast<const char *>(image);
  if (std::memcmp(bytes, "\x7f" "ELF", 4) == 0) {
    // Enough of the cubin to find names in: its section headers' end.
    const auto *header = reinterpret_cast<const unsigned char *>(bytes);
    uint64_t shoff, shnum, shentsize;
    std::memcpy(&shoff, header + 0x28, 8);
    shentsize = header[0x3a] | header[0x3b] << 8;
    shnum = header[0x3c] | header[0x3d] << 8;
    m->image.assign(bytes, shoff + shnum * shentsize);
  } else {
    m->image = bytes;
    try {
      m->ptx = std::make_unique<gpusim::Module>(gpusim::parsePTX(m->image));
    } catch (const gpusim::SimError &e) {
      lastLaunch.error = e.what();
      return CUDA_ERROR_INVALID_PTX;
    }
  }
  *module = m.get();
  std::lock_guard<std::mutex> lock(mutex);
  modules.push_back(std::move(m));
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) {
  if (!module)
    return CUDA_ERROR_INVALID_HANDLE;
  bool found = module->ptx ? module->ptx->find(name) != nullptr
                           : module->image.find(std::string(name) + '\0') !=
                                 std::string::npos;
  if (!found)
    return CUDA_ERROR_NOT_FOUND;
  auto f = std::make_unique<CUfunc_st>();
  f->module = module;
  f->name = name;
  *function = f.get();
  std::lock_guard<std::mutex> lock(mutex);
  functions.push_back(std::move(f));
  return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute,
                            int value) {
  if (!function)
    return CUDA_ERROR_INVALID_HANDLE;
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    return CUDA_ERROR_NOT_SUPPORTED;
  if (value < 0 || value > sharedOptIn())
    return CUDA_ERROR_INVALID_VALUE;
  function->maxDynamicShared = value;
  return CUDA_SUCCESS;
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type,
                                cuuint32_t rank, void *address,
                                const cuuint64_t *dims,
                                const cuuint64_t *strides,
                                const cuuint32_t *box,
                                const cuuint32_t *elementStrides,
                                CUtensorMapInterleave interleave,
                                CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion,
                                CUtensorMapFloatOOBfill fill) {
  // The driver's types in tensormap.replace's numbering (TensorMap.h).
  static const unsigned kTypes[] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 8, 11, 12};
  uint64_t at = reinterpret_cast<uint64_t>(address);
  if (!map || rank < 1 || rank > 5 || unsigned(type) > 12 || at % 16 ||
      interleave != CU_TENSOR_MAP_INTERLEAVE_NONE || unsigned(swizzle) > 3)
    return CUDA_ERROR_INVALID_VALUE;
  std::vector<uint64_t> d(dims, dims + rank), st(strides, strides + rank - 1);
  std::vector<uint32_t> b(box, box + rank), e(elementStrides, elementStrides + rank);
  for (uint64_t stride : st)
    if (stride % 16)
      return CUDA_ERROR_INVALID_VALUE;
  for (uint32_t size : b)
    if (size < 1 || size > 256)
      return CUDA_ERROR_INVALID_VALUE;
  static_assert(sizeof(CUtensorMap) == gpusim::kTensorMapBytes);
  gpusim::encodeTensorMap(reinterpret_cast<uint8_t *>(map), at, kTypes[type],
                          unsigned(swizzle),
                          fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
                          d, st, b, e);
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        CUstream stream, void **params, void **extra) {
  if (!f || f->module->context != current)
    return CUDA_ERROR_INVALID_HANDLE;
  if (sticky != CUDA_SUCCESS)
    return sticky;
  if (extra || !gx || !gy || !gz || gy > 65535 || gz > 65535 ||
      uint64_t(bx) * by * bz > 1024 || int(shared) > f->maxDynamicShared)
    return CUDA_ERROR_INVALID_VALUE;
  if (!f->module->ptx)
    return CUDA_ERROR_NOT_SUPPORTED;
  const gpusim::Kernel *kernel = f->module->ptx->find(f->name);
  std::vector<gpusim::LaunchArg> args(kernel->params.size());
  std::map<uint64_t, int> owners; // allocation base -> its first argument
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (size_t i = 0; i < args.size(); ++i) {
      const gpusim::Param &p = kernel->params[i];
      gpusim::LaunchArg &a = args[i];
      a.name = "argument " + std::to_string(i);
      if (p.size == gpusim::kTensorMapBytes) {
        // A tensor map (cuTensorMapEncodeTiled's): its address made relative
        // to the allocation it points into, which the simulator places.
        a.kind = gpusim::LaunchArg::Bytes;
        a.value.assign(static_cast<const uint8_t *>(params[i]),
                       static_cast<const uint8_t *>(params[i]) + p.size);
        uint32_t magic;
        uint64_t address;
        std::memcpy(&magic, a.value.data() + gpusim::tensormap::Magic, 4);
        std::memcpy(&address, a.value.data() + gpusim::tensormap::Address, 8);
        auto [base, size] = allocationOf(address);
        if (magic != gpusim::kTensorMapMagic || !size)
          return CUDA_ERROR_INVALID_VALUE;
        uint64_t offset = address - base;
        std::memcpy(a.value.data() + gpusim::tensormap::Address, &offset, 8);
        a.host = reinterpret_cast<void *>(base);
        a.bytes = size;
        a.addressAt = gpusim::tensormap::Address;
        continue;
      }
      if (p.size > 8)
        return CUDA_ERROR_NOT_SUPPORTED; // other .b8 arrays
      uint64_t bits = 0;
      std::memcpy(&bits, params[i], p.size);
      auto [base, size] = allocationOf(bits);
      if (p.isPointer && size) {
        a.kind = gpusim::LaunchArg::Buffer;
        a.offset = bits - base;
        auto [owner, isNew] = owners.emplace(base, int(i));
        if (!isNew) {
          a.shareWith = owner->second;
          continue;
        }
        a.host = reinterpret_cast<void *>(base);
        a.bytes = size;
        a.writeBack = true;
      } else if (p.type == gpusim::PType::F32) {
        float v;
        std::memcpy(&v, &bits, 4);
        a.kind = gpusim::LaunchArg::Float;
        a.f = v;
      } else if (p.type == gpusim::PType::F64) {
        std::memcpy(&a.f, &bits, 8);
        a.kind = gpusim::LaunchArg::Float;
      } else {
        a.kind = gpusim::LaunchArg::Int;
        a.i = int64_t(bits);
        a.isUnsigned = p.size == 8 && (bits >> 63);
      }
    }
  }
  gpusim::LaunchConfig config;
  config.grid[0] = gx;
  config.grid[1] = gy;
  config.grid[2] = gz;
  config.block[0] = bx;
  config.block[1] = by;
  config.block[2] = bz;
  config.dynamicSharedBytes = shared;
  ++lastLaunch.count;
  lastLaunch.stream = reinterpret_cast<uint64_t>(stream);
  lastLaunch.grid[0] = gx, lastLaunch.grid[1] = gy, lastLaunch.grid[2] = gz;
  lastLaunch.block[0] = bx, lastLaunch.block[1] = by, lastLaunch.block[2] = bz;
  lastLaunch.shared = shared;
  lastLaunch.error.clear();
  try {
    gpusim::launch(*f->module->ptx, f->name, config, args);
  } catch (const gpusim::DeviceAssertion &e) {
    // The launch itself succeeds; the assertion's message goes to stderr
    // and its error comes with the next synchronization, as on a GPU.
    lastLaunch.error = e.what();
    std::fprintf(stderr, "%s\n", e.what());
    std::fflush(stderr);
    sticky = CUDA_ERROR_ASSERT;
    return CUDA_SUCCESS;
  } catch (const gpusim::SimError &e) {
    lastLaunch.error = e.what();
    return CUDA_ERROR_LAUNCH_FAILED;
  }
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream) { return sticky; }

// Test hooks: the launches so far and the last one's configuration.
int tesselFakeCudaLaunchCount() { return lastLaunch.count; }
uint64_t tesselFakeCudaLastStream() { return lastLaunch.stream; }
unsigned tesselFakeCudaLastShared() { return lastLaunch.shared; }
/// grid[0..2], block[0..2] into `out` (6 values).
void tesselFakeCudaLastDims(unsigned *out) {
  for (int i = 0; i < 3; ++i) {
    out[i] = lastLaunch.grid[i];
    out[3 + i] = lastLaunch.block[i];
  }
}

} // extern "C"
