/* fmu3.c: the FMI 3.0 functions of every FMU paynter exports with
   `--fmi-version 3` (model exchange and co-simulation); src/fmi/runtime/fmu3.c
   in paynter's sources, embedded into paynter by the build and written into
   each FMU's sources/. A thin layer over the runtime's core (pn_core.c, the
   same for FMI 2.0): each function checks that it may be called in the
   instance's state and for its kind, as FMI 3.0 says (sections 2.3, 3.2 and
   4.2), and calls the core. As the standard asks, a call that returns
   fmi3Error leaves the instance terminated: its values may be read, then
   fmi3Reset or fmi3FreeInstance. Messages go to the importer's logMessage only
   when logging is on (loggingOn, fmi3SetDebugLogging), but an instantiation
   that fails always says why. Co-simulation handles the events inside
   fmi3DoStep (hasEventMode is false). Plain C99. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "paynter_fmi3.h"
#include "pn_core.h"

PN_FMI3_DECLARE_FUNCTIONS

typedef struct {
  PnInstance core; /* first: a PnInstance* is a Pn3Instance* */
  fmi3LogMessageCallback log;
  fmi3InstanceEnvironment env;
  int log_category[2]; /* logStatusError, logEvents: turned on */
  int early_return_allowed;
} Pn3Instance;

static const char* const pn3_categories[2] = {"logStatusError", "logEvents"};

static void pn3_emit(PnInstance* core, int status, int category, const char* text) {
  Pn3Instance* m = (Pn3Instance*)core;
  if (!m->log || !m->log_category[category]) return;
  m->log(m->env, (fmi3Status)status, pn3_categories[category], text);
}

/* The instance behind a pointer (NULL stays NULL). */
static PnInstance* pn3(fmi3Instance c) { return c ? &((Pn3Instance*)c)->core : NULL; }

/* A call that fails: the instance is terminated (FMI 3.0, section 2.3.1). */
static fmi3Status pn3_error(PnInstance* m) {
  if (m) m->state = PN_ERROR;
  return fmi3Error;
}

/* The number of values is the value references': one for a scalar, an array
   output's length for it (an unknown value reference counted as one, and
   reported by the core). */
static int pn3_values(PnInstance* m, const char* fn, const fmi3ValueReference* vr, size_t nvr, size_t n_values) {
  size_t i, n = 0;
  for (i = 0; i < nvr && vr; ++i) {
    const size_t count = pn_value_count(m, vr[i]);
    n += count > 0 ? count : 1;
  }
  if (!vr) n = nvr;
  if (n_values == n) return 1;
  pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
         "%s: %u values for %u value references, which have %u (a scalar has one value, an array output its length)",
         fn, (unsigned)n_values, (unsigned)nvr, (unsigned)n);
  return 0;
}

/* A time past the stop time given to fmi3EnterInitializationMode (up to rounding). */
static int pn3_before_stop(PnInstance* m, const char* fn, double t) {
  const double stop = m->stop_time;
  if (!(t > stop + 64 * PN_EPS * (fabs(stop) > 1 ? fabs(stop) : 1))) return 1;
  pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: t = %.17g lies past the stop time %.17g", fn, t, stop);
  return 0;
}

/* ---- common functions ---- */

const char* fmi3GetVersion(void) { return "3.0"; }

fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[]) {
  PnInstance* m = pn3(c);
  Pn3Instance* m3 = (Pn3Instance*)c;
  size_t i;
  int k, set[2] = {0, 0};
  if (!pn_allowed(m, "fmi3SetDebugLogging", PN_ANY)) return pn3_error(m);
  if (nCategories > 0 && !categories) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "fmi3SetDebugLogging: categories is NULL");
    return pn3_error(m);
  }
  for (i = 0; i < nCategories; ++i) {
    for (k = 0; k < 2; ++k)
      if (categories[i] && strcmp(categories[i], pn3_categories[k]) == 0) break;
    if (k == 2) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
             "fmi3SetDebugLogging: unknown log category (known: logStatusError, logEvents)");
      return pn3_error(m);
    }
    set[k] = 1;
  }
  for (k = 0; k < 2; ++k)
    if (nCategories == 0 || set[k]) m3->log_category[k] = loggingOn ? 1 : 0;
  return fmi3OK;
}

/* Checks an instantiation's arguments (each failure logged); the instance, or NULL. */
static fmi3Instance pn3_instantiate(const char* fn, int kind, fmi3String instanceName, fmi3String token,
                                    fmi3Boolean loggingOn, fmi3InstanceEnvironment env,
                                    fmi3LogMessageCallback logMessage, const char* refused) {
  Pn3Instance tmp;
  Pn3Instance* m;
  const char* p = instanceName;
  memset(&tmp, 0, sizeof tmp);
  tmp.log = logMessage;
  tmp.env = env;
  tmp.log_category[PN_LOG_ERROR] = 1; /* a failed instantiation must say why */
  tmp.core.name = (char*)"";
  tmp.core.version = 3;
  tmp.core.emit = pn3_emit;
  while (p && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
  if (!p || !*p) {
    pn_log(&tmp.core, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: the instance name is missing", fn);
    return NULL;
  }
  if (!token || strcmp(token, PN_GUID) != 0) {
    pn_log(&tmp.core, PN_STATUS_ERROR, PN_LOG_ERROR,
           "%s: the instantiation token does not match this FMU's (%s): its modelDescription.xml is another's", fn,
           PN_GUID);
    return NULL;
  }
  if ((kind == PN_ME && !PN_KIND_ME) || (kind == PN_CS && !PN_KIND_CS)) {
    pn_log(&tmp.core, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: this FMU was not exported for %s", fn,
           kind == PN_ME ? "model exchange" : "co-simulation");
    return NULL;
  }
  if (refused) {
    pn_log(&tmp.core, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: %s", fn, refused);
    return NULL;
  }
  m = (Pn3Instance*)calloc(1, sizeof *m);
  if (!m) return NULL;
  m->log = logMessage;
  m->env = env;
  m->log_category[0] = m->log_category[1] = loggingOn ? 1 : 0;
  if (pn_init_instance(&m->core, instanceName, 3, kind, pn3_emit)) {
    free(m);
    return NULL;
  }
  m->core.indicator_variables = 1;
  return m;
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage) {
  (void)resourcePath;
  (void)visible;
  return pn3_instantiate("fmi3InstantiateModelExchange", PN_ME, instanceName, instantiationToken, loggingOn,
                         instanceEnvironment, logMessage, NULL);
}

fmi3Instance fmi3InstantiateCoSimulation(fmi3String instanceName, fmi3String instantiationToken,
                                         fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                                         fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed,
                                         const fmi3ValueReference requiredIntermediateVariables[],
                                         size_t nRequiredIntermediateVariables,
                                         fmi3InstanceEnvironment instanceEnvironment,
                                         fmi3LogMessageCallback logMessage,
                                         fmi3IntermediateUpdateCallback intermediateUpdate) {
  const char* refused = NULL;
  fmi3Instance c;
  (void)resourcePath;
  (void)visible;
  (void)requiredIntermediateVariables;
  (void)intermediateUpdate;
  if (eventModeUsed)
    refused = "eventModeUsed is true, but this FMU has no event mode in co-simulation (hasEventMode is false): it "
              "handles its events inside fmi3DoStep";
  else if (nRequiredIntermediateVariables > 0)
    refused = "no variable of this FMU may be accessed in intermediate updates (providesIntermediateUpdate is false)";
  c = pn3_instantiate("fmi3InstantiateCoSimulation", PN_CS, instanceName, instantiationToken, loggingOn,
                      instanceEnvironment, logMessage, refused);
  if (c) ((Pn3Instance*)c)->early_return_allowed = earlyReturnAllowed ? 1 : 0;
  return c;
}

fmi3Instance fmi3InstantiateScheduledExecution(fmi3String instanceName, fmi3String instantiationToken,
                                               fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                                               fmi3InstanceEnvironment instanceEnvironment,
                                               fmi3LogMessageCallback logMessage, fmi3ClockUpdateCallback clockUpdate,
                                               fmi3LockPreemptionCallback lockPreemption,
                                               fmi3UnlockPreemptionCallback unlockPreemption) {
  (void)resourcePath;
  (void)visible;
  (void)clockUpdate;
  (void)lockPreemption;
  (void)unlockPreemption;
  return pn3_instantiate("fmi3InstantiateScheduledExecution", PN_ME, instanceName, instantiationToken, loggingOn,
                         instanceEnvironment, logMessage,
                         "this FMU was not exported for scheduled execution (model exchange and co-simulation only)");
}

void fmi3FreeInstance(fmi3Instance c) {
  if (!c) return;
  pn_free_instance(pn3(c));
  free(c);
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean toleranceDefined, fmi3Float64 tolerance,
                                       fmi3Float64 startTime, fmi3Boolean stopTimeDefined, fmi3Float64 stopTime) {
  PnInstance* m = pn3(c);
  if (!pn_allowed(m, "fmi3EnterInitializationMode", PN_INSTANTIATED) ||
      pn_setup(m, "fmi3EnterInitializationMode", toleranceDefined, tolerance, startTime, stopTimeDefined, stopTime))
    return pn3_error(m);
  m->state = PN_INIT;
  return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance c) {
  PnInstance* m = pn3(c);
  if (!pn_allowed(m, "fmi3ExitInitializationMode", PN_INIT) || pn_initialize(m)) return pn3_error(m);
  m->state = m->kind == PN_ME ? PN_EVENT : PN_STEP_COMPLETE;
  return fmi3OK;
}

fmi3Status fmi3EnterEventMode(fmi3Instance c) {
  PnInstance* m = pn3(c);
  if (!m) return fmi3Error;
  if (m->kind == PN_CS) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
           "fmi3EnterEventMode: this FMU has no event mode in co-simulation (hasEventMode is false): it handles its "
           "events inside fmi3DoStep");
    return pn3_error(m);
  }
  if (!pn_allowed(m, "fmi3EnterEventMode", PN_CONT)) return pn3_error(m);
  m->state = PN_EVENT;
  return fmi3OK;
}

fmi3Status fmi3Terminate(fmi3Instance c) {
  PnInstance* m = pn3(c);
  if (!pn_allowed(m, "fmi3Terminate", PN_EVENT | PN_CONT | PN_STEP_COMPLETE)) return pn3_error(m);
  m->state = PN_TERMINATED;
  return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance c) {
  PnInstance* m = pn3(c);
  if (!pn_allowed(m, "fmi3Reset", PN_ANY)) return pn3_error(m);
  pn_reset_values(m);
  m->state = PN_INSTANTIATED;
  return fmi3OK;
}

/* ---- variables: all Float64, scalars and array outputs ---- */

fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3Float64 values[],
                          size_t nValues) {
  PnInstance* m = pn3(c);
  if (!pn_allowed(m, "fmi3GetFloat64", PN_ANY) || !pn3_values(m, "fmi3GetFloat64", vr, nvr, nValues) ||
      pn_get_real(m, "fmi3GetFloat64", vr, nvr, values))
    return pn3_error(m);
  return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, const fmi3Float64 values[],
                          size_t nValues) {
  PnInstance* m = pn3(c);
  const int me = m && m->kind == PN_ME;
  if (!pn_allowed(m, "fmi3SetFloat64", PN_INSTANTIATED | PN_INIT | PN_EVENT | PN_CONT | PN_STEP_COMPLETE) ||
      !pn3_values(m, "fmi3SetFloat64", vr, nvr, nValues) ||
      pn_set_real(m, "fmi3SetFloat64", vr, nvr, values, PN_INSTANTIATED | PN_INIT | (me ? PN_EVENT : PN_STEP_COMPLETE),
                  PN_INSTANTIATED | PN_INIT | (me ? PN_EVENT | PN_CONT : PN_STEP_COMPLETE),
                  PN_INSTANTIATED | PN_INIT | (me ? PN_EVENT | PN_CONT : 0)))
    return pn3_error(m);
  return fmi3OK;
}

/* The types the FMU has no variables of. */
static fmi3Status pn3_no_variables(fmi3Instance c, const char* fn, size_t nvr, const void* vr, const void* values,
                                   const char* type) {
  PnInstance* m = pn3(c);
  if (!pn_allowed(m, fn, PN_ANY) || pn_no_variables(m, fn, nvr, vr, values, type)) return pn3_error(m);
  return fmi3OK;
}

#define PN3_NO_VARIABLES(T)                                                                                       \
  fmi3Status fmi3Get##T(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3##T values[],             \
                        size_t nValues) {                                                                        \
    (void)nValues;                                                                                                \
    return pn3_no_variables(c, "fmi3Get" #T, nvr, vr, values, #T);                                               \
  }                                                                                                               \
  fmi3Status fmi3Set##T(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, const fmi3##T values[],       \
                        size_t nValues) {                                                                        \
    (void)nValues;                                                                                                \
    return pn3_no_variables(c, "fmi3Set" #T, nvr, vr, values, #T);                                               \
  }
PN3_NO_VARIABLES(Float32)
PN3_NO_VARIABLES(Int8)
PN3_NO_VARIABLES(UInt8)
PN3_NO_VARIABLES(Int16)
PN3_NO_VARIABLES(UInt16)
PN3_NO_VARIABLES(Int32)
PN3_NO_VARIABLES(UInt32)
PN3_NO_VARIABLES(Int64)
PN3_NO_VARIABLES(UInt64)
PN3_NO_VARIABLES(Boolean)
PN3_NO_VARIABLES(String)
#undef PN3_NO_VARIABLES

fmi3Status fmi3GetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, size_t valueSizes[],
                         fmi3Binary values[], size_t nValues) {
  (void)valueSizes;
  (void)nValues;
  return pn3_no_variables(c, "fmi3GetBinary", nvr, vr, values, "Binary");
}
fmi3Status fmi3SetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, const size_t valueSizes[],
                         const fmi3Binary values[], size_t nValues) {
  (void)valueSizes;
  (void)nValues;
  return pn3_no_variables(c, "fmi3SetBinary", nvr, vr, values, "Binary");
}
fmi3Status fmi3GetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3Clock values[]) {
  return pn3_no_variables(c, "fmi3GetClock", nvr, vr, values, "Clock");
}
fmi3Status fmi3SetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, const fmi3Clock values[]) {
  return pn3_no_variables(c, "fmi3SetClock", nvr, vr, values, "Clock");
}

/* ---- what the FMU does not provide (its capability flags say so) ---- */

static fmi3Status pn3_unsupported(fmi3Instance c, const char* fn) {
  PnInstance* m = pn3(c);
  pn_unsupported(m, fn);
  return pn3_error(m);
}

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance c, fmi3ValueReference vr, size_t* nDependencies) {
  (void)vr;
  (void)nDependencies;
  return pn3_unsupported(c, "fmi3GetNumberOfVariableDependencies (providesPerElementDependencies is false)");
}
fmi3Status fmi3GetVariableDependencies(fmi3Instance c, fmi3ValueReference dependent, size_t elementIndicesOfDependent[],
                                       fmi3ValueReference independents[], size_t elementIndicesOfIndependents[],
                                       fmi3DependencyKind dependencyKinds[], size_t nDependencies) {
  (void)dependent, (void)elementIndicesOfDependent, (void)independents, (void)elementIndicesOfIndependents;
  (void)dependencyKinds, (void)nDependencies;
  return pn3_unsupported(c, "fmi3GetVariableDependencies (providesPerElementDependencies is false)");
}
fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState* s) {
  (void)s;
  return pn3_unsupported(c, "fmi3GetFMUState");
}
fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState s) {
  (void)s;
  return pn3_unsupported(c, "fmi3SetFMUState");
}
fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState* s) {
  (void)s;
  return pn3_unsupported(c, "fmi3FreeFMUState");
}
fmi3Status fmi3SerializedFMUStateSize(fmi3Instance c, fmi3FMUState s, size_t* size) {
  (void)s;
  (void)size;
  return pn3_unsupported(c, "fmi3SerializedFMUStateSize");
}
fmi3Status fmi3SerializeFMUState(fmi3Instance c, fmi3FMUState s, fmi3Byte serializedState[], size_t size) {
  (void)s, (void)serializedState, (void)size;
  return pn3_unsupported(c, "fmi3SerializeFMUState");
}
fmi3Status fmi3DeserializeFMUState(fmi3Instance c, const fmi3Byte serializedState[], size_t size, fmi3FMUState* s) {
  (void)s, (void)serializedState, (void)size;
  return pn3_unsupported(c, "fmi3DeserializeFMUState");
}
fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference unknowns[], size_t nUnknowns,
                                        const fmi3ValueReference knowns[], size_t nKnowns, const fmi3Float64 seed[],
                                        size_t nSeed, fmi3Float64 sensitivity[], size_t nSensitivity) {
  (void)unknowns, (void)nUnknowns, (void)knowns, (void)nKnowns, (void)seed, (void)nSeed, (void)sensitivity;
  (void)nSensitivity;
  return pn3_unsupported(c, "fmi3GetDirectionalDerivative");
}
fmi3Status fmi3GetAdjointDerivative(fmi3Instance c, const fmi3ValueReference unknowns[], size_t nUnknowns,
                                    const fmi3ValueReference knowns[], size_t nKnowns, const fmi3Float64 seed[],
                                    size_t nSeed, fmi3Float64 sensitivity[], size_t nSensitivity) {
  (void)unknowns, (void)nUnknowns, (void)knowns, (void)nKnowns, (void)seed, (void)nSeed, (void)sensitivity;
  (void)nSensitivity;
  return pn3_unsupported(c, "fmi3GetAdjointDerivative");
}
fmi3Status fmi3GetOutputDerivatives(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                    const fmi3Int32 orders[], fmi3Float64 values[], size_t nValues) {
  (void)vr, (void)nvr, (void)orders, (void)values, (void)nValues;
  return pn3_unsupported(c, "fmi3GetOutputDerivatives (maxOutputDerivativeOrder is 0)");
}

/* No structural parameters, no clocks, no scheduled execution. */
static fmi3Status pn3_none(fmi3Instance c, const char* fn, const char* what) {
  PnInstance* m = pn3(c);
  if (m) pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: this FMU has no %s", fn, what);
  return pn3_error(m);
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance c) {
  return pn3_none(c, "fmi3EnterConfigurationMode", "structural parameters");
}
fmi3Status fmi3ExitConfigurationMode(fmi3Instance c) {
  return pn3_none(c, "fmi3ExitConfigurationMode", "structural parameters");
}
fmi3Status fmi3GetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3Float64 intervals[],
                                  fmi3IntervalQualifier qualifiers[]) {
  (void)vr, (void)nvr, (void)intervals, (void)qualifiers;
  return pn3_none(c, "fmi3GetIntervalDecimal", "clocks");
}
fmi3Status fmi3GetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3UInt64 counters[],
                                   fmi3UInt64 resolutions[], fmi3IntervalQualifier qualifiers[]) {
  (void)vr, (void)nvr, (void)counters, (void)resolutions, (void)qualifiers;
  return pn3_none(c, "fmi3GetIntervalFraction", "clocks");
}
fmi3Status fmi3GetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3Float64 shifts[]) {
  (void)vr, (void)nvr, (void)shifts;
  return pn3_none(c, "fmi3GetShiftDecimal", "clocks");
}
fmi3Status fmi3GetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3UInt64 counters[],
                                fmi3UInt64 resolutions[]) {
  (void)vr, (void)nvr, (void)counters, (void)resolutions;
  return pn3_none(c, "fmi3GetShiftFraction", "clocks");
}
fmi3Status fmi3SetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                  const fmi3Float64 intervals[]) {
  (void)vr, (void)nvr, (void)intervals;
  return pn3_none(c, "fmi3SetIntervalDecimal", "clocks");
}
fmi3Status fmi3SetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                   const fmi3UInt64 counters[], const fmi3UInt64 resolutions[]) {
  (void)vr, (void)nvr, (void)counters, (void)resolutions;
  return pn3_none(c, "fmi3SetIntervalFraction", "clocks");
}
fmi3Status fmi3SetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, const fmi3Float64 shifts[]) {
  (void)vr, (void)nvr, (void)shifts;
  return pn3_none(c, "fmi3SetShiftDecimal", "clocks");
}
fmi3Status fmi3SetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                const fmi3UInt64 counters[], const fmi3UInt64 resolutions[]) {
  (void)vr, (void)nvr, (void)counters, (void)resolutions;
  return pn3_none(c, "fmi3SetShiftFraction", "clocks");
}
fmi3Status fmi3ActivateModelPartition(fmi3Instance c, fmi3ValueReference clockReference, fmi3Float64 activationTime) {
  (void)clockReference, (void)activationTime;
  return pn3_none(c, "fmi3ActivateModelPartition", "model partitions (no scheduled execution)");
}

/* ---- event mode (model exchange) ---- */

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance c) {
  PnInstance* m = pn3(c);
  /* providesEvaluateDiscreteStates is false: the call is ignored */
  if (!pn_allowed(m, "fmi3EvaluateDiscreteStates", PN_EVENT)) return pn3_error(m);
  return fmi3OK;
}

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean* discreteStatesNeedUpdate,
                                    fmi3Boolean* terminateSimulation, fmi3Boolean* nominalsOfContinuousStatesChanged,
                                    fmi3Boolean* valuesOfContinuousStatesChanged, fmi3Boolean* nextEventTimeDefined,
                                    fmi3Float64* nextEventTime) {
  PnInstance* m = pn3(c);
  int states_changed = 0, terminate = 0, next_defined = 0;
  double next = 0;
  if (!pn_allowed(m, "fmi3UpdateDiscreteStates", PN_EVENT)) return pn3_error(m);
  if (!discreteStatesNeedUpdate || !terminateSimulation || !nominalsOfContinuousStatesChanged ||
      !valuesOfContinuousStatesChanged || !nextEventTimeDefined || !nextEventTime) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "fmi3UpdateDiscreteStates: NULL argument");
    return pn3_error(m);
  }
  if (pn_update_discrete_states(m, &states_changed, &terminate, &next_defined, &next)) return pn3_error(m);
  *discreteStatesNeedUpdate = fmi3False; /* the event handling settles the modes itself */
  *terminateSimulation = terminate ? fmi3True : fmi3False;
  *nominalsOfContinuousStatesChanged = fmi3False;
  *valuesOfContinuousStatesChanged = states_changed ? fmi3True : fmi3False;
  *nextEventTimeDefined = next_defined ? fmi3True : fmi3False;
  *nextEventTime = next;
  return fmi3OK;
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) {
  PnInstance* m = pn3(c);
  if (!pn_allowed(m, "fmi3EnterContinuousTimeMode", PN_EVENT) || !pn_is_kind(m, "fmi3EnterContinuousTimeMode", PN_ME))
    return pn3_error(m);
  m->state = PN_CONT;
  return fmi3OK;
}

fmi3Status fmi3EnterStepMode(fmi3Instance c) {
  PnInstance* m = pn3(c);
  if (!m) return fmi3Error;
  pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
         "fmi3EnterStepMode: this FMU has no event mode in co-simulation (hasEventMode is false)%s",
         m->kind == PN_ME ? "; fmi3EnterStepMode is a co-simulation function and this instance is for model exchange"
                          : "");
  return pn3_error(m);
}

/* ---- model exchange ---- */

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean* enterEventMode, fmi3Boolean* terminateSimulation) {
  PnInstance* m = pn3(c);
  (void)noSetFMUStatePriorToCurrentPoint;
  if (!pn_allowed(m, "fmi3CompletedIntegratorStep", PN_CONT) || !pn_is_kind(m, "fmi3CompletedIntegratorStep", PN_ME))
    return pn3_error(m);
  if (!enterEventMode || !terminateSimulation) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "fmi3CompletedIntegratorStep: NULL argument");
    return pn3_error(m);
  }
  *enterEventMode = fmi3False;
  *terminateSimulation = fmi3False;
  return fmi3OK;
}

fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 time) {
  PnInstance* m = pn3(c);
  if (!pn_allowed(m, "fmi3SetTime", PN_CONT) || !pn_is_kind(m, "fmi3SetTime", PN_ME) ||
      pn_set_time(m, "fmi3SetTime", time) || !pn3_before_stop(m, "fmi3SetTime", time))
    return pn3_error(m);
  return fmi3OK;
}

fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t nx) {
  PnInstance* m = pn3(c);
  if (!pn_allowed(m, "fmi3SetContinuousStates", PN_CONT) || !pn_is_kind(m, "fmi3SetContinuousStates", PN_ME) ||
      pn_check_nx(m, "fmi3SetContinuousStates", x, nx))
    return pn3_error(m);
  pn_set_states(m, x);
  return fmi3OK;
}

#define PN3_ME_READ (PN_INIT | PN_EVENT | PN_CONT | PN_TERMINATED | PN_ERROR)

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 derivatives[], size_t nx) {
  PnInstance* m = pn3(c);
  if (!pn_allowed(m, "fmi3GetContinuousStateDerivatives", PN3_ME_READ) ||
      !pn_is_kind(m, "fmi3GetContinuousStateDerivatives", PN_ME) ||
      pn_check_nx(m, "fmi3GetContinuousStateDerivatives", derivatives, nx) || pn_get_derivatives(m, derivatives))
    return pn3_error(m);
  return fmi3OK;
}

fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 eventIndicators[], size_t nz) {
  PnInstance* m = pn3(c);
  if (!pn_allowed(m, "fmi3GetEventIndicators", PN3_ME_READ) || !pn_is_kind(m, "fmi3GetEventIndicators", PN_ME) ||
      pn_get_indicators(m, "fmi3GetEventIndicators", eventIndicators, nz))
    return pn3_error(m);
  return fmi3OK;
}

fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t nx) {
  PnInstance* m = pn3(c);
  if (!pn_allowed(m, "fmi3GetContinuousStates", PN3_ME_READ) || !pn_is_kind(m, "fmi3GetContinuousStates", PN_ME) ||
      pn_check_nx(m, "fmi3GetContinuousStates", x, nx))
    return pn3_error(m);
  pn_get_states(m, x);
  return fmi3OK;
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 nominals[], size_t nx) {
  PnInstance* m = pn3(c);
  size_t i;
  if (!pn_allowed(m, "fmi3GetNominalsOfContinuousStates", PN3_ME_READ) ||
      !pn_is_kind(m, "fmi3GetNominalsOfContinuousStates", PN_ME) ||
      pn_check_nx(m, "fmi3GetNominalsOfContinuousStates", nominals, nx))
    return pn3_error(m);
  for (i = 0; i < nx; ++i) nominals[i] = 1.0;
  return fmi3OK;
}

static fmi3Status pn3_count(fmi3Instance c, const char* fn, size_t* n, int value) {
  PnInstance* m = pn3(c);
  if (!pn_allowed(m, fn, PN_ANY) || !pn_is_kind(m, fn, PN_ME)) return pn3_error(m);
  if (!n) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: NULL argument", fn);
    return pn3_error(m);
  }
  *n = (size_t)value;
  return fmi3OK;
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t* nz) {
  return pn3_count(c, "fmi3GetNumberOfEventIndicators", nz, PN_NUM_INDICATORS);
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t* nx) {
  return pn3_count(c, "fmi3GetNumberOfContinuousStates", nx, PN_NUM_STATES);
}

/* ---- co-simulation ---- */

fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 currentCommunicationPoint, fmi3Float64 communicationStepSize,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint, fmi3Boolean* eventHandlingNeeded,
                      fmi3Boolean* terminateSimulation, fmi3Boolean* earlyReturn, fmi3Float64* lastSuccessfulTime) {
  PnInstance* m = pn3(c);
  int rc;
  (void)noSetFMUStatePriorToCurrentPoint;
  if (!m || !pn_is_kind(m, "fmi3DoStep", PN_CS) || !pn_allowed(m, "fmi3DoStep", PN_STEP_COMPLETE)) return pn3_error(m);
  if (!eventHandlingNeeded || !terminateSimulation || !earlyReturn || !lastSuccessfulTime) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "fmi3DoStep: NULL argument");
    return pn3_error(m);
  }
  if (!(communicationStepSize > 0) || !isfinite(communicationStepSize)) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "fmi3DoStep: the step size %g is not a finite number > 0",
           communicationStepSize);
    return pn3_error(m);
  }
  if (!pn3_before_stop(m, "fmi3DoStep", currentCommunicationPoint + communicationStepSize)) return pn3_error(m);
  rc = pn_do_step(m, "fmi3DoStep", currentCommunicationPoint, communicationStepSize);
  if (rc == 1) return pn3_error(m);
  *eventHandlingNeeded = fmi3False;
  *terminateSimulation = rc == 2 ? fmi3True : fmi3False;
  *earlyReturn = rc == 2 && ((Pn3Instance*)c)->early_return_allowed ? fmi3True : fmi3False;
  *lastSuccessfulTime = m->s[0];
  if (rc == 2) /* an event with `stop: true`: the FMU stands at it */
    pn_log(m, PN_STATUS_OK, PN_LOG_EVENTS, "fmi3DoStep: an event with 'stop: true' ended the run at t = %.17g",
           m->s[0]);
  return fmi3OK;
}
