//===- TensorMaps.cpp - Descriptor loads through tensor maps --------------===//
//
// See the pass description in include/tessel/Dialect/TileGPU/Transforms/
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/TileGPU/Transforms/Passes.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/Transforms/TensorMapArguments.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace tessel::tilegpu {
#define GEN_PASS_DEF_TILEGPUTENSORMAPS
#include "tessel/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tessel::tilegpu

using namespace mlir;
using namespace tessel;
using namespace tessel::tilegpu;

namespace {

/// The swizzle a block's scratch gets: its rows' bytes up to 128, for 2-d
/// blocks of whole 8-row groups whose rows span at least 32 bytes of
/// elements of at least a byte; 0 otherwise.
int32_t scratchSwizzle(RankedTensorType type) {
  int64_t bits = type.getElementTypeBitWidth();
  if (type.getRank() != 2 || type.getDimSize(0) % 8 || bits < 8)
    return 0;
  int64_t rowBytes = type.getDimSize(1) * bits / 8;
  return rowBytes < 32 ? 0 : int32_t(std::min<int64_t>(128, rowBytes));
}

struct TileGPUTensorMaps
    : public tilegpu::impl::TileGPUTensorMapsBase<TileGPUTensorMaps> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      SmallVector<Operation *> accesses;
      // A descriptor's fill, from its loads (its stores need none).
      llvm::DenseMap<int32_t, bool> nan;
      func.walk([&](Operation *op) {
        if (auto load = dyn_cast<tile::DescriptorLoadOp>(op)) {
          if (!load.getTensorMap())
            return;
          nan[int32_t(*load.getTensorMap())] |= load.getNanPadding();
          accesses.push_back(op);
        } else if (auto store = dyn_cast<tile::DescriptorStoreOp>(op)) {
          if (store.getTensorMap())
            accesses.push_back(op);
        }
      });
      // One map per descriptor argument and block shape (its accesses
      // share it). 2-d blocks land in (and are stored from) a scratch
      // swizzled as a k_major slot is, conflict-free for the threads'
      // accesses, the box one atom wide; others row-major.
      for (Operation *op : accesses) {
        auto load = dyn_cast<tile::DescriptorLoadOp>(op);
        auto store = dyn_cast<tile::DescriptorStoreOp>(op);
        int32_t arg =
            int32_t(load ? *load.getTensorMap() : *store.getTensorMap());
        auto type = cast<RankedTensorType>(load ? load.getType()
                                                : store.getValue().getType());
        SmallVector<int64_t> box(type.getShape());
        int32_t swizzle = scratchSwizzle(type);
        if (swizzle)
          box[1] = swizzle / (type.getElementTypeBitWidth() / 8);
        BlockArgument map = tensorMapArgument(
            func, {arg, type.getElementType(), box, swizzle, nan.lookup(arg)});
        if (!map)
          return signalPassFailure();
        OpBuilder builder(op);
        if (load) {
          auto tma = TmaLoadOp::create(builder, load.getLoc(), type, map,
                                       load.getOffsets(), swizzle);
          load.replaceAllUsesWith(tma.getResult());
        } else {
          TmaStoreOp::create(builder, store.getLoc(), map, store.getOffsets(),
                             store.getValue(), swizzle);
        }
        op->erase();
      }
    }
  }
};

} // namespace
