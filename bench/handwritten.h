// bench/handwritten.h — the reference paynter is measured against: a plain
// Dormand–Prince 5(4) loop with MATLAB ode45's step control, on fixed-size
// arrays, the right-hand side and the outputs inlined (templates, no
// std::function, no workspace of slots, no checks for NaN), and B1 and B3
// written out by hand.
//
// The step control is ode45's (Shampine & Reichelt 1997), as paynter's
// dopri5 follows it, so both take the same steps and report the outputs at
// the same times (t0 + k dt_out, a grid time within 1e-9 dt_out of t_end
// merged into it) from the same 4th-order continuous extension.
#pragma once

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <limits>

namespace handwritten {

struct Stats {
  long steps = 0, rejected = 0, rhs_evals = 0;
};

// Integrates y' = f(t, y) (N states) from t0 to t_end; calls out(t, y) at t0,
// every dt_out and t_end.
template <int N, class F, class Out>
Stats Dopri5(F f, double* y, double t0, double t_end, double rtol, double atol, double dt_out, Out out) {
  // Dormand & Prince 1980; dense output of Shampine 1986 (ode45's ntrp45).
  constexpr double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
  constexpr double a21 = 1.0 / 5;
  constexpr double a31 = 3.0 / 40, a32 = 9.0 / 40;
  constexpr double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
  constexpr double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561, a54 = -212.0 / 729;
  constexpr double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176,
                   a65 = -5103.0 / 18656;
  constexpr double b1 = 35.0 / 384, b3 = 500.0 / 1113, b4 = 125.0 / 192, b5 = -2187.0 / 6784, b6 = 11.0 / 84;
  constexpr double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200, e6 = 22.0 / 525,
                   e7 = -1.0 / 40;
  constexpr double d[7][4] = {{1.0, -183.0 / 64, 37.0 / 12, -145.0 / 128},
                              {0.0, 0.0, 0.0, 0.0},
                              {0.0, 1500.0 / 371, -1000.0 / 159, 1000.0 / 371},
                              {0.0, -125.0 / 32, 125.0 / 12, -375.0 / 64},
                              {0.0, 9477.0 / 3392, -729.0 / 106, 25515.0 / 6784},
                              {0.0, -11.0 / 7, 11.0 / 3, -55.0 / 28},
                              {0.0, 3.0 / 2, -4.0, 5.0 / 2}};
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  auto spacing = [](double t) {
    const double a = std::fabs(t);
    return std::nextafter(a, std::numeric_limits<double>::infinity()) - a;
  };

  double k1[N], k2[N], k3[N], k4[N], k5[N], k6[N], k7[N], ytmp[N], ynew[N], yout[N];
  Stats st;
  const double span = t_end - t0, threshold = std::max(atol / rtol, DBL_MIN), hmax = 0.1 * span;
  double t = t0;
  f(t, y, k1);
  st.rhs_evals = 1;
  out(t, y);
  double hmin = 16 * spacing(t);
  double absh = std::min(hmax, span);
  double rh = 0;
  for (int i = 0; i < N; ++i) rh = std::max(rh, std::fabs(k1[i]) / std::max(std::fabs(y[i]), threshold));
  rh /= 0.8 * std::pow(rtol, 0.2);
  if (absh * rh > 1) absh = 1 / rh;
  absh = std::max(absh, hmin);

  const double merge = std::max(1e-9 * dt_out, 64 * kEps * std::max(std::fabs(t0), std::fabs(t_end)));
  long k_out = 1;
  double t_out = t0 + dt_out;
  bool out_is_end = t_out >= t_end - merge;
  if (out_is_end) t_out = t_end;

  bool done = false;
  while (!done) {
    hmin = 16 * spacing(t);
    absh = std::min(hmax, std::max(hmin, absh));
    double h = absh;
    if (1.1 * absh >= t_end - t) {
      h = t_end - t;
      absh = h;
      done = true;
    }
    bool nofailed = true;
    double err, tnew;
    for (;;) {
      for (int i = 0; i < N; ++i) ytmp[i] = y[i] + h * a21 * k1[i];
      f(t + c2 * h, ytmp, k2);
      for (int i = 0; i < N; ++i) ytmp[i] = y[i] + h * (a31 * k1[i] + a32 * k2[i]);
      f(t + c3 * h, ytmp, k3);
      for (int i = 0; i < N; ++i) ytmp[i] = y[i] + h * (a41 * k1[i] + a42 * k2[i] + a43 * k3[i]);
      f(t + c4 * h, ytmp, k4);
      for (int i = 0; i < N; ++i) ytmp[i] = y[i] + h * (a51 * k1[i] + a52 * k2[i] + a53 * k3[i] + a54 * k4[i]);
      f(t + c5 * h, ytmp, k5);
      for (int i = 0; i < N; ++i)
        ytmp[i] = y[i] + h * (a61 * k1[i] + a62 * k2[i] + a63 * k3[i] + a64 * k4[i] + a65 * k5[i]);
      f(t + h, ytmp, k6);
      tnew = done ? t_end : t + h;
      h = tnew - t;
      for (int i = 0; i < N; ++i) ynew[i] = y[i] + h * (b1 * k1[i] + b3 * k3[i] + b4 * k4[i] + b5 * k5[i] + b6 * k6[i]);
      f(tnew, ynew, k7);
      st.rhs_evals += 6;
      double norm = 0;
      for (int i = 0; i < N; ++i) {
        const double e = e1 * k1[i] + e3 * k3[i] + e4 * k4[i] + e5 * k5[i] + e6 * k6[i] + e7 * k7[i];
        norm = std::max(norm, std::fabs(e) / std::max(std::max(std::fabs(y[i]), std::fabs(ynew[i])), threshold));
      }
      err = absh * norm;
      if (err <= rtol) break;
      ++st.rejected;
      if (absh <= hmin) return st;  // failure: the caller sees too few steps
      absh =
          nofailed ? std::max(hmin, absh * std::max(0.1, 0.8 * std::pow(rtol / err, 0.2))) : std::max(hmin, 0.5 * absh);
      nofailed = false;
      h = absh;
      done = false;
    }
    ++st.steps;
    while (!out_is_end && t_out <= tnew) {
      if (t_out == tnew) {
        out(t_out, ynew);
      } else {
        const double s = (t_out - t) / h;
        double w[7];
        for (int j = 0; j < 7; ++j) w[j] = h * s * (d[j][0] + s * (d[j][1] + s * (d[j][2] + s * d[j][3])));
        for (int i = 0; i < N; ++i)
          yout[i] = y[i] + (w[0] * k1[i] + w[2] * k3[i] + w[3] * k4[i] + w[4] * k5[i] + w[5] * k6[i] + w[6] * k7[i]);
        out(t_out, yout);
      }
      t_out = t0 + static_cast<double>(++k_out) * dt_out;
      if (t_out >= t_end - merge) {
        t_out = t_end;
        out_is_end = true;
      }
    }
    if (done) {
      out(t_end, ynew);
      break;
    }
    if (nofailed) {
      const double temp = 1.25 * std::pow(err / rtol, 0.2);
      absh = temp > 0.2 ? absh / temp : 5.0 * absh;
    }
    t = tnew;
    std::copy(ynew, ynew + N, y);
    std::copy(k7, k7 + N, k1);
  }
  return st;
}

// B1 (examples/B1_pendulum.yaml) as paynter's state form writes it: states
// p = JA γ̇ and γ, ṗ = −B p/JA − M g L/2 cos γ, γ̇ = p/JA; outputs γ, γ̇, x_G, y_G.
struct B1 {
  static constexpr int kStates = 2, kOutputs = 4;
  static constexpr const char* kHeader = "t,gamma,gammadot,xG,yG";
  static constexpr double L = 1, M = 1, Izz = 0.083, B = 10, g = 9.81, JA = Izz + M * (L / 2) * (L / 2);
  static void Initial(double* x) { x[0] = x[1] = 0; }
  static void Rhs(double, const double* x, double* dx) {
    dx[0] = -B * x[0] / JA - M * g * (L / 2) * std::cos(x[1]);
    dx[1] = x[0] / JA;
  }
  static void Outputs(double, const double* x, double* o) {
    o[0] = x[1];
    o[1] = x[0] / JA;
    o[2] = L / 2 * std::cos(x[1]);
    o[3] = L / 2 * std::sin(x[1]);
  }
};

// B3 (examples/B3_quick_return.yaml), Lagrange's equations of the second kind
// in the crank's velocity v = θ̇1 (the equations `paynter equations
// examples/B3_quick_return.yaml --form lagrange2` prints, written out and
// simplified by hand): with t7 = θ̇2/θ̇1 = l1 cos(θ2 − θ1)/Lx and
// θ̇3/θ̇2 = l2 cos θ2 / (l3 cos θ3) (θ3 clockwise; from the ram's guide
// l2 sin θ2 − l3 sin θ3 = H), the kinetic energy is T = ½ m(q) v², and
// m v̇ = τ − ½ (dm/dt) v + (F − R ẋ5) ∂ẋ5/∂v.
// States: v, θ1, θ2, θ3, Lx, W_τ, D_R; the 22 outputs of the model file.
struct B3 {
  static constexpr int kStates = 7, kOutputs = 22;
  static constexpr const char* kHeader =
      "t,theta1,theta1dot,theta2,theta2dot,theta3,theta3dot,Lx,xO1,yO1,xC2,yC2,xC3,yC3,xC5,yC5,h1,h2,h3,W_tau,D_R,T,"
      "ycons";
  static constexpr double h = 0.35, l1 = 0.08, l2 = 0.8, l3 = 1.0, lC3 = l3 / 2, H = 0.55, m3 = 0.785, J1 = 1.340e-4,
                          J2 = 0.1340, J3 = 0.06542, m5 = 1.0, R = 10, F = 0, tau = 2;

  // Velocity ratios at (θ1, θ2, θ3, Lx) and their rates per unit crank speed
  // (d/dt of each ratio = v × its rate).
  struct Kinematics {
    double w2, w3;         // θ̇2 / v, θ̇3 / v
    double x3, y3, x5;     // ẋC3 / v, ẏC3 / v, ẋC5 / v
    double dw2, dw3;       // d(θ̇2/v)/dt / v, d(θ̇3/v)/dt / v
    double dx3, dy3, dx5;  // d(ẋC3/v)/dt / v, ...
  };
  static Kinematics Kin(const double* x) {
    const double th1 = x[1], th2 = x[2], th3 = x[3], Lx = x[4];
    const double s2 = std::sin(th2), c2 = std::cos(th2), s3 = std::sin(th3), c3 = std::cos(th3);
    const double s21 = std::sin(th2 - th1), c21 = std::cos(th2 - th1);
    Kinematics k;
    k.w2 = l1 * c21 / Lx;
    k.w3 = l2 * c2 * k.w2 / (l3 * c3);
    // ẋC3 = −l2 s2 θ̇2 − lC3 s3 θ̇3, ẏC3 = l2 c2 θ̇2 − lC3 c3 θ̇3, ẋC5 = −l2 s2 θ̇2 − l3 s3 θ̇3.
    k.x3 = -l2 * s2 * k.w2 - lC3 * s3 * k.w3;
    k.y3 = l2 * c2 * k.w2 - lC3 * c3 * k.w3;
    k.x5 = -l2 * s2 * k.w2 - l3 * s3 * k.w3;
    // Rates: θ̇1 = v, θ̇2 = w2 v, θ̇3 = w3 v, L̇x = l1 s21 v.
    const double dLx = l1 * s21;
    k.dw2 = -l1 * s21 * (k.w2 - 1) / Lx - l1 * c21 * dLx / (Lx * Lx);
    // w3 = l2 c2 w2 / (l3 c3)
    k.dw3 = (l2 * (-s2 * k.w2 * k.w2 + c2 * k.dw2) * l3 * c3 + l2 * c2 * k.w2 * l3 * s3 * k.w3) / (l3 * c3 * l3 * c3);
    k.dx3 = -l2 * (c2 * k.w2 * k.w2 + s2 * k.dw2) - lC3 * (c3 * k.w3 * k.w3 + s3 * k.dw3);
    k.dy3 = l2 * (-s2 * k.w2 * k.w2 + c2 * k.dw2) - lC3 * (-s3 * k.w3 * k.w3 + c3 * k.dw3);
    k.dx5 = -l2 * (c2 * k.w2 * k.w2 + s2 * k.dw2) - l3 * (c3 * k.w3 * k.w3 + s3 * k.dw3);
    return k;
  }
  static void Initial(double* x) {
    const double th2 = std::atan2(h, l1);
    x[0] = 0;
    x[1] = 0;
    x[2] = th2;
    x[3] = std::asin((l2 * std::sin(th2) - H) / l3);
    x[4] = std::sqrt(l1 * l1 + h * h);
    x[5] = x[6] = 0;
  }
  static void Rhs(double, const double* x, double* dx) {
    const double v = x[0];
    const Kinematics k = Kin(x);
    // T = ½ m v² with m = J1 + J2 w2² + J3 w3² + m3 (x3² + y3²) + m5 x5²;
    // d/dt(∂T/∂v) − ∂T/∂q·q̇ = m v̇ + ½ (dm/dt) v, dm/dt = 2 v (J2 w2 dw2 + ...).
    const double m = J1 + J2 * k.w2 * k.w2 + J3 * k.w3 * k.w3 + m3 * (k.x3 * k.x3 + k.y3 * k.y3) + m5 * k.x5 * k.x5;
    const double mdot_v = 2 * (J2 * k.w2 * k.dw2 + J3 * k.w3 * k.dw3 + m3 * (k.x3 * k.dx3 + k.y3 * k.dy3) +
                               m5 * k.x5 * k.dx5);  // dm/dt / v
    const double force = tau + (F - R * k.x5 * v) * k.x5;
    dx[0] = (force - 0.5 * mdot_v * v * v) / m;
    dx[1] = v;
    dx[2] = k.w2 * v;
    dx[3] = k.w3 * v;
    dx[4] = l1 * std::sin(x[2] - x[1]) * v;
    dx[5] = tau * v;
    dx[6] = R * k.x5 * k.x5 * v * v;
  }
  static void Outputs(double, const double* x, double* o) {
    const double v = x[0], th1 = x[1], th2 = x[2], th3 = x[3];
    const Kinematics k = Kin(x);
    const double s2 = std::sin(th2), c2 = std::cos(th2), s3 = std::sin(th3), c3 = std::cos(th3);
    o[0] = th1;
    o[1] = v;
    o[2] = th2;
    o[3] = k.w2 * v;
    o[4] = th3;
    o[5] = k.w3 * v;
    o[6] = x[4];
    o[7] = l1 * std::cos(th1);
    o[8] = h + l1 * std::sin(th1);
    o[9] = l2 / 2 * c2;
    o[10] = l2 / 2 * s2;
    o[11] = l2 * c2 + lC3 * c3;
    o[12] = l2 * s2 - lC3 * s3;
    o[13] = l2 * c2 + l3 * c3;
    o[14] = l2 * s2 - l3 * s3;
    o[15] = J1 * v;
    o[16] = J2 * k.w2 * v;
    o[17] = J3 * o[5];
    o[18] = x[5];
    o[19] = x[6];
    o[20] =
        0.5 * v * v * (J1 + J2 * k.w2 * k.w2 + J3 * k.w3 * k.w3 + m3 * (k.x3 * k.x3 + k.y3 * k.y3) + m5 * k.x5 * k.x5);
    o[21] = l2 * s2 - l3 * s3 - H;
  }
};

// Appends "t,o1,...\n", each number in its shortest round-trip form.
inline char* FormatRow(char* p, double t, const double* o, int n) {
  p = std::to_chars(p, p + 32, t).ptr;
  for (int i = 0; i < n; ++i) {
    *p++ = ',';
    p = std::to_chars(p, p + 32, o[i]).ptr;
  }
  *p++ = '\n';
  return p;
}

}  // namespace handwritten
