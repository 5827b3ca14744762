//===- Parser.cpp - AMDGCN assembly text to decoded kernels ---------------===//
//
// Reads what LLVM's AMDGPU backend prints: the functions' instructions and
// labels, each kernel's .amdhsa_kernel descriptor, the YAML metadata of
// its arguments and the bytes of the variables declared @object (.ascii,
// .asciz, .byte, .short, .long, .quad, .zero). Comments start with ';'.
// Everything else (sections, debug directives) is skipped.
//
//===----------------------------------------------------------------------===//
#include "Wave.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

namespace tessel::gpusim::amdgcn {
namespace {

[[noreturn]] void failLine(unsigned line, const std::string &text,
                           const std::string &message) {
  throw SimError("AMDGCN line " + std::to_string(line) + ": " + message +
                 "\n  " + text);
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool startsWith(const std::string &s, const char *p) {
  return s.compare(0, std::strlen(p), p) == 0;
}

bool parseInt(const std::string &t, int64_t &out) {
  if (t.empty())
    return false;
  const char *b = t.c_str();
  char *end = nullptr;
  bool neg = *b == '-';
  if (neg)
    ++b;
  errno = 0;
  uint64_t u = std::strtoull(b, &end, b[0] == '0' && (b[1] == 'x' || b[1] == 'X') ? 16 : 10);
  if (errno || end == b || *end)
    return false;
  out = neg ? -int64_t(u) : int64_t(u);
  return true;
}

/// The bytes of the string literal `t` ("..." with C's escapes, as LLVM
/// writes them); false when it is not one.
bool stringLiteral(const std::string &t, std::vector<uint8_t> &out) {
  if (t.size() < 2 || t.front() != '"' || t.back() != '"')
    return false;
  for (size_t i = 1; i + 1 < t.size(); ++i) {
    char c = t[i];
    if (c == '"')
      return false;
    if (c != '\\') {
      out.push_back(uint8_t(c));
      continue;
    }
    if (++i + 1 >= t.size())
      return false;
    c = t[i];
    static const std::string simple = "nrtbf\\\"'", meaning = "\n\r\t\b\f\\\"'";
    size_t k = simple.find(c);
    if (k != std::string::npos) {
      out.push_back(uint8_t(meaning[k]));
    } else if (c >= '0' && c <= '7') {
      unsigned v = 0;
      for (int n = 0; n < 3 && i + 1 < t.size() && t[i] >= '0' && t[i] <= '7'; ++n, ++i)
        v = v * 8 + unsigned(t[i] - '0');
      --i;
      out.push_back(uint8_t(v));
    } else if (c == 'x') {
      unsigned v = 0;
      int n = 0;
      for (; i + 2 < t.size() && std::isxdigit(static_cast<unsigned char>(t[i + 1])); ++n, ++i)
        v = v * 16 + unsigned(std::isdigit(static_cast<unsigned char>(t[i + 1])) ? t[i + 1] - '0'
                                                                                 : (t[i + 1] | 0x20) - 'a' + 10);
      if (!n)
        return false;
      out.push_back(uint8_t(v));
    } else {
      return false;
    }
  }
  return true;
}

/// Appends the bytes of a data directive to `out`: 1 when `line` is one, 0
/// when it is not, -1 when it is one the simulator cannot read.
int dataDirective(const std::string &line, std::vector<uint8_t> &out) {
  size_t space = line.find_first_of(" \t");
  std::string name = line.substr(0, space), rest = space == std::string::npos ? "" : trim(line.substr(space));
  if (name == ".ascii" || name == ".asciz") {
    if (!stringLiteral(rest, out))
      return -1;
    if (name == ".asciz")
      out.push_back(0);
    return 1;
  }
  static const std::map<std::string, unsigned> sizes = {
      {".byte", 1}, {".short", 2}, {".value", 2}, {".long", 4}, {".quad", 8}, {".zero", 0}};
  auto it = sizes.find(name);
  if (it == sizes.end())
    return 0;
  std::vector<std::string> values;
  std::stringstream ss(rest);
  for (std::string v; std::getline(ss, v, ',');)
    values.push_back(trim(v));
  int64_t v = 0;
  if (it->second == 0) { // .zero count
    if (values.size() != 1 || !parseInt(values[0], v) || v < 0)
      return -1;
    out.insert(out.end(), size_t(v), 0);
    return 1;
  }
  for (const std::string &t : values) {
    if (!parseInt(t, v))
      return -1;
    for (unsigned b = 0; b < it->second; ++b)
      out.push_back(uint8_t(uint64_t(v) >> (8 * b)));
  }
  return 1;
}

/// Splits the operand text at top-level commas and spaces, keeping
/// brackets and parentheses whole.
std::vector<std::string> tokens(const std::string &s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char ch : s) {
    if (ch == '[' || ch == '(')
      ++depth;
    if (ch == ']' || ch == ')')
      --depth;
    if (depth == 0 && (ch == ',' || ch == ' ' || ch == '\t')) {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += ch;
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

uint8_t sdwaSel(const std::string &v) {
  static const std::map<std::string, uint8_t> sels = {
      {"BYTE_0", 0}, {"BYTE_1", 1}, {"BYTE_2", 2}, {"BYTE_3", 3},
      {"WORD_0", 4}, {"WORD_1", 5}, {"DWORD", 6}};
  auto it = sels.find(v);
  return it == sels.end() ? 0xff : it->second;
}

/// [a,b,c] -> bit i set where element i is 1.
bool bitList(const std::string &v, uint8_t &out) {
  if (v.size() < 2 || v.front() != '[' || v.back() != ']')
    return false;
  out = 0;
  std::stringstream ss(v.substr(1, v.size() - 2));
  std::string item;
  int i = 0;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    if (item == "1")
      out |= uint8_t(1u << i);
    else if (item != "0")
      return false;
    ++i;
  }
  return true;
}

/// The 16-bit offset of ds_swizzle_b32 that LLVM prints as a macro
/// (swizzle(MODE,...), AMDGPU modifier syntax): quad mode (bit 15) with
/// four 2-bit lane selectors, or bitmask mode, lane ((l & and) | or) ^ xor
/// within 32, the masks in bits 0-4, 5-9 and 10-14. False for other modes.
bool swizzleOffset(const std::string &args, int32_t &offset) {
  std::vector<std::string> a;
  std::stringstream ss(args);
  std::string item;
  while (std::getline(ss, item, ','))
    a.push_back(trim(item));
  std::vector<int64_t> n;
  for (size_t i = 1; i < a.size(); ++i) {
    int64_t v;
    n.push_back(parseInt(a[i], v) ? v : -1);
  }
  auto pow2 = [](int64_t v, int64_t lo, int64_t hi) {
    return v >= lo && v <= hi && (v & (v - 1)) == 0;
  };
  if (a.empty())
    return false;
  if (a[0] == "QUAD_PERM" && n.size() == 4) {
    offset = 0x8000;
    for (int i = 0; i < 4; ++i) {
      if (n[i] < 0 || n[i] > 3)
        return false;
      offset |= int32_t(n[i]) << (2 * i);
    }
    return true;
  }
  if (a[0] == "SWAP" && n.size() == 1 && pow2(n[0], 1, 16)) {
    offset = 0x1f | int32_t(n[0]) << 10;
    return true;
  }
  if (a[0] == "REVERSE" && n.size() == 1 && pow2(n[0], 2, 32)) {
    offset = 0x1f | int32_t(n[0] - 1) << 10;
    return true;
  }
  if (a[0] == "BROADCAST" && n.size() == 2 && pow2(n[0], 2, 32) && n[1] >= 0 &&
      n[1] < n[0]) {
    offset = (~int32_t(n[0] - 1) & 0x1f) | int32_t(n[1]) << 5;
    return true;
  }
  if (a[0] == "BITMASK_PERM" && a.size() == 2 && a[1].size() == 7 &&
      a[1].front() == '"' && a[1].back() == '"') {
    int32_t andMask = 0, orMask = 0, xorMask = 0;
    for (int i = 0; i < 5; ++i) { // bit 4 first
      int bit = 1 << (4 - i);
      switch (a[1][1 + i]) {
      case '0': break;
      case '1': orMask |= bit; break;
      case 'p': andMask |= bit; break;
      case 'i': andMask |= bit; xorMask |= bit; break;
      default: return false;
      }
    }
    offset = andMask | orMask << 5 | xorMask << 10;
    return true;
  }
  return false;
}

/// Applies a modifier word; false when it is not one.
bool modifier(const std::string &t, Modifiers &m, bool &isDpp) {
  static const std::string kSwizzle = "offset:swizzle(";
  if (t.compare(0, kSwizzle.size(), kSwizzle) == 0 && t.back() == ')')
    return swizzleOffset(t.substr(kSwizzle.size(), t.size() - kSwizzle.size() - 1), m.offset);
  static const std::set<std::string> ignored = {"glc", "slc", "nt", "sc0", "sc1", "dlc"};
  if (ignored.count(t))
    return true;
  if (t == "offen") { m.offen = true; return true; }
  if (t == "idxen") { m.idxen = true; return true; }
  if (t == "clamp") { m.clamp = true; return true; }
  if (t == "row_mirror") { m.dpp = 0x140; isDpp = true; return true; }
  if (t == "row_half_mirror") { m.dpp = 0x141; isDpp = true; return true; }
  // s_sendmsg's message; the interrupt is the only one compute kernels send.
  if (t == "sendmsg(MSG_INTERRUPT)") { m.message = 1; return true; }
  auto paren = t.find('(');
  if (paren != std::string::npos && t.back() == ')') {
    std::string name = t.substr(0, paren), val = t.substr(paren + 1, t.size() - paren - 2);
    int64_t n;
    if (!parseInt(val, n))
      return false;
    if (name == "vmcnt") { m.vmcnt = int8_t(n); return true; }
    if (name == "lgkmcnt") { m.lgkmcnt = int8_t(n); return true; }
    if (name == "expcnt") { m.expcnt = int8_t(n); return true; }
    return false;
  }
  auto colon = t.find(':');
  if (colon == std::string::npos || t[0] == 's' && t[1] == '[' || t[0] == 'v' && t[1] == '[' ||
      t[0] == 'a' && t[1] == '[')
    return false;
  std::string name = t.substr(0, colon), val = t.substr(colon + 1);
  int64_t n = 0;
  bool isNum = parseInt(val, n);
  if (name == "offset" && isNum) { m.offset = int32_t(n); return true; }
  if (name == "offset0" && isNum) { m.offset0 = int32_t(n); return true; }
  if (name == "offset1" && isNum) { m.offset1 = int32_t(n); return true; }
  if (name == "row_mask" && isNum) { m.rowMask = uint8_t(n); return true; }
  if (name == "bank_mask" && isNum) { m.bankMask = uint8_t(n); return true; }
  if (name == "bound_ctrl" && isNum) { m.boundCtrl = true; return true; } // either value enables it
  if (name == "bitop3" && isNum) { m.bitop3 = uint8_t(n); return true; }
  if (name == "cbsz" && isNum) { m.cbsz = uint8_t(n); return true; }
  if (name == "abid" && isNum) { m.abid = uint8_t(n); return true; }
  if (name == "blgp" && isNum) { m.blgp = uint8_t(n); return true; }
  if (name == "mul" && isNum) { m.omod = n == 2 ? 1 : n == 4 ? 2 : 0; return n == 2 || n == 4; }
  if (name == "div" && isNum) { m.omod = 3; return n == 2; }
  if (name == "row_shl" && isNum) { m.dpp = uint16_t(0x100 + n); isDpp = true; return n >= 1 && n <= 15; }
  if (name == "row_shr" && isNum) { m.dpp = uint16_t(0x110 + n); isDpp = true; return n >= 1 && n <= 15; }
  if (name == "row_ror" && isNum) { m.dpp = uint16_t(0x120 + n); isDpp = true; return n >= 1 && n <= 15; }
  if (name == "wave_shl" && isNum) { m.dpp = 0x130; isDpp = true; return true; }
  if (name == "wave_rol" && isNum) { m.dpp = 0x134; isDpp = true; return true; }
  if (name == "wave_shr" && isNum) { m.dpp = 0x138; isDpp = true; return true; }
  if (name == "wave_ror" && isNum) { m.dpp = 0x13c; isDpp = true; return true; }
  if (name == "row_bcast" && isNum) { m.dpp = n == 15 ? 0x142 : 0x143; isDpp = true; return n == 15 || n == 31; }
  if (name == "quad_perm") {
    if (val.size() != 9 || val[0] != '[')
      return false;
    uint16_t c = 0;
    for (int i = 0; i < 4; ++i)
      c |= uint16_t((val[1 + 2 * i] - '0') & 3) << (2 * i);
    m.dpp = c;
    isDpp = true;
    return true;
  }
  if (name == "op_sel") return bitList(val, m.opSel);
  if (name == "op_sel_hi") return m.opSelHiGiven = true, bitList(val, m.opSelHi);
  if (name == "neg_lo") return bitList(val, m.negLo);
  if (name == "neg_hi") return bitList(val, m.negHi);
  if (name == "dst_sel") return (m.dstSel = sdwaSel(val)) != 0xff;
  if (name == "src0_sel") return (m.src0Sel = sdwaSel(val)) != 0xff;
  if (name == "src1_sel") return (m.src1Sel = sdwaSel(val)) != 0xff;
  if (name == "dst_unused") {
    m.dstUnusedPreserve = val == "UNUSED_PRESERVE";
    return val == "UNUSED_PAD" || val == "UNUSED_PRESERVE" || val == "UNUSED_SEXT";
  }
  return false;
}

bool registerRange(const std::string &t, char file, uint16_t &reg, uint8_t &count) {
  if (t.size() < 2 || t[0] != file)
    return false;
  int64_t a, b;
  if (t[1] == '[') {
    auto colon = t.find(':');
    if (colon == std::string::npos || t.back() != ']')
      return false;
    if (!parseInt(t.substr(2, colon - 2), a) || !parseInt(t.substr(colon + 1, t.size() - colon - 2), b) ||
        b < a || a < 0)
      return false;
  } else {
    if (!std::isdigit(static_cast<unsigned char>(t[1])) || !parseInt(t.substr(1), a) || a < 0)
      return false;
    b = a;
  }
  reg = uint16_t(a);
  count = uint8_t(b - a + 1);
  return true;
}

bool operand(std::string t, Operand &o) {
  if (startsWith(t, "-")) {
    std::string rest = t.substr(1);
    if (!rest.empty() && (rest[0] == '|' || std::isalpha(static_cast<unsigned char>(rest[0])))) {
      o.neg = true;
      t = rest;
    }
  }
  if (t.size() > 2 && t.front() == '|' && t.back() == '|') {
    o.abs = true;
    t = t.substr(1, t.size() - 2);
  }
  if (startsWith(t, "neg(") && t.back() == ')') {
    o.neg = true;
    t = t.substr(4, t.size() - 5);
  }
  if (startsWith(t, "sext(") && t.back() == ')') {
    o.sext = true;
    t = t.substr(5, t.size() - 6);
  }
  if (startsWith(t, "abs(") && t.back() == ')') {
    o.abs = true;
    t = t.substr(4, t.size() - 5);
  }
  if (registerRange(t, 's', o.reg, o.count)) { o.kind = OpKind::SGPR; return o.reg + o.count <= kSgprs; }
  if (registerRange(t, 'v', o.reg, o.count)) { o.kind = OpKind::VGPR; return o.reg + o.count <= kVgprs; }
  if (registerRange(t, 'a', o.reg, o.count)) { o.kind = OpKind::AGPR; return o.reg + o.count <= kVgprs; }
  if (t == "vcc") { o.kind = OpKind::VCC; o.count = 2; return true; }
  if (t == "vcc_lo") { o.kind = OpKind::VCC; return true; }
  if (t == "vcc_hi") { o.kind = OpKind::VCC; o.reg = 1; return true; }
  if (t == "exec") { o.kind = OpKind::Exec; o.count = 2; return true; }
  if (t == "exec_lo") { o.kind = OpKind::Exec; return true; }
  if (t == "exec_hi") { o.kind = OpKind::Exec; o.reg = 1; return true; }
  if (t == "flat_scratch") { o.kind = OpKind::FlatScratch; o.count = 2; return true; }
  if (t == "flat_scratch_lo") { o.kind = OpKind::FlatScratch; return true; }
  if (t == "flat_scratch_hi") { o.kind = OpKind::FlatScratch; o.reg = 1; return true; }
  if (t == "m0") { o.kind = OpKind::M0; return true; }
  if (t == "scc") { o.kind = OpKind::SCC; return true; }
  if (t == "off") { o.kind = OpKind::Off; return true; }
  if (t[0] == '.' || t[0] == '_' || std::isalpha(static_cast<unsigned char>(t[0]))) {
    o.kind = OpKind::Label; // resolved once every label is known
    return true;
  }
  int64_t n;
  if (parseInt(t, n)) {
    o.kind = OpKind::Int;
    o.bits = uint64_t(o.neg ? -n : n);
    o.neg = false;
    return true;
  }
  char *end = nullptr;
  double d = std::strtod(t.c_str(), &end);
  if (end && *end == 0 && !t.empty()) {
    o.kind = OpKind::Float;
    o.value = o.neg ? -d : d;
    o.neg = false;
    return true;
  }
  return false;
}

InstClass classOf(const Inst &I) {
  const std::string &b = I.base;
  auto has = [&](const char *p) { return b.compare(0, std::strlen(p), p) == 0; };
  if (has("v_mfma")) return InstClass::TensorCore;
  if (has("global_load") || has("flat_load") || has("buffer_load") || has("s_load")) return InstClass::LoadGlobal;
  if (has("global_store") || has("flat_store") || has("buffer_store")) return InstClass::StoreGlobal;
  if (has("global_atomic") || has("buffer_atomic") || has("ds_add") || has("ds_max") || has("ds_min"))
    return InstClass::Atomic;
  if (has("ds_bpermute") || has("ds_permute") || has("ds_swizzle") || has("v_readlane") ||
      has("v_readfirstlane") || has("v_writelane") || I.encoding == Encoding::DPP)
    return InstClass::Warp;
  if (has("ds_read")) return InstClass::LoadShared;
  if (has("ds_write")) return InstClass::StoreShared;
  if (has("s_barrier")) return InstClass::Barrier;
  if (has("s_branch") || has("s_cbranch") || has("s_endpgm") || has("s_waitcnt") || has("s_nop") ||
      has("s_setprio") || has("s_sleep") || has("s_sendmsg") || has("s_trap"))
    return InstClass::Control;
  if (has("v_cmp") || has("s_cmp")) return InstClass::Compare;
  if (has("v_cvt")) return InstClass::Convert;
  if (has("v_mov") || has("s_mov") || has("v_accvgpr") || has("v_pk_mov") || has("s_cselect") ||
      has("v_cndmask"))
    return InstClass::Move;
  if (has("v_exp") || has("v_log") || has("v_rcp") || has("v_rsq") || has("v_sqrt") || has("v_sin") ||
      has("v_cos"))
    return InstClass::Special;
  if (b.find("_f32") != std::string::npos || b.find("_f16") != std::string::npos ||
      b.find("_f64") != std::string::npos)
    return InstClass::FloatArith;
  if (has("v_and") || has("v_or") || has("v_xor") || has("v_not") || has("s_and") || has("s_or") ||
      has("s_xor") || has("s_not") || has("v_bf") || has("v_perm") || has("v_alignb"))
    return InstClass::Logic;
  return InstClass::IntArith;
}

/// The instructions whose handlers apply the clamp modifier: f32 results to
/// [0, 1] (Lanes.h's outF32), integer sums and differences saturated.
const std::set<std::string> &clamped() {
  static const std::set<std::string> names = {
      "v_add_f32", "v_sub_f32", "v_subrev_f32", "v_mul_f32", "v_fma_f32", "v_fmaak_f32", "v_fmamk_f32",
      "v_fmac_f32", "v_max_f32", "v_min_f32", "v_max3_f32", "v_min3_f32", "v_med3_f32", "v_exp_f32",
      "v_log_f32", "v_rcp_f32", "v_rcp_iflag_f32", "v_rsq_f32", "v_sqrt_f32", "v_sin_f32", "v_cos_f32",
      "v_trunc_f32", "v_floor_f32", "v_ceil_f32", "v_rndne_f32", "v_ldexp_f32",
      "v_add_u32", "v_sub_u32", "v_subrev_u32", "v_add_co_u32", "v_addc_co_u32", "v_sub_co_u32",
      "v_subb_co_u32", "v_subrev_co_u32", "v_subbrev_co_u32", "v_add_u16", "v_sub_u16", "v_add_i32", "v_sub_i32",
      "v_pk_add_u16", "v_pk_sub_u16", "v_pk_add_i16", "v_pk_sub_i16", "v_pk_mad_u16", "v_pk_mad_i16"};
  return names;
}

struct PendingLabel {
  size_t inst, op;
  std::string name;
};

/// A function's address relative to the s_getpc_b64 before it
/// (`callee@rel32@lo+4`, `callee@rel32@hi+12`): its low or high half.
struct PendingCall {
  size_t inst, op;
  std::string callee;
  bool high;
};

/// Whether `t` is `<symbol>@rel32@lo<+addend>` or `...@hi...`.
bool relativeAddress(const std::string &t, std::string &symbol, bool &high) {
  size_t at = t.find("@rel32@");
  if (at == std::string::npos || at == 0)
    return false;
  std::string half = t.substr(at + 7, 2);
  if (half != "lo" && half != "hi")
    return false;
  symbol = t.substr(0, at);
  high = half == "hi";
  return true;
}

/// The `key: value` of a metadata line ("  - .offset: 8" included).
bool metadataField(const std::string &line, size_t &indent, bool &item, std::string &key,
                   std::string &value) {
  size_t i = line.find_first_not_of(' ');
  if (i == std::string::npos)
    return false;
  item = line.compare(i, 2, "- ") == 0;
  if (item)
    i = line.find_first_not_of(' ', i + 1);
  indent = i;
  auto colon = line.find(':', i);
  if (colon == std::string::npos)
    return false;
  key = line.substr(i, colon - i);
  value = trim(line.substr(colon + 1));
  return true;
}

uint32_t toU32(const std::string &v) {
  int64_t n = 0;
  parseInt(v, n);
  return uint32_t(n);
}

} // namespace

const Kernel *Module::find(const std::string &name) const {
  for (const Kernel &k : kernels)
    if (k.name == name)
      return &k;
  return nullptr;
}

Module parse(const std::string &text) {
  Module module;
  std::istringstream in(text);
  std::string raw;
  unsigned lineNo = 0;
  std::string chip;
  std::set<std::string> functions; // symbols declared @function
  std::set<std::string> objects;   // symbols declared @object
  // The variable being read (an index into module.data; -1 none) and the
  // alignment of the next one (.p2align).
  long object = -1;
  uint64_t align = 1;
  Kernel *current = nullptr;
  std::map<std::string, size_t> labels;
  std::vector<PendingLabel> pendingLabels;
  // Each function's relative addresses of the functions it calls.
  std::map<std::string, std::vector<PendingCall>> pendingCalls;
  std::map<std::string, Kernel> descriptors; // .amdhsa_kernel name -> fields
  Kernel *descriptor = nullptr;
  bool inMetadata = false;
  // Metadata: the kernel being read and its argument.
  struct MetaKernel {
    std::string name;
    std::vector<KernelArg> args;
    uint32_t lds = 0, kernarg = 0, wave = 64, maxWg = 1024, priv = 0;
  };
  std::vector<MetaKernel> meta;
  bool inArgs = false;
  size_t argsIndent = 0;
  const Table &ops = table();

  auto finishFunction = [&] {
    if (!current)
      return;
    for (const PendingLabel &p : pendingLabels) {
      auto it = labels.find(p.name);
      if (it == labels.end())
        failLine(current->code[p.inst].line, current->code[p.inst].text,
                 "no label " + p.name + " in function " + current->name);
      current->code[p.inst].ops[p.op].target = int64_t(it->second);
    }
    pendingLabels.clear();
    labels.clear();
    current = nullptr;
  };

  while (std::getline(in, raw)) {
    ++lineNo;
    std::string line = raw;
    if (inMetadata) {
      if (trim(line) == ".end_amdgpu_metadata") {
        inMetadata = false;
        continue;
      }
      size_t indent;
      bool item;
      std::string key, value;
      if (!metadataField(line, indent, item, key, value))
        continue;
      if (key == ".args") {
        inArgs = true;
        argsIndent = indent;
        continue;
      }
      if (inArgs && indent <= argsIndent)
        inArgs = false;
      if (!inArgs && item && indent == 4 && startsWith(key, ".")) {
        meta.emplace_back(); // a kernel's first field
      }
      if (inArgs) {
        if (meta.empty())
          continue;
        if (item)
          meta.back().args.emplace_back();
        if (meta.back().args.empty())
          continue;
        KernelArg &arg = meta.back().args.back();
        if (key == ".offset")
          arg.offset = toU32(value);
        else if (key == ".size")
          arg.size = toU32(value);
        else if (key == ".value_kind")
          arg.kind = value;
        continue;
      }
      if (meta.empty())
        continue;
      MetaKernel &mk = meta.back();
      if (key == ".name")
        mk.name = value;
      else if (key == ".group_segment_fixed_size")
        mk.lds = toU32(value);
      else if (key == ".kernarg_segment_size")
        mk.kernarg = toU32(value);
      else if (key == ".wavefront_size")
        mk.wave = toU32(value);
      else if (key == ".max_flat_workgroup_size")
        mk.maxWg = toU32(value);
      else if (key == ".private_segment_fixed_size")
        mk.priv = toU32(value);
      continue;
    }
    // A variable's bytes (before the comments go: a string may hold ';').
    if (object >= 0) {
      std::string t = trim(line);
      std::vector<uint8_t> &bytes = module.data[size_t(object)].bytes;
      if (startsWith(t, ".ascii")) {
        if (dataDirective(t, bytes) != 1)
          failLine(lineNo, raw, "cannot read the string of " + module.data[size_t(object)].name);
        continue;
      }
      auto semi = t.find(';');
      int r = dataDirective(trim(t.substr(0, semi)), bytes);
      if (r < 0)
        failLine(lineNo, raw, "cannot read the data of " + module.data[size_t(object)].name);
      if (r > 0 || t.empty() || t[0] == ';')
        continue;
      object = -1; // any other line ends the variable
    }
    auto semi = line.find(';');
    if (semi != std::string::npos)
      line = line.substr(0, semi);
    line = trim(line);
    if (line.empty())
      continue;
    if (startsWith(line, ".p2align ") || startsWith(line, ".p2align\t")) {
      std::string n = trim(line.substr(9));
      int64_t bits = 0;
      align = parseInt(trim(n.substr(0, n.find(','))), bits) && bits >= 0 && bits < 16 ? uint64_t(1) << bits : 1;
      continue;
    }
    if (descriptor) {
      if (line == ".end_amdhsa_kernel") {
        descriptor = nullptr;
        continue;
      }
      std::istringstream fields(line);
      std::string key, value;
      fields >> key >> value;
      uint32_t n = toU32(value);
      Kernel &d = *descriptor;
      if (key == ".amdhsa_user_sgpr_count") d.userSgprCount = n;
      else if (key == ".amdhsa_user_sgpr_private_segment_buffer") d.privateSegmentBuffer = n;
      else if (key == ".amdhsa_user_sgpr_dispatch_ptr") d.dispatchPtr = n;
      else if (key == ".amdhsa_user_sgpr_queue_ptr") d.queuePtr = n;
      else if (key == ".amdhsa_user_sgpr_kernarg_segment_ptr") d.kernargSegmentPtr = n;
      else if (key == ".amdhsa_user_sgpr_dispatch_id") d.dispatchId = n;
      else if (key == ".amdhsa_user_sgpr_flat_scratch_init") d.flatScratchInit = n;
      else if (key == ".amdhsa_user_sgpr_private_segment_size") d.privateSegmentSize = n;
      else if (key == ".amdhsa_user_sgpr_kernarg_preload_length") d.kernargPreloadLength = n;
      else if (key == ".amdhsa_user_sgpr_kernarg_preload_offset") d.kernargPreloadOffset = n;
      else if (key == ".amdhsa_system_sgpr_workgroup_id_x") d.workgroupId[0] = n;
      else if (key == ".amdhsa_system_sgpr_workgroup_id_y") d.workgroupId[1] = n;
      else if (key == ".amdhsa_system_sgpr_workgroup_id_z") d.workgroupId[2] = n;
      else if (key == ".amdhsa_system_sgpr_workgroup_info") d.workgroupInfo = n;
      else if (key == ".amdhsa_system_sgpr_private_segment_wavefront_offset" ||
               key == ".amdhsa_enable_private_segment") d.privateSegmentWaveOffset = n;
      else if (key == ".amdhsa_system_vgpr_workitem_id") d.workitemIdMode = n;
      else if (key == ".amdhsa_accum_offset") d.accumOffset = n;
      continue;
    }
    if (line == ".amdgpu_metadata") {
      inMetadata = true;
      continue;
    }
    if (startsWith(line, ".amdgcn_target")) {
      auto dashes = line.rfind("--");
      if (dashes != std::string::npos)
        chip = line.substr(dashes + 2, line.find_first_of("\":", dashes + 2) - dashes - 2);
      continue;
    }
    if (startsWith(line, ".amdhsa_kernel")) {
      std::istringstream fields(line);
      std::string key, name;
      fields >> key >> name;
      descriptor = &descriptors[name];
      descriptor->name = name;
      continue;
    }
    if (startsWith(line, ".type")) {
      auto comma = line.find(',');
      if (comma != std::string::npos && line.find("@function") != std::string::npos)
        functions.insert(trim(line.substr(5, comma - 5)));
      if (comma != std::string::npos && line.find("@object") != std::string::npos)
        objects.insert(trim(line.substr(5, comma - 5)));
      continue;
    }
    if (line.back() == ':' && line.find(' ') == std::string::npos) {
      std::string name = line.substr(0, line.size() - 1);
      if (objects.count(name)) {
        // Variables follow each other from kGlobalVarBase, each aligned.
        uint64_t end = module.data.empty() ? kGlobalVarBase
                                           : module.data.back().address + module.data.back().bytes.size();
        module.data.push_back({name, (end + align - 1) / align * align, {}});
        object = long(module.data.size() - 1);
        align = 1;
        continue;
      }
      if (functions.count(name)) {
        finishFunction();
        module.kernels.emplace_back();
        current = &module.kernels.back();
        current->name = name;
      } else if (current) {
        if (startsWith(name, ".Lfunc_end"))
          finishFunction();
        else
          labels[name] = current->code.size();
      }
      continue;
    }
    if (line[0] == '.' || !current)
      continue; // a directive, or data outside the functions
    // An instruction.
    Inst inst;
    inst.line = lineNo;
    inst.text = line;
    size_t space = line.find_first_of(" \t");
    inst.op = line.substr(0, space);
    std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
    inst.base = inst.op;
    auto strip = [&](const char *suffix, Encoding e) {
      size_t n = std::strlen(suffix);
      if (inst.base.size() > n && inst.base.compare(inst.base.size() - n, n, suffix) == 0) {
        inst.base.resize(inst.base.size() - n);
        inst.encoding = e;
      }
    };
    strip("_e32", Encoding::E32);
    strip("_e64", Encoding::E64);
    strip("_dpp", Encoding::DPP);
    strip("_sdwa", Encoding::SDWA);
    bool isDpp = false;
    for (const std::string &t : tokens(rest)) {
      if (modifier(t, inst.mods, isDpp))
        continue;
      Operand o;
      std::string callee;
      bool high;
      if (relativeAddress(t, callee, high)) {
        o.kind = OpKind::Int; // set when the functions are linked
        pendingCalls[current->name].push_back({current->code.size(), inst.ops.size(), callee, high});
        inst.ops.push_back(o);
        continue;
      }
      if (!operand(t, o))
        failLine(lineNo, line, "cannot read the operand '" + t + "'");
      if (o.kind == OpKind::Label)
        pendingLabels.push_back({current->code.size(), inst.ops.size(), t});
      inst.ops.push_back(o);
    }
    if (isDpp && inst.encoding != Encoding::DPP)
      failLine(lineNo, line, "DPP controls on an instruction without _dpp");
    auto it = ops.find(inst.base);
    if (it == ops.end())
      failLine(lineNo, line, "the simulator does not model " + inst.op);
    if (inst.mods.clamp && !clamped().count(inst.base))
      failLine(lineNo, line, "the simulator does not model clamp on " + inst.op);
    inst.run = it->second;
    inst.cls = classOf(inst);
    current->code.push_back(std::move(inst));
  }
  finishFunction();
  // Functions without a kernel descriptor are device functions: each
  // kernel's code is its own followed by all of them, their branch targets
  // moved along, and their relative addresses resolved against that code.
  std::vector<Kernel> functionsOnly, kernelsOnly;
  for (Kernel &k : module.kernels)
    (descriptors.count(k.name) ? kernelsOnly : functionsOnly).push_back(std::move(k));
  module.kernels = std::move(kernelsOnly);
  for (Kernel &k : module.kernels) {
    std::map<std::string, size_t> entry{{k.name, 0}};
    std::vector<std::pair<std::string, size_t>> parts{{k.name, 0}};
    for (const Kernel &f : functionsOnly) {
      size_t base = k.code.size();
      entry[f.name] = base;
      parts.push_back({f.name, base});
      for (Inst inst : f.code) {
        for (Operand &o : inst.ops)
          if (o.kind == OpKind::Label && o.target >= 0)
            o.target += int64_t(base);
        k.code.push_back(std::move(inst));
      }
    }
    for (auto [name, base] : parts) {
      auto calls = pendingCalls.find(name);
      if (calls == pendingCalls.end())
        continue;
      for (const PendingCall &c : calls->second) {
        Inst &inst = k.code[base + c.inst];
        auto callee = entry.find(c.callee);
        auto variable = std::find_if(module.data.begin(), module.data.end(),
                                     [&](const DataObject &d) { return d.name == c.callee; });
        if (callee == entry.end() && variable == module.data.end())
          failLine(inst.line, inst.text, "no function or variable " + c.callee + " in the module");
        // The address s_getpc_b64 gave: of the instruction after it.
        size_t getpc = base + c.inst;
        while (getpc > base && k.code[getpc].base != "s_getpc_b64")
          --getpc;
        if (k.code[getpc].base != "s_getpc_b64")
          failLine(inst.line, inst.text, "a relative address with no s_getpc_b64 before it");
        uint64_t target = callee != entry.end() ? codeAddress(callee->second) : variable->address;
        uint64_t delta = target - codeAddress(getpc + 1);
        inst.ops[c.op].bits = c.high ? delta >> 32 : delta & 0xffffffffu;
      }
    }
  }
  // Descriptors and metadata complete the kernels.
  for (Kernel &k : module.kernels) {
    auto d = descriptors.find(k.name);
    std::vector<Inst> code = std::move(k.code);
    std::string name = k.name;
    k = d->second;
    k.code = std::move(code);
    k.name = name;
    k.target = chip;
    for (const Inst &inst : k.code)
      k.prints = k.prints || inst.base == "s_sendmsg";
    for (const MetaKernel &mk : meta)
      if (mk.name == k.name) {
        k.args = mk.args;
        k.kernargBytes = mk.kernarg;
        k.ldsBytes = mk.lds;
        k.wavefrontSize = mk.wave;
        k.maxWorkgroupSize = mk.maxWg;
        k.privateBytes = mk.priv;
      }
    if (k.wavefrontSize != 64)
      throw SimError("AMDGCN: kernel " + k.name + " runs waves of " + std::to_string(k.wavefrontSize) +
                     " lanes; the simulator runs wave64 (CDNA) code");
  }
  return module;
}

} // namespace tessel::gpusim::amdgcn
