// paynter/constraint_method.h — each constraint method as a strategy with one
// home (src/constrained/<method>.cc), behind one interface.
//
// A method acts at up to four places of the pipeline; the pipeline asks the
// strategy instead of testing which method it is:
//
//   front end   RewritesSpec / RewriteSpec: what the method does to the model
//               spec (parasitic: constraint sources into springs and dampers)
//   views       View, ViewHeader, CausalityNotes, EquationNotes: the model the
//               method works on as `causality`, `equations` and `draw
//               --constraints METHOD` show it (zcp: the break-variable model)
//   prepare     Prepare: what the method needs compiled beyond the model's own
//               equations, made with the symbolic stages and kept with them in
//               the stage cache (zcp: the break-variable model, lowered)
//   simulate    Simulate: the run from an assembled start (SimulateConstrained
//               looks the strategy up once per run and calls it: the
//               evaluations themselves call no strategy)
//   report      ReportLines: the method's lines of ConstrainedReport::ToText
//
//   const ConstraintMethodStrategy& s = StrategyFor(ConstraintMethod::kZcp);
//   if (s.RewritesSpec()) ...
//
// The strategies are constant singletons; any thread may use them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "paynter/constrained.h"
#include "paynter/equations.h"
#include "paynter/model.h"
#include "paynter/simulation.h"

namespace paynter {

// The model a constraint method works on, as `causality`, `equations` and
// `draw --constraints METHOD` show it: parasitic writes a spring and a damper
// into every constrained joint direction; zcp makes the joint efforts break
// variables; the other methods work on the model as it is.
struct MethodView {
  ConstraintMethod method = ConstraintMethod::kAuto;
  Model model;                               // what is shown
  Model source;                              // zcp: the model with its constraint sources
  std::vector<std::string> break_variables;  // zcp
};

// What a method's Simulate receives: a run whose start SimulateConstrained has
// assembled and analysed (report->assembly, report->analysis set).
struct ConstrainedRun {
  ModelWorkspace& workspace;
  const std::vector<double>& x0;      // the assembled start
  const SolverOptions& solver;
  const ConstrainedOptions& options;  // with the drift tolerance resolved (> 0, or 0: no check)
  ConstraintProjector* projector;     // the assembly's (tolerances 1e-12; assembly off); null without
                                      // constraint rows
  ConstrainedReport* report;
};

class ConstraintMethodStrategy {
 public:
  virtual ~ConstraintMethodStrategy() = default;
  virtual ConstraintMethod method() const = 0;

  // ---- front end (paynter/pipeline.h) ----------------------------------------
  // True for a method that rewrites the expanded spec (the front end's pass of
  // that name runs RewriteSpec). Such a method rewrites the constraint sources
  // of the Newton-Euler expansion: its views load a mechanism in that form.
  virtual bool RewritesSpec() const { return false; }
  // Rewrites `spec` (expanded, scalar); throws a located Error when there is
  // nothing for the method to rewrite.
  virtual void RewriteSpec(ModelSpec* spec, const ParasiticOptions& options) const;
  // The text the stage cache's key takes for the method ("": the model's own
  // equations, shared by every method that rewrites nothing and prepares nothing).
  virtual std::string StageKey(const ParasiticOptions& options) const;

  // ---- views (causality, equations, draw --constraints METHOD) ----------------
  // Turns v->model (loaded for the method from `file`) into what the method
  // works on; throws a located Error when the method has nothing to work on.
  virtual void View(MethodView* v, const std::string& file) const;
  // The lines that say what the method did to the model, before its
  // causality or equations ("" for the model as it is).
  virtual std::string ViewHeader(const MethodView& v) const;
  // After the causality report and after the equations.
  virtual std::string CausalityNotes(const MethodView& v) const;
  virtual std::string EquationNotes(const MethodView& v, const EquationSystem& equations) const;

  // ---- prepare (PrepareModel) ----------------------------------------------------
  // What the method needs lowered beyond the model's own equations, from the
  // Model the run is prepared from; nothing for most methods.
  virtual std::optional<LoweredModel> Prepare(const Model& model) const;

  // ---- simulate (SimulateConstrained) ---------------------------------------------
  // False: a model without constraint rows is an error for the method.
  virtual bool RunsWithoutConstraints() const { return false; }
  // False: a model with events or conditions is an error for the method.
  virtual bool HandlesEvents() const { return true; }
  // The integrator the method uses unless one is asked for (parasitic: BDF).
  virtual std::optional<Method> DefaultIntegrator() const { return std::nullopt; }
  // The integrator's name when the method brings its own (zcp: "ida"), else "".
  virtual const char* OwnIntegrator() const { return ""; }
  // True when the method needs nothing of paynter's driver after the model
  // rewrite, so that an exported FMU can carry it.
  virtual bool CarriedByFmu() const { return false; }
  // True when ConstrainedReport::max_position_drift is a spring's stretch,
  // and no velocity drift is measured (parasitic).
  virtual bool DriftIsStretch() const { return false; }
  virtual Solution Simulate(const ConstrainedRun& run) const = 0;

  // ---- report -------------------------------------------------------------------
  // ConstrainedReport::ToText's lines after the first: by default the
  // analysis, the assembly, MethodLines and the drift (nothing without
  // constraint rows).
  virtual std::string ReportLines(const ConstrainedReport& report) const;
  virtual std::string MethodLines(const ConstrainedReport& report) const;
};

// The strategy of a method; kAuto's runs a model without constraint rows as
// it is (SimulateConstrained resolves auto first).
const ConstraintMethodStrategy& StrategyFor(ConstraintMethod method);

// The integrator a run used: the method's own (zcp: ida), or `asked`'s name.
std::string IntegratorName(ConstraintMethod used, Method asked);

}  // namespace paynter
