/* fmu.c: the FMI 2.0 functions of every FMU paynter exports with
   `--fmi-version 2` (model exchange and co-simulation); src/fmi/runtime/fmu.c
   in paynter's sources, embedded into paynter by the build and written into
   each FMU's sources/. A thin layer over the runtime's core (pn_core.c, the
   same for FMI 3.0): each function checks that it may be called in the
   instance's state and for its kind, as FMI 2.0 says, and calls the core. A
   bad call returns fmi2Error and logs why without changing the instance.
   Plain C99. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "paynter_fmi2.h"
#include "pn_core.h"

PN_FMI2_DECLARE_FUNCTIONS

typedef struct {
  PnInstance core; /* first: a PnInstance* is a Pn2Instance* */
  fmi2CallbackLogger logger;
  fmi2ComponentEnvironment env;
  int logging;
} Pn2Instance;

/* Errors are always logged, other messages only with debug logging on. */
static void pn2_emit(PnInstance* core, int status, int category, const char* text) {
  Pn2Instance* m = (Pn2Instance*)core;
  if (!m->logger) return;
  if (status < PN_STATUS_ERROR && !m->logging) return;
  m->logger(m->env, core->name, (fmi2Status)status, category == PN_LOG_ERROR ? "logStatusError" : "logAll", "%s",
            text);
}

/* The instance behind a component (NULL stays NULL). */
static PnInstance* pn2(fmi2Component c) { return c ? &((Pn2Instance*)c)->core : NULL; }

/* ---- common functions ---- */

const char* fmi2GetTypesPlatform(void) { return "default"; }
const char* fmi2GetVersion(void) { return "2.0"; }

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation, const fmi2CallbackFunctions* functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn) {
  Pn2Instance tmp;
  Pn2Instance* m;
  (void)fmuResourceLocation;
  (void)visible;
  if (!functions || !functions->logger) return NULL;
  memset(&tmp, 0, sizeof tmp);
  tmp.logger = functions->logger;
  tmp.env = functions->componentEnvironment;
  tmp.core.name = (char*)(instanceName ? instanceName : "");
  tmp.core.version = 2;
  tmp.core.emit = pn2_emit;
  if (!instanceName || !*instanceName) {
    pn_log(&tmp.core, PN_STATUS_ERROR, PN_LOG_ERROR, "fmi2Instantiate: the instance name is missing");
    return NULL;
  }
  if (!fmuGUID || strcmp(fmuGUID, PN_GUID) != 0) {
    pn_log(&tmp.core, PN_STATUS_ERROR, PN_LOG_ERROR, "fmi2Instantiate: the GUID does not match this FMU's (%s)",
           PN_GUID);
    return NULL;
  }
  if ((fmuType == fmi2ModelExchange && !PN_KIND_ME) || (fmuType == fmi2CoSimulation && !PN_KIND_CS) ||
      (fmuType != fmi2ModelExchange && fmuType != fmi2CoSimulation)) {
    pn_log(&tmp.core, PN_STATUS_ERROR, PN_LOG_ERROR, "fmi2Instantiate: this FMU was not exported for %s",
           fmuType == fmi2ModelExchange ? "model exchange" : "co-simulation");
    return NULL;
  }
  m = (Pn2Instance*)calloc(1, sizeof *m);
  if (!m) return NULL;
  m->logger = functions->logger;
  m->env = functions->componentEnvironment;
  m->logging = loggingOn != fmi2False;
  if (pn_init_instance(&m->core, instanceName, 2, fmuType == fmi2ModelExchange ? PN_ME : PN_CS, pn2_emit)) {
    free(m);
    return NULL;
  }
  return m;
}

void fmi2FreeInstance(fmi2Component c) {
  if (!c) return;
  pn_free_instance(pn2(c));
  free(c);
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[]) {
  PnInstance* m = pn2(c);
  size_t i;
  if (!pn_allowed(m, "fmi2SetDebugLogging", PN_ANY)) return fmi2Error;
  if (nCategories > 0 && !categories) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "fmi2SetDebugLogging: categories is NULL");
    return fmi2Error;
  }
  for (i = 0; i < nCategories; ++i)
    if (!categories[i] || (strcmp(categories[i], "logStatusError") != 0 && strcmp(categories[i], "logAll") != 0)) {
      pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR,
             "fmi2SetDebugLogging: unknown log category (known: logStatusError, logAll)");
      return fmi2Error;
    }
  ((Pn2Instance*)c)->logging = loggingOn != fmi2False;
  return fmi2OK;
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, "fmi2SetupExperiment", PN_INSTANTIATED)) return fmi2Error;
  if (pn_setup(m, "fmi2SetupExperiment", toleranceDefined, tolerance, startTime, stopTimeDefined, stopTime))
    return fmi2Error;
  return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, "fmi2EnterInitializationMode", PN_INSTANTIATED)) return fmi2Error;
  m->state = PN_INIT;
  return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, "fmi2ExitInitializationMode", PN_INIT)) return fmi2Error;
  if (pn_initialize(m)) return fmi2Error;
  m->state = m->kind == PN_ME ? PN_EVENT : PN_STEP_COMPLETE;
  return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, "fmi2Terminate", PN_EVENT | PN_CONT | PN_STEP_COMPLETE)) return fmi2Error;
  m->state = PN_TERMINATED;
  return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, "fmi2Reset", PN_ANY)) return fmi2Error;
  pn_reset_values(m);
  m->state = PN_INSTANTIATED;
  return fmi2OK;
}

/* ---- variables (all Real) ---- */

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[]) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, "fmi2GetReal", PN_ANY & ~PN_INSTANTIATED)) return fmi2Error;
  return pn_get_real(m, "fmi2GetReal", vr, nvr, value) ? fmi2Error : fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[]) {
  PnInstance* m = pn2(c);
  const int me = m && m->kind == PN_ME;
  if (!pn_allowed(m, "fmi2SetReal", PN_INSTANTIATED | PN_INIT | PN_EVENT | PN_CONT | PN_STEP_COMPLETE)) return fmi2Error;
  return pn_set_real(m, "fmi2SetReal", vr, nvr, value, PN_INSTANTIATED | PN_INIT | (me ? PN_EVENT : PN_STEP_COMPLETE),
                     PN_INSTANTIATED | PN_INIT | (me ? PN_EVENT | PN_CONT : PN_STEP_COMPLETE), PN_INSTANTIATED | PN_INIT)
             ? fmi2Error
             : fmi2OK;
}

static fmi2Status pn2_no_variables(fmi2Component c, const char* fn, size_t nvr, const void* vr, const void* value,
                                   const char* type) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, fn, PN_ANY)) return fmi2Error;
  return pn_no_variables(m, fn, nvr, vr, value, type) ? fmi2Error : fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Integer value[]) {
  return pn2_no_variables(c, "fmi2GetInteger", nvr, vr, value, "Integer");
}
fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer value[]) {
  return pn2_no_variables(c, "fmi2SetInteger", nvr, vr, value, "Integer");
}
fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean value[]) {
  return pn2_no_variables(c, "fmi2GetBoolean", nvr, vr, value, "Boolean");
}
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Boolean value[]) {
  return pn2_no_variables(c, "fmi2SetBoolean", nvr, vr, value, "Boolean");
}
fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2String value[]) {
  return pn2_no_variables(c, "fmi2GetString", nvr, vr, value, "String");
}
fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2String value[]) {
  return pn2_no_variables(c, "fmi2SetString", nvr, vr, value, "String");
}

/* ---- unsupported capabilities (canGetAndSetFMUstate, providesDirectionalDerivative: false) ---- */

static fmi2Status pn2_unsupported(fmi2Component c, const char* fn) {
  pn_unsupported(pn2(c), fn);
  return fmi2Error;
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate* s) {
  (void)s;
  return pn2_unsupported(c, "fmi2GetFMUstate");
}
fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) {
  (void)s;
  return pn2_unsupported(c, "fmi2SetFMUstate");
}
fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate* s) {
  (void)s;
  return pn2_unsupported(c, "fmi2FreeFMUstate");
}
fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t* size) {
  (void)s;
  (void)size;
  return pn2_unsupported(c, "fmi2SerializedFMUstateSize");
}
fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte bytes[], size_t size) {
  (void)s;
  (void)bytes;
  (void)size;
  return pn2_unsupported(c, "fmi2SerializeFMUstate");
}
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size, fmi2FMUstate* s) {
  (void)s;
  (void)bytes;
  (void)size;
  return pn2_unsupported(c, "fmi2DeSerializeFMUstate");
}
fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown[], size_t nUnknown,
                                        const fmi2ValueReference vKnown[], size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[]) {
  (void)vUnknown, (void)nUnknown, (void)vKnown, (void)nKnown, (void)dvKnown, (void)dvUnknown;
  return pn2_unsupported(c, "fmi2GetDirectionalDerivative");
}

/* ---- model exchange ---- */

fmi2Status fmi2EnterEventMode(fmi2Component c) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, "fmi2EnterEventMode", PN_EVENT | PN_CONT) || !pn_is_kind(m, "fmi2EnterEventMode", PN_ME))
    return fmi2Error;
  m->state = PN_EVENT;
  return fmi2OK;
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo* info) {
  PnInstance* m = pn2(c);
  int states_changed = 0, terminate = 0, next_defined = 0;
  double next = 0;
  if (!pn_allowed(m, "fmi2NewDiscreteStates", PN_EVENT) || !pn_is_kind(m, "fmi2NewDiscreteStates", PN_ME))
    return fmi2Error;
  if (!info) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "fmi2NewDiscreteStates: eventInfo is NULL");
    return fmi2Error;
  }
  if (pn_update_discrete_states(m, &states_changed, &terminate, &next_defined, &next)) return fmi2Error;
  info->newDiscreteStatesNeeded = fmi2False; /* the event handling settles the modes itself */
  info->terminateSimulation = terminate ? fmi2True : fmi2False;
  info->nominalsOfContinuousStatesChanged = fmi2False;
  info->valuesOfContinuousStatesChanged = states_changed ? fmi2True : fmi2False;
  info->nextEventTimeDefined = next_defined ? fmi2True : fmi2False;
  info->nextEventTime = next;
  return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, "fmi2EnterContinuousTimeMode", PN_EVENT) || !pn_is_kind(m, "fmi2EnterContinuousTimeMode", PN_ME))
    return fmi2Error;
  m->state = PN_CONT;
  return fmi2OK;
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean* enterEventMode, fmi2Boolean* terminateSimulation) {
  PnInstance* m = pn2(c);
  (void)noSetFMUStatePriorToCurrentPoint;
  if (!pn_allowed(m, "fmi2CompletedIntegratorStep", PN_CONT) || !pn_is_kind(m, "fmi2CompletedIntegratorStep", PN_ME))
    return fmi2Error;
  if (!enterEventMode || !terminateSimulation) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "fmi2CompletedIntegratorStep: NULL argument");
    return fmi2Error;
  }
  *enterEventMode = fmi2False;
  *terminateSimulation = fmi2False;
  return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, "fmi2SetTime", PN_EVENT | PN_CONT) || !pn_is_kind(m, "fmi2SetTime", PN_ME)) return fmi2Error;
  return pn_set_time(m, "fmi2SetTime", time) ? fmi2Error : fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, "fmi2SetContinuousStates", PN_CONT) || !pn_is_kind(m, "fmi2SetContinuousStates", PN_ME) ||
      pn_check_nx(m, "fmi2SetContinuousStates", x, nx))
    return fmi2Error;
  pn_set_states(m, x);
  return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, "fmi2GetDerivatives", PN_INIT | PN_EVENT | PN_CONT | PN_TERMINATED | PN_ERROR) ||
      !pn_is_kind(m, "fmi2GetDerivatives", PN_ME) || pn_check_nx(m, "fmi2GetDerivatives", dx, nx))
    return fmi2Error;
  return pn_get_derivatives(m, dx) ? fmi2Error : fmi2OK;
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real indicators[], size_t ni) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, "fmi2GetEventIndicators", PN_INIT | PN_EVENT | PN_CONT | PN_TERMINATED | PN_ERROR) ||
      !pn_is_kind(m, "fmi2GetEventIndicators", PN_ME))
    return fmi2Error;
  return pn_get_indicators(m, "fmi2GetEventIndicators", indicators, ni) ? fmi2Error : fmi2OK;
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
  PnInstance* m = pn2(c);
  if (!pn_allowed(m, "fmi2GetContinuousStates", PN_INIT | PN_EVENT | PN_CONT | PN_TERMINATED | PN_ERROR) ||
      !pn_is_kind(m, "fmi2GetContinuousStates", PN_ME) || pn_check_nx(m, "fmi2GetContinuousStates", x, nx))
    return fmi2Error;
  pn_get_states(m, x);
  return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx) {
  PnInstance* m = pn2(c);
  size_t i;
  if (!pn_allowed(m, "fmi2GetNominalsOfContinuousStates", PN_ANY) ||
      !pn_is_kind(m, "fmi2GetNominalsOfContinuousStates", PN_ME) ||
      pn_check_nx(m, "fmi2GetNominalsOfContinuousStates", x_nominal, nx))
    return fmi2Error;
  for (i = 0; i < nx; ++i) x_nominal[i] = 1.0;
  return fmi2OK;
}

/* ---- co-simulation ---- */

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint, fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentCommunicationPoint) {
  PnInstance* m = pn2(c);
  int rc;
  (void)noSetFMUStatePriorToCurrentCommunicationPoint;
  if (!m || !pn_is_kind(m, "fmi2DoStep", PN_CS) || !pn_allowed(m, "fmi2DoStep", PN_STEP_COMPLETE)) return fmi2Error;
  rc = pn_do_step(m, "fmi2DoStep", currentCommunicationPoint, communicationStepSize);
  if (rc == 2) { /* an event stopped the run: fmi2GetBooleanStatus(fmi2Terminated) says so */
    pn_log(m, PN_STATUS_DISCARD, PN_LOG_EVENTS, "fmi2DoStep: an event with 'stop: true' ended the run at t = %.17g",
           m->s[0]);
    return fmi2Discard;
  }
  return rc ? fmi2Error : fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component c) {
  PnInstance* m = pn2(c);
  if (!m || !pn_is_kind(m, "fmi2CancelStep", PN_CS)) return fmi2Error;
  pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "fmi2CancelStep: no step is pending (fmi2DoStep runs synchronously)");
  return fmi2Error;
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[]) {
  (void)vr, (void)nvr, (void)order, (void)value;
  return pn2_unsupported(c, "fmi2SetRealInputDerivatives (canInterpolateInputs is false: an input holds its value "
                            "over a communication step)");
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[]) {
  (void)vr, (void)nvr, (void)order, (void)value;
  return pn2_unsupported(c, "fmi2GetRealOutputDerivatives (maxOutputDerivativeOrder is 0)");
}

static int pn2_status_call(PnInstance* m, const char* fn, const void* value) {
  if (!pn_allowed(m, fn, PN_ANY) || !pn_is_kind(m, fn, PN_CS)) return 0;
  if (!value) {
    pn_log(m, PN_STATUS_ERROR, PN_LOG_ERROR, "%s: NULL value", fn);
    return 0;
  }
  return 1;
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status* value) {
  PnInstance* m = pn2(c);
  if (!pn2_status_call(m, "fmi2GetStatus", value)) return fmi2Error;
  if (s != fmi2DoStepStatus) return fmi2Discard;
  *value = m->state == PN_ERROR ? fmi2Error : fmi2OK;
  return fmi2OK;
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real* value) {
  PnInstance* m = pn2(c);
  if (!pn2_status_call(m, "fmi2GetRealStatus", value)) return fmi2Error;
  if (s != fmi2LastSuccessfulTime) return fmi2Discard;
  *value = m->s[0];
  return fmi2OK;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer* value) {
  PnInstance* m = pn2(c);
  (void)s;
  if (!pn2_status_call(m, "fmi2GetIntegerStatus", value)) return fmi2Error;
  return fmi2Discard;
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean* value) {
  PnInstance* m = pn2(c);
  if (!pn2_status_call(m, "fmi2GetBooleanStatus", value)) return fmi2Error;
  if (s != fmi2Terminated) return fmi2Discard;
  *value = m->stopped ? fmi2True : fmi2False; /* an event with `stop: true` ended the run */
  return fmi2OK;
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String* value) {
  PnInstance* m = pn2(c);
  (void)s;
  if (!pn2_status_call(m, "fmi2GetStringStatus", value)) return fmi2Error;
  return fmi2Discard;
}
