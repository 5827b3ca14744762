//===- SharedMemoryAllocation.cpp - The program's shared memory ---------------===//
//
// One dynamic shared array per program. Each pipeline buffer, the mbarriers
// of its slots, and the scratch of each op that stages through shared memory
// (layout conversions, reductions across warps, dots with operands in
// registers, gathers, atomics whose old values reach copies; their
// lowerings address it from offset 0) claims bytes for its
// live range
// (SharedMemoryLiveness); claims live at the same time get disjoint bytes,
// the others may share them: the epilogue's conversion reuses the bytes of
// the K loop's buffers, two loops' buffers share theirs. A call of a
// @jit(noinline=True) function claims the bytes that function uses (from
// offset 0, as scratch) over the call.
//
//===----------------------------------------------------------------------===//
#include "DotOpToLLVM.h"
#include "tessel/Conversion/TileGPUToLLVM/NvidiaTargetHooks.h"
#include "PatternTileGPUToLLVM.h"
#include "SharedAccess.h"
#include "SharedMemoryLiveness.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <functional>

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace {

/// Bytes of scratch `op` stages through (0: none) and their `alignment`.
int64_t scratchBytes(Operation *op, const gpu::GPUTargetInfo &target,
                     int64_t &alignment) {
  alignment = 16;
  if (auto cvt = dyn_cast<tilegpu::ConvertLayoutOp>(op)) {
    auto t = cvt.getType();
    if (registerRenaming(layoutOf(cvt.getSrc().getType()), layoutOf(t)))
      return 0;
    return t.getNumElements() * int64_t(storageBytes(t.getElementType()));
  }
  if (auto dot = dyn_cast<tile::DotOp>(op)) {
    // Tensor-core dots read operands in place from pipeline slots, and
    // mma.sync A from the accumulator registers of an earlier dot; every
    // other operand is staged.
    int64_t bOffset;
    if (auto mfma = target.amd() ? mfmaDotShape(dot, *target.amd()) : std::nullopt)
      return mfmaSharedBytes(dot, *mfma, bOffset);
    bool a = bool(inPlaceOperand(dot, 0)), b = bool(inPlaceOperand(dot, 1));
    bool tensorCores, staged;
    if (auto warps = tilegpu::wgmmaWarps(dot); warps && (target.nvidia() && target.nvidia()->hasWarpgroupMma())) {
      tensorCores = true;
      staged = !(a || wgmmaAInRegisters(dot, *warps)) || !b;
      alignment = 1024; // wgmma's swizzles read address bits up to 9
    } else if ((target.nvidia() && target.nvidia()->hasMma16816()) && tilegpu::isMmaSyncWordDot(dot)) {
      // Fragment words: both operands read in place, or both staged.
      tensorCores = false;
      staged = !a || !b;
    } else {
      tensorCores = (target.nvidia() && target.nvidia()->hasMma16816()) && tilegpu::isMmaSyncDot(dot);
      staged = !tensorCores || !b || !(a || aInAccumulatorRegisters(dot));
    }
    if (!staged)
      return 0;
    int64_t bytes = dotSharedBytes(dot, bOffset);
    // With B read in place, only A is staged (before B's part).
    return tensorCores && b ? bOffset : bytes;
  }
  if (auto tma = dyn_cast<tilegpu::TmaLoadOp>(op)) {
    // The block, then its mbarrier; the copy engine moves blocks from
    // 128-byte boundaries, swizzled ones from where their pattern starts.
    alignment = tma.getSwizzle() ? 1024 : 128;
    return (tmaBlockBytes(tma.getType()) + 7) / 8 * 8 + 8;
  }
  if (auto tma = dyn_cast<tilegpu::TmaStoreOp>(op)) {
    // A swizzled block from where its pattern starts (address bits 4-9).
    alignment = tma.getSwizzle() ? 1024 : 128;
    return tmaBlockBytes(tma.getValue().getType());
  }
  if (auto gather = dyn_cast<tile::GatherOp>(op)) {
    // The whole source, row-major.
    auto src = cast<RankedTensorType>(gather.getSrc().getType());
    return src.getNumElements() * int64_t(storageBytes(src.getElementType()));
  }
  if (isa<tile::AtomicRMWOp, tile::AtomicCASOp>(op)) {
    // Old values the program uses go from their owners to the threads that
    // hold copies (a scalar's from the first thread to all).
    if (!tilegpu::atomicResultCrossesThreads(op))
      return 0;
    Value result = op->getResult(0);
    int64_t bytes = storageBytes(getElementTypeOrSelf(result.getType()));
    if (auto t = dyn_cast<RankedTensorType>(result.getType()))
      bytes *= t.getNumElements();
    return bytes;
  }
  auto red = dyn_cast<tile::ReduceOp>(op);
  if (!red)
    return 0;
  auto layout = tilegpu::getLayout(red.getSrcs()[0].getType());
  if (!layout)
    return 0;
  // Partials cross shared memory only between warps along the axis.
  bool acrossWarps = false;
  int wi = layout->inIndex(gpu::kWarp);
  if (wi >= 0)
    for (const auto &basis : layout->ins()[wi].bases)
      acrossWarps |= basis[red.getAxis()] != 0;
  if (!acrossWarps)
    return 0;
  int64_t numel = 1;
  for (auto &o : layout->outs())
    numel *= o.size;
  int64_t bytes = 0;
  int64_t warps = layout->inSize(gpu::kWarp);
  for (Value s : red.getSrcs())
    bytes += (numel / layout->outSize(gpu::dimName(red.getAxis())) * warps *
                  storageBytes(getElementTypeOrSelf(s.getType())) +
              15) /
             16 * 16;
  return bytes;
}

} // namespace

int64_t gpu::lowering::allocateSharedMemory(ModuleOp module,
                                            const GPUTargetInfo &target) {
  MLIRContext *ctx = module.getContext();
  auto i32 = IntegerType::get(ctx, 32);
  int64_t alignment = 16;
  // The bytes each function's claims use from offset 0, its calls'
  // included: a call claims its function's bytes as a scratch user claims
  // its scratch, so the caller's buffers live across it lie above them.
  llvm::DenseMap<Operation *, int64_t> used;
  std::function<int64_t(func::FuncOp)> allocate = [&](func::FuncOp func) {
    if (auto it = used.find(func); it != used.end())
      return it->second;
    used[func] = 0; // a cycle (the front end refuses recursion)
    auto calleeOf = [&](func::CallOp call) {
      return module.lookupSymbol<func::FuncOp>(call.getCallee());
    };
    func.walk([&](func::CallOp call) {
      if (func::FuncOp callee = calleeOf(call); callee && !callee.isExternal())
        allocate(callee);
    });
    SharedMemoryLiveness liveness(func);
    SmallVector<SharedClaim> claims;
    DenseMap<Operation *, Operation *> firstAccess;
    func.walk([&](Operation *op) {
      int64_t bytes = 0, align = 0;
      if (auto alloc = dyn_cast<tilegpu::LocalAllocOp>(op)) {
        // Slots start at multiples of 1024 bytes, where the swizzle
        // patterns start over (padded ones, of 128).
        auto type = alloc.getType();
        bytes = type.getNumSlots() * type.getSlotStride();
        align = type.getOrder() == tilegpu::SharedOrder::Padded ? 128 : 1024;
      } else if (auto alloc = dyn_cast<tilegpu::MBarrierAllocOp>(op)) {
        bytes = 8 * alloc.getType().getCount();
        align = 8;
      }
      if (bytes) {
        Operation *first;
        LiveRange range = liveness.bufferRange(op, first);
        claims.push_back({op, bytes, align, range});
        firstAccess[op] = first;
        return;
      }
      if (auto call = dyn_cast<func::CallOp>(op)) {
        func::FuncOp callee = calleeOf(call);
        if (callee && (bytes = used.lookup(callee))) {
          claims.push_back({op, bytes, 16, liveness.scratchRange(op),
                            /*pinned=*/true});
          // The function's first accesses come after every thread is
          // done with the caller's earlier claims of its bytes.
          OpBuilder(op).create<tilegpu::BarrierOp>(op->getLoc());
        }
        return;
      }
      if ((bytes = scratchBytes(op, target, align))) {
        claims.push_back({op, bytes, align, liveness.scratchRange(op),
                          /*pinned=*/true});
        op->setAttr(kScratchAttr, IntegerAttr::get(i32, bytes));
      }
    });
    int64_t total = placeSharedClaims(claims);
    for (const SharedClaim &c : claims) {
      if (!c.pinned)
        c.op->setAttr("tilegpu.offset", IntegerAttr::get(i32, c.offset));
      alignment = std::max(alignment, c.alignment);
    }
    // Scratch users start with a barrier of their own; a buffer whose bytes
    // an earlier claim used gets one before its first access, so that every
    // thread is done with the earlier claim.
    for (const SharedClaim &y : claims) {
      auto it = firstAccess.find(y.op);
      if (it == firstAccess.end())
        continue;
      bool reuses = llvm::any_of(claims, [&](const SharedClaim &x) {
        return &x != &y && x.offset < y.offset + y.bytes &&
               y.offset < x.offset + x.bytes &&
               liveness.runsBefore(x.range, it->second);
      });
      if (reuses)
        OpBuilder(it->second).create<tilegpu::BarrierOp>(y.op->getLoc());
    }
    return used[func] = total;
  };
  int64_t shared = 0;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      shared = std::max(shared, allocate(func));
  OpBuilder b(module.getBodyRegion());
  auto arrayTy = LLVM::LLVMArrayType::get(b.getI8Type(), 0);
  b.create<LLVM::GlobalOp>(module.getLoc(), arrayTy, /*isConstant=*/false,
                           LLVM::Linkage::External, kSharedName, Attribute(),
                           alignment, target.sharedAddressSpace());
  module->setAttr("tilegpu.shared", IntegerAttr::get(i32, shared));
  return shared;
}
