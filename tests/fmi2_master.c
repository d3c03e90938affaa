/* fmi2_master.c — a small FMI 2.0 master that paynter does not write for its
 * own export: it loads an FMU's shared object with dlopen and drives it
 * through the standard's C API alone, with the standard's own header files
 * (tests/fmi2/headers, FMI 2.0.5). Model exchange is integrated by this
 * file's classical Runge-Kutta at a fixed step; co-simulation by fmi2DoStep
 * at every output time. Inputs follow a signal (a constant, a step, a sine),
 * parameters may be set before a run, and a second run after fmi2Reset may set
 * others. Writes the outputs at every output time as CSV.
 *
 *   fmi2_master SO GUID me|cs T_END DT_OUT [options]
 *     --nx N                  model exchange: the number of continuous states
 *     --h H                   model exchange: the Runge-Kutta step (divides DT_OUT)
 *     --tolerance R           co-simulation: fmi2SetupExperiment's tolerance
 *     --out VR[,VR...]        the outputs to record (value references)
 *     --input VR=const:V | VR=step:T0:A0:A1 | VR=sine:OFFSET:AMP:FREQ
 *     --param VR=VALUE        set before initialization
 *     --csv FILE              where the first run's rows go
 *     --then VR=VALUE         after the first run: fmi2Reset, set it (with the
 *                             parameters above), run again ...
 *     --then-csv FILE         ... and write that run's rows here
 *
 * A step input switches at T0 from A0 to A1. Model exchange evaluates it on
 * the side of the integrator step it belongs to (T0 must lie on the step
 * grid), a sine at every stage's time; co-simulation sets every input at each
 * communication point and the FMU holds it over the step.
 *
 * Exit status 0 on success; 1 with a message on stderr when a call fails. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2FunctionTypes.h"

#define MAX_VARS 64
#define MAX_STATES 256

typedef struct {
  fmi2ValueReference vr;
  int kind; /* 0 constant, 1 step, 2 sine */
  double a, b, c, d;
} Signal;

static struct {
  fmi2InstantiateTYPE* Instantiate;
  fmi2FreeInstanceTYPE* FreeInstance;
  fmi2SetupExperimentTYPE* SetupExperiment;
  fmi2EnterInitializationModeTYPE* EnterInitializationMode;
  fmi2ExitInitializationModeTYPE* ExitInitializationMode;
  fmi2TerminateTYPE* Terminate;
  fmi2ResetTYPE* Reset;
  fmi2GetRealTYPE* GetReal;
  fmi2SetRealTYPE* SetReal;
  fmi2NewDiscreteStatesTYPE* NewDiscreteStates;
  fmi2EnterEventModeTYPE* EnterEventMode;
  fmi2EnterContinuousTimeModeTYPE* EnterContinuousTimeMode;
  fmi2CompletedIntegratorStepTYPE* CompletedIntegratorStep;
  fmi2SetTimeTYPE* SetTime;
  fmi2SetContinuousStatesTYPE* SetContinuousStates;
  fmi2GetContinuousStatesTYPE* GetContinuousStates;
  fmi2GetDerivativesTYPE* GetDerivatives;
  fmi2DoStepTYPE* DoStep;
} F;

static Signal inputs[MAX_VARS];
static int num_inputs = 0;
static fmi2ValueReference param_vr[MAX_VARS], then_vr[MAX_VARS], out_vr[MAX_VARS];
static double param_value[MAX_VARS], then_value[MAX_VARS];
static int num_params = 0, num_then = 0, num_out = 0, nx = 0;
static int model_exchange = 0;
static double t_end = 0, dt_out = 0, h = 0, tolerance = 0;

static void fail(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  fprintf(stderr, "fmi2_master: ");
  vfprintf(stderr, format, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

static void check(fmi2Status s, const char* call) {
  if (s != fmi2OK) fail("%s returned status %d", call, (int)s);
}

static void logger(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status, fmi2String category,
                   fmi2String message, ...) {
  va_list ap;
  (void)env;
  va_start(ap, message);
  fprintf(stderr, "[%s %d %s] ", instance ? instance : "", (int)status, category ? category : "");
  vfprintf(stderr, message, ap);
  fprintf(stderr, "\n");
  va_end(ap);
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

static void set_inputs(fmi2Component c, double t, double from) {
  int i;
  for (i = 0; i < num_inputs; ++i) {
    const double v = signal_value(&inputs[i], t, from);
    check(F.SetReal(c, &inputs[i].vr, 1, &v), "fmi2SetReal (input)");
  }
}

static void record(FILE* out, fmi2Component c, double t) {
  double v[MAX_VARS];
  int i;
  if (num_out > 0) check(F.GetReal(c, out_vr, (size_t)num_out, v), "fmi2GetReal (outputs)");
  fprintf(out, "%.17g", t);
  for (i = 0; i < num_out; ++i) fprintf(out, ",%.17g", v[i]);
  fprintf(out, "\n");
}

static void event_iteration(fmi2Component c) {
  fmi2EventInfo info;
  info.newDiscreteStatesNeeded = fmi2True;
  while (info.newDiscreteStatesNeeded) {
    check(F.NewDiscreteStates(c, &info), "fmi2NewDiscreteStates");
    if (info.terminateSimulation) fail("the FMU asked to terminate");
  }
}

/* dx/dt at (t, x) with the inputs of the step from `from`. */
static void derivatives(fmi2Component c, double t, const double* x, double from, double* dx) {
  check(F.SetTime(c, t), "fmi2SetTime");
  if (nx > 0) check(F.SetContinuousStates(c, x, (size_t)nx), "fmi2SetContinuousStates");
  set_inputs(c, t, from);
  if (nx > 0) check(F.GetDerivatives(c, dx, (size_t)nx), "fmi2GetDerivatives");
}

static void run_model_exchange(fmi2Component c, FILE* out) {
  double x[MAX_STATES], k1[MAX_STATES], k2[MAX_STATES], k3[MAX_STATES], k4[MAX_STATES], tmp[MAX_STATES];
  const long per_out = lround(dt_out / h), num_out_rows = lround(t_end / dt_out);
  long row, s;
  int i;
  fmi2Boolean enter_event = fmi2False, terminate = fmi2False;
  if (fabs(per_out * h - dt_out) > 1e-12 * dt_out) fail("--h must divide DT_OUT");
  event_iteration(c);
  check(F.EnterContinuousTimeMode(c), "fmi2EnterContinuousTimeMode");
  if (nx > 0) check(F.GetContinuousStates(c, x, (size_t)nx), "fmi2GetContinuousStates");
  check(F.SetTime(c, 0), "fmi2SetTime");
  set_inputs(c, 0, 0);
  record(out, c, 0);
  for (row = 0; row < num_out_rows; ++row) {
    for (s = 0; s < per_out; ++s) {
      const long k = row * per_out + s;
      const double t = k * h, t1 = (k + 1) * h;
      derivatives(c, t, x, t, k1);
      for (i = 0; i < nx; ++i) tmp[i] = x[i] + 0.5 * h * k1[i];
      derivatives(c, t + 0.5 * h, tmp, t, k2);
      for (i = 0; i < nx; ++i) tmp[i] = x[i] + 0.5 * h * k2[i];
      derivatives(c, t + 0.5 * h, tmp, t, k3);
      for (i = 0; i < nx; ++i) tmp[i] = x[i] + h * k3[i];
      derivatives(c, t1, tmp, t, k4);
      for (i = 0; i < nx; ++i) x[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
      /* the accepted point, with the inputs from t1 on */
      check(F.SetTime(c, t1), "fmi2SetTime");
      if (nx > 0) check(F.SetContinuousStates(c, x, (size_t)nx), "fmi2SetContinuousStates");
      set_inputs(c, t1, t1);
      check(F.CompletedIntegratorStep(c, fmi2True, &enter_event, &terminate), "fmi2CompletedIntegratorStep");
      if (terminate) fail("the FMU asked to terminate");
      if (enter_event) {
        check(F.EnterEventMode(c), "fmi2EnterEventMode");
        event_iteration(c);
        check(F.EnterContinuousTimeMode(c), "fmi2EnterContinuousTimeMode");
      }
    }
    record(out, c, (row + 1) * dt_out);
  }
}

static void run_co_simulation(fmi2Component c, FILE* out) {
  const long num_out_rows = lround(t_end / dt_out);
  long row;
  record(out, c, 0);
  for (row = 0; row < num_out_rows; ++row) {
    const double t = row * dt_out;
    set_inputs(c, t, t);
    check(F.DoStep(c, t, dt_out, fmi2True), "fmi2DoStep");
    record(out, c, (row + 1) * dt_out);
  }
}

/* One run from instantiation (or fmi2Reset) to fmi2Terminate. */
static void run(fmi2Component c, const char* csv, int second) {
  FILE* out = csv ? fopen(csv, "w") : stdout;
  int i;
  if (!out) fail("cannot write %s", csv);
  check(F.SetupExperiment(c, tolerance > 0, tolerance, 0, fmi2True, t_end), "fmi2SetupExperiment");
  if (num_params > 0) check(F.SetReal(c, param_vr, (size_t)num_params, param_value), "fmi2SetReal (parameters)");
  for (i = 0; second && i < num_then; ++i) check(F.SetReal(c, &then_vr[i], 1, &then_value[i]), "fmi2SetReal (--then)");
  set_inputs(c, 0, 0);
  check(F.EnterInitializationMode(c), "fmi2EnterInitializationMode");
  check(F.ExitInitializationMode(c), "fmi2ExitInitializationMode");
  if (model_exchange)
    run_model_exchange(c, out);
  else
    run_co_simulation(c, out);
  check(F.Terminate(c), "fmi2Terminate");
  if (csv) fclose(out);
}

static void parse_assignment(const char* text, fmi2ValueReference* vr, double* value) {
  char* end;
  *vr = (fmi2ValueReference)strtoul(text, &end, 10);
  if (*end != '=') fail("expected VR=VALUE, got %s", text);
  *value = strtod(end + 1, &end);
  if (*end) fail("expected VR=VALUE, got %s", text);
}

static void parse_signal(const char* text, Signal* s) {
  char* end;
  memset(s, 0, sizeof *s);
  s->vr = (fmi2ValueReference)strtoul(text, &end, 10);
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
  const char *so, *guid, *csv = NULL, *then_csv = NULL;
  void* handle;
  fmi2Component c;
  const fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};
  int i;
  if (argc < 6) fail("usage: fmi2_master SO GUID me|cs T_END DT_OUT [options] (see the file's header)");
  so = argv[1];
  guid = argv[2];
  model_exchange = strcmp(argv[3], "me") == 0;
  t_end = atof(argv[4]);
  dt_out = atof(argv[5]);
  for (i = 6; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) fail("%s needs a value", a);
    ++i;
    if (strcmp(a, "--nx") == 0) {
      nx = atoi(v);
      if (nx < 0 || nx > MAX_STATES) fail("--nx %d: at most %d states", nx, MAX_STATES);
    } else if (strcmp(a, "--h") == 0) {
      h = atof(v);
    } else if (strcmp(a, "--tolerance") == 0) {
      tolerance = atof(v);
    } else if (strcmp(a, "--out") == 0) {
      const char* p = v;
      while (*p) {
        char* end;
        if (num_out == MAX_VARS) fail("too many outputs");
        out_vr[num_out++] = (fmi2ValueReference)strtoul(p, &end, 10);
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p) fail("bad --out %s", v);
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
    } else {
      fail("unknown option %s", a);
    }
  }
  if (!(t_end > 0) || !(dt_out > 0)) fail("T_END and DT_OUT must be positive");
  if (model_exchange && !(h > 0)) fail("model exchange needs --h");

  handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  if (!handle) fail("dlopen: %s", dlerror());
  F.Instantiate = (fmi2InstantiateTYPE*)symbol(handle, "fmi2Instantiate");
  F.FreeInstance = (fmi2FreeInstanceTYPE*)symbol(handle, "fmi2FreeInstance");
  F.SetupExperiment = (fmi2SetupExperimentTYPE*)symbol(handle, "fmi2SetupExperiment");
  F.EnterInitializationMode = (fmi2EnterInitializationModeTYPE*)symbol(handle, "fmi2EnterInitializationMode");
  F.ExitInitializationMode = (fmi2ExitInitializationModeTYPE*)symbol(handle, "fmi2ExitInitializationMode");
  F.Terminate = (fmi2TerminateTYPE*)symbol(handle, "fmi2Terminate");
  F.Reset = (fmi2ResetTYPE*)symbol(handle, "fmi2Reset");
  F.GetReal = (fmi2GetRealTYPE*)symbol(handle, "fmi2GetReal");
  F.SetReal = (fmi2SetRealTYPE*)symbol(handle, "fmi2SetReal");
  F.NewDiscreteStates = (fmi2NewDiscreteStatesTYPE*)symbol(handle, "fmi2NewDiscreteStates");
  F.EnterEventMode = (fmi2EnterEventModeTYPE*)symbol(handle, "fmi2EnterEventMode");
  F.EnterContinuousTimeMode = (fmi2EnterContinuousTimeModeTYPE*)symbol(handle, "fmi2EnterContinuousTimeMode");
  F.CompletedIntegratorStep = (fmi2CompletedIntegratorStepTYPE*)symbol(handle, "fmi2CompletedIntegratorStep");
  F.SetTime = (fmi2SetTimeTYPE*)symbol(handle, "fmi2SetTime");
  F.SetContinuousStates = (fmi2SetContinuousStatesTYPE*)symbol(handle, "fmi2SetContinuousStates");
  F.GetContinuousStates = (fmi2GetContinuousStatesTYPE*)symbol(handle, "fmi2GetContinuousStates");
  F.GetDerivatives = (fmi2GetDerivativesTYPE*)symbol(handle, "fmi2GetDerivatives");
  F.DoStep = (fmi2DoStepTYPE*)symbol(handle, "fmi2DoStep");

  c = F.Instantiate("master", model_exchange ? fmi2ModelExchange : fmi2CoSimulation, guid, "", &callbacks, fmi2False,
                    fmi2False);
  if (!c) fail("fmi2Instantiate failed");
  run(c, csv, 0);
  if (num_then > 0 || then_csv) {
    check(F.Reset(c), "fmi2Reset");
    run(c, then_csv, 1);
  }
  F.FreeInstance(c);
  dlclose(handle);
  return 0;
}
