//===- Passes.h - AMD-only passes -------------------------------*- C++ -*-===//
#ifndef TESSEL_AMD_PASSES_H
#define TESSEL_AMD_PASSES_H

#include "tessel/Dialect/TileGPU/IR/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Pass/Pass.h"

namespace tessel::amd {

#define GEN_PASS_DECL
#include "tessel/AMD/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/AMD/Passes.h.inc"

} // namespace tessel::amd

#endif // TESSEL_AMD_PASSES_H
