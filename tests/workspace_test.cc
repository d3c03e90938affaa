// The compiled model is constant and shared; a run's data is its workspace
// (paynter/simulation.h: CompiledModel and ModelWorkspace). A run on a fresh
// workspace gives the same bits whatever ran before it or beside it.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <thread>
#include <unistd.h>

#include "paynter/run.h"
#include "test_util.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;
using testing::SourcePath;

// Bit for bit (memcmp: -0.0 differs from 0.0, and NaNs compare).
void ExpectRowsBitwiseEqual(const Solution& a, const Solution& b, const std::string& what) {
  ASSERT_EQ(a.columns, b.columns) << what;
  ASSERT_EQ(a.rows.size(), b.rows.size()) << what;
  ASSERT_GT(a.rows.size(), 2u) << what;
  for (size_t r = 0; r < a.rows.size(); ++r) {
    ASSERT_EQ(a.rows[r].size(), b.rows[r].size()) << what;
    for (size_t c = 0; c < a.rows[r].size(); ++c)
      ASSERT_EQ(std::memcmp(&a.rows[r][c], &b.rows[r][c], sizeof(double)), 0)
          << what << ": row " << r << ", column " << a.columns[c] << ": " << a.rows[r][c] << " vs " << b.rows[r][c];
  }
}

class WorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("paynter_workspace_test_{}", ::getpid());
    fs::create_directories(dir_);
    testing::WriteNonlinearResistorModel(dir_ / "nonlinear.yaml");
  }
  void TearDown() override { testing::RemoveTree(dir_); }

  // A model, the parameter a run varies (empty: none may change by a slot, a
  // mechanism's), and what the model exercises.
  struct Case {
    std::string file, parameter;
    double t_end;
    std::vector<double> values;
  };
  std::vector<Case> Cases() const {
    return {
        {SourcePath("examples/B1_pendulum.yaml"), "B", 2, {0.5, 10}},           // B1 (the paper's pendulum)
        {(dir_ / "nonlinear.yaml").string(), "b", 3, {0.5, 2}},                 // a nonlinear implicit block
        {SourcePath("examples/bouncing_ball.yaml"), "e", 2.5, {0.8, 0.75}},      // events and resets
        {SourcePath("examples/half_wave_rectifier.yaml"), "RL", 0.05, {100, 20}},  // a switched element
        {SourcePath("examples/fourbar.yaml"), "", 1, {0, 0}},                   // constraints, projection
    };
  }
  RunOptions Options(const Case& c, Backend backend) const {
    RunOptions o;
    o.file = c.file;
    o.t_end = c.t_end;
    o.dt_out = c.t_end / 200;
    o.progress = false;
    o.stage_cache = false;
    o.backend = backend;
    return o;
  }
  // "B1_pendulum.yaml (tape)": what a failure names.
  static std::string Label(const Case& c, Backend backend) {
    return fmt::format("{} ({})", fs::path(c.file).filename().string(), backend == Backend::kTape ? "tape" : "native");
  }
  static RunOptions WithValue(RunOptions o, const Case& c, double value) {
    if (!c.parameter.empty()) o.params = {{c.parameter, value}};
    return o;
  }

  fs::path dir_;
};

// A compiled model run again gives the first run's bits, and those of the
// same lowered model compiled anew (what a fresh process runs).
TEST_F(WorkspaceTest, ASecondRunOfACompiledModelEqualsTheFirst) {
  for (const Case& c : Cases()) {
    for (Backend backend : {Backend::kTape, Backend::kNative}) {
      const RunOptions o = Options(c, backend);
      const std::string what = Label(c, backend);
      const PreparedModel p = PrepareModel(o);
      const Solution first = RunPrepared(p, p.compiled(), o).solution;
      // Another run in between, with another parameter value where one may change.
      const Solution other = RunPrepared(p, p.compiled(), WithValue(o, c, c.values[1])).solution;
      const Solution second = RunPrepared(p, p.compiled(), o).solution;
      ExpectRowsBitwiseEqual(first, second, what + ", second run");
      const CompiledModel anew(p.staged().lowered, p.codegen());
      ExpectRowsBitwiseEqual(first, RunPrepared(p, anew, o).solution, what + ", compiled anew");
      // The same through the workspace itself: a fresh one per run.
      if (!c.parameter.empty() && p.method() == ConstraintMethod::kAuto && p.compiled().num_constraints() == 0) {
        SolverOptions so = SolverOptionsFor(o, p.method());
        ModelWorkspace ws(p.compiled());
        const Solution direct = Simulate(ws, so);
        ExpectRowsBitwiseEqual(first, direct, what + ", Simulate on a workspace");
        ModelWorkspace ws2(p.compiled());
        ws2.SetParameter(c.parameter, c.values[1]);
        ExpectRowsBitwiseEqual(other, Simulate(ws2, so), what + ", Simulate with the parameter set");
      }
    }
  }
}

// Two threads simulating one compiled model at once, with different
// parameter values, each get what a run alone gives. Each thread runs a few
// times so that the runs overlap.
TEST_F(WorkspaceTest, ThreadsSimulatingOneCompiledModelGetWhatASingleRunGives) {
  constexpr int kRepeats = 3;
  for (const Case& c : Cases()) {
    for (Backend backend : {Backend::kTape, Backend::kNative}) {
      const RunOptions o = Options(c, backend);
      const std::string what = Label(c, backend);
      const PreparedModel p = PrepareModel(o);
      std::vector<Solution> alone;
      for (double v : c.values) alone.push_back(RunPrepared(p, p.compiled(), WithValue(o, c, v)).solution);
      if (!c.parameter.empty()) {
        ASSERT_NE(alone[0].rows.back(), alone[1].rows.back()) << what << ": the parameter changes the run";
      }
      std::vector<std::vector<Solution>> together(c.values.size());
      std::vector<std::string> errors(c.values.size());
      std::vector<std::thread> threads;
      for (size_t i = 0; i < c.values.size(); ++i)
        threads.emplace_back([&, i] {
          try {
            for (int k = 0; k < kRepeats; ++k)
              together[i].push_back(RunPrepared(p, p.compiled(), WithValue(o, c, c.values[i])).solution);
          } catch (const std::exception& e) {
            errors[i] = e.what();
          }
        });
      for (auto& t : threads) t.join();
      for (size_t i = 0; i < c.values.size(); ++i) {
        ASSERT_EQ(errors[i], "") << what;
        ASSERT_EQ(together[i].size(), size_t(kRepeats)) << what;
        for (int k = 0; k < kRepeats; ++k)
          ExpectRowsBitwiseEqual(alone[i], together[i][k],
                                 fmt::format("{}, {} = {}, run {} in a thread", what, c.parameter, c.values[i], k));
      }
    }
  }
}

// Tiered: a model whose native code arrives while runs on several threads
// are on the tape; each run switches by itself and gives the tape's bits.
TEST_F(WorkspaceTest, ThreadsOnATieredModelSwitchAndGiveTheTapesBits) {
  const Case c = Cases()[1];  // the nonlinear block: Newton state crosses the switch
  RunOptions o = Options(c, Backend::kTape);
  o.t_end = 20;
  const PreparedModel p = PrepareModel(o);
  CodegenOptions tiered = p.codegen();
  tiered.backend = Backend::kTiered;
  tiered.cache_dir = (dir_ / "tiered_cache").string();
  tiered.tiered_wait_after = 40;
  std::vector<Solution> alone;
  for (double v : c.values) alone.push_back(RunPrepared(p, p.compiled(), WithValue(o, c, v)).solution);
  // Made now, so that its code compiles while the threads run (a thread that
  // starts after the code is loaded runs native code from its first run).
  const CompiledModel cm(p.staged().lowered, tiered);
  std::vector<RunResult> together(c.values.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < c.values.size(); ++i)
    threads.emplace_back([&, i] { together[i] = RunPrepared(p, cm, WithValue(o, c, c.values[i])); });
  for (auto& t : threads) t.join();
  long most_tape_runs = 0;
  for (size_t i = 0; i < c.values.size(); ++i) {
    EXPECT_TRUE(together[i].tiers.switched) << cm.codegen_note();
    EXPECT_LE(together[i].tiers.tape_runs, 40);
    EXPECT_GT(together[i].tiers.native_runs, 0);
    most_tape_runs = std::max(most_tape_runs, together[i].tiers.tape_runs);
    ExpectRowsBitwiseEqual(alone[i], together[i].solution, fmt::format("tiered, {} = {}", c.parameter, c.values[i]));
  }
  EXPECT_GT(most_tape_runs, 0) << "no run switched mid-way";
}

}  // namespace
}  // namespace paynter
