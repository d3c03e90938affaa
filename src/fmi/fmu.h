// fmi/fmu.h — the parts of the FMU export (see paynter/fmi.h and
// docs/architecture.md): what the model-specific C and the XML are made from.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "paynter/c_source.h"
#include "paynter/fmi.h"
#include "paynter/simulation.h"

namespace paynter::fmi {

struct Variable {
  std::string name, description;
  std::string causality, variability, initial;  // initial empty: not written
  unsigned value_reference = 0;
  std::optional<double> start;
  int derivative_of = 0;  // 1-based index of the state a derivative belongs to
  std::string unit;          // the name of a UnitDefinition ("" none)
  std::string display_unit = "";  // one of that unit's display units ("" none)
  bool reinit = false;            // FMI 3.0: a state an event's reset sets
  bool event_indicator = false;   // FMI 3.0: an event indicator (its value is GetEventIndicators')
  int dimension = 0;              // FMI 3.0: an array output's length (0: a scalar)
  bool array_component = false;   // FMI 3.0: a component of an array output, not a variable of its own
};

// A <Unit>: an SI unit (its name as paynter writes it, the exponents of its
// <BaseUnit>: kg, m, s, A, K, mol, cd) and the units written in the model for
// quantities of it, as display units (display value = factor * value).
struct UnitDefinition {
  std::string name;
  std::array<int, 7> exponents{};
  struct Display {
    std::string name;
    double factor = 1;
  };
  std::vector<Display> display;
};

// What a parameter slot of the lowered model is in the FMU (pn_parameter_kind
// in model.c): fixed at export, set by the master before or between steps
// (tunable), set by the master at any time (an input: a source marked
// `input: true`), or computed by the FMU from the others (a derived parameter).
enum ParameterKind { kFixed = 0, kTunable = 1, kInput = 2, kCalculated = 3 };

struct FmuModel {
  std::string name, identifier, guid, description;
  LoweredModel lowered;
  std::vector<ParameterKind> parameter_kind;  // per parameter of `lowered`
  std::vector<int> output_slots;
  std::vector<double> output_scale;  // per output: SI value = slot value * scale (the unit written)
  // Per output: how many values its value reference gives: 1, or (FMI 3.0)
  // an array's length at its first component and 0 at its others (no
  // variable); empty: 1 for every output.
  std::vector<int> output_length;
  std::vector<Variable> variables;   // in the order of ModelVariables
  std::vector<UnitDefinition> units;
  // The right-hand side, the outputs, the calculated parameters from the
  // others and the event indicators and reset values (no groups when there is
  // none).
  CSource rhs, outputs, parameters, events;
  // Per event indicator (modes, events, two per switched element): +1 or -1
  // when it is +t or -t plus a value that is constant between events (a time
  // event, whose time model exchange announces), else 0.
  std::vector<int> time_slope;
  FmuOptions options;
};

// A file embedded into paynter by the build (cmake/embed_files.cmake).
struct EmbeddedFile {
  const char* name;
  const char* text;  // NUL-terminated after `size` bytes
  size_t size;
};

// The runtime's files (src/fmi/runtime: the core pn_core.c and its headers,
// the FMI 2.0 functions fmu.c and paynter_fmi2.h, the FMI 3.0 functions fmu3.c
// and paynter_fmi3.h, and pn_butcher.h, the solvers' Runge-Kutta tables as C),
// embedded by the build (src/fmi/CMakeLists.txt).
extern const EmbeddedFile kRuntimeFiles[];
extern const int kRuntimeFilesCount;

// The runtime an FMU of FMI `version` (2 or 3) carries in sources/ (name,
// text): the core and the functions of that version.
std::vector<std::pair<std::string, std::string>> RuntimeFiles(int version);

// model.h and model.c for a model.
std::string ModelHeader(const FmuModel& model);
std::string ModelSource(const FmuModel& model);

// The model's files in sources/ (name, text): model.h, model.c and the
// programs (rhs.c, outputs.c, parameters.c, events.c).
std::vector<std::pair<std::string, std::string>> ModelFiles(const FmuModel& model);
// Every C file an FMU of FMI `version` is compiled from (the runtime's and the
// model's), in order.
std::vector<std::string> CFileNames(int version);

// modelDescription.xml, of the FMI version of model.options.
std::string ModelDescription(const FmuModel& model);
// FMI 3.0: sources/buildDescription.xml, how to compile the sources.
std::string BuildDescription(const FmuModel& model);
// The directory of the shared object in the FMU: binaries/linux64 (FMI 2.0),
// binaries/<platform tuple> (FMI 3.0: x86_64-linux, aarch64-linux, ...).
std::string BinaryDirectory(int version);

// A ZIP archive of the files (name, contents), stored uncompressed.
std::string ZipArchive(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace paynter::fmi
