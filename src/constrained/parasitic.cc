// The parasitic method: every constraint source becomes a stiff spring and a
// damper on the joint's constrained direction (the "R/C parasitic elements" of
// Boudon et al. 2019). No derivative causality, no unknown forces: an ODE,
// stiff by design, integrated by BDF by default. The joint stretches a little;
// the spring's state is that stretch.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "internal.h"
#include "paynter/constrained.h"
#include "paynter/multibody.h"

namespace paynter {

int ApplyParasitic(ModelSpec* spec, const ParasiticOptions& options) {
  std::vector<ModelSpec::ElementSpec> added;
  std::vector<ModelSpec::BondSpec> bonds;
  int replaced = 0;
  for (auto& e : spec->elements) {
    if (e.kind != "Se" || e.laws.size() != 1 || e.laws[0].first != "constraint") continue;
    const std::string& target = e.laws[0].second;
    if (target != "0" && target != "0.0")
      ThrowAt(e.where, e.name, "the parasitic method replaces constraint sources whose flow is held at zero",
              "constraint: 0", target,
              "a prescribed non-zero flow has no spring equivalent; use --constraints lagrange-multipliers");
    const std::string k = options.stiffness > 0 ? fmt::format("{:.17g}", options.stiffness)
                          : !e.parasitic_stiffness.empty() ? e.parasitic_stiffness
                                                            : fmt::format("{:.17g}", kDefaultParasiticStiffness);
    const std::string c = options.damping > 0 ? fmt::format("{:.17g}", options.damping)
                          : !e.parasitic_damping.empty() ? e.parasitic_damping
                                                          : fmt::format("{:.17g}", kDefaultParasiticDamping);
    // The source becomes a 1-junction `<S>_j`; its bond keeps its direction
    // (power flows from the joint's row into the spring and damper) and takes
    // the name `<S>`, so that e_<S> is still the force along the direction.
    const std::string source = e.name;
    const std::string name = source + "_j";
    const SourceLocation where = e.where;
    for (auto& b : spec->bonds) {
      if (b.from != source && b.to != source) continue;
      (b.from == source ? b.from : b.to) = name;
      if (b.name.empty()) b.name = source;
    }
    e.name = name;
    e.kind = "1";
    e.laws.clear();
    e.law_value.reset();
    e.position.clear();
    e.position_value.reset();
    ModelSpec::ElementSpec spring;
    spring.name = source + "_k";
    spring.kind = "C";
    spring.laws.push_back({"stiffness", k});
    spring.where = where;
    ModelSpec::ElementSpec damper;
    damper.name = source + "_c";
    damper.kind = "R";
    damper.laws.push_back({"resistance", c});
    damper.where = where;
    added.push_back(spring);
    added.push_back(damper);
    for (const auto* to : {&spring.name, &damper.name}) {
      ModelSpec::BondSpec b;
      b.from = name;
      b.to = *to;
      b.where = where;
      bonds.push_back(b);
    }
    ++replaced;
  }
  spec->elements.insert(spec->elements.end(), added.begin(), added.end());
  spec->bonds.insert(spec->bonds.end(), bonds.begin(), bonds.end());
  return replaced;
}

}  // namespace paynter

namespace paynter::constrained {
namespace {

class Parasitic final : public ConstraintMethodStrategy {
 public:
  ConstraintMethod method() const override { return ConstraintMethod::kParasitic; }

  bool RewritesSpec() const override { return true; }
  void RewriteSpec(ModelSpec* spec, const ParasiticOptions& options) const override {
    if (ApplyParasitic(spec, options) > 0) return;
    ThrowAt({spec->file}, "", "--constraints parasitic: the model has no joint constraint to relax",
            "a multibody model with joints, or Se elements with 'constraint:'", "no constraint source",
            "simulate it without --constraints");
  }
  std::string StageKey(const ParasiticOptions& options) const override {
    return fmt::format("parasitic k={:a} c={:a}", options.stiffness, options.damping);
  }

  std::string ViewHeader(const MethodView& v) const override {
    std::vector<std::string> springs;
    for (const auto& e : v.model.elements) {
      if (e.kind != ElementKind::kC || e.name.size() < 3 || e.name.substr(e.name.size() - 2) != "_k") continue;
      const int j = v.model.FindElement(e.name.substr(0, e.name.size() - 2) + "_j");
      if (j >= 0 && v.model.elements[j].kind == ElementKind::kOne) springs.push_back(e.name);
    }
    return fmt::format(
        "constraints: parasitic: {} constraint sources replaced by a spring <S>_k (C) and a damper "
        "<S>_c (R) on a 1-junction <S>_j: {}\n\n",
        springs.size(), fmt::join(springs, ", "));
  }

  // The rewritten model has no constraint rows: simulated as it is, the
  // springs' largest stretch recorded.
  bool RunsWithoutConstraints() const override { return true; }
  std::optional<Method> DefaultIntegrator() const override { return Method::kBDF; }  // the springs are stiff
  bool CarriedByFmu() const override { return true; }
  bool DriftIsStretch() const override { return true; }
  Solution Simulate(const ConstrainedRun& run) const override {
    const CompiledModel& model = run.workspace.model();
    std::vector<int> springs;
    for (int i = 0; i < model.num_states(); ++i) {
      const std::string& n = model.state_names()[i];
      if (n.size() > 4 && n.rfind("q_", 0) == 0 && n.compare(n.size() - 2, 2, "_k") == 0) springs.push_back(i);
    }
    double stretch = 0;
    Solution sol = SimulateAsItIs(run.workspace, run.x0, run.solver, run.options, [&](double, const double* x) {
      for (int i : springs) stretch = std::max(stretch, std::fabs(x[i]));
    });
    run.report->max_position_drift = stretch;
    return sol;
  }

  std::string ReportLines(const ConstrainedReport& r) const override {
    return fmt::format("parasitic springs: largest stretch {:.3g} (m or rad)\n", r.max_position_drift);
  }
};

}  // namespace

const ConstraintMethodStrategy& ParasiticStrategy() {
  static const Parasitic strategy;
  return strategy;
}

}  // namespace paynter::constrained
