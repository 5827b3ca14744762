//===- AtomicOps.cpp - Global and LDS atomics -----------------------------===//
//
// global_atomic_* and ds_* read-modify-writes on 32- and 64-bit words (and
// packed halves): the memory is updated when the instruction issues, lane
// by lane in lane order; the forms that return (four operands: the old
// values' destination first) deliver the old values at the s_waitcnt that
// covers them, as loads do. Workgroups run one at a time, so an atomic is
// never interleaved with another workgroup's.
//
//===----------------------------------------------------------------------===//
#include "Wave.h"

#include "../SmallFloat.h"

#include <cmath>
#include <cstring>

namespace tessel::gpusim::amdgcn {
namespace {

enum class Rmw { Add, Sub, Swap, CmpSwap, SMin, UMin, SMax, UMax, And, Or, Xor, Inc, Dec, AddF32, AddF64,
                 MinF64, MaxF64, PkAddF16, PkAddBF16 };

struct AtomicInfo {
  Rmw rmw;
  bool wide;
};

/// The new value of a word; `data` is the instruction's data (with
/// cmpswap, the new value then the compare).
uint64_t apply(Rmw r, bool wide, uint64_t old, uint64_t data, uint64_t cmp) {
  auto sx = [&](uint64_t v) { return wide ? int64_t(v) : int64_t(int32_t(v)); };
  auto mask = [&](uint64_t v) { return wide ? v : uint64_t(uint32_t(v)); };
  switch (r) {
  case Rmw::Add: return mask(old + data);
  case Rmw::Sub: return mask(old - data);
  case Rmw::Swap: return data;
  case Rmw::CmpSwap: return old == cmp ? data : old;
  case Rmw::SMin: return sx(old) < sx(data) ? old : data;
  case Rmw::UMin: return old < data ? old : data;
  case Rmw::SMax: return sx(old) > sx(data) ? old : data;
  case Rmw::UMax: return old > data ? old : data;
  case Rmw::And: return old & data;
  case Rmw::Or: return old | data;
  case Rmw::Xor: return old ^ data;
  case Rmw::Inc: return old >= data ? 0 : mask(old + 1);
  case Rmw::Dec: return (old == 0 || old > data) ? data : mask(old - 1);
  case Rmw::AddF32: return asBits(asFloat(uint32_t(old)) + asFloat(uint32_t(data)));
  case Rmw::AddF64: return asBits64(asDouble(old) + asDouble(data));
  case Rmw::MinF64: {
    double a = asDouble(old), b = asDouble(data);
    return asBits64(std::isnan(a) ? b : std::isnan(b) ? a : std::fmin(a, b));
  }
  case Rmw::MaxF64: {
    double a = asDouble(old), b = asDouble(data);
    return asBits64(std::isnan(a) ? b : std::isnan(b) ? a : std::fmax(a, b));
  }
  case Rmw::PkAddF16:
  case Rmw::PkAddBF16: {
    bool bf = r == Rmw::PkAddBF16;
    uint32_t out = 0;
    for (int h = 0; h < 2; ++h) {
      uint16_t a = uint16_t(old >> (16 * h)), b = uint16_t(data >> (16 * h));
      double s = bf ? bf16ToDouble(a) + bf16ToDouble(b) : halfToDouble(a) + halfToDouble(b);
      out |= roundToSmallFloat(s, bf ? 8 : 5, bf ? 7 : 10, Rounding::RN, false) << (16 * h);
    }
    return out;
  }
  }
  return old;
}

AtomicInfo infoOf(const Wave &w, const std::string &name) {
  static const std::pair<const char *, Rmw> names[] = {
      {"add_f32", Rmw::AddF32}, {"add_f64", Rmw::AddF64}, {"min_f64", Rmw::MinF64}, {"max_f64", Rmw::MaxF64},
      {"pk_add_f16", Rmw::PkAddF16}, {"pk_add_bf16", Rmw::PkAddBF16}, {"cmpswap", Rmw::CmpSwap},
      {"swap", Rmw::Swap}, {"add", Rmw::Add}, {"sub", Rmw::Sub}, {"smin", Rmw::SMin}, {"umin", Rmw::UMin},
      {"smax", Rmw::SMax}, {"umax", Rmw::UMax}, {"and", Rmw::And}, {"or", Rmw::Or}, {"xor", Rmw::Xor},
      {"inc", Rmw::Inc}, {"dec", Rmw::Dec}};
  std::string body = name.substr(std::strlen("global_atomic_"));
  bool wide = body.size() > 3 && body.compare(body.size() - 3, 3, "_x2") == 0;
  if (wide)
    body.resize(body.size() - 3);
  for (auto &[n, r] : names)
    if (body == n)
      return {r, wide || r == Rmw::AddF64 || r == Rmw::MinF64 || r == Rmw::MaxF64};
  w.fail("unknown atomic " + name);
}

void globalAtomic(Wave &w, const Inst &I) {
  AtomicInfo info = infoOf(w, I.base);
  bool returns = I.ops.size() == 4;
  size_t vaddr = returns ? 1 : 0;
  const Operand &data = op(w, I, vaddr + 1), &saddr = op(w, I, vaddr + 2);
  unsigned words = info.wide ? 2 : 1;
  std::vector<uint32_t> old(size_t(words) * kLanes, 0);
  unsigned n = 0;
  for (int lane = 0; lane < kLanes; ++lane) {
    if (!w.active(lane))
      continue;
    ++n;
    uint64_t a = saddr.kind == OpKind::Off ? readLane64(w, op(w, I, vaddr), lane, Ty::B64)
                                           : readScalar64(w, saddr, Ty::B64) + readLane(w, op(w, I, vaddr), lane, Ty::B32);
    a += uint64_t(int64_t(I.mods.offset));
    unsigned bytes = 4 * words;
    if (a % bytes)
      w.fail("misaligned atomic of " + std::to_string(bytes) + " bytes", lane);
    uint8_t *p = w.global->translate(a, bytes);
    if (!p)
      w.fail("out-of-bounds atomic of " + std::to_string(bytes) + " bytes (" + w.global->describe(a, bytes) + ")",
             lane);
    uint64_t value = 0, cmp = 0, before = 0;
    value = readLane(w, data, lane, Ty::B32, 0);
    if (info.wide)
      value |= uint64_t(readLane(w, data, lane, Ty::B32, 1)) << 32;
    if (info.rmw == Rmw::CmpSwap) {
      cmp = readLane(w, data, lane, Ty::B32, int(words));
      if (info.wide)
        cmp |= uint64_t(readLane(w, data, lane, Ty::B32, int(words) + 1)) << 32;
    }
    std::memcpy(&before, p, bytes);
    uint64_t after = apply(info.rmw, info.wide, before, value, cmp);
    std::memcpy(p, &after, bytes);
    for (unsigned k = 0; k < words; ++k)
      old[k * kLanes + lane] = uint32_t(before >> (32 * k));
  }
  if (n)
    ++w.counters->globalStoreRequests;
  Pending p;
  if (returns) {
    const Operand &dst = op(w, I, 0);
    p.file = dst.kind == OpKind::AGPR ? Pending::A : Pending::V;
    p.reg = dst.reg;
    p.count = uint8_t(words);
    p.lanes = w.exec;
    p.values = std::move(old);
  }
  w.vm.push_back(std::move(p));
}

} // namespace

void registerAtomicOps(Table &t) {
  for (const char *n : {"add", "sub", "swap", "cmpswap", "smin", "umin", "smax", "umax", "and", "or", "xor", "inc",
                        "dec"}) {
    t[std::string("global_atomic_") + n] = globalAtomic;
    t[std::string("global_atomic_") + n + "_x2"] = globalAtomic;
  }
  for (const char *n : {"add_f32", "add_f64", "min_f64", "max_f64", "pk_add_f16", "pk_add_bf16"})
    t[std::string("global_atomic_") + n] = globalAtomic;
}

} // namespace tessel::gpusim::amdgcn
