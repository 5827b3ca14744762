//===- Passes.h - Conversion passes of Tessel -------------------*- C++ -*-===//
#ifndef TESSEL_CONVERSION_PASSES_H
#define TESSEL_CONVERSION_PASSES_H

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace tessel {

#define GEN_PASS_DECL
#include "tessel/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/Conversion/Passes.h.inc"

/// Name of the launch entry generated for kernel `kernelName`.
std::string cpuEntryName(llvm::StringRef kernelName);

} // namespace tessel

#endif // TESSEL_CONVERSION_PASSES_H
