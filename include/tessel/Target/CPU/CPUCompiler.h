//===- CPUCompiler.h - Tile IR to a native object for the host -*- C++ -*-===//
#ifndef TESSEL_TARGET_CPU_CPUCOMPILER_H
#define TESSEL_TARGET_CPU_CPUCOMPILER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <utility>
#include <vector>

namespace tessel::cpu {

struct CompileResult {
  std::string kernelName;
  std::string entryName;
  /// The arguments the kernel may store through (see writtenArguments).
  std::vector<unsigned> writes;
  /// Every stage's text in pipeline order: ttir, loops, llir, llvmir.
  std::vector<std::pair<std::string, std::string>> stages;
  /// The ELF object for the host CPU.
  std::string object;
  std::string targetTriple, targetCPU, targetFeatures;
};

/// Registers what the CPU pipeline needs (dialects, to-LLVM interfaces,
/// LLVM IR translations).
void registerCPUCompilerDialects(mlir::DialectRegistry &registry);

/// Tile-level cleanups, then the lowering to scalar loops.
void buildTileToLoopsPipeline(mlir::OpPassManager &pm);
/// Loops over scalars and memrefs to the LLVM dialect.
void buildLoopsToLLVMPipeline(mlir::OpPassManager &pm);

/// The host target the CPU compiler generates code for: triple, CPU name and
/// features (part of kernel cache keys: a cache shared between machines must
/// never hand out an illegal instruction).
std::string hostTargetDescription();

/// The x86/AArch64 model to compile for (ahead-of-time builds for machines
/// that are not this one); empty fields mean the host's.
struct CPUTarget {
  std::string cpu;      ///< e.g. "x86-64-v3", "skylake-avx512"
  std::string features; ///< LLVM feature string, e.g. "+avx2,-avx512f"
};

/// Compiles the one kernel in `module` (tile IR) for `target` (the host by
/// default). On failure, `error` holds the diagnostics.
mlir::LogicalResult compileModule(mlir::ModuleOp module, CompileResult &result,
                                  std::string &error,
                                  const CPUTarget &target = {});

} // namespace tessel::cpu

#endif // TESSEL_TARGET_CPU_CPUCOMPILER_H
