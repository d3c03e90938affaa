// tests/fmi_importer_description.cc — modelDescription.xml read (a small XML
// reader) and checked against the FMI 2.0 standard's rules (fmi_importer.h).
#include "fmi_importer.h"

namespace fmi_import {

namespace {

// ---- a small XML reader: elements and attributes (what modelDescription.xml uses) ----

struct Node {
  std::string name;
  std::map<std::string, std::string> attr;
  std::vector<Node> children;
  std::vector<const Node*> All(const std::string& n) const {
    std::vector<const Node*> out;
    for (const Node& c : children)
      if (c.name == n) out.push_back(&c);
    return out;
  }
  const Node* First(const std::string& n) const {
    for (const Node& c : children)
      if (c.name == n) return &c;
    return nullptr;
  }
  bool Has(const std::string& a) const { return attr.count(a) > 0; }
  std::string Get(const std::string& a) const { return Has(a) ? attr.at(a) : ""; }
};

class XmlReader {
 public:
  explicit XmlReader(std::string text) : s_(std::move(text)) {}
  Node Document() {
    SkipMisc();
    Node root = Element();
    SkipMisc();
    if (i_ != s_.size()) throw std::runtime_error("text after the root element");
    return root;
  }

 private:
  void SkipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void SkipMisc() {  // declarations, comments, whitespace
    for (;;) {
      SkipSpace();
      if (s_.compare(i_, 2, "<?") == 0) {
        i_ = s_.find("?>", i_);
        if (i_ == std::string::npos) throw std::runtime_error("unterminated <?");
        i_ += 2;
      } else if (s_.compare(i_, 4, "<!--") == 0) {
        i_ = s_.find("-->", i_);
        if (i_ == std::string::npos) throw std::runtime_error("unterminated comment");
        i_ += 3;
      } else {
        return;
      }
    }
  }
  std::string Name() {
    const size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == ':' ||
                              s_[i_] == '-' || s_[i_] == '.'))
      ++i_;
    if (b == i_) throw std::runtime_error("name expected at " + std::to_string(i_));
    return s_.substr(b, i_ - b);
  }
  static std::string Decode(const std::string& v) {
    std::string out;
    for (size_t k = 0; k < v.size(); ++k) {
      if (v[k] == '<') throw std::runtime_error("'<' in an attribute");
      if (v[k] != '&') {
        out += v[k];
        continue;
      }
      const size_t e = v.find(';', k);
      if (e == std::string::npos) throw std::runtime_error("bad entity");
      const std::string ent = v.substr(k + 1, e - k - 1);
      const std::map<std::string, char> known = {{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
      if (!known.count(ent)) throw std::runtime_error("unknown entity &" + ent + ";");
      out += known.at(ent);
      k = e;
    }
    return out;
  }
  Node Element() {
    if (s_[i_] != '<') throw std::runtime_error("'<' expected");
    ++i_;
    Node n;
    n.name = Name();
    for (;;) {
      SkipSpace();
      if (s_.compare(i_, 2, "/>") == 0) {
        i_ += 2;
        return n;
      }
      if (s_[i_] == '>') {
        ++i_;
        break;
      }
      const std::string a = Name();
      SkipSpace();
      if (s_[i_++] != '=') throw std::runtime_error("'=' expected");
      SkipSpace();
      const char q = s_[i_++];
      const size_t e = s_.find(q, i_);
      if ((q != '"' && q != '\'') || e == std::string::npos) throw std::runtime_error("bad attribute value");
      if (n.attr.count(a)) throw std::runtime_error("attribute " + a + " twice");
      n.attr[a] = Decode(s_.substr(i_, e - i_));
      i_ = e + 1;
    }
    for (;;) {
      SkipMisc();
      if (s_.compare(i_, 2, "</") == 0) {
        i_ += 2;
        if (Name() != n.name) throw std::runtime_error("mismatched end tag of " + n.name);
        SkipSpace();
        if (s_[i_++] != '>') throw std::runtime_error("'>' expected");
        return n;
      }
      if (i_ >= s_.size()) throw std::runtime_error("unterminated element " + n.name);
      if (s_[i_] == '<') {
        n.children.push_back(Element());
      } else {
        while (i_ < s_.size() && s_[i_] != '<') ++i_;  // text: not used in a model description
      }
    }
  }
  std::string s_;
  size_t i_ = 0;
};

// ---- the standard's rules for a model description (FMI 2.0, section 2.2) ----

// Which values of `initial` a causality/variability combination allows (the
// first is the default); none: the combination is not allowed. Empty string:
// no initial attribute may be given.
std::vector<std::string> AllowedInitial(const std::string& c, const std::string& v) {
  const std::vector<std::string> A = {"exact"}, B = {"calculated", "approx"}, C = {"calculated", "exact", "approx"},
                                 none = {""};
  if (v == "constant") return c == "output" || c == "local" ? A : std::vector<std::string>{};
  if (v == "fixed" || v == "tunable") {
    if (c == "parameter") return A;
    if (c == "calculatedParameter" || c == "local") return B;
    return {};
  }
  if (v == "discrete" || v == "continuous") {
    if (c == "input") return none;
    if (c == "output" || c == "local") return C;
    if (c == "independent" && v == "continuous") return none;
    return {};
  }
  return {};
}

}  // namespace

// Reads and checks a model description; every violation is a test failure.
Description CheckModelDescription(const std::string& xml) {
  Description d;
  Node root;
  try {
    root = XmlReader(xml).Document();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "modelDescription.xml is not well-formed: " << e.what();
    return d;
  }
  EXPECT_EQ(root.name, "fmiModelDescription");
  EXPECT_EQ(root.Get("fmiVersion"), "2.0");
  d.guid = root.Get("guid");
  d.model_name = root.Get("modelName");
  EXPECT_FALSE(d.guid.empty());
  EXPECT_FALSE(root.Get("modelName").empty());
  d.num_event_indicators = root.Has("numberOfEventIndicators") ? std::stoi(root.Get("numberOfEventIndicators")) : 0;
  EXPECT_GE(d.num_event_indicators, 0);
  if (const Node* me = root.First("ModelExchange")) d.identifier_me = me->Get("modelIdentifier");
  if (const Node* cs = root.First("CoSimulation")) d.identifier_cs = cs->Get("modelIdentifier");
  EXPECT_TRUE(!d.identifier_me.empty() || !d.identifier_cs.empty());
  for (const Node* kind : {root.First("ModelExchange"), root.First("CoSimulation")}) {
    if (!kind) continue;
    if (const Node* files = kind->First("SourceFiles"))
      for (const Node* file : files->All("File")) d.source_files.insert(file->Get("name"));
    EXPECT_EQ(kind->Get("canGetAndSetFMUstate"), "false");
    EXPECT_EQ(kind->Get("providesDirectionalDerivative"), "false");
  }
  if (const Node* ud = root.First("UnitDefinitions"))
    for (const Node* u : ud->All("Unit")) {
      UnitDefinition def;
      if (const Node* b = u->First("BaseUnit"))
        for (const auto& [k, v] : b->attr) def.base[k] = std::stoi(v);
      for (const Node* du : u->All("DisplayUnit"))
        def.display[du->Get("name")] = du->Has("factor") ? std::stod(du->Get("factor")) : 1.0;
      EXPECT_TRUE(d.units.emplace(u->Get("name"), def).second) << "unit " << u->Get("name") << " twice";
    }
  const Node* mv = root.First("ModelVariables");
  if (!mv) {
    ADD_FAILURE() << "no ModelVariables";
    return d;
  }
  std::set<std::string> names;
  std::set<unsigned> vrs;
  for (const Node* sv : mv->All("ScalarVariable")) {
    Variable v;
    v.name = sv->Get("name");
    v.vr = static_cast<unsigned>(std::stoul(sv->Get("valueReference")));
    v.causality = sv->Has("causality") ? sv->Get("causality") : "local";
    v.variability = sv->Has("variability") ? sv->Get("variability") : "continuous";
    v.description = sv->Get("description");
    EXPECT_TRUE(names.insert(v.name).second) << "name " << v.name << " twice";
    EXPECT_TRUE(vrs.insert(v.vr).second) << "value reference " << v.vr << " twice among the Real variables";
    EXPECT_EQ(sv->children.size(), 1u) << v.name << ": one type element";
    const Node* real = sv->First("Real");
    EXPECT_NE(real, nullptr) << v.name;
    const std::vector<std::string> allowed = AllowedInitial(v.causality, v.variability);
    EXPECT_FALSE(allowed.empty()) << v.name << ": causality " << v.causality << " with variability " << v.variability
                                  << " is not allowed";
    if (allowed.empty()) continue;
    v.initial = sv->Has("initial") ? sv->Get("initial") : allowed[0];
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), v.initial), allowed.end())
        << v.name << ": initial " << v.initial << " not allowed for " << v.causality << "/" << v.variability;
    if (real) {
      v.has_start = real->Has("start");
      if (v.has_start) v.start = std::stod(real->Get("start"));
      if (real->Has("derivative")) v.derivative = std::stoi(real->Get("derivative"));
      v.unit = real->Get("unit");
      v.display_unit = real->Get("displayUnit");
      if (!v.unit.empty()) {
        EXPECT_TRUE(d.units.count(v.unit)) << v.name << ": unit " << v.unit << " is not defined";
      }
      if (!v.display_unit.empty()) {
        EXPECT_FALSE(v.unit.empty()) << v.name;
        EXPECT_TRUE(d.units.count(v.unit) && d.units.at(v.unit).display.count(v.display_unit))
            << v.name << ": display unit " << v.display_unit << " is not one of " << v.unit << "'s";
      }
      const bool needs_start = v.initial == "exact" || v.initial == "approx" || v.causality == "input";
      const bool no_start = v.initial == "calculated" || v.causality == "independent";
      if (needs_start) {
        EXPECT_TRUE(v.has_start) << v.name << " needs a start value";
      }
      if (no_start) {
        EXPECT_FALSE(v.has_start) << v.name << " may not have a start value";
      }
    }
    d.vr_of[v.name] = v.vr;
    d.vars.push_back(v);
  }
  const int n = static_cast<int>(d.vars.size());
  const Node* ms = root.First("ModelStructure");
  if (!ms) {
    ADD_FAILURE() << "no ModelStructure";
    return d;
  }
  auto read = [&](const char* tag, std::vector<int>& into) {
    if (const Node* list = ms->First(tag))
      for (const Node* u : list->All("Unknown")) {
        const int i = std::stoi(u->Get("index"));
        EXPECT_TRUE(i >= 1 && i <= n) << tag << " index " << i;
        into.push_back(i);
      }
    for (size_t k = 1; k < into.size(); ++k) EXPECT_LT(into[k - 1], into[k]) << tag << " in ascending order";
  };
  read("Outputs", d.outputs);
  read("Derivatives", d.derivatives);
  read("InitialUnknowns", d.initial_unknowns);
  // Outputs: exactly the variables with causality output.
  std::vector<int> outputs;
  for (int i = 1; i <= n; ++i)
    if (d.vars[i - 1].causality == "output") outputs.push_back(i);
  EXPECT_EQ(d.outputs, outputs);
  // Derivatives: each has a derivative attribute naming an existing continuous Real state.
  std::vector<int> states;
  for (int i : d.derivatives) {
    if (i < 1 || i > n) continue;
    const Variable& v = d.vars[i - 1];
    EXPECT_GE(v.derivative, 1) << v.name << " lacks the derivative attribute";
    EXPECT_LE(v.derivative, n) << v.name;
    if (v.derivative < 1 || v.derivative > n) continue;
    const Variable& x = d.vars[v.derivative - 1];
    EXPECT_EQ(x.variability, "continuous") << x.name;
    EXPECT_EQ(v.variability, "continuous") << v.name;
    states.push_back(v.derivative);
  }
  EXPECT_EQ(std::set<int>(states.begin(), states.end()).size(), states.size()) << "a state with two derivatives";
  // InitialUnknowns: outputs, derivatives and states with initial approx or calculated, and calculated parameters.
  std::vector<int> initial;
  for (int i = 1; i <= n; ++i) {
    const Variable& v = d.vars[i - 1];
    const bool listed = std::find(d.derivatives.begin(), d.derivatives.end(), i) != d.derivatives.end() ||
                        std::find(states.begin(), states.end(), i) != states.end() || v.causality == "output";
    if ((listed && (v.initial == "approx" || v.initial == "calculated")) || v.causality == "calculatedParameter")
      initial.push_back(i);
  }
  EXPECT_EQ(d.initial_unknowns, initial);
  return d;
}

}  // namespace fmi_import
