//===- TileGPUToLLVM.cpp - Per-thread code from layouts ------------------===//
//
// One thread's view of a kernel whose tensors carry tilegpu layouts: a
// tensor becomes the values of the thread's registers (a 1:N type
// conversion), element-wise ops repeat per register, and the element a
// register holds is computed from the layout (make_range, addresses).
// Ops that move values between threads go through warp shuffles (reductions
// within a warp) or the program's shared memory (reductions across warps,
// layout conversions), between barriers.
//
// Then scf, arith, math (vendor math library calls where the target has
// them) and func lower to the LLVM dialect with MLIR's own patterns.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/TileGPUToLLVM/TileGPUToLLVM.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/IR/Dialect.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"

#include <set>

using namespace mlir;
using namespace tessel;
using gpu::LinearLayout;

gpu::GPUTargetInfo::~GPUTargetInfo() = default;

namespace {

constexpr const char *kSharedName = "tessel_shared";

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Value i32Const(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIntOp>(loc, b.getI32Type(), v);
}

LinearLayout layoutOf(Type t) { return *tilegpu::getLayout(t); }

bool hasLayout(Type t) { return tilegpu::getLayout(t).has_value(); }

/// Bytes an element takes in memory (bools as bytes, pointers as 8).
unsigned storageBytes(Type t) {
  if (isa<tile::PointerType, LLVM::LLVMPointerType>(t))
    return 8;
  return std::max(1u, t.getIntOrFloatBitWidth() / 8);
}

/// The hardware indices of the current thread.
struct ThreadIds {
  Value lane, warp;
};

ThreadIds threadIds(OpBuilder &b, Location loc,
                    const gpu::GPUTargetInfo &target) {
  Value tid = target.threadId(b, loc);
  return {b.create<arith::AndIOp>(loc, tid, i32Const(b, loc, 31)),
          b.create<arith::ShRUIOp>(loc, tid, i32Const(b, loc, 5))};
}

/// XOR of the bases of the set bits of `index` (i32) for input dimension
/// `in`: one i32 per output dimension.
SmallVector<Value> hardwarePart(OpBuilder &b, Location loc,
                                const LinearLayout &layout, const char *in,
                                Value index, SmallVector<Value> acc) {
  int k = layout.inIndex(in);
  if (k < 0)
    return acc;
  const auto &bases = layout.ins()[k].bases;
  for (size_t bit = 0; bit < bases.size(); ++bit) {
    Value set = b.create<arith::AndIOp>(
        loc, b.create<arith::ShRUIOp>(loc, index, i32Const(b, loc, bit)),
        i32Const(b, loc, 1));
    for (size_t d = 0; d < acc.size(); ++d)
      if (bases[bit][d] != 0)
        acc[d] = b.create<arith::XOrIOp>(
            loc, acc[d],
            b.create<arith::MulIOp>(loc, set, i32Const(b, loc, bases[bit][d])));
  }
  return acc;
}

/// The coordinates of the element each register of this thread holds:
/// coords[register][dim] (i32).
SmallVector<SmallVector<Value>> elementCoords(OpBuilder &b, Location loc,
                                              const LinearLayout &layout,
                                              const ThreadIds &ids) {
  size_t rank = layout.outs().size();
  SmallVector<Value> hw(rank, i32Const(b, loc, 0));
  hw = hardwarePart(b, loc, layout, gpu::kLane, ids.lane, hw);
  hw = hardwarePart(b, loc, layout, gpu::kWarp, ids.warp, hw);
  SmallVector<SmallVector<Value>> coords;
  for (int r = 0; r < layout.inSize(gpu::kRegister); ++r) {
    std::vector<int32_t> c = layout.apply({{gpu::kRegister, r}});
    SmallVector<Value> regCoords;
    for (size_t d = 0; d < rank; ++d)
      regCoords.push_back(c[d] ? b.create<arith::XOrIOp>(
                                     loc, hw[d], i32Const(b, loc, c[d]))
                               : hw[d]);
    coords.push_back(std::move(regCoords));
  }
  return coords;
}

/// Row-major flat index of coordinates in `shape`.
Value flatIndex(OpBuilder &b, Location loc, ArrayRef<Value> coords,
                ArrayRef<int32_t> shape) {
  Value flat = i32Const(b, loc, 0);
  int64_t stride = 1;
  for (size_t d = coords.size(); d-- > 0;) {
    flat = b.create<arith::AddIOp>(
        loc, flat,
        b.create<arith::MulIOp>(loc, coords[d], i32Const(b, loc, stride)));
    stride *= shape[d];
  }
  return flat;
}

/// Whether this thread owns (is the first copy of) its registers' elements:
/// lanes and warps whose bits only make copies are not owners. Warp bits in
/// `distinctWarps` count as distinct even where the layout copies along them
/// (a reduction's partials, one per warp along the axis).
Value isOwner(OpBuilder &b, Location loc, const LinearLayout &layout,
              const ThreadIds &ids, uint32_t distinctWarps = 0) {
  Value own = b.create<arith::ConstantIntOp>(loc, b.getI1Type(), 1);
  auto check = [&](const char *in, Value index) {
    uint32_t free = layout.freeBits(in);
    if (in == gpu::kWarp)
      free &= ~distinctWarps;
    if (!free)
      return;
    Value masked = b.create<arith::AndIOp>(loc, index, i32Const(b, loc, free));
    own = b.create<arith::AndIOp>(
        loc, own,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, masked,
                                i32Const(b, loc, 0)));
  };
  check(gpu::kLane, ids.lane);
  check(gpu::kWarp, ids.warp);
  return own;
}

/// Registers that hold a copy of a lower register's element.
bool isCopyRegister(const LinearLayout &layout, int reg) {
  return (uint32_t(reg) & layout.freeBits(gpu::kRegister)) != 0;
}

/// Shared memory: a byte address in the program's dynamic shared array.
Value sharedAddress(OpBuilder &b, Location loc, unsigned addrSpace,
                    Value byteOffset) {
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext(), addrSpace);
  Value base = b.create<LLVM::AddressOfOp>(loc, ptrTy, kSharedName);
  return b.create<LLVM::GEPOp>(loc, ptrTy, b.getI8Type(), base,
                               ValueRange{byteOffset});
}

/// The address of element `index` (of `bytes` each) of a shared-memory
/// region starting at byte `base`.
Value sharedElement(OpBuilder &b, Location loc, unsigned addrSpace,
                    int64_t base, Value index, unsigned bytes) {
  Value off = b.create<arith::AddIOp>(
      loc, i32Const(b, loc, base),
      b.create<arith::MulIOp>(loc, index, i32Const(b, loc, bytes)));
  return sharedAddress(b, loc, addrSpace, off);
}

/// Memory type of a register value (bools as i8, pointers as pointers).
Type memoryType(Type t) {
  if (t.isInteger(1))
    return IntegerType::get(t.getContext(), 8);
  return t;
}

Value toMemory(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isInteger(1))
    return b.create<arith::ExtUIOp>(loc, b.getI8Type(), v);
  return v;
}

Value fromMemory(OpBuilder &b, Location loc, Value v, Type t) {
  if (t.isInteger(1))
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, v,
                                   b.create<arith::ConstantIntOp>(
                                       loc, v.getType(), 0));
  return v;
}

/// A register value stored as, or loaded from, element `index` of a shared
/// region at byte `base` (elements of their memory type's size).
void storeShared(OpBuilder &b, Location loc, unsigned addrSpace, Value v,
                 int64_t base, Value index) {
  unsigned bytes = storageBytes(memoryType(v.getType()));
  Value addr = sharedElement(b, loc, addrSpace, base, index, bytes);
  b.create<LLVM::StoreOp>(loc, toMemory(b, loc, v), addr, bytes);
}

Value loadShared(OpBuilder &b, Location loc, unsigned addrSpace, Type t,
                 int64_t base, Value index) {
  Type mem = memoryType(t);
  unsigned bytes = storageBytes(mem);
  Value addr = sharedElement(b, loc, addrSpace, base, index, bytes);
  return fromMemory(b, loc, b.create<LLVM::LoadOp>(loc, mem, addr, bytes), t);
}

/// Runs `body` only where `cond` holds.
void ifThen(OpBuilder &b, Location loc, Value cond,
            llvm::function_ref<void(OpBuilder &)> body) {
  auto ifOp = b.create<scf::IfOp>(loc, cond, /*withElseRegion=*/false);
  OpBuilder inner = ifOp.getThenBodyBuilder();
  body(inner);
}

/// A value of any register type moved across lanes as i32 pieces.
Value shuffleXor(OpBuilder &b, Location loc, const gpu::GPUTargetInfo &target,
                 Value v, int laneMask) {
  Type t = v.getType();
  auto i32 = b.getI32Type();
  if (t.isF32())
    return b.create<arith::BitcastOp>(
        loc, t,
        target.shuffleXor(b, loc, b.create<arith::BitcastOp>(loc, i32, v),
                          laneMask));
  if (t.isInteger(32))
    return target.shuffleXor(b, loc, v, laneMask);
  if (isa<LLVM::LLVMPointerType>(t)) {
    Value i = b.create<LLVM::PtrToIntOp>(loc, b.getI64Type(), v);
    return b.create<LLVM::IntToPtrOp>(
        loc, t, shuffleXor(b, loc, target, i, laneMask));
  }
  unsigned bits = t.getIntOrFloatBitWidth();
  auto asInt = IntegerType::get(b.getContext(), bits);
  Value i = isa<FloatType>(t) ? b.create<arith::BitcastOp>(loc, asInt, v).getResult() : v;
  Value result;
  if (bits < 32) {
    Value wide = b.create<arith::ExtUIOp>(loc, i32, i);
    result = b.create<arith::TruncIOp>(
        loc, asInt, target.shuffleXor(b, loc, wide, laneMask));
  } else { // 64 bits: two halves
    auto i64 = b.getI64Type();
    Value lo = b.create<arith::TruncIOp>(loc, i32, i);
    Value hi = b.create<arith::TruncIOp>(
        loc, i32,
        b.create<arith::ShRUIOp>(loc, i,
                                 b.create<arith::ConstantIntOp>(loc, i64, 32)));
    lo = target.shuffleXor(b, loc, lo, laneMask);
    hi = target.shuffleXor(b, loc, hi, laneMask);
    result = b.create<arith::OrIOp>(
        loc, b.create<arith::ExtUIOp>(loc, i64, lo),
        b.create<arith::ShLIOp>(loc, b.create<arith::ExtUIOp>(loc, i64, hi),
                                b.create<arith::ConstantIntOp>(loc, i64, 32)));
  }
  return isa<FloatType>(t) ? b.create<arith::BitcastOp>(loc, t, result).getResult()
                           : result;
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

template <class Op>
struct TileGPUPattern : public OpConversionPattern<Op> {
  TileGPUPattern(const TypeConverter &tc, MLIRContext *ctx,
                 const gpu::GPUTargetInfo &target)
      : OpConversionPattern<Op>(tc, ctx), target(target) {}
  const gpu::GPUTargetInfo &target;
};

struct ProgramIdLowering : TileGPUPattern<tile::GetProgramIdOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::GetProgramIdOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, target.programId(rw, op.getLoc(), op.getAxis()));
    return success();
  }
};

struct NumProgramsLowering : TileGPUPattern<tile::GetNumProgramsOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::GetNumProgramsOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, target.numPrograms(rw, op.getLoc(), op.getAxis()));
    return success();
  }
};

struct MakeRangeLowering : TileGPUPattern<tile::MakeRangeOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::MakeRangeOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    LinearLayout layout = layoutOf(op.getType());
    auto coords = elementCoords(rw, loc, layout, threadIds(rw, loc, target));
    SmallVector<Value> values;
    for (auto &c : coords)
      values.push_back(
          op.getStart() ? rw.create<arith::AddIOp>(
                              loc, c[0], i32Const(rw, loc, op.getStart()))
                        : c[0]);
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

struct SplatLowering : TileGPUPattern<tile::SplatOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::SplatOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    int n = layoutOf(op.getType()).inSize(gpu::kRegister);
    SmallVector<Value> values(n, adaptor.getSrc()[0]);
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

/// Ops whose operand already sits in the result's registers (the layout
/// pass made sure of it): broadcast, expand_dims, trans, reshape.
template <class Op> struct SameRegistersLowering : TileGPUPattern<Op> {
  using TileGPUPattern<Op>::TileGPUPattern;
  LogicalResult
  matchAndRewrite(Op op, typename OpConversionPattern<Op>::OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    ValueRange src = adaptor.getOperands()[0];
    int n = layoutOf(op.getType()).inSize(gpu::kRegister);
    if (int(src.size()) != n)
      return rw.notifyMatchFailure(op, "operand layout not prepared");
    rw.replaceOpWithMultiple(op, {SmallVector<Value>(src)});
    return success();
  }
};

struct AddPtrLowering : TileGPUPattern<tile::AddPtrOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::AddPtrOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto ptrTy = cast<tile::PointerType>(getElementTypeOrSelf(op.getType()));
    Type elt = memoryType(getTypeConverter()->convertType(ptrTy.getPointeeType()));
    Type llvmPtr = getTypeConverter()->convertType(ptrTy);
    SmallVector<Value> values;
    ValueRange ptrs = adaptor.getPtr(), offs = adaptor.getOffset();
    for (size_t i = 0; i < ptrs.size(); ++i)
      values.push_back(rw.create<LLVM::GEPOp>(loc, llvmPtr, elt, ptrs[i],
                                              ValueRange{offs[i]}));
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

/// Registers per access of a load or store: the vector width the layout
/// pass proved for its addresses, as far as the thread holds consecutive
/// elements of the last dimension in consecutive registers.
int accessWidth(Operation *op, Value ptr) {
  auto attr = op->getAttrOfType<IntegerAttr>("tilegpu.vector");
  std::optional<LinearLayout> layout = tilegpu::getLayout(ptr.getType());
  if (!attr || !layout)
    return 1;
  int32_t run = layout->contiguousRun(
      gpu::kRegister, gpu::dimName(layout->outs().size() - 1));
  return int(std::min<int64_t>(attr.getInt(), run));
}

struct LoadLowering : TileGPUPattern<tile::LoadOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::LoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Type elt = getTypeConverter()->convertType(
        getElementTypeOrSelf(op.getResult().getType()));
    Type mem = memoryType(elt);
    ValueRange ptrs = adaptor.getPtr();
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    ValueRange others = op.getOther() ? adaptor.getOther() : ValueRange();
    int vec = accessWidth(op, op.getPtr());
    unsigned bytes = storageBytes(mem);
    SmallVector<Value> values;
    for (size_t i = 0; i < ptrs.size(); i += vec) {
      // One access of `vec` consecutive elements from ptrs[i].
      auto load = [&](OpBuilder &b) {
        SmallVector<Value> out;
        if (vec == 1) {
          Value v = b.create<LLVM::LoadOp>(loc, mem, ptrs[i], bytes,
                                           op.getIsVolatile());
          out.push_back(fromMemory(b, loc, v, elt));
          return out;
        }
        auto vt = VectorType::get({vec}, mem);
        Value v = b.create<LLVM::LoadOp>(loc, vt, ptrs[i], vec * bytes,
                                         op.getIsVolatile());
        for (int j = 0; j < vec; ++j) {
          Value e = b.create<LLVM::ExtractElementOp>(
              loc, v, b.create<LLVM::ConstantOp>(loc, b.getI32Type(), j));
          out.push_back(fromMemory(b, loc, e, elt));
        }
        return out;
      };
      if (masks.empty()) {
        llvm::append_range(values, load(rw));
        continue;
      }
      auto ifOp = rw.create<scf::IfOp>(loc, SmallVector<Type>(vec, elt),
                                       masks[i], /*withElseRegion=*/true);
      OpBuilder thenB = ifOp.getThenBodyBuilder();
      thenB.create<scf::YieldOp>(loc, load(thenB));
      OpBuilder elseB = ifOp.getElseBodyBuilder();
      SmallVector<Value> other;
      for (int j = 0; j < vec; ++j)
        other.push_back(others.empty()
                            ? elseB.create<LLVM::ZeroOp>(loc, elt).getResult()
                            : others[i + j]);
      elseB.create<scf::YieldOp>(loc, other);
      llvm::append_range(values, ifOp.getResults());
    }
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

struct StoreLowering : TileGPUPattern<tile::StoreOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::StoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ValueRange ptrs = adaptor.getPtr(), vals = adaptor.getValue();
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    ThreadIds ids = threadIds(rw, loc, target);
    // Only one copy of each element is stored.
    Value own;
    std::optional<LinearLayout> layout = tilegpu::getLayout(op.getPtr().getType());
    if (layout) {
      own = isOwner(rw, loc, *layout, ids);
    } else { // a scalar store: the program's first thread
      Value tid = target.threadId(rw, loc);
      own = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid,
                                     i32Const(rw, loc, 0));
    }
    int vec = accessWidth(op, op.getPtr());
    for (size_t i = 0; i < ptrs.size(); i += vec) {
      if (layout && isCopyRegister(*layout, i))
        continue;
      Value cond = masks.empty() ? own
                                 : rw.create<arith::AndIOp>(loc, own, masks[i])
                                       .getResult();
      ifThen(rw, loc, cond, [&](OpBuilder &b) {
        Type mem = memoryType(vals[i].getType());
        unsigned bytes = storageBytes(mem);
        if (vec == 1) {
          b.create<LLVM::StoreOp>(loc, toMemory(b, loc, vals[i]), ptrs[i], bytes);
          return;
        }
        auto vt = VectorType::get({vec}, mem);
        Value v = b.create<LLVM::UndefOp>(loc, vt);
        for (int j = 0; j < vec; ++j)
          v = b.create<LLVM::InsertElementOp>(
              loc, v, toMemory(b, loc, vals[i + j]),
              b.create<LLVM::ConstantOp>(loc, b.getI32Type(), j));
        b.create<LLVM::StoreOp>(loc, v, ptrs[i], vec * bytes);
      });
    }
    rw.eraseOp(op);
    return success();
  }
};

struct BarrierLowering : TileGPUPattern<tilegpu::BarrierOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::BarrierOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    target.barrier(rw, op.getLoc());
    rw.eraseOp(op);
    return success();
  }
};

struct AssumeLowering : TileGPUPattern<tile::AssumeOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tile::AssumeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    // What the kernel author promises, for LLVM's optimizations.
    rw.create<LLVM::AssumeOp>(op.getLoc(), adaptor.getCond()[0]);
    rw.eraseOp(op);
    return success();
  }
};

/// Writes every owned element of a tensor to shared memory at its row-major
/// index (elements of their memory size, from byte `base`); `transposed` writes a
/// 2-D block column-major instead.
void writeTensorToShared(OpBuilder &b, Location loc,
                         const gpu::GPUTargetInfo &target,
                         const LinearLayout &layout, ArrayRef<int32_t> shape,
                         ValueRange values, int64_t base,
                         bool transposed = false) {
  ThreadIds ids = threadIds(b, loc, target);
  auto coords = elementCoords(b, loc, layout, ids);
  Value own = isOwner(b, loc, layout, ids);
  for (size_t r = 0; r < values.size(); ++r) {
    if (isCopyRegister(layout, r))
      continue;
    Value flat =
        transposed
            ? flatIndex(b, loc, {coords[r][1], coords[r][0]}, {shape[1], shape[0]})
            : flatIndex(b, loc, coords[r], shape);
    ifThen(b, loc, own, [&](OpBuilder &ib) {
      storeShared(ib, loc, target.sharedAddressSpace(), values[r], base, flat);
    });
  }
}

SmallVector<Value> readTensorFromShared(OpBuilder &b, Location loc,
                                        const gpu::GPUTargetInfo &target,
                                        const LinearLayout &layout,
                                        ArrayRef<int32_t> shape, Type elt,
                                        int64_t base) {
  ThreadIds ids = threadIds(b, loc, target);
  auto coords = elementCoords(b, loc, layout, ids);
  SmallVector<Value> values;
  for (auto &c : coords) {
    Value flat = flatIndex(b, loc, c, shape);
    values.push_back(
        loadShared(b, loc, target.sharedAddressSpace(), elt, base, flat));
  }
  return values;
}

std::vector<int32_t> shapeOf(Type t) {
  auto s = cast<RankedTensorType>(t).getShape();
  return std::vector<int32_t>(s.begin(), s.end());
}

std::optional<std::vector<int32_t>> wgmmaWarps(tile::DotOp dot) {
  return tilegpu::wgmmaWarps(dot);
}

/// The local_load that operand `i` (0: A, 1: B) of `dot` reads in place:
/// a local_load (possibly through a convert_layout) of a buffer in the
/// encoding the dot's instruction reads (dotOperandSharedEncoding). Null
/// otherwise, and the operand goes through registers.
tilegpu::LocalLoadOp inPlaceOperand(tile::DotOp dot, unsigned i) {
  Value v = dot->getOperand(i);
  if (auto cvt = v.getDefiningOp<tilegpu::ConvertLayoutOp>())
    v = cvt.getSrc();
  auto load = v.getDefiningOp<tilegpu::LocalLoadOp>();
  if (!load)
    return {};
  std::optional<tilegpu::SharedEncoding> enc =
      tilegpu::dotOperandSharedEncoding(dot, i);
  auto type = load.getBuffer().getType();
  if (!enc || enc->order != type.getOrder() || enc->swizzle != type.getSwizzle())
    return {};
  return load;
}

/// The address of slot `slot` (i32) of the buffer at `buffer`.
Value slotAddress(OpBuilder &b, Location loc, Value buffer, Value slot,
                  tilegpu::SharedBufferType type) {
  Value off = b.create<arith::MulIOp>(loc, slot,
                                      i32Const(b, loc, type.getSlotStride()));
  return b.create<LLVM::GEPOp>(loc, buffer.getType(), b.getI8Type(), buffer,
                               ValueRange{off});
}

/// The element offset in a slot of (row, column) (i32 each), from the
/// inverse of its layout (one XOR per set bit).
Value slotOffset(OpBuilder &b, Location loc, const LinearLayout &inverse,
                 Value row, Value col) {
  SmallVector<Value> acc{i32Const(b, loc, 0)};
  std::string d0 = gpu::dimName(0), d1 = gpu::dimName(1);
  if (row)
    acc = hardwarePart(b, loc, inverse, d0.c_str(), row, acc);
  if (col)
    acc = hardwarePart(b, loc, inverse, d1.c_str(), col, acc);
  return acc[0];
}

/// Where a warpgroup-MMA dot stages its operands: A (M x K) K-major in
/// wgmmaOperandLayout with `aSwizzle`, then B (K x N) from the next multiple
/// of 1024 bytes, where every swizzle pattern starts over. B is N-major
/// (wgmmaMNMajorOperandLayout), as it comes in registers (consecutive
/// columns in a thread, lanes along the columns: vector stores without bank
/// conflicts), with a swizzle no wider than an instruction's columns, so
/// that every instruction starts on an atom; an instruction of 8 columns is
/// too narrow for any swizzle, and B is K-major then.
struct WgmmaTiles {
  int32_t aSwizzle, bSwizzle;
  bool bMNMajor;
  int64_t bBase, bytes;
};

WgmmaTiles wgmmaTiles(tile::DotOp dot, const std::vector<int32_t> &warps) {
  auto a = dot.getA().getType(), b = dot.getB().getType();
  int32_t size = storageBytes(a.getElementType());
  int32_t instrN = gpu::wgmmaInstrN(
      {int32_t(a.getDimSize(0)), int32_t(b.getDimSize(1))}, warps);
  WgmmaTiles t;
  t.aSwizzle = gpu::wgmmaSwizzleBytes(a.getDimSize(1), size);
  t.bMNMajor = instrN * size >= 32;
  t.bSwizzle = t.bMNMajor ? std::min(128, instrN * size) : t.aSwizzle;
  t.bBase = (a.getNumElements() * size + 1023) / 1024 * 1024;
  t.bytes = t.bBase + b.getNumElements() * size;
  return t;
}

/// Bytes of shared memory a dot stages its operands in: A row-major, then B
/// column-major (each thread reads its rows of A and columns of B along K);
/// for warpgroup MMA, wgmmaTiles.
int64_t dotSharedBytes(tile::DotOp dot, int64_t &bOffset) {
  if (auto warps = wgmmaWarps(dot)) {
    WgmmaTiles t = wgmmaTiles(dot, *warps);
    bOffset = t.bBase;
    return t.bytes;
  }
  auto a = dot.getA().getType(), b = dot.getB().getType();
  int64_t aBytes = a.getNumElements() * storageBytes(a.getElementType());
  bOffset = (aBytes + 15) / 16 * 16;
  return bOffset + b.getNumElements() * storageBytes(b.getElementType());
}

/// An element of one type as another (tl.dot converts its inputs to the
/// accumulator's type before multiplying).
Value convertElement(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (isa<FloatType>(from) && isa<FloatType>(to))
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? b.create<arith::ExtFOp>(loc, to, v).getResult()
               : b.create<arith::TruncFOp>(loc, to, v).getResult();
  if (isa<IntegerType>(from) && isa<FloatType>(to))
    return b.create<arith::SIToFPOp>(loc, to, v);
  if (isa<IntegerType>(from) && isa<IntegerType>(to))
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? b.create<arith::ExtSIOp>(loc, to, v).getResult()
               : b.create<arith::TruncIOp>(loc, to, v).getResult();
  return b.create<arith::FPToSIOp>(loc, to, v);
}

/// Writes an operand of a warpgroup MMA, held in registers as `layout` over
/// [row, k], to shared memory from byte `base` as `shared` (offset -> [row,
/// k]) places it. Both maps are linear, so a register's offset is the
/// thread's part (from its lane and warp) XOR a constant per register; runs
/// of registers at consecutive offsets are stored as one vector of up to 16
/// bytes.
void writeOperandToShared(OpBuilder &b, Location loc,
                          const gpu::GPUTargetInfo &target,
                          const LinearLayout &layout,
                          const LinearLayout &shared, ValueRange values,
                          int64_t base, Value basePtr = {}) {
  LinearLayout toOffset = layout.invertAndCompose(shared);
  Type elt = values[0].getType();
  int32_t size = storageBytes(elt);
  ThreadIds ids = threadIds(b, loc, target);
  SmallVector<Value> hw{i32Const(b, loc, 0)};
  hw = hardwarePart(b, loc, toOffset, gpu::kLane, ids.lane, hw);
  hw = hardwarePart(b, loc, toOffset, gpu::kWarp, ids.warp, hw);
  int32_t vec = std::min<int32_t>(
      toOffset.contiguousRun(gpu::kRegister, gpu::kOffset), 16 / size);
  // A vector must start at a multiple of its width in every thread.
  for (const char *in : {gpu::kLane, gpu::kWarp})
    if (int i = toOffset.inIndex(in); i >= 0)
      for (const auto &basis : toOffset.ins()[i].bases)
        while (vec > 1 && basis[0] % vec)
          vec /= 2;
  Value own = isOwner(b, loc, layout, ids);
  auto vecTy = VectorType::get({vec}, elt);
  for (int32_t r = 0; r < int32_t(values.size()); r += vec) {
    if (isCopyRegister(layout, r))
      continue;
    int32_t c = toOffset.apply({{gpu::kRegister, r}})[0];
    Value off = b.create<arith::XOrIOp>(loc, hw[0], i32Const(b, loc, c));
    Value addr =
        basePtr
            ? b.create<LLVM::GEPOp>(
                  loc, basePtr.getType(), b.getI8Type(), basePtr,
                  ValueRange{b.create<arith::MulIOp>(loc, off,
                                                     i32Const(b, loc, size))})
                  .getResult()
            : sharedElement(b, loc, target.sharedAddressSpace(), base, off,
                            size);
    Value v = values[r];
    if (vec > 1) {
      v = b.create<LLVM::PoisonOp>(loc, vecTy);
      for (int32_t i = 0; i < vec; ++i)
        v = b.create<LLVM::InsertElementOp>(loc, v, values[r + i],
                                            i32Const(b, loc, i));
    }
    ifThen(b, loc, own, [&](OpBuilder &ib) {
      ib.create<LLVM::StoreOp>(loc, v, addr, vec * size);
    });
  }
}

/// d = a * b + c on warpgroup MMA (wgmmaWarps): both operands are staged
/// swizzled in shared memory (wgmmaTiles), then each warpgroup issues
/// wgmma.mma_async m64nNk16 for each of its accumulator tiles, K steps
/// innermost so one accumulator's MMAs follow each other, through
/// descriptors of the tiles' rows; one commit and a wait for all at the end.
SmallVector<Value> lowerWgmmaDot(OpBuilder &b, Location loc,
                                 const gpu::GPUTargetInfo &target,
                                 tile::DotOp op, ValueRange a, ValueRange bv,
                                 ValueRange c,
                                 const std::vector<int32_t> &warps,
                                 Value aSlot, Value bSlot) {
  auto aTy = op.getA().getType(), bTy = op.getB().getType();
  int32_t M = aTy.getDimSize(0), K = aTy.getDimSize(1), N = bTy.getDimSize(1);
  bool bf16 = aTy.getElementType().isBF16();
  int32_t size = storageBytes(aTy.getElementType());
  WgmmaTiles tiles = wgmmaTiles(op, warps);
  LinearLayout dLayout = layoutOf(op.getD().getType());

  // Operands read in place (a pipeline's slots, already published to the
  // async proxy) are not staged.
  if (!aSlot || !bSlot) {
    target.barrier(b, loc); // earlier readers of the scratch are done
    if (!aSlot)
      writeOperandToShared(b, loc, target, layoutOf(aTy),
                           gpu::wgmmaOperandLayout(M, K, size, tiles.aSwizzle),
                           a, 0);
    if (bSlot)
      ;
    else if (tiles.bMNMajor)
      writeOperandToShared(
          b, loc, target, layoutOf(bTy),
          gpu::wgmmaMNMajorOperandLayout(K, N, size, tiles.bSwizzle), bv,
          tiles.bBase);
    else
      writeOperandToShared(b, loc, target,
                           gpu::transposeLayout(layoutOf(bTy), {1, 0}),
                           gpu::wgmmaOperandLayout(N, K, size, tiles.bSwizzle),
                           bv, tiles.bBase);
    target.fenceSharedForWarpgroupMma(b, loc);
    target.barrier(b, loc);
  }

  // An instruction's operand tile starts where its first row or column
  // (`first`, a multiple of 8) meets K step k0 (a multiple of 16): there the
  // swizzle moves nothing, so the descriptor gets the plain offset. K-major
  // (rows x K): the swizzle atom along K, the row, the column in the atom;
  // 8-row groups are 8 rows of S bytes apart. N-major (K x N): the atom
  // along N (each 8 rows of S bytes, the leading offset), the group of 8
  // rows of K (the stride offset: N / atom width atoms).
  Value sharedBase = b.create<LLVM::PtrToIntOp>(
      loc, b.getI32Type(),
      sharedAddress(b, loc, target.sharedAddressSpace(), i32Const(b, loc, 0)));
  auto baseOf = [&](Value slot, int64_t base) -> Value {
    if (slot)
      return b.create<LLVM::PtrToIntOp>(loc, b.getI32Type(), slot);
    return b.create<arith::AddIOp>(loc, sharedBase, i32Const(b, loc, base));
  };
  Value aBase = baseOf(aSlot, 0), bBase = baseOf(bSlot, tiles.bBase);
  auto descriptor = [&](Value base, int32_t rows, int32_t swizzle,
                        bool mnMajor, Value first, int32_t k0) {
    int32_t atom = swizzle / size; // elements along a row of an atom
    int64_t fixed, perFirst, leading, stride;
    if (!mnMajor) {
      fixed = int64_t(k0 / atom) * rows * swizzle + (k0 % atom) * size;
      perFirst = swizzle;
      leading = 16; // unused
      stride = 8 * swizzle;
    } else {
      leading = 8 * swizzle;
      stride = int64_t(rows / atom) * 8 * swizzle;
      fixed = int64_t(k0 / 8) * stride;
      perFirst = leading / atom; // first is a multiple of the atom width
    }
    Value byte = b.create<arith::AddIOp>(
        loc, base,
        b.create<arith::AddIOp>(
            loc, i32Const(b, loc, fixed),
            b.create<arith::MulIOp>(loc, first, i32Const(b, loc, perFirst))));
    return target.warpgroupMmaDescriptor(b, loc, byte, leading, stride,
                                         swizzle);
  };

  // This warpgroup's first row and column: the accumulator layout at its
  // first warp (warp bits 0-1 pick rows within the warpgroup).
  ThreadIds ids = threadIds(b, loc, target);
  Value firstWarp = b.create<arith::AndIOp>(loc, ids.warp, i32Const(b, loc, ~3));
  SmallVector<Value> group = hardwarePart(
      b, loc, dLayout, gpu::kWarp, firstWarp,
      {i32Const(b, loc, 0), i32Const(b, loc, 0)});

  int32_t instrN = gpu::wgmmaInstrN({M, N}, warps);
  int32_t perInstr = instrN / 2;
  SmallVector<Value> d(c.begin(), c.end());
  target.warpgroupMmaFence(b, loc);
  for (int32_t first = 0; first < int32_t(d.size()); first += perInstr) {
    std::vector<int32_t> origin = dLayout.apply({{gpu::kRegister, first}});
    Value row0 =
        b.create<arith::XOrIOp>(loc, group[0], i32Const(b, loc, origin[0]));
    Value col0 =
        b.create<arith::XOrIOp>(loc, group[1], i32Const(b, loc, origin[1]));
    SmallVector<Value> acc(d.begin() + first, d.begin() + first + perInstr);
    for (int32_t k0 = 0; k0 < K; k0 += 16)
      acc = target.warpgroupMma(
          b, loc, descriptor(aBase, M, tiles.aSwizzle, false, row0, k0),
          descriptor(bBase, N, tiles.bSwizzle, tiles.bMNMajor, col0, k0),
          acc, instrN, bf16, tiles.bMNMajor);
    std::copy(acc.begin(), acc.end(), d.begin() + first);
  }
  return target.warpgroupMmaWait(b, loc, d);
}

/// d = a * b + c. On warpgroup MMA, lowerWgmmaDot. Otherwise both operands
/// are staged in shared memory; then either
/// each warp runs 16x8x16 tensor-core MMAs over the accumulator tiles its
/// layout gives it (the mma.sync accumulator layout, fp16/bf16 into fp32),
/// or each thread runs a loop over K for the accumulator elements it holds.
struct DotLowering : TileGPUPattern<tile::DotOp> {
  using TileGPUPattern::TileGPUPattern;

  LogicalResult
  matchAndRewrite(tile::DotOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto aTy = op.getA().getType(), bTy = op.getB().getType();
    int32_t M = aTy.getDimSize(0), K = aTy.getDimSize(1), N = bTy.getDimSize(1);
    Type aElt = aTy.getElementType(), bElt = bTy.getElementType();
    Type accElt = op.getD().getType().getElementType();
    // Operands a pipeline left in shared memory are read from their slot.
    tilegpu::LocalLoadOp inPlace[2] = {inPlaceOperand(op, 0),
                                       inPlaceOperand(op, 1)};
    Value slots[2];
    for (int i = 0; i < 2; ++i)
      if (inPlace[i])
        slots[i] = slotAddress(rw, loc,
                               rw.getRemappedValue(inPlace[i].getBuffer()),
                               rw.getRemappedValue(inPlace[i].getSlot()),
                               inPlace[i].getBuffer().getType());
    if (auto warps = wgmmaWarps(op); warps && target.hasWarpgroupMma()) {
      rw.replaceOpWithMultiple(
          op, {lowerWgmmaDot(rw, loc, target, op, adaptor.getA(),
                             adaptor.getB(), adaptor.getC(), *warps, slots[0],
                             slots[1])});
      return success();
    }
    int64_t bBase;
    dotSharedBytes(op, bBase);
    LinearLayout dLayout = layoutOf(op.getD().getType());
    ValueRange c = adaptor.getC();
    bool mma = target.hasMma16816() && (aElt.isF16() || aElt.isBF16()) &&
               aElt == bElt && accElt.isF32() && isMmaLayout(dLayout, M, N);
    if (!mma)
      slots[0] = slots[1] = Value();
    // Where each operand sits in shared memory for ldmatrix: its pipeline
    // slot, or (mma.sync operands in registers) the same swizzled layout in
    // the scratch, written in vectors without bank conflicts.
    LinearLayout slotLayout[2];
    bool staged[2] = {false, false};
    for (int i = 0; i < 2; ++i) {
      if (slots[i]) {
        slotLayout[i] = inPlace[i].getBuffer().getType().getSlotLayout();
        continue;
      }
      auto enc = mma ? tilegpu::dotOperandSharedEncoding(op, i) : std::nullopt;
      if (!enc)
        continue;
      int32_t rows = i == 0 ? M : K, cols = i == 0 ? K : N;
      int32_t bytes = storageBytes(i == 0 ? aElt : bElt);
      slotLayout[i] =
          enc->order == tilegpu::SharedOrder::KMajor
              ? gpu::wgmmaOperandLayout(rows, cols, bytes, enc->swizzle)
              : gpu::wgmmaMNMajorOperandLayout(rows, cols, bytes, enc->swizzle);
      staged[i] = true;
    }

    // A in the accumulator layout of a dot whose warps all split M (the
    // probabilities of attention, from the first dot): its fragments are
    // the thread's own registers, paired (the m16n8k16 A fragment of a
    // K step is the accumulators of two 16x8 tiles side by side).
    bool aInRegisters = false;
    if (mma && !slots[0] && K % 16 == 0) {
      int32_t warps = dLayout.inSize(gpu::kWarp);
      aInRegisters =
          dLayout == gpu::mmaAccumulatorLayout({M, N}, {warps, 1}) &&
          layoutOf(aTy) == gpu::mmaAccumulatorLayout({M, K}, {warps, 1});
      if (aInRegisters)
        staged[0] = false;
    }
    if ((!slots[0] && !aInRegisters) || !slots[1]) {
      target.barrier(rw, loc);
      if (staged[0])
        writeOperandToShared(rw, loc, target, layoutOf(aTy), slotLayout[0],
                             adaptor.getA(), 0);
      else if (!slots[0] && !aInRegisters)
        writeTensorToShared(rw, loc, target, layoutOf(aTy), {M, K},
                            adaptor.getA(), 0);
      if (staged[1])
        writeOperandToShared(rw, loc, target, layoutOf(bTy), slotLayout[1],
                             adaptor.getB(), bBase);
      else if (!slots[1])
        writeTensorToShared(rw, loc, target, layoutOf(bTy), {K, N},
                            adaptor.getB(), bBase, /*transposed=*/true);
      target.barrier(rw, loc);
      for (int i = 0; i < 2; ++i)
        if (staged[i])
          slots[i] = sharedAddress(rw, loc, target.sharedAddressSpace(),
                                   i32Const(rw, loc, i == 0 ? 0 : bBase));
    }
    ThreadIds ids = threadIds(rw, loc, target);

    SmallVector<Value> d(c.begin(), c.end());
    if (mma) {
      // Lane roles of the m16n8k16 fragments: groupID and threadID_in_group.
      Value g = rw.create<arith::ShRUIOp>(loc, ids.lane, i32Const(rw, loc, 2));
      Value t2 = rw.create<arith::ShLIOp>(
          loc, rw.create<arith::AndIOp>(loc, ids.lane, i32Const(rw, loc, 3)),
          i32Const(rw, loc, 1));
      auto coords = elementCoords(rw, loc, dLayout, ids);
      auto i32 = rw.getI32Type();
      // A pair of 16-bit elements along K at (row, k) as one i32; the
      // operands are K-contiguous in shared memory (A row-major, B
      // column-major).
      auto pair = [&](Value rowOrCol, int64_t base, Value kOff) {
        Value idx = rw.create<arith::AddIOp>(
            loc, rw.create<arith::MulIOp>(loc, rowOrCol, i32Const(rw, loc, K)),
            kOff);
        Value pairIdx = rw.create<arith::ShRUIOp>(loc, idx, i32Const(rw, loc, 1));
        return loadShared(rw, loc, target.sharedAddressSpace(), i32, base,
                          pairIdx);
      };
      // A's registers by the element they hold in thread 0 of warp 0 (the
      // other threads hold theirs at the same registers); two consecutive
      // K elements packed into the i32 an MMA operand register is.
      std::map<std::pair<int32_t, int32_t>, int32_t> aRegister;
      if (aInRegisters) {
        LinearLayout aLayout = layoutOf(aTy);
        for (int32_t r = 0; r < aLayout.inSize(gpu::kRegister); ++r) {
          std::vector<int32_t> rc = aLayout.apply({{gpu::kRegister, r}});
          aRegister.try_emplace({rc[0], rc[1]}, r);
        }
      }
      ValueRange aValues = adaptor.getA();
      auto aPair = [&](int32_t row, int32_t k) -> Value {
        auto pairTy = VectorType::get({2}, aElt);
        Value v = rw.create<LLVM::PoisonOp>(loc, pairTy);
        for (int32_t j = 0; j < 2; ++j)
          v = rw.create<LLVM::InsertElementOp>(
              loc, v, aValues[aRegister.at({row, k + j})], i32Const(rw, loc, j));
        return rw.create<LLVM::BitcastOp>(loc, rw.getI32Type(), v);
      };
      // K steps outermost: a step's fragments are loaded once per row (A)
      // or column (B) of tiles and are dead after it, which keeps the
      // registers live at once to the accumulators plus one step's operands.
      struct Tile {
        int index;
        Value row, row8, col;
        std::vector<int32_t> origin;
      };
      SmallVector<Tile> tiles;
      for (int tile = 0; tile * 4 < int(d.size()); ++tile) {
        if (isCopyRegister(dLayout, tile * 4))
          continue;
        // A's rows are C's (groupID); B's column is the tile's first column
        // plus groupID, where C's c0 sits 2 * threadID_in_group further.
        Value row = coords[tile * 4][0];
        Value col = rw.create<arith::AddIOp>(
            loc, rw.create<arith::XOrIOp>(loc, coords[tile * 4][1], t2), g);
        Value row8 = rw.create<arith::XOrIOp>(loc, row, i32Const(rw, loc, 8));
        tiles.push_back({tile, row, row8, col,
                         dLayout.apply({{gpu::kRegister, tile * 4}})});
      }
      // In place: ldmatrix from the slot's swizzled layout. A (M x K,
      // K-major): .x4, lane l gives row (l % 16) of the tile and K column
      // 8 (l / 16) of the step, the four matrices in fragment order a0..a7.
      // B (K x N, N-major): .trans, lane l gives row k = l % 16 of the step
      // at the tile's first column (.x2), or at 8 (l / 16) past it for two
      // tiles side by side (.x4): b0b1 and b2b3 of each tile.
      Value lane16 = rw.create<arith::AndIOp>(loc, ids.lane, i32Const(rw, loc, 15));
      Value laneHalf = rw.create<arith::ShLIOp>(
          loc, rw.create<arith::ShRUIOp>(loc, ids.lane, i32Const(rw, loc, 4)),
          i32Const(rw, loc, 3));
      LinearLayout inverse[2];
      Value laneOff[2];
      int32_t eltBytes = storageBytes(aElt);
      for (int i = 0; i < 2; ++i)
        if (slots[i]) {
          inverse[i] = slotLayout[i].invert();
          laneOff[i] = i == 0 ? slotOffset(rw, loc, inverse[0], Value(), laneHalf)
                              : slotOffset(rw, loc, inverse[1], lane16, Value());
        }
      auto constOffset = [&](int i, int32_t row, int32_t col) {
        std::string d0 = gpu::dimName(0), d1 = gpu::dimName(1);
        return inverse[i].apply({{d0, row}, {d1, col}})[0];
      };
      auto matrixAt = [&](int i, Value offset, int count, bool trans) {
        Value addr = rw.create<LLVM::GEPOp>(
            loc, slots[i].getType(), rw.getI8Type(), slots[i],
            ValueRange{rw.create<arith::MulIOp>(loc, offset,
                                                i32Const(rw, loc, eltBytes))});
        return target.loadMatrix(rw, loc, addr, count, trans);
      };
      // Per row (A) or column (B) of tiles: the lane's offset without the
      // K step, and whether B's next tile is this thread's too.
      std::map<int32_t, Value> aRowOff, bColOff;
      std::set<int32_t> bKeys;
      for (const Tile &t : tiles)
        bKeys.insert(t.origin[1]);
      for (const Tile &t : tiles) {
        if (slots[0] && !aRowOff.count(t.origin[0])) {
          Value first = rw.create<arith::AndIOp>(loc, t.row, i32Const(rw, loc, ~15));
          Value row = rw.create<arith::OrIOp>(loc, first, lane16);
          aRowOff[t.origin[0]] = rw.create<arith::XOrIOp>(
              loc, slotOffset(rw, loc, inverse[0], row, Value()), laneOff[0]);
        }
        if (slots[1] && !bColOff.count(t.origin[1])) {
          Value col = rw.create<arith::AndIOp>(loc, t.col, i32Const(rw, loc, ~7));
          int32_t c0 = t.origin[1];
          if ((c0 & 8) == 0 && bKeys.count(c0 ^ 8))
            col = rw.create<arith::OrIOp>(loc, col, laneHalf);
          bColOff[t.origin[1]] = rw.create<arith::XOrIOp>(
              loc, slotOffset(rw, loc, inverse[1], Value(), col), laneOff[1]);
        }
      }
      for (int kk = 0; kk < K / 16; ++kk) {
        Value k0 = rw.create<arith::AddIOp>(loc, t2, i32Const(rw, loc, kk * 16));
        Value k8 = rw.create<arith::AddIOp>(loc, k0, i32Const(rw, loc, 8));
        std::map<int32_t, SmallVector<Value>> aFrags, bFrags;
        for (const Tile &t : tiles) {
          auto &af = aFrags[t.origin[0]];
          if (af.empty() && slots[0])
            af = matrixAt(0,
                          rw.create<arith::XOrIOp>(
                              loc, aRowOff[t.origin[0]],
                              i32Const(rw, loc, constOffset(0, 0, kk * 16))),
                          4, false);
          else if (af.empty() && aInRegisters)
            af = {aPair(t.origin[0], kk * 16), aPair(t.origin[0] + 8, kk * 16),
                  aPair(t.origin[0], kk * 16 + 8),
                  aPair(t.origin[0] + 8, kk * 16 + 8)};
          else if (af.empty())
            af = {pair(t.row, 0, k0), pair(t.row8, 0, k0), pair(t.row, 0, k8),
                  pair(t.row8, 0, k8)};
          int32_t c0 = t.origin[1];
          auto &bf = bFrags[c0];
          if (bf.empty() && slots[1]) {
            Value off = rw.create<arith::XOrIOp>(
                loc, bColOff[c0], i32Const(rw, loc, constOffset(1, kk * 16, 0)));
            bool pairLow = (c0 & 8) == 0 && bKeys.count(c0 ^ 8);
            bool pairHigh = (c0 & 8) != 0 && bKeys.count(c0 ^ 8);
            if (pairHigh) {
              // Loaded with its lower neighbour.
              off = rw.create<arith::XOrIOp>(
                  loc, bColOff[c0 ^ 8], i32Const(rw, loc, constOffset(1, kk * 16, 0)));
              SmallVector<Value> m = matrixAt(1, off, 4, true);
              bFrags[c0 ^ 8] = {m[0], m[1]};
              bf = {m[2], m[3]};
            } else if (pairLow) {
              SmallVector<Value> m = matrixAt(1, off, 4, true);
              bf = {m[0], m[1]};
              bFrags[c0 ^ 8] = {m[2], m[3]};
            } else {
              bf = matrixAt(1, off, 2, true);
            }
          } else if (bf.empty()) {
            bf = {pair(t.col, bBase, k0), pair(t.col, bBase, k8)};
          }
          SmallVector<Value> acc(d.begin() + t.index * 4,
                                 d.begin() + t.index * 4 + 4);
          acc = target.mma16816(rw, loc, af, bf, acc, aElt.isBF16());
          for (int i = 0; i < 4; ++i)
            d[t.index * 4 + i] = acc[i];
        }
      }
      // Registers holding copies take their first copy's value.
      for (size_t r = 0; r < d.size(); ++r)
        if (isCopyRegister(dLayout, r))
          d[r] = d[r & ~dLayout.freeBits(gpu::kRegister)];
    } else {
      // One loop over K carries every accumulator element of the thread;
      // 16-bit float accumulators are carried in fp32 and rounded once at
      // the end, as the CPU backend does.
      Type sumElt = accElt;
      if (accElt.isF16() || accElt.isBF16()) {
        sumElt = rw.getF32Type();
        for (Value &v : d)
          v = rw.create<arith::ExtFOp>(loc, sumElt, v);
      }
      auto coords = elementCoords(rw, loc, dLayout, ids);
      Value lb = rw.create<arith::ConstantIndexOp>(loc, 0);
      Value ub = rw.create<arith::ConstantIndexOp>(loc, K);
      Value step = rw.create<arith::ConstantIndexOp>(loc, 1);
      auto loop = rw.create<scf::ForOp>(loc, lb, ub, step, d);
      OpBuilder lb2 = OpBuilder::atBlockBegin(loop.getBody());
      Value k = lb2.create<arith::IndexCastOp>(loc, lb2.getI32Type(),
                                               loop.getInductionVar());
      SmallVector<Value> next;
      for (size_t r = 0; r < d.size(); ++r) {
        Value aIdx = lb2.create<arith::AddIOp>(
            loc, lb2.create<arith::MulIOp>(loc, coords[r][0], i32Const(lb2, loc, K)), k);
        Value bIdx = lb2.create<arith::AddIOp>(
            loc, lb2.create<arith::MulIOp>(loc, coords[r][1], i32Const(lb2, loc, K)), k);
        unsigned space = target.sharedAddressSpace();
        Value av = loadShared(lb2, loc, space, aElt, 0, aIdx);
        Value bv = loadShared(lb2, loc, space, bElt, bBase, bIdx);
        av = convertElement(lb2, loc, av, sumElt);
        bv = convertElement(lb2, loc, bv, sumElt);
        Value acc = loop.getRegionIterArgs()[r];
        Value sum = isa<FloatType>(sumElt)
                        ? lb2.create<math::FmaOp>(loc, av, bv, acc).getResult()
                        : lb2.create<arith::AddIOp>(
                              loc, acc, lb2.create<arith::MulIOp>(loc, av, bv))
                              .getResult();
        next.push_back(sum);
      }
      lb2.create<scf::YieldOp>(loc, next);
      d.assign(loop.getResults().begin(), loop.getResults().end());
      if (sumElt != accElt)
        for (Value &v : d)
          v = rw.create<arith::TruncFOp>(loc, accElt, v);
    }
    rw.replaceOpWithMultiple(op, {d});
    return success();
  }

  /// Whether `layout` is the mma.sync accumulator layout of an M x N block
  /// for some split of its warps (what convert-tile-to-tilegpu chose).
  static bool isMmaLayout(const LinearLayout &layout, int32_t M, int32_t N) {
    if (M % 16 || N % 8)
      return false;
    int32_t warps = layout.inSize(gpu::kWarp);
    for (int32_t wm = 1; wm <= warps; wm *= 2)
      if (layout == gpu::mmaAccumulatorLayout({M, N}, {wm, warps / wm}))
        return true;
    return false;
  }
};

//===----------------------------------------------------------------------===//
// Shared-memory buffers and async copies
//===----------------------------------------------------------------------===//

/// The widest run of registers (at most 16 bytes) a thread moves to or from
/// consecutive offsets of a slot through `toOffset` (register, lane, warp ->
/// offset), starting at a multiple of its width in every thread.
int32_t slotVectorWidth(const LinearLayout &toOffset, int32_t size,
                        int32_t limit) {
  int32_t vec = std::min<int32_t>(
      {toOffset.contiguousRun(gpu::kRegister, gpu::kOffset), 16 / size, limit});
  for (const char *in : {gpu::kLane, gpu::kWarp})
    if (int i = toOffset.inIndex(in); i >= 0)
      for (const auto &basis : toOffset.ins()[i].bases)
        while (vec > 1 && basis[0] % vec)
          vec /= 2;
  return std::max(vec, 1);
}

struct LocalAllocLowering : TileGPUPattern<tilegpu::LocalAllocOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::LocalAllocOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    auto offset = op->getAttrOfType<IntegerAttr>("tilegpu.offset");
    if (!offset)
      return rw.notifyMatchFailure(op, "no offset assigned");
    rw.replaceOp(op, sharedAddress(rw, op.getLoc(), target.sharedAddressSpace(),
                                   i32Const(rw, op.getLoc(), offset.getInt())));
    return success();
  }
};

/// Each thread copies the elements it owns, in runs of consecutive
/// registers that land on consecutive offsets of the slot (the swizzle
/// moves 16-byte chunks whole): cp.async of 4, 8 or 16 bytes, zero-filled
/// where the mask is false (source size 0). Runs under 4 bytes go through
/// registers (a load and a shared store).
struct AsyncCopyLowering : TileGPUPattern<tilegpu::AsyncCopyOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::AsyncCopyOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto type = op.getBuffer().getType();
    LinearLayout layout = layoutOf(op.getPtr().getType());
    LinearLayout toOffset = layout.invertAndCompose(type.getSlotLayout());
    int32_t size = type.getElementBytes();
    int32_t vec = slotVectorWidth(toOffset, size, accessWidth(op, op.getPtr()));
    if (!target.hasAsyncCopy())
      vec = std::min(vec, 4 / size); // the copy goes through registers
    ValueRange ptrs = adaptor.getPtr();
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    Value slot = slotAddress(rw, loc, adaptor.getBuffer()[0],
                             adaptor.getSlot()[0], type);
    ThreadIds ids = threadIds(rw, loc, target);
    SmallVector<Value> hw{i32Const(rw, loc, 0)};
    hw = hardwarePart(rw, loc, toOffset, gpu::kLane, ids.lane, hw);
    hw = hardwarePart(rw, loc, toOffset, gpu::kWarp, ids.warp, hw);
    Value own = isOwner(rw, loc, layout, ids);
    Type elt = type.getElementType();
    for (int32_t r = 0; r < int32_t(ptrs.size()); r += vec) {
      if (isCopyRegister(layout, r))
        continue;
      int32_t c = toOffset.apply({{gpu::kRegister, r}})[0];
      Value off = rw.create<arith::XOrIOp>(loc, hw[0], i32Const(rw, loc, c));
      Value dst = rw.create<LLVM::GEPOp>(
          loc, slot.getType(), rw.getI8Type(), slot,
          ValueRange{rw.create<arith::MulIOp>(loc, off, i32Const(rw, loc, size))});
      int32_t bytes = vec * size;
      Value mask = masks.empty() ? Value() : masks[r];
      ifThen(rw, loc, own, [&](OpBuilder &b) {
        if (bytes >= 4) {
          Value srcBytes;
          if (mask)
            srcBytes = b.create<arith::SelectOp>(loc, mask,
                                                 i32Const(b, loc, bytes),
                                                 i32Const(b, loc, 0));
          target.asyncCopy(b, loc, dst, ptrs[r], bytes, srcBytes);
          return;
        }
        for (int32_t j = 0; j < vec; ++j) {
          Value src = ptrs[r + j];
          Value v;
          if (mask) {
            auto ifOp = b.create<scf::IfOp>(loc, TypeRange{elt}, masks[r + j],
                                            /*withElseRegion=*/true);
            OpBuilder tb = ifOp.getThenBodyBuilder();
            tb.create<scf::YieldOp>(
                loc, ValueRange{tb.create<LLVM::LoadOp>(loc, elt, src, size)});
            OpBuilder eb = ifOp.getElseBodyBuilder();
            eb.create<scf::YieldOp>(
                loc, ValueRange{eb.create<LLVM::ZeroOp>(loc, elt)});
            v = ifOp.getResult(0);
          } else {
            v = b.create<LLVM::LoadOp>(loc, elt, src, size);
          }
          Value at = b.create<LLVM::GEPOp>(loc, dst.getType(), b.getI8Type(),
                                           dst, ValueRange{i32Const(b, loc, j * size)});
          b.create<LLVM::StoreOp>(loc, v, at, size);
        }
      });
    }
    rw.eraseOp(op);
    return success();
  }
};

struct AsyncCommitLowering : TileGPUPattern<tilegpu::AsyncCommitOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::AsyncCommitOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    if (target.hasAsyncCopy())
      target.asyncCommit(rw, op.getLoc());
    rw.eraseOp(op);
    return success();
  }
};

/// Registers into a slot, in vectors where the value's layout keeps runs of
/// consecutive offsets together; fenced for wgmma's reads when asked.
struct LocalStoreLowering : TileGPUPattern<tilegpu::LocalStoreOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::LocalStoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto type = op.getBuffer().getType();
    Value slot = slotAddress(rw, loc, adaptor.getBuffer()[0],
                             adaptor.getSlot()[0], type);
    writeOperandToShared(rw, loc, target, layoutOf(op.getValue().getType()),
                         type.getSlotLayout(), adaptor.getValue(), 0, slot);
    if (op.getAsyncProxy())
      target.fenceSharedForWarpgroupMma(rw, loc);
    rw.eraseOp(op);
    return success();
  }
};

struct AsyncWaitLowering : TileGPUPattern<tilegpu::AsyncWaitOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::AsyncWaitOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    if (target.hasAsyncCopy())
      target.asyncWait(rw, op.getLoc(), op.getPending());
    // The copies landed through the generic proxy; wgmma reads through the
    // async one.
    if (op.getAsyncProxy())
      target.fenceSharedForWarpgroupMma(rw, op.getLoc());
    rw.eraseOp(op);
    return success();
  }
};

/// A slot into registers, vectorized where the result layout keeps runs of
/// consecutive offsets together; nothing where every user is a dot that
/// reads the slot in place.
struct LocalLoadLowering : TileGPUPattern<tilegpu::LocalLoadOp> {
  using TileGPUPattern::TileGPUPattern;

  static bool onlyReadInPlace(tilegpu::LocalLoadOp op) {
    SmallVector<Value> work{op.getResult()};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (auto cvt = dyn_cast<tilegpu::ConvertLayoutOp>(user)) {
          work.push_back(cvt.getResult());
          continue;
        }
        auto dot = dyn_cast<tile::DotOp>(user);
        if (!dot || use.getOperandNumber() > 1 ||
            inPlaceOperand(dot, use.getOperandNumber()) != op)
          return false;
      }
    }
    return true;
  }

  LogicalResult
  matchAndRewrite(tilegpu::LocalLoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto type = op.getBuffer().getType();
    LinearLayout layout = layoutOf(op.getType());
    Type elt = type.getElementType();
    int n = layout.inSize(gpu::kRegister);
    SmallVector<Value> values;
    if (onlyReadInPlace(op) && target.hasMma16816()) {
      Value poison = rw.create<LLVM::PoisonOp>(loc, elt);
      rw.replaceOpWithMultiple(op, {SmallVector<Value>(n, poison)});
      return success();
    }
    LinearLayout toOffset = layout.invertAndCompose(type.getSlotLayout());
    int32_t size = type.getElementBytes();
    int32_t vec = slotVectorWidth(toOffset, size, 16);
    Value slot = slotAddress(rw, loc, adaptor.getBuffer()[0],
                             adaptor.getSlot()[0], type);
    ThreadIds ids = threadIds(rw, loc, target);
    SmallVector<Value> hw{i32Const(rw, loc, 0)};
    hw = hardwarePart(rw, loc, toOffset, gpu::kLane, ids.lane, hw);
    hw = hardwarePart(rw, loc, toOffset, gpu::kWarp, ids.warp, hw);
    auto vecTy = VectorType::get({vec}, elt);
    for (int32_t r = 0; r < n; r += vec) {
      int32_t c = toOffset.apply({{gpu::kRegister, r}})[0];
      Value off = rw.create<arith::XOrIOp>(loc, hw[0], i32Const(rw, loc, c));
      Value addr = rw.create<LLVM::GEPOp>(
          loc, slot.getType(), rw.getI8Type(), slot,
          ValueRange{rw.create<arith::MulIOp>(loc, off, i32Const(rw, loc, size))});
      if (vec == 1) {
        values.push_back(rw.create<LLVM::LoadOp>(loc, elt, addr, size));
        continue;
      }
      Value v = rw.create<LLVM::LoadOp>(loc, vecTy, addr, vec * size);
      for (int32_t j = 0; j < vec; ++j)
        values.push_back(rw.create<LLVM::ExtractElementOp>(
            loc, v, i32Const(rw, loc, j)));
    }
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

/// The offset `toOffset` (register, lane, warp -> offset) gives register
/// `reg` of lane `lane` in warp 0.
int32_t offsetOf(const LinearLayout &toOffset, int32_t reg, int32_t lane) {
  int32_t off = 0;
  for (auto [in, index] : {std::pair<const char *, int32_t>{gpu::kRegister, reg},
                           {gpu::kLane, lane}})
    if (int i = toOffset.inIndex(in); i >= 0) {
      const auto &bases = toOffset.ins()[i].bases;
      for (size_t bit = 0; bit < bases.size(); ++bit)
        if (index >> bit & 1)
          off ^= bases[bit][0];
    }
  return off;
}

/// Bank-conflict wavefronts of one warp's shared-memory access of `bytes`
/// per lane at byte addresses `addrs` (one per lane): the distinct 4-byte
/// words of the busiest bank, per phase (8-byte accesses go in two phases
/// of 16 lanes, 16-byte ones in four of 8).
int64_t sharedWavefronts(ArrayRef<int64_t> addrs, int32_t bytes) {
  int32_t perPhase = bytes <= 4 ? 32 : 128 / bytes;
  int64_t total = 0;
  for (size_t first = 0; first < addrs.size(); first += perPhase) {
    std::array<llvm::SmallVector<int64_t, 4>, 32> words;
    size_t worst = 1;
    for (size_t i = first; i < std::min(addrs.size(), first + perPhase); ++i)
      for (int64_t w = addrs[i] / 4; w <= (addrs[i] + bytes - 1) / 4; ++w) {
        auto &bank = words[w % 32];
        if (!llvm::is_contained(bank, w))
          bank.push_back(w);
        worst = std::max(worst, bank.size());
      }
    total += int64_t(worst);
  }
  return total;
}

/// What moving a tensor held in `regs` to (`store`) or from shared memory
/// laid out as `shared` costs one warp: its instructions (vectors as wide as
/// the layouts allow, up to 16 bytes) plus their wavefronts.
int64_t sharedAccessCost(const LinearLayout &regs, const LinearLayout &shared,
                         int32_t bytes, bool store) {
  LinearLayout toOffset = regs.invertAndCompose(shared);
  int32_t vec = slotVectorWidth(toOffset, bytes, 16 / bytes);
  int32_t lanes = std::min(32, regs.inSize(gpu::kLane));
  int64_t cost = 0;
  SmallVector<int64_t> addrs(lanes);
  for (int32_t r = 0; r < regs.inSize(gpu::kRegister); r += vec) {
    if (store && isCopyRegister(regs, r))
      continue;
    for (int32_t lane = 0; lane < lanes; ++lane)
      addrs[lane] = int64_t(offsetOf(toOffset, r, lane)) * bytes;
    cost += 1 + sharedWavefronts(addrs, vec * bytes);
  }
  return cost;
}

/// The shared-memory layout (offset -> tensor coordinates) through which a
/// conversion from `src` to `dst` moves a 1- or 2-D tensor of `bytes`
/// elements: rows of the last dimension with the XOR swizzle of chunks of
/// up to 128 bytes (or none) that costs the writes and reads fewest
/// instructions and bank conflicts. Nothing for other ranks.
std::optional<LinearLayout> conversionSharedLayout(const LinearLayout &src,
                                                   const LinearLayout &dst,
                                                   ArrayRef<int32_t> shape,
                                                   int32_t bytes) {
  if (shape.size() == 1)
    return LinearLayout::identity1D(shape[0], gpu::kOffset, gpu::dimName(0));
  if (shape.size() != 2)
    return std::nullopt;
  int32_t rows = shape[0], cols = shape[1];
  auto cost = [&](const LinearLayout &shared) {
    return sharedAccessCost(src, shared, bytes, /*store=*/true) +
           sharedAccessCost(dst, shared, bytes, /*store=*/false);
  };
  LinearLayout best = gpu::swizzledSharedLayout(rows, cols, 1, 1, 1);
  int64_t bestCost = cost(best);
  // Rows shorter than the 128 bytes of the banks share a phase.
  int32_t perPhase = std::max<int32_t>(1, 128 / (cols * bytes));
  // Chunks wider than an access XOR whole groups of accesses: rows of 256
  // bytes whose 8-byte pieces a phase writes stay apart.
  for (int32_t vec = 1; vec * bytes <= 128 && vec < cols; vec *= 2)
    for (int32_t maxPhase = 2;
         vec * maxPhase <= cols && perPhase * maxPhase <= rows; maxPhase *= 2) {
      LinearLayout shared =
          gpu::swizzledSharedLayout(rows, cols, vec, perPhase, maxPhase);
      int64_t c = cost(shared);
      if (c < bestCost) {
        bestCost = c;
        best = shared;
      }
    }
  return best;
}

/// Reads a tensor in `layout` from shared memory laid out as `shared` (from
/// byte `base`), in vectors as wide as both allow.
SmallVector<Value> readOperandFromShared(OpBuilder &b, Location loc,
                                         const gpu::GPUTargetInfo &target,
                                         const LinearLayout &layout,
                                         const LinearLayout &shared, Type elt,
                                         int64_t base) {
  LinearLayout toOffset = layout.invertAndCompose(shared);
  int32_t size = storageBytes(elt);
  int32_t vec = slotVectorWidth(toOffset, size, 16 / size);
  ThreadIds ids = threadIds(b, loc, target);
  SmallVector<Value> hw{i32Const(b, loc, 0)};
  hw = hardwarePart(b, loc, toOffset, gpu::kLane, ids.lane, hw);
  hw = hardwarePart(b, loc, toOffset, gpu::kWarp, ids.warp, hw);
  auto vecTy = VectorType::get({vec}, elt);
  SmallVector<Value> values;
  for (int32_t r = 0; r < layout.inSize(gpu::kRegister); r += vec) {
    int32_t c = toOffset.apply({{gpu::kRegister, r}})[0];
    Value off = b.create<arith::XOrIOp>(loc, hw[0], i32Const(b, loc, c));
    Value addr =
        sharedElement(b, loc, target.sharedAddressSpace(), base, off, size);
    if (vec == 1) {
      values.push_back(b.create<LLVM::LoadOp>(loc, elt, addr, size));
      continue;
    }
    Value v = b.create<LLVM::LoadOp>(loc, vecTy, addr, vec * size);
    for (int32_t j = 0; j < vec; ++j)
      values.push_back(
          b.create<LLVM::ExtractElementOp>(loc, v, i32Const(b, loc, j)));
  }
  return values;
}

struct ConvertLayoutLowering : TileGPUPattern<tilegpu::ConvertLayoutOp> {
  using TileGPUPattern::TileGPUPattern;
  LogicalResult
  matchAndRewrite(tilegpu::ConvertLayoutOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    LinearLayout src = layoutOf(op.getSrc().getType());
    LinearLayout dst = layoutOf(op.getType());
    ValueRange in = adaptor.getSrc();
    Type elt = getTypeConverter()->convertType(
        getElementTypeOrSelf(op.getType()));
    // Each destination register found in the same thread's source
    // registers: a renaming (dst's lanes and warps hold what src's do).
    if (src.sublayout({gpu::kLane, gpu::kWarp}) ==
        dst.sublayout({gpu::kLane, gpu::kWarp})) {
      SmallVector<Value> values;
      bool ok = true;
      for (int r = 0; r < dst.inSize(gpu::kRegister) && ok; ++r) {
        std::vector<int32_t> want = dst.apply({{gpu::kRegister, r}});
        int found = -1;
        for (int s = 0; s < src.inSize(gpu::kRegister); ++s)
          if (src.apply({{gpu::kRegister, s}}) == want) {
            found = s;
            break;
          }
        if (found < 0)
          ok = false;
        else
          values.push_back(in[found]);
      }
      if (ok) {
        rw.replaceOpWithMultiple(op, {values});
        return success();
      }
    }
    std::vector<int32_t> shape = shapeOf(op.getType());
    // Plain numbers move through a swizzled buffer in vectors; bools and
    // pointers element by element, row-major.
    if (elt.isIntOrFloat() && elt.getIntOrFloatBitWidth() >= 8)
      if (auto shared = conversionSharedLayout(src, dst, shape,
                                               storageBytes(elt))) {
        target.barrier(rw, loc);
        writeOperandToShared(rw, loc, target, src, *shared, in, 0);
        target.barrier(rw, loc);
        rw.replaceOpWithMultiple(
            op, {readOperandFromShared(rw, loc, target, dst, *shared, elt, 0)});
        return success();
      }
    target.barrier(rw, loc);
    writeTensorToShared(rw, loc, target, src, shape, in, 0);
    target.barrier(rw, loc);
    SmallVector<Value> values =
        readTensorFromShared(rw, loc, target, dst, shape, elt, 0);
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

struct ReduceLowering : TileGPUPattern<tile::ReduceOp> {
  using TileGPUPattern::TileGPUPattern;

  /// Applies the combine region to (acc..., x...).
  SmallVector<Value> combine(OpBuilder &b, tile::ReduceOp op,
                             ArrayRef<Value> acc, ArrayRef<Value> x) const {
    Block &body = op.getCombineOp().front();
    IRMapping map;
    for (size_t i = 0; i < acc.size(); ++i) {
      map.map(body.getArgument(i), acc[i]);
      map.map(body.getArgument(acc.size() + i), x[i]);
    }
    for (Operation &inner : body.without_terminator())
      b.clone(inner, map);
    SmallVector<Value> out;
    for (Value v : body.getTerminator()->getOperands())
      out.push_back(map.lookupOrDefault(v));
    return out;
  }

  LogicalResult
  matchAndRewrite(tile::ReduceOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    unsigned axis = op.getAxis();
    size_t n = op.getSrcs().size();
    LinearLayout layout = layoutOf(op.getSrcs()[0].getType());
    LinearLayout out = gpu::reduceLayout(layout, axis);
    // 1. Registers of one thread along the axis.
    uint32_t axisRegs = 0;
    const auto &regBases = layout.ins()[layout.inIndex(gpu::kRegister)].bases;
    for (size_t bit = 0; bit < regBases.size(); ++bit)
      if (regBases[bit][axis] != 0)
        axisRegs |= 1u << bit;
    int numRegs = layout.inSize(gpu::kRegister);
    std::map<int, SmallVector<Value>> groups; // output register -> values
    for (int r = 0; r < numRegs; ++r) {
      int o = 0, k = 0;
      for (size_t bit = 0; bit < regBases.size(); ++bit)
        if (!(axisRegs >> bit & 1))
          o |= (r >> bit & 1) << k++;
      SmallVector<Value> x;
      for (size_t s = 0; s < n; ++s)
        x.push_back(adaptor.getSrcs()[s][r]);
      auto it = groups.find(o);
      if (it == groups.end())
        groups[o] = x;
      else
        it->second = combine(rw, op, it->second, x);
    }
    // 2. Lanes along the axis: butterfly shuffles.
    const auto &laneBases = layout.ins()[layout.inIndex(gpu::kLane)].bases;
    for (size_t bit = 0; bit < laneBases.size(); ++bit) {
      if (laneBases[bit][axis] == 0)
        continue;
      for (auto &[o, acc] : groups) {
        SmallVector<Value> other;
        for (Value v : acc)
          other.push_back(shuffleXor(rw, loc, target, v, 1 << bit));
        acc = combine(rw, op, acc, other);
      }
    }
    // 3. Warps along the axis: partials through shared memory.
    int wi = layout.inIndex(gpu::kWarp);
    uint32_t axisWarps = 0;
    if (wi >= 0)
      for (size_t bit = 0; bit < layout.ins()[wi].bases.size(); ++bit)
        if (layout.ins()[wi].bases[bit][axis] != 0)
          axisWarps |= 1u << bit;
    if (axisWarps) {
      int numAxisWarps = 1 << __builtin_popcount(axisWarps);
      ThreadIds ids = threadIds(rw, loc, target);
      // The slot of this thread's partial: its warp's index along the axis.
      Value slot = i32Const(rw, loc, 0);
      for (int bit = 0, k = 0; bit < 32; ++bit)
        if (axisWarps >> bit & 1) {
          Value set = rw.create<arith::AndIOp>(
              loc, rw.create<arith::ShRUIOp>(loc, ids.warp, i32Const(rw, loc, bit)),
              i32Const(rw, loc, 1));
          slot = rw.create<arith::OrIOp>(
              loc, slot,
              rw.create<arith::ShLIOp>(loc, set, i32Const(rw, loc, k++)));
        }
      std::vector<int32_t> outShape;
      for (auto &o : out.outs())
        outShape.push_back(o.size);
      int64_t outNumel = 1;
      for (int32_t s : outShape)
        outNumel *= s;
      auto coords = elementCoords(rw, loc, out, ids);
      // Partials are written by the first lane and warp of each copy group
      // along the non-axis dimensions: owners of the output layout, each
      // warp along the axis with its own partial.
      Value laneOwn = isOwner(rw, loc, out, ids, axisWarps);
      // Each source gets its own region: [outNumel][numAxisWarps] elements.
      SmallVector<int64_t> base(n);
      int64_t offset = 0;
      for (size_t s = 0; s < n; ++s) {
        base[s] = offset;
        unsigned bytes = storageBytes(getTypeConverter()->convertType(
            getElementTypeOrSelf(op.getSrcs()[s].getType())));
        offset += (outNumel * numAxisWarps * bytes + 15) / 16 * 16;
      }
      target.barrier(rw, loc);
      for (auto &[o, acc] : groups) {
        Value flat = outShape.empty() ? i32Const(rw, loc, 0)
                                      : flatIndex(rw, loc, coords[o], outShape);
        Value index = rw.create<arith::AddIOp>(
            loc, rw.create<arith::MulIOp>(loc, flat, i32Const(rw, loc, numAxisWarps)),
            slot);
        for (size_t s = 0; s < n; ++s) {
          Value v = acc[s];
          ifThen(rw, loc, laneOwn, [&](OpBuilder &ib) {
            storeShared(ib, loc, target.sharedAddressSpace(), v, base[s], index);
          });
        }
      }
      target.barrier(rw, loc);
      for (auto &[o, acc] : groups) {
        Value flat = outShape.empty() ? i32Const(rw, loc, 0)
                                      : flatIndex(rw, loc, coords[o], outShape);
        SmallVector<Value> total;
        for (int w = 0; w < numAxisWarps; ++w) {
          Value index = rw.create<arith::AddIOp>(
              loc,
              rw.create<arith::MulIOp>(loc, flat, i32Const(rw, loc, numAxisWarps)),
              i32Const(rw, loc, w));
          SmallVector<Value> part;
          for (size_t s = 0; s < n; ++s)
            part.push_back(loadShared(rw, loc, target.sharedAddressSpace(),
                                      acc[s].getType(), base[s], index));
          total = w == 0 ? part : combine(rw, op, total, part);
        }
        acc = total;
      }
    }
    // Results: one value per output register.
    SmallVector<SmallVector<Value>> results(n);
    for (auto &[o, acc] : groups)
      for (size_t s = 0; s < n; ++s)
        results[s].push_back(acc[s]);
    SmallVector<SmallVector<Value>> asRanges(results.begin(), results.end());
    rw.replaceOpWithMultiple(op, asRanges);
    return success();
  }
};

/// arith.constant of a tensor: splats become one constant per register.
struct ConstantLowering : public OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rw) const override {
    auto tensor = dyn_cast<RankedTensorType>(op.getType());
    if (!tensor)
      return failure();
    auto dense = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!dense)
      return op.emitError("GPU backends take only splat tensor constants");
    Value scalar = rw.create<arith::ConstantOp>(
        op.getLoc(), cast<TypedAttr>(dense.getSplatValue<Attribute>()));
    int n = layoutOf(tensor).inSize(gpu::kRegister);
    rw.replaceOpWithMultiple(op, {SmallVector<Value>(n, scalar)});
    return success();
  }
};

/// Element-wise arith and math ops on tensors: the op once per register.
struct ElementwiseLowering : public ConversionPattern {
  ElementwiseLowering(const TypeConverter &tc, MLIRContext *ctx)
      : ConversionPattern(tc, MatchAnyOpTypeTag(), 1, ctx) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<ValueRange> operands,
                  ConversionPatternRewriter &rw) const override {
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
        op->getNumRegions() != 0 || isa<arith::ConstantOp>(op))
      return failure();
    if (op->getNumResults() != 1 || !hasLayout(op->getResult(0).getType()))
      return failure();
    int n = layoutOf(op->getResult(0).getType()).inSize(gpu::kRegister);
    Type elt = getTypeConverter()->convertType(
        getElementTypeOrSelf(op->getResult(0).getType()));
    SmallVector<Value> values;
    // fp32 rounded to fp16/bf16 two registers at a time: one instruction
    // (cvt.rn.f16x2.f32) per pair, already packed as MMA operands and 4-byte
    // stores take them.
    if (auto trunc = dyn_cast<arith::TruncFOp>(op);
        trunc && n % 2 == 0 && operands[0].size() == size_t(n) &&
        operands[0][0].getType().isF32() && (elt.isF16() || elt.isBF16())) {
      Location loc = op->getLoc();
      auto from = VectorType::get({2}, operands[0][0].getType());
      auto to = VectorType::get({2}, elt);
      for (int i = 0; i < n; i += 2) {
        Value v = rw.create<LLVM::PoisonOp>(loc, from);
        for (int j = 0; j < 2; ++j)
          v = rw.create<LLVM::InsertElementOp>(loc, v, operands[0][i + j],
                                               i32Const(rw, loc, j));
        OperationState state(loc, op->getName());
        state.addOperands(v);
        state.addTypes(to);
        state.addAttributes(op->getAttrs());
        Value t = rw.create(state)->getResult(0);
        for (int j = 0; j < 2; ++j)
          values.push_back(rw.create<LLVM::ExtractElementOp>(
              loc, t, i32Const(rw, loc, j)));
      }
      rw.replaceOpWithMultiple(op, {values});
      return success();
    }
    for (int i = 0; i < n; ++i) {
      OperationState state(op->getLoc(), op->getName());
      for (ValueRange v : operands)
        state.addOperands(v.size() == 1 ? v[0] : v[i]);
      state.addTypes(elt);
      state.addAttributes(op->getAttrs());
      values.push_back(rw.create(state)->getResult(0));
    }
    rw.replaceOpWithMultiple(op, {values});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

/// Bytes of shared memory the conversions and reductions of `module` need
/// (each reuses the same scratch between barriers).
int64_t scratchBytes(ModuleOp module) {
  int64_t most = 0;
  module.walk([&](Operation *op) {
    if (auto cvt = dyn_cast<tilegpu::ConvertLayoutOp>(op)) {
      auto t = cvt.getType();
      most = std::max(most, t.getNumElements() *
                                int64_t(storageBytes(t.getElementType())));
    } else if (auto dot = dyn_cast<tile::DotOp>(op)) {
      int64_t bOffset;
      if (!inPlaceOperand(dot, 0) || !inPlaceOperand(dot, 1))
        most = std::max(most, dotSharedBytes(dot, bOffset));
    } else if (auto red = dyn_cast<tile::ReduceOp>(op)) {
      auto layout = tilegpu::getLayout(red.getSrcs()[0].getType());
      if (!layout)
        return;
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
      most = std::max(most, bytes);
    }
  });
  return most;
}

} // namespace

/// Float to an 8- or 16-bit integer goes through int64 and wraps, as
/// Triton's semantics (and the CPU backend) have it; PTX's cvt to a narrow
/// integer would saturate instead.
static void widenNarrowFloatToInt(ModuleOp module) {
  SmallVector<Operation *> casts;
  module.walk([&](Operation *op) {
    if (isa<arith::FPToSIOp, arith::FPToUIOp>(op) &&
        getElementTypeOrSelf(op->getResult(0).getType()).getIntOrFloatBitWidth() < 32)
      casts.push_back(op);
  });
  for (Operation *op : casts) {
    OpBuilder b(op);
    Type result = op->getResult(0).getType();
    Type wide = tile::getTypeWithShapeOf(b.getI64Type(), result);
    Value x = op->getOperand(0);
    Value w = isa<arith::FPToSIOp>(op)
                  ? b.create<arith::FPToSIOp>(op->getLoc(), wide, x).getResult()
                  : b.create<arith::FPToUIOp>(op->getLoc(), wide, x).getResult();
    op->getResult(0).replaceAllUsesWith(
        b.create<arith::TruncIOp>(op->getLoc(), result, w));
    op->erase();
  }
}

LogicalResult gpu::lowerTileGPUToLLVM(ModuleOp module,
                                      const GPUTargetInfo &target) {
  MLIRContext *ctx = module.getContext();
  widenNarrowFloatToInt(module);
  int64_t shared = scratchBytes(module);
  // Buffers live across loops: each gets its own slots after the scratch,
  // from multiples of 1024 bytes (where the swizzle patterns start over).
  bool buffers = false;
  module.walk([&](tilegpu::LocalAllocOp alloc) {
    shared = (shared + 1023) / 1024 * 1024;
    alloc->setAttr("tilegpu.offset",
                   IntegerAttr::get(IntegerType::get(ctx, 32), shared));
    auto type = alloc.getType();
    shared += type.getNumSlots() * type.getSlotStride();
    buffers = true;
  });
  {
    // Swizzled wgmma operands start at multiples of 1024 bytes of the
    // shared array (the swizzle reads address bits up to 9).
    bool wgmma = false;
    module.walk([&](tile::DotOp dot) { wgmma |= wgmmaWarps(dot).has_value(); });
    OpBuilder b(module.getBodyRegion());
    auto arrayTy = LLVM::LLVMArrayType::get(b.getI8Type(), 0);
    b.create<LLVM::GlobalOp>(module.getLoc(), arrayTy, /*isConstant=*/false,
                             LLVM::Linkage::External, kSharedName, Attribute(),
                             /*alignment=*/wgmma || buffers ? 1024 : 16,
                             target.sharedAddressSpace());
    module->setAttr("tilegpu.shared",
                    IntegerAttr::get(IntegerType::get(ctx, 32), shared));
  }

  // Phase 1: tensors become per-thread registers.
  TypeConverter tc;
  tc.addConversion([](Type t) { return t; });
  tc.addConversion([ctx](tile::PointerType) -> Type {
    return LLVM::LLVMPointerType::get(ctx, 1);
  });
  tc.addConversion([ctx, &target](tilegpu::SharedBufferType) -> Type {
    return LLVM::LLVMPointerType::get(ctx, target.sharedAddressSpace());
  });
  tc.addConversion([ctx](RankedTensorType t, SmallVectorImpl<Type> &out)
                       -> std::optional<LogicalResult> {
    auto layout = tilegpu::getLayout(t);
    if (!layout)
      return std::nullopt;
    Type elt = t.getElementType();
    if (isa<tile::PointerType>(elt))
      elt = LLVM::LLVMPointerType::get(ctx, 1);
    out.append(layout->inSize(gpu::kRegister), elt);
    return success();
  });
  auto cast = [](OpBuilder &b, TypeRange types, ValueRange inputs,
                 Location loc) -> SmallVector<Value> {
    return SmallVector<Value>(
        b.create<UnrealizedConversionCastOp>(loc, types, inputs).getResults());
  };
  tc.addSourceMaterialization([cast](OpBuilder &b, Type t, ValueRange inputs,
                                     Location loc) -> Value {
    return cast(b, t, inputs, loc)[0];
  });
  tc.addTargetMaterialization(
      [cast](OpBuilder &b, TypeRange types, ValueRange inputs, Location loc) {
        return cast(b, types, inputs, loc);
      });

  ConversionTarget convTarget(*ctx);
  convTarget.addIllegalDialect<tile::TileDialect, tilegpu::TileGPUDialect>();
  convTarget.markUnknownOpDynamicallyLegal(
      [&](Operation *op) { return tc.isLegal(op); });
  convTarget.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
    return tc.isSignatureLegal(f.getFunctionType());
  });
  convTarget.addLegalOp<ModuleOp, LLVM::GlobalOp>();
  RewritePatternSet patterns(ctx);
  patterns.add<ProgramIdLowering, NumProgramsLowering, MakeRangeLowering,
               SplatLowering, SameRegistersLowering<tile::BroadcastOp>,
               SameRegistersLowering<tile::ExpandDimsOp>,
               SameRegistersLowering<tile::TransOp>,
               SameRegistersLowering<tile::ReshapeOp>, AddPtrLowering,
               LoadLowering, StoreLowering, BarrierLowering, AssumeLowering, DotLowering,
               ConvertLayoutLowering, ReduceLowering, LocalAllocLowering,
               AsyncCopyLowering, AsyncCommitLowering, AsyncWaitLowering,
               LocalLoadLowering, LocalStoreLowering>(tc, ctx, target);
  patterns.add<ConstantLowering, ElementwiseLowering>(tc, ctx);
  scf::populateSCFStructuralTypeConversionsAndLegality(tc, patterns,
                                                       convTarget);
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, tc);
  if (failed(applyPartialConversion(module, convTarget, std::move(patterns))))
    return failure();

  // Phase 2: scalars, scf and func to the LLVM dialect.
  {
    RewritePatternSet scfPatterns(ctx);
    populateSCFToControlFlowConversionPatterns(scfPatterns);
    ConversionTarget t(*ctx);
    t.addIllegalDialect<scf::SCFDialect>();
    t.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, t, std::move(scfPatterns))))
      return failure();
  }
  for (auto func : module.getOps<func::FuncOp>()) {
    auto warps = func->getAttrOfType<IntegerAttr>("tilegpu.num_warps");
    // The tile-level attributes have served; LLVM gets the target's.
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      func.setArgAttrs(i, DictionaryAttr::get(ctx));
    for (NamedAttribute attr : llvm::to_vector(func->getDiscardableAttrs()))
      func->removeAttr(attr.getName());
    target.markKernel(func, 32 * (warps ? warps.getInt() : 4));
  }
  LowerToLLVMOptions options(ctx);
  LLVMTypeConverter llvmTc(ctx, options);
  llvmTc.addConversion([ctx](tile::PointerType) -> Type {
    return LLVM::LLVMPointerType::get(ctx, 1);
  });
  RewritePatternSet llvmPatterns(ctx);
  arith::populateArithToLLVMConversionPatterns(llvmTc, llvmPatterns);
  target.populateMathPatterns(llvmTc, llvmPatterns);
  populateMathToLLVMConversionPatterns(llvmTc, llvmPatterns);
  cf::populateControlFlowToLLVMConversionPatterns(llvmTc, llvmPatterns);
  populateFuncToLLVMConversionPatterns(llvmTc, llvmPatterns);
  LLVMConversionTarget llvmTarget(*ctx);
  llvmTarget.addLegalOp<ModuleOp>();
  llvmTarget.addLegalDialect("nvvm");
  if (failed(applyFullConversion(module, llvmTarget, std::move(llvmPatterns))))
    return failure();
  return success();
}
