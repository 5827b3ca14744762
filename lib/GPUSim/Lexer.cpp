//===- Lexer.cpp - PTX tokens ---------------------------------------------===//
#include "Lexer.h"

#include "tessel/GPUSim/Error.h"

#include <cctype>

namespace tessel::gpusim {

static bool identStart(char c) {
  return std::isalpha((unsigned char)c) || c == '_' || c == '.' || c == '$' ||
         c == '%';
}
static bool identChar(char c) {
  return std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$' ||
         c == '%';
}

std::vector<Token> tokenize(const std::string &s) {
  std::vector<Token> out;
  uint32_t line = 1;
  size_t i = 0, n = s.size();
  while (i < n) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (std::isspace((unsigned char)c)) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n')
        ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      size_t end = s.find("*/", i + 2);
      if (end == std::string::npos)
        throw SimError("PTX line " + std::to_string(line) +
                       ": unterminated /* comment");
      for (size_t k = i; k < end; ++k)
        line += s[k] == '\n';
      i = end + 2;
      continue;
    }
    size_t start = i;
    if (identStart(c)) {
      while (i < n) {
        if (identChar(s[i]))
          ++i;
        else if (s[i] == ':' && i + 1 < n && s[i + 1] == ':')
          i += 2;
        else
          break;
      }
      out.push_back({Token::Ident, s.substr(start, i - start), line,
                     uint32_t(start)});
      continue;
    }
    if (std::isdigit((unsigned char)c)) {
      bool hexLike = c == '0' && i + 1 < n &&
                     (s[i + 1] == 'x' || s[i + 1] == 'X' || s[i + 1] == 'f' ||
                      s[i + 1] == 'F' || s[i + 1] == 'd' || s[i + 1] == 'D');
      ++i;
      while (i < n) {
        char d = s[i];
        if (std::isalnum((unsigned char)d) || d == '.')
          ++i;
        else if (!hexLike && (d == '+' || d == '-') &&
                 (s[i - 1] == 'e' || s[i - 1] == 'E'))
          ++i;
        else
          break;
      }
      out.push_back({Token::Number, s.substr(start, i - start), line,
                     uint32_t(start)});
      continue;
    }
    if (c == '"') {
      ++i;
      while (i < n && s[i] != '"' && s[i] != '\n')
        ++i;
      if (i >= n || s[i] != '"')
        throw SimError("PTX line " + std::to_string(line) +
                       ": unterminated string");
      ++i;
      out.push_back({Token::String, s.substr(start + 1, i - start - 2), line,
                     uint32_t(start)});
      continue;
    }
    out.push_back({Token::Punct, std::string(1, c), line, uint32_t(start)});
    ++i;
  }
  out.push_back({Token::End, "", line, uint32_t(n)});
  return out;
}

} // namespace tessel::gpusim
