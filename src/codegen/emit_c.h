// codegen/emit_c.h — the lowered plan (plan.h) printed as C99, for the native
// backend (native.h) and the FMU export (paynter/c_source.h).
//
// No generated function exceeds NativeTuning::max_function_ops operations: straight
// code is cut into a run of functions, and so are a block's residual and Jacobian
// code (the solver calls the pieces in order). All work on the caller's slot array
// `s`; values shared between functions go through a scratch array `w`. The
// functions are grouped into translation units of about NativeTuning::unit_ops
// operations, in program order. Nothing of the model's text (names, labels)
// reaches the source. The arithmetic is the tape's (tape.cc), operation for
// operation, so both backends compute the same bits.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "plan.h"

namespace paynter::codegen {

// How the C source is cut up and built (defaults for production; tests shrink them).
struct NativeTuning {
  size_t max_function_ops = 200;   // operations per generated function, at most
  size_t unit_ops = 8000;          // operations per translation unit (a larger function gets one alone)
  int jobs = 0;                    // compiler processes at once; 0 = one per online CPU
  std::string flags;               // optimization flags; empty = chosen by the program's size
  std::string prefix = "pn_";      // of the generated functions' names (two programs in one object differ by it)
  // Each parameter a function does not read marked `(void)p;`, so that the unit compiles with
  // -Wunused-parameter (the FMU's C, ProgramCSource). Off for native code: its text, and so the
  // cache's keys, stay as they are.
  bool mark_unused = false;
};

// The C source of a plan, all units one after another (deterministic; exposed for
// tests and debugging).
std::string GenerateC(const Plan& plan, const NativeTuning& tuning = {});

// The C source of a plan as a single translation unit, with the names of the
// functions that run it, for code that calls them itself (the FMU export,
// through paynter/c_source.h's ProgramCSource): group g's straight code is group_fns[g] called in order (each
// returns nonzero when a slot it wrote is NaN or Inf); block b's residual
// r(s, w, r) and Jacobian (its structural non-zeros, BlockPlan::jacobian_nz
// order) are residual_fns[b] and jacobian_fns[b] in order, the Jacobian's
// right after the residual's at the same point. `w` holds num_w doubles.
struct CSource {
  std::string text;
  std::vector<std::vector<std::string>> group_fns, residual_fns, jacobian_fns;
  int num_w = 0;
  size_t num_ops = 0;
};
CSource GenerateCSource(const Plan& plan, const NativeTuning& tuning = {});

// The C source of a plan cut into translation units (each starts with the
// prelude of helper functions), and the names of the functions that run it.
struct CUnits {
  std::vector<std::string> units;
  // Per group: the functions running its straight code, in order, each with the
  // count of Plan::written entries produced once it has run.
  std::vector<std::vector<std::pair<std::string, int>>> chunks;
  std::vector<std::vector<std::string>> residual_fns, jacobian_fns;  // per block, in call order
  int num_w = 0;                                                     // doubles of the scratch array w
  size_t max_function_ops = 0, num_ops = 0;  // of the largest function, of all of them
};
CUnits WriteCUnits(const Plan& plan, const NativeTuning& tuning);

}  // namespace paynter::codegen
