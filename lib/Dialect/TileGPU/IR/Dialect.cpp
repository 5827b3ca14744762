//===- Dialect.cpp - The tilegpu dialect ----------------------------------===//
#include "tessel/Dialect/TileGPU/IR/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tessel;
using namespace tessel::tilegpu;

#include "tessel/Dialect/TileGPU/IR/TileGPUDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/TileGPU/IR/TileGPUAttrs.cpp.inc"

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
  addOperations<
#define GET_OP_LIST
#include "tessel/Dialect/TileGPU/IR/TileGPUOps.cpp.inc"
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

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSrc().getType() == getResult().getType())
    return getSrc();
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
