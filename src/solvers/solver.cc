// src/solvers/solver.cc — method names, option validation, Integrate()
// dispatch, and the plumbing shared by the integrators (output grid, progress
// line, failure messages).

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "integrator.h"
#include "paynter/error.h"
#include "paynter/solvers.h"

namespace paynter {
namespace {

constexpr const char* kMethodNames[] = {"rk4", "dopri5", "bdf"};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

[[noreturn]] void ThrowBadOption(const std::string& option,
                                 const std::string& expected,
                                 const std::string& got, const std::string& hint) {
  ThrowAt({}, "", fmt::format("invalid solver option '{}'", option), expected, got, hint);
}

void RequireFinite(const char* name, double value) {
  if (!std::isfinite(value))
    ThrowBadOption(name, "a finite number", fmt::format("{} = {}", name, value),
                   fmt::format("give '{}' an ordinary decimal value", name));
}

}  // namespace

// ---- Method names -----------------------------------------------------------

Method ParseMethod(const std::string& name) {
  if (name == "rk4") return Method::kRK4;
  if (name == "dopri5") return Method::kDopri5;
  if (name == "bdf") return Method::kBDF;

  std::string hint;
  const std::string lower = Lower(name);
  if (lower == "ode45" || lower == "rk45" || lower == "dp5" || lower == "dopri")
    hint = "'dopri5' is the Dormand-Prince 5(4) method of MATLAB's ode45";
  else if (lower == "cvode" || lower == "ode15s" || lower == "stiff" ||
           lower == "implicit")
    hint = "'bdf' is CVODE's variable-order BDF method, for stiff systems";
  else {
    hint = DidYouMean(lower, {std::begin(kMethodNames), std::end(kMethodNames)});
    if (hint.empty())
      hint = "rk4: fixed step; dopri5: adaptive, non-stiff (as ode45); "
             "bdf: adaptive, stiff (CVODE)";
  }
  ThrowAt({}, "", "unknown integration method", "one of rk4, dopri5, bdf", fmt::format("'{}'", name), hint);
}

std::string MethodName(Method m) {
  switch (m) {
    case Method::kRK4: return "rk4";
    case Method::kDopri5: return "dopri5";
    case Method::kBDF: return "bdf";
  }
  return "unknown";
}

// ---- Options ----------------------------------------------------------------

void SolverOptions::Validate() const {
  RequireFinite("t0", t0);
  RequireFinite("t_end", t_end);
  if (!(t_end > t0))
    ThrowBadOption("t_end", fmt::format("t_end > t0 = {}", t0),
                   fmt::format("t_end = {}", t_end),
                   "integration runs forward in time: set t_end after t0");
  // Guard against a span so short that no step can be taken from t0.
  if (t0 + (t_end - t0) * 0.5 == t0 || t0 + (t_end - t0) * 0.5 == t_end)
    ThrowBadOption("t_end",
                   fmt::format("t_end distinguishable from t0 = {}", t0),
                   fmt::format("t_end = {}", t_end),
                   "the interval is below the resolution of double precision");

  RequireFinite("rtol", rtol);
  if (!(rtol > 0))
    ThrowBadOption("rtol", "a relative tolerance > 0",
                   fmt::format("rtol = {}", rtol),
                   "typical values are 1e-3 to 1e-10 (default 1e-6)");
  RequireFinite("atol", atol);
  if (!(atol >= 0))
    ThrowBadOption("atol", "an absolute tolerance >= 0",
                   fmt::format("atol = {}", atol),
                   "use a value well below the size of the smallest state "
                   "that matters (default 1e-9)");

  if (method == Method::kRK4) {
    RequireFinite("step", step);
    if (!(step > 0))
      ThrowBadOption("step", "a fixed step > 0 for method rk4",
                     fmt::format("step = {}", step),
                     "choose a step well below the fastest time constant of "
                     "the model, or use an adaptive method (dopri5, bdf)");
  }

  RequireFinite("dt_out", dt_out);
  if (!(dt_out >= 0))
    ThrowBadOption("dt_out", "an output interval >= 0 (0 = (t_end - t0)/1000)",
                   fmt::format("dt_out = {}", dt_out),
                   "dt_out is the spacing of the output times; use 0 for 1000 "
                   "evenly spaced outputs");
  RequireFinite("initial_step", initial_step);
  if (!(initial_step >= 0))
    ThrowBadOption("initial_step", "an initial step >= 0 (0 = automatic)",
                   fmt::format("initial_step = {}", initial_step),
                   "leave it at 0 unless the automatic choice fails");
  RequireFinite("max_step", max_step);
  if (!(max_step >= 0))
    ThrowBadOption("max_step", "a maximum step >= 0 (0 = default)",
                   fmt::format("max_step = {}", max_step),
                   "leave it at 0 unless the solver steps over short events");
  if (!(max_steps > 0))
    ThrowBadOption("max_steps", "a step budget > 0",
                   fmt::format("max_steps = {}", max_steps),
                   "the default is 50000000");
  if (!(stiff_steps >= 0))
    ThrowBadOption("stiff_steps", "a step budget for stiff runs >= 0 (0 = max_steps only)",
                   fmt::format("stiff_steps = {}", stiff_steps),
                   "the default is 100000");
}

RunStopped::RunStopped(double t, double t_end)
    : Error([&] {
        Diagnostic d;
        d.message = fmt::format("the run was stopped at t = {:.6g} of t_end = {:g}, as asked", t, t_end);
        d.hint = "no results are kept of a stopped run";
        return d;
      }()),
      t_(t) {}

// ---- Integrate --------------------------------------------------------------

SolverStats Integrate(const OdeProblem& problem, const std::vector<double>& x0,
                      const SolverOptions& options, const Observer& observer) {
  options.Validate();
  if (problem.n < 0)
    throw Error(fmt::format("OdeProblem.n = {} is negative", problem.n));
  if (x0.size() != static_cast<size_t>(problem.n)) {
    ThrowAt({}, "", "the initial state does not match the problem size", fmt::format("{} initial values", problem.n),
            fmt::format("{} initial values", x0.size()));
  }
  if (!problem.state_names.empty() &&
      problem.state_names.size() != static_cast<size_t>(problem.n)) {
    ThrowAt({}, "", "OdeProblem.state_names has the wrong length", fmt::format("{} names (or none)", problem.n),
            fmt::format("{} names", problem.state_names.size()));
  }
  if (problem.n > 0 && !problem.rhs)
    throw Error("OdeProblem.rhs is empty: no right-hand side to integrate");
  if (int i = internal::FirstNonFinite(x0.data(), problem.n); i >= 0) {
    ThrowAt({}, "", fmt::format("the initial value of state '{}' is not finite", internal::StateName(problem, i)),
            "finite initial values", fmt::format("{} = {}", internal::StateName(problem, i), x0[i]),
            "check the initial conditions and the parameters they depend on");
  }

  static const Observer kNoObserver = [](double, const double*) {};
  const Observer& observe = observer ? observer : kNoObserver;

  const auto start = std::chrono::steady_clock::now();
  SolverStats stats;
  if (problem.n == 0 && problem.num_events == 0) {
    // Nothing to integrate; still honour the observer contract. (A model with
    // no state but with conditions still steps, so that its events switch.)
    observe(options.t0, x0.data());
    for (internal::OutputGrid grid(options);; grid.Advance()) {
      observe(grid.next(), x0.data());
      if (grid.next_is_end()) break;
    }
  } else {
    internal::Progress progress(options);
    switch (options.method) {
      case Method::kRK4:
        stats = internal::IntegrateRK4(problem, x0, options, observe, progress);
        break;
      case Method::kDopri5:
        stats = internal::IntegrateDopri5(problem, x0, options, observe, progress);
        break;
      case Method::kBDF:
        // With no state, only the events move in time: CVODE takes no empty system.
        stats = problem.n == 0 ? internal::IntegrateDopri5(problem, x0, options, observe, progress)
                               : internal::IntegrateCvode(problem, x0, options, observe, progress);
        break;
    }
  }
  stats.integrate_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return stats;
}

namespace internal {

// ---- OutputGrid -------------------------------------------------------------

double EffectiveDtOut(const SolverOptions& options) {
  return options.dt_out > 0 ? options.dt_out
                            : (options.t_end - options.t0) / 1000.0;
}

OutputGrid::OutputGrid(const SolverOptions& options)
    : t0_(options.t0), t_end_(options.t_end), dt_(EffectiveDtOut(options)) {
  // A grid time closer to t_end than this is taken to be t_end. The relative
  // part absorbs the rounding of t0 + k*dt_out; the absolute part covers
  // the resolution of t itself.
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  merge_tol_ = std::max(1e-9 * dt_, 64 * kEps * std::max(std::fabs(t0_),
                                                          std::fabs(t_end_)));
  Place();
}

void OutputGrid::Place() {
  const double t = t0_ + static_cast<double>(k_) * dt_;
  if (t >= t_end_ - merge_tol_ || !(t > t0_)) {
    next_ = t_end_;
    at_end_ = true;
  } else {
    next_ = t;
  }
}

void OutputGrid::Advance() {
  ++k_;
  Place();
}

// ---- Progress ---------------------------------------------------------------

StepForecast::StepForecast(const SolverOptions& options)
    : t_end_(options.t_end),
      budget_(options.stiff_steps > 0 && options.stiff_steps < options.max_steps / kForecastFactor
                  ? options.stiff_steps * kForecastFactor
                  : options.max_steps),
      window_t_(options.t0) {}

void StepForecast::Check(const OdeProblem& problem, Method method, long steps, double t, const double* x) {
  if (steps - window_steps_ < kWindow) return;
  const long taken = steps - window_steps_;
  const double span = t - window_t_;
  const double more = span > 0 ? std::ceil((t_end_ - t) / span * static_cast<double>(taken))
                               : std::numeric_limits<double>::infinity();
  window_steps_ = steps;
  window_t_ = t;
  if (static_cast<double>(steps) + more <= static_cast<double>(budget_)) {
    over_ = 0;
    return;
  }
  if (++over_ < kTimesInARow) return;
  ThrowFailure(
      problem, method, t, x,
      fmt::format("at the pace of its last {} steps (about {:.3g} s each), reaching t_end = {} would take about "
                  "{:.3g} more steps, over the step budget of {} (the step forecast)",
                  taken, span / static_cast<double>(taken), t_end_, more, budget_),
      fmt::format("the model moves much faster than t_end asks to follow: check it for a very small mass, inertia "
                  "or capacitance (or a very large stiffness){}; if that is meant, simulate a shorter time, or "
                  "allow the steps (--max-steps {:.0f})",
                  method == Method::kDopri5 ? ", or try --method bdf if it is stiff" : "",
                  std::ceil(1.2 * (static_cast<double>(steps) + more))));
}

Progress::Progress(const SolverOptions& options) : hook_(options.on_progress), t0_(options.t0), t_end_(options.t_end) {
  if (options.progress) line_.emplace();
}

void Progress::Tick(double t) {
  if (!line_->Due()) return;
  const double pct = 100.0 * (t - t0_) / (t_end_ - t0_);
  line_->Show(fmt::format("t = {:.6g} / {:.6g} ({:.0f}%)", t, t_end_, pct));
}

// ---- Failures ---------------------------------------------------------------

namespace {

constexpr int kMaxStatesShown = 50;

// "\n  state:    q = 1\n            p = 2 ...", aligned with the "expected:",
// "got:" and "hint:" lines of Diagnostic::ToString.
std::string FormatState(const OdeProblem& problem, const double* x) {
  std::string out;
  const int shown = std::min(problem.n, kMaxStatesShown);
  for (int i = 0; i < shown; ++i)
    out += fmt::format("\n  {:<10}{} = {}", i == 0 ? "state:" : "",
                       StateName(problem, i), x[i]);
  if (problem.n > shown)
    out += fmt::format("\n  {:<10}... and {} more", "", problem.n - shown);
  return out;
}

}  // namespace

std::string StateName(const OdeProblem& problem, int i) {
  if (i >= 0 && static_cast<size_t>(i) < problem.state_names.size() &&
      !problem.state_names[i].empty())
    return problem.state_names[i];
  return fmt::format("x[{}]", i);
}

std::string DescribeNonFinite(const OdeProblem& problem, double t,
                              const double* dxdt, int index) {
  const double v = dxdt[index];
  const char* what = std::isnan(v) ? "NaN" : (v > 0 ? "Inf" : "-Inf");
  return fmt::format("the right-hand side returned {} for d({})/dt at t = {}",
                     what, StateName(problem, index), t);
}

void ThrowFailure(const OdeProblem& problem, Method method, double t,
                  const double* x, const std::string& reason,
                  const std::string& hint) {
  ThrowAt({}, "", fmt::format("{} failed at t = {}: {}{}", MethodName(method), t, reason, FormatState(problem, x)), "",
          "", hint);
}

void RethrowRhsError(const Error& e, const OdeProblem& problem, Method method,
                     double t, const double* x) {
  // Keep the rhs's own diagnostic (location, element, hint) and its message
  // first, since an element prefix in Diagnostic::ToString reads with it.
  Diagnostic d = e.diagnostic();
  const std::string original = d.message.empty() ? e.what() : d.message;
  d.message = fmt::format("{} [at t = {}, while integrating with {}]{}",
                          original, t, MethodName(method),
                          FormatState(problem, x));
  throw Error(std::move(d));
}

}  // namespace internal
}  // namespace paynter
