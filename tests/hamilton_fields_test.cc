// Storage fields (`kind: IF` / `kind: CF`, docs/model-format.md, "Storage
// fields") and Hamilton's equations of mechanisms in joint coordinates
// (`--form hamilton` on a `multibody:` model, docs/multibody.md): the
// generalized momenta p = M(q) q' of an I field whose inertia matrix is the
// mechanism's mass matrix, in integral causality.
//
// References that do not come from the I field: Lagrange's equations of the
// second kind in the same joint coordinates (the inertias in derivative
// causality, the chain rule), the Newton–Euler state form (bodies' momenta,
// joints as constraint forces), a double pendulum's mass matrix and potential
// written by hand, and the energy the motion must keep.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
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

double Spread(const std::vector<double>& a) {
  double lo = a.at(0), hi = a.at(0);
  for (double x : a) lo = std::min(lo, x), hi = std::max(hi, x);
  return hi - lo;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The mechanism as `--form lagrange2` and `--form hamilton` load it.
Model Lagrange2Model(const std::string& yaml, const std::string& label, bool energy = false) {
  ModelSpec spec = ReadModelSpec(yaml, label);
  ExpandMultibodyInJointCoordinates(&spec);
  ExpandVectorBonds(&spec);
  if (energy) EXPECT_TRUE(AddEnergyAccounting(&spec));
  return BuildModel(spec);
}
Model HamiltonModel(const std::string& yaml, const std::string& label, bool energy = false) {
  ModelSpec spec = ReadModelSpec(yaml, label);
  ExpandMultibodyForHamilton(&spec);
  ExpandVectorBonds(&spec);
  if (energy) EXPECT_TRUE(AddEnergyAccounting(&spec));
  return BuildModel(spec);
}

SolverOptions Tight(double t_end, double rtol = 1e-11) {
  SolverOptions so;
  so.t_end = t_end;
  so.rtol = rtol;
  so.atol = rtol / 10;
  return so;
}

EquationSystem Equations(Model& model, Formulation form) {  // LaCAP adds its sources to the model
  CausalGraph g = AssignCausality(model, OptionsFor(form, model));
  EXPECT_TRUE(g.conflicts.empty()) << g.conflicts.front().message;
  return BuildEquations(model, g);
}

Solution SimulateForm(Model model, Formulation form, double t_end, double rtol = 1e-11) {
  const EquationSystem eqs = Equations(model, form);
  EXPECT_EQ(eqs.form, form);
  CompiledModel cm(eqs);
  ConstrainedOptions co;
  co.source = &model;
  return SimulateConstrained(cm, Tight(t_end, rtol), co);
}

// Removes a joint's damping (the conservative variant of a model).
std::string Undamped(std::string yaml, const std::string& damping) {
  const std::string key = ", damping: " + damping;
  const size_t at = yaml.find(key);
  EXPECT_NE(at, std::string::npos) << key;
  if (at != std::string::npos) yaml.erase(at, key.size());
  return yaml;
}

// ---- Hamilton's equations of mechanisms in joint coordinates ---------------

// B1 (a bar on a damped revolute joint about z, gravity along -y): the
// textbook pendulum, H = p^2 / (2 (I0 + M L^2/4)) - M g L/2 cos(...): the
// equations are q' = p / (I0 + M L^2/4), p' = -M g (L/2) cos(q) - B q'.
TEST(HamiltonJointCoordinates, PendulumIsTheTextbookHamiltonian) {
  Model m = HamiltonModel(testing::ReadSourceFile("examples/B1_pendulum_3d.yaml"), "B1.yaml");
  const EquationSystem eqs = Equations(m, Formulation::kHamilton);
  ASSERT_EQ(eqs.states.size(), 2u);
  EXPECT_EQ(eqs.state_names[0], "p_I_pivot_angle");
  EXPECT_EQ(eqs.state_names[1], "pivot_angle");
  EXPECT_TRUE(eqs.blocks.empty());  // one port: the flow is p / M, no implicit block
  // Every explicit equation substituted into the state derivatives.
  GiNaC::exmap chain = eqs.aliases;
  for (const auto& eq : eqs.equations)
    if (eq.is_explicit) chain[eq.var] = eq.value;
  auto rate = [&](size_t k) {
    GiNaC::ex e = chain.at(eqs.derivatives[k]);
    for (int pass = 0; pass < 64; ++pass) {
      const GiNaC::ex next = e.subs(chain);
      if (next.is_equal(e)) break;
      e = next;
    }
    return e;
  };
  const GiNaC::ex p = m.Symbol("p_I_pivot_angle"), q = m.Symbol("pivot_angle");
  const GiNaC::ex L = m.Symbol("L"), M = m.Symbol("M"), I0 = m.Symbol("I0"), B = m.Symbol("B"), g = m.Symbol("g");
  const GiNaC::ex inertia = I0 + M * L * L / 4;
  EXPECT_TRUE(TrigNormal(rate(1) - p / inertia).is_zero()) << rate(1);
  EXPECT_TRUE(TrigNormal(rate(0) - (-M * g * L / 2 * GiNaC::cos(q) - B * p / inertia)).is_zero()) << rate(0);
  // And as printed: the mass matrix simplified, no trigonometric identity left over.
  const std::string text = eqs.ToText(m);
  EXPECT_NE(text.find("p_I_pivot_angle"), std::string::npos) << text;
  EXPECT_EQ(text.find("sin(pivot_angle)^2"), std::string::npos) << text;
}

// Every mechanism: the same motion as Lagrange's equations of the second
// kind, and the joints' forces of the Newton–Euler state form.
void ExpectSameMotion(const std::string& yaml, const std::string& label, double t_end,
                      const std::vector<std::string>& joints, const std::vector<std::string>& forces,
                      double rtol = 1e-11, double bound = 1e-9) {
  const Solution lag2 = SimulateForm(Lagrange2Model(yaml, label), Formulation::kLagrange2, t_end, rtol);
  const Solution ham = SimulateForm(HamiltonModel(yaml, label), Formulation::kHamilton, t_end, rtol);
  const Solution state = SimulateForm(LoadModelFromString(yaml, label), Formulation::kState, t_end);
  for (const auto& c : joints) {
    const double d = MaxDiff(ham.Column(c), lag2.Column(c));
    EXPECT_LT(d, bound) << label << " " << c;
    std::printf("%s %s: max |hamilton - lagrange2| %.2e\n", label.c_str(), c.c_str(), d);
    EXPECT_GT(Spread(lag2.Column(c)), 0.05) << label << " " << c << " moved";
  }
  for (const auto& c : forces) EXPECT_LT(MaxDiff(ham.Column(c), state.Column(c)), 1e-7) << label << " " << c;
}

TEST(HamiltonJointCoordinates, PendulumMovesAsLagrange2) {
  ExpectSameMotion(testing::ReadSourceFile("examples/B1_pendulum_3d.yaml"), "B1.yaml", 3,
                   {"gamma", "gammadot", "xG", "yG"}, {"FAx", "FAy"});
}

// The rates are not states of Hamilton's form: it derives them from its
// momenta through M(q)^-1, so at one tolerance their integration error is
// larger than lagrange2's (at rtol 1e-11 over 3 s the forms differ by up to
// 1.4e-9 rad/s in q3dot, hamilton 1.6e-9 from a reference at rtol 1e-13,
// lagrange2 5e-10). The configuration agrees to 1e-9 at rtol 1e-11; at rtol
// 1e-13 everything agrees to 1e-10 (measured 1.2e-11): the same equations.
TEST(HamiltonJointCoordinates, SpatialChainMovesAsLagrange2) {
  const std::string yaml = testing::ReadSourceFile("examples/spatial_chain_3r.yaml");
  ExpectSameMotion(yaml, "chain.yaml", 3, {"q1", "q2", "q3", "x1", "z2", "x3", "y3", "z3"}, {"F1x", "F1y", "F1z"});
  ExpectSameMotion(yaml, "chain.yaml", 3, {"q1", "q2", "q3", "q1dot", "q2dot", "q3dot", "x3", "y3", "z3"}, {}, 1e-13,
                   1e-10);
}

TEST(HamiltonJointCoordinates, SpatialArmMovesAsLagrange2) {
  ExpectSameMotion(testing::ReadSourceFile("examples/B4_spatial_arm.yaml"), "B4.yaml", 3,
                   {"s", "sdot", "theta1", "theta2", "X3", "Y3", "Z3"}, {"FJ3x", "FJ3y", "FJ3z"});
}

// A planar double pendulum of two uniform rods about z, hanging along -y at
// the joint coordinates' zero, started at (0.9, -0.5) rad.
const char* kDoublePendulum = R"(name: double_pendulum
parameters: {m1: 1, m2: 0.6, L1: 1, L2: 0.8, g: 9.81}
multibody:
  gravity: [0, -g, 0]
  bodies:
    - {name: upper, mass: m1, inertia: [m1*L1^2/12, m1*L1^2/12, m1*L1^2/12], position: [0, -L1/2, 0]}
    - {name: lower, mass: m2, inertia: [m2*L2^2/12, m2*L2^2/12, m2*L2^2/12], position: [0, -L1 - L2/2, 0]}
  joints:
    - {name: shoulder, type: revolute, body1: ground, body2: upper, axis: [0, 0, 1], point2: [0, L1/2, 0],
       initial: [0.9, 0]}
    - {name: elbow, type: revolute, body1: upper, body2: lower, axis: [0, 0, 1], point1: [0, -L1/2, 0],
       point2: [0, L2/2, 0], initial: [-0.5, 0.7]}
outputs:
  q1: shoulder_angle
  q2: elbow_angle
  w1: shoulder_angledot
  w2: elbow_angledot
  x2: lower_x
  y2: lower_y
  F1x: shoulder_Fx
  F1y: shoulder_Fy
)";

TEST(HamiltonJointCoordinates, DoublePendulumMovesAsLagrange2) {
  ExpectSameMotion(kDoublePendulum, "dp.yaml", 5, {"q1", "q2", "w1", "w2", "x2", "y2"}, {"F1x", "F1y"});
}

// H = T + V is kept where nothing dissipates, and the energy balance
// (stored - delivered + dissipated) holds where something does.
void ExpectEnergyKept(const std::string& yaml, const std::string& label, double t_end, bool conservative) {
  const Solution s = SimulateForm(HamiltonModel(yaml, label, true), Formulation::kHamilton, t_end);
  const auto st = s.Column("energy_stored"), in = s.Column("energy_delivered"), out = s.Column("energy_dissipated");
  double err = 0, scale = 0;
  for (size_t i = 0; i < st.size(); ++i) {
    err = std::max(err, std::fabs(st[i] - st[0] - in[i] + out[i]));
    scale = std::max({scale, std::fabs(st[i]), std::fabs(in[i]), std::fabs(out[i])});
  }
  std::printf("%s: energy balance %.2e of %.2e\n", label.c_str(), err, scale);
  EXPECT_LT(err, 1e-10 * std::max(scale, 1.0)) << label;
  if (conservative) {
    EXPECT_EQ(Spread(out), 0.0) << label;
    EXPECT_GT(Spread(st), 0.1 * scale) << label << ": kinetic energy changed";
  } else {
    EXPECT_GT(out.back(), 1e-3) << label << ": the damper worked";
  }
}

TEST(HamiltonJointCoordinates, HamiltonianIsKept) {
  ExpectEnergyKept(Undamped(testing::ReadSourceFile("examples/B1_pendulum_3d.yaml"), "B"), "B1 undamped", 3, true);
  ExpectEnergyKept(Undamped(testing::ReadSourceFile("examples/spatial_chain_3r.yaml"), "c2"), "chain undamped", 3,
                   true);
  ExpectEnergyKept(kDoublePendulum, "double pendulum", 5, true);
  ExpectEnergyKept(testing::ReadSourceFile("examples/spatial_chain_3r.yaml"), "chain", 3, false);
}

// Closed chains: the joint that closes a loop keeps its constraint rows, in
// joint coordinates, as multipliers solved with the momentum derivatives
// (the I field's ports all in integral causality), as under lagrange1.
std::string WithoutBodyVelocities(const std::string& yaml) {
  return std::regex_replace(yaml, std::regex(",\\s*velocity: \\[[^\\]]*\\],\\s*angular_velocity: \\[[^\\]]*\\]\\}"),
                            "}");
}

void ExpectSameMotionAsLagrange1(const std::string& yaml, const std::string& label,
                                 const std::vector<std::string>& columns, const std::vector<std::string>& forces) {
  ModelSpec spec = ReadModelSpec(yaml, label);
  ExpandMultibodyInJointCoordinates(&spec, /*cut_joints_as_multipliers=*/true);
  ExpandVectorBonds(&spec);
  Model lag1_model = BuildModel(spec);
  const EquationSystem lag1_eqs = Equations(lag1_model, Formulation::kLagrange1);
  CompiledModel cm(lag1_eqs);
  ConstrainedOptions co;
  co.source = &lag1_model;
  const Solution lag1 = SimulateConstrained(cm, Tight(2), co);
  const Solution ham = SimulateForm(HamiltonModel(yaml, label), Formulation::kHamilton, 2);
  for (const auto& c : columns) {
    const double d = MaxDiff(ham.Column(c), lag1.Column(c));
    std::printf("%s %s: max |hamilton - lagrange1| %.2e\n", label.c_str(), c.c_str(), d);
    EXPECT_LT(d, 1e-9) << label << " " << c;
  }
  for (const auto& c : forces) EXPECT_LT(MaxDiff(ham.Column(c), lag1.Column(c)), 1e-7) << label << " " << c;
  EXPECT_GT(Spread(ham.Column(columns.front())), 0.1) << label << " moved";
}

TEST(HamiltonJointCoordinates, FourBarWithTheClosingJointAsMultipliers) {
  ExpectSameMotionAsLagrange1(WithoutBodyVelocities(testing::ReadSourceFile("examples/fourbar.yaml")), "fourbar.yaml",
                              {"crank_angle", "coupler_angle", "rocker_angle", "crank_rate", "coupler_y", "rocker_wz"},
                              {"FOx", "FOy", "FDx", "FDy"});
}

// B2: the guide's rows repeated out of the plane hold identically and go.
TEST(HamiltonJointCoordinates, HyperstaticSliderCrankWithMultipliers) {
  ExpectSameMotionAsLagrange1(testing::ReadSourceFile("examples/B2_slider_crank_hyperstatic.yaml"), "B2.yaml",
                              {"gamma", "gammadot", "rod_angle", "x_piston", "v_piston", "xG1", "yG2"},
                              {"FOx", "FOy", "FAx", "FBy", "FPy"});
}

// ---- Storage fields written by hand -----------------------------------------

// The same double pendulum as a scalar bond graph (the example): two
// joint-rate junctions, an I field with the rods' mass matrix and a C field
// with their potential, both written by hand in the relative angles.
const std::string kFieldPendulum = testing::ReadSourceFile("examples/double_pendulum_fields.yaml");

TEST(StorageFields, HandWrittenDoublePendulumMovesAsTheMechanism) {
  Model fields = LoadModelFromString(kFieldPendulum, "fields.yaml");
  ASSERT_EQ(fields.fields.size(), 2u);
  const EquationSystem eqs = Equations(fields, Formulation::kState);
  // The momenta and the C field's displacements are states; the flows make
  // one linear block M(q) f = p.
  for (const char* s : {"p_rods_1", "p_rods_2", "q_weight_1", "q_weight_2", "q1", "q2"})
    EXPECT_NE(std::find(eqs.state_names.begin(), eqs.state_names.end(), s), eqs.state_names.end()) << s;
  ASSERT_EQ(eqs.blocks.size(), 1u);
  EXPECT_TRUE(eqs.blocks[0].linear);
  EXPECT_EQ(eqs.blocks[0].unknowns.size(), 2u);
  const Solution hand = SimulateForm(std::move(fields), Formulation::kState, 5);
  const Solution lag2 = SimulateForm(Lagrange2Model(kDoublePendulum, "dp.yaml"), Formulation::kLagrange2, 5);
  for (const char* c : {"q1", "q2", "w1", "w2"}) {
    EXPECT_LT(MaxDiff(hand.Column(c), lag2.Column(c)), 1e-9) << c;
    EXPECT_GT(Spread(hand.Column(c)), 0.1) << c;
  }
  // The C field's coordinate and the I field's integrate the same flow.
  EXPECT_LT(MaxDiff(hand.Column("a2"), hand.Column("q2")), 1e-9);
}

TEST(StorageFields, EnergyOfTheFieldsIsKept) {
  ModelSpec spec = ReadModelSpec(kFieldPendulum, "fields.yaml");
  ASSERT_TRUE(AddEnergyAccounting(&spec));
  const Solution s = SimulateForm(BuildModel(spec), Formulation::kState, 5);
  const auto st = s.Column("energy_stored");
  EXPECT_LT(Spread(st), 1e-10 * std::fabs(st[0]) + 1e-12);
}

TEST(StorageFields, ErrorsNameTheFieldAndWhatWasExpected) {
  const std::string& base = kFieldPendulum;
  auto error_with = [&](const std::string& from, const std::string& to) {
    const size_t at = base.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    std::string yaml = base;
    yaml.replace(at, from.size(), to);
    return ErrorOf([&] { LoadModelFromString(yaml, "fields.yaml"); });
  };
  std::string msg = error_with("[m2*(L2^2/3 + L1*L2/2*cos(q2)), m2*L2^2/3]", "[m2*L2^2/3, m2*L2^2/3]");
  EXPECT_NE(msg.find("fields.yaml:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the inertia matrix of I field 'rods' is not symmetric"), std::string::npos) << msg;
  msg = error_with("m2*L2^2/3]\n    # p", "-m2*L2^2/3]\n    # p");
  EXPECT_NE(msg.find("is not positive definite at the start"), std::string::npos) << msg;
  msg = error_with("m2*L2^2/3]\n    # p", "m2*L2^2/3 + f_w1]\n    # p");
  EXPECT_NE(msg.find("f_w1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the field's coordinates and parameters only"), std::string::npos) << msg;
  msg = error_with("{name: q2, of: w2, initial: -0.5}", "{name: q2, of: w1, initial: -0.5}");
  EXPECT_NE(msg.find("coordinate 'q2' of I field 'rods' integrates 'w1', not the flow of port 'rods_2'"),
            std::string::npos)
      << msg;
  msg = error_with("coordinates: [q1, q2]", "coordinates: [q1, q1]");
  EXPECT_NE(msg.find("coordinate 'q1' of storage field 'rods' is given twice"), std::string::npos) << msg;
  msg = error_with("      - [m2*(L2^2/3 + L1*L2/2*cos(q2)), m2*L2^2/3]\n", "");
  EXPECT_NE(msg.find("one row per port"), std::string::npos) << msg;
  // Lagrange's forms put every inertia in derivative causality: not an I field.
  Model m = LoadModelFromString(base, "fields.yaml");
  msg = ErrorOf([&] {
    CausalityOptions o;
    o.procedure = CausalityProcedure::kLaCAP;
    o.generalized = {m.FindElement("w1"), m.FindElement("w2")};
    BuildEquations(m, AssignCausality(m, o));
  });
  EXPECT_NE(msg.find("port 'rods_1' of I field 'rods' is in derivative causality"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--form state or hamilton"), std::string::npos) << msg;
}

}  // namespace
}  // namespace paynter
