// fmi/fmu.h — the parts of the FMU export (see paynter/fmi.h and
// docs/architecture.md): what the model-specific C and the XML are made from.
#pragma once

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
  std::string unit;
};

struct FmuModel {
  std::string name, identifier, guid, description;
  LoweredModel lowered;
  std::vector<bool> tunable;  // per parameter
  std::vector<int> output_slots;
  std::vector<Variable> variables;  // in the order of ModelVariables
  CSource rhs, outputs;
  FmuOptions options;
};

// The fixed C of every FMU (fmu.c).
extern const char* const kRuntimeC;

// model.h and model.c for a model.
std::string ModelHeader(const FmuModel& model);
std::string ModelSource(const FmuModel& model);

// modelDescription.xml.
std::string ModelDescription(const FmuModel& model);

// A ZIP archive of the files (name, contents), stored uncompressed.
std::string ZipArchive(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace paynter::fmi
