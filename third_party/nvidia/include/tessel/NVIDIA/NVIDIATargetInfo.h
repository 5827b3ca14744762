//===- NVIDIATargetInfo.h - NVVM for the per-thread lowering ----*- C++ -*-===//
#ifndef TESSEL_NVIDIA_NVIDIATARGETINFO_H
#define TESSEL_NVIDIA_NVIDIATARGETINFO_H

#include "tessel/Conversion/TileGPUToLLVM/NvidiaTargetHooks.h"
#include "tessel/Conversion/TileGPUToLLVM/TileGPUToLLVM.h"

namespace tessel::nvidia {

/// Special registers, bar.sync, shfl.sync.bfly, mma.sync, wgmma and
/// libdevice, as NVVM ops. With `numCtas` > 1 a program is a thread block
/// cluster of that many CTAs along x: its id is the cluster's.
class NVIDIATargetInfo : public gpu::GPUTargetInfo,
                         public gpu::NvidiaTargetHooks {
public:
  explicit NVIDIATargetInfo(int numCtas = 1, int computeCapability = 80)
      : numCtas(numCtas), computeCapability(computeCapability) {}
  const gpu::NvidiaTargetHooks *nvidia() const override { return this; }
  mlir::Value threadId(mlir::OpBuilder &b, mlir::Location loc) const override;
  mlir::Value programId(mlir::OpBuilder &b, mlir::Location loc,
                        unsigned axis) const override;
  mlir::Value numPrograms(mlir::OpBuilder &b, mlir::Location loc,
                          unsigned axis) const override;
  mlir::Value ctaRank(mlir::OpBuilder &b, mlir::Location loc) const override;
  void barrier(mlir::OpBuilder &b, mlir::Location loc) const override;
  mlir::Value shuffleIdx(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value i32Value,
                         mlir::Value srcLane) const override;
  mlir::Value shuffleXor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value i32Value, int laneMask) const override;
  bool hasMma16816() const override { return true; }
  llvm::SmallVector<mlir::Value> mma16816(mlir::OpBuilder &b,
                                          mlir::Location loc, mlir::ValueRange a,
                                          mlir::ValueRange bv, mlir::ValueRange c,
                                          bool bf16) const override;
  llvm::SmallVector<mlir::Value> mmaSync(mlir::OpBuilder &b, mlir::Location loc,
                                         tilegpu::MmaInputs inputs,
                                         mlir::ValueRange a, mlir::ValueRange bv,
                                         mlir::ValueRange c,
                                         mlir::TypeRange fp8Types) const override;
  std::pair<mlir::Value, mlir::Value>
  roundToFP8x2(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x0,
               mlir::Value x1, mlir::Type fp8Type) const override;
  std::pair<mlir::Value, mlir::Value>
  widenFP8x2(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x0,
             mlir::Value x1, mlir::Type fp8Type) const override;
  mlir::Value roundToTF32(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value v) const override;
  bool hasWarpgroupMma() const override { return true; }
  mlir::Value warpgroupMmaDescriptor(mlir::OpBuilder &b, mlir::Location loc,
                                     mlir::Value sharedAddress,
                                     int64_t leadingBytes, int64_t strideBytes,
                                     int swizzleBytes) const override;
  void fenceSharedForWarpgroupMma(mlir::OpBuilder &b,
                                  mlir::Location loc) const override;
  void warpgroupMmaFence(mlir::OpBuilder &b, mlir::Location loc) const override;
  llvm::SmallVector<mlir::Value>
  warpgroupMmaRegisterA(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::ValueRange aRegs, mlir::Value descB,
                        mlir::ValueRange acc, int n, bool bf16,
                        bool bMNMajor) const override;
  llvm::SmallVector<mlir::Value>
  warpgroupMma(mlir::OpBuilder &b, mlir::Location loc, mlir::Value descA,
               mlir::Value descB, mlir::ValueRange acc, int n, mlir::Type aType,
               mlir::Type bType, bool aMNMajor, bool bMNMajor) const override;
  void warpgroupMmaCommit(mlir::OpBuilder &b,
                          mlir::Location loc) const override;
  llvm::SmallVector<mlir::Value>
  warpgroupMmaWait(mlir::OpBuilder &b, mlir::Location loc,
                   mlir::ValueRange values, int pending) const override;
  bool hasTensorMaps() const override { return true; }
  void mbarrierInit(mlir::OpBuilder &b, mlir::Location loc, mlir::Value barrier,
                    mlir::Value pred, int32_t arrivals) const override;
  void mbarrierInval(mlir::OpBuilder &b, mlir::Location loc, mlir::Value barrier,
                     mlir::Value pred) const override;
  void tensorMapLoad(mlir::OpBuilder &b, mlir::Location loc, mlir::Value dst,
                     mlir::Value map, mlir::ValueRange coords,
                     mlir::Value barrier, int64_t bytes,
                     mlir::Value pred) const override;
  void mbarrierWait(mlir::OpBuilder &b, mlir::Location loc, mlir::Value barrier,
                    mlir::Value phase) const override;
  void fenceAsyncProxy(mlir::OpBuilder &b, mlir::Location loc) const override;
  void tensorMapStore(mlir::OpBuilder &b, mlir::Location loc, mlir::Value map,
                      mlir::ValueRange coords, mlir::Value src,
                      mlir::Value pred) const override;
  bool hasAsyncCopy() const override { return true; }
  void asyncCopy(mlir::OpBuilder &b, mlir::Location loc, mlir::Value sharedPtr,
                 mlir::Value globalPtr, int bytes,
                 mlir::Value srcBytes) const override;
  void asyncCommit(mlir::OpBuilder &b, mlir::Location loc) const override;
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
  void asyncWait(mlir::OpBuilder &b, mlir::Location loc,
                 int pending) const override;
  llvm::SmallVector<mlir::Value> loadMatrix(mlir::OpBuilder &b,
                                            mlir::Location loc,
                                            mlir::Value sharedPtr, int count,
                                            bool transpose) const override;
  bool hasStoreMatrix() const override { return computeCapability >= 90; }
  void storeMatrix(mlir::OpBuilder &b, mlir::Location loc,
                   mlir::Value sharedPtr,
                   mlir::ValueRange words) const override;
  unsigned sharedAddressSpace() const override { return 3; }
  void printf(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef format,
              mlir::ValueRange args) const override;
  void assertFail(mlir::OpBuilder &b, mlir::Location loc,
                  llvm::StringRef message, llvm::StringRef file, int line,
                  llvm::StringRef function) const override;
  void markKernel(mlir::Operation *func, int numThreads) const override;
  void populateMathPatterns(mlir::LLVMTypeConverter &converter,
                            mlir::RewritePatternSet &patterns) const override;
  void addLegalDialects(mlir::ConversionTarget &target) const override;

private:
  int numCtas;
  int computeCapability;
};

} // namespace tessel::nvidia

#endif // TESSEL_NVIDIA_NVIDIATARGETINFO_H
