// Tests for the code generator: tape and native agree, CSE shares, blocks solve,
// failures name what failed, the native cache works and kAuto falls back.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <new>
#include <random>
#include <string>

#include "native.h"
#include "newton.h"
#include "paynter/causality.h"
#include "paynter/codegen.h"
#include "paynter/equations.h"
#include "paynter/error.h"
#include "paynter/model.h"
#include "paynter/pipeline.h"
#include "tape.h"

// Counts heap allocations so that a test can check Run allocates nothing. (GCC
// cannot see that the replaced new pairs with free, hence the pragma.)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
static std::atomic<long> g_allocations{0};
void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// The other forms, so that every new meets its own delete (AddressSanitizer
// checks that an allocation is freed by the matching function).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  ++g_allocations;
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new[](std::size_t n, const std::nothrow_t& tag) noexcept { return operator new(n, tag); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace paynter {
namespace {

using GiNaC::ex;
using GiNaC::numeric;
using GiNaC::symbol;
namespace fs = std::filesystem;

// A fresh cache directory per test binary run, so cache-hit tests start empty.
std::string TestCacheDir() {
  static const std::string dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "paynter_codegen_test_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    return tmpl;
  }();
  return dir;
}

// Removes the test cache directory when the binary exits.
struct RemoveCacheDir : ::testing::Environment {
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(TestCacheDir(), ec);
  }
};
const auto* const kRemoveCacheDir = ::testing::AddGlobalTestEnvironment(new RemoveCacheDir);

CodegenOptions Opts(Backend b, const std::string& cache = TestCacheDir()) {
  CodegenOptions o;
  o.backend = b;
  o.cache_dir = cache;
  return o;
}

struct ProgramBuilder {
  Program p;
  symbol Slot(const std::string& name) {
    symbol s(name);
    p.symbols.push_back(s);
    p.slot_names.push_back(name);
    return s;
  }
  int Index(const symbol& s) const {
    for (size_t i = 0; i < p.symbols.size(); ++i)
      if (p.symbols[i].is_equal(s)) return static_cast<int>(i);
    return -1;
  }
  void Assign(const symbol& target, const ex& value) {
    ProgramStep st;
    st.kind = ProgramStep::Kind::kAssign;
    st.target = Index(target);
    st.value = value;
    p.steps.push_back(st);
  }
  // Residuals r(u); the Jacobian is differentiated here (row-major).
  void Block(const std::vector<symbol>& u, const std::vector<ex>& r, bool linear, const std::string& label) {
    ProgramStep st;
    st.kind = ProgramStep::Kind::kBlock;
    for (const symbol& s : u) st.unknowns.push_back(Index(s));
    st.residuals = r;
    for (const ex& ri : r)
      for (const symbol& s : u) st.jacobian.push_back(ri.diff(s));
    st.linear = linear;
    st.label = label;
    p.steps.push_back(st);
  }
};

void ExpectClose(double a, double b, double rel, const std::string& what) {
  EXPECT_LE(std::fabs(a - b), rel * std::max(1.0, std::max(std::fabs(a), std::fabs(b)))) << what << ": " << a << " vs " << b;
}

std::string RunError(const CompiledProgram& prog, std::vector<double> slots) {
  try {
    prog.Run(slots.data(), *prog.NewWorkspace());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The minimum-norm solve of redundant constraints: a direction whose singular
// value is far below the threshold (1e-10 of the largest) is left out. With
// Eigen's complete orthogonal decomposition given its threshold after
// decomposing, this nearly dependent pair gave [0, 2] or garbage (the
// transformations of rank 1 were never computed) and the Bricard linkage's
// multipliers went NaN in some runs and not others.
TEST(Codegen, MinimumNormSolveUsesTheRankOfItsThreshold) {
  Eigen::MatrixXd J(2, 2);
  J << 1, 1, 1, 1 + 1e-12;
  Eigen::VectorXd r(2);
  r << 2, 2;
  int rank = 0;
  const Eigen::VectorXd x = codegen::MinimumNormSolve(J, 1e-10, r, &rank);
  EXPECT_EQ(rank, 1);
  ASSERT_TRUE(x.allFinite());
  // The least-squares solutions of the rank-1 system x0 + x1 = 2; the one of
  // minimum norm has x0 = x1. The filter keeps a fraction of order (s/eps)^2 of the
  // left-out direction (s = 5e-13, eps = 2e-10: about 1e-5 of it).
  EXPECT_NEAR(x(0), 1.0, 1e-4);
  EXPECT_NEAR(x(1), 1.0, 1e-4);
  // At a threshold well below the pair's separation it is the full-rank solve.
  const Eigen::VectorXd y = codegen::MinimumNormSolve(J, 1e-16, r, &rank);
  EXPECT_EQ(rank, 2);
  EXPECT_NEAR(y(0), 2.0, 1e-3);
  EXPECT_NEAR(y(1), 0.0, 1e-3);
  // Continuous in J: as the pair's separation s passes the threshold, the
  // solution moves from [1, 1] to the exact [2, 0] without a jump.
  double previous = 1.0;
  for (double s = 1e-12; s <= 1e-6; s *= 1.25) {
    Eigen::MatrixXd K(2, 2);
    K << 1, 1, 1, 1 + s;
    Eigen::VectorXd rs(2);
    rs << 2, 2 + s * 1e-3;  // a consistent right-hand side: x = [2 - 1e-3, 1e-3]
    const Eigen::VectorXd z = codegen::MinimumNormSolve(K, 1e-10, rs, nullptr);
    EXPECT_LT(std::fabs(z(1) - previous), 0.25) << "s = " << s;  // no jump between steps of 25 %
    previous = z(1);
  }
  EXPECT_NEAR(previous, 1e-3, 1e-5);
}

TEST(Codegen, TapeAndNativeAgreeOnExpressions) {
  ProgramBuilder b;
  symbol x = b.Slot("x"), y = b.Slot("y"), z = b.Slot("z");
  std::vector<ex> exprs = {
      3 * GiNaC::pow(x, 3) - 2 * GiNaC::pow(x, 2) * y + x * y * z - 7,
      GiNaC::pow(x + y, 5) - GiNaC::pow(x - z, 4) / 7,
      GiNaC::sin(x) * GiNaC::cos(y) + GiNaC::tan(z / 3),
      GiNaC::pow(x, numeric(3, 2)) + GiNaC::pow(y, numeric(1, 3)) + GiNaC::sqrt(z) + GiNaC::pow(x, numeric(-5, 2)),
      GiNaC::exp(GiNaC::sin(x * y)) / (1 + GiNaC::log(1 + z * z)),
      GiNaC::atan2(y, x) + GiNaC::atan2(-y, -x) * z,
      GiNaC::abs(x - y) * GiNaC::abs(z - 2) - GiNaC::abs(y),
      GiNaC::tanh(x) + GiNaC::sinh(y / 4) * GiNaC::cosh(z / 5) + GiNaC::asin(x / 4) + GiNaC::acos(y / 4) + GiNaC::atan(z),
      GiNaC::pow(x, 70) / GiNaC::pow(y, 3) + GiNaC::pow(x, y) + GiNaC::Pi * z,
      GiNaC::step(x - y) + GiNaC::step(y - x) * 2 + numeric(1, 3) * x - x / 7,
      1 / (x * x + 1) - 1 / GiNaC::sqrt(y) + GiNaC::pow(z, numeric(-2)),
  };
  std::vector<symbol> outs;
  for (size_t i = 0; i < exprs.size(); ++i) {
    outs.push_back(b.Slot("o" + std::to_string(i)));
    b.Assign(outs.back(), exprs[i]);
  }
  auto tape = Compile(b.p, Opts(Backend::kTape));
  auto tape_ws = tape->NewWorkspace();
  auto native = Compile(b.p, Opts(Backend::kNative));
  auto native_ws = native->NewWorkspace();
  ASSERT_EQ(tape->backend_name(), "tape");
  ASSERT_EQ(native->backend_name(), "native");
  ASSERT_EQ(native->num_slots(), static_cast<int>(b.p.symbols.size()));
  const double points[][3] = {{0.5, 1.5, 2.5}, {1.25, 0.75, 0.3}, {2.0, 3.0, 7.0}, {0.1, 0.2, 1e-3}};
  for (const auto& pt : points) {
    std::vector<double> st(b.p.symbols.size(), 0.0), sn = st;
    for (int k = 0; k < 3; ++k) st[k] = sn[k] = pt[k];
    tape->Run(st.data(), *tape_ws);
    native->Run(sn.data(), *native_ws);
    GiNaC::exmap subs{{x, pt[0]}, {y, pt[1]}, {z, pt[2]}};
    for (size_t i = 0; i < exprs.size(); ++i) {
      const std::string what = "expr " + std::to_string(i) + " at x=" + std::to_string(pt[0]);
      ExpectClose(st[3 + i], sn[3 + i], 1e-14, what + " tape vs native");
      const double ref = GiNaC::ex_to<numeric>(GiNaC::evalf(exprs[i].subs(subs))).to_double();
      ExpectClose(st[3 + i], ref, 1e-11, what + " tape vs GiNaC");
    }
  }
}

TEST(Codegen, SinAndCosOfOneArgumentAgreeBitForBit) {
  // Native code may take sin and cos of one argument in one sincos call
  // (-fno-math-errno); the tape calls sin and cos. Same bits, small and large
  // arguments alike.
  ProgramBuilder b;
  symbol x = b.Slot("x"), s = b.Slot("s"), c = b.Slot("c"), q = b.Slot("q");
  b.Assign(s, GiNaC::sin(x));
  b.Assign(c, GiNaC::cos(x));
  b.Assign(q, GiNaC::sqrt(GiNaC::abs(x)) * GiNaC::sin(2 * x) + GiNaC::cos(2 * x));
  auto tape = Compile(b.p, Opts(Backend::kTape));
  auto tape_ws = tape->NewWorkspace();
  auto native = Compile(b.p, Opts(Backend::kNative));
  auto native_ws = native->NewWorkspace();
  ASSERT_EQ(native->backend_name(), "native");
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 3000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double unit = static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5;
    const double v = unit * (i % 3 == 0 ? 8.0 : i % 3 == 1 ? 2e3 : 1e12);
    std::vector<double> st = {v, 0, 0, 0}, sn = st;
    tape->Run(st.data(), *tape_ws);
    native->Run(sn.data(), *native_ws);
    for (int k = 1; k < 4; ++k) ASSERT_EQ(st[k], sn[k]) << "slot " << k << " at x = " << v;
  }
}

TEST(Codegen, CommonSubexpressionsAreShared) {
  ProgramBuilder b;
  symbol x = b.Slot("x"), y = b.Slot("y"), z = b.Slot("z"), o = b.Slot("o"), p = b.Slot("p"), q = b.Slot("q");
  b.Assign(o, GiNaC::pow(GiNaC::sin(x), 2) + GiNaC::sin(x));
  {
    auto prog = Compile(b.p, Opts(Backend::kTape));
    auto* tape = dynamic_cast<codegen::TapeProgram*>(prog.get());
    ASSERT_NE(tape, nullptr);
    // sin(x), s*s, s*s + s (written straight into slot o): 3, not 4.
    EXPECT_EQ(tape->num_instructions(), 3);
  }
  // Across expressions: sin(x)*y and sin(x)*z share sin(x); y*sin(x) again is free (a copy).
  b.Assign(p, GiNaC::sin(x) * y + GiNaC::cos(z));
  b.Assign(q, y * GiNaC::sin(x) + GiNaC::cos(z));
  auto prog = Compile(b.p, Opts(Backend::kTape));
  auto prog_ws = prog->NewWorkspace();
  auto* tape = dynamic_cast<codegen::TapeProgram*>(prog.get());
  EXPECT_EQ(tape->num_instructions(), 3 + 3 + 1);
  std::vector<double> s = {0.7, 2.0, 0.3, 0, 0, 0};
  prog->Run(s.data(), *prog_ws);
  EXPECT_DOUBLE_EQ(s[3], std::sin(0.7) * std::sin(0.7) + std::sin(0.7));
  EXPECT_EQ(s[4], s[5]);
}

TEST(Codegen, ConstantsAreFolded) {
  // GiNaC keeps sqrt(2), exp(1) and Pi symbolic; they must not cost instructions.
  ProgramBuilder b;
  symbol x = b.Slot("x"), o = b.Slot("o");
  b.Assign(o, GiNaC::sqrt(ex(2)) * x + GiNaC::exp(ex(1)) - GiNaC::Pi / 2);
  auto prog = Compile(b.p, Opts(Backend::kTape));
  auto prog_ws = prog->NewWorkspace();
  EXPECT_EQ(dynamic_cast<codegen::TapeProgram*>(prog.get())->num_instructions(), 2);  // *, +
  auto native = Compile(b.p, Opts(Backend::kNative));
  auto native_ws = native->NewWorkspace();
  std::vector<double> s = {3.0, 0}, t = s;
  prog->Run(s.data(), *prog_ws);
  native->Run(t.data(), *native_ws);
  EXPECT_EQ(s[1], t[1]);
  EXPECT_NEAR(s[1], std::sqrt(2.0) * 3 + std::exp(1.0) - M_PI / 2, 1e-14);
}

// GiNaC orders terms (and picks the sign of sums inside products) by hashes that
// depend on symbol serials and addresses, so the same model can come out as
// k*(a-b) or -k*(b-a) from run to run. The generated code must not change with it,
// or the native cache would miss on every run.
Program ChainProgram(bool reverse_creation) {
  std::vector<std::string> names = {"k", "a", "b", "c", "d", "o1", "o2", "o3"};
  std::vector<symbol> syms(names.size());
  for (size_t n = 0; n < names.size(); ++n) {
    const size_t i = reverse_creation ? names.size() - 1 - n : n;
    syms[i] = symbol(names[i]);
  }
  Program p;
  for (size_t i = 0; i < names.size(); ++i) {
    p.symbols.push_back(syms[i]);
    p.slot_names.push_back(names[i]);
  }
  const symbol &k = syms[0], &a = syms[1], &b = syms[2], &c = syms[3], &d = syms[4];
  const ex values[3] = {-k * a + k * (a - b) + k * (c - a), (a - b) * (c - d) / (k - a) + GiNaC::sin(b - c),
                        GiNaC::pow(d - a, 3) - 2 * k * (b - d) * GiNaC::exp(c - b)};
  for (int i = 0; i < 3; ++i) {
    ProgramStep st;
    st.target = 5 + i;
    st.value = values[i];
    p.steps.push_back(st);
  }
  return p;
}

// Random expressions over symbols s0..s5 (the same ones for the same seed).
ex RandomExpr(std::mt19937& rng, const std::vector<symbol>& s, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  if (depth == 0 || pick(4) == 0) return pick(5) ? ex(s[pick(static_cast<int>(s.size()))]) : ex(numeric(pick(3) + 1, 1 + pick(3)));
  switch (pick(6)) {
    case 0:
    case 1: {
      ex sum = 0;
      for (int i = 0, n = 2 + pick(3); i < n; ++i) sum += (pick(2) ? 1 : -1) * (1 + pick(3)) * RandomExpr(rng, s, depth - 1);
      return sum;
    }
    case 2: {
      ex prod = pick(2) ? 1 : -2;
      for (int i = 0, n = 2 + pick(2); i < n; ++i) prod *= RandomExpr(rng, s, depth - 1);
      return prod;
    }
    case 3: return GiNaC::pow(RandomExpr(rng, s, depth - 1), 1 + pick(3));  // may be 0: no negative powers
    case 4: return GiNaC::pow(1 + GiNaC::pow(RandomExpr(rng, s, depth - 1), 2), numeric(pick(5) - 2, 2));
    default: return pick(2) ? GiNaC::sin(RandomExpr(rng, s, depth - 1)) : GiNaC::exp(RandomExpr(rng, s, depth - 1) / 9);
  }
}

std::string RandomProgramC(int order) {
  std::vector<symbol> pad(order * 5 + 1);  // other serial numbers, other hashes
  std::vector<symbol> s(6);
  for (int n = 0; n < 6; ++n) {
    const int i = order % 2 ? 5 - n : (n + order) % 6;
    std::string name = "s";
    name += std::to_string(i);  // (not "s" + ...: a GCC 12 -Wrestrict false positive)
    s[i] = symbol(name);
  }
  Program p;
  for (int i = 0; i < 6; ++i) p.symbols.push_back(s[i]);
  std::mt19937 rng(12345);
  for (int k = 0; k < 30; ++k) {
    std::string name = "o";
    name += std::to_string(k);
    p.symbols.push_back(symbol(name));
    ProgramStep st;
    st.target = 6 + k;
    st.value = RandomExpr(rng, s, 4);
    p.steps.push_back(st);
  }
  return codegen::GenerateC(codegen::Lower(p));
}

// The shape of a mechanism's equations after differentiation (B3, the quick return
// mechanism): configuration-dependent moduli (products of trig terms and sums of
// angles), their time derivatives by the chain rule, a mass matrix and a force that
// are sums of products of them, the square of a sum, and a linear block in the
// acceleration whose residual and Jacobian share most of it.
std::string MechanismProgramC(int order) {
  std::vector<symbol> pad(order * 3 + 1);  // other serial numbers, other hashes
  const std::vector<std::string> names = {"th1", "th2", "th3", "Lx", "p", "l1", "l2", "l3", "m", "J", "R"};
  std::vector<symbol> s(names.size());
  for (size_t n = 0; n < names.size(); ++n) {
    const size_t i = order % 2 ? names.size() - 1 - n : (n + order) % names.size();
    s[i] = symbol(names[i]);
  }
  const symbol &th1 = s[0], &th2 = s[1], &th3 = s[2], &Lx = s[3], &p = s[4], &l1 = s[5], &l2 = s[6];
  const symbol &l3 = s[7], &m = s[8], &J = s[9], &R = s[10];
  ProgramBuilder b;
  b.p.symbols.assign(s.begin(), s.end());
  b.p.slot_names = names;
  const std::vector<symbol> q = {th1, th2, th3, Lx};
  // d/dt by the chain rule, with dq given per coordinate.
  const ex w = p / J;
  const ex t7 = l1 * GiNaC::cos(th2 - th1) / Lx, t5 = -l3 * GiNaC::cos(th3), t6 = l2 * GiNaC::cos(th2);
  const ex t8 = -l2 * GiNaC::sin(th2), t9 = -l3 * GiNaC::sin(th3);
  const std::vector<ex> dq = {w, w * t7, -w * t6 * t7 / t5, w * l1 * GiNaC::sin(th2 - th1)};
  auto dot = [&](const ex& e) {
    ex out = 0;
    for (size_t i = 0; i < q.size(); ++i) out += e.diff(q[i]) * dq[i];
    return out;
  };
  std::vector<symbol> out;
  auto assign = [&](const std::string& name, const ex& v) {
    out.push_back(b.Slot(name));
    b.Assign(out.back(), v);
  };
  const ex vx = w * t8 * t7 - w * t6 * t9 * t7 / t5;  // a velocity: a sum of products
  const ex M = 1 + m * GiNaC::pow(t8 * t7 - t6 * t9 * t7 / t5, 2) / J + t7 * t7 / J;
  const ex f = -R * vx * (t8 * t7 - t6 * t9 * t7 / t5) - m * vx * dot(t8 * t7 - t6 * t9 * t7 / t5);
  for (size_t i = 0; i < dq.size(); ++i) assign("d" + names[i], dq[i]);
  assign("dt7", dot(t7));
  assign("dt5", dot(t5));
  assign("P", GiNaC::pow(vx, 2) * R);
  assign("T", (J * w * w + m * vx * vx + m * GiNaC::pow(w * t7 * l2, 2)) / 2);
  const symbol a = b.Slot("dp");
  b.Block({a}, {M * a - f}, true, "derivative causality");
  assign("after", a * t7 + dot(t6 * t9));
  return codegen::GenerateC(codegen::Lower(b.p));
}

TEST(Codegen, GeneratedCodeDoesNotDependOnGinacTermOrder) {
  const std::string first = codegen::GenerateC(codegen::Lower(ChainProgram(false)));
  for (int round = 0; round < 4; ++round) {
    std::vector<symbol> shift(round * 7 + 1);  // other serial numbers, other hashes
    EXPECT_EQ(codegen::GenerateC(codegen::Lower(ChainProgram(round % 2 == 0))), first);
  }
  const std::string random = RandomProgramC(0);
  for (int order = 1; order < 6; ++order) EXPECT_EQ(RandomProgramC(order), random) << "symbol order " << order;
  const std::string mechanism = MechanismProgramC(0);
  for (int order = 1; order < 24; ++order) EXPECT_EQ(MechanismProgramC(order), mechanism) << "symbol order " << order;
}

// The quick return mechanism (examples/B3_quick_return.yaml, seed 000), trimmed to
// what shapes its equations: MTFs with configuration-dependent moduli, a flow
// source fixing a velocity (derivative causality, a linear block), displacements.
constexpr const char* kQuickReturnYaml = R"(
name: quick_return
parameters:
  h: 0.35
  l1: 0.08
  l2: 0.8
  l3: 1.0
  lC3: l3/2
  H: 0.55
  m3: 0.785
  J_1: 1.340e-4
  J_2: 0.1340
  J_3: 0.06542
  m5: 1.0
  R: 10
  F: 0
  tau: 2
  theta2_0: atan2(h, l1)
  Lx_0: sqrt(l1^2 + h^2)
  theta3_0: asin((l2*sin(theta2_0) - H)/l3)
elements:
  - {name: crank, kind: "1"}
  - {name: rocker, kind: "1"}
  - {name: rod, kind: "1"}
  - {name: J1, kind: I, inertance: J_1, initial: 0}
  - {name: J2, kind: I, inertance: J_2, initial: 0}
  - {name: J3, kind: I, inertance: J_3, initial: 0}
  - {name: torque, kind: Se, effort: tau}
  - {name: t7, kind: MTF, ratio: l1*cos(theta2 - theta1)/Lx}
  - {name: t1, kind: MTF, ratio: -l2*sin(theta2)}
  - {name: t2, kind: MTF, ratio: -lC3*sin(theta3)}
  - {name: t3, kind: MTF, ratio: l2*cos(theta2)}
  - {name: t4, kind: MTF, ratio: -lC3*cos(theta3)}
  - {name: xC3dot, kind: "0"}
  - {name: yC3dot, kind: "0"}
  - {name: m3x, kind: I, inertance: m3}
  - {name: m3y, kind: I, inertance: m3}
  - {name: t5, kind: MTF, ratio: -l3*cos(theta3)}
  - {name: t6, kind: MTF, ratio: l2*cos(theta2)}
  - {name: t8, kind: MTF, ratio: -l2*sin(theta2)}
  - {name: t9, kind: MTF, ratio: -l3*sin(theta3)}
  - {name: yC5dot, kind: "0"}
  - {name: guide, kind: Sf, flow: 0}
  - {name: xC5dot, kind: "0"}
  - {name: ram, kind: "1"}
  - {name: m5x, kind: I, inertance: m5}
  - {name: damper, kind: R, resistance: R}
  - {name: force, kind: Se, effort: F}
bonds:
  - [torque, crank]
  - [crank, J1]
  - [crank, t7]
  - [t7, rocker]
  - [rocker, J2]
  - [rod, J3]
  - [rocker, t1]
  - [t1, xC3dot]
  - [rod, t2]
  - [t2, xC3dot]
  - [xC3dot, m3x]
  - [rocker, t3]
  - [t3, yC3dot]
  - [rod, t4]
  - [t4, yC3dot]
  - [yC3dot, m3y]
  - [rocker, t6]
  - [t6, yC5dot]
  - [rod, t5]
  - [t5, yC5dot]
  - [guide, yC5dot]
  - [rocker, t8]
  - [t8, xC5dot]
  - [rod, t9]
  - [t9, xC5dot]
  - [xC5dot, ram]
  - [ram, m5x]
  - [ram, damper]
  - [force, ram]
displacements:
  - {name: theta1, of: crank, initial: 0}
  - {name: theta2, of: rocker, initial: theta2_0}
  - {name: theta3, of: rod, initial: theta3_0}
  - {name: Lx, rate: l1*sin(theta2 - theta1)*f_crank, initial: Lx_0}
  - {name: D_R, rate: R*f_ram^2}
outputs:
  theta2dot: f_rocker
  xC5: l2*cos(theta2) + l3*cos(theta3)
  T: J_1*f_crank^2/2 + J_2*f_rocker^2/2 + J_3*f_rod^2/2 + m3*(f_m3x^2 + f_m3y^2)/2 + m5*f_ram^2/2
)";

// The program layout and C code of the quick return mechanism, built from scratch
// with GiNaC's hashes perturbed (new symbols, other serial numbers).
std::pair<std::string, std::string> QuickReturnCode(int perturbation) {
  std::vector<symbol> pad(perturbation * 5 + 1);
  Model model = LoadModelFromString(kQuickReturnYaml, "quick_return.yaml");
  const CausalGraph graph = AssignCausality(model, OptionsFor(Formulation::kState, model));
  const EquationSystem sys = BuildEquations(model, graph);
  std::string layout;
  for (const Program* p : {&sys.rhs, &sys.outputs}) {
    for (size_t i = 0; i < p->slot_names.size(); ++i) layout += p->slot_names[i] + " ";
    layout += "| steps:";
    for (const ProgramStep& st : p->steps) {
      layout += " ";
      if (st.kind == ProgramStep::Kind::kAssign) layout += p->slot_names[st.target];
      else
        for (int u : st.unknowns) layout += "[" + p->slot_names[u] + "]";
    }
    layout += "\n";
  }
  return {layout, codegen::GenerateC(codegen::Lower(sys.rhs)) + codegen::GenerateC(codegen::Lower(sys.outputs))};
}

// The native cache is keyed by the C source, so a model must give the same source in
// every run, whatever order GiNaC puts terms (and sets of symbols) in: that takes a
// deterministic program (slot layout, step order) as well as deterministic lowering.
TEST(Codegen, ModelCodeDoesNotDependOnGinacHashes) {
  const auto [layout, code] = QuickReturnCode(0);
  for (int perturbation = 1; perturbation < 8; ++perturbation) {
    const auto [l, c] = QuickReturnCode(perturbation);
    EXPECT_EQ(l, layout) << "perturbation " << perturbation;
    EXPECT_EQ(c, code) << "perturbation " << perturbation;
  }
}

TEST(Codegen, RewrittenSlotIsNotReusedStale) {
  // Slots written twice (not SSA): a value computed from the old contents must not be reused.
  ProgramBuilder b;
  symbol x = b.Slot("x"), a = b.Slot("a"), c = b.Slot("c");
  b.Assign(a, GiNaC::sin(x) * 2);
  b.Assign(x, numeric(5));
  b.Assign(c, GiNaC::sin(x) * 2);
  for (Backend be : {Backend::kTape, Backend::kNative}) {
    auto prog = Compile(b.p, Opts(be));
    auto prog_ws = prog->NewWorkspace();
    std::vector<double> s = {1.0, 0, 0};
    prog->Run(s.data(), *prog_ws);
    EXPECT_DOUBLE_EQ(s[1], 2 * std::sin(1.0));
    EXPECT_DOUBLE_EQ(s[2], 2 * std::sin(5.0));
  }
}

TEST(Codegen, LinearBlockIsExactInOneStep) {
  // A u = b with A depending on parameters k (loop-invariant: computed once).
  ProgramBuilder b;
  symbol k = b.Slot("k"), b0 = b.Slot("b0"), b1 = b.Slot("b1"), b2 = b.Slot("b2");
  symbol u0 = b.Slot("u0"), u1 = b.Slot("u1"), u2 = b.Slot("u2"), after = b.Slot("after");
  const ex A[3][3] = {{4 * k, 1, -1}, {2, 5, k}, {-1, 2 * k, 6}};
  const std::vector<symbol> u = {u0, u1, u2}, rhs = {b0, b1, b2};
  std::vector<ex> r;
  for (int i = 0; i < 3; ++i) r.push_back(A[i][0] * u0 + A[i][1] * u1 + A[i][2] * u2 - rhs[i]);
  b.Block(u, r, true, "algebraic loop at 1-junction J1");
  b.Assign(after, u0 + u1 * u2);
  const double kv = 1.5, us[3] = {1.0, -2.0, 3.0};
  std::vector<double> s(b.p.symbols.size(), 0.0);
  s[0] = kv;
  const double Av[3][3] = {{4 * kv, 1, -1}, {2, 5, kv}, {-1, 2 * kv, 6}};
  for (int i = 0; i < 3; ++i) s[1 + i] = Av[i][0] * us[0] + Av[i][1] * us[1] + Av[i][2] * us[2];
  for (Backend be : {Backend::kTape, Backend::kNative}) {
    auto prog = Compile(b.p, Opts(be));
    auto prog_ws = prog->NewWorkspace();
    std::vector<double> t = s;
    t[4] = 100, t[5] = -7, t[6] = 0.25;  // any starting point
    prog->Run(t.data(), *prog_ws);
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(t[4 + j], us[j], 1e-14) << prog->backend_name();
    EXPECT_NEAR(t[7], us[0] + us[1] * us[2], 1e-13);
  }
}

TEST(Codegen, SmallLinearBlockMatchesGeneralPath) {
  // Linear blocks of up to 4 unknowns take the solver's direct dense path; a
  // fifth, decoupled unknown (w = c) sends the same 4x4 system down the general
  // path, whose elimination then does the same operations on the first four
  // (the zero couplings add and subtract exact zeros): both give the same bits,
  // and the analytic solution. The system needs row exchanges (a zero leading
  // pivot).
  const double kv = 0.7, us[4] = {1.25, -3.5, 0.125, 2.0};
  const auto system = [&](bool decoupled, std::vector<double>* slots) {
    ProgramBuilder b;
    symbol k = b.Slot("k"), c = b.Slot("c");
    std::vector<symbol> rhs, u;
    for (int i = 0; i < 4; ++i) rhs.push_back(b.Slot("b" + std::to_string(i)));
    for (int i = 0; i < 4; ++i) u.push_back(b.Slot("u" + std::to_string(i)));
    symbol w = b.Slot("w"), after = b.Slot("after");
    const ex A[4][4] = {{0, 2, -1, k}, {3 * k, 1, 4, -2}, {1, -k, 5, 1}, {2, 1, k * k, 7}};
    std::vector<ex> r;
    for (int i = 0; i < 4; ++i) r.push_back(A[i][0] * u[0] + A[i][1] * u[1] + A[i][2] * u[2] + A[i][3] * u[3] - rhs[i]);
    std::vector<symbol> unknowns = u;
    if (decoupled) {
      r.push_back(w - c);
      unknowns.push_back(w);
    }
    b.Block(unknowns, r, true, "linear loop");
    b.Assign(after, u[0] * u[3] - u[1]);
    slots->assign(b.p.symbols.size(), 0.0);
    (*slots)[0] = kv;
    (*slots)[1] = 3;
    for (int i = 0; i < 4; ++i) {
      double bi = 0;
      for (int j = 0; j < 4; ++j) bi += GiNaC::ex_to<GiNaC::numeric>(A[i][j].subs(k == kv).evalf()).to_double() * us[j];
      (*slots)[2 + i] = bi;
    }
    for (int j = 0; j < 4; ++j) (*slots)[6 + j] = 10.0 * j - 4;  // any starting point
    return b.p;
  };
  for (Backend be : {Backend::kTape, Backend::kNative}) {
    std::vector<double> direct, general;
    auto p4 = Compile(system(false, &direct), Opts(be));
    auto p4_ws = p4->NewWorkspace();
    auto p5 = Compile(system(true, &general), Opts(be));
    auto p5_ws = p5->NewWorkspace();
    for (int rep = 0; rep < 2; ++rep) {  // from the start above, then from the previous solution
      p4->Run(direct.data(), *p4_ws);
      p5->Run(general.data(), *p5_ws);
      for (int j = 0; j < 4; ++j) {
        EXPECT_EQ(direct[6 + j], general[6 + j]) << p4->backend_name() << " u" << j;
        EXPECT_NEAR(direct[6 + j], us[j], 1e-14) << p4->backend_name() << " u" << j;
      }
      EXPECT_EQ(direct[11], general[11]);
      EXPECT_EQ(general[10], 3.0);
    }
  }
}

TEST(Codegen, LinearMeansExactlyOneStep) {
  // A nonlinear residual wrongly marked linear: one step is taken and the residual
  // check catches it (instead of silently iterating).
  ProgramBuilder b;
  symbol q = b.Slot("q"), u = b.Slot("u");
  b.Block({u}, {GiNaC::pow(u, 3) + u - q}, true, "mislabelled loop");
  for (Backend be : {Backend::kTape, Backend::kNative}) {
    auto prog = Compile(b.p, Opts(be));
    const std::string msg = RunError(*prog, {2.0, 0.0});
    EXPECT_NE(msg.find("mislabelled loop"), std::string::npos) << msg;
    EXPECT_NE(msg.find("marked linear"), std::string::npos) << msg;
  }
}

TEST(Codegen, NonlinearBlocksConverge) {
  ProgramBuilder b;
  symbol p = b.Slot("p"), q = b.Slot("q"), u = b.Slot("u"), v = b.Slot("v");
  symbol x = b.Slot("x"), y = b.Slot("y"), w = b.Slot("w");
  b.Assign(q, 2 * p);
  b.Block({u}, {GiNaC::pow(u, 3) + u - q}, false, "cubic");
  b.Assign(v, GiNaC::pow(u, 3));  // shares u^3 with the residual, evaluated at the solution
  b.Block({x, y}, {x * x + y * y - 4, x - y}, false, "circle");
  b.Assign(w, x * y + u);
  for (Backend be : {Backend::kTape, Backend::kNative}) {
    auto prog = Compile(b.p, Opts(be));
    auto prog_ws = prog->NewWorkspace();
    std::vector<double> s = {1.0, 0, 0, 0, 1.0, 0.5, 0};
    prog->Run(s.data(), *prog_ws);
    EXPECT_NEAR(s[2], 1.0, 1e-14) << prog->backend_name();
    EXPECT_NEAR(s[3], 1.0, 1e-13);
    EXPECT_NEAR(s[4], std::sqrt(2.0), 1e-14);
    EXPECT_NEAR(s[5], std::sqrt(2.0), 1e-14);
    EXPECT_NEAR(s[6], 3.0, 1e-13);
    // From a far starting point too (the line search keeps it on track).
    s = {1.0, 0, -40, 0, 30, -3, 0};
    prog->Run(s.data(), *prog_ws);
    EXPECT_NEAR(s[2], 1.0, 1e-12);
    EXPECT_NEAR(std::fabs(s[4]), std::sqrt(2.0), 1e-12);
  }
}

TEST(Codegen, SingularBlockThrowsWithLabel) {
  ProgramBuilder b;
  symbol c = b.Slot("c"), u = b.Slot("u"), v = b.Slot("v");
  b.Block({u, v}, {u + 2 * v - c, 2 * u + 4 * v - 3 * c}, true, "algebraic loop at 1-junction J7");
  ProgramBuilder s2;
  symbol c2 = s2.Slot("c"), u2 = s2.Slot("u"), v2 = s2.Slot("v");
  s2.Block({u2, v2}, {u2 - c2, 2 * u2 - 1}, true, "loop at R3");  // v appears nowhere
  for (Backend be : {Backend::kTape, Backend::kNative}) {
    auto prog = Compile(b.p, Opts(be));
    const std::string msg = RunError(*prog, {1.0, 0, 0});
    EXPECT_NE(msg.find("algebraic loop at 1-junction J7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("singular"), std::string::npos) << msg;
    auto prog2 = Compile(s2.p, Opts(be));
    const std::string msg2 = RunError(*prog2, {1.0, 0, 0});
    EXPECT_NE(msg2.find("loop at R3"), std::string::npos) << msg2;
    EXPECT_NE(msg2.find("structurally singular"), std::string::npos) << msg2;
    EXPECT_NE(msg2.find("'v'"), std::string::npos) << msg2;
  }
  // A single linear unknown whose coefficient vanishes at run time.
  ProgramBuilder s1;
  symbol k1 = s1.Slot("k"), c1 = s1.Slot("c"), u1 = s1.Slot("u");
  s1.Block({u1}, {k1 * u1 - c1}, true, "loop at C2");
  for (Backend be : {Backend::kTape, Backend::kNative}) {
    auto prog = Compile(s1.p, Opts(be));
    auto prog_ws = prog->NewWorkspace();
    std::vector<double> ok = {2.0, 3.0, 0.0};
    prog->Run(ok.data(), *prog_ws);
    EXPECT_EQ(ok[2], 1.5) << prog->backend_name();
    const std::string msg = RunError(*prog, {0.0, 3.0, 0.0});
    EXPECT_NE(msg.find("loop at C2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("singular"), std::string::npos) << msg;
  }
}

TEST(Codegen, NewtonFailureReportsIterations) {
  ProgramBuilder b;
  symbol u = b.Slot("u");
  b.Block({u}, {u * u + 1}, false, "no real root");  // never zero
  auto prog = Compile(b.p, Opts(Backend::kTape));
  const std::string msg = RunError(*prog, {0.5});
  EXPECT_NE(msg.find("no real root"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did not converge"), std::string::npos) << msg;
  EXPECT_NE(msg.find("50 iterations"), std::string::npos) << msg;
}

TEST(Codegen, NonFiniteValuesNameTheSlot) {
  ProgramBuilder b;
  symbol x = b.Slot("x"), a = b.Slot("a"), lg = b.Slot("R1.log_e"), ratio = b.Slot("C2.ratio"), inv = b.Slot("inv");
  b.Assign(lg, GiNaC::log(x) + 1);
  b.Assign(ratio, a / x);
  b.Assign(inv, 1 / a);
  for (Backend be : {Backend::kTape, Backend::kNative}) {
    auto prog = Compile(b.p, Opts(be));
    std::string msg = RunError(*prog, {-1.0, 1.0, 0, 0, 0});  // log(-1)
    EXPECT_NE(msg.find("'R1.log_e' became NaN"), std::string::npos) << msg;
    EXPECT_NE(msg.find("x = -1"), std::string::npos) << msg;
    msg = RunError(*prog, {0.0, 0.0, 0, 0, 0});  // log(0) = -Inf comes first
    EXPECT_NE(msg.find("'R1.log_e' became -Inf"), std::string::npos) << msg;
    ProgramBuilder c;
    symbol p = c.Slot("p"), q = c.Slot("q"), r = c.Slot("r");
    c.Assign(r, p / q);
    auto prog2 = Compile(c.p, Opts(be));
    msg = RunError(*prog2, {0.0, 0.0, 1.0});  // 0/0
    EXPECT_NE(msg.find("'r' became NaN"), std::string::npos) << msg;
    EXPECT_EQ(RunError(*prog2, {1.0, 2.0, 0.0}), "");
  }
}

TEST(Codegen, UnsupportedFunctionFailsAtCompileTime) {
  ProgramBuilder b;
  symbol x = b.Slot("x"), y = b.Slot("y");
  b.Assign(y, GiNaC::lgamma(x) + 1);
  try {
    Compile(b.p, Opts(Backend::kTape));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lgamma"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'y'"), std::string::npos) << e.what();
  }
}

TEST(Codegen, NativeCacheIsReused) {
  const std::string dir = (fs::path(TestCacheDir()) / "cache_hit").string();
  ProgramBuilder b;
  symbol x = b.Slot("x"), y = b.Slot("y");
  b.Assign(y, GiNaC::exp(-x * x) * 42);
  auto count_so = [&] {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".so";
    return n;
  };
  auto first = Compile(b.p, Opts(Backend::kNative, dir));
  auto* n1 = dynamic_cast<codegen::NativeProgram*>(first.get());
  ASSERT_NE(n1, nullptr);
  EXPECT_FALSE(n1->cache_hit());
  EXPECT_EQ(count_so(), 1);
  auto second = Compile(b.p, Opts(Backend::kNative, dir));
  auto second_ws = second->NewWorkspace();
  auto* n2 = dynamic_cast<codegen::NativeProgram*>(second.get());
  EXPECT_TRUE(n2->cache_hit());
  EXPECT_EQ(n2->library_path(), n1->library_path());
  EXPECT_EQ(count_so(), 1);
  std::vector<double> s = {0.5, 0};
  second->Run(s.data(), *second_ws);
  EXPECT_DOUBLE_EQ(s[1], std::exp(-0.25) * 42);
}

// A program with long straight code (a chain of coupled assignments) and a nonlinear
// block of n unknowns whose residual and Jacobian code (n*n entries) are both
// larger than the bounds the tests set.
Program LargeProgram(int links, int n, double scale = 1.0) {
  ProgramBuilder b;
  symbol x = b.Slot("x");
  ex prev = x;
  std::vector<symbol> y;
  for (int i = 0; i < links; ++i) {
    y.push_back(b.Slot("y" + std::to_string(i)));
    b.Assign(y.back(), GiNaC::sin(prev) * (i + 1) * scale + GiNaC::cos(x * (i + 2)) / (prev * prev + 1));
    prev = y.back();
  }
  std::vector<symbol> u;
  for (int i = 0; i < n; ++i) u.push_back(b.Slot("u" + std::to_string(i)));
  std::vector<ex> r;
  for (int i = 0; i < n; ++i) {
    ex ri = 4 * u[i] + GiNaC::pow(u[i], 3) / 10 - y[i % links];
    for (int j = 0; j < n; ++j)
      if (j != i) ri += GiNaC::sin(u[j] * (i + 1)) / (n * (j + 2)) * y[(i + j) % links];
    r.push_back(ri);
  }
  b.Block(u, r, false, "large */ block");
  symbol z = b.Slot("z");
  ex sum = 0;
  for (int i = 0; i < n; ++i) sum += u[i] * u[i] * (i + 1);
  b.Assign(z, sum);
  return b.p;
}

// Operations per generated function, as the C source shows them: every statement
// computing a value or storing a block output (copies of a value to w and the
// NaN/Inf check are not operations). A statement into which temporaries read
// once are nested holds several operations, so this counts at most as many as
// there are; NativeProgram::max_function_ops() gives the exact bound.
std::vector<int> OpsPerFunction(const std::string& source) {
  std::vector<int> ops;
  size_t pos = 0;
  while (pos < source.size()) {
    size_t end = source.find('\n', pos);
    if (end == std::string::npos) end = source.size();
    const std::string line = source.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("int pn_", 0) == 0 || line.rfind("void pn_", 0) == 0) ops.push_back(0);
    else if (!ops.empty() && (line.rfind("  s[", 0) == 0 || line.rfind("  const double t", 0) == 0 ||
                              line.rfind("  r[", 0) == 0 || line.rfind("  J[", 0) == 0))
      ++ops.back();
  }
  return ops;
}

std::unique_ptr<codegen::NativeProgram> CreateNative(const Program& p, const std::string& dir,
                                                     const codegen::NativeTuning& tuning) {
  codegen::Plan plan = codegen::Lower(p);
  return codegen::NativeProgram::Create(plan, Opts(Backend::kNative, dir), tuning);
}

std::vector<double> RunOnce(const CompiledProgram& prog, double x) {
  std::vector<double> s(prog.num_slots(), 0.1);
  s[0] = x;
  prog.Run(s.data(), *prog.NewWorkspace());
  return s;
}

void ExpectBitwiseEqual(const std::vector<double>& a, const std::vector<double>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(std::memcmp(&a[i], &b[i], sizeof(double)), 0) << what << ": slot " << i << ": " << a[i] << " vs " << b[i];
}

TEST(Codegen, GeneratedFunctionsStayWithinTheBound) {
  const Program p = LargeProgram(40, 9);
  codegen::NativeTuning tuning;
  tuning.max_function_ops = 37;
  tuning.unit_ops = 200;
  const codegen::Plan plan = codegen::Lower(p);
  ASSERT_GT(plan.groups[0].straight.code.size(), 3 * tuning.max_function_ops);
  ASSERT_GT(plan.blocks[0].residual.code.size() + plan.blocks[0].residual_out.size(), 2 * tuning.max_function_ops);
  ASSERT_GT(plan.blocks[0].jacobian.code.size() + plan.blocks[0].jacobian_out.size(), 2 * tuning.max_function_ops);
  const std::string source = codegen::GenerateC(plan, tuning);
  const std::vector<int> ops = OpsPerFunction(source);
  ASSERT_GT(ops.size(), 8u);
  for (size_t f = 0; f < ops.size(); ++f) EXPECT_LE(ops[f], 37) << "function " << f;
  EXPECT_EQ(source.find("large"), std::string::npos) << "a label reached the C source";

  auto native = CreateNative(p, (fs::path(TestCacheDir()) / "bounded").string(), tuning);
  EXPECT_LE(native->max_function_ops(), 37u);
  EXPECT_GT(native->num_units(), 2);
  auto tape = Compile(p, Opts(Backend::kTape));
  for (double x : {0.3, -1.7, 2.5})
    ExpectBitwiseEqual(RunOnce(*native, x), RunOnce(*tape, x), "bounded native vs tape");
}

TEST(Codegen, SingleUseTemporariesAreNestedIntoTheirReader) {
  // o = (x*y + z) * sin(w) - x/w: every intermediate value is read once, so the
  // C source has no temporary of its own, and native agrees with the tape.
  ProgramBuilder b;
  symbol x = b.Slot("x"), y = b.Slot("y"), z = b.Slot("z"), w = b.Slot("w"), o = b.Slot("o");
  b.Assign(o, (x * y + z) * GiNaC::sin(w) - x / w);
  const std::string source = codegen::GenerateC(codegen::Lower(b.p));
  EXPECT_EQ(source.find("const double t"), std::string::npos) << source;
  EXPECT_NE(source.find("sin(s[3])"), std::string::npos) << source;
  auto tape = Compile(b.p, Opts(Backend::kTape));
  auto tape_ws = tape->NewWorkspace();
  auto native = Compile(b.p, Opts(Backend::kNative));
  auto native_ws = native->NewWorkspace();
  ASSERT_EQ(native->backend_name(), "native");
  for (double v : {0.3, -1.7, 2.5}) {
    std::vector<double> st = {v, 2 * v, 0.5, 1 + v * v, 0}, sn = st;
    tape->Run(st.data(), *tape_ws);
    native->Run(sn.data(), *native_ws);
    ExpectBitwiseEqual(sn, st, "nested native vs tape");
  }
}

TEST(Codegen, NestedTemporaryDoesNotReadASlotWrittenInBetween) {
  // A lowered plan (written by hand: the lowering itself never reads a slot's
  // old contents after writing it) in which t0 = s0 * s1 is read after s0 is
  // written: t0 must keep the old s0, so it stays a temporary.
  codegen::Plan plan;
  plan.num_slots = 3;
  plan.num_temps = 1;
  plan.constants = {5.0, 1.0};
  plan.slot_names = {"a", "b", "c"};
  for (const char* n : {"a", "b", "c"}) plan.symbols.push_back(ex(symbol(n)));
  using K = codegen::Ref::Kind;
  const codegen::Ref s0{K::kSlot, 0}, s1{K::kSlot, 1}, s2{K::kSlot, 2}, t0{K::kTemp, 0}, five{K::kConst, 0},
      one{K::kConst, 1};
  plan.groups.emplace_back();
  plan.groups[0].straight.code = {{codegen::Op::kMul, s0, s1, t0},
                                  {codegen::Op::kCopy, five, {}, s0},
                                  {codegen::Op::kAdd, t0, one, s2}};
  plan.written = {{0, -1, ex(5)}, {2, -1, ex(0)}};
  plan.groups[0].written_end = 2;
  const std::string source = codegen::GenerateC(plan);
  EXPECT_NE(source.find("const double t0 = s[0] * s[1];"), std::string::npos) << source;
  auto native = codegen::NativeProgram::Create(plan, Opts(Backend::kNative));
  auto native_ws = native->NewWorkspace();
  std::vector<double> s = {3.0, 4.0, 0.0};
  native->Run(s.data(), *native_ws);
  EXPECT_EQ(s[0], 5.0);
  EXPECT_EQ(s[2], 13.0);  // 3 * 4 + 1, not 5 * 4 + 1
}

TEST(Codegen, UnitsAreCompiledAndCachedSeparately) {
  const std::string dir = (fs::path(TestCacheDir()) / "units").string();
  codegen::NativeTuning tuning;
  tuning.max_function_ops = 25;
  tuning.unit_ops = 100;
  auto objects = [&] {
    std::map<std::string, fs::file_time_type> out;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".o") out[e.path().filename().string()] = fs::last_write_time(e.path());
    return out;
  };
  const Program p1 = LargeProgram(30, 6);
  auto n1 = CreateNative(p1, dir, tuning);
  const int units = n1->num_units();
  ASSERT_GE(units, 4);
  EXPECT_EQ(static_cast<int>(n1->compiled_units().size()), units);
  const auto before = objects();
  EXPECT_EQ(static_cast<int>(before.size()), units);

  // The same program again: the shared object is reused, nothing compiled.
  auto again = CreateNative(p1, dir, tuning);
  EXPECT_TRUE(again->cache_hit());
  EXPECT_TRUE(again->compiled_units().empty());

  // A change to the last block's output only (a coefficient of z): one unit recompiles,
  // the other objects are linked as they are.
  Program p2 = p1;
  p2.steps.back().value = p2.steps.back().value * 3;
  auto n2 = CreateNative(p2, dir, tuning);
  EXPECT_FALSE(n2->cache_hit());
  EXPECT_EQ(n2->num_units(), units);
  ASSERT_EQ(n2->compiled_units().size(), 1u);
  EXPECT_EQ(n2->compiled_units()[0], units - 1);  // units follow program order: z is last
  const auto after = objects();
  EXPECT_EQ(after.size(), before.size() + 1);
  for (const auto& [name, time] : before) {
    ASSERT_TRUE(after.count(name)) << name;
    EXPECT_EQ(after.at(name), time) << name << " was rebuilt";
  }

  // Bitwise the same as one unit (compiled straight into a shared object) and as the tape.
  codegen::NativeTuning one = tuning;
  one.unit_ops = 1u << 30;
  for (const Program* p : {&p1, static_cast<const Program*>(&p2)}) {
    auto single = CreateNative(*p, dir, one);
    EXPECT_EQ(single->num_units(), 1);
    auto split = CreateNative(*p, dir, tuning);
    auto tape = Compile(*p, Opts(Backend::kTape));
    for (double x : {0.4, 1.9}) {
      ExpectBitwiseEqual(RunOnce(*split, x), RunOnce(*single, x), "units vs one unit");
      ExpectBitwiseEqual(RunOnce(*split, x), RunOnce(*tape, x), "units vs tape");
    }
  }
}

// An object file in the cache is linked into code that runs: one writable by
// others is never used but rebuilt in its place.
TEST(Codegen, UnsafeUnitObjectIsRebuilt) {
  const std::string dir = (fs::path(TestCacheDir()) / "unsafe_units").string();
  codegen::NativeTuning tuning;
  tuning.max_function_ops = 25;
  tuning.unit_ops = 100;
  const Program p1 = LargeProgram(30, 6);
  auto n1 = CreateNative(p1, dir, tuning);
  std::vector<fs::path> objects;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".o") objects.push_back(e.path());
  ASSERT_FALSE(objects.empty());
  for (const fs::path& o : objects) {
    EXPECT_EQ(fs::status(o).permissions(), fs::perms::owner_all) << o;
    fs::permissions(o, static_cast<fs::perms>(0666));
  }
  fs::remove(n1->library_path());  // so that the objects are linked again
  auto n2 = CreateNative(p1, dir, tuning);
  EXPECT_EQ(static_cast<int>(n2->compiled_units().size()), n2->num_units());
  EXPECT_NE(n2->cache_note().find("writable by group or others"), std::string::npos) << n2->cache_note();
  for (const fs::path& o : objects) EXPECT_EQ(fs::status(o).permissions(), fs::perms::owner_all) << o;
  auto tape = Compile(p1, Opts(Backend::kTape));
  ExpectBitwiseEqual(RunOnce(*n2, 0.7), RunOnce(*tape, 0.7), "rebuilt units vs tape");
}

// Without a safe cache directory the units are compiled and linked in a private
// directory of the run, and nothing is written where others may write.
TEST(Codegen, UnitsWithoutSafeCacheDirectoryAreBuiltPrivately) {
  const fs::path dir = fs::path(TestCacheDir()) / "open_units";
  fs::create_directory(dir);
  fs::permissions(dir, static_cast<fs::perms>(0777));
  codegen::NativeTuning tuning;
  tuning.max_function_ops = 25;
  tuning.unit_ops = 100;
  const Program p = LargeProgram(30, 6);
  auto native = CreateNative(p, dir.string(), tuning);
  EXPECT_GE(native->num_units(), 4);
  EXPECT_NE(native->cache_note().find("not cached"), std::string::npos) << native->cache_note();
  EXPECT_TRUE(fs::is_empty(dir)) << "a file was written into a directory others may write";
  EXPECT_FALSE(fs::exists(native->library_path())) << "the private build directory was not removed";
  auto tape = Compile(p, Opts(Backend::kTape));
  ExpectBitwiseEqual(RunOnce(*native, 0.9), RunOnce(*tape, 0.9), "privately built units vs tape");
}

TEST(Codegen, MissingCompilerFallsBackToTape) {
  ProgramBuilder b;
  symbol x = b.Slot("x"), y = b.Slot("y");
  b.Assign(y, x * x + 1);
  const char* old = std::getenv("CC");
  const std::string saved = old ? old : "";
  setenv("CC", "/nonexistent", 1);
  std::string native_error;
  try {
    Compile(b.p, Opts(Backend::kNative, (fs::path(TestCacheDir()) / "nocc").string()));
  } catch (const Error& e) {
    native_error = e.what();
  }
  auto fallback = Compile(b.p, Opts(Backend::kAuto, (fs::path(TestCacheDir()) / "nocc").string()));
  auto fallback_ws = fallback->NewWorkspace();
  if (old) setenv("CC", saved.c_str(), 1); else unsetenv("CC");
  EXPECT_NE(native_error.find("/nonexistent"), std::string::npos) << native_error;
  EXPECT_NE(native_error.find("not found"), std::string::npos) << native_error;
  EXPECT_EQ(fallback->backend_name(), "tape");
  EXPECT_NE(fallback->fallback_reason().find("/nonexistent"), std::string::npos) << fallback->fallback_reason();
  std::vector<double> s = {2.0, 0};
  fallback->Run(s.data(), *fallback_ws);
  EXPECT_EQ(s[1], 5.0);
  // With a compiler available, kAuto is native and has no fallback note.
  auto autop = Compile(b.p, Opts(Backend::kAuto));
  EXPECT_EQ(autop->backend_name(), "native");
  EXPECT_EQ(autop->fallback_reason(), "");
}

// A sample right-hand side: a damped pendulum chain with an algebraic loop.
Program SampleProgram(int links) {
  ProgramBuilder b;
  symbol g = b.Slot("g"), c = b.Slot("c");
  std::vector<symbol> th, om, dth, dom;
  for (int i = 0; i < links; ++i) {
    th.push_back(b.Slot("th" + std::to_string(i)));
    om.push_back(b.Slot("om" + std::to_string(i)));
  }
  for (int i = 0; i < links; ++i) {
    dth.push_back(b.Slot("dth" + std::to_string(i)));
    dom.push_back(b.Slot("dom" + std::to_string(i)));
    b.Assign(dth[i], om[i]);
    ex coupling = i > 0 ? GiNaC::sin(th[i] - th[i - 1]) * om[i - 1] * om[i - 1] : ex(0);
    b.Assign(dom[i], -g * GiNaC::sin(th[i]) - c * om[i] * GiNaC::abs(om[i]) + coupling +
                         GiNaC::cos(th[i]) * GiNaC::exp(-th[i] * th[i] / 4));
  }
  return b.p;
}

TEST(Codegen, RunDoesNotAllocateAndTiming) {
  const Program p = SampleProgram(20);
  ProgramBuilder nb;  // plus a nonlinear block
  symbol q = nb.Slot("q"), u = nb.Slot("u"), v = nb.Slot("v");
  nb.Block({u, v}, {u * u * u + v - q, u - v * v}, false, "nl");
  for (Backend be : {Backend::kTape, Backend::kNative}) {
    auto prog = Compile(p, Opts(be));
    auto prog_ws = prog->NewWorkspace();
    auto blk = Compile(nb.p, Opts(be));
    auto blk_ws = blk->NewWorkspace();
    std::vector<double> s(p.symbols.size(), 0.3), t = {2.0, 0.5, 0.5};
    s[0] = 9.81;
    prog->Run(s.data(), *prog_ws);
    blk->Run(t.data(), *blk_ws);
    const long before = g_allocations.load();
    const int reps = 200000;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) {
      s[2] = 0.3 + 1e-7 * i;
      prog->Run(s.data(), *prog_ws);
    }
    const auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < 1000; ++i) {
      t[1] = 0.5, t[2] = 0.5;
      blk->Run(t.data(), *blk_ws);
    }
    EXPECT_EQ(g_allocations.load(), before) << prog->backend_name();
    const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / reps;
    std::printf("[ timing ] %s: %.1f ns per Run of a 20-link sample (%d slots)\n", prog->backend_name().c_str(),
                ns, prog->num_slots());
    if (auto* tp = dynamic_cast<codegen::TapeProgram*>(prog.get()))
      std::printf("[ timing ] tape: %d instructions, %d registers\n", tp->num_instructions(), tp->num_registers());
  }
}

}  // namespace
}  // namespace paynter
