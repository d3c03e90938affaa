// Expressions rewritten as a textbook prints them (equations_internal.h).
//
// The builder's expressions are exact but raw: the chain rule leaves
// L^2*M*cos(q)^2/4 + M*(L*sin(q)/2)^2 where a reader writes M*L^2/4. The
// rewriting is algebra a reader does by hand, in this order:
//   1. expand into a sum of monomials;
//   2. Pythagoras: sin(x)^2 + cos(x)^2 = 1, in whichever direction makes
//      the sum shorter;
//   3. angle sums: cos(a)cos(b) + sin(a)sin(b) = cos(a-b) and its three
//      siblings, between two terms that differ in nothing else;
//   4. a body's own terms gathered: the terms with the same inertia
//      parameters (a mass, a moment of inertia: the symbols of the I
//      elements' laws) are one product, those parameters times the sum of
//      the rest; within it, like terms (the same part in the states, moduli
//      and time) are one term, with their coefficients' common factors
//      collected.
// Every step is an identity, so the result is the same function; it is used
// for printing only (the compiled programs keep the builder's expressions).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "equations_internal.h"

namespace paynter {
namespace {

using GiNaC::ex;

size_t Cost(const ex& e) { return PrintCanonical(e, false).size(); }

std::vector<ex> Terms(const ex& e) {
  std::vector<ex> out;
  if (GiNaC::is_exactly_a<GiNaC::add>(e))
    for (size_t i = 0; i < e.nops(); ++i) out.push_back(e.op(i));
  else if (!e.is_zero())
    out.push_back(e);
  return out;
}

std::vector<ex> Factors(const ex& term) {
  std::vector<ex> out;
  if (GiNaC::is_exactly_a<GiNaC::mul>(term))
    for (size_t i = 0; i < term.nops(); ++i) out.push_back(term.op(i));
  else
    out.push_back(term);
  return out;
}

ex Sum(const std::vector<ex>& terms) {
  ex s = 0;
  for (const ex& t : terms) s += t;
  return s;
}

// Step 2: the shortest of e and e with sin^2 -> 1 - cos^2 or cos^2 -> 1 - sin^2.
ex Pythagoras(const ex& e) {
  const ex w = GiNaC::wild();
  ex best = e;
  for (const ex& rule : {ex(GiNaC::pow(GiNaC::sin(w), 2) == 1 - GiNaC::pow(GiNaC::cos(w), 2)),
                         ex(GiNaC::pow(GiNaC::cos(w), 2) == 1 - GiNaC::pow(GiNaC::sin(w), 2))}) {
    const ex candidate = e.subs(rule, GiNaC::subs_options::algebraic).expand();
    if (Cost(candidate) < Cost(best)) best = candidate;
  }
  return best;
}

bool IsTrig(const ex& f, bool* is_sin) {
  if (GiNaC::is_the_function<GiNaC::sin_SERIAL>(f)) return *is_sin = true;
  if (GiNaC::is_the_function<GiNaC::cos_SERIAL>(f)) return !(*is_sin = false);
  return false;
}

// Step 3: one pair of terms combined by an angle-sum identity, if any. The
// partner of a term is looked up in `index` (the terms, by GiNaC's order).
using TermIndex = std::map<ex, size_t, GiNaC::ex_is_less>;
bool CombineOnePair(std::vector<ex>* terms) {
  TermIndex index;
  for (size_t k = 0; k < terms->size(); ++k) index.emplace((*terms)[k], k);
  for (size_t k = 0; k < terms->size(); ++k) {
    const std::vector<ex> factors = Factors((*terms)[k]);
    for (size_t i = 0; i < factors.size(); ++i) {
      bool sin_i = false;
      if (!IsTrig(factors[i], &sin_i)) continue;
      for (size_t j = 0; j < factors.size(); ++j) {
        bool sin_j = false;
        // cos(a)cos(b) pairs with sin(a)sin(b); sin(a)cos(b) with cos(a)sin(b).
        if (j == i || !IsTrig(factors[j], &sin_j) || sin_j) continue;
        ex rest = 1;
        for (size_t m = 0; m < factors.size(); ++m)
          if (m != i && m != j) rest *= factors[m];
        const ex a = factors[i].op(0), b = factors[j].op(0);
        const ex partner = sin_i ? rest * GiNaC::cos(a) * GiNaC::sin(b) : rest * GiNaC::sin(a) * GiNaC::sin(b);
        for (const bool plus : {true, false}) {
          auto it = index.find(plus ? partner : ex(-partner));
          if (it == index.end() || it->second == k) continue;
          const ex combined = sin_i ? rest * GiNaC::sin(plus ? a + b : a - b) : rest * GiNaC::cos(plus ? a - b : a + b);
          std::vector<ex> out;
          for (size_t m = 0; m < terms->size(); ++m)
            if (m != k && m != it->second) out.push_back((*terms)[m]);
          out.push_back(combined);
          *terms = out;
          return true;
        }
      }
    }
  }
  return false;
}

ex AngleSums(const ex& e) {
  std::vector<ex> terms = Terms(e);
  bool changed = false;
  for (int pass = 0; pass < 64 && CombineOnePair(&terms); ++pass) changed = true;
  return changed ? Sum(terms).expand() : e;
}

bool IsParameterPart(const ex& f, const std::set<std::string>& parameters) {
  for (GiNaC::const_preorder_iterator it = f.preorder_begin(); it != f.preorder_end(); ++it)
    if (GiNaC::is_a<GiNaC::symbol>(*it) && !parameters.count(GiNaC::ex_to<GiNaC::symbol>(*it).get_name()))
      return false;
  return true;
}

// A factor's base and its exponent when the exponent is a positive integer.
std::pair<ex, int> BaseAndPower(const ex& f) {
  if (GiNaC::is_exactly_a<GiNaC::power>(f) && f.op(1).info(GiNaC::info_flags::posint))
    return {f.op(0), GiNaC::ex_to<GiNaC::numeric>(f.op(1)).to_int()};
  return {f, 1};
}

// Like terms gathered by their part in everything but the parameters, each
// coefficient with its common factors collected.
ex GatherLikeTerms(const ex& e, const std::set<std::string>& parameters) {
  std::map<ex, ex, GiNaC::ex_is_less> by_variable_part;
  std::vector<ex> order;
  for (const ex& t : Terms(e)) {
    ex constant = 1, variable = 1;
    for (const ex& f : Factors(t)) (IsParameterPart(f, parameters) ? constant : variable) *= f;
    auto [it, fresh] = by_variable_part.emplace(variable, 0);
    if (fresh) order.push_back(variable);
    it->second += constant;
  }
  ex out = 0;
  for (const ex& v : order) out += GiNaC::collect_common_factors(by_variable_part[v]) * v;
  return out;
}

// Step 4: a body's own terms gathered - the terms with the same product of
// inertia parameters (a mass, a moment of inertia) are that product times
// the sum of the rest - and like terms gathered within each.
ex Gather(const ex& e, const std::set<std::string>& parameters, const std::set<std::string>& inertias) {
  std::map<ex, ex, GiNaC::ex_is_less> by_body;
  std::vector<ex> order;
  for (const ex& t : Terms(e)) {
    ex body = 1, rest = 1;
    for (const ex& f : Factors(t)) {
      const ex base = BaseAndPower(f).first;
      const bool inertia = GiNaC::is_a<GiNaC::symbol>(base) && inertias.count(GiNaC::ex_to<GiNaC::symbol>(base).get_name());
      (inertia ? body : rest) *= f;
    }
    auto [it, fresh] = by_body.emplace(body, 0);
    if (fresh) order.push_back(body);
    it->second += rest;
  }
  ex out = 0;
  for (const ex& b : order) out += b * GatherLikeTerms(by_body[b], parameters);
  return out;
}

// An upper bound of the number of terms of e.expand(), without expanding
// (saturating at `limit`): a product of the rotations of a spatial chain
// expands into more terms than anyone would read.
double ExpandedTerms(const ex& e, double limit) {
  if (GiNaC::is_exactly_a<GiNaC::add>(e)) {
    double n = 0;
    for (size_t i = 0; i < e.nops() && n <= limit; ++i) n += ExpandedTerms(e.op(i), limit);
    return n;
  }
  if (GiNaC::is_exactly_a<GiNaC::mul>(e)) {
    double n = 1;
    for (size_t i = 0; i < e.nops() && n <= limit; ++i) n *= ExpandedTerms(e.op(i), limit);
    return n;
  }
  if (GiNaC::is_exactly_a<GiNaC::power>(e) && e.op(1).info(GiNaC::info_flags::posint))
    return std::pow(ExpandedTerms(e.op(0), limit), GiNaC::ex_to<GiNaC::numeric>(e.op(1)).to_double());
  return 1;
}

}  // namespace

bool TextbookForm(const GiNaC::ex& e, const std::set<std::string>& parameters, const std::set<std::string>& inertias,
                  GiNaC::ex* out) {
  constexpr double kMaxTerms = 150;
  if (ExpandedTerms(e, kMaxTerms) > kMaxTerms) return false;
  *out = TextbookForm(e, parameters, inertias);
  return true;
}

GiNaC::ex TextbookForm(const GiNaC::ex& e, const std::set<std::string>& parameters,
                       const std::set<std::string>& inertias) {
  ex x = Pythagoras(e.expand());
  x = Pythagoras(AngleSums(x));
  return Gather(x, parameters, inertias);
}

}  // namespace paynter
