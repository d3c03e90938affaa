// Element kinds, lookups and structural validation of a Model.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "model_internal.h"
#include "paynter/model.h"

namespace paynter {

namespace {
const std::vector<std::pair<std::string, ElementKind>>& KindTable() {
  static const std::vector<std::pair<std::string, ElementKind>> table = {
      {"Se", ElementKind::kSe},   {"Sf", ElementKind::kSf},   {"MSe", ElementKind::kMSe},
      {"MSf", ElementKind::kMSf}, {"C", ElementKind::kC},     {"I", ElementKind::kI},
      {"R", ElementKind::kR},     {"TF", ElementKind::kTF},   {"MTF", ElementKind::kMTF},
      {"GY", ElementKind::kGY},   {"MGY", ElementKind::kMGY}, {"0", ElementKind::kZero},
      {"1", ElementKind::kOne}};
  return table;
}
}  // namespace

std::string KindName(ElementKind k) {
  for (const auto& [name, kind] : KindTable())
    if (kind == k) return name;
  return "?";
}

std::optional<ElementKind> ParseElementKind(const std::string& s) {
  for (const auto& [name, kind] : KindTable())
    if (name == s) return kind;
  return std::nullopt;
}

std::vector<std::string> KindNames() {
  std::vector<std::string> out;
  for (const auto& [name, kind] : KindTable()) out.push_back(name);
  return out;
}

bool IsJunction(ElementKind k) { return k == ElementKind::kZero || k == ElementKind::kOne; }
bool IsSource(ElementKind k) {
  return k == ElementKind::kSe || k == ElementKind::kSf || k == ElementKind::kMSe || k == ElementKind::kMSf;
}
bool IsStorage(ElementKind k) { return k == ElementKind::kC || k == ElementKind::kI; }
bool IsTwoPort(ElementKind k) {
  return k == ElementKind::kTF || k == ElementKind::kMTF || k == ElementKind::kGY || k == ElementKind::kMGY;
}
bool IsOnePort(ElementKind k) { return IsSource(k) || IsStorage(k) || k == ElementKind::kR; }

int Model::FindElement(const std::string& n) const {
  for (size_t i = 0; i < elements.size(); ++i)
    if (elements[i].name == n) return static_cast<int>(i);
  return -1;
}

int Model::FindBond(const std::string& n) const {
  for (size_t i = 0; i < bonds.size(); ++i)
    if (bonds[i].name == n) return static_cast<int>(i);
  return -1;
}

const GiNaC::symbol& Model::Symbol(const std::string& n) const {
  auto it = symbols.find(n);
  if (it == symbols.end()) throw Error("internal: no symbol named '" + n + "' in model '" + name + "'");
  return it->second;
}

GiNaC::exmap Model::ParameterValues() const {
  GiNaC::exmap m;
  for (const auto& p : parameters) m[Symbol(p.name)] = p.value;
  return m;
}

void ApplyParameterOverrides(ModelSpec* spec, const std::map<std::string, double>& overrides) {
  for (const auto& override : overrides) {
    const std::string& name = override.first;
    const double value = override.second;
    auto p = std::find_if(spec->parameters.begin(), spec->parameters.end(),
                          [&](const ModelSpec::Item& item) { return item.name == name; });
    const SourceLocation where{spec->file, 0, 0};  // the model the command line applies to
    if (p == spec->parameters.end()) {
      std::vector<std::string> names;
      for (const auto& item : spec->parameters) names.push_back(item.name);
      std::string hint = DidYouMean(name, names);
      if (hint.empty())
        hint = names.empty()        ? "the model declares no parameters"
               : names.size() <= 12 ? fmt::format("its parameters are: {}", fmt::join(names, ", "))
                                    : fmt::format("its parameters are {} names, from '{}' to '{}'", names.size(),
                                                  names.front(), names.back());
      ThrowAt(where, "", fmt::format("--param {}={}: the model has no parameter '{}'", name, value, name),
              "the name of a parameter declared under 'parameters:'", fmt::format("'{}'", name), hint);
    }
    if (!std::isfinite(value))
      ThrowAt(where, "", fmt::format("--param {}: the value is not a finite number", name),
              "NAME=NUMBER, a finite number", fmt::format("{}={}", name, value));
    // The shortest text that reads back as the same double.
    p->text = fmt::format("{}", value);
    spec->parameter_overrides[name] = value;
  }
}

void CheckPhysicalParameters(const Model& model, const std::map<std::string, double>& overrides) {
  GiNaC::exmap values;
  for (const auto& p : model.parameters) {
    auto o = overrides.find(p.name);
    values[model.Symbol(p.name)] = o == overrides.end() ? p.value : o->second;
  }
  auto number = [](double v) { return fmt::format("{:.6g}", v); };
  // The overrides in effect, which a value derived from parameters may owe its sign to.
  std::string given;
  for (const auto& p : model.parameters) {
    auto o = overrides.find(p.name);
    if (o != overrides.end() || p.overridden)
      given += fmt::format("{}--param {}={}", given.empty() ? " with " : ", ", p.name,
                           number(o != overrides.end() ? o->second : p.value));
  }
  for (const auto& e : model.elements) {
    const bool inertance = e.kind == ElementKind::kI && e.law_key == "inertance";
    const bool capacitance = e.kind == ElementKind::kC && e.law_key == "capacitance";
    if (!inertance && !capacitance) continue;
    const GiNaC::ex v = GiNaC::evalf(e.law.subs(values));
    if (!GiNaC::is_a<GiNaC::numeric>(v) || !GiNaC::ex_to<GiNaC::numeric>(v).is_real()) continue;  // not constant
    const double x = GiNaC::ex_to<GiNaC::numeric>(v).to_double();
    if (x > 0 && std::isfinite(x)) continue;
    const std::string what = inertance ? "inertance" : "capacitance";
    const std::string is = x == 0 ? "zero" : x < 0 ? "negative" : "not a finite number";
    const std::string expected = fmt::format("a positive {}", what);
    const std::string hint = inertance ? "an inertance (a mass, an inertia, an inductance) is positive; a zero one "
                                         "leaves the element's flow undefined"
                                       : "a capacitance (a compliance, 1/stiffness) is positive; a zero one leaves "
                                         "the element's effort undefined";
    // Written as one parameter: the error is where the parameter is given.
    if (GiNaC::is_a<GiNaC::symbol>(e.law)) {
      const std::string name = GiNaC::ex_to<GiNaC::symbol>(e.law).get_name();
      for (const auto& p : model.parameters) {
        if (p.name != name) continue;
        const std::string message =
            fmt::format("parameter '{}' is {}, but it is the {} of element '{}'", p.name, is, what, e.name);
        if (overrides.count(p.name) || p.overridden)  // at the model the command line applies to
          ThrowAt({model.file, 0, 0}, "", fmt::format("--param {}={}: {}", p.name, number(x), message), expected,
                  fmt::format("{} = {}", p.name, number(x)), hint);
        ThrowAt(p.where, "", message + given, expected, fmt::format("{}: {} (= {})", p.name, p.text, number(x)),
                hint);
      }
    }
    ThrowAt(e.where, e.name, fmt::format("the {} of {} '{}' is {}{}", what, KindName(e.kind), e.name, is, given),
            expected, fmt::format("{}: {} (= {})", e.law_key, e.law_text, number(x)), hint);
  }
}

void ValidateModel(const Model& m) {
  const auto fail = ThrowAt;
  if (m.elements.empty())
    fail({m.file, 0, 0}, "", "the model has no elements", "at least one element under 'elements:'", "none",
         "see docs/model-format.md for an example");
  for (const Bond& b : m.bonds) {
    if (b.dim != 1) {
      ThrowAtBond(b.where, b.name, "vector bonds are not supported yet", "dim: 1", fmt::format("dim: {}", b.dim),
                  "split the vector bond into scalar bonds");
    }
  }
  for (size_t i = 0; i < m.elements.size(); ++i) {
    const Element& e = m.elements[i];
    const int nb = static_cast<int>(e.bonds.size());
    const std::string kind = KindName(e.kind);
    if (nb == 0)
      fail(e.where, e.name, "dangling element: no bond connects to it", "at least one bond naming '" + e.name + "'",
           "no bonds", "connect it with a bond under 'bonds:', or remove it");
    if (IsOnePort(e.kind) && nb != 1)
      fail(e.where, e.name, fmt::format("a {} element has exactly one bond", kind), "1 bond",
           fmt::format("{} bonds", nb), "join the bonds at a 0- or 1-junction and connect the element to it");
    if (IsTwoPort(e.kind)) {
      if (nb != 2)
        fail(e.where, e.name, fmt::format("a {} element has exactly two bonds", kind), "2 bonds",
             fmt::format("{} bonds", nb), "a transformer or gyrator joins exactly two bonds: one in, one out");
      int in = 0;
      for (int b : e.bonds) in += (m.bonds[b].to == static_cast<int>(i)) ? 1 : 0;
      if (in != 1)
        fail(e.where, e.name, fmt::format("a {} element passes power through: one bond in, one bond out", kind),
             "one bond pointing at it (port 1) and one leaving it (port 2)",
             fmt::format("{} bonds pointing at it", in), "reverse the direction (from/to) of one of its bonds");
    }
    if (IsJunction(e.kind) && nb < 2)
      fail(e.where, e.name, fmt::format("a {}-junction joins at least two bonds", kind), "2 or more bonds",
           fmt::format("{} bond", nb), "connect more elements to it or remove it");
  }
}

std::string DescribeModel(const Model& m) {
  std::map<std::string, int> counts;
  int states = 0;
  for (const auto& e : m.elements) {
    counts[KindName(e.kind)]++;
    if (IsStorage(e.kind)) ++states;
  }
  std::ostringstream os;
  os << "model '" << m.name << "'";
  if (!m.file.empty()) os << " (" << EscapeForTerminal(m.file, false) << ")";
  os << ": " << m.elements.size() << " elements (";
  bool first = true;
  for (const auto& [k, n] : KindTable()) {
    (void)n;
    if (!counts.count(k)) continue;
    os << (first ? "" : ", ") << counts[k] << " " << k;
    first = false;
  }
  os << "), " << m.bonds.size() << " bonds, " << m.parameters.size() << " parameters, " << states
     << " storage elements, " << m.displacements.size() << " displacements, " << m.outputs.size() << " outputs";
  return os.str();
}

}  // namespace paynter
