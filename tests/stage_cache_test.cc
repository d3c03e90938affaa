// The stage cache: a warm run gives the cold run's results bit for bit, a changed
// model, option or build never reuses an entry, a damaged entry is ignored, and
// --param and run-time errors behave as without the cache.
#include "paynter/stage_cache.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "test_util.h"
#include "test_paths.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string out;  // stdout and stderr
};

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

void WriteAll(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// A private cache directory and scratch space for one test.
class StageCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / fmt::format("paynter_stage_test_{}_{}", ::getpid(), info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cache");
    ::chmod(dir_.c_str(), 0700);
  }
  void TearDown() override { testing::RemoveTree(dir_); }

  // paynter with the test's cache directory ($XDG_CACHE_HOME/paynter).
  Result Run(const std::string& args) const {
    const std::string cmd = fmt::format("XDG_CACHE_HOME='{}' {} {} 2>&1", (dir_ / "cache").string(), PAYNTER_EXE, args);
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[512];
    while (fgets(buf, sizeof buf, p)) out += buf;
    const int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  }
  // Simulates `model` and returns the CSV's bytes; `cached` says whether the stages came from the cache.
  std::string Simulate(const std::string& model, const std::string& options, bool* cached = nullptr) const {
    const std::string csv = (dir_ / "out.csv").string();
    fs::remove(csv);
    const Result r = Run(fmt::format("simulate {} {} --stats -o {}", model, options, csv));
    EXPECT_EQ(r.code, 0) << r.out;
    if (cached) *cached = r.out.find("symbolic stages from the stage cache") != std::string::npos;
    EXPECT_TRUE(r.out.find("symbolic stages from the stage cache") != std::string::npos ||
                r.out.find("symbolic stages built") != std::string::npos)
        << r.out;
    return ReadAll(csv);
  }
  std::vector<fs::path> Entries() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_ / "cache" / "paynter"))
      if (e.path().filename().string().rfind("stages_", 0) == 0) out.push_back(e.path());
    return out;
  }

  fs::path dir_;
};

// The multibody models whose equations GiNaC shapes differently from run to run:
// the warm run must be the cold run that made the entry, bit for bit.
TEST_F(StageCacheTest, WarmRunsRepeatTheColdRunBitForBit) {
  for (const char* ex : {"examples/B2_slider_crank_hyperstatic.yaml", "examples/B4_spatial_arm.yaml"}) {
    SCOPED_TRACE(ex);
    const std::string model = testing::SourcePath(ex);
    bool cached = true;
    const std::string cold = Simulate(model, "--t-end 0.5", &cached);
    EXPECT_FALSE(cached);
    for (int i = 0; i < 2; ++i) {
      const std::string warm = Simulate(model, "--t-end 0.5", &cached);
      EXPECT_TRUE(cached);
      EXPECT_TRUE(warm == cold) << "warm run " << i << " differs from the cold run";
    }
    // The tape runs the same lowered programs: the same entry serves it.
    Simulate(model, "--t-end 0.5 --backend tape", &cached);
    EXPECT_TRUE(cached);
  }
}

TEST_F(StageCacheTest, AChangedModelFileOrOptionIsNotServedByAnOldEntry) {
  const fs::path model = dir_ / "msd.yaml";
  std::string text = ReadAll(testing::SourcePath("examples/mass_spring_damper.yaml"));
  WriteAll(model, text);
  bool cached = true;
  const std::string first = Simulate(model.string(), "--t-end 1", &cached);
  EXPECT_FALSE(cached);
  Simulate(model.string(), "--t-end 1", &cached);
  EXPECT_TRUE(cached);

  // One byte: the spring's stiffness 50 -> 60.
  const size_t at = text.find("k: 50");
  ASSERT_NE(at, std::string::npos);
  text[at + 3] = '6';
  WriteAll(model, text);
  const std::string changed = Simulate(model.string(), "--t-end 1", &cached);
  EXPECT_FALSE(cached);
  EXPECT_NE(changed, first);
  EXPECT_EQ(changed, Simulate(model.string(), "--t-end 1 --no-cache"));

  // Options that shape the equations have entries of their own.
  Simulate(model.string(), "--t-end 1 --form hamilton", &cached);
  EXPECT_FALSE(cached);
  Simulate(model.string(), "--t-end 1 --energy", &cached);
  EXPECT_FALSE(cached);
  Simulate(model.string(), "--t-end 1 --form hamilton", &cached);
  EXPECT_TRUE(cached);
  // Those that do not (the integrator, the backend) share one.
  Simulate(model.string(), "--t-end 2 --method rk4 --backend tape", &cached);
  EXPECT_TRUE(cached);
}

TEST_F(StageCacheTest, NoCacheNeitherReadsNorWrites) {
  const std::string model = testing::SourcePath("examples/rlc.yaml");
  bool cached = true;
  Simulate(model, "--t-end 1 --no-cache", &cached);
  EXPECT_FALSE(cached);
  EXPECT_TRUE(Entries().empty());
}

// A build of paynter never reads another build's entries (the identity is
// injected here; by default it is the running executable's).
TEST_F(StageCacheTest, AnotherBuildNeverReusesAnEntry) {
  const std::string model = testing::SourcePath("examples/B1_pendulum.yaml");
  Model m = LoadModel(model);
  StagedModel staged = StageModel(m, LowerModel(BuildEquations(m, AssignCausality(m))));
  StageCache a({true, (dir_ / "api").string(), "build a"});
  const std::string key = a.Key(model, {"form=state"});
  ASSERT_FALSE(key.empty()) << a.note();
  a.Store(key, staged);
  EXPECT_TRUE(a.Load(key).has_value()) << a.note();
  StageCache b({true, (dir_ / "api").string(), "build b"});
  const std::string key_b = b.Key(model, {"form=state"});
  EXPECT_NE(key_b, key);
  EXPECT_FALSE(b.Load(key_b).has_value());
  // Even an entry renamed to the other build's key is refused (its content names its key).
  fs::copy_file(fs::path(dir_ / "api") / ("stages_" + key + ".bin"),
                fs::path(dir_ / "api") / ("stages_" + key_b + ".bin"));
  EXPECT_FALSE(b.Load(key_b).has_value());
  EXPECT_NE(a.Key(model, {"form=hamilton"}), key);
}

// Well-formed entries whose parts do not fit together are refused too.
TEST_F(StageCacheTest, AnInconsistentEntryIsRefused) {
  const std::string model = testing::SourcePath("examples/B1_pendulum.yaml");
  Model m = LoadModel(model);
  const StagedModel good = StageModel(m, LowerModel(BuildEquations(m, AssignCausality(m))));
  StageCache cache({true, (dir_ / "api").string(), "build a"});
  const std::string key = cache.Key(model, {});
  const GiNaC::symbol a("a"), b("b");
  Program small;
  small.symbols = {a, b};
  ProgramStep step;
  step.target = 1;
  step.value = a * 2;
  small.steps.push_back(step);
  std::vector<StagedModel> bad(4, good);
  bad[0].lowered.rhs = LowerProgram(small);  // another slot array
  bad[1].lowered.output_slots[0] = good.lowered.num_slots;
  bad[2].lowered.first_state_slot = good.lowered.num_slots;
  bad[3].lowered.parameter_values.push_back(1.0);
  for (const StagedModel& s : bad) {
    cache.Store(key, s);
    EXPECT_FALSE(cache.Load(key).has_value());
  }
  cache.Store(key, good);
  EXPECT_TRUE(cache.Load(key).has_value());
}

// Damaged entries are ignored (and replaced), whatever the damage.
TEST_F(StageCacheTest, ATruncatedOrCorruptEntryIsIgnoredAndRebuilt) {
  const std::string model = testing::SourcePath("examples/B3_quick_return.yaml");
  const std::string cold = Simulate(model, "--t-end 0.2");
  const std::vector<fs::path> entries = Entries();
  ASSERT_EQ(entries.size(), 1u);
  const std::string good = ReadAll(entries[0]);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 6; ++trial) {
    std::string bad = good;
    if (trial % 2 == 0) {
      bad.resize(std::uniform_int_distribution<size_t>(0, good.size() - 1)(rng));
    } else {
      bad[std::uniform_int_distribution<size_t>(0, good.size() - 1)(rng)] ^= 0x5a;
    }
    WriteAll(entries[0], bad);
    bool cached = true;
    const Result r = Run(fmt::format("simulate {} --t-end 0.2 --stats -o {}", model, (dir_ / "out.csv").string()));
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("symbolic stages built"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ignored"), std::string::npos) << r.out;
    // Rebuilt: the next run is served again.
    Simulate(model, "--t-end 0.2", &cached);
    EXPECT_TRUE(cached);
  }
  // An entry another user could have written is not read.
  ::chmod(entries[0].c_str(), 0666);
  const Result r = Run(fmt::format("simulate {} --t-end 0.2 --stats -o {}", model, (dir_ / "out.csv").string()));
  EXPECT_NE(r.out.find("writable by others"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("symbolic stages built"), std::string::npos) << r.out;
}

TEST_F(StageCacheTest, ParametersOnTheCommandLineUseTheEntry) {
  const std::string model = testing::SourcePath("examples/mass_spring_damper.yaml");
  bool cached = true;
  Simulate(model, "--t-end 1");
  const std::string warm = Simulate(model, "--t-end 1 --param m=3 --param c=1.5", &cached);
  EXPECT_TRUE(cached);
  EXPECT_EQ(warm, Simulate(model, "--t-end 1 --param m=3 --param c=1.5 --no-cache"));
  // The checks of masses and stiffnesses hold as without the cache, with the same message.
  const Result uncached =
      Run(fmt::format("simulate {} --t-end 1 --param m=0 --no-cache -o {}", model, (dir_ / "out.csv").string()));
  const Result served = Run(fmt::format("simulate {} --t-end 1 --param m=0 -o {}", model, (dir_ / "out.csv").string()));
  EXPECT_EQ(uncached.code, 1);
  EXPECT_NE(uncached.out.find("--param m=0"), std::string::npos) << uncached.out;
  EXPECT_EQ(served.code, uncached.code);
  EXPECT_EQ(served.out, uncached.out);
}

// A first run with --param builds the entry with those values: a later run
// without them starts from the file's values, not the earlier run's.
TEST_F(StageCacheTest, AnEntryBuiltWithParametersDoesNotLendThemToOtherRuns) {
  const std::string model = testing::SourcePath("examples/mass_spring_damper.yaml");
  const std::string heavy = Simulate(model, "--t-end 1 --param m=3");
  const std::string plain = Simulate(model, "--t-end 1 --no-cache");
  EXPECT_NE(heavy, plain);
  EXPECT_EQ(Simulate(model, "--t-end 1"), plain);
  EXPECT_EQ(Simulate(model, "--t-end 1 --param m=3"), heavy);
  bool cached = false;
  EXPECT_EQ(Simulate(model, "--t-end 1 --param c=2", &cached), Simulate(model, "--t-end 1 --param c=2 --no-cache"));
  EXPECT_TRUE(cached);  // served by the entry built without overrides
}

// B1's JA is an expression of other parameters: there the --param values are
// part of the key, so an entry made without them is not used with them (the
// build may derive numbers from them).
TEST_F(StageCacheTest, DerivedParametersPutTheOverridesInTheKey) {
  const std::string model = testing::SourcePath("examples/B1_pendulum.yaml");
  bool cached = true;
  Simulate(model, "--t-end 1", &cached);
  EXPECT_FALSE(cached);
  const std::string with = Simulate(model, "--t-end 1 --param M=2", &cached);
  EXPECT_FALSE(cached);
  EXPECT_EQ(with, Simulate(model, "--t-end 1 --param M=2", &cached));
  EXPECT_TRUE(cached);
  EXPECT_EQ(with, Simulate(model, "--t-end 1 --param M=2 --no-cache"));
  Simulate(model, "--t-end 1", &cached);
  EXPECT_TRUE(cached);
  // So are those of a model whose initial values use parameters.
  const fs::path msd = dir_ / "msd.yaml";
  std::string text = ReadAll(testing::SourcePath("examples/mass_spring_damper.yaml"));
  const size_t at = text.find("kind: C, stiffness: k");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + std::string("kind: C, stiffness: k").size(), ", initial: k/500");
  WriteAll(msd, text);
  Simulate(msd.string(), "--t-end 1", &cached);
  EXPECT_FALSE(cached);
  Simulate(msd.string(), "--t-end 1 --param c=3", &cached);
  EXPECT_FALSE(cached);
  EXPECT_EQ(Simulate(msd.string(), "--t-end 1 --param c=3", &cached),
            Simulate(msd.string(), "--t-end 1 --param c=3 --no-cache"));
  EXPECT_TRUE(cached);
  // A first run with overrides is served on the next run with the same ones.
  for (const fs::path& e : Entries()) fs::remove(e);
  Simulate(model, "--t-end 1 --param M=3", &cached);
  EXPECT_FALSE(cached);
  Simulate(model, "--t-end 1 --param M=3", &cached);
  EXPECT_TRUE(cached);
}

// A failure at run time reads the expressions back from the entry's text: the
// message names the same slot, expression and inputs.
TEST_F(StageCacheTest, RunTimeErrorsAreAsInformativeFromTheCache) {
  const fs::path model = dir_ / "nan.yaml";
  WriteAll(model, R"(
elements:
  - {name: s, kind: MSe, effort: log(q_c - 1)}
  - {name: j, kind: "1"}
  - {name: c, kind: C, capacitance: 1, initial: 2}
  - {name: r, kind: R, resistance: 1}
bonds: [[s, j], [j, c], [j, r]]
)");
  const std::string run = fmt::format("simulate {} --t-end 10 -o {}", model.string(), (dir_ / "out.csv").string());
  const Result cold = Run(run);
  const Result warm = Run(run);
  ASSERT_EQ(Entries().size(), 1u);
  EXPECT_EQ(cold.code, 1);
  EXPECT_EQ(warm.code, 1);
  for (const char* part : {"t = ", "became", "q_c = ", "log(", "hint:"}) {
    EXPECT_NE(cold.out.find(part), std::string::npos) << part << "\n" << cold.out;
    EXPECT_NE(warm.out.find(part), std::string::npos) << part << "\n" << warm.out;
  }
  auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  EXPECT_EQ(first_line(warm.out), first_line(cold.out));
}

}  // namespace
}  // namespace paynter
