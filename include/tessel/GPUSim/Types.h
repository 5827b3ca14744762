//===- Types.h - PTX scalar types -------------------------------*- C++ -*-===//
#ifndef TESSEL_GPUSIM_TYPES_H
#define TESSEL_GPUSIM_TYPES_H

#include <cstdint>
#include <string_view>

namespace tessel::gpusim {

enum class PType : uint8_t {
  None,
  Pred,
  B8, B16, B32, B64,
  U8, U16, U32, U64,
  S8, S16, S32, S64,
  F16, F16x2, BF16, BF16x2, F32, F64,
  E4M3x2, E5M2x2, TF32,
};

/// Width in bits of a value of type `t` (1 for predicates).
unsigned bitWidth(PType t);
inline unsigned byteWidth(PType t) { return t == PType::Pred ? 1 : bitWidth(t) / 8; }
bool isSigned(PType t);
bool isFloat(PType t); // scalar f16, bf16, f32, f64 and tf32
bool isBits(PType t);
bool isInteger(PType t); // b*, u*, s*
/// Parses a type name without the dot ("f32"); None when unknown.
PType parseType(std::string_view name);
const char *typeName(PType t);

/// Low `bits` bits of v.
inline uint64_t truncBits(uint64_t v, unsigned bits) {
  return bits >= 64 ? v : (v & ((uint64_t(1) << bits) - 1));
}
/// Sign-extends the low `bits` bits of v.
inline int64_t signExtend(uint64_t v, unsigned bits) {
  if (bits >= 64)
    return int64_t(v);
  uint64_t m = uint64_t(1) << (bits - 1);
  v = truncBits(v, bits);
  return int64_t((v ^ m) - m);
}

} // namespace tessel::gpusim

#endif // TESSEL_GPUSIM_TYPES_H
