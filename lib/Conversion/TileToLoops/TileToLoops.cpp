//===- TileToLoops.cpp - Tile IR to fused loop nests for the CPU ----------===//
//
// See the pass description in include/tessel/Conversion/Passes.td.
//
// The lowering rebuilds each kernel function by walking its body in order.
// Scalars map one to one. A block value is either *lazy* (recomputed at the
// index a consumer asks for: element-wise ops, views, address arithmetic,
// loads) or lives in a stack buffer (`memref.alloca` in the entry block).
// Which lazy values get a buffer is decided up front by `planMaterialization`.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "tessel/Conversion/TileToLoops/ExternFunctions.h"

#include "tessel/Analysis/AxisInfo.h"
#include "tessel/Analysis/PointerRoots.h"
#include "tessel/Conversion/TileToLoops/CPURuntime.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace tessel {
#define GEN_PASS_DEF_CONVERTTILETOLOOPS
#include "tessel/Conversion/Passes.h.inc"
} // namespace tessel

using namespace mlir;
using namespace tessel;
using namespace tessel::tile;

std::string tessel::cpuEntryName(llvm::StringRef kernelName) {
  return (kernelName + "_tessel_entry").str();
}

namespace {

/// Partial accumulators kept along a contiguous reduction axis: a vector's
/// worth (kReductionLanes), and on long rows kReductionGroups such vectors,
/// each its own chain of combines (a max's compare and select, a sum's add):
/// the chains run side by side instead of every chunk of the row waiting on
/// the one before it.
constexpr int64_t kReductionLanes = 16;
constexpr int64_t kReductionGroups = 4;
constexpr int64_t kLongReduction = 256;

/// Block buffers live on the stack of the thread running a program (8 MiB by
/// default, shared with the caller's frames): a kernel needing more is
/// rejected when it is compiled rather than crashing when it runs.
constexpr int64_t kMaxStackBytes = 4 << 20;

bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

/// Ops whose block results can be computed element by element on demand.
bool isLazyOp(Operation *op) {
  if (op->getNumResults() != 1 || !isTensor(op->getResult(0)))
    return false;
  if (isa<MakeRangeOp, SplatOp, BroadcastOp, ExpandDimsOp, ReshapeOp, TransOp,
          AddPtrOp, LoadOp, IntToPtrOp, PtrToIntOp, PtrCastOp,
          ExternElementwiseOp>(op))
    return true;
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return isa<SplatElementsAttr>(c.getValue());
  return op->hasTrait<OpTrait::Elementwise>() && op->getNumRegions() == 0 &&
         isa<arith::ArithDialect, math::MathDialect>(op->getDialect());
}

/// Whether a reshape only adds or drops dimensions of size 1.
bool isUnitDimReshape(ReshapeOp op) {
  auto nonUnit = [](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> dims;
    for (int64_t d : shape)
      if (d != 1)
        dims.push_back(d);
    return dims;
  };
  return nonUnit(op.getSrc().getType().getShape()) ==
         nonUnit(op.getResult().getType().getShape());
}

/// Lazy ops cheap enough to recompute for every use.
bool isCheapOp(Operation *op) {
  if (isa<MakeRangeOp, SplatOp, BroadcastOp, ExpandDimsOp, ReshapeOp, TransOp,
          AddPtrOp, arith::ConstantOp>(op))
    return true;
  if (isa<LoadOp>(op) || isa<math::MathDialect>(op->getDialect()))
    return false;
  Type elt = getElementTypeOrSelf(op->getResult(0).getType());
  return isa<IntegerType, IndexType, PointerType>(elt);
}

Type convertScalarType(Type t) {
  if (isa<PointerType>(t))
    return LLVM::LLVMPointerType::get(t.getContext());
  return t;
}

/// How an element of type `t` is kept in memory: bools take a byte, 8-bit
/// floats (which LLVM has no type for) are their bits.
Type memoryType(Type t) {
  if (t.isInteger(1) || tile::isFP8Type(t))
    return IntegerType::get(t.getContext(), 8);
  return t;
}

/// A value of element type `t` as memoryType(t) holds it, and back.
Value toMemory(OpBuilder &b, Location loc, Value v) {
  Type memType = memoryType(v.getType());
  if (memType == v.getType())
    return v;
  if (v.getType().isInteger(1))
    return arith::ExtUIOp::create(b, loc, memType, v);
  return arith::BitcastOp::create(b, loc, memType, v);
}
Value fromMemory(OpBuilder &b, Location loc, Value v, Type t) {
  if (v.getType() == t)
    return v;
  if (t.isInteger(1)) {
    Value zero = arith::ConstantOp::create(b, loc, v.getType(),
                                           b.getIntegerAttr(v.getType(), 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero);
  }
  return arith::BitcastOp::create(b, loc, t, v);
}

/// Element type of a stack buffer holding a block of `t` (pointers as i64).
Type bufferElementType(Type t) {
  if (isa<PointerType>(t))
    return IntegerType::get(t.getContext(), 64);
  return t;
}

class KernelLowering {
public:
  /// `oldFn` is a kernel, or (`called`) a @jit(noinline=True) function the
  /// kernel calls: a function of its own, its blocks passed as buffers.
  KernelLowering(func::FuncOp oldFn, bool called = false)
      : oldFn(oldFn), called(called), b(oldFn.getContext()) {}

  LogicalResult run();

private:
  // Planning.
  void numberOps();
  void planMaterialization();
  void evaluationPoints(Value v, SmallVectorImpl<Operation *> &points);

  // Lowering of structure.
  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerFor(scf::ForOp op);
  LogicalResult lowerIf(scf::IfOp op);
  LogicalResult lowerWhile(scf::WhileOp op);
  LogicalResult lowerReduce(ReduceOp op);
  LogicalResult lowerScan(ScanOp op);
  LogicalResult lowerGather(GatherOp op);
  LogicalResult lowerMapElementwise(MapElementwiseOp op);
  LogicalResult lowerDot(DotOp op);
  LogicalResult lowerStore(StoreOp op);
  LogicalResult lowerAtomic(Operation *op);
  LogicalResult lowerCall(func::CallOp op);
  /// A called function's signature, parameters and results: each block a
  /// buffer (memref) the caller owns, each scalar result a one-element
  /// buffer; then the program ids and the grid.
  LogicalResult createCalledFunction();
  /// An error when newFn's block buffers (stack) pass kMaxStackBytes, one
  /// `per` (program, call) needing them.
  LogicalResult checkStackBytes(StringRef per);
  void createEntry(func::FuncOp kernel);

  // Debugging and extension ops (at the end of this file).
  LogicalResult checkTargetOps();
  LogicalResult lowerPrint(PrintOp op);
  LogicalResult lowerAssert(AssertOp op);
  /// The address of a NUL-terminated copy of `text` (a module constant).
  Value stringConstant(StringRef text, Location loc);
  /// The runtime function `name` of type `type`, declared in the module.
  LLVM::LLVMFuncOp runtimeFunction(StringRef name, LLVM::LLVMFunctionType type,
                                   Location loc);
  /// The program returns here (kCPUExitProgram).
  void exitProgram(Location loc);

  // Element-wise evaluation.
  Value emitAt(Value v, ValueRange idx);
  bool isVisible(Value v);
  Value emitOpAt(Operation *op, ValueRange idx);
  Value emitLoad(Value ptr, Value mask, function_ref<Value()> other,
                 Type eltType, Location loc, unsigned align, bool isVolatile);
  /// The alignment every element access through the tile pointer `ptr` has
  /// (AxisInfo, computed on first use).
  unsigned accessAlignment(Value ptr) {
    if (!axisInfo)
      axisInfo = std::make_unique<AxisInfoResult>(oldFn);
    return axisInfo->elementAlignment(ptr);
  }
  Value scalar(Value v);
  Value cloneScalarOp(Operation *op, ValueRange operands);
  SmallVector<Value> emitCombine(Region &combine, ValueRange acc,
                                 ValueRange next);
  /// The scalar region's results for scalar arguments `args`.
  SmallVector<Value> emitRegion(Region &region, ValueRange args);

  // Buffers.
  Value allocBuffer(ArrayRef<int64_t> shape, Type eltType);
  Value bufferLoad(Value buf, ValueRange idx, Type eltType, Location loc);
  void bufferStore(Value buf, ValueRange idx, Value v, Location loc);
  void materializeInto(Value buf, Value v, Location loc);
  Value bufferFor(Value v, Location loc);
  void emitLoopNest(ArrayRef<int64_t> shape, Location loc,
                    function_ref<void(ValueRange)> body);
  /// A scalar, true when every element of `mask` is: for a 1-D mask
  /// `a < splat(n)` (<=, unsigned too) whose `a` is an arange plus splats,
  /// its last element compared so, with no wrap from its first. Null for
  /// other masks.
  Value allTrueCondition(Value mask, Location loc);
  /// `body`, under `if (allTrueCondition(mask))` with `mask` taken as all
  /// true (loads and stores unmasked: LLVM's masked vector accesses stream
  /// at half the speed of plain ones once rows leave the cache), and as it
  /// is otherwise.
  /// The mask of a masked load that evaluating lazy `v` reads (through its
  /// lazy producers, not through buffers), or null.
  Value evaluatedLoadMask(Value v);
  /// `body` under emitUnmaskedWherePossible of the mask of a masked load that
  /// evaluating `v` reads, where there is one.
  void emitUnmaskedLoadsOf(Value v, Location loc, function_ref<void()> body);
  void emitUnmaskedWherePossible(Value mask, Location loc,
                                 function_ref<void()> body);
  bool readsUnsafely(Value v, Value iterArg, bool sameIndex,
                     const DenseSet<Value> &otherIterArgs);
  Value index(int64_t v, Location loc) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }

  func::FuncOp oldFn, newFn;
  bool called;
  OpBuilder b;
  Block *entryBlock = nullptr;
  Value pids[3], gridDims[3];
  IRMapping scalars;
  DenseMap<Value, Value> buffers;
  DenseSet<Value> materialized;
  /// Masks known all true where the builder now inserts.
  DenseSet<Value> trueMasks;
  DenseMap<Operation *, unsigned> position;
  /// Evaluation points of each lazy value (planning).
  DenseMap<Value, SmallVector<Operation *>> pointsOf;
  /// Values already emitted for (lazy value, index) in the code being built:
  /// shared subexpressions are emitted once, not once per path.
  DenseMap<Value, SmallVector<std::pair<SmallVector<Value, 4>, Value>, 1>>
      emitted;
  /// The ops that write memory (stores and atomics) with their pointers.
  SmallVector<std::pair<Operation *, Value>> writers;
  std::unique_ptr<AxisInfoResult> axisInfo;
  llvm::StringMap<LLVM::GlobalOp> strings;
};

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

void KernelLowering::numberOps() {
  unsigned n = 0;
  oldFn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    position[op] = n++;
    if (auto store = dyn_cast<StoreOp>(op))
      writers.push_back({op, store.getPtr()});
    else if (auto rmw = dyn_cast<AtomicRMWOp>(op))
      writers.push_back({op, rmw.getPtr()});
    else if (auto cas = dyn_cast<AtomicCASOp>(op))
      writers.push_back({op, cas.getPtr()});
    else if (isa<func::CallOp>(op))
      writers.push_back({op, Value()}); // may store anywhere
  });
}

/// Whether a write through `written` (a store's or an atomic's pointers) may
/// change memory that `load` reads. Two different kernel arguments do not
/// overlap when either is marked `tile.noalias` (the launcher checked that
/// its array overlaps no other pointer argument's); anything else may alias.
bool mayAlias(LoadOp load, Value written) {
  if (!written)
    return true;
  BlockArgument from = pointerRootArgument(load.getPtr());
  BlockArgument to = pointerRootArgument(written);
  if (!from || !to || from == to)
    return true;
  auto fn = cast<func::FuncOp>(from.getOwner()->getParentOp());
  return !fn.getArgAttr(from.getArgNumber(), "tile.noalias") &&
         !fn.getArgAttr(to.getArgNumber(), "tile.noalias");
}

/// The ops at which the lazy value `v` gets evaluated: its non-lazy users and
/// its materialized lazy users, through chains of lazy users.
void KernelLowering::evaluationPoints(Value v,
                                      SmallVectorImpl<Operation *> &points) {
  SmallPtrSet<Operation *, 8> seen;
  for (Operation *user : v.getUsers()) {
    if (isLazyOp(user) && !materialized.contains(user->getResult(0))) {
      // Users are planned before their producers: theirs are known, which
      // keeps this linear in the size of the kernel (no walk per path).
      for (Operation *p : pointsOf.lookup(user->getResult(0)))
        if (seen.insert(p).second)
          points.push_back(p);
    } else if (seen.insert(user).second) {
      points.push_back(user);
    }
  }
}

/// Whether a load read more than once is better read again at each of its
/// evaluation `points` than copied into a buffer first: each point takes each
/// element once (no dot, scan or gather, no operand of more elements than the
/// load: no broadcast of it), and the block is small enough (64 KiB) to still
/// be in the core's caches when read again. A softmax or layer-norm row then
/// costs its reads from the array, without a copy on the stack; each point
/// versions the read on its mask being all true (emitUnmaskedLoadsOf), as a
/// copy would. Whether a write between the points may alias it is checked
/// after, as for any lazily read load.
static bool rereadRatherThanCopy(LoadOp load, ArrayRef<Operation *> points) {
  auto type = dyn_cast<RankedTensorType>(load.getType());
  if (!type || load.getIsVolatile() ||
      type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8) >
          64 * 1024)
    return false;
  for (Operation *p : points) {
    if (isa<DotOp, ScanOp, GatherOp>(p))
      return false;
    for (Value operand : p->getOperands())
      if (auto t = dyn_cast<RankedTensorType>(operand.getType());
          t && t.getNumElements() > type.getNumElements())
        return false;
  }
  return true;
}

void KernelLowering::planMaterialization() {
  SmallVector<Operation *> lazyOps;
  oldFn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isLazyOp(op))
      lazyOps.push_back(op);
  });
  // Users come after their producers: decide from the last op backwards so
  // that every user's decision is known.
  for (Operation *op : llvm::reverse(lazyOps)) {
    Value v = op->getResult(0);
    SmallVector<Operation *> points;
    evaluationPoints(v, points);
    bool otherBlock = llvm::any_of(points, [&](Operation *p) {
      return p->getBlock() != op->getBlock();
    });
    bool materialize = false;
    if (!isCheapOp(op)) {
      size_t uses = std::distance(v.getUses().begin(), v.getUses().end());
      materialize = uses > 1 || otherBlock;
      if (auto load = dyn_cast<LoadOp>(op);
          load && materialize && !otherBlock &&
          rereadRatherThanCopy(load, points))
        materialize = false;
    }
    if (auto load = dyn_cast<LoadOp>(op); load && !materialize) {
      // A load must see memory as it was when it executed. Evaluated lazily,
      // it would read after any store (or atomic) between it and its last
      // evaluation point, and, when that point is a store, after the
      // elements the store has already written (through a broadcast, a
      // permuted view or any other address map, element i may read what
      // element j < i wrote). Unless no such write can alias it, read it
      // into a buffer first.
      unsigned from = position[op], to = from;
      for (Operation *p : points)
        to = std::max(to, position[p]);
      materialize = llvm::any_of(writers, [&](auto writer) {
        unsigned s = position[writer.first];
        return s > from && s <= to && mayAlias(load, writer.second);
      });
    }
    // A volatile load is read exactly once per element: evaluated lazily it
    // would be read again at every point its value is needed (a broadcast's
    // every row, a reduction's every pass).
    if (auto load = dyn_cast<LoadOp>(op); load && load.getIsVolatile())
      materialize = true;
    // A reshape that does more than add or drop unit dimensions reads its
    // source as a buffer: decomposing each index by division and remainder
    // is slow, and LLVM 22's loop vectorizer miscompiles the masked index it
    // becomes (it took b[(j & 3) + i] as consecutive in j).
    if (llvm::any_of(v.getUsers(), [](Operation *user) {
          auto rs = dyn_cast<ReshapeOp>(user);
          return rs && !isUnitDimReshape(rs);
        }))
      materialize = true;
    if (materialize)
      materialized.insert(v);
    pointsOf[v] = std::move(points);
  }
}

//===----------------------------------------------------------------------===//
// Buffers and loop nests
//===----------------------------------------------------------------------===//

Value KernelLowering::allocBuffer(ArrayRef<int64_t> shape, Type eltType) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entryBlock);
  auto type = MemRefType::get(shape, bufferElementType(eltType));
  return memref::AllocaOp::create(b, oldFn.getLoc(), type, ValueRange{},
                                  b.getI64IntegerAttr(64));
}

Value KernelLowering::bufferLoad(Value buf, ValueRange idx, Type eltType,
                                 Location loc) {
  Value v = memref::LoadOp::create(b, loc, buf, idx);
  if (isa<PointerType>(eltType))
    return LLVM::IntToPtrOp::create(b, loc, convertScalarType(eltType), v);
  return v;
}

void KernelLowering::bufferStore(Value buf, ValueRange idx, Value v,
                                 Location loc) {
  if (isa<LLVM::LLVMPointerType>(v.getType()))
    v = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), v);
  memref::StoreOp::create(b, loc, v, buf, idx);
}

void KernelLowering::emitLoopNest(ArrayRef<int64_t> shape, Location loc,
                                  function_ref<void(ValueRange)> body) {
  SmallVector<Value> ivs;
  OpBuilder::InsertionGuard guard(b);
  for (int64_t d : shape) {
    auto loop = scf::ForOp::create(b, loc, index(0, loc), index(d, loc),
                                   index(1, loc));
    b.setInsertionPoint(loop.getBody()->getTerminator());
    ivs.push_back(loop.getInductionVar());
  }
  body(ivs);
}

/// Evaluates block `v` into `buf` (which `v` must not read; see
/// readsUnsafely).
void KernelLowering::materializeInto(Value buf, Value v, Location loc) {
  auto type = cast<RankedTensorType>(v.getType());
  auto fill = [&] {
    emitLoopNest(type.getShape(), loc, [&](ValueRange idx) {
      bufferStore(buf, idx, emitAt(v, idx), loc);
    });
  };
  auto load = v.getDefiningOp<LoadOp>();
  if (load && load.getMask())
    emitUnmaskedWherePossible(load.getMask(), loc, fill);
  else
    emitUnmaskedLoadsOf(v, loc, fill);
}

/// Whether every element of `v` is the same: a splat (possibly given new
/// dimensions of size 1 or broadcast) or a constant one.
static bool isUniform(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (isa<SplatOp>(op))
    return true;
  if (isa<BroadcastOp, ExpandDimsOp>(op))
    return isUniform(op->getOperand(0));
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return isa<SplatElementsAttr>(c.getValue());
  return false;
}

/// Whether every element of `v` is at least the one before it along its one
/// dimension longer than 1: an arange, uniform values and sums of them, given
/// new dimensions of size 1 or broadcast along them.
static bool nonDecreasing(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (isUniform(v) || isa<MakeRangeOp>(op))
    return true;
  if (isa<BroadcastOp, ExpandDimsOp>(op))
    return nonDecreasing(op->getOperand(0));
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return isa<SplatElementsAttr>(c.getValue());
  if (auto add = dyn_cast<arith::AddIOp>(op))
    return nonDecreasing(add.getLhs()) && nonDecreasing(add.getRhs());
  return false;
}

Value KernelLowering::allTrueCondition(Value mask, Location loc) {
  auto type = dyn_cast<RankedTensorType>(mask.getType());
  Operation *def = mask.getDefiningOp();
  if (!type || !def)
    return {};
  // Both masks of a conjunction (a 2-D block's row and column checks),
  // broadcast or not.
  if (auto both = dyn_cast<arith::AndIOp>(def)) {
    Value x = allTrueCondition(both.getLhs(), loc);
    Value y = x ? allTrueCondition(both.getRhs(), loc) : Value();
    return y ? Value(arith::AndIOp::create(b, loc, x, y)) : Value();
  }
  if (isa<BroadcastOp, ExpandDimsOp>(def))
    return allTrueCondition(def->getOperand(0), loc);
  // A check along one dimension (the others of size 1).
  auto cmp = dyn_cast<arith::CmpIOp>(def);
  if (!cmp || llvm::count_if(type.getShape(), [](int64_t d) { return d != 1; }) > 1)
    return {};
  Value a = cmp.getLhs(), n = cmp.getRhs();
  arith::CmpIPredicate pred = cmp.getPredicate();
  using P = arith::CmpIPredicate;
  if (isUniform(a) && !isUniform(n)) {
    // splat(n) > a is a < splat(n).
    std::swap(a, n);
    pred = pred == P::sgt   ? P::slt
           : pred == P::sge ? P::sle
           : pred == P::ugt ? P::ult
           : pred == P::uge ? P::ule
                            : P::eq; // not a bound
  }
  if (!isUniform(n) || !nonDecreasing(a) ||
      !llvm::is_contained({P::slt, P::sle, P::ult, P::ule}, pred))
    return {};
  bool isUnsigned = pred == P::ult || pred == P::ule;
  SmallVector<Value> firstIdx, lastIdx;
  for (int64_t d : type.getShape()) {
    firstIdx.push_back(index(0, loc));
    lastIdx.push_back(index(d - 1, loc));
  }
  Value first = emitAt(a, firstIdx);
  Value last = emitAt(a, lastIdx);
  Value noWrap = arith::CmpIOp::create(b, loc, isUnsigned ? P::ule : P::sle,
                                       first, last);
  Value inRange = arith::CmpIOp::create(b, loc, pred, last, emitAt(n, firstIdx));
  return arith::AndIOp::create(b, loc, noWrap, inRange);
}

Value KernelLowering::evaluatedLoadMask(Value v) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    Operation *def = x.getDefiningOp();
    if (!isTensor(x) || !def || buffers.contains(x) || !seen.insert(x).second)
      continue;
    if (auto load = dyn_cast<LoadOp>(def)) {
      if (Value mask = load.getMask())
        return mask;
      continue;
    }
    llvm::append_range(work, def->getOperands());
  }
  return {};
}

void KernelLowering::emitUnmaskedLoadsOf(Value v, Location loc,
                                         function_ref<void()> body) {
  Value mask = evaluatedLoadMask(v);
  if (mask && isTensor(mask))
    emitUnmaskedWherePossible(mask, loc, body);
  else
    body();
}

void KernelLowering::emitUnmaskedWherePossible(Value mask, Location loc,
                                               function_ref<void()> body) {
  Value all = trueMasks.contains(mask) ? Value() : allTrueCondition(mask, loc);
  if (!all) {
    body();
    return;
  }
  auto ifOp = scf::IfOp::create(b, loc, all, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    trueMasks.insert(mask);
    body();
    trueMasks.erase(mask);
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    body();
  }
}

Value KernelLowering::bufferFor(Value v, Location loc) {
  if (Value buf = buffers.lookup(v))
    return buf;
  auto type = cast<RankedTensorType>(v.getType());
  Value buf = allocBuffer(type.getShape(), type.getElementType());
  materializeInto(buf, v, loc);
  buffers[v] = buf;
  return buf;
}

/// Whether evaluating lazy `v` reads `iterArg`'s buffer at another index than
/// the one being written, or reads any of `otherIterArgs`.
bool KernelLowering::readsUnsafely(Value v, Value iterArg, bool sameIndex,
                                   const DenseSet<Value> &otherIterArgs) {
  if (v == iterArg)
    return !sameIndex;
  if (otherIterArgs.contains(v))
    return true;
  if (buffers.contains(v) || !isTensor(v))
    return false;
  Operation *op = v.getDefiningOp();
  if (!op || !isLazyOp(op))
    return false;
  bool keepsIndex = !isa<BroadcastOp, ExpandDimsOp, ReshapeOp, TransOp>(op);
  for (Value operand : op->getOperands())
    if (readsUnsafely(operand, iterArg, sameIndex && keepsIndex,
                      otherIterArgs))
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Element-wise evaluation
//===----------------------------------------------------------------------===//

Value KernelLowering::scalar(Value v) { return scalars.lookup(v); }

/// Integer division whose divisor is zero (or -1 with the most negative
/// dividend) traps on x86 and would kill the process; the language leaves the
/// result undefined, so divide by 1 instead (and negate for -1).
Value guardedIntegerDivision(OpBuilder &b, Operation *op, Value x, Value d) {
  Location loc = op->getLoc();
  Type t = x.getType();
  auto cst = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, v));
  };
  Value zero = cst(0), one = cst(1);
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d, zero);
  bool isSigned = isa<arith::DivSIOp, arith::RemSIOp>(op);
  Value isMinusOne;
  if (isSigned) {
    isMinusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d, cst(-1));
    isZero = arith::OrIOp::create(b, loc, isZero, isMinusOne);
  }
  Value safe = arith::SelectOp::create(b, loc, isZero, one, d);
  Value r;
  if (isa<arith::DivSIOp>(op))
    r = arith::DivSIOp::create(b, loc, x, safe);
  else if (isa<arith::DivUIOp>(op))
    r = arith::DivUIOp::create(b, loc, x, safe);
  else if (isa<arith::RemSIOp>(op))
    r = arith::RemSIOp::create(b, loc, x, safe);
  else
    r = arith::RemUIOp::create(b, loc, x, safe);
  if (!isSigned)
    return r;
  // x / -1 == -x (wrapping), x % -1 == 0.
  Value byMinusOne = isa<arith::DivSIOp>(op)
                         ? Value(arith::SubIOp::create(b, loc, zero, x))
                         : zero;
  return arith::SelectOp::create(b, loc, isMinusOne, byMinusOne, r);
}

/// maxnum/minnum (the larger/smaller operand, a NaN operand ignored) as
/// compares and selects. LLVM 22's loop vectorizer miscompiles loops that
/// carry several llvm.maxnum/minnum reductions without fast-math flags (it
/// vectorizes them with a NaN check and then skips the remaining iterations),
/// which is the shape of every float max/min reduction here; a select is not
/// a recurrence it vectorizes that way, and SLP still packs the lanes.
Value floatMinMax(OpBuilder &b, Location loc, Value x, Value y, bool isMax) {
  // A NaN x takes y's value; then y replaces it if it is strictly better
  // (a NaN y never is), so each operand's NaN yields the other operand.
  Value xIsNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  Value t = arith::SelectOp::create(b, loc, xIsNaN, y, x);
  Value better = arith::CmpFOp::create(
      b, loc, isMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT, y,
      t);
  return arith::SelectOp::create(b, loc, better, y, t);
}

/// Unsigned to float without uitofp: LLVM 22 narrows uitofp(sext x) to
/// uitofp of the narrow x (vectorized loops), which zero-extends what should
/// be sign-extended (int32 -1000 as uint64 became 4.29e9, not 1.8e19; int16 -1
/// as uint32 became 65535). Values below 2^63 convert as signed; larger ones
/// are halved first, keeping the lowest bit sticky so the rounding is the
/// same.
Value unsignedToFloat(OpBuilder &b, Location loc, Value x, Type to) {
  Type i64 = x.getType();
  auto cst = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, i64, b.getIntegerAttr(i64, v));
  };
  Value small = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, x,
                                      cst(0));
  Value half = arith::OrIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, x, cst(1)),
      arith::AndIOp::create(b, loc, x, cst(1)));
  Value halfF = arith::SIToFPOp::create(b, loc, to, half);
  Value big = arith::AddFOp::create(b, loc, halfF, halfF);
  return arith::SelectOp::create(b, loc, small,
                                 arith::SIToFPOp::create(b, loc, to, x), big);
}

Value KernelLowering::cloneScalarOp(Operation *op, ValueRange operands) {
  // LLVM's pointers carry no element type: a pointer cast keeps the pointer.
  if (isa<IntToPtrOp>(op))
    return LLVM::IntToPtrOp::create(
        b, op->getLoc(), LLVM::LLVMPointerType::get(b.getContext()),
        operands[0]);
  if (isa<PtrToIntOp>(op))
    return LLVM::PtrToIntOp::create(b, op->getLoc(), b.getI64Type(),
                                    operands[0]);
  if (isa<PtrCastOp>(op))
    return operands[0];
  if (auto ext = dyn_cast<ExternElementwiseOp>(op))
    return loops::emitExternFunction(
        b, oldFn->getParentOfType<ModuleOp>(), ext, operands);
  if (isa<arith::UIToFPOp>(op)) {
    Value x = operands[0];
    // Narrower unsigned values widen to i64 first (exactly), then convert.
    if (!x.getType().isInteger(64))
      x = arith::ExtUIOp::create(b, op->getLoc(), b.getI64Type(), x);
    return unsignedToFloat(b, op->getLoc(), x,
                           getElementTypeOrSelf(op->getResult(0).getType()));
  }
  if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp>(op))
    return guardedIntegerDivision(b, op, operands[0], operands[1]);
  if (isa<arith::MaxNumFOp, arith::MinNumFOp>(op))
    return floatMinMax(b, op->getLoc(), operands[0], operands[1],
                       isa<arith::MaxNumFOp>(op));
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(operands);
  state.addAttributes(op->getAttrs());
  for (Type t : op->getResultTypes())
    state.addTypes(convertScalarType(getElementTypeOrSelf(t)));
  return b.create(state)->getResult(0);
}

Value KernelLowering::emitLoad(Value ptr, Value mask,
                               function_ref<Value()> other, Type eltType,
                               Location loc, unsigned align, bool isVolatile) {
  Type memType = memoryType(eltType);
  align = std::max(align, std::max(1u, memType.getIntOrFloatBitWidth() / 8));
  auto load = [&](OpBuilder &ob) -> Value {
    Value v = LLVM::LoadOp::create(ob, loc, memType, ptr, align, isVolatile);
    return fromMemory(ob, loc, v, eltType);
  };
  if (!mask)
    return load(b);
  auto ifOp = scf::IfOp::create(
      b, loc, mask,
      [&](OpBuilder &ob, Location l) {
        scf::YieldOp::create(ob, l, load(ob));
      },
      [&](OpBuilder &ob, Location l) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(ob.getInsertionBlock(), ob.getInsertionPoint());
        Value o = other ? other()
                        : Value(arith::ConstantOp::create(
                              b, l, eltType, b.getZeroAttr(eltType)));
        scf::YieldOp::create(b, l, o);
      });
  return ifOp.getResult(0);
}

/// LLVM's ordering for an atomic's `sem` (programs are threads of one
/// process: every scope is the system's).
LLVM::AtomicOrdering atomicOrdering(MemSemantic sem) {
  switch (sem) {
  case MemSemantic::relaxed:
    return LLVM::AtomicOrdering::monotonic;
  case MemSemantic::acquire:
    return LLVM::AtomicOrdering::acquire;
  case MemSemantic::release:
    return LLVM::AtomicOrdering::release;
  case MemSemantic::acq_rel:
    break;
  }
  return LLVM::AtomicOrdering::acq_rel;
}

/// The ordering of a compare-and-swap that fails (it only reads).
LLVM::AtomicOrdering failureOrdering(MemSemantic sem) {
  if (sem == MemSemantic::acq_rel || sem == MemSemantic::acquire)
    return LLVM::AtomicOrdering::acquire;
  return LLVM::AtomicOrdering::monotonic;
}

/// A number as the integer of its width, and back.
Value toBits(OpBuilder &b, Location loc, Value v) {
  Type t = v.getType();
  if (isa<IntegerType>(t))
    return v;
  return arith::BitcastOp::create(
      b, loc, b.getIntegerType(t.getIntOrFloatBitWidth()), v);
}
Value fromBits(OpBuilder &b, Location loc, Value bits, Type t) {
  if (bits.getType() == t)
    return bits;
  return arith::BitcastOp::create(b, loc, t, bits);
}

/// fp16 or bf16 `val` added to the element at `ptr` atomically: a
/// compare-and-swap loop on its bits, the sum computed in fp32 and rounded
/// once (exact sums of two 16-bit floats round alike from fp32). Returns
/// the old value. Only integers reach LLVM's atomics, so bf16 survives
/// tessel-cpu-narrow-floats, which turns what is left of it into i16.
Value atomicHalfAdd(OpBuilder &b, Location loc, Value ptr, Value val,
                    MemSemantic sem) {
  Type half = val.getType(), i16 = b.getI16Type(), f32 = b.getF32Type();
  Value addend = arith::ExtFOp::create(b, loc, f32, val);
  Value first = LLVM::LoadOp::create(b, loc, i16, ptr, /*alignment=*/2,
                                     /*isVolatile=*/false,
                                     /*isNonTemporal=*/false,
                                     /*isInvariant=*/false,
                                     /*isInvariantGroup=*/false,
                                     LLVM::AtomicOrdering::monotonic);
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{i16}, ValueRange{first},
      [&](OpBuilder &ob, Location l, ValueRange args) {
        Value old = args[0];
        Value oldHalf = arith::BitcastOp::create(ob, l, half, old);
        Value sum = arith::AddFOp::create(
            ob, l, arith::ExtFOp::create(ob, l, f32, oldHalf), addend);
        Value next = arith::BitcastOp::create(
            ob, l, i16, arith::TruncFOp::create(ob, l, half, sum));
        auto cas = LLVM::AtomicCmpXchgOp::create(
            ob, l, ptr, old, next, atomicOrdering(sem), failureOrdering(sem),
            StringRef(), /*alignment=*/2);
        Value seen = LLVM::ExtractValueOp::create(ob, l, cas, 0);
        Value done = LLVM::ExtractValueOp::create(ob, l, cas, 1);
        Value again = arith::XOrIOp::create(
            ob, l, done, arith::ConstantIntOp::create(ob, l, 1, 1));
        scf::ConditionOp::create(ob, l, again, ValueRange{seen});
      },
      [&](OpBuilder &ob, Location l, ValueRange args) {
        scf::YieldOp::create(ob, l, args);
      });
  return arith::BitcastOp::create(b, loc, half, loop.getResult(0));
}

/// One element of tile.atomic_rmw: LLVM's atomicrmw, on the bits where the
/// operation is on bits; returns the old value.
Value atomicRMWElement(OpBuilder &b, Location loc, AtomicRMWKind kind,
                       Value ptr, Value val, MemSemantic sem) {
  Type t = val.getType();
  if (kind == AtomicRMWKind::fadd && t.getIntOrFloatBitWidth() == 16)
    return atomicHalfAdd(b, loc, ptr, val, sem);
  unsigned bytes = t.getIntOrFloatBitWidth() / 8;
  auto rmw = [&](OpBuilder &ob, LLVM::AtomicBinOp op, Value v) -> Value {
    return LLVM::AtomicRMWOp::create(ob, loc, op, ptr, v, atomicOrdering(sem),
                                     StringRef(), bytes);
  };
  using Bin = LLVM::AtomicBinOp;
  switch (kind) {
  case AtomicRMWKind::add:
    return rmw(b, Bin::add, val);
  case AtomicRMWKind::fadd:
    return rmw(b, Bin::fadd, val);
  case AtomicRMWKind::max:
    return rmw(b, Bin::max, val);
  case AtomicRMWKind::umax:
    return rmw(b, Bin::umax, val);
  case AtomicRMWKind::min:
    return rmw(b, Bin::min, val);
  case AtomicRMWKind::umin:
    return rmw(b, Bin::umin, val);
  case AtomicRMWKind::bit_and:
  case AtomicRMWKind::bit_or:
  case AtomicRMWKind::bit_xor:
  case AtomicRMWKind::xchg: {
    Bin op = kind == AtomicRMWKind::bit_and  ? Bin::_and
             : kind == AtomicRMWKind::bit_or ? Bin::_or
             : kind == AtomicRMWKind::bit_xor ? Bin::_xor
                                               : Bin::xchg;
    return fromBits(b, loc, rmw(b, op, toBits(b, loc, val)), t);
  }
  case AtomicRMWKind::fmax:
  case AtomicRMWKind::fmin:
    break;
  }
  // Triton's float max/min: a signed max (min) of the bits where the sign
  // bit of `val` is clear, an unsigned min (max) where it is set.
  bool isMax = kind == AtomicRMWKind::fmax;
  Value bits = toBits(b, loc, val);
  Value zero = arith::ConstantOp::create(b, loc, bits.getType(),
                                         b.getIntegerAttr(bits.getType(), 0));
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, bits, zero);
  auto ifOp = scf::IfOp::create(
      b, loc, negative,
      [&](OpBuilder &ob, Location l) {
        scf::YieldOp::create(
            ob, l, rmw(ob, isMax ? Bin::umin : Bin::umax, bits));
      },
      [&](OpBuilder &ob, Location l) {
        scf::YieldOp::create(ob, l, rmw(ob, isMax ? Bin::max : Bin::min, bits));
      });
  return fromBits(b, loc, ifOp.getResult(0), t);
}

/// One element of tile.atomic_cas: LLVM's cmpxchg on the bits.
Value atomicCASElement(OpBuilder &b, Location loc, Value ptr, Value cmp,
                       Value val, MemSemantic sem) {
  Type t = val.getType();
  auto cas = LLVM::AtomicCmpXchgOp::create(
      b, loc, ptr, toBits(b, loc, cmp), toBits(b, loc, val),
      atomicOrdering(sem), failureOrdering(sem), StringRef(),
      t.getIntOrFloatBitWidth() / 8);
  return fromBits(b, loc, LLVM::ExtractValueOp::create(b, loc, cas, 0), t);
}

bool KernelLowering::isVisible(Value v) {
  Block *def = v.getParentBlock();
  for (Block *block = b.getInsertionBlock(); block;) {
    if (block == def)
      return true;
    Operation *parent = block->getParentOp();
    // A region still being built has no parent yet: not provably visible.
    block = parent ? parent->getBlock() : nullptr;
  }
  return false;
}

Value KernelLowering::emitAt(Value v, ValueRange idx) {
  if (!isTensor(v))
    return scalar(v);
  if (Value buf = buffers.lookup(v))
    return bufferLoad(buf, idx, cast<RankedTensorType>(v.getType()).getElementType(),
                      v.getLoc());
  auto &previous = emitted[v];
  for (auto &[index, value] : previous)
    if (llvm::equal(index, idx) && isVisible(value))
      return value;
  Value result = emitOpAt(v.getDefiningOp(), idx);
  emitted[v].push_back({SmallVector<Value, 4>(idx), result});
  return result;
}

Value KernelLowering::emitOpAt(Operation *op, ValueRange idx) {
  Location loc = op->getLoc();
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    Attribute value = cast<SplatElementsAttr>(c.getValue()).getSplatValue<Attribute>();
    return arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
  }
  if (auto range = dyn_cast<MakeRangeOp>(op)) {
    // The position fits in 31 bits (the range's length does): a truncation
    // without wrap, so that LLVM sees sext(i) as the loop's own index and
    // the accesses it offsets as consecutive (vector loads, not gathers).
    Value i = arith::TruncIOp::create(
        b, loc, b.getI32Type(),
        arith::IndexCastOp::create(b, loc, b.getI64Type(), idx[0]),
        arith::IntegerOverflowFlags::nsw | arith::IntegerOverflowFlags::nuw);
    if (range.getStart() == 0)
      return i;
    Value start = arith::ConstantIntOp::create(b, loc, range.getStart(), 32);
    return arith::AddIOp::create(b, loc, i, start);
  }
  if (auto splat = dyn_cast<SplatOp>(op))
    return scalar(splat.getSrc());
  if (auto bc = dyn_cast<BroadcastOp>(op)) {
    SmallVector<Value> srcIdx(idx);
    for (auto [i, d] : llvm::enumerate(bc.getSrc().getType().getShape()))
      if (d == 1)
        srcIdx[i] = index(0, loc);
    return emitAt(bc.getSrc(), srcIdx);
  }
  if (auto ed = dyn_cast<ExpandDimsOp>(op)) {
    SmallVector<Value> srcIdx(idx);
    srcIdx.erase(srcIdx.begin() + ed.getAxis());
    return emitAt(ed.getSrc(), srcIdx);
  }
  if (auto rs = dyn_cast<ReshapeOp>(op)) {
    ArrayRef<int64_t> dst = rs.getResult().getType().getShape();
    ArrayRef<int64_t> src = rs.getSrc().getType().getShape();
    if (isUnitDimReshape(rs)) {
      // Only dimensions of size 1 come or go: the other indices carry over.
      SmallVector<Value> srcIdx;
      unsigned d = 0;
      for (int64_t size : src) {
        while (dst[d] == 1 && size != 1)
          ++d;
        srcIdx.push_back(size == 1 ? index(0, loc) : idx[d++]);
      }
      return emitAt(rs.getSrc(), srcIdx);
    }
    // Any other reshape reads its source's buffer (planned: see
    // planMaterialization) as the row-major sequence it is.
    Value buf = buffers.lookup(rs.getSrc());
    Value linear = index(0, loc);
    for (auto [i, d] : llvm::enumerate(dst)) {
      linear = arith::MulIOp::create(b, loc, linear, index(d, loc));
      linear = arith::AddIOp::create(b, loc, linear, idx[i]);
    }
    auto bufType = cast<MemRefType>(buf.getType());
    int64_t count = bufType.getNumElements();
    Value flat = memref::ReinterpretCastOp::create(
        b, loc, MemRefType::get({count}, bufType.getElementType()), buf,
        /*offset=*/0, /*sizes=*/ArrayRef<int64_t>{count},
        /*strides=*/ArrayRef<int64_t>{1});
    return bufferLoad(flat, linear,
                      cast<RankedTensorType>(rs.getType()).getElementType(),
                      loc);
  }
  if (auto tr = dyn_cast<TransOp>(op)) {
    SmallVector<Value> srcIdx(idx.size());
    for (auto [i, o] : llvm::enumerate(tr.getOrder()))
      srcIdx[o] = idx[i];
    return emitAt(tr.getSrc(), srcIdx);
  }
  if (auto ap = dyn_cast<AddPtrOp>(op)) {
    Value ptr = emitAt(ap.getPtr(), idx), off = emitAt(ap.getOffset(), idx);
    // A range's position offsets by its own 64-bit value (the i32 one is it
    // truncated without wrap): LLVM then sees the loop's index itself, not
    // a sign extension it cannot see through, and loads vectors, not
    // gathers.
    if (auto trunc = off.getDefiningOp<arith::TruncIOp>())
      if (bitEnumContainsAll(trunc.getOverflowFlags(),
                             arith::IntegerOverflowFlags::nsw))
        off = trunc.getIn();
    Type pointee = memoryType(
        cast<PointerType>(getElementTypeOrSelf(ap.getType())).getPointeeType());
    return LLVM::GEPOp::create(b, loc, ptr.getType(), pointee, ptr,
                               ValueRange{off});
  }
  if (auto ld = dyn_cast<LoadOp>(op)) {
    Value ptr = emitAt(ld.getPtr(), idx);
    Value mask = ld.getMask() && !trueMasks.contains(ld.getMask())
                     ? emitAt(ld.getMask(), idx)
                     : Value();
    Value other = ld.getOther();
    return emitLoad(
        ptr, mask,
        other ? function_ref<Value()>([&] { return emitAt(other, idx); })
              : function_ref<Value()>(),
        getElementTypeOrSelf(ld.getType()), loc, accessAlignment(ld.getPtr()),
        ld.getIsVolatile());
  }
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(emitAt(operand, idx));
  return cloneScalarOp(op, operands);
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

LogicalResult KernelLowering::lowerBlock(Block &block) {
  for (Operation &op : block.without_terminator())
    if (failed(lowerOp(&op)))
      return failure();
  return success();
}

LogicalResult KernelLowering::lowerOp(Operation *op) {
  Location loc = op->getLoc();
  if (isLazyOp(op)) {
    if (materialized.contains(op->getResult(0)))
      bufferFor(op->getResult(0), loc);
    return success();
  }
  if (auto pid = dyn_cast<GetProgramIdOp>(op)) {
    scalars.map(pid.getResult(), pids[pid.getAxis()]);
    return success();
  }
  if (auto np = dyn_cast<GetNumProgramsOp>(op)) {
    scalars.map(np.getResult(), gridDims[np.getAxis()]);
    return success();
  }
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return lowerFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return lowerIf(ifOp);
  if (auto whileOp = dyn_cast<scf::WhileOp>(op))
    return lowerWhile(whileOp);
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return lowerReduce(reduce);
  if (auto scan = dyn_cast<ScanOp>(op))
    return lowerScan(scan);
  if (auto gather = dyn_cast<GatherOp>(op))
    return lowerGather(gather);
  if (auto map = dyn_cast<MapElementwiseOp>(op))
    return lowerMapElementwise(map);
  if (auto dot = dyn_cast<DotOp>(op))
    return lowerDot(dot);
  if (auto store = dyn_cast<StoreOp>(op))
    return lowerStore(store);
  if (isa<AtomicRMWOp, AtomicCASOp>(op))
    return lowerAtomic(op);
  if (auto call = dyn_cast<func::CallOp>(op))
    return lowerCall(call);
  // A program is one thread here: nothing to wait for.
  if (isa<DebugBarrierOp>(op))
    return success();
  if (auto assume = dyn_cast<AssumeOp>(op)) {
    LLVM::AssumeOp::create(b, loc, scalar(assume.getCond()));
    return success();
  }
  if (auto print = dyn_cast<PrintOp>(op))
    return lowerPrint(print);
  if (auto assertOp = dyn_cast<AssertOp>(op))
    return lowerAssert(assertOp);
  if (llvm::any_of(op->getOperandTypes(), [](Type t) { return isa<RankedTensorType>(t); }) ||
      llvm::any_of(op->getResultTypes(), [](Type t) { return isa<RankedTensorType>(t); }))
    return op->emitOpError("is not supported on blocks by the CPU backend");
  if (op->getNumRegions() != 0)
    return op->emitOpError("is not supported by the CPU backend");
  // Scalar operations: the same op on the mapped operands.
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(scalar(operand));
  if (auto ap = dyn_cast<AddPtrOp>(op)) {
    Type pointee = memoryType(cast<PointerType>(ap.getType()).getPointeeType());
    scalars.map(ap.getResult(),
                LLVM::GEPOp::create(b, loc, operands[0].getType(), pointee,
                                    operands[0], ValueRange{operands[1]}));
    return success();
  }
  if (auto ld = dyn_cast<LoadOp>(op)) {
    Value mask = ld.getMask() ? scalar(ld.getMask()) : Value();
    Value other = ld.getOther() ? scalar(ld.getOther()) : Value();
    scalars.map(ld.getResult(),
                emitLoad(scalar(ld.getPtr()), mask,
                         other ? function_ref<Value()>([&] { return other; })
                               : function_ref<Value()>(),
                         ld.getType(), loc, accessAlignment(ld.getPtr()),
                         ld.getIsVolatile()));
    return success();
  }
  if (op->getNumResults() != 1)
    return op->emitOpError("is not supported by the CPU backend");
  scalars.map(op->getResult(0), cloneScalarOp(op, operands));
  return success();
}

LogicalResult KernelLowering::lowerStore(StoreOp op) {
  Location loc = op.getLoc();
  Type elt = getElementTypeOrSelf(op.getValue().getType());
  unsigned proved = accessAlignment(op.getPtr());
  auto emit = [&](ValueRange idx) {
    auto store = [&]() {
      Value v = toMemory(b, loc, emitAt(op.getValue(), idx));
      Type memType = memoryType(elt);
      unsigned align =
          std::max(proved, std::max(1u, memType.getIntOrFloatBitWidth() / 8));
      LLVM::StoreOp::create(b, loc, v, emitAt(op.getPtr(), idx), align);
    };
    if (!op.getMask() || trueMasks.contains(op.getMask())) {
      store();
      return;
    }
    auto ifOp = scf::IfOp::create(b, loc, emitAt(op.getMask(), idx),
                                  /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    store();
  };
  auto nest = [&] {
    emitLoopNest(getShapeOrEmpty(op.getPtr().getType()), loc, emit);
  };
  // The store's mask, else that of a masked load its value evaluates.
  Value mask = op.getMask();
  if (!mask)
    mask = evaluatedLoadMask(op.getValue());
  if (mask && isTensor(mask))
    emitUnmaskedWherePossible(mask, loc, nest);
  else
    nest();
  return success();
}

/// Atomics run where they are, once per element, never lazily: a block's
/// old values go to a buffer (zero where the mask is off).
LogicalResult KernelLowering::lowerAtomic(Operation *op) {
  Location loc = op->getLoc();
  auto rmw = dyn_cast<AtomicRMWOp>(op);
  auto cas = dyn_cast<AtomicCASOp>(op);
  Value ptr = rmw ? rmw.getPtr() : cas.getPtr();
  Value mask = rmw ? rmw.getMask() : Value();
  Value result = op->getResult(0);
  Type elt = getElementTypeOrSelf(result.getType());
  auto element = [&](ValueRange idx) -> Value {
    auto apply = [&]() -> Value {
      Value p = emitAt(ptr, idx);
      if (rmw)
        return atomicRMWElement(b, loc, rmw.getKind(), p,
                                emitAt(rmw.getVal(), idx), rmw.getSem());
      return atomicCASElement(b, loc, p, emitAt(cas.getCmp(), idx),
                              emitAt(cas.getVal(), idx), cas.getSem());
    };
    if (!mask)
      return apply();
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{elt},
                                  emitAt(mask, idx), /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(b, loc, apply());
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(
          b, loc,
          ValueRange{arith::ConstantOp::create(b, loc, b.getZeroAttr(elt))});
    }
    return ifOp.getResult(0);
  };
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!type) {
    scalars.map(result, element({}));
    return success();
  }
  Value buf = result.use_empty()
                  ? Value()
                  : allocBuffer(type.getShape(), type.getElementType());
  emitLoopNest(type.getShape(), loc, [&](ValueRange idx) {
    Value old = element(idx);
    if (buf)
      bufferStore(buf, idx, old, loc);
  });
  if (buf)
    buffers[result] = buf;
  return success();
}

LogicalResult KernelLowering::lowerFor(scf::ForOp op) {
  Location loc = op.getLoc();
  SmallVector<Value> scalarInits;
  SmallVector<Value> iterBuffers(op.getNumRegionIterArgs());
  for (auto [i, init] : llvm::enumerate(op.getInitArgs())) {
    if (!isTensor(init)) {
      scalarInits.push_back(scalar(init));
      continue;
    }
    auto type = cast<RankedTensorType>(init.getType());
    iterBuffers[i] = allocBuffer(type.getShape(), type.getElementType());
    materializeInto(iterBuffers[i], init, loc);
  }
  auto newFor = scf::ForOp::create(b, loc, scalar(op.getLowerBound()),
                                   scalar(op.getUpperBound()),
                                   scalar(op.getStep()), scalarInits);
  newFor.setUnsignedCmp(op.getUnsignedCmp());
  Block *body = newFor.getBody();
  if (!body->empty() && body->back().hasTrait<OpTrait::IsTerminator>())
    body->back().erase();
  scalars.map(op.getInductionVar(), newFor.getInductionVar());
  unsigned s = 0;
  for (auto [i, arg] : llvm::enumerate(op.getRegionIterArgs())) {
    if (iterBuffers[i])
      buffers[arg] = iterBuffers[i];
    else
      scalars.map(arg, newFor.getRegionIterArgs()[s++]);
  }
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(body);
    if (failed(lowerBlock(*op.getBody())))
      return failure();
    auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
    DenseSet<Value> tensorArgs;
    for (auto [i, arg] : llvm::enumerate(op.getRegionIterArgs()))
      if (iterBuffers[i])
        tensorArgs.insert(arg);
    // Values that read loop-carried buffers in a way an in-place update would
    // break go through a temporary first; the rest are written in place.
    SmallVector<std::pair<unsigned, Value>> viaTemp, direct;
    for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
      if (!iterBuffers[i])
        continue;
      Value arg = op.getRegionIterArgs()[i];
      if (v == arg || buffers.lookup(v) == iterBuffers[i])
        continue;
      DenseSet<Value> others(tensorArgs);
      others.erase(arg);
      if (readsUnsafely(v, arg, /*sameIndex=*/true, others))
        viaTemp.push_back({(unsigned)i, bufferFor(v, loc)});
      else
        direct.push_back({(unsigned)i, v});
    }
    for (auto [i, v] : direct)
      materializeInto(iterBuffers[i], v, loc);
    for (auto [i, tmp] : viaTemp) {
      auto type = cast<MemRefType>(tmp.getType());
      emitLoopNest(type.getShape(), loc, [&](ValueRange idx) {
        memref::StoreOp::create(b, loc, memref::LoadOp::create(b, loc, tmp, idx),
                                iterBuffers[i], idx);
      });
    }
    SmallVector<Value> scalarYields;
    for (auto [i, v] : llvm::enumerate(yield.getOperands()))
      if (!iterBuffers[i])
        scalarYields.push_back(scalar(v));
    scf::YieldOp::create(b, loc, scalarYields);
  }
  s = 0;
  for (auto [i, res] : llvm::enumerate(op.getResults())) {
    if (iterBuffers[i])
      buffers[res] = iterBuffers[i];
    else
      scalars.map(res, newFor.getResult(s++));
  }
  return success();
}

LogicalResult KernelLowering::lowerIf(scf::IfOp op) {
  Location loc = op.getLoc();
  SmallVector<Value> resultBuffers(op.getNumResults());
  SmallVector<Type> scalarTypes;
  for (auto [i, res] : llvm::enumerate(op.getResults())) {
    if (auto type = dyn_cast<RankedTensorType>(res.getType()))
      resultBuffers[i] = allocBuffer(type.getShape(), type.getElementType());
    else
      scalarTypes.push_back(convertScalarType(res.getType()));
  }
  auto newIf = scf::IfOp::create(b, loc, scalarTypes, scalar(op.getCondition()),
                                 /*withElseRegion=*/true);
  auto lowerBranch = [&](Block *oldBlock, Block *newBlock) -> LogicalResult {
    OpBuilder::InsertionGuard guard(b);
    if (!newBlock->empty())
      newBlock->getTerminator()->erase();
    b.setInsertionPointToEnd(newBlock);
    if (oldBlock && failed(lowerBlock(*oldBlock)))
      return failure();
    SmallVector<Value> scalarYields;
    if (oldBlock) {
      auto yield = cast<scf::YieldOp>(oldBlock->getTerminator());
      for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
        if (resultBuffers[i])
          materializeInto(resultBuffers[i], v, loc);
        else
          scalarYields.push_back(scalar(v));
      }
    }
    scf::YieldOp::create(b, loc, scalarYields);
    return success();
  };
  if (failed(lowerBranch(op.thenBlock(), newIf.thenBlock())) ||
      failed(lowerBranch(op.elseBlock(), newIf.elseBlock())))
    return failure();
  unsigned s = 0;
  for (auto [i, res] : llvm::enumerate(op.getResults())) {
    if (resultBuffers[i])
      buffers[res] = resultBuffers[i];
    else
      scalars.map(res, newIf.getResult(s++));
  }
  return success();
}

/// Blocks carried by a while loop live in two sets of buffers: one for the
/// header's arguments and one for the values the condition forwards (the
/// body's arguments and the loop's results), so that canonicalized loops whose
/// forwarded values differ from the header's arguments stay correct.
LogicalResult KernelLowering::lowerWhile(scf::WhileOp op) {
  Location loc = op.getLoc();
  auto allocFor = [&](TypeRange types, SmallVectorImpl<Value> &bufs,
                      SmallVectorImpl<Type> &scalarTypes) {
    for (Type t : types) {
      if (auto tensor = dyn_cast<RankedTensorType>(t)) {
        bufs.push_back(allocBuffer(tensor.getShape(), tensor.getElementType()));
      } else {
        bufs.push_back(Value());
        scalarTypes.push_back(convertScalarType(t));
      }
    }
  };
  SmallVector<Value> headBufs, bodyBufs;
  SmallVector<Type> headTypes, bodyTypes;
  allocFor(op.getInits().getTypes(), headBufs, headTypes);
  allocFor(op.getResultTypes(), bodyBufs, bodyTypes);
  SmallVector<Value> scalarInits;
  for (auto [i, init] : llvm::enumerate(op.getInits())) {
    if (headBufs[i])
      materializeInto(headBufs[i], init, loc);
    else
      scalarInits.push_back(scalar(init));
  }
  auto newWhile = scf::WhileOp::create(b, loc, bodyTypes, scalarInits);
  SmallVector<Location> headLocs(headTypes.size(), loc),
      bodyLocs(bodyTypes.size(), loc);
  Block *head = b.createBlock(&newWhile.getBefore(), {}, headTypes, headLocs);
  Block *body = b.createBlock(&newWhile.getAfter(), {}, bodyTypes, bodyLocs);
  auto mapArgs = [&](Block *oldBlock, Block *newBlock, ArrayRef<Value> bufs) {
    unsigned s = 0;
    for (auto [i, arg] : llvm::enumerate(oldBlock->getArguments())) {
      if (bufs[i])
        buffers[arg] = bufs[i];
      else
        scalars.map(arg, newBlock->getArgument(s++));
    }
  };
  // Header: the condition, then the forwarded values.
  mapArgs(op.getBeforeBody(), head, headBufs);
  b.setInsertionPointToEnd(head);
  if (failed(lowerBlock(*op.getBeforeBody())))
    return failure();
  scf::ConditionOp cond = op.getConditionOp();
  SmallVector<Value> forwarded;
  for (auto [i, v] : llvm::enumerate(cond.getArgs())) {
    if (bodyBufs[i])
      materializeInto(bodyBufs[i], v, loc);
    else
      forwarded.push_back(scalar(v));
  }
  scf::ConditionOp::create(b, loc, scalar(cond.getCondition()), forwarded);
  // Body: yields go back to the header's buffers (the body cannot see them,
  // so writing in place is safe).
  mapArgs(op.getAfterBody(), body, bodyBufs);
  b.setInsertionPointToEnd(body);
  if (failed(lowerBlock(*op.getAfterBody())))
    return failure();
  SmallVector<Value> scalarYields;
  for (auto [i, v] : llvm::enumerate(op.getYieldOp().getOperands())) {
    if (headBufs[i])
      materializeInto(headBufs[i], v, loc);
    else
      scalarYields.push_back(scalar(v));
  }
  scf::YieldOp::create(b, loc, scalarYields);
  b.setInsertionPointAfter(newWhile);
  unsigned s = 0;
  for (auto [i, res] : llvm::enumerate(op.getResults())) {
    if (bodyBufs[i])
      buffers[res] = bodyBufs[i];
    else
      scalars.map(res, newWhile.getResult(s++));
  }
  return success();
}

SmallVector<Value> KernelLowering::emitRegion(Region &region, ValueRange args) {
  Block &body = region.front();
  for (auto [arg, value] : llvm::zip(body.getArguments(), args))
    scalars.map(arg, value);
  // The region holds scalar code only (checked by the verifier's types).
  (void)lowerBlock(body);
  SmallVector<Value> results;
  for (Value v : body.getTerminator()->getOperands())
    results.push_back(scalar(v));
  return results;
}

SmallVector<Value> KernelLowering::emitCombine(Region &combine, ValueRange acc,
                                               ValueRange next) {
  SmallVector<Value> args(acc);
  args.append(next.begin(), next.end());
  return emitRegion(combine, args);
}

LogicalResult KernelLowering::lowerReduce(ReduceOp op) {
  Location loc = op.getLoc();
  auto srcType = cast<RankedTensorType>(op.getSrcs()[0].getType());
  ArrayRef<int64_t> shape = srcType.getShape();
  int64_t axis = op.getAxis(), len = shape[axis];
  int64_t rank = shape.size();
  int64_t lanes = (axis == rank - 1 && len >= 2 * kReductionLanes &&
                   len % kReductionLanes == 0)
                      ? kReductionLanes
                      : 1;
  // Long rows: groups of lanes, each its own accumulators, each chunk of
  // the row `groups` vectors that combine into them side by side.
  int64_t groups = lanes > 1 && len >= kLongReduction &&
                           len % (kReductionGroups * lanes) == 0
                       ? kReductionGroups
                       : 1;
  SmallVector<int64_t> outShape(shape);
  outShape.erase(outShape.begin() + axis);
  SmallVector<int64_t> accShape(outShape);
  if (lanes > 1)
    accShape.push_back(lanes);
  unsigned n = op.getSrcs().size();
  // accs[g][i]: source i's accumulators of group g.
  SmallVector<SmallVector<Value>> accs(groups);
  SmallVector<Type> eltTypes;
  for (Value src : op.getSrcs())
    eltTypes.push_back(cast<RankedTensorType>(src.getType()).getElementType());
  for (int64_t g = 0; g < groups; ++g)
    for (unsigned i = 0; i < n; ++i)
      accs[g].push_back(allocBuffer(accShape, eltTypes[i]));
  // The source index for accumulator index `idx` of group `g` in chunk `k`.
  auto srcIndex = [&](ValueRange idx, Value k, int64_t g) {
    SmallVector<Value> outer(idx.begin(), idx.begin() + outShape.size());
    Value pos = k;
    if (lanes > 1)
      pos = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, k, index(groups * lanes, loc)),
          arith::AddIOp::create(b, loc, idx.back(), index(g * lanes, loc)));
    outer.insert(outer.begin() + axis, pos);
    return outer;
  };
  // dst[i][idx] = combine(dst[i][idx], next[i]) for every source i.
  auto combineInto = [&](ArrayRef<Value> dst, ValueRange idx,
                         ArrayRef<Value> next) {
    SmallVector<Value> acc;
    for (unsigned i = 0; i < n; ++i)
      acc.push_back(bufferLoad(dst[i], idx, eltTypes[i], loc));
    auto combined = emitCombine(op.getCombineOp(), acc, next);
    for (unsigned i = 0; i < n; ++i)
      bufferStore(dst[i], idx, combined[i], loc);
  };
  // Masked loads the sources read lazily are read unmasked where their masks
  // are all true.
  emitUnmaskedLoadsOf(op.getSrcs()[0], loc, [&] {
  // Chunk 0 initializes the accumulators.
  for (int64_t g = 0; g < groups; ++g)
    emitLoopNest(accShape, loc, [&](ValueRange idx) {
      auto src = srcIndex(idx, index(0, loc), g);
      for (unsigned i = 0; i < n; ++i)
        bufferStore(accs[g][i], idx, emitAt(op.getSrcs()[i], src), loc);
    });
  // Chunks 1.. combine into them, the chunk loop outermost so that the inner
  // loops run over contiguous accumulators.
  if (len / (groups * lanes) > 1) {
    auto chunks =
        scf::ForOp::create(b, loc, index(1, loc),
                           index(len / (groups * lanes), loc), index(1, loc));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(chunks.getBody()->getTerminator());
    for (int64_t g = 0; g < groups; ++g)
      emitLoopNest(accShape, loc, [&](ValueRange idx) {
        auto src = srcIndex(idx, chunks.getInductionVar(), g);
        SmallVector<Value> next;
        for (unsigned i = 0; i < n; ++i)
          next.push_back(emitAt(op.getSrcs()[i], src));
        combineInto(accs[g], idx, next);
      });
  }
  });
  // The groups fold into the first, pairwise (the later element second, as
  // the row has it).
  for (int64_t width = groups / 2; width >= 1; width /= 2)
    for (int64_t g = 0; g < width; ++g)
      emitLoopNest(accShape, loc, [&](ValueRange idx) {
        SmallVector<Value> next;
        for (unsigned i = 0; i < n; ++i)
          next.push_back(bufferLoad(accs[g + width][i], idx, eltTypes[i], loc));
        combineInto(accs[g], idx, next);
      });
  SmallVector<Value> results(accs[0]);
  if (lanes > 1) {
    // Fold the lanes.
    SmallVector<Value> outBufs;
    for (unsigned i = 0; i < n; ++i)
      outBufs.push_back(allocBuffer(outShape, eltTypes[i]));
    emitLoopNest(outShape, loc, [&](ValueRange idx) {
      // A pairwise tree (lanes/2, lanes/4, ..., 1): as many combines as a
      // chain, but log2(lanes) deep.
      SmallVector<SmallVector<Value>> lane(lanes);
      for (int64_t l = 0; l < lanes; ++l) {
        SmallVector<Value> laneIdx(idx);
        laneIdx.push_back(index(l, loc));
        for (unsigned i = 0; i < n; ++i)
          lane[l].push_back(bufferLoad(accs[0][i], laneIdx, eltTypes[i], loc));
      }
      for (int64_t width = lanes / 2; width >= 1; width /= 2)
        for (int64_t l = 0; l < width; ++l)
          lane[l] = emitCombine(op.getCombineOp(), lane[l], lane[l + width]);
      for (unsigned i = 0; i < n; ++i)
        bufferStore(outBufs[i], idx, lane[0][i], loc);
    });
    results = outBufs;
  }
  for (unsigned i = 0; i < n; ++i) {
    Value res = op.getResults()[i];
    if (outShape.empty())
      scalars.map(res, bufferLoad(results[i], {}, eltTypes[i], loc));
    else
      buffers[res] = results[i];
  }
  return success();
}

LogicalResult KernelLowering::lowerScan(ScanOp op) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(op.getSrcs()[0].getType()).getShape();
  int64_t axis = op.getAxis(), len = shape[axis];
  bool reverse = op.getReverse();
  SmallVector<int64_t> rowsShape(shape);
  rowsShape.erase(rowsShape.begin() + axis);
  unsigned n = op.getSrcs().size();
  SmallVector<Value> outs;
  SmallVector<Type> eltTypes;
  for (Value src : op.getSrcs()) {
    eltTypes.push_back(cast<RankedTensorType>(src.getType()).getElementType());
    outs.push_back(allocBuffer(shape, eltTypes.back()));
  }
  auto at = [&](ValueRange row, Value pos) {
    SmallVector<Value> idx(row);
    idx.insert(idx.begin() + axis, pos);
    return idx;
  };
  // The first element along the axis (the last one, reversed) is itself; the
  // position loop is outermost so that the inner loops run over whole rows.
  Value first = index(reverse ? len - 1 : 0, loc);
  emitLoopNest(rowsShape, loc, [&](ValueRange row) {
    auto idx = at(row, first);
    for (unsigned i = 0; i < n; ++i)
      bufferStore(outs[i], idx, emitAt(op.getSrcs()[i], idx), loc);
  });
  if (len > 1) {
    auto steps =
        scf::ForOp::create(b, loc, index(1, loc), index(len, loc), index(1, loc));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(steps.getBody()->getTerminator());
    Value k = steps.getInductionVar();
    // Position k (len - 1 - k reversed) combines the carry from the position
    // before it (after it) with its own element.
    Value pos = k, prev;
    if (reverse) {
      pos = arith::SubIOp::create(b, loc, index(len - 1, loc), k);
      prev = arith::AddIOp::create(b, loc, pos, index(1, loc));
    } else {
      prev = arith::SubIOp::create(b, loc, pos, index(1, loc));
    }
    emitLoopNest(rowsShape, loc, [&](ValueRange row) {
      auto idx = at(row, pos), prevIdx = at(row, prev);
      SmallVector<Value> carry, next;
      for (unsigned i = 0; i < n; ++i) {
        carry.push_back(bufferLoad(outs[i], prevIdx, eltTypes[i], loc));
        next.push_back(emitAt(op.getSrcs()[i], idx));
      }
      auto combined = emitCombine(op.getCombineOp(), carry, next);
      for (unsigned i = 0; i < n; ++i)
        bufferStore(outs[i], idx, combined[i], loc);
    });
  }
  for (unsigned i = 0; i < n; ++i)
    buffers[op.getResults()[i]] = outs[i];
  return success();
}

LogicalResult KernelLowering::lowerGather(GatherOp op) {
  Location loc = op.getLoc();
  auto srcType = cast<RankedTensorType>(op.getSrc().getType());
  auto resultType = cast<RankedTensorType>(op.getType());
  Type elt = resultType.getElementType();
  Value src = bufferFor(op.getSrc(), loc);
  Value out = allocBuffer(resultType.getShape(), elt);
  int64_t axis = op.getAxis();
  Value len = index(srcType.getDimSize(axis), loc);
  emitLoopNest(resultType.getShape(), loc, [&](ValueRange idx) {
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                         emitAt(op.getIndices(), idx));
    // An index outside the source reads its first element, never memory
    // outside the buffer (negative ones are large unsigned).
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, len);
    SmallVector<Value> at(idx);
    at[axis] = arith::SelectOp::create(b, loc, inside, i, index(0, loc));
    bufferStore(out, idx, bufferLoad(src, at, elt, loc), loc);
  });
  buffers[op.getResult()] = out;
  return success();
}

LogicalResult KernelLowering::lowerMapElementwise(MapElementwiseOp op) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(op.getSrcs()[0].getType()).getShape();
  int64_t pack = op.getPack();
  SmallVector<Value> outs;
  for (Value r : op.getResults())
    outs.push_back(allocBuffer(
        shape, cast<RankedTensorType>(r.getType()).getElementType()));
  // Groups of `pack` consecutive elements along the flattened block (the
  // element loop runs over groups; each group's elements in order).
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  auto unflatten = [&](Value flat) {
    SmallVector<Value> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = arith::RemUIOp::create(b, loc, flat, index(shape[d], loc));
      flat = arith::DivUIOp::create(b, loc, flat, index(shape[d], loc));
    }
    return idx;
  };
  emitLoopNest({numel / pack}, loc, [&](ValueRange group) {
    SmallVector<SmallVector<Value>> idxs;
    for (int64_t j = 0; j < pack; ++j)
      idxs.push_back(unflatten(arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, group[0], index(pack, loc)),
          index(j, loc))));
    SmallVector<Value> args;
    for (Value src : op.getSrcs())
      for (auto &idx : idxs)
        args.push_back(emitAt(src, idx));
    SmallVector<Value> results = emitRegion(op.getBody(), args);
    for (auto [r, out] : llvm::enumerate(outs))
      for (int64_t j = 0; j < pack; ++j)
        bufferStore(out, idxs[j], results[r * pack + j], loc);
  });
  for (auto [r, out] : llvm::zip(op.getResults(), outs))
    buffers[r] = out;
  return success();
}

LogicalResult KernelLowering::lowerDot(DotOp op) {
  Location loc = op.getLoc();
  auto cType = op.getC().getType();
  Type resultElt = cType.getElementType();
  // fp16/bf16 results accumulate in fp32 and are rounded once at the end
  // (this CPU's arithmetic on them would round after every step, and fp16
  // FMAs call runtime routines the loader does not have).
  bool narrow = isa<Float16Type, BFloat16Type>(resultElt);
  Type accElt = narrow ? Type(b.getF32Type()) : resultElt;
  bool isFloat = isa<FloatType>(accElt);
  auto extend = [&](Value v) -> Value {
    if (v.getType() == accElt)
      return v;
    if (isFloat)
      return arith::ExtFOp::create(b, loc, accElt, v);
    return arith::ExtSIOp::create(b, loc, accElt, v);
  };
  // Operands in buffers of their own type (the micro-kernels widen them, or
  // multiply them as they are where the CPU has dot-product instructions).
  auto operandBuffer = [&](Value v) {
    // Already in a buffer (e.g. a tile loaded before a loop and used by every
    // iteration's dot): read it where it is.
    if (Value buf = buffers.lookup(v))
      return buf;
    auto type = cast<RankedTensorType>(v.getType());
    Value buf = allocBuffer(type.getShape(), type.getElementType());
    materializeInto(buf, v, loc);
    return buf;
  };
  Value a = operandBuffer(op.getA()), bBuf = operandBuffer(op.getB());
  // Accumulate in place when nothing else reads the accumulator: it has a
  // buffer, this dot is its only use, and it is defined in this block (so a
  // loop around the dot cannot run it twice on the same value).
  Value c = narrow ? Value() : buffers.lookup(op.getC());
  if (!c || !op.getC().hasOneUse() ||
      op.getC().getParentBlock() != op->getBlock()) {
    c = allocBuffer(cType.getShape(), accElt);
    emitLoopNest(cType.getShape(), loc, [&](ValueRange idx) {
      memref::StoreOp::create(b, loc, extend(emitAt(op.getC(), idx)), c, idx);
    });
  }
  auto finish = [&]() {
    if (!narrow) {
      buffers[op.getD()] = c;
      return success();
    }
    Value d = allocBuffer(cType.getShape(), resultElt);
    emitLoopNest(cType.getShape(), loc, [&](ValueRange idx) {
      Value v = memref::LoadOp::create(b, loc, c, idx);
      memref::StoreOp::create(
          b, loc, arith::TruncFOp::create(b, loc, resultElt, v), d, idx);
    });
    buffers[op.getD()] = d;
    return success();
  };

  // C += A B on the buffers: the CPU target's micro-kernels take it from
  // there (tessel-cpu-dot-micro-kernels).
  linalg::MatmulOp::create(b, loc, ValueRange{a, bBuf}, ValueRange{c});
  return finish();
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

void KernelLowering::createEntry(func::FuncOp kernel) {
  MLIRContext *ctx = kernel.getContext();
  Location loc = kernel.getLoc();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  auto i32 = b.getI32Type(), i64 = b.getI64Type();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(kernel);
  auto entry = func::FuncOp::create(
      b, loc, cpuEntryName(kernel.getName()),
      b.getFunctionType({ptrType, i64, i64, i32, i32, i32}, {}));
  Block *block = entry.addEntryBlock();
  b.setInsertionPointToStart(block);
  Value argv = block->getArgument(0);
  unsigned numUserArgs = kernel.getNumArguments() - 6;
  SmallVector<Value> args;
  for (unsigned i = 0; i < numUserArgs; ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptrType, ptrType, argv,
                                     ArrayRef<LLVM::GEPArg>{(int32_t)i});
    Value addr = LLVM::LoadOp::create(b, loc, ptrType, slot);
    args.push_back(LLVM::LoadOp::create(b, loc, kernel.getArgumentTypes()[i],
                                        addr));
  }
  Value gx = block->getArgument(3), gy = block->getArgument(4),
        gz = block->getArgument(5);
  Value gx64 = arith::ExtSIOp::create(b, loc, i64, gx);
  Value gy64 = arith::ExtSIOp::create(b, loc, i64, gy);
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
  Value one = arith::ConstantIntOp::create(b, loc, 1, 64);
  // The first program's (x, y, z) from its linear index; each next one by
  // a carry (no divisions per program, which short rows would feel).
  Value begin = block->getArgument(1);
  Value rest0 = arith::DivSIOp::create(b, loc, begin, gx64);
  SmallVector<Value> first{arith::RemSIOp::create(b, loc, begin, gx64),
                           arith::RemSIOp::create(b, loc, rest0, gy64),
                           arith::DivSIOp::create(b, loc, rest0, gy64)};
  auto loop = scf::ForOp::create(b, loc, begin, block->getArgument(2), one,
                                 first);
  // Programs are independent and each runs the whole kernel: vectorizing
  // across them never pays, and LLVM's loop vectorizer, given the inlined
  // kernel as one loop body, spends time exponential in the depth of its
  // select chains (a fully unrolled argmax over 32 rows took minutes).
  loop->setAttr("llvm.loop_annotation",
                LLVM::LoopAnnotationAttr::get(
                    b.getContext(), {}, LLVM::LoopVectorizeAttr::get(
                                            b.getContext(), b.getBoolAttr(true),
                                            {}, {}, {}, {}, {}, {}),
                    {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}));
  b.setInsertionPointToStart(loop.getBody());
  Value x = loop.getRegionIterArgs()[0], y = loop.getRegionIterArgs()[1],
        z = loop.getRegionIterArgs()[2];
  SmallVector<Value> callArgs(args);
  for (Value v : {x, y, z})
    callArgs.push_back(arith::TruncIOp::create(b, loc, i32, v));
  callArgs.append({gx, gy, gz});
  func::CallOp::create(b, loc, kernel, callArgs);
  Value x1 = arith::AddIOp::create(b, loc, x, one);
  Value xWraps =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x1, gx64);
  Value y1 = arith::AddIOp::create(
      b, loc, y, arith::ExtUIOp::create(b, loc, i64, xWraps));
  Value yWraps =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y1, gy64);
  Value z1 = arith::AddIOp::create(
      b, loc, z, arith::ExtUIOp::create(b, loc, i64, yWraps));
  scf::YieldOp::create(
      b, loc,
      ValueRange{arith::SelectOp::create(b, loc, xWraps, zero, x1),
                 arith::SelectOp::create(b, loc, yWraps, zero, y1), z1});
  b.setInsertionPointToEnd(block);
  func::ReturnOp::create(b, loc);
}

LogicalResult KernelLowering::run() {
  MLIRContext *ctx = oldFn.getContext();
  if (failed(checkTargetOps()))
    return failure();
  numberOps();
  planMaterialization();
  if (called)
    return createCalledFunction();

  SmallVector<Type> argTypes;
  for (Type t : oldFn.getArgumentTypes()) {
    if (isa<RankedTensorType>(t))
      return oldFn.emitOpError("kernel arguments must be scalars or pointers");
    argTypes.push_back(convertScalarType(t));
  }
  auto i32 = IntegerType::get(ctx, 32);
  argTypes.append(6, i32);
  b.setInsertionPoint(oldFn);
  newFn = func::FuncOp::create(b, oldFn.getLoc(), oldFn.getName(),
                               b.getFunctionType(argTypes, {}));
  newFn.setPrivate();
  // Internal linkage: once inlined into the entry it disappears.
  newFn->setAttr("llvm.linkage",
                 LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  entryBlock = newFn.addEntryBlock();
  unsigned numArgs = oldFn.getNumArguments();
  // Pointers made from integers may point into any argument's array: LLVM
  // must not take any argument as the only way to its memory then.
  bool addressesFromIntegers =
      oldFn.walk([](IntToPtrOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
  // Pointers known to be multiples of N bytes are N-aligned for LLVM.
  for (unsigned i = 0; i < numArgs; ++i) {
    if (!isa<PointerType>(oldFn.getArgumentTypes()[i]))
      continue;
    if (auto div = oldFn.getArgAttrOfType<IntegerAttr>(i, "tile.divisibility"))
      newFn.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                       b.getI64IntegerAttr(div.getInt()));
    // An array that overlaps no other argument's: LLVM may reorder its
    // accesses with everyone else's (no run-time alias checks).
    if (oldFn.getArgAttr(i, "tile.noalias") && !addressesFromIntegers)
      newFn.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                       b.getUnitAttr());
  }
  for (unsigned i = 0; i < numArgs; ++i)
    scalars.map(oldFn.getArgument(i), entryBlock->getArgument(i));
  for (unsigned i = 0; i < 3; ++i) {
    pids[i] = entryBlock->getArgument(numArgs + i);
    gridDims[i] = entryBlock->getArgument(numArgs + 3 + i);
  }
  b.setInsertionPointToEnd(entryBlock);
  if (!oldFn.getBody().hasOneBlock())
    return oldFn.emitOpError("kernels must have a single block");
  if (failed(lowerBlock(oldFn.getBody().front())))
    return failure();
  func::ReturnOp::create(b, oldFn.getLoc());
  if (failed(checkStackBytes("program")))
    return failure();
  createEntry(newFn);
  return success();
}

//===----------------------------------------------------------------------===//
// Calls of @jit(noinline=True) functions
//===----------------------------------------------------------------------===//

/// The buffer type a block of type `t` crosses a call in (a scalar: one
/// element).
MemRefType callBufferType(Type t) {
  if (auto tensor = dyn_cast<RankedTensorType>(t))
    return MemRefType::get(tensor.getShape(),
                           bufferElementType(tensor.getElementType()));
  return MemRefType::get({1}, bufferElementType(t));
}

LogicalResult KernelLowering::createCalledFunction() {
  MLIRContext *ctx = oldFn.getContext();
  SmallVector<Type> argTypes;
  for (Type t : oldFn.getArgumentTypes())
    argTypes.push_back(isa<RankedTensorType>(t) ? Type(callBufferType(t))
                                                : convertScalarType(t));
  for (Type t : oldFn.getResultTypes())
    argTypes.push_back(callBufferType(t));
  argTypes.append(6, IntegerType::get(ctx, 32));
  b.setInsertionPoint(oldFn);
  newFn = func::FuncOp::create(b, oldFn.getLoc(), oldFn.getName(),
                               b.getFunctionType(argTypes, {}));
  newFn.setPrivate();
  // A function of its own, called: LLVM keeps it so.
  newFn->setAttr("llvm.no_inline", b.getUnitAttr());
  entryBlock = newFn.addEntryBlock();
  unsigned numArgs = oldFn.getNumArguments();
  unsigned numResults = oldFn.getNumResults();
  for (unsigned i = 0; i < numArgs; ++i) {
    Value param = entryBlock->getArgument(i);
    if (isTensor(oldFn.getArgument(i)))
      buffers[oldFn.getArgument(i)] = param;
    else
      scalars.map(oldFn.getArgument(i), param);
  }
  for (unsigned i = 0; i < 3; ++i) {
    pids[i] = entryBlock->getArgument(numArgs + numResults + i);
    gridDims[i] = entryBlock->getArgument(numArgs + numResults + 3 + i);
  }
  b.setInsertionPointToEnd(entryBlock);
  if (!oldFn.getBody().hasOneBlock())
    return oldFn.emitOpError("called functions must have a single block");
  Block &body = oldFn.getBody().front();
  if (failed(lowerBlock(body)))
    return failure();
  // The results, into the caller's buffers.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value out = entryBlock->getArgument(numArgs + i);
    if (isTensor(v))
      materializeInto(out, v, ret.getLoc());
    else
      bufferStore(out, index(0, ret.getLoc()), scalar(v), ret.getLoc());
  }
  func::ReturnOp::create(b, oldFn.getLoc());
  return checkStackBytes("call");
}

LogicalResult KernelLowering::checkStackBytes(StringRef per) {
  int64_t stackBytes = 0;
  newFn.walk([&](memref::AllocaOp alloca) {
    MemRefType type = alloca.getType();
    stackBytes += type.getNumElements() *
                  std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  });
  if (stackBytes > kMaxStackBytes)
    return oldFn.emitOpError("needs ")
           << stackBytes / 1024 << " KiB of block buffers per " << per
           << "; the CPU backend allows " << kMaxStackBytes / 1024
           << " KiB: use smaller blocks";
  return success();
}

LogicalResult KernelLowering::lowerCall(func::CallOp op) {
  Location loc = op.getLoc();
  SmallVector<Value> operands;
  for (Value v : op.getOperands()) {
    if (!isTensor(v)) {
      operands.push_back(scalar(v));
      continue;
    }
    // The block as a buffer of the callee's type: its own buffer when it
    // has one of that type, else a copy.
    MemRefType type = callBufferType(v.getType());
    Value buf = bufferFor(v, loc);
    if (buf.getType() != type) {
      buf = allocBuffer(type.getShape(), cast<RankedTensorType>(v.getType())
                                             .getElementType());
      materializeInto(buf, v, loc);
    }
    operands.push_back(buf);
  }
  SmallVector<Value> results;
  for (Value r : op.getResults()) {
    Type elt = getElementTypeOrSelf(r.getType());
    results.push_back(allocBuffer(callBufferType(r.getType()).getShape(), elt));
    operands.push_back(results.back());
  }
  operands.append(pids, pids + 3);
  operands.append(gridDims, gridDims + 3);
  func::CallOp::create(b, loc, op.getCallee(), TypeRange{}, operands);
  for (auto [r, buf] : llvm::zip(op.getResults(), results)) {
    if (isTensor(r))
      buffers[r] = buf;
    else
      scalars.map(r, bufferLoad(buf, index(0, loc), r.getType(), loc));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Debugging and extension ops
//===----------------------------------------------------------------------===//

/// What only other targets run: inline assembly (PTX for NVIDIA GPUs) and
/// external functions the CPU does not have; an error at each.
LogicalResult KernelLowering::checkTargetOps() {
  bool ok = true;
  oldFn.walk([&](Operation *op) {
    if (isa<ElementwiseInlineAsmOp>(op)) {
      op->emitError("inline_asm_elementwise: the cpu target cannot run "
                    "inline assembly (its asm is for the GPU targets, PTX on "
                    "NVIDIA's): compute it with tl operations, or run the "
                    "kernel on a GPU target (cuda:, sim:)");
      ok = false;
    } else if (auto ext = dyn_cast<ExternElementwiseOp>(op)) {
      ok &= succeeded(loops::checkExternFunction(ext));
    }
  });
  return success(ok);
}

Value KernelLowering::stringConstant(StringRef text, Location loc) {
  std::string data = text.str();
  data.push_back('\0');
  LLVM::GlobalOp &global = strings[data];
  if (!global) {
    auto module = oldFn->getParentOfType<ModuleOp>();
    OpBuilder top(module.getBodyRegion());
    std::string name;
    for (unsigned n = strings.size();; ++n) {
      name = "tessel_string_" + std::to_string(n);
      if (!module.lookupSymbol(name))
        break;
    }
    global = LLVM::GlobalOp::create(
        top, loc, LLVM::LLVMArrayType::get(top.getI8Type(), data.size()),
        /*isConstant=*/true, LLVM::Linkage::Internal, name,
        top.getStringAttr(data));
  }
  return LLVM::AddressOfOp::create(b, loc, global);
}

LLVM::LLVMFuncOp KernelLowering::runtimeFunction(StringRef name,
                                                 LLVM::LLVMFunctionType type,
                                                 Location loc) {
  auto module = oldFn->getParentOfType<ModuleOp>();
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return fn;
  OpBuilder top(module.getBodyRegion());
  return LLVM::LLVMFuncOp::create(top, loc, name, type);
}

void KernelLowering::exitProgram(Location loc) {
  auto module = oldFn->getParentOfType<ModuleOp>();
  auto fn = module.lookupSymbol<func::FuncOp>(kCPUExitProgram);
  if (!fn) {
    OpBuilder top(module.getBodyRegion());
    fn = func::FuncOp::create(top, loc, kCPUExitProgram,
                              top.getFunctionType({}, {}));
    fn.setPrivate();
  }
  func::CallOp::create(b, loc, fn, ValueRange{});
}

/// Each element of each operand, in row-major order, one line each
/// (tessel_cpu_print).
LogicalResult KernelLowering::lowerPrint(PrintOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                            {ptr}, /*isVarArg=*/true);
  LLVM::LLVMFuncOp fn = runtimeFunction(kCPUPrintFunction, fnType, loc);
  auto print = [&](Value format, ArrayRef<Value> values) {
    SmallVector<Value> args{format, pids[0], pids[1], pids[2]};
    args.append(values.begin(), values.end());
    LLVM::CallOp::create(b, loc, fn, args);
  };
  if (op.getArgs().empty()) {
    print(stringConstant(tile::printFormat(op, 0), loc), {});
    return success();
  }
  for (auto [i, arg] : llvm::enumerate(op.getArgs())) {
    Value format = stringConstant(tile::printFormat(op, i), loc);
    bool isSigned = op.getIsSigned()[i] != 0;
    emitLoopNest(getShapeOrEmpty(arg.getType()), loc, [&](ValueRange idx) {
      SmallVector<Value> values;
      for (Value j : idx)
        values.push_back(arith::IndexCastOp::create(b, loc, b.getI32Type(), j));
      Value v = emitAt(arg, idx);
      if (isa<LLVM::LLVMPointerType>(v.getType()))
        v = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), v);
      values.push_back(
          tile::printfArgument(b, loc, v, isSigned, op.getHex()));
      print(format, values);
    });
  }
  return success();
}

/// The elements in row-major order: the first false one is reported
/// (tessel_cpu_assert_fail) and the program returns after the loop.
LogicalResult KernelLowering::lowerAssert(AssertOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  Type i32 = b.getI32Type();
  auto fnType = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(ctx),
      {ptr, ptr, i32, ptr, i32, i32, i32, i32, i32, i32}, /*isVarArg=*/true);
  LLVM::LLVMFuncOp fn = runtimeFunction(kCPUAssertFunction, fnType, loc);
  Value cond = op.getCondition();
  ArrayRef<int64_t> shape = getShapeOrEmpty(cond.getType());
  auto report = [&](ValueRange idx) {
    SmallVector<Value> args{
        stringConstant(op.getMessage(), loc), stringConstant(op.getFile(), loc),
        arith::ConstantIntOp::create(b, loc, op.getLine(), 32),
        stringConstant(op.getFunction(), loc), pids[0], pids[1], pids[2],
        gridDims[0], gridDims[1],
        arith::ConstantIntOp::create(b, loc, int64_t(shape.size()), 32)};
    for (Value j : idx)
      args.push_back(arith::IndexCastOp::create(b, loc, i32, j));
    LLVM::CallOp::create(b, loc, fn, args);
  };
  auto ifThen = [&](Value c, function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, c, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    body();
  };
  Value trueValue = arith::ConstantIntOp::create(b, loc, 1, 1);
  if (!isTensor(cond)) {
    Value failed = arith::XOrIOp::create(b, loc, scalar(cond), trueValue);
    ifThen(failed, [&] {
      report({});
      exitProgram(loc);
    });
    return success();
  }
  // Whether an element failed (reported once: the first).
  Type i8 = b.getI8Type();
  Value flag = allocBuffer({1}, i8);
  Value zeroIndex = index(0, loc);
  memref::StoreOp::create(b, loc, arith::ConstantIntOp::create(b, loc, 0, 8),
                          flag, zeroIndex);
  emitLoopNest(shape, loc, [&](ValueRange idx) {
    Value ok = emitAt(cond, idx);
    Value seen = arith::TruncIOp::create(
        b, loc, b.getI1Type(), memref::LoadOp::create(b, loc, flag, zeroIndex));
    Value first = arith::AndIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, ok, trueValue),
        arith::XOrIOp::create(b, loc, seen, trueValue));
    ifThen(first, [&] {
      report(idx);
      memref::StoreOp::create(b, loc,
                              arith::ConstantIntOp::create(b, loc, 1, 8), flag,
                              zeroIndex);
    });
  });
  Value failed = arith::TruncIOp::create(
      b, loc, b.getI1Type(), memref::LoadOp::create(b, loc, flag, zeroIndex));
  ifThen(failed, [&] { exitProgram(loc); });
  return success();
}

struct ConvertTileToLoops
    : public tessel::impl::ConvertTileToLoopsBase<ConvertTileToLoops> {
  void runOnOperation() override {
    // Kernels, and the @jit(noinline=True) functions they call (tile IR's
    // private functions with a body).
    SmallVector<func::FuncOp> functions;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (fn->hasAttr("tile.kernel") || (fn.isPrivate() && !fn.isExternal()))
        functions.push_back(fn);
    for (func::FuncOp fn : functions) {
      KernelLowering lowering(fn, !fn->hasAttr("tile.kernel"));
      if (failed(lowering.run()))
        return signalPassFailure();
    }
    for (func::FuncOp fn : functions)
      fn.erase();
  }
};

} // namespace
