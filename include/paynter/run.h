// paynter/run.h — a model file to reports and results, as the commands do it.
//
// The command-line program, the Python module and the other front ends share
// these functions, so that a model gives the same text and the same numbers
// whichever way it is run:
//
//   RunOptions o;  o.file = "examples/B1_pendulum.yaml";  o.t_end = 10;
//   PreparedModel p = PrepareModel(o);                  // file -> compiled, via the stage cache
//   RunResult r = RunPrepared(p, p.compiled(), o);      // simulate (any constraint method)
//
// PrepareModel does the symbolic work once; RunPrepared may run it many times
// with other parameters (RunOptions::params), also from many threads at once
// on the one compiled model (each run has a workspace of its own).
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "paynter/causality.h"
#include "paynter/constrained.h"
#include "paynter/constraint_method.h"
#include "paynter/model.h"
#include "paynter/pipeline.h"
#include "paynter/simulation.h"
#include "paynter/stage_cache.h"

namespace paynter {

// Everything `paynter simulate` takes besides its output file and --stats.
// The choices are typed: the command line and the Python module parse their
// texts once (ParseFormulation, ParseConstraintMethod, ParseMethod,
// ParseBackend, ParseBlockSolve), with the messages of those functions.
struct RunOptions {
  std::string file;                                       // model file (YAML)
  Formulation form = Formulation::kState;                 // state | lagrange1 | lagrange2 | hamilton
  ConstraintMethod constraints = ConstraintMethod::kAuto; // auto | lagrange-multipliers | minimal-coordinates | parasitic | zcp
  Method method = Method::kDopri5;                        // rk4 | dopri5 | bdf
  bool method_given = false;                              // else parasitic runs use bdf
  Backend backend = Backend::kAuto;                       // auto (= tiered) | tiered | native | tape
  CodegenOptions::BlockSolve block_solve = CodegenOptions::BlockSolve::kAuto;  // auto | dense | sparse
  double t0 = 0, t_end = 0, rtol = 1e-6, atol = 1e-9;
  double dt_out = 0;                // 0: (t_end - t0)/1000
  double step = 1e-3;               // rk4's fixed step
  long max_steps = 0;
  bool max_steps_given = false;     // else the solvers' defaults
  double parasitic_stiffness = 0, parasitic_damping = 0;  // 0: chosen from the model
  bool assemble = false;            // make an inconsistent start consistent, however far off
  bool stabilize = true;            // lagrange-multipliers: project after every step
  double drift_tolerance = -1;      // mechanisms: a larger constraint drift at an output stops the run (0: no
                                    // check; negative: the larger of 1e-6 and 10 rtol)
  bool energy = false;              // the energy accounting's columns
  // lagrange-multipliers: keep the energy balance by scaling the momenta after
  // each projection (ConstrainedOptions::project_energy); adds the energy
  // accounting's columns as `energy` does.
  bool project_energy = false;
  // project_energy came from the model's run settings: then it applies to
  // lagrange-multipliers runs only (another method runs without it).
  bool project_energy_from_model = false;
  bool energy_if_possible = false;  // the energy columns where the model allows them, no error otherwise (compare)
  bool poses = false;               // mechanisms: the bodies' and joints' poses as outputs pose_* (AddPoseOutputs)
  bool stage_cache = true;
  bool progress = true;             // a progress line on stderr for long runs (paynter/progress.h)
  // Told the time reached while the run integrates; false stops it with
  // RunStopped (SolverOptions::on_progress, paynter/solvers.h).
  std::function<bool(double t)> on_progress;
  // Parameter overrides (--param NAME=VALUE), in order.
  std::vector<std::pair<std::string, double>> params;
};

// "auto" | "tiered" | "native" | "tape"; throws Error naming the choices.
Backend ParseBackend(const std::string& name);
std::string BackendName(Backend backend);
// "auto" | "dense" | "sparse"; throws Error naming the choices.
CodegenOptions::BlockSolve ParseBlockSolve(const std::string& name);
std::string BlockSolveName(CodegenOptions::BlockSolve solve);

// The run settings a model carries (its `simulation:` section,
// docs/model-format.md) into `options`, except those the caller gives itself:
// `given` holds their names as RunSettingNames() spells them (the command
// line's options that were given, Python's keywords). A setting that is not
// valid is a located Error, and so is (with require_t_end) a run with an end
// time from neither.
void ApplyModelSettings(RunOptions& options, const std::set<std::string>& given, bool require_t_end = true);

// What the front end's passes need of a run's options (paynter/pipeline.h).
LoadOptions LoadOptionsFor(const RunOptions& options);

// NAME=NUMBER texts (--param, or the command-line `option` named) as
// overrides, in order; throws Error naming a bad one.
std::vector<std::pair<std::string, double>> ParseParameterOverrides(const std::vector<std::string>& texts,
                                                                    const std::string& file = "",
                                                                    const std::string& option = "--param");

// A model with the causality that `form` asks for.
struct Analysis {
  Model model;
  CausalGraph graph;
};
Analysis Analyze(Model model, Formulation form = Formulation::kState);
Analysis Analyze(const std::string& path, Formulation form = Formulation::kState);

// The model a constraint method works on (MethodView, paynter/constraint_method.h).
MethodView LoadForMethod(const std::string& path, ConstraintMethod constraints,
                         Formulation form = Formulation::kState);

// The reports of `paynter check`, `causality` and `equations`, written to
// `out`; each returns the command's exit status (causality: 1 when causal
// conflicts remain) and throws Error for a model that cannot be analysed.
int CheckReport(const std::string& path, std::ostream& out);
int CausalityText(const std::string& path, CausalityProcedure procedure, ConstraintMethod constraints,
                  std::ostream& out);
// `standalone` (with `latex`): a whole LaTeX document (article, amsmath).
int EquationsText(const std::string& path, bool latex, Formulation form, bool explain, ConstraintMethod constraints,
                  std::ostream& out, bool standalone = false);

// The C code native code compiles for the model's programs (right-hand side,
// outputs, constraints, events), as `paynter equations --emit-c` prints it.
int GeneratedCodeText(const std::string& path, Formulation form, ConstraintMethod constraints, std::ostream& out);

// The C code native code compiles for the model's programs (right-hand side,
// outputs, constraints, events), as `paynter equations --emit-c` prints it.
int GeneratedCodeText(const std::string& path, const std::string& form, const std::string& constraints,
                      std::ostream& out);

// `paynter draw`: the Graphviz source of the model's drawing, with the causal
// strokes of `procedure` on the model as `constraints` shows it. A model
// with submodels, vector bonds or a multibody section is drawn as its
// components and multibonds unless `expand` (every scalar element and bond);
// `highlight` (1-based, numbered as `paynter causality` numbers them) marks a
// zero-order causal path, on the expanded drawing. RenderDot writes it.
struct DrawOptions {
  CausalityProcedure procedure = CausalityProcedure::kSCAP;
  ConstraintMethod constraints = ConstraintMethod::kAuto;
  bool expand = false;
  int highlight = 0;  // 0: none
};
std::string DrawingDot(const std::string& path, const DrawOptions& options = {});

// A model loaded for a constraint method and compiled: the symbolic stages
// (with what the method's strategy prepares) through the stage cache, unless it is off.
class PreparedModel {
 public:
  PreparedModel() = default;
  PreparedModel(PreparedModel&&) noexcept = default;
  PreparedModel& operator=(PreparedModel&&) noexcept = default;

  // Constant: shared by all runs, on any thread (RunPrepared).
  const CompiledModel& compiled() const { return *cm_; }

  ConstraintMethod method() const { return method_; }
  // The Model, when it was built in this process (not from the stage cache).
  const Model* model() const { return model_ ? &*model_ : nullptr; }
  bool assemble() const { return staged_.assemble; }
  const CodegenOptions& codegen() const { return codegen_; }
  // What the method prepared beyond the model (zcp: the break-variable model),
  // compiled; null for most methods. Constant, shared by all runs.
  const CompiledModel* method_model() const { return method_cm_.get(); }
  // True when a parameter's value may change between runs by
  // ModelWorkspace::SetParameter alone (RunOptions::params of RunPrepared):
  // false for a parameter the build computes numbers from (a derived
  // parameter, one a derived parameter or a computed initial value uses; every
  // parameter of a mechanism, whose poses are computed from them), where
  // another value needs PrepareModel with it.
  bool parameter_settable(const std::string& name) const;
  // The parameters' values the model was prepared with (in the compiled
  // model's order), which RunPrepared starts every run from.
  const std::vector<double>& parameter_values() const { return staged_.lowered.parameter_values; }
  const std::vector<std::string>& parameter_names() const { return staged_.lowered.parameter_names; }
  // The lowered model and what the driver needs of its Model (StagedModel).
  const StagedModel& staged() const { return staged_; }
  bool stages_cached() const { return stages_cached_; }
  double ready_seconds() const { return ready_seconds_; }  // model file to compiled model
  const std::string& stage_note() const { return stage_note_; }  // why the stage cache was not used

 private:
  friend PreparedModel PrepareModel(const RunOptions& options);
  ConstraintMethod method_ = ConstraintMethod::kAuto;
  std::optional<Model> model_;
  StagedModel staged_;
  CodegenOptions codegen_;
  std::unique_ptr<CompiledModel> cm_, method_cm_;
  bool mechanism_ = false, stages_cached_ = false;
  double ready_seconds_ = 0;
  std::string stage_note_;
};

// Loads, assigns causality, builds and compiles `options.file` for its form,
// constraint method and energy accounting, with its parameter overrides.
PreparedModel PrepareModel(const RunOptions& options);

// The solver settings of a run (parasitic: bdf unless a method was asked for).
SolverOptions SolverOptionsFor(const RunOptions& options, ConstraintMethod method);

// Refuses an output interval that asks for more than 1e7 rows.
void CheckOutputRows(const RunOptions& options);


struct RunResult {
  Solution solution;           // its rows, unless they went to `output`
  ConstrainedReport report;    // mechanisms: the method used, drift, assembly
  CompiledProgram::Tiers tiers;  // Backend::kTiered: this run's evaluations on the tiers
};

// Simulates a prepared model compiled as `cm` (prepared.compiled(), or the
// same lowered model compiled with other CodegenOptions) on a workspace of
// its own, from the prepared parameter values with options.params set over
// them (each must be parameter_settable, or the one it was prepared with);
// the rows go to `output` when given. Any number of threads may run one
// PreparedModel at once, and a run gives the same bits whatever ran before or
// beside it. Throws Error on failure.
RunResult RunPrepared(const PreparedModel& prepared, const CompiledModel& cm, const RunOptions& options,
                      RowSink* output = nullptr);

// An error as the commands report it for a run of `model_file`: one found
// while simulating has no file of its own and is the model file's. `text` is
// what `paynter` prints (the Diagnostic's form, escaped for a terminal).
struct ReportedError {
  Diagnostic diagnostic;
  std::string text;
};
ReportedError ReportError(const Error& error, const std::string& model_file);

// The process's peak resident memory so far, in MB.
double PeakMemoryMegabytes();

}  // namespace paynter
