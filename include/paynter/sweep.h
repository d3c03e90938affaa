// paynter/sweep.h — many runs of one model with other parameter values.
//
//   RunOptions base;  base.file = "examples/B1_pendulum.yaml";  base.t_end = 1;
//   SweepDefinition def = MakeSweep(base, {ParseSweepRange("B=0:20:11")}, "");
//   auto out = OpenSweepOutput("b1.h5", def);
//   SweepReport r = RunSweep(def, SweepSettings{}, out.get());   // every core
//   out->Commit();
//
// A sweep is a list of runs, each a set of parameter values over the base
// options (RunOptions, with the fixed overrides in base.params). RunSweep
// prepares the model once (PrepareModel) when every varied parameter is
// settable by a slot, its compiled model shared by all threads (each run with
// a workspace of its own);
// a run that varies a parameter the build computes numbers from gets its own
// PrepareModel, as `paynter simulate --param` would. Runs are spread over
// threads, and over MPI ranks when the process was started by mpirun; their
// results reach the sink on one process (rank 0) in run order, so that the
// output does not depend on the number of threads or ranks or on scheduling.
// A run that fails is recorded with its error; the others go on.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "paynter/run.h"

namespace paynter {

// NAME=START:STOP:COUNT: COUNT values from START to STOP (both included),
// evenly spaced, or evenly in the logarithm when `log`.
struct SweepRange {
  std::string name;
  double start = 0, stop = 0;
  long count = 0;
  bool log = false;
};

// Parses NAME=START:STOP:COUNT; throws Error (a Diagnostic naming the text).
SweepRange ParseSweepRange(const std::string& text);
// The range's values; throws Error for a count below 1 or a log range that
// does not stay positive.
std::vector<double> SweepValues(const SweepRange& range);

// A CSV table of parameter values: a header of parameter names, then one run
// per row (numbers only). Throws Error naming the file, line and column.
struct ParameterTable {
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;
};
ParameterTable ReadParameterTable(const std::string& path);

// The k-th of a range's values (0 <= k < count), computed without overflow
// (B=1e308:-1e308:3 has 0 in the middle); the ends exactly as written.
double SweepValue(const SweepRange& range, long k);

struct SweepDefinition {
  RunOptions base;                         // the options every run shares, fixed overrides in base.params
  std::vector<std::string> names;          // the varied parameters
  // The runs are not stored (a grid at the 10^8-run cap would take
  // gigabytes): run k is a row of the table crossed with one value of each
  // range, computed when asked for.
  std::vector<std::vector<double>> rows;   // the table's rows (one empty row without a table)
  std::vector<SweepRange> ranges;
  long size() const;
  // Per run, the value of each varied parameter (in the order of `names`).
  std::vector<double> RunValues(long run) const;
  // The run's options: base, with its values after the fixed overrides.
  RunOptions OptionsFor(long run) const;
};

// The runs of a table (one per row; none: one row with no values) crossed
// with the grid of `ranges` (the Cartesian product, the last range varying
// fastest: run = ((row * n1 + i1) * n2 + i2) ...). Throws Error for a
// parameter named twice (between ranges, the table and base.params), a bad
// range, or more than 10^8 runs.
SweepDefinition MakeSweep(const RunOptions& base, const std::vector<SweepRange>& ranges,
                          const std::string& table_path);

// The same with the table given as values (Python's sweep): `table_where`
// names it in errors. A table with no names is no table (one run, crossed
// with the grid); each of its rows holds one value per name.
SweepDefinition MakeSweep(const RunOptions& base, const std::vector<SweepRange>& ranges, ParameterTable table,
                          const std::string& table_where);

// The sweep of `paynter sweep`'s command line: `params` are its --param texts
// (NAME=START:STOP:COUNT ranges, NAME=VALUE fixed values, the latter added to
// base.params), `log` the names of the ranges spaced in the logarithm, `table`
// the --params file ("" for none). Throws Error for a bad text, a --log name
// of no range, and as MakeSweep.
SweepDefinition DefineSweep(RunOptions base, const std::vector<std::string>& params,
                            const std::vector<std::string>& log, const std::string& table);
// The same with the table given as values (as the MakeSweep above).
SweepDefinition DefineSweep(RunOptions base, const std::vector<std::string>& params,
                            const std::vector<std::string>& log, ParameterTable table, const std::string& table_where);

// One run's outcome, as the sinks receive it.
struct SweepRunResult {
  long index = 0;
  bool ok = false;
  std::string error;          // the run's error message when !ok
  long rows = 0;              // rows recorded (a failed run: those before the failure)
  std::vector<double> data;   // rows x columns, row-major; column 0 is t
  long steps = 0, rejected = 0, rhs_evals = 0, jac_evals = 0;  // 0 for a failed run
  bool own_build = false;     // prepared on its own (a parameter the build computes numbers from)
};

// A run's line of the summary (docs/sweeps.md): the figures after the
// parameters' values, final/min/max per output (NaN for a failed run).
struct SweepRunSummary {
  bool ok = false;
  std::string error;
  double t_final = std::numeric_limits<double>::quiet_NaN();  // the last row's t (NaN: no row)
  long rows = 0, steps = 0, rejected = 0, rhs_evals = 0, jac_evals = 0;
  bool own_build = false;
  std::vector<double> final_values, min_values, max_values;  // per output (not t)
};
// `columns`: the number of columns of the run's rows (t, then the outputs).
SweepRunSummary SummarizeSweepRun(const SweepRunResult& r, size_t columns);
// The summary's names after the parameters ("ok", "error", ..., "final_<output>",
// "min_<output>", "max_<output>"), for the columns "t", outputs...
std::vector<std::string> SweepSummaryColumns(const std::vector<std::string>& columns);

// Serialized form (for MPI): the same bytes on every machine of one build.
void AppendSweepRunResult(const SweepRunResult& r, std::string* out);
SweepRunResult ReadSweepRunResult(const std::string& bytes);

// Receives a sweep's results on the process that writes them (rank 0).
class SweepSink {
 public:
  virtual ~SweepSink() = default;
  // Once, before the first run: "t", then the model's outputs.
  virtual void Begin(const std::vector<std::string>& columns) = 0;
  // Every run, in run order.
  virtual void Run(const SweepRunResult& result) = 0;
  // Writes what is left and moves the file into place; throws Error.
  virtual void Commit() = 0;
};

// The output for `path` by its extension: .h5 or .hdf5 (HDF5: see
// docs/sweeps.md for the layout), .csv (PATH and PATH's stem + .summary.csv).
// Throws Error for another extension, or a build without HDF5 asked for one.
std::unique_ptr<SweepSink> OpenSweepOutput(const std::string& path, const SweepDefinition& def);
bool HaveHdf5();

struct SweepSettings {
  int threads = 0;  // 0: the machine's hardware threads
  // Called on the writing process after every run handed to the sink.
  std::function<void(long done, long failed, long total)> progress;
};

struct SweepReport {
  long runs = 0, failed = 0;
  long own_builds = 0;       // runs that needed their own PrepareModel
  bool compiled_once = true; // every run shared one prepared model
  int threads = 1, ranks = 1;
  bool writer = true;        // this process handed the results to the sink (rank 0)
};

// Runs the sweep. The base model is prepared first (its errors, and a varied
// parameter the model does not have, throw Error before any run); then each
// run, in parallel, and every result goes to `sink` in run order on the
// writing process (sink may be null elsewhere). Under MPI (MpiSession), run k
// is done by rank k mod ranks.
SweepReport RunSweep(const SweepDefinition& def, const SweepSettings& settings, SweepSink* sink);

// MPI, initialised only when the process was started by an MPI launcher
// (OpenMPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMI_SIZE for others), so that
// the program runs as it is without one. Finalised by the destructor.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  static bool Active();  // MPI is initialised (by a session)
  static int Rank();     // 0 without MPI
  static int Size();     // 1 without MPI
  static bool Built();   // this build has MPI (PAYNTER_MPI)
  // Ends every rank at once (an error that leaves the others waiting).
  [[noreturn]] static void Abort(int code);
};

// A progress bar on stderr: runs done, failures, time left; drawn only when
// stderr is a terminal and CI is not "true".
class SweepProgressBar {
 public:
  explicit SweepProgressBar(bool enabled);
  void Update(long done, long failed, long total);
  void Finish();
  bool enabled() const { return enabled_; }

 private:
  bool enabled_;
  double start_ = 0, last_ = -1;
  bool drawn_ = false;
};

}  // namespace paynter
