/* fmi3_master.c — a small FMI 3.0 importer that paynter does not write for its
 * own export: it loads an FMU's shared object with dlopen and drives it
 * through the standard's C API alone, with the standard's own header files
 * (tests/fmi3/headers, FMI 3.0.2). Model exchange is integrated by this
 * file's classical Runge-Kutta at a fixed step, with the event handling an
 * FMI 3.0 importer owes the FMU: state events found by the event indicators'
 * domain changes (z > 0 against z <= 0) and located by bisection on each
 * step's cubic Hermite interpolant, time events at the nextEventTime the FMU
 * announces, and an event for each planned jump of an input. Co-simulation
 * is fmi3DoStep at every output time. Inputs follow a signal (a constant, a
 * step, a sine), parameters may be set before a run, and a second run after
 * fmi3Reset may set others. Writes the outputs at every output time as CSV.
 *
 *   fmi3_master SO TOKEN me|cs T_END DT_OUT [options]
 *     --h H                   model exchange: the largest Runge-Kutta step
 *     --tolerance R           fmi3EnterInitializationMode's tolerance
 *     --out VR[:N][,VR[:N]...] the outputs to record (value references; VR:N
 *                             an array output of N values, all recorded)
 *     --input VR=const:V | VR=step:T0:A0:A1 | VR=sine:OFFSET:AMP:FREQ
 *     --param VR=VALUE        set before initialization
 *     --csv FILE              where the first run's rows go
 *     --then VR=VALUE         after the first run: fmi3Reset, set it (with the
 *                             parameters above), run again ...
 *     --then-csv FILE         ... and write that run's rows here
 *     --events FILE           model exchange: the first run's counts of state
 *                             events, time events, input events and events
 *                             that reset the states, one per line
 *     --log                   logging on: the FMU's messages go to stderr
 *
 * The number of continuous states and of event indicators come from the FMU
 * (fmi3GetNumberOfContinuousStates, fmi3GetNumberOfEventIndicators). An
 * output time that an event falls on gives the values before the event.
 * A step input switches at T0 from A0 to A1: model exchange ends a step at
 * T0 and enters event mode to set the new value; a sine is set at every
 * stage's time. Co-simulation sets every input at each communication point
 * and the FMU holds it over the step.
 *
 * Exit status 0 on success; 1 with a message on stderr when a call fails. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3FunctionTypes.h"

#define MAX_VARS 64
#define MAX_STATES 256
#define MAX_INDICATORS 256

typedef struct {
  fmi3ValueReference vr;
  int kind; /* 0 constant, 1 step, 2 sine */
  double a, b, c;
} Signal;

static struct {
  fmi3InstantiateModelExchangeTYPE* InstantiateModelExchange;
  fmi3InstantiateCoSimulationTYPE* InstantiateCoSimulation;
  fmi3FreeInstanceTYPE* FreeInstance;
  fmi3EnterInitializationModeTYPE* EnterInitializationMode;
  fmi3ExitInitializationModeTYPE* ExitInitializationMode;
  fmi3TerminateTYPE* Terminate;
  fmi3ResetTYPE* Reset;
  fmi3GetFloat64TYPE* GetFloat64;
  fmi3SetFloat64TYPE* SetFloat64;
  fmi3UpdateDiscreteStatesTYPE* UpdateDiscreteStates;
  fmi3EnterEventModeTYPE* EnterEventMode;
  fmi3EnterContinuousTimeModeTYPE* EnterContinuousTimeMode;
  fmi3CompletedIntegratorStepTYPE* CompletedIntegratorStep;
  fmi3SetTimeTYPE* SetTime;
  fmi3SetContinuousStatesTYPE* SetContinuousStates;
  fmi3GetContinuousStatesTYPE* GetContinuousStates;
  fmi3GetContinuousStateDerivativesTYPE* GetContinuousStateDerivatives;
  fmi3GetEventIndicatorsTYPE* GetEventIndicators;
  fmi3GetNumberOfContinuousStatesTYPE* GetNumberOfContinuousStates;
  fmi3GetNumberOfEventIndicatorsTYPE* GetNumberOfEventIndicators;
  fmi3DoStepTYPE* DoStep;
} F;

static Signal inputs[MAX_VARS];
static int num_inputs = 0;
static fmi3ValueReference param_vr[MAX_VARS], then_vr[MAX_VARS], out_vr[MAX_VARS];
static double param_value[MAX_VARS], then_value[MAX_VARS];
static int num_params = 0, num_then = 0, num_out = 0, num_out_values = 0, logging = 0;
static size_t nx = 0, nz = 0;
static int model_exchange = 0;
static double t_end = 0, dt_out = 0, h_max = 0, tolerance = 0;
/* model exchange: what the first run went through */
static long state_events = 0, time_events = 0, input_events = 0, resets = 0;

static void fail(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  fprintf(stderr, "fmi3_master: ");
  vfprintf(stderr, format, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

static void check(fmi3Status s, const char* call) {
  if (s != fmi3OK) fail("%s returned status %d", call, (int)s);
}

static void log_message(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category, fmi3String message) {
  (void)env;
  fprintf(stderr, "[%d %s] %s\n", (int)status, category ? category : "", message);
}

static void* symbol(void* handle, const char* name) {
  void* f = dlsym(handle, name);
  if (!f) fail("the FMU does not export %s", name);
  return f;
}

/* The input's value at time t, for an integrator step that starts at `from`
   (a step's jump belongs to the steps from T0 on). */
static double signal_value(const Signal* s, double t, double from) {
  switch (s->kind) {
    case 1: return from >= s->a ? s->c : s->b;
    case 2: return s->a + s->b * sin(2 * 3.14159265358979323846 * s->c * t);
    default: return s->a;
  }
}

static void set_inputs(fmi3Instance c, double t, double from) {
  int i;
  for (i = 0; i < num_inputs; ++i) {
    const double v = signal_value(&inputs[i], t, from);
    check(F.SetFloat64(c, &inputs[i].vr, 1, &v, 1), "fmi3SetFloat64 (input)");
  }
}

/* The first jump of a step input after t (HUGE_VAL: none). */
static double next_input_jump(double t) {
  double next = HUGE_VAL;
  int i;
  for (i = 0; i < num_inputs; ++i)
    if (inputs[i].kind == 1 && inputs[i].a > t && inputs[i].a < next) next = inputs[i].a;
  return next;
}

static void record(FILE* out, fmi3Instance c, double t) {
  double v[MAX_VARS];
  int i;
  if (num_out > 0)
    check(F.GetFloat64(c, out_vr, (size_t)num_out, v, (size_t)num_out_values), "fmi3GetFloat64 (outputs)");
  fprintf(out, "%.17g", t);
  for (i = 0; i < num_out_values; ++i) fprintf(out, ",%.17g", v[i]);
  fprintf(out, "\n");
}

/* ---- model exchange ---- */

static double x[MAX_STATES], x1[MAX_STATES], xe[MAX_STATES], k1[MAX_STATES], k2[MAX_STATES], k3[MAX_STATES],
    k4[MAX_STATES], f1[MAX_STATES], tmp[MAX_STATES];
static double z_before[MAX_INDICATORS], z[MAX_INDICATORS];
static int next_defined = 0, stop = 0;
static double next_time = 0;

/* In event mode: fmi3UpdateDiscreteStates until no update is needed; then
   continuous-time mode, the states and the indicators read again. */
static void event_iteration(fmi3Instance c, int count) {
  fmi3Boolean need = fmi3True, terminate = fmi3False, nominals = fmi3False, values = fmi3False, defined = fmi3False;
  double next = 0;
  int reset = 0, k;
  for (k = 0; need; ++k) {
    if (k == 100) fail("fmi3UpdateDiscreteStates asks for more than 100 updates");
    check(F.UpdateDiscreteStates(c, &need, &terminate, &nominals, &values, &defined, &next),
          "fmi3UpdateDiscreteStates");
    reset = reset || values;
    if (terminate) break;
  }
  if (reset && count) ++resets;
  stop = terminate;
  next_defined = defined;
  next_time = next;
  check(F.EnterContinuousTimeMode(c), "fmi3EnterContinuousTimeMode");
  if (nx > 0) check(F.GetContinuousStates(c, x, nx), "fmi3GetContinuousStates");
  if (nz > 0) check(F.GetEventIndicators(c, z_before, nz), "fmi3GetEventIndicators");
}

static void at(fmi3Instance c, double t, const double* state) {
  check(F.SetTime(c, t), "fmi3SetTime");
  if (nx > 0) check(F.SetContinuousStates(c, state, nx), "fmi3SetContinuousStates");
}

/* dx/dt at (t, state) with the inputs of the step from `from`. */
static void derivatives(fmi3Instance c, double t, const double* state, double from, double* dx) {
  at(c, t, state);
  set_inputs(c, t, from);
  if (nx > 0) check(F.GetContinuousStateDerivatives(c, dx, nx), "fmi3GetContinuousStateDerivatives");
}

static void hermite(double t0, double h, double t, double* y) {
  const double s = (t - t0) / h, s2 = s * s, s3 = s2 * s;
  size_t i;
  for (i = 0; i < nx; ++i)
    y[i] = (2 * s3 - 3 * s2 + 1) * x[i] + (s3 - 2 * s2 + s) * h * k1[i] + (-2 * s3 + 3 * s2) * x1[i] +
           (s3 - s2) * h * f1[i];
}

static void completed_step(fmi3Instance c) {
  fmi3Boolean enter = fmi3False, terminate = fmi3False;
  check(F.CompletedIntegratorStep(c, fmi3True, &enter, &terminate), "fmi3CompletedIntegratorStep");
  if (terminate) fail("the FMU asked to terminate");
  if (enter) fail("the FMU asked for a step event, which paynter's FMUs do not (needsCompletedIntegratorStep false)");
}

static void run_model_exchange(fmi3Instance c, FILE* out, int count) {
  const long num_rows = lround(t_end / dt_out);
  double t = 0;
  long row;
  size_t i;
  event_iteration(c, 0);
  record(out, c, 0);
  for (row = 0; row < num_rows && !stop; ++row) {
    const double T = (row + 1) * dt_out;
    int recorded = 0;
    while (t < T && !stop) {
      double t1 = t + h_max >= T - 1e-9 * h_max ? T : t + h_max, h, te = HUGE_VAL;
      const double jump = next_input_jump(t);
      int time_event = 0, input_event = 0;
      if (next_defined && next_time <= t) fail("a time event announced for the past (%.17g at t = %.17g)", next_time, t);
      if (next_defined && next_time <= t1) t1 = next_time, time_event = 1;
      if (jump <= t1) {
        if (jump < t1) time_event = 0;
        t1 = jump, input_event = 1;
      }
      h = t1 - t;
      derivatives(c, t, x, t, k1);
      for (i = 0; i < nx; ++i) tmp[i] = x[i] + 0.5 * h * k1[i];
      derivatives(c, t + 0.5 * h, tmp, t, k2);
      for (i = 0; i < nx; ++i) tmp[i] = x[i] + 0.5 * h * k2[i];
      derivatives(c, t + 0.5 * h, tmp, t, k3);
      for (i = 0; i < nx; ++i) tmp[i] = x[i] + h * k3[i];
      derivatives(c, t1, tmp, t, k4);
      for (i = 0; i < nx; ++i) x1[i] = x[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
      derivatives(c, t1, x1, t, f1); /* the FMU stands at (t1, x1) */
      if (nz > 0) check(F.GetEventIndicators(c, z, nz), "fmi3GetEventIndicators");
      /* a state event: an indicator changed its domain (z > 0 against z <= 0) */
      for (i = 0; i < nz; ++i) {
        const int side = z_before[i] > 0;
        double a = t, b = t1;
        if ((z[i] > 0) == side) continue;
        while (b - a > 4 * 2.220446049250313e-16 * (fabs(b) > 1 ? fabs(b) : 1)) {
          const double mid = 0.5 * (a + b);
          double zm[MAX_INDICATORS];
          hermite(t, h, mid, xe);
          at(c, mid, xe);
          check(F.GetEventIndicators(c, zm, nz), "fmi3GetEventIndicators");
          if ((zm[i] > 0) != side)
            b = mid;
          else
            a = mid;
        }
        if (b < te) te = b;
      }
      if (te < HUGE_VAL) {
        if (te == t1) {
          memcpy(xe, x1, nx * sizeof *xe);
        } else {
          hermite(t, h, te, xe);
        }
        at(c, te, xe);
        completed_step(c);
        if (te == T) record(out, c, T), recorded = 1;
        check(F.EnterEventMode(c), "fmi3EnterEventMode");
        if (count) ++state_events;
        event_iteration(c, count);
        t = te;
        continue;
      }
      at(c, t1, x1);
      completed_step(c);
      memcpy(x, x1, nx * sizeof *x);
      memcpy(z_before, z, nz * sizeof *z);
      t = t1;
      if (time_event || input_event) {
        if (t == T) record(out, c, T), recorded = 1;
        check(F.EnterEventMode(c), "fmi3EnterEventMode");
        set_inputs(c, t, t); /* the inputs after their jumps */
        if (count) time_events += time_event, input_events += input_event;
        event_iteration(c, count);
      }
    }
    if (!recorded) {
      at(c, T, x);
      record(out, c, T);
    }
  }
}

/* ---- co-simulation ---- */

static void run_co_simulation(fmi3Instance c, FILE* out) {
  const long num_rows = lround(t_end / dt_out);
  long row;
  record(out, c, 0);
  for (row = 0; row < num_rows; ++row) {
    const double t = row * dt_out;
    fmi3Boolean event = fmi3False, terminate = fmi3False, early = fmi3False;
    double last = 0;
    set_inputs(c, t, t);
    check(F.DoStep(c, t, dt_out, fmi3True, &event, &terminate, &early, &last), "fmi3DoStep");
    if (event) fail("fmi3DoStep asks for event mode, which this importer did not ask for (eventModeUsed false)");
    if (early) fail("fmi3DoStep returned early, which this importer did not allow");
    if (terminate) fail("the FMU asked to terminate at t = %.17g", last);
    if (fabs(last - (row + 1) * dt_out) > 1e-12) fail("fmi3DoStep ended at %.17g", last);
    record(out, c, (row + 1) * dt_out);
  }
}

/* One run from instantiation (or fmi3Reset) to fmi3Terminate. */
static void run(fmi3Instance c, const char* csv, int second) {
  FILE* out = csv ? fopen(csv, "w") : stdout;
  int i;
  if (!out) fail("cannot write %s", csv);
  if (num_params > 0)
    check(F.SetFloat64(c, param_vr, (size_t)num_params, param_value, (size_t)num_params), "fmi3SetFloat64 (parameters)");
  for (i = 0; second && i < num_then; ++i)
    check(F.SetFloat64(c, &then_vr[i], 1, &then_value[i], 1), "fmi3SetFloat64 (--then)");
  set_inputs(c, 0, 0);
  check(F.EnterInitializationMode(c, tolerance > 0, tolerance, 0, fmi3True, t_end), "fmi3EnterInitializationMode");
  check(F.ExitInitializationMode(c), "fmi3ExitInitializationMode");
  stop = 0;
  if (model_exchange)
    run_model_exchange(c, out, !second);
  else
    run_co_simulation(c, out);
  check(F.Terminate(c), "fmi3Terminate");
  if (csv) fclose(out);
}

static void parse_assignment(const char* text, fmi3ValueReference* vr, double* value) {
  char* end;
  *vr = (fmi3ValueReference)strtoul(text, &end, 10);
  if (*end != '=') fail("expected VR=VALUE, got %s", text);
  *value = strtod(end + 1, &end);
  if (*end) fail("expected VR=VALUE, got %s", text);
}

static void parse_signal(const char* text, Signal* s) {
  char* end;
  memset(s, 0, sizeof *s);
  s->vr = (fmi3ValueReference)strtoul(text, &end, 10);
  if (strncmp(end, "=const:", 7) == 0) {
    s->kind = 0;
    if (sscanf(end + 7, "%lf", &s->a) != 1) fail("bad signal %s", text);
  } else if (strncmp(end, "=step:", 6) == 0) {
    s->kind = 1;
    if (sscanf(end + 6, "%lf:%lf:%lf", &s->a, &s->b, &s->c) != 3) fail("bad signal %s", text);
  } else if (strncmp(end, "=sine:", 6) == 0) {
    s->kind = 2;
    if (sscanf(end + 6, "%lf:%lf:%lf", &s->a, &s->b, &s->c) != 3) fail("bad signal %s", text);
  } else {
    fail("bad signal %s (VR=const:V, VR=step:T0:A0:A1 or VR=sine:OFFSET:AMP:FREQ)", text);
  }
}

int main(int argc, char** argv) {
  const char *so, *token, *csv = NULL, *then_csv = NULL, *events = NULL;
  void* handle;
  fmi3Instance c;
  int i;
  if (argc < 6) fail("usage: fmi3_master SO TOKEN me|cs T_END DT_OUT [options] (see the file's header)");
  so = argv[1];
  token = argv[2];
  model_exchange = strcmp(argv[3], "me") == 0;
  t_end = atof(argv[4]);
  dt_out = atof(argv[5]);
  for (i = 6; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--log") == 0) {
      logging = 1;
      continue;
    }
    if (!v) fail("%s needs a value", a);
    ++i;
    if (strcmp(a, "--h") == 0) {
      h_max = atof(v);
    } else if (strcmp(a, "--tolerance") == 0) {
      tolerance = atof(v);
    } else if (strcmp(a, "--out") == 0) {
      const char* p = v;
      while (*p) {
        char* end;
        if (num_out == MAX_VARS) fail("too many outputs");
        out_vr[num_out++] = (fmi3ValueReference)strtoul(p, &end, 10);
        if (end == p) fail("bad --out %s", v);
        if (*end == ':') {
          const char* size = end + 1;
          const long n = strtol(size, &end, 10);
          if (end == size || n < 1) fail("bad --out %s", v);
          num_out_values += (int)n;
        } else {
          ++num_out_values;
        }
        if (num_out_values > MAX_VARS) fail("too many output values");
        p = *end == ',' ? end + 1 : end;
      }
    } else if (strcmp(a, "--input") == 0) {
      if (num_inputs == MAX_VARS) fail("too many inputs");
      parse_signal(v, &inputs[num_inputs++]);
    } else if (strcmp(a, "--param") == 0) {
      if (num_params == MAX_VARS) fail("too many parameters");
      parse_assignment(v, &param_vr[num_params], &param_value[num_params]);
      ++num_params;
    } else if (strcmp(a, "--then") == 0) {
      if (num_then == MAX_VARS) fail("too many parameters");
      parse_assignment(v, &then_vr[num_then], &then_value[num_then]);
      ++num_then;
    } else if (strcmp(a, "--csv") == 0) {
      csv = v;
    } else if (strcmp(a, "--then-csv") == 0) {
      then_csv = v;
    } else if (strcmp(a, "--events") == 0) {
      events = v;
    } else {
      fail("unknown option %s", a);
    }
  }
  if (!(t_end > 0) || !(dt_out > 0)) fail("T_END and DT_OUT must be positive");
  if (model_exchange && !(h_max > 0)) fail("model exchange needs --h");

  handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  if (!handle) fail("dlopen: %s", dlerror());
  F.InstantiateModelExchange = (fmi3InstantiateModelExchangeTYPE*)symbol(handle, "fmi3InstantiateModelExchange");
  F.InstantiateCoSimulation = (fmi3InstantiateCoSimulationTYPE*)symbol(handle, "fmi3InstantiateCoSimulation");
  F.FreeInstance = (fmi3FreeInstanceTYPE*)symbol(handle, "fmi3FreeInstance");
  F.EnterInitializationMode = (fmi3EnterInitializationModeTYPE*)symbol(handle, "fmi3EnterInitializationMode");
  F.ExitInitializationMode = (fmi3ExitInitializationModeTYPE*)symbol(handle, "fmi3ExitInitializationMode");
  F.Terminate = (fmi3TerminateTYPE*)symbol(handle, "fmi3Terminate");
  F.Reset = (fmi3ResetTYPE*)symbol(handle, "fmi3Reset");
  F.GetFloat64 = (fmi3GetFloat64TYPE*)symbol(handle, "fmi3GetFloat64");
  F.SetFloat64 = (fmi3SetFloat64TYPE*)symbol(handle, "fmi3SetFloat64");
  F.UpdateDiscreteStates = (fmi3UpdateDiscreteStatesTYPE*)symbol(handle, "fmi3UpdateDiscreteStates");
  F.EnterEventMode = (fmi3EnterEventModeTYPE*)symbol(handle, "fmi3EnterEventMode");
  F.EnterContinuousTimeMode = (fmi3EnterContinuousTimeModeTYPE*)symbol(handle, "fmi3EnterContinuousTimeMode");
  F.CompletedIntegratorStep = (fmi3CompletedIntegratorStepTYPE*)symbol(handle, "fmi3CompletedIntegratorStep");
  F.SetTime = (fmi3SetTimeTYPE*)symbol(handle, "fmi3SetTime");
  F.SetContinuousStates = (fmi3SetContinuousStatesTYPE*)symbol(handle, "fmi3SetContinuousStates");
  F.GetContinuousStates = (fmi3GetContinuousStatesTYPE*)symbol(handle, "fmi3GetContinuousStates");
  F.GetContinuousStateDerivatives =
      (fmi3GetContinuousStateDerivativesTYPE*)symbol(handle, "fmi3GetContinuousStateDerivatives");
  F.GetEventIndicators = (fmi3GetEventIndicatorsTYPE*)symbol(handle, "fmi3GetEventIndicators");
  F.GetNumberOfContinuousStates =
      (fmi3GetNumberOfContinuousStatesTYPE*)symbol(handle, "fmi3GetNumberOfContinuousStates");
  F.GetNumberOfEventIndicators = (fmi3GetNumberOfEventIndicatorsTYPE*)symbol(handle, "fmi3GetNumberOfEventIndicators");
  F.DoStep = (fmi3DoStepTYPE*)symbol(handle, "fmi3DoStep");

  if (model_exchange)
    c = F.InstantiateModelExchange("master", token, NULL, fmi3False, logging ? fmi3True : fmi3False, NULL,
                                   log_message);
  else
    c = F.InstantiateCoSimulation("master", token, NULL, fmi3False, logging ? fmi3True : fmi3False, fmi3False,
                                  fmi3False, NULL, 0, NULL, log_message, NULL);
  if (!c) fail("fmi3Instantiate%s failed", model_exchange ? "ModelExchange" : "CoSimulation");
  if (model_exchange) {
    check(F.GetNumberOfContinuousStates(c, &nx), "fmi3GetNumberOfContinuousStates");
    check(F.GetNumberOfEventIndicators(c, &nz), "fmi3GetNumberOfEventIndicators");
    if (nx > MAX_STATES || nz > MAX_INDICATORS) fail("%u states and %u event indicators: too many", (unsigned)nx,
                                                     (unsigned)nz);
  }
  run(c, csv, 0);
  if (num_then > 0 || then_csv) {
    check(F.Reset(c), "fmi3Reset");
    run(c, then_csv, 1);
  }
  F.FreeInstance(c);
  dlclose(handle);
  if (events) {
    FILE* e = fopen(events, "w");
    if (!e) fail("cannot write %s", events);
    fprintf(e, "state_events %ld\ntime_events %ld\ninput_events %ld\nresets %ld\n", state_events, time_events,
            input_events, resets);
    fclose(e);
  }
  return 0;
}
