// `paynter linearize` and `paynter bode`: linear analysis at an operating point
// (paynter/linear.h, docs/linear.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>

#include "commands.h"
#include "paynter/analysis.h"
#include "paynter/paynter.h"

namespace {

using namespace paynter;

struct LinearArgs {
  std::string file, out, input, output, loop_at;
  double at = 0, from = 0, to = 0;
  int points = 200;
  bool steady = false;
  std::vector<std::string> params, states;
};

LinearArgs lin_args, bode_args;
CLI::App *linearize_cmd = nullptr, *bode_cmd = nullptr;

// The operating point's options from the command line's.
OperatingPointOptions PointOptions(const LinearArgs& a, bool at_given) {
  OperatingPointOptions o;
  o.file = a.file;
  o.params = ParseParameterOverrides(a.params, a.file);
  o.states = ParseParameterOverrides(a.states, a.file, "--state");
  if (at_given) o.at = a.at;
  o.steady = a.steady;
  o.loop_at = a.loop_at;
  return o;
}

int Linearize(const LinearArgs& a) {
  const LinearizedModel r = LinearizeModel(PointOptions(a, linearize_cmd->get_option("--at")->count() > 0));
  std::cout << LinearizationText(r);
  if (!a.out.empty())
    for (const auto& [suffix, text] : LinearizationCsv(r)) {
      const std::string what = suffix.substr(1, suffix.size() - 5);  // "_A.csv": A
      WriteFileAtomically(a.out + suffix, text, what.size() == 1 ? "matrix " + what : what);
    }
  return 0;
}

// `bode --loop-at`: the loop gain, its crossovers marked.
int LoopBode(const LinearArgs& a, const LinearizedModel& r, bool csv_only) {
  namespace fs = std::filesystem;
  std::pair<double, double> range;
  const auto points = LoopBodeOf(r, a.from, a.to, a.points, &range);
  const std::string csv_path = csv_only ? a.out : fs::path(a.out).replace_extension(".csv").string();
  WriteFileAtomically(csv_path, BodeCsv(points), "frequency response");
  if (!csv_only) {
    BodeMarks marks;
    for (const auto& c : r.loop->margins.gain_crossovers)
      if (c.w >= range.first && c.w <= range.second) marks.gain_crossovers.emplace_back(c.w, c.margin);
    for (const auto& c : r.loop->margins.phase_crossovers)
      if (c.w >= range.first && c.w <= range.second) marks.phase_crossovers.emplace_back(c.w, c.margin);
    double lo = 0, hi = 0;
    for (size_t i = 0; i < points.size(); ++i) {
      lo = i ? std::min(lo, points[i].phase_deg) : points[i].phase_deg;
      hi = i ? std::max(hi, points[i].phase_deg) : points[i].phase_deg;
    }
    marks.phase_lines.clear();
    for (double ph = -180 + 360 * std::ceil((lo + 180) / 360); ph <= hi; ph += 360) marks.phase_lines.push_back(ph);
    PlotBode(csv_path, a.out, fmt::format("loop gain at {}", r.loop->signal), &marks);
  }
  std::cout << fmt::format("loop gain at {} at {} ({} points, {:g} to {:g} rad/s): {}{}\n", r.loop->signal, r.how,
                           points.size(), range.first, range.second, csv_path, csv_only ? "" : ", " + a.out);
  std::cout << LoopText(r);
  return 0;
}

int Bode(const LinearArgs& a) {
  namespace fs = std::filesystem;
  const std::string ext = fs::path(a.out).extension().string();
  const bool csv_only = ext == ".csv";
  if (!csv_only && ext != ".png" && ext != ".svg" && ext != ".pdf")
    ThrowAt({a.out}, "", "bode: unknown output format", "a file name ending in .csv, .png, .svg or .pdf",
            ext.empty() ? "no extension" : ext);
  if (!a.loop_at.empty() && (!a.input.empty() || !a.output.empty()))
    ThrowAt({a.file}, "", "bode: --loop-at excludes --input and --output",
            "--loop-at SIGNAL (the loop gain there) or --input/--output (a response of the closed loop)",
            "--loop-at with " + std::string(a.input.empty() ? "--output" : "--input"));
  const LinearizedModel r = LinearizeModel(PointOptions(a, bode_cmd->get_option("--at")->count() > 0));
  if (r.loop) return LoopBode(a, r, csv_only);
  const int in = LinearChannel(r, a.input, "input", a.file);
  const int out = LinearChannel(r, a.output, "output", a.file);
  std::pair<double, double> range;
  const std::string csv = BodeCsv(r, in, out, a.from, a.to, a.points, &range);
  const size_t points = static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')) - 1;
  const std::string csv_path = csv_only ? a.out : fs::path(a.out).replace_extension(".csv").string();
  WriteFileAtomically(csv_path, csv, "frequency response");
  if (!csv_only) PlotBode(csv_path, a.out, fmt::format("{} -> {}", r.lin.inputs[in], r.lin.outputs[out]));
  std::cout << fmt::format("frequency response {} -> {} at {} ({} points, {:g} to {:g} rad/s): {}{}\n",
                           r.lin.inputs[in], r.lin.outputs[out], r.how, points, range.first, range.second, csv_path,
                           csv_only ? "" : ", " + a.out);
  return 0;
}

void Common(CLI::App* c, LinearArgs* a) {
  c->add_option("FILE", a->file, "model file (YAML)")->required();
  c->add_option("--at", a->at, "linearize at the state reached at time T (simulated from the initial state)");
  c->add_flag("--steady", a->steady, "linearize at a steady state (Newton on f(x, u) = 0 from the initial state)");
  c->add_option("--state", a->states, "start (or operating point) value of a state: NAME=VALUE (repeatable)");
  c->add_option("--param", a->params, "override a parameter: NAME=VALUE (repeatable)");
  c->add_option("--loop-at", a->loop_at,
                "open the loop at this signal (a controller's input ctl.u, a block's output): the loop gain, "
                "its margins and the closed-loop poles");
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
