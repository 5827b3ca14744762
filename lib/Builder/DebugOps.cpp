//===- DebugOps.cpp - Printing, assertions, inline asm, extern calls ------===//
//
// The builder's side of Triton's debugging and extension builtins:
// tl.device_print (and print() in a kernel), tl.device_assert (and assert on
// a tensor), tl.inline_asm_elementwise and tl.extern_elementwise. Their
// checks and Triton's rules (the print prefix, operands made tensors,
// broadcasting without promotion) live here; targets lower the ops.
//
//===----------------------------------------------------------------------===//
#include "tessel/Builder/TileBuilder.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace tessel;

namespace {

[[noreturn]] void fail(const std::string &message) {
  throw CompileError(message);
}

/// Python's string.printable: what Triton accepts in a print prefix.
bool isPrintable(char c) {
  return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r' ||
         c == '\x0b' || c == '\x0c';
}

} // namespace

void TileBuilder::print(const std::string &prefixIn,
                        const std::vector<Operand> &args, bool hex) {
  for (char c : prefixIn)
    if (!isPrintable(c))
      fail("device_print: the prefix must be printable ASCII text, got '" +
           prefixIn + "'");
  // Triton's layout of a prefix: " prefix: " before the values, a leading
  // space where it is longer than ": ".
  std::string prefix = prefixIn;
  if (!args.empty()) {
    if (prefix.empty() || prefix.back() != ' ')
      prefix += " ";
    if (prefix.size() < 2 || prefix.compare(prefix.size() - 2, 2, ": ") != 0)
      prefix = prefix.substr(0, prefix.size() - 1) + ": ";
  }
  if (prefix.size() > 2 && prefix.front() != ' ')
    prefix = " " + prefix;
  SmallVector<Value> values;
  SmallVector<int32_t> isSigned;
  for (const Operand &arg : args) {
    TValue v = toValue(arg);
    // 8-bit floats print as the fp32 they hold, or as their bits.
    if (v.dtype.isFP8()) {
      if (hex) {
        Type i8 = typeFor(DType{ScalarKind::U8}, v.shape());
        v = make(arith::BitcastOp::create(builder, loc, i8, v.value),
                 DType{ScalarKind::U8});
      } else {
        v = castTo(v, DType{ScalarKind::F32});
      }
    }
    values.push_back(v.value);
    isSigned.push_back(!v.dtype.isPointer && v.dtype.isInt() &&
                       !v.dtype.isUnsigned() && !v.dtype.isBool());
  }
  tile::PrintOp::create(builder, loc, builder.getStringAttr(prefix), hex,
                        builder.getDenseI32ArrayAttr(isSigned), values);
}

void TileBuilder::deviceAssert(Operand condOp, const std::string &message,
                               std::optional<Operand> maskOp) {
  if (!debug)
    return; // as in Triton: only kernels compiled with debug check
  TValue cond = toValue(condOp);
  if (cond.dtype.isPointer || cond.dtype.isFloat())
    fail("device_assert: the condition must be a boolean or an integer, got " +
         cond.describe());
  cond = toBool(cond);
  if (maskOp) {
    TValue mask = toValue(*maskOp);
    if (mask.dtype.isPointer || mask.dtype.isFloat())
      fail("device_assert: the mask must be a boolean or an integer, got " +
           mask.describe());
    mask = toBool(mask);
    auto shape = broadcastShapes(cond.shape(), mask.shape(), "device_assert");
    cond = broadcastValue(cond, shape, "device_assert");
    mask = broadcastValue(mask, shape, "device_assert");
    // Elements whose mask is off pass: cond | !mask.
    DType i1{ScalarKind::I1};
    Value ones = splatTo(make(constantScalar(true, i1), i1), shape).value;
    Value off = arith::XOrIOp::create(builder, loc, mask.value, ones);
    cond = make(arith::OrIOp::create(builder, loc, cond.value, off),
                cond.dtype);
  }
  std::string file;
  int line = 0;
  if (auto fileLoc = dyn_cast<FileLineColLoc>(loc)) {
    file = fileLoc.getFilename().str();
    line = int(fileLoc.getLine());
  }
  std::string function;
  if (auto fn = dyn_cast_or_null<func::FuncOp>(this->function))
    function = fn.getName().str();
  tile::AssertOp::create(builder, loc, cond.value, message, file, line,
                         function);
}

std::vector<TValue> TileBuilder::inlineAsm(
    const std::string &asmText, const std::string &constraints,
    const std::vector<Operand> &args, const std::vector<std::string> &dtypes,
    bool isPure, int64_t pack) {
  const char *what = "inline_asm_elementwise";
  if (dtypes.empty())
    fail(std::string(what) + ": needs at least one result type (dtype)");
  if (pack < 1 || pack > 1024)
    fail(std::string(what) + ": pack must be a positive number of elements, "
                             "got " +
         std::to_string(pack));
  std::vector<TValue> values;
  std::vector<int64_t> shape;
  for (const Operand &arg : args) {
    values.push_back(toValue(arg));
    shape = broadcastShapes(shape, values.back().shape(), what);
  }
  SmallVector<Value> operands;
  for (TValue &v : values)
    operands.push_back(broadcastValue(v, shape, what).value);
  std::vector<DType> resultTypes;
  SmallVector<Type> types;
  for (const std::string &name : dtypes) {
    DType t = parseDType(name);
    if (t.isPointer)
      fail(std::string(what) + ": results cannot be pointers, got " + name);
    resultTypes.push_back(t);
    types.push_back(typeFor(t, shape));
  }
  auto op = tile::ElementwiseInlineAsmOp::create(
      builder, loc, types, operands, asmText, constraints, isPure,
      int32_t(pack));
  std::vector<TValue> results;
  for (auto [r, t] : llvm::zip(op.getResults(), resultTypes))
    results.push_back(make(r, t));
  return results;
}

TValue TileBuilder::externElementwise(const std::string &libName,
                                      const std::string &libPath,
                                      const std::string &symbol,
                                      const std::vector<Operand> &args,
                                      const std::vector<std::string> &argTypes,
                                      const std::string &resultType,
                                      bool isPure) {
  const char *what = "extern_elementwise";
  if (symbol.empty())
    fail(std::string(what) + ": the function's symbol is empty");
  if (args.size() != argTypes.size())
    fail(std::string(what) + ": " + symbol + " takes " +
         std::to_string(argTypes.size()) + " arguments, got " +
         std::to_string(args.size()));
  std::vector<TValue> values;
  std::vector<int64_t> shape;
  for (auto [arg, typeName] : llvm::zip(args, argTypes)) {
    DType t = parseDType(typeName);
    TValue v = toValue(arg, t);
    if (v.dtype != t)
      fail(std::string(what) + ": argument " +
           std::to_string(values.size()) + " of " + symbol + " must be " +
           t.str() + ", got " + v.describe());
    values.push_back(v);
    shape = broadcastShapes(shape, v.shape(), what);
  }
  SmallVector<Value> operands;
  for (TValue &v : values)
    operands.push_back(broadcastValue(v, shape, what).value);
  DType result = parseDType(resultType);
  if (result.isPointer)
    fail(std::string(what) + ": " + symbol + " cannot return a pointer");
  auto op = tile::ExternElementwiseOp::create(
      builder, loc, typeFor(result, shape), operands, libName, libPath, symbol,
      isPure);
  return make(op.getResult(), result);
}

void TileBuilder::checkIntegerOverflow(const std::string &op, const TValue &a,
                                       const TValue &b) {
  DType t = a.dtype;
  if (!debug || t.isPointer || !t.isInt() || t.bitwidth() >= 64)
    return;
  DType i64{ScalarKind::I64};
  TValue wa = castTo(a, i64), wb = castTo(b, i64);
  Value r = op == "add"   ? Value(arith::AddIOp::create(builder, loc, wa.value,
                                                        wb.value))
            : op == "sub" ? Value(arith::SubIOp::create(builder, loc, wa.value,
                                                        wb.value))
                          : Value(arith::MulIOp::create(builder, loc, wa.value,
                                                        wb.value));
  unsigned bits = t.bitwidth();
  bool isUnsigned = t.isUnsigned() || t.isBool();
  int64_t lo = isUnsigned ? 0 : -(int64_t(1) << (bits - 1));
  int64_t hi = isUnsigned ? (int64_t(1) << bits) - 1
                          : (int64_t(1) << (bits - 1)) - 1;
  Value vlo = splatTo(toValue(lo, i64), a.shape()).value;
  Value vhi = splatTo(toValue(hi, i64), a.shape()).value;
  Value ok = arith::AndIOp::create(
      builder, loc,
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sle, r, vhi),
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sge, r, vlo));
  // Triton's words ("int32" for uint32 too).
  deviceAssert(make(ok, DType{ScalarKind::I1}),
               "int" + std::to_string(bits) +
                   " overflow detected for operation " + op,
               std::nullopt);
}

std::string TileBuilder::promotedType(const Operand &a, const Operand &b,
                                      const std::string &op) {
  return computationType(a, b, /*divOrMod=*/false, op).str();
}
