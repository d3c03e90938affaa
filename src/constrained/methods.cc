// The methods' names, the automatic choice, and SimulateConstrained: assembly
// of the start, then the chosen method (see paynter/constrained.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "internal.h"
#include "paynter/constrained.h"

namespace paynter {

ConstraintMethod ParseConstraintMethod(const std::string& name) {
  if (name == "auto") return ConstraintMethod::kAuto;
  if (name == "zcp") return ConstraintMethod::kZcp;
  if (name == "parasitic") return ConstraintMethod::kParasitic;
  if (name == "lagrange-multipliers") return ConstraintMethod::kLagrangeMultipliers;
  if (name == "minimal-coordinates") return ConstraintMethod::kMinimalCoordinates;
  Diagnostic d;
  d.message = fmt::format("unknown constraint method '{}'", name);
  d.expected = "auto, parasitic, lagrange-multipliers, minimal-coordinates or zcp";
  d.got = name;
  throw Error(std::move(d));
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
  std::vector<double> x0 = model.initial_state();

  if (model.has_events() && (method == ConstraintMethod::kZcp || method == ConstraintMethod::kMinimalCoordinates)) {
    Diagnostic d;
    d.message = fmt::format("--constraints {} does not handle the model's events and conditions",
                            ConstraintMethodName(method));
    d.expected = "a model without if(), events or switched elements";
    d.got = fmt::format("events with --constraints {}", ConstraintMethodName(method));
    d.hint = "simulate the model with --constraints lagrange-multipliers or parasitic (docs/events.md)";
    throw Error(std::move(d));
  }
  if (model.num_constraints() == 0 && method != ConstraintMethod::kAuto && method != ConstraintMethod::kParasitic) {
    Diagnostic d;
    d.message = fmt::format("--constraints {}: the model has no constraint source", ConstraintMethodName(method));
    d.expected = "a multibody model with joints, or Se elements with 'constraint:'";
    d.got = "no joint constraint";
    d.hint = "simulate it without --constraints";
    throw Error(std::move(d));
  }

  // Parasitic (model already rewritten) or no constraints: the model as it is,
  // watching the parasitic springs' stretch.
  if (model.num_constraints() == 0) {
    OdeProblem problem;
    problem.n = model.num_states();
    problem.state_names = model.state_names();
    problem.rhs = [&workspace](double t, const double* x, double* dx) { workspace.CalcDerivatives(t, x, dx); };
    std::vector<int> springs;
    for (int i = 0; i < model.num_states(); ++i) {
      const std::string& n = model.state_names()[i];
      if (n.size() > 4 && n.rfind("q_", 0) == 0 && n.compare(n.size() - 2, 2, "_k") == 0) springs.push_back(i);
    }
    double stretch = 0;
    Solution sol = StartSolution(model, options.output);
    SimulateFrom(workspace, problem, x0, solver, nullptr, [&](double, const double* x) {
      for (int i : springs) stretch = std::max(stretch, std::fabs(x[i]));
    }, &sol);
    rep.max_position_drift = stretch;
    return sol;
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
    Diagnostic d;
    d.element = assembly.worst_joint;
    const bool pos = assembly.position_correction > options.assembly_tolerance;
    d.message = fmt::format("the start is not consistent with the joints: {} moved by {:.3g} to assemble them{}",
                            pos ? "positions" : "velocities (momenta)",
                            pos ? assembly.position_correction : assembly.velocity_correction,
                            assembly.worst_joint.empty() ? "" : fmt::format(" (furthest off: joint '{}')",
                                                                             assembly.worst_joint));
    d.expected = fmt::format("initial positions and velocities within {:.3g} of the joints", options.assembly_tolerance);
    d.got = fmt::format("position error {:.3g}, velocity error {:.3g}", assembly.position_error_before,
                        assembly.velocity_error_before);
    d.hint = "correct the bodies' initial position/orientation/velocity, or let paynter assemble the start "
             "(--assemble)";
    throw Error(std::move(d));
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
      Diagnostic d;
      if (worst >= 0) d.element = model.constraint_rows()[worst].joint;
      d.message = fmt::format("the start cannot be assembled: after the assembly the joints are still off by {:.3g} "
                              "(positions) and {:.3g} (velocities){}",
                              gp, gv, worst >= 0 ? fmt::format(" (furthest off: joint '{}')", d.element) : "");
      d.expected = fmt::format("positions and velocities within {:.3g} of the joints", kAssembledPosition);
      d.got = fmt::format("position error {:.3g}, velocity error {:.3g}", gp, gv);
      d.hint = "the bodies held by joints' `initial:` values (and the ground) must be consistent with the joints "
               "between them; check the joints' points and axes, or the initial values";
      throw Error(std::move(d));
    }
  }
  rep.analysis = AnalyzeConstraints(workspace, solver.t0, x0);

  // The drift check's limit: given, or the larger of 1e-6 and 10 rtol.
  ConstrainedOptions watched = options;
  if (watched.drift_tolerance < 0) watched.drift_tolerance = std::max(1e-6, 10 * solver.rtol);
  if (method == ConstraintMethod::kMinimalCoordinates)
    return constrained::MinimalCoordinates(workspace, x0, solver, watched, &rep);
  if (method == ConstraintMethod::kZcp) return constrained::Zcp(workspace, x0, solver, watched, &rep);

  // Lagrange multipliers: the compiled rhs solves the constraint forces with
  // the accelerations; stabilization projects after every accepted step.
  OdeProblem problem;
  problem.n = model.num_states();
  problem.state_names = model.state_names();
  problem.rhs = [&workspace](double t, const double* x, double* dx) { workspace.CalcDerivatives(t, x, dx); };
  projector.position_tolerance = std::min(1e-10, 1e-3 * solver.atol);
  projector.velocity_tolerance = std::min(1e-10, 1e-3 * solver.atol);
  if (options.stabilize) problem.project = [&projector](double t, double* x) { return projector.Project(t, x); };
  ConstraintProjector watcher(workspace);
  // Output times fall between steps: the interpolated state is projected too,
  // so that every recorded row satisfies the joints.
  ConstraintProjector at_output(workspace);
  at_output.position_tolerance = projector.position_tolerance;
  at_output.velocity_tolerance = projector.velocity_tolerance;
  at_output.jacobians_from = &projector;  // the step's Jacobians, formed nearer the output time
  const int n = model.num_states();
  std::function<void(double, const double*, double*)> full_state;
  if (options.stabilize)
    full_state = [&at_output, n](double t, const double* y, double* x) {
      std::copy(y, y + n, x);
      at_output.Project(t, x);
    };
  Solution sol = StartSolution(model, options.output);
  if (!options.stabilize) watched.drift_tolerance = 0;
  SimulateFrom(workspace, problem, x0, solver, full_state, [&](double t, const double* x) {
    constrained::WatchDrift(model, watched, method, watcher, t, x, &rep);
  }, &sol);
  return sol;
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
  Diagnostic d;
  if (row >= 0) d.element = model.constraint_rows()[row].joint;
  const ConstraintRow* r = row >= 0 ? &model.constraint_rows()[row] : nullptr;
  d.message = fmt::format(
      "--constraints {}: the joints drifted beyond the drift tolerance at t = {}: {} error {:.3g}{} (the results from "
      "here on would be wrong)",
      ConstraintMethodName(method), t, pos ? "position" : "velocity", pos ? gp : gv,
      r ? fmt::format(" on joint '{}' ({})", r->joint, r->direction.empty() ? r->source : r->direction) : "");
  d.expected = fmt::format("position and velocity constraint errors within {:.3g} and {:.3g} at every output time "
                           "(the drift tolerance {:.3g} times 1 + the largest coordinate, 1 + the largest momentum)",
                           tol_p, tol_v, tol);
  d.got = fmt::format("position error {:.3g}, velocity error {:.3g}", gp, gv);
  d.hint = "tighten --rtol/--atol, look for an inertia many orders of magnitude below the others (it makes the "
           "equations stiff and the projection ill-conditioned), or try another --constraints method; "
           "--drift-tolerance sets the limit (0: no check)";
  throw Error(std::move(d));
}

}  // namespace constrained

std::string ConstrainedReport::ToText() const {
  std::string out = fmt::format("constraints: {}{}\n", ConstraintMethodName(method), why.empty() ? "" : " (" + why + ")");
  if (method == ConstraintMethod::kParasitic) {
    out += fmt::format("parasitic springs: largest stretch {:.3g} (m or rad)\n", max_position_drift);
    return out;
  }
  if (analysis.constraints == 0) return out;
  out += analysis.ToText();
  out += fmt::format("assembly: positions moved by {:.3g}, momenta by {:.3g}\n", assembly.position_correction,
                     assembly.velocity_correction);
  if (method == ConstraintMethod::kMinimalCoordinates)
    out += fmt::format("coordinate partitions: {}; independent states: {}\n", partitions, fmt::join(independent, ", "));
  if (method == ConstraintMethod::kZcp)
    out += fmt::format("DAE (IDA): {} algebraic variables (joint efforts of the independent constraints and their "
                       "position multipliers)\n", algebraic);
  if (method == ConstraintMethod::kZcp && !zcp_dropped.empty())
    out += fmt::format("redundant rows left out of the DAE: {} (velocity){}\n", fmt::join(zcp_dropped, ", "),
                       zcp_note.empty() ? fmt::format(", {} (position)", fmt::join(zcp_dropped_positions, ", ")) : "");
  if (method == ConstraintMethod::kZcp && !zcp_note.empty()) out += "note: " + zcp_note + "\n";
  out += fmt::format("constraint drift at the output times: position {:.3g}, velocity {:.3g}\n", max_position_drift,
                     max_velocity_drift);
  return out;
}

}  // namespace paynter
