// codegen/plan.h — the lowered form of a Program, shared by both backends: the
// tape (tape.h) interprets it, the native backend (native.h) prints it as C.
//
// Lower() turns the GiNaC expressions of a Program into a DAG of scalar operations,
// hash-consed over the whole program (a subexpression shared by two assignments, or
// by a residual and its Jacobian, is computed once), and schedules it into sections:
//   group k = straight-line code, then optionally block k (residual code + Jacobian code).
// The straight code before a block also computes the block's loop-invariant parts
// (subexpressions not depending on the unknowns), so Newton iterations only redo
// what changes. The tape backend maps values to registers; the native backend
// prints the same sections as C (emit_c.h), so both compute bit-identical results.
// Lower() is in lower.cc.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "diagnostic_expr.h"
#include "paynter/codegen.h"
#include "paynter/program.h"

namespace paynter::codegen {

enum class Op : uint8_t {
  // binary
  kAdd, kSub, kMul, kDiv, kPow, kAtan2, kMin, kMax,
  // the two halves of a mode's selection (pn_select(m, a, b) = SelA(m, a) + SelB(m, b))
  kSelA, kSelB,
  // unary
  kNeg, kSqrt, kSin, kCos, kTan, kExp, kLog, kAbs, kAsin, kAcos, kAtan,
  kSinh, kCosh, kTanh, kAsinh, kAcosh, kAtanh, kStep, kSign,
  kCopy,  // out = a: stores an already computed value into an assigned slot
};
inline bool IsBinary(Op op) { return op <= Op::kSelB; }

// Shared formulas for the ops without a C library function; emit_c.cc prints the
// same definitions into the generated C (keep them in sync) so that both backends
// agree bit for bit. NaN inputs propagate.
inline double PnStep(double x) { return x > 0 ? 1.0 : (x < 0 ? 0.0 : (x == 0 ? 0.5 : x)); }
inline double PnSign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : x); }
inline double PnMin(double a, double b) { return a < b ? a : (b <= a ? b : a + b); }
inline double PnMax(double a, double b) { return a > b ? a : (b >= a ? b : a + b); }
// A conditional of a mode m (a slot the event handling sets to 0 or 1):
// m > 0.5 selects a, else b; the other half is 0, so the sum is the selected
// value exactly, and a NaN in the branch not taken does not leak.
inline double PnSelA(double m, double a) { return m > 0.5 ? a : 0.0; }
inline double PnSelB(double m, double b) { return m > 0.5 ? 0.0 : b; }

// Every op's semantics, in Op order: the one definition behind the tape interpreter
// (both dispatch variants, tape.cc) and constant folding (lower.cc).
#define PAYNTER_TAPE_OPS(X)                                                                \
  X(Add, a + b) X(Sub, a - b) X(Mul, a * b) X(Div, a / b) X(Pow, std::pow(a, b))           \
  X(Atan2, std::atan2(a, b)) X(Min, PnMin(a, b)) X(Max, PnMax(a, b))                       \
  X(SelA, PnSelA(a, b)) X(SelB, PnSelB(a, b)) X(Neg, -a)                                    \
  X(Sqrt, std::sqrt(a)) X(Sin, std::sin(a)) X(Cos, std::cos(a)) X(Tan, std::tan(a))         \
  X(Exp, std::exp(a)) X(Log, std::log(a)) X(Abs, std::fabs(a)) X(Asin, std::asin(a))        \
  X(Acos, std::acos(a)) X(Atan, std::atan(a)) X(Sinh, std::sinh(a)) X(Cosh, std::cosh(a))   \
  X(Tanh, std::tanh(a)) X(Asinh, std::asinh(a)) X(Acosh, std::acosh(a))                     \
  X(Atanh, std::atanh(a)) X(Step, PnStep(a)) X(Sign, PnSign(a)) X(Copy, a)

namespace internal {
constexpr Op kOpOrder[] = {
#define PN_OP(name, expr) Op::k##name,
    PAYNTER_TAPE_OPS(PN_OP)
#undef PN_OP
};
constexpr bool OpTableMatchesEnum() {
  for (size_t i = 0; i < std::size(kOpOrder); ++i)
    if (static_cast<size_t>(kOpOrder[i]) != i) return false;
  return std::size(kOpOrder) == static_cast<size_t>(Op::kCopy) + 1;
}
static_assert(OpTableMatchesEnum(), "PAYNTER_TAPE_OPS must list every Op in enum order");
}  // namespace internal

// Where a value lives: a program slot, a constant of Plan::constants, or a temporary.
struct Ref {
  enum class Kind : uint8_t { kSlot, kConst, kTemp };
  Kind kind = Kind::kSlot;
  int index = 0;
  bool operator==(const Ref&) const = default;
};

struct Instr {
  Op op;
  Ref a, b;  // b unused for unary ops and kCopy
  Ref out;   // kSlot (the assignment target) or kTemp
};

struct Section {
  std::vector<Instr> code;
};

// The plan's structs are stored by the stage cache: a new field needs its line in
// plan_io.h's Fields (and, for an index, a check in ValidPlan).
struct BlockPlan {
  std::string label;
  std::vector<int> unknowns;  // slots
  bool linear = false;
  Section residual;           // computes what depends on the unknowns
  Section jacobian;           // runs right after `residual` at the same point, may reuse its temps
  std::vector<Ref> residual_out;  // r_i
  // The structurally non-zero Jacobian entries (those not identically zero), as
  // column-major positions i + j*n in increasing order (so column by column: the
  // compressed-column pattern), and the value of each: jacobian_out[k] =
  // d r_i / d u_j at jacobian_nz[k] = i + j*n. The other entries are zero.
  std::vector<int> jacobian_nz;
  std::vector<Ref> jacobian_out;
  std::vector<int> unmatched;     // positions of unknowns a structural (zero-pattern) matching leaves out
  std::vector<DiagnosticExpr> residual_exprs;  // for diagnostics
  int written_before = 0;         // entries of Plan::written produced by earlier steps
};

struct Group {
  Section straight;
  int block = -1;        // index into Plan::blocks solved after `straight`, or -1
  int written_end = 0;   // entries of Plan::written produced up to the end of `straight`
};

// A slot written by the program, in step order (for NaN/Inf diagnostics).
struct WrittenSlot {
  int slot = 0;
  int block = -1;         // -1 for an assignment
  DiagnosticExpr expr;    // the assigned expression (assignments only)
};

struct Plan {
  int num_slots = 0;
  int num_temps = 0;
  std::vector<double> constants;
  std::vector<Group> groups;
  std::vector<BlockPlan> blocks;
  std::vector<WrittenSlot> written;
  std::vector<std::string> slot_names;
  std::vector<DiagnosticExpr> symbols;  // symbol i <-> slot i (for diagnostics)
};

// Throws paynter::Error for expressions that cannot be compiled (unsupported
// function, complex constant, symbol without a slot, malformed block).
Plan Lower(const Program& program);

}  // namespace paynter::codegen
