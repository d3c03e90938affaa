/* fmu_model.h: what a model's generated C (model.c, rhs.c, ...) gives the
   runtime (fmu.c), the same for every FMU; the generated model.h defines the
   sizes (PN_NUM_SLOTS, ...) and then includes this file. Plain C99. */
#ifndef PN_FMU_MODEL_H
#define PN_FMU_MODEL_H

/* An array's length: at least 1 (C has no arrays of length 0). */
#define PN_DIM(n) ((n) > 0 ? (n) : 1)

typedef int (*PnGroupFn)(double* s, double* w);
typedef void (*PnBlockFn)(double* s, double* w, double* r);

/* An implicit block r(u) = 0: its unknowns' slots, whether it is linear, the
   positions (i + j*n) of its Jacobian's structural non-zeros, and the
   functions computing its residual and those non-zeros (in order). */
typedef struct {
  int n, linear, nnz;
  const int* unknowns;
  const int* nz;
  int num_residual_fns;
  const PnBlockFn* residual_fns;
  int num_jacobian_fns;
  const PnBlockFn* jacobian_fns;
} PnBlock;

/* The Newton solver's work space (fmu.c). */
typedef struct {
  double u[PN_MAX_BLOCK], u_old[PN_MAX_BLOCK], r[PN_MAX_BLOCK], du[PN_MAX_BLOCK];
  double J[PN_MAX_BLOCK * PN_MAX_BLOCK], jv[PN_MAX_NZ];
  int piv[PN_MAX_BLOCK];
} PnSolver;

int pn_solve_block(const PnBlock* b, double* s, double* w, PnSolver* ns); /* fmu.c */

/* The programs over the slots s (model.c): 0 on success, 1 when a computed
   value is NaN or Inf, 2 when an implicit block cannot be solved. */
int pn_run_rhs(double* s, double* w, PnSolver* ns);        /* the derivatives */
int pn_run_outputs(double* s, double* w, PnSolver* ns);    /* the outputs */
int pn_run_parameters(double* s, double* w, PnSolver* ns); /* the calculated parameters from the others */
int pn_run_events(double* s, double* w, PnSolver* ns);     /* after pn_run_rhs: indicators, reset values */

extern const double pn_slot_start[PN_NUM_SLOTS];
extern const int pn_output_slot[PN_DIM(PN_NUM_OUTPUTS)];
extern const double pn_output_scale[PN_DIM(PN_NUM_OUTPUTS)]; /* SI value = slot * scale */
/* per output: the values its value reference gives, 1 for a scalar; FMI 3.0:
   an array output's length at its first component, 0 at its others (whose
   value references are no variables) */
extern const int pn_output_length[PN_DIM(PN_NUM_OUTPUTS)];
/* per parameter slot: fixed at export, tunable, an input, or calculated */
enum { PN_FIXED = 0, PN_TUNABLE = 1, PN_INPUT = 2, PN_CALCULATED = 3 };
extern const unsigned char pn_parameter_kind[PN_DIM(PN_NUM_PARAMETERS)];

/* ---- events (docs/events.md) ----
   The event indicators, in order: one per condition (mode), one per event
   (`when:`), two per switched element. A mode is a slot that only the event
   handling sets; the programs select on it. */
#define PN_NUM_INDICATORS (PN_NUM_MODES + PN_NUM_EVENTS + 2 * PN_NUM_SWITCHES)

/* A condition: its mode's slot (1 while it holds), its indicator's slot (> 0
   where it holds), 0 when it also holds at indicator = 0 (>=, <=). */
typedef struct {
  int slot, indicator, strict;
} PnMode;

/* An event: fires when its indicator crosses zero upwards; its resets (state
   index, slot of the new value) are pn_reset_state/pn_reset_slot[first ...
   first + count - 1]; stop: the run ends there. */
typedef struct {
  int indicator, stop, first_reset, num_resets;
} PnEvent;

/* A switched element: kind 0 Coulomb friction, 1 ideal diode; the slots of
   its modes (held: stuck or blocking; direction: +1 or -1), its effort, its
   flow, its limit (static friction, forward voltage) and its two indicators. */
typedef struct {
  int kind, held, direction, effort, flow, limit;
  int indicator[2];
} PnSwitch;

extern const PnMode pn_modes[PN_DIM(PN_NUM_MODES)];
extern const PnEvent pn_events[PN_DIM(PN_NUM_EVENTS)];
/* The events' names, for messages: event i's is the bytes of pn_event_names
   from pn_event_name_at[i] to the next 0, written as numbers (no text of the
   model file reaches the compiler). */
extern const unsigned char pn_event_names[];
extern const int pn_event_name_at[PN_DIM(PN_NUM_EVENTS)];
extern const int pn_reset_state[PN_DIM(PN_NUM_RESETS)];
extern const int pn_reset_slot[PN_DIM(PN_NUM_RESETS)];
extern const PnSwitch pn_switches[PN_DIM(PN_NUM_SWITCHES)];
/* Per indicator: +1 or -1 when it is +t or -t plus a value constant between
   events (a time event: its crossing time is known in advance), else 0. */
extern const signed char pn_time_slope[PN_DIM(PN_NUM_INDICATORS)];

#endif
