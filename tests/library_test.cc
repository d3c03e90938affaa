// The component library (library/, docs/library.md): every component in a
// small model whose solution is derived by hand, simulated and compared.
// Each test prints its largest error against the analytic solution.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>

#include "test_util.h"

namespace paynter {
namespace {

// The largest error of `column` against `exact(t)`, relative to the largest
// |exact| (absolute when that is 0).
double MaxRelError(const Solution& s, const std::string& column, const std::function<double(double)>& exact) {
  const auto t = s.Column("t"), x = s.Column(column);
  EXPECT_EQ(t.size(), x.size());
  EXPECT_GT(t.size(), 10u);
  double err = 0, scale = 0;
  for (size_t i = 0; i < t.size() && i < x.size(); ++i) {
    err = std::max(err, std::abs(x[i] - exact(t[i])));
    scale = std::max(scale, std::abs(exact(t[i])));
  }
  const double rel = scale > 0 ? err / scale : err;
  std::printf("  %-40s max relative error %.3g\n", column.c_str(), rel);
  return rel;
}

Solution SimulateLibraryModel(const std::string& yaml, double t_end, double atol = 1e-12) {
  return testing::SimulateModel(LoadModelFromString(yaml, "library_test.yaml"), t_end, 1e-10, atol,
                                Method::kDopri5, t_end / 200)
      .solution;
}

constexpr double kTol = 1e-7;  // dopri5 at rtol 1e-10 reaches ~1e-9

TEST(Electrical, RcDischargeThroughResistor) {
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: c, use: "lib:electrical/capacitor", parameters: {C: 0.5, v0: 6}}
  - {name: r, use: "lib:electrical/resistor", parameters: {R: 2}}
bonds: [[c.p, r.p]]
)", 5);
  EXPECT_LT(MaxRelError(s, "c.v", [](double t) { return 6 * std::exp(-t / 1.0); }), kTol);
  EXPECT_LT(MaxRelError(s, "r.v", [](double t) { return -6 * std::exp(-t / 1.0); }), kTol);
}

TEST(Electrical, RlCurrentRiseFromVoltageSource) {
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: s, use: "lib:electrical/voltage_source", parameters: {V: 3}}
  - {name: r, use: "lib:electrical/resistor", parameters: {R: 2}}
  - {name: l, use: "lib:electrical/inductor", parameters: {L: 0.5}}
bonds: [[s.p, r.p], [r.n, l.p]]
)", 2);
  EXPECT_LT(MaxRelError(s, "l.i", [](double t) { return 1.5 * (1 - std::exp(-4 * t)); }), kTol);
  EXPECT_LT(MaxRelError(s, "l.v", [](double t) { return 3 * std::exp(-4 * t); }), kTol);
}

TEST(Electrical, CurrentSourceChargesCapacitor) {
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: s, use: "lib:electrical/current_source", parameters: {I: 2}}
  - {name: c, use: "lib:electrical/capacitor", parameters: {C: 0.5}}
bonds: [[s.p, c.p]]
)", 3);
  EXPECT_LT(MaxRelError(s, "c.v", [](double t) { return 4 * t; }), kTol);
  EXPECT_LT(MaxRelError(s, "s.v", [](double t) { return 4 * t; }), kTol);
}

TEST(Electrical, TransformerScalesVoltageAndCurrent) {
  // v2 = V/n = 5 across R = 5, L = 1: i2 = 1 - exp(-5t); i1 = i2/n.
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: s, use: "lib:electrical/voltage_source", parameters: {V: 10}}
  - {name: tr, use: "lib:electrical/transformer", parameters: {n: 2}}
  - {name: r, use: "lib:electrical/resistor", parameters: {R: 5}}
  - {name: l, use: "lib:electrical/inductor", parameters: {L: 1}}
bonds: [[s.p, tr.p1], [tr.p2, r.p], [r.n, l.p]]
)", 2);
  EXPECT_LT(MaxRelError(s, "l.i", [](double t) { return 1 - std::exp(-5 * t); }), kTol);
  EXPECT_LT(MaxRelError(s, "s.i", [](double t) { return (1 - std::exp(-5 * t)) / 2; }), kTol);
}

TEST(Electrical, DcMotorReachesItsSteadySpeed) {
  // omega = k V / (k^2 + R (b + bL)); i = (V - k omega)/R; k i = (b + bL) omega.
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: s, use: "lib:electrical/voltage_source", parameters: {V: 12}}
  - {name: m, use: "lib:electrical/dc_motor", parameters: {R: 2, L: 0.01, k: 0.1, J: 1e-3, b: 1e-4}}
  - {name: d, use: "lib:rotational/damper", parameters: {b: 5e-4}}
bonds: [[s.p, m.p], [m.shaft, d.p]]
)", 5);
  const double w = 0.1 * 12 / (0.01 + 2 * 6e-4), i = (12 - 0.1 * w) / 2;
  const double w_end = s.Column("m.omega").back(), i_end = s.Column("m.i").back();
  std::printf("  DC motor steady speed %.12g (analytic %.12g), current %.12g (analytic %.12g)\n", w_end, w, i_end, i);
  EXPECT_NEAR(w_end / w, 1, 1e-9);
  EXPECT_NEAR(i_end / i, 1, 1e-9);
  EXPECT_NEAR(s.Column("m.torque").back(), 6e-4 * w, 1e-9);
}

TEST(Mechanical, MassOnSpringOscillatesAtItsNaturalFrequency) {
  // m = 2, k = 8: omega = 2; x(t) = 0.1 cos 2t.
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: m, use: "lib:mechanical/mass", parameters: {m: 2}}
  - {name: k, use: "lib:mechanical/spring", parameters: {k: 8, x0: 0.1}}
elements: [{name: v, kind: "1"}]
bonds: [[v, m.p], [v, k.p]]
)", 10);
  EXPECT_LT(MaxRelError(s, "k.x", [](double t) { return 0.1 * std::cos(2 * t); }), kTol);
  EXPECT_LT(MaxRelError(s, "m.v", [](double t) { return -0.2 * std::sin(2 * t); }), kTol);
}

TEST(Mechanical, DamperSlowsAMass) {
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: m, use: "lib:mechanical/mass", parameters: {m: 2, v0: 3}}
  - {name: c, use: "lib:mechanical/damper", parameters: {c: 0.5}}
elements: [{name: v, kind: "1"}]
bonds: [[v, m.p], [v, c.p]]
)", 10);
  EXPECT_LT(MaxRelError(s, "m.v", [](double t) { return 3 * std::exp(-0.25 * t); }), kTol);
  EXPECT_LT(MaxRelError(s, "c.F", [](double t) { return 1.5 * std::exp(-0.25 * t); }), kTol);
}

TEST(Mechanical, ForceSourceAcceleratesAMass) {
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: f, use: "lib:mechanical/force_source", parameters: {F: 4}}
  - {name: m, use: "lib:mechanical/mass", parameters: {m: 2}}
bonds: [[f.p, m.p]]
)", 2);
  EXPECT_LT(MaxRelError(s, "m.v", [](double t) { return 2 * t; }), kTol);
  EXPECT_LT(MaxRelError(s, "f.v", [](double t) { return 2 * t; }), kTol);
}

TEST(Mechanical, VelocitySourceCompressesASpring) {
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: v, use: "lib:mechanical/velocity_source", parameters: {v: 0.3}}
  - {name: k, use: "lib:mechanical/spring", parameters: {k: 10}}
bonds: [[v.p, k.p]]
)", 2);
  EXPECT_LT(MaxRelError(s, "k.x", [](double t) { return 0.3 * t; }), kTol);
  EXPECT_LT(MaxRelError(s, "v.F", [](double t) { return 3 * t; }), kTol);
}

TEST(Mechanical, LeverTradesForceForSpeed) {
  // a = 1, b = 3: F2 = F a/b = 2 on m = 2: v2 = t; v1 = (a/b) v2.
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: f, use: "lib:mechanical/force_source", parameters: {F: 6}}
  - {name: lv, use: "lib:mechanical/lever", parameters: {a: 1, b: 3}}
  - {name: m, use: "lib:mechanical/mass", parameters: {m: 2}}
bonds: [[f.p, lv.p1], [lv.p2, m.p]]
)", 2);
  EXPECT_LT(MaxRelError(s, "m.v", [](double t) { return t; }), kTol);
  EXPECT_LT(MaxRelError(s, "f.v", [](double t) { return t / 3; }), kTol);
}

TEST(Mechanical, RackAndPinionTurnsTorqueIntoForce) {
  // tau = 0.5 on r = 0.05: F = 10 on m = 4: v = 2.5 t, omega = v/r.
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: tq, use: "lib:rotational/torque_source", parameters: {tau: 0.5}}
  - {name: rp, use: "lib:mechanical/rack_pinion", parameters: {r: 0.05}}
  - {name: m, use: "lib:mechanical/mass", parameters: {m: 4}}
bonds: [[tq.p, rp.shaft], [rp.rack, m.p]]
)", 2);
  EXPECT_LT(MaxRelError(s, "m.v", [](double t) { return 2.5 * t; }), kTol);
  EXPECT_LT(MaxRelError(s, "tq.omega", [](double t) { return 50 * t; }), kTol);
}

TEST(Rotational, InertiaOnTorsionSpring) {
  // J = 0.5, k = 2: omega_n = 2; phi = 0.2 cos 2t.
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: j, use: "lib:rotational/inertia", parameters: {J: 0.5}}
  - {name: k, use: "lib:rotational/spring", parameters: {k: 2, phi0: 0.2}}
elements: [{name: w, kind: "1"}]
bonds: [[w, j.p], [w, k.p]]
)", 10);
  EXPECT_LT(MaxRelError(s, "k.phi", [](double t) { return 0.2 * std::cos(2 * t); }), kTol);
  EXPECT_LT(MaxRelError(s, "j.omega", [](double t) { return -0.4 * std::sin(2 * t); }), kTol);
}

TEST(Rotational, GearMultipliesTorqueAndDividesSpeed) {
  // tau = 1 through N = 4 on J = 2: omega_out = N tau t / J = 2t, omega_in = N omega_out.
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: tq, use: "lib:rotational/torque_source", parameters: {tau: 1}}
  - {name: g, use: "lib:rotational/gear", parameters: {N: 4}}
  - {name: j, use: "lib:rotational/inertia", parameters: {J: 2}}
bonds: [[tq.p, g.p1], [g.p2, j.p]]
)", 2);
  EXPECT_LT(MaxRelError(s, "j.omega", [](double t) { return 2 * t; }), kTol);
  EXPECT_LT(MaxRelError(s, "tq.omega", [](double t) { return 8 * t; }), kTol);
}

TEST(Rotational, BeltBetweenPulleys) {
  // r1 = 0.1, r2 = 0.3: tau_out = 3 tau_in = 3 on J = 3: omega_out = t, omega_in = 3t.
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: tq, use: "lib:rotational/torque_source", parameters: {tau: 1}}
  - {name: b, use: "lib:rotational/belt", parameters: {r1: 0.1, r2: 0.3}}
  - {name: j, use: "lib:rotational/inertia", parameters: {J: 3}}
bonds: [[tq.p, b.p1], [b.p2, j.p]]
)", 2);
  EXPECT_LT(MaxRelError(s, "j.omega", [](double t) { return t; }), kTol);
  EXPECT_LT(MaxRelError(s, "tq.omega", [](double t) { return 3 * t; }), kTol);
}

TEST(Rotational, DamperSpinsDownAnInertia) {
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: j, use: "lib:rotational/inertia", parameters: {J: 2, w0: 5}}
  - {name: d, use: "lib:rotational/damper", parameters: {b: 1}}
elements: [{name: w, kind: "1"}]
bonds: [[w, j.p], [w, d.p]]
)", 10);
  EXPECT_LT(MaxRelError(s, "j.omega", [](double t) { return 5 * std::exp(-t / 2); }), kTol);
}

TEST(Rotational, SpeedSourceTwistsASpring) {
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: w, use: "lib:rotational/speed_source", parameters: {omega: 2}}
  - {name: k, use: "lib:rotational/spring", parameters: {k: 3}}
bonds: [[w.p, k.p]]
)", 2);
  EXPECT_LT(MaxRelError(s, "k.phi", [](double t) { return 2 * t; }), kTol);
  EXPECT_LT(MaxRelError(s, "w.tau", [](double t) { return 6 * t; }), kTol);
}

// Hydraulic states are small volumes (m^3): an absolute tolerance to match.
constexpr double kHydraulicAtol = 1e-22;

TEST(Hydraulic, VolumePressureBuildsUpUnderAConstantFlow) {
  // dp/dt = beta Q / V = 1e9 * 1e-4 / 1e-3 = 1e8 Pa/s.
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: q, use: "lib:hydraulic/flow_source", parameters: {Q: 1e-4}}
  - {name: v, use: "lib:hydraulic/volume", parameters: {V: 1e-3, beta: 1e9}}
bonds: [[q.p, v.p]]
)", 0.1, kHydraulicAtol);
  EXPECT_LT(MaxRelError(s, "v.p", [](double t) { return 1e8 * t; }), kTol);
}

TEST(Hydraulic, PumpDrivenAtConstantSpeed) {
  // Q = D omega = 1e-4; dp/dt = beta Q / V = 1.5e8 Pa/s; shaft torque D p.
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: w, use: "lib:rotational/speed_source", parameters: {omega: 100}}
  - {name: pump, use: "lib:hydraulic/pump", parameters: {D: 1e-6}}
  - {name: v, use: "lib:hydraulic/volume", parameters: {V: 1e-3, beta: 1.5e9}}
bonds: [[w.p, pump.shaft], [pump.p, v.p]]
)", 0.1, kHydraulicAtol);
  EXPECT_LT(MaxRelError(s, "v.p", [](double t) { return 1.5e8 * t; }), kTol);
  EXPECT_LT(MaxRelError(s, "w.tau", [](double t) { return 1e-6 * 1.5e8 * t; }), kTol);
}

TEST(Hydraulic, LinearOrificeEmptiesAVolume) {
  // tau = R V / beta = 1 s.
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: v, use: "lib:hydraulic/volume", parameters: {V: 1e-3, beta: 1e9, p0: 1e6}}
  - {name: o, use: "lib:hydraulic/orifice", parameters: {R: 1e12}}
bonds: [[v.p, o.p]]
)", 5, kHydraulicAtol);
  EXPECT_LT(MaxRelError(s, "v.p", [](double t) { return 1e6 * std::exp(-t); }), kTol);
}

TEST(Hydraulic, QuadraticOrificeEmptiesAVolume) {
  // C dp/dt = -K sqrt(p), K = Cd A sqrt(2/rho): sqrt(p) = sqrt(p0) - K t / (2 C).
  const double C = 1e-3 / 1e9, K = 0.6 * 1e-8 * std::sqrt(2.0 / 850);
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: v, use: "lib:hydraulic/volume", parameters: {V: 1e-3, beta: 1e9, p0: 1e6}}
  - {name: o, use: "lib:hydraulic/orifice_quadratic", parameters: {Cd: 0.6, A: 1e-8, rho: 850, dp_t: 1}}
bonds: [[v.p, o.p]]
)", 3, kHydraulicAtol);
  EXPECT_LT(MaxRelError(s, "v.p", [&](double t) { return std::pow(1000 - K * t / (2 * C), 2); }), kTol);
}

TEST(Hydraulic, CylinderPushesAMass) {
  // F = A p = 100 N on m = 10: v = 10 t; the oil flow Q = A v.
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: p, use: "lib:hydraulic/pressure_source", parameters: {P: 1e5}}
  - {name: cyl, use: "lib:hydraulic/cylinder", parameters: {A: 1e-3}}
  - {name: m, use: "lib:mechanical/mass", parameters: {m: 10}}
bonds: [[p.p, cyl.p], [cyl.rod, m.p]]
)", 2);
  EXPECT_LT(MaxRelError(s, "m.v", [](double t) { return 10 * t; }), kTol);
  EXPECT_LT(MaxRelError(s, "p.Q", [](double t) { return 1e-2 * t; }), kTol);
}

TEST(Hydraulic, PipeFlowRisesWithItsInertance) {
  // I = rho l / A = 2e7, R = 1e9: Q = (P/R) (1 - exp(-R t / I)).
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: p, use: "lib:hydraulic/pressure_source", parameters: {P: 1e5}}
  - {name: pipe, use: "lib:hydraulic/pipe", parameters: {R: 1e9, rho: 1000, l: 2, A: 1e-4}}
bonds: [[p.p, pipe.p]]
)", 0.1, kHydraulicAtol);
  EXPECT_LT(MaxRelError(s, "pipe.Q", [](double t) { return 1e-4 * (1 - std::exp(-50 * t)); }), kTol);
}

TEST(Thermal, CapacityCoolsThroughConductionWithItsTimeConstant) {
  // tau = Rth Cth = 50 s toward the ambient 300 K.
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: c, use: "lib:thermal/capacity", parameters: {Cth: 100, T0: 350}}
  - {name: k, use: "lib:thermal/conduction", parameters: {Rth: 0.5}}
  - {name: amb, use: "lib:thermal/temperature_source", parameters: {T: 300}}
bonds: [[c.p, k.p], [k.n, amb.p]]
)", 200);
  EXPECT_LT(MaxRelError(s, "c.T", [](double t) { return 300 + 50 * std::exp(-t / 50); }), kTol);
  EXPECT_LT(MaxRelError(s, "k.Q", [](double t) { return 100 * std::exp(-t / 50); }), kTol);
}

TEST(Thermal, HeatSourceWarmsACapacity) {
  const Solution s = SimulateLibraryModel(R"(
instances:
  - {name: h, use: "lib:thermal/heat_source", parameters: {P: 10}}
  - {name: c, use: "lib:thermal/capacity", parameters: {Cth: 5, T0: 300}}
bonds: [[h.p, c.p]]
)", 10);
  EXPECT_LT(MaxRelError(s, "c.T", [](double t) { return 300 + 2 * t; }), kTol);
}

}  // namespace
}  // namespace paynter
