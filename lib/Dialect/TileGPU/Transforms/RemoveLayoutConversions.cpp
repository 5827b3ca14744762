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

#include <set>

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

/// Bytes a conversion of a tensor of type `t` moves through shared memory
/// (bools as bytes, pointers as 8): an accumulator converted after its
/// truncation to fp16 costs half of what it does before.
int64_t tensorBytes(Type t) {
  auto tensor = cast<RankedTensorType>(t);
  Type elt = tensor.getElementType();
  int64_t bytes = elt.isIntOrFloat()
                      ? std::max<int64_t>(1, elt.getIntOrFloatBitWidth() / 8)
                      : 8;
  return tensor.getNumElements() * bytes;
}

/// Ops that compute each element from the same element of their operands.
bool isElementwise(Operation *op) {
  return isa<tile::AddPtrOp, tile::IntToPtrOp, tile::PtrToIntOp,
             tile::PtrCastOp>(op) ||
         isa<arith::ArithDialect, math::MathDialect>(op->getDialect());
}

struct Rematerializer {
  OpBuilder &b;
  /// Elements of the conversion being removed: an operand that cannot be
  /// recomputed is converted instead when it is smaller (the broadcast
  /// source of a row vector), or when a loop carries it (the accumulator,
  /// whose conversion the loop step then moves out).
  int64_t rootElements;
  /// Values standing for others (a forward propagation's new versions).
  const DenseMap<Value, Value> *replacements = nullptr;
  int budget = kBudget;
  DenseMap<std::pair<Value, Type>, Value> memo;

  Value getOrConvert(Value v, RankedTensorType want) {
    if (Value r = get(v, want))
      return r;
    if (replacements)
      if (Value r = replacements->lookup(v))
        v = r;
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
    if (replacements)
      if (Value r = replacements->lookup(v))
        v = r;
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
    } else if (auto tr = dyn_cast<tile::TransOp>(op)) {
      // The source in the layout the transpose takes to `want` (pointers
      // a transposed block load computes, recomputed rather than moved
      // through shared memory at 8 bytes each).
      std::vector<int32_t> inverse(tr.getOrder().size());
      for (auto [i, d] : llvm::enumerate(tr.getOrder()))
        inverse[d] = int32_t(i);
      Value src = getOrConvert(
          tr.getSrc(), tilegpu::withLayout(
                           tr.getSrc().getType(),
                           gpu::transposeLayout(*layout, inverse)));
      if (!src)
        return {};
      operands.push_back(src);
    } else if (isElementwise(op)) {
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

bool isRegisterRename(const LinearLayout &from, const LinearLayout &to);

/// A loop-carried value converted to one layout on entry to the body and
/// converted back before the yield (an accumulator: acc = dot(a, b, acc);
/// attention's row statistics, whose uses may also take renamings of that
/// layout's registers) is carried in that layout instead; the conversions
/// move outside the loop.
bool carryInBodyLayout(scf::ForOp loop) {
  bool changed = false;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
    BlockArgument arg = loop.getRegionIterArgs()[i];
    auto out = yield.getOperand(i).getDefiningOp<tilegpu::ConvertLayoutOp>();
    if (!out || arg.use_empty())
      continue;
    // Every use converts the argument, to the layout the next value comes
    // in or to a renaming of its registers (a reduction's row vector with
    // more or fewer copies per thread).
    Type carried = out.getSrc().getType(), outer = arg.getType();
    auto carriedLayout = tilegpu::getLayout(carried);
    SmallVector<tilegpu::ConvertLayoutOp> ins;
    bool all = carriedLayout.has_value();
    for (Operation *user : arg.getUsers()) {
      auto in = dyn_cast<tilegpu::ConvertLayoutOp>(user);
      if (!in || (in.getType() != carried &&
                  !isRegisterRename(*carriedLayout,
                                    *tilegpu::getLayout(in.getType())))) {
        all = false;
        break;
      }
      ins.push_back(in);
    }
    if (!all)
      continue;
    OpBuilder b(loop);
    Value init = b.create<tilegpu::ConvertLayoutOp>(
        loop.getLoc(), carried, loop.getInitArgs()[i]);
    loop.getInitArgsMutable()[i].assign(init);
    arg.setType(carried);
    for (tilegpu::ConvertLayoutOp in : ins) {
      if (in.getType() == carried) {
        in.getResult().replaceAllUsesWith(arg);
        in.erase();
      } else {
        in.getSrcMutable().assign(arg);
      }
    }
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

/// Whether a conversion from `from` to `to` only renames registers: every
/// thread already holds each element `to` gives it (the lowering then moves
/// nothing through shared memory).
bool isRegisterRename(const LinearLayout &from, const LinearLayout &to) {
  if (from.sublayout({gpu::kLane, gpu::kWarp}) !=
      to.sublayout({gpu::kLane, gpu::kWarp}))
    return false;
  std::set<std::vector<int32_t>> held;
  for (int r = 0; r < from.inSize(gpu::kRegister); ++r)
    held.insert(from.apply({{gpu::kRegister, r}}));
  for (int r = 0; r < to.inSize(gpu::kRegister); ++r)
    if (!held.count(to.apply({{gpu::kRegister, r}})))
      return false;
  return true;
}

/// Records the ops a builder creates, to undo an unprofitable rewrite.
struct CreatedOps : OpBuilder::Listener {
  SmallVector<Operation *> ops;
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
};

/// Moves a conversion of a dot's result (from its tensor-core layout A to a
/// blocked one) below the ops that use the result: element-wise ops run in
/// A (their other operands recomputed there, or converted when smaller),
/// reductions in A give A's reduced layout, expand_dims and broadcasts
/// follow, and a dot takes its operand in whatever layout it comes (it
/// stages operands in shared memory). Values go back to their old layouts
/// only where something needs them (stores, loads, yields, other regions).
/// Done only when what is converted then is smaller than the conversion
/// removed (the attention kernel's scores: 64x32 floats through shared
/// memory each iteration, against two 64-float row vectors).
class ForwardPropagation {
public:
  explicit ForwardPropagation(tilegpu::ConvertLayoutOp cvt)
      : cvt(cvt), b(cvt), anchorType(cvt.getSrc().getType()),
        anchor(*tilegpu::getLayout(anchorType)) {
    b.setListener(&created);
  }

  bool run() {
    mapped[cvt.getResult()] = cvt.getSrc();
    bool rewroteSome = false;
    for (Operation *op = cvt->getNextNode(); op; op = op->getNextNode()) {
      SmallVector<Value> used = mappedValuesUsedBy(op);
      if (used.empty())
        continue;
      b.setInsertionPoint(op);
      if (Operation *clone = rewrite(op)) {
        for (auto [old, now] : llvm::zip(op->getResults(), clone->getResults()))
          mapped[old] = now;
        replaced.push_back(op);
        rewroteSome = true;
        continue;
      }
      if (!leave(op, used))
        return undo();
    }
    int64_t removed = tensorBytes(cvt.getType());
    // Carried values whose next value does not come from the new layouts
    // stay converted in every iteration.
    for (auto [arg, bytes] : carriedConverts) {
      auto loop = cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!mapped.count(loop.getYieldedValues()[arg.getArgNumber() - 1]))
        cost += bytes;
    }
    for (auto [arg, bytes] : yieldBacks)
      if (!llvm::any_of(carriedConverts,
                        [&](const auto &c) { return c.first == arg; }))
        cost += bytes;
    if (!rewroteSome || cost >= removed)
      return undo();
    for (auto &[use, value] : redirects)
      use->set(value);
    for (auto &[old, now] : replacements)
      old.replaceAllUsesWith(now);
    for (Operation *op : llvm::reverse(replaced))
      if (op->use_empty())
        op->erase();
    if (cvt->use_empty())
      cvt->erase();
    return true;
  }

private:
  /// The values of `op`'s operands (and of ops nested in it) with a new
  /// version in the propagated layouts.
  SmallVector<Value> mappedValuesUsedBy(Operation *op) {
    SmallVector<Value> used;
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (mapped.count(v) && !llvm::is_contained(used, v))
          used.push_back(v);
    });
    return used;
  }

  /// `v` (a propagated value) as type `t`, converted once right after its
  /// definition; conversions that move data count against the rewrite.
  Value convertTo(Value v, Type t) {
    if (v.getType() == t)
      return v;
    auto key = std::make_pair(v, t);
    if (auto it = converts.find(key); it != converts.end())
      return it->second;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfterValue(v);
    Value c = b.create<tilegpu::ConvertLayoutOp>(v.getLoc(), t, v);
    if (!isRegisterRename(*tilegpu::getLayout(v.getType()),
                          *tilegpu::getLayout(t)))
      cost += tensorBytes(t);
    return converts[key] = c;
  }

  /// `op` where propagation stops: its uses of propagated values take them
  /// back in their old layouts (a dot's A and B in any layout; a conversion
  /// converts from the new layout instead).
  bool leave(Operation *op, ArrayRef<Value> used) {
    if (auto c = dyn_cast<tilegpu::ConvertLayoutOp>(op)) {
      // One conversion for another: it costs what the old one did. Its
      // users (and what is recomputed from them) take the new one.
      Value now = mapped.lookup(c.getSrc());
      int64_t before = cost;
      Value again = convertTo(now, c.getType());
      cost = before;
      replacements[c.getResult()] = again;
      replaced.push_back(op);
      return true;
    }
    if (isa<scf::YieldOp>(op) && isa<scf::ForOp>(op->getParentOp())) {
      // Back to the carried layout; free when the loop then carries the
      // value in the new layout (checked at the end).
      auto loop = cast<scf::ForOp>(op->getParentOp());
      for (OpOperand &use : op->getOpOperands()) {
        Value now = mapped.lookup(use.get());
        if (!now)
          continue;
        int64_t before = cost;
        Value back = convertTo(now, use.get().getType());
        yieldBacks.push_back(
            {loop.getRegionIterArgs()[use.getOperandNumber()], cost - before});
        cost = before;
        redirects.push_back({&use, back});
      }
      return true;
    }
    if (auto dot = dyn_cast<tile::DotOp>(op)) {
      for (OpOperand &use : op->getOpOperands())
        if (Value now = mapped.lookup(use.get()))
          redirects.push_back(
              {&use, use.getOperandNumber() < 2 ? now
                                                : convertTo(now, use.get().getType())});
      return true;
    }
    for (Value old : used) {
      Value back = convertTo(mapped.lookup(old), old.getType());
      op->walk([&](Operation *inner) {
        for (OpOperand &use : inner->getOpOperands())
          if (use.get() == old)
            redirects.push_back({&use, back});
      });
    }
    return true;
  }

  /// A tensor operand of `op` in layout `layout`: propagated, recomputed,
  /// or (when smaller than the anchor) converted; null when none applies.
  Value operandIn(Value v, const LinearLayout &layout) {
    auto want = tilegpu::withLayout(v.getType(), layout);
    if (Value now = mapped.lookup(v)) {
      if (now.getType() == want)
        return now;
      if (!isRegisterRename(*tilegpu::getLayout(now.getType()), layout))
        return {};
      return convertTo(now, want);
    }
    Rematerializer remat{b, anchorType.getNumElements(), &replacements};
    if (Value r = remat.get(v, want))
      return r;
    if (auto arg = dyn_cast<BlockArgument>(v);
        arg && isa<scf::ForOp>(arg.getOwner()->getParentOp()) &&
        arg.getArgNumber() > 0) {
      // A carried value (attention's running row maximum): converted here
      // for now; when the loop yields its next value from this layout the
      // loop step carries it in this layout and the conversion leaves the
      // loop (checked at the end).
      auto key = std::make_pair(v, Type(want));
      if (auto it = converts.find(key); it != converts.end())
        return it->second;
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfterValue(v);
      Value c = b.create<tilegpu::ConvertLayoutOp>(v.getLoc(), want, v);
      carriedConverts.push_back({arg, tensorBytes(want)});
      return converts[key] = c;
    }
    if (want.getNumElements() * 4 > anchorType.getNumElements())
      return {};
    Value c = b.create<tilegpu::ConvertLayoutOp>(v.getLoc(), want, v);
    cost += tensorBytes(want);
    return c;
  }

  /// `op` rebuilt on propagated operands, or null where it stays.
  Operation *rewrite(Operation *op) {
    if (op->getNumResults() == 0 || op->hasTrait<OpTrait::IsTerminator>())
      return nullptr;
    if (auto red = dyn_cast<tile::ReduceOp>(op))
      return rewriteReduce(red);
    if (op->getNumRegions() != 0 || op->getNumResults() != 1 ||
        !isMemoryEffectFree(op))
      return nullptr;
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType)
      return nullptr;
    if (auto e = dyn_cast<tile::ExpandDimsOp>(op)) {
      Value src = mapped.lookup(e.getSrc());
      if (!src)
        return nullptr;
      return cloneWith(op, {src},
                       gpu::insertDim(*tilegpu::getLayout(src.getType()),
                                      e.getAxis()));
    }
    if (auto bc = dyn_cast<tile::BroadcastOp>(op)) {
      // Into the anchor's layout when the source is there already (up to a
      // renaming of registers).
      if (resultType.getShape() != anchorType.getShape())
        return nullptr;
      auto srcShape = shapeOf(bc.getSrc().getType());
      Value src = operandIn(bc.getSrc(), gpu::broadcastSource(anchor, srcShape));
      if (!src)
        return nullptr;
      return cloneWith(op, {src}, anchor);
    }
    if (!isElementwise(op))
      return nullptr;
    // Element-wise: the layout of the first propagated operand for all.
    std::optional<LinearLayout> layout;
    for (Value v : op->getOperands())
      if (Value now = mapped.lookup(v)) {
        layout = tilegpu::getLayout(now.getType());
        break;
      }
    if (!layout)
      return nullptr;
    SmallVector<Value> operands;
    for (Value v : op->getOperands()) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t) {
        operands.push_back(v);
        continue;
      }
      if (t.getShape() != resultType.getShape())
        return nullptr;
      Value now = operandIn(v, *layout);
      if (!now)
        return nullptr;
      operands.push_back(now);
    }
    return cloneWith(op, operands, *layout);
  }

  Operation *rewriteReduce(tile::ReduceOp red) {
    unsigned axis = red.getAxis();
    std::optional<LinearLayout> layout;
    for (Value v : red.getSrcs())
      if (Value now = mapped.lookup(v))
        layout = tilegpu::getLayout(now.getType());
    if (!layout || !gpu::canReduceAlong(*layout, axis))
      return nullptr;
    SmallVector<Value> operands;
    for (Value v : red->getOperands()) {
      Value now = operandIn(v, *layout);
      if (!now)
        return nullptr;
      operands.push_back(now);
    }
    LinearLayout reduced = gpu::reduceLayout(*layout, axis);
    Operation *clone = b.clone(*red);
    clone->setOperands(operands);
    for (Value r : clone->getResults())
      if (isa<RankedTensorType>(r.getType()))
        r.setType(tilegpu::withLayout(r.getType(), reduced));
    return clone;
  }

  Operation *cloneWith(Operation *op, ValueRange operands,
                       const LinearLayout &layout) {
    Operation *clone = b.clone(*op);
    clone->setOperands(operands);
    clone->getResult(0).setType(
        tilegpu::withLayout(op->getResult(0).getType(), layout));
    return clone;
  }

  bool undo() {
    for (Operation *op : llvm::reverse(created.ops)) {
      op->dropAllUses();
      op->erase();
    }
    return false;
  }

  tilegpu::ConvertLayoutOp cvt;
  CreatedOps created;
  OpBuilder b;
  RankedTensorType anchorType;
  LinearLayout anchor;
  DenseMap<Value, Value> mapped; ///< old value -> its version here
  /// Old conversions' results -> the same values from the new versions.
  DenseMap<Value, Value> replacements;
  DenseMap<std::pair<Value, Type>, Value> converts;
  SmallVector<std::pair<OpOperand *, Value>> redirects;
  SmallVector<Operation *> replaced; ///< old ops, dead after the redirects
  int64_t cost = 0; ///< bytes the new conversions move
  /// Conversions of loop-carried values (operandIn), with their bytes.
  SmallVector<std::pair<BlockArgument, int64_t>> carriedConverts;
  /// Conversions of yielded values back to their loop's carried layout.
  SmallVector<std::pair<BlockArgument, int64_t>> yieldBacks;
};

/// A dot's result, or what a loop returns of a dot's result it carries (an
/// accumulator after its K loop).
bool isDotResult(Value v) {
  if (v.getDefiningOp<tile::DotOp>())
    return true;
  auto loop = v.getDefiningOp<scf::ForOp>();
  if (!loop)
    return false;
  Value yielded = loop.getYieldedValues()[cast<OpResult>(v).getResultNumber()];
  return yielded.getDefiningOp<tile::DotOp>() != nullptr;
}

struct TileGPURemoveLayoutConversions
    : public tilegpu::impl::TileGPURemoveLayoutConversionsBase<
          TileGPURemoveLayoutConversions> {
  void runOnOperation() override {
    getOperation().walk([&](scf::ForOp loop) { carryInBodyLayout(loop); });
    // Moving a loop's carried value into its body's layout leaves a
    // conversion after the loop (attention's accumulator before its
    // epilogue), which propagates in turn: again until nothing moves.
    for (int round = 0; round < kMaxRounds; ++round) {
      propagateForward();
      rematerializeConversions();
      // Conversions moved next to a loop's arguments now move out of the
      // loop.
      bool moved = false;
      getOperation().walk(
          [&](scf::ForOp loop) { moved |= carryInBodyLayout(loop); });
      if (!moved)
        break;
    }
  }

  static constexpr int kMaxRounds = 4;

  /// Tensor-core results (and reductions of them) stay in their layout as
  /// far as that pays. A propagation may erase or replace conversions found
  /// before it: the candidates are looked up again after each.
  void propagateForward() {
    llvm::DenseSet<Operation *> tried;
    while (true) {
      tilegpu::ConvertLayoutOp next;
      getOperation().walk([&](tilegpu::ConvertLayoutOp cvt) {
        if (next || tried.contains(cvt))
          return;
        if (isDotResult(cvt.getSrc()) ||
            cvt.getSrc().getDefiningOp<tile::ReduceOp>())
          next = cvt;
      });
      if (!next)
        break;
      tried.insert(next);
      ForwardPropagation(next).run();
    }
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
