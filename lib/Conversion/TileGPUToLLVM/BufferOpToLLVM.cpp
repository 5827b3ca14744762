//===- BufferOpToLLVM.cpp - Shared buffers and async copies -------------------===//
//
// local_alloc, async_copy (cp.async), commit and wait groups, local_store
// and local_load of the pipeline's shared-memory buffers.
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"
#include "DotOpToLLVM.h"
#include "tessel/Conversion/TileGPUToLLVM/NvidiaTargetHooks.h"
#include "OffsetBits.h"
#include "SharedAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace {

struct LocalAllocLowering : TileGPUPattern<tilegpu::LocalAllocOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::LocalAllocOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    auto offset = op->getAttrOfType<IntegerAttr>("tilegpu.offset");
    if (!offset)
      return rw.notifyMatchFailure(op, "no offset assigned");
    rw.replaceOp(op, sharedAddress(rw, op.getLoc(), target.sharedAddressSpace(),
                                   i32Const(rw, op.getLoc(), offset.getInt())));
    return success();
  }
};

/// Each thread copies the elements it owns, in runs of consecutive
/// registers that land on consecutive offsets of the slot (the swizzle
/// moves 16-byte chunks whole): cp.async of 4, 8 or 16 bytes, zero-filled
/// where the mask is false (source size 0). Runs under 4 bytes go through
/// registers (a load and a shared store).
struct AsyncCopyLowering : TileGPUPattern<tilegpu::AsyncCopyOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::AsyncCopyOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto type = op.getBuffer().getType();
    if (type.getOrder() == tilegpu::SharedOrder::Padded)
      return rw.notifyMatchFailure(op, "async copies into padded slots");
    LinearLayout layout = layoutOf(op.getPtr().getType());
    LinearLayout toOffset = layout.invertAndCompose(type.getSlotLayout());
    int32_t size = type.getElementBytes();
    int32_t vec = slotVectorWidth(toOffset, size, accessWidth(op, op.getPtr()));
    if (!(target.nvidia() && target.nvidia()->hasAsyncCopy()))
      vec = std::min(vec, 4 / size); // the copy goes through registers
    ValueRange ptrs = adaptor.getPtr();
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    Value slot = slotAddress(rw, loc, adaptor.getBuffer()[0],
                             adaptor.getSlot()[0], type);
    ThreadIds ids = threadIds(rw, loc, target);
    SmallVector<Value> hw{i32Const(rw, loc, 0)};
    hw = hardwarePart(rw, loc, toOffset, gpu::kLane, ids.lane, hw);
    hw = hardwarePart(rw, loc, toOffset, gpu::kWarp, ids.warp, hw);
    Value own = isOwner(rw, loc, layout, ids);
    Type elt = getTypeConverter()->convertType(type.getElementType());
    for (int32_t r = 0; r < int32_t(ptrs.size()); r += vec) {
      if (isCopyRegister(layout, r))
        continue;
      int32_t c = toOffset.apply({{gpu::kRegister, r}})[0];
      Value dst = xorElementAddress(rw, loc, slot, hw[0], c, size);
      int32_t bytes = vec * size;
      Value mask = masks.empty() ? Value() : masks[r];
      ifThen(rw, loc, own, [&](OpBuilder &b) {
        if (bytes >= 4) {
          Value srcBytes;
          if (mask)
            srcBytes = b.create<arith::SelectOp>(loc, mask,
                                                 i32Const(b, loc, bytes),
                                                 i32Const(b, loc, 0));
          target.nvidia()->asyncCopy(b, loc, dst, ptrs[r], bytes, srcBytes);
          return;
        }
        for (int32_t j = 0; j < vec; ++j) {
          Value src = ptrs[r + j];
          Value v;
          if (mask) {
            auto ifOp = b.create<scf::IfOp>(loc, TypeRange{elt}, masks[r + j],
                                            /*withElseRegion=*/true);
            OpBuilder tb = ifOp.getThenBodyBuilder();
            tb.create<scf::YieldOp>(
                loc, ValueRange{tb.create<LLVM::LoadOp>(loc, elt, src, size)});
            OpBuilder eb = ifOp.getElseBodyBuilder();
            eb.create<scf::YieldOp>(
                loc, ValueRange{eb.create<LLVM::ZeroOp>(loc, elt)});
            v = ifOp.getResult(0);
          } else {
            v = b.create<LLVM::LoadOp>(loc, elt, src, size);
          }
          Value at = b.create<LLVM::GEPOp>(loc, dst.getType(), b.getI8Type(),
                                           dst, ValueRange{i32Const(b, loc, j * size)});
          b.create<LLVM::StoreOp>(loc, v, at, size);
        }
      });
    }
    rw.eraseOp(op);
    return success();
  }
};

struct AsyncCommitLowering : TileGPUPattern<tilegpu::AsyncCommitOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::AsyncCommitOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    if ((target.nvidia() && target.nvidia()->hasAsyncCopy()))
      target.nvidia()->asyncCommit(rw, op.getLoc());
    rw.eraseOp(op);
    return success();
  }
};

/// Registers into a slot, in vectors where the value's layout keeps runs of
/// consecutive offsets together; fenced for wgmma's reads when asked.
struct LocalStoreLowering : TileGPUPattern<tilegpu::LocalStoreOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::LocalStoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto type = op.getBuffer().getType();
    Value slot = slotAddress(rw, loc, adaptor.getBuffer()[0],
                             adaptor.getSlot()[0], type);
    if (type.getOrder() == tilegpu::SharedOrder::Padded)
      writeTensorToPaddedSlot(rw, loc, target,
                              layoutOf(op.getValue().getType()),
                              adaptor.getValue(), slot, type);
    else
      writeOperandToShared(rw, loc, target, layoutOf(op.getValue().getType()),
                           type.getSlotLayout(), adaptor.getValue(), 0, slot);
    if (op.getAsyncProxy())
      target.nvidia()->fenceSharedForWarpgroupMma(rw, loc);
    rw.eraseOp(op);
    return success();
  }
};

struct AsyncWaitLowering : TileGPUPattern<tilegpu::AsyncWaitOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::AsyncWaitOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    if ((target.nvidia() && target.nvidia()->hasAsyncCopy()))
      target.nvidia()->asyncWait(rw, op.getLoc(), op.getPending());
    // The copies landed through the generic proxy; wgmma reads through the
    // async one.
    if (op.getAsyncProxy())
      target.nvidia()->fenceSharedForWarpgroupMma(rw, op.getLoc());
    rw.eraseOp(op);
    return success();
  }
};

/// A slot into registers, vectorized where the result layout keeps runs of
/// consecutive offsets together; nothing where every user is a dot that
/// reads the slot in place.
struct LocalLoadLowering : TileGPUPattern<tilegpu::LocalLoadOp> {
  using TileGPUPattern::TileGPUPattern;

  /// Whether every reader of `op` is a dot that reads it in place from its
  /// slot: on mma.sync or wgmma (NVIDIA), or on MFMA (AMD).
  bool onlyReadInPlace(tilegpu::LocalLoadOp op) const {
    SmallVector<Value> work{op.getResult()};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (auto cvt = dyn_cast<tilegpu::ConvertLayoutOp>(user)) {
          work.push_back(cvt.getResult());
          continue;
        }
        auto dot = dyn_cast<tile::DotOp>(user);
        if (!dot || use.getOperandNumber() > 1 ||
            inPlaceOperand(dot, use.getOperandNumber()) != op)
          return false;
        if (target.amd() ? !mfmaDotShape(dot, *target.amd())
                         : !(target.nvidia() && target.nvidia()->hasMma16816()))
          return false;
      }
    }
    return true;
  }

  LogicalResult
  matchAndRewrite(tilegpu::LocalLoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto type = op.getBuffer().getType();
    LinearLayout layout = layoutOf(op.getType());
    Type elt = getTypeConverter()->convertType(type.getElementType());
    if (onlyReadInPlace(op)) {
      Value poison = rw.create<LLVM::PoisonOp>(loc, elt);
      rw.replaceOpWithMultiple(
          op, {SmallVector<Value>(layout.inSize(gpu::kRegister), poison)});
      return success();
    }
    Value slot = slotAddress(rw, loc, adaptor.getBuffer()[0],
                             adaptor.getSlot()[0], type);
    SmallVector<Value> values =
        type.getOrder() == tilegpu::SharedOrder::Padded
            ? readTensorFromPaddedSlot(rw, loc, target, layout, elt, slot, type)
            : readOperandFromShared(rw, loc, target, layout,
                                    type.getSlotLayout(), elt, slot);
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

} // namespace

void gpu::lowering::populateBufferOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<LocalAllocLowering, AsyncCopyLowering, AsyncCommitLowering, AsyncWaitLowering, LocalLoadLowering, LocalStoreLowering>(tc, patterns.getContext(), target);
}
