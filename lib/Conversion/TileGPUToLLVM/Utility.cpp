//===- Utility.cpp - Per-thread helpers of the lowering -----------------------===//
//
// Values, coordinates and ownership of one thread's registers under a
// linear layout, memory types, warp shuffles.
//
//===----------------------------------------------------------------------===//
#include "Utility.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::gpu::lowering;
using gpu::LinearLayout;

namespace tessel::gpu::lowering {

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

ThreadIds threadIds(OpBuilder &b, Location loc,
                    const gpu::GPUTargetInfo &target) {
  Value tid = target.threadId(b, loc);
  int warp = tilegpu::threadsPerWarp(b.getInsertionBlock()->getParentOp());
  return {b.create<arith::AndIOp>(loc, tid, i32Const(b, loc, warp - 1)),
          b.create<arith::ShRUIOp>(loc, tid,
                                   i32Const(b, loc, llvm::Log2_32(warp)))};
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
              const ThreadIds &ids, uint32_t distinctWarps) {
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

Value toMemoryAccess(OpBuilder &b, Location loc, ValueRange values, Type mem) {
  if (values.size() == 1)
    return toMemory(b, loc, values[0]);
  Value v = b.create<LLVM::UndefOp>(
      loc, VectorType::get({int64_t(values.size())}, mem));
  for (auto [j, e] : llvm::enumerate(values))
    v = b.create<LLVM::InsertElementOp>(
        loc, v, toMemory(b, loc, e),
        b.create<LLVM::ConstantOp>(loc, b.getI32Type(), int64_t(j)));
  return v;
}

SmallVector<Value> fromMemoryAccess(OpBuilder &b, Location loc, Value v,
                                    int vec, Type elt) {
  if (vec == 1)
    return {fromMemory(b, loc, v, elt)};
  SmallVector<Value> out;
  for (int j = 0; j < vec; ++j)
    out.push_back(fromMemory(
        b, loc,
        b.create<LLVM::ExtractElementOp>(
            loc, v, b.create<LLVM::ConstantOp>(loc, b.getI32Type(), j)),
        elt));
  return out;
}

SmallVector<Value> inlineBlock(OpBuilder &b, Block &body, ValueRange args) {
  IRMapping map;
  map.map(body.getArguments(), args);
  for (Operation &inner : body.without_terminator())
    b.clone(inner, map);
  SmallVector<Value> out;
  for (Value v : body.getTerminator()->getOperands())
    out.push_back(map.lookupOrDefault(v));
  return out;
}

/// Runs `body` only where `cond` holds.
void ifThen(OpBuilder &b, Location loc, Value cond,
            llvm::function_ref<void(OpBuilder &)> body) {
  auto ifOp = b.create<scf::IfOp>(loc, cond, /*withElseRegion=*/false);
  OpBuilder inner = ifOp.getThenBodyBuilder();
  body(inner);
}

namespace {
/// `v`, of any register type, moved across lanes as i32 pieces by `move`.
Value moveAcrossLanes(OpBuilder &b, Location loc, Value v,
                      llvm::function_ref<Value(Value)> move) {
  Type t = v.getType();
  auto i32 = b.getI32Type();
  if (t.isF32())
    return b.create<arith::BitcastOp>(
        loc, t, move(b.create<arith::BitcastOp>(loc, i32, v)));
  if (t.isInteger(32))
    return move(v);
  if (isa<LLVM::LLVMPointerType>(t)) {
    Value i = b.create<LLVM::PtrToIntOp>(loc, b.getI64Type(), v);
    return b.create<LLVM::IntToPtrOp>(loc, t, moveAcrossLanes(b, loc, i, move));
  }
  unsigned bits = t.getIntOrFloatBitWidth();
  auto asInt = IntegerType::get(b.getContext(), bits);
  Value i = isa<FloatType>(t) ? b.create<arith::BitcastOp>(loc, asInt, v).getResult() : v;
  Value result;
  if (bits < 32) {
    Value wide = b.create<arith::ExtUIOp>(loc, i32, i);
    result = b.create<arith::TruncIOp>(loc, asInt, move(wide));
  } else { // 64 bits: two halves
    auto i64 = b.getI64Type();
    Value lo = b.create<arith::TruncIOp>(loc, i32, i);
    Value hi = b.create<arith::TruncIOp>(
        loc, i32,
        b.create<arith::ShRUIOp>(loc, i,
                                 b.create<arith::ConstantIntOp>(loc, i64, 32)));
    lo = move(lo);
    hi = move(hi);
    result = b.create<arith::OrIOp>(
        loc, b.create<arith::ExtUIOp>(loc, i64, lo),
        b.create<arith::ShLIOp>(loc, b.create<arith::ExtUIOp>(loc, i64, hi),
                                b.create<arith::ConstantIntOp>(loc, i64, 32)));
  }
  return isa<FloatType>(t) ? b.create<arith::BitcastOp>(loc, t, result).getResult()
                           : result;
}
} // namespace

Value shuffleXor(OpBuilder &b, Location loc, const gpu::GPUTargetInfo &target,
                 Value v, int laneMask) {
  return moveAcrossLanes(b, loc, v, [&](Value x) {
    return target.shuffleXor(b, loc, x, laneMask);
  });
}

Value shuffleIdx(OpBuilder &b, Location loc, const gpu::GPUTargetInfo &target,
                 Value v, Value srcLane) {
  return moveAcrossLanes(b, loc, v, [&](Value x) {
    return target.shuffleIdx(b, loc, x, srcLane);
  });
}

int accessWidth(Operation *op, Value ptr) {
  std::optional<LinearLayout> layout = tilegpu::getLayout(ptr.getType());
  return layout ? tilegpu::accessWidth(op, *layout) : 1;
}

std::vector<int32_t> shapeOf(Type t) {
  auto s = cast<RankedTensorType>(t).getShape();
  return std::vector<int32_t>(s.begin(), s.end());
}

} // namespace tessel::gpu::lowering
