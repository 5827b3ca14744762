//===- MemoryBarriers.cpp - Program order for a block's accesses ----------===//
//
// See the pass description in include/tessel/Dialect/TileGPU/Transforms/
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/TileGPU/Transforms/Passes.h"

#include "tessel/Analysis/PointerRoots.h"
#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace tessel::tilegpu {
#define GEN_PASS_DEF_TILEGPUMEMORYBARRIERS
#include "tessel/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tessel::tilegpu

using namespace mlir;
using namespace tessel;

namespace {

struct Access {
  Operation *op;
  Value ptr;
  BlockArgument root; // null: not known
  bool isWrite;
  /// Set on accesses of a loop's previous iteration: the same pointer value
  /// there may hold other addresses (it can depend on the iteration).
  Operation *previousIterationOf = nullptr;
  /// An atomic with acquire semantics: every later access of the program
  /// comes after it, whatever memory it touches.
  bool acquires = false;
  /// An atomic with release semantics: every earlier write of the program
  /// comes before it.
  bool releases = false;
};

/// Whether `v` has the same value in every iteration of `loop`.
bool invariantIn(Value v, Operation *loop) {
  Operation *owner = v.getParentBlock()->getParentOp();
  return !loop->isAncestor(owner);
}

bool isNoalias(BlockArgument arg) {
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return func && func.getArgAttr(arg.getArgNumber(), "tile.noalias");
}

/// Whether each element of `ptr` is held by exactly one thread.
bool ownedOnce(Value ptr) {
  auto layout = tilegpu::getLayout(ptr.getType());
  return layout && layout->freeBits(gpu::kLane) == 0 &&
         layout->freeBits(gpu::kWarp) == 0 &&
         layout->freeBits(gpu::kRegister) == 0;
}

/// The element offsets of a block of pointers (or of an integer block) in
/// one iteration of a loop: `iv * perIteration` plus values in [lo, hi],
/// plus a shift that is the same in every iteration (scalars defined outside
/// the loop, whose values do not matter here).
struct IterationOffsets {
  int64_t perIteration = 0, lo = 0, hi = 0;

  IterationOffsets operator+(const IterationOffsets &o) const {
    return {perIteration + o.perIteration, lo + o.lo, hi + o.hi};
  }
  IterationOffsets scaled(int64_t c) const {
    return {perIteration * c, std::min(lo * c, hi * c),
            std::max(lo * c, hi * c)};
  }
};

/// The constant of a scalar or splat integer constant.
std::optional<int64_t> constantOf(Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return std::nullopt;
}

/// Offsets of `v` per iteration of `loop`, or nothing where they cannot be
/// bounded: only constants, ranges, the loop's induction variable, values
/// from outside the loop, and sums, differences and constant multiples of
/// those (index arithmetic is taken not to overflow, as AxisInfo does).
std::optional<IterationOffsets> iterationOffsets(Value v, scf::ForOp loop,
                                                 int depth = 0);

/// iterationOffsets where its numbers stay far from overflowing.
std::optional<IterationOffsets> bounded(std::optional<IterationOffsets> o) {
  constexpr int64_t kLimit = int64_t(1) << 40;
  if (o && std::abs(o->perIteration) < kLimit && std::abs(o->lo) < kLimit &&
      std::abs(o->hi) < kLimit)
    return o;
  return std::nullopt;
}

std::optional<IterationOffsets> iterationOffsets(Value v, scf::ForOp loop,
                                                 int depth) {
  if (depth > 32)
    return std::nullopt;
  bool scalar = !isa<RankedTensorType>(v.getType());
  if (v == loop.getInductionVar())
    return IterationOffsets{1, 0, 0};
  if (auto c = constantOf(v))
    return IterationOffsets{0, *c, *c};
  if (invariantIn(v, loop)) {
    // Outside the loop: the same in every iteration. A scalar only shifts
    // the block; a block's own spread must still be known.
    if (scalar)
      return IterationOffsets{0, 0, 0};
  }
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  auto operand = [&](unsigned i) {
    return bounded(iterationOffsets(op->getOperand(i), loop, depth + 1));
  };
  if (auto range = dyn_cast<tile::MakeRangeOp>(op))
    return IterationOffsets{0, range.getStart(), range.getEnd() - 1};
  if (isa<tile::SplatOp, tile::BroadcastOp, tile::ExpandDimsOp,
          tile::ReshapeOp, tile::TransOp, tilegpu::ConvertLayoutOp,
          arith::ExtSIOp, arith::ExtUIOp, arith::IndexCastOp>(op))
    return operand(0);
  if (isa<tile::AddPtrOp, arith::AddIOp>(op)) {
    auto a = operand(0), b = operand(1);
    if (!a || !b)
      return std::nullopt;
    return *a + *b;
  }
  if (isa<arith::SubIOp>(op)) {
    auto a = operand(0), b = operand(1);
    if (!a || !b)
      return std::nullopt;
    return *a + b->scaled(-1);
  }
  if (isa<arith::MulIOp>(op)) {
    for (unsigned i = 0; i < 2; ++i)
      if (auto c = constantOf(op->getOperand(1 - i))) {
        auto a = operand(i);
        if (!a || std::abs(*c) >= (int64_t(1) << 20))
          return std::nullopt;
        return a->scaled(*c);
      }
  }
  return std::nullopt;
}

/// Whether the addresses of `ptr` in one iteration of `loop` never meet
/// those of another iteration: the block moves by more than it spans.
bool disjointAcrossIterations(Value ptr, scf::ForOp loop) {
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  std::optional<IterationOffsets> offsets =
      bounded(iterationOffsets(ptr, loop));
  if (!step || !offsets)
    return false;
  __int128 move = __int128(offsets->perIteration) * *step;
  if (move < 0)
    move = -move;
  return move > __int128(offsets->hi) - offsets->lo;
}

/// Whether access `b` must wait for the earlier access `a`.
bool mayConflict(const Access &a, const Access &b) {
  // Atomics order the program's other accesses, whichever threads make
  // them: a lock is taken (acquire) before any thread enters the critical
  // section, and released after every thread's writes in it.
  if (a.acquires || (b.releases && a.isWrite))
    return true;
  if (!a.isWrite && !b.isWrite)
    return false;
  // The same pointers in a layout without copies: each thread only touches
  // the elements it holds, in its own program order.
  auto sameAddresses = [&](const Access &x) {
    return !x.previousIterationOf ||
           invariantIn(x.ptr, x.previousIterationOf);
  };
  if (a.ptr == b.ptr && ownedOnce(a.ptr) && sameAddresses(a) &&
      sameAddresses(b))
    return false;
  // The same pointers in different iterations of a loop they move in, by
  // more than the block spans: the two accesses touch different addresses.
  if (a.ptr == b.ptr && (a.previousIterationOf || b.previousIterationOf)) {
    Operation *loop = a.previousIterationOf ? a.previousIterationOf
                                            : b.previousIterationOf;
    if (auto forOp = dyn_cast<scf::ForOp>(loop))
      if (disjointAcrossIterations(a.ptr, forOp))
        return false;
  }
  if (!a.root || !b.root)
    return true;
  if (a.root == b.root)
    return true;
  return !isNoalias(a.root) && !isNoalias(b.root);
}

/// Whether the function `call` calls (or one it calls) loads, stores or
/// makes atomics.
bool touchesMemory(func::CallOp call, int depth = 0) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee || callee.isExternal() || depth > 64)
    return true;
  return callee
      .walk([&](Operation *op) {
        if (isa<tile::LoadOp, tile::StoreOp, tile::AtomicRMWOp,
                tile::AtomicCASOp, tile::DescriptorLoadOp,
                tile::DescriptorStoreOp, tilegpu::AsyncCopyOp,
                tilegpu::TmaLoadOp, tilegpu::TmaStoreOp>(op))
          return WalkResult::interrupt();
        if (auto inner = dyn_cast<func::CallOp>(op))
          if (touchesMemory(inner, depth + 1))
            return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

struct Walker {
  bool insert; // false: only compute what is pending

  void access(Operation *op, Value ptr, bool isWrite,
              SmallVectorImpl<Access> &pending,
              std::optional<tile::MemSemantic> sem = std::nullopt) {
    Access a{op, ptr, pointerRootArgument(ptr), isWrite};
    if (sem) {
      a.acquires = *sem == tile::MemSemantic::acquire ||
                   *sem == tile::MemSemantic::acq_rel;
      a.releases = *sem == tile::MemSemantic::release ||
                   *sem == tile::MemSemantic::acq_rel;
    }
    order(a, pending);
  }

  /// Puts a barrier before `a` if it may conflict with a pending access.
  void order(const Access &a, SmallVectorImpl<Access> &pending) {
    Operation *op = a.op;
    for (const Access &p : pending)
      if (mayConflict(p, a)) {
        if (insert) {
          OpBuilder b(op);
          b.create<tilegpu::BarrierOp>(op->getLoc());
        }
        pending.clear();
        break;
      }
    pending.push_back(a);
  }

  void walkBlock(Block &block, SmallVectorImpl<Access> &pending) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (isa<tilegpu::BarrierOp>(op)) {
        pending.clear();
      } else if (auto load = dyn_cast<tile::LoadOp>(op)) {
        access(&op, load.getPtr(), false, pending);
      } else if (auto copy = dyn_cast<tilegpu::AsyncCopyOp>(op)) {
        access(&op, copy.getPtr(), false, pending);
      } else if (auto store = dyn_cast<tile::StoreOp>(op)) {
        access(&op, store.getPtr(), true, pending);
      } else if (isa<tile::AtomicRMWOp, tile::AtomicCASOp>(op)) {
        auto sem = isa<tile::AtomicRMWOp>(op)
                       ? cast<tile::AtomicRMWOp>(op).getSem()
                       : cast<tile::AtomicCASOp>(op).getSem();
        access(&op, op.getOperand(0), true, pending, sem);
        // Old values that go from their owners to other threads pass a
        // barrier after every thread's atomic: it orders what follows.
        if (tilegpu::atomicResultCrossesThreads(&op))
          pending.clear();
      } else if (auto call = dyn_cast<func::CallOp>(op)) {
        // A function that touches memory: its accesses come after every
        // pending one and before every later one (it gets its own barriers
        // inside).
        if (touchesMemory(call)) {
          Access a{&op, Value(), BlockArgument(), /*isWrite=*/true};
          a.acquires = a.releases = true;
          order(a, pending);
        }
      } else if (isa<scf::ForOp, scf::WhileOp>(op)) {
        // Twice: the second walk sees the first iteration's accesses
        // pending, as the next iteration does.
        for (int pass = 0; pass < 2; ++pass) {
          if (pass == 1)
            for (Access &a : pending)
              if (!a.previousIterationOf && op.isAncestor(a.op))
                a.previousIterationOf = &op;
          for (Region &r : op.getRegions())
            for (Block &b : r)
              walkBlock(b, pending);
        }
      } else if (op.getNumRegions() > 0) {
        SmallVector<Access> merged;
        for (Region &r : op.getRegions())
          for (Block &b : r) {
            SmallVector<Access> branch(pending.begin(), pending.end());
            walkBlock(b, branch);
            merged.append(branch.begin(), branch.end());
          }
        pending.assign(merged.begin(), merged.end());
      }
    }
  }
};

struct TileGPUMemoryBarriers
    : public tilegpu::impl::TileGPUMemoryBarriersBase<TileGPUMemoryBarriers> {
  void runOnOperation() override {
    SmallVector<Access> pending;
    Walker{/*insert=*/true}.walkBlock(getOperation().getBody().front(),
                                      pending);
  }
};

} // namespace
