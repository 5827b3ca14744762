//===- Ops.cpp - Operations of the tile dialect ---------------------------===//
#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tessel::tile;

#define GET_OP_CLASSES
#include "tessel/Dialect/Tile/IR/TileOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Integer ranges (InferIntRangeInterface): what MLIR's integer range analysis
// knows of program ids and blocks of integers
//===----------------------------------------------------------------------===//

namespace {
ConstantIntRanges signedRange(int64_t lo, int64_t hi) {
  return ConstantIntRanges::fromSigned(APInt(32, lo, /*isSigned=*/true),
                                       APInt(32, hi, /*isSigned=*/true));
}
} // namespace

void GetProgramIdOp::inferResultRanges(ArrayRef<ConstantIntRanges>,
                                       SetIntRangeFn setResultRange) {
  setResultRange(getResult(), signedRange(0, INT32_MAX));
}

void GetNumProgramsOp::inferResultRanges(ArrayRef<ConstantIntRanges>,
                                         SetIntRangeFn setResultRange) {
  setResultRange(getResult(), signedRange(1, INT32_MAX));
}

void MakeRangeOp::inferResultRanges(ArrayRef<ConstantIntRanges>,
                                    SetIntRangeFn setResultRange) {
  // Verified: start < end.
  setResultRange(getResult(), signedRange(getStart(), int64_t(getEnd()) - 1));
}

// Ops that only move elements: the range of their source.
#define TESSEL_SAME_RANGE(Op)                                                  \
  void Op::inferResultRanges(ArrayRef<ConstantIntRanges> argRanges,            \
                             SetIntRangeFn setResultRange) {                   \
    setResultRange(getResult(), argRanges[0]);                                 \
  }
TESSEL_SAME_RANGE(SplatOp)
TESSEL_SAME_RANGE(BroadcastOp)
TESSEL_SAME_RANGE(ExpandDimsOp)
TESSEL_SAME_RANGE(ReshapeOp)
TESSEL_SAME_RANGE(TransOp)
#undef TESSEL_SAME_RANGE

namespace {
std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

/// `mask` (if any) must have the shape of `ptr`.
LogicalResult verifyMaskShape(Operation *op, Value ptr, Value mask) {
  if (!mask)
    return success();
  if (getShapeOrEmpty(mask.getType()) != getShapeOrEmpty(ptr.getType()))
    return op->emitOpError("mask shape ")
           << shapeString(getShapeOrEmpty(mask.getType()))
           << " differs from pointer shape "
           << shapeString(getShapeOrEmpty(ptr.getType()));
  return success();
}
/// A splat constant seen with another shape (views of splats fold).
OpFoldResult foldSplat(Attribute src, Type resultType) {
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(src))
    return SplatElementsAttr::get(cast<ShapedType>(resultType),
                                  splat.getSplatValue<Attribute>());
  return {};
}
} // namespace

//===----------------------------------------------------------------------===//
// MakeRangeOp
//===----------------------------------------------------------------------===//

LogicalResult MakeRangeOp::verify() {
  auto type = getResult().getType();
  if (type.getRank() != 1)
    return emitOpError("result must be 1-D");
  int64_t start = getStart(), end = getEnd();
  if (end <= start)
    return emitOpError("end (") << end << ") must be greater than start ("
                                << start << ")";
  if (type.getDimSize(0) != end - start)
    return emitOpError("result has ") << type.getDimSize(0)
                                      << " elements, expected " << end - start;
  return success();
}

//===----------------------------------------------------------------------===//
// SplatOp
//===----------------------------------------------------------------------===//

OpFoldResult SplatOp::fold(FoldAdaptor adaptor) {
  auto value = adaptor.getSrc();
  if (!value || !isa<IntegerAttr, FloatAttr>(value))
    return {};
  return SplatElementsAttr::get(getResult().getType(), value);
}

//===----------------------------------------------------------------------===//
// BroadcastOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  auto src = getSrc().getType(), res = getResult().getType();
  if (src.getRank() != res.getRank())
    return emitOpError("source rank ")
           << src.getRank() << " differs from result rank " << res.getRank();
  for (auto [s, r] : llvm::zip(src.getShape(), res.getShape()))
    if (s != r && s != 1)
      return emitOpError("cannot broadcast ")
             << shapeString(src.getShape()) << " to "
             << shapeString(res.getShape());
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getResult().getType())
    return getSrc();
  return foldSplat(adaptor.getSrc(), getResult().getType());
}

//===----------------------------------------------------------------------===//
// ExpandDimsOp
//===----------------------------------------------------------------------===//

LogicalResult ExpandDimsOp::verify() {
  auto src = getSrc().getType(), res = getResult().getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis > src.getRank())
    return emitOpError("axis ") << axis << " out of range for rank "
                                << src.getRank();
  SmallVector<int64_t> expected(src.getShape());
  expected.insert(expected.begin() + axis, 1);
  if (ArrayRef<int64_t>(expected) != res.getShape())
    return emitOpError("result shape ")
           << shapeString(res.getShape()) << " should be "
           << shapeString(expected);
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  if (getSrc().getType().getNumElements() !=
      getResult().getType().getNumElements())
    return emitOpError("cannot reshape ")
           << shapeString(getSrc().getType().getShape()) << " to "
           << shapeString(getResult().getType().getShape())
           << ": the number of elements differs";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getResult().getType())
    return getSrc();
  return foldSplat(adaptor.getSrc(), getResult().getType());
}

//===----------------------------------------------------------------------===//
// TransOp
//===----------------------------------------------------------------------===//

OpFoldResult TransOp::fold(FoldAdaptor adaptor) {
  return foldSplat(adaptor.getSrc(), getResult().getType());
}

LogicalResult TransOp::verify() {
  auto src = getSrc().getType(), res = getResult().getType();
  ArrayRef<int32_t> order = getOrder();
  if ((int64_t)order.size() != src.getRank())
    return emitOpError("order has ")
           << order.size() << " entries for a rank-" << src.getRank()
           << " source";
  SmallVector<bool> seen(order.size(), false);
  for (auto [i, o] : llvm::enumerate(order)) {
    if (o < 0 || o >= (int64_t)order.size() || seen[o])
      return emitOpError("order must be a permutation of 0..")
             << order.size() - 1;
    seen[o] = true;
    if (res.getDimSize(i) != src.getDimSize(o))
      return emitOpError("result dimension ")
             << i << " should be " << src.getDimSize(o);
  }
  return success();
}

namespace {
/// trans(load(p, mask, other)) -> load(trans(p), trans(mask), trans(other))
/// for a dot's operand. (Elsewhere the transpose stays: a transposing copy
/// reads and writes along rows, the transpose going through shared memory.)
struct LoadTransposed : OpRewritePattern<TransOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransOp trans,
                                PatternRewriter &rw) const override {
    auto load = trans.getSrc().getDefiningOp<LoadOp>();
    if (!trans->hasOneUse())
      return failure();
    OpOperand &use = *trans->getUses().begin();
    if (!isa<DotOp>(use.getOwner()) || use.getOperandNumber() > 1)
      return failure();
    if (!load || !load->hasOneUse() || load.getIsVolatile() ||
        trans.getType().getEncoding() ||
        cast<RankedTensorType>(load.getPtr().getType()).getEncoding())
      return failure();
    rw.setInsertionPoint(load);
    Location loc = load.getLoc();
    auto transpose = [&](Value v) -> Value {
      if (!v)
        return v;
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape;
      for (int32_t d : trans.getOrder())
        shape.push_back(type.getDimSize(d));
      return TransOp::create(rw, loc,
                             RankedTensorType::get(shape, type.getElementType()),
                             v, trans.getOrderAttr());
    };
    Value ptr = transpose(load.getPtr());
    Value mask = transpose(load.getMask());
    Value other = transpose(load.getOther());
    auto read = LoadOp::create(rw, loc, trans.getType(), ptr, mask, other,
                               load.getCacheAttr(), load.getEvictAttr(),
                               /*isVolatile=*/false);
    rw.replaceOp(trans, read.getResult());
    rw.eraseOp(load);
    return success();
  }
};
} // namespace

void TransOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<LoadTransposed>(context);
}

//===----------------------------------------------------------------------===//
// AddPtrOp
//===----------------------------------------------------------------------===//

LogicalResult AddPtrOp::verify() {
  if (getShapeOrEmpty(getPtr().getType()) !=
      getShapeOrEmpty(getOffset().getType()))
    return emitOpError("offset shape ")
           << shapeString(getShapeOrEmpty(getOffset().getType()))
           << " differs from pointer shape "
           << shapeString(getShapeOrEmpty(getPtr().getType()));
  return success();
}

OpFoldResult AddPtrOp::fold(FoldAdaptor adaptor) {
  if (matchPattern(adaptor.getOffset(), m_Zero()))
    return getPtr();
  return {};
}

//===----------------------------------------------------------------------===//
// PtrCastOp
//===----------------------------------------------------------------------===//

OpFoldResult PtrCastOp::fold(FoldAdaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  // A cast of a cast is one cast of the first pointers.
  if (auto inner = getSrc().getDefiningOp<PtrCastOp>()) {
    if (inner.getSrc().getType() == getType())
      return inner.getSrc();
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// LoadOp / StoreOp
//===----------------------------------------------------------------------===//

LogicalResult LoadOp::verify() {
  auto pointee =
      cast<PointerType>(getElementTypeOrSelf(getPtr().getType())).getPointeeType();
  Type expected = getTypeWithShapeOf(pointee, getPtr().getType());
  if (getResult().getType() != expected)
    return emitOpError("result type ")
           << getResult().getType() << " should be " << expected;
  if (getOther() && getOther().getType() != expected)
    return emitOpError("`other` type ")
           << getOther().getType() << " should be " << expected;
  if (auto cache = getCache(); cache && *cache != CacheModifier::ca &&
                               *cache != CacheModifier::cg &&
                               *cache != CacheModifier::cv)
    return emitOpError("cache modifier '")
           << stringifyCacheModifier(*cache)
           << "' is for stores; loads take ca, cg or cv";
  return verifyMaskShape(*this, getPtr(), getMask());
}

void LoadOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(),
                       SideEffects::DefaultResource::get());
}

LogicalResult StoreOp::verify() {
  auto pointee =
      cast<PointerType>(getElementTypeOrSelf(getPtr().getType())).getPointeeType();
  Type expected = getTypeWithShapeOf(pointee, getPtr().getType());
  if (getValue().getType() != expected)
    return emitOpError("value type ")
           << getValue().getType() << " should be " << expected;
  if (auto cache = getCache(); cache && *cache != CacheModifier::wb &&
                               *cache != CacheModifier::cg &&
                               *cache != CacheModifier::cs &&
                               *cache != CacheModifier::wt)
    return emitOpError("cache modifier '")
           << stringifyCacheModifier(*cache)
           << "' is for loads; stores take wb, cg, cs or wt";
  return verifyMaskShape(*this, getPtr(), getMask());
}

void StoreOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(),
                       SideEffects::DefaultResource::get());
}

//===----------------------------------------------------------------------===//
// AtomicRMWOp, AtomicCASOp
//===----------------------------------------------------------------------===//

/// `value` must be the pointee of `ptr` with `ptr`'s shape.
static LogicalResult verifyAtomicValue(Operation *op, Value ptr, Value value,
                                       StringRef what) {
  auto pointee =
      cast<PointerType>(getElementTypeOrSelf(ptr.getType())).getPointeeType();
  Type expected = getTypeWithShapeOf(pointee, ptr.getType());
  if (value.getType() != expected)
    return op->emitOpError() << what << " type " << value.getType()
                             << " should be " << expected;
  return success();
}

LogicalResult AtomicRMWOp::verify() {
  if (failed(verifyAtomicValue(*this, getPtr(), getVal(), "value")))
    return failure();
  Type elt = getElementTypeOrSelf(getVal().getType());
  unsigned width = elt.getIntOrFloatBitWidth();
  bool wide = width == 32 || width == 64;
  bool ok = false;
  switch (getKind()) {
  case AtomicRMWKind::add:
  case AtomicRMWKind::max:
  case AtomicRMWKind::umax:
  case AtomicRMWKind::min:
  case AtomicRMWKind::umin:
    ok = isa<IntegerType>(elt) && wide;
    break;
  case AtomicRMWKind::fadd:
    ok = elt.isF16() || elt.isBF16() || elt.isF32() || elt.isF64();
    break;
  case AtomicRMWKind::fmax:
  case AtomicRMWKind::fmin:
    ok = elt.isF32() || elt.isF64();
    break;
  case AtomicRMWKind::bit_and:
  case AtomicRMWKind::bit_or:
  case AtomicRMWKind::bit_xor:
  case AtomicRMWKind::xchg:
    ok = (isa<IntegerType>(elt) || elt.isF32() || elt.isF64()) && wide;
    break;
  }
  if (!ok)
    return emitOpError("'") << stringifyAtomicRMWKind(getKind())
                            << "' is not defined on " << elt;
  return verifyMaskShape(*this, getPtr(), getMask());
}

LogicalResult AtomicCASOp::verify() {
  if (failed(verifyAtomicValue(*this, getPtr(), getVal(), "value")))
    return failure();
  Type elt = getElementTypeOrSelf(getVal().getType());
  unsigned width = elt.getIntOrFloatBitWidth();
  if (width != 16 && width != 32 && width != 64)
    return emitOpError("elements must be 16, 32 or 64 bits wide, got ") << elt;
  return success();
}

//===----------------------------------------------------------------------===//
// DescriptorLoadOp, DescriptorStoreOp
//===----------------------------------------------------------------------===//

/// A descriptor's block `type` over `base` with these operand counts.
static LogicalResult verifyDescriptorBlock(Operation *op, Value base,
                                           Type blockType, size_t shape,
                                           size_t strides, size_t offsets) {
  auto block = cast<RankedTensorType>(blockType);
  size_t rank = block.getRank();
  if (rank < 1 || rank > 5)
    return op->emitOpError("blocks of 1 to 5 dimensions, got ") << rank;
  if (shape != rank || offsets != rank || strides + 1 != rank)
    return op->emitOpError("a block of rank ")
           << rank << " takes " << rank << " sizes, " << rank - 1
           << " strides and " << rank << " offsets, got " << shape << ", "
           << strides << " and " << offsets;
  Type pointee = cast<PointerType>(base.getType()).getPointeeType();
  if (block.getElementType() != pointee)
    return op->emitOpError("the block's elements are ")
           << block.getElementType() << ", the base points to " << pointee;
  for (int64_t size : block.getShape())
    if (size < 1 || !llvm::isPowerOf2_64(size))
      return op->emitOpError("block dimensions are powers of 2, got ")
             << block;
  return success();
}

LogicalResult DescriptorLoadOp::verify() {
  if (getNanPadding() && !isa<FloatType>(getType().getElementType()))
    return emitOpError("NaN padding needs floating-point elements, got ")
           << getType().getElementType();
  return verifyDescriptorBlock(*this, getBase(), getType(), getShape().size(),
                               getStrides().size(), getOffsets().size());
}

LogicalResult DescriptorStoreOp::verify() {
  return verifyDescriptorBlock(*this, getBase(), getValue().getType(),
                               getShape().size(), getStrides().size(),
                               getOffsets().size());
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  if (getSrcs().empty())
    return emitOpError("needs at least one source");
  auto shape = cast<RankedTensorType>(getSrcs()[0].getType()).getShape();
  for (Value src : getSrcs())
    if (cast<RankedTensorType>(src.getType()).getShape() != shape)
      return emitOpError("all sources must have the same shape");
  int64_t axis = getAxis();
  if (axis < 0 || axis >= (int64_t)shape.size())
    return emitOpError("axis ") << axis << " out of range for rank "
                                << shape.size();
  if (getResults().size() != getSrcs().size())
    return emitOpError("needs one result per source");
  SmallVector<int64_t> resShape(shape);
  resShape.erase(resShape.begin() + axis);
  for (auto [src, res] : llvm::zip(getSrcs(), getResults())) {
    Type elt = getElementTypeOrSelf(src.getType());
    Type expected = resShape.empty()
                        ? elt
                        : Type(RankedTensorType::get(resShape, elt));
    // GPU backends give the result a layout (an encoding) of its own.
    if (res.getType() != expected &&
        (getShapeOrEmpty(res.getType()) != ArrayRef<int64_t>(resShape) ||
         getElementTypeOrSelf(res.getType()) != elt))
      return emitOpError("result type ")
             << res.getType() << " should be " << expected;
  }
  return success();
}

/// The combine region of a reduce or scan over `srcs`: 2N arguments (the
/// accumulated values, then the new ones) of the sources' element types,
/// returning N values of those types.
template <class ReturnOp>
static LogicalResult verifyCombineRegion(Operation *op, Region &region,
                                         ValueRange srcs) {
  Block &body = region.front();
  size_t n = srcs.size();
  if (body.getNumArguments() != 2 * n)
    return op->emitOpError("combine region takes ")
           << 2 * n << " arguments, has " << body.getNumArguments();
  for (size_t i = 0; i < 2 * n; ++i)
    if (body.getArgument(i).getType() !=
        getElementTypeOrSelf(srcs[i % n].getType()))
      return op->emitOpError("combine argument ")
             << i << " should be " << getElementTypeOrSelf(srcs[i % n].getType());
  auto ret = cast<ReturnOp>(body.getTerminator());
  if (ret.getResults().size() != n)
    return op->emitOpError("combine region returns ")
           << ret.getResults().size() << " values, expected " << n;
  for (size_t i = 0; i < n; ++i)
    if (ret.getResults()[i].getType() != getElementTypeOrSelf(srcs[i].getType()))
      return op->emitOpError("combine result ")
             << i << " should be " << getElementTypeOrSelf(srcs[i].getType());
  return success();
}

LogicalResult ReduceOp::verifyRegions() {
  return verifyCombineRegion<ReduceReturnOp>(*this, getCombineOp(), getSrcs());
}

//===----------------------------------------------------------------------===//
// ScanOp
//===----------------------------------------------------------------------===//

LogicalResult ScanOp::verify() {
  if (getSrcs().empty())
    return emitOpError("needs at least one source");
  auto shape = cast<RankedTensorType>(getSrcs()[0].getType()).getShape();
  for (Value src : getSrcs())
    if (cast<RankedTensorType>(src.getType()).getShape() != shape)
      return emitOpError("all sources must have the same shape");
  int64_t axis = getAxis();
  if (axis < 0 || axis >= (int64_t)shape.size())
    return emitOpError("axis ") << axis << " out of range for rank "
                                << shape.size();
  if (getResults().size() != getSrcs().size())
    return emitOpError("needs one result per source");
  for (auto [src, res] : llvm::zip(getSrcs(), getResults()))
    // GPU backends may give the result a layout of its own.
    if (getShapeOrEmpty(res.getType()) != shape ||
        getElementTypeOrSelf(res.getType()) !=
            getElementTypeOrSelf(src.getType()))
      return emitOpError("result type ")
             << res.getType() << " should be " << src.getType();
  return success();
}

LogicalResult ScanOp::verifyRegions() {
  return verifyCombineRegion<ScanReturnOp>(*this, getCombineOp(), getSrcs());
}

//===----------------------------------------------------------------------===//
// MapElementwiseOp
//===----------------------------------------------------------------------===//

LogicalResult MapElementwiseOp::verify() {
  if (getSrcs().empty())
    return emitOpError("needs at least one source");
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(getSrcs()[0].getType()).getShape();
  for (Value v : llvm::concat<Value>(getSrcs(), getResults()))
    if (cast<RankedTensorType>(v.getType()).getShape() != shape)
      return emitOpError("sources and results must have one shape");
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  if (getPack() < 1 || numel % getPack() != 0)
    return emitOpError("pack ") << getPack() << " does not divide the "
                                << numel << " elements";
  return success();
}

LogicalResult MapElementwiseOp::verifyRegions() {
  Block &body = getBody().front();
  unsigned pack = getPack();
  if (body.getNumArguments() != pack * getSrcs().size())
    return emitOpError("the region takes ")
           << pack * getSrcs().size() << " arguments, has "
           << body.getNumArguments();
  for (auto [i, arg] : llvm::enumerate(body.getArguments()))
    if (arg.getType() != getElementTypeOrSelf(getSrcs()[i / pack].getType()))
      return emitOpError("region argument ")
             << i << " should be "
             << getElementTypeOrSelf(getSrcs()[i / pack].getType());
  auto ret = cast<MapElementwiseReturnOp>(body.getTerminator());
  if (ret.getResults().size() != pack * getResults().size())
    return emitOpError("the region returns ")
           << ret.getResults().size() << " values, expected "
           << pack * getResults().size();
  for (auto [i, v] : llvm::enumerate(ret.getResults()))
    if (v.getType() != getElementTypeOrSelf(getResults()[i / pack].getType()))
      return emitOpError("region result ")
             << i << " should be "
             << getElementTypeOrSelf(getResults()[i / pack].getType());
  return success();
}

//===----------------------------------------------------------------------===//
// GatherOp
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto indices = cast<RankedTensorType>(getIndices().getType());
  if (!isa<IntegerType>(indices.getElementType()))
    return emitOpError("indices must be integers, got ")
           << indices.getElementType();
  if (src.getRank() != indices.getRank())
    return emitOpError("source and indices must have the same rank");
  int64_t axis = getAxis();
  if (axis < 0 || axis >= src.getRank())
    return emitOpError("axis ") << axis << " out of range for rank "
                                << src.getRank();
  for (int64_t d = 0; d < src.getRank(); ++d)
    if (d != axis && src.getDimSize(d) != indices.getDimSize(d))
      return emitOpError("indices dimension ")
             << d << " must match the source's: "
             << shapeString(indices.getShape()) << " vs "
             << shapeString(src.getShape());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getShape() != indices.getShape() ||
      result.getElementType() != src.getElementType())
    return emitOpError("result type ")
           << result << " should have the indices' shape and the source's "
           << "element type";
  return success();
}

//===----------------------------------------------------------------------===//
// DotOp
//===----------------------------------------------------------------------===//

namespace {
/// dot(a, b, 0) + d -> dot(a, b, d), the sum of a float (AddFOp) or integer
/// (AddIOp) dot, its only use, accumulating into the dot.
template <typename AddOp> struct AccumulateIntoDot : OpRewritePattern<AddOp> {
  using OpRewritePattern<AddOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      auto dot = add->getOperand(i).template getDefiningOp<DotOp>();
      Value sum = add->getOperand(1 - i);
      if (!dot || !dot->hasOneUse() || sum.getType() != dot.getType() ||
          !(matchPattern(dot.getC(), m_AnyZeroFloat()) ||
            matchPattern(dot.getC(), m_Zero())))
        continue;
      rw.replaceOpWithNewOp<DotOp>(add, dot.getType(), dot.getA(), dot.getB(),
                                   sum, dot.getInputPrecisionAttr(),
                                   dot.getMaxNumImpreciseAccAttr());
      rw.eraseOp(dot);
      return success();
    }
    return failure();
  }
};
} // namespace

void DotOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<AccumulateIntoDot<arith::AddFOp>,
              AccumulateIntoDot<arith::AddIOp>>(context);
}

LogicalResult DotOp::verify() {
  auto a = getA().getType(), b = getB().getType(), c = getC().getType();
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError("operands must be 2-D blocks");
  if (a.getDimSize(1) != b.getDimSize(0))
    return emitOpError("inner dimensions differ: ")
           << shapeString(a.getShape()) << " x " << shapeString(b.getShape());
  if (c.getDimSize(0) != a.getDimSize(0) || c.getDimSize(1) != b.getDimSize(1))
    return emitOpError("accumulator shape ")
           << shapeString(c.getShape()) << " should be ["
           << a.getDimSize(0) << ", " << b.getDimSize(1) << "]";
  if (c != getD().getType())
    return emitOpError("result type must equal the accumulator type");
  // 8-bit floats of the two kinds multiply each other; other types match.
  if (a.getElementType() != b.getElementType() &&
      !(isFP8Type(a) && isFP8Type(b)))
    return emitOpError("operand element types differ: ")
           << a.getElementType() << " and " << b.getElementType();
  return success();
}
