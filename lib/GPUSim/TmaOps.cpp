//===- TmaOps.cpp - cp.async.bulk(.tensor) and bulk groups ----------------===//
//
// TMA, the tensor memory accelerator:
//   cp.async.bulk.tensor.{1..5}d.shared::cluster.global{.tile}
//       .mbarrier::complete_tx::bytes{.L2::cache_hint}
//       [dst], [tensorMap, {c0, ..}], [mbar]{, policy}
//   cp.async.bulk.tensor.{1..5}d.global.shared::cta{.tile}.bulk_group
//       {.L2::cache_hint} [tensorMap, {c0, ..}], [src]{, policy}
// and the non-tensor forms
//   cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
//       [dst], [src], size, [mbar]
//   cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size
// with cp.async.bulk.commit_group and cp.async.bulk.wait_group{.read} N.
//
// Each executing thread issues its own copy (Triton elects one). A copy is
// performed when it is issued: a load then signals complete_tx of its bytes
// on its mbarrier, so waiters see the phase complete once every expected
// byte arrived; bulk-group waits have nothing left to wait for. The tensor
// map is the simulator's encoding (TensorMap.h), found through a generic
// address (a by-value kernel parameter after cvta.param, or a global copy
// made by tensormap.cp_fenceproxy) or a .param variable.
//
// Tile mode: the box of boxDim[i] / elementStride[i] elements starting at the
// coordinates is stored densely in shared memory, innermost dimension first;
// box elements outside the tensor (negative coordinates or >= the global
// dimension) read as zeros (or NaN with fill mode 1) and are not written by
// stores. Swizzle modes 32B/64B/128B permute the 16-byte chunks of the
// shared-memory address: bits [4, 4+b) ^= bits [7, 7+b) with b = 1, 2, 3,
// the same function wgmma's matrix descriptors use, so a box written by a
// TMA load reads back through a descriptor of the same swizzle. Counters:
// async_copy_bytes gets the bytes of every global->shared copy.
//
//===----------------------------------------------------------------------===//
#include "AsyncUnits.h"

#include "tessel/GPUSim/TensorMap.h"

#include <cmath>
#include <cstring>
#include <sstream>

namespace tessel::gpusim {
namespace {

struct TensorMapView {
  uint64_t address;
  unsigned rank, esize, swizzle, fill, elemType;
  uint32_t dims[5], box[5], estride[5];
  uint64_t strides[5]; // bytes, [0] = esize
};

[[noreturn]] void tmaError(int lane, const std::string &msg) {
  throw LaneError(lane, "cp.async.bulk.tensor: " + msg);
}

const uint8_t *findTensorMap(ExecContext &c, const Operand &a, int lane) {
  uint64_t addr = operandAddress(c, a, lane);
  if (a.hasSymbol && a.symSpace == StateSpace::Param) {
    if (addr + kTensorMapBytes > c.params.size())
      tmaError(lane, "the tensor map parameter is smaller than 128 bytes");
    return c.params.data() + addr;
  }
  if (addr % 64)
    tmaError(lane, "the tensor map address must be 64-byte aligned");
  if (addr >= kParamWindow && addr < kParamWindow + kWindowSize) {
    uint64_t off = addr - kParamWindow;
    if (off + kTensorMapBytes > c.params.size())
      tmaError(lane, "the tensor map lies past the kernel parameters");
    return c.params.data() + off;
  }
  if (addr >= kSharedWindow && addr < kSharedWindow + kWindowSize)
    tmaError(lane, "the tensor map must be in global, const or param memory, not shared");
  const uint8_t *p = c.global.translate(addr, kTensorMapBytes);
  if (!p)
    tmaError(lane,
             "tensor map: " + c.global.describe(addr, kTensorMapBytes));
  return p;
}

TensorMapView readTensorMap(ExecContext &c, const Operand &a, int lane) {
  const uint8_t *m = findTensorMap(c, a, lane);
  uint32_t magic;
  std::memcpy(&magic, m + tensormap::Magic, 4);
  if (magic != kTensorMapMagic)
    tmaError(lane, "the operand is not a tensor map (build it with "
                   "tessel.gpusim.TensorMap or tensormap.replace)");
  TensorMapView v;
  std::memcpy(&v.address, m + tensormap::Address, 8);
  v.rank = m[tensormap::Rank];
  v.elemType = m[tensormap::ElemType];
  v.esize = tensormap::elementBytes(v.elemType);
  v.swizzle = m[tensormap::Swizzle];
  v.fill = m[tensormap::Fill];
  if (v.rank < 1 || v.rank > 5)
    tmaError(lane, "tensor map rank " + std::to_string(v.rank) + " is not in [1, 5]");
  if (!v.esize)
    tmaError(lane, "tensor map element type " + std::to_string(v.elemType) + " is unknown");
  if (m[tensormap::Interleave])
    tmaError(lane, "interleaved tensor maps are not simulated");
  if (v.swizzle > 3 || v.fill > 1)
    tmaError(lane, "bad swizzle or fill mode in the tensor map");
  std::memcpy(v.dims, m + tensormap::GlobalDim, 20);
  std::memcpy(v.box, m + tensormap::BoxDim, 20);
  std::memcpy(v.estride, m + tensormap::ElementStride, 20);
  v.strides[0] = v.esize;
  std::memcpy(v.strides + 1, m + tensormap::GlobalStride, 32);
  if (v.address % 16)
    tmaError(lane, "the tensor map's global address must be 16-byte aligned");
  for (unsigned i = 0; i < v.rank; ++i) {
    if (v.dims[i] == 0)
      tmaError(lane, "global dimension " + std::to_string(i) + " is 0");
    if (v.box[i] == 0 || v.box[i] > 256)
      tmaError(lane, "box dimension " + std::to_string(i) + " must be in [1, 256]");
    if (v.estride[i] == 0 || v.estride[i] > 8)
      tmaError(lane, "element stride " + std::to_string(i) + " must be in [1, 8]");
    if (i && v.strides[i] % 16)
      tmaError(lane, "global stride " + std::to_string(i) + " (" +
                         std::to_string(v.strides[i]) + " bytes) is not a multiple of 16");
  }
  return v;
}

inline uint32_t swizzleAddr(uint32_t a, unsigned mode) {
  // mode 1: 32B, 2: 64B, 3: 128B
  if (!mode)
    return a;
  uint32_t mask = (1u << mode) - 1;
  return a ^ (((a >> 7) & mask) << 4);
}

/// The tensor copy of one thread; load: global -> shared, else shared -> global.
uint64_t tensorCopy(ExecContext &c, const Inst &I, int lane, bool load,
                    const Operand &smemOp, const Operand &mapOp) {
  TensorMapView m = readTensorMap(c, mapOp, lane);
  const unsigned rank = I.mode2;
  if (m.rank != rank)
    tmaError(lane, "a ." + std::to_string(rank) + "d copy with a rank-" +
                       std::to_string(m.rank) + " tensor map");
  int32_t coord[5];
  for (unsigned i = 0; i < rank; ++i)
    coord[i] = int32_t(regRef(c, mapOp.vec[i], lane));
  uint32_t count[5] = {1, 1, 1, 1, 1};
  uint64_t elems = 1;
  for (unsigned i = 0; i < rank; ++i) {
    count[i] = (m.box[i] + m.estride[i] - 1) / m.estride[i];
    elems *= count[i];
  }
  const uint64_t rowBytes = uint64_t(count[0]) * m.esize;
  if (rowBytes % 16)
    tmaError(lane, "the inner box dimension is " + std::to_string(rowBytes) +
                       " bytes, not a multiple of 16");
  if (m.swizzle && rowBytes > (16u << m.swizzle))
    tmaError(lane, "the inner box dimension (" + std::to_string(rowBytes) +
                       " bytes) exceeds the " + std::to_string(16u << m.swizzle) +
                       "-byte swizzle span");
  const uint64_t bytes = elems * m.esize;
  uint32_t base = sharedOffset(c, lane, StateSpace::Shared,
                               operandAddress(c, smemOp, lane), bytes, 128,
                               load ? "cp.async.bulk.tensor destination"
                                    : "cp.async.bulk.tensor source");
  SharedMemory &sh = c.cta.shared;
  uint8_t nanFill[8];
  std::memset(nanFill, 0, 8);
  if (m.fill == 1) { // NaN for floating-point elements
    if (m.esize == 2) { uint16_t v = m.elemType == 10 ? 0x7fc0 : 0x7e00; std::memcpy(nanFill, &v, 2); }
    else if (m.esize == 4) { uint32_t v = 0x7fc00000; std::memcpy(nanFill, &v, 4); }
    else if (m.esize == 8) { uint64_t v = 0x7ff8000000000000ull; std::memcpy(nanFill, &v, 8); }
  }
  uint32_t j[5] = {0, 0, 0, 0, 0};
  for (uint64_t e = 0; e < elems; ++e) {
    // j: the box index of element e, innermost first.
    uint64_t rem = e;
    bool inside = true;
    uint64_t gaddr = m.address;
    for (unsigned i = 0; i < rank; ++i) {
      j[i] = uint32_t(rem % count[i]);
      rem /= count[i];
      int64_t g = int64_t(coord[i]) + int64_t(j[i]) * m.estride[i];
      if (g < 0 || g >= int64_t(m.dims[i]))
        inside = false;
      else
        gaddr += uint64_t(g) * m.strides[i];
    }
    uint32_t soff = swizzleAddr(base + uint32_t(e * m.esize), m.swizzle);
    if (soff + m.esize > sh.size())
      tmaError(lane, "the swizzled box leaves shared memory");
    if (load) {
      if (!inside) {
        std::memcpy(sh.at(soff), nanFill, m.esize);
        continue;
      }
      const uint8_t *g = c.global.translate(gaddr, m.esize);
      if (!g)
        tmaError(lane, "box element read outside the tensor's allocation: " +
                           c.global.describe(gaddr, m.esize));
      std::memcpy(sh.at(soff), g, m.esize);
    } else if (inside) {
      uint8_t *g = c.global.translate(gaddr, m.esize);
      if (!g)
        tmaError(lane, "box element written outside the tensor's allocation: " +
                           c.global.describe(gaddr, m.esize));
      std::memcpy(g, sh.at(soff), m.esize);
    }
  }
  return bytes;
}

void bulkTensorOp(ExecContext &c, const Inst &I, uint32_t mask) {
  const bool load = I.mode;
  forLanes(mask, [&](int l) {
    if (load) {
      uint64_t bytes = tensorCopy(c, I, l, true, I.ops[0], I.ops[1]);
      c.counters.asyncCopyBytes += bytes;
      uint32_t bar = sharedOffset(c, l, StateSpace::Shared,
                                  operandAddress(c, I.ops[2], l), 8, 8,
                                  "cp.async.bulk.tensor mbarrier");
      mbarrierCompleteTx(c, l, bar, int64_t(bytes));
    } else {
      tensorCopy(c, I, l, false, I.ops[1], I.ops[0]);
    }
  });
}

void bulkOp(ExecContext &c, const Inst &I, uint32_t mask) {
  const bool load = I.mode;
  forLanes(mask, [&](int l) {
    uint64_t size = readOp(c, I.ops[2], l);
    if (size % 16 || size == 0)
      throw LaneError(l, "cp.async.bulk: the size must be a positive multiple of 16");
    uint64_t gaddr = operandAddress(c, I.ops[load ? 1 : 0], l);
    if (gaddr % 16)
      throw LaneError(l, "cp.async.bulk: the global address must be 16-byte aligned");
    uint32_t s = sharedOffset(c, l, StateSpace::Shared,
                              operandAddress(c, I.ops[load ? 0 : 1], l), size, 16,
                              "cp.async.bulk");
    uint8_t *g = c.global.translate(gaddr, size);
    if (!g)
      throw LaneError(l, "cp.async.bulk: " + c.global.describe(gaddr, size));
    if (load) {
      std::memcpy(c.cta.shared.at(s), g, size);
      c.counters.asyncCopyBytes += size;
      uint32_t bar = sharedOffset(c, l, StateSpace::Shared,
                                  operandAddress(c, I.ops[3], l), 8, 8,
                                  "cp.async.bulk mbarrier");
      mbarrierCompleteTx(c, l, bar, int64_t(size));
    } else {
      std::memcpy(g, c.cta.shared.at(s), size);
    }
  });
}

void nopOp(ExecContext &, const Inst &, uint32_t) {}

void decodeBulk(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::AsyncCopy;
  if (in.take("commit_group")) {
    in.finish();
    if (inst.nops)
      in.fail("cp.async.bulk.commit_group takes no operands");
    inst.exec = nopOp; // every bulk copy completed when it was issued
    return;
  }
  if (in.take("wait_group")) {
    in.take("read");
    in.finish();
    if (inst.nops != 1 || inst.ops[0].kind != OpKind::Imm || inst.ops[0].immIsFloat)
      in.fail("cp.async.bulk.wait_group takes an immediate group count");
    inst.exec = nopOp;
    return;
  }
  if (in.take("prefetch"))
    in.fail("cp.async.bulk.prefetch is not simulated");
  bool tensor = in.take("tensor");
  int dims = 0;
  if (tensor) {
    dims = in.takeOneOf({"1d", "2d", "3d", "4d", "5d"}) + 1;
    if (dims == 0)
      in.fail("cp.async.bulk.tensor needs a dimension (.1d to .5d)");
    if (in.take("im2col") || in.take("im2col::w") || in.take("im2col::w::128") ||
        in.take("tile::gather4") || in.take("tile::scatter4"))
      in.fail("only the .tile mode of cp.async.bulk.tensor is simulated");
    in.take("tile");
  }
  // The destination state space comes first.
  int dst = -1, src = -1;
  for (size_t i = 0; i < in.mods.size(); ++i) {
    const std::string &m = in.mods[i];
    int sp = m == "global" ? 0 : (m == "shared::cluster" || m == "shared::cta") ? 1 : -1;
    if (sp < 0)
      continue;
    if (dst < 0)
      dst = sp;
    else if (src < 0)
      src = sp;
  }
  in.take("global");
  in.take("shared::cluster");
  in.take("shared::cta");
  if (dst < 0 || src < 0 || dst == src)
    in.fail("expected .shared::cluster.global (load) or .global.shared::cta (store)");
  bool load = dst == 1;
  if (in.take("multicast::cluster"))
    in.fail(".multicast::cluster is not simulated");
  bool hint = in.take("L2::cache_hint");
  if (load && !in.take("mbarrier::complete_tx::bytes"))
    in.fail("a bulk load needs .mbarrier::complete_tx::bytes");
  if (!load && !in.take("bulk_group"))
    in.fail("a bulk store needs .bulk_group");
  in.finish();
  inst.mode = load;
  inst.mode2 = uint8_t(dims);
  unsigned want = (tensor ? (load ? 3 : 2) : (load ? 4 : 3)) + hint;
  if (inst.nops != want)
    in.fail("expected " + std::to_string(want) + " operands");
  for (unsigned i = 0; i < want - hint; ++i) {
    const Operand &o = inst.ops[i];
    bool isSize = !tensor && i == 2;
    if (isSize) {
      if (o.kind != OpKind::Reg && o.kind != OpKind::Imm)
        in.fail("bad size operand");
      resolveImm(in, inst.ops[i], PType::U32);
      continue;
    }
    if (o.kind != OpKind::Addr)
      in.fail("operand " + std::to_string(i + 1) + " must be an address");
    bool isMap = tensor && i == (load ? 1u : 0u);
    if (isMap) {
      if (o.vecLen != dims)
        in.fail("the tensor coordinates must have " + std::to_string(dims) + " elements");
      if (o.hasSymbol && o.symSpace != StateSpace::Param &&
          o.symSpace != StateSpace::Global && o.symSpace != StateSpace::Const)
        in.fail("the tensor map must be in param, const or global memory");
      for (uint32_t r : o.vec)
        if (r == kNoReg)
          in.fail("tensor coordinates must be registers");
    } else if (o.vecLen) {
      in.fail("operand " + std::to_string(i + 1) + " takes no coordinates");
    } else if (o.hasSymbol) {
      bool sharedOperand = load ? i != 1 : i == 1;
      if (sharedOperand != (o.symSpace == StateSpace::Shared))
        in.fail("operand " + std::to_string(i + 1) + " is in the wrong state space");
    }
  }
  inst.exec = tensor ? bulkTensorOp : bulkOp;
}

} // namespace

void registerTmaOps(DecoderTable &t) { t["cp.async.bulk"] = decodeBulk; }

} // namespace tessel::gpusim
