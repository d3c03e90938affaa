// The methods for constrained mechanisms (paynter/constrained.h) on B1 and B2
// built from bodies and joints, against independent derivations in one
// coordinate: tests/b2_reference.h for the slider crank, the pendulum's
// equation (integrated here) for B1. Also the redundancy analysis (the
// slider crank's Table 4 of Boudon et al. 2019), drift, and assembly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "b2_reference.h"
#include "test_util.h"

namespace paynter {
namespace {

struct MethodRun {
  Solution solution;
  ConstrainedReport report;
};

CompiledModel CompileFile(const std::string& rel, ConstraintMethod method) {
  Model m = LoadModel(testing::SourcePath(rel), {.method = method});
  EquationSystem eqs = BuildEquations(m, AssignCausality(m));
  return CompiledModel(eqs);
}

MethodRun RunFile(const std::string& rel, ConstraintMethod method, double t_end, double rtol, double atol,
                  Method integrator = Method::kDopri5, bool stabilize = true) {
  CompiledModel cm = CompileFile(rel, method);
  SolverOptions so;
  so.method = integrator;
  so.t_end = t_end;
  so.rtol = rtol;
  so.atol = atol;
  ConstrainedOptions co;
  co.method = method;
  co.stabilize = stabilize;
  const Model source = LoadModel(testing::SourcePath(rel), {.method = method});  // zcp derives its DAE from it
  co.source = &source;
  MethodRun r;
  r.solution = SimulateConstrained(cm, so, co, &r.report);
  return r;
}

// Largest differences to the slider-crank reference: motion, piston velocity, in-plane joint forces.
struct B2Diff {
  double motion = 0, v_piston = 0, forces = 0;
};
B2Diff CompareB2(const Solution& sol, bool with_forces) {
  const auto t = sol.Column("t");
  const auto ref = testing::SolveB2Reference(t, 1e-4);
  const auto g = sol.Column("gamma"), gd = sol.Column("gammadot"), x = sol.Column("x_piston"),
             v = sol.Column("v_piston"), ra = sol.Column("rod_angle");
  B2Diff d;
  for (size_t i = 0; i < t.size(); ++i) {
    d.motion = std::max({d.motion, std::fabs(g[i] - ref[i].gamma), std::fabs(gd[i] - ref[i].gammadot),
                         std::fabs(x[i] - ref[i].x_piston), std::fabs(ra[i] - ref[i].rod_angle)});
    d.v_piston = std::max(d.v_piston, std::fabs(v[i] - ref[i].v_piston));
  }
  if (with_forces) {
    const auto fox = sol.Column("FOx"), foy = sol.Column("FOy"), fax = sol.Column("FAx"), fay = sol.Column("FAy");
    for (size_t i = 0; i < t.size(); ++i)
      d.forces = std::max({d.forces, std::fabs(fox[i] - ref[i].F.FOx), std::fabs(foy[i] - ref[i].F.FOy),
                           std::fabs(fax[i] - ref[i].F.FAx), std::fabs(fay[i] - ref[i].F.FAy)});
  }
  return d;
}

const char* kHyper = "examples/B2_slider_crank_hyperstatic.yaml";
const char* kIso = "examples/B2_slider_crank_isostatic.yaml";
const char* kB1 = "examples/B1_pendulum_3d.yaml";

TEST(ConstraintAnalysis, HyperstaticSliderCrankHasThreeRedundantConstraints) {
  CompiledModel cm = CompileFile(kHyper, ConstraintMethod::kLagrangeMultipliers);
  ModelWorkspace cm_ws(cm);
  const ConstraintAnalysis a = AnalyzeConstraints(cm_ws, 0, cm.initial_state());
  std::printf("%s", a.ToText().c_str());
  EXPECT_EQ(a.coordinates, 18);
  EXPECT_EQ(a.constraints, 20);
  EXPECT_EQ(a.rank, 17);
  EXPECT_EQ(a.mobility, 1);
  EXPECT_EQ(a.grubler, -2);
  int redundant = 0;
  for (const auto& r : a.rows) {
    if (!r.redundant) continue;
    ++redundant;
    EXPECT_EQ(r.joint, "P");  // the last joint of the loop, in model order
  }
  EXPECT_EQ(redundant, 3);
  EXPECT_NE(a.ToText().find("3 constraint(s) redundant"), std::string::npos);
}

TEST(ConstraintAnalysis, IsostaticSliderCrankAndPendulumHaveNone) {
  {
    CompiledModel cm = CompileFile(kIso, ConstraintMethod::kLagrangeMultipliers);
    ModelWorkspace cm_ws(cm);
    const ConstraintAnalysis a = AnalyzeConstraints(cm_ws, 0, cm.initial_state());
    EXPECT_EQ(a.coordinates, 18);
    EXPECT_EQ(a.constraints, 17);
    EXPECT_EQ(a.rank, 17);
    EXPECT_EQ(a.mobility, 1);
    EXPECT_FALSE(a.redundant());
  }
  {
    CompiledModel cm = CompileFile(kB1, ConstraintMethod::kLagrangeMultipliers);
    ModelWorkspace cm_ws(cm);
    const ConstraintAnalysis a = AnalyzeConstraints(cm_ws, 0, cm.initial_state());
    EXPECT_EQ(a.coordinates, 6);
    EXPECT_EQ(a.constraints, 5);
    EXPECT_EQ(a.mobility, 1);
    EXPECT_FALSE(a.redundant());
  }
}

TEST(LagrangeMultipliers, HyperstaticSliderCrankMatchesTheReference) {
  const MethodRun r = RunFile(kHyper, ConstraintMethod::kLagrangeMultipliers, 10, 1e-10, 1e-12);
  const B2Diff d = CompareB2(r.solution, true);
  std::printf("B2 hyperstatic, lagrange-multipliers: motion %.2e, v_piston %.2e, in-plane forces %.2e N, drift %.2e / "
              "%.2e\n",
              d.motion, d.v_piston, d.forces, r.report.max_position_drift, r.report.max_velocity_drift);
  EXPECT_LT(d.motion, 1e-7);
  EXPECT_LT(d.v_piston, 1e-7);
  EXPECT_LT(d.forces, 1e-5);  // in-plane forces are determined despite the redundancy
  EXPECT_LT(r.report.max_position_drift, 1e-10);
  EXPECT_LT(r.report.max_velocity_drift, 1e-10);
}

TEST(MinimalCoordinates, HyperstaticSliderCrankMatchesTheReference) {
  const MethodRun r = RunFile(kHyper, ConstraintMethod::kMinimalCoordinates, 10, 1e-10, 1e-12);
  const B2Diff d = CompareB2(r.solution, true);
  std::printf("B2 hyperstatic, minimal-coordinates: motion %.2e, v_piston %.2e, forces %.2e N, partitions %d, "
              "drift %.2e\n",
              d.motion, d.v_piston, d.forces, r.report.partitions, r.report.max_position_drift);
  EXPECT_LT(d.motion, 1e-7);
  EXPECT_LT(d.v_piston, 1e-7);
  EXPECT_LT(d.forces, 1e-5);
  EXPECT_LT(r.report.max_position_drift, 1e-11);
  // One degree of freedom: one independent momentum among the 18.
  int momenta = 0;
  for (const auto& s : r.report.independent) momenta += s.rfind("p_", 0) == 0;
  EXPECT_EQ(momenta, 1);
}

TEST(MinimalCoordinates, IsostaticSliderCrankMatchesTheReference) {
  const MethodRun r = RunFile(kIso, ConstraintMethod::kMinimalCoordinates, 10, 1e-10, 1e-12);
  const B2Diff d = CompareB2(r.solution, true);
  EXPECT_LT(d.motion, 1e-7);
  EXPECT_LT(d.forces, 1e-5);
}

TEST(Zcp, SliderCrankBothJointSetsMatchTheReference) {
  // IDA on the DAE of the rigid joints (joint efforts as algebraic variables).
  for (const char* file : {kIso, kHyper}) {
    const MethodRun r = RunFile(file, ConstraintMethod::kZcp, 10, 1e-10, 1e-12);
    const B2Diff d = CompareB2(r.solution, true);
    std::printf("%s, zcp (IDA): motion %.2e, v_piston %.2e, forces %.2e N, drift %.2e / %.2e%s\n", file, d.motion,
                d.v_piston, d.forces, r.report.max_position_drift, r.report.max_velocity_drift,
                r.report.zcp_note.empty() ? "" : " (velocity level)");
    EXPECT_LT(d.motion, 1e-6);
    EXPECT_LT(d.v_piston, 1e-6);
    EXPECT_LT(d.forces, 1e-4);
    EXPECT_LT(r.report.max_position_drift, 1e-7);
    EXPECT_GT(r.report.algebraic, 0);
  }
}

TEST(Parasitic, SliderCrankWithinThePapersAccuracy) {
  // Boudon et al. reach 4e-3 m/s on the piston velocity with 1e7 N/m, 200 N s/m.
  for (const char* file : {kHyper, kIso}) {
    const MethodRun r = RunFile(file, ConstraintMethod::kParasitic, 10, 1e-8, 1e-10, Method::kBDF);
    const B2Diff d = CompareB2(r.solution, false);
    std::printf("%s, parasitic (BDF): v_piston %.2e m/s, motion %.2e, largest stretch %.2e\n", file, d.v_piston,
                d.motion, r.report.max_position_drift);
    EXPECT_LT(d.v_piston, 4e-3);
    EXPECT_GT(r.report.max_position_drift, 0);      // the joints do stretch
    EXPECT_LT(r.report.max_position_drift, 1e-4);   // but little
  }
}

// B1 in its angle from (g0, w0): (I + M L^2/4) g'' = -B g' - M g (L/2) cos g,
// RK4 with steps of at most 1e-5 between the output times.
std::vector<std::pair<double, double>> PendulumReference(const std::vector<double>& times, double g0 = 0,
                                                         double w0 = 0) {
  const double I = 0.083 + 0.25, B = 10, c = 9.81 * 0.5;
  auto f = [&](double g, double w) { return std::pair<double, double>{w, (-B * w - c * std::cos(g)) / I}; };
  double g = g0, w = w0, t = 0;
  std::vector<std::pair<double, double>> out;
  for (double tk : times) {
    const long n = std::max(1L, static_cast<long>(std::ceil((tk - t) / 1e-5)));
    const double h = (tk - t) / static_cast<double>(n);
    for (long i = 0; i < n && tk > t; ++i) {
      auto [a1, b1] = f(g, w);
      auto [a2, b2] = f(g + h / 2 * a1, w + h / 2 * b1);
      auto [a3, b3] = f(g + h / 2 * a2, w + h / 2 * b2);
      auto [a4, b4] = f(g + h * a3, w + h * b3);
      g += h / 6 * (a1 + 2 * a2 + 2 * a3 + a4);
      w += h / 6 * (b1 + 2 * b2 + 2 * b3 + b4);
    }
    t = tk;
    out.push_back({g, w});
  }
  return out;
}

TEST(AllMethods, PendulumAgreesWithItsEquation) {
  for (ConstraintMethod m : {ConstraintMethod::kLagrangeMultipliers, ConstraintMethod::kMinimalCoordinates,
                             ConstraintMethod::kZcp, ConstraintMethod::kParasitic}) {
    const bool rigid = m != ConstraintMethod::kParasitic;
    const MethodRun r = RunFile(kB1, m, 10, 1e-10, 1e-12, rigid ? Method::kDopri5 : Method::kBDF);
    const auto t = r.solution.Column("t"), g = r.solution.Column("gamma"), gd = r.solution.Column("gammadot");
    const auto ref = PendulumReference(t);
    double dg = 0, dw = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      dg = std::max(dg, std::fabs(g[i] - ref[i].first));
      dw = std::max(dw, std::fabs(gd[i] - ref[i].second));
    }
    std::printf("B1, %s: |d gamma| %.2e, |d gammadot| %.2e\n", ConstraintMethodName(m).c_str(), dg, dw);
    EXPECT_LT(dg, rigid ? 1e-8 : 1e-3);
    EXPECT_LT(dw, rigid ? 1e-7 : 1e-2);
  }
}

TEST(LagrangeMultipliers, ProjectionKeepsALongRunOnItsJoints) {
  // 200 s of the hyperstatic slider crank at a loose tolerance: without
  // projection the joints drift apart; with it they stay within 1e-10.
  const MethodRun on = RunFile(kHyper, ConstraintMethod::kLagrangeMultipliers, 200, 1e-6, 1e-8);
  const MethodRun off = RunFile(kHyper, ConstraintMethod::kLagrangeMultipliers, 200, 1e-6, 1e-8, Method::kDopri5, false);
  std::printf("B2 hyperstatic over 200 s at rtol 1e-6: position drift %.2e with projection, %.2e without\n",
              on.report.max_position_drift, off.report.max_position_drift);
  EXPECT_LT(on.report.max_position_drift, 1e-10);
  EXPECT_LT(on.report.max_velocity_drift, 1e-10);
  EXPECT_GT(off.report.max_position_drift, 100 * on.report.max_position_drift);
}

TEST(Assembly, InconsistentStartIsAnErrorNamingTheJointUnlessAssembled) {
  const std::string yaml = R"(
name: bad_start
multibody:
  gravity: [0, -9.81, 0]
  bodies:
    - {name: bar, mass: 1, inertia: [0.083, 0.083, 0.083], position: [0.52, 0.01, 0]}
  joints:
    - {name: pin, type: revolute, body1: ground, body2: bar, axis: [0, 0, 1], point2: [-0.5, 0, 0]}
outputs:
  x: bar_x
  y: bar_y
)";
  Model m = LoadModelFromString(yaml, "bad_start.yaml");
  CompiledModel cm(BuildEquations(m, AssignCausality(m)));
  SolverOptions so;
  so.t_end = 1;
  ConstrainedOptions co;
  co.method = ConstraintMethod::kLagrangeMultipliers;
  try {
    SimulateConstrained(cm, so, co);
    ADD_FAILURE() << "an inconsistent start was accepted";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("not consistent with the joints"), std::string::npos) << msg;
    EXPECT_NE(msg.find("pin"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--assemble"), std::string::npos) << msg;
  }
  co.assemble = true;
  ConstrainedReport rep;
  const Solution sol = SimulateConstrained(cm, so, co, &rep);
  EXPECT_GT(rep.assembly.position_correction, 1e-3);
  // Assembled: the centre of mass is 0.5 from the pin throughout.
  const auto x = sol.Column("x"), y = sol.Column("y");
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(std::hypot(x[i], y[i]), 0.5, 1e-9);
}

// A copy of an example with text replaced (the joints given initial values).
std::string ExampleWith(const char* rel, const std::string& from, const std::string& to) {
  std::ifstream in(testing::SourcePath(rel));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

Solution RunText(const std::string& yaml, ConstraintMethod method, double t_end, bool assemble,
                 ConstrainedReport* report) {
  Model m = LoadModelFromString(yaml, "initial.yaml");
  CompiledModel cm(BuildEquations(m, AssignCausality(m)));
  SolverOptions so;
  so.t_end = t_end;
  so.rtol = 1e-10;
  so.atol = 1e-12;
  ConstrainedOptions co;
  co.method = method;
  co.assemble = assemble;
  co.source = &m;
  return SimulateConstrained(cm, so, co, report);
}

TEST(JointInitialValues, PendulumStartsFromItsJointAngleAndRate) {
  // B1 started at gamma = 0.7 rad with gammadot = -2 rad/s, given on the joint.
  const std::string yaml = ExampleWith(kB1, "point2: [-L/2, 0, 0], damping: B}",
                                       "point2: [-L/2, 0, 0], damping: B, initial: [0.7, -2]}");
  ConstrainedReport rep;
  const Solution sol = RunText(yaml, ConstraintMethod::kLagrangeMultipliers, 3, false, &rep);
  EXPECT_LT(rep.assembly.position_correction, 1e-12);  // consistent by construction
  EXPECT_LT(rep.assembly.velocity_correction, 1e-12);
  const auto t = sol.Column("t"), g = sol.Column("gamma"), gd = sol.Column("gammadot"), x = sol.Column("xG"),
             y = sol.Column("yG");
  // The pendulum's equation from (0.7, -2).
  const auto ref = PendulumReference(t, 0.7, -2);
  double err = 0;
  for (size_t i = 0; i < t.size(); ++i)
    err = std::max({err, std::fabs(g[i] - ref[i].first), std::fabs(gd[i] - ref[i].second),
                    std::fabs(x[i] - 0.5 * std::cos(ref[i].first)), std::fabs(y[i] - 0.5 * std::sin(ref[i].first))});
  std::printf("B1 from joint initial values (0.7 rad, -2 rad/s): max error %.2e\n", err);
  EXPECT_LT(err, 1e-8);
}

TEST(JointInitialValues, SliderCrankAssembledFromTheCrankAngle) {
  // The crank's joint at gamma = 1 rad, 3 rad/s: the tree of joints places the
  // crank, rod and piston (the prismatic joint closes the loop off); the
  // assembly then closes it. Compared with the reference started there.
  const std::string yaml = ExampleWith(kHyper, "damping: bO, actuator: tau}", "damping: bO, actuator: tau, initial: [1, 3]}");
  ConstrainedReport rep;
  try {
    RunText(yaml, ConstraintMethod::kLagrangeMultipliers, 1, false, &rep);
    ADD_FAILURE() << "a start that does not close was accepted without --assemble";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not consistent with the joints"), std::string::npos) << e.what();
  }
  for (ConstraintMethod m : {ConstraintMethod::kLagrangeMultipliers, ConstraintMethod::kMinimalCoordinates}) {
    const Solution sol = RunText(yaml, m, 2, true, &rep);
    const auto t = sol.Column("t"), g = sol.Column("gamma"), x = sol.Column("x_piston");
    // The crank is held where its joint puts it (1 rad, 3 rad/s); the rod and
    // the piston are moved to close the loop.
    testing::B2State x0{};
    x0.gamma = g[0];
    x0.gammadot = sol.Column("gammadot")[0];
    const auto ref = testing::SolveB2Reference(t, 1e-4, {}, &x0);
    double err = 0;
    for (size_t i = 0; i < t.size(); ++i)
      err = std::max({err, std::fabs(g[i] - ref[i].gamma), std::fabs(x[i] - ref[i].x_piston)});
    std::printf("B2 from the crank's initial angle (%s): assembly moved positions by %.2e; start gamma %.6f, "
                "gammadot %.6f; max error %.2e\n",
                ConstraintMethodName(m).c_str(), rep.assembly.position_correction, g[0], x0.gammadot, err);
    EXPECT_GT(rep.assembly.position_correction, 1e-3);
    EXPECT_NEAR(g[0], 1.0, 1e-12);
    EXPECT_NEAR(x0.gammadot, 3.0, 1e-9);
    EXPECT_LT(err, 1e-7);
  }
  // The same from the model file: `assemble: true` under multibody.
  std::string with_setting = yaml;
  with_setting.replace(with_setting.find("multibody:\n"), 11, "multibody:\n  assemble: true\n");
  EXPECT_NO_THROW(RunText(with_setting, ConstraintMethod::kLagrangeMultipliers, 0.1, false, &rep));
}

TEST(JointInitialValues, ErrorsAreLocated) {
  const std::string both = ExampleWith(kB1, "position: [L/2, 0, 0]}", "position: [L/2, 0, 0], velocity: [0, 1, 0]}");
  const std::string yaml = ExampleWith("examples/B1_pendulum_3d.yaml", "damping: B}", "damping: B, initial: 0.3}");
  EXPECT_NO_THROW(LoadModelFromString(yaml, "ok.yaml"));
  std::string text = both;
  const auto at = text.find("damping: B}");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 11, "damping: B, initial: 0.3}");
  try {
    LoadModelFromString(text, "both.yaml");
    ADD_FAILURE() << "a body velocity beside joint initial values was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("initial: [coordinate, rate]"), std::string::npos) << e.what();
  }
  try {
    LoadModelFromString(ExampleWith(kB1, "damping: B}", "damping: B, initial: [1, 2, 3]}"), "three.yaml");
    ADD_FAILURE() << "three initial values were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[coordinate, rate]"), std::string::npos) << e.what();
  }
}

// Two masses made one by a constraint source on the 0-junction of their
// relative velocity, pushed by F against a spring: (m1 + m2) x'' = F - k x,
// x = F/k (1 - cos t) with k = m1 + m2 (a bond graph written by hand).
const char* kTwoMassesJoined = R"(
name: two_masses_joined
parameters: {m1: 1, m2: 2, k: 3, F: 1}
elements:
  - {name: push, kind: Se, effort: F}
  - {name: v1, kind: '1'}
  - {name: m1i, kind: I, inertance: m1}
  - {name: v2, kind: '1'}
  - {name: m2i, kind: I, inertance: m2}
  - {name: spring, kind: C, stiffness: k}
  - {name: rigid, kind: '0'}
  - {name: lam, kind: Se, constraint: 0, position: x1 - x2}
bonds:
  - [push, v1]
  - [v1, m1i]
  - [v2, m2i]
  - [v2, spring]
  - [v1, rigid]
  - [rigid, v2]
  - [rigid, lam]
displacements:
  - {name: x1, of: v1}
  - {name: x2, of: v2}
outputs:
  x1: x1
  x2: x2
  force: e_lam
)";

TEST(AllMethods, HandWrittenBondGraphWithAConstraintSource) {
  // Two masses made one by a constraint source on the 0-junction of their
  // relative velocity, pushed by F against a spring: (m1 + m2) x'' = F - k x,
  // x = F/k (1 - cos t) with k = m1 + m2; the force between them is
  // F - m1 x'' = F - (F/k) m1 cos t.
  const std::string yaml = kTwoMassesJoined;
  for (ConstraintMethod m : {ConstraintMethod::kLagrangeMultipliers, ConstraintMethod::kMinimalCoordinates,
                             ConstraintMethod::kZcp, ConstraintMethod::kParasitic}) {
    ModelSpec spec = ReadModelSpec(yaml, "two_masses.yaml");
    if (m == ConstraintMethod::kParasitic) ApplyParasitic(&spec, {});
    Model model = BuildModel(spec);
    CompiledModel cm(BuildEquations(model, AssignCausality(model)));
    SolverOptions so;
    so.t_end = 10;
    so.rtol = 1e-10;
    so.atol = 1e-12;
    if (m == ConstraintMethod::kParasitic) so.method = Method::kBDF;
    ConstrainedOptions co;
    co.method = m;
    co.source = &model;
    const Solution sol = SimulateConstrained(cm, so, co);
    const auto t = sol.Column("t"), x1 = sol.Column("x1"), x2 = sol.Column("x2"), f = sol.Column("force");
    double dx = 0, df = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      const double x = (1 - std::cos(t[i])) / 3;
      dx = std::max({dx, std::fabs(x1[i] - x), std::fabs(x2[i] - x)});
      if (t[i] > 1) df = std::max(df, std::fabs(std::fabs(f[i]) - std::fabs(1 - std::cos(t[i]) / 3)));
    }
    std::printf("two masses joined, %s: |d x| %.2e, |d force| (t > 1) %.2e\n", ConstraintMethodName(m).c_str(), dx,
                df);
    const bool rigid = m != ConstraintMethod::kParasitic;
    EXPECT_LT(dx, rigid ? 1e-8 : 1e-5);
    EXPECT_LT(df, rigid ? 1e-7 : 1e-2);
  }
}

TEST(EnergyBalance, ClosedChainByEveryRigidMethod) {
  // Stored energy - its start = work of the sources (torque, gravity,
  // constraint forces) - energy dissipated, on the hyperstatic slider crank.
  for (ConstraintMethod m : {ConstraintMethod::kLagrangeMultipliers, ConstraintMethod::kMinimalCoordinates,
                             ConstraintMethod::kZcp}) {
    Model model = LoadModel(testing::SourcePath(kHyper), {.method = m, .energy = true});
    CompiledModel cm(BuildEquations(model, AssignCausality(model)));
    SolverOptions so;
    so.t_end = 10;
    so.rtol = 1e-10;
    so.atol = 1e-12;
    ConstrainedOptions co;
    co.method = m;
    co.source = &model;
    const Solution sol = SimulateConstrained(cm, so, co);
    const auto st = sol.Column("energy_stored"), in = sol.Column("energy_delivered"),
               out = sol.Column("energy_dissipated");
    double err = 0, scale = 0;
    for (size_t i = 0; i < st.size(); ++i) {
      err = std::max(err, std::fabs(st[i] - st[0] - in[i] + out[i]));
      scale = std::max(scale, std::fabs(out[i]));
    }
    std::printf("B2 hyperstatic energy balance, %s: %.2e J of %.1f J dissipated\n", ConstraintMethodName(m).c_str(),
                err, scale);
    EXPECT_GT(scale, 100);  // the torque's work, mostly dissipated (reference: 435 J at 10 s)
    EXPECT_LT(err / scale, 1e-8);
  }
}

TEST(Methods, NamesAndErrors) {
  for (const char* n : {"auto", "zcp", "parasitic", "lagrange-multipliers", "minimal-coordinates"})
    EXPECT_EQ(ConstraintMethodName(ParseConstraintMethod(n)), n);
  EXPECT_THROW(ParseConstraintMethod("lagrange"), Error);
  // A model without joints: the rigid methods say so.
  Model m = LoadModelFromString("name: rc\nparameters: {R: 1, C: 1}\nelements:\n"
                                "  - {name: c, kind: C, capacitance: C, initial: 1}\n"
                                "  - {name: r, kind: R, resistance: R}\n  - {name: j, kind: '0'}\n"
                                "bonds:\n  - [j, c]\n  - [j, r]\n",
                                "rc.yaml");
  CompiledModel cm(BuildEquations(m, AssignCausality(m)));
  SolverOptions so;
  so.t_end = 1;
  ConstrainedOptions co;
  co.method = ConstraintMethod::kMinimalCoordinates;
  EXPECT_THROW(SimulateConstrained(cm, so, co), Error);
  co.method = ConstraintMethod::kAuto;
  EXPECT_NO_THROW(SimulateConstrained(cm, so, co));
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

// The open chain of examples/make_chain.py with n links.
std::string ChainFile(int n) {
  const std::string path = ::testing::TempDir() + "chain_" + std::to_string(n) + ".yaml";
  const std::string cmd =
      "python3 " + testing::SourcePath("examples/make_chain.py") + " " + std::to_string(n) + " -o " + path;
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
  return path;
}

TEST(MinimalCoordinates, OpenChainAgreesWithLagrangeMultipliers) {
  // The 8-link spatial chain over 2 s: its first partition reaches a fold (a
  // body coordinate chosen independent at its extreme, t = 1.16 s) where the
  // dependent positions used to follow the wrong branch (1e-4 off
  // lagrange-multipliers by 2 s; on 16 links the Newton iteration stalled and
  // the run stopped). Both rigid methods on one compiled model with the
  // energy balance; the chain has no damping, so stored energy = work of
  // gravity and of the joints' forces.
  const std::string path = ChainFile(8);
  Model model = LoadModel(path, {.method = ConstraintMethod::kMinimalCoordinates, .energy = true});
  CompiledModel cm(BuildEquations(model, AssignCausality(model)));
  SolverOptions so;
  so.t_end = 2;
  so.rtol = 1e-10;
  so.atol = 1e-12;
  ConstrainedOptions co;
  co.source = &model;
  auto balance = [](const Solution& sol, double* scale) {
    const auto st = sol.Column("energy_stored"), in = sol.Column("energy_delivered"),
               out = sol.Column("energy_dissipated");
    double err = 0;
    *scale = 0;
    for (size_t i = 0; i < st.size(); ++i) {
      err = std::max(err, std::fabs(st[i] - st[0] - in[i] + out[i]));
      *scale = std::max(*scale, std::fabs(st[i] - st[0]));
    }
    return err;
  };
  co.method = ConstraintMethod::kLagrangeMultipliers;
  const Solution ref = SimulateConstrained(cm, so, co);
  co.method = ConstraintMethod::kMinimalCoordinates;
  ConstrainedReport report;
  const Solution sol = SimulateConstrained(cm, so, co, &report);
  ASSERT_EQ(sol.rows.size(), ref.rows.size());
  double diff = 0;
  for (const char* c : {"q1", "qN", "xN", "yN", "zN"}) {
    const auto a = sol.Column(c), b = ref.Column(c);
    for (size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::fabs(a[i] - b[i]));
  }
  double scale = 0, scale_ref = 0;
  const double err = balance(sol, &scale), err_ref = balance(ref, &scale_ref);
  std::printf("chain N = 8, 2 s: minimal vs lagrange %.2e; energy balance %.2e J (lagrange %.2e J) of %.1f J; "
              "partitions %d, position drift %.2e\n",
              diff, err, err_ref, scale, report.partitions, report.max_position_drift);
  EXPECT_GE(report.partitions, 2);  // the fold was seen
  EXPECT_LT(diff, 1e-6);
  EXPECT_GT(scale, 10);
  EXPECT_LT(err / scale, 1e-7);
  EXPECT_LT(report.max_position_drift, 1e-10);
}

// zcp prepares its break-variable model with the symbolic stages (kept in the
// stage cache with the model's own): a run does no symbolic work, a warm
// PrepareModel builds nothing, and a run with another value of a parameter
// (a sweep's) takes it into the DAE's dynamics too. Before, the run built the
// break-variable model from the prepared Model, with the prepared values: F
// was 1 in the dynamics and the joint held x1 = x2 on the wrong motion.
TEST(Zcp, PreparedOnceCachedAndRunWithTheRunsParameters) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("paynter-zcp-{}", ::getpid());
  std::filesystem::create_directories(dir);
  testing::ScopedEnv cache("XDG_CACHE_HOME", (dir / "cache").c_str());
  testing::WriteFileBytes(dir / "joined.yaml", kTwoMassesJoined);
  RunOptions o;
  o.file = (dir / "joined.yaml").string();
  o.constraints = ConstraintMethod::kZcp;
  o.backend = Backend::kTape;
  o.t_end = 10;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  o.progress = false;
  const PreparedModel cold = PrepareModel(o);
  ASSERT_NE(cold.method_model(), nullptr);
  EXPECT_FALSE(cold.stages_cached());
  const PreparedModel warm = PrepareModel(o);
  EXPECT_TRUE(warm.stages_cached()) << warm.stage_note();
  ASSERT_NE(warm.method_model(), nullptr);
  EXPECT_EQ(warm.model(), nullptr);  // nothing symbolic was built
  for (double force : {1.0, 2.0}) {
    RunOptions r = o;
    if (force != 1) r.params = {{"F", force}};
    ASSERT_TRUE(warm.parameter_settable("F"));
    const RunResult a = RunPrepared(warm, warm.compiled(), r);
    const RunResult b = RunPrepared(cold, cold.compiled(), r);
    EXPECT_EQ(a.report.method, ConstraintMethod::kZcp);
    const auto t = a.solution.Column("t"), x1 = a.solution.Column("x1"), x2 = a.solution.Column("x2");
    ASSERT_EQ(x1, b.solution.Column("x1"));  // the cached preparation runs bit for bit as the built one
    double dx = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      const double x = force / 3 * (1 - std::cos(t[i]));
      dx = std::max({dx, std::fabs(x1[i] - x), std::fabs(x2[i] - x)});
    }
    EXPECT_LT(dx, 1e-8) << "F = " << force;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace paynter
