//===- Program.h - Decoded PTX: kernels, operands, instructions -*- C++ -*-===//
//
// The parser turns PTX text into a Module once; the executor only ever sees
// these decoded structures (no text in the inner loop). Each instruction
// carries the handler of its semantics, chosen at decode time from its opcode,
// modifiers and type.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_GPUSIM_PROGRAM_H
#define TESSEL_GPUSIM_PROGRAM_H

#include "tessel/GPUSim/Types.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tessel::gpusim {

struct ExecContext;
struct Inst;
using Handler = void (*)(ExecContext &ctx, const Inst &inst, uint32_t mask);

enum class StateSpace : uint8_t { Generic, Global, Shared, Local, Param, Const };
const char *spaceName(StateSpace s);

enum class Sreg : uint8_t {
  TidX, TidY, TidZ, NtidX, NtidY, NtidZ,
  CtaidX, CtaidY, CtaidZ, NctaidX, NctaidY, NctaidZ,
  LaneId, WarpId, NWarpId, SmId, NSmId, GridId,
  LanemaskEq, LanemaskLt, LanemaskLe, LanemaskGt, LanemaskGe,
  Clock, Clock64, GlobalTimer, DynamicSmemSize, TotalSmemSize,
  // Thread block clusters (sm_90): a launch without .reqnctapercluster has
  // clusters of one CTA.
  ClusterCtaidX, ClusterCtaidY, ClusterCtaidZ,
  ClusterNctaidX, ClusterNctaidY, ClusterNctaidZ,
  ClusterIdX, ClusterIdY, ClusterIdZ, NclusterIdX, NclusterIdY, NclusterIdZ,
  ClusterCtaRank, ClusterNctaRank,
};

enum class OpKind : uint8_t {
  None,
  Reg,    // a register (predicate registers included)
  Imm,    // an immediate, already converted to the instruction's type bits
  Sreg,   // a special register (%tid.x ...)
  Addr,   // [base + offset]: base register (or none) plus a constant
  Vec,    // { %r1, %r2, ... } (elements are registers or the sink `_`)
  Label,  // a branch target (resolved to an instruction index)
  Sink,   // `_`
};

constexpr uint32_t kNoReg = ~0u;
constexpr unsigned kMaxOperands = 8;

struct Operand {
  OpKind kind = OpKind::None;
  bool neg = false;          // !%p
  uint16_t vecLen = 0;       // Vec: element count (wgmma takes up to 128)
  Sreg sreg = Sreg::TidX;
  uint32_t reg = kNoReg;     // Reg; Addr base (kNoReg: absolute)
  uint32_t reg2 = kNoReg;    // second destination of `%p|%q`
  uint64_t imm = 0;          // Imm bits; Addr constant offset; Label index
  std::vector<uint32_t> vec; // Vec elements (kNoReg for the sink `_`)
  // Before decoding finishes: literal facts needed to convert immediates.
  bool immIsFloat = false;
  uint8_t immFloatWidth = 0; // 32 for 0f..., 64 for 0d..., 0 for decimal
  double immFloat = 0;
  bool immNeg = false; // an integer literal written with '-'
  // Addr whose base is a variable: the variable's state space.
  bool hasSymbol = false;
  StateSpace symSpace = StateSpace::Generic;
};

/// Executed-instruction classes for the counters.
enum class InstClass : uint8_t {
  IntArith, FloatArith, Special, Convert, Move, Logic, Compare,
  LoadGlobal, StoreGlobal, LoadShared, StoreShared, LoadParam, LoadLocal,
  StoreLocal, Atomic, Warp, Barrier, Control, TensorCore, AsyncCopy, Other,
  Count
};
const char *instClassName(InstClass c);

enum class Op : uint16_t {
  Generic, // semantics entirely in the handler
  Bra, Ret, Exit, BarSync,
  WarpSync, // bar.warp.sync: checks convergence of the named lanes
};

struct Inst {
  Handler exec = nullptr;
  Op op = Op::Generic;
  InstClass cls = InstClass::Other;
  PType type = PType::None;  // the instruction type (destination type)
  PType type2 = PType::None; // cvt's source type, ...
  uint8_t mode = 0, mode2 = 0, mode3 = 0; // group-specific modifiers
  uint8_t rnd = 0;                         // Rounding
  bool ftz = false, sat = false;
  StateSpace space = StateSpace::Generic;
  uint8_t vec = 1; // .v2/.v4
  uint8_t nops = 0;
  bool hasGuard = false, guardNeg = false;
  uint32_t guard = kNoReg;
  uint32_t target = 0;     // branch target / reconvergence data
  uint32_t reconverge = 0; // immediate post-dominator (branches)
  uint32_t line = 0;       // PTX line
  uint32_t locFile = 0, locLine = 0, locCol = 0; // last .loc
  Operand ops[kMaxOperands];
};

enum class Rounding : uint8_t { None, RN, RZ, RM, RP, RNA, RNI, RZI, RMI, RPI };

struct RegInfo {
  std::string name;
  PType type;
};

struct Param {
  std::string name;
  PType type;      // scalar type (B8 with an array size for .b8 arrays)
  uint32_t size;   // bytes
  uint32_t align;
  uint32_t offset; // in the parameter buffer
  bool isPointer;  // declared .ptr or 64-bit: may carry an array
};

struct SharedVar {
  std::string name;
  uint32_t size, align;
  bool isExtern; // dynamic shared memory (size from the launch)
  uint32_t offset = 0;
};

struct Kernel {
  std::string name;
  std::vector<Param> params;
  uint32_t paramBytes = 0;
  std::vector<RegInfo> regs;
  /// Registers that hold a constant in every thread from the start (the
  /// immediates written inside vector operands): register, bits.
  std::vector<std::pair<uint32_t, uint64_t>> constants;
  std::vector<Inst> insts;
  std::vector<std::string> text; // the source text of each instruction
  // 64-bit: the launch refuses more than a GPU has (228 KiB of shared
  // memory a CTA, 512 KiB of local memory a thread), sizes never wrap.
  uint64_t staticSharedBytes = 0;
  uint64_t dynamicSharedOffset = 0; // where .extern .shared arrays start
  uint64_t localBytes = 0;          // per thread
  uint32_t reqntid[3] = {0, 0, 0};
  uint32_t maxntid[3] = {0, 0, 0};
  /// CTAs per cluster (.reqnctapercluster); 1 x 1 x 1 without it.
  uint32_t cluster[3] = {1, 1, 1};
  /// Calls of CUDA's system functions: vprintf, __assertfail.
  bool prints = false, asserts = false;
};

/// A module-scope .global or .const variable: its own allocation at a fixed
/// address, initialized from the PTX.
struct GlobalVar {
  std::string name;
  StateSpace space;
  uint64_t address;
  std::vector<uint8_t> init; // the whole variable (zeros where not given)
};

struct Module {
  std::string version, target;
  std::vector<GlobalVar> globals;
  unsigned addressSize = 64;
  std::vector<Kernel> kernels;
  std::map<unsigned, std::string> files; // .file number -> name
  const Kernel *find(const std::string &name) const;
};

/// Parses and decodes PTX text. Throws SimError naming the line of anything
/// it does not know.
Module parsePTX(const std::string &text);

} // namespace tessel::gpusim

#endif // TESSEL_GPUSIM_PROGRAM_H
