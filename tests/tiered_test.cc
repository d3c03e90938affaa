// Tiered execution (Backend::kTiered): a run starts on the tape while its
// native code compiles in a detached process, switches to native code when it
// is built, and gives the results of a pure tape and a pure native run bit for
// bit; a run that ends first does not wait for the compiler, and the objects
// still land in the cache for the next run.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "paynter/files.h"
#include "paynter/process.h"
#include "paynter/run.h"
#include "test_util.h"
#include "test_paths.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

// A private scratch directory for one test.
class TieredTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / fmt::format("paynter_tiered_{}_{}", ::getpid(), info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::chmod(dir_.c_str(), 0700);
  }
  void TearDown() override { testing::RemoveTree(dir_); }
  fs::path dir_;
};

using testing::ScopedEnv;

std::string NonlinearModel(const fs::path& dir) {
  testing::WriteNonlinearResistorModel(dir / "nonlinear.yaml");
  return (dir / "nonlinear.yaml").string();
}

void ExpectRowsBitwiseEqual(const Solution& a, const Solution& b, const std::string& what) {
  ASSERT_EQ(a.rows.size(), b.rows.size()) << what;
  ASSERT_GT(a.rows.size(), 10u) << what;
  for (size_t r = 0; r < a.rows.size(); ++r) {
    ASSERT_EQ(a.rows[r].size(), b.rows[r].size()) << what;
    for (size_t c = 0; c < a.rows[r].size(); ++c)
      ASSERT_EQ(std::memcmp(&a.rows[r][c], &b.rows[r][c], sizeof(double)), 0)
          << what << ": row " << r << " column " << a.columns[c] << ": " << a.rows[r][c] << " vs " << b.rows[r][c];
  }
}

// One model three ways from the same lowered programs: the tape, native code,
// and tiered with a cold cache, switching at the 40th run of each program
// (waiting for the compile there, so the switch is certain to fall mid-run).
void ExpectTieredEqualsTapeAndNative(const fs::path& dir, RunOptions options, const std::string& what) {
  options.progress = false;
  options.stage_cache = false;
  options.backend = Backend::kTape;
  const PreparedModel prepared = PrepareModel(options);
  const LoweredModel& lowered = prepared.staged().lowered;
  CodegenOptions tape, native, tiered;
  tape.backend = Backend::kTape;
  native.backend = Backend::kNative;
  native.cache_dir = (dir / "native_cache").string();
  tiered.backend = Backend::kTiered;
  tiered.cache_dir = (dir / "tiered_cache").string();
  tiered.tiered_wait_after = 40;
  CompiledModel on_tape(lowered, tape), on_native(lowered, native), on_tiers(lowered, tiered);
  EXPECT_EQ(on_native.backend_name(), "native") << on_native.codegen_note();
  EXPECT_EQ(on_tiers.backend_name(), "tiered");
  const Solution a = RunPrepared(prepared, on_tape, options).solution;
  const Solution b = RunPrepared(prepared, on_native, options).solution;
  const RunResult tiered_run = RunPrepared(prepared, on_tiers, options);
  const Solution& c = tiered_run.solution;
  const CompiledProgram::Tiers t = tiered_run.tiers;
  EXPECT_TRUE(t.switched) << what << ": " << on_tiers.codegen_note();
  // At the latest at run 40 (earlier when another program's wait saw it built).
  EXPECT_GT(t.tape_runs, 0) << what;
  EXPECT_LE(t.tape_runs, 40) << what;
  EXPECT_GT(t.native_runs, 40) << what;
  EXPECT_GT(t.switch_slot0, options.t0) << what;
  EXPECT_LT(t.switch_slot0, options.t_end) << what;
  EXPECT_EQ(on_tiers.codegen_note(), "") << what;
  ExpectRowsBitwiseEqual(a, b, what + ", tape vs native");
  ExpectRowsBitwiseEqual(a, c, what + ", tape vs tiered");
  // The same with a warm cache: native code from the start.
  CompiledModel warm(lowered, tiered);
  EXPECT_EQ(warm.backend_name(), "native");
  ExpectRowsBitwiseEqual(a, RunPrepared(prepared, warm, options).solution, what + ", tape vs warm tiered");
}

TEST_F(TieredTest, StateFormModelSwitchesMidRunWithIdenticalResults) {
  RunOptions o;
  o.file = testing::SourcePath("examples/B1_pendulum.yaml");
  o.t_end = 2;
  o.rtol = 1e-9;
  ExpectTieredEqualsTapeAndNative(dir_, o, "B1");
}

TEST_F(TieredTest, ImplicitBlockSwitchesMidRunWithIdenticalResults) {
  RunOptions o;
  o.file = NonlinearModel(dir_);
  o.t_end = 2;
  ExpectTieredEqualsTapeAndNative(dir_, o, "nonlinear resistor");
}

TEST_F(TieredTest, LagrangeMultipliersSwitchMidRunWithIdenticalResults) {
  RunOptions o;
  o.file = testing::SourcePath("examples/B1_pendulum_3d.yaml");
  o.constraints = ConstraintMethod::kLagrangeMultipliers;
  o.t_end = 1;
  ExpectTieredEqualsTapeAndNative(dir_, o, "B1 3D, lagrange-multipliers");
}

// A compiler that fails: the tiered program stays on the tape and says why.
TEST_F(TieredTest, FailedCompileStaysOnTheTape) {
  const fs::path cc = dir_ / "failing-cc";
  std::ofstream(cc) << "#!/bin/sh\necho 'no code today' >&2\nexit 1\n";
  fs::permissions(cc, fs::perms::owner_all);
  ScopedEnv env("CC", cc.c_str());
  RunOptions o;
  o.file = NonlinearModel(dir_);
  o.t_end = 1;
  o.progress = false;
  o.stage_cache = false;
  o.backend = Backend::kTape;
  PreparedModel prepared = PrepareModel(o);
  CodegenOptions tiered;
  tiered.backend = Backend::kTiered;
  tiered.cache_dir = (dir_ / "cache").string();
  tiered.tiered_wait_after = 5;
  CompiledModel cm(prepared.staged().lowered, tiered);
  const RunResult run = RunPrepared(prepared, cm, o);
  const Solution& s = run.solution;
  EXPECT_FALSE(run.tiers.switched);
  EXPECT_NE(cm.codegen_note().find("C compiler failed"), std::string::npos) << cm.codegen_note();
  EXPECT_NE(cm.codegen_note().find("no code today"), std::string::npos) << cm.codegen_note();
  ExpectRowsBitwiseEqual(s, RunPrepared(prepared, prepared.compiled(), o).solution, "failed tiered vs tape");
}

// ---------------------------------------------------------------------------
// The command line: a cold run does not wait for its compile.

struct Cli {
  int status;
  std::string out;
};

Cli Paynter(std::vector<std::string> args) {
  args.insert(args.begin(), PAYNTER_EXE);
  Cli r;
  r.status = RunTool(args, &r.out);
  return r;
}

// The files of `dir` whose names contain `part` (".so": the shared objects in
// place, not their temporaries).
std::vector<std::string> Files(const fs::path& dir, const std::string& part) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    const bool match = part == ".so" ? e.path().extension() == ".so" && name.find(".tmp-") == std::string::npos
                                     : name.find(part) != std::string::npos;
    if (match) out.push_back(name);
  }
  return out;
}

// Waits up to a minute for `done`.
template <class F>
bool Eventually(F done) {
  for (int i = 0; i < 1200; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

// A C compiler that starts compiling only once `go` exists (the test decides
// when the compile may end).
fs::path GatedCompiler(const fs::path& dir, const fs::path& go) {
  const fs::path cc = dir / "gated-cc";
  std::ofstream(cc) << "#!/bin/sh\n"
                       "n=0\n"
                       "while [ ! -e '"
                    << go.string()
                    << "' ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done\n"
                       "exec cc \"$@\"\n";
  fs::permissions(cc, fs::perms::owner_all);
  return cc;
}

TEST_F(TieredTest, ColdRunReturnsBeforeItsCompileEndsAndTheNextRunFindsTheObject) {
  const fs::path go = dir_ / "go", cache = dir_ / "xdg", objects = cache / "paynter";
  ScopedEnv cc("CC", GatedCompiler(dir_, go).c_str()), xdg("XDG_CACHE_HOME", cache.c_str());
  const std::string model = NonlinearModel(dir_);
  const std::string out1 = (dir_ / "cold.csv").string(), out2 = (dir_ / "warm.csv").string();
  // RunTool reads the program's output to its end: had the build process kept
  // the output pipe open, this would wait for the compile, which cannot end
  // before `go` exists.
  const Cli cold = Paynter({"simulate", model, "--t-end", "2", "-o", out1, "--stats"});
  ASSERT_EQ(cold.status, 0) << cold.out;
  EXPECT_NE(cold.out.find("(tiered backend)"), std::string::npos) << cold.out;
  EXPECT_NE(cold.out.find(" 0 in native code; native code not ready"), std::string::npos) << cold.out;
  EXPECT_TRUE(Files(objects, ".so").empty()) << "the compile ended before the gate opened";
  EXPECT_FALSE(Files(objects, ".tmp-").empty()) << "no compile under way";
  std::ofstream(go) << "";
  // The detached build installs the right-hand side's and the outputs' objects.
  EXPECT_TRUE(Eventually([&] { return Files(objects, ".so").size() == 2 && Files(objects, ".tmp-").empty(); }))
      << Files(objects, ".tmp-").size() << " temporaries left";
  for (const std::string& so : Files(objects, ".so"))
    EXPECT_EQ(fs::status(objects / so).permissions(), fs::perms::owner_all) << so;
  const Cli warm = Paynter({"simulate", model, "--t-end", "2", "-o", out2, "--stats"});
  ASSERT_EQ(warm.status, 0) << warm.out;
  EXPECT_NE(warm.out.find("(native backend)"), std::string::npos) << warm.out;
  EXPECT_EQ(warm.out.find("note:"), std::string::npos) << warm.out;
  EXPECT_EQ(testing::ReadFileBytes(out1), testing::ReadFileBytes(out2));
}

// Two cold runs of one model at once: both finish, their builds install the
// same objects (each by rename), and the next run loads them.
TEST_F(TieredTest, ConcurrentColdRunsLeaveOneSoundCache) {
  const fs::path go = dir_ / "go", cache = dir_ / "xdg", objects = cache / "paynter";
  ScopedEnv cc("CC", GatedCompiler(dir_, go).c_str()), xdg("XDG_CACHE_HOME", cache.c_str());
  const std::string model = NonlinearModel(dir_);
  Cli a, b;
  std::thread ta([&] { a = Paynter({"simulate", model, "--t-end", "2", "-o", (dir_ / "a.csv").string()}); });
  std::thread tb([&] { b = Paynter({"simulate", model, "--t-end", "2", "-o", (dir_ / "b.csv").string()}); });
  ta.join();
  tb.join();
  ASSERT_EQ(a.status, 0) << a.out;
  ASSERT_EQ(b.status, 0) << b.out;
  std::ofstream(go) << "";
  EXPECT_TRUE(Eventually([&] { return Files(objects, ".so").size() == 2 && Files(objects, ".tmp-").empty(); }));
  const Cli c = Paynter({"simulate", model, "--t-end", "2", "-o", (dir_ / "c.csv").string(), "--stats"});
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_NE(c.out.find("(native backend)"), std::string::npos) << c.out;
  EXPECT_EQ(testing::ReadFileBytes(dir_ / "a.csv"), testing::ReadFileBytes(dir_ / "c.csv"));
  EXPECT_EQ(testing::ReadFileBytes(dir_ / "b.csv"), testing::ReadFileBytes(dir_ / "c.csv"));
}

// A build killed before it renamed its files leaves temporaries in the cache:
// the next build there removes those older than ten minutes whose build is
// gone, and keeps a fresh one and those of a build still under way.
TEST_F(TieredTest, NextBuildRemovesTemporariesOfKilledBuildsOnly) {
  const fs::path go = dir_ / "go", cache = dir_ / "xdg", objects = cache / "paynter";
  ScopedEnv cc("CC", GatedCompiler(dir_, go).c_str()), xdg("XDG_CACHE_HOME", cache.c_str());
  const std::string model = NonlinearModel(dir_);
  // A build under way: its caller has ended, its compilers wait at the gate.
  const Cli first = Paynter({"simulate", model, "--t-end", "1", "-o", (dir_ / "a.csv").string()});
  ASSERT_EQ(first.status, 0) << first.out;
  const std::vector<std::string> running = Files(objects, ".tmp-");
  ASSERT_FALSE(running.empty()) << "no compile under way";
  // A process that has ended: the one that started the killed build.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(dead, &status, 0), dead);
  const std::string tag = fmt::format(".tmp-{}-", dead);
  const std::vector<std::string> stale = {"pn_0123456789abcdef.so" + tag + "0.so",
                                          "pn_0123456789abcdef.c" + tag + "0.c",
                                          "pn_0123456789abcdef.so" + tag + "0.log"};
  const std::string fresh = "pn_fedcba9876543210.so" + tag + "1.so";
  const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const std::string& name : stale) {
    std::ofstream(objects / name) << "half a file";
    fs::last_write_time(objects / name, hour_ago);
  }
  std::ofstream(objects / fresh) << "being written";
  for (const std::string& name : running) fs::last_write_time(objects / name, hour_ago);  // old, but in use
  // Another cold run starts a build in the same cache.
  const Cli second = Paynter({"simulate", model, "--t-end", "1", "-o", (dir_ / "b.csv").string()});
  ASSERT_EQ(second.status, 0) << second.out;
  for (const std::string& name : stale) EXPECT_FALSE(fs::exists(objects / name)) << name;
  EXPECT_TRUE(fs::exists(objects / fresh));
  for (const std::string& name : running) EXPECT_TRUE(fs::exists(objects / name)) << name << " of a running build";
  std::ofstream(go) << "";
  // Both builds finish and rename their files into place.
  EXPECT_TRUE(Eventually([&] { return Files(objects, ".so").size() == 2 && Files(objects, ".tmp-").size() == 1; }))
      << Files(objects, ".tmp-").size() << " temporaries left";
}

}  // namespace
}  // namespace paynter
