// Loads of the multibody library: a point-to-point spring between two free
// bodies conserves energy and momentum; a damper dissipates.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace paynter {
namespace {

const char* kTwoBodies = R"(
parameters: {K: 50, c: 0}
multibody:
  bodies:
    - {name: a, mass: 1, inertia: [0.01, 0.02, 0.03], angular_velocity: [0.3, -0.2, 0.5]}
    - {name: b, mass: 2, inertia: [0.02, 0.01, 0.03], position: [1, 0.2, 0], velocity: [0, 0.5, 0.1]}
  loads:
    - {name: link, type: spring, body1: a, point1: [0.1, 0, 0], body2: b, point2: [0, 0.1, 0.05], stiffness: K, rest: 0.8, damping: c}
outputs:
  energy: p_a_mx^2/2 + p_a_my^2/2 + p_a_mz^2/2 + (p_b_mx^2 + p_b_my^2 + p_b_mz^2)/4 + p_a_Jx^2/0.02 + p_a_Jy^2/0.04 + p_a_Jz^2/0.06 + p_b_Jx^2/0.04 + p_b_Jy^2/0.02 + p_b_Jz^2/0.06 + K*(link_length - 0.8)^2/2
  px: p_a_mx + p_b_mx
  py: p_a_my + p_b_my
  pz: p_a_mz + p_b_mz
  L: link_length
)";

double Drift(const std::vector<double>& v) {
  double d = 0;
  for (double x : v) d = std::max(d, std::abs(x - v.front()));
  return d;
}

TEST(MultibodyLoads, SpringBetweenFreeBodiesConservesEnergyAndMomentum) {
  auto r = testing::SimulateYaml(kTwoBodies, 10.0, 1e-11, 1e-12);
  const auto e = r.solution.Column("energy"), L = r.solution.Column("L");
  const double de = Drift(e) / e.front();
  std::printf("two bodies and a spring: energy drift %.2e relative, momentum drift %.2e %.2e %.2e\n", de,
              Drift(r.solution.Column("px")), Drift(r.solution.Column("py")), Drift(r.solution.Column("pz")));
  EXPECT_LT(de, 1e-9);
  for (const char* c : {"px", "py", "pz"}) EXPECT_LT(Drift(r.solution.Column(c)), 1e-12) << c;
  // The spring works: its length oscillates.
  EXPECT_GT(*std::max_element(L.begin(), L.end()) - *std::min_element(L.begin(), L.end()), 0.1);
}

TEST(MultibodyLoads, DamperDissipates) {
  std::string yaml = kTwoBodies;
  yaml.replace(yaml.find("c: 0}"), 5, "c: 2}");
  auto r = testing::SimulateYaml(yaml, 10.0, 1e-10, 1e-12);
  const auto e = r.solution.Column("energy");
  for (size_t i = 1; i < e.size(); ++i) EXPECT_LE(e[i], e[i - 1] + 1e-9);
  EXPECT_LT(e.back(), 0.9 * e.front());
  EXPECT_LT(Drift(r.solution.Column("px")), 1e-12);
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

TEST(MultibodyBodies, FullInertiaTensorConservesWorldAngularMomentumAndEnergy) {
  // J = [[2, .5, 0], [.5, 1, .2], [0, .2, 3]], w0 = (0.3, -1, 0.5): h0 = J w0 =
  // (0.1, -0.75, 1.3) in the world (R = I at t = 0), T = w0 . h0 / 2 = 0.715.
  auto r = testing::SimulateYaml(R"(
multibody:
  bodies:
    - {name: b, mass: 1, inertia: [2, 1, 3, 0.5, 0, 0.2], angular_velocity: [0.3, -1, 0.5]}
outputs:
  hx: b_R11*b_hx + b_R12*b_hy + b_R13*b_hz
  hy: b_R21*b_hx + b_R22*b_hy + b_R23*b_hz
  hz: b_R31*b_hx + b_R32*b_hy + b_R33*b_hz
  T: (f_b_wx*b_hx + f_b_wy*b_hy + f_b_wz*b_hz)/2
)", 50.0, 1e-12, 1e-13);
  const double h0[3] = {0.1, -0.75, 1.3};
  const char* cols[3] = {"hx", "hy", "hz"};
  double worst = 0;
  for (int i = 0; i < 3; ++i)
    for (double v : r.solution.Column(cols[i])) worst = std::max(worst, std::abs(v - h0[i]));
  double dT = 0;
  for (double v : r.solution.Column("T")) dT = std::max(dT, std::abs(v - 0.715));
  std::printf("full inertia tensor over 50 s: |h_W - h0| <= %.2e, |T - T0| <= %.2e\n", worst, dT);
  EXPECT_LT(worst, 1e-9 * 1.5);
  EXPECT_LT(dT, 1e-9 * 0.715);
}

}  // namespace
}  // namespace paynter
