//===- MemoryBarriers.cpp - Program order for a block's accesses ----------===//
//
// See the pass description in include/tessel/Dialect/TileGPU/Transforms/
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/TileGPU/Transforms/Passes.h"

#include "tessel/Analysis/PointerRoots.h"
#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

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

bool mayConflict(const Access &a, const Access &b) {
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
  if (!a.root || !b.root)
    return true;
  if (a.root == b.root)
    return true;
  return !isNoalias(a.root) && !isNoalias(b.root);
}

struct Walker {
  bool insert; // false: only compute what is pending

  void access(Operation *op, Value ptr, bool isWrite,
              SmallVectorImpl<Access> &pending) {
    Access a{op, ptr, pointerRootArgument(ptr), isWrite};
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
