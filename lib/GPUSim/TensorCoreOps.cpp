//===- TensorCoreOps.cpp - mma.sync: warp-wide matrix multiply-accumulate -===//
//
// mma.sync.aligned.{m16n8k4,m16n8k8,m16n8k16,m16n8k32}.row.col D, A, B, C
// computes D = A * B + C for one 16x8 tile per warp. The operands are
// vectors of registers spread over the 32 lanes as the PTX ISA's "Matrix
// Fragments for mma.m16n8kK" tables define (groupID = lane >> 2,
// threadID_in_group = lane % 4); elements narrower than 32 bits are packed
// into registers from the low bits up.
//
// Supported (sm_80, sm_89): .f16 (f16 or f32 accumulators), .bf16 and .tf32
// (f32 accumulators), .s8/.u8 (s32 accumulators, optional .satfinite) and
// .e4m3/.e5m2 (sm_89, f32 or f16 accumulators). Products of the inputs are
// exact in double precision; each output element is summed in double and
// rounded once to the accumulator type (the hardware's internal order and
// precision are unspecified; they agree to within f32 rounding for these
// input widths). tf32 inputs ignore the low 13 mantissa bits of the .b32
// registers. Integer sums are exact and wrap to 32 bits, or clamp with
// .satfinite.
//
// The instruction is warp-wide: every lane of the warp must execute it
// together, else it is an error.
//
//===----------------------------------------------------------------------===//
#include "Decode.h"

#include <cmath>
#include <vector>

namespace tessel::gpusim {
namespace {

enum Shape : uint8_t { K4, K8, K16, K32 };
enum Elem : uint8_t { EF16, EBF16, ETF32, ES8, EU8, EE4M3, EE5M2, EF32, ES32 };

unsigned elemBits(Elem e) {
  switch (e) {
  case EF16: case EBF16: return 16;
  case ES8: case EU8: case EE4M3: case EE5M2: return 8;
  default: return 32;
  }
}

unsigned shapeK(Shape s) { return s == K4 ? 4 : s == K8 ? 8 : s == K16 ? 16 : 32; }

// Every f16 value, decoded once (the decoding is the hot spot of mma).
const float *halfTable() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h)
      t[h] = float(halfToDouble(uint16_t(h)));
    return t;
  }();
  return table.data();
}

double elemValue(Elem e, uint32_t bits) {
  switch (e) {
  case EF16: return double(halfTable()[bits & 0xffff]);
  case EBF16: return double(asF32(uint32_t(bits & 0xffff) << 16)); // the top half of an f32
  case ETF32: return double(asF32(bits & 0xffffe000u));
  case ES8: return double(int8_t(bits));
  case EU8: return double(uint8_t(bits));
  case EE4M3: return fp8Value(bits, false);
  case EE5M2: return fp8Value(bits, true);
  case EF32: return double(asF32(bits));
  case ES32: return double(int32_t(bits));
  }
  return 0;
}

// Fragment maps from the PTX ISA tables: element i of lane (g, t) -> (row, col)
// of A (16 x K), (k, n) of B (K x 8), (row, col) of C/D (16 x 8).
void aPos(Shape s, Elem e, int g, int t, int i, int &row, int &col) {
  unsigned bits = elemBits(e);
  if (e == ETF32) {
    if (s == K4) { row = g + 8 * i; col = t; }
    else { row = g + 8 * (i & 1); col = t + 4 * (i >> 1); } // K8
  } else if (bits == 16) {
    if (s == K8) { row = g + 8 * (i >> 1); col = t * 2 + (i & 1); }
    else { row = g + 8 * ((i >> 1) & 1); col = t * 2 + (i & 1) + 8 * (i >> 2); } // K16
  } else { // 8-bit
    if (s == K16) { row = g + 8 * (i >> 2); col = t * 4 + (i & 3); }
    else { row = g + 8 * ((i >> 2) & 1); col = t * 4 + (i & 3) + 16 * (i >> 3); } // K32
  }
}

int bRow(Shape s, Elem e, int t, int i) {
  unsigned bits = elemBits(e);
  if (e == ETF32)
    return s == K4 ? t : t + 4 * i;
  if (bits == 16)
    return s == K8 ? t * 2 + i : t * 2 + (i & 1) + 8 * (i >> 1);
  return s == K16 ? t * 4 + i : t * 4 + (i & 3) + 16 * (i >> 2);
}

struct MmaConfig {
  Shape shape;
  Elem a, b, c, d;
  bool satfinite;
};

// Reads element i (of `bits` bits) of a fragment held in `op`'s registers.
inline uint32_t fragElem(ExecContext &c, const Operand &op, int lane, unsigned i,
                         unsigned bits) {
  unsigned per = 32 / bits;
  uint32_t reg = op.vec[i / per];
  uint32_t word = reg == kNoReg ? 0 : uint32_t(regRef(c, reg, lane));
  if (bits == 32)
    return word;
  return (word >> ((i % per) * bits)) & ((1u << bits) - 1);
}

void mmaOp(ExecContext &c, const Inst &I, uint32_t mask) {
  uint32_t live = c.warp->valid & ~c.warp->exited;
  if (mask != 0xffffffffu || live != 0xffffffffu)
    throw LaneError(__builtin_ctz(mask),
                    "mma.sync.aligned must be executed by all 32 lanes of the warp "
                    "together (executing lanes 0x" + [&] {
                      char b[16];
                      snprintf(b, sizeof b, "%08x", mask);
                      return std::string(b);
                    }() + ")");
  MmaConfig cfg;
  cfg.shape = Shape(I.mode);
  cfg.a = Elem(I.mode2);
  cfg.b = Elem(I.mode3);
  cfg.c = Elem(I.rnd);
  cfg.d = Elem(I.vec);
  cfg.satfinite = I.sat;
  const int K = int(shapeK(cfg.shape));
  const unsigned abits = elemBits(cfg.a), bbits = elemBits(cfg.b);
  const unsigned aN = 16 * K / 32, bN = K * 8 / 32; // elements per lane
  double A[16][32], B[32][8], C[16][8];
  bool isInt = cfg.a == ES8 || cfg.a == EU8;
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane >> 2, t = lane & 3;
    for (unsigned i = 0; i < aN; ++i) {
      int row, col;
      aPos(cfg.shape, cfg.a, g, t, int(i), row, col);
      A[row][col] = elemValue(cfg.a, fragElem(c, I.ops[1], lane, i, abits));
    }
    for (unsigned i = 0; i < bN; ++i)
      B[bRow(cfg.shape, cfg.b, t, int(i))][g] =
          elemValue(cfg.b, fragElem(c, I.ops[2], lane, i, bbits));
    for (unsigned i = 0; i < 4; ++i)
      C[g + 8 * (i >> 1)][t * 2 + (i & 1)] =
          elemValue(cfg.c, fragElem(c, I.ops[3], lane, i, elemBits(cfg.c)));
  }
  // D = A * B + C, then back into the lanes' registers.
  uint32_t out[32][4];
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 8; ++col) {
      uint32_t bits;
      if (isInt) {
        int64_t s = int64_t(C[row][col]);
        for (int k = 0; k < K; ++k)
          s += int64_t(A[row][k]) * int64_t(B[k][col]);
        if (cfg.satfinite)
          s = s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s;
        bits = uint32_t(uint64_t(s));
      } else {
        double s = C[row][col];
        for (int k = 0; k < K; ++k)
          s += A[row][k] * B[k][col];
        if (cfg.d == EF32) {
          float f = float(s);
          bits = std::isnan(f) ? 0x7fffffffu : uint32_t(bitsF32(f));
        } else {
          bits = roundToSmallFloat(s, 5, 10, Rounding::RN, false);
        }
      }
      int g = row & 7, t = col >> 1;
      int i = (row >> 3) * 2 + (col & 1);
      out[g * 4 + t][i] = bits;
    }
  const Operand &d = I.ops[0];
  for (int lane = 0; lane < 32; ++lane) {
    if (cfg.d == EF16) {
      for (unsigned r = 0; r < 2; ++r)
        if (d.vec[r] != kNoReg)
          regRef(c, d.vec[r], lane) =
              (out[lane][2 * r] & 0xffff) | (out[lane][2 * r + 1] & 0xffff) << 16;
    } else {
      for (unsigned r = 0; r < 4; ++r)
        if (d.vec[r] != kNoReg)
          regRef(c, d.vec[r], lane) = out[lane][r];
    }
  }
}

Elem parseElem(DecodeInput &in, const std::string &s) {
  static const std::pair<const char *, Elem> names[] = {
      {"f16", EF16}, {"bf16", EBF16}, {"tf32", ETF32}, {"s8", ES8}, {"u8", EU8},
      {"e4m3", EE4M3}, {"e5m2", EE5M2}, {"f32", EF32}, {"s32", ES32}};
  for (auto &[n, e] : names)
    if (s == n)
      return e;
  in.fail("mma: type '." + s + "' is not simulated");
}

void decodeMma(DecodeInput &in, Inst &inst) {
  if (!in.take("sync") || !in.take("aligned"))
    in.fail("mma needs .sync.aligned");
  int shape = in.takeOneOf({"m16n8k4", "m16n8k8", "m16n8k16", "m16n8k32"});
  if (shape < 0)
    in.fail("mma shape not simulated (m16n8k4, m16n8k8, m16n8k16, m16n8k32 are)");
  // A row-major, B column-major: the only layouts of these shapes.
  if (in.mods.size() < 2 || in.mods[0] != "row" || in.mods[1] != "col")
    in.fail("mma needs .row.col (A row-major, B column-major)");
  in.take("row");
  in.take("col");
  bool sat = in.take("satfinite");
  if (in.mods.size() != 4)
    in.fail("mma needs four types (.dtype.atype.btype.ctype)");
  Elem d = parseElem(in, in.mods[0]), a = parseElem(in, in.mods[1]),
       b = parseElem(in, in.mods[2]), cty = parseElem(in, in.mods[3]);
  in.mods.clear();
  Shape s = Shape(shape);
  auto is8 = [](Elem e) { return e == ES8 || e == EU8; };
  auto isF8 = [](Elem e) { return e == EE4M3 || e == EE5M2; };
  bool ok;
  if (a == EF16 || a == EBF16)
    ok = b == a && (s == K8 || s == K16) &&
         (a == EF16 ? ((d == EF32 || d == EF16) && (cty == EF32 || cty == EF16))
                    : (d == EF32 && cty == EF32));
  else if (a == ETF32)
    ok = b == ETF32 && (s == K4 || s == K8) && d == EF32 && cty == EF32;
  else if (is8(a))
    ok = is8(b) && (s == K16 || s == K32) && d == ES32 && cty == ES32;
  else if (isF8(a))
    ok = isF8(b) && s == K32 && (d == EF32 || d == EF16) && cty == d;
  else
    ok = false;
  if (!ok)
    in.fail("this mma shape and type combination does not exist or is not simulated");
  if (sat && !is8(a))
    in.fail(".satfinite applies to integer mma");
  int K = int(shapeK(s));
  unsigned want[4] = {d == EF16 ? 2u : 4u, 16u * K * elemBits(a) / 32 / 32,
                      8u * K * elemBits(b) / 32 / 32, cty == EF16 ? 2u : 4u};
  if (inst.nops != 4)
    in.fail("mma takes 4 operands (D, A, B, C), found " + std::to_string(inst.nops));
  static const char *names[] = {"D", "A", "B", "C"};
  for (int i = 0; i < 4; ++i) {
    const Operand &o = inst.ops[i];
    if (o.kind != OpKind::Vec || o.vecLen != want[i])
      in.fail(std::string("mma operand ") + names[i] + " must be a vector of " +
              std::to_string(want[i]) + " registers");
    for (uint32_t r : o.vec)
      if (r == kNoReg && i != 0)
        in.fail("mma source operands cannot contain '_'");
  }
  inst.mode = uint8_t(s);
  inst.mode2 = uint8_t(a);
  inst.mode3 = uint8_t(b);
  inst.rnd = uint8_t(cty); // group-specific: the accumulator element types
  inst.vec = uint8_t(d);
  inst.sat = sat;
  inst.cls = InstClass::TensorCore;
  inst.exec = mmaOp;
}

} // namespace

void registerTensorCoreOps(DecoderTable &t) { t["mma"] = decodeMma; }

} // namespace tessel::gpusim
