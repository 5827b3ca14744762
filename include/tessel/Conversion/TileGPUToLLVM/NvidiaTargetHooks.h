//===- NvidiaTargetHooks.h - NVIDIA's units for the lowering ----*- C++ -*-===//
//
// What only NVIDIA targets have: mma.sync and warpgroup MMA (wgmma), 8-bit
// float and tf32 conversions, mbarriers and the tensor-map copy engine
// (TMA), cp.async, ldmatrix and stmatrix. The NVIDIA backend implements them
// (third_party/nvidia); lowerings reach them through
// GPUTargetInfo::nvidia(), which is null on other vendors' targets.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CONVERSION_TILEGPUTOLLVM_NVIDIATARGETHOOKS_H
#define TESSEL_CONVERSION_TILEGPUTOLLVM_NVIDIATARGETHOOKS_H

#include "tessel/Dialect/TileGPU/IR/MmaInputs.h"

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

namespace tessel::gpu {

class NvidiaTargetHooks {
public:
  virtual ~NvidiaTargetHooks();
  /// Whether the target has warp-wide 16x8x16 matrix multiply-accumulate
  /// (NVIDIA mma.sync m16n8k16) for fp16/bf16 into fp32.
  virtual bool hasMma16816() const = 0;
  /// One warp's D = A * B + C on a 16x8x16 tile: `a` (4 x i32) and `b`
  /// (2 x i32) hold pairs of fp16 or bf16, `c` 4 x f32, in the PTX ISA's
  /// m16n8k16 fragment order; returns D's 4 x f32.
  virtual llvm::SmallVector<mlir::Value>
  mma16816(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange a,
           mlir::ValueRange bv, mlir::ValueRange c, bool bf16) const = 0;
  /// One warp's D = A * B + C on mma.sync m16n8kK for tf32 (K = 8), int8 or
  /// 8-bit float (K = 32) inputs: `a` 4 and `b` 2 x i32 in the PTX ISA's
  /// fragment order, each a tf32 value's bits (roundToTF32) or four 8-bit
  /// values (the first in the low byte); `c` 4 x f32 (tf32, fp8) or i32
  /// (int8, sums wrap). `fp8Types` are A's and B's element types (e4m3 or
  /// e5m2) for FP8. Returns D's 4 values.
  virtual llvm::SmallVector<mlir::Value>
  mmaSync(mlir::OpBuilder &b, mlir::Location loc, tilegpu::MmaInputs inputs,
          mlir::ValueRange a, mlir::ValueRange bv, mlir::ValueRange c,
          mlir::TypeRange fp8Types = {}) const = 0;
  /// Conversions of 8-bit floats two at a time, where tile-expand-fp8 left
  /// them to the target (NVIDIA sm_89 and newer): fp32 `x0`, `x1` rounded to
  /// `fp8Type` (nearest even, saturating to the largest finite value, NaN
  /// 0x7F) as two i8; two i8 holding `fp8Type` values widened to f16.
  virtual std::pair<mlir::Value, mlir::Value>
  roundToFP8x2(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x0,
               mlir::Value x1, mlir::Type fp8Type) const = 0;
  virtual std::pair<mlir::Value, mlir::Value>
  widenFP8x2(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x0,
             mlir::Value x1, mlir::Type fp8Type) const = 0;
  /// The bits (i32) of f32 `v` rounded to tf32, to nearest with ties away
  /// from zero; the low 13 bits are zero.
  virtual mlir::Value roundToTF32(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value v) const = 0;
  /// Whether the target has warpgroup MMA reading its operands from shared
  /// memory (NVIDIA sm_90a wgmma.mma_async), which dots marked
  /// `tilegpu.wgmma` use.
  virtual bool hasWarpgroupMma() const = 0;
  /// The 64-bit descriptor of an operand tile in shared memory at byte
  /// `sharedAddress` (i32, in the shared address space) with a
  /// `swizzleBytes` (32, 64 or 128) swizzle: K-major, its 8-row groups
  /// `strideBytes` apart (`leadingBytes` unused); MN-major, its swizzle atoms
  /// `leadingBytes` apart along M or N and `strideBytes` along K.
  virtual mlir::Value warpgroupMmaDescriptor(mlir::OpBuilder &b,
                                             mlir::Location loc,
                                             mlir::Value sharedAddress,
                                             int64_t leadingBytes,
                                             int64_t strideBytes,
                                             int swizzleBytes) const = 0;
  /// Makes this thread's generic writes to shared memory visible to the
  /// warpgroup MMA's reads (which go through another proxy); a barrier after
  /// it publishes every thread's.
  virtual void fenceSharedForWarpgroupMma(mlir::OpBuilder &b,
                                          mlir::Location loc) const = 0;
  /// Orders the warpgroup's register accesses before the MMAs that follow.
  virtual void warpgroupMmaFence(mlir::OpBuilder &b,
                                 mlir::Location loc) const = 0;
  /// Starts D = A * B + D on a 64 x n x K tile of the warpgroup, A and B
  /// through descriptors, of element types `aType` and `bType` (the tile
  /// types: fp16 or bf16 both, K 16; i8 both or 8-bit floats, K 32), A
  /// K-major or, with `aMNMajor` (16-bit only), M-major, B K-major or, with
  /// `bMNMajor` (16-bit only), N-major; `acc` is this thread's n/2
  /// accumulators (f32, or i32 for i8) in the PTX ISA's order. Returns the
  /// accumulators the MMA will write: read them only after
  /// warpgroupMmaWait.
  virtual llvm::SmallVector<mlir::Value>
  warpgroupMma(mlir::OpBuilder &b, mlir::Location loc, mlir::Value descA,
               mlir::Value descB, mlir::ValueRange acc, int n, mlir::Type aType,
               mlir::Type bType, bool aMNMajor, bool bMNMajor) const = 0;
  /// The same with A from registers: `aRegs` the warp's 4 i32 of its 16
  /// rows (the m16n8k16 A fragment of the PTX ISA, pairs along K).
  virtual llvm::SmallVector<mlir::Value>
  warpgroupMmaRegisterA(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::ValueRange aRegs, mlir::Value descB,
                        mlir::ValueRange acc, int n, bool bf16,
                        bool bMNMajor) const = 0;
  /// Closes a group of the warpgroup's MMAs: those started since the last.
  virtual void warpgroupMmaCommit(mlir::OpBuilder &b,
                                  mlir::Location loc) const = 0;
  /// Waits until at most `pending` of the warpgroup's committed groups of
  /// MMAs are in flight; returns `values` (accumulators of the groups
  /// retired, f32 or i32) as they are after the wait, so that nothing reads
  /// them earlier.
  virtual llvm::SmallVector<mlir::Value>
  warpgroupMmaWait(mlir::OpBuilder &b, mlir::Location loc,
                   mlir::ValueRange values, int pending) const = 0;
  /// Whether the target copies blocks of tensors described by tensor maps
  /// into shared memory (NVIDIA TMA, sm_90 and later: tilegpu.tma_load).
  virtual bool hasTensorMaps() const = 0;
  /// Initializes the mbarrier at `barrier` (a shared pointer) for
  /// `arrivals` arrivals per phase, where `pred` holds; invalidates it
  /// (before its bytes are used for anything else).
  virtual void mbarrierInit(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value barrier, mlir::Value pred,
                            int32_t arrivals) const = 0;
  virtual void mbarrierInval(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value barrier, mlir::Value pred) const = 0;
  /// Where `pred` holds: arrives on `barrier` expecting `bytes` and starts
  /// copying the block of the tensor map at `map` (a generic pointer) at
  /// `coords` (i32, innermost dimension first) into shared memory at `dst`,
  /// whose landing completes the barrier's phase.
  virtual void tensorMapLoad(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value dst, mlir::Value map,
                             mlir::ValueRange coords, mlir::Value barrier,
                             int64_t bytes, mlir::Value pred) const = 0;
  /// Where `pred` holds: has the copy engine store the block at `src`
  /// (shared memory) to the block of the tensor map at `map` at `coords`
  /// (innermost first), elements outside the array not written, and waits
  /// until the store is complete (its writes visible, `src` free).
  virtual void tensorMapStore(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value map, mlir::ValueRange coords,
                              mlir::Value src, mlir::Value pred) const = 0;
  /// Orders this thread's earlier generic accesses (shared and global
  /// memory) before later accesses of the copy engine; a barrier after it
  /// orders every thread's.
  virtual void fenceAsyncProxy(mlir::OpBuilder &b, mlir::Location loc) const = 0;
  /// Waits until the phase of parity `phase` (i32, 0 or 1) of `barrier`
  /// completed.
  virtual void mbarrierWait(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value barrier, mlir::Value phase) const = 0;
  /// Whether the target copies global memory to shared memory without
  /// registers, asynchronously (NVIDIA cp.async, sm_80 and later).
  virtual bool hasAsyncCopy() const = 0;
  /// Starts copying `bytes` (4, 8 or 16) from `globalPtr` to `sharedPtr`;
  /// only the first `srcBytes` (i32, null: all) are read, the rest of the
  /// destination becomes zero.
  virtual void asyncCopy(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value sharedPtr, mlir::Value globalPtr,
                         int bytes, mlir::Value srcBytes) const = 0;
  /// Closes the group of this thread's async copies started since the last.
  virtual void asyncCommit(mlir::OpBuilder &b, mlir::Location loc) const = 0;
  /// Waits until at most `pending` of this thread's groups are in flight.
  virtual void asyncWait(mlir::OpBuilder &b, mlir::Location loc,
                         int pending) const = 0;
  /// The warp's collective load of `count` (1, 2 or 4) 8x8 matrices of
  /// 16-bit elements from shared memory (ldmatrix): lane i gives the address
  /// of row i % 8 of matrix i / 8; returns this lane's `count` i32, each
  /// the pair of elements (row lane / 4, columns 2 (lane % 4) and the next)
  /// of one matrix, or with `transpose` of its transpose.
  virtual llvm::SmallVector<mlir::Value>
  loadMatrix(mlir::OpBuilder &b, mlir::Location loc, mlir::Value sharedPtr,
             int count, bool transpose) const = 0;
  /// Whether the target has storeMatrix (NVIDIA stmatrix, sm_90 and later).
  virtual bool hasStoreMatrix() const = 0;
  /// The warp's collective store of `words.size()` (1, 2 or 4) 8x8 matrices
  /// of 16-bit elements to shared memory (stmatrix): lane i gives the
  /// address of row i % 8 of matrix i / 8; words[j] is this lane's pair of
  /// elements (row lane / 4, columns 2 (lane % 4) and the next) of matrix j.
  virtual void storeMatrix(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value sharedPtr,
                           mlir::ValueRange words) const = 0;
};

} // namespace tessel::gpu

#endif // TESSEL_CONVERSION_TILEGPUTOLLVM_NVIDIATARGETHOOKS_H
