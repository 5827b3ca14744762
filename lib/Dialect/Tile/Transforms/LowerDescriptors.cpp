//===- LowerDescriptors.cpp - Descriptor accesses as pointer accesses -----===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tessel::tile {
#define GEN_PASS_DEF_TILELOWERDESCRIPTORS
#include "tessel/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tessel::tile

using namespace mlir;
using namespace tessel::tile;

namespace {

/// A value as a tensor of `shape`: a scalar splat, a tensor with dimensions
/// of size 1 broadcast.
Value broadcastTo(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  Type element = type ? type.getElementType() : v.getType();
  auto target = RankedTensorType::get(shape, element);
  if (!type)
    return SplatOp::create(b, loc, target, v);
  if (type.getShape() == shape)
    return v;
  return BroadcastOp::create(b, loc, target, v);
}

/// The shape two operands broadcast to (equal ranks, or a scalar).
SmallVector<int64_t> commonShape(Value a, Value c) {
  auto ta = dyn_cast<RankedTensorType>(a.getType());
  auto tc = dyn_cast<RankedTensorType>(c.getType());
  if (!ta || !tc)
    return SmallVector<int64_t>((ta ? ta : tc).getShape());
  SmallVector<int64_t> shape;
  for (auto [x, y] : llvm::zip(ta.getShape(), tc.getShape()))
    shape.push_back(std::max(x, y));
  return shape;
}

/// A constant tensor of `shape` filled with the integer `value`.
Value intSplat(OpBuilder &b, Location loc, Type element,
               ArrayRef<int64_t> shape, int64_t value) {
  auto type = RankedTensorType::get(shape, element);
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getIntegerAttr(element, value)));
}

/// The pointers of a descriptor's block at its offsets and the mask of the
/// elements inside the array.
std::pair<Value, Value> blockPointers(OpBuilder &b, Location loc, Value base,
                                      ValueRange shape, ValueRange strides,
                                      ValueRange offsets,
                                      ArrayRef<int64_t> block) {
  int64_t rank = block.size();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value pointers = base, mask;
  for (int64_t d = 0; d < rank; ++d) {
    // index_d on its own axis: [block_d] as [1, .., block_d, .., 1].
    auto rangeType = RankedTensorType::get({block[d]}, i32);
    Value index = MakeRangeOp::create(b, loc, rangeType, 0, block[d]);
    index = arith::AddIOp::create(b, loc, index,
                                  broadcastTo(b, loc, offsets[d], {block[d]}));
    SmallVector<int64_t> axisShape{block[d]};
    for (int64_t axis = 0; axis < rank; ++axis) {
      if (axis == d)
        continue;
      axisShape.insert(axisShape.begin() + axis, 1);
      index = ExpandDimsOp::create(
          b, loc, RankedTensorType::get(axisShape, i32), index,
          b.getI32IntegerAttr(axis));
    }
    // (Operands are built one statement at a time: the IR's order is the
    // lit test's.)
    Value zero = intSplat(b, loc, i32, axisShape, 0);
    Value atLeastZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                              index, zero);
    Value size = broadcastTo(b, loc, shape[d], axisShape);
    Value belowSize = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                            index, size);
    Value inside = arith::AndIOp::create(b, loc, atLeastZero, belowSize);
    if (!mask) {
      mask = inside;
    } else {
      SmallVector<int64_t> both = commonShape(mask, inside);
      Value lhs = broadcastTo(b, loc, mask, both);
      Value rhs = broadcastTo(b, loc, inside, both);
      mask = arith::AndIOp::create(b, loc, lhs, rhs);
    }
    if (d + 1 < rank) {
      index = arith::ExtSIOp::create(
          b, loc, RankedTensorType::get(axisShape, i64), index);
      Value stride = broadcastTo(b, loc, strides[d], axisShape);
      index = arith::MulIOp::create(b, loc, index, stride);
    }
    SmallVector<int64_t> both = commonShape(pointers, index);
    Value ptrs = broadcastTo(b, loc, pointers, both);
    Value step = broadcastTo(b, loc, index, both);
    pointers = AddPtrOp::create(b, loc, ptrs.getType(), ptrs, step);
  }
  return {pointers, mask};
}

/// The dot in a loop whose operand `load`'s one use is (possibly
/// transposed: `b.T`), and which operand (0: A, 1: B) and whether through
/// a transpose.
struct DotUse {
  DotOp dot;
  unsigned operand;
  bool transposed;
};
std::optional<DotUse> dotInLoopUse(DescriptorLoadOp load) {
  Value v = load.getResult();
  if (!v.hasOneUse())
    return std::nullopt;
  Operation *user = *v.getUsers().begin();
  bool transposed = isa<TransOp>(user);
  if (transposed) {
    v = user->getResult(0);
    if (!v.hasOneUse())
      return std::nullopt;
    user = *v.getUsers().begin();
  }
  auto dot = dyn_cast<DotOp>(user);
  if (!dot || dot.getC() == v || !dot->getParentOfType<scf::ForOp>())
    return std::nullopt;
  return DotUse{dot, dot.getA() == v ? 0u : 1u, transposed};
}

/// Whether the copy engine can fill warpgroup MMA's pipeline slots with
/// the block of `use`'s operand: 8-bit or 16-bit elements read along K (A
/// as it is, B transposed: K-major), or 16-bit ones read along M or N (A
/// transposed, B as it is: MN-major), in rows of at least 32 bytes (the
/// narrowest swizzle); A's rows at least a warpgroup's 64.
bool fillsWarpgroupSlot(DotUse use) {
  RankedTensorType a = use.dot.getA().getType(), b = use.dot.getB().getType();
  int64_t bits = a.getElementType().getIntOrFloatBitWidth();
  if ((bits != 8 && bits != 16) ||
      b.getElementType().getIntOrFloatBitWidth() != bits ||
      a.getDimSize(0) < 64)
    return false;
  bool kMajor = use.transposed == (use.operand == 1);
  int64_t row = kMajor ? a.getDimSize(1)
                       : (use.operand == 0 ? a.getDimSize(0) : b.getDimSize(1));
  return (kMajor || bits == 16) && row * bits / 8 >= 32;
}

struct TileLowerDescriptors
    : public tessel::tile::impl::TileLowerDescriptorsBase<
          TileLowerDescriptors> {
  using Base::Base;

  /// Whether the copy engine moves a block of `type` of a descriptor
  /// passed as `tensorMap` (tilegpu-tensor-maps).
  bool forTensorMap(std::optional<uint32_t> tensorMap, Type type) const {
    return tensorMaps && tensorMap &&
           llvm::all_of(cast<RankedTensorType>(type).getShape(),
                        [](int64_t size) { return size <= 256; });
  }

  void runOnOperation() override {
    getOperation().walk([&](Operation *op) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto load = dyn_cast<DescriptorLoadOp>(op)) {
        if (forTensorMap(load.getTensorMap(), load.getType())) {
          std::optional<DotUse> use = dotInLoopUse(load);
          // The stages of the loop around the dot (tl.range's own first).
          if (!use ||
              loopStages(use->dot->getParentOfType<scf::ForOp>(), numStages) <=
                  1 ||
              (pipelinedTensorMaps && fillsWarpgroupSlot(*use)))
            return;
        }
        auto type = cast<RankedTensorType>(load.getType());
        auto [pointers, mask] =
            blockPointers(b, loc, load.getBase(), load.getShape(),
                          load.getStrides(), load.getOffsets(), type.getShape());
        Type element = type.getElementType();
        TypedAttr fill;
        if (auto floatType = dyn_cast<FloatType>(element))
          fill = b.getFloatAttr(
              floatType, load.getNanPadding()
                             ? APFloat::getNaN(floatType.getFloatSemantics())
                             : APFloat::getZero(floatType.getFloatSemantics()));
        else
          fill = b.getIntegerAttr(element, 0);
        Value other = arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(type, fill));
        auto replacement =
            LoadOp::create(b, loc, type, pointers, mask, other,
                           /*cache=*/nullptr, /*evict=*/nullptr,
                           /*isVolatile=*/false);
        load.replaceAllUsesWith(replacement.getResult());
        load.erase();
      } else if (auto store = dyn_cast<DescriptorStoreOp>(op)) {
        if (forTensorMap(store.getTensorMap(), store.getValue().getType()))
          return;
        auto type = cast<RankedTensorType>(store.getValue().getType());
        auto [pointers, mask] = blockPointers(
            b, loc, store.getBase(), store.getShape(), store.getStrides(),
            store.getOffsets(), type.getShape());
        StoreOp::create(b, loc, pointers, store.getValue(), mask,
                        /*cache=*/nullptr, /*evict=*/nullptr);
        store.erase();
      }
    });
  }
};

} // namespace
