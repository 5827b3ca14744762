//===- FakeHip.cpp - A HIP runtime for machines without an AMD GPU -------===//
//
// libtessel-fake-hip.so stands in for libamdhip64.so (TESSEL_LIBHIP_PATH) in
// python/test/test_hip_launcher.py. It runs nothing: it checks what the
// launcher hands it as the real runtime would (a code object for AMDGPU, a
// kernel it holds, one kernelParams entry per explicit argument) and lays
// the arguments out as the HIP runtime does, at the offsets and sizes of the
// kernel's HSA metadata (the code object's NT_AMDGPU_METADATA note). Each
// launch appends a line to TESSEL_FAKE_HIP_LOG:
//   <kernel> grid=X,Y,Z block=X,Y,Z shared=N stream=0x... kernarg=<hex>
// TESSEL_FAKE_HIP_DEVICES sets the number of GPUs (default 1).
//
//===----------------------------------------------------------------------===//
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

enum : int {
  kSuccess = 0,
  kInvalidValue = 1,
  kInvalidImage = 200,
  kNotFound = 500,
};

struct Arg {
  uint64_t offset = 0, size = 0;
  bool hidden = false;
};

struct Kernel {
  std::string name;
  std::vector<Arg> args;
};

struct Module {
  std::map<std::string, Kernel> kernels;
};

std::mutex mutex;

/// The kernels of a code object, from its HSA metadata note.
bool readKernels(llvm::StringRef image, Module &module) {
  auto buffer = llvm::MemoryBuffer::getMemBuffer(image, "", false);
  auto object = llvm::object::ELF64LEObjectFile::create(*buffer);
  if (!object) {
    llvm::consumeError(object.takeError());
    return false;
  }
  const auto &elf = object->getELFFile();
  if (elf.getHeader().e_machine != llvm::ELF::EM_AMDGPU)
    return false;
  auto sections = elf.sections();
  if (!sections) {
    llvm::consumeError(sections.takeError());
    return false;
  }
  for (const auto &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE)
      continue;
    llvm::Error err = llvm::Error::success();
    for (const auto &note : elf.notes(section, err)) {
      if (note.getName() != "AMDGPU" ||
          note.getType() != llvm::ELF::NT_AMDGPU_METADATA)
        continue;
      llvm::msgpack::Document doc;
      auto desc = note.getDesc(section.sh_addralign);
      if (!doc.readFromBlob(
              llvm::StringRef(reinterpret_cast<const char *>(desc.data()),
                              desc.size()),
              false))
        return false;
      auto &root = doc.getRoot().getMap(true);
      for (auto &kernelNode : root["amdhsa.kernels"].getArray(true)) {
        auto &k = kernelNode.getMap(true);
        Kernel kernel;
        kernel.name = k[".name"].getString().str();
        for (auto &argNode : k[".args"].getArray(true)) {
          auto &a = argNode.getMap(true);
          Arg arg;
          arg.offset = a[".offset"].getUInt();
          arg.size = a[".size"].getUInt();
          arg.hidden = a[".value_kind"].getString().starts_with("hidden_");
          kernel.args.push_back(arg);
        }
        module.kernels[kernel.name] = kernel;
      }
    }
    llvm::consumeError(std::move(err));
  }
  return !module.kernels.empty();
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) int hipInit(unsigned) {
  return kSuccess;
}

__attribute__((visibility("default"))) int hipGetDeviceCount(int *count) {
  const char *env = std::getenv("TESSEL_FAKE_HIP_DEVICES");
  *count = env ? std::atoi(env) : 1;
  return kSuccess;
}

__attribute__((visibility("default"))) int hipGetDevice(int *device) {
  *device = 0;
  return kSuccess;
}

__attribute__((visibility("default"))) int hipModuleLoadData(void **module,
                                                             const void *image) {
  const char *bytes = static_cast<const char *>(image);
  if (!bytes || std::memcmp(bytes, "\x7f" "ELF", 4) != 0)
    return kInvalidImage;
  // The ELF file's size from its section header table (at its end).
  uint64_t shoff, shentsize, shnum;
  std::memcpy(&shoff, bytes + 0x28, 8);
  shentsize = *reinterpret_cast<const uint16_t *>(bytes + 0x3a);
  shnum = *reinterpret_cast<const uint16_t *>(bytes + 0x3c);
  auto m = std::make_unique<Module>();
  if (!readKernels(llvm::StringRef(bytes, shoff + shentsize * shnum), *m))
    return kInvalidImage;
  std::lock_guard<std::mutex> lock(mutex);
  *module = m.release(); // lives as long as the process, as real modules do
  return kSuccess;
}

__attribute__((visibility("default"))) int
hipModuleGetFunction(void **function, void *module, const char *name) {
  auto *m = static_cast<Module *>(module);
  auto it = m ? m->kernels.find(name) : decltype(m->kernels.end())();
  if (!m || it == m->kernels.end())
    return kNotFound;
  *function = &it->second;
  return kSuccess;
}

__attribute__((visibility("default"))) int
hipModuleLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                      unsigned bx, unsigned by, unsigned bz, unsigned shared,
                      void *stream, void **params, void **extra) {
  auto *kernel = static_cast<Kernel *>(function);
  if (!kernel || !params || extra || !gx || !gy || !gz || bx * by * bz == 0 ||
      bx * by * bz > 1024)
    return kInvalidValue;
  std::vector<uint8_t> kernarg;
  size_t explicitArg = 0;
  for (const Arg &arg : kernel->args) {
    if (arg.hidden)
      continue;
    if (kernarg.size() < arg.offset + arg.size)
      kernarg.resize(arg.offset + arg.size);
    std::memcpy(kernarg.data() + arg.offset, params[explicitArg++], arg.size);
  }
  std::string hex;
  char digits[3];
  for (uint8_t byte : kernarg) {
    std::snprintf(digits, sizeof digits, "%02x", byte);
    hex += digits;
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (const char *path = std::getenv("TESSEL_FAKE_HIP_LOG"))
    if (FILE *log = std::fopen(path, "a")) {
      std::fprintf(log, "%s grid=%u,%u,%u block=%u,%u,%u shared=%u stream=%p kernarg=%s\n",
                   kernel->name.c_str(), gx, gy, gz, bx, by, bz, shared,
                   stream, hex.c_str());
      std::fclose(log);
    }
  return kSuccess;
}

__attribute__((visibility("default"))) int hipStreamSynchronize(void *) {
  return kSuccess;
}

__attribute__((visibility("default"))) const char *hipGetErrorName(int error) {
  switch (error) {
  case kSuccess: return "hipSuccess";
  case kInvalidValue: return "hipErrorInvalidValue";
  case kInvalidImage: return "hipErrorInvalidImage";
  case kNotFound: return "hipErrorNotFound";
  default: return "hipErrorUnknown";
  }
}

__attribute__((visibility("default"))) const char *hipGetErrorString(int) {
  return "reported by Tessel's fake HIP runtime";
}

} // extern "C"
