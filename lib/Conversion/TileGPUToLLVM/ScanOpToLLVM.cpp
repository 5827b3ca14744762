//===- ScanOpToLLVM.cpp - Scans -------------------------------------------===//
//
// tile.scan, in the layout TileToTileGPU gives it (gpu::scanLayout): a
// row along the axis is consecutive registers of a thread, then lanes of
// one warp. Each thread scans its part of each row sequentially, in order
// along the axis (backwards when reversed); then, for each lane bit along
// the axis from the lowest, a lane in the upper half of its block of lanes
// (the lower, reversed) takes the total of the other half, which the last
// lane of that half holds in the register its sequential scan ended at, by
// a shuffle, and combines it in front of each of its own values: after the
// lane bit of 2^k lanes, every value is the scan of its block of 2^(k+1)
// lanes' parts (Hillis and Steele's, over lane bits). Warps hold copies.
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"


#include <map>

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace {

struct ScanLowering : TileGPUPattern<tile::ScanOp> {
  using TileGPUPattern::TileGPUPattern;

  /// Applies the combine region to (carry..., next...).
  SmallVector<Value> combine(OpBuilder &b, tile::ScanOp op,
                             ArrayRef<Value> carry, ArrayRef<Value> next) const {
    SmallVector<Value> args(carry);
    args.append(next.begin(), next.end());
    return inlineBlock(b, op.getCombineOp().front(), args);
  }

  LogicalResult
  matchAndRewrite(tile::ScanOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    unsigned axis = op.getAxis();
    size_t n = op.getSrcs().size();
    LinearLayout layout = layoutOf(op.getSrcs()[0].getType());
    // Registers hold the low positions along the axis, lanes the high ones,
    // warps none (gpu::scanLayout); every basis moves along the axis or off
    // it, not both.
    int32_t maxRegisterPos = 0;
    SmallVector<std::pair<int32_t, int>> laneBits; // (axis position, lane bit)
    for (const auto &in : layout.ins())
      for (auto [bit, basis] : llvm::enumerate(in.bases)) {
        if (basis[axis] == 0)
          continue;
        for (size_t d = 0; d < basis.size(); ++d)
          if (d != axis && basis[d] != 0)
            return op.emitOpError("scans a layout whose bases mix the axis "
                                  "with other dimensions");
        if (in.name == gpu::kRegister)
          maxRegisterPos = std::max(maxRegisterPos, basis[axis]);
        else if (in.name == gpu::kLane)
          laneBits.push_back({basis[axis], int(bit)});
        else
          return op.emitOpError("scans a layout whose axis crosses warps");
      }
    llvm::sort(laneBits);
    if (!laneBits.empty() && laneBits.front().first < maxRegisterPos)
      return op.emitOpError("scans a layout whose lanes are not above its "
                            "registers along the axis");
    // Each register's row (its register bits off the axis) and position.
    const auto &regBases = layout.ins()[layout.inIndex(gpu::kRegister)].bases;
    int numRegs = layout.inSize(gpu::kRegister);
    std::map<int, std::vector<std::pair<int32_t, int>>> rows;
    for (int r = 0; r < numRegs; ++r) {
      int row = 0;
      int32_t pos = 0;
      for (size_t bit = 0; bit < regBases.size(); ++bit) {
        if (!(r >> bit & 1))
          continue;
        if (regBases[bit][axis] != 0)
          pos ^= regBases[bit][axis];
        else
          row |= 1 << bit;
      }
      rows[row].push_back({pos, r});
    }
    bool reverse = op.getReverse();
    SmallVector<SmallVector<Value>> results(n, SmallVector<Value>(numRegs));
    for (auto &[row, regs] : rows) {
      llvm::sort(regs);
      if (reverse)
        std::reverse(regs.begin(), regs.end());
      SmallVector<Value> carry;
      for (auto [pos, r] : regs) {
        SmallVector<Value> next;
        for (size_t s = 0; s < n; ++s)
          next.push_back(adaptor.getSrcs()[s][r]);
        carry = carry.empty() ? next : combine(rw, op, carry, next);
        for (size_t s = 0; s < n; ++s)
          results[s][r] = carry[s];
      }
    }
    if (!laneBits.empty()) {
      Value lane = threadIds(rw, loc, target).lane;
      auto i32c = [&](int32_t v) { return i32Const(rw, loc, v); };
      int32_t lower = 0; // the lane bits along the axis below this one
      for (auto [pos, bit] : laneBits) {
        int32_t mask = int32_t(1) << bit;
        Value inUpper = arith::CmpIOp::create(
            rw, loc, arith::CmpIPredicate::ne,
            arith::AndIOp::create(rw, loc, lane, i32c(mask)), i32c(0));
        // The last lane of the other half: forwards, this bit clear and the
        // lower ones set; reversed, this bit set and the lower ones clear.
        // The lanes of the half after it (before it, reversed) take its total.
        Value src, takes = inUpper;
        if (reverse) {
          src = arith::AndIOp::create(
              rw, loc, arith::OrIOp::create(rw, loc, lane, i32c(mask)),
              i32c(~lower));
          takes = arith::XOrIOp::create(
              rw, loc, inUpper,
              arith::ConstantIntOp::create(rw, loc, rw.getI1Type(), 1));
        } else {
          src = arith::OrIOp::create(
              rw, loc, arith::AndIOp::create(rw, loc, lane, i32c(~mask)),
              i32c(lower));
        }
        for (auto &[row, regs] : rows) {
          int last = regs.back().second; // where the sequential scan ended
          SmallVector<Value> total;
          for (size_t s = 0; s < n; ++s)
            total.push_back(
                shuffleIdx(rw, loc, target, results[s][last], src));
          for (auto [p, r] : regs) {
            SmallVector<Value> mine;
            for (size_t s = 0; s < n; ++s)
              mine.push_back(results[s][r]);
            SmallVector<Value> joined = combine(rw, op, total, mine);
            for (size_t s = 0; s < n; ++s)
              results[s][r] =
                  arith::SelectOp::create(rw, loc, takes, joined[s], mine[s]);
          }
        }
        lower |= mask;
      }
    }
    SmallVector<SmallVector<Value>> asRanges(results.begin(), results.end());
    rw.replaceOpWithMultiple(op, asRanges);
    return success();
  }
};

} // namespace

void gpu::lowering::populateScanOpToLLVMPatterns(TypeConverter &tc,
                                                 RewritePatternSet &patterns,
                                                 const GPUTargetInfo &target) {
  patterns.add<ScanLowering>(tc, patterns.getContext(), target);
}
