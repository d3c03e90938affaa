// codegen/newton.cc — the Newton block solver and the NaN/Inf checks (see newton.h).
#include "newton.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

#include "paynter/error.h"

namespace paynter::codegen {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kMaxHalvings = 12;           // line search: lambda down to 2^-12
constexpr int kSmallBlock = 16;            // up to this size, our own LU; above, Eigen's
constexpr int kDirectBlock = 4;            // linear blocks up to this size: SolveLinearDense
constexpr double kRegularization = 1e-10;  // sparse multiplier blocks (see newton.h)
constexpr double kRedundantPivot = 1e-8;   // multiplier blocks: a smaller relative pivot means redundancy

// Max-norm that is +Inf as soon as any entry is NaN or Inf.
[[gnu::always_inline]] inline double InfNorm(const double* x, int n) {
  double m = 0;
  for (int i = 0; i < n; ++i) {
    const double a = std::fabs(x[i]);
    if (!(a <= std::numeric_limits<double>::max())) return std::numeric_limits<double>::infinity();
    if (a > m) m = a;
  }
  return m;
}

// The largest |entry| of the column-major n x n matrix J and its infinity norm
// (the largest row sum of |entries|; +Inf when an entry is not finite), in one
// pass over J (rows taken in tiles, so that the row sums stay in registers).
[[gnu::always_inline]] inline double MatrixNorms(const double* J, int n, double* maxabs) {
  constexpr int kTile = 16;
  double m = 0, norm = 0;
  bool finite = true;
  for (int i0 = 0; i0 < n; i0 += kTile) {
    const int rows = std::min(kTile, n - i0);
    double sum[kTile] = {};
    for (int j = 0; j < n; ++j) {
      const double* col = J + static_cast<size_t>(j) * n + i0;
      for (int i = 0; i < rows; ++i) {
        const double v = std::fabs(col[i]);
        finite &= v <= std::numeric_limits<double>::max();
        m = std::max(m, v);
        sum[i] += v;
      }
    }
    for (int i = 0; i < rows; ++i) norm = std::max(norm, sum[i]);
  }
  *maxabs = m;
  return finite ? norm : std::numeric_limits<double>::infinity();
}

// x = J^-1 r for a symmetric n x n J (column-major) by LDL^T without pivoting,
// when every pivot d_k has the sign of the first and a size above `tiny`: J is
// then definite, and the factorization as stable as Cholesky's, at half the
// work of an LU. False otherwise (x and the work array a, n*n, then hold
// garbage). The blocks of constraint forces are of this kind (-A M^-1 A^T).
[[gnu::always_inline]] inline bool SolveDefinite(const double* J, int n, double tiny, const double* r, double* a, double* x) {
  for (int j = 0; j < n; ++j)
    for (int i = j + 1; i < n; ++i)
      if (J[i + j * n] != J[j + i * n]) return false;
  std::copy(J, J + n * n, a);
  for (int k = 0; k < n; ++k) {  // right-looking, on the lower triangle
    double* ck = a + k * n;
    const double d = ck[k];
    if (!(std::fabs(d) > tiny) || (d > 0) != (a[0] > 0)) return false;
    for (int j = k + 1; j < n; ++j) {
      double* cj = a + j * n;
      const double f = ck[j] / d;
      for (int i = j; i < n; ++i) cj[i] -= ck[i] * f;
    }
    for (int i = k + 1; i < n; ++i) ck[i] /= d;
  }
  std::copy(r, r + n, x);
  for (int k = 0; k < n; ++k) {  // L y = r
    const double* ck = a + k * n;
    for (int i = k + 1; i < n; ++i) x[i] -= ck[i] * x[k];
  }
  for (int k = 0; k < n; ++k) x[k] /= a[k + k * n];
  for (int k = n - 1; k >= 0; --k) {  // L^T x = D^-1 y
    const double* ck = a + k * n;
    double s = x[k];
    for (int i = k + 1; i < n; ++i) s -= ck[i] * x[i];
    x[k] = s;
  }
  return true;
}

// Small blocks (the common case): plain LU with partial pivoting, column-major,
// several times faster than Eigen's general dynamic-size path at these sizes.
[[gnu::always_inline]] inline bool SmallLUSolve(double* a, double* x, int n, double tiny) {
  for (int k = 0; k < n; ++k) {
    int p = k;
    double best = std::fabs(a[k + k * n]);
    for (int i = k + 1; i < n; ++i)
      if (std::fabs(a[i + k * n]) > best) {
        best = std::fabs(a[i + k * n]);
        p = i;
      }
    if (!(best > tiny)) return false;
    if (p != k) {
      for (int j = 0; j < n; ++j) std::swap(a[k + j * n], a[p + j * n]);
      std::swap(x[k], x[p]);
    }
    const double pivot = a[k + k * n];
    for (int i = k + 1; i < n; ++i) a[i + k * n] /= pivot;
    for (int j = k + 1; j < n; ++j) {
      const double f = a[k + j * n];
      if (f != 0)
        for (int i = k + 1; i < n; ++i) a[i + j * n] -= a[i + k * n] * f;
    }
    for (int i = k + 1; i < n; ++i) x[i] -= a[i + k * n] * x[k];  // forward substitution
  }
  for (int k = n - 1; k >= 0; --k) {  // back substitution
    x[k] /= a[k + k * n];
    for (int i = 0; i < k; ++i) x[i] -= a[i + k * n] * x[k];
  }
  return std::isfinite(InfNorm(x, n));
}

// x = J^-1 r for a small dense J (column-major, n x n): LDL^T when J is
// symmetric and definite, else LU with partial pivoting; a is n*n of work.
// False when J is singular to `tiny` or x is not finite.
[[gnu::always_inline]] inline bool SmallDenseSolve(const double* J, int n, double tiny, const double* r, double* a, double* x) {
  if (SolveDefinite(J, n, tiny, r, a, x)) return std::isfinite(InfNorm(x, n));
  std::copy(J, J + n * n, a);
  std::copy(r, r + n, x);
  return SmallLUSolve(a, x, n, tiny);
}

std::string Num(double v) { return fmt::format("{:.6g}", v); }

std::string ValueName(double v) {
  if (std::isnan(v)) return "NaN";
  return v > 0 ? "+Inf" : "-Inf";
}

// Slots an expression reads, in order of first appearance (diagnostics only).
std::vector<int> InputSlots(const Plan& plan, const GiNaC::ex& e, size_t limit = 12) {
  std::unordered_map<GiNaC::ex, int, std::hash<GiNaC::ex>, GiNaC::ex_is_equal> slot;
  for (size_t i = 0; i < plan.symbols.size(); ++i) slot.emplace(plan.symbols[i], static_cast<int>(i));
  std::vector<int> out;
  std::set<int> seen;
  for (auto it = e.preorder_begin(); it != e.preorder_end() && out.size() < limit; ++it) {
    if (!GiNaC::is_a<GiNaC::symbol>(*it)) continue;
    auto f = slot.find(*it);
    if (f != slot.end() && seen.insert(f->second).second) out.push_back(f->second);
  }
  return out;
}

std::string Truncated(const GiNaC::ex& e) {
  std::ostringstream os;
  os << e;
  std::string s = os.str();
  return s.size() > 160 ? s.substr(0, 157) + "..." : s;
}

}  // namespace

// Positions of unknowns (columns) left out by a maximum matching of the Jacobian's
// nonzero pattern: if any, the Jacobian is singular whatever the values.
std::vector<int> StructurallyUnmatched(const std::vector<std::vector<int>>& rows_of_col, int n) {
  std::vector<int> col_of_row(n, -1);
  std::vector<int> seen(n, -1);
  auto augment = [&](auto&& self, int col, int stamp) -> bool {
    for (int row : rows_of_col[col]) {
      if (seen[row] == stamp) continue;
      seen[row] = stamp;
      if (col_of_row[row] < 0 || self(self, col_of_row[row], stamp)) {
        col_of_row[row] = col;
        return true;
      }
    }
    return false;
  };
  std::vector<int> unmatched;
  for (int j = 0; j < n; ++j)
    if (!augment(augment, j, j)) unmatched.push_back(j);
  return unmatched;
}

// ---------------------------------------------------------------------------
// RuntimeChecks

RuntimeChecks::RuntimeChecks(const Plan& plan) : plan_(&plan) {
  written_.reserve(plan.written.size());
  for (const WrittenSlot& w : plan.written) written_.push_back(w.slot);
  sorted_ = written_;
  std::sort(sorted_.begin(), sorted_.end());
  sorted_.erase(std::unique(sorted_.begin(), sorted_.end()), sorted_.end());
}

void RuntimeChecks::CopyWrittenAndCheck(const double* from, double* to) const {
  // The sum of the written slots is finite when they all are (x - x is 0 only for
  // finite x); an overflow of the sum is a harmless false alarm (no culprit is
  // found). Four partial sums keep the FP-add latency chain short; scalar accesses
  // because the values were just stored one by one, and a vector load spanning two
  // scalar stores defeats store-to-load forwarding. (Not for -ffast-math builds.)
  const int* idx = sorted_.data();
  const int n = static_cast<int>(sorted_.size());
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  int k = 0;
  for (; k + 4 <= n; k += 4) {
    a0 += (to[idx[k]] = from[idx[k]]);
    a1 += (to[idx[k + 1]] = from[idx[k + 1]]);
    a2 += (to[idx[k + 2]] = from[idx[k + 2]]);
    a3 += (to[idx[k + 3]] = from[idx[k + 3]]);
  }
  for (; k < n; ++k) a0 += (to[idx[k]] = from[idx[k]]);
  const double sum = (a0 + a1) + (a2 + a3);
  if (sum - sum != 0) CheckRange(to, 0, static_cast<int>(written_.size()));
}

// Throws for the first non-finite entry of written_[begin, end), in step order.
void RuntimeChecks::CheckRange(const double* s, int begin, int end) const {
  for (int k = begin; k < end; ++k)
    if (!std::isfinite(s[written_[k]])) ThrowNonFinite(s, k);
}

void RuntimeChecks::ThrowNonFinite(const double* s, int entry) const {
  std::lock_guard<std::recursive_mutex> symbolic(SymbolicMutex());  // the message prints expressions
  const WrittenSlot& w = plan_->written[entry];
  const std::string& name = SlotName(w.slot);
  const double v = s[w.slot];
  const std::string got = ValueName(v);
  if (w.block >= 0)
    ThrowAt({}, "", fmt::format("unknown '{}' of block '{}' became {}", name, plan_->blocks[w.block].label, got),
            "a finite number", got, "the block's residuals produced a non-finite solution; check its parameters");
  std::string inputs, caller_set;
  for (int in : InputSlots(*plan_, w.expr)) {
    inputs += fmt::format("{}{} = {}", inputs.empty() ? "" : ", ", SlotName(in), Num(s[in]));
    if (!std::isfinite(s[in])) caller_set = SlotName(in);
  }
  std::string hint = fmt::format("{} = {}", name, Truncated(w.expr));
  if (!inputs.empty()) hint += " with " + inputs;
  hint += std::isnan(v) ? "; NaN comes from 0/0, Inf-Inf, 0*Inf, or the log, sqrt or "
                          "non-integer power of a negative number"
                        : "; Inf comes from a division by zero, the log of zero, or an "
                          "overflow (e.g. exp of a large argument)";
  if (!caller_set.empty())
    hint += fmt::format(
        "; '{}' is not computed by the program: it is set by the caller "
        "(time, a parameter or a state)",
        caller_set);
  ThrowAt({}, "", fmt::format("slot '{}' became {}", name, got), "a finite number", got, hint);
}

void RuntimeChecks::CheckBlockInputs(const double* s, int block) const {
  std::lock_guard<std::recursive_mutex> symbolic(SymbolicMutex());  // reads the residuals' expressions
  const BlockPlan& bp = plan_->blocks[block];
  CheckRange(s, 0, bp.written_before);
  std::set<int> unknowns(bp.unknowns.begin(), bp.unknowns.end());
  for (const GiNaC::ex& r : bp.residual_exprs)
    for (int in : InputSlots(*plan_, r, 64)) {
      if (unknowns.count(in) || std::isfinite(s[in])) continue;
      ThrowAt({}, "", fmt::format("block '{}' reads '{}', which is {}", bp.label, SlotName(in), ValueName(s[in])),
              "finite inputs", ValueName(s[in]),
              fmt::format("'{}' is set by the caller (time, a parameter or a state)", SlotName(in)));
    }
}

// By the singular values, with Tikhonov's filter factors iterated twice: the
// component along singular vector i is (1 - (eps^2 / (s_i^2 + eps^2))^2) (u_i . r) / s_i,
// eps = threshold * s_max.
// Well above eps (s_i >> eps) that is the exact inverse; far below it (the
// directions redundant constraints leave undetermined) the component vanishes,
// as in the minimum-norm solution; in between it changes continuously. A hard
// rank decision (a pivoted QR's, or a truncated SVD's) would not: near a
// singular configuration of a mechanism (the N four-bar's crossings) a
// singular value passes the threshold back and forth between evaluations, the
// forces jump between two ranks' solutions, and the integrator's steps
// collapse. (Eigen's complete orthogonal decomposition was used here; given
// its threshold after decomposing, it solved with transformations never
// computed.)
Eigen::VectorXd MinimumNormSolve(const Eigen::MatrixXd& J, double threshold, const Eigen::VectorXd& r, int* rank) {
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(J, Eigen::ComputeThinU | Eigen::ComputeThinV);
  const Eigen::VectorXd& sv = svd.singularValues();
  const double eps = sv.size() ? threshold * sv(0) : 0.0;
  // The filtered inverse applied to `rhs`, in the singular vectors' basis.
  int k = 0;
  auto filtered = [&](const Eigen::VectorXd& rhs) {
    const Eigen::VectorXd c = svd.matrixU().transpose() * rhs;
    Eigen::VectorXd y = Eigen::VectorXd::Zero(sv.size());
    k = 0;
    for (int i = 0; i < sv.size(); ++i) {
      if (sv(i) > eps) ++k;
      // Far below eps a direction is redundant, not nearly singular: nothing
      // of it (the filter would keep s / eps^2 of a drift there).
      const double d = sv(i) * sv(i) + eps * eps;
      if (!(sv(i) > 1e-3 * eps) || !(d > 0)) continue;
      // Iterated twice (as the sparse path refines its regularized solve): the
      // filter 1 - (eps^2 / (s^2 + eps^2))^2 is sharper, still continuous.
      const double f = sv(i) / d;
      for (int it = 0; it < 2; ++it) y(i) += f * (c(i) - sv(i) * y(i));
    }
    return y;
  };
  Eigen::VectorXd x = svd.matrixV() * filtered(r);
  // One refinement on J itself: the solve's rounding in the small singular
  // values' directions left residuals of 1e-9 in a mechanism's accelerations.
  const Eigen::VectorXd res = r - J * x;
  x += svd.matrixV() * filtered(res);
  if (rank) *rank = k;
  return x;
}

// ---------------------------------------------------------------------------
// NewtonSolver

void NewtonSolver::TakeStateFrom(NewtonSolver& from) {
  const Plan* plan = plan_;
  const BlockPlan* b = b_;
  const RuntimeChecks* checks = checks_;
  *this = std::move(from);
  plan_ = plan;
  b_ = b;
  checks_ = checks;
}

NewtonSolver::NewtonSolver(const Plan& plan, int block, const CodegenOptions& options, const RuntimeChecks* checks)
    : plan_(&plan),
      block_(block),
      b_(&plan.blocks[block]),
      checks_(checks),
      tol_(options.newton_tol > 0 ? options.newton_tol : 1e-12),
      max_iter_(options.newton_max_iter > 0 ? options.newton_max_iter : 50),
      n_(static_cast<int>(plan.blocks[block].unknowns.size())),
      u_(n_),
      u_old_(n_),
      du_(n_),
      r_(n_),
      J_(n_, n_),
      lu_(n_ > kSmallBlock ? n_ : 0),
      small_lu_(n_ <= kSmallBlock ? n_ * n_ : 0) {
  multiplier_.assign(n_, 0);
  for (int j = 0; j < n_; ++j)
    if (plan.slot_names[b_->unknowns[j]].rfind("lambda_", 0) == 0) multiplier_[j] = has_multipliers_ = true;
  const int nnz = static_cast<int>(b_->jacobian_nz.size());
  jv_.assign(nnz, 0.0);
  nz_row_.resize(nnz);
  for (int k = 0; k < nnz; ++k) nz_row_[k] = b_->jacobian_nz[k] % n_;
  using BS = CodegenOptions::BlockSolve;
  const bool sparse =
      options.block_solve == BS::kSparse || (options.block_solve == BS::kAuto && n_ >= CodegenOptions::kSparseMinSize &&
                                             nnz <= CodegenOptions::kSparseMaxDensity * double(n_) * n_);
  if (!sparse || n_ < 2) return;
  // The compressed-column pattern: the structural non-zeros (already column by
  // column, rows increasing) and the multipliers' diagonal entries.
  std::vector<int> ap(n_ + 1, 0), ai;
  sp_of_nz_.assign(nnz, -1);
  sp_diag_.assign(n_, -1);
  int k = 0;
  for (int j = 0; j < n_; ++j) {
    bool diag_done = !multiplier_[j];
    for (; k < nnz && b_->jacobian_nz[k] / n_ == j; ++k) {
      const int i = b_->jacobian_nz[k] % n_;
      if (!diag_done && i >= j) {
        if (i > j) ai.push_back(j);
        sp_diag_[j] = static_cast<int>(ai.size()) - (i > j ? 1 : 0);
        diag_done = true;
      }
      sp_of_nz_[k] = static_cast<int>(ai.size());
      ai.push_back(i);
    }
    if (!diag_done) {
      sp_diag_[j] = static_cast<int>(ai.size());
      ai.push_back(j);
    }
    ap[j + 1] = static_cast<int>(ai.size());
  }
  sparse_ = std::make_unique<SparseLU>(n_, std::move(ap), std::move(ai));
  ax_.assign(sparse_->nnz(), 0.0);
  jx_.assign(sparse_->nnz(), 0.0);
  work_.resize(n_);
  work2_.resize(n_);
  affine_.resize(n_);
}

void NewtonSolver::Scatter() {
  J_.setZero();
  double* J = J_.data();
  for (size_t k = 0; k < jv_.size(); ++k) J[b_->jacobian_nz[k]] = jv_[k];
}

void NewtonSolver::SparseNorms() {
  work_.setZero();
  for (size_t k = 0; k < jv_.size(); ++k) work_[nz_row_[k]] += std::fabs(jv_[k]);
  jnorm_ = work_.maxCoeff();
}

bool NewtonSolver::FactorSparse() {
  if (!std::isfinite(InfNorm(jv_.data(), static_cast<int>(jv_.size())))) return false;
  SparseNorms();
  std::fill(jx_.begin(), jx_.end(), 0.0);
  for (size_t k = 0; k < jv_.size(); ++k) jx_[sp_of_nz_[k]] = jv_[k];
  if (!sparse_->Factor(jx_.data())) return false;
  du_ = r_;
  sparse_->Solve(du_.data());
  return std::isfinite(InfNorm(du_.data(), n_));
}

bool NewtonSolver::SolveLinearSparsePlain(double* s, BlockFns& fns, double rnorm, double u0) {
  if (!sparse_->Factor(jx_.data())) return false;
  if (has_multipliers_ && !(sparse_->rcond() > kRedundantPivot)) return false;
  du_ = r_;
  sparse_->Solve(du_.data());
  if (!std::isfinite(InfNorm(du_.data(), n_))) return false;
  u_ -= du_;
  StoreU(s);
  fns.Residual(s, r_.data());
  const double r1 = InfNorm(r_.data(), n_);
  const double scale = 1 + jnorm_ * (u0 + InfNorm(u_.data(), n_)) + rnorm;
  return std::isfinite(r1) && r1 <= 1e-8 * scale;
}

bool NewtonSolver::SolveLinearSparse(double* s, BlockFns& fns, double rnorm) {
  if (!std::isfinite(InfNorm(jv_.data(), static_cast<int>(jv_.size())))) return false;
  SparseNorms();
  std::fill(jx_.begin(), jx_.end(), 0.0);
  for (size_t k = 0; k < jv_.size(); ++k) jx_[sp_of_nz_[k]] = jv_[k];
  const double u0 = InfNorm(u_.data(), n_);
  if (!regularized_) {
    if (SolveLinearSparsePlain(s, fns, rnorm, u0)) return true;
    if (!has_multipliers_) return false;
    // Redundant constraints (or a configuration where the joints' constraints
    // are nearly dependent): the regularized solve, with pivots chosen for it,
    // from the entry point, for this call and the following ones.
    regularized_ = true;
    sparse_->Forget();
    u_ = u_old_;
    StoreU(s);
    fns.Residual(s, r_.data());
    if (!std::isfinite(InfNorm(r_.data(), n_))) return false;
  }
  // r(u) = J u + c: the constant part, from the residual at the entry point.
  sparse_->Multiply(jx_.data(), u_.data(), work_.data());
  Eigen::VectorXd& c = affine_;
  c = r_ - work_;
  ax_ = jx_;
  if (has_multipliers_) {
    // delta = kRegularization max |J_jj|, the same on every multiplier, so that
    // the refinement stays in the range of a symmetric J (minimum norm): small
    // enough that it converges in a few steps, large enough that J + delta D
    // stays factorable whatever the redundancy.
    double dmax = 0;
    for (int j = 0; j < n_; ++j)
      if (sp_diag_[j] >= 0) dmax = std::max(dmax, std::fabs(jx_[sp_diag_[j]]));
    const double delta = kRegularization * (dmax > 0 ? dmax : jnorm_);
    for (int j = 0; j < n_; ++j) {
      if (sp_diag_[j] < 0) continue;
      const double d = jx_[sp_diag_[j]];
      ax_[sp_diag_[j]] += d > 0 ? delta : -delta;
    }
    u_.setZero();
  }
  if (!sparse_->Factor(ax_.data())) return false;
  // Refinement on J: u -= (J + delta D)^-1 (J u + c).
  Eigen::VectorXd& res = work_;
  sparse_->Multiply(jx_.data(), u_.data(), res.data());
  res += c;
  double rn = InfNorm(res.data(), n_);
  const double cn = InfNorm(c.data(), n_);
  for (int it = 0; it < 30; ++it) {
    work2_ = res;
    sparse_->Solve(work2_.data());
    u_ -= work2_;
    sparse_->Multiply(jx_.data(), u_.data(), res.data());
    res += c;
    const double next = InfNorm(res.data(), n_);
    if (!std::isfinite(next)) return false;
    const bool done = next <= 4 * kEps * (jnorm_ * InfNorm(u_.data(), n_) + cn);
    const bool stalled = !(next < 0.5 * rn);
    rn = next;
    if (done || stalled || !has_multipliers_) break;
  }
  StoreU(s);
  fns.Residual(s, r_.data());
  const double r1 = InfNorm(r_.data(), n_);
  const double scale = 1 + jnorm_ * (u0 + InfNorm(u_.data(), n_)) + rnorm;
  return std::isfinite(r1) && r1 <= 1e-8 * scale;
}

bool NewtonSolver::FactorRedundant(double threshold) {
  if (!has_multipliers_ || !std::isfinite(InfNorm(J_.data(), n_ * n_))) return false;
  // The kernel of J: redundant constraints leave only multipliers undetermined.
  Eigen::FullPivLU<Eigen::MatrixXd> full(J_);
  full.setThreshold(threshold);
  if (full.rank() == n_) {
    // Full rank by this (relative) threshold, though partial pivoting found a
    // small pivot: the full-pivoting factorization solves it.
    du_ = full.solve(r_);
    rank_deficient_ = false;
    return std::isfinite(InfNorm(du_.data(), n_));
  }
  const Eigen::MatrixXd kernel = full.kernel();
  for (int c = 0; c < kernel.cols(); ++c) {
    const double mag = kernel.col(c).cwiseAbs().maxCoeff();
    for (int j = 0; j < n_; ++j)
      if (!multiplier_[j] && std::fabs(kernel(j, c)) > 1e-8 * mag) return false;
  }
  du_ = MinimumNormSolve(J_, threshold, r_, nullptr);
  rank_deficient_ = true;
  if (threshold == 1e-10) redundant_calls_left_ = 50;
  return std::isfinite(InfNorm(du_.data(), n_));
}

void NewtonSolver::LoadU(const double* s) {
  for (int j = 0; j < n_; ++j) u_[j] = s[b_->unknowns[j]];
}

void NewtonSolver::StoreU(double* s) const {
  for (int j = 0; j < n_; ++j) s[b_->unknowns[j]] = u_[j];
}

// Factors J_ and leaves J^-1 r in du_. Returns false when J_ is singular to working
// precision (a pivot below n*eps*max|J|) or not finite.
bool NewtonSolver::Factor() {
  const double* J = J_.data();
  double maxabs = 0;
  const double jnorm = MatrixNorms(J, n_, &maxabs);
  if (!std::isfinite(jnorm)) return false;
  jnorm_ = jnorm;
  // Blocks of constraint multipliers: a pivot this small means redundant
  // constraints (FactorRedundant then takes over), not a solvable system.
  const double tiny = PivotFloor(maxabs);
  if (n_ > kSmallBlock) {
    lu_.compute(J_);
    const auto& lu = lu_.matrixLU();
    for (int i = 0; i < n_; ++i)
      if (!(std::fabs(lu(i, i)) > tiny)) return false;
    du_.noalias() = lu_.solve(r_);
    return std::isfinite(InfNorm(du_.data(), n_));
  }
  // Small blocks (the common case): our own LDL^T or LU, several times faster
  // than Eigen's general dynamic-size path at these sizes.
  return SmallDenseSolve(J, n_, tiny, r_.data(), small_lu_.data(), du_.data());
}

double NewtonSolver::PivotFloor(double maxabs) const { return (has_multipliers_ ? 1e-8 : n_ * kEps) * maxabs; }

template <int n>
bool NewtonSolver::SolveLinearDense(double* s, BlockFns& fns) {
  const int* unknowns = b_->unknowns.data();
  static_assert(n <= kDirectBlock);
  double u0[n], u1[n], r[n], x[n], a[n * n], work[n * n];
  for (int j = 0; j < n; ++j) u0[j] = s[unknowns[j]];
  fns.Residual(s, r);
  const double rnorm = InfNorm(r, n);
  if (!std::isfinite(rnorm)) return false;
  fns.Jacobian(s, jv_.data());
  std::fill(a, a + n * n, 0.0);
  for (size_t k = 0; k < jv_.size(); ++k) a[b_->jacobian_nz[k]] = jv_[k];
  double maxabs = 0;
  const double jnorm = MatrixNorms(a, n, &maxabs);
  if (!std::isfinite(jnorm)) return false;
  if (!SmallDenseSolve(a, n, PivotFloor(maxabs), r, work, x)) return false;
  for (int j = 0; j < n; ++j) s[unknowns[j]] = u1[j] = u0[j] - x[j];
  bool ok = std::isfinite(InfNorm(u1, n));
  if (ok) {
    fns.Residual(s, r);
    const double r1 = InfNorm(r, n);
    const double scale = 1 + jnorm * (InfNorm(u0, n) + InfNorm(u1, n)) + rnorm;
    ok = std::isfinite(r1) && r1 <= 1e-8 * scale;
  }
  if (!ok) {
    for (int j = 0; j < n; ++j) s[unknowns[j]] = u0[j];
    return false;
  }
  jnorm_ = jnorm;
  rank_deficient_ = false;
  return true;
}

void NewtonSolver::Solve(double* s, BlockFns& fns) {
  if (b_->linear && n_ <= kDirectBlock && !sparse_ && redundant_calls_left_ == 0) {
    const bool done = n_ == 1   ? SolveLinearDense<1>(s, fns)
                      : n_ == 2 ? SolveLinearDense<2>(s, fns)
                      : n_ == 3 ? SolveLinearDense<3>(s, fns)
                                : SolveLinearDense<4>(s, fns);
    if (done) return;
  }
  LoadU(s);
  fns.Residual(s, r_.data());
  double rnorm = InfNorm(r_.data(), n_);
  if (!std::isfinite(rnorm)) ThrowNonFiniteResidual(s, true);

  if (b_->linear) {
    // r is affine in u: one Newton step is the exact solution. The residual at the
    // result is still checked, against the size of the terms that cancel in it.
    fns.Jacobian(s, jv_.data());
    if (sparse_) {
      u_old_ = u_;
      if (SolveLinearSparse(s, fns, rnorm)) return;
      // The dense path takes over from the entry point (J is constant).
      u_ = u_old_;
      StoreU(s);
      fns.Residual(s, r_.data());
      rnorm = InfNorm(r_.data(), n_);
    }
    Scatter();
    rank_deficient_ = false;
    if (redundant_calls_left_ > 0 && std::isfinite(InfNorm(J_.data(), n_ * n_))) {
      // Known redundant: straight to the minimum-norm solution from u = 0.
      --redundant_calls_left_;
      double maxabs = 0;
      jnorm_ = MatrixNorms(J_.data(), n_, &maxabs);  // finite: checked above
      u_.setZero();
      StoreU(s);
      fns.Residual(s, r_.data());
      rnorm = InfNorm(r_.data(), n_);
      if (!std::isfinite(rnorm)) ThrowNonFiniteResidual(s, true);
      int rank = 0;
      du_ = MinimumNormSolve(J_, 1e-10, r_, &rank);
      rank_deficient_ = rank < n_;
      if (!rank_deficient_) redundant_calls_left_ = 0;  // rank came back: the regular path next time
    } else if (!Factor()) {
      // Redundant constraints: the minimum-norm solution, from u = 0 (so that
      // the multipliers carry no component of the previous call's solution
      // along the directions the constraints leave undetermined).
      if (has_multipliers_) {
        u_.setZero();
        StoreU(s);
        fns.Residual(s, r_.data());
        rnorm = InfNorm(r_.data(), n_);
        if (!std::isfinite(rnorm)) ThrowNonFiniteResidual(s, true);
      }
      if (!FactorRedundant()) ThrowSingular(s);
    }
    const double u0 = InfNorm(u_.data(), n_);
    u_ -= du_;
    StoreU(s);
    if (!std::isfinite(InfNorm(u_.data(), n_)) && checks_) checks_->CheckThrough(s, b_->written_before + n_);
    fns.Residual(s, r_.data());
    double r1 = InfNorm(r_.data(), n_);
    if (!std::isfinite(r1)) ThrowNonFiniteResidual(s, false);
    const double scale = 1 + jnorm_ * (u0 + InfNorm(u_.data(), n_)) + rnorm;
    // Redundant constraints whose accelerations disagree slightly (the
    // velocities have drifted off the constraints) leave a least-squares residual.
    if (r1 > (rank_deficient_ ? 1e-6 : 1e-8) * scale && has_multipliers_) {
      // A mechanism near a singular configuration (links aligned): its
      // constraints are nearly dependent and the forces ill-determined (they
      // grow as the drift over the square of the smallest singular value).
      u_.setZero();
      StoreU(s);
      fns.Residual(s, r_.data());
      rnorm = InfNorm(r_.data(), n_);
      // Damped least squares: (J^T J + eps^2 I) du = J^T r, eps = 1e-10 |J|.
      // The forces stay bounded; the accelerations miss the constraints in
      // the nearly dependent directions by O(eps), which the projection after
      // the step takes back.
      const double eps = 1e-10 * jnorm_;
      Eigen::MatrixXd A = J_.transpose() * J_;
      A.diagonal().array() += eps * eps;
      du_ = A.ldlt().solve(J_.transpose() * r_);
      u_ -= du_;
      StoreU(s);
      fns.Residual(s, r_.data());
      r1 = InfNorm(r_.data(), n_);
      if (std::isfinite(r1) && std::isfinite(InfNorm(u_.data(), n_))) {
        ++damped_solves_;
        return;
      }
      ThrowSingularConfiguration(s);
    }
    if (r1 > (rank_deficient_ ? 1e-6 : 1e-8) * scale) ThrowNotConverged(s, 1, InfNorm(du_.data(), n_), "linear");
    return;
  }

  // Warm start: the unknowns keep the previous call's solution, often still exact.
  if (rnorm == 0) return;
  double step = 0;
  for (int it = 1; it <= max_iter_; ++it) {
    fns.Jacobian(s, jv_.data());
    if (!sparse_ || !FactorSparse()) {
      Scatter();
      if (!Factor() && !FactorRedundant()) ThrowSingular(s);
    }
    step = InfNorm(du_.data(), n_);
    u_old_ = u_;
    const double ustart = InfNorm(u_.data(), n_);
    // Backtracking on ||r||: halve the step until the residual decreases (Armijo),
    // unless the step is already below the tolerance.
    double lambda = 1, rnew = 0;
    for (int ls = 0;; ++ls) {
      u_ = u_old_ - lambda * du_;
      StoreU(s);
      fns.Residual(s, r_.data());
      rnew = InfNorm(r_.data(), n_);
      if (std::isfinite(rnew) && (rnew <= (1 - 1e-4 * lambda) * rnorm || lambda * step <= tol_ * (1 + ustart))) break;
      if (ls == kMaxHalvings) {
        if (!std::isfinite(rnew)) ThrowNonFiniteResidual(s, false);
        break;  // accept the short step; the iteration limit bounds the work
      }
      lambda *= 0.5;
    }
    rnorm = rnew;
    const double unorm = InfNorm(u_.data(), n_);
    const double rscale = jnorm_ * (1 + unorm);
    if (lambda * step <= tol_ * (1 + unorm) && rnorm <= 1e3 * tol_ * rscale) {
      if (!std::isfinite(unorm) && checks_) checks_->CheckThrough(s, b_->written_before + n_);
      return;
    }
    step *= lambda;
  }
  ThrowNotConverged(s, max_iter_, step, "nonlinear");
}

std::string NewtonSolver::UnknownList(const std::vector<int>& positions) const {
  std::string out;
  for (int j : positions) out += fmt::format("{}'{}'", out.empty() ? "" : ", ", plan_->slot_names[b_->unknowns[j]]);
  return out;
}

std::string NewtonSolver::UnknownValues(const double* s) const {
  std::string out;
  for (int j = 0; j < n_ && j < 12; ++j)
    out += fmt::format("{}{} = {}", j ? ", " : "", plan_->slot_names[b_->unknowns[j]], Num(s[b_->unknowns[j]]));
  if (n_ > 12) out += ", ...";
  return out;
}

void NewtonSolver::ThrowSingular(const double* s) {
  if (checks_) checks_->CheckBlockInputs(s, block_);
  if (!std::isfinite(InfNorm(J_.data(), n_ * n_)))
    ThrowAt({}, "", fmt::format("the Jacobian of block '{}' contains NaN or Inf at {}", b_->label, UnknownValues(s)),
            "a nonsingular Jacobian", "a non-finite Jacobian",
            "a derivative is undefined at this point (division by zero, log or sqrt of a "
            "non-positive number); check the parameters and the starting values");
  std::vector<int> involved = b_->unmatched;
  std::string why;
  if (!involved.empty()) {
    why = fmt::format(
        "unknown(s) {} appear structurally singular: no residual of the block "
        "determines them independently of the others",
        UnknownList(involved));
  } else {
    Eigen::FullPivLU<Eigen::MatrixXd> full(J_);
    const Eigen::MatrixXd kernel = full.kernel();
    for (int j = 0; j < n_; ++j) {
      const double mag = kernel.rows() == n_ ? kernel.row(j).cwiseAbs().maxCoeff() : 0.0;
      if (mag > 1e-8 * std::max(1.0, kernel.cwiseAbs().maxCoeff())) involved.push_back(j);
    }
    why = fmt::format("it has numerical rank {} of {}", full.rank(), n_);
    if (!involved.empty()) why += fmt::format("; the singular direction involves unknown(s) {}", UnknownList(involved));
  }
  ThrowAt({}, "", fmt::format("the Jacobian of block '{}' is singular: {}", b_->label, why), "a nonsingular Jacobian",
          fmt::format("a singular {}x{} Jacobian at {}", n_, n_, UnknownValues(s)),
          "a singular algebraic loop usually means the model leaves some variables undetermined "
          "(e.g. a zero parameter, or storage elements forced into dependent causality); check "
          "the parameters and the elements around the loop");
}

void NewtonSolver::ThrowSingularConfiguration(const double* s) {
  if (checks_) checks_->CheckBlockInputs(s, block_);
  ThrowAt({}, "",
          fmt::format("{}: the constraint forces cannot be solved here: the joints' constraints have become "
                      "dependent, beyond the redundancy the mechanism has elsewhere (a singular configuration, "
                      "such as links aligned)",
                      b_->label),
          "a configuration where the joints' constraints keep their rank",
          fmt::format("an ill-conditioned {}x{} block of constraint forces", n_, n_),
          "a rigid model cannot pass this configuration by these equations; --constraints parasitic (compliant "
          "joints) can, or change the joints so that the mechanism does not lock there");
}

void NewtonSolver::ThrowNotConverged(const double* s, int iterations, double step, const char* kind) {
  if (checks_) checks_->CheckBlockInputs(s, block_);
  int worst = 0;
  for (int i = 1; i < n_; ++i)
    if (std::fabs(r_[i]) > std::fabs(r_[worst])) worst = i;
  const std::string got =
      fmt::format("||r||_inf = {} (largest: residual {}) at {}", Num(std::fabs(r_[worst])), worst, UnknownValues(s));
  if (std::string(kind) == "linear")
    ThrowAt({}, "",
            fmt::format("block '{}' is marked linear, but the exact Newton step left residual norm {}", b_->label,
                        Num(std::fabs(r_[worst]))),
            "residuals close to zero", got,
            "the residuals may not be affine in the unknowns (a bug in the equation builder), "
            "or the Jacobian is too ill-conditioned to solve in double precision");
  ThrowAt({}, "",
          fmt::format("Newton's method did not converge for block '{}' after {} iterations: "
                      "residual norm {}, last step {}",
                      b_->label, iterations, Num(std::fabs(r_[worst])), Num(step)),
          "residuals close to zero", got,
          "the algebraic loop may have no solution near the starting guess (the unknowns' "
          "values on entry); check the parameters, or give better initial values");
}

void NewtonSolver::ThrowNonFiniteResidual(const double* s, bool at_start) {
  std::lock_guard<std::recursive_mutex> symbolic(SymbolicMutex());  // the message prints an expression
  if (checks_) checks_->CheckBlockInputs(s, block_);
  int bad = 0;
  while (bad < n_ - 1 && std::isfinite(r_[bad])) ++bad;
  std::string hint;
  if (bad < static_cast<int>(b_->residual_exprs.size()))
    hint = fmt::format("residual {} = {}; ", bad, Truncated(b_->residual_exprs[bad]));
  hint +=
      "it is undefined there (division by zero, log or sqrt of a negative number); the "
      "unknowns' values on entry are the starting guess, so better initial values may help";
  ThrowAt({}, "",
          fmt::format("residual {} of block '{}' is {} {}", bad, b_->label, ValueName(r_[bad]),
                      at_start ? "at the starting guess" : "along every Newton step tried"),
          "finite residuals", fmt::format("{} at {}", ValueName(r_[bad]), UnknownValues(s)), hint);
}

}  // namespace paynter::codegen
