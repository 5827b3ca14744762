//===- DType.cpp - Frontend element types ---------------------------------===//
#include "tessel/Builder/DType.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace tessel;

namespace {
// The one table of the language's element types: every other list (the
// Python dtypes, the driver's readers of numpy/torch arrays, the AOT tool's C
// types) is built from it through tessel._C.scalar_types().
constexpr ScalarInfo kScalarTypes[] = {
    // kind, name, Triton's name, bits, numpy typestr, C type, other names
    {ScalarKind::I1, "i1", "int1", 1, "b1", "bool", "bool"},
    {ScalarKind::I8, "i8", "int8", 8, "i1", "int8_t", "int8"},
    {ScalarKind::I16, "i16", "int16", 16, "i2", "int16_t", "int16"},
    {ScalarKind::I32, "i32", "int32", 32, "i4", "int32_t", "int32"},
    {ScalarKind::I64, "i64", "int64", 64, "i8", "int64_t", "int64"},
    {ScalarKind::U8, "u8", "uint8", 8, "u1", "uint8_t", "uint8"},
    {ScalarKind::U16, "u16", "uint16", 16, "u2", "uint16_t", "uint16"},
    {ScalarKind::U32, "u32", "uint32", 32, "u4", "uint32_t", "uint32"},
    {ScalarKind::U64, "u64", "uint64", 64, "u8", "uint64_t", "uint64"},
    {ScalarKind::F8E4M3, "fp8e4nv", "fp8e4nv", 8, "", "uint8_t", "float8e4nv float8_e4m3fn"},
    {ScalarKind::F8E5M2, "fp8e5", "fp8e5", 8, "", "uint8_t", "float8e5 float8_e5m2"},
    {ScalarKind::F8E4M3B15, "fp8e4b15", "fp8e4b15", 8, "", "uint8_t", "float8e4b15"},
    {ScalarKind::F8E4M3FNUZ, "fp8e4b8", "fp8e4b8", 8, "", "uint8_t", "float8e4b8 float8_e4m3fnuz"},
    {ScalarKind::F8E5M2FNUZ, "fp8e5b16", "fp8e5b16", 8, "", "uint8_t", "float8e5b16 float8_e5m2fnuz"},
    {ScalarKind::F16, "fp16", "fp16", 16, "f2", "uint16_t", "float16 half"},
    {ScalarKind::BF16, "bf16", "bf16", 16, "", "uint16_t", "bfloat16"},
    {ScalarKind::F32, "fp32", "fp32", 32, "f4", "float", "float32 float"},
    {ScalarKind::F64, "fp64", "fp64", 64, "f8", "double", "float64 double"},
};
} // namespace

llvm::ArrayRef<ScalarInfo> tessel::scalarTypes() { return kScalarTypes; }

std::optional<DType> DType::parse(llvm::StringRef text) {
  DType result;
  if (text.consume_front("*")) {
    result.isPointer = true;
    result.isConst = text.consume_front("k");
  }
  for (const ScalarInfo &info : kScalarTypes)
    if (text == info.name) {
      result.kind = info.kind;
      return result;
    }
  return std::nullopt;
}

std::string DType::str() const {
  for (const ScalarInfo &info : kScalarTypes)
    if (info.kind == kind)
      return std::string(isPointer ? (isConst ? "*k" : "*") : "") + info.name;
  return "?";
}

bool DType::isFloat() const {
  return isFP8() || (!isPointer && (kind == ScalarKind::F16 || kind == ScalarKind::BF16 ||
                        kind == ScalarKind::F32 || kind == ScalarKind::F64));
}

bool DType::isInt() const { return !isPointer && !isFloat(); }

bool DType::isUnsigned() const {
  return !isPointer && (kind == ScalarKind::U8 || kind == ScalarKind::U16 ||
                        kind == ScalarKind::U32 || kind == ScalarKind::U64);
}

unsigned DType::bitwidth() const {
  if (isPointer)
    return 64;
  switch (kind) {
  case ScalarKind::I1: return 1;
  case ScalarKind::I8: case ScalarKind::U8: case ScalarKind::F8E4M3:
  case ScalarKind::F8E5M2: case ScalarKind::F8E4M3B15:
  case ScalarKind::F8E4M3FNUZ: case ScalarKind::F8E5M2FNUZ: return 8;
  case ScalarKind::I16: case ScalarKind::U16: case ScalarKind::F16:
  case ScalarKind::BF16: return 16;
  case ScalarKind::I32: case ScalarKind::U32: case ScalarKind::F32: return 32;
  case ScalarKind::I64: case ScalarKind::U64: case ScalarKind::F64: return 64;
  }
  return 0;
}

mlir::Type DType::toMLIR(mlir::MLIRContext *ctx) const {
  mlir::Type elt;
  switch (kind) {
  case ScalarKind::F8E4M3: elt = mlir::Float8E4M3FNType::get(ctx); break;
  case ScalarKind::F8E5M2: elt = mlir::Float8E5M2Type::get(ctx); break;
  // MLIR has no e4m3 type with bias 15: fp8e4b15 travels as f8E4M3B11FNUZ,
  // whose own semantics no pass uses (tile-expand-fp8 decodes and rounds it
  // by Triton's format before anything folds).
  case ScalarKind::F8E4M3B15: elt = mlir::Float8E4M3B11FNUZType::get(ctx); break;
  case ScalarKind::F8E4M3FNUZ: elt = mlir::Float8E4M3FNUZType::get(ctx); break;
  case ScalarKind::F8E5M2FNUZ: elt = mlir::Float8E5M2FNUZType::get(ctx); break;
  case ScalarKind::F16: elt = mlir::Float16Type::get(ctx); break;
  case ScalarKind::BF16: elt = mlir::BFloat16Type::get(ctx); break;
  case ScalarKind::F32: elt = mlir::Float32Type::get(ctx); break;
  case ScalarKind::F64: elt = mlir::Float64Type::get(ctx); break;
  default: elt = mlir::IntegerType::get(ctx, pointee().bitwidth()); break;
  }
  if (isPointer)
    return tile::PointerType::get(elt);
  return elt;
}
