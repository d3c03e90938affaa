// AnalyzeConstraints (a sparse QR of the constraint Jacobian's rows) against
// an independent dense formulation written here: the Jacobian by unit steps
// of the momenta, its rank by a singular value decomposition (threshold 1e-9
// of the largest) and its redundant rows by Gram-Schmidt in model order (a
// row is redundant when less than 1e-8 of its norm lies outside the span of
// the rows before it). Both must decide the same rank and the same redundant
// rows on the redundant mechanisms of examples/ (the hyperstatic slider-crank,
// the four-bar, the N four-bar benchmark, the Bricard linkage) and on an
// isostatic chain. And the closed-form rates of the bodies' rotation
// matrices against the chain rule.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "test_util.h"

namespace paynter {
namespace {

struct Dense {
  int rank = 0;
  double condition = 0;
  std::vector<bool> redundant;
};

Dense DenseAnalysis(const CompiledModel& m) {
  ModelWorkspace ws(m);
  const int nc = m.num_constraints();
  std::vector<int> mom;
  for (int i = 0; i < m.num_states(); ++i)
    if (m.state_inertia()[i] > 0) mom.push_back(i);
  std::vector<double> x = m.initial_state(), c0(nc), c1(nc);
  ws.CalcConstraints(0, x.data(), nullptr, c0.data(), nullptr);
  Eigen::MatrixXd G(nc, mom.size());
  for (size_t j = 0; j < mom.size(); ++j) {
    x[mom[j]] += 1;
    ws.CalcConstraints(0, x.data(), nullptr, c1.data(), nullptr);
    x[mom[j]] -= 1;
    for (int r = 0; r < nc; ++r) G(r, j) = (c1[r] - c0[r]) * m.state_inertia()[mom[j]];
  }
  Dense d;
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(G);
  const auto& sv = svd.singularValues();
  double smin = 0;
  for (int k = 0; k < sv.size(); ++k)
    if (sv[k] > 1e-9 * sv[0]) ++d.rank, smin = sv[k];
  d.condition = sv[0] / smin;
  std::vector<Eigen::VectorXd> basis;
  for (int r = 0; r < nc; ++r) {
    Eigen::VectorXd v = G.row(r).transpose();
    if (v.norm() == 0) {
      d.redundant.push_back(true);
      continue;
    }
    v /= v.norm();
    for (int pass = 0; pass < 2; ++pass)
      for (const auto& b : basis) v -= b.dot(v) * b;
    d.redundant.push_back(v.norm() < 1e-8);
    if (v.norm() >= 1e-8) basis.push_back(v / v.norm());
  }
  return d;
}

std::string Generated(const std::string& script, int n) {
  const std::string path = ::testing::TempDir() + "analysis_" + std::to_string(n) + "_" +
                           script.substr(script.rfind('/') + 1) + ".yaml";
  const std::string cmd =
      "python3 " + testing::SourcePath(script) + " " + std::to_string(n) + " -o " + path + " > /dev/null";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
  return path;
}

// Returns the number of redundant rows, after checking both analyses agree.
int ExpectSameDecisions(const std::string& path) {
  SCOPED_TRACE(path);
  Model model = LoadModel(path, {.method = ConstraintMethod::kLagrangeMultipliers});
  CodegenOptions cg;
  cg.backend = Backend::kTape;
  CompiledModel cm(BuildEquations(model, AssignCausality(model)), cg);
  ModelWorkspace cm_ws(cm);
  const ConstraintAnalysis a = AnalyzeConstraints(cm_ws, 0, cm.initial_state());
  const Dense d = DenseAnalysis(cm);
  EXPECT_EQ(a.rank, d.rank);
  EXPECT_EQ(a.mobility, a.coordinates - d.rank);
  EXPECT_EQ(a.rows.size(), d.redundant.size());
  int redundant = 0;
  for (size_t r = 0; r < a.rows.size() && r < d.redundant.size(); ++r) {
    EXPECT_EQ(a.rows[r].redundant, d.redundant[r]) << "row " << r << " (" << a.rows[r].source << ")";
    redundant += a.rows[r].redundant;
  }
  EXPECT_EQ(redundant, a.constraints - a.rank);
  // The condition number, where the analysis computes it (small Jacobians).
  if (a.condition > 0) EXPECT_NEAR(a.condition / d.condition, 1, 1e-9);
  std::printf("%s: %d constraints, rank %d, %d redundant, condition %.3g (dense %.3g)\n", path.c_str(),
              a.constraints, a.rank, redundant, a.condition, d.condition);
  return redundant;
}

TEST(ConstraintAnalysis, SparseQrDecidesTheRedundantRowsAsADenseAnalysis) {
  EXPECT_EQ(ExpectSameDecisions(testing::SourcePath("examples/B2_slider_crank_hyperstatic.yaml")), 3);
  EXPECT_EQ(ExpectSameDecisions(testing::SourcePath("examples/B2_slider_crank_isostatic.yaml")), 0);
  EXPECT_EQ(ExpectSameDecisions(testing::SourcePath("examples/fourbar.yaml")), 3);
  EXPECT_EQ(ExpectSameDecisions(testing::SourcePath("examples/bricard.yaml")), 1);
  EXPECT_EQ(ExpectSameDecisions(Generated("examples/make_nfourbar.py", 4)), 12);
  EXPECT_EQ(ExpectSameDecisions(Generated("examples/make_chain.py", 12)), 0);
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

// The bodies' rotation matrices carry their rate R [w]x in closed form
// (Definition::rate), which the equation builder uses for d/dt instead of the
// chain rule through the orientation states. Both must give the same
// right-hand side: the four-bar (whose joint moduli are differentiated) built
// with the rates and with them removed, at a state off the start (momenta and
// quaternions perturbed, the quaternions no longer of unit norm).
TEST(DefinitionRate, ClosedFormRotationRatesAgreeWithTheChainRule) {
  for (const char* orientation : {"quaternion", "cardan"}) {
    SCOPED_TRACE(orientation);
    ModelSpec spec = ReadModelSpecFile(Generated("examples/make_chain.py", 4));
    if (std::string(orientation) == "cardan") {
      ModelSpec::Field f;
      f.values = {"cardan"};
      spec.multibody.settings["orientation"] = f;
    }
    ExpandMultibody(&spec);
    int with_rate = 0;
    ModelSpec without = spec;
    for (auto& d : without.definitions) with_rate += d.rate.has_value(), d.rate.reset();
    EXPECT_EQ(with_rate, 9 * 4) << "four moving bodies, nine entries each";
    CodegenOptions cg;
    cg.backend = Backend::kTape;
    std::vector<std::vector<double>> dx;
    std::vector<double> x;
    for (const ModelSpec* s : {&spec, &without}) {
      Model m = BuildModel(*s);
      CompiledModel cm(BuildEquations(m, AssignCausality(m)), cg);
      if (x.empty()) {
        x = cm.initial_state();
        for (size_t i = 0; i < x.size(); ++i) x[i] += 0.05 * std::sin(1.0 + 3.7 * i);
      }
      dx.emplace_back(x.size());
      ModelWorkspace(cm).CalcDerivatives(0, x.data(), dx.back().data());
    }
    double scale = 0, diff = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      scale = std::max(scale, std::fabs(dx[1][i]));
      diff = std::max(diff, std::fabs(dx[0][i] - dx[1][i]));
    }
    std::printf("%s: largest |dx| %.3g, closed form against chain rule %.2e\n", orientation, scale, diff);
    EXPECT_GT(scale, 0.1);
    EXPECT_LT(diff, 1e-10 * scale);
  }
}

}  // namespace
}  // namespace paynter
