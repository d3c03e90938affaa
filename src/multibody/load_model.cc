// LoadModel: the YAML reader, the multibody expansion, then BuildModel.
#include "paynter/model.h"
#include "paynter/multibody.h"

namespace paynter {

Model LoadModel(const std::string& path) {
  ModelSpec spec = ReadModelSpecFile(path);
  if (spec.multibody.present) ExpandMultibody(&spec);
  ExpandVectorBonds(&spec);
  return BuildModel(spec);
}

Model LoadModelFromString(const std::string& yaml_text, const std::string& file_label) {
  ModelSpec spec = ReadModelSpec(yaml_text, file_label);
  if (spec.multibody.present) ExpandMultibody(&spec);
  ExpandVectorBonds(&spec);
  return BuildModel(spec);
}

}  // namespace paynter
