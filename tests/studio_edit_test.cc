// The studio's graphical edits as edits of the text (src/studio/text_edit.h):
// each changes the characters of what it edits and nothing else — the rest of
// the text, comments and order, compared whole — and the edited model loads
// with the change made (read back through the model loader).
#include <gtest/gtest.h>

#include <string>

#include "paynter/error.h"
#include "paynter/pipeline.h"
#include "text_edit.h"

namespace paynter::studio {
namespace {

const char* kBlock =
    "# a comment at the top\n"
    "name: rc\n"
    "parameters:\n"
    "  R: 2     # ohm\n"
    "  C: 0.5\n"
    "elements:\n"
    "  - {name: cap, kind: C, capacitance: C, initial: 1}   # the capacitor\n"
    "  - {name: j, kind: \"0\"}\n"
    "  - name: res\n"
    "    kind: R\n"
    "    resistance: R   # block style\n"
    "bonds:\n"
    "  - [j, cap]   # first\n"
    "  - {from: j, to: res}\n"
    "outputs: {q: q_cap}\n";

const char* kFlow =
    "name: rc\n"
    "parameters: {R: 2, C: 0.5}\n"
    "elements: [{name: cap, kind: C, capacitance: C}, {name: j, kind: \"0\"}, {name: res, kind: R, resistance: R}]\n"
    "bonds: [[j, cap], [j, res]]  # two\n";

EditInput In(const std::string& text) { return {text, "m.yaml"}; }

Model Loaded(const std::string& text) { return Load(ModelSource::Text(text, "m.yaml")).model; }

// The bond between two named elements, as the loader read it: from -> to.
std::pair<std::string, std::string> BondOf(const Model& m, const std::string& a, const std::string& b) {
  for (const Bond& bond : m.bonds) {
    const std::string f = m.elements[bond.from].name, t = m.elements[bond.to].name;
    if ((f == a && t == b) || (f == b && t == a)) return {f, t};
  }
  return {};
}

TEST(StudioEdit, FlipBondInAListKeepsEverythingElse) {
  const std::string out = FlipBond(In(kBlock), "j", "cap");
  std::string expected = kBlock;
  expected.replace(expected.find("[j, cap]"), 8, "[cap, j]");
  EXPECT_EQ(out, expected);
  EXPECT_EQ(BondOf(Loaded(out), "j", "cap"), std::make_pair(std::string("cap"), std::string("j")));
}

TEST(StudioEdit, FlipBondWrittenWithFromAndTo) {
  const std::string out = FlipBond(In(kBlock), "j", "res");
  std::string expected = kBlock;
  expected.replace(expected.find("{from: j, to: res}"), 18, "{from: res, to: j}");
  EXPECT_EQ(out, expected);
  EXPECT_EQ(BondOf(Loaded(out), "j", "res"), std::make_pair(std::string("res"), std::string("j")));
  // Turned round twice: the text as it was.
  EXPECT_EQ(FlipBond(In(out), "res", "j"), kBlock);
}

TEST(StudioEdit, FlipBondInAOneLineSection) {
  const std::string out = FlipBond(In(kFlow), "j", "res");
  std::string expected = kFlow;
  expected.replace(expected.find("[j, res]"), 8, "[res, j]");
  EXPECT_EQ(out, expected);
}

TEST(StudioEdit, FlipBondNotWrittenIsALocatedError) {
  try {
    FlipBond(In(kBlock), "cap", "j");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no bond from cap to j"), std::string::npos) << e.what();
    EXPECT_EQ(e.diagnostic().where.file, "m.yaml");
  }
}

TEST(StudioEdit, SetElementFieldReplacesTheValueOnly) {
  const std::string out = SetElementField(In(kBlock), "cap", "initial", "2.5");
  std::string expected = kBlock;
  expected.replace(expected.find("initial: 1}"), 11, "initial: 2.5}");
  EXPECT_EQ(out, expected);
  // In a block mapping, with the comment after it kept.
  const std::string res = SetElementField(In(kBlock), "res", "resistance", "2*R");
  expected = kBlock;
  expected.replace(expected.find("resistance: R   #"), 17, "resistance: 2*R   #");
  EXPECT_EQ(res, expected);
  const Model m = Loaded(res);
  EXPECT_EQ(m.elements[m.FindElement("res")].law_text, "2*R");
}

TEST(StudioEdit, SetElementFieldAddsAMissingKey) {
  // One-line mapping: inside its braces.
  const std::string out = SetElementField(In(kFlow), "cap", "initial", "0.25");
  std::string expected = kFlow;
  expected.replace(expected.find("capacitance: C}"), 15, "capacitance: C, initial: 0.25}");
  EXPECT_EQ(out, expected);
  // Block mapping: a line of its own at its keys' indentation, after the last.
  const std::string block = SetElementField(In(kBlock), "res", "domain", "electrical");
  expected = kBlock;
  expected.replace(expected.find("# block style\n") + 14, 0, "    domain: electrical\n");
  EXPECT_EQ(block, expected);
  Loaded(block);  // loads
}

TEST(StudioEdit, SetElementFieldEmptyRemovesTheKey) {
  const std::string out = SetElementField(In(kBlock), "cap", "initial", "");
  std::string expected = kBlock;
  expected.replace(expected.find(", initial: 1"), 12, "");
  EXPECT_EQ(out, expected);
}

TEST(StudioEdit, ValuesThatYamlWouldReadOtherwiseAreQuoted) {
  EXPECT_EQ(YamlValue("M*g*L/2"), "M*g*L/2");
  EXPECT_EQ(YamlValue("-M*g"), "-M*g");
  EXPECT_EQ(YamlValue("1e-3"), "1e-3");
  EXPECT_EQ(YamlValue("atan2(y, x)"), "\"atan2(y, x)\"");  // a comma ends a value in a one-line mapping
  EXPECT_EQ(YamlValue("a: b"), "\"a: b\"");
  EXPECT_EQ(YamlValue("x # y"), "\"x # y\"");
  EXPECT_EQ(YamlValue("true"), "\"true\"");
  EXPECT_EQ(YamlValue("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_THROW(YamlValue("a\nb"), Error);
  // Read back as written, in both styles.
  const std::string out = SetElementField(In(kFlow), "res", "resistance", "atan2(R, C)");
  EXPECT_EQ(Loaded(out).elements[Loaded(out).FindElement("res")].law_text, "atan2(R, C)");
}

TEST(StudioEdit, SetParameterInBothStyles) {
  std::string expected = kBlock;
  expected.replace(expected.find("R: 2     #"), 10, "R: 4.5     #");
  EXPECT_EQ(SetParameter(In(kBlock), "R", "4.5"), expected);
  expected = kFlow;
  expected.replace(expected.find("{R: 2, C: 0.5}"), 14, "{R: 2, C: 0.5, tau: R*C}");
  EXPECT_EQ(SetParameter(In(kFlow), "tau", "R*C"), expected);
  const std::string added = SetParameter(In(kBlock), "L", "3");
  expected = kBlock;
  expected.replace(expected.find("  C: 0.5\n") + 9, 0, "  L: 3\n");
  EXPECT_EQ(added, expected);
  // No parameters: a section before elements:.
  const std::string none = "name: x\nelements:\n  - {name: j, kind: \"0\"}\nbonds: []\n";
  EXPECT_EQ(SetParameter(In(none), "k", "1"), "name: x\nparameters:\n  k: 1\nelements:\n  - {name: j, kind: \"0\"}\nbonds: []\n");
}

TEST(StudioEdit, LayoutWrittenAtTheEndThenKeptInPlace) {
  const std::string first = SetLayout(In(kBlock), {{"cap", {10.4, 20.6}}, {"j", {-5, 0}}});
  EXPECT_EQ(first, std::string(kBlock) +
                       "layout:  # where paynter studio draws each element (points; x to the right, y up)\n"
                       "  cap: [10, 21]\n  j: [-5, 0]\n");
  Loaded(first);  // the loader takes it
  // Moved: the one value replaced; a new name added after the others.
  const std::string second = SetLayout(In(first), {{"cap", {30, 40}}, {"comp:motor", {1, 2}}});
  std::string expected = first;
  expected.replace(expected.find("[10, 21]"), 8, "[30, 40]");
  expected += "  \"comp:motor\": [1, 2]\n";
  EXPECT_EQ(second, expected);
  Loaded(second);
  // A position that is not two numbers is the loader's located error.
  try {
    Loaded(std::string(kBlock) + "layout:\n  cap: [1, x]\n");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().where.line, 17) << e.what();
  }
}

TEST(StudioEdit, TextThatDoesNotParseIsALocatedError) {
  try {
    SetParameter(In("name: x\nparameters: {R: 2\nelements: []\n"), "R", "3");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_GT(e.diagnostic().where.line, 0);
  }
  EXPECT_THROW(SetElementField(In(kBlock), "nobody", "initial", "1"), Error);
  EXPECT_THROW(SetElementField(In(kBlock), "cap", "kind", "I"), Error);
  EXPECT_THROW(SetElementField(In(kBlock), "cap", "bad key", "1"), Error);
}

}  // namespace
}  // namespace paynter::studio
