//===- Coalesce.cpp - Per-thread vectors of loads and stores --------------===//
//
// See Coalesce.h. Groups are the classes of a union-find over tensor values.
//
//===----------------------------------------------------------------------===//
#include "Coalesce.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace tessel {
namespace {

/// The default layout's most elements per thread along the last dimension.
constexpr int32_t kDefaultVector = 4;

bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

int64_t floorPow2(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v)
    p *= 2;
  return p;
}

class Groups {
public:
  Value find(Value v) {
    auto it = parent.find(v);
    if (it == parent.end()) {
      parent[v] = v;
      return v;
    }
    if (it->second == v)
      return v;
    Value root = find(it->second);
    parent[v] = root;
    return root;
  }

  void join(Value a, Value b) {
    if (!isTensor(a) || !isTensor(b))
      return;
    Value ra = find(a), rb = find(b);
    if (ra != rb)
      parent[ra] = rb;
  }

  void joinAll(ValueRange values) {
    Value first;
    for (Value v : values)
      if (isTensor(v)) {
        if (first)
          join(first, v);
        else
          first = find(v);
      }
  }

  /// The group keeps the default layout.
  void pin(Value v) {
    if (isTensor(v))
      pinned.insert(v);
  }

  void want(Value v, int32_t width) {
    if (!isTensor(v))
      return;
    Value r = find(v);
    auto [it, inserted] = width_.try_emplace(r, width);
    if (!inserted)
      it->second = std::min(it->second, width);
  }

  llvm::DenseMap<Value, int32_t> widths(int numWarps) {
    llvm::DenseSet<Value> pinnedRoots;
    for (Value v : pinned)
      pinnedRoots.insert(find(v));
    // Wants recorded on roots that later joined others move to the new root.
    llvm::DenseMap<Value, int32_t> byRoot;
    for (auto [v, w] : width_) {
      Value r = find(v);
      auto [it, inserted] = byRoot.try_emplace(r, w);
      if (!inserted)
        it->second = std::min(it->second, w);
    }
    SmallVector<Value> values;
    for (auto &entry : parent)
      values.push_back(entry.first);
    llvm::DenseMap<Value, int32_t> result;
    for (Value v : values) {
      Value r = find(v);
      auto it = byRoot.find(r);
      if (it == byRoot.end() || pinnedRoots.contains(r))
        continue;
      auto t = cast<RankedTensorType>(v.getType());
      int64_t perThread = t.getNumElements() / (32 * int64_t(numWarps));
      int64_t last = t.getShape().back();
      int64_t vec = std::min<int64_t>({it->second, perThread, last});
      int64_t dflt = std::clamp<int64_t>(std::min(perThread, last), 1,
                                         kDefaultVector);
      if (vec > dflt)
        result[v] = int32_t(vec);
    }
    return result;
  }

private:
  llvm::DenseMap<Value, Value> parent;
  llvm::DenseSet<Value> pinned;
  llvm::DenseMap<Value, int32_t> width_;
};

/// Elements one access of `ptr` should move: 16 bytes, no more than the
/// addresses are proved contiguous along the last dimension.
int32_t wantedWidth(const AxisInfoResult &axis, Value ptr) {
  auto t = dyn_cast<RankedTensorType>(ptr.getType());
  const AxisInfo *info = axis.lookup(ptr);
  if (!t || !info || info->isUninitialized())
    return 1;
  unsigned last = t.getRank() - 1;
  int64_t bytes = pointeeBytes(ptr.getType());
  if (bytes <= 0 || bytes > 16)
    return 1;
  return int32_t(floorPow2(std::min<int64_t>(
      {16 / bytes, info->getContiguity(last), t.getDimSize(last)})));
}

} // namespace

llvm::DenseMap<Value, int32_t>
coalescedVectors(Operation *root, const AxisInfoResult &axis, int numWarps) {
  Groups groups;
  root->walk([&](Operation *op) {
    // Block arguments: a loop's carried values join their inits, yields and
    // results (below); any other region's tensor arguments stay default.
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments()) {
          auto loop = dyn_cast<scf::ForOp>(op);
          if (!loop || arg.getArgNumber() == 0)
            groups.pin(arg);
        }

    if (auto load = dyn_cast<tile::LoadOp>(op)) {
      groups.joinAll(op->getOperands());
      groups.join(load.getPtr(), load.getResult());
      groups.want(load.getPtr(), wantedWidth(axis, load.getPtr()));
    } else if (auto store = dyn_cast<tile::StoreOp>(op)) {
      groups.joinAll(op->getOperands());
      groups.want(store.getPtr(), wantedWidth(axis, store.getPtr()));
    } else if (isa<tile::AddPtrOp>(op) ||
               (op->getNumRegions() == 0 &&
                isa<arith::ArithDialect, math::MathDialect>(
                    op->getDialect()))) {
      // Element-wise: operands and result in one layout.
      SmallVector<Value> all(op->getOperands());
      all.append(op->result_begin(), op->result_end());
      groups.joinAll(all);
    } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
      for (auto [init, arg, yielded, result] :
           llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(),
                     loop.getYieldedValues(), loop.getResults()))
        groups.joinAll({init, arg, yielded, result});
    } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
      for (auto [i, result] : llvm::enumerate(branch.getResults())) {
        groups.join(result, branch.thenYield().getOperand(i));
        if (!branch.getElseRegion().empty())
          groups.join(result, branch.elseYield().getOperand(i));
      }
    } else if (isa<scf::YieldOp>(op) &&
               isa<scf::ForOp, scf::IfOp>(op->getParentOp())) {
      // Joined by the parent.
    } else if (auto dot = dyn_cast<tile::DotOp>(op)) {
      // Operands are staged through shared memory from any layout; the
      // accumulator of a dot off the tensor cores stays in its result's.
      groups.join(dot.getC(), dot.getD());
    } else if (auto red = dyn_cast<tile::ReduceOp>(op)) {
      groups.joinAll(red.getSrcs()); // reduced together, in one layout
    } else if (isa<tile::SplatOp, tile::MakeRangeOp, tile::BroadcastOp,
                   tile::ExpandDimsOp, tile::ReshapeOp, tile::TransOp,
                   tile::ReduceReturnOp>(op)) {
      // Each side's layout is free: the layout pass converts between them.
    } else {
      for (Value v : op->getOperands())
        groups.pin(v);
      for (Value v : op->getResults())
        groups.pin(v);
    }
  });
  return groups.widths(numWarps);
}

} // namespace tessel
