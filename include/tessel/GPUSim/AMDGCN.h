//===- AMDGCN.h - AMD GPU code in the simulator ------------------*- C++ -*-===//
//
// The simulator's AMDGCN front end: the assembly text LLVM's AMDGPU backend
// writes (Tessel's hip targets and Triton's asm["amdgcn"] alike) is parsed
// once into kernels of decoded instructions, their kernel descriptors
// (.amdhsa_*) and their metadata (the kernel arguments' layout), then run as
// a grid of workgroups of wave64 wavefronts with the machine state of CDNA
// (SGPRs, VGPRs, AGPRs, EXEC, VCC, SCC, M0). Memory, launch arguments,
// counters and errors are those of the PTX path (Memory.h, Launch.h).
//
// Loads arrive in their registers only at the s_waitcnt that covers them,
// as on the hardware: a kernel that reads a load's destination too early
// reads what the register held before.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_GPUSIM_AMDGCN_H
#define TESSEL_GPUSIM_AMDGCN_H

#include "tessel/GPUSim/Launch.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessel::gpusim::amdgcn {

struct Wave;
struct Inst;
using Handler = void (*)(Wave &wave, const Inst &inst);

enum class OpKind : uint8_t {
  None,
  SGPR,  // s5, s[4:5]
  VGPR,  // v5, v[4:7]
  AGPR,  // a5, a[0:15]
  VCC,   // vcc (64 bits), vcc_lo, vcc_hi (part 0, 1)
  Exec,  // exec, exec_lo, exec_hi
  FlatScratch, // flat_scratch, flat_scratch_lo, flat_scratch_hi (gfx90a)
  M0,
  SCC,
  Int,   // an integer literal or inline constant: its bits
  Float, // a float literal: converted to the instruction's type when read
  Off,   // `off`: no address register
  Label,
};

struct Operand {
  OpKind kind = OpKind::None;
  uint16_t reg = 0;   // first register (or the part of vcc/exec: 0 low, 1 high)
  uint8_t count = 1;  // registers in the range (2 for vcc and exec)
  bool neg = false, abs = false;
  bool sext = false;  // SDWA: the selected bits sign-extended
  uint64_t bits = 0;  // Int
  double value = 0;   // Float
  int64_t target = -1; // Label: the instruction index
};

/// The instruction's modifiers (the words after its operands).
struct Modifiers {
  int32_t offset = 0, offset0 = 0, offset1 = 0;
  bool offen = false, idxen = false, clamp = false;
  uint8_t omod = 0; // 0 none, 1 mul:2, 2 mul:4, 3 div:2
  // DPP: the control (DppNone when the instruction has none), its masks and
  // whether lanes reading a disabled or missing source lane read zero.
  uint16_t dpp = 0;
  uint8_t rowMask = 0xf, bankMask = 0xf;
  bool boundCtrl = false;
  // VOP3P: op_sel (bit i: operand i's low half from its high one; bit 3 the
  // destination) and op_sel_hi (the high half's source), neg_lo, neg_hi.
  // Unwritten, op_sel_hi is all ones for packed math and all zeros for
  // v_fma_mix* (every source f32): opSelHiGiven tells which.
  uint8_t opSel = 0, opSelHi = 0x7, negLo = 0, negHi = 0;
  bool opSelHiGiven = false;
  // SDWA selects: 0-3 bytes, 4-5 words, 6 dword; 0xff none.
  uint8_t dstSel = 6, src0Sel = 6, src1Sel = 6;
  bool dstUnusedPreserve = false;
  // v_bitop3: the truth table of f(src0, src1, src2), bit 4a + 2b + c.
  uint8_t bitop3 = 0;
  // MFMA broadcast controls.
  uint8_t cbsz = 0, abid = 0, blgp = 0;
  // s_waitcnt: -1 where a counter is not waited on.
  int8_t vmcnt = -1, lgkmcnt = -1, expcnt = -1;
  // s_sendmsg: the message (1 MSG_INTERRUPT); -1 when none is written.
  int8_t message = -1;
};

enum class Encoding : uint8_t { Default, E32, E64, DPP, SDWA };

struct Inst {
  Handler run = nullptr;
  std::string op;       // as written, e.g. v_add_f32_e32
  std::string base;     // without the encoding suffix, e.g. v_add_f32
  Encoding encoding = Encoding::Default;
  InstClass cls = InstClass::Other; // the counters' class
  std::vector<Operand> ops;
  Modifiers mods;
  unsigned line = 0;    // 1-based line of the text
  std::string text;     // the instruction as written (errors)
};

struct KernelArg {
  uint32_t offset = 0, size = 0;
  std::string kind; // global_buffer, by_value, hidden_*
};

struct Kernel {
  std::string name;
  std::vector<Inst> code;
  std::vector<KernelArg> args;   // explicit and hidden, in segment order
  uint32_t kernargBytes = 0;
  uint32_t ldsBytes = 0;         // .group_segment_fixed_size
  uint32_t privateBytes = 0;     // scratch per lane (not modeled when > 0)
  uint32_t wavefrontSize = 64;
  uint32_t maxWorkgroupSize = 1024;
  // Kernel descriptor: where the hardware puts what in the SGPRs and VGPRs.
  uint32_t userSgprCount = 0;
  bool privateSegmentBuffer = false, dispatchPtr = false, queuePtr = false,
       kernargSegmentPtr = false, dispatchId = false, flatScratchInit = false,
       privateSegmentSize = false;
  uint32_t kernargPreloadLength = 0, kernargPreloadOffset = 0;
  bool workgroupId[3] = {true, false, false};
  bool workgroupInfo = false, privateSegmentWaveOffset = false;
  uint32_t workitemIdMode = 0; // 0 x, 1 x y, 2 x y z (packed in v0)
  uint32_t accumOffset = 0;
  std::string target;          // the .amdgcn_target chip, e.g. gfx942
  bool prints = false;         // has s_sendmsg: may print (hostcall printf)
};

/// A module-scope variable (.rodata, .data: printf's format strings), placed
/// at `address` in global memory at each launch; code reaches it by
/// relative address (s_getpc_b64 and sym@rel32@lo/hi).
struct DataObject {
  std::string name;
  uint64_t address = 0;
  std::vector<uint8_t> bytes;
};

struct Module {
  std::vector<Kernel> kernels;
  std::vector<DataObject> data; // in increasing address order
  const Kernel *find(const std::string &name) const;
};

/// Parses AMDGCN assembly; throws SimError naming the line of anything it
/// cannot read, and of every instruction the simulator does not model.
Module parse(const std::string &text);

/// Runs `kernel` of `module` over `config.grid` workgroups of
/// `config.block` work-items; the arguments are the kernel's explicit ones
/// (LaunchArg Buffer, Int, Float, Null) in order. Throws SimError on any
/// failure, naming the workgroup, wave, lane and instruction.
LaunchResult launch(const Module &module, const std::string &kernel,
                    const LaunchConfig &config, std::vector<LaunchArg> &args);

} // namespace tessel::gpusim::amdgcn

#endif // TESSEL_GPUSIM_AMDGCN_H
