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
  options.energy = true;
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
    const bool parasitic = r.method == ConstraintMethod::kParasitic;
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
    const bool parasitic = r.method == ConstraintMethod::kParasitic;
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
  const Model model = WithInputs(loaded, &inputs, &input_params);
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
  s += "eigenvalues of A:\n";
  s += fmt::format("  {:>14} {:>14} {:>14} {:>18}\n", "real", "imag", "damping ratio", "natural freq (rad/s)");
  for (const auto& md : Modes(lin.A))
    s += fmt::format("  {:>14} {:>14} {:>14} {:>18}\n", Num(md.lambda.real()), Num(md.lambda.imag()),
                     std::isnan(md.zeta) ? std::string("-") : Num(md.zeta), Num(md.wn));
  return s;
}

std::vector<std::pair<std::string, std::string>> LinearizationCsv(const LinearizedModel& r) {
  const LinearModel& lin = r.lin;
  std::string modes = "re,im,damping_ratio,natural_frequency_rad_s\n";
  for (const auto& md : Modes(lin.A))
    modes += fmt::format("{},{},{},{}\n", md.lambda.real(), md.lambda.imag(), md.zeta, md.wn);
  std::vector<std::pair<std::string, std::string>> files = {
      {"_A.csv", MatrixCsv(lin.A, lin.states, lin.states)},   {"_B.csv", MatrixCsv(lin.B, lin.states, lin.inputs)},
      {"_C.csv", MatrixCsv(lin.C, lin.outputs, lin.states)},  {"_D.csv", MatrixCsv(lin.D, lin.outputs, lin.inputs)},
      {"_eigenvalues.csv", modes}};
  if (!lin.dependent.empty())  // a mechanism: all states' deviations from the independent ones
    files.emplace_back("_V.csv", MatrixCsv(lin.V, lin.all_states, lin.states));
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

std::string BodeCsv(const LinearizedModel& model, int in, int out, double w0, double w1, int points,
                    std::pair<double, double>* range) {
  std::string csv = "omega,magnitude_db,phase_deg\n";
  for (const auto& p : BodeOf(model, in, out, w0, w1, points, range))
    csv += fmt::format("{},{},{}\n", p.w, p.magnitude_db, p.phase_deg);
  return csv;
}

}  // namespace paynter
