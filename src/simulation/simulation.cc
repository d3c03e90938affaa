// CompiledModel and Simulate: the last stages of the pipeline.
#include "paynter/simulation.h"

#include "paynter/files.h"
#include "paynter/progress.h"
#include "events.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace paynter {

LoweredModel LowerModel(const EquationSystem& sys) {
  StageScope stage("lowering the equations to programs");
  LoweredModel m;
  m.rhs = LowerProgram(sys.rhs);
  m.outputs = LowerProgram(sys.outputs);
  if (!sys.constraint_rows.empty()) m.constraints = LowerProgram(sys.constraint_program);
  m.constraint_rows = sys.constraint_rows;
  m.coordinate_rows = sys.coordinate_rows;
  m.held_states = sys.held_states;
  m.state_inertia = sys.state_inertia;
  m.state_inertia.resize(sys.initial_state.size(), 0.0);
  m.state_origin = sys.state_origin;
  m.parameter_names = sys.parameter_names;
  m.parameter_values = sys.parameter_values;
  m.initial_state = sys.initial_state;
  m.state_names = sys.state_names;
  m.output_names = sys.output_names;
  m.output_slots = sys.output_slots;
  m.num_slots = sys.num_slots;
  m.first_parameter_slot = sys.first_parameter_slot;
  m.first_state_slot = sys.first_state_slot;
  m.first_derivative_slot = sys.first_derivative_slot;
  m.outputs_after_rhs = sys.outputs_after_rhs;
  if (!sys.modes.empty() || !sys.events.empty() || !sys.switches.empty()) {
    m.events = LowerProgram(sys.event_program);
    m.modes = sys.modes;
    m.event_rows = sys.events;
    m.switches = sys.switches;
  }
  return m;
}

CompiledModel::CompiledModel(const EquationSystem& sys, const CodegenOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  Init(LowerModel(sys), options);
  compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

CompiledModel::CompiledModel(const LoweredModel& m, const CodegenOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  Init(m, options);
  compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void CompiledModel::Init(const LoweredModel& m, const CodegenOptions& options) {
  StageScope stage("generating and compiling code");
  // Compiled together: their native code builds at once (in the background
  // with Backend::kTiered).
  std::vector<const LoweredProgram*> programs = {m.rhs.get(), m.outputs.get()};
  if (!m.constraint_rows.empty()) programs.push_back(m.constraints.get());
  if (m.events) programs.push_back(m.events.get());
  std::vector<std::unique_ptr<CompiledProgram>> compiled = CompileAll(programs, options);
  rhs_ = std::move(compiled[0]);
  outputs_ = std::move(compiled[1]);
  if (!m.constraint_rows.empty()) constraints_ = std::move(compiled[2]);
  if (m.events) {
    events_ = std::move(compiled.back());
    modes_ = m.modes;
    event_rows_ = m.event_rows;
    switches_ = m.switches;
  }
  coordinate_rows_ = m.coordinate_rows;
  held_states_ = m.held_states;
  constraint_rows_ = m.constraint_rows;
  state_inertia_ = m.state_inertia;
  state_origin_ = m.state_origin;
  initial_slots_.assign(m.num_slots, 0.0);
  first_parameter_ = m.first_parameter_slot;
  for (size_t i = 0; i < m.parameter_values.size(); ++i) initial_slots_[first_parameter_ + i] = m.parameter_values[i];
  parameter_names_ = m.parameter_names;
  parameter_values_ = m.parameter_values;
  initial_state_ = m.initial_state;
  state_names_ = m.state_names;
  first_state_ = m.first_state_slot;
  first_derivative_ = m.first_derivative_slot;
  output_names_ = m.output_names;
  output_slots_ = m.output_slots;
  outputs_after_rhs_ = m.outputs_after_rhs;
  if (output_names_.empty()) {  // no outputs declared: report the states
    output_names_ = state_names_;
    for (int i = 0; i < num_states(); ++i) output_slots_.push_back(first_state_ + i);
  }
}

CompiledModel::~CompiledModel() = default;
CompiledModel::CompiledModel(CompiledModel&&) noexcept = default;
CompiledModel& CompiledModel::operator=(CompiledModel&&) noexcept = default;

std::string CompiledModel::backend_name() const { return rhs_->backend_name(); }

std::string CompiledModel::codegen_note() const {
  std::string note;
  for (const CompiledProgram* p : {rhs_.get(), outputs_.get(), constraints_.get(), events_.get()})
    for (const std::string& n : {p ? p->fallback_reason() : "", p ? p->cache_note() : ""})
      if (!n.empty() && note.find(n) == std::string::npos) note += (note.empty() ? "" : "\n") + n;
  return note;
}

int CompiledModel::ParameterIndex(const std::string& name) const {
  for (size_t i = 0; i < parameter_names_.size(); ++i)
    if (parameter_names_[i] == name) return static_cast<int>(i);
  return -1;
}

ModelWorkspace::ModelWorkspace(const CompiledModel& model) : model_(&model), slots_(model.initial_slots_) {
  rhs_ = model.rhs_->NewWorkspace();
  outputs_ = model.outputs_->NewWorkspace();
  if (model.constraints_) constraints_ = model.constraints_->NewWorkspace();
  if (model.events_) events_ = model.events_->NewWorkspace();
}

ModelWorkspace::~ModelWorkspace() = default;
ModelWorkspace::ModelWorkspace(ModelWorkspace&&) noexcept = default;
ModelWorkspace& ModelWorkspace::operator=(ModelWorkspace&&) noexcept = default;

CompiledProgram::Tiers ModelWorkspace::tiers() const { return model_->rhs_->tiers(*rhs_); }

void ModelWorkspace::SetParameter(const std::string& name, double value) {
  if (!std::isfinite(value)) {
    ThrowAt({}, "", fmt::format("the value of parameter '{}' is not a finite number", name), "a finite number",
            fmt::format("{} = {}", name, value));
  }
  const int i = model_->ParameterIndex(name);
  if (i < 0) ThrowAt({}, "", fmt::format("unknown parameter '{}'", name), "a parameter declared in the model", name);
  SetParameterAt(i, value);
}

double ModelWorkspace::GetParameter(const std::string& name) const {
  const int i = model_->ParameterIndex(name);
  if (i < 0) ThrowAt({}, "", fmt::format("unknown parameter '{}'", name), "a parameter declared in the model", name);
  return slots_[model_->first_parameter_ + i];
}

void ModelWorkspace::CalcConstraints(double t, const double* x, double* multiplier, double* velocity,
                                     double* position) {
  const CompiledModel& m = *model_;
  if (m.constraint_rows_.empty()) return;
  double* s = slots_.data();
  s[0] = t;
  for (int i = 0; i < m.num_states(); ++i) s[m.first_state_ + i] = x[i];
  if (multiplier) m.rhs_->Run(s, *rhs_);  // the multipliers are solved with the accelerations
  m.constraints_->Run(s, *constraints_);
  for (size_t k = 0; k < m.constraint_rows_.size(); ++k) {
    const ConstraintRow& r = m.constraint_rows_[k];
    if (multiplier) multiplier[k] = s[r.multiplier_slot];
    if (velocity) velocity[k] = s[r.velocity_slot];
    if (position) position[k] = r.position_slot >= 0 ? s[r.position_slot] : 0.0;
  }
}

void ModelWorkspace::MakeCoordinatesConsistent(double t, double* x) {
  const CompiledModel& m = *model_;
  if (!m.constraints_ || m.coordinate_rows_.empty()) return;
  double* s = slots_.data();
  s[0] = t;
  for (int i = 0; i < m.num_states(); ++i) s[m.first_state_ + i] = x[i];
  m.constraints_->Run(s, *constraints_);
  for (const auto& r : m.coordinate_rows_) {
    if (r.state < 0) continue;
    double v = s[r.slot];
    if (r.period > 0) v += r.period * std::round((x[r.state] - v) / r.period);  // keep the turns
    x[r.state] = v;
  }
}

void ModelWorkspace::CalcDerivatives(double t, const double* x, double* dxdt) {
  const CompiledModel& m = *model_;
  double* s = slots_.data();
  s[0] = t;
  const int n = m.num_states();
  for (int i = 0; i < n; ++i) s[m.first_state_ + i] = x[i];
  m.rhs_->Run(s, *rhs_);
  for (int i = 0; i < n; ++i) dxdt[i] = s[m.first_derivative_ + i];
}

void ModelWorkspace::CalcOutputs(double t, const double* x, double* out) {
  const CompiledModel& m = *model_;
  double* s = slots_.data();
  s[0] = t;
  for (int i = 0; i < m.num_states(); ++i) s[m.first_state_ + i] = x[i];
  if (m.outputs_after_rhs_) m.rhs_->Run(s, *rhs_);
  m.outputs_->Run(s, *outputs_);
  for (size_t i = 0; i < m.output_slots_.size(); ++i) out[i] = s[m.output_slots_[i]];
}

void ModelWorkspace::CalcEventSlots(double t, const double* x) {
  const CompiledModel& m = *model_;
  if (!m.events_) return;
  double* s = slots_.data();
  s[0] = t;
  for (int i = 0; i < m.num_states(); ++i) s[m.first_state_ + i] = x[i];
  m.rhs_->Run(s, *rhs_);
  m.events_->Run(s, *events_);
}

std::vector<double> Solution::Column(const std::string& name) const {
  for (size_t c = 0; c < columns.size(); ++c) {
    if (columns[c] != name) continue;
    std::vector<double> v;
    v.reserve(rows.size());
    for (const auto& r : rows) v.push_back(r[c]);
    return v;
  }
  throw Error(fmt::format("no column '{}' in the solution", name));
}

void Solution::AddRow(const double* values) {
  if (sink_) {
    sink_->Row(values);
    last_t_ = values[0];
    ++streamed_;
    return;
  }
  rows.emplace_back(values, values + columns.size());
}

void Solution::StreamTo(RowSink* sink) {
  if (sink_ || !sink || columns.empty())
    throw Error("Solution::StreamTo: needs the columns, a sink, and none set before");
  sink_ = sink;
  sink_->Begin(columns);
  for (const auto& r : rows) AddRow(r.data());
  rows.clear();
  rows.shrink_to_fit();
}

CsvWriter::CsvWriter(const std::string& path) : file_(std::make_unique<OutputFile>(path, "output file")) {}

CsvWriter::~CsvWriter() = default;

void CsvWriter::Begin(const std::vector<std::string>& columns) {
  std::string header;
  for (size_t c = 0; c < columns.size(); ++c) header += (c ? "," : "") + columns[c];
  header += '\n';
  file_->Write(header);
  num_columns_ = columns.size();
}

void CsvWriter::Row(const double* values) {
  // The shortest decimal that reads back (strtod) as the same double.
  constexpr size_t kMaxChars = 32;  // to_chars needs at most 24, plus the separator
  for (size_t c = 0; c < num_columns_; ++c) {
    char* p = file_->Reserve(kMaxChars);
    char* q = p;
    if (c) *q++ = ',';
    q = std::to_chars(q, p + kMaxChars - 1, values[c]).ptr;
    if (c + 1 == num_columns_) *q++ = '\n';
    file_->Advance(static_cast<size_t>(q - p));
  }
  ++rows_;
}

void CsvWriter::Commit() { file_->Commit(); }

void SimulateFrom(ModelWorkspace& ws, const OdeProblem& problem, const std::vector<double>& x0,
                  const SolverOptions& options,
                  const std::function<void(double, const double*, double*)>& full_state,
                  const std::function<void(double, const double*)>& watch, Solution* out) {
  const CompiledModel& model = ws.model();
  Solution& sol = *out;
  if (sol.columns.empty()) {
    sol.columns.push_back("t");
    for (const auto& o : model.output_names()) sol.columns.push_back(o);
    sol.compile_seconds = model.compile_seconds();
    sol.backend = model.backend_name();
  }
  // row = (t, outputs...), filled in place and handed to AddRow.
  std::vector<double> row(1 + model.num_outputs()), x(model.num_states());
  // Events (docs/events.md): two rows at each, before and after.
  OdeProblem with_events;
  std::unique_ptr<internal::EventHandling> events;
  if (model.has_events() && !problem.on_event) {
    // A full_state that maps the model's own state (the projection of
    // lagrange-multipliers) leaves events well defined on the integrated one;
    // another state (minimal coordinates) does not.
    if (full_state && problem.n != model.num_states())
      throw Error("SimulateFrom: a model's events need its own state to be integrated");
    events = std::make_unique<internal::EventHandling>(ws, [&](double t, const double* y, bool after) {
      if (watch) watch(t, y);
      ws.CalcOutputs(t, y, row.data() + 1);
      if (!after && sol.LastRowAt(t)) return;
      row[0] = t;
      sol.AddRow(row.data());
    });
    with_events = problem;
    events->Attach(&with_events, options.t0, x0, options.t_end);
  }
  const SolverStats stats = Integrate(events ? with_events : problem, x0, options, [&](double t, const double* y) {
    const double* xs = y;
    if (full_state) {
      full_state(t, y, x.data());
      xs = x.data();
    }
    if (watch) watch(t, xs);
    // Outputs first, even for a row not recorded: evaluating them may leave
    // the start of the next Newton solve in the workspace.
    ws.CalcOutputs(t, xs, row.data() + 1);
    if (sol.LastRowAt(t)) return;  // a restart repeats its start
    row[0] = t;
    sol.AddRow(row.data());
  });
  sol.stats.steps += stats.steps;
  sol.stats.rejected += stats.rejected;
  sol.stats.rhs_evals += stats.rhs_evals;
  sol.stats.jac_evals += stats.jac_evals;
  sol.stats.projections += stats.projections;
  sol.stats.events += events ? events->events() : stats.events;
  sol.stats.integrate_seconds += stats.integrate_seconds;
  if (stats.stiff && !sol.stats.stiff) {
    sol.stats.stiff = true;
    sol.stats.stiff_t = stats.stiff_t;
  }
}

Solution StartSolution(const CompiledModel& model, RowSink* output) {
  Solution sol;
  sol.columns.push_back("t");
  for (const auto& o : model.output_names()) sol.columns.push_back(o);
  sol.compile_seconds = model.compile_seconds();
  sol.backend = model.backend_name();
  if (output) sol.StreamTo(output);
  return sol;
}

Solution Simulate(ModelWorkspace& ws, const SolverOptions& options, RowSink* output) {
  options.Validate();
  const CompiledModel& model = ws.model();
  OdeProblem problem;
  problem.n = model.num_states();
  problem.state_names = model.state_names();
  problem.rhs = [&ws](double t, const double* x, double* dx) { ws.CalcDerivatives(t, x, dx); };
  Solution sol = StartSolution(model, output);
  SimulateFrom(ws, problem, model.initial_state(), options, nullptr, nullptr, &sol);
  return sol;
}

Solution Simulate(const CompiledModel& model, const SolverOptions& options, RowSink* output) {
  ModelWorkspace ws(model);
  return Simulate(ws, options, output);
}

void WriteCsv(const Solution& sol, const std::string& path) {
  CsvWriter csv(path);
  csv.Begin(sol.columns);
  for (const auto& r : sol.rows) {
    if (r.size() != sol.columns.size())
      throw Error(fmt::format("{}: error: a row of {} values for {} columns", path, r.size(), sol.columns.size()));
    csv.Row(r.data());
  }
  csv.Commit();
}

}  // namespace paynter
