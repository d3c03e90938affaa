/* pn_core.c: the core of the runtime every FMU paynter exports, the same for
   every model and for both interfaces (fmu.c: FMI 2.0, fmu3.c: FMI 3.0; see
   pn_core.h); src/fmi/runtime/pn_core.c in paynter's sources, embedded into
   paynter by the build and written into each FMU's sources/. It holds the
   calling sequence's states, the Newton solver of implicit blocks, the event
   handling (modes, events with resets, switched elements; docs/events.md),
   the variables' access and the co-simulation integrators, Dormand-Prince
   5(4) and classical Runge-Kutta, whose coefficients pn_butcher.h gives from
   the solvers' own tables. The model's sizes, tables and programs come from
   the generated model.h and model.c (fmu_model.h says what they hold).
   Plain C99. */
#include "pn_core.h"
#include "pn_illinois.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* events: rounds of bringing the modes in line with the state; events in a row
   without time advancing before the run is stopped as chattering */
#define PN_SETTLE_ROUNDS 20
#define PN_MAX_EVENT_BURST 100
/* A Zeno point, as paynter's simulate tells it (src/simulation/events.h): an
   event that fires PN_ZENO_FIRINGS times in a row, each interval at most
   PN_ZENO_RATIO of the one before, or PN_ZENO_GEOMETRIC times in a row with
   intervals shrinking by the same ratio (to PN_ZENO_SAME_RATIO of it) */
#define PN_ZENO_FIRINGS 20
#define PN_ZENO_GEOMETRIC 5
#define PN_ZENO_RATIO 0.95
#define PN_ZENO_SAME_RATIO 0.1

void pn_log(PnInstance* m, int status, int category, const char* format, ...) {
  char text[600];
  va_list ap;
  if (!m || !m->emit) return;
  va_start(ap, format);
  vsnprintf(text, sizeof text, format, ap);
  va_end(ap);
  m->emit(m, status, category, text);
}

const char* pn_state_name(const PnInstance* m, int state) {
  switch (state) {
    case PN_INSTANTIATED: return "instantiated";
    case PN_INIT: return "initialization mode";
    case PN_EVENT: return "event mode";
    case PN_CONT: return "continuous-time mode";
    case PN_STEP_COMPLETE: return m->version == 3 ? "step mode" : "step complete";
    case PN_TERMINATED: return "terminated";
    default: return m->version == 3 ? "terminated after an error" : "error";
  }
}

/* Checks the instance and that `fn` may be called in its state. */
int pn_allowed(PnInstance* m, const char* fn, int states) {
  if (!m) return 0;
  if (m->state & states) return 1;
  pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s may not be called in %s", fn, pn_state_name(m, m->state));
  return 0;
}

int pn_is_kind(PnInstance* m, const char* fn, int kind) {
  if (m->kind == kind) return 1;
  pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s is a %s function; this instance is for %s", fn,
         kind == PN_ME ? "model exchange" : "co-simulation", m->kind == PN_ME ? "model exchange" : "co-simulation");
  return 0;
}

/* The prefix of the interface's functions, for messages. */
static const char* pn_api(const PnInstance* m) { return m->version == 3 ? "fmi3" : "fmi2"; }

int pn_unsupported(PnInstance* m, const char* fn) {
  if (m) pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s is not supported by this FMU (see its capability flags)", fn);
  return 1;
}

int pn_check_array(PnInstance* m, const char* fn, size_t nvr, const void* vr, const void* value) {
  if (nvr > 0 && (!vr || !value)) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: NULL array for %u values", fn, (unsigned)nvr);
    return 1;
  }
  return 0;
}


static void pn_invalidate(PnInstance* m) { m->rhs_valid = m->out_valid = m->evt_valid = 0; }

/* ---- implicit blocks: Newton's method with a dense LU (partial pivoting) ---- */

static double pn_inf_norm(const double* v, int n) {
  double x = 0;
  int i;
  for (i = 0; i < n; ++i) {
    const double a = fabs(v[i]);
    if (!(a <= x)) x = a; /* NaN propagates */
  }
  return x;
}

/* Factors the n x n column-major J in place; 0 when singular. */
static int pn_lu(double* J, int* piv, int n) {
  int i, j, k;
  for (k = 0; k < n; ++k) {
    int p = k;
    double best = fabs(J[k + k * n]);
    for (i = k + 1; i < n; ++i)
      if (fabs(J[i + k * n]) > best) best = fabs(J[i + k * n]), p = i;
    if (!(best > 0)) return 0;
    piv[k] = p;
    if (p != k)
      for (j = 0; j < n; ++j) {
        const double t = J[k + j * n];
        J[k + j * n] = J[p + j * n];
        J[p + j * n] = t;
      }
    for (i = k + 1; i < n; ++i) {
      const double l = J[i + k * n] / J[k + k * n];
      J[i + k * n] = l;
      for (j = k + 1; j < n; ++j) J[i + j * n] -= l * J[k + j * n];
    }
  }
  return 1;
}

/* Solves (LU) x = b in place. */
static void pn_lu_solve(const double* LU, const int* piv, int n, double* b) {
  int i, j;
  for (i = 0; i < n; ++i) {
    const int p = piv[i];
    if (p != i) {
      const double t = b[i];
      b[i] = b[p];
      b[p] = t;
    }
    for (j = 0; j < i; ++j) b[i] -= LU[i + j * n] * b[j];
  }
  for (i = n - 1; i >= 0; --i) {
    for (j = i + 1; j < n; ++j) b[i] -= LU[i + j * n] * b[j];
    b[i] /= LU[i + i * n];
  }
}

static void pn_residual(const PnBlock* b, double* s, double* w, double* r) {
  int k;
  for (k = 0; k < b->num_residual_fns; ++k) b->residual_fns[k](s, w, r);
}

/* The dense Jacobian from its structural non-zeros; its max row sum in *norm. */
static void pn_jacobian(const PnBlock* b, double* s, double* w, PnSolver* ns, double* norm) {
  const int n = b->n;
  int k, i;
  for (k = 0; k < b->num_jacobian_fns; ++k) b->jacobian_fns[k](s, w, ns->jv);
  for (k = 0; k < n * n; ++k) ns->J[k] = 0;
  for (k = 0; k < b->nnz; ++k) ns->J[b->nz[k]] = ns->jv[k];
  *norm = 0;
  for (i = 0; i < n; ++i) {
    double row = 0;
    for (k = 0; k < n; ++k) row += fabs(ns->J[i + k * n]);
    if (!(row <= *norm)) *norm = row;
  }
}

static void pn_store(const PnBlock* b, double* s, const double* u) {
  int j;
  for (j = 0; j < b->n; ++j) s[b->unknowns[j]] = u[j];
}

/* Solves block b for its unknowns (their slots hold the starting guess); the
   last residual evaluation is at the solution. 0 on success. */
int pn_solve_block(const PnBlock* b, double* s, double* w, PnSolver* ns) {
  const int n = b->n;
  const double tol = 1e-12;
  double rnorm, jnorm, step = 0;
  int j, it;
  for (j = 0; j < n; ++j) ns->u[j] = s[b->unknowns[j]];
  pn_residual(b, s, w, ns->r);
  rnorm = pn_inf_norm(ns->r, n);
  if (!isfinite(rnorm)) return 1;
  if (b->linear) {
    double u0 = pn_inf_norm(ns->u, n), r1;
    pn_jacobian(b, s, w, ns, &jnorm);
    if (!pn_lu(ns->J, ns->piv, n)) return 1;
    for (j = 0; j < n; ++j) ns->du[j] = ns->r[j];
    pn_lu_solve(ns->J, ns->piv, n, ns->du);
    for (j = 0; j < n; ++j) ns->u[j] -= ns->du[j];
    pn_store(b, s, ns->u);
    pn_residual(b, s, w, ns->r);
    r1 = pn_inf_norm(ns->r, n);
    return !(r1 <= 1e-8 * (1 + jnorm * (u0 + pn_inf_norm(ns->u, n)) + rnorm));
  }
  if (rnorm == 0) return 0;
  for (it = 1; it <= 50; ++it) {
    double lambda = 1, rnew = 0, ustart, unorm;
    int ls;
    pn_jacobian(b, s, w, ns, &jnorm);
    if (!pn_lu(ns->J, ns->piv, n)) return 1;
    for (j = 0; j < n; ++j) ns->du[j] = ns->r[j];
    pn_lu_solve(ns->J, ns->piv, n, ns->du);
    step = pn_inf_norm(ns->du, n);
    for (j = 0; j < n; ++j) ns->u_old[j] = ns->u[j];
    ustart = pn_inf_norm(ns->u, n);
    /* Backtracking: halve the step until the residual decreases (Armijo). */
    for (ls = 0;; ++ls) {
      for (j = 0; j < n; ++j) ns->u[j] = ns->u_old[j] - lambda * ns->du[j];
      pn_store(b, s, ns->u);
      pn_residual(b, s, w, ns->r);
      rnew = pn_inf_norm(ns->r, n);
      if (isfinite(rnew) && (rnew <= (1 - 1e-4 * lambda) * rnorm || lambda * step <= tol * (1 + ustart))) break;
      if (ls == 12) {
        if (!isfinite(rnew)) return 1;
        break;
      }
      lambda *= 0.5;
    }
    rnorm = rnew;
    unorm = pn_inf_norm(ns->u, n);
    if (lambda * step <= tol * (1 + unorm) && rnorm <= 1e3 * tol * jnorm * (1 + unorm)) return !isfinite(unorm);
  }
  return 1;
}

/* ---- evaluations ---- */

static const char* pn_failure(int rc) {
  return rc == 1 ? "a computed value is NaN or Inf" : "an implicit block could not be solved (singular or no convergence)";
}

static int pn_eval_rhs(PnInstance* m) {
  int rc;
  if (m->rhs_valid) return 0;
  rc = pn_run_rhs(m->s, m->w_rhs, &m->ns);
  if (rc) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "the right-hand side failed at t = %.17g: %s", m->s[0], pn_failure(rc));
    return rc;
  }
  m->rhs_valid = 1;
  return 0;
}

static int pn_eval_outputs(PnInstance* m) {
  int rc;
  if (m->out_valid) return 0;
  if (PN_OUTPUTS_AFTER_RHS && pn_eval_rhs(m)) return 1;
  rc = pn_run_outputs(m->s, m->w_out, &m->ns);
  if (rc) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "the outputs failed at t = %.17g: %s", m->s[0], pn_failure(rc));
    return rc;
  }
  m->out_valid = 1;
  return 0;
}

/* Puts the instance at (t, x). */
static void pn_set_point(PnInstance* m, double t, const double* x) {
  int i;
  m->s[0] = t;
  for (i = 0; i < PN_NUM_STATES; ++i) m->s[PN_FIRST_STATE + i] = x[i];
  pn_invalidate(m);
}

/* dx/dt at (t, x) for the co-simulation integrators; 0 on success. */
static int pn_f(PnInstance* m, double t, const double* x, double* dx) {
  int i;
  pn_set_point(m, t, x);
  if (pn_eval_rhs(m)) return 1;
  for (i = 0; i < PN_NUM_STATES; ++i) {
    dx[i] = m->s[PN_FIRST_DERIVATIVE + i];
    if (!isfinite(dx[i])) return 1;
  }
  return 0;
}

/* The calculated parameters from the others; 0 on success. */
static int pn_eval_parameters(PnInstance* m) {
  const int rc = pn_run_parameters(m->s, m->w_par, &m->ns);
  if (rc) pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "the calculated parameters failed: %s", pn_failure(rc));
  pn_invalidate(m);
  return rc;
}

/* No event has fired yet (the Zeno rule starts afresh). */
static void pn_clear_firings(PnInstance* m) {
  int i;
  for (i = 0; i < PN_DIM(PN_NUM_EVENTS); ++i) {
    m->firings[i].last = 0;
    m->firings[i].interval = -1;
    m->firings[i].ratio = 0;
    m->firings[i].shrinking = m->firings[i].geometric = 0;
    m->firings[i].count = 0;
  }
}

void pn_reset_values(PnInstance* m) {
  memcpy(m->s, pn_slot_start, sizeof m->s);
  memset(m->w_rhs, 0, sizeof m->w_rhs);
  memset(m->w_out, 0, sizeof m->w_out);
  memset(m->w_par, 0, sizeof m->w_par);
  memset(m->w_evt, 0, sizeof m->w_evt);
  pn_eval_parameters(m); /* the values of the export: cannot fail */
  m->rtol = PN_RTOL;
  m->atol = PN_ATOL;
  m->h = 0;
  memset(m->sign, 0, sizeof m->sign);
  memset(m->crossed, 0, sizeof m->crossed);
  m->events = 0;
  m->last_event_t = 0;
  m->burst = 0;
  pn_clear_firings(m);
  m->stopped = 0;
  m->stop_time = HUGE_VAL;
}

/* ---- events (docs/events.md): the model's conditions, events and switched
   elements, handled as paynter's simulate handles them ---- */

/* The indicators and reset values at the instance's point; 0 on success. */
static int pn_eval_events(PnInstance* m) {
  int rc;
  if (m->evt_valid) return 0;
  if (pn_eval_rhs(m)) return 1;
  rc = pn_run_events(m->s, m->w_evt, &m->ns);
  if (rc) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "the event indicators failed at t = %.17g: %s", m->s[0], pn_failure(rc));
    return rc;
  }
  m->evt_valid = 1;
  return 0;
}

static int pn_indicator_slot(int i) {
  if (i < PN_NUM_MODES) return pn_modes[i].indicator;
  i -= PN_NUM_MODES;
  if (i < PN_NUM_EVENTS) return pn_events[i].indicator;
  i -= PN_NUM_EVENTS;
  return pn_switches[i / 2].indicator[i % 2];
}

/* The direction of a crossing that counts: events fire upwards only. */
static int pn_direction(int i) { return i >= PN_NUM_MODES && i < PN_NUM_MODES + PN_NUM_EVENTS ? 1 : 0; }

static int pn_sign(double v) { return v > 0 ? 1 : (v < 0 ? -1 : 0); }

/* The indicators at the instance's point into g; 0 on success. */
static int pn_indicators(PnInstance* m, double* g) {
  int i;
  if (pn_eval_events(m)) return 1;
  for (i = 0; i < PN_NUM_INDICATORS; ++i) {
    g[i] = m->s[pn_indicator_slot(i)];
    if (!isfinite(g[i])) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
             "event indicator %d is %g at t = %.17g: an event condition is evaluated outside the domain of its "
             "expression",
             i + 1, g[i], m->s[0]);
      return 1;
    }
  }
  return 0;
}

static void pn_set_mode(PnInstance* m, int slot, double v) {
  if (m->s[slot] == v) return;
  m->s[slot] = v;
  pn_invalidate(m);
}

static void pn_get_modes(const PnInstance* m, double* v) {
  int i, k = 0;
  for (i = 0; i < PN_NUM_MODES; ++i) v[k++] = m->s[pn_modes[i].slot];
  for (i = 0; i < PN_NUM_SWITCHES; ++i) {
    v[k++] = m->s[pn_switches[i].held];
    v[k++] = m->s[pn_switches[i].direction];
  }
  (void)k;
}

/* Brings the conditions' modes in line with their indicators' signs (an
   indicator at zero keeps its mode: the crossing decided); switched elements
   change at their own events only. 0 on success. */
static int pn_settle(PnInstance* m) {
  int round, i;
  for (round = 0; round < PN_SETTLE_ROUNDS; ++round) {
    int changed = 0;
    if (pn_eval_events(m)) return 1;
    for (i = 0; i < PN_NUM_MODES; ++i) {
      const double g = m->s[pn_modes[i].indicator], want = g > 0 ? 1 : 0;
      if (g == 0 || m->s[pn_modes[i].slot] == want) continue;
      pn_set_mode(m, pn_modes[i].slot, want);
      changed = 1;
    }
    if (!changed) return 0;
  }
  pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
         "the modes do not settle at t = %.17g: after %d rounds a condition still changes its mode (conditions that "
         "contradict each other, or a reset that leaves its state on both sides of a condition)",
         m->s[0], PN_SETTLE_ROUNDS);
  return 1;
}

/* A switched element held (stuck, blocking) when its effort while held stays
   within its limit, else released (sliding in the direction of the force,
   conducting). 0 on success. */
static int pn_try_hold(PnInstance* m, const PnSwitch* sw) {
  double effort, limit;
  pn_set_mode(m, sw->held, 1);
  if (pn_eval_events(m)) return 1;
  effort = m->s[sw->effort];
  limit = m->s[sw->limit];
  if (sw->kind == 0) {
    if (fabs(effort) <= limit) return 0;
    pn_set_mode(m, sw->held, 0);
    pn_set_mode(m, sw->direction, effort > 0 ? 1 : -1);
  } else if (!(effort < limit)) {
    pn_set_mode(m, sw->held, 0);
  }
  return 0;
}

/* The modes at the start of a run, from the state at the instance's point:
   a condition holds where its indicator is positive (or zero, for >= and <=);
   friction sticks when its speed is zero and the force allows, else slides
   with its speed; a diode blocks unless the voltage reaches its forward
   voltage. 0 on success. */
static int pn_initial_modes(PnInstance* m) {
  int i, round;
  for (i = 0; i < PN_NUM_MODES; ++i) pn_set_mode(m, pn_modes[i].slot, 0);
  for (i = 0; i < PN_NUM_SWITCHES; ++i) {
    pn_set_mode(m, pn_switches[i].held, 0);
    pn_set_mode(m, pn_switches[i].direction, 1);
  }
  for (round = 0; round <= PN_SETTLE_ROUNDS; ++round) {
    int changed = 0;
    if (pn_eval_events(m)) return 1;
    for (i = 0; i < PN_NUM_MODES; ++i) {
      const double g = m->s[pn_modes[i].indicator];
      const double want = (g > 0 || (g == 0 && !pn_modes[i].strict)) ? 1 : 0;
      if (m->s[pn_modes[i].slot] == want) continue;
      pn_set_mode(m, pn_modes[i].slot, want);
      changed = 1;
    }
    if (!changed) break;
    if (round == PN_SETTLE_ROUNDS) return pn_settle(m) ? 1 : 0;
  }
  for (i = 0; i < PN_NUM_SWITCHES; ++i) {
    const PnSwitch* sw = &pn_switches[i];
    double flow;
    if (pn_eval_events(m)) return 1;
    flow = m->s[sw->flow];
    if (sw->kind == 0 && flow != 0) {
      pn_set_mode(m, sw->held, 0);
      pn_set_mode(m, sw->direction, flow > 0 ? 1 : -1);
    } else if (pn_try_hold(m, sw)) {
      return 1;
    }
  }
  return pn_settle(m);
}

/* The signs of the indicators at the instance's point (at the start, after an
   event): an indicator that an event found at zero has crossed to the side of
   its crossing. 0 on success. */
static int pn_take_signs(PnInstance* m) {
  int i;
  if (pn_indicators(m, m->g0)) return 1;
  for (i = 0; i < PN_NUM_INDICATORS; ++i) {
    m->sign[i] = m->g0[i] == 0 && m->crossed[i] != 0 ? m->crossed[i] : pn_sign(m->g0[i]);
    m->crossed[i] = 0;
  }
  return 0;
}

/* What an event did. */
enum { PN_EV_NONE = 0, PN_EV_CHANGED = 1, PN_EV_STOP = 2, PN_EV_STATES = 4, PN_EV_FAILED = 8 };

/* Event i fires at the instance's time: its firings so far checked for a
   Zeno point (an event with `stop: true` ends the run anyway). The intervals
   to come, if they shrink as the last did, add up to interval r / (1 - r):
   when the point they accumulate at lies before the stop time, or no stop
   time was given (model exchange may give none), the run ends here with an
   error, as simulate's does, rather than go on towards a point where a
   crossing would be missed (a bouncing ball would fall through its floor).
   Returns 1 (logged) at a Zeno point, else 0. */
static int pn_accumulation(PnInstance* m, int i) {
  PnFirings* f = &m->firings[i];
  const double t = m->s[0];
  const char* name = (const char*)pn_event_names + pn_event_name_at[i];
  double interval, before, ratio, point;
  int shrinks;
  char until[160];
  if (pn_events[i].stop) return 0;
  if (f->count++ == 0) {
    f->last = t;
    return 0;
  }
  interval = t - f->last;
  before = f->interval;
  shrinks = before > 0 && interval <= PN_ZENO_RATIO * before;
  ratio = shrinks ? interval / before : 0;
  f->shrinking = shrinks ? f->shrinking + 1 : 0;
  f->geometric = !shrinks ? 0 : (f->ratio > 0 && fabs(ratio - f->ratio) <= PN_ZENO_SAME_RATIO * f->ratio ? f->geometric + 1 : 1);
  f->ratio = ratio;
  f->interval = interval;
  f->last = t;
  if (f->shrinking < PN_ZENO_FIRINGS && f->geometric < PN_ZENO_GEOMETRIC) return 0;
  point = t + interval * ratio / (1 - ratio);
  if (point > m->stop_time) return 0;
  if (m->stop_time < HUGE_VAL)
    snprintf(until, sizeof until, "before the stop time %.17g", m->stop_time);
  else
    snprintf(until, sizeof until, "and no stop time was given: the run cannot go on past that point");
  if (f->shrinking >= PN_ZENO_FIRINGS)
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
           "event '%s' fires ever sooner: %d times in a row, each interval at most %g of the one before (the last "
           "%.3g s), so its firings accumulate at about t = %.6g, %s (a Zeno point); the run stops at its firing %ld, "
           "t = %.17g. Hint: end the run before t = %.4g, or give the model what happens there (an event with "
           "'stop: true', or a mode in which the ball rests)",
           name, f->shrinking, PN_ZENO_RATIO, interval, point, until, f->count, t, point);
  else
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
           "event '%s' fires ever sooner: %d times in a row, each interval %.3g times the one before (the same "
           "ratio to within %g %%; the last %.3g s), so its firings accumulate at about t = %.6g, %s (a Zeno point); the run stops "
           "at its firing %ld, t = %.17g. Hint: end the run before t = %.4g, or give the model what happens there "
           "(an event with 'stop: true', or a mode in which the ball rests)",
           name, f->geometric, ratio, 100 * PN_ZENO_SAME_RATIO, interval, point, until, f->count, t, point);
  return 1;
}

/* Event i fires: its stop, and its reset values (from the slots as they are)
   appended at m->reset_value[*num_resets]; 0 on success (1 at a Zeno point). */
static int pn_fire(PnInstance* m, int i, int* stop, int* num_resets) {
  int j;
  if (pn_accumulation(m, i)) return 1;
  *stop = *stop || pn_events[i].stop;
  for (j = 0; j < pn_events[i].num_resets; ++j) {
    const int r = pn_events[i].first_reset + j;
    m->reset_value[*num_resets] = m->s[pn_reset_slot[r]];
    if (!isfinite(m->reset_value[*num_resets])) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "an event's reset gives state %d the value %g at t = %.17g",
             pn_reset_state[r] + 1, m->reset_value[*num_resets], m->s[0]);
      return 1;
    }
    ++*num_resets;
  }
  return 0;
}

/* The resets of the events marked `now`, in the order pn_fire collected them. */
static void pn_apply_resets(PnInstance* m, const char* now) {
  int i, j, n = 0;
  for (i = 0; i < PN_NUM_EVENTS; ++i) {
    if (!now[i]) continue;
    for (j = 0; j < pn_events[i].num_resets; ++j)
      m->s[PN_FIRST_STATE + pn_reset_state[pn_events[i].first_reset + j]] = m->reset_value[n++];
  }
  if (n > 0) pn_invalidate(m);
}

/* The event at the instance's point with the crossings m->crossed: the
   crossed conditions' modes follow the crossing, the events' resets (all
   computed from the values before any is applied), the switched elements'
   new modes, then every mode settled against the state. Returns PN_EV_*
   flags; PN_EV_NONE when the crossings changed nothing (a direction no event
   asks for). */
static int pn_handle_event(PnInstance* m) {
  double after[PN_NM1];
  /* The events' conditions before anything changes: an event whose condition
     the instant makes true without a crossing of its own (a signal that jumps
     here, another event's reset) fires too, once, below. */
  double g_prev[PN_DIM(PN_NUM_EVENTS)];
  char fired[PN_DIM(PN_NUM_EVENTS)], now[PN_DIM(PN_NUM_EVENTS)];
  int i, k = 0, stop = 0, num_resets = 0, flags = 0, any_reset = 0, round;
  const double t = m->s[0];
  pn_get_modes(m, m->modes_before);
  if (pn_eval_events(m)) return PN_EV_FAILED;
  for (i = 0; i < PN_NUM_EVENTS; ++i) {
    g_prev[i] = m->s[pn_events[i].indicator];
    fired[i] = now[i] = 0;
  }
  for (i = 0; i < PN_NUM_MODES; ++i, ++k)
    if (m->crossed[k]) pn_set_mode(m, pn_modes[i].slot, m->crossed[k] > 0 ? 1 : 0);
  if (pn_eval_events(m)) return PN_EV_FAILED;
  for (i = 0; i < PN_NUM_EVENTS; ++i, ++k) {
    if (m->crossed[k] <= 0) continue;
    fired[i] = now[i] = 1;
    if (pn_fire(m, i, &stop, &num_resets)) return PN_EV_FAILED;
  }
  pn_apply_resets(m, now);
  any_reset = num_resets > 0;
  for (i = 0; i < PN_NUM_SWITCHES; ++i, k += 2) {
    const PnSwitch* sw = &pn_switches[i];
    const int c0 = m->crossed[k], c1 = m->crossed[k + 1];
    if (!c0 && !c1) continue;
    if (m->s[sw->held] > 0.5) { /* the limit was reached: slide in the direction of the force (conduct) */
      if (c0 > 0) {
        pn_set_mode(m, sw->held, 0);
        pn_set_mode(m, sw->direction, 1);
      } else if (sw->kind == 0 && c1 < 0) {
        pn_set_mode(m, sw->held, 0);
        pn_set_mode(m, sw->direction, -1);
      }
    } else if (sw->kind == 0) { /* the sliding speed crossed zero against the sliding direction */
      if (c0 == -m->s[sw->direction] && pn_try_hold(m, sw)) return PN_EV_FAILED;
    } else if (c0 < 0) { /* the diode's current fell to zero: block */
      pn_set_mode(m, sw->held, 1);
    }
  }
  if (pn_settle(m)) return PN_EV_FAILED;
  /* Events made true by the instant itself, in rounds (a round's resets from
     the values before it); each event fires at most once per instant. */
  for (round = 0; round <= PN_NUM_EVENTS; ++round) {
    num_resets = 0;
    if (pn_eval_events(m)) return PN_EV_FAILED;
    for (i = 0; i < PN_NUM_EVENTS; ++i) {
      const double g = m->s[pn_events[i].indicator];
      now[i] = !fired[i] && g_prev[i] <= 0 && g > 0;
      g_prev[i] = g;
      if (!now[i]) continue;
      fired[i] = 1;
      if (pn_fire(m, i, &stop, &num_resets)) return PN_EV_FAILED;
    }
    if (num_resets == 0) break;
    pn_apply_resets(m, now);
    any_reset = 1;
    if (pn_settle(m)) return PN_EV_FAILED;
  }
  pn_get_modes(m, after);
  for (i = 0; i < PN_NUM_MODE_VALUES; ++i)
    if (after[i] != m->modes_before[i]) flags |= PN_EV_CHANGED;
  if (any_reset) flags |= PN_EV_CHANGED | PN_EV_STATES;
  if (stop) flags |= PN_EV_CHANGED | PN_EV_STOP;
  if (!flags) return PN_EV_NONE;
  /* more than PN_MAX_EVENT_BURST events without time advancing: chattering */
  if (m->events > 0 && t - m->last_event_t <= 64 * PN_EPS * (fabs(t) > 1 ? fabs(t) : 1)) {
    if (++m->burst > PN_MAX_EVENT_BURST) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
             "more than %d events at t = %.17g without time advancing (chattering, or a Zeno point where events "
             "accumulate, such as a bouncing ball coming to rest: end the run before it)",
             PN_MAX_EVENT_BURST, t);
      return PN_EV_FAILED;
    }
  } else {
    m->burst = 0;
  }
  m->last_event_t = t;
  ++m->events;
  if (stop) m->stopped = 1;
  return flags;
}

/* Time events due at the instance's point (their indicators in m->g1): a
   time event whose time is the point's up to the rounding of t is crossed,
   in the direction of its slope, even when its indicator is not yet past
   zero; so time events that fall together up to rounding (a sample and a
   setpoint's step at the same instant) are one event. */
static void pn_add_due_time_events(PnInstance* m) {
  int i;
  const double t = m->s[0], tol = 8 * PN_EPS * (fabs(t) > 1 ? fabs(t) : 1);
  for (i = 0; i < PN_NUM_INDICATORS; ++i) {
    const int slope = pn_time_slope[i], dir = pn_direction(i);
    if (m->crossed[i] || slope == 0 || m->sign[i] == slope || (dir != 0 && dir != slope)) continue;
    if (-m->g1[i] / slope <= tol) m->crossed[i] = slope;
  }
}

/* Compares the indicators at the instance's point with their signs since the
   last event (a crossing in a direction asked for sets m->crossed), as the
   event handling does at a point a master or an input brought the FMU to,
   with the time events due there. Returns the number of crossings, -1 on
   failure. */
static int pn_crossings_here(PnInstance* m) {
  int i, n = 0;
  if (pn_indicators(m, m->g1)) return -1;
  for (i = 0; i < PN_NUM_INDICATORS; ++i) {
    const int s1 = pn_sign(m->g1[i]), dir = pn_direction(i);
    m->crossed[i] = 0;
    if (s1 != 0 && s1 != m->sign[i] && (dir == 0 || dir == s1)) m->crossed[i] = s1;
  }
  pn_add_due_time_events(m);
  for (i = 0; i < PN_NUM_INDICATORS; ++i)
    if (m->crossed[i]) ++n;
  return n;
}

/* The time of the next time event after the instance's point (HUGE_VAL: none). */
static double pn_next_time_event(PnInstance* m) {
  double next = HUGE_VAL;
  int i;
  const double t = m->s[0];
  for (i = 0; i < PN_NUM_INDICATORS; ++i) {
    const int slope = pn_time_slope[i], dir = pn_direction(i);
    double tc;
    if (slope == 0 || (dir != 0 && dir != slope) || m->sign[i] == slope) continue;
    tc = t - m->g0[i] / slope;
    if (tc > t && tc < next) next = tc;
  }
  return next;
}

/* After an event found by pn_crossings_here: handled, then the signs taken
   again (a time event that fired keeps the side it crossed to). Returns
   PN_EV_* flags. */
static int pn_event_here(PnInstance* m) {
  int fired[PN_NI1];
  int i, flags;
  for (i = 0; i < PN_NUM_INDICATORS; ++i) fired[i] = m->crossed[i];
  flags = pn_handle_event(m);
  if (flags & PN_EV_FAILED) return flags;
  for (i = 0; i < PN_NUM_INDICATORS; ++i) m->crossed[i] = fired[i];
  if (pn_take_signs(m)) return PN_EV_FAILED;
  for (i = 0; i < PN_NUM_INDICATORS; ++i)
    if (pn_time_slope[i] != 0 && fired[i] == pn_time_slope[i] && fabs(m->g0[i]) <= 8 * PN_EPS * (fabs(m->s[0]) > 1 ? fabs(m->s[0]) : 1))
      m->sign[i] = fired[i];
  return flags;
}

/* The state at t on the interpolant of the step (m->interp). */
static void pn_interpolate(PnInstance* m, double t, double* out) {
  const double h = m->interp_h, theta = (t - m->interp_t0) / h;
  int i, j;
  if (m->interp == 0) {
    double w[PN_DP54_STAGES];
    for (j = 0; j < PN_DP54_STAGES; ++j) {
      const double* d = pn_dp54_dense[j];
      w[j] = h * theta * (d[0] + theta * (d[1] + theta * (d[2] + theta * d[3])));
    }
    for (i = 0; i < PN_NUM_STATES; ++i) {
      double acc = 0;
      for (j = 0; j < PN_DP54_STAGES; ++j)
        if (pn_dp54_dense[j][0] != 0 || pn_dp54_dense[j][1] != 0 || pn_dp54_dense[j][2] != 0 ||
            pn_dp54_dense[j][3] != 0)
          acc += w[j] * m->k[j][i];
      out[i] = m->y[i] + acc;
    }
  } else { /* cubic Hermite through (y, f) at both ends */
    const double t2 = theta * theta, t3 = t2 * theta;
    const double h00 = 2 * t3 - 3 * t2 + 1, h10 = t3 - 2 * t2 + theta, h01 = -2 * t3 + 3 * t2, h11 = t3 - t2;
    for (i = 0; i < PN_NUM_STATES; ++i)
      out[i] = h00 * m->y[i] + h10 * h * m->k[0][i] + h01 * m->y1[i] + h11 * h * m->f1[i];
  }
}

/* An indicator on the step's interpolant, for pn_illinois: the instance and
   the indicator's index. */
typedef struct {
  PnInstance* m;
  int i;
} PnAlong;

static int pn_indicator_along(void* ctx, double t, double* value) {
  PnAlong* on = (PnAlong*)ctx;
  PnInstance* m = on->m;
  pn_interpolate(m, t, m->xt);
  pn_set_point(m, t, m->xt);
  if (pn_indicators(m, m->gt)) return -1;
  *value = m->gt[on->i];
  return 0;
}

/* After a step from (t0, m->g0) to (t1, x1): the earliest crossing in a
   direction asked for, located on the step's interpolant by pn_illinois (the
   solvers' root finder) to a few units of rounding of t; the event time is
   the bracket's end where the sign has changed. Returns 1 with *t_event,
   m->xev and m->crossed set, 0 when there is none (the signs are then taken
   at t1), -1 on failure. */
static int pn_locate(PnInstance* m, double t0, double t1, const double* x1, double* t_event) {
  double best = HUGE_VAL, roots[PN_NI1];
  const double tol = pn_illinois_tolerance(t0, t1);
  int i;
  pn_set_point(m, t1, x1);
  if (pn_indicators(m, m->g1)) return -1;
  for (i = 0; i < PN_NUM_INDICATORS; ++i) {
    const int s1 = pn_sign(m->g1[i]), dir = pn_direction(i);
    PnAlong along;
    double b = t1;
    roots[i] = HUGE_VAL;
    m->crossed[i] = 0;
    if (s1 == 0 || s1 == m->sign[i] || (dir != 0 && dir != s1)) continue;
    along.m = m;
    along.i = i;
    if (pn_illinois(t0, t1, m->g0[i], m->g1[i], m->sign[i], tol, pn_indicator_along, &along, &b)) return -1;
    roots[i] = b;
    if (b < best) best = b;
  }
  if (best == HUGE_VAL) {
    for (i = 0; i < PN_NUM_INDICATORS; ++i) {
      if (m->g1[i] != 0) m->sign[i] = pn_sign(m->g1[i]);
      m->g0[i] = m->g1[i];
    }
    return 0;
  }
  for (i = 0; i < PN_NUM_INDICATORS; ++i) m->crossed[i] = roots[i] <= best + tol ? pn_sign(m->g1[i]) : 0;
  *t_event = best;
  if (best == t1) {
    for (i = 0; i < PN_NUM_STATES; ++i) m->xev[i] = x1[i];
  } else {
    pn_interpolate(m, best, m->xev);
  }
  return 1;
}


/* ---- an instance's life ---- */

int pn_init_instance(PnInstance* m, const char* name, int version, int kind, PnEmitFn emit) {
  m->name = (char*)malloc(strlen(name) + 1);
  if (!m->name) return 1;
  strcpy(m->name, name);
  m->version = version;
  m->kind = kind;
  m->emit = emit;
  m->state = PN_INSTANTIATED;
  pn_reset_values(m);
  return 0;
}

void pn_free_instance(PnInstance* m) {
  free(m->name);
  m->name = NULL;
}

int pn_setup(PnInstance* m, const char* fn, int tolerance_defined, double tolerance, double start_time,
             int stop_time_defined, double stop_time) {
  if (!isfinite(start_time) || (stop_time_defined && !(stop_time >= start_time))) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: bad start or stop time (%g, %g)", fn, start_time, stop_time);
    return 1;
  }
  if (tolerance_defined) {
    if (!(tolerance > 0 && tolerance < 1)) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: the tolerance must lie in (0, 1), got %g", fn, tolerance);
      return 1;
    }
    m->rtol = tolerance;
    m->atol = tolerance * (PN_ATOL / PN_RTOL);
  }
  m->s[0] = start_time;
  m->stop_time = stop_time_defined ? stop_time : HUGE_VAL;
  pn_invalidate(m);
  return 0;
}

int pn_initialize(PnInstance* m) {
  pn_invalidate(m);
  pn_clear_firings(m);
  if ((PN_NUM_INDICATORS > 0 && (pn_initial_modes(m) || pn_take_signs(m))) || pn_eval_rhs(m) || pn_eval_outputs(m)) {
    m->state = PN_ERROR;
    return 1;
  }
  return 0;
}

/* ---- variables: a slot's value reference is its index; outputs follow, then (FMI 3.0) the event indicators ---- */

/* What a Float64 value reference is: 1 time, 2 parameter, 3 state, 4
   derivative, 5 output, 6 event indicator; 0 none. */
static int pn_vr_kind(const PnInstance* m, unsigned vr) {
  if (vr == 0) return 1;
  if (vr >= PN_FIRST_PARAMETER && vr < PN_FIRST_PARAMETER + PN_NUM_PARAMETERS) return 2;
  if (vr >= PN_FIRST_STATE && vr < PN_FIRST_STATE + PN_NUM_STATES) return 3;
  if (vr >= PN_FIRST_DERIVATIVE && vr < PN_FIRST_DERIVATIVE + PN_NUM_STATES) return 4;
  if (vr >= PN_NUM_SLOTS && vr < PN_NUM_SLOTS + PN_NUM_OUTPUTS) return pn_output_length[vr - PN_NUM_SLOTS] > 0 ? 5 : 0;
  if (m->indicator_variables && vr >= PN_NUM_SLOTS + PN_NUM_OUTPUTS &&
      vr < PN_NUM_SLOTS + PN_NUM_OUTPUTS + PN_NUM_INDICATORS)
    return 6;
  return 0;
}

/* Whether an event's reset sets state i (FMI 3.0's reinit). */
static int pn_reinit(int i) {
  int r;
  for (r = 0; r < PN_NUM_RESETS; ++r)
    if (pn_reset_state[r] == i) return 1;
  return 0;
}

size_t pn_value_count(const PnInstance* m, unsigned vr) {
  const int kind = pn_vr_kind(m, vr);
  return kind == 5 ? (size_t)pn_output_length[vr - PN_NUM_SLOTS] : (kind != 0 ? 1 : 0);
}

int pn_get_real(PnInstance* m, const char* fn, const unsigned* vr, size_t nvr, double* value) {
  size_t i, j = 0; /* value[j]: the next value */
  if (pn_check_array(m, fn, nvr, vr, value)) return 1;
  for (i = 0; i < nvr; ++i) {
    const int kind = pn_vr_kind(m, vr[i]);
    if (kind == 0) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: unknown value reference %u", fn, vr[i]);
      return 1;
    }
    if (kind == 4 && pn_eval_rhs(m)) return 1;
    if (kind == 5) { /* an output, or an array output's components in order */
      const int k = (int)(vr[i] - PN_NUM_SLOTS);
      int e;
      if (pn_eval_outputs(m)) return 1;
      for (e = k; e < k + pn_output_length[k]; ++e) value[j++] = m->s[pn_output_slot[e]] * pn_output_scale[e];
    } else if (kind == 6) {
      double z[PN_NI1];
      if (pn_get_indicators(m, fn, z, PN_NUM_INDICATORS)) return 1;
      value[j++] = z[vr[i] - PN_NUM_SLOTS - PN_NUM_OUTPUTS];
    } else {
      value[j++] = m->s[vr[i]];
    }
  }
  return 0;
}

int pn_set_real(PnInstance* m, const char* fn, const unsigned* vr, size_t nvr, const double* value,
                int tunable_states, int input_states, int state_states) {
  size_t i;
  int tuned = 0;
  double* old;
  if (pn_check_array(m, fn, nvr, vr, value)) return 1;
  for (i = 0; i < nvr; ++i) { /* all checked before any is set */
    const int kind = pn_vr_kind(m, vr[i]);
    const int pk = kind == 2 ? pn_parameter_kind[vr[i] - PN_FIRST_PARAMETER] : -1;
    if (pk == PN_FIXED) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
             "%s: value reference %u is a constant (values computed at export depend on it, or the "
             "equations do not read it); export the FMU with --param to change it", fn, vr[i]);
      return 1;
    }
    if (pk == PN_CALCULATED) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
             "%s: value reference %u is a calculated parameter (computed from others): set those", fn, vr[i]);
      return 1;
    }
    if ((pk == PN_TUNABLE && !(m->state & tunable_states)) || (pk == PN_INPUT && !(m->state & input_states))) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: the %s %u may not be set in %s", fn,
             pk == PN_INPUT ? "input" : "parameter", vr[i], pn_state_name(m, m->state));
      return 1;
    }
    if (kind == 3 && !(m->state & state_states)) {
      if (state_states == (PN_INSTANTIATED | PN_INIT))
        pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
               "%s: the state %u may be set only before initialization ends (then %sSetContinuousStates)", fn, vr[i],
               pn_api(m));
      else
        pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: the state %u may not be set in %s", fn, vr[i],
               pn_state_name(m, m->state));
      return 1;
    }
    /* FMI 3.0: in event mode only a state that no event resets (reinit = false) */
    if (kind == 3 && m->version == 3 && m->state == PN_EVENT && pn_reinit((int)vr[i] - PN_FIRST_STATE)) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
             "%s: the state %u is reset by an event (reinit = true) and may not be set in event mode", fn, vr[i]);
      return 1;
    }
    if (kind != 2 && kind != 3) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: value reference %u %s", fn, vr[i],
             kind == 0 ? "is unknown" : "is not a parameter, an input or a start value and cannot be set");
      return 1;
    }
    if (!isfinite(value[i])) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: the value for %u is not finite", fn, vr[i]);
      return 1;
    }
    tuned = tuned || pk == PN_TUNABLE;
  }
  if (nvr == 0) return 0;
  old = (double*)malloc(nvr * sizeof *old);
  if (!old) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: out of memory", fn);
    return 1;
  }
  for (i = 0; i < nvr; ++i) old[i] = m->s[vr[i]], m->s[vr[i]] = value[i];
  pn_invalidate(m);
  if (tuned && pn_eval_parameters(m)) { /* a value the calculated parameters cannot take: nothing changes */
    for (i = nvr; i-- > 0;) m->s[vr[i]] = old[i];
    pn_eval_parameters(m);
    free(old);
    return 1;
  }
  free(old);
  return 0;
}

int pn_no_variables(PnInstance* m, const char* fn, size_t nvr, const void* vr, const void* value, const char* type) {
  if (pn_check_array(m, fn, nvr, vr, value)) return 1;
  if (nvr == 0) return 0;
  pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: the FMU has no %s variables (value reference %u)", fn, type,
         ((const unsigned*)vr)[0]);
  return 1;
}

/* ---- model exchange ---- */

int pn_set_time(PnInstance* m, const char* fn, double t) {
  if (!isfinite(t)) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: the time is not finite", fn);
    return 1;
  }
  m->s[0] = t;
  pn_invalidate(m);
  return 0;
}

int pn_check_nx(PnInstance* m, const char* fn, const void* x, size_t nx) {
  if (nx != (size_t)PN_NUM_STATES || (nx > 0 && !x)) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: expected %d states, got %u%s", fn, PN_NUM_STATES, (unsigned)nx,
           x ? "" : " (NULL array)");
    return 1;
  }
  return 0;
}

void pn_set_states(PnInstance* m, const double* x) {
  int i;
  for (i = 0; i < PN_NUM_STATES; ++i) m->s[PN_FIRST_STATE + i] = x[i];
  pn_invalidate(m);
}

void pn_get_states(const PnInstance* m, double* x) {
  int i;
  for (i = 0; i < PN_NUM_STATES; ++i) x[i] = m->s[PN_FIRST_STATE + i];
}

int pn_get_derivatives(PnInstance* m, double* dx) {
  int i;
  if (pn_eval_rhs(m)) return 1;
  for (i = 0; i < PN_NUM_STATES; ++i) dx[i] = m->s[PN_FIRST_DERIVATIVE + i];
  return 0;
}

int pn_get_indicators(PnInstance* m, const char* fn, double* z, size_t nz) {
  int i;
  if (nz != (size_t)PN_NUM_INDICATORS || (nz > 0 && !z)) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: the FMU has %d event indicators, asked for %u%s", fn,
           PN_NUM_INDICATORS, (unsigned)nz, z ? "" : " (NULL array)");
    return 1;
  }
  if (nz == 0) return 0;
  if (pn_indicators(m, z)) return 1;
  if (m->indicator_variables)
    for (i = 0; i < PN_NUM_INDICATORS; ++i)
      if (z[i] == 0 && m->sign[i] != 0) z[i] = m->sign[i] * 2.2250738585072014e-308;
  return 0;
}

int pn_update_discrete_states(PnInstance* m, int* states_changed, int* terminate, int* next_defined, double* next) {
  int flags = PN_EV_NONE;
  double t_next = HUGE_VAL;
  if (PN_NUM_INDICATORS > 0) {
    /* the crossings since the last event (state events the master located,
       time events at their time, an input that crossed a condition) */
    const int n = pn_crossings_here(m);
    if (n < 0) {
      m->state = PN_ERROR;
      return 1;
    }
    if (n > 0) {
      flags = pn_event_here(m);
    } else {
      int i;
      for (i = 0; i < PN_NUM_INDICATORS; ++i) {
        m->g0[i] = m->g1[i];
        if (m->g1[i] != 0) m->sign[i] = pn_sign(m->g1[i]);
      }
    }
    if (flags & PN_EV_FAILED) {
      m->state = PN_ERROR;
      return 1;
    }
    t_next = pn_next_time_event(m);
  }
  *states_changed = (flags & PN_EV_STATES) != 0;
  *terminate = m->stopped;
  *next_defined = t_next < HUGE_VAL;
  *next = t_next < HUGE_VAL ? t_next : 0;
  return 0;
}

/* ---- co-simulation: Dormand-Prince 5(4) with the step-size control of MATLAB's ode45 ---- */
/* (as paynter's own dopri5: relative error per component against
   max(|y|, |y_new|, atol/rtol), maximum norm, local extrapolation; the
   coefficients are the solvers' table, pn_butcher.h). With events, each
   accepted step's indicators are checked at its end and a crossing is
   located on the continuous extension; the step ends there, the event is
   handled and the integration starts afresh from it. The integrators return
   0 at t_end, 1 on failure, 2 when an event stopped the run (the instance
   then stands at the event). */

static double pn_threshold(PnInstance* m) { return m->atol / m->rtol > 1e-300 ? m->atol / m->rtol : 1e-300; }

/* out = y + h * sum_j a[j] k[j] over the stages before `stage` (zero coefficients skipped). */
static void pn_stage_input(const PnInstance* m, const double* a, int stage, double h, double* out) {
  int i, j;
  for (i = 0; i < PN_NUM_STATES; ++i) {
    double s = 0;
    for (j = 0; j < stage; ++j)
      if (a[j] != 0) s += a[j] * m->k[j][i];
    out[i] = m->y[i] + h * s;
  }
}

/* After an event located at (t_event, m->xev): handled; *t and m->y restart
   from it with f in m->k[0]. 0 to go on, 1 on failure, 2 stopped. */
static int pn_step_event(PnInstance* m, double t_event, double* t) {
  int i, flags;
  pn_set_point(m, t_event, m->xev);
  if (pn_indicators(m, m->g1)) return 1;
  pn_add_due_time_events(m);
  flags = pn_event_here(m);
  if (flags & PN_EV_FAILED) return 1;
  if (flags & PN_EV_STOP) return 2;
  *t = t_event;
  for (i = 0; i < PN_NUM_STATES; ++i) m->y[i] = m->s[PN_FIRST_STATE + i];
  if (pn_f(m, *t, m->y, m->k[0])) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%sDoStep: the state after the event at t = %.17g is outside the "
           "domain of the model (check the event's reset)", pn_api(m), *t);
    return 1;
  }
  return 0;
}

/* An event at the communication point t_end, up to the rounding of t (a
   master's t + h may miss a time event's instant by a unit of rounding), is
   handled at the start of the next step: the master reads the values before
   it, as simulate's CSV gives the row before an event at an output time. */
static int pn_at_end(double t_event, double t_end) {
  return t_end - t_event <= 8 * PN_EPS * (fabs(t_end) > 1 ? fabs(t_end) : 1);
}

static int pn_dopri5(PnInstance* m, double t, double t_end) {
  const int n = PN_NUM_STATES, ns = PN_DP54_STAGES;
  const double threshold = pn_threshold(m), rtol = m->rtol;
  long steps = 0;
  int i, j;
  for (i = 0; i < n; ++i) m->y[i] = m->s[PN_FIRST_STATE + i];
  if (pn_f(m, t, m->y, m->k[0])) return 1;
  while (t < t_end) {
    const double hmin = 16 * PN_EPS * (fabs(t) > 1 ? fabs(t) : 1);
    double h, err = 0, tnew;
    int last = 0, nofailed = 1;
    if (!(m->h > 0)) { /* the initial step, as ode45 chooses it (also after an event) */
      double rh = 0;
      m->h = t_end - t;
      for (i = 0; i < n; ++i) {
        const double a = fabs(m->y[i]) > threshold ? fabs(m->y[i]) : threshold;
        if (fabs(m->k[0][i]) / a > rh) rh = fabs(m->k[0][i]) / a;
      }
      rh /= 0.8 * pow(rtol, 0.2);
      if (m->h * rh > 1) m->h = 1 / rh;
    }
    h = m->h;
    if (++steps > 10000000L) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%sDoStep: more than 1e7 steps at t = %.17g (stiff?)", pn_api(m), t);
      return 1;
    }
    if (h < hmin) h = hmin;
    if (1.1 * h >= t_end - t) h = t_end - t, last = 1; /* a step within 10% of the end is stretched */
    for (;;) {
      int finite = 1, st;
      tnew = last ? t_end : t + h;
      for (st = 1; st < ns && finite; ++st) {
        if (st == ns - 1) { /* the last stage: f at the new solution (FSAL) */
          h = tnew - t;
          pn_stage_input(m, pn_dp54_a[st], st, h, m->y1);
          finite = !pn_f(m, tnew, m->y1, m->k[st]);
        } else {
          pn_stage_input(m, pn_dp54_a[st], st, h, m->tmp);
          finite = !pn_f(m, t + pn_dp54_c[st] * h, m->tmp, m->k[st]);
        }
      }
      if (finite) {
        err = 0;
        for (i = 0; i < n; ++i) {
          double e = 0, a = fabs(m->y[i]) > fabs(m->y1[i]) ? fabs(m->y[i]) : fabs(m->y1[i]);
          for (j = 0; j < ns; ++j)
            if (pn_dp54_e[j] != 0) e += pn_dp54_e[j] * m->k[j][i];
          if (a < threshold) a = threshold;
          if (!(fabs(e) / a <= err)) err = fabs(e) / a; /* NaN propagates */
        }
        err *= h;
        if (err <= rtol) break;
      }
      if (h <= hmin) {
        pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%sDoStep: the step size fell to %g at t = %.17g%s", pn_api(m), h, t,
               finite ? "" : " (an evaluation failed)");
        return 1;
      }
      if (nofailed && finite) {
        const double f = 0.8 * pow(rtol / err, 0.2);
        h *= f > 0.1 ? f : 0.1;
      } else {
        h *= 0.5;
      }
      if (h < hmin) h = hmin;
      nofailed = 0;
      last = 0;
      if (1.1 * h >= t_end - t) h = t_end - t, last = 1;
    }
    if (PN_NUM_INDICATORS > 0) {
      double t_event = 0;
      int found;
      m->interp = 0;
      m->interp_t0 = t;
      m->interp_h = h;
      found = pn_locate(m, t, tnew, m->y1, &t_event);
      if (found < 0) return 1;
      if (found && !pn_at_end(t_event, t_end)) {
        const int rc = pn_step_event(m, t_event, &t);
        if (rc) return rc;
        m->h = 0; /* a new first step from the event */
        continue;
      }
    }
    t = tnew;
    for (i = 0; i < n; ++i) m->y[i] = m->y1[i], m->k[0][i] = m->k[ns - 1][i];
    if (nofailed) {
      const double temp = 1.25 * pow(err / rtol, 0.2);
      h = temp > 0.2 ? h / temp : 5 * h;
    }
    /* a step shortened to reach t_end does not shrink the proposal */
    if (!last || h > m->h) m->h = h;
  }
  pn_set_point(m, t_end, m->y);
  return 0;
}

/* Classical Runge-Kutta with equal steps of at most PN_CS_STEP; with events,
   a crossing is located on the cubic Hermite interpolant of each step (f at
   both ends) and the steps restart from the event. */
static int pn_rk4(PnInstance* m, double t, double t_end) {
  const int n = PN_NUM_STATES;
  int i, st;
  for (i = 0; i < n; ++i) m->y[i] = m->s[PN_FIRST_STATE + i];
  for (;;) {
    const double span = t_end - t;
    long steps = (long)ceil(span / PN_CS_STEP - 1e-9), s;
    int restarted = 0;
    if (steps < 1) steps = 1;
    for (s = 0; s < steps && !restarted; ++s) {
      const double t0 = t + span * s / steps, h = span / steps;
      double* out = PN_NUM_INDICATORS > 0 ? m->y1 : m->y;
      for (st = 0; st < PN_RK4_STAGES; ++st) {
        if (st == 0) {
          if (pn_f(m, t0, m->y, m->k[0])) return 1;
          continue;
        }
        pn_stage_input(m, pn_rk4_a[st], st, h, m->tmp);
        if (pn_f(m, t0 + pn_rk4_c[st] * h, m->tmp, m->k[st])) return 1;
      }
      for (i = 0; i < n; ++i) {
        double acc = 0;
        for (st = 0; st < PN_RK4_STAGES; ++st) acc += pn_rk4_b[st] * m->k[st][i];
        out[i] = m->y[i] + h * acc;
      }
      if (PN_NUM_INDICATORS > 0) {
        double t_event = 0;
        int found;
        if (pn_f(m, t0 + h, m->y1, m->f1)) return 1;
        m->interp = 1;
        m->interp_t0 = t0;
        m->interp_h = h;
        found = pn_locate(m, t0, t0 + h, m->y1, &t_event);
        if (found < 0) return 1;
        if (found && !pn_at_end(t_event, t_end)) {
          const int rc = pn_step_event(m, t_event, &t);
          if (rc) return rc;
          restarted = 1; /* equal steps again, from the event to t_end */
          continue;
        }
        for (i = 0; i < n; ++i) m->y[i] = m->y1[i];
      }
    }
    if (!restarted || !(t < t_end)) break;
  }
  pn_set_point(m, t_end, m->y);
  return 0;
}


int pn_do_step(PnInstance* m, const char* fn, double t_comm, double h) {
  const double t = m->s[0];
  double backup[PN_NUM_SLOTS];
  int sign_backup[PN_NI1];
  int rc = 0;
  if (m->stopped) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
           "%s: the model stopped at t = %.17g (an event with 'stop: true'); call %sTerminate", fn, t,
           pn_api(m));
    return 1;
  }
  if (!(fabs(t_comm - t) <= 1e-9 * (1 + fabs(t)))) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: the step starts at %.17g but the FMU is at t = %.17g", fn, t_comm, t);
    return 1;
  }
  if (!(h >= 0) || !isfinite(h)) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: the step size %g is not a finite number >= 0", fn, h);
    return 1;
  }
  if (h == 0) return 0;
  memcpy(backup, m->s, sizeof backup);
  memcpy(sign_backup, m->sign, sizeof sign_backup);
  if (PN_NUM_INDICATORS > 0) {
    /* a time event due at the communication point, or a condition an input or a
       parameter set since the last step crossed */
    const int n = pn_crossings_here(m);
    int i;
    if (n < 0) rc = 1;
    else if (n > 0) {
      const int flags = pn_event_here(m);
      rc = flags & PN_EV_FAILED ? 1 : (flags & PN_EV_STOP ? 2 : 0);
    } else {
      for (i = 0; i < PN_NUM_INDICATORS; ++i) m->g0[i] = m->g1[i];
    }
  }
  if (!rc) rc = PN_CS_METHOD == 1 ? pn_rk4(m, t, t + h) : pn_dopri5(m, t, t + h);
  if (rc == 2) return 2; /* an event stopped the run: the instance stands at it */
  if (rc) {
    memcpy(m->s, backup, sizeof backup);
    memcpy(m->sign, sign_backup, sizeof sign_backup);
    pn_invalidate(m);
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: the integration from t = %.17g failed", fn, t);
    m->state = PN_ERROR;
    return 1;
  }
  return 0;
}
