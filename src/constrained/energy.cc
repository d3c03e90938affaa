// AddEnergyAccounting: the energy balance of a bond graph as outputs (see
// paynter/constrained.h). Two displacements integrate the power the sources
// deliver and the power the resistors absorb; an output sums the energy the
// storage elements hold. For a model whose storage laws are linear,
// stored(t) - stored(0) = delivered(t) - dissipated(t) exactly; what a
// simulation makes of it measures its error (and, for constraint forces, the
// work they do: none for ideal joints).
#include <fmt/format.h>

#include "paynter/constrained.h"

namespace paynter {

bool AddEnergyAccounting(ModelSpec* spec) {
  std::string delivered, dissipated, stored;
  auto bond_of = [&](const std::string& element, bool* into) -> bool {
    for (const auto& b : spec->bonds) {
      if (b.to == element) return *into = true, true;
      if (b.from == element) return *into = false, true;
    }
    return false;
  };
  for (const auto& e : spec->elements) {
    const bool source = e.kind == "Se" || e.kind == "MSe" || e.kind == "Sf" || e.kind == "MSf";
    if (e.kind == "R" || source) {
      bool into = false;
      if (!bond_of(e.name, &into)) continue;
      // Power along the bond's half arrow is e f: into R it is absorbed; out of a source it is delivered.
      const std::string power = fmt::format("e_{0}*f_{0}", e.name);
      std::string& sum = e.kind == "R" ? dissipated : delivered;
      const bool positive = e.kind == "R" ? into : !into;
      sum += (sum.empty() ? (positive ? "" : "-") : (positive ? " + " : " - ")) + power;
    }
    if (e.kind == "I" || e.kind == "C") {
      if (e.laws.size() != 1) return false;
      const auto& [key, law] = e.laws[0];
      std::string term;
      if (e.kind == "I" && key == "inertance") term = fmt::format("p_{}^2/(2*({}))", e.name, law);
      else if (e.kind == "C" && key == "capacitance") term = fmt::format("q_{}^2/(2*({}))", e.name, law);
      else if (e.kind == "C" && key == "stiffness") term = fmt::format("({})*q_{}^2/2", law, e.name);
      else return false;  // a nonlinear storage law: its energy is not written here
      stored += (stored.empty() ? "" : " + ") + term;
    }
  }
  if (stored.empty()) return false;
  ModelSpec::DisplacementSpec in, lost;
  in.name = "energy_delivered";
  in.rate = delivered.empty() ? "0" : delivered;
  lost.name = "energy_dissipated";
  lost.rate = dissipated.empty() ? "0" : dissipated;
  spec->displacements.push_back(in);
  spec->displacements.push_back(lost);
  spec->outputs.push_back({"energy_stored", stored, {}});
  spec->outputs.push_back({"energy_delivered", "energy_delivered", {}});
  spec->outputs.push_back({"energy_dissipated", "energy_dissipated", {}});
  return true;
}

}  // namespace paynter
