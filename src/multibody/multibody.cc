// ExpandMultibody: bodies, joints and loads -> elements, bonds, displacements
// and definitions of a scalar bond graph (see include/paynter/multibody.h).
//
// This file holds the expansion's driver (Run: the settings, then bodies,
// joints and loads in the order written) and what every step shares: reading
// an entry's fields and writing elements, bonds, definitions and
// displacements. The steps live in bodies.cc, joints.cc,
// initial_coordinates.cc and loads.cc (see expander.h).
#include "paynter/multibody.h"

#include <fmt/format.h>
#include <ginac/ginac.h>

#include <algorithm>
#include <cmath>

#include "expander.h"

namespace paynter {
namespace multibody {

void Expander::Run() {
  const auto& st = mb_.settings;
  for (const auto& [k, f] : st)
    if (k != "gravity" && k != "orientation" && k != "parasitic_stiffness" && k != "parasitic_damping" &&
        k != "assemble")
      ThrowAt(f.where, "", fmt::format("unknown multibody setting '{}'", k),
              "gravity, orientation, assemble, parasitic_stiffness, parasitic_damping, bodies, joints, loads", k);
  if (st.count("assemble")) {
    const auto& f = st.at("assemble");
    if (f.is_list || (f.values[0] != "true" && f.values[0] != "false"))
      ThrowAt(f.where, "", "'assemble' is true or false", "assemble: true", f.is_list ? "a list" : f.values[0],
              "true lets paynter move an inconsistent start onto the joints however far off it is");
    s_.assemble = f.values[0] == "true";
  }
  for (const char* k : {"parasitic_stiffness", "parasitic_damping"})
    if (st.count(k)) {
      if (st.at(k).is_list) ThrowAt(st.at(k).where, "", fmt::format("'{}' is a single value", k), "a number", "a list");
      (std::string(k) == "parasitic_stiffness" ? parasitic_k_ : parasitic_c_) = st.at(k).values[0];
    }
  if (st.count("orientation")) {
    const auto& f = st.at("orientation");
    if (f.is_list || (f.values[0] != "quaternion" && f.values[0] != "cardan"))
      ThrowAt(f.where, "", "unknown orientation representation", "quaternion (the default) or cardan",
           f.values.empty() ? "" : f.values[0], "Cardan angles are singular at beta = +-pi/2; quaternions are not");
    cardan_ = f.values[0] == "cardan";
  }
  gravity_ = {0, 0, 0};
  if (st.count("gravity")) gravity_ = Vector(st.at("gravity"), "", "gravity");
  bodies_.push_back(Ground());
  for (const auto& e : mb_.bodies) AddBody(e);
  for (const auto& e : mb_.joints) AddJoint(e);
  for (const auto& e : mb_.loads) AddLoad(e);
  for (const auto& j : joints_)
    if (j.has_initial) {
      Propagate();
      break;
    }
}

// ---- reading entries ------------------------------------------------------------
GiNaC::symbol Expander::Sym(const std::string& name) {
  auto it = syms_.find(name);
  if (it != syms_.end()) return it->second;
  GiNaC::symbol s(name);
  syms_.emplace(name, s);
  return s;
}

// Parses a text with every name a symbol (checked later by BuildModel).
ex Expander::Parse(const std::string& text, const SourceLocation& where, const std::string& who) {
  CheckExpressionText(text, where, who, "the expression");
  try {
    return ParseExpressionText(text, [&](const std::string& name) -> ex {
      return name == "pi" || name == "Pi" ? ex(GiNaC::Pi) : ex(Sym(name));
    });
  } catch (const std::exception&) {
    ThrowAt(where, who, fmt::format("cannot parse '{}'", text), "a number or an expression of parameters");
  }
}

const ModelSpec::Field* Expander::Get(const ModelSpec::Entry& e, const std::string& key) {
  auto it = e.fields.find(key);
  return it == e.fields.end() ? nullptr : &it->second;
}

std::string Expander::Name(const ModelSpec::Entry& e, const char* what) {
  const auto* f = Get(e, "name");
  if (!f || f->is_list) ThrowAt(e.where, "", fmt::format("a {} needs a name", what), "name: <identifier>", "none");
  CheckNameLength(f->values[0], f->where, "", fmt::format("the name of a {}", what));
  return f->values[0];
}

void Expander::CheckKeys(const ModelSpec::Entry& e, const std::string& who, const std::set<std::string>& allowed) {
  for (const auto& [k, f] : e.fields)
    if (!allowed.count(k)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      ThrowAt(f.where, who, fmt::format("unknown key '{}'", k), "one of: " + list, k);
    }
}

Vec Expander::Vector(const ModelSpec::Field& f, const std::string& who, const std::string& what) {
  if (!f.is_list || f.values.size() != 3)
    ThrowAt(f.where, who, fmt::format("'{}' is a vector of three components", what), "[x, y, z]",
         f.is_list ? fmt::format("{} components", f.values.size()) : "'" + f.values[0] + "'");
  return {Parse(f.values[0], f.where, who), Parse(f.values[1], f.where, who), Parse(f.values[2], f.where, who)};
}

Vec Expander::VectorOr(const ModelSpec::Entry& e, const std::string& key, const std::string& who, Vec dflt) {
  const auto* f = Get(e, key);
  return f ? Vector(*f, who, key) : dflt;
}

std::string Expander::Scalar(const ModelSpec::Entry& e, const std::string& key, const std::string& who) {
  const auto* f = Get(e, key);
  if (!f) return "";
  if (f->is_list) ThrowAt(f->where, who, fmt::format("'{}' is a single value", key), "a number or expression", "a list");
  return f->values[0];
}

const GiNaC::exmap& Expander::Values() {
  if (!values_) {
    values_.emplace();
    for (const auto& p : s_.parameters) (*values_)[Sym(p.name)] = GiNaC::evalf(Parse(p.text, p.where, p.name).subs(*values_));
  }
  return *values_;
}

// A constant unit vector (axes must be numbers, or parameters: their values
// when the model is built).
std::array<double, 3> Expander::Axis(const ModelSpec::Entry& e, const std::string& key, const std::string& who,
                                     std::array<double, 3> dflt) {
  const auto* f = Get(e, key);
  if (!f) return dflt;
  const Vec v = Vector(*f, who, key);
  std::array<double, 3> a;
  for (int i = 0; i < 3; ++i) {
    ex n = GiNaC::evalf(v[i]);
    if (!GiNaC::is_a<GiNaC::numeric>(n)) n = GiNaC::evalf(v[i].subs(Values()));
    if (!GiNaC::is_a<GiNaC::numeric>(n))
      ThrowAt(f->where, who, fmt::format("'{}' must be a constant vector", key), "[numbers or parameters]", Text(v[i]),
           "joint axes are fixed in the first body's frame");
    a[i] = GiNaC::ex_to<GiNaC::numeric>(n).to_double();
    if (!std::isfinite(a[i]))
      ThrowAt(f->where, who, fmt::format("'{}' has a component that is not a finite number", key),
              "a direction of finite components", f->values[i]);
  }
  // The norm of the components scaled by the largest, so that it does not overflow.
  const double big = std::max({std::abs(a[0]), std::abs(a[1]), std::abs(a[2])});
  const double n = big == 0 ? 0 : big * std::hypot(a[0] / big, a[1] / big, a[2] / big);
  if (n < 1e-12) ThrowAt(f->where, who, fmt::format("'{}' is the zero vector", key), "a direction", "[0, 0, 0]");
  for (double& x : a) x = x / big / (n / big);
  return a;
}

// ---- writing the spec -------------------------------------------------------------
ModelSpec::ElementSpec& Expander::Element(const std::string& name, const std::string& kind, const std::string& key,
                                          const std::string& law) {
  ModelSpec::ElementSpec e;
  e.name = name;
  e.kind = kind;
  if (!key.empty()) e.laws.push_back({key, law});
  e.where = where_;
  s_.elements.push_back(std::move(e));
  return s_.elements.back();
}

void Expander::BondTo(const std::string& from, const std::string& to) {
  ModelSpec::BondSpec b;
  b.from = from;
  b.to = to;
  b.where = where_;
  s_.bonds.push_back(b);
}

void Expander::Define(const std::string& name, const ex& value, std::optional<ex> rate) {
  s_.definitions.push_back({name, "", where_, value});
  s_.definitions.back().rate = std::move(rate);
}

ModelSpec::DisplacementSpec& Expander::Displacement(const std::string& name, const std::string& of, const ex& rate,
                                                    const ex& initial) {
  ModelSpec::DisplacementSpec d;
  d.name = name;
  d.of = of;
  if (of.empty()) d.rate_value = rate;
  d.initial_value = initial;
  d.where = where_;
  s_.displacements.push_back(std::move(d));
  return s_.displacements.back();
}

}  // namespace multibody

void ExpandMultibody(ModelSpec* spec) { multibody::Expander(spec).Run(); }

}  // namespace paynter
