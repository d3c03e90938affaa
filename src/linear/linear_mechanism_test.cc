// Linear analysis of mechanisms written under `multibody:` (bodies with
// quaternions, joints with constraint forces), in independent coordinates,
// against closed forms derived by hand from the kinetic and potential
// energies: the 3D B1 pendulum, a double pendulum, the four-bar linkage and
// the slider crank B2 (isostatic and hyperstatic, an independent pair);
// a Bode diagram against the pendulum's transfer function; the errors of an
// operating point off the constraints and of a singular configuration.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "paynter/paynter.h"
#include "test_paths.h"

namespace paynter {
namespace {

struct Prepared {
  EquationSystem eqs;
  std::vector<std::string> inputs, params;
};

Prepared Prepare(const Model& loaded) {
  Prepared s;
  const Model model = WithInputs(loaded, &s.inputs, &s.params);
  s.eqs = BuildEquations(model, AssignCausality(model));
  return s;
}

std::string Example(const std::string& name) { return std::string(PAYNTER_SOURCE_DIR) + "/examples/" + name; }

Model LoadWith(const std::string& path, const std::map<std::string, double>& overrides) {
  return LoadModel(path, {.overrides = overrides});
}

std::string WriteModel(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

int Index(const std::vector<std::string>& names, const std::string& name) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  ADD_FAILURE() << "no " << name;
  return 0;
}

// The steady state from the model's start with the states `given` held
// while it is put on the constraints, then the linear model there.
LinearModel AtSteadyState(const Prepared& s, const std::map<std::string, double>& given) {
  std::vector<double> x = s.eqs.initial_state;
  std::vector<std::string> held;
  for (const auto& [name, value] : given) {
    x[Index(s.eqs.state_names, name)] = value;
    held.push_back(name);
  }
  x = ProjectOntoConstraints(s.eqs, 0, x, held);
  x = SteadyState(s.eqs, s.params, 0, x);
  return Linearize(s.eqs, s.inputs, s.params, 0, x);
}

// B1 in 3D: one body (6 momenta, position and quaternion) and a revolute
// joint (5 constraint rows, the coordinate pivot_angle): 14 states, one
// degree of freedom. About the hanging equilibrium JA g'' + B g' + (M g L/2) g
// = 0, JA = I0 + M (L/2)^2 the inertia about the pivot (BENCHMARKS.md).
TEST(LinearizeMechanism, PendulumB1In3dAboutItsHangingEquilibrium) {
  const double L = 1, M = 1, I0 = 0.083, B = 10, g = 9.81;
  const double JA = I0 + M * L * L / 4, K = M * g * L / 2;
  for (const double damping : {0.0, B}) {
    const Prepared s = Prepare(LoadWith(Example("B1_pendulum_3d.yaml"), {{"B", damping}}));
    ASSERT_TRUE(HasConstraintManifold(s.eqs));
    ASSERT_EQ(s.eqs.states.size(), 14u);
    const LinearModel lin = AtSteadyState(s, {{"pivot_angle", -1.2}});
    // Newton found the bar hanging: gamma = -pi/2, G below the pivot.
    EXPECT_NEAR(lin.all_x[Index(lin.all_states, "pivot_angle")], -M_PI / 2, 1e-9);
    EXPECT_NEAR(lin.all_x[Index(lin.all_states, "bar_y")], -L / 2, 1e-9);
    EXPECT_NEAR(lin.all_x[Index(lin.all_states, "bar_x")], 0, 1e-9);
    // Two states, the joint angle among them; the other twelve dependent.
    ASSERT_EQ(lin.states.size(), 2u);
    EXPECT_EQ(lin.dependent.size(), 12u);
    EXPECT_NE(std::find(lin.states.begin(), lin.states.end(), "pivot_angle"), lin.states.end());
    const auto modes = Modes(lin.A);
    ASSERT_EQ(modes.size(), 2u);
    // Sum and product of the eigenvalues: -B/JA and K/JA.
    EXPECT_NEAR((modes[0].lambda + modes[1].lambda).real(), -damping / JA, 1e-9);
    EXPECT_NEAR(std::abs(modes[0].lambda * modes[1].lambda - K / JA), 0, 1e-9);
    if (damping == 0)
      for (const auto& md : modes) {
        EXPECT_NEAR(md.lambda.real(), 0, 1e-9);
        EXPECT_NEAR(std::fabs(md.lambda.imag()), std::sqrt(K / JA), 1e-9);  // 3.83793 rad/s
      }
  }
}

// A state that is a subnormal double (1e-310, as a velocity settling to
// rest can leave) is a number like any other: the derivatives are evaluated
// with it as with 0, and the linear model is the same.
TEST(LinearizeMechanism, SubnormalStateIsEvaluatedAsANumber) {
  const Prepared s = Prepare(LoadWith(Example("B1_pendulum_3d.yaml"), {}));
  const LinearModel at_rest = AtSteadyState(s, {{"pivot_angle", -1.2}});
  std::vector<double> x = at_rest.all_x;
  std::vector<int> zero;  // the momenta that are (about) zero at rest
  for (size_t i = 0; i < x.size(); ++i)
    if (std::fabs(x[i]) < 1e-12 && s.eqs.state_names[i].rfind("p_", 0) == 0) zero.push_back(static_cast<int>(i));
  ASSERT_EQ(zero.size(), 6u);
  for (int i : zero) x[i] = 0;
  const LinearModel exact_rest = Linearize(s.eqs, s.inputs, s.params, 0, x);
  for (int i : zero) x[i] = 1e-310;
  ASSERT_EQ(std::fpclassify(x[zero[0]]), FP_SUBNORMAL);
  const LinearModel lin = Linearize(s.eqs, s.inputs, s.params, 0, x);
  ASSERT_EQ(lin.A.data.size(), exact_rest.A.data.size());
  for (size_t k = 0; k < lin.A.data.size(); ++k) EXPECT_EQ(lin.A.data[k], exact_rest.A.data[k]) << k;
}

// Two uniform bars in a vertical plane, each hanging from a revolute joint
// (the first from the ground, the second from the first's end).
const char* kDoublePendulum = R"(
name: double_pendulum
parameters:
  L1: 1
  L2: 0.6
  m1: 1
  m2: 0.5
  I1: m1*L1^2/12
  I2: m2*L2^2/12
  g: 9.81
multibody:
  gravity: [0, -g, 0]
  bodies:
    - {name: upper, mass: m1, inertia: [I1, I1, I1], position: [L1/2, 0, 0]}
    - {name: lower, mass: m2, inertia: [I2, I2, I2], position: [L1 + L2/2, 0, 0]}
  joints:
    - {name: shoulder, type: revolute, body1: ground, body2: upper, axis: [0, 0, 1],
       point1: [0, 0, 0], point2: [-L1/2, 0, 0]}
    - {name: elbow, type: revolute, body1: upper, body2: lower, axis: [0, 0, 1],
       point1: [L1/2, 0, 0], point2: [-L2/2, 0, 0]}
)";

// With the absolute angles t1, t2 of the bars from the downward vertical,
// T = 1/2 (J1 + m2 L1^2) t1'^2 + m2 L1 c2 cos(t1 - t2) t1' t2' + 1/2 J2 t2'^2
// (J1 = I1 + m1 c1^2, J2 = I2 + m2 c2^2 about the joints, c the distances of
// the centres of mass from the joints) and U = -g ((m1 c1 + m2 L1) cos t1 +
// m2 c2 cos t2). About t = 0: M = [[J1 + m2 L1^2, m2 L1 c2], [m2 L1 c2, J2]],
// K = diag(g (m1 c1 + m2 L1), g m2 c2), and det(K - w^2 M) = 0 gives the two
// frequencies: det(M) w^4 - (K11 M22 + K22 M11) w^2 + K11 K22 = 0.
TEST(LinearizeMechanism, DoublePendulumFrequenciesFromTheTwoByTwoEigenproblem) {
  const double L1 = 1, L2 = 0.6, m1 = 1, m2 = 0.5, g = 9.81;
  const double c1 = L1 / 2, c2 = L2 / 2, I1 = m1 * L1 * L1 / 12, I2 = m2 * L2 * L2 / 12;
  const double M11 = I1 + m1 * c1 * c1 + m2 * L1 * L1, M12 = m2 * L1 * c2, M22 = I2 + m2 * c2 * c2;
  const double K11 = g * (m1 * c1 + m2 * L1), K22 = g * m2 * c2;
  const double a = M11 * M22 - M12 * M12, b = -(K11 * M22 + K22 * M11), c = K11 * K22;
  const double w2lo = (-b - std::sqrt(b * b - 4 * a * c)) / (2 * a), w2hi = (-b + std::sqrt(b * b - 4 * a * c)) / (2 * a);
  const Prepared s = Prepare(LoadModel(WriteModel("double_pendulum.yaml", kDoublePendulum)));
  // Both bars start along +x (t = pi/2): the shoulder and the elbow turned
  // near the hanging position, the bodies moved onto the joints, then Newton.
  const LinearModel lin = AtSteadyState(s, {{"shoulder_angle", -1.4}, {"elbow_angle", 0.2}});
  EXPECT_NEAR(lin.all_x[Index(lin.all_states, "shoulder_angle")], -M_PI / 2, 1e-9);
  EXPECT_NEAR(lin.all_x[Index(lin.all_states, "elbow_angle")], 0, 1e-9);
  ASSERT_EQ(lin.states.size(), 4u);  // 2 x 2 degrees of freedom, of 28 states
  EXPECT_EQ(lin.all_states.size(), 28u);
  const auto modes = Modes(lin.A);
  ASSERT_EQ(modes.size(), 4u);
  for (const auto& md : modes) EXPECT_NEAR(md.lambda.real(), 0, 1e-9);
  EXPECT_NEAR(modes[0].wn, std::sqrt(w2lo), 1e-9);
  EXPECT_NEAR(modes[1].wn, std::sqrt(w2lo), 1e-9);
  EXPECT_NEAR(modes[2].wn, std::sqrt(w2hi), 1e-9);
  EXPECT_NEAR(modes[3].wn, std::sqrt(w2hi), 1e-9);
}

// The four-bar of examples/fourbar.yaml (closed loop, 3 redundant rows in 3D)
// about its stable equilibrium under gravity. One degree of freedom, the
// crank angle t: from the loop closure (circles of radius b about A and c
// about D, branch +1) B(t), the coupler and rocker angles t3, t4 and their
// rates per unit crank rate, w3 = a sin(t4 - t)/(b sin(t3 - t4)) and
// w4 = a sin(t - t3)/(c sin(t4 - t3)). The kinetic energy 1/2 J(t) t'^2 with
// J = sum of m |v_G|^2 + I w^2 per unit crank rate (the rods' centres at
// their middles, v_A = a (-sin t, cos t), v_B = c w4 (-sin t4, cos t4)); the
// potential U = g (ma yA/2 + mb (yA + yB)/2 + mc yB/2), whose derivative
// U'(t) = g (ma a cos t/2 + mb (a cos t + c w4 cos t4)/2 + mc c w4 cos t4/2)
// is closed; the equilibrium is U' = 0 (Newton), the stiffness U'' its
// central difference (step 1e-5: error ~1e-10). Then w^2 = U''/J.
struct FourBar {
  double a = 0.2, b = 0.6, c = 0.4, d = 0.5, rho = 2, g = 9.81;
  double ma = rho * a, mb = rho * b, mc = rho * c;
  double Ia = ma * a * a / 12, Ib = mb * b * b / 12, Ic = mc * c * c / 12;
  void Angles(double t, double* t3, double* t4) const {
    const double xA = a * std::cos(t), yA = a * std::sin(t), Dx = d - xA, Dy = -yA, e = std::hypot(Dx, Dy);
    const double u = (b * b - c * c + e * e) / (2 * e), h = std::sqrt(b * b - u * u);
    const double xB = xA + u * Dx / e - h * Dy / e, yB = yA + u * Dy / e + h * Dx / e;
    *t3 = std::atan2(yB - yA, xB - xA);
    *t4 = std::atan2(yB, xB - d);
  }
  double Potential1(double t) const {  // U'(t)
    double t3, t4;
    Angles(t, &t3, &t4);
    const double w4 = a * std::sin(t - t3) / (c * std::sin(t4 - t3));
    const double dyA = a * std::cos(t), dyB = c * w4 * std::cos(t4);
    return g * (ma * dyA / 2 + mb * (dyA + dyB) / 2 + mc * dyB / 2);
  }
  double Inertia(double t) const {  // J(t)
    double t3, t4;
    Angles(t, &t3, &t4);
    const double w3 = a * std::sin(t4 - t) / (b * std::sin(t3 - t4)), w4 = a * std::sin(t - t3) / (c * std::sin(t4 - t3));
    const double vAx = -a * std::sin(t), vAy = a * std::cos(t), vBx = -c * w4 * std::sin(t4), vBy = c * w4 * std::cos(t4);
    return ma * (vAx * vAx + vAy * vAy) / 4 + Ia + mb * ((vAx + vBx) * (vAx + vBx) + (vAy + vBy) * (vAy + vBy)) / 4 +
           Ib * w3 * w3 + mc * (vBx * vBx + vBy * vBy) / 4 + Ic * w4 * w4;
  }
  double Stiffness(double t) const { return (Potential1(t + 1e-5) - Potential1(t - 1e-5)) / 2e-5; }
};

TEST(LinearizeMechanism, FourBarFrequencyFromItsEnergies) {
  const FourBar fb;
  double t = -1.8;
  for (int i = 0; i < 50; ++i) t -= fb.Potential1(t) / fb.Stiffness(t);
  ASSERT_LT(std::fabs(fb.Potential1(t)), 1e-12);
  const double w2 = fb.Stiffness(t) / fb.Inertia(t);
  ASSERT_GT(w2, 0);  // a stable equilibrium
  // The example starts at crank angle th2 with rate w0: at rest near it.
  const Prepared s = Prepare(LoadWith(Example("fourbar.yaml"), {{"w0", 0}, {"th2", -1.7}}));
  const LinearModel lin = AtSteadyState(s, {});
  const int crank = Index(lin.outputs, "crank_angle");
  EXPECT_NEAR(lin.y[crank], t, 1e-8);
  ASSERT_EQ(lin.states.size(), 2u);  // of 43 states
  EXPECT_EQ(lin.all_states.size(), 43u);
  const auto modes = Modes(lin.A);
  for (const auto& md : modes) {
    EXPECT_NEAR(md.lambda.real(), 0, 1e-8);
    EXPECT_NEAR(std::fabs(md.lambda.imag()), std::sqrt(w2), 1e-7 * std::sqrt(w2));  // 9.35487 rad/s
  }
}

// B2 in its two joint sets (the hyperstatic one has 3 redundant rows, whose
// constraint forces are undetermined) without the drive: the slider crank
// settles under gravity, and both give the same two eigenvalues.
TEST(LinearizeMechanism, SliderCrankIsostaticAndHyperstaticAgree) {
  std::vector<std::complex<double>> got[2];
  int k = 0;
  for (const char* file : {"B2_slider_crank_isostatic.yaml", "B2_slider_crank_hyperstatic.yaml"}) {
    const Prepared s = Prepare(LoadWith(Example(file), {{"tau", 0}}));
    const LinearModel lin = AtSteadyState(s, {{"O_angle", -1}});
    ASSERT_EQ(lin.states.size(), 2u);
    for (const auto& md : Modes(lin.A)) got[k].push_back(md.lambda);
    ++k;
  }
  ASSERT_EQ(got[0].size(), 2u);
  ASSERT_EQ(got[1].size(), 2u);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(std::abs(got[0][i] - got[1][i]), 0, 1e-8);
  EXPECT_GT(std::fabs(got[0][0].imag()), 0.1);  // a damped oscillation, not a drift
}

// B1 in 3D with an input torque on the joint, bonded to the joint's rate
// junction: gamma / torque = 1 / (JA s^2 + B s + M g L/2) at the hanging
// equilibrium.
TEST(LinearizeMechanism, PendulumBodeMatchesItsTransferFunction) {
  const double L = 1, M = 1, I0 = 0.083, B = 10, g = 9.81;
  const double JA = I0 + M * L * L / 4, K = M * g * L / 2;
  std::ifstream in(Example("B1_pendulum_3d.yaml"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text = text.substr(0, text.find("\noutputs:"));
  text += R"(
elements:
  - {name: torque, kind: Se, effort: 0, input: true}
bonds:
  - [torque, pivot_angledot]
outputs:
  gamma: pivot_angle
)";
  const Prepared s = Prepare(LoadModel(WriteModel("b1_input.yaml", text)));
  ASSERT_EQ(s.inputs, std::vector<std::string>{"torque"});
  const LinearModel lin = AtSteadyState(s, {{"pivot_angle", -1.2}});
  for (double w : {0.3, 3.8, 40.0}) {
    const std::complex<double> h = 1.0 / std::complex<double>(K - JA * w * w, B * w);
    EXPECT_NEAR(std::abs(FrequencyResponse(lin, 0, 0, w) - h), 0, 1e-9 * std::abs(h)) << w;
  }
  for (const auto& pt : Bode(lin, 0, 0, 0.1, 100, 7)) {
    const std::complex<double> h = 1.0 / std::complex<double>(K - JA * pt.w * pt.w, B * pt.w);
    EXPECT_NEAR(pt.magnitude_db, 20 * std::log10(std::abs(h)), 1e-8);
    EXPECT_NEAR(pt.phase_deg, std::arg(h) * 180 / M_PI, 1e-7);
  }
}

std::string Message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LinearizeMechanism, OperatingPointOffTheConstraintsIsAnError) {
  const Prepared s = Prepare(LoadModel(Example("B1_pendulum_3d.yaml")));
  std::vector<double> x = s.eqs.initial_state;
  x[Index(s.eqs.state_names, "bar_x")] = 3;  // the bar's centre 3 m from the pivot: no such configuration
  const std::string held = Message([&] { ProjectOntoConstraints(s.eqs, 0, x, {"bar_x"}); });
  EXPECT_NE(held.find("off the constraint manifold"), std::string::npos) << held;
  EXPECT_NE(held.find("position constraint of pivot"), std::string::npos) << held;
  // Not held, the same point is moved back onto the joint.
  double moved = 0;
  const auto on = ProjectOntoConstraints(s.eqs, 0, x, {}, &moved);
  EXPECT_GT(moved, 1);
  EXPECT_NEAR(std::hypot(on[Index(s.eqs.state_names, "bar_x")], on[Index(s.eqs.state_names, "bar_y")]), 0.5, 1e-10);
  // Linearize itself refuses a point off the constraints.
  const std::string direct = Message([&] { Linearize(s.eqs, s.inputs, s.params, 0, x); });
  EXPECT_NE(direct.find("off the constraint manifold"), std::string::npos) << direct;
}

// B2 under its default torque (tau = 10 N m from t = 0) has no steady state:
// no angle balances it. Newton's iteration stalls on the derivatives' floor
// (the crank's angular acceleration, 2.7 rad/s^2) and must say so after a
// few steps, not creep on for all of its 100 (8 s of GiNaC evaluation).
TEST(LinearizeMechanism, SteadyStateThatDoesNotExistFailsFast) {
  const Prepared s = Prepare(LoadWith(Example("B2_slider_crank_isostatic.yaml"), {}));
  const std::string m = Message([&] { SteadyState(s.eqs, s.params, 0, s.eqs.initial_state); });
  EXPECT_NE(m.find("no steady state"), std::string::npos) << m;
  EXPECT_NE(m.find("dp_crank_Jz/dt = 2.72"), std::string::npos) << m;
  EXPECT_NE(m.find("the last 3 took off less than 1% each"), std::string::npos) << m;
  const auto at = m.find(" step(s)");
  ASSERT_NE(at, std::string::npos) << m;
  const int steps = std::stoi(m.substr(m.rfind("after ", at) + 6));
  EXPECT_LE(steps, 10) << m;
}

// A parallelogram four-bar (a = c, b = d) with its links along one line is at
// a change point: the constraints' Jacobian loses rank there.
TEST(LinearizeMechanism, SingularConfigurationIsAnError) {
  std::map<std::string, double> flat = {{"a", 0.2}, {"b", 0.5}, {"c", 0.2}, {"d", 0.5},
                                        {"th2", 0}, {"w0", 0},  {"w3", 0},  {"w4", 0}};
  const Prepared s = Prepare(LoadWith(Example("fourbar.yaml"), flat));
  const std::string m = Message([&] { Linearize(s.eqs, s.inputs, s.params, 0, s.eqs.initial_state); });
  EXPECT_NE(m.find("singular configuration"), std::string::npos) << m;
  // A little away from it the same linkage linearizes.
  flat["th2"] = 0.05;
  flat.erase("w3");
  flat.erase("w4");
  const Prepared near = Prepare(LoadWith(Example("fourbar.yaml"), flat));
  EXPECT_EQ(Linearize(near.eqs, near.inputs, near.params, 0, near.eqs.initial_state).states.size(), 2u);
}

}  // namespace
}  // namespace paynter
