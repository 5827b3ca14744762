//===- PTXCompiler.h - LLVM dialect to PTX and cubin ------------*- C++ -*-===//
#ifndef TESSEL_NVIDIA_PTXCOMPILER_H
#define TESSEL_NVIDIA_PTXCOMPILER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel::nvidia {

/// A module in the LLVM and NVVM dialects as LLVM IR (libdevice and the
/// LLVM bitcode `libraries` linked in where they are called, optimized at
/// O3) and as PTX for `arch` ("sm_80", "sm_90a").
llvm::Error translateToPTX(mlir::ModuleOp module, const std::string &arch,
                           bool enableFpFusion, std::string &llvmIR,
                           std::string &ptx,
                           const std::vector<std::string> &libraries = {});

/// The type of function `symbol` in the LLVM bitcode library at `path`
/// (libdevice for ""), as LLVM writes it ("float (float)"); nothing when the
/// library has no such function; an error when it cannot be read.
llvm::Expected<std::optional<std::string>>
libraryFunctionType(const std::string &path, const std::string &symbol);

/// What ptxas made of a kernel.
struct PtxasResult {
  std::string cubin;
  int registers = 0;
  int spillStoreBytes = 0, spillLoadBytes = 0;
  int staticSharedBytes = 0;
  std::string log; ///< ptxas -v's report
};

/// The ptxas to use: TESSEL_PTXAS_PATH, else /usr/local/cuda/bin/ptxas, else
/// ptxas on PATH; empty when there is none.
std::string ptxasPath();

/// Assembles `ptx` for `arch` with `ptxas -v` (and --maxrregcount when
/// maxnreg > 0).
llvm::Expected<PtxasResult> runPtxas(const std::string &ptxas,
                                     const std::string &ptx,
                                     const std::string &arch, int maxnreg);

} // namespace tessel::nvidia

#endif // TESSEL_NVIDIA_PTXCOMPILER_H
