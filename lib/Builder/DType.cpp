//===- DType.cpp - Frontend element types ---------------------------------===//
#include "tessel/Builder/DType.h"

#include "tessel/Dialect/Tile/IR/Dialect.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace tessel;

namespace {
struct KindName {
  ScalarKind kind;
  const char *name;
};
constexpr KindName kKindNames[] = {
    {ScalarKind::I1, "i1"},     {ScalarKind::I8, "i8"},
    {ScalarKind::I16, "i16"},   {ScalarKind::I32, "i32"},
    {ScalarKind::I64, "i64"},   {ScalarKind::U8, "u8"},
    {ScalarKind::U16, "u16"},   {ScalarKind::U32, "u32"},
    {ScalarKind::U64, "u64"},   {ScalarKind::F16, "fp16"},
    {ScalarKind::BF16, "bf16"}, {ScalarKind::F32, "fp32"},
    {ScalarKind::F64, "fp64"},
};
} // namespace

std::optional<DType> DType::parse(llvm::StringRef text) {
  DType result;
  if (text.consume_front("*"))
    result.isPointer = true;
  for (const KindName &kn : kKindNames)
    if (text == kn.name) {
      result.kind = kn.kind;
      return result;
    }
  return std::nullopt;
}

std::string DType::str() const {
  for (const KindName &kn : kKindNames)
    if (kn.kind == kind)
      return std::string(isPointer ? "*" : "") + kn.name;
  return "?";
}

bool DType::isFloat() const {
  return !isPointer && (kind == ScalarKind::F16 || kind == ScalarKind::BF16 ||
                        kind == ScalarKind::F32 || kind == ScalarKind::F64);
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
  case ScalarKind::I8: case ScalarKind::U8: return 8;
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
