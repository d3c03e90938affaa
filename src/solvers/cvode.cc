// src/solvers/cvode.cc — stiff integration with SUNDIALS 6 CVODE: variable
// order (1–5) BDF, Newton iteration, dense direct linear solver with CVODE's
// difference-quotient Jacobian (n extra rhs evaluations per Jacobian).
//
// Outputs come from CVODE's own interpolation (CV_NORMAL) at each output time;
// CVodeSetStopTime(t_end) keeps CVODE from stepping past t_end, so the last
// state is computed at t_end itself rather than interpolated.
//
// Errors. The rhs is C++ called from C: nothing may unwind through CVODE.
//   * An exception from the rhs is caught in the callback, stored with the
//     time and state it was evaluated at, and reported to CVODE as an
//     unrecoverable failure (-1); it is rethrown once CVode() has returned.
//   * A NaN/Inf derivative is reported as recoverable (+1): CVODE then retries
//     with a smaller step, which is the right reaction when a too-long trial
//     step or a Newton iterate left the model's domain. If CVODE cannot
//     recover, the error names the non-finite derivative.
//   * CVODE's own messages are captured by an error handler instead of being
//     printed, and included in the paynter::Error.
// Every SUNDIALS object is owned by a unique_ptr, so all are freed on every
// path, including exceptions.

#include <cvode/cvode.h>
#include <cvode/cvode_proj.h>
#include <fmt/format.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "event_locator.h"
#include "integrator.h"

namespace paynter::internal {
namespace {

// ---- RAII for SUNDIALS objects ---------------------------------------------

struct ContextFree {
  void operator()(std::remove_pointer_t<SUNContext>* c) const {
    SUNContext ctx = c;
    SUNContext_Free(&ctx);
  }
};
struct VectorFree {
  void operator()(std::remove_pointer_t<N_Vector>* v) const { N_VDestroy(v); }
};
struct MatrixFree {
  void operator()(std::remove_pointer_t<SUNMatrix>* m) const { SUNMatDestroy(m); }
};
struct LinSolFree {
  void operator()(std::remove_pointer_t<SUNLinearSolver>* s) const {
    SUNLinSolFree(s);
  }
};
struct CvodeFree {
  void operator()(void* mem) const { CVodeFree(&mem); }
};

using ContextPtr = std::unique_ptr<std::remove_pointer_t<SUNContext>, ContextFree>;
using VectorPtr = std::unique_ptr<std::remove_pointer_t<N_Vector>, VectorFree>;
using MatrixPtr = std::unique_ptr<std::remove_pointer_t<SUNMatrix>, MatrixFree>;
using LinSolPtr =
    std::unique_ptr<std::remove_pointer_t<SUNLinearSolver>, LinSolFree>;
using CvodePtr = std::unique_ptr<void, CvodeFree>;

// ---- Callbacks --------------------------------------------------------------

struct CallbackData {
  const OdeProblem* problem = nullptr;
  Progress* progress = nullptr;
  // The exception the rhs threw, and where.
  std::exception_ptr exception;
  double exception_t = 0;
  std::vector<double> exception_x;  // preallocated to n
  // The last non-finite derivative seen (reset before each CVode call).
  bool nonfinite = false;
  double nonfinite_t = 0;
  int nonfinite_index = 0;
  double nonfinite_value = 0;
  // Set when CVODE warns that t + h == t: the step has fallen below the
  // resolution of t, so the run has stalled (see CvodeErrHandler).
  bool stalled = false;
  // Messages CVODE would have printed.
  std::string last_error;
  std::string last_warning;
};

int CvodeRhs(sunrealtype t, N_Vector y, N_Vector ydot, void* user_data) noexcept {
  auto* d = static_cast<CallbackData*>(user_data);
  const int n = d->problem->n;
  const double* x = N_VGetArrayPointer(y);
  double* dx = N_VGetArrayPointer(ydot);
  if (d->stalled) return -1;  // stop CVode; reported as "step size too small"
  try {
    d->problem->rhs(t, x, dx);
  } catch (...) {
    d->exception = std::current_exception();
    d->exception_t = t;
    std::copy(x, x + n, d->exception_x.begin());
    return -1;  // unrecoverable: CVode returns at once
  }
  if (int bad = FirstNonFinite(dx, n); bad >= 0) {
    d->nonfinite = true;
    d->nonfinite_t = t;
    d->nonfinite_index = bad;
    d->nonfinite_value = dx[bad];
    return 1;  // recoverable: CVODE retries with a smaller step
  }
  d->progress->Note(t);  // (on_progress is asked in the loop below, at times reached for good)
  return 0;
}

// Event indicators (CVodeRootInit); errors as the rhs's.
int CvodeRoots(sunrealtype t, N_Vector y, sunrealtype* g, void* user_data) noexcept {
  auto* d = static_cast<CallbackData*>(user_data);
  const int n = d->problem->n;
  const double* x = N_VGetArrayPointer(y);
  try {
    d->problem->indicators(t, x, g);
  } catch (...) {
    d->exception = std::current_exception();
    d->exception_t = t;
    std::copy(x, x + n, d->exception_x.begin());
    return -1;
  }
  return 0;
}

// Projection after each step (CVodeSetProjFn): ycur is moved in place and
// corr receives the change. A thrown error stops CVode like the rhs's.
int CvodeProject(sunrealtype t, N_Vector ycur, N_Vector corr, sunrealtype /*eps*/, N_Vector /*err*/,
                 void* user_data) noexcept {
  auto* d = static_cast<CallbackData*>(user_data);
  const int n = d->problem->n;
  double* x = N_VGetArrayPointer(ycur);
  double* c = N_VGetArrayPointer(corr);
  std::copy(x, x + n, c);
  try {
    d->problem->project(t, x);
  } catch (...) {
    d->exception = std::current_exception();
    d->exception_t = t;
    std::copy(c, c + n, d->exception_x.begin());
    return -1;
  }
  for (int i = 0; i < n; ++i) c[i] = x[i] - c[i];
  return 0;
}

void CvodeErrHandler(int error_code, const char* module, const char* function,
                     char* msg, void* user_data) noexcept {
  auto* d = static_cast<CallbackData*>(user_data);
  // CVODE has no relative minimum step: with hmin = 0 (the default) it keeps
  // stepping with t + h == t, warning only, until the step budget runs out
  // (e.g. when the rhs is NaN beyond some time and every trial step past it
  // is rejected). Stop at the first such warning instead, as ode45 stops at
  // h < 16 eps(t).
  if (error_code == CV_WARNING && msg != nullptr &&
      std::strstr(msg, "t + h = t") != nullptr)
    d->stalled = true;
  try {
    std::string text = fmt::format("{} ({}): {}", function ? function : "?",
                                   module ? module : "CVODE", msg ? msg : "");
    if (error_code == CV_WARNING)
      d->last_warning = std::move(text);
    else
      d->last_error = std::move(text);
  } catch (...) {
    // Out of memory while formatting a message: drop the message.
  }
}

// ---- Failure wording --------------------------------------------------------

std::string FlagName(int flag) {
  char* name = CVodeGetReturnFlagName(flag);  // malloc'ed by SUNDIALS
  std::string s = name ? name : fmt::format("flag {}", flag);
  std::free(name);
  return s;
}

struct Explanation {
  std::string reason;
  std::string hint;
};

Explanation Explain(int flag, const SolverOptions& options) {
  switch (flag) {
    case CV_TOO_MUCH_WORK:
      return {fmt::format("the step budget max_steps = {} is exhausted",
                          options.max_steps),
              "increase max_steps, or check the model for very fast "
              "oscillations or chattering"};
    case CV_TOO_MUCH_ACC:
      return {"the requested accuracy is beyond double precision here",
              "loosen the tolerances (rtol, atol)"};
    case CV_ERR_FAILURE:
      return {"the local error test failed repeatedly or with |h| = hmin",
              "the solution may be singular or discontinuous near this time: "
              "check the model; or loosen the tolerances"};
    case CV_CONV_FAILURE:
      return {"the Newton iteration failed to converge repeatedly or with "
              "|h| = hmin",
              "the Jacobian may be singular or the model discontinuous near "
              "this time: check the model"};
    case CV_LSETUP_FAIL:
    case CV_LSOLVE_FAIL:
      return {"the dense linear solver failed (singular iteration matrix)",
              "the model may have a structural singularity near this time"};
    case CV_RHSFUNC_FAIL:
      return {"the right-hand side failed unrecoverably", ""};
    case CV_FIRST_RHSFUNC_ERR:
      return {"the right-hand side failed at the initial state",
              "check the initial conditions and parameters"};
    case CV_REPTD_RHSFUNC_ERR:
    case CV_UNREC_RHSFUNC_ERR:
      return {"the right-hand side failed repeatedly and reducing the step "
              "did not help",
              "check the model for divisions by zero or functions evaluated "
              "outside their domain (sqrt, log of a negative state, ...)"};
    case CV_TOO_CLOSE:
      return {"the first output time is too close to t0",
              "increase dt_out"};
    default:
      return {"CVODE failed", "this may be a bug in paynter: please report it"};
  }
}

}  // namespace

SolverStats IntegrateCvode(const OdeProblem& problem,
                           const std::vector<double>& x0,
                           const SolverOptions& options,
                           const Observer& observer, Progress& progress) {
  const int n = problem.n;
  CallbackData data;
  data.problem = &problem;
  data.progress = &progress;
  data.exception_x.resize(n);

  // Setup failures (bad arguments, out of memory) are not the model's fault.
  auto check = [&data](int flag, const char* call) {
    if (flag < 0) {
      ThrowAt({}, "",
              fmt::format("CVODE setup failed: {} returned {}{}", call, FlagName(flag),
                          data.last_error.empty() ? "" : ": " + data.last_error),
              "", "", "this may be a bug in paynter: please report it");
    }
  };
  auto check_ptr = [&check](const void* p, const char* call) {
    if (p == nullptr) check(CV_MEM_FAIL, call);
  };

  SUNContext raw_ctx = nullptr;
  check(SUNContext_Create(nullptr, &raw_ctx), "SUNContext_Create");
  ContextPtr ctx(raw_ctx);

  VectorPtr y(N_VNew_Serial(n, ctx.get()));
  check_ptr(y.get(), "N_VNew_Serial");
  std::copy(x0.begin(), x0.end(), N_VGetArrayPointer(y.get()));

  MatrixPtr jac(SUNDenseMatrix(n, n, ctx.get()));
  check_ptr(jac.get(), "SUNDenseMatrix");
  LinSolPtr linsol(SUNLinSol_Dense(y.get(), jac.get(), ctx.get()));
  check_ptr(linsol.get(), "SUNLinSol_Dense");

  CvodePtr mem(CVodeCreate(CV_BDF, ctx.get()));
  check_ptr(mem.get(), "CVodeCreate");
  void* cv = mem.get();
  // First, so that no message of CVODE's reaches stderr.
  check(CVodeSetErrHandlerFn(cv, CvodeErrHandler, &data), "CVodeSetErrHandlerFn");
  check(CVodeInit(cv, CvodeRhs, options.t0, y.get()), "CVodeInit");
  check(CVodeSetUserData(cv, &data), "CVodeSetUserData");
  check(CVodeSStolerances(cv, options.rtol, options.atol), "CVodeSStolerances");
  // Newton iteration is CVODE's default nonlinear solver; with no Jacobian
  // function set, the dense linear solver uses difference quotients.
  check(CVodeSetLinearSolver(cv, linsol.get(), jac.get()), "CVodeSetLinearSolver");
  check(CVodeSetStopTime(cv, options.t_end), "CVodeSetStopTime");
  if (problem.project) {
    check(CVodeSetProjFn(cv, CvodeProject), "CVodeSetProjFn");
    check(CVodeSetProjErrEst(cv, SUNFALSE), "CVodeSetProjErrEst");
  }
  if (options.initial_step > 0)
    check(CVodeSetInitStep(cv, options.initial_step), "CVodeSetInitStep");
  if (options.max_step > 0)
    check(CVodeSetMaxStep(cv, options.max_step), "CVodeSetMaxStep");

  EventLocator events(problem, Method::kBDF);
  std::vector<int> roots_found(problem.num_events);
  long num_events = 0;
  if (events.active()) {
    check(CVodeRootInit(cv, problem.num_events, CvodeRoots), "CVodeRootInit");
    if (!problem.event_direction.empty()) {
      std::vector<int> dir(problem.event_direction);
      check(CVodeSetRootDirection(cv, dir.data()), "CVodeSetRootDirection");
    }
    check(CVodeSetNoInactiveRootWarn(cv), "CVodeSetNoInactiveRootWarn");
    // As dopri5: steps no longer than the output interval (docs/events.md).
    const double h = options.max_step > 0 ? std::min(options.max_step, EffectiveDtOut(options)) : EffectiveDtOut(options);
    check(CVodeSetMaxStep(cv, h), "CVodeSetMaxStep");
  }

  double* yv = N_VGetArrayPointer(y.get());
  observer(options.t0, yv);

  double t_prev = options.t0;
  StepForecast forecast(options);
  long steps_before = 0;  // steps before the last CVodeReInit (an event)
  for (OutputGrid grid(options);;) {
    const double tout = grid.next();
    // CVODE's step limit is per call (default 500 per output interval, which
    // a long interval can exceed spuriously): give each call the whole
    // remaining budget instead.
    // The call also returns after a window of the step forecast, which
    // then checks the pace (StepForecast).
    long nst = 0;
    check(CVodeGetNumSteps(cv, &nst), "CVodeGetNumSteps");
    const long left = options.max_steps - nst, chunk = std::min(left, StepForecast::kWindow);
    check(CVodeSetMaxNumSteps(cv, std::max(1L, chunk)), "CVodeSetMaxNumSteps");

    data.nonfinite = false;
    data.last_error.clear();
    // On a failure before the first step CVODE leaves tret and y alone; y
    // then still holds the state at t_prev.
    sunrealtype tret = t_prev;
    const int flag = CVode(cv, tout, y.get(), &tret, CV_NORMAL);
    check(CVodeGetNumSteps(cv, &nst), "CVodeGetNumSteps");
    if (flag == CV_TOO_MUCH_WORK && chunk < left && !data.exception) {
      forecast.Check(problem, Method::kBDF, steps_before + nst, tret, yv);
      progress.Update(tret);
      t_prev = tret;
      continue;  // on towards the same output time
    }
    if (flag >= 0) forecast.Check(problem, Method::kBDF, steps_before + nst, tret, yv);
    if (flag == CV_ROOT_RETURN) {
      // An event at tret (CVODE's root finding): handle it, restart there,
      // and go on towards the same output time.
      check(CVodeGetRootInfo(cv, roots_found.data()), "CVodeGetRootInfo");
      if (events.Handle(tret, yv, &num_events, roots_found.data())) break;
      steps_before += nst;  // CVodeReInit counts afresh
      check(CVodeReInit(cv, tret, y.get()), "CVodeReInit");
      check(CVodeSetStopTime(cv, options.t_end), "CVodeSetStopTime");
      t_prev = tret;
      if (tret >= options.t_end) break;
      if (tret < tout) continue;  // the same output time next
      if (grid.next_is_end()) break;
      grid.Advance();
      continue;
    }
    if (flag < 0) {
      if (data.exception) {
        try {
          std::rethrow_exception(data.exception);
        } catch (const Error& e) {
          RethrowRhsError(e, problem, Method::kBDF, data.exception_t,
                          data.exception_x.data());
        }
        // Not a paynter::Error: it propagates unchanged.
      }
      Explanation why;
      std::string reason;
      if (data.stalled) {
        // The failure was forced by CvodeRhs; CVODE's own message about an
        // unrecoverable rhs failure would only mislead.
        why.hint =
            "the solution may be singular or discontinuous near this time "
            "(check the model), or the tolerances may be too tight";
        reason = "step size too small: t + h == t in double precision";
      } else {
        why = Explain(flag, options);
        reason = fmt::format("{} ({})", why.reason, FlagName(flag));
      }
      if (data.nonfinite) {
        std::vector<double> dx(n, 0.0);
        dx[data.nonfinite_index] = data.nonfinite_value;
        reason += "; " + DescribeNonFinite(problem, data.nonfinite_t, dx.data(),
                                           data.nonfinite_index);
      }
      if (!data.last_error.empty() && !data.stalled)
        reason += "\n  cvode:    " + data.last_error;
      if (!data.last_warning.empty())
        reason += "\n  warning:  " + data.last_warning;
      ThrowFailure(problem, Method::kBDF, tret, yv, reason, why.hint);
    }
    // tret == tout here (interpolated, or exactly t_end at the stop time);
    // report the grid time itself so the times are exact.
    observer(tout, yv);
    progress.Update(tout);
    t_prev = tout;
    if (grid.next_is_end()) break;
    grid.Advance();
  }

  SolverStats stats;
  long netf = 0, ncfn = 0, nfe = 0, nfe_ls = 0, nje = 0;
  check(CVodeGetNumSteps(cv, &stats.steps), "CVodeGetNumSteps");
  check(CVodeGetNumErrTestFails(cv, &netf), "CVodeGetNumErrTestFails");
  check(CVodeGetNumNonlinSolvConvFails(cv, &ncfn),
        "CVodeGetNumNonlinSolvConvFails");
  check(CVodeGetNumRhsEvals(cv, &nfe), "CVodeGetNumRhsEvals");
  check(CVodeGetNumLinRhsEvals(cv, &nfe_ls), "CVodeGetNumLinRhsEvals");
  check(CVodeGetNumJacEvals(cv, &nje), "CVodeGetNumJacEvals");
  stats.rejected = netf + ncfn;
  if (problem.project) check(CVodeGetNumProjEvals(cv, &stats.projections), "CVodeGetNumProjEvals");
  stats.rhs_evals = nfe + nfe_ls;
  stats.jac_evals = nje;
  stats.events = num_events;
  return stats;
}

}  // namespace paynter::internal
