// src/solvers/dopri5.cc — adaptive Dormand–Prince 5(4) (kDormandPrince54) with
// the step-size control of MATLAB's ode45.
//
// The control follows the ode45 code described by Shampine & Reichelt 1997
// ("The MATLAB ODE Suite", SIAM J. Sci. Comput. 18:1–22), line by line:
//   * threshold = atol / rtol; rtol below 100*eps is raised to 100*eps with a
//     warning (odearguments);
//   * hmax = min(|t_end - t0|, max_step), default 0.1*|t_end - t0|;
//     hmin = 16*eps(t), eps(t) being the spacing of doubles at t;
//   * initial step: h = min(hmax, |t_end - t0|), rh = ||f0 ./ max(|y0|,
//     threshold)||_inf / (0.8 * rtol^(1/5)); if h*rh > 1 then h = 1/rh;
//     h = max(h, hmin);
//   * a step within 10% of the remaining interval is stretched to hit t_end;
//   * err = |h| * ||(K e) ./ max(max(|y|, |y_new|), threshold)||_inf, where
//     e = b - b_hat; the step is accepted iff err <= rtol (local
//     extrapolation: the 5th-order solution is propagated);
//   * first rejection in a step: h = max(hmin, h * max(0.1, 0.8 (rtol/err)^(1/5)));
//     further rejections in the same step: h = max(hmin, h/2); a rejection at
//     h <= hmin is a failure;
//   * after a step with no rejection: temp = 1.25 (err/rtol)^(1/5),
//     h = temp > 0.2 ? h/temp : 5h (at most 5x growth);
//   * outputs between steps come from the 4th-order continuous extension
//     (ntrp45, see butcher_tables.h).
//
// Deviations from ode45, all for robustness; none changes a run in which the
// right-hand side stays finite and atol > 0:
//   * a stage derivative that is NaN or Inf rejects the step (the step is
//     halved, as ode45 does for its non-negativity rejections) instead of
//     propagating NaN; if that recurs down to hmin the run stops with an error
//     that names the offending derivative;
//   * an error estimate that is NaN counts as a rejection (ode45's
//     "err > rtol" would accept it);
//   * atol = 0 (pure relative control) uses the smallest normal double as the
//     threshold instead of 0, so y = 0 does not produce 0/0;
//   * max_steps bounds the number of accepted steps; a step-size failure or an
//     exhausted budget throws paynter::Error instead of ode45's warning.
//
// Stiffness detection, as in Hairer's DOPRI5 (Hairer & Wanner, Solving ODEs
// II, IV.2; dopri5.f): every 1000th accepted step, and after every step while
// a test is positive, h*lambda = h ||K7 - K6|| / ||y_new - Y6|| estimates the
// step times the dominant eigenvalue (stages 6 and 7 are both at t + h); 15
// tests above a bound (6 below it in a row clear the count) declare the
// problem stiff. ode45 has no such test. Hairer's bound, 3.25, lies just inside
// the stability boundary on the negative real axis (3.3), where his step
// control settles on a stiff problem; ode45's control settles lower: on
// x' = -lambda (x - cos t), at h*lambda = 2.6 for rtol 1e-6 to 1e-10 and 2.7 to
// 4.4 for rtol 1e-2 and 1e-3, while on a non-stiff problem, where accuracy
// sets the step, h*lambda stays below 2.2 even at rtol = 0.1. So the bound
// here is 2.4. Once the problem is stiff, if the steps still needed at that
// size exceed stiff_steps (or max_steps), the run stops with an error that
// advises bdf; otherwise it goes on and SolverStats records the time.
//
// Cost: FSAL, so rhs_evals = 1 + 6 * (steps + rejected) exactly, as ode45's
// nfevals, except that an attempt abandoned at a non-finite stage stops
// evaluating at that stage. The loop does not allocate.

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "butcher_tables.h"
#include "event_locator.h"
#include "integrator.h"

namespace paynter::internal {
namespace {

constexpr const auto& kT = kDormandPrince54;
constexpr int kS = DormandPrince54Table::kStages;
constexpr double kPow = 1.0 / 5;  // 1 / (embedded order + 1)

// The spacing of doubles at |t| (MATLAB's eps(t)); eps(0) is the smallest
// subnormal, as in MATLAB.
double Spacing(double t) {
  const double a = std::fabs(t);
  return std::nextafter(a, std::numeric_limits<double>::infinity()) - a;
}


// ||(K e) ./ max(max(|y|, |y_new|), threshold)||_inf, without the factor |h|.
template <std::size_t... J>
inline double ErrorNorm(int n, const double* y, const double* ynew,
                        double threshold, double* const* k,
                        std::index_sequence<J...>) {
  double norm = 0;
  for (int i = 0; i < n; ++i) {
    double s = 0;
    ((kT.e[J] != 0.0 ? void(s += kT.e[J] * k[J][i]) : void()), ...);
    const double scale =
        std::max(std::max(std::fabs(y[i]), std::fabs(ynew[i])), threshold);
    const double r = std::fabs(s) / scale;
    if (!(r <= norm)) norm = r;  // also propagates NaN into the norm
  }
  return norm;
}

constexpr bool DenseRowUsed(std::size_t j) {
  return kT.dense[j][0] != 0.0 || kT.dense[j][1] != 0.0 ||
         kT.dense[j][2] != 0.0 || kT.dense[j][3] != 0.0;
}

// Weights h * sum_k dense[j][k] s^(k+1) of the continuous extension at
// theta = s, then out = y + sum_j w_j K_j.
template <std::size_t... J>
inline void Interpolate(int n, const double* y, double h, double s,
                        double* const* k, double* out,
                        std::index_sequence<J...>) {
  double w[kS];
  for (int j = 0; j < kS; ++j) {
    const auto& d = kT.dense[j];
    w[j] = h * s * (d[0] + s * (d[1] + s * (d[2] + s * d[3])));
  }
  for (int i = 0; i < n; ++i) {
    double acc = 0;
    ((DenseRowUsed(J) ? void(acc += w[J] * k[J][i]) : void()), ...);
    out[i] = y[i] + acc;
  }
}

// Hairer's schedule: test every kStiffEvery accepted steps; kStiffPositive
// tests above kStiffBound make the problem stiff, kStiffNegative below it in a
// row reset the count. The bound is ode45's, not Hairer's (see above).
constexpr long kStiffEvery = 1000;
constexpr int kStiffPositive = 15;
constexpr int kStiffNegative = 6;
constexpr double kStiffBound = 2.4;

constexpr const char* kStiffHint =
    "the system may be stiff: try the bdf method (--method bdf); otherwise the "
    "solution may be singular or discontinuous near this time (check the "
    "model), or the tolerances may be too tight";

}  // namespace

namespace {

// The integrator for kN states (kN = 0: any number, problem.n). With kN fixed
// at compile time the loops over the states are unrolled: on models of a few
// states their set-up cost more than their arithmetic. Every expression is
// the same for any kN, so the results are the same bit for bit.
template <int kN>
SolverStats Dopri5Loop(const OdeProblem& problem, const std::vector<double>& x0, const SolverOptions& options,
                       const Observer& observer, Progress& progress) {
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  const int n = kN > 0 ? kN : problem.n;
  const double t0 = options.t0, tfinal = options.t_end;
  const double span = tfinal - t0;  // > 0 (validated)

  double rtol = options.rtol;
  if (rtol < 100 * kEps) {
    // odearguments.m: "RelTol has been increased to 2.22045e-14".
    rtol = 100 * kEps;
    std::fprintf(stderr,
                 "warning: dopri5: rtol = %g is below 100*eps; it has been "
                 "increased to %g (as MATLAB's ode45 does)\n",
                 options.rtol, rtol);
  }
  const double threshold = std::max(options.atol / rtol, DBL_MIN);
  // With events, no step is longer than the output interval: an indicator
  // that changes sign and back within one step goes unseen, so the outputs'
  // resolution is the resolution at which events are found (docs/events.md).
  const bool with_events = problem.num_events > 0 && problem.indicators && problem.on_event;
  const double hmax = std::min(options.max_step > 0 ? std::min(span, options.max_step) : 0.1 * span,
                               with_events ? EffectiveDtOut(options) : span);

  // Work vectors, allocated once: y, ynew, ytmp, yout, K_1..K_7.
  std::vector<double> work(static_cast<size_t>(4 + kS) * n);
  double* y = work.data();
  double* ynew = y + n;
  double* ytmp = ynew + n;
  double* yout = ytmp + n;
  double* k[kS];
  for (int j = 0; j < kS; ++j) k[j] = yout + (1 + j) * n;
  std::copy(x0.begin(), x0.end(), y);

  SolverStats stats;
  double t = t0;
  EvalRhs(problem, Method::kDopri5, t, y, k[0]);
  stats.rhs_evals = 1;
  if (int bad = FirstNonFinite(k[0], n); bad >= 0)
    ThrowFailure(problem, Method::kDopri5, t, y,
                 DescribeNonFinite(problem, t, k[0], bad),
                 "the initial state is outside the domain of the model: check "
                 "the initial conditions and parameters");
  observer(t0, y);

  double hmin = 16 * Spacing(t);
  // The first step (also after an event, from t with f(t, y) in k[0]).
  auto first_step = [&]() {
    double h0;
    if (options.initial_step > 0) {
      h0 = std::min(hmax, std::max(hmin, options.initial_step));
    } else {
      h0 = std::min(hmax, tfinal - t);
      double rh = 0;
      for (int i = 0; i < n; ++i)
        rh = std::max(rh, std::fabs(k[0][i]) / std::max(std::fabs(y[i]), threshold));
      rh /= 0.8 * std::pow(rtol, kPow);
      if (h0 * rh > 1) h0 = 1 / rh;
      h0 = std::max(h0, hmin);
    }
    return h0;
  };
  double absh = first_step();
  EventLocator events(problem, Method::kDopri5);
  std::vector<double> yevent(events.active() ? n : 0);
  events.Reset(t, y);

  OutputGrid grid(options);
  const long stiff_budget = options.stiff_steps > 0 ? std::min(options.stiff_steps, options.max_steps)
                                                    : options.max_steps;
  StepForecast forecast(options);
  int positive = 0, negative = 0;  // Hairer's IASTI and NONSTI
  double hlambda = 0;
  bool done = false;
  while (!done) {
    hmin = 16 * Spacing(t);
    absh = std::min(hmax, std::max(hmin, absh));
    double h = absh;
    // Stretch the step if within 10% of t_end - t.
    if (1.1 * absh >= tfinal - t) {
      h = tfinal - t;
      absh = h;
      done = true;
    }
    if (stats.steps >= options.max_steps)
      ThrowFailure(problem, Method::kDopri5, t, y,
                   fmt::format("the step budget max_steps = {} is exhausted "
                               "(last step size {:.3g})",
                               options.max_steps, absh),
                   std::string(kStiffHint) + "; or allow more steps (max_steps, --max-steps)");

    // Advance one step; retry with a smaller h until the error test passes.
    bool nofailed = true;
    double err = 0, tnew = t;
    for (;;) {
      // Stages 2..7. A non-finite derivative abandons the attempt at once:
      // evaluating further stages at NaN states would only confuse the rhs.
      int bad = -1, bad_stage = 0;
      double bad_t = t;
      auto stage = [&](int j, double ts, const double* xs) {
        EvalRhs(problem, Method::kDopri5, ts, xs, k[j]);
        ++stats.rhs_evals;
        bad = FirstNonFinite(k[j], n);
        bad_stage = j;
        bad_t = ts;
        return bad < 0;
      };
      tnew = done ? tfinal : t + h;  // hit t_end exactly
      auto attempt = [&]() -> bool {
        StageInput<kDormandPrince54, 1>(n, y, h, k, ytmp, std::make_index_sequence<1>{});
        if (!stage(1, t + kT.c[1] * h, ytmp)) return false;
        StageInput<kDormandPrince54, 2>(n, y, h, k, ytmp, std::make_index_sequence<2>{});
        if (!stage(2, t + kT.c[2] * h, ytmp)) return false;
        StageInput<kDormandPrince54, 3>(n, y, h, k, ytmp, std::make_index_sequence<3>{});
        if (!stage(3, t + kT.c[3] * h, ytmp)) return false;
        StageInput<kDormandPrince54, 4>(n, y, h, k, ytmp, std::make_index_sequence<4>{});
        if (!stage(4, t + kT.c[4] * h, ytmp)) return false;
        StageInput<kDormandPrince54, 5>(n, y, h, k, ytmp, std::make_index_sequence<5>{});
        if (!stage(5, t + kT.c[5] * h, ytmp)) return false;
        h = tnew - t;  // "purify" h, as ode45 does
        StageInput<kDormandPrince54, 6>(n, y, h, k, ynew, std::make_index_sequence<6>{});
        return stage(6, tnew, ynew);  // FSAL stage: f(tnew, ynew)
      };
      const bool finite = attempt();

      if (finite) {
        err = absh * ErrorNorm(n, y, ynew, threshold, k,
                               std::make_index_sequence<kS>{});
        if (err <= rtol) break;  // accepted (a NaN err is rejected)
      }

      // Rejected.
      ++stats.rejected;
      if (absh <= hmin) {
        std::string reason =
            finite ? fmt::format("step size too small: the error test failed "
                                 "with h = {:.3g} <= hmin = {:.3g}",
                                 absh, hmin)
                   : fmt::format("{} (stage {} of a step of {:.3g}); reducing "
                                 "the step down to hmin = {:.3g} did not help",
                                 DescribeNonFinite(problem, bad_t, k[bad_stage], bad),
                                 bad_stage + 1, absh, hmin);
        ThrowFailure(problem, Method::kDopri5, t, y, reason,
                     finite ? kStiffHint
                            : "check the model for divisions by zero or "
                              "functions evaluated outside their domain (sqrt, "
                              "log of a negative state, ...)");
      }
      if (nofailed && finite) {
        absh = std::max(hmin,
                        absh * std::max(0.1, 0.8 * std::pow(rtol / err, kPow)));
      } else {
        absh = std::max(hmin, 0.5 * absh);
      }
      nofailed = false;
      h = absh;
      done = false;
    }
    ++stats.steps;
    if (int bad = FirstNonFinite(ynew, n); bad >= 0)
      ThrowFailure(problem, Method::kDopri5, t, y,
                   fmt::format("the solution overflowed: {} would become {}",
                               StateName(problem, bad), ynew[bad]),
                   "the solution grows without bound; check the model");

    // Stiffness (see the top of the file): ytmp still holds the sixth stage's
    // state Y6, k[5] = f(t + h, Y6), k[6] = f(t + h, y_new).
    if (stats.steps % kStiffEvery == 0 || positive > 0) {
      double num = 0, den = 0;
      for (int i = 0; i < n; ++i) {
        const double dk = k[kS - 1][i] - k[kS - 2][i], dy = ynew[i] - ytmp[i];
        num += dk * dk;
        den += dy * dy;
      }
      if (den > 0) hlambda = absh * std::sqrt(num / den);
      if (hlambda > kStiffBound) {
        negative = 0;
        if (++positive >= kStiffPositive) {
          if (!stats.stiff) {
            stats.stiff = true;
            stats.stiff_t = tnew;
          }
          const double more = std::ceil((tfinal - tnew) / absh);
          if (static_cast<double>(stats.steps) + more > static_cast<double>(stiff_budget))
            ThrowFailure(
                problem, Method::kDopri5, tnew, ynew,
                fmt::format("the problem is stiff: the step is held at h = {:.3g} by stability, not by accuracy "
                            "(h*lambda = {:.3g} > {} in Hairer's stiffness test), so reaching t_end = {} would "
                            "take about {:.3g} more steps",
                            absh, hlambda, kStiffBound, tfinal, more),
                fmt::format("use the bdf method (--method bdf), made for stiff problems; to go on with dopri5, "
                            "allow more steps (--max-steps {:.0f})",
                            std::ceil(1.2 * (static_cast<double>(stats.steps) + more))));
        }
      } else if (++negative == kStiffNegative) {
        positive = 0;
      }
    }

    forecast.Check(problem, Method::kDopri5, stats.steps, tnew, ynew);

    // Projection onto an invariant manifold (constrained mechanisms): the
    // projected state starts the next step, whose FSAL stage is then recomputed.
    if (problem.project) {
      bool moved = false;
      try {
        moved = problem.project(tnew, ynew);
      } catch (const Error& e) {
        RethrowRhsError(e, problem, Method::kDopri5, tnew, ynew);
      }
      if (moved) {
        ++stats.projections;
        EvalRhs(problem, Method::kDopri5, tnew, ynew, k[kS - 1]);
        ++stats.rhs_evals;
      }
    }

    // Events: located on the continuous extension; the step ends there.
    if (events.active()) {
      double tev = 0;
      const double hstep = h;
      if (events.Check(t, tnew, ynew,
                       [&](double tq, double* out) {
                         Interpolate(n, y, hstep, (tq - t) / hstep, k, out, std::make_index_sequence<kS>{});
                       },
                       &tev, yevent.data())) {
        while (!grid.next_is_end() && grid.next() <= tev) {
          Interpolate(n, y, h, (grid.next() - t) / h, k, yout, std::make_index_sequence<kS>{});
          observer(grid.next(), grid.next() == tev ? yevent.data() : yout);
          grid.Advance();
        }
        if (events.Handle(tev, yevent.data(), &stats.events)) return stats;
        // Restart from the event: a new first step, a new FSAL stage.
        t = tev;
        std::copy(yevent.begin(), yevent.end(), y);
        EvalRhs(problem, Method::kDopri5, t, y, k[0]);
        ++stats.rhs_evals;
        if (int bad = FirstNonFinite(k[0], n); bad >= 0)
          ThrowFailure(problem, Method::kDopri5, t, y, DescribeNonFinite(problem, t, k[0], bad),
                       "the state after the event is outside the domain of the model: check the event's reset");
        events.Reset(t, y);
        hmin = 16 * Spacing(t);
        absh = first_step();
        done = false;
        if (t >= tfinal) {
          observer(tfinal, y);
          break;
        }
        progress.Update(t);
        continue;
      }
    }

    // Outputs inside (t, tnew] from the continuous extension; t_end from ynew.
    while (!grid.next_is_end() && grid.next() <= tnew) {
      const double tout = grid.next();
      if (tout == tnew) {
        observer(tout, ynew);
      } else {
        Interpolate(n, y, h, (tout - t) / h, k, yout,
                    std::make_index_sequence<kS>{});
        observer(tout, yout);
      }
      grid.Advance();
    }
    if (done) {
      observer(tfinal, ynew);
      break;
    }

    // No failures in this step: let h grow (at most 5x).
    if (nofailed) {
      const double temp = 1.25 * std::pow(err / rtol, kPow);
      absh = temp > 0.2 ? absh / temp : 5.0 * absh;
    }
    t = tnew;
    std::swap(y, ynew);
    std::swap(k[0], k[kS - 1]);  // FSAL: f(tnew, ynew) is the next K_1
    progress.Update(t);
  }
  return stats;
}

}  // namespace

SolverStats IntegrateDopri5(const OdeProblem& problem, const std::vector<double>& x0, const SolverOptions& options,
                            const Observer& observer, Progress& progress) {
  switch (problem.n) {
    case 1: return Dopri5Loop<1>(problem, x0, options, observer, progress);
    case 2: return Dopri5Loop<2>(problem, x0, options, observer, progress);
    case 3: return Dopri5Loop<3>(problem, x0, options, observer, progress);
    case 4: return Dopri5Loop<4>(problem, x0, options, observer, progress);
    case 5: return Dopri5Loop<5>(problem, x0, options, observer, progress);
    case 6: return Dopri5Loop<6>(problem, x0, options, observer, progress);
    case 7: return Dopri5Loop<7>(problem, x0, options, observer, progress);
    case 8: return Dopri5Loop<8>(problem, x0, options, observer, progress);
    default: return Dopri5Loop<0>(problem, x0, options, observer, progress);
  }
}

}  // namespace paynter::internal
