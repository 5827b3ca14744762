//===- CPUCompiler.h - Tile IR to a native object for a CPU -----*- C++ -*-===//
#ifndef TESSEL_TARGET_CPU_CPUCOMPILER_H
#define TESSEL_TARGET_CPU_CPUCOMPILER_H

#include "tessel/Runtime/CacheEntry.h"
#include "tessel/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace tessel::cpu {

/// Registers what the CPU pipeline needs (dialects, to-LLVM interfaces,
/// LLVM IR translations).
void registerCPUCompilerDialects(mlir::DialectRegistry &registry);

/// The CPU lowering after the target-independent tile pipeline: tile IR to
/// scalar loops over memrefs.
void buildTileToLoopsPipeline(mlir::OpPassManager &pm);
/// Loops over scalars and memrefs to the LLVM dialect; dots on AVX512-BF16's
/// and AVX512-VNNI's dot-product instructions, and exp's scaling on
/// AVX-512's vscalefps, where the CPU code is generated for has them.
void buildLoopsToLLVMPipeline(mlir::OpPassManager &pm,
                              bool bf16DotProduct = false,
                              bool int8DotProduct = false, bool scalef = false);

/// The CPU model code is generated for: empty fields mean the host's.
struct CPUModel {
  std::string cpu;      ///< e.g. "x86-64-v3", "skylake-avx512"
  std::string features; ///< LLVM feature string, e.g. "+avx2,-avx512f"
};

/// Triple, CPU name and features of `model` (part of kernel cache keys: a
/// cache shared between machines must never hand out an illegal
/// instruction).
std::string describeModel(const CPUModel &model);
/// Whether code for `model` runs on this machine (its features are a subset
/// of the host's).
bool runsOnHost(const CPUModel &model);

/// Compiles the one kernel in `module` (tile IR) for `model` with
/// `options` into `result` (every field but the target's name and options).
llvm::Error compileModule(mlir::ModuleOp module, const CPUModel &model,
                          const target::CompileOptions &options,
                          runtime::CacheEntry &result);

} // namespace tessel::cpu

#endif // TESSEL_TARGET_CPU_CPUCOMPILER_H
