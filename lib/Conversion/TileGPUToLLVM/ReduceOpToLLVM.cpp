//===- ReduceOpToLLVM.cpp - Reductions ----------------------------------------===//
//
// tile.reduce: within a thread, across lanes by shuffles, across warps
// through shared memory.
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"
#include "SharedAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace {

struct ReduceLowering : TileGPUPattern<tile::ReduceOp> {
  using TileGPUPattern::TileGPUPattern;

  /// Applies the combine region to (acc..., x...).
  SmallVector<Value> combine(OpBuilder &b, tile::ReduceOp op,
                             ArrayRef<Value> acc, ArrayRef<Value> x) const {
    SmallVector<Value> args(acc);
    args.append(x.begin(), x.end());
    return inlineBlock(b, op.getCombineOp().front(), args);
  }

  LogicalResult
  matchAndRewrite(tile::ReduceOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    unsigned axis = op.getAxis();
    size_t n = op.getSrcs().size();
    LinearLayout layout = layoutOf(op.getSrcs()[0].getType());
    LinearLayout out = gpu::reduceLayout(layout, axis);
    // 1. Registers of one thread along the axis.
    uint32_t axisRegs = 0;
    const auto &regBases = layout.ins()[layout.inIndex(gpu::kRegister)].bases;
    for (size_t bit = 0; bit < regBases.size(); ++bit)
      if (regBases[bit][axis] != 0)
        axisRegs |= 1u << bit;
    int numRegs = layout.inSize(gpu::kRegister);
    std::map<int, SmallVector<Value>> groups; // output register -> values
    for (int r = 0; r < numRegs; ++r) {
      int o = 0, k = 0;
      for (size_t bit = 0; bit < regBases.size(); ++bit)
        if (!(axisRegs >> bit & 1))
          o |= (r >> bit & 1) << k++;
      SmallVector<Value> x;
      for (size_t s = 0; s < n; ++s)
        x.push_back(adaptor.getSrcs()[s][r]);
      auto it = groups.find(o);
      if (it == groups.end())
        groups[o] = x;
      else
        it->second = combine(rw, op, it->second, x);
    }
    // 2. Lanes along the axis: butterfly shuffles.
    const auto &laneBases = layout.ins()[layout.inIndex(gpu::kLane)].bases;
    for (size_t bit = 0; bit < laneBases.size(); ++bit) {
      if (laneBases[bit][axis] == 0)
        continue;
      for (auto &[o, acc] : groups) {
        SmallVector<Value> other;
        for (Value v : acc)
          other.push_back(shuffleXor(rw, loc, target, v, 1 << bit));
        acc = combine(rw, op, acc, other);
      }
    }
    // 3. Warps along the axis: partials through shared memory.
    int wi = layout.inIndex(gpu::kWarp);
    uint32_t axisWarps = 0;
    if (wi >= 0)
      for (size_t bit = 0; bit < layout.ins()[wi].bases.size(); ++bit)
        if (layout.ins()[wi].bases[bit][axis] != 0)
          axisWarps |= 1u << bit;
    if (axisWarps) {
      int numAxisWarps = 1 << __builtin_popcount(axisWarps);
      ThreadIds ids = threadIds(rw, loc, target);
      // The slot of this thread's partial: its warp's index along the axis.
      Value slot = i32Const(rw, loc, 0);
      for (int bit = 0, k = 0; bit < 32; ++bit)
        if (axisWarps >> bit & 1) {
          Value set = rw.create<arith::AndIOp>(
              loc, rw.create<arith::ShRUIOp>(loc, ids.warp, i32Const(rw, loc, bit)),
              i32Const(rw, loc, 1));
          slot = rw.create<arith::OrIOp>(
              loc, slot,
              rw.create<arith::ShLIOp>(loc, set, i32Const(rw, loc, k++)));
        }
      std::vector<int32_t> outShape;
      for (auto &o : out.outs())
        outShape.push_back(o.size);
      int64_t outNumel = 1;
      for (int32_t s : outShape)
        outNumel *= s;
      auto coords = elementCoords(rw, loc, out, ids);
      // Partials are written by the first lane and warp of each copy group
      // along the non-axis dimensions: owners of the output layout, each
      // warp along the axis with its own partial.
      Value laneOwn = isOwner(rw, loc, out, ids, axisWarps);
      // Each source gets its own region: [outNumel][numAxisWarps] elements.
      SmallVector<int64_t> base(n);
      int64_t offset = 0;
      for (size_t s = 0; s < n; ++s) {
        base[s] = offset;
        unsigned bytes = storageBytes(getTypeConverter()->convertType(
            getElementTypeOrSelf(op.getSrcs()[s].getType())));
        offset += (outNumel * numAxisWarps * bytes + 15) / 16 * 16;
      }
      target.barrier(rw, loc);
      for (auto &[o, acc] : groups) {
        Value flat = outShape.empty() ? i32Const(rw, loc, 0)
                                      : flatIndex(rw, loc, coords[o], outShape);
        Value index = rw.create<arith::AddIOp>(
            loc, rw.create<arith::MulIOp>(loc, flat, i32Const(rw, loc, numAxisWarps)),
            slot);
        for (size_t s = 0; s < n; ++s) {
          Value v = acc[s];
          ifThen(rw, loc, laneOwn, [&](OpBuilder &ib) {
            storeShared(ib, loc, target.sharedAddressSpace(), v, base[s], index);
          });
        }
      }
      target.barrier(rw, loc);
      for (auto &[o, acc] : groups) {
        Value flat = outShape.empty() ? i32Const(rw, loc, 0)
                                      : flatIndex(rw, loc, coords[o], outShape);
        SmallVector<Value> total;
        for (int w = 0; w < numAxisWarps; ++w) {
          Value index = rw.create<arith::AddIOp>(
              loc,
              rw.create<arith::MulIOp>(loc, flat, i32Const(rw, loc, numAxisWarps)),
              i32Const(rw, loc, w));
          SmallVector<Value> part;
          for (size_t s = 0; s < n; ++s)
            part.push_back(loadShared(rw, loc, target.sharedAddressSpace(),
                                      acc[s].getType(), base[s], index));
          total = w == 0 ? part : combine(rw, op, total, part);
        }
        acc = total;
      }
    }
    // Results: one value per output register.
    SmallVector<SmallVector<Value>> results(n);
    for (auto &[o, acc] : groups)
      for (size_t s = 0; s < n; ++s)
        results[s].push_back(acc[s]);
    SmallVector<SmallVector<Value>> asRanges(results.begin(), results.end());
    rw.replaceOpWithMultiple(op, asRanges);
    return success();
  }
};

/// arith.constant of a tensor: splats become one constant per register.

} // namespace

void gpu::lowering::populateReduceOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<ReduceLowering>(tc, patterns.getContext(), target);
}
