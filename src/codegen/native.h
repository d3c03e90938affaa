// codegen/native.h — the native backend: the lowered plan (tape.h) printed as C99,
// compiled by the system C compiler into a shared object and loaded with dlopen.
//
// No generated function exceeds NativeTuning::max_function_ops operations: straight
// code is cut into a run of functions, and so are a block's residual and Jacobian
// code (the solver calls the pieces in order). All work on the caller's slot array
// `s`; values shared between functions go through a scratch array `w`. The
// functions are grouped into translation units in program order; a single unit is
// compiled straight into the shared object, several are compiled in parallel into
// object files, each cached by a hash of its own source and the compiler command,
// and linked. Files are cached in a directory of the user's own that nobody else may
// write; an object is loaded or linked only if it too is the user's and nobody
// else's to write. Without such a directory the code is built in a private
// directory of the run and not cached (cache_note() says why).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "plan.h"

namespace paynter::codegen {

// How the C source is cut up (defaults for production; tests shrink them).
struct NativeTuning {
  size_t max_function_ops = 200;   // operations per generated function, at most
  size_t unit_ops = 8000;          // operations per translation unit (a larger function gets one alone)
  int jobs = 0;                    // compiler processes at once; 0 = one per online CPU
  std::string flags;               // optimization flags; empty = chosen by the program's size
  std::string prefix = "pn_";      // of the generated functions' names (two programs in one object differ by it)
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

// FindCCompiler and NativeCompileFlags: paynter/c_source.h.

class NewtonSolver;
class RuntimeChecks;

// A plan's C source cut into units, the names of its functions, where its
// shared object is cached, and the object itself when the cache had it
// (loaded: `handle`). Made by NativeProgram::Prepare.
struct NativeSource {
  NativeSource() = default;
  NativeSource(const NativeSource&) = delete;
  NativeSource& operator=(const NativeSource&) = delete;
  ~NativeSource();  // unloads `handle` if no program took it
  std::vector<std::string> units;
  std::vector<uint64_t> unit_keys;
  std::vector<std::vector<std::pair<std::string, int>>> chunks;  // per group: function, Plan::written entries after it
  std::vector<std::vector<std::string>> residual_fns, jacobian_fns;  // per block
  int num_w = 0;
  size_t max_function_ops = 0, num_ops = 0;
  std::string compiler, flags, cache_note;
  std::string dir;      // the cache directory, or a private directory of this run
  bool cached = true;   // `dir` is the cache (else it is removed once the object is loaded)
  std::string so_path;
  void* handle = nullptr;
  bool cache_hit = false;  // `handle` came from the cache
  std::vector<int> todo;  // the units a build compiles (all of them when the directory is private)
};

// A build of the shared objects that sources lack, done by a process of its
// own, detached from the caller's (its own session; its standard streams are
// /dev/null; it holds no descriptor of the caller's but the pipe it reports
// on): the units of all sources are compiled in parallel (one compiler per
// CPU), each source's objects linked as soon as its units are done. Compilers
// and the linker are started by posix_spawn with an argument vector (no
// shell; the arguments are the compiler, flags and paths of the cache: no
// text of a model); every file is written under a temporary name and renamed
// into place, so neither a concurrent run nor one that finds the build half
// done ever sees a partial file. The caller need not wait: when it ends
// first, the build goes on and installs the objects for the next run.
class NativeBuild {
 public:
  // Starts building sources[i] (each one with a shared object to make: not
  // loaded from the cache). Throws paynter::Error when no process can be started.
  static std::shared_ptr<NativeBuild> Start(const std::vector<const NativeSource*>& sources, int jobs);
  // One compiler or linker run: argv (argv0 = the program's path), its output
  // under a temporary name and in place, its C source likewise (empty for a
  // link), its messages, and the jobs it needs first.
  struct JobSpec {
    std::vector<std::string> args;
    const char* argv0 = nullptr;
    std::string tmp_out, out, tmp_c, c_path, failed_c, log, failed_log;
    int source = 0;
    bool last = false;  // installs the source's shared object
    std::vector<int> deps;
  };
  ~NativeBuild();
  enum class State { kRunning, kDone, kFailed };
  State Poll(int i);  // source i's state now (never blocks)
  State Wait(int i);  // blocks until source i is built or has failed
  // Why source i failed (the compiler's command and output), and a hint.
  const std::string& failure(int i) const { return failure_[i]; }
  const std::string& failure_hint(int i) const { return hint_[i]; }
  double seconds() const;  // since Start

 private:
  NativeBuild() = default;
  void Read(bool block);  // takes the build process's reports (under mu_)
  std::vector<JobSpec> jobs_;
  std::vector<State> state_;
  std::vector<std::string> failure_, hint_;
  int fd_ = -1;
  double start_ = 0;
  std::mutex mu_;
};

class NativeProgram final : public CompiledProgram {
 public:
  // Compiles (or loads from the cache) the plan's C code. Throws paynter::Error when
  // no C compiler is found or it fails, leaving `plan` untouched; on success the plan
  // is moved into the program.
  static std::unique_ptr<NativeProgram> Create(Plan& plan, const CodegenOptions& options,
                                               const NativeTuning& tuning = {});
  // The steps of Create: the C source and the cached object if there is one
  // (throws when no C compiler is found); a build of the source when there is
  // none (NativeBuild); then the program on the loaded object, taking `plan`
  // (throws, leaving `plan` untouched, when the object cannot be loaded).
  static std::unique_ptr<NativeSource> Prepare(const Plan& plan, const CodegenOptions& options,
                                               const NativeTuning& tuning = {});
  static std::unique_ptr<NativeProgram> Load(NativeSource& source, Plan& plan, const CodegenOptions& options);
  ~NativeProgram() override;

  std::unique_ptr<ProgramWorkspace> NewWorkspace() const override;
  void Run(double* slots, ProgramWorkspace& ws) const override;
  int num_slots() const override { return plan_.num_slots; }
  std::string backend_name() const override { return "native"; }

  std::string cache_note() const override { return cache_note_; }
  bool cache_hit() const { return cache_hit_; }  // the shared object was already in the cache
  const std::string& library_path() const { return library_path_; }
  const std::string& compiler() const { return compiler_; }
  int num_units() const { return num_units_; }  // translation units of the source
  // The units compiled by this call (indices; empty on a cache hit of the shared object).
  const std::vector<int>& compiled_units() const { return compiled_units_; }
  size_t max_function_ops() const { return max_function_ops_; }  // of the largest generated function
  size_t num_ops() const { return num_ops_; }                    // of all generated functions
  const std::string& flags() const { return flags_; }            // the compiler's optimization flags

 private:
  NativeProgram() = default;
  friend class NativeWorkspace;
  using GroupFn = int (*)(double*, double*);  // nonzero: a written slot is NaN/Inf
  using BlockFn = void (*)(double*, double*, double*);
  struct NativeBlock {  // a block's residual and Jacobian functions, called in order
    std::vector<BlockFn> res, jac;
  };

  Plan plan_;
  CodegenOptions options_;  // the blocks' Newton settings
  void* handle_ = nullptr;
  bool cache_hit_ = false;
  std::string library_path_, compiler_, cache_note_;
  int num_units_ = 0;
  std::vector<int> compiled_units_;
  size_t max_function_ops_ = 0, num_ops_ = 0;
  std::string flags_;
  struct Stage {  // one function of straight code, or one block
    GroupFn straight;
    int block;  // -1 for straight code
    int written_end;  // Plan::written entries produced by the end of `straight`
  };
  std::vector<Stage> stages_;
  std::vector<NativeBlock> blocks_;
  std::unique_ptr<RuntimeChecks> checks_;
  int num_w_ = 1;  // of the scratch array `w` (a workspace's)
};

// A native program's workspace: the scratch array its functions share values
// through, and its blocks' Newton solvers.
class NativeWorkspace final : public ProgramWorkspace {
 public:
  explicit NativeWorkspace(const NativeProgram& program);
  ~NativeWorkspace() override;
  // Block b's Newton solver (its start, factorization and pivots carry over
  // from run to run).
  NewtonSolver& solver(int b);

 private:
  friend class NativeProgram;
  struct Block;
  std::vector<double> w_;
  std::vector<std::unique_ptr<Block>> blocks_;
};

}  // namespace paynter::codegen
