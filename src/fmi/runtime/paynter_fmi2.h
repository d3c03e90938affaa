/* paynter_fmi2.h: the FMI 2.0 C interface as paynter uses it, declared once
   for both sides: the runtime of every exported FMU (fmu.c), which defines
   the functions, and the test importer (tests/fmi_importer.h), which loads
   them with dlsym. Written by paynter from the FMI 2.0 specification
   (sections 2.1.2 to 2.1.5: platform types, status and callbacks; 3.2:
   model exchange; 4.2: co-simulation), not from the standard's header files;
   the names are those the standard gives to the types and exported symbols,
   so that any FMI 2.0 master can call the FMU.

   Each function has a type, pn_fmi2_<Name>, and PN_FMI2_FUNCTIONS(X) lists the
   functions, X(Name) for fmi2<Name>: the runtime declares its definitions
   from the types (PN_FMI2_DECLARE_FUNCTIONS), an importer makes a table of
   pointers from them. Plain C99. */
#ifndef PAYNTER_FMI2_H
#define PAYNTER_FMI2_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- platform types (the "default" platform) ---- */
typedef void* fmi2Component;            /* an instance, created by fmi2Instantiate */
typedef void* fmi2ComponentEnvironment; /* the master's pointer, handed back to the logger */
typedef void* fmi2FMUstate;             /* a saved state (not supported by paynter's FMUs) */
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef char fmi2Char;
typedef const fmi2Char* fmi2String;
typedef char fmi2Byte;
#define fmi2True 1
#define fmi2False 0

typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef enum { fmi2ModelExchange, fmi2CoSimulation } fmi2Type;
typedef enum { fmi2DoStepStatus, fmi2PendingStatus, fmi2LastSuccessfulTime, fmi2Terminated } fmi2StatusKind;

/* ---- what the master gives fmi2Instantiate ---- */
typedef void (*fmi2CallbackLogger)(fmi2ComponentEnvironment env, fmi2String instanceName, fmi2Status status,
                                   fmi2String category, fmi2String message, ...);
typedef void* (*fmi2CallbackAllocateMemory)(size_t count, size_t size);
typedef void (*fmi2CallbackFreeMemory)(void* object);
typedef void (*fmi2StepFinished)(fmi2ComponentEnvironment env, fmi2Status status);

typedef struct {
  const fmi2CallbackLogger logger;
  const fmi2CallbackAllocateMemory allocateMemory;
  const fmi2CallbackFreeMemory freeMemory;
  const fmi2StepFinished stepFinished;
  const fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;

/* ---- what fmi2NewDiscreteStates reports (model exchange) ---- */
typedef struct {
  fmi2Boolean newDiscreteStatesNeeded;   /* call fmi2NewDiscreteStates again */
  fmi2Boolean terminateSimulation;       /* the model asks to stop */
  fmi2Boolean nominalsOfContinuousStatesChanged;
  fmi2Boolean valuesOfContinuousStatesChanged; /* the states were reset: read them again */
  fmi2Boolean nextEventTimeDefined;      /* a time event is due at nextEventTime */
  fmi2Real nextEventTime;
} fmi2EventInfo;

/* ---- the function types ---- */
/* common to both kinds */
typedef const char* pn_fmi2_GetTypesPlatform(void);
typedef const char* pn_fmi2_GetVersion(void);
typedef fmi2Status pn_fmi2_SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                                           const fmi2String categories[]);
typedef fmi2Component pn_fmi2_Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                                          fmi2String fmuResourceLocation, const fmi2CallbackFunctions* functions,
                                          fmi2Boolean visible, fmi2Boolean loggingOn);
typedef void pn_fmi2_FreeInstance(fmi2Component c);
typedef fmi2Status pn_fmi2_SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                                           fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime);
typedef fmi2Status pn_fmi2_EnterInitializationMode(fmi2Component c);
typedef fmi2Status pn_fmi2_ExitInitializationMode(fmi2Component c);
typedef fmi2Status pn_fmi2_Terminate(fmi2Component c);
typedef fmi2Status pn_fmi2_Reset(fmi2Component c);
typedef fmi2Status pn_fmi2_GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[]);
typedef fmi2Status pn_fmi2_GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                      fmi2Integer value[]);
typedef fmi2Status pn_fmi2_GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                      fmi2Boolean value[]);
typedef fmi2Status pn_fmi2_GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2String value[]);
typedef fmi2Status pn_fmi2_SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                   const fmi2Real value[]);
typedef fmi2Status pn_fmi2_SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                      const fmi2Integer value[]);
typedef fmi2Status pn_fmi2_SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                      const fmi2Boolean value[]);
typedef fmi2Status pn_fmi2_SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                     const fmi2String value[]);
typedef fmi2Status pn_fmi2_GetFMUstate(fmi2Component c, fmi2FMUstate* state);
typedef fmi2Status pn_fmi2_SetFMUstate(fmi2Component c, fmi2FMUstate state);
typedef fmi2Status pn_fmi2_FreeFMUstate(fmi2Component c, fmi2FMUstate* state);
typedef fmi2Status pn_fmi2_SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t* size);
typedef fmi2Status pn_fmi2_SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[], size_t size);
typedef fmi2Status pn_fmi2_DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size,
                                               fmi2FMUstate* state);
typedef fmi2Status pn_fmi2_GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference unknowns[],
                                                    size_t nUnknown, const fmi2ValueReference knowns[],
                                                    size_t nKnown, const fmi2Real dvKnown[], fmi2Real dvUnknown[]);
/* model exchange */
typedef fmi2Status pn_fmi2_EnterEventMode(fmi2Component c);
typedef fmi2Status pn_fmi2_NewDiscreteStates(fmi2Component c, fmi2EventInfo* eventInfo);
typedef fmi2Status pn_fmi2_EnterContinuousTimeMode(fmi2Component c);
typedef fmi2Status pn_fmi2_CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                                   fmi2Boolean* enterEventMode, fmi2Boolean* terminateSimulation);
typedef fmi2Status pn_fmi2_SetTime(fmi2Component c, fmi2Real time);
typedef fmi2Status pn_fmi2_SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx);
typedef fmi2Status pn_fmi2_GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx);
typedef fmi2Status pn_fmi2_GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni);
typedef fmi2Status pn_fmi2_GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx);
typedef fmi2Status pn_fmi2_GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx);
/* co-simulation */
typedef fmi2Status pn_fmi2_SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                                   const fmi2Integer order[], const fmi2Real value[]);
typedef fmi2Status pn_fmi2_GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                                    const fmi2Integer order[], fmi2Real value[]);
typedef fmi2Status pn_fmi2_DoStep(fmi2Component c, fmi2Real currentCommunicationPoint,
                                  fmi2Real communicationStepSize, fmi2Boolean noSetFMUStatePriorToCurrentPoint);
typedef fmi2Status pn_fmi2_CancelStep(fmi2Component c);
typedef fmi2Status pn_fmi2_GetStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Status* value);
typedef fmi2Status pn_fmi2_GetRealStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Real* value);
typedef fmi2Status pn_fmi2_GetIntegerStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Integer* value);
typedef fmi2Status pn_fmi2_GetBooleanStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Boolean* value);
typedef fmi2Status pn_fmi2_GetStringStatus(fmi2Component c, const fmi2StatusKind kind, fmi2String* value);

/* Every function an FMU exports, X(Name) for fmi2<Name>. */
#define PN_FMI2_FUNCTIONS(X)                                                                              \
  X(GetTypesPlatform) X(GetVersion) X(SetDebugLogging) X(Instantiate) X(FreeInstance) X(SetupExperiment) \
  X(EnterInitializationMode) X(ExitInitializationMode) X(Terminate) X(Reset) X(GetReal) X(GetInteger)    \
  X(GetBoolean) X(GetString) X(SetReal) X(SetInteger) X(SetBoolean) X(SetString) X(GetFMUstate)          \
  X(SetFMUstate) X(FreeFMUstate) X(SerializedFMUstateSize) X(SerializeFMUstate) X(DeSerializeFMUstate)   \
  X(GetDirectionalDerivative) X(EnterEventMode) X(NewDiscreteStates) X(EnterContinuousTimeMode)          \
  X(CompletedIntegratorStep) X(SetTime) X(SetContinuousStates) X(GetDerivatives) X(GetEventIndicators)   \
  X(GetContinuousStates) X(GetNominalsOfContinuousStates) X(SetRealInputDerivatives)                     \
  X(GetRealOutputDerivatives) X(DoStep) X(CancelStep) X(GetStatus) X(GetRealStatus) X(GetIntegerStatus)  \
  X(GetBooleanStatus) X(GetStringStatus)

/* The FMU's declarations of its exported functions (built with
   -fvisibility=hidden: these, and nothing else, are visible). */
#if defined(__GNUC__) || defined(__clang__)
#define PN_FMI2_EXPORT __attribute__((visibility("default")))
#else
#define PN_FMI2_EXPORT
#endif
#define PN_FMI2_DECLARE_ONE(name) PN_FMI2_EXPORT pn_fmi2_##name fmi2##name;
#define PN_FMI2_DECLARE_FUNCTIONS PN_FMI2_FUNCTIONS(PN_FMI2_DECLARE_ONE)

#ifdef __cplusplus
}
#endif

#endif /* PAYNTER_FMI2_H */
