//===- WGMMA.cpp - Dots on warpgroup MMA (sm_90a) -----------------------------===//
//
// wgmma.mma_async (fp16/bf16, int8, 8-bit floats) for dots whose warpgroups
// cover 64 rows: operands staged swizzled in shared memory (or read in place
// from a pipeline slot) and addressed through matrix descriptors.
//
//===----------------------------------------------------------------------===//
#include "DotOpToLLVM.h"
#include "tessel/Conversion/TileGPUToLLVM/NvidiaTargetHooks.h"
#include "SharedAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace tessel::gpu::lowering {

WgmmaTiles wgmmaTiles(tile::DotOp dot, const std::vector<int32_t> &warps) {
  auto a = dot.getA().getType(), b = dot.getB().getType();
  int32_t size = storageBytes(a.getElementType());
  int32_t instrN = gpu::wgmmaInstrN(
      {int32_t(a.getDimSize(0)), int32_t(b.getDimSize(1))}, warps);
  WgmmaTiles t;
  t.aSwizzle = gpu::wgmmaSwizzleBytes(a.getDimSize(1), size);
  // Only 16-bit operands may be MN-major: 8-bit B is staged K-major.
  t.bMNMajor = size == 2 && instrN * size >= 32;
  t.bSwizzle = t.bMNMajor ? std::min(128, instrN * size) : t.aSwizzle;
  t.bBase = (a.getNumElements() * size + 1023) / 1024 * 1024;
  t.bytes = t.bBase + b.getNumElements() * size;
  return t;
}

/// d = a * b + c on warpgroup MMA (wgmmaWarps): both operands are staged
/// swizzled in shared memory (wgmmaTiles), then each warpgroup issues
/// wgmma.mma_async m64nNkK (K: 32 bytes of a row, 16 or 32 elements) for
/// each of its accumulator tiles, K steps innermost so one accumulator's
/// MMAs follow each other, through descriptors of the tiles' rows; one
/// commit and a wait for all at the end (none for a dot kept in flight,
/// whose accumulators go straight to the next MMAs).
SmallVector<Value> lowerWgmmaDot(OpBuilder &b, Location loc,
                                 const gpu::GPUTargetInfo &target,
                                 tile::DotOp op, ValueRange a, ValueRange bv,
                                 ValueRange c,
                                 const std::vector<int32_t> &warps,
                                 Value aSlot, Value bSlot, bool aSlotMNMajor,
                                 bool bSlotKMajor) {
  auto aTy = op.getA().getType(), bTy = op.getB().getType();
  int32_t M = aTy.getDimSize(0), K = aTy.getDimSize(1), N = bTy.getDimSize(1);
  bool bf16 = aTy.getElementType().isBF16();
  int32_t size = storageBytes(aTy.getElementType());
  int32_t kStep = 32 / size; // the instruction's K
  WgmmaTiles tiles = wgmmaTiles(op, warps);
  // Slots that hold their operand transposed: A loaded M-contiguous, M-major
  // with atoms of the instruction's 64 rows; B loaded K-contiguous, N x K
  // swizzled as a K-major A.
  bool aMNMajor = aSlot && aSlotMNMajor;
  int32_t aSwizzle = aMNMajor ? std::min(128, 64 * size) : tiles.aSwizzle;
  if (bSlot && bSlotKMajor) {
    tiles.bMNMajor = false;
    tiles.bSwizzle = tiles.aSwizzle;
  }
  LinearLayout dLayout = layoutOf(op.getD().getType());
  // A in the accumulator layout of an earlier dot (attention's
  // probabilities) stays in registers.
  bool aInRegisters = !aSlot && wgmmaAInRegisters(op, warps);

  // Operands read in place (a pipeline's slots, already published to the
  // async proxy) or from registers are not staged.
  if ((!aSlot && !aInRegisters) || !bSlot) {
    target.barrier(b, loc); // earlier readers of the scratch are done
    if (!aSlot && !aInRegisters)
      writeOperandToShared(b, loc, target, layoutOf(aTy),
                           gpu::wgmmaOperandLayout(M, K, size, tiles.aSwizzle),
                           a, 0);
    if (bSlot)
      ;
    else if (tiles.bMNMajor)
      writeOperandToShared(
          b, loc, target, layoutOf(bTy),
          gpu::wgmmaMNMajorOperandLayout(K, N, size, tiles.bSwizzle), bv,
          tiles.bBase);
    else
      writeOperandToShared(b, loc, target,
                           gpu::transposeLayout(layoutOf(bTy), {1, 0}),
                           gpu::wgmmaOperandLayout(N, K, size, tiles.bSwizzle),
                           bv, tiles.bBase);
    target.nvidia()->fenceSharedForWarpgroupMma(b, loc);
    target.barrier(b, loc);
  }

  // An instruction's operand tile starts where its first row or column
  // (`first`, a multiple of 8) meets K step k0 (a multiple of kStep): there the
  // swizzle moves nothing, so the descriptor gets the plain offset. K-major
  // (rows x K): the swizzle atom along K, the row, the column in the atom;
  // 8-row groups are 8 rows of S bytes apart. N-major (K x N): the column
  // of atoms along N (K rows of S bytes each, the leading offset), the
  // group of 8 rows of K in it (8 rows of S bytes, the stride offset).
  Value sharedBase = b.create<LLVM::PtrToIntOp>(
      loc, b.getI32Type(),
      sharedAddress(b, loc, target.sharedAddressSpace(), i32Const(b, loc, 0)));
  auto baseOf = [&](Value slot, int64_t base) -> Value {
    if (slot)
      return b.create<LLVM::PtrToIntOp>(loc, b.getI32Type(), slot);
    return b.create<arith::AddIOp>(loc, sharedBase, i32Const(b, loc, base));
  };
  Value aBase = baseOf(aSlot, 0), bBase = baseOf(bSlot, tiles.bBase);
  auto descriptor = [&](Value base, int32_t rows, int32_t swizzle,
                        bool mnMajor, Value first, int32_t k0) {
    int32_t atom = swizzle / size; // elements along a row of an atom
    int64_t fixed, perFirst, leading, stride;
    if (!mnMajor) {
      fixed = int64_t(k0 / atom) * rows * swizzle + (k0 % atom) * size;
      perFirst = swizzle;
      leading = 16; // unused
      stride = 8 * swizzle;
    } else {
      leading = int64_t(K) * swizzle;
      stride = 8 * swizzle;
      fixed = int64_t(k0 / 8) * stride;
      perFirst = leading / atom; // first is a multiple of the atom width
    }
    Value byte = b.create<arith::AddIOp>(
        loc, base,
        b.create<arith::AddIOp>(
            loc, i32Const(b, loc, fixed),
            b.create<arith::MulIOp>(loc, first, i32Const(b, loc, perFirst))));
    return target.nvidia()->warpgroupMmaDescriptor(b, loc, byte, leading, stride,
                                         swizzle);
  };

  // This warpgroup's first row and column: the accumulator layout at its
  // first warp (warp bits 0-1 pick rows within the warpgroup).
  ThreadIds ids = threadIds(b, loc, target);
  Value firstWarp = b.create<arith::AndIOp>(loc, ids.warp, i32Const(b, loc, ~3));
  SmallVector<Value> group = hardwarePart(
      b, loc, dLayout, gpu::kWarp, firstWarp,
      {i32Const(b, loc, 0), i32Const(b, loc, 0)});

  int32_t instrN = gpu::wgmmaInstrN({M, N}, warps);
  int32_t perInstr = instrN / 2;
  SmallVector<Value> d(c.begin(), c.end());
  // fp16 results are summed in fp32 accumulators and rounded once, after
  // the last instruction, as on mma.sync.
  Type accElt = op.getD().getType().getElementType();
  if (accElt.isF16())
    for (Value &v : d)
      v = b.create<arith::ExtFOp>(loc, b.getF32Type(), v);
  std::optional<RegisterAFragments> aRegisters;
  if (aInRegisters)
    aRegisters.emplace(layoutOf(aTy), a, aTy.getElementType());
  target.nvidia()->warpgroupMmaFence(b, loc);
  for (int32_t first = 0; first < int32_t(d.size()); first += perInstr) {
    std::vector<int32_t> origin = dLayout.apply({{gpu::kRegister, first}});
    Value row0 =
        b.create<arith::XOrIOp>(loc, group[0], i32Const(b, loc, origin[0]));
    Value col0 =
        b.create<arith::XOrIOp>(loc, group[1], i32Const(b, loc, origin[1]));
    SmallVector<Value> acc(d.begin() + first, d.begin() + first + perInstr);
    for (int32_t k0 = 0; k0 < K; k0 += kStep) {
      Value bDesc =
          descriptor(bBase, N, tiles.bSwizzle, tiles.bMNMajor, col0, k0);
      // A from registers: the warp's 16 rows, wgmma's register fragment of
      // A being mma.sync's (PTX ISA, "Register Fragments" of wgmma).
      acc = aInRegisters
                ? target.nvidia()->warpgroupMmaRegisterA(
                      b, loc, aRegisters->fragment(b, loc, origin[0], k0),
                      bDesc, acc, instrN, bf16, tiles.bMNMajor)
                : target.nvidia()->warpgroupMma(
                      b, loc,
                      descriptor(aBase, M, aSwizzle, aMNMajor, row0, k0),
                      bDesc, acc, instrN, aTy.getElementType(),
                      bTy.getElementType(), aMNMajor, tiles.bMNMajor);
    }
    std::copy(acc.begin(), acc.end(), d.begin() + first);
  }
  target.nvidia()->warpgroupMmaCommit(b, loc);
  // A dot kept in flight (tilegpu-pipeline: its accumulator goes only to the
  // next iteration's MMAs) is waited for by a tilegpu.warpgroup_mma_wait.
  if (op->hasAttr(tilegpu::kWarpgroupMmaInFlight))
    return d;
  SmallVector<Value> sums = target.nvidia()->warpgroupMmaWait(b, loc, d, 0);
  if (accElt.isF16())
    for (Value &v : sums)
      v = b.create<arith::TruncFOp>(loc, accElt, v);
  return sums;
}

} // namespace tessel::gpu::lowering
