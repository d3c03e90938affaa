// codegen/tiered.cc — programs compiled together, and tiered execution: the
// tape runs while the native code compiles in the background (native.h's
// NativeBuild), and the program switches to native code between two runs.
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>

#include "native.h"
#include "newton.h"
#include "paynter/error.h"
#include "plan_io.h"
#include "tape.h"

namespace paynter::codegen {
namespace {

namespace fs = std::filesystem;

// How often the tape asks whether the build is done (a read of its pipe).
constexpr long kPollEvery = 16;

// Runs the tape until its native code is built, then the native code. The two
// compute the same bits (emit_c.cc prints the tape's plan), and the blocks'
// Newton solvers continue where the tape's stand, so the switch changes no
// result, whenever it happens.
//
// The code is shared by the runs of all workspaces; what changes once is the
// native code's arrival: the first workspace that finds the build done loads
// it (under mu_) and publishes it (native_), and each workspace switches at
// its own next look (TieredWorkspace), so a run's switch does not depend on
// the others'.
class TieredProgram final : public CompiledProgram {
 public:
  TieredProgram(Plan plan, std::unique_ptr<NativeSource> source, std::shared_ptr<NativeBuild> build, int index,
                const CodegenOptions& options)
      : num_blocks_(static_cast<int>(plan.blocks.size())),
        native_plan_(plan),
        tape_(std::make_unique<TapeProgram>(std::move(plan), options)),
        source_(std::move(source)),
        build_(std::move(build)),
        build_start_(std::chrono::steady_clock::now() - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                             std::chrono::duration<double>(build_->seconds()))),
        index_(index),
        options_(options),
        cache_note_(source_->cache_note) {}

  std::unique_ptr<ProgramWorkspace> NewWorkspace() const override {
    auto ws = std::make_unique<TieredWorkspace>();
    ws->tape = tape_->NewWorkspace();
    return ws;
  }

  void Run(double* slots, ProgramWorkspace& workspace) const override {
    TieredWorkspace& ws = static_cast<TieredWorkspace&>(workspace);
    if (!ws.native && state_.load(std::memory_order_acquire) != kOnTape &&
        (ws.tiers.tape_runs % kPollEvery == 0 || ws.tiers.tape_runs == options_.tiered_wait_after))
      Switch(slots, ws);
    if (ws.native) {
      ++ws.tiers.native_runs;
      native_->Run(slots, *ws.native);
      return;
    }
    ++ws.tiers.tape_runs;
    tape_->Run(slots, *ws.tape);
  }
  int num_slots() const override { return tape_->num_slots(); }
  std::string backend_name() const override { return "tiered"; }
  std::string fallback_reason() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return note_;
  }
  std::string cache_note() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return cache_note_;
  }
  Tiers tiers(const ProgramWorkspace& ws) const override { return static_cast<const TieredWorkspace&>(ws).tiers; }

 private:
  struct TieredWorkspace final : ProgramWorkspace {
    std::unique_ptr<ProgramWorkspace> tape, native;  // native: once switched
    Tiers tiers;
  };
  enum State { kBuilding, kNative, kOnTape };

  // Loads the native code when its build is done (waiting for it at the run
  // tiered_wait_after), and moves `ws` over to it once it is there.
  void Switch(const double* slots, TieredWorkspace& ws) const {
    if (state_.load(std::memory_order_acquire) == kBuilding) {
      std::lock_guard<std::mutex> lock(mu_);
      if (build_) Settle(ws.tiers.tape_runs == options_.tiered_wait_after);
    }
    if (state_.load(std::memory_order_acquire) != kNative) return;
    ws.native = native_->NewWorkspace();
    NativeWorkspace& native = static_cast<NativeWorkspace&>(*ws.native);
    TapeWorkspace& tape = static_cast<TapeWorkspace&>(*ws.tape);
    for (int b = 0; b < num_blocks_; ++b) native.solver(b).TakeStateFrom(tape.solver(b));
    ws.tiers.switched = true;
    ws.tiers.switch_slot0 = slots[0];
    ws.tiers.switch_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start_).count();
  }

  // Under mu_: the build's outcome, once it has one.
  void Settle(bool wait) const {
    const NativeBuild::State state = wait ? build_->Wait(index_) : build_->Poll(index_);
    if (state == NativeBuild::State::kRunning) return;
    State next = kOnTape;
    if (state == NativeBuild::State::kFailed) {
      note_ = "native code unavailable, staying on the tape: " + build_->failure(index_);
    } else {
      try {
        native_ = NativeProgram::Load(*source_, native_plan_, options_);
        cache_note_ = native_->cache_note();
        next = kNative;
      } catch (const Error& e) {
        note_ = "native code unavailable, staying on the tape: " + e.diagnostic().message;
      }
    }
    build_.reset();
    source_.reset();
    state_.store(next, std::memory_order_release);
  }

  // The native code's arrival, shared by all workspaces: guarded by mu_, and
  // published by state_ (native_ is set before state_ becomes kNative and not
  // changed after).
  int num_blocks_;
  mutable std::mutex mu_;
  mutable std::atomic<int> state_{kBuilding};
  mutable Plan native_plan_;  // taken by the native program
  std::unique_ptr<TapeProgram> tape_;  // kept after the switch (its plan holds expressions; see SymbolicMutex)
  mutable std::unique_ptr<NativeSource> source_;
  mutable std::shared_ptr<NativeBuild> build_;  // null once loaded or failed
  std::chrono::steady_clock::time_point build_start_;
  int index_;
  CodegenOptions options_;
  mutable std::unique_ptr<NativeProgram> native_;
  mutable std::string note_, cache_note_;
};

// One build per set of objects in this process: the instances of a model made
// while its code compiles (a sweep's threads) wait for the same build.
std::shared_ptr<NativeBuild> SharedBuild(const std::vector<const NativeSource*>& sources) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<NativeBuild>> builds;
  std::string key;
  for (const NativeSource* s : sources) key += s->so_path + "\n";
  std::lock_guard<std::mutex> lock(mu);
  if (auto b = builds[key].lock()) return b;
  for (auto it = builds.begin(); it != builds.end();) it = it->second.expired() ? builds.erase(it) : std::next(it);
  auto b = NativeBuild::Start(sources, 0);
  builds[key] = b;
  return b;
}

// A build's temporaries are named <file>.tmp-<pid>-<n>... (native_build.cc's
// TempTag: <pid> the process that started the build) and renamed into place
// when done; a build killed before that leaves them in the cache for good.
// They are removed when a later build starts in the same cache, if nothing
// may still write them: older than this, the process that started the build
// gone, and no process (the detached build's compilers, which carry the names
// on their command lines) naming the build's tag.
constexpr auto kStaleTemporaryAge = std::chrono::minutes(10);

// The tag ".tmp-<pid>-" in a temporary's name, and its pid; "" for other names.
std::string TemporaryTag(const std::string& name, pid_t* pid) {
  const size_t at = name.find(".tmp-");
  if (at == std::string::npos) return "";
  size_t end = at + 5;
  while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
  if (end == at + 5 || end >= name.size() || name[end] != '-' || end - at - 5 > 9) return "";
  *pid = static_cast<pid_t>(std::atol(name.c_str() + at + 5));
  return name.substr(at, end + 1 - at);
}

// Whether a running process's command line contains `text`.
bool SomeProcessNames(const std::string& text) {
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string pid = it->path().filename().string();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(it->path() / "cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmdline.find(text) != std::string::npos) return true;
  }
  return false;
}

void RemoveStaleTemporaries(const fs::path& dir) {
  const auto now = fs::file_time_type::clock::now();
  std::map<std::string, bool> tag_alive;  // (one look at the processes per build)
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    pid_t pid = 0;
    const std::string tag = TemporaryTag(it->path().filename().string(), &pid);
    std::error_code file_ec;
    if (tag.empty() || !it->is_regular_file(file_ec)) continue;
    const auto written = fs::last_write_time(it->path(), file_ec);
    if (file_ec || now - written < kStaleTemporaryAge) continue;
    auto alive = tag_alive.find(tag);
    if (alive == tag_alive.end()) {
      const bool starter_alive = pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH);
      alive = tag_alive.emplace(tag, starter_alive || SomeProcessNames(tag)).first;
    }
    if (!alive->second) fs::remove(it->path(), file_ec);
  }
}

// RemoveStaleTemporaries, once per process for each cache directory.
void CleanCacheOnce(const std::string& dir) {
  static std::mutex mu;
  static std::set<std::string> cleaned;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!cleaned.insert(dir).second) return;
  }
  RemoveStaleTemporaries(dir);
}

}  // namespace

std::vector<std::unique_ptr<CompiledProgram>> CompilePlans(std::vector<Plan> plans, const CodegenOptions& options) {
  const size_t n = plans.size();
  const bool native_only = options.backend == Backend::kNative;
  std::vector<std::unique_ptr<CompiledProgram>> out(n);
  std::vector<std::string> reason(n);
  std::vector<std::unique_ptr<NativeSource>> source(n);
  if (options.backend != Backend::kTape) {
    try {
      for (size_t i = 0; i < n; ++i) source[i] = NativeProgram::Prepare(plans[i], options);
    } catch (const Error& e) {
      if (native_only) throw;
      for (auto& s : source) s.reset();
      reason.assign(n, "native code unavailable, using the tape: " + e.diagnostic().message);
    }
  }
  std::vector<const NativeSource*> missing;
  std::vector<size_t> which;
  bool private_dir = false;
  for (size_t i = 0; i < n; ++i)
    if (source[i] && !source[i]->handle) {
      missing.push_back(source[i].get());
      which.push_back(i);
      private_dir = private_dir || !source[i]->cached;
      if (source[i]->cached) CleanCacheOnce(source[i]->dir);  // a build starts here: what killed ones left
    }
  if (!missing.empty()) {
    // Tiered where the objects will be cached; otherwise built before returning.
    const bool tiered = options.backend == Backend::kTiered && !private_dir;
    std::shared_ptr<NativeBuild> build;
    try {
      build = tiered ? SharedBuild(missing) : NativeBuild::Start(missing, 0);
    } catch (const Error& e) {
      if (native_only) throw;
      for (size_t i : which) {
        reason[i] = "native code unavailable, using the tape: " + e.diagnostic().message;
        source[i].reset();
      }
    }
    for (size_t k = 0; build && k < which.size(); ++k) {
      const size_t i = which[k];
      if (tiered) {
        out[i] = std::make_unique<TieredProgram>(std::move(plans[i]), std::move(source[i]), build, int(k), options);
      } else if (build->Wait(int(k)) != NativeBuild::State::kDone) {
        if (native_only) ThrowAt({}, "", build->failure(int(k)), "", "", build->failure_hint(int(k)));
        reason[i] = "native code unavailable, using the tape: " + build->failure(int(k));
        source[i].reset();
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (out[i] || !source[i]) continue;
    try {
      out[i] = NativeProgram::Load(*source[i], plans[i], options);  // leaves the plan on failure
    } catch (const Error& e) {
      if (native_only) throw;
      reason[i] = "native code unavailable, using the tape: " + e.diagnostic().message;
    }
    source[i].reset();  // (a private directory goes once its object is loaded)
  }
  for (size_t i = 0; i < n; ++i)
    if (!out[i]) out[i] = std::make_unique<TapeProgram>(std::move(plans[i]), options, reason[i]);
  return out;
}

}  // namespace paynter::codegen
