// B3 of BENCHMARKS.md, the quick return mechanism (examples/B3_quick_return.yaml),
// against an independent reference written from the kinematics alone: the
// one-degree-of-freedom Lagrange equation in theta1,
//   M(theta1) theta1'' + 1/2 M'(theta1) theta1'^2 = tau - R xC5' dxC5'/dtheta1',
// with the dependent coordinates in closed form,
//   theta2 = atan2(h + l1 sin theta1, l1 cos theta1),
//   theta3 = asin((l2 sin theta2 - H)/l3),
// and their first and second derivatives in theta1 by second-order forward
// automatic differentiation (the Jet below), checked against 4th-order central
// differences. Nothing here comes from the bond graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "test_util.h"

namespace paynter {
namespace {

// The definition of B3 (BENCHMARKS.md).
constexpr double kH0 = 0.35, kL1 = 0.08, kL2 = 0.8, kL3 = 1.0, kLC3 = kL3 / 2, kHram = 0.55;
constexpr double kM3 = 0.785, kJ1 = 1.340e-4, kJ2 = 0.1340, kJ3 = 0.06542, kM5 = 1.0;
constexpr double kR = 10, kTau = 2;
constexpr double kTEnd = 10;

// A value with its first and second derivatives with respect to theta1.
struct Jet {
  double v, d, dd;
};
Jet operator+(Jet a, Jet b) { return {a.v + b.v, a.d + b.d, a.dd + b.dd}; }
Jet operator-(Jet a, Jet b) { return {a.v - b.v, a.d - b.d, a.dd - b.dd}; }
Jet operator*(double s, Jet a) { return {s * a.v, s * a.d, s * a.dd}; }
Jet operator+(double s, Jet a) { return {s + a.v, a.d, a.dd}; }
Jet operator-(Jet a, double s) { return {a.v - s, a.d, a.dd}; }
// f(a) for f with derivatives f1 = f'(a.v), f2 = f''(a.v).
Jet Chain(Jet a, double f, double f1, double f2) { return {f, f1 * a.d, f2 * a.d * a.d + f1 * a.dd}; }
Jet Sin(Jet a) { return Chain(a, std::sin(a.v), std::cos(a.v), -std::sin(a.v)); }
Jet Cos(Jet a) { return Chain(a, std::cos(a.v), -std::sin(a.v), -std::cos(a.v)); }
Jet Asin(Jet a) {
  const double s = 1 - a.v * a.v;
  return Chain(a, std::asin(a.v), 1 / std::sqrt(s), a.v / (s * std::sqrt(s)));
}
Jet Atan2(Jet y, Jet x) {
  // d atan2 = (x dy - y dx)/(x^2 + y^2) = n / r.
  const double n = x.v * y.d - y.v * x.d, dn = x.v * y.dd - y.v * x.dd;
  const double r = x.v * x.v + y.v * y.v, dr = 2 * (x.v * x.d + y.v * y.d);
  return {std::atan2(y.v, x.v), n / r, (dn * r - n * dr) / (r * r)};
}

// The configuration of the mechanism as closed-form functions of theta1.
struct Config {
  Jet theta2, theta3, Lx, xC3, yC3, xC5, yC5;
};
Config Kinematics(double theta1) {
  const Jet th{theta1, 1, 0};
  const Jet xO1 = kL1 * Cos(th), yO1 = kH0 + kL1 * Sin(th);
  Config c;
  c.theta2 = Atan2(yO1, xO1);
  c.theta3 = Asin((1 / kL3) * (kL2 * Sin(c.theta2) - kHram));
  const double lx = std::hypot(xO1.v, yO1.v);  // |O1|, value only
  c.Lx = {lx, 0, 0};
  c.xC3 = kL2 * Cos(c.theta2) + kLC3 * Cos(c.theta3);
  c.yC3 = kL2 * Sin(c.theta2) - kLC3 * Sin(c.theta3);
  c.xC5 = kL2 * Cos(c.theta2) + kL3 * Cos(c.theta3);
  c.yC5 = kL2 * Sin(c.theta2) - kL3 * Sin(c.theta3);
  return c;
}

// Generalized inertia M(theta1), its derivative, and dxC5/dtheta1.
struct Inertia {
  double M, dM, xc5_rate;
};
Inertia MassMatrix(double theta1) {
  const Config c = Kinematics(theta1);
  auto sq = [](const Jet& q) { return q.d * q.d; };
  auto dsq = [](const Jet& q) { return 2 * q.d * q.dd; };
  return {kJ1 + kJ2 * sq(c.theta2) + kJ3 * sq(c.theta3) + kM3 * (sq(c.xC3) + sq(c.yC3)) + kM5 * sq(c.xC5),
          kJ2 * dsq(c.theta2) + kJ3 * dsq(c.theta3) + kM3 * (dsq(c.xC3) + dsq(c.yC3)) + kM5 * dsq(c.xC5),
          c.xC5.d};
}

struct Reference {
  std::vector<double> t, theta1, theta1dot;
  double seconds = 0;
};

Reference SolveReference() {
  OdeProblem p;
  p.n = 2;
  p.rhs = [](double, const double* x, double* dx) {
    const Inertia in = MassMatrix(x[0]);
    dx[0] = x[1];
    dx[1] = (kTau - kR * in.xc5_rate * in.xc5_rate * x[1] - 0.5 * in.dM * x[1] * x[1]) / in.M;
  };
  p.state_names = {"theta1", "theta1dot"};
  SolverOptions so;
  so.method = Method::kDopri5;
  so.t_end = kTEnd;
  so.rtol = 1e-12;
  so.atol = 1e-12;
  so.dt_out = kTEnd / 1000;  // the same output times as Simulate's default
  Reference r;
  const auto start = std::chrono::steady_clock::now();
  Integrate(p, {0.0, 0.0}, so, [&](double t, const double* x) {
    r.t.push_back(t);
    r.theta1.push_back(x[0]);
    r.theta1dot.push_back(x[1]);
  });
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

struct TimedRun {
  testing::Run run;
  double seconds = 0;
};

TimedRun SimulateB3(double rtol, double atol) {
  const auto start = std::chrono::steady_clock::now();
  TimedRun r{testing::SimulateFile("examples/B3_quick_return.yaml", kTEnd, rtol, atol), 0};
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// The runs, made once for the whole file.
const TimedRun& BondGraph() {
  static const TimedRun r = SimulateB3(1e-12, 1e-12);
  return r;
}
const Reference& Ref() {
  static const Reference r = SolveReference();
  return r;
}

TEST(B3Reference, KinematicDerivativesMatchCentralDifferences) {
  // 4th-order central differences, step 1e-3: truncation ~1e-12, rounding ~1e-13
  // (first derivative) and ~1e-10 (second derivative).
  const double hs = 1e-3;
  double e1 = 0, e2 = 0, et7 = 0, ey = 0;
  for (int k = 0; k < 24; ++k) {
    const double th = 2 * M_PI * k / 24 + 0.1;
    const Config c = Kinematics(th);
    Config f[5];
    for (int j = 0; j < 5; ++j) f[j] = Kinematics(th + (j - 2) * hs);
    auto check = [&](Jet Config::*q) {
      const double d1 = (-(f[4].*q).v + 8 * (f[3].*q).v - 8 * (f[1].*q).v + (f[0].*q).v) / (12 * hs);
      const double d2 =
          (-(f[4].*q).v + 16 * (f[3].*q).v - 30 * (f[2].*q).v + 16 * (f[1].*q).v - (f[0].*q).v) / (12 * hs * hs);
      e1 = std::max(e1, std::abs((c.*q).d - d1));
      e2 = std::max(e2, std::abs((c.*q).dd - d2));
    };
    for (auto q : {&Config::theta2, &Config::theta3, &Config::xC3, &Config::yC3, &Config::xC5}) check(q);
    // dtheta2/dtheta1 = l1 cos(theta2 - theta1)/Lx, from O1 = Lx (cos theta2, sin theta2).
    et7 = std::max(et7, std::abs(c.theta2.d - kL1 * std::cos(c.theta2.v - th) / c.Lx.v));
    // The ram stays on its guide: yC5 = H, with zero first and second derivatives.
    ey = std::max({ey, std::abs(c.yC5.v - kHram), std::abs(c.yC5.d), std::abs(c.yC5.dd)});
  }
  std::printf("B3 reference kinematics: |jet - FD| first %.2e, second %.2e; |dtheta2/dtheta1 - t7| %.2e; "
              "|yC5 - H|, |yC5'|, |yC5''| %.2e\n",
              e1, e2, et7, ey);
  EXPECT_LT(e1, 1e-9);
  EXPECT_LT(e2, 1e-7);
  EXPECT_LT(et7, 1e-14);
  EXPECT_LT(ey, 1e-13);
}

TEST(B3, CausalityIsHamiltonsFormWithOneImplicitBlockInDpJ1) {
  const auto& eq = BondGraph().run.equations;
  ASSERT_EQ(eq.blocks.size(), 1u);
  EXPECT_TRUE(eq.blocks[0].derivative_causality);
  EXPECT_TRUE(eq.blocks[0].linear);
}

TEST(B3, Theta1MatchesTheLagrangeReference) {
  const auto& bg = BondGraph();
  const auto& ref = Ref();
  const auto t = bg.run.solution.Column("t"), th = bg.run.solution.Column("theta1"),
             thd = bg.run.solution.Column("theta1dot");
  ASSERT_EQ(t.size(), ref.t.size());
  double dth = 0, dthd = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    ASSERT_NEAR(t[i], ref.t[i], 1e-12);
    dth = std::max(dth, std::abs(th[i] - ref.theta1[i]));
    dthd = std::max(dthd, std::abs(thd[i] - ref.theta1dot[i]));
  }
  std::printf("B3 bond graph vs Lagrange reference (rtol = atol = 1e-12, %zu points): "
              "max |dtheta1| %.3e rad (theta1(10 s) = %.6f), max |dtheta1dot| %.3e rad/s\n",
              t.size(), dth, th.back(), dthd);
  EXPECT_LT(dth, 1e-6);
  EXPECT_LT(dthd, 1e-4);
}

TEST(B3, KineticEnergyMatchesTheReferenceInertia) {
  // T from the bond graph's I elements = 1/2 M(theta1) theta1dot^2 of the reference.
  const auto& s = BondGraph().run.solution;
  const auto th = s.Column("theta1"), thd = s.Column("theta1dot"), T = s.Column("T");
  double err = 0, tmax = 0;
  for (size_t i = 0; i < th.size(); ++i) {
    err = std::max(err, std::abs(T[i] - 0.5 * MassMatrix(th[i]).M * thd[i] * thd[i]));
    tmax = std::max(tmax, T[i]);
  }
  std::printf("B3 kinetic energy: max |T - M(theta1) theta1dot^2/2| %.3e J (max T %.4f J)\n", err, tmax);
  EXPECT_LT(err, 1e-10 * tmax);
}

TEST(B3, EnergyBalance) {
  const auto& s = BondGraph().run.solution;
  const auto t = s.Column("t"), W = s.Column("W_tau"), D = s.Column("D_R"), T = s.Column("T");
  double res = 0;
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i] >= 0.5) res = std::max(res, std::abs(W[i] - T[i] - D[i]) / W[i]);
  std::printf("B3 energy balance: max |W_tau - T - D| / W_tau (t >= 0.5 s) %.3e; W_tau(10 s) = %.4f J, "
              "D(10 s) = %.4f J, T(10 s) = %.4f J\n",
              res, W.back(), D.back(), T.back());
  EXPECT_LT(res, 1e-6);
}

TEST(B3, ConstraintDrift) {
  // theta2 and theta3 are integrated (displacements of the rocker and rod
  // junctions); only ydot_C5 = 0 is imposed, so yC5 = H can drift.
  const auto& s = BondGraph().run.solution;
  const auto yc = s.Column("yC5"), yh = s.Column("ycons");
  double drift = 0;
  for (size_t i = 0; i < yc.size(); ++i) {
    drift = std::max(drift, std::abs(yc[i] - kHram));
    EXPECT_NEAR(yh[i], yc[i] - kHram, 1e-14);
  }
  std::printf("B3 constraint drift: max |yC5 - H| over 10 s %.3e m\n", drift);
  EXPECT_LT(drift, 1e-6);
}

TEST(B3, DependentCoordinatesMatchTheirClosedForms) {
  const auto& s = BondGraph().run.solution;
  const auto th1 = s.Column("theta1"), th2 = s.Column("theta2"), th3 = s.Column("theta3"), lx = s.Column("Lx");
  const auto xo = s.Column("xO1"), yo = s.Column("yO1");
  double e2 = 0, e3 = 0, el = 0, eo = 0;
  for (size_t i = 0; i < th1.size(); ++i) {
    const double c1 = std::cos(th1[i]), s1 = std::sin(th1[i]);
    const double th2c = std::atan2(kH0 + kL1 * s1, kL1 * c1);
    const double th3c = std::asin((kL2 * std::sin(th2c) - kHram) / kL3);
    e2 = std::max(e2, std::abs(th2[i] - th2c));
    e3 = std::max(e3, std::abs(th3[i] - th3c));
    el = std::max(el, std::abs(lx[i] - std::hypot(kL1 * c1, kH0 + kL1 * s1)));
    // O1 from the rocker: Lx (cos theta2, sin theta2) against the crank's O1.
    eo = std::max(eo, std::hypot(lx[i] * std::cos(th2[i]) - xo[i], lx[i] * std::sin(th2[i]) - yo[i]));
  }
  std::printf("B3 integrated vs closed form: max |theta2 - atan2| %.3e, max |theta3 - asin| %.3e, "
              "max |Lx - |O1|| %.3e, max |Lx e(theta2) - O1| %.3e\n",
              e2, e3, el, eo);
  EXPECT_LT(e2, 1e-8);
  EXPECT_LT(e3, 1e-8);
  EXPECT_LT(el, 1e-8);
  EXPECT_LT(eo, 1e-8);
}

TEST(B3, CrankReachesAbout200RadPerSecond) {
  // theta1dot = sqrt(2 T / M(theta1)) spikes each time the crank is square to
  // the rocker (t7 = 0, M = J1 alone): spikes ~1e-3 s wide, so the maximum is
  // taken on fine output grids — the reference's dense output every 1e-6 s and
  // the bond graph's every 1e-4 s — besides the default grid (1e-2 s).
  double ref_peak = 0, ref_peak_t = 0;
  {
    OdeProblem p;
    p.n = 2;
    p.rhs = [](double, const double* x, double* dx) {
      const Inertia in = MassMatrix(x[0]);
      dx[0] = x[1];
      dx[1] = (kTau - kR * in.xc5_rate * in.xc5_rate * x[1] - 0.5 * in.dM * x[1] * x[1]) / in.M;
    };
    SolverOptions so;
    so.t_end = kTEnd;
    so.rtol = so.atol = 1e-12;
    so.dt_out = 1e-6;
    Integrate(p, {0.0, 0.0}, so, [&](double t, const double* x) {
      if (x[1] > ref_peak) ref_peak = x[1], ref_peak_t = t;
    });
  }
  const auto fine = testing::SimulateModel(LoadModel(testing::SourcePath("examples/B3_quick_return.yaml")), kTEnd,
                                           1e-12, 1e-12, Method::kDopri5, 1e-4);
  const auto thd_fine = fine.solution.Column("theta1dot");
  const double bg_fine = *std::max_element(thd_fine.begin(), thd_fine.end());
  const auto thd = BondGraph().run.solution.Column("theta1dot");
  const double bg_coarse = *std::max_element(thd.begin(), thd.end());
  std::printf("B3 max crank speed: %.3f rad/s at t = %.6f s (reference, every 1e-6 s); bond graph %.3f rad/s "
              "(every 1e-4 s), %.3f rad/s (every 1e-2 s)\n",
              ref_peak, ref_peak_t, bg_fine, bg_coarse);
  EXPECT_GT(ref_peak, 150);
  EXPECT_LT(ref_peak, 300);
  EXPECT_LE(bg_fine, ref_peak * (1 + 1e-6));
  EXPECT_GT(bg_fine, 0.95 * ref_peak);
}

TEST(B3, DefaultTolerancesFollowTheMotion) {
  // Timings of these runs are in bench/bench_b3 (docs/performance.md), not here.
  const auto& tight = BondGraph();
  const SolverOptions defaults;
  const TimedRun loose = SimulateB3(defaults.rtol, defaults.atol);
  const auto a = loose.run.solution.Column("theta1"), b = tight.run.solution.Column("theta1");
  double d = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  std::printf("B3 default tolerances: max |dtheta1| vs 1e-12 run %.3e rad\n", d);
  EXPECT_LT(d, 1e-2);
}

// The formulations of seed 000 from the same bond graph: Lagrange's equations
// of the second kind (state theta1, theta1dot), of the first kind (with the
// multiplier of the ram's guide, differentiated once), and Hamilton's (state
// theta1, p1) agree with each other and with the state form.
testing::Run SimulateForm(Formulation form) {
  Model m = LoadModel(testing::SourcePath("examples/B3_quick_return.yaml"));
  testing::Run r{std::move(m), {}, {}};
  CausalGraph g = AssignCausality(r.model, OptionsFor(form, r.model));
  r.equations = BuildEquations(r.model, g);
  CompiledModel cm(r.equations);
  SolverOptions so;
  so.t_end = kTEnd;
  so.rtol = 1e-12;
  so.atol = 1e-12;
  r.solution = Simulate(cm, so);
  return r;
}

TEST(B3, LagrangeAndHamiltonAgree) {
  const auto lag2 = SimulateForm(Formulation::kLagrange2);
  const auto ham = SimulateForm(Formulation::kHamilton);
  const auto lag1 = SimulateForm(Formulation::kLagrange1);
  EXPECT_EQ(lag2.equations.form, Formulation::kLagrange2);
  EXPECT_EQ(ham.equations.form, Formulation::kHamilton);
  EXPECT_EQ(lag1.equations.form, Formulation::kLagrange1);
  auto maxdiff = [](const testing::Run& a, const testing::Run& b, const char* col) {
    const auto x = a.solution.Column(col), y = b.solution.Column(col);
    double d = 0;
    for (size_t i = 0; i < x.size(); ++i) d = std::max(d, std::abs(x[i] - y[i]));
    return d;
  };
  const double d_lh = maxdiff(lag2, ham, "theta1"), d_l1 = maxdiff(lag1, lag2, "theta1"),
               d_ref = maxdiff(lag2, BondGraph().run, "theta1");
  std::printf("B3 theta1: max |lagrange2 - hamilton| %.3e rad, |lagrange1 - lagrange2| %.3e rad, "
              "|lagrange2 - state| %.3e rad\n", d_lh, d_l1, d_ref);
  EXPECT_LT(d_lh, 1e-6);
  EXPECT_LT(d_l1, 1e-6);
  EXPECT_LT(d_ref, 1e-6);
  for (const testing::Run* r : {&lag2, &ham, &lag1}) {
    const auto W = r->solution.Column("W_tau"), D = r->solution.Column("D_R"), T = r->solution.Column("T"),
               t = r->solution.Column("t"), y = r->solution.Column("ycons");
    double bal = 0, drift = 0;
    for (size_t i = 0; i < W.size(); ++i) {
      if (t[i] >= 0.5) bal = std::max(bal, std::abs(W[i] - T[i] - D[i]) / W[i]);
      drift = std::max(drift, std::abs(y[i]));
    }
    std::printf("B3 %s: energy balance %.2e relative, |yC5 - H| <= %.2e m\n",
                FormulationName(r->equations.form).c_str(), bal, drift);
    EXPECT_LT(bal, 1e-6);
    EXPECT_LT(drift, 1e-6);
  }
}

}  // namespace
}  // namespace paynter
