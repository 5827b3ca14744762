//===- HoistDotOperands.cpp - Stage loop-invariant dot operands once ------===//
//
// See the pass description in include/tessel/Dialect/TileGPU/Transforms/
// Passes.td.
//
//   v = ...                          buf = local_alloc (one slot)
//   for i:                           local_store v, buf[0]; barrier
//     d = dot(v, b_i, acc)    =>     for i:
//                                      d = dot(local_load buf[0], b_i, acc)
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/TileGPU/Transforms/Passes.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessel::tilegpu {
#define GEN_PASS_DEF_TILEGPUHOISTDOTOPERANDS
#include "tessel/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tessel::tilegpu

using namespace mlir;
using namespace tessel;
using namespace tessel::tilegpu;

namespace {

struct TileGPUHoistDotOperands
    : public tilegpu::impl::TileGPUHoistDotOperandsBase<
          TileGPUHoistDotOperands> {
  using TileGPUHoistDotOperandsBase::TileGPUHoistDotOperandsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<tile::DotOp> dots;
    func.walk([&](tile::DotOp dot) { dots.push_back(dot); });
    int64_t scratch = scratchEstimate(func);
    int64_t used = bufferBytes(func);
    // One buffer per hoisted value and encoding, shared by its dots.
    DenseMap<std::pair<Value, Type>, Value> staged;
    for (tile::DotOp dot : dots) {
      auto loop = dot->getParentOfType<scf::ForOp>();
      if (!loop)
        continue;
      for (unsigned i = 0; i < 2; ++i) {
        Value v = dot->getOperand(i);
        // Defined outside the loop, in registers (not already a slot).
        if (loop->isAncestor(v.getParentBlock()->getParentOp()) ||
            v.getDefiningOp<LocalLoadOp>() || !getLayout(v.getType()))
          continue;
        std::optional<SharedEncoding> enc = dotOperandSharedEncoding(dot, i);
        if (!enc)
          continue;
        auto type = cast<RankedTensorType>(v.getType());
        auto bufferType = SharedBufferType::getChecked(
            [&] { return dot.emitError(); }, dot.getContext(),
            {1, type.getDimSize(0), type.getDimSize(1)}, type.getElementType(),
            enc->order, enc->transposed, enc->swizzle);
        if (!bufferType)
          continue;
        Value &buffer = staged[{v, Type(bufferType)}];
        if (!buffer) {
          int64_t bytes = (bufferType.getSlotStride() + 1023) / 1024 * 1024;
          if (sharedLimit > 0 && used + bytes + scratch > sharedLimit)
            continue;
          used += bytes;
          // Written once, after the value and before the loop (the
          // outermost loop the value is invariant in would do too; the
          // nearest one is enough for a K loop).
          OpBuilder b(loop);
          Location loc = v.getLoc();
          Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
          buffer = LocalAllocOp::create(b, loc, bufferType);
          auto store = LocalStoreOp::create(b, loc, v, buffer, zero);
          // wgmma reads the slot through the async proxy.
          if (wgmmaWarps(dot))
            store.setAsyncProxy(true);
          BarrierOp::create(b, loc);
        }
        OpBuilder b(dot);
        Value zero =
            arith::ConstantIntOp::create(b, dot.getLoc(), b.getI32Type(), 0);
        Value slot =
            LocalLoadOp::create(b, dot.getLoc(), type, buffer, zero);
        dot->setOperand(i, slot);
      }
    }
  }
};

} // namespace
