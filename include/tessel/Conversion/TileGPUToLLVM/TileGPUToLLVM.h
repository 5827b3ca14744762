//===- TileGPUToLLVM.h - Per-thread code from layouts -----------*- C++ -*-===//
//
// Lowers tile IR whose tensors carry tilegpu layouts to the LLVM dialect, one
// thread's view: a tensor becomes the values of its registers. What differs
// between GPU vendors (special registers, barriers, shuffles, kernel
// attributes) comes from a GPUTargetInfo that the vendor's folder under
// third_party implements; NVIDIA's matrix units, async copies and TMA from
// its NvidiaTargetHooks (NvidiaTargetHooks.h).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CONVERSION_TILEGPUTOLLVM_TILEGPUTOLLVM_H
#define TESSEL_CONVERSION_TILEGPUTOLLVM_TILEGPUTOLLVM_H

#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class ConversionTarget;
class LLVMTypeConverter;
} // namespace mlir

namespace tessel::gpu {

class AmdTargetHooks;
class NvidiaTargetHooks;

/// What the per-thread lowering asks of every GPU target: its thread and
/// program ids, barriers, warp shuffles, global loads, stores and atomics,
/// shared memory's address space, kernel attributes, printf and assert, and
/// math. A vendor's own units (NVIDIA's tensor cores, async copies and TMA)
/// sit behind a hooks object of that vendor's, which only its targets have.
class GPUTargetInfo {
public:
  virtual ~GPUTargetInfo();
  /// NVIDIA's matrix units, async copies and tensor maps; null on targets
  /// that are not NVIDIA's.
  virtual const NvidiaTargetHooks *nvidia() const { return nullptr; }
  /// AMD's matrix cores; null on targets that are not AMD's.
  virtual const AmdTargetHooks *amd() const { return nullptr; }
  /// The thread's index in its program (x only: programs are 1-D).
  virtual mlir::Value threadId(mlir::OpBuilder &b, mlir::Location loc) const = 0;
  virtual mlir::Value programId(mlir::OpBuilder &b, mlir::Location loc,
                                unsigned axis) const = 0;
  virtual mlir::Value numPrograms(mlir::OpBuilder &b, mlir::Location loc,
                                  unsigned axis) const = 0;
  /// The index (i32) of this CTA among those running its program
  /// (tile.get_cta_rank).
  virtual mlir::Value ctaRank(mlir::OpBuilder &b, mlir::Location loc) const = 0;
  /// A barrier for all threads of the program (shared memory visible).
  virtual void barrier(mlir::OpBuilder &b, mlir::Location loc) const = 0;
  /// The i32 value of lane (lane ^ laneMask) of the warp.
  virtual mlir::Value shuffleXor(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value i32Value, int laneMask) const = 0;
  /// The i32 value of lane `srcLane` (i32, computed by each lane) of the
  /// warp.
  virtual mlir::Value shuffleIdx(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value i32Value,
                                 mlir::Value srcLane) const = 0;
  /// Loads a `type` (2, 4, 8 or 16 bytes of numbers: a scalar or a vector)
  /// from global memory at `ptr` where `pred` holds, `other` where it does
  /// not, without a branch; null to have the caller branch around a plain
  /// load.
  virtual mlir::Value predicatedLoad(mlir::OpBuilder &b, mlir::Location loc,
                                     mlir::Type type, mlir::Value ptr,
                                     mlir::Value pred, mlir::Value other,
                                     bool isVolatile) const = 0;
  /// Stores `value` (2, 4, 8 or 16 bytes of numbers: a scalar or a vector) to
  /// global memory at `ptr` where `pred` holds, without a branch, or returns
  /// false to have the caller branch around a plain store. A branch lets
  /// LLVM sink the computation of the value into the conditional block,
  /// where ptxas then keeps every operand of every store live at once (layer
  /// norm's output loop: 40 registers against 32).
  virtual bool predicatedStore(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value ptr, mlir::Value value,
                               mlir::Value pred) const = 0;
  /// One atomic of this thread on global memory: the value at `ptr` before
  /// the atomic `kind` of `val` with it, made where `pred` holds (zero
  /// elsewhere), ordered as `sem` for the threads of `scope`. Kinds on bits
  /// (and, or, xor, xchg) and on integers take integers of 32 or 64 bits;
  /// fadd takes fp16, bf16, fp32 or fp64 (fmax and fmin are the caller's,
  /// made of integer max and min). Null where the target has no such
  /// instruction: the caller then loops on atomicCAS.
  virtual mlir::Value atomicRMW(mlir::OpBuilder &b, mlir::Location loc,
                                tile::AtomicRMWKind kind, mlir::Value ptr,
                                mlir::Value val, mlir::Value pred,
                                tile::MemSemantic sem,
                                tile::MemSyncScope scope) const = 0;
  /// One compare-and-swap of this thread on global memory: the value at
  /// `ptr` (an integer of 16, 32 or 64 bits) before `val` replaced it if it
  /// was `cmp`, made where `pred` holds (zero elsewhere).
  virtual mlir::Value atomicCAS(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value ptr, mlir::Value cmp,
                                mlir::Value val, mlir::Value pred,
                                tile::MemSemantic sem,
                                tile::MemSyncScope scope) const = 0;
  /// The address space of memory shared by a program's threads.
  virtual unsigned sharedAddressSpace() const = 0;
  /// Marks the lowered function as a kernel launched with `numThreads`
  /// threads per program.
  virtual void markKernel(mlir::Operation *func, int numThreads) const = 0;
  /// Prints one line from this thread: printf's `format` with `args` (i32,
  /// i64, f64 or pointers, as C's variadic printf takes them).
  virtual void printf(mlir::OpBuilder &b, mlir::Location loc,
                      llvm::StringRef format, mlir::ValueRange args) const = 0;
  /// Stops the program with a failed device assertion: `message`, at `file`
  /// line `line` of `function`.
  virtual void assertFail(mlir::OpBuilder &b, mlir::Location loc,
                          llvm::StringRef message, llvm::StringRef file,
                          int line, llvm::StringRef function) const = 0;
  /// Patterns for math ops the target lowers its own way (a vendor math
  /// library); MLIR's math-to-LLVM patterns take the rest.
  virtual void populateMathPatterns(mlir::LLVMTypeConverter &converter,
                                    mlir::RewritePatternSet &patterns) const = 0;
  /// Makes the target's intrinsics dialect (NVVM, ROCDL), which its hooks
  /// emit, legal in the final conversion to LLVM.
  virtual void addLegalDialects(mlir::ConversionTarget &target) const = 0;
};

/// Lowers every kernel of `module` (after convert-tile-to-tilegpu) to the
/// LLVM dialect plus the target's intrinsics dialect. Errors are emitted on
/// the op at fault (with the kernel author's location).
mlir::LogicalResult lowerTileGPUToLLVM(mlir::ModuleOp module,
                                       const GPUTargetInfo &target);

} // namespace tessel::gpu

#endif // TESSEL_CONVERSION_TILEGPUTOLLVM_TILEGPUTOLLVM_H
