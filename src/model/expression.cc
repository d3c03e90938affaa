// The reader of expression texts: numbers, names, + - * / ^, parentheses and
// calls of paynter's functions, with the precedence of mathematics (see
// ParseExpressionText in paynter/model.h).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "model_internal.h"
#include "paynter/conditionals.h"
#include "paynter/model.h"

namespace paynter {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

struct Token {
  enum Kind { kEnd, kNumber, kName, kSymbol } kind = kEnd;
  std::string text;  // the number or name; the character for a symbol
  size_t at = 0;     // where it starts in the text
};

[[noreturn]] void Fail(const std::string& why) { throw std::invalid_argument(why); }
// Read, but without a value (see ParseExpressionText).
[[noreturn]] void NoValue(const std::string& why) { throw std::domain_error(why); }

std::string Quote(const std::string& s) { return s.size() <= 40 ? "'" + s + "'" : "'" + s.substr(0, 37) + "...'"; }

std::vector<Token> Tokens(const std::string& text) {
  std::vector<Token> out;
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    Token t;
    t.at = i;
    if (IsNameStart(c)) {
      const size_t j = NameEnd(text, i);
      t.kind = Token::kName;
      t.text = text.substr(i, j - i);
      i = j;
    } else if (IsDigit(c) || c == '.') {
      // digits, at most one point, at least one digit; then an exponent
      // e/E, an optional sign and digits (1e-3, 2.5E+2).
      size_t j = i, digits = 0, points = 0;
      while (j < n && (IsDigit(text[j]) || text[j] == '.')) {
        (text[j] == '.' ? points : digits) += 1;
        ++j;
      }
      bool ok = digits > 0 && points <= 1;
      if (j < n && (text[j] == 'e' || text[j] == 'E')) {
        size_t k = j + 1;
        if (k < n && (text[k] == '+' || text[k] == '-')) ++k;
        if (k < n && IsDigit(text[k])) {
          while (k < n && IsDigit(text[k])) ++k;
          j = k;
        } else {
          ok = false;  // 4e, 1e+
          j = k;
        }
      }
      // A letter, digit or point right after a number (2x, 1e3.5) is no operator.
      while (j < n && (IsNameChar(text[j]) || text[j] == '.')) {
        ok = false;
        ++j;
      }
      std::string word = text.substr(i, j - i);
      for (char& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (word == ".nan" || word == ".inf")
        NoValue(fmt::format("{} at character {} is YAML's {}, not a number paynter accepts: values are finite",
                            Quote(text.substr(i, j - i)), i + 1, word == ".nan" ? "not-a-number" : "infinity"));
      if (!ok)
        Fail(fmt::format("{} at character {} is not a number (numbers are written 12, 0.5, 1e-3; a product 2*x)",
                         Quote(text.substr(i, j - i)), i + 1));
      t.kind = Token::kNumber;
      t.text = text.substr(i, j - i);
      i = j;
    } else if (c == '+' || c == '-' || c == '*' || c == '/' || c == '^' || c == '(' || c == ')' || c == ',') {
      t.kind = Token::kSymbol;
      t.text = std::string(1, c);
      ++i;
    } else if (c == '<' || c == '>' || c == '=' || c == '!') {
      // Comparisons, for the conditions of if() and piecewise(): < > <= >=.
      const bool eq = i + 1 < n && text[i + 1] == '=';
      if (c == '=' || c == '!')
        Fail(fmt::format("'{}' at character {} is not a comparison paynter accepts: a condition is written with "
                         "< > <= or >= (an event happens where the two sides cross; equality has no crossing)",
                         text.substr(i, eq ? 2 : 1), i + 1));
      t.kind = Token::kSymbol;
      t.text = eq ? std::string{c, '='} : std::string(1, c);
      i += eq ? 2 : 1;
    } else if (c >= 32 && c <= 126) {
      Fail(fmt::format("unexpected character '{}' at character {}", c, i + 1));
    } else {
      Fail(fmt::format("a byte that is not a printable character at character {}", i + 1));
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.at = n;
  out.push_back(end);
  return out;
}

// The functions of paynter's expressions.
bool CallFunction(const std::string& name, const std::vector<GiNaC::ex>& a, GiNaC::ex* out) {
  auto one = [&](GiNaC::ex (*f)(const GiNaC::ex&)) {
    if (a.size() != 1) Fail(fmt::format("{}() takes 1 argument, not {}", name, a.size()));
    *out = f(a[0]);
    return true;
  };
  if (name == "atan2" || name == "pow") {
    if (a.size() != 2) Fail(fmt::format("{}() takes 2 arguments, not {}", name, a.size()));
    *out = name == "pow" ? GiNaC::ex(GiNaC::pow(a[0], a[1])) : GiNaC::ex(GiNaC::atan2(a[0], a[1]));
    return true;
  }
  // GiNaC's functions are templates over their argument type: wrap them.
#define PAYNTER_FUNCTION(f) \
  if (name == #f) return one([](const GiNaC::ex& x) -> GiNaC::ex { return GiNaC::f(x); });
  PAYNTER_FUNCTION(sin)
  PAYNTER_FUNCTION(cos)
  PAYNTER_FUNCTION(tan)
  PAYNTER_FUNCTION(asin)
  PAYNTER_FUNCTION(acos)
  PAYNTER_FUNCTION(atan)
  PAYNTER_FUNCTION(sinh)
  PAYNTER_FUNCTION(cosh)
  PAYNTER_FUNCTION(tanh)
  PAYNTER_FUNCTION(exp)
  PAYNTER_FUNCTION(log)
  PAYNTER_FUNCTION(sqrt)
  PAYNTER_FUNCTION(abs)
  PAYNTER_FUNCTION(step)
#undef PAYNTER_FUNCTION
  return false;
}

bool IsFunction(const std::string& name) {
  for (const char* f : {"sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "log",
                        "sqrt", "abs", "pow", "step", "if", "piecewise"})
    if (name == f) return true;
  return false;
}

// Recursive descent over the tokens. Only parentheses and calls recurse (sums,
// products, signs and powers are loops), and their depth is bounded, so no text
// can exhaust the stack.
class Reader {
 public:
  Reader(const std::string& text, const ExpressionNames& names) : tokens_(Tokens(text)), names_(names) {}

  GiNaC::ex Read() {
    if (Peek().kind == Token::kEnd) Fail("the expression is empty");
    GiNaC::ex v = Sum();
    if (At('<') || At('>'))
      Fail(fmt::format("a comparison at character {} outside a condition: comparisons belong in the first "
                       "argument of if(), the conditions of piecewise() and an event's 'when:'",
                       Peek().at + 1));
    if (Peek().kind != Token::kEnd) Unexpected("an operator");
    return v;
  }

  GiNaC::ex ReadCondition(bool* strict) {
    if (Peek().kind == Token::kEnd) Fail("the condition is empty");
    GiNaC::ex s;
    GiNaC::ex g = Condition(&s);
    if (Peek().kind != Token::kEnd) Unexpected("the end of the condition");
    *strict = !s.is_zero();
    return g;
  }

 private:
  const Token& Peek() const { return tokens_[pos_]; }
  bool At(char c) const { return Peek().kind == Token::kSymbol && Peek().text[0] == c; }

  [[noreturn]] void Unexpected(const std::string& expected) const {
    const Token& t = Peek();
    if (t.kind == Token::kEnd) Fail(fmt::format("the expression ends where {} was expected", expected));
    Fail(fmt::format("{} was expected at character {}, not {}", expected, t.at + 1, Quote(t.text)));
  }

  // sum := term (('+' | '-') term)*
  GiNaC::ex Sum() {
    GiNaC::ex v = Term();
    while (At('+') || At('-')) {
      const bool minus = At('-');
      ++pos_;
      const GiNaC::ex r = Term();
      v = minus ? v - r : v + r;
    }
    return v;
  }

  // term := factor (('*' | '/') factor)*
  GiNaC::ex Term() {
    GiNaC::ex v = Factor();
    while (At('*') || At('/')) {
      const bool divide = At('/');
      const size_t at = Peek().at;
      ++pos_;
      const GiNaC::ex r = Factor();
      if (divide && r.is_zero()) NoValue(fmt::format("division by zero at character {}", at + 1));
      v = divide ? v / r : v * r;
    }
    return v;
  }

  // base^exponent, kept to work bounded by the size of the text: exact
  // arithmetic would hold every digit of 2^1000000000000, and the algebra
  // library takes numeric factors out of a power with an integer exponent
  // ((1 + t/10)^n holds (1/10)^n exactly). So a power of two numbers whose
  // exact value would have more than kMaxExactBits bits is taken in double
  // precision, and an integer exponent beyond kMaxExactExponent of any other
  // base is a floating-point number (the code computes pow(x, n) either way).
  GiNaC::ex Power(const GiNaC::ex& base, GiNaC::ex exponent, size_t at) {
    constexpr double kMaxExactBits = 4096;
    constexpr long kMaxExactExponent = 1024;
    const bool numeric_base = GiNaC::is_a<GiNaC::numeric>(base);
    if (GiNaC::is_a<GiNaC::numeric>(exponent)) {
      const GiNaC::numeric x = GiNaC::ex_to<GiNaC::numeric>(exponent);
      if (numeric_base) {
        const GiNaC::numeric b = GiNaC::ex_to<GiNaC::numeric>(base);
        if (b.is_zero() && x.is_real() && x.is_negative())
          NoValue(fmt::format("zero to a negative power ('^' at character {}) is a division by zero", at + 1));
        if (b.is_rational() && x.is_rational() && !b.is_zero()) {
          const double bits = GiNaC::abs(x).to_double() * std::max(GiNaC::numer(b).int_length(), GiNaC::denom(b).int_length());
          if (bits > kMaxExactBits) {
            const double v = std::pow(b.to_double(), x.to_double());
            if (!std::isfinite(v) || v == 0)
              NoValue(fmt::format("the power at character {} is beyond the range of numbers (1e-308 to 1e308 in "
                                  "magnitude)",
                                  at + 1));
            return GiNaC::numeric(v);
          }
        }
      } else if (x.is_integer() && GiNaC::abs(x) > kMaxExactExponent) {
        exponent = GiNaC::numeric(x.to_double());
      }
    }
    return GiNaC::pow(base, exponent);
  }

  // Signs in front of an operand: true when they negate it.
  bool Signs() {
    bool negative = false;
    while (At('+') || At('-')) {
      negative ^= At('-');
      ++pos_;
    }
    return negative;
  }

  // factor := sign* power, where power := primary ('^' sign* primary)*, the
  // powers taken from the right and each sign applying to the power to its
  // right: -2^2 = -(2^2), 2^-1 = 2^(-1), 2^3^2 = 2^(3^2), 2^-x^2 = 2^(-(x^2)).
  GiNaC::ex Factor() {
    const bool negative = Signs();
    std::vector<GiNaC::ex> operands = {Primary()};
    std::vector<bool> negated = {false};
    std::vector<size_t> carets = {0};  // where each '^' is
    while (At('^')) {
      carets.push_back(Peek().at);
      ++pos_;
      negated.push_back(Signs());
      operands.push_back(Primary());
    }
    GiNaC::ex v = operands.back();
    for (size_t k = operands.size() - 1; k > 0; --k) {
      if (negated[k]) v = -v;
      v = Power(operands[k - 1], v, carets[k]);
    }
    return negative ? -v : v;
  }

  // primary := number | name | name '(' sum (',' sum)* ')' | '(' sum ')'
  GiNaC::ex Primary() {
    const Token t = Peek();
    if (t.kind == Token::kNumber) {
      ++pos_;
      return GiNaC::numeric(t.text.c_str());
    }
    if (t.kind == Token::kName) {
      ++pos_;
      if (At('(')) {
        if (!IsFunction(t.text))
          Fail(fmt::format("'{}' at character {} is not a function (the functions are sin cos tan asin acos atan "
                           "atan2 sinh cosh tanh exp log sqrt abs pow step if piecewise)",
                           t.text, t.at + 1));
        const size_t open = Peek().at;
        if (t.text == "if" || t.text == "piecewise") return Conditional(t, open);
        Enter(open);
        ++pos_;
        std::vector<GiNaC::ex> args;
        if (!At(')')) {
          args.push_back(Sum());
          while (At(',')) {
            ++pos_;
            args.push_back(Sum());
          }
        }
        if (!At(')')) Unexpected(fmt::format("',' or ')' closing the call at character {}", open + 1));
        ++pos_;
        --depth_;
        if (args.empty()) Fail(fmt::format("{}() at character {} has no argument", t.text, t.at + 1));
        if (t.text == "pow" && args.size() == 2) return Power(args[0], args[1], t.at);
        GiNaC::ex v;
        CallFunction(t.text, args, &v);
        return v;
      }
      if (IsFunction(t.text)) Fail(fmt::format("the function '{}' at character {} needs its argument: {}(x)", t.text,
                                               t.at + 1, t.text));
      return names_(t.text);
    }
    if (At('(')) {
      const size_t open = t.at;
      Enter(open);
      ++pos_;
      GiNaC::ex v = Sum();
      if (!At(')')) Unexpected(fmt::format("')' closing the parenthesis at character {}", open + 1));
      ++pos_;
      --depth_;
      return v;
    }
    Unexpected("a number, a name or '('");
  }

  // if(cond, a, b) and piecewise(cond1, v1, cond2, v2, ..., otherwise): the
  // conditions at odd places, values elsewhere; piecewise takes the value of
  // the first condition that holds. Read as nested pn_if (conditionals.h).
  GiNaC::ex Conditional(const Token& t, size_t open) {
    Enter(open);
    ++pos_;
    std::vector<GiNaC::ex> conds, stricts, values;
    for (;;) {
      const bool last = t.text == "if" ? conds.size() == 1 && values.size() == 1 : false;
      if (last || (t.text == "piecewise" && !conds.empty() && values.size() == conds.size() && !LooksLikeCondition())) {
        values.push_back(Sum());
        break;
      }
      if (values.size() < conds.size()) {
        values.push_back(Sum());
      } else {
        GiNaC::ex strict;
        conds.push_back(Condition(&strict));
        stricts.push_back(strict);
      }
      if (!At(',')) Unexpected(fmt::format("',' and the next argument of {}() at character {}", t.text, open + 1));
      ++pos_;
    }
    if (!At(')')) {
      if (At(','))
        Fail(fmt::format("{}() at character {} has too many arguments: {}", t.text, t.at + 1,
                         t.text == "if" ? "if(condition, value if it holds, value otherwise)"
                                        : "piecewise(condition1, value1, condition2, value2, ..., otherwise)"));
      Unexpected(fmt::format("')' closing the call at character {}", open + 1));
    }
    ++pos_;
    --depth_;
    GiNaC::ex v = values.back();
    for (size_t k = conds.size(); k-- > 0;) v = pn_if(conds[k], stricts[k], values[k], v);
    return v;
  }

  // Whether the tokens up to the next ',' or ')' at this level hold a comparison.
  bool LooksLikeCondition() const {
    int level = 0;
    for (size_t k = pos_; k < tokens_.size(); ++k) {
      const Token& tk = tokens_[k];
      if (tk.kind == Token::kEnd) return false;
      if (tk.kind != Token::kSymbol) continue;
      const char c = tk.text[0];
      if (c == '(') ++level;
      else if (c == ')' && level-- == 0) return false;
      else if (c == ',' && level == 0) return false;
      else if ((c == '<' || c == '>') && level == 0) return true;
    }
    return false;
  }

  // cond := sum ('<' | '>' | '<=' | '>=') sum; the indicator g, which is
  // positive (or, with *strict = 0, non-negative) when the condition holds.
  GiNaC::ex Condition(GiNaC::ex* strict) {
    const GiNaC::ex left = Sum();
    const Token op = Peek();
    if (!(op.kind == Token::kSymbol && (op.text[0] == '<' || op.text[0] == '>')))
      Unexpected("a comparison (< > <= >=) in the condition");
    ++pos_;
    const GiNaC::ex right = Sum();
    if (At('<') || At('>'))
      Fail(fmt::format("a chained comparison at character {}: write one comparison per condition, and nest "
                       "if() for more",
                       Peek().at + 1));
    *strict = op.text.size() == 1 ? 1 : 0;
    return op.text[0] == '>' ? left - right : right - left;
  }

  void Enter(size_t at) {
    if (++depth_ > kMaxNesting)
      Fail(fmt::format("more than {} nested parentheses at character {}", kMaxNesting, at + 1));
  }

  std::vector<Token> tokens_;
  const ExpressionNames& names_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

GiNaC::ex ParseExpressionText(const std::string& text, const ExpressionNames& names) {
  return Reader(text, names).Read();
}

GiNaC::ex ParseConditionText(const std::string& text, const ExpressionNames& names, bool* strict) {
  return Reader(text, names).ReadCondition(strict);
}

}  // namespace paynter
