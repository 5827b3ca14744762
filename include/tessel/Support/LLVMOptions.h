//===- LLVMOptions.h - LLVM's process-wide options --------------*- C++ -*-===//
//
// LLVM's command-line options (cl::opt) are process-wide: a target machine
// reads some of them when it is made, and LLD, run in this process, resets
// every one of them to its default on each link. Both happen under one lock:
// a backend sets the options it needs and makes its target machine holding
// it, and a link holds it too, so neither sees the other's state.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_LLVMOPTIONS_H
#define TESSEL_SUPPORT_LLVMOPTIONS_H

#include "llvm/ADT/StringRef.h"

#include <mutex>

namespace tessel {

/// Held while LLVM's options are set and read (a target machine made) or
/// reset (an LLD link).
[[nodiscard]] std::unique_lock<std::mutex> lockLLVMOptions();

/// Sets LLVM's option `name`, which must be a boolean one; false where this
/// LLVM has no such option. Call it holding lockLLVMOptions().
bool setLLVMOption(llvm::StringRef name, bool value);

} // namespace tessel

#endif // TESSEL_SUPPORT_LLVMOPTIONS_H
