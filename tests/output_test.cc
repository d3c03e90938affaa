// Output rows: the CSV numbers read back as the very doubles computed, the
// streamed output equals the in-memory one byte for byte, a failed run leaves
// no file, and a run keeps no row in memory however many it writes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "test_util.h"
#include "test_paths.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

fs::path TempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("paynter_output_test_" + std::to_string(::getpid()) + "_" + name);
  fs::create_directories(d);
  return d;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The rows of a CSV (the header skipped), each field read by strtod, which
// must consume it whole.
std::vector<std::vector<double>> ParseCsv(const std::string& text, std::string* header) {
  std::vector<std::vector<double>> rows;
  std::istringstream in(text);
  std::string line;
  std::getline(in, *header);
  while (std::getline(in, line)) {
    std::vector<double> row;
    size_t start = 0;
    for (;;) {
      const size_t comma = line.find(',', start);
      const std::string field = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      char* end = nullptr;
      row.push_back(std::strtod(field.c_str(), &end));
      EXPECT_EQ(*end, '\0') << "field '" << field << "' of line '" << line << "'";
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

uint64_t Bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

using testing::RunPaynter;

TEST(CsvWriter, EveryNumberReadsBackAsTheSameDouble) {
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                0.1,
                                0.1 + 0.2,
                                1.0 / 3,
                                -2.0 / 3,
                                1e15,
                                1e16,
                                123456789012345678.0,
                                9007199254740993.0,
                                1e-300,
                                -1e300,
                                DBL_MAX,
                                -DBL_MAX,
                                DBL_MIN,
                                std::numeric_limits<double>::denorm_min(),
                                std::nextafter(1.0, 2.0),
                                std::nextafter(1.0, 0.0),
                                5e-324 * 12345,
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity()};
  // And random bit patterns: every finite double is a candidate.
  std::mt19937_64 rng(7);
  while (values.size() < 3000) {
    const uint64_t b = rng();
    double v;
    std::memcpy(&v, &b, sizeof v);
    if (std::isfinite(v)) values.push_back(v);
  }
  const int columns = 3;
  while (values.size() % columns) values.push_back(0.5);
  const fs::path dir = TempDir("roundtrip");
  const fs::path csv = dir / "numbers.csv";
  {
    CsvWriter w(csv.string());
    w.Begin({"a", "b", "c"});
    for (size_t i = 0; i < values.size(); i += columns) w.Row(&values[i]);
    w.Commit();
  }
  std::string header;
  const auto rows = ParseCsv(ReadAll(csv), &header);
  EXPECT_EQ(header, "a,b,c");
  ASSERT_EQ(rows.size(), values.size() / columns);
  for (size_t r = 0; r < rows.size(); ++r) {
    ASSERT_EQ(rows[r].size(), static_cast<size_t>(columns)) << "row " << r;
    for (int c = 0; c < columns; ++c)
      EXPECT_EQ(Bits(rows[r][c]), Bits(values[r * columns + c])) << "row " << r << " value " << values[r * columns + c];
  }
  fs::remove_all(dir);
}

TEST(CsvWriter, WithoutCommitLeavesNoFile) {
  const fs::path dir = TempDir("uncommitted");
  const fs::path csv = dir / "out.csv";
  {
    CsvWriter w(csv.string());
    w.Begin({"t", "x"});
    const double row[2] = {0.5, 1.5};
    // More than the buffer holds, so part of it has reached the temporary.
    for (int i = 0; i < 100000; ++i) w.Row(row);
  }
  EXPECT_FALSE(fs::exists(csv));
  EXPECT_TRUE(fs::is_empty(dir)) << "a temporary file was left behind";
  fs::remove_all(dir);
}

// Keeps copies of the rows it receives (a test's sink; CsvWriter keeps none).
class RecordingSink : public RowSink {
 public:
  void Begin(const std::vector<std::string>& columns) override { columns_ = columns; }
  void Row(const double* values) override { rows_.emplace_back(values, values + columns_.size()); }
  std::vector<std::string> columns_;
  std::vector<std::vector<double>> rows_;
};

TEST(Simulate, RowsGivenToASinkAreTheInMemoryRowsAndTheSolutionKeepsNone) {
  Model model = LoadModel(testing::SourcePath("examples/B3_quick_return.yaml"));
  EquationSystem eqs = BuildEquations(model, AssignCausality(model));
  CompiledModel cm(eqs);
  SolverOptions so;
  so.t_end = 3;
  const Solution memory = Simulate(cm, so);
  CompiledModel cm2(eqs);
  RecordingSink sink;
  const Solution streamed = Simulate(cm2, so, &sink);
  EXPECT_TRUE(streamed.rows.empty());
  EXPECT_EQ(streamed.num_rows(), memory.num_rows());
  EXPECT_EQ(sink.columns_, memory.columns);
  ASSERT_EQ(sink.rows_.size(), memory.rows.size());
  for (size_t r = 0; r < memory.rows.size(); ++r)
    for (size_t c = 0; c < memory.columns.size(); ++c)
      ASSERT_EQ(Bits(sink.rows_[r][c]), Bits(memory.rows[r][c])) << "row " << r << " column " << memory.columns[c];
  EXPECT_EQ(streamed.stats.steps, memory.stats.steps);
}

// `paynter simulate` streams its rows into the file; Simulate and WriteCsv
// hold them in memory first. Both files are the same bytes, and the numbers
// read back are the doubles Simulate computed.
TEST(Cli, StreamedCsvEqualsTheInMemoryCsvAndReadsBackExactly) {
  const fs::path dir = TempDir("streamed");
  for (const char* example : {"examples/B3_quick_return.yaml", "examples/B1_pendulum.yaml"}) {
    SCOPED_TRACE(example);
    Model model = LoadModel(testing::SourcePath(example));
    CompiledModel cm(BuildEquations(model, AssignCausality(model)));
    SolverOptions so;
    so.t_end = 2;
    const Solution sol = Simulate(cm, so);
    const fs::path memory_csv = dir / "memory.csv", streamed_csv = dir / "streamed.csv";
    WriteCsv(sol, memory_csv.string());
    const testing::CommandResult r =
        RunPaynter("simulate " + testing::SourcePath(example) + " --t-end 2 -o " + streamed_csv.string());
    ASSERT_EQ(r.code, 0) << r.out;
    const std::string text = ReadAll(streamed_csv);
    EXPECT_TRUE(text == ReadAll(memory_csv)) << "the streamed CSV differs from the in-memory one";
    std::string header;
    const auto rows = ParseCsv(text, &header);
    ASSERT_EQ(rows.size(), sol.rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      ASSERT_EQ(rows[i].size(), sol.columns.size());
      for (size_t c = 0; c < sol.columns.size(); ++c)
        ASSERT_EQ(Bits(rows[i][c]), Bits(sol.rows[i][c])) << "row " << i << " column " << sol.columns[c];
    }
  }
  fs::remove_all(dir);
}

// The run fails after more rows than the writer's buffer holds, so some have
// reached the disk: still no output file and no temporary.
TEST(Cli, FailureAfterManyRowsLeavesNoFile) {
  const fs::path dir = TempDir("failure");
  const fs::path model = dir / "blowup.yaml";
  // q' = q^2 from q = 1 blows up at t = 1.
  std::ofstream(model) << R"(
elements:
  - {name: src, kind: MSf, flow: q_c^2}
  - {name: n, kind: "0"}
  - {name: c, kind: C, capacitance: 1, initial: 1}
bonds: [[src, n], [n, c]]
)";
  const fs::path csv = dir / "out.csv";
  const testing::CommandResult r =
      RunPaynter("simulate " + model.string() + " --t-end 2 --dt-out 1e-5 -o " + csv.string());
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("q_c"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(csv));
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().extension(), ".yaml") << e.path();
  fs::remove_all(dir);
}

// A run ended by a signal (interrupted, or its reader gone) leaves no
// temporary behind: SIGTERM during the run, SIGPIPE while the rows are copied
// into a pipe.
TEST(Cli, ARunEndedBySignalLeavesNoFile) {
  const fs::path dir = TempDir("signal");
  const fs::path csv = dir / "out.csv";
  const std::string model = testing::SourcePath("examples/rlc.yaml");
  // 10^7 rows (the most a run may ask for): far from done when the signal comes.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl(PAYNTER_EXE, PAYNTER_EXE, "simulate", model.c_str(), "--t-end", "100", "--dt-out", "1e-5", "-o",
            csv.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::usleep(300000);
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_TRUE(fs::is_empty(dir)) << "a file was left behind";

  // -o /dev/stdout: the rows go to a temporary in TMPDIR, then into the pipe,
  // whose reader leaves after one line.
  const std::string cmd =
      "TMPDIR=" + dir.string() + " " + PAYNTER_EXE + " simulate " + model + " --t-end 1 --dt-out 1e-5 -o /dev/stdout";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char line[256];
  ASSERT_NE(fgets(line, sizeof line, p), nullptr);
  EXPECT_EQ(std::string(line), "t,current,v_cap,charge,v_res\n");
  pclose(p);
  EXPECT_TRUE(fs::is_empty(dir)) << "a temporary was left behind";
  fs::remove_all(dir);
}

double PeakMegabytes(const std::string& stats) {
  const size_t at = stats.find("peak memory ");
  EXPECT_NE(at, std::string::npos) << stats;
  return at == std::string::npos ? 0 : std::strtod(stats.c_str() + at + 12, nullptr);
}

// 333,334 rows of 5 numbers would take over 20 MB as in-memory rows (and 32 MB
// of text); streamed, the peak memory is that of a run of 101 rows.
TEST(Cli, ManyRowsDoNotGrowThePeakMemory) {
  const fs::path dir = TempDir("many");
  const std::string model = testing::SourcePath("examples/rlc.yaml");
  const testing::CommandResult few =
      RunPaynter("simulate " + model + " --t-end 1 --dt-out 1e-2 --stats -o " + (dir / "few.csv").string());
  ASSERT_EQ(few.code, 0) << few.out;
  const testing::CommandResult many =
      RunPaynter("simulate " + model + " --t-end 1 --dt-out 3e-6 --stats -o " + (dir / "many.csv").string());
  ASSERT_EQ(many.code, 0) << many.out;
  EXPECT_NE(many.out.find("333335 output rows"), std::string::npos) << many.out;
  EXPECT_GT(fs::file_size(dir / "many.csv"), 20'000'000u);
  EXPECT_LT(PeakMegabytes(many.out) - PeakMegabytes(few.out), 5.0) << few.out << many.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace paynter
