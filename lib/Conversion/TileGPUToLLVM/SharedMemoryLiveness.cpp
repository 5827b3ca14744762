//===- SharedMemoryLiveness.cpp - When shared bytes are in use ----------------===//
//
// Live ranges of shared-memory claims in program order, and their placement.
//
//===----------------------------------------------------------------------===//
#include "SharedMemoryLiveness.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/IR/Dialect.h"

#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;

SharedMemoryLiveness::SharedMemoryLiveness(Operation *func) : func(func) {
  int64_t next = 0;
  func->walk<WalkOrder::PreOrder>(
      [&](Operation *op) { position[op] = next++; });
  // Each op's subtree ends where the walk after it starts.
  func->walk<WalkOrder::PostOrder>([&](Operation *op) {
    int64_t end = position[op];
    for (Region &r : op->getRegions())
      for (Block &b : r)
        if (!b.empty())
          end = std::max(end, subtreeEnd[&b.back()]);
    subtreeEnd[op] = end;
  });
}

Operation *SharedMemoryLiveness::liveUnit(Operation *op, Operation *def) const {
  Operation *unit = op;
  for (Operation *p = op->getParentOp(); p && p != func; p = p->getParentOp())
    if (isa<LoopLikeOpInterface>(p) && !p->isAncestor(def))
      unit = p;
  return unit;
}

bool SharedMemoryLiveness::runsBefore(const LiveRange &earlier,
                                      Operation *op) const {
  if (earlier.end < position.lookup(op))
    return true;
  for (Operation *p = op->getParentOp(); p && p != func; p = p->getParentOp())
    if (isa<LoopLikeOpInterface>(p) && rangeOf(p).start < earlier.start &&
        earlier.end <= rangeOf(p).end)
      return true;
  return false;
}

LiveRange SharedMemoryLiveness::bufferRange(Operation *alloc,
                                            Operation *&first) const {
  LiveRange range = rangeOf(alloc);
  first = alloc;
  Operation *last = alloc;
  bool used = false, copied = false;
  auto use = [&](Operation *user) {
    Operation *unit = liveUnit(user, alloc);
    LiveRange r = rangeOf(unit);
    if (!used || r.start < range.start) {
      range.start = r.start;
      first = unit;
    }
    if (!used || r.end > range.end) {
      range.end = r.end;
      last = unit;
    }
    used = true;
  };
  // mbarriers are initialized where they are allocated.
  if (isa<tilegpu::MBarrierAllocOp>(alloc))
    use(alloc);
  SmallVector<Value> aliases{alloc->getResult(0)};
  llvm::DenseSet<Value> seen;
  while (!aliases.empty()) {
    Value buffer = aliases.pop_back_val();
    if (!seen.insert(buffer).second)
      continue;
    for (Operation *user : buffer.getUsers()) {
      if (isa<tilegpu::AsyncCopyOp>(user)) {
        copied = true;
        use(user);
        continue;
      }
      if (isa<tilegpu::LocalStoreOp>(user)) {
        use(user);
        continue;
      }
      if (auto load = dyn_cast<tilegpu::LocalLoadOp>(user)) {
        use(user);
        // Dots that read the slot in place, through layout conversions.
        SmallVector<Value> values{load.getResult()};
        while (!values.empty())
          for (Operation *reader : values.pop_back_val().getUsers()) {
            if (isa<tilegpu::ConvertLayoutOp>(reader))
              values.push_back(reader->getResult(0));
            else if (isa<tile::DotOp>(reader))
              use(reader);
          }
        continue;
      }
      // Any other op may pass the buffer on: it is live over the whole op
      // (a terminator's parent), and what that op defines of buffer type
      // may be the same buffer.
      Operation *holder = user->hasTrait<OpTrait::IsTerminator>()
                              ? user->getParentOp()
                              : user;
      use(holder);
      for (Value r : holder->getResults())
        if (isa<tilegpu::SharedBufferType>(r.getType()))
          aliases.push_back(r);
      for (Region &region : holder->getRegions())
        for (Block &b : region)
          for (BlockArgument a : b.getArguments())
            if (isa<tilegpu::SharedBufferType>(a.getType()))
              aliases.push_back(a);
    }
  }
  if (!copied)
    return range;
  // Copies land when a wait retires them: the first wait for all of them
  // after the last access, at its level or around it. Leaving a loop on the
  // way, the buffer is live over the whole loop (the copies of one iteration
  // may land in the next).
  for (Operation *cur = last;;) {
    for (Operation *op = cur->getNextNode(); op; op = op->getNextNode())
      if (auto wait = dyn_cast<tilegpu::AsyncWaitOp>(op);
          wait && wait.getPending() == 0) {
        range.end = std::max(range.end, position.lookup(op));
        return range;
      }
    Operation *parent = cur->getParentOp();
    if (!parent || parent == func) {
      range.end = subtreeEnd.lookup(func);
      return range;
    }
    if (isa<LoopLikeOpInterface>(parent)) {
      LiveRange loop = rangeOf(parent);
      if (loop.start < range.start) {
        range.start = loop.start;
        first = parent;
      }
      range.end = std::max(range.end, loop.end);
    }
    cur = parent;
  }
}

int64_t gpu::lowering::placeSharedClaims(MutableArrayRef<SharedClaim> claims) {
  int64_t total = 0;
  SmallVector<SharedClaim *> placed, order;
  for (SharedClaim &c : claims) {
    if (!c.pinned) {
      order.push_back(&c);
      continue;
    }
    assert(llvm::none_of(placed,
                         [&](SharedClaim *p) {
                           return p->range.intersects(c.range);
                         }) &&
           "pinned claims live at the same time");
    c.offset = 0;
    total = std::max(total, c.bytes);
    placed.push_back(&c);
  }
  llvm::stable_sort(order, [](const SharedClaim *a, const SharedClaim *b) {
    return a->bytes > b->bytes;
  });
  for (SharedClaim *c : order) {
    SmallVector<std::pair<int64_t, int64_t>> busy;
    for (SharedClaim *p : placed)
      if (p->range.intersects(c->range))
        busy.push_back({p->offset, p->offset + p->bytes});
    llvm::sort(busy);
    int64_t at = 0;
    for (auto [lo, hi] : busy) {
      if (at + c->bytes <= lo)
        break;
      at = std::max(at, int64_t(llvm::alignTo(hi, c->alignment)));
    }
    c->offset = at;
    total = std::max(total, at + c->bytes);
    placed.push_back(c);
  }
  return total;
}
