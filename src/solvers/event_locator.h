// src/solvers/event_locator.h — zero crossings of event indicators on a step's
// dense output (dopri5, rk4); CVODE and IDA use their own root finding.
//
// After each accepted step [t0, t1] the indicators are evaluated at t1 and
// compared with the signs they had before. An indicator whose sign changed in
// the direction asked for is bracketed on [t0, t1] and its root located on
// the interpolant by the Illinois variant of regula falsi until the bracket
// is within a few units of rounding of t; the event time is the bracket's
// right end (where the sign has changed), the earliest over the indicators.
// A zero value has no sign: an indicator that lands exactly on zero changes
// sign only when it leaves zero on the other side.
#pragma once

#include <functional>
#include <vector>

#include "integrator.h"

namespace paynter::internal {

class EventLocator {
 public:
  explicit EventLocator(const OdeProblem& problem, Method method);
  bool active() const { return m_ > 0; }

  // Takes the signs of the indicators at (t, x): at the start, and after an
  // event (where the model's modes may have changed them).
  void Reset(double t, const double* x);

  // `interp(t, out)` writes the state at t in [t0, t1]. Returns true when an
  // event lies in (t0, t1]: then *t_event and x_event (n values) hold it and
  // crossed() the directions. Otherwise takes the signs at t1.
  bool Check(double t0, double t1, const double* x1,
             const std::function<void(double, double*)>& interp, double* t_event, double* x_event);
  const int* crossed() const { return crossed_.data(); }

  // Calls on_event (rethrowing errors with the time and state) and guards
  // against chattering: more than kMaxBurst events without time advancing
  // beyond rounding stop the run with an error.
  bool Handle(double t, double* x, long* events, const int* crossed = nullptr);

 private:
  void Eval(double t, const double* x, double* g);
  const OdeProblem& p_;
  Method method_;
  int m_ = 0;
  std::vector<double> g0_, g1_, gt_;
  std::vector<int> sign_, crossed_;
  std::vector<double> xt_;
  double last_t_ = 0;
  int burst_ = 0;
};

// ---- Shared with the SUNDIALS integrators -----------------------------------
// The largest number of events in a row at one time (up to rounding) before
// a run is stopped as chattering (a Zeno point, or a reset that re-arms its
// own event).
constexpr int kMaxEventBurst = 100;

}  // namespace paynter::internal
