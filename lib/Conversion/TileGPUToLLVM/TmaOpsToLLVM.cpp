//===- TmaOpsToLLVM.cpp - Blocks of tensor maps through the copy engine ---===//
//
// The block sits in the op's scratch in row-major order (no swizzle).
// tma_load: one thread initializes an mbarrier behind the block, arrives on
// it expecting the block's bytes and starts the copy engine's copy into the
// scratch; every thread waits for the barrier's first phase, reads its
// elements, and the barrier is invalidated once all have. tma_store: every
// thread writes its elements to the scratch, then one thread has the copy
// engine store the block and waits for the store to complete.
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

/// Whether this is the program's thread 0 (lane 0 of warp 0).
Value leaderThread(OpBuilder &b, Location loc,
                   const gpu::GPUTargetInfo &target) {
  ThreadIds ids = threadIds(b, loc, target);
  return b.create<arith::AndIOp>(
      loc,
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, ids.warp,
                              i32Const(b, loc, 0)),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, ids.lane,
                              i32Const(b, loc, 0)));
}

/// What a TMA op's lowering needs: a target with tensor maps, its scratch.
LogicalResult checkLowerable(Operation *op, ConversionPatternRewriter &rw,
                             const gpu::GPUTargetInfo &target) {
  if (!target.hasTensorMaps())
    return rw.notifyMatchFailure(op, "the target has no tensor maps");
  if (!op->hasAttr(kScratchAttr))
    return rw.notifyMatchFailure(op, "no scratch assigned");
  return success();
}

/// A tensor map's coordinates: the offsets, innermost first.
SmallVector<Value> mapCoordinates(ArrayRef<ValueRange> offsets) {
  SmallVector<Value> coords;
  for (ValueRange offset : llvm::reverse(offsets))
    coords.push_back(offset[0]);
  return coords;
}

struct TmaLoadLowering : TileGPUPattern<tilegpu::TmaLoadOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::TmaLoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    if (failed(checkLowerable(op, rw, target)))
      return failure();
    Location loc = op.getLoc();
    auto type = op.getType();
    Type elt = getTypeConverter()->convertType(type.getElementType());
    int64_t bytes = tmaBlockBytes(type);
    unsigned space = target.sharedAddressSpace();
    Value data = sharedAddress(rw, loc, space, i32Const(rw, loc, 0));
    Value barrier = sharedAddress(rw, loc, space, i32Const(rw, loc, bytes));
    SmallVector<Value> coords = mapCoordinates(adaptor.getOffsets());
    Value leader = leaderThread(rw, loc, target);
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

struct TmaStoreLowering : TileGPUPattern<tilegpu::TmaStoreOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::TmaStoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    if (failed(checkLowerable(op, rw, target)))
      return failure();
    Location loc = op.getLoc();
    auto type = op.getValue().getType();
    unsigned space = target.sharedAddressSpace();
    SmallVector<Value> coords = mapCoordinates(adaptor.getOffsets());
    std::vector<int32_t> shape(type.getShape().begin(), type.getShape().end());
    target.barrier(rw, loc); // earlier users of the scratch are done
    writeTensorToShared(rw, loc, target, layoutOf(type), shape,
                        adaptor.getValue(), /*base=*/0);
    // Every thread's writes, visible to the copy engine once all are done.
    target.fenceSharedForWarpgroupMma(rw, loc);
    target.barrier(rw, loc);
    target.tensorMapStore(rw, loc, adaptor.getMap()[0], coords,
                          sharedAddress(rw, loc, space, i32Const(rw, loc, 0)),
                          leaderThread(rw, loc, target));
    target.barrier(rw, loc); // the scratch is free again
    rw.eraseOp(op);
    return success();
  }
};

} // namespace

int64_t gpu::lowering::tmaBlockBytes(RankedTensorType type) {
  return type.getNumElements() * int64_t(storageBytes(type.getElementType()));
}

void gpu::lowering::populateTmaOpsToLLVMPatterns(
    TypeConverter &tc, RewritePatternSet &patterns,
    const GPUTargetInfo &target) {
  patterns.add<TmaLoadLowering, TmaStoreLowering>(tc, patterns.getContext(),
                                                  target);
}
