//===- RemoveLayoutConversions.cpp - Recompute instead of moving ----------===//
//
// See the pass description in include/tessel/Dialect/TileGPU/Transforms/
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/TileGPU/Transforms/Passes.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tessel::tilegpu {
#define GEN_PASS_DEF_TILEGPUREMOVELAYOUTCONVERSIONS
#include "tessel/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tessel::tilegpu

using namespace mlir;
using namespace tessel;
using gpu::LinearLayout;

namespace {

/// Ops recomputed per consumer layout at most, per conversion.
constexpr int kBudget = 48;

std::vector<int32_t> shapeOf(Type t) {
  auto s = cast<RankedTensorType>(t).getShape();
  return std::vector<int32_t>(s.begin(), s.end());
}

struct Rematerializer {
  OpBuilder &b;
  /// Elements of the conversion being removed: an operand that cannot be
  /// recomputed is converted instead when it is smaller (the broadcast
  /// source of a row vector), or when a loop carries it (the accumulator,
  /// whose conversion the loop step then moves out).
  int64_t rootElements;
  int budget = kBudget;
  DenseMap<std::pair<Value, Type>, Value> memo;

  Value getOrConvert(Value v, RankedTensorType want) {
    if (Value r = get(v, want))
      return r;
    auto arg = dyn_cast<BlockArgument>(v);
    bool carried = arg && isa<scf::ForOp>(arg.getOwner()->getParentOp()) &&
                   arg.getArgNumber() > 0;
    if (want.getNumElements() >= rootElements && !carried)
      return {};
    return b.create<tilegpu::ConvertLayoutOp>(v.getLoc(), want, v);
  }

  /// `v` recomputed with type `want` (its shape and element type, another
  /// layout), or null when its producers include something that cannot be
  /// recomputed (memory, regions) or the tree is too large.
  Value get(Value v, RankedTensorType want) {
    if (v.getType() == want)
      return v;
    auto key = std::make_pair(v, Type(want));
    if (auto it = memo.find(key); it != memo.end())
      return it->second;
    Operation *op = v.getDefiningOp();
    if (!op || op->getNumResults() != 1 || op->getNumRegions() != 0 ||
        !isMemoryEffectFree(op) || budget-- <= 0)
      return {};
    std::optional<LinearLayout> layout = tilegpu::getLayout(want);
    if (!layout)
      return {};
    SmallVector<Value> operands;
    if (auto cvt = dyn_cast<tilegpu::ConvertLayoutOp>(op))
      return memo[key] = get(cvt.getSrc(), want);
    if (isa<tile::MakeRangeOp, tile::SplatOp>(op)) {
      operands.assign(op->operand_begin(), op->operand_end());
    } else if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = dyn_cast<SplatElementsAttr>(cst.getValue());
      if (!dense)
        return {};
      Value c = b.create<arith::ConstantOp>(op->getLoc(), want,
                                            dense.reshape(want));
      return memo[key] = c;
    } else if (auto e = dyn_cast<tile::ExpandDimsOp>(op)) {
      Value src = getOrConvert(e.getSrc(),
                               tilegpu::withLayout(
                                   e.getSrc().getType(),
                                   gpu::dropDim(*layout, e.getAxis())));
      if (!src)
        return {};
      operands.push_back(src);
    } else if (auto bc = dyn_cast<tile::BroadcastOp>(op)) {
      Value src = getOrConvert(bc.getSrc(),
                      tilegpu::withLayout(bc.getSrc().getType(),
                                          gpu::broadcastSource(
                                              *layout,
                                              shapeOf(bc.getSrc().getType()))));
      if (!src)
        return {};
      operands.push_back(src);
    } else if (isa<tile::AddPtrOp>(op) ||
               isa<arith::ArithDialect, math::MathDialect>(op->getDialect())) {
      // Element-wise: every tensor operand in the result's layout.
      for (Value operand : op->getOperands()) {
        auto t = dyn_cast<RankedTensorType>(operand.getType());
        if (!t) {
          operands.push_back(operand);
          continue;
        }
        if (t.getShape() != want.getShape())
          return {};
        Value r = getOrConvert(operand, tilegpu::withLayout(t, *layout));
        if (!r)
          return {};
        operands.push_back(r);
      }
    } else {
      return {};
    }
    Operation *clone = b.clone(*op);
    clone->setOperands(operands);
    clone->getResult(0).setType(want);
    return memo[key] = clone->getResult(0);
  }
};

/// A loop-carried value converted to one layout on entry to the body and
/// converted back before the yield (an accumulator: acc = dot(a, b, acc))
/// is carried in that layout instead; the conversions move outside the loop.
bool carryInBodyLayout(scf::ForOp loop) {
  bool changed = false;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
    BlockArgument arg = loop.getRegionIterArgs()[i];
    if (!arg.hasOneUse())
      continue;
    auto in = dyn_cast<tilegpu::ConvertLayoutOp>(*arg.getUsers().begin());
    auto out = yield.getOperand(i).getDefiningOp<tilegpu::ConvertLayoutOp>();
    if (!in || !out || out.getSrc().getType() != in.getType())
      continue;
    Type carried = in.getType(), outer = arg.getType();
    OpBuilder b(loop);
    Value init = b.create<tilegpu::ConvertLayoutOp>(
        loop.getLoc(), carried, loop.getInitArgs()[i]);
    loop.getInitArgsMutable()[i].assign(init);
    arg.setType(carried);
    in.getResult().replaceAllUsesWith(arg);
    in.erase();
    yield.setOperand(i, out.getSrc());
    Value result = loop.getResult(i);
    result.setType(carried);
    b.setInsertionPointAfter(loop);
    auto back = b.create<tilegpu::ConvertLayoutOp>(loop.getLoc(), outer, result);
    result.replaceAllUsesExcept(back.getResult(), back);
    changed = true;
  }
  return changed;
}

struct TileGPURemoveLayoutConversions
    : public tilegpu::impl::TileGPURemoveLayoutConversionsBase<
          TileGPURemoveLayoutConversions> {
  void runOnOperation() override {
    getOperation().walk([&](scf::ForOp loop) { carryInBodyLayout(loop); });
    rematerializeConversions();
    // Conversions moved next to a loop's arguments now move out of the loop.
    getOperation().walk([&](scf::ForOp loop) { carryInBodyLayout(loop); });
  }

  void rematerializeConversions() {
    SmallVector<tilegpu::ConvertLayoutOp> converts;
    getOperation().walk(
        [&](tilegpu::ConvertLayoutOp op) { converts.push_back(op); });
    for (tilegpu::ConvertLayoutOp cvt : converts) {
      OpBuilder b(cvt);
      Rematerializer remat{b, cvt.getType().getNumElements()};
      Value v = remat.get(cvt.getSrc(), cvt.getType());
      if (!v || v == cvt.getResult())
        continue;
      cvt.getResult().replaceAllUsesWith(v);
      eraseDead(cvt);
    }
  }

  /// Erases `op` and then every pure producer left without users (so that a
  /// loop argument's remaining use is the one the loop step looks for).
  static void eraseDead(Operation *op) {
    SmallVector<Operation *> work{op};
    while (!work.empty()) {
      Operation *o = work.pop_back_val();
      if (!o->use_empty() || o->getNumRegions() != 0 || !isMemoryEffectFree(o))
        continue;
      SmallVector<Operation *> producers;
      for (Value operand : o->getOperands())
        if (Operation *def = operand.getDefiningOp())
          producers.push_back(def);
      o->erase();
      for (Operation *def : producers)
        if (!llvm::is_contained(work, def))
          work.push_back(def);
    }
  }
};

} // namespace
