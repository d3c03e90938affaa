/* pn_core.h: the core of the runtime every FMU paynter exports, shared by its
   two interfaces: fmu.c (the FMI 2.0 functions) and fmu3.c (the FMI 3.0
   functions). The core knows the model (model.h, fmu_model.h) and nothing of
   either standard's types: it holds an instance's values, the calling
   sequence's states, the evaluations with the Newton solver of implicit
   blocks, the event handling (docs/events.md), the access to variables by
   value reference and the co-simulation integrators. An interface embeds
   PnInstance as the first member of its own instance, checks each call's
   state and arguments as its standard says, and calls the core. Plain C99. */
#ifndef PN_CORE_H
#define PN_CORE_H

#include <stddef.h>

#include "model.h"
#include "pn_butcher.h"

/* A function's status, numbered as both standards number theirs. */
enum { PN_STATUS_OK = 0, PN_STATUS_WARNING = 1, PN_STATUS_DISCARD = 2, PN_STATUS_ERROR = 3, PN_STATUS_FATAL = 4 };

/* What a message is about; each interface names its log categories. */
enum { PN_LOG_ERROR = 0, PN_LOG_EVENTS = 1 };

/* The states of the calling sequence (FMI 2.0 sections 3.2.3 and 4.2.4; FMI
   3.0 sections 2.3, 3.2 and 4.2: PN_STEP_COMPLETE is 3.0's Step Mode, and
   PN_ERROR its Terminated entered by an error). */
enum {
  PN_INSTANTIATED = 1, PN_INIT = 2, PN_EVENT = 4, PN_CONT = 8, PN_STEP_COMPLETE = 16,
  PN_TERMINATED = 32, PN_ERROR = 64
};
#define PN_ANY (PN_INSTANTIATED | PN_INIT | PN_EVENT | PN_CONT | PN_STEP_COMPLETE | PN_TERMINATED | PN_ERROR)

/* The kind of an instance. */
enum { PN_ME = 0, PN_CS = 1 };

#define PN_NX1 PN_DIM(PN_NUM_STATES)
#define PN_NI1 PN_DIM(PN_NUM_INDICATORS)
/* the slots the event handling sets: the conditions' modes, two per switched element */
#define PN_NUM_MODE_VALUES (PN_NUM_MODES + 2 * PN_NUM_SWITCHES)
#define PN_NM1 PN_DIM(PN_NUM_MODE_VALUES)
#define PN_EPS 2.220446049250313e-16

typedef struct PnInstance PnInstance;

/* An event's firings as the Zeno rule follows them (pn_core.c, the rule of
   paynter's simulate): the last firing's time, the interval since the one
   before (-1: none yet), its ratio to the interval before (0: not shrinking),
   the intervals in a row at most 0.95 of the one before, those of them in a
   row with the same ratio, the firings since the run started. */
typedef struct {
  double last, interval, ratio;
  int shrinking, geometric;
  long count;
} PnFirings;

/* The interface's logger: a formatted message of a status and a category. */
typedef void (*PnEmitFn)(PnInstance* m, int status, int category, const char* text);

struct PnInstance {
  char* name;
  int version; /* 2 or 3: the standard of the interface (the functions named in messages) */
  int kind;    /* PN_ME or PN_CS */
  PnEmitFn emit;
  int state;
  /* FMI 3.0: the event indicators are variables (value references after the
     outputs), and an indicator at zero is reported on the side it was on
     since the last event (the standard asks for indicators that are not zero
     after an event, and reads zero as "not above zero") */
  int indicator_variables;
  double stop_time; /* HUGE_VAL: none */
  double s[PN_NUM_SLOTS];
  double w_rhs[PN_RHS_W], w_out[PN_OUT_W], w_par[PN_PAR_W], w_evt[PN_EVT_W];
  int rhs_valid, out_valid, evt_valid;
  PnSolver ns;
  double rtol, atol, h; /* co-simulation: tolerances, the step size proposed */
  double k[PN_DP54_STAGES][PN_NX1], y[PN_NX1], y1[PN_NX1], tmp[PN_NX1];
  /* events: each indicator's sign since the last event (0: on zero), the
     crossings found (+1 up, -1 down), the indicators at the start of a step
     and at trial points, a located event's state */
  int sign[PN_NI1], crossed[PN_NI1];
  double g0[PN_NI1], g1[PN_NI1], gt[PN_NI1], xev[PN_NX1], xt[PN_NX1], f1[PN_NX1];
  double reset_value[PN_DIM(PN_NUM_RESETS)], modes_before[PN_NM1];
  long events;
  double last_event_t;
  int burst;
  PnFirings firings[PN_DIM(PN_NUM_EVENTS)]; /* per event: a Zeno point ends the run */
  int stopped; /* an event with `stop: true` fired (at s[0]) */
  /* the interpolant of the step an event is located on: 0 Dormand-Prince's
     continuous extension (y, k), 1 cubic Hermite (y, k[0] at t0; y1, f1 at t0 + h) */
  int interp;
  double interp_t0, interp_h;
};

/* ---- messages and the calling sequence ---- */
void pn_log(PnInstance* m, int status, int category, const char* format, ...);
const char* pn_state_name(const PnInstance* m, int state);
/* Whether `fn` may be called in the instance's state (logs why not). */
int pn_allowed(PnInstance* m, const char* fn, int states);
/* Whether the instance is of `kind` (logs why not). */
int pn_is_kind(PnInstance* m, const char* fn, int kind);
/* Logs that `fn` is not supported; returns 1. */
int pn_unsupported(PnInstance* m, const char* fn);
/* 0 when nvr is 0 or both arrays are given (logs why not). */
int pn_check_array(PnInstance* m, const char* fn, size_t nvr, const void* vr, const void* value);

/* ---- an instance's life ---- */
/* Sets up an instance (its name copied) with the values of the export; 0 on
   success, 1 when out of memory. */
int pn_init_instance(PnInstance* m, const char* name, int version, int kind, PnEmitFn emit);
void pn_free_instance(PnInstance* m);
void pn_reset_values(PnInstance* m);
/* The experiment's tolerance and times; 0 on success (logs why not). */
int pn_setup(PnInstance* m, const char* fn, int tolerance_defined, double tolerance, double start_time,
             int stop_time_defined, double stop_time);
/* The end of initialization: the modes and indicators' signs at the start, the
   derivatives and outputs; 0 on success, else the instance is in PN_ERROR. */
int pn_initialize(PnInstance* m);

/* ---- variables: a slot's value reference is its index; the outputs follow
   the slots, and (FMI 3.0) the event indicators the outputs ---- */
/* How many values a value reference gives: 1, an array output's length
   (FMI 3.0), 0 for no variable. */
size_t pn_value_count(const PnInstance* m, unsigned vr);
/* The values of the value references in order (an array output's all its
   components); 0 on success; an unknown value reference is an error (logged). */
int pn_get_real(PnInstance* m, const char* fn, const unsigned* vr, size_t nvr, double* value);
/* Sets parameters, inputs and start values: each value checked (it may be set,
   in this state: the masks of states in which a tunable parameter, an input
   and a state may be set) before any is set; a calculated parameter follows
   the tunable ones it is computed from. 0 on success (logs why not; nothing
   changes then). */
int pn_set_real(PnInstance* m, const char* fn, const unsigned* vr, size_t nvr, const double* value,
                int tunable_states, int input_states, int state_states);
/* The FMU has no variables of this type: 0 for none asked, else 1 (logged). */
int pn_no_variables(PnInstance* m, const char* fn, size_t nvr, const void* vr, const void* value, const char* type);

/* ---- model exchange ---- */
int pn_set_time(PnInstance* m, const char* fn, double t);
/* 0 when nx is the number of states and x is given (logs why not). */
int pn_check_nx(PnInstance* m, const char* fn, const void* x, size_t nx);
void pn_set_states(PnInstance* m, const double* x);
void pn_get_states(const PnInstance* m, double* x);
int pn_get_derivatives(PnInstance* m, double* dx); /* 0 on success */
/* The event indicators (as the interface reports them); 0 on success. */
int pn_get_indicators(PnInstance* m, const char* fn, double* z, size_t nz);
/* The event at the instance's point, if any (crossings since the last event,
   time events due, a condition an input crossed): handled as simulate handles
   it; the states reset, the run stopped, the next time event. 0 on success,
   else the instance is in PN_ERROR. */
int pn_update_discrete_states(PnInstance* m, int* states_changed, int* terminate, int* next_defined, double* next);

/* ---- co-simulation ---- */
/* One communication step from t (the instance's time) to t + h, events
   handled inside: 0 done, 2 an event with `stop: true` ended the step (the
   instance at the event), 1 on failure (logged; the instance restored to t and
   put in PN_ERROR, or left unchanged for a bad argument). */
int pn_do_step(PnInstance* m, const char* fn, double t, double h);

#endif
