//===- LLVMOptions.cpp - LLVM's process-wide options ----------------------===//

#include "tessel/Support/LLVMOptions.h"

#include "llvm/Support/CommandLine.h"

using namespace tessel;

std::unique_lock<std::mutex> tessel::lockLLVMOptions() {
  static std::mutex mutex;
  return std::unique_lock<std::mutex>(mutex);
}

bool tessel::setLLVMOption(llvm::StringRef name, bool value) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  if (it == options.end())
    return false;
  // LLVM is built without RTTI: the caller names a boolean option.
  static_cast<llvm::cl::opt<bool> *>(it->second)->setValue(value);
  return true;
}
