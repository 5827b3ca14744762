//===- MFMADot.cpp - Dots on AMD's matrix cores ---------------------------===//
//
// d = a * b + c with v_mfma_f32_32x32x8 (fp16, bf16): the accumulator is in
// mfmaAccumulatorLayout, each wave holding whole 32x32 tiles. A (M x K,
// row-major) and B (as N x K, K contiguous) are staged in shared memory;
// for each K step of 8, lane l reads its four elements along K of A's row
// (and B's column) l % 32 from K 4 (l / 32) on as one 8-byte LDS load
// (ds_read_b64), the operand layout of the instruction (mfmaOperandLayout).
//
//===----------------------------------------------------------------------===//
#include "DotOpToLLVM.h"
#include "SharedAccess.h"
#include "tessel/Conversion/TileGPUToLLVM/AmdTargetHooks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;

SmallVector<Value> gpu::lowering::lowerMfmaDot(OpBuilder &b, Location loc,
                                               const GPUTargetInfo &target,
                                               tile::DotOp op, ValueRange a,
                                               ValueRange bv, ValueRange c) {
  auto aTy = op.getA().getType(), bTy = op.getB().getType();
  int32_t M = aTy.getDimSize(0), K = aTy.getDimSize(1), N = bTy.getDimSize(1);
  Type aElt = aTy.getElementType();
  Type accElt = op.getD().getType().getElementType();
  LinearLayout dLayout = layoutOf(op.getD().getType());
  int64_t bBase;
  dotSharedBytes(op, bBase);
  unsigned space = target.sharedAddressSpace();

  target.barrier(b, loc); // earlier users of the scratch are done
  writeTensorToShared(b, loc, target, layoutOf(aTy), {M, K}, a, 0);
  writeTensorToShared(b, loc, target, layoutOf(bTy), {K, N}, bv, bBase,
                      /*transposed=*/true);
  target.barrier(b, loc);

  ThreadIds ids = threadIds(b, loc, target);
  Value lane32 = b.create<arith::AndIOp>(loc, ids.lane, i32Const(b, loc, 31));
  Value half = b.create<arith::ShRUIOp>(loc, ids.lane, i32Const(b, loc, 5));
  Value kLane = b.create<arith::ShLIOp>(loc, half, i32Const(b, loc, 2));
  auto coords = elementCoords(b, loc, dLayout, ids);

  // Sums in fp32 (fp16 results rounded once at the end, as mma.sync does).
  Type f32 = b.getF32Type();
  auto accTy = VectorType::get({16}, f32);
  auto operandTy = VectorType::get({4}, b.getI16Type());
  int tiles = int(c.size()) / 16;
  SmallVector<Value> acc, aRow, bCol;
  for (int t = 0; t < tiles; ++t) {
    Value v = b.create<LLVM::PoisonOp>(loc, accTy);
    for (int r = 0; r < 16; ++r) {
      Value x = c[16 * t + r];
      if (x.getType() != f32)
        x = b.create<arith::ExtFOp>(loc, f32, x);
      v = b.create<LLVM::InsertElementOp>(loc, v, x, i32Const(b, loc, r));
    }
    acc.push_back(v);
    // Register 16t holds row (tile's first) + 4 (l / 32), column (tile's
    // first) + l % 32: A's row for this lane is the tile's first plus l % 32,
    // B's column the register's own.
    Value first = b.create<arith::SubIOp>(loc, coords[16 * t][0], kLane);
    aRow.push_back(b.create<arith::AddIOp>(loc, first, lane32));
    bCol.push_back(coords[16 * t][1]);
  }
  auto load = [&](int64_t base, Value rowOrCol, int32_t k0) {
    // Elements (rowOrCol, k0 + 4 (l / 32) .. + 3) of a K-contiguous block,
    // as the 8-byte element (rowOrCol * K + k) / 4.
    Value k = b.create<arith::AddIOp>(loc, kLane, i32Const(b, loc, k0));
    Value idx = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, rowOrCol, i32Const(b, loc, K)), k);
    Value quad = b.create<arith::ShRUIOp>(loc, idx, i32Const(b, loc, 2));
    Value addr = sharedElement(b, loc, space, base, quad, 8);
    return b.create<LLVM::LoadOp>(loc, operandTy, addr, /*alignment=*/8)
        .getResult();
  };
  bool bf16 = aElt.isBF16();
  // K steps outermost: a step's operands are dead after it.
  for (int32_t k0 = 0; k0 < K; k0 += 8) {
    for (int t = 0; t < tiles; ++t) {
      Value x = load(0, aRow[t], k0);
      Value y = load(bBase, bCol[t], k0);
      acc[t] = target.amd()->mfma32x32x8(b, loc, x, y, acc[t], bf16);
    }
  }
  SmallVector<Value> d;
  for (int t = 0; t < tiles; ++t)
    for (int r = 0; r < 16; ++r) {
      Value x = b.create<LLVM::ExtractElementOp>(loc, acc[t],
                                                 i32Const(b, loc, r));
      if (accElt != f32)
        x = b.create<arith::TruncFOp>(loc, accElt, x);
      d.push_back(x);
    }
  return d;
}
