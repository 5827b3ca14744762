//===- ScalarOps.cpp - SALU, branches, waits and barriers -----------------===//
//
// The scalar unit: 32- and 64-bit integer and bit operations on SGPRs with
// their SCC results, compares, selects, the EXEC save-and-mask forms, the
// branches, s_waitcnt (which applies the load results it waits for),
// s_barrier and s_endpgm, as the CDNA3 ISA describes them.
//
//===----------------------------------------------------------------------===//
#include "Wave.h"

#include <cstdio>

namespace tessel::gpusim::amdgcn {
namespace {

uint32_t s32(const Wave &w, const Inst &I, size_t i) { return readScalar(w, op(w, I, i), Ty::B32); }
uint64_t s64(const Wave &w, const Inst &I, size_t i) { return readScalar64(w, op(w, I, i), Ty::B64); }

// Binary 32-bit operations: the result and the SCC they set.
template <typename F>
void binary32(Wave &w, const Inst &I, F f) {
  uint32_t a = s32(w, I, 1), b = s32(w, I, 2);
  bool scc = w.scc;
  uint32_t d = f(a, b, scc);
  writeScalar(w, op(w, I, 0), d);
  w.scc = scc;
}

template <typename F>
void binary64(Wave &w, const Inst &I, F f) {
  uint64_t a = s64(w, I, 1), b = s64(w, I, 2);
  bool scc = w.scc;
  uint64_t d = f(a, b, scc);
  writeScalar64(w, op(w, I, 0), d);
  w.scc = scc;
}

#define BIN32(NAME, ...)                                                      \
  t[NAME] = [](Wave &w, const Inst &I) {                                       \
    binary32(w, I, [](uint32_t a, uint32_t b, bool &scc) -> uint32_t {         \
      (void)a; (void)b; (void)scc;                                             \
      __VA_ARGS__                                                              \
    });                                                                        \
  }
#define BIN64(NAME, ...)                                                      \
  t[NAME] = [](Wave &w, const Inst &I) {                                       \
    binary64(w, I, [](uint64_t a, uint64_t b, bool &scc) -> uint64_t {         \
      (void)a; (void)b; (void)scc;                                             \
      __VA_ARGS__                                                              \
    });                                                                        \
  }

template <typename T>
void compare(Wave &w, const Inst &I, int cmp, bool k) {
  T a, b;
  if (k) { // s_cmpk_*: an SGPR and a 16-bit constant (sign-extended for i32)
    a = T(s32(w, I, 0));
    uint64_t c = op(w, I, 1).bits;
    b = std::is_signed<T>::value ? T(int16_t(c)) : T(uint16_t(c));
  } else if (sizeof(T) == 8) {
    a = T(s64(w, I, 0));
    b = T(s64(w, I, 1));
  } else {
    a = T(s32(w, I, 0));
    b = T(s32(w, I, 1));
  }
  switch (cmp) {
  case 0: w.scc = a == b; break;
  case 1: w.scc = a != b; break;
  case 2: w.scc = a > b; break;
  case 3: w.scc = a >= b; break;
  case 4: w.scc = a < b; break;
  default: w.scc = a <= b; break;
  }
}

/// s_cmp(k)_<op>_<type> as a handler: the comparison `Cmp` (eq, lg, gt, ge,
/// lt, le) of type T, with a 16-bit constant (s_cmpk) when K.
template <typename T, int Cmp, bool K> void cmpHandler(Wave &w, const Inst &I) { compare<T>(w, I, Cmp, K); }

void saveexec(Wave &w, const Inst &I, uint64_t (*f)(uint64_t s, uint64_t exec)) {
  uint64_t s = s64(w, I, 1);
  uint64_t old = w.exec;
  w.exec = f(s, old);
  w.scc = w.exec != 0;
  writeScalar64(w, op(w, I, 0), old);
}

void branchIf(Wave &w, const Inst &I, bool taken) {
  if (taken)
    w.pc = size_t(op(w, I, 0).target);
}

/// Continues at code address `address` (a call or a return).
void jumpTo(Wave &w, uint64_t address, size_t codeSize) {
  uint64_t index = (address - kCodeBase) / 4;
  if (address < kCodeBase || address % 4 || index >= codeSize) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(address));
    w.fail(std::string("jumps to ") + hex + ", which is not an instruction of the kernel or its functions");
  }
  w.pc = size_t(index);
}

} // namespace

void registerScalarOps(Table &t) {
  t["s_mov_b32"] = [](Wave &w, const Inst &I) { writeScalar(w, op(w, I, 0), s32(w, I, 1)); };
  t["s_mov_b64"] = [](Wave &w, const Inst &I) { writeScalar64(w, op(w, I, 0), s64(w, I, 1)); };
  t["s_movk_i32"] = [](Wave &w, const Inst &I) {
    writeScalar(w, op(w, I, 0), uint32_t(int32_t(int16_t(op(w, I, 1).bits))));
  };
  t["s_cselect_b32"] = [](Wave &w, const Inst &I) {
    writeScalar(w, op(w, I, 0), w.scc ? s32(w, I, 1) : s32(w, I, 2));
  };
  t["s_cselect_b64"] = [](Wave &w, const Inst &I) {
    writeScalar64(w, op(w, I, 0), w.scc ? s64(w, I, 1) : s64(w, I, 2));
  };
  BIN32("s_add_u32", uint64_t s = uint64_t(a) + b; scc = s >> 32; return uint32_t(s););
  BIN32("s_addc_u32", uint64_t s = uint64_t(a) + b + scc; scc = s >> 32; return uint32_t(s););
  BIN32("s_sub_u32", scc = b > a; return a - b;);
  BIN32("s_subb_u32", uint64_t s = uint64_t(b) + scc; scc = s > a; return uint32_t(a - s););
  BIN32("s_add_i32", int32_t r; scc = __builtin_add_overflow(int32_t(a), int32_t(b), &r); return uint32_t(r););
  BIN32("s_sub_i32", int32_t r; scc = __builtin_sub_overflow(int32_t(a), int32_t(b), &r); return uint32_t(r););
  BIN32("s_mul_i32", return a * b;);
  BIN32("s_mul_hi_u32", return uint32_t((uint64_t(a) * b) >> 32););
  BIN32("s_mul_hi_i32", return uint32_t(uint64_t(int64_t(int32_t(a)) * int32_t(b)) >> 32););
  BIN32("s_lshl_b32", uint32_t d = a << (b & 31); scc = d != 0; return d;);
  BIN32("s_lshr_b32", uint32_t d = a >> (b & 31); scc = d != 0; return d;);
  BIN32("s_ashr_i32", uint32_t d = uint32_t(int32_t(a) >> (b & 31)); scc = d != 0; return d;);
  BIN32("s_and_b32", uint32_t d = a & b; scc = d != 0; return d;);
  BIN32("s_or_b32", uint32_t d = a | b; scc = d != 0; return d;);
  BIN32("s_xor_b32", uint32_t d = a ^ b; scc = d != 0; return d;);
  BIN32("s_andn2_b32", uint32_t d = a & ~b; scc = d != 0; return d;);
  BIN32("s_orn2_b32", uint32_t d = a | ~b; scc = d != 0; return d;);
  BIN32("s_min_i32", scc = int32_t(a) < int32_t(b); return scc ? a : b;);
  BIN32("s_min_u32", scc = a < b; return scc ? a : b;);
  BIN32("s_max_i32", scc = int32_t(a) > int32_t(b); return scc ? a : b;);
  BIN32("s_max_u32", scc = a > b; return scc ? a : b;);
  BIN32("s_bfe_u32", uint32_t off = b & 31, width = (b >> 16) & 0x7f;
        uint32_t d = width == 0 ? 0 : width >= 32 ? a >> off : (a >> off) & ((1u << width) - 1);
        scc = d != 0; return d;);
  BIN32("s_bfe_i32", uint32_t off = b & 31, width = (b >> 16) & 0x7f;
        int32_t d = width == 0 ? 0 : width >= 32 ? int32_t(a) >> off
                                                  : int32_t(uint32_t(a >> off) << (32 - width)) >> (32 - width);
        scc = d != 0; return uint32_t(d););
  BIN32("s_bfm_b32", return ((1u << (a & 31)) - 1) << (b & 31););
  BIN32("s_lshl1_add_u32", uint64_t s = (uint64_t(a) << 1) + b; scc = s >> 32; return uint32_t(s););
  BIN32("s_lshl2_add_u32", uint64_t s = (uint64_t(a) << 2) + b; scc = s >> 32; return uint32_t(s););
  BIN32("s_lshl3_add_u32", uint64_t s = (uint64_t(a) << 3) + b; scc = s >> 32; return uint32_t(s););
  BIN32("s_lshl4_add_u32", uint64_t s = (uint64_t(a) << 4) + b; scc = s >> 32; return uint32_t(s););
  BIN32("s_pack_ll_b32_b16", return (a & 0xffff) | (b << 16););
  BIN64("s_bfe_u64", uint32_t off = b & 63, width = (b >> 16) & 0x7f;
        uint64_t d = width == 0 ? 0 : width >= 64 ? a >> off : (a >> off) & ((uint64_t(1) << width) - 1);
        scc = d != 0; return d;);
  BIN64("s_bfe_i64", uint32_t off = b & 63, width = (b >> 16) & 0x7f;
        int64_t d = width == 0 ? 0 : width >= 64 ? int64_t(a) >> off
                                                 : int64_t(uint64_t(a >> off) << (64 - width)) >> (64 - width);
        scc = d != 0; return uint64_t(d););
  BIN64("s_lshl_b64", uint64_t d = a << (b & 63); scc = d != 0; return d;);
  BIN64("s_lshr_b64", uint64_t d = a >> (b & 63); scc = d != 0; return d;);
  BIN64("s_ashr_i64", uint64_t d = uint64_t(int64_t(a) >> (b & 63)); scc = d != 0; return d;);
  BIN64("s_and_b64", uint64_t d = a & b; scc = d != 0; return d;);
  BIN64("s_or_b64", uint64_t d = a | b; scc = d != 0; return d;);
  BIN64("s_xor_b64", uint64_t d = a ^ b; scc = d != 0; return d;);
  BIN64("s_andn2_b64", uint64_t d = a & ~b; scc = d != 0; return d;);
  BIN64("s_orn2_b64", uint64_t d = a | ~b; scc = d != 0; return d;);
  BIN64("s_nand_b64", uint64_t d = ~(a & b); scc = d != 0; return d;);
  BIN64("s_nor_b64", uint64_t d = ~(a | b); scc = d != 0; return d;);
  BIN64("s_xnor_b64", uint64_t d = ~(a ^ b); scc = d != 0; return d;);
  // s_lshl_b64 and friends read their shift from a 32-bit operand: the
  // 64-bit read above takes its low dword, the same bits.
  t["s_addk_i32"] = [](Wave &w, const Inst &I) {
    int32_t r;
    w.scc = __builtin_add_overflow(int32_t(s32(w, I, 0)), int32_t(int16_t(op(w, I, 1).bits)), &r);
    writeScalar(w, op(w, I, 0), uint32_t(r));
  };
  t["s_mulk_i32"] = [](Wave &w, const Inst &I) {
    writeScalar(w, op(w, I, 0), s32(w, I, 0) * uint32_t(int32_t(int16_t(op(w, I, 1).bits))));
  };
  t["s_not_b32"] = [](Wave &w, const Inst &I) {
    uint32_t d = ~s32(w, I, 1);
    w.scc = d != 0;
    writeScalar(w, op(w, I, 0), d);
  };
  t["s_not_b64"] = [](Wave &w, const Inst &I) {
    uint64_t d = ~s64(w, I, 1);
    w.scc = d != 0;
    writeScalar64(w, op(w, I, 0), d);
  };
  t["s_abs_i32"] = [](Wave &w, const Inst &I) {
    int32_t a = int32_t(s32(w, I, 1));
    uint32_t d = a < 0 ? 0u - uint32_t(a) : uint32_t(a);
    w.scc = d != 0;
    writeScalar(w, op(w, I, 0), d);
  };
  t["s_sext_i32_i16"] = [](Wave &w, const Inst &I) {
    writeScalar(w, op(w, I, 0), uint32_t(int32_t(int16_t(s32(w, I, 1)))));
  };
  t["s_sext_i32_i8"] = [](Wave &w, const Inst &I) {
    writeScalar(w, op(w, I, 0), uint32_t(int32_t(int8_t(s32(w, I, 1)))));
  };
  t["s_ff1_i32_b32"] = [](Wave &w, const Inst &I) {
    uint32_t a = s32(w, I, 1);
    writeScalar(w, op(w, I, 0), a ? uint32_t(__builtin_ctz(a)) : ~0u);
  };
  t["s_ff1_i32_b64"] = [](Wave &w, const Inst &I) {
    uint64_t a = s64(w, I, 1);
    writeScalar(w, op(w, I, 0), a ? uint32_t(__builtin_ctzll(a)) : ~0u);
  };
  t["s_flbit_i32_b32"] = [](Wave &w, const Inst &I) {
    uint32_t a = s32(w, I, 1);
    writeScalar(w, op(w, I, 0), a ? uint32_t(__builtin_clz(a)) : ~0u);
  };
  t["s_brev_b32"] = [](Wave &w, const Inst &I) {
    uint32_t a = s32(w, I, 1), r = 0;
    for (int i = 0; i < 32; ++i)
      r |= ((a >> i) & 1u) << (31 - i);
    writeScalar(w, op(w, I, 0), r);
  };
  t["s_flbit_i32"] = [](Wave &w, const Inst &I) { // leading bits equal to the sign bit
    int32_t a = int32_t(s32(w, I, 1));
    uint32_t x = a < 0 ? ~uint32_t(a) : uint32_t(a);
    writeScalar(w, op(w, I, 0), (a == 0 || a == -1) ? ~0u : uint32_t(__builtin_clz(x)));
  };
  t["s_bitset1_b32"] = [](Wave &w, const Inst &I) {
    writeScalar(w, op(w, I, 0), s32(w, I, 0) | (1u << (s32(w, I, 1) & 31)));
  };
  t["s_bitset0_b32"] = [](Wave &w, const Inst &I) {
    writeScalar(w, op(w, I, 0), s32(w, I, 0) & ~(1u << (s32(w, I, 1) & 31)));
  };
  t["s_bitcmp0_b32"] = [](Wave &w, const Inst &I) { w.scc = ((s32(w, I, 0) >> (s32(w, I, 1) & 31)) & 1) == 0; };
  t["s_bitcmp1_b32"] = [](Wave &w, const Inst &I) { w.scc = ((s32(w, I, 0) >> (s32(w, I, 1) & 31)) & 1) == 1; };
  t["s_bcnt1_i32_b32"] = [](Wave &w, const Inst &I) {
    uint32_t d = uint32_t(__builtin_popcount(s32(w, I, 1)));
    w.scc = d != 0;
    writeScalar(w, op(w, I, 0), d);
  };
  t["s_bcnt1_i32_b64"] = [](Wave &w, const Inst &I) {
    uint32_t d = uint32_t(__builtin_popcountll(s64(w, I, 1)));
    w.scc = d != 0;
    writeScalar(w, op(w, I, 0), d);
  };
  static const char *cmpNames[] = {"eq", "lg", "gt", "ge", "lt", "le"};
  static const Handler cmpI32[] = {cmpHandler<int32_t, 0, false>, cmpHandler<int32_t, 1, false>,
                                   cmpHandler<int32_t, 2, false>, cmpHandler<int32_t, 3, false>,
                                   cmpHandler<int32_t, 4, false>, cmpHandler<int32_t, 5, false>};
  static const Handler cmpU32[] = {cmpHandler<uint32_t, 0, false>, cmpHandler<uint32_t, 1, false>,
                                   cmpHandler<uint32_t, 2, false>, cmpHandler<uint32_t, 3, false>,
                                   cmpHandler<uint32_t, 4, false>, cmpHandler<uint32_t, 5, false>};
  static const Handler cmpkI32[] = {cmpHandler<int32_t, 0, true>, cmpHandler<int32_t, 1, true>,
                                    cmpHandler<int32_t, 2, true>, cmpHandler<int32_t, 3, true>,
                                    cmpHandler<int32_t, 4, true>, cmpHandler<int32_t, 5, true>};
  static const Handler cmpkU32[] = {cmpHandler<uint32_t, 0, true>, cmpHandler<uint32_t, 1, true>,
                                    cmpHandler<uint32_t, 2, true>, cmpHandler<uint32_t, 3, true>,
                                    cmpHandler<uint32_t, 4, true>, cmpHandler<uint32_t, 5, true>};
  for (int c = 0; c < 6; ++c) {
    t[std::string("s_cmp_") + cmpNames[c] + "_i32"] = cmpI32[c];
    t[std::string("s_cmp_") + cmpNames[c] + "_u32"] = cmpU32[c];
    t[std::string("s_cmpk_") + cmpNames[c] + "_i32"] = cmpkI32[c];
    t[std::string("s_cmpk_") + cmpNames[c] + "_u32"] = cmpkU32[c];
  }
  t["s_cmp_eq_u64"] = cmpHandler<uint64_t, 0, false>;
  t["s_cmp_lg_u64"] = cmpHandler<uint64_t, 1, false>;
  t["s_and_saveexec_b64"] = [](Wave &w, const Inst &I) {
    saveexec(w, I, [](uint64_t s, uint64_t e) { return s & e; });
  };
  t["s_or_saveexec_b64"] = [](Wave &w, const Inst &I) {
    saveexec(w, I, [](uint64_t s, uint64_t e) { return s | e; });
  };
  t["s_xor_saveexec_b64"] = [](Wave &w, const Inst &I) {
    saveexec(w, I, [](uint64_t s, uint64_t e) { return s ^ e; });
  };
  t["s_andn2_saveexec_b64"] = [](Wave &w, const Inst &I) {
    saveexec(w, I, [](uint64_t s, uint64_t e) { return s & ~e; });
  };
  // Calls: the return address is the next instruction's (w.pc is already
  // past this one).
  t["s_getpc_b64"] = [](Wave &w, const Inst &I) { writeScalar64(w, op(w, I, 0), codeAddress(w.pc)); };
  t["s_swappc_b64"] = [](Wave &w, const Inst &I) {
    uint64_t target = s64(w, I, 1);
    writeScalar64(w, op(w, I, 0), codeAddress(w.pc));
    jumpTo(w, target, w.kernel->code.size());
  };
  t["s_setpc_b64"] = [](Wave &w, const Inst &I) { jumpTo(w, s64(w, I, 0), w.kernel->code.size()); };
  t["s_branch"] = [](Wave &w, const Inst &I) { branchIf(w, I, true); };
  t["s_cbranch_scc0"] = [](Wave &w, const Inst &I) { branchIf(w, I, !w.scc); };
  t["s_cbranch_scc1"] = [](Wave &w, const Inst &I) { branchIf(w, I, w.scc); };
  t["s_cbranch_vccz"] = [](Wave &w, const Inst &I) { branchIf(w, I, w.vcc == 0); };
  t["s_cbranch_vccnz"] = [](Wave &w, const Inst &I) { branchIf(w, I, w.vcc != 0); };
  t["s_cbranch_execz"] = [](Wave &w, const Inst &I) { branchIf(w, I, w.exec == 0); };
  t["s_cbranch_execnz"] = [](Wave &w, const Inst &I) { branchIf(w, I, w.exec != 0); };
  t["s_waitcnt"] = [](Wave &w, const Inst &I) {
    int vm = I.mods.vmcnt, lgkm = I.mods.lgkmcnt;
    if (!I.ops.empty()) { // the packed form: vmcnt [3:0] and [15:14], lgkmcnt [11:8]
      uint32_t e = uint32_t(op(w, I, 0).bits);
      vm = int((e & 0xf) | ((e >> 14) & 3) << 4);
      lgkm = int((e >> 8) & 0xf);
    }
    if (vm >= 0)
      drain(w, w.vm, size_t(vm));
    if (lgkm >= 0)
      drain(w, w.lgkm, size_t(lgkm));
  };
  t["s_barrier"] = [](Wave &w, const Inst &) { w.atBarrier = true; };
  t["s_endpgm"] = [](Wave &w, const Inst &) {
    drain(w, w.vm, 0);
    drain(w, w.lgkm, 0);
    w.done = true;
  };
  // Scheduling hints and cache maintenance: no effect on the results (the
  // simulator's memory is coherent).
  for (const char *name : {"buffer_wbl2", "buffer_inv", "buffer_invl2", "buffer_wbinvl1", "buffer_wbinvl1_vol", "s_dcache_wb",
                           "s_dcache_inv"})
    t[name] = [](Wave &, const Inst &) {};
  t["s_nop"] = [](Wave &, const Inst &) {};
  t["s_setprio"] = [](Wave &, const Inst &) {};
  t["s_sleep"] = [](Wave &, const Inst &) {};
}

} // namespace tessel::gpusim::amdgcn
