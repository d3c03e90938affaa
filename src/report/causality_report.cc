// The text report of `paynter causality`.
#include <fmt/format.h>

#include <sstream>

#include "paynter/report.h"

namespace paynter {

std::string CausalityReport(const Model& m, const CausalGraph& g, const EquationSystem* eqs) {
  std::ostringstream os;
  os << fmt::format("causality of model '{}' by {}\n\n", m.name, ProcedureName(g.procedure));
  os << "bonds (power from -> to; the causal stroke is at the element that receives the effort):\n";
  size_t w = 4;
  for (const auto& b : m.bonds) w = std::max(w, b.name.size());
  for (size_t b = 0; b < m.bonds.size(); ++b) {
    const Bond& bond = m.bonds[b];
    const std::string from = m.elements[bond.from].name, to = m.elements[bond.to].name;
    const int recv = g.effort_to[b];
    const std::string stroke = recv < 0 ? (g.relaxed.empty() ? "unassigned" : "relaxed") : "stroke at " + m.elements[recv].name;
    const std::string effort =
        recv < 0 ? "" : fmt::format("effort {} -> {}", m.elements[recv == bond.to ? bond.from : bond.to].name,
                                    m.elements[recv].name);
    if (recv < 0) os << fmt::format("  {:<{}}  {} -> {}   {}\n", bond.name, w, from, to, stroke);
    else os << fmt::format("  {:<{}}  {} -> {}   {}; {}   ({})\n", bond.name, w, from, to, stroke, effort, g.reason[b]);
  }
  auto junctions = [&](const std::vector<int>& js) {
    std::string s;
    for (int j : js) s += (s.empty() ? "" : ", ") + m.elements[j].name;
    return s.empty() ? std::string("none") : s;
  };
  if (g.procedure != CausalityProcedure::kSCAP && g.procedure != CausalityProcedure::kRCAP) {
    const bool bh = g.procedure == CausalityProcedure::kBHCAP;
    os << (bh ? "\nquasi-velocity 1-junctions: " : "\ngeneralized 1-junctions: ") << junctions(g.generalized)
       << (g.generalized.empty() ? "" : g.proposed ? " (proposed by paynter)" : " (from the model)") << "\n";
    for (const auto& e : m.elements)
      if (e.artificial == Artificial::kASF)
        os << fmt::format("  {}: artificial flow source on {}, flow = {} v_{}, effort = 0\n", e.name,
                          m.elements[e.attached_to].name, bh ? "quasi-velocity" : "generalized velocity",
                          m.elements[e.attached_to].name);
    os << "constrained 0-junctions: " << junctions(g.constrained) << "\n";
    for (const auto& e : m.elements)
      if (e.artificial == Artificial::kAES)
        os << fmt::format("  {}: artificial effort source on {}, effort = multiplier lambda_{}, flow = 0\n", e.name,
                          m.elements[e.attached_to].name, m.elements[e.attached_to].name);
  }
  if (!g.relaxed.empty())
    os << fmt::format("\nrelaxed bonds ({}): causality not forced by the sources and the junction structure\n",
                      g.relaxed.size());
  auto names = [&](const std::vector<int>& els) {
    std::string s;
    for (int i : els) s += (s.empty() ? "" : ", ") + fmt::format("{} ({})", m.elements[i].name, KindName(m.elements[i].kind));
    return s.empty() ? std::string("none") : s;
  };
  os << "\nstorage in integral causality:   " << names(g.integral_storage) << "\n";
  os << "storage in derivative causality: " << names(g.derivative_storage) << "\n";
  os << "\ncausal conflicts: " << (g.conflicts.empty() ? "none" : std::to_string(g.conflicts.size())) << "\n";
  for (const auto& c : g.conflicts) os << "  " << c.message << "\n";
  if (eqs) {
    int loops = 0;
    for (const auto& b : eqs->blocks) loops += b.derivative_causality ? 0 : 1;
    os << "\nalgebraic loops: " << (loops ? std::to_string(loops) : "none") << "\n";
    for (const auto& b : eqs->blocks) {
      if (b.derivative_causality) continue;
      os << fmt::format("  {} ({}; variables {})\n", b.label, b.linear ? "linear" : "nonlinear",
                        fmt::join(b.variables, ", "));
    }
    int coupled = 0;
    for (const auto& b : eqs->blocks) coupled += b.derivative_causality ? 1 : 0;
    if (coupled) {
      os << "\nstate derivatives coupled by derivative causality: " << coupled << " group(s)\n";
      for (const auto& b : eqs->blocks)
        if (b.derivative_causality)
          os << fmt::format("  {} ({}; solved as M(x) dx/dt = f(x, t))\n", b.label, b.linear ? "linear" : "nonlinear");
    }
    os << fmt::format("\nstates ({}): {}\n", eqs->state_names.size(), fmt::join(eqs->state_names, ", "));
  } else if (!g.conflicts.empty()) {
    os << "\nequations not formed: resolve the conflicts first\n";
  }
  return os.str();
}

}  // namespace paynter
