// B2 of docs/benchmarks.md (planar slider crank, Boudon et al. 2019, Table 7):
// an independent reference solution in the one minimal coordinate, the crank
// angle gamma, written by hand from Lagrange's equation, and a closed-form
// four-bar linkage (positions and rates of the coupler and rocker from the
// crank). Nothing here comes from a bond graph, from paynter's multibody
// elements or from paynter's solvers: the header needs only <cmath>, and its
// own fixed-step RK4 integrates the equation of motion.
//
// ---- Slider crank: geometry and conventions ----------------------------------
//
// Plane x-y, gravity g along -y. Crank O-A: O at the origin, A = r (cos g, sin g)
// with g = gamma the crank angle from +x (counterclockwise positive). Rod A-B,
// length l, angle phi of A->B from +x: B = A + l (cos phi, sin phi). The piston
// sits at B and slides along the x axis, so y_B = r sin g + l sin phi = 0:
//   sin phi = -lam sin g,   lam = r / l  (< 1),
//   cos phi = +sqrt(1 - lam^2 sin^2 g)   (the branch of the benchmark's start,
//                                         rod along +x; it never changes, since
//                                         cos phi >= sqrt(1 - lam^2) > 0),
//   x_B = r cos g + l cos phi.
// Centres of mass at the middle of each link:
//   G1 = (r/2) (cos g, sin g),
//   G2 = (A + B)/2 = (r cos g + (l/2) cos phi, (r/2) sin g),
//   G3 = B = (x_B, 0).
//
// ---- Derivatives in g (written out; no numerical differentiation) ----------
//
// Let sg = sin g, cg = cos g, cp = cos phi, sp = sin phi = -lam sg.
// From cp phi_g = d(sin phi)/dg = -lam cg:
//   phi_g  = -lam cg / cp,
//   phi_gg = d/dg(-lam cg / cp) = lam sg / cp + lam cg cp_g / cp^2,
//            cp_g = -sp phi_g = -lam^2 sg cg / cp,
//          = lam sg (cp^2 - lam^2 cg^2) / cp^3 = lam sg (1 - lam^2) / cp^3.
// Any point P(g) of the mechanism then has P_g and P_gg from
//   d(cos phi)/dg = -sp phi_g,   d2(cos phi)/dg2 = -cp phi_g^2 - sp phi_gg,
//   d(sin phi)/dg = cp phi_g,    d2(sin phi)/dg2 = -sp phi_g^2 + cp phi_gg:
//   x_B_g  = -r sg - l sp phi_g,           x_B_gg = -r cg - l (cp phi_g^2 + sp phi_gg),
//   G1_g   = (r/2)(-sg, cg),               G1_gg  = -(r/2)(cg, sg),
//   G2_g   = (-r sg - (l/2) sp phi_g, (r/2) cg),
//   G2_gg  = (-r cg - (l/2)(cp phi_g^2 + sp phi_gg), -(r/2) sg).
// (G2's y is r sg + (l/2) sp = (r/2) sg exactly, because B is on the x axis.)
//
// ---- Lagrangian ---------------------------------------------------------------
//
// Velocities are P_g gdot, angular velocities gdot (crank), phi_g gdot (rod),
// 0 (piston). With I1, I2 the central inertias:
//   T = 1/2 M(g) gdot^2,
//   M(g) = I1 + m1 |G1_g|^2 + I2 phi_g^2 + m2 |G2_g|^2 + m3 x_B_g^2
//        ( m1 |G1_g|^2 = m1 r^2 / 4: the crank's inertia about O is I1 + m1 r^2/4 ),
//   M_g(g) = 2 (m1 G1_g.G1_gg + I2 phi_g phi_gg + m2 G2_g.G2_gg + m3 x_B_g x_B_gg)
//          ( G1_g.G1_gg = 0 ),
//   V(g) = g0 (m1 y_G1 + m2 y_G2 + m3 y_B) = g0 (m1 + m2) (r/2) sin g,
//   V_g  = g0 (m1 + m2) (r/2) cos g          (g0 = 9.81, the gravity).
// Generalized force, from the virtual power of the loads:
//   torque tau on the crank, damping b1 in the crank's ground pivot
//   (moment -b1 gdot), damping b3 on the piston (force -b3 x_B_dot along x):
//   Q = tau - b1 gdot - b3 x_B_g^2 gdot.
// Lagrange's equation d/dt(dT/dgdot) - dT/dg + dV/dg = Q:
//   M(g) gddot + 1/2 M_g(g) gdot^2 + V_g(g) = tau - (b1 + b3 x_B_g^2) gdot.
//
// ---- Energy balance -------------------------------------------------------------
//
//   T + V - W_tau + D = T(0) + V(0) = 0,   W_tau = tau (g - g(0)),
//   D = int (b1 gdot^2 + b3 x_B_dot^2) dt   (integrated as a third state).
//
// ---- Joint reaction forces (Newton-Euler with the accelerations) ------------
//
// Conventions of paynter's multibody joints (docs/multibody.md): a joint's
// force is the one it applies to its body2, in world components, constraint
// force only (joint dampers excluded). Joints: O = ground->crank,
// A = crank->rod, B = rod->piston, P = ground->piston (prismatic along x).
// With accelerations a_P = P_g gddot + P_gg gdot^2 and phiddot likewise:
//   piston, x:  m3 a_Bx = F_Bx - b3 x_B_dot         (P transmits nothing along x)
//   piston, y:  0       = F_By + F_Py - m3 g0
//   rod:        m2 a_G2 = F_A - F_B + (0, -m2 g0)
//               I2 phiddot = (A - G2) x F_A + (B - G2) x (-F_B)
//                          = -u x (F_A + F_B),  u = B - G2 = (l/2)(cp, sp)
//   crank:      m1 a_G1 = F_O - F_A + (0, -m1 g0)
// (x is the planar cross product a x b = ax by - ay bx). Solved in order:
//   F_Bx from the piston; F_A = m2 a_G2 + F_B + (0, m2 g0) in the rod's
//   moment equation gives
//   2 (ux F_By - uy F_Bx) = -I2 phiddot - u x (m2 a_G2 + (0, m2 g0)),
//   then F_A, F_Py and F_O. The crank's moment equation about G1,
//   I1 gddot = tau - b1 gdot + (O - G1) x F_O + (A - G1) x (-F_A),
// is not used: it holds by the equation of motion (the tests check it).
#pragma once

#include <array>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <vector>

namespace paynter::testing {

// The data of B2; every field may be changed (the tests vary them).
struct B2Params {
  double r = 0.2;         // crank O-A
  double l = 1.0;         // rod A-B
  double m1 = 1, m2 = 1, m3 = 1;
  double I1 = 1, I2 = 1;  // central inertias of crank and rod about z
  double tau = 10;        // torque on the crank, N m
  double b1 = 2;          // rotational damping in the crank's ground pivot, N m s/rad
  double b3 = 5;          // viscous damping on the piston, N s/m
  double g = 9.81;        // gravity along -y
};

// State of the minimal-coordinate model: the crank angle and rate, and the
// energy dissipated since t = 0 (an integral carried along for the balance).
struct B2State {
  double gamma = 0, gammadot = 0, dissipated = 0;
};

// Positions and their first and second derivatives in gamma.
struct B2Geometry {
  double phi, phi_g, phi_gg;        // rod angle
  double xB, xB_g, xB_gg;           // piston
  double xG1, yG1, xG1_g, yG1_g, xG1_gg, yG1_gg;
  double xG2, yG2, xG2_g, yG2_g, xG2_gg, yG2_gg;
  double xA, yA;                    // crank pin
};

inline B2Geometry B2Kinematics(const B2Params& p, double gamma) {
  const double lam = p.r / p.l;
  const double sg = std::sin(gamma), cg = std::cos(gamma);
  const double sp = -lam * sg;
  const double cp = std::sqrt(1 - sp * sp);
  B2Geometry k{};
  k.phi = std::atan2(sp, cp);
  k.phi_g = -lam * cg / cp;
  k.phi_gg = lam * sg * (1 - lam * lam) / (cp * cp * cp);
  // d/dg and d2/dg2 of cos phi.
  const double cp_g = -sp * k.phi_g;
  const double cp_gg = -cp * k.phi_g * k.phi_g - sp * k.phi_gg;
  k.xA = p.r * cg;
  k.yA = p.r * sg;
  k.xB = p.r * cg + p.l * cp;
  k.xB_g = -p.r * sg + p.l * cp_g;
  k.xB_gg = -p.r * cg + p.l * cp_gg;
  k.xG1 = 0.5 * p.r * cg;
  k.yG1 = 0.5 * p.r * sg;
  k.xG1_g = -0.5 * p.r * sg;
  k.yG1_g = 0.5 * p.r * cg;
  k.xG1_gg = -0.5 * p.r * cg;
  k.yG1_gg = -0.5 * p.r * sg;
  k.xG2 = p.r * cg + 0.5 * p.l * cp;
  k.yG2 = 0.5 * p.r * sg;
  k.xG2_g = -p.r * sg + 0.5 * p.l * cp_g;
  k.yG2_g = 0.5 * p.r * cg;
  k.xG2_gg = -p.r * cg + 0.5 * p.l * cp_gg;
  k.yG2_gg = -0.5 * p.r * sg;
  return k;
}

// M(g) gddot + 1/2 M_g(g) gdot^2 + V_g(g) = Q(g, gdot): the terms.
struct B2EomTerms {
  double mass;       // M(g)
  double mass_g;     // dM/dg
  double potential;  // dV/dg
  double applied;    // Q
};

inline B2EomTerms B2EquationTerms(const B2Params& p, double gamma, double gammadot) {
  const B2Geometry k = B2Kinematics(p, gamma);
  B2EomTerms e{};
  e.mass = p.I1 + p.m1 * (k.xG1_g * k.xG1_g + k.yG1_g * k.yG1_g) + p.I2 * k.phi_g * k.phi_g +
           p.m2 * (k.xG2_g * k.xG2_g + k.yG2_g * k.yG2_g) + p.m3 * k.xB_g * k.xB_g;
  e.mass_g = 2 * (p.m1 * (k.xG1_g * k.xG1_gg + k.yG1_g * k.yG1_gg) + p.I2 * k.phi_g * k.phi_gg +
                  p.m2 * (k.xG2_g * k.xG2_gg + k.yG2_g * k.yG2_gg) + p.m3 * k.xB_g * k.xB_gg);
  e.potential = p.g * (p.m1 * k.yG1_g + p.m2 * k.yG2_g);
  e.applied = p.tau - (p.b1 + p.b3 * k.xB_g * k.xB_g) * gammadot;
  return e;
}

inline double B2Acceleration(const B2Params& p, double gamma, double gammadot) {
  const B2EomTerms e = B2EquationTerms(p, gamma, gammadot);
  return (e.applied - 0.5 * e.mass_g * gammadot * gammadot - e.potential) / e.mass;
}

inline double B2KineticEnergy(const B2Params& p, double gamma, double gammadot) {
  return 0.5 * B2EquationTerms(p, gamma, gammadot).mass * gammadot * gammadot;
}

// Gravity; zero at gamma = 0 (every centre of mass on the x axis).
inline double B2PotentialEnergy(const B2Params& p, double gamma) {
  const B2Geometry k = B2Kinematics(p, gamma);
  return p.g * (p.m1 * k.yG1 + p.m2 * k.yG2);
}

// Power dissipated in the two dampers.
inline double B2DissipatedPower(const B2Params& p, double gamma, double gammadot) {
  const double v = B2Kinematics(p, gamma).xB_g * gammadot;
  return p.b1 * gammadot * gammadot + p.b3 * v * v;
}

// Joint reaction forces (the force each joint applies to its body2, world
// components, dampers excluded), from the accelerations; see the header comment.
struct B2Reactions {
  double FOx, FOy;  // ground on crank, at O
  double FAx, FAy;  // crank on rod, at A
  double FBx, FBy;  // rod on piston, at B
  double FPy;       // ground on piston (prismatic), normal to the guide
};

inline B2Reactions B2JointForces(const B2Params& p, double gamma, double gammadot) {
  const B2Geometry k = B2Kinematics(p, gamma);
  const double gdd = B2Acceleration(p, gamma, gammadot), gd2 = gammadot * gammadot;
  const double aBx = k.xB_g * gdd + k.xB_gg * gd2;
  const double aG1x = k.xG1_g * gdd + k.xG1_gg * gd2, aG1y = k.yG1_g * gdd + k.yG1_gg * gd2;
  const double aG2x = k.xG2_g * gdd + k.xG2_gg * gd2, aG2y = k.yG2_g * gdd + k.yG2_gg * gd2;
  const double phidd = k.phi_g * gdd + k.phi_gg * gd2;
  const double ux = 0.5 * p.l * std::cos(k.phi), uy = 0.5 * p.l * std::sin(k.phi);
  B2Reactions f{};
  f.FBx = p.m3 * aBx + p.b3 * k.xB_g * gammadot;
  // Rod: F_A + F_B = m2 a_G2 + (0, m2 g) + 2 F_B.
  const double hx = p.m2 * aG2x, hy = p.m2 * aG2y + p.m2 * p.g;
  const double uxF = 0.5 * (-p.I2 * phidd - (ux * hy - uy * hx));  // = ux FBy - uy FBx
  f.FBy = (uxF + uy * f.FBx) / ux;
  f.FAx = hx + f.FBx;
  f.FAy = hy + f.FBy;
  f.FPy = p.m3 * p.g - f.FBy;
  f.FOx = p.m1 * aG1x + f.FAx;
  f.FOy = p.m1 * aG1y + f.FAy + p.m1 * p.g;
  return f;
}

// One output of the reference; the first columns are docs/benchmarks.md's B2
// names, then the energy terms and the reaction forces.
struct B2Sample {
  double t;
  B2State x;
  double gamma, gammadot, rod_angle, x_piston, v_piston, xG1, yG1, xG2, yG2;
  double kinetic, potential, work_tau, dissipated;  // T, V, tau (gamma - gamma0), D
  B2Reactions F;
};

inline B2Sample B2MakeSample(const B2Params& p, double t, const B2State& x, double gamma0 = 0) {
  const B2Geometry k = B2Kinematics(p, x.gamma);
  B2Sample s{};
  s.t = t;
  s.x = x;
  s.gamma = x.gamma;
  s.gammadot = x.gammadot;
  s.rod_angle = k.phi;
  s.x_piston = k.xB;
  s.v_piston = k.xB_g * x.gammadot;
  s.xG1 = k.xG1;
  s.yG1 = k.yG1;
  s.xG2 = k.xG2;
  s.yG2 = k.yG2;
  s.kinetic = B2KineticEnergy(p, x.gamma, x.gammadot);
  s.potential = B2PotentialEnergy(p, x.gamma);
  s.work_tau = p.tau * (x.gamma - gamma0);
  s.dissipated = x.dissipated;
  s.F = B2JointForces(p, x.gamma, x.gammadot);
  return s;
}

// d/dt of (gamma, gammadot, dissipated).
inline B2State B2Rate(const B2Params& p, const B2State& x) {
  return {x.gammadot, B2Acceleration(p, x.gamma, x.gammadot), B2DissipatedPower(p, x.gamma, x.gammadot)};
}

// One classical RK4 step of size h.
inline B2State B2Rk4Step(const B2Params& p, const B2State& x, double h) {
  auto add = [](const B2State& a, const B2State& d, double s) {
    return B2State{a.gamma + s * d.gamma, a.gammadot + s * d.gammadot, a.dissipated + s * d.dissipated};
  };
  const B2State k1 = B2Rate(p, x);
  const B2State k2 = B2Rate(p, add(x, k1, h / 2));
  const B2State k3 = B2Rate(p, add(x, k2, h / 2));
  const B2State k4 = B2Rate(p, add(x, k3, h));
  return {x.gamma + h / 6 * (k1.gamma + 2 * k2.gamma + 2 * k3.gamma + k4.gamma),
          x.gammadot + h / 6 * (k1.gammadot + 2 * k2.gammadot + 2 * k3.gammadot + k4.gammadot),
          x.dissipated + h / 6 * (k1.dissipated + 2 * k2.dissipated + 2 * k3.dissipated + k4.dissipated)};
}

// Integrates B2 from t = 0 (state x0, default the benchmark's start gamma = 0 at
// rest) with fixed-step RK4 of step at most `step` and returns a sample at each
// of `times` (non-decreasing, >= 0). Each interval between output times is cut
// into equal steps, so every output is a step end.
//
// Values of the benchmark with step = 1e-4 (steps of 1e-3 and 5e-5 change them
// by less than 3e-13; the 9-coordinate Lagrange-multiplier model of
// b2_reference_test.cc agrees to 3e-13 in positions and rates, 5e-12 N in the
// joint forces):
//   t =  1 s: gamma = 2.2715019391 rad, gammadot = 3.8432250405 rad/s,
//             rod_angle = -0.1534793340 rad,
//             x_piston = 0.8592937071 m, v_piston = -0.5108769252 m/s,
//             G1 = (-0.0644757209, 0.0764387429) m, G2 = (0.3651711327, 0.0764387429) m,
//             T = 7.8967988933 J, V = 1.4997281357 J, W_tau = 22.7150193909 J,
//             D = 13.3184923619 J;
//             F_O = (1.2235002163, 10.0534459705) N, F_A = (0.5155027611, 1.5785691937) N,
//             F_B = (-0.9797913381, -6.8963075830) N, F_Py = 16.7063075830 N
//   t =  5 s: gamma = 20.9202441527 rad, gammadot = 4.4986010886 rad/s,
//             rod_angle = -0.1764409277 rad,
//             x_piston = 0.8886085049 m, v_piston = -0.7127332837 m/s,
//             G1 = (-0.0479330673, 0.0877634381) m, G2 = (0.3963711851, 0.0877634381) m,
//             T = 10.8752213293 J, V = 1.7219186547 J, W_tau = 209.2024415269 J,
//             D = 196.6053015429 J;
//             F_O = (1.2972050660, 8.2393601107) N, F_A = (0.4645840497, 0.2805186562) N,
//             F_B = (-1.4332467839, -7.6783227983) N, F_Py = 17.4883227983 N
//   t = 10 s: gamma = 44.7550620321 rad, gammadot = 4.4411301537 rad/s,
//             rod_angle = -0.1400811828 rad,
//             x_piston = 1.1334013037 m, v_piston = -0.7097587739 m/s,
//             G1 = (0.0715983196, 0.0698117513) m, G2 = (0.6382989715, 0.0698117513) m,
//             T = 10.6901711511 J, V = 1.3697065614 J, W_tau = 447.5506203212 J,
//             D = 435.4907426087 J;
//             F_O = (-10.2171903392, 10.6739612153) N, F_A = (-8.8850418562, 2.3229817323) N,
//             F_B = (-6.2181935386, -6.0279977508) N, F_Py = 15.8379977508 N
inline std::vector<B2Sample> SolveB2Reference(const std::vector<double>& times, double step = 1e-4,
                                              const B2Params& p = {}, const B2State* x0 = nullptr) {
  if (!(step > 0)) throw std::invalid_argument("SolveB2Reference: step must be > 0");
  B2State x = x0 ? *x0 : B2State{};
  x.dissipated = 0;
  const double gamma0 = x.gamma;
  double t = 0;
  std::vector<B2Sample> out;
  out.reserve(times.size());
  for (double tk : times) {
    if (tk < t) throw std::invalid_argument("SolveB2Reference: output times must be >= 0 and non-decreasing");
    if (tk > t) {
      const long n = static_cast<long>(std::ceil((tk - t) / step - 1e-9));
      const double h = (tk - t) / static_cast<double>(n);
      for (long i = 0; i < n; ++i) x = B2Rk4Step(p, x, h);
      t = tk;
    }
    out.push_back(B2MakeSample(p, t, x, gamma0));
  }
  return out;
}

// ---- Four-bar linkage in closed form ----------------------------------------------
//
// Ground pivots O2 (the crank's) and O4 (the rocker's); ground link O2->O4 of
// length d at angle theta1 from +x (default 0: O4 = (d, 0)). Crank O2->A, length
// a, angle theta2; coupler A->B, length b, angle theta3; rocker O4->B, length c,
// angle theta4; all angles from +x, counterclockwise. Loop closure:
//   a e^{i theta2} + b e^{i theta3} - c e^{i theta4} - d e^{i theta1} = 0.
// B is an intersection of the circle of radius b about A and the circle of
// radius c about O4. With D = O4 - A, e = |D|, the foot of B on the line A->O4
// lies at distance u = (b^2 - c^2 + e^2) / (2 e) from A and B at height
// h = sqrt(b^2 - u^2) off it:
//   B = A + u D/e + branch * h n,   n = D/e turned by +90 degrees,
// so branch = +1 puts B to the left of the directed line A->O4 (for a crank near
// theta2 = 0 with theta1 = 0: B above the ground, the "open" linkage) and
// branch = -1 to its right. The linkage assembles iff |b - c| <= e <= b + c.
// Rates, from the time derivative of the loop closure:
//   omega3 = a omega2 sin(theta4 - theta2) / (b sin(theta3 - theta4)),
//   omega4 = a omega2 sin(theta2 - theta3) / (c sin(theta4 - theta3))
// (singular where coupler and rocker are aligned, theta3 = theta4 mod pi).
struct FourBar {
  double a, b, c, d;
  double theta1 = 0;
};

struct FourBarPose {
  double theta3, theta4;  // coupler and rocker angles, in (-pi, pi]
  double xA, yA, xB, yB;  // crank pin and coupler-rocker pin
};

// nullopt where the linkage cannot be assembled at this crank angle.
inline std::optional<FourBarPose> FourBarPosition(const FourBar& f, double theta2, int branch) {
  if (branch != 1 && branch != -1) throw std::invalid_argument("FourBarPosition: branch must be +1 or -1");
  const double xO4 = f.d * std::cos(f.theta1), yO4 = f.d * std::sin(f.theta1);
  FourBarPose q{};
  q.xA = f.a * std::cos(theta2);
  q.yA = f.a * std::sin(theta2);
  const double Dx = xO4 - q.xA, Dy = yO4 - q.yA;
  const double e = std::hypot(Dx, Dy);
  if (e > f.b + f.c || e < std::fabs(f.b - f.c) || e == 0) return std::nullopt;
  const double u = (f.b * f.b - f.c * f.c + e * e) / (2 * e);
  const double h = std::sqrt(std::max(0.0, f.b * f.b - u * u));
  const double ex = Dx / e, ey = Dy / e;
  q.xB = q.xA + u * ex - branch * h * ey;
  q.yB = q.yA + u * ey + branch * h * ex;
  q.theta3 = std::atan2(q.yB - q.yA, q.xB - q.xA);
  q.theta4 = std::atan2(q.yB - yO4, q.xB - xO4);
  return q;
}

struct FourBarRates {
  double omega3, omega4;
};

inline FourBarRates FourBarVelocity(const FourBar& f, double theta2, double theta3, double theta4,
                                    double omega2) {
  return {f.a * omega2 * std::sin(theta4 - theta2) / (f.b * std::sin(theta3 - theta4)),
          f.a * omega2 * std::sin(theta2 - theta3) / (f.c * std::sin(theta4 - theta3))};
}

}  // namespace paynter::testing
