// paynter/codegen.h — compiles a Program into a fast evaluator.
//
// The symbolic expressions are compiled once. Two backends share one interface:
//  - kTape: a flat register-machine instruction tape with common subexpressions
//    shared; no symbolic tree is walked at evaluation time.
//  - kNative: C source generated from the expressions, compiled by the system C
//    compiler into a shared object and loaded with dlopen (cached by content hash).
// kAuto uses native code when a C compiler is found and falls back to the tape.
// kTiered (CompileAll) starts on the tape while the native code compiles in the
// background, and switches to it when it is ready (both give the same bits).
// Blocks are solved by Newton's method with the compiled Jacobian and a dense LU
// (one step when linear); failure to converge throws paynter::Error with the label.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "paynter/program.h"

namespace paynter {

enum class Backend { kAuto, kTape, kNative, kTiered };

struct CodegenOptions {
  Backend backend = Backend::kAuto;
  double newton_tol = 1e-12;  // on the scaled residual/step
  int newton_max_iter = 50;
  // Native objects; empty = $XDG_CACHE_HOME/paynter, else ~/.cache/paynter. Used only
  // if it is the user's own and not writable by group or others (created 0700);
  // otherwise the code is compiled in a private temporary directory, uncached.
  std::string cache_dir;
  // Implicit blocks: kAuto solves a block of at least kSparseMinSize unknowns whose
  // Jacobian has at most kSparseMaxDensity of its entries structurally non-zero by
  // a sparse LU (KLU), the others by a dense LU; kDense and kSparse force one.
  enum class BlockSolve { kAuto, kDense, kSparse };
  BlockSolve block_solve = BlockSolve::kAuto;
  static constexpr int kSparseMinSize = 24;
  static constexpr double kSparseMaxDensity = 0.25;
  // kTiered, for tests: at its run number `tiered_wait_after` (from 0) on the
  // tape a program waits for its native code and switches there; < 0: it
  // switches at the first run after the code is ready, never waiting.
  long tiered_wait_after = -1;
};

// The directory paynter's caches live in: `configured` if given, else
// $XDG_CACHE_HOME/paynter, else ~/.cache/paynter; created 0700 if absent, and
// used only if it is a directory of the user's own that nobody else may write.
// Empty when none qualifies; `why` then says why for each candidate.
std::string PrivateCacheDir(const std::string& configured, std::string* why);

// GiNaC's expressions share reference-counted parts without atomic counts, so
// only one thread at a time may work on expressions: building or preparing a
// model, copying or destroying compiled programs that keep expressions for
// messages, and formatting such a message when a run fails. Code that does so
// while other threads run models (a sweep) holds this lock.
std::recursive_mutex& SymbolicMutex();

// The per-run part of a compiled program: its scratch registers, the state of
// its blocks' Newton solvers (starting points, factorizations, pivots, which
// carry over from one Run to the next) and, for a tiered program, where the run
// stands on the tiers. Made by CompiledProgram::NewWorkspace for that program
// (which must outlive it); one thread at a time may use it.
class ProgramWorkspace {
 public:
  virtual ~ProgramWorkspace() = default;
};

// Constant once made: code, layout and the data the code reads. Any number of
// threads may run one CompiledProgram at once, each with a workspace of its own.
class CompiledProgram {
 public:
  virtual ~CompiledProgram() = default;
  // A workspace for Run, as a new run starts: the same workspace state whenever
  // it is made, so that runs on fresh workspaces give the same bits.
  virtual std::unique_ptr<ProgramWorkspace> NewWorkspace() const = 0;
  // Runs all steps in order on slots (size = number of slots), with `ws` (this
  // program's). Slots read by the program but not written (time, parameters,
  // states) must be set by the caller. Block unknown slots are used as the
  // Newton starting guess.
  virtual void Run(double* slots, ProgramWorkspace& ws) const = 0;
  virtual int num_slots() const = 0;
  virtual std::string backend_name() const = 0;  // "tape" or "native"
  // Why kAuto did not use native code (no C compiler, compilation failed); empty
  // when the requested backend is the one running. (Added by codegen; not pure, so
  // other implementations need not override it.)
  virtual std::string fallback_reason() const { return {}; }
  // Why native code was not cached (no safe cache directory, a cached object not
  // safe to load); empty otherwise, and for the tape.
  virtual std::string cache_note() const { return {}; }

  // A tiered program's runs with a workspace on the tape and in native code,
  // and the workspace's switch: the value of slot 0 (time) at its first native
  // run and the seconds from the start of the compile to it. Zeros for the
  // other backends.
  struct Tiers {
    long tape_runs = 0, native_runs = 0;
    bool switched = false;
    double switch_slot0 = 0, switch_seconds = 0;
  };
  virtual Tiers tiers(const ProgramWorkspace& ws) const {
    (void)ws;
    return {};
  }
};

std::unique_ptr<CompiledProgram> Compile(const Program& program, const CodegenOptions& options = {});

// A Program lowered for the backends (src/codegen/plan.h): Compile is LowerProgram,
// then Compile of the result. Holds no symbolic work to redo: the GiNaC expressions
// are kept only for error messages, and a lowered program read back keeps their
// text, parsed only when a message needs them. The stage cache stores it.
struct LoweredProgram;
// Throws Error as Compile does for a program that cannot be compiled.
std::shared_ptr<const LoweredProgram> LowerProgram(const Program& program);
std::unique_ptr<CompiledProgram> Compile(const LoweredProgram& program, const CodegenOptions& options = {});
// The programs of one model compiled together: with kTiered, the units of all
// of them whose native code is not cached are compiled at once in the
// background (one compiler per CPU; the build goes on, and lands in the cache,
// should the caller end first) while each program runs on the tape, switching
// to native code between two runs once its object is built; a model whose
// objects are all cached gets native programs straight away, and without a C
// compiler, a build that fails or no private cache directory it falls back as
// kAuto does (the tape, or native code compiled before returning). The other
// backends compile each program as Compile does (native ones together).
std::vector<std::unique_ptr<CompiledProgram>> CompileAll(const std::vector<const LoweredProgram*>& programs,
                                                         const CodegenOptions& options = {});
int NumSlots(const LoweredProgram& program);  // the size of the slot array Run works on
// Implicit blocks (solved by Newton's method, whose start and factorizations
// carry over from one call to the next).
int NumBlocks(const LoweredProgram& program);
// The C code native code compiles for a lowered program, as `paynter equations
// --emit-c` prints it.
std::string GeneratedC(const LoweredProgram& program);
// A lowered program as bytes (for this build of paynter only), appended to `out`.
void WriteLoweredProgram(const LoweredProgram& program, std::string* out);
// Reads one from the front of `in` and advances it; null (and `in` unchanged) when
// the bytes are not a valid lowered program, whatever they are.
std::shared_ptr<const LoweredProgram> ReadLoweredProgram(std::string_view* in);

}  // namespace paynter
