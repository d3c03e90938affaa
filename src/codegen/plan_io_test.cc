// Lowered plans written as bytes and read back: the same code, the same
// diagnostics, and no crash on any damaged input.
#include "plan_io.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "native.h"
#include "paynter/codegen.h"
#include "paynter/error.h"
#include "tape.h"

namespace paynter::codegen {
namespace {

using GiNaC::ex;
using GiNaC::symbol;

// x, p given; y := 2 sin(x) + p; a nonlinear block in u, v; z := u v / y.
Program SmallProgram() {
  Program p;
  std::vector<symbol> s;
  for (const char* name : {"x", "p", "y", "u", "v", "z"}) {
    s.emplace_back(name);
    p.symbols.push_back(s.back());
    p.slot_names.push_back(name);
  }
  const symbol &x = s[0], &par = s[1], &y = s[2], &u = s[3], &v = s[4], &z = s[5];
  ProgramStep a;
  a.target = 2;
  a.value = 2 * sin(x) + par;
  p.steps.push_back(a);
  ProgramStep b;
  b.kind = ProgramStep::Kind::kBlock;
  b.unknowns = {3, 4};
  b.residuals = {u * u + v - y, u - 2 * v - x};
  for (const ex& r : b.residuals)
    for (const symbol& w : {u, v}) b.jacobian.push_back(r.diff(w));
  b.label = "a test block";
  p.steps.push_back(b);
  ProgramStep c;
  c.target = 5;
  c.value = u * v / y + log(x - 1);
  p.steps.push_back(c);
  (void)z;
  return p;
}

std::string Bytes(const Plan& plan) {
  std::string out;
  PlanWriter w(&out);
  WritePlan(w, plan);
  return out;
}

std::string Printed(const GiNaC::ex& e) {
  std::ostringstream os;
  os << e;
  return os.str();
}

TEST(PlanIo, ReadBackIsTheSameCodeAndDiagnostics) {
  const Plan plan = Lower(SmallProgram());
  const std::string bytes = Bytes(plan);
  PlanReader r(bytes);
  Plan back;
  ASSERT_TRUE(ReadPlan(r, &back));
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_EQ(GenerateC(back), GenerateC(plan));  // hence the same native object
  EXPECT_EQ(Bytes(back), bytes);
  // The expressions read back are the plan's, in the plan's symbols (GiNaC may
  // order their terms otherwise, as it does from run to run).
  GiNaC::exmap to_back;
  for (size_t i = 0; i < plan.symbols.size(); ++i) to_back[plan.symbols[i].get()] = back.symbols[i].get();
  auto same = [&](const DiagnosticExpr& read, const DiagnosticExpr& made) {
    return (read.get() - made.get().subs(to_back)).expand().is_zero();
  };
  ASSERT_EQ(back.written.size(), plan.written.size());
  for (size_t i = 0; i < plan.written.size(); ++i)
    EXPECT_TRUE(same(back.written[i].expr, plan.written[i].expr)) << Printed(plan.written[i].expr);
  ASSERT_EQ(back.blocks.size(), 1u);
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(same(back.blocks[0].residual_exprs[i], plan.blocks[0].residual_exprs[i]));
  // The symbols parsed back are the plan's slot symbols.
  EXPECT_TRUE(back.written[0].expr.get().has(back.symbols[0].get()));

  CodegenOptions tape;
  tape.backend = Backend::kTape;
  TapeProgram a(plan, tape), b(back, tape);
  const auto a_ws = a.NewWorkspace(), b_ws = b.NewWorkspace();
  std::vector<double> sa = {1.7, 0.3, 0, 1, 1, 0}, sb = sa;
  a.Run(sa.data(), *a_ws);
  b.Run(sb.data(), *b_ws);
  for (size_t i = 0; i < sa.size(); ++i) EXPECT_EQ(sa[i], sb[i]) << i;
  // A failure names the same slot, expression and inputs.
  std::vector<double> bad = {0.5, 0.3, 0, 1, 1, 0};
  std::string ea, eb;
  try {
    a.Run(bad.data(), *a_ws);
  } catch (const Error& e) {
    ea = e.what();
  }
  bad = {0.5, 0.3, 0, 1, 1, 0};
  try {
    b.Run(bad.data(), *b_ws);
  } catch (const Error& e) {
    eb = e.what();
  }
  EXPECT_EQ(ea.substr(0, ea.find('\n')), eb.substr(0, eb.find('\n')));
  for (const char* part : {"slot 'z' became NaN", "z = ", "log(-1+x)", "x = 0.5", "y = 1.25885", "u = 1.00354",
                           "v = 0.251768", "NaN comes from"}) {
    EXPECT_NE(ea.find(part), std::string::npos) << part << "\n" << ea;
    EXPECT_NE(eb.find(part), std::string::npos) << part << "\n" << eb;
  }
}

// Every truncation and every single-byte change either fails to read or gives a
// plan whose indices are all in range, which the tape then runs or rejects with
// an Error: never a crash.
TEST(PlanIo, DamagedBytesAreRejectedOrSafe) {
  const std::string bytes = Bytes(Lower(SmallProgram()));
  CodegenOptions tape;
  tape.backend = Backend::kTape;
  auto attempt = [&](const std::string& damaged) {
    PlanReader r(damaged);
    Plan plan;
    if (!ReadPlan(r, &plan)) return false;
    EXPECT_TRUE(ValidPlan(plan));
    try {
      TapeProgram prog(plan, tape);
      std::vector<double> s(plan.num_slots, 1.5);
      prog.Run(s.data(), *prog.NewWorkspace());
    } catch (const Error&) {
    }
    return true;
  };
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(attempt(bytes.substr(0, n))) << n;
  int read = 0;
  for (size_t i = 0; i < bytes.size(); ++i)
    for (unsigned char flip : {0x01, 0x80, 0xff}) {
      std::string damaged = bytes;
      damaged[i] = static_cast<char>(damaged[i] ^ flip);
      read += attempt(damaged);
    }
  EXPECT_GT(read, 0);  // some changes (a constant, a name) leave a valid plan
}

}  // namespace
}  // namespace paynter::codegen
