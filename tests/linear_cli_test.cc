// `paynter linearize`, `paynter bode` and the domains of `paynter check` from
// the command line: files written, numbers read back, failures located.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

testing::CommandResult RunCli(const std::string& args) {
  return testing::RunCommand(std::string(PAYNTER_EXE) + " " + args);
}

fs::path TempDir() {
  const fs::path d = fs::temp_directory_path() / ("paynter_linear_cli_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

std::vector<std::vector<std::string>> ReadCsv(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> row;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) row.push_back(c);
    rows.push_back(row);
  }
  return rows;
}

TEST(LinearCli, LinearizeWritesExactMatrices) {
  const fs::path dir = TempDir();
  const std::string prefix = (dir / "msd").string();
  const auto r = RunCli("linearize " + testing::SourcePath("examples/mass_spring_damper.yaml") + " -o " + prefix);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(" 0.2 "), std::string::npos) << r.out;      // damping ratio c / (2 sqrt(k m))
  EXPECT_NE(r.out.find("4.89898"), std::string::npos) << r.out;   // sqrt(k/m - (c/2m)^2)
  const auto A = ReadCsv(prefix + "_A.csv");
  ASSERT_EQ(A.size(), 3u);
  EXPECT_EQ(A[0], (std::vector<std::string>{"name", "p_mass", "q_spring"}));
  EXPECT_EQ(std::stod(A[1][1]), -2.0);   // -c/m
  EXPECT_EQ(std::stod(A[1][2]), -50.0);  // -k
  EXPECT_EQ(std::stod(A[2][1]), 0.5);    // 1/m
  const auto B = ReadCsv(prefix + "_B.csv");
  EXPECT_EQ(B[0], (std::vector<std::string>{"name", "force"}));
  EXPECT_EQ(std::stod(B[1][1]), 1.0);
  EXPECT_TRUE(fs::exists(prefix + "_C.csv") && fs::exists(prefix + "_D.csv") && fs::exists(prefix + "_eigenvalues.csv"));
  // About the steady state x = F/k.
  const auto s = RunCli("linearize " + testing::SourcePath("examples/mass_spring_damper.yaml") + " --steady");
  ASSERT_EQ(s.code, 0) << s.out;
  EXPECT_NE(s.out.find("q_spring = 0.2 "), std::string::npos) << s.out;
  fs::remove_all(dir);
}

TEST(LinearCli, BodeWritesCsvAndPlot) {
  const fs::path dir = TempDir();
  const std::string png = (dir / "bode.png").string();
  const auto r = RunCli("bode " + testing::SourcePath("examples/rlc.yaml") +
                        " --input supply --output v_cap --from 10 --to 1000 --points 3 -o " + png);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_GT(fs::file_size(png), 1000u);
  const auto rows = ReadCsv(dir / "bode.csv");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"omega", "magnitude_db", "phase_deg"}));
  const double R = 10, L = 0.1, C = 1e-3;
  for (size_t i = 1; i < rows.size(); ++i) {
    const double w = std::stod(rows[i][0]);
    const std::complex<double> s(0, w), h = 1.0 / (L * C * s * s + R * C * s + 1.0);
    EXPECT_NEAR(std::stod(rows[i][1]), 20 * std::log10(std::abs(h)), 1e-10);
    EXPECT_NEAR(std::stod(rows[i][2]), std::arg(h) * 180 / M_PI, 1e-10);
  }
  // Unknown input: a located error, no file.
  const std::string csv = (dir / "none.csv").string();
  const auto bad = RunCli("bode " + testing::SourcePath("examples/rlc.yaml") + " --input coil --output v_cap -o " + csv);
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("rlc.yaml"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("supply"), std::string::npos) << bad.out;
  EXPECT_FALSE(fs::exists(csv));
  fs::remove_all(dir);
}

TEST(LinearCli, SteadyStateFailureIsAnError) {
  const fs::path dir = TempDir();
  const fs::path model = dir / "free.yaml";
  std::ofstream(model) << "parameters: {m: 2, F: 1}\n"
                          "elements:\n"
                          "  - {name: force, kind: Se, effort: F}\n"
                          "  - {name: v, kind: \"1\"}\n"
                          "  - {name: mass, kind: I, inertance: m}\n"
                          "bonds: [[force, v], [v, mass]]\n";
  const auto r = RunCli("linearize " + model.string() + " --steady -o " + (dir / "x").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("free.yaml"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no steady state"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "x_A.csv"));
  fs::remove_all(dir);
}

// A mechanism: the states are its independent coordinates, named in the
// output and in the CSV files; V maps them onto all the model's states.
TEST(LinearCli, MechanismIsLinearizedInIndependentCoordinates) {
  const fs::path dir = TempDir();
  const std::string prefix = (dir / "b1").string(), model = testing::SourcePath("examples/B1_pendulum_3d.yaml");
  const auto r = RunCli("linearize " + model + " --steady --state pivot_angle=-1.2 --param B=0 -o " + prefix);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("states (2, independent coordinates on the constraints): p_bar_Jz, pivot_angle"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dependent states (12"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3.83793"), std::string::npos) << r.out;  // sqrt(M g L / (2 JA))
  const auto A = ReadCsv(prefix + "_A.csv");
  ASSERT_EQ(A.size(), 3u);
  EXPECT_EQ(A[0], (std::vector<std::string>{"name", "p_bar_Jz", "pivot_angle"}));
  const auto V = ReadCsv(prefix + "_V.csv");
  EXPECT_EQ(V.size(), 15u);  // a header and the 14 states
  // Along a trajectory (--at): still two states.
  const auto at = RunCli("linearize " + model + " --at 0.5");
  ASSERT_EQ(at.code, 0) << at.out;
  EXPECT_NE(at.out.find("A (2x2)"), std::string::npos) << at.out;
  // A state given that no configuration can take: a located error, no file.
  const auto off = RunCli("linearize " + model + " --state bar_x=3 -o " + (dir / "off").string());
  EXPECT_EQ(off.code, 1) << off.out;
  EXPECT_NE(off.out.find("B1_pendulum_3d.yaml"), std::string::npos) << off.out;
  EXPECT_NE(off.out.find("off the constraint manifold"), std::string::npos) << off.out;
  EXPECT_FALSE(fs::exists(dir / "off_A.csv"));
  fs::remove_all(dir);
}

TEST(LinearCli, CheckListsTheDomains) {
  const auto r = RunCli("check " + testing::SourcePath("examples/dc_motor_units.yaml"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("electrical (effort V, flow A): b_supply, b_R, b_L, b_emf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rotational (effort N m, flow 1/s): b_shaft, b_J, b_b"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace paynter
