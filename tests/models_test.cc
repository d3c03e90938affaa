// Whole models against analytic solutions, conserved quantities and
// independent formulations of the same problem.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"
#include "test_models.h"

namespace paynter {
namespace {

using testing::SimulateFile;
using testing::SimulateModel;
using testing::SimulateYaml;

double MaxAbsDiff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

TEST(Analytic, RcDischarge) {
  auto r = SimulateYaml(R"(
parameters: {R: 2, C: 0.5, q0: 3}
elements:
  - {name: cap, kind: C, capacitance: C, initial: q0}
  - {name: node, kind: "0"}
  - {name: res, kind: R, resistance: R}
bonds: [[node, cap], [node, res]]
outputs: {q: q_cap, v: e_node}
)", 5.0);
  const auto t = r.solution.Column("t"), q = r.solution.Column("q"), v = r.solution.Column("v");
  double err = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    err = std::max(err, std::abs(q[i] - 3 * std::exp(-t[i] / 1.0)));
    EXPECT_NEAR(v[i], q[i] / 0.5, 1e-12);
  }
  EXPECT_LT(err, 1e-9);
  EXPECT_DOUBLE_EQ(t.back(), 5.0);
}

TEST(Analytic, MassSpringDamperStepResponse) {
  auto r = SimulateFile("examples/mass_spring_damper.yaml", 6.0);
  // m = 2, k = 50, c = 4, F = 10: wn = 5, zeta = 0.2.
  const double wn = 5, z = 0.2, wd = wn * std::sqrt(1 - z * z), xs = 10.0 / 50.0;
  const auto t = r.solution.Column("t"), x = r.solution.Column("x"), v = r.solution.Column("velocity");
  double ex = 0, ev = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const double e = std::exp(-z * wn * t[i]);
    const double xa = xs * (1 - e * (std::cos(wd * t[i]) + z / std::sqrt(1 - z * z) * std::sin(wd * t[i])));
    const double va = xs * e * wn / std::sqrt(1 - z * z) * std::sin(wd * t[i]);
    ex = std::max(ex, std::abs(x[i] - xa));
    ev = std::max(ev, std::abs(v[i] - va));
  }
  EXPECT_LT(ex, 1e-9);
  EXPECT_LT(ev, 1e-8);
}

TEST(Conservation, UndampedLcKeepsItsEnergyOver100Periods) {
  // L = 0.5, C = 2: omega = 1, period 2 pi.
  auto r = SimulateYaml(R"(
parameters: {L: 0.5, C: 2, q0: 1}
elements:
  - {name: coil, kind: I, inertance: L}
  - {name: j, kind: "0"}
  - {name: cap, kind: C, capacitance: C, initial: q0}
bonds: [[j, coil], [j, cap]]
outputs:
  q: q_cap
  energy: p_coil^2/(2*L) + q_cap^2/(2*C)
)", 200 * M_PI, 1e-12, 1e-14);
  const auto t = r.solution.Column("t"), q = r.solution.Column("q"), e = r.solution.Column("energy");
  const double e0 = 0.25;  // q0^2 / (2 C)
  double drift = 0, qerr = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    drift = std::max(drift, std::abs(e[i] - e0) / e0);
    qerr = std::max(qerr, std::abs(q[i] - std::cos(t[i])));
  }
  EXPECT_LT(drift, 1e-8) << "relative energy drift over 100 periods";
  EXPECT_LT(qerr, 1e-7);
}

TEST(AlgebraicLoop, ResistiveLoopMatchesTheveninSolution) {
  // Current source I0 into node a (R1 to ground), R2 from a to c, c has R3 || C.
  // Seen from C: Thevenin source I0 R1 behind R1 + R2, in parallel with R3.
  auto r = SimulateYaml((std::string(testing::kResistiveLoop) + R"(outputs: {vc: e_c, va: e_a}
)"), 5.0);
  ASSERT_EQ(r.equations.blocks.size(), 1u);
  const double Vth = 2 * 1, Rth = 3, R3 = 3, C = 0.5;
  const double Rp = Rth * R3 / (Rth + R3), vinf = Vth * R3 / (Rth + R3), tau = Rp * C;
  const auto t = r.solution.Column("t"), vc = r.solution.Column("vc"), va = r.solution.Column("va");
  double err = 0, kcl = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    err = std::max(err, std::abs(vc[i] - vinf * (1 - std::exp(-t[i] / tau))));
    kcl = std::max(kcl, std::abs(2 - va[i] / 1 - (va[i] - vc[i]) / 2));  // current balance at a
  }
  EXPECT_LT(err, 1e-9);
  EXPECT_LT(kcl, 1e-12);
}

TEST(DerivativeCausality, InertiasCoupledByGearMatchClosedForm) {
  // tau on shaft 1 (J1), gear n, J2 with damping b on shaft 2:
  // (J1 + n^2 J2) w1' = tau - n^2 b w1 -> w1 = tau/(n^2 b) (1 - exp(-n^2 b t / J)).
  auto r = SimulateYaml((std::string(testing::kGearCoupledInertias) + R"(outputs: {w1: f_w1, w2: f_w2, torque2: e_I2}
)"), 10.0);
  ASSERT_EQ(r.equations.blocks.size(), 1u);
  EXPECT_TRUE(r.equations.blocks[0].derivative_causality);
  const double J = 0.2 + 9 * 0.7, k = 9 * 0.4, winf = 1.5 / k;
  const auto t = r.solution.Column("t"), w1 = r.solution.Column("w1"), w2 = r.solution.Column("w2"),
             tq = r.solution.Column("torque2");
  double err = 0, err_rigid = 0, err_torque = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const double w = winf * (1 - std::exp(-k * t[i] / J));
    const double wdot = winf * k / J * std::exp(-k * t[i] / J);
    err = std::max(err, std::abs(w1[i] - w));
    err_rigid = std::max(err_rigid, std::abs(w2[i] - 3 * w1[i]));
    err_torque = std::max(err_torque, std::abs(tq[i] - 0.7 * 3 * wdot));  // J2 d/dt(n w1)
  }
  EXPECT_LT(err, 1e-9);
  EXPECT_LT(err_rigid, 1e-13);
  EXPECT_LT(err_torque, 1e-8);
}

// A chain of transformers with distinct ratios r_i between 1-junctions, a
// source E at the start and a load (inertance m, resistance RL) at the end
// (the shape of bench/make_tf_chain.py). The junction flows are P_i f0, with
// P_i = r_1 ... r_i. With inertias c at the stages, all of them are in
// derivative causality and the load flow rises as E / (RL P_N) (1 - exp(-t/T)),
// T = (m + c S / P_N^2) / RL, S = sum P_i^2: the steady-state gain is the
// product of the ratios. With dampers c instead, f_N = P_N E / (c S + RL P_N^2)
// (1 - exp(-t/T)), T = m P_N^2 / (c S + RL P_N^2).
std::string TransformerChain(const std::vector<double>& ratios, const std::string& stage) {
  std::string y = "parameters: {E: 2, c: 0.05, m: 0.1, RL: 1.5}\nelements:\n";
  y += "  - {name: source, kind: Se, effort: E}\n  - {name: j0, kind: \"1\"}\n";
  std::string bonds = "bonds:\n  - [source, j0]\n";
  const std::string law = stage == "I" ? "inertance" : "resistance";
  for (size_t i = 1; i <= ratios.size(); ++i) {
    const std::string k = std::to_string(i), prev = std::to_string(i - 1);
    y += "  - {name: tf" + k + ", kind: TF, ratio: " + std::to_string(ratios[i - 1]) + "}\n";
    y += "  - {name: j" + k + ", kind: \"1\"}\n";
    y += "  - {name: s" + k + ", kind: " + stage + ", " + law + ": c}\n";
    bonds += "  - [j" + prev + ", tf" + k + "]\n  - [tf" + k + ", j" + k + "]\n  - [j" + k + ", s" + k + "]\n";
  }
  const std::string last = "j" + std::to_string(ratios.size());
  y += "  - {name: load, kind: I, inertance: m}\n  - {name: load_R, kind: R, resistance: RL}\n";
  bonds += "  - [" + last + ", load]\n  - [" + last + ", load_R]\n";
  return y + bonds + "outputs: {f_in: f_j0, f_out: f_" + last + "}\n";
}

TEST(DerivativeCausality, TransformerChainGainIsTheProductOfTheRatios) {
  const std::vector<double> ratios = {1.5, 0.4, 2.5, 0.8, 1.2, 0.6, 3.0};  // std::to_string keeps them exact
  const double E = 2, c = 0.05, m = 0.1, RL = 1.5;
  double P = 1, S = 0;
  for (double r : ratios) {
    P *= r;
    S += P * P;
  }
  for (const std::string stage : {"I", "R"}) {
    SCOPED_TRACE("stage elements " + stage);
    auto run = SimulateYaml(TransformerChain(ratios, stage), 3.0);
    const double fin = stage == "I" ? E / (RL * P) : P * E / (c * S + RL * P * P);
    const double T = stage == "I" ? (m + c * S / (P * P)) / RL : m * P * P / (c * S + RL * P * P);
    if (stage == "I") {
      ASSERT_EQ(run.equations.blocks.size(), 1u);
      EXPECT_TRUE(run.equations.blocks[0].derivative_causality);
    } else {
      EXPECT_TRUE(run.equations.blocks.empty());
    }
    const auto t = run.solution.Column("t"), fo = run.solution.Column("f_out"), fi = run.solution.Column("f_in");
    ASSERT_FALSE(t.empty());
    double err = 0, err_rigid = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      err = std::max(err, std::abs(fo[i] - fin * (1 - std::exp(-t[i] / T))));
      err_rigid = std::max(err_rigid, std::abs(fo[i] - P * fi[i]));
    }
    EXPECT_LT(err, 1e-8);
    EXPECT_LT(err_rigid, 1e-12);
    EXPECT_NEAR(fo.back(), fin, 1e-6 * fin);  // 3 s is over 20 time constants
  }
}

TEST(NonlinearLoop, InvertedCubicResistorMatchesCardano) {
  // V -> 1 <- C, R with e = f + f^3: the flow needs the inverse law, by Newton.
  auto r = SimulateYaml(R"(
parameters: {V: 3, C: 0.8}
elements:
  - {name: src, kind: Se, effort: V}
  - {name: J, kind: "1"}
  - {name: cap, kind: C, capacitance: C}
  - {name: res, kind: R, effort: f + f^3}
bonds: [[src, J], [J, cap], [J, res]]
outputs: {q: q_cap, i: f_J}
)", 4.0);
  ASSERT_EQ(r.equations.blocks.size(), 1u);
  EXPECT_FALSE(r.equations.blocks[0].linear);
  // Reference: q' = g(V - q/C) with g the inverse of f + f^3 by Cardano's formula,
  // integrated with paynter's RK4 at a small step.
  auto inv = [](double e) {
    const double s = std::sqrt(e * e / 4 + 1.0 / 27);
    return std::cbrt(e / 2 + s) + std::cbrt(e / 2 - s);
  };
  OdeProblem p;
  p.n = 1;
  p.rhs = [&](double, const double* x, double* dx) { dx[0] = inv(3 - x[0] / 0.8); };
  SolverOptions so;
  so.method = Method::kRK4;
  so.t_end = 4;
  so.step = 1e-4;
  std::vector<double> ref;
  Integrate(p, {0.0}, so, [&](double, const double* x) { ref.push_back(x[0]); });
  EXPECT_LT(MaxAbsDiff(r.solution.Column("q"), ref), 1e-8);
}

// B1 against a hand-written ODE: JA gamma'' = -B gamma' - M g L/2 cos(gamma).
TEST(Benchmark, B1MatchesHandWrittenOde) {
  auto r = SimulateFile("examples/B1_pendulum.yaml", 10.0, 1e-12, 1e-14);
  const double L = 1, M = 1, Izz = 0.083, B = 10, g = 9.81, JA = Izz + M * L * L / 4;
  OdeProblem p;
  p.n = 2;
  p.rhs = [&](double, const double* x, double* dx) {
    dx[0] = x[1];
    dx[1] = (-B * x[1] - M * g * L / 2 * std::cos(x[0])) / JA;
  };
  SolverOptions so;
  so.method = Method::kRK4;
  so.t_end = 10;
  so.step = 2e-4;
  std::vector<double> gamma, gammadot;
  Integrate(p, {0.0, 0.0}, so, [&](double, const double* x) {
    gamma.push_back(x[0]);
    gammadot.push_back(x[1]);
  });
  EXPECT_LT(MaxAbsDiff(r.solution.Column("gamma"), gamma), 1e-9);
  EXPECT_LT(MaxAbsDiff(r.solution.Column("gammadot"), gammadot), 1e-8);
  const auto xg = r.solution.Column("xG"), yg = r.solution.Column("yG"), gm = r.solution.Column("gamma");
  for (size_t i = 0; i < xg.size(); ++i) {
    EXPECT_NEAR(xg[i], 0.5 * std::cos(gm[i]), 1e-14);
    EXPECT_NEAR(yg[i], 0.5 * std::sin(gm[i]), 1e-14);
  }
  // Overdamped (B^2 > 4 JA M g L/2): the bar falls monotonically towards
  // hanging down, gamma -> -pi/2, without overshoot.
  for (size_t i = 1; i < gm.size(); ++i) {
    EXPECT_LE(gm[i], gm[i - 1] + 1e-15);
    EXPECT_GT(gm[i], -M_PI / 2);
  }
  EXPECT_NEAR(gm.back(), -M_PI / 2, 2e-2);
}

// B1 again, as a second bond graph: the bar's mass on the velocities of G
// through two MTFs, so both I:M are in derivative causality. The two
// formulations must agree.
TEST(Benchmark, B1CartesianFormulationWithDerivativeCausalityAgrees) {
  auto cart = SimulateYaml((std::string(testing::kCartesianPendulum) + R"(outputs: {gamma: gamma, gammadot: f_pivot}
)"), 10.0, 1e-12, 1e-14);
  ASSERT_EQ(cart.equations.blocks.size(), 1u);
  EXPECT_TRUE(cart.equations.blocks[0].derivative_causality);
  EXPECT_TRUE(cart.equations.blocks[0].linear);
  auto b1 = SimulateFile("examples/B1_pendulum.yaml", 10.0, 1e-12, 1e-14);
  EXPECT_LT(MaxAbsDiff(cart.solution.Column("gamma"), b1.solution.Column("gamma")), 1e-9);
  EXPECT_LT(MaxAbsDiff(cart.solution.Column("gammadot"), b1.solution.Column("gammadot")), 1e-8);
}

TEST(Example, DcMotorMatchesReducedHandWrittenModel) {
  auto r = SimulateFile("examples/dc_motor_gear.yaml", 0.5);
  // Reduced by hand: La i' = V - Ra i - K w; (Jm + n^2 JL) w' = K i - (bm + n^2 bL) w.
  const double V = 12, Ra = 1.2, La = 0.005, K = 0.05, Jm = 2e-5, bm = 1e-5, n = 0.1, JL = 5e-3, bL = 2e-3;
  OdeProblem p;
  p.n = 2;
  p.rhs = [&](double, const double* x, double* dx) {
    dx[0] = (V - Ra * x[0] - K * x[1]) / La;
    dx[1] = (K * x[0] - (bm + n * n * bL) * x[1]) / (Jm + n * n * JL);
  };
  SolverOptions so;
  so.method = Method::kRK4;
  so.t_end = 0.5;
  so.step = 1e-6;
  std::vector<double> i_ref, w_ref;
  Integrate(p, {0.0, 0.0}, so, [&](double, const double* x) {
    i_ref.push_back(x[0]);
    w_ref.push_back(x[1]);
  });
  EXPECT_LT(MaxAbsDiff(r.solution.Column("current"), i_ref), 1e-7);
  EXPECT_LT(MaxAbsDiff(r.solution.Column("motor_speed"), w_ref), 1e-6);
  const auto wl = r.solution.Column("load_speed"), wm = r.solution.Column("motor_speed");
  for (size_t i = 0; i < wl.size(); ++i) EXPECT_NEAR(wl[i], n * wm[i], 1e-12);
}

TEST(Backends, TapeAndNativeAgree) {
  Model m = LoadModel(testing::SourcePath("examples/B1_pendulum.yaml"));
  auto tape = SimulateModel(m, 10, 1e-10, 1e-12, Method::kDopri5, 0, Backend::kTape);
  auto native = SimulateModel(m, 10, 1e-10, 1e-12, Method::kDopri5, 0, Backend::kAuto);
  EXPECT_LT(MaxAbsDiff(tape.solution.Column("gamma"), native.solution.Column("gamma")), 1e-12);
}

TEST(Methods, Rk4AndBdfAgreeWithDopri5OnB1) {
  Model m = LoadModel(testing::SourcePath("examples/B1_pendulum.yaml"));
  auto ref = SimulateModel(m, 10, 1e-11, 1e-13);
  auto bdf = SimulateModel(m, 10, 1e-9, 1e-11, Method::kBDF);
  EXPECT_LT(MaxAbsDiff(bdf.solution.Column("gamma"), ref.solution.Column("gamma")), 1e-5);
  auto rk4 = SimulateModel(m, 10, 1e-6, 1e-9, Method::kRK4);  // default step 1e-3; tolerances unused
  EXPECT_LT(MaxAbsDiff(rk4.solution.Column("gamma"), ref.solution.Column("gamma")), 1e-8);
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

TEST(Conservation, RateDisplacementsBalanceTheEnergyOfTheRlc) {
  // Work of the source = stored energy + energy dissipated, with W and D
  // integrated as displacements given by a rate.
  auto r = testing::SimulateYaml(R"(
parameters: {V: 5, R: 10, L: 0.1, C: 1e-3}
elements:
  - {name: src, kind: Se, effort: V}
  - {name: J, kind: "1"}
  - {name: coil, kind: I, inertance: L}
  - {name: res, kind: R, resistance: R}
  - {name: cap, kind: C, capacitance: C}
bonds: [[src, J], [J, coil], [J, res], [J, cap]]
displacements:
  - {name: W, rate: e_src*f_src}
  - {name: D, rate: e_res*f_res}
outputs:
  balance: W - D - (p_coil^2/(2*L) + q_cap^2/(2*C))
  W: W
)", 0.2);
  const auto bal = r.solution.Column("balance"), w = r.solution.Column("W");
  for (size_t i = 0; i < bal.size(); ++i) EXPECT_NEAR(bal[i], 0, 1e-9 * std::max(1.0, w[i]));
  EXPECT_GT(w.back(), 0.01);
}

}  // namespace
}  // namespace paynter
