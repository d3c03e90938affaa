// YAML model files -> ModelSpec -> Model. See docs/model-format.md.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model_internal.h"
#include "yaml_tree.h"
#include "paynter/files.h"
#include "paynter/model.h"
#include "paynter/units.h"

namespace paynter {

const std::set<std::string>& RunSettingNames() {
  static const std::set<std::string> names = {"t_end", "t0",        "method", "form",      "constraints",    "rtol",
                                              "atol",  "dt_out",    "step",   "max_steps", "drift_tolerance",
                                              "project_energy"};
  return names;
}

namespace {

using yaml::Node;

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  SourceLocation Where(const Node& n) const {
    const yaml::Mark m = n.Mark();
    if (m.line < 0) return {file_, 0, 0};
    return {file_, m.line + 1, m.column + 1};
  }

  [[noreturn]] void Fail(const Node& n, const std::string& element, const std::string& message,
                         const std::string& expected, const std::string& got, const std::string& hint = "") const {
    ThrowAt(Where(n), element, message, expected, got, hint);
  }

  static std::string Describe(const Node& n) {
    switch (n.Type()) {
      case yaml::NodeType::Null: return "nothing";
      case yaml::NodeType::Scalar: return "'" + n.Scalar() + "'";
      case yaml::NodeType::Sequence: return "a list";
      case yaml::NodeType::Map: return "a mapping";
      default: return "an undefined node";
    }
  }

  // `layout:`, the drawing's positions that paynter studio keeps (docs/studio.md):
  // names, each with [x, y], two numbers. Nothing else reads it.
  void CheckLayout(const Node& layout) const {
    if (!layout || layout.IsNull()) return;
    if (!layout.IsMap())
      Fail(layout, "", "'layout' must be a mapping of names to positions", "name: [x, y]", Describe(layout));
    for (const auto kv : layout.Entries()) {
      const Node& p = kv.second;
      bool ok = p.IsSequence() && p.size() == 2;
      for (size_t i = 0; ok && i < 2; ++i) {
        ok = p[i].IsScalar();
        if (!ok) break;
        const std::string v = p[i].Scalar();
        char* end = nullptr;
        std::strtod(v.c_str(), &end);
        ok = !v.empty() && end == v.c_str() + v.size();
      }
      if (!ok)
        Fail(p, kv.first.IsScalar() ? kv.first.Scalar() : "", "a position in 'layout' is two numbers", "[x, y]",
             Describe(p), "the studio writes these; remove the line to let the drawing place it");
    }
  }

  std::string Scalar(const Node& n, const std::string& element, const std::string& what) const {
    if (!n.IsScalar()) Fail(n, element, what + " must be a single value", "a number, name or expression", Describe(n));
    return n.Scalar();
  }

  void CheckKeys(const Node& map, const std::set<std::string>& allowed, const std::string& element,
                 const std::string& where_desc) const {
    for (const auto kv : map.Entries()) {
      const std::string key = kv.first.Scalar();
      if (!allowed.count(key)) {
        std::vector<std::string> cands(allowed.begin(), allowed.end());
        std::string list;
        for (const auto& c : cands) list += (list.empty() ? "" : ", ") + c;
        std::string hint = DidYouMean(key, cands);
        Fail(kv.first, element, fmt::format("unknown key '{}' in {}", key, where_desc), "one of: " + list, key, hint);
      }
    }
  }

  ModelSpec Read(const Node& root) {
    ModelSpec spec;
    spec.file = file_;
    if (root.IsNull()) Fail(root, "", "the model file is empty", "a YAML mapping with 'elements:' and 'bonds:'", "nothing");
    if (!root.IsMap())
      Fail(root, "", "the model file's top level must be a mapping", "keys such as name:, parameters:, elements:, bonds:",
           Describe(root));
    CheckKeys(root,
              {"name", "description", "parameters", "elements", "bonds", "displacements", "outputs", "generalized",
               "independent", "quasi_velocities", "definitions", "multibody", "assembly_held", "assemble", "ports",
               "submodels", "instances", "events", "simulation", "blocks", "layout"},
              "", "the model's top level");
    CheckLayout(root["layout"]);
    ReadSubmodelSections(root, &spec);
    // What an assembly of the start may do (written by `paynter expand` for a
    // mechanism; docs/model-format.md, "Constraint sources").
    if (const auto held = root["assembly_held"]) {
      if (!held.IsSequence())
        Fail(held, "", "'assembly_held' must be a list of state names", "[x1, p_m1, ...]", Describe(held));
      for (const auto& n : held) spec.assembly_held.push_back(Scalar(n, "", "assembly_held"));
    }
    if (const auto a = root["assemble"]) {
      const std::string v = Scalar(a, "", "assemble");
      if (v != "true" && v != "false") Fail(a, "", "'assemble' is true or false", "assemble: true", v);
      spec.assemble = v == "true";
    }
    for (const char* key : {"generalized", "independent", "quasi_velocities"}) {
      const auto list = root[key];
      if (!list) continue;
      if (!list.IsSequence())
        Fail(list, "", fmt::format("'{}' must be a list of 1-junction names", key), "[junction, ...]", Describe(list));
      for (const auto& n : list)
        (std::string(key) == "generalized"   ? spec.generalized
         : std::string(key) == "independent" ? spec.independent
                                              : spec.quasi_velocities)
            .push_back({Scalar(n, "", key), "", Where(n)});
    }
    if (root["name"]) spec.name = Scalar(root["name"], "", "name");
    if (const auto params = root["parameters"]) {
      if (!params.IsMap() && !params.IsNull())
        Fail(params, "", "'parameters' must be a mapping", "name: value lines", Describe(params));
      for (const auto kv : params.Entries())
        if (kv.second.IsNull()) {  // no value: an instance of this submodel must give one
          spec.required_parameters.push_back(kv.first.Scalar());
          spec.parameters.push_back({kv.first.Scalar(), "", Where(kv.first)});
        } else
        spec.parameters.push_back({kv.first.Scalar(), Scalar(kv.second, "", "parameter '" + kv.first.Scalar() + "'"),
                                   Where(kv.second)});
    }
    // A multibody model, one made of submodels or of signal blocks only, may have no hand-written elements at all.
    const bool mb = root["multibody"] || root["instances"] || root["blocks"];
    const auto elements = root["elements"];
    if (!elements && !mb) Fail(root, "", "the model has no 'elements:' section", "a list of elements", "none");
    if (elements) {
      if (!elements.IsSequence())
        Fail(elements, "", "'elements' must be a list", "- {name: ..., kind: ...}", Describe(elements));
      for (const auto& en : elements) {
        // A multiport storage field (kind IF or CF) is a field of the spec, not an element.
        if (en.IsMap() && en["kind"] && en["kind"].IsScalar() &&
            (en["kind"].Scalar() == "IF" || en["kind"].Scalar() == "CF"))
          spec.fields.push_back(ReadField(en));
        else
          spec.elements.push_back(ReadElement(en));
      }
    }
    const auto bonds = root["bonds"];
    if (!bonds && !mb) Fail(root, "", "the model has no 'bonds:' section", "a list of bonds", "none");
    if (bonds) {
      if (!bonds.IsSequence())
        Fail(bonds, "", "'bonds' must be a list", "- {from: A, to: B} or - [A, B]", Describe(bonds));
      for (const auto& bn : bonds) spec.bonds.push_back(ReadBond(bn));
    }
    if (const auto ds = root["displacements"]) {
      if (!ds.IsSequence()) Fail(ds, "", "'displacements' must be a list", "- {name: x, of: J1}", Describe(ds));
      for (const auto& dn : ds) {
        if (!dn.IsMap()) Fail(dn, "", "a displacement must be a mapping", "{name: x, of: J1, initial: 0}", Describe(dn));
        CheckKeys(dn, {"name", "of", "rate", "initial", "position", "period"}, "", "a displacement");
        ModelSpec::DisplacementSpec d;
        if (!dn["name"] || (!dn["of"] && !dn["rate"]) || (dn["of"] && dn["rate"]))
          Fail(dn, "", "a displacement needs 'name' and one of 'of' or 'rate'",
               "{name: x, of: J1} or {name: W, rate: e_src*f_src}", "missing or conflicting keys");
        d.name = Scalar(dn["name"], "", "displacement name");
        if (dn["of"]) d.of = Scalar(dn["of"], "", "displacement 'of'");
        if (dn["rate"]) d.rate = Scalar(dn["rate"], "", "displacement 'rate'");
        if (dn["initial"]) d.initial = Scalar(dn["initial"], "", "initial value");
        if (dn["position"]) d.position = Scalar(dn["position"], "", "displacement 'position'");
        if (dn["period"]) {
          const std::string p = Scalar(dn["period"], "", "displacement 'period'");
          size_t used = 0;
          try {
            d.period = std::stod(p, &used);
          } catch (const std::exception&) {
            used = 0;
          }
          if (used != p.size() || !std::isfinite(d.period) || d.period < 0 || !dn["position"])
            Fail(dn["period"], "", "a displacement's 'period' is a number >= 0 beside its 'position'",
                 "{name: J_angle, ..., position: <expression>, period: 6.283185307179586}", p,
                 "the period (2 pi for an angle) keeps the turns when the coordinate is set from 'position'");
        }
        d.where = Where(dn);
        spec.displacements.push_back(d);
      }
    }
    if (const auto mb = root["multibody"]) ReadMultibody(mb, &spec.multibody);
    if (const auto defs = root["definitions"]) {
      if (!defs.IsMap()) Fail(defs, "", "'definitions' must be a mapping", "name: expression lines", Describe(defs));
      for (const auto kv : defs.Entries())
        spec.definitions.push_back({kv.first.Scalar(), Scalar(kv.second, "", "definition '" + kv.first.Scalar() + "'"),
                                    Where(kv.second)});
    }
    if (const auto evs = root["events"]) ReadEvents(evs, &spec);
    if (const auto sim = root["simulation"]) {
      if (!sim.IsMap())
        Fail(sim, "", "'simulation' must be a mapping of run settings", "simulation: {t_end: 10, method: bdf}",
             Describe(sim));
      CheckKeys(sim, RunSettingNames(), "", "the run settings");
      for (const auto kv : sim.Entries())
        spec.simulation.push_back(
            {kv.first.Scalar(), Scalar(kv.second, "", "run setting '" + kv.first.Scalar() + "'"), Where(kv.second)});
    }
    if (const auto outs = root["outputs"]) {
      if (outs.IsMap()) {
        for (const auto kv : outs.Entries())
          spec.outputs.push_back({kv.first.Scalar(), Scalar(kv.second, "", "output '" + kv.first.Scalar() + "'"),
                                  Where(kv.second)});
      } else if (outs.IsSequence()) {
        for (const auto& on : outs) {
          if (!on.IsMap() || !on["name"] || !on["value"])
            Fail(on, "", "an output must be a mapping with name and value", "{name: x, value: q_C1}", Describe(on));
          CheckKeys(on, {"name", "value"}, "", "an output");
          spec.outputs.push_back({Scalar(on["name"], "", "output name"), Scalar(on["value"], "", "output value"),
                                  Where(on["value"])});
        }
      } else {
        Fail(outs, "", "'outputs' must be a mapping", "name: expression lines", Describe(outs));
      }
    }
    if (const auto bl = root["blocks"]) ReadBlocks(bl, &spec);
    ExpandBlocks(&spec);  // signal blocks as displacements, definitions and events
    SplitUnits(&spec);  // `m: 2 kg`: the unit apart, the value in SI units
    return spec;
  }

  // blocks: a list of {name, type, <key>: value} (docs/model-format.md,
  // "Signal blocks"); a value is a text, a list of texts or a matrix.
  void ReadBlocks(const Node& bl, ModelSpec* spec) const {
    if (!bl.IsSequence())
      Fail(bl, "", "'blocks' must be a list", "- {name: c, type: gain, input: e_x, k: 2}", Describe(bl));
    for (const auto& bn : bl) {
      if (!bn.IsMap() || !bn["name"] || !bn["type"])
        Fail(bn, "", "a block must be a mapping with name and type", "{name: c, type: gain, input: e_x, k: 2}",
             Describe(bn));
      ModelSpec::BlockSpec b;
      b.where = Where(bn);
      b.name = Scalar(bn["name"], "", "block name");
      b.type = Scalar(bn["type"], b.name, "block type");
      for (const auto kv : bn.Entries()) {
        const std::string key = kv.first.Scalar();
        if (key == "name" || key == "type") continue;
        const std::string what = fmt::format("'{}' of block '{}'", key, b.name);
        ModelSpec::BlockSpec::Value v;
        v.where = Where(kv.second);
        if (kv.second.IsSequence()) {
          bool matrix = false;
          for (const auto& x : kv.second) matrix = matrix || x.IsSequence();
          v.depth = matrix ? 2 : 1;
          if (matrix) {
            for (const auto& row : kv.second) {
              if (!row.IsSequence())
                Fail(row, b.name, fmt::format("{} mixes rows and values", what), "[[a, b], [c, d]]", Describe(row));
              v.rows.emplace_back();
              for (const auto& x : row) v.rows.back().push_back(Scalar(x, b.name, what));
            }
          } else {
            v.rows.emplace_back();
            for (const auto& x : kv.second) v.rows.back().push_back(Scalar(x, b.name, what));
          }
        } else {
          v.rows = {{Scalar(kv.second, b.name, what)}};
        }
        b.values[key] = std::move(v);
      }
      spec->blocks.push_back(std::move(b));
    }
  }

  // events: a list of {name, when, reset: {state: expression}, stop} (docs/events.md).
  void ReadEvents(const Node& evs, ModelSpec* spec) const {
    if (!evs.IsSequence())
      Fail(evs, "", "'events' must be a list", "- {when: x < 0, reset: {p_m: -e*p_m}}", Describe(evs));
    for (const auto& en : evs) {
      if (!en.IsMap()) Fail(en, "", "an event must be a mapping", "{when: x < 0, reset: {p_m: -e*p_m}}", Describe(en));
      CheckKeys(en, {"name", "when", "reset", "stop"}, "", "an event");
      ModelSpec::EventSpec e;
      e.where = Where(en);
      if (en["name"]) e.name = Scalar(en["name"], "", "event name");
      if (en["when"]) e.when = Scalar(en["when"], "", "an event's 'when'");
      if (const auto st = en["stop"]) {
        const std::string v = Scalar(st, "", "stop");
        if (v != "true" && v != "false") Fail(st, "", "'stop' is true or false", "stop: true", v);
        e.stop = v == "true";
      }
      if (const auto rs = en["reset"]) {
        if (!rs.IsMap()) Fail(rs, "", "'reset' must be a mapping", "state: expression lines", Describe(rs));
        for (const auto kv : rs.Entries())
          e.resets.push_back({kv.first.Scalar(), Scalar(kv.second, "", "reset of '" + kv.first.Scalar() + "'"),
                              Where(kv.second)});
      }
      spec->events.push_back(std::move(e));
    }
  }

  ModelSpec::Field ReadField(const Node& n, const std::string& what) const {
    ModelSpec::Field f;
    f.where = Where(n);
    if (n.IsSequence()) {
      f.is_list = true;
      for (const auto& x : n) f.values.push_back(Scalar(x, "", what));
    } else {
      f.values.push_back(Scalar(n, "", what));
    }
    return f;
  }

  void ReadMultibody(const Node& mb, ModelSpec::MultibodySpec* out) const {
    if (!mb.IsMap())
      Fail(mb, "", "'multibody' must be a mapping", "keys such as gravity:, bodies:, joints:, loads:", Describe(mb));
    out->present = true;
    out->where = Where(mb);
    for (const auto kv : mb.Entries()) {
      const std::string key = kv.first.Scalar();
      if (key == "bodies" || key == "joints" || key == "loads") {
        if (!kv.second.IsSequence())
          Fail(kv.second, "", fmt::format("multibody '{}' must be a list", key), "- {name: ..., ...}", Describe(kv.second));
        auto& list = key == "bodies" ? out->bodies : key == "joints" ? out->joints : out->loads;
        for (const auto& en : kv.second) {
          if (!en.IsMap()) Fail(en, "", fmt::format("an entry of multibody '{}' must be a mapping", key), "{name: ...}", Describe(en));
          ModelSpec::Entry e;
          e.where = Where(en);
          for (const auto f : en.Entries()) e.fields[f.first.Scalar()] = ReadField(f.second, f.first.Scalar());
          list.push_back(std::move(e));
        }
      } else {
        out->settings[key] = ReadField(kv.second, key);
      }
    }
  }

  // A list of lists ... as text: "[[a, b], [c, d]]". No deeper than the
  // YAML may nest (an alias of a list inside a list adds its depth): deeper
  // is an error at the outermost list, of `element`.
  std::string Bracketed(const Node& n, const std::string& element) const { return Bracketed(n, n, element, 1); }
  std::string Bracketed(const Node& top, const Node& n, const std::string& element, int depth) const {
    if (!n.IsSequence()) return n.IsScalar() ? n.Scalar() : "";
    if (depth >= yaml::kMaxYamlDepth)
      Fail(top, element, "lists nested too deeply", fmt::format("at most {} levels", yaml::kMaxYamlDepth - 1), "more",
           "aliases (*name) of lists inside lists add their depth");
    std::string s = "[";
    for (size_t i = 0; i < n.size(); ++i) s += (i ? ", " : "") + Bracketed(top, n[i], element, depth + 1);
    return s + "]";
  }

  ModelSpec::ElementSpec ReadElement(const Node& en) {
    if (!en.IsMap()) Fail(en, "", "an element must be a mapping", "{name: R1, kind: R, resistance: 10}", Describe(en));
    ModelSpec::ElementSpec e;
    e.where = Where(en);
    if (const auto n = en["name"]) e.name = Scalar(n, "", "element name");
    if (e.name.empty()) Fail(en, "", "element without a name", "name: <identifier>", "no name");
    const auto kind = en["kind"];
    if (!kind)
      Fail(en, e.name, "element without a kind", "kind: one of Se Sf MSe MSf C I R TF MTF GY MGY 0 1", "no kind");
    e.kind = Scalar(kind, e.name, "kind");
    static const std::set<std::string> kKeys = {
        "name",   "kind",       "initial",  "inertance",           "capacitance",       "stiffness", "resistance", "ratio",
        "effort", "flow",       "constraint", "position",          "momentum",          "description", "joint",    "direction",
        "parasitic_stiffness", "parasitic_damping", "coulomb", "diode", "static", "input", "domain"};
    CheckKeys(en, kKeys, e.name, "element '" + e.name + "'");
    // A vector element's law may be a list (diagonal, or one per component) or
    // a matrix: kept as bracketed text for the vector expansion to read.
    for (const char* key : {"inertance", "capacitance", "stiffness", "resistance", "ratio", "effort", "flow", "constraint",
                            "momentum", "coulomb", "diode"})
      if (const auto n = en[key]) e.laws.emplace_back(key, n.IsSequence() ? Bracketed(n, e.name) : Scalar(n, e.name, key));
    if (const auto n = en["position"]) e.position = Scalar(n, e.name, "position");
    if (const auto n = en["static"]) e.static_friction = Scalar(n, e.name, "static");
    // A constraint source's joint and direction (reports), and its parasitic
    // spring and damper (checked by BuildModel).
    if (const auto n = en["joint"]) e.joint = Scalar(n, e.name, "joint");
    if (const auto n = en["direction"]) e.direction = Scalar(n, e.name, "direction");
    if (const auto n = en["parasitic_stiffness"]) e.parasitic_stiffness = Scalar(n, e.name, "parasitic_stiffness");
    if (const auto n = en["parasitic_damping"]) e.parasitic_damping = Scalar(n, e.name, "parasitic_damping");
    if (const auto n = en["input"]) {  // a source that is an input of the linear model
      const std::string v = Scalar(n, e.name, "input");
      if (v != "true" && v != "false") Fail(n, e.name, "'input' is true or false", "input: true", v);
      e.input = v == "true";
    }
    if (const auto d = en["domain"]) {  // one domain, or one per port of a two-port
      if (d.IsSequence())
        for (const auto x : d) e.domain.push_back(Scalar(x, e.name, "domain"));
      else
        e.domain.push_back(Scalar(d, e.name, "domain"));
    }
    if (const auto n = en["initial"]) e.initial = n.IsSequence() ? Bracketed(n, e.name) : Scalar(n, e.name, "initial");
    return e;
  }

  // A storage field (docs/model-format.md, "Storage fields"):
  //   {name: arm, kind: IF, coordinates: [a, b], inertia: [[m11, m12], [m12, m22]], initial: [p1, p2]}
  //   {name: k, kind: CF, coordinates: [x, y], energy: "k*(x^2 + y^2)/2", initial: [x0, y0]}
  ModelSpec::FieldSpec ReadField(const Node& en) {
    ModelSpec::FieldSpec f;
    f.where = Where(en);
    if (en["name"]) f.name = Scalar(en["name"], "", "element name");
    if (f.name.empty()) Fail(en, "", "element without a name", "name: <identifier>", "no name");
    f.kind = Scalar(en["kind"], f.name, "kind");
    const bool inertia = f.kind == "IF";
    CheckKeys(en, {"name", "kind", "ports", "coordinates", inertia ? "inertia" : "energy", "initial", "description"}, f.name,
              fmt::format("{} field '{}'", inertia ? "an I" : "a C", f.name));
    const auto coords = en["coordinates"];
    if (!coords || !coords.IsSequence() || coords.size() == 0)
      Fail(coords ? coords : en, f.name, "a storage field needs its coordinates, one per port",
           "coordinates: [q1, q2, ...] (the time integral of each port's flow)",
           coords ? Describe(coords) : "none");
    for (const auto& c : coords) f.coordinates.push_back(Scalar(c, f.name, "coordinate"));
    const size_t n = f.coordinates.size();
    if (const auto ports = en["ports"]) {  // the ports' names (default <name>_1 ...)
      if (!ports.IsSequence() || ports.size() != n)
        Fail(ports, f.name, "a storage field names one port per coordinate", fmt::format("ports: a list of {} names", n),
             Describe(ports));
      for (const auto& x : ports) f.ports.push_back(Scalar(x, f.name, "port name"));
    }
    if (inertia) {
      const auto m = en["inertia"];
      const std::string want = fmt::format("inertia: a {0} x {0} matrix [[m11, m12, ...], ...] (one row per port)", n);
      if (!m || !m.IsSequence() || m.size() != n) Fail(m ? m : en, f.name, "the inertia matrix has one row per port", want, m ? Describe(m) : "none");
      for (const auto& row : m) {
        if (!row.IsSequence() || row.size() != n)
          Fail(row, f.name, "the inertia matrix has one row per port", want, Describe(row));
        std::vector<std::string> r;
        for (const auto& x : row) r.push_back(Scalar(x, f.name, "inertia matrix entry"));
        f.inertia.push_back(r);
      }
    } else {
      if (!en["energy"])
        Fail(en, f.name, "a C field needs its energy function", "energy: <expression of the coordinates>", "none");
      f.energy = Scalar(en["energy"], f.name, "energy");
    }
    if (const auto init = en["initial"]) {
      if (!init.IsSequence() || init.size() != n)
        Fail(init, f.name, "a storage field's initial values are one per port",
             fmt::format("initial: a list of {} {}", n, inertia ? "momenta" : "displacements"), Describe(init));
      for (const auto& x : init) f.initial.push_back(Scalar(x, f.name, "initial"));
    }
    return f;
  }

  ModelSpec::BondSpec ReadBond(const Node& bn) {
    ModelSpec::BondSpec b;
    b.where = Where(bn);
    if (bn.IsSequence()) {
      if (bn.size() != 2) Fail(bn, "", "a bond written as a list has two element names", "[from, to]",
                               fmt::format("a list of {}", bn.size()));
      b.from = Scalar(bn[0], "", "bond end");
      b.to = Scalar(bn[1], "", "bond end");
      return b;
    }
    if (!bn.IsMap()) Fail(bn, "", "a bond must be a mapping or a pair", "{from: A, to: B} or [A, B]", Describe(bn));
    CheckKeys(bn, {"name", "from", "to", "dim"}, "", "a bond");
    if (!bn["from"] || !bn["to"]) Fail(bn, "", "a bond needs 'from' and 'to'", "{from: A, to: B}", "missing keys",
                                       "power flows from 'from' to 'to' (the half-arrow points at 'to')");
    if (bn["name"]) b.name = Scalar(bn["name"], "", "bond name");
    b.from = Scalar(bn["from"], "", "bond 'from'");
    b.to = Scalar(bn["to"], "", "bond 'to'");
    if (bn["dim"]) {
      if (!AsInt(bn["dim"], &b.dim)) Fail(bn["dim"], "", "bond dimension must be an integer", "1", Describe(bn["dim"]));
      if (b.dim > kMaxBondDimension)
        Fail(bn["dim"], "", fmt::format("bond dimension {} is too large", b.dim),
             fmt::format("at most {} (3 or 6 for mechanics)", kMaxBondDimension), std::to_string(b.dim),
             "a bond of dimension n becomes n scalar bonds; write a larger system as several bonds");
    }
    return b;
  }

  // ports:, instances: and submodels: (docs/model-format.md, "Submodels and
  // ports"); src/model/submodels.cc flattens what they describe.
  void ReadSubmodelSections(const Node& root, ModelSpec* spec) {
    if (const auto ports = root["ports"]) {
      if (!ports.IsSequence()) Fail(ports, "", "'ports' must be a list", "- {name: p, element: J1}", Describe(ports));
      for (const auto& pn : ports) {
        // A port names an element, a body's frame, a joint's rate, or is an
        // open frame (`kind: frame`) of the submodel's joints.
        const int kinds = pn.IsMap() ? (pn["element"] ? 1 : 0) + (pn["body"] ? 1 : 0) + (pn["joint"] ? 1 : 0) +
                                           (pn["kind"] ? 1 : 0)
                                     : 0;
        if (!pn.IsMap() || !pn["name"] || kinds != 1)
          Fail(pn, "", "a port needs 'name' and one of 'element', 'body', 'joint' or 'kind: frame'",
               "{name: p, element: J1}, {name: tip, body: link, point: [0.5, 0, 0]}, {name: shaft, joint: J}, or "
               "{name: a, kind: frame}",
               Describe(pn), "the element is the one a bond from outside joins; a body's or an open frame is where joints meet it");
        CheckKeys(pn, {"name", "element", "body", "point", "joint", "kind", "dim", "required", "description"}, "",
                  "a port");
        ModelSpec::PortSpec port;
        port.name = Scalar(pn["name"], "", "port name");
        port.where = Where(pn);
        if (pn["element"]) port.element = Scalar(pn["element"], port.name, "port element");
        if (pn["joint"]) port.joint = Scalar(pn["joint"], port.name, "port joint");
        if (pn["body"]) port.body = Scalar(pn["body"], port.name, "port body");
        if (pn["kind"]) {
          const std::string k = Scalar(pn["kind"], port.name, "kind");
          if (k != "frame")
            Fail(pn["kind"], port.name, fmt::format("unknown port kind '{}'", k), "kind: frame (an open frame)", k,
                 "other ports name an element, a body or a joint");
          port.frame = true;
        }
        if (const auto pt = pn["point"]) {
          if (port.body.empty())
            Fail(pt, port.name, "'point' belongs to a body's frame port", "{name: tip, body: link, point: [x, y, z]}",
                 "point: without body:");
          if (!pt.IsSequence() || pt.size() != 3)
            Fail(pt, port.name, "a port's 'point' is a vector of three components", "[x, y, z]", Describe(pt));
          for (const auto& x : pt) port.point.push_back(Scalar(x, port.name, "point"));
        }
        const bool mechanism = !port.body.empty() || port.frame;
        if (mechanism) port.dim = 6;
        // A body's frame and a joint's rate may stay unjoined; an open frame may not.
        if (!port.body.empty() || !port.joint.empty()) port.required = false;
        if (pn["dim"]) {
          port.dim = ReadDim(pn["dim"], "port");
          if (mechanism && port.dim != 6)
            Fail(pn["dim"], port.name, "a frame port carries a bond of dimension 6", "dim: 6 (or no dim:)",
                 fmt::format("dim: {}", port.dim), "a frame's bond carries the twist and the wrench: six components");
          if (!port.joint.empty() && port.dim != 1)
            Fail(pn["dim"], port.name, "a joint's rate port is scalar", "dim: 1 (or no dim:)",
                 fmt::format("dim: {}", port.dim));
        }
        if (pn["required"]) port.required = ReadBool(pn["required"], port.name, "required");
        if (port.frame && !port.required)
          Fail(pn["required"], port.name, "an open frame is always joined", "required: true (or no required:)",
               "required: false", "the joints that name it need a body's frame");
        spec->ports.push_back(port);
      }
    }
    if (const auto insts = root["instances"]) {
      if (!insts.IsSequence())
        Fail(insts, "", "'instances' must be a list", "- {name: motor, use: lib:electrical/dc_motor}", Describe(insts));
      for (const auto& in : insts) {
        if (!in.IsMap() || !in["name"] || !in["use"])
          Fail(in, "", "an instance needs 'name' and 'use'", "{name: motor, use: lib:electrical/dc_motor}", Describe(in),
               "'use' names a submodel of this file, a model file (path relative to this file) or lib:<component>");
        CheckKeys(in, {"name", "use", "parameters", "outputs", "description"}, "", "an instance");
        ModelSpec::InstanceSpec inst;
        inst.name = Scalar(in["name"], "", "instance name");
        inst.use = Scalar(in["use"], inst.name, "use");
        inst.where = Where(in);
        if (in["outputs"]) inst.outputs = ReadBool(in["outputs"], inst.name, "outputs");
        if (const auto ps = in["parameters"]) {
          if (!ps.IsMap()) Fail(ps, inst.name, "an instance's 'parameters' must be a mapping", "name: value lines", Describe(ps));
          for (const auto kv : ps.Entries())
            inst.parameters.push_back(
                {kv.first.Scalar(), Scalar(kv.second, inst.name, "parameter '" + kv.first.Scalar() + "'"), Where(kv.second)});
        }
        spec->instances.push_back(std::move(inst));
      }
    }
    if (const auto defs = root["submodels"]) {
      if (!defs.IsMap())
        Fail(defs, "", "'submodels' must be a mapping", "name: {ports: ..., elements: ..., bonds: ...}", Describe(defs));
      for (const auto kv : defs.Entries()) {
        if (!kv.second.IsMap())
          Fail(kv.second, "", fmt::format("submodel '{}' must be a mapping", kv.first.Scalar()),
               "a model: ports:, parameters:, elements:, bonds:, outputs:", Describe(kv.second));
        ModelSpec def = Read(kv.second);
        def.name = kv.first.Scalar();
        spec->submodels.push_back(std::move(def));
      }
    }
  }

  // A scalar's text as a whole int: decimal, 0x hexadecimal or 0 octal, as
  // C++ streams read it with the base left open; nothing before it, blanks
  // after it (the dimensions always took these).
  static bool AsInt(const Node& n, int* value) {
    if (!n.IsScalar()) return false;
    std::stringstream stream(n.Scalar());
    stream.unsetf(std::ios::dec);
    int v = 0;
    if (!(stream >> std::noskipws >> v) || !(stream >> std::ws).eof()) return false;
    *value = v;
    return true;
  }

  bool ReadBool(const Node& n, const std::string& element, const std::string& key) const {
    const std::string v = Scalar(n, element, key);
    if (v != "true" && v != "false") Fail(n, element, fmt::format("'{}' is true or false", key), key + ": true", v);
    return v == "true";
  }

  int ReadDim(const Node& n, const std::string& what) const {
    int dim = 0;
    if (!AsInt(n, &dim)) Fail(n, "", what + " dimension must be an integer", "1", Describe(n));
    if (dim < 1 || dim > kMaxBondDimension)
      Fail(n, "", fmt::format("{} dimension {} is out of range", what, dim),
           fmt::format("1 to {} (3 or 6 for mechanics)", kMaxBondDimension), std::to_string(dim));
    return dim;
  }

 private:
  std::string file_;
};

ModelSpec ParseSpec(const std::string& text, const std::string& label) {
  const yaml::Document doc = yaml::ReadYaml(text, label);
  return YamlReader(label).Read(doc.Root());
}

// The last text read and its spec. A run reads its model file more than once
// (its run settings, whether it is a mechanism, then the model: separate
// calls of the front ends), and reading a large model's YAML costs a seventh
// of all its checking: the same bytes under the same label give the same
// spec, so they are parsed once. One entry, replaced by the next text.
ModelSpec SpecFromText(const std::string& text, const std::string& label) {
  struct LastRead {
    std::mutex mutex;
    std::string label, text;
    std::shared_ptr<const ModelSpec> spec;
  };
  static LastRead& last = *new LastRead;  // never destroyed: nothing to free at exit
  {
    std::lock_guard<std::mutex> lock(last.mutex);
    if (last.spec && last.label == label && last.text == text) return *last.spec;
  }
  auto spec = std::make_shared<const ModelSpec>(ParseSpec(text, label));
  std::lock_guard<std::mutex> lock(last.mutex);
  last.label = label;
  last.text = text;
  last.spec = spec;
  return *spec;
}

}  // namespace

ModelSpec ReadModelSpec(const std::string& yaml_text, const std::string& file_label) {
  ModelSpec spec = SpecFromText(yaml_text, file_label);
  FlattenSubmodels(&spec);
  return spec;
}

ModelSpec ReadHierarchicalModelSpec(const std::string& yaml_text, const std::string& file_label) {
  return SpecFromText(yaml_text, file_label);
}

ModelSpec ReadModelSpecFile(const std::string& path) {
  ModelSpec spec = ReadHierarchicalModelSpecFile(path);
  FlattenSubmodels(&spec);
  return spec;
}

ModelSpec ReadHierarchicalModelSpecFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    ThrowAt({path, 0, 0}, "", "the model file is a directory", "a YAML model file", "a directory",
            "give the path of a .yaml file inside it");
  }
  // A device (/dev/zero, a terminal), a FIFO or a socket is no model file
  // (the file is read more than once, and opening a FIFO would wait for a
  // writer): refused before it is opened. No file is read past
  // kMaxModelFileBytes.
  RequireRegularInput(path, "model file", "a YAML model file", "give the path of a .yaml file");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ThrowAt({path, 0, 0}, "", "cannot open the model file", "a readable YAML file", "no such file, or no permission");
  }
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= kMaxModelFileBytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxModelFileBytes) {
    ThrowAt({path, 0, 0}, "",
            fmt::format("the model file is larger than {} bytes (kMaxModelFileBytes)", kMaxModelFileBytes),
            fmt::format("at most {} MiB of YAML", kMaxModelFileBytes >> 20), "more",
            "split the model into submodel files (instances: with use: <file>)");
  }
  return SpecFromText(text, path);
}

}  // namespace paynter
