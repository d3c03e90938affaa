// The minimal-coordinates method: the equations in independent coordinates.
//
// Boudon et al. (2019) transform the dependent inertias onto the independent
// generalized velocities through two levels of transformers (a virtual
// inertia and a gyristor). paynter does the same numerically, by coordinate
// partitioning: the columns of the constraint Jacobians that a pivoted QR
// picks first are the dependent coordinates (positions from the position
// constraints, momenta from the flow constraints); only the others are
// integrated. At every evaluation the dependent positions are solved from the
// position constraints (Newton, least squares where constraints are
// redundant) and the dependent momenta from the flow constraints (linear),
// then the model's rhs gives the independent derivatives. The constraints
// hold to the Newton tolerance at every evaluation: no drift. A body's
// quaternion counts its unit norm among the position constraints.
//
// A choice of coordinates is good only near where it was made: it reaches a
// fold (its dependent block turns singular) as the mechanism moves. The
// condition number of the dependent blocks is watched after every accepted
// step (at a pace set by its trend), and the coordinates are chosen again at
// the step where it is twice as bad as at the choice, or past the limit, or
// would be within two more steps. A step whose evaluation falls past
// a fold (no solution for the dependent positions) sends the run back to the
// last accepted step, to choose there. Where the best choice is beyond the
// limit (a singular configuration of the mechanism) the run stops there.
// Restarts between two output times integrate to the next one first, so the
// output grid is the run's.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <optional>

#include "internal.h"

namespace paynter::constrained {
namespace {


// The condition number of a (tall) matrix of full column rank, from the
// eigenvalues of A^T A: cheaper than a singular value decomposition and
// accurate for the condition numbers that matter here (up to about 1e7;
// beyond, it is large, which is all that is asked).
double ConditionOf(const Eigen::MatrixXd& a) {
  const Eigen::MatrixXd g = a.transpose() * a;
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> e(g, Eigen::EigenvaluesOnly);
  const auto& v = e.eigenvalues();  // ascending
  return std::sqrt(v[v.size() - 1] / std::max(v[0], 1e-300 * v[v.size() - 1] + 1e-300));
}

struct Repartition {
  double t;
  std::vector<double> x;
  double condition;  // of the partition left
};

class Partitioned {
 public:
  Partitioned(ModelWorkspace& workspace, double condition_limit)
      : w_(workspace), m_(workspace.model()), limit_(condition_limit) {
    const CompiledModel& m = m_;
    const int nc = m.num_constraints();
    for (int k = 0; k < nc; ++k)
      if (m.constraint_rows()[k].position_slot >= 0) rows_pos_.push_back(k);
    for (int i = 0; i < m.num_states(); ++i) {
      if (m.state_inertia()[i] > 0) mom_.push_back(i);
      else if (IsPositionOrigin(m.state_origins()[i])) pos_candidates_.push_back(i);
    }
    // A body's quaternion has four coordinates for three rotations: its unit
    // norm is one more position constraint (row nc + k), else one of its
    // coordinates would be integrated as independent though it is not a
    // degree of freedom (with a fold of its own where it no longer fixes the
    // quaternion's scale).
    quaternions_ = QuaternionGroups(m);
    for (size_t k = 0; k < quaternions_.size(); ++k) rows_pos_.push_back(nc + static_cast<int>(k));
    c_.resize(nc);
    g_.resize(nc + quaternions_.size());
  }

  // Chooses the dependent coordinates at x (assembled).
  void Choose(double t, const std::vector<double>& x0) {
    x_ = x0;
    // Position Jacobian over the candidate position states.
    const int nr = static_cast<int>(rows_pos_.size());
    dep_pos_.clear();
    dep_mom_.clear();
    if (nr > 0) {
      Eigen::MatrixXd q = PositionJacobian(t, pos_candidates_);
      Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(q);
      qr.setThreshold(1e-8);
      for (int k = 0; k < qr.rank(); ++k) dep_pos_.push_back(pos_candidates_[qr.colsPermutation().indices()[k]]);
    }
    {
      Eigen::MatrixXd a = MomentumJacobian(t, mom_);
      for (int j = 0; j < a.cols(); ++j) a.col(j) *= m_.state_inertia()[mom_[j]];  // in velocities
      Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
      qr.setThreshold(1e-9);
      for (int k = 0; k < qr.rank(); ++k) dep_mom_.push_back(mom_[qr.colsPermutation().indices()[k]]);
    }
    std::sort(dep_pos_.begin(), dep_pos_.end());
    std::sort(dep_mom_.begin(), dep_mom_.end());
    std::vector<char> dep(m_.num_states(), 0);
    for (int i : dep_pos_) dep[i] = 1;
    for (int i : dep_mom_) dep[i] = 1;
    indep_.clear();
    for (int i = 0; i < m_.num_states(); ++i)
      if (!dep[i]) indep_.push_back(i);
    qd_valid_ = ad_valid_ = false;
  }

  const std::vector<int>& independent() const { return indep_; }
  const std::vector<int>& dependent_positions() const { return dep_pos_; }
  const std::vector<int>& dependent_momenta() const { return dep_mom_; }
  int size() const { return static_cast<int>(indep_.size()); }

  std::vector<double> Restrict(const std::vector<double>& x) const {
    std::vector<double> y(indep_.size());
    for (size_t k = 0; k < indep_.size(); ++k) y[k] = x[indep_[k]];
    return y;
  }

  // The full state from the independent coordinates (dependent ones solved).
  const std::vector<double>& Full(double t, const double* y) {
    for (size_t k = 0; k < indep_.size(); ++k) x_[indep_[k]] = y[k];
    SolvePositions(t);
    SolveMomenta(t);
    return x_;
  }

  // Condition number of the dependent blocks at the last full state.
  double Condition(double t) {
    double worst = 1;
    if (!dep_pos_.empty()) worst = std::max(worst, ConditionOf(PositionJacobian(t, dep_pos_)));
    if (!dep_mom_.empty()) {
      Eigen::MatrixXd a = MomentumJacobian(t, dep_mom_);
      for (int j = 0; j < a.cols(); ++j) a.col(j) *= m_.state_inertia()[dep_mom_[j]];
      worst = std::max(worst, ConditionOf(a));
    }
    return worst;
  }
  double limit() const { return limit_; }

 private:
  void Eval(double t) {
    w_.CalcConstraints(t, x_.data(), nullptr, c_.data(), g_.data());
    const size_t nc = c_.size();
    for (size_t k = 0; k < quaternions_.size(); ++k) {
      const double* q = x_.data() + quaternions_[k];
      g_[nc + k] = 0.5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] - 1);
    }
  }

  Eigen::MatrixXd PositionJacobian(double t, const std::vector<int>& cols) {
    Eval(t);
    const std::vector<double> g0 = g_;
    Eigen::MatrixXd q(rows_pos_.size(), cols.size());
    for (size_t j = 0; j < cols.size(); ++j) {  // central differences
      const int i = cols[j];
      const double save = x_[i], h = 1e-5 * (1 + std::fabs(save));
      x_[i] = save + h;
      Eval(t);
      const std::vector<double> gp = g_;
      x_[i] = save - h;
      Eval(t);
      for (size_t r = 0; r < rows_pos_.size(); ++r) q(r, j) = (gp[rows_pos_[r]] - g_[rows_pos_[r]]) / (2 * h);
      x_[i] = save;
    }
    g_ = g0;
    return q;
  }

  Eigen::MatrixXd MomentumJacobian(double t, const std::vector<int>& cols) {
    Eval(t);
    const std::vector<double> c0 = c_;
    Eigen::MatrixXd a(c_.size(), cols.size());
    for (size_t j = 0; j < cols.size(); ++j) {
      const int i = cols[j];
      const double save = x_[i];
      x_[i] = save + 1;
      Eval(t);
      for (size_t r = 0; r < c_.size(); ++r) a(r, j) = c_[r] - c0[r];
      x_[i] = save;
    }
    c_ = c0;
    return a;
  }

  double PositionError() const {
    double m = 0;
    for (int k : rows_pos_) m = std::max(m, std::fabs(g_[k]));
    return m;
  }

  void SolvePositions(double t) {
    if (dep_pos_.empty()) return;
    Eval(t);
    double err = PositionError();
    // Rounding in g grows with the coordinates (a long chain's tip is metres
    // from the origin): the tolerance is 1e-13 of the largest of them (at least 1).
    double size = 1;
    for (int i : pos_candidates_) size = std::max(size, std::fabs(x_[i]));
    const double tol = 1e-13 * size;
    // A fresh Jacobian that fails to halve the error four times (a fold of
    // this partition near which the independent coordinates have no
    // solution, or rounding), or 30 iterations, is a stall.
    int stalls = 0;
    for (int it = 0; err > tol; ++it) {
      if (it == 30 || stalls == 4 || !std::isfinite(err)) {
        ThrowAt({}, "",
                fmt::format("minimal coordinates: the dependent positions cannot be solved at t = {} "
                            "(position error {:.3g})",
                            t, err),
                "a configuration where the joints can be assembled", "Newton's method did not converge",
                "the mechanism may have reached a singular or unreachable configuration; try "
                "--constraints lagrange-multipliers");
      }
      const bool fresh = !qd_valid_;
      if (!qd_valid_) {
        qd_.setThreshold(1e-8);
        qd_.compute(PositionJacobian(t, dep_pos_));
        qd_valid_ = true;
      }
      Eigen::VectorXd g(rows_pos_.size());
      for (size_t r = 0; r < rows_pos_.size(); ++r) g[r] = g_[rows_pos_[r]];
      const Eigen::VectorXd dq = qd_.solve(g);
      for (size_t j = 0; j < dep_pos_.size(); ++j) x_[dep_pos_[j]] -= dq[j];
      Eval(t);
      const double next = PositionError();
      if (fresh && !(next < 0.5 * err)) ++stalls;
      if (!(next < 0.1 * err)) qd_valid_ = false;
      err = next;
    }
  }

  double VelocityError() const {
    double m = 0;
    for (double v : c_) m = std::max(m, std::fabs(v));
    return m;
  }

  void SolveMomenta(double t) {
    if (dep_mom_.empty()) return;
    // c = A(q) p is linear in p: with A at these positions one step is exact.
    // A factorization from nearby positions is reused while it contracts the
    // error tenfold per step (a chord iteration), else refreshed.
    Eval(t);
    double err = VelocityError();
    for (int it = 0; err > 1e-13 * (1 + err); ++it) {
      if (it == 8) ad_valid_ = false;  // refresh and try again (at most 25 steps: below)
      if (!ad_valid_) {
        ad_.setThreshold(1e-10);
        ad_.compute(MomentumJacobian(t, dep_mom_));
        ad_valid_ = true;
      }
      const Eigen::VectorXd c = Eigen::Map<const Eigen::VectorXd>(c_.data(), c_.size());
      const Eigen::VectorXd dp = ad_.solve(c);
      for (size_t j = 0; j < dep_mom_.size(); ++j) x_[dep_mom_[j]] -= dp[j];
      Eval(t);
      const double next = VelocityError();
      if (!(next < 0.1 * err)) ad_valid_ = false;
      err = next;
      if (it > 24) break;
    }
  }

  ModelWorkspace& w_;
  const CompiledModel& m_;
  double limit_;
  std::vector<int> rows_pos_, mom_, pos_candidates_, dep_pos_, dep_mom_, indep_, quaternions_;
  std::vector<double> x_, c_, g_;
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> qd_, ad_;
  bool qd_valid_ = false, ad_valid_ = false;
};

}  // namespace

Solution MinimalCoordinates(ModelWorkspace& workspace, const std::vector<double>& x0, const SolverOptions& solver,
                            const ConstrainedOptions& options, ConstrainedReport* report) {
  const CompiledModel& model = workspace.model();
  Partitioned part(workspace, options.condition_limit > 0 ? options.condition_limit : 1e4);
  const double limit = part.limit();
  std::vector<double> x = x0;
  double t = solver.t0;
  Solution all = StartSolution(model, options.output);
  std::vector<double> dx(model.num_states());
  ConstraintProjector watcher(workspace);
  // The output grid of the whole run, t0 + k dt_out: a round that starts
  // between two of its times first integrates to the next one (a bridge, whose
  // start is not recorded), then on along the grid.
  const double dt_out = solver.dt_out > 0 ? solver.dt_out : (solver.t_end - solver.t0) / 1000;
  const double merge = 1e-9 * dt_out;
  // A round that starts at an output time lays its grid from there: its times
  // differ from the run's by rounding, within `merge`.
  auto next_output = [&](double tt) {
    double k = std::floor((tt - solver.t0) / dt_out) + 1;
    while (solver.t0 + k * dt_out <= tt + merge) ++k;
    while (k > 1 && solver.t0 + (k - 1) * dt_out > tt + merge) --k;
    const double g = solver.t0 + k * dt_out;
    return g >= solver.t_end - merge ? solver.t_end : g;
  };
  bool on_grid = true, choose = true;
  double chosen_condition = 1, left_condition = 0;
  std::string failure;  // the solve whose failure forced the last restart
  for (int round = 0;; ++round) {
    if (round > 1000)
      ThrowAt({}, "", fmt::format("minimal coordinates: more than 1000 changes of independent coordinates (t = {})", t),
              "", "", "the mechanism may stay at a singular configuration; try --constraints lagrange-multipliers");
    if (choose) {
      part.Choose(t, x);
      chosen_condition = part.Condition(t);
      // The best partition beyond the limit: no set of independent
      // coordinates determines the others here, a singular configuration of
      // the mechanism (links aligned, a branch point); going on would pick a
      // branch at random.
      if (chosen_condition > limit) {
        std::string hint =
            "the mechanism passes a singular configuration, where its joints' constraints become dependent; "
            "--constraints lagrange-multipliers integrates every coordinate and passes it";
        if (!failure.empty()) hint += "; the solve that failed there: " + failure;
        ThrowAt(
            {}, "",
            fmt::format("minimal coordinates: no independent coordinates determine the others at t = {} (a "
                        "singular configuration of the mechanism)",
                        t),
            fmt::format("a choice of independent coordinates whose dependent block has a condition number "
                        "below {:.3g}",
                        limit),
            fmt::format("{:.6g} for the best choice there{}", chosen_condition,
                        left_condition > 0 ? fmt::format(" (the coordinates used until then: {:.3g})", left_condition)
                                           : std::string()),
            hint);
      }
      failure.clear();
      ++report->partitions;
      report->independent.clear();
      for (int i : part.independent()) report->independent.push_back(model.state_names()[i]);
    }
    choose = true;
    OdeProblem problem;
    problem.n = part.size();
    for (int i : part.independent()) problem.state_names.push_back(model.state_names()[i]);
    // After every accepted step: the state there (a restart point should a
    // later solve fail) and the condition of the dependent blocks, at a pace
    // set by its trend (again when 0.3 of the way left to the trigger at its
    // last rate, at least every 10th step). A partition's fold comes fast (the
    // inverse condition falls about linearly to zero), and past it the
    // dependent positions have no solution: the coordinates are chosen again
    // at the step where the condition is twice that at the choice, or
    // passes the limit, or at its rate would within two more steps. The new
    // round starts there, once the outputs up to that step are recorded: at
    // the next evaluation after them.
    const double round_start = t;
    double next_out = next_output(t), last_t = t, last_h = 0;
    std::vector<double> last_x = x;
    std::optional<Repartition> pending;
    double inverse = 1 / chosen_condition, inverse_t = t, rate = 0, next_check = t;
    const double trigger = std::max(1 / limit, 0.5 / chosen_condition);
    long steps = 0, checked = 0;
    problem.project = [&](double tt, double* y) {
      const std::vector<double>& f = part.Full(tt, y);
      last_h = tt - last_t;
      last_t = tt;
      last_x = f;
      ++steps;
      if (pending || (tt < next_check && steps - checked < 10)) return false;
      const double now = 1 / part.Condition(tt);
      if (tt > inverse_t) rate = (inverse - now) / (tt - inverse_t);  // > 0: worsening
      inverse = now;
      inverse_t = tt;
      checked = steps;
      const double ahead = now - 2 * last_h * std::max(rate, 0.0);
      if (now < trigger || ahead < 1 / limit) {
        pending = Repartition{tt, f, 1 / now};
      } else {
        next_check = rate > 0 ? tt + 0.3 * (now - trigger) / rate : HUGE_VAL;
      }
      return false;
    };
    problem.rhs = [&](double tt, const double* y, double* dy) {
      if (pending && pending->t < next_out) throw *pending;
      const std::vector<double>* xs = nullptr;
      try {
        xs = &part.Full(tt, y);
      } catch (const Error& e) {
        // Past a fold within a step (no solution for these independent
        // coordinates): start again from the last accepted step, with
        // coordinates chosen there; where that makes no progress the error stands.
        if (last_t > round_start && last_t < next_out) {
          failure = e.what();
          failure = failure.substr(0, failure.find('\n'));
          throw Repartition{last_t, last_x, 1 / inverse};
        }
        throw;
      }
      workspace.CalcDerivatives(tt, xs->data(), dx.data());
      for (int k = 0; k < part.size(); ++k) dy[k] = dx[part.independent()[k]];
    };
    SolverOptions so = solver;
    so.t0 = t;
    Solution bridge;
    const bool bridging = !on_grid;
    if (bridging) {
      so.t_end = next_out;
      so.dt_out = next_out - t;
    } else {
      so.dt_out = dt_out;
    }
    double watched_t = t;
    std::vector<double> watched_x;
    try {
      SimulateFrom(
          workspace, problem, part.Restrict(x), so,
          [&](double tt, const double* y, double* xs) {
            const std::vector<double>& f = part.Full(tt, y);
            std::copy(f.begin(), f.end(), xs);
          },
          [&](double tt, const double* xs) {
            WatchDrift(model, options, ConstraintMethod::kMinimalCoordinates, watcher, tt, xs, report);
            next_out = next_output(tt);
            watched_t = tt;
            if (bridging) watched_x.assign(xs, xs + model.num_states());
          },
          bridging ? &bridge : &all);
    } catch (const Repartition& r) {
      // The outputs up to r.t are recorded; r.t itself is one of them only
      // when it lies on the grid.
      t = r.t;
      x = r.x;
      left_condition = r.condition;
      on_grid = r.t == watched_t;
      continue;
    }
    if (!bridging) return all;
    // The bridge reached the next output time: its row goes to the run, and
    // the same coordinates go on from there along the grid.
    if (!bridge.rows.empty() && bridge.rows.back()[0] == watched_t && !all.LastRowAt(watched_t))
      all.AddRow(bridge.rows.back().data());
    all.stats.steps += bridge.stats.steps;
    all.stats.rejected += bridge.stats.rejected;
    all.stats.rhs_evals += bridge.stats.rhs_evals;
    all.stats.jac_evals += bridge.stats.jac_evals;
    all.stats.integrate_seconds += bridge.stats.integrate_seconds;
    t = watched_t;
    x = watched_x;
    on_grid = true;
    choose = false;
    if (t >= solver.t_end) return all;
  }
}

}  // namespace paynter::constrained

namespace paynter {

CoordinatePartition ChooseCoordinatePartition(ModelWorkspace& workspace, double t, const std::vector<double>& x) {
  const CompiledModel& model = workspace.model();
  constrained::Partitioned part(workspace, 1e4);
  part.Choose(t, x);
  CoordinatePartition p;
  for (int i : part.independent()) p.independent.push_back(model.state_names()[i]);
  for (int i : part.dependent_positions()) p.dependent_positions.push_back(model.state_names()[i]);
  for (int i : part.dependent_momenta()) p.dependent_momenta.push_back(model.state_names()[i]);
  return p;
}

}  // namespace paynter

namespace paynter::constrained {
namespace {

class MinimalCoordinatesMethod final : public ConstraintMethodStrategy {
 public:
  ConstraintMethod method() const override { return ConstraintMethod::kMinimalCoordinates; }
  bool HandlesEvents() const override { return false; }

  void View(MethodView* v, const std::string& file) const override {
    RequireConstraintSources(v->model, file, method());
  }

  // The partition of the states chosen at the assembled start.
  std::string EquationNotes(const MethodView&, const EquationSystem& eqs) const override {
    CodegenOptions cg;
    cg.backend = Backend::kTape;
    const CompiledModel cm(eqs, cg);
    ModelWorkspace ws(cm);
    std::vector<double> x = cm.initial_state();
    ConstraintProjector(ws).Project(0, x.data());
    const CoordinatePartition p = ChooseCoordinatePartition(ws, 0, x);
    return fmt::format(
        "\ncoordinate partition (--constraints minimal-coordinates, chosen at the assembled start; chosen again "
        "where it becomes ill-conditioned):\n"
        "independent ({}, integrated): {}\n"
        "dependent positions ({}, solved from the position constraints): {}\n"
        "dependent momenta ({}, solved from the flow constraints): {}\n",
        p.independent.size(), fmt::join(p.independent, ", "), p.dependent_positions.size(),
        fmt::join(p.dependent_positions, ", "), p.dependent_momenta.size(), fmt::join(p.dependent_momenta, ", "));
  }

  Solution Simulate(const ConstrainedRun& run) const override {
    return MinimalCoordinates(run.workspace, run.x0, run.solver, run.options, run.report);
  }

  std::string MethodLines(const ConstrainedReport& r) const override {
    return fmt::format("coordinate partitions: {}; independent states: {}\n", r.partitions,
                       fmt::join(r.independent, ", "));
  }
};

}  // namespace

const ConstraintMethodStrategy& MinimalCoordinatesStrategy() {
  static const MinimalCoordinatesMethod strategy;
  return strategy;
}

}  // namespace paynter::constrained
