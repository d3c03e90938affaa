// paynter/program.h — the evaluation program handed from the equation builder to codegen.
//
// A model's right-hand side (and its outputs) is a straight-line program over one
// flat array of double "slots": time, parameters, states, state derivatives and
// every intermediate variable each have a slot. The program is a sequence of steps:
//   - Assign: slot := expression of other slots;
//   - Block: a set of unknown slots u solving residuals r(u; other slots) = 0
//     simultaneously (an algebraic loop, or state derivatives coupled through
//     storage elements in derivative causality). The Jacobian dr/du is given
//     symbolically; when `linear` is set, r is affine in u and one Newton step
//     from any point is the exact solution.
// Expressions are GiNaC expressions in the symbols of `symbols` (symbol i lives in slot i).
#pragma once

#include <ginac/ginac.h>

#include <string>
#include <vector>

namespace paynter {

struct ProgramStep {
  enum class Kind { kAssign, kBlock };
  Kind kind = Kind::kAssign;
  // kAssign: slots[target] = value
  int target = -1;
  GiNaC::ex value;
  // kBlock: unknowns (slot indices), residuals r_i (same count), jacobian row-major
  // d r_i / d u_j (size n*n).
  std::vector<int> unknowns;
  std::vector<GiNaC::ex> residuals;
  std::vector<GiNaC::ex> jacobian;
  bool linear = false;
  std::string label;  // for error messages: e.g. "algebraic loop at 1-junction J1"
};

struct Program {
  std::vector<GiNaC::symbol> symbols;  // symbol i <-> slot i
  std::vector<std::string> slot_names; // human-readable name of slot i
  std::vector<ProgramStep> steps;
};

}  // namespace paynter
