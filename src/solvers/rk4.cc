// src/solvers/rk4.cc — fixed-step classic Runge–Kutta (kClassicRK4).
//
// Output times are hit exactly rather than interpolated: inside each output
// interval the integrator takes steps of exactly `step` measured from the start
// of the interval (t_start + m*step, so t does not drift), and the step that
// would cross the next output time is shortened to end on it. The last step of
// the run is therefore shortened to land on t_end. When dt_out is a multiple
// of `step` no step is shortened (up to roundoff, absorbed by a relative
// tolerance of 1e-8 step); otherwise one short step is taken per output
// interval. Either way every reported state is a genuine RK4 state of 4th
// order, not an interpolant of lower order.
//
// Cost: exactly 4 rhs evaluations per step (RK4 has no FSAL property).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "butcher_tables.h"
#include "event_locator.h"
#include "integrator.h"

namespace paynter::internal {
namespace {

constexpr const auto& kT = kClassicRK4;
constexpr int kS = ClassicRK4Table::kStages;


template <std::size_t... J>
inline void Advance(int n, double* y, double h, double* const* k,
                    std::index_sequence<J...>) {
  for (int i = 0; i < n; ++i) {
    double s = 0;
    ((s += kT.b[J] * k[J][i]), ...);
    y[i] += h * s;
  }
}

class RK4Stepper {
 public:
  explicit RK4Stepper(const OdeProblem& problem)
      : p_(problem), n_(problem.n), work_(static_cast<size_t>(kS + 1) * n_) {
    for (int s = 0; s < kS; ++s) k_[s] = work_.data() + s * n_;
    tmp_ = work_.data() + kS * n_;
  }

  // Advances y from t by h. On a non-finite derivative, stops with an error
  // that reports the state at t (the last good state).
  void Step(double t, double h, double* y) {
    Eval(t, y, k_[0], t, y);
    StageInput<kClassicRK4, 1>(n_, y, h, k_, tmp_, std::make_index_sequence<1>{});
    Eval(t + kT.c[1] * h, tmp_, k_[1], t, y);
    StageInput<kClassicRK4, 2>(n_, y, h, k_, tmp_, std::make_index_sequence<2>{});
    Eval(t + kT.c[2] * h, tmp_, k_[2], t, y);
    StageInput<kClassicRK4, 3>(n_, y, h, k_, tmp_, std::make_index_sequence<3>{});
    Eval(t + kT.c[3] * h, tmp_, k_[3], t, y);
    Advance(n_, y, h, k_, std::make_index_sequence<kS>{});
    evals_ += kS;
  }

  long evals() const { return evals_; }

 private:
  void Eval(double ts, const double* xs, double* out, double t, const double* y) {
    EvalRhs(p_, Method::kRK4, ts, xs, out);
    if (int bad = FirstNonFinite(out, n_); bad >= 0)
      ThrowFailure(p_, Method::kRK4, t, y, DescribeNonFinite(p_, ts, out, bad),
                   "a fixed step cannot be reduced: check the model for "
                   "divisions by zero or functions evaluated outside their "
                   "domain, or try a smaller step or an adaptive method");
  }

  const OdeProblem& p_;
  int n_;
  std::vector<double> work_;
  double* k_[kS];
  double* tmp_;
  long evals_ = 0;
};

// Passes over the output times at or before t (an event reached them, and was
// observed on one); false when the end is among them.
bool PassReached(double t, OutputGrid& grid) {
  while (t >= grid.next()) {
    if (grid.next_is_end()) return false;
    grid.Advance();
  }
  return true;
}

// The steps from options.t0 to t_end: inside each output interval steps of
// exactly `step` from the interval's start, the one that would cross the
// output time shortened to end on it. With events, f is also evaluated at
// both ends of each step for the cubic Hermite interpolant on which events
// are located (2 more evaluations per step), and after an event the steps
// restart from it. Compiled once for each (kEvents: the model has events), so
// that a run without events pays for none of it.
template <bool kEvents>
SolverStats RunRK4(const OdeProblem& problem, std::vector<double> y, const SolverOptions& options,
                   const Observer& observer, Progress& progress) {
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  const int n = problem.n;
  const double h = options.step;
  SolverStats stats;
  RK4Stepper stepper(problem);
  EventLocator events(problem, Method::kRK4);
  std::vector<double> y0(kEvents ? n : 0), f0(y0.size()), f1(y0.size()), yev(y0.size());
  double t = options.t0;
  if constexpr (kEvents) events.Reset(t, y.data());
  observer(t, y.data());
  long extra = 0, handled = 0;
  auto eval = [&](double ts, const double* xs, double* out) {
    EvalRhs(problem, Method::kRK4, ts, xs, out);
    ++extra;
    if (int bad = FirstNonFinite(out, n); bad >= 0)
      ThrowFailure(problem, Method::kRK4, ts, xs, DescribeNonFinite(problem, ts, out, bad),
                   "check the model for divisions by zero or functions evaluated outside their domain");
  };
  OutputGrid grid(options);
  // The next output time, and a remaining distance to it this close to one
  // step that is covered by one step ending exactly on it (avoids a spurious
  // sliver step).
  auto reach_to = [h](double target) { return h * (1 + 1e-8) + 8 * kEps * std::fabs(target); };
  double t_target = grid.next(), reach = reach_to(t_target);
  double t_start = t;
  long m = 0;
  bool more = PassReached(t, grid);
  t_target = grid.next();
  reach = reach_to(t_target);
  while (more) {
    double t_new;
    if (t_target - t <= reach) {
      t_new = t_target;
    } else {
      ++m;
      t_new = t_start + static_cast<double>(m) * h;
    }
    if (stats.steps >= options.max_steps)
      ThrowFailure(problem, Method::kRK4, t, y.data(),
                   fmt::format("the step budget max_steps = {} is exhausted", options.max_steps),
                   "increase the step or max_steps");
    if constexpr (kEvents) {
      std::copy(y.begin(), y.end(), y0.begin());
      eval(t, y0.data(), f0.data());
    }
    // h is "purified" to the difference of representable times.
    const double hs = t_new - t;
    stepper.Step(t, hs, y.data());
    ++stats.steps;
    if (problem.project) {
      try {
        if (problem.project(t_new, y.data())) ++stats.projections;
      } catch (const Error& e) {
        RethrowRhsError(e, problem, Method::kRK4, t_new, y.data());
      }
    }
    if constexpr (kEvents) {
      eval(t_new, y.data(), f1.data());
      // (Only copies and pointers reach the locator: what the no-event path
      // keeps in registers is not taken by address.)
      const double ts = t;
      const double *a = y0.data(), *fa = f0.data(), *b = y.data(), *fb = f1.data();
      auto hermite = [ts, hs, n, a, fa, b, fb](double tq, double* out) {
        const double s = (tq - ts) / hs, s2 = s * s, s3 = s2 * s;
        const double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s, h01 = -2 * s3 + 3 * s2, h11 = s3 - s2;
        for (int i = 0; i < n; ++i) out[i] = h00 * a[i] + h10 * hs * fa[i] + h01 * b[i] + h11 * hs * fb[i];
      };
      double tev = 0;
      if (events.Check(ts, t_new, b, hermite, &tev, yev.data())) {
        if (grid.next() == tev) observer(tev, yev.data());
        const bool stop = events.Handle(tev, yev.data(), &handled);
        if (stop) break;
        t = tev;
        std::copy(yev.begin(), yev.end(), y.begin());  // (y's buffer stays where it is)
        t_start = t;
        m = 0;
        events.Reset(t, y.data());
        progress.Update(t);
        if (!PassReached(t, grid)) break;
        t_target = grid.next();
        reach = reach_to(t_target);
        continue;
      }
    }
    t = t_new;
    progress.Update(t);
    if (t >= t_target) {
      observer(t_target, y.data());
      if (grid.next_is_end()) break;
      grid.Advance();
      t_target = grid.next();
      reach = reach_to(t_target);
      t_start = t;
      m = 0;
    }
  }
  stats.rhs_evals = stepper.evals() + extra;
  stats.events = handled;
  return stats;
}

}  // namespace

SolverStats IntegrateRK4(const OdeProblem& problem, const std::vector<double>& x0,
                         const SolverOptions& options, const Observer& observer,
                         Progress& progress) {
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  const double h = options.step;
  const double t0 = options.t0, t_end = options.t_end;

  // Refuse up front what cannot work, rather than after hours of stepping.
  const double tmax = std::max(std::fabs(t0), std::fabs(t_end));
  if (tmax + h == tmax) {
    ThrowAt({}, "", "rk4: the step is too small to advance the time",
            fmt::format("step > {} at |t| = {}", 2 * kEps * tmax, tmax), fmt::format("step = {}", h),
            "increase the step");
  }
  if ((t_end - t0) / h > static_cast<double>(options.max_steps)) {
    ThrowAt({}, "", "rk4: the run would exceed the step budget",
            fmt::format("at most max_steps = {} steps", options.max_steps),
            fmt::format("(t_end - t0) / step = {:.3g} steps", (t_end - t0) / h), "increase the step or max_steps");
  }

  if (EventLocator(problem, Method::kRK4).active()) return RunRK4<true>(problem, x0, options, observer, progress);
  return RunRK4<false>(problem, x0, options, observer, progress);
}

}  // namespace paynter::internal
