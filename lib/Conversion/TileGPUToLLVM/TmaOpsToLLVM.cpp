//===- TmaOpsToLLVM.cpp - Blocks of tensor maps through the copy engine ---===//
//
// The block sits in the op's scratch in row-major order, or a 2-d block
// swizzled as a k_major slot (its map's swizzle), one copy per atom column.
// tma_load: one thread initializes an mbarrier behind the block, arrives on
// it expecting the block's bytes and starts the copy engine's copy into the
// scratch; every thread waits for the barrier's first phase, reads its
// elements, and the barrier is invalidated once all have. tma_store: every
// thread writes its elements to the scratch, then one thread has the copy
// engine store the block and waits for the store to complete.
//
// The pipeline's copies: mbarrier_alloc has one thread initialize its
// barriers; async_tma_copy has it arrive on the slot's barrier expecting
// each box's bytes and start the box's copy into the slot (a swizzle atom
// of the slot each, where the copy engine swizzles it as warpgroup MMA reads
// it); mbarrier_wait waits for a phase; mbarrier_inval invalidates them.
//
//===----------------------------------------------------------------------===//
#include "DotOpToLLVM.h"
#include "tessel/Conversion/TileGPUToLLVM/NvidiaTargetHooks.h"
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

/// What every op here needs: a target with tensor maps (and mbarriers).
LogicalResult requireTensorMaps(Operation *op, ConversionPatternRewriter &rw,
                                const gpu::GPUTargetInfo &target) {
  if (!(target.nvidia() && target.nvidia()->hasTensorMaps()))
    return rw.notifyMatchFailure(op, "the target has no tensor maps");
  return success();
}

/// What a TMA op's lowering needs: a target with tensor maps, its scratch.
LogicalResult checkLowerable(Operation *op, ConversionPatternRewriter &rw,
                             const gpu::GPUTargetInfo &target) {
  if (failed(requireTensorMaps(op, rw, target)))
    return failure();
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

/// A block's copies into (or out of) shared memory: one per column of
/// swizzle atoms (`width` elements of every row, `bytes` apart), or one of
/// the whole row-major block.
struct ScratchAtoms {
  int64_t count = 1;
  int32_t width = 0;
  int64_t bytes = 0;
};

ScratchAtoms scratchAtoms(RankedTensorType type, int32_t swizzle) {
  if (!swizzle)
    return {1, 0, tmaBlockBytes(type)};
  int64_t rows = type.getDimSize(0);
  return {tmaBlockBytes(type) / (rows * swizzle),
          swizzle / storageBytes(type.getElementType()), rows * swizzle};
}

/// The scratch layout of a swizzled block: a k_major slot's.
gpu::LinearLayout scratchLayout(RankedTensorType type, int32_t swizzle) {
  return gpu::wgmmaOperandLayout(type.getDimSize(0), type.getDimSize(1),
                                 storageBytes(type.getElementType()), swizzle);
}

/// Atom column `a`'s shared address and its tensor-map coordinates (the
/// innermost moved on by a columns).
Value atomAddress(OpBuilder &b, Location loc, Value scratch,
                  const ScratchAtoms &atoms, int64_t a) {
  if (!a)
    return scratch;
  return b.create<LLVM::GEPOp>(loc, scratch.getType(), b.getI8Type(), scratch,
                               ValueRange{i32Const(b, loc,
                                                   int32_t(a * atoms.bytes))});
}

SmallVector<Value> atomCoordinates(OpBuilder &b, Location loc,
                                   ArrayRef<Value> coords,
                                   const ScratchAtoms &atoms, int64_t a) {
  SmallVector<Value> at(coords);
  if (a)
    at[0] = b.create<arith::AddIOp>(loc, coords[0],
                                    i32Const(b, loc, int32_t(a * atoms.width)));
  return at;
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
    std::vector<int32_t> shape(type.getShape().begin(), type.getShape().end());
    ScratchAtoms atoms = scratchAtoms(type, op.getSwizzle());
    // Earlier users of the scratch are done with it, and earlier stores (to
    // the array the map reads too), their accesses ordered before the copy
    // engine's.
    target.nvidia()->fenceAsyncProxy(rw, loc);
    target.barrier(rw, loc);
    target.nvidia()->mbarrierInit(rw, loc, barrier, leader, atoms.count);
    for (int64_t a = 0; a < atoms.count; ++a)
      target.nvidia()->tensorMapLoad(
          rw, loc, atomAddress(rw, loc, data, atoms, a), adaptor.getMap()[0],
          atomCoordinates(rw, loc, coords, atoms, a), barrier,
          atoms.bytes, leader);
    target.barrier(rw, loc); // the mbarrier is initialized for every thread
    target.nvidia()->mbarrierWait(rw, loc, barrier, i32Const(rw, loc, 0));
    SmallVector<Value> values =
        op.getSwizzle()
            ? readOperandFromShared(rw, loc, target, layoutOf(type),
                                    scratchLayout(type, op.getSwizzle()), elt,
                                    data)
            : readTensorFromShared(rw, loc, target, layoutOf(type), shape, elt,
                                   /*base=*/0);
    target.barrier(rw, loc); // every thread has waited and read
    target.nvidia()->mbarrierInval(rw, loc, barrier, leader);
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
    ScratchAtoms atoms = scratchAtoms(type, op.getSwizzle());
    target.barrier(rw, loc); // earlier users of the scratch are done
    if (op.getSwizzle())
      writeOperandToShared(rw, loc, target, layoutOf(type),
                           scratchLayout(type, op.getSwizzle()),
                           adaptor.getValue(), /*base=*/0);
    else
      writeTensorToShared(rw, loc, target, layoutOf(type), shape,
                          adaptor.getValue(), /*base=*/0);
    // Every thread's writes, visible to the copy engine once all are done.
    target.nvidia()->fenceSharedForWarpgroupMma(rw, loc);
    target.barrier(rw, loc);
    Value leader = leaderThread(rw, loc, target);
    Value scratch = sharedAddress(rw, loc, space, i32Const(rw, loc, 0));
    for (int64_t a = 0; a < atoms.count; ++a)
      target.nvidia()->tensorMapStore(rw, loc, adaptor.getMap()[0],
                            atomCoordinates(rw, loc, coords, atoms, a),
                            atomAddress(rw, loc, scratch, atoms, a), leader);
    target.barrier(rw, loc); // the scratch is free again
    rw.eraseOp(op);
    return success();
  }
};

/// The shared pointer of barrier `index` (i32) of `barriers`.
Value barrierAddress(OpBuilder &b, Location loc, Value barriers, Value index) {
  return b.create<LLVM::GEPOp>(loc, barriers.getType(), b.getI64Type(),
                               barriers, ValueRange{index});
}

struct MBarrierAllocLowering : TileGPUPattern<tilegpu::MBarrierAllocOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::MBarrierAllocOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    auto offset = op->getAttrOfType<IntegerAttr>("tilegpu.offset");
    if (failed(requireTensorMaps(op, rw, target)))
      return failure();
    if (!offset)
      return rw.notifyMatchFailure(op, "no offset assigned");
    Location loc = op.getLoc();
    Value barriers = sharedAddress(rw, loc, target.sharedAddressSpace(),
                                   i32Const(rw, loc, offset.getInt()));
    Value leader = leaderThread(rw, loc, target);
    for (int64_t i = 0; i < op.getType().getCount(); ++i)
      target.nvidia()->mbarrierInit(rw, loc,
                          barrierAddress(rw, loc, barriers, i32Const(rw, loc, i)),
                          leader, op.getArrivals());
    // Initialized for every thread; and every thread's earlier accesses of
    // the bytes the slots' copies are about to land in (an earlier claim's),
    // ordered before the copy engine's.
    target.nvidia()->fenceAsyncProxy(rw, loc);
    target.barrier(rw, loc);
    rw.replaceOp(op, barriers);
    return success();
  }
};

struct AsyncTmaCopyLowering : TileGPUPattern<tilegpu::AsyncTmaCopyOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::AsyncTmaCopyOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    if (failed(requireTensorMaps(op, rw, target)))
      return failure();
    Location loc = op.getLoc();
    auto type = op.getBuffer().getType();
    Value slot = slotAddress(rw, loc, adaptor.getBuffer()[0],
                             adaptor.getSlot()[0], type);
    Value barrier =
        barrierAddress(rw, loc, adaptor.getBarriers()[0], adaptor.getSlot()[0]);
    Value pred = rw.create<arith::AndIOp>(loc, leaderThread(rw, loc, target),
                                          adaptor.getPred()[0]);
    SmallVector<int64_t> box = tilegpu::tmaSlotBox(type);
    ScratchAtoms atoms{tilegpu::tmaSlotBoxes(type), int32_t(box[1]),
                       box[0] * box[1] * type.getElementBytes()};
    SmallVector<Value> coords = mapCoordinates(adaptor.getOffsets());
    for (int64_t a = 0; a < atoms.count; ++a)
      target.nvidia()->tensorMapLoad(rw, loc, atomAddress(rw, loc, slot, atoms, a),
                           adaptor.getMap()[0],
                           atomCoordinates(rw, loc, coords, atoms, a), barrier,
                           atoms.bytes, pred);
    rw.eraseOp(op);
    return success();
  }
};

struct MBarrierWaitLowering : TileGPUPattern<tilegpu::MBarrierWaitOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::MBarrierWaitOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    if (failed(requireTensorMaps(op, rw, target)))
      return failure();
    Location loc = op.getLoc();
    target.nvidia()->mbarrierWait(rw, loc,
                        barrierAddress(rw, loc, adaptor.getBarriers()[0],
                                       adaptor.getIndex()[0]),
                        adaptor.getPhase()[0]);
    rw.eraseOp(op);
    return success();
  }
};

struct MBarrierInvalLowering : TileGPUPattern<tilegpu::MBarrierInvalOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::MBarrierInvalOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    if (failed(requireTensorMaps(op, rw, target)))
      return failure();
    Location loc = op.getLoc();
    target.barrier(rw, loc); // every thread is done waiting
    Value leader = leaderThread(rw, loc, target);
    auto type = op.getBarriers().getType();
    for (int64_t i = 0; i < type.getCount(); ++i)
      target.nvidia()->mbarrierInval(
          rw, loc,
          barrierAddress(rw, loc, adaptor.getBarriers()[0], i32Const(rw, loc, i)),
          leader);
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
  patterns.add<TmaLoadLowering, TmaStoreLowering, MBarrierAllocLowering,
               AsyncTmaCopyLowering, MBarrierWaitLowering,
               MBarrierInvalLowering>(tc, patterns.getContext(), target);
}
