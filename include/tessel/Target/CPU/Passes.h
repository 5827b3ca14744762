//===- Passes.h - CPU target passes -----------------------------*- C++ -*-===//
#ifndef TESSEL_TARGET_CPU_PASSES_H
#define TESSEL_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace tessel::cpu {

#define GEN_PASS_DECL
#include "tessel/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/Target/CPU/Passes.h.inc"

} // namespace tessel::cpu

#endif // TESSEL_TARGET_CPU_PASSES_H
