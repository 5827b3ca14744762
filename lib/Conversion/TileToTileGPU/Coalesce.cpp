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

/// What one load or store wants of its group's layout.
struct Want {
  unsigned dim;                 // the dimension to run along
  SmallVector<int32_t> widths;  // elements per access along each dimension
};

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

  void want(Value v, Want w) { wants.emplace_back(v, std::move(w)); }

  llvm::DenseMap<Value, CoalescedAccess> accesses(int numThreads) {
    llvm::DenseSet<Value> pinnedRoots;
    for (Value v : pinned)
      pinnedRoots.insert(find(v));
    // Each group's dimension and width, from the wants of its memory ops.
    llvm::DenseMap<Value, SmallVector<const Want *>> byRoot;
    for (auto &[v, w] : wants)
      byRoot[find(v)].push_back(&w);
    llvm::DenseMap<Value, CoalescedAccess> chosen;
    for (auto &[root, ws] : byRoot) {
      unsigned dim = ws.front()->dim;
      if (llvm::any_of(ws, [&](const Want *w) { return w->dim != dim; }))
        dim = ws.front()->widths.size() - 1; // disagreeing: the last
      int32_t width = ws.front()->widths[dim];
      for (const Want *w : ws)
        width = std::min(width, w->widths[dim]);
      chosen[root] = {dim, width};
    }
    SmallVector<Value> values;
    for (auto &entry : parent)
      values.push_back(entry.first);
    llvm::DenseMap<Value, CoalescedAccess> result;
    for (Value v : values) {
      Value r = find(v);
      auto it = chosen.find(r);
      if (it == chosen.end() || pinnedRoots.contains(r))
        continue;
      auto t = cast<RankedTensorType>(v.getType());
      unsigned dim = it->second.dim;
      int64_t perThread = t.getNumElements() / numThreads;
      int64_t size = t.getDimSize(dim);
      int64_t vec =
          std::max<int64_t>(1, std::min<int64_t>({it->second.width, perThread,
                                                  size}));
      if (dim + 1 == unsigned(t.getRank())) {
        // The default layout already runs along the last dimension.
        int64_t dflt = std::clamp<int64_t>(std::min(perThread, size), 1,
                                           kDefaultVector);
        if (vec <= dflt)
          continue;
      }
      result[v] = {dim, int32_t(vec)};
    }
    return result;
  }

private:
  llvm::DenseMap<Value, Value> parent;
  llvm::DenseSet<Value> pinned;
  SmallVector<std::pair<Value, Want>> wants;
};

/// What one memory op through `ptr` wants: the dimension its addresses are
/// proved most contiguous along (the last on ties), and per dimension the
/// elements one access along it could move (16 bytes, no more than the
/// contiguity).
Want wantedAccess(const AxisInfoResult &axis, Value ptr) {
  auto t = cast<RankedTensorType>(ptr.getType());
  unsigned rank = t.getRank();
  Want w{rank - 1, SmallVector<int32_t>(rank, 1)};
  const AxisInfo *info = axis.lookup(ptr);
  int64_t bytes = pointeeBytes(ptr.getType());
  if (!info || info->isUninitialized() || bytes <= 0 || bytes > 16)
    return w;
  for (unsigned d = 0; d < rank; ++d) {
    w.widths[d] = int32_t(floorPow2(std::min<int64_t>(
        {16 / bytes, info->getContiguity(d), t.getDimSize(d)})));
    if (info->getContiguity(d) > info->getContiguity(w.dim))
      w.dim = d;
  }
  return w;
}

} // namespace

llvm::DenseMap<Value, CoalescedAccess>
coalescedAccesses(Operation *root, const AxisInfoResult &axis, int numThreads) {
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
      if (isTensor(load.getPtr()))
        groups.want(load.getPtr(), wantedAccess(axis, load.getPtr()));
    } else if (auto store = dyn_cast<tile::StoreOp>(op)) {
      groups.joinAll(op->getOperands());
      if (isTensor(store.getPtr()))
        groups.want(store.getPtr(), wantedAccess(axis, store.getPtr()));
    } else if (isa<tile::AtomicRMWOp, tile::AtomicCASOp>(op)) {
      // One element per access, each register its own atomic: any layout
      // of the group does, as long as operands and result share it.
      SmallVector<Value> all(op->getOperands());
      all.append(op->result_begin(), op->result_end());
      groups.joinAll(all);
    } else if (isa<tile::AddPtrOp, tile::IntToPtrOp, tile::PtrToIntOp,
                   tile::PtrCastOp, tile::ElementwiseInlineAsmOp,
                   tile::ExternElementwiseOp>(op) ||
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
  return groups.accesses(numThreads);
}

} // namespace tessel
