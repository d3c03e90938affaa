// Submodels and power ports: a hierarchical ModelSpec (instances of submodels
// defined inline, in other files or in the component library) made flat, with
// every name an instance path (docs/model-format.md, "Submodels and ports";
// docs/architecture.md, "Submodels").
//
// A definition is flattened first (its own instances replaced by their parts),
// then instantiated: each of its names `x` becomes `<instance>.x`, each
// variable `e_x` (f_, p_, q_) becomes `e_<instance>.x`, parameters set by the
// instance take the parent's texts, and its ports become the elements that the
// parent's bonds join. Everything is text: no expression is parsed here.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "paynter/data_dir.h"
#include "model_internal.h"
#include "paynter/model.h"

#ifndef PAYNTER_LIBRARY_DIR
#define PAYNTER_LIBRARY_DIR "library"
#endif

namespace paynter {

// `text` with each name replaced by rename(name, is_call); numbers and
// operators are copied as they are.
std::string MapNames(const std::string& text, const std::function<std::string(const std::string&, bool)>& rename) {
  std::string out;
  out.reserve(text.size() + 16);
  const size_t n = text.size();
  auto digit = [&](size_t k) { return k < n && std::isdigit(static_cast<unsigned char>(text[k])); };
  for (size_t i = 0; i < n;) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '[' && UnitBracketEnd(text, i) != std::string::npos) {  // a unit (9.81 [m/s^2]): no names in it
      const size_t j = std::min(UnitBracketEnd(text, i) + 1, n);
      out.append(text, i, j - i);
      i = j;
    } else if (std::isalpha(c) || c == '_') {
      const size_t j = NameEnd(text, i);
      size_t k = j;
      while (k < n && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      out += rename(text.substr(i, j - i), k < n && text[k] == '(');
      i = j;
    } else if (digit(i) || (c == '.' && digit(i + 1))) {
      size_t j = i;
      while (digit(j) || (j < n && text[j] == '.')) ++j;
      if (j < n && (text[j] == 'e' || text[j] == 'E')) {
        size_t k = j + 1;
        if (k < n && (text[k] == '+' || text[k] == '-')) ++k;
        if (digit(k)) {
          while (digit(k)) ++k;
          j = k;
        }
      }
      out.append(text, i, j - i);
      i = j;
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

namespace {

namespace fs = std::filesystem;

// How deep instances may nest, and how many elements a flattened model may
// hold: a definition that uses another twice at each of many levels would
// otherwise grow without bound.
constexpr int kMaxInstanceDepth = 32;
constexpr size_t kMaxFlatElements = 200000;

bool IsFunctionName(const std::string& name) {
  for (const char* f : {"sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "log",
                        "sqrt", "abs", "pow", "step", "cross", "if", "piecewise"})
    if (name == f) return true;
  return IsSignalFunction(name);
}

bool IsVariableName(const std::string& name) {
  return name.size() > 2 && name[1] == '_' && (name[0] == 'e' || name[0] == 'f' || name[0] == 'p' || name[0] == 'q');
}


// The fields of a multibody entry that name a body (with the field of the
// point on it) or the entry itself; `type` and `junction` are keywords, every
// other field an expression.
constexpr std::pair<const char*, const char*> kBodyFields[] = {{"body", "point"}, {"body1", "point1"}, {"body2", "point2"}};

bool IsEntryName(const std::string& key) { return key == "name" || key == "body" || key == "body1" || key == "body2"; }
bool IsEntryKeyword(const std::string& key) { return key == "type" || key == "junction"; }

// Applies `name` to the names and `text` to the expressions of the first
// `count` entries of each list of `mb` (bodies, joints, loads).
void MapEntries(ModelSpec::MultibodySpec* mb, const std::array<size_t, 3>& count,
                const std::function<std::string(const std::string&)>& name,
                const std::function<std::string(const std::string&)>& text) {
  const std::pair<std::vector<ModelSpec::Entry>*, size_t> lists[] = {
      {&mb->bodies, count[0]}, {&mb->joints, count[1]}, {&mb->loads, count[2]}};
  for (const auto& [list, n] : lists)
    for (size_t k = 0; k < std::min(n, list->size()); ++k)
      for (auto& [key, field] : (*list)[k].fields) {
        if (IsEntryKeyword(key)) continue;
        for (auto& v : field.values) v = IsEntryName(key) ? name(v) : text(v);
      }
}

// The sum of two points in one body's frame (an empty list is the origin).
std::vector<std::string> AddPoints(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  std::vector<std::string> sum;
  for (size_t i = 0; i < 3; ++i) sum.push_back("(" + a[i] + ") + (" + b[i] + ")");
  return sum;
}

// Where a joint or load names `body`, it names `to` (a body) at `point` added
// to its own point instead.
void BindEntry(ModelSpec::Entry* e, const std::string& body, const std::string& to,
               const std::vector<std::string>& point) {
  for (const auto& [bkey, pkey] : kBodyFields) {
    auto b = e->fields.find(bkey);
    if (b == e->fields.end() || b->second.values.size() != 1 || b->second.values[0] != body) continue;
    b->second.values[0] = to;
    if (point.empty()) continue;
    auto p = e->fields.find(pkey);
    if (p == e->fields.end()) {
      e->fields[pkey] = ModelSpec::Field{point, true, b->second.where};
    } else if (p->second.is_list && p->second.values.size() == 3) {
      p->second.values = AddPoints(point, p->second.values);
    }  // else: a malformed point, which the multibody expansion reports
  }
}

// BindEntry on every joint and load of `mb`.
void BindBody(ModelSpec::MultibodySpec* mb, const std::string& body, const std::string& to,
              const std::vector<std::string>& point) {
  for (auto* list : {&mb->joints, &mb->loads})
    for (auto& e : *list) BindEntry(&e, body, to, point);
}

// The names of a multibody section's entries (bodies, joints or loads).
std::vector<std::string> EntryNames(const std::vector<ModelSpec::Entry>& list) {
  std::vector<std::string> names;
  for (const auto& e : list)
    if (auto f = e.fields.find("name"); f != e.fields.end() && f->second.values.size() == 1)
      names.push_back(f->second.values[0]);
  return names;
}

// What a port is (docs/model-format.md, "Mechanisms in submodels").
enum class PortKind {
  kElement,    // an element a bond joins
  kRate,       // a joint's rate 1-junction (`element`), written when the port is joined
  kFrame,      // a body's frame at a point: joints and loads meet the body there
  kOpenFrame,  // a joint component's connector: `open` stands for the body frame a bond joins it to
};

// A port of a flattened definition: the element (a flat name) a bond from
// outside joins, or the frame or joint a mechanism's port stands for.
struct Port {
  std::string name, element;
  PortKind kind = PortKind::kElement;
  std::string body;                // kFrame: the body (a flat name, or ground)
  std::vector<std::string> point;  // kFrame: the point in the body's frame (texts; empty = its centre of mass)
  std::string open;                // kOpenFrame: the name the submodel's joints and loads use as a body
  std::string joint;               // kRate: the joint
  int dim = 1;
  bool required = true;
  SourceLocation where;
  int joined = 0;              // bonds (or an enclosing port) that join it
  SourceLocation joined_where;  // the first of them
};

struct Output {
  ModelSpec::Item item;
  bool shown = true;  // a column of the model
};

// A definition made flat: its spec (no instances left; outputs apart), its
// ports and outputs, and the paths of the instances it holds.
struct FlatDef {
  ModelSpec spec;
  std::vector<Port> ports;
  std::vector<Output> outputs;
  std::set<std::string> instance_paths;
};

// The definitions written in a file, and the scope around them.
struct Scope {
  const std::vector<ModelSpec>* defs = nullptr;
  const Scope* outer = nullptr;
};

// The names a definition declares: each becomes `<instance>.name`.
std::set<std::string> DeclaredNames(const ModelSpec& s) {
  std::set<std::string> names;
  for (const auto& p : s.parameters) names.insert(p.name);
  for (const auto& e : s.elements) names.insert(e.name);
  for (const auto& b : s.bonds)
    if (!b.name.empty()) names.insert(b.name);
  for (const auto& d : s.displacements) names.insert(d.name);
  for (const auto& d : s.definitions) names.insert(d.name);
  return names;
}

// Gives every unnamed bond of `s` the name BuildModel would give it (b1, b2,
// ... skipping declared names), so that its instance path names it.
void NameBonds(ModelSpec* s) {
  const std::set<std::string> taken = DeclaredNames(*s);
  int k = 0;
  for (auto& b : s->bonds)
    if (b.name.empty()) {
      do b.name = fmt::format("b{}", ++k);
      while (taken.count(b.name));
    }
}

// `def` under the instance name `prefix`: every name it declares, and every
// variable of them, prefixed.
FlatDef Instantiate(FlatDef def, const std::string& prefix) {
  NameBonds(&def.spec);
  const std::set<std::string> names = DeclaredNames(def.spec);
  const std::string dot = prefix + ".";
  auto name = [&](const std::string& n) { return n.empty() ? n : dot + n; };
  // In an element's law, e, f, p and q are its own variables (not renamed).
  auto text = [&](const std::string& t, bool law = false) {
    return MapNames(t, [&](const std::string& n, bool call) -> std::string {
      if ((call && IsFunctionName(n)) || n == "t" || n == "pi") return n;
      if (law && n.size() == 1 && std::string("efpq").find(n[0]) != std::string::npos && !names.count(n)) return n;
      if (!names.count(n) && IsVariableName(n)) return n.substr(0, 2) + dot + n.substr(2);
      return dot + n;
    });
  };
  ModelSpec& s = def.spec;
  for (auto& p : s.parameters) {
    p.name = name(p.name);
    p.text = text(p.text);
  }
  for (auto& e : s.elements) {
    e.name = name(e.name);
    for (auto& law : e.laws) law.second = text(law.second, /*law=*/true);
    e.initial = text(e.initial);
    e.position = text(e.position);
    e.parasitic_stiffness = text(e.parasitic_stiffness);
    e.parasitic_damping = text(e.parasitic_damping);
    e.joint = name(e.joint);
    e.origin = name(e.origin);
  }
  for (auto& b : s.bonds) {
    b.name = name(b.name);
    b.from = name(b.from);
    b.to = name(b.to);
    b.origin = name(b.origin);
  }
  for (auto& d : s.displacements) {
    d.name = name(d.name);
    d.of = name(d.of);
    d.rate = text(d.rate);
    d.initial = text(d.initial);
    d.position = text(d.position);
  }
  for (auto& d : s.definitions) {
    d.name = name(d.name);
    d.text = text(d.text);
  }
  for (auto& b : s.blocks) {  // signal blocks: their parts are renamed above; these are for the drawings
    b.name = name(b.name);
    for (auto& in : b.inputs) in = text(in);
    for (auto& o : b.outputs) o = name(o);
  }
  for (auto& ev : s.events) {
    ev.name = name(ev.name);
    ev.when = text(ev.when);
    for (auto& r : ev.resets) {
      r.name = text(r.name);
      r.text = text(r.text);
    }
  }
  for (auto* list : {&s.generalized, &s.independent, &s.quasi_velocities})
    for (auto& it : *list) it.name = name(it.name);
  for (auto& h : s.assembly_held) h = text(h);
  for (auto& o : def.outputs) {
    o.item.name = name(o.item.name);
    o.item.text = text(o.item.text);
  }
  auto body = [&](const std::string& n) { return n == "ground" ? n : name(n); };
  MapEntries(&s.multibody, {SIZE_MAX, SIZE_MAX, SIZE_MAX}, body, [&](const std::string& t) { return text(t); });
  for (auto& p : def.ports) {
    p.element = name(p.element);
    p.body = body(p.body);
    for (auto& x : p.point) x = text(x);
    p.open = name(p.open);
    p.joint = name(p.joint);
  }
  std::set<std::string> paths;
  for (const auto& p : def.instance_paths) paths.insert(name(p));
  def.instance_paths = std::move(paths);
  return def;
}

class Flattener {
 public:
  // The flat form of `def`, whose instance path is `path` ("" at the top).
  FlatDef Flatten(const ModelSpec& def, const Scope& scope, const std::string& path, int depth) {
    FlatDef flat;
    flat.spec = def;
    flat.spec.instances.clear();
    flat.spec.submodels.clear();
    flat.spec.ports.clear();
    flat.spec.outputs.clear();
    flat.spec.required_parameters.clear();
    const Scope inner{&def.submodels, &scope};
    auto where_path = [&](const std::string& name) { return path.empty() ? name : path + "." + name; };

    std::set<std::string> own_elements;
    for (const auto& e : def.elements) own_elements.insert(e.name);
    // A mechanism's settings are the whole mechanism's: the top-level model's.
    if (depth > 0 && !def.multibody.settings.empty()) {
      const auto& [key, field] = *def.multibody.settings.begin();
      ThrowAt(field.where, path, fmt::format("a submodel's multibody section sets '{}'", key),
              "bodies, joints and loads only", key,
              "gravity, orientation, assemble and the parasitic springs belong to the top-level model's multibody "
              "section, which may hold only them");
    }
    // Storage fields are the top-level model's (their names are not renamed by instance paths yet).
    if (depth > 0 && !def.fields.empty())
      ThrowAt(def.fields[0].where, path, fmt::format("a submodel holds the storage field '{}'", def.fields[0].name),
              "storage fields (kind IF or CF) in the top-level model only", def.fields[0].kind,
              "write the field in the model that uses the submodel, and join it to the submodel's ports");
    // The names of its bodies, joints and loads, which an instance may not take.
    std::set<std::string> own_mechanism;
    for (const auto* list : {&def.multibody.bodies, &def.multibody.joints, &def.multibody.loads})
      for (const auto& n : EntryNames(*list)) own_mechanism.insert(n);
    // Each instance: its definition flattened, its parameters bound, its parts
    // added under its name.
    std::map<std::string, std::vector<Port>> ports;  // by instance name
    std::vector<Output> instance_outputs;
    std::vector<std::string> instance_names;
    std::set<std::string> set_here;  // instances' parameters given values here (texts of this definition)
    std::map<std::string, size_t> definitions_from;  // where each instance's definitions start
    for (const auto& inst : def.instances) {
      const std::string ipath = where_path(inst.name);
      if (!IsIdentifier(inst.name) || inst.name.find('.') != std::string::npos)
        ThrowAt(inst.where, ipath, fmt::format("instance name '{}' is not an identifier", inst.name),
                "letters, digits and underscores, not starting with a digit", inst.name);
      if (ports.count(inst.name) || own_elements.count(inst.name) || own_mechanism.count(inst.name))
        ThrowAt(inst.where, ipath, fmt::format("the name '{}' is used twice", inst.name),
                "each instance named apart from the other instances, the elements, bodies, joints and loads",
                inst.name, "rename the instance");
      if (depth + 1 > kMaxInstanceDepth)
        ThrowAt(inst.where, ipath, "submodels nest too deeply",
                fmt::format("at most {} levels of instances", kMaxInstanceDepth), fmt::format("{} levels", depth + 1),
                "a submodel that uses itself, directly or through others, never ends");
      const Resolved r = Resolve(inst, def, inner, ipath);
      for (size_t k = 0; k < stack_.size(); ++k)
        if (stack_[k].first == r.key) {
          std::string chain;
          for (size_t m = k; m < stack_.size(); ++m) chain += stack_[m].second + " -> ";
          ThrowAt(inst.where, ipath, "the submodels use each other in a cycle", "submodels that end in elements",
                  chain + r.label, "a submodel may not use itself, directly or through other submodels");
        }
      stack_.emplace_back(r.key, r.label);
      FlatDef child = Flatten(*r.def, r.scope, ipath, depth + 1);
      stack_.pop_back();
      child = Instantiate(std::move(child), inst.name);
      BindParameters(inst, ipath, *r.def, &child.spec, &set_here);
      definitions_from[inst.name] = flat.spec.definitions.size();
      elements_ += child.spec.elements.size();
      if (elements_ > kMaxFlatElements)
        ThrowAt(inst.where, ipath, "the submodels make too many elements",
                fmt::format("at most {} elements in all", kMaxFlatElements), fmt::format("more than {}", kMaxFlatElements),
                "a submodel used several times at each of many levels multiplies its elements");
      Append(std::move(child.spec), &flat.spec);
      for (auto& o : child.outputs) {
        o.shown = o.shown && inst.outputs;
        instance_outputs.push_back(std::move(o));
      }
      flat.instance_paths.insert(inst.name);
      flat.instance_paths.insert(child.instance_paths.begin(), child.instance_paths.end());
      ports[inst.name] = std::move(child.ports);
      instance_names.push_back(inst.name);
    }

    // The instances' outputs and path-form variables (`motor.e_L`) in this
    // definition's own texts.
    std::map<std::string, std::string> output_text;
    for (const auto& o : instance_outputs) output_text[o.item.name] = o.item.text;
    auto resolve = [&](const std::string& t) {
      if (flat.instance_paths.empty() || t.empty()) return t;
      return MapNames(t, [&](const std::string& n, bool) -> std::string {
        if (auto it = output_text.find(n); it != output_text.end()) return "(" + it->second + ")";
        const size_t dot = n.rfind('.');
        if (dot != std::string::npos && IsVariableName(n.substr(dot + 1)) && flat.instance_paths.count(n.substr(0, dot)))
          return n.substr(dot + 1, 2) + n.substr(0, dot + 1) + n.substr(dot + 3);
        return n;
      });
    };
    const size_t own_parameters = def.parameters.size();
    for (size_t k = 0; k < flat.spec.parameters.size(); ++k)
      if (k < own_parameters || set_here.count(flat.spec.parameters[k].name))
        flat.spec.parameters[k].text = resolve(flat.spec.parameters[k].text);
    for (size_t k = 0; k < def.elements.size(); ++k) {
      auto& e = flat.spec.elements[k];
      for (auto& law : e.laws) law.second = resolve(law.second);
      e.initial = resolve(e.initial);
      e.position = resolve(e.position);
    }
    for (size_t k = 0; k < def.displacements.size(); ++k) {
      auto& d = flat.spec.displacements[k];
      d.rate = resolve(d.rate);
      d.initial = resolve(d.initial);
      d.position = resolve(d.position);
    }
    for (size_t k = 0; k < def.definitions.size(); ++k)
      flat.spec.definitions[k].text = resolve(flat.spec.definitions[k].text);
    for (size_t k = 0; k < def.blocks.size(); ++k)
      for (auto& in : flat.spec.blocks[k].inputs) in = resolve(in);
    for (size_t k = 0; k < def.events.size(); ++k) {
      auto& ev = flat.spec.events[k];
      ev.when = resolve(ev.when);
      for (auto& r : ev.resets) r.text = resolve(r.text);
    }
    SignalParameters(&flat.spec, own_parameters, set_here, definitions_from);
    MapEntries(&flat.spec.multibody,
               {def.multibody.bodies.size(), def.multibody.joints.size(), def.multibody.loads.size()},
               [](const std::string& n) { return n; }, resolve);
    for (const auto& o : def.outputs) {
      ModelSpec::Item item = o;
      item.text = resolve(item.text);
      flat.outputs.push_back({item, true});
    }
    for (auto& o : instance_outputs) flat.outputs.push_back(std::move(o));

    // An instance's port named `inst.port` (nullptr for an own element or
    // name): throws for an unknown instance or port.
    auto instance_port = [&](const std::string& end, const SourceLocation& where) -> Port* {
      if (end.find('.') == std::string::npos || own_elements.count(end)) return nullptr;
      const std::string head = end.substr(0, end.find('.')), rest = end.substr(end.find('.') + 1);
      const auto it = ports.find(head);
      if (it == ports.end())
        ThrowAt(where, where_path(end), fmt::format("'{}' joins an instance's port, but there is no instance '{}'", end, head),
                "instance.port, with an instance of 'instances:'", end,
                [&] {
                  const std::string h = DidYouMean(head, instance_names);
                  return h.empty() ? "instances here: " + JoinNames(instance_names) : h;
                }());
      for (Port& p : it->second)
        if (p.name == rest) return &p;
      std::vector<std::string> names;
      for (const Port& p : it->second) names.push_back(p.name);
      const std::string h = DidYouMean(rest, names);
      ThrowAt(where, where_path(end), fmt::format("instance '{}' has no port '{}'", head, rest), "one of its ports",
              rest, h.empty() ? "its ports: " + JoinNames(names) : h);
    };
    auto check_dim = [&](const Port& p, const std::string& end, const SourceLocation& where, int dim) {
      if (p.dim != dim)
        ThrowAt(where, where_path(end), fmt::format("port '{}' carries a bond of dimension {}", end, p.dim),
                fmt::format("a bond with dim: {}", p.dim), fmt::format("a bond of dimension {}", dim),
                p.dim > 1 ? fmt::format("write the bond with dim: {} (a vector bond)", p.dim)
                          : "a scalar port takes a scalar bond");
    };
    auto is_frame = [](const Port* p) { return p && (p->kind == PortKind::kFrame || p->kind == PortKind::kOpenFrame); };
    // A joined rate port: its joint writes its rate's 1-junction.
    auto rate_joined = [&](const Port& p) {
      for (auto& j : flat.spec.multibody.joints)
        if (auto f = j.fields.find("name"); f != j.fields.end() && f->second.values == std::vector<std::string>{p.joint})
          j.fields["junction"] = ModelSpec::Field{{"true"}, false, f->second.where};
    };
    // The element a bond end joins: its own, or an instance's port's.
    auto port_of = [&](const std::string& end, const SourceLocation& where, int dim) -> std::string {
      Port* p = instance_port(end, where);
      if (!p) return end;
      check_dim(*p, end, where, dim);
      if (is_frame(p))
        ThrowAt(where, where_path(end), fmt::format("'{}' is a frame port: it joins another frame", end),
                "a dim: 6 bond between a body's frame port and a joint's open frame port", "a bond to an element",
                "joints meet a body at its frame; to push a body, write a load in multibody:");
      Join(p, where, where_path(end));
      if (p->kind == PortKind::kRate) rate_joined(*p);
      return p->element;
    };
    // The own joints and loads that name an instance's body frame (`a.tip`)
    // name its body at its point.
    {
      auto& mb = flat.spec.multibody;
      for (auto* list : {&mb.joints, &mb.loads}) {
        const size_t own = list == &mb.joints ? def.multibody.joints.size() : def.multibody.loads.size();
        for (size_t k = 0; k < own; ++k) {
          ModelSpec::Entry& e = (*list)[k];
          for (const auto& [bkey, pkey] : kBodyFields) {
            auto b = e.fields.find(bkey);
            if (b == e.fields.end() || b->second.values.size() != 1) continue;
            const std::string end = b->second.values[0];
            Port* p = instance_port(end, b->second.where);
            if (!p) continue;
            if (p->kind != PortKind::kFrame)
              ThrowAt(b->second.where, where_path(end), fmt::format("'{}' is not a body's frame", end),
                      "a body, ground, or an instance's body frame port (a port with body:)",
                      p->kind == PortKind::kOpenFrame ? "an open frame port" : "a port of an element or a joint's rate",
                      p->kind == PortKind::kOpenFrame ? "join a joint component's frame to a body's frame by a dim: 6 bond"
                                                     : "its submodel declares the port at " + p->where.ToString());
            p->joined += 1;
            BindEntry(&e, end, p->body, p->point);
          }
        }
      }
    }
    std::vector<size_t> frame_bonds;  // own bonds that join frames: they leave the graph
    for (size_t k = 0; k < def.bonds.size(); ++k) {
      auto& b = flat.spec.bonds[k];
      Port* from = instance_port(b.from, b.where);
      Port* to = instance_port(b.to, b.where);
      if (!is_frame(from) && !is_frame(to)) {
        b.from = port_of(b.from, b.where, b.dim);
        b.to = port_of(b.to, b.where, b.dim);
        continue;
      }
      // A frame joined to a frame: a joint component's open frame takes the
      // body's frame at the other end.
      const std::string& fe = is_frame(from) ? b.from : b.to;
      check_dim(*(is_frame(from) ? from : to), fe, b.where, b.dim);
      const std::string& oe = is_frame(from) ? b.to : b.from;
      Port* other = is_frame(from) ? to : from;
      if (!is_frame(other))
        ThrowAt(b.where, where_path(oe), fmt::format("'{}' joins frame port '{}', but it is no frame", oe, fe),
                "a bond between a body's frame port and a joint's open frame port", oe,
                "joints meet a body at its frame; to push a body, write a load in multibody:");
      if (from->kind == to->kind)
        ThrowAt(b.where, where_path(b.to),
                from->kind == PortKind::kFrame
                    ? fmt::format("a bond joins two bodies' frames, '{}' and '{}'", b.from, b.to)
                    : fmt::format("a bond joins two open frames, '{}' and '{}'", b.from, b.to),
                "one body's frame and one joint's open frame", "two of a kind",
                from->kind == PortKind::kFrame ? "put a joint between them (a joint component, or a joint in multibody:)"
                                               : "an open frame takes a body's frame: join one of them to a body");
      Port* open = from->kind == PortKind::kOpenFrame ? from : to;
      Port* body = open == from ? to : from;
      Join(open, b.where, where_path(open == from ? b.from : b.to));
      body->joined += 1;
      BindBody(&flat.spec.multibody, open->open, body->body, body->point);
      frame_bonds.push_back(k);
    }
    if (!frame_bonds.empty()) {
      NameBonds(&flat.spec);  // the other bonds keep the numbers they are written with
      for (auto k = frame_bonds.rbegin(); k != frame_bonds.rend(); ++k)
        flat.spec.bonds.erase(flat.spec.bonds.begin() + static_cast<std::ptrdiff_t>(*k));
    }
    // This definition's own ports: an element of its own, a body's frame, an
    // open frame, a joint's rate, or an instance's port.
    const std::vector<std::string> own_bodies = EntryNames(def.multibody.bodies);
    for (const auto& ps : def.ports) {
      Port port;
      port.name = ps.name;
      port.element = ps.element;
      port.dim = ps.dim;
      port.required = ps.required;
      port.where = ps.where;
      for (const Port& q : flat.ports)
        if (q.name == ps.name)
          ThrowAt(ps.where, where_path(ps.name), fmt::format("port '{}' is declared twice", ps.name),
                  "each port once", ps.name, fmt::format("the first is at {}", q.where.ToString()));
      if (ps.frame) {
        port.kind = PortKind::kOpenFrame;
        port.open = ps.name;
        if (std::find(own_bodies.begin(), own_bodies.end(), ps.name) != own_bodies.end() || ps.name == "ground")
          ThrowAt(ps.where, where_path(ps.name), fmt::format("open frame '{}' has a body's name", ps.name),
                  "a name apart from the bodies", ps.name,
                  "the submodel's joints name an open frame as a body: rename the frame or the body");
      } else if (!ps.body.empty()) {
        port.kind = PortKind::kFrame;
        port.body = ps.body;
        for (const auto& x : ps.point) port.point.push_back(resolve(x));
        if (Port* q = instance_port(ps.body, ps.where)) {  // a frame of an instance's body frame
          if (q->kind != PortKind::kFrame)
            ThrowAt(ps.where, where_path(ps.name), fmt::format("'{}' is not a body's frame", ps.body),
                    "a body of multibody:, ground, or an instance's body frame port", ps.body,
                    "its submodel declares the port at " + q->where.ToString());
          q->joined += 1;
          port.body = q->body;
          port.point = AddPoints(q->point, port.point);
        } else if (ps.body != "ground" && std::find(own_bodies.begin(), own_bodies.end(), ps.body) == own_bodies.end()) {
          const std::string h = DidYouMean(ps.body, own_bodies);
          ThrowAt(ps.where, where_path(ps.name), fmt::format("port '{}' names no body of the submodel", ps.name),
                  "a body of its multibody section, or ground", ps.body,
                  h.empty() ? "bodies: " + JoinNames(own_bodies) : h);
        }
      } else if (!ps.joint.empty()) {
        port.kind = PortKind::kRate;
        port.joint = ps.joint;
        const ModelSpec::Entry* joint = nullptr;
        for (const auto& j : def.multibody.joints)
          if (auto f = j.fields.find("name"); f != j.fields.end() && f->second.values == std::vector<std::string>{ps.joint})
            joint = &j;
        if (!joint) {
          const std::vector<std::string> names = EntryNames(def.multibody.joints);
          const std::string h = DidYouMean(ps.joint, names);
          ThrowAt(ps.where, where_path(ps.name), fmt::format("port '{}' names no joint of the submodel", ps.name),
                  "a joint of its multibody section", ps.joint, h.empty() ? "joints: " + JoinNames(names) : h);
        }
        // The rate junction of a joint with one coordinate (src/multibody/joints.h, Coordinate).
        const auto type = joint->fields.find("type");
        const std::string t = type == joint->fields.end() || type->second.values.empty() ? "" : type->second.values[0];
        if (t != "revolute" && t != "prismatic")
          ThrowAt(ps.where, where_path(ps.name), fmt::format("joint '{}' has no single rate", ps.joint),
                  "a revolute or prismatic joint", t.empty() ? "no type" : "a " + t + " joint",
                  "a rate port is the 1-junction of a joint's one free direction");
        port.element = ps.joint + (t == "revolute" ? "_angledot" : "_sdot");
      } else if (!own_elements.count(ps.element)) {
        if (ps.element.find('.') == std::string::npos) {
          std::vector<std::string> cands(own_elements.begin(), own_elements.end());
          const std::string h = DidYouMean(ps.element, cands);
          ThrowAt(ps.where, where_path(ps.name), fmt::format("port '{}' names no element of the submodel", ps.name),
                  "an element of 'elements:' (a junction, or a one-port with no bond of its own)", ps.element,
                  h.empty() ? "elements: " + JoinNames(cands) : h);
        }
        Port* q = instance_port(ps.element, ps.where);
        if (q->kind == PortKind::kElement) {
          port.element = port_of(ps.element, ps.where, ps.dim);
        } else {  // a frame or a rate passed on as it is
          if (q->kind == PortKind::kOpenFrame || q->kind == PortKind::kRate)
            Join(q, ps.where, where_path(ps.element));
          else
            q->joined += 1;
          port = *q;
          port.name = ps.name;
          port.where = ps.where;
          port.required = q->required && ps.required;
          port.joined = 0;
        }
      }
      flat.ports.push_back(port);
    }
    // Every required port of every instance joined.
    for (const auto& inst : def.instances)
      for (const Port& p : ports[inst.name])
        if (p.required && p.joined == 0)
          ThrowAt(inst.where, where_path(inst.name + "." + p.name),
                  fmt::format("port '{}' of instance '{}' is not joined", p.name, inst.name),
                  fmt::format("a bond to or from {}.{}", inst.name, p.name), "no bond",
                  fmt::format("add a bond such as {} (its submodel declares the port at {})",
                              p.kind == PortKind::kOpenFrame
                                  ? fmt::format("{{from: <a body's frame port>, to: {}.{}, dim: 6}}", inst.name, p.name)
                                  : fmt::format("[{}.{}, <element>]", inst.name, p.name),
                              p.where.ToString()));
    return flat;
  }

  // The files read for submodels, resolved, each once.
  const std::vector<std::string>& files() const { return files_; }

  void Enter(const std::string& key, const std::string& label) { stack_.emplace_back(key, label); }

 private:
  struct Resolved {
    const ModelSpec* def = nullptr;
    Scope scope;
    std::string key, label;  // for cycles: the definition, and as users see it
  };

  static void Join(Port* p, const SourceLocation& where, const std::string& path) {
    if (p->joined > 0)
      ThrowAt(where, path, fmt::format("port '{}' is joined twice", path), "one bond per port",
              fmt::format("a second bond (the first is at {})", p->joined_where.ToString()),
              "join the bonds at a junction of the parent, and the junction to the port");
    p->joined += 1;
    p->joined_where = where;
  }

  // The definition an instance uses.
  Resolved Resolve(const ModelSpec::InstanceSpec& inst, const ModelSpec& parent, const Scope& scope,
                   const std::string& ipath) {
    std::string use = inst.use, member;
    const bool lib = use.rfind("lib:", 0) == 0;
    auto ends = [&](const std::string& tail) {
      return use.size() > tail.size() && use.compare(use.size() - tail.size(), tail.size(), tail) == 0;
    };
    const bool file = lib || use.find('/') != std::string::npos || use.find('#') != std::string::npos ||
                      ends(".yaml") || ends(".yml");
    if (!file) {
      for (const Scope* s = &scope; s; s = s->outer)
        if (s->defs)
          for (const auto& d : *s->defs)
            if (d.name == use) return {&d, *s, fmt::format("{}#{}@{}", parent.file, d.name, static_cast<const void*>(&d)), d.name};
      std::vector<std::string> names;
      for (const Scope* s = &scope; s; s = s->outer)
        if (s->defs)
          for (const auto& d : *s->defs) names.push_back(d.name);
      const std::string h = DidYouMean(use, names);
      ThrowAt(inst.where, ipath, fmt::format("unknown submodel '{}'", use),
              "a submodel of 'submodels:', a model file (a path with '/' or ending in .yaml) or lib:<component>", use,
              h.empty() ? "submodels here: " + JoinNames(names) + "; for the component library write lib:" + use : h);
    }
    if (const size_t hash = use.find('#'); hash != std::string::npos) {
      member = use.substr(hash + 1);
      use = use.substr(0, hash);
    }
    fs::path path;
    if (lib) {
      // lib: names a file of the component library: a relative path that
      // stays inside it (no '..', not absolute).
      const fs::path rel(use.substr(4));
      bool inside = !rel.empty() && rel.is_relative() && !rel.has_root_name();
      for (const auto& part : rel) inside = inside && part != "..";
      if (!inside)
        ThrowAt(inst.where, ipath, fmt::format("'{}' leaves the component library", inst.use),
                "lib:<component>, a path inside the component library such as lib:electrical/dc_motor",
                inst.use, "for a file of your own, write its path without lib: (relative to this file)");
      path = fs::path(LibraryDirectory()) / rel;
    } else {
      path = fs::path(use);
      if (path.is_relative()) path = fs::path(parent.file).parent_path() / path;
    }
    if (!path.has_extension()) path += ".yaml";
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      ThrowAt(inst.where, ipath, fmt::format("the submodel file of '{}' is missing", inst.use),
              "a model file", fmt::format("no file '{}'", path.string()),
              lib ? fmt::format("lib: names a file under the component library {} (set PAYNTER_LIBRARY to use another); "
                                "docs/library.md lists the components",
                                LibraryDirectory())
                  : "a path is relative to the file that uses it");
    const std::string canonical = fs::weakly_canonical(path, ec).string();
    auto it = files_read_.find(canonical);
    if (it == files_read_.end()) {
      auto spec = std::make_unique<ModelSpec>(ReadHierarchicalModelSpecFile(path.string()));
      it = files_read_.emplace(canonical, std::move(spec)).first;
      files_.push_back(path.string());
    }
    const ModelSpec* file_spec = it->second.get();
    const Scope file_scope{&file_spec->submodels, nullptr};
    if (member.empty()) return {file_spec, Scope{}, canonical, path.string()};
    for (const auto& d : file_spec->submodels)
      if (d.name == member)
        return {&d, file_scope, fmt::format("{}#{}@{}", canonical, d.name, static_cast<const void*>(&d)),
                path.string() + "#" + member};
    std::vector<std::string> names;
    for (const auto& d : file_spec->submodels) names.push_back(d.name);
    ThrowAt(inst.where, ipath, fmt::format("file '{}' defines no submodel '{}'", path.string(), member),
            "a name of its 'submodels:'", member, "its submodels: " + JoinNames(names));
  }

  // The values the instance gives its submodel's parameters, on the
  // instantiated child (`<instance>.R`): texts of the parent, in its names.
  // Records the parameters set in `set`.
  static void BindParameters(const ModelSpec::InstanceSpec& inst, const std::string& ipath, const ModelSpec& def,
                             ModelSpec* child, std::set<std::string>* set) {
    const std::string dot = inst.name + ".";
    std::vector<std::string> names;
    for (const auto& p : child->parameters) names.push_back(p.name.substr(dot.size()));
    std::set<std::string> given;
    for (const auto& v : inst.parameters) {
      auto p = std::find_if(child->parameters.begin(), child->parameters.end(),
                            [&](const ModelSpec::Item& q) { return q.name == dot + v.name; });
      if (p == child->parameters.end()) {
        const std::string h = DidYouMean(v.name, names);
        ThrowAt(v.where, ipath, fmt::format("submodel '{}' declares no parameter '{}'", inst.use, v.name),
                "one of its parameters", v.name, h.empty() ? "its parameters: " + JoinNames(names) : h);
      }
      p->text = v.text;
      p->where = v.where;
      given.insert(v.name);
    }
    for (const auto& r : def.required_parameters)
      if (!given.count(r))
        ThrowAt(inst.where, ipath, fmt::format("instance '{}' gives no value to parameter '{}'", inst.name, r),
                fmt::format("parameters: {{{}: <value>}}", r), "no value",
                fmt::format("submodel '{}' declares '{}' without a default", inst.use, r));
    for (const auto& g : given) set->insert(dot + g);
  }

  // An instance's parameter given a value that varies (a signal: an
  // expression of t, of a signal function, or of any name that is not a
  // parameter) becomes a definition of the instance, placed before the
  // instance's own definitions; so does a parameter of it computed from one
  // that did. The components' sources take waveforms this way.
  static void SignalParameters(ModelSpec* spec, size_t own, const std::set<std::string>& set_here,
                               const std::map<std::string, size_t>& definitions_from) {
    std::set<std::string> parameters, moved;
    for (const auto& p : spec->parameters) parameters.insert(p.name);
    std::vector<ModelSpec::Item> kept;
    std::map<size_t, std::vector<ModelSpec::Item>> at;  // definitions' index -> the parameters moved there
    for (size_t k = 0; k < spec->parameters.size(); ++k) {
      ModelSpec::Item& p = spec->parameters[k];
      bool varies = false, follows = false;
      if (k >= own)
        MapNames(p.text, [&](const std::string& n, bool call) -> std::string {
          if (call) varies = varies || IsSignalFunction(n);
          else if (moved.count(n)) follows = true;
          else if (n != "pi" && n != "Pi" && !parameters.count(n)) varies = true;
          return n;
        });
      const auto from = definitions_from.find(p.name.substr(0, p.name.find('.')));
      if (from == definitions_from.end() || !(follows || (varies && set_here.count(p.name)))) {
        kept.push_back(std::move(p));
        continue;
      }
      moved.insert(p.name);
      p.unit.clear();
      at[from->second].push_back(std::move(p));
    }
    spec->parameters = std::move(kept);
    for (auto it = at.rbegin(); it != at.rend(); ++it)
      spec->definitions.insert(spec->definitions.begin() + static_cast<std::ptrdiff_t>(it->first),
                               it->second.begin(), it->second.end());
  }

  static void Append(ModelSpec&& from, ModelSpec* to) {
    auto move_all = [](auto& src, auto& dst) {
      for (auto& x : src) dst.push_back(std::move(x));
    };
    move_all(from.parameters, to->parameters);
    move_all(from.elements, to->elements);
    move_all(from.bonds, to->bonds);
    move_all(from.displacements, to->displacements);
    move_all(from.definitions, to->definitions);
    move_all(from.blocks, to->blocks);
    move_all(from.events, to->events);
    move_all(from.generalized, to->generalized);
    move_all(from.independent, to->independent);
    move_all(from.quasi_velocities, to->quasi_velocities);
    move_all(from.assembly_held, to->assembly_held);
    if (from.multibody.present) {
      if (!to->multibody.present) to->multibody.where = from.multibody.where;
      to->multibody.present = true;
      move_all(from.multibody.bodies, to->multibody.bodies);
      move_all(from.multibody.joints, to->multibody.joints);
      move_all(from.multibody.loads, to->multibody.loads);
    }
  }

  std::vector<std::pair<std::string, std::string>> stack_;  // definitions being flattened: key, label
  std::map<std::string, std::unique_ptr<ModelSpec>> files_read_;
  std::vector<std::string> files_;
  size_t elements_ = 0;
};

bool IsHierarchical(const ModelSpec& spec) {
  return !spec.instances.empty() || !spec.submodels.empty() || !spec.ports.empty() ||
         !spec.required_parameters.empty();
}

FlatDef FlattenTop(const ModelSpec& spec, Flattener* f) {
  if (!spec.required_parameters.empty()) {
    const auto& name = spec.required_parameters.front();
    SourceLocation where{spec.file, 0, 0};
    for (const auto& p : spec.parameters)
      if (p.name == name) where = p.where;
    ThrowAt(where, "", fmt::format("parameter '{}' has no value", name), fmt::format("{}: <value>", name), "no value",
            "a parameter without a value belongs to a submodel, whose instances give it one");
  }
  std::error_code ec;
  if (!spec.file.empty() && fs::is_regular_file(spec.file, ec))
    f->Enter(fs::weakly_canonical(spec.file, ec).string(), spec.file);
  return f->Flatten(spec, Scope{}, "", 0);
}

}  // namespace

std::string LibraryDirectory() {
  return DataDirectory("library", "PAYNTER_LIBRARY", PAYNTER_LIBRARY_DIR);
}

void FlattenSubmodels(ModelSpec* spec) {
  if (!IsHierarchical(*spec)) return;
  Flattener f;
  FlatDef flat = FlattenTop(*spec, &f);
  for (auto& o : flat.outputs)
    if (o.shown) flat.spec.outputs.push_back(std::move(o.item));
  *spec = std::move(flat.spec);
}

std::vector<std::string> ModelFileImports(const std::string& path) {
  const ModelSpec spec = ReadHierarchicalModelSpecFile(path);
  if (!IsHierarchical(spec)) return {};
  Flattener f;
  FlattenTop(spec, &f);
  return f.files();
}

}  // namespace paynter
