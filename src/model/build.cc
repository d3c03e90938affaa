// BuildModel: from a ModelSpec (names and texts) to a Model (parsed expressions,
// registered symbols), with a located, hinted error for every problem.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "model_internal.h"
#include "paynter/model.h"
#include "paynter/units.h"

namespace paynter {
namespace {

// Function names the expression parser understands, and constants.
const std::set<std::string>& KnownFunctions() {
  static const std::set<std::string> f = {"sin",  "cos",  "tan",  "asin", "acos", "atan", "atan2", "sinh",
                                          "cosh", "tanh", "exp",  "log",  "sqrt", "abs",  "pow",   "step",
                                          "if",   "piecewise", "step_at", "ramp", "pulse", "square", "table"};
  return f;
}

class Builder {
 public:
  explicit Builder(const ModelSpec& spec) : spec_(spec) {}

  Model Build() {
    // The name is shown in reports: no control characters in it.
    m_.name = spec_.name.empty() ? "model" : EscapeForTerminal(spec_.name, false);
    m_.file = spec_.file;
    // Names: the parameters, each element and bond, and their variables
    // (e_, f_, p_, q_ ...): room for them at once, not by rehashing.
    owner_.reserve(spec_.parameters.size() + spec_.definitions.size() + 4 * (spec_.elements.size() + spec_.bonds.size()) + 16);
    Register("t", spec_.file.empty() ? SourceLocation{} : SourceLocation{spec_.file, 0, 0}, {"time"});
    m_.symbols.emplace("t", m_.time);
    BuildParameters();
    BuildElements();
    BuildBonds();
    ValidateModel(m_);  // structural checks before expressions refer to ports
    RegisterVariables();
    BuildDisplacements();
    BuildFieldCoordinates();
    BuildFieldCoordinateDefinitions();
    BuildDefinitions();
    for (auto& d : field_definitions_) m_.definitions.push_back(std::move(d));
    ParseDisplacementValues();
    ParseLaws();
    ParseFields();
    CheckPhysicalParameters(m_);
    BuildOutputs();
    BuildEvents();
    BuildCoordinates();
    CheckUnits(spec_, &m_);  // bonds' domains; dimensional consistency (units.cc)
    if (!unit_scales_.empty()) {
      RemoveUnitConstants();
      CheckPhysicalParameters(m_);  // the moduli written with units
    }
    return std::move(m_);
  }

  // BuildModelTopology: the elements and bonds, each law's text for the drawing.
  Model BuildTopology() {
    m_.name = spec_.name.empty() ? "model" : EscapeForTerminal(spec_.name, false);
    m_.file = spec_.file;
    BuildElements();
    BuildBonds();
    for (const auto& es : spec_.elements) {
      const int i = FindElement(es.name);
      if (i >= 0 && !es.laws.empty()) m_.elements[i].law_text = es.laws[0].second;
    }
    return std::move(m_);
  }

 private:
  // Records a name in the global namespace; duplicates are errors.
  // What a name names, as a message says it: `format` with the names (a
  // format string, kept unformatted until a message needs it: a large model
  // registers hundreds of thousands of names).
  struct What {
    const char* format;
    std::string a, b;
    std::string Text() const { return fmt::format(fmt::runtime(format), a, b); }
  };
  void Register(const std::string& name, const SourceLocation& where, What what, const std::string& element = "") {
    auto [it, fresh] = owner_.try_emplace(name, std::move(what));
    if (!fresh)
      ThrowAt(where, element, fmt::format("duplicate name '{}'", name), "a name used once",
           fmt::format("'{}' is both {} and {}", name, it->second.Text(), what.Text()),
           "rename one of them; generated names are p_<I>, q_<C>, e_<bond>, f_<bond>, e_<elem>, f_<elem>");
  }

  GiNaC::symbol NewSymbol(const std::string& name) {
    // TeX name: p_L1 -> p_{L1}
    std::string tex = name;
    auto us = name.find('_');
    if (us != std::string::npos && us + 1 < name.size())
      tex = name.substr(0, us) + "_{" + name.substr(us + 1) + "}";
    if (name.size() > 1 && tex == name) tex = "\\mathrm{" + name + "}";
    GiNaC::symbol s(name, tex);
    m_.symbols.emplace(name, s);
    return s;
  }

  // Parses `text` with the model's symbols plus `locals`. Unknown names give a
  // located error with a did-you-mean hint.
  GiNaC::ex Parse(const std::string& text, const SourceLocation& where, const std::string& element,
                  const std::string& what, const std::map<std::string, GiNaC::ex>& locals = {},
                  const std::set<std::string>* allowed = nullptr, bool* condition_strict = nullptr) {
    if (text.empty()) ThrowAt(where, element, what + " is empty", "an expression", "nothing");
    // Limits (size, nesting, name length) and calls without arguments, which the
    // parser does not survive, are checked first.
    CheckExpressionText(text, where, element, what);
    // The parser's table holds only the names the text uses (found by a scan
    // that also gives unknown names a clear message): parsing stays linear in
    // the text, however large the model.
    GiNaC::symtab table;
    table["pi"] = GiNaC::Pi;
    table["Pi"] = GiNaC::Pi;
    table["t"] = m_.time;  // the signal functions' time
    auto lookup = [&](const std::string& id) -> const GiNaC::ex* {
      auto l = locals.find(id);
      if (l != locals.end()) return &l->second;
      auto g = m_.symbols.find(id);
      if (g != m_.symbols.end()) {
        static thread_local GiNaC::ex holder;
        holder = g->second;
        return &holder;
      }
      return nullptr;
    };
    size_t i = 0;
    while (i < text.size()) {
      const unsigned char ch = static_cast<unsigned char>(text[i]);
      if (ch == '[') {  // a unit's names are no model names
        const size_t end = UnitBracketEnd(text, i);
        i = end == std::string::npos ? i + 1 : end;
        continue;
      }
      if (!(std::isalpha(ch) || ch == '_')) {
        ++i;
        continue;
      }
      const size_t j = NameEnd(text, i);
      const std::string id = text.substr(i, j - i);
      const size_t pos = i;
      i = j;
      if (pos > 0 && (std::isdigit(static_cast<unsigned char>(text[pos - 1])) || text[pos - 1] == '.'))
        continue;  // exponent of a number such as 1e-3
      if (IsSignalFunction(id) && allowed && !allowed->count("t"))
        ThrowAt(where, element, fmt::format("'{}' may not appear in {}", id, what), allowed_desc_,
                fmt::format("the signal function '{}' (a function of time) in '{}'", id, text), allowed_hint_);
      if (KnownFunctions().count(id) || (table.count(id) && id != "t")) continue;
      const GiNaC::ex* found = lookup(id);
      if (found) table[id] = *found;
      if (!found) {
        UndeclaredParameter(id, text, where, element, what);
        std::vector<std::string> candidates;
        for (const auto& [n, s] : m_.symbols) candidates.push_back(n);
        for (const auto& [n, s] : locals) candidates.push_back(n);
        std::string hint = DidYouMean(id, candidates);
        if (hint.empty())
          hint = "declare it under 'parameters:', or use a model variable (t, p_<I>, q_<C>, e_<bond>, f_<bond>, "
                 "a displacement)";
        ThrowAt(where, element, fmt::format("undefined symbol '{}' in {}", id, what), "a parameter or model variable",
             fmt::format("'{}' in '{}'", id, text), hint);
      }
      if (allowed && !allowed->count(id))
        ThrowAt(where, element, fmt::format("'{}' may not appear in {}", id, what), allowed_desc_,
             fmt::format("'{}' in '{}'", id, text), allowed_hint_);
    }
    try {
      const ExpressionNames names = [&](const std::string& id) -> GiNaC::ex {
        if (!id.empty() && id[0] == '[') return UnitConstant(id);
        auto it = table.find(id);
        if (it == table.end()) throw std::invalid_argument(fmt::format("unknown name '{}'", id));
        return it->second;
      };
      // A signal's constant argument: its value with the parameters' values
      // (and those being read, `locals`).
      const ConstantValue constant = [&](const GiNaC::ex& e) -> std::optional<double> {
        GiNaC::exmap values = unit_scales_;
        for (const auto& p : m_.parameters) values[m_.Symbol(p.name)] = p.value;
        for (const auto& [n, v] : locals)
          if (GiNaC::is_a<GiNaC::numeric>(v) && m_.symbols.count(n)) values[m_.Symbol(n)] = v;
        const GiNaC::ex x = GiNaC::evalf(e.subs(values, GiNaC::subs_options::no_pattern));
        if (!GiNaC::is_a<GiNaC::numeric>(x) || !GiNaC::ex_to<GiNaC::numeric>(x).is_real()) return std::nullopt;
        return GiNaC::ex_to<GiNaC::numeric>(x).to_double();
      };
      if (condition_strict) return ParseConditionText(text, names, condition_strict, &constant);
      return ParseExpressionText(text, names, &constant);
    } catch (const ArgumentError& ex) {
      ThrowAt(where, element, fmt::format("{}: {}", what, Printable(ex.what())), ex.expected,
              fmt::format("{} in '{}'", ex.got, text), ex.hint);
    } catch (const std::invalid_argument& ex) {
      ThrowAt(where, element, fmt::format("cannot parse {}", what),
              condition_strict ? "a condition such as 'x < 0' or 'f_belt >= v0'" : "an expression such as 'm*g*cos(theta)'",
              fmt::format("'{}' ({})", text, Printable(ex.what())),
              "check parentheses and operators (* for products, ^ for powers)");
    } catch (const std::exception& ex) {
      // Read, but without a value: a division by zero, a function at a pole, a
      // number too large (ParseExpressionText's value errors and the algebra
      // library's own).
      ThrowAt(where, element, fmt::format("{} has no finite value", what), "an expression with a finite value",
              fmt::format("'{}' ({})", text, Printable(ex.what())),
              "a division by zero (1/0), a function at a pole (log(0), tan(pi/2)) or a number beyond 1e308 has no "
              "value; check the expression");
    }
  }

  // An expression formed in code (a ModelSpec value) with the checks Parse
  // makes on a text: its symbols are named as the model's variables and
  // become them (a one-port's e_<elem> is its bond's e_<bond>, ...).
  GiNaC::ex Adopt(const GiNaC::ex& value, const SourceLocation& where, const std::string& element,
                  const std::string& what, const std::set<std::string>* allowed = nullptr) {
    GiNaC::exmap to_model;
    GiNaC::exset seen;
    for (auto it = value.preorder_begin(); it != value.preorder_end(); ++it) {
      if (!GiNaC::is_a<GiNaC::symbol>(*it) || !seen.insert(*it).second) continue;
      const std::string id = GiNaC::ex_to<GiNaC::symbol>(*it).get_name();
      auto g = m_.symbols.find(id);
      if (g == m_.symbols.end()) {
        std::vector<std::string> candidates;
        for (const auto& [n, s] : m_.symbols) candidates.push_back(n);
        std::string hint = DidYouMean(id, candidates);
        if (hint.empty())
          hint =
              "declare it under 'parameters:', or use a model variable (t, p_<I>, q_<C>, e_<bond>, f_<bond>, "
              "a displacement)";
        ThrowAt(where, element, fmt::format("undefined symbol '{}' in {}", id, what), "a parameter or model variable",
                fmt::format("'{}' in '{}'", id, ExpressionText(value)), hint);
      }
      if (allowed && !allowed->count(id))
        ThrowAt(where, element, fmt::format("'{}' may not appear in {}", id, what), allowed_desc_,
                fmt::format("'{}' in '{}'", id, ExpressionText(value)), allowed_hint_);
      if (!GiNaC::ex(g->second).is_equal(*it)) to_model[*it] = g->second;
    }
    return to_model.empty() ? value : value.subs(to_model, GiNaC::subs_options::no_pattern);
  }

  // A spec's expression: its value where one is given, else its text parsed.
  GiNaC::ex Read(const std::optional<GiNaC::ex>& value, const std::string& text, const SourceLocation& where,
                 const std::string& element, const std::string& what, const std::set<std::string>* allowed = nullptr) {
    return value ? Adopt(*value, where, element, what, allowed) : Parse(text, where, element, what, {}, allowed);
  }

  // The reason an exception gives, up to its first unprintable character.
  static std::string Printable(const std::string& what) {
    std::string why;
    for (char c : what) {
      if (c < 32 || c > 126) break;
      why += c;
    }
    return why;
  }

  // While parameters are read: a name that is a parameter declared later (or
  // the one being read) gets a message of its own, not "undefined".
  void UndeclaredParameter(const std::string& id, const std::string& text, const SourceLocation& where,
                           const std::string& element, const std::string& what) {
    if (reading_parameter_ < 0) return;
    const auto& params = spec_.parameters;
    const auto& self = params[reading_parameter_];
    if (id == self.name)
      ThrowAt(where, element, fmt::format("{} refers to itself", what), "an expression of parameters declared before it",
              fmt::format("'{}' in '{}'", id, text), "give the parameter a value that does not use its own name");
    for (size_t k = reading_parameter_ + 1; k < params.size(); ++k)
      if (params[k].name == id)
        ThrowAt(where, element, fmt::format("{} uses parameter '{}', which is declared after it", what, id),
                "an expression of parameters declared before it",
                fmt::format("'{}' in '{}' ('{}' is declared at {})", id, text, id, params[k].where.ToString()),
                fmt::format("parameters are evaluated in the order written: declare '{}' before '{}'", id, self.name));
  }

  void BuildParameters() {
    // Parameters become numbers at once: in a parameter's text, the names of
    // those before it read as their values (a table grown as they are read: no
    // substitution over all parameters per parameter, so the work stays
    // linear in their number).
    constants_ = {"pi", "Pi"};
    std::map<std::string, GiNaC::ex> values;
    for (const auto& p : spec_.parameters) {
      reading_parameter_ = static_cast<int>(&p - spec_.parameters.data());
      CheckNameLength(p.name, p.where, "", "parameter name");
      if (!IsIdentifier(p.name))
        ThrowAt(p.where, "", fmt::format("parameter name '{}' is not an identifier", p.name),
             "letters, digits and underscores, not starting with a digit", p.name);
      GiNaC::ex v = Parse(p.text, p.where, "", fmt::format("parameter '{}'", p.name), values);
      // Parameters may be expressions of earlier parameters.
      GiNaC::ex num = GiNaC::evalf(unit_scales_.empty() ? v : v.subs(UnitScales(), GiNaC::subs_options::no_pattern));
      if (!GiNaC::is_a<GiNaC::numeric>(num) || !GiNaC::ex_to<GiNaC::numeric>(num).is_real())
        ThrowAt(p.where, "", fmt::format("parameter '{}' is not a real number", p.name),
             "a number, or an expression of parameters declared before it", fmt::format("'{}'", p.text),
             "parameters may not depend on time or states; use an expression in the element instead");
      double value = GiNaC::ex_to<GiNaC::numeric>(num).to_double();
      if (!std::isfinite(value))
        ThrowAt(p.where, "", fmt::format("parameter '{}' is not finite", p.name), "a finite number",
             fmt::format("'{}' = {}", p.text, value));
      const auto over = spec_.parameter_overrides.find(p.name);
      if (over != spec_.parameter_overrides.end()) value = over->second;  // exactly the number given
      Register(p.name, p.where, {"parameter '{}'", p.name});
      NewSymbol(p.name);
      values[p.name] = value;
      constants_.insert(p.name);
      m_.parameters.push_back({p.name, value, p.text, p.where, over != spec_.parameter_overrides.end(), p.unit,
                               p.number || IsNumberText(p.text)});
    }
    reading_parameter_ = -1;
    constants_and_time_ = constants_;
    constants_and_time_.insert("t");
  }

  // ---- constants with a unit in brackets (`9.81 [m/s^2]`) ---------------------
  // Each unit written becomes a symbol named as written ("[m/s^2]"), which the
  // unit check gives the unit's dimension (units.cc); RemoveUnitConstants then
  // replaces it by the unit's exact SI scale everywhere.
  GiNaC::ex UnitConstant(const std::string& id) {
    if (auto it = unit_symbols_.find(id); it != unit_symbols_.end()) return it->second;
    std::string why;
    const std::string inner = id.substr(1, id.size() - 2);
    const auto unit = ParseUnit(inner, &why);
    if (!unit) {
      throw ArgumentError(fmt::format("'{}' is not a unit", inner), "a unit in brackets after a number, such as "
                          "9.81 [m/s^2] or 50 [cm]", fmt::format("'[{}]' ({})", inner, why),
                          "the units are listed in docs/model-format.md (\"Units and domains\")");
    }
    GiNaC::symbol s(id, "\\,\\mathrm{" + inner + "}");
    unit_symbols_.emplace(id, s);
    unit_scales_.emplace(s, unit->scale);
    m_.symbols.emplace(id, s);
    return s;
  }

  const GiNaC::exmap& UnitScales() const { return unit_scales_; }

  void RemoveUnitConstants() {
    const GiNaC::exmap scales = UnitScales();
    auto fix = [&](GiNaC::ex& e) { e = e.subs(scales, GiNaC::subs_options::no_pattern); };
    auto fix_opt = [&](std::optional<GiNaC::ex>& e) {
      if (e) fix(*e);
    };
    for (auto& e : m_.elements) {
      fix(e.law);
      fix_opt(e.initial);
      fix_opt(e.position);
      fix_opt(e.static_limit);
    }
    for (auto& d : m_.displacements) {
      fix(d.rate);
      fix(d.initial);
      fix_opt(d.position);
    }
    for (auto& o : m_.outputs) fix(o.value);
    for (auto& d : m_.definitions) {
      fix(d.value);
      fix_opt(d.rate);
    }
    for (auto& ev : m_.events) {
      fix(ev.indicator);
      for (auto& r : ev.resets) fix(r.value);
    }
    for (const auto& [id, s] : unit_symbols_) m_.symbols.erase(id);
  }

  void BuildElements() {
    for (const auto& es : spec_.elements) {
      if (es.name.empty())
        ThrowAt(es.where, "", "element without a name", "a 'name:' for every element", "no name");
      CheckNameLength(es.name, es.where, "", "element name");
      if (!IsIdentifier(es.name))
        ThrowAt(es.where, es.name, fmt::format("element name '{}' is not an identifier", es.name),
             "letters, digits and underscores, not starting with a digit", es.name,
             "names become variables in expressions (e_<name>, f_<name>)");
      auto kind = ParseElementKind(es.kind);
      if (!kind) {
        std::string hint = DidYouMean(es.kind, KindNames());
        ThrowAt(es.where, es.name, fmt::format("unknown element kind '{}'", es.kind),
             "one of Se Sf MSe MSf C I R TF MTF GY MGY 0 1", es.kind,
             hint.empty() ? "junctions are written \"0\" and \"1\" (quoted)" : hint);
      }
      Register(es.name, es.where, {"element '{}'", es.name}, es.name);
      Element e;
      e.name = es.name;
      e.kind = *kind;
      e.where = es.where;
      e.origin = es.origin;
      if (es.fixed == "flow-in-flow-out") e.fixed = Element::Fixed::kFlowInFlowOut;
      if (es.fixed == "flow-in") e.fixed = Element::Fixed::kFlowInBoth;
      if (es.input && !IsSource(e.kind))
        ThrowAt(es.where, es.name, "'input: true' marks a source as an input of the linear model",
                "an Se, Sf, MSe or MSf element", fmt::format("a {} element", es.kind), "remove 'input: true'");
      e.input = es.input;
      e.domain = es.domain;
      element_index_[es.name] = static_cast<int>(m_.elements.size());
      m_.elements.push_back(std::move(e));
    }
    BuildFieldPorts();
  }

  // Storage fields (docs/model-format.md, "Storage fields"): one element per
  // port, of the field's kind, after the elements written as such.
  void BuildFieldPorts() {
    for (const auto& fs : spec_.fields) {
      CheckNameLength(fs.name, fs.where, "", "element name");
      if (!IsIdentifier(fs.name))
        ThrowAt(fs.where, fs.name, fmt::format("element name '{}' is not an identifier", fs.name),
                "letters, digits and underscores, not starting with a digit", fs.name);
      if (fs.kind != "IF" && fs.kind != "CF")
        ThrowAt(fs.where, fs.name, fmt::format("unknown storage field kind '{}'", fs.kind), "IF or CF", fs.kind);
      const size_t n = fs.coordinates.size();
      if (n == 0)
        ThrowAt(fs.where, fs.name, "a storage field needs its coordinates, one per port", "coordinates: [q1, ...]",
                "none");
      for (size_t k = 0; k < n; ++k)
        for (size_t j = 0; j < k; ++j)
          if (fs.coordinates[j] == fs.coordinates[k])
            ThrowAt(fs.where, fs.name, fmt::format("coordinate '{}' of storage field '{}' is given twice",
                                                   fs.coordinates[k], fs.name),
                    "one coordinate per port, each its own", fmt::format("ports {} and {}", j + 1, k + 1),
                    "two ports that move together are one port: join their bonds at one junction instead");
      if (!fs.ports.empty() && fs.ports.size() != n)
        ThrowAt(fs.where, fs.name, "a storage field names one port per coordinate",
                fmt::format("{} ports", n), fmt::format("{} ports", fs.ports.size()));
      Register(fs.name, fs.where, {"storage field '{}'", fs.name}, fs.name);
      StorageField f;
      f.name = fs.name;
      f.kind = fs.kind == "IF" ? ElementKind::kI : ElementKind::kC;
      f.where = fs.where;
      for (size_t k = 0; k < n; ++k) {
        const std::string port = fs.ports.empty() ? fmt::format("{}_{}", fs.name, k + 1) : fs.ports[k];
        CheckNameLength(port, fs.where, fs.name, "port name");
        Register(port, fs.where, {"port {} of storage field '{}'", std::to_string(k + 1), fs.name}, fs.name);
        Element e;
        e.name = port;
        e.kind = f.kind;
        e.form = LawForm::kField;
        e.law = 0;
        e.law_key = fs.kind == "IF" ? "inertia" : "energy";
        e.law_text = fmt::format("port {} of {} field {}", k + 1, fs.kind == "IF" ? "I" : "C", fs.name);
        e.where = fs.where;
        e.field = static_cast<int>(m_.fields.size());
        e.field_port = static_cast<int>(k);
        element_index_[port] = static_cast<int>(m_.elements.size());
        f.ports.push_back(static_cast<int>(m_.elements.size()));
        m_.elements.push_back(std::move(e));
      }
      m_.fields.push_back(std::move(f));
    }
  }

  // An I field's coordinates: a displacement of each port's flow, declared
  // under `displacements:` (of the port, its bond or the 1-junction it joins)
  // or else made here (starting at 0).
  void BuildFieldCoordinates() {
    for (size_t fi = 0; fi < spec_.fields.size(); ++fi) {
      const auto& fs = spec_.fields[fi];
      StorageField& f = m_.fields[fi];
      if (f.kind != ElementKind::kI) continue;
      for (size_t k = 0; k < fs.coordinates.size(); ++k) {
        const std::string& c = fs.coordinates[k];
        const Element& port = m_.elements[f.ports[k]];
        if (port.bonds.size() != 1) continue;  // ValidateModel has said so
        const Bond& b = m_.bonds[port.bonds[0]];
        const Element& other = m_.elements[b.from == f.ports[k] ? b.to : b.from];
        const Displacement* found = nullptr;
        for (const auto& d : m_.displacements)
          if (d.name == c) found = &d;
        if (found) {
          if (found->of != port.name && found->of != b.name && !(found->of == other.name && other.kind == ElementKind::kOne))
            ThrowAt(found->where, fs.name,
                    fmt::format("coordinate '{}' of I field '{}' integrates '{}', not the flow of port '{}'", c, fs.name,
                                found->of.empty() ? "its own rate" : found->of, port.name),
                    fmt::format("of: {} (or its bond {}{})", port.name, b.name,
                                other.kind == ElementKind::kOne ? ", or the 1-junction " + other.name : ""),
                    found->of.empty() ? "rate: ..." : "of: " + found->of,
                    "an I field's kinetic energy depends on the configuration of its own ports");
          continue;
        }
        if (owner_.count(c))
          ThrowAt(fs.where, fs.name, fmt::format("coordinate '{}' of I field '{}' is already the name of {}", c, fs.name,
                                                 owner_.at(c).Text()),
                  "a new name, or a displacement of the port's flow", c);
        CheckNameLength(c, fs.where, fs.name, "coordinate name");
        if (!IsIdentifier(c))
          ThrowAt(fs.where, fs.name, fmt::format("coordinate name '{}' is not an identifier", c),
                  "letters, digits and underscores", c);
        Register(c, fs.where, {"coordinate {} of I field '{}'", std::to_string(k + 1), fs.name}, fs.name);
        Displacement d;
        d.name = c;
        d.of = port.name;
        d.where = fs.where;
        d.initial = 0;
        d.rate = m_.Symbol("f_" + port.name);
        NewSymbol(c);
        m_.displacements.push_back(std::move(d));
      }
    }
  }

  // A C field's coordinates are its ports' displacements q_<port>: each
  // coordinate is a definition of the model, equal to its port's state.
  void BuildFieldCoordinateDefinitions() {
    for (size_t fi = 0; fi < spec_.fields.size(); ++fi) {
      const auto& fs = spec_.fields[fi];
      const StorageField& f = m_.fields[fi];
      if (f.kind != ElementKind::kC) continue;
      for (size_t k = 0; k < fs.coordinates.size(); ++k) {
        const std::string& c = fs.coordinates[k];
        CheckNameLength(c, fs.where, fs.name, "coordinate name");
        if (!IsIdentifier(c))
          ThrowAt(fs.where, fs.name, fmt::format("coordinate name '{}' is not an identifier", c),
                  "letters, digits and underscores", c);
        Register(c, fs.where, {"coordinate {} of C field '{}'", std::to_string(k + 1), fs.name}, fs.name);
        NewSymbol(c);
        const std::string q = "q_" + m_.elements[f.ports[k]].name;
        // Appended after the definitions written (BuildDefinitions pairs those with the spec's).
        field_definitions_.push_back({c, m_.Symbol(q), q, fs.where});
      }
    }
  }

  // The fields' laws: the inertia matrix (an I field) or the energy (a C
  // field), of the field's own coordinates and the parameters only; and the
  // ports' initial states.
  void ParseFields() {
    for (size_t fi = 0; fi < spec_.fields.size(); ++fi) {
      const auto& fs = spec_.fields[fi];
      StorageField& f = m_.fields[fi];
      const size_t n = fs.coordinates.size();
      std::set<std::string> allowed = constants_;
      for (const auto& c : fs.coordinates) {
        allowed.insert(c);
        f.coordinates.push_back(m_.Symbol(c));
      }
      allowed_desc_ = "the field's coordinates and parameters only";
      allowed_hint_ = fmt::format("a storage field's law is a function of its own coordinates ({})",
                                  fmt::format("{}", fmt::join(fs.coordinates, ", ")));
      GiNaC::exmap at = m_.ParameterValues();
      if (f.kind == ElementKind::kI) {
        if (!fs.inertia_value && fs.inertia.size() != n)
          ThrowAt(fs.where, fs.name, "the inertia matrix has one row per port", fmt::format("{0} x {0}", n),
                  fmt::format("{} rows", fs.inertia.size()));
        f.inertia.assign(n, std::vector<GiNaC::ex>(n));
        for (size_t i = 0; i < n; ++i)
          for (size_t j = 0; j < n; ++j) {
            const std::string what = fmt::format("entry ({}, {}) of the inertia matrix of I field '{}'", i + 1, j + 1,
                                                 fs.name);
            if (fs.inertia_value) {
              f.inertia[i][j] = Adopt((*fs.inertia_value)[i][j], fs.where, fs.name, what, &allowed);
            } else {
              if (fs.inertia[i].size() != n)
                ThrowAt(fs.where, fs.name, "the inertia matrix has one row per port", fmt::format("{0} x {0}", n),
                        fmt::format("row {} with {} entries", i + 1, fs.inertia[i].size()));
              f.inertia[i][j] = Parse(fs.inertia[i][j], fs.where, fs.name, what, {}, &allowed);
            }
          }
        for (size_t i = 0; i < n; ++i)
          for (size_t j = 0; j < i; ++j)
            if (!(f.inertia[i][j] - f.inertia[j][i]).expand().normal().is_zero())
              ThrowAt(fs.where, fs.name, fmt::format("the inertia matrix of I field '{}' is not symmetric", fs.name),
                      fmt::format("entry ({0}, {1}) equal to entry ({1}, {0})", i + 1, j + 1),
                      fmt::format("{} and {}", ExpressionText(f.inertia[i][j]), ExpressionText(f.inertia[j][i])),
                      "a kinetic co-energy v^T M v / 2 has a symmetric matrix");
        // Positive definite at the start (Cholesky, with the coordinates' initial values).
        for (const auto& d : m_.displacements)
          for (const auto& c : f.coordinates)
            if (d.name == c.get_name()) at[c] = GiNaC::evalf(d.initial.subs(m_.ParameterValues()));
        std::vector<double> a(n * n);
        bool numeric = true;
        for (size_t i = 0; i < n; ++i)
          for (size_t j = 0; j < n; ++j) {
            const GiNaC::ex v = GiNaC::evalf(f.inertia[i][j].subs(at));
            if (!GiNaC::is_a<GiNaC::numeric>(v) || !GiNaC::ex_to<GiNaC::numeric>(v).is_real()) numeric = false;
            else a[i * n + j] = GiNaC::ex_to<GiNaC::numeric>(v).to_double();
          }
        bool definite = numeric;
        for (size_t j = 0; j < n && definite; ++j) {
          double d = a[j * n + j];
          for (size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
          if (!(d > 0)) {
            definite = false;
            break;
          }
          a[j * n + j] = std::sqrt(d);
          for (size_t i = j + 1; i < n; ++i) {
            double s = a[i * n + j];
            for (size_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = s / a[j * n + j];
          }
        }
        if (!definite)
          ThrowAt(fs.where, fs.name,
                  fmt::format("the inertia matrix of I field '{}' is not positive definite at the start", fs.name),
                  "a positive definite matrix (every motion of the ports has kinetic energy)",
                  numeric ? "a matrix with a non-positive pivot" : "entries that are not finite numbers",
                  "check the entries and the coordinates' initial values");
      } else {
        // The coordinates are the ports' states (definitions q_<port>).
        GiNaC::exmap to_states;
        for (size_t k = 0; k < n; ++k) to_states[f.coordinates[k]] = m_.Symbol("q_" + m_.elements[f.ports[k]].name);
        f.energy = Parse(fs.energy, fs.where, fs.name, fmt::format("the energy of C field '{}'", fs.name), {}, &allowed)
                       .subs(to_states);
      }
      if (!fs.initial.empty() || !fs.initial_value.empty()) {
        const size_t given = fs.initial_value.empty() ? fs.initial.size() : fs.initial_value.size();
        if (given != n)
          ThrowAt(fs.where, fs.name, "a storage field's initial values are one per port", fmt::format("{} values", n),
                  fmt::format("{} values", given));
        for (size_t k = 0; k < n; ++k) {
          Element& port = m_.elements[f.ports[k]];
          port.initial = ParseConstant(fs.initial_value.empty() ? fs.initial[k] : "", fs.where, fs.name,
                                       fmt::format("the initial value of port '{}'", port.name),
                                       fs.initial_value.empty() ? std::nullopt : std::optional<GiNaC::ex>(fs.initial_value[k]));
        }
      }
    }
  }

  void BuildBonds() {
    std::set<std::string> given;
    for (const auto& b : spec_.bonds)
      if (!b.name.empty()) given.insert(b.name);
    int auto_index = 0;
    std::vector<std::string> element_names;
    for (const auto& e : m_.elements) element_names.push_back(e.name);
    for (const auto& bs : spec_.bonds) {
      Bond b;
      b.name = bs.name;
      if (b.name.empty()) {
        do b.name = fmt::format("b{}", ++auto_index);
        while (given.count(b.name) || owner_.count(b.name));
      } else {
        CheckNameLength(b.name, bs.where, "", "bond name");
        if (!IsIdentifier(b.name))
          ThrowAt(bs.where, "", fmt::format("bond name '{}' is not an identifier", b.name),
                  "letters, digits and underscores", b.name);
      }
      Register(b.name, bs.where, {"bond '{}'", b.name});
      for (const auto* end : {&bs.from, &bs.to}) {
        if (end->size() > kMaxNameLength)  // (the message formed only when it is needed)
          CheckNameLength(*end, bs.where, "", fmt::format("the element named by bond '{}'", b.name));
        if (FindElement(*end) < 0) {
          ThrowAtBond(bs.where, b.name, fmt::format("bond refers to an unknown element '{}'", *end),
                      "the name of an element declared under 'elements:'", fmt::format("'{}'", *end),
                      DidYouMean(*end, element_names));
        }
      }
      b.from = FindElement(bs.from);  // (found above)
      b.to = FindElement(bs.to);
      b.dim = bs.dim;
      b.where = bs.where;
      b.origin = bs.origin;
      b.component = bs.component;
      if (b.from == b.to) {
        ThrowAtBond(bs.where, b.name, fmt::format("bond connects element '{}' to itself", bs.from),
                    "two different elements", fmt::format("from: {}, to: {}", bs.from, bs.to));
      }
      const int index = static_cast<int>(m_.bonds.size());
      m_.elements[b.from].bonds.push_back(index);
      m_.elements[b.to].bonds.push_back(index);
      bond_index_[b.name] = index;
      m_.bonds.push_back(std::move(b));
    }
  }

  void RegisterVariables() {
    for (const auto& b : m_.bonds) {
      Register("e_" + b.name, b.where, {"the effort of bond '{}'", b.name});
      Register("f_" + b.name, b.where, {"the flow of bond '{}'", b.name});
      NewSymbol("e_" + b.name);
      NewSymbol("f_" + b.name);
    }
    for (const auto& e : m_.elements) {
      if (IsOnePort(e.kind) || e.kind == ElementKind::kOne)
        Register("f_" + e.name, e.where, {"the flow of element '{}'", e.name}, e.name);
      if (IsOnePort(e.kind) || e.kind == ElementKind::kZero)
        Register("e_" + e.name, e.where, {"the effort of element '{}'", e.name}, e.name);
      if (e.kind == ElementKind::kI) Register("p_" + e.name, e.where, {"the momentum of '{}'", e.name}, e.name);
      if (e.kind == ElementKind::kC)
        Register("q_" + e.name, e.where, {"the displacement of '{}'", e.name}, e.name);
    }
    // Port variables of one-ports and junction variables are the variables of a
    // bond: they share its symbol, so every expression sees one variable.
    for (const auto& e : m_.elements) {
      if (IsOnePort(e.kind)) {
        const Bond& b = m_.bonds[e.bonds[0]];
        m_.symbols.emplace("e_" + e.name, m_.Symbol("e_" + b.name));
        m_.symbols.emplace("f_" + e.name, m_.Symbol("f_" + b.name));
      } else if (e.kind == ElementKind::kOne) {
        m_.symbols.emplace("f_" + e.name, m_.Symbol("f_" + m_.bonds[e.bonds[0]].name));
      } else if (e.kind == ElementKind::kZero) {
        m_.symbols.emplace("e_" + e.name, m_.Symbol("e_" + m_.bonds[e.bonds[0]].name));
      }
      if (e.kind == ElementKind::kI) NewSymbol("p_" + e.name);
      if (e.kind == ElementKind::kC) NewSymbol("q_" + e.name);
    }
  }

  void BuildDisplacements() {
    for (const auto& ds : spec_.displacements) {
      CheckNameLength(ds.name, ds.where, "", "displacement name");
      if (!IsIdentifier(ds.name))
        ThrowAt(ds.where, "", fmt::format("displacement name '{}' is not an identifier", ds.name),
             "letters, digits and underscores", ds.name);
      Register(ds.name, ds.where, {"displacement '{}'", ds.name});
      if (ds.of.empty()) {  // `rate:` is parsed below, once every symbol exists
        Displacement d;
        d.name = ds.name;
        d.where = ds.where;
        d.initial = 0;
        NewSymbol(ds.name);
        m_.displacements.push_back(std::move(d));
        continue;
      }
      // `of` names a 1-junction, a one-port element or a bond.
      int ei = FindElement(ds.of);
      int bi = FindBond(ds.of);
      bool ok = bi >= 0 || (ei >= 0 && (IsOnePort(m_.elements[ei].kind) || m_.elements[ei].kind == ElementKind::kOne));
      if (!ok) {
        std::vector<std::string> cands;
        for (const auto& e : m_.elements)
          if (IsOnePort(e.kind) || e.kind == ElementKind::kOne) cands.push_back(e.name);
        for (const auto& b : m_.bonds) cands.push_back(b.name);
        std::string got = ei >= 0 ? fmt::format("'{}', a {} element", ds.of, KindName(m_.elements[ei].kind))
                                  : fmt::format("'{}', which is not declared", ds.of);
        std::string hint = ei >= 0 ? "integrate the flow of a 1-junction or of a bond" : DidYouMean(ds.of, cands);
        ThrowAt(ds.where, "", fmt::format("displacement '{}' integrates the flow of '{}'", ds.name, ds.of),
             "a 1-junction, a one-port element or a bond", got, hint);
      }
      Displacement d;
      d.name = ds.name;
      d.of = ds.of;
      d.where = ds.where;
      d.initial = 0;
      d.rate = m_.Symbol("f_" + ds.of);
      NewSymbol(ds.name);
      m_.displacements.push_back(std::move(d));
    }
  }

  // The definitions in an order where each follows those it uses (as
  // written wherever that holds): a parent's expression may use a submodel's
  // block output, and blocks may be written in any order. Definitions that use
  // each other in a cycle are an algebraic loop of signals: an error naming it.
  std::vector<size_t> DefinitionOrder() const {
    const auto& defs = spec_.definitions;
    std::map<std::string, size_t> index;
    for (size_t k = 0; k < defs.size(); ++k) index.emplace(defs[k].name, k);
    std::vector<std::vector<size_t>> uses(defs.size());
    for (size_t k = 0; k < defs.size(); ++k) {
      auto add = [&](const std::string& n) {
        if (auto it = index.find(n); it != index.end()) uses[k].push_back(it->second);
      };
      if (defs[k].value && defs[k].text.empty()) {
        for (auto it = defs[k].value->preorder_begin(); it != defs[k].value->preorder_end(); ++it)
          if (GiNaC::is_a<GiNaC::symbol>(*it)) add(GiNaC::ex_to<GiNaC::symbol>(*it).get_name());
      } else {
        MapNames(defs[k].text, [&](const std::string& n, bool call) {
          if (!call) add(n);
          return n;
        });
      }
    }
    std::vector<size_t> order;
    std::vector<int> state(defs.size(), 0);  // 0 new, 1 on the path, 2 placed
    std::vector<size_t> path;
    std::function<void(size_t)> visit = [&](size_t k) {
      if (state[k] == 2) return;
      if (state[k] == 1) {
        std::string chain;
        const auto from = std::find(path.begin(), path.end(), k);
        for (auto it = from; it != path.end(); ++it) chain += defs[*it].name + " -> ";
        chain += defs[k].name;
        ThrowAt(defs[k].where, defs[k].name, "an algebraic loop of signals",
                "signals that reach each other only through a state (an integrator, a transfer function with no "
                "feedthrough, a filtered derivative, a storage element)",
                chain,
                "put a block with a state into the loop, or write the loop as an element's law, which paynter "
                "solves as an algebraic equation");
      }
      state[k] = 1;
      path.push_back(k);
      for (size_t u : uses[k])
        if (u != k) visit(u);
      path.pop_back();
      state[k] = 2;
      order.push_back(k);
    };
    for (size_t k = 0; k < defs.size(); ++k) visit(k);
    return order;
  }

  void BuildDefinitions() {
    // A block's outputs (and the definitions made of them) are signals that
    // may drive an Se or Sf, as a function of time does.
    for (const auto& o : BlockSignals(spec_)) constants_and_time_.insert(o);
    const std::vector<size_t> order = DefinitionOrder();
    for (size_t k : order) {
      const auto& d = spec_.definitions[k];
      CheckNameLength(d.name, d.where, "", "definition name");
      if (!IsIdentifier(d.name))
        ThrowAt(d.where, "", fmt::format("definition name '{}' is not an identifier", d.name),
             "letters, digits and underscores", d.name);
      const GiNaC::ex value = Read(d.value, d.text, d.where, "", fmt::format("definition '{}'", d.name));
      Register(d.name, d.where, {"definition '{}'", d.name});
      NewSymbol(d.name);
      // A function of time and parameters (a signal) may drive an Se or Sf.
      bool of_time = true;
      for (auto it = value.preorder_begin(); it != value.preorder_end() && of_time; ++it)
        if (GiNaC::is_a<GiNaC::symbol>(*it)) {
          const std::string& n = GiNaC::ex_to<GiNaC::symbol>(*it).get_name();
          of_time = (!n.empty() && n[0] == '[') || constants_and_time_.count(n);
        }
      if (of_time) constants_and_time_.insert(d.name);
      m_.definitions.push_back({d.name, value, d.value && d.text.empty() ? ExpressionText(*d.value) : d.text, d.where});
    }
    // Closed-form rates, once every definition is known (a rotation matrix
    // entry's rate names the other entries).
    for (size_t i = 0; i < order.size(); ++i)
      if (const auto& d = spec_.definitions[order[i]]; d.rate)
        m_.definitions[i].rate = Adopt(*d.rate, d.where, "", fmt::format("the rate of definition '{}'", d.name));
    for (const auto& b : spec_.blocks) {
      Block block{b.name, b.type, {}, b.outputs, b.where};
      for (const auto& in : b.inputs)
        block.inputs.push_back(Parse(in, b.where, b.name, fmt::format("an input of block '{}'", b.name), {}));
      m_.blocks.push_back(std::move(block));
    }
  }

  void ParseDisplacementValues() {
    // Initial values may use parameters only; rates any variable.
    for (size_t i = 0; i < spec_.displacements.size(); ++i) {  // then the fields' own coordinates (from 0)
      const auto& ds = spec_.displacements[i];
      if (!ds.rate.empty() || ds.rate_value)
        m_.displacements[i].rate =
            Read(ds.rate_value, ds.rate, ds.where, "", fmt::format("the rate of displacement '{}'", ds.name));
      if (!ds.initial.empty() || ds.initial_value)
        m_.displacements[i].initial = ParseConstant(
            ds.initial, ds.where, "", fmt::format("the initial value of displacement '{}'", ds.name), ds.initial_value);
      if (!ds.position.empty() || ds.position_value) {
        m_.displacements[i].position = Read(ds.position_value, ds.position, ds.where, "",
                                            fmt::format("the position form of displacement '{}'", ds.name));
        m_.displacements[i].period = ds.period;
      }
    }
    // The states an assembly holds: displacements and storage states.
    for (const auto& name : spec_.assembly_held) {
      bool state = false;
      for (const auto& d : m_.displacements) state = state || d.name == name;
      for (const auto& e : m_.elements)
        state = state || (e.kind == ElementKind::kI && name == "p_" + e.name) ||
                (e.kind == ElementKind::kC && name == "q_" + e.name);
      // Lagrange forms: the generalized velocities v_<junction> are states too.
      for (const auto& g : spec_.generalized) state = state || name == "v_" + g.name;
      for (const auto& g : spec_.quasi_velocities) state = state || name == "v_" + g.name;
      if (!state) {
        std::vector<std::string> states;
        for (const auto& d : m_.displacements) states.push_back(d.name);
        for (const auto& e : m_.elements)
          if (IsStorage(e.kind)) states.push_back((e.kind == ElementKind::kI ? "p_" : "q_") + e.name);
        ThrowAt(spec_.file.empty() ? SourceLocation{} : SourceLocation{spec_.file, 0, 0}, "",
                fmt::format("'assembly_held' lists '{}', which is not a state", name), "a displacement, p_<I>, q_<C> or v_<generalized junction>",
                name, DidYouMean(name, states));
      }
    }
    m_.assembly_held = spec_.assembly_held;
    m_.assemble = spec_.assemble;
  }

  GiNaC::ex ParseConstant(const std::string& text, const SourceLocation& where, const std::string& element,
                          const std::string& what, const std::optional<GiNaC::ex>& value = std::nullopt) {
    allowed_desc_ = "numbers and parameters only";
    allowed_hint_ = "initial values and constant moduli are evaluated once, before the simulation starts";
    return Read(value, text, where, element, what, &constants_);
  }

  void ParseLaws() {
    for (size_t i = 0; i < spec_.elements.size(); ++i) {  // then the fields' ports (ParseFields)
      Element& e = m_.elements[i];
      const auto& es = spec_.elements[i];
      const std::string kind = KindName(e.kind);
      std::vector<std::string> keys;  // allowed law keys for this kind
      switch (e.kind) {
        case ElementKind::kSe: case ElementKind::kMSe: keys = {"effort", "constraint"}; break;
        case ElementKind::kSf: case ElementKind::kMSf: keys = {"flow"}; break;
        case ElementKind::kI: keys = {"inertance", "flow"}; break;
        case ElementKind::kC: keys = {"capacitance", "stiffness", "effort"}; break;
        case ElementKind::kR: keys = {"resistance", "effort", "flow", "coulomb", "diode"}; break;
        case ElementKind::kTF: case ElementKind::kMTF: case ElementKind::kGY: case ElementKind::kMGY:
          keys = {"ratio"}; break;
        case ElementKind::kZero: case ElementKind::kOne: keys = {}; break;
      }
      std::string key_list;
      for (const auto& k : keys) key_list += (key_list.empty() ? "" : ", ") + k;
      if (IsJunction(e.kind)) {
        if (!es.laws.empty())
          ThrowAt(es.where, e.name, fmt::format("a junction has no constitutive law, but '{}' was given", es.laws[0].first),
               "only name and kind", es.laws[0].first, "remove the key");
        if (!es.initial.empty())
          ThrowAt(es.where, e.name, "a junction has no initial value", "no 'initial:'", es.initial);
        continue;
      }
      if (es.laws.size() != 1)
        ThrowAt(es.where, e.name, fmt::format("a {} element needs exactly one constitutive law", kind),
             fmt::format("one of: {}", key_list), es.laws.empty() ? "none" : fmt::format("{} laws", es.laws.size()));
      const auto& [key, text] = es.laws[0];
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        ThrowAt(es.where, e.name, fmt::format("'{}' is not a law of a {} element", key, kind),
             fmt::format("one of: {}", key_list), key);
      e.law_key = key;
      e.law_text = es.law_value && text.empty() ? ExpressionText(*es.law_value) : text;
      std::map<std::string, GiNaC::ex> locals;
      const std::string what = fmt::format("the {} of {} '{}'", key, kind, e.name);
      if (key == "inertance" || key == "capacitance" || key == "resistance" || key == "ratio") e.form = LawForm::kLinear;
      else if (key == "stiffness") e.form = LawForm::kStiffness;
      else if (key == "effort") e.form = LawForm::kEffort;
      else if (key == "constraint") e.form = LawForm::kConstraint;
      else if (key == "coulomb") e.form = LawForm::kCoulomb;
      else if (key == "diode") e.form = LawForm::kDiode;
      else e.form = LawForm::kFlow;
      if (!es.static_friction.empty() && e.form != LawForm::kCoulomb)
        ThrowAt(es.where, e.name, "'static:' belongs to Coulomb friction", "an R element with 'coulomb:'",
                fmt::format("a {} element with '{}:'", kind, key), "remove 'static:', or give the element 'coulomb:'");
      // Local names for nonlinear laws: the element's own state or port variable.
      if (e.kind == ElementKind::kI && key == "flow") locals["p"] = m_.Symbol("p_" + e.name);
      if (e.kind == ElementKind::kC && key == "effort") locals["q"] = m_.Symbol("q_" + e.name);
      if (e.kind == ElementKind::kR && key == "effort") locals["f"] = m_.Symbol("f_" + e.name);
      if (e.kind == ElementKind::kR && key == "flow") locals["e"] = m_.Symbol("e_" + e.name);
      if ((e.kind == ElementKind::kSe && key != "constraint") || e.kind == ElementKind::kSf ||
          e.kind == ElementKind::kTF || e.kind == ElementKind::kGY) {
        // Unmodulated elements: time (sources) and parameters only.
        const std::string mod = "M" + kind;
        allowed_desc_ = IsSource(e.kind) ? "time t, parameters and signals (definitions of t, outputs of blocks) only" : "parameters only (a constant)";
        allowed_hint_ = fmt::format("use an {} element for a law that depends on model variables", mod);
        const std::set<std::string>* allowed = IsSource(e.kind) ? &constants_and_time_ : &constants_;
        e.law = es.law_value ? Adopt(*es.law_value, es.where, e.name, what, allowed)
                             : Parse(text, es.where, e.name, what, locals, allowed);
      } else {
        e.law =
            es.law_value ? Adopt(*es.law_value, es.where, e.name, what) : Parse(text, es.where, e.name, what, locals);
      }
      if (e.form == LawForm::kCoulomb || e.form == LawForm::kDiode) {
        // Switched elements (docs/events.md): constant laws, checked like moduli.
        allowed_desc_ = "parameters only (a constant)";
        allowed_hint_ = "the friction forces and the forward voltage are constants";
        e.law = es.law_value ? Adopt(*es.law_value, es.where, e.name, what, &constants_)
                             : Parse(text, es.where, e.name, what, {}, &constants_);
        if (e.form == LawForm::kCoulomb)
          e.static_limit = es.static_friction.empty()
                               ? e.law
                               : Parse(es.static_friction, es.where, e.name,
                                       fmt::format("the static friction of R '{}'", e.name), {}, &constants_);
      }
      e.joint = es.joint.empty() ? e.name : es.joint;
      e.direction = es.direction;
      for (const auto& [key, given] : {std::pair{"joint", &es.joint}, std::pair{"direction", &es.direction},
                                       std::pair{"parasitic_stiffness", &es.parasitic_stiffness},
                                       std::pair{"parasitic_damping", &es.parasitic_damping}})
        if (!given->empty() && e.form != LawForm::kConstraint)
          ThrowAt(es.where, e.name, fmt::format("'{}:' belongs to a constraint source", key),
                  "an Se element with 'constraint:'", fmt::format("a {} element", kind),
                  fmt::format("remove '{}:'", key));
      if (!es.position.empty() || es.position_value) {
        if (e.form != LawForm::kConstraint)
          ThrowAt(es.where, e.name, "'position:' belongs to a constraint source", "an Se element with 'constraint:'",
                  fmt::format("a {} element{}", kind, e.kind == ElementKind::kSe ? " with '" + key + ":'" : ""),
                  "remove 'position:', or give the element 'constraint: 0'");
        e.position = Read(es.position_value, es.position, es.where, e.name,
                          fmt::format("the position constraint of '{}'", e.name));
        e.position_text = es.position.empty() ? ExpressionText(*es.position_value) : es.position;
      }
      if (!es.initial.empty() || es.initial_value) {
        if (!IsStorage(e.kind))
          ThrowAt(es.where, e.name, fmt::format("a {} element has no state, so no initial value", kind),
               "'initial:' on C and I elements only", es.initial, "remove 'initial:'");
        e.initial = ParseConstant(es.initial, es.where, e.name, fmt::format("the initial value of '{}'", e.name),
                                  es.initial_value);
      }
    }
  }

  void BuildOutputs() {
    for (const auto& o : spec_.outputs) {
      CheckNameLength(o.name, o.where, "", "output name");
      if (!IsIdentifier(o.name))
        ThrowAt(o.where, "", fmt::format("output name '{}' is not an identifier", o.name),
             "letters, digits and underscores (it becomes a CSV column)", o.name);
      if (o.name == "t") ThrowAt(o.where, "", "an output may not be named 't'", "another name", "t", "t is always column 1");
      for (const auto& prev : m_.outputs)
        if (prev.name == o.name)
          ThrowAt(o.where, "", fmt::format("duplicate output '{}'", o.name), "each output named once", o.name,
               fmt::format("the first is at {}", prev.where.ToString()));
      Output out;
      out.name = o.name;
      out.where = o.where;
      out.value = Read(o.value, o.text, o.where, "", fmt::format("output '{}'", o.name));
      out.text = o.value && o.text.empty() ? ExpressionText(*o.value) : o.text;
      out.unit = o.unit;
      m_.outputs.push_back(std::move(out));
    }
  }

  // Events (docs/events.md): a condition, resets of states, a stop.
  void BuildEvents() {
    for (size_t k = 0; k < spec_.events.size(); ++k) {
      const auto& es = spec_.events[k];
      Event ev;
      ev.name = es.name.empty() ? fmt::format("event{}", k + 1) : es.name;
      ev.where = es.where;
      ev.when_text = es.when;
      ev.stop = es.stop;
      if (!IsIdentifier(ev.name))
        ThrowAt(es.where, "", fmt::format("event name '{}' is not an identifier", ev.name),
                "letters, digits and underscores", ev.name);
      for (const auto& prev : m_.events)
        if (prev.name == ev.name)
          ThrowAt(es.where, "", fmt::format("duplicate event '{}'", ev.name), "each event named once", ev.name,
                  fmt::format("the first is at {}", prev.where.ToString()));
      const std::string what = fmt::format("the condition of event '{}'", ev.name);
      if (es.when.empty())
        ThrowAt(es.where, "", fmt::format("event '{}' has no condition", ev.name), "when: <condition>, e.g. when: x < 0",
                "no 'when:'");
      ev.indicator = Parse(es.when, es.where, "", what, {}, nullptr, &ev.strict);
      if (es.resets.empty() && !es.stop)
        ThrowAt(es.where, "", fmt::format("event '{}' does nothing", ev.name), "'reset:' of states, or 'stop: true'",
                "neither", "an event changes states (reset:) or ends the run (stop: true)");
      for (const auto& r : es.resets) {
        bool is_state = false;
        for (const auto& e : m_.elements)
          is_state = is_state || (e.kind == ElementKind::kI && r.name == "p_" + e.name) ||
                     (e.kind == ElementKind::kC && r.name == "q_" + e.name);
        for (const auto& d : m_.displacements) is_state = is_state || d.name == r.name;
        if (!is_state) {
          std::vector<std::string> states;
          for (const auto& e : m_.elements)
            if (e.kind == ElementKind::kI || e.kind == ElementKind::kC)
              states.push_back((e.kind == ElementKind::kI ? "p_" : "q_") + e.name);
          for (const auto& d : m_.displacements) states.push_back(d.name);
          ThrowAt(r.where, "", fmt::format("event '{}' resets '{}', which is not a state", ev.name, r.name),
                  "p_<I>, q_<C> or a displacement", r.name, DidYouMean(r.name, states));
        }
        for (const auto& prev : ev.resets)
          if (prev.state == r.name)
            ThrowAt(r.where, "", fmt::format("event '{}' resets '{}' twice", ev.name, r.name), "each state once",
                    r.name);
        Event::Reset reset;
        reset.state = r.name;
        reset.text = r.text;
        reset.where = r.where;
        reset.value = Parse(r.text, r.where, "", fmt::format("the reset of '{}' in event '{}'", r.name, ev.name));
        ev.resets.push_back(std::move(reset));
      }
      m_.events.push_back(std::move(ev));
    }
  }

  void BuildCoordinates() {
    auto junctions = [&](const std::vector<ModelSpec::Item>& items, const char* key, std::vector<int>* out) {
      std::vector<std::string> ones;
      for (const auto& e : m_.elements)
        if (e.kind == ElementKind::kOne) ones.push_back(e.name);
      for (const auto& it : items) {
        const int i = FindElement(it.name);
        if (i < 0 || m_.elements[i].kind != ElementKind::kOne)
          ThrowAt(it.where, it.name, fmt::format("'{}' lists '{}', which is not a 1-junction", key, it.name),
               "the name of a 1-junction whose flow is a generalized velocity",
               i < 0 ? "an undeclared name" : "a " + KindName(m_.elements[i].kind) + " element", DidYouMean(it.name, ones));
        if (std::find(out->begin(), out->end(), i) != out->end())
          ThrowAt(it.where, it.name, fmt::format("'{}' lists '{}' twice", key, it.name), "each junction once", it.name);
        out->push_back(i);
      }
    };
    junctions(spec_.generalized, "generalized", &m_.generalized);
    junctions(spec_.independent, "independent", &m_.independent);
    junctions(spec_.quasi_velocities, "quasi_velocities", &m_.quasi_velocities);
    for (size_t k = 0; k < m_.independent.size(); ++k)
      if (!m_.generalized.empty() &&
          std::find(m_.generalized.begin(), m_.generalized.end(), m_.independent[k]) == m_.generalized.end())
        ThrowAt(spec_.independent[k].where, spec_.independent[k].name, "an independent coordinate must also be generalized",
             "a name listed under 'generalized:'", spec_.independent[k].name, "add it to 'generalized:'");
  }

  // Model::FindElement and FindBond search; these look up (a model may have
  // hundreds of thousands of elements).
  std::vector<Definition> field_definitions_;  // C fields' coordinates (BuildFieldCoordinateDefinitions)
  int FindElement(const std::string& name) const {
    auto it = element_index_.find(name);
    return it == element_index_.end() ? -1 : it->second;
  }
  int FindBond(const std::string& name) const {
    auto it = bond_index_.find(name);
    return it == bond_index_.end() ? -1 : it->second;
  }

  const ModelSpec& spec_;
  Model m_;
  std::unordered_map<std::string, int> element_index_, bond_index_;
  std::unordered_map<std::string, What> owner_;  // global name -> what it names
  std::string allowed_desc_, allowed_hint_;
  // The names a constant may use (parameters, pi), and those and t (sources).
  std::set<std::string> constants_, constants_and_time_;
  // The units in brackets met so far, by name ("[m/s^2]"), and their scales.
  std::map<std::string, GiNaC::symbol> unit_symbols_;
  GiNaC::exmap unit_scales_;
  int reading_parameter_ = -1;  // the index of the parameter being read, while parameters are read
};

}  // namespace

Model BuildModel(const ModelSpec& spec) { return Builder(spec).Build(); }

Model BuildModelTopology(const ModelSpec& spec) { return Builder(spec).BuildTopology(); }

std::string ExpressionText(const GiNaC::ex& e) {
  std::ostringstream os;
  os << e;
  return os.str();
}

}  // namespace paynter
