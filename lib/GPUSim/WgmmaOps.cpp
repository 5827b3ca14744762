//===- WgmmaOps.cpp - wgmma: warpgroup tensor-core MMA (sm_90a) -----------===//
//
// wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype
//     d, a-desc | {a}, b-desc, scale-d{, imm-scale-a, imm-scale-b
//     {, imm-trans-a}{, imm-trans-b}};
//   f16/bf16 (k16, f32 or f16 accumulators for f16, f32 for bf16), tf32
//   (k8), e4m3/e5m2 (k32, f32 or f16 accumulators), s8/u8 (k32, s32
//   accumulators, .satfinite); N a multiple of 8 (16 for 8-bit integers) up
//   to 256. D = A*B (+ D when scale-d), A is 64xK and B is KxN.
// wgmma.fence / commit_group / wait_group N (.sync.aligned); a warp's first
// mma_async without a wgmma.fence before it is an error.
//
// A warpgroup is four consecutive warps (4g .. 4g+3); warp w of the group
// owns rows 16w .. 16w+15 of D and needs only those rows of A, so each warp
// performs its share of the product on its own: nothing synchronizes the
// four warps (the descriptors are the same in every thread). Asynchrony is
// modelled faithfully: mma_async records the operation (descriptors and
// scale-d as issued) and wait_group N performs the warp's committed groups
// but the newest N, in order, reading shared memory, A registers and the
// accumulators at that point. Reading the accumulators before the wait
// therefore sees old values, as it may on hardware.
//
// Register fragments follow the PTX ISA's tables for wgmma: with laneid l,
// g = l / 4, t = l % 4, accumulator element i of a thread of warp w is
// D[16w + g + 8*((i / 2) % 2)][8*(i / 4) + 2t + i % 2] (f32/s32: one per
// register; f16: two per register, element 2r low); A register r holds
// A[16w + g + 8*(r % 2)][(r / 2) * K/2 + t * e + 0..e-1] with e = 32 / the
// element width in bits.
//
// Shared-memory matrices come through 64-bit descriptors: start address,
// leading and stride byte offsets (all >> 4 in bits 0-13, 16-29, 32-45),
// base offset (bits 49-51, must be 0 here) and swizzle (bits 62-63: 0 none,
// 1 128B, 2 64B, 3 32B). With T = 16 bytes / element size, an element
// (r, k) of an operand whose rows r are M (A) or N (B):
//   K-major, no swizzle:  (r%8)*16 + (r/8)*SBO + (k%T)*size + (k/T)*LBO
//   K-major, swizzle S:   (r%8)*S  + (r/8)*SBO + k*size
//   MN-major, no swizzle: (r%T)*size + (r/T)*SBO + (k%8)*16 + (k/8)*LBO
//   MN-major, swizzle S:  (r%(S/size))*size + (r/(S/size))*LBO + (k%8)*S
//                         + (k/8)*SBO
// from the start address, then the swizzle permutes the 16-byte chunks of
// the shared address: bits [4, 4+b) ^= bits [7, 7+b), b = log2(S / 16).
// imm-trans-a/b = 1 selects MN-major (16-bit types only).
//
//===----------------------------------------------------------------------===//
#include "AsyncUnits.h"

#include <cmath>
#include <cstring>
#include <sstream>

namespace tessel::gpusim {
namespace {

enum WType : uint8_t { WF16, WBF16, WTF32, WE4M3, WE5M2, WS8, WU8, WF32, WS32 };

unsigned wbits(WType t) {
  switch (t) {
  case WF16: case WBF16: return 16;
  case WTF32: case WF32: case WS32: return 32;
  default: return 8;
  }
}

const char *wname(WType t) {
  static const char *n[] = {"f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "f32", "s32"};
  return n[t];
}

int parseWType(const std::string &s) {
  static const char *n[] = {"f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "f32", "s32"};
  for (int i = 0; i < 9; ++i)
    if (s == n[i])
      return i;
  return -1;
}

/// The value of an element of type t given its bits.
double elemValue(WType t, uint32_t bits) {
  switch (t) {
  case WF16: return halfToDouble(uint16_t(bits));
  case WBF16: return bf16ToDouble(uint16_t(bits));
  case WTF32: { // the low 13 mantissa bits are ignored
    uint32_t b = bits & 0xffffe000u;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  case WE4M3: return fp8Value(bits, false);
  case WE5M2: return fp8Value(bits, true);
  case WS8: return double(int8_t(bits));
  case WU8: return double(uint8_t(bits));
  default: return 0;
  }
}

// What decoding learns, packed into Inst::target (unused by non-branches).
struct Shape {
  uint32_t n, k;
  WType d, a, b;
  bool regA, satfinite, transA, transB, negA, negB;

  uint32_t pack() const {
    return (n / 8) | k << 6 | uint32_t(d) << 12 | uint32_t(a) << 16 |
           uint32_t(b) << 20 | regA << 24 | satfinite << 25 | transA << 26 |
           transB << 27 | negA << 28 | negB << 29;
  }
  static Shape unpack(uint32_t v) {
    return {(v & 63) * 8, (v >> 6) & 63, WType((v >> 12) & 15), WType((v >> 16) & 15),
            WType((v >> 20) & 15), bool(v >> 24 & 1), bool(v >> 25 & 1), bool(v >> 26 & 1),
            bool(v >> 27 & 1), bool(v >> 28 & 1), bool(v >> 29 & 1)};
  }
};

struct Desc {
  uint32_t start, lbo, sbo, swizzle; // swizzle span in bytes (0: none)
};

Desc decodeDesc(uint64_t d, int lane, const char *which) {
  Desc r;
  r.start = uint32_t(d & 0x3fff) << 4;
  r.lbo = uint32_t((d >> 16) & 0x3fff) << 4;
  r.sbo = uint32_t((d >> 32) & 0x3fff) << 4;
  unsigned base = unsigned((d >> 49) & 7), mode = unsigned(d >> 62);
  if (base) {
    std::ostringstream os;
    os << "wgmma: the " << which << " descriptor 0x" << std::hex << d
       << " has a non-zero matrix base offset, which is not simulated";
    throw LaneError(lane, os.str());
  }
  static const uint32_t spans[4] = {0, 128, 64, 32};
  r.swizzle = spans[mode];
  return r;
}

/// Shared-memory offset of element (row r, k) of a descriptor operand.
uint64_t descAddr(const Desc &d, bool kMajor, uint32_t r, uint32_t k,
                  uint32_t size) {
  uint32_t T = 16 / size;
  uint64_t a;
  if (kMajor) {
    if (!d.swizzle)
      a = (r % 8) * 16 + (r / 8) * uint64_t(d.sbo) + (k % T) * size +
          (k / T) * uint64_t(d.lbo);
    else
      a = (r % 8) * d.swizzle + (r / 8) * uint64_t(d.sbo) + k * size;
  } else if (!d.swizzle) {
    a = (r % T) * size + (r / T) * uint64_t(d.sbo) + (k % 8) * 16 +
        (k / 8) * uint64_t(d.lbo);
  } else {
    uint32_t per = d.swizzle / size;
    a = (r % per) * size + (r / per) * uint64_t(d.lbo) + (k % 8) * d.swizzle +
        (k / 8) * uint64_t(d.sbo);
  }
  a += d.start;
  if (d.swizzle) {
    uint64_t mask = d.swizzle / 16 - 1; // 1, 3, 7
    a ^= ((a >> 7) & mask) << 4;
  }
  return a;
}

/// Reads rows first..first+rows-1 (all K columns) of a descriptor operand.
void loadDescOperand(ExecContext &c, uint64_t raw, const char *which,
                     bool kMajor, WType t, uint32_t first, uint32_t rows,
                     uint32_t K, std::vector<double> &out) {
  Desc d = decodeDesc(raw, -1, which);
  uint32_t size = wbits(t) / 8;
  out.resize(size_t(rows) * K);
  SharedMemory &sh = c.cta.shared;
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t k = 0; k < K; ++k) {
      uint64_t a = descAddr(d, kMajor, first + r, k, size);
      if (a + size > sh.size()) {
        std::ostringstream os;
        os << "wgmma: element (" << first + r << ", " << k << ") of matrix "
           << which << " (descriptor 0x" << std::hex << raw << std::dec
           << ": start " << d.start << ", leading offset " << d.lbo
           << ", stride offset " << d.sbo << ", swizzle "
           << (d.swizzle ? std::to_string(d.swizzle) + "B" : "none")
           << ") is at shared address " << a << ", outside the CTA's "
           << sh.size() << " bytes of shared memory";
        throw LaneError(-1, os.str());
      }
      uint32_t bits = 0;
      std::memcpy(&bits, sh.at(uint32_t(a)), size);
      out[size_t(r) * K + k] = elemValue(t, bits);
    }
}

void performMma(ExecContext &c, const PendingMma &p) {
  const Inst &I = *p.inst;
  const Shape s = Shape::unpack(I.target);
  const uint32_t w = c.warp->index % 4;
  const unsigned abits = wbits(s.a);
  std::vector<double> A, B; // A: this warp's 16 rows x K; B: N rows x K
  if (s.regA) {
    A.assign(16 * s.k, 0);
    const Operand &av = I.ops[1];
    const unsigned e = 32 / abits;
    for (int l = 0; l < 32; ++l) {
      uint32_t g = l / 4, t = l % 4;
      for (unsigned r = 0; r < 4; ++r) {
        uint32_t bits = uint32_t(regRef(c, av.vec[r], l));
        uint32_t row = g + 8 * (r % 2), col = (r / 2) * (s.k / 2) + t * e;
        for (unsigned j = 0; j < e; ++j) {
          uint32_t eb = abits == 32 ? bits : (bits >> (j * abits)) & ((1u << abits) - 1);
          A[row * s.k + col + j] = elemValue(s.a, eb);
        }
      }
    }
  } else {
    loadDescOperand(c, p.descA, "A", !s.transA, s.a, 16 * w, 16, s.k, A);
  }
  loadDescOperand(c, p.descB, "B", !s.transB, s.b, 0, s.n, s.k, B);
  const double sign = (s.negA ? -1.0 : 1.0) * (s.negB ? -1.0 : 1.0);
  const Operand &dv = I.ops[0];
  const bool f16d = s.d == WF16;
  const bool intd = s.d == WS32;
  for (int l = 0; l < 32; ++l) {
    uint32_t g = l / 4, t = l % 4;
    for (uint32_t i = 0; i < s.n / 2; ++i) {
      uint32_t row = g + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * t + i % 2;
      const double *a = &A[row * s.k];
      const double *b = &B[size_t(col) * s.k];
      uint64_t &reg = regRef(c, dv.vec[f16d ? i / 2 : i], l);
      if (intd) {
        int64_t acc = 0;
        for (uint32_t k = 0; k < s.k; ++k)
          acc += int64_t(a[k]) * int64_t(b[k]);
        if (p.scaleD)
          acc += int64_t(int32_t(uint32_t(reg)));
        if (s.satfinite)
          acc = std::max<int64_t>(INT32_MIN, std::min<int64_t>(INT32_MAX, acc));
        reg = uint32_t(int32_t(acc)); // wraps without .satfinite
        continue;
      }
      double acc = 0;
      for (uint32_t k = 0; k < s.k; ++k)
        acc += a[k] * b[k];
      acc *= sign;
      if (f16d) {
        unsigned sh = (i % 2) * 16;
        uint16_t old = uint16_t(reg >> sh);
        if (p.scaleD)
          acc += halfToDouble(old);
        uint32_t h = roundToSmallFloat(acc, 5, 10, Rounding::RN, false);
        reg = (reg & ~(uint64_t(0xffff) << sh) & 0xffffffffull) | uint64_t(h) << sh;
      } else {
        if (p.scaleD)
          acc += asF32(reg);
        reg = bitsF32(float(acc));
      }
    }
  }
}

void checkWarpgroup(ExecContext &c, uint32_t mask, const char *what) {
  uint32_t live = c.warp->valid & ~c.warp->exited;
  if (c.warp->valid != ~0u || mask != c.activeMask || mask != live)
    throw LaneError(__builtin_ctz(mask),
                    std::string(what) + " must be executed by all 32 threads of "
                    "the warp together (.sync.aligned)");
  if (c.numWarps % 4)
    throw LaneError(__builtin_ctz(mask),
                    std::string(what) + ": the CTA has " + std::to_string(c.numWarps) +
                        " warps, not whole warpgroups of 4");
}

uint64_t uniform(ExecContext &c, const Operand &o, uint32_t mask, const char *what) {
  int l0 = __builtin_ctz(mask);
  uint64_t v = readOp(c, o, l0);
  forLanes(mask, [&](int l) {
    if (readOp(c, o, l) != v)
      throw LaneError(l, std::string("wgmma.mma_async: the ") + what +
                             " differs between the threads of the warp");
  });
  return v;
}

void mmaAsyncOp(ExecContext &c, const Inst &I, uint32_t mask) {
  checkWarpgroup(c, mask, "wgmma.mma_async");
  const Shape s = Shape::unpack(I.target);
  PendingMma p{&I, 0, 0, true};
  if (!s.regA)
    p.descA = uniform(c, I.ops[1], mask, "A descriptor");
  p.descB = uniform(c, I.ops[2], mask, "B descriptor");
  p.scaleD = uniform(c, I.ops[3], mask, "scale-d predicate") != 0;
  WarpAsyncUnits &u = warpAsync(c);
  if (!u.fenced)
    throw LaneError(__builtin_ctz(mask),
                    "wgmma.mma_async before any wgmma.fence (the ISA requires one before "
                    "the first wgmma.mma_async of a warpgroup)");
  u.mma.push_back(p);
}

void fenceOp(ExecContext &c, const Inst &, uint32_t mask) {
  checkWarpgroup(c, mask, "wgmma.fence");
  warpAsync(c).fenced = true;
}

void commitOp(ExecContext &c, const Inst &, uint32_t mask) {
  checkWarpgroup(c, mask, "wgmma.commit_group");
  WarpAsyncUnits &u = warpAsync(c);
  u.mmaGroups.push_back(u.mma.size()); // possibly an empty group
}

void waitOp(ExecContext &c, const Inst &I, uint32_t mask) {
  checkWarpgroup(c, mask, "wgmma.wait_group");
  WarpAsyncUnits &u = warpAsync(c);
  size_t keep = size_t(I.ops[0].imm);
  if (u.mmaGroups.size() <= keep)
    return;
  size_t retire = u.mmaGroups.size() - keep;
  size_t end = u.mmaGroups[retire - 1];
  for (size_t i = 0; i < end; ++i) {
    try {
      performMma(c, u.mma[i]);
    } catch (LaneError &e) {
      throw LaneError(e.lane, std::string(e.what()) +
                                  " (performing the wgmma.mma_async of PTX line " +
                                  std::to_string(u.mma[i].inst->line) + ")");
    }
  }
  u.mma.erase(u.mma.begin(), u.mma.begin() + end);
  u.mmaGroups.erase(u.mmaGroups.begin(), u.mmaGroups.begin() + retire);
  for (size_t &g : u.mmaGroups)
    g -= end;
}

void decodeWgmma(DecodeInput &in, Inst &inst) {
  inst.cls = InstClass::TensorCore;
  int op = in.takeOneOf({"fence", "commit_group", "wait_group", "mma_async"});
  if (op < 0)
    in.fail("unknown wgmma operation");
  if (!in.take("sync") || !in.take("aligned"))
    in.fail("wgmma instructions are .sync.aligned");
  if (op == 0 || op == 1) {
    in.finish();
    if (inst.nops)
      in.fail("unexpected operands");
    inst.exec = op == 0 ? fenceOp : commitOp;
    return;
  }
  if (op == 2) {
    in.finish();
    if (inst.nops != 1 || inst.ops[0].kind != OpKind::Imm || inst.ops[0].immIsFloat ||
        inst.ops[0].imm > 7)
      in.fail("wgmma.wait_group takes an immediate count in [0, 7]");
    inst.exec = waitOp;
    return;
  }
  if (in.take("sp"))
    in.fail("sparse wgmma (.sp) is not simulated");
  Shape s{};
  s.satfinite = in.take("satfinite");
  // Shape m64nNkK.
  std::string shape;
  for (size_t i = 0; i < in.mods.size(); ++i)
    if (in.mods[i].size() > 3 && in.mods[i].rfind("m64n", 0) == 0) {
      shape = in.mods[i];
      in.mods.erase(in.mods.begin() + i);
      break;
    }
  size_t kpos = shape.find('k');
  if (shape.empty() || kpos == std::string::npos)
    in.fail("wgmma.mma_async needs a .m64nNkK shape");
  s.n = uint32_t(std::atoi(shape.substr(4, kpos - 4).c_str()));
  s.k = uint32_t(std::atoi(shape.substr(kpos + 1).c_str()));
  std::vector<int> types;
  for (size_t i = 0; i < in.mods.size();) {
    int t = parseWType(in.mods[i]);
    if (t >= 0) {
      types.push_back(t);
      in.mods.erase(in.mods.begin() + i);
    } else {
      ++i;
    }
  }
  in.finish();
  if (types.size() != 3)
    in.fail("wgmma.mma_async needs .dtype.atype.btype");
  s.d = WType(types[0]);
  s.a = WType(types[1]);
  s.b = WType(types[2]);
  bool half = s.a == WF16 || s.a == WBF16;
  bool f8 = s.a == WE4M3 || s.a == WE5M2;
  bool i8 = s.a == WS8 || s.a == WU8;
  bool okTypes =
      (half && s.b == s.a && (s.d == WF32 || (s.d == WF16 && s.a == WF16))) ||
      (s.a == WTF32 && s.b == WTF32 && s.d == WF32) ||
      (f8 && (s.b == WE4M3 || s.b == WE5M2) && (s.d == WF32 || s.d == WF16)) ||
      (i8 && (s.b == WS8 || s.b == WU8) && s.d == WS32);
  if (!okTypes)
    in.fail(std::string("wgmma.mma_async.") + wname(s.d) + "." + wname(s.a) + "." +
            wname(s.b) + " is not a valid type combination");
  uint32_t wantK = half ? 16 : s.a == WTF32 ? 8 : 32;
  if (s.k != wantK)
    in.fail("wgmma with ." + std::string(wname(s.a)) + " inputs is k" + std::to_string(wantK));
  // Integer shapes: n8, n16, n24, then multiples of 16.
  if (s.n < 8 || s.n > 256 || s.n % 8 || (i8 && s.n > 24 && s.n % 16))
    in.fail(i8 ? "wgmma: N must be 8, 16, 24 or a multiple of 16 up to 256 for 8-bit integers"
               : "wgmma: N must be a multiple of 8 in [8, 256]");
  if (s.satfinite && !i8)
    in.fail(".satfinite applies to integer wgmma");
  // Operands.
  if (inst.nops < 3)
    in.fail("wgmma.mma_async takes d, a, b, ...");
  const Operand &d = inst.ops[0];
  uint32_t dRegs = s.d == WF16 ? s.n / 4 : s.n / 2;
  if (d.kind != OpKind::Vec || d.vecLen != dRegs)
    in.fail("the accumulator must be a vector of " + std::to_string(dRegs) + " registers");
  for (uint32_t r : d.vec)
    if (r == kNoReg)
      in.fail("the accumulator cannot contain '_'");
  s.regA = inst.ops[1].kind == OpKind::Vec;
  if (s.regA) {
    if (inst.ops[1].vecLen != 4)
      in.fail("A in registers is a vector of 4 registers");
    for (uint32_t r : inst.ops[1].vec)
      if (r == kNoReg)
        in.fail("A registers cannot contain '_'");
  } else if (inst.ops[1].kind != OpKind::Reg) {
    in.fail("A must be a 64-bit descriptor register or a vector of registers");
  }
  if (inst.ops[2].kind != OpKind::Reg)
    in.fail("B must be a 64-bit descriptor register");
  // scale-d, then imm-scale-a/b (floating-point), then imm-trans-a (A in
  // shared memory) and imm-trans-b (16-bit types).
  unsigned want = i8 ? 4 : half ? (s.regA ? 7 : 8) : 6;
  if (inst.nops != want)
    in.fail("expected " + std::to_string(want) + " operands");
  Operand &sd = inst.ops[3];
  if (sd.kind != OpKind::Reg && sd.kind != OpKind::Imm)
    in.fail("scale-d must be a predicate or an immediate");
  resolveImm(in, sd, PType::Pred);
  auto imm = [&](unsigned i, const char *what, bool scale) -> int64_t {
    const Operand &o = inst.ops[i];
    if (o.kind != OpKind::Imm || o.immIsFloat)
      in.fail(std::string(what) + " must be an immediate");
    int64_t v = int64_t(o.imm);
    if (scale ? (v != 1 && v != -1) : (v != 0 && v != 1))
      in.fail(std::string(what) + (scale ? " must be 1 or -1" : " must be 0 or 1"));
    return v;
  };
  if (!i8) {
    s.negA = imm(4, "imm-scale-a", true) < 0;
    s.negB = imm(5, "imm-scale-b", true) < 0;
  }
  if (half) {
    if (!s.regA)
      s.transA = imm(6, "imm-trans-a", false);
    s.transB = imm(s.regA ? 6 : 7, "imm-trans-b", false);
  }
  inst.target = s.pack();
  inst.exec = mmaAsyncOp;
}

} // namespace

void registerWgmmaOps(DecoderTable &t) { t["wgmma"] = decodeWgmma; }

} // namespace tessel::gpusim
