// Compile time and run time of generated code per set of compiler flags: the
// measurements behind the flags the native backend chooses (docs/performance.md).
//
// For a model file, builds the state-form right-hand-side program, lowers it and,
// per flag set, compiles it from a cold (fresh, private) cache: wall time, and CPU
// time of the compiler processes (which on a shared machine says more than the wall
// time). Then times Run on the compiled code (thread CPU time, best of 5 batches) and checks that
// native and tape give bitwise the same slots.
//
// Usage: bench_codegen [--fn-ops N] [--unit-ops N] MODEL.yaml [FLAGS ...]
//   FLAGS: one argument per flag set (default: -O0, -O1, -O2 and variants); "auto" is
//   the backend's own choice. --fn-ops and --unit-ops override NativeTuning.
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include "native.h"
#include "paynter/paynter.h"
#include "tape.h"

namespace {

double ChildCpuSeconds() {
  rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// Slot values for timing: deterministic, positive, away from zero (parameters such
// as masses must be positive; the blocks of a multibody model are linear).
std::vector<double> SampleSlots(int n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> d(0.5, 1.5);
  std::vector<double> s(n);
  for (double& v : s) v = d(rng);
  return s;
}

// CPU time of this thread: on a shared machine it leaves out the time the thread
// waits for a core, which the wall clock counts.
double ThreadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// Nanoseconds of thread CPU time per Run: best of 5 batches of about 50 ms.
double NsPerRun(const paynter::CompiledProgram& p, const std::vector<double>& init) {
  const auto ws = p.NewWorkspace();
  std::vector<double> s = init;
  p.Run(s.data(), *ws);
  int reps = 1;
  for (;;) {
    const double t0 = ThreadSeconds();
    for (int i = 0; i < reps; ++i) s = init, p.Run(s.data(), *ws);
    if (ThreadSeconds() - t0 > 0.05) break;
    reps *= 2;
  }
  double best = 1e300;
  for (int b = 0; b < 5; ++b) {
    const double t0 = ThreadSeconds();
    for (int i = 0; i < reps; ++i) s = init, p.Run(s.data(), *ws);
    best = std::min(best, (ThreadSeconds() - t0) * 1e9 / reps);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace paynter;
  namespace fs = std::filesystem;
  codegen::NativeTuning base;
  int arg = 1;
  for (; arg + 1 < argc && std::strncmp(argv[arg], "--", 2) == 0; arg += 2) {
    if (std::strcmp(argv[arg], "--fn-ops") == 0) base.max_function_ops = std::atoi(argv[arg + 1]);
    if (std::strcmp(argv[arg], "--unit-ops") == 0) base.unit_ops = std::atoi(argv[arg + 1]);
  }
  if (arg >= argc) {
    fmt::print(stderr, "usage: bench_codegen [--fn-ops N] [--unit-ops N] MODEL.yaml [FLAGS ...]\n");
    return 2;
  }
  const char* model_path = argv[arg];
  std::vector<std::string> flag_sets;
  for (int i = arg + 1; i < argc; ++i) flag_sets.push_back(argv[i]);
  if (flag_sets.empty()) flag_sets = {"-O0", "-O1", "-O2", "auto"};
  Model model = LoadModel(model_path);
  const CausalGraph graph = AssignCausality(model, OptionsFor(Formulation::kState, model));
  const EquationSystem sys = BuildEquations(model, graph);
  const std::vector<double> init = SampleSlots(static_cast<int>(sys.rhs.symbols.size()));

  auto tape = Compile(sys.rhs, CodegenOptions{Backend::kTape});
  auto tape_ws = tape->NewWorkspace();
  std::vector<double> want = init;
  tape->Run(want.data(), *tape_ws);
  const std::string source = codegen::GenerateC(codegen::Lower(sys.rhs), base);
  fmt::print("{}: {} slots, {:.2f} MB of C; tape {:.0f} ns per Run\n", model_path, sys.rhs.symbols.size(),
             source.size() / 1e6, NsPerRun(*tape, init));
  fmt::print("{:<52} {:>8} {:>6} {:>10} {:>10} {:>12} {:>8}\n", "flags", "ops", "units", "wall (s)", "cc cpu (s)",
             "ns per Run", "bitwise");
  for (const std::string& flags : flag_sets) {
    std::string dir = (fs::temp_directory_path() / "bench_codegen_XXXXXX").string();
    if (!mkdtemp(dir.data())) return 1;
    codegen::NativeTuning tuning = base;
    if (flags != "auto") tuning.flags = flags;
    CodegenOptions options{Backend::kNative};
    options.cache_dir = dir;
    codegen::Plan plan = codegen::Lower(sys.rhs);
    const double cpu0 = ChildCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<codegen::NativeProgram> native;
    try {
      native = codegen::NativeProgram::Create(plan, options, tuning);
    } catch (const Error& e) {  // e.g. a flag the compiler does not know
      fmt::print("{:<52} failed: {}\n", flags, e.diagnostic().message.substr(0, 200));
      continue;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = ChildCpuSeconds() - cpu0;
    std::vector<double> got = init;
    native->Run(got.data(), *native->NewWorkspace());
    const bool same = std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0;
    fmt::print("{:<52} {:>8} {:>6} {:>10.2f} {:>10.2f} {:>12.0f} {:>8}\n",
               flags == "auto" ? "auto: " + native->flags() : flags, native->num_ops(), native->num_units(), wall, cpu,
               NsPerRun(*native, init), same ? "yes" : "NO");
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  return 0;
}
