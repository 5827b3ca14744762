//===- ObjectLoader.cpp - Loads kernel objects into the process -----------===//
#include "tessel/Target/CPU/ObjectLoader.h"
#include "tessel/Target/CPU/DebugRuntime.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Object/ObjectFile.h"
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
  // Tessel's runtime (print, assertions) lives in this library, whose symbols
  // the process's dynamic symbol table may not show (a Python extension is
  // loaded RTLD_LOCAL): defined by address.
  llvm::orc::SymbolMap runtime;
  for (auto [name, address] : runtimeSymbols())
    runtime[jit->mangleAndIntern(name)] = {
        llvm::orc::ExecutorAddr::fromPtr(address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  if (llvm::Error err =
          dylib->define(llvm::orc::absoluteSymbols(std::move(runtime)))) {
    error = llvm::toString(std::move(err));
    return nullptr;
  }
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

bool tessel::cpu::objectCalls(const std::string &object, const char *symbol) {
  auto file = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(object, "kernel"));
  if (!file) {
    llvm::consumeError(file.takeError());
    return false;
  }
  for (const llvm::object::SymbolRef &sym : (*file)->symbols()) {
    auto name = sym.getName();
    auto flags = sym.getFlags();
    if (!name || !flags) {
      if (!name)
        llvm::consumeError(name.takeError());
      if (!flags)
        llvm::consumeError(flags.takeError());
      continue;
    }
    if (*name == symbol && (*flags & llvm::object::SymbolRef::SF_Undefined))
      return true;
  }
  return false;
}
