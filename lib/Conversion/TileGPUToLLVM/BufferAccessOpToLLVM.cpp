//===- BufferAccessOpToLLVM.cpp - AMD's buffer loads and stores ---------------===//
//
// tilegpu.buffer_load and tilegpu.buffer_store per thread: one buffer
// resource of the base, then per access a 32-bit byte offset, moved past the
// resource's range where the mask is off (or the thread holds a copy), so
// that the hardware reads zeros and writes nothing there without a branch.
//
//===----------------------------------------------------------------------===//
#include "PatternTileGPUToLLVM.h"
#include "tessel/Conversion/TileGPUToLLVM/AmdTargetHooks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace {

/// The byte offset of the access at element offset `offset`: past the
/// resource's range where `cond` (if any) is false.
Value byteOffset(OpBuilder &b, Location loc, Value offset, unsigned bytes,
                 Value cond) {
  Value v = offset;
  if (bytes != 1)
    v = b.create<arith::MulIOp>(loc, offset, i32Const(b, loc, bytes),
                                arith::IntegerOverflowFlags::nsw |
                                    arith::IntegerOverflowFlags::nuw);
  if (!cond)
    return v;
  return b.create<arith::SelectOp>(
      loc, cond, v, i32Const(b, loc, tilegpu::kBufferOutOfRange));
}

struct BufferLoadLowering : TileGPUPattern<tilegpu::BufferLoadOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::BufferLoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    const gpu::AmdTargetHooks *amd = target.amd();
    if (!amd)
      return rw.notifyMatchFailure(op, "buffer accesses are AMD's");
    Location loc = op.getLoc();
    Type elt = getTypeConverter()->convertType(
        getElementTypeOrSelf(op.getResult().getType()));
    Type mem = memoryType(elt);
    unsigned bytes = storageBytes(mem);
    Value rsrc = amd->bufferResource(rw, loc, adaptor.getBase()[0],
                                     tilegpu::kBufferRange);
    ValueRange offsets = adaptor.getOffsets();
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    // Masked-off lanes read zeros (+0.0): `other` is needed only where it is
    // something else.
    Value other = op.getOther();
    bool readsOther = other && !matchPattern(other, m_Zero()) &&
                      !matchPattern(other, m_PosZeroFloat());
    ValueRange others = readsOther ? adaptor.getOther() : ValueRange();
    int vec = accessWidth(op, op.getOffsets());
    Type access = vec == 1 ? mem : VectorType::get({vec}, mem);
    SmallVector<Value> values;
    for (size_t i = 0; i < offsets.size(); i += vec) {
      Value cond = masks.empty() ? Value() : masks[i];
      Value v = amd->bufferLoad(rw, loc, access, rsrc,
                                byteOffset(rw, loc, offsets[i], bytes, cond));
      if (!others.empty())
        v = rw.create<LLVM::SelectOp>(
            loc, cond, v, toMemoryAccess(rw, loc, others.slice(i, vec), mem));
      llvm::append_range(values, fromMemoryAccess(rw, loc, v, vec, elt));
    }
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

struct BufferStoreLowering : TileGPUPattern<tilegpu::BufferStoreOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::BufferStoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    const gpu::AmdTargetHooks *amd = target.amd();
    if (!amd)
      return rw.notifyMatchFailure(op, "buffer accesses are AMD's");
    Location loc = op.getLoc();
    Value rsrc = amd->bufferResource(rw, loc, adaptor.getBase()[0],
                                     tilegpu::kBufferRange);
    ValueRange offsets = adaptor.getOffsets(), vals = adaptor.getValue();
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    // One copy of each element is written: the owners' lanes.
    std::optional<LinearLayout> layout =
        tilegpu::getLayout(op.getValue().getType());
    if (!layout)
      return rw.notifyMatchFailure(op, "no layout");
    Value own = isOwner(rw, loc, *layout, threadIds(rw, loc, target));
    int vec = accessWidth(op, op.getOffsets());
    for (size_t i = 0; i < offsets.size(); i += vec) {
      if (isCopyRegister(*layout, i))
        continue;
      Value cond = masks.empty()
                       ? own
                       : rw.create<arith::AndIOp>(loc, own, masks[i]).getResult();
      Type mem = memoryType(vals[i].getType());
      amd->bufferStore(rw, loc, toMemoryAccess(rw, loc, vals.slice(i, vec), mem),
                       rsrc,
                       byteOffset(rw, loc, offsets[i], storageBytes(mem), cond));
    }
    rw.eraseOp(op);
    return success();
  }
};

} // namespace

void gpu::lowering::populateBufferAccessOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<BufferLoadLowering, BufferStoreLowering>(
      tc, patterns.getContext(), target);
}
