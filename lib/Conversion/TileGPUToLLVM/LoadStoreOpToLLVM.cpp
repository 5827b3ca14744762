//===- LoadStoreOpToLLVM.cpp - Global loads and stores ------------------------===//
//
// tile.load and tile.store per thread: vectors as wide as the layout pass
// proved, masked, each element stored once.
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"
#include "Utility.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace {

struct LoadLowering : TileGPUPattern<tile::LoadOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::LoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Type elt = getTypeConverter()->convertType(
        getElementTypeOrSelf(op.getResult().getType()));
    Type mem = memoryType(elt);
    ValueRange ptrs = adaptor.getPtr();
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    ValueRange others = op.getOther() ? adaptor.getOther() : ValueRange();
    int vec = accessWidth(op, op.getPtr());
    unsigned bytes = storageBytes(mem);
    SmallVector<Value> values;
    Type access = vec == 1 ? mem : VectorType::get({vec}, mem);
    for (size_t i = 0; i < ptrs.size(); i += vec) {
      // One access of `vec` consecutive elements from ptrs[i].
      auto load = [&](OpBuilder &b) {
        Value v = b.create<LLVM::LoadOp>(loc, access, ptrs[i], vec * bytes,
                                         op.getIsVolatile());
        return fromMemoryAccess(b, loc, v, vec, elt);
      };
      if (masks.empty()) {
        llvm::append_range(values, load(rw));
        continue;
      }
      // Masked: a guarded load where the target has one (no branch),
      // `other` (zeros without one) where the mask is off.
      Value fill = others.empty()
                       ? rw.create<LLVM::ZeroOp>(loc, access).getResult()
                       : toMemoryAccess(rw, loc, others.slice(i, vec), mem);
      if (Value v = target.predicatedLoad(rw, loc, access, ptrs[i], masks[i],
                                          fill, op.getIsVolatile())) {
        llvm::append_range(values, fromMemoryAccess(rw, loc, v, vec, elt));
        continue;
      }
      // Else a branch around the load that yields the access whole: split
      // inside the branch, the elements would wait for the load there.
      auto ifOp = rw.create<scf::IfOp>(loc, TypeRange{access}, masks[i],
                                       /*withElseRegion=*/true);
      OpBuilder thenB = ifOp.getThenBodyBuilder();
      thenB.create<scf::YieldOp>(
          loc, thenB
                   .create<LLVM::LoadOp>(loc, access, ptrs[i], vec * bytes,
                                         op.getIsVolatile())
                   .getResult());
      OpBuilder elseB = ifOp.getElseBodyBuilder();
      elseB.create<scf::YieldOp>(loc, fill);
      llvm::append_range(values,
                         fromMemoryAccess(rw, loc, ifOp.getResult(0), vec, elt));
    }
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

struct StoreLowering : TileGPUPattern<tile::StoreOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::StoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ValueRange ptrs = adaptor.getPtr(), vals = adaptor.getValue();
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    ThreadIds ids = threadIds(rw, loc, target);
    // Only one copy of each element is stored.
    Value own;
    std::optional<LinearLayout> layout = tilegpu::getLayout(op.getPtr().getType());
    if (layout) {
      own = isOwner(rw, loc, *layout, ids);
    } else { // a scalar store: the program's first thread
      Value tid = target.threadId(rw, loc);
      own = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid,
                                     i32Const(rw, loc, 0));
    }
    int vec = accessWidth(op, op.getPtr());
    for (size_t i = 0; i < ptrs.size(); i += vec) {
      if (layout && isCopyRegister(*layout, i))
        continue;
      Value cond = masks.empty() ? own
                                 : rw.create<arith::AndIOp>(loc, own, masks[i])
                                       .getResult();
      Type mem = memoryType(vals[i].getType());
      unsigned bytes = storageBytes(mem);
      // The value, built before any branch.
      Value v = toMemoryAccess(rw, loc, vals.slice(i, vec), mem);
      if (target.predicatedStore(rw, loc, ptrs[i], v, cond))
        continue;
      ifThen(rw, loc, cond, [&](OpBuilder &b) {
        b.create<LLVM::StoreOp>(loc, v, ptrs[i], vec * bytes);
      });
    }
    rw.eraseOp(op);
    return success();
  }
};

} // namespace

void gpu::lowering::populateLoadStoreOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<LoadLowering, StoreLowering>(tc, patterns.getContext(), target);
}
