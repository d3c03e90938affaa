// codegen/native_build.h — the system C compiler, and builds of native code by
// a detached process (NativeBuild).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace paynter::codegen {

struct NativeSource;

// The compiler command: $CC verbatim (it may carry arguments, e.g. "ccache gcc"),
// else the path of the first of clang, cc, gcc on PATH. Throws paynter::Error
// when there is none.
std::string FindCompiler();
// The program to run and the rest of a compiler command, its first word
// looked up on PATH. Throws paynter::Error when it is blank or not found.
std::vector<std::string> CompilerWords(const std::string& compiler);

// Flags for the results: no fused multiply-add and no value-changing optimization,
// so that native code computes exactly what the tape does. -fno-math-errno
// changes no value (only whether errno is set): it lets the compiler take sin and
// cos of one argument in one sincos call (glibc's sincos gives the same bits as
// its sin and cos; codegen_test checks native against the tape) and sqrt inline.
constexpr const char* kExactFlags = "-ffp-contract=off -fno-fast-math -fno-math-errno";
constexpr const char* kLinkFlags = "-fPIC -shared";
// The optimization level for a program of `ops` operations (or $PAYNTER_CFLAGS),
// then kExactFlags.
std::string CompileFlags(size_t ops);

// A build of the shared objects that sources lack, done by a process of its
// own, detached from the caller's (its own session; its standard streams are
// /dev/null; it holds no descriptor of the caller's but the pipe it reports
// on): the units of all sources are compiled in parallel (one compiler per
// CPU), each source's objects linked as soon as its units are done. Compilers
// and the linker are started by PreparedCommand (paynter/process.h:
// posix_spawn with an argument vector, no shell; the arguments are the
// compiler, flags and paths of the cache: no text of a model); every file is written under a temporary name and renamed
// into place, so neither a concurrent run nor one that finds the build half
// done ever sees a partial file. The caller need not wait: when it ends
// first, the build goes on and installs the objects for the next run.
class NativeBuild {
 public:
  // Starts building sources[i] (each one with a shared object to make: not
  // loaded from the cache), `jobs` compilers at once (0: one per online CPU).
  // Throws paynter::Error when no process can be started.
  static std::shared_ptr<NativeBuild> Start(const std::vector<const NativeSource*>& sources, int jobs);
  // One compiler or linker run: argv (args[0] = the program's path), its output
  // under a temporary name and in place, its C source likewise (empty for a
  // link), its messages, and the jobs it needs first.
  struct JobSpec {
    std::vector<std::string> args;
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

}  // namespace paynter::codegen
