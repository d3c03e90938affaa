// Self-checks of the B2 reference (tests/b2_reference.h), the planar slider
// crank, and of the closed-form four-bar:
//  - the closed-loop kinematics: B on the x axis, |AB| = l, G2 the middle of
//    AB, and every hand-written derivative in gamma against 4th-order central
//    differences of the positions;
//  - the equation of motion: the energy balance T + V - W_tau + D = 0 along the
//    integrated motion, the crank's moment equation (not used to build the
//    reaction forces) satisfied, convergence in the step;
//  - a second, independent formulation: the three links in absolute planar
//    coordinates (9 coordinates, 8 constraints, Lagrange multipliers solved
//    with Eigen at each evaluation, integrated by paynter's dopri5), which must
//    give the same motion and joint forces;
//  - the four-bar: loop closure on both branches, the Freudenstein half-angle
//    solution, the rates against differences, and linkages that cannot close.
// Prints the values at t = 1, 5 and 10 s.
#include "b2_reference.h"

#include <Eigen/Dense>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "paynter/solvers.h"

namespace paynter {
namespace {

using testing::B2Params;
using testing::B2Sample;
using testing::B2State;

double U(std::mt19937& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }

// 4th-order central difference of f at x.
template <class F>
double D1(F f, double x, double h) {
  return (-f(x + 2 * h) + 8 * f(x + h) - 8 * f(x - h) + f(x - 2 * h)) / (12 * h);
}

// The benchmark's parameters, then random ones (r < l).
std::vector<B2Params> TestParams() {
  std::vector<B2Params> ps{B2Params{}};
  std::mt19937 rng(20240611);
  for (int k = 0; k < 5; ++k) {
    B2Params p;
    p.l = U(rng, 0.5, 2);
    p.r = U(rng, 0.05, 0.9) * p.l;
    p.m1 = U(rng, 0.2, 3);
    p.m2 = U(rng, 0.2, 3);
    p.m3 = U(rng, 0.2, 3);
    p.I1 = U(rng, 0.01, 2);
    p.I2 = U(rng, 0.01, 2);
    p.tau = U(rng, -20, 20);
    p.b1 = U(rng, 0, 5);
    p.b3 = U(rng, 0, 10);
    p.g = U(rng, 0, 15);
    ps.push_back(p);
  }
  return ps;
}

// ---- Kinematics -------------------------------------------------------------------

TEST(B2Reference, ClosedLoopKinematicsIdentities) {
  std::mt19937 rng(3);
  double worst_pos = 0, worst_d1 = 0, worst_d2 = 0;
  for (const B2Params& p : TestParams()) {
    for (int k = 0; k < 20; ++k) {
      const double g = U(rng, -2 * M_PI, 2 * M_PI);
      const auto kin = testing::B2Kinematics(p, g);
      const double cp = std::cos(kin.phi), sp = std::sin(kin.phi);
      // B = A + l (cos phi, sin phi) lies on the x axis at x_B.
      const double xB = kin.xA + p.l * cp, yB = kin.yA + p.l * sp;
      worst_pos = std::max({worst_pos, std::fabs(yB), std::fabs(xB - kin.xB),
                            std::fabs(std::hypot(kin.xB - kin.xA, kin.yA) - p.l),
                            std::fabs(kin.xG2 - 0.5 * (kin.xA + kin.xB)), std::fabs(kin.yG2 - 0.5 * kin.yA),
                            std::fabs(kin.xG1 - 0.5 * kin.xA), std::fabs(kin.yG1 - 0.5 * kin.yA)});
      EXPECT_GT(cp, 0);  // the rod never turns back: the branch of the start
      EXPECT_NEAR(std::sin(kin.phi), -p.r / p.l * std::sin(g), 1e-15);
      // Derivatives in gamma against differences of the positions.
      const double h = 1e-3;
      auto K = [&](double gg) { return testing::B2Kinematics(p, gg); };
      const double d1[] = {
          kin.phi_g - D1([&](double x) { return K(x).phi; }, g, h),
          kin.xB_g - D1([&](double x) { return K(x).xB; }, g, h),
          kin.xG1_g - D1([&](double x) { return K(x).xG1; }, g, h),
          kin.yG1_g - D1([&](double x) { return K(x).yG1; }, g, h),
          kin.xG2_g - D1([&](double x) { return K(x).xG2; }, g, h),
          kin.yG2_g - D1([&](double x) { return K(x).yG2; }, g, h),
      };
      const double d2[] = {
          kin.phi_gg - D1([&](double x) { return K(x).phi_g; }, g, h),
          kin.xB_gg - D1([&](double x) { return K(x).xB_g; }, g, h),
          kin.xG1_gg - D1([&](double x) { return K(x).xG1_g; }, g, h),
          kin.yG1_gg - D1([&](double x) { return K(x).yG1_g; }, g, h),
          kin.xG2_gg - D1([&](double x) { return K(x).xG2_g; }, g, h),
          kin.yG2_gg - D1([&](double x) { return K(x).yG2_g; }, g, h),
      };
      // Scale: lam = 0.9 makes cos phi as small as 0.44, and derivatives large.
      const double scale = p.l / std::pow(cp, 5);
      for (double e : d1) worst_d1 = std::max(worst_d1, std::fabs(e) / scale);
      for (double e : d2) worst_d2 = std::max(worst_d2, std::fabs(e) / scale);
      // The piston's rate in the form -r sin g (1 + lam cos g / cos phi).
      const double lam = p.r / p.l;
      EXPECT_NEAR(kin.xB_g, -p.r * std::sin(g) * (1 + lam * std::cos(g) / cp), 1e-14 * scale);
    }
  }
  std::printf("B2 kinematics: max position identity error %.2e; derivatives vs differences "
              "(relative): first %.2e, second %.2e\n",
              worst_pos, worst_d1, worst_d2);
  EXPECT_LT(worst_pos, 1e-14);
  EXPECT_LT(worst_d1, 1e-9);
  EXPECT_LT(worst_d2, 1e-9);
}

TEST(B2Reference, EquationTermsMatchDifferencesOfTheEnergies) {
  std::mt19937 rng(5);
  double worst = 0;
  for (const B2Params& p : TestParams()) {
    for (int k = 0; k < 20; ++k) {
      const double g = U(rng, -M_PI, M_PI), gd = U(rng, -5, 5);
      const auto e = testing::B2EquationTerms(p, g, gd);
      const double h = 1e-3;
      const double dM = D1([&](double x) { return testing::B2EquationTerms(p, x, gd).mass; }, g, h);
      const double dV = D1([&](double x) { return testing::B2PotentialEnergy(p, x); }, g, h);
      // Kinetic energy of the bodies from their velocities.
      const auto kin = testing::B2Kinematics(p, g);
      const double T = 0.5 * p.m1 * gd * gd * (kin.xG1_g * kin.xG1_g + kin.yG1_g * kin.yG1_g) +
                       0.5 * p.I1 * gd * gd +
                       0.5 * p.m2 * gd * gd * (kin.xG2_g * kin.xG2_g + kin.yG2_g * kin.yG2_g) +
                       0.5 * p.I2 * std::pow(kin.phi_g * gd, 2) + 0.5 * p.m3 * std::pow(kin.xB_g * gd, 2);
      const double scale = e.mass / std::pow(std::cos(kin.phi), 6);
      worst = std::max({worst, std::fabs(e.mass_g - dM) / scale, std::fabs(e.potential - dV) / (1 + p.g),
                        std::fabs(testing::B2KineticEnergy(p, g, gd) - T) / (1 + T)});
      // The applied force: the dampers' power is -Q_damping gdot.
      const double Pd = testing::B2DissipatedPower(p, g, gd);
      EXPECT_NEAR((p.tau - e.applied) * gd, Pd, 1e-12 * (1 + Pd));
    }
  }
  std::printf("B2 equation terms vs differences of the energies: max relative error %.2e\n", worst);
  EXPECT_LT(worst, 1e-9);
}

// ---- The integrated motion ----------------------------------------------------

constexpr double kTEnd = 10.0;
constexpr int kOut = 1000;

std::vector<double> OutputTimes() {
  std::vector<double> t(kOut + 1);
  for (int k = 0; k <= kOut; ++k) t[k] = kTEnd * k / kOut;
  return t;
}

const std::vector<B2Sample>& Fine() {
  static const std::vector<B2Sample> s = testing::SolveB2Reference(OutputTimes(), 1e-4);
  return s;
}

TEST(B2Reference, StartsAtTheBenchmarkInitialState) {
  const B2Sample& s = Fine().front();
  EXPECT_EQ(s.t, 0.0);
  EXPECT_EQ(s.gamma, 0.0);
  EXPECT_EQ(s.gammadot, 0.0);
  EXPECT_EQ(s.rod_angle, 0.0);
  EXPECT_DOUBLE_EQ(s.x_piston, 1.2);
  EXPECT_EQ(s.v_piston, 0.0);
  EXPECT_DOUBLE_EQ(s.xG1, 0.1);
  EXPECT_EQ(s.yG1, 0.0);
  EXPECT_DOUBLE_EQ(s.xG2, 0.7);
  EXPECT_EQ(s.yG2, 0.0);
  // At rest with everything on the x axis, the crank starts with
  // gddot = (tau - V_g(0)) / M(0), V_g(0) = g (m1 + m2) r/2 and
  // M(0) = I1 + m1 (r/2)^2 + I2 (r/l)^2 + m2 (r/2)^2 (the piston does not move
  // at first order; G2 moves vertically at half A's speed).
  EXPECT_NEAR(testing::B2Acceleration(B2Params{}, 0, 0), (10 - 9.81 * 2 * 0.1) / (1 + 0.01 + 0.04 + 0.01), 1e-14);
}

TEST(B2Reference, EnergyBalance) {
  double worst = 0, scale = 0;
  for (const B2Sample& s : Fine()) {
    worst = std::max(worst, std::fabs(s.kinetic + s.potential - s.work_tau + s.dissipated));
    scale = std::max(scale, std::fabs(s.work_tau));
  }
  std::printf("B2 energy balance: max |T + V - W_tau + D| = %.3e J (work of the torque up to %.3f J, "
              "relative %.2e)\n",
              worst, scale, worst / scale);
  EXPECT_LT(worst / scale, 1e-9);
}

TEST(B2Reference, EnergyBalanceWithRandomParameters) {
  // The balance holds only if M_g, V_g and the dampers' terms are right.
  std::mt19937 rng(17);
  for (const B2Params& p : TestParams()) {
    const B2State x0{U(rng, -3, 3), U(rng, -3, 3), 0};
    const auto s = testing::SolveB2Reference({0, 0.5, 1, 1.5, 2}, 1e-4, p, &x0);
    const double E0 = s.front().kinetic + s.front().potential;
    double worst = 0, scale = std::fabs(E0) + 1;
    for (const B2Sample& k : s) {
      worst = std::max(worst, std::fabs(k.kinetic + k.potential - k.work_tau + k.dissipated - E0));
      scale = std::max({scale, k.kinetic, std::fabs(k.work_tau), k.dissipated});
    }
    EXPECT_LT(worst / scale, 1e-10) << "r = " << p.r << ", l = " << p.l;
  }
}

TEST(B2Reference, CrankMomentEquationHoldsWithTheReactions) {
  // The reactions come from the piston's and rod's Newton-Euler equations and
  // the crank's force balance; the crank's moment equation about G1 is left.
  const B2Params p;
  double worst = 0;
  for (const B2Sample& s : Fine()) {
    const auto kin = testing::B2Kinematics(p, s.gamma);
    const double gdd = testing::B2Acceleration(p, s.gamma, s.gammadot);
    const double rOx = -kin.xG1, rOy = -kin.yG1, rAx = kin.xA - kin.xG1, rAy = kin.yA - kin.yG1;
    const double moment = p.tau - p.b1 * s.gammadot + (rOx * s.F.FOy - rOy * s.F.FOx) -
                          (rAx * s.F.FAy - rAy * s.F.FAx);
    worst = std::max(worst, std::fabs(p.I1 * gdd - moment));
  }
  std::printf("B2 crank moment equation residual: %.2e N m\n", worst);
  EXPECT_LT(worst, 1e-12);
}

TEST(B2Reference, ConvergedInTheStep) {
  const auto coarse = testing::SolveB2Reference({1, 5, 10}, 1e-3);
  const auto fine = testing::SolveB2Reference({1, 5, 10}, 5e-5);
  double worst = 0;
  for (int i = 0; i < 3; ++i)
    worst = std::max({worst, std::fabs(coarse[i].gamma - fine[i].gamma),
                      std::fabs(coarse[i].gammadot - fine[i].gammadot),
                      std::fabs(coarse[i].v_piston - fine[i].v_piston)});
  std::printf("B2 step 1e-3 vs 5e-5 at t = 1, 5, 10 s: max difference %.2e\n", worst);
  EXPECT_LT(worst, 1e-9);
}

// ---- Second formulation: absolute coordinates and Lagrange multipliers ---------
//
// q = (x1, y1, th1, x2, y2, th2, x3, y3, th3): centre of mass and angle of the
// crank, the rod and the piston. Constraints Phi(q) = 0:
//   O:  x1 - (r/2) cos th1,              y1 - (r/2) sin th1
//   A:  x1 + (r/2) cos th1 - x2 + (l/2) cos th2,
//       y1 + (r/2) sin th1 - y2 + (l/2) sin th2
//   B:  x2 + (l/2) cos th2 - x3,         y2 + (l/2) sin th2 - y3
//   P:  y3,                              th3
// M q'' + Phi_q^T mu = Q,  Phi_q q'' = gam - 2 a Phi' - b^2 Phi (Baumgarte;
// the exact solution has Phi = Phi' = 0 and does not see a, b), with
// gam = -(Phi_q q')_q q' written out below. The force joint J applies to the
// body whose coordinates enter its rows with coefficient s (+1 or -1) is
// -s mu_J.

struct LmResult {
  Eigen::Matrix<double, 9, 1> qdd;
  Eigen::Matrix<double, 8, 1> mu;
};

LmResult LmAccelerations(const B2Params& p, const double* q, const double* qd) {
  const double r2 = p.r / 2, l2 = p.l / 2;
  const double c1 = std::cos(q[2]), s1 = std::sin(q[2]), c2 = std::cos(q[5]), s2 = std::sin(q[5]);
  const double w1 = qd[2], w2 = qd[5];
  Eigen::Matrix<double, 8, 9> J = Eigen::Matrix<double, 8, 9>::Zero();
  Eigen::Matrix<double, 8, 1> phi, gam;
  J(0, 0) = 1, J(0, 2) = r2 * s1;
  J(1, 1) = 1, J(1, 2) = -r2 * c1;
  J(2, 0) = 1, J(2, 2) = -r2 * s1, J(2, 3) = -1, J(2, 5) = -l2 * s2;
  J(3, 1) = 1, J(3, 2) = r2 * c1, J(3, 4) = -1, J(3, 5) = l2 * c2;
  J(4, 3) = 1, J(4, 5) = -l2 * s2, J(4, 6) = -1;
  J(5, 4) = 1, J(5, 5) = l2 * c2, J(5, 7) = -1;
  J(6, 7) = 1;
  J(7, 8) = 1;
  phi << q[0] - r2 * c1, q[1] - r2 * s1, q[0] + r2 * c1 - q[3] + l2 * c2, q[1] + r2 * s1 - q[4] + l2 * s2,
      q[3] + l2 * c2 - q[6], q[4] + l2 * s2 - q[7], q[7], q[8];
  gam << -r2 * c1 * w1 * w1, -r2 * s1 * w1 * w1, r2 * c1 * w1 * w1 + l2 * c2 * w2 * w2,
      r2 * s1 * w1 * w1 + l2 * s2 * w2 * w2, l2 * c2 * w2 * w2, l2 * s2 * w2 * w2, 0, 0;
  const Eigen::Map<const Eigen::Matrix<double, 9, 1>> v(qd);
  const double a = 10, b = 10;
  const Eigen::Matrix<double, 8, 1> rhs_c = gam - 2 * a * (J * v) - b * b * phi;
  Eigen::Matrix<double, 9, 1> m, Q;
  m << p.m1, p.m1, p.I1, p.m2, p.m2, p.I2, p.m3, p.m3, 1.0;
  Q << 0, -p.m1 * p.g, p.tau - p.b1 * w1, 0, -p.m2 * p.g, 0, -p.b3 * qd[6], -p.m3 * p.g, 0;
  Eigen::Matrix<double, 17, 17> K = Eigen::Matrix<double, 17, 17>::Zero();
  K.topLeftCorner<9, 9>() = m.asDiagonal();
  K.topRightCorner<9, 8>() = J.transpose();
  K.bottomLeftCorner<8, 9>() = J;
  Eigen::Matrix<double, 17, 1> rhs;
  rhs << Q, rhs_c;
  const Eigen::Matrix<double, 17, 1> sol = K.fullPivLu().solve(rhs);
  return {sol.head<9>(), sol.tail<8>()};
}

struct LmSample {
  double t;
  std::vector<double> y;  // q, q'
  testing::B2Reactions F;
};

std::vector<LmSample> SolveLm(const B2Params& p, const std::vector<double>& times) {
  OdeProblem prob;
  prob.n = 18;
  prob.rhs = [p](double, const double* y, double* dy) {
    const LmResult r = LmAccelerations(p, y, y + 9);
    for (int i = 0; i < 9; ++i) {
      dy[i] = y[9 + i];
      dy[9 + i] = r.qdd[i];
    }
  };
  // gamma = 0 at rest: everything on the x axis.
  std::vector<double> y{p.r / 2, 0, 0, p.r + p.l / 2, 0, 0, p.r + p.l, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  auto sample = [&](double t) {
    const LmResult r = LmAccelerations(p, y.data(), y.data() + 9);
    // O rows: crank +1 -> -mu; A rows: rod -1 -> +mu; B rows: piston -1 -> +mu; P: piston +1 -> -mu.
    return LmSample{t, y, {-r.mu[0], -r.mu[1], r.mu[2], r.mu[3], r.mu[4], r.mu[5], -r.mu[6]}};
  };
  std::vector<LmSample> out;
  double t = 0;
  for (double tk : times) {
    if (tk > t) {
      SolverOptions so;
      so.method = Method::kDopri5;
      so.t0 = t;
      so.t_end = tk;
      so.rtol = 1e-12;
      so.atol = 1e-12;
      so.dt_out = tk - t;
      so.max_step = tk - t;
      std::vector<double> yend(y.size());
      Integrate(prob, y, so, [&](double, const double* yy) { yend.assign(yy, yy + prob.n); });
      y = yend;
      t = tk;
    }
    out.push_back(sample(t));
  }
  return out;
}

TEST(B2Reference, AgreesWithAbsoluteCoordinatesAndLagrangeMultipliers) {
  const B2Params p;
  std::vector<double> times;
  for (int k = 0; k <= 100; ++k) times.push_back(0.1 * k);
  const auto lm = SolveLm(p, times);
  const auto ref = testing::SolveB2Reference(times, 1e-4);
  double worst_q = 0, worst_v = 0, worst_f = 0, worst_c = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    const auto& y = lm[i].y;
    const B2Sample& s = ref[i];
    worst_q = std::max({worst_q, std::fabs(y[2] - s.gamma), std::fabs(y[5] - s.rod_angle),
                        std::fabs(y[6] - s.x_piston), std::fabs(y[0] - s.xG1), std::fabs(y[1] - s.yG1),
                        std::fabs(y[3] - s.xG2), std::fabs(y[4] - s.yG2)});
    worst_v = std::max({worst_v, std::fabs(y[11] - s.gammadot), std::fabs(y[15] - s.v_piston)});
    const auto& a = lm[i].F;
    const auto& b = s.F;
    worst_f = std::max({worst_f, std::fabs(a.FOx - b.FOx), std::fabs(a.FOy - b.FOy), std::fabs(a.FAx - b.FAx),
                        std::fabs(a.FAy - b.FAy), std::fabs(a.FBx - b.FBx), std::fabs(a.FBy - b.FBy),
                        std::fabs(a.FPy - b.FPy)});
    worst_c = std::max({worst_c, std::fabs(y[7]), std::fabs(y[8])});
  }
  std::printf("B2 minimal coordinates vs 9 absolute coordinates + Lagrange multipliers, 0..10 s: "
              "max |d position/angle| %.2e, |d rate| %.2e, |d joint force| %.2e N\n",
              worst_q, worst_v, worst_f);
  EXPECT_LT(worst_q, 1e-8);
  EXPECT_LT(worst_v, 1e-8);
  EXPECT_LT(worst_f, 1e-7);
  EXPECT_LT(worst_c, 1e-12);
}

TEST(B2Reference, PrintValues) {
  const auto s = testing::SolveB2Reference({1, 5, 10}, 1e-4);
  std::printf("B2 reference (minimal coordinate, RK4, step 1e-4):\n");
  for (const B2Sample& k : s) {
    std::printf("  t = %4.1f s: gamma = %.10f, gammadot = %.10f, rod_angle = %.10f, x_piston = %.10f, "
                "v_piston = %.10f\n",
                k.t, k.gamma, k.gammadot, k.rod_angle, k.x_piston, k.v_piston);
    std::printf("              xG1 = %.10f, yG1 = %.10f, xG2 = %.10f, yG2 = %.10f\n", k.xG1, k.yG1, k.xG2,
                k.yG2);
    std::printf("              T = %.10f, V = %.10f, W_tau = %.10f, D = %.10f\n", k.kinetic, k.potential,
                k.work_tau, k.dissipated);
    std::printf("              FO = (%.10f, %.10f), FA = (%.10f, %.10f), FB = (%.10f, %.10f), FPy = %.10f\n",
                k.F.FOx, k.F.FOy, k.F.FAx, k.F.FAy, k.F.FBx, k.F.FBy, k.F.FPy);
  }
  SUCCEED();
}

// ---- Four-bar ----------------------------------------------------------------------

using testing::FourBar;

double LoopClosureError(const FourBar& f, double th2, const testing::FourBarPose& q) {
  const double ex = f.a * std::cos(th2) + f.b * std::cos(q.theta3) - f.c * std::cos(q.theta4) -
                    f.d * std::cos(f.theta1);
  const double ey = f.a * std::sin(th2) + f.b * std::sin(q.theta3) - f.c * std::sin(q.theta4) -
                    f.d * std::sin(f.theta1);
  return std::hypot(ex, ey);
}

double AngleDiff(double a, double b) { return std::fabs(std::remainder(a - b, 2 * M_PI)); }

TEST(FourBarReference, LoopClosureOnBothBranches) {
  std::mt19937 rng(23);
  int closed = 0, open_fail = 0;
  double worst = 0;
  for (int k = 0; k < 200; ++k) {
    const FourBar f{U(rng, 0.1, 2), U(rng, 0.1, 2), U(rng, 0.1, 2), U(rng, 0.1, 2), U(rng, -M_PI, M_PI)};
    const double th2 = U(rng, -M_PI, M_PI);
    const auto p = testing::FourBarPosition(f, th2, +1), m = testing::FourBarPosition(f, th2, -1);
    ASSERT_EQ(p.has_value(), m.has_value());
    const double e = std::hypot(f.d * std::cos(f.theta1) - f.a * std::cos(th2),
                                f.d * std::sin(f.theta1) - f.a * std::sin(th2));
    if (!p) {
      EXPECT_TRUE(e > f.b + f.c || e < std::fabs(f.b - f.c));
      ++open_fail;
      continue;
    }
    ++closed;
    for (const auto* q : {&*p, &*m}) {
      worst = std::max(worst, LoopClosureError(f, th2, *q) / (f.a + f.b + f.c + f.d));
      EXPECT_NEAR(std::hypot(q->xB - q->xA, q->yB - q->yA), f.b, 1e-13);
      EXPECT_NEAR(std::hypot(q->xB - f.d * std::cos(f.theta1), q->yB - f.d * std::sin(f.theta1)), f.c, 1e-13);
    }
    // branch +1 to the left of A->O4, -1 to the right.
    const double Dx = f.d * std::cos(f.theta1) - p->xA, Dy = f.d * std::sin(f.theta1) - p->yA;
    EXPECT_GE(Dx * (p->yB - p->yA) - Dy * (p->xB - p->xA), -1e-12);
    EXPECT_LE(Dx * (m->yB - m->yA) - Dy * (m->xB - m->xA), 1e-12);
  }
  std::printf("Four-bar: %d assembled (both branches), %d not assemblable; max loop closure error %.2e\n",
              closed, open_fail, worst);
  EXPECT_GT(closed, 50);
  EXPECT_GT(open_fail, 10);
  EXPECT_LT(worst, 1e-14);
}

TEST(FourBarReference, MatchesFreudensteinHalfAngleSolution) {
  // Ground along +x: K1 cos th4 - K2 cos th2 + K3 = cos(th2 - th4), K1 = d/a,
  // K2 = d/c, K3 = (a^2 - b^2 + c^2 + d^2)/(2 a c); with t = tan(th4/2):
  // A t^2 + B t + C = 0, A = cos th2 - K1 - K2 cos th2 + K3, B = -2 sin th2,
  // C = K1 - (K2 + 1) cos th2 + K3.
  std::mt19937 rng(29);
  int n = 0;
  for (int k = 0; k < 300; ++k) {
    const FourBar f{U(rng, 0.1, 2), U(rng, 0.1, 2), U(rng, 0.1, 2), U(rng, 0.1, 2)};
    const double th2 = U(rng, -M_PI, M_PI);
    const auto p = testing::FourBarPosition(f, th2, +1), m = testing::FourBarPosition(f, th2, -1);
    if (!p) continue;
    const double K1 = f.d / f.a, K2 = f.d / f.c, K3 = (f.a * f.a - f.b * f.b + f.c * f.c + f.d * f.d) / (2 * f.a * f.c);
    const double A = std::cos(th2) - K1 - K2 * std::cos(th2) + K3, B = -2 * std::sin(th2),
                 C = K1 - (K2 + 1) * std::cos(th2) + K3;
    const double disc = B * B - 4 * A * C;
    if (disc < 1e-6 || std::fabs(A) < 1e-6) continue;  // near the limit positions or th4 = pi
    const double t1 = 2 * std::atan((-B + std::sqrt(disc)) / (2 * A));
    const double t2 = 2 * std::atan((-B - std::sqrt(disc)) / (2 * A));
    // The two roots are the two branches, in some order.
    const double straight = AngleDiff(p->theta4, t1) + AngleDiff(m->theta4, t2);
    const double crossed = AngleDiff(p->theta4, t2) + AngleDiff(m->theta4, t1);
    EXPECT_LT(std::min(straight, crossed), 1e-9) << "a b c d = " << f.a << " " << f.b << " " << f.c << " " << f.d;
    ++n;
  }
  EXPECT_GT(n, 50);
}

TEST(FourBarReference, RatesMatchDifferences) {
  std::mt19937 rng(31);
  int n = 0;
  double worst = 0;
  for (int k = 0; k < 300 && n < 100; ++k) {
    const FourBar f{U(rng, 0.1, 2), U(rng, 0.1, 2), U(rng, 0.1, 2), U(rng, 0.1, 2), U(rng, -M_PI, M_PI)};
    const double th2 = U(rng, -M_PI, M_PI), w2 = U(rng, -3, 3);
    for (int branch : {1, -1}) {
      const double h = 1e-4;
      bool ok = true;
      for (double dt : {-2 * h, -h, 0.0, h, 2 * h})
        ok = ok && testing::FourBarPosition(f, th2 + w2 * dt, branch).has_value();
      if (!ok) continue;
      const auto q = *testing::FourBarPosition(f, th2, branch);
      if (std::fabs(std::sin(q.theta3 - q.theta4)) < 0.1) continue;  // near a limit position
      const auto w = testing::FourBarVelocity(f, th2, q.theta3, q.theta4, w2);
      auto th = [&](double dt, bool rocker) {
        const auto qq = *testing::FourBarPosition(f, th2 + w2 * dt, branch);
        // unwrap about the centre value
        const double v = rocker ? qq.theta4 : qq.theta3, c = rocker ? q.theta4 : q.theta3;
        return c + std::remainder(v - c, 2 * M_PI);
      };
      const double d3 = D1([&](double dt) { return th(dt, false); }, 0, h);
      const double d4 = D1([&](double dt) { return th(dt, true); }, 0, h);
      worst = std::max({worst, std::fabs(w.omega3 - d3) / (1 + std::fabs(d3)),
                        std::fabs(w.omega4 - d4) / (1 + std::fabs(d4))});
      ++n;
    }
  }
  std::printf("Four-bar rates vs differences: %d cases, max relative error %.2e\n", n, worst);
  EXPECT_GT(n, 50);
  EXPECT_LT(worst, 1e-7);
}

TEST(FourBarReference, GrashofCrankRockerTurnsFully) {
  // s + l < p + q with the crank shortest: a = 1, b = 3, c = 2.5, d = 3 (1 + 3 < 3 + 2.5).
  const FourBar f{1, 3, 2.5, 3};
  for (int k = 0; k < 360; ++k) {
    const double th2 = k * M_PI / 180;
    for (int branch : {1, -1}) {
      const auto q = testing::FourBarPosition(f, th2, branch);
      ASSERT_TRUE(q.has_value()) << "theta2 = " << th2;
      if (branch == 1) {
        EXPECT_GT(q->yB, 0);  // the open linkage stays above the ground
      } else {
        EXPECT_LT(q->yB, 0);
      }
    }
  }
  // A linkage that cannot close: ground longer than the other three together.
  EXPECT_FALSE(testing::FourBarPosition(FourBar{1, 1, 1, 5}, 0.3, 1).has_value());
  EXPECT_THROW(testing::FourBarPosition(f, 0, 0), std::invalid_argument);
}

}  // namespace
}  // namespace paynter
