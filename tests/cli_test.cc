// The command-line program on every example, and its failures.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <regex>
#include <string>
#include <vector>

#include "test_util.h"
#include "test_paths.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

using Result = testing::CommandResult;  // code, out: stdout and stderr
using testing::RunPaynter;

fs::path TempDir() {
  fs::path d = fs::temp_directory_path() / ("paynter_cli_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

const char* kExamples[] = {"examples/B1_pendulum.yaml",       "examples/rlc.yaml",
                           "examples/mass_spring_damper.yaml", "examples/dc_motor_gear.yaml",
                           "examples/B3_quick_return.yaml",    "examples/B4_spatial_arm.yaml",
                           "examples/rigid_body_vector.yaml"};

TEST(Cli, EveryCommandWorksOnEveryExample) {
  const fs::path dir = TempDir();
  for (const char* ex : kExamples) {
    const std::string model = testing::SourcePath(ex);
    const std::string stem = fs::path(ex).stem().string();
    SCOPED_TRACE(ex);
    auto r = RunPaynter("check " + model);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("ok"), std::string::npos) << r.out;
    r = RunPaynter("causality " + model);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("stroke at"), std::string::npos) << r.out;
    r = RunPaynter("equations " + model);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("d"), std::string::npos) << r.out;
    r = RunPaynter("equations --latex " + model);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("\\begin{align}"), std::string::npos) << r.out;
    const std::string csv = (dir / (stem + ".csv")).string();
    r = RunPaynter("simulate " + model + " --t-end 1 --stats -o " + csv);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("rhs evaluations"), std::string::npos) << r.out;
    ASSERT_TRUE(fs::exists(csv));
    std::ifstream in(csv);
    std::string header;
    std::getline(in, header);
    EXPECT_EQ(header.rfind("t,", 0), 0u) << header;
    for (const char* method : {"rk4", "bdf"}) {
      r = RunPaynter("simulate " + model + " --t-end 0.5 --method " + method + " -o " + csv);
      EXPECT_EQ(r.code, 0) << method << ": " << r.out;
    }
    const std::string png = (dir / (stem + ".png")).string();
    r = RunPaynter("plot " + csv + " -o " + png);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_GT(fs::file_size(png), 1000u);
    const std::string svg = (dir / (stem + ".svg")).string();
    r = RunPaynter("draw " + model + " -o " + svg);
    EXPECT_EQ(r.code, 0) << r.out;
    std::ifstream s(svg);
    std::stringstream ss;
    ss << s.rdbuf();
    EXPECT_NE(ss.str().find("<svg"), std::string::npos);
  }
  fs::remove_all(dir);
}

// GiNaC orders the terms of sums by hashes that follow the process's
// addresses: the equations must read the same in every process.
TEST(Cli, EquationsReadTheSameInEveryProcess) {
  const std::string b3 = testing::SourcePath("examples/B3_quick_return.yaml");
  std::vector<std::string> commands = {"equations " + b3 + " --form lagrange2",
                                       "equations " + b3 + " --form lagrange2 --latex",
                                       "equations " + testing::SourcePath("examples/B4_spatial_arm.yaml")};
#if PAYNTER_FIXED_ADDRESS
  // A program at a fixed address also takes the same algebraic path each
  // time: the expanded mechanism's expressions are the same ones, not only
  // printed in the same order.
  commands.push_back("equations " + testing::SourcePath("examples/double_pendulum_library.yaml"));
#endif
  for (const std::string& args : commands) {
    const Result first = RunPaynter(args);
    ASSERT_EQ(first.code, 0) << args << "\n" << first.out;
    for (int run = 1; run < 5; ++run) EXPECT_EQ(RunPaynter(args).out, first.out) << args << ", run " << run;
  }
}

TEST(Cli, B1GammaAtTenSecondsWithinOneMicroradian) {
  const fs::path dir = TempDir();
  const std::string csv = (dir / "b1.csv").string();
  auto r = RunPaynter("simulate " + testing::SourcePath("examples/B1_pendulum.yaml") +
                      " --t-end 10 --rtol 1e-10 --atol 1e-12 -o " + csv);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(csv);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  double t = 0, gamma = 0;
  ASSERT_EQ(std::sscanf(last.c_str(), "%lf,%lf", &t, &gamma), 2) << last;
  EXPECT_EQ(t, 10.0);
  // Reference: the ODE JA gamma'' = -B gamma' - M g L/2 cos(gamma) by RK4, h = 1e-4.
  const double JA = 0.083 + 0.25, B = 10, c = 9.81 * 0.5;
  double x = 0, v = 0;
  auto f = [&](double g, double w, double& dg, double& dw) {
    dg = w;
    dw = (-B * w - c * std::cos(g)) / JA;
  };
  const double h = 1e-4;
  for (int i = 0; i < 100000; ++i) {
    double k1g, k1w, k2g, k2w, k3g, k3w, k4g, k4w;
    f(x, v, k1g, k1w);
    f(x + h / 2 * k1g, v + h / 2 * k1w, k2g, k2w);
    f(x + h / 2 * k2g, v + h / 2 * k2w, k3g, k3w);
    f(x + h * k3g, v + h * k3w, k4g, k4w);
    x += h / 6 * (k1g + 2 * k2g + 2 * k3g + k4g);
    v += h / 6 * (k1w + 2 * k2w + 2 * k3w + k4w);
  }
  EXPECT_NEAR(gamma, x, 1e-6);
  fs::remove_all(dir);
}

TEST(Cli, BadModelExitsNonZeroWithLocatedMessage) {
  const fs::path dir = TempDir();
  const fs::path bad = dir / "bad.yaml";
  std::ofstream(bad) << "elements:\n  - {name: a, kind: Q}\nbonds: []\n";
  auto r = RunPaynter("check " + bad.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("bad.yaml:2:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unknown element kind 'Q'"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

// A newcomer's first mistakes: the version, a mistyped command, a missing
// model file before a missing option, and "-" for the standard output.
TEST(Cli, VersionMistypedCommandMissingFileAndStandardOutput) {
  Result r = RunPaynter("--version");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(std::regex_match(r.out, std::regex("paynter [0-9]+\\.[0-9]+\\.[0-9]+\n"))) << r.out;
  r = RunPaynter("simulat examples/rlc.yaml --t-end 1 -o x.csv");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("paynter: error: 'simulat' is not a command", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("did you mean 'simulate'?"), std::string::npos) << r.out;
  r = RunPaynter("frobnicate");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("paynter --help lists the commands"), std::string::npos) << r.out;
  // The missing file is named, not the --t-end the command also lacks.
  const fs::path dir = TempDir();
  r = RunPaynter("simulate " + (dir / "nonexist.yaml").string() + " -o " + (dir / "x.csv").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.rfind((dir / "nonexist.yaml").string() + ": error: cannot open the model file", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("--t-end"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "x.csv"));
  // -o -: the rows on the standard output, no file named "-".
  const std::string cmd = "cd " + dir.string() + " && " + std::string(PAYNTER_EXE) + " simulate " +
                          testing::SourcePath("examples/rlc.yaml") + " --t-end 0.002 --dt-out 0.001 -o - 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(pclose(p), 0);
  EXPECT_EQ(out.rfind("t,current,v_cap,charge,v_res\n0,0,0,0,0\n0.001,", 0), 0u) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 4) << out;
  EXPECT_FALSE(fs::exists(dir / "-"));
  fs::remove_all(dir);
}

// A model that carries its run settings (`simulation:`) runs alone:
// `paynter simulate FILE` writes <FILE's name>.csv in the current directory,
// as the same settings given as options do; an option given wins.
TEST(Cli, ModelCarriesItsRunSettings) {
  const fs::path dir = TempDir() / "run_settings";
  fs::create_directories(dir);
  const std::string rlc = testing::ReadFileBytes(testing::SourcePath("examples/rlc.yaml"));
  auto model = [&](const std::string& name, const std::string& settings) {
    std::ofstream(dir / name) << rlc << settings;
    return (dir / name).string();
  };
  const std::string carried =
      model("carried.yaml", "simulation:\n  t_end: 0.004\n  dt_out: 0.001\n  method: bdf\n  rtol: 1e-10\n"
                            "  atol: 1e-12\n");
  const std::string in_dir = "cd " + dir.string() + " && ";
  Result r = RunPaynter("simulate " + carried + " -o " + (dir / "ignored.csv").string() + " --t-end 0.002");
  EXPECT_EQ(r.code, 0) << r.out;
  std::string out = testing::ReadFileBytes((dir / "ignored.csv").string());
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 4) << out;  // --t-end 0.002 over the model's 0.004
  const std::string cmd = in_dir + PAYNTER_EXE + " simulate carried.yaml 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[512];
  std::string said;
  while (fgets(buf, sizeof buf, p)) said += buf;
  EXPECT_EQ(pclose(p), 0) << said;
  ASSERT_TRUE(fs::exists(dir / "carried.csv")) << said;
  r = RunPaynter("simulate " + testing::SourcePath("examples/rlc.yaml") +
                 " --t-end 0.004 --dt-out 0.001 --method bdf --rtol 1e-10 --atol 1e-12 -o " +
                 (dir / "given.csv").string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(testing::ReadFileBytes((dir / "carried.csv").string()), testing::ReadFileBytes((dir / "given.csv").string()));
  // A bad setting is an error at its line; no end time from either is one too.
  struct Case {
    std::string settings, says;
  };
  const int line = static_cast<int>(std::count(rlc.begin(), rlc.end(), '\n')) + 2;
  for (const Case& c : {Case{"simulation:\n  t_end: ten\n", "the run setting 't_end' is not a number"},
                        Case{"simulation:\n  method: euler\n", "the run setting 'method'"},
                        Case{"simulation:\n  t_ned: 1\n", "unknown key 't_ned' in the run settings"},
                        Case{"simulation:\n  max_steps: 2.5\n", "'max_steps' is not a whole number"}}) {
    const std::string bad = model("bad.yaml", c.settings);
    r = RunPaynter("simulate " + bad + " --dt-out 0.001 -o " + (dir / "bad.csv").string());
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_EQ(r.out.rfind(bad + ":" + std::to_string(line) + ":", 0), 0u) << c.settings << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir / "bad.csv"));
  }
  r = RunPaynter("simulate " + testing::SourcePath("examples/rlc.yaml") + " -o " + (dir / "bad.csv").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("error: no end time for the run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("simulation: {t_end: ...}"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "bad.csv"));
  fs::remove_all(dir);
}

// compare on a model without constraints says so, naming the model file once
// (each method's own error was nested in it, file and all).
TEST(Cli, CompareOnAModelWithoutConstraintsSaysSo) {
  const std::string b1 = testing::SourcePath("examples/B1_pendulum.yaml");
  const Result r = RunPaynter("compare " + b1 + " --t-end 1");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.rfind(b1 + ": error: compare: the model has no constraints", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("hint:     simulate it: paynter simulate " + b1), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("<model>"), std::string::npos) << r.out;
}

TEST(Cli, FailedSimulationLeavesNoOutputFile) {
  const fs::path dir = TempDir();
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
  auto r = RunPaynter("simulate " + model.string() + " --t-end 2 -o " + csv.string());
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("q_c"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(csv));
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().extension(), ".yaml") << e.path();
  fs::remove_all(dir);
}

TEST(Cli, UsageErrorsExitNonZero) {
  EXPECT_NE(RunPaynter("simulate").code, 0);
  EXPECT_NE(RunPaynter("frobnicate x").code, 0);
  auto r =
      RunPaynter("simulate " + testing::SourcePath("examples/rlc.yaml") + " --t-end 1 --method euler -o /tmp/x.csv");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("euler"), std::string::npos) << r.out;
  r = RunPaynter("simulate " + testing::SourcePath("examples/rlc.yaml") + " --t-end -1 -o /tmp/x.csv");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("t_end"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

std::string LastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

TEST(Cli, ExpandWritesAScalarModelThatSimulatesAlike) {
  const fs::path dir = TempDir();
  const std::string scalar = (dir / "scalar.yaml").string();
  auto r = RunPaynter("expand " + testing::SourcePath("examples/rigid_body_vector.yaml") + " -o " + scalar);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string a = (dir / "a.csv").string(), b = (dir / "b.csv").string();
  ASSERT_EQ(
      RunPaynter("simulate " + testing::SourcePath("examples/rigid_body_vector.yaml") + " --t-end 2 -o " + a).code, 0);
  ASSERT_EQ(RunPaynter("simulate " + scalar + " --t-end 2 -o " + b).code, 0);
  EXPECT_EQ(LastLine(a), LastLine(b));
  // A multibody model expands too, into a file with no multibody section.
  const std::string b4 = (dir / "b4.yaml").string();
  r = RunPaynter("expand " + testing::SourcePath("examples/B4_spatial_arm.yaml") + " -o " + b4);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(b4);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str().find("multibody:"), std::string::npos);
  EXPECT_NE(ss.str().find("J3_f1"), std::string::npos);
  r = RunPaynter("check " + b4);
  EXPECT_EQ(r.code, 0) << r.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

// Mechanisms: check's redundancy report, every --constraints method, compare.
// Lagrange's equations of a mechanism written with bodies and joints are in
// its joint coordinates: for B1 one equation in the pivot's angle, no
// constraint force, no body momentum.
TEST(CliMechanisms, Lagrange2OfThePendulumIsOneEquationInTheJointAngle) {
  const std::string model = testing::SourcePath("examples/B1_pendulum_3d.yaml");
  Result r = RunPaynter("equations --form lagrange2 " + model);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("2 states"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Lagrange's equations of the second kind (LaCAP): generalized velocities v_pivot_angledot"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("d/dt pivot_angle = v_pivot_angledot"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cos(pivot_angle)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("lambda_"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("p_bar_"), std::string::npos) << r.out;
  const fs::path dir = TempDir();
  r = RunPaynter("simulate " + model + " --form lagrange2 --constraints parasitic --t-end 0.1 -o " +
                 (dir / "x.csv").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("--constraints parasitic does not combine with --form lagrange2"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

TEST(CliMechanisms, CheckSimulateAndCompareTheHyperstaticSliderCrank) {
  const fs::path dir = TempDir();
  const std::string model = testing::SourcePath("examples/B2_slider_crank_hyperstatic.yaml");
  auto r = RunPaynter("check " + model);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("18 coordinates (velocities of the bodies), 20 constraint equations, rank 17"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("joint P: 5 constraint(s), 3 redundant"), std::string::npos) << r.out;
  for (const char* m : {"lagrange-multipliers", "minimal-coordinates", "zcp", "parasitic"}) {
    SCOPED_TRACE(m);
    const fs::path csv = dir / (std::string("b2_") + m + ".csv");
    r = RunPaynter("simulate " + model + " --t-end 0.5 --stats --constraints " + m + " -o " + csv.string());
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(fs::exists(csv));
    EXPECT_NE(r.out.find(std::string("constraints: ") + m), std::string::npos) << r.out;
  }
  r = RunPaynter("simulate " + model + " --t-end 0.1 -o " + (dir / "auto.csv").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("constraints: lagrange-multipliers (choose with --constraints)"), std::string::npos) << r.out;
  r = RunPaynter("simulate " + model + " --t-end 0.1 --constraints lagrange -o " + (dir / "x.csv").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("unknown constraint method 'lagrange'"), std::string::npos) << r.out;
  r = RunPaynter("simulate " + model + " --t-end 0.1 --form lagrange2 -o " + (dir / "l.csv").string());
  EXPECT_EQ(r.code, 1) << r.out;
  // A closed chain has no independent joint coordinates for the second kind: the loop is named.
  EXPECT_NE(r.out.find("joint 'P' closes the kinematic loop O - A - B - P"), std::string::npos) << r.out;
  EXPECT_LT(r.out.size(), 800u) << r.out;  // no list of internal elements
  const std::string prefix = (dir / "cmp").string();
  r = RunPaynter("compare " + model + " --t-end 0.5 -o " + prefix + " --plot v_piston");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* f : {"cmp.md", "cmp.csv", "cmp_v_piston.csv", "cmp_v_piston.png"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  for (const char* m : {"| minimal-coordinates |", "| lagrange-multipliers |", "| parasitic |", "| zcp |"})
    EXPECT_NE(r.out.find(m), std::string::npos) << m << "\n" << r.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

// A CSV's columns by name.
std::map<std::string, std::vector<double>> ReadColumns(const std::string& path) {
  const testing::CsvTable table = testing::ReadCsvTable(path);
  std::map<std::string, std::vector<double>> cols;
  for (const auto& row : table.rows)
    for (size_t i = 0; i < row.size() && i < table.columns.size(); ++i) cols[table.columns[i]].push_back(row[i]);
  return cols;
}

// The lines of check's mechanism analysis: from "mechanism:" to the joints'
// redundant directions (the start's round-off errors left out).
std::string MechanismAnalysis(const std::string& out) {
  const size_t from = out.find("mechanism:"), to = out.find("constraint errors at the start");
  return from == std::string::npos || to == std::string::npos ? "" : out.substr(from, to - from);
}

// The expanded file keeps the constraint rows' position forms, joints and
// directions and parasitic springs, the joint coordinates' position forms,
// the held states and the assemble flag: every method simulates it as it
// simulates the mechanism file, and check finds the same analysis.
TEST(CliMechanisms, ExpandedHyperstaticSliderCrankSimulatesAlikeByEveryMethod) {
  const fs::path dir = TempDir();
  const std::string model = testing::SourcePath("examples/B2_slider_crank_hyperstatic.yaml");
  const std::string scalar = (dir / "b2.yaml").string();
  auto r = RunPaynter("expand " + model + " -o " + scalar);
  ASSERT_EQ(r.code, 0) << r.out;
  auto a = RunPaynter("check " + model), b = RunPaynter("check " + scalar);
  ASSERT_EQ(a.code, 0) << a.out;
  ASSERT_EQ(b.code, 0) << b.out;
  EXPECT_NE(MechanismAnalysis(a.out).find("joint P: 5 constraint(s), 3 redundant"), std::string::npos) << a.out;
  EXPECT_EQ(MechanismAnalysis(a.out), MechanismAnalysis(b.out));
  for (const char* m : {"lagrange-multipliers", "minimal-coordinates", "zcp", "parasitic"}) {
    SCOPED_TRACE(m);
    // zcp's own error at rtol 1e-10 is about 1e-8 on the joint forces: it
    // runs at 1e-12 for two runs to agree to 1e-10.
    const std::string tol = std::string(m) == "zcp" ? " --rtol 1e-12 --atol 1e-14" : " --rtol 1e-10 --atol 1e-12";
    const std::string ca = (dir / (std::string("a_") + m + ".csv")).string();
    const std::string cb = (dir / (std::string("b_") + m + ".csv")).string();
    r = RunPaynter("simulate " + model + " --t-end 1 --constraints " + m + tol + " -o " + ca);
    ASSERT_EQ(r.code, 0) << r.out;
    r = RunPaynter("simulate " + scalar + " --t-end 1 --constraints " + m + tol + " -o " + cb);
    ASSERT_EQ(r.code, 0) << r.out;
    const auto x = ReadColumns(ca), y = ReadColumns(cb);
    ASSERT_EQ(x.size(), 17u);  // t, the nine outputs of B2, seven joint forces
    for (const auto& [name, col] : x) {
      ASSERT_EQ(y.count(name), 1u) << name;
      ASSERT_EQ(y.at(name).size(), col.size()) << name;
      double scale = 1, diff = 0;
      for (size_t i = 0; i < col.size(); ++i) {
        scale = std::max(scale, 1 + std::fabs(col[i]));
        diff = std::max(diff, std::fabs(col[i] - y.at(name)[i]));
      }
      EXPECT_LE(diff, 1e-10 * scale) << name;
    }
  }
  fs::remove_all(dir);
}

// A hand-written model may give the same keys; they belong where they mean something.
TEST(CliMechanisms, ConstraintKeysAndHeldStatesAreChecked) {
  const fs::path dir = TempDir();
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream((dir / name).string()) << text;
    return (dir / name).string();
  };
  const std::string base = R"(
parameters: {m: 1}
elements:
  - {name: mass, kind: I, inertance: m}
  - {name: v, kind: "1"}
  - {name: lam, kind: Se, constraint: 0, position: x, joint: rail, direction: along x, parasitic_stiffness: 1e6}
bonds:
  - [v, mass]
  - [v, lam]
displacements:
  - {name: x, of: v, position: x, period: 0}
)";
  auto r = RunPaynter("check " + write("ok.yaml", base + "assembly_held: [x, p_mass]\nassemble: true\n"));
  EXPECT_EQ(r.code, 0) << r.out;
  r = RunPaynter("check " + write("held.yaml", base + "assembly_held: [x, p_mas]\n"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("'assembly_held' lists 'p_mas', which is not a state"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p_mass"), std::string::npos) << r.out;
  std::string joint_on_i = base;
  joint_on_i.replace(joint_on_i.find("inertance: m}"), 13, "inertance: m, joint: rail}");
  r = RunPaynter("check " + write("joint.yaml", joint_on_i));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("'joint:' belongs to a constraint source"), std::string::npos) << r.out;
  r = RunPaynter("check " + write("assemble.yaml", base + "assemble: yes please\n"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("'assemble' is true or false"), std::string::npos) << r.out;
  std::string period = base;
  period.replace(period.find("period: 0"), 9, "period: -1");
  r = RunPaynter("check " + write("period.yaml", period));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("'period' is a number >= 0"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace paynter

namespace paynter {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// causality, equations and draw show the model as a constraint method works
// on it. B2's hyperstatic joint set: 4 joints of 5 constrained directions
// each (20 rows, rank 17), 18 momenta and 25 position-like states.
// How equations print for a reader: an instance path's parts upright and
// joined by its dots (not \char"2E), text rows and the continuation rows of a
// long equation unnumbered (\notag: one number per equation, on its last
// row), and a linear block's matrix without its zero entries.
TEST(CliPrinting, LatexPathsUnnumberedTextRowsAndNoZeroEntries) {
  auto r = RunPaynter("equations --latex " + testing::SourcePath("examples/dc_motor_load.yaml"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("\\char"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p_{{\\mathrm{motor}.\\mathrm{rotor}}}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("{\\mathrm{gear}.\\mathrm{N}}^{2}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\\text{coupled by derivative causality, linear} \\notag \\\\"), std::string::npos) << r.out;
  // Every row followed by a continuation row carries \notag.
  std::istringstream lines(r.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  int continuations = 0;
  for (size_t i = 1; i < rows.size(); ++i)
    if (rows[i].rfind("  &\\quad", 0) == 0) {
      ++continuations;
      EXPECT_NE(rows[i - 1].find("\\notag \\\\"), std::string::npos) << rows[i - 1];
    }
  EXPECT_GT(continuations, 0) << r.out;

  // B4's constraint block: 15 x 15 entries, 90 of them zero.
  const std::string b4 = testing::SourcePath("examples/B4_spatial_arm.yaml");
  for (const char* flag : {"", "--latex "}) {
    SCOPED_TRACE(flag);
    r = RunPaynter(std::string("equations ") + flag + b4);
    ASSERT_EQ(r.code, 0) << r.out;
    const bool tex = *flag != 0;
    const std::string entry = tex ? "  M_{" : "  M[";
    const size_t listed = Count(r.out, entry);
    EXPECT_GT(listed, 15u) << r.out;
    EXPECT_LT(listed, 15u * 15u) << r.out;  // (135 of them are not zero)
    std::istringstream rows_of_b4(r.out);
    for (std::string line; std::getline(rows_of_b4, line);)
      if (line.rfind(entry, 0) == 0) {
        const std::string zero = tex ? "&= 0 \\\\" : "= 0";
        EXPECT_FALSE(line.size() >= zero.size() && line.compare(line.size() - zero.size(), zero.size(), zero) == 0)
            << line;
      }
    EXPECT_NE(r.out.find(tex ? "\\text{other entries of } M = 0" : "the entries of M not listed are 0"),
              std::string::npos)
        << r.out;
  }
}

TEST(CliMechanisms, CausalityEquationsAndDrawShowTheModelOfAConstraintMethod) {
  const fs::path dir = TempDir();
  const std::string model = testing::SourcePath("examples/B2_slider_crank_hyperstatic.yaml");
  auto plain = RunPaynter("equations " + model);
  ASSERT_EQ(plain.code, 0) << plain.out;
  EXPECT_NE(plain.out.find(": 43 states"), std::string::npos) << plain.out.substr(0, 300);
  // lagrange-multipliers is the model as it is.
  auto r = RunPaynter("equations " + model + " --constraints lagrange-multipliers");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("constraints:"), std::string::npos) << r.out.substr(0, 300);
  EXPECT_EQ(Count(r.out, "\n"), Count(plain.out, "\n"));
  EXPECT_NE(r.out.find(": 43 states"), std::string::npos) << r.out.substr(0, 300);

  // parasitic: one spring (a state) and one damper per constraint row.
  r = RunPaynter("equations " + model + " --constraints parasitic");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("constraints: parasitic: 20 constraint sources replaced"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": 63 states"), std::string::npos) << r.out.substr(0, 600);  // 43 + 20 stretches
  r = RunPaynter("causality " + model + " --constraints parasitic");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("DAE index of the model: 0"), std::string::npos) << r.out;  // an ODE: no derivative causality
  const std::string dot = (dir / "parasitic.dot").string();
  r = RunPaynter("draw " + model + " --constraints parasitic --expand -o " + dot);  // every scalar element
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(dot);
  std::stringstream drawn;
  drawn << in.rdbuf();
  size_t springs = 0, dampers = 0;
  for (const char* joint : {"O", "A", "B", "P"})
    for (int k = 1; k <= 5; ++k)
      for (const char* fm : {"f", "m"}) {
        const std::string s = std::string(joint) + "_" + fm + std::to_string(k);
        springs += Count(drawn.str(), "label=\"C:" + s + "_k");
        dampers += Count(drawn.str(), "label=\"R:" + s + "_c");
      }
  EXPECT_EQ(springs, 20u);
  EXPECT_EQ(dampers, 20u);

  // zcp: the joint efforts are break variables; the DAE has a flow and a
  // position constraint per row.
  r = RunPaynter("equations " + model + " --constraints zcp");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("constraints: zcp: 20 joint efforts are break variables"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": 43 states"), std::string::npos);
  EXPECT_NE(r.out.find("flow constraints (20; index 2)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("position constraints (20;"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 = f_P_m3    (P: rotation along the axis [1, 0, 0] of ground)"), std::string::npos) << r.out;
  r = RunPaynter("causality " + model + " --constraints zcp");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("(source O_f1)"), std::string::npos) << r.out;  // the break variable imposes the effort
  EXPECT_NE(r.out.find("flow constraints (20; index 2)"), std::string::npos) << r.out;
  const std::string zdot = (dir / "zcp.dot").string();
  r = RunPaynter("draw " + model + " --constraints zcp --expand -o " + zdot);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream zin(zdot);
  std::stringstream zdrawn;
  zdrawn << zin.rdbuf();
  EXPECT_EQ(Count(zdrawn.str(), "\\nzcp_"), 20u);

  // minimal-coordinates: the partition at the start. Mobility 1: one
  // independent momentum, 17 dependent (the rank); 20 dependent positions
  // (17 from the joints, one per body's quaternion norm).
  r = RunPaynter("equations " + model + " --constraints minimal-coordinates");
  ASSERT_EQ(r.code, 0) << r.out;
  const size_t at = r.out.find("independent (");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string independent = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_EQ(Count(independent, "p_"), 1u) << independent;
  EXPECT_NE(r.out.find("dependent momenta (17,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dependent positions (20,"), std::string::npos) << r.out;
  r = RunPaynter("equations --latex " + model + " --constraints minimal-coordinates");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("% dependent momenta (17,"), std::string::npos) << r.out;

  // A model without joints has nothing to show; an unknown method is named.
  r = RunPaynter("equations " + testing::SourcePath("examples/rlc.yaml") + " --constraints zcp");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("--constraints zcp: the model has no joint constraint"), std::string::npos) << r.out;
  r = RunPaynter("draw " + testing::SourcePath("examples/rlc.yaml") + " --constraints parasitic -o " + zdot);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("no joint constraint to relax"), std::string::npos) << r.out;
  r = RunPaynter("causality " + model + " --constraints rigid");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("unknown constraint method 'rigid'"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace paynter
