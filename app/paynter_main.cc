// paynter — the command-line program: a thin layer over include/paynter/.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <memory>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "paynter/paynter.h"
#include "paynter/stage_cache.h"

namespace {

using namespace paynter;

struct Analysis {
  Model model;
  CausalGraph graph;
};

// Lagrange's equations of a mechanism written under `multibody:` are formed
// in its joint coordinates (src/multibody/joint_coordinates.cc); every other
// form keeps the bodies' Newton–Euler expansion with the joints as
// constraint forces.
bool InJointCoordinates(const std::string& form) { return form == "lagrange1" || form == "lagrange2"; }

// The model file as `form` needs it; `energy` adds the energy accounting.
// `overrides` (--param) replace parameters before anything is derived from them.
Model LoadModelForForm(const std::string& path, const std::string& form, bool energy = false,
                       const std::map<std::string, double>& overrides = {}) {
  ModelSpec spec = ReadModelSpecFile(path);
  if (!spec.multibody.present || !InJointCoordinates(form)) {
    if (!energy && overrides.empty()) return LoadModel(path);
    return LoadModelFor(path, ConstraintMethod::kAuto, ParasiticOptions{}, energy, overrides);
  }
  ApplyParameterOverrides(&spec, overrides);
  ExpandMultibodyInJointCoordinates(&spec, /*cut_joints_as_multipliers=*/form == "lagrange1");
  ExpandVectorBonds(&spec);
  if (energy) AddEnergyAccounting(&spec);
  return BuildModel(spec);
}

// LaCAP's artificial sources conflict with the constraint sources of a
// hand-written bond graph (Se with `constraint:`): say so, instead of listing
// the conflicts at the junctions.
void RequireLagrangeApplies(const Model& model, const CausalGraph& graph, const std::string& form) {
  if (graph.conflicts.empty() || (form != "lagrange1" && form != "lagrange2")) return;
  for (const auto& e : model.elements)
    if (e.form == LawForm::kConstraint) {
      Diagnostic d;
      d.where.file = model.file;
      d.message = fmt::format("--form {} is not available for a bond graph with constraint sources (Se with "
                              "'constraint:'): their constraint forces conflict with the generalized velocities",
                              form);
      d.expected = "--form state or hamilton with constraint sources";
      d.got = fmt::format("--form {} ({} causal conflicts of the artificial sources)", form, graph.conflicts.size());
      d.hint = "write the mechanism under 'multibody:' (paynter then forms Lagrange's equations in its joint "
               "coordinates), or simulate with --constraints minimal-coordinates";
      throw Error(std::move(d));
    }
}

// Assigns a model the causality that `form` asks for.
Analysis Analyze(Model model, const std::string& form = "state") {
  Analysis a{std::move(model), {}};
  a.graph = AssignCausality(a.model, OptionsFor(ParseFormulation(form), a.model));
  RequireLagrangeApplies(a.model, a.graph, form);
  return a;
}

// Loads a model and assigns the causality that `form` asks for.
Analysis Analyze(const std::string& path, const std::string& form = "state") {
  return Analyze(LoadModelForForm(path, form), form);
}

// ---- what causality, equations and draw show under --constraints METHOD -------
// The model a constraint method works on: parasitic writes a spring and a
// damper into every constrained joint direction; zcp makes the joint efforts
// break variables (effort sources zcp_<S>, the DAE's algebraic variables);
// lagrange-multipliers and minimal-coordinates work on the model as it is.
struct MethodView {
  ConstraintMethod method = ConstraintMethod::kAuto;
  Model model;                               // what is shown
  Model source;                              // zcp: the model with its constraint sources
  std::vector<std::string> break_variables;  // zcp
};

MethodView LoadForMethod(const std::string& path, const std::string& constraints, const std::string& form = "state") {
  MethodView v;
  v.method = ParseConstraintMethod(constraints);
  v.model = v.method == ConstraintMethod::kParasitic ? LoadModelFor(path, v.method) : LoadModelForForm(path, form);
  if (v.method == ConstraintMethod::kZcp || v.method == ConstraintMethod::kMinimalCoordinates) {
    bool any = false;
    for (const auto& e : v.model.elements) any = any || e.form == LawForm::kConstraint;
    if (!any) {
      Diagnostic d;
      d.where.file = path;
      d.message = fmt::format("--constraints {}: the model has no joint constraint", constraints);
      d.expected = "a multibody model with joints, or Se elements with 'constraint:'";
      d.got = "no constraint source";
      d.hint = "leave out --constraints";
      throw Error(std::move(d));
    }
  }
  if (v.method == ConstraintMethod::kZcp) {
    v.source = v.model;
    v.model = BreakVariableModel(v.source, &v.break_variables);
  }
  return v;
}

// The lines that say what the method did to the model, before its causality
// or equations ("" for the model as it is).
std::string MethodHeader(const MethodView& v) {
  if (v.method == ConstraintMethod::kParasitic) {
    std::vector<std::string> springs;
    for (const auto& e : v.model.elements) {
      if (e.kind != ElementKind::kC || e.name.size() < 3 || e.name.substr(e.name.size() - 2) != "_k") continue;
      const int j = v.model.FindElement(e.name.substr(0, e.name.size() - 2) + "_j");
      if (j >= 0 && v.model.elements[j].kind == ElementKind::kOne) springs.push_back(e.name);
    }
    return fmt::format(
        "constraints: parasitic: {} constraint sources replaced by a spring <S>_k (C) and a damper "
        "<S>_c (R) on a 1-junction <S>_j: {}\n\n",
        springs.size(), fmt::join(springs, ", "));
  }
  if (v.method == ConstraintMethod::kZcp)
    return fmt::format(
        "constraints: zcp: {} joint efforts are break variables (effort sources zcp_<S>), the "
        "algebraic variables of the DAE below: {}\n\n",
        v.break_variables.size(), fmt::join(v.break_variables, ", "));
  return "";
}

// zcp: the DAE's constraint equations, which the break variables satisfy.
std::string ZcpDaeText(const MethodView& v) {
  std::string flow, position;
  int positions = 0;
  for (const auto& e : v.source.elements) {
    if (e.form != LawForm::kConstraint) continue;
    const std::string what = e.direction.empty() ? e.joint : e.joint + ": " + e.direction;
    flow += fmt::format("  0 = f_{}{}    ({})\n", e.name, e.law.is_zero() ? "" : " - (" + e.law_text + ")", what);
    if (e.position) {
      position += fmt::format("  0 = {}    ({})\n", e.position_text, what);
      ++positions;
    }
  }
  return fmt::format(
      "\nDAE (--constraints zcp, integrated by IDA): the state equations of this graph, with the break variables "
      "algebraic, and\nflow constraints ({}; index 2):\n{}position constraints ({}; Gear-Gupta-Leimkuhler "
      "stabilization, a multiplier on the position states):\n{}"
      "the independent rows among them are chosen at the start (pivoted QR); redundant rows carry no effort\n",
      v.break_variables.size(), flow, positions, position);
}

// minimal-coordinates: the partition of the states chosen at the assembled start.
std::string PartitionText(const EquationSystem& eqs) {
  CodegenOptions cg;
  cg.backend = Backend::kTape;
  CompiledModel cm(eqs, cg);
  std::vector<double> x = cm.initial_state();
  ConstraintProjector(cm).Project(0, x.data());
  const CoordinatePartition p = ChooseCoordinatePartition(cm, 0, x);
  return fmt::format(
      "\ncoordinate partition (--constraints minimal-coordinates, chosen at the assembled start; chosen again "
      "where it becomes ill-conditioned):\n"
      "independent ({}, integrated): {}\n"
      "dependent positions ({}, solved from the position constraints): {}\n"
      "dependent momenta ({}, solved from the flow constraints): {}\n",
      p.independent.size(), fmt::join(p.independent, ", "), p.dependent_positions.size(),
      fmt::join(p.dependent_positions, ", "), p.dependent_momenta.size(), fmt::join(p.dependent_momenta, ", "));
}

// Text as LaTeX comments.
std::string Commented(const std::string& text) {
  std::string out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out += (line.empty() ? "%" : "% " + line) + "\n";
  return out;
}

int Check(const std::string& path) {
  Analysis a = Analyze(path);
  std::cout << DescribeModel(a.model) << "\n" << DomainReport(a.model);
  if (!a.graph.conflicts.empty()) {
    std::cout << CausalityReport(a.model, a.graph, nullptr);
    RequireNoConflicts(a.model, a.graph);
  }
  EquationSystem eqs = BuildEquations(a.model, a.graph);
  std::cout << fmt::format("causality (SCAP): {} storage elements in integral causality, {} in derivative causality\n",
                           a.graph.integral_storage.size(), a.graph.derivative_storage.size());
  std::cout << fmt::format("states ({}): {}\n", eqs.state_names.size(), fmt::join(eqs.state_names, ", "));
  int loops = 0;
  for (const auto& b : eqs.blocks) loops += b.derivative_causality ? 0 : 1;
  std::cout << fmt::format("algebraic loops: {}; implicit blocks: {}\n", loops, eqs.blocks.size());
  if (!eqs.constraint_rows.empty()) {
    // A mechanism: counts, rank, mobility and redundant joint directions at
    // the start (the tape is enough for this: nothing is integrated).
    CodegenOptions cg;
    cg.backend = Backend::kTape;
    CompiledModel cm(eqs, cg);
    std::cout << AnalyzeConstraints(cm, 0, cm.initial_state()).ToText();
  }
  std::cout << "ok\n";
  return 0;
}

int Causality(const std::string& path, const std::string& procedure, const std::string& constraints) {
  const MethodView view = LoadForMethod(path, constraints);
  const Model& m = view.model;
  std::cout << MethodHeader(view);
  CausalityOptions opt;
  opt.procedure = ParseProcedure(procedure);
  if (opt.procedure == CausalityProcedure::kLaCAP && !m.generalized.empty()) opt.generalized = m.generalized;
  CausalGraph g = AssignCausality(m, opt);
  if (!g.conflicts.empty() || !g.relaxed.empty()) {
    std::cout << CausalityReport(m, g, nullptr);
    return g.conflicts.empty() ? 0 : 1;
  }
  EquationSystem eqs;
  try {
    eqs = BuildEquations(m, g);
  } catch (const Error& e) {
    // The strokes are still worth seeing when the equations cannot be formed.
    std::cout << CausalityReport(m, g, nullptr) << "\n" << ZeroOrderPathReport(m, FindZeroOrderPaths(m, g));
    throw;
  }
  std::cout << CausalityReport(m, g, &eqs);
  std::cout << "\n" << ZeroOrderPathReport(m, FindZeroOrderPaths(m, g));
  // The break variables open the paths through the rigid joints; the DAE's
  // index comes from the constraints they satisfy.
  if (view.method == ConstraintMethod::kZcp) std::cout << ZcpDaeText(view);
  return 0;
}

// Writes the scalar model: multibody section and vector bonds expanded.
int Expand(const std::string& path, const std::string& out) {
  ModelSpec spec = ReadModelSpecFile(path);
  if (spec.multibody.present) ExpandMultibody(&spec);
  spec.multibody.present = false;
  ExpandVectorBonds(&spec);
  BuildModel(spec);  // the scalar model must itself be valid
  WriteFileAtomically(out, ModelSpecToYaml(spec), "expanded model");
  return 0;
}

int Equations(const std::string& path, bool latex, const std::string& form, bool explain,
              const std::string& constraints) {
  const MethodView view = LoadForMethod(path, constraints, form);
  Analysis a = Analyze(view.model, form);
  EquationSystem eqs = BuildEquations(a.model, a.graph);
  const std::string header = MethodHeader(view);
  std::cout << (latex ? Commented(header) : header);
  std::cout << (latex ? eqs.ToLatex(a.model) : eqs.ToText(a.model));
  std::string after;
  if (view.method == ConstraintMethod::kZcp) after = ZcpDaeText(view);
  if (view.method == ConstraintMethod::kMinimalCoordinates) after = PartitionText(eqs);
  std::cout << (latex ? Commented(after) : after);
  if (explain) {
    if (eqs.form != Formulation::kLagrange2) {
      Diagnostic d;
      d.message = "--explain shows the Lagrange subsystem of the second-kind formulation";
      d.expected = "--form lagrange2";
      d.got = "--form " + form;
      throw Error(d);
    }
    std::cout << "\n" << eqs.ExplainLagrange(a.model);
  }
  return 0;
}

struct SimulateArgs {
  std::string file, out, method = "dopri5", backend = "auto", form = "state", constraints = "auto";
  std::string block_solve = "auto";
  double t_end = 0, rtol = 1e-6, atol = 1e-9, dt_out = 0, step = 1e-3, t0 = 0;
  double parasitic_stiffness = 0, parasitic_damping = 0;
  long max_steps = 0;
  bool max_steps_given = false;  // else the solvers' defaults
  bool stats = false, assemble = false, method_given = false, no_stabilize = false, energy = false;
  bool stage_cache = true;  // --no-cache turns it off
  std::vector<std::string> params;
};

// The --param overrides, NAME=NUMBER each, in the order given.
std::vector<std::pair<std::string, double>> Overrides(const SimulateArgs& args) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& kv : args.params) {
    const auto eq = kv.find('=');
    double v = 0;
    try {
      if (eq == std::string::npos) throw std::invalid_argument("no =");
      size_t used = 0;
      v = std::stod(kv.substr(eq + 1), &used);
      if (used != kv.size() - eq - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      Diagnostic d;
      d.message = fmt::format("bad --param '{}'", kv);
      d.expected = "NAME=NUMBER";
      d.got = kv;
      throw Error(d);
    }
    if (!std::isfinite(v)) {
      Diagnostic d;
      d.where.file = args.file;
      d.message = fmt::format("--param {}: the value is not a finite number", kv);
      d.expected = "NAME=NUMBER, a finite number";
      d.got = kv;
      throw Error(d);
    }
    out.emplace_back(kv.substr(0, eq), v);
  }
  return out;
}

// A model loaded for a constraint method, and its compiled form. `model` is
// built only when the stage cache could not serve the run (and for zcp, which
// derives another model from it).
struct Compiled {
  std::optional<Model> model;
  bool assemble = false;  // Model::assemble
  CodegenOptions codegen;
  std::unique_ptr<CompiledModel> cm;
  bool stages_cached = false;  // the symbolic stages came from the stage cache
  double ready_seconds = 0;    // model file to compiled model
  std::string stage_note;      // why the stage cache was not used, if it was not
};

// Everything besides the file's bytes and the build that shapes the lowered
// equations (the stage cache's key): not the backend, tolerances or --param.
std::vector<std::string> StageSettings(const SimulateArgs& args, ConstraintMethod method, bool energy) {
  const bool parasitic = method == ConstraintMethod::kParasitic;
  return {"form=" + args.form, fmt::format("parasitic={}", parasitic),
          parasitic ? fmt::format("k={:a} c={:a}", args.parasitic_stiffness, args.parasitic_damping) : "",
          fmt::format("energy={}", energy)};
}

// Loads, assigns causality, builds and compiles a model for a constraint
// method; through the stage cache unless it is off or the method is zcp.
Compiled CompileFor(const SimulateArgs& args, ConstraintMethod method, bool energy = false) {
  const auto start = std::chrono::steady_clock::now();
  Compiled c;
  if (InJointCoordinates(args.form) && method != ConstraintMethod::kAuto &&
      method != ConstraintMethod::kLagrangeMultipliers) {
    Diagnostic d;
    d.where.file = args.file;
    d.message = fmt::format("--constraints {} does not combine with --form {}", args.constraints, args.form);
    d.expected = "--form state with --constraints, or --form lagrange1|lagrange2 alone";
    d.got = fmt::format("--form {} --constraints {}", args.form, args.constraints);
    d.hint = "Lagrange's equations of a mechanism are formed in its joint coordinates, which leave no joint "
             "constraint to relax or to solve";
    throw Error(std::move(d));
  }
  c.codegen.backend =
      args.backend == "tape" ? Backend::kTape : args.backend == "native" ? Backend::kNative : Backend::kAuto;
  using BlockSolve = CodegenOptions::BlockSolve;
  c.codegen.block_solve = args.block_solve == "dense"    ? BlockSolve::kDense
                          : args.block_solve == "sparse" ? BlockSolve::kSparse
                                                         : BlockSolve::kAuto;
  std::map<std::string, double> overrides;
  std::string override_text;
  for (const auto& [name, value] : Overrides(args)) {
    overrides[name] = value;
    override_text += fmt::format("{}={:a};", name, value);
  }
  const bool cacheable = args.stage_cache && method != ConstraintMethod::kZcp;
  StageCache cache(StageCacheOptions{cacheable, "", ""});
  const std::string key = cacheable ? cache.Key(args.file, StageSettings(args, method, energy)) : "";
  auto key_with_overrides = [&] {
    auto settings = StageSettings(args, method, energy);
    settings.push_back("param " + override_text);
    return key.empty() ? key : cache.Key(args.file, settings);
  };
  // Overrides reach everything derived from the parameters when the model is
  // built: a model whose build computes numbers from them (derived parameters,
  // initial values; a mechanism's poses, which the multibody library
  // computes) has an entry per set of overrides (StagedModel::overrides_in_key).
  const bool mechanism = !overrides.empty() && cacheable && ReadModelSpecFile(args.file).multibody.present;
  std::optional<StagedModel> staged = cache.Load(key);
  if ((!staged || staged->overrides_in_key || mechanism) && !overrides.empty()) staged = cache.Load(key_with_overrides());
  if (staged && !PhysicalParametersHold(*staged, overrides)) staged.reset();  // the Model's check explains
  if (!staged) {
    ParasiticOptions po;
    po.stiffness = args.parasitic_stiffness;
    po.damping = args.parasitic_damping;
    // BuildModel checks that masses, inertias and capacitances stay positive
    // under the overrides.
    c.model = InJointCoordinates(args.form) ? LoadModelForForm(args.file, args.form, energy, overrides)
                                            : LoadModelFor(args.file, method, po, energy, overrides);
    CausalGraph graph = AssignCausality(*c.model, OptionsFor(ParseFormulation(args.form), *c.model));
    RequireLagrangeApplies(*c.model, graph, args.form);
    staged = StageModel(*c.model, LowerModel(BuildEquations(*c.model, graph)));
    // Stored only if the file read for the key is still the file that was built.
    if (cache.Key(args.file, StageSettings(args, method, energy)) == key)
      cache.Store((staged->overrides_in_key || mechanism) && !overrides.empty() ? key_with_overrides() : key, *staged);
  } else {
    c.stages_cached = true;
  }
  c.assemble = staged->assemble;
  c.cm = std::make_unique<CompiledModel>(staged->lowered, c.codegen);
  c.stage_note = cache.note();
  c.ready_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

void SetParameters(CompiledModel& cm, const SimulateArgs& args) {
  for (const auto& [name, value] : Overrides(args)) cm.SetParameter(name, value);
}

SolverOptions SolverFor(const SimulateArgs& args, ConstraintMethod method) {
  SolverOptions so;
  // The parasitic springs make the model stiff: BDF unless a method is asked for.
  so.method = ParseMethod(method == ConstraintMethod::kParasitic && !args.method_given ? "bdf" : args.method);
  so.t0 = args.t0;
  so.t_end = args.t_end;
  so.rtol = args.rtol;
  so.atol = args.atol;
  so.dt_out = args.dt_out;
  so.step = args.step;
  if (args.max_steps_given) {
    // The budget asked for holds also for a stiff run under dopri5.
    so.max_steps = args.max_steps;
    so.stiff_steps = args.max_steps;
  }
  so.progress = true;
  return so;
}

// The process's peak resident memory so far (getrusage's ru_maxrss, in KiB on
// Linux), in MB.
double PeakMemoryMegabytes() {
  struct rusage usage {};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<double>(usage.ru_maxrss) * 1024 / 1e6;
}

// An interval that asks for more than kMaxOutputRows is refused before
// anything is compiled (the rows are streamed, but they would fill the disk).
constexpr double kMaxOutputRows = 1e7;
void CheckOutputRows(const SimulateArgs& args) {
  const double rows = (args.t_end - args.t0) / args.dt_out;
  if (!(args.dt_out > 0) || !std::isfinite(rows) || rows <= kMaxOutputRows) return;  // the solvers check the rest
  Diagnostic d;
  d.where.file = args.file;
  d.message = fmt::format("--dt-out {:g} asks for {:.3g} output rows over [{:g}, {:g}]", args.dt_out, rows, args.t0,
                          args.t_end);
  d.expected = fmt::format("at most {:.0f} output rows", kMaxOutputRows);
  d.got = fmt::format("(t_end - t0)/dt_out = {:.3g}", rows);
  d.hint = fmt::format("use --dt-out {:g} or more", (args.t_end - args.t0) / kMaxOutputRows);
  throw Error(std::move(d));
}

int Simulate(const SimulateArgs& args) {
  CheckOutputRows(args);
  const ConstraintMethod method = ParseConstraintMethod(args.constraints);
  Compiled compiled = CompileFor(args, method, args.energy);
  CompiledModel& cm = *compiled.cm;
  SetParameters(cm, args);
  const SolverOptions so = SolverFor(args, method);
  ConstrainedOptions co;
  co.method = method;
  co.source = compiled.model ? &*compiled.model : nullptr;
  co.codegen = compiled.codegen;
  co.assemble = args.assemble || compiled.assemble;
  co.stabilize = !args.no_stabilize;
  ConstrainedReport report;
  // The rows are streamed into a temporary beside the output as they are
  // computed and moved into place when the run has succeeded.
  CsvWriter csv(args.out);
  co.output = &csv;
  Solution sol = SimulateConstrained(cm, so, co, &report);
  if (method == ConstraintMethod::kParasitic) report.method = method;
  csv.Commit();
  if (method == ConstraintMethod::kAuto && cm.num_constraints() > 0)
    std::cerr << fmt::format("paynter: constraints: {} (choose with --constraints)\n",
                             ConstraintMethodName(report.method));
  if (args.stats) {
    std::cerr << fmt::format(
        "method {} ({} backend): {} steps, {} rejected, {} rhs evaluations, {} Jacobians{}\n"
        "compile {:.3f} s, integrate {:.6f} s, {} output rows -> {}\npeak memory {:.1f} MB\n",
        report.method == ConstraintMethod::kZcp ? std::string("ida") : MethodName(so.method), sol.backend, sol.stats.steps, sol.stats.rejected, sol.stats.rhs_evals,
        sol.stats.jac_evals, sol.stats.projections ? fmt::format(", {} projections", sol.stats.projections) : "",
        sol.compile_seconds, sol.stats.integrate_seconds, sol.num_rows(), args.out, PeakMemoryMegabytes());
    std::cerr << fmt::format("model to ready {:.4f} s ({})\n", compiled.ready_seconds,
                             compiled.stages_cached ? "symbolic stages from the stage cache"
                                                    : "symbolic stages built");
    if (!compiled.stage_note.empty()) std::cerr << "note: " << compiled.stage_note << "\n";
    if (sol.stats.stiff)
      std::cerr << fmt::format("dopri5 found the problem stiff from t = {:.6g}: --method bdf may be faster\n",
                               sol.stats.stiff_t);
    if (cm.num_constraints() > 0 || method != ConstraintMethod::kAuto) std::cerr << report.ToText();
    const std::string note = cm.codegen_note();
    if (!note.empty()) std::cerr << "note: " << note << "\n";
  }
  return 0;
}

// Every applicable method on one model: time, steps, the largest difference
// to minimal coordinates on each output, constraint drift.
int Compare(SimulateArgs args, const std::string& prefix, const std::string& plot_column) {
  CheckOutputRows(args);
  struct Run {
    std::string method;
    Solution sol;
    ConstrainedReport report;
    std::string failure;
  };
  std::vector<Run> runs;
  for (ConstraintMethod m : {ConstraintMethod::kMinimalCoordinates, ConstraintMethod::kLagrangeMultipliers,
                             ConstraintMethod::kParasitic, ConstraintMethod::kZcp}) {
    Run r;
    r.method = ConstraintMethodName(m);
    try {
      Compiled compiled = CompileFor(args, m, true);
      CompiledModel& cm = *compiled.cm;
      SetParameters(cm, args);
      SolverOptions so = SolverFor(args, m);
      so.progress = false;
      ConstrainedOptions co;
      co.method = m;
      co.source = compiled.model ? &*compiled.model : nullptr;
      co.codegen = compiled.codegen;
      co.assemble = args.assemble || compiled.assemble;
      r.sol = SimulateConstrained(cm, so, co, &r.report);
      r.report.method = m;
    } catch (const Error& e) {
      r.failure = e.what();
      const auto nl = r.failure.find('\n');
      if (nl != std::string::npos) r.failure = r.failure.substr(0, nl);
    }
    runs.push_back(std::move(r));
  }
  // The reference: minimal coordinates, else the first method that ran.
  size_t ref_index = 0;
  while (ref_index < runs.size() && !runs[ref_index].failure.empty()) ++ref_index;
  if (ref_index == runs.size()) {
    Diagnostic d;
    d.message = "compare: no method could simulate the model; minimal-coordinates: " + runs[0].failure;
    d.hint = "simulate the model with --constraints lagrange-multipliers --stats to see why";
    throw Error(std::move(d));
  }
  const Run& ref = runs[ref_index];
  if (ref_index > 0) std::cout << fmt::format("differences are to {} (minimal-coordinates did not run)\n\n", ref.method);
  const auto& all_cols = ref.sol.columns;
  // The model's outputs (the energy accounting's columns go into one figure).
  std::vector<std::string> cols;
  for (const auto& c : all_cols)
    if (c.rfind("energy_", 0) != 0) cols.push_back(c);
  const bool energy = cols.size() < all_cols.size();
  // The energy balance: max |stored - stored(0) - delivered + dissipated|
  // relative to the largest of the three.
  auto balance = [](const Solution& s) {
    const auto st = s.Column("energy_stored"), in = s.Column("energy_delivered"), out = s.Column("energy_dissipated");
    double err = 0, scale = 0;
    for (size_t i = 0; i < st.size(); ++i) {
      err = std::max(err, std::fabs(st[i] - st[0] - in[i] + out[i]));
      scale = std::max({scale, std::fabs(st[i]), std::fabs(in[i]), std::fabs(out[i])});
    }
    return scale > 0 ? err / scale : err;
  };
  std::string md = "| method | time (s) | steps | rhs evaluations | position drift | velocity drift |";
  std::string csv = "method,time_s,steps,rhs_evals,position_drift,velocity_drift";
  if (energy) md += " energy balance |", csv += ",energy_balance";
  for (size_t c = 1; c < cols.size(); ++c) {
    md += fmt::format(" max diff {} |", cols[c]);
    csv += ",diff_" + cols[c];
  }
  md += "\n|---|---:|---:|---:|---:|---:|";
  if (energy) md += "---:|";
  for (size_t c = 1; c < cols.size(); ++c) md += "---:|";
  md += "\n";
  csv += "\n";
  for (const auto& r : runs) {
    if (!r.failure.empty()) {
      md += fmt::format("| {} | not run: {} |\n", r.method, r.failure);
      csv += fmt::format("{},,,,,\n", r.method);
      continue;
    }
    const bool parasitic = r.method == "parasitic";
    md += fmt::format("| {} | {:.4f} | {} | {} | {} | {} |", r.method, r.sol.stats.integrate_seconds,
                      r.sol.stats.steps, r.sol.stats.rhs_evals,
                      parasitic ? fmt::format("{:.2e} (stretch)", r.report.max_position_drift)
                                : fmt::format("{:.2e}", r.report.max_position_drift),
                      parasitic ? std::string("-") : fmt::format("{:.2e}", r.report.max_velocity_drift));
    csv += fmt::format("{},{:.6g},{},{},{:.3e},{:.3e}", r.method, r.sol.stats.integrate_seconds, r.sol.stats.steps,
                       r.sol.stats.rhs_evals, r.report.max_position_drift,
                       parasitic ? 0.0 : r.report.max_velocity_drift);
    if (energy) {
      const double b = balance(r.sol);
      md += fmt::format(" {:.2e} |", b);
      csv += fmt::format(",{:.3e}", b);
    }
    for (size_t c = 1; c < cols.size(); ++c) {
      double diff = 0;
      size_t rc = 0;
      while (rc < r.sol.columns.size() && r.sol.columns[rc] != cols[c]) ++rc;
      const size_t nrows = std::min(r.sol.rows.size(), ref.sol.rows.size());
      for (size_t k = 0; k < nrows && rc < r.sol.columns.size(); ++k)
        diff = std::max(diff, std::fabs(r.sol.rows[k][rc] - ref.sol.rows[k][c]));
      md += fmt::format(" {:.2e} |", diff);
      csv += fmt::format(",{:.3e}", diff);
    }
    md += "\n";
    csv += "\n";
  }
  std::cout << md;
  if (!prefix.empty()) {
    WriteFileAtomically(prefix + ".md", md, "comparison table");
    WriteFileAtomically(prefix + ".csv", csv, "comparison table");
  }
  if (!plot_column.empty()) {
    // The difference of each method to minimal coordinates on one output, in
    // time (as the paper's figures 21 and 31): PREFIX_<column>.csv and .png.
    size_t c = 0;
    while (c < cols.size() && cols[c] != plot_column) ++c;
    if (c == 0 || c == cols.size()) {
      Diagnostic d;
      d.message = fmt::format("compare --plot: no output '{}'", plot_column);
      d.expected = "one of the model's outputs";
      d.got = plot_column;
      throw Error(std::move(d));
    }
    std::string text = "t";
    std::vector<std::string> series;
    for (size_t k = 1; k < runs.size(); ++k)
      if (runs[k].failure.empty()) {
        text += "," + runs[k].method;
        series.push_back(runs[k].method);
      }
    text += "\n";
    for (size_t i = 0; i < ref.sol.rows.size(); ++i) {
      text += fmt::format("{:.10g}", ref.sol.rows[i][0]);
      for (size_t k = 1; k < runs.size(); ++k) {
        if (!runs[k].failure.empty()) continue;
        const double v = i < runs[k].sol.rows.size() ? runs[k].sol.rows[i][c] - ref.sol.rows[i][c] : 0.0;
        text += fmt::format(",{:.6e}", v);
      }
      text += "\n";
    }
    const std::string base = (prefix.empty() ? std::string("compare") : prefix) + "_" + plot_column;
    WriteFileAtomically(base + ".csv", text, "difference table");
    PlotCsv(base + ".csv", base + ".png", series, "", "difference to minimal coordinates: " + plot_column);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"paynter: bond graphs in, simulations out"};
  app.require_subcommand(1);
  std::string file, out, procedure = "SCAP", x_col, title, form = "state";
  bool latex = false, explain = false;
  int highlight = 0;
  std::vector<std::string> columns;

  auto* check = app.add_subcommand("check", "validate a model and summarize it");
  check->add_option("FILE", file, "model file (YAML)")->required();

  auto* caus = app.add_subcommand("causality", "assign causality and report strokes, conflicts and loops");
  caus->add_option("FILE", file, "model file (YAML)")->required();
  caus->add_option("--procedure", procedure, "SCAP | HaCAP | LaCAP | LCAP | RCAP")->default_val("SCAP");
  std::string constraints = "auto";
  const char* constraints_help =
      "mechanisms: show the model as a method works on it: auto | lagrange-multipliers | minimal-coordinates | "
      "parasitic | zcp";
  caus->add_option("--constraints", constraints, constraints_help)->default_val("auto");

  auto* eqs = app.add_subcommand("equations", "print the state equations");
  eqs->add_option("FILE", file, "model file (YAML)")->required();
  eqs->add_flag("--latex", latex, "print LaTeX");
  eqs->add_option("--form", form, "state | lagrange1 | lagrange2 | hamilton")->default_val("state");
  eqs->add_flag("--explain", explain, "with --form lagrange2: the Lagrange subsystem (momenta, efforts)");
  eqs->add_option("--constraints", constraints, constraints_help)->default_val("auto");

  SimulateArgs sa;
  auto* sim = app.add_subcommand("simulate", "simulate a model and write a CSV");
  sim->add_option("FILE", sa.file, "model file (YAML)")->required();
  sim->add_option("--t-end", sa.t_end, "end time")->required();
  sim->add_option("--t0", sa.t0, "start time")->default_val(0.0);
  sim->add_option("--method", sa.method, "rk4 | dopri5 | bdf")->default_val("dopri5");
  sim->add_option("--form", sa.form, "state | lagrange1 | lagrange2 | hamilton")->default_val("state");
  sim->add_option("--rtol", sa.rtol, "relative tolerance")->default_val(1e-6);
  sim->add_option("--atol", sa.atol, "absolute tolerance")->default_val(1e-9);
  sim->add_option("--dt-out", sa.dt_out, "output interval (default (t_end - t0)/1000)")->default_val(0.0);
  sim->add_option("--step", sa.step, "fixed step for rk4")->default_val(1e-3);
  sim->add_option("--max-steps", sa.max_steps,
                  "step budget (default 50000000; dopri5 stops a stiff run that needs more than 100000)");
  sim->add_option("--backend", sa.backend, "auto | native | tape")->default_val("auto")
      ->check(CLI::IsMember({"auto", "native", "tape"}));
  sim->add_option("--block-solve", sa.block_solve,
                  "implicit blocks: auto (sparse LU for large sparse blocks) | dense | sparse")
      ->default_val("auto")
      ->check(CLI::IsMember({"auto", "dense", "sparse"}));
  sim->add_option("--param", sa.params, "override a parameter: NAME=VALUE (repeatable)");
  sim->add_flag("--stats", sa.stats, "print solver statistics and timings");
  sim->add_option("--constraints", sa.constraints,
                  "mechanisms: auto | lagrange-multipliers | minimal-coordinates | parasitic | zcp")
      ->default_val("auto");
  sim->add_flag("--assemble", sa.assemble, "make an inconsistent start consistent, however far off");
  sim->add_flag("--no-stabilize", sa.no_stabilize, "lagrange-multipliers: no projection after steps (to see the drift)");
  sim->add_flag("--energy", sa.energy,
                "add the columns energy_stored, energy_delivered, energy_dissipated (linear storage laws)");
  sim->add_option("--parasitic-stiffness", sa.parasitic_stiffness, "parasitic: stiffness of every joint direction");
  sim->add_option("--parasitic-damping", sa.parasitic_damping, "parasitic: damping of every joint direction");
  sim->add_option("-o,--output", sa.out, "CSV file to write")->required();
  sim->add_flag("!--no-cache", sa.stage_cache, "build the symbolic stages afresh, without the stage cache");

  SimulateArgs ca;
  std::string compare_out;
  auto* cmp = app.add_subcommand("compare", "simulate a mechanism by every method and tabulate the differences");
  cmp->add_option("FILE", ca.file, "model file (YAML)")->required();
  cmp->add_option("--t-end", ca.t_end, "end time")->required();
  cmp->add_option("--rtol", ca.rtol, "relative tolerance")->default_val(1e-6);
  cmp->add_option("--atol", ca.atol, "absolute tolerance")->default_val(1e-9);
  cmp->add_option("--dt-out", ca.dt_out, "output interval (default t_end/1000)")->default_val(0.0);
  cmp->add_option("--method", ca.method, "integrator for the rigid methods: rk4 | dopri5 | bdf")->default_val("dopri5");
  cmp->add_option("--max-steps", ca.max_steps, "step budget of each run (as for simulate)");
  cmp->add_option("--param", ca.params, "override a parameter: NAME=VALUE (repeatable)");
  cmp->add_flag("--assemble", ca.assemble, "make an inconsistent start consistent");
  cmp->add_option("--parasitic-stiffness", ca.parasitic_stiffness, "parasitic: stiffness of every joint direction");
  cmp->add_option("--parasitic-damping", ca.parasitic_damping, "parasitic: damping of every joint direction");
  cmp->add_option("-o,--output", compare_out, "write PREFIX.md and PREFIX.csv");
  cmp->add_flag("!--no-cache", ca.stage_cache, "build the symbolic stages afresh, without the stage cache");
  std::string compare_plot;
  cmp->add_option("--plot", compare_plot, "plot each method's difference to minimal coordinates on this output "
                                          "(PREFIX_<output>.csv and .png)");

  auto* expand = app.add_subcommand("expand", "write the scalar model: vector bonds and the multibody section expanded");
  expand->add_option("FILE", file, "model file (YAML)")->required();
  expand->add_option("-o,--output", out, "scalar model file (YAML)")->required();

  auto* plot = app.add_subcommand("plot", "plot CSV columns with gnuplot");
  plot->add_option("CSV", file, "CSV file from 'paynter simulate'")->required();
  plot->add_option("COLUMNS", columns, "columns to plot (default: all)");
  plot->add_option("-o,--output", out, "image file (.png, .svg, .pdf)")->required();
  plot->add_option("-x,--x-column", x_col, "column for the x axis (default: the first)");
  plot->add_option("--title", title, "plot title");

  auto* draw = app.add_subcommand("draw", "draw the bond graph with causal strokes (Graphviz)");
  draw->add_option("FILE", file, "model file (YAML)")->required();
  draw->add_option("-o,--output", out, "drawing (.svg, .png, .pdf, .dot)")->required();
  draw->add_option("--procedure", procedure, "causality procedure for the strokes")->default_val("SCAP");
  draw->add_option("--highlight-path", highlight, "highlight zero-order causal path N (numbered as in 'paynter causality')")
      ->check(CLI::PositiveNumber);
  draw->add_option("--constraints", constraints, constraints_help)->default_val("auto");

  RegisterLinearCommands(&app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help) and has codes of its own for
    // usage errors (106, 109, ...): paynter exits 0 for --help, 1 for the rest.
    return app.exit(e) == 0 ? 0 : 1;
  }
  try {
    if (const auto rc = RunLinearCommands()) return *rc;
    if (check->parsed()) return Check(file);
    if (caus->parsed()) return Causality(file, procedure, constraints);
    if (eqs->parsed()) return Equations(file, latex, form, explain, constraints);
    if (sim->parsed()) {
      sa.method_given = sim->get_option("--method")->count() > 0;
      sa.max_steps_given = sim->get_option("--max-steps")->count() > 0;
      return Simulate(sa);
    }
    if (cmp->parsed()) {
      ca.method_given = cmp->get_option("--method")->count() > 0;
      ca.max_steps_given = cmp->get_option("--max-steps")->count() > 0;
      return Compare(ca, compare_out, compare_plot);
    }
    if (expand->parsed()) return Expand(file, out);
    if (plot->parsed()) {
      PlotCsv(file, out, columns, x_col, title);
      return 0;
    }
    if (draw->parsed()) {
      const MethodView view = LoadForMethod(file, constraints);
      const Model& m = view.model;
      CausalityOptions opt;
      opt.procedure = ParseProcedure(procedure);
      if (opt.procedure == CausalityProcedure::kLaCAP && !m.generalized.empty()) opt.generalized = m.generalized;
      CausalGraph g = AssignCausality(m, opt);
      std::vector<ZeroOrderPath> paths;
      const ZeroOrderPath* hl = nullptr;
      if (highlight > 0) {
        paths = FindZeroOrderPaths(m, g);
        hl = &SelectZeroOrderPath(paths, highlight);
      }
      RenderDot(BondGraphDot(m, &g, hl), out);
      return 0;
    }
  } catch (const paynter::Error& e) {
    // An error found while simulating has no file of its own: it is the model's.
    const std::string model_file = sim->parsed()                   ? sa.file
                                   : cmp->parsed()                 ? ca.file
                                   : !LinearCommandFile().empty() ? LinearCommandFile()
                                   : plot->parsed()                ? ""
                                                                   : file;
    const std::string what = e.what();
    if (e.diagnostic().where.file.empty() && !model_file.empty() && what.rfind("<model>", 0) == 0) {
      Diagnostic d = e.diagnostic();
      d.where.file = model_file;
      std::cerr << d.ToString() << "\n";
    } else {
      std::cerr << what << "\n";
    }
    return 1;
  } catch (const std::exception& e) {
    std::cerr << paynter::Error(std::string("paynter: internal error: ") + e.what()).what() << "\n";  // escaped
    return 2;
  }
  return 0;
}
