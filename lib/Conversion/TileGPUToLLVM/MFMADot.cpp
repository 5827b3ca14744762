//===- MFMADot.cpp - Dots on AMD's matrix cores ---------------------------===//
//
// d = a * b + c on 32x32 MFMA instructions (fp16, bf16 and fp32 into fp32,
// int8 into int32; fp64 into fp64 on 16x16 ones, their results one row per
// register): the accumulator is in mfmaAccumulatorLayout, each wave
// holding whole 32x32 tiles, transposed or not. For each K step of 2P, lane
// l needs the P elements along K of A's row (and B's column) l % 32 from K
// P (l / 32) on: the instruction's operand layout (mfmaOperandLayout; P is
// the chip's mfmaKWidth).
//
// An operand already in that layout (the scores of attention, in the
// transposed accumulator of the dot before) is taken from its registers.
// Any other is staged in shared memory in rows along the dimension its
// registers run along (Staging): A as M x K and B as N x K when K is, each
// lane then reading its K in vectors; B as K x N when N is (a row-major B),
// written in vectors and read an element at a time, or on gfx950 with its
// transposed LDS reads (8 bytes a lane, handed out across 16 lanes: each
// lane gets its column's run of K). Padding after every 128 bytes of rows,
// as wide as a lane's read, keeps both free of bank conflicts. gfx950's
// double-K instructions (16-bit: 8 of K a lane, int8: 16) go first where K
// allows.
//
// The sum over K may take K in any order both operands share. With both
// staged, the lanes of half h (l / 32) take K from h K / 2 on, P per step:
// a lane's K for all steps is one run, read 16 bytes (ds_read_b128) at a
// time. With one operand in registers both follow the instruction's order
// (K step s, half h: from 2 P s + P h), read P elements at a time.
//
// A transposed accumulator is the same instruction with the operands'
// registers swapped: it computes D^T = B^T A^T (the formats of a mixed
// 8-bit float pair swapped with them).
//
//===----------------------------------------------------------------------===//
#include "DotOpToLLVM.h"
#include "SharedAccess.h"
#include "tessel/Conversion/TileGPUToLLVM/AmdTargetHooks.h"
#include "tessel/Dialect/TileGPU/IR/AmdLayouts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <map>
#include <optional>

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

std::optional<MfmaDotShape>
gpu::lowering::mfmaDotShape(tile::DotOp dot, const gpu::AmdTargetHooks &amd) {
  auto aTy = dot.getA().getType(), bTy = dot.getB().getType();
  int32_t M = aTy.getDimSize(0), K = aTy.getDimSize(1), N = bTy.getDimSize(1);
  Type aElt = aTy.getElementType(), bElt = bTy.getElementType();
  Type accElt = dot.getD().getType().getElementType();
  gpu::MfmaInputs inputs;
  if (aElt.isF64() && bElt.isF64() && accElt.isF64())
    inputs = gpu::MfmaInputs::F64;
  else if ((aElt.isF16() || aElt.isBF16()) && aElt == bElt &&
      (accElt.isF32() || (accElt.isF16() && aElt.isF16())))
    inputs = aElt.isF16() ? gpu::MfmaInputs::F16 : gpu::MfmaInputs::BF16;
  else if (aElt.isF32() && bElt.isF32() && accElt.isF32())
    inputs = gpu::MfmaInputs::F32;
  else if (aElt.isInteger(8) && bElt.isInteger(8) && accElt.isInteger(32))
    inputs = gpu::MfmaInputs::I8;
  else if (tile::isFP8Type(aElt) && tile::isFP8Type(bElt) && accElt.isF32()) {
    // Only the chip's own formats are left in dots (tile-expand-fp8).
    bool aE5 = tile::isE5M2Type(aElt), bE5 = tile::isE5M2Type(bElt);
    inputs = aE5 ? (bE5 ? gpu::MfmaInputs::BF8_BF8 : gpu::MfmaInputs::BF8_FP8)
                 : (bE5 ? gpu::MfmaInputs::FP8_BF8 : gpu::MfmaInputs::FP8_FP8);
  } else
    return std::nullopt;
  LinearLayout d = layoutOf(dot.getD().getType());
  // The wider instruction first where K allows, as convert-tile-to-tilegpu
  // chooses (its mfma-fp8-wide-k-width).
  bool doubles = inputs == gpu::MfmaInputs::F64; // 16x16 only
  for (int32_t kWidth : {amd.mfmaWideKWidth(inputs), amd.mfmaKWidth(inputs)})
  for (int32_t instr : {32, 16}) {
    if (!kWidth || K % (64 / instr * kWidth) || (doubles && instr != 16))
      continue;
    for (bool transposed : {false, true})
      if (auto warps = gpu::mfmaAccumulatorWarps(d, {M, N}, transposed, instr,
                                                 doubles)) {
        MfmaDotShape shape{*warps, inputs, kWidth, instr, transposed,
                           false,  false, amd.hasTransposedLdsReads()};
        shape.aInRegisters = layoutOf(aTy) == gpu::mfmaOperandLayout(
                                                  0, {M, K}, *warps, kWidth,
                                                  instr);
        shape.bInRegisters = layoutOf(bTy) == gpu::mfmaOperandLayout(
                                                  1, {K, N}, *warps, kWidth,
                                                  instr);
        return shape;
      }
  }
  return std::nullopt;
}

namespace {

/// How an operand is staged: rows along K (M x K for A, N x K for B) when
/// its registers run along K, so that a thread's writes are vectors and a
/// lane's K run is one read; else rows along M or N (K x M, K x N: B as a
/// row-major K x N block loads), written in vectors too and read an
/// element at a time. Padding between groups of rows (stagingOf) spreads
/// the lanes reading a column of rows over the banks.
struct Staging {
  bool kRows;
  int64_t rowElems; ///< a row's elements, padding excluded
  RowPadding padding;
  int64_t bytes;

  /// The element index of (row, column) (i32 each).
  Value index(OpBuilder &b, Location loc, Value row, Value col) const {
    return paddedIndex(b, loc, row, col, int32_t(rowElems), padding);
  }
  /// The alignment (bytes, at most 16) every row start has.
  int64_t alignment(int64_t e) const {
    int64_t bits = rowElems * e | padding.elems * e | 16;
    return bits & -bits;
  }
};

/// Whether both operands are staged with each lane group's K one run that
/// starts 16-byte aligned, read 16 bytes at a time (see lowerMfmaDot).
bool wideRuns(tile::DotOp dot, const MfmaDotShape &shape) {
  int32_t K = dot.getA().getType().getDimSize(1), G = 64 / shape.instr;
  return !shape.aInRegisters && !shape.bInRegisters &&
         (int64_t(K / G) * storageBytes(dot.getA().getType().getElementType())) %
                 16 == 0;
}

/// Operand `operand` of `dot` as it is staged. A wave's LDS access moves
/// 128 bytes a cycle in lane order: a K-row operand's reads (each lane the
/// same K of its own row, w bytes) meet 128 / w rows at once, and the rows'
/// writes (16-byte vectors along them) 128 bytes of them. w bytes of
/// padding after each 128 bytes of rows (each row, when rows are longer or
/// not a power of two) put both in distinct banks.
Staging stagingOf(tile::DotOp dot, const MfmaDotShape &shape,
                  unsigned operand) {
  RankedTensorType t = operand == 0 ? dot.getA().getType() : dot.getB().getType();
  int32_t k = t.getDimSize(operand == 0 ? 1 : 0);
  int32_t mn = t.getDimSize(operand == 0 ? 0 : 1);
  LinearLayout layout = layoutOf(t);
  bool kRows = true;
  int reg = layout.inIndex(gpu::kRegister);
  if (reg >= 0 && !layout.ins()[reg].bases.empty())
    kRows = layout.ins()[reg].bases[0][operand == 0 ? 1 : 0] != 0;
  int64_t e = storageBytes(t.getElementType());
  int64_t rowElems = kRows ? k : mn, rows = kRows ? mn : k;
  int64_t rowBytes = rowElems * e;
  // K-row reads take 16 bytes (wide runs) or a fragment's P elements; rows
  // along M or N are padded for how the chip reads them.
  int64_t read = wideRuns(dot, shape) ? 16 : shape.kWidth * e;
  int64_t pad =
      kRows ? std::clamp<int64_t>(read, std::max<int64_t>(e, 4), 16)
            : tilegpu::mfmaMNRowPad(e, shape.transposedReads);
  int32_t groupRows = 1;
  if (rowBytes < 128 && llvm::isPowerOf2_64(rowBytes))
    groupRows = int32_t(128 / rowBytes);
  RowPadding padding{groupRows, int32_t(pad / e)};
  int64_t groups = (rows + groupRows - 1) / groupRows;
  return {kRows, rowElems, padding, rows * rowBytes + groups * pad};
}

} // namespace

/// Whether operand `i` of `dot` is written to the scratch: neither in the
/// instruction's registers nor read in place from a pipeline slot.
static bool isStaged(tile::DotOp dot, const MfmaDotShape &shape, unsigned i) {
  return !(i == 0 ? shape.aInRegisters : shape.bInRegisters) &&
         !inPlaceOperand(dot, i);
}

int64_t gpu::lowering::mfmaSharedBytes(tile::DotOp dot,
                                       const MfmaDotShape &shape,
                                       int64_t &bOffset) {
  int64_t aBytes = isStaged(dot, shape, 0) ? stagingOf(dot, shape, 0).bytes : 0;
  bOffset = (aBytes + 15) / 16 * 16;
  return isStaged(dot, shape, 1) ? bOffset + stagingOf(dot, shape, 1).bytes
                                 : aBytes;
}

namespace {

/// Where a thread finds an operand's P elements along K for one
/// instruction: its own registers, or its staged rows in shared memory.
class MfmaOperand {
public:
  /// Registers in the operand layout: the P of (row or column `mn`, K `k0`
  /// on) are those thread 0 of wave 0 holds there.
  MfmaOperand(const LinearLayout &layout, ValueRange values, unsigned operand,
              int32_t kWidth, Type element)
      : values(values.begin(), values.end()), kWidth(kWidth),
        element(element) {
    for (int32_t r = 0; r < layout.inSize(gpu::kRegister); ++r) {
      std::vector<int32_t> rc = layout.apply({{gpu::kRegister, r}});
      registerAt[operand == 0 ? std::pair(rc[0], rc[1])
                              : std::pair(rc[1], rc[0])] = r;
    }
  }
  /// Staged at `base` as `staging` says.
  MfmaOperand(unsigned space, int64_t base, const Staging &staging,
              int32_t kWidth, Type element)
      : space(space), base(base), staging(staging), kWidth(kWidth),
        element(element) {}
  /// In place in the `padded` pipeline slot at `slot` (a shared-memory
  /// pointer) of `type`: the rows the dot would stage, at their padding.
  MfmaOperand(Value slot, tilegpu::SharedBufferType type, unsigned operand,
              int32_t kWidth, Type element)
      : slot(slot),
        staging(Staging{operand == 0 ? !type.getTransposed()
                                     : type.getTransposed(),
                        type.getRowElements(),
                        {type.getPaddedRows(), type.getPadElements()},
                        type.getSlotBytes()}),
        kWidth(kWidth), element(element) {}

  /// The operand of the tile whose thread-0 row (or column) is `mn0`, from
  /// K `kFirst0` on for thread 0; `mn` is this lane's row and `kStart`
  /// (i32) its first K: vector<P x iN>, N the element's width.
  Value fragment(OpBuilder &b, Location loc, int32_t mn0, Value mn,
                 int32_t kFirst0, Value kStart) {
    Type bits = b.getIntegerType(element.getIntOrFloatBitWidth());
    auto operandTy = VectorType::get({kWidth}, bits);
    if (!values.empty()) {
      Value v = b.create<LLVM::PoisonOp>(loc, operandTy);
      for (int32_t j = 0; j < kWidth; ++j) {
        Value x = values[registerAt.at({mn0, kFirst0 + j})];
        if (x.getType() != bits)
          x = b.create<LLVM::BitcastOp>(loc, bits, x);
        v = b.create<LLVM::InsertElementOp>(loc, v, x, i32Const(b, loc, j));
      }
      return v;
    }
    int64_t e = storageBytes(element), bytes = kWidth * e;
    // The address of element (mn, kStart + dk) of K rows, else (kStart + dk,
    // mn): one lane address and thread 0's constant offset in a pipeline
    // slot where they split (slotLaneAddress), else from the index (with
    // kStart + dk computed where `addK`).
    Value laneAddr =
        slot ? slotLaneAddress(b, loc, mn0, mn, kFirst0, kStart) : Value();
    auto elementAt = [&](int32_t dk, bool addK) -> Value {
      if (laneAddr)
        return b.create<LLVM::GEPOp>(
            loc, slot.getType(), b.getI8Type(), laneAddr,
            ArrayRef<LLVM::GEPArg>{int32_t(
                e * (staging->kRows ? slotIndex(mn0, kFirst0 + dk)
                                    : slotIndex(kFirst0 + dk, mn0)))});
      Value k = addK ? b.create<arith::AddIOp>(loc, kStart, i32Const(b, loc, dk))
                           .getResult()
                     : kStart;
      return address(b, loc,
                     staging->kRows ? staging->index(b, loc, mn, k)
                                    : staging->index(b, loc, k, mn),
                     e);
    };
    if (!staging->kRows) {
      if (Value v = transposedFragment(b, loc, mn0, mn, kFirst0, kStart))
        return v;
      // Rows along M or N: element (kStart + j, mn) of each of P rows.
      Value v = b.create<LLVM::PoisonOp>(loc, operandTy);
      for (int32_t j = 0; j < kWidth; ++j) {
        Value x = b.create<LLVM::LoadOp>(loc, bits, elementAt(j, true), e);
        v = b.create<LLVM::InsertElementOp>(loc, v, x, i32Const(b, loc, j));
      }
      return v;
    }
    // P elements from (mn, kStart): within the 16 aligned bytes that hold
    // them where rows and K runs are 16-byte aligned (one load for several
    // steps), else alone.
    if (bytes >= 16 || staging->alignment(e) < 16 || !wideRuns) {
      // Aligned to the fragment up to 16 bytes and to the rows' starts.
      return b.create<LLVM::LoadOp>(
                 loc, operandTy, elementAt(0, false),
                 std::min({bytes, int64_t(16), staging->alignment(e)}))
          .getResult();
    }
    // Thread 0's offset within the 16 bytes is every lane's.
    int32_t per16 = int32_t(16 / e), within = kFirst0 % per16;
    Value &wide = loaded[{mn0, kFirst0 - within}];
    if (!wide) {
      Value addr;
      if (laneAddr) {
        addr = elementAt(-within, false);
      } else {
        Value idx = staging->index(b, loc, mn, kStart);
        Value start =
            b.create<arith::SubIOp>(loc, idx, i32Const(b, loc, within));
        Value group =
            b.create<arith::DivUIOp>(loc, start, i32Const(b, loc, per16));
        addr = address(b, loc, group, 16);
      }
      wide = b.create<LLVM::LoadOp>(loc, VectorType::get({per16}, bits), addr,
                                    16);
    }
    SmallVector<int32_t> lanes;
    for (int32_t j = 0; j < kWidth; ++j)
      lanes.push_back(within + j);
    return b.create<LLVM::ShuffleVectorOp>(loc, wide, wide, lanes);
  }

  /// Whether each lane's K runs start 16-byte aligned in every step, so
  /// that fragments come out of 16-byte loads.
  bool wideRuns = false;
  /// The chip's hooks, for its transposed LDS reads.
  const gpu::AmdTargetHooks *amd = nullptr;

private:
  /// Rows along M or N read with the chip's transposed LDS reads (gfx950),
  /// n = 64 / bits elements along K at a time; null where it has none. The
  /// 16 lanes of a group share kStart and hold 16 consecutive columns from
  /// a multiple of 16 (mn & ~15): lane i reads the 8 bytes of columns
  /// n (i % (16 / n)) on of row kStart + i / (16 / n), and gets back its own
  /// column's n rows.
  Value transposedFragment(OpBuilder &b, Location loc, int32_t mn0, Value mn,
                           int32_t kFirst0, Value kStart) {
    unsigned bits = element.getIntOrFloatBitWidth();
    int64_t e = storageBytes(element);
    int32_t per = int32_t(64 / bits);
    if (!amd || (bits != 8 && bits != 16) || kWidth % per ||
        staging->alignment(e) < 8 || mn0 % 16)
      return {};
    int32_t lanesPerRow = 16 / per;
    Value i = b.create<arith::AndIOp>(loc, mn, i32Const(b, loc, 15));
    Value col = b.create<arith::AddIOp>(
        loc, b.create<arith::SubIOp>(loc, mn, i),
        b.create<arith::MulIOp>(
            loc, b.create<arith::RemUIOp>(loc, i, i32Const(b, loc, lanesPerRow)),
            i32Const(b, loc, per)));
    Value row = b.create<arith::AddIOp>(
        loc, kStart,
        b.create<arith::DivUIOp>(loc, i, i32Const(b, loc, lanesPerRow)));
    // In a slot of unpadded row groups the index is linear: one lane
    // address, thread 0's part as the instructions' offsets.
    Value laneAddr = slot && staging->padding.rows == 1
                         ? slotLaneAddress(b, loc, mn0, col, kFirst0, row)
                         : Value();
    SmallVector<Value> chunks;
    for (int32_t dk = 0; dk < kWidth; dk += per) {
      Value addr;
      if (laneAddr) {
        addr = b.create<LLVM::GEPOp>(
            loc, slot.getType(), b.getI8Type(), laneAddr,
            ArrayRef<LLVM::GEPArg>{int32_t(e * slotIndex(kFirst0 + dk, mn0))});
      } else {
        Value k = b.create<arith::AddIOp>(loc, row, i32Const(b, loc, dk));
        addr = address(b, loc, staging->index(b, loc, k, col), e);
      }
      Value v = amd->transposedLdsRead(b, loc, addr, bits);
      if (!v)
        return {};
      chunks.push_back(v);
    }
    // Concatenated along K.
    while (chunks.size() > 1) {
      SmallVector<Value> next;
      for (size_t c = 0; c + 1 < chunks.size(); c += 2) {
        int32_t n = int32_t(cast<VectorType>(chunks[c].getType()).getNumElements());
        SmallVector<int32_t> order;
        for (int32_t j = 0; j < 2 * n; ++j)
          order.push_back(j);
        next.push_back(b.create<LLVM::ShuffleVectorOp>(loc, chunks[c],
                                                       chunks[c + 1], order));
      }
      chunks = next;
    }
    return chunks[0];
  }

  /// In a pipeline slot, whose address changes every iteration: the address
  /// of this lane's part of an element's index (from the lane's row or
  /// column minus thread 0's, `mn0`, and its K minus thread 0's, `kFirst0`),
  /// to which thread 0's part (slotIndex) adds a constant the instructions
  /// take as their offset, so one address register serves every fragment.
  /// The padding's row groups split too where thread 0's row (K rows), or
  /// the lane's K (a multiple of the fragment's P), starts a group. Null
  /// where neither does.
  Value slotLaneAddress(OpBuilder &b, Location loc, int32_t mn0, Value mn,
                        int32_t kFirst0, Value kStart) {
    int32_t groupRows = staging->padding.rows;
    if (staging->kRows ? mn0 % groupRows : kWidth % groupRows)
      return {};
    Value mnLane = b.create<arith::SubIOp>(loc, mn, i32Const(b, loc, mn0));
    Value kLane =
        b.create<arith::SubIOp>(loc, kStart, i32Const(b, loc, kFirst0));
    Value lane = staging->kRows ? staging->index(b, loc, mnLane, kLane)
                                : staging->index(b, loc, kLane, mnLane);
    int64_t e = storageBytes(element);
    return b.create<LLVM::GEPOp>(
        loc, slot.getType(), b.getI8Type(), slot,
        ValueRange{b.create<arith::MulIOp>(loc, lane, i32Const(b, loc, e))});
  }
  /// Staging::index of constants (the padded rows of a slot).
  int64_t slotIndex(int64_t row, int64_t col) const {
    int64_t groupRows = staging->padding.rows, pad = staging->padding.elems;
    int64_t stride = staging->rowElems + (groupRows == 1 ? pad : 0);
    return row * stride + (groupRows > 1 ? row / groupRows * pad : 0) + col;
  }

  /// The address of element `idx` (i32) of the staged rows, `bytes` each
  /// (an element, or 16-byte groups of them).
  Value address(OpBuilder &b, Location loc, Value idx, int64_t bytes) const {
    if (!slot)
      return sharedElement(b, loc, space, base, idx, bytes);
    return b.create<LLVM::GEPOp>(loc, slot.getType(),
                                 b.getIntegerType(8 * bytes), slot,
                                 ValueRange{idx});
  }

  Value slot; ///< a pipeline slot's address; else staged at `base`
  SmallVector<Value> values;
  std::map<std::pair<int32_t, int32_t>, int32_t> registerAt;
  std::map<std::pair<int32_t, int32_t>, Value> loaded;
  unsigned space = 0;
  int64_t base = 0;
  std::optional<Staging> staging;
  int32_t kWidth;
  Type element;
};

} // namespace

SmallVector<Value> gpu::lowering::lowerMfmaDot(OpBuilder &b, Location loc,
                                               const GPUTargetInfo &target,
                                               tile::DotOp op,
                                               const MfmaDotShape &shape,
                                               ValueRange a, ValueRange bv,
                                               ValueRange c,
                                               ArrayRef<Value> slots) {
  auto aTy = op.getA().getType(), bTy = op.getB().getType();
  int32_t M = aTy.getDimSize(0), K = aTy.getDimSize(1), N = bTy.getDimSize(1);
  Type aElt = aTy.getElementType();
  Type accElt = op.getD().getType().getElementType();
  LinearLayout dLayout = layoutOf(op.getD().getType());
  int64_t bBase;
  unsigned space = target.sharedAddressSpace();

  Staging aStaging = stagingOf(op, shape, 0),
          bStaging = stagingOf(op, shape, 1);
  bool aStaged = isStaged(op, shape, 0), bStaged = isStaged(op, shape, 1);
  if (aStaged || bStaged) {
    mfmaSharedBytes(op, shape, bBase);
    target.barrier(b, loc); // earlier users of the scratch are done
    // A's rows along K are its own rows; B's are its columns.
    if (aStaged)
      writeTensorToShared(b, loc, target, layoutOf(aTy), {M, K}, a, 0,
                          /*transposed=*/!aStaging.kRows, aStaging.padding);
    if (bStaged)
      writeTensorToShared(b, loc, target, layoutOf(bTy), {K, N}, bv, bBase,
                          /*transposed=*/bStaging.kRows, bStaging.padding);
    target.barrier(b, loc);
  }
  int32_t P = shape.kWidth;
  // Operands a pipeline left in slots are read there (the barrier that
  // starts the pipeline's iteration published them).
  auto operandOf = [&](unsigned i, ValueRange values, const Staging &staging,
                       int64_t stagedAt) {
    Type elt = i == 0 ? aElt : bTy.getElementType();
    if (i == 0 ? shape.aInRegisters : shape.bInRegisters)
      return MfmaOperand(layoutOf(i == 0 ? aTy : bTy), values, i, P, elt);
    if (slots[i])
      return MfmaOperand(slots[i], inPlaceOperand(op, i).getBuffer().getType(),
                         i, P, elt);
    return MfmaOperand(space, stagedAt, staging, P, elt);
  };
  MfmaOperand x = operandOf(0, a, aStaging, 0);
  MfmaOperand y = operandOf(1, bv, bStaging, bBase);
  // Both staged: lane group g (l / instr, of G = 64 / instr) takes K from
  // g K / G on (runs 16-byte aligned when K / G elements are whole 16
  // bytes).
  int32_t instr = shape.instr, G = 64 / instr, R = instr * instr / 64;
  bool runs = !shape.aInRegisters && !shape.bInRegisters;
  x.wideRuns = y.wideRuns = wideRuns(op, shape);
  if (shape.transposedReads)
    x.amd = y.amd = target.amd();

  ThreadIds ids = threadIds(b, loc, target);
  Value inBlock =
      b.create<arith::AndIOp>(loc, ids.lane, i32Const(b, loc, instr - 1));
  Value group = b.create<arith::DivUIOp>(loc, ids.lane, i32Const(b, loc, instr));
  // A tile's first register holds its row (column) 4 g in lane group g; 64-bit
  // results, row g.
  bool doubles = shape.inputs == gpu::MfmaInputs::F64;
  Value accLane = doubles ? group
                          : b.create<arith::ShLIOp>(loc, group,
                                                    i32Const(b, loc, 2))
                                .getResult();
  Value kGroup = b.create<arith::MulIOp>(loc, group,
                                        i32Const(b, loc, runs ? K / G : P));
  auto coords = elementCoords(b, loc, dLayout, ids);

  // Sums in fp32 (fp16 results rounded once at the end, as mma.sync does),
  // int8 products in int32, fp64 in fp64.
  bool integer = shape.inputs == gpu::MfmaInputs::I8;
  Type f32 = b.getF32Type();
  Type sumElt = integer ? Type(b.getI32Type()) : doubles ? b.getF64Type() : f32;
  auto accTy = VectorType::get({R}, sumElt);
  int tiles = int(c.size()) / R;
  SmallVector<Value> acc, aRow, bCol;
  SmallVector<std::pair<int32_t, int32_t>> origin; // thread 0's (row, col)
  for (int t = 0; t < tiles; ++t) {
    Value v = b.create<LLVM::PoisonOp>(loc, accTy);
    for (int r = 0; r < R; ++r) {
      Value x = c[R * t + r];
      if (x.getType() != sumElt)
        x = b.create<arith::ExtFOp>(loc, f32, x);
      v = b.create<LLVM::InsertElementOp>(loc, v, x, i32Const(b, loc, r));
    }
    acc.push_back(v);
    std::vector<int32_t> rc = dLayout.apply({{gpu::kRegister, R * t}});
    origin.push_back({rc[0], rc[1]});
    // Register Rt holds the tile's first row plus 4 (l / instr) (64-bit
    // results: plus l / 16) and first
    // column plus l % instr (transposed: the other way round); this lane's
    // A row and B column are the tile's first plus l % instr.
    Value row = coords[R * t][0], col = coords[R * t][1];
    if (shape.transposed)
      col = b.create<arith::AddIOp>(
          loc, b.create<arith::SubIOp>(loc, col, accLane), inBlock);
    else
      row = b.create<arith::AddIOp>(
          loc, b.create<arith::SubIOp>(loc, row, accLane), inBlock);
    aRow.push_back(row);
    bCol.push_back(col);
  }
  // K steps outermost: a step's operands are dead after it. Step s takes
  // K from P s + g K / G (runs) or G P s + P g on.
  const gpu::AmdTargetHooks &amd = *target.amd();
  // Swapped operands swap the formats of a mixed 8-bit float pair too.
  gpu::MfmaInputs swappedInputs = shape.inputs;
  if (shape.inputs == gpu::MfmaInputs::FP8_BF8)
    swappedInputs = gpu::MfmaInputs::BF8_FP8;
  else if (shape.inputs == gpu::MfmaInputs::BF8_FP8)
    swappedInputs = gpu::MfmaInputs::FP8_BF8;
  for (int32_t s = 0; s < K / (G * P); ++s) {
    int32_t k0 = runs ? P * s : G * P * s;
    Value kStart = b.create<arith::AddIOp>(loc, kGroup, i32Const(b, loc, k0));
    for (int t = 0; t < tiles; ++t) {
      Value xa = x.fragment(b, loc, origin[t].first, aRow[t], k0, kStart);
      Value yb = y.fragment(b, loc, origin[t].second, bCol[t], k0, kStart);
      acc[t] = shape.transposed
                   ? amd.mfma(b, loc, swappedInputs, instr, yb, xa, acc[t])
                   : amd.mfma(b, loc, shape.inputs, instr, xa, yb, acc[t]);
    }
  }
  SmallVector<Value> d;
  for (int t = 0; t < tiles; ++t)
    for (int r = 0; r < R; ++r) {
      Value x = b.create<LLVM::ExtractElementOp>(loc, acc[t],
                                                 i32Const(b, loc, r));
      if (accElt != sumElt)
        x = b.create<arith::TruncFOp>(loc, accElt, x);
      d.push_back(x);
    }
  return d;
}
