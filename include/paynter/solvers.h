// paynter/solvers.h — one small interface for every time integrator.
//
// A solver integrates dx/dt = f(t, x) from t0 to t_end and reports the state at
// the output times through an observer. Methods: fixed-step RK4, adaptive
// Dormand–Prince 5(4) with the error control of MATLAB's ode45, and SUNDIALS
// CVODE BDF. Butcher tables are data (src/solvers/butcher_tables.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "paynter/error.h"

namespace paynter {

// The ODE to integrate. rhs may throw paynter::Error (for example when an
// algebraic loop cannot be solved); the solver then stops with that error,
// adding the time and the state at which it happened.
struct OdeProblem {
  int n = 0;
  std::function<void(double t, const double* x, double* dxdt)> rhs;
  std::vector<std::string> state_names;  // for error messages; may be empty
  // Optional: called after every accepted step with the new state, which it
  // may move (onto the constraint manifold of a mechanism, say: the
  // projection of the lagrange-multipliers method). Returns true when it
  // changed x. May throw paynter::Error, which stops the run.
  std::function<bool(double t, double* x)> project;

  // Optional: events (docs/events.md). num_events indicator functions g_i(t, x),
  // computed together by `indicators`; an event is a sign change of one of
  // them inside a step, in the direction event_direction[i] asks for (+1:
  // from negative to positive, -1: from positive to negative, 0: either;
  // empty: 0 for all). The solver locates it on the step's dense output
  // (dopri5: its continuous extension; rk4: a cubic Hermite interpolant;
  // bdf: CVODE's root finding) to a relative tolerance near the rounding of
  // t, calls on_event with the time, the state there (which it may change:
  // a reset) and, per indicator, the direction it crossed in (+1, -1) or 0,
  // and restarts the integration from that point (dopri5 forgets its step
  // size and FSAL stage). on_event returns true to end the run there; the
  // observer is not called at events (on_event records what it wants). With
  // num_events = 0 nothing of this runs.
  int num_events = 0;
  std::function<void(double t, const double* x, double* g)> indicators;
  std::vector<int> event_direction;
  std::function<bool(double t, double* x, const int* crossed)> on_event;
};

enum class Method { kRK4, kDopri5, kBDF };
Method ParseMethod(const std::string& name);  // "rk4" | "dopri5" | "bdf"; throws Error
std::string MethodName(Method m);

struct SolverOptions {
  Method method = Method::kDopri5;
  double t0 = 0.0;
  double t_end = 1.0;
  double rtol = 1e-6;      // relative tolerance (dopri5, bdf)
  double atol = 1e-9;      // absolute tolerance (dopri5, bdf)
  double step = 1e-3;      // fixed step (rk4)
  double dt_out = 0.0;     // output interval; 0 = (t_end - t0) / 1000
  double initial_step = 0; // 0 = automatic
  double max_step = 0;     // 0 = unlimited for bdf, 0.1*(t_end-t0) for dopri5 (as ode45)
  long max_steps = 50'000'000;  // a run that needs more stops with an error
  // dopri5: when Hairer's stiffness test finds the step held by stability
  // rather than accuracy, and the run would need more steps than this (or than
  // max_steps) to reach t_end, it stops at once with an error advising bdf.
  // 0 = only max_steps.
  long stiff_steps = 100'000;
  bool progress = false;   // a progress line on stderr for long runs (paynter/progress.h)
  // Optional: told the time the run has reached, often (after accepted
  // steps and at output times, from the run's own thread; bdf: at output
  // times and every few hundred steps), so keep it cheap. Returning false
  // stops the run there: Integrate and IntegrateDae throw RunStopped, and
  // the observer sees nothing past that time.
  std::function<bool(double t)> on_progress;
  // Throws paynter::Error naming the bad option.
  void Validate() const;
};

// A run stopped because SolverOptions::on_progress asked for it: an Error (so
// whatever reports errors reports it) that a caller can tell from a failure.
class RunStopped : public Error {
 public:
  RunStopped(double t, double t_end);
  double t() const { return t_; }  // the time reached

 private:
  double t_;
};

struct SolverStats {
  long steps = 0;          // accepted steps
  long rejected = 0;       // rejected steps (error test or convergence failures)
  long rhs_evals = 0;      // right-hand-side evaluations (incl. those for Jacobians)
  long jac_evals = 0;      // Jacobian evaluations (bdf)
  long projections = 0;    // accepted steps after which `project` moved the state
  long events = 0;         // events located and handled (OdeProblem::on_event calls)
  bool stiff = false;      // dopri5: Hairer's test found the problem stiff,
  double stiff_t = 0;      // first at this time
  double integrate_seconds = 0;
};

// Called at t0, at every output time, and at t_end (exactly once each, in order).
using Observer = std::function<void(double t, const double* x)>;

// A differential-algebraic system F(t, y, y') = 0, integrated by SUNDIALS IDA
// (BDF, variable order). differential[i] says whether y_i's derivative
// appears; algebraic variables are left out of the error test, so index-2
// systems in Hessenberg form (constraint forces) integrate too.
struct DaeProblem {
  int n = 0;
  std::function<void(double t, const double* y, const double* yp, double* r)> residual;
  std::vector<char> differential;
  std::vector<std::string> names;  // for error messages; may be empty
  // Absolute tolerance per variable (empty: options.atol for all). Algebraic
  // variables are out of the error test, but their weights still scale the
  // Newton iteration's convergence test.
  std::vector<double> atol;
  // The iteration matrix dF/dy + c dF/dy' by central differences of the
  // residual (2n evaluations) instead of IDA's one-sided ones (n): for
  // index-2 systems whose Newton iteration needs the more accurate matrix.
  bool central_differences = false;
  // Optional events, as OdeProblem's: indicators g_i(t, y, y'), located by
  // IDA's root finding; on_event may change y and y' (a consistent restart
  // is the caller's duty) and returns true to end the run.
  int num_events = 0;
  std::function<void(double t, const double* y, const double* yp, double* g)> indicators;
  std::vector<int> event_direction;
  std::function<bool(double t, double* y, double* yp, const int* crossed)> on_event;
};

// Integrates from a consistent (y0, yp0), reporting y at t0, every output time
// and t_end (options: t0, t_end, rtol, atol, dt_out, max_step, max_steps).
// Throws paynter::Error on failure (time, state, reason).
SolverStats IntegrateDae(const DaeProblem& problem, const std::vector<double>& y0, const std::vector<double>& yp0,
                         const SolverOptions& options, const Observer& observer);

// Integrates from x0. Throws paynter::Error on failure: the message gives the
// time, the state (named, if names are given) and the reason.
SolverStats Integrate(const OdeProblem& problem, const std::vector<double>& x0,
                      const SolverOptions& options, const Observer& observer);

}  // namespace paynter
