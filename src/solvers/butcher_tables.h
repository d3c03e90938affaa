// src/solvers/butcher_tables.h — Runge–Kutta coefficients as data.
//
// Each table is a constexpr aggregate whose name carries the method's orders.
// The steppers in rk4.cc and dopri5.cc read these tables; nothing else in them
// is method-specific. The static_asserts at the bottom check the tables against
// the order conditions they must satisfy, so a typo cannot compile.
#pragma once

namespace paynter::internal {

// Classic 4-stage, 4th-order Runge–Kutta (Kutta 1901).
struct ClassicRK4Table {
  static constexpr int kStages = 4;
  static constexpr int kOrder = 4;
  double c[kStages];
  double a[kStages][kStages];  // strictly lower triangular
  double b[kStages];
};

inline constexpr ClassicRK4Table kClassicRK4 = {
    /*c=*/{0.0, 1.0 / 2, 1.0 / 2, 1.0},
    /*a=*/{{0.0, 0.0, 0.0, 0.0},
           {1.0 / 2, 0.0, 0.0, 0.0},
           {0.0, 1.0 / 2, 0.0, 0.0},
           {0.0, 0.0, 1.0, 0.0}},
    /*b=*/{1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6},
};

// Dormand–Prince RK5(4)7M (Dormand & Prince 1980, "A family of embedded
// Runge–Kutta formulae", J. Comput. Appl. Math. 6:19–26): 7 stages, a 5th-order
// solution b (propagated: "local extrapolation") and an embedded 4th-order
// solution b_hat used only for the error estimate. The last row of `a` equals
// b, so stage 7 is f(t+h, y_new): First Same As Last (FSAL), 6 new evaluations
// per step.
//
// e = b - b_hat are the error weights exactly as written in MATLAB's ode45 (the
// vector E in Shampine & Reichelt 1997), kept as rationals rather than computed
// as a difference so the estimate is not polluted by cancellation.
//
// dense[j][k] is the coefficient of s^(k+1) in the weight of stage j of the
// 4th-order continuous extension used by ode45's interpolant ntrp45 (Shampine
// 1986, "Some practical Runge–Kutta formulas", Math. Comp. 46:135–150):
//   y(t + s*h) = y + h * sum_j K_j * sum_k dense[j][k] * s^(k+1),  0 <= s <= 1.
// At s = 1 the weights reduce to b, so the interpolant is continuous across
// steps.
struct DormandPrince54Table {
  static constexpr int kStages = 7;
  static constexpr int kOrder = 5;
  static constexpr int kEmbeddedOrder = 4;
  static constexpr int kDenseOrder = 4;
  double c[kStages];
  double a[kStages][kStages];  // strictly lower triangular
  double b[kStages];
  double b_hat[kStages];
  double e[kStages];
  double dense[kStages][4];
};

inline constexpr DormandPrince54Table kDormandPrince54 = {
    /*c=*/{0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0, 1.0},
    /*a=*/
    {{0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
     {1.0 / 5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
     {3.0 / 40, 9.0 / 40, 0.0, 0.0, 0.0, 0.0, 0.0},
     {44.0 / 45, -56.0 / 15, 32.0 / 9, 0.0, 0.0, 0.0, 0.0},
     {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0.0, 0.0,
      0.0},
     {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656,
      0.0, 0.0},
     {35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84,
      0.0}},
    /*b=*/
    {35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84,
     0.0},
    /*b_hat=*/
    {5179.0 / 57600, 0.0, 7571.0 / 16695, 393.0 / 640, -92097.0 / 339200,
     187.0 / 2100, 1.0 / 40},
    /*e=*/
    {71.0 / 57600, 0.0, -71.0 / 16695, 71.0 / 1920, -17253.0 / 339200,
     22.0 / 525, -1.0 / 40},
    /*dense=*/
    {{1.0, -183.0 / 64, 37.0 / 12, -145.0 / 128},
     {0.0, 0.0, 0.0, 0.0},
     {0.0, 1500.0 / 371, -1000.0 / 159, 1000.0 / 371},
     {0.0, -125.0 / 32, 125.0 / 12, -375.0 / 64},
     {0.0, 9477.0 / 3392, -729.0 / 106, 25515.0 / 6784},
     {0.0, -11.0 / 7, 11.0 / 3, -55.0 / 28},
     {0.0, 3.0 / 2, -4.0, 5.0 / 2}},
};

// ---- Compile-time consistency checks ---------------------------------------

namespace butcher_checks {

constexpr double Abs(double x) { return x < 0 ? -x : x; }
constexpr bool Near(double x, double y) { return Abs(x - y) <= 1e-14; }

// Row sums of a equal c (the usual simplifying assumption all these use).
template <typename Table>
constexpr bool RowSumsMatchC(const Table& t) {
  for (int i = 0; i < Table::kStages; ++i) {
    double s = 0;
    for (int j = 0; j < i; ++j) s += t.a[i][j];
    if (!Near(s, t.c[i])) return false;
    for (int j = i; j < Table::kStages; ++j)
      if (t.a[i][j] != 0.0) return false;  // explicit: strictly lower triangular
  }
  return true;
}

// Order conditions up to 4 for weights w (sum w = 1, sum w c = 1/2,
// sum w c^2 = 1/3, sum w a c = 1/6, and the four 4th-order ones).
template <typename Table>
constexpr bool MeetsOrder4(const Table& t, const double* w) {
  constexpr int s = Table::kStages;
  double o1 = 0, o2 = 0, o3a = 0, o3b = 0, o4a = 0, o4b = 0, o4c = 0, o4d = 0;
  for (int i = 0; i < s; ++i) {
    double ac = 0, ac2 = 0, aac = 0;
    for (int j = 0; j < i; ++j) {
      ac += t.a[i][j] * t.c[j];
      ac2 += t.a[i][j] * t.c[j] * t.c[j];
      double inner = 0;
      for (int k = 0; k < j; ++k) inner += t.a[j][k] * t.c[k];
      aac += t.a[i][j] * inner;
    }
    o1 += w[i];
    o2 += w[i] * t.c[i];
    o3a += w[i] * t.c[i] * t.c[i];
    o3b += w[i] * ac;
    o4a += w[i] * t.c[i] * t.c[i] * t.c[i];
    o4b += w[i] * t.c[i] * ac;
    o4c += w[i] * ac2;
    o4d += w[i] * aac;
  }
  return Near(o1, 1.0) && Near(o2, 1.0 / 2) && Near(o3a, 1.0 / 3) &&
         Near(o3b, 1.0 / 6) && Near(o4a, 1.0 / 4) && Near(o4b, 1.0 / 8) &&
         Near(o4c, 1.0 / 12) && Near(o4d, 1.0 / 24);
}

constexpr bool DormandPrinceConsistent() {
  const auto& t = kDormandPrince54;
  for (int j = 0; j < t.kStages; ++j) {
    // FSAL: the last stage is evaluated at the new solution.
    if (!Near(t.a[t.kStages - 1][j], t.b[j])) return false;
    // Error weights are the difference of the two solutions.
    if (!Near(t.e[j], t.b[j] - t.b_hat[j])) return false;
    // The continuous extension reproduces the 5th-order solution at s = 1
    // and vanishes at s = 0 (it has no constant term by construction).
    double at_one = 0;
    for (int k = 0; k < 4; ++k) at_one += t.dense[j][k];
    if (!Near(at_one, t.b[j])) return false;
  }
  return true;
}

static_assert(RowSumsMatchC(kClassicRK4));
static_assert(MeetsOrder4(kClassicRK4, kClassicRK4.b));
static_assert(RowSumsMatchC(kDormandPrince54));
static_assert(MeetsOrder4(kDormandPrince54, kDormandPrince54.b));
static_assert(MeetsOrder4(kDormandPrince54, kDormandPrince54.b_hat));
static_assert(DormandPrinceConsistent());

}  // namespace butcher_checks

}  // namespace paynter::internal
