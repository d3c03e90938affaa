// The Lagrange subsystem of a second-kind formulation (Mechatronics Handbook,
// §9, "Lagrange subsystems", seed 002): with every flow a function of the
// generalized velocities v (the ASF flows) and the configuration,
//   transforming relations   f_k = T_k(q) v              (eq. 9.37)
//   generalized momenta      p~ = dT/dv                  (eq. 9.38)
//   conservative efforts     e~_q = -dT/dq + dU/dq       (eq. 9.39)
//   non-conservative efforts E_q = e_x T(q)              (eqs. 9.40-9.41)
// T is the kinetic co-energy of the I elements; dU/dq is taken as the C
// elements' efforts through their transforming relations; d/dq is the total
// derivative along the coordinate, through every displacement state whose
// rate depends on v.
#include <fmt/format.h>

#include <sstream>

#include "equations_internal.h"
#include "paynter/equations.h"

namespace paynter {

GiNaC::exmap ExplicitChain(const EquationSystem& sys, const std::set<std::string>& keep) {
  GiNaC::exmap chain;
  for (const auto& eq : sys.equations)
    if (eq.is_explicit && !keep.count(eq.var.get_name())) chain[eq.var] = eq.value;
  for (int pass = 0; pass < 64; ++pass) {
    bool changed = false;
    for (auto& [var, value] : chain) {
      GiNaC::ex next = SubsSymbols(value, chain);
      if (!next.is_equal(value)) {
        value = next;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return chain;
}

GiNaC::ex TrigNormal(const GiNaC::ex& e) {
  using namespace GiNaC;
  const ex w = wild();
  ex out = e.expand().subs(pow(sin(w), 2) == 1 - pow(cos(w), 2), subs_options::algebraic);
  return out.expand().normal();
}

LagrangeSubsystem DeriveLagrangeSubsystem(const EquationSystem& sys, const Model& model) {
  using GiNaC::ex;
  const auto& aliases = sys.aliases;
  const auto& states = sys.states;
  const auto& derivatives = sys.derivatives;
  if (sys.form != Formulation::kLagrange2)
    throw Error("the Lagrange subsystem is derived from a lagrange2 formulation (--form lagrange2)");
  // The flows of a Lagrange form are explicit: they propagate from the
  // generalized velocities.
  GiNaC::exmap chain = ExplicitChain(sys);
  auto closed = [&](const ex& e) { return SubsSymbols(SubsSymbols(e, aliases), chain); };
  LagrangeSubsystem out;
  std::vector<GiNaC::symbol>& v = out.velocities;
  for (const auto& name : sys.generalized_velocities)
    for (size_t i = 0; i < sys.state_names.size(); ++i)
      if (sys.state_names[i] == name) v.push_back(states[i]);
  ex T = 0;
  std::vector<ex> E(v.size(), 0), conservative_c(v.size(), 0);
  for (const auto& el : model.elements) {
    if (!IsOnePort(el.kind) || el.artificial != Artificial::kNone) continue;
    const Bond& b = model.bonds[el.bonds[0]];
    const ex f = closed(model.Symbol("f_" + b.name));
    std::vector<ex> Tk;
    for (const auto& vi : v) Tk.push_back(f.diff(vi).normal());
    out.elements.push_back(el.name);
    out.transforming.push_back(Tk);
    // Power into the element is e*f with the bond pointing at it.
    const int self = model.FindElement(el.name);
    const ex s = b.to == self ? -1 : 1;  // power delivered to the system
    const ex e = model.Symbol("e_" + b.name);
    if (el.kind == ElementKind::kI && el.form == LawForm::kLinear) T += el.law * f * f / 2;
    else if (el.kind == ElementKind::kC)
      for (size_t i = 0; i < v.size(); ++i) conservative_c[i] += -s * e * Tk[i];
    else if (el.kind != ElementKind::kI)
      for (size_t i = 0; i < v.size(); ++i) E[i] += s * e * Tk[i];
  }
  // Total derivative along coordinate i: sum over displacement states d of
  // (d rate_d / d v_i) * d/dd.
  auto d_dq = [&](const ex& expr, size_t i) {
    ex acc = 0;
    for (size_t k = 0; k < states.size(); ++k) {
      auto it = chain.find(derivatives[k]);
      if (it == chain.end()) continue;  // not an explicit displacement rate
      const ex coeff = SubsSymbols(it->second, chain).diff(v[i]);
      if (!coeff.is_zero()) acc += coeff * expr.diff(states[k]);
    }
    return acc;
  };
  out.kinetic_coenergy = T;
  for (size_t i = 0; i < v.size(); ++i) {
    out.momenta.push_back(T.diff(v[i]));
    out.conservative.push_back(-d_dq(T, i) + conservative_c[i]);
    out.nonconservative.push_back(E[i]);
  }
  return out;
}

std::string EquationSystem::ExplainLagrange(const Model& model) const {
  const LagrangeSubsystem ls = DeriveLagrangeSubsystem(*this, model);
  std::ostringstream os;
  os << "Lagrange subsystem (generalized velocities " << fmt::format("{}", fmt::join(generalized_velocities, ", "))
     << ")\n\ntransforming relations f_k = T_k(q) v:\n";
  for (size_t k = 0; k < ls.elements.size(); ++k) {
    os << fmt::format("  {:<12} f = ", ls.elements[k]);
    for (size_t i = 0; i < ls.velocities.size(); ++i)
      os << (i ? " + " : "") << "(" << TrigNormal(ls.transforming[k][i]) << ")*" << ls.velocities[i];
    os << "\n";
  }
  os << "\nkinetic co-energy T = " << TrigNormal(ls.kinetic_coenergy) << "\n\n";
  for (size_t i = 0; i < ls.velocities.size(); ++i) {
    os << "coordinate " << generalized_velocities[i] << ":\n";
    os << "  generalized momentum  p~ = dT/dv = " << TrigNormal(ls.momenta[i]) << "\n";
    os << "  conservative effort   e~_q = -dT/dq + dU/dq = " << TrigNormal(ls.conservative[i]) << "\n";
    os << "  non-conservative      E_q = e_x T(q) = " << ls.nonconservative[i] << "\n";
    os << "  Lagrange: d/dt p~ + e~_q = E_q\n";
  }
  return os.str();
}

}  // namespace paynter
