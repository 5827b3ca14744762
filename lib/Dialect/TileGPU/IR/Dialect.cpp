//===- Dialect.cpp - The tilegpu dialect ----------------------------------===//
#include "tessel/Dialect/TileGPU/IR/Dialect.h"
#include "tessel/Dialect/TileGPU/IR/AmdLayouts.h"
#include "tessel/Dialect/TileGPU/IR/MmaInputs.h"
#include "tessel/Dialect/TileGPU/IR/NvidiaLayouts.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::tilegpu;

#include "tessel/Dialect/TileGPU/IR/TileGPUDialect.cpp.inc"

#include "tessel/Dialect/TileGPU/IR/TileGPUEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/TileGPU/IR/TileGPUAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tessel/Dialect/TileGPU/IR/TileGPUTypes.cpp.inc"

#define GET_OP_CLASSES
#include "tessel/Dialect/TileGPU/IR/TileGPUOps.cpp.inc"

namespace {
/// Prints layouts as aliases (#linear, #linear1, ...) ahead of the module.
struct TileGPUAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<LinearEncodingAttr>(attr)) {
      os << "linear";
      return AliasResult::FinalAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void TileGPUDialect::initialize() {
  addInterfaces<TileGPUAsmInterface>();
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "tessel/Dialect/TileGPU/IR/TileGPUOps.cpp.inc"
      >();
}

Operation *TileGPUDialect::materializeConstant(OpBuilder &builder,
                                               Attribute value, Type type,
                                               Location loc) {
  if (auto typed = dyn_cast<TypedAttr>(value))
    if (arith::ConstantOp::isBuildableWith(typed, type))
      return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

void TileGPUDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tessel/Dialect/TileGPU/IR/TileGPUTypes.cpp.inc"
      >();
}

void TileGPUDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tessel/Dialect/TileGPU/IR/TileGPUAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// #tilegpu.linear
//===----------------------------------------------------------------------===//

namespace {
constexpr const char *kInNames[] = {"register", "lane", "warp", "block"};
} // namespace

Attribute LinearEncodingAttr::parse(AsmParser &parser, Type) {
  // <register = [[a, b], ...], lane = [...], warp = [...], block = [...]>
  SmallVector<SmallVector<SmallVector<int32_t>>, 4> all(4);
  if (parser.parseLess())
    return {};
  for (int i = 0; i < 4; ++i) {
    if (i && parser.parseComma())
      return {};
    if (parser.parseKeyword(kInNames[i]) || parser.parseEqual())
      return {};
    auto parseBasis = [&]() -> ParseResult {
      SmallVector<int32_t> basis;
      if (parser.parseCommaSeparatedList(
              AsmParser::Delimiter::Square, [&]() -> ParseResult {
                int32_t v;
                if (parser.parseInteger(v))
                  return failure();
                basis.push_back(v);
                return success();
              }))
        return failure();
      all[i].push_back(std::move(basis));
      return success();
    };
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                       parseBasis))
      return {};
  }
  if (parser.parseGreater())
    return {};
  std::optional<unsigned> rank;
  SmallVector<SmallVector<int32_t>, 4> flat(4);
  for (int i = 0; i < 4; ++i)
    for (auto &basis : all[i]) {
      if (!rank)
        rank = basis.size();
      if (basis.size() != *rank) {
        parser.emitError(parser.getNameLoc(),
                         "every basis needs one coordinate per dimension");
        return {};
      }
      flat[i].append(basis.begin(), basis.end());
    }
  if (!rank) {
    parser.emitError(parser.getNameLoc(), "a layout needs at least one basis");
    return {};
  }
  return parser.getChecked<LinearEncodingAttr>(parser.getContext(), *rank,
                                               flat[0], flat[1], flat[2],
                                               flat[3]);
}

void LinearEncodingAttr::print(AsmPrinter &printer) const {
  ArrayRef<int32_t> lists[] = {getRegisterBases(), getLaneBases(),
                               getWarpBases(), getBlockBases()};
  unsigned rank = getRank();
  printer << "<";
  for (int i = 0; i < 4; ++i) {
    printer << (i ? ", " : "") << kInNames[i] << " = [";
    for (size_t b = 0; b * rank < lists[i].size(); ++b) {
      printer << (b ? ", " : "") << "[";
      llvm::interleaveComma(lists[i].slice(b * rank, rank), printer);
      printer << "]";
    }
    printer << "]";
  }
  printer << ">";
}

LogicalResult
LinearEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           unsigned rank, ArrayRef<int32_t> registerBases,
                           ArrayRef<int32_t> laneBases,
                           ArrayRef<int32_t> warpBases,
                           ArrayRef<int32_t> blockBases) {
  if (rank == 0)
    return emitError() << "a layout has rank 1 or more";
  for (ArrayRef<int32_t> l : {registerBases, laneBases, warpBases, blockBases}) {
    if (l.size() % rank)
      return emitError() << "bases must have " << rank << " coordinates each";
    for (int32_t v : l)
      if (v < 0)
        return emitError() << "basis coordinates are non-negative";
  }
  return success();
}

LogicalResult LinearEncodingAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != getRank())
    return emitError() << "a rank-" << getRank() << " layout on a rank-"
                       << shape.size() << " tensor";
  for (int64_t s : shape)
    if (s <= 0 || (s & (s - 1)))
      return emitError() << "layouts need power-of-two dimensions";
  ArrayRef<int32_t> lists[] = {getRegisterBases(), getLaneBases(),
                               getWarpBases(), getBlockBases()};
  for (ArrayRef<int32_t> l : lists)
    for (size_t i = 0; i < l.size(); ++i)
      if (l[i] >= shape[i % getRank()])
        return emitError() << "basis coordinate " << l[i]
                           << " is outside dimension " << i % getRank()
                           << " of size " << shape[i % getRank()];
  return success();
}

gpu::LinearLayout
LinearEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  unsigned rank = getRank();
  ArrayRef<int32_t> lists[] = {getRegisterBases(), getLaneBases(),
                               getWarpBases(), getBlockBases()};
  std::vector<gpu::LinearLayout::InDim> ins;
  for (int i = 0; i < 4; ++i) {
    gpu::LinearLayout::InDim d{kInNames[i], {}};
    for (size_t b = 0; b * rank < lists[i].size(); ++b) {
      ArrayRef<int32_t> basis = lists[i].slice(b * rank, rank);
      d.bases.emplace_back(basis.begin(), basis.end());
    }
    ins.push_back(std::move(d));
  }
  std::vector<gpu::LinearLayout::OutDim> outs;
  for (unsigned d = 0; d < shape.size(); ++d)
    outs.push_back({gpu::dimName(d), int32_t(shape[d])});
  return gpu::LinearLayout(std::move(ins), std::move(outs));
}

LinearEncodingAttr LinearEncodingAttr::get(MLIRContext *ctx,
                                           const gpu::LinearLayout &layout) {
  unsigned rank = layout.outs().size();
  SmallVector<SmallVector<int32_t>, 4> flat(4);
  for (const auto &in : layout.ins()) {
    auto *it = llvm::find_if(kInNames, [&](const char *n) { return in.name == n; });
    int i = it - std::begin(kInNames);
    for (const auto &basis : in.bases)
      flat[i].append(basis.begin(), basis.end());
  }
  return get(ctx, rank, flat[0], flat[1], flat[2], flat[3]);
}

int tessel::tilegpu::threadsPerWarp(Operation *op) {
  auto module = isa<ModuleOp>(op) ? cast<ModuleOp>(op)
                                  : op->getParentOfType<ModuleOp>();
  if (module)
    if (auto attr = module->getAttrOfType<IntegerAttr>(kThreadsPerWarpAttr))
      return int(attr.getInt());
  return 32;
}

std::optional<gpu::LinearLayout> tessel::tilegpu::getLayout(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return std::nullopt;
  auto enc = dyn_cast_or_null<LinearEncodingAttr>(tensor.getEncoding());
  if (!enc || enc.getRank() != tensor.getRank())
    return std::nullopt;
  return enc.toLinearLayout(tensor.getShape());
}

RankedTensorType tessel::tilegpu::withLayout(Type type,
                                             const gpu::LinearLayout &layout) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(
      tensor.getShape(), tensor.getElementType(),
      LinearEncodingAttr::get(type.getContext(), layout));
}

//===----------------------------------------------------------------------===//
// convert_layout
//===----------------------------------------------------------------------===//

LogicalResult ConvertLayoutOp::verify() {
  auto src = getSrc().getType(), dst = getResult().getType();
  if (src.getShape() != dst.getShape() ||
      src.getElementType() != dst.getElementType())
    return emitOpError("changes only the layout: shapes and element types "
                       "must match");
  return success();
}

void ConvertLayoutOp::inferResultRanges(ArrayRef<ConstantIntRanges> argRanges,
                                        SetIntRangeFn setResultRange) {
  setResultRange(getResult(), argRanges[0]); // the same elements
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getResult().getType())
    return getSrc();
  // A splat constant has the same value in every layout: no data moves.
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getSrc()))
    return SplatElementsAttr::get(getResult().getType(),
                                  splat.getSplatValue<Attribute>());
  // convert(convert(x)) folds to convert(x) by canonicalization of the
  // outer op's operand.
  if (auto inner = getSrc().getDefiningOp<ConvertLayoutOp>()) {
    if (inner.getSrc().getType() == getResult().getType())
      return inner.getSrc();
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// buffer_load, buffer_store
//===----------------------------------------------------------------------===//

namespace {
/// A buffer access reads or writes `data` (its type) at `offsets` of the
/// scalar pointer `base`: i32 offsets and an i1 mask of the data's shape
/// and layout.
LogicalResult verifyBufferAccess(Operation *op, Value base, Value offsets,
                                 Value mask, RankedTensorType data) {
  auto ptr = dyn_cast<tile::PointerType>(base.getType());
  if (!ptr || ptr.getPointeeType() != data.getElementType())
    return op->emitOpError("needs a scalar pointer to ")
           << data.getElementType() << " as its base";
  auto offs = cast<RankedTensorType>(offsets.getType());
  if (offs.getShape() != data.getShape() || !offs.getElementType().isInteger(32) ||
      offs.getEncoding() != data.getEncoding())
    return op->emitOpError("needs i32 offsets of the data's shape and layout");
  if (mask) {
    auto m = cast<RankedTensorType>(mask.getType());
    if (m.getShape() != data.getShape() || !m.getElementType().isInteger(1) ||
        m.getEncoding() != data.getEncoding())
      return op->emitOpError("needs an i1 mask of the data's shape and layout");
  }
  return success();
}
} // namespace

LogicalResult BufferLoadOp::verify() {
  auto type = getResult().getType();
  if (getOther() && getOther().getType() != type)
    return emitOpError("needs `other` of the result's type");
  return verifyBufferAccess(*this, getBase(), getOffsets(), getMask(), type);
}

LogicalResult BufferStoreOp::verify() {
  return verifyBufferAccess(*this, getBase(), getOffsets(), getMask(),
                            getValue().getType());
}

//===----------------------------------------------------------------------===//
// !tilegpu.shared
//===----------------------------------------------------------------------===//

Type SharedBufferType::parse(AsmParser &parser) {
  // <SLOTSxROWSxCOLSxELT, k_major|mn_major, [transposed,] swizzle = N>
  SmallVector<int64_t> shape;
  Type elt;
  StringRef order;
  int32_t swizzle;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elt) || parser.parseComma() ||
      parser.parseKeyword(&order) || parser.parseComma())
    return {};
  std::optional<SharedOrder> o = symbolizeSharedOrder(order);
  if (!o) {
    parser.emitError(parser.getNameLoc(),
                     "expected k_major, mn_major, gather or padded");
    return {};
  }
  bool transposed = succeeded(parser.parseOptionalKeyword("transposed"));
  if ((transposed && parser.parseComma()) ||
      parser.parseKeyword(*o == SharedOrder::Padded ? "pad" : "swizzle") ||
      parser.parseEqual() || parser.parseInteger(swizzle) ||
      parser.parseGreater())
    return {};
  return parser.getChecked<SharedBufferType>(parser.getContext(), shape, elt,
                                             *o, transposed, swizzle);
}

void SharedBufferType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape())
    printer << d << "x";
  printer << getElementType() << ", " << stringifySharedOrder(getOrder());
  if (getTransposed())
    printer << ", transposed";
  printer << (getOrder() == SharedOrder::Padded ? ", pad = " : ", swizzle = ")
          << getSwizzle() << ">";
}

LogicalResult
SharedBufferType::verify(function_ref<InFlightDiagnostic()> emitError,
                         ArrayRef<int64_t> shape, Type elt, SharedOrder order,
                         bool transposed, int32_t swizzle) {
  if (shape.size() != 3)
    return emitError() << "a shared buffer is slots x rows x columns, got "
                       << shape.size() << " dimensions";
  for (int64_t d : shape)
    if (d <= 0 || (d & (d - 1)))
      if (d != shape[0] || d <= 0)
        return emitError() << "rows and columns must be powers of two and "
                              "slots positive";
  if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8)
    return emitError() << "shared buffers hold whole-byte integers or floats";
  if (order == SharedOrder::Padded) {
    int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
    if ((swizzle != 4 && swizzle != 8 && swizzle != 16 && swizzle != 32) ||
        swizzle % bytes)
      return emitError() << "the padding is 4, 8, 16 or 32 bytes, whole elements, "
                            "got "
                         << swizzle;
    return success();
  }
  if (swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "the swizzle spans 32, 64 or 128 bytes, got "
                       << swizzle;
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  // gpu::gatherOperandLayout: 8-bit or 32-bit elements, in rows whose
  // bytes (at most 128) the swizzle gives, at least 4 words of K.
  if (order == SharedOrder::Gather) {
    int64_t k = transposed ? shape[2] : shape[1];
    int64_t row = (transposed ? shape[1] : shape[2]) * bytes;
    if ((bytes != 1 && bytes != 4) || swizzle != std::min<int64_t>(128, row) ||
        k < 16 / bytes)
      return emitError() << "a gather slot holds 8-bit or 32-bit elements, "
                            "at least "
                         << 16 / std::max<int64_t>(bytes, 1)
                         << " rows of K, and its swizzle is its row's "
                            "bytes up to 128";
  }
  // The stored tile: columns x rows when transposed.
  int64_t stored0 = transposed ? shape[2] : shape[1];
  int64_t stored1 = transposed ? shape[1] : shape[2];
  if (stored1 * bytes % swizzle || stored0 % 8)
    return emitError() << "a slot is whole swizzle atoms: "
                       << (transposed ? "columns" : "rows")
                       << " a multiple of 8, "
                       << (transposed ? "rows" : "columns") << " of "
                       << swizzle << " bytes";
  return success();
}

int32_t SharedBufferType::getElementBytes() const {
  return getElementType().getIntOrFloatBitWidth() / 8;
}

int64_t SharedBufferType::getSlotBytes() const {
  int64_t bytes = int64_t(getRows()) * getColumns() * getElementBytes();
  if (getOrder() == SharedOrder::Padded)
    bytes += int64_t(getRows()) * getColumns() / getRowElements() /
             getPaddedRows() * getPadElements() * getElementBytes();
  return bytes;
}

int32_t SharedBufferType::getRowElements() const {
  return getTransposed() ? getRows() : getColumns();
}

int32_t SharedBufferType::getPaddedRows() const {
  int32_t rowBytes = getRowElements() * getElementBytes();
  return rowBytes < 128 ? 128 / rowBytes : 1;
}

int32_t SharedBufferType::getPadElements() const {
  return getOrder() == SharedOrder::Padded ? getSwizzle() / getElementBytes()
                                           : 0;
}

int64_t SharedBufferType::getSlotStride() const {
  // Padded rows have no swizzle pattern to start over: 128-byte aligned
  // slots keep their rows' 16-byte vectors aligned.
  int64_t align = getOrder() == SharedOrder::Padded ? 128 : 1024;
  return (getSlotBytes() + align - 1) / align * align;
}

gpu::LinearLayout SharedBufferType::getSlotLayout() const {
  int32_t rows = getRows(), cols = getColumns();
  if (getTransposed())
    std::swap(rows, cols);
  int32_t bytes = getElementBytes(), swizzle = getSwizzle();
  gpu::LinearLayout stored;
  switch (getOrder()) {
  case SharedOrder::KMajor:
    stored = gpu::wgmmaOperandLayout(rows, cols, bytes, swizzle);
    break;
  case SharedOrder::MNMajor:
    stored = gpu::wgmmaMNMajorOperandLayout(rows, cols, bytes, swizzle);
    break;
  case SharedOrder::Gather:
    stored = gpu::gatherOperandLayout(rows, cols, bytes, swizzle);
    break;
  case SharedOrder::Padded: // row-major before padding
    stored = (gpu::LinearLayout::identity1D(cols, gpu::kOffset, gpu::dimName(1)) *
              gpu::LinearLayout::identity1D(rows, gpu::kOffset, gpu::dimName(0)))
                 .transposeOuts({gpu::dimName(0), gpu::dimName(1)});
    break;
  }
  return getTransposed() ? gpu::transposeLayout(stored, {1, 0}) : stored;
}

//===----------------------------------------------------------------------===//
// async_copy, local_load
//===----------------------------------------------------------------------===//

/// Whether `type` is a [rows, columns] tile of `buffer`'s slots.
static bool isSlotShape(RankedTensorType type, SharedBufferType buffer) {
  return type.getRank() == 2 && type.getDimSize(0) == buffer.getRows() &&
         type.getDimSize(1) == buffer.getColumns();
}

LogicalResult AsyncCopyOp::verify() {
  auto buffer = getBuffer().getType();
  auto ptrTy = getPtr().getType();
  if (!isSlotShape(ptrTy, buffer))
    return emitOpError("copies a whole slot: pointers of shape ")
           << buffer.getRows() << "x" << buffer.getColumns() << " expected";
  auto ptr = dyn_cast<tile::PointerType>(ptrTy.getElementType());
  if (!ptr || ptr.getPointeeType() != buffer.getElementType())
    return emitOpError("needs pointers to the buffer's element type ")
           << buffer.getElementType();
  if (!getLayout(ptrTy))
    return emitOpError("needs pointers with a layout");
  if (Value mask = getMask()) {
    auto maskTy = cast<RankedTensorType>(mask.getType());
    if (maskTy.getShape() != ptrTy.getShape() ||
        !maskTy.getElementType().isInteger(1) ||
        maskTy.getEncoding() != ptrTy.getEncoding())
      return emitOpError("needs a mask of i1 with the pointers' shape and "
                         "layout");
  }
  return success();
}

/// A tensor map's block: one offset per dimension, at most 5 dimensions of
/// at most 256 elements, a layout.
static LogicalResult verifyTensorMapBlock(Operation *op, RankedTensorType type,
                                          size_t offsets) {
  if (offsets != size_t(type.getRank()))
    return op->emitOpError("takes one offset per dimension of its ")
           << type.getRank() << "-d block, got " << offsets;
  if (type.getRank() > 5)
    return op->emitOpError("blocks of 1 to 5 dimensions");
  for (int64_t size : type.getShape())
    if (size > 256)
      return op->emitOpError("a block dimension is at most 256 elements, got ")
             << type;
  if (!getLayout(type))
    return op->emitOpError("needs a block with a layout");
  return success();
}

/// A block in the op's scratch with `swizzle` (0: row-major): 2-d, whole
/// 8-row groups, rows of whole 32, 64 or 128-byte swizzle atoms.
static LogicalResult verifyScratchSwizzle(Operation *op, RankedTensorType type,
                                          int32_t swizzle) {
  if (!swizzle)
    return success();
  int64_t rowBytes =
      type.getRank() == 2
          ? type.getDimSize(1) * type.getElementTypeBitWidth() / 8
          : 0;
  if ((swizzle != 32 && swizzle != 64 && swizzle != 128) ||
      type.getRank() != 2 || type.getDimSize(0) % 8 || rowBytes % swizzle)
    return op->emitOpError("a swizzled block is 2-d, of whole 8-row groups "
                           "whose rows are whole 32, 64 or 128-byte swizzle "
                           "atoms, got swizzle ")
           << swizzle << " for " << type;
  return success();
}

LogicalResult TmaLoadOp::verify() {
  RankedTensorType type = getResult().getType();
  if (failed(verifyTensorMapBlock(*this, type, getOffsets().size())))
    return failure();
  return verifyScratchSwizzle(*this, type, getSwizzle());
}

LogicalResult TmaStoreOp::verify() {
  RankedTensorType type = getValue().getType();
  if (failed(verifyTensorMapBlock(*this, type, getOffsets().size())))
    return failure();
  return verifyScratchSwizzle(*this, type, getSwizzle());
}

namespace {
/// The copy engine stores the scratch, whatever layout the value had: a
/// conversion before the store is one round trip through shared memory
/// too many.
struct StoreUnconverted : OpRewritePattern<TmaStoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TmaStoreOp op,
                                PatternRewriter &rewriter) const override {
    auto cvt = op.getValue().getDefiningOp<ConvertLayoutOp>();
    if (!cvt)
      return failure();
    rewriter.modifyOpInPlace(
        op, [&] { op.getValueMutable().assign(cvt.getSrc()); });
    return success();
  }
};
} // namespace

void TmaStoreOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *ctx) {
  results.add<StoreUnconverted>(ctx);
}

//===----------------------------------------------------------------------===//
// mbarriers, async_tma_copy
//===----------------------------------------------------------------------===//

LogicalResult
MBarriersType::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t count) {
  if (count < 1)
    return emitError() << "at least one mbarrier, got " << count;
  return success();
}

/// The tile an async_tma_copy's block is: [rows, columns] as stored.
static std::pair<int64_t, int64_t> storedTile(SharedBufferType buffer) {
  if (buffer.getTransposed())
    return {buffer.getColumns(), buffer.getRows()};
  return {buffer.getRows(), buffer.getColumns()};
}

int64_t tilegpu::tmaSlotBoxes(SharedBufferType buffer) {
  return storedTile(buffer).second * buffer.getElementBytes() /
         buffer.getSwizzle();
}

SmallVector<int64_t> tilegpu::tmaSlotBox(SharedBufferType buffer) {
  return {storedTile(buffer).first,
          buffer.getSwizzle() / buffer.getElementBytes()};
}

LogicalResult WarpgroupMmaWaitOp::verify() {
  if (getResultTypes() != getValues().getTypes())
    return emitOpError("results must have the types of the values");
  return success();
}

LogicalResult AsyncTmaCopyOp::verify() {
  SharedBufferType buffer = getBuffer().getType();
  if (buffer.getOrder() == SharedOrder::Gather)
    return emitOpError("fills k_major or mn_major slots (columns of swizzle "
                       "atoms along the contiguous dimension)");
  if (getOffsets().size() != 2)
    return emitOpError("takes the 2 offsets of the block, got ")
           << getOffsets().size();
  if (storedTile(buffer).first > 256)
    return emitOpError("a box has at most 256 rows, got ")
           << storedTile(buffer).first;
  if (getBarriers().getType().getCount() != buffer.getNumSlots())
    return emitOpError("needs one mbarrier per slot: ")
           << buffer.getNumSlots() << " expected";
  return success();
}

LogicalResult LocalLoadOp::verify() {
  auto buffer = getBuffer().getType();
  auto type = getResult().getType();
  if (!isSlotShape(type, buffer) ||
      type.getElementType() != buffer.getElementType())
    return emitOpError("reads a whole slot: ")
           << RankedTensorType::get({buffer.getRows(), buffer.getColumns()},
                                    buffer.getElementType())
           << " with a layout expected";
  if (!getLayout(type))
    return emitOpError("needs a result with a layout");
  return success();
}

LogicalResult LocalStoreOp::verify() {
  auto buffer = getBuffer().getType();
  auto type = getValue().getType();
  if (!isSlotShape(type, buffer) ||
      type.getElementType() != buffer.getElementType())
    return emitOpError("writes a whole slot: ")
           << RankedTensorType::get({buffer.getRows(), buffer.getColumns()},
                                    buffer.getElementType())
           << " with a layout expected";
  if (!getLayout(type))
    return emitOpError("needs a value with a layout");
  return success();
}

bool tilegpu::atomicResultCrossesThreads(Operation *atomic) {
  Value result = atomic->getResult(0);
  if (result.use_empty())
    return false;
  std::optional<gpu::LinearLayout> layout = getLayout(result.getType());
  return !layout || layout->freeBits(gpu::kLane) ||
         layout->freeBits(gpu::kWarp);
}

int32_t tilegpu::accessWidth(Operation *op, const gpu::LinearLayout &layout) {
  auto widths = op->getAttrOfType<DenseI32ArrayAttr>("tilegpu.vector");
  if (!widths || size_t(widths.size()) != layout.outs().size())
    return 1;
  int32_t width = 1;
  for (auto [d, w] : llvm::enumerate(widths.asArrayRef()))
    width = std::max(width,
                     std::min(w, layout.contiguousRun(gpu::kRegister,
                                                      gpu::dimName(d))));
  return width;
}

int64_t tilegpu::scratchEstimate(Operation *func) {
  int64_t most = 0;
  auto bytes = [](Type t) {
    auto r = cast<RankedTensorType>(t);
    Type elt = r.getElementType();
    int64_t size = elt.isIntOrFloat()
                       ? std::max(1u, elt.getIntOrFloatBitWidth() / 8)
                       : 8;
    return r.getNumElements() * size;
  };
  func->walk([&](Operation *op) {
    if (isa<ConvertLayoutOp>(op))
      most = std::max(most, bytes(op->getResult(0).getType()));
    else if (isa<tile::DotOp>(op))
      most = std::max(most, bytes(op->getOperand(0).getType()) +
                                bytes(op->getOperand(1).getType()) + 1024);
  });
  return most;
}

int64_t tilegpu::bufferBytes(Operation *func) {
  int64_t total = 0;
  func->walk([&](LocalAllocOp alloc) {
    auto type = alloc.getType();
    int64_t bytes = type.getSlotStride() * type.getShape()[0];
    total += (bytes + 1023) / 1024 * 1024;
  });
  return total;
}

//===----------------------------------------------------------------------===//
// Dots on tensor cores
//===----------------------------------------------------------------------===//

namespace {
struct DotTypes {
  RankedTensorType a, b, d;
};
std::optional<DotTypes> dotTypes(Operation *dot) {
  if (dot->getNumOperands() < 3 || dot->getNumResults() != 1)
    return std::nullopt;
  auto a = dyn_cast<RankedTensorType>(dot->getOperand(0).getType());
  auto b = dyn_cast<RankedTensorType>(dot->getOperand(1).getType());
  auto d = dyn_cast<RankedTensorType>(dot->getResult(0).getType());
  if (!a || !b || !d || a.getRank() != 2 || b.getRank() != 2)
    return std::nullopt;
  return DotTypes{a, b, d};
}

/// fp16 x fp16 into fp32 or fp16, or bf16 x bf16 into fp32, with K a
/// multiple of 16.
bool isHalfDot(const DotTypes &t) {
  Type elt = t.a.getElementType(), acc = t.d.getElementType();
  return (elt.isF16() || elt.isBF16()) && elt == t.b.getElementType() &&
         (acc.isF32() || (acc.isF16() && elt.isF16())) &&
         t.a.getDimSize(1) % 16 == 0;
}
} // namespace

std::optional<std::vector<int32_t>> tilegpu::wgmmaWarps(Operation *dot) {
  if (!dot->hasAttr("tilegpu.wgmma"))
    return std::nullopt;
  auto t = dotTypes(dot);
  auto d = dyn_cast<tile::DotOp>(dot);
  if (!t || !d || !takesWarpgroupMma(d) ||
      t->a.getDimSize(1) % mmaSyncK(*mmaSyncInputs(d)))
    return std::nullopt;
  auto layout = getLayout(t->d);
  if (!layout)
    return std::nullopt;
  int32_t M = t->a.getDimSize(0), N = t->b.getDimSize(1);
  int32_t warps = layout->inSize(gpu::kWarp);
  for (int32_t wm = 4; wm <= warps; wm *= 2) {
    int32_t wn = warps / wm;
    if (M >= 16 * wm && N >= 8 * wn &&
        *layout == gpu::wgmmaAccumulatorLayout({M, N}, {wm, wn}))
      return std::vector<int32_t>{wm, wn};
  }
  return std::nullopt;
}

bool tilegpu::isMmaSyncDot(Operation *dot) {
  auto t = dotTypes(dot);
  if (!t || !isHalfDot(*t))
    return false;
  auto layout = getLayout(t->d);
  int32_t M = t->a.getDimSize(0), N = t->b.getDimSize(1);
  return layout && gpu::mmaAccumulatorWarps(*layout, {M, N}).has_value();
}

bool tilegpu::isMmaSyncWordDot(Operation *dot) {
  auto d = dyn_cast<tile::DotOp>(dot);
  if (!d)
    return false;
  std::optional<MmaInputs> inputs = mmaSyncInputs(d);
  if (!inputs || *inputs == MmaInputs::F16 || *inputs == MmaInputs::BF16)
    return false;
  auto layout = getLayout(d.getD().getType());
  int32_t M = d.getA().getType().getDimSize(0),
          K = d.getA().getType().getDimSize(1),
          N = d.getB().getType().getDimSize(1);
  return layout && K % mmaSyncK(*inputs) == 0 &&
         gpu::mmaAccumulatorWarps(*layout, {M, N}).has_value();
}

bool tilegpu::isMfmaDot(Operation *dot) {
  auto t = dotTypes(dot);
  auto layout = t ? getLayout(t->d) : std::nullopt;
  if (!layout)
    return false;
  std::vector<int32_t> shape{int32_t(t->a.getDimSize(0)),
                             int32_t(t->b.getDimSize(1))};
  for (int32_t instr : {32, 16})
    for (bool transposed : {false, true})
      for (bool doubles : {false, true})
        if (gpu::mfmaAccumulatorWarps(*layout, shape, transposed, instr,
                                      doubles))
          return true;
  return false;
}

int32_t tilegpu::mfmaMNRowPad(int64_t elementBytes, bool transposedReads) {
  return transposedReads && elementBytes == 2 ? 32 : 16;
}

std::optional<SharedEncoding>
tilegpu::dotOperandSharedEncoding(Operation *dot, unsigned operand,
                                  bool transposed) {
  auto t = dotTypes(dot);
  if (!t || operand > 1)
    return std::nullopt;
  int32_t size = t->a.getElementType().getIntOrFloatBitWidth() / 8;
  int32_t M = t->a.getDimSize(0), K = t->a.getDimSize(1),
          N = t->b.getDimSize(1);
  if (isMfmaDot(dot)) {
    // The padded rows an MFMA dot stages its operands in: along K (A, or B
    // transposed), where a lane reads its fragment's run of K (8 bytes of
    // 16-bit or 8-bit elements, 4 of fp32: as much padding), or along M or
    // N, read an element at a time down 16 rows (16 bytes). Any padding
    // reads right; a pipeline that stages both operands pads K rows by 16
    // bytes for the 16-byte reads the dot then makes.
    bool kRows = operand == 0 ? !transposed : transposed;
    int32_t pad = !kRows ? mfmaMNRowPad(size, /*transposedReads=*/false)
                         : size == 4 ? 4 : 8;
    return SharedEncoding{SharedOrder::Padded, transposed, pad};
  }
  std::optional<std::vector<int32_t>> warps = wgmmaWarps(dot);
  int32_t bColumns; // the span of B's columns one instruction reads
  if (warps)
    bColumns = gpu::wgmmaInstrN({M, N}, *warps);
  else if (isMmaSyncDot(dot) || isMmaSyncWordDot(dot))
    bColumns = N;
  else
    return std::nullopt;
  // K-major: swizzle atoms along K.
  SharedEncoding kMajor{SharedOrder::KMajor, transposed,
                        gpu::wgmmaSwizzleBytes(K, size)};
  if (operand == 0 && !transposed)
    return kMajor;
  if (operand == 1 && transposed)
    return kMajor; // N x K
  // mma.sync reading 32-bit fragment words (tf32, 8-bit elements) of an
  // operand whose M or N is contiguous: a `gather` slot, rows of K laid out
  // so that the 4 rows a warp's reads reach fall on different banks (an
  // 8-bit word is gathered a byte at a time from 4 consecutive rows, the
  // next thread's 4 rows on; a tf32 word comes from one of 4 consecutive
  // rows).
  if (!warps && (size == 1 || size == 4)) {
    int32_t span = (operand == 1 ? N : M) * size;
    if (span >= 32 && K >= 16 / size)
      return SharedEncoding{SharedOrder::Gather, transposed,
                            std::min(128, span)};
  }
  if (size == 1)
    return std::nullopt; // too narrow, or on wgmma: 8-bit is K-major only
  // MN-major needs a swizzle atom of at least 32 bytes of the rows (a
  // warpgroup MMA reads 64 of A's) or columns one instruction reads.
  int32_t span = operand == 1 ? bColumns : warps ? 64 : M;
  if (span * size < 32)
    return std::nullopt;
  return SharedEncoding{SharedOrder::MNMajor, transposed,
                        std::min(128, span * size)};
}
