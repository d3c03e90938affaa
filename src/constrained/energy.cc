// AddEnergyAccounting: the energy balance of a bond graph as outputs (see
// paynter/constrained.h). Two displacements integrate the power the sources
// deliver and the power the resistors absorb; an output sums the energy the
// storage elements hold. For a model whose storage laws are linear,
// stored(t) - stored(0) = delivered(t) - dissipated(t) exactly; what a
// simulation makes of it measures its error (and, for constraint forces, the
// work they do: none for ideal joints).
#include <fmt/format.h>

#include <algorithm>

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
    if (std::find(spec->observers.begin(), spec->observers.end(), e.name) != spec->observers.end())
      continue;  // an observer of inertial forces (the multibody Hamilton form): none of the model's energy
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
  // Storage fields: an I field holds T = p . f / 2 (f = M(q)^-1 p, the flows
  // into its ports), a C field its energy function of its coordinates.
  for (const auto& f : spec->fields) {
    const size_t n = f.coordinates.size();
    for (size_t k = 0; k < n && f.kind == "IF"; ++k) {
      const std::string port = f.ports.empty() ? fmt::format("{}_{}", f.name, k + 1) : f.ports[k];
      bool into = true;
      if (!bond_of(port, &into)) return false;
      stored += fmt::format("{}p_{}*f_{}/2", stored.empty() ? (into ? "" : "-") : (into ? " + " : " - "), port, port);
    }
    if (f.kind == "CF") stored += (stored.empty() ? "(" : " + (") + f.energy + ")";
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
