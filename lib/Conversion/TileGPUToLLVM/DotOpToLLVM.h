//===- DotOpToLLVM.h - Dots on tensor cores --------------------*- C++ -*-===//
//
// What the dot lowering shares with warpgroup MMA (WGMMA.cpp) and the
// shared-memory allocation.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_DOTOPTOLLVM_H
#define TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_DOTOPTOLLVM_H

#include "Utility.h"
#include "tessel/Conversion/TileGPUToLLVM/AmdTargetHooks.h"
#include "tessel/Dialect/TileGPU/IR/MmaInputs.h"
#include "tessel/Dialect/TileGPU/IR/NvidiaLayouts.h"

#include <map>

namespace tessel::gpu::lowering {

/// Where a warpgroup-MMA dot stages its operands: A (M x K) K-major in
/// wgmmaOperandLayout with `aSwizzle`, then B (K x N) from the next multiple
/// of 1024 bytes, where every swizzle pattern starts over. B is N-major
/// (wgmmaMNMajorOperandLayout), as it comes in registers (consecutive
/// columns in a thread, lanes along the columns: vector stores without bank
/// conflicts), with a swizzle no wider than an instruction's columns, so
/// that every instruction starts on an atom; an instruction of 8 columns is
/// too narrow for any swizzle, and B is K-major then.
struct WgmmaTiles {
  int32_t aSwizzle, bSwizzle;
  bool bMNMajor;
  int64_t bBase, bytes;
};
WgmmaTiles wgmmaTiles(tessel::tile::DotOp dot,
                      const std::vector<int32_t> &warps);

/// Bytes of shared memory a dot stages its operands in when they come in
/// registers, and where B starts (`bOffset`).
int64_t dotSharedBytes(tessel::tile::DotOp dot, int64_t &bOffset);

/// Whether an mma.sync dot takes A straight from the thread's registers: A
/// sits in the accumulator layout of a dot whose warps all split M (the
/// probabilities of attention, from the first dot), so the m16n8k16 A
/// fragment of a K step is the accumulators of two 16x8 tiles side by side.
bool aInAccumulatorRegisters(tessel::tile::DotOp dot);
/// Whether a warpgroup MMA dot on `warps` takes A from registers: 16-bit A
/// in the wgmma accumulator layout of warpgroups that all split M (each
/// holds all of K for its rows), whose warp's 16 rows of a K step are then
/// the m16n8k16 A fragment.
bool wgmmaAInRegisters(tessel::tile::DotOp dot,
                       const std::vector<int32_t> &warps);

/// A 16-bit A operand that one of the two above takes from registers, as
/// the m16n8k16 A fragment (mma.sync's, and a warp's part of wgmma's) of
/// the 16 rows from `row0` and the K step from `k0`: the i32 pairs a0a1,
/// a2a3, a4a5, a6a7 (rows g and g + 8, K elements 2t and 2t + 8 on; PTX
/// ISA), packed from the thread's own registers. Coordinates are those
/// thread 0 of warp 0 holds; every thread holds its own at the same
/// registers.
class RegisterAFragments {
public:
  RegisterAFragments(const LinearLayout &layout, mlir::ValueRange values,
                     mlir::Type element);
  llvm::SmallVector<mlir::Value, 4> fragment(mlir::OpBuilder &b,
                                             mlir::Location loc, int32_t row0,
                                             int32_t k0) const;

private:
  mlir::Value pair(mlir::OpBuilder &b, mlir::Location loc, int32_t row,
                   int32_t k) const;
  std::map<std::pair<int32_t, int32_t>, int32_t> registerAt;
  llvm::SmallVector<mlir::Value> values;
  mlir::Type element;
};

/// The attribute the shared-memory allocation gives an op that stages
/// through the scratch (its bytes); a dot stages its operands only with it.
constexpr const char *kScratchAttr = "tilegpu.scratch";

/// d = a * b + c on warpgroup MMA (wgmmaWarps): both operands are staged
/// swizzled in shared memory (wgmmaTiles) unless read in place from a slot
/// (`aSlot`, `bSlot`; slots that hold their operand transposed: A M-major,
/// `aSlotMNMajor`, or B K-major, `bSlotKMajor`), then each warpgroup issues
/// wgmma.mma_async m64nNk16 for each of its accumulator tiles, K steps
/// innermost, through descriptors of the tiles' rows; one commit and a wait
/// for all at the end.
SmallVector<Value> lowerWgmmaDot(OpBuilder &b, Location loc,
                                 const GPUTargetInfo &target,
                                 tessel::tile::DotOp op, mlir::ValueRange a,
                                 mlir::ValueRange bv, mlir::ValueRange c,
                                 const std::vector<int32_t> &warps,
                                 Value aSlot, Value bSlot, bool aSlotMNMajor,
                                 bool bSlotKMajor);

/// An MFMA dot (AMD's matrix cores, 32x32 or 16x16 instructions for fp16 or bf16 into
/// fp32 (or fp16 summed in fp32), fp32 into fp32, int8 into int32, fp64 into fp64 on 16x16): the waves [M, N] of its accumulator
/// (gpu::mfmaAccumulatorLayout), whether that is transposed, and which
/// operands sit in the instruction's operand layout (gpu::mfmaOperandLayout)
/// already, so that the dot takes them from registers.
struct MfmaDotShape {
  std::vector<int32_t> warps;
  gpu::MfmaInputs inputs;
  int32_t kWidth; ///< elements of K per lane (AmdTargetHooks::mfmaKWidth)
  int32_t instr;  ///< the instruction's block: 32x32 or 16x16
  bool transposed, aInRegisters, bInRegisters;
  /// The chip reads rows along M or N transposed (AmdTargetHooks::
  /// transposedLdsRead), 8- and 16-bit elements.
  bool transposedReads = false;
};
/// The shape of `dot` if it runs on `amd`'s MFMA.
std::optional<MfmaDotShape> mfmaDotShape(tessel::tile::DotOp dot,
                                         const gpu::AmdTargetHooks &amd);
/// Bytes of shared memory an MFMA dot stages its operands in (those neither
/// in registers nor read in place from a pipeline slot: A row-major, then B
/// as N x K), and where B starts.
int64_t mfmaSharedBytes(tessel::tile::DotOp dot, const MfmaDotShape &shape,
                        int64_t &bOffset);

/// d = a * b + c on AMD's matrix cores (MFMADot.cpp): operands from
/// registers, from the pipeline slots `slots` (A's, B's; null where an
/// operand is not read in place, inPlaceOperand) or staged with K contiguous
/// (mfmaSharedBytes), one 32x32 MFMA per 32x32 tile of the wave and K step
/// of the instruction.
SmallVector<Value> lowerMfmaDot(OpBuilder &b, Location loc,
                                const GPUTargetInfo &target,
                                tessel::tile::DotOp op,
                                const MfmaDotShape &shape, mlir::ValueRange a,
                                mlir::ValueRange bv, mlir::ValueRange c,
                                llvm::ArrayRef<mlir::Value> slots);

/// d = a * b + c on mma.sync for tf32, tf32x3 or int8 `inputs`
/// (MMASyncFragments.cpp): both operands are staged in shared memory
/// (dotSharedBytes' bytes) with K contiguous, swizzled against bank
/// conflicts, fp32 ones rounded to tf32 first (tf32x3: split into two tf32
/// parts as they are read); each
/// warp reads its fragments as mmaOperandLayout places them, one 4-byte
/// word per register, and issues one instruction per accumulator tile and
/// K step. The accumulator is in the layout of `warps` (gpu::mmaAccumulatorWarps).
/// An operand that `slots` gives (a pipeline's slot or a hoisted buffer,
/// laid out as `slotLayouts` says: offsets to the operand's coordinates) is
/// read there in place instead (tf32: rounded as it is read; 8-bit
/// elements whose K is not contiguous there, a byte at a time).
SmallVector<Value> lowerMmaSyncFragmentsDot(
    OpBuilder &b, Location loc, const GPUTargetInfo &target,
    tessel::tile::DotOp op, tessel::tilegpu::MmaInputs inputs,
    const std::vector<int32_t> &warps, mlir::ValueRange a, mlir::ValueRange bv,
    mlir::ValueRange c, ArrayRef<Value> slots,
    ArrayRef<LinearLayout> slotLayouts);

} // namespace tessel::gpu::lowering

#endif // TESSEL_LIB_CONVERSION_TILEGPUTOLLVM_DOTOPTOLLVM_H
