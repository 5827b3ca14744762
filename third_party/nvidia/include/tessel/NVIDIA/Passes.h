//===- Passes.h - NVIDIA-only passes ----------------------------*- C++ -*-===//
#ifndef TESSEL_NVIDIA_PASSES_H
#define TESSEL_NVIDIA_PASSES_H

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Pass/Pass.h"

namespace tessel::nvidia {

#define GEN_PASS_DECL
#include "tessel/NVIDIA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/NVIDIA/Passes.h.inc"

} // namespace tessel::nvidia

#endif // TESSEL_NVIDIA_PASSES_H
