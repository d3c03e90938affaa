// paynter/c_source.h — a lowered program's C99 source for code that calls its
// functions itself (the FMU export, src/fmi/), and the C compiler native code
// uses. The code is what native code compiles (docs/architecture.md, codegen):
// every function works on the caller's slot array `s` and a scratch array `w`.
#pragma once

#include <string>
#include <vector>

namespace paynter {

struct LoweredProgram;

// One translation unit. The program runs its groups in order: group g calls
// groups[g].fns in order (each `int f(double* s, double* w)` returns nonzero
// when a slot it wrote is NaN or Inf), then, when groups[g].block >= 0, solves
// that implicit block. Block b's residual `void f(double* s, double* w,
// double* r)` is blocks[b].residual_fns called in order, its Jacobian's
// structural non-zeros (column-major positions jacobian_nz in an n x n
// matrix, n = unknowns.size()) blocks[b].jacobian_fns, each right after the
// residual's at the same point. `w` holds num_w doubles; the program reads and
// writes num_slots slots. A function marks the parameters it does not read
// `(void)p;`: the unit compiles with -Wall -Wextra -Werror.
struct CSource {
  struct Group {
    std::vector<std::string> fns;
    int block = -1;
  };
  struct Block {
    std::vector<int> unknowns;     // slots
    std::vector<int> jacobian_nz;  // column-major positions
    bool linear = false;
    std::vector<std::string> residual_fns, jacobian_fns;
  };
  std::string text;
  std::vector<Group> groups;
  std::vector<Block> blocks;
  int num_slots = 0, num_w = 0;
  size_t num_ops = 0;
};

// The C source of `program`, its functions' names starting with `prefix`
// (two programs in one object need two prefixes).
CSource ProgramCSource(const LoweredProgram& program, const std::string& prefix);

// The system C compiler as native code finds it ($CC, else clang, cc, gcc);
// throws paynter::Error when there is none.
std::string FindCCompiler();
// Optimization and exactness flags native code uses for a program of `ops` operations.
std::string NativeCompileFlags(size_t ops);

}  // namespace paynter
