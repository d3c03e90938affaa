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
#include "test_paths.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

using testing::RunPaynter;

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
  const auto r = RunPaynter("linearize " + testing::SourcePath("examples/mass_spring_damper.yaml") + " -o " + prefix);
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
  const auto s = RunPaynter("linearize " + testing::SourcePath("examples/mass_spring_damper.yaml") + " --steady");
  ASSERT_EQ(s.code, 0) << s.out;
  EXPECT_NE(s.out.find("q_spring = 0.2 "), std::string::npos) << s.out;
  fs::remove_all(dir);
}

TEST(LinearCli, BodeWritesCsvAndPlot) {
  const fs::path dir = TempDir();
  const std::string png = (dir / "bode.png").string();
  const auto r = RunPaynter("bode " + testing::SourcePath("examples/rlc.yaml") +
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
  const auto bad =
      RunPaynter("bode " + testing::SourcePath("examples/rlc.yaml") + " --input coil --output v_cap -o " + csv);
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("rlc.yaml"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("supply"), std::string::npos) << bad.out;
  EXPECT_FALSE(fs::exists(csv));
  fs::remove_all(dir);
}

// `--loop-at`: the loop gain of the PI-controlled motor plotted with its
// margins marked, the loop opened written beside the closed loop's matrices,
// and a cut that is no signal an error at its line, with no file written.
TEST(LinearCli, LoopAtWritesTheLoopGainAndItsMargins) {
  const fs::path dir = TempDir();
  const std::string motor = testing::SourcePath("examples/dc_motor_speed_control.yaml");
  const auto r = RunPaynter("bode " + motor + " --loop-at ctl.u -o " + (dir / "loop.png").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_GT(fs::file_size(dir / "loop.png"), 1000u);
  EXPECT_NE(r.out.find("phase margin: 83.8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gain margin: infinite"), std::string::npos) << r.out;
  const auto rows = ReadCsv(dir / "loop.csv");
  ASSERT_EQ(rows.size(), 201u);
  // The loop gain of a type-1 loop: -90 degrees and falling 20 dB per decade far below the crossover.
  EXPECT_NEAR(std::stod(rows[1][2]), -90, 1);
  const auto l = RunPaynter("linearize " + motor + " --loop-at ctl.u -o " + (dir / "pi").string());
  ASSERT_EQ(l.code, 0) << l.out;
  EXPECT_NE(l.out.find("eigenvalues of A (the closed-loop poles)"), std::string::npos) << l.out;
  const auto margins = ReadCsv(dir / "pi_loop_margins.csv");
  ASSERT_EQ(margins.size(), 2u);
  EXPECT_EQ(margins[1][0], "gain");
  EXPECT_NEAR(std::stod(margins[1][1]), 29.6159, 1e-4);
  const auto C = ReadCsv(dir / "pi_loop_C.csv");
  EXPECT_EQ(C[1][0], "-ctl.u");
  for (const char* f : {"pi_loop_A.csv", "pi_loop_B.csv", "pi_loop_D.csv", "pi_loop_poles.csv", "pi_A.csv"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  // A parameter is no signal line: located at its line, nothing written.
  const auto p = RunPaynter("bode " + motor + " --loop-at Vmax -o " + (dir / "bad.png").string());
  EXPECT_NE(p.code, 0);
  EXPECT_NE(p.out.find("dc_motor_speed_control.yaml:12"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("is a parameter"), std::string::npos) << p.out;
  EXPECT_FALSE(fs::exists(dir / "bad.png") || fs::exists(dir / "bad.csv"));
  const auto u = RunPaynter("linearize " + motor + " --loop-at ctl.uu");
  EXPECT_NE(u.code, 0);
  EXPECT_NE(u.out.find("did you mean 'ctl.u'"), std::string::npos) << u.out;
  const auto both = RunPaynter("bode " + motor + " --loop-at ctl.u --output speed -o " + (dir / "both.csv").string());
  EXPECT_NE(both.code, 0);
  EXPECT_NE(both.out.find("--loop-at excludes --input and --output"), std::string::npos) << both.out;
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
  const auto r = RunPaynter("linearize " + model.string() + " --steady -o " + (dir / "x").string());
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
  const auto r = RunPaynter("linearize " + model + " --steady --state pivot_angle=-1.2 --param B=0 -o " + prefix);
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
  const auto at = RunPaynter("linearize " + model + " --at 0.5");
  ASSERT_EQ(at.code, 0) << at.out;
  EXPECT_NE(at.out.find("A (2x2)"), std::string::npos) << at.out;
  // A state given that no configuration can take: a located error, no file.
  const auto off = RunPaynter("linearize " + model + " --state bar_x=3 -o " + (dir / "off").string());
  EXPECT_EQ(off.code, 1) << off.out;
  EXPECT_NE(off.out.find("B1_pendulum_3d.yaml"), std::string::npos) << off.out;
  EXPECT_NE(off.out.find("off the constraint manifold"), std::string::npos) << off.out;
  EXPECT_FALSE(fs::exists(dir / "off_A.csv"));
  fs::remove_all(dir);
}

TEST(LinearCli, CheckListsTheDomains) {
  const auto r = RunPaynter("check " + testing::SourcePath("examples/dc_motor_units.yaml"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("electrical (effort V, flow A): b_supply, b_R, b_L, b_emf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rotational (effort N m, flow 1/s): b_shaft, b_J, b_b"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace paynter
