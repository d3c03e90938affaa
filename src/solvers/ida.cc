// src/solvers/ida.cc — differential-algebraic equations F(t, y, y') = 0 with
// SUNDIALS 6 IDA: variable-order BDF, Newton iteration, dense direct linear
// solver with IDA's difference-quotient Jacobian.
//
// Algebraic variables (DaeProblem::differential[i] == 0) are left out of the
// error test (IDASetSuppressAlg), as an index-2 system needs. Outputs come
// from IDA's interpolation at each output time; IDASetStopTime(t_end) keeps
// it from stepping past the end. As in cvode.cc, nothing unwinds through C:
// an exception from the residual is stored and rethrown after IDASolve.
#include <fmt/format.h>
#include <ida/ida.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "event_locator.h"
#include "integrator.h"

namespace paynter {
namespace {

struct Owned {
  SUNContext ctx = nullptr;
  N_Vector y = nullptr, yp = nullptr, id = nullptr, atol = nullptr;
  SUNMatrix a = nullptr;
  SUNLinearSolver ls = nullptr;
  void* mem = nullptr;
  ~Owned() {
    if (mem) IDAFree(&mem);
    if (ls) SUNLinSolFree(ls);
    if (a) SUNMatDestroy(a);
    for (N_Vector v : {y, yp, id, atol})
      if (v) N_VDestroy(v);
    if (ctx) SUNContext_Free(&ctx);
  }
};

struct Data {
  const DaeProblem* problem = nullptr;
  std::exception_ptr exception;
  double exception_t = 0;
  std::string last_error;
};

int Residual(sunrealtype t, N_Vector y, N_Vector yp, N_Vector r, void* user) noexcept {
  auto* d = static_cast<Data*>(user);
  try {
    d->problem->residual(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yp), N_VGetArrayPointer(r));
  } catch (...) {
    d->exception = std::current_exception();
    d->exception_t = t;
    return -1;
  }
  const double* rv = N_VGetArrayPointer(r);
  for (int i = 0; i < d->problem->n; ++i)
    if (!std::isfinite(rv[i])) return 1;  // recoverable: a smaller step
  return 0;
}

// dF/dy by central differences, + c_j dF/dy' by forward differences (dF/dy'
// is usually constant). Increments scaled by the variables' sizes.
int CentralJacobian(sunrealtype t, sunrealtype cj, N_Vector y, N_Vector yp, N_Vector, SUNMatrix J, void* user,
                    N_Vector, N_Vector, N_Vector) noexcept {
  auto* d = static_cast<Data*>(user);
  const DaeProblem& p = *d->problem;
  const int n = p.n;
  std::vector<double> yy(N_VGetArrayPointer(y), N_VGetArrayPointer(y) + n);
  std::vector<double> pp(N_VGetArrayPointer(yp), N_VGetArrayPointer(yp) + n);
  std::vector<double> r1(n), r2(n), r0(n);
  try {
    p.residual(t, yy.data(), pp.data(), r0.data());
    for (int j = 0; j < n; ++j) {
      const double h = 1e-6 * std::max(std::fabs(yy[j]), p.atol.empty() ? 1e-3 : std::max(p.atol[j] * 1e3, 1e-6));
      const double save = yy[j];
      yy[j] = save + h;
      p.residual(t, yy.data(), pp.data(), r1.data());
      yy[j] = save - h;
      p.residual(t, yy.data(), pp.data(), r2.data());
      yy[j] = save;
      double* col = SUNDenseMatrix_Column(J, j);
      for (int i = 0; i < n; ++i) col[i] = (r1[i] - r2[i]) / (2 * h);
      if (p.differential[j]) {
        const double hp = 1e-6 * std::max(1.0, std::fabs(pp[j]));
        pp[j] += hp;
        p.residual(t, yy.data(), pp.data(), r1.data());
        pp[j] -= hp;
        for (int i = 0; i < n; ++i) col[i] += cj * (r1[i] - r0[i]) / hp;
      }
    }
  } catch (...) {
    d->exception = std::current_exception();
    d->exception_t = t;
    return -1;
  }
  return 0;
}

int Roots(sunrealtype t, N_Vector y, N_Vector yp, sunrealtype* g, void* user) noexcept {
  auto* d = static_cast<Data*>(user);
  try {
    d->problem->indicators(t, N_VGetArrayPointer(y), N_VGetArrayPointer(yp), g);
  } catch (...) {
    d->exception = std::current_exception();
    d->exception_t = t;
    return -1;
  }
  return 0;
}

void ErrHandler(int code, const char*, const char* function, char* msg, void* user) noexcept {
  auto* d = static_cast<Data*>(user);
  if (code < 0 && msg) d->last_error = fmt::format("{}: {}", function ? function : "IDA", msg);
}

}  // namespace

SolverStats IntegrateDae(const DaeProblem& problem, const std::vector<double>& y0, const std::vector<double>& yp0,
                         const SolverOptions& options, const Observer& observer) {
  options.Validate();
  const int n = problem.n;
  if (n < 1 || static_cast<int>(y0.size()) != n || static_cast<int>(yp0.size()) != n ||
      static_cast<int>(problem.differential.size()) != n || !problem.residual) {
    ThrowAt({}, "", "IntegrateDae: the problem is malformed",
            fmt::format("n >= 1, y0, yp0 and differential of size n, a residual"),
            fmt::format("n = {}, sizes {}, {}, {}", n, y0.size(), yp0.size(), problem.differential.size()),
            "this is a bug in the caller");
  }
  Data data;
  data.problem = &problem;
  Owned o;
  auto check = [&](int flag, const char* call) {
    if (flag < 0) {
      ThrowAt({}, "",
              fmt::format("IDA setup failed: {} returned {}{}", call, flag,
                          data.last_error.empty() ? "" : ": " + data.last_error),
              "", "", "this may be a bug in paynter: please report it");
    }
  };
  check(SUNContext_Create(nullptr, &o.ctx), "SUNContext_Create");
  o.y = N_VNew_Serial(n, o.ctx);
  o.yp = N_VNew_Serial(n, o.ctx);
  o.id = N_VNew_Serial(n, o.ctx);
  if (!o.y || !o.yp || !o.id) check(-20, "N_VNew_Serial");
  std::copy(y0.begin(), y0.end(), N_VGetArrayPointer(o.y));
  std::copy(yp0.begin(), yp0.end(), N_VGetArrayPointer(o.yp));
  for (int i = 0; i < n; ++i) N_VGetArrayPointer(o.id)[i] = problem.differential[i] ? 1.0 : 0.0;
  o.a = SUNDenseMatrix(n, n, o.ctx);
  o.ls = SUNLinSol_Dense(o.y, o.a, o.ctx);
  o.mem = IDACreate(o.ctx);
  if (!o.a || !o.ls || !o.mem) check(-20, "IDACreate");
  void* ida = o.mem;
  check(IDASetErrHandlerFn(ida, ErrHandler, &data), "IDASetErrHandlerFn");
  check(IDAInit(ida, Residual, options.t0, o.y, o.yp), "IDAInit");
  check(IDASetUserData(ida, &data), "IDASetUserData");
  if (problem.atol.empty()) {
    check(IDASStolerances(ida, options.rtol, options.atol), "IDASStolerances");
  } else {
    o.atol = N_VNew_Serial(n, o.ctx);
    if (!o.atol) check(-20, "N_VNew_Serial");
    for (int i = 0; i < n; ++i) N_VGetArrayPointer(o.atol)[i] = problem.atol[i];
    check(IDASVtolerances(ida, options.rtol, o.atol), "IDASVtolerances");
  }
  check(IDASetMaxNonlinIters(ida, 8), "IDASetMaxNonlinIters");
  check(IDASetLinearSolver(ida, o.ls, o.a), "IDASetLinearSolver");
  check(IDASetId(ida, o.id), "IDASetId");
  if (problem.central_differences) check(IDASetJacFn(ida, CentralJacobian), "IDASetJacFn");
  check(IDASetSuppressAlg(ida, SUNTRUE), "IDASetSuppressAlg");
  check(IDASetStopTime(ida, options.t_end), "IDASetStopTime");
  if (options.max_step > 0) check(IDASetMaxStep(ida, options.max_step), "IDASetMaxStep");
  if (options.initial_step > 0) check(IDASetInitStep(ida, options.initial_step), "IDASetInitStep");

  const bool with_events = problem.num_events > 0 && problem.indicators && problem.on_event;
  std::vector<int> roots_found(with_events ? problem.num_events : 0);
  long num_events = 0, burst = 0;
  double last_event = 0;
  if (with_events) {
    check(IDARootInit(ida, problem.num_events, Roots), "IDARootInit");
    if (!problem.event_direction.empty()) {
      std::vector<int> dir(problem.event_direction);
      check(IDASetRootDirection(ida, dir.data()), "IDASetRootDirection");
    }
    check(IDASetNoInactiveRootWarn(ida), "IDASetNoInactiveRootWarn");
    const double dt = internal::EffectiveDtOut(options);
    check(IDASetMaxStep(ida, options.max_step > 0 ? std::min(options.max_step, dt) : dt), "IDASetMaxStep");
  }

  double* yv = N_VGetArrayPointer(o.y);
  internal::Progress progress(options);
  observer(options.t0, yv);
  for (internal::OutputGrid grid(options);;) {
    const double tout = grid.next();
    long nst = 0;
    check(IDAGetNumSteps(ida, &nst), "IDAGetNumSteps");
    check(IDASetMaxNumSteps(ida, std::max(1L, options.max_steps - nst)), "IDASetMaxNumSteps");
    data.last_error.clear();
    sunrealtype tret = options.t0;
    const int flag = IDASolve(ida, tout, &tret, o.y, o.yp, IDA_NORMAL);
    if (flag == IDA_ROOT_RETURN) {
      check(IDAGetRootInfo(ida, roots_found.data()), "IDAGetRootInfo");
      if (num_events > 0 && tret - last_event <= 64 * 2.2e-16 * std::max(1.0, std::fabs(tret))) {
        if (++burst > internal::kMaxEventBurst) {
          ThrowAt({}, "",
                  fmt::format("ida failed at t = {}: more than {} events without time advancing", tret,
                              internal::kMaxEventBurst),
                  "", "",
                  "an event's reset may leave its own condition true, or events accumulate here (a Zeno point)");
        }
      } else {
        burst = 0;
      }
      last_event = tret;
      ++num_events;
      if (problem.on_event(tret, yv, N_VGetArrayPointer(o.yp), roots_found.data())) break;
      check(IDAReInit(ida, tret, o.y, o.yp), "IDAReInit");
      check(IDASetStopTime(ida, options.t_end), "IDASetStopTime");
      if (tret >= options.t_end) break;
      if (tret < tout) continue;
      if (grid.next_is_end()) break;
      grid.Advance();
      continue;
    }
    if (flag < 0) {
      if (data.exception) std::rethrow_exception(data.exception);
      std::string state;
      for (int i = 0; i < n && i < 50; ++i)
        state += fmt::format("{}{} = {}", i ? "\n            " : "",
                             i < static_cast<int>(problem.names.size()) ? problem.names[i] : fmt::format("y[{}]", i),
                             yv[i]);
      ThrowAt({}, "",
              fmt::format("ida failed at t = {}: IDASolve returned {}{}", tret, flag,
                          data.last_error.empty() ? "" : " (" + data.last_error + ")"),
              "", state,
              flag == IDA_CONV_FAIL || flag == IDA_LSETUP_FAIL || flag == IDA_LSOLVE_FAIL
                  ? "the DAE's Newton iteration failed: the constraints may have become singular (a singular "
                    "configuration of the mechanism) or the start may be inconsistent"
                  : "try other tolerances, or another method");
    }
    observer(tout, yv);
    progress.Update(tout);
    if (grid.next_is_end()) break;
    grid.Advance();
  }
  SolverStats stats;
  long netf = 0, ncfn = 0, nre = 0, nreLS = 0, nje = 0;
  check(IDAGetNumSteps(ida, &stats.steps), "IDAGetNumSteps");
  check(IDAGetNumErrTestFails(ida, &netf), "IDAGetNumErrTestFails");
  check(IDAGetNumNonlinSolvConvFails(ida, &ncfn), "IDAGetNumNonlinSolvConvFails");
  check(IDAGetNumResEvals(ida, &nre), "IDAGetNumResEvals");
  check(IDAGetNumLinResEvals(ida, &nreLS), "IDAGetNumLinResEvals");
  check(IDAGetNumJacEvals(ida, &nje), "IDAGetNumJacEvals");
  stats.rejected = netf + ncfn;
  stats.rhs_evals = nre + nreLS;
  stats.jac_evals = nje;
  stats.events = num_events;
  return stats;
}

}  // namespace paynter
