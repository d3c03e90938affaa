// The causality engine and the procedures that drive it (see causality.h).
// The engine imposes a causality on a bond and propagates it through the
// junction structure (Karnopp, Margolis & Rosenberg, "System Dynamics", ch. 5);
// a procedure is the order of its choices and its answer to a conflict.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>

#include "paynter/causality.h"
#include "paynter/progress.h"

namespace paynter {

namespace {
const std::vector<std::pair<std::string, CausalityProcedure>>& ProcedureTable() {
  static const std::vector<std::pair<std::string, CausalityProcedure>> t = {
      {"SCAP", CausalityProcedure::kSCAP},
      {"HaCAP", CausalityProcedure::kHaCAP},
      {"LaCAP", CausalityProcedure::kLaCAP},
      {"LCAP", CausalityProcedure::kLCAP},
      {"RCAP", CausalityProcedure::kRCAP},
      {"BHCAP", CausalityProcedure::kBHCAP}};
  return t;
}
// The Lagrangian procedures (LaCAP, LCAP, BHCAP): artificial flow sources on
// the generalized (or quasi-velocity) junctions, added to the model.
bool AddsArtificialSources(CausalityProcedure p) {
  return p == CausalityProcedure::kLaCAP || p == CausalityProcedure::kLCAP || p == CausalityProcedure::kBHCAP;
}
}  // namespace

CausalityProcedure ParseProcedure(const std::string& name) {
  for (const auto& [n, p] : ProcedureTable()) {
    std::string a = n, b = name;
    std::transform(a.begin(), a.end(), a.begin(), ::tolower);
    std::transform(b.begin(), b.end(), b.begin(), ::tolower);
    if (a == b) return p;
  }
  ThrowAt({}, "", fmt::format("unknown causality procedure '{}'", name), "SCAP, HaCAP, LaCAP, LCAP, RCAP or BHCAP",
          name, "see docs/methods.md for what each procedure does");
}

std::string ProcedureName(CausalityProcedure p) {
  for (const auto& [n, q] : ProcedureTable())
    if (q == p) return n;
  return "?";
}

namespace {

class Engine {
 public:
  Engine(Model* m, CausalityProcedure proc) : m_(*m), proc_(proc) {
    g_.procedure = proc;
    g_.effort_to.assign(m_.bonds.size(), -1);
    g_.reason.assign(m_.bonds.size(), "");
  }

  // ---- procedures ----------------------------------------------------------
  CausalGraph Run(const std::vector<int>& generalized) {
    // The Lagrangian procedures make no choice before their artificial flow
    // sources are on: a generalized junction left with one open bond by its
    // sources (an actuator, say) would otherwise take its flow from that bond.
    hold_choices_ = Lagrangian();
    Sources();
    switch (proc_) {
      case CausalityProcedure::kSCAP:
        Storage(true, true);
        break;
      case CausalityProcedure::kHaCAP:
        for (int j : generalized) {
          const int i = InertiaOn(j);
          if (i < 0) {
            ThrowAt(
                m_.elements[j].where, m_.elements[j].name,
                "HaCAP puts the I element of each independent generalized 1-junction in integral causality",
                "an I element on 1-junction '" + m_.elements[j].name + "'", "none",
                "attach the coordinate's inertia to its 1-junction, or choose another junction under 'independent:'");
          }
          if (g_.effort_to[m_.elements[i].bonds[0]] < 0) Impose(i, false, "HaCAP: integral " + m_.elements[i].name);
        }
        g_.generalized = generalized;
        Storage(true, true);
        break;
      case CausalityProcedure::kLaCAP:
      case CausalityProcedure::kLCAP:
      case CausalityProcedure::kBHCAP:
        // BHCAP (Boltzmann-Hamel; Marquis-Favre and Scavarda, ASME J. Dyn.
        // Sys. Meas. Control 124(3):457, 2002) is LaCAP with the artificial
        // flow sources on the quasi-velocity junctions: their flows w need
        // not be rates of coordinates (q' = B(q) w, the displacements' rates).
        // Every ASF first, propagated together, so that the flows of two
        // generalized junctions meet at the 0-junctions that constrain them.
        for (int j : generalized) AttachAsf(j, /*propagate=*/false);
        hold_choices_ = false;
        Propagate();
        g_.generalized = generalized;
        Storage(true, false);   // C integral
        Storage(false, false);  // I derivative: its momentum is a function of the velocities
        if (proc_ == CausalityProcedure::kLCAP) g_.proposed = true;
        break;
      case CausalityProcedure::kRCAP:
        // Nothing beyond what the sources force: the rest stays relaxed.
        for (size_t b = 0; b < g_.effort_to.size(); ++b)
          if (g_.effort_to[b] < 0) g_.relaxed.push_back(static_cast<int>(b));
        Classify();
        return std::move(g_);
    }
    Resistors();
    AnyBond();
    VectorConstraints();
    Classify();
    return std::move(g_);
  }

  // Seed 003's causality constraints of vector bond graphs, on the scalar
  // bonds they were expanded into: C1, every component of a vector bond has
  // the same causality; C2, cross-product transformers flow-in-flow-out and
  // gyrators flow-in (imposed in Sources(), checked here).
  void VectorConstraints() {
    std::map<std::string, std::pair<int, bool>> first;  // vector bond -> (component bond, effort to its 'to')
    for (size_t b = 0; b < m_.bonds.size(); ++b) {
      const Bond& bond = m_.bonds[b];
      if (bond.origin.empty() || g_.effort_to[b] < 0) continue;
      const bool to_to = g_.effort_to[b] == bond.to;
      auto [it, fresh] = first.emplace(bond.origin, std::pair{static_cast<int>(b), to_to});
      if (!fresh && it->second.second != to_to)
        Conflict(bond.to, {it->second.first, static_cast<int>(b)},
                 fmt::format("constraint C1: the components of vector bond '{}' have different causalities", bond.origin));
    }
    for (size_t i = 0; i < m_.elements.size(); ++i) {
      const Element& e = m_.elements[i];
      if (e.fixed == Element::Fixed::kNone) continue;
      const int el = static_cast<int>(i);
      const int a = m_.bonds[e.bonds[0]].to == el ? e.bonds[0] : e.bonds[1];
      const int c = a == e.bonds[0] ? e.bonds[1] : e.bonds[0];
      const bool ok = g_.effort_to[a] == Other(a, el) &&
                      g_.effort_to[c] == (e.fixed == Element::Fixed::kFlowInFlowOut ? el : Other(c, el));
      if (!ok)
        Conflict(el, {a, c},
                 fmt::format("constraint C2: {} '{}' must take {}", KindName(e.kind), e.origin.empty() ? e.name : e.origin,
                             e.fixed == Element::Fixed::kFlowInFlowOut ? "flow in and give flow out (a cross product)"
                                                                       : "both flows in (a gyrator)"));
    }
  }

 private:
  bool Lagrangian() const { return AddsArtificialSources(proc_); }

  int InertiaOn(int junction) const {
    for (int b : m_.elements[junction].bonds) {
      const int o = Other(b, junction);
      if (m_.elements[o].kind == ElementKind::kI) return o;
    }
    return -1;
  }

  void Sources() {
    for (size_t i = 0; i < m_.elements.size(); ++i) {
      const Element& e = m_.elements[i];
      if (!IsSource(e.kind) || e.artificial != Artificial::kNone) continue;
      Impose(static_cast<int>(i), e.kind == ElementKind::kSe || e.kind == ElementKind::kMSe, "source " + e.name);
    }
    // Fixed-causality elements: the scalar parts of vector cross-product
    // transformers (flow in on port 1, flow out on port 2) and gyrators (flow
    // in on both ports) — seed 003, constraint C2. Other laws are inverted
    // numerically when causality asks, so they fix nothing.
    for (size_t i = 0; i < m_.elements.size(); ++i) {
      const Element& e = m_.elements[i];
      if (e.fixed == Element::Fixed::kNone) continue;
      const int el = static_cast<int>(i);
      const int a = m_.bonds[e.bonds[0]].to == el ? e.bonds[0] : e.bonds[1];  // port 1
      const int c = a == e.bonds[0] ? e.bonds[1] : e.bonds[0];
      const std::string why = "fixed causality of " + (e.origin.empty() ? e.name : e.origin);
      // Flow in on port 1: the element gives the effort there.
      if (g_.effort_to[a] < 0) Set(a, Other(a, el), why);
      // Port 2: flow out (TF: receives the effort) or flow in (GY: gives the effort).
      if (g_.effort_to[c] < 0) Set(c, e.fixed == Element::Fixed::kFlowInFlowOut ? el : Other(c, el), why);
      Propagate();
    }
  }

  // Storage elements of one kind (C when `capacitors`, else I) not yet causal,
  // in integral or derivative causality; `both` = C and I in element order (SCAP).
  void Storage(bool integral, bool both) {
    const size_t n = m_.elements.size();
    for (size_t i = 0; i < n; ++i) {
      const Element& e = m_.elements[i];
      if (!IsStorage(e.kind) || g_.effort_to[e.bonds[0]] >= 0) continue;
      const bool is_c = e.kind == ElementKind::kC;
      if (!both && is_c != integral) continue;  // pass 1: C (integral); pass 2: I (derivative)
      const bool want_integral = both ? true : is_c;
      // Integral: C imposes effort, I receives it. Derivative: the reverse.
      const bool effort_out = want_integral ? is_c : !is_c;
      Impose(static_cast<int>(i), effort_out, (want_integral ? "integral " : "derivative ") + e.name);
    }
  }

  void Resistors() {
    // Switched elements (Coulomb friction, diodes) first: they need the flow
    // in (their held mode holds it), so they take it where there is a choice.
    for (size_t i = 0; i < m_.elements.size(); ++i) {
      const Element& e = m_.elements[i];
      if (e.kind != ElementKind::kR || g_.effort_to[e.bonds[0]] >= 0) continue;
      if (e.form == LawForm::kCoulomb || e.form == LawForm::kDiode) Impose(static_cast<int>(i), true, "switched " + e.name);
    }
    for (size_t i = 0; i < m_.elements.size(); ++i) {
      const Element& e = m_.elements[i];
      if (e.kind != ElementKind::kR || g_.effort_to[e.bonds[0]] >= 0) continue;
      // The causality its law is written in (e = R f when linear), so that no
      // law needs inverting when there is a choice.
      Impose(static_cast<int>(i), e.form != LawForm::kFlow, "arbitrary " + e.name);
    }
  }

  void AnyBond() {
    for (size_t b = 0; b < m_.bonds.size(); ++b) {
      if (g_.effort_to[b] >= 0) continue;
      Set(static_cast<int>(b), m_.bonds[b].to, "arbitrary bond " + m_.bonds[b].name);
      Propagate();
    }
  }

  void Classify() {
    for (size_t i = 0; i < m_.elements.size(); ++i) {
      const Element& e = m_.elements[i];
      if (!IsStorage(e.kind)) continue;
      const int b = e.bonds[0];
      if (g_.effort_to[b] < 0) continue;  // relaxed (RCAP)
      const bool into = g_.effort_to[b] == static_cast<int>(i);
      const bool integral = e.kind == ElementKind::kI ? into : !into;
      (integral ? g_.integral_storage : g_.derivative_storage).push_back(static_cast<int>(i));
    }
  }

  // ---- artificial sources ----------------------------------------------------
  int AddArtificial(int junction, Artificial kind) {
    Element a;
    const std::string base = (kind == Artificial::kASF ? "ASF_" : "AES_") + m_.elements[junction].name;
    a.name = base;
    for (int k = 2; m_.FindElement(a.name) >= 0; ++k) a.name = base + "_" + std::to_string(k);
    a.kind = kind == Artificial::kASF ? ElementKind::kMSf : ElementKind::kMSe;
    a.artificial = kind;
    a.attached_to = junction;
    a.where = m_.elements[junction].where;
    a.law = 0;
    a.law_text = kind == Artificial::kASF ? "generalized velocity" : "Lagrange multiplier";
    const int ei = static_cast<int>(m_.elements.size());
    m_.elements.push_back(a);
    Bond b;
    b.name = "b_" + a.name;
    b.from = ei;
    b.to = junction;
    b.where = a.where;
    const int bi = static_cast<int>(m_.bonds.size());
    m_.bonds.push_back(b);
    m_.elements[ei].bonds.push_back(bi);
    m_.elements[junction].bonds.push_back(bi);
    // Register the new bond's variables so that equations can name them.
    for (const std::string& n : {"e_" + b.name, "f_" + b.name}) m_.symbols.emplace(n, GiNaC::symbol(n));
    m_.symbols.emplace("e_" + a.name, m_.Symbol("e_" + b.name));
    m_.symbols.emplace("f_" + a.name, m_.Symbol("f_" + b.name));
    g_.effort_to.push_back(-1);
    g_.reason.push_back("");
    return ei;
  }

  void AttachAsf(int junction, bool propagate) {
    const int a = AddArtificial(junction, Artificial::kASF);
    // The ASF imposes the flow: the junction gives it the effort.
    Set(m_.elements[a].bonds[0], a, "ASF on generalized junction " + m_.elements[junction].name);
    if (propagate) Propagate();
  }

  // ---- the engine ------------------------------------------------------------
  int Other(int bond, int element) const {
    const Bond& b = m_.bonds[bond];
    return b.from == element ? b.to : b.from;
  }

  // A one-port element's causality: effort_out = the element imposes the effort.
  void Impose(int element, bool effort_out, const std::string& reason) {
    const int b = m_.elements[element].bonds[0];
    const int receiver = effort_out ? Other(b, element) : element;
    if (g_.effort_to[b] >= 0 && g_.effort_to[b] != receiver) {
      const Element& e = m_.elements[element];
      if (IsSource(e.kind)) {
        CausalConflict c;
        c.element = element;
        c.bonds = {b};
        c.message = fmt::format("source {} cannot impose its {} on bond {}: it is already imposed by {}", e.name,
                                effort_out ? "effort" : "flow", m_.bonds[b].name, g_.reason[b]);
        g_.conflicts.push_back(c);
      }
      return;
    }
    Set(b, receiver, reason);
    Propagate();
  }

  void Set(int bond, int receiver, const std::string& reason) {
    if (g_.effort_to[bond] >= 0) return;  // conflicts are reported where they are detected
    g_.effort_to[bond] = receiver;
    g_.reason[bond] = reason;
    queue_.push_back(m_.bonds[bond].from);
    queue_.push_back(m_.bonds[bond].to);
  }

  void Conflict(int element, std::vector<int> bonds, const std::string& what) {
    for (const auto& c : g_.conflicts)
      if (c.element == element) return;  // one report per element
    std::string names;
    for (int b : bonds) names += (names.empty() ? "" : ", ") + m_.bonds[b].name;
    CausalConflict c;
    c.element = element;
    c.bonds = std::move(bonds);
    c.message = fmt::format("causal conflict at {} '{}': {} (bonds {})", KindName(m_.elements[element].kind),
                            m_.elements[element].name, what, names);
    g_.conflicts.push_back(std::move(c));
  }

  // Propagates until nothing more follows. The Lagrangian procedures defer the
  // one inference that chooses rather than carries causality — a junction's
  // last open bond made its strong bond — until every flow imposed by the
  // artificial sources has travelled as far as it can: otherwise a front from
  // one generalized velocity could turn a transformer against another, where
  // the procedure wants the two flows to meet at a constrained 0-junction.
  void Propagate() {
    for (;;) {
      if (queue_.empty()) {
        if (deferred_.empty() || hold_choices_) return;
        const int el = deferred_.front();
        deferred_.pop_front();
        Step(el, /*allow_choice=*/true);
        continue;
      }
      const int el = queue_.front();
      queue_.pop_front();
      Step(el, !Lagrangian());
    }
  }

  void Step(int el, bool allow_choice) {
    {
      const ElementKind kind = m_.elements[el].kind;
      const std::string why = "propagated at " + m_.elements[el].name;
      if (IsJunction(kind)) {
        // 0-junction: exactly one bond brings the effort in ("strong" bond).
        // 1-junction: exactly one bond takes the effort out (it sets the flow).
        const bool zero = kind == ElementKind::kZero;
        std::vector<int> strong, unassigned;
        for (int b : m_.elements[el].bonds) {
          if (g_.effort_to[b] < 0) unassigned.push_back(b);
          else if ((g_.effort_to[b] == el) == zero) strong.push_back(b);
        }
        if (strong.size() > 1) {
          Conflict(el, strong,
                   zero ? "more than one bond imposes the effort on the 0-junction"
                        : "more than one bond imposes the flow on the 1-junction");
        } else if (strong.size() == 1) {
          for (int b : unassigned) Set(b, zero ? Other(b, el) : el, why);
        } else if (unassigned.size() == 1) {
          if (allow_choice) Set(unassigned[0], zero ? el : Other(unassigned[0], el), why);
          else deferred_.push_back(el);
        } else if (unassigned.empty()) {
          if (zero && Lagrangian()) {
            // A constrained 0-junction: its flow balance becomes a kinematic
            // constraint, its effort a Lagrange multiplier.
            const int a = AddArtificial(el, Artificial::kAES);
            Set(m_.elements[a].bonds[0], el, "AES on constrained junction " + m_.elements[el].name);
            g_.constrained.push_back(el);
          } else if (!zero && proc_ == CausalityProcedure::kLCAP) {
            // Nothing sets this 1-junction's flow: it is a generalized velocity.
            AttachAsf(el, false);
            g_.generalized.push_back(el);
            g_.proposed = true;
          } else {
            Conflict(el, m_.elements[el].bonds,
                     zero ? "no bond imposes the effort on the 0-junction" : "no bond imposes the flow on the 1-junction");
          }
        }
      } else if (IsTwoPort(kind)) {
        const int a = m_.elements[el].bonds[0], c = m_.elements[el].bonds[1];
        const bool gy = kind == ElementKind::kGY || kind == ElementKind::kMGY;
        for (auto [known, other] : {std::pair{a, c}, std::pair{c, a}}) {
          if (g_.effort_to[known] < 0) continue;
          const bool into = g_.effort_to[known] == el;
          // TF passes the effort through; GY turns a flow into an effort.
          const bool other_into = gy ? into : !into;
          const int receiver = other_into ? el : Other(other, el);
          if (g_.effort_to[other] < 0) Set(other, receiver, why);
          else if (g_.effort_to[other] != receiver)
            Conflict(el, {a, c}, gy ? "a gyrator takes both efforts in or both flows in"
                                    : "a transformer takes the effort in on one side and gives it out on the other");
        }
      }
    }
  }

  Model& m_;
  CausalityProcedure proc_;
  CausalGraph g_;
  std::deque<int> queue_, deferred_;
  bool hold_choices_ = false;  // deferred choices wait (Lagrangian procedures, before the ASFs)
};

std::vector<int> Generalized(const Model& model, const CausalityOptions& options) {
  if (!options.generalized.empty()) return options.generalized;
  // SCAP and RCAP choose no generalized junctions: no proposal (it ran SCAP
  // once more on a copy of the model).
  if (options.procedure == CausalityProcedure::kSCAP || options.procedure == CausalityProcedure::kRCAP) return {};
  if (options.procedure == CausalityProcedure::kBHCAP) {
    if (!model.quasi_velocities.empty()) return model.quasi_velocities;
    ThrowAt({model.file}, "",
            "BHCAP puts artificial flow sources on the quasi-velocity 1-junctions, and the model declares none",
            "a 'quasi_velocities:' list of 1-junctions (the displacements' rates giving q' = B(q) w), or a "
            "'multibody:' section",
            "no quasi_velocities",
            "declare them (docs/model-format.md, \"Quasi-velocities\"); with quasi-velocities that are the "
            "generalized velocities, BHCAP is LaCAP: use --procedure LaCAP");
  }
  if (options.procedure == CausalityProcedure::kLaCAP && !model.generalized.empty()) return model.generalized;
  if (options.procedure == CausalityProcedure::kHaCAP && !model.independent.empty()) return model.independent;
  if (options.procedure == CausalityProcedure::kLaCAP && !model.independent.empty()) return model.independent;
  return ProposeIndependentJunctions(model);
}

}  // namespace

std::vector<int> ProposeIndependentJunctions(const Model& model) {
  Model copy = model;
  CausalGraph g = Engine(&copy, CausalityProcedure::kSCAP).Run({});
  std::vector<int> out;
  for (int i : g.integral_storage) {
    const Element& e = model.elements[i];
    if (e.kind != ElementKind::kI) continue;
    const int b = e.bonds[0];
    const int j = model.bonds[b].from == i ? model.bonds[b].to : model.bonds[b].from;
    if (model.elements[j].kind == ElementKind::kOne && std::find(out.begin(), out.end(), j) == out.end())
      out.push_back(j);
  }
  return out;
}

CausalGraph AssignCausality(Model& model, const CausalityOptions& options) {
  StageScope stage(fmt::format("assigning causality ({})", ProcedureName(options.procedure)));
  const auto generalized = Generalized(model, options);
  CausalGraph g = Engine(&model, options.procedure).Run(generalized);
  if (options.procedure == CausalityProcedure::kHaCAP || options.procedure == CausalityProcedure::kLaCAP)
    g.proposed = options.generalized.empty() && model.generalized.empty() && model.independent.empty();
  return g;
}

CausalGraph AssignCausality(const Model& model, const CausalityOptions& options) {
  if (AddsArtificialSources(options.procedure))
    throw Error(fmt::format("internal: {} adds artificial sources to the model; pass a mutable Model",
                            ProcedureName(options.procedure)));
  Model copy = model;
  return AssignCausality(copy, options);
}

void RequireNoConflicts(const Model& model, const CausalGraph& graph) {
  if (!graph.relaxed.empty()) {
    ThrowAt({}, "",
            fmt::format("{} bonds are relaxed (no causality): RCAP gives a causality report, not equations",
                        graph.relaxed.size()),
            "", "", "use SCAP, HaCAP or LaCAP to form equations");
  }
  if (graph.conflicts.empty()) return;
  const CausalConflict& c = graph.conflicts.front();
  ThrowAt(model.elements[c.element].where, model.elements[c.element].name, c.message, "",
          graph.conflicts.size() > 1 ? fmt::format("{} conflicts in all", graph.conflicts.size()) : "",
          "the model is causally ill-posed: two sources (or a source and a constraint) impose the same variable; "
          "run 'paynter causality' for the full report");
}

}  // namespace paynter
