// The sequential causality assignment procedure (SCAP), after Karnopp, Margolis
// & Rosenberg, "System Dynamics", ch. 5: impose the causality of each source and
// propagate; then of elements with a fixed (preferred) causality; then integral
// causality on each storage element not yet causal; then an arbitrary causality
// on each resistor, then on any bond left; propagating through the junction,
// transformer and gyrator constraints after every choice.
#include <fmt/format.h>

#include <deque>

#include "paynter/causality.h"

namespace paynter {

CausalityProcedure ParseProcedure(const std::string& name) {
  if (name == "SCAP" || name == "scap") return CausalityProcedure::kSCAP;
  Diagnostic d;
  d.message = fmt::format("unknown causality procedure '{}'", name);
  d.expected = "SCAP";
  d.got = name;
  d.hint = "the other procedures of Marquis-Favre and Scavarda (LCAP, LaCAP, HaCAP, RCAP) are not available yet";
  throw Error(d);
}

std::string ProcedureName(CausalityProcedure p) {
  switch (p) {
    case CausalityProcedure::kSCAP: return "SCAP";
  }
  return "?";
}

namespace {

class Scap {
 public:
  Scap(const Model& m) : m_(m) {
    g_.effort_to.assign(m.bonds.size(), -1);
    g_.reason.assign(m.bonds.size(), "");
  }

  CausalGraph Run() {
    // 1. Sources.
    for (size_t i = 0; i < m_.elements.size(); ++i) {
      const Element& e = m_.elements[i];
      if (!IsSource(e.kind)) continue;
      const bool effort_out = e.kind == ElementKind::kSe || e.kind == ElementKind::kMSe;
      Impose(static_cast<int>(i), effort_out, "source " + e.name);
    }
    // 2. Fixed-causality elements: none among the scalar kinds, since paynter
    //    inverts any law numerically when causality asks for it. (Vector
    //    cross-product transformers will take their fixed causality here.)
    // 3. Storage elements, integral causality.
    for (size_t i = 0; i < m_.elements.size(); ++i) {
      const Element& e = m_.elements[i];
      if (!IsStorage(e.kind) || g_.effort_to[e.bonds[0]] >= 0) continue;
      Impose(static_cast<int>(i), e.kind == ElementKind::kC, "integral " + e.name);
    }
    // 4. Resistors: the causality their law is written in (e = R f when linear),
    //    so that no law needs inverting when there is a choice.
    for (size_t i = 0; i < m_.elements.size(); ++i) {
      const Element& e = m_.elements[i];
      if (e.kind != ElementKind::kR || g_.effort_to[e.bonds[0]] >= 0) continue;
      Impose(static_cast<int>(i), e.form != LawForm::kFlow, "arbitrary " + e.name);
    }
    // 5. Any bond left (between junctions and two-ports only): effort to 'to'.
    for (size_t b = 0; b < m_.bonds.size(); ++b) {
      if (g_.effort_to[b] >= 0) continue;
      Set(static_cast<int>(b), m_.bonds[b].to, "arbitrary bond " + m_.bonds[b].name);
      Propagate();
    }
    // Classify storage and check sources.
    for (size_t i = 0; i < m_.elements.size(); ++i) {
      const Element& e = m_.elements[i];
      const int b = e.bonds.empty() ? -1 : e.bonds[0];
      if (b < 0) continue;
      const bool into = g_.effort_to[b] == static_cast<int>(i);
      if (e.kind == ElementKind::kI) (into ? g_.integral_storage : g_.derivative_storage).push_back(static_cast<int>(i));
      if (e.kind == ElementKind::kC) (into ? g_.derivative_storage : g_.integral_storage).push_back(static_cast<int>(i));
    }
    return std::move(g_);
  }

 private:
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
    if (g_.effort_to[bond] == receiver) return;
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

  void Propagate() {
    while (!queue_.empty()) {
      const int el = queue_.front();
      queue_.pop_front();
      const Element& e = m_.elements[el];
      const std::string why = "propagated at " + e.name;
      if (IsJunction(e.kind)) {
        // 0-junction: exactly one bond brings the effort in ("strong" bond).
        // 1-junction: exactly one bond takes the effort out (it sets the flow).
        const bool zero = e.kind == ElementKind::kZero;
        std::vector<int> strong, unassigned;
        for (int b : e.bonds) {
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
          Set(unassigned[0], zero ? el : Other(unassigned[0], el), why);
        } else if (unassigned.empty()) {
          Conflict(el, e.bonds,
                   zero ? "no bond imposes the effort on the 0-junction" : "no bond imposes the flow on the 1-junction");
        }
      } else if (IsTwoPort(e.kind)) {
        const int a = e.bonds[0], c = e.bonds[1];
        const bool gy = e.kind == ElementKind::kGY || e.kind == ElementKind::kMGY;
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

  const Model& m_;
  CausalGraph g_;
  std::deque<int> queue_;
};

}  // namespace

CausalGraph AssignCausality(const Model& model, const CausalityOptions& options) {
  CausalGraph g = Scap(model).Run();
  g.procedure = options.procedure;
  return g;
}

void RequireNoConflicts(const Model& model, const CausalGraph& graph) {
  if (graph.conflicts.empty()) return;
  const CausalConflict& c = graph.conflicts.front();
  Diagnostic d;
  d.where = model.elements[c.element].where;
  d.element = model.elements[c.element].name;
  d.message = c.message;
  d.hint = "the model is causally ill-posed: two sources (or a source and a constraint) impose the same variable; "
           "run 'paynter causality' for the full report";
  if (graph.conflicts.size() > 1) d.got = fmt::format("{} conflicts in all", graph.conflicts.size());
  throw Error(d);
}

}  // namespace paynter
