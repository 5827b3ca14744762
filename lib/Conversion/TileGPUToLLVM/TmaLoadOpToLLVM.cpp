//===- TmaLoadOpToLLVM.cpp - Blocks of tensor maps through the copy engine ===//
//
// tma_load: one thread initializes an mbarrier in the op's scratch, arrives
// on it expecting the block's bytes and starts the copy engine's copy of
// the block into the scratch (rows of the block contiguous, no swizzle:
// the row-major order); every thread waits for the barrier's first phase,
// reads its elements, and the barrier is invalidated once all have.
//
//===----------------------------------------------------------------------===//
#include "DotOpToLLVM.h"
#include "PatternTileGPUToLLVM.h"
#include "SharedAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;

namespace {

struct TmaLoadLowering : TileGPUPattern<tilegpu::TmaLoadOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::TmaLoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    if (!target.hasTensorMaps())
      return rw.notifyMatchFailure(op, "the target has no tensor maps");
    if (!op->hasAttr(kScratchAttr))
      return rw.notifyMatchFailure(op, "no scratch assigned");
    Location loc = op.getLoc();
    auto type = op.getType();
    Type elt = getTypeConverter()->convertType(type.getElementType());
    int64_t bytes = tmaLoadBytes(type);
    unsigned space = target.sharedAddressSpace();
    Value data = sharedAddress(rw, loc, space, i32Const(rw, loc, 0));
    Value barrier = sharedAddress(rw, loc, space, i32Const(rw, loc, bytes));
    // The map's coordinates are innermost first.
    SmallVector<Value> coords;
    for (ValueRange offset : llvm::reverse(adaptor.getOffsets()))
      coords.push_back(offset[0]);
    ThreadIds ids = threadIds(rw, loc, target);
    Value leader = rw.create<arith::AndIOp>(
        loc,
        rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, ids.warp,
                                 i32Const(rw, loc, 0)),
        rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, ids.lane,
                                 i32Const(rw, loc, 0)));
    // Earlier users of the scratch are done with it, and earlier stores (to
    // the array the map reads too), their accesses ordered before the copy
    // engine's.
    target.fenceAsyncProxy(rw, loc);
    target.barrier(rw, loc);
    target.mbarrierInit(rw, loc, barrier, leader);
    target.tensorMapLoad(rw, loc, data, adaptor.getMap()[0], coords, barrier,
                         bytes, leader);
    target.barrier(rw, loc); // the mbarrier is initialized for every thread
    target.mbarrierWait(rw, loc, barrier, /*phase=*/0);
    std::vector<int32_t> shape(type.getShape().begin(), type.getShape().end());
    SmallVector<Value> values = readTensorFromShared(
        rw, loc, target, layoutOf(type), shape, elt, /*base=*/0);
    target.barrier(rw, loc); // every thread has waited and read
    target.mbarrierInval(rw, loc, barrier, leader);
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

} // namespace

int64_t gpu::lowering::tmaLoadBytes(RankedTensorType type) {
  return type.getNumElements() * int64_t(storageBytes(type.getElementType()));
}

void gpu::lowering::populateTmaLoadOpToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<TmaLoadLowering>(tc, patterns.getContext(), target);
}
