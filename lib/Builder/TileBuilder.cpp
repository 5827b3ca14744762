//===- TileBuilder.cpp - Tile IR with the language's semantics ------------===//
//
// Numeric rules follow Triton 3.6's (tests check them against its interpreter): C-like
// promotion with signedness, Python literals never widen a tensor of the same
// or a higher kind in arithmetic (and must fit its type) but have their own
// type in comparisons, fp16/bf16 division in fp32, numpy-style broadcasting,
// block shapes of powers of 2.
//
//===----------------------------------------------------------------------===//
#include "tessel/Builder/TileBuilder.h"
#include "tessel/Analysis/LaunchChecks.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <sstream>

using namespace mlir;
using namespace tessel;

namespace {

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

[[noreturn]] void fail(const std::string &message) {
  throw CompileError(message);
}

/// Checks a block shape that `what` is about to create: every dimension is a
/// positive power of 2 and the block has at most kMaxBlockElements elements.
void checkBlockShape(ArrayRef<int64_t> shape, const std::string &what) {
  uint64_t numel = 1;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d <= 0)
      fail(what + ": invalid block shape " + shapeStr(shape) +
           " (every dimension must be positive)");
    // Triton's limit (its block types refuse other sizes), with its words.
    if (!llvm::isPowerOf2_64(d))
      fail(what + ": Shape element " + std::to_string(i) +
           " must be a power of 2, got the shape " + shapeStr(shape));
    numel = llvm::SaturatingMultiply(numel, uint64_t(d));
  }
  if (numel > uint64_t(kMaxBlockElements))
    fail(what + ": a block of shape " + shapeStr(shape) + " has " +
         (numel == UINT64_MAX ? std::string("more than 2^64")
                              : std::to_string(numel)) +
         " elements, more than the limit of " +
         std::to_string(kMaxBlockElements) + " (2^20) elements per block");
}

/// Kind order for the literal rule: bool < int < float.
int kindRank(DType t) { return t.isBool() ? 0 : t.isInt() ? 1 : 2; }

bool isLiteral(const Operand &x) { return !std::holds_alternative<TValue>(x); }

} // namespace

/// The type a Python literal takes on its own (Triton's to_tensor rules).
DType tessel::literalType(const Operand &x) {
  if (std::holds_alternative<bool>(x))
    return DType{ScalarKind::I1};
  if (auto *i = std::get_if<int64_t>(&x)) {
    if (*i >= INT32_MIN && *i <= INT32_MAX)
      return DType{ScalarKind::I32};
    if (*i >= 0 && *i <= UINT32_MAX)
      return DType{ScalarKind::U32};
    return DType{ScalarKind::I64};
  }
  if (std::holds_alternative<uint64_t>(x))
    return DType{ScalarKind::U64};
  // fp32 unless fp32 would flush or overflow it: a normal fp32 magnitude, 0,
  // an infinity or a NaN.
  double d = std::abs(std::get<double>(x));
  bool fp32 = d == 0.0 || std::isinf(d) || std::isnan(d) ||
              (d >= 0x1p-126 && d <= double(std::numeric_limits<float>::max()));
  return DType{fp32 ? ScalarKind::F32 : ScalarKind::F64};
}

namespace {

std::string describeOperand(const Operand &x) {
  if (auto *v = std::get_if<TValue>(&x))
    return v->describe();
  return "literal " + literalType(x).str();
}

DType integerPromote(DType a, DType b) {
  unsigned wa = a.bitwidth(), wb = b.bitwidth();
  bool ua = a.isUnsigned(), ub = b.isUnsigned();
  if (ua == ub)
    return wa > wb ? a : b;
  if (ua)
    return wa >= wb ? a : b;
  return wb >= wa ? b : a;
}

/// Triton's name of a type ("int8", "uint8"), for the messages it words.
std::string tritonName(DType t) {
  for (const ScalarInfo &info : scalarTypes())
    if (info.kind == t.kind)
      return info.tritonName;
  return t.str();
}

/// Whether the integer type `t` holds `v` (Triton's int1 is unsigned: 0, 1).
bool holds(DType t, int64_t v) {
  if (t.isBool())
    return v == 0 || v == 1;
  unsigned bits = t.bitwidth();
  if (bits == 64)
    return !t.isUnsigned() || v >= 0;
  if (t.isUnsigned())
    return v >= 0 && v < (int64_t(1) << bits);
  int64_t half = int64_t(1) << (bits - 1);
  return v >= -half && v < half;
}

/// An integer literal: `value`, or `big` (one of 2^63 to 2^64 - 1, which
/// only uint64 holds; then `value` is its bits).
struct IntLiteral {
  int64_t value;
  bool big;
  std::string str() const {
    return big ? std::to_string(uint64_t(value)) : std::to_string(value);
  }
};

/// The integer literal `x` is (a bool is 0 or 1), if it is one.
std::optional<IntLiteral> intLiteral(const Operand &x) {
  if (auto *i = std::get_if<int64_t>(&x))
    return IntLiteral{*i, false};
  if (auto *u = std::get_if<uint64_t>(&x))
    return IntLiteral{int64_t(*u), true};
  if (auto *b = std::get_if<bool>(&x))
    return IntLiteral{int64_t(*b), false};
  return std::nullopt;
}

/// Triton's checks on the Python ints of an operation computed in `type`
/// (the other operand's type, for a literal of the same or a lower kind): a
/// literal would otherwise wrap silently (int8 x + 300 adding 44), so it must
/// be a value of `type`, and not negative if `type` is unsigned.
void checkIntLiterals(const Operand &a, const Operand &b, DType type,
                      const std::string &op) {
  if (!type.isInt())
    return;
  std::optional<IntLiteral> la = intLiteral(a), lb = intLiteral(b);
  auto show = [](const Operand &x, std::optional<IntLiteral> literal) {
    return literal ? literal->str() : describeOperand(x);
  };
  auto negative = [](std::optional<IntLiteral> literal) {
    return literal && !literal->big && literal->value < 0;
  };
  bool unsignedType = type.isUnsigned() || type.isBool();
  if (unsignedType && (negative(la) || negative(lb)))
    fail(op + ": Cannot perform a binary operation between an unsigned "
              "tensor and a negative scalar (" + show(a, la) + " and " +
         show(b, lb) + "); cast one of them to a signed type first");
  auto checkRange = [&](std::optional<IntLiteral> literal,
                        const Operand &other) {
    if (!literal || (literal->big ? type.kind == ScalarKind::U64
                                  : holds(type, literal->value)))
      return;
    std::string hint;
    if (!isLiteral(other))
      hint = " (a Python int takes the type of the tensor it meets, here " +
             std::get<TValue>(other).describe() +
             "; cast the tensor to a wider type first)";
    fail(op + ": Scalar " + literal->str() + " is out of range for type " +
         tritonName(type) + hint);
  };
  checkRange(la, b);
  checkRange(lb, a);
}

/// A load's or store's cache modifier as Triton 3.6 spells it ("" for the
/// target's default).
std::optional<tile::CacheModifier> parseCacheModifier(const std::string &text,
                                                      bool isLoad) {
  if (text.empty())
    return std::nullopt;
  static const std::pair<const char *, tile::CacheModifier> loads[] = {
      {".ca", tile::CacheModifier::ca},
      {".cg", tile::CacheModifier::cg},
      {".cv", tile::CacheModifier::cv}};
  static const std::pair<const char *, tile::CacheModifier> stores[] = {
      {".wb", tile::CacheModifier::wb},
      {".cg", tile::CacheModifier::cg},
      {".cs", tile::CacheModifier::cs},
      {".wt", tile::CacheModifier::wt}};
  for (auto &[name, value] : isLoad ? ArrayRef(loads) : ArrayRef(stores))
    if (text == name)
      return value;
  fail(std::string(isLoad ? "load" : "store") + ": cache modifier '" + text +
       "' is not supported; " +
       (isLoad ? "loads take '.ca', '.cg' or '.cv'"
               : "stores take '.wb', '.cg', '.cs' or '.wt'"));
}

std::optional<tile::EvictionPolicy>
parseEvictionPolicy(const std::string &text, const char *what) {
  if (text.empty())
    return std::nullopt;
  if (text == "evict_first")
    return tile::EvictionPolicy::evict_first;
  if (text == "evict_last")
    return tile::EvictionPolicy::evict_last;
  fail(std::string(what) + ": eviction policy '" + text +
       "' is not supported; use 'evict_first' or 'evict_last'");
}

/// Triton's `sem=` of an atomic: "" is acq_rel.
tile::MemSemantic parseMemSemantic(const std::string &text,
                                   const std::string &what) {
  if (text.empty() || text == "acq_rel")
    return tile::MemSemantic::acq_rel;
  if (text == "relaxed")
    return tile::MemSemantic::relaxed;
  if (text == "acquire")
    return tile::MemSemantic::acquire;
  if (text == "release")
    return tile::MemSemantic::release;
  fail(what + ": Memory semantic '" + text +
       "' not supported; use 'relaxed', 'acquire', 'release' or 'acq_rel'");
}

/// Triton's `scope=` of an atomic: "" is gpu.
tile::MemSyncScope parseMemSyncScope(const std::string &text,
                                     const std::string &what) {
  if (text.empty() || text == "gpu")
    return tile::MemSyncScope::gpu;
  if (text == "cta")
    return tile::MemSyncScope::cta;
  if (text == "sys")
    return tile::MemSyncScope::sys;
  fail(what + ": Memory scope '" + text +
       "' not supported; use 'gpu', 'cta' or 'sys'");
}

} // namespace

//===----------------------------------------------------------------------===//
// TValue
//===----------------------------------------------------------------------===//

ArrayRef<int64_t> TValue::shape() const {
  return tile::getShapeOrEmpty(value.getType());
}

std::string TValue::describe() const {
  if (!isBlock())
    return dtype.str();
  return dtype.str() + shapeStr(shape());
}

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

struct TileBuilder::PendingMap {
  std::unique_ptr<Block> body;
  SmallVector<Value> srcs;
  SmallVector<int64_t> shape;
  int pack;
  OpBuilder::InsertPoint after;
};

struct TileBuilder::OpenRegion {
  Operation *op;
  OpBuilder::InsertPoint after;
  std::vector<DType> dtypes;
};

struct TileBuilder::CalleeFrame {
  func::FuncOp callee;
  OpBuilder::InsertPoint callerPoint;
  std::vector<OpenRegion> callerRegions;
  std::vector<std::unique_ptr<PendingMap>> callerMaps;
};

void tessel::registerTesselDialects(DialectRegistry &registry) {
  registry.insert<tile::TileDialect, arith::ArithDialect, math::MathDialect,
                  scf::SCFDialect, func::FuncDialect>();
  func::registerInlinerExtension(registry);
}

TileBuilder::TileBuilder()
    : context(std::make_unique<MLIRContext>(MLIRContext::Threading::DISABLED)),
      builder(context.get()), loc(UnknownLoc::get(context.get())) {
  DialectRegistry registry;
  registerTesselDialects(registry);
  context->appendDialectRegistry(registry);
  context->loadAllAvailableDialects();
  module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
}

TileBuilder::~TileBuilder() = default;

OwningOpRef<ModuleOp> TileBuilder::takeModule() { return std::move(module); }

void TileBuilder::setLoc(const std::string &file, int line, int col) {
  loc = FileLineColLoc::get(context.get(), file, line, col);
}

DType TileBuilder::parseDType(const std::string &text) const {
  auto dtype = DType::parse(text);
  if (!dtype)
    fail("unknown type '" + text + "'");
  return *dtype;
}

Type TileBuilder::typeFor(DType dtype, ArrayRef<int64_t> shape) {
  Type elt = dtype.toMLIR(context.get());
  if (shape.empty())
    return elt;
  // Entry points check with their own name first; this catches the rest.
  checkBlockShape(shape, "block");
  return RankedTensorType::get(shape, elt);
}

std::vector<TValue>
TileBuilder::createFunction(const std::string &name,
                            const std::vector<std::string> &argTypes) {
  if (function)
    fail("a builder holds one kernel function");
  std::vector<DType> dtypes;
  std::vector<int64_t> divisibility;
  std::vector<bool> noalias;
  SmallVector<Type> types;
  for (const std::string &text : argTypes) {
    // Marks after the type: "*fp32:16" (a multiple of 16: bytes for
    // pointers), "*fp32:noalias" (the array overlaps no other pointer
    // argument's), or both ("*fp32:16:noalias").
    SmallVector<StringRef> parts;
    StringRef(text).split(parts, ':');
    int64_t div = 1;
    bool isNoalias = false;
    for (StringRef mark : ArrayRef<StringRef>(parts).drop_front()) {
      if (mark == "noalias") {
        isNoalias = true;
        continue;
      }
      if (mark.getAsInteger(10, div) || div < 1 || !llvm::isPowerOf2_64(div))
        fail("argument type '" + text + "': a mark after ':' must be a "
             "divisibility (a power of 2) or 'noalias'");
    }
    dtypes.push_back(parseDType(parts[0].str()));
    if (isNoalias && !dtypes.back().isPointer)
      fail("argument type '" + text + "': only pointers can be 'noalias'");
    divisibility.push_back(div);
    noalias.push_back(isNoalias);
    types.push_back(dtypes.back().toMLIR(context.get()));
  }
  auto fn = func::FuncOp::create(builder, loc, name,
                                 builder.getFunctionType(types, {}));
  fn->setAttr("tile.kernel", builder.getUnitAttr());
  for (auto [i, div] : llvm::enumerate(divisibility))
    if (div > 1)
      fn.setArgAttr(i, "tile.divisibility", builder.getI32IntegerAttr(div));
  for (auto [i, isNoalias] : llvm::enumerate(noalias))
    if (isNoalias)
      fn.setArgAttr(i, "tile.noalias", builder.getUnitAttr());
  Block *entry = fn.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  function = fn;
  signature = dtypes;
  std::vector<TValue> args;
  for (auto [arg, dtype] : llvm::zip(entry->getArguments(), dtypes))
    args.push_back(make(arg, dtype));
  return args;
}

void TileBuilder::finishFunction() {
  if (!function)
    fail("no kernel function to finish");
  if (!openRegions.empty() || !pendingMaps.empty())
    fail("a loop, if, reduction or map_elementwise is still open");
  func::ReturnOp::create(builder, loc);
}

std::vector<TValue>
TileBuilder::beginCallee(const std::string &name,
                         const std::vector<TValue> &args) {
  if (!function)
    fail("a called function needs the kernel function first");
  if (module->lookupSymbol(name))
    fail("a function named '" + name + "' exists already");
  SmallVector<Type> types;
  for (const TValue &arg : args)
    types.push_back(arg.value.getType());
  auto frame = std::make_unique<CalleeFrame>();
  frame->callerPoint = builder.saveInsertionPoint();
  frame->callerRegions = std::move(openRegions);
  frame->callerMaps = std::move(pendingMaps);
  openRegions.clear();
  pendingMaps.clear();
  builder.setInsertionPointToEnd(module->getBody());
  auto fn = func::FuncOp::create(builder, loc, name,
                                 builder.getFunctionType(types, {}));
  fn.setPrivate();
  frame->callee = fn;
  Block *entry = fn.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  callees.push_back(std::move(frame));
  std::vector<TValue> params;
  for (auto [param, arg] : llvm::zip(entry->getArguments(), args))
    params.push_back(make(param, arg.dtype));
  return params;
}

void TileBuilder::finishCallee(const std::vector<TValue> &results) {
  if (callees.empty())
    fail("no called function to finish");
  if (!openRegions.empty() || !pendingMaps.empty())
    fail("a loop, if, reduction or map_elementwise is still open");
  std::unique_ptr<CalleeFrame> frame = std::move(callees.back());
  callees.pop_back();
  SmallVector<Value> values;
  SmallVector<Type> types;
  std::vector<DType> dtypes;
  for (const TValue &result : results) {
    values.push_back(result.value);
    types.push_back(result.value.getType());
    dtypes.push_back(result.dtype);
  }
  func::ReturnOp::create(builder, loc, values);
  func::FuncOp fn = frame->callee;
  fn.setFunctionType(
      builder.getFunctionType(fn.getArgumentTypes(), types));
  calleeResults[fn.getName()] = std::move(dtypes);
  openRegions = std::move(frame->callerRegions);
  pendingMaps = std::move(frame->callerMaps);
  builder.restoreInsertionPoint(frame->callerPoint);
}

bool TileBuilder::insideElementRegion() const {
  return !pendingMaps.empty() ||
         llvm::any_of(openRegions, [](const OpenRegion &r) {
           return isa<tile::ReduceOp, tile::ScanOp>(r.op);
         });
}

std::vector<TValue> TileBuilder::call(const std::string &name,
                                      const std::vector<TValue> &args) {
  auto fn = module->lookupSymbol<func::FuncOp>(name);
  auto results = calleeResults.find(name);
  if (!fn || results == calleeResults.end())
    fail("no finished function named '" + name + "'");
  if (fn.getNumArguments() != args.size())
    fail("'" + name + "' takes " + std::to_string(fn.getNumArguments()) +
         " arguments, got " + std::to_string(args.size()));
  SmallVector<Value> operands;
  for (auto [i, arg] : llvm::enumerate(args)) {
    if (arg.value.getType() != fn.getArgumentTypes()[i])
      fail("argument " + std::to_string(i) + " of '" + name + "' is " +
           arg.describe() + ", not of its parameter's type");
    operands.push_back(arg.value);
  }
  auto op = func::CallOp::create(builder, loc, fn, operands);
  std::vector<TValue> values;
  for (auto [value, dtype] : llvm::zip(op.getResults(), results->second))
    values.push_back(make(value, dtype));
  return values;
}

std::string TileBuilder::moduleString() {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  flags.enableDebugInfo(false);
  module->print(os, flags);
  return text;
}

//===----------------------------------------------------------------------===//
// Values, casts and broadcasting
//===----------------------------------------------------------------------===//

Value TileBuilder::constantScalar(const Operand &literal, DType dtype) {
  Type type = dtype.toMLIR(context.get());
  if (dtype.isPointer)
    fail("cannot make a pointer from a literal");
  if (dtype.isFloat()) {
    double v;
    if (auto *d = std::get_if<double>(&literal))
      v = *d;
    else if (auto *i = std::get_if<int64_t>(&literal))
      v = static_cast<double>(*i);
    else if (auto *u = std::get_if<uint64_t>(&literal))
      v = static_cast<double>(*u);
    else
      v = std::get<bool>(literal) ? 1.0 : 0.0;
    // An 8-bit float literal is rounded as a cast from fp32 rounds it
    // (saturating), not as APFloat would (e4m3 overflows to NaN there).
    if (dtype.isFP8()) {
      Type f32 = builder.getF32Type();
      Value wide = arith::ConstantOp::create(builder, loc, f32,
                                             builder.getFloatAttr(f32, v));
      return arith::TruncFOp::create(builder, loc, type, wide);
    }
    return arith::ConstantOp::create(builder, loc, type,
                                     builder.getFloatAttr(type, v));
  }
  int64_t v;
  if (auto *i = std::get_if<int64_t>(&literal))
    v = *i;
  else if (auto *u = std::get_if<uint64_t>(&literal))
    v = int64_t(*u); // the bits: a u64 constant, or truncated as a cast would
  else if (auto *b = std::get_if<bool>(&literal))
    v = *b;
  else {
    double d = std::get<double>(literal);
    if (dtype.isBool())
      v = d != 0.0;
    else
      v = static_cast<int64_t>(d);
  }
  if (dtype.isBool())
    v = v != 0;
  return arith::ConstantOp::create(builder, loc, type,
                                   builder.getIntegerAttr(type, v));
}

TValue TileBuilder::toValue(const Operand &x, std::optional<DType> like) {
  if (auto *v = std::get_if<TValue>(&x))
    return *v;
  DType dtype = like.value_or(literalType(x));
  return make(constantScalar(x, dtype), dtype);
}

TValue TileBuilder::castTo(const TValue &x, DType to) {
  DType from = x.dtype;
  if (from == to)
    return x;
  Type dstType = typeFor(to, x.shape());
  Value v = x.value;
  if (from.isPointer || to.isPointer) {
    DType i64{ScalarKind::I64};
    // The same addresses as pointers to another element type.
    if (from.isPointer && to.isPointer)
      return make(tile::PtrCastOp::create(builder, loc, dstType, v), to);
    // A 64-bit integer as the address of an element (Triton's int_to_ptr).
    if (to.isPointer && from.isInt() && from.bitwidth() == 64)
      return make(tile::IntToPtrOp::create(builder, loc, dstType, v), to);
    // A pointer as its address (a 64-bit integer), or as whether it is null.
    if (from.isPointer && to.isInt() && (to.bitwidth() == 64 || to.isBool()))
      return castTo(make(tile::PtrToIntOp::create(
                             builder, loc, typeFor(i64, x.shape()), v),
                         i64),
                    to);
    fail("cannot cast " + x.describe() + " to " + to.str() +
         ": pointers convert to other pointers, to and from 64-bit integers, "
         "and to bool");
  }
  auto zeroLike = [&](DType t) {
    return splatTo(make(constantScalar(int64_t(0), t), t), x.shape()).value;
  };
  if (to.isBool()) {
    if (from.isFloat())
      return make(arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::UNE,
                                        v, zeroLike(from)),
                  to);
    return make(arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ne, v,
                                      zeroLike(from)),
                to);
  }
  if (from.isInt() && to.isInt()) {
    if (from.bitwidth() == to.bitwidth())
      return make(v, to);
    if (from.bitwidth() > to.bitwidth())
      return make(arith::TruncIOp::create(builder, loc, dstType, v), to);
    if (from.isUnsigned() || from.isBool())
      return make(arith::ExtUIOp::create(builder, loc, dstType, v), to);
    return make(arith::ExtSIOp::create(builder, loc, dstType, v), to);
  }
  // 8-bit floats and integers convert through fp32, which holds every value
  // of an 8-bit float and rounds only integers too large for both anyway.
  if ((from.isFP8() && to.isInt()) || (from.isInt() && to.isFP8()))
    return castTo(castTo(x, DType{ScalarKind::F32}), to);
  if (from.isFloat() && to.isFloat()) {
    // fp16 <-> bf16 (and e4m3 <-> e5m2) have the same width but different
    // formats: go via fp32.
    if (from.bitwidth() == to.bitwidth())
      return castTo(castTo(x, DType{ScalarKind::F32}), to);
    if (from.bitwidth() > to.bitwidth())
      return make(arith::TruncFOp::create(builder, loc, dstType, v), to);
    return make(arith::ExtFOp::create(builder, loc, dstType, v), to);
  }
  if (from.isInt() && to.isFloat()) {
    if (from.isUnsigned() || from.isBool())
      return make(arith::UIToFPOp::create(builder, loc, dstType, v), to);
    return make(arith::SIToFPOp::create(builder, loc, dstType, v), to);
  }
  // float -> int
  if (to.isUnsigned())
    return make(arith::FPToUIOp::create(builder, loc, dstType, v), to);
  return make(arith::FPToSIOp::create(builder, loc, dstType, v), to);
}

TValue TileBuilder::splatTo(const TValue &x, ArrayRef<int64_t> shape) {
  if (shape.empty() || x.isBlock())
    return x;
  return make(tile::SplatOp::create(builder, loc, typeFor(x.dtype, shape),
                                    x.value),
              x.dtype);
}

std::vector<int64_t> TileBuilder::broadcastShapes(ArrayRef<int64_t> a,
                                                  ArrayRef<int64_t> b,
                                                  const std::string &what) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      fail(what + ": incompatible dimensions at index " + std::to_string(i) +
           ": " + std::to_string(da) + " and " + std::to_string(db) +
           " (shapes " + shapeStr(a) + " and " + shapeStr(b) + ")");
    out[i] = std::max(da, db);
  }
  checkBlockShape(out, what);
  return out;
}

TValue TileBuilder::broadcastValue(const TValue &x, ArrayRef<int64_t> shape,
                                   const char *what) {
  ArrayRef<int64_t> src = x.shape();
  if (src == shape)
    return x;
  checkBlockShape(shape, what);
  if (!x.isBlock())
    return splatTo(x, shape);
  if (src.size() > shape.size())
    fail(std::string(what) + ": cannot broadcast " + x.describe() +
         " to shape " + shapeStr(shape));
  TValue cur = x;
  while (cur.shape().size() < shape.size())
    cur = expandDims(cur, 0);
  for (auto [s, d] : llvm::zip(cur.shape(), shape))
    if (s != d && s != 1)
      fail(std::string(what) + ": cannot broadcast " + x.describe() +
           " to shape " + shapeStr(shape));
  if (cur.shape() == shape)
    return cur;
  return make(tile::BroadcastOp::create(builder, loc,
                                        typeFor(cur.dtype, shape), cur.value),
              cur.dtype);
}

DType TileBuilder::computationType(const Operand &a, const Operand &b,
                                   bool divOrMod, const std::string &op) {
  DType ta = isLiteral(a) ? literalType(a) : std::get<TValue>(a).dtype;
  DType tb = isLiteral(b) ? literalType(b) : std::get<TValue>(b).dtype;
  if (ta.isPointer || tb.isPointer)
    fail(op + ": invalid operands of type " + describeOperand(a) + " and " +
         describeOperand(b));
  if (isLiteral(a) != isLiteral(b)) {
    DType lit = isLiteral(a) ? ta : tb, ten = isLiteral(a) ? tb : ta;
    if (kindRank(lit) <= kindRank(ten)) {
      // Half-precision division happens in fp32 (rule 3 below).
      if (divOrMod &&
          (ten.kind == ScalarKind::F16 || ten.kind == ScalarKind::BF16))
        return DType{ScalarKind::F32};
      return ten;
    }
  }
  auto is = [&](ScalarKind k) { return ta.kind == k || tb.kind == k; };
  if (is(ScalarKind::F64))
    return DType{ScalarKind::F64};
  if (is(ScalarKind::F32))
    return DType{ScalarKind::F32};
  if (is(ScalarKind::F16))
    return divOrMod ? DType{ScalarKind::F32} : DType{ScalarKind::F16};
  if (ta.kind == ScalarKind::BF16 && tb.kind == ScalarKind::BF16)
    return divOrMod ? DType{ScalarKind::F32} : DType{ScalarKind::BF16};
  if (is(ScalarKind::BF16))
    return DType{ScalarKind::F32};
  // Two 8-bit floats: their own type when they agree, else fp16 (which holds
  // every value of both exactly). An 8-bit float and an integer block have no
  // common type (Triton's rule): one must be cast.
  if (ta.isFP8() && tb.isFP8())
    return ta == tb ? ta : DType{ScalarKind::F16};
  if (ta.isFP8() || tb.isFP8())
    fail(op + ": unexpected type " + describeOperand(a) + " and " +
         describeOperand(b) + ": no common type for them; cast one of them "
         "with .to()");
  if (divOrMod && ta.isUnsigned() != tb.isUnsigned() && !ta.isBool() &&
      !tb.isBool())
    fail(op + ": Cannot use /, // or % with " + describeOperand(a) + " and " +
         describeOperand(b) + " because they have different signedness; "
         "cast them to the same signedness");
  return integerPromote(ta, tb);
}

std::pair<TValue, TValue>
TileBuilder::promoteAndBroadcast(const Operand &a, const Operand &b,
                                 DType type, const std::string &op) {
  TValue va = castTo(toValue(a, type), type);
  TValue vb = castTo(toValue(b, type), type);
  auto shape = broadcastShapes(va.shape(), vb.shape(), op);
  return {broadcastValue(va, shape, op.c_str()),
          broadcastValue(vb, shape, op.c_str())};
}

TValue TileBuilder::toBool(const TValue &x) {
  if (x.dtype.isPointer)
    fail("expected a boolean or integer, got " + x.describe());
  return castTo(x, DType{ScalarKind::I1});
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

TValue TileBuilder::constant(Operand value, const std::string &dtype) {
  DType t = parseDType(dtype);
  if (auto *v = std::get_if<TValue>(&value))
    return castTo(*v, t);
  return make(constantScalar(value, t), t);
}

TValue TileBuilder::programId(int axis) {
  if (axis < 0 || axis > 2)
    fail("program_id axis must be 0, 1, or 2 but got " +
         std::to_string(axis));
  return make(tile::GetProgramIdOp::create(builder, loc, builder.getI32Type(), builder.getI32IntegerAttr(axis)),
              DType{ScalarKind::I32});
}

TValue TileBuilder::numPrograms(int axis) {
  if (axis < 0 || axis > 2)
    fail("num_programs axis must be 0, 1, or 2 but got " +
         std::to_string(axis));
  return make(tile::GetNumProgramsOp::create(builder, loc, builder.getI32Type(), builder.getI32IntegerAttr(axis)),
              DType{ScalarKind::I32});
}

TValue TileBuilder::arange(int64_t start, int64_t end) {
  if (start < INT32_MIN || end > INT32_MAX)
    fail("arange bounds must fit in int32");
  if (end <= start)
    fail("arange's end argument must be greater than the start argument");
  if (!llvm::isPowerOf2_64(end - start))
    fail("arange's range must be a power of 2");
  checkBlockShape({end - start}, "arange(" + std::to_string(start) + ", " +
                                     std::to_string(end) + ")");
  Type type = typeFor(DType{ScalarKind::I32}, {end - start});
  return make(tile::MakeRangeOp::create(builder, loc, type,
                                        builder.getI32IntegerAttr(start),
                                        builder.getI32IntegerAttr(end)),
              DType{ScalarKind::I32});
}

TValue TileBuilder::full(const std::vector<int64_t> &shape, Operand value,
                         const std::string &dtype) {
  DType t = parseDType(dtype);
  checkBlockShape(shape, "full");
  TValue scalar = castTo(toValue(value, t), t);
  if (scalar.isBlock())
    fail("full: the fill value must be a scalar, got " + scalar.describe());
  return splatTo(scalar, shape);
}

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

TValue TileBuilder::binary(const std::string &op, Operand lhs, Operand rhs,
                           bool sanitizeOverflow) {
  if (isLiteral(lhs) && isLiteral(rhs))
    fail(op + ": at least one operand must be a tensor");
  // Comparisons, tl.maximum/minimum and tl.div_rn make a Python number a
  // value of its own type first (Triton's to_tensor), which then promotes
  // with the other operand as any value does: int8 x < 300 compares in int32
  // and fp16 x < 0.1 in fp32. The other operations give a literal the other
  // operand's type (checkIntLiterals).
  if (llvm::is_contained({"eq", "ne", "lt", "le", "gt", "ge", "maximum",
                          "minimum", "div_rn"},
                         op)) {
    if (isLiteral(lhs))
      lhs = toValue(lhs);
    if (isLiteral(rhs))
      rhs = toValue(rhs);
  }
  auto dtypeOf = [](const Operand &x) {
    return isLiteral(x) ? literalType(x) : std::get<TValue>(x).dtype;
  };
  DType ta = dtypeOf(lhs), tb = dtypeOf(rhs);

  // Pointer arithmetic.
  if ((op == "add" || op == "sub") && (ta.isPointer || tb.isPointer)) {
    if (ta.isPointer && tb.isPointer && op == "add")
      fail("cannot add pointers together (" + describeOperand(lhs) + " and " +
           describeOperand(rhs) + "); add an integer offset to a pointer");
    if (op == "sub" && tb.isPointer)
      fail("invalid operands of type " + describeOperand(lhs) + " and " +
           describeOperand(rhs) + ": a pointer cannot be subtracted");
    const Operand &p = ta.isPointer ? lhs : rhs, &o = ta.isPointer ? rhs : lhs;
    TValue ptr = std::get<TValue>(p);
    DType offType = dtypeOf(o);
    if (!offType.isInt() || offType.isBool())
      fail("invalid operands of type " + describeOperand(lhs) + " and " +
           describeOperand(rhs) + ": pointer offsets must be integers");
    TValue off = toValue(o);
    if (op == "sub")
      off = unary("neg", off);
    auto shape = broadcastShapes(ptr.shape(), off.shape(), "pointer arithmetic");
    ptr = broadcastValue(ptr, shape, "pointer arithmetic");
    off = broadcastValue(off, shape, "pointer arithmetic");
    return make(tile::AddPtrOp::create(builder, loc, ptr.value.getType(),
                                       ptr.value, off.value),
                ptr.dtype);
  }
  if (ta.isPointer || tb.isPointer)
    fail(op + ": invalid operands of type " + describeOperand(lhs) + " and " +
         describeOperand(rhs));

  if (op == "logical_and" || op == "logical_or") {
    // Triton bitcasts both operands to int1, so only 1-bit values pass (an
    // integer's truth would need x != 0); its words, then ours.
    for (const Operand &x : {lhs, rhs}) {
      DType t = dtypeOf(x);
      if (!t.isPointer && t.bitwidth() != 1)
        fail(op + ": Cannot bitcast data-type of size " +
             std::to_string(t.bitwidth()) +
             " to data-type of size 1: `and` and `or` take booleans, got " +
             describeOperand(x) + " (write x != 0 to test a number)");
    }
    TValue a = toBool(toValue(lhs)), b = toBool(toValue(rhs));
    auto [va, vb] = promoteAndBroadcast(a, b, DType{ScalarKind::I1}, op);
    Value r = op == "logical_and"
                  ? Value(arith::AndIOp::create(builder, loc, va.value, vb.value))
                  : Value(arith::OrIOp::create(builder, loc, va.value, vb.value));
    return make(r, DType{ScalarKind::I1});
  }

  if (op == "truediv" || op == "div_rn") {
    DType t = computationType(lhs, rhs, /*divOrMod=*/true, op);
    checkIntLiterals(lhs, rhs, t, op);
    if (t.isInt())
      t = DType{ScalarKind::F32};
    auto [a, b] = promoteAndBroadcast(lhs, rhs, t, op);
    // `/` may use the reciprocal (Triton's fp32 division is approximate too;
    // x / s over a block then becomes x * (1 / s)); div_rn is IEEE-rounded.
    auto flags = op == "truediv" ? arith::FastMathFlags::arcp
                                 : arith::FastMathFlags::none;
    return make(arith::DivFOp::create(builder, loc, a.value, b.value, flags),
                t);
  }

  bool divOrMod = op == "floordiv" || op == "mod";
  DType t = computationType(lhs, rhs, divOrMod, op);
  checkIntLiterals(lhs, rhs, t, op);
  bool isBitwise = op == "and" || op == "or" || op == "xor" ||
                   op == "lshift" || op == "rshift";
  if (isBitwise && t.isFloat())
    fail(op + ": invalid operands of type " + describeOperand(lhs) + " and " +
         describeOperand(rhs) + " (bitwise operators and shifts take "
         "integers)");
  if (op == "floordiv" && t.isFloat())
    fail(op + ": unexpected type " + describeOperand(lhs) + " and " +
         describeOperand(rhs) + ": // takes integers");
  auto [a, b] = promoteAndBroadcast(lhs, rhs, t, op);
  if (debug && sanitizeOverflow && (op == "add" || op == "sub" || op == "mul"))
    checkIntegerOverflow(op, a, b); // Triton's sanitize_overflow
  Value x = a.value, y = b.value;
  bool f = t.isFloat(), u = t.isUnsigned() || t.isBool();

  static const std::pair<const char *, std::pair<arith::CmpFPredicate,
                                                 arith::CmpIPredicate>>
      cmpPreds[] = {
          {"eq", {arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq}},
          {"ne", {arith::CmpFPredicate::UNE, arith::CmpIPredicate::ne}},
          {"lt", {arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt}},
          {"le", {arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle}},
          {"gt", {arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt}},
          {"ge", {arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge}},
      };
  for (auto &[name, preds] : cmpPreds) {
    if (op != name)
      continue;
    Value r;
    if (f) {
      r = arith::CmpFOp::create(builder, loc, preds.first, x, y);
    } else {
      arith::CmpIPredicate p = preds.second;
      if (u) {
        if (p == arith::CmpIPredicate::slt) p = arith::CmpIPredicate::ult;
        if (p == arith::CmpIPredicate::sle) p = arith::CmpIPredicate::ule;
        if (p == arith::CmpIPredicate::sgt) p = arith::CmpIPredicate::ugt;
        if (p == arith::CmpIPredicate::sge) p = arith::CmpIPredicate::uge;
      }
      r = arith::CmpIOp::create(builder, loc, p, x, y);
    }
    return make(r, DType{ScalarKind::I1});
  }

  Value r;
  if (op == "add")
    r = f ? Value(arith::AddFOp::create(builder, loc, x, y))
          : Value(arith::AddIOp::create(builder, loc, x, y));
  else if (op == "sub")
    r = f ? Value(arith::SubFOp::create(builder, loc, x, y))
          : Value(arith::SubIOp::create(builder, loc, x, y));
  else if (op == "mul")
    r = f ? Value(arith::MulFOp::create(builder, loc, x, y))
          : Value(arith::MulIOp::create(builder, loc, x, y));
  else if (op == "floordiv")
    r = u ? Value(arith::DivUIOp::create(builder, loc, x, y))
          : Value(arith::DivSIOp::create(builder, loc, x, y));
  else if (op == "mod")
    r = f   ? Value(arith::RemFOp::create(builder, loc, x, y))
        : u ? Value(arith::RemUIOp::create(builder, loc, x, y))
            : Value(arith::RemSIOp::create(builder, loc, x, y));
  else if (op == "and")
    r = arith::AndIOp::create(builder, loc, x, y);
  else if (op == "or")
    r = arith::OrIOp::create(builder, loc, x, y);
  else if (op == "xor")
    r = arith::XOrIOp::create(builder, loc, x, y);
  else if (op == "lshift")
    r = arith::ShLIOp::create(builder, loc, x, y);
  else if (op == "rshift") {
    // The value being shifted decides, not the promoted type: a signed value
    // shifts arithmetically even when an unsigned amount makes the operation
    // unsigned (int8 -128 >> uint8 1 is 0xC0 as uint8), as in Triton. For
    // `literal >> tensor` the tensor decides, as Triton's reflected operator
    // does (the literal took the tensor's type anyway).
    DType shifted = isLiteral(lhs) ? tb : ta;
    bool arithmetic = !shifted.isUnsigned() && !shifted.isBool();
    r = arithmetic ? Value(arith::ShRSIOp::create(builder, loc, x, y))
                   : Value(arith::ShRUIOp::create(builder, loc, x, y));
  }
  else if (op == "maximum")
    r = f   ? Value(arith::MaxNumFOp::create(builder, loc, x, y))
        : u ? Value(arith::MaxUIOp::create(builder, loc, x, y))
            : Value(arith::MaxSIOp::create(builder, loc, x, y));
  else if (op == "minimum")
    r = f   ? Value(arith::MinNumFOp::create(builder, loc, x, y))
        : u ? Value(arith::MinUIOp::create(builder, loc, x, y))
            : Value(arith::MinSIOp::create(builder, loc, x, y));
  else
    fail("unknown binary operation '" + op + "'");
  return make(r, t);
}

TValue TileBuilder::unary(const std::string &op, Operand operand) {
  TValue x = toValue(operand);
  if (op == "plus")
    return x;
  if (x.dtype.isPointer)
    fail(op == "neg"
             ? "wrong type argument to unary minus (" + x.describe() + ")"
             : op + ": unsupported operand " + x.describe());
  if (op == "not") {
    TValue b = toBool(x);
    TValue one = splatTo(make(constantScalar(true, b.dtype), b.dtype), b.shape());
    return make(arith::XOrIOp::create(builder, loc, b.value, one.value), b.dtype);
  }
  if (op == "neg") {
    if (x.dtype.isFloat())
      return make(arith::NegFOp::create(builder, loc, x.value), x.dtype);
    TValue zero =
        splatTo(make(constantScalar(int64_t(0), x.dtype), x.dtype), x.shape());
    return make(arith::SubIOp::create(builder, loc, zero.value, x.value),
                x.dtype);
  }
  if (op == "invert") {
    if (!x.dtype.isInt())
      fail("wrong type argument to unary invert (" + x.describe() +
           "): ~ takes integers");
    TValue ones = splatTo(
        make(constantScalar(int64_t(-1), x.dtype), x.dtype), x.shape());
    return make(arith::XOrIOp::create(builder, loc, x.value, ones.value),
                x.dtype);
  }
  fail("unknown unary operation '" + op + "'");
}

TValue TileBuilder::where(Operand cond, Operand x, Operand y) {
  TValue c = toBool(toValue(cond));
  auto dtypeOf = [](const Operand &v) {
    return isLiteral(v) ? literalType(v) : std::get<TValue>(v).dtype;
  };
  TValue vx, vy;
  if (dtypeOf(x).isPointer || dtypeOf(y).isPointer) {
    vx = toValue(x);
    vy = toValue(y);
    if (vx.dtype != vy.dtype)
      fail("where: both values must have the same pointer type, got " +
           vx.describe() + " and " + vy.describe());
  } else {
    DType t = computationType(x, y, false, "where");
    checkIntLiterals(x, y, t, "where");
    vx = castTo(toValue(x, t), t);
    vy = castTo(toValue(y, t), t);
  }
  auto shape = broadcastShapes(c.shape(), vx.shape(), "where");
  shape = broadcastShapes(shape, vy.shape(), "where");
  c = broadcastValue(c, shape, "where");
  vx = broadcastValue(vx, shape, "where");
  vy = broadcastValue(vy, shape, "where");
  return make(arith::SelectOp::create(builder, loc, c.value, vx.value, vy.value),
              vx.dtype);
}

TValue TileBuilder::math(const std::string &fn, Operand operand) {
  TValue x = toValue(operand);
  if (x.dtype.isPointer)
    fail(fn + ": unsupported operand " + x.describe());
  if (fn == "abs") {
    if (x.dtype.isFloat())
      return make(math::AbsFOp::create(builder, loc, x.value), x.dtype);
    if (x.dtype.isUnsigned() || x.dtype.isBool())
      return x;
    return make(math::AbsIOp::create(builder, loc, x.value), x.dtype);
  }
  // Transcendental functions compute in fp32 (or fp64) and return the input's
  // float type; integers become fp32.
  DType resultType = x.dtype.isFloat() ? x.dtype : DType{ScalarKind::F32};
  DType computeType = x.dtype.kind == ScalarKind::F64 ? DType{ScalarKind::F64}
                                                       : DType{ScalarKind::F32};
  Value v = castTo(x, computeType).value;
  Value r;
  if (fn == "exp") r = math::ExpOp::create(builder, loc, v);
  else if (fn == "exp2") r = math::Exp2Op::create(builder, loc, v);
  else if (fn == "log") r = math::LogOp::create(builder, loc, v);
  else if (fn == "log2") r = math::Log2Op::create(builder, loc, v);
  else if (fn == "sqrt") r = math::SqrtOp::create(builder, loc, v);
  else if (fn == "rsqrt") r = math::RsqrtOp::create(builder, loc, v);
  else if (fn == "sin") r = math::SinOp::create(builder, loc, v);
  else if (fn == "cos") r = math::CosOp::create(builder, loc, v);
  else if (fn == "floor") r = math::FloorOp::create(builder, loc, v);
  else if (fn == "ceil") r = math::CeilOp::create(builder, loc, v);
  else if (fn == "erf") r = math::ErfOp::create(builder, loc, v);
  else if (fn == "sigmoid") {
    Value neg = arith::NegFOp::create(builder, loc, v);
    Value e = math::ExpOp::create(builder, loc, neg);
    Value one = splatTo(make(constantScalar(1.0, computeType), computeType),
                        x.shape())
                    .value;
    Value den = arith::AddFOp::create(builder, loc, one, e);
    r = arith::DivFOp::create(builder, loc, one, den);
  } else
    fail("unknown math function '" + fn + "'");
  return castTo(make(r, computeType), resultType);
}

void TileBuilder::debugBarrier() { tile::DebugBarrierOp::create(builder, loc); }

TValue TileBuilder::fma(Operand x, Operand y, Operand z) {
  // Triton promotes the pairs (x, y), (z, x) and (z, y) as a binary op
  // would; that makes one type for all three.
  DType t = computationType(x, y, false, "fma");
  TValue vx = castTo(toValue(x, t), t), vy = castTo(toValue(y, t), t);
  DType u = computationType(z, vx, false, "fma");
  TValue vz = castTo(toValue(z, u), u);
  vx = castTo(vx, u);
  vy = castTo(vy, u);
  if (!u.isFloat())
    fail("fma: operands must be floating point, got " + vx.describe() +
         ", " + vy.describe() + " and " + vz.describe());
  auto shape = broadcastShapes(vx.shape(), vy.shape(), "fma");
  shape = broadcastShapes(shape, vz.shape(), "fma");
  vx = broadcastValue(vx, shape, "fma");
  vy = broadcastValue(vy, shape, "fma");
  vz = broadcastValue(vz, shape, "fma");
  return make(math::FmaOp::create(builder, loc, vx.value, vy.value, vz.value),
              u);
}

TValue TileBuilder::cast(Operand operand, const std::string &dtype,
                         bool bitcast, const std::string &rounding) {
  DType to = parseDType(dtype);
  TValue x = toValue(operand);
  if (!rounding.empty()) {
    if (rounding != "rtne" && rounding != "rtz")
      fail("fp_downcast_rounding must be 'rtne' or 'rtz', got '" + rounding +
           "'");
    if (bitcast || !x.dtype.isFloat() || !to.isFloat() ||
        to.bitwidth() >= x.dtype.bitwidth())
      fail("fp_downcast_rounding should be set only for truncating fp "
           "conversions. Source scalar type is " + x.dtype.str() +
           " and destination type is " + to.str());
    if (rounding == "rtz") {
      // Rounded to nearest even, then one step toward zero wherever that
      // went past x (a magnitude one unit smaller is the next value toward
      // zero, infinity's is the largest finite one; NaN compares false).
      TValue nearest = castTo(x, to);
      TValue back = castTo(nearest, x.dtype);
      Value past = arith::CmpFOp::create(
          builder, loc, arith::CmpFPredicate::OGT,
          math::AbsFOp::create(builder, loc, back.value),
          math::AbsFOp::create(builder, loc, x.value));
      Type bitsType = tile::getTypeWithShapeOf(
          IntegerType::get(context.get(), to.bitwidth()),
          nearest.value.getType());
      Value bits =
          arith::BitcastOp::create(builder, loc, bitsType, nearest.value);
      Value one = arith::ConstantOp::create(builder, loc, bitsType,
                                            builder.getOneAttr(bitsType));
      Value smaller = arith::SubIOp::create(builder, loc, bits, one);
      Value chosen =
          arith::SelectOp::create(builder, loc, past, smaller, bits);
      return make(arith::BitcastOp::create(builder, loc,
                                           nearest.value.getType(), chosen),
                  to);
    }
  }
  if (!bitcast)
    return castTo(x, to);
  if (x.dtype == to)
    return x;
  // As in Triton, a bitcast from or to pointers is the cast.
  if (x.dtype.isPointer || to.isPointer)
    return castTo(x, to);
  if (x.dtype.bitwidth() != to.bitwidth())
    fail("Cannot bitcast data-type of size " +
         std::to_string(x.dtype.bitwidth()) + " to data-type of size " +
         std::to_string(to.bitwidth()) + " (" + x.describe() + " to " +
         to.str() + ")");
  if (x.dtype.isInt() && to.isInt())
    return make(x.value, to);
  return make(arith::BitcastOp::create(builder, loc, typeFor(to, x.shape()),
                                       x.value),
              to);
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

TValue TileBuilder::broadcastTo(Operand operand,
                                const std::vector<int64_t> &shape) {
  return broadcastValue(toValue(operand), shape, "broadcast_to");
}

TValue TileBuilder::expandDims(const TValue &x, int axis) {
  int rank = x.shape().size();
  if (!x.isBlock()) {
    // A scalar has rank 0: axis 0 or -1 makes it a block of one element.
    if (axis != 0 && axis != -1)
      fail("expand_dims: invalid axis " + std::to_string(axis) +
           ". Expected -1 <= axis < 1 (axis out of range for the scalar " +
           x.describe() + ")");
    return splatTo(x, {1});
  }
  if (axis < -rank - 1 || axis > rank)
    fail("expand_dims: invalid axis " + std::to_string(axis) + ". Expected " +
         std::to_string(-rank - 1) + " <= axis < " + std::to_string(rank + 1) +
         " (axis out of range for " + x.describe() + ")");
  if (axis < 0)
    axis += rank + 1;
  SmallVector<int64_t> shape(x.shape());
  shape.insert(shape.begin() + axis, 1);
  checkBlockShape(shape, "expand_dims");
  return make(tile::ExpandDimsOp::create(builder, loc,
                                         typeFor(x.dtype, shape), x.value,
                                         builder.getI32IntegerAttr(axis)),
              x.dtype);
}

TValue TileBuilder::reshape(const TValue &x,
                            const std::vector<int64_t> &shape) {
  // Blocks stay blocks: a scalar comes from a reduction, not a reshape.
  if (shape.empty())
    fail("reshape: the target shape must have at least one dimension");
  checkBlockShape(shape, "reshape");
  int64_t numel = 1, target = 1;
  for (int64_t d : x.shape())
    numel *= d;
  for (int64_t d : shape)
    target *= d;
  if (numel != target)
    fail("reshape() cannot change total number of elements in tensor: " +
         x.describe() + " to " + shapeStr(shape) + " (" +
         std::to_string(numel) + " vs " + std::to_string(target) +
         " elements)");
  if (!x.isBlock())
    return splatTo(x, shape);
  if (ArrayRef<int64_t>(shape) == x.shape())
    return x;
  return make(tile::ReshapeOp::create(builder, loc, typeFor(x.dtype, shape),
                                      x.value),
              x.dtype);
}

TValue TileBuilder::permute(const TValue &x, const std::vector<int> &order) {
  if (x.shape().size() != order.size())
    fail("permute: order of " + std::to_string(order.size()) +
         " dimensions for " + x.describe());
  SmallVector<int64_t> shape;
  SmallVector<bool> seen(order.size(), false);
  for (int o : order) {
    if (o < 0 || o >= (int)order.size() || seen[o])
      fail("permute: dims must be a permutation of 0, 1, ..., n-1, but were " +
           shapeStr(SmallVector<int64_t>(order.begin(), order.end())) +
           " (" + x.describe() + ")");
    seen[o] = true;
    shape.push_back(x.shape()[o]);
  }
  SmallVector<int32_t> order32(order.begin(), order.end());
  return make(tile::TransOp::create(builder, loc, typeFor(x.dtype, shape),
                                    x.value,
                                    builder.getDenseI32ArrayAttr(order32)),
              x.dtype);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

TValue TileBuilder::load(const TValue &ptrIn, std::optional<Operand> maskOp,
                         std::optional<Operand> otherOp,
                         const std::string &cacheModifier,
                         const std::string &evictionPolicy, bool isVolatile) {
  // Checked first: a bad modifier is reported whatever else is wrong.
  auto cache = parseCacheModifier(cacheModifier, /*isLoad=*/true);
  auto evict = parseEvictionPolicy(evictionPolicy, "load");
  if (!ptrIn.dtype.isPointer)
    fail("load: expected a pointer or a block of pointers, got " +
         ptrIn.describe());
  TValue ptr = ptrIn;
  std::optional<TValue> mask;
  if (maskOp) {
    mask = toValue(*maskOp);
    if (!mask->dtype.isBool())
      fail("load: the mask must be boolean, got " + mask->describe());
    if (!ptr.isBlock() && mask->isBlock())
      fail("load: the mask is a block (" + mask->describe() +
           ") but the pointer is a scalar (" + ptr.describe() + ")");
    mask = broadcastValue(*mask, ptr.shape(), "load mask");
  }
  DType elt = ptr.dtype.pointee();
  Value other;
  if (otherOp) {
    TValue o = castTo(toValue(*otherOp, elt), elt);
    if (!ptr.isBlock() && o.isBlock())
      fail("load: `other` is a block (" + o.describe() +
           ") but the pointer is a scalar (" + ptr.describe() + ")");
    other = broadcastValue(o, ptr.shape(), "load other").value;
  }
  Type resultType = typeFor(elt, ptr.shape());
  auto op = tile::LoadOp::create(
      builder, loc, resultType, ptr.value, mask ? mask->value : Value(), other,
      cache ? tile::CacheModifierAttr::get(context.get(), *cache) : nullptr,
      evict ? tile::EvictionPolicyAttr::get(context.get(), *evict) : nullptr,
      isVolatile);
  return make(op, elt);
}

Value TileBuilder::descriptorIndex(const Operand &x, DType type,
                                   const std::string &what) {
  if (auto *literal = std::get_if<int64_t>(&x)) {
    bool fits = type.kind == ScalarKind::I64 ||
                (*literal >= INT32_MIN && *literal <= INT32_MAX);
    if (!fits)
      fail(what + " must fit in " + type.str() + ", got " +
           std::to_string(*literal));
  }
  if (auto *literal = std::get_if<uint64_t>(&x))
    fail(what + " must fit in " + type.str() + ", got " +
         std::to_string(*literal));
  if (std::holds_alternative<double>(x) || std::holds_alternative<bool>(x))
    fail(what + " must be an integer");
  TValue v = toValue(x, type);
  if (v.isBlock() || !v.dtype.isInt() || v.dtype.isBool())
    fail(what + " must be an integer scalar, got " + v.describe());
  return castTo(v, type).value;
}

void TileBuilder::checkDescriptorAlignment(
    const TValue &base, const std::vector<Operand> &strides) {
  const std::string what = "tl.make_tensor_descriptor()";
  if (!base.dtype.isPointer || base.isBlock())
    return; // refused with the first access
  uint64_t elementBytes = std::max(1u, base.dtype.pointee().bitwidth() / 8);
  std::string where;
  if (auto fileLine = dyn_cast<FileLineColLoc>(loc))
    where = fileLine.getFilename().str() + ":" +
            std::to_string(fileLine.getLine()) + ": ";
  // `value` (in units of `unit` bytes) must be a multiple of 16 bytes.
  auto check = [&](std::optional<ArgumentAffine> value, uint64_t unit,
                   const std::string &rule, const std::string &unitText) {
    if (!value)
      return;
    uint64_t scale = value->scale * unit, offset = value->offset * unit;
    func::FuncOp kernel;
    if (value->argument) {
      // The function being built (argumentAffine saw its argument).
      Operation *parent = builder.getInsertionBlock()->getParentOp();
      kernel = dyn_cast<func::FuncOp>(parent);
      if (!kernel)
        kernel = parent->getParentOfType<func::FuncOp>();
      // A specialized divisibility of the argument may settle it.
      if (auto d = kernel.getArgAttrOfType<IntegerAttr>(
              *value->argument, "tile.divisibility"))
        if ((scale * uint64_t(d.getInt())) % 16 == 0)
          scale = 0;
    }
    if (scale % 16 == 0) {
      if (offset % 16)
        fail(what + ": " + rule + ", got " +
             (value->argument
                  ? std::to_string(offset % 16) + " bytes past one"
                  : std::to_string(int64_t(value->offset)) + unitText));
      return;
    }
    addLaunchCheck(kernel, {*value->argument, scale, offset, 16,
                            where + what + ": " + rule});
  };
  auto affineOf = [&](const Operand &x) -> std::optional<ArgumentAffine> {
    if (auto *literal = std::get_if<int64_t>(&x))
      return ArgumentAffine{std::nullopt, 0, uint64_t(*literal)};
    if (auto *v = std::get_if<TValue>(&x))
      if (!v->isBlock() && v->dtype.isInt() && !v->dtype.isBool())
        return argumentAffine(v->value);
    return std::nullopt; // refused with the first access
  };
  check(argumentAffine(base.value), 1,
        "the base's address must be a multiple of 16 bytes", "");
  for (size_t d = 0; d + 1 < strides.size(); ++d)
    check(affineOf(strides[d]), elementBytes,
          "strides[" + std::to_string(d) + "] must be a multiple of 16 bytes",
          " elements of " + std::to_string(elementBytes) + " bytes");
}

TileBuilder::DescriptorOperands TileBuilder::descriptorOperands(
    const std::string &what, const TValue &base,
    const std::vector<Operand> &shape, const std::vector<Operand> &strides,
    const std::vector<Operand> &offsets, const std::vector<int64_t> &block) {
  if (!base.dtype.isPointer || base.isBlock())
    fail(what + ": the base must be a pointer, got " + base.describe());
  size_t rank = block.size();
  if (rank < 1 || rank > 5)
    fail(what + ": a descriptor has 1 to 5 dimensions, got " +
         std::to_string(rank));
  if (shape.size() != rank || strides.size() + 1 != rank)
    fail(what + ": a block of rank " + std::to_string(rank) + " needs " +
         std::to_string(rank) + " sizes and " + std::to_string(rank - 1) +
         " strides");
  if (offsets.size() != rank)
    fail(what + ": expected " + std::to_string(rank) +
         " offsets (one per dimension of the block), got " +
         std::to_string(offsets.size()));
  for (auto [d, size] : llvm::enumerate(block))
    if (size < 1 || !llvm::isPowerOf2_64(size))
      fail(what + ": block dimension " + std::to_string(d) +
           " must be a power of 2, got " + std::to_string(size));
  DType i32{ScalarKind::I32, false}, i64{ScalarKind::I64, false};
  DescriptorOperands out;
  for (auto [d, x] : llvm::enumerate(shape))
    out.shape.push_back(
        descriptorIndex(x, i32, what + ": shape[" + std::to_string(d) + "]"));
  for (auto [d, x] : llvm::enumerate(strides))
    out.strides.push_back(
        descriptorIndex(x, i64, what + ": strides[" + std::to_string(d) + "]"));
  for (auto [d, x] : llvm::enumerate(offsets))
    out.offsets.push_back(
        descriptorIndex(x, i32, what + ": offset " + std::to_string(d)));
  return out;
}

TValue TileBuilder::descriptorLoad(const TValue &base,
                                   const std::vector<Operand> &shape,
                                   const std::vector<Operand> &strides,
                                   const std::vector<Operand> &offsets,
                                   const std::vector<int64_t> &block,
                                   bool nanPadding,
                                   std::optional<int> tensorMap) {
  const std::string what = "tensor descriptor load";
  // A tensor map is one of the kernel's arguments: a called function reads
  // its descriptors' arrays through their base, shape and strides.
  if (!callees.empty())
    tensorMap = std::nullopt;
  DescriptorOperands ops =
      descriptorOperands(what, base, shape, strides, offsets, block);
  DType elt = base.dtype.pointee();
  if (nanPadding && !elt.isFloat())
    fail(what + ": padding 'nan' needs a floating-point array, got " +
         elt.str());
  auto op = tile::DescriptorLoadOp::create(
      builder, loc, typeFor(elt, block), base.value, ops.shape, ops.strides,
      ops.offsets, nanPadding,
      tensorMap ? builder.getI32IntegerAttr(*tensorMap) : IntegerAttr());
  return make(op, elt);
}

void TileBuilder::descriptorStore(const TValue &base,
                                  const std::vector<Operand> &shape,
                                  const std::vector<Operand> &strides,
                                  const std::vector<Operand> &offsets,
                                  Operand valueOp,
                                  const std::vector<int64_t> &block,
                                  std::optional<int> tensorMap) {
  const std::string what = "tensor descriptor store";
  // A tensor map is one of the kernel's arguments: a called function reads
  // its descriptors' arrays through their base, shape and strides.
  if (!callees.empty())
    tensorMap = std::nullopt;
  DescriptorOperands ops =
      descriptorOperands(what, base, shape, strides, offsets, block);
  DType elt = base.dtype.pointee();
  TValue value = toValue(valueOp, elt);
  if (value.dtype.isPointer)
    fail(what + ": cannot store pointers (" + value.describe() + ")");
  if (value.isBlock() && value.shape() != ArrayRef<int64_t>(block)) {
    std::string blockText;
    for (auto [d, size] : llvm::enumerate(block))
      blockText += (d ? ", " : "") + std::to_string(size);
    fail(what + ": the value's shape " + value.describe() +
         " is not the block shape [" + blockText + "]");
  }
  // The value takes the descriptor's type, as in Triton (a scalar fills the
  // block).
  value = broadcastValue(castTo(value, elt), block, "tensor descriptor store");
  tile::DescriptorStoreOp::create(
      builder, loc, base.value, ops.shape, ops.strides, ops.offsets,
      value.value,
      tensorMap ? builder.getI32IntegerAttr(*tensorMap) : IntegerAttr());
}

void TileBuilder::store(const TValue &ptr, Operand valueOp,
                        std::optional<Operand> maskOp,
                        const std::string &cacheModifier,
                        const std::string &evictionPolicy) {
  auto cache = parseCacheModifier(cacheModifier, /*isLoad=*/false);
  auto evict = parseEvictionPolicy(evictionPolicy, "store");
  if (!ptr.dtype.isPointer)
    fail("store: expected a pointer or a block of pointers, got " +
         ptr.describe());
  if (ptr.dtype.isConst)
    fail("Cannot store to a constant pointer (" + ptr.describe() +
         ": a tl.const parameter's)");
  DType elt = ptr.dtype.pointee();
  TValue value = toValue(valueOp, elt);
  // Pointers are stored as Triton stores them: cast to the array's type,
  // which only a 64-bit integer array takes (their addresses).
  if (value.dtype.isPointer) {
    if (!elt.isInt() || elt.isBool() || elt.bitwidth() != 64)
      fail("store: cannot store pointers (" + value.describe() +
           ") into an array of " + elt.str() +
           ": only a 64-bit integer array holds them (their addresses)");
    value = castTo(value, elt);
  }
  if (!ptr.isBlock() && value.isBlock())
    fail("store: the value is a block (" + value.describe() +
         ") but the pointer is a scalar (" + ptr.describe() + ")");
  if (value.isBlock()) {
    auto common = broadcastShapes(value.shape(), ptr.shape(), "store");
    if (ArrayRef<int64_t>(common) != ptr.shape())
      fail("store: value " + value.describe() +
           " does not fit the pointer block " + ptr.describe() +
           ": its shape must broadcast to the pointer's shape");
  }
  // Bools are stored as Triton stores them: as the value cast to int8, so
  // 0.5 and 256 store False (a cast straight to bool would test != 0).
  if (elt.isBool() && !value.dtype.isBool())
    value = castTo(value, DType{ScalarKind::I8, false});
  value = broadcastValue(castTo(value, elt), ptr.shape(), "store");
  Value mask;
  if (maskOp) {
    TValue m = toValue(*maskOp);
    if (!m.dtype.isBool())
      fail("store: the mask must be boolean, got " + m.describe());
    if (!ptr.isBlock() && m.isBlock())
      fail("store: the mask is a block (" + m.describe() +
           ") but the pointer is a scalar (" + ptr.describe() + ")");
    mask = broadcastValue(m, ptr.shape(), "store mask").value;
  }
  tile::StoreOp::create(
      builder, loc, ptr.value, value.value, mask,
      cache ? tile::CacheModifierAttr::get(context.get(), *cache) : nullptr,
      evict ? tile::EvictionPolicyAttr::get(context.get(), *evict) : nullptr);
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

TValue TileBuilder::atomicRMW(const std::string &op, const TValue &ptr,
                              Operand valueOp, std::optional<Operand> maskOp,
                              const std::string &sem,
                              const std::string &scope) {
  const std::string what = "atomic_" + op;
  if (op != "add" && op != "and" && op != "or" && op != "xor" &&
      op != "max" && op != "min" && op != "xchg")
    fail("unknown atomic operation '" + op + "'");
  if (!ptr.dtype.isPointer)
    fail(what + ": expected a pointer or a block of pointers, got " +
         ptr.describe());
  if (ptr.dtype.isConst)
    fail(what + ": Cannot store to a constant pointer (" + ptr.describe() +
         ": a tl.const parameter's)");
  // Triton's element types: 32- and 64-bit integers and floats; fp16 and
  // bf16 for add only.
  DType elt = ptr.dtype.pointee();
  if (elt.kind == ScalarKind::F16 && op != "add")
    fail(what + " does not support fp16");
  if (elt.kind == ScalarKind::BF16 && op != "add")
    fail(what + " does not support bf16");
  if (elt.bitwidth() < 32 && elt.kind != ScalarKind::F16 &&
      elt.kind != ScalarKind::BF16)
    fail(what + " does not support " + tritonName(elt));
  tile::MemSemantic memSem = parseMemSemantic(sem, what);
  tile::MemSyncScope memScope = parseMemSyncScope(scope, what);
  TValue value = toValue(valueOp, elt);
  if (value.dtype.isPointer)
    fail(what + ": the value must be a number, got " + value.describe());
  if (!ptr.isBlock() && value.isBlock())
    fail(what + ": the value is a block (" + value.describe() +
         ") but the pointer is a scalar (" + ptr.describe() + ")");
  value = broadcastValue(castTo(value, elt), ptr.shape(), what.c_str());
  Value mask;
  if (maskOp) {
    TValue m = toValue(*maskOp);
    if (!m.dtype.isBool())
      fail(what + ": the mask must be boolean, got " + m.describe());
    if (!ptr.isBlock() && m.isBlock())
      fail(what + ": the mask is a block (" + m.describe() +
           ") but the pointer is a scalar (" + ptr.describe() + ")");
    mask = broadcastValue(m, ptr.shape(), (what + " mask").c_str()).value;
  }
  using Kind = tile::AtomicRMWKind;
  Kind kind;
  if (op == "add")
    kind = elt.isFloat() ? Kind::fadd : Kind::add;
  else if (op == "and")
    kind = Kind::bit_and;
  else if (op == "or")
    kind = Kind::bit_or;
  else if (op == "xor")
    kind = Kind::bit_xor;
  else if (op == "xchg")
    kind = Kind::xchg;
  else if (op == "max")
    kind = elt.isFloat()      ? Kind::fmax
           : elt.isUnsigned() ? Kind::umax
                              : Kind::max;
  else
    kind = elt.isFloat()      ? Kind::fmin
           : elt.isUnsigned() ? Kind::umin
                              : Kind::min;
  auto rmw = tile::AtomicRMWOp::create(
      builder, loc, value.value.getType(),
      tile::AtomicRMWKindAttr::get(context.get(), kind),
      ptr.value, value.value, mask,
      tile::MemSemanticAttr::get(context.get(), memSem),
      tile::MemSyncScopeAttr::get(context.get(), memScope));
  return make(rmw, elt);
}

TValue TileBuilder::atomicCAS(const TValue &ptr, Operand cmpOp,
                              Operand valueOp, const std::string &sem,
                              const std::string &scope) {
  const std::string what = "atomic_cas";
  tile::MemSemantic memSem = parseMemSemantic(sem, what);
  tile::MemSyncScope memScope = parseMemSyncScope(scope, what);
  if (!ptr.dtype.isPointer)
    fail(what + ": expected a pointer or a block of pointers, got " +
         ptr.describe());
  if (ptr.dtype.isConst)
    fail(what + ": Cannot store to a constant pointer (" + ptr.describe() +
         ": a tl.const parameter's)");
  DType elt = ptr.dtype.pointee();
  unsigned width = elt.bitwidth();
  if (width != 16 && width != 32 && width != 64)
    fail(what + " only supports elements with width {16, 32, 64}, got " +
         tritonName(elt));
  // The bits of `cmp` and `val` are compared and stored as they are, so
  // they must have the element's type already (literals take it); a scalar
  // fills a block.
  auto operand = [&](const Operand &x, const char *name) {
    TValue v = toValue(x, elt);
    if (v.dtype.toMLIR(context.get()) != elt.toMLIR(context.get()))
      fail(what + ": " + name + " must have the pointer's element type " +
           elt.str() + ", got " + v.describe() + "; convert it with .to()");
    if (!ptr.isBlock() && v.isBlock())
      fail(what + ": " + name + " is a block (" + v.describe() +
           ") but the pointer is a scalar (" + ptr.describe() + ")");
    return broadcastValue(v, ptr.shape(), what.c_str());
  };
  TValue cmp = operand(cmpOp, "cmp");
  TValue value = operand(valueOp, "val");
  auto cas = tile::AtomicCASOp::create(
      builder, loc, value.value.getType(), ptr.value, cmp.value, value.value,
      tile::MemSemanticAttr::get(context.get(), memSem),
      tile::MemSyncScopeAttr::get(context.get(), memScope));
  return make(cas, value.dtype);
}

//===----------------------------------------------------------------------===//
// Facts: hints and assumptions
//===----------------------------------------------------------------------===//

TValue TileBuilder::hint(const TValue &x, const std::string &kind,
                         const std::vector<int64_t> &values) {
  StringRef attrName;
  if (kind == "multiple_of")
    attrName = tile::kDivisibilityAttr;
  else if (kind == "max_contiguous")
    attrName = tile::kContiguityAttr;
  else if (kind == "max_constancy")
    attrName = tile::kConstancyAttr;
  else
    fail("unknown hint '" + kind +
         "'; use multiple_of, max_contiguous or max_constancy");
  std::string what = "tl." + kind + "()";
  size_t rank = std::max<size_t>(1, x.shape().size());
  if (values.size() != rank)
    fail(what + ": " + std::to_string(values.size()) + " value(s) for " +
         x.describe() + ", expected " + std::to_string(rank) +
         " (one per dimension)");
  for (int64_t v : values)
    if (v < 1 || v > INT32_MAX)
      fail(what + ": the value " + std::to_string(v) +
           " must be a positive 32-bit integer");
  Value value = x.value;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    // A kernel argument: divisibility becomes the argument attribute the
    // launcher's specialization sets (the largest power of 2 dividing the
    // value); contiguity and constancy say nothing about a scalar.
    auto fn = llvm::cast<func::FuncOp>(function);
    if (arg.getOwner() == &fn.getBody().front() && kind == "multiple_of") {
      int64_t div = int64_t(1) << llvm::countr_zero(uint64_t(values[0]));
      if (auto old = fn.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                      tile::kDivisibilityAttr))
        div = std::max(div, old.getInt());
      if (div > 1)
        fn.setArgAttr(arg.getArgNumber(), tile::kDivisibilityAttr,
                      builder.getI32IntegerAttr(div));
    }
    // A value carried by a loop or an if: no op to hold the hint (see the
    // binding contract); a hint only adds facts, so dropping it is safe.
    return x;
  }
  Operation *def = value.getDefiningOp();
  if (def->getNumResults() != 1)
    return x; // one result of several: no single place for the hint
  SmallVector<int32_t> merged(values.begin(), values.end());
  // A second hint of the same kind adds to the first: both are facts.
  if (auto old = def->getAttrOfType<DenseI32ArrayAttr>(attrName))
    for (auto [m, o] : llvm::zip(merged, old.asArrayRef()))
      m = std::max(m, o);
  def->setAttr(attrName, builder.getDenseI32ArrayAttr(merged));
  return x;
}

void TileBuilder::assume(Operand condOp) {
  TValue cond = toValue(condOp);
  if (cond.isBlock())
    fail("assume: the condition must be a scalar, got " + cond.describe());
  if (cond.dtype.isFloat())
    fail("assume: the condition must be a boolean or an integer, got " +
         cond.describe());
  tile::AssumeOp::create(builder, loc, toBool(cond).value);
}

//===----------------------------------------------------------------------===//
// Reductions and dot
//===----------------------------------------------------------------------===//

int TileBuilder::combineAxis(const char *what,
                             const std::vector<TValue> &inputs, int axis) {
  std::string name = what;
  if (inputs.empty())
    fail(name + ": needs at least one input");
  ArrayRef<int64_t> shape = inputs[0].shape();
  for (const TValue &in : inputs) {
    if (!in.isBlock())
      fail(name + ": inputs must be blocks, got " + in.describe());
    if (in.dtype.isPointer)
      fail(name + ": cannot " + name + " pointers (" + in.describe() + ")");
    if (in.shape() != shape)
      fail(name + ": inputs must have the same shape, got " +
           inputs[0].describe() + " and " + in.describe());
  }
  int rank = shape.size();
  if (axis < -rank || axis >= rank)
    fail(name + ": axis " + std::to_string(axis) + " out of range for " +
         inputs[0].describe());
  return axis < 0 ? axis + rank : axis;
}

std::vector<TValue>
TileBuilder::openCombineRegion(Operation *op, Region &region,
                               const std::vector<TValue> &inputs) {
  SmallVector<Type> argTypes;
  std::vector<DType> dtypes;
  for (const TValue &in : inputs) {
    argTypes.push_back(in.dtype.toMLIR(context.get()));
    dtypes.push_back(in.dtype);
  }
  Block *body = builder.createBlock(&region);
  SmallVector<Location> locs(2 * inputs.size(), loc);
  SmallVector<Type> allArgs(argTypes);
  allArgs.append(argTypes);
  body->addArguments(allArgs, locs);
  openRegions.push_back({op, OpBuilder::InsertPoint(op->getBlock(),
                                                    ++Block::iterator(op)),
                         dtypes});
  builder.setInsertionPointToStart(body);
  std::vector<TValue> args;
  for (auto [i, arg] : llvm::enumerate(body->getArguments()))
    args.push_back(make(arg, dtypes[i % dtypes.size()]));
  return args;
}

template <class CombineOp, class ReturnOp>
std::vector<TValue>
TileBuilder::closeCombineRegion(const char *what,
                                const std::vector<TValue> &combined) {
  std::string name = what;
  if (openRegions.empty() || !isa<CombineOp>(openRegions.back().op))
    fail("end_" + name + " without an open " + name);
  OpenRegion region = openRegions.back();
  if (combined.size() != region.dtypes.size())
    fail(name + ": the combine function returns " +
         std::to_string(combined.size()) + " values, expected " +
         std::to_string(region.dtypes.size()));
  SmallVector<Value> results;
  for (auto [v, dtype] : llvm::zip(combined, region.dtypes)) {
    if (v.isBlock())
      fail(name + ": the combine function must return scalars, got " +
           v.describe());
    results.push_back(castTo(v, dtype).value);
  }
  ReturnOp::create(builder, loc, results);
  openRegions.pop_back();
  builder.restoreInsertionPoint(region.after);
  std::vector<TValue> out;
  for (auto [res, dtype] : llvm::zip(region.op->getResults(), region.dtypes))
    out.push_back(make(res, dtype));
  return out;
}

std::vector<TValue> TileBuilder::beginReduce(const std::vector<TValue> &inputs,
                                             int axis) {
  axis = combineAxis("reduce", inputs, axis);
  SmallVector<int64_t> resShape(inputs[0].shape());
  resShape.erase(resShape.begin() + axis);
  SmallVector<Value> srcs;
  SmallVector<Type> resultTypes;
  for (const TValue &in : inputs) {
    srcs.push_back(in.value);
    resultTypes.push_back(typeFor(in.dtype, resShape));
  }
  auto op = tile::ReduceOp::create(builder, loc, resultTypes, srcs,
                                   builder.getI32IntegerAttr(axis));
  return openCombineRegion(op, op.getCombineOp(), inputs);
}

std::vector<TValue> TileBuilder::endReduce(const std::vector<TValue> &combined) {
  return closeCombineRegion<tile::ReduceOp, tile::ReduceReturnOp>("reduce",
                                                                  combined);
}

TValue TileBuilder::gather(const TValue &src, const TValue &indices,
                           int axis) {
  // Triton's checks, with its words.
  if (!indices.dtype.isInt() || indices.dtype.isBool() ||
      indices.dtype.isPointer)
    fail("gather: index must be an integer tensor, got " +
         indices.describe());
  if (!src.isBlock() || src.dtype.isPointer)
    fail("gather: the source must be a block of values, got " +
         src.describe());
  int rank = src.shape().size();
  if (!indices.isBlock() || int(indices.shape().size()) != rank)
    fail("gather: source and index tensors must have the same rank, got " +
         src.describe() + " and " + indices.describe());
  if (axis < -rank || axis >= rank)
    fail("gather: gather axis " + std::to_string(axis) +
         " must be < source rank (" + std::to_string(rank) + ")");
  if (axis < 0)
    axis += rank;
  for (int d = 0; d < rank; ++d)
    if (d != axis && indices.shape()[d] != src.shape()[d])
      fail("gather: index dim " + std::to_string(d) +
           " must match the corresponding source dim, got " +
           src.describe() + " and " + indices.describe());
  auto op = tile::GatherOp::create(
      builder, loc, typeFor(src.dtype, indices.shape()), src.value,
      indices.value, builder.getI32IntegerAttr(axis));
  return make(op, src.dtype);
}

std::vector<TValue>
TileBuilder::beginMapElementwise(const std::vector<Operand> &inputs,
                                 int pack) {
  if (inputs.empty())
    fail("map_elementwise: needs at least one input");
  std::vector<TValue> values;
  std::vector<int64_t> shape;
  for (const Operand &in : inputs) {
    TValue v = toValue(in);
    shape = broadcastShapes(shape, v.shape(), "map_elementwise");
    values.push_back(v);
  }
  if (shape.empty())
    fail("map_elementwise: needs a block among its inputs");
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  if (pack < 1 || numel % pack != 0)
    fail("map_elementwise: pack " + std::to_string(pack) +
         " does not divide the " + std::to_string(numel) + " elements");
  auto pending = std::make_unique<PendingMap>();
  pending->body = std::make_unique<Block>();
  pending->shape.assign(shape.begin(), shape.end());
  pending->pack = pack;
  std::vector<TValue> args;
  for (TValue &v : values) {
    v = broadcastValue(v, shape, "map_elementwise");
    pending->srcs.push_back(v.value);
    for (int j = 0; j < pack; ++j)
      args.push_back(make(pending->body->addArgument(
                              v.dtype.toMLIR(context.get()), loc),
                          v.dtype));
  }
  pending->after = builder.saveInsertionPoint();
  builder.setInsertionPointToEnd(pending->body.get());
  pendingMaps.push_back(std::move(pending));
  return args;
}

std::vector<TValue>
TileBuilder::endMapElementwise(const std::vector<TValue> &results) {
  if (pendingMaps.empty())
    fail("end_map_elementwise without an open map_elementwise");
  std::unique_ptr<PendingMap> pending = std::move(pendingMaps.back());
  pendingMaps.pop_back();
  int pack = pending->pack;
  if (results.empty() || results.size() % pack != 0)
    fail("map_elementwise: the function returns " +
         std::to_string(results.size()) + " values, not " +
         std::to_string(pack) + " of each result");
  SmallVector<Value> returned;
  SmallVector<Type> resultTypes;
  std::vector<DType> dtypes;
  for (auto [i, r] : llvm::enumerate(results)) {
    if (r.isBlock())
      fail("map_elementwise: the function must return scalars, got " +
           r.describe());
    if (i % pack == 0) {
      resultTypes.push_back(typeFor(r.dtype, pending->shape));
      dtypes.push_back(r.dtype);
    } else if (r.dtype != dtypes.back()) {
      fail("map_elementwise: the " + std::to_string(pack) +
           " values of one result must have one type, got " +
           dtypes.back().str() + " and " + r.dtype.str());
    }
    returned.push_back(r.value);
  }
  tile::MapElementwiseReturnOp::create(builder, loc, returned);
  builder.restoreInsertionPoint(pending->after);
  auto op = tile::MapElementwiseOp::create(builder, loc, resultTypes,
                                           pending->srcs, pack);
  op.getBody().push_back(pending->body.release());
  std::vector<TValue> out;
  for (auto [res, dtype] : llvm::zip(op.getResults(), dtypes))
    out.push_back(make(res, dtype));
  return out;
}

std::vector<TValue> TileBuilder::beginScan(const std::vector<TValue> &inputs,
                                           int axis, bool reverse) {
  axis = combineAxis("scan", inputs, axis);
  SmallVector<Value> srcs;
  SmallVector<Type> resultTypes;
  for (const TValue &in : inputs) {
    srcs.push_back(in.value);
    resultTypes.push_back(in.value.getType());
  }
  auto op = tile::ScanOp::create(
      builder, loc, resultTypes, srcs, builder.getI32IntegerAttr(axis),
      reverse ? builder.getUnitAttr() : UnitAttr());
  return openCombineRegion(op, op.getCombineOp(), inputs);
}

std::vector<TValue> TileBuilder::endScan(const std::vector<TValue> &combined) {
  return closeCombineRegion<tile::ScanOp, tile::ScanReturnOp>("scan",
                                                              combined);
}

TValue TileBuilder::dot(const TValue &a, const TValue &b,
                        std::optional<TValue> acc,
                        std::optional<std::string> outDType,
                        std::optional<std::string> inputPrecision,
                        std::optional<int64_t> maxNumImpreciseAcc) {
  std::optional<tile::InputPrecision> precision;
  if (inputPrecision) {
    // Triton compares in lower case; tessel accepts every value some Triton
    // 3.6 target accepts (the GPU backend that compiles it checks its own).
    precision = tile::symbolizeInputPrecision(StringRef(*inputPrecision).lower());
    if (!precision)
      fail("dot: input_precision '" + *inputPrecision +
           "' is not supported; use one of 'tf32', 'tf32x3', 'ieee', "
           "'bf16x3', 'bf16x6'");
  }
  if (maxNumImpreciseAcc &&
      (*maxNumImpreciseAcc < 0 || *maxNumImpreciseAcc > INT32_MAX))
    fail("dot: max_num_imprecise_acc must be a non-negative 32-bit integer, "
         "got " + std::to_string(*maxNumImpreciseAcc));
  if (a.shape().size() != 2 || b.shape().size() != 2)
    fail("dot: operands must be 2-D blocks, got " + a.describe() + " and " +
         b.describe());
  int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  if (b.shape()[0] != k)
    fail("dot: input and other must have equal reduction dimensions: " +
         a.describe() + " x " + b.describe());
  if (m < 16 || n < 16 || k < 16)
    fail("dot: Input shapes should have M >= 16, N >= 16 and K >= 16, got M=" +
         std::to_string(m) + ", N=" + std::to_string(n) +
         ", K=" + std::to_string(k) + " (" + a.describe() + " x " +
         b.describe() + ")");
  // 8-bit floats of either kind multiply each other (e4m3 x e5m2 included).
  if (a.dtype != b.dtype && !(a.dtype.isFP8() && b.dtype.isFP8()))
    fail("dot: operands must have the same type, got " + a.describe() +
         " and " + b.describe() + "; cast one with .to()");
  if (a.dtype.isPointer || a.dtype.isBool())
    fail("dot: unsupported operand type " + a.describe());
  if (a.dtype.isInt() && a.dtype.kind != ScalarKind::I8)
    fail("dot: integer operands must be int8, got " + a.describe() +
         "; cast them with .to() (to int8, or to a float type)");
  // The result type follows Triton: int8 operands accumulate in and return
  // int32, fp32 and bf16 operands fp32, fp64 operands fp64, whatever
  // out_dtype says; only fp16 and 8-bit float operands take out_dtype (fp16
  // or fp32, fp32 by default). An integer dot never truncates its sums to a narrower type.
  std::optional<DType> out;
  if (outDType) {
    out = parseDType(*outDType);
    if (out->isPointer)
      fail("dot: out_dtype must be a scalar type, got " + out->str());
    if (a.dtype.isFloat() && out->kind == ScalarKind::BF16)
      fail("dot: out_dtype bf16 is not supported; use fp32 (or fp16 for "
           "fp16 operands) and cast the result with .to(tl.bfloat16)");
  }
  DType resultType{ScalarKind::F32};
  if (a.dtype.isInt())
    resultType = DType{ScalarKind::I32};
  else if (a.dtype.kind == ScalarKind::F64)
    resultType = DType{ScalarKind::F64};
  else if ((a.dtype.kind == ScalarKind::F16 || a.dtype.isFP8()) && out) {
    if (out->kind != ScalarKind::F16 && out->kind != ScalarKind::F32)
      fail("dot: out_dtype of a dot of " + a.describe() + " and " +
           b.describe() + " must be fp16 or fp32, got " + out->str());
    resultType = *out;
  }
  std::vector<int64_t> shape{m, n};
  checkBlockShape(shape, "dot");
  Value c;
  if (acc) {
    if (acc->shape() != ArrayRef<int64_t>(shape))
      fail("dot: accumulator " + acc->describe() + " should have shape " +
           shapeStr(shape));
    if (acc->dtype != resultType)
      fail("dot: accumulator " + acc->describe() + " should be of type " +
           resultType.str() + ", the type of a dot of " + a.describe() +
           " and " + b.describe() +
           (outDType ? " with out_dtype " + out->str() : std::string()));
    if (out && *out != acc->dtype)
      fail("dot: out_dtype " + out->str() + " differs from the type of the "
           "accumulator " + acc->describe());
    c = acc->value;
  } else {
    c = full(shape, int64_t(0), resultType.str()).value;
  }
  auto op = tile::DotOp::create(
      builder, loc, c.getType(), a.value, b.value, c,
      precision ? tile::InputPrecisionAttr::get(context.get(), *precision)
                : nullptr,
      maxNumImpreciseAcc ? builder.getI32IntegerAttr(*maxNumImpreciseAcc)
                         : nullptr);
  return make(op, resultType);
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

std::pair<TValue, std::vector<TValue>>
TileBuilder::beginFor(Operand lbOp, Operand ubOp, Operand stepOp,
                      const std::vector<TValue> &inits,
                      std::optional<int64_t> numStages) {
  TValue lb = toValue(lbOp), ub = toValue(ubOp), step = toValue(stepOp);
  for (const TValue *v : {&lb, &ub, &step})
    if (v->isBlock() || !v->dtype.isInt() || v->dtype.isBool())
      fail("range bounds must be integer scalars, got " + v->describe());
  DType t{ScalarKind::I32};
  for (const TValue *v : {&lb, &ub, &step})
    if (v->dtype.bitwidth() == 64)
      t = DType{v->dtype.isUnsigned() ? ScalarKind::U64 : ScalarKind::I64};
  lb = castTo(lb, t);
  ub = castTo(ub, t);
  step = castTo(step, t);
  SmallVector<Value> initValues;
  std::vector<DType> dtypes;
  for (const TValue &v : inits) {
    initValues.push_back(v.value);
    dtypes.push_back(v.dtype);
  }
  auto forOp = scf::ForOp::create(builder, loc, lb.value, ub.value, step.value,
                                  initValues);
  if (t.isUnsigned())
    forOp.setUnsignedCmp(true);
  // tl.range(num_stages=...): this loop's pipeline stages (tilegpu-pipeline).
  if (numStages) {
    if (*numStages < 0 || *numStages > 64)
      fail("tl.range's num_stages must be 0 to 64, got " +
           std::to_string(*numStages));
    forOp->setAttr(tile::kLoopStagesAttr,
                   builder.getI32IntegerAttr(int32_t(*numStages)));
  }
  Block *body = forOp.getBody();
  if (!body->empty() && body->back().hasTrait<OpTrait::IsTerminator>())
    body->back().erase();
  openRegions.push_back({forOp, OpBuilder::InsertPoint(forOp->getBlock(),
                                                       ++Block::iterator(forOp)),
                         dtypes});
  builder.setInsertionPointToEnd(body);
  std::vector<TValue> carried;
  for (auto [arg, dtype] : llvm::zip(forOp.getRegionIterArgs(), dtypes))
    carried.push_back(make(arg, dtype));
  return {make(forOp.getInductionVar(), t), carried};
}

std::vector<TValue> TileBuilder::closeLoop(const std::vector<TValue> &yields,
                                           ValueRange inits,
                                           ValueRange results) {
  OpenRegion region = openRegions.back();
  if (yields.size() != region.dtypes.size())
    fail("loop: " + std::to_string(yields.size()) + " values at the end of "
         "the body for " + std::to_string(region.dtypes.size()) +
         " loop-carried values");
  SmallVector<Value> values;
  for (auto [i, v] : llvm::enumerate(yields)) {
    if (v.value.getType() != inits[i].getType() || v.dtype != region.dtypes[i])
      fail("loop-carried value #" + std::to_string(i) + " changes type in the "
           "loop: " + TValue{inits[i], region.dtypes[i]}.describe() +
           " before, " + v.describe() + " after one iteration");
    values.push_back(v.value);
  }
  scf::YieldOp::create(builder, loc, values);
  openRegions.pop_back();
  builder.restoreInsertionPoint(region.after);
  std::vector<TValue> out;
  for (auto [res, dtype] : llvm::zip(results, region.dtypes))
    out.push_back(make(res, dtype));
  return out;
}

std::vector<TValue> TileBuilder::endFor(const std::vector<TValue> &yields) {
  if (openRegions.empty() || !isa<scf::ForOp>(openRegions.back().op))
    fail("end_for without an open loop");
  auto forOp = llvm::cast<scf::ForOp>(openRegions.back().op);
  return closeLoop(yields, forOp.getInitArgs(), forOp.getResults());
}

std::vector<TValue>
TileBuilder::beginWhile(const std::vector<TValue> &inits) {
  SmallVector<Value> initValues;
  SmallVector<Type> types;
  std::vector<DType> dtypes;
  for (const TValue &v : inits) {
    initValues.push_back(v.value);
    types.push_back(v.value.getType());
    dtypes.push_back(v.dtype);
  }
  auto whileOp = scf::WhileOp::create(builder, loc, types, initValues);
  SmallVector<Location> locs(types.size(), loc);
  Block *before = builder.createBlock(&whileOp.getBefore(), {}, types, locs);
  builder.createBlock(&whileOp.getAfter(), {}, types, locs);
  openRegions.push_back({whileOp,
                         OpBuilder::InsertPoint(whileOp->getBlock(),
                                                ++Block::iterator(whileOp)),
                         dtypes});
  builder.setInsertionPointToEnd(before);
  std::vector<TValue> args;
  for (auto [arg, dtype] : llvm::zip(before->getArguments(), dtypes))
    args.push_back(make(arg, dtype));
  return args;
}

std::vector<TValue> TileBuilder::whileCondition(Operand condOp) {
  if (openRegions.empty() || !isa<scf::WhileOp>(openRegions.back().op))
    fail("while_condition without an open while loop");
  auto whileOp = llvm::cast<scf::WhileOp>(openRegions.back().op);
  TValue cond = toValue(condOp);
  if (cond.isBlock())
    fail("while: the condition must be a scalar, got " + cond.describe());
  cond = toBool(cond);
  Block *before = &whileOp.getBefore().front();
  if (builder.getInsertionBlock() != before)
    fail("while: the condition must be computed in the loop header");
  scf::ConditionOp::create(builder, loc, cond.value, before->getArguments());
  Block *after = &whileOp.getAfter().front();
  builder.setInsertionPointToEnd(after);
  std::vector<TValue> args;
  for (auto [arg, dtype] :
       llvm::zip(after->getArguments(), openRegions.back().dtypes))
    args.push_back(make(arg, dtype));
  return args;
}

std::vector<TValue> TileBuilder::endWhile(const std::vector<TValue> &yields) {
  if (openRegions.empty() || !isa<scf::WhileOp>(openRegions.back().op))
    fail("end_while without an open while loop");
  auto whileOp = llvm::cast<scf::WhileOp>(openRegions.back().op);
  return closeLoop(yields, whileOp.getInits(), whileOp.getResults());
}

void TileBuilder::beginIf(Operand condOp) {
  TValue cond = toValue(condOp);
  if (cond.isBlock())
    fail("if: the condition must be a scalar, got " + cond.describe());
  cond = toBool(cond);
  auto ifOp = scf::IfOp::create(builder, loc, TypeRange{}, cond.value,
                                /*withElseRegion=*/true);
  openRegions.push_back({ifOp, OpBuilder::InsertPoint(ifOp->getBlock(),
                                                      ++Block::iterator(ifOp)),
                         {}});
  builder.setInsertionPoint(ifOp.thenBlock()->getTerminator());
}

void TileBuilder::beginElse() {
  if (openRegions.empty() || !isa<scf::IfOp>(openRegions.back().op))
    fail("begin_else without an open if");
  auto ifOp = llvm::cast<scf::IfOp>(openRegions.back().op);
  builder.setInsertionPoint(ifOp.elseBlock()->getTerminator());
}

std::vector<TValue> TileBuilder::endIf(const std::vector<TValue> &thenValues,
                                       const std::vector<TValue> &elseValues) {
  if (openRegions.empty() || !isa<scf::IfOp>(openRegions.back().op))
    fail("end_if without an open if");
  OpenRegion region = openRegions.back();
  auto oldIf = llvm::cast<scf::IfOp>(region.op);
  if (thenValues.size() != elseValues.size())
    fail("if: the branches define different numbers of values");
  SmallVector<Type> types;
  std::vector<DType> dtypes;
  for (auto [i, tv, ev] : llvm::enumerate(thenValues, elseValues)) {
    if (tv.value.getType() != ev.value.getType() || tv.dtype != ev.dtype)
      fail("if: value #" + std::to_string(i) + " has type " + tv.describe() +
           " in the then-branch and " + ev.describe() + " in the else-branch");
    types.push_back(tv.value.getType());
    dtypes.push_back(tv.dtype);
  }
  openRegions.pop_back();
  builder.setInsertionPoint(oldIf);
  auto newIf = scf::IfOp::create(builder, oldIf.getLoc(), types,
                                 oldIf.getCondition(), /*withElseRegion=*/true);
  auto moveBody = [&](Region &from, Region &to,
                      const std::vector<TValue> &values) {
    to.takeBody(from);
    Block &block = to.front();
    block.getTerminator()->erase();
    OpBuilder b = OpBuilder::atBlockEnd(&block);
    SmallVector<Value> vs;
    for (const TValue &v : values)
      vs.push_back(v.value);
    scf::YieldOp::create(b, loc, vs);
  };
  moveBody(oldIf.getThenRegion(), newIf.getThenRegion(), thenValues);
  moveBody(oldIf.getElseRegion(), newIf.getElseRegion(), elseValues);
  oldIf->erase();
  builder.setInsertionPointAfter(newIf);
  std::vector<TValue> out;
  for (auto [res, dtype] : llvm::zip(newIf.getResults(), dtypes))
    out.push_back(make(res, dtype));
  return out;
}
