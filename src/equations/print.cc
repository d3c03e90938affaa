// Text and LaTeX forms of an EquationSystem.
#include <fmt/format.h>

#include <set>
#include <sstream>

#include "equations_internal.h"
#include "paynter/equations.h"

namespace paynter {
namespace {

using GiNaC::ex;

enum class Style { kText, kLatex };

std::string Show(const ex& e, Style style) {
  std::ostringstream os;
  if (style == Style::kLatex) os << GiNaC::latex;
  os << e;
  return os.str();
}

// The shorter of an expression and its expansion: a sum of monomials in the
// moduli (as the paper writes a* and b*) is often the more readable.
std::string ShowCompact(const ex& e, Style style) {
  const std::string a = Show(e, style);
  const std::string b = Show(e.expand(), style);
  return b.size() <= a.size() + a.size() / 4 ? b : a;
}

std::string ShowSym(const GiNaC::symbol& s, Style style) { return Show(s, style); }

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
    case Formulation::kState: break;
  }
  return "state equations (SCAP)";
}

// Equations with implicit blocks: every assignment is substituted into what
// follows except the modulus variables of MTF/MGY elements and their time
// derivatives, which are listed after ("where ...") as the paper writes t_i
// and their derivatives.
void RenderImplicit(const EquationSystem& sys, Style style, std::ostringstream& os) {
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
  std::ostringstream body;
  for (const auto& st : sys.rhs.steps) {
    if (st.kind == ProgramStep::Kind::kAssign) {
      const GiNaC::symbol& target = sys.rhs.symbols[st.target];
      const ex value = SubsSymbols(st.value, chain);
      if (keep.count(target.get_name())) where.push_back({target, value});
      else chain[target] = value;
      continue;
    }
    const ImplicitBlock* info = nullptr;
    for (const auto& b : sys.blocks)
      if (b.label == st.label) info = &b;
    if (!info) throw Error("internal: no block labelled " + st.label);
    const size_t n = st.unknowns.size();
    body << (tex ? "  & \\text{" : "  [") << (info->derivative_causality ? "coupled by derivative causality" : "algebraic loop")
         << (info->linear ? ", linear" : ", nonlinear (Newton)") << (tex ? "} \\\\\n" : "]\n");
    GiNaC::exmap zero;
    for (int u : st.unknowns) zero[sys.rhs.symbols[u]] = 0;
    if (info->linear) {
      body << (tex ? "  & M\\,u = f,\\quad u = (" : "  M u = f with u = (");
      for (size_t j = 0; j < n; ++j) body << (j ? ", " : "") << Show(sys.rhs.symbols[st.unknowns[j]], style);
      body << ")" << eol;
      for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j)
          body << (tex ? "  M_{" : "  M[") << i + 1 << (tex ? "" : ",") << j + 1 << (tex ? "}" : "]") << eqsign
               << ShowCompact(SubsSymbols(st.jacobian[i * n + j], chain), style) << eol;
        body << (tex ? "  f_{" : "  f[") << i + 1 << (tex ? "}" : "]") << eqsign
             << ShowCompact(SubsSymbols(-st.residuals[i].subs(zero, GiNaC::subs_options::no_pattern), chain), style)
             << eol;
      }
    } else {
      for (size_t i = 0; i < n; ++i) body << (tex ? "  0 &= " : "  0 = ") << Show(SubsSymbols(st.residuals[i], chain), style) << eol;
    }
  }
  // State derivatives not solved in a block.
  for (size_t i = 0; i < sys.states.size(); ++i) {
    auto it = chain.find(sys.derivatives[i]);
    if (it == chain.end()) continue;
    body << "  " << (tex ? "\\frac{d}{dt} " + Show(sys.states[i], style) : "d/dt " + sys.state_names[i]) << eqsign
         << Show(it->second, style) << eol;
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
      body << (tex ? "  0 &= " : "  constraint 0 = ") << Show(closed, style) << eol;
    }
  }
  os << (tex ? "\\begin{align}\n" : "\n" + Title(sys) + ":\n") << body.str();
  if (!where.empty()) {
    os << (tex ? "  & \\text{where} \\\\\n" : "where\n");
    for (const auto& [v, value] : where) os << "  " << Show(v, style) << eqsign << Show(value, style) << eol;
  }
  if (tex) os << "\\end{align}\n";
}

std::string Render(const EquationSystem& sys, Style style) {
  std::ostringstream os;
  const bool tex = style == Style::kLatex;
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
      std::string lhs = tex ? "\\frac{d}{dt} " + ShowSym(sys.states[i], style) : "d/dt " + sys.state_names[i];
      os << (tex ? "  " : "  ") << lhs << eqsign << Show(closed[i], style) << (tex ? " \\\\\n" : "\n");
    }
    if (tex) os << "\\end{align}\n";
  } else {
    RenderImplicit(sys, style, os);
  }
  if (!tex && !sys.output_names.empty()) {
    os << "\noutputs:\n";
    const size_t first = sys.outputs.steps.size() - sys.output_names.size();
    for (size_t k = first; k < sys.outputs.steps.size(); ++k) {
      const auto& st = sys.outputs.steps[k];
      os << "  " << sys.outputs.slot_names[st.target] << " = " << Show(st.value, style) << "\n";
    }
  }
  return os.str();
}

}  // namespace

std::string EquationSystem::ToText(const Model&) const { return Render(*this, Style::kText); }
std::string EquationSystem::ToLatex(const Model&) const { return Render(*this, Style::kLatex); }

}  // namespace paynter
