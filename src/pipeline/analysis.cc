// pipeline/analysis.cc — compare (every constraint method on one model) and
// the operating point of linearize and bode (paynter/analysis.h).
#include "paynter/analysis.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "paynter/causality.h"
#include "paynter/codegen.h"
#include "paynter/equations.h"
#include "paynter/error.h"
#include "paynter/pipeline.h"
#include "paynter/solvers.h"

namespace paynter {

// ---- compare ------------------------------------------------------------------

double MethodComparison::EnergyBalance(size_t k) const {
  const Solution& s = runs[k].solution;
  const auto st = s.Column("energy_stored"), in = s.Column("energy_delivered"), out = s.Column("energy_dissipated");
  double err = 0, scale = 0;
  for (size_t i = 0; i < st.size(); ++i) {
    err = std::max(err, std::fabs(st[i] - st[0] - in[i] + out[i]));
    scale = std::max({scale, std::fabs(st[i]), std::fabs(in[i]), std::fabs(out[i])});
  }
  return scale > 0 ? err / scale : err;
}

namespace {

// The index of `name` among a solution's columns (columns.size() when absent).
size_t ColumnIndex(const Solution& s, const std::string& name) {
  return static_cast<size_t>(std::find(s.columns.begin(), s.columns.end(), name) - s.columns.begin());
}

}  // namespace

double MethodComparison::MaxDifference(size_t k, size_t c) const {
  const Solution& r = runs[k].solution;
  const Solution& ref = runs[reference].solution;
  const size_t rc = ColumnIndex(r, outputs[c]), fc = ColumnIndex(ref, outputs[c]);
  if (rc == r.columns.size() || fc == ref.columns.size()) return 0;
  double diff = 0;
  const size_t nrows = std::min(r.rows.size(), ref.rows.size());
  for (size_t i = 0; i < nrows; ++i) diff = std::max(diff, std::fabs(r.rows[i][rc] - ref.rows[i][fc]));
  return diff;
}

MethodComparison CompareMethods(RunOptions options) {
  options.energy_if_possible = true;
  options.progress = false;
  CheckOutputRows(options);
  MethodComparison c;
  for (ConstraintMethod m : {ConstraintMethod::kMinimalCoordinates, ConstraintMethod::kLagrangeMultipliers,
                             ConstraintMethod::kParasitic, ConstraintMethod::kZcp}) {
    MethodRun r;
    r.method = m;
    try {
      RunOptions o = options;
      o.constraints = m;
      // The model's run setting project_energy is lagrange-multipliers' alone.
      o.project_energy = options.project_energy && m == ConstraintMethod::kLagrangeMultipliers;
      PreparedModel prepared = PrepareModel(o);
      RunResult run = RunPrepared(prepared, prepared.compiled(), o);
      r.solution = std::move(run.solution);
      r.report = std::move(run.report);
      r.report.method = m;
    } catch (const Error& e) {
      // The message alone (its first line): the file is the comparison's.
      r.failure = e.diagnostic().message.empty() ? e.what() : e.diagnostic().message;
      const auto nl = r.failure.find('\n');
      if (nl != std::string::npos) r.failure = r.failure.substr(0, nl);
    }
    c.runs.push_back(std::move(r));
  }
  while (c.reference < c.runs.size() && !c.runs[c.reference].failure.empty()) ++c.reference;
  if (c.reference == c.runs.size()) {
    const bool unconstrained = std::all_of(c.runs.begin(), c.runs.end(), [](const MethodRun& r) {
      return r.failure.find("the model has no constraint source") != std::string::npos ||
             r.failure.find("the model has no joint constraint") != std::string::npos;
    });
    if (unconstrained)
      ThrowAt({options.file}, "", "compare: the model has no constraints: the constraint methods have nothing to compare",
              "a mechanism (joints that close a loop, or constraint sources)", "a model without constraints",
              fmt::format("simulate it: paynter simulate {} --t-end T -o out.csv", options.file));
    ThrowAt({options.file}, "", "compare: no method could simulate the model; minimal-coordinates: " + c.runs[0].failure,
            "", "", "simulate the model with --constraints lagrange-multipliers --stats to see why");
  }
  const auto& all = c.runs[c.reference].solution.columns;
  for (const auto& col : all)
    if (col.rfind("energy_", 0) != 0) c.outputs.push_back(col);
  c.energy = c.outputs.size() < all.size();
  return c;
}

std::string ComparisonMarkdown(const MethodComparison& c) {
  std::string md = "| method | time (s) | steps | rhs evaluations | position drift | velocity drift |";
  if (c.energy) md += " energy balance |";
  for (size_t k = 1; k < c.outputs.size(); ++k) md += fmt::format(" max diff {} |", c.outputs[k]);
  md += "\n|---|---:|---:|---:|---:|---:|";
  if (c.energy) md += "---:|";
  for (size_t k = 1; k < c.outputs.size(); ++k) md += "---:|";
  md += "\n";
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const MethodRun& r = c.runs[i];
    const std::string name = ConstraintMethodName(r.method);
    if (!r.failure.empty()) {
      md += fmt::format("| {} | not run: {} |\n", name, r.failure);
      continue;
    }
    const bool parasitic = StrategyFor(r.method).DriftIsStretch();
    md += fmt::format("| {} | {:.4f} | {} | {} | {} | {} |", name, r.solution.stats.integrate_seconds,
                      r.solution.stats.steps, r.solution.stats.rhs_evals,
                      parasitic ? fmt::format("{:.2e} (stretch)", r.report.max_position_drift)
                                : fmt::format("{:.2e}", r.report.max_position_drift),
                      parasitic ? std::string("-") : fmt::format("{:.2e}", r.report.max_velocity_drift));
    if (c.energy) md += fmt::format(" {:.2e} |", c.EnergyBalance(i));
    for (size_t k = 1; k < c.outputs.size(); ++k) md += fmt::format(" {:.2e} |", c.MaxDifference(i, k));
    md += "\n";
  }
  return md;
}

std::string ComparisonCsv(const MethodComparison& c) {
  std::string csv = "method,time_s,steps,rhs_evals,position_drift,velocity_drift";
  if (c.energy) csv += ",energy_balance";
  for (size_t k = 1; k < c.outputs.size(); ++k) csv += ",diff_" + c.outputs[k];
  csv += "\n";
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const MethodRun& r = c.runs[i];
    const std::string name = ConstraintMethodName(r.method);
    if (!r.failure.empty()) {
      csv += fmt::format("{},,,,,\n", name);
      continue;
    }
    const bool parasitic = StrategyFor(r.method).DriftIsStretch();
    csv += fmt::format("{},{:.6g},{},{},{:.3e},{:.3e}", name, r.solution.stats.integrate_seconds,
                       r.solution.stats.steps, r.solution.stats.rhs_evals, r.report.max_position_drift,
                       parasitic ? 0.0 : r.report.max_velocity_drift);
    if (c.energy) csv += fmt::format(",{:.3e}", c.EnergyBalance(i));
    for (size_t k = 1; k < c.outputs.size(); ++k) csv += fmt::format(",{:.3e}", c.MaxDifference(i, k));
    csv += "\n";
  }
  return csv;
}

std::string DifferenceCsv(const MethodComparison& c, const std::string& output, std::vector<std::string>* series) {
  const size_t k = static_cast<size_t>(std::find(c.outputs.begin(), c.outputs.end(), output) - c.outputs.begin());
  if (k == 0 || k == c.outputs.size()) {
    ThrowAt({}, "", fmt::format("compare --plot: no output '{}'", output),
            fmt::format(
                "one of the model's outputs: {}",
                fmt::join(std::vector<std::string>(c.outputs.begin() + (c.outputs.empty() ? 0 : 1), c.outputs.end()),
                          ", ")),
            output);
  }
  const Solution& ref = c.runs[c.reference].solution;
  const size_t fc = ColumnIndex(ref, output);
  std::vector<size_t> cols(c.runs.size(), 0);
  std::string text = "t";
  series->clear();
  for (size_t i = 0; i < c.runs.size(); ++i) {
    if (i == c.reference || !c.runs[i].failure.empty()) continue;
    cols[i] = ColumnIndex(c.runs[i].solution, output);
    text += "," + ConstraintMethodName(c.runs[i].method);
    series->push_back(ConstraintMethodName(c.runs[i].method));
  }
  text += "\n";
  for (size_t row = 0; row < ref.rows.size(); ++row) {
    text += fmt::format("{:.10g}", ref.rows[row][0]);
    for (size_t i = 0; i < c.runs.size(); ++i) {
      if (i == c.reference || !c.runs[i].failure.empty()) continue;
      const Solution& s = c.runs[i].solution;
      const double v = row < s.rows.size() ? s.rows[row][cols[i]] - ref.rows[row][fc] : 0.0;
      text += fmt::format(",{:.6e}", v);
    }
    text += "\n";
  }
  return text;
}

// ---- linearize and bode -------------------------------------------------------

namespace {

// The loop opened at `signal` (the model `open`, from OpenLoopAt) linearized
// at the closed loop's operating point (t, x), and its margins. `closed` is
// the closed loop's linearization with the signal as its last output, which
// is taken off again (`outputs_written` the model's own outputs: none means
// the states, as Linearize gives them).
LoopAnalysis OpenLoop(LinearModel* closed, Model open, const std::string& signal, const std::string& cut_parameter,
                      size_t outputs_written, const EquationSystem& closed_eqs, double t, const std::vector<double>& x) {
  const double value = closed->y.back();
  const int p = static_cast<int>(outputs_written), k = closed->A.rows, m = closed->B.cols;
  Matrix C(p == 0 ? k : p, k), D(p == 0 ? k : p, m);
  for (int i = 0; i < C.rows; ++i)
    for (int j = 0; j < k; ++j) C(i, j) = p == 0 ? (i == j ? 1.0 : 0.0) : closed->C(i, j);
  for (int i = 0; p > 0 && i < p; ++i)
    for (int j = 0; j < m; ++j) D(i, j) = closed->D(i, j);
  closed->C = C;
  closed->D = D;
  if (p == 0) {
    closed->outputs = closed->states;
    closed->y = closed->x;
  } else {
    closed->outputs.resize(p);
    closed->y.resize(p);
  }
  for (auto& par : open.parameters)
    if (par.name == cut_parameter) par.value = value;
  const CausalGraph graph = AssignCausality(open);
  RequireNoConflicts(open, graph);
  const EquationSystem eqs = BuildEquations(open, graph);
  if (eqs.state_names != closed_eqs.state_names)
    throw Error(fmt::format("--loop-at {}: the loop opened has other states than the closed loop", signal));
  LoopAnalysis loop;
  loop.signal = signal;
  loop.open = Linearize(eqs, {signal}, {cut_parameter}, t, x);
  for (auto* values : {&loop.open.C.data, &loop.open.D.data, &loop.open.y})
    for (auto& v : *values) v = 0.0 - v;  // (not -v: no "-0" in the files)
  loop.open.outputs = {"-" + signal};
  if (!InputReachesOutput(loop.open))
    ThrowAt({open.file}, "", fmt::format("--loop-at {}: no loop passes through '{}'", signal, signal),
            "a signal on a feedback loop: what reads it acts back on it", "what reads it does not act back on it",
            "cut the loop on a signal it passes through: a controller's input (ctl.u), or the signal where the "
            "plant reads the controller's output (a source's parameter, supply.V)");
  double lo = 0, hi = 0;
  NaturalFrequencyRange(loop.open.A, &lo, &hi);
  NaturalFrequencyRange(closed->A, &lo, &hi);
  const double w0 = lo > 0 ? std::pow(10, std::floor(std::log10(lo)) - 2) : 1e-3;
  const double w1 = hi > 0 ? std::pow(10, std::ceil(std::log10(hi)) + 2) : 1e3;
  loop.margins = Margins(loop.open, w0, w1);
  return loop;
}

}  // namespace

LinearizedModel LinearizeModel(const OperatingPointOptions& a) {
  const SourceLocation at_file{a.file};
  if (a.at && a.steady)
    ThrowAt(at_file, "", "--at and --steady exclude each other", "one way to choose the operating point",
            "--at and --steady");
  if (a.at && !(*a.at >= 0 && std::isfinite(*a.at)))
    ThrowAt(at_file, "", "--at needs a time >= 0", "--at T, T >= 0", fmt::format("{}", *a.at));
  LoadOptions lo;
  for (const auto& [k, v] : a.params) lo.overrides[k] = v;
  const Model loaded = LoadModel(a.file, lo);
  std::vector<std::string> inputs, input_params;
  Model model = WithInputs(loaded, &inputs, &input_params);
  // A loop to open: the model opened at the signal (checked here, before any
  // work), and the signal an extra output of the closed loop, for its value at
  // the operating point (taken off again below).
  Model open;
  std::string cut_parameter;
  const size_t outputs_written = model.outputs.size();
  if (!a.loop_at.empty()) {
    open = OpenLoopAt(model, a.loop_at, 0, &cut_parameter);
    model.outputs.push_back(open.outputs[0]);  // the signal
  }
  const CausalGraph graph = AssignCausality(model);
  RequireNoConflicts(model, graph);
  const EquationSystem eqs = BuildEquations(model, graph);
  std::vector<double> x = eqs.initial_state;
  std::vector<std::string> given;
  for (const auto& [name, value] : a.states) {
    given.push_back(name);
    const auto it = std::find(eqs.state_names.begin(), eqs.state_names.end(), name);
    if (it == eqs.state_names.end())
      ThrowAt(at_file, "", fmt::format("--state {}: the model has no state '{}'", name, name),
              "one of: " + fmt::format("{}", fmt::join(eqs.state_names, ", ")), name);
    x[it - eqs.state_names.begin()] = value;
  }
  LinearizedModel r;
  double t = 0;
  r.how = "the initial state";
  if (a.at) {
    t = *a.at;
    if (t > 0) {
      CodegenOptions cg;
      const CompiledModel cm(eqs, cg);
      ModelWorkspace ws(cm);
      OdeProblem problem;
      problem.n = cm.num_states();
      problem.state_names = cm.state_names();
      problem.rhs = [&ws](double tt, const double* xx, double* dx) { ws.CalcDerivatives(tt, xx, dx); };
      SolverOptions so;
      so.t_end = t;
      so.rtol = 1e-10;
      so.atol = 1e-12;
      so.dt_out = t;
      std::vector<double> last = x;
      Integrate(problem, x, so, [&](double, const double* xx) { last.assign(xx, xx + problem.n); });
      x = last;
    }
    r.how = fmt::format("the state at t = {:g} (simulated from the initial state, dopri5, rtol 1e-10)", t);
  }
  // A mechanism: onto its constraints, the states given held (the bodies
  // follow a joint coordinate given with --state).
  if (HasConstraintManifold(eqs)) {
    double moved = 0;
    x = ProjectOntoConstraints(eqs, t, x, given, &moved);
    if (moved > 0) r.how += fmt::format(", moved onto the constraints (largest change {:.3g})", moved);
  }
  if (a.steady) {
    x = SteadyState(eqs, input_params, 0, x);
    r.how = HasConstraintManifold(eqs)
                ? "a steady state (Newton's method on f(x, u) = 0 in the independent coordinates, on the constraints, "
                  "sources at t = 0)"
                : "a steady state (Newton's method on f(x, u) = 0, sources at t = 0)";
  }
  r.lin = Linearize(eqs, inputs, input_params, t, x);
  if (!a.loop_at.empty()) r.loop = OpenLoop(&r.lin, open, a.loop_at, cut_parameter, outputs_written, eqs, t, x);
  return r;
}

namespace {

std::string Num(double v) { return fmt::format("{:.6g}", v == 0 ? 0.0 : v); }  // no "-0"

std::string MatrixText(const std::string& name, const Matrix& m, const std::vector<std::string>& rows,
                       const std::vector<std::string>& cols) {
  std::string s = fmt::format("{} ({}x{}):\n", name, m.rows, m.cols);
  if (m.rows == 0 || m.cols == 0) return s + "  (empty)\n";
  size_t w0 = 0;
  for (const auto& r : rows) w0 = std::max(w0, r.size());
  s += fmt::format("  {:<{}}", "", w0);
  for (const auto& c : cols) s += fmt::format(" {:>14}", c.size() > 14 ? c.substr(0, 14) : c);
  s += "\n";
  for (int i = 0; i < m.rows; ++i) {
    s += fmt::format("  {:<{}}", rows[i], w0);
    for (int j = 0; j < m.cols; ++j) s += fmt::format(" {:>14}", Num(m(i, j)));
    s += "\n";
  }
  return s;
}

// A matrix as CSV: a header of column names, each row led by its name; every
// number in the shortest form that reads back as the same double.
std::string MatrixCsv(const Matrix& m, const std::vector<std::string>& rows, const std::vector<std::string>& cols) {
  std::string s = "name";
  for (const auto& c : cols) s += "," + c;
  s += "\n";
  for (int i = 0; i < m.rows; ++i) {
    s += rows[i];
    for (int j = 0; j < m.cols; ++j) s += fmt::format(",{}", m(i, j));
    s += "\n";
  }
  return s;
}

// The eigenvalues of A as a table: real, imag, damping ratio, natural frequency.
std::string ModesText(const Matrix& A) {
  std::string s = fmt::format("  {:>14} {:>14} {:>14} {:>18}\n", "real", "imag", "damping ratio", "natural freq (rad/s)");
  for (const auto& md : Modes(A))
    s += fmt::format("  {:>14} {:>14} {:>14} {:>18}\n", Num(md.lambda.real()), Num(md.lambda.imag()),
                     std::isnan(md.zeta) ? std::string("-") : Num(md.zeta), Num(md.wn));
  return s;
}

std::string ModesCsv(const Matrix& A) {
  std::string modes = "re,im,damping_ratio,natural_frequency_rad_s\n";
  for (const auto& md : Modes(A)) modes += fmt::format("{},{},{},{}\n", md.lambda.real(), md.lambda.imag(), md.zeta, md.wn);
  return modes;
}

}  // namespace

std::string LinearizationText(const LinearizedModel& r) {
  const LinearModel& lin = r.lin;
  std::string s = fmt::format("operating point: {}, t = {}\n", r.how, Num(lin.t));
  if (lin.dependent.empty()) {
    for (size_t i = 0; i < lin.states.size(); ++i)
      s += fmt::format("  {} = {}   (d/dt = {})\n", lin.states[i], Num(lin.x[i]), Num(lin.dx[i]));
    s += fmt::format("states ({}): {}\n", lin.states.size(), fmt::join(lin.states, ", "));
  } else {
    for (size_t i = 0; i < lin.all_states.size(); ++i)
      s += fmt::format("  {} = {}\n", lin.all_states[i], Num(lin.all_x[i]));
    s += fmt::format("states ({}, independent coordinates on the constraints): {}\n", lin.states.size(),
                     fmt::join(lin.states, ", "));
    s += "  d/dt:";
    for (size_t i = 0; i < lin.dx.size(); ++i) s += fmt::format(" {} {}", lin.states[i], Num(lin.dx[i]));
    s += "\n";
    s += fmt::format("dependent states ({}, following from the constraints, rank {}): {}\n", lin.dependent.size(),
                     lin.constraint_rank, fmt::join(lin.dependent, ", "));
  }
  s += fmt::format("inputs ({}): {}\n", lin.inputs.size(),
                   lin.inputs.empty() ? "none (mark a source 'input: true')" : fmt::format("{}", fmt::join(lin.inputs, ", ")));
  s += fmt::format("outputs ({}): {}\n\n", lin.outputs.size(), fmt::join(lin.outputs, ", "));
  s += MatrixText("A", lin.A, lin.states, lin.states) + "\n" + MatrixText("B", lin.B, lin.states, lin.inputs) + "\n" +
       MatrixText("C", lin.C, lin.outputs, lin.states) + "\n" + MatrixText("D", lin.D, lin.outputs, lin.inputs) + "\n";
  s += r.loop ? "eigenvalues of A (the closed-loop poles):\n" : "eigenvalues of A:\n";
  s += ModesText(lin.A);
  if (r.loop) s += "\n" + LoopText(r);
  return s;
}

std::string LoopText(const LinearizedModel& r) {
  if (!r.loop) return "";
  const LoopAnalysis& loop = *r.loop;
  const LoopMargins& mg = loop.margins;
  std::string s = fmt::format(
      "loop opened at {0}: loop gain L(s) = -({0} / the signal injected at the cut), closed loop 1/(1 + L)\n",
      loop.signal);
  s += fmt::format("poles of the loop opened ({} states):\n", loop.open.A.rows) + ModesText(loop.open.A);
  const std::string range = fmt::format("between {:g} and {:g} rad/s", mg.w0, mg.w1);
  s += fmt::format("gain crossovers (|L| = 1) {}:{}\n", range, mg.gain_crossovers.empty() ? " none" : "");
  for (const auto& c : mg.gain_crossovers)
    s += fmt::format("  w = {} rad/s: phase margin {} deg\n", Num(c.w), Num(c.margin));
  s += fmt::format("phase crossovers (arg L = -180 deg) {}:{}\n", range, mg.phase_crossovers.empty() ? " none" : "");
  for (const auto& c : mg.phase_crossovers)
    s += fmt::format("  w = {} rad/s: gain margin {} dB\n", Num(c.w), Num(c.margin));
  s += mg.phase_margin ? fmt::format("phase margin: {} deg at {} rad/s\n", Num(mg.phase_margin->margin),
                                     Num(mg.phase_margin->w))
                       : "phase margin: none (|L| does not cross 1 in that range)\n";
  s += mg.gain_margin ? fmt::format("gain margin: {} dB at {} rad/s\n", Num(mg.gain_margin->margin),
                                    Num(mg.gain_margin->w))
                      : "gain margin: infinite (the phase does not cross -180 deg in that range)\n";
  return s;
}

std::vector<std::pair<std::string, std::string>> LinearizationCsv(const LinearizedModel& r) {
  const LinearModel& lin = r.lin;
  std::vector<std::pair<std::string, std::string>> files = {
      {"_A.csv", MatrixCsv(lin.A, lin.states, lin.states)},   {"_B.csv", MatrixCsv(lin.B, lin.states, lin.inputs)},
      {"_C.csv", MatrixCsv(lin.C, lin.outputs, lin.states)},  {"_D.csv", MatrixCsv(lin.D, lin.outputs, lin.inputs)},
      {"_eigenvalues.csv", ModesCsv(lin.A)}};
  if (!lin.dependent.empty())  // a mechanism: all states' deviations from the independent ones
    files.emplace_back("_V.csv", MatrixCsv(lin.V, lin.all_states, lin.states));
  if (r.loop) {  // the loop opened: its state space (H = L), poles and crossovers
    const LinearModel& o = r.loop->open;
    files.emplace_back("_loop_A.csv", MatrixCsv(o.A, o.states, o.states));
    files.emplace_back("_loop_B.csv", MatrixCsv(o.B, o.states, o.inputs));
    files.emplace_back("_loop_C.csv", MatrixCsv(o.C, o.outputs, o.states));
    files.emplace_back("_loop_D.csv", MatrixCsv(o.D, o.outputs, o.inputs));
    files.emplace_back("_loop_poles.csv", ModesCsv(o.A));
    std::string margins = "crossover,omega_rad_s,margin,unit\n";
    for (const auto& c : r.loop->margins.gain_crossovers) margins += fmt::format("gain,{},{},deg\n", c.w, c.margin);
    for (const auto& c : r.loop->margins.phase_crossovers) margins += fmt::format("phase,{},{},dB\n", c.w, c.margin);
    files.emplace_back("_loop_margins.csv", margins);
  }
  return files;
}

int LinearChannel(const LinearizedModel& model, const std::string& name, const std::string& what,
                  const std::string& file) {
  const std::vector<std::string>& names = what == "input" ? model.lin.inputs : model.lin.outputs;
  const std::string option = "--" + what;
  const std::string choices =
      names.empty() ? fmt::format("a model with an {}", what) : "one of: " + fmt::format("{}", fmt::join(names, ", "));
  if (name.empty()) {
    if (names.size() == 1) return 0;
    ThrowAt({file}, "", fmt::format("bode: give {} (the model has {} {}s)", option, names.size(), what), choices,
            "none", what == "input" ? "mark a source 'input: true' in the model (docs/linear.md)" : "");
  }
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end())
    ThrowAt({file}, "", fmt::format("bode: {} '{}' is not an {} of the model", option, name, what), choices, name,
            what == "input" ? "inputs are the sources marked 'input: true'" : "outputs are the model's 'outputs:'");
  return static_cast<int>(it - names.begin());
}

std::vector<BodePoint> BodeOf(const LinearizedModel& model, int in, int out, double w0, double w1, int points,
                              std::pair<double, double>* range) {
  if (w0 == 0 || w1 == 0) {
    double d0 = 0, d1 = 0;
    DefaultFrequencyRange(model.lin, &d0, &d1);
    if (w0 == 0) w0 = d0;
    if (w1 == 0) w1 = d1;
  }
  if (range) *range = {w0, w1};
  return Bode(model.lin, in, out, w0, w1, points);
}

std::vector<BodePoint> LoopBodeOf(const LinearizedModel& model, double w0, double w1, int points,
                                  std::pair<double, double>* range) {
  if (!model.loop) throw Error("bode: no loop opened (OperatingPointOptions::loop_at)");
  // By default the decades of the open and closed loops' poles, as for the crossovers.
  if (w0 == 0 || w1 == 0) {
    double d0 = 0, d1 = 0, c0 = 0, c1 = 0;
    DefaultFrequencyRange(model.loop->open, &d0, &d1);
    DefaultFrequencyRange(model.lin, &c0, &c1);
    if (w0 == 0) w0 = std::min(d0, c0);
    if (w1 == 0) w1 = std::max(d1, c1);
  }
  if (range) *range = {w0, w1};
  return Bode(model.loop->open, 0, 0, w0, w1, points);
}

std::string BodeCsv(const std::vector<BodePoint>& points) {
  std::string csv = "omega,magnitude_db,phase_deg\n";
  for (const auto& p : points) csv += fmt::format("{},{},{}\n", p.w, p.magnitude_db, p.phase_deg);
  return csv;
}

std::string BodeCsv(const LinearizedModel& model, int in, int out, double w0, double w1, int points,
                    std::pair<double, double>* range) {
  return BodeCsv(BodeOf(model, in, out, w0, w1, points, range));
}

}  // namespace paynter
