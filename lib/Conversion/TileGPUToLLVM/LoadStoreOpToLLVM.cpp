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
    for (size_t i = 0; i < ptrs.size(); i += vec) {
      // One access of `vec` consecutive elements from ptrs[i].
      auto load = [&](OpBuilder &b) {
        SmallVector<Value> out;
        if (vec == 1) {
          Value v = b.create<LLVM::LoadOp>(loc, mem, ptrs[i], bytes,
                                           op.getIsVolatile());
          out.push_back(fromMemory(b, loc, v, elt));
          return out;
        }
        auto vt = VectorType::get({vec}, mem);
        Value v = b.create<LLVM::LoadOp>(loc, vt, ptrs[i], vec * bytes,
                                         op.getIsVolatile());
        for (int j = 0; j < vec; ++j) {
          Value e = b.create<LLVM::ExtractElementOp>(
              loc, v, b.create<LLVM::ConstantOp>(loc, b.getI32Type(), j));
          out.push_back(fromMemory(b, loc, e, elt));
        }
        return out;
      };
      if (masks.empty()) {
        llvm::append_range(values, load(rw));
        continue;
      }
      // Masked: a guarded load where the target has one (no branch),
      // `other` (zeros without one) where the mask is off.
      Type access = vec == 1 ? mem : VectorType::get({vec}, mem);
      Value fill;
      if (others.empty()) {
        fill = rw.create<LLVM::ZeroOp>(loc, access);
      } else if (vec == 1) {
        fill = toMemory(rw, loc, others[i]);
      } else {
        fill = rw.create<LLVM::UndefOp>(loc, access);
        for (int j = 0; j < vec; ++j)
          fill = rw.create<LLVM::InsertElementOp>(
              loc, fill, toMemory(rw, loc, others[i + j]),
              rw.create<LLVM::ConstantOp>(loc, rw.getI32Type(), j));
      }
      if (Value v = target.predicatedLoad(rw, loc, access, ptrs[i], masks[i],
                                          fill, op.getIsVolatile())) {
        for (int j = 0; j < vec; ++j) {
          Value e = vec == 1 ? v
                             : rw.create<LLVM::ExtractElementOp>(
                                   loc, v, rw.create<LLVM::ConstantOp>(
                                               loc, rw.getI32Type(), j))
                                   .getResult();
          values.push_back(fromMemory(rw, loc, e, elt));
        }
        continue;
      }
      auto ifOp = rw.create<scf::IfOp>(loc, SmallVector<Type>(vec, elt),
                                       masks[i], /*withElseRegion=*/true);
      OpBuilder thenB = ifOp.getThenBodyBuilder();
      thenB.create<scf::YieldOp>(loc, load(thenB));
      OpBuilder elseB = ifOp.getElseBodyBuilder();
      SmallVector<Value> other;
      for (int j = 0; j < vec; ++j)
        other.push_back(others.empty()
                            ? elseB.create<LLVM::ZeroOp>(loc, elt).getResult()
                            : others[i + j]);
      elseB.create<scf::YieldOp>(loc, other);
      llvm::append_range(values, ifOp.getResults());
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
      Value v;
      if (vec == 1) {
        v = toMemory(rw, loc, vals[i]);
      } else {
        v = rw.create<LLVM::UndefOp>(loc, VectorType::get({vec}, mem));
        for (int j = 0; j < vec; ++j)
          v = rw.create<LLVM::InsertElementOp>(
              loc, v, toMemory(rw, loc, vals[i + j]),
              rw.create<LLVM::ConstantOp>(loc, rw.getI32Type(), j));
      }
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
