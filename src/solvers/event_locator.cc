// src/solvers/event_locator.cc — see event_locator.h.
#include "event_locator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "pn_illinois.h"

namespace paynter::internal {

namespace {
int Sign(double v) { return v > 0 ? 1 : (v < 0 ? -1 : 0); }
}  // namespace

EventLocator::EventLocator(const OdeProblem& problem, Method method)
    : p_(problem), method_(method), m_(problem.indicators && problem.on_event ? problem.num_events : 0) {
  g0_.assign(m_, 0.0);
  g1_.assign(m_, 0.0);
  gt_.assign(m_, 0.0);
  sign_.assign(m_, 0);
  crossed_.assign(m_, 0);
  xt_.assign(problem.n, 0.0);
}

void EventLocator::Eval(double t, const double* x, double* g) {
  try {
    p_.indicators(t, x, g);
  } catch (const Error& e) {
    RethrowRhsError(e, p_, method_, t, x);
  }
  for (int i = 0; i < m_; ++i)
    if (!std::isfinite(g[i]))
      ThrowFailure(p_, method_, t, x, fmt::format("event indicator {} is {} at t = {}", i + 1, g[i], t),
                   "an event condition is evaluated outside the domain of its expression: check the model's "
                   "conditions");
}

void EventLocator::Reset(double t, const double* x) {
  if (!m_) return;
  Eval(t, x, g0_.data());
  // An indicator that an event found exactly at zero has crossed to the side
  // of its crossing: leaving zero on that side is no new crossing. (A state
  // held at a limit by a mode, then let go along a rate that starts at zero,
  // stays within rounding of the limit for a while; taking each step off zero
  // for a crossing gave events 1e-9 s apart without end.)
  for (int i = 0; i < m_; ++i) sign_[i] = g0_[i] == 0 && crossed_[i] != 0 ? crossed_[i] : Sign(g0_[i]);
  std::fill(crossed_.begin(), crossed_.end(), 0);
}

bool EventLocator::Check(double t0, double t1, const double* x1,
                         const std::function<void(double, double*)>& interp, double* t_event, double* x_event) {
  if (!m_) return false;
  Eval(t1, x1, g1_.data());
  double best = std::numeric_limits<double>::infinity();
  std::fill(crossed_.begin(), crossed_.end(), 0);
  const double tol = pn_illinois_tolerance(t0, t1);
  std::vector<double> roots(m_, best);
  for (int i = 0; i < m_; ++i) {
    const int s1 = Sign(g1_[i]);
    // An indicator that was exactly zero (at the start, or after an event)
    // and leaves zero crosses from the other side: a condition that starts
    // on its boundary takes its side at once.
    if (s1 == 0 || s1 == sign_[i]) continue;
    const int dir = p_.event_direction.empty() ? 0 : p_.event_direction[i];
    if (dir != 0 && dir != s1) continue;  // a crossing not asked for
    // Illinois on g_i along the interpolant (pn_illinois.h, shared with the
    // FMU runtime); g0 at t0 may be zero: its side is the old sign.
    struct Along {
      EventLocator* self;
      const std::function<void(double, double*)>* interp;
      int i;
    } along{this, &interp, i};
    double b = t1;
    pn_illinois(
        t0, t1, g0_[i], g1_[i], sign_[i], tol,
        [](void* ctx, double t, double* value) -> int {
          Along& on = *static_cast<Along*>(ctx);
          (*on.interp)(t, on.self->xt_.data());
          on.self->Eval(t, on.self->xt_.data(), on.self->gt_.data());
          *value = on.self->gt_[on.i];
          return 0;
        },
        &along, &b);
    roots[i] = b;
    best = std::min(best, b);
  }
  if (!std::isfinite(best)) {
    for (int i = 0; i < m_; ++i) {
      if (g1_[i] != 0) sign_[i] = Sign(g1_[i]);
      g0_[i] = g1_[i];
    }
    return false;
  }
  for (int i = 0; i < m_; ++i)
    if (roots[i] <= best + tol) crossed_[i] = Sign(g1_[i]);
  *t_event = best;
  if (best == t1) std::copy(x1, x1 + p_.n, x_event);
  else interp(best, x_event);
  return true;
}

bool EventLocator::Handle(double t, double* x, long* events, const int* crossed) {
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  if (*events > 0 && t - last_t_ <= 64 * kEps * std::max(1.0, std::fabs(t))) {
    if (++burst_ > kMaxEventBurst)
      ThrowFailure(p_, method_, t, x,
                   fmt::format("more than {} events at t = {} without time advancing (chattering, or a Zeno point "
                               "where events accumulate)",
                               kMaxEventBurst, t),
                   "an event's reset may leave its own condition true, or events accumulate here (a bouncing "
                   "ball coming to rest): end the run before this time, or add a 'stop' event");
  } else {
    burst_ = 0;
  }
  last_t_ = t;
  ++*events;
  bool stop = false;
  try {
    stop = p_.on_event(t, x, crossed ? crossed : crossed_.data());
  } catch (const Error& e) {
    RethrowRhsError(e, p_, method_, t, x);
  }
  return stop;
}

}  // namespace paynter::internal
