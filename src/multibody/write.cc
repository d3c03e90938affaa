// ModelSpecToYaml: a spec back to a model file (`paynter expand`).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "paynter/multibody.h"
#include "paynter/units.h"

namespace paynter {
namespace {

// The text of an expression given as a text or as the expression itself.
std::string Written(const std::string& text, const std::optional<GiNaC::ex>& value) {
  return value ? ExpressionText(*value) : text;
}

// A parameter's or output's text with its unit: the text is its SI value
// (SplitUnits), so the unit written back is the SI unit of the same dimension.
std::string WithUnit(const std::string& text, const std::string& unit) {
  if (unit.empty()) return text;
  const auto u = ParseUnit(unit);
  return u ? text + " " + DimensionText(u->dim) : text;
}

// A law's text: a vector or matrix modulus written as a list (`[m, m, m]`)
// goes back as the list it was read from.
void EmitLaw(YAML::Emitter& out, const std::string& text) {
  if (!text.empty() && text[0] == '[') {
    try {
      const YAML::Node list = YAML::Load(text);
      if (list.IsSequence()) {
        out << YAML::Flow << list;
        return;
      }
    } catch (const YAML::Exception&) {
      // not a list after all: written as the text it is
    }
  }
  out << text;
}

void EmitField(YAML::Emitter& out, const ModelSpec::Field& f) {
  if (!f.is_list) {
    out << (f.values.empty() ? std::string() : f.values[0]);
    return;
  }
  out << YAML::Flow << YAML::BeginSeq;
  for (const auto& v : f.values) out << v;
  out << YAML::EndSeq;
}

// The `multibody:` section as read (a spec before the multibody pass).
void EmitMultibody(YAML::Emitter& out, const ModelSpec::MultibodySpec& mb) {
  out << YAML::Key << "multibody" << YAML::Value << YAML::BeginMap;
  for (const auto& [key, field] : mb.settings) {
    out << YAML::Key << key << YAML::Value;
    EmitField(out, field);
  }
  for (const auto& [key, list] : {std::pair{"bodies", &mb.bodies}, std::pair{"joints", &mb.joints},
                                  std::pair{"loads", &mb.loads}}) {
    if (list->empty()) continue;
    out << YAML::Key << key << YAML::Value << YAML::BeginSeq;
    for (const auto& entry : *list) {
      out << YAML::Flow << YAML::BeginMap;
      // the name first, as a reader expects it
      if (auto it = entry.fields.find("name"); it != entry.fields.end()) {
        out << YAML::Key << "name" << YAML::Value;
        EmitField(out, it->second);
      }
      for (const auto& [k, f] : entry.fields) {
        if (k == "name") continue;
        out << YAML::Key << k << YAML::Value;
        EmitField(out, f);
      }
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

}  // namespace

std::string ModelSpecToYaml(const ModelSpec& spec) {
  YAML::Emitter out;
  bool vector_bonds = false;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << (spec.name.empty() ? "model" : spec.name);
  if (!spec.parameters.empty()) {
    out << YAML::Key << "parameters" << YAML::Value << YAML::BeginMap;
    for (const auto& p : spec.parameters) out << YAML::Key << p.name << YAML::Value << WithUnit(p.text, p.unit);
    out << YAML::EndMap;
  }
  out << YAML::Key << "elements" << YAML::Value << YAML::BeginSeq;
  const std::set<std::string> signals = BlockSignals(spec);  // a source they drive is written modulated
  for (const auto& e : spec.elements) {
    const bool modulated = (e.kind == "Se" || e.kind == "Sf") && !e.laws.empty() && UsesAny(e.laws[0].second, signals);
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << e.name << YAML::Key << "kind"
        << YAML::Value << YAML::DoubleQuoted << (modulated ? "M" + e.kind : e.kind);
    for (size_t i = 0; i < e.laws.size(); ++i) {
      out << YAML::Key << e.laws[i].first << YAML::Value;
      EmitLaw(out, i == 0 ? Written(e.laws[i].second, e.law_value) : e.laws[i].second);
    }
    if (!e.position.empty() || e.position_value)
      out << YAML::Key << "position" << YAML::Value << Written(e.position, e.position_value);
    if (!e.initial.empty() || e.initial_value)
      out << YAML::Key << "initial" << YAML::Value << Written(e.initial, e.initial_value);
    for (const auto& [key, text] : {std::pair{"joint", &e.joint}, std::pair{"direction", &e.direction},
                                    std::pair{"parasitic_stiffness", &e.parasitic_stiffness},
                                    std::pair{"parasitic_damping", &e.parasitic_damping},
                                    std::pair{"static", &e.static_friction}})
      if (!text->empty()) out << YAML::Key << key << YAML::Value << *text;
    if (e.input) out << YAML::Key << "input" << YAML::Value << "true";
    if (e.domain.size() == 1) out << YAML::Key << "domain" << YAML::Value << e.domain[0];
    if (e.domain.size() > 1) out << YAML::Key << "domain" << YAML::Value << YAML::Flow << e.domain;
    out << YAML::EndMap;
  }
  for (const auto& f : spec.fields) {  // storage fields, with their ports named
    const size_t n = f.coordinates.size();
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << f.name << YAML::Key << "kind" << YAML::Value
        << f.kind;
    std::vector<std::string> ports = f.ports;
    for (size_t k = ports.size(); k < n; ++k) ports.push_back(fmt::format("{}_{}", f.name, k + 1));
    out << YAML::Key << "ports" << YAML::Value << YAML::Flow << ports;
    out << YAML::Key << "coordinates" << YAML::Value << YAML::Flow << f.coordinates;
    if (f.kind == "IF") {
      out << YAML::Key << "inertia" << YAML::Value << YAML::BeginSeq;
      for (size_t i = 0; i < n; ++i) {
        std::vector<std::string> row;
        for (size_t j = 0; j < n; ++j)
          row.push_back(f.inertia_value ? ExpressionText((*f.inertia_value)[i][j]) : f.inertia[i][j]);
        out << YAML::Flow << row;
      }
      out << YAML::EndSeq;
    } else {
      out << YAML::Key << "energy" << YAML::Value << f.energy;
    }
    std::vector<std::string> initial = f.initial;
    if (initial.empty())
      for (const auto& v : f.initial_value) initial.push_back(ExpressionText(v));
    if (!initial.empty()) out << YAML::Key << "initial" << YAML::Value << YAML::Flow << initial;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "bonds" << YAML::Value << YAML::BeginSeq;
  for (const auto& b : spec.bonds) {
    out << YAML::Flow << YAML::BeginMap;
    if (!b.name.empty()) out << YAML::Key << "name" << YAML::Value << b.name;
    out << YAML::Key << "from" << YAML::Value << b.from << YAML::Key << "to" << YAML::Value << b.to;
    if (b.dim > 1) out << YAML::Key << "dim" << YAML::Value << b.dim;
    out << YAML::EndMap;
    vector_bonds = vector_bonds || b.dim > 1;
  }
  out << YAML::EndSeq;
  if (!spec.displacements.empty()) {
    out << YAML::Key << "displacements" << YAML::Value << YAML::BeginSeq;
    for (const auto& d : spec.displacements) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << d.name;
      if (!d.of.empty()) out << YAML::Key << "of" << YAML::Value << d.of;
      if (!d.rate.empty() || d.rate_value) out << YAML::Key << "rate" << YAML::Value << Written(d.rate, d.rate_value);
      if (!d.initial.empty() || d.initial_value)
        out << YAML::Key << "initial" << YAML::Value << Written(d.initial, d.initial_value);
      if (!d.position.empty() || d.position_value) {
        out << YAML::Key << "position" << YAML::Value << Written(d.position, d.position_value);
        if (d.period > 0) out << YAML::Key << "period" << YAML::Value << fmt::format("{:.17g}", d.period);
      }
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  for (const auto& [key, items] : {std::pair{"definitions", &spec.definitions}, std::pair{"outputs", &spec.outputs}}) {
    if (items->empty()) continue;
    out << YAML::Key << key << YAML::Value << YAML::BeginMap;
    for (const auto& it : *items) out << YAML::Key << it.name << YAML::Value << WithUnit(Written(it.text, it.value), it.unit);
    out << YAML::EndMap;
  }
  if (!spec.events.empty()) {  // docs/events.md
    out << YAML::Key << "events" << YAML::Value << YAML::BeginSeq;
    for (const auto& ev : spec.events) {
      out << YAML::BeginMap;
      if (!ev.name.empty()) out << YAML::Key << "name" << YAML::Value << ev.name;
      out << YAML::Key << "when" << YAML::Value << ev.when;
      if (!ev.resets.empty()) {
        out << YAML::Key << "reset" << YAML::Value << YAML::BeginMap;
        for (const auto& r : ev.resets) out << YAML::Key << r.name << YAML::Value << r.text;
        out << YAML::EndMap;
      }
      if (ev.stop) out << YAML::Key << "stop" << YAML::Value << "true";
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  for (const auto& [key, items] : {std::pair{"generalized", &spec.generalized}, std::pair{"independent", &spec.independent},
                                   std::pair{"quasi_velocities", &spec.quasi_velocities}}) {
    if (items->empty()) continue;
    out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& it : *items) out << it.name;
    out << YAML::EndSeq;
  }
  // The run settings, as written (docs/model-format.md, "Run settings").
  if (!spec.simulation.empty()) {
    out << YAML::Key << "simulation" << YAML::Value << YAML::BeginMap;
    for (const auto& it : spec.simulation) out << YAML::Key << it.name << YAML::Value << it.text;
    out << YAML::EndMap;
  }
  // What an assembly of the start may do.
  if (!spec.assembly_held.empty()) {
    out << YAML::Key << "assembly_held" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& name : spec.assembly_held) out << name;
    out << YAML::EndSeq;
  }
  if (spec.assemble) out << YAML::Key << "assemble" << YAML::Value << "true";
  if (spec.multibody.present) EmitMultibody(out, spec.multibody);
  out << YAML::EndMap;
  const char* header = vector_bonds || spec.multibody.present
                           ? "# written by paynter expand --after: vector bonds or the multibody section still to expand\n"
                           : "# expanded by paynter: scalar bonds only\n";
  return header + std::string(out.c_str()) + "\n";
}

}  // namespace paynter
