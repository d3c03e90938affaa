// fmi/export.cc — ExportFmu: the model loaded and lowered as for `simulate`,
// its variables laid out, the C written and compiled, the FMU zipped.
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "fmu.h"
#include "paynter/hash.h"
#include "paynter/causality.h"
#include "paynter/constrained.h"
#include "paynter/equations.h"
#include "paynter/error.h"
#include "paynter/files.h"
#include "paynter/model.h"
#include "paynter/multibody.h"
#include "paynter/pipeline.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void Fail(const FmuOptions& o, std::string message, std::string expected, std::string got,
                       std::string hint) {
  ThrowAt({o.model_file}, "", std::move(message), std::move(expected), std::move(got), std::move(hint));
}

void CheckOptions(const FmuOptions& o) {
  if (!o.model_exchange && !o.co_simulation)
    Fail(o, "an FMU must be exported for model exchange, co-simulation or both", "--kind me|cs|both", "neither", "");
  if (o.method != "dopri5" && o.method != "rk4")
    Fail(o, fmt::format("--method {} is not an integrator the FMU carries", o.method), "--method dopri5 | rk4",
         "--method " + o.method, "co-simulation FMUs integrate with dopri5 (adaptive) or rk4 (fixed step)");
  if (!(o.rtol > 0 && o.rtol < 1) || !(o.atol > 0) || !std::isfinite(o.atol))
    Fail(o, "the co-simulation tolerances must be positive", "0 < rtol < 1, atol > 0",
         fmt::format("--rtol {} --atol {}", o.rtol, o.atol), "");
  if (!(o.step > 0) || !std::isfinite(o.step))
    Fail(o, "the rk4 step must be a positive number", "--step > 0", fmt::format("--step {}", o.step), "");
  if (o.output.empty()) Fail(o, "no output file given", "-o MODEL.fmu", "nothing", "");
}

// A C identifier from the model's name (letters, digits, '_'): the shared
// object's file name and the modelIdentifier.
std::string Identifier(const std::string& name) {
  std::string id;
  for (char c : name.substr(0, 64)) id += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "model_" + id;
  return id;
}

// True when the identifier `name` appears in `text`.
bool Mentions(const std::string& text, const std::string& name) {
  size_t i = 0;
  while (i < text.size()) {
    if (std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      if (text.compare(i, j - i, name) == 0 && j - i == name.size()) return true;
      i = j;
    } else {
      ++i;
    }
  }
  return false;
}

// Per parameter of `lowered`: whether changing its slot alone is the whole
// effect of changing it, i.e. nothing computed while the model was built
// (another parameter, an initial value, a mechanism's poses) depends on it.
std::vector<bool> TunableParameters(const Model& model, const LoweredModel& lowered, bool mechanism) {
  std::vector<bool> tunable(lowered.parameter_names.size(), false);
  if (mechanism) return tunable;  // the multibody library computes numbers from them
  for (size_t i = 0; i < tunable.size(); ++i) {
    const std::string& name = lowered.parameter_names[i];
    const Parameter* p = nullptr;
    for (const Parameter& q : model.parameters)
      if (q.name == name) p = &q;
    if (!p || !IsNumberText(p->text)) continue;
    bool used = false;
    for (const Parameter& q : model.parameters)
      if (q.name != name && Mentions(q.text, name)) used = true;
    const GiNaC::symbol& sym = model.Symbol(name);
    for (const Element& e : model.elements)
      if (e.initial && e.initial->has(sym)) used = true;
    for (const Displacement& d : model.displacements)
      if (d.initial.has(sym)) used = true;
    tunable[i] = !used;
  }
  return tunable;
}

// Names are unique in an FMU: a name already taken gets `suffix`, then a number.
std::string Unique(std::set<std::string>& taken, const std::string& name, const std::string& suffix) {
  std::string n = name;
  if (taken.count(n)) n = name + suffix;
  for (int k = 2; taken.count(n); ++k) n = fmt::format("{}{}_{}", name, suffix, k);
  taken.insert(n);
  return n;
}

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// A private directory of this run, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    std::error_code ec;
    const fs::path base = fs::temp_directory_path(ec);
    std::string templ = ((ec ? fs::path("/tmp") : base) / "paynter-fmu-XXXXXX").string();
    if (!::mkdtemp(templ.data())) throw Error(fmt::format("cannot create a private directory in '{}'", templ));
    path = templ;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

FmuReport ExportFmu(const FmuOptions& o) {
  CheckOptions(o);
  const bool mechanism = LoadSpec(ModelSource::File(o.model_file), {}, LoadPass::kSubmodels).multibody.present;
  const std::string form = o.form.empty() ? (mechanism ? "lagrange2" : "state") : o.form;
  const Formulation formulation = ParseFormulation(form);
  const ConstraintMethod method = ParseConstraintMethod(o.constraints);
  if (method != ConstraintMethod::kAuto && method != ConstraintMethod::kParasitic)
    Fail(o, fmt::format("--constraints {} is not available in an FMU", o.constraints),
         "--constraints auto (a model without constraint sources) or parasitic",
         "--constraints " + o.constraints,
         "lagrange-multipliers, minimal-coordinates and zcp need paynter's driver (projection after steps, "
         "coordinate partitioning, a DAE solver), which the FMU does not carry");
  if (mechanism && InJointCoordinates(formulation) && method != ConstraintMethod::kAuto)
    Fail(o, fmt::format("--constraints {} does not combine with --form {}", o.constraints, form),
         "--form state with --constraints parasitic, or --form lagrange1|lagrange2|hamilton alone",
         fmt::format("--form {} --constraints {}", form, o.constraints),
         "Lagrange's and Hamilton's equations of a mechanism are formed in its joint coordinates");
  LoadOptions lo;
  lo.form = formulation;
  lo.method = method;
  lo.parasitic.stiffness = o.parasitic_stiffness;
  lo.parasitic.damping = o.parasitic_damping;
  lo.overrides = o.overrides;
  Model model = [&] {
    try {
      return LoadModel(o.model_file, lo);
    } catch (const Error& e) {
      if (!mechanism || form != "lagrange2" || e.diagnostic().message.find("closes the kinematic loop") == std::string::npos)
        throw;
      Diagnostic d = e.diagnostic();
      d.hint = "an FMU runs closed chains only with compliant joints: export with --form state --constraints parasitic "
               "(the other methods keep constraint rows, which need paynter's driver)";
      throw Error(std::move(d));
    }
  }();
  const CausalGraph graph = AssignCausality(model, OptionsFor(formulation, model));
  const EquationSystem eqs = BuildEquations(model, graph);
  if (!eqs.constraint_rows.empty()) {
    std::string hint;
    if (mechanism && form == "state")
      hint = "an open chain: export with --form lagrange2 (joint coordinates, the default); a closed chain: "
             "--constraints parasitic";
    else if (mechanism)
      hint = "a closed chain keeps its cut joints as constraint rows in joint coordinates: export it with --form state "
             "--constraints parasitic";
    else
      hint = "export with --constraints parasitic (compliant joints), or write the mechanism under 'multibody:'";
    Fail(o,
         fmt::format("the FMU cannot simulate a model with constraint rows ({} of them: joint constraint forces or "
                     "sources with 'constraint:'), which paynter's driver stabilizes by projection",
                     eqs.constraint_rows.size()),
         "a model without constraint rows: a bond graph without constraint sources, a mechanism in joint "
         "coordinates (an open chain, --form lagrange2), or --constraints parasitic",
         fmt::format("{} constraint rows with --form {}", eqs.constraint_rows.size(), form), hint);
  }

  fmi::FmuModel m;
  m.options = o;
  m.options.form = form;
  m.lowered = LowerModel(eqs);
  const LoweredModel& l = m.lowered;
  for (double v : l.initial_state)
    if (!std::isfinite(v)) Fail(o, "an initial state is not a finite number", "finite initial values", "NaN or Inf", "");
  m.name = model.name.empty() ? fs::path(o.model_file).stem().string() : model.name;
  m.identifier = Identifier(m.name);
  m.description = fmt::format("paynter model '{}', --form {}", m.name, form);
  m.tunable = TunableParameters(model, l, mechanism || method == ConstraintMethod::kParasitic);
  std::vector<std::string> output_names = l.output_names;
  m.output_slots = l.output_slots;
  if (output_names.empty()) {  // no outputs declared: the states (as simulate reports them)
    output_names = l.state_names;
    for (size_t i = 0; i < l.state_names.size(); ++i) m.output_slots.push_back(l.first_state_slot + int(i));
  }

  m.rhs = ProgramCSource(*l.rhs, "pn_rhs_");
  m.outputs = ProgramCSource(*l.outputs, "pn_out_");
  int num_slots = l.num_slots;
  for (const auto* p : {l.rhs.get(), l.outputs.get()}) num_slots = std::max(num_slots, NumSlots(*p));

  // Variables: time, parameters, states, derivatives, outputs; a slot's value
  // reference is its index, an output's follows the slots.
  std::set<std::string> taken(output_names.begin(), output_names.end());
  auto add = [&](fmi::Variable v) { m.variables.push_back(std::move(v)); };
  add({Unique(taken, "time", "_"), "time", "independent", "continuous", "", 0, std::nullopt, 0, "s"});
  int num_tunable = 0;
  for (size_t i = 0; i < l.parameter_names.size(); ++i) {
    const bool tunable = m.tunable[i];
    num_tunable += tunable;
    add({Unique(taken, l.parameter_names[i], "_parameter"),
         tunable ? "parameter" : "parameter, fixed at export (values computed at export depend on it, or it is derived)",
         tunable ? "parameter" : "local", tunable ? "tunable" : "constant", "exact",
         static_cast<unsigned>(l.first_parameter_slot + i), l.parameter_values[i], 0, ""});
  }
  const int first_state_index = static_cast<int>(m.variables.size()) + 1;
  for (size_t i = 0; i < l.state_names.size(); ++i)
    add({Unique(taken, l.state_names[i], "_state"),
         "state" + (i < l.state_origin.size() && !l.state_origin[i].empty() ? ": " + l.state_origin[i] : std::string()),
         "local", "continuous", "exact", static_cast<unsigned>(l.first_state_slot + i), l.initial_state[i], 0, ""});
  for (size_t i = 0; i < l.state_names.size(); ++i)
    add({Unique(taken, "der(" + l.state_names[i] + ")", "_"), "time derivative of the state " + l.state_names[i],
         "local", "continuous", "calculated", static_cast<unsigned>(l.first_derivative_slot + i), std::nullopt,
         first_state_index + static_cast<int>(i), ""});
  for (size_t k = 0; k < output_names.size(); ++k)
    add({output_names[k], "output", "output", "continuous", "calculated", static_cast<unsigned>(num_slots + k),
         std::nullopt, 0, ""});

  // The GUID: a hash of everything the FMU holds but the compiled code.
  m.guid = "";
  std::string hashed = fmi::ModelDescription(m) + fmi::ModelSource(m) + m.rhs.text + m.outputs.text + fmi::kRuntimeC;
  const uint64_t h1 = Fnv1a64(hashed, kFnv1aOffset), h2 = Fnv1a64(hashed, 0x9e3779b97f4a7c15ull);
  m.guid = fmt::format("{{{:08x}-{:04x}-{:04x}-{:04x}-{:012x}}}", uint32_t(h1 >> 32), uint32_t((h1 >> 16) & 0xFFFF),
                       uint32_t(h1 & 0xFFFF), uint32_t(h2 >> 48), h2 & 0xFFFFFFFFFFFFull);

  const std::vector<std::pair<std::string, std::string>> sources = {
      {"fmu.c", fmi::kRuntimeC},
      {"model.h", fmi::ModelHeader(m)},
      {"model.c", fmi::ModelSource(m)},
      {"rhs.c", m.rhs.text},
      {"outputs.c", m.outputs.text}};
  TempDir dir;
  for (const auto& [name, text] : sources) {
    std::ofstream f(dir.path / name, std::ios::binary);
    f << text;
    if (!f.flush()) throw Error(fmt::format("cannot write '{}'", (dir.path / name).string()));
  }
  const fs::path so = dir.path / (m.identifier + ".so");
  std::vector<std::string> argv = Words(FindCCompiler());
  for (const std::string& w : Words(NativeCompileFlags(m.rhs.num_ops + m.outputs.num_ops))) argv.push_back(w);
  for (const char* w : {"-fPIC", "-shared", "-fvisibility=hidden", "-o"}) argv.push_back(w);
  argv.push_back(so.string());
  for (const char* f : {"fmu.c", "model.c", "rhs.c", "outputs.c"}) argv.push_back((dir.path / f).string());
  argv.push_back("-lm");
  std::string output;
  const auto start = std::chrono::steady_clock::now();
  const int status = RunTool(argv, &output);
  FmuReport report;
  report.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::error_code ec;
  if (status != 0 || !fs::exists(so, ec)) {
    if (output.size() > 2000) output = output.substr(0, 2000) + "\n...";
    std::string cmd;
    for (const std::string& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    ThrowAt({o.model_file}, "", fmt::format("the C compiler failed on the FMU's code: {}\n{}", cmd, output), "", "",
            "set CC to a working C compiler");
  }
  const std::string library = ReadFile(so);
  std::vector<std::pair<std::string, std::string>> files = {{"modelDescription.xml", fmi::ModelDescription(m)},
                                                            {"binaries/linux64/" + m.identifier + ".so", library}};
  for (const auto& [name, text] : sources) files.emplace_back("sources/" + name, text);
  const std::string zip = fmi::ZipArchive(files);
  WriteFileAtomically(o.output, zip, "FMU");

  report.model_identifier = m.identifier;
  report.guid = m.guid;
  report.form = form;
  report.num_states = static_cast<int>(l.state_names.size());
  report.num_outputs = static_cast<int>(output_names.size());
  report.num_parameters = static_cast<int>(l.parameter_names.size());
  report.num_tunable = num_tunable;
  report.library_bytes = static_cast<long>(library.size());
  report.fmu_bytes = static_cast<long>(zip.size());
  return report;
}

}  // namespace paynter
