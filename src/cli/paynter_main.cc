// paynter — the command-line program: a thin layer over include/paynter/
// (the commands' work is in paynter/run.h, shared with the other front ends).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <unistd.h>

#include "commands.h"
#include "paynter/analysis.h"
#include "paynter/data_dir.h"
#include "paynter/paynter.h"
#include "paynter/run.h"

namespace {

using namespace paynter;

// Writes the model after the front end's passes (all of them: the scalar
// model, multibody section and vector bonds expanded), or after `after`.
int Expand(const std::string& path, const std::string& out, const std::string& after) {
  const LoadPass last = after.empty() ? LoadPasses().back().pass : ParseLoadPass(after, path);
  if (last == LoadPass::kRead)
    ThrowAt({path}, "", "--after read: the read pass's output is the model file as written",
            "a later pass: submodels, overrides, poses, multibody, vector-bonds, parasitic or energy", "read",
            "read the file itself, or expand --after submodels for its instances flattened");
  const ModelSpec spec = LoadSpec(ModelSource::File(path), {}, last);
  if (last == LoadPasses().back().pass) BuildModel(spec);  // the scalar model must itself be valid
  WriteFileAtomically(out, ModelSpecToYaml(spec), "expanded model");
  return 0;
}

// simulate's and compare's options: a run's, the output, --stats and the
// --param texts (parsed into run.params once the command line is read).
struct SimulateArgs {
  RunOptions run;
  std::string out;
  bool stats = false, no_stabilize = false;
  std::vector<std::string> params;
  // The run's options with the --param texts parsed.
  RunOptions Options() const {
    RunOptions o = run;
    o.params = ParseParameterOverrides(params, run.file);
    o.stabilize = !no_stabilize;
    return o;
  }
};

int Simulate(const SimulateArgs& args) {
  const RunOptions options = args.Options();
  CheckOutputRows(options);
  const ConstraintMethod method = options.constraints;
  PreparedModel prepared = PrepareModel(options);
  const CompiledModel& cm = prepared.compiled();
  // The rows are streamed into a temporary beside the output as they are
  // computed and moved into place when the run has succeeded.
  CsvWriter csv(args.out);
  RunResult run = RunPrepared(prepared, cm, options, &csv);
  const Solution& sol = run.solution;
  const ConstrainedReport& report = run.report;
  const SolverOptions so = SolverOptionsFor(options, method);
  csv.Commit();
  if (method == ConstraintMethod::kAuto && cm.num_constraints() > 0)
    std::cerr << fmt::format("paynter: constraints: {} (choose with --constraints)\n",
                             ConstraintMethodName(report.method));
  if (args.stats) {
    std::cerr << fmt::format(
        "method {} ({} backend): {} steps, {} rejected, {} rhs evaluations, {} Jacobians{}\n"
        "compile {:.3f} s, integrate {:.6f} s, {} output rows -> {}\npeak memory {:.1f} MB\n",
        IntegratorName(report.method, so.method), sol.backend, sol.stats.steps, sol.stats.rejected, sol.stats.rhs_evals,
        sol.stats.jac_evals, sol.stats.projections ? fmt::format(", {} projections", sol.stats.projections) : "",
        sol.compile_seconds, sol.stats.integrate_seconds, sol.num_rows(), args.out, PeakMemoryMegabytes());
    if (const CompiledProgram::Tiers t = run.tiers; t.tape_runs + t.native_runs > 0)
      std::cerr << fmt::format("tiered: right-hand side run {} times on the tape, {} in native code; {}\n", t.tape_runs,
                               t.native_runs, t.switched ? fmt::format("switched at t = {:.6g}, {:.3f} s after the compile began", t.switch_slot0, t.switch_seconds)
                                                         : "native code not ready before the end (its compile goes on, for the cache)");
    std::cerr << fmt::format("model to ready {:.4f} s ({})\n", prepared.ready_seconds(),
                             prepared.stages_cached() ? "symbolic stages from the stage cache"
                                                      : "symbolic stages built");
    if (!prepared.stage_note().empty()) std::cerr << "note: " << prepared.stage_note() << "\n";
    if (cm.has_events()) std::cerr << fmt::format("events: {} (two rows each in the output)\n", sol.stats.events);
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
// to minimal coordinates on each output, constraint drift (paynter/analysis.h).
int Compare(const SimulateArgs& args, const std::string& prefix, const std::string& plot_column) {
  const MethodComparison c = CompareMethods(args.Options());
  if (c.reference > 0)
    std::cout << fmt::format("differences are to {} (minimal-coordinates did not run)\n\n",
                             ConstraintMethodName(c.runs[c.reference].method));
  const std::string md = ComparisonMarkdown(c);
  std::cout << md;
  if (!prefix.empty()) {
    WriteFileAtomically(prefix + ".md", md, "comparison table");
    WriteFileAtomically(prefix + ".csv", ComparisonCsv(c), "comparison table");
  }
  if (!plot_column.empty()) {
    // The difference of each method to minimal coordinates on one output, in
    // time (as the paper's figures 21 and 31): PREFIX_<column>.csv and .png.
    std::vector<std::string> series;
    const std::string text = DifferenceCsv(c, plot_column, &series);
    const std::string base = (prefix.empty() ? std::string("compare") : prefix) + "_" + plot_column;
    WriteFileAtomically(base + ".csv", text, "difference table");
    PlotCsv(base + ".csv", base + ".png", series, "", "difference to minimal coordinates: " + plot_column);
  }
  return 0;
}

// Before the options are read: a command that does not exist is named with
// the nearest one, and a model file that does not exist is reported before
// any option the command requires (the file is what a user mistypes first).
std::optional<int> CheckCommandAndFile(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string command = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  if (std::find(names.begin(), names.end(), command) == names.end()) {
    Diagnostic d;
    d.where.file = "paynter";
    d.message = fmt::format("'{}' is not a command", command);
    d.expected = fmt::format("one of: {}", fmt::join(names, ", "));
    d.got = command;
    const std::string near = DidYouMean(command, names);
    d.hint = near.empty() ? "paynter --help lists the commands" : near;
    std::cerr << Error(std::move(d)).what() << "\n";
    return 1;
  }
  // The commands whose first argument is a model file (plot's is a CSV file,
  // which it reports itself).
  static const char* const kModelFirst[] = {"check", "causality", "equations", "simulate", "compare", "expand", "draw",
                                            "report", "fmu", "linearize", "bode", "sweep"};
  if (argc < 3 || argv[2][0] == '-' ||
      std::find_if(std::begin(kModelFirst), std::end(kModelFirst), [&](const char* c) { return command == c; }) ==
          std::end(kModelFirst))
    return std::nullopt;
  std::error_code ec;
  if (std::filesystem::exists(argv[2], ec)) return std::nullopt;
  Diagnostic d;
  d.where.file = argv[2];
  d.message = "cannot open the model file";
  d.expected = "a readable YAML file";
  d.got = "no such file";
  d.hint = fmt::format("paynter {} FILE ...: the model file comes first (examples/ holds models to start from)", command);
  std::cerr << Error(std::move(d)).what() << "\n";
  return 1;
}

// `paynter studio ...` runs the program paynter-studio beside this one with
// the same arguments (src/studio/: it links the server library, which this
// program does not load). Returns only when it cannot be started.
int RunStudio(int argc, char** argv) {
  const std::string dir = CodeDirectory();
  const std::string program = (dir.empty() ? std::string(".") : dir) + "/paynter-studio";
  std::vector<char*> args;
  args.push_back(const_cast<char*>("paynter-studio"));
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(program.c_str(), args.data());
  Diagnostic d;
  d.where.file = program;
  d.message = "this paynter has no studio: the program paynter-studio cannot be started";
  d.expected = "paynter-studio beside paynter (built when cpp-httplib is installed)";
  d.got = std::strerror(errno);
  d.hint = "install libcpp-httplib-dev (bash scripts/setup.sh) and build again (bash scripts/build.sh)";
  std::cerr << Error(std::move(d)).what() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "studio") return RunStudio(argc, argv);
  CLI::App app{"paynter: bond graphs in, simulations out"};
  SetCommandLine(argc, argv);
  SetStageProgress(true);  // long symbolic stages say so on stderr (paynter/progress.h)
  app.require_subcommand(1);
  std::string file, out, procedure = "SCAP", x_col, title, form = "state", after, compare_method = "dopri5";
  bool latex = false, explain = false, emit_c = false;
  int highlight = 0;
  std::vector<std::string> columns;

  std::string constraints = "auto";
  const char* constraints_help =
      "mechanisms: show the model as a method works on it: auto | lagrange-multipliers | minimal-coordinates | "
      "parasitic | zcp";
  bool standalone = false, expand_drawing = false;
  SimulateArgs sa, ca;
  std::string compare_out, compare_plot;

  auto* check = app.add_subcommand("check", "validate a model and summarize it");
  if (CommandWanted("check")) check->add_option("FILE", file, "model file (YAML)")->required();

  auto* caus = app.add_subcommand("causality", "assign causality and report strokes, conflicts and loops");
  if (CommandWanted("causality")) {
    caus->add_option("FILE", file, "model file (YAML)")->required();
    caus->add_option("--procedure", procedure, "SCAP | HaCAP | LaCAP | LCAP | RCAP | BHCAP")->default_val("SCAP");
    caus->add_option("--constraints", constraints, constraints_help)->default_val("auto");
  }

  auto* eqs = app.add_subcommand("equations", "print the state equations");
  if (CommandWanted("equations")) {
    eqs->add_option("FILE", file, "model file (YAML)")->required();
    eqs->add_flag("--latex", latex, "print LaTeX");
    eqs->add_flag("--standalone", standalone, "with --latex: a whole LaTeX document");
    eqs->add_option("--form", form, "state | lagrange1 | lagrange2 | hamilton | boltzmann-hamel")->default_val("state");
    eqs->add_flag("--emit-c", emit_c, "print the C code generated for the model's programs instead");
    eqs->add_flag("--explain", explain, "with --form lagrange2: the Lagrange subsystem (momenta, efforts); with --form boltzmann-hamel: the transformation, T* in the quasi-velocities, the Hamel coefficients");
    eqs->add_option("--constraints", constraints, constraints_help)->default_val("auto");
  }

  auto* sim = app.add_subcommand("simulate", "simulate a model and write a CSV");
  if (CommandWanted("simulate")) {
    sim->add_option("FILE", sa.run.file, "model file (YAML)")->required();
    AddRunOptions(sim, sa.run);
    sim->add_option("--param", sa.params, "override a parameter: NAME=VALUE (repeatable)");
    sim->add_flag("--stats", sa.stats, "print solver statistics and timings");
    sim->add_flag("--no-stabilize", sa.no_stabilize, "lagrange-multipliers: no projection after steps (to see the drift)");
    sim->add_flag("--energy", sa.run.energy,
                  "add the columns energy_stored, energy_delivered, energy_dissipated (linear storage laws)");
    sim->add_option("--parasitic-stiffness", sa.run.parasitic_stiffness, "parasitic: stiffness of every joint direction");
    sim->add_option("--parasitic-damping", sa.run.parasitic_damping, "parasitic: damping of every joint direction");
    sim->add_option("-o,--output", sa.out, "CSV file to write (default: the model's file name with .csv, here)");
  }

  auto* cmp = app.add_subcommand("compare", "simulate a mechanism by every method and tabulate the differences");
  if (CommandWanted("compare")) {
    cmp->add_option("FILE", ca.run.file, "model file (YAML)")->required();
    cmp->add_option("--t-end", ca.run.t_end, "end time (default: the model's simulation: t_end)");
    cmp->add_option("--rtol", ca.run.rtol, "relative tolerance")->default_val(1e-6);
    cmp->add_option("--atol", ca.run.atol, "absolute tolerance")->default_val(1e-9);
    cmp->add_option("--dt-out", ca.run.dt_out, "output interval (default t_end/1000)")->default_val(0.0);
    cmp->add_option("--method", compare_method, "integrator for the rigid methods: rk4 | dopri5 | bdf")
        ->default_val("dopri5");
    cmp->add_option("--max-steps", ca.run.max_steps, "step budget of each run (as for simulate)");
    cmp->add_option("--param", ca.params, "override a parameter: NAME=VALUE (repeatable)");
    cmp->add_flag("--assemble", ca.run.assemble, "make an inconsistent start consistent");
    cmp->add_option("--parasitic-stiffness", ca.run.parasitic_stiffness, "parasitic: stiffness of every joint direction");
    cmp->add_option("--parasitic-damping", ca.run.parasitic_damping, "parasitic: damping of every joint direction");
    cmp->add_option("-o,--output", compare_out, "write PREFIX.md and PREFIX.csv");
    cmp->add_flag("!--no-cache", ca.run.stage_cache, "build the symbolic stages afresh, without the stage cache");
    cmp->add_option("--plot", compare_plot, "plot each method's difference to minimal coordinates on this output "
                                            "(PREFIX_<output>.csv and .png)");
  }

  auto* expand = app.add_subcommand("expand", "write the scalar model: vector bonds and the multibody section expanded");
  if (CommandWanted("expand")) {
    expand->add_option("FILE", file, "model file (YAML)")->required();
    expand->add_option("-o,--output", out, "scalar model file (YAML)")->required();
    expand->add_option("--after", after,
                       "write the model after this pass of the front end instead of after all of them: submodels | "
                       "overrides | poses | multibody | vector-bonds | parasitic | energy");
  }

  auto* plot = app.add_subcommand("plot", "plot CSV columns with gnuplot");
  if (CommandWanted("plot")) {
    plot->add_option("CSV", file, "CSV file from 'paynter simulate'")->required();
    plot->add_option("COLUMNS", columns, "columns to plot (default: all)");
    plot->add_option("-o,--output", out, "image file (.png, .svg, .pdf)")->required();
    plot->add_option("-x,--x-column", x_col, "column for the x axis (default: the first)");
    plot->add_option("--title", title, "plot title");
  }

  auto* draw = app.add_subcommand("draw", "draw the bond graph with causal strokes (Graphviz)");
  if (CommandWanted("draw")) {
    draw->add_option("FILE", file, "model file (YAML)")->required();
    draw->add_option("-o,--output", out, "drawing (.svg, .png, .pdf, .dot)")->required();
    draw->add_option("--procedure", procedure, "causality procedure for the strokes")->default_val("SCAP");
    draw->add_option("--highlight-path", highlight,
                     "highlight zero-order causal path N (numbered as in 'paynter causality')")
        ->check(CLI::PositiveNumber);
    draw->add_option("--constraints", constraints, constraints_help)->default_val("auto");
    draw->add_flag("--expand", expand_drawing,
                   "draw every scalar element and bond (a model with vector bonds or a multibody section is drawn as "
                   "its components and multibonds otherwise)");
  }

  CLI::App* report = nullptr;
  const auto run_report = AddReportCommand(app, &report);

  CLI::App* fmu = AddFmuCommand(app);
  RegisterLinearCommands(&app);
  CLI::App* sweep = AddSweepCommand(app);
  // Run by RunStudio before the options are read; here for --help's list.
  app.add_subcommand("studio", "edit, check, draw and run models in the browser: a server on 127.0.0.1 (docs/studio.md)");

  app.set_version_flag("--version", std::string("paynter ") + PAYNTER_VERSION);
  if (const std::optional<int> rc = CheckCommandAndFile(app, argc, argv)) return *rc;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help) and has codes of its own for
    // usage errors (106, 109, ...): paynter exits 0 for --help, 1 for the rest.
    return app.exit(e) == 0 ? 0 : 1;
  }
  try {
    if (const auto rc = RunLinearCommands()) return *rc;
    if (check->parsed()) return CheckReport(file, std::cout);
    if (caus->parsed())
      return CausalityText(file, ParseProcedure(procedure), ParseConstraintMethod(constraints), std::cout);
    if (eqs->parsed() && emit_c)
      return GeneratedCodeText(file, ParseFormulation(form), ParseConstraintMethod(constraints), std::cout);
    if (eqs->parsed())
      return EquationsText(file, latex, ParseFormulation(form), explain, ParseConstraintMethod(constraints), std::cout,
                           standalone);
    if (sim->parsed()) {
      ReadRunOptionCounts(sim, sa.run);
      if (sa.out.empty()) sa.out = std::filesystem::path(sa.run.file).stem().string() + ".csv";
      return Simulate(sa);
    }
    if (cmp->parsed()) {
      ca.run.method_given = cmp->get_option("--method")->count() > 0;
      ca.run.max_steps_given = cmp->get_option("--max-steps")->count() > 0;
      ca.run.method = ParseMethod(compare_method);
      ApplyModelSettings(ca.run, GivenRunSettings(cmp));
      return Compare(ca, compare_out, compare_plot);
    }
    if (sweep->parsed()) return RunSweepCommand();
    if (expand->parsed()) return Expand(file, out, after);
    if (fmu->parsed()) return RunFmuCommand();
    if (report->parsed()) return run_report();
    if (plot->parsed()) {
      PlotCsv(file, out, columns, x_col, title);
      return 0;
    }
    if (draw->parsed()) {
      DrawOptions options;
      options.procedure = ParseProcedure(procedure);
      options.constraints = ParseConstraintMethod(constraints);
      options.expand = expand_drawing;
      options.highlight = highlight;
      RenderDot(DrawingDot(file, options), out);
      return 0;
    }
  } catch (const paynter::Error& e) {
    // An error found while simulating has no file of its own: it is the model's.
    const std::string model_file = sim->parsed()                  ? sa.run.file
                                   : cmp->parsed()                ? ca.run.file
                                   : !LinearCommandFile().empty() ? LinearCommandFile()
                                   : report->parsed()             ? report->get_option("FILE")->as<std::string>()
                                   : plot->parsed()               ? ""
                                                                  : file;
    std::cerr << ReportError(e, model_file).text << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << paynter::Error(std::string("paynter: internal error: ") + e.what()).what() << "\n";  // escaped
    return 2;
  }
  return 0;
}
