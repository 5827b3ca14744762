//===- CarriedPointersToOffsets.cpp - Affine pointers across loops --------===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace tessel::tile {
#define GEN_PASS_DEF_TILECARRIEDPOINTERSTOOFFSETS
#include "tessel/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tessel::tile

using namespace mlir;
using namespace tessel::tile;

namespace {

/// The loop-invariant scalar step by which iteration argument `index` of
/// `loop` advances, if its yielded value is `addptr(arg, splat(step))` or
/// `addptr(arg, constant)` of one value (with `constantSteps`).
Value uniformStep(scf::ForOp loop, unsigned index, bool constantSteps) {
  Value arg = loop.getRegionIterArgs()[index];
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  auto add = yield.getOperand(index).getDefiningOp<AddPtrOp>();
  if (!add || add.getPtr() != arg)
    return {};
  // A constant block of one value: the scalar, made before the loop.
  DenseIntElementsAttr constant;
  if (constantSteps && matchPattern(add.getOffset(), m_Constant(&constant)) &&
      constant.isSplat()) {
    OpBuilder b(loop);
    return arith::ConstantOp::create(
        b, add.getLoc(),
        IntegerAttr::get(constant.getElementType(),
                         constant.getSplatValue<APInt>()));
  }
  auto splat = add.getOffset().getDefiningOp<SplatOp>();
  if (!splat)
    return {};
  Value step = splat.getSrc();
  if (!loop.isDefinedOutsideOfLoop(step))
    return {};
  return step;
}

/// Rebuilds `loop` so that iteration argument `index` (a block of pointers
/// advanced by `step`) becomes an i64 offset. Returns the new loop.
scf::ForOp carryOffset(scf::ForOp loop, unsigned index, Value step) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value init = loop.getInitArgs()[index];
  auto ptrType = init.getType();
  auto offsetType = RankedTensorType::get(
      cast<RankedTensorType>(ptrType).getShape(), b.getI64Type());

  SmallVector<Value> inits;
  for (auto [i, v] : llvm::enumerate(loop.getInitArgs()))
    if (i != index)
      inits.push_back(v);
  inits.push_back(arith::ConstantIntOp::create(b, loc, 0, 64));
  auto newLoop = scf::ForOp::create(b, loc, loop.getLowerBound(),
                                    loop.getUpperBound(), loop.getStep(), inits);
  newLoop.setUnsignedCmp(loop.getUnsignedCmp());
  // Hints such as tl.range(num_stages=...) stay with the loop.
  newLoop->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
  Block *body = newLoop.getBody();
  if (!body->empty() && body->back().hasTrait<OpTrait::IsTerminator>())
    body->back().erase();

  // The pointers of this iteration: the initial block plus the offset.
  auto rebuild = [&](OpBuilder &ob, Value offset) -> Value {
    Value splat = SplatOp::create(ob, loc, offsetType, offset);
    return AddPtrOp::create(ob, loc, ptrType, init, splat);
  };
  OpBuilder ib = OpBuilder::atBlockEnd(body);
  Value offset = newLoop.getRegionIterArgs().back();
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), newLoop.getInductionVar());
  unsigned j = 0;
  for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
    if (i == index)
      mapping.map(arg, rebuild(ib, offset));
    else
      mapping.map(arg, newLoop.getRegionIterArgs()[j++]);
  }
  for (Operation &op : loop.getBody()->without_terminator())
    ib.clone(op, mapping);
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  SmallVector<Value> yields;
  for (auto [i, v] : llvm::enumerate(yield.getOperands()))
    if (i != index)
      yields.push_back(mapping.lookupOrDefault(v));
  Value step64 = step;
  if (!step.getType().isInteger(64))
    step64 = arith::ExtSIOp::create(ib, loc, ib.getI64Type(), step);
  yields.push_back(arith::AddIOp::create(ib, loc, offset, step64));
  scf::YieldOp::create(ib, loc, yields);

  // Results: the pointer block after the loop is rebuilt from the final
  // offset; the others map in order.
  b.setInsertionPointAfter(newLoop);
  j = 0;
  for (auto [i, res] : llvm::enumerate(loop.getResults())) {
    if (i == index) {
      if (!res.use_empty())
        res.replaceAllUsesWith(rebuild(b, newLoop.getResults().back()));
    } else {
      res.replaceAllUsesWith(newLoop.getResult(j++));
    }
  }
  loop.erase();
  return newLoop;
}

struct TileCarriedPointersToOffsets
    : public tessel::tile::impl::TileCarriedPointersToOffsetsBase<
          TileCarriedPointersToOffsets> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      bool changed = true;
      while (changed) {
        changed = false;
        for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
          auto type = dyn_cast<RankedTensorType>(
              loop.getRegionIterArgs()[i].getType());
          if (!type || !isa<PointerType>(type.getElementType()))
            continue;
          if (Value step = uniformStep(loop, i, constantSteps)) {
            loop = carryOffset(loop, i, step);
            changed = true;
            break;
          }
        }
      }
    }
  }
};

} // namespace
