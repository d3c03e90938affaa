// A model file to reports and results, as the commands do it (paynter/run.h).
#include "paynter/run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <ostream>
#include <sstream>

#include "paynter/equations.h"
#include "paynter/progress.h"
#include "paynter/multibody.h"
#include "paynter/report.h"
#include "paynter/units.h"

namespace paynter {
namespace {

// LaCAP's artificial sources conflict with the constraint sources of a
// hand-written bond graph (Se with `constraint:`): say so, instead of listing
// the conflicts at the junctions.
void RequireLagrangeApplies(const Model& model, const CausalGraph& graph, Formulation form) {
  if (graph.conflicts.empty() || FormulationOf(form).procedure != CausalityProcedure::kLaCAP) return;
  for (const auto& e : model.elements)
    if (e.form == LawForm::kConstraint) {
      ThrowAt({model.file}, "",
              fmt::format("--form {} is not available for a bond graph with constraint sources (Se with "
                          "'constraint:'): their constraint forces conflict with the generalized velocities",
                          FormulationName(form)),
              "--form state or hamilton with constraint sources",
              fmt::format("--form {} ({} causal conflicts of the artificial sources)", FormulationName(form),
                          graph.conflicts.size()),
              "write the mechanism under 'multibody:' (paynter then forms Lagrange's equations in its joint "
              "coordinates), or simulate with --constraints minimal-coordinates");
    }
}

// The formulation table's answer (paynter/formulations.h); the file is read
// for whether it is a mechanism only where the answer depends on it
// (Hamilton's form of a bond graph written by hand keeps its constraint sources).
void RequireFormCombines(const std::string& file, Formulation form, ConstraintMethod method) {
  const bool mechanism = !CombinationDependsOnModel(form, method) ||
                         LoadSpec(ModelSource::File(file), {}, LoadPass::kSubmodels).multibody.present;
  RequireCombination(file, form, method, mechanism);
}

// The form a causality procedure is shown on: BHCAP needs the quasi-velocity
// junctions of a mechanism's joint coordinates; the others work on the model
// as written (a mechanism's Newton-Euler expansion).
Formulation FormShownBy(CausalityProcedure p) {
  return p == CausalityProcedure::kBHCAP ? Formulation::kBoltzmannHamel : Formulation::kState;
}

// Text as LaTeX comments.
std::string Commented(const std::string& text) {
  std::string out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out += (line.empty() ? "%" : "% " + line) + "\n";
  return out;
}

}  // namespace

// Assigns a model the causality that `form` asks for.
Analysis Analyze(Model model, Formulation form) {
  Analysis a{std::move(model), {}};
  a.graph = AssignCausality(a.model, OptionsFor(form, a.model));
  RequireLagrangeApplies(a.model, a.graph, form);
  return a;
}

// Loads a model and assigns the causality that `form` asks for.
Analysis Analyze(const std::string& path, Formulation form) {
  LoadOptions lo;
  lo.form = form;
  return Analyze(LoadModel(path, lo), form);
}

// ---- what causality, equations and draw show under --constraints METHOD -------
// The model a constraint method works on: its strategy's view of the model
// loaded for it (paynter/constraint_method.h).

MethodView LoadForMethod(const std::string& path, ConstraintMethod constraints, Formulation form) {
  const ConstraintMethodStrategy& strategy = StrategyFor(constraints);
  MethodView v;
  v.method = constraints;
  LoadOptions lo;
  lo.method = constraints;
  // A method that rewrites the spec rewrites the constraint sources of the
  // Newton-Euler expansion (PrepareModel refuses it with joint coordinates).
  if (!strategy.RewritesSpec()) lo.form = form;
  v.model = LoadModel(path, lo);
  strategy.View(&v, path);
  return v;
}

int CheckReport(const std::string& path, std::ostream& out) {
  StageScope stage("checking " + path);
  Analysis a = Analyze(path);
  out << DescribeModel(a.model) << "\n" << DomainReport(a.model);
  if (!a.graph.conflicts.empty()) {
    out << CausalityReport(a.model, a.graph, nullptr);
    RequireNoConflicts(a.model, a.graph);
  }
  // The states and blocks are what the report shows of the equations: their
  // structure is enough, unless constraint sources ask for the analysis of a
  // mechanism's constraints below, which runs the programs.
  bool constraint_sources = false;
  for (const auto& e : a.model.elements) constraint_sources = constraint_sources || e.form == LawForm::kConstraint;
  EquationSystem eqs =
      constraint_sources ? BuildEquations(a.model, a.graph) : BuildEquationStructure(a.model, a.graph);
  out << fmt::format("causality (SCAP): {} storage elements in integral causality, {} in derivative causality\n",
                           a.graph.integral_storage.size(), a.graph.derivative_storage.size());
  out << fmt::format("states ({}): {}\n", eqs.state_names.size(), fmt::join(eqs.state_names, ", "));
  int loops = 0;
  for (const auto& b : eqs.blocks) loops += b.derivative_causality ? 0 : 1;
  out << fmt::format("algebraic loops: {}; implicit blocks: {}\n", loops, eqs.blocks.size());
  if (!eqs.constraint_rows.empty()) {
    // A mechanism: counts, rank, mobility and redundant joint directions at
    // the start (the tape is enough for this: nothing is integrated).
    CodegenOptions cg;
    cg.backend = Backend::kTape;
    const CompiledModel cm(eqs, cg);
    ModelWorkspace ws(cm);
    out << AnalyzeConstraints(ws, 0, cm.initial_state()).ToText();
  }
  out << "ok\n";
  return 0;
}

int CausalityText(const std::string& path, CausalityProcedure procedure, ConstraintMethod constraints,
                  std::ostream& out) {
  // Not const: the Lagrangian procedures add their artificial sources to the
  // model, and the report shows them.
  StageScope stage("assigning causality to " + path);
  RequireFormCombines(path, FormShownBy(procedure), constraints);
  MethodView view = LoadForMethod(path, constraints, FormShownBy(procedure));
  Model& m = view.model;
  const ConstraintMethodStrategy& strategy = StrategyFor(view.method);
  out << strategy.ViewHeader(view);
  CausalityOptions opt;
  opt.procedure = procedure;
  if (opt.procedure == CausalityProcedure::kLaCAP && !m.generalized.empty()) opt.generalized = m.generalized;
  CausalGraph g = AssignCausality(m, opt);
  if (!g.conflicts.empty() || !g.relaxed.empty()) {
    out << CausalityReport(m, g, nullptr);
    return g.conflicts.empty() ? 0 : 1;
  }
  EquationSystem eqs;
  try {
    eqs = BuildEquations(m, g);
  } catch (const Error& e) {
    // The strokes are still worth seeing when the equations cannot be formed.
    out << CausalityReport(m, g, nullptr) << "\n" << ZeroOrderPathReport(m, FindZeroOrderPaths(m, g));
    throw;
  }
  out << CausalityReport(m, g, &eqs);
  out << "\n" << ZeroOrderPathReport(m, FindZeroOrderPaths(m, g));
  out << strategy.CausalityNotes(view);
  return 0;
}

int EquationsText(const std::string& path, bool latex, Formulation form, bool explain, ConstraintMethod constraints,
                  std::ostream& out, bool standalone) {
  if (latex && standalone) {
    // A document that compiles as it is: the equations, their comments, amsmath.
    std::ostringstream body;
    const int status = EquationsText(path, true, form, explain, constraints, body, false);
    out << "\\documentclass[10pt]{article}\n\\usepackage{amsmath}\n\\allowdisplaybreaks\n"
        << "\\begin{document}\n" << body.str() << "\\end{document}\n";
    return status;
  }
  StageScope stage("writing the equations of " + path);
  const MethodView view = LoadForMethod(path, constraints, form);
  Analysis a = Analyze(view.model, form);
  EquationSystem eqs = BuildEquations(a.model, a.graph);
  const ConstraintMethodStrategy& strategy = StrategyFor(view.method);
  const std::string header = strategy.ViewHeader(view);
  out << (latex ? Commented(header) : header);
  {
    StageScope writing(latex ? "writing the equations as LaTeX" : "writing the equations as text");
    out << (latex ? eqs.ToLatex(a.model) : eqs.ToText(a.model));
  }
  const std::string after = strategy.EquationNotes(view, eqs);
  out << (latex ? Commented(after) : after);
  if (eqs.form == Formulation::kBoltzmannHamel && !explain) out << eqs.HamelText(a.model, latex);
  if (explain) {
    if (eqs.form != Formulation::kLagrange2 && eqs.form != Formulation::kBoltzmannHamel) {
      ThrowAt({}, "",
              "--explain shows the Lagrange subsystem of the second-kind formulation, or the Boltzmann-Hamel "
              "terms",
              "--form lagrange2 or boltzmann-hamel", "--form " + FormulationName(form));
    }
    const std::string text =
        eqs.form == Formulation::kBoltzmannHamel ? eqs.ExplainBoltzmannHamel(a.model, latex) : eqs.ExplainLagrange(a.model);
    out << "\n" << text;
  }
  return 0;
}

int GeneratedCodeText(const std::string& path, Formulation form, ConstraintMethod constraints, std::ostream& out) {
  StageScope stage("generating the code of " + path);
  const MethodView view = LoadForMethod(path, constraints, form);
  Analysis a = Analyze(view.model, form);
  const LoweredModel lowered = LowerModel(BuildEquations(a.model, a.graph));
  auto program = [&](const char* what, const std::shared_ptr<const LoweredProgram>& p) {
    if (!p) return;
    out << "/* ---- " << what << " ---- */\n" << GeneratedC(*p);
  };
  program("right-hand side", lowered.rhs);
  program("outputs", lowered.outputs);
  program("constraints", lowered.constraints);
  program("events", lowered.events);
  return 0;
}

std::string DrawingDot(const std::string& path, const DrawOptions& options) {
  StageScope stage("drawing " + path);
  RequireFormCombines(path, FormShownBy(options.procedure), options.constraints);
  MethodView view = LoadForMethod(path, options.constraints, FormShownBy(options.procedure));
  Model& m = view.model;  // the Lagrangian procedures add their artificial sources
  CausalityOptions opt;
  opt.procedure = options.procedure;
  if (opt.procedure == CausalityProcedure::kLaCAP && !m.generalized.empty()) opt.generalized = m.generalized;
  CausalGraph g = AssignCausality(m, opt);
  std::vector<ZeroOrderPath> paths;
  const ZeroOrderPath* highlight = nullptr;
  if (options.highlight > 0) {
    paths = FindZeroOrderPaths(m, g);
    highlight = &SelectZeroOrderPath(paths, options.highlight);
  }
  const ModelSpec hierarchical = LoadSpec(ModelSource::File(path), {}, LoadPass::kRead);
  const DrawComponents components =
      FindDrawComponents(m, LoadSpec(ModelSource::File(path), {}, LoadPass::kSubmodels), &hierarchical);
  return options.expand || highlight || components.empty() ? BondGraphDot(m, &g, highlight)
                                                           : ComponentGraphDot(m, &g, components);
}

Backend ParseBackend(const std::string& name) {
  if (name == "auto") return Backend::kAuto;
  if (name == "tiered") return Backend::kTiered;
  if (name == "native") return Backend::kNative;
  if (name == "tape") return Backend::kTape;
  std::string hint = DidYouMean(name, {"auto", "tiered", "native", "tape"});
  ThrowAt({}, "", fmt::format("--backend: '{}' is not one of auto, tiered, native, tape", name),
          "one of auto, tiered, native, tape", fmt::format("'{}'", name),
          hint.empty() ? "paynter simulate --help describes --backend" : hint);
}

std::string BackendName(Backend backend) {
  switch (backend) {
    case Backend::kAuto: return "auto";
    case Backend::kTiered: return "tiered";
    case Backend::kNative: return "native";
    case Backend::kTape: return "tape";
  }
  return "?";
}

CodegenOptions::BlockSolve ParseBlockSolve(const std::string& name) {
  using BlockSolve = CodegenOptions::BlockSolve;
  if (name == "auto") return BlockSolve::kAuto;
  if (name == "dense") return BlockSolve::kDense;
  if (name == "sparse") return BlockSolve::kSparse;
  std::string hint = DidYouMean(name, {"auto", "dense", "sparse"});
  ThrowAt({}, "", fmt::format("--block-solve: '{}' is not one of auto, dense, sparse", name),
          "one of auto, dense, sparse", fmt::format("'{}'", name),
          hint.empty() ? "paynter simulate --help describes --block-solve" : hint);
}

std::string BlockSolveName(CodegenOptions::BlockSolve solve) {
  switch (solve) {
    case CodegenOptions::BlockSolve::kAuto: return "auto";
    case CodegenOptions::BlockSolve::kDense: return "dense";
    case CodegenOptions::BlockSolve::kSparse: return "sparse";
  }
  return "?";
}

LoadOptions LoadOptionsFor(const RunOptions& options) {
  LoadOptions lo;
  lo.form = options.form;
  lo.method = options.constraints;
  lo.parasitic.stiffness = options.parasitic_stiffness;
  lo.parasitic.damping = options.parasitic_damping;
  lo.energy = options.energy || options.project_energy || options.energy_if_possible;
  lo.energy_required = options.energy || options.project_energy;
  lo.poses = options.poses;
  for (const auto& [name, value] : options.params) lo.overrides[name] = value;
  return lo;
}

// ---- running a model ------------------------------------------------------

void ApplyModelSettings(RunOptions& options, const std::set<std::string>& given, bool require_t_end) {
  const ModelSpec spec = LoadSpec(ModelSource::File(options.file), {}, LoadPass::kRead);
  bool t_end_set = given.count("t_end") > 0;
  for (const ModelSpec::Item& s : spec.simulation) {
    if (given.count(s.name)) continue;  // the caller's option wins
    auto number = [&] {
      char* end = nullptr;
      const double v = std::strtod(s.text.c_str(), &end);
      if (s.text.empty() || *end != '\0' || !std::isfinite(v))
        ThrowAt(s.where, "", fmt::format("the run setting '{}' is not a number", s.name),
                "a finite number such as 10 or 1e-8", s.text);
      return v;
    };
    // A choice read with the command line's messages, located at its line.
    auto choice = [&](auto parse) {
      try {
        return parse(s.text);
      } catch (const Error& e) {
        const Diagnostic& d = e.diagnostic();
        ThrowAt(s.where, "", fmt::format("the run setting '{}': {}", s.name, d.message), d.expected, d.got, d.hint);
      }
    };
    if (s.name == "t_end") {
      options.t_end = number();
      t_end_set = true;
    } else if (s.name == "t0") {
      options.t0 = number();
    } else if (s.name == "rtol") {
      options.rtol = number();
    } else if (s.name == "atol") {
      options.atol = number();
    } else if (s.name == "dt_out") {
      options.dt_out = number();
    } else if (s.name == "step") {
      options.step = number();
    } else if (s.name == "drift_tolerance") {
      options.drift_tolerance = number();
    } else if (s.name == "max_steps") {
      const double v = number();
      if (v < 1 || v != std::floor(v) || v > 9e18)
        ThrowAt(s.where, "", "the run setting 'max_steps' is not a whole number of steps", "a whole number >= 1",
                s.text);
      options.max_steps = static_cast<long>(v);
      options.max_steps_given = true;
    } else if (s.name == "method") {
      options.method = choice(ParseMethod);
      options.method_given = true;
    } else if (s.name == "form") {
      options.form = choice(ParseFormulation);
    } else if (s.name == "constraints") {
      options.constraints = choice(ParseConstraintMethod);
    } else if (s.name == "project_energy") {
      if (s.text != "true" && s.text != "false")
        ThrowAt(s.where, "", "the run setting 'project_energy' is not true or false", "true or false", s.text);
      options.project_energy = s.text == "true";
      options.project_energy_from_model = true;
    }
  }
  if (require_t_end && !t_end_set)
    ThrowAt({options.file}, "", "no end time for the run", "--t-end T, or the model's run settings (simulation: {t_end: T})",
            "neither", "give --t-end, or add `simulation: {t_end: ...}` to the model (docs/model-format.md, \"Run settings\")");
}

std::vector<std::pair<std::string, double>> ParseParameterOverrides(const std::vector<std::string>& texts,
                                                                    const std::string& file, const std::string& option) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& kv : texts) {
    const auto eq = kv.find('=');
    double v = 0;
    try {
      if (eq == std::string::npos || eq == 0) throw std::invalid_argument("no NAME=");
      size_t used = 0;
      v = std::stod(kv.substr(eq + 1), &used);
      if (used != kv.size() - eq - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      ThrowAt({file}, "", fmt::format("bad {} '{}'", option, kv), "NAME=NUMBER", kv);
    }
    if (!std::isfinite(v)) {
      ThrowAt({file}, "", fmt::format("{} {}: the value is not a finite number", option, kv),
              "NAME=NUMBER, a finite number", kv);
    }
    out.emplace_back(kv.substr(0, eq), v);
  }
  return out;
}

namespace {

// A parameter override that is not a finite number (from the API, where no
// text was parsed).
void RequireFiniteOverrides(const RunOptions& options) {
  for (const auto& [name, value] : options.params) {
    if (std::isfinite(value)) continue;
    ThrowAt({options.file}, "", fmt::format("parameter {}: the value is not a finite number", name), "a finite number",
            fmt::format("{}", value));
  }
}

// Everything besides the file's bytes and the build that shapes the lowered
// equations (the stage cache's key): not the backend, tolerances or parameters.
std::vector<std::string> StageSettings(const RunOptions& options, ConstraintMethod method) {
  std::vector<std::string> settings = {"form=" + FormulationName(options.form),
                                       "method=" + StrategyFor(method).StageKey(LoadOptionsFor(options).parasitic),
                                       fmt::format("energy={}", LoadOptionsFor(options).energy)};
  if (options.poses) settings.push_back("poses");
  return settings;
}

}  // namespace

PreparedModel PrepareModel(const RunOptions& options) {
  StageScope stage("preparing " + options.file);
  const auto start = std::chrono::steady_clock::now();
  RequireFiniteOverrides(options);
  const ConstraintMethod method = options.constraints;
  PreparedModel c;
  c.method_ = method;
  RequireFormCombines(options.file, options.form, method);
  c.codegen_.backend = options.backend == Backend::kAuto ? Backend::kTiered : options.backend;
  c.codegen_.block_solve = options.block_solve;
  std::map<std::string, double> overrides;
  std::string override_text;
  for (const auto& [name, value] : options.params) {
    overrides[name] = value;
    override_text += fmt::format("{}={:a};", name, value);
  }
  const ConstraintMethodStrategy& strategy = StrategyFor(method);
  const bool cacheable = options.stage_cache;
  StageCache cache(StageCacheOptions{cacheable, "", ""});
  const std::string key = cacheable ? cache.Key(options.file, StageSettings(options, method)) : "";
  auto key_with_overrides = [&] {
    auto settings = StageSettings(options, method);
    settings.push_back("param " + override_text);
    return key.empty() ? key : cache.Key(options.file, settings);
  };
  // Overrides reach everything derived from the parameters when the model is
  // built: a model whose build computes numbers from them (derived parameters,
  // initial values; a mechanism's poses, which the multibody library
  // computes) has an entry per set of overrides (StagedModel::overrides_in_key).
  // Whether the file is a mechanism: from the entry when there is one (a warm
  // run does not read the model file at all), else from the file.
  std::optional<StagedModel> staged = cache.Load(key);
  const bool mechanism =
      staged ? staged->mechanism : LoadSpec(ModelSource::File(options.file), {}, LoadPass::kSubmodels).multibody.present;
  if ((!staged || staged->overrides_in_key || mechanism) && !overrides.empty())
    staged = cache.Load(key_with_overrides());
  if (staged && !PhysicalParametersHold(*staged, overrides)) staged.reset();  // the Model's check explains
  if (!staged) {
    // BuildModel checks that masses, inertias and capacitances stay positive
    // under the overrides.
    c.model_ = LoadModel(options.file, LoadOptionsFor(options));
    CausalGraph graph = AssignCausality(*c.model_, OptionsFor(options.form, *c.model_));
    RequireLagrangeApplies(*c.model_, graph, options.form);
    staged = StageModel(*c.model_, LowerModel(BuildEquations(*c.model_, graph)));
    staged->method_lowered = strategy.Prepare(*c.model_);
    staged->mechanism = mechanism;
    // Stored only if the file read for the key is still the file that was built.
    // An entry built with overrides holds their values as its parameters':
    // it serves those overrides only, never a run without them.
    if (cache.Key(options.file, StageSettings(options, method)) == key)
      cache.Store(overrides.empty() ? key : key_with_overrides(), *staged);
  } else {
    c.stages_cached_ = true;
  }
  c.staged_ = std::move(*staged);
  c.mechanism_ = mechanism;
  c.cm_ = std::make_unique<CompiledModel>(c.staged_.lowered, c.codegen_);
  if (c.staged_.method_lowered) c.method_cm_ = std::make_unique<CompiledModel>(*c.staged_.method_lowered, c.codegen_);
  c.stage_note_ = cache.note();
  c.ready_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

bool PreparedModel::parameter_settable(const std::string& name) const {
  if (mechanism_) return false;
  for (const auto& d : staged_.derived_from)
    if (d == name) return false;
  return true;
}

SolverOptions SolverOptionsFor(const RunOptions& options, ConstraintMethod method) {
  SolverOptions so;
  // The method's own choice (parasitic: BDF, for its stiff springs) unless one is asked for.
  const std::optional<Method> preferred = StrategyFor(method).DefaultIntegrator();
  so.method = preferred && !options.method_given ? *preferred : options.method;
  so.t0 = options.t0;
  so.t_end = options.t_end;
  so.rtol = options.rtol;
  so.atol = options.atol;
  so.dt_out = options.dt_out;
  so.step = options.step;
  if (options.max_steps_given) {
    // The budget asked for holds also for a stiff run under dopri5.
    so.max_steps = options.max_steps;
    so.stiff_steps = options.max_steps;
  }
  so.progress = options.progress;
  so.on_progress = options.on_progress;
  return so;
}

// An interval that asks for more than kMaxOutputRows is refused before
// anything is compiled (the rows are streamed, but they would fill the disk).
void CheckOutputRows(const RunOptions& options) {
  constexpr double kMaxOutputRows = 1e7;
  const double rows = (options.t_end - options.t0) / options.dt_out;
  if (!(options.dt_out > 0) || !std::isfinite(rows) || rows <= kMaxOutputRows) return;  // the solvers check the rest
  ThrowAt({options.file}, "",
          fmt::format("--dt-out {:g} asks for {:.3g} output rows over [{:g}, {:g}]", options.dt_out, rows, options.t0,
                      options.t_end),
          fmt::format("at most {:.0f} output rows", kMaxOutputRows), fmt::format("(t_end - t0)/dt_out = {:.3g}", rows),
          fmt::format("use --dt-out {:g} or more", (options.t_end - options.t0) / kMaxOutputRows));
}

RunResult RunPrepared(const PreparedModel& prepared, const CompiledModel& cm, const RunOptions& options,
                      RowSink* output) {
  CheckOutputRows(options);
  RequireFiniteOverrides(options);
  ModelWorkspace ws(cm);  // the run's own: a run gives the same bits whatever ran before or beside it
  const auto& names = prepared.parameter_names();
  const auto& values = prepared.parameter_values();
  for (size_t i = 0; i < names.size(); ++i) ws.SetParameterAt(static_cast<int>(i), values[i]);
  for (const auto& [name, value] : options.params) {
    const int i = cm.ParameterIndex(name);
    if (i >= 0 && !prepared.parameter_settable(name) && value != values[i]) {
      ThrowAt({options.file}, "",
              fmt::format("parameter {}: the model was prepared with {} = {:g}; numbers of its build are "
                          "computed from it",
                          name, name, values[i]),
              fmt::format("{} = {:g}, or a model prepared with the new value", name, values[i]),
              fmt::format("{} = {:g}", name, value),
              "prepare the model again with this value (PrepareModel with RunOptions::params)");
    }
    ws.SetParameter(name, value);
  }
  const ConstraintMethod method = prepared.method();
  const SolverOptions so = SolverOptionsFor(options, method);
  ConstrainedOptions co;
  co.method = method;
  co.source = prepared.model();
  co.codegen = prepared.codegen();
  co.method_model = prepared.method_model();
  co.assemble = options.assemble || prepared.assemble();
  co.stabilize = options.stabilize;
  // From the model's run settings it applies where lagrange-multipliers runs
  // (named, or auto's choice for a model with joints).
  const bool multipliers = method == ConstraintMethod::kLagrangeMultipliers ||
                           (method == ConstraintMethod::kAuto &&
                            ChooseConstraintMethod(cm, nullptr) == ConstraintMethod::kLagrangeMultipliers);
  co.project_energy = options.project_energy && (!options.project_energy_from_model || multipliers);
  co.drift_tolerance = options.drift_tolerance;
  co.output = output;
  RunResult r;
  r.solution = SimulateConstrained(ws, so, co, &r.report);
  r.tiers = ws.tiers();
  return r;
}

ReportedError ReportError(const Error& error, const std::string& model_file) {
  ReportedError r{error.diagnostic(), error.what()};
  if (r.diagnostic.where.file.empty() && !model_file.empty() && r.text.rfind("<model>", 0) == 0) {
    r.diagnostic.where.file = model_file;
    r.text = r.diagnostic.ToString();
  }
  return r;
}

// getrusage's ru_maxrss is in KiB on Linux.
double PeakMemoryMegabytes() {
  struct rusage usage {};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<double>(usage.ru_maxrss) * 1024 / 1e6;
}

}  // namespace paynter
