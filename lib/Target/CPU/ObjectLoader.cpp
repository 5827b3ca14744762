//===- ObjectLoader.cpp - Loads kernel objects into the process -----------===//
#include "tessel/Target/CPU/ObjectLoader.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include <atomic>
#include <memory>
#include <mutex>

using namespace tessel::cpu;

namespace {
std::mutex jitMutex;

llvm::orc::LLJIT *getJIT(std::string &error) {
  static std::unique_ptr<llvm::orc::LLJIT> jit;
  static std::string initError;
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto created = llvm::orc::LLJITBuilder().create();
    if (!created) {
      initError = llvm::toString(created.takeError());
      return;
    }
    jit = std::move(*created);
  });
  error = initError;
  return jit.get();
}
} // namespace

CPUEntry tessel::cpu::loadCPUObject(const std::string &object,
                                        const std::string &entryName,
                                        std::string &error) {
  std::lock_guard<std::mutex> lock(jitMutex);
  llvm::orc::LLJIT *jit = getJIT(error);
  if (!jit)
    return nullptr;
  // One JITDylib per kernel: kernels may share symbol names.
  static std::atomic<uint64_t> counter{0};
  auto dylib = jit->createJITDylib("tessel_kernel_" + std::to_string(counter++));
  if (!dylib) {
    error = llvm::toString(dylib.takeError());
    return nullptr;
  }
  auto processSymbols =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          jit->getDataLayout().getGlobalPrefix());
  if (!processSymbols) {
    error = llvm::toString(processSymbols.takeError());
    return nullptr;
  }
  dylib->addGenerator(std::move(*processSymbols));
  if (llvm::Error err = jit->addObjectFile(
          *dylib, llvm::MemoryBuffer::getMemBufferCopy(object, entryName))) {
    error = llvm::toString(std::move(err));
    return nullptr;
  }
  auto symbol = jit->lookup(*dylib, entryName);
  if (!symbol) {
    error = llvm::toString(symbol.takeError());
    return nullptr;
  }
  return symbol->toPtr<CPUEntry>();
}
