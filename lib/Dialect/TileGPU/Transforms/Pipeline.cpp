//===- Pipeline.cpp - Prefetch dot operands with async copies ------------===//
//
// See the pass description in include/tessel/Dialect/TileGPU/Transforms/
// Passes.td.
//
// The loop
//
//   for i: a = load(ptrA(i, s)); b = load(ptrB(i, s)); acc = dot(a, b, acc);
//          s = next(i, s)
//
// becomes, with S stages and t_j the carried address state of iteration j,
//
//   bufA, bufB = local_alloc (S slots each)
//   for j in 0 .. S-2: copy ptrA(j, t_j) -> bufA[j] (masked off past the
//                      end), the same for B; commit
//   for i (carrying t_{i+S-1}, the slot to read and the slot to fill):
//     async_wait {pending = S-2}; barrier
//     copy the operands of iteration i+S-1 into the slot read in i-1; commit
//     a = local_load bufA[i % S]; b = local_load bufB[i % S]; acc = dot(a, b)
//   async_wait {pending = 0}
//
// Copies through registers (AMD) load iteration i+S-1's blocks at the top of
// iteration i and store them at its end; from 3 stages on there are S-1
// slots, and iteration i refills the slot it read:
//
//   prologue: iterations 0 .. S-2 -> slots 0 .. S-2; barrier
//   for i: r = load(ptrA(i+S-1)) ...; a = local_load bufA[i % (S-1)] ...
//          acc = dot(a, b, acc); barrier; local_store r -> bufA[i % (S-1)]
//
// The address state is carried in the loop's own iter_args when nothing else
// reads them (they hold iteration i+S-1's value instead of i's), otherwise in
// new ones beside them.
//
// Blocks of host-made descriptors that warpgroup MMA reads from slots go
// through the copy engine instead: thread 0 starts each slot's copies, which arrive
// on the slot's mbarrier, and the loop waits for the phase of the slot it
// reads (a parity bit it carries, flipped each time the slot index wraps):
//
//   bars = mbarrier_alloc (S barriers)
//   prologue: async_tma_copy iteration j -> slot j, arriving on bars[j]
//   for i: barrier
//          async_tma_copy iteration i+S-1 -> the slot read in i-1, if in range
//          mbarrier_wait bars[i % S], parity; a = local_load ...
//   mbarrier_inval bars
//
// A dot on warpgroup MMA that accumulates straight into its loop-carried sums
// leaves its MMAs in flight: the slot read in i-1 is refilled at the end of
// iteration i, once those MMAs are done:
//
//   for i: [async_wait; barrier]  or  mbarrier_wait ...; local_load ...
//          acc = dot(a, b, acc) {in_flight}
//          warpgroup_mma_wait {pending = 1}; barrier
//          copy iteration i+S-1 -> the slot read in i-1
//   warpgroup_mma_wait(acc) {pending = 0}
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/TileGPU/Transforms/Passes.h"
#include "tessel/Dialect/TileGPU/Transforms/TensorMapArguments.h"

#include "tessel/Analysis/PointerRoots.h"
#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace tessel::tilegpu {
#define GEN_PASS_DEF_TILEGPUPIPELINE
#include "tessel/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tessel::tilegpu

using namespace mlir;
using namespace tessel;
using namespace tessel::tilegpu;

namespace {

/// A load to prefetch: a `tile.load` (cp.async) or a host-made
/// descriptor's `tile.descriptor_load` (the copy engine), the op whose
/// result the slot holds (the load, or the transpose of a descriptor's
/// block), the dot operand it feeds and the slot layout the dot reads.
struct Candidate {
  Operation *load;
  Operation *value;
  Operation *dot;
  SharedEncoding encoding;
  SharedBufferType bufferType;

  bool viaTensorMap() const { return isa<tile::DescriptorLoadOp>(load); }
  /// The values the load's addresses come from (pointers and mask, or the
  /// descriptor's offsets).
  SmallVector<Value> addressInputs() const {
    if (auto desc = dyn_cast<tile::DescriptorLoadOp>(load))
      return SmallVector<Value>(desc.getOffsets());
    auto ptrLoad = cast<tile::LoadOp>(load);
    SmallVector<Value> inputs{ptrLoad.getPtr()};
    if (Value mask = ptrLoad.getMask())
      inputs.push_back(mask);
    return inputs;
  }
  /// The pointer the loaded memory is reached from.
  Value root() const {
    if (auto desc = dyn_cast<tile::DescriptorLoadOp>(load))
      return desc.getBase();
    return cast<tile::LoadOp>(load).getPtr();
  }
};

int32_t elementBytes(Type t) { return t.getIntOrFloatBitWidth() / 8; }

/// Bytes each thread moves per access (accessWidth).
int32_t accessBytes(tile::LoadOp load) {
  auto type = cast<RankedTensorType>(load.getType());
  auto layout = getLayout(load.getPtr().getType());
  int32_t width = layout ? accessWidth(load, *layout) : 1;
  return width * elementBytes(type.getElementType());
}

bool isZeroSplat(Value v) {
  return matchPattern(v, m_AnyZeroFloat()) || matchPattern(v, m_Zero());
}

/// Values of a loop body that can be computed for any iteration from the
/// induction variable and the loop-carried state alone.
class AheadAnalysis {
public:
  explicit AheadAnalysis(scf::ForOp loop) : loop(loop) {}

  bool computable(Value v) {
    if (!loop->isAncestor(v.getParentBlock()->getParentOp()))
      return true; // defined outside the loop
    if (v == loop.getInductionVar())
      return true;
    auto it = known.find(v);
    if (it != known.end())
      return it->second;
    known[v] = true; // a carried value may depend on itself
    bool ok = compute(v);
    known[v] = ok;
    return ok;
  }

  /// The loop-carried values (iter_args indices) computable() relied on.
  const llvm::SetVector<unsigned> &carried() const { return carriedArgs; }

private:
  bool compute(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != loop.getBody())
        return false;
      unsigned i = arg.getArgNumber() - 1;
      carriedArgs.insert(i);
      return computable(loop.getYieldedValues()[i]);
    }
    Operation *op = v.getDefiningOp();
    if (op->getBlock() != loop.getBody() || op->getNumRegions() ||
        !isPure(op))
      return false;
    return llvm::all_of(op->getOperands(),
                        [&](Value x) { return computable(x); });
  }

  scf::ForOp loop;
  llvm::DenseMap<Value, bool> known;
  llvm::SetVector<unsigned> carriedArgs;
};

/// Clones the computation of `v` (computable ahead) with `map`'s inputs
/// (the induction variable and iter_args mapped) before the builder's
/// insertion point.
Value cloneAhead(OpBuilder &b, Value v, IRMapping &map, scf::ForOp loop) {
  if (Value m = map.lookupOrNull(v))
    return m;
  Operation *op = v.getDefiningOp();
  if (!op || !loop->isAncestor(op))
    return v;
  for (Value x : op->getOperands())
    cloneAhead(b, x, map, loop);
  Operation *copy = b.clone(*op, map);
  return copy->getResult(cast<OpResult>(v).getResultNumber());
}

bool isNoalias(BlockArgument arg) {
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return func && func.getArgAttr(arg.getArgNumber(), "tile.noalias");
}

/// Whether the loop writes memory that the loads may read: a store through
/// a pointer of another root is harmless only where one of the two roots is
/// noalias; anything else that writes memory is not understood.
bool loopMayWriteLoaded(scf::ForOp loop, ArrayRef<Candidate> candidates) {
  bool conflict = false;
  loop.getBody()->walk([&](Operation *op) {
    if (auto store = dyn_cast<tile::StoreOp>(op)) {
      BlockArgument sRoot = pointerRootArgument(store.getPtr());
      for (const Candidate &c : candidates) {
        BlockArgument lRoot = pointerRootArgument(c.root());
        if (!sRoot || !lRoot || sRoot == lRoot ||
            (!isNoalias(sRoot) && !isNoalias(lRoot)))
          conflict = true;
      }
      return;
    }
    if (isa<tile::LoadOp, tile::DescriptorLoadOp, BarrierOp>(op) ||
        op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects ? !isPure(op) : effects.hasEffect<MemoryEffects::Write>())
      conflict = true;
  });
  return conflict;
}

struct TileGPUPipeline
    : public tilegpu::impl::TileGPUPipelineBase<TileGPUPipeline> {
  using TileGPUPipelineBase::TileGPUPipelineBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<scf::ForOp> loops;
    func.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    int64_t used = 0; // bytes of buffers already placed in this function
    for (scf::ForOp loop : loops) {
      // Slots live from the prologue to the loop's end: the allocator lets
      // scratch outside the loop (the epilogue's conversion) share their
      // bytes, so only the loop's own scratch counts.
      int64_t scratch = scratchEstimate(loop);
      // tl.range(num_stages=...) overrides the kernel's for its loop.
      int stages = tile::loopStages(loop, numStages);
      if (stages < 2)
        continue;
      SmallVector<Candidate> candidates = findCandidates(loop);
      if (candidates.empty())
        continue;
      int64_t perStage = 0;
      for (const Candidate &c : candidates)
        perStage += c.bufferType.getSlotStride();
      while (sharedLimit > 0 && stages >= 2 &&
             used + slotsFor(stages) * perStage + scratch > sharedLimit)
        --stages;
      if (stages < 2)
        continue;
      used += slotsFor(stages) * perStage;
      pipeline(loop, candidates, stages);
    }
  }

  /// The slot a candidate fills: one of the dot operand's tile in encoding
  /// `enc` (pipeline() makes the buffer of as many as the loop takes).
  SharedBufferType slotType(Operation *value, const SharedEncoding &enc) {
    auto type = cast<RankedTensorType>(value->getResult(0).getType());
    return SharedBufferType::getChecked(
        [&] { return value->emitError(); }, value->getContext(),
        {1, type.getDimSize(0), type.getDimSize(1)},
        type.getElementType(), enc.order, enc.transposed, enc.swizzle);
  }

  /// A `tile.load` of the dot's operand `i` (`v`), copied with cp.async.
  std::optional<Candidate> pointerCandidate(scf::ForOp loop, Operation *dot,
                                            unsigned i, Value v) {
    auto load = v.getDefiningOp<tile::LoadOp>();
    if (!load || load->getBlock() != loop.getBody() || !load->hasOneUse() ||
        load.getIsVolatile() ||
        (load.getOther() && !isZeroSplat(load.getOther())) ||
        (!registerCopies && accessBytes(load) < 4) ||
        !getLayout(load.getPtr().getType()))
      return std::nullopt;
    // Accesses down the columns (a column-major operand) fill a slot that
    // holds the tile transposed, so that they stay whole.
    bool transposed = getLayout(load.getPtr().getType())
                          ->contiguousRun(gpu::kRegister, gpu::dimName(0)) > 1;
    std::optional<SharedEncoding> enc =
        dotOperandSharedEncoding(dot, i, transposed);
    if (!enc)
      return std::nullopt;
    if (enc->order == SharedOrder::Padded && enc->swizzle < 16 &&
        loadFeedsOperand(loop, dot, 1 - i)) {
      // Both operands in slots: the dot reads K 16 bytes at a time where
      // each lane group's K is whole 16 bytes (MFMADot.cpp), down rows
      // padded by as much.
      auto a = cast<RankedTensorType>(dot->getOperand(0).getType());
      if (a.getDimSize(1) / 4 * elementBytes(a.getElementType()) % 16 == 0)
        enc->swizzle = 16;
    }
    // MFMA rows along M or N, padded for how the chip reads them.
    bool kRows = i == 0 ? !transposed : transposed;
    if (enc->order == SharedOrder::Padded && !kRows)
      enc->swizzle = mfmaMNRowPad(
          elementBytes(getElementTypeOrSelf(load.getType())), transposedReads);
    AheadAnalysis ahead(loop);
    if (!ahead.computable(load.getPtr()) ||
        (load.getMask() && !ahead.computable(load.getMask())))
      return std::nullopt;
    SharedBufferType type = slotType(load, *enc);
    if (!type)
      return std::nullopt;
    return Candidate{load, load, dot, *enc, type};
  }

  /// Whether operand `i` of `dot` is a load of `loop`'s body (through a
  /// layout conversion), as a pipelined operand is.
  static bool loadFeedsOperand(scf::ForOp loop, Operation *dot, unsigned i) {
    Value v = dot->getOperand(i);
    if (auto cvt = v.getDefiningOp<ConvertLayoutOp>())
      v = cvt.getSrc();
    auto load = v.getDefiningOp<tile::LoadOp>();
    return load && load->getBlock() == loop.getBody();
  }

  /// A host-made descriptor's block that a dot on warpgroup MMA reads from
  /// a slot, copied by the copy engine: the operand's block as it is loaded
  /// (`v`), or loaded transposed and transposed back (`v` a `tile.trans`),
  /// into a k_major or mn_major slot (transposed for the latter), whose
  /// columns of swizzle atoms are the boxes.
  std::optional<Candidate> tensorMapCandidate(scf::ForOp loop, Operation *dot,
                                              unsigned i, Value v) {
    if (!wgmmaWarps(dot))
      return std::nullopt;
    Value block = v;
    auto trans = v.getDefiningOp<tile::TransOp>();
    bool transposed = bool(trans);
    if (trans) {
      if (!trans->hasOneUse() || trans->getBlock() != loop.getBody())
        return std::nullopt;
      block = trans.getSrc();
    }
    auto load = block.getDefiningOp<tile::DescriptorLoadOp>();
    if (!load || !load.getTensorMap() || load->getBlock() != loop.getBody() ||
        !load->hasOneUse())
      return std::nullopt;
    Operation *value = v.getDefiningOp();
    std::optional<SharedEncoding> enc =
        dotOperandSharedEncoding(dot, i, transposed);
    if (!enc || enc->order == SharedOrder::Gather)
      return std::nullopt;
    AheadAnalysis ahead(loop);
    if (!llvm::all_of(load.getOffsets(),
                      [&](Value o) { return ahead.computable(o); }))
      return std::nullopt;
    SharedBufferType type = slotType(value, *enc);
    if (!type)
      return std::nullopt;
    return Candidate{load, value, dot, *enc, type};
  }

  SmallVector<Candidate> findCandidates(scf::ForOp loop) {
    SmallVector<Candidate> out;
    if (loop.getUnsignedCmp())
      return out;
    AheadAnalysis ahead(loop);
    for (Operation &op : *loop.getBody()) {
      auto dot = dyn_cast<tile::DotOp>(op);
      if (!dot)
        continue;
      for (unsigned i = 0; i < 2; ++i) {
        Value v = dot->getOperand(i);
        if (auto cvt = v.getDefiningOp<ConvertLayoutOp>())
          if (cvt->hasOneUse())
            v = cvt.getSrc();
        if (std::optional<Candidate> c =
                registerCopies ? std::nullopt
                               : tensorMapCandidate(loop, dot, i, v))
          out.push_back(*c);
        else if (std::optional<Candidate> c = pointerCandidate(loop, dot, i, v))
          out.push_back(*c);
      }
    }
    if (!out.empty() && loopMayWriteLoaded(loop, out))
      out.clear();
    return out;
  }

  /// The dots of `loop` whose warpgroup MMAs can stay in flight into the
  /// next iteration, with the iter_arg each accumulates into; none unless
  /// every dot of the loop qualifies: on warpgroup MMA, both operands read
  /// from slots the pipeline fills, accumulating (fp32 or int32) into an
  /// iter_arg that nothing else reads, its result going only back to it.
  SmallVector<std::pair<tile::DotOp, unsigned>>
  inFlightDots(scf::ForOp loop, ArrayRef<Candidate> candidates) {
    SmallVector<std::pair<tile::DotOp, unsigned>> dots;
    bool all = true;
    loop.getBody()->walk([&](tile::DotOp dot) {
      unsigned slotted = llvm::count_if(
          candidates, [&](const Candidate &c) { return c.dot == dot; });
      auto arg = dyn_cast<BlockArgument>(dot.getC());
      Type acc = dot.getD().getType().getElementType();
      if (!wgmmaWarps(dot) || slotted != 2 || acc.isF16() || !arg ||
          arg.getOwner() != loop.getBody() || arg.getArgNumber() == 0 ||
          !arg.hasOneUse() || !dot.getD().hasOneUse()) {
        all = false;
        return;
      }
      unsigned j = arg.getArgNumber() - 1;
      OpOperand &use = *dot.getD().getUses().begin();
      if (!isa<scf::YieldOp>(use.getOwner()) ||
          use.getOwner()->getParentOp() != loop.getOperation() ||
          use.getOperandNumber() != j) {
        all = false;
        return;
      }
      dots.push_back({dot, j});
    });
    if (!all)
      dots.clear();
    return dots;
  }

  /// Copies through registers hold the blocks of one iteration between its
  /// loads and its stores: from 3 stages on, S - 1 slots hold the rest, an
  /// iteration refilling the slot it read once a barrier at its end shows
  /// every thread done reading it.
  bool refillsReadSlot(int stages) const {
    return registerCopies && stages >= 3;
  }
  int slotsFor(int stages) const {
    return refillsReadSlot(stages) ? stages - 1 : stages;
  }

  void pipeline(scf::ForOp loop, ArrayRef<Candidate> candidates, int stages) {
    Location loc = loop.getLoc();
    Block *body = loop.getBody();
    Type ivType = loop.getInductionVar().getType();
    auto i32 = IntegerType::get(loop.getContext(), 32);
    bool asyncCopies = false, asyncProxy = false;
    bool refill = refillsReadSlot(stages);
    int slots = slotsFor(stages);
    int32_t arrivals = 0; // per slot: one per box of the copy engine
    for (const Candidate &c : candidates) {
      if (c.viaTensorMap() || registerCopies)
        continue;
      asyncCopies = true;
      asyncProxy |= wgmmaWarps(c.dot).has_value();
    }
    // Warpgroup MMAs left in flight: the slot an iteration refills is the one
    // the MMAs of the iteration before read, so its copies go after a wait
    // for all but the newest group of MMAs, at the end of the iteration.
    SmallVector<std::pair<tile::DotOp, unsigned>> inFlight =
        inFlightDots(loop, candidates);

    // The carried state the addresses need, and which of it can move ahead
    // in place: its result unused after the loop, and everything reading it
    // in the body only computing addresses of the prefetched loads or its
    // own update.
    AheadAnalysis ahead(loop);
    for (const Candidate &c : candidates)
      for (Value v : c.addressInputs())
        ahead.computable(v);
    SmallVector<unsigned> carried(ahead.carried().begin(),
                                  ahead.carried().end());
    llvm::SmallPtrSet<Operation *, 8> loads;
    for (const Candidate &c : candidates)
      loads.insert(c.load);
    auto movesInPlace = [&](unsigned j) {
      if (!loop.getResult(j).use_empty())
        return false;
      SmallVector<Value> work{loop.getRegionIterArgs()[j]};
      llvm::DenseSet<Value> seen;
      while (!work.empty()) {
        Value v = work.pop_back_val();
        if (!seen.insert(v).second)
          continue;
        for (OpOperand &use : v.getUses()) {
          Operation *user = use.getOwner();
          if (loads.contains(user))
            continue;
          if (isa<scf::YieldOp>(user)) {
            if (use.getOperandNumber() != j)
              return false;
            continue;
          }
          if (user->getBlock() != body || !isPure(user) ||
              user->getNumRegions())
            return false;
          llvm::append_range(work, user->getResults());
        }
      }
      return true;
    };

    OpBuilder b(loop);
    Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
          step = loop.getStep();
    auto ivConst = [&](OpBuilder &bb, int64_t v) -> Value {
      return arith::ConstantOp::create(bb, loc, ivType,
                                       bb.getIntegerAttr(ivType, v));
    };
    auto i32Const = [&](OpBuilder &bb, int64_t v) -> Value {
      return bb.create<arith::ConstantIntOp>(loc, i32, v).getResult();
    };

    // The slots, and where the copy engine fills some, the tensor maps it
    // reads (a swizzle atom wide) and the slots' barriers.
    auto func = loop->getParentOfType<func::FuncOp>();
    SmallVector<Value> buffers, maps;
    for (const Candidate &c : candidates) {
      auto type = SharedBufferType::get(
          loop.getContext(),
          {slots, c.bufferType.getRows(), c.bufferType.getColumns()},
          c.bufferType.getElementType(), c.encoding.order,
          c.encoding.transposed, c.encoding.swizzle);
      buffers.push_back(LocalAllocOp::create(b, loc, type));
      Value map;
      if (auto desc = dyn_cast<tile::DescriptorLoadOp>(c.load)) {
        arrivals += tmaSlotBoxes(type);
        map = tensorMapArgument(
            func, {int32_t(*desc.getTensorMap()), type.getElementType(),
                   tmaSlotBox(type), c.encoding.swizzle,
                   desc.getNanPadding()});
        if (!map) {
          loop.emitError("could not add a tensor-map parameter");
          return signalPassFailure();
        }
      }
      maps.push_back(map);
    }
    Value barriers;
    if (arrivals)
      barriers = MBarrierAllocOp::create(
          b, loc, MBarriersType::get(loop.getContext(), stages), arrivals);

    // Issues the copies of the iteration whose induction variable is `at`,
    // with the address state `state` (carried index -> value), into `slot`.
    // Returns the state of the iteration after it.
    // `src` is the loop holding the original body.
    // Copies through registers load at `bb` and store at `storeAt` (at `bb`
    // where null).
    auto issue = [&](OpBuilder &bb, scf::ForOp src, Value at,
                     ArrayRef<Value> state, Value slot,
                     OpBuilder *storeAt = nullptr) {
      IRMapping map;
      map.map(src.getInductionVar(), at);
      for (auto [j, v] : llvm::zip(carried, state))
        map.map(src.getRegionIterArgs()[j], v);
      Value inRange = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::slt,
                                            at, ub);
      for (auto [c, buffer, tensorMap] :
           llvm::zip(candidates, buffers, maps)) {
        if (auto desc = dyn_cast<tile::DescriptorLoadOp>(c.load)) {
          SmallVector<Value> offsets;
          for (Value o : desc.getOffsets())
            offsets.push_back(cloneAhead(bb, o, map, src));
          AsyncTmaCopyOp::create(bb, loc, tensorMap, offsets, buffer, slot,
                                 barriers, inRange);
          continue;
        }
        auto load = cast<tile::LoadOp>(c.load);
        Value ptr = cloneAhead(bb, load.getPtr(), map, src);
        auto maskTy = cast<RankedTensorType>(
            tile::getTypeWithShapeOf(bb.getI1Type(), ptr.getType()));
        Value mask = tile::SplatOp::create(bb, loc, maskTy, inRange);
        if (Value m = load.getMask())
          mask = arith::AndIOp::create(bb, loc, cloneAhead(bb, m, map, src),
                                       mask);
        if (registerCopies) {
          auto copy = tile::LoadOp::create(
              bb, loc, load.getType(), ptr, mask, load.getOther(),
              load.getCacheAttr(), load.getEvictAttr(), /*isVolatile=*/false);
          copy->setDiscardableAttrs(load->getDiscardableAttrDictionary());
          LocalStoreOp::create(storeAt ? *storeAt : bb, loc, copy, buffer,
                               slot);
          continue;
        }
        auto copy = AsyncCopyOp::create(bb, loc, buffer, slot, ptr, mask);
        if (Attribute vec = load->getAttr("tilegpu.vector"))
          copy->setAttr("tilegpu.vector", vec);
      }
      if (asyncCopies)
        AsyncCommitOp::create(bb, loc);
      SmallVector<Value> next;
      for (unsigned j : carried)
        next.push_back(cloneAhead(bb, src.getYieldedValues()[j], map, src));
      return next;
    };

    // Prologue: iterations 0 .. stages-2.
    SmallVector<Value> state;
    for (unsigned j : carried)
      state.push_back(loop.getInitArgs()[j]);
    for (int s = 0; s + 1 < stages; ++s) {
      Value at = arith::AddIOp::create(
          b, loc, lb, arith::MulIOp::create(b, loc, step, ivConst(b, s)));
      state = issue(b, loop, at, state, i32Const(b, s));
    }
    // Slots refilled at the end of an iteration: the barrier there publishes
    // the stores of all but the prologue's.
    if (refill)
      BarrierOp::create(b, loc);

    // The loop carries the state of iteration i + stages - 1 (in place, or
    // in new iter_args), the slot to read, the slot to fill and the parity
    // of the read slot's barrier phase.
    SmallVector<unsigned> inPlace, extra;
    for (unsigned j : carried)
      (movesInPlace(j) ? inPlace : extra).push_back(j);
    SmallVector<Value> newInits;
    for (auto [j, v] : llvm::zip(carried, state))
      if (llvm::is_contained(extra, j))
        newInits.push_back(v);
    newInits.push_back(i32Const(b, 0));
    if (!refill)
      newInits.push_back(i32Const(b, stages - 1));
    if (barriers)
      newInits.push_back(i32Const(b, 0));
    for (auto [j, v] : llvm::zip(carried, state))
      if (llvm::is_contained(inPlace, j))
        loop.getInitArgsMutable()[j].set(v);

    IRRewriter rewriter(loop.getContext());
    Value aheadBy =
        arith::MulIOp::create(b, loc, step, ivConst(b, stages - 1));
    // The new iter_args yield themselves until the body is built.
    auto replaced = loop.replaceWithAdditionalYields(
        rewriter, newInits, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument> newArgs) {
          return SmallVector<Value>(newArgs.begin(), newArgs.end());
        });
    if (failed(replaced))
      return;
    auto newLoop = cast<scf::ForOp>(replaced->getOperation());
    Block *nb = newLoop.getBody();
    unsigned numOld = newLoop.getNumRegionIterArgs() - newInits.size();
    ArrayRef<BlockArgument> newArgs =
        newLoop.getRegionIterArgs().drop_front(numOld);
    // read slot, fill slot (unless it is the read slot), parity
    unsigned counters = 1 + !refill + (barriers ? 1 : 0);
    Value readSlot = newArgs[newArgs.size() - counters];
    Value fillSlot =
        refill ? readSlot : Value(newArgs[newArgs.size() - counters + 1]);
    Value phase = barriers ? Value(newArgs.back()) : Value();

    OpBuilder bb = OpBuilder::atBlockBegin(nb);
    if (asyncCopies) {
      auto wait = AsyncWaitOp::create(bb, loc, stages - 2);
      if (asyncProxy)
        wait.setAsyncProxy(true);
    }
    // Every thread's copies are published, and every thread is done reading
    // the slot about to be refilled (with MMAs in flight, the refill waits
    // at the end of the iteration).
    if (asyncCopies || (inFlight.empty() && !refill))
      BarrierOp::create(bb, loc);
    SmallVector<Value> cur;
    for (unsigned j : carried) {
      auto pos = llvm::find(extra, j);
      cur.push_back(pos != extra.end()
                        ? Value(newArgs[pos - extra.begin()])
                        : Value(newLoop.getRegionIterArgs()[j]));
    }
    SmallVector<Value> next;
    if (inFlight.empty()) {
      Value at = arith::AddIOp::create(bb, loc, newLoop.getInductionVar(),
                                       aheadBy);
      // Copies through registers store at the end of the iteration, after
      // the dot has read its slot: the loads' latency overlaps the dot.
      OpBuilder tail(nb->getTerminator());
      if (refill) // every thread is done reading the slot it refills
        BarrierOp::create(tail, loc);
      next = issue(bb, newLoop, at, cur, fillSlot,
                   registerCopies ? &tail : nullptr);
    } else {
      OpBuilder tail(nb->getTerminator());
      WarpgroupMmaWaitOp::create(tail, loc, TypeRange{}, ValueRange{},
                                 ValueRange{}, 1);
      BarrierOp::create(tail, loc);
      Value at = arith::AddIOp::create(tail, loc, newLoop.getInductionVar(),
                                       aheadBy);
      next = issue(tail, newLoop, at, cur, fillSlot);
      for (auto [dot, j] : inFlight)
        dot->setAttr(kWarpgroupMmaInFlight, UnitAttr::get(dot.getContext()));
    }
    if (barriers)
      MBarrierWaitOp::create(bb, loc, barriers, readSlot, phase);
    // The loads go once the body is built: `bb` inserts before the body's
    // first op, which is a load where its pointers are loop-invariant.
    // A slot is read in any layout: straight into that of a conversion that
    // is the value's one use (the dot's operand layout).
    for (auto [c, buffer] : llvm::zip(candidates, buffers)) {
      Value v = c.value->getResult(0);
      if (v.hasOneUse())
        if (auto cvt = dyn_cast<ConvertLayoutOp>(*v.getUsers().begin()))
          v = cvt.getResult();
      v.replaceAllUsesWith(
          LocalLoadOp::create(bb, loc, v.getType(), buffer, readSlot)
              .getResult());
      if (v != c.value->getResult(0))
        v.getDefiningOp()->erase();
    }
    // Slot counters wrap at `slots`; the parity flips as the read slot
    // wraps.
    Value readWraps;
    auto advance = [&](Value slot, Value *wraps = nullptr) -> Value {
      Value n = arith::AddIOp::create(bb, loc, slot, i32Const(bb, 1));
      Value wrap = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::eq, n,
                                         i32Const(bb, slots));
      if (wraps)
        *wraps = wrap;
      return arith::SelectOp::create(bb, loc, wrap, i32Const(bb, 0), n);
    };
    Value nextRead = advance(readSlot, &readWraps),
          nextFill = refill ? Value() : advance(fillSlot);

    auto yield = cast<scf::YieldOp>(nb->getTerminator());
    for (auto [j, v] : llvm::zip(carried, next)) {
      auto pos = llvm::find(extra, j);
      if (pos != extra.end())
        yield->setOperand(numOld + (pos - extra.begin()), v);
      else
        yield->setOperand(j, v); // the in-place state moves ahead
    }
    unsigned last = yield->getNumOperands() - counters;
    yield->setOperand(last, nextRead);
    if (!refill)
      yield->setOperand(last + 1, nextFill);
    if (barriers)
      yield->setOperand(
          last + counters - 1, arith::XOrIOp::create(
                        bb, loc, phase,
                        arith::ExtUIOp::create(bb, loc, i32, readWraps)));

    for (const Candidate &c : candidates) {
      if (c.value != c.load)
        c.value->erase();
      c.load->erase();
    }

    OpBuilder after(newLoop->getContext());
    after.setInsertionPointAfter(newLoop);
    if (!inFlight.empty()) {
      // The last MMAs retire before anything reads their sums or reuses
      // their slots.
      SmallVector<Value> sums;
      for (auto [dot, j] : inFlight)
        sums.push_back(newLoop.getResult(j));
      auto wait = WarpgroupMmaWaitOp::create(
          after, loc, ValueRange(sums).getTypes(), sums, buffers, 0);
      for (auto [sum, waited] : llvm::zip(sums, wait.getResults()))
        sum.replaceAllUsesExcept(waited, wait);
    }
    if (asyncCopies)
      AsyncWaitOp::create(after, loc, 0);
    if (barriers)
      MBarrierInvalOp::create(after, loc, barriers);
  }
};

} // namespace
