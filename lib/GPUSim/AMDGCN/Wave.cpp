//===- Wave.cpp - Operands, pending writes and errors of a wave -----------===//
#include "Wave.h"

#include "../SmallFloat.h"

#include <cmath>
#include <sstream>

namespace tessel::gpusim::amdgcn {

std::string Wave::where(int lane) const {
  std::ostringstream os;
  os << "workgroup (" << group->id[0] << "," << group->id[1] << "," << group->id[2] << "), wave " << id;
  if (lane >= 0)
    os << ", lane " << lane << " (work-item " << id * kLanes + uint32_t(lane) << ")";
  if (inst)
    os << ", AMDGCN line " << inst->line << ": " << inst->text;
  return os.str();
}

void Wave::fail(const std::string &message, int lane) const {
  throw SimError(message + "\n  at " + where(lane));
}

namespace {

uint32_t literal32(const Wave &w, const Operand &o, Ty ty, int part) {
  if (o.kind == OpKind::Int) {
    int64_t v = int64_t(o.bits);
    // A 32-bit literal of an f64 operand is the double's high half; the
    // integer inline constants (-16..64) and 64-bit integer operands are
    // the value itself, sign-extended.
    if (ty == Ty::F64 && (v < -16 || v > 64))
      return part ? uint32_t(o.bits) : 0;
    if (ty == Ty::F64 || ty == Ty::B64)
      return uint32_t(part ? o.bits >> 32 : o.bits);
    return part ? 0 : uint32_t(o.bits);
  }
  switch (ty) {
  case Ty::F32:
  case Ty::B32:
    return part ? 0 : asBits(float(o.value));
  case Ty::F16:
    return part ? 0 : roundToSmallFloat(o.value, 5, 10, Rounding::RN, false);
  case Ty::F64:
  case Ty::B64: {
    uint64_t b = asBits64(o.value);
    return uint32_t(part ? b >> 32 : b);
  }
  }
  w.fail("unreadable literal");
}

} // namespace

uint32_t readScalar(const Wave &w, const Operand &o, Ty ty, int part) {
  switch (o.kind) {
  case OpKind::SGPR:
    if (o.reg + part >= kSgprs)
      w.fail("SGPR s" + std::to_string(o.reg + part) + " does not exist");
    return w.s[o.reg + part];
  case OpKind::VCC:
    return uint32_t(w.vcc >> (32 * (o.reg + part)));
  case OpKind::Exec:
    return uint32_t(w.exec >> (32 * (o.reg + part)));
  case OpKind::FlatScratch:
    return uint32_t(w.flatScratch >> (32 * (o.reg + part)));
  case OpKind::M0:
    return w.m0;
  case OpKind::SCC:
    return w.scc;
  case OpKind::Int:
  case OpKind::Float:
    return literal32(w, o, ty, part);
  default:
    w.fail("expected a scalar operand");
  }
}

uint64_t readScalar64(const Wave &w, const Operand &o, Ty ty) {
  return uint64_t(readScalar(w, o, ty, 0)) | uint64_t(readScalar(w, o, ty, 1)) << 32;
}

void writeScalar(Wave &w, const Operand &o, uint32_t value, int part) {
  switch (o.kind) {
  case OpKind::SGPR:
    if (o.reg + part >= kSgprs)
      w.fail("SGPR s" + std::to_string(o.reg + part) + " does not exist");
    w.s[o.reg + part] = value;
    return;
  case OpKind::VCC: {
    int shift = 32 * (o.reg + part);
    w.vcc = (w.vcc & ~(uint64_t(0xffffffffu) << shift)) | uint64_t(value) << shift;
    return;
  }
  case OpKind::Exec: {
    int shift = 32 * (o.reg + part);
    w.exec = (w.exec & ~(uint64_t(0xffffffffu) << shift)) | uint64_t(value) << shift;
    return;
  }
  case OpKind::FlatScratch: {
    int shift = 32 * (o.reg + part);
    w.flatScratch = (w.flatScratch & ~(uint64_t(0xffffffffu) << shift)) | uint64_t(value) << shift;
    return;
  }
  case OpKind::M0:
    w.m0 = value;
    return;
  default:
    w.fail("expected a scalar destination");
  }
}

void writeScalar64(Wave &w, const Operand &o, uint64_t value) {
  writeScalar(w, o, uint32_t(value), 0);
  writeScalar(w, o, uint32_t(value >> 32), 1);
}

uint32_t readLane(const Wave &w, const Operand &o, int lane, Ty ty, int part) {
  if (o.kind == OpKind::VGPR)
    return w.v[o.reg + part][lane];
  if (o.kind == OpKind::AGPR)
    return w.a[o.reg + part][lane];
  return readScalar(w, o, ty, part);
}

uint64_t readLane64(const Wave &w, const Operand &o, int lane, Ty ty) {
  return uint64_t(readLane(w, o, lane, ty, 0)) | uint64_t(readLane(w, o, lane, ty, 1)) << 32;
}

uint32_t &laneRef(Wave &w, const Operand &o, int lane, int part) {
  if (o.reg + part >= kVgprs)
    w.fail("register " + std::to_string(o.reg + part) + " does not exist");
  if (o.kind == OpKind::VGPR)
    return w.v[o.reg + part][lane];
  if (o.kind == OpKind::AGPR)
    return w.a[o.reg + part][lane];
  w.fail("expected a vector register destination");
}

void drain(Wave &w, std::deque<Pending> &queue, size_t keep) {
  while (queue.size() > keep) {
    Pending &p = queue.front();
    if (p.file == Pending::S) {
      for (unsigned i = 0; i < p.count; ++i)
        w.s[p.reg + i] = p.values[i];
    } else if (p.file != Pending::None) {
      std::vector<Lanes> &file = p.file == Pending::V ? w.v : w.a;
      for (unsigned i = 0; i < p.count; ++i)
        for (int lane = 0; lane < kLanes; ++lane)
          if ((p.lanes >> lane) & 1)
            file[p.reg + i][lane] = (file[p.reg + i][lane] & p.keep) | (p.values[i * kLanes + lane] & ~p.keep);
    }
    queue.pop_front();
  }
}

const Table &table() {
  static const Table t = [] {
    Table t;
    registerScalarOps(t);
    registerVectorOps(t);
    registerMemoryOps(t);
    registerMatrixOps(t);
    registerDoubleOps(t);
    registerShortOps(t);
    registerAtomicOps(t);
    registerHostcallOps(t);
    registerTrapOps(t);
    return t;
  }();
  return t;
}

} // namespace tessel::gpusim::amdgcn
