// Text and LaTeX forms of an EquationSystem.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "equations_internal.h"
#include "paynter/equations.h"

namespace paynter {
namespace {

using GiNaC::ex;

// How a reader writes a model's names in LaTeX: theta1 -> \theta_{1},
// p_bar -> p_{\mathrm{bar}}, gammadot -> \dot{\gamma}, J2_c1_8 -> \mathrm{J2}_{c1,8}
// (one subscript, never a double one). A state derivative (or a modulus's
// derivative) named d<name> prints as \dot{<name>}.
const std::set<std::string>& GreekLetters() {
  static const std::set<std::string> g = {
      "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "iota",
      "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "varphi", "chi", "psi",
      "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega"};
  return g;
}

// Text set upright, with LaTeX's special characters escaped (names are
// identifiers, but a report never relies on it). An instance path's parts
// are set one by one, joined by its dots, and braced: motor.rotor -> {\mathrm{motor}.\mathrm{rotor}}.
std::string Upright(const std::string& s) {
  std::string out;
  size_t start = 0;
  for (;;) {
    const size_t dot = s.find('.', start);
    const std::string part = s.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!part.empty()) {
      out += "\\mathrm{";
      for (char c : part) {
        if (std::isalnum(static_cast<unsigned char>(c))) out += c;
        else out += fmt::format("\\char\"{:02X}", static_cast<unsigned char>(c));
      }
      out += "}";
    }
    if (dot == std::string::npos) break;
    out += ".";
    start = dot + 1;
  }
  // A path is one symbol: braced, so that an exponent or accent takes it whole.
  return s.find('.') == std::string::npos ? out : "{" + out + "}";
}

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// One part of a name: a Greek letter, a single letter or digits as they are,
// anything longer upright.
std::string Part(const std::string& s) {
  if (GreekLetters().count(s)) return "\\" + s;
  if (AllDigits(s) || (s.size() == 1 && std::isalpha(static_cast<unsigned char>(s[0])))) return s;
  return Upright(s);
}

// A name's base (its text before the first underscore): a trailing "dot" or
// "ddot" is a time derivative, trailing digits a subscript.
std::string Base(std::string s, std::vector<std::string>* subscripts) {
  std::string accent;
  for (const char* a : {"ddot", "dot"}) {
    const std::string suffix = a;
    if (s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0) {
      accent = "\\" + suffix;
      s.resize(s.size() - suffix.size());
      break;
    }
  }
  size_t digits = s.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(s[digits - 1]))) --digits;
  if (digits > 0 && digits < s.size()) {
    subscripts->insert(subscripts->begin(), s.substr(digits));
    s.resize(digits);
  }
  const std::string base = Part(s);
  return accent.empty() ? base : accent + "{" + base + "}";
}

// Expressions printed with every symbol's name as LatexName writes it, and
// the derivatives in `dotted` (name -> the name they are the derivative of)
// as \dot{...}.
ex LatexNamed(const ex& e, const std::map<std::string, std::string>& dotted) {
  GiNaC::exmap names;
  for (GiNaC::const_preorder_iterator it = e.preorder_begin(); it != e.preorder_end(); ++it) {
    if (!GiNaC::is_a<GiNaC::symbol>(*it) || names.count(*it)) continue;
    const std::string name = GiNaC::ex_to<GiNaC::symbol>(*it).get_name();
    auto d = dotted.find(name);
    names[*it] = GiNaC::symbol(name, d != dotted.end() ? DottedLatexName(d->second) : LatexName(name));
  }
  return e.subs(names, GiNaC::subs_options::no_pattern);
}

std::string ShowLatex(const ex& e, const std::map<std::string, std::string>& dotted) {
  return PrintCanonical(LatexNamed(e, dotted), true);
}

enum class Style { kText, kLatex };

// The derivatives of the states and moduli of the system being printed.
thread_local const std::map<std::string, std::string>* g_dotted = nullptr;

const std::map<std::string, std::string>& Dotted() {
  static const std::map<std::string, std::string> none;
  return g_dotted ? *g_dotted : none;
}

std::string Show(const ex& e, Style style) {
  return style == Style::kLatex ? ShowLatex(e, Dotted()) : PrintCanonical(e, false);
}

// The right-hand side of an aligned LaTeX equation: a long sum is broken
// after whole terms into lines of about `width` characters of LaTeX.
std::string ShowRhs(const ex& e, Style style, size_t width = 110) {
  const std::string whole = Show(e, style);
  if (style != Style::kLatex || whole.size() <= width || !GiNaC::is_a<GiNaC::add>(e)) return whole;
  std::string out, line;
  bool first = true;
  for (std::string term : CanonicalTerms(LatexNamed(e, Dotted()), true)) {
    while (!term.empty() && term[0] == ' ') term.erase(0, 1);
    if (!first && term[0] != '-') term = "+ " + term;
    first = false;
    if (!line.empty() && line.size() + term.size() > width) {
      out += line + " \\notag \\\\\n  &\\quad ";  // the number on the equation's last row
      line.clear();
    }
    line += (line.empty() ? "" : " ") + term;
  }
  return out + line;
}

// The shorter of an expression and its expansion: a sum of monomials in the
// moduli (as the paper writes a* and b*) is often the more readable.
std::string ShowCompact(const ex& e, Style style) {
  const ex expanded = e.expand();
  const size_t a = Show(e, style).size(), b = Show(expanded, style).size();
  return ShowRhs(b <= a + a / 4 ? expanded : e, style);
}

// The time derivative of a state (or of a modulus) as a reader writes it.
std::string ShowDerivative(const GiNaC::symbol& state, Style style, const std::string& text_name) {
  return style == Style::kLatex ? DottedLatexName(state.get_name()) : "d/dt " + text_name;
}

// The derivative symbols of a system, by name: d<x> -> x, for its states,
// its moduli and any variable d<v> whose v is one of its variables.
std::map<std::string, std::string> DottedNames(const EquationSystem& sys) {
  std::map<std::string, std::string> dotted;
  for (size_t i = 0; i < sys.states.size(); ++i) dotted[sys.derivatives[i].get_name()] = sys.states[i].get_name();
  std::set<std::string> names;
  for (const auto& s : sys.rhs.symbols) names.insert(s.get_name());
  for (const auto& [t, value] : sys.moduli) names.insert(t.get_name());
  for (const auto& n : names)
    if (n.size() > 1 && n[0] == 'd' && names.count(n.substr(1))) dotted.emplace(n, n.substr(1));
  return dotted;
}

// Closed forms of the rhs steps when it has no block: every assigned variable
// substituted, in program order.
bool ClosedForms(const EquationSystem& sys, std::vector<ex>* out) {
  GiNaC::exmap chain;
  for (const auto& st : sys.rhs.steps) {
    if (st.kind == ProgramStep::Kind::kBlock) return false;
    chain[sys.rhs.symbols[st.target]] = SubsSymbols(st.value, chain);
  }
  out->clear();
  for (const auto& d : sys.derivatives) {
    auto it = chain.find(d);
    out->push_back(it != chain.end() ? it->second : ex(d));
  }
  return true;
}

std::string Title(const EquationSystem& sys) {
  auto list = [](const auto& v) {
    std::string s;
    for (const auto& x : v) {
      std::ostringstream os;
      os << x;
      s += (s.empty() ? "" : ", ") + os.str();
    }
    return s;
  };
  switch (sys.form) {
    case Formulation::kLagrange1:
      return "Lagrange's equations of the first kind (LaCAP): generalized velocities " +
             list(sys.generalized_velocities) + "; multipliers " + list(sys.multipliers);
    case Formulation::kLagrange2:
      return "Lagrange's equations of the second kind (LaCAP): generalized velocities " +
             list(sys.generalized_velocities);
    case Formulation::kHamilton: return "Hamilton's equations (HaCAP)";
    case Formulation::kBoltzmannHamel:
      return "Boltzmann-Hamel equations (BHCAP): quasi-velocities " + list(sys.generalized_velocities) +
             (sys.multipliers.empty() ? "" : "; multipliers " + list(sys.multipliers));
    case Formulation::kState: break;
  }
  return "state equations (SCAP)";
}

// Equations with implicit blocks: every assignment is substituted into what
// follows except the modulus variables of MTF/MGY elements and their time
// derivatives, which are listed after ("where ...") as the paper writes t_i
// and their derivatives.
// The classical forms (Lagrange, Hamilton) as a textbook prints them: each
// expression in TextbookForm, with the moduli it uses kept as names or
// replaced by their values, whichever reads shorter. The moduli still named
// are collected in `used`.
class Textbook {
 public:
  Textbook(const EquationSystem& sys, const Model& model, const std::vector<std::pair<ex, ex>>& where)
      : on_(sys.form != Formulation::kState) {
    if (!on_) return;
    parameters_.insert(sys.parameter_names.begin(), sys.parameter_names.end());
    // The bodies' masses and moments of inertia: the parameters of the I
    // elements' laws.
    for (const Element& el : model.elements) {
      if (el.kind != ElementKind::kI) continue;
      for (GiNaC::const_preorder_iterator it = el.law.preorder_begin(); it != el.law.preorder_end(); ++it)
        if (GiNaC::is_a<GiNaC::symbol>(*it) && parameters_.count(GiNaC::ex_to<GiNaC::symbol>(*it).get_name()))
          inertias_.insert(GiNaC::ex_to<GiNaC::symbol>(*it).get_name());
    }
    // The moduli in terms of states and parameters only: each is defined in
    // terms of those before it (program order), so one pass closes them.
    for (const auto& [v, value] : where) values_[v] = SubsSymbols(value, values_);
  }
  // The expression to print for `e`, and whether it is a textbook form
  // (otherwise the caller prints `e` as it always has).
  bool Rewrite(const ex& e, ex* out) {
    if (!on_) return false;
    ex named, closed;
    if (!TextbookForm(e, parameters_, inertias_, &named)) return false;
    if (values_.empty() || !TextbookForm(SubsSymbols(e, values_), parameters_, inertias_, &closed)) closed = named;
    const size_t raw = std::min(PrintCanonical(e, false).size(), PrintCanonical(e.expand(), false).size());
    const size_t a = PrintCanonical(named, false).size(), b = PrintCanonical(closed, false).size();
    if (a > 2 * raw) return false;
    // The moduli are written out where that reads about as short and puts no
    // coordinate below a fraction bar: the pendulum's lever L/2*cos(gamma) is
    // clearer in its equation than a name, while the quick return's t_i
    // (which divide by cos(theta3) and the slider's length) stay names, as
    // seed 000 prints them.
    *out = b <= 2 * a && !DividesByVariable(closed) ? closed : named;
    Use(*out);
    return true;
  }
  // Records the moduli that `e` names (and those their values name).
  void Use(const ex& e) {
    for (GiNaC::const_preorder_iterator it = e.preorder_begin(); it != e.preorder_end(); ++it)
      if (GiNaC::is_a<GiNaC::symbol>(*it) && values_.count(*it)) used_.insert(GiNaC::ex_to<GiNaC::symbol>(*it).get_name());
  }
  // Whether e has a negative power of something that is not a parameter.
  bool DividesByVariable(const ex& e) const {
    for (GiNaC::const_preorder_iterator it = e.preorder_begin(); it != e.preorder_end(); ++it) {
      if (!GiNaC::is_exactly_a<GiNaC::power>(*it) || !GiNaC::is_a<GiNaC::numeric>(it->op(1)) ||
          !GiNaC::ex_to<GiNaC::numeric>(it->op(1)).is_negative())
        continue;
      const ex base = it->op(0);
      for (GiNaC::const_preorder_iterator s = base.preorder_begin(); s != base.preorder_end(); ++s)
        if (GiNaC::is_a<GiNaC::symbol>(*s) && !parameters_.count(GiNaC::ex_to<GiNaC::symbol>(*s).get_name())) return true;
    }
    return false;
  }
  bool Shows(const ex& v) const { return !on_ || used_.count(GiNaC::ex_to<GiNaC::symbol>(v).get_name()); }
  bool Rewrite(const ex& e, ex* out, bool) const { return TextbookForm(e, parameters_, inertias_, out); }
  bool on() const { return on_; }

 private:
  bool on_;
  std::set<std::string> parameters_, inertias_;
  GiNaC::exmap values_;
  std::set<std::string> used_;
};

void RenderImplicit(const EquationSystem& sys, const Model& model, Style style, std::ostringstream& os) {
  const bool tex = style == Style::kLatex;
  const std::string eqsign = tex ? " &= " : " = ";
  const std::string eol = tex ? " \\\\\n" : "\n";
  std::set<std::string> keep;
  for (const auto& [t, value] : sys.moduli) {
    keep.insert(t.get_name());
    keep.insert("d" + t.get_name());
  }
  std::set<std::string> derivs;
  for (const auto& d : sys.derivatives) derivs.insert(d.get_name());
  GiNaC::exmap chain;
  std::vector<std::pair<ex, ex>> where;  // kept variables and their values
  for (const auto& st : sys.rhs.steps) {
    if (st.kind != ProgramStep::Kind::kAssign) continue;
    const GiNaC::symbol& target = sys.rhs.symbols[st.target];
    const ex value = SubsSymbols(st.value, chain);
    if (keep.count(target.get_name())) where.push_back({target, value});
    else chain[target] = value;
  }
  Textbook book(sys, model, where);
  // An expression as printed: the textbook's form for the classical forms,
  // else as it is (`compact`: or expanded, when that reads as short).
  auto show = [&](const ex& e, bool compact) {
    ex t;
    if (book.Rewrite(e, &t)) return ShowRhs(t, style);
    book.Use(e);
    return compact ? ShowCompact(e, style) : ShowRhs(e, style);
  };
  chain.clear();
  std::ostringstream body;
  for (const auto& st : sys.rhs.steps) {
    if (st.kind == ProgramStep::Kind::kAssign) {
      const GiNaC::symbol& target = sys.rhs.symbols[st.target];
      if (!keep.count(target.get_name())) chain[target] = SubsSymbols(st.value, chain);
      continue;
    }
    const ImplicitBlock* info = nullptr;
    for (const auto& b : sys.blocks)
      if (b.label == st.label) info = &b;
    if (!info) throw Error("internal: no block labelled " + st.label);
    const size_t n = st.unknowns.size();
    body << (tex ? "  & \\text{" : "  [") << (info->derivative_causality ? "coupled by derivative causality" : "algebraic loop")
         << (info->linear ? ", linear" : ", nonlinear (Newton)") << (tex ? "} \\notag \\\\\n" : "]\n");
    GiNaC::exmap zero;
    for (int u : st.unknowns) zero[sys.rhs.symbols[u]] = 0;
    if (info->linear) {
      body << (tex ? "  & M\\,u = f,\\quad u = (" : "  M u = f with u = (");
      for (size_t j = 0; j < n; ++j) body << (j ? ", " : "") << Show(sys.rhs.symbols[st.unknowns[j]], style);
      // Only the entries that are not zero (a mechanism's mass matrix is
      // mostly zeros); the line says so when some are left out.
      std::vector<ex> entries(n * n);
      size_t zeros = 0;
      for (size_t k = 0; k < n * n; ++k) {
        entries[k] = SubsSymbols(st.jacobian[k], chain);
        zeros += entries[k].is_zero();
      }
      body << ")";
      if (zeros > 0) body << (tex ? ",\\quad \\text{other entries of } M = 0" : ", the entries of M not listed are 0");
      body << eol;
      for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j)
          if (!entries[i * n + j].is_zero())
            body << (tex ? "  M_{" : "  M[") << i + 1 << "," << j + 1 << (tex ? "}" : "]") << eqsign
                 << show(entries[i * n + j], true) << eol;
        body << (tex ? "  f_{" : "  f[") << i + 1 << (tex ? "}" : "]") << eqsign
             << show(SubsSymbols(-st.residuals[i].subs(zero, GiNaC::subs_options::no_pattern), chain), true) << eol;
      }
    } else {
      for (size_t i = 0; i < n; ++i) body << (tex ? "  0 &= " : "  0 = ") << show(SubsSymbols(st.residuals[i], chain), false) << eol;
    }
  }
  // State derivatives not solved in a block.
  for (size_t i = 0; i < sys.states.size(); ++i) {
    auto it = chain.find(sys.derivatives[i]);
    if (it == chain.end()) continue;
    body << "  " << ShowDerivative(sys.states[i], style, sys.state_names[i]) << eqsign << show(it->second, false)
         << eol;
  }
  if (!sys.constraints.empty()) {
    // Velocity constraints of the constrained 0-junctions, in the velocities
    // (with the moduli kept as names).
    GiNaC::exmap all = ExplicitChain(sys, keep);
    for (const ex& c : sys.constraints) {
      ex closed = c;
      for (int pass = 0; pass < 64; ++pass) {
        ex next = SubsSymbols(closed, all);
        if (next.is_equal(closed)) break;
        closed = next;
      }
      body << (tex ? "  0 &= " : "  constraint 0 = ") << show(closed, false) << eol;
    }
  }
  os << (tex ? "\\begin{align}\n" : "\n" + Title(sys) + ":\n") << body.str();
  // The moduli the equations name, each defined in terms of those before it
  // (so the last are decided first).
  std::vector<std::string> defined(where.size());
  for (size_t k = where.size(); k-- > 0;) {
    if (!book.Shows(where[k].first)) continue;
    ex t;
    const bool textbook = book.on() && book.Rewrite(where[k].second, &t, false) &&
                          PrintCanonical(t, false).size() <= PrintCanonical(where[k].second, false).size();
    book.Use(textbook ? t : where[k].second);
    defined[k] = "  " + Show(where[k].first, style) + eqsign + ShowRhs(textbook ? t : where[k].second, style) + eol;
  }
  std::string where_text;
  for (const std::string& d : defined) where_text += d;
  if (!where_text.empty()) os << (tex ? "  & \\text{where} \\notag \\\\\n" : "where\n") << where_text;
  if (tex) os << "\\end{align}\n";
}

std::string Render(const EquationSystem& sys, const Model& model, Style style) {
  std::ostringstream os;
  const bool tex = style == Style::kLatex;
  const std::map<std::string, std::string> dotted = DottedNames(sys);
  g_dotted = &dotted;
  struct Reset {
    ~Reset() { g_dotted = nullptr; }
  } reset;
  const std::string eqsign = tex ? " &= " : " = ";
  if (tex) {
    os << "% state equations of model '" << sys.model_name << "', generated by paynter\n";
  } else {
    os << "model '" << sys.model_name << "': " << sys.states.size() << " states\n\nstates:\n";
    for (size_t i = 0; i < sys.states.size(); ++i)
      os << fmt::format("  {:<14} {:<44} initial {}\n", sys.state_names[i], sys.state_origin[i],
                        sys.initial_state[i]);
    if (!sys.parameter_names.empty()) {
      os << "\nparameters:\n";
      for (size_t i = 0; i < sys.parameter_names.size(); ++i)
        os << fmt::format("  {} = {}\n", sys.parameter_names[i], sys.parameter_values[i]);
    }
  }
  std::vector<ex> closed;
  if (ClosedForms(sys, &closed)) {
    os << (tex ? "\\begin{align}\n" : "\n" + Title(sys) + ", explicit:\n");
    for (size_t i = 0; i < sys.states.size(); ++i) {
      os << "  " << ShowDerivative(sys.states[i], style, sys.state_names[i]) << eqsign << ShowRhs(closed[i], style)
         << (tex ? " \\\\\n" : "\n");
    }
    if (tex) os << "\\end{align}\n";
  } else {
    RenderImplicit(sys, model, style, os);
  }
  if (!tex && !sys.output_names.empty()) {
    os << "\noutputs:\n";
    const size_t first = sys.outputs.steps.size() - sys.output_names.size();
    for (size_t k = first; k < sys.outputs.steps.size(); ++k) {
      const auto& st = sys.outputs.steps[k];
      os << "  " << sys.outputs.slot_names[st.target] << " = " << Show(st.value, style) << "\n";
    }
  }
  if (!tex) return os.str();
  // The last row of an align ends without a line break (amsmath would number
  // an empty row after it).
  std::string text = os.str();
  const std::string row_end = " \\\\\n\\end{align}";
  for (size_t at = 0; (at = text.find(row_end, at)) != std::string::npos;) text.replace(at, row_end.size(), "\n\\end{align}");
  return text;
}

}  // namespace

// The parts of a name as LatexName writes them: the base, then its subscripts.
static std::pair<std::string, std::vector<std::string>> LatexParts(const std::string& name) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : name) {
    if (c == '_') {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  if (parts.empty()) return {Upright(name), {}};
  std::vector<std::string> subscripts;
  const std::string base = Base(parts[0], &subscripts);
  for (size_t i = 1; i < parts.size(); ++i) {
    // A subscript's own digits stay beside it (q2, not a subscript of a subscript).
    std::vector<std::string> digits;
    std::string sub = Base(parts[i], &digits);
    for (const auto& d : digits) sub += d;
    subscripts.push_back(sub);
  }
  return {base, subscripts};
}

std::string LatexName(const std::string& name) {
  const auto [base, subscripts] = LatexParts(name);
  if (subscripts.empty()) return base;
  return base + "_{" + fmt::format("{}", fmt::join(subscripts, ",")) + "}";
}

std::string DottedLatexName(const std::string& name) {
  const auto [base, subscripts] = LatexParts(name);
  const std::string dotted = "\\dot{" + base + "}";
  if (subscripts.empty()) return dotted;
  return dotted + "_{" + fmt::format("{}", fmt::join(subscripts, ",")) + "}";
}

std::string EquationSystem::ToText(const Model& model) const { return Render(*this, model, Style::kText); }
std::string EquationSystem::ToLatex(const Model& model) const { return Render(*this, model, Style::kLatex); }
std::string EquationSystem::Latex(const GiNaC::ex& e) const { return ShowLatex(e, DottedNames(*this)); }

}  // namespace paynter
