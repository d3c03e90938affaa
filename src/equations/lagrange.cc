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
  if (sys.form != Formulation::kLagrange2 && sys.form != Formulation::kBoltzmannHamel)
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

namespace {
// A quotient of sums of products of sines and cosines in lowest terms:
// numerator and denominator each with sin^2 -> 1 - cos^2 (canonical for
// polynomials in the sines and cosines of independent angles), then divided.
GiNaC::ex TrigRational(const GiNaC::ex& e) {
  using namespace GiNaC;
  const ex w = wild();
  const ex n = e.normal();
  auto reduce = [&](const ex& x) {
    return x.expand().subs(pow(sin(w), 2) == 1 - pow(cos(w), 2), subs_options::algebraic).expand();
  };
  return (reduce(n.numer()) / reduce(n.denom())).normal();
}

// TrigRational where a quotient needs it (B(q) of Cardan angles divides by
// cos(angle2)); TrigNormal (expanded, sin^2 -> 1 - cos^2, normalized: the
// Lagrange subsystem's simplification) for a polynomial in sines and
// cosines, on which normalizing first, as TrigRational does, would take
// minutes for a spatial chain's equations.
GiNaC::ex Readable(const GiNaC::ex& e) {
  for (auto it = e.preorder_begin(); it != e.preorder_end(); ++it)
    if (GiNaC::is_exactly_a<GiNaC::power>(*it) && it->op(1).info(GiNaC::info_flags::negative) &&
        !GiNaC::is_a<GiNaC::numeric>(it->op(0)))
      return TrigRational(e);
  return TrigNormal(e);
}
}  // namespace

BoltzmannHamelTerms DeriveBoltzmannHamel(const EquationSystem& sys, const Model& model, bool equations) {
  using GiNaC::ex;
  if (sys.form != Formulation::kBoltzmannHamel)
    throw Error("the Boltzmann-Hamel terms are derived from a boltzmann-hamel formulation (--form boltzmann-hamel)");
  const GiNaC::exmap chain = ExplicitChain(sys);
  auto closed = [&](const ex& e) { return SubsSymbols(SubsSymbols(e, sys.aliases), chain); };
  BoltzmannHamelTerms o;
  for (const auto& name : sys.generalized_velocities)
    for (size_t i = 0; i < sys.state_names.size(); ++i)
      if (sys.state_names[i] == name) o.velocities.push_back(sys.states[i]);
  o.velocity_names = sys.generalized_velocities;
  const size_t n = o.velocities.size();
  for (const auto& w : o.velocities)
    for (size_t k = 0; k < sys.states.size(); ++k)
      if (sys.states[k] == w) o.accelerations.push_back(sys.derivatives[k]);
  // The kinematic relations: each displacement's rate, linear in w (a
  // displacement whose rate is not, the work of a source say, is no
  // coordinate).
  std::vector<ex> rates;  // of every state with an explicit rate (for d/dt)
  std::vector<GiNaC::symbol> rated;
  for (size_t k = 0; k < sys.states.size(); ++k) {
    const auto it = chain.find(sys.derivatives[k]);
    if (it == chain.end()) continue;
    const ex rate = closed(it->second);
    rated.push_back(sys.states[k]);
    rates.push_back(rate);
    bool displacement = false;
    for (const auto& d : model.displacements) displacement = displacement || d.name == sys.state_names[k];
    if (!displacement) continue;
    std::vector<ex> row;
    ex rest = rate;
    for (const auto& w : o.velocities) {
      row.push_back(TrigRational(rate.diff(w)));
      rest -= row.back() * w;
    }
    bool moves = false;
    for (const auto& b : row) moves = moves || !b.is_zero();
    if (!moves || !TrigRational(rest).is_zero()) continue;
    o.coordinates.push_back(sys.states[k]);
    o.coordinate_names.push_back(sys.state_names[k]);
    o.B.push_back(row);
  }
  // A = B^-1 and the Hamel coefficients, when B is square.
  const size_t m = o.coordinates.size();
  o.hamel.assign(n, std::vector<std::vector<ex>>(n, std::vector<ex>(n, 0)));
  if (m == n && n > 0) {
    GiNaC::matrix Bm(n, n);
    for (size_t i = 0; i < n; ++i)
      for (size_t r = 0; r < n; ++r) Bm(i, r) = o.B[i][r];
    const GiNaC::matrix Am = Bm.inverse();
    o.A.assign(n, std::vector<ex>(n, 0));
    for (size_t l = 0; l < n; ++l)
      for (size_t i = 0; i < n; ++i) o.A[l][i] = TrigRational(Am(l, i));
    for (size_t l = 0; l < n; ++l)
      for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j) {
          const ex curl = TrigRational(o.A[l][i].diff(o.coordinates[j]) - o.A[l][j].diff(o.coordinates[i]));
          if (curl.is_zero()) continue;
          for (size_t r = 0; r < n; ++r)
            for (size_t s = 0; s < n; ++s)
              o.hamel[l][r][s] += curl * (o.B[i][r] * o.B[j][s] - o.B[j][r] * o.B[i][s]);
        }
    for (auto& by_r : o.hamel)
      for (auto& by_s : by_r)
        for (auto& g : by_s) g = TrigRational(g);
  }
  if (!equations) return o;
  const LagrangeSubsystem ls = DeriveLagrangeSubsystem(sys, model);
  o.kinetic_coenergy = Readable(ls.kinetic_coenergy);
  for (size_t r = 0; r < n; ++r) o.momenta.push_back(Readable(ls.momenta[r]));
  for (size_t r = 0; r < n; ++r) {
    ex h = 0;
    for (size_t s = 0; s < n; ++s)
      for (size_t l = 0; l < n; ++l)
        if (!o.hamel[l][r][s].is_zero()) h += o.hamel[l][r][s] * o.velocities[s] * o.momenta[l];
    o.hamel_terms.push_back(Readable(h));
    ex lhs = 0;
    for (size_t s = 0; s < n; ++s) lhs += Readable(o.momenta[r].diff(o.velocities[s])) * o.accelerations[s];
    ex rest = o.hamel_terms.back() + ls.conservative[r];
    for (size_t k = 0; k < rated.size(); ++k) rest += o.momenta[r].diff(rated[k]) * rates[k];
    o.lhs.push_back(lhs + Readable(rest));
    o.rhs.push_back(Readable(closed(ls.nonconservative[r])));
  }
  return o;
}

namespace {
// The nonzero Hamel coefficients gamma^l_rs (r < s; antisymmetric in r, s),
// a line each, or the line that says there are none.
void PutHamelCoefficients(const BoltzmannHamelTerms& bh, bool latex, const EquationSystem& sys, std::ostream& os) {
  const size_t n = bh.velocities.size();
  auto junction = [&](size_t r) { return bh.velocity_names[r].substr(2); };  // v_<junction>
  int shown = 0;
  for (size_t l = 0; l < n; ++l)
    for (size_t r = 0; r < n; ++r)
      for (size_t s = r + 1; s < n; ++s) {
        if (bh.hamel[l][r][s].is_zero()) continue;
        if (latex)
          os << fmt::format("\\[ \\gamma^{{{}}}_{{{},{}}} = {} \\]\n", LatexName(junction(l)), LatexName(junction(r)),
                            LatexName(junction(s)), sys.Latex(bh.hamel[l][r][s]));
        else
          os << fmt::format("  gamma^{}_({}, {}) = {}\n", junction(l), junction(r), junction(s),
                            PrintCanonical(bh.hamel[l][r][s], false));
        ++shown;
      }
  if (shown) return;
  os << (latex ? "% " : "")
     << (bh.A.empty() ? fmt::format("  none: B is {}x{}, not square (no A = B^-1)\n", bh.coordinates.size(), n)
                      : std::string("  none: the quasi-velocities are integrable (the rates of coordinates): these are "
                                    "Lagrange's equations\n"));
}
}  // namespace

std::string EquationSystem::HamelText(const Model& model, bool latex) const {
  const BoltzmannHamelTerms bh = DeriveBoltzmannHamel(*this, model, /*equations=*/false);
  std::ostringstream os;
  os << "\n" << (latex ? "% " : "")
     << "Hamel coefficients gamma^l_rs = sum_ij (dA_li/dq_j - dA_lj/dq_i) B_ir B_js of the kinematic relations "
        "(d/dt above), w = A(q) q'; the Hamel terms sum_sl gamma^l_rs w_s dT*/dw_l are in the equations (--explain "
        "derives them):\n";
  PutHamelCoefficients(bh, latex, *this, os);
  return os.str();
}

std::string EquationSystem::ExplainBoltzmannHamel(const Model& model, bool latex) const {
  const BoltzmannHamelTerms bh = DeriveBoltzmannHamel(*this, model);
  const size_t n = bh.velocities.size();
  std::ostringstream os;
  auto put = [&](const GiNaC::ex& e) { return latex ? Latex(e) : PrintCanonical(e, false); };
  // A quasi-velocity by its junction (v_<junction> is its state).
  auto junction = [&](size_t r) { return bh.velocity_names[r].substr(2); };
  // Text lines; in LaTeX, comments around display math.
  auto line = [&](const std::string& text) { os << (latex ? "% " : "") << text << "\n"; };
  auto math = [&](const std::string& lhs, const std::string& rhs) {
    if (latex) os << "\\[ " << lhs << " = " << rhs << " \\]\n";
    else os << "  " << lhs << " = " << rhs << "\n";
  };
  auto name = [&](const std::string& s) { return latex ? LatexName(s) : s; };
  line(fmt::format("Boltzmann-Hamel terms (quasi-velocities {}; coordinates {})", fmt::join(bh.velocity_names, ", "),
                   fmt::join(bh.coordinate_names, ", ")));
  line("");
  line("kinematic relations q' = B(q) w:");
  for (size_t i = 0; i < bh.coordinates.size(); ++i) {
    GiNaC::ex rate = 0;
    for (size_t r = 0; r < n; ++r) rate += bh.B[i][r] * bh.velocities[r];
    math(latex ? DottedLatexName(bh.coordinate_names[i]) : bh.coordinate_names[i] + "'", put(rate));
  }
  if (!bh.A.empty()) {
    line("");
    line("transformation w = A(q) q':");
    for (size_t l = 0; l < n; ++l) {
      GiNaC::ex w = 0;
      for (size_t i = 0; i < n; ++i) w += bh.A[l][i] * GiNaC::symbol(bh.coordinate_names[i] + "'");
      math(name(bh.velocity_names[l]), latex ? [&] {
        std::string s;
        for (size_t i = 0; i < n; ++i)
          if (!bh.A[l][i].is_zero())
            s += (s.empty() ? "" : " + ") + std::string("\\left(") + Latex(bh.A[l][i]) + "\\right)" +
                 DottedLatexName(bh.coordinate_names[i]);
        return s.empty() ? std::string("0") : s;
      }() : ExpressionText(w));
    }
  } else {
    line("");
    line(fmt::format("transformation: B is {}x{}, not square: no A = B^-1 and no Hamel coefficients",
                     bh.coordinates.size(), n));
  }
  line("");
  line("kinetic co-energy in the quasi-velocities:");
  math(latex ? "T^{*}" : "T*", put(bh.kinetic_coenergy));
  line("");
  line("quasi-momenta P_r = dT*/dw_r:");
  for (size_t r = 0; r < n; ++r) math(latex ? "P_{" + LatexName(junction(r)) + "}" : "P_" + junction(r), put(bh.momenta[r]));
  line("");
  line("Hamel coefficients gamma^l_rs = sum_ij (dA_li/dq_j - dA_lj/dq_i) B_ir B_js (the nonzero ones, r < s):");
  PutHamelCoefficients(bh, latex, *this, os);
  line("");
  line("Boltzmann-Hamel equations dP_r/dt + sum_sl gamma^l_rs w_s P_l - sum_i B_ir dT*/dq_i + dU/dq = Q_r:");
  for (size_t r = 0; r < n; ++r) {
    line(fmt::format("quasi-velocity {}: Hamel term {}", junction(r), PrintCanonical(bh.hamel_terms[r], false)));
    math(put(bh.lhs[r]), put(bh.rhs[r]));
  }
  return os.str();
}

}  // namespace paynter
