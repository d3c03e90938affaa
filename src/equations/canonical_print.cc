// Expressions printed the same way in every process (equations_internal.h).
//
// GiNaC keeps the terms of a sum and the factors of a product in the order of
// their hashes, and a hash starts from the address of the class's type name,
// which moves with address-space randomization. So the same expression prints
// differently from run to run, and so does the sign of a sum inside a product:
// GiNaC's algebra (normal, collect) makes -(a-b)*c in one process and
// (b-a)*c in another. The contexts here print sums and products with their
// parts sorted by their own printed text (recursively, through GiNaC's print
// dispatch), and every sum that is a factor (or an integer power's base in a
// product) with the sign that makes its first term positive, the product's
// coefficient changing to match. Otherwise the notation is GiNaC's:
// a*b^(-1)+c in text, \frac{a}{b}+c in LaTeX.
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "equations_internal.h"

namespace paynter {
namespace {

using GiNaC::ex;

constexpr unsigned kAddPrecedence = 40;  // GiNaC's add::precedence()
constexpr unsigned kMulPrecedence = 50;  // mul::precedence()
constexpr unsigned kPowerPrecedence = 60;  // power::precedence()

// Texts already printed in one PrintCanonical call, by expression and level:
// a sum's sign is decided from its terms' texts, which are printed again
// within it, at every level of nesting.
using Memo = std::map<std::pair<ex, unsigned>, std::string, bool (*)(const std::pair<ex, unsigned>&,
                                                                     const std::pair<ex, unsigned>&)>;
bool MemoLess(const std::pair<ex, unsigned>& a, const std::pair<ex, unsigned>& b) {
  const int c = a.first.compare(b.first);
  return c != 0 ? c < 0 : a.second < b.second;
}

// GiNaC finds a context's parent by the name given here: its own, unqualified.
using GiNaC::print_dflt;
using GiNaC::print_latex;

class print_sorted : public print_dflt {
  GINAC_DECLARE_PRINT_CONTEXT(print_sorted, print_dflt)
 public:
  print_sorted(std::ostream& os, Memo* m) : print_dflt(os), memo(m) {}
  Memo* memo = nullptr;
};
class print_sorted_latex : public print_latex {
  GINAC_DECLARE_PRINT_CONTEXT(print_sorted_latex, print_latex)
 public:
  print_sorted_latex(std::ostream& os, Memo* m) : print_latex(os), memo(m) {}
  Memo* memo = nullptr;
};
// The default constructors GiNaC's registration asks for (unused here).
[[maybe_unused]] print_sorted::print_sorted() : print_dflt(std::cout) {}
[[maybe_unused]] print_sorted_latex::print_sorted_latex() : print_latex(std::cout) {}
GINAC_IMPLEMENT_PRINT_CONTEXT(print_sorted, print_dflt)
GINAC_IMPLEMENT_PRINT_CONTEXT(print_sorted_latex, print_latex)

template <class Context>
std::string Text(const ex& e, unsigned level, const Context& like) {
  const auto key = std::make_pair(e, level);
  if (auto it = like.memo->find(key); it != like.memo->end()) return it->second;
  std::ostringstream os;
  Context c(os, like.memo);
  e.print(c, level);
  return like.memo->emplace(key, os.str()).first->second;
}

bool Negative(const std::string& text) { return !text.empty() && text[0] == '-'; }

// A term's text without its sign (and the space LaTeX puts before a product).
std::string_view Unsigned(const std::string& text) {
  std::string_view v = text;
  if (Negative(text)) v.remove_prefix(1);
  while (!v.empty() && v[0] == ' ') v.remove_prefix(1);
  return v;
}

// Terms in order: by their text without the sign, then negative after positive.
bool TermBefore(const std::string& a, const std::string& b) {
  const std::string_view ua = Unsigned(a), ub = Unsigned(b);
  return ua != ub ? ua < ub : a < b;
}

template <class Context>
constexpr bool kLatex = std::is_same_v<Context, print_sorted_latex>;

// A sum's terms, each as it is printed within the sum (with its sign, or
// with the other sign when `flip`), in order: TermBefore, then a positive
// term first when there is one (theta2-theta1, not -theta1+theta2).
template <class Context>
std::vector<std::string> Terms(const ex& sum, bool flip, const Context& c) {
  std::vector<std::string> terms;
  for (size_t i = 0; i < sum.nops(); ++i) {
    const ex t = sum.op(i);
    const std::string text = Text(t, GiNaC::is_a<GiNaC::numeric>(t) ? 0 : kAddPrecedence, c);
    // The sign, then the term (LaTeX's space before a product dropped).
    terms.push_back((Negative(text) != flip ? "-" : "") + std::string(Unsigned(text)));
  }
  std::sort(terms.begin(), terms.end(), TermBefore);
  auto positive = std::find_if(terms.begin(), terms.end(), [](const std::string& s) { return !Negative(s); });
  if (positive != terms.end()) std::rotate(terms.begin(), positive, positive + 1);
  return terms;
}

// Whether a sum's canonical sign is the other one: its first term by
// TermBefore is negative. Flipped twice, a sum reads as it was.
template <class Context>
bool LeadsNegative(const ex& sum, const Context& c) {
  const std::vector<std::string> terms = Terms(sum, false, c);
  return !terms.empty() && Negative(*std::min_element(terms.begin(), terms.end(), TermBefore));
}

template <class Context>
std::string SumText(const ex& sum, bool flip, unsigned level, const Context& c) {
  const bool parens = kAddPrecedence <= level;
  std::string out = parens ? (kLatex<Context> ? "{(" : "(") : "";
  bool first = true;
  for (const std::string& t : Terms(sum, flip, c)) {
    if (!first && !Negative(t)) out += '+';
    out += t;
    first = false;
  }
  return parens ? out + (kLatex<Context> ? ")}" : ")") : out;
}

// base^exponent as GiNaC writes it (sqrt(x), x^(-1); in LaTeX \sqrt{x},
// \frac{1}{x}, {(a+b)}^{2}), the base a sum printed with the other sign when
// `flip`; an exponent of 1 prints the base alone.
template <class Context>
std::string PowerText(const ex& base, const ex& exponent, bool flip, unsigned level, const Context& c) {
  auto base_text = [&](unsigned at) {
    return flip ? SumText(base, true, at, c) : Text(base, at, c);
  };
  if (exponent.is_equal(1)) return base_text(level);
  if (exponent.is_equal(GiNaC::numeric(1, 2)) && !flip)
    return (kLatex<Context> ? "\\sqrt{" : "sqrt(") + Text(base, 0, c) + (kLatex<Context> ? "}" : ")");
  if (kLatex<Context> && GiNaC::is_exactly_a<GiNaC::numeric>(exponent) &&
      GiNaC::ex_to<GiNaC::numeric>(exponent).is_negative())
    return "\\frac{1}{" + PowerText(base, -exponent, flip, 0, c) + "}";
  const bool parens = kPowerPrecedence <= level;
  std::string out = parens ? (kLatex<Context> ? "{(" : "(") : "";
  out += base_text(kPowerPrecedence) + "^";
  out += kLatex<Context> ? "{" + Text(exponent, kPowerPrecedence, c) + "}" : Text(exponent, kPowerPrecedence, c);
  return parens ? out + (kLatex<Context> ? ")}" : ")") : out;
}

// A sum (alone or as an integer power's base) is printed with the canonical
// sign: flipped when LeadsNegative.
template <class Context>
bool Flips(const ex& base, const ex& exponent, const Context& c) {
  return GiNaC::is_exactly_a<GiNaC::add>(base) && exponent.info(GiNaC::info_flags::integer) && LeadsNegative(base, c);
}

template <class Context>
void PrintAdd(const GiNaC::add& sum, const Context& c, unsigned level) {
  c.s << SumText(sum, false, level, c);
}

// A power on its own: a sum raised to an even power may change its sign.
template <class Context>
void PrintPower(const GiNaC::power& p, const Context& c, unsigned level) {
  const ex base = p.op(0), exponent = p.op(1);
  c.s << PowerText(base, exponent, exponent.info(GiNaC::info_flags::even) && Flips(base, exponent, c), level, c);
}

// A product's numeric coefficient as GiNaC writes it before the factors: "-"
// for -1, nothing for 1, else the number (a rational one bare, another one in
// parentheses where a product needs them) and `mul_sym`.
template <class Context>
void PrintCoefficient(const GiNaC::numeric& coeff, const Context& c, const char* mul_sym) {
  if (coeff.csgn() == -1) c.s << '-';
  const GiNaC::numeric size = coeff.csgn() == -1 ? -coeff : coeff;
  if (size.is_equal(1)) return;
  size.print(c, size.is_rational() ? 0 : kMulPrecedence);
  c.s << mul_sym;
}

struct Factor {
  ex base, exponent;
  bool flip;
};

// A product's coefficient and its other factors, each sum among them (alone
// or as an integer power's base) with its canonical sign, the coefficient
// changing sign for each odd power flipped.
template <class Context>
GiNaC::numeric SplitProduct(const GiNaC::mul& product, const Context& c, std::vector<Factor>* factors) {
  GiNaC::numeric coeff = 1;
  for (size_t i = 0; i < product.nops(); ++i) {
    const ex f = product.op(i);
    if (GiNaC::is_exactly_a<GiNaC::numeric>(f)) {
      coeff *= GiNaC::ex_to<GiNaC::numeric>(f);
      continue;
    }
    const bool power = GiNaC::is_exactly_a<GiNaC::power>(f);
    const ex base = power ? f.op(0) : f, exponent = power ? f.op(1) : ex(1);
    const bool flip = Flips(base, exponent, c);
    if (flip && !exponent.info(GiNaC::info_flags::even)) coeff = -coeff;
    factors->push_back({base, exponent, flip});
  }
  return coeff;
}

template <class Context>
std::vector<std::string> SortedTexts(const std::vector<Factor>& factors, unsigned level, const Context& c) {
  std::vector<std::string> texts;
  for (const Factor& f : factors) texts.push_back(PowerText(f.base, f.exponent, f.flip, level, c));
  std::sort(texts.begin(), texts.end());
  return texts;
}

void PrintMulText(const GiNaC::mul& product, const print_sorted& c, unsigned level) {
  std::vector<Factor> factors;
  const GiNaC::numeric coeff = SplitProduct(product, c, &factors);
  const std::vector<std::string> texts = SortedTexts(factors, kMulPrecedence, c);
  const bool parens = kMulPrecedence <= level;
  if (parens) c.s << '(';
  PrintCoefficient(coeff, c, "*");
  for (size_t i = 0; i < texts.size(); ++i) c.s << (i ? "*" : "") << texts[i];
  if (parens) c.s << ')';
}

// A product of factors as LaTeX writes it: one factor as itself, several each
// after a space, none as 1.
std::string LatexProduct(const std::vector<Factor>& factors, const print_sorted_latex& c) {
  if (factors.empty()) return "1";
  if (factors.size() == 1) return PowerText(factors[0].base, factors[0].exponent, factors[0].flip, 0, c);
  std::string out;
  for (const std::string& t : SortedTexts(factors, kMulPrecedence, c)) out += " " + t;
  return out;
}

void PrintMulLatex(const GiNaC::mul& product, const print_sorted_latex& c, unsigned level) {
  std::vector<Factor> factors;
  const GiNaC::numeric coeff = SplitProduct(product, c, &factors);
  // Factors with a negative numeric exponent go below a fraction bar.
  std::vector<Factor> above, below;
  for (const Factor& f : factors) {
    if (GiNaC::is_exactly_a<GiNaC::numeric>(f.exponent) && GiNaC::ex_to<GiNaC::numeric>(f.exponent).is_negative())
      below.push_back({f.base, -f.exponent, f.flip});
    else
      above.push_back(f);
  }
  const bool parens = kMulPrecedence <= level;
  if (parens) c.s << "{(";
  PrintCoefficient(coeff, c, " ");
  if (!below.empty()) {
    c.s << "\\frac{" << LatexProduct(above, c) << "}{" << LatexProduct(below, c) << "}";
  } else {
    for (const std::string& t : SortedTexts(above, kMulPrecedence, c)) c.s << ' ' << t;
  }
  if (parens) c.s << ")}";
}

void RegisterOnce() {
  static const bool registered = [] {
    GiNaC::set_print_func<GiNaC::add, print_sorted>(PrintAdd<print_sorted>);
    GiNaC::set_print_func<GiNaC::mul, print_sorted>(PrintMulText);
    GiNaC::set_print_func<GiNaC::power, print_sorted>(PrintPower<print_sorted>);
    GiNaC::set_print_func<GiNaC::add, print_sorted_latex>(PrintAdd<print_sorted_latex>);
    GiNaC::set_print_func<GiNaC::mul, print_sorted_latex>(PrintMulLatex);
    GiNaC::set_print_func<GiNaC::power, print_sorted_latex>(PrintPower<print_sorted_latex>);
    return true;
  }();
  (void)registered;
}

template <class Context>
std::vector<std::string> Print(const ex& e, bool terms) {
  RegisterOnce();
  Memo memo(MemoLess);
  std::ostringstream os;
  Context c(os, &memo);
  if (terms && GiNaC::is_exactly_a<GiNaC::add>(e)) return Terms(e, false, c);
  e.print(c);
  return {os.str()};
}

}  // namespace

std::string PrintCanonical(const GiNaC::ex& e, bool latex) {
  return (latex ? Print<print_sorted_latex>(e, false) : Print<print_sorted>(e, false))[0];
}

std::vector<std::string> CanonicalTerms(const GiNaC::ex& e, bool latex) {
  return latex ? Print<print_sorted_latex>(e, true) : Print<print_sorted>(e, true);
}

}  // namespace paynter
