// codegen/lower.cc — Lower(): a Program's GiNaC expressions to the hash-consed,
// scheduled sections of a Plan (see plan.h).
#include "plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "newton.h"
#include "paynter/error.h"

namespace paynter::codegen {
namespace {

using GiNaC::ex;
using GiNaC::ex_to;
using GiNaC::is_a;
using GiNaC::numeric;

// Evaluates one op, exactly as the tape does (used for constant folding).
double Apply(Op op, double a, double b) {
  switch (op) {
#define PN_CASE(name, expr) \
  case Op::k##name:         \
    return (expr);
    PAYNTER_TAPE_OPS(PN_CASE)
#undef PN_CASE
  }
  return a;
}

// Combines hashes (splitmix64 finalizer): for the structural keys of DAG nodes.
uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

std::string Print(const ex& e) {
  std::ostringstream os;
  os << e;
  std::string s = os.str();
  if (s.size() > 200) s = s.substr(0, 197) + "...";
  return s;
}

struct FunctionOp {
  const char* name;
  Op op;
  size_t arity;
};
// By name rather than GiNaC serial so that functions declared elsewhere (min, max,
// sign, heaviside) are picked up without codegen depending on their declaration.
constexpr FunctionOp kFunctions[] = {
    {"sin", Op::kSin, 1},     {"cos", Op::kCos, 1},     {"tan", Op::kTan, 1},
    {"exp", Op::kExp, 1},     {"log", Op::kLog, 1},     {"sqrt", Op::kSqrt, 1},
    {"abs", Op::kAbs, 1},     {"asin", Op::kAsin, 1},   {"acos", Op::kAcos, 1},
    {"atan", Op::kAtan, 1},   {"atan2", Op::kAtan2, 2}, {"sinh", Op::kSinh, 1},
    {"cosh", Op::kCosh, 1},   {"tanh", Op::kTanh, 1},   {"asinh", Op::kAsinh, 1},
    {"acosh", Op::kAcosh, 1}, {"atanh", Op::kAtanh, 1}, {"step", Op::kStep, 1},
    {"heaviside", Op::kStep, 1}, {"csgn", Op::kSign, 1}, {"sign", Op::kSign, 1},
    {"min", Op::kMin, 2},     {"max", Op::kMax, 2},
};

class Lowerer {
 public:
  explicit Lowerer(const Program& program);
  Plan Lower();

 private:
  struct Node {
    Op op = Op::kCopy;
    int a = -1, b = -1;
    bool leaf = false;
    bool valid = false;  // the value is available at `cur`
    Ref cur;
    uint64_t key = 0;    // structural hash, the same in every process (see Make)
  };

  int Translate(const ex& e);
  int TranslateAdd(const ex& e, bool orient = false);
  int TranslateFactor(const ex& f);
  int TranslateMul(const ex& e);
  int TranslateFunction(const ex& e);
  int NumericPower(int base, const numeric& e);
  int IntPower(int base, long n);
  int Product(const std::vector<int>& factors);
  bool IsConst(int id) const { return nodes_[id].leaf && nodes_[id].cur.kind == Ref::Kind::kConst; }
  // Orders operands by structural key, constants first (they fold). With equal keys
  // (the same node twice, e.g. x*x or a - a), by sign: GiNaC's order must not decide.
  void SortByKey(std::vector<std::pair<int, bool>>& v) const {
    std::stable_sort(v.begin(), v.end(), [&](const auto& x, const auto& y) {
      const int a = x.first, b = y.first;
      if (IsConst(a) != IsConst(b)) return IsConst(a);
      if (nodes_[a].key != nodes_[b].key) return nodes_[a].key < nodes_[b].key;
      return x.second < y.second;
    });
  }
  // The operand of a (chain of) negation(s); toggles *neg once per negation.
  int StripNeg(int id, bool* neg) const {
    while (!nodes_[id].leaf && nodes_[id].op == Op::kNeg) {
      id = nodes_[id].a;
      *neg = !*neg;
    }
    return id;
  }
  int SlotLeaf(int slot);
  int Const(double v);
  int Make(Op op, int a, int b = -1);
  double RealValue(const numeric& n);

  void Require(int node, Section& sec, std::vector<int>* computed = nullptr);
  void Assign(const ProgramStep& step, size_t index);
  void Block(const ProgramStep& step, size_t index);
  void WriteSlot(int slot, int keep = -1);

  const Program& program_;
  Plan plan_;
  std::vector<Node> nodes_;
  std::unordered_map<ex, int, std::hash<ex>, GiNaC::ex_is_equal> memo_, oriented_memo_, slot_of_symbol_;
  std::unordered_map<uint64_t, int> op_nodes_;     // hash-consing of (op, a, b)
  std::unordered_map<uint64_t, int> const_nodes_;  // by bit pattern
  std::vector<int> leaf_of_slot_;  // the current version's leaf node, or -1
  std::vector<int> owner_;         // node whose value was stored in slot i, or -1
  std::vector<int> writes_;        // times slot i was written so far (part of leaf keys)
  std::vector<std::pair<int, bool>> stack_;
  int num_temps_ = 0;
  std::string context_;  // "the expression for slot 'x'", for error messages
};

Lowerer::Lowerer(const Program& program) : program_(program) {
  const int n = static_cast<int>(program.symbols.size());
  plan_.num_slots = n;
  plan_.slot_names.resize(n);
  plan_.symbols.reserve(n);
  for (int i = 0; i < n; ++i) {
    const ex sym = program.symbols[i];
    plan_.symbols.push_back(sym);
    std::string name = i < static_cast<int>(program.slot_names.size()) ? program.slot_names[i] : "";
    plan_.slot_names[i] = name.empty() ? program.symbols[i].get_name() : name;
    auto [it, fresh] = slot_of_symbol_.emplace(sym, i);
    if (!fresh)
      ThrowAt({}, "",
              fmt::format("symbol '{}' is listed twice in the program (slots {} and {})", program.symbols[i].get_name(),
                          it->second, i));
  }
  leaf_of_slot_.assign(n, -1);
  owner_.assign(n, -1);
  writes_.assign(n, 0);
}

Plan Lowerer::Lower() {
  plan_.groups.emplace_back();
  for (size_t k = 0; k < program_.steps.size(); ++k) {
    const ProgramStep& step = program_.steps[k];
    if (step.kind == ProgramStep::Kind::kAssign)
      Assign(step, k);
    else
      Block(step, k);
  }
  plan_.groups.back().written_end = static_cast<int>(plan_.written.size());
  plan_.num_temps = num_temps_;
  return std::move(plan_);
}

// Writing a slot starts a new version of it: expressions read later must not
// reuse values computed from the old contents.
void Lowerer::WriteSlot(int slot, int keep) {
  ++writes_[slot];
  if (leaf_of_slot_[slot] >= 0) {
    leaf_of_slot_[slot] = -1;
    memo_.clear();  // memoized nodes may contain the old leaf
    oriented_memo_.clear();
  }
  const int owner = owner_[slot];
  if (owner >= 0 && owner != keep) {
    nodes_[owner].valid = false;  // its value was overwritten
    owner_[slot] = -1;
  }
}

void Lowerer::Assign(const ProgramStep& step, size_t index) {
  const int t = step.target;
  if (t < 0 || t >= plan_.num_slots)
    ThrowAt({}, "",
            fmt::format("program step {} assigns slot {}, but the program has {} slots", index, t, plan_.num_slots));
  context_ = fmt::format("the expression for slot '{}'", plan_.slot_names[t]);
  const int root = Translate(step.value);
  Section& sec = plan_.groups.back().straight;
  const size_t before = sec.code.size();
  Require(root, sec);
  Node& r = nodes_[root];
  if (sec.code.size() > before && r.cur.kind == Ref::Kind::kTemp && sec.code.back().out == r.cur) {
    // Computed just now: write it straight into the slot, no temporary or copy.
    if (r.cur.index == num_temps_ - 1) --num_temps_;
    sec.code.back().out = r.cur = Ref{Ref::Kind::kSlot, t};
    WriteSlot(t, root);
    owner_[t] = root;
  } else {
    sec.code.push_back(Instr{Op::kCopy, r.cur, Ref{}, Ref{Ref::Kind::kSlot, t}});
    WriteSlot(t);
  }
  plan_.written.push_back(WrittenSlot{t, -1, step.value});
}

void Lowerer::Block(const ProgramStep& step, size_t index) {
  const int n = static_cast<int>(step.unknowns.size());
  const int b = static_cast<int>(plan_.blocks.size());
  BlockPlan bp;
  bp.label = step.label.empty() ? fmt::format("block {} (program step {})", b, index) : step.label;
  if (n == 0 || static_cast<int>(step.residuals.size()) != n ||
      static_cast<int>(step.jacobian.size()) != n * n)
    ThrowAt({}, "",
            fmt::format("block '{}' is malformed: {} unknowns, {} residuals, {} Jacobian entries", bp.label, n,
                        step.residuals.size(), step.jacobian.size()),
            "", "", "a block needs n unknowns, n residuals and an n*n row-major Jacobian");
  for (int u : step.unknowns) {
    if (u < 0 || u >= plan_.num_slots)
      ThrowAt({}, "", fmt::format("block '{}' has unknown slot {}, outside 0..{}", bp.label, u, plan_.num_slots - 1));
    for (int v : bp.unknowns)
      if (v == u) ThrowAt({}, "", fmt::format("block '{}' lists unknown '{}' twice", bp.label, plan_.slot_names[u]));
    bp.unknowns.push_back(u);
  }
  bp.linear = step.linear;
  bp.residual_exprs.assign(step.residuals.begin(), step.residuals.end());
  bp.written_before = static_cast<int>(plan_.written.size());

  std::vector<std::vector<int>> rows_of_col(n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (!step.jacobian[i * n + j].is_zero()) rows_of_col[j].push_back(i);
  bp.unmatched = StructurallyUnmatched(rows_of_col, n);

  // The unknowns change during the solve: reads inside the block see fresh versions.
  for (int u : bp.unknowns) WriteSlot(u);
  const int first = static_cast<int>(nodes_.size());
  std::vector<int> rn(n), jn;
  for (int i = 0; i < n; ++i) {
    context_ = fmt::format("residual {} of block '{}'", i, bp.label);
    rn[i] = Translate(step.residuals[i]);
  }
  // Only the structurally non-zero entries are computed (column by column).
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if (step.jacobian[i * n + j].is_zero()) continue;
      context_ = fmt::format("Jacobian entry ({}, {}) of block '{}'", i, j, bp.label);
      bp.jacobian_nz.push_back(i + j * n);
      jn.push_back(Translate(step.jacobian[i * n + j]));
    }

  // Which new nodes depend on the unknowns (older nodes cannot: the leaves are new).
  const int count = static_cast<int>(nodes_.size()) - first;
  std::vector<char> dep(count, 0);
  for (int u : bp.unknowns)
    if (leaf_of_slot_[u] >= first) dep[leaf_of_slot_[u] - first] = 1;
  auto depends = [&](int id) { return id >= first && dep[id - first]; };
  for (int id = first; id < first + count; ++id) {
    const Node& nd = nodes_[id];
    if (!nd.leaf) dep[id - first] = depends(nd.a) || (nd.b >= 0 && depends(nd.b));
  }

  // Hoist what does not depend on the unknowns into the straight code before the
  // block, so Newton iterations only recompute the rest.
  Section& straight = plan_.groups.back().straight;
  std::vector<char> seen(count, 0);
  std::vector<int> todo(rn.begin(), rn.end());
  todo.insert(todo.end(), jn.begin(), jn.end());
  while (!todo.empty()) {
    const int id = todo.back();
    todo.pop_back();
    if (!depends(id)) {
      Require(id, straight);
      continue;
    }
    if (seen[id - first] || nodes_[id].leaf) continue;  // an unknown's leaf: nothing to hoist
    seen[id - first] = 1;
    todo.push_back(nodes_[id].a);
    if (nodes_[id].b >= 0) todo.push_back(nodes_[id].b);
  }

  for (int i = 0; i < n; ++i) {
    Require(rn[i], bp.residual);
    bp.residual_out.push_back(nodes_[rn[i]].cur);
  }
  std::vector<int> jac_computed;
  for (size_t k = 0; k < jn.size(); ++k) {
    Require(jn[k], bp.jacobian, &jac_computed);
    bp.jacobian_out.push_back(nodes_[jn[k]].cur);
  }
  // The residual code last ran at the solution, so its values stay usable after the
  // block; the Jacobian code last ran at the previous iterate.
  for (int id : jac_computed) nodes_[id].valid = false;

  plan_.groups.back().block = b;
  plan_.groups.back().written_end = bp.written_before;
  plan_.blocks.push_back(std::move(bp));
  plan_.groups.emplace_back();
  for (int u : step.unknowns) plan_.written.push_back(WrittenSlot{u, b, ex()});
}

// Appends code computing `node` (and whatever it needs that is not available).
// Iterative post-order: expression DAGs can be deep (long sums).
void Lowerer::Require(int node, Section& sec, std::vector<int>* computed) {
  if (nodes_[node].valid) return;
  stack_.clear();
  stack_.emplace_back(node, false);
  while (!stack_.empty()) {
    auto [id, expanded] = stack_.back();
    Node& nd = nodes_[id];
    if (nd.valid) {
      stack_.pop_back();
      continue;
    }
    if (!expanded) {
      stack_.back().second = true;
      if (nd.b >= 0 && !nodes_[nd.b].valid) stack_.emplace_back(nd.b, false);
      if (!nodes_[nd.a].valid) stack_.emplace_back(nd.a, false);
      continue;
    }
    stack_.pop_back();
    const Ref out{Ref::Kind::kTemp, num_temps_++};
    sec.code.push_back(Instr{nd.op, nodes_[nd.a].cur, nd.b >= 0 ? nodes_[nd.b].cur : Ref{}, out});
    nd.valid = true;
    nd.cur = out;
    if (computed) computed->push_back(id);
  }
}

double Lowerer::RealValue(const numeric& n) {
  if (!n.is_real())
    ThrowAt({}, "", fmt::format("{} contains the complex number {}", context_, Print(n)), "", "",
            "only real arithmetic is compiled; a constant such as log(-1) or sqrt(-1) "
            "evaluates to a complex number");
  return n.to_double();
}

int Lowerer::SlotLeaf(int slot) {
  int& leaf = leaf_of_slot_[slot];
  if (leaf < 0) {
    leaf = static_cast<int>(nodes_.size());
    Node nd;
    nd.leaf = nd.valid = true;
    nd.cur = Ref{Ref::Kind::kSlot, slot};
    nd.key = Mix(Mix(0x5107, uint64_t(slot)), uint64_t(writes_[slot]));
    nodes_.push_back(nd);
  }
  return leaf;
}

int Lowerer::Const(double v) {
  auto [it, fresh] = const_nodes_.emplace(std::bit_cast<uint64_t>(v), static_cast<int>(nodes_.size()));
  if (fresh) {
    Node nd;
    nd.leaf = nd.valid = true;
    nd.cur = Ref{Ref::Kind::kConst, static_cast<int>(plan_.constants.size())};
    nd.key = Mix(0xC0257, std::bit_cast<uint64_t>(v));
    plan_.constants.push_back(v);
    nodes_.push_back(nd);
  }
  return it->second;
}

int Lowerer::Make(Op op, int a, int b) {
  // Operations on constants only (sqrt(2), exp(1), pi/2, ...) are folded here, with
  // the tape's own arithmetic, so both backends see the same literal.
  if (IsConst(a) && (b < 0 || IsConst(b)))
    return Const(Apply(op, plan_.constants[nodes_[a].cur.index], b < 0 ? 0.0 : plan_.constants[nodes_[b].cur.index]));
  // IEEE + and * are exactly commutative, so a canonical operand order is free
  // sharing. The order is by structural key, not node id: ids follow GiNaC's term
  // order, which depends on pointer hashes and so changes from run to run; the
  // generated code (and the native cache key) must not.
  // Signs move outward, so that -k*(b-a) and k*(a-b) (GiNaC picks either, run to run)
  // become the same DAG. All exact in IEEE arithmetic: -(-x) = x, (-x)*y = -(x*y),
  // x/(-y) = -(x/y).
  auto negated = [&](int id) { return !nodes_[id].leaf && nodes_[id].op == Op::kNeg; };
  auto negative_const = [&](int id) { return IsConst(id) && std::signbit(plan_.constants[nodes_[id].cur.index]); };
  if (op == Op::kNeg && negated(a)) return nodes_[a].a;
  if (op == Op::kMul || op == Op::kDiv) {
    for (int* x : {&a, &b}) {
      if (negated(*x)) {
        *x = nodes_[*x].a;
        return Make(Op::kNeg, Make(op, a, b));
      }
      if (negative_const(*x)) {
        *x = Const(-plan_.constants[nodes_[*x].cur.index]);
        return Make(Op::kNeg, Make(op, a, b));
      }
    }
  }
  const uint64_t ka = nodes_[a].key, kb = b >= 0 ? nodes_[b].key : 0;
  if ((op == Op::kAdd || op == Op::kMul || op == Op::kMin || op == Op::kMax) && (ka > kb || (ka == kb && a > b))) {
    std::swap(a, b);
  }
  constexpr int kMaxNodes = (1 << 28) - 2;
  if (a > kMaxNodes || b > kMaxNodes) ThrowAt({}, "", "the program is too large to compile (over 2^28 operations)");
  const uint64_t key = (uint64_t(op) << 56) | (uint64_t(a) << 28) | uint64_t(b + 1);
  auto [it, fresh] = op_nodes_.emplace(key, static_cast<int>(nodes_.size()));
  if (fresh) {
    Node nd;
    nd.op = op;
    nd.a = a;
    nd.b = b;
    nd.key = Mix(Mix(Mix(0x0b, uint64_t(op)), nodes_[a].key), b >= 0 ? nodes_[b].key : 0);
    nodes_.push_back(nd);
  }
  return it->second;
}

int Lowerer::Translate(const ex& e) {
  if (auto it = memo_.find(e); it != memo_.end()) return it->second;
  int id;
  if (is_a<numeric>(e)) {
    id = Const(RealValue(ex_to<numeric>(e)));
  } else if (is_a<GiNaC::symbol>(e)) {
    auto it = slot_of_symbol_.find(e);
    if (it == slot_of_symbol_.end())
      ThrowAt({}, "", fmt::format("{} reads symbol '{}', which has no slot", context_, Print(e)), "", "",
              "every symbol an expression reads must be listed in Program::symbols");
    id = SlotLeaf(it->second);
  } else if (is_a<GiNaC::constant>(e)) {
    const ex v = GiNaC::evalf(e);
    if (!is_a<numeric>(v))
      ThrowAt({}, "", fmt::format("{} contains the constant {} with no numeric value", context_, Print(e)));
    id = Const(RealValue(ex_to<numeric>(v)));
  } else if (is_a<GiNaC::add>(e)) {
    id = TranslateAdd(e);
  } else if (is_a<GiNaC::mul>(e)) {
    id = TranslateMul(e);
  } else if (is_a<GiNaC::power>(e)) {
    const ex& x = e.op(1);
    const int base = TranslateFactor(e.op(0));
    id = is_a<numeric>(x) ? NumericPower(base, ex_to<numeric>(x)) : Make(Op::kPow, base, Translate(x));
  } else if (is_a<GiNaC::function>(e)) {
    id = TranslateFunction(e);
  } else {
    ThrowAt({}, "",
            fmt::format("{} contains an expression of unsupported kind '{}': {}", context_,
                        ex_to<GiNaC::basic>(e).class_name(), Print(e)),
            "", "", "compiled expressions may use + - * / ^, numbers, slot symbols and elementary functions");
  }
  memo_.emplace(e, id);
  return id;
}

bool IsNegativeReal(const ex& e) {
  return is_a<numeric>(e) && ex_to<numeric>(e).is_real() && ex_to<numeric>(e).is_negative();
}

// A factor of a product or the base of a power. GiNaC normalizes the sign of such
// sums by its term order, which changes from run to run (k*(a-b) one run, -k*(b-a)
// the next; (d-a)^3 or -(a-d)^3), so they are built in a canonical orientation and
// Make moves the sign out of products. The value is the same either way.
int Lowerer::TranslateFactor(const ex& f) {
  if (!is_a<GiNaC::add>(f)) return Translate(f);
  if (auto it = oriented_memo_.find(f); it != oriented_memo_.end()) return it->second;
  const int id = TranslateAdd(f, /*orient=*/true);
  oriented_memo_.emplace(f, id);
  return id;
}

int Lowerer::TranslateAdd(const ex& e, bool orient) {
  // Terms with a negative coefficient become subtractions (x - 2*y, not x + (-2)*y).
  std::vector<std::pair<int, bool>> terms;
  for (size_t i = 0; i < e.nops(); ++i) {
    const ex t = e.op(i);
    bool neg = IsNegativeReal(t) || (is_a<GiNaC::mul>(t) && IsNegativeReal(t.op(t.nops() - 1)));
    const int id = StripNeg(Translate(neg ? ex(-t) : t), &neg);
    terms.emplace_back(id, neg);
  }
  // A deterministic order (GiNaC's changes from run to run, see Make), constant terms
  // (exp(1), Pi/2, ...) first so that they fold into one.
  SortByKey(terms);
  // With `orient`, a deterministic sign too: the first non-constant term is positive,
  // so a-b and -(b-a) give the same DAG (-(a-b) when GiNaC wrote b-a).
  bool negate = false;
  if (orient) {
    auto lead = std::find_if(terms.begin(), terms.end(), [&](const auto& t) { return !IsConst(t.first); });
    negate = lead != terms.end() && lead->second;
  }
  if (negate)
    for (auto& t : terms) t.second = !t.second;
  size_t start = 0;  // accumulate from the first positive term (saves a negation)
  while (start < terms.size() && terms[start].second) ++start;
  int acc;
  if (start == terms.size()) {
    start = 0;
    acc = Make(Op::kNeg, terms[0].first);
  } else {
    acc = terms[start].first;
  }
  for (size_t i = 0; i < terms.size(); ++i)
    if (i != start) acc = Make(terms[i].second ? Op::kSub : Op::kAdd, acc, terms[i].first);
  return negate ? Make(Op::kNeg, acc) : acc;
}

int Lowerer::Product(const std::vector<int>& factors) {
  // Deterministic, constants first (they fold). Sorted without their signs: a factor
  // that is a sum comes negated or not depending on the orientation GiNaC gave it
  // (TranslateFactor), and a negation's key must not decide where it goes in the
  // product, or k*(a-b)*x and -k*(b-a)*x associate differently. The sign goes
  // outside, as Make would move it (exact: (-x)*y = -(x*y)).
  bool negate = false;
  std::vector<std::pair<int, bool>> sorted;
  for (int f : factors) sorted.emplace_back(StripNeg(f, &negate), false);
  SortByKey(sorted);
  int acc = -1;
  for (const auto& f : sorted) acc = acc < 0 ? f.first : Make(Op::kMul, acc, f.first);
  return negate && acc >= 0 ? Make(Op::kNeg, acc) : acc;
}

int Lowerer::TranslateMul(const ex& e) {
  // Factors with negative exponents go to a single denominator: x*y^-1*z^-2 = x/(y*z*z).
  numeric coeff(1);
  std::vector<int> num, den;
  for (size_t i = 0; i < e.nops(); ++i) {
    const ex f = e.op(i);
    if (is_a<numeric>(f)) {
      coeff = coeff * ex_to<numeric>(f);
      continue;
    }
    if (is_a<GiNaC::power>(f) && IsNegativeReal(f.op(1))) {
      den.push_back(NumericPower(TranslateFactor(f.op(0)), -ex_to<numeric>(f.op(1))));
      continue;
    }
    num.push_back(TranslateFactor(f));
  }
  double p = RealValue(coeff), q = 1;
  if (coeff.is_rational() && !coeff.is_integer()) {
    // x/3 rather than x*0.333..: the division is correctly rounded.
    const double pn = coeff.numer().to_double(), qd = coeff.denom().to_double();
    if (std::abs(pn) < 9007199254740992.0 && qd < 9007199254740992.0) {
      p = pn;
      q = qd;
    }
  }
  int top = Product(num);
  bool negate = false;
  if (top < 0)
    top = Const(p);
  else if (p == -1)
    negate = true;
  else if (p != 1)
    top = Make(Op::kMul, Const(p), top);
  int bottom = Product(den);
  if (q != 1) bottom = bottom < 0 ? Const(q) : Make(Op::kMul, Const(q), bottom);
  if (bottom >= 0) top = Make(Op::kDiv, top, bottom);
  return negate ? Make(Op::kNeg, top) : top;
}

int Lowerer::IntPower(int base, long n) {
  // Binary powering: x^2 = x*x, x^3 = x*(x*x), x^4 = (x*x)*(x*x), ...
  int result = -1, p = base;
  while (n > 0) {
    if (n & 1) result = result < 0 ? p : Make(Op::kMul, result, p);
    n >>= 1;
    if (n > 0) p = Make(Op::kMul, p, p);
  }
  return result;
}

int Lowerer::NumericPower(int base, const numeric& e) {
  const double d = RealValue(e);
  if (e.is_integer() && std::abs(d) <= 64) {
    const long k = e.to_long();
    if (k == 0) return Const(1);
    return k > 0 ? IntPower(base, k) : Make(Op::kDiv, Const(1), IntPower(base, -k));
  }
  const numeric twice = e * 2;
  if (twice.is_integer() && std::abs(d) <= 32) {
    // Half-integer: x^(k+1/2) = x^k * sqrt(x).
    const long m = twice.to_long();
    const long k = (std::abs(m) - 1) / 2;
    int v = Make(Op::kSqrt, base);
    if (k > 0) v = Make(Op::kMul, IntPower(base, k), v);
    return m > 0 ? v : Make(Op::kDiv, Const(1), v);
  }
  return Make(Op::kPow, base, Const(d));
}

int Lowerer::TranslateFunction(const ex& e) {
  const std::string name = ex_to<GiNaC::function>(e).get_name();
  if (name == "pn_select" && e.nops() == 3) {  // a mode's conditional (paynter/conditionals.h)
    const int m = Translate(e.op(0));
    const int a = Translate(e.op(1));
    const int b = Translate(e.op(2));
    return Make(Op::kAdd, Make(Op::kSelA, m, a), Make(Op::kSelB, m, b));
  }
  if (name == "pn_if")
    ThrowAt({}, "", fmt::format("{} holds a condition that was not given a mode: {}", context_, Print(e)), "", "",
            "conditions are compiled only through the equation builder, which turns each into a mode and an event");
  for (const FunctionOp& f : kFunctions) {
    if (name != f.name) continue;
    if (e.nops() != f.arity)
      ThrowAt({}, "", fmt::format("{} calls {} with {} arguments, expected {}", context_, name, e.nops(), f.arity));
    const int a = Translate(e.op(0));
    const int b = f.arity == 2 ? Translate(e.op(1)) : -1;
    return Make(f.op, a, b);
  }
  std::string supported;
  for (const FunctionOp& f : kFunctions) supported += std::string(supported.empty() ? "" : ", ") + f.name;
  ThrowAt({}, "", fmt::format("{} uses the function '{}', which the code generator does not support", context_, name),
          "", "", "supported functions: " + supported);
}

}  // namespace

Plan Lower(const Program& program) { return Lowerer(program).Lower(); }

}  // namespace paynter::codegen
