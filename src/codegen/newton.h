// codegen/newton.h — runtime support shared by both backends: the Newton block
// solver and the NaN/Inf checks on written slots.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "paynter/codegen.h"
#include "sparse_lu.h"
#include "plan.h"

namespace paynter::codegen {

// Positions of the unknowns (columns) that a maximum matching of the Jacobian's
// nonzero pattern (rows_of_col[j] = residuals depending on unknown j) leaves out: if
// any, the Jacobian is singular whatever the values.
std::vector<int> StructurallyUnmatched(const std::vector<std::vector<int>>& rows_of_col, int n);

// Evaluation callbacks for one block, on the slot array the solver works on.
class BlockFns {
 public:
  virtual ~BlockFns() = default;
  virtual void Residual(double* s, double* r) = 0;
  // Column-major n×n. Always called right after Residual at the same point, so a
  // backend may reuse values the residual code computed.
  virtual void Jacobian(double* s, double* J) = 0;
};

// Non-finite values in written slots. The fast check is one pass over the written
// slots (the native backend does it in the generated C); only when it trips is the
// (allocating) diagnosis done.
class RuntimeChecks {
 public:
  explicit RuntimeChecks(const Plan& plan);
  // Copies the written slots from `from` to `to` (the tape's copy-out) and throws
  // paynter::Error naming the first written slot, in step order, that is NaN/Inf.
  void CopyWrittenAndCheck(const double* from, double* to) const;
  // Throws for the first non-finite slot among the first `entries` of Plan::written.
  void CheckThrough(const double* s, int entries) const { CheckRange(s, 0, entries); }
  // On a block failure: throws if the block's inputs are already non-finite.
  void CheckBlockInputs(const double* s, int block) const;
  const std::string& SlotName(int slot) const { return plan_->slot_names[slot]; }

 private:
  void CheckRange(const double* s, int begin, int end) const;
  [[noreturn]] void ThrowNonFinite(const double* s, int entry) const;
  const Plan* plan_;
  std::vector<int> written_;  // slots, in step order
  std::vector<int> sorted_;   // the same slots, sorted and unique (the fast check)
};

// Newton's method for one block, with a dense LU, or a sparse LU (KLU) for large
// blocks with few structural non-zeros (CodegenOptions::block_solve). The dense
// workspace is allocated once, so a dense Solve does not allocate unless it
// throws; a sparse one allocates when it chooses new pivots (the first call, and
// when refactoring with the old ones has degraded them).
//
// A linear block solved sparsely takes one Newton step on J itself from the
// entry point (one refactorization, one solve), as long as its pivots stay
// above 1e-8 of the largest for a block of constraint multipliers (the dense
// path's test for redundant constraints). A multiplier block that fails it (or
// the residual check) is taken to have redundant constraints and is solved from
// then on as follows.
//
// Blocks of constraint multipliers (unknowns lambda_*) with redundant
// constraints, solved sparsely, are regularized: (J + D) with
// D_jj = +-1e-10 max_k |J_kk| on the multipliers' diagonal (the sign of J_jj),
// and the solution refined on J itself from u = 0 (iterated Tikhonov). Redundant
// constraints make J singular only along multipliers; the refinement converges
// on the rest and leaves no component along the kernel, so the forces are the
// minimum-norm ones, as the dense path's complete orthogonal decomposition
// gives. Whatever the sparse path cannot solve to the dense path's tolerance
// (a singular configuration, say) is handed to the dense path.
// The least-squares solution of J x = r of minimum norm in the directions whose
// singular values fall well below threshold times the largest (Tikhonov's
// filter, continuous in J; newton.cc says why); *rank (when given) receives
// the number of singular values above that bound.
Eigen::VectorXd MinimumNormSolve(const Eigen::MatrixXd& J, double threshold, const Eigen::VectorXd& r, int* rank);

class NewtonSolver {
 public:
  NewtonSolver(const Plan& plan, int block, const CodegenOptions& options, const RuntimeChecks* checks);
  // Unknown slots hold the starting guess on entry and the solution on return; the
  // last Residual call is made at the returned solution. Throws paynter::Error.
  void Solve(double* s, BlockFns& fns);
  // Continues where `from` (the same block of a copy of the same plan, run by
  // the other backend) stands: its factorizations, pivots and counters, so
  // that the next Solve gives what `from`'s would have, bit for bit.
  void TakeStateFrom(NewtonSolver& from);

 private:
  bool Factor();  // J_ -> du_ = J^-1 r_; false when J_ is (numerically) singular
  double PivotFloor(double maxabs) const;  // Factor's smallest acceptable pivot
  // Small dense linear blocks (at most 4 unknowns, the common case of small
  // models): the general linear path's step and residual check on arrays of
  // its own, without the bookkeeping for redundant or sparse blocks; the same
  // operations in the same order, so the same result bit for bit. False, with
  // the unknowns back at their entry values, whenever the general path has more
  // to decide (a small pivot, a non-finite value, a failed residual check): it
  // then starts again from the entry point.
  template <int n>
  bool SolveLinearDense(double* s, BlockFns& fns);
  void Scatter();  // jv_ (the structural non-zeros) -> the dense J_
  void SparseNorms();  // jnorm_ from jv_
  // Linear blocks: the sparse solve described above; false (with u_ and s
  // unchanged in meaning: the caller restores them) when it does not reach the
  // dense path's tolerance.
  bool SolveLinearSparse(double* s, BlockFns& fns, double rnorm);
  // Its first attempt: one Newton step on J (jx_), u0 = |u| at the entry point.
  bool SolveLinearSparsePlain(double* s, BlockFns& fns, double rnorm, double u0);
  // Nonlinear blocks: du_ = J^-1 r_ by the sparse LU; false when singular.
  bool FactorSparse();
  // Redundant constraints: when J_ is singular only in the directions of
  // constraint multipliers (unknowns lambda_*), du_ = the minimum-norm
  // least-squares solution. False when any other unknown is undetermined.
  bool FactorRedundant(double threshold = 1e-10);
  [[noreturn]] void ThrowSingularConfiguration(const double* s);
  void LoadU(const double* s);
  void StoreU(double* s) const;
  [[noreturn]] void ThrowSingular(const double* s);
  [[noreturn]] void ThrowNotConverged(const double* s, int iterations, double step, const char* kind);
  [[noreturn]] void ThrowNonFiniteResidual(const double* s, bool at_start);
  std::string UnknownList(const std::vector<int>& positions) const;
  std::string UnknownValues(const double* s) const;

  const Plan* plan_;
  int block_;
  const BlockPlan* b_;
  const RuntimeChecks* checks_;
  double tol_;
  int max_iter_;
  int n_;
  double jnorm_ = 0;  // max row sum of |J| at the last factorization (residual scale)
  Eigen::VectorXd u_, u_old_, du_, r_;
  Eigen::MatrixXd J_;
  std::vector<double> jv_;  // the Jacobian's structural non-zeros (BlockPlan::jacobian_nz)
  std::vector<int> nz_row_;  // the row of each
  // Sparse path: the LU, the position of each non-zero in its values (whose
  // pattern adds the multipliers' diagonal), and per unknown the position of
  // its diagonal entry when it is regularized (-1 otherwise).
  std::unique_ptr<SparseLU> sparse_;
  std::vector<int> sp_of_nz_, sp_diag_;
  std::vector<double> ax_, jx_;
  bool regularized_ = false;  // linear multiplier block found redundant: always the regularized solve
  Eigen::VectorXd work_, work2_, affine_;  // affine_: r(0) of a linear block
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;  // large blocks
  std::vector<double> small_lu_;             // small blocks: factors of J_ (column-major)
  std::vector<char> multiplier_;             // per unknown: a constraint multiplier
  bool has_multipliers_ = false;
  bool rank_deficient_ = false;              // the last factorization was FactorRedundant's
  long damped_solves_ = 0;                   // near-singular configurations passed by damped least squares
  // A block found redundant (kernel in the multipliers only) is solved by the
  // complete orthogonal decomposition directly for the next calls, the
  // kernel being checked again after 50 calls.
  int redundant_calls_left_ = 0;
};

}  // namespace paynter::codegen
