// Tests of the sparse block solve (newton.h): sparse and dense paths agree with
// an independent dense solution, independent multiplier blocks are solved in one
// step, redundant ones get the minimum-norm solution (also on later calls),
// singular blocks still fail with the block's name.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>
#include <string>

#include "paynter/codegen.h"
#include "paynter/error.h"
#include "tape.h"

namespace paynter {
namespace {

using GiNaC::ex;
using GiNaC::numeric;
using GiNaC::symbol;
using BlockSolve = CodegenOptions::BlockSolve;

// One block r(u) = 0 over slots u_0..u_{n-1} (named prefix + index).
struct BlockProgram {
  Program p;
  std::vector<symbol> u;
  BlockProgram(int n, const std::string& prefix) {
    for (int i = 0; i < n; ++i) {
      u.emplace_back(prefix + std::to_string(i));
      p.symbols.push_back(u.back());
      p.slot_names.push_back(prefix + std::to_string(i));
    }
  }
  void Block(const std::vector<ex>& r, bool linear) {
    ProgramStep st;
    st.kind = ProgramStep::Kind::kBlock;
    for (size_t i = 0; i < u.size(); ++i) st.unknowns.push_back(static_cast<int>(i));
    st.residuals = r;
    for (const ex& ri : r)
      for (const symbol& s : u) st.jacobian.push_back(ri.diff(s));
    st.linear = linear;
    st.label = "test block";
    p.steps.push_back(st);
  }
  std::vector<double> Solve(BlockSolve how, std::vector<double> start = {}) const {
    CodegenOptions o;
    o.backend = Backend::kTape;
    o.block_solve = how;
    auto prog = Compile(p, o);
    auto prog_ws = prog->NewWorkspace();
    std::vector<double> s = start.empty() ? std::vector<double>(u.size(), 0.0) : start;
    prog->Run(s.data(), *prog_ws);
    return s;
  }
};

ex Num(double v) { return numeric(v); }

// A sparse, diagonally dominant n×n matrix: tridiagonal plus a few far entries.
Eigen::MatrixXd SparseMatrix(int n, std::mt19937& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    a(i, i) = 4 + d(rng);
    if (i > 0) a(i, i - 1) = d(rng);
    if (i + 1 < n) a(i, i + 1) = d(rng);
    a(i, (i * 7 + 3) % n) += 0.5 * d(rng);
  }
  return a;
}

// Rows of a constraint Jacobian J (rows x cols, each touching columns i, i+1,
// i+6); the rows from `independent` on are combinations of two earlier ones
// (row i - independent + `with`, weighted by `weight`): redundant constraints.
Eigen::MatrixXd ConstraintRows(int rows, int cols, int independent, unsigned seed, int with, double weight) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  Eigen::MatrixXd j = Eigen::MatrixXd::Zero(rows, cols);
  for (int i = 0; i < independent; ++i)
    for (int k : {i, i + 1, i + 6}) j(i, k) = d(rng) + (k == i ? 2 : 0);
  for (int i = independent; i < rows; ++i) j.row(i) = j.row(i - independent) + weight * j.row(i - independent + with);
  return j;
}

// The linear block W u = f over unknowns prefix0 .. (its structural non-zeros
// only); prefix "lambda_" makes them constraint multipliers.
BlockProgram LinearBlock(const Eigen::MatrixXd& w, const Eigen::VectorXd& f, const std::string& prefix = "lambda_") {
  const int rows = static_cast<int>(w.rows());
  BlockProgram bp(rows, prefix);
  std::vector<ex> r;
  for (int i = 0; i < rows; ++i) {
    ex ri = -Num(f[i]);
    for (int k = 0; k < rows; ++k)
      if (w(i, k) != 0) ri += Num(w(i, k)) * bp.u[k];
    r.push_back(ri);
  }
  bp.Block(r, true);
  return bp;
}

TEST(SparseBlock, LinearBlockMatchesAnIndependentSolve) {
  std::mt19937 rng(7);
  const int n = 40;
  Eigen::MatrixXd a = SparseMatrix(n, rng);
  Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(n, -3, 5);
  const BlockProgram bp = LinearBlock(a, b, "x");
  const Eigen::VectorXd want = a.fullPivLu().solve(b);
  const std::vector<double> sparse = bp.Solve(BlockSolve::kSparse), dense = bp.Solve(BlockSolve::kDense);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(sparse[i], want[i], 1e-13 * (1 + std::fabs(want[i]))) << i;
    EXPECT_NEAR(dense[i], want[i], 1e-13 * (1 + std::fabs(want[i]))) << i;
  }
}

TEST(SparseBlock, NonlinearBlockConvergesToTheSameRoot) {
  const int n = 30;
  BlockProgram bp(n, "y");
  std::vector<ex> r;
  for (int i = 0; i < n; ++i) {
    ex ri = GiNaC::pow(bp.u[i], 3) + 2 * bp.u[i] - Num(1 + 0.1 * i);
    if (i > 0) ri -= numeric(1, 4) * bp.u[i - 1];
    if (i + 1 < n) ri -= numeric(1, 5) * GiNaC::sin(bp.u[i + 1]);
    r.push_back(ri);
  }
  bp.Block(r, false);
  const std::vector<double> sparse = bp.Solve(BlockSolve::kSparse), dense = bp.Solve(BlockSolve::kDense);
  for (int i = 0; i < n; ++i) {
    // The residual at the sparse solution, computed here independently.
    double ri = std::pow(sparse[i], 3) + 2 * sparse[i] - (1 + 0.1 * i);
    if (i > 0) ri -= 0.25 * sparse[i - 1];
    if (i + 1 < n) ri -= 0.2 * std::sin(sparse[i + 1]);
    EXPECT_LE(std::fabs(ri), 1e-12) << i;
    EXPECT_NEAR(sparse[i], dense[i], 1e-12) << i;
  }
}

// Constraint forces of redundant constraints: W = -(J J^T) with six of the 30
// rows of J combinations of the others, so W has rank 24. The forces are the
// minimum-norm solution of W lambda = f, which the dense path's complete
// orthogonal decomposition also gives.
TEST(SparseBlock, RedundantMultipliersGetTheMinimumNormSolution) {
  const int rows = 30, cols = 36, independent = 24;
  const Eigen::MatrixXd j = ConstraintRows(rows, cols, independent, 11, 1, -0.5);
  const Eigen::MatrixXd w = -(j * j.transpose());
  Eigen::VectorXd lambda_true = Eigen::VectorXd::LinSpaced(rows, 1, 4);
  const Eigen::VectorXd f = w * lambda_true;  // consistent
  const BlockProgram bp = LinearBlock(w, f);
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(w);
  const Eigen::VectorXd want = cod.solve(f);
  ASSERT_EQ(cod.rank(), independent);
  // Starting from a guess with a component along the kernel: it must not stay.
  std::vector<double> start(rows, 3.0);
  const std::vector<double> sparse = bp.Solve(BlockSolve::kSparse, start);
  const std::vector<double> dense = bp.Solve(BlockSolve::kDense, start);
  // The sparse path factors W + delta I with delta = 1e-10 of W's diagonal: in
  // the kernel's directions its condition is about 1e10, so rounding leaves a
  // kernel component of about 1e10 * eps ~ 1e-6 of the forces (documented in
  // docs/constraints.md). It does not move anything: W lambda = f holds to
  // rounding, which is what the motion sees.
  const double scale = want.cwiseAbs().maxCoeff();
  Eigen::VectorXd ls = Eigen::Map<const Eigen::VectorXd>(sparse.data(), rows);
  EXPECT_LE((w * ls - f).lpNorm<Eigen::Infinity>(), 1e-12 * w.cwiseAbs().maxCoeff() * scale);
  for (int i = 0; i < rows; ++i) {
    EXPECT_NEAR(sparse[i], want[i], 1e-5 * scale) << i;
    EXPECT_NEAR(dense[i], want[i], 1e-9 * scale) << i;
  }
}

// Constraint forces without redundancy: W = -(J J^T) with J of full row rank.
// The sparse path takes one Newton step on W (no regularization) and agrees with
// an independent solve; a second evaluation, from the first one's solution,
// stays on that path and gives the same forces.
TEST(SparseBlock, IndependentMultipliersTakeOneStepOnTheBlock) {
  const int rows = 30;
  const Eigen::MatrixXd j = ConstraintRows(rows, 36, rows, 5, 1, 0);
  const Eigen::MatrixXd w = -(j * j.transpose());
  const Eigen::VectorXd f = Eigen::VectorXd::LinSpaced(rows, -2, 3);
  const BlockProgram bp = LinearBlock(w, f);
  const Eigen::VectorXd want = w.fullPivLu().solve(f);
  const double scale = want.cwiseAbs().maxCoeff();
  CodegenOptions o;
  o.backend = Backend::kTape;
  o.block_solve = BlockSolve::kSparse;
  auto prog = Compile(bp.p, o);
  auto prog_ws = prog->NewWorkspace();
  std::vector<double> s(rows, 3.0);
  for (int call = 0; call < 2; ++call) {
    prog->Run(s.data(), *prog_ws);
    for (int i = 0; i < rows; ++i) EXPECT_NEAR(s[i], want[i], 1e-13 * scale) << "call " << call << ", " << i;
  }
  const std::vector<double> dense = bp.Solve(BlockSolve::kDense, std::vector<double>(rows, 3.0));
  for (int i = 0; i < rows; ++i) EXPECT_NEAR(s[i], dense[i], 1e-13 * scale) << i;
}

// A redundant block keeps the regularized solve on later evaluations: the
// forces stay the minimum-norm ones from whatever start (a start's component
// along the kernel, of the order of the start, does not survive). The later
// evaluations refactor with the first one's pivots and leave a kernel
// component of about 2e-5 of the forces here (the first evaluation: 1e-6), as
// before one-step solves of independent blocks existed; W lambda = f holds to
// rounding.
TEST(SparseBlock, RedundantMultipliersStayMinimumNormOnLaterCalls) {
  const int rows = 30, cols = 36, independent = 24;
  const Eigen::MatrixXd j = ConstraintRows(rows, cols, independent, 13, 2, 0.25);
  const Eigen::MatrixXd w = -(j * j.transpose());
  const Eigen::VectorXd f = w * Eigen::VectorXd::LinSpaced(rows, -1, 2);
  const BlockProgram bp = LinearBlock(w, f);
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(w);
  const Eigen::VectorXd want = cod.solve(f);
  ASSERT_EQ(cod.rank(), independent);
  const double scale = want.cwiseAbs().maxCoeff();
  CodegenOptions o;
  o.backend = Backend::kTape;
  o.block_solve = BlockSolve::kSparse;
  auto prog = Compile(bp.p, o);
  auto prog_ws = prog->NewWorkspace();
  for (double start : {3.0, -7.0, 0.5}) {
    std::vector<double> s(rows, start);
    prog->Run(s.data(), *prog_ws);
    const Eigen::VectorXd got = Eigen::Map<const Eigen::VectorXd>(s.data(), rows);
    EXPECT_LE((w * got - f).lpNorm<Eigen::Infinity>(), 1e-12 * w.cwiseAbs().maxCoeff() * scale) << start;
    for (int i = 0; i < rows; ++i) EXPECT_NEAR(s[i], want[i], 1e-4 * scale) << "start " << start << ", " << i;
  }
}

TEST(SparseBlock, SingularBlockStillNamesTheBlock) {
  const int n = 30;
  BlockProgram bp(n, "z");
  std::vector<ex> r;
  for (int i = 0; i < n; ++i) r.push_back(i == n - 1 ? bp.u[0] - bp.u[1] : bp.u[i] - bp.u[i + 1] + 1);
  bp.Block(r, true);  // rows 0 and n-1 contradict: singular
  try {
    bp.Solve(BlockSolve::kSparse);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("test block"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace paynter
