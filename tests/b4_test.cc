// B4, the spatial arm, built from bodies and joints (examples/B4_spatial_arm.yaml),
// against an independent derivation in its three joint coordinates
// (tests/b4_reference.h), and its energy balance.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "b4_reference.h"
#include "test_util.h"

namespace paynter {
namespace {

// One run for the file: rtol = atol = 1e-11 over the benchmark's 5 s, with
// energy bookkeeping added to the example's outputs.
const testing::Run& B4() {
  static const testing::Run r = [] {
    ModelSpec spec = ReadModelSpecFile(testing::SourcePath("examples/B4_spatial_arm.yaml"));
    ExpandMultibody(&spec);
    spec.multibody.present = false;
    // Kinetic energy from the bodies' momenta, the spring's and gravity's
    // potential energy, the work of M.
    std::string T;
    for (const char* b : {"shaft", "arm", "slider"})
      for (const char* c : {"x", "y", "z"}) {
        T += fmt::format(" + p_{0}_m{1}^2/2 + p_{0}_J{1}^2/(2*I0)", b, c);
      }
    T.replace(0, 3, "");
    spec.outputs.push_back({"kinetic", "(" + T + ")/1", {}});
    spec.outputs.push_back({"potential", "K*(J3_s - b)^2/2 + 9.8*(m1*arm_z + m2*slider_z)", {}});
    spec.outputs.push_back({"work", "M*J1_angle", {}});
    spec.outputs.push_back({"axial", "J3_Fx*arm_R11 + J3_Fy*arm_R21 + J3_Fz*arm_R31", {}});
    return testing::SimulateModel(BuildModel(spec), 5.0, 1e-11, 1e-12, Method::kDopri5, 0.01);
  }();
  return r;
}

TEST(B4, MatchesTheJointCoordinateDerivation) {
  const auto& sol = B4().solution;
  const auto t = sol.Column("t");
  const auto ref = testing::SolveB4Reference(t, 1e-12, 1e-12);
  ASSERT_EQ(ref.size(), t.size());
  double dpos = 0, ds = 0, dsdot = 0, dforce = 0, fmax = 0;
  const auto X = sol.Column("X3"), Y = sol.Column("Y3"), Z = sol.Column("Z3"), s = sol.Column("s"),
             sd = sol.Column("sdot"), Fx = sol.Column("FJ3x"), Fy = sol.Column("FJ3y"), Fz = sol.Column("FJ3z"),
             th1 = sol.Column("theta1"), th2 = sol.Column("theta2");
  double dth = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    dpos = std::max({dpos, std::abs(X[i] - ref[i].X3), std::abs(Y[i] - ref[i].Y3), std::abs(Z[i] - ref[i].Z3)});
    ds = std::max(ds, std::abs(s[i] - ref[i].s));
    dsdot = std::max(dsdot, std::abs(sd[i] - ref[i].sdot));
    dforce = std::max({dforce, std::abs(Fx[i] - ref[i].FJ3x), std::abs(Fy[i] - ref[i].FJ3y),
                       std::abs(Fz[i] - ref[i].FJ3z)});
    fmax = std::max(fmax, std::hypot(ref[i].FJ3x, ref[i].FJ3y, ref[i].FJ3z));
    dth = std::max({dth, std::abs(th1[i] - ref[i].x.theta1), std::abs(th2[i] - ref[i].x.theta2)});
  }
  std::printf("B4 vs joint-coordinate reference over 5 s: position %.2e m, s %.2e m, sdot %.2e m/s, joint angles "
              "%.2e rad, FJ3 %.2e N (max |FJ3| %.1f N)\n",
              dpos, ds, dsdot, dth, dforce, fmax);
  EXPECT_LT(dpos, 1e-6);
  EXPECT_LT(ds, 1e-6);
  EXPECT_LT(dsdot, 1e-5);
  EXPECT_LT(dth, 1e-5);
  EXPECT_LT(dforce, 1e-5 * fmax);
}

// The benchmark's run as `paynter simulate` makes it (rtol 1e-6, atol 1e-9, 1001
// rows, lagrange-multipliers): the rows recorded at the output times, projected
// from the interpolated state with Jacobians that may come from the projection
// after a step, lie on the joints within the projection's tolerance, and agree
// with the joint-coordinate derivation within the integration's tolerance.
TEST(B4, OutputRowsAtTheBenchmarkToleranceLieOnTheJoints) {
  const std::string path = testing::SourcePath("examples/B4_spatial_arm.yaml");
  const Model m = LoadModel(path, {.method = ConstraintMethod::kLagrangeMultipliers});
  CompiledModel cm(BuildEquations(m, AssignCausality(m)));
  SolverOptions so;
  so.t_end = 5;
  ConstrainedOptions co;
  co.method = ConstraintMethod::kLagrangeMultipliers;
  ConstrainedReport rep;
  const Solution sol = SimulateConstrained(cm, so, co, &rep);
  const double tol = std::min(1e-10, 1e-3 * so.atol);  // the projection's (methods.cc)
  EXPECT_LE(rep.max_position_drift, tol);
  EXPECT_LE(rep.max_velocity_drift, tol);
  const auto t = sol.Column("t");
  ASSERT_EQ(t.size(), 1001u);
  const auto ref = testing::SolveB4Reference(t, 1e-12, 1e-12);
  const auto X = sol.Column("X3"), Y = sol.Column("Y3"), Z = sol.Column("Z3"), sd = sol.Column("sdot");
  double dpos = 0, dsdot = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    dpos = std::max({dpos, std::abs(X[i] - ref[i].X3), std::abs(Y[i] - ref[i].Y3), std::abs(Z[i] - ref[i].Z3)});
    dsdot = std::max(dsdot, std::abs(sd[i] - ref[i].sdot));
  }
  std::printf("B4 at rtol 1e-6: drift at the outputs %.2e (position), %.2e (velocity); vs the joint-coordinate "
              "reference: position %.2e m, sdot %.2e m/s\n",
              rep.max_position_drift, rep.max_velocity_drift, dpos, dsdot);
  EXPECT_LT(dpos, 2e-5);  // 3.9e-6 and 5.6e-6 when written
  EXPECT_LT(dsdot, 3e-5);
}

TEST(B4, EnergyBalance) {
  // Work of M = kinetic + spring + gravity energy (changes from t = 0).
  const auto& sol = B4().solution;
  const auto T = sol.Column("kinetic"), V = sol.Column("potential"), W = sol.Column("work");
  double worst = 0, scale = 0;
  for (size_t i = 0; i < T.size(); ++i) {
    const double balance = W[i] - (T[i] - T[0]) - (V[i] - V[0]);
    scale = std::max({scale, std::abs(T[i]), std::abs(V[i] - V[0])});
    worst = std::max(worst, std::abs(balance));
  }
  std::printf("B4 energy balance: max |W_M - dT - dV| = %.2e J (energy scale %.2f J, relative %.2e)\n", worst, scale,
              worst / scale);
  EXPECT_LT(worst, 1e-6 * scale);
}

TEST(B4, PrismaticJointForceHasNoAxialComponent) {
  // J3's constraint force is perpendicular to the slide (the spring is apart).
  const auto axial = B4().solution.Column("axial"), Fx = B4().solution.Column("FJ3x");
  double worst = 0;
  for (double a : axial) worst = std::max(worst, std::abs(a));
  std::printf("B4 J3 axial constraint force: max %.2e N\n", worst);
  EXPECT_LT(worst, 1e-8);
}

TEST(B4, HasNoDerivativeCausalityAndOneBlockOfConstraintForces) {
  const auto& eqs = B4().equations;
  ASSERT_EQ(eqs.blocks.size(), 1u);
  EXPECT_TRUE(eqs.blocks[0].linear);
  // 5 + 5 + 5 constraint rows (three joints with one free direction each).
  EXPECT_EQ(eqs.multipliers.size(), 15u);
}

}  // namespace
}  // namespace paynter
