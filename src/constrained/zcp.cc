// The zcp method: rigid joints, the DAE integrated as a DAE.
//
// With rigid joints the bond graph of a mechanism has zero-order causal paths
// through the joints (Boudon et al. 2019: class 4 in closed chains, index 2
// or more). The joints of paynter's multibody library cannot be flow sources
// (the cross-product transformers' fixed causality, constraint C2, conflicts
// with them), so the paths are opened where the paper says they are opened:
// by break variables, the joints' efforts, as modulated effort sources. Those
// efforts become algebraic variables of the DAE
//
//   x' = f(x, lambda) + Q(x)^T mu     (mu only on the position states)
//   0  = c_i(x)                       the independent flow constraints (index
//   2) 0  = g_i(x)                       their position constraints (GGL
//   stabilization)
//
// integrated by IDA with the algebraic variables out of the error test. The
// index is reduced by the Gear-Gupta-Leimkuhler formulation rather than by
// Pantelides' algorithm: the position constraints are kept, not differentiated
// twice, so that nothing drifts. Redundant constraint rows (found by the
// analysis at the start) carry no effort here; the independent rows carry
// it all.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "internal.h"

namespace paynter::constrained {

namespace {

// The most singular configurations one run passes by lagrange-multipliers'
// steps (below) before zcp gives up.
constexpr int kMaxBridges = 200;

Solution Zcp(ModelWorkspace &workspace, const std::vector<double> &x0, const SolverOptions &solver,
             const ConstrainedOptions &options, ConstraintProjector *projector, ConstrainedReport *report) {
  const CompiledModel &model = workspace.model();
  // The model with break variables: prepared with the model (PreparedModel,
  // through the stage cache), else made here from the Model it came from.
  std::vector<std::string> params;
  std::optional<CompiledModel> made;
  if (!options.method_model) {
    if (!options.source) {
      ThrowAt({}, "",
              "--constraints zcp: the model the compiled one came from is "
              "needed (ConstrainedOptions::source or method_model)",
              "", "", "pass the Model, or the break-variable model compiled, to SimulateConstrained's options");
    }
    const Model broken = BreakVariableModel(*options.source, &params);
    made.emplace(BuildEquations(broken, AssignCausality(broken)), options.codegen);
  }
  const CompiledModel &fm = options.method_model ? *options.method_model : *made;
  if (options.method_model)
    for (const auto &row : model.constraint_rows()) params.push_back("zcp_" + row.source);
  ModelWorkspace fw(fm);
  // The run's parameter values (the prepared ones, and those set for this run).
  for (const auto &name : model.parameter_names())
    if (const int i = fm.ParameterIndex(name); i >= 0) fw.SetParameterAt(i, workspace.GetParameter(name));
  bool same = fm.state_names() == model.state_names() && static_cast<int>(params.size()) == model.num_constraints();
  for (const auto &p : params) same = same && fm.ParameterIndex(p) >= 0;
  if (!same)
    ThrowAt({}, "",
            "--constraints zcp: the model with break variables has other "
            "states than the model",
            "", "", "this is a bug in paynter: please report it");
  std::vector<int> param_index;
  for (const auto &p : params) param_index.push_back(fm.ParameterIndex(p));

  const int nx = model.num_states(), nc = model.num_constraints();
  // Independent rows (the analysis at the assembled start), and among them
  // those with a position constraint.
  // The independent rows are those a QR factorization with column pivoting
  // of the (velocity) constraint Jacobian's transpose picks first: the best
  // conditioned set, not the first in model order.
  std::vector<int> rows, rows_pos;
  {
    std::vector<int> mom;
    for (int i = 0; i < nx; ++i)
      if (model.state_inertia()[i] > 0) mom.push_back(i);
    std::vector<double> xs(x0), c0(nc), c1(nc);
    workspace.CalcConstraints(solver.t0, xs.data(), nullptr, c0.data(), nullptr);
    Eigen::MatrixXd Gt(mom.size(), nc);
    for (size_t j = 0; j < mom.size(); ++j) {
      const double save = xs[mom[j]];
      xs[mom[j]] = save + 1;
      workspace.CalcConstraints(solver.t0, xs.data(), nullptr, c1.data(), nullptr);
      xs[mom[j]] = save;
      for (int k = 0; k < nc; ++k) Gt(j, k) = (c1[k] - c0[k]) * model.state_inertia()[mom[j]];
    }
    for (int k = 0; k < nc; ++k)
      if (Gt.col(k).norm() > 0) Gt.col(k) /= Gt.col(k).norm();
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Gt);
    qr.setThreshold(1e-9);
    for (int r = 0; r < qr.rank(); ++r) rows.push_back(qr.colsPermutation().indices()[r]);
    std::sort(rows.begin(), rows.end());
  }
  std::vector<int> pos;
  for (int i = 0; i < nx; ++i)
    if (IsPositionOrigin(model.state_origins()[i])) pos.push_back(i);
  {
    // The position constraints kept (GGL): chosen the same way, on their own
    // Jacobian, among all rows that have one.
    std::vector<int> cand;
    for (int k = 0; k < nc; ++k)
      if (model.constraint_rows()[k].position_slot >= 0) cand.push_back(k);
    std::vector<double> xs(x0), g0(nc), g1(nc);
    workspace.CalcConstraints(solver.t0, xs.data(), nullptr, nullptr, g0.data());
    Eigen::MatrixXd Qt(pos.size(), cand.size());
    for (size_t j = 0; j < pos.size(); ++j) {
      const double save = xs[pos[j]], h = 1e-7 * (1 + std::fabs(save));
      xs[pos[j]] = save + h;
      workspace.CalcConstraints(solver.t0, xs.data(), nullptr, nullptr, g1.data());
      xs[pos[j]] = save;
      for (size_t k = 0; k < cand.size(); ++k) Qt(j, k) = (g1[cand[k]] - g0[cand[k]]) / h;
    }
    for (int k = 0; k < Qt.cols(); ++k)
      if (Qt.col(k).norm() > 0) Qt.col(k) /= Qt.col(k).norm();
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Qt);
    qr.setThreshold(1e-7);
    for (int r = 0; r < qr.rank(); ++r) rows_pos.push_back(cand[qr.colsPermutation().indices()[r]]);
    std::sort(rows_pos.begin(), rows_pos.end());
  }
  for (int pass = 0;; ++pass) {
    if (pass == 1) rows_pos.clear();
    report->zcp_dropped.clear();
    report->zcp_dropped_positions.clear();
    const int nl = static_cast<int>(rows.size()), nm = static_cast<int>(rows_pos.size());
    for (int k = 0; k < nc; ++k) {
      if (std::find(rows.begin(), rows.end(), k) == rows.end())
        report->zcp_dropped.push_back(model.constraint_rows()[k].source);
      if (model.constraint_rows()[k].position_slot >= 0 &&
          std::find(rows_pos.begin(), rows_pos.end(), k) == rows_pos.end())
        report->zcp_dropped_positions.push_back(model.constraint_rows()[k].source);
    }
    const int n = nx + nl + nm;
    report->algebraic = nl + nm;

    std::vector<double> c(nc), g(nc), f(nx), f0(nx), x(x0);
    auto set_efforts = [&](const double *lambda) {
      for (int k = 0; k < nc; ++k) fw.SetParameterAt(param_index[k], 0.0);
      for (int j = 0; j < nl; ++j) fw.SetParameterAt(param_index[rows[j]], lambda[j]);
    };
    // Q = dg/dq over the position states, kept between output times (mu is zero
    // on the exact solution; Q only has to span the constraint directions).
    Eigen::MatrixXd Q(nm, pos.size());
    auto refresh_q = [&](double t, std::vector<double> &xs) {
      workspace.CalcConstraints(t, xs.data(), nullptr, nullptr, g.data());
      const std::vector<double> g0 = g;
      for (size_t j = 0; j < pos.size(); ++j) {
        const double save = xs[pos[j]], h = 1e-7 * (1 + std::fabs(save));
        xs[pos[j]] = save + h;
        workspace.CalcConstraints(t, xs.data(), nullptr, nullptr, g.data());
        for (int r = 0; r < nm; ++r) Q(r, j) = (g[rows_pos[r]] - g0[rows_pos[r]]) / h;
        xs[pos[j]] = save;
      }
    };
    // Consistent start at (t, xs): the accelerations of the rigid model, and
    // the efforts of the independent rows that give them (f is affine in the
    // efforts).
    std::vector<double> y0(n, 0.0), yp0(n, 0.0);
    auto consistent_start = [&](double t, const std::vector<double> &xs) {
      refresh_q(t, const_cast<std::vector<double> &>(xs));
      std::vector<double> xdot(nx);
      workspace.CalcDerivatives(t, xs.data(), xdot.data());
      std::vector<double> zero(nl, 0.0), unit(nl, 0.0);
      set_efforts(zero.data());
      fw.CalcDerivatives(t, xs.data(), f0.data());
      Eigen::MatrixXd B(nx, nl);
      for (int j = 0; j < nl; ++j) {
        unit.assign(nl, 0.0);
        unit[j] = 1;
        set_efforts(unit.data());
        fw.CalcDerivatives(t, xs.data(), f.data());
        for (int i = 0; i < nx; ++i) B(i, j) = f[i] - f0[i];
      }
      Eigen::VectorXd rhs(nx);
      for (int i = 0; i < nx; ++i) rhs[i] = xdot[i] - f0[i];
      Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(B);
      const Eigen::VectorXd lambda0 = cod.solve(rhs);
      y0.assign(n, 0.0);
      yp0.assign(n, 0.0);
      for (int i = 0; i < nx; ++i) y0[i] = xs[i], yp0[i] = xdot[i];
      for (int j = 0; j < nl; ++j) y0[nx + j] = lambda0[j];
    };

    DaeProblem dae;
    dae.n = n;
    dae.differential.assign(n, 0);
    for (int i = 0; i < nx; ++i) dae.differential[i] = 1;
    // Joint efforts and position multipliers: out of the error test; their
    // weight in the Newton test is that of a force of 1e-6 (not of atol, which
    // the finite-difference Jacobian cannot resolve on a large mechanism).
    dae.atol.assign(n, solver.atol);
    for (int i = nx; i < n; ++i) dae.atol[i] = std::max(solver.atol, 1e-6);
    dae.names = model.state_names();
    dae.central_differences = true;
    for (int k : rows) dae.names.push_back("effort of " + model.constraint_rows()[k].source);
    for (int k : rows_pos) dae.names.push_back("position multiplier of " + model.constraint_rows()[k].source);
    dae.residual = [&](double t, const double *y, const double *yp, double *r) {
      set_efforts(y + nx);
      fw.CalcDerivatives(t, y, f.data());
      for (int i = 0; i < nx; ++i) r[i] = yp[i] - f[i];
      const double *mu = y + nx + nl;
      for (size_t j = 0; j < pos.size(); ++j) {
        double s = 0;
        for (int k = 0; k < nm; ++k) s += Q(k, j) * mu[k];
        r[pos[j]] -= s;
      }
      workspace.CalcConstraints(t, y, nullptr, c.data(), g.data());
      for (int j = 0; j < nl; ++j) r[nx + j] = c[rows[j]];
      for (int k = 0; k < nm; ++k) r[nx + nl + k] = g[rows_pos[k]];
    };

    // The first step. IDA's own choice, 0.5 / |yp0| in its error weights, is
    // about 1e-10 s for a mechanism that starts at rest (momenta of zero
    // weigh 1/atol, their derivatives are the forces); a step that small
    // makes the Newton matrix of this index-2 DAE ill-conditioned (it grows
    // as 1/h^2 in the joint efforts and position multipliers) beyond what its
    // difference Jacobian resolves, and the corrector fails at the start.
    // The error test shrinks a first step that is too large: start at 1e-3 of
    // the first output interval (IDA's choice before that reduction).
    SolverOptions first_step = solver;
    if (!(solver.initial_step > 0)) {
      const double span = solver.t_end - solver.t0;
      first_step.initial_step = 1e-3 * std::min(span, solver.dt_out > 0 ? solver.dt_out : span / 1000);
    }
    Solution sol = StartSolution(model);
    sol.compile_seconds += fm.compile_seconds();
    ConstraintProjector watcher(workspace);
    std::vector<double> row(1 + model.num_outputs()), xs(nx);
    const auto start = std::chrono::steady_clock::now();
    // Segments: IDA from the start; where its Newton iteration fails after
    // the start (the independent rows become dependent at a singular
    // configuration of the mechanism: the links of a parallelogram aligned),
    // lagrange-multipliers carries the run from the last output row over the
    // failure (its rank-revealing solve passes such configurations), and
    // IDA starts afresh from the bridge's end, a consistent state.
    double seg_t0 = solver.t0;
    std::vector<double> seg_x = x0, last_x = x0;
    double last_t = solver.t0;
    bool failed_here = false;
    report->zcp_bridges = 0;
    report->zcp_bridge_time = 0;
    report->zcp_first_bridge = 0;
    for (;;) {
      consistent_start(seg_t0, seg_x);
      SolverOptions seg = first_step;
      seg.t0 = seg_t0;
      const bool first_segment = seg_t0 == solver.t0;
      try {
        const SolverStats st = IntegrateDae(dae, y0, yp0, seg, [&](double t, const double *y) {
          std::copy(y, y + nx, xs.begin());
          refresh_q(t, xs);
          if (!first_segment && t == seg_t0) return;  // the bridge's last row
          WatchDrift(model, options, ConstraintMethod::kZcp, watcher, t, xs.data(), report);
          row[0] = t;
          workspace.CalcOutputs(t, xs.data(), row.data() + 1);
          sol.AddRow(row.data());
          last_t = t;
          last_x = xs;
          // Rows are held until the start is past (a failure there retries at
          // velocity level, below), then streamed.
          if (options.output && !sol.sink() && sol.num_rows() >= 2) sol.StreamTo(options.output);
        });
        sol.stats.steps += st.steps;
        sol.stats.rejected += st.rejected;
        sol.stats.rhs_evals += st.rhs_evals;
        sol.stats.jac_evals += st.jac_evals;
        break;
      } catch (const RunStopped &) {
        throw;  // asked for: not a failure to retry
      } catch (const Error &e) {
        // Position stabilization can keep IDA's Newton iteration from converging
        // at the start (seen on a hyperstatic mechanism, depending on which
        // redundant rows are left out); the velocity-level DAE (index 2) then
        // runs instead, and the report says so.
        if (pass == 0 && sol.num_rows() <= 1 && !rows_pos.empty()) {
          report->zcp_note =
              "position stabilization (GGL) made IDA fail at the "
              "start: integrated at velocity level, "
              "positions drift within the tolerances";
          failed_here = true;
          break;
        }
        // A failure after the start: the bridge, unless there is nothing to
        // bridge from (the start), no projector, or too many already.
        const std::string what = e.what();
        if (sol.num_rows() < 1 || !projector || report->zcp_bridges >= kMaxBridges ||
            what.find("ida failed") == std::string::npos)
          throw;
        const double dt = solver.dt_out > 0 ? solver.dt_out : (solver.t_end - solver.t0) / 1000;
        const double failed_at = std::max(last_t, [&] {
          const auto at = what.find("ida failed at t = ");
          return at == std::string::npos ? last_t : std::strtod(what.c_str() + at + 18, nullptr);
        }());
        // Over the failure and two output intervals past it, on the output grid.
        const double k = std::ceil((failed_at - last_t) / dt - 1e-9) + 2;
        const double bridge_end = std::min(solver.t_end, last_t + k * dt);
        const OdeProblem problem = ProjectedProblem(workspace, *projector, solver);
        SolverOptions bridge = solver;
        bridge.method = Method::kDopri5;
        bridge.t0 = last_t;
        bridge.t_end = bridge_end;
        bridge.dt_out = dt;
        bridge.initial_step = 0;
        Solution part = StartSolution(model);
        std::vector<double> end_x = last_x;
        double end_t = last_t;
        const std::function<void(double, const double *, double *)> full_state =
            [projector, nx](double t, const double *y, double *x) {
              std::copy(y, y + nx, x);
              projector->Project(t, x);
            };
        SimulateFrom(workspace, problem, last_x, bridge, full_state, [&](double t, const double *x) {
          WatchDrift(model, options, ConstraintMethod::kZcp, watcher, t, x, report);
          end_t = t;
          end_x.assign(x, x + nx);
        }, &part);
        for (size_t r = 1; r < part.rows.size(); ++r) sol.AddRow(part.rows[r].data());
        sol.stats.steps += part.stats.steps;
        sol.stats.rejected += part.stats.rejected;
        sol.stats.rhs_evals += part.stats.rhs_evals;
        sol.stats.projections += part.stats.projections;
        if (report->zcp_bridges++ == 0) report->zcp_first_bridge = failed_at;
        report->zcp_bridge_time += end_t - last_t;
        if (end_t >= solver.t_end) break;
        seg_t0 = end_t;
        seg_x = end_x;
        last_t = end_t;
        last_x = end_x;
      }
    }
    if (failed_here) continue;
    sol.stats.integrate_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options.output && !sol.sink()) sol.StreamTo(options.output);
    return sol;
  }
}

}  // namespace
}  // namespace paynter::constrained

namespace paynter {

Model BreakVariableModel(const Model &source, std::vector<std::string> *params) {
  Model m = source;
  for (auto &e : m.elements) {
    if (e.form != LawForm::kConstraint) continue;
    const std::string name = "zcp_" + e.name;
    if (m.symbols.count(name))
      ThrowAt({}, e.name,
              fmt::format("--constraints zcp needs the name '{}' for the joint effort of '{}'", name, e.name), "", "",
              "rename the model's variable of that name");
    Parameter p;
    p.name = name;
    p.value = 0;
    p.text = "0";
    p.where = e.where;
    m.parameters.push_back(p);
    const GiNaC::symbol s(name);
    m.symbols.emplace(name, s);
    e.form = LawForm::kEffort;
    e.law = s;
    e.law_key = "effort";
    e.law_text = name;
    e.position.reset();
    params->push_back(name);
  }
  return m;
}

}  // namespace paynter

namespace paynter::constrained {
namespace {

class ZcpMethod final : public ConstraintMethodStrategy {
 public:
  ConstraintMethod method() const override { return ConstraintMethod::kZcp; }

  std::string StageKey(const ParasiticOptions &) const override { return "zcp"; }

  void View(MethodView *v, const std::string &file) const override {
    RequireConstraintSources(v->model, file, method());
    v->source = v->model;
    v->model = BreakVariableModel(v->source, &v->break_variables);
  }
  std::string ViewHeader(const MethodView &v) const override {
    return fmt::format(
        "constraints: zcp: {} joint efforts are break variables (effort sources zcp_<S>), the "
        "algebraic variables of the DAE below: {}\n\n",
        v.break_variables.size(), fmt::join(v.break_variables, ", "));
  }
  // The break variables open the paths through the rigid joints; the DAE's
  // index comes from the constraints they satisfy.
  std::string CausalityNotes(const MethodView &v) const override {
    std::string flow, position;
    int positions = 0;
    for (const auto &e : v.source.elements) {
      if (e.form != LawForm::kConstraint) continue;
      const std::string what = e.direction.empty() ? e.joint : e.joint + ": " + e.direction;
      flow += fmt::format("  0 = f_{}{}    ({})\n", e.name, e.law.is_zero() ? "" : " - (" + e.law_text + ")", what);
      if (e.position) {
        position += fmt::format("  0 = {}    ({})\n", e.position_text, what);
        ++positions;
      }
    }
    return fmt::format(
        "\nDAE (--constraints zcp, integrated by IDA): the state equations of this graph, with the break variables "
        "algebraic, and\nflow constraints ({}; index 2):\n{}position constraints ({}; Gear-Gupta-Leimkuhler "
        "stabilization, a multiplier on the position states):\n{}"
        "the independent rows among them are chosen at the start (pivoted QR); redundant rows carry no effort\n",
        v.break_variables.size(), flow, positions, position);
  }
  std::string EquationNotes(const MethodView &v, const EquationSystem &) const override { return CausalityNotes(v); }

  // The break-variable model's equations, lowered with the model's own.
  std::optional<LoweredModel> Prepare(const Model &model) const override {
    std::vector<std::string> names;
    const Model broken = BreakVariableModel(model, &names);
    return LowerModel(BuildEquations(broken, AssignCausality(broken)));
  }

  bool HandlesEvents() const override { return false; }
  const char *OwnIntegrator() const override { return "ida"; }
  Solution Simulate(const ConstrainedRun &run) const override {
    return Zcp(run.workspace, run.x0, run.solver, run.options, run.projector, run.report);
  }

  std::string MethodLines(const ConstrainedReport &r) const override {
    std::string out = fmt::format(
        "DAE (IDA): {} algebraic variables (joint efforts of the independent constraints and their "
        "position multipliers)\n",
        r.algebraic);
    if (!r.zcp_dropped.empty())
      out += fmt::format("redundant rows left out of the DAE: {} (velocity){}\n", fmt::join(r.zcp_dropped, ", "),
                         r.zcp_note.empty() ? fmt::format(", {} (position)", fmt::join(r.zcp_dropped_positions, ", "))
                                            : "");
    if (!r.zcp_note.empty()) out += "note: " + r.zcp_note + "\n";
    if (r.zcp_bridges > 0)
      out += fmt::format(
          "note: IDA's Newton iteration failed {} times near a singular configuration (the independent rows "
          "dependent; first at t = {:.6g}): lagrange-multipliers carried the run over them, {:.3g} s in all\n",
          r.zcp_bridges, r.zcp_first_bridge, r.zcp_bridge_time);
    return out;
  }
};

}  // namespace

const ConstraintMethodStrategy &ZcpStrategy() {
  static const ZcpMethod strategy;
  return strategy;
}

}  // namespace paynter::constrained
