// Closed kinematic chains simulated by the methods of paynter/constrained.h,
// against references that owe nothing to paynter's bond graphs:
//   - examples/fourbar.yaml, a four-bar of revolute joints (hyperstatic in
//     3D): redundancy counts, the closed-form kinematics of b2_reference.h at
//     every output, the energy balance of the conservative linkage, drift;
//   - the same file as a parallelogram (a change-point linkage), which passes
//     through its singular configuration: does the motion keep its branch?
//   - examples/make_nfourbar.py's N four-bar benchmark with a small N: one
//     pendulum-like degree of freedom, its equation integrated here;
//   - examples/bricard.yaml, a line-symmetric Bricard 6R linkage: mobility 1
//     where Gruebler counts 0, checked here by a finite motion of its
//     Denavit-Hartenberg loop as well.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "b2_reference.h"
#include "test_util.h"

namespace paynter {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The model text with parameters (lines "  name: value" under `parameters:`) replaced.
std::string WithParameters(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [name, value] : values) {
    const std::regex line("\n  " + name + ": [^\n#]*");
    if (!std::regex_search(text, line)) throw std::runtime_error("no parameter " + name);
    text = std::regex_replace(text, line, "\n  " + name + ": " + value + " ", std::regex_constants::format_first_only);
  }
  return text;
}

CompiledModel CompileText(const std::string& text, const std::string& label) {
  Model m = LoadModelFromString(text, label);
  return CompiledModel(BuildEquations(m, AssignCausality(m)));
}

// A model text compiled for a method: parasitic rewrites the joints, which
// LoadModel does from a file.
CompiledModel CompileFor(const std::string& text, const std::string& label, ConstraintMethod method) {
  if (method != ConstraintMethod::kParasitic) return CompileText(text, label);
  const std::string path = ::testing::TempDir() + label;
  std::ofstream(path) << text;
  Model m = LoadModel(path, {.method = method});
  return CompiledModel(BuildEquations(m, AssignCausality(m)));
}

struct MethodRun {
  Solution solution;
  ConstrainedReport report;
  double seconds = 0;
  std::string error;  // what SimulateConstrained threw, if it did
};

MethodRun RunMethod(const CompiledModel& cm, ConstraintMethod method, double t_end, double rtol, double atol,
              double dt_out = 0, bool assemble = false) {
  SolverOptions so;
  so.method = method == ConstraintMethod::kParasitic ? Method::kBDF : Method::kDopri5;
  so.t_end = t_end;
  so.rtol = rtol;
  so.atol = atol;
  so.dt_out = dt_out;
  ConstrainedOptions co;
  co.method = method;
  co.assemble = assemble;
  MethodRun r;
  const auto start = std::chrono::steady_clock::now();
  try {
    r.solution = SimulateConstrained(cm, so, co, &r.report);
  } catch (const Error& e) {
    r.error = e.what();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

const ConstraintMethod kRigid[] = {ConstraintMethod::kLagrangeMultipliers, ConstraintMethod::kMinimalCoordinates};
const ConstraintMethod kAll[] = {ConstraintMethod::kLagrangeMultipliers, ConstraintMethod::kMinimalCoordinates,
                                 ConstraintMethod::kParasitic};
const char* Name(ConstraintMethod m) {
  return m == ConstraintMethod::kMinimalCoordinates ? "minimal" : m == ConstraintMethod::kParasitic ? "parasitic" : "lagrange";
}

// An error message for the log: its start and its end (the hint).
std::string Brief(const std::string& msg) {
  return msg.size() <= 1200 ? msg : msg.substr(0, 300) + " [...] " + msg.substr(msg.size() - 900);
}

double Wrap(double a) { return std::remainder(a, 2 * kPi); }

int CountRedundant(const ConstraintAnalysis& a, const std::string& joint_prefix) {
  int n = 0;
  for (const auto& r : a.rows)
    if (r.redundant) {
      ++n;
      EXPECT_EQ(r.joint.rfind(joint_prefix, 0), 0u) << r.joint << " " << r.direction;
    }
  return n;
}

// ---- The four-bar of examples/fourbar.yaml -------------------------------------

const char* kFourBar = "examples/fourbar.yaml";

struct FourBarParams {
  double a = 0.2, b = 0.6, c = 0.4, d = 0.5, rho = 2, g = 9.81;
};

// Largest differences of the coupler and rocker angles, and of the rocker's
// rate, to the closed form (branch `branch`, or for branch 0 the branch on
// which B lies at each output, for a parallelogram: see ParallelogramBranch).
struct KinematicError {
  double angles = 0, rate = 0;
  int samples = 0;
};

KinematicError FourBarKinematicError(const Solution& s, const testing::FourBar& f, int branch) {
  const auto t = s.Column("t"), th2 = s.Column("crank_angle"), th3 = s.Column("coupler_angle"),
             th4 = s.Column("rocker_angle"), w2 = s.Column("crank_wz"), w4 = s.Column("rocker_wz");
  KinematicError e;
  for (size_t i = 0; i < t.size(); ++i) {
    const auto pose = testing::FourBarPosition(f, th2[i], branch);
    if (!pose) {
      e.angles = INFINITY;
      continue;
    }
    e.angles = std::max({e.angles, std::fabs(Wrap(th3[i] - pose->theta3)), std::fabs(Wrap(th4[i] - pose->theta4))});
    const auto rates = testing::FourBarVelocity(f, th2[i], pose->theta3, pose->theta4, w2[i]);
    e.rate = std::max(e.rate, std::fabs(w4[i] - rates.omega4));
    ++e.samples;
  }
  return e;
}

// Kinetic and potential energy of the four-bar from its outputs (uniform rods).
std::vector<double> FourBarEnergy(const Solution& s, const FourBarParams& p, double* kinetic0) {
  struct Link {
    const char* name;
    double length;
  };
  const Link links[] = {{"crank", p.a}, {"coupler", p.b}, {"rocker", p.c}};
  std::vector<double> e(s.rows.size(), 0.0);
  *kinetic0 = 0;
  for (const auto& l : links) {
    const std::string n = l.name;
    const auto vx = s.Column(n + "_vx"), vy = s.Column(n + "_vy"), wz = s.Column(n + "_wz"), y = s.Column(n + "_y");
    const double m = p.rho * l.length, I = m * l.length * l.length / 12;
    for (size_t i = 0; i < e.size(); ++i) {
      const double T = 0.5 * m * (vx[i] * vx[i] + vy[i] * vy[i]) + 0.5 * I * wz[i] * wz[i];
      e[i] += T + m * p.g * y[i];
      if (i == 0) *kinetic0 += T;
    }
  }
  return e;
}

TEST(FourBar, ThreeOfItsTwentyConstraintsAreRedundant) {
  CompiledModel cm = CompileText(testing::ReadSourceFile(kFourBar), kFourBar);
  ModelWorkspace cm_ws(cm);
  const ConstraintAnalysis a = AnalyzeConstraints(cm_ws, 0, cm.initial_state());
  std::printf("%s", a.ToText().c_str());
  EXPECT_EQ(a.coordinates, 18);
  EXPECT_EQ(a.constraints, 20);
  EXPECT_EQ(a.rank, 17);
  EXPECT_EQ(a.mobility, 1);
  EXPECT_EQ(a.grubler, -2);
  EXPECT_EQ(CountRedundant(a, "D"), 3);  // the last joint of the loop, in model order
  // The start computed in the file is on the joints.
  EXPECT_LT(a.max_position_error, 1e-12);
  EXPECT_LT(a.max_velocity_error, 1e-12);
}

TEST(FourBar, KinematicsHoldForEveryMethod) {
  // Driven and damped: the kinematics must hold whatever the dynamics.
  const std::string text = WithParameters(testing::ReadSourceFile(kFourBar), {{"tau", "2"}, {"bO", "0.2"}});
  CompiledModel cm = CompileText(text, "fourbar_driven.yaml");
  const testing::FourBar f{0.2, 0.6, 0.4, 0.5};
  for (ConstraintMethod m : kRigid) {
    const MethodRun r = RunMethod(cm, m, 10, 1e-10, 1e-12);
    ASSERT_TRUE(r.error.empty()) << Name(m) << ": " << r.error;
    const KinematicError e = FourBarKinematicError(r.solution, f, +1);
    const auto th2 = r.solution.Column("crank_angle");
    std::printf("four-bar, %s: %d outputs, crank %.3f -> %.3f rad, |d angle| %.2e rad, |d rocker rate| %.2e rad/s, "
                "%.2f s\n",
                Name(m), e.samples, th2.front(), th2.back(), e.angles, e.rate, r.seconds);
    EXPECT_EQ(e.samples, static_cast<int>(th2.size()));
    EXPECT_LT(e.angles, 1e-8);
    EXPECT_LT(e.rate, 1e-7);
    EXPECT_GT(th2.back() - th2.front(), 2 * kPi);  // the crank turns fully
  }
}

TEST(FourBar, ConservativeLinkageKeepsItsEnergy) {
  CompiledModel cm = CompileText(testing::ReadSourceFile(kFourBar), kFourBar);
  for (ConstraintMethod m : kRigid) {
    const MethodRun r = RunMethod(cm, m, 20, 1e-10, 1e-12);
    ASSERT_TRUE(r.error.empty()) << Name(m) << ": " << r.error;
    double T0 = 0;
    const auto E = FourBarEnergy(r.solution, FourBarParams{}, &T0);
    double dE = 0;
    for (double e : E) dE = std::max(dE, std::fabs(e - E.front()));
    std::printf("four-bar, %s: energy %.6f J, kinetic at start %.6f J, |dE| / T0 = %.2e over 20 s, %.2f s\n",
                Name(m), E.front(), T0, dE / T0, r.seconds);
    EXPECT_LT(dE / T0, 1e-8);
  }
}

TEST(FourBar, StabilizedMethodsDoNotDrift) {
  CompiledModel cm = CompileText(testing::ReadSourceFile(kFourBar), kFourBar);
  for (ConstraintMethod m : kRigid) {
    const MethodRun r = RunMethod(cm, m, 100, 1e-6, 1e-8);
    ASSERT_TRUE(r.error.empty()) << Name(m) << ": " << r.error;
    std::printf("four-bar, %s, 100 s at rtol 1e-6: drift %.2e m (positions), %.2e (velocities), %.2f s\n", Name(m),
                r.report.max_position_drift, r.report.max_velocity_drift, r.seconds);
    EXPECT_LT(r.report.max_position_drift, 1e-10);
    EXPECT_LT(r.report.max_velocity_drift, 1e-10);
  }
}

// ---- A change-point linkage: the parallelogram ---------------------------------
//
// With a = c and b = d the four-bar is a parallelogram on one branch (the
// coupler stays parallel to the ground, the rocker turns with the crank) and
// an anti-parallelogram on the other; the two meet where all links lie on
// the x axis (crank angle 0 or pi), a singular configuration. The true motion
// keeps the parallelogram: theta3 = 0, theta4 = theta2. Here the crank turns
// fully, crossing the singular configurations twice a turn.
const std::map<std::string, std::string> kParallelogram = {
    {"a", "0.2"}, {"b", "0.5"}, {"c", "0.2"}, {"d", "0.5"}, {"w0", "12"}};

TEST(Parallelogram, StaysOnItsBranchThroughTheSingularConfiguration) {
  // Every method either keeps the parallelogram (rigid methods to 1e-6 rad;
  // parasitic to 1e-3 rad, its joints stretch) or stops with an error; at
  // least one keeps it through every crossing.
  const std::string text = WithParameters(testing::ReadSourceFile(kFourBar), kParallelogram);
  {
    CompiledModel cm = CompileText(text, "parallelogram.yaml");
    ModelWorkspace cm_ws(cm);
    const ConstraintAnalysis a = AnalyzeConstraints(cm_ws, 0, cm.initial_state());
    EXPECT_EQ(a.rank, 17);
    EXPECT_EQ(a.mobility, 1);
  }
  const testing::FourBar f{0.2, 0.5, 0.2, 0.5};
  int on_branch = 0;
  for (ConstraintMethod m : kAll) {
    const bool rigid = m != ConstraintMethod::kParasitic;
    CompiledModel cm = CompileFor(text, "parallelogram.yaml", m);
    const MethodRun r = RunMethod(cm, m, 5, rigid ? 1e-10 : 1e-8, rigid ? 1e-12 : 1e-10, 1e-3);
    if (!r.error.empty()) {
      std::printf("parallelogram, %s: stopped after %.2f s: %s\n", Name(m), r.seconds, Brief(r.error).c_str());
      // A refusal for want of a good partition states the bound it missed.
      std::smatch bound, got;
      if (std::regex_search(r.error, bound, std::regex("condition number below ([-+.0-9e]+)")) &&
          std::regex_search(r.error, got, std::regex("got: +([-+.0-9e]+) for the best choice"))) {
        EXPECT_GT(std::stod(got[1]), std::stod(bound[1])) << "the message contradicts itself: " << r.error;
      }
      continue;
    }
    const auto t = r.solution.Column("t"), th2 = r.solution.Column("crank_angle"),
               th3 = r.solution.Column("coupler_angle"), th4 = r.solution.Column("rocker_angle");
    double err = 0, closed_form = 0;
    int crossings = 0;
    double first_off = -1;
    for (size_t i = 0; i < t.size(); ++i) {
      const double e = std::max(std::fabs(Wrap(th3[i])), std::fabs(Wrap(th4[i] - th2[i])));
      if (e > 1e-2 && first_off < 0) first_off = t[i];
      err = std::max(err, e);
      if (i > 0 && std::floor(th2[i] / kPi) != std::floor(th2[i - 1] / kPi)) ++crossings;
      // Away from the singular configurations, the closed form on the branch
      // the parallelogram occupies there (B left of A -> D for sin theta2 > 0).
      const double s = std::sin(th2[i]);
      if (std::fabs(s) > 1e-2) {
        const auto pose = testing::FourBarPosition(f, th2[i], s > 0 ? 1 : -1);
        if (pose)
          closed_form = std::max({closed_form, std::fabs(Wrap(th3[i] - pose->theta3)),
                                  std::fabs(Wrap(th4[i] - pose->theta4))});
      }
    }
    std::printf("parallelogram, %s: crank %.3f -> %.3f rad, %d singular crossings, |coupler|, |rocker - crank| <= "
                "%.2e rad (first beyond 1e-2 at t = %.3f s), closed form %.2e, %.2f s\n",
                Name(m), th2.front(), th2.back(), crossings, err, first_off, closed_form, r.seconds);
    EXPECT_GE(crossings, 4);
    EXPECT_LT(err, rigid ? 1e-6 : 1e-3) << Name(m) << " left the parallelogram without an error";
    EXPECT_LT(closed_form, rigid ? 1e-6 : 1e-3);
    if (err < (rigid ? 1e-6 : 1e-3)) ++on_branch;
  }
  EXPECT_GE(on_branch, 1) << "no method kept the parallelogram through its singular configuration";
}

// ---- The N four-bar benchmark (examples/make_nfourbar.py) ----------------------

// phi'' = -k cos(phi), the vertical links' common angle, by fixed-step RK4.
std::vector<std::pair<double, double>> NFourBarReference(int n, const std::vector<double>& times,
                                                         double phi0 = kPi / 2, double rate0 = 1) {
  const double g = 9.81;
  const double k = g * ((n + 1) / 2.0 + n) / ((n + 1) / 3.0 + n);
  auto f = [&](double p, double w) { return std::pair<double, double>{w, -k * std::cos(p)}; };
  double p = phi0, w = rate0, t = 0;
  std::vector<std::pair<double, double>> out;
  for (double tk : times) {
    const long steps = std::max(1L, static_cast<long>(std::ceil((tk - t) / 1e-4)));
    const double h = (tk - t) / static_cast<double>(steps);
    for (long i = 0; i < steps && tk > t; ++i) {
      auto [a1, b1] = f(p, w);
      auto [a2, b2] = f(p + h / 2 * a1, w + h / 2 * b1);
      auto [a3, b3] = f(p + h / 2 * a2, w + h / 2 * b2);
      auto [a4, b4] = f(p + h * a3, w + h * b3);
      p += h / 6 * (a1 + 2 * a2 + 2 * a3 + a4);
      w += h / 6 * (b1 + 2 * b2 + 2 * b3 + b4);
    }
    t = tk;
    out.push_back({p, w});
  }
  return out;
}

std::string NFourBarText(int n) {
  const std::string path = ::testing::TempDir() + "nfourbar_" + std::to_string(n) + ".yaml";
  const std::string cmd = "python3 " + testing::SourcePath("examples/make_nfourbar.py") + " " + std::to_string(n) +
                          " -o " + path;
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(NFourBar, CountsAndTheMotionOfOnePendulum) {
  // N = 2 over 4 s: five passes through the singular configuration. Each
  // method either follows the pendulum (rigid methods: the first crank's angle
  // to 1e-6 rad of the reference, all vertical links parallel and the
  // horizontal ones horizontal to 1e-6 rad) or stops with an error; the
  // parasitic method keeps the shape to 1e-2 rad (its dampers dissipate: its
  // angle lags); at least one method follows the true motion.
  const int n = 2;
  const std::string text = NFourBarText(n);
  {
    CompiledModel cm = CompileText(text, "nfourbar_2.yaml");
    ModelWorkspace cm_ws(cm);
    const ConstraintAnalysis a = AnalyzeConstraints(cm_ws, 0, cm.initial_state());
    EXPECT_EQ(a.coordinates, 6 * (2 * n + 1));
    EXPECT_EQ(a.constraints, 5 * (3 * n + 1));
    EXPECT_EQ(a.rank, 6 * (2 * n + 1) - 1);
    EXPECT_EQ(a.mobility, 1);
    EXPECT_EQ(a.constraints - a.rank, 3 * n);
  }
  int on_motion = 0;
  for (ConstraintMethod m : kAll) {
    const bool rigid = m != ConstraintMethod::kParasitic;
    CompiledModel cm = CompileFor(text, "nfourbar_2.yaml", m);
    const MethodRun r = RunMethod(cm, m, 4, rigid ? 1e-10 : 1e-8, rigid ? 1e-12 : 1e-10, 0.01);
    if (!r.error.empty()) {
      std::printf("N four-bar (N = %d), %s: stopped after %.2f s: %s\n", n, Name(m), r.seconds, Brief(r.error).c_str());
      continue;
    }
    const auto t = r.solution.Column("t"), phi = r.solution.Column("phi"), phil = r.solution.Column("phi_last"),
               hf = r.solution.Column("h_first"), hl = r.solution.Column("h_last"), E = r.solution.Column("energy");
    const auto ref = NFourBarReference(n, t);
    double dphi = 0, dshape = 0, dE = 0, t_off = -1;
    int crossings = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      dphi = std::max(dphi, std::fabs(phi[i] - ref[i].first));
      const double shape = std::max({std::fabs(Wrap(phil[i] - phi[i])), std::fabs(Wrap(hf[i])), std::fabs(Wrap(hl[i]))});
      if (shape > 1e-6 && t_off < 0) t_off = t[i];
      dshape = std::max(dshape, shape);
      dE = std::max(dE, std::fabs(E[i] - E[0]));
      if (i > 0 && std::floor(phi[i] / kPi) != std::floor(phi[i - 1] / kPi)) ++crossings;
    }
    std::printf("N four-bar (N = %d), %s, 4 s: %d singular crossings, |phi - reference| %.2e rad, shape %.2e rad "
                "(first beyond 1e-6 at t = %.3f s), |dE| %.2e J, %.2f s\n",
                n, Name(m), crossings, dphi, dshape, t_off, dE, r.seconds);
    EXPECT_LT(dshape, rigid ? 1e-6 : 1e-2) << Name(m) << " left the parallelogram shape without an error";
    if (rigid) {
      EXPECT_LT(dphi, 1e-6) << Name(m);
    }
    if (rigid && dphi < 1e-6 && dshape < 1e-6) ++on_motion;
  }
  EXPECT_GE(on_motion, 1) << "no method followed the N four-bar through its singular configurations";
}

// The sparse block solve and the sparse projection (65 constraint rows, 12 of
// them redundant) against the dense block solve and the pendulum reference:
// both follow the reference through the singular configurations, and agree.
TEST(NFourBar, SparseAndDenseBlocksFollowTheSameMotion) {
  const int n = 4;
  const std::string text = NFourBarText(n);
  Model m = LoadModelFromString(text, "nfourbar_4.yaml");
  const EquationSystem eqs = BuildEquations(m, AssignCausality(m));
  std::vector<std::vector<double>> phis;
  for (auto how : {CodegenOptions::BlockSolve::kSparse, CodegenOptions::BlockSolve::kDense}) {
    CodegenOptions cg;
    cg.backend = Backend::kTape;
    cg.block_solve = how;
    CompiledModel cm(eqs, cg);
    const MethodRun r = RunMethod(cm, ConstraintMethod::kLagrangeMultipliers, 2, 1e-10, 1e-12, 0.01);
    ASSERT_TRUE(r.error.empty()) << r.error;
    const auto t = r.solution.Column("t"), phi = r.solution.Column("phi"), hf = r.solution.Column("h_first"),
               hl = r.solution.Column("h_last");
    const auto ref = NFourBarReference(n, t);
    double dphi = 0, dshape = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      dphi = std::max(dphi, std::fabs(phi[i] - ref[i].first));
      dshape = std::max({dshape, std::fabs(Wrap(hf[i])), std::fabs(Wrap(hl[i]))});
    }
    const char* name = how == CodegenOptions::BlockSolve::kSparse ? "sparse" : "dense";
    std::printf("N four-bar (N = %d), %s block, 2 s: |phi - reference| %.2e rad, shape %.2e rad, drift %.2e, %.2f s\n",
                n, name, dphi, dshape, r.report.max_position_drift, r.seconds);
    EXPECT_LT(dphi, 1e-6) << name;
    EXPECT_LT(dshape, 1e-6) << name;
    EXPECT_LT(r.report.max_position_drift, 1e-10) << name;
    phis.push_back(phi);
  }
  ASSERT_EQ(phis[0].size(), phis[1].size());
  for (size_t i = 0; i < phis[0].size(); ++i) EXPECT_NEAR(phis[0][i], phis[1][i], 1e-7) << i;
}

// The energy projection (--project-energy) on the N four-bar, N = 4, over
// 10 s (13 singular crossings), run as a user runs it: without it, every
// crossing loses energy (5e-6 J at rtol 1e-8, about 1e-4 J at the default
// tolerance) and the phase drifts (2.3e-6 rad at rtol 1e-8, 2.3e-4 rad at the
// default); with it, the model's own energy output (kinetic plus potential,
// written by make_nfourbar.py, not by the energy pass) stays within 1e-8 of
// its size at rtol 1e-8 and the crank within 1e-6 rad of the one-pendulum
// reference; at the default tolerance within 1e-6 and 6e-5 rad.
struct NFourBarRun {
  double phase = 0, energy = 0;  // largest |phi - reference|, largest |E - E(0)| / |E(0)|
  std::string out;
};
NFourBarRun RunNFourBarCli(int n, const std::string& options, double t_end = 10, double dt_out = 0.01,
                           const std::string& method = "lagrange-multipliers") {
  const std::string model = ::testing::TempDir() + "nfourbar_cli_" + std::to_string(n) + ".yaml";
  std::ofstream(model) << NFourBarText(n);
  const std::string csv = ::testing::TempDir() + "nfourbar_cli.csv";
  std::remove(csv.c_str());
  NFourBarRun r;
  const testing::CommandResult run = testing::RunPaynter(
      fmt::format("simulate {} --t-end {} --dt-out {} --backend tape --constraints {} --stats {} -o {}", model, t_end,
                  dt_out, method, options, csv));
  r.out = run.out;
  EXPECT_EQ(run.code, 0) << run.out;
  const testing::CsvTable table = testing::ReadCsvTable(csv);
  const int ct = table.Column("t"), cphi = table.Column("phi"), ce = table.Column("energy");
  EXPECT_TRUE(ct >= 0 && cphi >= 0 && ce >= 0);
  if (ct < 0 || cphi < 0 || ce < 0 || table.rows.empty()) return r;
  std::vector<double> t;
  for (const auto& row : table.rows) t.push_back(row[ct]);
  const auto ref = NFourBarReference(n, t);
  const double e0 = table.rows[0][ce];
  for (size_t i = 0; i < t.size(); ++i) {
    r.phase = std::max(r.phase, std::fabs(table.rows[i][cphi] - ref[i].first));
    r.energy = std::max(r.energy, std::fabs(table.rows[i][ce] - e0) / std::fabs(e0));
  }
  return r;
}

TEST(NFourBar, EnergyProjectionKeepsTheBalanceAcrossSingularCrossings) {
  // (The file make_nfourbar.py writes asks for the projection at rtol 1e-8
  // in its run settings: the options say each run's own.)
  const NFourBarRun tight = RunNFourBarCli(4, "--rtol 1e-8 --atol 1e-10 --project-energy");
  const NFourBarRun plain = RunNFourBarCli(4, "--rtol 1e-8 --atol 1e-10 --no-project-energy");
  const NFourBarRun loose = RunNFourBarCli(4, "--rtol 1e-6 --atol 1e-9 --project-energy");
  const NFourBarRun settings = RunNFourBarCli(4, "");
  std::printf("N four-bar (N = 4), 10 s at rtol 1e-8: phase %.2e rad, energy %.2e (without the projection %.2e rad, "
              "%.2e); at rtol 1e-6: %.2e rad, %.2e\n",
              tight.phase, tight.energy, plain.phase, plain.energy, loose.phase, loose.energy);
  EXPECT_LT(tight.energy, 1e-8);
  EXPECT_LT(tight.phase, 1e-6);
  EXPECT_LT(loose.energy, 1e-6);
  EXPECT_LT(loose.phase, 6e-5);
  // The projection is what keeps it: the same run without it is worse.
  EXPECT_GT(plain.energy, 3 * tight.energy);
  EXPECT_GT(plain.phase, 3 * tight.phase);
  // The model's run settings are the tight run's.
  EXPECT_EQ(settings.phase, tight.phase);
  EXPECT_EQ(settings.energy, tight.energy);
  // The report says what it did; the energy pass's columns are in the CSV.
  EXPECT_NE(tight.out.find("energy projection: momenta scaled"), std::string::npos) << tight.out;
  EXPECT_EQ(plain.out.find("energy projection"), std::string::npos) << plain.out;
}

// zcp at the N four-bar's singular configurations: IDA's Newton iteration
// fails there (the independent rows it chose at the start become dependent
// when the links align), and the run used to stop with "ida failed at
// t = 0.7157" (N = 2, rtol 1e-8, outputs every 4 ms) or 0.7174 (N = 4, the
// default tolerance). Now lagrange-multipliers carries the run over each
// failure and IDA starts again past it: zcp runs to the end on the branch,
// and --stats says how often and for how long.
TEST(NFourBar, ZcpPassesTheSingularConfigurationsToTheEnd) {
  const NFourBarRun two = RunNFourBarCli(2, "--no-project-energy", 4, 0.004, "zcp");
  const NFourBarRun four = RunNFourBarCli(4, "--no-project-energy --rtol 1e-6 --atol 1e-9", 10, 0.01, "zcp");
  std::printf("zcp on the N four-bar: N = 2, 4 s at rtol 1e-8: %.2e rad, energy %.2e; N = 4, 10 s at rtol 1e-6: "
              "%.2e rad, energy %.2e\n",
              two.phase, two.energy, four.phase, four.energy);
  EXPECT_LT(two.phase, 1e-5);
  EXPECT_LT(two.energy, 1e-6);
  EXPECT_LT(four.phase, 1e-2);
  EXPECT_LT(four.energy, 1e-4);
  for (const NFourBarRun* r : {&two, &four})
    EXPECT_NE(r->out.find("lagrange-multipliers carried the run over them"), std::string::npos) << r->out;
}

// Where the energy projection does not apply, a located error at the start;
// a model's run setting `project_energy: true` applies to lagrange-multipliers
// runs and leaves the other methods as they are.
TEST(NFourBar, EnergyProjectionRefusesWhatItCannotKeep) {
  const std::string csv = ::testing::TempDir() + "project_energy.csv";
  struct Case {
    std::string args, message;
  } cases[] = {
      {"examples/fourbar.yaml --constraints zcp --project-energy",
       "--project-energy applies to --constraints lagrange-multipliers, not to zcp"},
      {"examples/fourbar.yaml --constraints minimal-coordinates --project-energy",
       "not to minimal-coordinates"},
      {"examples/rlc.yaml --project-energy", "not to a model without joints"},
      {"examples/fourbar.yaml --project-energy --no-stabilize", "which --no-stabilize turns off"},
      {"examples/B4_spatial_arm.yaml --project-energy",
       "element 'J3_spring': the energy balance (--energy, --project-energy) cannot be written: C 'J3_spring' has the "
       "law 'effort: (K)*(J3_s - (b))', not a constant capacitance or stiffness"},
      {"examples/B4_spatial_arm.yaml --energy", "cannot be written"},
  };
  for (const Case& c : cases) {
    std::remove(csv.c_str());
    const testing::CommandResult r =
        testing::RunPaynter("simulate " + testing::SourcePath(c.args.substr(0, c.args.find(' '))) +
                            c.args.substr(c.args.find(' ')) + " --t-end 0.1 -o " + csv);
    EXPECT_EQ(r.code, 1) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_FALSE(std::ifstream(csv).good()) << c.args;
  }
  // The run setting: lagrange-multipliers keeps the energy, zcp runs without it.
  std::string text = testing::ReadSourceFile("examples/fourbar.yaml");
  text += "simulation: {t_end: 0.5, project_energy: true}\n";
  const std::string model = ::testing::TempDir() + "fourbar_project_energy.yaml";
  std::ofstream(model) << text;
  const testing::CommandResult lm = testing::RunPaynter("simulate " + model + " --stats -o " + csv);
  EXPECT_EQ(lm.code, 0) << lm.out;
  EXPECT_NE(lm.out.find("energy projection: momenta scaled"), std::string::npos) << lm.out;
  const testing::CommandResult zcp = testing::RunPaynter("simulate " + model + " --constraints zcp --stats -o " + csv);
  EXPECT_EQ(zcp.code, 0) << zcp.out;
  EXPECT_EQ(zcp.out.find("energy projection"), std::string::npos) << zcp.out;
  const testing::CommandResult off =
      testing::RunPaynter("simulate " + model + " --no-project-energy --stats -o " + csv);
  EXPECT_EQ(off.code, 0) << off.out;
  EXPECT_EQ(off.out.find("energy projection"), std::string::npos) << off.out;
  std::ofstream(model) << testing::ReadSourceFile("examples/fourbar.yaml") << "simulation: {t_end: 0.5, project_energy: yes}\n";
  const testing::CommandResult bad = testing::RunPaynter("simulate " + model + " -o " + csv);
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("the run setting 'project_energy' is not true or false"), std::string::npos) << bad.out;
}

// `check` on a large mechanism (N = 8: 25 joints, 125 rows, 24 redundant)
// lists only the joints with redundant rows, one line each, naming the rows.
TEST(NFourBar, CheckListsOnlyTheJointsWithRedundantRowsOfALargeMechanism) {
  const int n = 8;
  Model m = LoadModelFromString(NFourBarText(n), "nfourbar_8.yaml");
  CodegenOptions cg;
  cg.backend = Backend::kTape;
  CompiledModel cm(BuildEquations(m, AssignCausality(m)), cg);
  ModelWorkspace cm_ws(cm);
  const ConstraintAnalysis a = AnalyzeConstraints(cm_ws, 0, cm.initial_state());
  const std::string text = a.ToText();
  std::printf("%s", text.c_str());
  EXPECT_EQ(a.constraints - a.rank, 3 * n);
  std::set<std::string> joints;
  for (const auto& r : a.rows)
    if (r.redundant) {
      joints.insert(r.joint);
      EXPECT_NE(text.find(r.source), std::string::npos) << r.source;
    }
  int lines = 0;
  for (char c : text) lines += c == '\n';
  EXPECT_LE(lines, static_cast<int>(joints.size()) + 6);
  EXPECT_EQ(text.find("joint G0:"), std::string::npos);  // no redundant row there
  EXPECT_NE(text.find(fmt::format("{} other joint(s)", 3 * n + 1 - static_cast<int>(joints.size()))),
            std::string::npos);
}

// The N four-bar started from its first crank's joint, `initial: [angle,
// rate]` on G0 (the bodies' written velocities dropped: the tree of joints
// gives them), assembled from there (--assemble); with `pendulum`, a
// free pendulum on a revolute joint of its own is added (five more rows).
std::string NFourBarFromCrank(int n, double angle, double rate, bool pendulum = false) {
  std::string text = NFourBarText(n);
  text = std::regex_replace(text, std::regex(", (angular_)?velocity: \\[[^\\]]*\\]"), "");
  const std::string g0 = "point1: [0*L, 0, 0], point2: [-L/2, 0, 0]}";
  const auto at = text.find(g0);
  if (at == std::string::npos) throw std::runtime_error("no joint G0 in the N four-bar");
  text.replace(at, g0.size(), fmt::format("point1: [0*L, 0, 0], point2: [-L/2, 0, 0], initial: [{}, {}]}}", angle, rate));
  if (pendulum) {
    text.replace(text.find("  joints:\n"), 10,
                 "    - {name: Pend, mass: m, inertia: [It, It, It], position: [-2*L, -L/2, 0]}\n  joints:\n");
    text.replace(text.find("outputs:\n"), 9,
                 "    - {name: GPend, type: revolute, body1: ground, body2: Pend, axis: [0, 0, 1], point1: [-2*L, 0, 0], "
                 "point2: [0, L/2, 0]}\noutputs:\n");
  }
  return text;
}

// The start of a closed chain is where `initial:` puts it, whatever the number
// of constraint rows (the projection is sparse from 40 rows on): 40 rows (the
// N four-bar with N = 2 and a pendulum), 65 (N = 4) and 605 (N = 40). The
// first crank starts at the given angle and rate, the chain closed around it
// (every vertical link parallel to it, the horizontal ones horizontal), and
// then follows the pendulum reference from there.
TEST(NFourBar, StartsWhereTheCranksInitialValuesPutIt) {
  const double angle = 0.1, rate = 0.5;
  for (const auto& [n, rows, pendulum] : {std::tuple{2, 40, true}, std::tuple{4, 65, false}, std::tuple{40, 605, false}}) {
    const std::string text = NFourBarFromCrank(n, angle, rate, pendulum);
    Model m = LoadModelFromString(text, "nfourbar_from_crank.yaml");
    CodegenOptions cg;
    cg.backend = Backend::kTape;
    CompiledModel cm(BuildEquations(m, AssignCausality(m)), cg);
    ASSERT_EQ(cm.num_constraints(), rows);
    const double t_end = n == 40 ? 0.02 : 0.5;
    const MethodRun r = RunMethod(cm, ConstraintMethod::kLagrangeMultipliers, t_end, 1e-10, 1e-12, 0.01, true);
    ASSERT_TRUE(r.error.empty()) << rows << " rows: " << r.error;
    const auto t = r.solution.Column("t"), phi = r.solution.Column("phi"), phid = r.solution.Column("phidot"),
               phil = r.solution.Column("phi_last"), hf = r.solution.Column("h_first"), hl = r.solution.Column("h_last");
    const auto ref = NFourBarReference(n, t, kPi / 2 + angle, rate);
    double dphi = 0, dshape = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      dphi = std::max(dphi, std::fabs(phi[i] - ref[i].first));
      dshape = std::max({dshape, std::fabs(Wrap(phil[i] - phi[i])), std::fabs(Wrap(hf[i])), std::fabs(Wrap(hl[i]))});
    }
    std::printf("N four-bar (N = %d, %d rows) from its crank's initial: [%g, %g]: start %.12f rad, %.12f rad/s; "
                "assembly moved positions by %.3g; |phi - reference| %.2e, shape %.2e over %g s, %.2f s\n",
                n, rows, angle, rate, phi[0] - kPi / 2, phid[0], r.report.assembly.position_correction, dphi, dshape,
                t_end, r.seconds);
    EXPECT_NEAR(phi[0], kPi / 2 + angle, 1e-12) << rows << " rows";
    EXPECT_NEAR(phid[0], rate, 1e-10) << rows << " rows";
    EXPECT_GT(r.report.assembly.position_correction, 1e-3) << rows << " rows";  // the loops were closed
    EXPECT_LT(dshape, 1e-9) << rows << " rows";
    EXPECT_LT(dphi, 1e-8) << rows << " rows";
  }
}

// ---- A run that leaves its tolerance stops -------------------------------------

// A point mass on a revolute joint (1 kg at 1 m, from horizontal at rest),
// written with an inertia `izz` on every axis.
std::string PointMassPendulum(const std::string& izz) {
  return "name: point_mass\nparameters:\n  Izz: " + izz +
         "\nmultibody:\n  gravity: [0, -9.81, 0]\n  bodies:\n"
         "    - {name: bob, mass: 1, inertia: [Izz, Izz, Izz], position: [1, 0, 0]}\n  joints:\n"
         "    - {name: pivot, type: revolute, body1: ground, body2: bob, axis: [0, 0, 1], point2: [-1, 0, 0]}\n"
         "outputs:\n  angle: pivot_angle\n";
}

TEST(Drift, ARunWhoseJointsDriftStopsWithAnErrorNamingTheJoint) {
  // An inertia of 1e-14 kg m^2: the rigid methods cannot hold the joint (the
  // velocity projection is too ill-conditioned); the run must stop, not go on
  // to a wrong motion with its drift in --stats only. With 1e-3 it runs.
  {
    CompiledModel cm = CompileText(PointMassPendulum("1e-14"), "point_mass.yaml");
    for (ConstraintMethod m : kRigid) {
      const MethodRun r = RunMethod(cm, m, 20, 1e-6, 1e-9, 0.05);
      std::printf("point mass, Izz = 1e-14, %s: %s\n", Name(m), r.error.empty() ? "ran" : Brief(r.error).c_str());
      EXPECT_NE(r.error.find("drifted beyond the drift tolerance"), std::string::npos) << Name(m);
      EXPECT_NE(r.error.find("joint 'pivot'"), std::string::npos) << Name(m);
    }
  }
  CompiledModel cm = CompileText(PointMassPendulum("1e-3"), "point_mass.yaml");
  const MethodRun r = RunMethod(cm, ConstraintMethod::kLagrangeMultipliers, 5, 1e-8, 1e-10, 0.05);
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_LT(r.report.max_velocity_drift, 1e-9);
}

// ---- minimal-coordinates: a new choice before a fold, a located stop at a singular configuration --

// The point mass of PointMassPendulum, its angle from +x: J theta'' = -m g L cos(theta),
// J = m L^2 + Izz, from rest at 0, by fixed-step RK4 to each time.
std::vector<double> PointMassReference(double izz, const std::vector<double>& times) {
  const double j = 1 + izz;
  auto f = [&](double th, double w) { return std::pair<double, double>{w, -9.81 * std::cos(th) / j}; };
  double th = 0, w = 0, t = 0;
  std::vector<double> out;
  for (double tk : times) {
    const long steps = std::max(1L, static_cast<long>(std::ceil((tk - t) / 1e-4)));
    const double h = (tk - t) / static_cast<double>(steps);
    for (long i = 0; i < steps && tk > t; ++i) {
      auto [a1, b1] = f(th, w);
      auto [a2, b2] = f(th + h / 2 * a1, w + h / 2 * b1);
      auto [a3, b3] = f(th + h / 2 * a2, w + h / 2 * b2);
      auto [a4, b4] = f(th + h * a3, w + h * b3);
      th += h / 6 * (a1 + 2 * a2 + 2 * a3 + a4);
      w += h / 6 * (b1 + 2 * b2 + 2 * b3 + b4);
    }
    t = tk;
    out.push_back(th);
  }
  return out;
}

TEST(MinimalCoordinates, PointMassPendulumRunsWhateverTheOutputInterval) {
  // IFToMM A01 written as a point mass on a revolute joint in 3D. Each
  // coordinate of the bob reaches a fold twice a swing (y at the bottom, x
  // at the sides): the coordinates are chosen again before each, whatever the
  // output interval (they were checked at output times only: the run stopped
  // at 0.59 s with --dt-out 0.01 and 2.45 s with 0.5). The quaternion's norm
  // is a constraint of its own: no quaternion component is integrated as if
  // it were a degree of freedom.
  CompiledModel cm = CompileText(PointMassPendulum("1e-3"), "point_mass.yaml");
  for (double dt : {0.01, 0.5}) {
    const MethodRun r = RunMethod(cm, ConstraintMethod::kMinimalCoordinates, 10, 1e-10, 1e-12, dt);
    ASSERT_TRUE(r.error.empty()) << "--dt-out " << dt << ": " << r.error;
    const auto t = r.solution.Column("t"), angle = r.solution.Column("angle");
    const auto ref = PointMassReference(1e-3, t);
    double err = 0;
    for (size_t i = 0; i < t.size(); ++i) err = std::max(err, std::fabs(angle[i] - ref[i]));
    std::string independent;
    for (const auto& s : r.report.independent) independent += s + " ";
    std::printf("point mass, minimal-coordinates, --dt-out %g, 10 s: |angle - reference| %.2e rad, %d partitions "
                "(independent: %s), drift %.2e, %.2f s\n",
                dt, err, r.report.partitions, independent.c_str(), r.report.max_position_drift, r.seconds);
    EXPECT_DOUBLE_EQ(t.back(), 10.0);
    EXPECT_EQ(t.size(), static_cast<size_t>(std::lround(10 / dt)) + 1);  // the output grid, restarts or not
    EXPECT_LT(err, 1e-7) << "--dt-out " << dt;
    EXPECT_GE(r.report.partitions, 4);  // the folds were seen
    for (const auto& s : r.report.independent) EXPECT_EQ(s.find("bob_q"), std::string::npos) << s;
  }
}

TEST(MinimalCoordinates, StopsAtASingularConfigurationOfTheMechanismNamingIt) {
  // The N four-bar (N = 2) at rtol 1e-10: at its first singular configuration
  // (every link on the x axis, phi = pi) no choice of independent coordinates
  // determines the others. The run stops there, saying so, with a bound and a
  // figure that agree (it said "below 1e+04 ... got: 243" before), not
  // later with "Newton's method did not converge" (t = 0.97 before).
  CompiledModel cm = CompileText(NFourBarText(2), "nfourbar_2.yaml");
  const MethodRun r = RunMethod(cm, ConstraintMethod::kMinimalCoordinates, 1, 1e-10, 1e-12, 0.01);
  std::printf("N four-bar (N = 2), minimal-coordinates, rtol 1e-10: %s\n", Brief(r.error).c_str());
  ASSERT_FALSE(r.error.empty());
  EXPECT_NE(r.error.find("a singular configuration of the mechanism"), std::string::npos) << r.error;
  std::smatch at, bound, got;
  ASSERT_TRUE(std::regex_search(r.error, at, std::regex("at t = ([-+.0-9e]+)"))) << r.error;
  ASSERT_TRUE(std::regex_search(r.error, bound, std::regex("condition number below ([-+.0-9e]+)"))) << r.error;
  ASSERT_TRUE(std::regex_search(r.error, got, std::regex("got: +([-+.0-9e]+) for the best choice"))) << r.error;
  EXPECT_GT(std::stod(got[1]), std::stod(bound[1])) << r.error;
  // Where the reference passes phi = pi.
  std::vector<double> times;
  for (int i = 0; i <= 1000; ++i) times.push_back(0.5 + 0.0005 * i);
  const auto ref = NFourBarReference(2, times);
  double crossing = -1;
  for (size_t i = 1; i < times.size() && crossing < 0; ++i)
    if (ref[i - 1].first < kPi && ref[i].first >= kPi) crossing = times[i];
  ASSERT_GT(crossing, 0);
  EXPECT_NEAR(std::stod(at[1]), crossing, 2e-3) << r.error;
}

// ---- zcp: the stabilized DAE from the start, with or without energy states ------

TEST(Zcp, KeepsPositionStabilizationFromTheStartWithOrWithoutEnergyStates) {
  // The hyperstatic slider crank (joints in the benchmark's order O, A, B,
  // P), the four-bar and Bricard's linkage, from rest or moving: IDA's own
  // first step (about 1e-10 s from rest) made the corrector of the index-2
  // DAE fail at the start unless the energy accounting's states changed it;
  // the run then fell back to the velocity-level DAE. Now each runs the
  // stabilized DAE (no note) to the end, energy states or not.
  for (const char* file : {"examples/B2_slider_crank_hyperstatic.yaml", kFourBar, "examples/bricard.yaml"}) {
    for (bool energy : {false, true}) {
      Model m = LoadModel(testing::SourcePath(file), {.method = ConstraintMethod::kZcp, .energy = energy});
      CompiledModel cm(BuildEquations(m, AssignCausality(m)));
      SolverOptions so;
      so.t_end = 2;
      ConstrainedOptions co;
      co.method = ConstraintMethod::kZcp;
      co.source = &m;
      ConstrainedReport rep;
      std::string error;
      Solution sol;
      try {
        sol = SimulateConstrained(cm, so, co, &rep);
      } catch (const Error& e) {
        error = e.what();
      }
      std::printf("zcp, %s%s: %s; %s; drift %.2e (positions), %.2e (velocities)\n", file,
                  energy ? " with energy states" : "", error.empty() ? "ran to the end" : Brief(error).c_str(),
                  rep.zcp_note.empty() ? "position stabilization kept" : rep.zcp_note.c_str(), rep.max_position_drift,
                  rep.max_velocity_drift);
      EXPECT_TRUE(error.empty()) << file << ": " << error;
      EXPECT_TRUE(rep.zcp_note.empty()) << file << (energy ? " (energy)" : "") << ": " << rep.zcp_note;
      if (error.empty()) {
        EXPECT_DOUBLE_EQ(sol.Column("t").back(), 2.0);
      }
      EXPECT_LT(rep.max_position_drift, 1e-5) << file;
    }
  }
}

// ---- Bricard's line-symmetric 6R linkage (examples/make_bricard.py) -------------

const char* kBricard = "examples/bricard.yaml";

// The Denavit-Hartenberg loop of examples/make_bricard.py: links 4-6 repeat 1-3.
struct Dh {
  std::array<double, 3> a{0.5, 0.7, 0.6}, alpha{kPi / 2, kPi / 3, 2 * kPi / 5}, d{0.0, 0.1, -0.05};
  double d6 = -0.05;  // d of link 6 (perturbed for the control case)
};
using M4 = std::array<std::array<double, 4>, 4>;
M4 Mul(const M4& p, const M4& q) {
  M4 r{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) r[i][j] += p[i][k] * q[k][j];
  return r;
}
// The six closure residuals of T1 ... T6 = I (translation, then rotation).
std::array<double, 6> Closure(const Dh& g, const std::array<double, 6>& th) {
  M4 T{};
  for (int i = 0; i < 4; ++i) T[i][i] = 1;
  for (int i = 0; i < 6; ++i) {
    const double a = g.a[i % 3], al = g.alpha[i % 3], d = i == 5 ? g.d6 : g.d[i % 3];
    const double ct = std::cos(th[i]), st = std::sin(th[i]), ca = std::cos(al), sa = std::sin(al);
    const M4 A{{{ct, -st * ca, st * sa, a * ct}, {st, ct * ca, -ct * sa, a * st}, {0, sa, ca, d}, {0, 0, 0, 1}}};
    T = Mul(T, A);
  }
  return {T[0][3], T[1][3], T[2][3], T[2][1] - T[1][2], T[0][2] - T[2][0], T[1][0] - T[0][1]};
}
double Norm(const std::array<double, 6>& r) {
  double s = 0;
  for (double v : r) s = std::max(s, std::fabs(v));
  return s;
}
// Gauss-Newton on theta_2 ... theta_6 with theta_1 fixed: returns the closure residual reached.
double CloseLoop(const Dh& g, std::array<double, 6>* th) {
  for (int it = 0; it < 50; ++it) {
    const auto r = Closure(g, *th);
    double J[6][5];
    for (int j = 0; j < 5; ++j) {
      auto y = *th;
      y[j + 1] += 1e-7;
      const auto ry = Closure(g, y);
      for (int i = 0; i < 6; ++i) J[i][j] = (ry[i] - r[i]) / 1e-7;
    }
    double N[5][6];  // normal equations [J^T J | J^T r]
    for (int p = 0; p < 5; ++p) {
      for (int q = 0; q < 5; ++q) {
        N[p][q] = 0;
        for (int i = 0; i < 6; ++i) N[p][q] += J[i][p] * J[i][q];
      }
      N[p][5] = 0;
      for (int i = 0; i < 6; ++i) N[p][5] += J[i][p] * r[i];
    }
    for (int c = 0; c < 5; ++c) {
      int piv = c;
      for (int i = c + 1; i < 5; ++i)
        if (std::fabs(N[i][c]) > std::fabs(N[piv][c])) piv = i;
      for (int k = 0; k < 6; ++k) std::swap(N[c][k], N[piv][k]);
      for (int i = 0; i < 5; ++i)
        if (i != c) {
          const double f = N[i][c] / N[c][c];
          for (int k = c; k < 6; ++k) N[i][k] -= f * N[c][k];
        }
    }
    double step = 0;
    for (int p = 0; p < 5; ++p) {
      const double dx = N[p][5] / N[p][p];
      (*th)[p + 1] -= dx;
      step = std::max(step, std::fabs(dx));
    }
    if (step < 1e-14) break;
  }
  return Norm(Closure(g, *th));
}

const std::array<double, 6> kBricardStart = {0.8, -0.943417147427334, -3.0455648558101296,
                                             0.8, -0.943417147427334, -3.0455648558101296};

TEST(Bricard, TheGeometryMovesByAFiniteMotion) {
  // Independent of paynter: the loop closes at the start, and still closes
  // (to rounding) after its first joint has turned by 0.5 rad, the other five
  // solved for; it stays line-symmetric. A control: with d6 changed by 1 mm
  // (no longer line-symmetric: a generic 6R loop, rigid) the loop does not
  // close after a 0.05 rad turn.
  const Dh g;
  EXPECT_LT(Norm(Closure(g, kBricardStart)), 1e-14);
  auto th = kBricardStart;
  for (int k = 0; k < 10; ++k) {
    th[0] += 0.05;
    EXPECT_LT(CloseLoop(g, &th), 1e-12) << "at theta1 = " << th[0];
  }
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(Wrap(th[i + 3] - th[i]), 0, 1e-10);
  Dh h;
  h.d6 = g.d6 + 1e-3;
  auto th2 = kBricardStart;
  th2[0] += 0.05;
  const double off = CloseLoop(h, &th2);
  std::printf("Bricard: the loop closes to %.1e after 0.5 rad; perturbed by 1 mm it misses by %.1e after 0.05 rad\n",
              Norm(Closure(g, th)), off);
  EXPECT_GT(off, 1e-5);
}

TEST(Bricard, CheckFindsMobilityOneWhereGrueblerCountsZero) {
  CompiledModel cm = CompileText(testing::ReadSourceFile(kBricard), kBricard);
  ModelWorkspace cm_ws(cm);
  const ConstraintAnalysis a = AnalyzeConstraints(cm_ws, 0, cm.initial_state());
  std::printf("%s", a.ToText().c_str());
  EXPECT_EQ(a.coordinates, 30);
  EXPECT_EQ(a.constraints, 30);
  EXPECT_EQ(a.grubler, 0);
  EXPECT_EQ(a.rank, 29);
  EXPECT_EQ(a.mobility, 1);
  EXPECT_EQ(CountRedundant(a, "J6"), 1);
  EXPECT_LT(a.max_position_error, 1e-12);
}

TEST(Bricard, SimulatedMotionKeepsTheLoopClosedAndItsEnergy) {
  // From rest under gravity, 2.5 s (about one swing and back). The joint angles (the start's plus the
  // integrated J<i>_angle) must satisfy the Denavit-Hartenberg closure and
  // the line symmetry; the bodies' energy is conserved.
  CompiledModel cm = CompileText(testing::ReadSourceFile(kBricard), kBricard);
  const Dh g;
  for (ConstraintMethod m : kRigid) {
    const MethodRun r = RunMethod(cm, m, 2.5, 1e-10, 1e-12, 0.01);
    if (!r.error.empty()) {
      ADD_FAILURE() << "Bricard, " << Name(m) << ", stopped after " << r.seconds << " s: " << Brief(r.error);
      continue;
    }
    const Solution& s = r.solution;
    std::vector<std::vector<double>> th(6);
    for (int j = 0; j < 6; ++j) th[j] = s.Column("theta" + std::to_string(j + 1));
    double closure = 0, symmetry = 0, range = 0, dE = 0, Tmax = 0;
    std::vector<double> E(s.rows.size(), 0.0), T(s.rows.size(), 0.0);
    for (int b = 1; b <= 5; ++b) {
      const std::string n = "L" + std::to_string(b);
      const auto vx = s.Column(n + "_vx"), vy = s.Column(n + "_vy"), vz = s.Column(n + "_vz"),
                 wx = s.Column(n + "_wx"), wy = s.Column(n + "_wy"), wz = s.Column(n + "_wz"), z = s.Column(n + "_z");
      for (size_t i = 0; i < E.size(); ++i) {
        const double k = 0.5 * (vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i]) +
                         0.5 * 0.05 * (wx[i] * wx[i] + wy[i] * wy[i] + wz[i] * wz[i]);
        T[i] += k;
        E[i] += k + 9.81 * z[i];
      }
    }
    for (size_t i = 0; i < E.size(); ++i) {
      std::array<double, 6> q;
      for (int j = 0; j < 6; ++j) q[j] = th[j][i];
      closure = std::max(closure, Norm(Closure(g, q)));
      for (int j = 0; j < 3; ++j) symmetry = std::max(symmetry, std::fabs(Wrap(q[j + 3] - q[j])));
      range = std::max(range, std::fabs(q[0] - kBricardStart[0]));
      dE = std::max(dE, std::fabs(E[i] - E[0]));
      Tmax = std::max(Tmax, T[i]);
    }
    std::printf("Bricard, %s, 2.5 s: theta1 moves up to %.3f rad; DH closure of the joint angles %.2e, "
                "|theta(i+3) - theta(i)| %.2e, |dE| %.2e J (largest kinetic energy %.3f J), drift %.2e, %.2f s\n",
                Name(m), range, closure, symmetry, dE, Tmax, r.report.max_position_drift, r.seconds);
    EXPECT_GT(range, 0.1);  // it does move
    EXPECT_LT(r.report.max_position_drift, 1e-10);
    // The joint angles are integrated rates, not projected with the bodies: 1e-6.
    EXPECT_LT(closure, 1e-6);
    EXPECT_LT(symmetry, 1e-8);
    EXPECT_LT(dE, 1e-8 * Tmax);
  }
}

// ---- docs/constraints.md's table of methods and mechanisms ----------------------

// Every cell of the table either says "runs" (to the end: here to 1.5 s or
// the row's end, whichever comes first) or "stops at t = X" (an error after
// the start, before X + 0.1): checked with the row's output interval (T/1000,
// the table's runs' default), which the minimal coordinates' checks follow.
TEST(MethodTable, EveryVerdictOfTheDocsTableHolds) {
  const std::string doc = testing::ReadSourceFile("docs/constraints.md");
  const auto begin = doc.find("<!-- method table");
  const auto end = doc.find("<!-- end of method table -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  std::istringstream lines(doc.substr(begin, end - begin));
  const ConstraintMethod methods[] = {ConstraintMethod::kLagrangeMultipliers, ConstraintMethod::kMinimalCoordinates,
                                      ConstraintMethod::kParasitic, ConstraintMethod::kZcp};
  const std::regex row_re("^\\| ([^|,]+), `([^`]+)`, ([0-9.]+) s \\|(.*)$");
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, row_re)) continue;
    ++rows;
    const std::string name = m[1], file = m[2], rest = m[4];
    const double t_full = std::stod(m[3]);
    std::string text;
    if (file.rfind("examples/make_nfourbar.py ", 0) == 0) {
      text = NFourBarText(std::stoi(file.substr(file.find(' ') + 1)));
    } else {
      text = testing::ReadSourceFile(file);
    }
    std::vector<std::string> cells;
    std::stringstream cs(rest);
    for (std::string c; std::getline(cs, c, '|');) {
      c = std::regex_replace(c, std::regex("^ +| +$"), "");
      if (!c.empty()) cells.push_back(c);
    }
    ASSERT_EQ(cells.size(), 4u) << line;
    for (int k = 0; k < 4; ++k) {
      const ConstraintMethod method = methods[k];
      std::smatch stop;
      const bool stops = std::regex_search(cells[k], stop, std::regex("^stops at t = ([0-9.]+)"));
      ASSERT_TRUE(stops || cells[k].rfind("runs", 0) == 0) << cells[k];
      const double t_end = stops ? std::stod(stop[1]) + 0.1 : std::min(t_full, 1.5);
      const std::string path = ::testing::TempDir() + "method_table.yaml";
      std::ofstream(path) << text;
      Model model = LoadModel(path, {.method = method});
      CodegenOptions cg;
      cg.backend = Backend::kTape;
      CompiledModel cm(BuildEquations(model, AssignCausality(model)), cg);
      SolverOptions so;
      so.method = method == ConstraintMethod::kParasitic ? Method::kBDF : Method::kDopri5;
      so.t_end = t_end;
      so.dt_out = t_full / 1000;
      ConstrainedOptions co;
      co.method = method;
      co.source = &model;
      co.codegen = cg;
      ConstrainedReport rep;
      std::string error;
      double last = 0;
      try {
        const Solution sol = SimulateConstrained(cm, so, co, &rep);
        last = sol.Column("t").back();
      } catch (const Error& e) {
        error = e.what();
      }
      std::printf("%s, %s, to %g s: %s\n", name.c_str(), ConstraintMethodName(method).c_str(), t_end,
                  error.empty() ? fmt::format("ran, drift {:.2g}", rep.max_position_drift).c_str()
                                : Brief(error).c_str());
      if (stops) {
        EXPECT_FALSE(error.empty()) << name << ", " << ConstraintMethodName(method) << ": ran past " << stop[1];
        std::smatch at;
        ASSERT_TRUE(std::regex_search(error, at, std::regex("at t = ([-+.0-9e]+)"))) << error;
        EXPECT_NEAR(std::stod(at[1]), std::stod(stop[1]), 0.01)  // the table's two decimals
            << name << ", " << ConstraintMethodName(method) << ": " << error;
      } else {
        EXPECT_TRUE(error.empty()) << name << ", " << ConstraintMethodName(method) << ": " << error;
        EXPECT_DOUBLE_EQ(last, t_end) << name;
      }
    }
  }
  EXPECT_EQ(rows, 6);
}

}  // namespace
}  // namespace paynter
