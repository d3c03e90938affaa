// _paynter — the compiled part of the Python module `paynter` (python/paynter/
// holds the Python part). A thin layer over paynter/run.h: the reports and the
// runs are the command line's own functions, so that Python gives the same
// text and the same numbers; the rows of a run go straight into one
// contiguous buffer that numpy arrays view without copying.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <variant>

#include "paynter/analysis.h"
#include "paynter/fmi.h"
#include "paynter/html_report.h"
#include "paynter/multibody.h"
#include "paynter/progress.h"
#include "paynter/report.h"
#include "paynter/run.h"
#include "paynter/sweep.h"

namespace py = pybind11;
using namespace paynter;

namespace {

// paynter.Error and paynter.ModelError, created once and kept for the
// interpreter's life (never destroyed: they outlive the module's statics).
PyObject* g_error = nullptr;
PyObject* g_model_error = nullptr;

// Where a model came from: its file, and the name its errors give that file
// ("<string>" for paynter.loads, "<dict>" for paynter.from_dict; empty: the
// file's own path).
struct Source {
  std::string path, display;
};

// An error of a run, kept (not yet a Python object) until the GIL is held.
struct Failure {
  bool model = false;  // a paynter::Error, with its Diagnostic
  ReportedError reported;
};

void Replace(std::string* s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = s->find(from); at != std::string::npos; at = s->find(from, at + to.size())) s->replace(at, from.size(), to);
}

Failure FromError(const Error& e, const Source& src) {
  Failure f{true, ReportError(e, src.path)};
  if (!src.display.empty()) {
    Diagnostic& d = f.reported.diagnostic;
    for (std::string* s : {&d.where.file, &d.element, &d.bond, &d.message, &d.expected, &d.got, &d.hint, &f.reported.text})
      Replace(s, src.path, src.display);
  }
  return f;
}

Failure FromOther(const std::exception& e) {
  Failure f;
  f.reported.text = Error(std::string("paynter: internal error: ") + e.what()).what();
  return f;
}

// The exception object for a failure: ModelError (with the Diagnostic's parts
// as attributes) or Error.
py::object ExceptionObject(const Failure& f) {
  py::object type = py::reinterpret_borrow<py::object>(f.model ? g_model_error : g_error);
  py::object exc = type(f.reported.text);
  if (f.model) {
    const Diagnostic& d = f.reported.diagnostic;
    auto text_or_none = [](const std::string& s) -> py::object {
      return s.empty() ? py::object(py::none()) : py::object(py::str(s));
    };
    exc.attr("file") = text_or_none(d.where.file);
    exc.attr("line") = d.where.line > 0 ? py::object(py::int_(d.where.line)) : py::none();
    exc.attr("column") = d.where.column > 0 ? py::object(py::int_(d.where.column)) : py::none();
    exc.attr("element") = text_or_none(d.element);
    exc.attr("bond") = text_or_none(d.bond);
    exc.attr("message") = py::str(d.message);
    exc.attr("expected") = text_or_none(d.expected);
    exc.attr("got") = text_or_none(d.got);
    exc.attr("hint") = text_or_none(d.hint);
  }
  return exc;
}

[[noreturn]] void Raise(const Failure& f) {
  py::object exc = ExceptionObject(f);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw py::error_already_set();
}

// Runs `work` without the GIL; a paynter::Error or any other exception it
// throws becomes paynter.ModelError or paynter.Error.
template <class F>
auto Guarded(const Source& src, F&& work) -> decltype(work()) {
  std::optional<Failure> failure;
  {
    py::gil_scoped_release release;
    try {
      return work();
    } catch (const Error& e) {
      failure = FromError(e, src);
    } catch (const std::exception& e) {
      failure = FromOther(e);
    }
  }
  Raise(*failure);
}

// A choice's text parsed; a bad one raises paynter.ModelError (the options' file named).
template <class F>
auto Parsed(const RunOptions& o, F&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const Error& e) {
    Raise(FromError(e, Source{o.file, ""}));
  }
}

// The rows of a run, in one row-major buffer (t first).
class BufferSink : public RowSink {
 public:
  void Begin(const std::vector<std::string>& columns) override { columns_ = columns; }
  void Row(const double* values) override { data_->insert(data_->end(), values, values + columns_.size()); }
  const std::vector<std::string>& columns() const { return columns_; }
  std::unique_ptr<std::vector<double>> Take() { return std::move(data_); }

 private:
  std::vector<std::string> columns_;
  std::unique_ptr<std::vector<double>> data_ = std::make_unique<std::vector<double>>();
};

// One finished run, before it becomes a Python object.
struct RunOutput {
  std::vector<std::string> columns;
  std::unique_ptr<std::vector<double>> data;
  SolverStats stats;
  CompiledProgram::Tiers tiers;  // of this run (its workspace's)
  double compile_seconds = 0, ready_seconds = 0;
  std::string backend, method, constraints, report;
};

RunOutput RunOne(const PreparedModel& prepared, const RunOptions& options) {
  BufferSink sink;
  const CompiledModel& cm = prepared.compiled();
  RunResult run = RunPrepared(prepared, cm, options, &sink);
  RunOutput out;
  out.tiers = run.tiers;
  out.columns = sink.columns();
  out.data = sink.Take();
  out.stats = run.solution.stats;
  out.compile_seconds = run.solution.compile_seconds;
  out.ready_seconds = prepared.ready_seconds();
  out.backend = run.solution.backend;
  out.method = IntegratorName(run.report.method, SolverOptionsFor(options, prepared.method()).method);
  out.constraints = ConstraintMethodName(run.report.method);
  if (cm.num_constraints() > 0 || prepared.method() != ConstraintMethod::kAuto) out.report = run.report.ToText();
  return out;
}

// A run as a dict: "columns", "data" (a read-only (rows, columns) array over
// the run's buffer, which a capsule owns), "stats", "report".
py::dict ToPython(RunOutput&& out) {
  const auto ncol = static_cast<py::ssize_t>(out.columns.size());
  const auto nrow = ncol ? static_cast<py::ssize_t>(out.data->size()) / ncol : 0;
  auto* buffer = out.data.release();
  py::capsule owner(buffer, [](void* p) { delete static_cast<std::vector<double>*>(p); });
  const auto item = static_cast<py::ssize_t>(sizeof(double));
  py::array_t<double> data({nrow, ncol}, {ncol * item, item}, buffer->data(), owner);
  py::dict stats;
  stats["steps"] = out.stats.steps;
  stats["rejected"] = out.stats.rejected;
  stats["rhs_evals"] = out.stats.rhs_evals;
  stats["jac_evals"] = out.stats.jac_evals;
  stats["projections"] = out.stats.projections;
  stats["integrate_seconds"] = out.stats.integrate_seconds;
  stats["compile_seconds"] = out.compile_seconds;
  stats["ready_seconds"] = out.ready_seconds;
  stats["backend"] = out.backend;
  stats["method"] = out.method;
  stats["constraints"] = out.constraints;
  stats["stiff_at"] = out.stats.stiff ? py::object(py::float_(out.stats.stiff_t)) : py::none();
  stats["events"] = out.stats.events;
  stats["tape_runs"] = out.tiers.tape_runs;
  stats["native_runs"] = out.tiers.native_runs;
  stats["switched_at"] = out.tiers.switched ? py::object(py::float_(out.tiers.switch_slot0)) : py::none();
  stats["switch_seconds"] = out.tiers.switched ? py::object(py::float_(out.tiers.switch_seconds)) : py::none();
  py::dict d;
  d["columns"] = out.columns;
  d["data"] = data;
  d["stats"] = stats;
  d["report"] = out.report;
  return d;
}

// Overrides as RunOptions::params, in the order given.
using Params = std::vector<std::pair<std::string, double>>;

// Runs prepared once per distinct set of values of the parameters that
// cannot change by a slot (PreparedModel::parameter_settable), each set
// prepared once; the runs go to `threads` workers, which share the compiled
// model (each run has a workspace of its own). Results (or failures) in
// input order.
std::vector<std::variant<RunOutput, Failure>> RunMany(const RunOptions& base, const std::vector<Params>& sets,
                                                      int threads, const Source& src) {
  std::vector<std::variant<RunOutput, Failure>> results(sets.size());
  auto fail = [&](size_t i, const Error& e) { results[i] = FromError(e, src); };
  // The model as `base` gives it: which parameters are settable.
  std::vector<std::unique_ptr<PreparedModel>> prepared;
  std::map<std::string, int> group_of_key;
  std::vector<int> group(sets.size(), -1);
  std::vector<RunOptions> options(sets.size(), base);
  try {
    prepared.push_back(std::make_unique<PreparedModel>(PrepareModel(base)));
  } catch (const Error& e) {
    for (size_t i = 0; i < sets.size(); ++i) fail(i, e);
    return results;
  }
  group_of_key[""] = 0;
  for (size_t i = 0; i < sets.size(); ++i) {
    for (const auto& p : sets[i]) options[i].params.push_back(p);
    // The overrides the build computes numbers from (the last value of each).
    std::map<std::string, double> fixed;
    for (const auto& [name, value] : options[i].params)
      if (!prepared[0]->parameter_settable(name)) fixed[name] = value;
    std::string key;
    for (const auto& [name, value] : fixed) key += name + "=" + fmt::format("{:a}", value) + ";";
    auto it = group_of_key.find(key);
    if (it == group_of_key.end()) {
      RunOptions o = base;
      for (const auto& kv : fixed) o.params.push_back(kv);
      try {
        prepared.push_back(std::make_unique<PreparedModel>(PrepareModel(o)));
      } catch (const Error& e) {
        fail(i, e);
        continue;
      }
      it = group_of_key.emplace(key, static_cast<int>(prepared.size()) - 1).first;
    }
    group[i] = it->second;
  }
  threads = std::max(1, std::min<int>(threads, static_cast<int>(sets.size())));
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < sets.size(); i = next++) {
      if (group[i] < 0) continue;  // its preparation failed
      try {
        // RunPrepared gives each run a fresh workspace of the shared compiled
        // model, so a run's bits do not depend on the runs before or beside it.
        results[i] = RunOne(*prepared[group[i]], options[i]);
      } catch (const Error& e) {
        fail(i, e);
      } catch (const std::exception& e) {
        results[i] = FromOther(e);
      }
    }
  };
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int w = 0; w < threads; ++w) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  return results;
}

// A command's report; a model from text or a dict is named as its errors name it.
std::string Report(const Source& src, const std::function<int(std::ostream&)>& report, int* status) {
  return Guarded(src, [&] {
    std::ostringstream out;
    *status = report(out);
    std::string text = out.str();
    if (!src.display.empty()) Replace(&text, src.path, src.display);
    return text;
  });
}

}  // namespace

namespace {

// The operating point of linearize and bode from Python's arguments.
OperatingPointOptions PointOptions(const Source& src, const Params& params, const Params& states,
                                   std::optional<double> at, bool steady, const std::string& loop_at) {
  OperatingPointOptions o;
  o.file = src.path;
  o.params = params;
  o.states = states;
  o.at = at;
  o.steady = steady;
  o.loop_at = loop_at;
  return o;
}

py::list ToPython(const std::vector<Crossover>& cs) {
  py::list l;
  for (const Crossover& c : cs) l.append(py::make_tuple(c.w, c.margin));
  return l;
}

py::object ToPython(const std::optional<Crossover>& c) {
  return c ? py::object(py::make_tuple(c->w, c->margin)) : py::object(py::none());
}

// The margins of a loop: crossovers as (w, margin) tuples.
void AddMargins(const LoopMargins& mg, py::dict* d) {
  (*d)["gain_crossovers"] = ToPython(mg.gain_crossovers);
  (*d)["phase_crossovers"] = ToPython(mg.phase_crossovers);
  (*d)["phase_margin"] = ToPython(mg.phase_margin);
  (*d)["gain_margin"] = ToPython(mg.gain_margin);
  (*d)["margin_range"] = py::make_tuple(mg.w0, mg.w1);
}

// A Matrix as a (rows, cols) array (a copy).
py::array_t<double> ToArray(const Matrix& m) {
  py::array_t<double> a({static_cast<py::ssize_t>(m.rows), static_cast<py::ssize_t>(m.cols)});
  auto v = a.mutable_unchecked<2>();
  for (int i = 0; i < m.rows; ++i)
    for (int j = 0; j < m.cols; ++j) v(i, j) = m(i, j);
  return a;
}

// `paynter compare` as a dict: the table's texts and, per method, its figures.
py::dict ToPython(const MethodComparison& c) {
  py::list methods;
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const MethodRun& r = c.runs[i];
    py::dict d;
    d["method"] = ConstraintMethodName(r.method);
    d["failure"] = r.failure.empty() ? py::object(py::none()) : py::object(py::str(r.failure));
    if (r.failure.empty()) {
      d["integrate_seconds"] = r.solution.stats.integrate_seconds;
      d["steps"] = r.solution.stats.steps;
      d["rhs_evals"] = r.solution.stats.rhs_evals;
      d["position_drift"] = r.report.max_position_drift;
      d["velocity_drift"] = StrategyFor(r.method).DriftIsStretch() ? py::object(py::none())
                                                                        : py::object(py::float_(r.report.max_velocity_drift));
      d["energy_balance"] = c.energy ? py::object(py::float_(c.EnergyBalance(i))) : py::object(py::none());
      py::dict diff;
      for (size_t k = 1; k < c.outputs.size(); ++k) diff[py::str(c.outputs[k])] = c.MaxDifference(i, k);
      d["max_difference"] = diff;
    }
    methods.append(d);
  }
  py::dict out;
  out["methods"] = methods;
  out["reference"] = ConstraintMethodName(c.runs[c.reference].method);
  out["outputs"] = std::vector<std::string>(c.outputs.begin() + 1, c.outputs.end());
  out["markdown"] = ComparisonMarkdown(c);
  out["csv"] = ComparisonCsv(c);
  return out;
}

// A linearized model as a dict of arrays and names (the text of `paynter linearize` as "text").
py::dict ToPython(const LinearizedModel& r) {
  const LinearModel& lin = r.lin;
  py::dict d;
  d["A"] = ToArray(lin.A);
  d["B"] = ToArray(lin.B);
  d["C"] = ToArray(lin.C);
  d["D"] = ToArray(lin.D);
  d["states"] = lin.states;
  d["inputs"] = lin.inputs;
  d["outputs"] = lin.outputs;
  d["t"] = lin.t;
  d["x"] = lin.x;
  d["dx"] = lin.dx;
  d["y"] = lin.y;
  d["all_states"] = lin.all_states;
  d["dependent"] = lin.dependent;
  d["all_x"] = lin.all_x;
  d["V"] = ToArray(lin.V);
  py::list eig;
  for (const Mode& m : Modes(lin.A)) eig.append(py::make_tuple(m.lambda, m.zeta, m.wn));
  d["modes"] = eig;
  d["how"] = r.how;
  d["text"] = LinearizationText(r);
  if (r.loop) {  // the loop opened: its state space (H = L), poles, margins
    const LinearModel& o = r.loop->open;
    py::dict l;
    l["signal"] = r.loop->signal;
    l["A"] = ToArray(o.A);
    l["B"] = ToArray(o.B);
    l["C"] = ToArray(o.C);
    l["D"] = ToArray(o.D);
    l["states"] = o.states;
    py::list poles;
    for (const Mode& m : Modes(o.A)) poles.append(m.lambda);
    l["poles"] = poles;
    AddMargins(r.loop->margins, &l);
    d["loop"] = l;
  } else {
    d["loop"] = py::none();
  }
  return d;
}

// A sweep's runs kept in memory, in run order (Python's sweep).
class MemorySweepSink : public SweepSink {
 public:
  void Begin(const std::vector<std::string>& columns) override { columns_ = columns; }
  void Run(const SweepRunResult& result) override { runs_.push_back(result); }
  void Commit() override {}
  const std::vector<std::string>& columns() const { return columns_; }
  const std::vector<SweepRunResult>& runs() const { return runs_; }

 private:
  std::vector<std::string> columns_;
  std::vector<SweepRunResult> runs_;
};

// A sweep as a dict: "columns", "names", "values" (runs x names), "data"
// (runs x rows x columns, a failed run's missing rows NaN), "summary" (the
// summary's columns after the parameters, each a list or an array), the
// grid's "shape" parts and the report's figures.
py::dict ToPython(const SweepDefinition& def, const MemorySweepSink& sink, const SweepReport& report) {
  const std::vector<std::string>& columns = sink.columns();
  const auto runs = static_cast<py::ssize_t>(sink.runs().size());
  const auto ncol = static_cast<py::ssize_t>(columns.size());
  py::ssize_t nrow = 0;
  for (const auto& r : sink.runs()) nrow = std::max<py::ssize_t>(nrow, r.rows);
  py::array_t<double> data({runs, nrow, ncol});
  double* d = data.mutable_data();
  std::fill(d, d + runs * nrow * ncol, std::nan(""));
  const auto nnames = static_cast<py::ssize_t>(def.names.size());
  py::array_t<double> values({runs, nnames});
  double* v = values.mutable_data();
  std::vector<SweepRunSummary> summary;
  for (py::ssize_t k = 0; k < runs; ++k) {
    const SweepRunResult& r = sink.runs()[k];
    std::copy(r.data.begin(), r.data.begin() + r.rows * ncol, d + k * nrow * ncol);
    const std::vector<double> rv = def.RunValues(r.index);
    std::copy(rv.begin(), rv.end(), v + k * nnames);
    summary.push_back(SummarizeSweepRun(r, columns.size()));
  }
  py::dict sum;
  const std::vector<std::string> names = SweepSummaryColumns(columns);
  auto numbers = [&](auto get) {
    py::array_t<double> a(runs);
    for (py::ssize_t k = 0; k < runs; ++k) a.mutable_data()[k] = get(summary[k]);
    return a;
  };
  auto counts = [&](auto get) {
    py::array_t<long long> a(runs);
    for (py::ssize_t k = 0; k < runs; ++k) a.mutable_data()[k] = get(summary[k]);
    return a;
  };
  sum["ok"] = counts([](const SweepRunSummary& s) { return s.ok ? 1 : 0; });
  py::list errors;
  for (const auto& s : summary) errors.append(s.error);
  sum["error"] = errors;
  sum["t_final"] = numbers([](const SweepRunSummary& s) { return s.t_final; });
  sum["rows"] = counts([](const SweepRunSummary& s) { return s.rows; });
  sum["steps"] = counts([](const SweepRunSummary& s) { return s.steps; });
  sum["rejected"] = counts([](const SweepRunSummary& s) { return s.rejected; });
  sum["rhs_evals"] = counts([](const SweepRunSummary& s) { return s.rhs_evals; });
  sum["jac_evals"] = counts([](const SweepRunSummary& s) { return s.jac_evals; });
  sum["own_build"] = counts([](const SweepRunSummary& s) { return s.own_build ? 1 : 0; });
  const size_t nout = columns.size() - 1;
  for (size_t c = 0; c < nout; ++c) {
    sum[py::str(names[9 + c])] = numbers([&](const SweepRunSummary& s) { return s.final_values[c]; });
    sum[py::str(names[9 + nout + c])] = numbers([&](const SweepRunSummary& s) { return s.min_values[c]; });
    sum[py::str(names[9 + 2 * nout + c])] = numbers([&](const SweepRunSummary& s) { return s.max_values[c]; });
  }
  py::list ranges;
  for (const SweepRange& r : def.ranges) ranges.append(py::make_tuple(r.name, SweepValues(r)));
  py::dict out;
  out["columns"] = columns;
  out["summary_columns"] = names;
  out["names"] = def.names;
  out["values"] = values;
  out["data"] = data;
  out["summary"] = sum;
  out["table_rows"] = def.ranges.size() == def.names.size() ? 0 : static_cast<long>(def.rows.size());
  out["ranges"] = ranges;
  out["failed"] = report.failed;
  out["own_builds"] = report.own_builds;
  out["compiled_once"] = report.compiled_once;
  out["threads"] = report.threads;
  return out;
}

}  // namespace

PYBIND11_MODULE(_paynter, m) {
  m.doc() = "paynter's compiled core; use the package `paynter`";
  SetStageProgress(true);  // long symbolic stages say so on stderr (paynter/progress.h)
  g_error = PyErr_NewException("paynter.Error", PyExc_Exception, nullptr);
  g_model_error = PyErr_NewException("paynter.ModelError", g_error, nullptr);
  m.attr("Error") = py::handle(g_error);
  m.attr("ModelError") = py::handle(g_model_error);
  m.attr("version") = PAYNTER_VERSION;

  py::class_<Source>(m, "Source")
      .def(py::init<std::string, std::string>(), py::arg("path"), py::arg("display") = "")
      .def_readonly("path", &Source::path)
      .def_readonly("display", &Source::display);

  py::class_<RunOptions>(m, "RunOptions")
      .def(py::init<>())
      .def_readwrite("file", &RunOptions::file)
      // The choices as texts, parsed as the command line parses them (a bad
      // one raises paynter.ModelError with the command line's message).
      .def_property(
          "form", [](const RunOptions& o) { return FormulationName(o.form); },
          [](RunOptions& o, const std::string& v) { o.form = Parsed(o, [&] { return ParseFormulation(v); }); })
      .def_property(
          "constraints", [](const RunOptions& o) { return ConstraintMethodName(o.constraints); },
          [](RunOptions& o, const std::string& v) {
            o.constraints = Parsed(o, [&] { return ParseConstraintMethod(v); });
          })
      .def_property(
          "method", [](const RunOptions& o) { return MethodName(o.method); },
          [](RunOptions& o, const std::string& v) { o.method = Parsed(o, [&] { return ParseMethod(v); }); })
      .def_readwrite("method_given", &RunOptions::method_given)
      .def_property(
          "backend", [](const RunOptions& o) { return BackendName(o.backend); },
          [](RunOptions& o, const std::string& v) { o.backend = Parsed(o, [&] { return ParseBackend(v); }); })
      .def_property(
          "block_solve", [](const RunOptions& o) { return BlockSolveName(o.block_solve); },
          [](RunOptions& o, const std::string& v) { o.block_solve = Parsed(o, [&] { return ParseBlockSolve(v); }); })
      .def_readwrite("t0", &RunOptions::t0)
      .def_readwrite("t_end", &RunOptions::t_end)
      .def_readwrite("rtol", &RunOptions::rtol)
      .def_readwrite("atol", &RunOptions::atol)
      .def_readwrite("dt_out", &RunOptions::dt_out)
      .def_readwrite("step", &RunOptions::step)
      .def_readwrite("max_steps", &RunOptions::max_steps)
      .def_readwrite("max_steps_given", &RunOptions::max_steps_given)
      .def_readwrite("parasitic_stiffness", &RunOptions::parasitic_stiffness)
      .def_readwrite("parasitic_damping", &RunOptions::parasitic_damping)
      .def_readwrite("assemble", &RunOptions::assemble)
      .def_readwrite("stabilize", &RunOptions::stabilize)
      .def_readwrite("energy", &RunOptions::energy)
      .def_readwrite("project_energy", &RunOptions::project_energy)
      .def_readwrite("drift_tolerance", &RunOptions::drift_tolerance)
      .def_readwrite("stage_cache", &RunOptions::stage_cache)
      .def_readwrite("progress", &RunOptions::progress)
      .def_readwrite("params", &RunOptions::params);

  // The model file read as a model (YAML, structure; with `build`, every
  // pass and the Model built, as `check` builds it); raises its first error.
  m.def(
      "read",
      [](const Source& src, bool build) {
        return Guarded(src, [&] {
          if (build) return Load(ModelSource::File(src.path)).spec.name;
          return LoadSpec(ModelSource::File(src.path), {}, LoadPass::kSubmodels).name;
        });
      },
      py::arg("source"), py::arg("build") = false);
  m.def("check", [](const Source& src) {
    int status = 0;
    return Report(src, [&](std::ostream& out) { return CheckReport(src.path, out); }, &status);
  });
  // (exit status, text): status 1 when causal conflicts remain.
  m.def("causality", [](const Source& src, const std::string& procedure, const std::string& constraints) {
    int status = 0;
    std::string text = Report(
        src,
        [&](std::ostream& out) {
          return CausalityText(src.path, ParseProcedure(procedure), ParseConstraintMethod(constraints), out);
        },
        &status);
    return std::make_pair(status, text);
  });
  m.def("equations", [](const Source& src, bool latex, const std::string& form, bool explain,
                        const std::string& constraints) {
    int status = 0;
    return Report(
        src,
        [&](std::ostream& out) {
          return EquationsText(src.path, latex, ParseFormulation(form), explain, ParseConstraintMethod(constraints),
                               out);
        },
        &status);
  });
  // `paynter draw`: the Graphviz source, and a drawing written from it.
  m.def("drawing_dot", [](const Source& src, const std::string& procedure, const std::string& constraints, bool expand,
                          int highlight) {
    return Guarded(src, [&] {
      DrawOptions options;
      options.procedure = ParseProcedure(procedure);
      options.constraints = ParseConstraintMethod(constraints);
      options.expand = expand;
      options.highlight = highlight;
      return DrawingDot(src.path, options);
    });
  });
  m.def("render_dot", [](const Source& src, const std::string& dot, const std::string& path) {
    Guarded(src, [&] {
      RenderDot(dot, path);
      return 0;
    });
  });
  // `paynter report`: simulates and writes the HTML report.
  m.def("report", [](const Source& src, const RunOptions& run, const std::string& procedure, const std::string& path) {
    Guarded(src, [&] {
      ReportOptions options;
      options.run = run;
      options.run.progress = false;
      options.procedure = ParseProcedure(procedure);
      WriteHtmlReport(options, path);
      return 0;
    });
  });
  // `paynter expand`: the model after the passes up to `after` ("" = all of
  // them, the scalar model, which must itself build), as YAML.
  m.def("expand", [](const Source& src, const std::string& after) {
    return Guarded(src, [&] {
      const LoadPass last = after.empty() ? LoadPasses().back().pass : ParseLoadPass(after, src.path);
      const ModelSpec spec = LoadSpec(ModelSource::File(src.path), {}, last);
      if (last == LoadPasses().back().pass) BuildModel(spec);
      return ModelSpecToYaml(spec);
    });
  });
  // The model's run settings (`simulation:`) for the options not in `given`.
  m.def("apply_model_settings",
        [](const Source& src, RunOptions& options, const std::vector<std::string>& given, bool require_t_end) {
          Guarded(src, [&] {
            ApplyModelSettings(options, std::set<std::string>(given.begin(), given.end()), require_t_end);
            return 0;
          });
        });
  m.def("simulate", [](const Source& src, RunOptions options) {
    // Ctrl-C stops a run (RunOptions::on_progress): every 50 ms (looked at
    // every 16 reports) the run takes the GIL for a moment and lets Python
    // see its signals (in the main thread); the exception a handler raised
    // (KeyboardInterrupt) ends the run and is raised as it is.
    long reports = 0;
    auto last = std::chrono::steady_clock::now();
    PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
    options.on_progress = [&](double) {
      if (++reports % 16 != 0) return true;
      const auto now = std::chrono::steady_clock::now();
      if (now - last < std::chrono::milliseconds(50)) return true;
      last = now;
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() == 0) return true;
      PyErr_Fetch(&type, &value, &trace);
      return false;
    };
    RunOutput out;
    try {
      out = Guarded(src, [&] {
        CheckOutputRows(options);
        PreparedModel prepared = PrepareModel(options);
        return RunOne(prepared, options);
      });
    } catch (py::error_already_set&) {
      if (!type) throw;
      PyErr_Restore(type, value, trace);  // the signal's exception, not the stop's
      throw py::error_already_set();
    }
    return ToPython(std::move(out));
  });
  // The model as a run sees it (form, constraint method and parameters of
  // `options`; tape backend, no native compile): its parameters' values, the
  // states and the outputs.
  m.def("describe", [](const Source& src, RunOptions options) {
    options.backend = Backend::kTape;
    std::vector<std::string> pnames, states, outputs;
    std::vector<double> pvalues;
    Guarded(src, [&] {
      const PreparedModel prepared = PrepareModel(options);
      const LoweredModel& l = prepared.staged().lowered;
      pnames = l.parameter_names;
      pvalues = l.parameter_values;
      states = l.state_names;
      outputs = l.output_names;
      // The values a run sets over the prepared ones (RunPrepared's params).
      for (const auto& [name, value] : options.params) {
        const auto it = std::find(pnames.begin(), pnames.end(), name);
        if (it == pnames.end())
          ThrowAt({options.file}, "", fmt::format("params: the model has no parameter '{}'", name),
                  "one of: " + fmt::format("{}", fmt::join(pnames, ", ")), name, DidYouMean(name, pnames));
        pvalues[it - pnames.begin()] = value;
      }
      return 0;
    });
    py::dict params;
    for (size_t i = 0; i < pnames.size(); ++i) params[py::str(pnames[i])] = pvalues[i];
    py::dict d;
    d["parameters"] = params;
    d["states"] = states;
    d["outputs"] = outputs;
    return d;
  });
  // `paynter compare`: every constraint method (as RunOptions says, but the method).
  m.def("compare", [](const Source& src, const RunOptions& options) {
    const MethodComparison c = Guarded(src, [&] { return CompareMethods(options); });
    return ToPython(c);
  });
  // `paynter linearize` at an operating point: (params, states) as NAME -> value lists.
  m.def("linearize", [](const Source& src, const Params& params, const Params& states, std::optional<double> at,
                        bool steady, const std::string& loop_at) {
    const OperatingPointOptions o = PointOptions(src, params, states, at, steady, loop_at);
    const LinearizedModel r = Guarded(src, [&] { return LinearizeModel(o); });
    return ToPython(r);
  });
  // `paynter bode`: the frequency response of one input to one output, as arrays.
  // With loop_at: the loop gain there (input and output empty), and its margins.
  m.def("bode", [](const Source& src, const Params& params, const Params& states, std::optional<double> at,
                   bool steady, const std::string& loop_at, const std::string& input, const std::string& output,
                   double w0, double w1, int points) {
    const OperatingPointOptions o = PointOptions(src, params, states, at, steady, loop_at);
    std::vector<BodePoint> pts;
    std::string in_name, out_name;
    std::optional<LoopMargins> margins;
    Guarded(src, [&] {
      if (!loop_at.empty() && (!input.empty() || !output.empty()))
        ThrowAt({src.path}, "", "bode: loop_at excludes input and output",
                "loop_at (the loop gain there) or input/output (a response of the closed loop)", "both");
      const LinearizedModel r = LinearizeModel(o);
      if (r.loop) {
        pts = LoopBodeOf(r, w0, w1, points);
        in_name = r.loop->signal;
        out_name = r.loop->open.outputs[0];
        margins = r.loop->margins;
        return 0;
      }
      const int in = LinearChannel(r, input, "input", src.path);
      const int out = LinearChannel(r, output, "output", src.path);
      pts = BodeOf(r, in, out, w0, w1, points);
      in_name = r.lin.inputs[in];
      out_name = r.lin.outputs[out];
      return 0;
    });
    std::vector<double> w, mag, phase;
    for (const BodePoint& p : pts) {
      w.push_back(p.w);
      mag.push_back(p.magnitude_db);
      phase.push_back(p.phase_deg);
    }
    py::dict d;
    d["omega"] = py::array_t<double>(static_cast<py::ssize_t>(w.size()), w.data());
    d["magnitude_db"] = py::array_t<double>(static_cast<py::ssize_t>(mag.size()), mag.data());
    d["phase_deg"] = py::array_t<double>(static_cast<py::ssize_t>(phase.size()), phase.data());
    d["input"] = in_name;
    d["output"] = out_name;
    if (margins) AddMargins(*margins, &d);
    return d;
  });
  // `paynter sweep` into memory: `params` are the range texts
  // (NAME=START:STOP:COUNT), `log` the names spaced in the logarithm, the
  // table a file (`table_path`) or values (`names`, `rows`; errors name it
  // `table_where`).
  m.def("sweep", [](const Source& src, const RunOptions& options, const std::vector<std::string>& params,
                    const std::vector<std::string>& log, const std::string& table_path,
                    const std::vector<std::string>& names, const std::vector<std::vector<double>>& rows,
                    const std::string& table_where, int threads) {
    MemorySweepSink sink;
    SweepDefinition def;
    SweepReport report;
    Guarded(src, [&] {
      if (threads < 0) {  // as sweep --threads
        Diagnostic d;
        d.message = fmt::format("threads: {} is below 0", threads);
        d.expected = "a whole number of threads >= 1 (0 or None: every hardware thread)";
        d.got = std::to_string(threads);
        throw Error(std::move(d));
      }
      RunOptions base = options;
      base.progress = false;
      def = table_path.empty() ? DefineSweep(base, params, log, ParameterTable{names, rows}, table_where)
                               : DefineSweep(base, params, log, table_path);
      SweepSettings settings;
      settings.threads = threads;
      report = RunSweep(def, settings, &sink);
      return 0;
    });
    return ToPython(def, sink, report);
  });
  // `paynter fmu`: writes the FMU, returns what the command prints as a dict.
  m.def("fmu", [](const Source& src, const std::string& output, const std::string& kind, const std::string& form,
                  const std::string& constraints, double stiffness, double damping, const Params& params,
                  const std::string& method, double rtol, double atol, double step, int fmi_version) {
    const FmuReport r = Guarded(src, [&] {
      if (kind != "me" && kind != "cs" && kind != "both") {
        Diagnostic d;
        d.message = fmt::format("kind: '{}' is not a kind of FMU", kind);
        d.expected = "me | cs | both";
        d.got = kind;
        throw Error(std::move(d));
      }
      FmuOptions o;
      o.model_file = src.path;
      o.output = output;
      o.model_exchange = kind != "cs";
      o.co_simulation = kind != "me";
      o.form = form;
      o.constraints = constraints;
      o.parasitic_stiffness = stiffness;
      o.parasitic_damping = damping;
      for (const auto& [name, value] : params) o.overrides[name] = value;
      o.method = method;
      o.rtol = rtol;
      o.atol = atol;
      o.step = step;
      o.fmi_version = fmi_version;
      return ExportFmu(o);
    });
    py::dict d;
    d["path"] = output;
    d["fmi_version"] = fmi_version;
    d["model_identifier"] = r.model_identifier;
    d["library_path"] = r.library_path;
    d["guid"] = r.guid;
    d["form"] = r.form;
    d["states"] = r.num_states;
    d["inputs"] = r.num_inputs;
    d["outputs"] = r.num_outputs;
    d["parameters"] = r.num_parameters;
    d["tunable"] = r.num_tunable;
    d["calculated"] = r.num_calculated;
    d["compile_seconds"] = r.compile_seconds;
    d["library_bytes"] = r.library_bytes;
    d["fmu_bytes"] = r.fmu_bytes;
    return d;
  });
  // A list, in input order, of run dicts or exception objects.
  m.def("simulate_many", [](const Source& src, const RunOptions& options, const std::vector<Params>& sets,
                            int threads) {
    std::vector<std::variant<RunOutput, Failure>> results = Guarded(src, [&] {
      if (threads < 0) {  // as sweep --threads: 0 is every hardware thread
        Diagnostic d;
        d.message = fmt::format("threads: {} is below 0", threads);
        d.expected = "a whole number of threads >= 1 (0 or None: every hardware thread)";
        d.got = std::to_string(threads);
        throw Error(std::move(d));
      }
      CheckOutputRows(options);
      return RunMany(options, sets, threads, src);
    });
    py::list out;
    for (auto& r : results) {
      if (auto* run = std::get_if<RunOutput>(&r))
        out.append(ToPython(std::move(*run)));
      else
        out.append(ExceptionObject(std::get<Failure>(r)));
    }
    return out;
  });
}
