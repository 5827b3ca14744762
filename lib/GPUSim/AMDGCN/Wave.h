//===- Wave.h - The state of one wavefront and its workgroup ----*- C++ -*-===//
//
// What instruction semantics see: the wave's registers (64 lanes), its
// masks and its outstanding memory results, the workgroup's LDS and the
// launch's global memory. Operand readers apply the instruction's type to
// literals and its source modifiers to floats.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_GPUSIM_AMDGCN_WAVE_H
#define TESSEL_LIB_GPUSIM_AMDGCN_WAVE_H

#include "tessel/GPUSim/AMDGCN.h"
#include "tessel/GPUSim/Counters.h"
#include "tessel/GPUSim/Error.h"
#include "tessel/GPUSim/Memory.h"

#include <array>
#include <cmath>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessel::gpusim::amdgcn {

constexpr int kLanes = 64;
constexpr int kSgprs = 106;
constexpr int kVgprs = 256;

using Lanes = std::array<uint32_t, kLanes>;

/// A register write that arrives later: a load's result, applied at the
/// s_waitcnt that covers it (stores and LDS writes take a slot with nothing
/// to write, so that the counts stay in order).
struct Pending {
  enum File : uint8_t { None, S, V, A } file = None;
  uint16_t reg = 0;
  uint8_t count = 0;
  uint64_t lanes = 0;                // V, A: the lanes written
  uint32_t keep = 0;                 // V, A: bits of the old value kept (d16)
  std::vector<uint32_t> values;      // S: count; V, A: count * 64 (reg-major)
};

struct Workgroup;
class Hostcall;

struct Wave {
  const Kernel *kernel = nullptr;
  Workgroup *group = nullptr;
  GlobalMemory *global = nullptr;
  Counters *counters = nullptr;
  Hostcall *host = nullptr; // the launch's hostcall buffer (null: the kernel has none)
  uint32_t id = 0;       // wave index in the workgroup
  uint32_t s[kSgprs] = {};
  uint64_t vcc = 0, exec = 0;
  uint32_t m0 = 0;
  // gfx90a's flat scratch base, which kernels that call functions set up:
  // kept, never used (flat accesses reach global memory only).
  uint64_t flatScratch = 0;
  bool scc = false;
  std::vector<Lanes> v, a;
  std::vector<uint8_t> scratch; // private memory: the kernel's bytes per lane, lane after lane
  size_t pc = 0;
  bool done = false, atBarrier = false;
  std::deque<Pending> vm, lgkm;
  const Inst *inst = nullptr; // the instruction running (errors)

  Wave() : v(kVgprs), a(kVgprs) {}

  bool active(int lane) const { return (exec >> lane) & 1; }
  std::string where(int lane) const;
  [[noreturn]] void fail(const std::string &message, int lane = -1) const;
};

struct Workgroup {
  uint32_t id[3] = {0, 0, 0};
  uint32_t size[3] = {1, 1, 1}; // work-items along x, y, z
  std::vector<uint8_t> lds;
};

/// Operand `i` of the instruction; an error naming it when it has fewer.
inline const Operand &op(const Wave &w, const Inst &I, size_t i) {
  if (i >= I.ops.size())
    w.fail(I.op + " needs " + std::to_string(i + 1) + " operands");
  return I.ops[i];
}

/// How a literal is read: its bits as they are (integers, bit operations)
/// or a float literal converted to the type.
enum class Ty : uint8_t { B32, F32, F16, F64, B64 };

/// 32 bits of a scalar operand: part 0 is the low dword of a range.
uint32_t readScalar(const Wave &w, const Operand &o, Ty ty, int part = 0);
uint64_t readScalar64(const Wave &w, const Operand &o, Ty ty);
void writeScalar(Wave &w, const Operand &o, uint32_t value, int part = 0);
void writeScalar64(Wave &w, const Operand &o, uint64_t value);

/// 32 bits of a vector operand for `lane` (scalars and literals are the same
/// for every lane); source modifiers are not applied.
uint32_t readLane(const Wave &w, const Operand &o, int lane, Ty ty, int part = 0);
uint64_t readLane64(const Wave &w, const Operand &o, int lane, Ty ty);
/// Writes a vector register of the operand's range (VGPR or AGPR).
uint32_t &laneRef(Wave &w, const Operand &o, int lane, int part = 0);

/// Code addresses (s_getpc_b64, s_swappc_b64, s_setpc_b64): instruction `i`
/// of a kernel's code (its device functions appended) is at
/// kCodeBase + 4 * i, wherever it lies in the real code object.
inline constexpr uint64_t kCodeBase = uint64_t(0x7e00) << 32;
inline uint64_t codeAddress(size_t index) { return kCodeBase + 4 * uint64_t(index); }

/// The base address of the private segment buffer (gfx90a's scratch
/// resource, s[0:3] of kernels that ask for it): buffer accesses through it
/// reach the lane's private memory, as scratch_* instructions do.
inline constexpr uint64_t kPrivateBase = uint64_t(0xfffe) << 32;

inline float asFloat(uint32_t b) { float f; std::memcpy(&f, &b, 4); return f; }
inline uint32_t asBits(float f) { uint32_t b; std::memcpy(&b, &f, 4); return b; }
inline double asDouble(uint64_t b) { double d; std::memcpy(&d, &b, 8); return d; }
inline uint64_t asBits64(double d) { uint64_t b; std::memcpy(&b, &d, 8); return b; }

/// The f32 value of a source with its neg/abs modifiers.
inline float readF32(const Wave &w, const Operand &o, int lane) {
  float f = asFloat(readLane(w, o, lane, Ty::F32));
  if (o.abs) f = std::fabs(f);
  if (o.neg) f = -f;
  return f;
}
inline double readF64(const Wave &w, const Operand &o, int lane) {
  double d = asDouble(readLane64(w, o, lane, Ty::F64));
  if (o.abs) d = std::fabs(d);
  if (o.neg) d = -d;
  return d;
}

/// Applies pending register writes until at most `keep` remain.
void drain(Wave &w, std::deque<Pending> &queue, size_t keep);

/// The instruction table: semantics by base name (without _e32, _e64, _dpp,
/// _sdwa), filled by each group of operations.
using Table = std::unordered_map<std::string, Handler>;
void registerScalarOps(Table &t);
void registerVectorOps(Table &t);
void registerMemoryOps(Table &t);
void registerMatrixOps(Table &t);
void registerDoubleOps(Table &t);
void registerShortOps(Table &t);
void registerAtomicOps(Table &t);
void registerHostcallOps(Table &t);
void registerTrapOps(Table &t);
const Table &table();

/// Lane data movement of DPP: the lane `lane` reads from, or -1 (none).
int dppSourceLane(uint16_t control, int lane);

} // namespace tessel::gpusim::amdgcn

#endif // TESSEL_LIB_GPUSIM_AMDGCN_WAVE_H
