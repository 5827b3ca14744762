//===- MFMADot.cpp - Dots on AMD's matrix cores ---------------------------===//
//
// d = a * b + c with v_mfma_f32_32x32x8 (fp16, bf16): the accumulator is in
// mfmaAccumulatorLayout, each wave holding whole 32x32 tiles, transposed or
// not. For each K step of 8, lane l needs the four elements along K of A's
// row (and B's column) l % 32 from K 4 (l / 32) on: the instruction's
// operand layout (mfmaOperandLayout).
//
// An operand already in that layout (the scores of attention, in the
// transposed accumulator of the dot before) is taken from its registers.
// Any other is staged in shared memory, A row-major and B as N x K, K
// contiguous, and each group of four is one 8-byte LDS load (ds_read_b64).
//
// A transposed accumulator is the same instruction with the operands'
// registers swapped: it computes D^T = B^T A^T.
//
//===----------------------------------------------------------------------===//
#include "DotOpToLLVM.h"
#include "SharedAccess.h"
#include "tessel/Conversion/TileGPUToLLVM/AmdTargetHooks.h"
#include "tessel/Dialect/TileGPU/IR/AmdLayouts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <map>

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

std::optional<MfmaDotShape> gpu::lowering::mfmaDotShape(tile::DotOp dot) {
  auto aTy = dot.getA().getType(), bTy = dot.getB().getType();
  int32_t M = aTy.getDimSize(0), K = aTy.getDimSize(1), N = bTy.getDimSize(1);
  Type aElt = aTy.getElementType(), bElt = bTy.getElementType();
  Type accElt = dot.getD().getType().getElementType();
  if (!(aElt.isF16() || aElt.isBF16()) || aElt != bElt ||
      !(accElt.isF32() || (accElt.isF16() && aElt.isF16())) || K % 8)
    return std::nullopt;
  LinearLayout d = layoutOf(dot.getD().getType());
  for (bool transposed : {false, true})
    if (auto warps = gpu::mfmaAccumulatorWarps(d, {M, N}, transposed)) {
      MfmaDotShape shape{*warps, transposed, false, false};
      shape.aInRegisters =
          layoutOf(aTy) == gpu::mfmaOperandLayout(0, {M, K}, *warps);
      shape.bInRegisters =
          layoutOf(bTy) == gpu::mfmaOperandLayout(1, {K, N}, *warps);
      return shape;
    }
  return std::nullopt;
}

int64_t gpu::lowering::mfmaSharedBytes(tile::DotOp dot,
                                       const MfmaDotShape &shape,
                                       int64_t &bOffset) {
  auto bytesOf = [](RankedTensorType t) {
    return t.getNumElements() * int64_t(storageBytes(t.getElementType()));
  };
  int64_t aBytes = shape.aInRegisters ? 0 : bytesOf(dot.getA().getType());
  bOffset = (aBytes + 15) / 16 * 16;
  return shape.bInRegisters ? aBytes
                            : bOffset + bytesOf(dot.getB().getType());
}

namespace {

/// Where a thread finds an operand's four K elements for one instruction:
/// its own registers, or 8 bytes of the staged copy in shared memory.
class MfmaOperand {
public:
  /// Registers in the operand layout: the four of (row or column `mn`, K
  /// `k0` on) are those thread 0 of wave 0 holds there.
  MfmaOperand(const LinearLayout &layout, ValueRange values, unsigned operand)
      : values(values.begin(), values.end()) {
    for (int32_t r = 0; r < layout.inSize(gpu::kRegister); ++r) {
      std::vector<int32_t> rc = layout.apply({{gpu::kRegister, r}});
      registerAt[operand == 0 ? std::pair(rc[0], rc[1])
                              : std::pair(rc[1], rc[0])] = r;
    }
  }
  /// Staged at `base`, K-contiguous rows of `k` elements.
  MfmaOperand(unsigned space, int64_t base, int32_t k)
      : space(space), base(base), k(k) {}

  /// The operand of the K step from `k0` for the tile whose thread-0
  /// row (or column) is `mn0`; `mn` is this lane's, `kLane` 4 (l / 32).
  Value fragment(OpBuilder &b, Location loc, int32_t mn0, Value mn,
                 int32_t k0, Value kLane) const {
    auto operandTy = VectorType::get({4}, b.getI16Type());
    if (!values.empty()) {
      Value v = b.create<LLVM::PoisonOp>(loc, operandTy);
      for (int32_t j = 0; j < 4; ++j) {
        Value x = values[registerAt.at({mn0, k0 + j})];
        x = b.create<LLVM::BitcastOp>(loc, b.getI16Type(), x);
        v = b.create<LLVM::InsertElementOp>(loc, v, x, i32Const(b, loc, j));
      }
      return v;
    }
    // Elements (mn, k0 + 4 (l / 32) .. + 3) as the 8-byte element
    // (mn * K + k) / 4.
    Value kk = b.create<arith::AddIOp>(loc, kLane, i32Const(b, loc, k0));
    Value idx = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, mn, i32Const(b, loc, k)), kk);
    Value quad = b.create<arith::ShRUIOp>(loc, idx, i32Const(b, loc, 2));
    Value addr = sharedElement(b, loc, space, base, quad, 8);
    return b.create<LLVM::LoadOp>(loc, operandTy, addr, /*alignment=*/8)
        .getResult();
  }

private:
  SmallVector<Value> values;
  std::map<std::pair<int32_t, int32_t>, int32_t> registerAt;
  unsigned space = 0;
  int64_t base = 0;
  int32_t k = 0;
};

} // namespace

SmallVector<Value> gpu::lowering::lowerMfmaDot(OpBuilder &b, Location loc,
                                               const GPUTargetInfo &target,
                                               tile::DotOp op,
                                               const MfmaDotShape &shape,
                                               ValueRange a, ValueRange bv,
                                               ValueRange c) {
  auto aTy = op.getA().getType(), bTy = op.getB().getType();
  int32_t M = aTy.getDimSize(0), K = aTy.getDimSize(1), N = bTy.getDimSize(1);
  Type aElt = aTy.getElementType();
  Type accElt = op.getD().getType().getElementType();
  LinearLayout dLayout = layoutOf(op.getD().getType());
  int64_t bBase;
  unsigned space = target.sharedAddressSpace();

  if (!shape.aInRegisters || !shape.bInRegisters) {
    mfmaSharedBytes(op, shape, bBase);
    target.barrier(b, loc); // earlier users of the scratch are done
    if (!shape.aInRegisters)
      writeTensorToShared(b, loc, target, layoutOf(aTy), {M, K}, a, 0);
    if (!shape.bInRegisters)
      writeTensorToShared(b, loc, target, layoutOf(bTy), {K, N}, bv, bBase,
                          /*transposed=*/true);
    target.barrier(b, loc);
  }
  MfmaOperand x = shape.aInRegisters
                      ? MfmaOperand(layoutOf(aTy), a, 0)
                      : MfmaOperand(space, 0, K);
  MfmaOperand y = shape.bInRegisters
                      ? MfmaOperand(layoutOf(bTy), bv, 1)
                      : MfmaOperand(space, bBase, K);

  ThreadIds ids = threadIds(b, loc, target);
  Value lane32 = b.create<arith::AndIOp>(loc, ids.lane, i32Const(b, loc, 31));
  Value half = b.create<arith::ShRUIOp>(loc, ids.lane, i32Const(b, loc, 5));
  Value kLane = b.create<arith::ShLIOp>(loc, half, i32Const(b, loc, 2));
  auto coords = elementCoords(b, loc, dLayout, ids);

  // Sums in fp32 (fp16 results rounded once at the end, as mma.sync does).
  Type f32 = b.getF32Type();
  auto accTy = VectorType::get({16}, f32);
  int tiles = int(c.size()) / 16;
  SmallVector<Value> acc, aRow, bCol;
  SmallVector<std::pair<int32_t, int32_t>> origin; // thread 0's (row, col)
  for (int t = 0; t < tiles; ++t) {
    Value v = b.create<LLVM::PoisonOp>(loc, accTy);
    for (int r = 0; r < 16; ++r) {
      Value x = c[16 * t + r];
      if (x.getType() != f32)
        x = b.create<arith::ExtFOp>(loc, f32, x);
      v = b.create<LLVM::InsertElementOp>(loc, v, x, i32Const(b, loc, r));
    }
    acc.push_back(v);
    std::vector<int32_t> rc = dLayout.apply({{gpu::kRegister, 16 * t}});
    origin.push_back({rc[0], rc[1]});
    // Register 16t holds the tile's first row plus 4 (l / 32) and first
    // column plus l % 32 (transposed: the other way round); this lane's A
    // row and B column are the tile's first plus l % 32.
    Value row = coords[16 * t][0], col = coords[16 * t][1];
    if (shape.transposed)
      col = b.create<arith::AddIOp>(
          loc, b.create<arith::SubIOp>(loc, col, kLane), lane32);
    else
      row = b.create<arith::AddIOp>(
          loc, b.create<arith::SubIOp>(loc, row, kLane), lane32);
    aRow.push_back(row);
    bCol.push_back(col);
  }
  bool bf16 = aElt.isBF16();
  // K steps outermost: a step's operands are dead after it.
  for (int32_t k0 = 0; k0 < K; k0 += 8) {
    for (int t = 0; t < tiles; ++t) {
      Value xa = x.fragment(b, loc, origin[t].first, aRow[t], k0, kLane);
      Value yb = y.fragment(b, loc, origin[t].second, bCol[t], k0, kLane);
      acc[t] = shape.transposed
                   ? target.amd()->mfma32x32x8(b, loc, yb, xa, acc[t], bf16)
                   : target.amd()->mfma32x32x8(b, loc, xa, yb, acc[t], bf16);
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
