//===- PointerRoots.cpp - Which kernel argument a pointer comes from ------===//
#include "tessel/Analysis/PointerRoots.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace tessel::tile;

namespace {

/// The root of a pointer: a kernel argument, unknown (null), or the loop
/// argument whose root is being determined (a pointer that comes back to it).
struct Root {
  BlockArgument arg;
  bool isCycle = false;
};

Root rootOf(Value ptr, SmallPtrSetImpl<Value> &open) {
  while (Operation *def = ptr.getDefiningOp()) {
    if (auto ap = dyn_cast<AddPtrOp>(def))
      ptr = ap.getPtr();
    else if (isa<SplatOp, BroadcastOp, ExpandDimsOp, ReshapeOp, TransOp,
                 PtrCastOp>(def))
      ptr = def->getOperand(0); // a pointer cast keeps the addresses
    else if (isMemoryEffectFree(def) && def->getNumOperands() == 1 &&
             def->getNumResults() == 1 &&
             isa<PointerType>(getElementTypeOrSelf(def->getOperand(0))) &&
             getShapeOrEmpty(def->getOperand(0).getType()) ==
                 getShapeOrEmpty(def->getResult(0).getType()) &&
             getElementTypeOrSelf(def->getOperand(0)) ==
                 getElementTypeOrSelf(def->getResult(0)))
      ptr = def->getOperand(0); // the same pointers elsewhere (a GPU layout)
    else
      return {};
  }
  auto arg = cast<BlockArgument>(ptr);
  Operation *owner = arg.getOwner()->getParentOp();
  if (isa<func::FuncOp>(owner))
    return {arg};
  if (open.contains(arg))
    return {nullptr, /*isCycle=*/true};
  // A pointer carried by a loop has the root of its initial value when every
  // iteration yields a pointer computed from the same root or from itself.
  auto loop = dyn_cast<scf::ForOp>(owner);
  if (!loop || arg == loop.getInductionVar())
    return {};
  unsigned i = arg.getArgNumber() - loop.getNumInductionVars();
  Root init = rootOf(loop.getInitArgs()[i], open);
  if (!init.arg)
    return {};
  open.insert(arg);
  Root next = rootOf(loop.getYieldedValues()[i], open);
  open.erase(arg);
  if (next.isCycle || next.arg == init.arg)
    return init;
  return {};
}

} // namespace

BlockArgument tessel::pointerRootArgument(Value ptr) {
  SmallPtrSet<Value, 4> open;
  return rootOf(ptr, open).arg;
}

namespace {

/// Which parameters of `fn` it or a function it calls may store through
/// (every pointer parameter when the root of some store cannot be seen);
/// memoized in `memo`.
const SmallVector<bool> &
writtenParameters(func::FuncOp fn,
                  llvm::DenseMap<Operation *, SmallVector<bool>> &memo) {
  if (auto it = memo.find(fn); it != memo.end())
    return it->second;
  unsigned n = fn.getNumArguments();
  memo[fn] = SmallVector<bool>(n, true); // a cycle: anything
  SmallVector<bool> written(n, false);
  bool unknown = false;
  auto through = [&](Value ptr) {
    BlockArgument root = tessel::pointerRootArgument(ptr);
    if (root && root.getOwner() == &fn.getBody().front())
      written[root.getArgNumber()] = true;
    else
      unknown = true;
  };
  fn.walk([&](Operation *op) {
    if (auto store = dyn_cast<StoreOp>(op))
      through(store.getPtr());
    else if (auto rmw = dyn_cast<AtomicRMWOp>(op))
      through(rmw.getPtr());
    else if (auto cas = dyn_cast<AtomicCASOp>(op))
      through(cas.getPtr());
    else if (auto store = dyn_cast<DescriptorStoreOp>(op))
      through(store.getBase());
    else if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (!callee || callee.isExternal()) {
        unknown = true;
        return;
      }
      SmallVector<bool> calleeWritten = writtenParameters(callee, memo);
      for (auto [i, w] : llvm::enumerate(calleeWritten))
        if (w)
          through(call.getOperand(i));
    }
  });
  for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes()))
    if (unknown && isa<PointerType>(getElementTypeOrSelf(type)))
      written[i] = true;
  return memo[fn] = std::move(written);
}

} // namespace

SmallVector<unsigned> tessel::writtenArguments(func::FuncOp kernel) {
  llvm::DenseMap<Operation *, SmallVector<bool>> memo;
  SmallVector<bool> written = writtenParameters(kernel, memo);
  SmallVector<unsigned> result;
  for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes()))
    if (isa<PointerType>(type) && written[i])
      result.push_back(i);
  return result;
}
