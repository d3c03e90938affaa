// AddEnergyAccounting: the energy balance of a bond graph as outputs (see
// paynter/constrained.h). Two displacements integrate the power the sources
// deliver and the power the resistors absorb; an output sums the energy the
// storage elements hold. For a model whose storage laws are linear,
// stored(t) - stored(0) = delivered(t) - dissipated(t) exactly; what a
// simulation makes of it measures its error (and, for constraint forces, the
// work they do: none for ideal joints).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "internal.h"
#include "paynter/constrained.h"
#include "paynter/error.h"

namespace paynter {

bool AddEnergyAccounting(ModelSpec* spec, EnergyRefusal* why) {
  auto refuse = [why](const std::string& element, const std::string& reason) {
    if (why) *why = {element, reason};
    return false;
  };
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
      if (e.laws.size() != 1)
        return refuse(e.name, fmt::format("{} '{}' has {} laws, not one constant modulus", e.kind, e.name, e.laws.size()));
      const auto& [key, law] = e.laws[0];
      std::string term;
      if (e.kind == "I" && key == "inertance") term = fmt::format("p_{}^2/(2*({}))", e.name, law);
      else if (e.kind == "C" && key == "capacitance") term = fmt::format("q_{}^2/(2*({}))", e.name, law);
      else if (e.kind == "C" && key == "stiffness") term = fmt::format("({})*q_{}^2/2", law, e.name);
      else  // a nonlinear storage law: its energy is not written here
        return refuse(e.name, fmt::format("{} '{}' has the law '{}: {}', not a constant {}", e.kind, e.name, key, law,
                                          e.kind == "I" ? "inertance" : "capacitance or stiffness"));
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
      if (!bond_of(port, &into)) return refuse(f.name, fmt::format("port '{}' of I field '{}' has no bond", port, f.name));
      stored += fmt::format("{}p_{}*f_{}/2", stored.empty() ? (into ? "" : "-") : (into ? " + " : " - "), port, port);
    }
    if (f.kind == "CF") stored += (stored.empty() ? "(" : " + (") + f.energy + ")";
  }
  if (stored.empty()) return refuse("", "the model has no storage element");
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

namespace paynter::constrained {

namespace {
constexpr const char* kProjectEnergyHint =
    "simulate without --project-energy (the --energy columns still show the balance), or see docs/constraints.md, "
    "\"Energy projection\"";
}  // namespace

EnergyKeeper::EnergyKeeper(ModelWorkspace& workspace, double t0, const std::vector<double>& x0) : w_(workspace) {
  const CompiledModel& m = workspace.model();
  for (int k = 0; k < m.num_outputs(); ++k)
    if (m.output_names()[k] == "energy_stored") stored_ = k;
  for (int i = 0; i < m.num_states(); ++i) {
    if (m.state_names()[i] == "energy_delivered") delivered_ = i;
    if (m.state_names()[i] == "energy_dissipated") dissipated_ = i;
    if (m.state_inertia()[i] > 0) {
      momenta_.push_back(i);
      inertia_.push_back(m.state_inertia()[i]);
    }
  }
  if (stored_ < 0 || delivered_ < 0 || dissipated_ < 0)
    ThrowAt({}, "", "--project-energy: the model has no energy balance to keep",
            "the energy pass's output energy_stored and states energy_delivered, energy_dissipated",
            "a model whose storage laws are not all linear (the energy pass writes no balance for it)",
            kProjectEnergyHint);
  if (momenta_.empty())
    ThrowAt({}, "", "--project-energy: the model has no momentum states to scale", "inertias with momentum states",
            "none", kProjectEnergyHint);
  outputs_.assign(m.num_outputs(), 0);
  // The stored energy's part in the momenta: with every momentum zero, and
  // with p = sqrt(I) / 1000 in each (1e-6 / 2 of energy each), the
  // difference must be their sum.
  std::vector<double> x = x0;
  for (int i : momenta_) x[i] = 0;
  w_.CalcOutputs(t0, x.data(), outputs_.data());
  const double at_rest = outputs_[stored_];
  std::vector<double> c(m.num_constraints());
  w_.CalcConstraints(t0, x.data(), nullptr, c.data(), nullptr);
  double prescribed = 0;
  int worst = -1;
  for (size_t k = 0; k < c.size(); ++k)
    if (std::fabs(c[k]) > prescribed || std::isnan(c[k])) prescribed = std::fabs(c[k]), worst = static_cast<int>(k);
  if (!(prescribed <= 1e-12)) {
    const std::string joint = m.constraint_rows()[worst].joint;
    ThrowAt({}, joint,
            fmt::format("--project-energy: joint '{}' prescribes a velocity (its velocity constraint is {:.3g} with the "
                        "bodies at rest), which scaling the momenta would break",
                        joint, prescribed),
            "joints whose velocity constraints are linear and homogeneous in the momenta (A(q) p = 0)",
            fmt::format("{:.3g} at rest", prescribed), kProjectEnergyHint);
  }
  for (size_t j = 0; j < momenta_.size(); ++j) x[momenta_[j]] = 1e-3 * std::sqrt(inertia_[j]);
  w_.CalcOutputs(t0, x.data(), outputs_.data());
  const double kinetic = outputs_[stored_] - at_rest, expected = 0.5e-6 * static_cast<double>(momenta_.size());
  if (!(std::fabs(kinetic - expected) <= 1e-6 * expected + 1e-12 * (1 + std::fabs(at_rest))))
    ThrowAt({}, "",
            "--project-energy: the stored energy is not the kinetic energy of the momentum states (sum of p^2 / (2 I)) "
            "plus a function of the other states",
            fmt::format("{:.6g} J from the momenta p = sqrt(I) / 1000", expected), fmt::format("{:.6g} J", kinetic),
            kProjectEnergyHint);
  w_.CalcOutputs(t0, x0.data(), outputs_.data());
  base_ = outputs_[stored_] - x0[delivered_] + x0[dissipated_];
  scale_ = std::fabs(outputs_[stored_]);
}

bool EnergyKeeper::Restore(double t, double* x) {
  w_.CalcOutputs(t, x, outputs_.data());
  const double stored = outputs_[stored_];
  const double balance = base_ + x[delivered_] - x[dissipated_];
  scale_ = std::max(scale_, std::fabs(stored));
  double kinetic = 0;
  for (size_t j = 0; j < momenta_.size(); ++j) kinetic += x[momenta_[j]] * x[momenta_[j]] / (2 * inertia_[j]);
  const double error = balance - stored;
  if (scale_ > 0) largest_error = std::max(largest_error, std::fabs(error) / scale_);
  if (error == 0) return false;
  const double ratio = error / kinetic;  // the kinetic energy's relative change
  if (!(kinetic > 0) || !(std::fabs(ratio) <= kLargestCorrection)) {
    ++skipped;
    return false;
  }
  const double s = std::sqrt(1 + ratio);
  for (int i : momenta_) x[i] *= s;
  ++corrections;
  largest_correction = std::max(largest_correction, std::fabs(ratio));
  return true;
}

}  // namespace paynter::constrained
