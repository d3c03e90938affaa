// The one front end (paynter/pipeline.h): a model file or text through the
// passes of LoadPasses(), in their order, then BuildModel.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "paynter/constraint_method.h"
#include "paynter/multibody.h"
#include "paynter/pipeline.h"
#include "paynter/progress.h"

namespace paynter {

const std::vector<LoadPassInfo>& LoadPasses() {
  static const std::vector<LoadPassInfo> passes = {
      {LoadPass::kRead, "read", "the YAML text into a model spec, instances of submodels as written"},
      {LoadPass::kSubmodels, "submodels", "instances flattened: their elements named by instance path"},
      {LoadPass::kOverrides, "overrides", "parameter values replaced (--param), before anything is derived from them"},
      {LoadPass::kPoses, "poses", "mechanisms: the bodies' and joints' poses as outputs pose_* (the report's 3D view)"},
      {LoadPass::kMultibody, "multibody",
       "bodies, joints and loads into a bond graph: Newton-Euler with the joints as constraint sources, or the "
       "joints' coordinates (--form lagrange1|lagrange2|hamilton|boltzmann-hamel)"},
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

namespace {

// A mechanism's equations in joint coordinates take the symbolic stages
// seconds to minutes; a name in an output that nothing defines is found
// first, on the Newton-Euler expansion (what `check` builds, in a fraction of
// a second). The joint-coordinate expansion defines names of its own (joint
// forces <J>_F..., the inertia field's ports): a name it could define is left
// for the full build to judge.
void RefuseUndefinedOutputNamesEarly(const ModelSpec& spec) {
  std::vector<std::string> prefixes = {"I_", "joint_inertia"};
  for (const auto* list : {&spec.multibody.bodies, &spec.multibody.joints})
    for (const auto& entry : *list) {
      const auto it = entry.fields.find("name");
      if (it != entry.fields.end() && !it->second.values.empty()) prefixes.push_back(it->second.values[0] + "_");
    }
  ModelSpec newton_euler = spec;
  try {
    ExpandMultibody(&newton_euler);
    newton_euler.multibody.present = false;
    ExpandVectorBonds(&newton_euler);
    BuildModel(newton_euler);
  } catch (const Error& e) {
    const std::string& message = e.diagnostic().message;
    const std::string lead = "undefined symbol '";
    const size_t end = message.find("' in output '");
    if (message.rfind(lead, 0) != 0 || end == std::string::npos) return;  // the full build judges
    std::string name = message.substr(lead.size(), end - lead.size());
    for (const char* variable : {"e_", "f_", "p_", "q_"})
      if (name.rfind(variable, 0) == 0) name = name.substr(2);
    for (const auto& prefix : prefixes)
      if (name.rfind(prefix, 0) == 0) return;
    throw;
  }
}

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
          StageScope stage(InJointCoordinates(o.form)
                               ? fmt::format("forming the mechanism of {} in joint coordinates", spec->file)
                               : fmt::format("expanding the mechanism of {}", spec->file));
          if (InJointCoordinates(o.form)) RefuseUndefinedOutputNamesEarly(*spec);
          switch (FormulationOf(o.form).expansion) {
            case Expansion::kNewtonEuler: ExpandMultibody(spec); break;
            case Expansion::kJointCoordinates:
              ExpandMultibodyInJointCoordinates(spec, /*cut_joints_as_multipliers=*/false);
              break;
            case Expansion::kJointCoordinatesCut:
              ExpandMultibodyInJointCoordinates(spec, /*cut_joints_as_multipliers=*/true);
              break;
            case Expansion::kMassMatrixField: ExpandMultibodyForHamilton(spec); break;
            case Expansion::kQuasiVelocities: ExpandMultibodyForBoltzmannHamel(spec); break;
          }
          spec->multibody.present = false;  // written out as the bond graph it became
        }
        break;
      case LoadPass::kVectorBonds:
        ExpandVectorBonds(spec);
        break;
      case LoadPass::kParasitic:
        // The constraint method's rewrite of the spec, if it has one.
        if (const ConstraintMethodStrategy& method = StrategyFor(o.method); method.RewritesSpec())
          method.RewriteSpec(spec, o.parasitic);
        break;
      case LoadPass::kEnergy:
        if (EnergyRefusal why; o.energy && !AddEnergyAccounting(spec, &why) && o.energy_required)
          ThrowAt({spec->file}, why.element,
                  fmt::format("the energy balance (--energy, --project-energy) cannot be written: {}", why.reason),
                  "storage elements with a constant inertance, capacitance or stiffness (energies p^2/(2 I), "
                  "q^2/(2 C), k q^2/2), and I and C fields",
                  why.reason,
                  "simulate without --energy and --project-energy; write the element's energy as an output of your "
                  "own to watch it");
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
  StageScope stage("reading " + source.path);
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
