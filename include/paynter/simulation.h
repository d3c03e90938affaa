// paynter/simulation.h — the compiled model, a run's workspace, and simulation.
//
// CompiledModel is constant after construction and may be shared by threads;
// a run's mutable data is its ModelWorkspace. Solution holds the time series
// of the outputs (t first).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "paynter/codegen.h"
#include "paynter/equations.h"
#include "paynter/files.h"
#include "paynter/solvers.h"

namespace paynter {

// What a CompiledModel is made from, without GiNaC: an EquationSystem's programs
// lowered (codegen.h) with its slot layout, names and numbers. The stage cache
// (stage_cache.h) stores it, so that a warm run skips the symbolic stages.
struct LoweredModel {
  std::shared_ptr<const LoweredProgram> rhs, outputs;
  std::shared_ptr<const LoweredProgram> constraints;  // null without constraint rows
  std::vector<ConstraintRow> constraint_rows;
  std::vector<EquationSystem::CoordinateRow> coordinate_rows;
  std::vector<int> held_states;
  std::vector<double> state_inertia;
  std::vector<std::string> state_origin;
  std::vector<std::string> parameter_names;
  std::vector<double> parameter_values;
  std::vector<double> initial_state;
  std::vector<std::string> state_names, output_names;
  std::vector<int> output_slots;
  int num_slots = 0, first_parameter_slot = 1, first_state_slot = 0, first_derivative_slot = 0;
  bool outputs_after_rhs = false;
  // Events (docs/events.md): null and empty for a model without them.
  std::shared_ptr<const LoweredProgram> events;
  std::vector<ModeRow> modes;
  std::vector<EventRow> event_rows;
  std::vector<SwitchRow> switches;
};
// Throws Error as Compile does.
LoweredModel LowerModel(const EquationSystem& system);

class ModelWorkspace;

// The compiled model: code (the programs), slot layout, names and rows.
// Constant once made, so one CompiledModel serves any number of runs, one
// after another or at once on many threads: each run evaluates it with a
// ModelWorkspace of its own (the slots and the programs' scratch), and a run
// on a fresh workspace gives the same bits whatever ran before or beside it.
class CompiledModel {
 public:
  explicit CompiledModel(const EquationSystem& system, const CodegenOptions& options = {});
  explicit CompiledModel(const LoweredModel& model, const CodegenOptions& options = {});
  ~CompiledModel();
  CompiledModel(CompiledModel&&) noexcept;
  CompiledModel& operator=(CompiledModel&&) noexcept;

  int num_states() const { return static_cast<int>(initial_state_.size()); }
  int num_outputs() const { return static_cast<int>(output_names_.size()); }
  const std::vector<double>& initial_state() const { return initial_state_; }
  const std::vector<std::string>& state_names() const { return state_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  std::string backend_name() const;
  // Why native code is not in use or not cached (CompiledProgram::fallback_reason,
  // cache_note); empty when all is as requested.
  std::string codegen_note() const;
  double compile_seconds() const { return compile_seconds_; }

  // The parameters, and the values a fresh workspace gives them.
  const std::vector<std::string>& parameter_names() const { return parameter_names_; }
  const std::vector<double>& parameter_values() const { return parameter_values_; }
  // Index of a parameter for ModelWorkspace::SetParameterAt (-1 if unknown).
  int ParameterIndex(const std::string& name) const;

  // Constraint sources (joints' constraint forces and moments), in model order.
  const std::vector<ConstraintRow>& constraint_rows() const { return constraint_rows_; }
  int num_constraints() const { return static_cast<int>(constraint_rows_.size()); }
  // States an assembly must not move (bodies placed by joint initial values).
  const std::vector<int>& held_states() const { return held_states_; }
  // Per state: the inertance of a momentum state, 0 for other states.
  const std::vector<double>& state_inertia() const { return state_inertia_; }
  const std::vector<std::string>& state_origins() const { return state_origin_; }

  // Events (docs/events.md; the driver's event handling in events.cc uses
  // these). Whether the model has modes, events or switched elements.
  bool has_events() const { return events_ != nullptr; }
  const std::vector<ModeRow>& modes() const { return modes_; }
  const std::vector<EventRow>& event_rows() const { return event_rows_; }
  const std::vector<SwitchRow>& switches() const { return switches_; }

 private:
  friend class ModelWorkspace;
  std::unique_ptr<CompiledProgram> rhs_, outputs_, constraints_, events_;
  std::vector<ModeRow> modes_;
  std::vector<EventRow> event_rows_;
  std::vector<SwitchRow> switches_;
  std::vector<ConstraintRow> constraint_rows_;
  std::vector<EquationSystem::CoordinateRow> coordinate_rows_;
  std::vector<int> held_states_;
  std::vector<double> state_inertia_;
  std::vector<std::string> state_origin_;
  std::vector<double> initial_slots_;  // a fresh workspace's slots: the parameters' values, zeros
  std::vector<double> initial_state_;
  std::vector<std::string> state_names_, output_names_, parameter_names_;
  std::vector<double> parameter_values_;
  std::vector<int> output_slots_;
  int first_state_ = 0, first_derivative_ = 0, first_parameter_ = 1;
  bool outputs_after_rhs_ = false;
  double compile_seconds_ = 0;

  void Init(const LoweredModel& m, const CodegenOptions& options);
};

// The data of one run of a CompiledModel (as Pinocchio's Data to its Model):
// the slots (time, parameters, modes, states and all the programs compute,
// the implicit blocks' Newton starting points among them) and each program's
// workspace (scratch registers, the Newton solvers' factorizations and pivots,
// a tiered program's place on the tiers). Every evaluation goes through it,
// and it carries what one evaluation leaves to the next, so: one workspace
// per run (a fresh one gives the same bits as a fresh process), used by one
// thread at a time; the model must outlive it.
class ModelWorkspace {
 public:
  explicit ModelWorkspace(const CompiledModel& model);
  ~ModelWorkspace();
  ModelWorkspace(ModelWorkspace&&) noexcept;
  ModelWorkspace& operator=(ModelWorkspace&&) noexcept;

  const CompiledModel& model() const { return *model_; }

  // Sets a parameter's value for later evaluations (no recompilation). Throws if
  // unknown or not finite (CheckPhysicalParameters checks masses and the like).
  void SetParameter(const std::string& name, double value);
  // For callers that set parameters at every evaluation (CompiledModel::ParameterIndex).
  void SetParameterAt(int index, double value) { slots_[model_->first_parameter_ + index] = value; }
  // The current value of a parameter; throws if unknown.
  double GetParameter(const std::string& name) const;

  // dx/dt = f(t, x).
  void CalcDerivatives(double t, const double* x, double* dxdt);
  // At (t, x): each constraint's multiplier (its unknown effort, solved with the
  // accelerations), flow constraint and position constraint (0 where the model
  // gives none). Any pointer may be null.
  void CalcConstraints(double t, const double* x, double* multiplier, double* velocity, double* position);
  // Sets the displacements that have a position form (joint coordinates) from
  // the other states at (t, x), keeping their turns: after an assembly.
  void MakeCoordinatesConsistent(double t, double* x);
  // The outputs at (t, x).
  void CalcOutputs(double t, const double* x, double* out);

  // Events: runs the rhs and the event program at (t, x): afterwards Slot()
  // reads the indicators, reset values and the switched elements' efforts and flows.
  void CalcEventSlots(double t, const double* x);
  double Slot(int slot) const { return slots_[slot]; }
  // Sets a mode's slot (a ModeRow's or SwitchRow's), for later evaluations.
  void SetMode(int slot, double value) { slots_[slot] = value; }

  // With Backend::kTiered: this workspace's right-hand side evaluations on the
  // tape and in native code, and when it switched (CompiledProgram::Tiers;
  // slot 0 is t).
  CompiledProgram::Tiers tiers() const;

 private:
  const CompiledModel* model_;
  std::vector<double> slots_;
  std::unique_ptr<ProgramWorkspace> rhs_, outputs_, constraints_, events_;
};

// Receives the rows of a simulation as they are recorded (CsvWriter writes
// them to a file), so that a run keeps no row in memory.
class RowSink {
 public:
  virtual ~RowSink() = default;
  // Once, before the first row: "t", then the outputs.
  virtual void Begin(const std::vector<std::string>& columns) = 0;
  // One row: columns.size() values, t first.
  virtual void Row(const double* values) = 0;
};

struct Solution {
  std::vector<std::string> columns;  // "t", then the outputs
  // The recorded rows; empty for the rows that went to a sink (StreamTo).
  std::vector<std::vector<double>> rows;
  SolverStats stats;
  double compile_seconds = 0;
  std::string backend;

  // Values of one column (of the rows kept: none when they were streamed);
  // throws Error if there is no such column.
  std::vector<double> Column(const std::string& name) const;

  // Records a row of columns.size() values (t first): into `rows`, or into
  // the sink given to StreamTo.
  void AddRow(const double* values);
  // From now on rows go to `sink` and are not kept: the sink gets the columns
  // (which must be set) and the rows recorded so far (taken out of `rows`).
  void StreamTo(RowSink* sink);
  RowSink* sink() const { return sink_; }
  // Rows recorded, kept or streamed.
  long num_rows() const { return static_cast<long>(rows.size()) + streamed_; }
  // True when the last row recorded is at time t.
  bool LastRowAt(double t) const { return rows.empty() ? streamed_ > 0 && last_t_ == t : rows.back()[0] == t; }

 private:
  RowSink* sink_ = nullptr;
  long streamed_ = 0;
  double last_t_ = 0;
};

// Writes rows as CSV (header "t,<outputs...>", each number in the shortest
// form that reads back as the same double, std::to_chars) into a temporary
// file beside `path`, moved into place by Commit; destroyed without Commit
// (an error during the run) it removes the temporary, so the file appears
// complete or not at all. Memory stays bounded however many rows it writes.
class CsvWriter : public RowSink {
 public:
  explicit CsvWriter(const std::string& path);  // throws Error (no temporary possible)
  ~CsvWriter() override;
  void Begin(const std::vector<std::string>& columns) override;
  void Row(const double* values) override;
  void Commit();  // throws Error
  long rows() const { return rows_; }

 private:
  std::unique_ptr<OutputFile> file_;
  size_t num_columns_ = 0;
  long rows_ = 0;
};

// A Solution with no rows yet: the model's columns, backend and compile time,
// streaming into `output` when given.
Solution StartSolution(const CompiledModel& model, RowSink* output = nullptr);

// Integrates from the model's initial state and records the outputs at t0,
// every dt_out and t_end: into the Solution's rows, or into `output` when
// given (the Solution then keeps none). Throws Error on solver failure. Runs
// with `workspace` (its parameters as set), or with a fresh one.
Solution Simulate(ModelWorkspace& workspace, const SolverOptions& options, RowSink* output = nullptr);
Solution Simulate(const CompiledModel& model, const SolverOptions& options, RowSink* output = nullptr);

// The general form (the methods for constrained mechanisms use it):
// integrates `problem` from x0 and appends the model's outputs to `out` as
// they come (Solution::AddRow: into its rows, or into its sink; rows survive
// an exception thrown by `watch`; a row at the time of the last one is not
// repeated). When the integrated state is not the model's (minimal
// coordinates), full_state maps it to the model's state; watch sees every
// recorded full state. `out`'s columns are set when empty, and its stats are
// added to.
void SimulateFrom(ModelWorkspace& workspace, const OdeProblem& problem, const std::vector<double>& x0,
                  const SolverOptions& options,
                  const std::function<void(double, const double*, double*)>& full_state,
                  const std::function<void(double, const double*)>& watch, Solution* out);

// Writes a Solution's rows as CSV (CsvWriter: the same bytes as streaming the
// run into one), atomically: the file appears complete or not at all.
void WriteCsv(const Solution& solution, const std::string& path);

}  // namespace paynter
