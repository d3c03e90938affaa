// Self-checks of the B4 reference (tests/b4_reference.h), the spatial arm with
// a sliding mass of BENCHMARKS.md:
//  - the hand-derived mass matrix, Coriolis/centrifugal, gravity/spring and
//    applied terms against a numerical Lagrangian built by a second route:
//    rotation matrices multiplied out, velocities and angular velocities
//    (omega^ = R' R^T) by forward automatic differentiation, the energies
//    evaluated from them, and their derivatives in q by 4th-order central
//    differences; at random states with random anisotropic inertias;
//  - the hand-derived velocity and acceleration of body 3's centre against
//    second-order automatic differentiation of its position along a path;
//  - along the integrated motion: energy balance (E - M (theta1 - theta1_0)
//    constant), the theta1 momentum balance (d/dt(A theta1') = M), no axial
//    force in the prismatic joint J3, and convergence in the tolerance.
// Prints the values at t = 5 s.
#include "b4_reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace paynter {
namespace {

using testing::B4Params;
using testing::B4State;

// ---- Second-order forward AD along one direction ----------------------------
// v: value, d: first derivative, dd: second derivative with respect to one
// parameter (time along a path q(t) = q + q' t + q'' t^2/2).
struct Jet {
  double v = 0, d = 0, dd = 0;
};
Jet operator+(Jet a, Jet b) { return {a.v + b.v, a.d + b.d, a.dd + b.dd}; }
Jet operator-(Jet a) { return {-a.v, -a.d, -a.dd}; }
Jet operator*(Jet a, Jet b) { return {a.v * b.v, a.d * b.v + a.v * b.d, a.dd * b.v + 2 * a.d * b.d + a.v * b.dd}; }
Jet Sin(Jet a) { return {std::sin(a.v), std::cos(a.v) * a.d, -std::sin(a.v) * a.d * a.d + std::cos(a.v) * a.dd}; }
Jet Cos(Jet a) { return {std::cos(a.v), -std::sin(a.v) * a.d, -std::cos(a.v) * a.d * a.d - std::sin(a.v) * a.dd}; }

using Mat = std::array<std::array<Jet, 3>, 3>;
using JVec = std::array<Jet, 3>;

Mat MatMul(const Mat& A, const Mat& B) {
  Mat C{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) C[i][j] = C[i][j] + A[i][k] * B[k][j];
  return C;
}
JVec MatVec(const Mat& A, const JVec& x) {
  JVec y{};
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) y[i] = y[i] + A[i][k] * x[k];
  return y;
}

// The configuration built from rotation matrices (independent of the hand
// triad u, e, w of the header).
struct NumKin {
  Mat R1, R2;  // body frames (body 3's frame is body 2's)
  JVec p2, p3; // centres of bodies 2 and 3
};
NumKin Kinematics(const B4Params& p, const Jet q[3]) {
  const Jet one{1, 0, 0}, zero{};
  const Jet c1 = Cos(q[0]), s1 = Sin(q[0]), c2 = Cos(q[1]), s2 = Sin(q[1]);
  const Mat Rz{{{c1, -s1, zero}, {s1, c1, zero}, {zero, zero, one}}};
  const Mat Ry{{{c2, zero, s2}, {zero, one, zero}, {-s2, zero, c2}}};
  NumKin k;
  k.R1 = Rz;
  k.R2 = MatMul(Rz, Ry);
  k.p2 = MatVec(k.R2, JVec{Jet{p.a, 0, 0}, zero, zero});
  k.p3 = MatVec(k.R2, JVec{Jet{p.a, 0, 0} + q[2], zero, zero});
  return k;
}

using Vec = std::array<double, 3>;

// Angular velocity in ground components from omega^ = R' R^T.
Vec Omega(const Mat& R) {
  double W[3][3] = {};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) W[i][j] += R[i][k].d * R[j][k].v;
  return {W[2][1], W[0][2], W[1][0]};
}
// 1/2 omega_b . diag(I) omega_b with omega_b = R^T omega.
double RotKE(const Mat& R, const std::array<double, 3>& I) {
  const Vec w = Omega(R);
  double e = 0;
  for (int a = 0; a < 3; ++a) {
    double wb = 0;
    for (int i = 0; i < 3; ++i) wb += R[i][a].v * w[i];
    e += 0.5 * I[a] * wb * wb;
  }
  return e;
}

double NumKinetic(const B4Params& p, const Vec& q, const Vec& qd) {
  const Jet qj[3] = {{q[0], qd[0], 0}, {q[1], qd[1], 0}, {q[2], qd[2], 0}};
  const NumKin k = Kinematics(p, qj);
  double v2 = 0, v3 = 0;
  for (int i = 0; i < 3; ++i) {
    v2 += k.p2[i].d * k.p2[i].d;
    v3 += k.p3[i].d * k.p3[i].d;
  }
  return 0.5 * p.m1 * v2 + 0.5 * p.m2 * v3 + RotKE(k.R1, p.J1) + RotKE(k.R2, p.I2) + RotKE(k.R2, p.I3);
}

double NumPotential(const B4Params& p, const Vec& q) {
  const Jet qj[3] = {{q[0], 0, 0}, {q[1], 0, 0}, {q[2], 0, 0}};
  const NumKin k = Kinematics(p, qj);
  return p.g * (p.m1 * k.p2[2].v + p.m2 * k.p3[2].v) + 0.5 * p.K * (q[2] - p.b) * (q[2] - p.b);
}

// Generalized force of M e_z on body 1: its virtual power M e_z . omega1.
Vec NumApplied(const B4Params& p, const Vec& q) {
  Vec Q{};
  for (int i = 0; i < 3; ++i) {
    Jet qj[3] = {{q[0], 0, 0}, {q[1], 0, 0}, {q[2], 0, 0}};
    qj[i].d = 1;
    Q[i] = p.M * Omega(Kinematics(p, qj).R1)[2];
  }
  return Q;
}

// Mass matrix by polarization of the (exactly quadratic) kinetic energy.
std::array<Vec, 3> NumMass(const B4Params& p, const Vec& q) {
  std::array<Vec, 3> m{};
  auto unit = [](int i, int j) {
    Vec v{};
    v[i] += 1;
    v[j] += 1;
    return v;
  };
  for (int i = 0; i < 3; ++i) m[i][i] = 2 * NumKinetic(p, q, unit(i, i)) / 4;  // unit(i,i) = 2 e_i
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (i != j) m[i][j] = NumKinetic(p, q, unit(i, j)) - 0.5 * m[i][i] - 0.5 * m[j][j];
  return m;
}

// 4th-order central difference of f at 0.
template <class F>
double D(F f, double h) {
  return (-f(2 * h) + 8 * f(h) - 8 * f(-h) + f(-2 * h)) / (12 * h);
}

struct NumTerms {
  std::array<Vec, 3> mass;
  Vec coriolis, potential, applied;
};
NumTerms NumEquationTerms(const B4Params& p, const Vec& q, const Vec& qd) {
  NumTerms t;
  t.mass = NumMass(p, q);
  const double h = 1e-3;
  for (int i = 0; i < 3; ++i) {
    // d/dt (dT/dq'_i) with q'' = 0: the derivative of (mass(q) q')_i along q'.
    const double dpdt = D(
        [&](double e) {
          const Vec qe{q[0] + e * qd[0], q[1] + e * qd[1], q[2] + e * qd[2]};
          const auto m = NumMass(p, qe);
          return m[i][0] * qd[0] + m[i][1] * qd[1] + m[i][2] * qd[2];
        },
        h);
    const double dTdq = D(
        [&](double e) {
          Vec qe = q;
          qe[i] += e;
          return NumKinetic(p, qe, qd);
        },
        h);
    t.coriolis[i] = dpdt - dTdq;
    t.potential[i] = D(
        [&](double e) {
          Vec qe = q;
          qe[i] += e;
          return NumPotential(p, qe);
        },
        h);
  }
  t.applied = NumApplied(p, q);
  return t;
}

double U(std::mt19937& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }

// The benchmark's parameters, then random ones with anisotropic inertias.
std::vector<B4Params> TestParams() {
  std::vector<B4Params> ps{B4Params{}};
  std::mt19937 rng(20240604);
  for (int k = 0; k < 5; ++k) {
    B4Params p;
    p.m1 = U(rng, 0.5, 2);
    p.m2 = U(rng, 0.5, 2);
    for (int i = 0; i < 3; ++i) {
      p.J1[i] = U(rng, 1e-3, 0.2);
      p.I2[i] = U(rng, 1e-3, 0.2);
      p.I3[i] = U(rng, 1e-3, 0.2);
    }
    p.a = U(rng, 0.1, 0.6);
    p.b = U(rng, 0.05, 0.2);
    p.K = U(rng, 10, 800);
    p.g = U(rng, 5, 15);
    p.M = U(rng, -1, 1);
    ps.push_back(p);
  }
  return ps;
}

B4State RandomState(std::mt19937& rng) {
  return {U(rng, -M_PI, M_PI), U(rng, -M_PI, M_PI), U(rng, -0.2, 0.4),
          U(rng, -3, 3),       U(rng, -3, 3),       U(rng, -2, 2)};
}

TEST(B4Reference, EquationsMatchNumericalLagrangian) {
  std::mt19937 rng(7);
  double err_m = 0, err_c = 0, err_p = 0, err_q = 0, err_e = 0;
  for (const B4Params& p : TestParams()) {
    for (int k = 0; k < 8; ++k) {
      const B4State x = RandomState(rng);
      const Vec q{x.theta1, x.theta2, x.s}, qd{x.dtheta1, x.dtheta2, x.ds};
      const testing::B4EomTerms hand = testing::B4EquationTerms(p, x);
      const NumTerms num = NumEquationTerms(p, q, qd);
      double scale_m = 0, scale_f = 1;
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) scale_m = std::max(scale_m, std::fabs(hand.mass[i][j]));
        scale_f = std::max({scale_f, std::fabs(hand.coriolis[i]), std::fabs(hand.potential[i])});
      }
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
          const double e = std::fabs(hand.mass[i][j] - num.mass[i][j]) / scale_m;
          err_m = std::max(err_m, e);
          EXPECT_LT(e, 1e-13) << "mass[" << i << "][" << j << "] " << hand.mass[i][j] << " vs " << num.mass[i][j];
        }
        const double ec = std::fabs(hand.coriolis[i] - num.coriolis[i]) / scale_f;
        const double ep = std::fabs(hand.potential[i] - num.potential[i]) / scale_f;
        const double eq = std::fabs(hand.applied[i] - num.applied[i]) / (1 + std::fabs(p.M));
        err_c = std::max(err_c, ec);
        err_p = std::max(err_p, ep);
        err_q = std::max(err_q, eq);
        EXPECT_LT(ec, 1e-8) << "coriolis[" << i << "] " << hand.coriolis[i] << " vs " << num.coriolis[i];
        EXPECT_LT(ep, 1e-8) << "potential[" << i << "] " << hand.potential[i] << " vs " << num.potential[i];
        EXPECT_LT(eq, 1e-14) << "applied[" << i << "] " << hand.applied[i] << " vs " << num.applied[i];
      }
      // The energies themselves, no differencing.
      const double T = testing::B4KineticEnergy(p, x), V = testing::B4PotentialEnergy(p, x);
      const double eT = std::fabs(T - NumKinetic(p, q, qd)) / (1 + std::fabs(T));
      const double eV = std::fabs(V - NumPotential(p, q)) / (1 + std::fabs(V));
      err_e = std::max({err_e, eT, eV});
      EXPECT_LT(eT, 1e-13);
      EXPECT_LT(eV, 1e-13);
    }
  }
  std::printf("B4 hand vs numerical Lagrangian, max relative error: mass %.2e, coriolis %.2e, "
              "potential %.2e, applied %.2e, energies %.2e\n",
              err_m, err_c, err_p, err_q, err_e);
}

TEST(B4Reference, BodyThreeKinematicsMatchAutomaticDifferentiation) {
  std::mt19937 rng(11);
  double err_v = 0, err_a = 0;
  for (const B4Params& p : TestParams()) {
    for (int k = 0; k < 8; ++k) {
      const B4State x = RandomState(rng);
      const std::array<double, 3> qdd{U(rng, -5, 5), U(rng, -5, 5), U(rng, -5, 5)};
      const Jet qj[3] = {{x.theta1, x.dtheta1, qdd[0]}, {x.theta2, x.dtheta2, qdd[1]}, {x.s, x.ds, qdd[2]}};
      const NumKin kin = Kinematics(p, qj);
      const auto r = testing::B4Position3(p, x);
      const auto v = testing::B4Velocity3(p, x);
      const auto a = testing::B4Acceleration3(p, x, qdd);
      for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(r[i], kin.p3[i].v, 1e-14);
        err_v = std::max(err_v, std::fabs(v[i] - kin.p3[i].d));
        err_a = std::max(err_a, std::fabs(a[i] - kin.p3[i].dd));
      }
    }
  }
  std::printf("B4 body 3 velocity / acceleration, hand vs AD, max abs error: %.2e / %.2e\n", err_v, err_a);
  EXPECT_LT(err_v, 1e-13);
  EXPECT_LT(err_a, 1e-12);
}

TEST(B4Reference, ConstraintForceHasNoAxialComponentAtRandomStates) {
  std::mt19937 rng(13);
  for (const B4Params& p : TestParams()) {
    for (int k = 0; k < 8; ++k) {
      const B4State x = RandomState(rng);
      const auto f = testing::B4ConstraintForceJ3(p, x);
      const auto u = testing::B4Axes(x).u;
      const double fu = f[0] * u[0] + f[1] * u[1] + f[2] * u[2];
      const double fn = std::hypot(f[0], f[1], f[2]);
      EXPECT_LT(std::fabs(fu), 1e-12 * (1 + fn)) << "F.u = " << fu << ", |F| = " << fn;
    }
  }
}

// ---- The integrated motion ----------------------------------------------------

constexpr double kTEnd = 5.0;
constexpr int kOut = 1000;

std::vector<double> OutputTimes() {
  std::vector<double> t(kOut + 1);
  for (int k = 0; k <= kOut; ++k) t[k] = kTEnd * k / kOut;
  return t;
}

struct Solved {
  std::vector<testing::B4Sample> s;
  SolverStats stats;
  double seconds = 0;
};
Solved Solve(double rtol, double atol) {
  Solved r;
  const auto start = std::chrono::steady_clock::now();
  r.s = testing::SolveB4Reference(OutputTimes(), rtol, atol, B4Params{}, nullptr, &r.stats);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}
const Solved& Fine() {
  static const Solved r = Solve(1e-12, 1e-12);
  return r;
}

TEST(B4Reference, StartsAtTheBenchmarkInitialState) {
  const auto& s = Fine().s;
  ASSERT_EQ(s.size(), static_cast<size_t>(kOut + 1));
  EXPECT_EQ(s.front().t, 0.0);
  EXPECT_EQ(s.back().t, kTEnd);
  const B4Params p;
  EXPECT_DOUBLE_EQ(s.front().X3, p.a + p.c);
  EXPECT_EQ(s.front().Y3, 0.0);
  EXPECT_EQ(s.front().Z3, 0.0);
  EXPECT_EQ(s.front().s, p.c);
  EXPECT_EQ(s.front().sdot, 0.0);
  // At rest with the arm along X: body 3's X acceleration is s'' = -K (c - b)/m2,
  // produced by the spring alone, so F_J3 (perpendicular to the arm) has no
  // X component.
  EXPECT_NEAR(s.front().FJ3x, 0.0, 1e-14);
}

TEST(B4Reference, EnergyBalance) {
  const B4Params p;
  const auto& s = Fine().s;
  const double e0 = testing::B4TotalEnergy(p, s.front().x);
  double drift = 0, scale = 0;
  for (const auto& k : s) {
    const double T = testing::B4KineticEnergy(p, k.x), V = testing::B4PotentialEnergy(p, k.x);
    scale = std::max(scale, T + std::fabs(V));
    drift = std::max(drift, std::fabs(T + V - testing::B4WorkOfM(p, k.x.theta1, s.front().x.theta1) - e0));
  }
  std::printf("B4 energy balance: max |E - M (theta1 - theta1_0) - E0| = %.3e (energy scale %.3f J, "
              "relative %.2e); %ld steps, %ld rejected, %.3f s\n",
              drift, scale, drift / scale, Fine().stats.steps, Fine().stats.rejected, Fine().seconds);
  EXPECT_LT(drift / scale, 1e-9);
}

TEST(B4Reference, MomentumAboutZGrowsAsMt) {
  // theta1 does not appear in T or V: d/dt (A theta1') = M.
  const B4Params p;
  double err = 0, scale = 0;
  for (const auto& k : Fine().s) {
    const double h = testing::B4EquationTerms(p, k.x).mass[0][0] * k.x.dtheta1;
    err = std::max(err, std::fabs(h - p.M * k.t));
    scale = std::max(scale, std::fabs(p.M * k.t));
  }
  std::printf("B4 momentum about Z: max |A theta1' - M t| = %.3e\n", err);
  EXPECT_LT(err, 1e-9 * scale);
}

TEST(B4Reference, NoAxialForceInPrismaticJointAlongTheMotion) {
  const B4Params p;
  double worst = 0;
  for (const auto& k : Fine().s) {
    const auto u = testing::B4Axes(k.x).u;
    const double fu = k.FJ3x * u[0] + k.FJ3y * u[1] + k.FJ3z * u[2];
    const double fn = std::hypot(k.FJ3x, k.FJ3y, k.FJ3z);
    worst = std::max(worst, std::fabs(fu) / std::max(fn, p.m2 * p.g));
  }
  std::printf("B4 max |F_J3 . u| / max(|F_J3|, m2 g) = %.2e\n", worst);
  EXPECT_LT(worst, 1e-12);
}

TEST(B4Reference, OutputsAreConsistentAndConverged) {
  const auto& fine = Fine().s;
  // sdot is the rate of s: compare with 4th-order differences of the samples.
  const double dt = kTEnd / kOut;
  double err_sdot = 0;
  for (int k = 2; k + 2 <= kOut; ++k) {
    const double d =
        (-fine[k + 2].s + 8 * fine[k + 1].s - 8 * fine[k - 1].s + fine[k - 2].s) / (12 * dt);
    err_sdot = std::max(err_sdot, std::fabs(d - fine[k].sdot));
  }
  // Truncation of the difference formula (it falls 14-16x per halving of dt:
  // 3.7e-4, 2.7e-5, 1.9e-6 for dt = 5, 2.5, 1.25 ms).
  EXPECT_LT(err_sdot, 1e-3);
  // Tolerance convergence at t = 5 s.
  const Solved coarse = Solve(1e-10, 1e-12);
  const auto& a = fine.back();
  const auto& b = coarse.s.back();
  const double dpos = std::max({std::fabs(a.X3 - b.X3), std::fabs(a.Y3 - b.Y3), std::fabs(a.Z3 - b.Z3)});
  const double dfor = std::max({std::fabs(a.FJ3x - b.FJ3x), std::fabs(a.FJ3y - b.FJ3y), std::fabs(a.FJ3z - b.FJ3z)});
  std::printf("B4 at t = 5 s, rtol 1e-10 vs 1e-12: max |d position| = %.2e m, max |d F_J3| = %.2e N; "
              "|d sdot/dt - sdot| = %.2e\n",
              dpos, dfor, err_sdot);
  EXPECT_LT(dpos, 1e-6);
  EXPECT_LT(dfor, 1e-3);
}

TEST(B4Reference, PrintValuesAtFiveSeconds) {
  const auto& e = Fine().s.back();
  std::printf("B4 reference at t = %.1f s (dopri5, rtol = atol = 1e-12):\n", e.t);
  std::printf("  theta1 = %.12f rad, theta2 = %.12f rad (positive = arm tipped down)\n", e.x.theta1, e.x.theta2);
  std::printf("  X3 = %.12f m, Y3 = %.12f m, Z3 = %.12f m\n", e.X3, e.Y3, e.Z3);
  std::printf("  s = %.12f m, sdot = %.12f m/s\n", e.s, e.sdot);
  std::printf("  FJ3x = %.10f N, FJ3y = %.10f N, FJ3z = %.10f N, |FJ3| = %.10f N\n", e.FJ3x, e.FJ3y, e.FJ3z,
              std::hypot(e.FJ3x, e.FJ3y, e.FJ3z));
  // Ranges over the run, for the figures 6 to 9 of the paper.
  double mn[4] = {1e300, 1e300, 1e300, 1e300}, mx[4] = {-1e300, -1e300, -1e300, -1e300};
  for (const auto& k : Fine().s) {
    const double v[4] = {k.X3, k.Y3, k.Z3, std::hypot(k.FJ3x, k.FJ3y, k.FJ3z)};
    for (int i = 0; i < 4; ++i) {
      mn[i] = std::min(mn[i], v[i]);
      mx[i] = std::max(mx[i], v[i]);
    }
  }
  std::printf("  ranges over 0..5 s: X3 [%.4f, %.4f], Y3 [%.4f, %.4f], Z3 [%.4f, %.4f], |FJ3| [%.4f, %.4f]\n",
              mn[0], mx[0], mn[1], mx[1], mn[2], mx[2], mn[3], mx[3]);
  SUCCEED();
}

}  // namespace
}  // namespace paynter
