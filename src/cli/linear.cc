// `paynter linearize` and `paynter bode`: linear analysis at an operating point
// (paynter/linear.h, docs/linear.md).
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>

#include "commands.h"
#include "paynter/paynter.h"

namespace {

using namespace paynter;

struct LinearArgs {
  std::string file, out, input, output;
  double at = 0, from = 0, to = 0;
  int points = 200;
  bool steady = false;
  std::vector<std::string> params, states;
};

LinearArgs lin_args, bode_args;
CLI::App *linearize_cmd = nullptr, *bode_cmd = nullptr;

[[noreturn]] void Fail(const std::string& file, const std::string& message, const std::string& expected,
                       const std::string& got, const std::string& hint = "") {
  Diagnostic d;
  d.where.file = file;
  d.message = message;
  d.expected = expected;
  d.got = got;
  d.hint = hint;
  throw Error(std::move(d));
}

// A model with its inputs, equations and operating point.
struct Linearized {
  EquationSystem eqs;
  LinearModel lin;
  std::string how;  // how the operating point was found
};

Linearized Run(const LinearArgs& a, bool at_given) {
  LoadOptions lo;
  for (const auto& [k, v] : ParseParameterOverrides(a.params, a.file)) lo.overrides[k] = v;
  const Model loaded = LoadModel(a.file, lo);
  std::vector<std::string> inputs, input_params;
  const Model model = WithInputs(loaded, &inputs, &input_params);
  const CausalGraph graph = AssignCausality(model);
  RequireNoConflicts(model, graph);
  Linearized r;
  r.eqs = BuildEquations(model, graph);
  std::vector<double> x = r.eqs.initial_state;
  std::vector<std::string> given;
  for (const auto& [name, value] : ParseParameterOverrides(a.states, a.file, "--state")) {
    given.push_back(name);
    const auto it = std::find(r.eqs.state_names.begin(), r.eqs.state_names.end(), name);
    if (it == r.eqs.state_names.end())
      Fail(a.file, fmt::format("--state {}: the model has no state '{}'", name, name),
           "one of: " + fmt::format("{}", fmt::join(r.eqs.state_names, ", ")), name);
    x[it - r.eqs.state_names.begin()] = value;
  }
  if (at_given && a.steady)
    Fail(a.file, "--at and --steady exclude each other", "one way to choose the operating point",
         "--at and --steady");
  double t = 0;
  r.how = "the initial state";
  if (at_given) {
    if (!(a.at >= 0) || !std::isfinite(a.at)) Fail(a.file, "--at needs a time >= 0", "--at T, T >= 0", fmt::format("{}", a.at));
    t = a.at;
    if (t > 0) {
      CodegenOptions cg;
      const CompiledModel cm(r.eqs, cg);
      OdeProblem problem;
      problem.n = cm.num_states();
      problem.state_names = cm.state_names();
      problem.rhs = [&cm](double tt, const double* xx, double* dx) { cm.CalcDerivatives(tt, xx, dx); };
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
  if (HasConstraintManifold(r.eqs)) {
    double moved = 0;
    x = ProjectOntoConstraints(r.eqs, t, x, given, &moved);
    if (moved > 0) r.how += fmt::format(", moved onto the constraints (largest change {:.3g})", moved);
  }
  if (a.steady) {
    x = SteadyState(r.eqs, input_params, 0, x);
    r.how = HasConstraintManifold(r.eqs)
                ? "a steady state (Newton's method on f(x, u) = 0 in the independent coordinates, on the constraints, "
                  "sources at t = 0)"
                : "a steady state (Newton's method on f(x, u) = 0, sources at t = 0)";
  }
  r.lin = Linearize(r.eqs, inputs, input_params, t, x);
  return r;
}

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

int Linearize(const LinearArgs& a) {
  const Linearized r = Run(a, linearize_cmd->get_option("--at")->count() > 0);
  const LinearModel& lin = r.lin;
  std::cout << fmt::format("operating point: {}, t = {}\n", r.how, Num(lin.t));
  if (lin.dependent.empty()) {
    for (size_t i = 0; i < lin.states.size(); ++i)
      std::cout << fmt::format("  {} = {}   (d/dt = {})\n", lin.states[i], Num(lin.x[i]), Num(lin.dx[i]));
    std::cout << fmt::format("states ({}): {}\n", lin.states.size(), fmt::join(lin.states, ", "));
  } else {
    for (size_t i = 0; i < lin.all_states.size(); ++i)
      std::cout << fmt::format("  {} = {}\n", lin.all_states[i], Num(lin.all_x[i]));
    std::cout << fmt::format("states ({}, independent coordinates on the constraints): {}\n", lin.states.size(),
                             fmt::join(lin.states, ", "))
              << "  d/dt:" << [&] {
                   std::string d;
                   for (size_t i = 0; i < lin.dx.size(); ++i) d += fmt::format(" {} {}", lin.states[i], Num(lin.dx[i]));
                   return d;
                 }() << "\n"
              << fmt::format("dependent states ({}, following from the constraints, rank {}): {}\n",
                             lin.dependent.size(), lin.constraint_rank, fmt::join(lin.dependent, ", "));
  }
  std::cout << fmt::format("inputs ({}): {}\n", lin.inputs.size(),
                           lin.inputs.empty() ? "none (mark a source 'input: true')" : fmt::format("{}", fmt::join(lin.inputs, ", ")));
  std::cout << fmt::format("outputs ({}): {}\n\n", lin.outputs.size(), fmt::join(lin.outputs, ", "));
  std::cout << MatrixText("A", lin.A, lin.states, lin.states) << "\n"
            << MatrixText("B", lin.B, lin.states, lin.inputs) << "\n"
            << MatrixText("C", lin.C, lin.outputs, lin.states) << "\n"
            << MatrixText("D", lin.D, lin.outputs, lin.inputs) << "\n";
  const auto modes = Modes(lin.A);
  std::string modes_csv = "re,im,damping_ratio,natural_frequency_rad_s\n";
  std::cout << "eigenvalues of A:\n"
            << fmt::format("  {:>14} {:>14} {:>14} {:>18}\n", "real", "imag", "damping ratio", "natural freq (rad/s)");
  for (const auto& md : modes) {
    std::cout << fmt::format("  {:>14} {:>14} {:>14} {:>18}\n", Num(md.lambda.real()), Num(md.lambda.imag()),
                             std::isnan(md.zeta) ? std::string("-") : Num(md.zeta), Num(md.wn));
    modes_csv += fmt::format("{},{},{},{}\n", md.lambda.real(), md.lambda.imag(), md.zeta, md.wn);
  }
  if (!a.out.empty()) {
    WriteFileAtomically(a.out + "_A.csv", MatrixCsv(lin.A, lin.states, lin.states), "matrix A");
    WriteFileAtomically(a.out + "_B.csv", MatrixCsv(lin.B, lin.states, lin.inputs), "matrix B");
    WriteFileAtomically(a.out + "_C.csv", MatrixCsv(lin.C, lin.outputs, lin.states), "matrix C");
    WriteFileAtomically(a.out + "_D.csv", MatrixCsv(lin.D, lin.outputs, lin.inputs), "matrix D");
    WriteFileAtomically(a.out + "_eigenvalues.csv", modes_csv, "eigenvalues");
    if (!lin.dependent.empty())  // a mechanism: all states' deviations from the independent ones
      WriteFileAtomically(a.out + "_V.csv", MatrixCsv(lin.V, lin.all_states, lin.states), "matrix V");
  }
  return 0;
}

int IndexOf(const std::vector<std::string>& names, const std::string& name, const std::string& what,
            const std::string& option, const std::string& file) {
  if (name.empty()) {
    if (names.size() == 1) return 0;
    Fail(file, fmt::format("bode: give {} (the model has {} {}s)", option, names.size(), what),
         names.empty() ? fmt::format("a model with an {}", what) : "one of: " + fmt::format("{}", fmt::join(names, ", ")),
         "none", what == "input" ? "mark a source 'input: true' in the model (docs/linear.md)" : "");
  }
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end())
    Fail(file, fmt::format("bode: {} '{}' is not an {} of the model", option, name, what),
         names.empty() ? fmt::format("a model with an {}", what) : "one of: " + fmt::format("{}", fmt::join(names, ", ")),
         name, what == "input" ? "inputs are the sources marked 'input: true'" : "outputs are the model's 'outputs:'");
  return static_cast<int>(it - names.begin());
}

int Bode(const LinearArgs& a) {
  namespace fs = std::filesystem;
  const std::string ext = fs::path(a.out).extension().string();
  const bool csv_only = ext == ".csv";
  if (!csv_only && ext != ".png" && ext != ".svg" && ext != ".pdf")
    Fail(a.out, "bode: unknown output format", "a file name ending in .csv, .png, .svg or .pdf",
         ext.empty() ? "no extension" : ext);
  const Linearized r = Run(a, bode_cmd->get_option("--at")->count() > 0);
  const int in = IndexOf(r.lin.inputs, a.input, "input", "--input", a.file);
  const int out = IndexOf(r.lin.outputs, a.output, "output", "--output", a.file);
  double w0 = a.from, w1 = a.to;
  if (w0 == 0 || w1 == 0) {
    double d0 = 0, d1 = 0;
    DefaultFrequencyRange(r.lin, &d0, &d1);
    if (w0 == 0) w0 = d0;
    if (w1 == 0) w1 = d1;
  }
  const auto points = Bode(r.lin, in, out, w0, w1, a.points);
  std::string csv = "omega,magnitude_db,phase_deg\n";
  for (const auto& p : points) csv += fmt::format("{},{},{}\n", p.w, p.magnitude_db, p.phase_deg);
  const std::string csv_path = csv_only ? a.out : fs::path(a.out).replace_extension(".csv").string();
  WriteFileAtomically(csv_path, csv, "frequency response");
  if (!csv_only) PlotBode(csv_path, a.out, fmt::format("{} -> {}", r.lin.inputs[in], r.lin.outputs[out]));
  std::cout << fmt::format("frequency response {} -> {} at {} ({} points, {:g} to {:g} rad/s): {}{}\n",
                           r.lin.inputs[in], r.lin.outputs[out], r.how, points.size(), w0, w1, csv_path,
                           csv_only ? "" : ", " + a.out);
  return 0;
}

void Common(CLI::App* c, LinearArgs* a) {
  c->add_option("FILE", a->file, "model file (YAML)")->required();
  c->add_option("--at", a->at, "linearize at the state reached at time T (simulated from the initial state)");
  c->add_flag("--steady", a->steady, "linearize at a steady state (Newton on f(x, u) = 0 from the initial state)");
  c->add_option("--state", a->states, "start (or operating point) value of a state: NAME=VALUE (repeatable)");
  c->add_option("--param", a->params, "override a parameter: NAME=VALUE (repeatable)");
}

}  // namespace

void RegisterLinearCommands(CLI::App* app) {
  linearize_cmd = app->add_subcommand("linearize", "A, B, C, D at an operating point, eigenvalues, damping");
  if (CommandWanted("linearize")) {
    Common(linearize_cmd, &lin_args);
    linearize_cmd->add_option("-o,--output", lin_args.out, "write PREFIX_A.csv ... PREFIX_D.csv, PREFIX_eigenvalues.csv");
  }
  bode_cmd = app->add_subcommand("bode", "frequency response of one input to one output (CSV, plot)");
  if (!CommandWanted("bode")) return;
  Common(bode_cmd, &bode_args);
  bode_cmd->add_option("--input", bode_args.input, "the input (a source marked 'input: true')");
  bode_cmd->add_option("--output", bode_args.output, "the output (one of the model's outputs)");
  bode_cmd->add_option("--from", bode_args.from, "lowest angular frequency, rad/s (default: from the eigenvalues)");
  bode_cmd->add_option("--to", bode_args.to, "highest angular frequency, rad/s (default: from the eigenvalues)");
  bode_cmd->add_option("--points", bode_args.points, "number of frequencies (logarithmic)")->default_val(200);
  bode_cmd->add_option("-o", bode_args.out, "bode.csv, or bode.png|svg|pdf (the CSV is written beside it)")->required();
}

std::optional<int> RunLinearCommands() {
  if (linearize_cmd && linearize_cmd->parsed()) return Linearize(lin_args);
  if (bode_cmd && bode_cmd->parsed()) return Bode(bode_args);
  return std::nullopt;
}

std::string LinearCommandFile() {
  if (linearize_cmd && linearize_cmd->parsed()) return lin_args.file;
  if (bode_cmd && bode_cmd->parsed()) return bode_args.file;
  return "";
}
