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
};

struct LinearizedModel {
  LinearModel lin;
  std::string how;  // how the operating point was found, in words
};

// Loads options.file with its inputs (sources marked `input: true`), finds the
// operating point (the initial state, the state at `at`, or a steady state;
// a mechanism's state moved onto its constraints with the given states held)
// and linearizes there. Throws Error (located at the file) for bad options.
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
// The same as CSV (omega, magnitude_db, phase_deg).
std::string BodeCsv(const LinearizedModel& model, int in, int out, double w0, double w1, int points,
                    std::pair<double, double>* range = nullptr);

}  // namespace paynter
