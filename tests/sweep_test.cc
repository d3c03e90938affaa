// Parameter sweeps (paynter/sweep.h, paynter sweep): the same numbers as single
// runs, failures recorded, the same bytes on any number of threads or MPI
// ranks, HDF5 read back with h5py, and bad definitions refused.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "paynter/sweep.h"
#include "test_util.h"
#include "test_paths.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;
using testing::SourcePath;

using Result = testing::CommandResult;
Result Shell(const std::string& cmd) { return testing::RunCommand(cmd); }

Result Cli(const std::string& args) { return Shell(std::string(PAYNTER_EXE) + " " + args); }

fs::path TempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("paynter_sweep_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

// The records of a CSV text (a quoted field may hold newlines).
std::vector<std::string> Records(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : text) {
    if (c == '"') quoted = !quoted;
    if (c == '\n' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// The fields of a CSV record (quotes kept; "" inside quotes is two quotes).
std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

const std::string kB1 = SourcePath("examples/B1_pendulum.yaml");

// The data rows of run k of a long-format sweep CSV, without the run column.
std::vector<std::string> RunRows(const std::string& csv, int k) {
  std::vector<std::string> rows;
  const std::string prefix = std::to_string(k) + ",";
  for (const auto& line : Lines(csv))
    if (line.rfind(prefix, 0) == 0) rows.push_back(line.substr(prefix.size()));
  return rows;
}

TEST(Sweep, DampingOfB1EqualsSingleSimulateRunsBitForBit) {
  const fs::path dir = TempDir("b1");
  const std::string out = (dir / "b1.csv").string();
  auto r = Cli("sweep " + kB1 + " --t-end 1 --param B=0:20:5 --threads 2 -o " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("compiled once"), std::string::npos) << r.out;
  const std::string data = testing::ReadFileBytes(out);
  const auto summary = Records(testing::ReadFileBytes(dir / "b1.summary.csv"));
  ASSERT_EQ(summary.size(), 6u);
  const double values[] = {0, 5, 10, 15, 20};
  for (int k = 0; k < 5; ++k) {
    SCOPED_TRACE(k);
    const std::string single = (dir / ("b" + std::to_string(k) + ".csv")).string();
    r = Cli("simulate " + kB1 + " --t-end 1 --param B=" + std::to_string(values[k]) + " -o " + single);
    ASSERT_EQ(r.code, 0) << r.out;
    auto expected = Lines(testing::ReadFileBytes(single));
    expected.erase(expected.begin());  // header
    // Both write each number in the shortest form that reads back as the
    // same double: equal text is equal bits.
    EXPECT_EQ(RunRows(data, k), expected);
    // The summary: the swept value, ok, and the final row's values.
    const auto f = Fields(summary[k + 1]);
    EXPECT_EQ(std::stod(f[1]), values[k]);
    EXPECT_EQ(f[2], "1");
    const auto last = Fields(expected.back());
    EXPECT_EQ(f[4], last[0]);  // t_final
    EXPECT_EQ(f[11], last[1]);  // final_gamma
  }
  // The damping changes the motion (the runs are not one run five times).
  EXPECT_NE(RunRows(data, 0).back(), RunRows(data, 4).back());
}

TEST(Sweep, FailedRunsAreRecordedAndTheOthersComplete) {
  const fs::path dir = TempDir("fail");
  // M = -2 makes the inertance about the pivot negative: those runs fail in
  // the model's check, as simulate --param M=-2 does; M is a parameter the
  // build computes JA from, so each run is prepared on its own.
  const std::string out = (dir / "f.csv").string();
  auto r = Cli("sweep " + kB1 + " --t-end 1 --param M=-2:2:3 --param B=0:10:2 -o " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("6 runs, 2 failed"), std::string::npos) << r.out;
  const std::string summary = testing::ReadFileBytes(dir / "f.summary.csv");
  const auto lines = Records(summary);
  // run,M,B,ok,error,...: the grid's last range varies fastest.
  EXPECT_EQ(lines[0].rfind("run,M,B,ok,error,t_final,rows,steps", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("0,-2,0,0,\"", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("1,-2,10,0,\"", 0), 0u) << lines[2];
  EXPECT_NE(summary.find("is the inertance of element 'bar'"), std::string::npos) << summary;
  const std::string single = (dir / "s.csv").string();
  r = Cli("simulate " + kB1 + " --t-end 1 --param M=-2 --param B=0 -o " + single);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("is the inertance of element 'bar'"), std::string::npos) << r.out;
  const std::string data = testing::ReadFileBytes(out);
  EXPECT_TRUE(RunRows(data, 0).empty());
  for (int k = 2; k < 6; ++k) {
    EXPECT_EQ(RunRows(data, k).size(), 1001u) << k;
    EXPECT_EQ(Fields(lines[k + 1])[3], "1") << lines[k + 1];
  }
  // M = 2 against simulate (a run prepared on its own is simulate's run).
  r = Cli("simulate " + kB1 + " --t-end 1 --param M=2 --param B=10 -o " + single);
  ASSERT_EQ(r.code, 0) << r.out;
  auto expected = Lines(testing::ReadFileBytes(single));
  expected.erase(expected.begin());
  EXPECT_EQ(RunRows(data, 5), expected);

  // A step budget that the weakly damped runs need more than: those fail with
  // the solver's error, the others complete.
  r = Cli("sweep " + kB1 + " --t-end 1 --param B=0:20:5 --max-steps 45 -o " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto budget = Records(testing::ReadFileBytes(dir / "f.summary.csv"));
  ASSERT_EQ(budget.size(), 6u);
  int failed = 0;
  for (int k = 1; k <= 5; ++k) {
    const auto f = Fields(budget[k]);
    ASSERT_GT(f.size(), 7u) << budget[k];  // run,B,ok,error,t_final,rows,steps
    const long steps = f[2] == "1" ? std::stol(f[6]) : -1;
    if (f[2] == "1") EXPECT_LE(steps, 45) << budget[k];
    else ++failed;
  }
  EXPECT_GT(failed, 0);
  EXPECT_LT(failed, 5);
  EXPECT_NE(testing::ReadFileBytes(dir / "f.summary.csv").find("step"), std::string::npos);

  // A mass made negative through a parameter that is a slot: the same
  // error as simulate (the model's check), not a run with a negative mass.
  const std::string msd = SourcePath("examples/mass_spring_damper.yaml");
  r = Cli("sweep " + msd + " --t-end 1 --param m=-1:1:3 -o " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto m = Records(testing::ReadFileBytes(dir / "f.summary.csv"));
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(Fields(m[1])[2], "0");
  EXPECT_EQ(Fields(m[2])[2], "0");
  EXPECT_EQ(Fields(m[3])[2], "1");
  EXPECT_NE(m[1].find("inertance"), std::string::npos) << m[1];
}

TEST(Sweep, OneAndTwoThreadsWriteTheSameBytes) {
  const fs::path dir = TempDir("threads");
  for (const char* ext : {".h5", ".csv"}) {
    SCOPED_TRACE(ext);
    const std::string a = (dir / (std::string("a") + ext)).string(), b = (dir / (std::string("b") + ext)).string();
    const std::string args = "sweep " + kB1 + " --t-end 1 --param B=0:20:7 --param M=-1:2:4 ";
    auto r = Cli(args + "--threads 1 -o " + a);
    ASSERT_EQ(r.code, 0) << r.out;
    // Later, so that a time stamp in the file would show.
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    r = Cli(args + "--threads 2 -o " + b);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(Shell("cmp " + a + " " + b).code, 0);
    EXPECT_GT(fs::file_size(a), 10000u);
  }
  // No temporary is left beside the outputs.
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
}

TEST(Sweep, MpiRanksWriteTheSameBytesAsOneProcess) {
  if (!MpiSession::Built()) GTEST_SKIP() << "this build has no MPI (PAYNTER_MPI off)";
  if (Shell("command -v mpirun").code != 0) GTEST_SKIP() << "mpirun is not installed (openmpi-bin)";
  const fs::path dir = TempDir("mpi");
  const std::string one = (dir / "one.h5").string(), two = (dir / "two.h5").string();
  const std::string args = " sweep " + kB1 + " --t-end 1 --param B=0:20:5 --param M=-1:2:4 --threads 1 -o ";
  auto r = Cli(args + one);
  ASSERT_EQ(r.code, 0) << r.out;
  // CI runs as root: OpenMPI refuses that unless told. Under the sanitizers
  // (scripts/sanitize.sh) the ranks still check every access, but not leaks:
  // OpenMPI's components keep allocations past their unloading, in frames
  // that no suppression can name; the single-process runs above check the
  // sweep's own code for leaks.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string mpirun = "ASAN_OPTIONS=" + std::string(asan ? asan : "") +
                             ":detect_leaks=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                             "mpirun --oversubscribe -np 2 ";
  r = Shell(mpirun + std::string(PAYNTER_EXE) + args + two);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("1 thread x 2 ranks"), std::string::npos) << r.out;
  EXPECT_EQ(Shell("cmp " + one + " " + two).code, 0);
  // Two threads in each of two ranks: the same bytes again.
  const std::string four = (dir / "four.h5").string();
  r = Shell(mpirun + std::string(PAYNTER_EXE) + " sweep " + kB1 +
            " --t-end 1 --param B=0:20:5 --param M=-1:2:4 --threads 2 -o " + four);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(Shell("cmp " + one + " " + four).code, 0);
}

TEST(Sweep, Hdf5ReadsBackWithH5pyAndPandas) {
  if (!HaveHdf5()) GTEST_SKIP() << "this build has no HDF5 (PAYNTER_HDF5 off)";
  const fs::path dir = TempDir("h5");
  const std::string h5 = (dir / "b1.h5").string(), csv = (dir / "b1.csv").string();
  const std::string args = " " + kB1 + " --t-end 1 --param B=0:20:3 --param M=-2:2:3 -o ";
  auto r = Cli("sweep" + args + h5);
  ASSERT_EQ(r.code, 0) << r.out;
  r = Cli("sweep" + args + csv);
  ASSERT_EQ(r.code, 0) << r.out;
  // Debian's python (with python3-h5py), not another python3 on PATH.
  r = Shell("/usr/bin/python3 " + SourcePath("tests/sweep_h5_check.py") + " " + h5 + " " + csv + " " +
            (dir / "b1.summary.csv").string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("h5 matches csv: 9 runs, 3 failed"), std::string::npos) << r.out;
}

// HDF5 and MPI live in libpaynter_sweep_io.so (src/sweep/io_module.h): a
// simulation never loads them, and a sweep that needs the module and cannot
// load it says so and writes nothing.
TEST(Sweep, Hdf5AndMpiAreLoadedOnlyByASweepThatNeedsThem) {
  const fs::path dir = TempDir("module");
  const std::string csv = (dir / "b1.csv").string();
  auto r = Shell("LD_DEBUG=files " + std::string(PAYNTER_EXE) + " simulate " + kB1 + " --t-end 0.1 -o " + csv);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("libc.so"), std::string::npos) << "LD_DEBUG printed nothing: " << r.out;
  EXPECT_EQ(r.out.find("libhdf5"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libmpi"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("paynter_sweep_io"), std::string::npos) << r.out;

  const std::string h5 = (dir / "b1.h5").string(), sweep_csv = (dir / "sweep.csv").string();
  const std::string missing = "PAYNTER_SWEEP_IO=" + (dir / "nowhere" / "libpaynter_sweep_io.so").string() + " ";
  r = Shell(missing + std::string(PAYNTER_EXE) + " sweep " + kB1 + " --t-end 0.1 --param B=1:2:2 -o " + h5);
  EXPECT_NE(r.code, 0) << r.out;
  if (HaveHdf5()) {
    EXPECT_NE(r.out.find("libpaynter_sweep_io.so) could not be loaded"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nowhere/libpaynter_sweep_io.so: no such file"), std::string::npos) << r.out;
  }
  EXPECT_FALSE(fs::exists(h5));
  r = Shell(missing + std::string(PAYNTER_EXE) + " sweep " + kB1 + " --t-end 0.1 --param B=1:2:2 -o " + sweep_csv);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(sweep_csv));
}

// ---- the library --------------------------------------------------------------

TEST(SweepDefinition, GridOrderTableAndValues) {
  const fs::path dir = TempDir("grid");
  const fs::path table = dir / "t.csv";
  std::ofstream(table) << "L, g\n1, 9.81\n2,1.62\n";
  RunOptions base;
  base.file = kB1;
  base.params = {{"Izz", 0.1}};
  SweepRange b = ParseSweepRange("B=1:4:2");
  SweepRange m = ParseSweepRange("M=1:100:3");
  m.log = true;
  const SweepDefinition def = MakeSweep(base, {b, m}, table.string());
  EXPECT_EQ(def.names, (std::vector<std::string>{"L", "g", "B", "M"}));
  ASSERT_EQ(def.size(), 12);
  // The table's rows outermost, then B, then M fastest.
  EXPECT_EQ(def.RunValues(0), (std::vector<double>{1, 9.81, 1, 1}));
  EXPECT_EQ(def.RunValues(1)[3], 10.000000000000002);  // exp of the mean of the logs: 10 to rounding
  EXPECT_EQ(def.RunValues(2), (std::vector<double>{1, 9.81, 1, 100}));
  EXPECT_EQ(def.RunValues(3), (std::vector<double>{1, 9.81, 4, 1}));
  EXPECT_EQ(def.RunValues(6), (std::vector<double>{2, 1.62, 1, 1}));
  const RunOptions o = def.OptionsFor(7);
  EXPECT_EQ(o.params, (std::vector<std::pair<std::string, double>>{
                          {"Izz", 0.1}, {"L", 2}, {"g", 1.62}, {"B", 1}, {"M", 10.000000000000002}}));
  EXPECT_EQ(SweepValues(ParseSweepRange("x=0:1:5")), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(SweepValues(ParseSweepRange("x=3:3:1")), (std::vector<double>{3}));
}

// The error's text, or "" when `f` does not throw Error.
template <typename F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SweepDefinition, BadRangesAndTablesAreDiagnosed) {
  for (const char* bad : {"B", "B=1:2", "B=1:2:3:4", "B=x:2:3", "B=1:2:0", "B=1:2:1", "B=1:2:2.5", "=1:2:3",
                          "B=1:inf:3", "2B=1:2:3"}) {
    const std::string e = ErrorOf([&] { ParseSweepRange(bad); });
    EXPECT_NE(e.find("bad --param range"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("expected: NAME=START:STOP:COUNT"), std::string::npos) << e;
  }
  SweepRange r = ParseSweepRange("B=-1:2:3");
  r.log = true;
  EXPECT_NE(ErrorOf([&] { SweepValues(r); }).find("logarithmic"), std::string::npos);

  const fs::path dir = TempDir("tables");
  auto table_error = [&](const std::string& text) {
    std::ofstream(dir / "t.csv") << text;
    return ErrorOf([&] { ReadParameterTable((dir / "t.csv").string()); });
  };
  std::string e = table_error("B,M\n1,2\n3\n");
  EXPECT_NE(e.find("t.csv:3:1: error: row has 1 values for 2 parameters"), std::string::npos) << e;
  e = table_error("B,M\n1,abc\n");
  EXPECT_NE(e.find("t.csv:2:3: error: value of 'M' is not a finite number"), std::string::npos) << e;
  e = table_error("B,1x\n1,2\n");
  EXPECT_NE(e.find("'1x' is not a parameter name"), std::string::npos) << e;
  e = table_error("B,B\n1,2\n");
  EXPECT_NE(e.find("named twice"), std::string::npos) << e;
  e = table_error("B\n");
  EXPECT_NE(e.find("no rows"), std::string::npos) << e;
  e = table_error("");
  EXPECT_NE(e.find("empty"), std::string::npos) << e;
  e = ErrorOf([&] { ReadParameterTable((dir / "absent.csv").string()); });
  EXPECT_NE(e.find("cannot read the parameter table"), std::string::npos) << e;
  // Comments, blank lines, spaces and CRLF are fine.
  std::ofstream(dir / "ok.csv") << "# damping and mass\r\nB, M\r\n\r\n 1 , 2\r\n3,4\n";
  const ParameterTable t = ReadParameterTable((dir / "ok.csv").string());
  EXPECT_EQ(t.rows, (std::vector<std::vector<double>>{{1, 2}, {3, 4}}));

  RunOptions base;
  base.file = kB1;
  base.params = {{"B", 1}};
  e = ErrorOf([&] { MakeSweep(base, {ParseSweepRange("B=0:1:2")}, ""); });
  EXPECT_NE(e.find("parameter 'B' is given twice"), std::string::npos) << e;
  base.params.clear();
  e = ErrorOf([&] { MakeSweep(base, {ParseSweepRange("B=0:1:2"), ParseSweepRange("B=0:1:3")}, ""); });
  EXPECT_NE(e.find("given twice"), std::string::npos) << e;
  e = ErrorOf([&] { MakeSweep(base, {ParseSweepRange("B=0:1:20000"), ParseSweepRange("M=1:2:20000")}, ""); });
  EXPECT_NE(e.find("at most 10^8 runs"), std::string::npos) << e;

  // A parameter the model does not have: before any run, naming the model's.
  base.t_end = 1;
  const SweepDefinition def = MakeSweep(base, {ParseSweepRange("Q=0:1:2")}, "");
  e = ErrorOf([&] { RunSweep(def, SweepSettings{}, nullptr); });
  EXPECT_NE(e.find("the model has no parameter 'Q'"), std::string::npos) << e;
  EXPECT_NE(e.find("L, M, Izz, B, g, JA"), std::string::npos) << e;
  e = ErrorOf([&] { OpenSweepOutput((dir / "x.txt").string(), def); });
  EXPECT_NE(e.find("unknown output format"), std::string::npos) << e;
}

TEST(SweepCli, BadInputFailsWithADiagnosticAndNoFile) {
  const fs::path dir = TempDir("cli");
  const std::string out = (dir / "x.h5").string();
  for (const std::string& args : std::vector<std::string>{
           "--param B=1:2", "--param Q=0:1:3", "--param B=0:1:3 --log B", "--param B=0:1:3 --log M",
        "--params " + (dir / "absent.csv").string(), "--param B=0:1:3 --dt-out 1e-9"}) {
    SCOPED_TRACE(args);
    auto r = Cli("sweep " + kB1 + " --t-end 1 " + args + " -o " + out);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("error:"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out));
  }
  auto r = Cli("sweep " + kB1 + " --t-end 1 --param B=0:1:3 -o " + (dir / "x.json").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("unknown output format"), std::string::npos) << r.out;
  // A table, a fixed value and CI=true (no progress bar, however stderr is).
  std::ofstream(dir / "t.csv") << "B,g\n1,9.81\n2,1.62\n";
  r = Shell("CI=true " + std::string(PAYNTER_EXE) + " sweep " + kB1 + " --t-end 1 --params " +
            (dir / "t.csv").string() + " --param L=2 -o " + (dir / "t_out.csv").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("runs, 0 failed,"), std::string::npos) << r.out;  // the bar's text
  const auto s = Records(testing::ReadFileBytes(dir / "t_out.summary.csv"));
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].rfind("run,B,g,ok", 0), 0u);
  EXPECT_EQ(s[2].rfind("1,2,1.62,1,", 0), 0u) << s[2];
}

// A model with an implicit block (a resistor whose effort law is inverted by
// Newton): threads share the compiled model, each run on a fresh workspace,
// and the rows equal runs prepared one by one.
TEST(SweepLibrary, ImplicitBlockRunsEqualSingleRunsOnAnyThreads) {
  const fs::path dir = TempDir("block");
  const fs::path model = dir / "nonlinear.yaml";
  testing::WriteNonlinearResistorModel(model);
  RunOptions base;
  base.file = model.string();
  base.t_end = 2;
  base.progress = false;
  const SweepDefinition def = MakeSweep(base, {ParseSweepRange("b=0.1:3:9"), ParseSweepRange("V=1:4:2")}, "");
  struct Collect : SweepSink {
    std::vector<SweepRunResult> runs;
    void Begin(const std::vector<std::string>& c) override { EXPECT_EQ(c.size(), 4u); }
    void Run(const SweepRunResult& r) override { runs.push_back(r); }
    void Commit() override {}
  };
  Collect one, two;
  SweepSettings s;
  s.threads = 1;
  RunSweep(def, s, &one);
  s.threads = 2;
  long seen = 0;
  s.progress = [&](long done, long failed, long total) {
    EXPECT_EQ(done, ++seen);
    EXPECT_EQ(total, 18);
    EXPECT_EQ(failed, 0);
  };
  const SweepReport report = RunSweep(def, s, &two);
  EXPECT_EQ(report.threads, 2);
  EXPECT_TRUE(report.compiled_once);
  ASSERT_EQ(one.runs.size(), 18u);
  ASSERT_EQ(two.runs.size(), 18u);
  PreparedModel p = PrepareModel(base);
  ASSERT_GT(NumBlocks(*p.staged().lowered.rhs), 0);
  for (long k = 0; k < 18; ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(one.runs[k].index, k);
    EXPECT_EQ(two.runs[k].index, k);
    ASSERT_TRUE(one.runs[k].ok) << one.runs[k].error;
    EXPECT_EQ(one.runs[k].data, two.runs[k].data);
    EXPECT_EQ(one.runs[k].rhs_evals, two.runs[k].rhs_evals);
    const RunOptions o = def.OptionsFor(k);
    PreparedModel q = PrepareModel(o);
    const Solution single = RunPrepared(q, q.compiled(), o).solution;
    std::vector<double> flat;
    for (const auto& row : single.rows) flat.insert(flat.end(), row.begin(), row.end());
    EXPECT_EQ(one.runs[k].data, flat);
  }
  // A run's result survives its trip through bytes (MPI).
  std::string bytes;
  AppendSweepRunResult(one.runs[5], &bytes);
  const SweepRunResult back = ReadSweepRunResult(bytes);
  EXPECT_EQ(back.data, one.runs[5].data);
  EXPECT_EQ(back.index, 5);
  EXPECT_EQ(back.steps, one.runs[5].steps);
  EXPECT_THROW(ReadSweepRunResult(bytes.substr(0, bytes.size() - 3)), Error);
}

}  // namespace
}  // namespace paynter
