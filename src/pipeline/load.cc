// The one front end (paynter/pipeline.h): a model file or text through the
// passes of LoadPasses(), in their order, then BuildModel.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "paynter/multibody.h"
#include "paynter/pipeline.h"

namespace paynter {

const std::vector<LoadPassInfo>& LoadPasses() {
  static const std::vector<LoadPassInfo> passes = {
      {LoadPass::kRead, "read", "the YAML text into a model spec, instances of submodels as written"},
      {LoadPass::kSubmodels, "submodels", "instances flattened: their elements named by instance path"},
      {LoadPass::kOverrides, "overrides", "parameter values replaced (--param), before anything is derived from them"},
      {LoadPass::kPoses, "poses", "mechanisms: the bodies' and joints' poses as outputs pose_* (the report's 3D view)"},
      {LoadPass::kMultibody, "multibody",
       "bodies, joints and loads into a bond graph: Newton-Euler with the joints as constraint sources, or the "
       "joints' coordinates (--form lagrange1|lagrange2|hamilton)"},
      {LoadPass::kVectorBonds, "vector-bonds", "vector bonds and multiport elements into scalar bonds and elements"},
      {LoadPass::kParasitic, "parasitic", "--constraints parasitic: constraint sources into springs and dampers"},
      {LoadPass::kEnergy, "energy", "--energy: the energy balance's outputs"},
  };
  return passes;
}

std::string LoadPassName(LoadPass pass) {
  for (const auto& p : LoadPasses())
    if (p.pass == pass) return p.name;
  return "?";
}

LoadPass ParseLoadPass(const std::string& name, const std::string& file) {
  std::vector<std::string> names;
  for (const auto& p : LoadPasses()) {
    if (name == p.name) return p.pass;
    names.push_back(p.name);
  }
  ThrowAt({file}, "", fmt::format("--after {}: no such pass of the front end", name),
          fmt::format("one of: {}", fmt::join(names, ", ")), name, DidYouMean(name, names));
}

bool InJointCoordinates(Formulation form) {
  return form == Formulation::kLagrange1 || form == Formulation::kLagrange2 || form == Formulation::kHamilton;
}

namespace {

// Runs the passes up to `last` (all of them when empty) on `spec`, which the
// read pass has filled; `written` (when given) receives the flat spec as
// written, `mechanism` (when given) whether it has a multibody section.
void RunPasses(ModelSpec* spec, const LoadOptions& o, std::optional<LoadPass> last, ModelSpec* written,
               bool* mechanism = nullptr) {
  for (const auto& p : LoadPasses()) {
    switch (p.pass) {
      case LoadPass::kRead:
        break;  // done by the caller: the text may come from a file or from memory
      case LoadPass::kSubmodels:
        FlattenSubmodels(spec);
        if (written) *written = *spec;
        if (mechanism) *mechanism = spec->multibody.present;
        break;
      case LoadPass::kOverrides:
        if (!o.overrides.empty()) ApplyParameterOverrides(spec, o.overrides);
        break;
      case LoadPass::kPoses:
        if (o.poses) AddPoseOutputs(spec);
        break;
      case LoadPass::kMultibody:
        // (a mechanism's section may come from its submodels: known after flattening)
        if (spec->multibody.present) {
          if (o.form == Formulation::kHamilton)
            ExpandMultibodyForHamilton(spec);  // the mass matrix as one I field on the joint rates
          else if (InJointCoordinates(o.form))
            ExpandMultibodyInJointCoordinates(spec, /*cut_joints_as_multipliers=*/o.form == Formulation::kLagrange1);
          else
            ExpandMultibody(spec);
          spec->multibody.present = false;  // written out as the bond graph it became
        }
        break;
      case LoadPass::kVectorBonds:
        ExpandVectorBonds(spec);
        break;
      case LoadPass::kParasitic:
        if (o.method == ConstraintMethod::kParasitic && ApplyParasitic(spec, o.parasitic) == 0) {
          ThrowAt({spec->file}, "", "--constraints parasitic: the model has no joint constraint to relax",
                  "a multibody model with joints, or Se elements with 'constraint:'", "no constraint source",
                  "simulate it without --constraints");
        }
        break;
      case LoadPass::kEnergy:
        if (o.energy) AddEnergyAccounting(spec);
        break;
    }
    if (last && p.pass == *last) return;
  }
}

ModelSpec Read(const ModelSource& source) {
  return source.text ? ReadHierarchicalModelSpec(*source.text, source.path)
                     : ReadHierarchicalModelSpecFile(source.path);
}

}  // namespace

ModelSpec LoadSpec(const ModelSource& source, const LoadOptions& options, LoadPass last) {
  ModelSpec spec = Read(source);
  RunPasses(&spec, options, last, nullptr);
  return spec;
}

LoadedModel Load(const ModelSource& source, const LoadOptions& options) {
  LoadedModel m;
  m.spec = Read(source);
  RunPasses(&m.spec, options, std::nullopt, options.keep_written ? &m.written : nullptr, &m.mechanism);
  m.model = BuildModel(m.spec);
  return m;
}

Model LoadModel(const std::string& path, const LoadOptions& options) {
  return Load(ModelSource::File(path), options).model;
}

Model LoadModelFromString(const std::string& yaml_text, const std::string& file_label, const LoadOptions& options) {
  return Load(ModelSource::Text(yaml_text, file_label), options).model;
}

}  // namespace paynter
