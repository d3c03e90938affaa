#include <gtest/gtest.h>

#include "paynter/model.h"
#include "paynter/pipeline.h"

namespace paynter {
namespace {

const char* kRc = R"(
name: rc
parameters:
  R: 2
  C: 0.5
  tau: R*C
elements:
  - {name: cap, kind: C, capacitance: C, initial: 3}
  - {name: node, kind: "0"}
  - {name: res, kind: R, resistance: R}
bonds:
  - {name: b1, from: node, to: cap}
  - [node, res]
outputs:
  v: e_cap
)";

TEST(LoadModel, ParsesElementsBondsParameters) {
  Model m = LoadModelFromString(kRc, "rc.yaml");
  EXPECT_EQ(m.name, "rc");
  ASSERT_EQ(m.elements.size(), 3u);
  EXPECT_EQ(m.elements[0].kind, ElementKind::kC);
  EXPECT_EQ(m.elements[1].kind, ElementKind::kZero);
  ASSERT_EQ(m.bonds.size(), 2u);
  EXPECT_EQ(m.bonds[0].name, "b1");
  EXPECT_EQ(m.bonds[1].name, "b2");  // generated
  EXPECT_EQ(m.bonds[0].dim, 1);
  ASSERT_EQ(m.parameters.size(), 3u);
  EXPECT_DOUBLE_EQ(m.parameters[2].value, 1.0);  // tau = R*C
  EXPECT_EQ(m.elements[1].bonds.size(), 2u);
  // Port variables of a one-port are the bond's variables.
  EXPECT_TRUE(m.Symbol("e_cap").is_equal(m.Symbol("e_b1")));
  EXPECT_TRUE(m.Symbol("e_node").is_equal(m.Symbol("e_b1")));
  ASSERT_EQ(m.outputs.size(), 1u);
  EXPECT_EQ(m.outputs[0].name, "v");
}

TEST(LoadModel, NonlinearLawsUseLocalNames) {
  Model m = LoadModelFromString(R"(
elements:
  - {name: s, kind: C, effort: q^3}
  - {name: r, kind: R, effort: f + f^3}
  - {name: j, kind: "1"}
bonds: [[j, s], [j, r]]
)");
  EXPECT_TRUE(m.elements[0].law.is_equal(GiNaC::pow(m.Symbol("q_s"), 3)));
  EXPECT_EQ(m.elements[1].form, LawForm::kEffort);
  EXPECT_TRUE(m.elements[1].law.has(m.Symbol("f_r")));
}

TEST(DescribeModel, CountsKinds) {
  Model m = LoadModelFromString(kRc, "rc.yaml");
  const std::string d = DescribeModel(m);
  EXPECT_NE(d.find("3 elements"), std::string::npos) << d;
  EXPECT_NE(d.find("1 C"), std::string::npos) << d;
  EXPECT_NE(d.find("2 bonds"), std::string::npos) << d;
}

TEST(BuildModel, FromSpecInCode) {
  ModelSpec spec;
  spec.parameters = {{"m", "2"}};
  spec.elements = {{"src", "Sf", {{"flow", "sin(t)"}}}, {"mass", "I", {{"inertance", "m"}}}, {"j", "0", {}}};
  spec.bonds = {{"", "src", "j"}, {"", "j", "mass"}};
  Model m = BuildModel(spec);
  EXPECT_EQ(m.elements.size(), 3u);
  EXPECT_EQ(m.bonds[1].to, 1);
}

}  // namespace
}  // namespace paynter
