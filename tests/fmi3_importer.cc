// FMI 3.0 export (`paynter fmu --fmi-version 3`), checked as an importer
// paynter does not write would check it: the FMUs of B1, the bouncing ball,
// the DC motor with an input and the sampled controller are exported once
// each (model exchange and co-simulation in one FMU), unpacked with unzip,
// their modelDescription.xml checked against FMI 3.0's rules, and driven by
// tests/fmi3_master.c, an importer on the standard's own headers
// (tests/fmi3/headers), against `paynter simulate` fed the same signals:
// model exchange integrated by the master's Runge-Kutta with its own state
// event location and the time events the FMU announces, co-simulation by
// fmi3DoStep. The calls a master may get wrong are made through paynter's
// own header (src/fmi/runtime/paynter_fmi3.h) on the shared object loaded
// with dlopen: each returns fmi3Error and logs why.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fmi_test_support.h"
#include "paynter_fmi3.h"

namespace {

using namespace fmi_test;
namespace fs = std::filesystem;

// ---- FMI 3.0's rules for a model description (sections 2.4.7 and 2.4.8) ----

// Which values of `initial` a causality/variability combination allows (the
// first is the default); none: the combination is not allowed. "": no initial
// attribute may be given.
std::vector<std::string> AllowedInitial3(const std::string& c, const std::string& v) {
  const std::vector<std::string> exact = {"exact"}, calc = {"calculated", "approx"},
                                 any = {"calculated", "exact", "approx"}, none = {""};
  if (v == "constant") return c == "output" || c == "local" ? exact : std::vector<std::string>{};
  if (v == "fixed" || v == "tunable") {
    if (c == "parameter" || c == "structuralParameter") return exact;
    if (c == "calculatedParameter" || c == "local") return calc;
    return {};
  }
  if (v == "discrete" || v == "continuous") {
    if (c == "input") return exact;
    if (c == "output" || c == "local") return any;
    if (c == "independent" && v == "continuous") return none;
  }
  return {};
}

struct Variable3 {
  std::string name, causality, variability, initial, unit, display_unit, description;
  unsigned vr = 0;
  bool has_start = false, reinit = false;
  double start = 0;
  long derivative = -1;  // the state's value reference
  unsigned dimension = 0;  // an array's length (its <Dimension start>), 0 for a scalar
};

struct Description3 {
  std::string model_name, token, identifier_me, identifier_cs;
  std::map<std::string, std::string> me, cs;  // the attributes of <ModelExchange>, <CoSimulation>
  std::map<std::string, std::map<std::string, double>> display;  // unit -> display unit -> factor
  std::map<std::string, std::map<std::string, int>> base;         // unit -> BaseUnit exponents
  std::vector<Variable3> vars;
  std::vector<unsigned> outputs, derivatives, initial_unknowns, event_indicators;  // value references
  std::map<std::string, unsigned> vr_of;
  const Variable3* Find(const std::string& name) const {
    for (const Variable3& v : vars)
      if (v.name == name) return &v;
    return nullptr;
  }
  const Variable3* ByVr(unsigned vr) const {
    for (const Variable3& v : vars)
      if (v.vr == vr) return &v;
    return nullptr;
  }
  double DisplayFactor(const std::string& name) const {
    const Variable3* v = Find(name);
    if (!v || v->display_unit.empty()) return 1;
    return display.count(v->unit) && display.at(v->unit).count(v->display_unit) ? display.at(v->unit).at(v->display_unit)
                                                                               : NAN;
  }
};

// Reads and checks a model description; every violation is a test failure.
Description3 CheckModelDescription3(const std::string& xml) {
  Description3 d;
  Node root;
  try {
    root = XmlReader(xml).Document();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "modelDescription.xml is not well-formed: " << e.what();
    return d;
  }
  EXPECT_EQ(root.name, "fmiModelDescription");
  EXPECT_EQ(root.Get("fmiVersion"), "3.0");
  EXPECT_FALSE(root.Has("guid"));
  EXPECT_FALSE(root.Has("numberOfEventIndicators"));  // FMI 2.0's: 3.0 lists the indicators in ModelStructure
  d.token = root.Get("instantiationToken");
  d.model_name = root.Get("modelName");
  EXPECT_FALSE(d.token.empty());
  if (const Node* me = root.First("ModelExchange")) d.me = me->attr, d.identifier_me = me->Get("modelIdentifier");
  if (const Node* cs = root.First("CoSimulation")) d.cs = cs->attr, d.identifier_cs = cs->Get("modelIdentifier");
  EXPECT_TRUE(!d.identifier_me.empty() || !d.identifier_cs.empty());
  for (const auto* kind : {&d.me, &d.cs}) {
    if (kind->empty()) continue;
    EXPECT_EQ(kind->at("canGetAndSetFMUState"), "false");
    EXPECT_EQ(kind->at("providesDirectionalDerivatives"), "false");
  }
  if (!d.cs.empty()) {
    EXPECT_EQ(d.cs.at("hasEventMode"), "false");  // events are handled inside fmi3DoStep
    EXPECT_EQ(d.cs.at("canHandleVariableCommunicationStepSize"), "true");
  }
  if (const Node* ud = root.First("UnitDefinitions"))
    for (const Node* u : ud->All("Unit")) {
      const std::string name = u->Get("name");
      EXPECT_FALSE(d.base.count(name)) << "unit " << name << " twice";
      d.base[name];
      if (const Node* b = u->First("BaseUnit"))
        for (const auto& [k, v] : b->attr) d.base[name][k] = std::stoi(v);
      for (const Node* du : u->All("DisplayUnit"))
        d.display[name][du->Get("name")] = du->Has("factor") ? std::stod(du->Get("factor")) : 1.0;
    }
  const Node* mv = root.First("ModelVariables");
  if (!mv) {
    ADD_FAILURE() << "no ModelVariables";
    return d;
  }
  std::set<std::string> names;
  std::set<unsigned> vrs;
  for (const Node& n : mv->children) {
    EXPECT_EQ(n.name, "Float64") << "paynter's variables are Float64 scalars";
    Variable3 v;
    v.name = n.Get("name");
    v.vr = static_cast<unsigned>(std::stoul(n.Get("valueReference")));
    v.causality = n.Has("causality") ? n.Get("causality") : "local";
    v.variability = n.Has("variability") ? n.Get("variability") : "continuous";
    v.description = n.Get("description");
    v.unit = n.Get("unit");
    v.display_unit = n.Get("displayUnit");
    v.has_start = n.Has("start");
    if (v.has_start) v.start = std::stod(n.Get("start"));
    if (n.Has("derivative")) v.derivative = std::stol(n.Get("derivative"));
    v.reinit = n.Get("reinit") == "true";
    // A scalar, or an array output of one fixed dimension (<Dimension start="n"/>).
    EXPECT_LE(n.children.size(), 1u) << v.name;
    for (const Node& dim : n.children) {
      EXPECT_EQ(dim.name, "Dimension") << v.name;
      EXPECT_TRUE(dim.Has("start") && !dim.Has("valueReference")) << v.name << ": a fixed dimension";
      if (dim.Has("start")) v.dimension = static_cast<unsigned>(std::stoul(dim.Get("start")));
      EXPECT_GE(v.dimension, 2u) << v.name;
      EXPECT_EQ(v.causality, "output") << v.name << ": paynter's arrays are outputs";
    }
    EXPECT_TRUE(names.insert(v.name).second) << "name " << v.name << " twice";
    EXPECT_TRUE(vrs.insert(v.vr).second) << "value reference " << v.vr << " twice";
    const std::vector<std::string> allowed = AllowedInitial3(v.causality, v.variability);
    EXPECT_FALSE(allowed.empty()) << v.name << ": causality " << v.causality << " with variability " << v.variability
                                  << " is not allowed";
    if (allowed.empty()) continue;
    v.initial = n.Has("initial") ? n.Get("initial") : allowed[0];
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), v.initial), allowed.end())
        << v.name << ": initial " << v.initial << " not allowed for " << v.causality << "/" << v.variability;
    if (v.initial == "exact" || v.initial == "approx") {
      EXPECT_TRUE(v.has_start) << v.name << " needs a start value";
    }
    if (v.initial == "calculated" || v.causality == "independent") {
      EXPECT_FALSE(v.has_start) << v.name << " may not have a start value";
    }
    if (!v.unit.empty()) {
      EXPECT_TRUE(d.base.count(v.unit)) << v.name << ": unit " << v.unit << " is not defined";
    }
    if (!v.display_unit.empty()) {
      EXPECT_TRUE(d.display.count(v.unit) && d.display.at(v.unit).count(v.display_unit))
          << v.name << ": display unit " << v.display_unit << " is not one of " << v.unit << "'s";
    }
    d.vr_of[v.name] = v.vr;
    d.vars.push_back(v);
  }
  const Node* ms = root.First("ModelStructure");
  if (!ms) {
    ADD_FAILURE() << "no ModelStructure";
    return d;
  }
  for (const Node& u : ms->children) {
    const unsigned vr = static_cast<unsigned>(std::stoul(u.Get("valueReference")));
    EXPECT_NE(d.ByVr(vr), nullptr) << u.name << " " << vr << " is no variable";
    if (u.name == "Output") d.outputs.push_back(vr);
    else if (u.name == "ContinuousStateDerivative") d.derivatives.push_back(vr);
    else if (u.name == "InitialUnknown") d.initial_unknowns.push_back(vr);
    else if (u.name == "EventIndicator") d.event_indicators.push_back(vr);
    else ADD_FAILURE() << "unexpected " << u.name;
  }
  // Outputs: exactly the variables with causality output, in order.
  std::vector<unsigned> outputs, derivatives, initial, states;
  for (const Variable3& v : d.vars) {
    if (v.causality == "output") outputs.push_back(v.vr);
    if (v.derivative >= 0) derivatives.push_back(v.vr);
  }
  EXPECT_EQ(d.outputs, outputs);
  EXPECT_EQ(d.derivatives, derivatives);
  // Each derivative names a continuous Float64 state; no state has two.
  for (unsigned vr : d.derivatives) {
    const Variable3* der = d.ByVr(vr);
    const Variable3* x = der ? d.ByVr(static_cast<unsigned>(der->derivative)) : nullptr;
    if (!x) {
      ADD_FAILURE() << "no state for derivative " << vr;
      continue;
    }
    EXPECT_EQ(x->variability, "continuous") << x->name;
    EXPECT_EQ(der->variability, "continuous") << der->name;
    states.push_back(x->vr);
  }
  EXPECT_EQ(std::set<unsigned>(states.begin(), states.end()).size(), states.size()) << "a state with two derivatives";
  // reinit only on states.
  for (const Variable3& v : d.vars)
    if (v.reinit) {
      EXPECT_NE(std::find(states.begin(), states.end(), v.vr), states.end()) << v.name;
    }
  // InitialUnknowns: outputs, states and derivatives with initial approx or calculated, calculated parameters.
  for (const Variable3& v : d.vars) {
    const bool listed = v.causality == "output" || v.derivative >= 0 ||
                        std::find(states.begin(), states.end(), v.vr) != states.end();
    if ((listed && (v.initial == "approx" || v.initial == "calculated")) || v.causality == "calculatedParameter")
      initial.push_back(v.vr);
  }
  EXPECT_EQ(d.initial_unknowns, initial);
  // Event indicators: continuous Float64 variables, not among the initial unknowns.
  for (unsigned vr : d.event_indicators) {
    const Variable3* v = d.ByVr(vr);
    if (!v) continue;  // reported above
    EXPECT_EQ(v->variability, "continuous") << v->name;
    EXPECT_EQ(std::find(initial.begin(), initial.end(), vr), initial.end()) << v->name;
  }
  return d;
}

// ---- an exported and unpacked FMU ----

fs::path TestDir(const std::string& name) {
  const fs::path d = fs::path(PAYNTER_BINARY_DIR) / "fmi3_importer" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

struct Unpacked3 {
  fs::path dir;
  Description3 desc;
  std::string so;
};

// FMI 3.0's platform tuple of this machine (section 2.5.1.4).
std::string PlatformTuple() {
#if defined(__x86_64__)
  return "x86_64-linux";
#elif defined(__aarch64__)
  return "aarch64-linux";
#else
  return "";
#endif
}

// Exports `model` with --fmi-version 3 and `options` and unpacks it; the
// checks of the archive, the descriptions and the shared object are made here.
void Export3(const std::string& model, const std::string& options, Unpacked3* u) {
  const std::string name = fs::path(model).stem().string();
  u->dir = TestDir(std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" + name);
  const fs::path fmu = u->dir / (name + ".fmu");
  const Result r = Shell(std::string(PAYNTER_EXE) + " fmu " + Source(model) + " --fmi-version 3 " + options + " -o " +
                         fmu.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("FMI 3.0"), std::string::npos) << r.output;
  const Result z = Shell("cd " + u->dir.string() + " && unzip -q " + fmu.string() + " -d unpacked");
  ASSERT_EQ(z.status, 0) << z.output;
  const fs::path root = u->dir / "unpacked";
  u->desc = CheckModelDescription3(ReadText(root / "modelDescription.xml"));
  // sources/: the core, the FMI 3.0 functions and the model's files; not the FMI 2.0 ones.
  for (const char* f : {"fmu3.c", "paynter_fmi3.h", "pn_core.c", "pn_core.h", "fmu_model.h", "pn_butcher.h", "model.h",
                        "model.c", "rhs.c", "outputs.c", "parameters.c", "events.c", "buildDescription.xml"})
    EXPECT_TRUE(fs::exists(root / "sources" / f)) << f;
  for (const char* f : {"fmu.c", "paynter_fmi2.h"}) EXPECT_FALSE(fs::exists(root / "sources" / f)) << f;
  // buildDescription.xml lists every C file of sources/ for the model identifier.
  Node build;
  try {
    build = XmlReader(ReadText(root / "sources" / "buildDescription.xml")).Document();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "buildDescription.xml: " << e.what();
  }
  EXPECT_EQ(build.Get("fmiVersion"), "3.0");
  std::set<std::string> listed, c_files;
  if (const Node* config = build.First("BuildConfiguration")) {
    EXPECT_EQ(config->Get("modelIdentifier"), u->desc.identifier_me.empty() ? u->desc.identifier_cs : u->desc.identifier_me);
    if (const Node* set = config->First("SourceFileSet"))
      for (const Node* f : set->All("SourceFile")) listed.insert(f->Get("name"));
  }
  for (const auto& entry : fs::directory_iterator(root / "sources"))
    if (entry.path().extension() == ".c") c_files.insert(entry.path().filename().string());
  EXPECT_EQ(listed, c_files);
  // binaries/<platform tuple>/<identifier>.so, which needs libc and libm only and exports the fmi3 functions alone.
  const std::string id = u->desc.identifier_me.empty() ? u->desc.identifier_cs : u->desc.identifier_me;
  ASSERT_FALSE(PlatformTuple().empty()) << "a platform this test does not know";
  u->so = (root / "binaries" / PlatformTuple() / (id + ".so")).string();
  ASSERT_TRUE(fs::exists(u->so)) << u->so;
  const Result needed = Shell("readelf -d " + u->so);
  ASSERT_EQ(needed.status, 0) << needed.output;
  std::istringstream lines(needed.output);
  for (std::string line; std::getline(lines, line);)
    if (line.find("(NEEDED)") != std::string::npos) {
      EXPECT_TRUE(line.find("[libc.so.6]") != std::string::npos || line.find("[libm.so.6]") != std::string::npos)
          << line;
    }
  const Result defined = Shell("nm -D --defined-only " + u->so);
  std::istringstream exported(defined.output);
  int num_exported = 0;
  for (std::string line; std::getline(exported, line);) {
    std::istringstream w(line);
    std::string addr, kind, sym;
    w >> addr >> kind >> sym;
    EXPECT_EQ(sym.rfind("fmi3", 0), 0u) << "exported: " << line;
    ++num_exported;
  }
#define PN_COUNT(name) +1
  EXPECT_EQ(num_exported, 0 PN_FMI3_FUNCTIONS(PN_COUNT)) << "every fmi3 function of the standard";
#undef PN_COUNT
}

// ---- runs of tests/fmi3_master.c ----

struct MasterRun {
  Table first, second;
  std::map<std::string, long> events;  // model exchange: the first run's counts
};

// The outputs' names, an array's components as name[1], name[2], ...
std::vector<unsigned> OutputRefs(const Description3& d, std::vector<std::string>* names) {
  for (unsigned vr : d.outputs) {
    const Variable3* v = d.ByVr(vr);
    if (v->dimension == 0) names->push_back(v->name);
    for (unsigned j = 1; j <= v->dimension; ++j) names->push_back(v->name + "[" + std::to_string(j) + "]");
  }
  return d.outputs;
}

// A run of fmi3_master: the outputs in their display units (as simulate writes them), under their names.
MasterRun RunMaster3(const Unpacked3& u, const std::string& kind, double t_end, double dt_out,
                     const std::string& options, const std::string& name) {
  std::vector<std::string> names;
  const std::vector<unsigned> vrs = OutputRefs(u.desc, &names);
  std::string out;
  for (unsigned vr : vrs) {
    const unsigned n = u.desc.ByVr(vr)->dimension;
    out += (out.empty() ? "" : ",") + std::to_string(vr) + (n ? ":" + std::to_string(n) : "");
  }
  const fs::path csv1 = u.dir / (name + "_1.csv"), csv2 = u.dir / (name + "_2.csv"), events = u.dir / (name + ".events");
  const Result r = Shell(std::string(FMI3_MASTER) + " " + u.so + " '" + u.desc.token + "' " + kind + " " + Num(t_end) +
                         " " + Num(dt_out) + " --out " + out + " --csv " + csv1.string() + " --then-csv " +
                         csv2.string() + " --events " + events.string() + " " + options);
  EXPECT_EQ(r.status, 0) << r.output;
  MasterRun m;
  for (auto [path, table] : {std::pair{csv1, &m.first}, std::pair{csv2, &m.second}}) {
    table->columns = {"t"};
    table->columns.insert(table->columns.end(), names.begin(), names.end());
    std::ifstream f(path);
    for (std::string line; std::getline(f, line);) {
      std::stringstream row(line);
      std::vector<double> values;
      for (std::string c; std::getline(row, c, ',');) values.push_back(std::stod(c));
      for (size_t k = 1; k < values.size() && k - 1 < names.size(); ++k)
        values[k] *= u.desc.DisplayFactor(names[k - 1].substr(0, names[k - 1].find('[')));
      table->rows.push_back(values);
    }
  }
  std::ifstream e(events);
  std::string key;
  long value;
  while (e >> key >> value) m.events[key] = value;
  return m;
}

std::string Vr(const Unpacked3& u, const std::string& name) {
  EXPECT_TRUE(u.desc.vr_of.count(name)) << name;
  return u.desc.vr_of.count(name) ? std::to_string(u.desc.vr_of.at(name)) : "0";
}

// ---- the calls a master may get wrong, through paynter's own FMI 3.0 header ----

std::vector<std::string> g_log;  // "category: message"
void LogMessage(fmi3InstanceEnvironment, fmi3Status status, fmi3String category, fmi3String message) {
  g_log.push_back(std::to_string(static_cast<int>(status)) + " " + (category ? category : "") + ": " + message);
}

struct Fmu3 {
  void* handle = nullptr;
#define PN_POINTER(name) pn_fmi3_##name* name = nullptr;
  PN_FMI3_FUNCTIONS(PN_POINTER)
#undef PN_POINTER
  ~Fmu3() {
    if (handle) dlclose(handle);
  }
  void Load(const std::string& so) {
    handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
#define PN_BIND(name)                                                    \
  name = reinterpret_cast<pn_fmi3_##name*>(dlsym(handle, "fmi3" #name)); \
  ASSERT_NE(reinterpret_cast<void*>(name), nullptr) << "missing fmi3" #name;
    PN_FMI3_FUNCTIONS(PN_BIND)
#undef PN_BIND
  }
};

// The status is fmi3Error and the last message logged says `needle` (as an error).
#define EXPECT_ERROR(call, needle)                                                          \
  do {                                                                                      \
    g_log.clear();                                                                          \
    EXPECT_EQ((call), fmi3Error) << #call;                                                  \
    ASSERT_FALSE(g_log.empty()) << #call << ": nothing logged";                             \
    EXPECT_NE(g_log.back().find(needle), std::string::npos) << #call << ": " << g_log.back(); \
    EXPECT_EQ(g_log.back().rfind("3 logStatusError: ", 0), 0u) << g_log.back();             \
  } while (0)

// B1's FMU under calls out of the standard's sequence, unknown value
// references, values that may not be set, a stop time passed, and logging
// turned off and on.
void CheckBadCalls(const Unpacked3& u) {
  Fmu3 f;
  ASSERT_NO_FATAL_FAILURE(f.Load(u.so));
  EXPECT_STREQ(f.GetVersion(), "3.0");
  const char* token = u.desc.token.c_str();
  // Instantiation: a wrong token (the description of another FMU), no name,
  // event mode asked for, scheduled execution: NULL, and the reason is logged
  // (FMI 3.0 asks for it whatever loggingOn says).
  for (bool logging : {false, true}) {
    g_log.clear();
    EXPECT_EQ(f.InstantiateCoSimulation("cs", "{not-the-token}", nullptr, false, logging, false, false, nullptr, 0,
                                        nullptr, LogMessage, nullptr),
              nullptr);
    ASSERT_FALSE(g_log.empty());
    EXPECT_NE(g_log.back().find("instantiation token does not match"), std::string::npos) << g_log.back();
  }
  g_log.clear();
  EXPECT_EQ(f.InstantiateModelExchange(" ", token, nullptr, false, true, nullptr, LogMessage), nullptr);
  ASSERT_FALSE(g_log.empty());
  EXPECT_NE(g_log.back().find("instance name is missing"), std::string::npos) << g_log.back();
  g_log.clear();
  EXPECT_EQ(f.InstantiateCoSimulation("cs", token, nullptr, false, true, true, false, nullptr, 0, nullptr, LogMessage,
                                      nullptr),
            nullptr);
  ASSERT_FALSE(g_log.empty());
  EXPECT_NE(g_log.back().find("hasEventMode is false"), std::string::npos) << g_log.back();
  g_log.clear();
  EXPECT_EQ(f.InstantiateScheduledExecution("se", token, nullptr, false, true, nullptr, LogMessage, nullptr, nullptr,
                                            nullptr),
            nullptr);
  ASSERT_FALSE(g_log.empty());
  EXPECT_NE(g_log.back().find("not exported for scheduled execution"), std::string::npos) << g_log.back();

  const unsigned b = u.desc.vr_of.at("B"), ja = u.desc.vr_of.at("JA"), time = u.desc.vr_of.at("time");
  const unsigned p_bar = u.desc.vr_of.at("p_bar"), unknown = 99999;
  const double one = 1, nan = NAN;
  double v[2] = {0, 0};
  // Co-simulation. Each error leaves the instance terminated (read values, reset or free it).
  fmi3Instance cs = f.InstantiateCoSimulation("cs", token, nullptr, false, true, false, false, nullptr, 0, nullptr,
                                              LogMessage, nullptr);
  ASSERT_NE(cs, nullptr);
  fmi3Boolean event = false, terminate = false, early = false;
  double last = 0;
  EXPECT_ERROR(f.DoStep(cs, 0, 0.1, true, &event, &terminate, &early, &last), "fmi3DoStep may not be called in instantiated");
  EXPECT_ERROR(f.EnterInitializationMode(cs, false, 0, 0, false, 0), "may not be called in terminated after an error");
  EXPECT_EQ(f.GetFloat64(cs, &b, 1, v, 1), fmi3OK);  // values may be read
  EXPECT_EQ(v[0], 10);
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  EXPECT_ERROR(f.GetFloat64(cs, &unknown, 1, v, 1), "unknown value reference 99999");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  EXPECT_ERROR(f.GetFloat64(cs, &b, 1, v, 2), "2 values for 1 value references");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  EXPECT_ERROR(f.SetFloat64(cs, &ja, 1, &one, 1), "calculated parameter");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  EXPECT_ERROR(f.SetFloat64(cs, &time, 1, &one, 1), "cannot be set");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  EXPECT_ERROR(f.SetFloat64(cs, &b, 1, &nan, 1), "not finite");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  int32_t iv = 0;
  EXPECT_ERROR(f.GetInt32(cs, &unknown, 1, &iv, 1), "no Int32 variables");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  EXPECT_ERROR(f.EnterEventMode(cs), "no event mode in co-simulation");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  EXPECT_ERROR(f.GetFMUState(cs, nullptr), "not supported");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  EXPECT_ERROR(f.EnterConfigurationMode(cs), "no structural parameters");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  EXPECT_EQ(f.EnterInitializationMode(cs, false, 0, 0, false, 0), fmi3OK);
  EXPECT_ERROR(f.GetContinuousStates(cs, v, 2), "is a model exchange function");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  // A run with a stop time: a step past it is an error; the step from the wrong point too.
  EXPECT_EQ(f.EnterInitializationMode(cs, false, 0, 0, true, 1.0), fmi3OK);
  EXPECT_ERROR(f.EnterInitializationMode(cs, false, 0, 0, true, 1.0), "may not be called in initialization mode");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  EXPECT_EQ(f.EnterInitializationMode(cs, false, 0, 0, true, 1.0), fmi3OK);
  EXPECT_EQ(f.ExitInitializationMode(cs), fmi3OK);
  EXPECT_EQ(f.SetFloat64(cs, &b, 1, &one, 1), fmi3OK);  // a tunable parameter in step mode
  EXPECT_EQ(f.DoStep(cs, 0, 0.5, true, &event, &terminate, &early, &last), fmi3OK);
  EXPECT_EQ(last, 0.5);
  EXPECT_FALSE(event || terminate || early);
  EXPECT_ERROR(f.DoStep(cs, 0.5, 0.6, true, &event, &terminate, &early, &last), "past the stop time");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  EXPECT_EQ(f.EnterInitializationMode(cs, false, 0, 0, false, 0), fmi3OK);
  EXPECT_EQ(f.ExitInitializationMode(cs), fmi3OK);
  EXPECT_ERROR(f.DoStep(cs, 0.25, 0.1, true, &event, &terminate, &early, &last), "the step starts at 0.25");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  EXPECT_EQ(f.EnterInitializationMode(cs, false, 0, 0, false, 0), fmi3OK);
  EXPECT_EQ(f.ExitInitializationMode(cs), fmi3OK);
  EXPECT_ERROR(f.DoStep(cs, 0, 0, true, &event, &terminate, &early, &last), "is not a finite number > 0");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  // Logging: off, an error is returned and nothing is logged; the categories turned on again, it is.
  EXPECT_EQ(f.SetDebugLogging(cs, false, 0, nullptr), fmi3OK);
  g_log.clear();
  EXPECT_EQ(f.GetFloat64(cs, &unknown, 1, v, 1), fmi3Error);
  EXPECT_TRUE(g_log.empty()) << g_log.front();
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  const fmi3String error_category[] = {"logStatusError"};
  EXPECT_EQ(f.SetDebugLogging(cs, true, 1, error_category), fmi3OK);
  EXPECT_ERROR(f.GetFloat64(cs, &unknown, 1, v, 1), "unknown value reference");
  EXPECT_EQ(f.Reset(cs), fmi3OK);
  const fmi3String unknown_category[] = {"logEverything"};
  EXPECT_ERROR(f.SetDebugLogging(cs, true, 1, unknown_category), "unknown log category");
  f.FreeInstance(cs);

  // Model exchange.
  fmi3Instance me = f.InstantiateModelExchange("me", token, nullptr, false, true, nullptr, LogMessage);
  ASSERT_NE(me, nullptr);
  size_t n = 0;
  EXPECT_EQ(f.GetNumberOfContinuousStates(me, &n), fmi3OK);
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(f.GetNumberOfEventIndicators(me, &n), fmi3OK);
  EXPECT_EQ(n, 0u);
  EXPECT_ERROR(f.SetTime(me, 1), "fmi3SetTime may not be called in instantiated");
  EXPECT_EQ(f.Reset(me), fmi3OK);
  EXPECT_EQ(f.EnterInitializationMode(me, false, 0, 0, false, 0), fmi3OK);
  EXPECT_EQ(f.ExitInitializationMode(me), fmi3OK);
  const double states[2] = {0, 0};
  EXPECT_ERROR(f.SetContinuousStates(me, states, 2), "may not be called in event mode");
  EXPECT_EQ(f.Reset(me), fmi3OK);
  EXPECT_EQ(f.EnterInitializationMode(me, false, 0, 0, false, 0), fmi3OK);
  EXPECT_EQ(f.ExitInitializationMode(me), fmi3OK);
  fmi3Boolean need = true, nominals = true, values = true, defined = true;
  double next = 0;
  EXPECT_EQ(f.UpdateDiscreteStates(me, &need, &terminate, &nominals, &values, &defined, &next), fmi3OK);
  EXPECT_FALSE(need || terminate || nominals || values || defined);
  EXPECT_EQ(f.EnterContinuousTimeMode(me), fmi3OK);
  EXPECT_EQ(f.SetTime(me, 0.1), fmi3OK);
  EXPECT_EQ(f.SetFloat64(me, &p_bar, 1, &one, 1), fmi3OK);  // a state, in continuous-time mode
  EXPECT_EQ(f.GetContinuousStates(me, v, 2), fmi3OK);
  EXPECT_EQ(v[0], 1);
  EXPECT_ERROR(f.SetFloat64(me, &b, 1, &one, 1), "may not be set in continuous-time mode");
  EXPECT_EQ(f.Reset(me), fmi3OK);
  EXPECT_EQ(f.EnterInitializationMode(me, false, 0, 0, false, 0), fmi3OK);
  EXPECT_EQ(f.ExitInitializationMode(me), fmi3OK);
  EXPECT_EQ(f.EnterContinuousTimeMode(me), fmi3OK);
  EXPECT_ERROR(f.SetContinuousStates(me, states, 3), "expected 2 states");
  EXPECT_EQ(f.Reset(me), fmi3OK);
  EXPECT_EQ(f.EnterInitializationMode(me, false, 0, 0, false, 0), fmi3OK);
  EXPECT_EQ(f.ExitInitializationMode(me), fmi3OK);
  EXPECT_EQ(f.EnterContinuousTimeMode(me), fmi3OK);
  EXPECT_ERROR(f.GetEventIndicators(me, v, 1), "has 0 event indicators, asked for 1");
  EXPECT_EQ(f.Reset(me), fmi3OK);
  EXPECT_EQ(f.EnterInitializationMode(me, false, 0, 0, false, 0), fmi3OK);
  EXPECT_EQ(f.ExitInitializationMode(me), fmi3OK);
  EXPECT_EQ(f.EnterContinuousTimeMode(me), fmi3OK);
  EXPECT_EQ(f.EnterEventMode(me), fmi3OK);
  EXPECT_EQ(f.SetFloat64(me, &b, 1, &one, 1), fmi3OK);  // a tunable parameter, in event mode
  EXPECT_ERROR(f.DoStep(me, 0, 0.1, true, &event, &terminate, &early, &last), "co-simulation function");
  EXPECT_EQ(f.Reset(me), fmi3OK);
  f.FreeInstance(me);
  f.FreeInstance(nullptr);  // allowed, does nothing
}

// ---- the tests ----

// B1, the damped pendulum, in one FMU for both kinds. Co-simulation at rtol
// 1e-10 against simulate's dopri5 at rtol 1e-10 (both Dormand-Prince with
// ode45's control, differing in where the steps fall): within 1e-8 of each
// output's scale. Model exchange is the master's RK4 at h = 1e-3 against
// simulate's rk4 at the same step: the same method on the same equations,
// within 1e-10 (rounding). The damping B set to 30 after fmi3Reset gives
// simulate --param B=30's result, the mass M = 2 simulate --param M=2's (the
// calculated parameter JA follows it).
TEST(Fmi3Importer, B1PendulumMatchesSimulate) {
  Unpacked3 u;
  ASSERT_NO_FATAL_FAILURE(Export3("examples/B1_pendulum.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  EXPECT_EQ(u.desc.Find("B")->variability, "tunable");
  EXPECT_EQ(u.desc.Find("JA")->causality, "calculatedParameter");
  EXPECT_EQ(u.desc.Find("time")->causality, "independent");
  EXPECT_EQ(u.desc.derivatives.size(), 2u);
  EXPECT_TRUE(u.desc.event_indicators.empty());
  const std::string b = Vr(u, "B"), m = Vr(u, "M");
  const Table ref = Simulate("examples/B1_pendulum.yaml", "", 10, 0.1, u.dir);
  const Table ref_b = Simulate("examples/B1_pendulum.yaml", "--param B=30", 10, 0.1, u.dir);
  const Table ref_m = Simulate("examples/B1_pendulum.yaml", "--param M=2", 10, 0.1, u.dir);
  const Table rk4 = Simulate("examples/B1_pendulum.yaml", "--method rk4 --step 1e-3", 10, 0.1, u.dir);
  const Table rk4_b = Simulate("examples/B1_pendulum.yaml", "--method rk4 --step 1e-3 --param B=30", 10, 0.1, u.dir);
  const MasterRun cs = RunMaster3(u, "cs", 10, 0.1, "--tolerance 1e-10 --then " + b + "=30", "cs");
  ExpectClose("B1 fmi3 cs", ref, cs.first, 1e-8);
  ExpectClose("B1 fmi3 cs B=30", ref_b, cs.second, 1e-8);
  const MasterRun me = RunMaster3(u, "me", 10, 0.1, "--h 1e-3 --then " + b + "=30", "me");
  ExpectClose("B1 fmi3 me", rk4, me.first, 1e-10);
  ExpectClose("B1 fmi3 me B=30", rk4_b, me.second, 1e-10);
  EXPECT_EQ(me.events.at("state_events") + me.events.at("time_events"), 0);
  ExpectClose("B1 fmi3 cs M=2", ref_m, RunMaster3(u, "cs", 10, 0.1, "--tolerance 1e-10 --then " + m + "=2", "cs_m").second,
              1e-8);
  // The changes show: B = 30 is not B = 10, M = 2 not M = 1.
  const int g = ref.Column("gamma");
  ASSERT_GE(g, 0);
  EXPECT_GT(std::fabs(ref_b.rows[10][g] - ref.rows[10][g]), 1e-2);
  EXPECT_GT(std::fabs(ref_m.rows[10][g] - ref.rows[10][g]), 1e-2);
  CheckBadCalls(u);
}

// The bouncing ball: the impact `h < 0` is a state event with a reset. The
// master's model exchange finds it by the indicator's domain change and
// locates it on its steps' Hermite interpolant (exact for the parabola), so
// the FMU agrees with simulate to rounding: 9 impacts before 3.5 s (the
// closed form t_1 = sqrt(2 h0/g), t_(k+1) = t_k + 2 e^k sqrt(2 g h0)/g), each
// an event with a reset; the indicator's return above zero as the ball rises
// is an event too, which changes nothing. Co-simulation handles the impacts
// inside fmi3DoStep. The restitution e = 0.5 set after fmi3Reset gives
// simulate --param e=0.5's bounces. Largest differences: 1.3e-13 (model
// exchange, RK4 at 1 ms) and 4.1e-13 (co-simulation at rtol 1e-10), v of 4.4 m/s.
TEST(Fmi3Importer, BouncingBallEventsMatchSimulate) {
  Unpacked3 u;
  ASSERT_NO_FATAL_FAILURE(Export3("examples/bouncing_ball.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  ASSERT_EQ(u.desc.event_indicators.size(), 1u);
  const Variable3* momentum = u.desc.Find("p_mass");
  ASSERT_NE(momentum, nullptr);
  EXPECT_TRUE(momentum->reinit);  // the impact's reset sets it
  int reinit = 0;
  for (const Variable3& v : u.desc.vars) reinit += v.reinit;
  EXPECT_EQ(reinit, 1);  // not the height, which no reset sets
  int impacts = 0;
  for (double tk = std::sqrt(2 / 9.81), dt = 0.8 * 2 * std::sqrt(2 * 9.81) / 9.81; tk < 3.5; tk += dt, dt *= 0.8)
    ++impacts;
  EXPECT_EQ(impacts, 9);
  const std::string e = Vr(u, "e");
  const Table ref = GridRows(Simulate("examples/bouncing_ball.yaml", "", 3.5, 0.01, u.dir), 3.5, 0.01);
  const MasterRun me = RunMaster3(u, "me", 3.5, 0.01, "--h 1e-3", "me");
  ExpectClose("ball fmi3 me", ref, me.first, 1e-9);
  EXPECT_EQ(me.events.at("resets"), impacts);
  EXPECT_EQ(me.events.at("state_events"), 2 * impacts);
  EXPECT_EQ(me.events.at("time_events"), 0);
  const MasterRun cs = RunMaster3(u, "cs", 3.5, 0.01, "--tolerance 1e-10", "cs");
  ExpectClose("ball fmi3 cs", ref, cs.first, 1e-9);
  // e = 0.5 set after fmi3Reset: its impacts accumulate at 3 sqrt(2 h0/g) = 1.35 s (a Zeno point, where
  // the FMU stops the run: BouncingBallStopsAtItsZenoPoint), so the runs end at 1.2 s, after 3 impacts.
  const Table ref_e = GridRows(Simulate("examples/bouncing_ball.yaml", "--param e=0.5", 1.2, 0.01, u.dir), 1.2, 0.01);
  ExpectClose("ball fmi3 me e=0.5", ref_e, RunMaster3(u, "me", 1.2, 0.01, "--h 1e-3 --then " + e + "=0.5", "me_e").second,
              1e-9);
  ExpectClose("ball fmi3 cs e=0.5", ref_e,
              RunMaster3(u, "cs", 1.2, 0.01, "--tolerance 1e-10 --then " + e + "=0.5", "cs_e").second, 1e-9);
  for (const auto& row : cs.first.rows) EXPECT_GE(row[cs.first.Column("h")], -1e-12) << "t = " << row[0];

  // The indicator is a variable too: fmi3GetFloat64 of its value reference is fmi3GetEventIndicators'.
  Fmu3 f;
  ASSERT_NO_FATAL_FAILURE(f.Load(u.so));
  fmi3Instance c = f.InstantiateModelExchange("me", u.desc.token.c_str(), nullptr, false, true, nullptr, LogMessage);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(f.EnterInitializationMode(c, false, 0, 0, false, 0), fmi3OK);
  EXPECT_EQ(f.ExitInitializationMode(c), fmi3OK);
  double z = 0, zv = 1;
  EXPECT_EQ(f.GetEventIndicators(c, &z, 1), fmi3OK);
  EXPECT_EQ(f.GetFloat64(c, &u.desc.event_indicators[0], 1, &zv, 1), fmi3OK);
  EXPECT_EQ(z, zv);
  EXPECT_LT(z, 0);  // h = 1 at the start: the impact's condition h < 0 does not hold
  // A state reset by an event (reinit) may not be set in event mode.
  const unsigned p = momentum->vr;
  const double one = 1;
  EXPECT_ERROR(f.SetFloat64(c, &p, 1, &one, 1), "reinit");
  f.FreeInstance(c);
}

// The ball with e = 0.5 (set after fmi3Reset, a first run of the default
// ball to 2 s before it) run to 2 s, past its Zeno point: its impacts come at
// t_k = t1 (3 - 2^(2-k)), t1 = sqrt(2 h0/g), and accumulate at 3 t1 =
// 1.35457 s. At the 7th the intervals have shrunk 5 times in a row by the
// same ratio 1/2, and the FMU ends the run with fmi3Error, as simulate does,
// naming the event, its firing and the point (t7 + 2 t1/64 = 3 t1), by model
// exchange (fmi3UpdateDiscreteStates) and by co-simulation (fmi3DoStep) alike,
// rather than go on until a bounce lower than the tolerance is missed and the
// ball falls through the floor. What the master got before the error is above
// the floor and reaches the output time before the 7th impact.
TEST(Fmi3Importer, BouncingBallStopsAtItsZenoPoint) {
  Unpacked3 u;
  ASSERT_NO_FATAL_FAILURE(Export3("examples/bouncing_ball.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  const double t1 = std::sqrt(2 / 9.81), t7 = t1 * (3 - 1.0 / 32);
  char point[32];
  std::snprintf(point, sizeof point, "%.6g", 3 * t1);
  const std::string e = Vr(u, "e"), h = Vr(u, "h");
  auto rows = [](const fs::path& csv) {
    std::vector<std::pair<double, double>> r;  // t, h
    std::ifstream in(csv);
    for (std::string line; std::getline(in, line);) {
      const size_t comma = line.find(',');
      r.emplace_back(std::stod(line.substr(0, comma)), std::stod(line.substr(comma + 1)));
    }
    return r;
  };
  for (const std::string kind : {"me", "cs"}) {
    SCOPED_TRACE(kind);
    const fs::path csv1 = u.dir / ("zeno_" + kind + "_1.csv"), csv2 = u.dir / ("zeno_" + kind + "_2.csv");
    const Result r = Shell(std::string(FMI3_MASTER) + " " + u.so + " '" + u.desc.token + "' " + kind +
                           " 2 0.01 --log --out " + h + " --csv " + csv1.string() + " --then " + e +
                           "=0.5 --then-csv " + csv2.string() + (kind == "me" ? " --h 1e-3" : " --tolerance 1e-10"));
    EXPECT_NE(r.status, 0) << r.output;
    EXPECT_NE(r.output.find(kind == "me" ? "fmi3UpdateDiscreteStates returned status 3" : "fmi3DoStep returned status 3"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("event 'impact' fires ever sooner: 5 times in a row"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(std::string("accumulate at about t = ") + point + ", before the stop time 2 (a Zeno point)"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("Hint: end the run before t = "), std::string::npos) << r.output;
    const size_t at = r.output.find("its firing 7, t = ");
    ASSERT_NE(at, std::string::npos) << r.output;
    EXPECT_NEAR(std::stod(r.output.substr(at + 18)), t7, 1e-9) << r.output;
    // The default ball's run to 2 s (its point is 4.06 s) is whole and above the floor.
    const auto first = rows(csv1), second = rows(csv2);
    ASSERT_EQ(first.size(), 201u);
    for (const auto& [t, height] : first) EXPECT_GE(height, -1e-12) << "t = " << t;
    // The e = 0.5 run up to the error: above the floor, to the output time before the 7th impact.
    ASSERT_FALSE(second.empty());
    for (const auto& [t, height] : second) EXPECT_GE(height, -1e-6) << "t = " << t;
    EXPECT_LE(second.back().first, t7);
    EXPECT_GT(second.back().first, t7 - 0.01 - 1e-9);
  }
}

constexpr double kStepTime = 3.0 / 256, kDtOut = 1.0 / 256, kEnd = 32.0 / 256, kH = 1.0 / 131072;

// The DC motor with units and an input (examples/dc_motor_units.yaml): the
// supply is an input, the outputs carry units and display units. The master
// drives the supply with a step (0 to 12 V at t = 3/256 s: model exchange
// enters event mode there to set it) and with a sine (12 V at 20 Hz); model
// exchange with its Runge-Kutta at h = 2^-17 s, co-simulation setting the
// input at every communication point (1/256 s), the FMU holding it over the
// step. The reference is simulate of the model with the supply's law written
// as that signal (for co-simulation's sine, the held values as a table).
// Between two runs the master sets the armature resistance Ra = 2.4 (after
// fmi3Reset), as simulate --param does. All within 1e-8 of each output's
// largest value.
TEST(Fmi3Importer, DcMotorDrivenByAMaster) {
  Unpacked3 u;
  ASSERT_NO_FATAL_FAILURE(Export3("examples/dc_motor_units.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  const Variable3* supply = u.desc.Find("supply");
  ASSERT_NE(supply, nullptr);
  EXPECT_EQ(supply->causality, "input");
  EXPECT_EQ(supply->start, 12);
  EXPECT_EQ(supply->unit, "V");
  EXPECT_EQ(u.desc.base.at("V"), (std::map<std::string, int>{{"kg", 1}, {"m", 2}, {"s", -3}, {"A", -1}}));
  const Variable3* speed = u.desc.Find("speed");
  ASSERT_NE(speed, nullptr);
  EXPECT_EQ(speed->unit, "1/s");
  EXPECT_EQ(speed->display_unit, "rpm");
  EXPECT_NEAR(u.desc.DisplayFactor("speed"), 60 / (2 * M_PI), 1e-14);
  EXPECT_EQ(u.desc.Find("La")->variability, "tunable");
  EXPECT_EQ(u.desc.Find("La")->display_unit, "mH");
  EXPECT_EQ(u.desc.Find("V")->causality, "local");
  const std::string in = Vr(u, "supply"), ra = Vr(u, "Ra");
  const std::string law = "effort: V, input: true";
  const fs::path step = ModelVariant("dc_motor_units", law, "effort: \"12*step_at(" + Num(kStepTime) + ")\"", u.dir, "step");
  const fs::path sine = ModelVariant("dc_motor_units", law, "effort: \"12 [V]*sin(2*pi*20 [1/s]*t)\"", u.dir, "sine");
  std::string held = "table([", values;
  for (int k = 0; k < 32; ++k) {
    const double t0 = k * kDtOut, v = 12 * std::sin(2 * M_PI * 20 * t0);
    held += (k ? ", " : "") + Num(t0) + ", " + Num((k + 1) * kDtOut);
    values += (k ? ", " : "") + Num(v) + ", " + Num(v);
  }
  held += "], [" + values + "])";
  const fs::path zoh = ModelVariant("dc_motor_units", law, "effort: \"" + held + "\"", u.dir, "zoh");
  const std::string step_input = " --input " + in + "=step:" + Num(kStepTime) + ":0:12";
  const std::string sine_input = " --input " + in + "=sine:0:12:20";
  const std::string me = " --h " + Num(kH);
  const Table ref_step = SimulateFile(step, "", kEnd, kDtOut, u.dir, "ref_step");
  const Table ref_step_ra = SimulateFile(step, "--param Ra=2.4", kEnd, kDtOut, u.dir, "ref_step_ra");
  const Table ref_sine = SimulateFile(sine, "", kEnd, kDtOut, u.dir, "ref_sine");
  const Table ref_zoh = SimulateFile(zoh, "", kEnd, kDtOut, u.dir, "ref_zoh");

  const MasterRun me_step = RunMaster3(u, "me", kEnd, kDtOut, me + step_input + " --then " + ra + "=2.4", "me_step");
  ExpectAgree("dc fmi3 step me", ref_step, me_step.first, 1e-8);
  ExpectAgree("dc fmi3 step me Ra=2.4", ref_step_ra, me_step.second, 1e-8);
  EXPECT_EQ(me_step.events.at("input_events"), 1);
  const MasterRun cs_step =
      RunMaster3(u, "cs", kEnd, kDtOut, "--tolerance 1e-10" + step_input + " --then " + ra + "=2.4", "cs_step");
  ExpectAgree("dc fmi3 step cs", ref_step, cs_step.first, 1e-8);
  ExpectAgree("dc fmi3 step cs Ra=2.4", ref_step_ra, cs_step.second, 1e-8);
  const int i_col = ref_step.Column("current");
  ASSERT_GE(i_col, 0);
  EXPECT_GT(std::fabs(ref_step_ra.rows.back()[i_col] - ref_step.rows.back()[i_col]),
            0.01 * std::fabs(ref_step.rows.back()[i_col]));
  ExpectAgree("dc fmi3 sine me", ref_sine, RunMaster3(u, "me", kEnd, kDtOut, me + sine_input, "me_sine").first, 1e-8);
  ExpectAgree("dc fmi3 sine cs", ref_zoh,
              RunMaster3(u, "cs", kEnd, kDtOut, "--tolerance 1e-10" + sine_input, "cs_sine").first, 1e-8);
}

// The 1 kHz sampled PI controller (examples/dc_motor_sampled_control.yaml):
// its samples are time events, which model exchange announces in
// nextEventTime and the master steps onto; co-simulation handles them inside
// fmi3DoStep. Outputs every 1 ms fall on the samples (the row before each).
// Against simulate at rtol 1e-10: within 1e-9 of 1 + each output's scale.
TEST(Fmi3Importer, SampledControllerTimeEventsMatchSimulate) {
  Unpacked3 u;
  ASSERT_NO_FATAL_FAILURE(Export3("examples/dc_motor_sampled_control.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  EXPECT_GE(u.desc.event_indicators.size(), 2u);
  const double t_end = 0.3, dt = 1e-3;
  const Table ref = GridRows(Simulate("examples/dc_motor_sampled_control.yaml", "", t_end, dt, u.dir), t_end, dt);
  const MasterRun me = RunMaster3(u, "me", t_end, dt, "--h 1e-5", "me");
  ExpectClose("sampled fmi3 me", ref, me.first, 1e-9);
  EXPECT_GE(me.events.at("time_events"), 299);  // the samples, announced
  EXPECT_GE(me.events.at("resets"), 299);
  ExpectClose("sampled fmi3 cs", ref, RunMaster3(u, "cs", t_end, dt, "--tolerance 1e-10", "cs").first, 1e-9);
}

// Outputs that form a vector by their names are one array output in FMI 3.0.
// examples/rigid_body_vector.yaml writes its body's angular velocity, the
// vector 1-junction w, as the outputs wx, wy, wz (paynter names a vector's
// components x, y, z): its FMU has the array output `w` (<Dimension
// start="3"/>, the value reference wx had), and no variables wx, wy, wz;
// fmi3GetFloat64 of w gives the three values, which are the columns wx, wy,
// wz of `paynter simulate` (co-simulation at rtol 1e-10 against dopri5 at
// 1e-10: within 1e-8; model exchange, the master's RK4 at 1e-3, against
// simulate's rk4 at the same step: rounding). kinetic and work stay
// scalars, and FMI 2.0's export keeps wx, wy, wz. B4's joint force FJ3x,
// FJ3y, FJ3z is the array FJ3, its X3, Y3, Z3 (no common prefix) scalars.
TEST(Fmi3Importer, VectorOutputsAreArrays) {
  Unpacked3 u;
  ASSERT_NO_FATAL_FAILURE(Export3("examples/rigid_body_vector.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  const Variable3* w = u.desc.Find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dimension, 3u);
  EXPECT_EQ(w->causality, "output");
  for (const char* c : {"wx", "wy", "wz"}) EXPECT_EQ(u.desc.Find(c), nullptr) << c;
  ASSERT_EQ(u.desc.outputs.size(), 3u);
  EXPECT_EQ(u.desc.outputs[0], w->vr);
  EXPECT_EQ(u.desc.ByVr(u.desc.outputs[1])->name, "kinetic");
  EXPECT_EQ(u.desc.ByVr(u.desc.outputs[1])->dimension, 0u);

  // The array's values are simulate's scalars.
  auto components = [](Table t) {  // w[1], w[2], w[3] under simulate's names
    for (std::string& c : t.columns)
      if (c.rfind("w[", 0) == 0) c = std::string("w") + "xyz"[c[2] - '1'];
    return t;
  };
  const Table ref = Simulate("examples/rigid_body_vector.yaml", "", 5, 0.05, u.dir);
  const Table rk4 = Simulate("examples/rigid_body_vector.yaml", "--method rk4 --step 1e-3", 5, 0.05, u.dir);
  const Table cs = components(RunMaster3(u, "cs", 5, 0.05, "--tolerance 1e-10", "cs").first);
  ASSERT_EQ(cs.columns, (std::vector<std::string>{"t", "wx", "wy", "wz", "kinetic", "work"}));
  ExpectClose("w fmi3 cs", ref, cs, 1e-8);
  ExpectClose("w fmi3 me", rk4, components(RunMaster3(u, "me", 5, 0.05, "--h 1e-3", "me").first), 1e-10);
  // The body tumbles: each component moves.
  for (int c = 1; c <= 3; ++c) {
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& row : ref.rows) lo = std::min(lo, row[c]), hi = std::max(hi, row[c]);
    EXPECT_GT(hi - lo, 1e-2) << ref.columns[c];
  }

  // Through the functions: the array's value reference gives 3 values, with
  // a scalar's after them; a count that is not the values' is an error, and
  // wy's former value reference is no variable.
  Fmu3 f;
  ASSERT_NO_FATAL_FAILURE(f.Load(u.so));
  fmi3Instance c = f.InstantiateCoSimulation("cs", u.desc.token.c_str(), nullptr, false, true, false, false, nullptr, 0,
                                             nullptr, LogMessage, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(f.EnterInitializationMode(c, false, 0, 0, true, 1), fmi3OK);
  EXPECT_EQ(f.ExitInitializationMode(c), fmi3OK);
  const unsigned vrs[2] = {w->vr, u.desc.outputs[1]};
  double v[4] = {0, 0, 0, 0};
  EXPECT_EQ(f.GetFloat64(c, vrs, 2, v, 4), fmi3OK);
  const double Ix = 1, Iy = 2, Iz = 3;  // the model's inertias; w starts at (0.1, 1, 0.1)
  EXPECT_NEAR(v[0], 0.1, 1e-16);
  EXPECT_NEAR(v[1], 1.0, 1e-15);
  EXPECT_NEAR(v[2], 0.1, 1e-16);
  EXPECT_NEAR(v[3], (Ix * 0.01 + Iy * 1 + Iz * 0.01) / 2, 1e-15);
  fmi3Boolean event = fmi3False, terminate = fmi3False, early = fmi3False;
  double last = 0, scalars[3] = {0, 0, 0};
  EXPECT_EQ(f.DoStep(c, 0, 0.5, fmi3True, &event, &terminate, &early, &last), fmi3OK);
  EXPECT_EQ(f.GetFloat64(c, vrs, 1, v, 3), fmi3OK);
  const Table at = Simulate("examples/rigid_body_vector.yaml", "", 0.5, 0.5, u.dir);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(v[k], at.rows.back()[1 + k], 1e-8) << k;
  EXPECT_ERROR(f.GetFloat64(c, vrs, 1, scalars, 1), "1 values for 1 value references, which have 3");
  f.FreeInstance(c);
  c = f.InstantiateCoSimulation("cs", u.desc.token.c_str(), nullptr, false, true, false, false, nullptr, 0, nullptr,
                                LogMessage, nullptr);
  ASSERT_NE(c, nullptr);
  const unsigned wy = w->vr + 1;
  EXPECT_ERROR(f.GetFloat64(c, &wy, 1, scalars, 1), "unknown value reference");
  f.FreeInstance(c);

  // FMI 2.0 has no arrays: the export keeps the scalars.
  const fs::path fmu2 = u.dir / "w2.fmu";
  const Result r2 = Shell(std::string(PAYNTER_EXE) + " fmu " + Source("examples/rigid_body_vector.yaml") + " -o " +
                          fmu2.string() + " && unzip -p " + fmu2.string() + " modelDescription.xml");
  ASSERT_EQ(r2.status, 0) << r2.output;
  for (const char* name : {"wx", "wy", "wz"})
    EXPECT_NE(r2.output.find(std::string("<ScalarVariable name=\"") + name + "\""), std::string::npos) << name;
  EXPECT_EQ(r2.output.find("Dimension"), std::string::npos);

  // B4: the joint force is an array, the coordinates X3, Y3, Z3 are not.
  Unpacked3 b4;
  ASSERT_NO_FATAL_FAILURE(Export3("examples/B4_spatial_arm.yaml", "", &b4));
  ASSERT_NE(b4.desc.Find("FJ3"), nullptr);
  EXPECT_EQ(b4.desc.Find("FJ3")->dimension, 3u);
  for (const char* name : {"X3", "Y3", "Z3", "s", "theta1"}) {
    ASSERT_NE(b4.desc.Find(name), nullptr) << name;
    EXPECT_EQ(b4.desc.Find(name)->dimension, 0u) << name;
  }
  EXPECT_EQ(b4.desc.Find("FJ3x"), nullptr);
}

// The rule by names, on a mass on a spring: outputs r_1, r_2, r_3 are the
// array r (components numbered as a vector bond of dimension 6 numbers its
// parts); x_1, x_2 would be the array x, but an output x is there, so it is
// x_vector; a_x, a_y in two display units, and p_x alone, stay scalars.
TEST(Fmi3Importer, VectorOutputsByTheirNames) {
  const fs::path model = TestDir("VectorOutputsByTheirNamesModel") / "named.yaml";
  std::ofstream(model) << "name: named\nparameters: {m: 1, k: 100}\nelements:\n"
                          "  - {name: mass, kind: I, inertance: m}\n  - {name: spring, kind: C, stiffness: k, initial: 0.1}\n"
                          "  - {name: v, kind: \"1\"}\nbonds: [[v, mass], [v, spring]]\noutputs:\n"
                          "  r_1: q_spring\n  r_2: 2*q_spring\n  r_3: 3*q_spring\n  x: q_spring\n  x_1: f_v\n  x_2: -f_v\n"
                          "  a_x: q_spring m\n  a_y: q_spring mm\n  p_x: p_mass\n";
  Unpacked3 u;
  ASSERT_NO_FATAL_FAILURE(Export3(model.string(), "", &u));
  std::vector<std::pair<std::string, unsigned>> outputs;
  for (unsigned vr : u.desc.outputs) outputs.emplace_back(u.desc.ByVr(vr)->name, u.desc.ByVr(vr)->dimension);
  EXPECT_EQ(outputs, (std::vector<std::pair<std::string, unsigned>>{
                         {"r", 3}, {"x", 0}, {"x_vector", 2}, {"a_x", 0}, {"a_y", 0}, {"p_x", 0}}));
  Fmu3 f;
  ASSERT_NO_FATAL_FAILURE(f.Load(u.so));
  fmi3Instance c = f.InstantiateModelExchange("me", u.desc.token.c_str(), nullptr, false, true, nullptr, LogMessage);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(f.EnterInitializationMode(c, false, 0, 0, false, 0), fmi3OK);
  EXPECT_EQ(f.ExitInitializationMode(c), fmi3OK);
  const unsigned vrs[3] = {u.desc.outputs[0], u.desc.outputs[1], u.desc.outputs[3]};
  double v[5] = {0, 0, 0, 0, 0};
  EXPECT_EQ(f.GetFloat64(c, vrs, 3, v, 5), fmi3OK);
  EXPECT_NEAR(v[0], 0.1, 1e-16);  // r: q, 2 q, 3 q at q = 0.1
  EXPECT_NEAR(v[1], 0.2, 1e-16);
  EXPECT_NEAR(v[2], 0.3, 1e-15);
  EXPECT_NEAR(v[3], 0.1, 1e-16);  // x
  EXPECT_NEAR(v[4], 0.1, 1e-16);  // a_x in m (SI), as a_y is
  f.FreeInstance(c);
}

// The command's errors: a version paynter does not export, and with
// --fmi-version 3 the errors of FMI 2.0's export (a model with constraint
// rows, an input whose law varies by itself), located as every paynter
// error, with nothing written.
TEST(Fmi3Importer, CommandErrors) {
  const fs::path dir = TestDir("errors");
  const fs::path models = TestDir("errors_models");
  const fs::path out = dir / "x.fmu";
  const std::string exe = PAYNTER_EXE;
  Result r = Shell(exe + " fmu " + Source("examples/B1_pendulum.yaml") + " --fmi-version 4 -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  EXPECT_NE(r.output.find("FMI 4 is not a version paynter exports"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--fmi-version 2 | 3"), std::string::npos) << r.output;
  r = Shell(exe + " fmu " + Source("examples/fourbar.yaml") + " --fmi-version 3 -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  EXPECT_NE(r.output.find("constraint rows"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--constraints parasitic"), std::string::npos) << r.output;
  std::string yaml = ReadText(Source("examples/rlc.yaml"));
  yaml.replace(yaml.find("effort: V,"), std::string("effort: V,").size(), "effort: \"V*sin(t)\",");
  std::ofstream(models / "rlc_sine.yaml") << yaml;
  r = Shell(exe + " fmu " + (models / "rlc_sine.yaml").string() + " --fmi-version 3 -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  EXPECT_NE(r.output.find("rlc_sine.yaml:10:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("an input of the FMU takes the place of the source's law"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(fs::is_empty(dir));
}

}  // namespace
