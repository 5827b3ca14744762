//===- Decode.h - Opcode decoding shared by the instruction groups -===//
//
// Internal to lib/GPUSim. The parser splits an opcode into its base name and
// modifiers; the group that owns the base name consumes the modifiers it
// knows, converts immediates, checks operand counts and picks the handler.
// Whatever is left over is an "unknown modifier" error.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_GPUSIM_DECODE_H
#define TESSEL_LIB_GPUSIM_DECODE_H

#include "tessel/GPUSim/Error.h"
#include "tessel/GPUSim/Exec.h"
#include "tessel/GPUSim/Program.h"
#include "SmallFloat.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace tessel::gpusim {

/// What a group decoder sees of one instruction.
struct DecodeInput {
  std::string base;               // "add"
  std::vector<std::string> mods;  // {"rn", "f32"}
  const std::string &text;        // the whole statement, for errors
  uint32_t line;
  const std::vector<RegInfo> *regs = nullptr; // the kernel's registers

  bool take(const char *mod);
  /// Takes the first of `choices` present; returns its index or -1.
  int takeOneOf(std::initializer_list<const char *> choices);
  /// Takes and returns all type modifiers in order.
  std::vector<PType> takeTypes();
  Rounding takeRounding();
  StateSpace takeSpace();
  /// Fails on any modifier left.
  void finish() const;
  [[noreturn]] void fail(const std::string &why) const;
};

using Decoder = void (*)(DecodeInput &in, Inst &inst);
using DecoderTable = std::unordered_map<std::string, Decoder>;

/// Converts an immediate operand to the bits of `type` (a no-op for others).
void resolveImm(const DecodeInput &in, Operand &o, PType type);
/// Checks operand count and kinds: 'd' register destination, 's' source
/// (register, immediate or special register), 'p' predicate-capable source,
/// 'a' address, 'v' vector or register, 'l' label.
void expectOperands(const DecodeInput &in, const Inst &inst, const char *kinds);
/// The single type modifier of an instruction (an error when not exactly one).
PType oneType(DecodeInput &in);

void registerIntOps(DecoderTable &t);
void registerFloatOps(DecoderTable &t);
void registerConvertOps(DecoderTable &t);
void registerMemoryOps(DecoderTable &t);
void registerControlOps(DecoderTable &t);
void registerWarpOps(DecoderTable &t);
void registerTensorCoreOps(DecoderTable &t);
void registerMatrixLoadOps(DecoderTable &t);
void registerAsyncCopyOps(DecoderTable &t);
void registerAtomicOps(DecoderTable &t);
void registerWgmmaOps(DecoderTable &t);
void registerMBarrierOps(DecoderTable &t);
void registerTmaOps(DecoderTable &t);
void registerSystemCalls(DecoderTable &t);

/// Where `size` bytes at `addr` of `space` (generic addresses resolved) live
/// for `lane`, bounds- and alignment-checked as ld/st check them (a LaneError
/// otherwise).
uint8_t *hostAddress(ExecContext &c, int lane, StateSpace space, uint64_t addr,
                     unsigned size, bool store);

const DecoderTable &decoders();

/// HalfOps.cpp: f16/bf16 (scalar and x2) arithmetic and the fp8 cvt forms,
/// reached from the float arithmetic and cvt decoders.
bool isHalfArith(const DecodeInput &in);
void decodeHalfArith(DecodeInput &in, Inst &inst);
void setpHalf(ExecContext &c, const Inst &I, uint32_t mask); // setp .f16/.bf16
bool isFp8Cvt(const DecodeInput &in);
void decodeFp8Cvt(DecodeInput &in, Inst &inst);


} // namespace tessel::gpusim

#endif

namespace tessel::gpusim {
/// The float half of arithmetic opcodes shared with integers (add, sub, mul,
/// mad, min, max, abs, neg, div, setp); IntOps dispatches on the type.
void decodeFloatArith(DecodeInput &in, Inst &inst);
/// True when the opcode's modifiers name a floating-point type.
bool hasFloatType(const DecodeInput &in);
enum CmpOp : uint8_t { EQ, NE, LT, LE, GT, GE, LO, LS, HI, HS,
                       EQU, NEU, LTU, LEU, GTU, GEU, NUM, NAN_ };
enum BoolOp : uint8_t { BNone, BAnd, BOr, BXor };
/// Decodes setp's comparison and optional boolean combination.
void decodeCompare(DecodeInput &in, Inst &inst);
/// Applies setp's optional `.and/.or/.xor c` and writes `p[|q]`.
inline void writeSetp(ExecContext &c, const Inst &I, int lane, bool r) {
  bool p = r, q = !r;
  if (I.mode2 != BNone) {
    bool x = readOp(c, I.ops[3], lane) != 0;
    if (I.mode2 == BAnd) { p = p && x; q = q && x; }
    else if (I.mode2 == BOr) { p = p || x; q = q || x; }
    else { p = p != x; q = q != x; }
  }
  if (I.ops[0].kind == OpKind::Reg) {
    regRef(c, I.ops[0].reg, lane) = p;
    if (I.ops[0].reg2 != kNoReg)
      regRef(c, I.ops[0].reg2, lane) = q;
  }
}
} // namespace tessel::gpusim
