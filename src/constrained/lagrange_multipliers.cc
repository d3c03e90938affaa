// The lagrange-multipliers method: the compiled right-hand side solves the
// constraint forces with the accelerations (a rank-revealing solve where
// constraints are redundant); with stabilization, positions and momenta are
// projected back onto the constraints after every accepted step
// (projection.cc), and so is the interpolated state at every output time.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "internal.h"

namespace paynter::constrained {
namespace {

class LagrangeMultipliers final : public ConstraintMethodStrategy {
 public:
  ConstraintMethod method() const override { return ConstraintMethod::kLagrangeMultipliers; }

  Solution Simulate(const ConstrainedRun& run) const override {
    ModelWorkspace& workspace = run.workspace;
    const CompiledModel& model = workspace.model();
    const SolverOptions& solver = run.solver;
    ConstraintProjector& projector = *run.projector;
    OdeProblem problem = ProjectedProblem(workspace, projector, solver);
    const bool stabilize = run.options.stabilize;
    // The energy balance kept after each projection (and at each output).
    std::optional<EnergyKeeper> keeper;
    if (run.options.project_energy) keeper.emplace(workspace, solver.t0, run.x0);
    if (!stabilize)
      problem.project = nullptr;
    else if (keeper)
      problem.project = [&projector, &keeper](double t, double* x) {
        const bool moved = projector.Project(t, x);
        return keeper->Restore(t, x) || moved;
      };
    ConstraintProjector watcher(workspace);
    // Output times fall between steps: the interpolated state is projected too,
    // so that every recorded row satisfies the joints.
    ConstraintProjector at_output(workspace);
    at_output.position_tolerance = projector.position_tolerance;
    at_output.velocity_tolerance = projector.velocity_tolerance;
    at_output.jacobians_from = &projector;  // the step's Jacobians, formed nearer the output time
    const int n = model.num_states();
    std::function<void(double, const double*, double*)> full_state;
    if (stabilize)
      full_state = [&at_output, &keeper, n](double t, const double* y, double* x) {
        std::copy(y, y + n, x);
        at_output.Project(t, x);
        if (keeper) keeper->Restore(t, x);
      };
    Solution sol = StartSolution(model, run.options.output);
    // Without stabilization the drift is what was asked to see: not checked.
    ConstrainedOptions watched = run.options;
    if (!stabilize) watched.drift_tolerance = 0;
    SimulateFrom(workspace, problem, run.x0, solver, full_state, [&](double t, const double* x) {
      WatchDrift(model, watched, method(), watcher, t, x, run.report);
    }, &sol);
    if (keeper) {
      ConstrainedReport& r = *run.report;
      r.energy_projected = true;
      r.energy_corrections = keeper->corrections;
      r.energy_skipped = keeper->skipped;
      r.energy_largest_correction = keeper->largest_correction;
      r.energy_largest_error = keeper->largest_error;
    }
    return sol;
  }

  std::string MethodLines(const ConstrainedReport& r) const override {
    if (!r.energy_projected) return "";
    return fmt::format(
        "energy projection: momenta scaled {} times (largest change of the kinetic energy {:.3g} of it), {} left as "
        "they were (kinetic energy too small to carry the error); largest balance error met {:.3g} of the largest "
        "stored energy\n",
        r.energy_corrections, r.energy_largest_correction, r.energy_skipped, r.energy_largest_error);
  }
};

}  // namespace

OdeProblem ProjectedProblem(ModelWorkspace& workspace, ConstraintProjector& projector, const SolverOptions& solver) {
  const CompiledModel& model = workspace.model();
  OdeProblem problem;
  problem.n = model.num_states();
  problem.state_names = model.state_names();
  problem.rhs = [&workspace](double t, const double* x, double* dx) { workspace.CalcDerivatives(t, x, dx); };
  projector.position_tolerance = std::min(1e-10, 1e-3 * solver.atol);
  projector.velocity_tolerance = std::min(1e-10, 1e-3 * solver.atol);
  problem.project = [&projector](double t, double* x) { return projector.Project(t, x); };
  return problem;
}

const ConstraintMethodStrategy& LagrangeMultipliersStrategy() {
  static const LagrangeMultipliers strategy;
  return strategy;
}

}  // namespace paynter::constrained
