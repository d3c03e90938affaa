// paynter/pipeline.h — the one front end: a model file (or text) to a Model.
//
// Every consumer — the commands, the Python module, sweeps, the FMU export,
// linearization, the report — loads a model here, through one ordered list of
// passes over the ModelSpec (LoadPasses()), then BuildModel:
//
//   read         the YAML text into a ModelSpec (instances of submodels kept)
//   submodels    instances flattened: elements named by instance path
//   overrides    parameter values replaced (--param), before anything is derived
//   poses        mechanisms: the bodies' and joints' poses added as outputs
//   multibody    bodies, joints and loads into a bond graph: the bodies'
//                Newton-Euler equations with the joints as constraint sources,
//                or (lagrange1, lagrange2, hamilton, boltzmann-hamel) the joints' coordinates
//   vector-bonds vector bonds and multiport elements into scalar ones
//   parasitic    (--constraints parasitic) constraint sources into springs and dampers
//   energy       (--energy) the energy balance's outputs
//
//   LoadedModel m = Load(ModelSource::File("examples/B1_pendulum.yaml"), {});
//   Model model = LoadModel("examples/B1_pendulum.yaml");      // the same, the Model only
//
// `paynter expand FILE --after PASS` writes the spec after any pass.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "paynter/constrained.h"
#include "paynter/equations.h"
#include "paynter/formulations.h"
#include "paynter/model.h"

namespace paynter {

// A model file, or a model's text with the name its messages give it.
struct ModelSource {
  std::string path;                 // the file, or the text's label
  std::optional<std::string> text;  // the YAML text itself (else read from path)
  static ModelSource File(std::string path) { return {std::move(path), std::nullopt}; }
  static ModelSource Text(std::string text, std::string label = "<string>") {
    return {std::move(label), std::move(text)};
  }
};

// What the passes do beyond reading: each option switches one pass on or
// chooses how it works.
struct LoadOptions {
  Formulation form = Formulation::kState;             // multibody: joint coordinates for lagrange1|lagrange2|hamilton|boltzmann-hamel
  ConstraintMethod method = ConstraintMethod::kAuto;  // parasitic: the parasitic pass
  ParasiticOptions parasitic;                         // its stiffness and damping
  bool energy = false;                                // the energy pass
  bool energy_required = false;  // a model the energy pass cannot account for is an error (else: no columns)
  bool poses = false;                                 // the poses pass
  std::map<std::string, double> overrides;            // the overrides pass (--param)
  bool keep_written = false;                          // Load: keep a copy of the spec as written (LoadedModel::written)
};

enum class LoadPass { kRead, kSubmodels, kOverrides, kPoses, kMultibody, kVectorBonds, kParasitic, kEnergy };
struct LoadPassInfo {
  LoadPass pass;
  const char* name;  // as `expand --after` takes it
  const char* does;  // one line
};
// The passes in the order they run.
const std::vector<LoadPassInfo>& LoadPasses();
std::string LoadPassName(LoadPass pass);
// A pass by its name; throws a located Error listing the names otherwise.
LoadPass ParseLoadPass(const std::string& name, const std::string& file = "");

struct LoadedModel {
  ModelSpec written;      // with LoadOptions::keep_written: after submodels, the model as written, flat
  ModelSpec spec;         // after every pass: what BuildModel read
  Model model;
  bool mechanism = false; // the model (its submodels flattened) has a `multibody:` section
};

// Runs every pass and builds the Model. Throws Error (file, line, element,
// hint) for anything wrong with the model or the options.
LoadedModel Load(const ModelSource& source, const LoadOptions& options = {});
// The spec after `last` (expand --after): the passes up to it, no BuildModel.
ModelSpec LoadSpec(const ModelSource& source, const LoadOptions& options, LoadPass last);
// Load(...).model.
Model LoadModel(const std::string& path, const LoadOptions& options = {});
Model LoadModelFromString(const std::string& yaml_text, const std::string& file_label = "<string>",
                          const LoadOptions& options = {});

}  // namespace paynter
