//===- MemoryOps.cpp - Scalar, global, buffer and LDS memory --------------===//
//
// Loads read memory when they issue and write their registers when the
// s_waitcnt covering them runs (vmcnt: global and buffer; lgkmcnt: scalar
// and LDS); stores and LDS writes take effect when they issue. Global
// accesses outside every array are errors; buffer accesses past the
// resource's num_records read 0 and write nothing, as the hardware's range
// check does (the kernels rely on it for masking). LDS accesses outside the
// workgroup's allocation are errors. gfx950's transposed LDS reads
// (ds_read_b64_tr_b16/b8) exchange 16 lanes' reads. Flat accesses reach
// global memory only (the LDS and scratch apertures are not simulated);
// they count on both vmcnt and lgkmcnt, their results landing with vmcnt.
//
//===----------------------------------------------------------------------===//
#include "Wave.h"

#include <cstring>

namespace tessel::gpusim::amdgcn {
namespace {

/// The bytes an access reads or writes and how its result lands in the
/// register(s): whole dwords, or a byte/short zero- or sign-extended, or a
/// d16 half (the other half kept).
struct Width {
  unsigned bytes = 4;
  bool sign = false;
  int d16 = -1; // -1 not d16; 0 low half; 1 high half
};

bool widthOf(const std::string &suffix, Width &w) {
  if (suffix == "dword" || suffix == "b32") { w = {4}; return true; }
  if (suffix == "dwordx2" || suffix == "b64") { w = {8}; return true; }
  if (suffix == "dwordx3" || suffix == "b96") { w = {12}; return true; }
  if (suffix == "dwordx4" || suffix == "b128") { w = {16}; return true; }
  if (suffix == "ubyte" || suffix == "u8" || suffix == "byte" || suffix == "b8") { w = {1}; return true; }
  if (suffix == "sbyte" || suffix == "i8") { w = {1, true}; return true; }
  if (suffix == "ushort" || suffix == "u16" || suffix == "short" || suffix == "b16") { w = {2}; return true; }
  if (suffix == "sshort" || suffix == "i16") { w = {2, true}; return true; }
  if (suffix == "short_d16" || suffix == "u16_d16" || suffix == "b16_d16") { w = {2, false, 0}; return true; }
  if (suffix == "short_d16_hi" || suffix == "u16_d16_hi" || suffix == "b16_d16_hi") { w = {2, false, 1}; return true; }
  if (suffix == "ubyte_d16" || suffix == "u8_d16") { w = {1, false, 0}; return true; }
  if (suffix == "ubyte_d16_hi" || suffix == "u8_d16_hi" || suffix == "byte_d16_hi" || suffix == "b8_d16_hi") { w = {1, false, 1}; return true; }
  if (suffix == "sbyte_d16" || suffix == "i8_d16") { w = {1, true, 0}; return true; }
  if (suffix == "sbyte_d16_hi" || suffix == "i8_d16_hi") { w = {1, true, 1}; return true; }
  return false;
}

Width widthFor(const Wave &w, const Inst &I, size_t prefix) {
  Width width;
  if (!widthOf(I.base.substr(prefix), width))
    w.fail("unknown access width in " + I.op);
  return width;
}

/// Register values of a loaded element (`bytes` at p) for the width.
void unpack(const Width &wd, const uint8_t *p, uint32_t *out) {
  if (wd.bytes >= 4) {
    std::memcpy(out, p, wd.bytes);
    return;
  }
  uint32_t v = 0;
  std::memcpy(&v, p, wd.bytes);
  if (wd.sign)
    v = wd.bytes == 1 ? uint32_t(int32_t(int8_t(v))) : uint32_t(int32_t(int16_t(v)));
  if (wd.d16 == 1)
    v <<= 16;
  else if (wd.d16 == 0)
    v &= 0xffff;
  out[0] = v;
}

/// Bytes of a stored element from its register values.
void pack(const Width &wd, const uint32_t *in, uint8_t *p) {
  if (wd.bytes >= 4) {
    std::memcpy(p, in, wd.bytes);
    return;
  }
  uint32_t v = wd.d16 == 1 ? in[0] >> 16 : in[0];
  std::memcpy(p, &v, wd.bytes);
}

unsigned regsOf(const Width &wd) { return wd.bytes >= 4 ? wd.bytes / 4 : 1; }
uint32_t keepOf(const Width &wd) {
  return wd.d16 == 0 ? 0xffff0000u : wd.d16 == 1 ? 0x0000ffffu : 0;
}

void queueVector(Wave &w, std::deque<Pending> &q, const Operand &dst, const Width &wd, uint64_t lanes,
                 std::vector<uint32_t> values) {
  Pending p;
  p.file = dst.kind == OpKind::AGPR ? Pending::A : Pending::V;
  if (dst.kind != OpKind::VGPR && dst.kind != OpKind::AGPR)
    w.fail("a load needs a vector register destination");
  p.reg = dst.reg;
  p.count = uint8_t(regsOf(wd));
  if (dst.reg + p.count > kVgprs)
    w.fail("the load's destination runs past the last register");
  p.lanes = lanes;
  p.keep = keepOf(wd);
  p.values = std::move(values);
  q.push_back(std::move(p));
}

void queueNothing(std::deque<Pending> &q) { q.push_back(Pending{}); }

uint8_t *globalAt(Wave &w, uint64_t addr, unsigned size, int lane, bool store) {
  uint8_t *p = w.global->translate(addr, size);
  if (!p)
    w.fail(std::string("out-of-bounds global ") + (store ? "store" : "load") + " of " + std::to_string(size) +
               " bytes at 0x" + [&] { char b[32]; std::snprintf(b, sizeof b, "%llx", (unsigned long long)addr); return std::string(b); }() +
               " (" + w.global->describe(addr, size) + ")",
           lane);
  return p;
}

/// The address of a global access for `lane`: vaddr (64 bits) with `off`,
/// or saddr (an SGPR pair) plus a 32-bit vaddr; then the offset.
uint64_t globalAddress(const Wave &w, const Inst &I, size_t vaddr, int lane) {
  const Operand &saddr = op(w, I, vaddr + (I.base.compare(0, 12, "global_store") == 0 ? 2 : 1));
  uint64_t a;
  if (saddr.kind == OpKind::Off)
    a = readLane64(w, op(w, I, vaddr), lane, Ty::B64);
  else
    a = readScalar64(w, saddr, Ty::B64) + readLane(w, op(w, I, vaddr), lane, Ty::B32);
  return a + uint64_t(int64_t(I.mods.offset));
}

void countGlobal(Wave &w, bool store, const uint64_t *addrs, unsigned n, unsigned size) {
  if (!n)
    return;
  unsigned sectors = countSectors(addrs, n, size);
  if (store) {
    ++w.counters->globalStoreRequests;
    w.counters->globalStoreSectors += sectors;
    w.counters->globalStoreBytes += uint64_t(n) * size;
  } else {
    ++w.counters->globalLoadRequests;
    w.counters->globalLoadSectors += sectors;
    w.counters->globalLoadBytes += uint64_t(n) * size;
  }
}

/// The address of a flat access for `lane`: vaddr (64 bits) and the offset.
uint64_t flatAddress(const Wave &w, const Inst &I, size_t vaddr, int lane) {
  return readLane64(w, op(w, I, vaddr), lane, Ty::B64) + uint64_t(int64_t(I.mods.offset));
}

template <bool Flat> void globalLoad(Wave &w, const Inst &I) {
  Width wd = widthFor(w, I, std::strlen(Flat ? "flat_load_" : "global_load_"));
  unsigned regs = regsOf(wd);
  std::vector<uint32_t> values(size_t(regs) * kLanes, 0);
  uint64_t addrs[kLanes];
  unsigned n = 0;
  for (int lane = 0; lane < kLanes; ++lane) {
    if (!w.active(lane))
      continue;
    uint64_t a = Flat ? flatAddress(w, I, 1, lane) : globalAddress(w, I, 1, lane);
    addrs[n++] = a;
    uint32_t tmp[4] = {0, 0, 0, 0};
    unpack(wd, globalAt(w, a, wd.bytes, lane, false), tmp);
    for (unsigned r = 0; r < regs; ++r)
      values[r * kLanes + lane] = tmp[r];
  }
  countGlobal(w, false, addrs, n, wd.bytes);
  queueVector(w, w.vm, op(w, I, 0), wd, w.exec, std::move(values));
  if (Flat)
    queueNothing(w.lgkm);
}

template <bool Flat> void globalStore(Wave &w, const Inst &I) {
  Width wd = widthFor(w, I, std::strlen(Flat ? "flat_store_" : "global_store_"));
  uint64_t addrs[kLanes];
  unsigned n = 0;
  for (int lane = 0; lane < kLanes; ++lane) {
    if (!w.active(lane))
      continue;
    uint64_t a = Flat ? flatAddress(w, I, 0, lane) : globalAddress(w, I, 0, lane);
    addrs[n++] = a;
    uint32_t data[4];
    for (unsigned r = 0; r < regsOf(wd); ++r)
      data[r] = readLane(w, op(w, I, 1), lane, Ty::B32, int(r));
    pack(wd, data, globalAt(w, a, wd.bytes, lane, true));
  }
  countGlobal(w, true, addrs, n, wd.bytes);
  queueNothing(w.vm);
  if (Flat)
    queueNothing(w.lgkm);
}

/// `bytes` of the lane's private memory at `a`; an error outside them.
uint8_t *privateAt(const Wave &w, uint64_t a, unsigned bytes, int lane) {
  uint64_t perLane = w.kernel->privateBytes;
  if (a + bytes > perLane)
    w.fail("scratch access of " + std::to_string(bytes) + " bytes at " + std::to_string(a) + " outside the lane's " +
               std::to_string(perLane) + " bytes of private memory",
           lane);
  return const_cast<uint8_t *>(w.scratch.data()) + perLane * uint64_t(lane) + a;
}

/// A buffer resource (V#): base address, stride, num_records.
struct Resource {
  uint64_t base;
  uint32_t stride, records;
};

Resource resourceOf(const Wave &w, const Operand &o) {
  if (o.kind != OpKind::SGPR || o.count != 4)
    w.fail("a buffer resource is four SGPRs");
  uint32_t d0 = readScalar(w, o, Ty::B32, 0), d1 = readScalar(w, o, Ty::B32, 1),
           d2 = readScalar(w, o, Ty::B32, 2);
  return {uint64_t(d0) | uint64_t(d1 & 0xffff) << 32, (d1 >> 16) & 0x3fff, d2};
}

/// Buffer accesses: `vdata, vaddr (voffset with offen), srsrc, soffset`.
/// Each dword past num_records reads 0 and is not written.
void bufferAccess(Wave &w, const Inst &I, bool store) {
  Width wd = widthFor(w, I, std::strlen(store ? "buffer_store_" : "buffer_load_"));
  if (I.mods.idxen)
    w.fail("indexed buffer accesses (idxen) are not modeled");
  Resource r = resourceOf(w, op(w, I, 2));
  if (r.stride)
    w.fail("buffer resources with a stride are not modeled");
  uint32_t soffset = readScalar(w, op(w, I, 3), Ty::B32);
  unsigned regs = regsOf(wd);
  std::vector<uint32_t> values(size_t(regs) * kLanes, 0);
  uint64_t addrs[kLanes];
  unsigned n = 0;
  for (int lane = 0; lane < kLanes; ++lane) {
    if (!w.active(lane))
      continue;
    uint64_t offset = uint64_t(I.mods.offen ? readLane(w, op(w, I, 1), lane, Ty::B32) : 0) +
                      uint64_t(uint32_t(I.mods.offset)) + soffset;
    uint8_t bytes[16] = {};
    uint32_t data[4] = {0, 0, 0, 0};
    if (store)
      for (unsigned k = 0; k < regs; ++k)
        data[k] = readLane(w, op(w, I, 0), lane, Ty::B32, int(k));
    if (store)
      pack(wd, data, bytes);
    bool any = false;
    if (r.base == kPrivateBase) {
      // The private segment buffer: the lane's own bytes (the hardware
      // swizzles lanes' dwords; each lane sees its own addresses). soffset
      // counts the wave's bytes (the stack pointer s32 moves by 64 per
      // byte of each lane's frame): a lane's share is 1/64 of it.
      if (soffset % kLanes)
        w.fail("a private segment buffer access whose soffset (" + std::to_string(soffset) +
                   ") is not a whole number of bytes per lane",
               lane);
      offset = offset - soffset + soffset / kLanes;
      uint8_t *p = privateAt(w, offset, wd.bytes, lane);
      if (store)
        std::memcpy(p, bytes, wd.bytes);
      else
        std::memcpy(bytes, p, wd.bytes);
      if (!store) {
        unpack(wd, bytes, data);
        for (unsigned k = 0; k < regs; ++k)
          values[k * kLanes + lane] = data[k];
      }
      continue;
    }
    for (unsigned k = 0; k < wd.bytes; k += 4) {
      unsigned size = std::min(4u, wd.bytes - k);
      if (offset + k + size > r.records)
        continue; // out of range: reads 0, writes nothing
      uint8_t *p = globalAt(w, r.base + offset + k, size, lane, store);
      if (store)
        std::memcpy(p, bytes + k, size);
      else
        std::memcpy(bytes + k, p, size);
      any = true;
    }
    if (any)
      addrs[n++] = r.base + offset;
    if (!store) {
      unpack(wd, bytes, data);
      for (unsigned k = 0; k < regs; ++k)
        values[k * kLanes + lane] = data[k];
    }
  }
  countGlobal(w, store, addrs, n, wd.bytes);
  if (store)
    queueNothing(w.vm);
  else
    queueVector(w, w.vm, op(w, I, 0), wd, w.exec, std::move(values));
}

uint8_t *ldsAt(Wave &w, uint64_t addr, unsigned size, int lane) {
  std::vector<uint8_t> &lds = w.group->lds;
  if (addr + size > lds.size())
    w.fail("LDS access of " + std::to_string(size) + " bytes at " + std::to_string(addr) +
               " outside the workgroup's " + std::to_string(lds.size()) + " bytes",
           lane);
  return lds.data() + addr;
}

/// The bank cycles of one LDS access of `size` bytes per lane at the LDS
/// addresses `addrs` of the active lanes `lanes` (one element of a ds_read2
/// or ds_write2 at a time): 32 banks of 4 bytes serve 128 bytes a cycle, 32
/// lanes of a 4-byte access, 16 of an 8-byte one, 8 of a 16-byte one, in
/// lane order, each half of the wave apart; lanes reading one dword share
/// it. The cycles beyond one per group of lanes are bank conflicts. (A
/// model: CDNA3's ds_read_b128 groups its lanes in another order, which
/// this does not take.)
void countLdsBanks(Wave &w, bool store, const std::vector<uint32_t> &lanes,
                   const std::vector<uint32_t> &addrs, unsigned size) {
  for (uint32_t half = 0; half < 2; ++half) {
    uint32_t l[32], a[32];
    unsigned n = 0;
    for (size_t i = 0; i < lanes.size(); ++i)
      if (lanes[i] / 32 == half) {
        l[n] = lanes[i] % 32;
        a[n++] = addrs[i];
      }
    if (!n)
      continue;
    // 12-byte accesses go 8 lanes at a time, as 16-byte ones.
    SharedWavefronts c = countWavefronts(l, a, n, size == 12 ? 16 : size);
    (store ? w.counters->sharedStoreWavefronts : w.counters->sharedLoadWavefronts) += c.wavefronts;
    (store ? w.counters->sharedStoreConflicts : w.counters->sharedLoadConflicts) += c.conflicts();
  }
}

void countLds(Wave &w, bool store, unsigned lanes) {
  if (!lanes)
    return;
  if (store)
    ++w.counters->sharedStoreRequests;
  else
    ++w.counters->sharedLoadRequests;
}

/// An LDS access's form: one element (ds_read_b32 ..., offset: bytes) or two
/// (ds_read2_b32 ..., offset0/offset1: elements; st64: 64 elements each).
struct LdsForm {
  bool two, st64;
  Width width;
  LdsForm(const Wave &w, const Inst &I, const std::string &prefix) {
    const std::string &name = I.base;
    two = name.compare(0, prefix.size() + 1, prefix + "2") == 0;
    st64 = name.compare(0, prefix.size() + 5, prefix + "2st64") == 0;
    width = widthFor(w, I, prefix.size() + (two ? (st64 ? 6 : 2) : 1));
  }
  unsigned elements() const { return two ? 2 : 1; }
  uint64_t offset(const Inst &I, unsigned e) const {
    if (!two)
      return uint64_t(uint32_t(I.mods.offset));
    return uint64_t(e ? I.mods.offset1 : I.mods.offset0) * width.bytes * (st64 ? 64 : 1);
  }
};

/// ds_read_*, ds_read2_*, ds_read2st64_*.
void ldsRead(Wave &w, const Inst &I) {
  LdsForm form(w, I, "ds_read");
  const Width &wd = form.width;
  unsigned regs = regsOf(wd), elems = form.elements();
  std::vector<uint32_t> values(size_t(regs) * elems * kLanes, 0);
  std::vector<uint32_t> lanes, addrs[2];
  for (int lane = 0; lane < kLanes; ++lane) {
    if (!w.active(lane))
      continue;
    lanes.push_back(uint32_t(lane));
    uint64_t base = readLane(w, op(w, I, 1), lane, Ty::B32);
    for (unsigned e = 0; e < elems; ++e) {
      uint64_t off = form.offset(I, e);
      uint32_t tmp[4] = {0, 0, 0, 0};
      unpack(wd, ldsAt(w, base + off, wd.bytes, lane), tmp);
      addrs[e].push_back(uint32_t(base + off));
      for (unsigned r = 0; r < regs; ++r)
        values[(e * regs + r) * kLanes + lane] = tmp[r];
    }
  }
  countLds(w, false, unsigned(lanes.size()));
  for (unsigned e = 0; e < elems; ++e)
    countLdsBanks(w, false, lanes, addrs[e], wd.bytes);
  Width all = wd;
  all.bytes *= elems;
  queueVector(w, w.lgkm, op(w, I, 0), all, w.exec, std::move(values));
}

/// ds_read_b64_tr_b16 and ds_read_b64_tr_b8 (gfx950): each group of 16
/// lanes reads a block of 64 bits per lane and hands it out transposed.
/// With n = 64 / bits elements per lane, the group's 16 x n elements are
/// rows of 16 elements, 16 / n lanes' reads each (lane j holds elements
/// (j % (16 / n)) * n ... of row j / (16 / n)); lane i of the group gets
/// column i: element i % n of the reads of lanes (16 / n) * k + i / n, for
/// k = 0 .. n - 1. (The rule that makes the code Triton 3.6 makes for gfx950,
/// which is right on the hardware, compute its matmuls and attention: the
/// other assignment of rows to lanes does not.)
void ldsReadTranspose(Wave &w, const Inst &I, unsigned bits) {
  const unsigned per = 64 / bits, lanesPerRow = 16 / per;
  uint64_t loaded[kLanes] = {};
  std::vector<uint32_t> lanes, addrs;
  for (int lane = 0; lane < kLanes; ++lane) {
    if (!w.active(lane))
      continue;
    lanes.push_back(uint32_t(lane));
    uint64_t a = readLane(w, op(w, I, 1), lane, Ty::B32) + uint64_t(uint32_t(I.mods.offset));
    std::memcpy(&loaded[lane], ldsAt(w, a, 8, lane), 8);
    addrs.push_back(uint32_t(a));
  }
  const uint64_t mask = (uint64_t(1) << bits) - 1;
  std::vector<uint32_t> values(2 * kLanes, 0);
  for (int lane = 0; lane < kLanes; ++lane) {
    if (!w.active(lane))
      continue;
    int group = lane & ~15, i = lane & 15;
    uint64_t out = 0;
    for (unsigned k = 0; k < per; ++k) {
      int src = group + int(lanesPerRow * k + i / per);
      if (!w.active(src))
        w.fail("ds_read_b64_tr reads the block of an inactive lane", lane);
      out |= (loaded[src] >> (bits * (i % per)) & mask) << (bits * k);
    }
    values[lane] = uint32_t(out);
    values[kLanes + lane] = uint32_t(out >> 32);
  }
  countLds(w, false, unsigned(lanes.size()));
  countLdsBanks(w, false, lanes, addrs, 8);
  queueVector(w, w.lgkm, op(w, I, 0), Width{8}, w.exec, std::move(values));
}

/// ds_write_*, ds_write2_*, ds_write2st64_*.
void ldsWrite(Wave &w, const Inst &I) {
  LdsForm form(w, I, "ds_write");
  const Width &wd = form.width;
  unsigned elems = form.elements();
  std::vector<uint32_t> lanes, addrs[2];
  for (int lane = 0; lane < kLanes; ++lane) {
    if (!w.active(lane))
      continue;
    lanes.push_back(uint32_t(lane));
    uint64_t base = readLane(w, op(w, I, 0), lane, Ty::B32);
    for (unsigned e = 0; e < elems; ++e) {
      uint64_t off = form.offset(I, e);
      uint32_t data[4];
      for (unsigned r = 0; r < regsOf(wd); ++r)
        data[r] = readLane(w, op(w, I, 1 + e), lane, Ty::B32, int(r));
      pack(wd, data, ldsAt(w, base + off, wd.bytes, lane));
      addrs[e].push_back(uint32_t(base + off));
    }
  }
  countLds(w, true, unsigned(lanes.size()));
  for (unsigned e = 0; e < elems; ++e)
    countLdsBanks(w, true, lanes, addrs[e], wd.bytes);
  queueNothing(w.lgkm);
}

/// ds_bpermute_b32 (each lane reads the lane its address names) and
/// ds_permute_b32 (each lane writes to it); a lane reading an inactive lane
/// reads 0.
void ldsPermute(Wave &w, const Inst &I, bool backward) {
  std::vector<uint32_t> values(kLanes, 0);
  uint32_t data[kLanes];
  for (int lane = 0; lane < kLanes; ++lane)
    data[lane] = w.active(lane) ? readLane(w, op(w, I, 2), lane, Ty::B32) : 0;
  for (int lane = 0; lane < kLanes; ++lane) {
    if (!w.active(lane))
      continue;
    int other = int(((readLane(w, op(w, I, 1), lane, Ty::B32) + uint32_t(I.mods.offset)) >> 2) & 63);
    if (backward)
      values[lane] = data[other];
    else
      values[other] = data[lane];
  }
  queueVector(w, w.lgkm, op(w, I, 0), Width{4}, w.exec, std::move(values));
}

/// ds_swizzle_b32: each lane reads the lane its offset names, in quad mode
/// (bit 15: selector l % 4 of four 2-bit fields) or bitmask mode (within 32
/// lanes, ((l & and) | or) ^ xor); a lane reading an inactive lane reads 0.
void ldsSwizzle(Wave &w, const Inst &I) {
  uint32_t off = uint32_t(I.mods.offset);
  if (off > 0xffff || (off & 0x8000 && (off & 0xff00) != 0x8000))
    w.fail("ds_swizzle_b32 offset " + std::to_string(off) +
           ": only the quad and bitmask modes are modeled");
  uint32_t data[kLanes];
  for (int lane = 0; lane < kLanes; ++lane)
    data[lane] = w.active(lane) ? readLane(w, op(w, I, 1), lane, Ty::B32) : 0;
  std::vector<uint32_t> values(kLanes, 0);
  for (int lane = 0; lane < kLanes; ++lane) {
    if (!w.active(lane))
      continue;
    int src;
    if (off & 0x8000) {
      src = (lane & ~3) | int(off >> (2 * (lane & 3)) & 3);
    } else {
      int andMask = off & 0x1f, orMask = off >> 5 & 0x1f, xorMask = off >> 10 & 0x1f;
      src = (lane & ~31) | (((lane & andMask) | orMask) ^ xorMask);
    }
    values[lane] = data[src];
  }
  queueVector(w, w.lgkm, op(w, I, 0), Width{4}, w.exec, std::move(values));
}

/// scratch_load/store (architected flat scratch, gfx940+): the address
/// vaddr (or off) + saddr (or off) + offset within the lane's private
/// memory.
void scratchAccess(Wave &w, const Inst &I, bool store) {
  Width wd = widthFor(w, I, std::strlen(store ? "scratch_store_" : "scratch_load_"));
  size_t vaddr = store ? 0 : 1;
  const Operand &v = op(w, I, vaddr), &saddr = op(w, I, store ? 2 : 2);
  unsigned regs = regsOf(wd);
  std::vector<uint32_t> values(size_t(regs) * kLanes, 0);
  for (int lane = 0; lane < kLanes; ++lane) {
    if (!w.active(lane))
      continue;
    uint64_t a = (v.kind == OpKind::Off ? 0 : readLane(w, v, lane, Ty::B32)) +
                 (saddr.kind == OpKind::Off ? 0 : readScalar(w, saddr, Ty::B32)) + uint64_t(int64_t(I.mods.offset));
    uint8_t *p = privateAt(w, a, wd.bytes, lane);
    uint32_t data[4] = {0, 0, 0, 0};
    if (store) {
      for (unsigned r = 0; r < regs; ++r)
        data[r] = readLane(w, op(w, I, 1), lane, Ty::B32, int(r));
      pack(wd, data, p);
    } else {
      unpack(wd, p, data);
      for (unsigned r = 0; r < regs; ++r)
        values[r * kLanes + lane] = data[r];
    }
  }
  if (store)
    queueNothing(w.vm);
  else
    queueVector(w, w.vm, op(w, I, 0), wd, w.exec, std::move(values));
}

void scalarLoad(Wave &w, const Inst &I) {
  std::string suffix = I.base.substr(std::strlen("s_load_"));
  unsigned count = suffix == "dword" ? 1 : suffix == "dwordx2" ? 2 : suffix == "dwordx4" ? 4
                   : suffix == "dwordx8" ? 8 : suffix == "dwordx16" ? 16 : 0;
  if (!count)
    w.fail("unknown scalar load " + I.op);
  const Operand &dst = op(w, I, 0);
  if (dst.kind != OpKind::SGPR || dst.count != count)
    w.fail("a scalar load of " + std::to_string(count) + " dwords needs as many SGPRs");
  uint64_t addr = readScalar64(w, op(w, I, 1), Ty::B64) +
                  (I.ops.size() > 2 ? uint64_t(readScalar(w, op(w, I, 2), Ty::B32)) : 0) +
                  uint64_t(int64_t(I.mods.offset));
  Pending p;
  p.file = Pending::S;
  p.reg = dst.reg;
  p.count = uint8_t(count);
  p.values.resize(count);
  std::memcpy(p.values.data(), globalAt(w, addr, count * 4, -1, false), count * 4);
  w.lgkm.push_back(std::move(p));
}

} // namespace

void registerMemoryOps(Table &t) {
  for (const char *s : {"dword", "dwordx2", "dwordx4", "dwordx8", "dwordx16"})
    t[std::string("s_load_") + s] = scalarLoad;
  for (const char *s : {"dword", "dwordx2", "dwordx3", "dwordx4", "ubyte", "sbyte", "ushort", "sshort",
                        "short_d16", "short_d16_hi", "ubyte_d16", "ubyte_d16_hi", "sbyte_d16", "sbyte_d16_hi"}) {
    t[std::string("global_load_") + s] = globalLoad<false>;
    t[std::string("flat_load_") + s] = globalLoad<true>;
    t[std::string("buffer_load_") + s] = [](Wave &w, const Inst &I) { bufferAccess(w, I, false); };
  }
  for (const char *s : {"dword", "dwordx2", "dwordx3", "dwordx4", "byte", "short", "byte_d16_hi", "short_d16_hi"}) {
    t[std::string("global_store_") + s] = globalStore<false>;
    t[std::string("flat_store_") + s] = globalStore<true>;
    t[std::string("buffer_store_") + s] = [](Wave &w, const Inst &I) { bufferAccess(w, I, true); };
  }
  for (const char *s : {"b32", "b64", "b96", "b128", "u8", "i8", "u16", "i16", "u16_d16", "u16_d16_hi",
                        "u8_d16", "u8_d16_hi", "i8_d16", "i8_d16_hi"})
    t[std::string("ds_read_") + s] = ldsRead;
  for (const char *s : {"b32", "b64"}) {
    t[std::string("ds_read2_") + s] = ldsRead;
    t[std::string("ds_read2st64_") + s] = ldsRead;
    t[std::string("ds_write2_") + s] = ldsWrite;
    t[std::string("ds_write2st64_") + s] = ldsWrite;
  }
  for (const char *s : {"b8", "b16", "b32", "b64", "b96", "b128", "b8_d16_hi", "b16_d16_hi"})
    t[std::string("ds_write_") + s] = ldsWrite;
  for (const char *s : {"dword", "dwordx2", "dwordx3", "dwordx4", "ubyte", "sbyte", "ushort", "sshort",
                        "short_d16", "short_d16_hi", "ubyte_d16", "ubyte_d16_hi"})
    t[std::string("scratch_load_") + s] = [](Wave &w, const Inst &I) { scratchAccess(w, I, false); };
  for (const char *s : {"dword", "dwordx2", "dwordx3", "dwordx4", "byte", "short", "byte_d16_hi", "short_d16_hi"})
    t[std::string("scratch_store_") + s] = [](Wave &w, const Inst &I) { scratchAccess(w, I, true); };
  t["ds_read_b64_tr_b16"] = [](Wave &w, const Inst &I) { ldsReadTranspose(w, I, 16); };
  t["ds_read_b64_tr_b8"] = [](Wave &w, const Inst &I) { ldsReadTranspose(w, I, 8); };
  t["ds_bpermute_b32"] = [](Wave &w, const Inst &I) { ldsPermute(w, I, true); };
  t["ds_swizzle_b32"] = ldsSwizzle;
  t["ds_permute_b32"] = [](Wave &w, const Inst &I) { ldsPermute(w, I, false); };
}

} // namespace tessel::gpusim::amdgcn
