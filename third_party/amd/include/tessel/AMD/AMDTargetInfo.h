//===- AMDTargetInfo.h - ROCDL for the per-thread lowering ------*- C++ -*-===//
#ifndef TESSEL_AMD_AMDTARGETINFO_H
#define TESSEL_AMD_AMDTARGETINFO_H

#include "tessel/Conversion/TileGPUToLLVM/AmdTargetHooks.h"
#include "tessel/Conversion/TileGPUToLLVM/TileGPUToLLVM.h"

#include <string>

namespace tessel::amd {

/// AMD's CDNA GPUs (wave64) for the target-neutral lowering: work-item and
/// work-group ids, the HSA dispatch packet for the grid's size, s_barrier
/// between workgroup fences, ds_bpermute for lane exchanges, LLVM's atomics
/// with AMDGPU's sync scopes, OCKL's printf and OCML's math; MFMA for dots.
class AMDTargetInfo : public gpu::GPUTargetInfo, public gpu::AmdTargetHooks {
public:
  explicit AMDTargetInfo(std::string chip) : chip(std::move(chip)) {}
  const gpu::AmdTargetHooks *amd() const override { return this; }
  int mfmaKWidth(gpu::MfmaInputs inputs) const override;
  int mfmaWideKWidth(gpu::MfmaInputs inputs) const override;
  mlir::Value mfma(mlir::OpBuilder &b, mlir::Location loc,
                   gpu::MfmaInputs inputs, int instr, mlir::Value a,
                   mlir::Value bv, mlir::Value acc) const override;
  mlir::Value bufferResource(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value base, int64_t range) const override;
  mlir::Value bufferLoad(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                         mlir::Value rsrc, mlir::Value offset) const override;
  void bufferStore(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                   mlir::Value rsrc, mlir::Value offset) const override;
  mlir::Value transposedLdsRead(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value ptr,
                                unsigned bits) const override;
  bool hasTransposedLdsReads() const override { return chip == "gfx950"; }
  mlir::Value threadId(mlir::OpBuilder &b, mlir::Location loc) const override;
  mlir::Value programId(mlir::OpBuilder &b, mlir::Location loc,
                        unsigned axis) const override;
  mlir::Value numPrograms(mlir::OpBuilder &b, mlir::Location loc,
                          unsigned axis) const override;
  mlir::Value ctaRank(mlir::OpBuilder &b, mlir::Location loc) const override;
  void barrier(mlir::OpBuilder &b, mlir::Location loc) const override;
  mlir::Value shuffleXor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value i32Value, int laneMask) const override;
  mlir::Value shuffleIdx(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value i32Value,
                         mlir::Value srcLane) const override;
  mlir::Value predicatedLoad(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Type type, mlir::Value ptr, mlir::Value pred,
                             mlir::Value other, bool isVolatile) const override;
  bool predicatedStore(mlir::OpBuilder &b, mlir::Location loc, mlir::Value ptr,
                       mlir::Value value, mlir::Value pred) const override;
  mlir::Value atomicRMW(mlir::OpBuilder &b, mlir::Location loc,
                        tile::AtomicRMWKind kind, mlir::Value ptr,
                        mlir::Value val, mlir::Value pred,
                        tile::MemSemantic sem,
                        tile::MemSyncScope scope) const override;
  mlir::Value atomicCAS(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value ptr, mlir::Value cmp, mlir::Value val,
                        mlir::Value pred, tile::MemSemantic sem,
                        tile::MemSyncScope scope) const override;
  unsigned sharedAddressSpace() const override { return 3; }
  void markKernel(mlir::Operation *func, int numThreads) const override;
  void printf(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef format,
              mlir::ValueRange args) const override;
  void assertFail(mlir::OpBuilder &b, mlir::Location loc,
                  llvm::StringRef message, llvm::StringRef file, int line,
                  llvm::StringRef function) const override;
  void populateMathPatterns(mlir::LLVMTypeConverter &converter,
                            mlir::RewritePatternSet &patterns) const override;
  void addLegalDialects(mlir::ConversionTarget &target) const override;

private:
  std::string chip; ///< gfx90a, gfx942, gfx950
};

} // namespace tessel::amd

#endif // TESSEL_AMD_AMDTARGETINFO_H
