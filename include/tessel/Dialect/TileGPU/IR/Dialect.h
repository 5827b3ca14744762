//===- Dialect.h - The tilegpu dialect --------------------------*- C++ -*-===//
//
// Tile IR whose tensors carry GPU register layouts.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TILEGPU_IR_DIALECT_H
#define TESSEL_DIALECT_TILEGPU_IR_DIALECT_H

#include "tessel/Dialect/TileGPU/IR/LinearLayout.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/InferIntRangeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessel/Dialect/TileGPU/IR/TileGPUDialect.h.inc"

#include "tessel/Dialect/TileGPU/IR/TileGPUEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/TileGPU/IR/TileGPUAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tessel/Dialect/TileGPU/IR/TileGPUTypes.h.inc"

#define GET_OP_CLASSES
#include "tessel/Dialect/TileGPU/IR/TileGPUOps.h.inc"

namespace tessel::tilegpu {

/// The module attribute that gives the threads of a warp (a wavefront on
/// AMD): convert-tile-to-tilegpu sets it from its target.
inline constexpr const char *kThreadsPerWarpAttr = "tilegpu.threads_per_warp";
/// A warp's threads where NVIDIA's 32 is not a given: the module's
/// `tilegpu.threads_per_warp` (modules written without it, such as
/// hand-written tests: NVIDIA's 32).
int threadsPerWarp(mlir::Operation *op);

/// The layout of a tensor type (its LinearEncodingAttr), or nothing.
std::optional<gpu::LinearLayout> getLayout(mlir::Type type);
/// `type` (a ranked tensor) with `layout` as its encoding.
mlir::RankedTensorType withLayout(mlir::Type type,
                                  const gpu::LinearLayout &layout);

/// Elements one access of a load, store or async_copy `op` moves, its
/// addresses held as `layout` says: the `tilegpu.vector` width proved along
/// the dimension the thread's consecutive registers run along, no more than
/// they run. 1 without the attribute.
int32_t accessWidth(mlir::Operation *op, const gpu::LinearLayout &layout);

/// Whether the old values of an atomic (tile.atomic_rmw, tile.atomic_cas)
/// go from the threads that make it to others: the program uses them and
/// other threads hold copies of its elements (or it is a scalar, made by the
/// first thread). They pass through shared memory between barriers, the
/// last after every thread's atomic.
bool atomicResultCrossesThreads(mlir::Operation *atomic);

/// The warps [M, N] of a dot (a, b, c -> d) that runs on warpgroup MMA:
/// marked `tilegpu.wgmma` by convert-tile-to-tilegpu, inputs it takes
/// (takesWarpgroupMma) with K a multiple of the instruction's, its
/// accumulator in the wgmma layout of that split. Nothing otherwise.
std::optional<std::vector<int32_t>> wgmmaWarps(mlir::Operation *dot);
/// A warpgroup-MMA dot whose MMAs are committed and left in flight
/// (tilegpu-pipeline): its accumulators go only to the MMAs of the next
/// iteration's dot, and a tilegpu.warpgroup_mma_wait retires them.
constexpr llvm::StringLiteral kWarpgroupMmaInFlight = "tilegpu.in_flight";
/// Whether a dot (a, b, c -> d) runs on mma.sync m16n8k16: fp16/bf16 into
/// fp32 or fp16 into fp16, its accumulator in the mma.sync layout of some
/// split of its warps.
bool isMmaSyncDot(mlir::Operation *dot);
/// Whether a dot runs on mma.sync reading its fragments a 32-bit word at a
/// time (MMASyncFragments): m16n8k8 .tf32 (once, or three times for
/// tf32x3) or m16n8k32 with int8 or 8-bit float inputs, its accumulator in
/// the mma.sync layout of some split of its warps, K a multiple of the
/// instruction's.
bool isMmaSyncWordDot(mlir::Operation *dot);

/// Whether `dot`'s result is in an MFMA accumulator layout (AMD's matrix
/// cores, 32x32 or 16x16 instructions, transposed or not).
bool isMfmaDot(mlir::Operation *dot);

/// How a dot's operand must sit in shared memory for the dot to read it in
/// place (ldmatrix for mma.sync, descriptors for wgmma): a slot's
/// SharedBufferType parameters.
struct SharedEncoding {
  SharedOrder order;
  bool transposed;
  int32_t swizzle;
};
/// The encoding operand `operand` (0: A, M x K; 1: B, K x N) of a dot on
/// mma.sync or wgmma is read from in place, with the widest swizzle the
/// instruction allows: A K-major and B N-major, as both come from row-major
/// memory, or with `transposed` the operand's other dimension contiguous,
/// as it comes from column-major memory: B K-major (`k_major, transposed`)
/// or A M-major (`mn_major, transposed`); tf32 and 8-bit operands of
/// mma.sync whose K is not contiguous, a `gather` slot; an MFMA dot's,
/// `padded` rows (the padding a guess: any padding reads right). Nothing
/// where the dot cannot read that operand from such a slot.
/// The bytes of padding after each 128 bytes of an MFMA operand's rows
/// along M or N (of `elementBytes` elements): 16, as they are read an
/// element at a time down 16 rows; 32 for 16-bit ones read with transposed
/// LDS reads (gfx950), which take 4 rows of 32 bytes at once (8-bit ones, 8
/// rows of 16 bytes, take 16).
int32_t mfmaMNRowPad(int64_t elementBytes, bool transposedReads);
std::optional<SharedEncoding> dotOperandSharedEncoding(mlir::Operation *dot,
                                                       unsigned operand,
                                                       bool transposed = false);

/// The box of the copy engine's copies that fill a `k_major` or `mn_major`
/// slot of `buffer` (async_tma_copy): the stored tile's rows by one swizzle
/// atom, outermost first; and the copies one slot takes (its columns of
/// atoms along the contiguous dimension).
llvm::SmallVector<int64_t> tmaSlotBox(SharedBufferType buffer);
int64_t tmaSlotBoxes(SharedBufferType buffer);

/// The bytes of shared memory the ops in `scope` (a function, or a loop)
/// stage through outside its buffers, estimated before lowering: the
/// largest layout conversion or dot operand pair.
int64_t scratchEstimate(mlir::Operation *scope);
/// The bytes of the function's `local_alloc` buffers, each from a 1024-byte
/// boundary.
int64_t bufferBytes(mlir::Operation *func);

/// The bytes from its base that the resource of a buffer_load or
/// buffer_store covers (its num_records, as Triton's), and the byte offset
/// its masked-off lanes take: past the range, so the hardware reads zeros
/// there and writes nothing.
constexpr int64_t kBufferRange = 0x7ffffffe;
constexpr int32_t kBufferOutOfRange = INT32_MIN; // 0x80000000

} // namespace tessel::tilegpu

#endif // TESSEL_DIALECT_TILEGPU_IR_DIALECT_H
