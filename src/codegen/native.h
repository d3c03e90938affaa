// codegen/native.h — the native backend: the lowered plan (plan.h) printed as C99
// (emit_c.h), compiled by the system C compiler into a shared object
// (native_build.h) and loaded with dlopen.
//
// The steps and their files: NativeProgram::Prepare (native_cache.cc) writes the
// C source and finds what the cache holds for it; a NativeBuild
// (native_build.cc) makes what it lacks; NativeProgram::Load
// (native_program.cc) loads the object and makes the program, which runs on
// the caller's slots with a NativeWorkspace. A single translation unit is
// compiled straight into the shared object; several are compiled in parallel
// into object files, each cached by a hash of its own source and the compiler
// command, and linked. Files are cached in a directory of the user's own that
// nobody else may write; an object is loaded or linked only if it too is the
// user's and nobody else's to write. Without such a directory the code is built
// in a private directory of the run and not cached (cache_note() says why).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "emit_c.h"
#include "native_build.h"
#include "plan.h"

namespace paynter::codegen {

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
