// Helpers shared by the equations stage's files.
#pragma once

#include <ginac/ginac.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace paynter {

struct EquationSystem;
// Every explicitly defined variable of `system` in terms of states, parameters
// and time (and of the implicitly defined variables), by substitution to a fixed point.
// Variables named in `keep` are left as names.
GiNaC::exmap ExplicitChain(const EquationSystem& system, const std::set<std::string>& keep = {});

// e.subs(m) for a map from symbols, in time proportional to e rather than to
// the map (GiNaC's subs looks at every key of the map on every call).
GiNaC::ex SubsSymbols(const GiNaC::ex& e, const GiNaC::exmap& m);

void CollectSymbols(const GiNaC::ex& e, std::set<GiNaC::ex, GiNaC::ex_is_less>* out);

// e.diff(s), the same expression, in time proportional to the factors that
// depend on s rather than to the square of every product's length.
GiNaC::ex Differentiate(const GiNaC::ex& e, const GiNaC::symbol& s);

// `e` in GiNaC's text (or LaTeX) notation with the terms of every sum and the
// factors of every product sorted by their printed text, so that it reads the
// same in every process (GiNaC's own order follows hashes that vary from run
// to run; canonical_print.cc).
std::string PrintCanonical(const GiNaC::ex& e, bool latex);
// The terms of a sum as PrintCanonical prints them, each with its sign, in
// its order (a non-sum: itself).
std::vector<std::string> CanonicalTerms(const GiNaC::ex& e, bool latex);

// `e` as a textbook prints it: expanded, sin^2+cos^2 = 1 and the angle-sum
// identities applied, each body's terms gathered (the symbols named in
// `inertias`: masses and moments of inertia), like terms gathered by their
// part in everything but the symbols named in `parameters`, common factors
// collected (textbook.cc). The same function of its symbols; for printing.
GiNaC::ex TextbookForm(const GiNaC::ex& e, const std::set<std::string>& parameters,
                       const std::set<std::string>& inertias);
// The same when e expands into a readable number of terms (at most 150);
// false (and `out` untouched) when it does not.
bool TextbookForm(const GiNaC::ex& e, const std::set<std::string>& parameters, const std::set<std::string>& inertias,
                  GiNaC::ex* out);

// Symbol <-> slot index.
struct SlotLayout {
  std::vector<GiNaC::symbol> symbols;
  std::vector<std::string> names;
  std::map<GiNaC::ex, int, GiNaC::ex_is_less> index;
  void Add(const GiNaC::symbol& s, const std::string& name) {
    if (index.count(s)) return;
    index[s] = static_cast<int>(symbols.size());
    symbols.push_back(s);
    names.push_back(name);
  }
  int Slot(const GiNaC::ex& s) const { return index.at(s); }
  int size() const { return static_cast<int>(symbols.size()); }
};

// The conditions of a model's expressions (pn_if, paynter/conditionals.h),
// each distinct one (indicator and strictness) given a mode symbol: Replace
// turns every pn_if into pn_select on its mode (modes.cc).
class ModeTable {
 public:
  struct Entry {
    GiNaC::symbol mode;
    GiNaC::ex indicator;
    bool strict = true;
  };
  GiNaC::ex Replace(const GiNaC::ex& e);
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

}  // namespace paynter
