// Limits on names and expression texts, checked before any parser sees them
// (see kMaxNameLength in paynter/model.h).
#include <fmt/format.h>

#include <cctype>
#include <vector>

#include "model_internal.h"
#include "paynter/model.h"

namespace paynter {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The number of arguments of the functions paynter's expressions know; -1 for
// other names (the parser decides).
int Arity(const std::string& name) {
  if (name == "atan2" || name == "pow") return 2;
  for (const char* f : {"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log", "sqrt",
                        "abs", "step"})
    if (name == f) return 1;
  return -1;
}

std::string Shorten(const std::string& s) { return s.size() <= 60 ? s : s.substr(0, 40) + "..." + s.substr(s.size() - 10); }

}  // namespace

size_t NameEnd(const std::string& text, size_t start) {
  size_t j = start + 1;
  const size_t n = text.size();
  for (;;) {
    while (j < n && IsNameChar(text[j])) ++j;
    if (j + 1 < n && text[j] == '.' && IsNameStart(text[j + 1])) {
      j += 2;
      continue;
    }
    return j;
  }
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || s.size() > kMaxNameLength || !IsNameStart(s[0])) return false;
  return NameEnd(s, 0) == s.size();
}

void CheckNameLength(const std::string& name, const SourceLocation& where, const std::string& element,
                     const std::string& what) {
  if (name.size() > kMaxNameLength)
    ThrowAt(where, element, fmt::format("{} is too long ({} characters)", what, name.size()),
            fmt::format("a name of at most {} characters", kMaxNameLength), fmt::format("'{}'", Shorten(name)),
            "use a shorter name");
}

void CheckExpressionText(const std::string& text, const SourceLocation& where, const std::string& element,
                         const std::string& what) {
  if (text.size() > kMaxExpressionLength)
    ThrowAt(where, element, fmt::format("{} is too long ({} characters)", what, text.size()),
            fmt::format("an expression of at most {} characters", kMaxExpressionLength),
            fmt::format("'{}'", Shorten(text)), "split it into named parts under 'definitions:'");
  // One level per parenthesis, bracket or call, and one per sign in front of an
  // operand, counted until its parenthesis closes (or a comma ends the
  // argument): the documented limit. The reader (expression.cc) itself
  // recurses only into parentheses and calls.
  struct Level {
    std::string function;  // the function called, for a call's parenthesis
    size_t at = 0;         // where the level opened
    int signs = 0;         // signs in front of operands at this level
    int commas = 0;
    bool empty = true;     // nothing inside yet
  };
  std::vector<Level> levels(1);
  int depth = 0;
  bool operand_expected = true;
  auto deeper = [&](size_t pos) {
    if (++depth > kMaxNesting)
      ThrowAt(where, element, fmt::format("{} is nested too deeply", what),
              fmt::format("at most {} levels of parentheses, function calls and signs", kMaxNesting),
              fmt::format("more than {} levels at character {} of '{}'", kMaxNesting, pos + 1, Shorten(text)),
              "write it in steps, as named parts under 'definitions:'");
  };
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (IsNameStart(c)) {
      const size_t j = NameEnd(text, i);
      if (j - i > kMaxNameLength)
        ThrowAt(where, element, fmt::format("a name in {} is too long ({} characters)", what, j - i),
                fmt::format("a name of at most {} characters", kMaxNameLength),
                fmt::format("'{}'", Shorten(text.substr(i, j - i))), "use a shorter name");
      const std::string name = text.substr(i, j - i);
      levels.back().empty = false;
      size_t k = j;
      while (k < n && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      if (k < n && text[k] == '(') {  // a call
        deeper(k);
        levels.push_back(Level{name, i});
        operand_expected = true;
        i = k + 1;
        continue;
      }
      operand_expected = false;
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t j = i;
      while (j < n && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) ++j;
      if (j < n && (text[j] == 'e' || text[j] == 'E')) {  // an exponent, 1e-3
        size_t k = j + 1;
        if (k < n && (text[k] == '+' || text[k] == '-')) ++k;
        if (k < n && std::isdigit(static_cast<unsigned char>(text[k]))) {
          j = k;
          while (j < n && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
        }
      }
      levels.back().empty = false;
      operand_expected = false;
      i = j;
      continue;
    }
    switch (c) {
      case '(': case '[': case '{':
        levels.back().empty = false;
        deeper(i);
        levels.push_back(Level{"", i});
        operand_expected = true;
        break;
      case ')': case ']': case '}': {
        if (levels.size() == 1) break;  // unbalanced: the parser says so
        const Level l = levels.back();
        levels.pop_back();
        depth -= 1 + l.signs;
        const int arity = l.function.empty() ? -1 : Arity(l.function);
        const int args = l.empty ? 0 : l.commas + 1;
        if (!l.function.empty() && args == 0)
          ThrowAt(where, element, fmt::format("{}() in {} has no argument", l.function, what),
                  arity == 2 ? fmt::format("{}(x, y)", l.function) : fmt::format("{}(x)", l.function),
                  fmt::format("'{}'", Shorten(text)), "write the argument between the parentheses");
        if (arity >= 0 && args != arity)
          ThrowAt(where, element,
                  fmt::format("{}() in {} takes {} argument{}, not {}", l.function, what, arity, arity == 1 ? "" : "s",
                              args),
                  arity == 2 ? fmt::format("{}(x, y)", l.function) : fmt::format("{}(x)", l.function),
                  fmt::format("'{}'", Shorten(text)));
        operand_expected = false;
        break;
      }
      case ',':
        depth -= levels.back().signs;
        levels.back().signs = 0;
        ++levels.back().commas;
        operand_expected = true;
        break;
      case '+': case '-':
        if (operand_expected) {  // a sign
          deeper(i);
          ++levels.back().signs;
        }
        levels.back().empty = false;
        operand_expected = true;
        break;
      default:  // * / ^ and anything else (the parser judges)
        levels.back().empty = false;
        operand_expected = true;
        break;
    }
    ++i;
  }
}

}  // namespace paynter
