//===- BufferOps.cpp - Global accesses through buffer resources ------------===//
//
// Loads and stores of one scalar pointer plus i32 offsets become buffer
// accesses where MLIR's integer range analysis bounds the offsets: every
// one non-negative, every byte of every access inside the resource's range.
//
//===----------------------------------------------------------------------===//
#include "tessel/AMD/Passes.h"
#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/IR/Dialect.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace tessel::amd {
#define GEN_PASS_DEF_AMDBUFFERACCESSES
#include "tessel/AMD/Passes.h.inc"
} // namespace tessel::amd

using namespace mlir;
using namespace tessel;

namespace {

/// Pointers split into the program's one base pointer and element offsets.
struct Split {
  Value base;
  SmallVector<Value> offsets; // summed: one per tile.addptr on the way
};

/// `ptr` (a tensor of pointers) as base + offsets: tile.addptr of a
/// tile.splat, through addptrs of i32 offsets and ops that only move
/// elements.
std::optional<Split> splitPointers(Value ptr) {
  Split split;
  while (true) {
    if (auto convert = ptr.getDefiningOp<tilegpu::ConvertLayoutOp>()) {
      ptr = convert.getSrc();
    } else if (auto broadcast = ptr.getDefiningOp<tile::BroadcastOp>()) {
      ptr = broadcast.getSrc();
      if (!ptr.getDefiningOp<tile::SplatOp>())
        return std::nullopt; // a broadcast of offsets: not one per element
    } else if (auto add = ptr.getDefiningOp<tile::AddPtrOp>()) {
      auto type = dyn_cast<RankedTensorType>(add.getOffset().getType());
      if (!type || !type.getElementType().isInteger(32))
        return std::nullopt;
      split.offsets.push_back(add.getOffset());
      ptr = add.getPtr();
    } else if (auto splat = ptr.getDefiningOp<tile::SplatOp>()) {
      if (split.offsets.empty())
        return std::nullopt;
      split.base = splat.getSrc();
      return split;
    } else {
      return std::nullopt;
    }
  }
}

class AmdBufferAccesses
    : public amd::impl::AmdBufferAccessesBase<AmdBufferAccesses> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    DataFlowSolver solver;
    solver.load<dataflow::DeadCodeAnalysis>();
    solver.load<dataflow::SparseConstantPropagation>();
    solver.load<dataflow::IntegerRangeAnalysis>();
    if (failed(solver.initializeAndRun(module)))
      return signalPassFailure();

    SmallVector<std::pair<Operation *, Split>> accesses;
    module.walk([&](Operation *op) {
      Value ptr;
      if (auto load = dyn_cast<tile::LoadOp>(op)) {
        if (!load.getIsVolatile())
          ptr = load.getPtr();
      } else if (auto store = dyn_cast<tile::StoreOp>(op)) {
        ptr = store.getPtr();
      }
      if (!ptr || !tilegpu::getLayout(ptr.getType()) || !sameLayouts(op))
        return;
      if (std::optional<Split> split = splitPointers(ptr);
          split && fits(solver, *split))
        accesses.push_back({op, *split});
    });
    for (auto &[op, split] : accesses)
      rewrite(op, split);
  }

private:
  /// Whether the access's data, mask and `other` share one layout, as the
  /// buffer ops need.
  static bool sameLayouts(Operation *op) {
    Type data;
    Value mask, other;
    if (auto load = dyn_cast<tile::LoadOp>(op)) {
      data = load.getType();
      mask = load.getMask();
      other = load.getOther();
    } else {
      auto store = cast<tile::StoreOp>(op);
      data = store.getValue().getType();
      mask = store.getMask();
    }
    auto type = dyn_cast<RankedTensorType>(data);
    if (!type || (other && other.getType() != type))
      return false;
    auto m = mask ? dyn_cast<RankedTensorType>(mask.getType()) : nullptr;
    return !mask || (m && m.getEncoding() == type.getEncoding());
  }

  /// Whether every offset of `split` is provably in [0, range / size), the
  /// elements of the base's type that the resource covers whole.
  static bool fits(DataFlowSolver &solver, const Split &split) {
    auto ptr = cast<tile::PointerType>(split.base.getType());
    Type elt = ptr.getPointeeType();
    if (ptr.getAddressSpace() != 1 || !elt.isIntOrFloat())
      return false;
    int64_t size = std::max(1u, elt.getIntOrFloatBitWidth() / 8);
    int64_t lo = 0, hi = 0;
    for (Value offsets : split.offsets) {
      auto *state =
          solver.lookupState<dataflow::IntegerValueRangeLattice>(offsets);
      if (!state || state->getValue().isUninitialized())
        return false;
      const ConstantIntRanges &range = state->getValue().getValue();
      lo += range.smin().getSExtValue();
      hi += range.smax().getSExtValue();
    }
    return lo >= 0 && (hi + 1) * size <= tilegpu::kBufferRange;
  }

  /// The sum of `split`'s offsets in the layout of `like`.
  static Value offsetsLike(OpBuilder &b, Location loc, const Split &split,
                           RankedTensorType like) {
    auto type = RankedTensorType::get(like.getShape(), b.getI32Type(),
                                      like.getEncoding());
    Value sum;
    for (Value offsets : split.offsets) {
      if (offsets.getType() != type)
        offsets = b.create<tilegpu::ConvertLayoutOp>(loc, type, offsets);
      sum = sum ? b.create<arith::AddIOp>(loc, sum, offsets).getResult()
                : offsets;
    }
    return sum;
  }

  static void rewrite(Operation *op, const Split &split) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Operation *access;
    if (auto load = dyn_cast<tile::LoadOp>(op)) {
      auto type = cast<RankedTensorType>(load.getResult().getType());
      access = b.create<tilegpu::BufferLoadOp>(
          loc, type, split.base, offsetsLike(b, loc, split, type),
          load.getMask(), load.getOther());
      load.getResult().replaceAllUsesWith(access->getResult(0));
    } else {
      auto store = cast<tile::StoreOp>(op);
      auto type = cast<RankedTensorType>(store.getValue().getType());
      access = b.create<tilegpu::BufferStoreOp>(
          loc, split.base, offsetsLike(b, loc, split, type), store.getValue(),
          store.getMask());
    }
    // The vector width the layout pass proved, and any other marks.
    access->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    Value ptr = op->getOperand(0);
    op->erase();
    eraseIfDead(ptr.getDefiningOp());
  }

  /// Erases `op` if nothing uses it any more, then the ops that made its
  /// operands, the same way: the pointers the buffer access replaced.
  static void eraseIfDead(Operation *op) {
    if (!op || !isOpTriviallyDead(op))
      return;
    llvm::SetVector<Operation *> producers;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        producers.insert(def);
    op->erase();
    for (Operation *def : producers)
      eraseIfDead(def);
  }
};

} // namespace
