// src/solvers/integrator.h — internal plumbing shared by the integrators.
//
// Not installed, not part of the public interface (that is
// include/paynter/solvers.h). Integrate() in solver.cc validates the inputs and
// then calls one of the Integrate* functions below; they share the output
// schedule, the progress line, and the wording of failures.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "paynter/error.h"
#include "paynter/progress.h"
#include "paynter/solvers.h"

namespace paynter::internal {

// ---- Output schedule --------------------------------------------------------

// The output times after t0: t0 + k*dt_out for k = 1, 2, ... while they lie
// before t_end, then t_end itself. Each grid time is computed as t0 + k*dt_out
// (never by accumulating dt_out) so there is no drift, and a grid time within
// roundoff of t_end (e.g. 0 + 10*0.1) is merged into t_end, so t_end is
// reported exactly once and the times are strictly increasing.
class OutputGrid {
 public:
  explicit OutputGrid(const SolverOptions& options);
  double next() const { return next_; }
  bool next_is_end() const { return at_end_; }
  void Advance();  // must not be called once next_is_end()
  double dt_out() const { return dt_; }

 private:
  void Place();
  double t0_, t_end_, dt_, merge_tol_;
  long k_ = 1;
  double next_ = 0;
  bool at_end_ = false;
};

// dt_out with its default ((t_end - t0) / 1000) applied.
double EffectiveDtOut(const SolverOptions& options);

// ---- Progress line ----------------------------------------------------------

// "t = … / t_end (xx%)" on stderr when requested, through a ProgressLine
// (paynter/progress.h): on a terminal rewritten in place after the first
// second and erased when the object is destroyed (also when unwinding after
// an error, so the error message starts on a clean line); otherwise a line of
// its own every 5 s. And the time reached to SolverOptions::on_progress,
// which may ask the run to stop.
class Progress {
 public:
  explicit Progress(const SolverOptions& options);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // In an integrator's own loop, at a time reached for good (an accepted
  // step, an output time): the line, and on_progress, which may stop the
  // run (RunStopped is thrown here).
  void Update(double t) {
    if (line_) Tick(t);
    if (hook_ && !hook_(t)) throw RunStopped(t, t_end_);
  }
  // Where nothing may be thrown, at a time that may still be taken back
  // (inside a SUNDIALS callback): the line only.
  void Note(double t) {
    if (line_) Tick(t);
  }

 private:
  void Tick(double t);
  std::optional<ProgressLine> line_;
  std::function<bool(double)> hook_;
  double t0_, t_end_;
};

// ---- Step forecast -----------------------------------------------------------

// A run that would take far more steps than the budget stops early with an
// error, instead of running for minutes without a word. Every kWindow
// accepted steps, the pace of the last window (steps per unit of time) is
// projected to t_end; when steps taken plus steps projected exceed the budget
// at kTimesInARow checks in a row (a short transient may pass), the run stops.
// The budget is kForecastFactor x stiff_steps (1,000,000 by default), or
// max_steps when that is smaller (--max-steps sets both); 0 stiff_steps: only
// max_steps. dopri5's stiffness test stops a stiff run sooner, at stiff_steps.
class StepForecast {
 public:
  static constexpr long kWindow = 500;
  static constexpr int kTimesInARow = 3;
  static constexpr long kForecastFactor = 10;
  explicit StepForecast(const SolverOptions& options);
  long budget() const { return budget_; }
  // After `steps` accepted steps in all, at time t with state x; call it after
  // every accepted step (it works only every kWindow steps), or at least once
  // per window. Throws through ThrowFailure.
  void Check(const OdeProblem& problem, Method method, long steps, double t, const double* x);

 private:
  double t_end_;
  long budget_;
  long window_steps_ = 0;  // steps at the start of the window
  double window_t_;        // the time then
  int over_ = 0;           // checks in a row over the budget
};

// ---- Failures ---------------------------------------------------------------

// "name" of state i, or "x[i]" when the problem has no names.
std::string StateName(const OdeProblem& problem, int i);

// Throws paynter::Error: "<method> failed at t = <t>: <reason>", followed by
// every state as "name = value" (at most 50 lines), with the given hint.
[[noreturn]] void ThrowFailure(const OdeProblem& problem, Method method, double t,
                               const double* x, const std::string& reason,
                               const std::string& hint);

// The rhs threw `e` when evaluated at (t, x): rethrows it as paynter::Error
// keeping its diagnostic (location, element, hint, ...) and adding the time
// and the state to the message.
[[noreturn]] void RethrowRhsError(const Error& e, const OdeProblem& problem,
                                  Method method, double t, const double* x);

// Index of the first non-finite entry of v[0..n), or -1. The fast path is a
// branch-free reduction (v - v is NaN exactly when v is NaN or ±Inf), so this
// is cheap enough to run after every rhs evaluation.
inline int FirstNonFinite(const double* v, int n) {
  double acc = 0;
  for (int i = 0; i < n; ++i) acc += v[i] - v[i];
  if (acc == 0) return -1;
  for (int i = 0; i < n; ++i)
    if (v[i] - v[i] != 0) return i;
  return -1;  // unreachable
}

// "the right-hand side returned NaN for d(q)/dt at t = 0.52" (or Inf, -Inf).
std::string DescribeNonFinite(const OdeProblem& problem, double t,
                              const double* dxdt, int index);

// Calls the rhs; a paynter::Error it throws is rethrown with time and state.
inline void EvalRhs(const OdeProblem& problem, Method method, double t,
                    const double* x, double* dxdt) {
  try {
    problem.rhs(t, x, dxdt);
  } catch (const Error& e) {
    RethrowRhsError(e, problem, method, t, x);
  }
}

// ---- The integrators --------------------------------------------------------
// Preconditions (checked by Integrate): options validated, problem.n >= 1,
// x0.size() == n, x0 finite, rhs callable. They fill every SolverStats field
// except integrate_seconds.

// out = y + h * sum_{j<kRow} a[kRow][j] * k_j for the explicit Runge-Kutta
// table kTable; zero coefficients (e.g. Dormand-Prince's a[6][1]) are dropped
// at compile time, the condition being a constant expression.
template <const auto& kTable, int kRow, std::size_t... J>
inline void StageInput(int n, const double* y, double h, double* const* k, double* out, std::index_sequence<J...>) {
  for (int i = 0; i < n; ++i) {
    double s = 0;
    ((kTable.a[kRow][J] != 0.0 ? void(s += kTable.a[kRow][J] * k[J][i]) : void()), ...);
    out[i] = y[i] + h * s;
  }
}

SolverStats IntegrateRK4(const OdeProblem& problem, const std::vector<double>& x0,
                         const SolverOptions& options, const Observer& observer,
                         Progress& progress);
SolverStats IntegrateDopri5(const OdeProblem& problem,
                            const std::vector<double>& x0,
                            const SolverOptions& options,
                            const Observer& observer, Progress& progress);
SolverStats IntegrateCvode(const OdeProblem& problem,
                           const std::vector<double>& x0,
                           const SolverOptions& options,
                           const Observer& observer, Progress& progress);

}  // namespace paynter::internal
