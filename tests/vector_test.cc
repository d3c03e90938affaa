// Vector bond graphs: the vector-to-scalar transformation, its written form
// (`paynter expand`), a vector rigid body against the multibody library, and
// the causality constraint C2 of seed 003.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "test_util.h"

namespace paynter {
namespace {

double MaxDiff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

TEST(Vector, ExpandedScalarModelSimulatesAlike) {
  const std::string path = testing::SourcePath("examples/rigid_body_vector.yaml");
  auto vec = testing::SimulateFile("examples/rigid_body_vector.yaml", 10.0, 1e-11, 1e-12);
  ModelSpec spec = ReadModelSpecFile(path);
  ExpandVectorBonds(&spec);
  const std::string scalar_yaml = ModelSpecToYaml(spec);
  EXPECT_EQ(scalar_yaml.find("dim:"), std::string::npos);
  // Scalar bonds keep the name of the vector bond they came from.
  EXPECT_NE(scalar_yaml.find("name: bJ_x"), std::string::npos) << scalar_yaml;
  auto scalar = testing::SimulateYaml(scalar_yaml, 10.0, 1e-11, 1e-12);
  for (const char* c : {"wx", "wy", "wz", "kinetic"})
    EXPECT_LT(MaxDiff(vec.solution.Column(c), scalar.solution.Column(c)), 1e-9) << c;
}

TEST(Vector, WorkOfTheForceAtPEqualsTheKineticEnergyGained) {
  auto r = testing::SimulateFile("examples/rigid_body_vector.yaml", 10.0, 1e-11, 1e-12);
  const auto T = r.solution.Column("kinetic"), W = r.solution.Column("work");
  double worst = 0;
  for (size_t i = 0; i < T.size(); ++i) worst = std::max(worst, std::abs(T[i] - T[0] - W[i]));
  std::printf("vector rigid body: max |T - T0 - W| = %.2e J (T(10) = %.4f J)\n", worst, T.back());
  EXPECT_LT(worst, 1e-9 * T.back());
}

TEST(Vector, TorqueFreeVectorBodyMatchesTheMultibodyBody) {
  // The same body with no force, written as a vector bond graph and as a
  // multibody body.
  std::string vec = testing::ReadFileBytes(testing::SourcePath("examples/rigid_body_vector.yaml"));
  vec.replace(vec.find("effort: [0, 0.3, 0]"), std::string("effort: [0, 0.3, 0]").size(), "effort: [0, 0, 0]");
  auto a = testing::SimulateYaml(vec, 20.0, 1e-11, 1e-12);
  auto b = testing::SimulateYaml(R"(
parameters: {Ix: 1, Iy: 2, Iz: 3}
multibody:
  bodies:
    - {name: body, mass: 1, inertia: [Ix, Iy, Iz], angular_velocity: [0.1, 1, 0.1]}
outputs:
  wx: f_body_wx
  wy: f_body_wy
  wz: f_body_wz
)", 20.0, 1e-11, 1e-12);
  for (const char* c : {"wx", "wy", "wz"}) {
    const double d = MaxDiff(a.solution.Column(c), b.solution.Column(c));
    std::printf("vector vs multibody body, %s: %.2e rad/s\n", c, d);
    EXPECT_LT(d, 1e-9) << c;
  }
}

TEST(Vector, ImposingTheVelocityOfPBreaksConstraintC2) {
  // A flow source on P would make the cross-product transformer invert a
  // singular matrix: its causality is fixed (flow in on w, flow out on P).
  std::string vec = testing::ReadFileBytes(testing::SourcePath("examples/rigid_body_vector.yaml"));
  vec.replace(vec.find("{name: push, kind: Se, effort: [0, 0.3, 0]}"),
              std::string("{name: push, kind: Se, effort: [0, 0.3, 0]}").size(),
              "{name: push, kind: Sf, flow: [0, 0.3, 0]}");
  vec.replace(vec.find("0.3*f_P_y"), std::string("0.3*f_P_y").size(), "e_push_y");
  Model m = LoadModelFromString(vec, "c2.yaml");
  CausalGraph g = AssignCausality(m);
  ASSERT_FALSE(g.conflicts.empty());
  std::string all;
  for (const auto& c : g.conflicts) all += c.message + "\n";
  EXPECT_NE(all.find("lever"), std::string::npos) << all;
  EXPECT_TRUE(all.find("C2") != std::string::npos || all.find("push") != std::string::npos) << all;
}

TEST(Vector, BadVectorModelsGiveLocatedErrors) {
  auto error = [](const std::string& yaml) {
    try {
      LoadModelFromString(yaml, "v.yaml");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string mixed = error(R"(
elements:
  - {name: w, kind: "1"}
  - {name: J, kind: I, inertance: [1, 2, 3]}
  - {name: R, kind: R, resistance: 1}
bonds:
  - {from: w, to: J, dim: 3}
  - {from: w, to: R}
)");
  EXPECT_NE(mixed.find("v.yaml:8:"), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("a scalar bond joins the 3-dimensional element 'w'"), std::string::npos) << mixed;
  const std::string coupled = error(R"(
elements:
  - {name: w, kind: "1"}
  - {name: J, kind: I, inertance: [[1, 0.1, 0], [0.2, 2, 0], [0, 0, 3]]}
  - {name: T, kind: Se, effort: [1, 0, 0]}
bonds:
  - {from: w, to: J, dim: 3}
  - {from: T, to: w, dim: 3}
)");
  EXPECT_NE(coupled.find("not symmetric"), std::string::npos) << coupled;
  EXPECT_NE(coupled.find("element 'J'"), std::string::npos) << coupled;
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

TEST(Vector, CoupledInertiaFieldMatchesItsInverseOnAConstantTorque) {
  // p = M w with a full, constant M; under a constant torque T from rest,
  // p = T t, so w = M^-1 T t: check against the inverse computed by hand.
  auto r = testing::SimulateYaml(R"(
elements:
  - {name: w, kind: "1"}
  - {name: J, kind: I, inertance: [[2, 0.5, 0], [0.5, 1, 0.2], [0, 0.2, 3]]}
  - {name: T, kind: Se, effort: [1, -1, 0.5]}
bonds:
  - {from: w, to: J, dim: 3}
  - {from: T, to: w, dim: 3}
outputs: {wx: f_w_x, wy: f_w_y, wz: f_w_z}
)", 2.0, 1e-12, 1e-14);
  // M^-1 by cofactors: det = 2*(3 - 0.04) - 0.5*(1.5) = 5.92 - 0.75 = 5.17.
  const double det = 5.17;
  const double Minv[3][3] = {{(1 * 3 - 0.04) / det, -(0.5 * 3 - 0) / det, (0.5 * 0.2 - 0) / det},
                             {-(0.5 * 3 - 0) / det, (2 * 3 - 0) / det, -(2 * 0.2 - 0) / det},
                             {(0.5 * 0.2 - 0) / det, -(2 * 0.2 - 0) / det, (2 * 1 - 0.25) / det}};
  const double T[3] = {1, -1, 0.5};
  const auto t = r.solution.Column("t");
  const std::vector<double> w[3] = {r.solution.Column("wx"), r.solution.Column("wy"), r.solution.Column("wz")};
  double worst = 0;
  for (size_t k = 0; k < t.size(); ++k)
    for (int i = 0; i < 3; ++i) {
      const double expect = (Minv[i][0] * T[0] + Minv[i][1] * T[1] + Minv[i][2] * T[2]) * t[k];
      worst = std::max(worst, std::abs(w[i][k] - expect));
    }
  std::printf("coupled inertia field: max |w - M^-1 T t| = %.2e\n", worst);
  EXPECT_LT(worst, 1e-10);
}

}  // namespace
}  // namespace paynter
