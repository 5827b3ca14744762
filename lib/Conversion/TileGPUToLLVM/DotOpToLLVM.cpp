//===- DotOpToLLVM.cpp - tile.dot on mma.sync or FMA --------------------------===//
//
// d = a * b + c per thread: warpgroup MMA (WGMMA.cpp) where the dot was
// given a warpgroup layout, mma.sync m16n8k16 for fp16/bf16 into fp32,
// mma.sync m16n8k8 / m16n8k32 for tf32 (once or three times) / int8
// (MMASyncFragments.cpp),
// otherwise a loop over K per accumulator element.
//
//===----------------------------------------------------------------------===//
#include "DotOpToLLVM.h"
#include "tessel/Dialect/TileGPU/IR/AmdLayouts.h"
#include "tessel/Conversion/TileGPUToLLVM/NvidiaTargetHooks.h"
#include "OffsetBits.h"
#include "PatternTileGPUToLLVM.h"
#include "SharedAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <map>

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

/// Bytes of shared memory a dot stages its operands in: A row-major, then B
/// column-major (each thread reads its rows of A and columns of B along K);
/// for warpgroup MMA, wgmmaTiles.
int64_t gpu::lowering::dotSharedBytes(tile::DotOp dot, int64_t &bOffset) {
  if (auto warps = tilegpu::wgmmaWarps(dot)) {
    WgmmaTiles t = wgmmaTiles(dot, *warps);
    bOffset = t.bBase;
    return t.bytes;
  }
  auto a = dot.getA().getType(), b = dot.getB().getType();
  int64_t aBytes = a.getNumElements() * storageBytes(a.getElementType());
  bOffset = (aBytes + 15) / 16 * 16;
  return bOffset + b.getNumElements() * storageBytes(b.getElementType());
}

bool gpu::lowering::aInAccumulatorRegisters(tile::DotOp dot) {
  auto aTy = dot.getA().getType();
  int32_t M = aTy.getDimSize(0), K = aTy.getDimSize(1);
  int32_t N = dot.getB().getType().getDimSize(1);
  LinearLayout dLayout = layoutOf(dot.getD().getType());
  int32_t warps = dLayout.inSize(gpu::kWarp);
  return K % 16 == 0 &&
         dLayout == gpu::mmaAccumulatorLayout({M, N}, {warps, 1}) &&
         layoutOf(aTy) == gpu::mmaAccumulatorLayout({M, K}, {warps, 1});
}

bool gpu::lowering::wgmmaAInRegisters(tile::DotOp dot,
                                      const std::vector<int32_t> &warps) {
  auto aTy = dot.getA().getType();
  int32_t M = aTy.getDimSize(0), K = aTy.getDimSize(1);
  return warps.size() == 2 && warps[1] == 1 && K % 16 == 0 &&
         storageBytes(aTy.getElementType()) == 2 &&
         layoutOf(aTy) == gpu::wgmmaAccumulatorLayout({M, K}, warps);
}

RegisterAFragments::RegisterAFragments(const LinearLayout &layout,
                                       ValueRange values, Type element)
    : values(values.begin(), values.end()), element(element) {
  for (int32_t r = 0; r < layout.inSize(gpu::kRegister); ++r) {
    std::vector<int32_t> rc = layout.apply({{gpu::kRegister, r}});
    registerAt.try_emplace({rc[0], rc[1]}, r);
  }
}

Value RegisterAFragments::pair(OpBuilder &b, Location loc, int32_t row,
                               int32_t k) const {
  Value v = b.create<LLVM::PoisonOp>(loc, VectorType::get({2}, element));
  for (int32_t j = 0; j < 2; ++j)
    v = b.create<LLVM::InsertElementOp>(
        loc, v, values[registerAt.at({row, k + j})], i32Const(b, loc, j));
  return b.create<LLVM::BitcastOp>(loc, b.getI32Type(), v);
}

SmallVector<Value, 4> RegisterAFragments::fragment(OpBuilder &b, Location loc,
                                                   int32_t row0,
                                                   int32_t k0) const {
  return {pair(b, loc, row0, k0), pair(b, loc, row0 + 8, k0),
          pair(b, loc, row0, k0 + 8), pair(b, loc, row0 + 8, k0 + 8)};
}

namespace {

/// An element of one type as another (tl.dot converts its inputs to the
/// accumulator's type before multiplying).
Value convertElement(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (isa<FloatType>(from) && isa<FloatType>(to))
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? b.create<arith::ExtFOp>(loc, to, v).getResult()
               : b.create<arith::TruncFOp>(loc, to, v).getResult();
  if (isa<IntegerType>(from) && isa<FloatType>(to))
    return b.create<arith::SIToFPOp>(loc, to, v);
  if (isa<IntegerType>(from) && isa<IntegerType>(to))
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? b.create<arith::ExtSIOp>(loc, to, v).getResult()
               : b.create<arith::TruncIOp>(loc, to, v).getResult();
  return b.create<arith::FPToSIOp>(loc, to, v);
}

/// d = a * b + c. On warpgroup MMA, lowerWgmmaDot; tf32 and 8-bit inputs on
/// mma.sync, lowerMmaSyncFragmentsDot. Otherwise both operands
/// are staged in shared memory; then either
/// each warp runs 16x8x16 tensor-core MMAs over the accumulator tiles its
/// layout gives it (the mma.sync accumulator layout, fp16/bf16 into fp32),
/// or each thread runs a loop over K for the accumulator elements it holds.
struct DotLowering : TileGPUPattern<tile::DotOp> {
  using TileGPUPattern::TileGPUPattern;

  LogicalResult
  matchAndRewrite(tile::DotOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto aTy = op.getA().getType(), bTy = op.getB().getType();
    int32_t M = aTy.getDimSize(0), K = aTy.getDimSize(1), N = bTy.getDimSize(1);
    Type aElt = aTy.getElementType(), bElt = bTy.getElementType();
    Type accElt = op.getD().getType().getElementType();
    // Operands a pipeline left in shared memory are read from their slot.
    tilegpu::LocalLoadOp inPlace[2] = {inPlaceOperand(op, 0),
                                       inPlaceOperand(op, 1)};
    Value slots[2];
    // Slots holding their operand transposed: A M-major, B K-major.
    bool transposed[2] = {false, false};
    for (int i = 0; i < 2; ++i)
      if (inPlace[i]) {
        slots[i] = slotAddress(rw, loc,
                               rw.getRemappedValue(inPlace[i].getBuffer()),
                               rw.getRemappedValue(inPlace[i].getSlot()),
                               inPlace[i].getBuffer().getType());
        transposed[i] = inPlace[i].getBuffer().getType().getTransposed();
      }
    if (auto warps = tilegpu::wgmmaWarps(op); warps && (target.nvidia() && target.nvidia()->hasWarpgroupMma())) {
      rw.replaceOpWithMultiple(
          op, {lowerWgmmaDot(rw, loc, target, op, adaptor.getA(),
                             adaptor.getB(), adaptor.getC(), *warps, slots[0],
                             slots[1], transposed[0], transposed[1])});
      return success();
    }
    LinearLayout dLayout = layoutOf(op.getD().getType());
    std::optional<tilegpu::MmaInputs> inputs = tilegpu::mmaSyncInputs(op);
    if (inputs && (*inputs == tilegpu::MmaInputs::TF32 ||
                   *inputs == tilegpu::MmaInputs::TF32x3 ||
                   *inputs == tilegpu::MmaInputs::S8 ||
                   *inputs == tilegpu::MmaInputs::FP8) &&
        (target.nvidia() && target.nvidia()->hasMma16816()) && K % tilegpu::mmaSyncK(*inputs) == 0)
      if (auto warps = gpu::mmaAccumulatorWarps(dLayout, {M, N})) {
        LinearLayout slotLayouts[2];
        for (int i = 0; i < 2; ++i)
          if (slots[i])
            slotLayouts[i] = inPlace[i].getBuffer().getType().getSlotLayout();
        rw.replaceOpWithMultiple(
            op, {lowerMmaSyncFragmentsDot(rw, loc, target, op, *inputs, *warps,
                                          adaptor.getA(), adaptor.getB(),
                                          adaptor.getC(), slots, slotLayouts)});
        return success();
      }
    if (auto mfma = target.amd() ? mfmaDotShape(op, *target.amd()) : std::nullopt) {
      int64_t bOffset;
      if (mfmaSharedBytes(op, *mfma, bOffset) > 0 &&
          !op->hasAttr(kScratchAttr))
        return rw.notifyMatchFailure(op, "stages operands without scratch");
      rw.replaceOpWithMultiple(op, {lowerMfmaDot(rw, loc, target, op, *mfma,
                                                 adaptor.getA(), adaptor.getB(),
                                                 adaptor.getC(), slots)});
      return success();
    }
    int64_t bBase;
    dotSharedBytes(op, bBase);
    ValueRange c = adaptor.getC();
    bool mma = (target.nvidia() && target.nvidia()->hasMma16816()) && (aElt.isF16() || aElt.isBF16()) &&
               aElt == bElt &&
               (accElt.isF32() || (accElt.isF16() && aElt.isF16())) &&
               gpu::mmaAccumulatorWarps(dLayout, {M, N}).has_value();
    if (!mma)
      slots[0] = slots[1] = Value();
    // Where each operand sits in shared memory for ldmatrix: its pipeline
    // slot, or (mma.sync operands in registers) the same swizzled layout in
    // the scratch, written in vectors without bank conflicts.
    LinearLayout slotLayout[2];
    bool staged[2] = {false, false};
    for (int i = 0; i < 2; ++i) {
      if (slots[i]) {
        slotLayout[i] = inPlace[i].getBuffer().getType().getSlotLayout();
        continue;
      }
      auto enc = mma ? tilegpu::dotOperandSharedEncoding(op, i) : std::nullopt;
      if (!enc)
        continue;
      int32_t rows = i == 0 ? M : K, cols = i == 0 ? K : N;
      int32_t bytes = storageBytes(i == 0 ? aElt : bElt);
      slotLayout[i] =
          enc->order == tilegpu::SharedOrder::KMajor
              ? gpu::wgmmaOperandLayout(rows, cols, bytes, enc->swizzle)
              : gpu::wgmmaMNMajorOperandLayout(rows, cols, bytes, enc->swizzle);
      staged[i] = true;
    }

    // A in the accumulator layout of a dot whose warps all split M: its
    // fragments are the thread's own registers, paired.
    bool aInRegisters = mma && !slots[0] && aInAccumulatorRegisters(op);
    if (aInRegisters)
      staged[0] = false;
    if ((!slots[0] && !aInRegisters) || !slots[1]) {
      if (!op->hasAttr(kScratchAttr))
        return rw.notifyMatchFailure(op, "stages operands without scratch");
      target.barrier(rw, loc);
      if (staged[0])
        writeOperandToShared(rw, loc, target, layoutOf(aTy), slotLayout[0],
                             adaptor.getA(), 0);
      else if (!slots[0] && !aInRegisters)
        writeTensorToShared(rw, loc, target, layoutOf(aTy), {M, K},
                            adaptor.getA(), 0);
      if (staged[1])
        writeOperandToShared(rw, loc, target, layoutOf(bTy), slotLayout[1],
                             adaptor.getB(), bBase);
      else if (!slots[1])
        writeTensorToShared(rw, loc, target, layoutOf(bTy), {K, N},
                            adaptor.getB(), bBase, /*transposed=*/true);
      target.barrier(rw, loc);
      for (int i = 0; i < 2; ++i)
        if (staged[i])
          slots[i] = sharedAddress(rw, loc, target.sharedAddressSpace(),
                                   i32Const(rw, loc, i == 0 ? 0 : bBase));
    }
    ThreadIds ids = threadIds(rw, loc, target);

    SmallVector<Value> d(c.begin(), c.end());
    // 16-bit float results are summed in fp32 and rounded once at the end,
    // on the tensor cores (fp32 accumulators) as in the FMA loop below and
    // on the CPU backend.
    Type sumElt =
        accElt.isF16() || accElt.isBF16() ? rw.getF32Type() : accElt;
    if (sumElt != accElt)
      for (Value &v : d)
        v = rw.create<arith::ExtFOp>(loc, sumElt, v);
    if (mma) {
      // Lane roles of the m16n8k16 fragments: groupID and threadID_in_group.
      Value g = rw.create<arith::ShRUIOp>(loc, ids.lane, i32Const(rw, loc, 2));
      Value t2 = rw.create<arith::ShLIOp>(
          loc, rw.create<arith::AndIOp>(loc, ids.lane, i32Const(rw, loc, 3)),
          i32Const(rw, loc, 1));
      auto coords = elementCoords(rw, loc, dLayout, ids);
      auto i32 = rw.getI32Type();
      // A pair of 16-bit elements along K at (row, k) as one i32; the
      // operands are K-contiguous in shared memory (A row-major, B
      // column-major).
      auto pair = [&](Value rowOrCol, int64_t base, Value kOff) {
        Value idx = rw.create<arith::AddIOp>(
            loc, rw.create<arith::MulIOp>(loc, rowOrCol, i32Const(rw, loc, K)),
            kOff);
        Value pairIdx = rw.create<arith::ShRUIOp>(loc, idx, i32Const(rw, loc, 1));
        return loadShared(rw, loc, target.sharedAddressSpace(), i32, base,
                          pairIdx);
      };
      std::optional<RegisterAFragments> aRegisters;
      if (aInRegisters)
        aRegisters.emplace(layoutOf(aTy), adaptor.getA(), aElt);
      // K steps outermost: a step's fragments are loaded once per row (A)
      // or column (B) of tiles and are dead after it, which keeps the
      // registers live at once to the accumulators plus one step's operands.
      struct Tile {
        int index;
        Value row, row8, col;
        std::vector<int32_t> origin;
      };
      SmallVector<Tile> tiles;
      for (int tile = 0; tile * 4 < int(d.size()); ++tile) {
        if (isCopyRegister(dLayout, tile * 4))
          continue;
        // A's rows are C's (groupID); B's column is the tile's first column
        // plus groupID, where C's c0 sits 2 * threadID_in_group further.
        Value row = coords[tile * 4][0];
        Value col = rw.create<arith::AddIOp>(
            loc, rw.create<arith::XOrIOp>(loc, coords[tile * 4][1], t2), g);
        Value row8 = rw.create<arith::XOrIOp>(loc, row, i32Const(rw, loc, 8));
        tiles.push_back({tile, row, row8, col,
                         dLayout.apply({{gpu::kRegister, tile * 4}})});
      }
      // In place: ldmatrix from the slot's swizzled layout, each lane
      // giving the address of a 16-byte row of one 8x8 matrix. A (M x K)
      // K-major: .x4, lane l gives row (l % 16) of the tile and K column
      // 8 (l / 16) of the step, the four matrices in fragment order a0..a7;
      // M-major (a transposed slot): .x4.trans, lane l gives K row
      // (l % 8) + 8 (l / 16) of the step at row 8 (l / 8 % 2) of the tile.
      // B (K x N) N-major: .trans, lane l gives row k = l % 16 of the step
      // at the tile's first column (.x2), or at 8 (l / 16) past it for two
      // tiles side by side (.x4): b0b1 and b2b3 of each tile; K-major (a
      // transposed slot): without .trans, lane l gives column (l % 8) (and
      // 8 (l / 16) past it for two tiles) at K 8 (l / 8 % 2) of the step.
      auto laneBits = [&](int32_t shift, int32_t mask, int32_t up) -> Value {
        Value v = rw.create<arith::AndIOp>(
            loc, rw.create<arith::ShRUIOp>(loc, ids.lane, i32Const(rw, loc, shift)),
            i32Const(rw, loc, mask));
        return rw.create<arith::ShLIOp>(loc, v, i32Const(rw, loc, up));
      };
      Value lane16 = laneBits(0, 15, 0), lane8 = laneBits(0, 7, 0);
      Value laneHalf = laneBits(4, 1, 3), laneQuarter = laneBits(3, 1, 3);
      LinearLayout inverse[2];
      Value laneOff[2];
      int32_t eltBytes = storageBytes(aElt);
      for (int i = 0; i < 2; ++i)
        if (slots[i]) {
          inverse[i] = slotLayout[i].invert();
          Value row, col; // the lane's part of the operand coordinates
          if (i == 0 && !transposed[0]) {
            row = lane16;
            col = laneHalf;
          } else if (i == 0) {
            row = laneQuarter;
            col = rw.create<arith::OrIOp>(loc, lane8, laneHalf);
          } else if (!transposed[1]) {
            row = lane16;
          } else {
            row = laneQuarter;
            col = lane8;
          }
          laneOff[i] = slotOffset(rw, loc, inverse[i], row, col);
        }
      // ldmatrix transposes the matrices of an operand whose K is not
      // contiguous in its slot: B N-major, A M-major.
      bool transA = transposed[0], transB = !transposed[1];
      auto constOffset = [&](int i, int32_t row, int32_t col) {
        std::string d0 = gpu::dimName(0), d1 = gpu::dimName(1);
        return inverse[i].apply({{d0, row}, {d1, col}})[0];
      };
      // The matrices at the thread's offset XOR `c`.
      auto matrixAt = [&](int i, Value thread, int32_t c, int count,
                          bool trans) {
        Value addr = xorElementAddress(rw, loc, slots[i], thread, c, eltBytes);
        return target.nvidia()->loadMatrix(rw, loc, addr, count, trans);
      };
      // A tile's first row (A) or column (B) is the thread's part (lane and
      // warp bits of the accumulator layout above the tile's 16 rows or 8
      // columns) XOR the tile's origin, so a matrix's offset is the
      // thread's offset XOR a constant per tile and K step
      // (xorElementAddress: the address holds the constant's bits the
      // thread's part cannot have as an immediate). B's tiles whose next
      // tile is this thread's too are loaded in pairs, lanes 16-31 at 8
      // columns further.
      std::set<int32_t> bKeys;
      for (const Tile &t : tiles)
        bKeys.insert(t.origin[1]);
      SmallVector<Value> hw{i32Const(rw, loc, 0), i32Const(rw, loc, 0)};
      hw = hardwarePart(rw, loc, dLayout, gpu::kLane, ids.lane, hw);
      hw = hardwarePart(rw, loc, dLayout, gpu::kWarp, ids.warp, hw);
      Value aThread, bThread, bPairThread;
      if (slots[0]) {
        Value row = rw.create<arith::AndIOp>(loc, hw[0], i32Const(rw, loc, ~15));
        aThread = rw.create<arith::XOrIOp>(
            loc, laneOff[0], slotOffset(rw, loc, inverse[0], row, Value()));
      }
      if (slots[1]) {
        Value col = rw.create<arith::AndIOp>(loc, hw[1], i32Const(rw, loc, ~7));
        bThread = rw.create<arith::XOrIOp>(
            loc, laneOff[1], slotOffset(rw, loc, inverse[1], Value(), col));
        bPairThread = rw.create<arith::XOrIOp>(
            loc, laneOff[1],
            slotOffset(rw, loc, inverse[1], Value(),
                       rw.create<arith::OrIOp>(loc, col, laneHalf)));
      }
      auto aMatrices = [&](int32_t row0, int32_t kk) {
        return matrixAt(0, aThread, constOffset(0, row0 & ~15, kk * 16), 4,
                        transA);
      };
      auto bMatrices = [&](int32_t col0, int32_t kk, int count) {
        bool paired = (col0 & 8) == 0 && bKeys.count(col0 ^ 8);
        return matrixAt(1, paired ? bPairThread : bThread,
                        constOffset(1, kk * 16, col0 & ~7), count, transB);
      };
      for (int kk = 0; kk < K / 16; ++kk) {
        Value k0 = rw.create<arith::AddIOp>(loc, t2, i32Const(rw, loc, kk * 16));
        Value k8 = rw.create<arith::AddIOp>(loc, k0, i32Const(rw, loc, 8));
        std::map<int32_t, SmallVector<Value>> aFrags, bFrags;
        for (const Tile &t : tiles) {
          auto &af = aFrags[t.origin[0]];
          if (af.empty() && slots[0])
            af = aMatrices(t.origin[0], kk);
          else if (af.empty() && aInRegisters)
            af = SmallVector<Value>(
                aRegisters->fragment(rw, loc, t.origin[0], kk * 16));
          else if (af.empty())
            af = {pair(t.row, 0, k0), pair(t.row8, 0, k0), pair(t.row, 0, k8),
                  pair(t.row8, 0, k8)};
          int32_t c0 = t.origin[1];
          auto &bf = bFrags[c0];
          if (bf.empty() && slots[1]) {
            bool pairLow = (c0 & 8) == 0 && bKeys.count(c0 ^ 8);
            bool pairHigh = (c0 & 8) != 0 && bKeys.count(c0 ^ 8);
            if (pairHigh) {
              // Loaded with its lower neighbour.
              SmallVector<Value> m = bMatrices(c0 ^ 8, kk, 4);
              bFrags[c0 ^ 8] = {m[0], m[1]};
              bf = {m[2], m[3]};
            } else if (pairLow) {
              SmallVector<Value> m = bMatrices(c0, kk, 4);
              bf = {m[0], m[1]};
              bFrags[c0 ^ 8] = {m[2], m[3]};
            } else {
              bf = bMatrices(c0, kk, 2);
            }
          } else if (bf.empty()) {
            bf = {pair(t.col, bBase, k0), pair(t.col, bBase, k8)};
          }
          SmallVector<Value> acc(d.begin() + t.index * 4,
                                 d.begin() + t.index * 4 + 4);
          acc = target.nvidia()->mma16816(rw, loc, af, bf, acc, aElt.isBF16());
          for (int i = 0; i < 4; ++i)
            d[t.index * 4 + i] = acc[i];
        }
      }
      // Registers holding copies take their first copy's value.
      for (size_t r = 0; r < d.size(); ++r)
        if (isCopyRegister(dLayout, r))
          d[r] = d[r & ~dLayout.freeBits(gpu::kRegister)];
    } else {
      // One loop over K carries every accumulator element of the thread.
      auto coords = elementCoords(rw, loc, dLayout, ids);
      Value lb = rw.create<arith::ConstantIndexOp>(loc, 0);
      Value ub = rw.create<arith::ConstantIndexOp>(loc, K);
      Value step = rw.create<arith::ConstantIndexOp>(loc, 1);
      auto loop = rw.create<scf::ForOp>(loc, lb, ub, step, d);
      OpBuilder lb2 = OpBuilder::atBlockBegin(loop.getBody());
      Value k = lb2.create<arith::IndexCastOp>(loc, lb2.getI32Type(),
                                               loop.getInductionVar());
      SmallVector<Value> next;
      for (size_t r = 0; r < d.size(); ++r) {
        Value aIdx = lb2.create<arith::AddIOp>(
            loc, lb2.create<arith::MulIOp>(loc, coords[r][0], i32Const(lb2, loc, K)), k);
        Value bIdx = lb2.create<arith::AddIOp>(
            loc, lb2.create<arith::MulIOp>(loc, coords[r][1], i32Const(lb2, loc, K)), k);
        unsigned space = target.sharedAddressSpace();
        Value av = loadShared(lb2, loc, space, aElt, 0, aIdx);
        Value bv = loadShared(lb2, loc, space, bElt, bBase, bIdx);
        av = convertElement(lb2, loc, av, sumElt);
        bv = convertElement(lb2, loc, bv, sumElt);
        Value acc = loop.getRegionIterArgs()[r];
        Value sum = isa<FloatType>(sumElt)
                        ? lb2.create<math::FmaOp>(loc, av, bv, acc).getResult()
                        : lb2.create<arith::AddIOp>(
                              loc, acc, lb2.create<arith::MulIOp>(loc, av, bv))
                              .getResult();
        next.push_back(sum);
      }
      lb2.create<scf::YieldOp>(loc, next);
      d.assign(loop.getResults().begin(), loop.getResults().end());
    }
    if (sumElt != accElt)
      for (Value &v : d)
        v = rw.create<arith::TruncFOp>(loc, accElt, v);
    rw.replaceOpWithMultiple(op, {d});
    return success();
  }
};

/// wgmma.wait_group `pending`; the accumulators it retires pass through.
struct WarpgroupMmaWaitLowering
    : TileGPUPattern<tilegpu::WarpgroupMmaWaitOp> {
  using TileGPUPattern::TileGPUPattern;

  LogicalResult
  matchAndRewrite(tilegpu::WarpgroupMmaWaitOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    SmallVector<Value> flat;
    for (ValueRange registers : adaptor.getValues())
      llvm::append_range(flat, registers);
    SmallVector<Value> waited =
        target.nvidia()->warpgroupMmaWait(rw, op.getLoc(), flat, op.getPending());
    SmallVector<SmallVector<Value>> results;
    size_t at = 0;
    for (ValueRange registers : adaptor.getValues()) {
      results.emplace_back(waited.begin() + at,
                           waited.begin() + at + registers.size());
      at += registers.size();
    }
    rw.replaceOpWithMultiple(op, std::move(results));
    return success();
  }
};

} // namespace

void gpu::lowering::populateDotOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<DotLowering, WarpgroupMmaWaitLowering>(tc, patterns.getContext(),
                                                      target);
}
