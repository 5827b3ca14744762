//===- LLVMErrors.h - Errors LLVM reports through its context ---*- C++ -*-===//
//
// LLVM's code generators report some errors in a kernel (inline assembly
// whose constraints a target cannot satisfy, say) through the LLVMContext's
// diagnostic handler, whose default prints them and ends the process. A
// backend installs this collector on its context instead and turns what it
// collected into a compile error.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_LLVMERRORS_H
#define TESSEL_SUPPORT_LLVMERRORS_H

#include <string>

namespace llvm {
class LLVMContext;
} // namespace llvm

namespace tessel {

class LLVMErrorCollector {
public:
  /// Collects the errors reported through `context` from now on (warnings
  /// and remarks are dropped).
  explicit LLVMErrorCollector(llvm::LLVMContext &context);
  /// The errors so far, one per line; empty when there were none.
  const std::string &errors() const { return text; }

private:
  std::string text;
};

} // namespace tessel

#endif // TESSEL_SUPPORT_LLVMERRORS_H
