// paynter — the command-line program: a thin layer over include/paynter/.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <memory>
#include <cstdio>
#include <iostream>

#include "paynter/paynter.h"

namespace {

using namespace paynter;

struct Analysis {
  Model model;
  CausalGraph graph;
};

// Lagrange's equations of a mechanism with joints need its generalized
// coordinates, which paynter does not form from joints yet: say so, instead
// of the causal conflicts of the artificial sources on the bodies' junctions.
void RequireLagrangeApplies(const Model& model, const CausalGraph& graph, const std::string& form) {
  if (graph.conflicts.empty() || (form != "lagrange1" && form != "lagrange2")) return;
  for (const auto& e : model.elements)
    if (e.form == LawForm::kConstraint) {
      Diagnostic d;
      d.where.file = model.file;
      d.message = fmt::format("--form {} is not available for a mechanism with joints (its generalized coordinates "
                              "would be the joints' coordinates, which paynter does not form from the joints yet)",
                              form);
      d.expected = "--form state or hamilton on a mechanism";
      d.got = fmt::format("--form {} ({} causal conflicts of the artificial sources)", form, graph.conflicts.size());
      d.hint = "for the equations in independent coordinates, simulate with --constraints minimal-coordinates";
      throw Error(std::move(d));
    }
}

// Loads a model and assigns the causality that `form` asks for.
Analysis Analyze(const std::string& path, const std::string& form = "state") {
  Analysis a{LoadModel(path), {}};
  a.graph = AssignCausality(a.model, OptionsFor(ParseFormulation(form), a.model));
  RequireLagrangeApplies(a.model, a.graph, form);
  return a;
}

int Check(const std::string& path) {
  Analysis a = Analyze(path);
  std::cout << DescribeModel(a.model) << "\n";
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

int Causality(const std::string& path, const std::string& procedure) {
  Model m = LoadModel(path);
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

int Equations(const std::string& path, bool latex, const std::string& form, bool explain) {
  Analysis a = Analyze(path, form);
  EquationSystem eqs = BuildEquations(a.model, a.graph);
  std::cout << (latex ? eqs.ToLatex(a.model) : eqs.ToText(a.model));
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
  double t_end = 0, rtol = 1e-6, atol = 1e-9, dt_out = 0, step = 1e-3, t0 = 0;
  double parasitic_stiffness = 0, parasitic_damping = 0;
  long max_steps = 0;
  bool max_steps_given = false;  // else the solvers' defaults
  bool stats = false, assemble = false, method_given = false, no_stabilize = false, energy = false;
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

// A model loaded for a constraint method, and its compiled form.
struct Compiled {
  Model model;
  CodegenOptions codegen;
  std::unique_ptr<CompiledModel> cm;
};

// Loads, assigns causality, builds and compiles a model for a constraint method.
Compiled CompileFor(const SimulateArgs& args, ConstraintMethod method, bool energy = false) {
  ParasiticOptions po;
  po.stiffness = args.parasitic_stiffness;
  po.damping = args.parasitic_damping;
  Compiled c;
  // The overrides replace the parameters' values before anything is derived
  // from them (other parameters, initial values, poses); BuildModel checks
  // that masses, inertias and capacitances stay positive under them.
  std::map<std::string, double> overrides;
  for (const auto& [name, value] : Overrides(args)) overrides[name] = value;
  c.model = LoadModelFor(args.file, method, po, energy, overrides);
  CausalGraph graph = AssignCausality(c.model, OptionsFor(ParseFormulation(args.form), c.model));
  RequireLagrangeApplies(c.model, graph, args.form);
  EquationSystem eqs = BuildEquations(c.model, graph);
  c.codegen.backend =
      args.backend == "tape" ? Backend::kTape : args.backend == "native" ? Backend::kNative : Backend::kAuto;
  c.cm = std::make_unique<CompiledModel>(eqs, c.codegen);
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

// The output rows are held in memory until the CSV is written: an interval
// that asks for more than kMaxOutputRows is refused before anything is
// compiled (it would exhaust the memory first).
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
  co.source = &compiled.model;
  co.codegen = compiled.codegen;
  co.assemble = args.assemble || compiled.model.assemble;
  co.stabilize = !args.no_stabilize;
  ConstrainedReport report;
  Solution sol = SimulateConstrained(cm, so, co, &report);
  if (method == ConstraintMethod::kParasitic) report.method = method;
  WriteCsv(sol, args.out);
  if (method == ConstraintMethod::kAuto && cm.num_constraints() > 0)
    std::cerr << fmt::format("paynter: constraints: {} (choose with --constraints)\n",
                             ConstraintMethodName(report.method));
  if (args.stats) {
    std::cerr << fmt::format(
        "method {} ({} backend): {} steps, {} rejected, {} rhs evaluations, {} Jacobians{}\n"
        "compile {:.3f} s, integrate {:.6f} s, {} output rows -> {}\n",
        report.method == ConstraintMethod::kZcp ? std::string("ida") : MethodName(so.method), sol.backend, sol.stats.steps, sol.stats.rejected, sol.stats.rhs_evals,
        sol.stats.jac_evals, sol.stats.projections ? fmt::format(", {} projections", sol.stats.projections) : "",
        sol.compile_seconds, sol.stats.integrate_seconds, sol.rows.size(), args.out);
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
      co.source = &compiled.model;
      co.codegen = compiled.codegen;
      co.assemble = args.assemble || compiled.model.assemble;
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

  auto* eqs = app.add_subcommand("equations", "print the state equations");
  eqs->add_option("FILE", file, "model file (YAML)")->required();
  eqs->add_flag("--latex", latex, "print LaTeX");
  eqs->add_option("--form", form, "state | lagrange1 | lagrange2 | hamilton")->default_val("state");
  eqs->add_flag("--explain", explain, "with --form lagrange2: the Lagrange subsystem (momenta, efforts)");

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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help) and has codes of its own for
    // usage errors (106, 109, ...): paynter exits 0 for --help, 1 for the rest.
    return app.exit(e) == 0 ? 0 : 1;
  }
  try {
    if (check->parsed()) return Check(file);
    if (caus->parsed()) return Causality(file, procedure);
    if (eqs->parsed()) return Equations(file, latex, form, explain);
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
      Model m = LoadModel(file);
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
    const std::string model_file = sim->parsed() ? sa.file : cmp->parsed() ? ca.file : plot->parsed() ? "" : file;
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
