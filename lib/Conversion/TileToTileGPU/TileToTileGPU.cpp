//===- TileToTileGPU.cpp - Register layouts for every tensor -------------===//
//
// See the pass description in include/tessel/Conversion/Passes.td.
//
// Every tensor value first gets the default layout of its shape, so values
// that flow through loops, branches and element-wise ops always agree. Ops
// that move elements between dimensions then get the operand or result
// layout their lowering needs, and convert_layout bridges to the default.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "Coalesce.h"

#include "tessel/Analysis/AxisInfo.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/IR/AmdLayouts.h"
#include "tessel/Dialect/TileGPU/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/IR/MmaInputs.h"
#include "tessel/Dialect/TileGPU/IR/NvidiaLayouts.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace tessel {
#define GEN_PASS_DEF_CONVERTTILETOTILEGPU
#include "tessel/Conversion/Passes.h.inc"
} // namespace tessel

using namespace mlir;
using namespace tessel;
using gpu::LinearLayout;

namespace {

/// On loads and stores: per dimension, how many consecutive elements along
/// it one access may move (the lowering uses as many as a thread holds along
/// the dimension its registers run along: tilegpu::accessWidth).
constexpr llvm::StringLiteral kVectorAttr = "tilegpu.vector";

/// On dots: the lowering runs warpgroup MMA (wgmma.mma_async, sm_90a). The
/// accumulator layout alone cannot say so: with one warpgroup along N it is
/// the same map as mma.sync's with every warp along M.
constexpr llvm::StringLiteral kWgmmaAttr = "tilegpu.wgmma";

/// Elements of one tensor a thread may hold.
constexpr int64_t kMaxElementsPerThread = 1024;
/// Threads of one program: every GPU target's limit per block/workgroup.
constexpr int kMaxThreadsPerProgram = 1024;

std::vector<int32_t> shapeOf(RankedTensorType t) {
  return std::vector<int32_t>(t.getShape().begin(), t.getShape().end());
}

bool isPow2Shape(RankedTensorType t) {
  return llvm::all_of(t.getShape(),
                      [](int64_t s) { return s > 0 && (s & (s - 1)) == 0; });
}

struct ConvertTileToTileGPU
    : public tessel::impl::ConvertTileToTileGPUBase<ConvertTileToTileGPU> {
  using Base::Base;

  /// Layouts other than the default for the values whose loads and stores
  /// want them (coalescedAccesses).
  llvm::DenseMap<Value, CoalescedAccess> accesses;

  LinearLayout defaultLayout(RankedTensorType t) const {
    return gpu::defaultBlockedLayout(shapeOf(t), numWarps, threadsPerWarp);
  }

  /// Sets the default layout on a tensor value without one (along the
  /// dimension and as many consecutive elements per thread as its loads and
  /// stores want).
  void assignDefault(Value v) const {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.getEncoding())
      return;
    auto it = accesses.find(v);
    v.setType(tilegpu::withLayout(
        t, it == accesses.end()
               ? defaultLayout(t)
               : gpu::defaultBlockedLayout(shapeOf(t), numWarps,
                                           threadsPerWarp, it->second.width,
                                           it->second.dim)));
  }

  /// Makes `operand` of `op` have layout `want`.
  void requireOperand(OpOperand &operand, const LinearLayout &want) const {
    Value v = operand.get();
    auto t = cast<RankedTensorType>(v.getType());
    RankedTensorType wantType = tilegpu::withLayout(t, want);
    if (t == wantType)
      return;
    OpBuilder b(operand.getOwner());
    Value c = b.create<tilegpu::ConvertLayoutOp>(v.getLoc(), wantType, v);
    operand.set(c);
  }

  /// Gives `result` layout `natural` and converts it to the default for its
  /// users.
  void produceWith(Value result, const LinearLayout &natural) const {
    auto t = cast<RankedTensorType>(result.getType());
    RankedTensorType naturalType = tilegpu::withLayout(t, natural);
    if (t == naturalType)
      return;
    result.setType(naturalType);
    OpBuilder b(result.getContext());
    b.setInsertionPointAfterValue(result);
    auto c = b.create<tilegpu::ConvertLayoutOp>(result.getLoc(), t, result);
    result.replaceAllUsesExcept(c.getResult(), c);
  }

  /// Dots whose inputs mma.sync multiplies (tilegpu::mmaSyncInputs), in
  /// whole 16x8 accumulator tiles and whole instructions along K, on sm_80
  /// and up.
  bool usesMmaSync(tile::DotOp dot) const {
    std::optional<tilegpu::MmaInputs> inputs = tilegpu::mmaSyncInputs(dot);
    auto shape = dot.getD().getType().getShape();
    int64_t k = dot.getA().getType().getDimSize(1);
    return computeCapability >= 80 && inputs && shape[0] % 16 == 0 &&
           shape[1] % 8 == 0 && k % tilegpu::mmaSyncK(*inputs) == 0;
  }

  /// Whether another dot uses this dot's result or produces one of its
  /// inputs (attention's two dots, through the softmax between them).
  static bool isChained(tile::DotOp dot) {
    SetVector<Operation *> slice;
    getForwardSlice(dot.getOperation(), &slice);
    BackwardSliceOptions options;
    options.omitUsesFromAbove = false;
    (void)getBackwardSlice(dot.getOperation(), &slice, options);
    return llvm::any_of(slice, [&](Operation *op) {
      return op != dot.getOperation() && isa<tile::DotOp>(op);
    });
  }

  /// The accumulator layout: warps split so each covers a block as square
  /// (in 16x8 tiles) as the shape allows; chained dots put every warp along
  /// M while rows remain (16 per warp), as Triton does, so that whole rows
  /// of the scores sit in one warp: row reductions need no shared memory,
  /// and row vectors move between the dots without conversions.
  LinearLayout mmaLayout(tile::DotOp dot) const {
    auto shape = dot.getD().getType().getShape();
    return gpu::mmaAccumulatorLayout({int32_t(shape[0]), int32_t(shape[1])},
                                     splitWarps(dot, 16, 8));
  }

  /// The warps [M, N] of a dot's accumulator in tiles of tileM x tileN:
  /// each warp's block as square (in tiles) as the shape allows; chained
  /// dots put every warp along M while two tiles of rows remain per warp.
  std::vector<int32_t> splitWarps(tile::DotOp dot, int64_t tileM,
                                  int64_t tileN) const {
    auto shape = dot.getD().getType().getShape();
    int32_t wm = 1, wn = 1;
    if (isChained(dot))
      while (wm < numWarps && shape[0] >= 2 * tileM * wm)
        wm *= 2;
    while (wm * wn < numWarps) {
      if (shape[0] / (tileM * wm) >= shape[1] / (tileN * wn) &&
          shape[0] / (tileM * wm) > 1)
        wm *= 2;
      else
        wn *= 2;
    }
    return {wm, wn};
  }

  /// The MFMA that takes `dot`: its elements of K per lane and block size.
  struct MfmaChoice {
    int32_t kWidth, instr;
    bool doubles = false; ///< fp64's 64-bit results (16x16 only)
  };
  /// fp16 or bf16 inputs of one type into fp32 (or fp16 from fp16), fp32
  /// into fp32, int8 into int32, 8-bit floats into fp32, fp64 into fp64 (16x16 blocks only); whole 32x32 accumulator blocks (16x16
  /// where the shape has only those) and whole instructions along K (2 or 4
  /// kWidth).
  std::optional<MfmaChoice> mfmaChoice(tile::DotOp dot) const {
    if (!mfma)
      return std::nullopt;
    Type a = dot.getA().getType().getElementType();
    Type b = dot.getB().getType().getElementType();
    Type acc = dot.getD().getType().getElementType();
    auto shape = dot.getD().getType().getShape();
    int64_t k = dot.getA().getType().getDimSize(1);
    int32_t width = 0, wide = 0;
    if (a.isF64() && b.isF64() && acc.isF64()) {
      // v_mfma_f64_16x16x4f64: K 4 a block, one element a lane.
      if (shape[0] % 16 == 0 && shape[1] % 16 == 0 && k % 4 == 0)
        return MfmaChoice{1, 16, true};
      return std::nullopt;
    }
    if ((a.isF16() || a.isBF16()) && a == b &&
        (acc.isF32() || (acc.isF16() && a.isF16()))) {
      width = 4;
      wide = mfmaHalfWideKWidth;
    } else if (a.isF32() && b.isF32() && acc.isF32()) {
      width = 1;
    } else if (a.isInteger(8) && b.isInteger(8) && acc.isInteger(32)) {
      width = mfmaInt8KWidth;
      wide = mfmaInt8WideKWidth;
    } else if (tile::isFP8Type(a) && tile::isFP8Type(b) && acc.isF32()) {
      width = 8; // the chip's own formats (tile-expand-fp8 left them)
      wide = mfmaFP8WideKWidth;
    }
    if (!width)
      return std::nullopt;
    for (int32_t w : {wide, width})
      for (int32_t instr : {32, 16})
        if (w && shape[0] % instr == 0 && shape[1] % instr == 0 &&
            k % (64 / instr * w) == 0)
          return MfmaChoice{w, instr};
    return std::nullopt;
  }
  bool usesMfma(tile::DotOp dot) const { return mfmaChoice(dot).has_value(); }

  /// The MFMA accumulator layout: waves split as mma.sync's warps are, in
  /// 32x32 tiles; transposed for chained dots, as Triton lays them out: a
  /// row of the scores lies in one lane pair, and the scores are the next
  /// dot's A operand in place.
  LinearLayout mfmaLayout(tile::DotOp dot) const {
    auto shape = dot.getD().getType().getShape();
    MfmaChoice choice = *mfmaChoice(dot);
    int32_t instr = choice.instr;
    return gpu::mfmaAccumulatorLayout({int32_t(shape[0]), int32_t(shape[1])},
                                      splitWarps(dot, instr, instr),
                                      /*transposed=*/isChained(dot), instr,
                                      choice.doubles);
  }

  /// An MFMA dot's operands that its loop does not change (attention's Q)
  /// are converted to the instruction's operand layout once, before the
  /// loop: each iteration takes them from registers instead of staging them
  /// in LDS again.
  void holdInvariantOperands(tile::DotOp dot) const {
    auto loop = dot->getParentOfType<scf::ForOp>();
    if (!loop)
      return;
    MfmaChoice choice = *mfmaChoice(dot);
    std::vector<int32_t> warps = splitWarps(dot, choice.instr, choice.instr);
    for (unsigned i = 0; i < 2; ++i) {
      OpOperand &operand = dot->getOpOperand(i);
      Value v = operand.get();
      if (!loop.isDefinedOutsideOfLoop(v))
        continue;
      auto t = cast<RankedTensorType>(v.getType());
      RankedTensorType want = tilegpu::withLayout(
          t, gpu::mfmaOperandLayout(i, shapeOf(t), warps, choice.kWidth,
                                    choice.instr));
      if (t == want)
        continue;
      OpBuilder b(loop);
      operand.set(b.create<tilegpu::ConvertLayoutOp>(v.getLoc(), want, v));
    }
  }

  /// The warps [M, N] of a dot that runs on warpgroup MMA, or nothing: an
  /// mma.sync-shaped dot wgmma takes (tilegpu::takesWarpgroupMma) on
  /// sm_90a with whole warpgroups, warps along M first while rows remain (16
  /// per warp, as Triton splits them), each warpgroup covering at least 8
  /// columns. tf32 runs on mma.sync there.
  std::optional<std::vector<int32_t>> wgmmaWarps(tile::DotOp dot) const {
    if (computeCapability != 90 || !archSpecific || numWarps % 4 ||
        !usesMmaSync(dot) || !tilegpu::takesWarpgroupMma(dot))
      return std::nullopt;
    auto shape = dot.getD().getType().getShape();
    int32_t wm = 4, wn = 1;
    while (wm * wn < numWarps) {
      if (shape[0] > 16 * wm)
        wm *= 2;
      else
        wn *= 2;
    }
    if (shape[0] < 16 * wm || shape[1] < 8 * wn)
      return std::nullopt;
    return std::vector<int32_t>{wm, wn};
  }

  /// The most consecutive elements along dimension `dim` one access can
  /// move (up to 16 bytes): contiguous, aligned, and under one mask bit.
  static int32_t vectorWidth(const AxisInfoResult &axis, Value ptr, Value mask,
                             Value other, unsigned dim) {
    auto t = cast<RankedTensorType>(ptr.getType());
    const AxisInfo *p = axis.lookup(ptr);
    int64_t bytes = pointeeBytes(ptr.getType());
    if (!p || p->isUninitialized() || bytes <= 0 || bytes > 16)
      return 1;
    int64_t v = std::min<int64_t>(p->getContiguity(dim), 16 / bytes);
    v = std::min<int64_t>(v, t.getDimSize(dim));
    for (Value uniform : {mask, other})
      if (uniform) {
        const AxisInfo *u = axis.lookup(uniform);
        v = (u && !u->isUninitialized()) ? std::min(v, u->getConstancy(dim)) : 1;
      }
    while (v > 1 && p->getDivisibility(dim) % (v * bytes) != 0)
      v /= 2;
    int64_t pow2 = 1;
    while (pow2 * 2 <= v)
      pow2 *= 2;
    return int32_t(pow2);
  }

  void runOnOperation() override {
    if (threadsPerWarp < 1 || threadsPerWarp > kMaxThreadsPerProgram ||
        (threadsPerWarp & (threadsPerWarp - 1))) {
      getOperation().emitError("threads per warp must be a power of two up "
                               "to ")
          << kMaxThreadsPerProgram << ", got " << int(threadsPerWarp);
      return signalPassFailure();
    }
    int maxWarps = kMaxThreadsPerProgram / threadsPerWarp;
    if (numWarps < 1 || numWarps > maxWarps || (numWarps & (numWarps - 1))) {
      getOperation().emitError("num_warps must be a power of two from 1 to ")
          << maxWarps << " (" << kMaxThreadsPerProgram << " threads of "
          << int(threadsPerWarp) << " per warp), got " << int(numWarps);
      return signalPassFailure();
    }
    getOperation()->setAttr(
        tilegpu::kThreadsPerWarpAttr,
        IntegerAttr::get(IntegerType::get(&getContext(), 32), threadsPerWarp));
    int64_t numThreads = int64_t(numWarps) * threadsPerWarp;
    bool failed = false;
    getOperation().walk([&](Operation *op) {
      for (Value r : op->getResults())
        if (auto t = dyn_cast<RankedTensorType>(r.getType());
            t && !isPow2Shape(t)) {
          op->emitOpError("GPU layouts need power-of-two block shapes, got ")
              << t;
          failed = true;
        } else if (t && t.getNumElements() >
                             kMaxElementsPerThread * numThreads) {
          // Every element of a thread is a register: code size and compile
          // time grow with it, and far less than this already spills.
          op->emitOpError("a block of ")
              << t.getNumElements() << " elements needs "
              << t.getNumElements() / numThreads
              << " registers per thread on " << int(numWarps)
              << " warps; the GPU backends allow " << kMaxElementsPerThread
              << ": use smaller blocks or more warps (num_warps)";
          failed = true;
        }
    });
    if (failed)
      return signalPassFailure();

    // Tensor constants get a copy per user: a zero that CSE shared between
    // two loads' `other` must not tie their layouts (the coalescing groups).
    getOperation().walk([&](arith::ConstantOp cst) {
      if (!isa<RankedTensorType>(cst.getType()))
        return;
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : cst->getUses())
        uses.push_back(&use);
      for (OpOperand *use : llvm::drop_begin(uses)) {
        OpBuilder b(use->getOwner());
        use->set(b.clone(*cst)->getResult(0));
      }
    });

    // Vector widths of loads and stores, from what the addresses, masks and
    // `other` values are proved to be (before layouts change any type).
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      AxisInfoResult axis(func);
      for (auto [v, access] :
           coalescedAccesses(func, axis, numWarps * threadsPerWarp))
        accesses[v] = access;
      func.walk([&](Operation *op) {
        Value ptr, mask, other;
        if (auto load = dyn_cast<tile::LoadOp>(op)) {
          ptr = load.getPtr();
          mask = load.getMask();
          other = load.getOther();
        } else if (auto store = dyn_cast<tile::StoreOp>(op)) {
          ptr = store.getPtr();
          mask = store.getMask();
        } else {
          return;
        }
        auto t = dyn_cast<RankedTensorType>(ptr.getType());
        if (!t)
          return;
        SmallVector<int32_t> widths;
        for (unsigned d = 0; d < t.getRank(); ++d)
          widths.push_back(vectorWidth(axis, ptr, mask, other, d));
        if (llvm::any_of(widths, [](int32_t w) { return w > 1; }))
          op->setAttr(kVectorAttr,
                      DenseI32ArrayAttr::get(op->getContext(), widths));
      });
    }

    // Every tensor gets its shape's default layout.
    getOperation().walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            assignDefault(arg);
      for (Value r : op->getResults())
        assignDefault(r);
      // Constants keep their value attribute's type in step with the result.
      if (auto cst = dyn_cast<arith::ConstantOp>(op))
        if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue()))
          if (dense.getType() != cst.getType())
            cst.setValueAttr(dense.reshape(cast<ShapedType>(cst.getType())));
    });
    for (auto func : getOperation().getOps<func::FuncOp>())
      func->setAttr("tilegpu.num_warps",
                    IntegerAttr::get(IntegerType::get(func.getContext(), 32),
                                     numWarps));

    // Ops whose operands and results are not element-wise related.
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) { ops.push_back(op); });
    for (Operation *op : ops) {
      if (auto e = dyn_cast<tile::ExpandDimsOp>(op)) {
        auto layout = *tilegpu::getLayout(e.getResult().getType());
        requireOperand(e.getSrcMutable(), gpu::dropDim(layout, e.getAxis()));
      } else if (auto bc = dyn_cast<tile::BroadcastOp>(op)) {
        auto layout = *tilegpu::getLayout(bc.getResult().getType());
        requireOperand(bc.getSrcMutable(),
                       gpu::broadcastSource(
                           layout, shapeOf(bc.getSrc().getType())));
      } else if (auto tr = dyn_cast<tile::TransOp>(op)) {
        auto layout = *tilegpu::getLayout(tr.getSrc().getType());
        std::vector<int32_t> perm(tr.getOrder().begin(), tr.getOrder().end());
        produceWith(tr.getResult(), gpu::transposeLayout(layout, perm));
      } else if (auto rs = dyn_cast<tile::ReshapeOp>(op)) {
        auto layout = *tilegpu::getLayout(rs.getSrc().getType());
        produceWith(rs.getResult(),
                    gpu::reshapeLayout(
                        layout, shapeOf(cast<RankedTensorType>(
                                    rs.getResult().getType()))));
      } else if (auto dot = dyn_cast<tile::DotOp>(op)) {
        if (auto warps = wgmmaWarps(dot)) {
          auto shape = dot.getD().getType().getShape();
          LinearLayout acc = gpu::wgmmaAccumulatorLayout(
              {int32_t(shape[0]), int32_t(shape[1])}, *warps);
          dot->setAttr(kWgmmaAttr, UnitAttr::get(dot.getContext()));
          requireOperand(dot.getCMutable(), acc);
          produceWith(dot.getD(), acc);
        } else if (usesMmaSync(dot)) {
          LinearLayout acc = mmaLayout(dot);
          requireOperand(dot.getCMutable(), acc);
          produceWith(dot.getD(), acc);
        } else if (usesMfma(dot)) {
          LinearLayout acc = mfmaLayout(dot);
          requireOperand(dot.getCMutable(), acc);
          produceWith(dot.getD(), acc);
          holdInvariantOperands(dot);
        }
      } else if (auto map = dyn_cast<tile::MapElementwiseOp>(op)) {
        // One layout for every source and result: each thread maps the
        // elements it holds.
        // With pack > 1 every thread holds groups of `pack` consecutive
        // elements of the last dimension.
        auto type = cast<RankedTensorType>(map.getResults()[0].getType());
        int32_t pack = map.getPack();
        std::vector<int32_t> shape = shapeOf(type);
        if (shape.back() % pack != 0) {
          map.emitOpError("pack ")
              << pack << " must divide the last dimension on GPU targets";
          return signalPassFailure();
        }
        LinearLayout layout =
            pack > 1 ? gpu::defaultBlockedLayout(shape, numWarps,
                                                 threadsPerWarp, pack, {}, pack)
                     : *tilegpu::getLayout(type);
        for (OpOperand &src : map.getSrcsMutable())
          requireOperand(src, layout);
        for (Value r : map.getResults())
          if (pack > 1 || r != map.getResults()[0])
            produceWith(r, layout);
      } else if (auto gather = dyn_cast<tile::GatherOp>(op)) {
        // Each thread reads the elements of the result it holds: the indices
        // in the same registers.
        requireOperand(gather.getIndicesMutable(),
                       *tilegpu::getLayout(gather.getResult().getType()));
      } else if (auto scan = dyn_cast<tile::ScanOp>(op)) {
        // Sequential in each thread: the axis lies in registers.
        LinearLayout want = gpu::scanLayout(
            shapeOf(cast<RankedTensorType>(scan.getSrcs()[0].getType())),
            scan.getAxis(), numWarps, threadsPerWarp);
        for (OpOperand &src : scan.getSrcsMutable())
          requireOperand(src, want);
        for (Value r : scan.getResults())
          produceWith(r, want);
      } else if (auto red = dyn_cast<tile::ReduceOp>(op)) {
        unsigned axis = red.getAxis();
        auto layout = *tilegpu::getLayout(red.getSrcs()[0].getType());
        if (!gpu::canReduceAlong(layout, axis)) {
          // Default layouts are blocked: each basis moves along one
          // dimension. Anything else is a bug of this pass.
          red.emitOpError("has no reducible layout");
          return signalPassFailure();
        }
        LinearLayout natural = gpu::reduceLayout(layout, axis);
        for (Value r : red.getResults())
          if (isa<RankedTensorType>(r.getType()))
            produceWith(r, natural);
      }
    }
    layOutCalls();
  }

  /// Gives `v` (a parameter or a call's result) its shape's default layout,
  /// converted to the layout it had for its users.
  void defineWithDefault(Value v, OpBuilder &b) const {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t)
      return;
    RankedTensorType want = tilegpu::withLayout(t, defaultLayout(t));
    if (t == want)
      return;
    v.setType(want);
    auto c = b.create<tilegpu::ConvertLayoutOp>(v.getLoc(), t, v);
    v.replaceAllUsesExcept(c.getResult(), c);
  }

  /// Calls of @jit(noinline=True) functions: every tensor crosses a call in
  /// its shape's default layout (arguments, parameters, returned values,
  /// results), so a function has one signature whoever calls it.
  void layOutCalls() {
    auto toDefault = [&](Operation *op) {
      for (OpOperand &o : op->getOpOperands())
        if (auto t = dyn_cast<RankedTensorType>(o.get().getType()))
          requireOperand(o, defaultLayout(t));
    };
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      func.walk([&](func::CallOp call) {
        toDefault(call);
        OpBuilder b(call.getContext());
        b.setInsertionPointAfter(call);
        for (Value r : call.getResults())
          defineWithDefault(r, b);
      });
      if (func->hasAttr("tile.kernel"))
        continue;
      Block &entry = func.getBody().front();
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      for (BlockArgument arg : entry.getArguments())
        defineWithDefault(arg, b);
      SmallVector<Type> results;
      func.walk([&](func::ReturnOp ret) {
        toDefault(ret);
        results = llvm::to_vector(ret.getOperandTypes());
      });
      func.setType(FunctionType::get(func.getContext(),
                                     entry.getArgumentTypes(), results));
    }
  }
};

} // namespace
