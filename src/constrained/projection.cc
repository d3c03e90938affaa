// ConstraintProjector: positions and momenta moved back onto the constraints
// (see paynter/constrained.h). Used to assemble a start and, after every step,
// by the lagrange-multipliers method.
//
// Jacobians come from differences of the compiled constraint program: the
// flow constraints are linear in the momenta (c = A(q) p), so one unit step
// per momentum gives A exactly; the position constraints are differenced with
// a small step. The factorizations are kept and reused (a chord iteration)
// while they still contract the error (the position Jacobian, 2 np constraint
// evaluations to form, while it halves it per iteration after a step and
// divides it by ten in an assembly; A, np to form, while it divides it by
// ten), so that a step that drifted by a little costs one or
// two constraint evaluations; an iteration that ends within tolerance keeps
// them whatever its contraction (rounding sets that one). A(q) is formed again
// when the positions moved by more than rounding-sized steps (1e-8 relative):
// a smaller move changes A by as little, and the iteration checks c itself.
//
// Large mechanisms (kSparseRows constraint rows or more) use sparse Jacobians:
// each row depends on the states of the two bodies its joint joins, found once
// by perturbing every state; columns that share no row are perturbed together
// (a greedy colouring, Curtis-Powell-Reid), so a refresh costs a number of
// constraint evaluations bounded by the colouring, not by the number of states.
// The minimum-norm steps Q^T (Q Q^T)^-1 g and W A^T (A W A^T)^-1 c are solved
// by a sparse LDL^T of the Gram matrix, regularized by 1e-10 of its diagonal
// and refined on the Gram matrix itself (iterated Tikhonov): redundant rows
// make it singular only along directions that Q^T and A^T take to zero.
#include <fmt/format.h>

#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <cmath>

#include "internal.h"
#include "paynter/constrained.h"
#include "paynter/error.h"

namespace paynter {

namespace {

// Minimum-norm solutions with a Gram matrix G = B B^T (B = Q, or A W^1/2):
// Cholesky of G when B's rows are clearly independent (every pivot of G's
// Cholesky factor above kCholeskyRatio of the largest, so that the squared
// condition number costs at most 1e-8 of the step), a pair of triangular
// solves per call; otherwise the complete orthogonal decomposition of the
// matrix given, with its rank decision (redundant or nearly dependent rows).
// Either gives the same step to rounding where both apply.
class GramSolver {
 public:
  static constexpr double kCholeskyRatio = 1e-4;
  // gram: B B^T; fallback: the matrix the decomposition factors when Cholesky
  // does not apply (B for positions, G for velocities), its threshold, and
  // whether its solution is multiplied by B^T afterwards (false: it already
  // is the minimum-norm step).
  void Compute(const Eigen::MatrixXd& gram, const Eigen::MatrixXd& fallback, double threshold) {
    llt_.compute(gram);
    use_llt_ = llt_.info() == Eigen::Success;
    if (use_llt_) {
      const auto d = llt_.matrixLLT().diagonal();
      const double lo = d.minCoeff(), hi = d.maxCoeff();
      use_llt_ = lo > kCholeskyRatio * hi && std::isfinite(hi);
    }
    if (!use_llt_) {
      cod_.setThreshold(threshold);
      cod_.compute(fallback);
    }
  }
  bool cholesky() const { return use_llt_; }
  // G^-1 b (Cholesky) or the decomposition's solution of the fallback matrix.
  void Solve(const Eigen::VectorXd& b, Eigen::VectorXd* out) {
    if (use_llt_) {
      *out = b;
      llt_.solveInPlace(*out);
    } else {
      *out = cod_.solve(b);
    }
  }

 private:
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod_;
  bool use_llt_ = false;
};

}  // namespace

struct ConstraintProjector::Cache {
  // Positions: Q (rows with a position constraint x position states), factored:
  // Q Q^T by Cholesky when Q is well conditioned, else Q itself by a complete
  // orthogonal decomposition (see GramSolver).
  Eigen::MatrixXd q;
  GramSolver q_solve;
  bool q_valid = false;
  int q_uses = 0;
  double q_time = 0;  // the time Q was formed at
  // Velocities: A (all rows x momenta), and A W A^T factored (W the inertances).
  Eigen::MatrixXd a;
  Eigen::VectorXd w;
  GramSolver awa_solve;
  bool a_valid = false;
  int a_uses = 0;
  double a_time = 0;
  bool for_assembly = false;  // the factorizations leave the held states out
  Eigen::VectorXd y;          // G^-1 g or G^-1 c of the dense path
  // Sparse path (see the top of the file).
  bool sparse = false;
  std::vector<std::vector<int>> rows_of_pos, rows_of_mom;  // per state in pos_/mom_: rows (into g_/c_)
  std::vector<std::vector<int>> mom_groups;                // ColourColumns(rows_of_mom), fixed
  // The columns of the last position refresh (pos_, or pos_ less the held
  // states in an assembly), their rows and colouring.
  std::vector<int> q_cols;
  std::vector<std::vector<int>> q_rows, q_groups;
  Eigen::SparseMatrix<double> qs, as;     // Q (position rows x pos columns), A (rows x momenta)
  Eigen::SparseMatrix<double> qqt, awat;  // their Gram matrices (A weighted by W)
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> q_ldlt, a_ldlt;
  std::vector<int> q_fixed, a_fixed;  // rows no column moves (see RegularizedGram)
};

namespace {

constexpr int kSparseRows = 40;
constexpr double kGramRegularization = 1e-10;

// Greedy colouring of columns: no two columns of a group share a row.
std::vector<std::vector<int>> ColourColumns(const std::vector<std::vector<int>>& rows_of_col, int num_rows) {
  std::vector<std::vector<int>> groups;
  std::vector<std::vector<char>> used;  // per group: rows taken
  for (int j = 0; j < static_cast<int>(rows_of_col.size()); ++j) {
    size_t g = 0;
    for (; g < groups.size(); ++g) {
      bool free = true;
      for (int r : rows_of_col[j]) free = free && !used[g][r];
      if (free) break;
    }
    if (g == groups.size()) {
      groups.emplace_back();
      used.emplace_back(num_rows, 0);
    }
    groups[g].push_back(j);
    for (int r : rows_of_col[j]) used[g][r] = 1;
  }
  return groups;
}

// The regularized Gram matrix that the sparse path factors: G + 1e-10 diag(G).
// A row of B that is zero (its joint joins only states the step may not move:
// the held bodies of an assembly, or the ground) has a zero row in G; its
// diagonal is set to 1 and the row listed in `fixed`, where RefinedSolve
// leaves the right-hand side out (no step can reduce that row's error; the
// iteration's own test then sees it stay).
Eigen::SparseMatrix<double> RegularizedGram(const Eigen::SparseMatrix<double>& gram, std::vector<int>* fixed) {
  Eigen::SparseMatrix<double> reg = gram;
  fixed->clear();
  for (int r = 0; r < reg.rows(); ++r) {
    double& d = reg.coeffRef(r, r);
    if (d == 0) {
      d = 1;
      fixed->push_back(r);
    } else {
      d *= 1 + kGramRegularization;
    }
  }
  return reg;
}

// Solves G y = b for the minimum-norm-direction y by the regularized factor of
// G (iterated Tikhonov): stops when the residual no longer halves. The rows in
// `fixed` (zero in G) are left out: y is zero there.
Eigen::VectorXd RefinedSolve(const Eigen::SparseMatrix<double>& gram,
                             const Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>>& ldlt, Eigen::VectorXd b,
                             const std::vector<int>& fixed) {
  for (int r : fixed) b[r] = 0;
  Eigen::VectorXd y = Eigen::VectorXd::Zero(b.size());
  Eigen::VectorXd r = b;
  double rn = r.lpNorm<Eigen::Infinity>();
  for (int it = 0; it < 8 && rn > 0; ++it) {
    y += ldlt.solve(r);
    r = b - gram * y;
    const double next = r.lpNorm<Eigen::Infinity>();
    if (!(next < 0.5 * rn)) break;
    rn = next;
  }
  return y;
}

}  // namespace

ConstraintProjector::~ConstraintProjector() = default;

ConstraintProjector::ConstraintProjector(ModelWorkspace& workspace)
    : w_(workspace), m_(workspace.model()), cache_(std::make_unique<Cache>()) {
  const CompiledModel& model = m_;
  const int n = model.num_states();
  const int nc = model.num_constraints();
  g_.assign(nc, 0);
  c_.assign(nc, 0);
  for (int k = 0; k < nc; ++k)
    if (model.constraint_rows()[k].position_slot >= 0) rows_with_position_.push_back(k);
  for (int i = 0; i < n; ++i)
    if (model.state_inertia()[i] > 0) mom_.push_back(i);
  // The bodies' orientation quaternions (<B>_q0 .. <B>_q3, consecutive
  // states): the orientation does not depend on their norm, which a
  // minimum-norm position step changes; they are normalized after it.
  quaternions_ = constrained::QuaternionGroups(model);
  cache_->w.resize(mom_.size());
  for (size_t j = 0; j < mom_.size(); ++j) cache_->w[j] = model.state_inertia()[mom_[j]];
  // The position states are the displacements the position constraints
  // depend on, found by perturbing each at the initial state.
  if (rows_with_position_.empty()) return;
  std::vector<double> x = model.initial_state();
  std::vector<double> g0(nc), g1(nc);
  w_.CalcConstraints(0, x.data(), nullptr, nullptr, g0.data());
  for (int i = 0; i < n; ++i) {
    if (!constrained::IsPositionOrigin(model.state_origins()[i])) continue;
    const double save = x[i];
    x[i] += 1e-3 * (1 + std::fabs(save));
    w_.CalcConstraints(0, x.data(), nullptr, nullptr, g1.data());
    x[i] = save;
    for (int k : rows_with_position_)
      if (g1[k] != g0[k]) {
        pos_.push_back(i);
        break;
      }
  }
  if (nc < kSparseRows) return;
  // Sparse path: which rows each state moves, by perturbing it alone, at the
  // start and at a second configuration with every position state moved
  // (pseudo-randomly), so that a coefficient that happens to vanish at one of
  // them (links aligned at the start, say) does not hide a dependence.
  Cache& cache = *cache_;
  cache.sparse = true;
  std::vector<int> row_index(nc, -1);
  for (size_t r = 0; r < rows_with_position_.size(); ++r) row_index[rows_with_position_[r]] = static_cast<int>(r);
  cache.rows_of_pos.assign(pos_.size(), {});
  cache.rows_of_mom.assign(mom_.size(), {});
  std::vector<double> c0(nc), c1(nc);
  std::vector<double> xb = x;
  uint32_t seed = 12345;
  for (int config = 0; config < 2; ++config) {
    x = xb;
    if (config == 1)
      for (int i : pos_) {
        seed = seed * 1664525u + 1013904223u;
        x[i] += (0.05 + 0.1 * (seed >> 8) / double(1u << 24)) * (1 + std::fabs(x[i]));
      }
    w_.CalcConstraints(0, x.data(), nullptr, c0.data(), g0.data());
    for (size_t j = 0; j < pos_.size(); ++j) {
      const int i = pos_[j];
      const double save = x[i];
      for (double h : {1e-3, 0.37}) {
        x[i] = save + h * (1 + std::fabs(save));
        w_.CalcConstraints(0, x.data(), nullptr, nullptr, g1.data());
        for (int k : rows_with_position_)
          if (g1[k] != g0[k]) cache.rows_of_pos[j].push_back(row_index[k]);
      }
      x[i] = save;
    }
    for (size_t j = 0; j < mom_.size(); ++j) {
      const int i = mom_[j];
      const double save = x[i];
      x[i] = save + 1 + std::fabs(save);
      w_.CalcConstraints(0, x.data(), nullptr, c1.data(), nullptr);
      x[i] = save;
      for (int k = 0; k < nc; ++k)
        if (c1[k] != c0[k]) cache.rows_of_mom[j].push_back(k);
    }
  }
  for (auto* lists : {&cache.rows_of_pos, &cache.rows_of_mom})
    for (std::vector<int>& rows : *lists) {
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    }
  cache.mom_groups = ColourColumns(cache.rows_of_mom, nc);
}

void ConstraintProjector::Evaluate(double t, const double* x) {
  w_.CalcConstraints(t, x, nullptr, c_.data(), g_.data());
}

void ConstraintProjector::Errors(double t, const double* x, double* position, double* velocity, int* worst,
                                 int* worst_velocity) {
  Evaluate(t, x);
  double gp = 0, gv = 0, w = -1, wv = -1;
  int wk = -1, wvk = -1;
  for (int k : rows_with_position_) {
    gp = std::max(gp, std::fabs(g_[k]));
    if (std::fabs(g_[k]) > w) w = std::fabs(g_[k]), wk = k;
  }
  for (size_t k = 0; k < c_.size(); ++k) {
    gv = std::max(gv, std::fabs(c_[k]));
    if (std::fabs(c_[k]) > wv) wv = std::fabs(c_[k]), wvk = static_cast<int>(k);
  }
  // NaN compares false above: it is reported as such.
  for (int k : rows_with_position_)
    if (std::isnan(g_[k])) gp = g_[k], wk = k;
  for (size_t k = 0; k < c_.size(); ++k)
    if (std::isnan(c_[k])) gv = c_[k], wvk = static_cast<int>(k);
  if (position) *position = gp;
  if (velocity) *velocity = gv;
  if (worst) *worst = wk;
  if (worst_velocity) *worst_velocity = wvk;
}

bool ConstraintProjector::Project(double t, double* x, AssemblyReport* report) {
  Cache& cache = *cache_;
  // In an assembly the held states stay: their columns are left out of the
  // position step and their inertances are zero in the velocity step.
  std::vector<int> pos = pos_;
  Eigen::VectorXd w = cache.w;
  const bool hold = assembly && !m_.held_states().empty();
  if (hold) {
    const auto& held = m_.held_states();
    auto is_held = [&](int i) { return std::find(held.begin(), held.end(), i) != held.end(); };
    pos.erase(std::remove_if(pos.begin(), pos.end(), is_held), pos.end());
    for (size_t j = 0; j < mom_.size(); ++j)
      if (is_held(mom_[j])) w[j] = 0;
  }
  // Factorizations made with other columns or weights are not reused.
  if (hold != cache.for_assembly) cache.q_valid = cache.a_valid = false;
  cache.for_assembly = hold;
  if (jacobians_from && !assembly && !cache.sparse && &jacobians_from->m_ == &m_) {
    const Cache& other = *jacobians_from->cache_;
    if (!other.for_assembly && other.q_valid &&
        (!cache.q_valid || std::fabs(t - other.q_time) < std::fabs(t - cache.q_time))) {
      cache.q = other.q;
      cache.q_solve = other.q_solve;
      cache.q_valid = true;
      cache.q_uses = other.q_uses;
      cache.q_time = other.q_time;
    }
    if (!other.for_assembly && other.a_valid &&
        (!cache.a_valid || std::fabs(t - other.a_time) < std::fabs(t - cache.a_time))) {
      cache.a = other.a;
      cache.awa_solve = other.awa_solve;
      cache.a_valid = true;
      cache.a_uses = other.a_uses;
      cache.a_time = other.a_time;
    }
  }
  const int np = static_cast<int>(pos.size()), nm = static_cast<int>(mom_.size());
  const int nr = static_cast<int>(rows_with_position_.size()), nc = m_.num_constraints();
  bool moved = false;
  bool far = false;  // a position step beyond what leaves A as it was
  std::vector<double> xs(x, x + m_.num_states());

  // ---- positions: Gauss-Newton with minimum-norm steps -----------------------
  Evaluate(t, x);
  auto gnorm = [&] {
    double m = 0;
    for (int k : rows_with_position_) m = std::max(m, std::fabs(g_[k]));
    return m;
  };
  double err = gnorm();
  // Tolerances below what rounding allows at the states' size are raised to it.
  double xmax = 0, pmax = 0;
  for (int i : pos_) xmax = std::max(xmax, std::fabs(x[i]));
  for (int i : mom_) pmax = std::max(pmax, std::fabs(x[i]));
  const double ptol = std::max(position_tolerance, 1e-14 * (1 + xmax));
  const double vtol = std::max(velocity_tolerance, 1e-14 * (1 + pmax));
  if (report) {
    report->position_error_before = err;
    int worst = -1;
    double w = -1;
    for (int k : rows_with_position_)
      if (std::fabs(g_[k]) > w) w = std::fabs(g_[k]), worst = k;
    if (worst >= 0) report->worst_joint = m_.constraint_rows()[worst].joint;
  }
  int it = 0;
  while (np > 0 && err > ptol) {
    if (++it > max_iterations) {
      int worst = 0;
      for (int k : rows_with_position_)
        if (std::fabs(g_[k]) > std::fabs(g_[worst])) worst = k;
      const ConstraintRow& row = m_.constraint_rows()[worst];
      ThrowAt({}, row.joint,
              fmt::format("the joints cannot be assembled at t = {}: joint '{}' ({}) stays {:.3g} off after {} "
                          "iterations",
                          t, row.joint, row.direction.empty() ? row.source : row.direction, std::fabs(g_[worst]),
                          max_iterations),
              "positions that satisfy every joint", fmt::format("a position error of {:.3g}", err),
              "check the joints' points and axes and the bodies' initial positions: the mechanism may not close, "
              "or it may be at a singular configuration");
    }
    if (cache.sparse && (!cache.q_valid || cache.q_uses > 20)) {
      // Coloured central differences over the columns in `pos` (pos_ is sorted).
      if (cache.q_cols != pos) {
        cache.q_cols = pos;
        cache.q_rows.clear();
        for (int i : pos)
          cache.q_rows.push_back(cache.rows_of_pos[std::lower_bound(pos_.begin(), pos_.end(), i) - pos_.begin()]);
        cache.q_groups = ColourColumns(cache.q_rows, nr);
      }
      const std::vector<std::vector<int>>& rows_of_col = cache.q_rows;
      std::vector<Eigen::Triplet<double>> entries;
      std::vector<double> g0(g_), gp(g_.size());
      for (const std::vector<int>& group : cache.q_groups) {
        std::vector<double> h(group.size()), saved(group.size());
        for (size_t k = 0; k < group.size(); ++k) {
          const int i = pos[group[k]];
          saved[k] = x[i];
          h[k] = 1e-5 * (1 + std::fabs(x[i]));
          x[i] = saved[k] + h[k];
        }
        Evaluate(t, x);
        gp = g_;
        for (size_t k = 0; k < group.size(); ++k) x[pos[group[k]]] = saved[k] - h[k];
        Evaluate(t, x);
        for (size_t k = 0; k < group.size(); ++k) {
          x[pos[group[k]]] = saved[k];
          for (int r : rows_of_col[group[k]]) {
            const int row = rows_with_position_[r];
            entries.emplace_back(r, group[k], (gp[row] - g_[row]) / (2 * h[k]));
          }
        }
      }
      g_ = g0;
      cache.qs.resize(nr, np);
      cache.qs.setFromTriplets(entries.begin(), entries.end());
      cache.qqt = cache.qs * cache.qs.transpose();
      cache.q_ldlt.compute(RegularizedGram(cache.qqt, &cache.q_fixed));
      cache.q_valid = cache.q_ldlt.info() == Eigen::Success;
      if (!cache.q_valid) break;  // leaves the positions as they are; the velocity step still runs
      cache.q_uses = 0;
    } else if (!cache.sparse && (!cache.q_valid || cache.q_uses > 20)) {
      Eigen::MatrixXd q(nr, np);
      std::vector<double> g0(g_);
      // Central differences (relative error about 1e-10): the rank decision
      // below must not mistake their noise for a direction of the manifold.
      std::vector<double> gm(g_.size());
      for (int j = 0; j < np; ++j) {
        const int i = pos[j];
        const double save = x[i], h = 1e-5 * (1 + std::fabs(save));
        x[i] = save + h;
        Evaluate(t, x);
        const std::vector<double> gp = g_;
        x[i] = save - h;
        Evaluate(t, x);
        for (int r = 0; r < nr; ++r) q(r, j) = (gp[rows_with_position_[r]] - g_[rows_with_position_[r]]) / (2 * h);
        x[i] = save;
      }
      g_ = g0;
      cache.q_solve.Compute(q * q.transpose(), q, 1e-8);
      cache.q = std::move(q);
      cache.q_time = t;
      cache.q_valid = true;
      cache.q_uses = 0;
    }
    ++cache.q_uses;
    Eigen::VectorXd g(nr);
    for (int r = 0; r < nr; ++r) g[r] = g_[rows_with_position_[r]];
    Eigen::VectorXd dq;
    if (cache.sparse) {
      dq = cache.qs.transpose() * RefinedSolve(cache.qqt, cache.q_ldlt, g, cache.q_fixed);
    } else if (cache.q_solve.cholesky()) {
      cache.q_solve.Solve(g, &cache.y);
      dq.noalias() = cache.q.transpose() * cache.y;
    } else {
      cache.q_solve.Solve(g, &dq);  // Q's decomposition: already Q^+ g
    }
    for (int j = 0; j < np; ++j) x[pos[j]] -= dq[j];
    moved = true;
    far = far || dq.lpNorm<Eigen::Infinity>() > 1e-8 * (1 + xmax);
    Evaluate(t, x);
    const double next = gnorm();
    // Refresh the Jacobian when it no longer contracts the error enough, unless
    // the error is already within tolerance: tenfold in an assembly (far from
    // the joints, where Newton's speed matters), twofold after a step.
    if (!(next < (assembly ? 0.1 : 0.5) * err) && !(next <= ptol)) cache.q_valid = false;
    err = next;
  }
  if (report) report->iterations = it;
  if (it > 0)
    for (int q : quaternions_) {
      const double norm = std::sqrt(x[q] * x[q] + x[q + 1] * x[q + 1] + x[q + 2] * x[q + 2] + x[q + 3] * x[q + 3]);
      if (norm > 0)
        for (int k = 0; k < 4; ++k) x[q + k] /= norm;
    }
  if (it > 0) {
    // The joints' coordinates follow the corrected poses (keeping their turns).
    w_.MakeCoordinatesConsistent(t, x);
    Evaluate(t, x);
  }

  // ---- momenta: the mass-weighted projection ---------------------------------
  double verr = 0;
  for (double v : c_) verr = std::max(verr, std::fabs(v));
  if (report) report->velocity_error_before = verr;
  for (int vit = 0; nm > 0 && verr > vtol && vit < 8; ++vit) {
    if (cache.sparse && (!cache.a_valid || cache.a_uses > 20 || far)) {
      // A is exact from unit steps (c is linear in the momenta), coloured.
      std::vector<Eigen::Triplet<double>> entries;
      std::vector<double> c0(c_);
      for (const std::vector<int>& group : cache.mom_groups) {
        std::vector<double> saved;
        for (int j : group) {
          saved.push_back(x[mom_[j]]);
          x[mom_[j]] += 1;
        }
        Evaluate(t, x);
        for (size_t k = 0; k < group.size(); ++k) {
          const int j = group[k];
          x[mom_[j]] = saved[k];
          for (int r : cache.rows_of_mom[j]) entries.emplace_back(r, j, c_[r] - c0[r]);
        }
      }
      c_ = c0;
      cache.as.resize(nc, nm);
      cache.as.setFromTriplets(entries.begin(), entries.end());
      cache.awat = cache.as * w.asDiagonal() * cache.as.transpose();
      cache.a_ldlt.compute(RegularizedGram(cache.awat, &cache.a_fixed));
      cache.a_valid = cache.a_ldlt.info() == Eigen::Success;
      if (!cache.a_valid) break;
      cache.a_uses = 0;
    } else if (!cache.sparse && (!cache.a_valid || cache.a_uses > 20 || far)) {
      Eigen::MatrixXd a(nc, nm);
      std::vector<double> c0(c_);
      for (int j = 0; j < nm; ++j) {
        const int i = mom_[j];
        const double save = x[i];
        x[i] = save + 1;
        Evaluate(t, x);
        for (int r = 0; r < nc; ++r) a(r, j) = c_[r] - c0[r];
        x[i] = save;
      }
      c_ = c0;
      const Eigen::MatrixXd awa = a * w.asDiagonal() * a.transpose();
      cache.awa_solve.Compute(awa, awa, 1e-10);
      cache.a = std::move(a);
      cache.a_time = t;
      cache.a_valid = true;
      cache.a_uses = 0;
    }
    ++cache.a_uses;
    const Eigen::VectorXd c = Eigen::Map<const Eigen::VectorXd>(c_.data(), nc);
    Eigen::VectorXd dp;
    if (cache.sparse) {
      dp = w.asDiagonal() * (cache.as.transpose() * RefinedSolve(cache.awat, cache.a_ldlt, c, cache.a_fixed));
    } else {
      cache.awa_solve.Solve(c, &cache.y);
      dp.noalias() = cache.a.transpose() * cache.y;
      dp.array() *= w.array();
    }
    for (int j = 0; j < nm; ++j) x[mom_[j]] -= dp[j];
    moved = true;
    Evaluate(t, x);
    double next = 0;
    for (double v : c_) next = std::max(next, std::fabs(v));
    if (!(next < 0.1 * verr) && !(next <= vtol)) cache.a_valid = false;
    verr = next;
  }
  if (report) {
    for (int i : pos_) report->position_correction = std::max(report->position_correction, std::fabs(x[i] - xs[i]));
    for (int i : mom_) report->velocity_correction = std::max(report->velocity_correction, std::fabs(x[i] - xs[i]));
  }
  return moved;
}

}  // namespace paynter

namespace paynter::constrained {

std::vector<int> QuaternionGroups(const CompiledModel& model) {
  std::vector<int> groups;
  const int n = model.num_states();
  for (int i = 0; i + 3 < n; ++i) {
    const std::string& s = model.state_names()[i];
    if (s.size() > 3 && s.compare(s.size() - 3, 3, "_q0") == 0) {
      const std::string base = s.substr(0, s.size() - 1);
      bool group = true;
      for (int k = 1; k < 4; ++k) group = group && model.state_names()[i + k] == base + std::to_string(k);
      if (group) groups.push_back(i);
    }
  }
  return groups;
}

}  // namespace paynter::constrained
