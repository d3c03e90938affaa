// The reader of expression texts: numbers, names, + - * / ^, parentheses and
// calls of paynter's functions, with the precedence of mathematics (see
// ParseExpressionText in paynter/model.h).
#include <cln/float.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "model_internal.h"
#include "paynter/conditionals.h"
#include "paynter/model.h"

namespace paynter {
namespace {

// A double below the normal range (a subnormal, as a velocity settling to
// rest can leave in a state) becomes a GiNaC number wherever paynter
// substitutes values into expressions (linearization, initial values). CLN
// then signals an underflow as an exception by default; paynter's numbers
// underflow to zero instead, as the doubles of the generated code do. Set
// when the library is loaded, before any expression is built.
[[maybe_unused]] const bool kUnderflowToZero = (cln::cl_inhibit_floating_point_underflow = true);

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
    } else if (c == '+' || c == '-' || c == '*' || c == '/' || c == '^' || c == '(' || c == ')' || c == ',' ||
               c == '[' || c == ']') {
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
  return IsSignalFunction(name);
}

// Recursive descent over the tokens. Only parentheses and calls recurse (sums,
// products, signs and powers are loops), and their depth is bounded, so no text
// can exhaust the stack.
class Reader {
 public:
  Reader(const std::string& text, const ExpressionNames& names, const ConstantValue* constant)
      : text_(text), tokens_(Tokens(text)), names_(names), constant_(constant) {}

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
  // precision, and so is a power of numbers one of which is a floating-point
  // number when its magnitude is beyond 2^±10^6; an integer exponent beyond
  // kMaxExactExponent of any other base is a floating-point number (the code
  // computes pow(x, n) either way).
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
        // 0^0 and 0 to a complex power: the algebra library throws from inside
        // the power it is forming (and leaks it).
        if (b.is_zero() && !(x.is_real() && x.is_positive()))
          NoValue(fmt::format("zero to the power {} ('^' at character {}) has no value", ExpressionText(x), at + 1));
        const auto in_double = [&] {
          const double v = std::pow(b.to_double(), x.to_double());
          if (!std::isfinite(v) || v == 0)
            NoValue(fmt::format("the power at character {} is beyond the range of numbers (1e-308 to 1e308 in "
                                "magnitude)",
                                at + 1));
          return GiNaC::numeric(v);
        };
        if (b.is_rational() && x.is_rational() && !b.is_zero()) {
          const double bits = GiNaC::abs(x).to_double() * std::max(GiNaC::numer(b).int_length(), GiNaC::denom(b).int_length());
          if (bits > kMaxExactBits) return in_double();
        } else if (b.is_real() && x.is_real() && !b.is_zero()) {
          // A floating-point number on either side: the algebra library
          // computes the power in its floating point, whose range is far
          // wider than a double's (1.5^2000 / 1.5^1999 is 1.5), but one
          // beyond even that range throws from inside it (leaking the power
          // it was forming). A power beyond 2^(+-10^6) is taken in double
          // precision here, where it has no value.
          const double log2_magnitude = x.to_double() * std::log2(std::fabs(b.to_double()));
          if (!(std::fabs(log2_magnitude) <= 1e6)) return in_double();
        }
      } else if (x.is_integer() && GiNaC::abs(x) > kMaxExactExponent) {
        exponent = GiNaC::numeric(x.to_double());
      }
    }
    return GiNaC::pow(base, exponent);
  }

  // A number token's value. The algebra library reads a number with an
  // exponent by forming the power of ten exactly, which takes time growing
  // with the exponent (5632234631e308593196: over 10 s): an exponent beyond
  // kMaxExactDecimalExponent is read in double precision instead (a double holds
  // nothing beyond 1e308 and 5e-324 anyway), and a number beyond 1e308 in
  // magnitude has no value.
  GiNaC::numeric Number(const Token& t) {
    constexpr long kMaxExactDecimalExponent = 1024;
    const size_t e = t.text.find_first_of("eE");
    if (e != std::string::npos) {
      const long exponent = std::strtol(t.text.c_str() + e + 1, nullptr, 10);  // saturates
      if (exponent > kMaxExactDecimalExponent || exponent < -kMaxExactDecimalExponent) {
        const double v = std::strtod(t.text.c_str(), nullptr);
        if (!std::isfinite(v))
          NoValue(fmt::format("the number {} at character {} is beyond the range of numbers (1e-308 to 1e308 in "
                              "magnitude)",
                              Quote(t.text), t.at + 1));
        return GiNaC::numeric(v);
      }
    }
    return GiNaC::numeric(t.text.c_str());
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
      return WithUnit(Number(t));
    }
    if (t.kind == Token::kName) {
      ++pos_;
      if (At('(')) {
        if (!IsFunction(t.text))
          Fail(fmt::format("'{}' at character {} is not a function (the functions are sin cos tan asin acos atan "
                           "atan2 sinh cosh tanh exp log sqrt abs pow step if piecewise step_at ramp pulse square "
                           "table)",
                           t.text, t.at + 1));
        const size_t open = Peek().at;
        if (t.text == "if" || t.text == "piecewise") return Conditional(t, open);
        if (IsSignalFunction(t.text)) return Signal(t, open);
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
      return WithUnit(v);
    }
    if (At('['))
      Fail(fmt::format("'[' at character {} stands where a value was expected: a unit in brackets follows a number "
                       "or a ')' (9.81 [m/s^2]), and a list is an argument of table()",
                       t.at + 1));
    Unexpected("a number, a name or '('");
  }

  // `[unit]` after a number or a parenthesis: the value times names("[unit]").
  GiNaC::ex WithUnit(const GiNaC::ex& v) {
    if (!At('[')) return v;
    const size_t open = Peek().at;
    size_t k = pos_ + 1;
    while (tokens_[k].kind != Token::kEnd && !(tokens_[k].kind == Token::kSymbol && tokens_[k].text[0] == ']')) {
      if (tokens_[k].kind == Token::kSymbol && tokens_[k].text[0] == '[')
        Fail(fmt::format("a '[' inside the unit that opens at character {}", open + 1));
      ++k;
    }
    if (tokens_[k].kind == Token::kEnd) Fail(fmt::format("the unit in '[' at character {} is not closed by ']'", open + 1));
    std::string unit = text_.substr(open + 1, tokens_[k].at - open - 1);
    while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
    while (!unit.empty() && unit.back() == ' ') unit.pop_back();
    if (unit.empty()) Fail(fmt::format("an empty unit '[]' at character {}", open + 1));
    pos_ = k + 1;
    return v * names_("[" + unit + "]");
  }

  // ---- signals (docs/model-format.md, "Signals") ------------------------------

  // A constant argument's value: through constant_, or of a number. nullopt
  // when it is not known (no constant_ and not a number); an error when
  // constant_ says it is not a constant.
  std::optional<double> Value(const GiNaC::ex& e, const std::string& fn, const std::string& what) const {
    if (constant_) {
      const auto v = (*constant_)(e);
      if (!v)
        throw ArgumentError(fmt::format("{} of {}() is not a constant", what, fn),
                            "numbers and parameters (a signal's times and sizes are fixed)",
                            fmt::format("'{}'", ExpressionText(e)),
                            "a signal that varies otherwise is written with if() or piecewise()");
      return v;
    }
    const GiNaC::ex x = GiNaC::evalf(e);
    if (GiNaC::is_a<GiNaC::numeric>(x) && GiNaC::ex_to<GiNaC::numeric>(x).is_real())
      return GiNaC::ex_to<GiNaC::numeric>(x).to_double();
    return std::nullopt;
  }

  // '[' a, b, ... ']'
  std::vector<GiNaC::ex> List(const std::string& fn) {
    if (!At('['))
      Unexpected(fmt::format("a list '[x0, x1, ...]' as an argument of {}()", fn));
    const size_t open = Peek().at;
    Enter(open);
    ++pos_;
    std::vector<GiNaC::ex> out;
    if (!At(']')) {
      out.push_back(Sum());
      while (At(',')) {
        ++pos_;
        out.push_back(Sum());
      }
    }
    if (!At(']')) Unexpected(fmt::format("',' or ']' closing the list at character {}", open + 1));
    ++pos_;
    --depth_;
    return out;
  }

  // step_at(t0), ramp(t0), pulse(t0, period, width), square(t0, period),
  // table([x...], [y...]), table(u, [x...], [y...]): if()s of t, so that
  // every corner is an event.
  GiNaC::ex Signal(const Token& t, size_t open) {
    const std::string& fn = t.text;
    Enter(open);
    ++pos_;
    std::vector<GiNaC::ex> args;
    std::vector<std::vector<GiNaC::ex>> lists;
    if (fn == "table") {
      if (!At('[')) {
        args.push_back(Sum());
        if (!At(',')) Unexpected(fmt::format("',' and the list of table()'s points at character {}", open + 1));
        ++pos_;
      }
      lists.push_back(List(fn));
      if (!At(',')) Unexpected(fmt::format("',' and the list of table()'s values at character {}", open + 1));
      ++pos_;
      lists.push_back(List(fn));
    } else if (!At(')')) {
      args.push_back(Sum());
      while (At(',')) {
        ++pos_;
        args.push_back(Sum());
      }
    }
    if (!At(')')) Unexpected(fmt::format("')' closing the call at character {}", open + 1));
    ++pos_;
    --depth_;
    const GiNaC::ex time = names_("t");
    const std::map<std::string, std::pair<size_t, const char*>> usage = {
        {"step_at", {1, "step_at(t0): 0 before t0, 1 from t0 on"}},
        {"ramp", {1, "ramp(t0): 0 before t0, t - t0 from t0 on"}},
        {"pulse", {3, "pulse(t0, period, width): 1 during the first 'width' of each period from t0 on, else 0"}},
        {"square", {2, "square(t0, period): +1 in the first half of each period from t0 on, -1 in the second, 0 "
                       "before t0"}},
    };
    if (fn != "table") {
      const auto& [count, form] = usage.at(fn);
      if (args.size() != count)
        throw ArgumentError(fmt::format("{}() takes {} argument{}, not {}", fn, count, count == 1 ? "" : "s",
                                        args.size()),
                            form, fmt::format("{} argument{}", args.size(), args.size() == 1 ? "" : "s"),
                            "docs/model-format.md (\"Signals\") describes the signal functions");
      Value(args[0], fn, "the start time t0");
    }
    const GiNaC::ex since = time - (fn == "table" ? GiNaC::ex(0) : args[0]);
    const GiNaC::ex ge = 0, gt = 1;  // pn_if's `strict`: >= and >
    if (fn == "step_at") return pn_if(since, ge, 1, 0);
    if (fn == "ramp") return pn_if(since, ge, since, 0);
    if (fn == "pulse" || fn == "square") {
      const auto period = Value(args[1], fn, "the period");
      if (period && !(*period > 0))
        throw ArgumentError(fmt::format("the period of {}() is not positive", fn), "a period > 0",
                            fmt::format("{} ('{}')", *period, ExpressionText(args[1])),
                            "the period is the time from one rising edge to the next");
      const GiNaC::ex phase = 2 * GiNaC::Pi * since / args[1];
      // Both inner conditions hold on their boundary (>=), so that a period
      // starts high at its rising edge: at t0 itself as just after it.
      if (fn == "square") return pn_if(since, ge, pn_if(GiNaC::sin(phase), ge, 1, -1), 0);
      const auto width = Value(args[2], fn, "the width");
      if (period && width && !(*width > 0 && *width < *period))
        throw ArgumentError("the width of pulse() is not between 0 and the period", "0 < width < period",
                            fmt::format("width {}, period {}", *width, *period),
                            "the width is how long each pulse lasts; a width of a whole period is the constant 1");
      // High while the phase within the period, 2 pi x, lies in (0, 2 pi d):
      // cos(2 pi x - pi d) > cos(pi d), d = width/period (the product of two
      // sines that change sign at the rising and the falling edges).
      const GiNaC::ex half = GiNaC::Pi * args[2] / args[1];
      return pn_if(since, ge, pn_if(GiNaC::cos(phase - half) - GiNaC::cos(half), ge, 1, 0), 0);
    }
    // table: linear between points, held outside; equal x give a jump.
    const std::vector<GiNaC::ex>& xs = lists[0];
    const std::vector<GiNaC::ex>& ys = lists[1];
    const GiNaC::ex input = args.empty() ? time : args[0];
    if (xs.size() != ys.size())
      throw ArgumentError("the lists of table() have unequal lengths", "as many values as points",
                          fmt::format("{} point{}, {} value{}", xs.size(), xs.size() == 1 ? "" : "s", ys.size(),
                                      ys.size() == 1 ? "" : "s"),
                          "table([x0, x1, ...], [y0, y1, ...]) gives y_k at x_k");
    if (xs.empty())
      throw ArgumentError("table() has no points", "at least one point", "empty lists",
                          "table([0, 1], [0, 5]) rises from 0 to 5 between t = 0 and t = 1");
    std::optional<double> before;
    for (size_t k = 0; k < xs.size(); ++k) {
      const auto x = Value(xs[k], fn, fmt::format("point {}", k + 1));
      if (constant_) Value(ys[k], fn, fmt::format("value {}", k + 1));
      if (x && before && *x < *before)
        throw ArgumentError("the points of table() are not in increasing order", "x0 <= x1 <= ... (equal points: a jump)",
                            fmt::format("point {} is {}, after {}", k + 1, *x, *before),
                            "sort the points with their values");
      if (x) before = x;
    }
    GiNaC::ex v = ys.back();
    for (size_t k = xs.size() - 1; k-- > 0;) {
      if ((xs[k + 1] - xs[k]).is_zero()) continue;  // a jump: no segment
      const GiNaC::ex segment = ys[k] + (ys[k + 1] - ys[k]) * (input - xs[k]) / (xs[k + 1] - xs[k]);
      v = pn_if(xs[k + 1] - input, gt, segment, v);
    }
    return pn_if(xs[0] - input, gt, ys[0], v);
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

  const std::string& text_;
  std::vector<Token> tokens_;
  const ExpressionNames& names_;
  const ConstantValue* constant_ = nullptr;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

GiNaC::ex ParseExpressionText(const std::string& text, const ExpressionNames& names, const ConstantValue* constant) {
  return Reader(text, names, constant).Read();
}

GiNaC::ex ParseConditionText(const std::string& text, const ExpressionNames& names, bool* strict,
                             const ConstantValue* constant) {
  return Reader(text, names, constant).ReadCondition(strict);
}

size_t UnitBracketEnd(const std::string& text, size_t open) {
  size_t k = open;
  while (k > 0 && text[k - 1] == ' ') --k;
  if (k == 0) return std::string::npos;
  const char c = text[k - 1];
  if (!(c == ')' || c == '.' || std::isdigit(static_cast<unsigned char>(c)))) return std::string::npos;
  const size_t close = text.find(']', open);
  return close == std::string::npos ? text.size() : close;
}

bool IsSignalFunction(const std::string& name) {
  return name == "step_at" || name == "ramp" || name == "pulse" || name == "square" || name == "table";
}

bool IsNumberText(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  std::strtod(begin, &end);
  if (end == begin) return false;
  while (*end == ' ' || *end == '\t') ++end;
  return *end == '\0';
}

}  // namespace paynter
