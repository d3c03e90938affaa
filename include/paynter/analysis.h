// paynter/analysis.h — the analyses of a model file that `paynter compare`,
// `linearize` and `bode` print, as library functions (the command line and the
// Python module both call them, so they give the same numbers and texts):
//
//   RunOptions o;  o.file = "examples/B2_slider_crank_hyperstatic.yaml";  o.t_end = 1;
//   MethodComparison c = CompareMethods(o);           // every constraint method
//   std::cout << ComparisonMarkdown(c);
//
//   OperatingPointOptions op;  op.file = "examples/dc_motor_load.yaml";  op.steady = true;
//   LinearizedModel lm = LinearizeModel(op);          // A, B, C, D at a steady state
//   std::cout << LinearizationText(lm);
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "paynter/linear.h"
#include "paynter/run.h"

namespace paynter {

// ---- compare: every constraint method on one model -------------------------

// One method's run of a comparison: its solution and report, or why it did not run.
struct MethodRun {
  ConstraintMethod method = ConstraintMethod::kAuto;
  Solution solution;
  ConstrainedReport report;
  std::string failure;  // the error's first line; empty when the method ran
};

struct MethodComparison {
  // minimal-coordinates, lagrange-multipliers, parasitic, zcp, in that order.
  std::vector<MethodRun> runs;
  // The run the differences are to: minimal coordinates, else the first that ran.
  size_t reference = 0;
  // The model's outputs, "t" first (the energy accounting's columns apart).
  std::vector<std::string> outputs;
  // True when the runs carry the energy accounting (energy_stored, _delivered,
  // _dissipated): the table then has an energy-balance column.
  bool energy = false;

  // max |stored - stored(0) - delivered + dissipated| over the largest of the
  // three, for run k (which must have run, with energy).
  double EnergyBalance(size_t k) const;
  // The largest |run k - reference| on outputs[c] over the rows both have.
  double MaxDifference(size_t k, size_t c) const;
};

// Simulates options.file by each constraint method with `options` (the
// constraint method replaced; RunOptions::energy set, for the balance column:
// each row is the run of `simulate --constraints METHOD --energy` with these
// options). Throws Error when no method runs, naming minimal coordinates' reason.
MethodComparison CompareMethods(RunOptions options);

// The table `paynter compare` prints (Markdown) and writes to PREFIX.csv.
std::string ComparisonMarkdown(const MethodComparison& comparison);
std::string ComparisonCsv(const MethodComparison& comparison);
// Each method's difference to the reference on `output` over time, as CSV
// (t, then one column per other method that ran, named in *series). Throws
// Error naming the outputs when `output` is not one of them.
std::string DifferenceCsv(const MethodComparison& comparison, const std::string& output,
                          std::vector<std::string>* series);

// ---- linearize and bode: a model at an operating point ---------------------

struct OperatingPointOptions {
  std::string file;
  std::vector<std::pair<std::string, double>> params;  // parameter overrides
  std::vector<std::pair<std::string, double>> states;  // states given (start or operating values)
  std::optional<double> at;  // the state reached at this time, simulated from the start (>= 0)
  bool steady = false;       // a steady state, Newton on f(x, u) = 0 from the start
  // A signal at which to open the loop (docs/linear.md, "Loops"): "" for none.
  std::string loop_at;
};

// The loop opened at a signal, at the closed loop's operating point.
struct LoopAnalysis {
  std::string signal;
  // The loop opened: its one input the signal injected at the cut, its one
  // output the negated signal, so that its transfer function is the loop gain
  // L(s) = -(signal / injected) and the closed loop 1/(1 + L) (negative feedback).
  LinearModel open;
  LoopMargins margins;
};

struct LinearizedModel {
  LinearModel lin;
  std::string how;  // how the operating point was found, in words
  std::optional<LoopAnalysis> loop;  // when OperatingPointOptions::loop_at names a signal
};

// Loads options.file with its inputs (sources marked `input: true`), finds the
// operating point (the initial state, the state at `at`, or a steady state;
// a mechanism's state moved onto its constraints with the given states held)
// and linearizes there. Throws Error (located at the file) for bad options.
// With options.loop_at, also opens the loop at that signal (OpenLoopAt) and
// linearizes the loop opened at the same point, with its margins: `lin` is
// then the closed loop (its eigenvalues the closed-loop poles). Throws Error
// when the signal is no signal, or the loop opened there is not a loop (what
// the signal feeds does not act back on it).
LinearizedModel LinearizeModel(const OperatingPointOptions& options);

// What `paynter linearize` prints: the operating point, the states, inputs and
// outputs, A, B, C, D and the eigenvalues of A with damping and frequency.
std::string LinearizationText(const LinearizedModel& model);
// The files `paynter linearize -o PREFIX` writes, as (suffix, CSV text):
// _A.csv ... _D.csv, _eigenvalues.csv and, for a mechanism, _V.csv.
std::vector<std::pair<std::string, std::string>> LinearizationCsv(const LinearizedModel& model);

// Index of `name` among the model's inputs ("input") or outputs ("output");
// an empty name picks the only one. Throws Error naming the choices.
int LinearChannel(const LinearizedModel& model, const std::string& name, const std::string& what,
                  const std::string& file);
// The frequency response of input `in` to output `out` over [w0, w1] (0: from
// the eigenvalues), `points` frequencies spaced logarithmically; *range
// receives the range used.
std::vector<BodePoint> BodeOf(const LinearizedModel& model, int in, int out, double w0, double w1, int points,
                              std::pair<double, double>* range = nullptr);
// The frequency response of the loop gain L (model.loop) over [w0, w1] (0:
// from the eigenvalues of the loop opened and of the closed loop).
std::vector<BodePoint> LoopBodeOf(const LinearizedModel& model, double w0, double w1, int points,
                                  std::pair<double, double>* range = nullptr);
// The loop's section of the text of `linearize --loop-at` (and the lines
// `bode --loop-at` prints): the cut, the open-loop poles, the crossovers
// and margins.
std::string LoopText(const LinearizedModel& model);
// Frequency responses as CSV (omega, magnitude_db, phase_deg).
std::string BodeCsv(const std::vector<BodePoint>& points);
// The same as CSV (omega, magnitude_db, phase_deg).
std::string BodeCsv(const LinearizedModel& model, int in, int out, double w0, double w1, int points,
                    std::pair<double, double>* range = nullptr);

}  // namespace paynter
