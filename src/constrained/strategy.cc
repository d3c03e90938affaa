// The methods' names, the automatic choice, the strategies' registry and
// defaults, and SimulateConstrained: assembly of the start, then the chosen
// method's strategy (paynter/constraint_method.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "internal.h"
#include "paynter/constraint_method.h"

namespace paynter {

ConstraintMethod ParseConstraintMethod(const std::string& name) {
  if (name == "auto") return ConstraintMethod::kAuto;
  for (ConstraintMethod m : ConstraintMethods())
    if (name == ConstraintMethodName(m)) return m;
  ThrowAt({}, "", fmt::format("unknown constraint method '{}'", name),
          "auto, parasitic, lagrange-multipliers, minimal-coordinates or zcp", name);
}

std::string ConstraintMethodName(ConstraintMethod m) {
  switch (m) {
    case ConstraintMethod::kAuto: return "auto";
    case ConstraintMethod::kZcp: return "zcp";
    case ConstraintMethod::kParasitic: return "parasitic";
    case ConstraintMethod::kLagrangeMultipliers: return "lagrange-multipliers";
    case ConstraintMethod::kMinimalCoordinates: return "minimal-coordinates";
  }
  return "?";
}

const std::vector<ConstraintMethod>& ConstraintMethods() {
  static const std::vector<ConstraintMethod> methods = {
      ConstraintMethod::kLagrangeMultipliers, ConstraintMethod::kMinimalCoordinates, ConstraintMethod::kParasitic,
      ConstraintMethod::kZcp};
  return methods;
}

ConstraintMethod ChooseConstraintMethod(const CompiledModel& model, std::string* why) {
  if (model.num_constraints() == 0) {
    if (why) *why = "the model has no constraint source: simulated as it is";
    return ConstraintMethod::kAuto;
  }
  if (why)
    *why = "constraint forces solved with the accelerations, redundant constraints by a rank-revealing solve, "
           "positions and velocities projected onto the joints after every step";
  return ConstraintMethod::kLagrangeMultipliers;
}

// ---- the interface's defaults --------------------------------------------------

void ConstraintMethodStrategy::RewriteSpec(ModelSpec*, const ParasiticOptions&) const {}
std::string ConstraintMethodStrategy::StageKey(const ParasiticOptions&) const { return ""; }
void ConstraintMethodStrategy::View(MethodView*, const std::string&) const {}
std::string ConstraintMethodStrategy::ViewHeader(const MethodView&) const { return ""; }
std::string ConstraintMethodStrategy::CausalityNotes(const MethodView&) const { return ""; }
std::string ConstraintMethodStrategy::EquationNotes(const MethodView&, const EquationSystem&) const { return ""; }
std::optional<LoweredModel> ConstraintMethodStrategy::Prepare(const Model&) const { return std::nullopt; }
std::string ConstraintMethodStrategy::MethodLines(const ConstrainedReport&) const { return ""; }

std::string ConstraintMethodStrategy::ReportLines(const ConstrainedReport& r) const {
  if (r.analysis.constraints == 0) return "";
  std::string out = r.analysis.ToText();
  out += fmt::format("assembly: positions moved by {:.3g}, momenta by {:.3g}\n", r.assembly.position_correction,
                     r.assembly.velocity_correction);
  out += MethodLines(r);
  out += fmt::format("constraint drift at the output times: position {:.3g}, velocity {:.3g}\n",
                     r.max_position_drift, r.max_velocity_drift);
  return out;
}

namespace constrained {

void RequireConstraintSources(const Model& model, const std::string& file, ConstraintMethod method) {
  for (const auto& e : model.elements)
    if (e.form == LawForm::kConstraint) return;
  ThrowAt({file}, "",
          fmt::format("--constraints {}: the model has no joint constraint", ConstraintMethodName(method)),
          "a multibody model with joints, or Se elements with 'constraint:'", "no constraint source",
          "leave out --constraints");
}

Solution SimulateAsItIs(ModelWorkspace& workspace, const std::vector<double>& x0, const SolverOptions& solver,
                        const ConstrainedOptions& options, const std::function<void(double, const double*)>& watch) {
  const CompiledModel& model = workspace.model();
  OdeProblem problem;
  problem.n = model.num_states();
  problem.state_names = model.state_names();
  problem.rhs = [&workspace](double t, const double* x, double* dx) { workspace.CalcDerivatives(t, x, dx); };
  Solution sol = StartSolution(model, options.output);
  SimulateFrom(workspace, problem, x0, solver, nullptr, watch, &sol);
  return sol;
}

namespace {

// auto on a model without constraint rows: the model as it is.
class AsItIs final : public ConstraintMethodStrategy {
 public:
  ConstraintMethod method() const override { return ConstraintMethod::kAuto; }
  bool RunsWithoutConstraints() const override { return true; }
  bool CarriedByFmu() const override { return true; }
  Solution Simulate(const ConstrainedRun& run) const override {
    return SimulateAsItIs(run.workspace, run.x0, run.solver, run.options, [](double, const double*) {});
  }
};

}  // namespace
}  // namespace constrained

const ConstraintMethodStrategy& StrategyFor(ConstraintMethod method) {
  static const constrained::AsItIs as_it_is;
  switch (method) {
    case ConstraintMethod::kAuto: return as_it_is;
    case ConstraintMethod::kLagrangeMultipliers: return constrained::LagrangeMultipliersStrategy();
    case ConstraintMethod::kMinimalCoordinates: return constrained::MinimalCoordinatesStrategy();
    case ConstraintMethod::kParasitic: return constrained::ParasiticStrategy();
    case ConstraintMethod::kZcp: return constrained::ZcpStrategy();
  }
  return as_it_is;
}

std::string IntegratorName(ConstraintMethod used, Method asked) {
  const char* own = StrategyFor(used).OwnIntegrator();
  return *own ? std::string(own) : MethodName(asked);
}

namespace {
// The largest constraint error an assembled start may keep (positions, and
// velocities relative to 1 + the largest momentum).
constexpr double kAssembledPosition = 1e-9;
}  // namespace

Solution SimulateConstrained(const CompiledModel& model, const SolverOptions& solver,
                             const ConstrainedOptions& options, ConstrainedReport* report) {
  ModelWorkspace workspace(model);
  return SimulateConstrained(workspace, solver, options, report);
}

Solution SimulateConstrained(ModelWorkspace& workspace, const SolverOptions& solver,
                             const ConstrainedOptions& options, ConstrainedReport* report) {
  const CompiledModel& model = workspace.model();
  solver.Validate();
  ConstrainedReport local;
  ConstrainedReport& rep = report ? *report : local;
  rep = ConstrainedReport{};
  ConstraintMethod method = options.method;
  if (method == ConstraintMethod::kAuto) method = ChooseConstraintMethod(model, &rep.why);
  rep.method = method;
  const ConstraintMethodStrategy& strategy = StrategyFor(method);
  std::vector<double> x0 = model.initial_state();

  if (model.has_events() && !strategy.HandlesEvents())
    ThrowAt(
        {}, "",
        fmt::format("--constraints {} does not handle the model's events and conditions", ConstraintMethodName(method)),
        "a model without if(), events or switched elements",
        fmt::format("events with --constraints {}", ConstraintMethodName(method)),
        "simulate the model with --constraints lagrange-multipliers or parasitic (docs/events.md)");
  if (options.project_energy) {
    // Where the energy projection applies (docs/constraints.md, "Energy projection").
    const char* hint = "simulate the mechanism with --constraints lagrange-multipliers and --project-energy, or without "
                       "--project-energy";
    if (method != ConstraintMethod::kLagrangeMultipliers)
      ThrowAt({}, "",
              fmt::format("--project-energy applies to --constraints lagrange-multipliers, not to {}",
                          model.num_constraints() == 0 && method == ConstraintMethod::kAuto
                              ? "a model without joints"
                              : ConstraintMethodName(method)),
              "a mechanism simulated with lagrange-multipliers",
              model.num_constraints() == 0 ? std::string("no joints") : ConstraintMethodName(method), hint);
    if (!options.stabilize)
      ThrowAt({}, "", "--project-energy needs the projection after each step, which --no-stabilize turns off",
              "the projection on", "--no-stabilize", hint);
    if (model.has_events())
      ThrowAt({}, "",
              "--project-energy does not apply to a model with events, conditions or switched elements (a reset "
              "changes the energy at an instant that the balance does not see)",
              "a model without if(), events or switched elements", "events", hint);
  }
  if (model.num_constraints() == 0) {
    if (!strategy.RunsWithoutConstraints())
      ThrowAt({}, "", fmt::format("--constraints {}: the model has no constraint source", ConstraintMethodName(method)),
              "a multibody model with joints, or Se elements with 'constraint:'", "no joint constraint",
              "simulate it without --constraints");
    return strategy.Simulate(ConstrainedRun{workspace, x0, solver, options, nullptr, &rep});
  }

  // Assembly: the start made consistent, or an error naming the joint.
  ConstraintProjector projector(workspace);
  projector.position_tolerance = 1e-12;
  projector.velocity_tolerance = 1e-12;
  AssemblyReport assembly;
  projector.assembly = true;
  projector.Project(solver.t0, x0.data(), &assembly);
  projector.assembly = false;
  rep.assembly = assembly;
  const bool assemble = options.assemble || (options.source && options.source->assemble);
  if (!assemble && (assembly.position_correction > options.assembly_tolerance ||
                    assembly.velocity_correction > options.assembly_tolerance)) {
    const bool pos = assembly.position_correction > options.assembly_tolerance;
    ThrowAt({}, assembly.worst_joint,
            fmt::format(
                "the start is not consistent with the joints: {} moved by {:.3g} to assemble them{}",
                pos ? "positions" : "velocities (momenta)",
                pos ? assembly.position_correction : assembly.velocity_correction,
                assembly.worst_joint.empty() ? "" : fmt::format(" (furthest off: joint '{}')", assembly.worst_joint)),
            fmt::format("initial positions and velocities within {:.3g} of the joints", options.assembly_tolerance),
            fmt::format("position error {:.3g}, velocity error {:.3g}", assembly.position_error_before,
                        assembly.velocity_error_before),
            "correct the bodies' initial position/orientation/velocity, or let paynter assemble the start "
            "(--assemble)");
  }
  {
    // What the assembly could not close (joints between held bodies that do
    // not meet, say) stops the run here: the first projection after it would
    // otherwise move the held bodies, and the start would silently not be the
    // one the model gives.
    double gp = 0, gv = 0, pmax = 0;
    int worst = -1;
    projector.Errors(solver.t0, x0.data(), &gp, &gv, &worst);
    for (int i : projector.momentum_states()) pmax = std::max(pmax, std::fabs(x0[i]));
    if (!(gp <= kAssembledPosition) || !(gv <= kAssembledPosition * (1 + pmax))) {
      const std::string joint = worst >= 0 ? model.constraint_rows()[worst].joint : "";
      ThrowAt({}, joint,
              fmt::format("the start cannot be assembled: after the assembly the joints are still off by {:.3g} "
                          "(positions) and {:.3g} (velocities){}",
                          gp, gv, worst >= 0 ? fmt::format(" (furthest off: joint '{}')", joint) : ""),
              fmt::format("positions and velocities within {:.3g} of the joints", kAssembledPosition),
              fmt::format("position error {:.3g}, velocity error {:.3g}", gp, gv),
              "the bodies held by joints' `initial:` values (and the ground) must be consistent with the joints "
              "between them; check the joints' points and axes, or the initial values");
    }
  }
  rep.analysis = AnalyzeConstraints(workspace, solver.t0, x0);

  // The drift check's limit: given, or the larger of 1e-6 and 10 rtol.
  ConstrainedOptions watched = options;
  if (watched.drift_tolerance < 0) watched.drift_tolerance = std::max(1e-6, 10 * solver.rtol);
  return strategy.Simulate(ConstrainedRun{workspace, x0, solver, watched, &projector, &rep});
}

namespace constrained {

void WatchDrift(const CompiledModel& model, const ConstrainedOptions& options, ConstraintMethod method,
                ConstraintProjector& watcher, double t, const double* x, ConstrainedReport* report) {
  double gp = 0, gv = 0;
  int wp = -1, wv = -1;
  watcher.Errors(t, x, &gp, &gv, &wp, &wv);
  report->max_position_drift = std::max(report->max_position_drift, gp);
  report->max_velocity_drift = std::max(report->max_velocity_drift, gv);
  // Relative to the size of the motion: 1 + the largest position coordinate
  // (positions), 1 + the largest momentum (velocities; an inertia solver's
  // tolerance bounds the momenta's error, and so the joints' velocity error).
  double xmax = 0, pmax = 0;
  for (int i : watcher.position_states()) xmax = std::max(xmax, std::fabs(x[i]));
  for (int i : watcher.momentum_states()) pmax = std::max(pmax, std::fabs(x[i]));
  const double tol = options.drift_tolerance, tol_p = tol * (1 + xmax), tol_v = tol * (1 + pmax);
  if (!(tol > 0) || (gp <= tol_p && gv <= tol_v)) return;
  const bool pos = !(gp <= tol_p);
  const int row = pos ? wp : wv;
  const ConstraintRow* r = row >= 0 ? &model.constraint_rows()[row] : nullptr;
  ThrowAt({}, r ? r->joint : "",
          fmt::format(
              "--constraints {}: the joints drifted beyond the drift tolerance at t = {}: {} error {:.3g}{} "
              "(the results from here on would be wrong)",
              ConstraintMethodName(method), t, pos ? "position" : "velocity", pos ? gp : gv,
              r ? fmt::format(" on joint '{}' ({})", r->joint, r->direction.empty() ? r->source : r->direction) : ""),
          fmt::format("position and velocity constraint errors within {:.3g} and {:.3g} at every output time "
                      "(the drift tolerance {:.3g} times 1 + the largest coordinate, 1 + the largest momentum)",
                      tol_p, tol_v, tol),
          fmt::format("position error {:.3g}, velocity error {:.3g}", gp, gv),
          "tighten --rtol/--atol, look for an inertia many orders of magnitude below the others (it makes the "
          "equations stiff and the projection ill-conditioned), or try another --constraints method; "
          "--drift-tolerance sets the limit (0: no check)");
}

}  // namespace constrained

std::string ConstrainedReport::ToText() const {
  return fmt::format("constraints: {}{}\n", ConstraintMethodName(method), why.empty() ? "" : " (" + why + ")") +
         StrategyFor(method).ReportLines(*this);
}

}  // namespace paynter
