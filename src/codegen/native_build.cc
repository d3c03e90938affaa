// codegen/native_build.cc — the C compiler and the detached build process (see
// native_build.h): what a build compiles and links, with temporary names and
// renames, started through paynter/process.h's PreparedCommand.
#include "native_build.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "native.h"
#include "paynter/c_source.h"
#include "paynter/error.h"
#include "paynter/process.h"

namespace paynter::codegen {
namespace {

namespace fs = std::filesystem;

// A unique suffix for temporary files of this process.
std::string TempTag() {
  static std::atomic<unsigned> counter{0};
  return fmt::format(".tmp-{}-{}", getpid(), counter++);
}

int DefaultJobs() {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// What the build process reports on its pipe, one record per source: built,
// or failed (with the job that failed). Records are smaller than PIPE_BUF, so
// each write arrives whole.
struct Report {
  int32_t source;
  int32_t ok;
  int32_t job;
};

// The build process. It works from what was made before it was forked (the
// jobs, their commands, the arrays of state): it only starts processes, waits
// for them, renames files and writes reports, all async-signal-safe calls (the
// caller may have had other threads, whose locks the fork copies).
[[noreturn]] void RunBuildProcess(const std::vector<NativeBuild::JobSpec>& jobs,
                                  const std::vector<std::unique_ptr<PreparedCommand>>& commands, int notify_fd,
                                  int max_jobs, int num_sources, int* state, pid_t* pids, char* notified) {
  // The caller's handlers (paynter's remove its temporary output file) are
  // not this process's; an inherited SIG_IGN of SIGCHLD would hide the
  // compilers' statuses.
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &sa, nullptr);  // (fails harmlessly for some)
  sa.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &sa, nullptr);  // a caller gone: reports fail with EPIPE, the build goes on
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Nothing of the caller's stays open: its output pipes would otherwise wait for this process.
  const int fd = ::fcntl(notify_fd, F_DUPFD_CLOEXEC, 3);
  const int null_fd = ::open("/dev/null", O_RDWR);
  if (fd < 0 || null_fd < 0) ::_exit(1);
  for (int i = 0; i < 3; ++i) ::dup2(null_fd, i);
  if (fd > 3) ::close_range(3, static_cast<unsigned>(fd - 1), 0);
  ::close_range(static_cast<unsigned>(fd + 1), ~0u, 0);
  auto report = [&](int source, int ok, int job) {
    if (notified[source]) return;
    notified[source] = 1;
    const Report r{source, ok, job};
    [[maybe_unused]] const ssize_t n = ::write(fd, &r, sizeof r);  // EPIPE when the caller has gone
  };
  const int n = static_cast<int>(jobs.size());
  enum { kPending, kRunning, kOk, kFailed };
  int running = 0;
  for (;;) {
    for (int j = 0; j < n && running < max_jobs; ++j) {
      if (state[j] != kPending) continue;
      bool ready = true, failed = false;
      for (int d : jobs[j].deps) {
        ready = ready && state[d] == kOk;
        failed = failed || state[d] == kFailed;
      }
      if (failed) {
        state[j] = kFailed;
        continue;
      }
      if (!ready) continue;
      if ((pids[j] = commands[j]->Start()) < 0) {
        state[j] = kFailed;
        report(jobs[j].source, 0, j);
        continue;
      }
      state[j] = kRunning;
      ++running;
    }
    if (running == 0) break;  // (anything still pending waits on a job that failed)
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    int j = 0;
    while (j < n && !(state[j] == kRunning && pids[j] == pid)) ++j;
    if (j == n) continue;
    --running;
    const NativeBuild::JobSpec& job = jobs[j];
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && ::access(job.tmp_out.c_str(), F_OK) == 0;
    if (ok) {
      ::chmod(job.tmp_out.c_str(), 0700);  // only the user may write what will be loaded or linked
      ok = ::rename(job.tmp_out.c_str(), job.out.c_str()) == 0;
    }
    if (ok) {
      if (!job.tmp_c.empty()) ::rename(job.tmp_c.c_str(), job.c_path.c_str());  // the source, for debugging
      ::unlink(job.log.c_str());
      state[j] = kOk;
      if (job.last) report(job.source, 1, j);
    } else {
      ::unlink(job.tmp_out.c_str());
      if (!job.tmp_c.empty()) ::rename(job.tmp_c.c_str(), job.failed_c.c_str());  // kept for inspection
      ::rename(job.log.c_str(), job.failed_log.c_str());
      state[j] = kFailed;
      report(job.source, 0, j);
    }
  }
  for (int s = 0; s < num_sources; ++s) report(s, 0, -1);  // (sources left unreported failed)
  ::_exit(0);
}

}  // namespace

// The optimization level by the size of the program (operations of the plan),
// chosen by measurement (docs/performance.md, bench/bench_codegen). Per operation,
// compiling costs about 0.03 ms at -O0, 0.1-0.2 ms at -O1 and more at -O2, while -O1
// code runs 1.5 to 3.5 times faster than -O0 code and -O2 code barely faster than
// -O1 (straight-line arithmetic on the slot array). -O1 over -O0 pays off only after
// some 20,000 to 30,000 calls whatever the size: small programs, whose compile time
// is small anyway, get -O2 and -O1, large ones -O0, so that a large model is ready
// within seconds.
// $PAYNTER_CFLAGS, when set, replaces the level (e.g. -O2 for a long run of a large
// model); the flags for exact results always come after it, so they win.
std::string CompileFlags(size_t ops) {
  const char* env = std::getenv("PAYNTER_CFLAGS");
  const std::string level = env && *env ? env : ops <= 3000 ? "-O2" : ops <= 10000 ? "-O1" : "-O0";
  return fmt::format("{} {}", level, kExactFlags);
}

// $CC verbatim, else the first of clang, cc, gcc on PATH: clang compiles the generated sources
// 1.5 to 4 times faster than gcc at the same level (docs/performance.md), and
// both give the results of the tape bit for bit.
std::string FindCompiler() {
  const char* env = std::getenv("CC");
  if (env && *env) {
    std::string cc = env;
    const size_t b = cc.find_first_not_of(" \t");
    const std::string first = cc.substr(b, cc.find_first_of(" \t", b) - b);
    if (FindProgram(first).empty())
      ThrowAt({}, "", fmt::format("the C compiler '{}' (from $CC) was not found", cc), "", "",
              "set CC to an installed C compiler, or use the tape backend, which needs none");
    return cc;
  }
  for (const char* name : {"clang", "cc", "gcc"}) {
    const std::string p = FindProgram(name);
    if (!p.empty()) return p;
  }
  ThrowAt({}, "", "no C compiler found (looked for $CC, then clang, cc and gcc on PATH)", "", "",
          "install a C compiler (e.g. the Debian package build-essential), or use the tape backend");
}

std::vector<std::string> CompilerWords(const std::string& compiler) {
  std::vector<std::string> words = CommandWords(compiler);
  if (words.empty()) ThrowAt({}, "", "the C compiler setting ($CC) is blank");
  const std::string path = FindProgram(words[0]);
  if (path.empty()) ThrowAt({}, "", fmt::format("the C compiler '{}' was not found", compiler));
  words[0] = path;
  return words;
}

// A single unit is compiled straight into the shared object. Several are compiled
// into objects in parallel, each cached under the hash of its own source and
// command (so a change to one part of a model recompiles only its units), and
// linked into the shared object, cached under the hash of all of them.
std::shared_ptr<NativeBuild> NativeBuild::Start(const std::vector<const NativeSource*>& sources, int jobs) {
  std::shared_ptr<NativeBuild> b(new NativeBuild());
  b->start_ = Now();
  const int num_sources = static_cast<int>(sources.size());
  b->state_.assign(num_sources, State::kRunning);
  b->failure_.resize(num_sources);
  b->hint_.resize(num_sources);
  std::vector<JobSpec>& all = b->jobs_;
  for (int i = 0; i < num_sources; ++i) {
    const NativeSource& src = *sources[i];
    const fs::path dir = src.dir;
    const std::vector<std::string> cc = CompilerWords(src.compiler), flags = CommandWords(src.flags);
    auto job = [&](const std::string& source, const fs::path& c_path, const fs::path& out,
                   const std::vector<std::string>& extra_flags) {
      JobSpec j;
      const std::string tag = TempTag();
      j.source = i;
      j.out = out.string();
      j.tmp_out = j.out + tag + out.extension().string();
      j.log = j.out + tag + ".log";
      j.failed_log = j.out + ".failed.log";
      j.args = cc;
      if (!source.empty()) {
        j.c_path = c_path.string();
        j.tmp_c = j.c_path + tag + ".c";
        j.failed_c = j.c_path + ".failed.c";
        std::ofstream f(j.tmp_c, std::ios::binary);
        f << source;
        if (!f.flush()) ThrowAt({}, "", fmt::format("cannot write generated C source to '{}'", j.tmp_c));
        j.args.insert(j.args.end(), flags.begin(), flags.end());
      }
      j.args.insert(j.args.end(), extra_flags.begin(), extra_flags.end());
      j.args.insert(j.args.end(), {"-o", j.tmp_out});
      if (!source.empty()) j.args.push_back(j.tmp_c);
      return j;
    };
    if (src.units.size() == 1) {
      fs::path c_path = src.so_path;
      JobSpec j = job(src.units[0], c_path.replace_extension(".c"), src.so_path, {"-fPIC", "-shared"});
      j.args.push_back("-lm");
      j.last = true;
      all.push_back(std::move(j));
      continue;
    }
    JobSpec link = job("", "", src.so_path, {"-fPIC", "-shared"});
    for (int u : src.todo) {
      const fs::path base = dir / fmt::format("pn_o_{:016x}", src.unit_keys[u]);
      link.deps.push_back(static_cast<int>(all.size()));
      all.push_back(job(src.units[u], fs::path(base).concat(".c"), fs::path(base).concat(".o"), {"-fPIC", "-c"}));
    }
    for (uint64_t key : src.unit_keys) link.args.push_back((dir / fmt::format("pn_o_{:016x}.o", key)).string());
    link.args.push_back("-lm");
    link.last = true;
    all.push_back(std::move(link));
  }

  // Everything the build process needs, made here (it may not allocate): each
  // job's command (stdin /dev/null, stdout and stderr into its log, the
  // signals at their defaults).
  const int n = static_cast<int>(all.size());
  std::vector<std::unique_ptr<PreparedCommand>> commands;
  for (const JobSpec& j : all) commands.push_back(std::make_unique<PreparedCommand>(j.args, j.log));
  std::vector<int> state(n, 0);
  std::vector<pid_t> pids(n, 0);
  std::vector<char> notified(num_sources, 0);
  const int max_jobs = jobs > 0 ? jobs : DefaultJobs();

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    ThrowAt({}, "", fmt::format("cannot start the C compiler: {}", std::strerror(errno)));
  const pid_t child = ::fork();
  if (child == 0) {
    // A session of its own, and a grandchild that nobody waits for: the caller
    // may end before the build does.
    ::close(fds[0]);
    ::setsid();
    const pid_t g = ::fork();
    if (g != 0) ::_exit(g < 0 ? 1 : 0);
    RunBuildProcess(all, commands, fds[1], max_jobs, num_sources, state.data(), pids.data(), notified.data());
  }
  const int fork_errno = errno;
  ::close(fds[1]);
  if (child < 0) {
    ::close(fds[0]);
    ThrowAt({}, "", fmt::format("cannot start the C compiler: {}", std::strerror(fork_errno)));
  }
  int status;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  b->fd_ = fds[0];
  return b;
}

NativeBuild::~NativeBuild() {
  if (fd_ >= 0) ::close(fd_);  // the build goes on
}

double NativeBuild::seconds() const { return Now() - start_; }

void NativeBuild::Read(bool block) {
  for (;;) {
    if (fd_ < 0) return;
    Report r[32];
    const ssize_t n = ::read(fd_, r, sizeof r);
    if (n > 0) {
      for (size_t k = 0; k < size_t(n) / sizeof(Report); ++k) {
        const int s = r[k].source, j = r[k].job;
        if (s < 0 || s >= static_cast<int>(state_.size()) || state_[s] != State::kRunning) continue;
        if (r[k].ok) {
          state_[s] = State::kDone;
          continue;
        }
        state_[s] = State::kFailed;
        if (j < 0 || j >= static_cast<int>(jobs_.size())) {
          failure_[s] = "the C compiler was not run (an earlier unit failed)";
          continue;
        }
        const JobSpec& job = jobs_[j];
        std::string output;
        {
          std::ifstream f(job.failed_log, std::ios::binary);
          output.assign(std::istreambuf_iterator<char>(f), {});
        }
        if (output.size() > 2000) output = output.substr(0, 2000) + "\n...";
        std::string cmd;
        for (const std::string& a : job.args) cmd += (cmd.empty() ? "" : " ") + a;
        if (job.tmp_c.empty()) {
          failure_[s] = fmt::format("linking the compiled model failed: {}\n{}", cmd, output);
          hint_[s] = "use the tape backend to run without a compiler";
        } else {
          failure_[s] = fmt::format("the C compiler failed on the generated code: {}\n{}", cmd, output);
          hint_[s] = fmt::format("the source is kept as {}; use the tape backend to run without a compiler",
                                 job.failed_c);
        }
      }
      continue;
    }
    if (n == 0) {  // the build process has ended: whatever it did not report failed
      for (size_t s = 0; s < state_.size(); ++s)
        if (state_[s] == State::kRunning) {
          state_[s] = State::kFailed;
          failure_[s] = "the process building the native code ended early";
        }
      ::close(fd_);
      fd_ = -1;
      return;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN || !block) return;
    pollfd p{fd_, POLLIN, 0};
    ::poll(&p, 1, -1);
    block = false;  // one report, or the end, is there: read it, then return
  }
}

NativeBuild::State NativeBuild::Poll(int i) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_[i] == State::kRunning) Read(false);
  return state_[i];
}

NativeBuild::State NativeBuild::Wait(int i) {
  std::lock_guard<std::mutex> lock(mu_);
  while (state_[i] == State::kRunning) Read(true);
  return state_[i];
}

}  // namespace paynter::codegen

namespace paynter {

std::string FindCCompiler() { return codegen::FindCompiler(); }
std::string NativeCompileFlags(size_t ops) { return codegen::CompileFlags(ops); }

}  // namespace paynter
