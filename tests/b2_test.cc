// B1 and B2 built from bodies and joints (examples/B1_pendulum_3d.yaml,
// examples/B2_slider_crank_isostatic.yaml) against independent derivations in
// one coordinate: the pendulum's equation written here, the slider crank's in
// tests/b2_reference.h. The hyperstatic slider crank is simulated by every
// method in tests/constrained_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "b2_reference.h"
#include "test_util.h"

namespace paynter {
namespace {

constexpr double kTEnd = 10.0;

// B1 in its angle: (I + M L^2/4) gddot = -B gdot - M g (L/2) cos g, by RK4
// with steps of 1e-5 between the output times.
struct B1Point {
  double gamma, gammadot;
};
std::vector<B1Point> B1Reference(const std::vector<double>& times) {
  const double L = 1, M = 1, I = 0.083, B = 10, g = 9.81, JA = I + M * L * L / 4;
  auto f = [&](B1Point x) { return B1Point{x.gammadot, (-B * x.gammadot - M * g * L / 2 * std::cos(x.gamma)) / JA}; };
  B1Point x{0, 0};
  double t = 0;
  std::vector<B1Point> out;
  for (double tk : times) {
    if (tk > t) {
      const long n = static_cast<long>(std::ceil((tk - t) / 1e-5 - 1e-9));
      const double h = (tk - t) / static_cast<double>(n);
      for (long i = 0; i < n; ++i) {
        const B1Point k1 = f(x), k2 = f({x.gamma + h / 2 * k1.gamma, x.gammadot + h / 2 * k1.gammadot}),
                      k3 = f({x.gamma + h / 2 * k2.gamma, x.gammadot + h / 2 * k2.gammadot}),
                      k4 = f({x.gamma + h * k3.gamma, x.gammadot + h * k3.gammadot});
        x.gamma += h / 6 * (k1.gamma + 2 * k2.gamma + 2 * k3.gamma + k4.gamma);
        x.gammadot += h / 6 * (k1.gammadot + 2 * k2.gammadot + 2 * k3.gammadot + k4.gammadot);
      }
      t = tk;
    }
    out.push_back(x);
  }
  return out;
}

TEST(B1Bodies, MatchesTheOneCoordinateEquation) {
  const auto r = testing::SimulateFile("examples/B1_pendulum_3d.yaml", kTEnd, 1e-10, 1e-12);
  const auto& sol = r.solution;
  ASSERT_GE(sol.columns.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(sol.columns.begin(), sol.columns.begin() + 5),
            (std::vector<std::string>{"t", "gamma", "gammadot", "xG", "yG"}));
  const auto t = sol.Column("t"), g = sol.Column("gamma"), gd = sol.Column("gammadot"), x = sol.Column("xG"),
             y = sol.Column("yG");
  const auto ref = B1Reference(t);
  double dq = 0, dv = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    dq = std::max({dq, std::fabs(g[i] - ref[i].gamma), std::fabs(x[i] - 0.5 * std::cos(ref[i].gamma)),
                   std::fabs(y[i] - 0.5 * std::sin(ref[i].gamma))});
    dv = std::max(dv, std::fabs(gd[i] - ref[i].gammadot));
  }
  std::printf("B1 from a body and a revolute joint vs the pendulum equation, 0..10 s: max |d angle or position| "
              "%.2e, |d gammadot| %.2e\n",
              dq, dv);
  EXPECT_LT(dq, 1e-9);
  EXPECT_LT(dv, 1e-8);
}

TEST(B2Bodies, IsostaticMatchesTheMinimalCoordinateReference) {
  const auto r = testing::SimulateFile("examples/B2_slider_crank_isostatic.yaml", kTEnd, 1e-10, 1e-12);
  const auto& sol = r.solution;
  const std::vector<std::string> first{"t",        "gamma",    "gammadot", "rod_angle", "x_piston",
                                       "v_piston", "xG1",      "yG1",      "xG2",       "yG2"};
  ASSERT_GE(sol.columns.size(), first.size());
  EXPECT_EQ(std::vector<std::string>(sol.columns.begin(), sol.columns.begin() + first.size()), first);
  const auto t = sol.Column("t");
  const auto ref = testing::SolveB2Reference(t, 1e-4);
  auto col = [&](const char* n) { return sol.Column(n); };
  const std::vector<std::pair<std::vector<double>, double testing::B2Sample::*>> motion = {
      {col("gamma"), &testing::B2Sample::gamma},       {col("gammadot"), &testing::B2Sample::gammadot},
      {col("rod_angle"), &testing::B2Sample::rod_angle}, {col("x_piston"), &testing::B2Sample::x_piston},
      {col("v_piston"), &testing::B2Sample::v_piston},   {col("xG1"), &testing::B2Sample::xG1},
      {col("yG1"), &testing::B2Sample::yG1},             {col("xG2"), &testing::B2Sample::xG2},
      {col("yG2"), &testing::B2Sample::yG2}};
  const std::vector<std::pair<std::vector<double>, double testing::B2Reactions::*>> forces = {
      {col("FOx"), &testing::B2Reactions::FOx}, {col("FOy"), &testing::B2Reactions::FOy},
      {col("FAx"), &testing::B2Reactions::FAx}, {col("FAy"), &testing::B2Reactions::FAy},
      {col("FBx"), &testing::B2Reactions::FBx}, {col("FBy"), &testing::B2Reactions::FBy},
      {col("FPy"), &testing::B2Reactions::FPy}};
  double dm = 0, df = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    for (const auto& [c, m] : motion) dm = std::max(dm, std::fabs(c[i] - ref[i].*m));
    for (const auto& [c, m] : forces) df = std::max(df, std::fabs(c[i] - ref[i].F.*m));
  }
  std::printf("B2 isostatic from bodies and joints vs the minimal-coordinate reference, 0..10 s: max |d motion| "
              "%.2e, |d joint force| %.2e N\n",
              dm, df);
  EXPECT_LT(dm, 1e-7);
  EXPECT_LT(df, 1e-6);
  // 17 constraint rows, none redundant: one linear block of 17 unknown forces.
  EXPECT_EQ(r.equations.multipliers.size(), 17u);
}

TEST(B2Bodies, HyperstaticLoadsAndBuildsItsEquations) {
  // What `paynter check` does (its simulation: tests/constrained_test.cc).
  EXPECT_NO_THROW({
    const Model m = LoadModel(testing::SourcePath("examples/B2_slider_crank_hyperstatic.yaml"));
    BuildEquations(m, AssignCausality(m));
  });
}

}  // namespace
}  // namespace paynter
