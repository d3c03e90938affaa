/* paynter_fmi3.h: the FMI 3.0 C interface as paynter uses it, declared once
   for both sides: the FMI 3.0 functions of every FMU exported with
   `--fmi-version 3` (fmu3.c), which define them, and the tests that load
   them with dlsym (tests/fmi3_importer.cc). Written by paynter from the
   FMI 3.0 specification (section 2.2: the platform types, statuses and
   callbacks; 2.3: the common functions; 3.2: model exchange; 4.2:
   co-simulation; 5.2: scheduled execution), not from the standard's header
   files; the names are the standard's, so that any FMI 3.0 importer can call
   the FMU.

   Each function has a type, pn_fmi3_<Name>, and PN_FMI3_FUNCTIONS(X) lists
   them all, X(Name) for fmi3<Name>: the runtime declares its definitions from
   the types (PN_FMI3_DECLARE_FUNCTIONS), an importer makes a table of
   pointers from them. Plain C99. */
#ifndef PAYNTER_FMI3_H
#define PAYNTER_FMI3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- platform types ---- */
typedef void* fmi3Instance;            /* an instance, made by fmi3Instantiate... */
typedef void* fmi3InstanceEnvironment; /* the importer's pointer, handed back to its callbacks */
typedef void* fmi3FMUState;            /* a saved state (not supported by paynter's FMUs) */
typedef uint32_t fmi3ValueReference;
typedef float fmi3Float32;
typedef double fmi3Float64;
typedef int8_t fmi3Int8;
typedef uint8_t fmi3UInt8;
typedef int16_t fmi3Int16;
typedef uint16_t fmi3UInt16;
typedef int32_t fmi3Int32;
typedef uint32_t fmi3UInt32;
typedef int64_t fmi3Int64;
typedef uint64_t fmi3UInt64;
typedef bool fmi3Boolean;
typedef char fmi3Char;
typedef const fmi3Char* fmi3String; /* UTF-8, NUL-terminated */
typedef uint8_t fmi3Byte;
typedef const fmi3Byte* fmi3Binary;
typedef bool fmi3Clock;
#define fmi3True true
#define fmi3False false
#define fmi3ClockActive true
#define fmi3ClockInactive false

typedef enum { fmi3OK, fmi3Warning, fmi3Discard, fmi3Error, fmi3Fatal } fmi3Status;
typedef enum { fmi3Independent, fmi3Constant, fmi3Fixed, fmi3Tunable, fmi3Discrete, fmi3Dependent } fmi3DependencyKind;
typedef enum { fmi3IntervalNotYetKnown, fmi3IntervalUnchanged, fmi3IntervalChanged } fmi3IntervalQualifier;

/* ---- the importer's callbacks ---- */
typedef void (*fmi3LogMessageCallback)(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                                       fmi3String message);
typedef void (*fmi3ClockUpdateCallback)(fmi3InstanceEnvironment env);
typedef void (*fmi3IntermediateUpdateCallback)(fmi3InstanceEnvironment env, fmi3Float64 intermediateUpdateTime,
                                               fmi3Boolean intermediateVariableSetRequested,
                                               fmi3Boolean intermediateVariableGetAllowed,
                                               fmi3Boolean intermediateStepFinished, fmi3Boolean canReturnEarly,
                                               fmi3Boolean* earlyReturnRequested, fmi3Float64* earlyReturnTime);
typedef void (*fmi3LockPreemptionCallback)(void);
typedef void (*fmi3UnlockPreemptionCallback)(void);

/* ---- the function types ---- */
/* common */
typedef const char* pn_fmi3_GetVersion(void);
typedef fmi3Status pn_fmi3_SetDebugLogging(fmi3Instance c, fmi3Boolean loggingOn, size_t nCategories,
                                           const fmi3String categories[]);
typedef fmi3Instance pn_fmi3_InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                                      fmi3String resourcePath, fmi3Boolean visible,
                                                      fmi3Boolean loggingOn, fmi3InstanceEnvironment env,
                                                      fmi3LogMessageCallback logMessage);
typedef fmi3Instance pn_fmi3_InstantiateCoSimulation(fmi3String instanceName, fmi3String instantiationToken,
                                                     fmi3String resourcePath, fmi3Boolean visible,
                                                     fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
                                                     fmi3Boolean earlyReturnAllowed,
                                                     const fmi3ValueReference requiredIntermediateVariables[],
                                                     size_t nRequiredIntermediateVariables,
                                                     fmi3InstanceEnvironment env, fmi3LogMessageCallback logMessage,
                                                     fmi3IntermediateUpdateCallback intermediateUpdate);
typedef fmi3Instance pn_fmi3_InstantiateScheduledExecution(fmi3String instanceName, fmi3String instantiationToken,
                                                           fmi3String resourcePath, fmi3Boolean visible,
                                                           fmi3Boolean loggingOn, fmi3InstanceEnvironment env,
                                                           fmi3LogMessageCallback logMessage,
                                                           fmi3ClockUpdateCallback clockUpdate,
                                                           fmi3LockPreemptionCallback lockPreemption,
                                                           fmi3UnlockPreemptionCallback unlockPreemption);
typedef void pn_fmi3_FreeInstance(fmi3Instance c);
typedef fmi3Status pn_fmi3_EnterInitializationMode(fmi3Instance c, fmi3Boolean toleranceDefined, fmi3Float64 tolerance,
                                                   fmi3Float64 startTime, fmi3Boolean stopTimeDefined,
                                                   fmi3Float64 stopTime);
typedef fmi3Status pn_fmi3_ExitInitializationMode(fmi3Instance c);
typedef fmi3Status pn_fmi3_EnterEventMode(fmi3Instance c);
typedef fmi3Status pn_fmi3_Terminate(fmi3Instance c);
typedef fmi3Status pn_fmi3_Reset(fmi3Instance c);

/* getting and setting values: nValues counts the values (arrays serialized) */
#define PN_FMI3_GET_SET(T)                                                                                  \
  typedef fmi3Status pn_fmi3_Get##T(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3##T values[], \
                                    size_t nValues);                                                        \
  typedef fmi3Status pn_fmi3_Set##T(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,               \
                                    const fmi3##T values[], size_t nValues);
PN_FMI3_GET_SET(Float32)
PN_FMI3_GET_SET(Float64)
PN_FMI3_GET_SET(Int8)
PN_FMI3_GET_SET(UInt8)
PN_FMI3_GET_SET(Int16)
PN_FMI3_GET_SET(UInt16)
PN_FMI3_GET_SET(Int32)
PN_FMI3_GET_SET(UInt32)
PN_FMI3_GET_SET(Int64)
PN_FMI3_GET_SET(UInt64)
PN_FMI3_GET_SET(Boolean)
PN_FMI3_GET_SET(String)
#undef PN_FMI3_GET_SET
typedef fmi3Status pn_fmi3_GetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, size_t valueSizes[],
                                     fmi3Binary values[], size_t nValues);
typedef fmi3Status pn_fmi3_SetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                     const size_t valueSizes[], const fmi3Binary values[], size_t nValues);
typedef fmi3Status pn_fmi3_GetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3Clock values[]);
typedef fmi3Status pn_fmi3_SetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                    const fmi3Clock values[]);

/* dependencies, FMU states, partial derivatives */
typedef fmi3Status pn_fmi3_GetNumberOfVariableDependencies(fmi3Instance c, fmi3ValueReference vr,
                                                           size_t* nDependencies);
typedef fmi3Status pn_fmi3_GetVariableDependencies(fmi3Instance c, fmi3ValueReference dependent,
                                                   size_t elementIndicesOfDependent[],
                                                   fmi3ValueReference independents[],
                                                   size_t elementIndicesOfIndependents[],
                                                   fmi3DependencyKind dependencyKinds[], size_t nDependencies);
typedef fmi3Status pn_fmi3_GetFMUState(fmi3Instance c, fmi3FMUState* state);
typedef fmi3Status pn_fmi3_SetFMUState(fmi3Instance c, fmi3FMUState state);
typedef fmi3Status pn_fmi3_FreeFMUState(fmi3Instance c, fmi3FMUState* state);
typedef fmi3Status pn_fmi3_SerializedFMUStateSize(fmi3Instance c, fmi3FMUState state, size_t* size);
typedef fmi3Status pn_fmi3_SerializeFMUState(fmi3Instance c, fmi3FMUState state, fmi3Byte serializedState[],
                                             size_t size);
typedef fmi3Status pn_fmi3_DeserializeFMUState(fmi3Instance c, const fmi3Byte serializedState[], size_t size,
                                               fmi3FMUState* state);
typedef fmi3Status pn_fmi3_GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference unknowns[],
                                                    size_t nUnknowns, const fmi3ValueReference knowns[],
                                                    size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                                    fmi3Float64 sensitivity[], size_t nSensitivity);
typedef fmi3Status pn_fmi3_GetAdjointDerivative(fmi3Instance c, const fmi3ValueReference unknowns[], size_t nUnknowns,
                                                const fmi3ValueReference knowns[], size_t nKnowns,
                                                const fmi3Float64 seed[], size_t nSeed, fmi3Float64 sensitivity[],
                                                size_t nSensitivity);

/* configuration mode and clocks (paynter's FMUs have no structural parameters and no clocks) */
typedef fmi3Status pn_fmi3_EnterConfigurationMode(fmi3Instance c);
typedef fmi3Status pn_fmi3_ExitConfigurationMode(fmi3Instance c);
typedef fmi3Status pn_fmi3_GetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                              fmi3Float64 intervals[], fmi3IntervalQualifier qualifiers[]);
typedef fmi3Status pn_fmi3_GetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                               fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                                               fmi3IntervalQualifier qualifiers[]);
typedef fmi3Status pn_fmi3_GetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                           fmi3Float64 shifts[]);
typedef fmi3Status pn_fmi3_GetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                            fmi3UInt64 counters[], fmi3UInt64 resolutions[]);
typedef fmi3Status pn_fmi3_SetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                              const fmi3Float64 intervals[]);
typedef fmi3Status pn_fmi3_SetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                               const fmi3UInt64 counters[], const fmi3UInt64 resolutions[]);
typedef fmi3Status pn_fmi3_SetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                           const fmi3Float64 shifts[]);
typedef fmi3Status pn_fmi3_SetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                            const fmi3UInt64 counters[], const fmi3UInt64 resolutions[]);

/* event mode */
typedef fmi3Status pn_fmi3_EvaluateDiscreteStates(fmi3Instance c);
typedef fmi3Status pn_fmi3_UpdateDiscreteStates(fmi3Instance c, fmi3Boolean* discreteStatesNeedUpdate,
                                                fmi3Boolean* terminateSimulation,
                                                fmi3Boolean* nominalsOfContinuousStatesChanged,
                                                fmi3Boolean* valuesOfContinuousStatesChanged,
                                                fmi3Boolean* nextEventTimeDefined, fmi3Float64* nextEventTime);

/* model exchange */
typedef fmi3Status pn_fmi3_EnterContinuousTimeMode(fmi3Instance c);
typedef fmi3Status pn_fmi3_CompletedIntegratorStep(fmi3Instance c, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                                   fmi3Boolean* enterEventMode, fmi3Boolean* terminateSimulation);
typedef fmi3Status pn_fmi3_SetTime(fmi3Instance c, fmi3Float64 time);
typedef fmi3Status pn_fmi3_SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t nx);
typedef fmi3Status pn_fmi3_GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 derivatives[], size_t nx);
typedef fmi3Status pn_fmi3_GetEventIndicators(fmi3Instance c, fmi3Float64 eventIndicators[], size_t nz);
typedef fmi3Status pn_fmi3_GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t nx);
typedef fmi3Status pn_fmi3_GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 nominals[], size_t nx);
typedef fmi3Status pn_fmi3_GetNumberOfEventIndicators(fmi3Instance c, size_t* nz);
typedef fmi3Status pn_fmi3_GetNumberOfContinuousStates(fmi3Instance c, size_t* nx);

/* co-simulation */
typedef fmi3Status pn_fmi3_EnterStepMode(fmi3Instance c);
typedef fmi3Status pn_fmi3_GetOutputDerivatives(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                                const fmi3Int32 orders[], fmi3Float64 values[], size_t nValues);
typedef fmi3Status pn_fmi3_DoStep(fmi3Instance c, fmi3Float64 currentCommunicationPoint,
                                  fmi3Float64 communicationStepSize, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                  fmi3Boolean* eventHandlingNeeded, fmi3Boolean* terminateSimulation,
                                  fmi3Boolean* earlyReturn, fmi3Float64* lastSuccessfulTime);

/* scheduled execution */
typedef fmi3Status pn_fmi3_ActivateModelPartition(fmi3Instance c, fmi3ValueReference clockReference,
                                                  fmi3Float64 activationTime);

/* Every function an FMU exports, X(Name) for fmi3<Name>. */
#define PN_FMI3_FUNCTIONS(X)                                                                                     \
  X(GetVersion) X(SetDebugLogging) X(InstantiateModelExchange) X(InstantiateCoSimulation)                       \
  X(InstantiateScheduledExecution) X(FreeInstance) X(EnterInitializationMode) X(ExitInitializationMode)         \
  X(EnterEventMode) X(Terminate) X(Reset) X(GetFloat32) X(GetFloat64) X(GetInt8) X(GetUInt8) X(GetInt16)        \
  X(GetUInt16) X(GetInt32) X(GetUInt32) X(GetInt64) X(GetUInt64) X(GetBoolean) X(GetString) X(GetBinary)        \
  X(GetClock) X(SetFloat32) X(SetFloat64) X(SetInt8) X(SetUInt8) X(SetInt16) X(SetUInt16) X(SetInt32)           \
  X(SetUInt32) X(SetInt64) X(SetUInt64) X(SetBoolean) X(SetString) X(SetBinary) X(SetClock)                     \
  X(GetNumberOfVariableDependencies) X(GetVariableDependencies) X(GetFMUState) X(SetFMUState) X(FreeFMUState)  \
  X(SerializedFMUStateSize) X(SerializeFMUState) X(DeserializeFMUState) X(GetDirectionalDerivative)             \
  X(GetAdjointDerivative) X(EnterConfigurationMode) X(ExitConfigurationMode) X(GetIntervalDecimal)             \
  X(GetIntervalFraction) X(GetShiftDecimal) X(GetShiftFraction) X(SetIntervalDecimal) X(SetIntervalFraction)    \
  X(SetShiftDecimal) X(SetShiftFraction) X(EvaluateDiscreteStates) X(UpdateDiscreteStates)                      \
  X(EnterContinuousTimeMode) X(CompletedIntegratorStep) X(SetTime) X(SetContinuousStates)                       \
  X(GetContinuousStateDerivatives) X(GetEventIndicators) X(GetContinuousStates)                                 \
  X(GetNominalsOfContinuousStates) X(GetNumberOfEventIndicators) X(GetNumberOfContinuousStates)                 \
  X(EnterStepMode) X(GetOutputDerivatives) X(DoStep) X(ActivateModelPartition)

/* The FMU's declarations of its exported functions (built with
   -fvisibility=hidden: these, and nothing else, are visible). */
#if defined(__GNUC__) || defined(__clang__)
#define PN_FMI3_EXPORT __attribute__((visibility("default")))
#else
#define PN_FMI3_EXPORT
#endif
#define PN_FMI3_DECLARE_ONE(name) PN_FMI3_EXPORT pn_fmi3_##name fmi3##name;
#define PN_FMI3_DECLARE_FUNCTIONS PN_FMI3_FUNCTIONS(PN_FMI3_DECLARE_ONE)

#ifdef __cplusplus
}
#endif

#endif /* PAYNTER_FMI3_H */
