// ModelSpecToYaml: a spec back to a model file (`paynter expand`).
#include <yaml-cpp/yaml.h>

#include "paynter/multibody.h"

namespace paynter {

std::string ModelSpecToYaml(const ModelSpec& spec) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << (spec.name.empty() ? "model" : spec.name);
  if (!spec.parameters.empty()) {
    out << YAML::Key << "parameters" << YAML::Value << YAML::BeginMap;
    for (const auto& p : spec.parameters) out << YAML::Key << p.name << YAML::Value << p.text;
    out << YAML::EndMap;
  }
  out << YAML::Key << "elements" << YAML::Value << YAML::BeginSeq;
  for (const auto& e : spec.elements) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << e.name << YAML::Key << "kind"
        << YAML::Value << YAML::DoubleQuoted << e.kind;
    for (const auto& [k, v] : e.laws) out << YAML::Key << k << YAML::Value << v;
    if (!e.position.empty()) out << YAML::Key << "position" << YAML::Value << e.position;
    if (!e.initial.empty()) out << YAML::Key << "initial" << YAML::Value << e.initial;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "bonds" << YAML::Value << YAML::BeginSeq;
  for (const auto& b : spec.bonds) {
    out << YAML::Flow << YAML::BeginMap;
    if (!b.name.empty()) out << YAML::Key << "name" << YAML::Value << b.name;
    out << YAML::Key << "from" << YAML::Value << b.from << YAML::Key << "to" << YAML::Value << b.to << YAML::EndMap;
  }
  out << YAML::EndSeq;
  if (!spec.displacements.empty()) {
    out << YAML::Key << "displacements" << YAML::Value << YAML::BeginSeq;
    for (const auto& d : spec.displacements) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << d.name;
      if (!d.of.empty()) out << YAML::Key << "of" << YAML::Value << d.of;
      if (!d.rate.empty()) out << YAML::Key << "rate" << YAML::Value << d.rate;
      if (!d.initial.empty()) out << YAML::Key << "initial" << YAML::Value << d.initial;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  for (const auto& [key, items] : {std::pair{"definitions", &spec.definitions}, std::pair{"outputs", &spec.outputs}}) {
    if (items->empty()) continue;
    out << YAML::Key << key << YAML::Value << YAML::BeginMap;
    for (const auto& it : *items) out << YAML::Key << it.name << YAML::Value << it.text;
    out << YAML::EndMap;
  }
  for (const auto& [key, items] : {std::pair{"generalized", &spec.generalized}, std::pair{"independent", &spec.independent}}) {
    if (items->empty()) continue;
    out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& it : *items) out << it.name;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  return std::string("# expanded by paynter: scalar bonds only\n") + out.c_str() + "\n";
}

}  // namespace paynter
