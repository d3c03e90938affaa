// A test importer of paynter's FMUs (FMI 2.0): exports B1, B3 and B4 with
// `paynter fmu`, unpacks them with unzip, checks modelDescription.xml against
// the standard's rules, loads the shared object with dlopen and runs it
// through the standard's calling sequences — model exchange integrated by this
// file's own classical Runge-Kutta of fine step through fmi2SetTime,
// fmi2SetContinuousStates and fmi2GetDerivatives, co-simulation by
// fmi2DoStep — and compares the outputs with `paynter simulate`. The DC
// motor and B4 are also driven by tests/fmi2_master.c, a master built on the
// standard's own headers (inputs as a step and a sine, a parameter set
// between runs), against simulate fed the same signal.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "fmi_test_support.h"
#include "paynter_fmi2.h"

namespace {

using namespace fmi_test;
namespace fs = std::filesystem;

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

struct Variable {
  std::string name, causality, variability, initial, unit, display_unit, description;
  unsigned vr = 0;
  bool has_start = false;
  double start = 0;
  int derivative = 0;
};

struct UnitDefinition {
  std::map<std::string, int> base;            // BaseUnit exponents given
  std::map<std::string, double> display;      // DisplayUnit name -> factor
};

struct Description {
  std::string model_name, guid, identifier_me, identifier_cs;
  int num_event_indicators = 0;
  std::set<std::string> source_files;  // <SourceFiles> of ModelExchange and CoSimulation
  std::map<std::string, UnitDefinition> units;
  std::vector<Variable> vars;
  std::vector<int> outputs, derivatives, initial_unknowns;  // 1-based indices
  std::map<std::string, unsigned> vr_of;
  double Start(const std::string& name) const {
    for (const Variable& v : vars)
      if (v.name == name) return v.start;
    return NAN;
  }
  const Variable* Find(const std::string& name) const {
    for (const Variable& v : vars)
      if (v.name == name) return &v;
    return nullptr;
  }
  // A variable's value in its display unit is factor * value (1 without one).
  double DisplayFactor(const std::string& name) const {
    const Variable* v = Find(name);
    if (!v || v->display_unit.empty() || !units.count(v->unit)) return 1;
    const auto& d = units.at(v->unit).display;
    return d.count(v->display_unit) ? d.at(v->display_unit) : NAN;
  }
};

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

// ---- the fmi2 functions, declared by paynter's own FMI 2.0 header (the one the FMUs' runtime is built on) ----

using Component = fmi2Component;
using Status = fmi2Status;
constexpr Status kOK = fmi2OK, kDiscard = fmi2Discard, kError = fmi2Error;
using EventInfo = fmi2EventInfo;

std::vector<std::string> g_log;
void Logger(fmi2ComponentEnvironment, fmi2String instance, fmi2Status status, fmi2String category,
            fmi2String message, ...) {
  char buf[1000];
  va_list ap;
  va_start(ap, message);
  std::vsnprintf(buf, sizeof buf, message, ap);
  va_end(ap);
  (void)status;
  g_log.push_back(std::string(instance) + " [" + category + "] " + buf);
}

// The fmi2 functions of a loaded shared object, one pointer each (f.DoStep is fmi2DoStep).
struct Fmu {
  void* handle = nullptr;
#define PN_POINTER(name) pn_fmi2_##name* name = nullptr;
  PN_FMI2_FUNCTIONS(PN_POINTER)
#undef PN_POINTER

  ~Fmu() {
    if (handle) dlclose(handle);
  }
  void Load(const std::string& so) {
    handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
#define PN_BIND(name)                                                                  \
  name = reinterpret_cast<pn_fmi2_##name*>(dlsym(handle, "fmi2" #name));               \
  EXPECT_NE(reinterpret_cast<void*>(name), nullptr) << "missing fmi2" #name;
    PN_FMI2_FUNCTIONS(PN_BIND)
#undef PN_BIND
  }
};

const fmi2CallbackFunctions kCallbacks = {Logger, nullptr, nullptr, nullptr, nullptr};

// An exported and unpacked FMU.
struct Unpacked {
  fs::path dir;
  Description desc;
  std::string so;
  Fmu fmu;
};

fs::path TestDir(const std::string& name) {
  const fs::path d = fs::path(PAYNTER_BINARY_DIR) / "fmi_importer" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Exports `model` with `options` and unpacks it; the checks of the files and
// the description are made here.
void ExportAndUnpack(const std::string& model, const std::string& options, Unpacked* u) {
  const std::string name = fs::path(model).stem().string();
  // A directory per test: CTest runs the tests of this file in parallel.
  u->dir = TestDir(std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" + name);
  const fs::path fmu = u->dir / (name + ".fmu");
  const Result r = Shell(std::string(PAYNTER_EXE) + " fmu " + Source(model) + " " + options + " -o " + fmu.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const Result z = Shell("cd " + u->dir.string() + " && unzip -q " + fmu.string() + " -d unpacked");
  ASSERT_EQ(z.status, 0) << z.output;
  const fs::path root = u->dir / "unpacked";
  for (const char* f : {"modelDescription.xml", "sources/fmu.c", "sources/model.h", "sources/model.c", "sources/rhs.c",
                        "sources/outputs.c"})
    EXPECT_TRUE(fs::exists(root / f)) << f;
  u->desc = CheckModelDescription(ReadText(root / "modelDescription.xml"));
  // <SourceFiles> lists every C file of sources/, and nothing else (parameters.c was missing).
  std::set<std::string> c_files;
  for (const auto& entry : fs::directory_iterator(root / "sources"))
    if (entry.path().extension() == ".c") c_files.insert(entry.path().filename().string());
  EXPECT_EQ(u->desc.source_files, c_files);
  const std::string id = u->desc.identifier_me.empty() ? u->desc.identifier_cs : u->desc.identifier_me;
  u->so = (root / "binaries" / "linux64" / (id + ".so")).string();
  ASSERT_TRUE(fs::exists(u->so)) << u->so;
  // The shared object needs libc and libm only.
  const Result needed = Shell("readelf -d " + u->so);
  ASSERT_EQ(needed.status, 0) << needed.output;
  std::istringstream lines(needed.output);
  int num_needed = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.find("(NEEDED)") != std::string::npos) {
      ++num_needed;
      EXPECT_TRUE(line.find("[libc.so.6]") != std::string::npos || line.find("[libm.so.6]") != std::string::npos)
          << line;
    }
  EXPECT_GE(num_needed, 1);
  // Its undefined symbols are C library functions (versioned GLIBC), or weak.
  const Result undef = Shell("nm -u " + u->so);
  ASSERT_EQ(undef.status, 0) << undef.output;
  std::istringstream syms(undef.output);
  for (std::string line; std::getline(syms, line);) {
    std::istringstream w(line);
    std::string kind, sym;
    w >> kind >> sym;
    if (kind == "w") continue;
    EXPECT_NE(sym.find("@GLIBC_"), std::string::npos) << line;
    EXPECT_NE(sym.rfind("_Z", 0), 0u) << "C++ symbol " << line;
  }
  // It exports the fmi2 functions and nothing else.
  const Result defined = Shell("nm -D --defined-only " + u->so);
  std::istringstream exported(defined.output);
  for (std::string line; std::getline(exported, line);) {
    std::istringstream w(line);
    std::string addr, kind, sym;
    w >> addr >> kind >> sym;
    EXPECT_EQ(sym.rfind("fmi2", 0), 0u) << "exported: " << line;
  }
  u->fmu.Load(u->so);
}

std::vector<unsigned> OutputRefs(const Description& d, std::vector<std::string>* names) {
  std::vector<unsigned> vr;
  for (int i : d.outputs) {
    vr.push_back(d.vars[i - 1].vr);
    names->push_back(d.vars[i - 1].name);
  }
  return vr;
}

// Model exchange: the standard's calling sequence, integrated by classical
// Runge-Kutta with `steps_per_output` equal steps per output interval.
Table RunModelExchange(Unpacked& u, double t_end, double dt_out, int steps_per_output,
                       const std::vector<std::pair<std::string, double>>& params = {}) {
  Table t;
  Fmu& f = u.fmu;
  Component c = f.Instantiate("me", fmi2ModelExchange, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  EXPECT_NE(c, nullptr);
  if (!c) return t;
  EXPECT_EQ(f.SetupExperiment(c, 0, 0, 0.0, 1, t_end), kOK);
  for (const auto& [name, value] : params) {
    const unsigned vr = u.desc.vr_of.at(name);
    EXPECT_EQ(f.SetReal(c, &vr, 1, &value), kOK) << name;
  }
  EXPECT_EQ(f.EnterInitializationMode(c), kOK);
  EXPECT_EQ(f.ExitInitializationMode(c), kOK);
  EventInfo info{1, 0, 0, 0, 0, 0};
  EXPECT_EQ(f.NewDiscreteStates(c, &info), kOK);
  EXPECT_EQ(info.newDiscreteStatesNeeded, 0);
  EXPECT_EQ(info.terminateSimulation, 0);
  EXPECT_EQ(f.EnterContinuousTimeMode(c), kOK);
  const size_t n = u.desc.derivatives.size();
  std::vector<double> x(n), k1(n), k2(n), k3(n), k4(n), tmp(n), nominal(n);
  EXPECT_EQ(f.GetContinuousStates(c, x.data(), n), kOK);
  EXPECT_EQ(f.GetNominalsOfContinuousStates(c, nominal.data(), n), kOK);
  EXPECT_EQ(u.desc.num_event_indicators, 0);
  EXPECT_EQ(f.GetEventIndicators(c, nullptr, 0), kOK);
  std::vector<std::string> names;
  const std::vector<unsigned> out = OutputRefs(u.desc, &names);
  t.columns = {"t"};
  t.columns.insert(t.columns.end(), names.begin(), names.end());
  auto deriv = [&](double time, const std::vector<double>& state, std::vector<double>& dx) {
    EXPECT_EQ(f.SetTime(c, time), kOK);
    EXPECT_EQ(f.SetContinuousStates(c, state.data(), n), kOK);
    EXPECT_EQ(f.GetDerivatives(c, dx.data(), n), kOK);
  };
  auto record = [&](double time) {
    EXPECT_EQ(f.SetTime(c, time), kOK);
    EXPECT_EQ(f.SetContinuousStates(c, x.data(), n), kOK);
    std::vector<double> row(out.size() + 1);
    row[0] = time;
    EXPECT_EQ(f.GetReal(c, out.data(), out.size(), row.data() + 1), kOK);
    t.rows.push_back(row);
  };
  const int num_out = static_cast<int>(std::lround(t_end / dt_out));
  const double h = dt_out / steps_per_output;
  record(0);
  for (int k = 0; k < num_out; ++k) {
    for (int s = 0; s < steps_per_output; ++s) {
      const double time = k * dt_out + s * h;
      deriv(time, x, k1);
      for (size_t i = 0; i < n; ++i) tmp[i] = x[i] + 0.5 * h * k1[i];
      deriv(time + 0.5 * h, tmp, k2);
      for (size_t i = 0; i < n; ++i) tmp[i] = x[i] + 0.5 * h * k2[i];
      deriv(time + 0.5 * h, tmp, k3);
      for (size_t i = 0; i < n; ++i) tmp[i] = x[i] + h * k3[i];
      deriv(time + h, tmp, k4);
      for (size_t i = 0; i < n; ++i) x[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
      int enter_event = 1, terminate = 1;
      EXPECT_EQ(f.CompletedIntegratorStep(c, 1, &enter_event, &terminate), kOK);
      EXPECT_EQ(enter_event, 0);
      EXPECT_EQ(terminate, 0);
    }
    record((k + 1) * dt_out);
  }
  EXPECT_EQ(f.Terminate(c), kOK);
  f.FreeInstance(c);
  return t;
}

// Co-simulation: fmi2DoStep from output time to output time.
Table RunCoSimulation(Unpacked& u, double t_end, double dt_out,
                      const std::vector<std::pair<std::string, double>>& params = {}) {
  Table t;
  Fmu& f = u.fmu;
  Component c = f.Instantiate("cs", fmi2CoSimulation, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  EXPECT_NE(c, nullptr);
  if (!c) return t;
  EXPECT_EQ(f.SetupExperiment(c, 0, 0, 0.0, 1, t_end), kOK);
  for (const auto& [name, value] : params) {
    const unsigned vr = u.desc.vr_of.at(name);
    EXPECT_EQ(f.SetReal(c, &vr, 1, &value), kOK) << name;
  }
  EXPECT_EQ(f.EnterInitializationMode(c), kOK);
  EXPECT_EQ(f.ExitInitializationMode(c), kOK);
  std::vector<std::string> names;
  const std::vector<unsigned> out = OutputRefs(u.desc, &names);
  t.columns = {"t"};
  t.columns.insert(t.columns.end(), names.begin(), names.end());
  auto record = [&](double time) {
    std::vector<double> row(out.size() + 1);
    row[0] = time;
    EXPECT_EQ(f.GetReal(c, out.data(), out.size(), row.data() + 1), kOK);
    t.rows.push_back(row);
  };
  const int num_out = static_cast<int>(std::lround(t_end / dt_out));
  record(0);
  for (int k = 0; k < num_out; ++k) {
    const Status st = f.DoStep(c, k * dt_out, dt_out, 1);
    EXPECT_EQ(st, kOK) << (g_log.empty() ? "" : g_log.back());
    if (st != kOK) break;
    record((k + 1) * dt_out);
  }
  double last = 0;
  EXPECT_EQ(f.GetRealStatus(c, fmi2LastSuccessfulTime, &last), kOK);
  EXPECT_NEAR(last, t_end, 1e-9);
  EXPECT_EQ(f.Terminate(c), kOK);
  f.FreeInstance(c);
  return t;
}

// B1. Co-simulation against simulate: both run Dormand-Prince 5(4) with
// ode45's control at rtol 1e-10, atol 1e-12, each within ~1e-9 of the exact
// solution (the damping contracts errors), so 1e-8 relative bounds their
// difference; they differ only in where the steps fall (the FMU stops at
// every communication point). Model exchange is this file's RK4 at h = 1e-3:
// against simulate's dopri5 its own truncation error counts (about
// (h/tau)^4 with the fastest time constant tau = JA/B = 0.033 s: 1e-6), and
// against simulate's rk4 at the same step only rounding differs.
TEST(FmiImporter, B1PendulumMatchesSimulate) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/B1_pendulum.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  EXPECT_STREQ(u.fmu.GetVersion(), "2.0");
  EXPECT_STREQ(u.fmu.GetTypesPlatform(), "default");
  const Table ref = Simulate("examples/B1_pendulum.yaml", "", 10, 0.1, u.dir);
  ExpectClose("B1 cs", ref, RunCoSimulation(u, 10, 0.1), 1e-8);
  ExpectClose("B1 me", ref, RunModelExchange(u, 10, 0.1, 100), 1e-6);
  const Table rk4 = Simulate("examples/B1_pendulum.yaml", "--method rk4 --step 1e-3", 10, 0.1, u.dir);
  ExpectClose("B1 me vs rk4", rk4, RunModelExchange(u, 10, 0.1, 100), 1e-10);
}

// A parameter set through fmi2SetReal before initialization changes the
// result as --param does. The mass M is tunable too: the derived parameter
// JA = Izz + M (L/2)^2 is a calculated parameter the FMU computes again from
// it, as simulate --param M=2 derives it; JA itself cannot be set.
TEST(FmiImporter, B1DampingSetBeforeInitializationActsAsParam) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/B1_pendulum.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  EXPECT_EQ(u.desc.Start("B"), 10);
  const Table ref10 = Simulate("examples/B1_pendulum.yaml", "", 2, 0.1, u.dir);
  const Table ref30 = Simulate("examples/B1_pendulum.yaml", "--param B=30", 2, 0.1, u.dir);
  const Table cs = RunCoSimulation(u, 2, 0.1, {{"B", 30}});
  ExpectClose("B1 B=30 cs", ref30, cs, 1e-8);
  ExpectClose("B1 B=30 me", ref30, RunModelExchange(u, 2, 0.1, 100, {{"B", 30}}), 1e-6);
  // The change is visible: B = 30 is not B = 10.
  const int g = cs.Column("gamma"), g10 = ref10.Column("gamma");
  EXPECT_GT(std::fabs(cs.rows.back()[g] - ref10.rows.back()[g10]), 1e-2);

  const Variable* ja = u.desc.Find("JA");
  ASSERT_NE(ja, nullptr);
  EXPECT_EQ(ja->causality, "calculatedParameter");
  EXPECT_EQ(ja->variability, "tunable");
  EXPECT_EQ(u.desc.Find("M")->variability, "tunable");
  const Table ref_m = Simulate("examples/B1_pendulum.yaml", "--param M=2", 2, 0.1, u.dir);
  const Table cs_m = RunCoSimulation(u, 2, 0.1, {{"M", 2}});
  ExpectClose("B1 M=2 cs", ref_m, cs_m, 1e-8);
  EXPECT_GT(std::fabs(cs_m.rows.back()[g] - ref10.rows.back()[g10]), 1e-2);

  Component c = u.fmu.Instantiate("p", fmi2CoSimulation, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  ASSERT_NE(c, nullptr);
  g_log.clear();
  const unsigned ja_vr = u.desc.vr_of.at("JA"), mass = u.desc.vr_of.at("M");
  const double two = 2;
  EXPECT_EQ(u.fmu.SetReal(c, &ja_vr, 1, &two), kError);
  ASSERT_FALSE(g_log.empty());
  EXPECT_NE(g_log.back().find("calculated parameter"), std::string::npos) << g_log.back();
  // JA follows M at once: Izz + M (L/2)^2 with the export's Izz and L.
  EXPECT_EQ(u.fmu.SetReal(c, &mass, 1, &two), kOK);
  EXPECT_EQ(u.fmu.EnterInitializationMode(c), kOK);
  double ja_value = 0;
  EXPECT_EQ(u.fmu.GetReal(c, &ja_vr, 1, &ja_value), kOK);
  const double L = u.desc.Start("L"), izz = u.desc.Start("Izz");
  EXPECT_NEAR(ja_value, izz + 2 * (L / 2) * (L / 2), 1e-15);
  u.fmu.FreeInstance(c);
}

// The rows of a run of tests/fmi2_master.c (defined below), and of a second run after fmi2Reset.
struct MasterRun {
  Table first, second;
};
MasterRun RunMaster(const Unpacked& u, const std::string& kind, double t_end, double dt_out, const std::string& options,
                    const std::string& name);

// ---- events: state events with resets, time events of sampled controllers ----

// What a model-exchange run with events went through.
struct EventCounts {
  int state_events = 0, time_events = 0, resets = 0;
};

// Model exchange with events, as an FMI 2.0 master integrates a model with
// event indicators and time events: classical Runge-Kutta at step h, each
// step shortened to end on an output time or on the next time event the FMU
// announced (fmi2EventInfo's nextEventTime). After each step the indicators
// are compared with the signs they had before it; a sign change is located by
// bisection on the step's cubic Hermite interpolant (the derivatives at both
// ends) to 4 units of rounding of t, the FMU is put at the first point past
// it and event mode entered (fmi2NewDiscreteStates until it asks for no
// more), and the states are read again. An output time that an event falls
// on gives the row before the event, as simulate's CSV does.
Table RunModelExchangeWithEvents(Unpacked& u, double t_end, double dt_out, double h, EventCounts* count) {
  Table tab;
  Fmu& f = u.fmu;
  Component c = f.Instantiate("me", fmi2ModelExchange, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  EXPECT_NE(c, nullptr);
  if (!c) return tab;
  const size_t n = u.desc.derivatives.size(), ni = static_cast<size_t>(u.desc.num_event_indicators);
  std::vector<double> x(n), x1(n), xe(n), k1(n), k2(n), k3(n), k4(n), f1(n), tmp(n), g1(ni), gt(ni);
  std::vector<int> last_sign(ni, 0);
  std::vector<std::string> names;
  const std::vector<unsigned> out = OutputRefs(u.desc, &names);
  tab.columns = {"t"};
  tab.columns.insert(tab.columns.end(), names.begin(), names.end());
  bool next_defined = false, stop = false;
  double next_time = 0;
  auto sign = [](double v) { return v > 0 ? 1 : (v < 0 ? -1 : 0); };
  auto at = [&](double time, const std::vector<double>& state) {
    EXPECT_EQ(f.SetTime(c, time), kOK);
    EXPECT_EQ(f.SetContinuousStates(c, state.data(), n), kOK);
  };
  auto deriv = [&](double time, const std::vector<double>& state, std::vector<double>& dx) {
    at(time, state);
    EXPECT_EQ(f.GetDerivatives(c, dx.data(), n), kOK);
  };
  auto record = [&](double time, const std::vector<double>& state) {
    at(time, state);
    std::vector<double> row(out.size() + 1);
    row[0] = time;
    EXPECT_EQ(f.GetReal(c, out.data(), out.size(), row.data() + 1), kOK);
    tab.rows.push_back(row);
  };
  // In event mode: the event iteration, then back to continuous time.
  auto event_iteration = [&]() {
    fmi2EventInfo info{};
    info.newDiscreteStatesNeeded = fmi2True;
    bool reset = false;
    for (int k = 0; k < 100 && info.newDiscreteStatesNeeded; ++k) {
      EXPECT_EQ(f.NewDiscreteStates(c, &info), kOK) << (g_log.empty() ? "" : g_log.back());
      reset = reset || info.valuesOfContinuousStatesChanged;
    }
    EXPECT_FALSE(info.newDiscreteStatesNeeded);
    if (reset) ++count->resets;
    stop = info.terminateSimulation;
    next_defined = info.nextEventTimeDefined;
    next_time = info.nextEventTime;
    EXPECT_EQ(f.EnterContinuousTimeMode(c), kOK);
    EXPECT_EQ(f.GetContinuousStates(c, x.data(), n), kOK);
    if (ni) {
      EXPECT_EQ(f.GetEventIndicators(c, gt.data(), ni), kOK);
    }
    for (size_t i = 0; i < ni; ++i)
      if (gt[i] != 0) last_sign[i] = sign(gt[i]);
  };
  auto hermite = [&](double t0, double hs, double time, std::vector<double>& y) {
    const double s = (time - t0) / hs, s2 = s * s, s3 = s2 * s;
    for (size_t i = 0; i < n; ++i)
      y[i] = (2 * s3 - 3 * s2 + 1) * x[i] + (s3 - 2 * s2 + s) * hs * k1[i] + (-2 * s3 + 3 * s2) * x1[i] +
             (s3 - s2) * hs * f1[i];
  };
  EXPECT_EQ(f.SetupExperiment(c, 0, 0, 0.0, 1, t_end), kOK);
  EXPECT_EQ(f.EnterInitializationMode(c), kOK);
  EXPECT_EQ(f.ExitInitializationMode(c), kOK);
  event_iteration();
  record(0, x);
  double t = 0;
  const int num_out = static_cast<int>(std::lround(t_end / dt_out));
  for (int k = 0; k < num_out && !stop; ++k) {
    const double T = (k + 1) * dt_out;
    bool recorded = false;
    while (t < T && !stop) {
      double t1 = t + h >= T - 1e-9 * h ? T : t + h;
      bool time_event = false;
      if (next_defined) {
        EXPECT_GT(next_time, t) << "a time event announced for the past";
        if (next_time <= t1) t1 = next_time, time_event = true;
      }
      const double hs = t1 - t;
      deriv(t, x, k1);
      for (size_t i = 0; i < n; ++i) tmp[i] = x[i] + 0.5 * hs * k1[i];
      deriv(t + 0.5 * hs, tmp, k2);
      for (size_t i = 0; i < n; ++i) tmp[i] = x[i] + 0.5 * hs * k2[i];
      deriv(t + 0.5 * hs, tmp, k3);
      for (size_t i = 0; i < n; ++i) tmp[i] = x[i] + hs * k3[i];
      deriv(t1, tmp, k4);
      for (size_t i = 0; i < n; ++i) x1[i] = x[i] + hs / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
      deriv(t1, x1, f1);  // the FMU stands at (t1, x1)
      if (ni) {
        EXPECT_EQ(f.GetEventIndicators(c, g1.data(), ni), kOK);
      }
      double te = INFINITY;
      for (size_t i = 0; i < ni; ++i) {
        const int s1 = sign(g1[i]);
        if (s1 == 0 || s1 == last_sign[i]) continue;
        double a = t, b = t1;
        while (b - a > 4 * 2.220446049250313e-16 * std::max(1.0, std::fabs(b))) {
          const double mid = 0.5 * (a + b);
          hermite(t, hs, mid, xe);
          at(mid, xe);
          EXPECT_EQ(f.GetEventIndicators(c, gt.data(), ni), kOK);
          (sign(gt[i]) == s1 ? b : a) = mid;
        }
        te = std::min(te, b);
      }
      if (te < INFINITY) {  // a state event at te
        if (te == t1) xe = x1;
        else hermite(t, hs, te, xe);
        if (te == T) record(T, xe), recorded = true;
        at(te, xe);
        EXPECT_EQ(f.EnterEventMode(c), kOK);
        ++count->state_events;
        event_iteration();
        t = te;
        continue;
      }
      at(t1, x1);
      int enter_event = 1, terminate = 1;
      EXPECT_EQ(f.CompletedIntegratorStep(c, 1, &enter_event, &terminate), kOK);
      x = x1;
      t = t1;
      for (size_t i = 0; i < ni; ++i)
        if (g1[i] != 0) last_sign[i] = sign(g1[i]);
      if (time_event) {
        if (t == T) record(T, x), recorded = true;
        EXPECT_EQ(f.EnterEventMode(c), kOK);
        ++count->time_events;
        event_iteration();
      }
    }
    if (!recorded) record(T, x);
  }
  EXPECT_EQ(f.Terminate(c), kOK);
  f.FreeInstance(c);
  return tab;
}

// The bouncing ball (examples/bouncing_ball.yaml: an event `h < 0` that
// resets p_mass to -e p_mass). Between impacts the motion is a parabola,
// which both integrators follow exactly (Dormand-Prince, Runge-Kutta and the
// Hermite interpolant are exact for polynomials of degree 2), and the impacts
// are located to a few units of rounding of t, so the FMU, by co-simulation
// and by this master's model exchange, agrees with simulate to rounding:
// 1e-9 relative bounds differences that are of order 1e-14. The impacts are
// those of the closed form t_1 = sqrt(2 h0/g), t_(k+1) = t_k + 2 e^k
// sqrt(2 g h0)/g (k = 1, 2, ...): 9 before 3.5 s (they accumulate at 4.065 s).
TEST(FmiImporter, BouncingBallEventsMatchSimulate) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/bouncing_ball.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  EXPECT_EQ(u.desc.num_event_indicators, 1);
  EXPECT_EQ(u.desc.Find("e")->variability, "tunable");  // read by the impact's reset only
  int impacts = 0;
  for (double tk = std::sqrt(2 / 9.81), dt = 0.8 * 2 * std::sqrt(2 * 9.81) / 9.81; tk < 3.5; tk += dt, dt *= 0.8)
    ++impacts;
  EXPECT_EQ(impacts, 9);
  const Table ref = GridRows(Simulate("examples/bouncing_ball.yaml", "", 3.5, 0.01, u.dir), 3.5, 0.01);
  ExpectClose("ball cs", ref, RunCoSimulation(u, 3.5, 0.01), 1e-9);
  EventCounts count;
  ExpectClose("ball me", ref, RunModelExchangeWithEvents(u, 3.5, 0.01, 1e-3, &count), 1e-9);
  // Each impact is an event with a reset; the master also stops where h turns
  // positive again (FMI 2.0 masters see every sign change), which changes nothing.
  EXPECT_EQ(count.resets, impacts);
  EXPECT_EQ(count.state_events, 2 * impacts);
  EXPECT_EQ(count.time_events, 0);
  // The restitution set between runs (a tunable parameter read by the reset only).
  const Table ref_e = GridRows(Simulate("examples/bouncing_ball.yaml", "--param e=0.5", 2, 0.01, u.dir), 2, 0.01);
  ExpectClose("ball e=0.5 cs", ref_e, RunCoSimulation(u, 2, 0.01, {{"e", 0.5}}), 1e-9);
  // The master on the standard's own headers (tests/fmi2_master.c), by co-simulation.
  ExpectClose("ball cs (fmi2_master)", ref, RunMaster(u, "cs", 3.5, 0.01, "--tolerance 1e-10", "ball_master").first,
              1e-9);
  // Without event handling the ball would fall through the floor: the height stays >= 0 up to rounding.
  const Table cs = RunCoSimulation(u, 3.5, 0.01);
  for (const auto& row : cs.rows) EXPECT_GE(row[cs.Column("h")], -1e-12) << "t = " << row[0];
}

// Co-simulation by classical Runge-Kutta (--method rk4): the impacts are
// located on each step's cubic Hermite interpolant, exact for the parabola.
TEST(FmiImporter, BouncingBallEventsRk4CoSimulation) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/bouncing_ball.yaml", "--kind cs --method rk4 --step 1e-2", &u));
  const Table ref = GridRows(Simulate("examples/bouncing_ball.yaml", "", 3.5, 0.01, u.dir), 3.5, 0.01);
  ExpectClose("ball cs rk4", ref, RunCoSimulation(u, 3.5, 0.01), 1e-9);
}

// The 1 kHz sampled PI controller of examples/dc_motor_sampled_control.yaml
// (a discrete_pid block: an event `t >= tk` at every sample, resetting the
// held voltage, the integral and tk; the setpoint's step_at(0.1) is a
// condition on t; the output limits are conditions too). Its indicators
// t - tk and t - 0.1 are time events: model exchange announces them in
// nextEventTime. Outputs every 1 ms fall on the samples, where the row is
// the one before the sample in simulate's CSV, in co-simulation and in model
// exchange alike. Co-simulation at rtol 1e-10 against simulate at rtol 1e-10
// (both Dormand-Prince with ode45's control, steps no longer than 1 ms): at
// most 4e-11 relative to 1 + the output's largest value (motor.i, 7.6e-10 A
// of 18.5 A); model exchange is this file's Runge-Kutta at h = 1e-5 s (the
// electrical time constant L/R is 1.7 ms), 3e-11 (5.7e-10 A). Both within
// 1e-9: the samples fall at the same instants (to rounding; the sample and
// the setpoint's step at 0.1 s are one event in both) and hold the same values.
TEST(FmiImporter, SampledControllerTimeEventsMatchSimulate) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/dc_motor_sampled_control.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  EXPECT_GE(u.desc.num_event_indicators, 2);
  const double t_end = 0.3, dt = 1e-3;
  const Table ref = GridRows(Simulate("examples/dc_motor_sampled_control.yaml", "", t_end, dt, u.dir), t_end, dt);
  ExpectClose("sampled cs", ref, RunCoSimulation(u, t_end, dt), 1e-9);
  EventCounts count;
  ExpectClose("sampled me", ref, RunModelExchangeWithEvents(u, t_end, dt, 1e-5, &count), 1e-9);
  std::printf("sampled me: %d time events, %d state events, %d with resets\n", count.time_events, count.state_events,
              count.resets);
  // One reset per sample: at 1, 2, ... 300 ms (the last one at t_end or just after it).
  EXPECT_GE(count.resets, 299);
  EXPECT_LE(count.resets, 300);
  EXPECT_GE(count.time_events, 299);  // the samples come as time events, not located crossings
  // The controller acts: the speed follows the setpoint's step at 0.1 s.
  const int speed = ref.Column("speed");
  EXPECT_GT(ref.rows.back()[speed], 30);
}

// Switched elements (docs/events.md): Coulomb friction that sticks and slips
// (examples/belt_friction.yaml) and an ideal diode (half_wave_rectifier.yaml).
// Their switches are state events with two indicators per element; the FMU
// changes their modes as simulate does. Largest differences to simulate
// (rtol 1e-10): belt 7.9e-12 (CS) and 1.4e-10 (ME, Runge-Kutta at dt/10),
// rectifier 1.5e-9 and 1.4e-9 (v_out, of 8.9 V); within 1e-8 relative.
TEST(FmiImporter, SwitchedElementsMatchSimulate) {
  for (const auto& [model, t_end, dt] : {std::tuple{"examples/belt_friction.yaml", 5.0, 0.01},
                                         std::tuple{"examples/half_wave_rectifier.yaml", 0.1, 1e-4}}) {
    Unpacked u;
    ASSERT_NO_FATAL_FAILURE(ExportAndUnpack(model, "--rtol 1e-10 --atol 1e-12", &u));
    EXPECT_GE(u.desc.num_event_indicators, 2) << model;
    const Table ref = GridRows(Simulate(model, "", t_end, dt, u.dir), t_end, dt);
    ExpectClose(model, ref, RunCoSimulation(u, t_end, dt), 1e-8);
    EventCounts count;
    ExpectClose(model, ref, RunModelExchangeWithEvents(u, t_end, dt, dt / 10, &count), 1e-8);
    std::printf("%s me: %d state events\n", model, count.state_events);
    EXPECT_GE(count.state_events, 4) << model;
  }
}
// Events that the instant itself makes true (docs/events.md): `kick` compares
// step_at(0.3), which jumps, and `echo` turns true when kick's reset moves
// p_a; a square wave's rising edges count on p_c. The FMU fires them as
// simulate does: by co-simulation and by this master's model exchange, the
// same rows as simulate's to 1e-9 (the motion is a straight line between
// the events), and the counts of the closed form.
TEST(FmiImporter, EventsOnJumpingSignalsAndCascadesMatchSimulate) {
  const fs::path dir = TestDir("EventsOnJumpingSignals_model");
  const fs::path model = dir / "kick.yaml";
  std::ofstream(model) << R"yaml(elements:
  - {name: ja, kind: "1"}
  - {name: a, kind: I, inertance: 1, initial: 0}
  - {name: push, kind: Se, effort: 1}
  - {name: jb, kind: "1"}
  - {name: b, kind: I, inertance: 1, initial: 0}
  - {name: zb, kind: Se, effort: 0}
  - {name: jc, kind: "1"}
  - {name: c, kind: I, inertance: 1, initial: 0}
  - {name: zc, kind: Se, effort: 0}
bonds: [[push, ja], [ja, a], [zb, jb], [jb, b], [zc, jc], [jc, c]]
events:
  - {name: kick, when: step_at(0.3) > 0.5, reset: {p_a: 10}}
  - {name: echo, when: p_a > 5, reset: {p_b: p_a + 1}}
  - {name: edge, when: "square(0, 0.2) > 0", reset: {p_c: p_c + 1}}
outputs: {pa: p_a, pb: p_b, count: p_c}
)yaml";
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack(model.string(), "--rtol 1e-10 --atol 1e-12", &u));
  const Table ref = GridRows(Simulate(model.string(), "", 0.9, 0.01, u.dir), 0.9, 0.01);
  const Table& last = ref;
  EXPECT_NEAR(last.rows.back()[last.Column("pa")], 10.6, 1e-9);  // 10 at 0.3, then + (t - 0.3)
  EXPECT_EQ(last.rows.back()[last.Column("pb")], 11.0);           // from p_a after the kick
  EXPECT_EQ(last.rows.back()[last.Column("count")], 4.0);         // edges at 0.2, 0.4, 0.6, 0.8
  ExpectClose("kick cs", ref, RunCoSimulation(u, 0.9, 0.01), 1e-9);
  EventCounts count;
  ExpectClose("kick me", ref, RunModelExchangeWithEvents(u, 0.9, 0.01, 1e-3, &count), 1e-9);
}

// B3 (Hamilton's form, a linear implicit block in the state derivatives).
// Co-simulation as for B1: simulate's own error at rtol 1e-10 (against rtol
// 1e-12) is 1.2e-5 on theta1dot (scale 47), 1e-7 on the others, so 1e-6
// relative bounds the difference of two such runs. The crank's rate is
// so sensitive that a fixed step of 1e-4 is still 28 rad/s off the adaptive
// runs (simulate --method rk4 shows the same), so model exchange is compared
// with simulate's rk4 at the importer's step: the same method on the same
// equations, apart from rounding.
TEST(FmiImporter, B3QuickReturnMatchesSimulate) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/B3_quick_return.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  const Table ref = Simulate("examples/B3_quick_return.yaml", "", 10, 0.1, u.dir);
  ExpectClose("B3 cs", ref, RunCoSimulation(u, 10, 0.1), 1e-6);
  const Table rk4 = Simulate("examples/B3_quick_return.yaml", "--method rk4 --step 1e-4", 10, 0.1, u.dir);
  ExpectClose("B3 me", rk4, RunModelExchange(u, 10, 0.1, 1000), 1e-8);
}

// B4 (a mechanism under multibody:, exported in joint coordinates: the mass
// matrix solved as an implicit block at every evaluation), against simulate
// in the same form.
TEST(FmiImporter, B4SpatialArmMatchesSimulate) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/B4_spatial_arm.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  const Table ref = Simulate("examples/B4_spatial_arm.yaml", "--form lagrange2", 5, 0.05, u.dir);
  ExpectClose("B4 cs", ref, RunCoSimulation(u, 5, 0.05), 1e-7);
  ExpectClose("B4 me", ref, RunModelExchange(u, 5, 0.05, 200), 1e-6);
  const Table rk4 = Simulate("examples/B4_spatial_arm.yaml", "--form lagrange2 --method rk4 --step 2.5e-4", 5, 0.05, u.dir);
  ExpectClose("B4 me vs rk4", rk4, RunModelExchange(u, 5, 0.05, 200), 1e-9);
}

// Calls out of the standard's sequence return fmi2Error with a logged message;
// nothing crashes.
TEST(FmiImporter, BadCallSequencesAreErrors) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/B1_pendulum.yaml", "", &u));
  Fmu& f = u.fmu;
  EXPECT_EQ(f.Instantiate("x", fmi2CoSimulation, "{not-the-guid}", "", &kCallbacks, 0, 0), nullptr);
  EXPECT_EQ(f.Instantiate("x", fmi2CoSimulation, u.desc.guid.c_str(), "", nullptr, 0, 0), nullptr);
  EXPECT_EQ(f.Instantiate("x", static_cast<fmi2Type>(7), u.desc.guid.c_str(), "", &kCallbacks, 0, 0), nullptr);
  auto expect_error = [&](Status s, const std::string& needle) {
    EXPECT_EQ(s, kError);
    ASSERT_FALSE(g_log.empty());
    EXPECT_NE(g_log.back().find(needle), std::string::npos) << g_log.back();
    g_log.clear();
  };
  g_log.clear();
  Component cs = f.Instantiate("cs", fmi2CoSimulation, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  ASSERT_NE(cs, nullptr);
  expect_error(f.DoStep(cs, 0, 0.1, 1), "fmi2DoStep may not be called in instantiated");
  expect_error(f.ExitInitializationMode(cs), "fmi2ExitInitializationMode may not be called");
  double x[2];
  expect_error(f.GetDerivatives(cs, x, 2), "fmi2GetDerivatives");
  const unsigned unknown = 99999;
  double v = 1;
  expect_error(f.SetReal(cs, &unknown, 1, &v), "unknown");
  expect_error(f.GetFMUstate(cs, nullptr), "not supported");
  expect_error(f.GetDirectionalDerivative(cs, nullptr, 0, nullptr, 0, nullptr, nullptr), "not supported");
  int iv = 0;
  expect_error(f.GetInteger(cs, &unknown, 1, &iv), "no Integer variables");
  EXPECT_EQ(f.SetupExperiment(cs, 0, 0, 0, 0, 0), kOK);
  EXPECT_EQ(f.EnterInitializationMode(cs), kOK);
  expect_error(f.EnterInitializationMode(cs), "may not be called in initialization mode");
  EXPECT_EQ(f.ExitInitializationMode(cs), kOK);
  expect_error(f.DoStep(cs, 0.5, 0.1, 1), "the step starts at");
  expect_error(f.DoStep(cs, 0, -1, 1), "step size");
  expect_error(f.CancelStep(cs), "no step is pending");
  const unsigned time_vr = 0;
  expect_error(f.SetReal(cs, &time_vr, 1, &v), "cannot be set");
  EXPECT_EQ(f.DoStep(cs, 0, 0.1, 1), kOK);
  EXPECT_EQ(f.Terminate(cs), kOK);
  expect_error(f.DoStep(cs, 0.1, 0.1, 1), "may not be called in terminated");
  EXPECT_EQ(f.Reset(cs), kOK);  // back to instantiated: a new run may start
  EXPECT_EQ(f.EnterInitializationMode(cs), kOK);
  f.FreeInstance(cs);

  Component me = f.Instantiate("me", fmi2ModelExchange, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  ASSERT_NE(me, nullptr);
  expect_error(f.SetTime(me, 1), "fmi2SetTime may not be called in instantiated");
  EXPECT_EQ(f.EnterInitializationMode(me), kOK);
  EXPECT_EQ(f.ExitInitializationMode(me), kOK);
  const double states[2] = {0, 0};
  expect_error(f.SetContinuousStates(me, states, 2), "may not be called in event mode");
  EXPECT_EQ(f.EnterContinuousTimeMode(me), kOK);
  expect_error(f.SetContinuousStates(me, states, 3), "expected 2 states");
  expect_error(f.DoStep(me, 0, 0.1, 1), "co-simulation function");
  expect_error(f.GetEventIndicators(me, x, 1), "has 0 event indicators, asked for 1");
  const unsigned state_vr = u.desc.vr_of.at("p_bar");
  expect_error(f.SetReal(me, &state_vr, 1, &v), "may be set only before initialization ends");
  const unsigned b_vr = u.desc.vr_of.at("B");
  expect_error(f.SetReal(me, &b_vr, 1, &v), "may not be set in continuous-time mode");
  EXPECT_EQ(f.EnterEventMode(me), kOK);
  const double nan = NAN;
  expect_error(f.SetReal(me, &b_vr, 1, &nan), "not finite");
  EXPECT_EQ(f.SetReal(me, &b_vr, 1, &v), kOK);  // a tunable parameter, in event mode
  EXPECT_EQ(f.Terminate(me), kOK);
  f.FreeInstance(me);
  f.FreeInstance(nullptr);  // allowed, does nothing
}

// The command's errors follow the project's diagnostics, and no file appears.
TEST(FmiImporter, CommandErrors) {
  const fs::path dir = TestDir("errors");
  const fs::path out = dir / "x.fmu";
  const std::string exe = PAYNTER_EXE;
  Result r = Shell(exe + " fmu " + (dir / "missing.yaml").string() + " -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  EXPECT_NE(r.output.find("cannot open the model file"), std::string::npos) << r.output;
  r = Shell(exe + " fmu " + Source("examples/B4_spatial_arm.yaml") + " --form state -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  EXPECT_NE(r.output.find("constraint rows"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--form lagrange2"), std::string::npos) << r.output;
  r = Shell(exe + " fmu " + Source("examples/fourbar.yaml") + " -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  EXPECT_NE(r.output.find("--constraints parasitic"), std::string::npos) << r.output;
  r = Shell(exe + " fmu " + Source("examples/B1_pendulum.yaml") + " --constraints zcp -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  EXPECT_NE(r.output.find("not available in an FMU"), std::string::npos) << r.output;
  r = Shell(exe + " fmu " + Source("examples/B1_pendulum.yaml") + " --param nosuch=1 -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  r = Shell(exe + " fmu " + Source("examples/B1_pendulum.yaml") + " --method bdf -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  // An input takes the place of its source's law, which may not vary by itself.
  const fs::path models = TestDir("errors_models");
  std::string yaml = ReadText(Source("examples/rlc.yaml"));
  yaml.replace(yaml.find("effort: V,"), std::string("effort: V,").size(), "effort: \"V*sin(t)\",");
  std::ofstream(models / "rlc_sine.yaml") << yaml;
  r = Shell(exe + " fmu " + (models / "rlc_sine.yaml").string() + " -o " + out.string());
  EXPECT_EQ(r.status >> 8, 1) << r.output;
  EXPECT_NE(r.output.find("rlc_sine.yaml:10:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("an input of the FMU takes the place of the source's law"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
  // Nothing but the (absent) target was left in the directory: no temporaries.
  EXPECT_TRUE(fs::is_empty(dir));
}

// A closed chain runs with compliant joints (parasitic): the FMU's
// co-simulation against simulate with the same method, integrator and tolerances.
TEST(FmiImporter, ClosedChainWithParasiticJoints) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/fourbar.yaml",
                                          "--form state --constraints parasitic --rtol 1e-8 --atol 1e-10", &u));
  const fs::path csv = u.dir / "simulate.csv";
  const Result r = Shell(std::string(PAYNTER_EXE) + " simulate " + Source("examples/fourbar.yaml") +
                       " --constraints parasitic --method dopri5 --rtol 1e-8 --atol 1e-10 --t-end 0.5 --dt-out 0.05 "
                       "-o " + csv.string());
  ASSERT_EQ(r.status, 0) << r.output;
  ExpectClose("fourbar parasitic cs", ReadCsv(csv), RunCoSimulation(u, 0.5, 0.05), 1e-5);
}

}  // namespace

namespace {

// Names from the model reach the description escaped and nothing else (an
// element's or output's name is an identifier; a model's name may be any
// text): a model named with markup, quotes and shell syntax gives a well-formed description, a
// generated identifier and a working shared object; --kind cs leaves model
// exchange out (and fmi2Instantiate refuses it).
TEST(FmiImporter, HostileNamesAndCoSimulationOnly) {
  const fs::path dir = TestDir("hostile");
  std::string yaml = ReadText(Source("examples/B1_pendulum.yaml"));
  const std::string hostile = "name: \"x\\\"<b>&'$(touch pwned);/* */\"";
  yaml.replace(yaml.find("name: B1_pendulum"), std::string("name: B1_pendulum").size(), hostile);
  std::ofstream(dir / "hostile.yaml") << yaml;
  const fs::path fmu = dir / "h.fmu";
  Result r = Shell(std::string(PAYNTER_EXE) + " fmu " + (dir / "hostile.yaml").string() + " --kind cs -o " +
                   fmu.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(fs::exists(dir / "pwned"));
  r = Shell("cd " + dir.string() + " && unzip -q h.fmu -d unpacked");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(fs::exists(dir / "pwned"));
  const Description d = CheckModelDescription(ReadText(dir / "unpacked" / "modelDescription.xml"));
  EXPECT_TRUE(d.identifier_me.empty());
  ASSERT_FALSE(d.identifier_cs.empty());
  for (char c : d.identifier_cs) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_') << d.identifier_cs;
  EXPECT_EQ(d.model_name, "x\"<b>&'$(touch pwned);/* */");
  for (const char* f : {"model.h", "model.c", "rhs.c", "outputs.c"}) {
    const std::string c = ReadText(dir / "unpacked" / "sources" / f);
    EXPECT_EQ(c.find("pwned"), std::string::npos) << f;
    EXPECT_EQ(c.find("xG"), std::string::npos) << f;  // no name of the model's either
  }
  Fmu f;
  ASSERT_NO_FATAL_FAILURE(f.Load((dir / "unpacked" / "binaries" / "linux64" / (d.identifier_cs + ".so")).string()));
  g_log.clear();
  EXPECT_EQ(f.Instantiate("me", fmi2ModelExchange, d.guid.c_str(), "", &kCallbacks, 0, 0), nullptr);
  ASSERT_FALSE(g_log.empty());
  EXPECT_NE(g_log.back().find("not exported for model exchange"), std::string::npos) << g_log.back();
  Component c = f.Instantiate("cs", fmi2CoSimulation, d.guid.c_str(), "", &kCallbacks, 0, 0);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(f.EnterInitializationMode(c), kOK);
  EXPECT_EQ(f.ExitInitializationMode(c), kOK);
  EXPECT_EQ(f.DoStep(c, 0, 0.5, 1), kOK);
  double xg = 0;
  const unsigned vr = d.vr_of.at("xG");
  EXPECT_EQ(f.GetReal(c, &vr, 1, &xg), kOK);
  EXPECT_GT(xg, 0);  // the bar hangs below its pivot, to the right of it after half a second
  EXPECT_LT(xg, 0.5);
  f.FreeInstance(c);
}

}  // namespace

namespace {

// ---- inputs, units and tunable parameters, driven by tests/fmi2_master.c ----

// A run of fmi2_master on an unpacked FMU: the outputs in their display units
// (as simulate writes them), under their names.
MasterRun RunMaster(const Unpacked& u, const std::string& kind, double t_end, double dt_out, const std::string& options,
                    const std::string& name) {
  std::vector<std::string> names;
  const std::vector<unsigned> vrs = OutputRefs(u.desc, &names);
  std::string out;
  for (unsigned vr : vrs) out += (out.empty() ? "" : ",") + std::to_string(vr);
  const fs::path csv1 = u.dir / (name + "_1.csv"), csv2 = u.dir / (name + "_2.csv");
  const Result r = Shell(std::string(FMI2_MASTER) + " " + u.so + " '" + u.desc.guid + "' " + kind + " " + Num(t_end) +
                         " " + Num(dt_out) + " --nx " + std::to_string(u.desc.derivatives.size()) + " --out " + out +
                         " --csv " + csv1.string() + " --then-csv " + csv2.string() + " " + options);
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
      for (size_t k = 1; k < values.size() && k - 1 < names.size(); ++k) values[k] *= u.desc.DisplayFactor(names[k - 1]);
      table->rows.push_back(values);
    }
  }
  return m;
}

std::string Vr(const Unpacked& u, const std::string& name) {
  EXPECT_TRUE(u.desc.vr_of.count(name)) << name;
  return u.desc.vr_of.count(name) ? std::to_string(u.desc.vr_of.at(name)) : "0";
}

// The description of the DC motor with units: the supply is an input (its
// start value the law's 12 V), every variable with a dimension has its SI
// unit with the exponents of its base units, the units written in the model
// are display units with their factors, the parameters are tunable and the
// voltage V, which only the supply's law read, is fixed and says so.
TEST(FmiImporter, DcMotorInputsUnitsAndParameters) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/dc_motor_units.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  const Variable* supply = u.desc.Find("supply");
  ASSERT_NE(supply, nullptr);
  EXPECT_EQ(supply->causality, "input");
  EXPECT_EQ(supply->variability, "continuous");
  EXPECT_EQ(supply->start, 12);
  EXPECT_EQ(supply->unit, "V");
  const std::map<std::string, int> volt = {{"kg", 1}, {"m", 2}, {"s", -3}, {"A", -1}};
  EXPECT_EQ(u.desc.units.at("V").base, volt);
  const Variable* speed = u.desc.Find("speed");
  ASSERT_NE(speed, nullptr);
  EXPECT_EQ(speed->unit, "1/s");
  EXPECT_EQ(speed->display_unit, "rpm");
  EXPECT_EQ(u.desc.units.at("1/s").base, (std::map<std::string, int>{{"s", -1}}));
  EXPECT_NEAR(u.desc.DisplayFactor("speed"), 60 / (2 * M_PI), 1e-14);
  EXPECT_EQ(u.desc.Find("current")->unit, "A");
  EXPECT_NE(u.desc.Find("current")->description.find("f_armature"), std::string::npos);
  const Variable* la = u.desc.Find("La");
  ASSERT_NE(la, nullptr);
  EXPECT_EQ(la->causality, "parameter");
  EXPECT_EQ(la->variability, "tunable");
  EXPECT_EQ(la->unit, "H");
  EXPECT_EQ(la->display_unit, "mH");
  EXPECT_NEAR(la->start, 5e-3, 1e-18);
  EXPECT_NEAR(u.desc.DisplayFactor("La"), 1000, 1e-12);
  for (const char* p : {"Ra", "K", "J", "b"}) {
    ASSERT_NE(u.desc.Find(p), nullptr) << p;
    EXPECT_EQ(u.desc.Find(p)->variability, "tunable") << p;
  }
  EXPECT_EQ(u.desc.Find("Ra")->unit, "Ohm");
  const Variable* v = u.desc.Find("V");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->causality, "local");
  EXPECT_NE(v->description.find("not read"), std::string::npos) << v->description;
  // States and their derivatives: the inductance's flux linkage in V s (Wb), the rotor's momentum in N m s.
  EXPECT_EQ(u.desc.Find("p_armature_L")->unit, "Wb");  // V s
  EXPECT_EQ(u.desc.Find("der(p_armature_L)")->unit, "V");
  EXPECT_EQ(u.desc.Find("p_rotor_J")->unit, "N m s");
}

constexpr double kStepTime = 3.0 / 256, kDtOut = 1.0 / 256, kEnd = 32.0 / 256, kH = 1.0 / 131072;

// The master drives the supply with a step (0 to 12 V at t = 3/256 s) and
// with a sine (12 V at 20 Hz): model exchange with its own Runge-Kutta at
// h = 2^-17 s, setting the input at every stage; co-simulation, setting it at
// every communication point (1/256 s). The reference is simulate of the
// model with the supply's law written as that signal (for co-simulation's
// sine: the held values, as a table with a jump at each point). All agree to
// 1e-8 of each output's largest value. Between two runs the master sets the
// armature resistance (after fmi2Reset), as simulate --param does.
TEST(FmiImporter, DcMotorDrivenByAMaster) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/dc_motor_units.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  const std::string supply = Vr(u, "supply"), ra = Vr(u, "Ra");
  const std::string law = "effort: V, input: true";
  const fs::path step = ModelVariant("dc_motor_units", law, "effort: \"12*step_at(" + Num(kStepTime) + ")\"", u.dir, "step");
  const fs::path sine = ModelVariant("dc_motor_units", law, "effort: \"12 [V]*sin(2*pi*20 [1/s]*t)\"", u.dir, "sine");
  std::string held = "table([";
  std::string values;
  for (int k = 0; k < 32; ++k) {
    const double t0 = k * kDtOut, v = 12 * std::sin(2 * M_PI * 20 * t0);
    held += (k ? ", " : "") + Num(t0) + ", " + Num((k + 1) * kDtOut);
    values += (k ? ", " : "") + Num(v) + ", " + Num(v);
  }
  held += "], [" + values + "])";
  const fs::path zoh = ModelVariant("dc_motor_units", law, "effort: \"" + held + "\"", u.dir, "zoh");

  const std::string step_input = " --input " + supply + "=step:" + Num(kStepTime) + ":0:12";
  const std::string sine_input = " --input " + supply + "=sine:0:12:20";
  const std::string me = " --h " + Num(kH);
  const Table ref_step = SimulateFile(step, "", kEnd, kDtOut, u.dir, "ref_step");
  const Table ref_step_ra = SimulateFile(step, "--param Ra=2.4", kEnd, kDtOut, u.dir, "ref_step_ra");
  const Table ref_sine = SimulateFile(sine, "", kEnd, kDtOut, u.dir, "ref_sine");
  const Table ref_zoh = SimulateFile(zoh, "", kEnd, kDtOut, u.dir, "ref_zoh");

  const MasterRun me_step = RunMaster(u, "me", kEnd, kDtOut, me + step_input + " --then " + ra + "=2.4", "me_step");
  ExpectAgree("dc step me", ref_step, me_step.first, 1e-8);
  ExpectAgree("dc step me Ra=2.4", ref_step_ra, me_step.second, 1e-8);
  const MasterRun cs_step = RunMaster(u, "cs", kEnd, kDtOut, step_input + " --then " + ra + "=2.4", "cs_step");
  ExpectAgree("dc step cs", ref_step, cs_step.first, 1e-8);
  ExpectAgree("dc step cs Ra=2.4", ref_step_ra, cs_step.second, 1e-8);
  // The change of Ra shows: the final current differs by more than 1%.
  const int i_col = ref_step.Column("current");
  ASSERT_GE(i_col, 0);
  EXPECT_GT(std::fabs(ref_step_ra.rows.back()[i_col] - ref_step.rows.back()[i_col]), 0.01 * std::fabs(ref_step.rows.back()[i_col]));

  ExpectAgree("dc sine me", ref_sine, RunMaster(u, "me", kEnd, kDtOut, me + sine_input, "me_sine").first, 1e-8);
  ExpectAgree("dc sine cs", ref_zoh, RunMaster(u, "cs", kEnd, kDtOut, sine_input, "cs_sine").first, 1e-8);
}

// B4: the mechanism's parameters that its equations keep as symbols are
// tunable (the moment M, the masses, inertias, the spring); c, the slider's
// initial offset, only sets an initial state and stays fixed. A master sets
// the spring K between two runs, and the result is simulate --param K=800's.
TEST(FmiImporter, B4TunableParameterMatchesSimulate) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/B4_spatial_arm.yaml", "--rtol 1e-10 --atol 1e-12", &u));
  for (const char* p : {"M", "m1", "m2", "I0", "K", "b"}) {
    ASSERT_NE(u.desc.Find(p), nullptr) << p;
    EXPECT_EQ(u.desc.Find(p)->variability, "tunable") << p;
  }
  ASSERT_NE(u.desc.Find("c"), nullptr);
  EXPECT_EQ(u.desc.Find("c")->causality, "local");
  const fs::path model = Source("examples/B4_spatial_arm.yaml");
  const Table ref = SimulateFile(model, "--form lagrange2", 1, 0.05, u.dir, "ref");
  const Table ref_k = SimulateFile(model, "--form lagrange2 --param K=800", 1, 0.05, u.dir, "ref_k");
  const MasterRun cs = RunMaster(u, "cs", 1, 0.05, "--tolerance 1e-10 --then " + Vr(u, "K") + "=800", "cs");
  ExpectAgree("B4 cs", ref, cs.first, 1e-8);
  ExpectAgree("B4 cs K=800", ref_k, cs.second, 1e-8);
  const int s = ref.Column("s");
  ASSERT_GE(s, 0);
  EXPECT_GT(std::fabs(ref_k.rows.back()[s] - ref.rows.back()[s]), 1e-3);
}

}  // namespace

namespace {

// A parameter the build turns into numbers stays fixed, and says why: the
// body's inertias of rigid_body_vector give its initial momenta
// (initial: [0.1*Ix, ...]); the lever's arm rx is read by the equations alone.
TEST(FmiImporter, ParametersThatSetInitialValuesStayFixed) {
  Unpacked u;
  ASSERT_NO_FATAL_FAILURE(ExportAndUnpack("examples/rigid_body_vector.yaml", "", &u));
  for (const char* p : {"Ix", "Iy", "Iz"}) {
    const Variable* v = u.desc.Find(p);
    ASSERT_NE(v, nullptr) << p;
    EXPECT_EQ(v->causality, "local") << p;
    EXPECT_EQ(v->variability, "constant") << p;
    EXPECT_NE(v->description.find("initial values"), std::string::npos) << v->description;
  }
  ASSERT_NE(u.desc.Find("rx"), nullptr);
  EXPECT_EQ(u.desc.Find("rx")->variability, "tunable");
  Component c = u.fmu.Instantiate("p", fmi2CoSimulation, u.desc.guid.c_str(), "", &kCallbacks, 0, 0);
  ASSERT_NE(c, nullptr);
  g_log.clear();
  const unsigned ix = u.desc.vr_of.at("Ix");
  const double two = 2;
  EXPECT_EQ(u.fmu.SetReal(c, &ix, 1, &two), kError);
  ASSERT_FALSE(g_log.empty());
  EXPECT_NE(g_log.back().find("constant"), std::string::npos) << g_log.back();
  u.fmu.FreeInstance(c);
}

}  // namespace
