//===- ScanOpToLLVM.cpp - Scans -------------------------------------------===//
//
// tile.scan, in the layout TileToTileGPU gives it (gpu::scanLayout): every
// element along the axis is in one thread's registers, so each thread scans
// its rows sequentially, in order along the axis (backwards when reversed).
// No thread talks to another.
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
    unsigned axis = op.getAxis();
    size_t n = op.getSrcs().size();
    LinearLayout layout = layoutOf(op.getSrcs()[0].getType());
    // Only registers may move along the axis (gpu::scanLayout).
    for (const auto &in : layout.ins())
      if (in.name != gpu::kRegister)
        for (const auto &basis : in.bases)
          if (basis[axis] != 0)
            return op.emitOpError("scans a layout whose axis crosses threads");
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
    SmallVector<SmallVector<Value>> results(n, SmallVector<Value>(numRegs));
    for (auto &[row, regs] : rows) {
      llvm::sort(regs);
      if (op.getReverse())
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
