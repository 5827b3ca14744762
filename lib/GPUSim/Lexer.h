//===- Lexer.h - PTX tokens -------------------------------------*- C++ -*-===//
#ifndef TESSEL_LIB_GPUSIM_LEXER_H
#define TESSEL_LIB_GPUSIM_LEXER_H

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::gpusim {

struct Token {
  enum Kind : uint8_t { Ident, Number, String, Punct, End } kind;
  std::string text;
  uint32_t line;
  uint32_t offset; // into the source, to recover statement text
};

/// Splits PTX into tokens, dropping // and /* */ comments. Identifiers
/// include dots, `%`, `$` and `::` (`ld.global.L1::evict_last.b32`, `%tid.x`).
std::vector<Token> tokenize(const std::string &text);

} // namespace tessel::gpusim

#endif
