//===- ExternFunctions.cpp - libdevice functions on the CPU ---------------===//
//
// One table: each libdevice function the CPU knows, its types (f: f32,
// d: f64, i: i32, l: i64; result first) and how it is computed. Functions of
// the C library (tanf, atan2, ...) are called by name; the object loader
// finds them in the process, as it finds erf.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/TileToLoops/ExternFunctions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace tessel;

namespace {

using Emit = std::function<Value(OpBuilder &, Location, ModuleOp, ValueRange)>;

struct ExternFunction {
  std::string symbol;
  std::string signature; // result, then arguments: "f:ff"
  Emit emit;
};

Type typeOf(MLIRContext *ctx, char c) {
  switch (c) {
  case 'f': return Float32Type::get(ctx);
  case 'd': return Float64Type::get(ctx);
  case 'i': return IntegerType::get(ctx, 32);
  default: return IntegerType::get(ctx, 64);
  }
}

char letterOf(Type t) {
  if (t.isF32()) return 'f';
  if (t.isF64()) return 'd';
  if (t.isInteger(32)) return 'i';
  if (t.isInteger(64)) return 'l';
  return '?';
}

template <class Op> Emit op1() {
  return [](OpBuilder &b, Location loc, ModuleOp, ValueRange a) -> Value {
    return Op::create(b, loc, a[0]);
  };
}
template <class Op> Emit op2() {
  return [](OpBuilder &b, Location loc, ModuleOp, ValueRange a) -> Value {
    return Op::create(b, loc, a[0], a[1]);
  };
}
template <class Op> Emit op3() {
  return [](OpBuilder &b, Location loc, ModuleOp, ValueRange a) -> Value {
    return Op::create(b, loc, a[0], a[1], a[2]);
  };
}

/// A call of the C library's `name` (declared once in the module).
Emit libm(std::string name) {
  return [name](OpBuilder &b, Location loc, ModuleOp module,
                ValueRange a) -> Value {
    SmallVector<Type> types(a.getTypes());
    auto fnType = b.getFunctionType(types, {types.front()});
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (!fn) {
      OpBuilder top(module.getBodyRegion());
      fn = func::FuncOp::create(top, loc, name, fnType);
      fn.setPrivate();
    }
    return func::CallOp::create(b, loc, fn, a).getResult(0);
  };
}

Value cst(OpBuilder &b, Location loc, Type t, double v) {
  if (isa<FloatType>(t))
    return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
  return arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, int64_t(v)));
}

Value icst(OpBuilder &b, Location loc, Type t, int64_t v) {
  return arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, v));
}

/// A predicate on a float as libdevice's int result (1 or 0).
template <class F> Emit floatTest(F pred) {
  return [pred](OpBuilder &b, Location loc, ModuleOp, ValueRange a) -> Value {
    Value p = pred(b, loc, a[0]);
    return arith::ExtUIOp::create(b, loc, b.getI32Type(), p);
  };
}

/// Float to integer with libdevice's rounding (rn: to nearest even, rz:
/// toward zero, rd: down, ru: up), saturating, NaN to 0, as cvt does.
Emit floatToInt(char mode, Type (*intType)(OpBuilder &), bool isUnsigned) {
  return [=](OpBuilder &b, Location loc, ModuleOp, ValueRange a) -> Value {
    Value x = a[0];
    Type ft = x.getType();
    Type it = intType(b);
    switch (mode) {
    case 'n': x = math::RoundEvenOp::create(b, loc, x); break;
    case 'd': x = math::FloorOp::create(b, loc, x); break;
    case 'u': x = math::CeilOp::create(b, loc, x); break;
    default: x = math::TruncOp::create(b, loc, x); break;
    }
    unsigned bits = it.getIntOrFloatBitWidth();
    double lo = isUnsigned ? 0.0 : -std::ldexp(1.0, int(bits) - 1);
    double hi = isUnsigned ? std::ldexp(1.0, int(bits))
                           : std::ldexp(1.0, int(bits) - 1);
    int64_t loBits = isUnsigned ? 0 : std::numeric_limits<int64_t>::min();
    int64_t hiBits = isUnsigned ? -1 : std::numeric_limits<int64_t>::max();
    if (bits == 32) {
      loBits = isUnsigned ? 0 : INT32_MIN;
      hiBits = isUnsigned ? int64_t(UINT32_MAX) : INT32_MAX;
    }
    // In range: [lo, hi) holds the exact integers the type has.
    Value inRange = arith::AndIOp::create(
        b, loc,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x,
                              cst(b, loc, ft, lo)),
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                              cst(b, loc, ft, hi)));
    Value safe = arith::SelectOp::create(b, loc, inRange, x,
                                         cst(b, loc, ft, 0.0));
    Value conv = isUnsigned ? Value(arith::FPToUIOp::create(b, loc, it, safe))
                            : Value(arith::FPToSIOp::create(b, loc, it, safe));
    Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                        a[0], a[0]);
    Value high = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x,
                                       cst(b, loc, ft, hi));
    Value r = arith::SelectOp::create(b, loc, high, icst(b, loc, it, hiBits),
                                      icst(b, loc, it, loBits));
    r = arith::SelectOp::create(b, loc, inRange, conv, r);
    return arith::SelectOp::create(b, loc, isNaN, icst(b, loc, it, 0), r);
  };
}

Type i32Type(OpBuilder &b) { return b.getI32Type(); }
Type i64Type(OpBuilder &b) { return b.getI64Type(); }

/// The high half of the product of two integers.
Emit mulHigh(bool isSigned) {
  return [isSigned](OpBuilder &b, Location loc, ModuleOp,
                    ValueRange a) -> Value {
    if (isSigned)
      return arith::MulSIExtendedOp::create(b, loc, a[0], a[1]).getHigh();
    return arith::MulUIExtendedOp::create(b, loc, a[0], a[1]).getHigh();
  };
}

/// Integers to an i32 result (popc, clz of 64-bit values).
template <class Op> Emit countToI32() {
  return [](OpBuilder &b, Location loc, ModuleOp, ValueRange a) -> Value {
    Value r = Op::create(b, loc, a[0]);
    if (r.getType().isInteger(32))
      return r;
    return arith::TruncIOp::create(b, loc, b.getI32Type(), r);
  };
}

/// ffs: one plus the index of the lowest set bit, 0 for 0.
Emit findFirstSet() {
  return [](OpBuilder &b, Location loc, ModuleOp, ValueRange a) -> Value {
    Type t = a[0].getType();
    Value tz = math::CountTrailingZerosOp::create(b, loc, a[0]);
    Value one = arith::AddIOp::create(b, loc, tz, icst(b, loc, t, 1));
    Value zero = icst(b, loc, t, 0);
    Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         a[0], zero);
    Value r = arith::SelectOp::create(b, loc, isZero, zero, one);
    if (t.isInteger(32))
      return r;
    return arith::TruncIOp::create(b, loc, b.getI32Type(), r);
  };
}

Emit bitcastTo(char letter) {
  return [letter](OpBuilder &b, Location loc, ModuleOp, ValueRange a) -> Value {
    return arith::BitcastOp::create(b, loc, typeOf(b.getContext(), letter),
                                    a[0]);
  };
}

/// The libdevice functions the CPU knows, by symbol.
const llvm::StringMap<ExternFunction> &table() {
  static const llvm::StringMap<ExternFunction> functions = [] {
    llvm::StringMap<ExternFunction> t;
    auto add = [&](std::string symbol, std::string signature, Emit emit) {
      t[symbol] = ExternFunction{symbol, std::move(signature), std::move(emit)};
    };
    // Both precisions: __nv_<name>f on f32, __nv_<name> on f64.
    auto both = [&](const std::string &name, const std::string &shape,
                    auto makeEmit) {
      std::string f = shape, d = shape;
      for (char &c : f)
        if (c == 'x') c = 'f';
      for (char &c : d)
        if (c == 'x') c = 'd';
      add("__nv_" + name + "f", f, makeEmit(name + "f"));
      add("__nv_" + name, d, makeEmit(name));
    };
    auto fixed = [](Emit e) { return [e](const std::string &) { return e; }; };
    // Tessel's own math (what tl.exp, tl.sqrt, ... lower to).
    both("exp", "x:x", fixed(op1<math::ExpOp>()));
    both("exp2", "x:x", fixed(op1<math::Exp2Op>()));
    both("log", "x:x", fixed(op1<math::LogOp>()));
    both("log2", "x:x", fixed(op1<math::Log2Op>()));
    both("sqrt", "x:x", fixed(op1<math::SqrtOp>()));
    both("rsqrt", "x:x", fixed(op1<math::RsqrtOp>()));
    both("sin", "x:x", fixed(op1<math::SinOp>()));
    both("cos", "x:x", fixed(op1<math::CosOp>()));
    both("floor", "x:x", fixed(op1<math::FloorOp>()));
    both("ceil", "x:x", fixed(op1<math::CeilOp>()));
    both("erf", "x:x", fixed(op1<math::ErfOp>()));
    both("fabs", "x:x", fixed(op1<math::AbsFOp>()));
    both("trunc", "x:x", fixed(op1<math::TruncOp>()));
    both("round", "x:x", fixed(op1<math::RoundOp>()));
    both("rint", "x:x", fixed(op1<math::RoundEvenOp>()));
    both("nearbyint", "x:x", fixed(op1<math::RoundEvenOp>()));
    both("fma", "x:xxx", fixed(op3<math::FmaOp>()));
    both("fmin", "x:xx", fixed(op2<arith::MinNumFOp>()));
    both("fmax", "x:xx", fixed(op2<arith::MaxNumFOp>()));
    both("copysign", "x:xx", fixed(op2<math::CopySignOp>()));
    // IEEE-rounded arithmetic (round to nearest: the CPU's own).
    add("__nv_fadd_rn", "f:ff", op2<arith::AddFOp>());
    add("__nv_dadd_rn", "d:dd", op2<arith::AddFOp>());
    add("__nv_fsub_rn", "f:ff", op2<arith::SubFOp>());
    add("__nv_dsub_rn", "d:dd", op2<arith::SubFOp>());
    add("__nv_fmul_rn", "f:ff", op2<arith::MulFOp>());
    add("__nv_dmul_rn", "d:dd", op2<arith::MulFOp>());
    add("__nv_fdiv_rn", "f:ff", op2<arith::DivFOp>());
    add("__nv_ddiv_rn", "d:dd", op2<arith::DivFOp>());
    add("__nv_fdividef", "f:ff", op2<arith::DivFOp>());
    add("__nv_fmaf_rn", "f:fff", op3<math::FmaOp>());
    add("__nv_fma_rn", "d:ddd", op3<math::FmaOp>());
    add("__nv_fsqrt_rn", "f:f", op1<math::SqrtOp>());
    add("__nv_dsqrt_rn", "d:d", op1<math::SqrtOp>());
    auto reciprocal = [](OpBuilder &b, Location loc, ModuleOp,
                         ValueRange a) -> Value {
      return arith::DivFOp::create(b, loc, cst(b, loc, a[0].getType(), 1.0),
                                   a[0]);
    };
    add("__nv_frcp_rn", "f:f", reciprocal);
    add("__nv_drcp_rn", "d:d", reciprocal);
    // libdevice's fast approximations: the accurate functions.
    add("__nv_fast_expf", "f:f", op1<math::ExpOp>());
    add("__nv_fast_exp10f", "f:f", libm("exp10f"));
    add("__nv_fast_logf", "f:f", op1<math::LogOp>());
    add("__nv_fast_log2f", "f:f", op1<math::Log2Op>());
    add("__nv_fast_log10f", "f:f", libm("log10f"));
    add("__nv_fast_sinf", "f:f", op1<math::SinOp>());
    add("__nv_fast_cosf", "f:f", op1<math::CosOp>());
    add("__nv_fast_tanf", "f:f", libm("tanf"));
    add("__nv_fast_powf", "f:ff", libm("powf"));
    // The C library's functions of the same meaning.
    for (const char *name :
         {"tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
          "acosh", "atanh", "cbrt", "expm1", "log1p", "log10", "exp10",
          "erfc", "lgamma", "tgamma", "logb", "j0", "j1", "y0", "y1"})
      both(name, "x:x", libm);
    for (const char *name : {"atan2", "pow", "hypot", "fmod", "remainder",
                             "fdim", "nextafter"})
      both(name, "x:xx", libm);
    // Integers.
    add("__nv_abs", "i:i", op1<math::AbsIOp>());
    add("__nv_llabs", "l:l", op1<math::AbsIOp>());
    add("__nv_min", "i:ii", op2<arith::MinSIOp>());
    add("__nv_max", "i:ii", op2<arith::MaxSIOp>());
    add("__nv_umin", "i:ii", op2<arith::MinUIOp>());
    add("__nv_umax", "i:ii", op2<arith::MaxUIOp>());
    add("__nv_llmin", "l:ll", op2<arith::MinSIOp>());
    add("__nv_llmax", "l:ll", op2<arith::MaxSIOp>());
    add("__nv_ullmin", "l:ll", op2<arith::MinUIOp>());
    add("__nv_ullmax", "l:ll", op2<arith::MaxUIOp>());
    add("__nv_mulhi", "i:ii", mulHigh(true));
    add("__nv_umulhi", "i:ii", mulHigh(false));
    add("__nv_mul64hi", "l:ll", mulHigh(true));
    add("__nv_umul64hi", "l:ll", mulHigh(false));
    add("__nv_popc", "i:i", countToI32<math::CtPopOp>());
    add("__nv_popcll", "i:l", countToI32<math::CtPopOp>());
    add("__nv_clz", "i:i", countToI32<math::CountLeadingZerosOp>());
    add("__nv_clzll", "i:l", countToI32<math::CountLeadingZerosOp>());
    add("__nv_ffs", "i:i", findFirstSet());
    add("__nv_ffsll", "i:l", findFirstSet());
    add("__nv_brev", "i:i", op1<LLVM::BitReverseOp>());
    add("__nv_brevll", "l:l", op1<LLVM::BitReverseOp>());
    // Tests of floats (int results).
    auto isNaN = [](OpBuilder &b, Location loc, Value x) -> Value {
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
    };
    auto isInf = [](OpBuilder &b, Location loc, Value x) -> Value {
      Value ax = math::AbsFOp::create(b, loc, x);
      return arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OEQ, ax,
          cst(b, loc, x.getType(), std::numeric_limits<double>::infinity()));
    };
    auto isFinite = [](OpBuilder &b, Location loc, Value x) -> Value {
      Value ax = math::AbsFOp::create(b, loc, x);
      return arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OLT, ax,
          cst(b, loc, x.getType(), std::numeric_limits<double>::infinity()));
    };
    auto signBit = [](OpBuilder &b, Location loc, Value x) -> Value {
      unsigned bits = x.getType().getIntOrFloatBitWidth();
      Type it = b.getIntegerType(bits);
      Value v = arith::BitcastOp::create(b, loc, it, x);
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v,
                                   icst(b, loc, it, 0));
    };
    add("__nv_isnanf", "i:f", floatTest(isNaN));
    add("__nv_isnand", "i:d", floatTest(isNaN));
    add("__nv_isinff", "i:f", floatTest(isInf));
    add("__nv_isinfd", "i:d", floatTest(isInf));
    add("__nv_finitef", "i:f", floatTest(isFinite));
    add("__nv_isfinited", "i:d", floatTest(isFinite));
    add("__nv_signbitf", "i:f", floatTest(signBit));
    add("__nv_signbitd", "i:d", floatTest(signBit));
    add("__nv_saturatef", "f:f",
        [](OpBuilder &b, Location loc, ModuleOp, ValueRange a) -> Value {
          // To [0, 1], NaN to 0.
          Type t = a[0].getType();
          Value lo = arith::MaximumFOp::create(b, loc, a[0], cst(b, loc, t, 0));
          Value r = arith::MinimumFOp::create(b, loc, lo, cst(b, loc, t, 1));
          Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                            a[0], a[0]);
          return arith::SelectOp::create(b, loc, nan, cst(b, loc, t, 0), r);
        });
    // Bits and conversions.
    add("__nv_float_as_int", "i:f", bitcastTo('i'));
    add("__nv_float_as_uint", "i:f", bitcastTo('i'));
    add("__nv_int_as_float", "f:i", bitcastTo('f'));
    add("__nv_uint_as_float", "f:i", bitcastTo('f'));
    add("__nv_double_as_longlong", "l:d", bitcastTo('l'));
    add("__nv_longlong_as_double", "d:l", bitcastTo('d'));
    for (char mode : {'n', 'z', 'd', 'u'}) {
      std::string suffix = std::string("_r") + mode;
      add("__nv_float2int" + suffix, "i:f", floatToInt(mode, i32Type, false));
      add("__nv_float2uint" + suffix, "i:f", floatToInt(mode, i32Type, true));
      add("__nv_float2ll" + suffix, "l:f", floatToInt(mode, i64Type, false));
      add("__nv_float2ull" + suffix, "l:f", floatToInt(mode, i64Type, true));
      add("__nv_double2int" + suffix, "i:d", floatToInt(mode, i32Type, false));
      add("__nv_double2uint" + suffix, "i:d", floatToInt(mode, i32Type, true));
      add("__nv_double2ll" + suffix, "l:d", floatToInt(mode, i64Type, false));
      add("__nv_double2ull" + suffix, "l:d", floatToInt(mode, i64Type, true));
    }
    auto toFloat = [](char letter, bool isUnsigned) -> Emit {
      return [=](OpBuilder &b, Location loc, ModuleOp, ValueRange a) -> Value {
        Type t = typeOf(b.getContext(), letter);
        if (isUnsigned)
          return arith::UIToFPOp::create(b, loc, t, a[0]);
        return arith::SIToFPOp::create(b, loc, t, a[0]);
      };
    };
    add("__nv_int2float_rn", "f:i", toFloat('f', false));
    add("__nv_uint2float_rn", "f:i", toFloat('f', true));
    add("__nv_ll2float_rn", "f:l", toFloat('f', false));
    add("__nv_ull2float_rn", "f:l", toFloat('f', true));
    add("__nv_int2double_rn", "d:i", toFloat('d', false));
    add("__nv_uint2double_rn", "d:i", toFloat('d', true));
    add("__nv_ll2double_rn", "d:l", toFloat('d', false));
    add("__nv_ull2double_rn", "d:l", toFloat('d', true));
    add("__nv_double2float_rn", "f:d",
        [](OpBuilder &b, Location loc, ModuleOp, ValueRange a) -> Value {
          return arith::TruncFOp::create(b, loc, b.getF32Type(), a[0]);
        });
    return t;
  }();
  return functions;
}

/// The op's types as a signature ("f:ff"), '?' for a type no entry has.
std::string signatureOf(tile::ExternElementwiseOp op) {
  std::string s(1, letterOf(getElementTypeOrSelf(op.getResult().getType())));
  s += ':';
  for (Value arg : op.getArgs())
    s += letterOf(getElementTypeOrSelf(arg.getType()));
  return s;
}

std::string describe(llvm::StringRef signature) {
  auto name = [](char c) -> std::string {
    switch (c) {
    case 'f': return "fp32";
    case 'd': return "fp64";
    case 'i': return "int32";
    case 'l': return "int64";
    default: return "another type";
    }
  };
  std::string args;
  for (char c : signature.drop_front(2))
    args += (args.empty() ? "" : ", ") + name(c);
  return "(" + args + ") -> " + name(signature[0]);
}

} // namespace

LogicalResult loops::checkExternFunction(tile::ExternElementwiseOp op) {
  auto it = table().find(op.getSymbol());
  if (it == table().end())
    return op.emitError("extern_elementwise: the cpu target has no function '")
           << op.getSymbol() << "'"
           << (op.getLibname().empty() ? std::string()
                                       : " (of " + op.getLibname().str() + ")")
           << ": of external functions it runs the libdevice functions "
              "(__nv_*) it maps to its own math, no others";
  std::string have = signatureOf(op);
  if (have != it->second.signature)
    return op.emitError("extern_elementwise: ")
           << op.getSymbol() << " takes " << describe(it->second.signature)
           << " on the cpu target, not " << describe(have);
  return success();
}

bool loops::hasExternFunction(tile::ExternElementwiseOp op) {
  auto it = table().find(op.getSymbol());
  return it != table().end() && it->second.signature == signatureOf(op);
}

Value loops::emitExternFunction(OpBuilder &b, ModuleOp module,
                                tile::ExternElementwiseOp op, ValueRange args) {
  const ExternFunction &fn = table().find(op.getSymbol())->second;
  return fn.emit(b, op.getLoc(), module, args);
}
