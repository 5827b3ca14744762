//===- Types.cpp - PTX scalar types ---------------------------------------===//
#include "tessel/GPUSim/Types.h"

#include <string>
#include <unordered_map>

namespace tessel::gpusim {

unsigned bitWidth(PType t) {
  switch (t) {
  case PType::Pred: return 1;
  case PType::B8: case PType::U8: case PType::S8: return 8;
  case PType::B16: case PType::U16: case PType::S16: case PType::F16:
  case PType::BF16: case PType::E4M3x2: case PType::E5M2x2: return 16;
  case PType::B32: case PType::U32: case PType::S32: case PType::F32:
  case PType::F16x2: case PType::BF16x2: case PType::TF32: return 32;
  case PType::B64: case PType::U64: case PType::S64: case PType::F64: return 64;
  case PType::None: return 0;
  }
  return 0;
}

bool isSigned(PType t) {
  return t == PType::S8 || t == PType::S16 || t == PType::S32 ||
         t == PType::S64;
}
bool isFloat(PType t) {
  return t == PType::F16 || t == PType::BF16 || t == PType::F32 ||
         t == PType::F64 || t == PType::TF32;
}
bool isBits(PType t) {
  return t == PType::B8 || t == PType::B16 || t == PType::B32 ||
         t == PType::B64;
}
bool isInteger(PType t) {
  return isBits(t) || isSigned(t) || t == PType::U8 || t == PType::U16 ||
         t == PType::U32 || t == PType::U64;
}

static const std::unordered_map<std::string_view, PType> &typeNames() {
  static const std::unordered_map<std::string_view, PType> m = {
      {"pred", PType::Pred}, {"b8", PType::B8},       {"b16", PType::B16},
      {"b32", PType::B32},   {"b64", PType::B64},     {"u8", PType::U8},
      {"u16", PType::U16},   {"u32", PType::U32},     {"u64", PType::U64},
      {"s8", PType::S8},     {"s16", PType::S16},     {"s32", PType::S32},
      {"s64", PType::S64},   {"f16", PType::F16},     {"f16x2", PType::F16x2},
      {"bf16", PType::BF16}, {"bf16x2", PType::BF16x2}, {"f32", PType::F32},
      {"f64", PType::F64},   {"e4m3x2", PType::E4M3x2}, {"e5m2x2", PType::E5M2x2},
      {"tf32", PType::TF32},
  };
  return m;
}

PType parseType(std::string_view name) {
  auto f = typeNames().find(name);
  return f == typeNames().end() ? PType::None : f->second;
}

const char *typeName(PType t) {
  for (auto &[n, v] : typeNames())
    if (v == t)
      return n.data();
  return "none";
}

} // namespace tessel::gpusim
