// Lagrange's and Hamilton's equations of mechanisms written under
// `multibody:` (docs/multibody.md, "Lagrange and Hamilton forms"), against an
// independent formulation of the same mechanism: the Newton–Euler state form,
// whose states are the bodies' momenta and poses and whose joints are
// constraint forces. Lagrange's equations are formed in the joints'
// coordinates (src/multibody/joint_coordinates.cc); they share with the state
// form only the model file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace paynter {
namespace {

double MaxDiff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

// The model in joint coordinates, as `--form lagrange1|lagrange2` loads it.
Model JointCoordinateModel(const std::string& yaml, const std::string& label, bool cut_joints = false,
                           bool energy = false) {
  ModelSpec spec = ReadModelSpec(yaml, label);
  ExpandMultibodyInJointCoordinates(&spec, cut_joints);
  ExpandVectorBonds(&spec);
  if (energy) EXPECT_TRUE(AddEnergyAccounting(&spec));
  return BuildModel(spec);
}

SolverOptions Tight(double t_end) {
  SolverOptions so;
  so.t_end = t_end;
  so.rtol = 1e-11;
  so.atol = 1e-12;
  return so;
}

// A form simulated as `paynter simulate --form F` does: the constraint
// methods' default (lagrange-multipliers, projected) where joints are
// constraint forces, a plain ODE otherwise.
// `formed` is the form the equations come out in: lagrange1 of an open chain
// has no multiplier, so it is Lagrange's equations of the second kind.
Solution SimulateForm(Model model, Formulation form, double t_end, std::optional<Formulation> formed = {},
                      bool assemble = false) {
  CausalGraph g = AssignCausality(model, OptionsFor(form, model));
  EXPECT_TRUE(g.conflicts.empty()) << g.conflicts.front().message;
  const EquationSystem eqs = BuildEquations(model, g);
  EXPECT_EQ(eqs.form, formed.value_or(form));
  CompiledModel cm(eqs);
  ConstrainedOptions co;
  co.source = &model;
  co.assemble = assemble;
  return SimulateConstrained(cm, Tight(t_end), co);
}

Solution StateForm(const std::string& yaml, const std::string& label, double t_end) {
  return SimulateForm(LoadModelFromString(yaml, label), Formulation::kState, t_end);
}

// B1 (a bar on a revolute joint, damped): Lagrange's equation of the second
// kind in the joint angle is (M L^2/4 + I0) th'' = -B th' - M g L/2 cos th;
// the kinetic co-energy of its Lagrange subsystem is that inertia's.
TEST(MultibodyForms, PendulumLagrangeSubsystemIsTheBarAboutItsPivot) {
  const std::string yaml = testing::ReadSourceFile("examples/B1_pendulum_3d.yaml");
  Model m = JointCoordinateModel(yaml, "B1_pendulum_3d.yaml");
  CausalGraph g = AssignCausality(m, OptionsFor(Formulation::kLagrange2, m));
  const EquationSystem eqs = BuildEquations(m, g);
  ASSERT_EQ(eqs.generalized_velocities, std::vector<std::string>{"v_pivot_angledot"});
  const LagrangeSubsystem ls = DeriveLagrangeSubsystem(eqs, m);
  // T = (M L^2/4 + I0) v^2 / 2 at any angle: L = 1, M = 1, I0 = 0.083.
  GiNaC::exmap at = m.ParameterValues();
  for (double th : {0.0, 0.7, 2.1, -1.3}) {
    at[m.Symbol("pivot_angle")] = th;
    at[ls.velocities[0]] = 1.7;
    const double T = GiNaC::ex_to<GiNaC::numeric>(GiNaC::evalf(ls.kinetic_coenergy.subs(at).subs(at))).to_double();
    EXPECT_NEAR(T, (1.0 / 4 + 0.083) * 1.7 * 1.7 / 2, 1e-12) << th;
  }
}

// The same pendulum by every form: the joint angle, its rate, the centre of
// mass and the pivot's force agree with the Newton–Euler state form.
TEST(MultibodyForms, PendulumFormsAgreeWithTheStateForm) {
  const std::string yaml = testing::ReadSourceFile("examples/B1_pendulum_3d.yaml");
  const Solution state = StateForm(yaml, "B1.yaml", 3);
  const Solution lag2 = SimulateForm(JointCoordinateModel(yaml, "B1.yaml"), Formulation::kLagrange2, 3);
  const Solution lag1 =
      SimulateForm(JointCoordinateModel(yaml, "B1.yaml", true), Formulation::kLagrange1, 3, Formulation::kLagrange2);
  const Solution ham = SimulateForm(LoadModelFromString(yaml, "B1.yaml"), Formulation::kHamilton, 3);
  for (const Solution* s : {&lag2, &lag1, &ham}) {
    for (const char* c : {"gamma", "gammadot", "xG", "yG"})
      EXPECT_LT(MaxDiff(s->Column(c), state.Column(c)), 1e-8) << c;
    for (const char* c : {"FAx", "FAy"}) EXPECT_LT(MaxDiff(s->Column(c), state.Column(c)), 1e-7) << c;
  }
  // It moved: the comparison is not of two resting pendulums.
  EXPECT_GT(std::fabs(state.Column("gamma").back()), 0.5);
}

// An open spatial chain of three revolute joints on skew axes, one link with
// a full inertia tensor, started from joint angles and rates.
TEST(MultibodyForms, SpatialChainLagrange2AgreesWithTheStateForm) {
  const std::string yaml = testing::ReadSourceFile("examples/spatial_chain_3r.yaml");
  const Solution state = StateForm(yaml, "chain.yaml", 3);
  const Solution lag2 = SimulateForm(JointCoordinateModel(yaml, "chain.yaml"), Formulation::kLagrange2, 3);
  const Solution ham = SimulateForm(LoadModelFromString(yaml, "chain.yaml"), Formulation::kHamilton, 3);
  for (const char* c :
       {"q1", "q2", "q3", "q1dot", "q2dot", "q3dot", "x1", "y1", "z1", "x2", "y2", "z2", "x3", "y3", "z3"}) {
    EXPECT_LT(MaxDiff(lag2.Column(c), state.Column(c)), 1e-8) << c;
    EXPECT_LT(MaxDiff(ham.Column(c), state.Column(c)), 1e-8) << c;
  }
  for (const char* c : {"F1x", "F1y", "F1z"}) EXPECT_LT(MaxDiff(lag2.Column(c), state.Column(c)), 1e-7) << c;
  // The start is the joints' (0.3, -0.4, 0.6) rad at (1.5, 0.5, -1) rad/s.
  EXPECT_NEAR(lag2.Column("q2").front(), -0.4, 1e-15);
  EXPECT_NEAR(lag2.Column("q3dot").front(), -1, 1e-15);
}

// Energy in joint coordinates: the kinetic energy of the bodies' inertias
// (functions of the joint rates), the work of gravity and the damper's loss
// balance, with no reference to the state form.
TEST(MultibodyForms, SpatialChainLagrange2BalancesEnergy) {
  const std::string yaml = testing::ReadSourceFile("examples/spatial_chain_3r.yaml");
  const Solution s = SimulateForm(JointCoordinateModel(yaml, "chain.yaml", false, true), Formulation::kLagrange2, 2);
  const auto st = s.Column("energy_stored"), in = s.Column("energy_delivered"), out = s.Column("energy_dissipated");
  double err = 0, scale = 0;
  for (size_t i = 0; i < st.size(); ++i) {
    err = std::max(err, std::fabs(st[i] - st[0] - in[i] + out[i]));
    scale = std::max({scale, std::fabs(st[i]), std::fabs(in[i]), std::fabs(out[i])});
  }
  EXPECT_LT(err, 1e-9 * scale);
  EXPECT_GT(out.back(), 0.1);  // the damper worked
}

// The spatial arm of benchmark B4: revolute, revolute and a prismatic joint
// with a spring (whose force stays on the slide's generalized junction).
TEST(MultibodyForms, SpatialArmWithASlideAgreesWithTheStateForm) {
  const std::string yaml = testing::ReadSourceFile("examples/B4_spatial_arm.yaml");
  const Solution state = StateForm(yaml, "B4.yaml", 2);
  const Solution lag2 = SimulateForm(JointCoordinateModel(yaml, "B4.yaml"), Formulation::kLagrange2, 2);
  for (const char* c : {"X3", "Y3", "Z3", "s", "sdot", "theta1", "theta2"})
    EXPECT_LT(MaxDiff(lag2.Column(c), state.Column(c)), 1e-8) << c;
  for (const char* c : {"FJ3x", "FJ3y", "FJ3z"}) EXPECT_LT(MaxDiff(lag2.Column(c), state.Column(c)), 1e-7) << c;
}

// A cylindrical joint (a slide and an angle about one axis, two generalized
// junctions), a fixed joint (no coordinate) and a point-to-point spring.
TEST(MultibodyForms, CylindricalAndFixedJointsAgreeWithTheStateForm) {
  const std::string yaml = R"(parameters: {g: 9.81}
multibody:
  gravity: [0, -g, 0]
  bodies:
    - {name: arm, mass: 1, inertia: [0.01, 0.02, 0.03], position: [0.3, 0, 0]}
    - {name: tip, mass: 0.5, inertia: [0.002, 0.002, 0.001], position: [0.6, 0.1, 0], orientation: [0.1, 0.2, 0.3]}
    - {name: sleeve, mass: 0.7, inertia: [0.003, 0.004, 0.005], position: [0.3, 0, 0.2]}
  joints:
    - {name: J1, type: revolute, body1: ground, body2: arm, axis: [0, 1, 1], point2: [-0.3, 0, 0], initial: [0.2, 1]}
    - {name: F, type: fixed, body1: arm, body2: tip, point1: [0.3, 0.1, 0]}
    - {name: C, type: cylindrical, body1: arm, body2: sleeve, axis: [1, 0, 0], point1: [0, 0, 0.2]}
  loads:
    - {name: k, type: spring, body1: arm, point1: [0, 0, 0.2], body2: sleeve, point2: [0.05, 0, 0], stiffness: 40, rest: 0.05, damping: 0.2}
outputs:
  a: J1_angle
  s: C_s1
  c: C_angle2
  sx: sleeve_x
  sy: sleeve_y
  sz: sleeve_z
  tx: tip_x
  tz: tip_z
  Fx: C_Fx
  Tz: F_Tz
)";
  const Solution state = StateForm(yaml, "cyl.yaml", 2);
  const Solution lag2 = SimulateForm(JointCoordinateModel(yaml, "cyl.yaml"), Formulation::kLagrange2, 2);
  for (const char* c : {"a", "s", "c", "sx", "sy", "sz", "tx", "tz"})
    EXPECT_LT(MaxDiff(lag2.Column(c), state.Column(c)), 1e-8) << c;
  for (const char* c : {"Fx", "Tz"}) EXPECT_LT(MaxDiff(lag2.Column(c), state.Column(c)), 1e-7) << c;
  EXPECT_GT(MaxDiff(state.Column("s"), std::vector<double>(state.Column("s").size(), 0.0)), 0.1);
}

// A closed chain: lagrange1 keeps the joint that closes the loop as
// multipliers (the four-bar from rest, swinging under gravity).
TEST(MultibodyForms, FourBarLagrange1WithTheClosingJointAsMultipliers) {
  std::string yaml = testing::ReadSourceFile("examples/fourbar.yaml");
  yaml =
      std::regex_replace(yaml, std::regex(",\\s*velocity: \\[[^\\]]*\\],\\s*angular_velocity: \\[[^\\]]*\\]\\}"), "}");
  const Solution state = StateForm(yaml, "fourbar.yaml", 2);
  const Solution lag1 = SimulateForm(JointCoordinateModel(yaml, "fourbar.yaml", true), Formulation::kLagrange1, 2);
  for (const char* c : {"crank_angle", "coupler_angle", "rocker_angle", "crank_rate", "coupler_y", "rocker_wz"})
    EXPECT_LT(MaxDiff(lag1.Column(c), state.Column(c)), 1e-8) << c;
  // The in-plane forces of the ground pivots are unique.
  for (const char* c : {"FOx", "FOy", "FDx", "FDy"}) EXPECT_LT(MaxDiff(lag1.Column(c), state.Column(c)), 1e-6) << c;
  EXPECT_GT(MaxDiff(state.Column("crank_angle"), std::vector<double>(state.Column("crank_angle").size(), 0.3)), 0.1);
}

// The four-bar started from its crank's rate alone (initial: [0, w0] on the
// crank's joint): the assembly of lagrange1 keeps that rate and finds the
// coupler's and rocker's, which the model file computes in closed form for
// the state form.
TEST(MultibodyForms, FourBarLagrange1AssembledFromTheCrankRate) {
  const std::string yaml = testing::ReadSourceFile("examples/fourbar.yaml");
  std::string from_rate =
      std::regex_replace(yaml, std::regex(",\\s*velocity: \\[[^\\]]*\\],\\s*angular_velocity: \\[[^\\]]*\\]\\}"), "}");
  from_rate = std::regex_replace(from_rate, std::regex("damping: bO, actuator: tau\\}"),
                                 "damping: bO, actuator: tau, initial: [0, w0]}");
  ASSERT_NE(from_rate.find("initial: [0, w0]"), std::string::npos);
  const Solution state = StateForm(yaml, "fourbar.yaml", 1);
  const Solution lag1 = SimulateForm(JointCoordinateModel(from_rate, "fourbar.yaml", true), Formulation::kLagrange1, 1,
                                     {}, /*assemble=*/true);
  EXPECT_NEAR(lag1.Column("crank_rate").front(), 8, 1e-12);
  for (const char* c : {"crank_angle", "coupler_angle", "rocker_angle", "crank_rate", "coupler_wz", "rocker_wz"})
    EXPECT_LT(MaxDiff(lag1.Column(c), state.Column(c)), 1e-8) << c;
}

// The hyperstatic slider crank (benchmark B2): its prismatic guide closes
// the loop; the rows it repeats out of the plane hold identically in joint
// coordinates and go, the others are multipliers.
TEST(MultibodyForms, HyperstaticSliderCrankLagrange1AgreesWithTheStateForm) {
  const std::string yaml = testing::ReadSourceFile("examples/B2_slider_crank_hyperstatic.yaml");
  const Solution state = StateForm(yaml, "B2.yaml", 2);
  const Solution lag1 = SimulateForm(JointCoordinateModel(yaml, "B2.yaml", true), Formulation::kLagrange1, 2);
  for (const char* c : {"gamma", "gammadot", "rod_angle", "x_piston", "v_piston", "xG1", "yG1", "xG2", "yG2"})
    EXPECT_LT(MaxDiff(lag1.Column(c), state.Column(c)), 1e-8) << c;
  for (const char* c : {"FOx", "FOy", "FAx", "FAy", "FBx", "FBy", "FPy"})
    EXPECT_LT(MaxDiff(lag1.Column(c), state.Column(c)), 1e-6) << c;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(MultibodyForms, Lagrange2OfAClosedChainNamesTheLoop) {
  const std::string yaml = testing::ReadSourceFile("examples/fourbar.yaml");
  const std::string msg = ErrorOf([&] { JointCoordinateModel(yaml, "fourbar.yaml"); });
  EXPECT_NE(msg.find("joint 'D' closes the kinematic loop O - A - B - D"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--constraints minimal-coordinates"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--form lagrange1"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("_c1"), std::string::npos) << msg;  // no internal element names
}

TEST(MultibodyForms, JointsWithoutCoordinatesAndFreeBodiesAreNamed) {
  const std::string spherical = R"(
multibody:
  bodies:
    - {name: ball, mass: 1, inertia: [1, 1, 1], position: [1, 0, 0]}
  joints:
    - {name: socket, type: universal, body1: ground, body2: ball, point2: [-1, 0, 0], axis: [0, 0, 1],
       axis2: [0, 1, 0]}
)";
  std::string msg = ErrorOf([&] { JointCoordinateModel(spherical, "ball.yaml"); });
  EXPECT_NE(msg.find("ball.yaml:6"), std::string::npos) << msg;
  EXPECT_NE(msg.find("joint 'socket' is universal"), std::string::npos) << msg;
  EXPECT_NE(msg.find("revolute, prismatic, spherical, cylindrical or fixed"), std::string::npos) << msg;
  const std::string free_body = R"(
multibody:
  bodies:
    - {name: stone, mass: 1, inertia: [1, 1, 1]}
)";
  msg = ErrorOf([&] { JointCoordinateModel(free_body, "stone.yaml"); });
  EXPECT_NE(msg.find("body 'stone' is not joined to the ground"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--form state"), std::string::npos) << msg;
}

}  // namespace
}  // namespace paynter
