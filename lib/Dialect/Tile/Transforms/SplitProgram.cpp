//===- SplitProgram.cpp - One program on several cooperating CTAs ---------===//
//
// See the pass description in Passes.td.
//
// Each dimension of each block value is a slot; ops join the slots that must
// be cut alike into classes (union-find) and mark the ones that must not be
// cut at all. The pass cuts the class whose loads and dots hold the most
// elements: their types shrink in place, ranges and descriptor offsets move
// by the CTA's rank, and stores outside the class are made by CTA 0 alone.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/EquivalenceClasses.h"

namespace tessel::tile {
#define GEN_PASS_DEF_TILESPLITPROGRAM
#include "tessel/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tessel::tile

using namespace mlir;
using namespace tessel::tile;

namespace {

RankedTensorType blockType(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

/// The slots of a function's block values and the classes ops join them in.
class SlotClasses {
public:
  explicit SlotClasses(func::FuncOp fn) {
    fn.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (Value arg : block.getArguments())
            addSlots(arg);
      for (Value result : op->getResults())
        addSlots(result);
    });
    fn.walk([&](Operation *op) { join(op); });
    // Arguments come whole from the caller.
    for (Value arg : fn.getArguments())
      forbidAll(arg);
  }

  /// The class of the dimension to cut by `parts`, if one can be cut: the
  /// leader of its slots.
  std::optional<unsigned> choose(int64_t parts) const {
    struct Candidate {
      bool usable = true, dotColumns = false;
      int64_t loaded = 0, elements = 0, dimensionSum = 0;
      DenseSet<Value> values;
    };
    llvm::MapVector<unsigned, Candidate> candidates;
    for (unsigned id = 0; id < slots.size(); ++id) {
      auto [value, dim] = slots[id];
      Candidate &c = candidates[classes.getLeaderValue(id)];
      int64_t size = blockType(value).getDimSize(dim);
      auto least = smallest.find(id);
      if (forbidden.contains(id) || size % parts != 0 ||
          (least != smallest.end() && size / parts < least->second) ||
          !c.values.insert(value).second) // two dimensions of one block
        c.usable = false;
      c.elements += blockType(value).getNumElements();
      Operation *def = value.getDefiningOp();
      if (isa_and_nonnull<LoadOp, DescriptorLoadOp, DotOp>(def))
        c.loaded += blockType(value).getNumElements();
      c.dimensionSum += dim;
      c.dotColumns |= dotColumns.contains(id);
    }
    std::optional<unsigned> best;
    using Score = std::tuple<int64_t, bool, int64_t, int64_t>;
    Score bestScore{-1, false, 0, 0};
    for (auto &[leader, c] : candidates) {
      // The most elements loaded or computed by dots (what is not cut,
      // every CTA loads or computes whole); of equals, a dot's columns (as
      // Triton cuts them), then the most elements, then outer dimensions
      // (contiguous rows stay whole).
      Score score{c.loaded, c.dotColumns, c.elements, -c.dimensionSum};
      if (c.usable && score > bestScore) {
        best = leader;
        bestScore = score;
      }
    }
    return best;
  }

  /// The block values of class `leader` and the dimension of each it holds.
  SmallVector<std::pair<Value, unsigned>> members(unsigned leader) const {
    SmallVector<std::pair<Value, unsigned>> out;
    for (unsigned id = 0; id < slots.size(); ++id)
      if (classes.getLeaderValue(id) == leader)
        out.push_back(slots[id]);
    return out;
  }

private:
  void addSlots(Value v) {
    if (RankedTensorType type = blockType(v))
      for (unsigned d = 0; d < type.getRank(); ++d) {
        ids[{v, d}] = slots.size();
        classes.insert(slots.size());
        slots.push_back({v, d});
      }
  }
  unsigned slot(Value v, unsigned d) const { return ids.lookup({v, d}); }
  void unite(Value a, unsigned da, Value b, unsigned db) {
    classes.unionSets(slot(a, da), slot(b, db));
  }
  /// Joins dimension d of `a` and `b`, blocks of one shape, for every d.
  void uniteShapes(Value a, Value b) {
    RankedTensorType ta = blockType(a), tb = blockType(b);
    if (!ta || !tb)
      return;
    if (ta.getShape() != tb.getShape()) {
      forbidAll(a);
      forbidAll(b);
      return;
    }
    for (unsigned d = 0; d < ta.getRank(); ++d)
      unite(a, d, b, d);
  }
  void uniteShapes(ValueRange a, ValueRange b) {
    for (auto [x, y] : llvm::zip(a, b))
      uniteShapes(x, y);
  }
  void forbid(Value v, unsigned d) { forbidden.insert(slot(v, d)); }
  void forbidAll(Value v) {
    if (RankedTensorType type = blockType(v))
      for (unsigned d = 0; d < type.getRank(); ++d)
        forbid(v, d);
  }
  /// Joins the blocks among `values` (element-wise operands and results).
  void uniteBlocks(ValueRange values) {
    Value first;
    for (Value v : values)
      if (blockType(v)) {
        if (first)
          uniteShapes(first, v);
        else
          first = v;
      }
  }

  void join(Operation *op) {
    auto hasBlocks = [](TypeRange types) {
      return llvm::any_of(types, llvm::IsaPred<RankedTensorType>);
    };
    if (!hasBlocks(op->getOperandTypes()) && !hasBlocks(op->getResultTypes()))
      return;
    if (isa<MakeRangeOp, SplatOp, DescriptorLoadOp, DescriptorStoreOp,
            scf::YieldOp, scf::ConditionOp>(op))
      return; // free, or joined by their parents
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!dense || !dense.isSplat())
        forbidAll(constant.getResult());
      return;
    }
    if (op->hasTrait<OpTrait::Elementwise>() ||
        isa<AddPtrOp, LoadOp, StoreOp, AtomicRMWOp, AtomicCASOp>(op)) {
      SmallVector<Value> values(op->getOperands());
      llvm::append_range(values, op->getResults());
      uniteBlocks(values);
      return;
    }
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      RankedTensorType src = blockType(broadcast.getSrc());
      for (unsigned d = 0; d < src.getRank(); ++d)
        if (src.getDimSize(d) == broadcast.getType().getDimSize(d))
          unite(broadcast.getSrc(), d, broadcast.getResult(), d);
      return;
    }
    if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
      unsigned axis = expand.getAxis();
      for (unsigned d = 0; d < blockType(expand.getSrc()).getRank(); ++d)
        unite(expand.getSrc(), d, expand.getResult(), d < axis ? d : d + 1);
      return;
    }
    if (auto trans = dyn_cast<TransOp>(op)) {
      for (auto [d, from] : llvm::enumerate(trans.getOrder()))
        unite(trans.getResult(), d, trans.getSrc(), from);
      return;
    }
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      uniteBlocks(reduce.getSrcs());
      unsigned axis = reduce.getAxis();
      forbid(reduce.getSrcs()[0], axis);
      for (Value result : reduce.getResults())
        if (RankedTensorType type = blockType(result))
          for (unsigned d = 0; d < type.getRank(); ++d)
            unite(result, d, reduce.getSrcs()[0], d < axis ? d : d + 1);
      return;
    }
    if (auto dot = dyn_cast<DotOp>(op)) {
      Value a = dot.getA(), b = dot.getB(), d = dot.getD();
      uniteShapes(dot.getC(), d);
      unsigned rank = blockType(d).getRank();
      for (unsigned i = 0; i + 2 < rank; ++i) {
        unite(a, i, d, i);
        unite(b, i, d, i);
      }
      unite(a, rank - 2, d, rank - 2);
      unite(b, rank - 1, d, rank - 1);
      forbid(a, rank - 1); // K
      forbid(b, rank - 2);
      // Each CTA's part of M and N stays a whole tensor-core tile.
      smallest[slot(d, rank - 2)] = 16;
      smallest[slot(d, rank - 1)] = 16;
      dotColumns.insert(slot(d, rank - 1));
      return;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      uniteShapes(loop.getInitArgs(), loop.getRegionIterArgs());
      uniteShapes(loop.getRegionIterArgs(), loop.getYieldedValues());
      uniteShapes(loop.getRegionIterArgs(), loop.getResults());
      return;
    }
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      uniteShapes(branch.getResults(), branch.thenYield().getOperands());
      if (!branch.getElseRegion().empty())
        uniteShapes(branch.getResults(), branch.elseYield().getOperands());
      return;
    }
    if (auto loop = dyn_cast<scf::WhileOp>(op)) {
      uniteShapes(loop.getInits(), loop.getBeforeArguments());
      uniteShapes(loop.getBeforeArguments(), loop.getYieldedValues());
      uniteShapes(loop.getConditionOp().getArgs(), loop.getAfterArguments());
      uniteShapes(loop.getAfterArguments(), loop.getResults());
      return;
    }
    // Ops the pass does not know (reshape among them) may mix elements
    // along any dimension.
    for (Value v : op->getOperands())
      forbidAll(v);
    for (Value v : op->getResults())
      forbidAll(v);
  }

  DenseMap<std::pair<Value, unsigned>, unsigned> ids;
  SmallVector<std::pair<Value, unsigned>> slots;
  llvm::EquivalenceClasses<unsigned> classes;
  DenseSet<unsigned> forbidden;
  DenseMap<unsigned, int64_t> smallest; // each part's least size
  DenseSet<unsigned> dotColumns;
};

/// Whether `op` (no regions) writes memory: its own side effect, not that of
/// ops it holds, nor a fact on another resource (tile.assume's).
bool writesMemory(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects || op->getNumRegions())
    return false;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::any_of(list, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Write>(e.getEffect()) &&
           e.getResource() == SideEffects::DefaultResource::get();
  });
}

/// `offsets[dim]` moved to the CTA's part, `partSize` long, of a block.
void moveOffset(OpBuilder &b, Location loc, MutableOperandRange offsets,
                unsigned dim, int64_t partSize, Value rank) {
  Value offset = offsets[dim].get();
  Value shift = arith::MulIOp::create(
      b, loc, rank, arith::ConstantIntOp::create(b, loc, partSize, 32));
  offsets[dim].set(arith::AddIOp::create(b, loc, offset, shift));
}

struct TileSplitProgram
    : public tessel::tile::impl::TileSplitProgramBase<TileSplitProgram> {
  using TileSplitProgramBase::TileSplitProgramBase;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (numCtas <= 1)
      return;
    if (!llvm::isPowerOf2_32(numCtas)) {
      fn.emitError("num-ctas must be a power of two, got ") << numCtas;
      return signalPassFailure();
    }
    SlotClasses classes(fn);
    std::optional<unsigned> cut = classes.choose(numCtas);

    OpBuilder b(fn.getBody());
    Location loc = fn.getLoc();
    Value rank = GetCtaRankOp::create(b, loc, b.getI32Type());

    // An atomic outside the cut whose old values the program uses: one CTA
    // makes it, and the others could not learn its result (CTAs share no
    // registers). The whole program then runs on CTA 0.
    DenseSet<Value> cutValues;
    if (cut)
      for (auto [value, dim] : classes.members(*cut))
        cutValues.insert(value);
    bool uncutAtomicResult = false;
    fn.walk([&](Operation *op) {
      if (isa<AtomicRMWOp, AtomicCASOp>(op) && !op->getResult(0).use_empty() &&
          !cutValues.contains(op->getOperand(0)))
        uncutAtomicResult = true;
    });
    if (uncutAtomicResult) {
      Block &body = fn.getBody().front();
      b.setInsertionPointAfter(rank.getDefiningOp());
      Value first = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq, rank,
          arith::ConstantIntOp::create(b, loc, 0, 32));
      auto onlyFirst = scf::IfOp::create(b, loc, first);
      Operation *terminator = onlyFirst.thenBlock()->getTerminator();
      for (Operation &op : llvm::make_early_inc_range(llvm::make_range(
               std::next(onlyFirst->getIterator()),
               body.getTerminator()->getIterator())))
        op.moveBefore(terminator);
      return;
    }

    // The cut blocks and their cut dimension, as rewritten.
    DenseMap<Value, unsigned> split;
    SmallVector<std::pair<Value, unsigned>> members;
    if (cut)
      members = classes.members(*cut);
    for (auto [value, dim] : members) {
      RankedTensorType type = blockType(value);
      int64_t part = type.getDimSize(dim) / numCtas;
      SmallVector<int64_t> shape(type.getShape());
      shape[dim] = part;
      RankedTensorType partType = type.clone(shape);
      Operation *def = value.getDefiningOp();
      if (auto range = dyn_cast_or_null<MakeRangeOp>(def)) {
        // [start, start + part) + rank * part
        b.setInsertionPoint(range);
        Location at = range.getLoc();
        int32_t start = range.getStart();
        Value base =
            MakeRangeOp::create(b, at, partType, start, start + int32_t(part));
        Value shift = arith::MulIOp::create(
            b, at, rank, arith::ConstantIntOp::create(b, at, part, 32));
        Value moved = arith::AddIOp::create(
            b, at, base, SplatOp::create(b, at, partType, shift));
        range.getResult().replaceAllUsesWith(moved);
        range.erase();
        split[moved] = dim;
        continue;
      }
      if (auto constant = dyn_cast_or_null<arith::ConstantOp>(def)) {
        auto dense = cast<DenseElementsAttr>(constant.getValue());
        b.setInsertionPoint(constant);
        Value smaller = arith::ConstantOp::create(
            b, constant.getLoc(),
            DenseElementsAttr::get(partType, dense.getSplatValue<Attribute>()));
        constant.getResult().replaceAllUsesWith(smaller);
        constant.erase();
        split[smaller] = dim;
        continue;
      }
      value.setType(partType);
      split[value] = dim;
      if (auto load = dyn_cast_or_null<DescriptorLoadOp>(def)) {
        b.setInsertionPoint(load);
        moveOffset(b, load.getLoc(), load.getOffsetsMutable(), dim, part, rank);
      }
    }

    // Stores: of a cut block, at the CTA's part; of anything else (any op
    // that writes memory), by CTA 0.
    SmallVector<Operation *> stores;
    fn.walk([&](Operation *op) {
      if (writesMemory(op))
        stores.push_back(op);
    });
    for (Operation *op : stores) {
      if (auto store = dyn_cast<DescriptorStoreOp>(op)) {
        auto at = split.find(store.getValue());
        if (at != split.end()) {
          b.setInsertionPoint(store);
          moveOffset(b, store.getLoc(), store.getOffsetsMutable(), at->second,
                     blockType(store.getValue()).getDimSize(at->second), rank);
          continue;
        }
      } else if (isa<StoreOp, AtomicRMWOp, AtomicCASOp>(op) &&
                 llvm::any_of(op->getOperands(),
                              [&](Value v) { return split.contains(v); })) {
        continue;
      }
      b.setInsertionPoint(op);
      Value first = arith::CmpIOp::create(
          b, op->getLoc(), arith::CmpIPredicate::eq, rank,
          arith::ConstantIntOp::create(b, op->getLoc(), 0, 32));
      auto onlyFirst = scf::IfOp::create(b, op->getLoc(), first);
      op->moveBefore(onlyFirst.thenBlock()->getTerminator());
    }

    if (failed(verify(fn))) {
      fn.emitError("tile-split-program left invalid IR (a compiler bug)");
      return signalPassFailure();
    }
  }
};

} // namespace
