//===- HSACOCompiler.h - LLVM dialect to AMDGCN and hsaco -------*- C++ -*-===//
#ifndef TESSEL_AMD_HSACOCOMPILER_H
#define TESSEL_AMD_HSACOCOMPILER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <string>

namespace tessel::amd {

/// What LLVM's AMDGPU backend made of a kernel.
struct HsacoResult {
  std::string llvmIR;   ///< after linking the device libraries and O3
  std::string assembly; ///< AMDGCN, with the backend's resource comments
  std::string hsaco;    ///< the code object, linked by LLD in this process
  /// Registers per work-item: VGPRs (with AGPRs, where the chip has one file
  /// of both: gfx90a and newer), AGPRs, SGPRs.
  int vgprs = 0, agprs = 0, sgprs = 0;
  int scratchBytes = 0; ///< private memory per work-item (spills)
  int ldsBytes = 0;     ///< static LDS (the kernel's shared memory is dynamic)
};

/// The ROCm device libraries' folder: TESSEL_ROCM_DEVICE_LIBS, else
/// Debian's rocm-device-libs; empty when neither holds ocml.bc.
std::string deviceLibsPath();

/// The bytes of a device library (ocml.bc, ockl.bc) of that folder, read
/// once per process.
llvm::Expected<llvm::MemoryBufferRef> deviceLibrary(const std::string &name);

/// Compiles a module in the LLVM and ROCDL dialects for `chip` (gfx90a,
/// gfx942, gfx950): LLVM IR with OCML and OCKL linked where called, O3, the
/// AMDGPU backend, then LLD's ELF linker in this process for the hsaco.
llvm::Expected<HsacoResult> translateToHSACO(mlir::ModuleOp module,
                                             const std::string &chip,
                                             bool enableFpFusion);

} // namespace tessel::amd

#endif // TESSEL_AMD_HSACOCOMPILER_H
