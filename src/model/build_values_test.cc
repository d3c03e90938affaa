// BuildModel with expressions given as expressions (ModelSpec's values), as
// the multibody library hands them over: they build the model a text would,
// with the same checks.
#include <gtest/gtest.h>

#include "paynter/model.h"

namespace paynter {
namespace {

// An RC circuit: C (q/C) and R on a 0-junction. The R's law and an output are
// given as expressions over symbols of their own, named as model variables.
ModelSpec RcSpec(const GiNaC::ex& r_law, const GiNaC::ex& output) {
  ModelSpec s;
  s.name = "rc";
  s.parameters = {{"R", "2", {}}, {"C", "0.5", {}}};
  ModelSpec::ElementSpec cap, node, res;
  cap.name = "cap", cap.kind = "C", cap.laws = {{"capacitance", "C"}}, cap.initial = "3";
  node.name = "node", node.kind = "0";
  res.name = "res", res.kind = "R", res.laws = {{"effort", ""}}, res.law_value = r_law;
  s.elements = {cap, node, res};
  ModelSpec::BondSpec b1, b2;
  b1.name = "b1", b1.from = "node", b1.to = "cap";
  b2.name = "b2", b2.from = "node", b2.to = "res";
  s.bonds = {b1, b2};
  ModelSpec::Item v;
  v.name = "v";
  v.value = output;
  s.outputs = {v};
  return s;
}

TEST(BuildModelValues, TakesExpressionsAndMapsTheirSymbolsOntoTheModels) {
  const GiNaC::symbol R("R"), f_res("f_res"), e_cap("e_cap");
  const Model m = BuildModel(RcSpec(R * f_res, 2 * e_cap));
  const Element& res = m.elements[m.FindElement("res")];
  // f_res is the flow of res's bond b2; R the model's parameter symbol.
  EXPECT_TRUE((res.law - m.Symbol("R") * m.Symbol("f_b2")).expand().is_zero());
  EXPECT_TRUE((m.outputs[0].value - 2 * m.Symbol("e_b1")).expand().is_zero());
  // What the reports show: the expression printed with the names as given
  // (GiNaC orders the factors as it likes).
  EXPECT_TRUE(res.law_text == "R*f_res" || res.law_text == "f_res*R") << res.law_text;
  EXPECT_EQ(m.outputs[0].text, "2*e_cap");
}

TEST(BuildModelValues, AnUnknownNameIsAnErrorAsInAText) {
  const GiNaC::symbol R("R"), f_rse("f_rse"), e_cap("e_cap");
  try {
    BuildModel(RcSpec(R * f_rse, e_cap));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("undefined symbol 'f_rse' in the effort of R 'res'"), std::string::npos) << what;
    EXPECT_NE(what.find("f_res"), std::string::npos) << what;  // did you mean
  }
}

TEST(BuildModelValues, AConstantLawMayNotUseAModelVariable) {
  ModelSpec s = RcSpec(GiNaC::symbol("R") * GiNaC::symbol("f_res"), GiNaC::symbol("e_cap"));
  ModelSpec::ElementSpec se;
  se.name = "src", se.kind = "Se", se.laws = {{"effort", ""}}, se.law_value = GiNaC::symbol("e_cap");
  s.elements.push_back(se);
  ModelSpec::BondSpec b;
  b.name = "b3", b.from = "src", b.to = "node";
  s.bonds.push_back(b);
  try {
    BuildModel(s);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'e_cap' may not appear in the effort of Se 'src'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace paynter
