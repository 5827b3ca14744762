//===- Parser.cpp - PTX text to decoded kernels ---------------------------===//
//
// Module-level directives, kernel signatures, declarations (registers,
// shared/local variables), labels, scopes and instructions. Debug sections
// are skipped. Device functions (`.func`) are inlined at each direct call:
// their registers, labels and local variables are fresh per call site, the
// call site's `.param` variables live in local memory, and `ret` branches to
// the instruction after the call. Recursive and indirect calls are errors.
// Each instruction is handed to the decoder of its group; unknown opcodes,
// modifiers, directives and state spaces are errors naming the PTX line.
//
//===----------------------------------------------------------------------===//
#include "Decode.h"
#include "Lexer.h"
#include "Reconvergence.h"

#include "tessel/GPUSim/Error.h"
#include "tessel/GPUSim/Memory.h"
#include "tessel/GPUSim/Program.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace tessel::gpusim {

const Kernel *Module::find(const std::string &name) const {
  for (const Kernel &k : kernels)
    if (k.name == name)
      return &k;
  return nullptr;
}

namespace {

struct Symbol {
  StateSpace space;
  uint64_t offset; // in its space; the address for .global/.const
};

struct PendingVar {
  std::string name;
  StateSpace space;
  uint64_t size;
  uint32_t align;
  bool isExtern;
};

/// Bounds on what a PTX text may declare, so that hostile or broken input
/// is an error instead of gigabytes of simulator state. Registers: ptxas
/// gives a thread at most 255 32-bit registers, but PTX declares virtual
/// registers (LLVM's SSA values, Triton's inline asm), and the simulator
/// keeps 8 bytes for each in every thread: 131072 of them are 1 MiB a
/// thread, 1 GiB for a CTA of 1024 threads, and 5x what the largest kernels
/// of the tests declare (Tessel's reduction of a 256 x 1 fp64 block, fully
/// unrolled, about 25000).
constexpr uint64_t kMaxRegisters = 131072;
/// .const: the PTX ISA's 64 KB of constant memory.
constexpr uint64_t kMaxConstBytes = 64 * 1024;
/// .global variables: the simulator zero-fills and copies them at every
/// launch; real modules have a few bytes of them (Triton has none).
constexpr uint64_t kMaxGlobalVarBytes = uint64_t(1) << 30;
/// Kernel parameters: CUDA's limit (32764 bytes from sm_70 and PTX 8.1).
constexpr uint64_t kMaxParamBytes = 32764;

struct RawOperand {
  Operand op;
  std::string symbol; // [symbol + offset]
  int64_t symOffset = 0;
  std::string label; // a bare name: a label or a variable's address
};

struct RawInst {
  std::string opcode;
  std::vector<uint32_t> scopes; // ids of the enclosing { } blocks (labels)
  bool hasGuard = false, guardNeg = false;
  uint32_t guard = kNoReg;
  std::vector<RawOperand> ops;
  uint32_t line = 0, locFile = 0, locLine = 0, locCol = 0;
  std::string text;
};

class Parser {
public:
  Parser(const std::string &text) : src_(text), toks_(tokenize(text)) {}
  Module run();

private:
  const std::string &src_;
  std::vector<Token> toks_;
  size_t p_ = 0;
  Module mod_;
  std::vector<PendingVar> moduleShared_;
  std::unordered_map<std::string, Symbol> moduleSymbols_;
  uint64_t nextGlobal_ = kGlobalVarBase;
  uint64_t globalBytes_ = 0, constBytes_ = 0; // module variables so far

  // Per kernel.
  Kernel *k_ = nullptr;
  std::vector<std::unordered_map<std::string, uint32_t>> scopes_;
  // Variable names as written -> their unique names, per { } scope (kept
  // with scopes_): call sites' .param variables and the parameters and
  // locals of inlined functions.
  std::vector<std::unordered_map<std::string, std::string>> symAlias_;
  std::unordered_map<std::string, Symbol> symbols_;
  // Device functions defined in the module: return and parameter names, and
  // the token after the body's '{'.
  struct FuncDef {
    std::vector<std::string> rets, params;
    size_t body = 0;
  };
  std::unordered_map<std::string, FuncDef> funcs_;
  // The calls being inlined, innermost last.
  struct InlineFrame {
    std::string func, retLabel;
  };
  std::vector<InlineFrame> inline_;
  uint32_t nextUnique_ = 0;
  std::unordered_map<std::string, uint32_t> labels_;
  // Labels defined inside nested { } blocks (inline asm such as Triton's
  // mbarrier wait loops) are local to their block: "name#block".
  std::vector<uint32_t> blockIds_;
  uint32_t nextBlockId_ = 0;
  // Registers holding the immediates written inside { } operands, by bits.
  std::unordered_map<uint64_t, uint32_t> constRegs_;
  std::vector<PendingVar> vars_;
  std::vector<RawInst> raw_;
  uint32_t locFile_ = 0, locLine_ = 0, locCol_ = 0;

  const Token &peek(size_t k = 0) const {
    return toks_[std::min(p_ + k, toks_.size() - 1)];
  }
  const Token &next() {
    const Token &t = toks_[p_];
    if (p_ + 1 < toks_.size())
      ++p_;
    return t;
  }
  bool is(const char *text) const { return peek().text == text && peek().kind != Token::String; }
  bool accept(const char *text) {
    if (!is(text))
      return false;
    next();
    return true;
  }
  [[noreturn]] void fail(const std::string &msg, uint32_t line = 0) const {
    throw SimError("PTX line " + std::to_string(line ? line : peek().line) +
                   ": " + msg);
  }
  void expect(const char *text) {
    if (!accept(text))
      fail(std::string("expected '") + text + "', found '" + peek().text + "'");
  }
  uint64_t number(const Token &t) {
    if (t.kind != Token::Number)
      fail("expected a number, found '" + t.text + "'", t.line);
    char *end = nullptr;
    errno = 0;
    uint64_t v = std::strtoull(t.text.c_str(), &end, 0);
    if (*end == 'U' || *end == 'u')
      ++end;
    if (*end)
      fail("bad number '" + t.text + "'", t.line);
    // PTX integer literals are 64-bit: strtoull would give UINT64_MAX.
    if (errno == ERANGE)
      fail("integer literal '" + t.text + "' does not fit in 64 bits",
           t.line);
    return v;
  }
  /// An .align value: a power of two up to 2^31.
  uint32_t alignment(const Token &t) {
    uint64_t a = number(t);
    if (a == 0 || (a & (a - 1)) || a > (uint64_t(1) << 31))
      fail("bad alignment '" + t.text + "' (a power of two up to 2^31)",
           t.line);
    return uint32_t(a);
  }
  void skipToLineEnd(uint32_t line) {
    while (peek().kind != Token::End && peek().line == line)
      next();
  }
  void skipBalanced() { // at '{'
    int depth = 0;
    do {
      if (is("{"))
        ++depth;
      else if (is("}"))
        --depth;
      else if (peek().kind == Token::End)
        fail("unbalanced '{'");
      next();
    } while (depth > 0);
  }
  std::string statementText(size_t first, size_t last) const {
    size_t b = toks_[first].offset;
    size_t e = toks_[last].offset + toks_[last].text.size() +
               (toks_[last].kind == Token::String ? 2 : 0);
    std::string t = src_.substr(b, e - b);
    for (char &c : t)
      if (c == '\n' || c == '\t')
        c = ' ';
    return t;
  }

  void parseVariable(bool isExtern, std::vector<PendingVar> *into);
  void parseEntry(bool isEntry);
  void parseParams();
  void parseBody();
  void parseStatements();
  void scanFunctions();
  void inlineCall(RawInst &ri);
  void systemCall(RawInst &ri, const std::string &name,
                  const std::vector<std::string> &rets,
                  const std::vector<std::string> &args);
  std::string resolveSym(const std::string &name) const {
    for (auto it = symAlias_.rbegin(); it != symAlias_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end())
        return f->second;
    }
    return name;
  }
  void pushScope() {
    scopes_.emplace_back();
    symAlias_.emplace_back();
  }
  void popScope() {
    scopes_.pop_back();
    symAlias_.pop_back();
  }
  void parseRegDecl();
  void parseInstruction();
  void layoutVariables();
  void decodeOne(RawInst &ri);
  int64_t signedNumber(size_t &i, size_t e, uint32_t line);
  RawOperand parseOperand(size_t b, size_t e, uint32_t line, bool isBranch);
  uint32_t lookupReg(const std::string &name, uint32_t line) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end())
        return f->second;
    }
    fail("unknown register '" + name + "'", line);
  }
  /// A register that holds `bits` in every thread and that no instruction
  /// writes: an immediate element of a vector operand.
  uint32_t constantRegister(uint64_t bits) {
    auto found = constRegs_.find(bits);
    if (found != constRegs_.end())
      return found->second;
    uint32_t reg = uint32_t(k_->regs.size());
    k_->regs.push_back({"(immediate)", PType::B64});
    k_->constants.push_back({reg, bits});
    constRegs_[bits] = reg;
    return reg;
  }
  void addReg(const std::string &name, PType type, uint32_t line) {
    if (scopes_.back().count(name))
      fail("register '" + name + "' declared twice", line);
    scopes_.back()[name] = uint32_t(k_->regs.size());
    k_->regs.push_back({name, type});
  }
};

void Parser::scanFunctions() {
  // The names inside `( .param ... name[n], ... )`: per comma group, the last
  // identifier that is not a directive, before any '['.
  auto names = [&](size_t &i, std::vector<std::string> &out) {
    ++i; // (
    std::string cand;
    bool bracket = false;
    while (i < toks_.size() && toks_[i].kind != Token::End && toks_[i].text != ")") {
      const Token &t = toks_[i++];
      if (t.kind == Token::Punct && t.text == ",") {
        out.push_back(cand);
        cand.clear();
        bracket = false;
      } else if (t.kind == Token::Punct && t.text == "[") {
        bracket = true;
      } else if (t.kind == Token::Ident && t.text[0] != '.' && !bracket) {
        cand = t.text;
      }
    }
    if (!cand.empty())
      out.push_back(cand);
    ++i; // )
  };
  int depth = 0;
  for (size_t i = 0; i < toks_.size() && toks_[i].kind != Token::End;) {
    const Token &t = toks_[i];
    if (t.kind == Token::Punct && t.text == "{") {
      ++depth;
    } else if (t.kind == Token::Punct && t.text == "}") {
      --depth;
    } else if (depth == 0 && t.kind == Token::Ident && t.text == ".func") {
      FuncDef f;
      ++i;
      if (toks_[i].text == "(")
        names(i, f.rets);
      std::string name = toks_[i++].text;
      if (toks_[i].text == "(")
        names(i, f.params);
      while (toks_[i].kind != Token::End && toks_[i].text != "{" && toks_[i].text != ";")
        ++i;
      if (toks_[i].text == "{") {
        f.body = i + 1;
        funcs_[name] = std::move(f);
      }
      continue;
    }
    ++i;
  }
}

void Parser::inlineCall(RawInst &ri) {
  // call{.uni} (ret, ...), name, (arg, ...);  -- at the token after the opcode.
  if (ri.hasGuard)
    fail("a guarded call is not simulated", ri.line);
  std::vector<std::string> rets, args;
  auto names = [&](std::vector<std::string> &out) {
    expect("(");
    while (!accept(")")) {
      const Token &t = next();
      if (t.kind == Token::Punct && t.text == ",")
        continue;
      if (t.kind != Token::Ident || t.text[0] == '%')
        fail("call arguments must be .param variables, found '" + t.text + "'", t.line);
      out.push_back(resolveSym(t.text));
    }
  };
  if (is("(")) {
    names(rets);
    expect(",");
  }
  const Token &fn = next();
  std::string name = fn.text;
  if (fn.kind != Token::Ident || name[0] == '%')
    fail("indirect calls are not simulated", ri.line);
  if (accept(","))
    names(args);
  if (!accept(";"))
    fail("call prototypes and indirect calls are not simulated", ri.line);
  auto f = funcs_.find(name);
  if (f == funcs_.end() && (name == "vprintf" || name == "__assertfail")) {
    systemCall(ri, name, rets, args);
    return;
  }
  if (f == funcs_.end())
    fail("call to '" + name + "', a function whose body is not in this module", ri.line);
  for (const InlineFrame &fr : inline_)
    if (fr.func == name)
      fail("recursive call to '" + name + "' is not simulated", ri.line);
  if (inline_.size() >= 32)
    fail("calls nested deeper than 32 are not simulated", ri.line);
  const FuncDef &def = f->second;
  if (def.rets.size() != rets.size() || def.params.size() != args.size())
    fail("call to '" + name + "' with " + std::to_string(rets.size()) + " results and " +
             std::to_string(args.size()) + " arguments, but it declares " +
             std::to_string(def.rets.size()) + " and " + std::to_string(def.params.size()),
         ri.line);
  size_t resume = p_;
  pushScope();
  blockIds_.push_back(nextBlockId_++);
  for (size_t i = 0; i < rets.size(); ++i)
    symAlias_.back()[def.rets[i]] = rets[i];
  for (size_t i = 0; i < args.size(); ++i)
    symAlias_.back()[def.params[i]] = args[i];
  std::string retLabel = "(return " + std::to_string(nextUnique_++) + ")";
  inline_.push_back({name, retLabel});
  p_ = def.body;
  parseStatements();
  inline_.pop_back();
  popScope();
  blockIds_.pop_back();
  labels_[retLabel] = uint32_t(raw_.size());
  p_ = resume;
}

void Parser::systemCall(RawInst &ri, const std::string &name,
                        const std::vector<std::string> &rets,
                        const std::vector<std::string> &args) {
  // CUDA's system calls, which no module defines: one instruction of their
  // own whose operands are the call's .param variables (local memory here):
  // the arguments, then the result.
  size_t want = name == "vprintf" ? 2 : 5;
  if (args.size() != want || rets.size() > (name == "vprintf" ? 1u : 0u))
    fail("call to '" + name + "' with " + std::to_string(args.size()) +
             " arguments and " + std::to_string(rets.size()) +
             " results (CUDA's takes " + std::to_string(want) + ")",
         ri.line);
  if (name == "vprintf")
    k_->prints = true;
  else
    k_->asserts = true;
  ri.opcode = name;
  ri.text = "call " + name;
  for (const std::string &param : args) {
    RawOperand op;
    op.op.kind = OpKind::Addr;
    op.symbol = param;
    ri.ops.push_back(op);
  }
  for (const std::string &param : rets) {
    RawOperand op;
    op.op.kind = OpKind::Addr;
    op.symbol = param;
    ri.ops.push_back(op);
  }
  raw_.push_back(std::move(ri));
}

Module Parser::run() {
  scanFunctions();
  while (peek().kind != Token::End) {
    const Token &t = peek();
    if (t.kind != Token::Ident)
      fail("unexpected '" + t.text + "' at module level");
    std::string d = t.text;
    if (d == ".version") {
      next();
      mod_.version = next().text;
    } else if (d == ".target") {
      next();
      mod_.target = next().text;
      while (accept(","))
        next();
    } else if (d == ".address_size") {
      next();
      mod_.addressSize = unsigned(number(next()));
      if (mod_.addressSize != 64)
        fail(".address_size " + std::to_string(mod_.addressSize) +
             " is not simulated (only 64)");
    } else if (d == ".file") {
      uint32_t line = next().line;
      unsigned num = unsigned(number(next()));
      if (peek().kind == Token::String)
        mod_.files[num] = next().text;
      skipToLineEnd(line);
    } else if (d == ".section") {
      next();
      next();
      if (is("{"))
        skipBalanced();
    } else if (d == ".pragma") {
      while (!accept(";"))
        next();
    } else if (d == ".visible" || d == ".weak" || d == ".extern") {
      next();
      if (is(".entry") || is(".func"))
        continue;
      parseVariable(d == ".extern", &moduleShared_);
    } else if (d == ".entry" || d == ".func") {
      next();
      parseEntry(d == ".entry");
    } else if (d == ".shared" || d == ".global" || d == ".const") {
      parseVariable(false, &moduleShared_);
    } else {
      fail("unknown directive '" + d + "' at module level");
    }
  }
  return std::move(mod_);
}

void Parser::parseVariable(bool isExtern, std::vector<PendingVar> *into) {
  uint32_t line = peek().line;
  std::string spaceTok = next().text;
  StateSpace space;
  if (spaceTok == ".shared")
    space = StateSpace::Shared;
  else if (spaceTok == ".local" || spaceTok == ".param")
    space = StateSpace::Local; // .param in a body: a call site's arguments
  else if (spaceTok == ".global" || spaceTok == ".const")
    space = spaceTok == ".global" ? StateSpace::Global : StateSpace::Const;
  else
    fail("unknown state space '" + spaceTok + "'", line);
  uint32_t align = 0;
  if (accept(".align"))
    align = alignment(next());
  std::string tyName = next().text;
  PType ty = tyName.size() > 1 ? parseType(tyName.substr(1)) : PType::None;
  if (ty == PType::None || ty == PType::Pred)
    fail("unknown variable type '" + tyName + "'", line);
  std::string name = next().text;
  // Sizes in 64 bits with overflow checks: a 4 GiB array must not wrap to
  // 0 bytes (each space's bound is checked at layout or launch).
  uint32_t elem = byteWidth(ty);
  uint64_t bytes = elem;
  bool unsized = false;
  while (accept("[")) {
    if (accept("]")) {
      unsized = true;
      continue;
    }
    if (__builtin_mul_overflow(bytes, number(next()), &bytes))
      fail("array '" + name + "' has more than 2^64 bytes", line);
    expect("]");
  }
  if (!align)
    align = elem;
  if (unsized && !isExtern)
    fail("array '" + name + "' without a size", line);
  std::vector<uint8_t> init;
  if (accept("=")) {
    if (space != StateSpace::Global && space != StateSpace::Const)
      fail("only .global and .const variables take initializers", line);
    if (!isInteger(ty))
      fail("initializers of ." + std::string(typeName(ty)) +
               " variables are not simulated yet", line);
    bool list = accept("{");
    do {
      if (is("}"))
        break;
      size_t i = p_;
      int64_t v = signedNumber(i, toks_.size(), line);
      p_ = i;
      for (uint32_t b = 0; b < elem; ++b)
        init.push_back(uint8_t(uint64_t(v) >> (8 * b)));
    } while (list && accept(","));
    if (list)
      expect("}");
    if (init.size() > bytes)
      fail("too many initializers for '" + name + "'", line);
  }
  expect(";");
  if (space == StateSpace::Global || space == StateSpace::Const) {
    if (into != &moduleShared_)
      fail("function-scope ." + std::string(spaceName(space)) +
               " variables are not simulated", line);
    // Refused before the zero-filled bytes are made.
    uint64_t &total = space == StateSpace::Const ? constBytes_ : globalBytes_;
    uint64_t limit =
        space == StateSpace::Const ? kMaxConstBytes : kMaxGlobalVarBytes;
    if (bytes > limit - total)
      fail("." + std::string(spaceName(space)) + " variable '" + name +
               "' of " + std::to_string(bytes) + " bytes: the module's ." +
               spaceName(space) + " variables would need more than " +
               std::to_string(limit) + " bytes",
           line);
    total += bytes;
    uint64_t a = std::max<uint64_t>(align, 16);
    nextGlobal_ = (nextGlobal_ + a - 1) / a * a;
    init.resize(bytes, 0);
    mod_.globals.push_back({name, space, nextGlobal_, std::move(init)});
    moduleSymbols_[name] = {space, nextGlobal_};
    nextGlobal_ += bytes + 4096;
    return;
  }
  into->push_back({name, space, bytes, align, unsized || isExtern});
}

void Parser::parseParams() {
  expect("(");
  uint32_t offset = 0;
  while (!accept(")")) {
    uint32_t line = peek().line;
    if (!accept(".param"))
      fail("expected .param in the kernel signature", line);
    uint32_t alignFirst = 0; // `.param .align 64 .b8 name[128]`
    if (accept(".align"))
      alignFirst = alignment(next());
    std::string tyName = next().text;
    PType ty = tyName.size() > 1 ? parseType(tyName.substr(1)) : PType::None;
    if (ty == PType::None || ty == PType::Pred)
      fail("unknown parameter type '" + tyName + "'", line);
    bool isPtr = false;
    uint32_t align = alignFirst;
    while (peek().kind == Token::Ident && peek().text[0] == '.') {
      std::string m = next().text;
      if (m == ".ptr")
        isPtr = true;
      else if (m == ".align")
        align = alignment(next());
      else if (m == ".global" || m == ".shared" || m == ".const" ||
               m == ".local")
        ; // pointee space: informational
      else
        fail("unknown parameter attribute '" + m + "'", line);
    }
    std::string name = next().text;
    uint64_t size = byteWidth(ty);
    if (accept("[")) {
      // Checked in 64 bits: a 4 GiB + 4 array is not a 4-byte one.
      if (__builtin_mul_overflow(size, number(next()), &size))
        size = UINT64_MAX;
      expect("]");
    }
    uint32_t a = byteWidth(ty);
    if (!isPtr && align)
      a = align;
    offset = (offset + a - 1) / a * a;
    if (size > kMaxParamBytes || offset + size > kMaxParamBytes)
      fail("parameter '" + name + "' ends past " +
               std::to_string(kMaxParamBytes) +
               " bytes, CUDA's limit on kernel parameters",
           line);
    k_->params.push_back({name, ty, uint32_t(size), a, offset,
                          isPtr || (bitWidth(ty) == 64 && isInteger(ty))});
    symbols_[name] = {StateSpace::Param, offset};
    offset += size;
    accept(",");
  }
  k_->paramBytes = offset;
}

void Parser::parseEntry(bool isEntry) {
  uint32_t line = peek().line;
  if (!isEntry) {
    // A device function: skipped (a `call` to it is an error).
    while (!is("{") && !is(";"))
      next();
    if (is("{"))
      skipBalanced();
    else
      next();
    return;
  }
  mod_.kernels.emplace_back();
  k_ = &mod_.kernels.back();
  k_->name = next().text;
  scopes_.assign(1, {});
  symAlias_.assign(1, {});
  symbols_ = moduleSymbols_;
  labels_.clear();
  if (is("("))
    parseParams();
  // Performance directives.
  while (peek().kind == Token::Ident && peek().text[0] == '.') {
    std::string d = next().text;
    uint32_t *dims = nullptr;
    if (d == ".reqntid")
      dims = k_->reqntid;
    else if (d == ".maxntid")
      dims = k_->maxntid;
    else if (d == ".reqnctapercluster")
      dims = k_->cluster;
    else if (d == ".minnctapersm" || d == ".maxnreg" || d == ".maxnctapersm" ||
             d == ".noreturn" || d == ".pragma" || d == ".explicitcluster" ||
             d == ".maxclusterrank") {
      while (peek().kind == Token::Number || is(","))
        next();
      if (d == ".pragma") {
        next();
        accept(";");
      }
      continue;
    } else
      fail("unknown kernel directive '" + d + "'", line);
    for (int i = 0; i < 3; ++i) {
      dims[i] = 1;
    }
    for (int i = 0; i < 3; ++i) {
      dims[i] = uint32_t(number(next()));
      if (!accept(","))
        break;
    }
  }
  // Module-level shared variables are visible in every kernel.
  vars_ = moduleShared_;
  raw_.clear();
  expect("{");
  parseBody();
  layoutVariables();
  for (size_t i = 0; i < raw_.size(); ++i)
    decodeOne(raw_[i]);
  computeReconvergence(*k_);
  k_ = nullptr;
}

void Parser::layoutVariables() {
  // In 64 bits with overflow checks: the launch refuses more shared or local
  // memory than a GPU has, but only if the sums did not wrap first.
  uint64_t shared = 0, local = 0;
  auto alignUp = [&](uint64_t top, uint64_t a, const std::string &name) {
    uint64_t up;
    if (__builtin_add_overflow(top, a - 1, &up))
      fail("variable '" + name + "' lies past 2^64 bytes");
    return up / a * a;
  };
  std::vector<PendingVar *> externs;
  for (PendingVar &v : vars_) {
    if (v.space == StateSpace::Shared && v.isExtern) {
      externs.push_back(&v);
      continue;
    }
    uint64_t &top = v.space == StateSpace::Shared ? shared : local;
    top = alignUp(top, std::max(v.align, 1u), v.name);
    symbols_[v.name] = {v.space, top};
    if (__builtin_add_overflow(top, v.size, &top))
      fail("variable '" + v.name + "' ends past 2^64 bytes");
  }
  uint64_t dyn = alignUp(shared, 16, "(dynamic shared memory)");
  for (PendingVar *v : externs)
    dyn = alignUp(dyn, std::max(v->align, 16u), v->name);
  for (PendingVar *v : externs)
    symbols_[v->name] = {StateSpace::Shared, dyn};
  k_->staticSharedBytes = shared;
  k_->dynamicSharedOffset = dyn;
  k_->localBytes = alignUp(local, 16, "(local memory)");
}

void Parser::decodeOne(RawInst &ri) {
  Inst inst;
  inst.line = ri.line;
  inst.locFile = ri.locFile;
  inst.locLine = ri.locLine;
  inst.locCol = ri.locCol;
  inst.hasGuard = ri.hasGuard;
  inst.guardNeg = ri.guardNeg;
  inst.guard = ri.guard;
  if (ri.ops.size() > kMaxOperands)
    fail("too many operands", ri.line);
  inst.nops = uint8_t(ri.ops.size());
  for (size_t o = 0; o < ri.ops.size(); ++o) {
    RawOperand &ro = ri.ops[o];
    Operand op = ro.op;
    if (!ro.label.empty()) {
      auto f = labels_.end();
      for (auto b = ri.scopes.rbegin(); b != ri.scopes.rend() && f == labels_.end(); ++b)
        f = labels_.find(ro.label + "#" + std::to_string(*b));
      if (f == labels_.end())
        f = labels_.find(ro.label);
      if (f == labels_.end()) {
        auto s = symbols_.find(ro.label);
        if (s == symbols_.end())
          fail("unknown label or symbol '" + ro.label + "'", ri.line);
        // A variable used as a value: its address in its state space.
        op.kind = OpKind::Imm;
        op.imm = s->second.offset;
        op.hasSymbol = true;
        op.symSpace = s->second.space;
      } else {
        op.imm = f->second;
        inst.target = f->second;
      }
    }
    if (!ro.symbol.empty()) {
      auto s = symbols_.find(ro.symbol);
      if (s == symbols_.end())
        fail("unknown variable '" + ro.symbol + "'", ri.line);
      op.hasSymbol = true;
      op.symSpace = s->second.space;
      op.imm = uint64_t(int64_t(s->second.offset) + ro.symOffset);
    }
    if (op.kind == OpKind::Addr && op.vecLen &&
        ri.opcode.rfind("cp.async.bulk.tensor", 0) != 0)
      fail("tensor coordinates in an address operand are only allowed in "
           "cp.async.bulk.tensor", ri.line);
    inst.ops[o] = op;
  }
  // ld.param/st.param on a call site's arguments (local memory here).
  for (size_t o = 0; o < ri.ops.size(); ++o)
    if (inst.ops[o].hasSymbol && inst.ops[o].symSpace == StateSpace::Local) {
      size_t at = ri.opcode.find(".param");
      if (at != std::string::npos &&
          (at + 6 == ri.opcode.size() || ri.opcode[at + 6] == '.'))
        ri.opcode.replace(at, 6, ".local");
    }
  // Split the opcode.
  DecodeInput in{"", {}, ri.text, ri.line, &k_->regs};
  size_t dot = ri.opcode.find('.');
  in.base = ri.opcode.substr(0, dot);
  while (dot != std::string::npos) {
    size_t nd = ri.opcode.find('.', dot + 1);
    in.mods.push_back(ri.opcode.substr(dot + 1, nd == std::string::npos
                                                    ? std::string::npos
                                                    : nd - dot - 1));
    dot = nd;
  }
  // The longest registered dotted prefix names the decoder ("cp.async.bulk"
  // before "cp.async" before "cp"); the modifiers it spells are consumed.
  auto f = decoders().end();
  for (size_t n = std::min<size_t>(in.mods.size(), 3) + 1; n-- > 0;) {
    std::string key = in.base;
    for (size_t i = 0; i < n; ++i)
      key += "." + in.mods[i];
    f = decoders().find(key);
    if (f != decoders().end()) {
      in.base = key;
      in.mods.erase(in.mods.begin(), in.mods.begin() + n);
      break;
    }
  }
  if (f == decoders().end())
    in.fail("unknown instruction '" + in.base + "'");
  f->second(in, inst);
  if (!inst.exec && inst.op == Op::Generic)
    in.fail("internal: no semantics chosen");
  k_->insts.push_back(inst);
  k_->text.push_back(ri.text);
}

void Parser::parseBody() {
  // At the token after the opening '{'; ends after the matching '}'.
  scopes_.assign(1, {});
  symAlias_.assign(1, {});
  blockIds_.clear();
  constRegs_.clear();
  inline_.clear();
  parseStatements();
}

void Parser::parseStatements() {
  // At the token after an opening '{'; ends after the matching '}'.
  int depth = 1;
  while (depth > 0) {
    const Token &t = peek();
    if (t.kind == Token::End)
      fail("missing '}' at the end of kernel " + k_->name);
    if (is("{")) {
      next();
      pushScope();
      blockIds_.push_back(nextBlockId_++);
      ++depth;
      continue;
    }
    if (is("}")) {
      next();
      if (--depth > 0) {
        popScope();
        blockIds_.pop_back();
      }
      continue;
    }
    if (t.kind == Token::Ident && peek(1).text == ":" &&
        peek(1).kind == Token::Punct) {
      std::string key = blockIds_.empty()
                            ? t.text
                            : t.text + "#" + std::to_string(blockIds_.back());
      if (labels_.count(key))
        fail("label '" + t.text + "' defined twice");
      labels_[key] = uint32_t(raw_.size());
      next();
      next();
      continue;
    }
    if (t.kind == Token::Ident && t.text[0] == '.') {
      std::string d = t.text;
      if (d == ".reg") {
        parseRegDecl();
      } else if (d == ".loc") {
        uint32_t line = next().line;
        locFile_ = uint32_t(number(next()));
        locLine_ = uint32_t(number(next()));
        locCol_ = peek().kind == Token::Number && peek().line == line
                      ? uint32_t(number(next()))
                      : 0;
        skipToLineEnd(line);
      } else if (d == ".pragma") {
        while (!accept(";"))
          next();
      } else if (d == ".shared" || d == ".local" || d == ".param") {
        parseVariable(false, &vars_);
        // Call sites reuse names (`param0` in each call sequence) and each
        // inlined call needs its own locals: unique names, scoped aliases.
        if (d == ".param" || (d == ".local" && !inline_.empty())) {
          PendingVar &v = vars_.back();
          std::string unique = v.name + "#" + std::to_string(nextUnique_++);
          symAlias_.back()[v.name] = unique;
          v.name = unique;
        }
      } else {
        fail("unknown directive '" + d + "' in a kernel body");
      }
      continue;
    }
    parseInstruction();
  }
}

void Parser::parseRegDecl() {
  uint32_t line = next().line; // .reg
  std::string tyName = next().text;
  if (tyName == ".v2" || tyName == ".v4")
    fail("vector registers are not simulated yet", line);
  PType ty = tyName.size() > 1 ? parseType(tyName.substr(1)) : PType::None;
  if (ty == PType::None)
    fail("unknown register type '" + tyName + "'", line);
  do {
    size_t first = p_;
    std::string name = next().text;
    bool range = accept("<");
    uint64_t n = 1;
    if (range) {
      n = number(next());
      expect(">");
    }
    // Checked before any is made: `%r<100000000>` would take gigabytes.
    if (n > kMaxRegisters || k_->regs.size() + n > kMaxRegisters)
      fail("'.reg " + tyName + " " + statementText(first, p_ - 1) +
               "' declares " + std::to_string(n) +
               " registers: a kernel may declare at most " +
               std::to_string(kMaxRegisters) + " (" +
               std::to_string(k_->regs.size()) + " before this)",
           line);
    if (range)
      for (uint64_t i = 0; i < n; ++i)
        addReg(name + std::to_string(i), ty, line);
    else
      addReg(name, ty, line);
  } while (accept(","));
  expect(";");
}

void Parser::parseInstruction() {
  size_t first = p_;
  RawInst ri;
  ri.scopes = blockIds_;
  ri.line = peek().line;
  ri.locFile = locFile_;
  ri.locLine = locLine_;
  ri.locCol = locCol_;
  if (accept("@")) {
    ri.hasGuard = true;
    ri.guardNeg = accept("!");
    const Token &g = next();
    ri.guard = lookupReg(g.text, g.line);
  }
  const Token &op = next();
  if (op.kind != Token::Ident)
    fail("expected an instruction, found '" + op.text + "'", op.line);
  ri.opcode = op.text;
  if (ri.opcode == "call" || ri.opcode.rfind("call.", 0) == 0) {
    inlineCall(ri);
    return;
  }
  if (!inline_.empty() && (ri.opcode == "ret" || ri.opcode.rfind("ret.", 0) == 0)) {
    // Return from an inlined call: a branch to the instruction after it.
    expect(";");
    ri.opcode = "bra";
    RawOperand target;
    target.op.kind = OpKind::Label;
    target.label = inline_.back().retLabel;
    ri.ops.push_back(target);
    ri.text = statementText(first, p_ - 1);
    raw_.push_back(std::move(ri));
    return;
  }
  bool isBranch = ri.opcode == "bra" || ri.opcode.rfind("bra.", 0) == 0 ||
                  ri.opcode == "call" || ri.opcode.rfind("call.", 0) == 0;
  // Operands: split at top-level commas up to ';'.
  size_t b = p_;
  int nest = 0;
  while (true) {
    const Token &t = peek();
    if (t.kind == Token::End)
      fail("missing ';' after '" + ri.opcode + "'", ri.line);
    if (t.kind == Token::Punct) {
      if (t.text == "[" || t.text == "{" || t.text == "(")
        ++nest;
      else if (t.text == "]" || t.text == "}" || t.text == ")")
        --nest;
      else if (nest == 0 && (t.text == "," || t.text == ";")) {
        if (p_ > b)
          ri.ops.push_back(parseOperand(b, p_, ri.line, isBranch));
        else if (t.text == ",")
          fail("empty operand", t.line);
        bool end = t.text == ";";
        next();
        b = p_;
        if (end)
          break;
        continue;
      }
    }
    next();
  }
  ri.text = statementText(first, p_ - 1);
  raw_.push_back(std::move(ri));
}

int64_t Parser::signedNumber(size_t &i, size_t e, uint32_t line) {
  // Any run of signs: `[%rd1+-4]` (LLVM's NVPTX printer writes negative
  // offsets so), `[%rd1-4]`, `[%rd1+4]`.
  bool neg = false;
  while (i < e && toks_[i].kind == Token::Punct &&
         (toks_[i].text == "-" || toks_[i].text == "+")) {
    neg ^= toks_[i].text == "-";
    ++i;
  }
  if (i >= e)
    fail("expected a number", line);
  int64_t v = int64_t(number(toks_[i]));
  ++i;
  return neg ? -v : v;
}

RawOperand Parser::parseOperand(size_t b, size_t e, uint32_t line,
                                bool isBranch) {
  RawOperand ro;
  Operand &o = ro.op;
  const Token &t = toks_[b];
  auto regOrSink = [&](const Token &tok) -> uint32_t {
    if (tok.text == "_")
      return kNoReg;
    return lookupReg(tok.text, tok.line);
  };
  if (t.kind == Token::Punct && t.text == "[") {
    o.kind = OpKind::Addr;
    size_t i = b + 1;
    if (toks_[e - 1].text != "]")
      fail("bad address operand", line);
    size_t end = e - 1;
    int64_t offset = 0;
    if (i < end && toks_[i].kind == Token::Ident) {
      const std::string &name = toks_[i].text;
      bool isReg = false;
      for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
        if (it->count(name))
          isReg = true;
      if (isReg)
        o.reg = lookupReg(name, line);
      else if (name[0] == '%')
        fail("unknown register '" + name + "'", line);
      else
        ro.symbol = resolveSym(name);
      ++i;
    }
    while (i < end) {
      if (toks_[i].text == "," && i + 1 < end && toks_[i + 1].text == "{") {
        // [tensorMap, {c0, c1, ...}]: the coordinates of a tensor copy,
        // registers or immediates (ptxas takes both).
        i += 2;
        while (i < end && toks_[i].text != "}") {
          if (toks_[i].text == ",") {
            ++i;
            continue;
          }
          size_t j = i;
          while (j < end && toks_[j].text != "," && toks_[j].text != "}")
            ++j;
          if (toks_[i].kind == Token::Ident) {
            o.vec.push_back(lookupReg(toks_[i].text, line));
          } else {
            RawOperand imm = parseOperand(i, j, line, false);
            if (imm.op.immIsFloat)
              fail("bad tensor coordinate operand '" + statementText(b, e - 1) + "'", line);
            o.vec.push_back(constantRegister(imm.op.imm));
          }
          ++o.vecLen;
          i = j;
        }
        if (i + 1 != end || o.vecLen == 0)
          fail("bad tensor coordinate operand '" + statementText(b, e - 1) + "'", line);
        ++i;
      } else if (toks_[i].text == "+" || toks_[i].text == "-" ||
          toks_[i].kind == Token::Number)
        offset += signedNumber(i, end, line);
      else
        fail("unsupported address form '" + statementText(b, e - 1) + "'",
             line);
    }
    o.imm = uint64_t(offset);
    ro.symOffset = offset;
    return ro;
  }
  if (t.kind == Token::Punct && t.text == "{") {
    o.kind = OpKind::Vec;
    size_t i = b + 1;
    while (i < e && toks_[i].text != "}") {
      size_t j = i;
      while (j < e && toks_[j].text != "," && toks_[j].text != "}")
        ++j;
      if (j == i)
        fail("empty element in vector operand '" + statementText(b, e - 1) + "'", line);
      const Token &el = toks_[i];
      if (el.kind == Token::Number ||
          (el.kind == Token::Punct && (el.text == "-" || el.text == "+"))) {
        // An immediate element (`st.shared.v2.b32 [a], {0f3F800000, 0}`):
        // a register that holds the immediate's bits in every thread and
        // that no instruction writes. Integers are sign-extended to 64 bits
        // (the instruction uses the low bits of its element type); 0f and
        // 0d literals give their 32 or 64 bits.
        RawOperand imm = parseOperand(i, j, line, false);
        if (imm.op.immIsFloat && imm.op.immFloatWidth == 0)
          fail("a decimal floating-point immediate inside a vector operand is not simulated (write 0f/0d bits)",
               line);
        o.vec.push_back(constantRegister(imm.op.imm));
      } else {
        if (j != i + 1)
          fail("bad element in vector operand '" + statementText(b, e - 1) + "'", line);
        o.vec.push_back(regOrSink(el));
      }
      ++o.vecLen;
      i = j;
      if (i < e && toks_[i].text == ",")
        ++i;
    }
    return ro;
  }
  if (t.kind == Token::Punct && t.text == "!") {
    ro = parseOperand(b + 1, e, line, isBranch);
    if (ro.op.kind != OpKind::Reg)
      fail("'!' applies to predicate registers only", line);
    ro.op.neg = !ro.op.neg;
    return ro;
  }
  if (t.kind == Token::Number ||
      (t.kind == Token::Punct && (t.text == "-" || t.text == "+"))) {
    o.kind = OpKind::Imm;
    size_t i = b;
    bool neg = false;
    while (i < e && toks_[i].kind == Token::Punct &&
           (toks_[i].text == "-" || toks_[i].text == "+")) {
      neg ^= toks_[i].text == "-";
      ++i;
    }
    if (i + 1 != e || toks_[i].kind != Token::Number)
      fail("bad immediate operand", line);
    const std::string &n = toks_[i].text;
    if (n.size() == 10 && (n[1] == 'f' || n[1] == 'F')) {
      uint32_t bits = uint32_t(std::strtoul(n.c_str() + 2, nullptr, 16));
      float f;
      std::memcpy(&f, &bits, 4);
      o.immIsFloat = true;
      o.immFloatWidth = 32;
      o.imm = bits ^ (neg ? 0x80000000u : 0);
      o.immFloat = neg ? -double(f) : double(f);
    } else if (n.size() == 18 && (n[1] == 'd' || n[1] == 'D')) {
      uint64_t bits = std::strtoull(n.c_str() + 2, nullptr, 16);
      double d;
      std::memcpy(&d, &bits, 8);
      o.immIsFloat = true;
      o.immFloatWidth = 64;
      o.imm = bits ^ (neg ? 0x8000000000000000ull : 0);
      o.immFloat = neg ? -d : d;
    } else if (n.find_first_of(".eE") != std::string::npos &&
               n.rfind("0x", 0) != 0 && n.rfind("0X", 0) != 0) {
      o.immIsFloat = true;
      o.immFloat = std::strtod(n.c_str(), nullptr);
      if (neg)
        o.immFloat = -o.immFloat;
    } else {
      uint64_t v = number(toks_[i]);
      if (neg && v > (uint64_t(1) << 63))
        fail("integer literal '-" + n + "' does not fit in 64 bits", line);
      o.imm = neg ? uint64_t(0) - v : v;
      o.immNeg = neg;
    }
    return ro;
  }
  if (t.kind != Token::Ident)
    fail("bad operand '" + t.text + "'", line);
  if (e - b == 3 && toks_[b + 1].text == "|") {
    o.kind = OpKind::Reg;
    o.reg = lookupReg(t.text, line);
    o.reg2 = lookupReg(toks_[b + 2].text, line);
    return ro;
  }
  if (e - b != 1)
    fail("bad operand '" + statementText(b, e - 1) + "'", line);
  if (t.text == "_") {
    o.kind = OpKind::Sink;
    return ro;
  }
  if (t.text[0] == '%') {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(t.text);
      if (f != it->end()) {
        o.kind = OpKind::Reg;
        o.reg = f->second;
        return ro;
      }
    }
    static const std::unordered_map<std::string, Sreg> sregs = {
        {"%tid.x", Sreg::TidX},       {"%tid.y", Sreg::TidY},
        {"%tid.z", Sreg::TidZ},       {"%ntid.x", Sreg::NtidX},
        {"%ntid.y", Sreg::NtidY},     {"%ntid.z", Sreg::NtidZ},
        {"%ctaid.x", Sreg::CtaidX},   {"%ctaid.y", Sreg::CtaidY},
        {"%ctaid.z", Sreg::CtaidZ},   {"%nctaid.x", Sreg::NctaidX},
        {"%nctaid.y", Sreg::NctaidY}, {"%nctaid.z", Sreg::NctaidZ},
        {"%laneid", Sreg::LaneId},    {"%warpid", Sreg::WarpId},
        {"%nwarpid", Sreg::NWarpId},  {"%smid", Sreg::SmId},
        {"%nsmid", Sreg::NSmId},      {"%gridid", Sreg::GridId},
        {"%lanemask_eq", Sreg::LanemaskEq},
        {"%lanemask_lt", Sreg::LanemaskLt},
        {"%lanemask_le", Sreg::LanemaskLe},
        {"%lanemask_gt", Sreg::LanemaskGt},
        {"%lanemask_ge", Sreg::LanemaskGe},
        {"%clock", Sreg::Clock},      {"%clock64", Sreg::Clock64},
        {"%globaltimer", Sreg::GlobalTimer},
        {"%dynamic_smem_size", Sreg::DynamicSmemSize},
        {"%total_smem_size", Sreg::TotalSmemSize},
        {"%cluster_ctaid.x", Sreg::ClusterCtaidX},
        {"%cluster_ctaid.y", Sreg::ClusterCtaidY},
        {"%cluster_ctaid.z", Sreg::ClusterCtaidZ},
        {"%cluster_nctaid.x", Sreg::ClusterNctaidX},
        {"%cluster_nctaid.y", Sreg::ClusterNctaidY},
        {"%cluster_nctaid.z", Sreg::ClusterNctaidZ},
        {"%clusterid.x", Sreg::ClusterIdX},
        {"%clusterid.y", Sreg::ClusterIdY},
        {"%clusterid.z", Sreg::ClusterIdZ},
        {"%nclusterid.x", Sreg::NclusterIdX},
        {"%nclusterid.y", Sreg::NclusterIdY},
        {"%nclusterid.z", Sreg::NclusterIdZ},
        {"%cluster_ctarank", Sreg::ClusterCtaRank},
        {"%cluster_nctarank", Sreg::ClusterNctaRank},
    };
    auto f = sregs.find(t.text);
    if (f == sregs.end())
      fail("unknown register or special register '" + t.text + "'", line);
    o.kind = OpKind::Sreg;
    o.sreg = f->second;
    return ro;
  }
  // A register whose name has no '%' (inline asm: `.reg .pred complete;`).
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->find(t.text);
    if (f != it->end()) {
      o.kind = OpKind::Reg;
      o.reg = f->second;
      return ro;
    }
  }
  // A label (branch target) or a variable used as a value.
  o.kind = isBranch ? OpKind::Label : OpKind::Imm;
  ro.label = isBranch ? t.text : resolveSym(t.text);
  return ro;
}

} // namespace

Module parsePTX(const std::string &text) { return Parser(text).run(); }

} // namespace tessel::gpusim
