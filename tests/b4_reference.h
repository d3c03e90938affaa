// B4 of BENCHMARKS.md ("Spatial arm with a sliding mass", seed 001 Section IV):
// an independent reference solution in the three joint coordinates
// q = (theta1, theta2, s), written by hand from Lagrange's equations. Nothing
// here comes from a bond graph or from paynter's multibody elements; only
// paynter::Integrate (dopri5) is used to integrate the ODE.
//
// ---- Geometry and conventions ------------------------------------------------
//
// Ground: X, Y, Z with Z up; gravity g = 9.8 along -Z.
// R_z(t), R_y(t) are the usual right-handed rotations:
//   R_z(t) = [c -s 0; s c 0; 0 0 1],   R_y(t) = [c 0 s; 0 1 0; -s 0 c].
// Body 1 (vertical shaft): frame R1 = R_z(theta1) (revolute J1 about ground Z
//   at the origin). Its centre is at the origin on the axis: it never moves.
// Body 2 (mass m1): frame R2 = R_z(theta1) R_y(theta2) (revolute J2 at the
//   origin about body 1's y axis).
//   SIGN CONVENTION: R_y(theta2) e_x = (cos theta2, 0, -sin theta2), so a
//   POSITIVE theta2 tips body 2's x axis DOWN, toward -Z. Gravity therefore
//   accelerates theta2 in the positive direction from the horizontal start.
//   Body 2's centre: p2 = a u, with u = R2 e_x the unit vector of body 2's x
//   axis in ground components.
// Body 3 (mass m2): prismatic J3 along body 2's x axis; frame R3 = R2 (a
//   prismatic joint does not rotate). Its centre is at distance s beyond body
//   2's centre: p3 = (a + s) u. Spring K in J3, rest length b: force on body 3
//   -K (s - b) u (and the opposite on body 2).
// Driving moment M about Z in J1 (on body 1; reaction on the ground).
// Start: theta1 = theta2 = 0 (arm along ground X), s = c, all rates zero.
//
// ---- Kinematics (derivation) ---------------------------------------------------
//
// With c1 = cos theta1, s1 = sin theta1, c2 = cos theta2, s2 = sin theta2:
//   u  = R_z(theta1) R_y(theta2) e_x = ( c1 c2,  s1 c2, -s2 )
//   e  = R_z(theta1) e_y             = (-s1,     c1,     0 )   (J2's axis)
//   w  = du/dtheta2                  = (-c1 s2, -s1 s2, -c2 )
//   du/dtheta1 = (-s1 c2, c1 c2, 0) = c2 e.
// (u, e, w) is an orthonormal triad (w = e x u). Further
//   de/dtheta1 = -h with h = (c1, s1, 0);  dw/dtheta1 = -s2 e;  dw/dtheta2 = -u;
//   h = c2 u - s2 w;  e_z = -s2 u - c2 w.
// Velocities:  u' = theta1' c2 e + theta2' w,
//   v2 = a u',   v3 = s' u + r u'   with r = a + s,
//   |v2|^2 = a^2 (c2^2 theta1'^2 + theta2'^2),
//   |v3|^2 = s'^2 + r^2 (c2^2 theta1'^2 + theta2'^2)     (u . u' = 0).
// Angular velocities: omega1 = theta1' e_z,
//   omega2 = omega3 = theta1' e_z + theta2' e.
// In body 2's (= body 3's) frame, omega^b = R2^T omega
//   = theta1' R_y^T R_z^T e_z + theta2' R_y^T R_z^T R_z e_y
//   = theta1' R_y(theta2)^T e_z + theta2' e_y
//   = (-s2 theta1', theta2', c2 theta1'),
// and in body 1's frame omega1^b = (0, 0, theta1').
// Rotational kinetic energy of a body with principal inertia diag(Ixx, Iyy,
// Izz) about its centre in its own frame: 1/2 omega^b . diag(I) omega^b, so
//   T_rot1 = 1/2 J1zz theta1'^2            (J1xx, J1yy play no part),
//   T_rot2 = 1/2 (I2xx s2^2 theta1'^2 + I2yy theta2'^2 + I2zz c2^2 theta1'^2),
//   T_rot3 likewise with I3.  (Isotropic I: 1/2 I (theta1'^2 + theta2'^2).)
//
// ---- Lagrangian --------------------------------------------------------------
//
// Let Ix = I2xx + I3xx, Iy = I2yy + I3yy, Iz = I2zz + I3zz. Then
//   T = 1/2 A(theta2, s) theta1'^2 + 1/2 B(s) theta2'^2 + 1/2 m2 s'^2,
//   A = J1zz + Ix s2^2 + (Iz + m1 a^2 + m2 r^2) c2^2
//     = J1zz + Ix + C c2^2,   C = Iz + m1 a^2 + m2 r^2 - Ix,
//   B = Iy + m1 a^2 + m2 r^2.
// The mass matrix is diagonal: diag(A, B, m2). Its derivatives:
//   A_theta2 = -2 C s2 c2,   A_s = 2 m2 r c2^2,   B_s = 2 m2 r.
// Potential energy (heights z2 = -a s2, z3 = -r s2; body 1 does not move):
//   V = -g s2 (m1 a + m2 r) + 1/2 K (s - b)^2,
//   V_theta2 = -g c2 (m1 a + m2 r),   V_s = -g m2 s2 + K (s - b).
// Generalized applied force: the virtual power of M e_z on body 1 is
// M theta1', so Q = (M, 0, 0).
//
// Lagrange's equations d/dt(dT/dq') - dT/dq + dV/dq = Q give
//   A theta1'' + (A_theta2 theta2' + A_s s') theta1'                   = M
//   B theta2'' + B_s s' theta2' - 1/2 A_theta2 theta1'^2 + V_theta2    = 0
//   m2 s''     - 1/2 A_s theta1'^2 - 1/2 B_s theta2'^2 + V_s           = 0
// i.e. mass(q) q'' + coriolis(q, q') + potential(q) = applied, with
//   coriolis = ( (A_theta2 theta2' + A_s s') theta1',
//                B_s s' theta2' - 1/2 A_theta2 theta1'^2,
//                -1/2 A_s theta1'^2 - 1/2 B_s theta2'^2 ).
// The third line reads m2 s'' = m2 r (c2^2 theta1'^2 + theta2'^2)
//   + m2 g s2 - K (s - b): centrifugal, gravity along u, spring.
//
// ---- Acceleration of body 3 and the constraint force in J3 --------------------
//
// u'' = -(c2^2 theta1'^2 + theta2'^2) u
//       + (c2 theta1'' - 2 s2 theta1' theta2') e
//       + (theta2'' + s2 c2 theta1'^2) w,
// a3 = s'' u + 2 s' u' + r u''
//    = [s'' - r (c2^2 theta1'^2 + theta2'^2)] u
//    + [2 s' c2 theta1' + r (c2 theta1'' - 2 s2 theta1' theta2')] e
//    + [2 s' theta2' + r (theta2'' + s2 c2 theta1'^2)] w.
// Newton for body 3: m2 a3 = F_J3 + F_spring + m2 g_vec, g_vec = (0, 0, -g),
// F_spring = -K (s - b) u, so F_J3 = m2 a3 - m2 g_vec - F_spring (the force the
// prismatic joint applies to body 3, spring excluded). Its component along u
// is m2 (s'' - r(...)) - m2 g s2 + K (s - b) = 0 by the third equation of
// motion: a prismatic joint transmits no force along its axis.
#pragma once

#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "paynter/solvers.h"

namespace paynter::testing {

// The data of B4 (BENCHMARKS.md), with the paper's names: m1 is body 2's
// mass, m2 body 3's. Every field may be changed (the tests use random values
// to check the derivation with anisotropic inertias).
struct B4Params {
  double m1 = 1.0, m2 = 1.0;                      // masses of bodies 2 and 3
  std::array<double, 3> J1{4.167e-4, 4.167e-4, 4.167e-4};  // body 1, about its centre
  std::array<double, 3> I2{4.167e-4, 4.167e-4, 4.167e-4};  // body 2, principal, own frame
  std::array<double, 3> I3{4.167e-4, 4.167e-4, 4.167e-4};  // body 3, principal, own frame
  double a = 0.3;   // J2 to body 2's centre along body 2's x
  double b = 0.1;   // spring rest length
  double c = 0.15;  // initial s
  double K = 500;   // spring stiffness, N/m
  double g = 9.8;   // gravity along -Z
  double M = 0.1;   // driving moment about Z in J1, N m
  double t_end = 5;
};

struct B4State {
  double theta1, theta2, s, dtheta1, dtheta2, ds;
};

inline B4State B4InitialState(const B4Params& p = {}) { return {0, 0, p.c, 0, 0, 0}; }

// The terms of mass(q) q'' + coriolis(q, q') + potential(q) = applied.
struct B4EomTerms {
  double mass[3][3];
  double coriolis[3];
  double potential[3];  // dV/dq
  double applied[3];    // generalized force of M
};

inline B4EomTerms B4EquationTerms(const B4Params& p, const B4State& x) {
  const double c2 = std::cos(x.theta2), s2 = std::sin(x.theta2);
  const double r = p.a + x.s;
  const double Ix = p.I2[0] + p.I3[0], Iy = p.I2[1] + p.I3[1], Iz = p.I2[2] + p.I3[2];
  const double C = Iz + p.m1 * p.a * p.a + p.m2 * r * r - Ix;
  const double A = p.J1[2] + Ix + C * c2 * c2;
  const double B = Iy + p.m1 * p.a * p.a + p.m2 * r * r;
  const double A_th2 = -2 * C * s2 * c2, A_s = 2 * p.m2 * r * c2 * c2, B_s = 2 * p.m2 * r;
  B4EomTerms e{};
  e.mass[0][0] = A;
  e.mass[1][1] = B;
  e.mass[2][2] = p.m2;
  const double w1 = x.dtheta1, w2 = x.dtheta2, v = x.ds;
  e.coriolis[0] = (A_th2 * w2 + A_s * v) * w1;
  e.coriolis[1] = B_s * v * w2 - 0.5 * A_th2 * w1 * w1;
  e.coriolis[2] = -0.5 * A_s * w1 * w1 - 0.5 * B_s * w2 * w2;
  e.potential[0] = 0;
  e.potential[1] = -p.g * c2 * (p.m1 * p.a + p.m2 * r);
  e.potential[2] = -p.g * p.m2 * s2 + p.K * (x.s - p.b);
  e.applied[0] = p.M;
  e.applied[1] = 0;
  e.applied[2] = 0;
  return e;
}

// q'' from the equations of motion (the mass matrix is diagonal).
inline std::array<double, 3> B4Accelerations(const B4Params& p, const B4State& x) {
  const B4EomTerms e = B4EquationTerms(p, x);
  std::array<double, 3> qdd;
  for (int i = 0; i < 3; ++i) qdd[i] = (e.applied[i] - e.coriolis[i] - e.potential[i]) / e.mass[i][i];
  return qdd;
}

using B4Vec = std::array<double, 3>;

// The unit vectors u (body 2's x axis), e (J2's axis = body 1's y axis) and
// w = du/dtheta2, in ground components.
struct B4Triad {
  B4Vec u, e, w;
};
inline B4Triad B4Axes(const B4State& x) {
  const double c1 = std::cos(x.theta1), s1 = std::sin(x.theta1);
  const double c2 = std::cos(x.theta2), s2 = std::sin(x.theta2);
  return {{c1 * c2, s1 * c2, -s2}, {-s1, c1, 0}, {-c1 * s2, -s1 * s2, -c2}};
}

inline B4Vec B4Position3(const B4Params& p, const B4State& x) {
  const B4Triad t = B4Axes(x);
  const double r = p.a + x.s;
  return {r * t.u[0], r * t.u[1], r * t.u[2]};
}

inline B4Vec B4Velocity3(const B4Params& p, const B4State& x) {
  const B4Triad t = B4Axes(x);
  const double r = p.a + x.s, c2 = std::cos(x.theta2);
  B4Vec v;
  for (int i = 0; i < 3; ++i)
    v[i] = x.ds * t.u[i] + r * (x.dtheta1 * c2 * t.e[i] + x.dtheta2 * t.w[i]);
  return v;
}

// Acceleration of body 3's centre for given q, q', q''.
inline B4Vec B4Acceleration3(const B4Params& p, const B4State& x, const std::array<double, 3>& qdd) {
  const B4Triad t = B4Axes(x);
  const double c2 = std::cos(x.theta2), s2 = std::sin(x.theta2), r = p.a + x.s;
  const double w1 = x.dtheta1, w2 = x.dtheta2, v = x.ds;
  const double au = qdd[2] - r * (c2 * c2 * w1 * w1 + w2 * w2);
  const double ae = 2 * v * c2 * w1 + r * (c2 * qdd[0] - 2 * s2 * w1 * w2);
  const double aw = 2 * v * w2 + r * (qdd[1] + s2 * c2 * w1 * w1);
  B4Vec acc;
  for (int i = 0; i < 3; ++i) acc[i] = au * t.u[i] + ae * t.e[i] + aw * t.w[i];
  return acc;
}

// The force J3 applies to body 3 (spring excluded), ground components, with
// q'' from the equations of motion.
inline B4Vec B4ConstraintForceJ3(const B4Params& p, const B4State& x) {
  const B4Vec a3 = B4Acceleration3(p, x, B4Accelerations(p, x));
  const B4Triad t = B4Axes(x);
  const double fs = -p.K * (x.s - p.b);  // spring force on body 3 along u
  const B4Vec gv{0, 0, -p.g};
  B4Vec f;
  for (int i = 0; i < 3; ++i) f[i] = p.m2 * a3[i] - p.m2 * gv[i] - fs * t.u[i];
  return f;
}

inline double B4KineticEnergy(const B4Params& p, const B4State& x) {
  const B4EomTerms e = B4EquationTerms(p, x);
  return 0.5 * (e.mass[0][0] * x.dtheta1 * x.dtheta1 + e.mass[1][1] * x.dtheta2 * x.dtheta2 +
                e.mass[2][2] * x.ds * x.ds);
}

// Gravity (zero with the arm horizontal) plus spring.
inline double B4PotentialEnergy(const B4Params& p, const B4State& x) {
  const double r = p.a + x.s;
  return -p.g * std::sin(x.theta2) * (p.m1 * p.a + p.m2 * r) + 0.5 * p.K * (x.s - p.b) * (x.s - p.b);
}

inline double B4TotalEnergy(const B4Params& p, const B4State& x) {
  return B4KineticEnergy(p, x) + B4PotentialEnergy(p, x);
}

// Work done by the constant moment M since theta1 was theta1_0.
inline double B4WorkOfM(const B4Params& p, double theta1, double theta1_0 = 0) {
  return p.M * (theta1 - theta1_0);
}

// One output of the reference; column names as in BENCHMARKS.md.
struct B4Sample {
  double t;
  B4State x;
  double X3, Y3, Z3, s, sdot, FJ3x, FJ3y, FJ3z;
};

inline B4Sample B4MakeSample(const B4Params& p, double t, const B4State& x) {
  const B4Vec r3 = B4Position3(p, x);
  const B4Vec f = B4ConstraintForceJ3(p, x);
  return {t, x, r3[0], r3[1], r3[2], x.s, x.ds, f[0], f[1], f[2]};
}

inline OdeProblem B4Problem(const B4Params& p) {
  OdeProblem prob;
  prob.n = 6;
  prob.rhs = [p](double, const double* y, double* dy) {
    const B4State x{y[0], y[1], y[2], y[3], y[4], y[5]};
    const std::array<double, 3> qdd = B4Accelerations(p, x);
    dy[0] = y[3];
    dy[1] = y[4];
    dy[2] = y[5];
    dy[3] = qdd[0];
    dy[4] = qdd[1];
    dy[5] = qdd[2];
  };
  prob.state_names = {"theta1", "theta2", "s", "dtheta1", "dtheta2", "ds"};
  return prob;
}

// Integrates B4 from t = 0 (state x0, default the benchmark's start) with
// dopri5 and returns a sample at each of `times` (non-decreasing, >= 0). The
// run is split at the output times, so each output is a step end, never an
// interpolated value. stats, if given, receives the summed solver counts.
inline std::vector<B4Sample> SolveB4Reference(const std::vector<double>& times, double rtol, double atol,
                                              const B4Params& p = {}, const B4State* x0 = nullptr,
                                              SolverStats* stats = nullptr) {
  const OdeProblem prob = B4Problem(p);
  const B4State start = x0 ? *x0 : B4InitialState(p);
  std::vector<double> y{start.theta1, start.theta2, start.s, start.dtheta1, start.dtheta2, start.ds};
  double t = 0;
  std::vector<B4Sample> out;
  out.reserve(times.size());
  SolverStats total;
  for (double tk : times) {
    if (tk < t) throw std::invalid_argument("SolveB4Reference: output times must be >= 0 and non-decreasing");
    if (tk > t) {
      SolverOptions so;
      so.method = Method::kDopri5;
      so.t0 = t;
      so.t_end = tk;
      so.rtol = rtol;
      so.atol = atol;
      so.dt_out = tk - t;    // outputs at t and tk only
      so.max_step = tk - t;  // no artificial limit inside a segment
      std::vector<double> yend(y.size());
      // The observer's last call is at t_end = tk, with the step-end state.
      const SolverStats st =
          Integrate(prob, y, so, [&](double, const double* yy) { yend.assign(yy, yy + prob.n); });
      total.steps += st.steps;
      total.rejected += st.rejected;
      total.rhs_evals += st.rhs_evals;
      total.integrate_seconds += st.integrate_seconds;
      y = yend;
      t = tk;
    }
    out.push_back(B4MakeSample(p, t, {y[0], y[1], y[2], y[3], y[4], y[5]}));
  }
  if (stats) *stats = total;
  return out;
}

}  // namespace paynter::testing
