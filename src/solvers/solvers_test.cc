// Tests for the time integrators (paynter/solvers.h).

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "paynter/error.h"
#include "paynter/solvers.h"

namespace paynter {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Trajectory {
  std::vector<double> t;
  std::vector<std::vector<double>> x;
};

Observer Record(Trajectory* tr, int n) {
  return [tr, n](double t, const double* x) {
    tr->t.push_back(t);
    tr->x.emplace_back(x, x + n);
  };
}

// x' = -x, x(0) = 1; counts its evaluations.
OdeProblem Decay(long* calls = nullptr) {
  OdeProblem p;
  p.n = 1;
  p.state_names = {"x"};
  p.rhs = [calls](double, const double* x, double* dx) {
    if (calls) ++*calls;
    dx[0] = -x[0];
  };
  return p;
}

// q' = p, p' = -q.
OdeProblem Oscillator(long* calls = nullptr) {
  OdeProblem p;
  p.n = 2;
  p.state_names = {"q", "p"};
  p.rhs = [calls](double, const double* x, double* dx) {
    if (calls) ++*calls;
    dx[0] = x[1];
    dx[1] = -x[0];
  };
  return p;
}

// x' = -1000 (x - cos t), x(0) = 0: stiff, solution ~ cos t after a fast layer.
OdeProblem Stiff(long* calls = nullptr) {
  OdeProblem p;
  p.n = 1;
  p.state_names = {"x"};
  p.rhs = [calls](double t, const double* x, double* dx) {
    if (calls) ++*calls;
    dx[0] = -1000.0 * (x[0] - std::cos(t));
  };
  return p;
}

double StiffExact(double t) {
  const double b = 1000.0 / (1e6 + 1), a = 1e6 / (1e6 + 1);
  return a * std::cos(t) + b * std::sin(t) - a * std::exp(-1000.0 * t);
}

SolverOptions Opts(Method m) {
  SolverOptions o;
  o.method = m;
  return o;
}

double MaxDecayError(const Trajectory& tr) {
  double e = 0;
  for (size_t i = 0; i < tr.t.size(); ++i)
    e = std::max(e, std::fabs(tr.x[i][0] - std::exp(-tr.t[i])));
  return e;
}

const Method kAllMethods[] = {Method::kRK4, Method::kDopri5, Method::kBDF};

// ---- Accuracy ---------------------------------------------------------------

TEST(Solvers, ExponentialDecayRK4) {
  SolverOptions o = Opts(Method::kRK4);
  o.step = 1e-3;
  Trajectory tr;
  Integrate(Decay(), {1.0}, o, Record(&tr, 1));
  EXPECT_LT(MaxDecayError(tr), 1e-10);
}

TEST(Solvers, ExponentialDecayDopri5) {
  SolverOptions o = Opts(Method::kDopri5);
  o.rtol = 1e-10;
  o.atol = 1e-12;
  Trajectory tr;
  Integrate(Decay(), {1.0}, o, Record(&tr, 1));
  EXPECT_LT(MaxDecayError(tr), 1e-8);
}

TEST(Solvers, ExponentialDecayBDF) {
  SolverOptions o = Opts(Method::kBDF);
  o.rtol = 1e-8;
  o.atol = 1e-10;
  Trajectory tr;
  Integrate(Decay(), {1.0}, o, Record(&tr, 1));
  EXPECT_LT(MaxDecayError(tr), 1e-6);
}

TEST(Solvers, HarmonicOscillatorHundredPeriodsDopri5) {
  SolverOptions o = Opts(Method::kDopri5);
  o.rtol = o.atol = 1e-12;
  o.t_end = 200 * std::numbers::pi;
  Trajectory tr;
  Integrate(Oscillator(), {1.0, 0.0}, o, Record(&tr, 2));
  ASSERT_EQ(tr.t.back(), o.t_end);
  double drift = 0, pos = 0;
  for (size_t i = 0; i < tr.t.size(); ++i) {
    const double q = tr.x[i][0], p = tr.x[i][1];
    drift = std::max(drift, std::fabs((q * q + p * p) / 2 - 0.5) / 0.5);
    pos = std::max(pos, std::fabs(q - std::cos(tr.t[i])));
  }
  EXPECT_LT(drift, 1e-8);
  EXPECT_LT(pos, 1e-7);
}

// Error at t = 1 of x' = -x with a fixed step h.
double RK4ErrorAtOne(double h) {
  SolverOptions o = Opts(Method::kRK4);
  o.step = h;
  o.dt_out = 1.0;
  Trajectory tr;
  Integrate(Decay(), {1.0}, o, Record(&tr, 1));
  return std::fabs(tr.x.back()[0] - std::exp(-1.0));
}

TEST(Solvers, RK4IsFourthOrder) {
  const double ratio = RK4ErrorAtOne(0.1) / RK4ErrorAtOne(0.05);
  EXPECT_GE(ratio, 14.0);
  EXPECT_LE(ratio, 18.0);
}

// dopri5 forced to a constant step: loose tolerances (every step accepted)
// and max_step = h. The propagated solution is the 5th-order one.
double Dopri5ErrorAtOne(double h, SolverStats* stats) {
  SolverOptions o = Opts(Method::kDopri5);
  o.rtol = o.atol = 0.1;
  o.max_step = h;
  o.dt_out = 1.0;
  Trajectory tr;
  *stats = Integrate(Decay(), {1.0}, o, Record(&tr, 1));
  return std::fabs(tr.x.back()[0] - std::exp(-1.0));
}

TEST(Solvers, Dopri5IsFifthOrder) {
  SolverStats s1, s2;
  const double e1 = Dopri5ErrorAtOne(0.1, &s1);
  const double e2 = Dopri5ErrorAtOne(0.05, &s2);
  EXPECT_EQ(s1.steps, 10);
  EXPECT_EQ(s2.steps, 20);
  EXPECT_EQ(s1.rejected + s2.rejected, 0);
  EXPECT_GE(e1 / e2, 28.0);
  EXPECT_LE(e1 / e2, 38.0);  // 34.8 at these steps; 4th order would be ~16
}

TEST(Solvers, Dopri5ErrorFollowsTolerance) {
  double prev = 1;
  long prev_steps = 0;
  for (double rtol : {1e-4, 1e-7, 1e-10}) {
    SolverOptions o = Opts(Method::kDopri5);
    o.rtol = rtol;
    o.atol = rtol * 1e-2;
    o.t_end = 5;
    Trajectory tr;
    SolverStats s = Integrate(Decay(), {1.0}, o, Record(&tr, 1));
    const double e = MaxDecayError(tr);
    EXPECT_LT(e, 10 * rtol) << "rtol " << rtol;
    EXPECT_LT(e, prev);
    EXPECT_GT(s.steps, prev_steps);
    prev = e;
    prev_steps = s.steps;
  }
}

TEST(Solvers, StiffProblemBDFTakesFarFewerSteps) {
  SolverOptions o = Opts(Method::kDopri5);
  o.t_end = 10;
  Trajectory td, tb;
  SolverStats dopri = Integrate(Stiff(), {0.0}, o, Record(&td, 1));
  o.method = Method::kBDF;
  SolverStats bdf = Integrate(Stiff(), {0.0}, o, Record(&tb, 1));
  EXPECT_LT(bdf.steps * 5, dopri.steps)
      << "bdf " << bdf.steps << " steps, dopri5 " << dopri.steps;
  // dopri5 finds it stiff (within its first 1000 steps and 15 tests), yet
  // finishes: a few thousand steps are within its budget for stiff runs.
  EXPECT_TRUE(dopri.stiff);
  EXPECT_LT(dopri.stiff_t, 4.0);
  EXPECT_FALSE(bdf.stiff);
  EXPECT_GT(bdf.jac_evals, 0);
  for (const Trajectory* tr : {&td, &tb})
    for (size_t i = 0; i < tr->t.size(); ++i)
      EXPECT_NEAR(tr->x[i][0], StiffExact(tr->t[i]), 1e-4) << "t " << tr->t[i];
}

// x' = -1e6 (x - cos t): dopri5 would need some 3 million steps for 10 s.
OdeProblem VeryStiff(long* calls) {
  OdeProblem p;
  p.n = 2;
  p.state_names = {"x", "y"};
  p.rhs = [calls](double t, const double* x, double* dx) {
    ++*calls;
    dx[0] = -1e6 * (x[0] - std::cos(t));
    dx[1] = x[0];
  };
  return p;
}

TEST(Solvers, StiffnessStopsDopri5Early) {
  long calls = 0;
  SolverOptions o = Opts(Method::kDopri5);
  o.t_end = 10;
  try {
    Integrate(VeryStiff(&calls), {0.0, 0.0}, o, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.diagnostic().message, HasSubstr("the problem is stiff"));
    EXPECT_THAT(e.diagnostic().message, HasSubstr("more steps"));
    EXPECT_THAT(e.diagnostic().hint, HasSubstr("--method bdf"));
    EXPECT_THAT(e.diagnostic().hint, HasSubstr("--max-steps"));
  }
  // Hairer's schedule: the first test at step 1000, then 14 more positive ones.
  EXPECT_LT(calls, 6 * 1100);
  // With a budget that covers the run, it goes on and says when it found it.
  calls = 0;
  o.t_end = 0.01;  // some 3000 steps
  o.stiff_steps = 0;
  SolverStats s = Integrate(VeryStiff(&calls), {0.0, 0.0}, o, nullptr);
  EXPECT_TRUE(s.stiff);
  EXPECT_GT(s.stiff_t, 0.0);
  EXPECT_LT(s.stiff_t, 0.005);
  EXPECT_GT(s.steps, 2000);
  // Likewise when max_steps and stiff_steps allow it.
  o.stiff_steps = o.max_steps = 10000;
  EXPECT_NO_THROW(Integrate(VeryStiff(&calls), {0.0, 0.0}, o, nullptr));
  o.stiff_steps = o.max_steps = 1500;
  EXPECT_THROW(Integrate(VeryStiff(&calls), {0.0, 0.0}, o, nullptr), Error);
}

// q'' = -w^2 q with w = 10^4, excited: not stiff, but some 10^6 steps to
// follow it for 100 s. The step forecast stops dopri5 and bdf within a few
// windows of 500 steps, naming the budget.
TEST(Solvers, StepForecastStopsARunThatWouldTakeTooManySteps) {
  long calls = 0;
  OdeProblem fast;
  fast.n = 2;
  fast.state_names = {"q", "p"};
  fast.rhs = [&calls](double, const double* x, double* dx) {
    ++calls;
    dx[0] = 1e4 * x[1];
    dx[1] = -1e4 * x[0];
  };
  for (Method m : {Method::kDopri5, Method::kBDF}) {
    SCOPED_TRACE(MethodName(m));
    calls = 0;
    SolverOptions o = Opts(m);
    o.t_end = 100;
    try {
      Integrate(fast, {1.0, 0.0}, o, nullptr);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_THAT(e.diagnostic().message, HasSubstr("over the step budget of 1000000 (the step forecast)"));
      EXPECT_THAT(e.diagnostic().hint, HasSubstr("--max-steps"));
    }
    // Three windows of 500 steps, and a little more for the rhs calls of
    // the Jacobians and rejected steps.
    EXPECT_LT(calls, 4 * 500 * 8);
    // A run the budget covers finishes: 1 s, about 1% of the steps.
    o.t_end = 1;
    SolverStats s = Integrate(fast, {1.0, 0.0}, o, nullptr);
    EXPECT_GT(s.steps, 3000);
    EXPECT_LT(s.steps, 1000000);
  }
}

TEST(Solvers, NonStiffRunsAreNotFoundStiff) {
  SolverOptions o = Opts(Method::kDopri5);
  o.t_end = 2000;  // tens of thousands of steps
  o.rtol = 1e-9;
  SolverStats s = Integrate(Oscillator(), {1.0, 0.0}, o, nullptr);
  EXPECT_GT(s.steps, 10000);
  EXPECT_FALSE(s.stiff);
}

TEST(Solvers, DenseOutputIsAccurateAtEveryOutputTime) {
  SolverOptions o = Opts(Method::kDopri5);
  o.rtol = 1e-10;
  o.atol = 1e-12;
  o.t_end = 5;
  o.dt_out = 0.01;
  Trajectory tr;
  SolverStats s = Integrate(Decay(), {1.0}, o, Record(&tr, 1));
  ASSERT_EQ(tr.t.size(), 501u);
  // Several outputs per step, so most outputs are interpolated.
  EXPECT_LT(s.steps, 250);
  EXPECT_LT(MaxDecayError(tr), 1e-8);
}

// ---- Output times -----------------------------------------------------------

TEST(Solvers, ObserverAtT0EveryDtOutAndTEnd) {
  for (Method m : kAllMethods) {
    SCOPED_TRACE(MethodName(m));
    SolverOptions o = Opts(m);
    o.t0 = 0.3;
    o.t_end = 1.7;
    o.dt_out = 0.1;  // 0.3 + 14*0.1 != 1.7 in binary: must merge into t_end
    o.step = 0.01;
    Trajectory tr;
    Integrate(Oscillator(), {1.0, 0.0}, o, Record(&tr, 2));
    ASSERT_EQ(tr.t.size(), 15u);
    EXPECT_EQ(tr.t.front(), 0.3);
    for (int k = 1; k < 14; ++k) EXPECT_EQ(tr.t[k], 0.3 + k * 0.1);
    EXPECT_EQ(tr.t.back(), 1.7);
    for (size_t i = 1; i < tr.t.size(); ++i) EXPECT_GT(tr.t[i], tr.t[i - 1]);
    EXPECT_NEAR(tr.x.back()[0], std::cos(1.4), 1e-5);
  }
}

TEST(Solvers, OutputIntervalNotDividingTheSpan) {
  for (Method m : kAllMethods) {
    SCOPED_TRACE(MethodName(m));
    SolverOptions o = Opts(m);
    o.dt_out = 0.3;
    Trajectory tr;
    Integrate(Decay(), {1.0}, o, Record(&tr, 1));
    ASSERT_EQ(tr.t.size(), 5u);
    EXPECT_EQ(tr.t[3], 3 * 0.3);
    EXPECT_EQ(tr.t.back(), 1.0);
  }
}

TEST(Solvers, DefaultOutputIntervalGivesThousandIntervals) {
  for (Method m : kAllMethods) {
    SCOPED_TRACE(MethodName(m));
    SolverOptions o = Opts(m);
    o.t_end = 3;
    Trajectory tr;
    Integrate(Decay(), {1.0}, o, Record(&tr, 1));
    ASSERT_EQ(tr.t.size(), 1001u);
    EXPECT_EQ(tr.t.front(), 0.0);
    EXPECT_EQ(tr.t.back(), 3.0);
  }
}

TEST(Solvers, RK4ShortensTheLastStepToHitTEnd) {
  SolverOptions o = Opts(Method::kRK4);
  o.step = 0.3;
  o.dt_out = 1.0;
  Trajectory tr;
  SolverStats s = Integrate(Decay(), {1.0}, o, Record(&tr, 1));
  EXPECT_EQ(s.steps, 4);
  ASSERT_EQ(tr.t.back(), 1.0);
  // One RK4 step of x' = -x multiplies x by the Taylor polynomial R(-h).
  auto r = [](double h) {
    const double z = -h;
    return 1 + z + z * z / 2 + z * z * z / 6 + z * z * z * z / 24;
  };
  EXPECT_NEAR(tr.x.back()[0], std::pow(r(0.3), 3) * r(1.0 - 0.9), 1e-14);
}

TEST(Solvers, NoStatesAndNoObserver) {
  OdeProblem empty;
  Trajectory tr;
  SolverOptions o;
  o.dt_out = 0.25;
  SolverStats s = Integrate(empty, {}, o, Record(&tr, 0));
  EXPECT_EQ(tr.t, (std::vector<double>{0, 0.25, 0.5, 0.75, 1.0}));
  EXPECT_EQ(s.steps, 0);
  for (Method m : kAllMethods)
    EXPECT_NO_THROW(Integrate(Decay(), {1.0}, Opts(m), nullptr));
}

// ---- Statistics ---------------------------------------------------------------

TEST(Solvers, RK4Stats) {
  long calls = 0;
  SolverOptions o = Opts(Method::kRK4);
  SolverStats s = Integrate(Decay(&calls), {1.0}, o, nullptr);
  EXPECT_EQ(s.steps, 1000);
  EXPECT_EQ(s.rejected, 0);
  EXPECT_EQ(s.rhs_evals, 4 * s.steps);
  EXPECT_EQ(s.rhs_evals, calls);
  EXPECT_EQ(s.jac_evals, 0);
  EXPECT_GE(s.integrate_seconds, 0.0);
}

TEST(Solvers, Dopri5StatsFSAL) {
  long calls = 0;
  SolverOptions o = Opts(Method::kDopri5);
  o.rtol = 1e-8;
  o.initial_step = 0.5;  // far too large: forces rejections
  o.t_end = 10;
  SolverStats s = Integrate(Oscillator(&calls), {1.0, 0.0}, o, nullptr);
  EXPECT_GT(s.rejected, 0);
  EXPECT_EQ(s.rhs_evals, 1 + 6 * (s.steps + s.rejected));
  EXPECT_EQ(s.rhs_evals, calls);
  EXPECT_EQ(s.jac_evals, 0);
}

TEST(Solvers, BDFStats) {
  long calls = 0;
  SolverOptions o = Opts(Method::kBDF);
  o.t_end = 10;
  SolverStats s = Integrate(Stiff(&calls), {0.0}, o, nullptr);
  EXPECT_GT(s.steps, 0);
  EXPECT_GT(s.jac_evals, 0);
  EXPECT_GE(s.rejected, 0);
  // rhs_evals counts the integrator's calls and the n per difference-quotient
  // Jacobian; together they are every call of the rhs.
  EXPECT_EQ(s.rhs_evals, calls);
  EXPECT_GE(s.rhs_evals, s.steps + s.jac_evals);
}

// ---- Failures ---------------------------------------------------------------

TEST(Solvers, RhsErrorIsReportedWithTimeAndState) {
  for (Method m : kAllMethods) {
    SCOPED_TRACE(MethodName(m));
    double t_thrown = -1;
    OdeProblem p = Oscillator();
    p.rhs = [&t_thrown](double t, const double* x, double* dx) {
      if (t > 0.5) {
        t_thrown = t;
        Diagnostic d;
        d.element = "J1";
        d.message = "algebraic loop did not converge";
        d.hint = "check the loop";
        throw Error(d);
      }
      dx[0] = x[1];
      dx[1] = -x[0];
    };
    try {
      Integrate(p, {1.0, 0.0}, Opts(m), nullptr);
      FAIL() << "no error";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_THAT(what, HasSubstr("algebraic loop did not converge"));
      EXPECT_THAT(what, HasSubstr(fmt::format("t = {}", t_thrown)));
      EXPECT_THAT(what, HasSubstr("q = "));
      EXPECT_THAT(what, HasSubstr("p = "));
      EXPECT_THAT(what, HasSubstr(MethodName(m)));
      EXPECT_EQ(e.diagnostic().element, "J1");
      EXPECT_EQ(e.diagnostic().hint, "check the loop");
    }
  }
}

TEST(Solvers, NonFiniteDerivativeStopsWithClearError) {
  for (Method m : kAllMethods) {
    for (double bad : {std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity()}) {
      SCOPED_TRACE(MethodName(m) + " " + std::to_string(bad));
      OdeProblem p = Oscillator();
      p.rhs = [bad](double t, const double* x, double* dx) {
        dx[0] = x[1];
        dx[1] = t > 0.5 ? bad : -x[0];
      };
      Trajectory tr;
      try {
        Integrate(p, {1.0, 0.0}, Opts(m), Record(&tr, 2));
        FAIL() << "no error";
      } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_THAT(what, HasSubstr(std::isnan(bad) ? "NaN" : "Inf"));
        EXPECT_THAT(what, HasSubstr("d(p)/dt"));
        EXPECT_THAT(what, HasSubstr("q = "));
        EXPECT_THAT(what, Not(HasSubstr("q = nan")));
      }
      // Nothing non-finite was ever reported, and nothing past the failure.
      for (size_t i = 0; i < tr.t.size(); ++i) {
        EXPECT_LE(tr.t[i], 0.5);
        EXPECT_TRUE(std::isfinite(tr.x[i][0]) && std::isfinite(tr.x[i][1]));
      }
    }
  }
}

// Parses the time out of "<method> failed at t = <t>: ...".
double FailureTime(const Error& e) {
  const std::string& msg = e.diagnostic().message;
  const auto at = msg.find("at t = ");
  EXPECT_NE(at, std::string::npos) << msg;
  return std::stod(msg.substr(at + 7));
}

TEST(Solvers, StepSizeTooSmallNearASingularity) {
  // x' = x^2, x(0) = 1: x = 1/(1 - t) blows up at t = 1.
  OdeProblem p;
  p.n = 1;
  p.state_names = {"x"};
  p.rhs = [](double, const double* x, double* dx) { dx[0] = x[0] * x[0]; };
  for (Method m : {Method::kDopri5, Method::kBDF}) {
    SCOPED_TRACE(MethodName(m));
    SolverOptions o = Opts(m);
    o.t_end = 2;
    try {
      Integrate(p, {1.0}, o, nullptr);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_NEAR(FailureTime(e), 1.0, 1e-3);
      EXPECT_THAT(e.diagnostic().message, HasSubstr("x = "));
      EXPECT_FALSE(e.diagnostic().hint.empty());
      if (m == Method::kDopri5) {
        EXPECT_THAT(e.diagnostic().message, HasSubstr("step size too small"));
        EXPECT_THAT(e.diagnostic().hint, HasSubstr("bdf"));
      }
    }
  }
}

TEST(Solvers, StepBudgetExhausted) {
  for (Method m : kAllMethods) {
    SCOPED_TRACE(MethodName(m));
    SolverOptions o = Opts(m);
    o.t_end = 100;
    o.max_steps = 10;
    try {
      Integrate(Oscillator(), {1.0, 0.0}, o, nullptr);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("max_steps"));
    }
  }
}

TEST(Solvers, TinyRtolIsRaisedWithOneWarning) {
  SolverOptions o = Opts(Method::kDopri5);
  o.rtol = 1e-20;
  o.atol = 1e-20;
  Trajectory tr;
  ::testing::internal::CaptureStderr();
  Integrate(Decay(), {1.0}, o, Record(&tr, 1));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("rtol"));
  const auto first = err.find("warning");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(err.find("warning", first + 1), std::string::npos) << err;
  EXPECT_LT(MaxDecayError(tr), 1e-12);
}

TEST(Solvers, ValidateNamesTheBadOption) {
  struct Case {
    const char* option;
    void (*set)(SolverOptions&);
  };
  const Case cases[] = {
      {"t_end", [](SolverOptions& o) { o.t_end = o.t0; }},
      {"t_end", [](SolverOptions& o) { o.t_end = -1; }},
      {"rtol", [](SolverOptions& o) { o.rtol = 0; }},
      {"rtol", [](SolverOptions& o) { o.rtol = -1e-6; }},
      {"atol", [](SolverOptions& o) { o.atol = -1; }},
      {"atol", [](SolverOptions& o) { o.atol = std::nan(""); }},
      {"dt_out", [](SolverOptions& o) { o.dt_out = -0.1; }},
      {"t0", [](SolverOptions& o) { o.t0 = INFINITY; }},
      {"step", [](SolverOptions& o) { o.method = Method::kRK4; o.step = 0; }},
      {"max_step", [](SolverOptions& o) { o.max_step = -1; }},
      {"max_steps", [](SolverOptions& o) { o.max_steps = 0; }},
      {"stiff_steps", [](SolverOptions& o) { o.stiff_steps = -1; }},
  };
  for (const Case& c : cases) {
    SolverOptions o;
    c.set(o);
    try {
      o.Validate();
      ADD_FAILURE() << "no error for " << c.option;
    } catch (const Error& e) {
      const Diagnostic& d = e.diagnostic();
      EXPECT_THAT(d.message, HasSubstr(fmt::format("'{}'", c.option)));
      EXPECT_THAT(d.got, HasSubstr(c.option));
      EXPECT_FALSE(d.expected.empty());
      EXPECT_FALSE(d.hint.empty());
    }
  }
  SolverOptions bad;
  bad.t_end = -1;
  try {
    bad.Validate();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("t_end > t0 = 0"));
    EXPECT_THAT(e.what(), HasSubstr("t_end = -1"));
  }
  // Integrate validates before doing anything.
  Trajectory tr;
  EXPECT_THROW(Integrate(Decay(), {1.0}, bad, Record(&tr, 1)), Error);
  EXPECT_TRUE(tr.t.empty());
  // step is only checked for rk4.
  SolverOptions o;
  o.step = 0;
  EXPECT_NO_THROW(o.Validate());
}

TEST(Solvers, BadProblemShapes) {
  EXPECT_THROW(Integrate(Decay(), {1.0, 2.0}, SolverOptions{}, nullptr), Error);
  EXPECT_THROW(Integrate(Decay(), {NAN}, SolverOptions{}, nullptr), Error);
  OdeProblem p = Decay();
  p.rhs = nullptr;
  EXPECT_THROW(Integrate(p, {1.0}, SolverOptions{}, nullptr), Error);
}

TEST(Solvers, MethodNames) {
  for (Method m : kAllMethods) EXPECT_EQ(ParseMethod(MethodName(m)), m);
  try {
    ParseMethod("ode45");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.diagnostic().hint, HasSubstr("dopri5"));
    EXPECT_THAT(e.diagnostic().got, HasSubstr("ode45"));
  }
  try {
    ParseMethod("rk5");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.diagnostic().hint, HasSubstr("did you mean 'rk4'"));
  }
}

// ---- Progress and stop --------------------------------------------------------

// on_progress is told times that only grow, from t0 towards t_end; once it
// answers false the run stops with RunStopped at that time, and the observer
// has seen nothing past it. Every integrator, the DAE one too.
TEST(Solvers, OnProgressSeesTheTimeAndStopsTheRunWhenItSaysSo) {
  for (Method m : kAllMethods) {
    SolverOptions o = Opts(m);
    o.t_end = 10;
    std::vector<double> told;
    o.on_progress = [&](double t) {
      told.push_back(t);
      return true;
    };
    Integrate(Decay(), {1.0}, o, nullptr);
    ASSERT_GT(told.size(), 10u) << MethodName(m);
    EXPECT_TRUE(std::is_sorted(told.begin(), told.end())) << MethodName(m);
    EXPECT_GT(told.front(), 0.0) << MethodName(m);
    EXPECT_GT(told.back(), 9.0) << MethodName(m);  // (the last step, to t_end, may end the run untold)

    double stop_at = -1;
    o.on_progress = [&](double t) {
      if (t < 4) return true;
      if (stop_at < 0) stop_at = t;
      return false;
    };
    Trajectory tr;
    try {
      Integrate(Decay(), {1.0}, o, Record(&tr, 1));
      ADD_FAILURE() << MethodName(m) << ": not stopped";
    } catch (const RunStopped& e) {
      EXPECT_GE(e.t(), 4.0) << MethodName(m);
      EXPECT_THAT(e.what(), HasSubstr("stopped at t = ")) << MethodName(m);
      ASSERT_FALSE(tr.t.empty());
      EXPECT_LE(tr.t.back(), e.t()) << MethodName(m) << ": the observer saw past the stop";
      EXPECT_LT(tr.t.back(), 10.0) << MethodName(m);
      // The rows seen are the run's own up to there: x = exp(-t).
      EXPECT_LT(MaxDecayError(tr), m == Method::kRK4 ? 1e-10 : 1e-4) << MethodName(m);
    }
  }
  // IDA: x' + x = 0 as a residual.
  DaeProblem p;
  p.n = 1;
  p.differential = {1};
  p.residual = [](double, const double* y, const double* yp, double* r) { r[0] = yp[0] + y[0]; };
  SolverOptions o;
  o.t_end = 10;
  double last_seen = -1;
  o.on_progress = [](double t) { return t < 4; };
  try {
    IntegrateDae(p, {1.0}, {-1.0}, o, [&](double t, const double*) { last_seen = t; });
    ADD_FAILURE() << "ida: not stopped";
  } catch (const RunStopped& e) {
    EXPECT_GE(e.t(), 4.0);
    EXPECT_LE(last_seen, e.t());
    EXPECT_LT(last_seen, 10.0);
  }
}

}  // namespace
}  // namespace paynter
