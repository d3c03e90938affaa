// The Boltzmann–Hamel equations (BHCAP, --form boltzmann-hamel; docs/methods.md)
// against what a dynamicist knows of them: Euler's equations for a rigid
// body in its body-frame angular velocities, term by term; the motion of the
// same mechanism by two independent formulations (the Newton–Euler state
// form, joints as constraint forces, and Lagrange's equations in the joint
// coordinates); the energy of a conservative motion.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace paynter {
namespace {

using GiNaC::ex;

Model LoadAs(const std::string& rel, Formulation form, bool energy = false) {
  LoadOptions lo;
  lo.form = form;
  lo.energy = energy;
  return LoadModel(testing::SourcePath(rel), lo);
}

EquationSystem Build(Model& m, Formulation form) {
  const CausalGraph g = AssignCausality(m, OptionsFor(form, m));
  EXPECT_TRUE(g.conflicts.empty());
  EquationSystem eqs = BuildEquations(m, g);
  EXPECT_EQ(eqs.form, form);
  return eqs;
}

// A form simulated as `paynter simulate --form F --rtol 1e-11` does.
Solution Simulate10s(const std::string& rel, Formulation form, bool energy = false) {
  Model m = LoadAs(rel, form, energy);
  const EquationSystem eqs = Build(m, form);
  CompiledModel cm(eqs);
  SolverOptions so;
  so.t_end = 10;
  so.rtol = 1e-11;
  so.atol = 1e-12;
  so.dt_out = 0.25;
  ConstrainedOptions co;
  co.source = &m;
  return SimulateConstrained(cm, so, co);
}

// The largest difference of two columns, relative to the column's size
// (at least 1): a body spinning at 30 rad/s is compared on its rates' scale.
double RelDiff(const Solution& a, const Solution& b, const std::string& column) {
  const auto x = a.Column(column), y = b.Column(column);
  EXPECT_EQ(x.size(), y.size()) << column;
  double d = 0, scale = 1;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    d = std::max(d, std::fabs(x[i] - y[i]));
    scale = std::max(scale, std::fabs(x[i]));
  }
  return d / scale;
}

// lhs - rhs of each Boltzmann–Hamel equation, minus the expected one, is 0.
void ExpectEquations(const BoltzmannHamelTerms& bh, const std::vector<ex>& expected) {
  ASSERT_EQ(bh.lhs.size(), expected.size());
  const ex w = GiNaC::wild();
  for (size_t r = 0; r < expected.size(); ++r) {
    const ex diff = (bh.lhs[r] - bh.rhs[r] - expected[r]).expand();
    const ex reduced =
        diff.subs(GiNaC::pow(GiNaC::sin(w), 2) == 1 - GiNaC::pow(GiNaC::cos(w), 2), GiNaC::subs_options::algebraic)
            .expand();
    EXPECT_TRUE(reduced.is_zero()) << "equation " << r << ": " << bh.lhs[r] << " = " << bh.rhs[r] << "\n  differs by "
                                   << reduced;
  }
}

// gamma^l_rs of body-frame angular velocities: the permutation symbol e_rsl.
void ExpectStructureConstants(const BoltzmannHamelTerms& bh) {
  ASSERT_EQ(bh.hamel.size(), 3u);
  for (int l = 0; l < 3; ++l)
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) {
        const int e = (r - s) * (s - l) * (l - r) / 2;  // e_rsl
        EXPECT_TRUE((bh.hamel[l][r][s] - e).is_zero()) << l << r << s << ": " << bh.hamel[l][r][s];
      }
}

// A torque-free asymmetric body (a ball joint at its centre of mass, no
// gravity): I1 w1' + (I3 - I2) w2 w3 = 0 and its two siblings, as the
// equations print them and as the Boltzmann–Hamel terms give them.
TEST(BoltzmannHamel, TorqueFreeBodyGivesEulersEquations) {
  Model m = LoadAs("examples/torque_free_body.yaml", Formulation::kBoltzmannHamel);
  const EquationSystem eqs = Build(m, Formulation::kBoltzmannHamel);
  EXPECT_EQ(eqs.generalized_velocities, (std::vector<std::string>{"v_ball_wx", "v_ball_wy", "v_ball_wz"}));
  const BoltzmannHamelTerms bh = DeriveBoltzmannHamel(eqs, m);
  const ex I1 = m.Symbol("I1"), I2 = m.Symbol("I2"), I3 = m.Symbol("I3");
  const auto& w = bh.velocities;
  const auto& dw = bh.accelerations;
  ExpectEquations(bh, {I1 * dw[0] + (I3 - I2) * w[1] * w[2], I2 * dw[1] + (I1 - I3) * w[2] * w[0],
                       I3 * dw[2] + (I2 - I1) * w[0] * w[1]});
  ExpectStructureConstants(bh);
  EXPECT_TRUE((bh.kinetic_coenergy - (I1 * w[0] * w[0] + I2 * w[1] * w[1] + I3 * w[2] * w[2]) / 2).expand().is_zero());
  // The printed equations: each quasi-velocity's block is Euler's equation.
  const std::string text = eqs.ToText(m);
  for (const char* line : {"M[1,1] = I1\n  f[1] = I2*v_ball_wy*v_ball_wz-I3*v_ball_wy*v_ball_wz\n",
                           "M[1,1] = I2\n  f[1] = I3*v_ball_wx*v_ball_wz-I1*v_ball_wx*v_ball_wz\n",
                           "M[1,1] = I3\n  f[1] = I1*v_ball_wx*v_ball_wy-I2*v_ball_wx*v_ball_wy\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nin\n" << text;
  // `paynter equations` adds the Hamel coefficients: the permutation symbol.
  std::ostringstream printed;
  EquationsText(testing::SourcePath("examples/torque_free_body.yaml"), false, Formulation::kBoltzmannHamel, false,
                ConstraintMethod::kAuto, printed);
  for (const char* s : {"gamma^ball_wx_(ball_wy, ball_wz) = 1\n", "gamma^ball_wy_(ball_wx, ball_wz) = -1\n",
                        "gamma^ball_wz_(ball_wx, ball_wy) = 1\n"})
    EXPECT_NE(printed.str().find(s), std::string::npos) << s << "\nin\n" << printed.str();
  // The kinematic relations of the Cardan angles, q' = B(q) w.
  EXPECT_NE(text.find("d/dt ball_angle2 = cos(ball_angle3)*v_ball_wy+sin(ball_angle3)*v_ball_wx"), std::string::npos)
      << text;
}

// The heavy symmetric top about its tip O, in its body-frame angular
// velocities: with A' = A + m l^2 (the transverse moment about O) and the
// weight's moment about O in body components m g l (R32, -R31, 0),
//   A' w1' + (C - A') w2 w3 = m g l R32,  A' w2' + (A' - C) w3 w1 = -m g l R31,  C w3' = 0,
// R the top's rotation written out in the joint's Cardan angles.
TEST(BoltzmannHamel, HeavyTopGivesEulersEquationsAboutItsTip) {
  Model m = LoadAs("examples/heavy_top.yaml", Formulation::kBoltzmannHamel);
  const EquationSystem eqs = Build(m, Formulation::kBoltzmannHamel);
  const BoltzmannHamelTerms bh = DeriveBoltzmannHamel(eqs, m);
  ASSERT_EQ(bh.coordinate_names, (std::vector<std::string>{"tip_angle1", "tip_angle2", "tip_angle3"}));
  const ex A = m.Symbol("A"), C = m.Symbol("C"), mass = m.Symbol("m"), l = m.Symbol("l"), g = m.Symbol("g");
  const ex Ap = A + mass * l * l;
  // R = Rx(a1) Ry(a2) Rz(a3) Rx(th0): the relative rotation from the written start.
  auto rx = [](const ex& a) { return GiNaC::matrix{{1, 0, 0}, {0, cos(a), -sin(a)}, {0, sin(a), cos(a)}}; };
  auto ry = [](const ex& a) { return GiNaC::matrix{{cos(a), 0, sin(a)}, {0, 1, 0}, {-sin(a), 0, cos(a)}}; };
  auto rz = [](const ex& a) { return GiNaC::matrix{{cos(a), -sin(a), 0}, {sin(a), cos(a), 0}, {0, 0, 1}}; };
  const auto& q = bh.coordinates;
  const GiNaC::matrix R = rx(q[0]).mul(ry(q[1])).mul(rz(q[2])).mul(rx(m.Symbol("th0")));
  const auto& w = bh.velocities;
  const auto& dw = bh.accelerations;
  ExpectEquations(bh, {Ap * dw[0] + (C - Ap) * w[1] * w[2] - mass * g * l * R(2, 1),
                       Ap * dw[1] + (Ap - C) * w[2] * w[0] + mass * g * l * R(2, 0), C * dw[2]});
  ExpectStructureConstants(bh);
  // --explain prints them, with the transformation and T*.
  std::ostringstream out;
  EquationsText(testing::SourcePath("examples/heavy_top.yaml"), false, Formulation::kBoltzmannHamel, true,
                ConstraintMethod::kAuto, out);
  for (const char* s : {"kinematic relations q' = B(q) w:", "transformation w = A(q) q':",
                        "kinetic co-energy in the quasi-velocities:", "gamma^tip_wx_(tip_wy, tip_wz) = 1",
                        "Boltzmann-Hamel equations"})
    EXPECT_NE(out.str().find(s), std::string::npos) << s << "\nin\n" << out.str();
}

// The motion by three formulations over 10 s at rtol 1e-11: the
// Boltzmann–Hamel equations, the Newton–Euler state form and Lagrange's
// equations in the joint coordinates (for the top: the Cardan angles' rates).
void ExpectSameMotion(const std::string& rel, const std::vector<std::string>& columns) {
  const Solution bh = Simulate10s(rel, Formulation::kBoltzmannHamel);
  const Solution state = Simulate10s(rel, Formulation::kState);
  const Solution lag2 = Simulate10s(rel, Formulation::kLagrange2);
  for (const auto& c : columns) {
    EXPECT_LT(RelDiff(state, bh, c), 1e-9) << rel << " " << c << " (state form)";
    EXPECT_LT(RelDiff(lag2, bh, c), 1e-9) << rel << " " << c << " (lagrange2)";
  }
  EXPECT_NEAR(bh.Column("t").back(), 10, 1e-12);
}

TEST(BoltzmannHamel, HeavyTopMovesAsTheStateFormAndLagrange2) {
  ExpectSameMotion("examples/heavy_top.yaml", {"x", "y", "z", "R33", "wx", "wy", "wz", "vx", "vy", "vz"});
}

TEST(BoltzmannHamel, SpatialArmAndChainMoveAsTheStateFormAndLagrange2) {
  ExpectSameMotion("examples/B4_spatial_arm.yaml", {"X3", "Y3", "Z3", "s", "sdot", "theta1", "theta2"});
  ExpectSameMotion("examples/spatial_chain_3r.yaml",
                   {"q1", "q2", "q3", "q1dot", "q2dot", "q3dot", "x2", "y2", "z2", "x3", "y3", "z3"});
}

// Nothing dissipates in the top or the free body: the energy stored less the
// work delivered (by gravity) stays at its start, to 1e-10 of its size.
TEST(BoltzmannHamel, EnergyIsConservedWhereNothingDissipates) {
  for (const char* rel : {"examples/heavy_top.yaml", "examples/torque_free_body.yaml"}) {
    const Solution s = Simulate10s(rel, Formulation::kBoltzmannHamel, /*energy=*/true);
    const auto st = s.Column("energy_stored"), in = s.Column("energy_delivered"), out = s.Column("energy_dissipated");
    double err = 0;
    for (size_t i = 0; i < st.size(); ++i) err = std::max(err, std::fabs(st[i] - st[0] - in[i] + out[i]));
    EXPECT_LT(err, 1e-10 * std::fabs(st[0])) << rel;
    EXPECT_EQ(out.back(), 0) << rel;
  }
}

// A scalar bond graph declares its quasi-velocities: the body-frame angular
// velocity junctions of a rigid body (inertias and the Euler junction
// structure), with the Cardan angles' kinematic relations as displacements.
// BHCAP gives Euler's equations; SCAP's state form the same motion.
TEST(BoltzmannHamel, ABondGraphDeclaresItsQuasiVelocities) {
  const std::string yaml = R"(
parameters: {Ix: 1, Iy: 2, Iz: 3}
elements:
  - {name: w, kind: "1"}
  - {name: J, kind: I, inertance: [Ix, Iy, Iz], initial: [2*Ix, 0.3*Iy, 0.2*Iz]}
  - {name: euler, kind: EJS, momentum: [Ix*f_w_x, Iy*f_w_y, Iz*f_w_z]}
bonds:
  - {name: bJ, from: w, to: J, dim: 3}
  - {name: bE, from: w, to: euler, dim: 3}
quasi_velocities: [w_x, w_y, w_z]
displacements:
  - {name: a1, rate: (cos(a3)*f_w_x - sin(a3)*f_w_y)/cos(a2)}
  - {name: a2, rate: sin(a3)*f_w_x + cos(a3)*f_w_y}
  - {name: a3, rate: f_w_z - sin(a2)*(cos(a3)*f_w_x - sin(a3)*f_w_y)/cos(a2)}
outputs: {wx: f_w_x, wy: f_w_y, wz: f_w_z, a1: a1, a2: a2, a3: a3}
)";
  Model m = LoadModelFromString(yaml, "body.yaml");
  const EquationSystem eqs = Build(m, Formulation::kBoltzmannHamel);
  const BoltzmannHamelTerms bh = DeriveBoltzmannHamel(eqs, m);
  const ex Ix = m.Symbol("Ix"), Iy = m.Symbol("Iy"), Iz = m.Symbol("Iz");
  const auto& w = bh.velocities;
  const auto& dw = bh.accelerations;
  ExpectEquations(bh, {Ix * dw[0] + (Iz - Iy) * w[1] * w[2], Iy * dw[1] + (Ix - Iz) * w[2] * w[0],
                       Iz * dw[2] + (Iy - Ix) * w[0] * w[1]});
  ExpectStructureConstants(bh);
  const auto run = [&](Formulation form) {
    Model model = LoadModelFromString(yaml, "body.yaml");
    CompiledModel cm(Build(model, form));
    SolverOptions so;
    so.t_end = 5;
    so.rtol = 1e-11;
    so.atol = 1e-12;
    return Simulate(cm, so);
  };
  const Solution a = run(Formulation::kBoltzmannHamel), b = run(Formulation::kState);
  for (const char* c : {"wx", "wy", "wz", "a1", "a2", "a3"}) EXPECT_LT(RelDiff(b, a, c), 1e-9) << c;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Where BHCAP does not apply, a located error that says why.
TEST(BoltzmannHamel, WhereItDoesNotApplyTheErrorSaysWhy) {
  // A bond graph with no quasi-velocities.
  std::string msg = ErrorOf([] {
    std::ostringstream out;
    CausalityText(testing::SourcePath("examples/B1_pendulum.yaml"), CausalityProcedure::kBHCAP,
                  ConstraintMethod::kAuto, out);
  });
  EXPECT_NE(msg.find("B1_pendulum.yaml: error: BHCAP puts artificial flow sources on the quasi-velocity"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("quasi_velocities:"), std::string::npos) << msg;
  // A closed chain: the loop is named.
  msg = ErrorOf([] { LoadAs("examples/fourbar.yaml", Formulation::kBoltzmannHamel); });
  EXPECT_NE(msg.find("joint 'D' closes the kinematic loop O - A - B - D: the Boltzmann-Hamel equations"),
            std::string::npos)
      << msg;
  // `quasi_velocities:` on a joint whose quasi-velocities are its rates.
  msg = ErrorOf([] {
    LoadModelFromString(R"(
multibody:
  bodies:
    - {name: bar, mass: 1, inertia: [1, 1, 1], position: [1, 0, 0]}
  joints:
    - {name: pin, type: revolute, body1: ground, body2: bar, point2: [-1, 0, 0], quasi_velocities: body}
)",
                        "pin.yaml");
  });
  EXPECT_NE(msg.find("pin.yaml:6"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a revolute joint takes no 'quasi_velocities'"), std::string::npos) << msg;
  // A velocity the ball joint does not allow.
  msg = ErrorOf([] {
    LoadOptions lo;
    lo.form = Formulation::kBoltzmannHamel;
    Load(ModelSource::Text(R"(
multibody:
  bodies:
    - {name: top, mass: 1, inertia: [1, 1, 1], position: [0, 0, 1], angular_velocity: [1, 0, 0],
       velocity: [0, 0, 1]}
  joints:
    - {name: tip, type: spherical, body1: ground, body2: top, point2: [0, 0, -1]}
)",
                                    "top.yaml"),
                  lo);
  });
  EXPECT_NE(msg.find("body 'top' gives a velocity that its spherical joint 'tip' does not allow"), std::string::npos)
      << msg;
  // The causality report of a mechanism names the quasi-velocity junctions.
  std::ostringstream out;
  EXPECT_EQ(CausalityText(testing::SourcePath("examples/heavy_top.yaml"), CausalityProcedure::kBHCAP,
                          ConstraintMethod::kAuto, out),
            0);
  EXPECT_NE(out.str().find("quasi-velocity 1-junctions: tip_wx, tip_wy, tip_wz"), std::string::npos) << out.str();
  msg = ErrorOf([] {
    std::ostringstream o;
    CausalityText(testing::SourcePath("examples/heavy_top.yaml"), CausalityProcedure::kBHCAP, ConstraintMethod::kZcp, o);
  });
  EXPECT_NE(msg.find("--constraints zcp does not combine with --form boltzmann-hamel"), std::string::npos) << msg;
}

}  // namespace
}  // namespace paynter
