// Units, domains and the dimensional check of a model (paynter/units.h).
#include "paynter/units.h"

#include <fmt/format.h>

#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "model_internal.h"

namespace paynter {

Dimension Dimension::operator*(const Dimension& o) const {
  Dimension r;
  for (int i = 0; i < 7; ++i) r.e[i] = e[i] + o.e[i];
  return r;
}
Dimension Dimension::operator/(const Dimension& o) const {
  Dimension r;
  for (int i = 0; i < 7; ++i) r.e[i] = e[i] - o.e[i];
  return r;
}
bool Dimension::dimensionless() const {
  for (int x : e)
    if (x) return false;
  return true;
}

namespace {

enum Base { kKg, kM, kS, kA, kK, kMol, kCd };

Dimension Dim(std::initializer_list<std::pair<Base, int>> exps) {
  Dimension d;
  for (const auto& [b, x] : exps) d.e[b] = 6 * x;
  return d;
}

Dimension Power(const Dimension& d, int num, int den, bool* ok) {
  Dimension r;
  *ok = true;
  for (int i = 0; i < 7; ++i) {
    const long v = static_cast<long>(d.e[i]) * num;
    if (v % den != 0) *ok = false;
    r.e[i] = static_cast<int>(v / den);
  }
  return r;
}

struct UnitDef {
  Dimension dim;
  GiNaC::ex scale;
  bool prefixable;
};

const Dimension kNewton = Dim({{kKg, 1}, {kM, 1}, {kS, -2}});
const Dimension kJoule = Dim({{kKg, 1}, {kM, 2}, {kS, -2}});
const Dimension kWatt = Dim({{kKg, 1}, {kM, 2}, {kS, -3}});
const Dimension kVolt = Dim({{kKg, 1}, {kM, 2}, {kS, -3}, {kA, -1}});
const Dimension kPascal = Dim({{kKg, 1}, {kM, -1}, {kS, -2}});

const std::map<std::string, UnitDef>& UnitTable() {
  using GiNaC::numeric;
  static const std::map<std::string, UnitDef> t = [] {
    std::map<std::string, UnitDef> u;
    const Dimension one;
    u["m"] = {Dim({{kM, 1}}), 1, true};
    u["g"] = {Dim({{kKg, 1}}), numeric(1, 1000), true};
    u["s"] = {Dim({{kS, 1}}), 1, true};
    u["A"] = {Dim({{kA, 1}}), 1, true};
    u["K"] = {Dim({{kK, 1}}), 1, true};
    u["mol"] = {Dim({{kMol, 1}}), 1, true};
    u["cd"] = {Dim({{kCd, 1}}), 1, false};
    u["rad"] = {one, 1, true};
    u["sr"] = {one, 1, false};
    u["N"] = {kNewton, 1, true};
    u["J"] = {kJoule, 1, true};
    u["W"] = {kWatt, 1, true};
    u["Pa"] = {kPascal, 1, true};
    u["V"] = {kVolt, 1, true};
    u["C"] = {Dim({{kA, 1}, {kS, 1}}), 1, true};
    const Dimension ohm = kVolt / Dim({{kA, 1}});
    u["Ohm"] = {ohm, 1, true};
    u["ohm"] = {ohm, 1, true};
    u["\xCE\xA9"] = {ohm, 1, true};  // Ω
    u["S"] = {Dimension() / ohm, 1, true};
    u["F"] = {Dim({{kA, 1}, {kS, 1}}) / kVolt, 1, true};
    u["H"] = {kVolt * Dim({{kS, 1}, {kA, -1}}), 1, true};
    u["Wb"] = {kVolt * Dim({{kS, 1}}), 1, true};
    u["T"] = {kVolt * Dim({{kS, 1}, {kM, -2}}), 1, true};
    u["Hz"] = {Dim({{kS, -1}}), 1, true};
    u["L"] = {Dim({{kM, 3}}), numeric(1, 1000), true};
    u["l"] = {Dim({{kM, 3}}), numeric(1, 1000), true};
    u["bar"] = {kPascal, 100000, true};
    u["min"] = {Dim({{kS, 1}}), 60, false};
    u["h"] = {Dim({{kS, 1}}), 3600, false};
    u["deg"] = {one, GiNaC::Pi / 180, false};
    u["rpm"] = {Dim({{kS, -1}}), 2 * GiNaC::Pi / 60, false};
    return u;
  }();
  return t;
}

const std::vector<std::pair<std::string, GiNaC::ex>>& Prefixes() {
  using GiNaC::numeric;
  static const std::vector<std::pair<std::string, GiNaC::ex>> p = {
      {"T", numeric(1000000000000L)}, {"G", numeric(1000000000)}, {"M", numeric(1000000)}, {"k", numeric(1000)},
      {"h", numeric(100)},           {"da", numeric(10)},         {"d", numeric(1, 10)},    {"c", numeric(1, 100)},
      {"m", numeric(1, 1000)},       {"u", numeric(1, 1000000)},  {"\xC2\xB5", numeric(1, 1000000)},
      {"n", numeric(1, 1000000000)}, {"p", numeric(1, 1000000000000L)}, {"f", numeric(1, 1000000000000000L)}};
  return p;
}

std::optional<UnitDef> LookUp(const std::string& name) {
  const auto& t = UnitTable();
  if (auto it = t.find(name); it != t.end()) return it->second;
  for (const auto& [p, s] : Prefixes()) {
    if (name.size() <= p.size() || name.compare(0, p.size(), p) != 0) continue;
    auto it = t.find(name.substr(p.size()));
    if (it != t.end() && it->second.prefixable) return UnitDef{it->second.dim, s * it->second.scale, false};
  }
  return std::nullopt;
}

bool UnitNameByte(unsigned char c) { return std::isalpha(c) || c >= 0x80; }

// A recursive-descent reader of unit texts (depth bounded by the text's
// parentheses, which CheckExpressionText's limits bound in a file).
class UnitReader {
 public:
  explicit UnitReader(const std::string& s) : s_(s) {}
  std::optional<Unit> Read(std::string* why) {
    try {
      Skip();
      Unit u = Product(0);
      Skip();
      if (i_ != s_.size()) Fail(fmt::format("unexpected '{}'", s_.substr(i_, 1)));
      return u;
    } catch (const std::invalid_argument& e) {
      if (why) *why = e.what();
      return std::nullopt;
    }
  }

 private:
  [[noreturn]] void Fail(const std::string& m) { throw std::invalid_argument(m); }
  void Skip() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  bool AtFactorStart() const {
    if (i_ >= s_.size()) return false;
    const unsigned char c = s_[i_];
    return UnitNameByte(c) || c == '(' || c == '1';
  }
  Unit Product(int depth) {
    if (depth > 20) Fail("too deeply nested");
    Unit u = Factor(depth);
    for (;;) {
      Skip();
      if (i_ >= s_.size()) return u;
      bool divide = false;
      if (s_[i_] == '/') {
        divide = true;
        ++i_;
      } else if (s_[i_] == '*' || s_[i_] == '.') {
        ++i_;
      } else if (s_.compare(i_, 2, "\xC2\xB7") == 0) {  // middle dot
        i_ += 2;
      } else if (!AtFactorStart()) {
        return u;
      }
      Skip();
      const Unit f = Factor(depth);
      u.dim = divide ? u.dim / f.dim : u.dim * f.dim;
      u.scale = divide ? u.scale / f.scale : u.scale * f.scale;
    }
  }
  Unit Factor(int depth) {
    Skip();
    Unit u;
    if (i_ < s_.size() && s_[i_] == '(') {
      ++i_;
      u = Product(depth + 1);
      Skip();
      if (i_ >= s_.size() || s_[i_] != ')') Fail("a '(' is not closed");
      ++i_;
    } else if (i_ < s_.size() && s_[i_] == '1') {
      ++i_;
    } else {
      const size_t start = i_;
      while (i_ < s_.size() && UnitNameByte(static_cast<unsigned char>(s_[i_]))) ++i_;
      if (i_ == start) Fail(i_ < s_.size() ? fmt::format("unexpected '{}'", s_.substr(i_, 1)) : "a unit is missing");
      const std::string name = s_.substr(start, i_ - start);
      const auto def = LookUp(name);
      if (!def) Fail(fmt::format("unknown unit '{}'", name));
      u.dim = def->dim;
      u.scale = def->scale;
    }
    if (i_ < s_.size() && s_[i_] == '^') {
      ++i_;
      int num = 0, den = 1;
      if (i_ < s_.size() && s_[i_] == '(') {
        ++i_;
        num = Integer();
        if (i_ >= s_.size() || s_[i_] != '/') Fail("an exponent in parentheses is a fraction, such as (1/2)");
        ++i_;
        den = Integer();
        if (den <= 0) Fail("a zero denominator");
        if (i_ >= s_.size() || s_[i_] != ')') Fail("a '(' is not closed");
        ++i_;
      } else {
        num = Integer();
      }
      bool ok = true;
      u.dim = Power(u.dim, num, den, &ok);
      if (!ok) Fail("the exponent leaves a fractional power of a base unit");
      u.scale = GiNaC::pow(u.scale, GiNaC::numeric(num, den));
    }
    return u;
  }
  int Integer() {
    bool neg = false;
    if (i_ < s_.size() && (s_[i_] == '-' || s_[i_] == '+')) neg = s_[i_++] == '-';
    const size_t start = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])) && i_ - start < 3) ++i_;
    if (i_ == start) Fail("an exponent is an integer");
    const int v = std::stoi(s_.substr(start, i_ - start));
    return neg ? -v : v;
  }
  const std::string& s_;
  size_t i_ = 0;
};

// A unit's display names, preferred to base units.
const std::vector<std::pair<std::string, Dimension>>& Named() {
  static const std::vector<std::pair<std::string, Dimension>> n = [] {
    std::vector<std::pair<std::string, Dimension>> v;
    for (const char* name : {"N", "V", "A", "Pa", "W", "K", "kg", "m", "s", "F", "H", "Ohm", "C", "Wb", "T"}) {
      if (std::string(name) == "kg") {
        v.emplace_back(name, Dim({{kKg, 1}}));
        continue;
      }
      v.emplace_back(name, UnitTable().at(name).dim);
    }
    v.emplace_back("N m", kJoule);
    v.emplace_back("m/s", Dim({{kM, 1}, {kS, -1}}));
    v.emplace_back("1/s", Dim({{kS, -1}}));
    v.emplace_back("m^3/s", Dim({{kM, 3}, {kS, -1}}));
    v.emplace_back("kg m^2", Dim({{kKg, 1}, {kM, 2}}));
    v.emplace_back("N/m", kNewton / Dim({{kM, 1}}));
    v.emplace_back("N s/m", kNewton * Dim({{kS, 1}, {kM, -1}}));
    v.emplace_back("N m s", kJoule * Dim({{kS, 1}}));
    v.emplace_back("N s", kNewton * Dim({{kS, 1}}));
    v.emplace_back("m/N", Dim({{kM, 1}}) / kNewton);
    v.emplace_back("V s", kVolt * Dim({{kS, 1}}));
    v.emplace_back("J/K", kJoule / Dim({{kK, 1}}));
    v.emplace_back("K/W", Dim({{kK, 1}}) / kWatt);
    v.emplace_back("m^3", Dim({{kM, 3}}));
    v.emplace_back("m/s^2", Dim({{kM, 1}, {kS, -2}}));
    return v;
  }();
  return n;
}

}  // namespace

std::optional<Unit> ParseUnit(const std::string& text, std::string* why) {
  if (text.size() > 200) {
    if (why) *why = "a unit of more than 200 characters";
    return std::nullopt;
  }
  return UnitReader(text).Read(why);
}

std::string DimensionText(const Dimension& d) {
  if (d.dimensionless()) return "1";
  for (const auto& [name, dim] : Named())
    if (dim == d) return name;
  static const char* names[] = {"kg", "m", "s", "A", "K", "mol", "cd"};
  std::string out;
  for (int i = 0; i < 7; ++i) {
    if (!d.e[i]) continue;
    out += out.empty() ? "" : " ";
    out += names[i];
    if (d.e[i] == 6) continue;
    out += d.e[i] % 6 == 0 ? fmt::format("^{}", d.e[i] / 6) : fmt::format("^({}/6)", d.e[i]);
  }
  return out;
}

const std::vector<Domain>& Domains() {
  static const std::vector<Domain> d = {
      {"electrical", kVolt, Dim({{kA, 1}})},
      {"translational", kNewton, Dim({{kM, 1}, {kS, -1}})},
      {"rotational", kJoule, Dim({{kS, -1}})},
      {"hydraulic", kPascal, Dim({{kM, 3}, {kS, -1}})},
      {"thermal", Dim({{kK, 1}}), kWatt},
  };
  return d;
}

void SplitUnit(const std::string& text, std::string* expression, std::string* unit, const SourceLocation& where,
               const std::string& what, bool after_name) {
  *expression = text;
  unit->clear();
  int depth = 0;
  std::string first_failure, failed_word;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c != ' ' || depth != 0) continue;
    if (text.size() - i > 400) continue;  // a unit is at most 200 characters: only the text's end can hold one
    size_t a = i;
    while (a > 0 && text[a - 1] == ' ') --a;
    size_t b = i;
    while (b < text.size() && text[b] == ' ') ++b;
    if (a == 0 || b == text.size()) continue;
    if (text.size() - b > 200) continue;  // no unit is that long (and no text is copied per blank)
    const unsigned char before = text[a - 1], after = text[b];
    // A parameter's unit follows a number or a closing parenthesis: after a
    // name, a blank and a word are two names ("m g" is no product, and an
    // error). An output's unit may follow a name ("q_spring mm").
    size_t start = a;
    while (start > 0 && (std::isalnum(static_cast<unsigned char>(text[start - 1])) || text[start - 1] == '_' ||
                         text[start - 1] == '.'))
      --start;
    const unsigned char first = text[start];
    const bool ends_operand =
        before == ')' || (start < a && (after_name || std::isdigit(first) || first == '.'));
    if (!ends_operand || !(UnitNameByte(after) || after == '1')) continue;
    const std::string rest = text.substr(b);
    std::string why;
    if (ParseUnit(rest, &why)) {
      *expression = text.substr(0, a);
      *unit = rest;
      return;
    }
    if (first_failure.empty()) {
      first_failure = why;
      failed_word = rest;
    }
    i = b - 1;
  }
  if (!first_failure.empty()) {
    std::vector<std::string> names;
    for (const auto& [n, u] : UnitTable()) names.push_back(n);
    std::string word = failed_word;
    const auto sp = word.find_first_of(" */^()");
    if (sp != std::string::npos) word = word.substr(0, sp);
    std::string hint = DidYouMean(word, names);
    if (hint.empty()) hint = "units are listed in docs/model-format.md (\"Units and domains\"); a product needs '*'";
    ThrowAt(where, "", fmt::format("{}: '{}' is not a unit, and an expression cannot go on after a blank", what,
                                   failed_word),
            "an expression, optionally followed by a unit: '9.81 m/s^2'", fmt::format("'{}' ({})", text, first_failure),
            hint);
  }
}

void SplitUnits(ModelSpec* spec) {
  auto scale_text = [](const GiNaC::ex& s) { return ExpressionText(s); };
  for (auto& p : spec->parameters) {
    std::string expr, unit;
    SplitUnit(p.text, &expr, &unit, p.where, fmt::format("parameter '{}'", p.name), false);
    if (unit.empty()) continue;
    const Unit u = *ParseUnit(unit);
    p.unit = unit;
    p.number = IsNumberText(expr);
    p.text = u.scale.is_equal(1) ? expr : fmt::format("({})*({})", expr, scale_text(u.scale));
  }
  for (auto& o : spec->outputs) {
    if (o.value) continue;
    std::string expr, unit;
    SplitUnit(o.text, &expr, &unit, o.where, fmt::format("output '{}'", o.name), true);
    if (unit.empty()) continue;
    const Unit u = *ParseUnit(unit);
    o.unit = unit;
    o.text = u.scale.is_equal(1) ? expr : fmt::format("({})/({})", expr, scale_text(u.scale));
  }
}

// ---- the check ---------------------------------------------------------------

namespace {

// What an expression's dimension is so far.
struct Inferred {
  bool known = false;
  bool number = false;  // a pure number: takes the unit of a sum it is in
  Dimension dim;
};

struct Context {
  SourceLocation where;
  std::string element;
  std::string what;  // "the inertance 'm' of I element 'mass'"
};

class Checker {
 public:
  Checker(const ModelSpec& spec, Model* m) : spec_(spec), m_(*m) {}

  void Run() {
    MapStates();   // first: the units in brackets that parameters may use
    SeedParameters();
    Declared();
    Relations();
    // Propagate to a fixed point. What fixes a unit directly (sources,
    // junctions, domains, outputs) goes first; a law's modulus (an inertance,
    // a ratio) is solved for a bond's unit one at a time, only when nothing
    // else is left, so that a wrong modulus is reported against the domain the
    // rest of the graph gives rather than spreading. Each round assigns at
    // least one unknown or stops.
    for (int round = 0; round < 100000; ++round) {
      bool changed = false;
      for (const auto& r : relations_)
        if (!r.weak) changed = Resolve(r, false) || changed;
      changed = CompleteDomains() || changed;
      if (changed) continue;
      // One-port laws before two-ports' ratios, which carry units across
      // domains, and outputs' units last.
      for (int level = 1; level <= 3 && !changed; ++level)
        for (const auto& r : relations_)
          if (r.weak == level && Resolve(r, false)) {
            changed = true;
            break;
          }
      if (!changed) break;
    }
    for (const auto& r : relations_) Resolve(r, true);
    Record();
    for (auto& b : m_.bonds) {
      const auto e = base_.find("e_" + b.name), f = base_.find("f_" + b.name);
      if (e != base_.end()) b.effort_unit = DimensionText(e->second);
      if (f != base_.end()) b.flow_unit = DimensionText(f->second);
      b.domain = DomainOf(b);
    }
  }

 private:
  // A relation dim(a) == dim(b), or dim(a) == fixed.
  struct Relation {
    GiNaC::ex a, b;
    std::optional<Dimension> fixed;
    Context ctx;
    int bond = -1;  // the bond whose domain the message names, if any
    std::string expected_note;  // how the needed unit follows from the bond ("effort x s / flow")
    int weak = 0;  // solved for a unit only when nothing else is left: 1 a one-port's law, 2 a two-port's, 3 an output
    bool passes_on = false;  // a junction's: it only passes a unit on from one bond to another
  };

  // A symbol whose dimension is another's times a unit: p_I = e * s, ...
  struct Derived {
    std::string base;
    Dimension times;
  };

  void SeedParameters() {
    GiNaC::symtab earlier;
    for (size_t i = 0; i < spec_.parameters.size() && i < m_.parameters.size(); ++i) {
      const auto& p = spec_.parameters[i];
      std::string expr = p.text, unit_text;
      // The dimension of the expression (from earlier parameters) times the unit.
      Inferred d;
      if (!p.unit.empty()) {
        SplitUnitFree(p, &expr);
      }
      try {
        const GiNaC::ex e = ParseExpressionText(expr, [&](const std::string& id) -> GiNaC::ex {
          if (id == "pi" || id == "Pi") return GiNaC::Pi;
          return m_.Symbol(id);
        });
        d = Infer(e, {p.where, "", fmt::format("parameter '{}'", p.name)});
      } catch (const Error&) {
        throw;
      } catch (const std::exception&) {
        d = Inferred{};  // read by BuildModel already: a value formed in code
      }
      if (!p.unit.empty()) {
        const Unit u = *ParseUnit(p.unit);
        if (d.known || d.number) base_[p.name] = (d.number ? Dimension() : d.dim) * u.dim;
      } else if (d.known && !d.number) {
        base_[p.name] = d.dim;
      }
    }
  }

  // The parameter's expression without its SI scale factor (SplitUnits wrote
  // "(expr)*(scale)").
  void SplitUnitFree(const ModelSpec::Item& p, std::string* expr) {
    const Unit u = *ParseUnit(p.unit);
    if (u.scale.is_equal(1)) return;
    const std::string suffix = fmt::format(")*({})", ExpressionText(u.scale));
    if (expr->size() > suffix.size() + 1 && expr->front() == '(' &&
        expr->compare(expr->size() - suffix.size(), suffix.size(), suffix) == 0)
      *expr = expr->substr(1, expr->size() - suffix.size() - 1);
  }

  void MapStates() {
    const Dimension second = Dim({{kS, 1}});
    base_["t"] = second;
    // Constants with a unit in brackets (`9.81 [m/s^2]`): symbols named so.
    for (const auto& [name, s] : m_.symbols)
      if (name.size() > 2 && name[0] == '[') base_[name] = ParseUnit(name.substr(1, name.size() - 2))->dim;
    for (const auto& e : m_.elements) {
      if (e.kind == ElementKind::kI) derived_["p_" + e.name] = {"e_" + m_.bonds[e.bonds[0]].name, second};
      if (e.kind == ElementKind::kC) derived_["q_" + e.name] = {"f_" + m_.bonds[e.bonds[0]].name, second};
    }
    for (const auto& d : m_.displacements) {
      if (!d.of.empty() && GiNaC::is_a<GiNaC::symbol>(d.rate))
        derived_[d.name] = {GiNaC::ex_to<GiNaC::symbol>(d.rate).get_name(), second};
    }
  }

  bool Set(const std::string& name, const Dimension& d) {
    auto dv = derived_.find(name);
    if (dv != derived_.end()) return Set(dv->second.base, d / dv->second.times);
    auto it = base_.find(name);
    if (it != base_.end()) return false;
    base_[name] = d;
    if (origin_now_) origin_[name] = *origin_now_;
    return true;
  }

  // The base name of a symbol (p_I is e x s: its base is e).
  std::string BaseOf(std::string name) const {
    while (derived_.count(name)) name = derived_.at(name).base;
    return name;
  }

  // Where a unit found while resolving `r` comes from: a junction only passes
  // a unit on, so its origin is that of the bond it came from; any other
  // relation is the origin itself.
  const Context* OriginOf(const Relation& r) const {
    if (!r.passes_on) return &r.ctx;
    for (const GiNaC::ex& side : {r.a, r.b})
      for (auto it = side.preorder_begin(); it != side.preorder_end(); ++it)
        if (GiNaC::is_a<GiNaC::symbol>(*it)) {
          const auto o = origin_.find(BaseOf(GiNaC::ex_to<GiNaC::symbol>(*it).get_name()));
          if (o != origin_.end()) return &o->second;
        }
    return &r.ctx;
  }

  // What set the units of the symbols of `r` elsewhere than at r's own
  // element, for a mismatch's hint ("" when nothing did).
  std::string Origins(const Relation& r) const {
    std::set<std::string> seen;
    std::vector<std::string> lines;
    for (const GiNaC::ex& side : {r.a, r.b})
      for (auto it = side.preorder_begin(); it != side.preorder_end(); ++it) {
        if (!GiNaC::is_a<GiNaC::symbol>(*it)) continue;
        const std::string base = BaseOf(GiNaC::ex_to<GiNaC::symbol>(*it).get_name());
        const auto o = origin_.find(base);
        const auto d = Get(base);
        if (o == origin_.end() || !d || o->second.element == r.ctx.element || !seen.insert(base).second) continue;
        const bool bond = base.size() > 2 && (base[0] == 'e' || base[0] == 'f') && base[1] == '_';
        const std::string of = bond ? fmt::format("the {} of bond '{}'", base[0] == 'e' ? "effort" : "flow",
                                                  base.substr(2))
                                    : fmt::format("'{}'", base);
        const std::string line = o->second.where.line > 0 ? fmt::format(" (line {})", o->second.where.line) : "";
        lines.push_back(fmt::format("{} is in {} because of {}{}", of, DimensionText(*d), o->second.what, line));
        if (lines.size() == 2) break;
      }
    std::string out;
    for (const auto& l : lines) out += (out.empty() ? "" : "; ") + l;
    return out;
  }

  std::optional<Dimension> Get(const std::string& name) const {
    auto dv = derived_.find(name);
    if (dv != derived_.end()) {
      auto b = Get(dv->second.base);
      if (!b) return std::nullopt;
      return *b * dv->second.times;
    }
    auto it = base_.find(name);
    if (it == base_.end()) return std::nullopt;
    return it->second;
  }

  std::string DomainOf(const Bond& b) const {
    const auto e = Get("e_" + b.name), f = Get("f_" + b.name);
    for (const auto& d : Domains())
      if ((e && *e == d.effort) && (f && *f == d.flow)) return d.name;
    return "";
  }

  const Domain* FindDomain(const std::string& name) const {
    for (const auto& d : Domains())
      if (d.name == name) return &d;
    return nullptr;
  }

  void Declared() {
    for (size_t i = 0; i < m_.elements.size(); ++i) {
      const Element& e = m_.elements[i];
      if (e.domain.empty()) continue;
      std::vector<std::string> names;
      for (const auto& d : Domains()) names.push_back(d.name);
      std::vector<const Domain*> doms;
      for (const auto& n : e.domain) {
        const Domain* d = FindDomain(n);
        if (!d)
          ThrowAt(e.where, e.name, fmt::format("unknown domain '{}'", n),
                  "electrical, translational, rotational, hydraulic or thermal", n, DidYouMean(n, names));
        doms.push_back(d);
      }
      if (doms.size() > 1 && (doms.size() != 2 || !IsTwoPort(e.kind)))
        ThrowAt(e.where, e.name, "a list of domains gives one per port of a two-port",
                fmt::format("one domain for a {} element", KindName(e.kind)),
                fmt::format("{} domains", doms.size()), "write 'domain: electrical'");
      for (size_t k = 0; k < e.bonds.size(); ++k) {
        const Domain* d = doms.size() == 2 ? doms[PortOf(e, k)] : doms[0];
        const Bond& b = m_.bonds[e.bonds[k]];
        DeclareBond(b, *d, e);
      }
    }
  }

  // Port 0 is the bond pointing at a two-port, port 1 the bond leaving it.
  int PortOf(const Element& e, size_t k) const {
    const int idx = static_cast<int>(&e - m_.elements.data());
    return m_.bonds[e.bonds[k]].to == idx ? 0 : 1;
  }

  void DeclareBond(const Bond& b, const Domain& d, const Element& e) {
    for (const auto& [var, dim] : {std::pair{"e_" + b.name, d.effort}, std::pair{"f_" + b.name, d.flow}}) {
      const auto have = Get(var);
      if (have && *have != dim)
        ThrowAt(e.where, e.name,
                fmt::format("element '{}' declares its bond '{}' {}, but the bond is declared otherwise by another "
                            "element",
                            e.name, b.name, d.name),
                fmt::format("{} (effort {}, flow {})", d.name, DimensionText(d.effort), DimensionText(d.flow)),
                fmt::format("{} {}", var[0] == 'e' ? "effort" : "flow", DimensionText(*have)),
                "the elements a bond joins must agree on its domain; a TF or GY joins two domains");
      Set(var, dim);
    }
  }

  void Add(const GiNaC::ex& a, const GiNaC::ex& b, Context ctx, int bond = -1, std::string note = "",
           int weak = 0) {
    relations_.push_back({a, b, std::nullopt, std::move(ctx), bond, std::move(note), weak});
  }

  void Relations() {
    const GiNaC::ex t = m_.time;
    for (size_t i = 0; i < m_.elements.size(); ++i) {
      const Element& e = m_.elements[i];
      const std::string kind = KindName(e.kind);
      auto E = [&](size_t k) { return GiNaC::ex(m_.Symbol("e_" + m_.bonds[e.bonds[k]].name)); };
      auto F = [&](size_t k) { return GiNaC::ex(m_.Symbol("f_" + m_.bonds[e.bonds[k]].name)); };
      const Context ctx{e.where, e.name,
                        fmt::format("the {} '{}' of {} element '{}'", e.law_key, e.law_text, kind, e.name)};
      if (IsJunction(e.kind)) {
        for (size_t k = 1; k < e.bonds.size(); ++k) {
          const Context jc{e.where, e.name,
                           fmt::format("the bonds '{}' and '{}' of junction '{}'", m_.bonds[e.bonds[0]].name,
                                       m_.bonds[e.bonds[k]].name, e.name)};
          Add(E(0), E(k), jc, -1, "the efforts of a junction's bonds");
          relations_.back().passes_on = true;
          Add(F(0), F(k), jc, -1, "the flows of a junction's bonds");
          relations_.back().passes_on = true;
        }
        continue;
      }
      const int b0 = e.bonds.empty() ? -1 : e.bonds[0];
      if (IsTwoPort(e.kind) && e.bonds.size() == 2) {
        const size_t in = PortOf(e, 0) == 0 ? 0 : 1, out = 1 - in;
        const bool tf = e.kind == ElementKind::kTF || e.kind == ElementKind::kMTF;
        Add(e.law, tf ? E(in) / E(out) : E(in) / F(out), ctx, -1,
            tf ? "effort of port 1 / effort of port 2" : "effort of port 1 / flow of port 2", 2);
        Add(e.law, tf ? F(out) / F(in) : E(out) / F(in), ctx, -1,
            tf ? "flow of port 2 / flow of port 1" : "effort of port 2 / flow of port 1", 2);
        continue;
      }
      if (e.bonds.empty()) continue;
      const int weak = IsSource(e.kind) ? 0 : 1;
      switch (e.form) {
        case LawForm::kLinear:
          if (e.kind == ElementKind::kI) Add(e.law, E(0) * t / F(0), ctx, b0, "effort x s / flow", 1);
          if (e.kind == ElementKind::kC) Add(e.law, F(0) * t / E(0), ctx, b0, "flow x s / effort", 1);
          if (e.kind == ElementKind::kR) Add(e.law, E(0) / F(0), ctx, b0, "effort / flow", 1);
          break;
        case LawForm::kStiffness: Add(e.law, E(0) / (F(0) * t), ctx, b0, "effort / (flow x s)", 1); break;
        case LawForm::kEffort: Add(e.law, E(0), ctx, b0, "the effort", weak); break;
        case LawForm::kFlow: Add(e.law, F(0), ctx, b0, "the flow", weak); break;
        case LawForm::kConstraint: Add(e.law, F(0), ctx, b0, "the flow", weak); break;
        case LawForm::kNone: case LawForm::kField: break;
        // Switched elements (Coulomb friction, ideal diodes): no unit relation
        // is drawn from their laws yet.
        case LawForm::kCoulomb: case LawForm::kDiode: break;
      }
    }
    for (const auto& d : m_.displacements)
      if (d.of.empty())
        Add(m_.Symbol(d.name), d.rate * t, {d.where, "", fmt::format("displacement '{}'", d.name)}, -1,
            "the integral of its rate");
    for (const auto& d : m_.definitions)
      Add(m_.Symbol(d.name), d.value, {d.where, "", fmt::format("definition '{}'", d.name)}, -1, "its expression");
    for (size_t i = 0; i < m_.outputs.size(); ++i) {
      const auto& o = m_.outputs[i];
      const Context ctx{o.where, "", fmt::format("output '{}'", o.name)};
      if (o.unit.empty()) {
        relations_.push_back({o.value, o.value, std::nullopt, ctx, -1, "", 0});  // consistent in itself
        continue;
      }
      const Unit u = *ParseUnit(o.unit);
      // The text became (expr)/(scale): the expression's SI unit is the unit's.
      // Weakest of all: an output shows a unit, and is checked against what
      // the model gives; it fixes a unit only where nothing else does, so that
      // a wrong unit written there is blamed on the output line.
      relations_.push_back({o.value, o.value, u.dim, ctx, -1, "the unit written", 3});
    }
  }

  // Infers the dimension of `e`; throws on a sum of unlike terms or a
  // function of a quantity with a unit.
  Inferred Infer(const GiNaC::ex& e, const Context& ctx) const {
    Inferred r;
    if (GiNaC::is_a<GiNaC::numeric>(e) || GiNaC::is_a<GiNaC::constant>(e)) {
      r.known = true;
      r.number = true;
      return r;
    }
    if (GiNaC::is_a<GiNaC::symbol>(e)) {
      const auto d = Get(GiNaC::ex_to<GiNaC::symbol>(e).get_name());
      if (d) r.known = true, r.dim = *d;
      return r;
    }
    if (GiNaC::is_a<GiNaC::add>(e)) {
      std::optional<std::pair<GiNaC::ex, Dimension>> first;
      bool all_numbers = true, unknown = false;
      for (size_t i = 0; i < e.nops(); ++i) {
        const Inferred t = Infer(e.op(i), ctx);
        if (t.known && t.number) continue;
        all_numbers = false;
        if (!t.known) {
          unknown = true;
          continue;
        }
        if (!first) {
          first = {e.op(i), t.dim};
        } else if (first->second != t.dim) {
          ThrowAt(ctx.where, ctx.element,
                  fmt::format("{}: a sum of terms with different units", ctx.what),
                  fmt::format("'{}' in {}", ExpressionText(first->first), DimensionText(first->second)),
                  fmt::format("'{}' in {}", ExpressionText(e.op(i)), DimensionText(t.dim)),
                  "every term of a sum has the same unit; check the parameters' units");
        }
      }
      if (first) r.known = true, r.dim = first->second;
      else if (all_numbers) r.known = true, r.number = true;
      (void)unknown;
      return r;
    }
    if (GiNaC::is_a<GiNaC::mul>(e)) {
      r.known = true;
      r.number = true;
      for (size_t i = 0; i < e.nops(); ++i) {
        const Inferred t = Infer(e.op(i), ctx);
        if (!t.known) r.known = false;
        r.number = r.number && t.number;
        r.dim = r.dim * t.dim;
      }
      if (!r.known) r.number = false;
      return r;
    }
    if (GiNaC::is_a<GiNaC::power>(e)) {
      const Inferred base = Infer(e.op(0), ctx);
      const GiNaC::ex x = e.op(1);
      if (GiNaC::is_a<GiNaC::numeric>(x) && GiNaC::ex_to<GiNaC::numeric>(x).is_rational()) {
        const GiNaC::numeric q = GiNaC::ex_to<GiNaC::numeric>(x);
        if (!base.known) return r;
        if (base.number) return base;
        bool ok = q.numer().is_integer() && GiNaC::abs(q.numer()) < 1000 && q.denom() < 1000;
        Dimension d;
        if (ok) d = Power(base.dim, q.numer().to_int(), q.denom().to_int(), &ok);
        if (!ok)
          ThrowAt(ctx.where, ctx.element, fmt::format("{}: a power that leaves a fractional unit", ctx.what),
                  "a power whose unit is a whole (or sixth) power of SI units",
                  fmt::format("'{}' with '{}' in {}", ExpressionText(e), ExpressionText(e.op(0)),
                              DimensionText(base.dim)));
        r.known = true;
        r.dim = d;
        return r;
      }
      RequireDimensionless(e.op(0), base, ctx, "the base of a power with a variable exponent");
      RequireDimensionless(x, Infer(x, ctx), ctx, "an exponent");
      r.known = true;
      return r;
    }
    if (GiNaC::is_a<GiNaC::function>(e)) {
      const std::string name = GiNaC::ex_to<GiNaC::function>(e).get_name();
      if (name == "abs") return Infer(e.op(0), ctx);
      if (name == "step") {
        Infer(e.op(0), ctx);
        r.known = true;
        return r;
      }
      if (name == "atan2") {
        const Inferred y = Infer(e.op(0), ctx), x = Infer(e.op(1), ctx);
        if (y.known && x.known && !y.number && !x.number && y.dim != x.dim)
          ThrowAt(ctx.where, ctx.element, fmt::format("{}: atan2 of two quantities with different units", ctx.what),
                  fmt::format("'{}' in {}", ExpressionText(e.op(1)), DimensionText(x.dim)),
                  fmt::format("'{}' in {}", ExpressionText(e.op(0)), DimensionText(y.dim)));
        r.known = true;
        return r;
      }
      static const std::set<std::string> plain = {"sin",  "cos",  "tan",  "asin", "acos", "atan",
                                                  "sinh", "cosh", "tanh", "exp",  "log"};
      if (plain.count(name)) {
        RequireDimensionless(e.op(0), Infer(e.op(0), ctx), ctx, fmt::format("the argument of {}()", name));
        r.known = true;
        return r;
      }
      return r;  // another function: its unit is not known
    }
    return r;
  }

  void RequireDimensionless(const GiNaC::ex& e, const Inferred& d, const Context& ctx, const std::string& what) const {
    if (!d.known || d.number || d.dim.dimensionless()) return;
    ThrowAt(ctx.where, ctx.element, fmt::format("{}: {} has a unit", ctx.what, what), "a number without unit (1)",
            fmt::format("'{}' in {}", ExpressionText(e), DimensionText(d.dim)),
            "write the argument as a ratio of quantities with the same unit (an angular frequency in rad/s or 1/s "
            "times t, say)");
  }

  // The symbols of `e` whose dimension is not known, by their base names.
  std::set<std::string> Unknowns(const GiNaC::ex& e) const {
    std::set<std::string> out;
    for (auto it = e.preorder_begin(); it != e.preorder_end(); ++it) {
      if (!GiNaC::is_a<GiNaC::symbol>(*it)) continue;
      std::string name = GiNaC::ex_to<GiNaC::symbol>(*it).get_name();
      if (Get(name)) continue;
      while (derived_.count(name)) name = derived_.at(name).base;
      out.insert(name);
    }
    return out;
  }

  // Makes dim(e) == target by giving its one unknown symbol a dimension, when
  // e is a product of powers; true when it did.
  bool Solve(const GiNaC::ex& e, const Dimension& target, const Context& ctx) {
    if (GiNaC::is_a<GiNaC::add>(e)) {
      bool changed = false;
      for (size_t i = 0; i < e.nops(); ++i) {
        const Inferred t = Infer(e.op(i), ctx);
        if (!t.known) changed = Solve(e.op(i), target, ctx) || changed;
      }
      return changed;
    }
    std::vector<GiNaC::ex> factors;
    if (GiNaC::is_a<GiNaC::mul>(e))
      for (size_t i = 0; i < e.nops(); ++i) factors.push_back(e.op(i));
    else
      factors.push_back(e);
    Dimension known;
    std::string unknown;
    GiNaC::numeric power = 1;
    for (const auto& f : factors) {
      const Inferred t = Infer(f, ctx);
      if (t.known) {
        known = known * t.dim;
        continue;
      }
      if (!unknown.empty()) return false;
      GiNaC::ex base = f;
      power = 1;
      if (GiNaC::is_a<GiNaC::power>(f) && GiNaC::is_a<GiNaC::numeric>(f.op(1))) {
        base = f.op(0);
        power = GiNaC::ex_to<GiNaC::numeric>(f.op(1));
      }
      if (!GiNaC::is_a<GiNaC::symbol>(base) || !power.is_rational() || power.is_zero()) return false;
      unknown = GiNaC::ex_to<GiNaC::symbol>(base).get_name();
    }
    if (unknown.empty()) return false;
    // unknown^power = target / known
    const GiNaC::numeric inv = GiNaC::numeric(1) / power;
    if (!inv.numer().is_integer() || GiNaC::abs(inv.numer()) > 100 || inv.denom() > 100) return false;
    bool ok = true;
    const Dimension d = Power(target / known, inv.numer().to_int(), inv.denom().to_int(), &ok);
    if (!ok) return false;
    return Set(unknown, d);
  }

  // Both sides' unknowns are the effort and flow of one bond: the domain in
  // which the relation holds, when exactly one does.
  bool SolveByDomain(const Relation& r) {
    std::set<std::string> u = Unknowns(r.a);
    for (const auto& s : Unknowns(r.b)) u.insert(s);
    if (u.empty() || u.size() > 2) return false;
    std::string bond;
    for (const auto& s : u) {
      if (s.size() < 3 || (s[0] != 'e' && s[0] != 'f') || s[1] != '_') return false;
      const std::string b = s.substr(2);
      if (m_.FindBond(b) < 0 || (!bond.empty() && bond != b)) return false;
      bond = b;
    }
    const Domain* found = nullptr;
    int matches = 0;
    for (const auto& d : Domains()) {
      const auto saved = base_;
      Set("e_" + bond, d.effort);
      Set("f_" + bond, d.flow);
      const Inferred a = Infer(r.a, r.ctx), b = r.fixed ? Inferred{true, false, *r.fixed} : Infer(r.b, r.ctx);
      base_ = saved;
      if (a.known && b.known && (a.number || b.number || a.dim == b.dim)) {
        ++matches;
        found = &d;
      }
    }
    if (matches != 1) return false;
    bool changed = Set("e_" + bond, found->effort);
    return Set("f_" + bond, found->flow) || changed;
  }

 public:
  // The dimensions found (FindDimensions).
  const std::map<std::string, Dimension>& dimensions() const { return dimensions_; }

 private:
  void Record() {
    auto keep = [&](const std::string& name, const std::optional<Dimension>& d) {
      if (d) dimensions_[name] = *d;
    };
    for (const auto& p : m_.parameters) keep(p.name, Get(p.name));
    for (const auto& b : m_.bonds) {
      keep("e_" + b.name, Get("e_" + b.name));
      keep("f_" + b.name, Get("f_" + b.name));
    }
    for (const auto& e : m_.elements) {
      if (e.kind == ElementKind::kI) keep("p_" + e.name, Get("p_" + e.name));
      if (e.kind == ElementKind::kC) keep("q_" + e.name, Get("q_" + e.name));
    }
    for (const auto& d : m_.displacements) keep(d.name, Get(d.name));
    for (const auto& o : m_.outputs) {
      const Inferred i = Infer(o.value, {o.where, "", fmt::format("output '{}'", o.name)});
      if (i.known) keep(o.name, i.number ? Dimension() : i.dim);
    }
  }

  // One relation: checked when both sides are known (`final`: always), else
  // solved for an unknown where that is possible. True when a unit was found.
  bool Resolve(const Relation& r, bool final) {
    const Inferred a = Infer(r.a, r.ctx);
    const Inferred b = r.fixed ? Inferred{true, false, *r.fixed} : Infer(r.b, r.ctx);
    if (a.known && b.known) {
      if (a.number || b.number || a.dim == b.dim) return false;
      Mismatch(r, a.dim, b.dim);
    }
    if (final) return false;
    origin_now_ = OriginOf(r);
    const bool found = (a.known && !a.number && Solve(r.b, a.dim, r.ctx)) ||
                       (b.known && !b.number && Solve(r.a, b.dim, r.ctx)) || SolveByDomain(r);
    origin_now_ = nullptr;
    return found;
  }

  [[noreturn]] void Mismatch(const Relation& r, const Dimension& got, const Dimension& need) const {
    std::string on;
    if (r.bond >= 0) {
      const Bond& b = m_.bonds[r.bond];
      const auto e = Get("e_" + b.name), f = Get("f_" + b.name);
      const std::string dom = DomainOf(b);
      on = fmt::format(" on bond '{}' ({}effort {}, flow {})", b.name, dom.empty() ? "" : dom + ": ",
                       e ? DimensionText(*e) : "?", f ? DimensionText(*f) : "?");
    }
    const std::string how = r.expected_note.empty() ? "" : fmt::format(" ({})", r.expected_note);
    if (r.fixed)
      ThrowAt(r.ctx.where, r.ctx.element, fmt::format("{} is in {}, not in the unit written", r.ctx.what,
                                                      DimensionText(got)),
              fmt::format("{} (the unit written)", DimensionText(need)), DimensionText(got),
              "change the unit, or the expression");
    const std::string origins = Origins(r);
    ThrowAt(r.ctx.where, r.ctx.element, fmt::format("{}{}: units do not match", r.ctx.what, on),
            fmt::format("{}{}", DimensionText(need), how), DimensionText(got),
            (origins.empty() ? "" : origins + "; ") +
                (r.bond >= 0 ? "check the units of its parameters and the domain of its bond (`paynter check` lists "
                               "the bonds' domains)"
                             : "check the units of the parameters involved"));
  }

  bool CompleteDomains() {
    bool changed = false;
    for (const auto& b : m_.bonds) {
      const auto e = Get("e_" + b.name), f = Get("f_" + b.name);
      const auto from = origin_.find(BaseOf((e ? "e_" : "f_") + b.name));
      origin_now_ = from == origin_.end() ? nullptr : &from->second;
      if (e && !f) {
        for (const auto& d : Domains())
          if (d.effort == *e) changed = Set("f_" + b.name, d.flow) || changed;
      } else if (f && !e) {
        for (const auto& d : Domains())
          if (d.flow == *f) changed = Set("e_" + b.name, d.effort) || changed;
      }
      origin_now_ = nullptr;
    }
    return changed;
  }

  const ModelSpec& spec_;
  Model& m_;
  std::map<std::string, Dimension> base_;
  std::map<std::string, Derived> derived_;
  std::vector<Relation> relations_;
  std::map<std::string, Dimension> dimensions_;  // Record's
  // What gave each base symbol its unit (the relation, or through junctions
  // the one the unit came from), for the hints of mismatches.
  std::map<std::string, Context> origin_;
  const Context* origin_now_ = nullptr;  // while a relation is resolved
};

}  // namespace

std::string DomainReport(const Model& model) {
  std::map<std::string, std::vector<std::string>> by;
  bool any = false;
  for (const auto& b : model.bonds) {
    const std::string key = !b.domain.empty() ? fmt::format("{} (effort {}, flow {})", b.domain, b.effort_unit, b.flow_unit)
                            : b.effort_unit.empty() && b.flow_unit.empty()
                                ? std::string("unknown")
                                : fmt::format("no domain (effort {}, flow {})", b.effort_unit.empty() ? "?" : b.effort_unit,
                                              b.flow_unit.empty() ? "?" : b.flow_unit);
    any = any || key != "unknown";
    by[key].push_back(b.name);
  }
  if (!any) return "";
  std::string s = "domains of bonds:\n";
  for (const auto& [key, bonds] : by) {
    s += fmt::format("  {}: ", key);
    for (size_t i = 0; i < bonds.size(); ++i) s += (i ? ", " : "") + bonds[i];
    s += "\n";
  }
  return s;
}

namespace {
bool HasUnits(const Model& model) {
  bool any = false;
  for (const auto& p : model.parameters) any = any || !p.unit.empty();
  for (const auto& o : model.outputs) any = any || !o.unit.empty();
  for (const auto& e : model.elements) any = any || !e.domain.empty();
  for (const auto& [name, s] : model.symbols) any = any || name[0] == '[';  // 9.81 [m/s^2]
  return any;
}
}  // namespace

void CheckUnits(const ModelSpec& spec, Model* model) {
  if (HasUnits(*model)) Checker(spec, model).Run();
}

std::map<std::string, Dimension> FindDimensions(const ModelSpec& spec, const Model& model) {
  if (!HasUnits(model)) return {};
  Model copy = model;
  Checker checker(spec, &copy);
  checker.Run();
  return checker.dimensions();
}

}  // namespace paynter
