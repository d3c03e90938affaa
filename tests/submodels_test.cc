// Submodels and ports: nesting, parameters per instance, imports by path and
// from the library, names as instance paths, the errors, and the flat model
// of `paynter expand` simulating bit for bit as the hierarchical one.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "test_util.h"
#include "test_paths.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

using testing::ReadFileBytes;
using testing::WriteFileBytes;

// The last column of a CSV's last row.
double LastValue(const fs::path& csv) {
  std::string text = ReadFileBytes(csv);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return std::stod(text.substr(text.find_last_of(',') + 1));
}

class SubmodelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / fmt::format("paynter_submodels_{}_{}", ::getpid(), info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { testing::RemoveTree(dir_); }

  // The Error that loading `file` throws (fails the test when it loads).
  Diagnostic ErrorOf(const fs::path& file) const {
    try {
      LoadModel(file.string());
    } catch (const Error& e) {
      return e.diagnostic();
    }
    ADD_FAILURE() << file << " loaded without an error";
    return {};
  }
  Diagnostic ErrorOf(const std::string& name, const std::string& yaml) const {
    WriteFileBytes(dir_ / name, yaml);
    return ErrorOf(dir_ / name);
  }

  // paynter run from `cwd` with `env` set, its cache in the test's directory.
  testing::CommandResult Run(const std::string& args, const std::string& env = "", const fs::path& cwd = {}) const {
    return testing::RunCommand(fmt::format("cd '{}' && XDG_CACHE_HOME='{}' {} {} {}",
                                           (cwd.empty() ? dir_ : cwd).string(), (dir_ / "cache").string(), env,
                                           PAYNTER_EXE, args));
  }

  fs::path dir_;
};

// An RC low-pass stage as a submodel of two library components, used twice
// in a filter, which the model uses once: three levels, parameters set per
// instance as expressions of the parent's parameters.
constexpr const char* kFilter = R"(
name: filter
parameters: {R: 1, C: 1, v0: 1}
ports:
  - {name: in, element: node_in}
submodels:
  stage:
    parameters: {R: ~, C: ~, v0: 0}
    ports:
      - {name: p, element: J}
      - {name: out, element: node, required: false}
    instances:
      - {name: res, use: "lib:electrical/resistor", parameters: {R: R}}
      - {name: cap, use: "lib:electrical/capacitor", parameters: {C: C, v0: v0}}
    elements:
      - {name: J, kind: "1"}
      - {name: node, kind: "0"}
    bonds: [[J, res.p], [res.n, node], [node, cap.p]]
    outputs: {v: cap.v}
instances:
  - {name: s1, use: stage, parameters: {R: R, C: C, v0: v0}}
  - {name: s2, use: stage, parameters: {R: 2*R, C: C/2}}
elements:
  - {name: node_in, kind: "0"}
  - {name: link, kind: "1"}
bonds: [[node_in, s1.p], [s1.out, link], [link, s2.p]]
)";

TEST_F(SubmodelsTest, NestedSubmodelsFromFilesAndLibraryTakeInstancePaths) {
  WriteFileBytes(dir_ / "parts" / "filter.yaml", kFilter);
  WriteFileBytes(dir_ / "top.yaml", R"(
name: top
parameters: {Rb: 0.5, Cb: 2}
instances:
  - {name: f, use: parts/filter.yaml, parameters: {R: 2*Rb, C: Cb, v0: 3}}
  - {name: src, use: "lib:electrical/voltage_source", parameters: {V: 0}}
bonds: [[src.p, f.in]]
outputs:
  v_last: f.s2.v
  i_first: f.s1.res.i
)");
  const Model m = LoadModel((dir_ / "top.yaml").string());
  EXPECT_GE(m.FindElement("f.s1.res.res"), 0);
  EXPECT_GE(m.FindElement("f.s2.cap.cap"), 0);
  auto param = [&](const std::string& name) {
    for (const auto& p : m.parameters)
      if (p.name == name) return p.value;
    ADD_FAILURE() << "no parameter " << name;
    return 0.0;
  };
  EXPECT_EQ(param("f.R"), 1.0);
  EXPECT_EQ(param("f.s2.R"), 2.0);   // 2*R of the filter, whose R is 2*Rb
  EXPECT_EQ(param("f.s2.C"), 1.0);   // C/2
  EXPECT_EQ(param("f.s1.cap.v0"), 3.0);
  EXPECT_EQ(param("f.s2.cap.v0"), 0.0);  // the stage's default
  std::vector<std::string> names;
  for (const auto& o : m.outputs) names.push_back(o.name);
  // The model's own outputs, then each instance's, depth first, by path.
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names[0], "v_last");
  EXPECT_EQ(names[1], "i_first");
  EXPECT_NE(std::find(names.begin(), names.end(), "f.s1.v"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "f.s1.cap.v"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "src.i"), names.end());
  // The source holds 0 V at the input: the first capacitor (1 F through 1 ohm)
  // discharges into the input and the second (0.5 F behind 2 ohm). The states
  // are named by path too.
  const auto run = testing::SimulateModel(LoadModel((dir_ / "top.yaml").string()), 1.0);
  EXPECT_NE(std::find(run.equations.state_names.begin(), run.equations.state_names.end(), "q_f.s1.cap.cap"),
            run.equations.state_names.end());
  const auto v1 = run.solution.Column("f.s1.v"), v2 = run.solution.Column("v_last");
  EXPECT_DOUBLE_EQ(v1.front(), 3.0);
  EXPECT_DOUBLE_EQ(v2.front(), 0.0);
  EXPECT_LT(v1.back(), 3.0);
  EXPECT_GT(v2.back(), 0.0);  // charged by the first stage
}

// The same circuit written flat, by hand, with the stage's equations: the
// hierarchical model gives the same trajectory.
// A drawing opens nested submodels one level at a time: level 1 has a block
// per instance of the model, level 2 opens each block into the instances it
// is made of (an element of a shallower instance is drawn as itself), and no
// level deeper than the deepest instance has blocks.
TEST(SubmodelDrawings, NestedSubmodelsOpenOneLevelAtATime) {
  const std::string path = testing::SourcePath("examples/dc_drive_nested.yaml");
  const Model m = LoadModel(path);
  const ModelSpec written = LoadSpec(ModelSource::File(path), {}, LoadPass::kSubmodels);
  const ModelSpec hierarchical = LoadSpec(ModelSource::File(path), {}, LoadPass::kRead);
  auto names = [](const DrawComponents& d) {
    std::vector<std::string> n;
    for (const auto& c : d.components) n.push_back(c.name + " | " + c.label);
    std::sort(n.begin(), n.end());
    return n;
  };
  const DrawComponents one = FindDrawComponents(m, written, &hierarchical);
  EXPECT_EQ(one.levels, 2);
  EXPECT_EQ(names(one), (std::vector<std::string>{"drive | drive\ndc_drive", "load | load\nlib:rotational/inertia",
                                                   "supply | supply\nlib:electrical/voltage_source"}));
  // The bonds at the ports of level 1 carry the ports' names.
  int named = 0;
  for (const auto& mb : one.multibonds) named += mb.from_port == "out" || mb.to_port == "p";
  EXPECT_EQ(named, 2);

  const DrawComponents two = FindDrawComponents(m, written, &hierarchical, 2);
  EXPECT_EQ(names(two), (std::vector<std::string>{"drive.gear | drive.gear\nlib:rotational/gear",
                                                   "drive.motor | drive.motor\nlib:electrical/dc_motor"}));
  // Every element of drive is in one of its two blocks; the library's
  // components of level 1 (one level deep) are drawn as their elements.
  size_t inside = 0;
  for (const auto& c : two.components) inside += c.elements.size();
  size_t of_drive = 0;
  for (const auto& e : m.elements) of_drive += e.name.rfind("drive.", 0) == 0;
  EXPECT_EQ(inside, of_drive);
  for (size_t i = 0; i < m.elements.size(); ++i)
    if (m.elements[i].name.rfind("supply.", 0) == 0 || m.elements[i].name.rfind("load.", 0) == 0)
      EXPECT_EQ(two.component_of[i], -1) << m.elements[i].name;
  // Below level 1 a single bond between two nodes is drawn as a bond, not a multibond of one.
  for (const auto& mb : two.multibonds) EXPECT_TRUE(mb.bonds.size() > 1 || mb.label.empty()) << mb.from << " " << mb.to;
  const std::string dot = ComponentGraphDot(m, nullptr, two);
  EXPECT_NE(dot.find("id=\"l2comp0\""), std::string::npos);
  EXPECT_EQ(dot.find("id=\"comp0\""), std::string::npos);  // ids unique across the levels' drawings
  EXPECT_TRUE(FindDrawComponents(m, written, &hierarchical, 3).empty());
}

TEST_F(SubmodelsTest, AHierarchicalModelAgreesWithTheSameModelWrittenByHand) {
  WriteFileBytes(dir_ / "parts" / "filter.yaml", kFilter);
  WriteFileBytes(dir_ / "top.yaml", R"(
instances:
  - {name: f, use: parts/filter.yaml, parameters: {R: 1, C: 1, v0: 3}}
  - {name: src, use: "lib:electrical/voltage_source", parameters: {V: 0}}
bonds: [[src.p, f.in]]
outputs: {v1: f.s1.v, v2: f.s2.v}
)");
  const auto h = testing::SimulateModel(LoadModel((dir_ / "top.yaml").string()), 2.0, 1e-10, 1e-12,
                                        Method::kDopri5, 0.01);
  // By hand: node_in at 0 V; stage 1: C1 v1' = -(v1 - 0)/R1 - i2; stage 2:
  // i2 = (v1 - v2)/R2, C2 v2' = i2.
  const auto flat = testing::SimulateModel(LoadModelFromString(R"(
parameters: {R1: 1, C1: 1, R2: 2, C2: 0.5}
elements:
  - {name: c1, kind: C, capacitance: C1, initial: 3*C1}
  - {name: n1, kind: "0"}
  - {name: r1, kind: R, resistance: R1}
  - {name: r2j, kind: "1"}
  - {name: r2, kind: R, resistance: R2}
  - {name: c2, kind: C, capacitance: C2}
bonds: [[n1, c1], [n1, r1], [n1, r2j], [r2j, r2], [r2j, c2]]
outputs: {v1: e_c1, v2: e_c2}
)", "flat.yaml"), 2.0, 1e-10, 1e-12, Method::kDopri5, 0.01);
  const auto a1 = h.solution.Column("v1"), a2 = h.solution.Column("v2");
  const auto b1 = flat.solution.Column("v1"), b2 = flat.solution.Column("v2");
  ASSERT_EQ(a1.size(), b1.size());
  double err = 0;
  for (size_t i = 0; i < a1.size(); ++i) err = std::max({err, std::abs(a1[i] - b1[i]), std::abs(a2[i] - b2[i])});
  std::printf("  hierarchical vs hand-written RC ladder, largest difference: %.3g V\n", err);
  EXPECT_LT(err, 1e-9);
}

TEST_F(SubmodelsTest, ExpandWritesAFlatModelThatSimulatesBitForBit) {
  const std::string model = testing::SourcePath("examples/dc_motor_load.yaml");
  const fs::path flat = dir_ / "flat.yaml", a = dir_ / "a.csv", b = dir_ / "b.csv";
  testing::CommandResult r = Run(fmt::format("expand {} -o {}", model, flat.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string text = ReadFileBytes(flat);
  EXPECT_EQ(text.find("instances"), std::string::npos);
  EXPECT_NE(text.find("motor.La"), std::string::npos);
  r = Run(fmt::format("simulate {} --t-end 1 --no-cache -o {}", model, a.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  r = Run(fmt::format("simulate {} --t-end 1 --no-cache -o {}", flat.string(), b.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string csv = ReadFileBytes(a);
  EXPECT_EQ(csv, ReadFileBytes(b));
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "t,speed_rpm,P_friction,supply.i,motor.i,motor.omega,motor.torque,load.omega,load.momentum");
  // Hand-derived steady speed: omega = k V / (k^2 + R (b + bL/N^2)).
  const auto run = testing::SimulateFile("examples/dc_motor_load.yaml", 2.0);
  const double w = 0.06 * 12 / (0.06 * 0.06 + 1.2 * (1e-6 + 2e-3 / 25));
  EXPECT_NEAR(run.solution.Column("motor.omega").back() / w, 1, 1e-6);
  EXPECT_NEAR(run.solution.Column("load.omega").back() * 5 / w, 1, 1e-6);
}

TEST_F(SubmodelsTest, TheLibraryIsFoundFromAnyDirectoryAndCanBeReplaced) {
  const std::string model = testing::SourcePath("examples/dc_motor_load.yaml");
  testing::CommandResult r = Run(fmt::format("check {}", model), "", "/");
  EXPECT_EQ(r.code, 0) << r.out;
  // An instance's parameter set on the command line, by its path.
  const fs::path a = dir_ / "a.csv", b = dir_ / "b.csv";
  r = Run(fmt::format("simulate {} --t-end 1 --dt-out 1 -o {}", model, a.string()));
  EXPECT_EQ(r.code, 0) << r.out;
  r = Run(fmt::format("simulate {} --t-end 1 --dt-out 1 --param motor.k=0.03 -o {}", model, b.string()));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(ReadFileBytes(a), ReadFileBytes(b));
  r = Run(fmt::format("simulate {} --t-end 1 --param motor.kk=0.03 -o {}", model, b.string()));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("motor.kk"), std::string::npos) << r.out;
  // PAYNTER_LIBRARY points lib: elsewhere: a library without the motor.
  fs::create_directories(dir_ / "otherlib");
  r = Run(fmt::format("check {}", model), fmt::format("PAYNTER_LIBRARY='{}'", (dir_ / "otherlib").string()));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("submodel file of 'lib:electrical/voltage_source' is missing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("otherlib"), std::string::npos) << r.out;
}

TEST_F(SubmodelsTest, EditingAnImportedFileIsSeenThroughTheStageCache) {
  WriteFileBytes(dir_ / "part.yaml", R"(
parameters: {m: 2}
ports: [{name: p, element: mass}]
elements: [{name: mass, kind: I, inertance: m}]
bonds: []
outputs: {v: f_mass}
)");
  WriteFileBytes(dir_ / "top.yaml", R"(
instances:
  - {name: body, use: part.yaml}
elements: [{name: F, kind: Se, effort: 1}]
bonds: [[F, body.p]]
)");
  const fs::path csv = dir_ / "out.csv";
  testing::CommandResult r = Run(fmt::format("simulate top.yaml --t-end 1 --dt-out 1 -o {}", csv.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NEAR(LastValue(csv), 0.5, 1e-12) << ReadFileBytes(csv);
  std::string part = ReadFileBytes(dir_ / "part.yaml");
  part.replace(part.find("m: 2"), 4, "m: 4");
  WriteFileBytes(dir_ / "part.yaml", part);
  r = Run(fmt::format("simulate top.yaml --t-end 1 --dt-out 1 -o {}", csv.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NEAR(LastValue(csv), 0.25, 1e-12) << ReadFileBytes(csv);
}

TEST_F(SubmodelsTest, VectorPortsCarryVectorBonds) {
  WriteFileBytes(dir_ / "top.yaml", R"(
submodels:
  body:
    parameters: {m: 1}
    ports: [{name: v, element: J, dim: 3}]
    elements:
      - {name: J, kind: "1"}
      - {name: mass, kind: I, inertance: m}
    bonds: [{from: J, to: mass, dim: 3}]
instances:
  - {name: b, use: body, parameters: {m: 2}}
elements: [{name: F, kind: Se, effort: [1, 2, 4]}]
bonds: [{from: F, to: b.v, dim: 3}]
outputs: {vx: f_b.J_x, vz: b.f_J_z}
)");
  const auto run = testing::SimulateModel(LoadModel((dir_ / "top.yaml").string()), 1.0);
  EXPECT_NEAR(run.solution.Column("vx").back(), 0.5, 1e-12);
  EXPECT_NEAR(run.solution.Column("vz").back(), 2.0, 1e-12);
  WriteFileBytes(dir_ / "bad.yaml", ReadFileBytes(dir_ / "top.yaml").replace(ReadFileBytes(dir_ / "top.yaml").find("{from: F, to: b.v, dim: 3}"), 26, "{from: F, to: b.v}"));
  const Diagnostic d = ErrorOf(dir_ / "bad.yaml");
  EXPECT_NE(d.message.find("port 'b.v' carries a bond of dimension 3"), std::string::npos) << d.ToString();
  EXPECT_EQ(d.element, "b.v");
}

// A library motor joined to a mechanism's revolute joint (its rate
// junction): with no gravity it settles at k V / (k^2 + R b_joint).
TEST_F(SubmodelsTest, ASubmodelDrivesAJointOfTheMechanism) {
  WriteFileBytes(dir_ / "top.yaml", R"(
parameters: {L: 1, M: 1, I0: 0.083}
multibody:
  bodies:
    - {name: bar, mass: M, inertia: [I0, I0, I0], position: [L/2, 0, 0]}
  joints:
    - {name: pivot, type: revolute, body1: ground, body2: bar, axis: [0, 0, 1],
       point1: [0, 0, 0], point2: [-L/2, 0, 0], damping: 0.1}
instances:
  - {name: supply, use: "lib:electrical/voltage_source", parameters: {V: 12}}
  - {name: motor, use: "lib:electrical/dc_motor", parameters: {R: 1, L: 1e-3, k: 0.5, J: 1e-3}}
bonds:
  - [supply.p, motor.p]
  - [motor.shaft, pivot_angledot]
outputs: {w: f_pivot_angledot}
)");
  const auto run = testing::SimulateModel(LoadModel((dir_ / "top.yaml").string()), 25.0, 1e-10, 1e-12);
  const double w = 0.5 * 12 / (0.25 + 1 * 0.1);
  std::printf("  motor on a revolute joint: steady speed %.12g (analytic %.12g)\n", run.solution.Column("w").back(), w);
  EXPECT_NEAR(run.solution.Column("w").back() / w, 1, 1e-8);
  EXPECT_NEAR(run.solution.Column("motor.omega").back() / w, 1, 1e-8);
}

// Every error: the file and line where it is written, the instance path, a hint.
void ExpectLocated(const Diagnostic& d, const std::string& file_end, int line, const std::string& element,
                   const std::string& message) {
  EXPECT_TRUE(d.where.file.size() >= file_end.size() &&
              d.where.file.compare(d.where.file.size() - file_end.size(), file_end.size(), file_end) == 0)
      << d.ToString();
  EXPECT_EQ(d.where.line, line) << d.ToString();
  EXPECT_EQ(d.element, element) << d.ToString();
  EXPECT_NE(d.message.find(message), std::string::npos) << d.ToString();
  EXPECT_FALSE(d.hint.empty()) << d.ToString();
}

constexpr const char* kMotor = R"(
submodels:
  motor:
    parameters: {R: 1, k: 0.1}
    ports:
      - {name: p, element: Je}
      - {name: shaft, element: Jm}
    elements:
      - {name: Je, kind: "1"}
      - {name: Ra, kind: R, resistance: R}
      - {name: emf, kind: GY, ratio: k}
      - {name: Jm, kind: "1"}
      - {name: rotor, kind: I, inertance: 1}
    bonds: [[Je, Ra], [Je, emf], [emf, Jm], [Jm, rotor]]
)";

TEST_F(SubmodelsTest, UnknownSubmodel) {
  const Diagnostic d = ErrorOf("m.yaml", std::string(kMotor) + R"(instances:
  - {name: m1, use: motr}
elements: [{name: V, kind: Se, effort: 1}]
bonds: [[V, m1.p]]
)");
  ExpectLocated(d, "m.yaml", 16, "m1", "unknown submodel 'motr'");
  EXPECT_NE(d.hint.find("motor"), std::string::npos);
}

TEST_F(SubmodelsTest, UnknownPortAndUnknownInstance) {
  Diagnostic d = ErrorOf("m.yaml", std::string(kMotor) + R"(instances:
  - {name: m1, use: motor}
elements: [{name: V, kind: Se, effort: 1}]
bonds:
  - [V, m1.p]
  - [m1.shaf, V]
)");
  ExpectLocated(d, "m.yaml", 20, "m1.shaf", "instance 'm1' has no port 'shaf'");
  EXPECT_NE(d.hint.find("shaft"), std::string::npos);
  d = ErrorOf("n.yaml", std::string(kMotor) + R"(instances:
  - {name: m1, use: motor}
elements: [{name: V, kind: Se, effort: 1}]
bonds:
  - [V, m2.p]
)");
  ExpectLocated(d, "n.yaml", 19, "m2.p", "there is no instance 'm2'");
}

TEST_F(SubmodelsTest, PortJoinedTwiceOrNotAtAll) {
  Diagnostic d = ErrorOf("m.yaml", std::string(kMotor) + R"(instances:
  - {name: m1, use: motor}
elements: [{name: V, kind: Se, effort: 1}, {name: W, kind: Se, effort: 2}]
bonds:
  - [V, m1.p]
  - [W, m1.p]
)");
  ExpectLocated(d, "m.yaml", 20, "m1.p", "port 'm1.p' is joined twice");
  d = ErrorOf("n.yaml", std::string(kMotor) + R"(instances:
  - {name: m1, use: motor}
elements: [{name: V, kind: Se, effort: 1}]
bonds:
  - [V, m1.p]
)");
  ExpectLocated(d, "n.yaml", 16, "m1.shaft", "port 'shaft' of instance 'm1' is not joined");
}

TEST_F(SubmodelsTest, ParameterNotDeclaredOrNotGiven) {
  Diagnostic d = ErrorOf("m.yaml", std::string(kMotor) + R"(instances:
  - name: m1
    use: motor
    parameters: {R: 2, kk: 3}
elements: [{name: V, kind: Se, effort: 1}, {name: L, kind: I, inertance: 1}]
bonds: [[V, m1.p], [m1.shaft, L]]
)");
  ExpectLocated(d, "m.yaml", 18, "m1", "submodel 'motor' declares no parameter 'kk'");
  EXPECT_NE(d.hint.find("'k'"), std::string::npos) << d.hint;
  d = ErrorOf("n.yaml", R"(
submodels:
  res:
    parameters: {R: ~}
    ports: [{name: p, element: r}]
    elements: [{name: r, kind: R, resistance: R}]
    bonds: []
instances:
  - {name: r1, use: res}
elements: [{name: V, kind: Se, effort: 1}]
bonds: [[V, r1.p]]
)");
  ExpectLocated(d, "n.yaml", 9, "r1", "instance 'r1' gives no value to parameter 'R'");
}

TEST_F(SubmodelsTest, ImportCyclesAndMissingFiles) {
  WriteFileBytes(dir_ / "a.yaml", R"(
ports: [{name: p, element: J}]
instances:
  - {name: inner, use: sub/b.yaml}
elements: [{name: J, kind: "1"}]
bonds: [[J, inner.p]]
)");
  WriteFileBytes(dir_ / "sub" / "b.yaml", R"(
ports: [{name: p, element: J}]
instances:
  - {name: back, use: ../a.yaml}
elements: [{name: J, kind: "1"}]
bonds: [[J, back.p]]
)");
  Diagnostic d = ErrorOf(dir_ / "a.yaml");
  ExpectLocated(d, "b.yaml", 4, "inner.back", "the submodels use each other in a cycle");
  EXPECT_NE(d.got.find("a.yaml"), std::string::npos) << d.got;
  // A submodel written inline that uses itself.
  d = ErrorOf("self.yaml", R"(
submodels:
  loop:
    ports: [{name: p, element: J}]
    instances: [{name: again, use: loop}]
    elements: [{name: J, kind: "1"}]
    bonds: [[J, again.p]]
instances: [{name: l, use: loop}]
elements: [{name: V, kind: Se, effort: 1}]
bonds: [[V, l.p]]
)");
  ExpectLocated(d, "self.yaml", 5, "l.again", "cycle");
  d = ErrorOf("missing.yaml", R"(
instances:
  - {name: x, use: parts/none.yaml}
elements: [{name: V, kind: Se, effort: 1}]
bonds: [[V, x.p]]
)");
  ExpectLocated(d, "missing.yaml", 3, "x", "the submodel file of 'parts/none.yaml' is missing");
  EXPECT_NE(d.got.find((dir_ / "parts" / "none.yaml").string()), std::string::npos) << d.got;
  d = ErrorOf("nolib.yaml", R"(
instances:
  - {name: x, use: "lib:electrical/flux_capacitor"}
elements: [{name: V, kind: Se, effort: 1}]
bonds: [[V, x.p]]
)");
  ExpectLocated(d, "nolib.yaml", 3, "x", "is missing");
  EXPECT_NE(d.hint.find("docs/library.md"), std::string::npos);
}

TEST_F(SubmodelsTest, ErrorsInsideASubmodelNameTheInstancePath) {
  WriteFileBytes(dir_ / "part.yaml", R"(
ports: [{name: p, element: J}]
elements:
  - {name: J, kind: "1"}
  - {name: L, kind: I, inertance: mass}
bonds: [[J, L]]
)");
  const Diagnostic d = ErrorOf("top.yaml", R"(
instances: [{name: arm, use: part.yaml}]
elements: [{name: V, kind: Se, effort: 1}]
bonds: [[V, arm.p]]
)");
  EXPECT_EQ(d.element, "arm.L") << d.ToString();
  EXPECT_NE(d.where.file.find("part.yaml"), std::string::npos) << d.ToString();
  EXPECT_EQ(d.where.line, 5) << d.ToString();
  EXPECT_NE(d.message.find("arm.mass"), std::string::npos) << d.ToString();
}

}  // namespace
}  // namespace paynter
