// Mechanisms in submodels: bodies, joints and loads in a submodel's
// `multibody:` section, ports on bodies' frames and joints' rates, the
// multibody components of the library (library/multibody/), joints written
// between instances, the flat model of `paynter expand`, and the errors.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "test_util.h"
#include "test_paths.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

using testing::ReadFileBytes;
using testing::WriteFileBytes;

class MultibodySubmodelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / fmt::format("paynter_mbsub_{}_{}", ::getpid(), info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { testing::RemoveTree(dir_); }  // a detached build may still write in cache/

  fs::path Write(const std::string& name, const std::string& yaml) const {
    WriteFileBytes(dir_ / name, yaml);
    return dir_ / name;
  }
  Diagnostic ErrorOf(const std::string& yaml) const {
    const fs::path f = Write("m.yaml", yaml);
    try {
      LoadModel(f.string());
    } catch (const Error& e) {
      return e.diagnostic();
    }
    ADD_FAILURE() << "loaded without an error:\n" << yaml;
    return {};
  }
  testing::CommandResult Run(const std::string& args) const {
    return testing::RunCommand(fmt::format("cd '{}' && XDG_CACHE_HOME='{}' {} {}", dir_.string(),
                                           (dir_ / "cache").string(), PAYNTER_EXE, args));
  }
  testing::Run Simulate(const std::string& yaml, double t_end, double dt_out = 0) const {
    return testing::SimulateModel(LoadModel(Write("model.yaml", yaml).string()), t_end, 1e-11, 1e-13,
                                  Method::kDopri5, dt_out);
  }

  fs::path dir_;
};

// The largest difference of two runs' columns (same rows).
double Largest(const Solution& a, const Solution& b, const std::vector<std::string>& cols) {
  double err = 0;
  for (const auto& c : cols) {
    const auto x = a.Column(c), y = b.Column(c);
    EXPECT_EQ(x.size(), y.size()) << c;
    for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) err = std::max(err, std::abs(x[i] - y[i]));
  }
  return err;
}

// The mean period of a column's oscillation: the times it crosses `mid`
// going up, linearly interpolated.
double Period(const Solution& s, const std::string& col, double mid) {
  const auto t = s.Column("t"), x = s.Column(col);
  std::vector<double> up;
  for (size_t i = 1; i < x.size(); ++i)
    if (x[i - 1] < mid && x[i] >= mid) up.push_back(t[i - 1] + (mid - x[i - 1]) / (x[i] - x[i - 1]) * (t[i] - t[i - 1]));
  EXPECT_GE(up.size(), 3u) << col;
  return up.size() < 2 ? 0 : (up.back() - up.front()) / static_cast<double>(up.size() - 1);
}

// B1 (docs/benchmarks.md) from the library: a link, a ground point, a
// revolute joint and a rotational damper on the joint's shaft.
constexpr const char* kB1Library = R"(
name: B1_library
parameters: {L: 1, M: 1, I0: 0.083, B: 10, g: 9.81}
multibody: {gravity: [0, -g, 0]}
instances:
  - {name: bar, use: "lib:multibody/link", parameters: {m: M, L: L, Ixx: I0, Iyy: I0, Izz: I0, x0: L/2}}
  - {name: base, use: "lib:multibody/ground"}
  - {name: pivot, use: "lib:multibody/revolute"}
  - {name: friction, use: "lib:rotational/damper", parameters: {b: B}}
bonds:
  - {from: base.frame, to: pivot.a, dim: 6}
  - {from: pivot.b, to: bar.base, dim: 6}
  - [pivot.shaft, friction.p]
outputs:
  gamma: pivot.angle
  gammadot: f_pivot.joint_angledot
  xG: bar.x
  yG: bar.y
)";

TEST_F(MultibodySubmodelsTest, B1FromLibraryComponentsAgreesWithTheFlatB1) {
  const auto h = Simulate(kB1Library, 5, 0.01);
  const auto flat = testing::SimulateModel(LoadModel(testing::SourcePath("examples/B1_pendulum_3d.yaml")), 5, 1e-11,
                                           1e-13, Method::kDopri5, 0.01);
  const double err = Largest(h.solution, flat.solution, {"gamma", "gammadot", "xG", "yG"});
  std::printf("  B1 from library components vs examples/B1_pendulum_3d.yaml: largest difference %.3g\n", err);
  EXPECT_LT(err, 1e-10);
  // Names are instance paths.
  EXPECT_GE(h.model.FindElement("bar.link_vx"), 0);
  EXPECT_GE(h.model.FindElement("pivot.joint_angledot"), 0);
  EXPECT_GE(h.model.FindElement("friction.damper"), 0);
  // In joint coordinates (the joint component's axis is given by parameters).
  Write("b1.yaml", kB1Library);
  for (const char* form : {"state", "lagrange2"}) {
    const testing::CommandResult r =
        Run(fmt::format("simulate b1.yaml --form {0} --t-end 2 --dt-out 2 --rtol 1e-11 --atol 1e-13 --no-cache -o {0}.csv", form));
    ASSERT_EQ(r.code, 0) << r.out;
  }
  const std::string a = ReadFileBytes(dir_ / "state.csv"), b = ReadFileBytes(dir_ / "lagrange2.csv");
  const double ga = std::stod(a.substr(a.rfind("\n2,") + 3)), gb = std::stod(b.substr(b.rfind("\n2,") + 3));
  std::printf("  B1 from the library at t = 2: gamma %.12g (state form), %.12g (lagrange2)\n", ga, gb);
  EXPECT_NEAR(ga, gb, 1e-8);
}

// A joint written in the top-level multibody section between a link's port
// and the ground: the same mechanism written flat, with the same names,
// simulates bit for bit; the file `paynter expand` writes, alike.
TEST_F(MultibodySubmodelsTest, AJointBetweenInstancesSimulatesBitForBitAsTheFlatMechanism) {
  Write("dp.yaml", R"(
name: double_pendulum
parameters: {g: 9.81}
multibody:
  gravity: [0, -g, 0]
  joints:
    - {name: shoulder, type: revolute, body1: ground, body2: a.base, initial: 0.3}
    - {name: elbow, type: revolute, body1: a.tip, body2: b.base, initial: -0.2}
instances:
  - {name: a, use: "lib:multibody/link", parameters: {m: 1, L: 1, x0: 0.5}}
  - {name: b, use: "lib:multibody/link", parameters: {m: 0.5, L: 0.8, x0: 1.4}}
outputs:
  th1: shoulder_angle
  th2: elbow_angle
)");
  // By hand: the links' bodies named by their paths, their parameters after
  // the model's own, the frame points written into the joints.
  std::string params;
  for (const auto& [i, m, L, x0] : {std::tuple{"a", "1", "1", "0.5"}, std::tuple{"b", "0.5", "0.8", "1.4"}})
    params += fmt::format(
        "  {0}.m: {1}\n  {0}.L: {2}\n  {0}.r: 0.01\n  {0}.Ixx: {0}.m*{0}.r^2/2\n  {0}.Iyy: {0}.m*(3*{0}.r^2 + {0}.L^2)/12\n"
        "  {0}.Izz: {0}.m*(3*{0}.r^2 + {0}.L^2)/12\n  {0}.x0: {3}\n  {0}.y0: 0\n  {0}.z0: 0\n  {0}.rx0: 0\n"
        "  {0}.ry0: 0\n  {0}.rz0: 0\n",
        i, m, L, x0);
  std::string bodies;
  for (const char* i : {"a", "b"})
    bodies += fmt::format(
        "    - {{name: {0}.link, mass: {0}.m, inertia: [{0}.Ixx, {0}.Iyy, {0}.Izz], position: [{0}.x0, {0}.y0, {0}.z0],"
        " orientation: [{0}.rx0, {0}.ry0, {0}.rz0]}}\n",
        i);
  Write("flat.yaml", "name: double_pendulum\nparameters:\n  g: 9.81\n" + params + R"(multibody:
  gravity: [0, -g, 0]
  joints:
    - {name: shoulder, type: revolute, body1: ground, body2: a.link, point2: [-a.L/2, 0, 0], initial: 0.3}
    - {name: elbow, type: revolute, body1: a.link, point1: [a.L/2, 0, 0], body2: b.link, point2: [-b.L/2, 0, 0], initial: -0.2}
  bodies:
)" + bodies + R"(outputs:
  th1: shoulder_angle
  th2: elbow_angle
  a.x: a.link_x
  a.y: a.link_y
  a.z: a.link_z
  b.x: b.link_x
  b.y: b.link_y
  b.z: b.link_z
)");
  testing::CommandResult r = Run("expand dp.yaml -o expanded.yaml");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* f : {"dp", "flat", "expanded"}) {
    r = Run(fmt::format("simulate {0}.yaml --t-end 3 --dt-out 0.01 --rtol 1e-10 --atol 1e-12 --no-cache -o {0}.csv", f));
    ASSERT_EQ(r.code, 0) << r.out;
  }
  const std::string csv = ReadFileBytes(dir_ / "dp.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "t,th1,th2,a.x,a.y,a.z,b.x,b.y,b.z");
  EXPECT_EQ(csv, ReadFileBytes(dir_ / "flat.csv"));
  // The expanded file holds the expansion's expressions as GiNaC prints them,
  // whose order of terms changes from run to run (docs/architecture.md,
  // "Decisions"): read back, they agree to rounding.
  const auto rows = [&](const char* f) { return testing::ReadCsvTable(dir_ / f).rows; };
  const auto x = rows("dp.csv"), y = rows("expanded.csv");
  ASSERT_EQ(x.size(), y.size());
  double err = 0;
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t k = 0; k < x[i].size(); ++k) err = std::max(err, std::abs(x[i][k] - y[i].at(k)));
  std::printf("  double pendulum vs its paynter expand file: largest difference %.3g\n", err);
  EXPECT_LT(err, 1e-10);
  EXPECT_EQ(ReadFileBytes(dir_ / "expanded.yaml").find("instances"), std::string::npos);
}

// The double pendulum of two library links and two library revolute joints
// conserves its energy, computed from the bodies' velocities.
TEST_F(MultibodySubmodelsTest, ADoublePendulumOfLibraryPartsConservesEnergy) {
  const auto run = Simulate(R"(
parameters: {g: 9.81}
multibody: {gravity: [0, -g, 0]}
instances:
  - {name: base, use: "lib:multibody/ground"}
  - {name: shoulder, use: "lib:multibody/revolute", parameters: {angle0: 1.0}}
  - {name: a, use: "lib:multibody/link", parameters: {m: 1, L: 1, x0: 0.5}, outputs: false}
  - {name: elbow, use: "lib:multibody/revolute", parameters: {angle0: -0.5, w0: 2}}
  - {name: b, use: "lib:multibody/link", parameters: {m: 0.5, L: 0.8, x0: 1.4}, outputs: false}
bonds:
  - {from: base.frame, to: shoulder.a, dim: 6}
  - {from: shoulder.b, to: a.base, dim: 6}
  - {from: a.tip, to: elbow.a, dim: 6}
  - {from: elbow.b, to: b.base, dim: 6}
definitions:
  Ta: a.m/2*(f_a.link_vx^2 + f_a.link_vy^2 + f_a.link_vz^2) + (a.Ixx*f_a.link_wx^2 + a.Iyy*f_a.link_wy^2 + a.Izz*f_a.link_wz^2)/2
  Tb: b.m/2*(f_b.link_vx^2 + f_b.link_vy^2 + f_b.link_vz^2) + (b.Ixx*f_b.link_wx^2 + b.Iyy*f_b.link_wy^2 + b.Izz*f_b.link_wz^2)/2
outputs:
  E: Ta + Tb + g*(a.m*a.link_y + b.m*b.link_y)
)", 5, 0.01);
  const auto E = run.solution.Column("E");
  double drift = 0;
  for (double e : E) drift = std::max(drift, std::abs(e - E.front()));
  std::printf("  double pendulum of library parts: E0 = %.12g J, largest drift over 5 s %.3g J\n", E.front(), drift);
  EXPECT_GT(std::abs(E.front()), 0.5);  // a chaotic swing, not a resting one
  EXPECT_LT(drift, 1e-6);
}

// The period of a rod (mass m, length L, radius r) swinging about one end
// under g = 9.81 with a small amplitude a: omega^2 = m g (L/2) / (Izz + m
// (L/2)^2), Izz = m (3 r^2 + L^2) / 12; the amplitude lengthens it by 1 + a^2/16.
double RodPendulumPeriod(double m, double L, double r, double a) {
  const double w = std::sqrt(m * 9.81 * L / 2 / (m * (3 * r * r + L * L) / 12 + m * L * L / 4));
  return 2 * M_PI / w * (1 + a * a / 16);
}

// Small oscillations of a library link on a library revolute joint.
TEST_F(MultibodySubmodelsTest, ALinkOnARevoluteJointOscillatesAtThePhysicalPendulumsFrequency) {
  const auto run = Simulate(R"(
multibody: {gravity: [0, -9.81, 0]}
instances:
  - {name: base, use: "lib:multibody/ground", parameters: {x: 0.2, y: 1}}
  - {name: hinge, use: "lib:multibody/revolute", parameters: {angle0: 0.01}}
  - {name: rod, use: "lib:multibody/link", parameters: {m: 2, L: 0.6, r: 0.02, x0: 0.2, y0: 0.7, rz0: -pi/2}}
bonds:
  - {from: base.frame, to: hinge.a, dim: 6}
  - {from: hinge.b, to: rod.base, dim: 6}
)", 10, 1e-3);
  const double T = RodPendulumPeriod(2, 0.6, 0.02, 0.01);
  const double measured = Period(run.solution, "hinge.angle", 0);
  std::printf("  link on a revolute joint: period %.9f s, hand-derived %.9f s\n", measured, T);
  EXPECT_NEAR(measured / T, 1, 1e-6);
}

// A link on a spherical joint, swinging in a plane, has the same period.
TEST_F(MultibodySubmodelsTest, ALinkOnASphericalJointSwingsAsOnAHinge) {
  const auto run = Simulate(R"(
parameters: {th0: 0.01, L: 0.6}
multibody: {gravity: [0, -9.81, 0]}
instances:
  - {name: base, use: "lib:multibody/ground"}
  - {name: ball, use: "lib:multibody/spherical"}
  - name: rod
    use: lib:multibody/link
    parameters: {m: 2, L: L, r: 0.02, x0: L/2*cos(th0 - pi/2), y0: L/2*sin(th0 - pi/2), rz0: th0 - pi/2}
bonds:
  - {from: base.frame, to: ball.a, dim: 6}
  - {from: ball.b, to: rod.base, dim: 6}
)", 10, 1e-3);
  const double T = RodPendulumPeriod(2, 0.6, 0.02, 0.01);
  const double measured = Period(run.solution, "rod.x", 0);
  std::printf("  link on a spherical joint: period %.9f s, hand-derived %.9f s\n", measured, T);
  EXPECT_NEAR(measured / T, 1, 1e-6);
  double z = 0;
  for (double v : run.solution.Column("rod.z")) z = std::max(z, std::abs(v));
  EXPECT_LT(z, 1e-12);  // it stays in its plane
}

// A link on a universal joint whose second axis lies across the link swings in
// the plane of the first axis as on a hinge.
TEST_F(MultibodySubmodelsTest, ALinkOnAUniversalJointSwingsAsOnAHinge) {
  const auto run = Simulate(R"(
parameters: {th0: 0.01, L: 0.6}
multibody: {gravity: [0, -9.81, 0]}
instances:
  - {name: base, use: "lib:multibody/ground"}
  - {name: hooke, use: "lib:multibody/universal", parameters: {ax: 0, ay: 0, az: 1, bx: 0, by: 1, bz: 0}}
  - name: rod
    use: lib:multibody/link
    parameters: {m: 2, L: L, r: 0.02, x0: L/2*cos(th0 - pi/2), y0: L/2*sin(th0 - pi/2), rz0: th0 - pi/2}
bonds:
  - {from: base.frame, to: hooke.a, dim: 6}
  - {from: hooke.b, to: rod.base, dim: 6}
)", 10, 1e-3);
  const double T = RodPendulumPeriod(2, 0.6, 0.02, 0.01);
  const double measured = Period(run.solution, "rod.x", 0);
  std::printf("  link on a universal joint: period %.9f s, hand-derived %.9f s\n", measured, T);
  EXPECT_NEAR(measured / T, 1, 1e-6);
}

// A link on a vertical cylindrical joint falls along the axis, s = -g t^2/2,
// and a torque T about the axis turns it, angle = T t^2 / (2 Iyy).
TEST_F(MultibodySubmodelsTest, ALinkOnACylindricalJointFallsAndTurnsAlongItsAxis) {
  const auto run = Simulate(R"(
multibody:
  gravity: [0, -9.81, 0]
  loads:
    - {name: twist, type: torque, body: rod.center, value: [0, 0.05, 0]}
instances:
  - {name: base, use: "lib:multibody/ground", parameters: {y: 2}}
  - {name: sleeve, use: "lib:multibody/cylindrical", parameters: {ax: 0, ay: 1, az: 0}}
  - {name: rod, use: "lib:multibody/link", parameters: {m: 2, L: 0.6, r: 0.02, y0: 2}}
bonds:
  - {from: base.frame, to: sleeve.a, dim: 6}
  - {from: sleeve.b, to: rod.center, dim: 6}
)", 1, 0.01);
  const double Iyy = 2 * (3 * 0.02 * 0.02 + 0.6 * 0.6) / 12;
  const auto t = run.solution.Column("t"), s = run.solution.Column("sleeve.s"),
             a = run.solution.Column("sleeve.angle"), x = run.solution.Column("rod.x");
  double err_s = 0, err_a = 0, err_x = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    err_s = std::max(err_s, std::abs(s[i] + 9.81 * t[i] * t[i] / 2));
    err_a = std::max(err_a, std::abs(a[i] - 0.05 * t[i] * t[i] / (2 * Iyy)));
    err_x = std::max(err_x, std::abs(x[i]));
  }
  std::printf("  link on a cylindrical joint: largest errors %.3g m, %.3g rad\n", err_s, err_a);
  EXPECT_LT(err_s, 1e-9);
  EXPECT_LT(err_a, 1e-9);
  EXPECT_LT(err_x, 1e-12);
  EXPECT_GT(a.back(), 0.4);  // it has turned (0.4153 rad)
}

// A link on a planar joint with a tilted gravity slides down the plane,
// x = g sin(a) t^2 / 2, and the plane carries m g cos(a).
TEST_F(MultibodySubmodelsTest, ALinkOnAPlanarJointSlidesDownTheSlope) {
  const auto run = Simulate(R"(
parameters: {g: 9.81, a: 0.3}
multibody: {gravity: [g*sin(a), -g*cos(a), 0]}
instances:
  - {name: floor, use: "lib:multibody/ground"}
  - {name: plane, use: "lib:multibody/planar", parameters: {nx: 0, ny: 1, nz: 0}}
  - {name: block, use: "lib:multibody/link", parameters: {m: 3, L: 0.4, r: 0.05}}
bonds:
  - {from: floor.frame, to: plane.a, dim: 6}
  - {from: plane.b, to: block.center, dim: 6}
)", 1, 0.01);
  const auto t = run.solution.Column("t"), x = run.solution.Column("block.x"), y = run.solution.Column("block.y");
  double err = 0;
  for (size_t i = 0; i < t.size(); ++i)
    err = std::max({err, std::abs(x[i] - 9.81 * std::sin(0.3) * t[i] * t[i] / 2), std::abs(y[i])});
  const double Fy = run.solution.Column("plane.Fy").back();
  std::printf("  link on a planar joint: largest error %.3g m, normal force %.12g N\n", err, Fy);
  EXPECT_LT(err, 1e-9);
  EXPECT_NEAR(Fy, 3 * 9.81 * std::cos(0.3), 1e-9);
}

// A link on a vertical prismatic joint held by a library spring on its rod
// port: s(t) = -(m g / k)(1 - cos(sqrt(k/m) t)).
TEST_F(MultibodySubmodelsTest, ALinkOnAPrismaticJointWithASpringOscillatesAboutItsSag) {
  const auto run = Simulate(R"(
multibody: {gravity: [0, -9.81, 0]}
instances:
  - {name: base, use: "lib:multibody/ground"}
  - {name: slider, use: "lib:multibody/prismatic", parameters: {ax: 0, ay: 1, az: 0}}
  - {name: block, use: "lib:multibody/link", parameters: {m: 3, L: 0.2, r: 0.05}}
  - {name: spring, use: "lib:mechanical/spring", parameters: {k: 1200}}
bonds:
  - {from: base.frame, to: slider.a, dim: 6}
  - {from: slider.b, to: block.center, dim: 6}
  - [slider.rod, spring.p]
)", 2, 0.01);
  const double m = 3, k = 1200, g = 9.81, w = std::sqrt(k / m);
  const auto t = run.solution.Column("t"), s = run.solution.Column("slider.s"), y = run.solution.Column("block.y");
  double err = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const double exact = -(m * g / k) * (1 - std::cos(w * t[i]));
    err = std::max({err, std::abs(s[i] - exact), std::abs(y[i] - exact)});
  }
  std::printf("  link on a prismatic joint with a spring: largest error %.3g m (sag %.4g m)\n", err, m * g / k);
  EXPECT_LT(err, 1e-8);
}

// A link welded to a ground point hangs still; the weld carries its weight.
TEST_F(MultibodySubmodelsTest, ALinkOnAFixedJointCarriesItsWeight) {
  const auto run = Simulate(R"(
multibody: {gravity: [0, 0, -9.81]}
instances:
  - {name: wall, use: "lib:multibody/ground", parameters: {x: 1}}
  - {name: weld, use: "lib:multibody/fixed"}
  - {name: beam, use: "lib:multibody/link", parameters: {m: 4, L: 2, x0: 2}}
bonds:
  - {from: wall.frame, to: weld.a, dim: 6}
  - {from: weld.b, to: beam.base, dim: 6}
outputs: {My: weld.joint_Ty}
)", 1, 0.1);
  const double Fz = run.solution.Column("weld.Fz").back(), My = run.solution.Column("My").back();
  std::printf("  cantilever link: weld force %.12g N, moment %.12g N m\n", Fz, My);
  EXPECT_NEAR(Fz, 4 * 9.81, 1e-9);
  EXPECT_NEAR(std::abs(My), 4 * 9.81 * 1, 1e-9);  // the weight at 1 m from the weld
  for (const char* c : {"beam.x", "beam.y", "beam.z"}) {
    const auto v = run.solution.Column(c);
    EXPECT_NEAR(v.back(), v.front(), 1e-9) << c;
  }
}

// A load written in the model names a link's frame port as its body: the
// force acts at that point. A link hinged at its base, horizontal, no
// gravity, pushed at its tip across its length: theta'' = F L / (Izz + m L^2/4)
// at the start; at the centre with the same force, half of it.
TEST_F(MultibodySubmodelsTest, ALoadAtAFramePortActsAtItsPoint) {
  auto angle = [&](const std::string& where, const std::string& point) {
    const auto run = Simulate(fmt::format(R"(
multibody:
  joints:
    - {{name: hinge, type: revolute, body1: ground, body2: a.base}}
  loads:
    - {{name: push, type: force, body: {}, {}value: [0, 2, 0]}}
instances:
  - {{name: a, use: "lib:multibody/link", parameters: {{m: 1.5, L: 0.8, x0: 0.4}}}}
outputs: {{th: hinge_angle}}
)",
                                          where, point),
                              0.01, 0.01);
    return run.solution.Column("th").back();
  };
  const double m = 1.5, L = 0.8, r = 0.01, F = 2, t = 0.01;
  const double alpha = F * L / (m * (3 * r * r + L * L) / 12 + m * L * L / 4);
  const double tip = angle("a.tip", ""), center = angle("a.center", ""),
               offset = angle("a.center", "point: [a.L/2, 0, 0], ");
  std::printf("  force at a link's tip: angle %.12g after %g s, hand-derived %.12g\n", tip, t, alpha * t * t / 2);
  EXPECT_NEAR(tip / (alpha * t * t / 2), 1, 1e-6);
  EXPECT_NEAR(center / (alpha * t * t / 4), 1, 1e-6);
  EXPECT_NEAR(offset, tip, 1e-12 * std::abs(tip));  // the load's own point is added to the frame's
}

// A submodel with bodies and a joint of its own, nested in another, with a
// rate port: every name is an instance path, its parameters are set per
// instance and on the command line, and it moves as the same chain of
// library links.
constexpr const char* kArm = R"(
submodels:
  arm:
    parameters: {m: 1, L: 1, r: 0.01}
    ports:
      - {name: base, body: link1, point: [-L/2, 0, 0]}
      - {name: tip, body: link2, point: [L/2, 0, 0]}
      - {name: elbow, joint: elbow}
    multibody:
      bodies:
        - {name: link1, mass: m, inertia: [m*r^2/2, m*(3*r^2 + L^2)/12, m*(3*r^2 + L^2)/12], position: [L/2, 0, 0]}
        - {name: link2, mass: m, inertia: [m*r^2/2, m*(3*r^2 + L^2)/12, m*(3*r^2 + L^2)/12], position: [3*L/2, 0, 0]}
      joints:
        - {name: elbow, type: revolute, body1: link1, point1: [L/2, 0, 0], body2: link2, point2: [-L/2, 0, 0], initial: -0.2}
    outputs: {bend: elbow_angle}
  robot:
    parameters: {m: 1}
    instances:
      - {name: arm, use: arm, parameters: {m: m}}
    ports:
      - {name: base, element: arm.base}
      - {name: elbow, element: arm.elbow}
)";

TEST_F(MultibodySubmodelsTest, NestedMechanismSubmodelsNameEverythingByPath) {
  const std::string top = std::string(kArm) + R"(
parameters: {g: 9.81, c: 0.3}
multibody:
  gravity: [0, -g, 0]
  joints:
    - {name: shoulder, type: revolute, body1: ground, body2: r.base, initial: 0.3}
instances:
  - {name: r, use: robot}
  - {name: d, use: "lib:rotational/damper", parameters: {b: c}}
bonds:
  - [r.elbow, d.p]
outputs: {th1: shoulder_angle}
)";
  const auto run = Simulate(top, 3, 0.01);
  for (const char* e : {"r.arm.link1_vx", "r.arm.link2_wz", "r.arm.elbow_angledot", "r.arm.elbow_c1"})
    EXPECT_GE(run.model.FindElement(e), 0) << e;
  EXPECT_FALSE(run.solution.Column("r.arm.bend").empty());
  // The same chain of library links with library joints and the damper on the elbow.
  const auto lib = Simulate(R"(
parameters: {g: 9.81, c: 0.3}
multibody:
  gravity: [0, -g, 0]
  joints:
    - {name: shoulder, type: revolute, body1: ground, body2: a.base, initial: 0.3}
instances:
  - {name: a, use: "lib:multibody/link", parameters: {x0: 0.5}}
  - {name: b, use: "lib:multibody/link", parameters: {x0: 1.5}}
  - {name: elbow, use: "lib:multibody/revolute", parameters: {angle0: -0.2}}
  - {name: d, use: "lib:rotational/damper", parameters: {b: c}}
bonds:
  - {from: a.tip, to: elbow.a, dim: 6}
  - {from: elbow.b, to: b.base, dim: 6}
  - [elbow.shaft, d.p]
outputs: {th1: shoulder_angle, bend: elbow.joint_angle}
)", 3, 0.01);
  const double err = Largest(run.solution, lib.solution, {"th1"});
  double err2 = 0;
  const auto x = run.solution.Column("r.arm.bend"), y = lib.solution.Column("bend");
  for (size_t i = 0; i < x.size(); ++i) err2 = std::max(err2, std::abs(x[i] - y[i]));
  std::printf("  nested arm submodel vs library links: largest difference %.3g, %.3g rad\n", err, err2);
  EXPECT_LT(std::max(err, err2), 1e-9);

  // --param by path changes the arm's mass: a different motion.
  Write("top.yaml", top);
  testing::CommandResult r = Run("simulate top.yaml --t-end 1 --dt-out 1 --no-cache -o a.csv");
  ASSERT_EQ(r.code, 0) << r.out;
  r = Run("simulate top.yaml --t-end 1 --dt-out 1 --no-cache --param r.arm.m=3 -o b.csv");
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string a = ReadFileBytes(dir_ / "a.csv");
  EXPECT_EQ(a.substr(0, a.find('\n')), "t,th1,r.arm.bend,d.tau,d.omega");
  EXPECT_NE(a, ReadFileBytes(dir_ / "b.csv"));
  // The instance's parameter, not a copy: a mass that is not positive is refused at its path.
  r = Run("simulate top.yaml --t-end 1 --no-cache --param r.arm.m=-1 -o c.csv");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("r.arm"), std::string::npos) << r.out;
}

// ---- errors ------------------------------------------------------------------
void ExpectError(const Diagnostic& d, int line, const std::string& element, const std::string& message) {
  EXPECT_EQ(d.where.line, line) << d.ToString();
  EXPECT_EQ(d.element, element) << d.ToString();
  EXPECT_NE(d.message.find(message), std::string::npos) << d.ToString();
  EXPECT_FALSE(d.hint.empty()) << d.ToString();
}

// A ground point, a revolute joint component and a link (lines 2-6).
constexpr const char* kParts = R"(
multibody: {gravity: [0, -9.81, 0]}
instances:
  - {name: base, use: "lib:multibody/ground"}
  - {name: pivot, use: "lib:multibody/revolute"}
  - {name: bar, use: "lib:multibody/link", parameters: {x0: 0.5}}
bonds:
  - {from: base.frame, to: pivot.a, dim: 6}
)";

TEST_F(MultibodySubmodelsTest, UnknownPorts) {
  Diagnostic d = ErrorOf(std::string(kParts) + "  - {from: pivot.b, to: bar.bse, dim: 6}\n");
  ExpectError(d, 9, "bar.bse", "instance 'bar' has no port 'bse'");
  EXPECT_NE(d.hint.find("did you mean 'base'"), std::string::npos) << d.ToString();
  d = ErrorOf(R"(
multibody:
  joints:
    - {name: J, type: revolute, body1: ground, body2: bar.middle}
instances:
  - {name: bar, use: "lib:multibody/link"}
)");
  ExpectError(d, 4, "bar.middle", "instance 'bar' has no port 'middle'");
  EXPECT_NE(d.hint.find("base, tip, center"), std::string::npos) << d.ToString();
  // A submodel's port on a body or a joint it does not have.
  d = ErrorOf(R"(
submodels:
  s:
    ports: [{name: p, body: bb}]
    multibody:
      bodies: [{name: b, mass: 1, inertia: [1, 1, 1]}]
instances:
  - {name: x, use: s}
)");
  ExpectError(d, 4, "x.p", "port 'p' names no body of the submodel");
  d = ErrorOf(R"(
submodels:
  s:
    ports: [{name: p, joint: J}]
    multibody:
      bodies: [{name: b, mass: 1, inertia: [1, 1, 1]}]
      joints: [{name: J, type: spherical, body1: ground, body2: b}]
instances:
  - {name: x, use: s}
)");
  ExpectError(d, 4, "x.p", "joint 'J' has no single rate");
}

TEST_F(MultibodySubmodelsTest, PortsOfTheWrongKind) {
  // A joint's body that is a joint's rate port, or an open frame.
  const std::string joint_to = R"(
multibody:
  joints:
    - {name: J, type: revolute, body1: ground, body2: pivot.%s}
instances:
  - {name: pivot, use: "lib:multibody/revolute"}
)";
  auto to = [&](const std::string& port) { return std::string(joint_to).replace(joint_to.find("%s"), 2, port); };
  Diagnostic d = ErrorOf(to("shaft"));
  ExpectError(d, 4, "pivot.shaft", "'pivot.shaft' is not a body's frame");
  d = ErrorOf(to("a"));
  ExpectError(d, 4, "pivot.a", "'pivot.a' is not a body's frame");
  EXPECT_NE(d.got.find("open frame"), std::string::npos) << d.ToString();
  // A frame joined to an element, to a rate port, to another body's frame.
  d = ErrorOf(std::string(kParts) + R"(  - {from: pivot.b, to: bar.base, dim: 6}
  - {from: bar.tip, to: J, dim: 6}
elements: [{name: J, kind: "1"}]
)");
  ExpectError(d, 10, "J", "'J' joins frame port 'bar.tip', but it is no frame");
  d = ErrorOf(std::string(kParts) + R"(  - {from: pivot.b, to: bar.base, dim: 6}
  - {from: pivot.shaft, to: bar.tip, dim: 6}
)");
  ExpectError(d, 10, "pivot.shaft", "'pivot.shaft' joins frame port 'bar.tip', but it is no frame");
  d = ErrorOf(std::string(kParts) + R"(  - {from: pivot.b, to: bar.base, dim: 6}
  - {from: base.frame, to: bar.tip, dim: 6}
)");
  ExpectError(d, 10, "bar.tip", "a bond joins two bodies' frames");
  // An open frame left unjoined.
  d = ErrorOf(kParts);
  ExpectError(d, 5, "pivot.b", "port 'b' of instance 'pivot' is not joined");
  EXPECT_NE(d.hint.find("dim: 6"), std::string::npos) << d.ToString();
}

TEST_F(MultibodySubmodelsTest, AVectorPortJoinedByAScalarBond) {
  Diagnostic d = ErrorOf(std::string(kParts) + "  - {from: pivot.b, to: bar.base}\n");
  ExpectError(d, 9, "pivot.b", "port 'pivot.b' carries a bond of dimension 6");
  EXPECT_EQ(d.got, "a bond of dimension 1");
  // And a scalar rate port joined by a vector bond.
  d = ErrorOf(std::string(kParts) + R"(  - {from: pivot.b, to: bar.base, dim: 6}
  - {from: pivot.shaft, to: J, dim: 3}
elements: [{name: J, kind: "1"}]
)");
  ExpectError(d, 10, "pivot.shaft", "port 'pivot.shaft' carries a bond of dimension 1");
}

TEST_F(MultibodySubmodelsTest, BodyNameClashes) {
  // An instance named as a body of the same model.
  Diagnostic d = ErrorOf(R"(
multibody:
  bodies:
    - {name: bar, mass: 1, inertia: [1, 1, 1]}
instances:
  - {name: bar, use: "lib:multibody/link"}
)");
  ExpectError(d, 6, "bar", "the name 'bar' is used twice");
  // Two bodies of one submodel with one name: the error names the path.
  d = ErrorOf(R"(
submodels:
  s:
    multibody:
      bodies:
        - {name: b, mass: 1, inertia: [1, 1, 1]}
        - {name: b, mass: 2, inertia: [1, 1, 1]}
instances:
  - {name: x, use: s}
)");
  ExpectError(d, 7, "x.b", "duplicate body 'x.b'");
  // A body written by its flat path beside the instance that makes it.
  d = ErrorOf(R"(
multibody:
  bodies: [{name: a.link, mass: 1, inertia: [1, 1, 1]}]
instances:
  - {name: a, use: "lib:multibody/link"}
)");
  EXPECT_NE(d.message.find("duplicate body 'a.link'"), std::string::npos) << d.ToString();
  EXPECT_NE(d.hint.find("m.yaml:3"), std::string::npos) << d.ToString();
}

// `junction: true` gives a joint's rate its 1-junction with nothing on it,
// which a bond joins: a library damper there is the joint's own damping.
TEST_F(MultibodySubmodelsTest, AJointsJunctionTakesABond) {
  const std::string pendulum = R"(
multibody:
  gravity: [0, -9.81, 0]
  bodies: [{name: bar, mass: 1, inertia: [0.083, 0.083, 0.083], position: [0.5, 0, 0]}]
  joints:
    - {name: pivot, type: revolute, body1: ground, body2: bar, point2: [-0.5, 0, 0], %s}
outputs: {w: f_pivot_angledot}
)";
  auto with = [&](const std::string& key) { return std::string(pendulum).replace(pendulum.find("%s"), 2, key); };
  const auto own = Simulate(with("damping: 3"), 2, 0.1);
  const auto bonded = Simulate(with("junction: true") + R"(instances:
  - {name: d, use: "lib:rotational/damper", parameters: {b: 3}, outputs: false}
bonds: [[pivot_angledot, d.p]]
)", 2, 0.1);
  const double err = Largest(own.solution, bonded.solution, {"w"});
  std::printf("  damping: 3 vs a damper bonded to junction: true: largest difference %.3g rad/s\n", err);
  EXPECT_LT(err, 1e-10);
  Diagnostic d = ErrorOf(with("junction: yes"));
  ExpectError(d, 6, "pivot", "'junction' is true or false");
  d = ErrorOf(std::string(with("junction: true")).replace(with("junction: true").find("revolute"), 8, "spherical"));
  ExpectError(d, 6, "pivot", "a spherical joint has 0 free directions");
}

TEST_F(MultibodySubmodelsTest, TheMechanismsSettingsBelongToTheTopLevel) {
  const Diagnostic d = ErrorOf(R"(
submodels:
  s:
    multibody:
      gravity: [0, 0, -1]
      bodies: [{name: b, mass: 1, inertia: [1, 1, 1]}]
instances:
  - {name: x, use: s}
)");
  ExpectError(d, 5, "x", "a submodel's multibody section sets 'gravity'");
}

}  // namespace
}  // namespace paynter
