// Event location in every integrator: a bouncing ball (h' = v, v' = -g; at
// h = 0 going down, v -> -e v) against its closed form, the impact times
// t_1 = sqrt(2 h0 / g), t_{k+1} = t_k + 2 e^k v_1 / g with v_1 = g t_1.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "paynter/error.h"
#include "paynter/solvers.h"

namespace paynter {
namespace {

constexpr double kG = 9.81, kH0 = 1.0, kE = 0.8;

std::vector<double> ImpactTimes(int count) {
  std::vector<double> t;
  const double t1 = std::sqrt(2 * kH0 / kG), v1 = kG * t1;
  double tk = t1, ek = 1;
  for (int k = 0; k < count; ++k) {
    t.push_back(tk);
    ek *= kE;
    tk += 2 * ek * v1 / kG;
  }
  return t;
}

OdeProblem Ball(std::vector<double>* times, std::vector<double>* heights) {
  OdeProblem p;
  p.n = 2;
  p.rhs = [](double, const double* x, double* dx) {
    dx[0] = x[1];
    dx[1] = -kG;
  };
  p.num_events = 1;
  p.indicators = [](double, const double* x, double* g) { g[0] = x[0]; };
  p.event_direction = {-1};
  p.on_event = [times, heights](double t, double* x, const int* crossed) {
    EXPECT_EQ(crossed[0], -1);
    times->push_back(t);
    heights->push_back(x[0]);
    x[1] = -kE * x[1];
    return false;
  };
  return p;
}

void ExpectImpacts(Method method, double rtol, double tol) {
  SCOPED_TRACE(MethodName(method));
  const std::vector<double> exact = ImpactTimes(10);
  std::vector<double> times, heights;
  const OdeProblem p = Ball(&times, &heights);
  SolverOptions o;
  o.method = method;
  o.t_end = exact.back() + 0.01;
  o.rtol = rtol;
  o.atol = 1e-12;
  o.step = 1e-3;
  o.dt_out = 0.05;
  std::vector<double> last(2);
  double last_t = 0;
  const SolverStats s = Integrate(p, {kH0, 0.0}, o, [&](double t, const double* x) {
    last_t = t;
    last = {x[0], x[1]};
  });
  ASSERT_EQ(times.size(), exact.size());
  EXPECT_EQ(s.events, static_cast<long>(exact.size()));
  double worst = 0;
  for (size_t k = 0; k < exact.size(); ++k) worst = std::max(worst, std::fabs(times[k] - exact[k]));
  EXPECT_LT(worst, tol) << "largest impact time error";
  std::printf("%s: largest impact time error %.3g s over %zu impacts, %ld steps\n", MethodName(method).c_str(), worst,
              times.size(), s.steps);
  for (double h : heights) EXPECT_LT(std::fabs(h), 10 * tol);
  EXPECT_EQ(last_t, o.t_end);
}

TEST(Events, BouncingBallDopri5) { ExpectImpacts(Method::kDopri5, 1e-10, 1e-9); }
TEST(Events, BouncingBallRk4) { ExpectImpacts(Method::kRK4, 1e-6, 1e-9); }
TEST(Events, BouncingBallBdf) { ExpectImpacts(Method::kBDF, 1e-11, 1e-9); }

TEST(Events, BouncingBallIda) {
  const std::vector<double> exact = ImpactTimes(10);
  std::vector<double> times;
  DaeProblem p;
  p.n = 2;
  p.differential = {1, 1};
  p.residual = [](double, const double* y, const double* yp, double* r) {
    r[0] = yp[0] - y[1];
    r[1] = yp[1] + kG;
  };
  p.num_events = 1;
  p.indicators = [](double, const double* y, const double*, double* g) { g[0] = y[0]; };
  p.event_direction = {-1};
  p.on_event = [&](double t, double* y, double* yp, const int* crossed) {
    EXPECT_EQ(crossed[0], -1);
    times.push_back(t);
    y[1] = -kE * y[1];
    yp[0] = y[1];
    return false;
  };
  SolverOptions o;
  o.t_end = exact.back() + 0.01;
  o.rtol = 1e-11;
  o.atol = 1e-12;
  const SolverStats s = IntegrateDae(p, {kH0, 0.0}, {0.0, -kG}, o, [](double, const double*) {});
  ASSERT_EQ(times.size(), exact.size());
  EXPECT_EQ(s.events, static_cast<long>(exact.size()));
  double worst = 0;
  for (size_t k = 0; k < exact.size(); ++k) worst = std::max(worst, std::fabs(times[k] - exact[k]));
  EXPECT_LT(worst, 1e-9);
  std::printf("ida: largest impact time error %.3g s, %ld steps\n", worst, s.steps);
}

// A stop event ends the run where it happens; the directions a problem does
// not ask for pass unseen.
TEST(Events, StopAndDirection) {
  for (Method m : {Method::kDopri5, Method::kRK4, Method::kBDF}) {
    SCOPED_TRACE(MethodName(m));
    OdeProblem p;
    p.n = 1;
    p.rhs = [](double t, const double*, double* dx) { dx[0] = std::cos(t); };  // x = sin t
    p.num_events = 1;
    p.indicators = [](double, const double* x, double* g) { g[0] = x[0] - 0.5; };
    p.event_direction = {-1};  // only sin t falling through 1/2: t = 5 pi / 6
    double at = -1;
    p.on_event = [&](double t, double*, const int*) {
      at = t;
      return true;
    };
    SolverOptions o;
    o.method = m;
    o.t_end = 10;
    o.rtol = 1e-10;
    o.atol = 1e-12;
    o.step = 1e-3;
    double last = 0;
    const SolverStats s = Integrate(p, {0.0}, o, [&](double t, const double*) { last = t; });
    EXPECT_NEAR(at, 5 * M_PI / 6, 1e-9);
    EXPECT_EQ(s.events, 1);
    EXPECT_LE(last, at);
  }
}

// A reset that re-arms its own event is chattering: a clear error, no hang.
TEST(Events, ChatteringIsAnError) {
  OdeProblem p;
  p.n = 1;
  p.rhs = [](double, const double*, double* dx) { dx[0] = -1; };
  p.num_events = 1;
  p.indicators = [](double, const double* x, double* g) { g[0] = x[0]; };
  p.on_event = [](double, double* x, const int*) {
    x[0] = 1e-300;  // back above zero, falling through it at once
    return false;
  };
  SolverOptions o;
  o.t_end = 2;
  EXPECT_THROW(Integrate(p, {1.0}, o, nullptr), Error);
}

}  // namespace
}  // namespace paynter
