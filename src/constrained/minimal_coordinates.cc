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
// hold to the Newton tolerance at every evaluation: no drift. When the
// dependent block becomes ill-conditioned (a singular position of the chosen
// partition: condition number above 1e4, checked at every 10th output time)
// the coordinates are chosen again there, or before, when the trend of the
// condition number says it will be within ten outputs (a partition's fold,
// where its dependent block turns singular, comes fast).
#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "internal.h"

namespace paynter::constrained {
namespace {


struct Repartition {
  double t;
  std::vector<double> x;
  double condition;  // of the partition left
};

class Partitioned {
 public:
  Partitioned(const CompiledModel& m, double condition_limit) : m_(m), limit_(condition_limit) {
    const int nc = m.num_constraints();
    for (int k = 0; k < nc; ++k)
      if (m.constraint_rows()[k].position_slot >= 0) rows_pos_.push_back(k);
    for (int i = 0; i < m.num_states(); ++i) {
      if (m.state_inertia()[i] > 0) mom_.push_back(i);
      else if (IsPositionOrigin(m.state_origins()[i])) pos_candidates_.push_back(i);
    }
    c_.resize(nc);
    g_.resize(nc);
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
    if (!dep_pos_.empty()) {
      Eigen::JacobiSVD<Eigen::MatrixXd> s(PositionJacobian(t, dep_pos_));
      const auto& v = s.singularValues();
      worst = std::max(worst, v[0] / std::max(v[v.size() - 1], 1e-300));
    }
    if (!dep_mom_.empty()) {
      Eigen::MatrixXd a = MomentumJacobian(t, dep_mom_);
      for (int j = 0; j < a.cols(); ++j) a.col(j) *= m_.state_inertia()[dep_mom_[j]];
      Eigen::JacobiSVD<Eigen::MatrixXd> s(a);
      const auto& v = s.singularValues();
      worst = std::max(worst, v[0] / std::max(v[v.size() - 1], 1e-300));
    }
    return worst;
  }
  double limit() const { return limit_; }

 private:
  void Eval(double t) { m_.CalcConstraints(t, x_.data(), nullptr, c_.data(), g_.data()); }

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
        Diagnostic d;
        d.message = fmt::format("minimal coordinates: the dependent positions cannot be solved at t = {} "
                                "(position error {:.3g})", t, err);
        d.expected = "a configuration where the joints can be assembled";
        d.got = "Newton's method did not converge";
        d.hint = "the mechanism may have reached a singular or unreachable configuration; try "
                 "--constraints lagrange-multipliers";
        throw Error(std::move(d));
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

  const CompiledModel& m_;
  double limit_;
  std::vector<int> rows_pos_, mom_, pos_candidates_, dep_pos_, dep_mom_, indep_;
  std::vector<double> x_, c_, g_;
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> qd_, ad_;
  bool qd_valid_ = false, ad_valid_ = false;
};

}  // namespace

Solution MinimalCoordinates(const CompiledModel& model, const std::vector<double>& x0, const SolverOptions& solver,
                            const ConstrainedOptions& options, ConstrainedReport* report) {
  Partitioned part(model, options.condition_limit > 0 ? options.condition_limit : 1e4);
  std::vector<double> x = x0;
  double t = solver.t0;
  Solution all = StartSolution(model, options.output);
  std::vector<double> dx(model.num_states());
  ConstraintProjector watcher(model);
  double left_condition = 0;  // of the partition the last one replaced
  for (int round = 0;; ++round) {
    if (round > 1000) {
      Diagnostic d;
      d.message = "minimal coordinates: more than 1000 changes of independent coordinates";
      d.hint = "the mechanism may stay at a singular configuration; try --constraints lagrange-multipliers";
      throw Error(std::move(d));
    }
    part.Choose(t, x);
    // A new choice not twice better conditioned than the one it replaces (or
    // beyond the limit): no set of independent coordinates is good here (a
    // singular configuration of the mechanism, a branch point), and going on
    // would pick a branch at random.
    if (round > 0) {
      const double c = part.Condition(t);
      const double bound = std::min(part.limit(), 0.5 * left_condition);
      if (c > bound) {
        Diagnostic d;
        d.message = fmt::format("minimal coordinates: no well-conditioned independent coordinates at t = {}", t);
        d.expected = fmt::format(
            "a coordinate partition with condition number below {:.3g} (below {:.3g}, and at least twice better "
            "conditioned than the partition it replaces, {:.3g})",
            bound, part.limit(), left_condition);
        d.got = fmt::format("{:.3g} for the best one (a singular configuration of the mechanism)", c);
        d.hint = "the mechanism passes a branch point; try --constraints lagrange-multipliers";
        throw Error(std::move(d));
      }
    }
    ++report->partitions;
    report->independent.clear();
    for (int i : part.independent()) report->independent.push_back(model.state_names()[i]);
    OdeProblem problem;
    problem.n = part.size();
    for (int i : part.independent()) problem.state_names.push_back(model.state_names()[i]);
    problem.rhs = [&](double tt, const double* y, double* dy) {
      const std::vector<double>& xs = part.Full(tt, y);
      model.CalcDerivatives(tt, xs.data(), dx.data());
      for (int k = 0; k < part.size(); ++k) dy[k] = dx[part.independent()[k]];
    };
    SolverOptions so = solver;
    so.t0 = t;
    // The output grid of the whole run: a restart happens at one of its times.
    so.dt_out = solver.dt_out > 0 ? solver.dt_out : (solver.t_end - solver.t0) / 1000;
    bool first = true;
    long outputs = 0, checked = 0;
    double inverse = 1;  // 1 / condition at the last check (output number `checked`)
    try {
      SimulateFrom(
          model, problem, part.Restrict(x), so,
          [&](double tt, const double* y, double* xs) {
            const std::vector<double>& f = part.Full(tt, y);
            std::copy(f.begin(), f.end(), xs);
          },
          [&](double tt, const double* xs) {
            WatchDrift(model, options, ConstraintMethod::kMinimalCoordinates, watcher, tt, xs, report);
            const bool at_restart = first && round > 0;
            first = false;
            // The condition is checked at every 10th output time (it costs two
            // Jacobians and their singular values), at every one once it is
            // above a hundredth of the limit. Near a fold the inverse condition
            // falls about linearly: the coordinates are chosen again when it
            // is past the limit, or will be within ten more outputs at its last
            // rate (past a fold the dependent positions may follow the wrong
            // branch before any test sees it).
            ++outputs;
            if (!at_restart && tt < solver.t_end && (outputs % 10 == 0 || inverse < 100 / part.limit())) {
              const double now = 1 / part.Condition(tt);
              const double per_output = (inverse - now) / static_cast<double>(outputs - checked);
              const bool last_adjacent = outputs - checked == 1;
              inverse = now;
              checked = outputs;
              if (now < 1 / part.limit() || (last_adjacent && now - 10 * per_output < 1 / part.limit()))
                throw Repartition{tt, std::vector<double>(xs, xs + model.num_states()), 1 / now};
            }
          },
          &all);
      return all;
    } catch (const Repartition& r) {
      // The row at r.t was not recorded (watch threw first): the next round
      // starts there and records it.
      t = r.t;
      x = r.x;
      left_condition = r.condition;
    }
  }
}

}  // namespace paynter::constrained

namespace paynter {

CoordinatePartition ChooseCoordinatePartition(const CompiledModel& model, double t, const std::vector<double>& x) {
  constrained::Partitioned part(model, 1e4);
  part.Choose(t, x);
  CoordinatePartition p;
  for (int i : part.independent()) p.independent.push_back(model.state_names()[i]);
  for (int i : part.dependent_positions()) p.dependent_positions.push_back(model.state_names()[i]);
  for (int i : part.dependent_momenta()) p.dependent_momenta.push_back(model.state_names()[i]);
  return p;
}

}  // namespace paynter
