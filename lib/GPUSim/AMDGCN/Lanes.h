//===- Lanes.h - Per-lane execution of vector instructions -------*- C++ -*-===//
//
// What every group of vector instructions shares: reading a lane's sources
// (DPP's lane permutation and SDWA's selects applied to the first ones),
// running an operation over the active lanes and writing the results after
// every lane has read, and writing a compare's lane mask.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_GPUSIM_AMDGCN_LANES_H
#define TESSEL_LIB_GPUSIM_AMDGCN_LANES_H

#include "Wave.h"

#include "../SmallFloat.h"

#include <cmath>

namespace tessel::gpusim::amdgcn {

inline int dppRead(const Wave &w, const Inst &I, int lane) {
  int src = dppSourceLane(I.mods.dpp, lane);
  if (src >= 0 && !w.active(src))
    src = -1;
  return src;
}

inline bool dppWrites(const Inst &I, int lane) {
  return ((I.mods.rowMask >> (lane / 16)) & 1) && ((I.mods.bankMask >> ((lane & 15) / 4)) & 1);
}

/// Operand `i` of a lane as 32 bits; with DPP, the first source (operand
/// `first`) comes from the lane the control names (`zero` when none and
/// bound_ctrl is set); with SDWA, the source select applies.
struct Src {
  const Wave &w;
  const Inst &I;
  int lane;
  size_t first;
  bool zero = false; // DPP: this lane's first source reads 0

  /// The 32 bits with the float input modifiers applied to the sign bit,
  /// as the hardware applies them to a 32-bit operand (v_cndmask_b32 -v1).
  uint32_t bits(size_t i, Ty ty) const {
    const Operand &o = op(w, I, i);
    uint32_t v = raw(i, ty);
    if (o.abs) v &= 0x7fffffffu;
    if (o.neg) v ^= 0x80000000u;
    return v;
  }
  /// The 32 bits as the register holds them (DPP and SDWA applied).
  uint32_t raw(size_t i, Ty ty) const {
    const Operand &o = op(w, I, i);
    int from = lane;
    if (I.encoding == Encoding::DPP && i == first) {
      if (zero)
        return 0;
      from = dppRead(w, I, lane);
    }
    uint32_t v = readLane(w, o, from, ty);
    if (I.encoding == Encoding::SDWA && (i == first || i == first + 1)) {
      uint8_t sel = i == first ? I.mods.src0Sel : I.mods.src1Sel;
      bool sext = o.sext;
      if (sel < 4) {
        v = (v >> (8 * sel)) & 0xff;
        if (sext) v = uint32_t(int32_t(int8_t(v)));
      } else if (sel < 6) {
        v = (v >> (16 * (sel - 4))) & 0xffff;
        if (sext) v = uint32_t(int32_t(int16_t(v)));
      }
    }
    return v;
  }
  float f32(size_t i) const {
    const Operand &o = op(w, I, i);
    float f = asFloat(raw(i, Ty::F32));
    if (o.abs) f = std::fabs(f);
    if (o.neg) f = -f;
    return f;
  }
  uint64_t bits64(size_t i, Ty ty) const { return readLane64(w, op(w, I, i), lane, ty); }
  double f64(size_t i) const { return readF64(w, op(w, I, i), lane); }
  double f16(size_t i) const {
    const Operand &o = op(w, I, i);
    double d = halfToDouble(uint16_t(raw(i, Ty::F16)));
    if (o.abs) d = std::fabs(d);
    if (o.neg) d = -d;
    return d;
  }
};

/// Output modifiers of float results: omod, then clamp to [0, 1].
inline float outF32(const Inst &I, float r) {
  switch (I.mods.omod) {
  case 1: r *= 2; break;
  case 2: r *= 4; break;
  case 3: r *= 0.5f; break;
  default: break;
  }
  if (I.mods.clamp)
    r = std::isnan(r) ? 0.0f : std::fmin(std::fmax(r, 0.0f), 1.0f);
  return r;
}

/// Runs `f(src)` for each active lane whose result the instruction writes,
/// then writes the results (after every lane has read: a DPP source may be
/// the destination) to operand `dst`.
template <typename F>
void each(Wave &w, const Inst &I, size_t dst, size_t first, F f) {
  uint32_t out[kLanes];
  uint64_t written = 0;
  for (int lane = 0; lane < kLanes; ++lane) {
    if (!w.active(lane))
      continue;
    Src s{w, I, lane, first};
    if (I.encoding == Encoding::DPP) {
      if (!dppWrites(I, lane))
        continue;
      if (dppRead(w, I, lane) < 0) {
        if (!I.mods.boundCtrl)
          continue;
        s.zero = true;
      }
    }
    out[lane] = f(s);
    written |= uint64_t(1) << lane;
  }
  const Operand &d = op(w, I, dst);
  for (int lane = 0; lane < kLanes; ++lane) {
    if (!((written >> lane) & 1))
      continue;
    uint32_t v = out[lane];
    if (I.encoding == Encoding::SDWA && I.mods.dstSel != 6) {
      uint32_t old = laneRef(w, d, lane);
      unsigned shift = I.mods.dstSel < 4 ? 8 * I.mods.dstSel : 16 * (I.mods.dstSel - 4);
      uint32_t mask = (I.mods.dstSel < 4 ? 0xffu : 0xffffu) << shift;
      v = ((v << shift) & mask) | (I.mods.dstUnusedPreserve ? old & ~mask : 0);
    }
    laneRef(w, d, lane) = v;
  }
}

/// Writes each active lane's 64-bit result to the register pair of
/// operand 0 (after every lane has read its sources).
inline void write64(Wave &w, const Inst &I, const uint64_t *out) {
  const Operand &d = op(w, I, 0);
  for (int lane = 0; lane < kLanes; ++lane)
    if (w.active(lane)) {
      laneRef(w, d, lane, 0) = uint32_t(out[lane]);
      laneRef(w, d, lane, 1) = uint32_t(out[lane] >> 32);
    }
}

template <typename F>
void each64(Wave &w, const Inst &I, F f) {
  uint64_t out[kLanes];
  for (int lane = 0; lane < kLanes; ++lane)
    if (w.active(lane))
      out[lane] = f(Src{w, I, lane, 1});
  write64(w, I, out);
}

/// A compare: bit `lane` of the mask written to operand 0 (vcc or an SGPR
/// pair), 0 for inactive lanes.
template <typename F>
void compareLanes(Wave &w, const Inst &I, F f, bool toExec) {
  uint64_t mask = 0;
  for (int lane = 0; lane < kLanes; ++lane)
    if (w.active(lane) && f(Src{w, I, lane, 1}))
      mask |= uint64_t(1) << lane;
  if (toExec) { // v_cmpx: EXEC too (the _e32 form writes only EXEC on gfx9+)
    if (I.ops.size() == 3)
      writeScalar64(w, op(w, I, 0), mask);
    w.exec = mask;
  } else {
    writeScalar64(w, op(w, I, 0), mask);
  }
}

/// The lanes' bit `lane` of a 64-bit mask operand (vcc, an SGPR pair).
inline bool maskBit(const Wave &w, const Operand &o, int lane) {
  return (readScalar64(w, o, Ty::B64) >> lane) & 1;
}

/// v_max/v_min of floats (IEEE mode): a NaN operand gives the other, and
/// -0 orders below +0.
template <typename T> T maxNum(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == 0 && b == 0) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <typename T> T minNum(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == 0 && b == 0) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

} // namespace tessel::gpusim::amdgcn

#endif // TESSEL_LIB_GPUSIM_AMDGCN_LANES_H
