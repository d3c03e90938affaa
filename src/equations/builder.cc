// BuildEquations: from a causal bond graph to the sorted, compiled-ready
// EquationSystem. The passes, in order:
//   1. causal equations, element by element (one per variable it computes);
//   2. elimination of trivial copies (x = y) left by junctions;
//   3. time derivatives for storage in derivative causality, by the chain rule
//      applied equation by equation (forward mode), in terms of the unknown
//      state derivatives;
//   4. sorting into strongly connected components (structure/), tearing the
//      cyclic ones into implicit blocks with a symbolic Jacobian;
//   5. the rhs and outputs programs over one slot layout.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "equations_internal.h"
#include "paynter/conditionals.h"
#include "paynter/equations.h"
#include "paynter/progress.h"
#include "structure.h"

namespace paynter {

using GiNaC::ex;
using GiNaC::symbol;
using SymSet = std::set<ex, GiNaC::ex_is_less>;
// Indices by symbol that are only looked up, never walked: hashed (an ordered
// map compares expressions at each of its log n steps, which took a large
// model's equations a sixth of their time).
template <class T>
using SymbolIndex = std::unordered_map<ex, T, std::hash<ex>, GiNaC::ex_is_equal>;
using SymbolSet = std::unordered_set<ex, std::hash<ex>, GiNaC::ex_is_equal>;

void CollectSymbols(const ex& e, SymSet* out) {
  if (GiNaC::is_a<symbol>(e)) {
    out->insert(e);
    return;
  }
  for (size_t i = 0; i < e.nops(); ++i) CollectSymbols(e.op(i), out);
}

namespace {
// e with the symbols `m` maps replaced (an ordered map or a hashed index).
template <class Map>
GiNaC::ex SubsSymbolsIn(const GiNaC::ex& e, const Map& m) {
  if (m.empty()) return e;
  SymSet syms;
  CollectSymbols(e, &syms);
  GiNaC::exmap hits;
  for (const ex& s : syms) {
    auto it = m.find(s);
    if (it != m.end()) hits.insert(*it);
  }
  return hits.empty() ? e : e.subs(hits, GiNaC::subs_options::no_pattern);
}
}  // namespace

GiNaC::ex SubsSymbols(const GiNaC::ex& e, const GiNaC::exmap& m) { return SubsSymbolsIn(e, m); }

namespace {
// Reads the terms of a sum or the factors of a product as GiNaC holds them
// (its own derivative works on them; they are protected members, reached
// through a pointer to member of a class derived for no other purpose).
struct PairsOf : GiNaC::expairseq {
  static const GiNaC::epvector& Pairs(const GiNaC::expairseq& e) { return e.*(&PairsOf::seq); }
  static const ex& Coefficient(const GiNaC::expairseq& e) { return e.*(&PairsOf::overall_coeff); }
};
}  // namespace

GiNaC::ex Differentiate(const GiNaC::ex& e, const GiNaC::symbol& s) {
  if (GiNaC::is_exactly_a<GiNaC::add>(e)) {
    // Term by term, as GiNaC does, the coefficients kept.
    const auto& terms = PairsOf::Pairs(GiNaC::ex_to<GiNaC::add>(e));
    GiNaC::epvector d;
    d.reserve(terms.size());
    for (const auto& t : terms) d.push_back(GiNaC::expair(Differentiate(t.rest, s), t.coeff));
    return GiNaC::dynallocate<GiNaC::add>(std::move(d));
  }
  if (GiNaC::is_exactly_a<GiNaC::mul>(e)) {
    // The product rule: the product with one factor b^c replaced by
    // b^(c-1) D(b) and the coefficient times c, summed over the factors.
    // GiNaC's own forms that product for every factor, each a copy of all of
    // them, and drops those whose factor is constant: the derivative of a
    // product of k factors cost k^2, and the Jacobian of a chain of N
    // transformers, whose flows are products of up to N ratios, N^3. The
    // products with a constant factor are zero, so leaving them out gives the
    // same sum.
    const auto& m = GiNaC::ex_to<GiNaC::mul>(e);
    const auto& factors = PairsOf::Pairs(m);
    GiNaC::exvector sum;
    GiNaC::epvector product;
    for (size_t k = 0; k < factors.size(); ++k) {
      const ex d = Differentiate(factors[k].rest, s);
      if (d.is_zero()) continue;
      if (product.empty()) product = factors;
      const ex replaced = GiNaC::pow(factors[k].rest, factors[k].coeff - 1) * d;
      GiNaC::expair pair(replaced, 1);
      if (GiNaC::is_exactly_a<GiNaC::power>(replaced) && GiNaC::is_exactly_a<GiNaC::numeric>(replaced.op(1)))
        pair = GiNaC::expair(replaced.op(0), replaced.op(1));
      std::swap(pair, product[k]);
      sum.push_back(GiNaC::dynallocate<GiNaC::mul>(product, PairsOf::Coefficient(m) * factors[k].coeff));
      std::swap(pair, product[k]);
    }
    return GiNaC::dynallocate<GiNaC::add>(sum);
  }
  return e.diff(s);
}

// The same with the map's entries hashed (a large model has a hundred
// thousand copies eliminated: each symbol's lookup in the ordered map
// compared expressions a dozen times).
static GiNaC::ex SubsSymbols(const GiNaC::ex& e, const SymbolIndex<ex>& m) { return SubsSymbolsIn(e, m); }

namespace {

Formulation FormOf(const CausalGraph& g);

[[noreturn]] void Internal(const std::string& msg) { throw Error("internal error in the equation builder: " + msg); }

std::string TexOf(const std::string& name) {
  auto us = name.find('_');
  if (us != std::string::npos && us + 1 < name.size()) return name.substr(0, us) + "_{" + name.substr(us + 1) + "}";
  return name.size() > 1 ? "\\mathrm{" + name + "}" : name;
}

class EquationBuilder {
 public:
  // structure_only: BuildEquationStructure (no programs).
  EquationBuilder(const Model& m, const CausalGraph& g, bool structure_only = false)
      : m_(m), g_(g), structure_only_(structure_only) {}

  EquationSystem Build() {
    RequireNoConflicts(m_, g_);
    sys_.model_name = m_.name;
    sys_.form = FormOf(g_);
    // Constraint sources (joints that close loops) bring multipliers too.
    if (sys_.form == Formulation::kLagrange2)
      for (const auto& e : m_.elements)
        if (e.form == LawForm::kConstraint) sys_.form = Formulation::kLagrange1;
    DeclareStates();
    for (size_t i = 0; i < m_.elements.size(); ++i) ElementEquations(static_cast<int>(i));
    for (const auto& d : m_.definitions) {
      AddExplicit(m_.Symbol(d.name), d.value, "definition " + d.name);
      if (d.rate) rates_[m_.Symbol(d.name)] = *d.rate;
    }
    for (size_t i = 0; i < m_.displacements.size(); ++i) {
      const Displacement& d = m_.displacements[i];
      AddExplicit(Deriv(d.name), d.rate, "displacement " + d.name);
    }
    ApplyModes();
    EliminateCopies();
    DerivativeCausality();
    Sort();
    return std::move(sys_);
  }

 private:
  // ---- pass 0: states ----------------------------------------------------
  void AddState(const std::string& name, const std::string& origin, const ex& initial) {
    AddState(m_.Symbol(name), name, origin, initial);
  }
  void AddState(const symbol& s, const std::string& name, const std::string& origin, const ex& initial) {
    // The derivative of a generalized velocity v_<J> (TeX \dot{q}_{J}) is \ddot{q}_{J}.
    const std::string tex = name.rfind("v_", 0) != 0 ? "\\dot{" + TexOf(name) + "}"
                            : sys_.form == Formulation::kBoltzmannHamel ? "\\dot{w}_{" + name.substr(2) + "}"
                                                                        : "\\ddot{q}_{" + name.substr(2) + "}";
    symbol d("d" + name, tex);
    sys_.states.push_back(s);
    sys_.derivatives.push_back(d);
    sys_.state_names.push_back(name);
    sys_.state_origin.push_back(origin);
    ex v = GiNaC::evalf(initial.subs(ParameterValues()));
    if (!GiNaC::is_a<GiNaC::numeric>(v)) Internal("initial value of " + name + " is not numeric");
    sys_.initial_state.push_back(GiNaC::ex_to<GiNaC::numeric>(v).to_double());
    state_index_[s] = static_cast<int>(sys_.states.size()) - 1;
    deriv_of_[name] = d;
  }

  void DeclareStates() {
    for (int i : g_.integral_storage) {
      const Element& e = m_.elements[i];
      if (e.kind == ElementKind::kI) AddState("p_" + e.name, "momentum of I " + e.name, e.initial.value_or(0));
    }
    // The inertances of the momenta (the metric of velocity projections).
    sys_.state_inertia.assign(sys_.states.size(), 1.0);
    {
      size_t k = 0;
      for (int i : g_.integral_storage) {
        const Element& e = m_.elements[i];
        if (e.kind != ElementKind::kI) continue;
        if (e.form == LawForm::kLinear) {
          const ex v = GiNaC::evalf(e.law.subs(ParameterValues()));
          if (GiNaC::is_a<GiNaC::numeric>(v) && GiNaC::ex_to<GiNaC::numeric>(v).to_double() > 0)
            sys_.state_inertia[k] = GiNaC::ex_to<GiNaC::numeric>(v).to_double();
        }
        ++k;
      }
    }
    for (int i : g_.integral_storage) {
      const Element& e = m_.elements[i];
      if (e.kind == ElementKind::kC) AddState("q_" + e.name, "displacement of C " + e.name, e.initial.value_or(0));
    }
    // Generalized velocities imposed by artificial flow sources. The initial
    // velocity is that of the junction's inertia (p0 / I), else the parameter
    // <junction>_v0 if there is one (the multibody library writes it from a
    // joint's initial rate), else 0.
    for (size_t i = 0; i < m_.elements.size(); ++i) {
      const Element& e = m_.elements[i];
      if (e.artificial != Artificial::kASF) continue;
      const std::string j = m_.elements[e.attached_to].name;
      const std::string name = "v_" + j;
      // (A quasi-velocity is w_<junction>: no coordinate's rate.)
      symbol v(name, sys_.form == Formulation::kBoltzmannHamel ? "w_{" + j + "}" : "\\dot{q}_{" + j + "}");
      local_symbols_.emplace(name, v);
      ex v0 = 0;
      for (const auto& par : m_.parameters)
        if (par.name == j + "_v0") v0 = par.value;
      for (int b : m_.elements[e.attached_to].bonds) {
        const int o = m_.bonds[b].from == e.attached_to ? m_.bonds[b].to : m_.bonds[b].from;
        const Element& oe = m_.elements[o];
        if (oe.kind == ElementKind::kI && oe.form == LawForm::kLinear && oe.initial)
          v0 = *oe.initial / Divisor(oe, oe.law, "the junction's initial velocity is p0/I");
      }
      AddState(v, name,
               (sys_.form == Formulation::kBoltzmannHamel ? "quasi-velocity of 1-junction " : "generalized velocity of 1-junction ") + j,
               v0);
      sys_.generalized_velocities.push_back(name);
      // With constraint sources (lagrange1 of a closed chain in joint
      // coordinates) the velocity constraints are linear in the generalized
      // velocities: they are projected like momenta of unit inertance.
      bool constrained = false;
      for (const auto& el : m_.elements) constrained = constrained || el.form == LawForm::kConstraint;
      if (constrained) {
        sys_.state_inertia.resize(sys_.states.size(), 0.0);
        sys_.state_inertia.back() = 1.0;
      }
    }
    for (const auto& d : m_.displacements)
      AddState(d.name, d.of.empty() ? "integral of its rate" : "displacement (integral of f_" + d.of + ")", d.initial);
    sys_.state_inertia.resize(sys_.states.size(), 0.0);  // C states, velocities, displacements: not momenta
    for (const auto& p : m_.parameters) {
      sys_.parameter_names.push_back(p.name);
      sys_.parameter_values.push_back(p.value);
      params_.insert(m_.Symbol(p.name));
    }
  }

  symbol Deriv(const std::string& state) { return deriv_of_.at(state); }

  // The parameters' values, formed once (a state's initial value and an
  // inertance are numbers from them).
  const GiNaC::exmap& ParameterValues() {
    if (!parameter_values_) parameter_values_ = m_.ParameterValues();
    return *parameter_values_;
  }
  std::optional<GiNaC::exmap> parameter_values_;

  // ---- pass 1: causal equations --------------------------------------------
  // An element's law, before an equation divides by it (`equation` shows the
  // division): a law that is zero as written is the user's error, located at the
  // element, instead of GiNaC's division by zero.
  static const ex& Divisor(const Element& el, const ex& law, const std::string& equation) {
    if (law.is_zero())
      ThrowAt(el.where, el.name,
              fmt::format("the {} is zero, and the element's causality divides by it", el.law_key),
              fmt::format("a nonzero {}", el.law_key), fmt::format("{}: {}", el.law_key, el.law_text),
              fmt::format("here {}; give it a nonzero value, or leave the element out", equation));
    return law;
  }

  void AddExplicit(const symbol& var, const ex& value, const std::string& origin) {
    CausalEquation eq;
    eq.var = var;
    eq.value = value;
    eq.origin = origin;
    sys_.equations.push_back(eq);
  }
  void AddImplicit(const symbol& var, const ex& residual, const std::string& origin) {
    CausalEquation eq;
    eq.var = var;
    eq.is_explicit = false;
    eq.residual = residual;
    eq.origin = origin;
    sys_.equations.push_back(eq);
  }

  // A bond's effort and flow, looked up once per bond (a junction asks for
  // each of its bonds' variables more than once).
  const symbol& E(int b) { return BondVariables(b).first; }
  const symbol& F(int b) { return BondVariables(b).second; }
  const std::pair<symbol, symbol>& BondVariables(int b) {
    if (bond_variables_.empty()) {
      bond_variables_.reserve(m_.bonds.size());
      for (const auto& bond : m_.bonds)
        bond_variables_.emplace_back(m_.Symbol("e_" + bond.name), m_.Symbol("f_" + bond.name));
    }
    return bond_variables_[b];
  }
  std::vector<std::pair<symbol, symbol>> bond_variables_;

  void ElementEquations(int i) {
    const Element& el = m_.elements[i];
    const std::string origin = KindName(el.kind) + " " + el.name;
    if (IsOnePort(el.kind)) {
      const int b = el.bonds[0];
      const bool into = g_.EffortInto(i, b);
      // Power sign: the law sees the flow into the element.
      const ex s = m_.bonds[b].to == i ? 1 : -1;
      const ex e = E(b), f = F(b);
      const ex law = (s == -1) ? el.law.subs(F(b) == -F(b)) : el.law;
      switch (el.kind) {
        case ElementKind::kSe: case ElementKind::kMSe:
          if (el.artificial == Artificial::kAES) {
            // Lagrange multiplier: solved with the accelerations so that the
            // constraint f = 0 holds (differentiated once, see DerivativeCausality).
            const std::string j = m_.elements[el.attached_to].name;
            symbol lambda("lambda_" + j, "\\lambda_{" + j + "}");
            AddImplicit(lambda, F(b), origin);  // residual replaced by d/dt f below
            AddExplicit(E(b), lambda, origin);
            sys_.multipliers.push_back(lambda);
            aes_.push_back({lambda, F(b)});
          } else if (el.form == LawForm::kConstraint) {
            // An unknown effort source (seed 001): the constraint force that
            // makes the bond's flow follow its law, solved with the accelerations.
            symbol lambda("lambda_" + el.name, "\\lambda_{" + el.name + "}");
            AddImplicit(lambda, F(b) - el.law, origin);  // residual replaced by its d/dt below
            AddExplicit(E(b), lambda, origin);
            sys_.multipliers.push_back(lambda);
            aes_.push_back({lambda, F(b) - el.law});
            sources_.push_back({i, lambda, F(b) - el.law});
          } else {
            AddExplicit(E(b), el.law, origin);
          }
          break;
        case ElementKind::kSf: case ElementKind::kMSf:
          if (el.artificial == Artificial::kASF) {
            // The generalized velocity is a state; its derivative makes the
            // junction's effort balance vanish (the ASF's effort is zero).
            const symbol& v = local_symbols_.at("v_" + m_.elements[el.attached_to].name);
            AddExplicit(F(b), v, origin);
            AddImplicit(Deriv(v.get_name()), E(b), origin + " (effort balance = 0)");
          } else {
            AddExplicit(F(b), el.law, origin);
          }
          break;
        case ElementKind::kI: {
          if (el.form == LawForm::kField) {
            FieldPort(i, into);
            break;
          }
          const symbol& p = m_.Symbol("p_" + el.name);
          if (into) {  // integral: f = Φ(p), dp/dt = e
            AddExplicit(F(b), s * (el.form == LawForm::kLinear ? p / Divisor(el, law, "f = p/I") : law), origin);
            AddExplicit(Deriv(p.get_name()), e, origin);
          } else {  // derivative: p = I f (or Φ(p) = f), e = dp/dt
            if (el.form == LawForm::kLinear) AddExplicit(p, law * s * f, origin);
            else AddImplicit(p, law - s * f, origin);
            derivative_effort_.push_back({E(b), p, origin, 1});
          }
          break;
        }
        case ElementKind::kC: {
          if (el.form == LawForm::kField) {
            FieldPort(i, !into);
            break;
          }
          const symbol& q = m_.Symbol("q_" + el.name);
          if (!into) {  // integral: e = Φ(q), dq/dt = f
            ex v = el.form == LawForm::kLinear      ? q / Divisor(el, law, "e = q/C")
                   : el.form == LawForm::kStiffness ? law * q
                                                    : law;
            AddExplicit(E(b), v, origin);
            AddExplicit(Deriv(q.get_name()), s * f, origin);
          } else {  // derivative: q = C e (or Φ(q) = e), f = dq/dt
            if (el.form == LawForm::kLinear) AddExplicit(q, law * e, origin);
            else if (el.form == LawForm::kStiffness) AddExplicit(q, e / Divisor(el, law, "q = e/k"), origin);
            else AddImplicit(q, law - e, origin);
            derivative_effort_.push_back({F(b), q, origin, s});
          }
          break;
        }
        case ElementKind::kR: {
          if (el.form == LawForm::kCoulomb || el.form == LawForm::kDiode) {
            SwitchedR(i, into, s, origin);
            break;
          }
          if (into) {  // R receives the effort, gives the flow
            if (el.form == LawForm::kLinear) AddExplicit(F(b), s * e / Divisor(el, law, "f = e/R"), origin);
            else if (el.form == LawForm::kFlow) AddExplicit(F(b), s * law, origin);
            else AddImplicit(F(b), law - e, origin);  // e = Φ(f) inverted numerically
          } else {     // R receives the flow, gives the effort
            if (el.form == LawForm::kLinear) AddExplicit(E(b), law * s * f, origin);
            else if (el.form == LawForm::kEffort) AddExplicit(E(b), law, origin);
            else AddImplicit(E(b), law - s * f, origin);  // f = Φ(e) inverted numerically
          }
          break;
        }
        default: Internal("one-port kind");
      }
      return;
    }
    if (IsTwoPort(el.kind)) {
      const int a = el.bonds[0] == -1 ? -1 : (m_.bonds[el.bonds[0]].to == i ? el.bonds[0] : el.bonds[1]);
      const int c = a == el.bonds[0] ? el.bonds[1] : el.bonds[0];
      ex r = el.law;
      if (!IsConstant(r)) {
        // A configuration-dependent modulus becomes a named variable, so that
        // its time derivative appears as such (the paper's t-dot terms).
        symbol t(el.name);
        AddExplicit(t, r, origin);
        sys_.moduli.push_back({t, r});
        r = t;
      }
      if (el.kind == ElementKind::kTF || el.kind == ElementKind::kMTF) {
        // e_a = r e_c, f_c = r f_a (port 1 = a, the bond pointing at the TF).
        if (g_.EffortInto(i, a)) {
          Divisor(el, r, "e2 = e1/r and f1 = f2/r");
          AddExplicit(E(c), E(a) / r, origin);
          AddExplicit(F(a), F(c) / r, origin);
        } else {
          AddExplicit(E(a), r * E(c), origin);
          AddExplicit(F(c), r * F(a), origin);
        }
      } else {
        // e_a = r f_c, e_c = r f_a.
        if (!g_.EffortInto(i, a)) {
          AddExplicit(E(a), r * F(c), origin);
          AddExplicit(E(c), r * F(a), origin);
        } else {
          Divisor(el, r, "f2 = e1/r and f1 = e2/r");
          AddExplicit(F(c), E(a) / r, origin);
          AddExplicit(F(a), E(c) / r, origin);
        }
      }
      return;
    }
    // Junctions.
    const bool zero = el.kind == ElementKind::kZero;
    int strong = -1;
    for (int b : el.bonds)
      if (g_.EffortInto(i, b) == zero) strong = b;
    if (strong < 0) Internal("junction " + el.name + " has no strong bond");
    auto sign = [&](int b) { return m_.bonds[b].to == i ? ex(1) : ex(-1); };
    // The sum's terms are gathered and summed once: adding them one by one
    // made a junction of k bonds cost k^2 (a ground of many elements).
    GiNaC::exvector terms;
    terms.reserve(el.bonds.size());
    for (int b : el.bonds) {
      if (b == strong) continue;
      if (zero) {
        AddExplicit(E(b), E(strong), origin);
        terms.push_back(sign(b) * F(b));
      } else {
        AddExplicit(F(b), F(strong), origin);
        terms.push_back(sign(b) * E(b));
      }
    }
    const ex sum = terms.empty() ? ex(0) : terms.size() == 1 ? terms[0] : ex(GiNaC::add(terms));
    AddExplicit(zero ? F(strong) : E(strong), -sign(strong) * sum, origin);
  }

  // A port of a storage field (Model::fields, docs/methods.md, "Storage
  // fields"); `integral` when the port's causality is integral. The field's
  // first port writes the equations of every port:
  //   I field: M(q) f = p (each row an implicit equation of the block the
  //            flows make; one port: f = p/M), dp_k/dt = e_k + s_k/2 f^T dM/dq_k f
  //            with f the flows into the ports, s_k the sign of the coordinate's
  //            rate against the flow into port k;
  //   C field: e_k = dU/dq_k, dq_k/dt = f_k.
  // A port in derivative causality is an error that names the field.
  void FieldPort(int i, bool integral) {
    const Element& el = m_.elements[i];
    const StorageField& field = m_.fields[el.field];
    const bool inertia = field.kind == ElementKind::kI;
    if (!integral) {
      const int b = el.bonds[0];
      ThrowAt(field.where, field.name,
              fmt::format("port '{}' of {} field '{}' is in derivative causality: its {} is imposed on bond '{}'",
                          el.name, inertia ? "I" : "C", field.name, inertia ? "flow" : "effort", m_.bonds[b].name),
              fmt::format("integral causality on every port (the field's {} are states)",
                          inertia ? "momenta" : "displacements"),
              "derivative causality",
              inertia ? "an I field is formed in integral causality only: use --form state or hamilton (LaCAP, under "
                        "lagrange1|lagrange2, puts every inertia in derivative causality), or remove what imposes "
                        "the port's flow (a flow source, or another inertia rigidly coupled to it)"
                      : "a C field is formed in integral causality only: remove what imposes the port's effort (an "
                        "effort source, or another compliance in parallel with it)");
    }
    if (el.field_port != 0) return;
    const size_t n = field.ports.size();
    std::vector<int> bond(n);
    std::vector<ex> s(n), f(n);
    for (size_t k = 0; k < n; ++k) {
      const int port = field.ports[k];
      bond[k] = m_.elements[port].bonds[0];
      s[k] = m_.bonds[bond[k]].to == port ? 1 : -1;
      f[k] = s[k] * F(bond[k]);  // the flow into port k
    }
    const std::string origin = std::string(inertia ? "I" : "C") + " field " + field.name;
    if (!inertia) {
      for (size_t k = 0; k < n; ++k) {
        const std::string& name = m_.elements[field.ports[k]].name;
        AddExplicit(E(bond[k]), field.energy.diff(m_.Symbol("q_" + name)), origin);
        AddExplicit(Deriv("q_" + name), f[k], origin);
      }
      return;
    }
    for (size_t k = 0; k < n; ++k) {
      const symbol& p = m_.Symbol("p_" + m_.elements[field.ports[k]].name);
      if (n == 1) {
        AddExplicit(F(bond[0]), s[0] * p / field.inertia[0][0], origin);
      } else {
        ex row = -p;
        for (size_t j = 0; j < n; ++j) row += field.inertia[k][j] * f[j];
        AddImplicit(F(bond[k]), row, origin);
      }
      // The coordinate's rate is the bond's flow: s_k times the flow into the port.
      ex force = 0;
      for (size_t a = 0; a < n; ++a)
        for (size_t b = 0; b < n; ++b) {
          const ex dm = field.inertia[a][b].diff(field.coordinates[k]);
          if (!dm.is_zero()) force += f[a] * dm * f[b];
        }
      AddExplicit(Deriv(p.get_name()), E(bond[k]) + s[k] * force / 2, origin);
    }
  }

  // A switched R (Coulomb friction, ideal diode; docs/events.md): its effort is
  // an unknown with one equation per mode — held (stuck, blocking): the flow
  // into it stays zero; otherwise the sliding or forward law. The flow
  // condition is set in DerivativeCausality, once the copies are gone.
  void SwitchedR(int i, bool into, const ex& sign, const std::string& origin) {
    const Element& el = m_.elements[i];
    const int b = el.bonds[0];
    if (into)
      ThrowAt(el.where, el.name,
              fmt::format("the {} '{}' needs the flow on its bond as input, but its causality gives it the effort",
                          el.form == LawForm::kCoulomb ? "Coulomb friction" : "diode", el.name),
              "resistive causality (the element computes its effort from its flow)",
              fmt::format("the effort on bond {} is imposed by its other end", m_.bonds[b].name),
              "its held mode holds the flow, so something else must set the effort across it: put an inertia in "
              "series with a friction, a resistance in series with a diode");
    Switched sw;
    sw.element = i;
    sw.held = symbol("held_" + el.name, "h_{" + el.name + "}");
    sw.direction = symbol("dir_" + el.name, "d_{" + el.name + "}");
    sw.effort = E(b);
    sw.flow = sign * F(b);
    params_.insert(sw.held);
    params_.insert(sw.direction);
    AddImplicit(E(b), F(b), origin);  // residual set in DerivativeCausality
    switched_.push_back(sw);
  }

  // Whether e depends on `target` through the equations (not through states).
  bool DependsOn(const ex& e, const ex& target, SymSet* seen) const {
    SymSet syms;
    CollectSymbols(e, &syms);
    for (const ex& v : syms) {
      if (v.is_equal(target)) return true;
      if (params_.count(v) || state_index_.count(v) || v.is_equal(m_.time) || !seen->insert(v).second) continue;
      const int k = Defining(v);
      if (k < 0 || ex(sys_.equations[k].var).is_equal(target)) continue;
      const CausalEquation& eq = sys_.equations[k];
      if (DependsOn(eq.is_explicit ? eq.value : eq.residual, target, seen)) return true;
    }
    return false;
  }

  void SwitchedEquations() {
    for (auto& sw : switched_) {
      const Element& el = m_.elements[sw.element];
      sw.flow = SubsSymbols(sw.flow, aliases_index_);
      // Held: the flow stays zero — as it stands when it depends on the
      // effort algebraically (a diode behind a resistance), else at the
      // acceleration level, d/dt f = 0, solved with the state derivatives
      // (friction on a mass): the effort is then the force that holding needs.
      SymSet seen;
      const ex held = DependsOn(sw.flow, sw.effort, &seen) ? sw.flow : Dot(sw.flow);
      const ex free = el.form == LawForm::kCoulomb ? ex(sw.effort - sw.direction * el.law) : ex(sw.effort - el.law);
      const int k = Defining(sw.effort);
      if (k < 0) Internal("switched element without its equation");
      sys_.equations[k].residual = pn_select(sw.held, held, free);
    }
  }

  // ---- pass 1b: conditions become modes (docs/events.md) ---------------------
  void ApplyModes() {
    for (auto& eq : sys_.equations) {
      if (eq.is_explicit) eq.value = modes_.Replace(eq.value);
      else eq.residual = modes_.Replace(eq.residual);
    }
    for (const auto& en : modes_.entries()) params_.insert(en.mode);  // constant between events
  }

  // ---- pass 2: trivial copies ------------------------------------------------
  void EliminateCopies() {
    std::set<std::string> derivs;
    for (const auto& d : sys_.derivatives) derivs.insert(d.get_name());
    SymbolIndex<ex> alias;
    for (const auto& eq : sys_.equations)
      if (eq.is_explicit && GiNaC::is_a<symbol>(eq.value) && !derivs.count(eq.var.get_name()))
        alias[eq.var] = eq.value;
    // Resolve chains; a cycle of copies is left as equations (a singular loop).
    GiNaC::exmap resolved;
    for (const auto& [var, target] : alias) {
      ex cur = target;
      std::set<ex, GiNaC::ex_is_less> seen{var};
      while (alias.count(cur) && !seen.count(cur)) {
        seen.insert(cur);
        cur = alias.at(cur);
      }
      if (seen.count(cur)) continue;
      resolved[var] = cur;
    }
    aliases_index_ = SymbolIndex<ex>(resolved.begin(), resolved.end());
    std::vector<CausalEquation> kept;
    for (auto& eq : sys_.equations) {
      if (aliases_index_.count(eq.var)) continue;
      if (eq.is_explicit) eq.value = SubsSymbols(eq.value, aliases_index_);
      else eq.residual = SubsSymbols(eq.residual, aliases_index_);
      kept.push_back(eq);
    }
    sys_.equations = std::move(kept);
    for (auto& de : derivative_effort_) de.port = SubsSymbols(de.port, aliases_index_);
    sys_.aliases = resolved;
  }

  // ---- pass 3: derivative causality ------------------------------------------
  struct DerivativePort {
    ex port;         // the bond variable the element imposes (e for I, f for C)
    symbol storage;  // its momentum or displacement, now an ordinary variable
    std::string origin;
    ex sign;
  };

  // The equation that defines `var` (the first), or -1. Indexed: derivative
  // causality asks for every differentiated variable, and a scan per question
  // made large mechanisms quadratic. The index follows the equations as they
  // are appended and is rebuilt when a hit is stale (equations removed).
  int Defining(const ex& var) const {
    const auto& eqs = sys_.equations;
    for (int pass = 0; pass < 2; ++pass) {
      if (pass == 1 || defining_indexed_ > eqs.size()) {
        defining_.clear();
        defining_indexed_ = 0;
      }
      for (; defining_indexed_ < eqs.size(); ++defining_indexed_)
        defining_.emplace(eqs[defining_indexed_].var, static_cast<int>(defining_indexed_));
      const auto it = defining_.find(var);
      if (it != defining_.end() && ex(eqs[it->second].var).is_equal(var)) return it->second;
    }
    return -1;
  }
  mutable SymbolIndex<int> defining_;
  mutable size_t defining_indexed_ = 0;

  // d/dt of an expression, by the chain rule over its symbols.
  ex Dot(const ex& e) {
    SymSet syms;
    CollectSymbols(e, &syms);
    // By name, not in the set's order: ex_is_less compares hashes, which change from
    // run to run, and DotVar appends equations, so the order would leak into the
    // equation list, the slot layout and the generated code (native cache misses).
    std::vector<ex> ordered(syms.begin(), syms.end());
    std::stable_sort(ordered.begin(), ordered.end(), [](const ex& a, const ex& b) {
      return GiNaC::ex_to<symbol>(a).get_name() < GiNaC::ex_to<symbol>(b).get_name();
    });
    ex out = 0;
    for (const ex& s : ordered) {
      const symbol& sym = GiNaC::ex_to<symbol>(s);
      if (params_.count(s)) continue;
      ex ds;
      if (s.is_equal(m_.time)) ds = 1;
      else if (state_index_.count(s)) ds = sys_.derivatives[state_index_.at(s)];
      else ds = DotVar(sym);
      out += e.diff(sym) * ds;
    }
    return out;
  }

  symbol DotVar(const symbol& v) {
    auto it = dot_.find(v);
    if (it != dot_.end()) return it->second;
    const int k = Defining(v);
    if (k < 0) {
      ThrowAt({}, "",
              fmt::format("the time derivative of '{}' is needed but '{}' is itself a state derivative", v.get_name(),
                          v.get_name()),
              "", "",
              "a storage element in derivative causality depends on another one's derivative (a higher-index "
              "model); add a compliance or an inertia to break the chain");
    }
    symbol dv("d" + v.get_name(), "\\dot{" + TexOf(v.get_name()) + "}");
    dot_.emplace(v, dv);
    const CausalEquation eq = sys_.equations[k];  // copy: the vector grows below
    if (const auto rate = rates_.find(v); rate != rates_.end())
      AddExplicit(dv, SubsSymbols(modes_.Replace(rate->second), aliases_index_), "d/dt of " + eq.origin + " (closed form)");
    else if (eq.is_explicit) AddExplicit(dv, Dot(eq.value), "d/dt of " + eq.origin);
    else AddImplicit(dv, Dot(eq.residual), "d/dt of " + eq.origin);
    return dv;
  }

  bool IsConstant(const ex& e) const {
    SymSet syms;
    CollectSymbols(e, &syms);
    for (const ex& s : syms)
      if (!params_.count(s)) return false;
    return true;
  }

  void DerivativeCausality() {
    SwitchedEquations();
    // Constraints of constrained 0-junctions at acceleration level: d/dt f = 0
    // (one differentiation: the multipliers then appear with the accelerations).
    for (const auto& [lambda, flow] : aes_) {
      const ex f = SubsSymbols(flow, aliases_index_);
      sys_.constraints.push_back(f);
      // Dot, not DotVar: after the copies are gone the flow may be a state itself.
      const ex df = Dot(f);
      for (auto& eq : sys_.equations)
        if (ex(eq.var).is_equal(lambda)) eq.residual = df;
    }
    for (const auto& de : derivative_effort_) {
      if (!GiNaC::is_a<symbol>(de.port)) Internal("derivative port is not a variable");
      // A unit inertance makes the momentum a copy of its flow, eliminated
      // above: differentiate what it copies.
      const ex rate = aliases_index_.count(de.storage) ? Dot(aliases_index_.at(de.storage)) : ex(DotVar(de.storage));
      AddExplicit(GiNaC::ex_to<symbol>(de.port), de.sign * rate, de.origin + " (derivative causality)");
    }
  }

  // ---- passes 4 and 5: sort, tear, program -----------------------------------
  void Sort();
  // The slots of modes, indicators and resets, at the end of the layout (a
  // model without them keeps its layout), and the event program's last steps.
  void EventSlots(SlotLayout& layout, const std::vector<ex>& mode_indicators, const std::vector<ex>& event_indicators,
                  const std::vector<ex>& reset_values, const std::vector<ex>& switch_values) {
    auto assign = [&](const std::string& name, const ex& value) {
      symbol o(name);
      layout.Add(o, name);
      ProgramStep a;
      a.kind = ProgramStep::Kind::kAssign;
      a.target = layout.Slot(o);
      a.value = value;
      sys_.event_program.steps.push_back(a);
      return a.target;
    };
    for (size_t k = 0; k < modes_.entries().size(); ++k) {
      const auto& en = modes_.entries()[k];
      layout.Add(en.mode, en.mode.get_name());
      ModeRow row;
      row.text = ExpressionText(en.indicator) + (en.strict ? " > 0" : " >= 0");
      row.slot = layout.Slot(en.mode);
      row.strict = en.strict ? 1 : 0;
      row.indicator_slot = assign(fmt::format("indicator_{}", en.mode.get_name()), mode_indicators[k]);
      sys_.modes.push_back(row);
    }
    size_t r = 0;
    for (size_t k = 0; k < m_.events.size(); ++k) {
      const Event& ev = m_.events[k];
      EventRow row;
      row.name = ev.name;
      row.stop = ev.stop ? 1 : 0;
      row.strict = ev.strict ? 1 : 0;
      row.indicator_slot = assign("when_" + ev.name, event_indicators[k]);
      for (const auto& reset : ev.resets) {
        row.reset_states.push_back(ResetState(ev, reset));
        row.reset_slots.push_back(assign(fmt::format("reset_{}_{}", ev.name, reset.state), reset_values[r++]));
      }
      sys_.events.push_back(row);
    }
    for (size_t k = 0; k < switched_.size(); ++k) {
      const Switched& sw = switched_[k];
      const Element& el = m_.elements[sw.element];
      layout.Add(sw.held, sw.held.get_name());
      layout.Add(sw.direction, sw.direction.get_name());
      SwitchRow row;
      row.element = el.name;
      row.kind = el.form == LawForm::kCoulomb ? 0 : 1;
      row.held_slot = layout.Slot(sw.held);
      row.direction_slot = layout.Slot(sw.direction);
      row.effort_slot = layout.Slot(sw.effort);
      row.flow_slot = assign("flow_" + el.name, switch_values[4 * k]);
      row.limit_slot = assign("limit_" + el.name, switch_values[4 * k + 1]);
      row.indicator_slots[0] = assign("switch1_" + el.name, switch_values[4 * k + 2]);
      row.indicator_slots[1] = assign("switch2_" + el.name, switch_values[4 * k + 3]);
      sys_.switches.push_back(row);
    }
  }

  // The state an event's reset sets; an error if it is none.
  int ResetState(const Event& ev, const Event::Reset& reset) const {
    for (size_t i = 0; i < sys_.state_names.size(); ++i)
      if (sys_.state_names[i] == reset.state) return static_cast<int>(i);
    ThrowAt(reset.where, "", fmt::format("event '{}' resets '{}', which is not a state of this model", ev.name,
                                         reset.state),
            "a state (a storage element in integral causality, or a displacement)", reset.state,
            "this storage element is in derivative causality: its value follows from other states; reset "
            "those instead");
  }

  const Model& m_;
  const CausalGraph& g_;
  const bool structure_only_;
  EquationSystem sys_;
  SymbolIndex<int> state_index_;
  std::map<std::string, symbol> deriv_of_;
  SymbolSet params_;
  std::vector<DerivativePort> derivative_effort_;
  SymbolIndex<symbol> dot_;
  SymbolIndex<ex> aliases_index_;  // the copies eliminated (sys_.aliases), hashed: looked up for every equation
  // Definitions' time derivatives in closed form (Definition::rate).
  SymbolIndex<ex> rates_;
  std::map<std::string, symbol> local_symbols_;  // generalized velocities
  std::vector<std::pair<symbol, ex>> aes_;       // multiplier, constrained flow
  struct ConstraintSource {
    int element;
    symbol lambda;
    ex flow;  // the flow constraint, = 0
  };
  std::vector<ConstraintSource> sources_;       // Se with `constraint:`
  ModeTable modes_;
  struct Switched {
    int element;
    symbol held, direction;
    ex effort, flow;  // the bond's effort (a variable) and the flow into the element
  };
  std::vector<Switched> switched_;
};

void EquationBuilder::Sort() {
  auto& eqs = sys_.equations;
  const int n = static_cast<int>(eqs.size());
  SymbolIndex<int> def;
  def.reserve(n);
  for (int k = 0; k < n; ++k) {
    if (def.count(eqs[k].var)) Internal("variable defined twice: " + eqs[k].var.get_name());
    def[eqs[k].var] = k;
  }
  std::vector<std::vector<int>> deps(n);
  for (int k = 0; k < n; ++k) {
    SymSet syms;
    CollectSymbols(eqs[k].is_explicit ? eqs[k].value : eqs[k].residual, &syms);
    for (const ex& s : syms) {
      auto it = def.find(s);
      if (it != def.end()) deps[k].push_back(it->second);
      else if (!params_.count(s) && !state_index_.count(s) && !s.is_equal(m_.time))
        Internal("undefined variable " + GiNaC::ex_to<symbol>(s).get_name() + " in " + eqs[k].origin);
    }
    // In equation order, not the set's (hash) order: it decides the component order,
    // hence the slot layout and the step order of the programs.
    std::sort(deps[k].begin(), deps[k].end());
  }
  // Which equations the right-hand side needs, and which only the outputs need.
  std::vector<char> need_rhs(n, 0), need_out(n, 0);
  std::function<void(int, std::vector<char>&)> mark = [&](int k, std::vector<char>& need) {
    if (need[k]) return;
    need[k] = 1;
    for (int d : deps[k]) mark(d, need);
  };
  for (const auto& d : sys_.derivatives) mark(def.at(d), need_rhs);
  std::vector<ex> output_values;
  for (const auto& o : m_.outputs) {
    ex v = SubsSymbols(modes_.Replace(o.value), aliases_index_);
    output_values.push_back(v);
    SymSet syms;
    CollectSymbols(v, &syms);
    for (const ex& s : syms)
      if (def.count(s)) mark(def.at(s), need_out);
  }
  // The constraints program (run after the rhs) computes, for each constraint
  // source, its multiplier, its flow constraint and, where given, its position
  // constraint: what the methods for constrained mechanisms work with.
  std::vector<char> need_con(n, 0);
  std::vector<ex> constraint_values;
  std::vector<ex> coordinate_values;
  for (const auto& d : m_.displacements) {
    if (!d.position) continue;
    ex v = SubsSymbols(*d.position, aliases_index_);
    coordinate_values.push_back(v);
    SymSet syms;
    CollectSymbols(v, &syms);
    for (const ex& s : syms)
      if (def.count(s)) mark(def.at(s), need_con);
  }
  for (const auto& src : sources_) {
    const Element& el = m_.elements[src.element];
    // The multiplier is read from the rhs's slots; the flow and position
    // constraints are computed from (t, x) alone, so that their Jacobians can
    // be formed at states where the rhs would not solve.
    for (const ex& value : {src.flow, el.position ? *el.position : ex(0)}) {
      ex v = SubsSymbols(value, aliases_index_);
      constraint_values.push_back(v);
      SymSet syms;
      CollectSymbols(v, &syms);
      for (const ex& s : syms)
        if (def.count(s)) mark(def.at(s), need_con);
    }
  }
  // The event program (run after the rhs) computes the indicators of the
  // modes and events and the events' reset values.
  std::vector<char> need_evt(n, 0);
  std::vector<ex> event_indicators, reset_values;
  for (const auto& ev : m_.events) {
    event_indicators.push_back(modes_.Replace(ev.indicator));
    for (const auto& r : ev.resets) reset_values.push_back(modes_.Replace(r.value));
  }
  std::vector<ex> mode_indicators;
  for (size_t k = 0; k < modes_.entries().size(); ++k)  // grows while indicators are replaced
    mode_indicators.push_back(modes_.Replace(modes_.entries()[k].indicator));
  for (const auto& en : modes_.entries()) params_.insert(en.mode);
  // Per switched element: its flow, its limit and its two indicators (the
  // first: held, effort - limit, else the flow; the second: held, effort +
  // limit for friction, else 1).
  std::vector<ex> switch_values;
  for (const auto& sw : switched_) {
    const Element& el = m_.elements[sw.element];
    const bool friction = el.form == LawForm::kCoulomb;
    const ex limit = friction ? *el.static_limit : el.law;
    switch_values.push_back(sw.flow);
    switch_values.push_back(limit);
    switch_values.push_back(pn_select(sw.held, sw.effort - limit, sw.flow));
    switch_values.push_back(friction ? pn_select(sw.held, sw.effort + limit, 1) : ex(1));
  }
  for (auto* list : {&event_indicators, &reset_values, &mode_indicators, &switch_values})
    for (ex& v : *list) {
      v = SubsSymbols(v, aliases_index_);
      SymSet syms;
      CollectSymbols(v, &syms);
      for (const ex& s : syms)
        if (def.count(s)) mark(def.at(s), need_evt);
    }
  const auto comps = structure::StronglyConnectedComponents(deps);
  // (The programs check their resets in EventSlots.)
  if (structure_only_)
    for (const auto& ev : m_.events)
      for (const auto& reset : ev.resets) ResetState(ev, reset);

  // Slot layout.
  SlotLayout layout;
  if (!structure_only_) {
    layout.Add(m_.time, "t");
    sys_.time_slot = 0;
    sys_.first_parameter_slot = 1;
    for (const auto& p : m_.parameters) layout.Add(m_.Symbol(p.name), p.name);
    sys_.first_state_slot = layout.size();
    for (size_t i = 0; i < sys_.states.size(); ++i) layout.Add(sys_.states[i], sys_.state_names[i]);
    sys_.first_derivative_slot = layout.size();
    for (const auto& d : sys_.derivatives) layout.Add(d, d.get_name());
    for (const auto& comp : comps)
      for (int k : comp)
        if (need_rhs[k] || need_out[k] || need_con[k] || need_evt[k]) layout.Add(eqs[k].var, eqs[k].var.get_name());
  }

  std::set<std::string> deriv_names;
  for (const auto& d : sys_.derivatives) deriv_names.insert(d.get_name());
  // The outputs program computes what the outputs need from (t, x) alone, so
  // that recording outputs costs only that — unless it would repeat an
  // implicit block of the rhs (constraint forces, say): then it runs after the
  // rhs and holds only what the rhs does not compute.
  for (const auto& comp : comps)
    if (need_rhs[comp[0]] && need_out[comp[0]] && (comp.size() > 1 || structure::HasSelfLoop(deps, comp[0])))
      sys_.outputs_after_rhs = true;
  std::vector<Program*> progs;
  for (const auto& comp : comps) {
    progs.clear();
    if (need_rhs[comp[0]]) progs.push_back(&sys_.rhs);
    if (need_out[comp[0]] && !(sys_.outputs_after_rhs && need_rhs[comp[0]])) progs.push_back(&sys_.outputs);
    if (need_con[comp[0]]) progs.push_back(&sys_.constraint_program);
    if (need_evt[comp[0]] && !need_rhs[comp[0]]) progs.push_back(&sys_.event_program);
    if (progs.empty()) continue;
    if (comp.size() == 1 && !structure::HasSelfLoop(deps, comp[0])) {
      if (structure_only_) continue;
      ProgramStep st;
      st.kind = ProgramStep::Kind::kAssign;
      st.target = layout.Slot(eqs[comp[0]].var);
      st.value = eqs[comp[0]].value;
      for (Program* prog : progs) prog->steps.push_back(st);
      continue;
    }
    // A cyclic group: tear it. Implicit equations are always torn; state
    // derivatives are preferred tears, so that derivative causality gives
    // M(x) dx/dt = f(x, t) in the state derivatives.
    std::vector<int> forced, preferred;
    bool has_deriv = false;
    for (int k : comp) {
      if (!eqs[k].is_explicit) forced.push_back(k);
      if (deriv_names.count(eqs[k].var.get_name())) {
        preferred.push_back(k);
        has_deriv = true;
      }
    }
    const auto tearing = structure::Tear(deps, comp, forced, preferred);
    GiNaC::exmap chain;  // non-tear variables in terms of the tears
    if (!structure_only_)
      for (int k : tearing.ordered) chain[eqs[k].var] = SubsSymbols(eqs[k].value, chain);
    ProgramStep st;
    st.kind = ProgramStep::Kind::kBlock;
    ImplicitBlock info;
    std::set<std::string> origins;
    for (int k : comp) {
      info.variables.push_back(eqs[k].var.get_name());
      std::string o = eqs[k].origin;
      if (o.rfind("d/dt of ", 0) == 0) o = o.substr(8);
      origins.insert(o.substr(0, o.find(" (")));
    }
    std::vector<symbol> unknowns;
    for (int k : tearing.tears) {
      unknowns.push_back(eqs[k].var);
      info.unknowns.push_back(eqs[k].var.get_name());
      if (structure_only_) continue;
      st.unknowns.push_back(layout.Slot(eqs[k].var));
      ex r = eqs[k].is_explicit ? ex(eqs[k].var) - eqs[k].value : eqs[k].residual;
      st.residuals.push_back(SubsSymbols(r, chain));
    }
    // The Jacobian, differentiating each residual only by the unknowns it
    // contains (a large block is sparse: a constraint-force block of an
    // N-link chain has O(N) non-zeros per row of O(N) unknowns).
    bool linear = !structure_only_;
    const SymSet unknown_set(unknowns.begin(), unknowns.end());
    for (const ex& r : st.residuals) {
      SymSet in_r;
      CollectSymbols(r, &in_r);
      for (const symbol& u : unknowns) {
        if (!in_r.count(u)) {
          st.jacobian.push_back(0);
          continue;
        }
        ex j = Differentiate(r, u);
        st.jacobian.push_back(j);
        if (!linear) continue;
        SymSet in_j;
        CollectSymbols(j, &in_j);
        for (const ex& s : in_j)
          if (unknown_set.count(s)) linear = false;
      }
    }
    st.linear = info.linear = linear;
    info.derivative_causality = has_deriv;
    // The label names what the user wrote: for the constraint forces of a
    // mechanism, its joints; otherwise the elements (at most 40).
    std::vector<std::string> joints;
    bool all_joint_forces = !unknowns.empty();
    for (const symbol& u : unknowns) {
      const Element* src = nullptr;
      for (const auto& cs : sources_)
        if (ex(cs.lambda).is_equal(u)) src = &m_.elements[cs.element];
      if (!src) {
        all_joint_forces = false;
        break;
      }
      if (std::find(joints.begin(), joints.end(), src->joint) == joints.end()) joints.push_back(src->joint);
    }
    if (all_joint_forces) {
      info.label = fmt::format("constraint forces of joint{} {} ({} unknowns, solved with the accelerations)",
                               joints.size() > 1 ? "s" : "", fmt::join(joints, ", "), unknowns.size());
    } else {
      std::string names;
      int shown = 0;
      for (const auto& o : origins)
        if (shown++ < 40) names += (names.empty() ? "" : ", ") + o;
      if (origins.size() > 40) names += fmt::format(" and {} more", origins.size() - 40);
      std::string solve;
      for (size_t k = 0; k < info.unknowns.size() && k < 12; ++k) solve += (k ? ", " : "") + info.unknowns[k];
      if (info.unknowns.size() > 12) solve += fmt::format(" and {} more", info.unknowns.size() - 12);
      info.label = fmt::format("{} among {} (solve for {})", has_deriv ? "derivative causality" : "algebraic loop",
                               names, solve);
    }
    st.label = info.label;
    if (structure_only_) {
      sys_.blocks.push_back(info);
      continue;
    }
    for (Program* prog : progs) {
      prog->steps.push_back(st);
      for (int k : tearing.ordered) {
        ProgramStep a;
        a.kind = ProgramStep::Kind::kAssign;
        a.target = layout.Slot(eqs[k].var);
        a.value = eqs[k].value;
        prog->steps.push_back(a);
      }
    }
    sys_.blocks.push_back(info);
  }
  if (structure_only_) return;
  for (size_t i = 0; i < m_.outputs.size(); ++i) {
    symbol o("out_" + m_.outputs[i].name);
    layout.Add(o, m_.outputs[i].name);
    sys_.output_names.push_back(m_.outputs[i].name);
    sys_.output_slots.push_back(layout.Slot(o));
    ProgramStep a;
    a.kind = ProgramStep::Kind::kAssign;
    a.target = layout.Slot(o);
    a.value = output_values[i];
    sys_.outputs.steps.push_back(a);
  }
  for (size_t i = 0; i < sources_.size(); ++i) {
    const Element& el = m_.elements[sources_[i].element];
    ConstraintRow row;
    row.source = el.name;
    row.joint = el.joint;
    row.direction = el.direction;
    row.multiplier_slot = layout.Slot(sources_[i].lambda);
    const char* what[2] = {"flow", "position"};
    int* slot[2] = {&row.velocity_slot, &row.position_slot};
    for (int k = 0; k < 2; ++k) {
      if (k == 1 && !el.position) continue;
      symbol o(fmt::format("con_{}_{}", what[k], el.name));
      layout.Add(o, o.get_name());
      *slot[k] = layout.Slot(o);
      ProgramStep a;
      a.kind = ProgramStep::Kind::kAssign;
      a.target = layout.Slot(o);
      a.value = constraint_values[2 * i + k];
      sys_.constraint_program.steps.push_back(a);
    }
    sys_.constraint_rows.push_back(row);
  }
  {
    size_t k = 0;
    for (const auto& d : m_.displacements) {
      if (!d.position) continue;
      symbol o("coord_" + d.name);
      layout.Add(o, o.get_name());
      ProgramStep a;
      a.kind = ProgramStep::Kind::kAssign;
      a.target = layout.Slot(o);
      a.value = coordinate_values[k++];
      sys_.constraint_program.steps.push_back(a);
      EquationSystem::CoordinateRow row;
      for (size_t i = 0; i < sys_.state_names.size(); ++i)
        if (sys_.state_names[i] == d.name) row.state = static_cast<int>(i);
      row.slot = layout.Slot(o);
      row.period = d.period;
      sys_.coordinate_rows.push_back(row);
    }
    for (const auto& name : m_.assembly_held)
      for (size_t i = 0; i < sys_.state_names.size(); ++i)
        if (sys_.state_names[i] == name) sys_.held_states.push_back(static_cast<int>(i));
  }
  EventSlots(layout, mode_indicators, event_indicators, reset_values, switch_values);
  sys_.num_slots = layout.size();
  sys_.rhs.symbols = sys_.outputs.symbols = sys_.constraint_program.symbols = layout.symbols;
  sys_.rhs.slot_names = sys_.outputs.slot_names = sys_.constraint_program.slot_names = layout.names;
  sys_.event_program.symbols = layout.symbols;
  sys_.event_program.slot_names = layout.names;
}

}  // namespace

Formulation ParseFormulation(const std::string& name) {
  if (name == "state") return Formulation::kState;
  if (name == "hamilton") return Formulation::kHamilton;
  if (name == "lagrange1") return Formulation::kLagrange1;
  if (name == "lagrange2") return Formulation::kLagrange2;
  if (name == "boltzmann-hamel") return Formulation::kBoltzmannHamel;
  ThrowAt({}, "", fmt::format("unknown formulation '{}'", name),
          "state, lagrange1, lagrange2, hamilton or boltzmann-hamel", name);
}

std::string FormulationName(Formulation f) {
  switch (f) {
    case Formulation::kState: return "state";
    case Formulation::kHamilton: return "hamilton";
    case Formulation::kLagrange1: return "lagrange1";
    case Formulation::kLagrange2: return "lagrange2";
    case Formulation::kBoltzmannHamel: return "boltzmann-hamel";
  }
  return "?";
}

CausalityOptions OptionsFor(Formulation f, const Model& model) {
  CausalityOptions o;
  switch (f) {
    case Formulation::kState: o.procedure = CausalityProcedure::kSCAP; break;
    case Formulation::kHamilton: o.procedure = CausalityProcedure::kHaCAP; break;
    case Formulation::kLagrange1:
      o.procedure = CausalityProcedure::kLaCAP;
      o.generalized = model.generalized;  // all of them: the dependent ones bring multipliers
      break;
    case Formulation::kLagrange2:
      o.procedure = CausalityProcedure::kLaCAP;
      o.generalized = model.independent.empty() ? ProposeIndependentJunctions(model) : model.independent;
      break;
    case Formulation::kBoltzmannHamel:
      o.procedure = CausalityProcedure::kBHCAP;  // on the model's quasi-velocities (an error if none)
      break;
  }
  return o;
}

namespace {
Formulation FormOf(const CausalGraph& g) {
  switch (g.procedure) {
    case CausalityProcedure::kHaCAP: return Formulation::kHamilton;
    case CausalityProcedure::kBHCAP: return Formulation::kBoltzmannHamel;
    case CausalityProcedure::kLaCAP: case CausalityProcedure::kLCAP:
      return g.constrained.empty() ? Formulation::kLagrange2 : Formulation::kLagrange1;
    default: return Formulation::kState;
  }
}
}  // namespace

EquationSystem BuildEquations(const Model& model, const CausalGraph& graph) {
  StageScope stage(fmt::format("forming the equations ({} bonds)", model.bonds.size()));
  return EquationBuilder(model, graph).Build();
}

EquationSystem BuildEquationStructure(const Model& model, const CausalGraph& graph) {
  StageScope stage(fmt::format("sorting the equations ({} bonds)", model.bonds.size()));
  return EquationBuilder(model, graph, /*structure_only=*/true).Build();
}

}  // namespace paynter
