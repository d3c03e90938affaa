// Every user error gives a message with the file, the line, the element, what
// was expected and a hint.
#include <gtest/gtest.h>

#include "test_util.h"

namespace paynter {
namespace {

std::string ErrorOf(const std::string& yaml) {
  try {
    Model m = LoadModelFromString(yaml, "bad.yaml");
    CausalGraph g = AssignCausality(m);
    RequireNoConflicts(m, g);
    BuildEquations(m, g);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return "";
}

void ExpectAll(const std::string& msg, std::initializer_list<const char*> parts) {
  for (const char* p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "missing '" << p << "' in:\n" << msg;
}

TEST(Errors, MalformedYaml) {
  const auto msg = ErrorOf("elements:\n  - {name: a, kind: R\nbonds: []\n");
  ExpectAll(msg, {"bad.yaml:", "malformed YAML", "hint:"});
}

// Errors at a bond name the bond (ThrowAtBond); the texts are pinned whole.
TEST(Errors, BondToAnUnknownElementOrToItself) {
  EXPECT_EQ(ErrorOf("elements:\n"
                    "  - {name: src, kind: Se, effort: 1}\n"
                    "  - {name: res, kind: R, resistance: 2}\n"
                    "bonds: [[src, ress]]\n"),
            "bad.yaml:4:9: error: bond 'b1': bond refers to an unknown element 'ress'\n"
            "  expected: the name of an element declared under 'elements:'\n"
            "  got:      'ress'\n"
            "  hint:     did you mean 'res'?");
  EXPECT_EQ(ErrorOf("elements:\n"
                    "  - {name: src, kind: Se, effort: 1}\n"
                    "  - {name: res, kind: R, resistance: 2}\n"
                    "bonds: [[res, res], [src, res]]\n"),
            "bad.yaml:4:9: error: bond 'b1': bond connects element 'res' to itself\n"
            "  expected: two different elements\n"
            "  got:      from: res, to: res");
}

TEST(Errors, UnknownElementKind) {
  const auto msg = ErrorOf(R"(
elements:
  - {name: a, kind: Sx, effort: 1}
  - {name: j, kind: "1"}
bonds: [[a, j]]
)");
  ExpectAll(msg, {"bad.yaml:3:", "element 'a'", "unknown element kind 'Sx'", "expected:", "hint:", "did you mean"});
}

TEST(Errors, WrongNumberOfBonds) {
  const auto msg = ErrorOf(R"(
elements:
  - {name: src, kind: Se, effort: 1}
  - {name: j, kind: "1"}
  - {name: k, kind: "0"}
bonds: [[src, j], [src, k]]
)");
  ExpectAll(msg, {"bad.yaml:3:", "element 'src'", "exactly one bond", "expected: 1 bond", "got:      2 bonds", "hint:"});
}

TEST(Errors, DanglingElement) {
  const auto msg = ErrorOf(R"(
elements:
  - {name: src, kind: Se, effort: 1}
  - {name: j, kind: "1"}
  - {name: r, kind: R, resistance: 1}
  - {name: lost, kind: C, capacitance: 1}
bonds: [[src, j], [j, r]]
)");
  ExpectAll(msg, {"bad.yaml:6:", "element 'lost'", "dangling", "hint:"});
}

TEST(Errors, DuplicateNames) {
  const auto msg = ErrorOf(R"(
elements:
  - {name: a, kind: Se, effort: 1}
  - {name: a, kind: R, resistance: 1}
bonds: [[a, a]]
)");
  ExpectAll(msg, {"bad.yaml:4:", "duplicate name 'a'", "hint:"});
}

TEST(Errors, UndefinedSymbolInExpression) {
  const auto msg = ErrorOf(R"(
parameters: {mass: 2}
elements:
  - {name: src, kind: Se, effort: 1}
  - {name: j, kind: "1"}
  - {name: m, kind: I, inertance: mas}
bonds: [[src, j], [j, m]]
)");
  ExpectAll(msg, {"bad.yaml:6:", "element 'm'", "undefined symbol 'mas'", "did you mean 'mass'"});
}

TEST(Errors, NonNumericParameter) {
  const auto msg = ErrorOf(R"(
parameters:
  k: 10
  c: ten
elements:
  - {name: src, kind: Se, effort: k}
  - {name: j, kind: "1"}
  - {name: r, kind: R, resistance: c}
bonds: [[src, j], [j, r]]
)");
  ExpectAll(msg, {"bad.yaml:4:", "parameter 'c'", "undefined symbol 'ten'"});
  const auto msg2 = ErrorOf(R"(
parameters: {k: t*2}
elements: [{name: src, kind: Se, effort: k}, {name: j, kind: "1"}, {name: r, kind: R, resistance: 1}]
bonds: [[src, j], [j, r]]
)");
  ExpectAll(msg2, {"bad.yaml:2:", "parameter 'k' is not a real number", "hint:"});
}

TEST(Errors, BadNumberSyntaxGivesAPrintableMessage) {
  // The expression parser's own message once carried a byte of its buffer.
  const auto msg = ErrorOf(R"(
parameters: {c: 4e}
elements: [{name: s, kind: Se, effort: c}, {name: j, kind: "1"}, {name: r, kind: R, resistance: 1}]
bonds: [[s, j], [j, r]]
)");
  ExpectAll(msg, {"bad.yaml:2:", "cannot parse parameter 'c'", "'4e'"});
  for (char ch : msg) EXPECT_TRUE(ch == '\n' || (ch >= 32 && ch <= 126)) << static_cast<int>(ch);
}

TEST(Errors, BondToUnknownElement) {
  const auto msg = ErrorOf(R"(
elements:
  - {name: src, kind: Se, effort: 1}
  - {name: junction, kind: "1"}
bonds: [[src, junktion]]
)");
  ExpectAll(msg, {"bad.yaml:5:", "unknown element 'junktion'", "did you mean 'junction'"});
}

TEST(Errors, UnknownKeyAndMissingLaw) {
  ExpectAll(ErrorOf(R"(
elements:
  - {name: r, kind: R, resistence: 1}
  - {name: j, kind: "1"}
  - {name: s, kind: Se, effort: 1}
bonds: [[s, j], [j, r]]
)"),
            {"bad.yaml:3:", "unknown key 'resistence'", "did you mean 'resistance'"});
  ExpectAll(ErrorOf(R"(
elements:
  - {name: r, kind: R}
  - {name: j, kind: "1"}
  - {name: s, kind: Se, effort: 1}
bonds: [[s, j], [j, r]]
)"),
            {"bad.yaml:3:", "element 'r'", "exactly one constitutive law", "resistance"});
}

TEST(Errors, UnmodulatedElementUsingAState) {
  const auto msg = ErrorOf(R"(
elements:
  - {name: src, kind: Se, effort: 2*q_c}
  - {name: j, kind: "1"}
  - {name: c, kind: C, capacitance: 1}
bonds: [[src, j], [j, c]]
)");
  ExpectAll(msg, {"bad.yaml:3:", "element 'src'", "'q_c' may not appear", "MSe"});
}

TEST(Errors, TransformerBondsBothIn) {
  const auto msg = ErrorOf(R"(
elements:
  - {name: a, kind: "1"}
  - {name: b, kind: "1"}
  - {name: tf, kind: TF, ratio: 2}
  - {name: s, kind: Se, effort: 1}
  - {name: r, kind: R, resistance: 1}
bonds: [[a, tf], [b, tf], [s, a], [b, r]]
)");
  ExpectAll(msg, {"element 'tf'", "one bond in, one bond out", "hint:"});
}

TEST(Errors, CausalConflictNamesTheElementsAndBonds) {
  const auto msg = ErrorOf(R"(
elements:
  - {name: s1, kind: Se, effort: 1}
  - {name: s2, kind: Se, effort: 2}
  - {name: node, kind: "0"}
  - {name: r, kind: R, resistance: 1}
bonds: [[s1, node], [s2, node], [node, r]]
)");
  ExpectAll(msg, {"s2", "b2", "node", "hint:"});
}

TEST(Errors, BadBondDimension) {
  const auto msg = ErrorOf(R"(
elements: [{name: s, kind: Se, effort: 1}, {name: r, kind: R, resistance: 1}]
bonds: [{from: s, to: r, dim: 0}]
)");
  ExpectAll(msg, {"bad.yaml:3:", "dimension 0", "expected: 1, 3 or 6"});
}

TEST(Errors, VectorBondOnAScalarOnlyElement) {
  const auto msg = ErrorOf(R"(
elements:
  - {name: w, kind: "1"}
  - {name: J, kind: I, inertance: [1, 2, 3]}
  - {name: g, kind: GY, ratio: 2}
  - {name: s, kind: Se, effort: [0, 0, 1]}
bonds:
  - {from: w, to: J, dim: 3}
  - {from: s, to: w, dim: 3}
  - {from: w, to: g, dim: 2}
)");
  ExpectAll(msg, {"bad.yaml:", "dimensions 3 and 2"});
}

TEST(Errors, MissingFile) {
  try {
    LoadModel("/nonexistent/model.yaml");
    FAIL();
  } catch (const Error& e) {
    ExpectAll(e.what(), {"/nonexistent/model.yaml", "cannot open"});
  }
}

TEST(Errors, DisplacementOfAZeroJunction) {
  const auto msg = ErrorOf(R"(
elements: [{name: s, kind: Se, effort: 1}, {name: n, kind: "0"}, {name: r, kind: R, resistance: 1}]
bonds: [[s, n], [n, r]]
displacements: [{name: x, of: n}]
)");
  ExpectAll(msg, {"bad.yaml:4:", "displacement 'x'", "1-junction", "hint:"});
}

TEST(Errors, NanInSimulationIsAnErrorNotAResult) {
  Model m = LoadModelFromString(R"(
elements:
  - {name: s, kind: MSe, effort: log(q_c - 1)}
  - {name: j, kind: "1"}
  - {name: c, kind: C, capacitance: 1, initial: 2}
  - {name: r, kind: R, resistance: 1}
bonds: [[s, j], [j, c], [j, r]]
)", "nan.yaml");
  EquationSystem eqs = BuildEquations(m, AssignCausality(m));
  CompiledModel cm(eqs);
  SolverOptions so;
  so.t_end = 10;
  try {
    Simulate(cm, so);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    ExpectAll(msg, {"t = ", "q_c"});
    EXPECT_TRUE(msg.find("NaN") != std::string::npos || msg.find("nan") != std::string::npos ||
                msg.find("finite") != std::string::npos)
        << msg;
  }
}

}  // namespace
}  // namespace paynter
