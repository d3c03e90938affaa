// tests/fmi_importer.h — the test importer of paynter's FMUs (FMI 2.0),
// shared by its files:
//   fmi_importer_description.cc    modelDescription.xml read and checked against the standard's rules
//   fmi_importer_calls.cc          an exported FMU unpacked, its shared object loaded: the fmi2 functions
//   fmi_importer_drivers.cc        the calling sequences (model exchange with and without events,
//                                  co-simulation, tests/fmi2_master.c) and the comparison with simulate
//   fmi_importer_examples_test.cc  the examples' FMUs against `paynter simulate`
//   fmi_importer_errors_test.cc    bad call sequences, the command's errors, hostile names
//
// A test importer of paynter's FMUs (FMI 2.0): exports B1, B3 and B4 with
// `paynter fmu`, unpacks them with unzip, checks modelDescription.xml against
// the standard's rules, loads the shared object with dlopen and runs it
// through the standard's calling sequences — model exchange integrated by the
// importer's own classical Runge-Kutta of fine step through fmi2SetTime,
// fmi2SetContinuousStates and fmi2GetDerivatives, co-simulation by
// fmi2DoStep — and compares the outputs with `paynter simulate`. The DC
// motor and B4 are also driven by tests/fmi2_master.c, a master built on the
// standard's own headers (inputs as a step and a sine, a parameter set
// between runs), against simulate fed the same signal.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "paynter_fmi2.h"
#include "test_files.h"
#include "test_paths.h"

namespace fmi_import {

namespace fs = std::filesystem;

// A file of the source tree (a path relative to it), or a test's own (absolute).
std::string Source(const std::string& rel);

// A shell command's wait status and its output (stdout and stderr).
struct Result {
  int status;
  std::string output;
};
Result Shell(const std::string& cmd);

// ---- modelDescription.xml (fmi_importer_description.cc) ----

struct Variable {
  std::string name, causality, variability, initial, unit, display_unit, description;
  unsigned vr = 0;
  bool has_start = false;
  double start = 0;
  int derivative = 0;
};

struct UnitDefinition {
  std::map<std::string, int> base;        // BaseUnit exponents given
  std::map<std::string, double> display;  // DisplayUnit name -> factor
};

struct Description {
  std::string model_name, guid, identifier_me, identifier_cs;
  int num_event_indicators = 0;
  std::set<std::string> source_files;  // <SourceFiles> of ModelExchange and CoSimulation
  std::map<std::string, UnitDefinition> units;
  std::vector<Variable> vars;
  std::vector<int> outputs, derivatives, initial_unknowns;  // 1-based indices
  std::map<std::string, unsigned> vr_of;
  double Start(const std::string& name) const {
    for (const Variable& v : vars)
      if (v.name == name) return v.start;
    return NAN;
  }
  const Variable* Find(const std::string& name) const {
    for (const Variable& v : vars)
      if (v.name == name) return &v;
    return nullptr;
  }
  // A variable's value in its display unit is factor * value (1 without one).
  double DisplayFactor(const std::string& name) const {
    const Variable* v = Find(name);
    if (!v || v->display_unit.empty() || !units.count(v->unit)) return 1;
    const auto& d = units.at(v->unit).display;
    return d.count(v->display_unit) ? d.at(v->display_unit) : NAN;
  }
};

// Reads and checks a model description; every violation is a test failure.
Description CheckModelDescription(const std::string& xml);

// ---- the fmi2 functions, declared by paynter's own FMI 2.0 header (the one the FMUs' runtime is built on) ----

using Component = fmi2Component;
using Status = fmi2Status;
constexpr Status kOK = fmi2OK, kDiscard = fmi2Discard, kError = fmi2Error;
using EventInfo = fmi2EventInfo;

// The messages the FMUs logged, in order.
extern std::vector<std::string> g_log;
void Logger(fmi2ComponentEnvironment, fmi2String instance, fmi2Status status, fmi2String category, fmi2String message,
            ...);

// The fmi2 functions of a loaded shared object, one pointer each (f.DoStep is fmi2DoStep).
struct Fmu {
  void* handle = nullptr;
#define PN_POINTER(name) pn_fmi2_##name* name = nullptr;
  PN_FMI2_FUNCTIONS(PN_POINTER)
#undef PN_POINTER

  ~Fmu() {
    if (handle) dlclose(handle);
  }
  void Load(const std::string& so) {
    handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
#define PN_BIND(name)                                                    \
  name = reinterpret_cast<pn_fmi2_##name*>(dlsym(handle, "fmi2" #name)); \
  EXPECT_NE(reinterpret_cast<void*>(name), nullptr) << "missing fmi2" #name;
    PN_FMI2_FUNCTIONS(PN_BIND)
#undef PN_BIND
  }
};

extern const fmi2CallbackFunctions kCallbacks;

// An exported and unpacked FMU.
struct Unpacked {
  fs::path dir;
  Description desc;
  std::string so;
  Fmu fmu;
};

// A directory of its own under the build's fmi_importer/, emptied.
fs::path TestDir(const std::string& name);
// Exports `model` with `options` and unpacks it; the files and the description are checked.
void ExportAndUnpack(const std::string& model, const std::string& options, Unpacked* u);

// ---- the calling sequences and the comparison with simulate (fmi_importer_drivers.cc) ----

// A table of outputs over time (t first).
using Table = paynter::testing::CsvTable;

// `paynter simulate` (dopri5 at rtol 1e-10, atol 1e-12 unless `options` say otherwise).
Table Simulate(const std::string& model, const std::string& options, double t_end, double dt_out, const fs::path& dir);
// The value references and names of the description's outputs.
std::vector<unsigned> OutputRefs(const Description& d, std::vector<std::string>* names);
// Model exchange integrated by classical Runge-Kutta, `steps_per_output` steps per output interval.
Table RunModelExchange(Unpacked& u, double t_end, double dt_out, int steps_per_output,
                       const std::vector<std::pair<std::string, double>>& params = {});
// Co-simulation: fmi2DoStep from output time to output time.
Table RunCoSimulation(Unpacked& u, double t_end, double dt_out,
                      const std::vector<std::pair<std::string, double>>& params = {});
// The largest difference per output of `got` against `ref` (same times).
std::map<std::string, double> MaxDifferences(const Table& ref, const Table& got);
// Every output within `tol` times (1 + its largest magnitude).
void ExpectClose(const char* what, const Table& ref, const Table& got, double tol);

// The rows of a run of tests/fmi2_master.c, and of a second run after fmi2Reset.
struct MasterRun {
  Table first, second;
};
MasterRun RunMaster(const Unpacked& u, const std::string& kind, double t_end, double dt_out, const std::string& options,
                    const std::string& name);

// ---- events: state events with resets, time events of sampled controllers ----

// What a model-exchange run with events went through.
struct EventCounts {
  int state_events = 0, time_events = 0, resets = 0;
};

// Model exchange with events (state events located on the step's interpolant, time events announced);
// the parameters set before initialization; with `failure`, an error of fmi2NewDiscreteStates ends the run
// and *failure says what the FMU logged then.
Table RunModelExchangeWithEvents(Unpacked& u, double t_end, double dt_out, double h, EventCounts* count,
                                 const std::vector<std::pair<std::string, double>>& params = {},
                                 bool stop_time_defined = true, std::string* failure = nullptr);
// simulate's rows at the output times k dt_out of a model with events.
Table GridRows(const Table& csv, double t_end, double dt_out);

// A number as C writes it with 17 significant digits.
std::string Num(double x);
// examples/<model>.yaml with `from` replaced by `to` (once), as <name>.yaml in `dir`.
fs::path ModelVariant(const std::string& model, const std::string& from, const std::string& to, const fs::path& dir,
                      const std::string& name);
// `paynter simulate` of a model file at rtol 1e-10, atol 1e-12, an event's rows made one.
Table SimulateFile(const fs::path& model, const std::string& options, double t_end, double dt_out, const fs::path& dir,
                   const std::string& name);
// A variable's value reference as text.
std::string Vr(const Unpacked& u, const std::string& name);
// Every output of `got` within `tol` of `ref`'s relative to the output's largest magnitude.
void ExpectAgree(const char* what, const Table& ref, const Table& got, double tol);

}  // namespace fmi_import
