// The progress line and the stage scopes (paynter/progress.h).
#include "paynter/progress.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace paynter {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kTerminalFirst = std::chrono::seconds(1);
constexpr auto kTerminalEvery = std::chrono::milliseconds(100);
constexpr auto kLogFirst = std::chrono::seconds(5);
constexpr auto kLogEvery = std::chrono::seconds(5);

}  // namespace

ProgressLine::ProgressLine() : terminal_(::isatty(STDERR_FILENO) == 1), start_(Clock::now()), last_(start_) {}

ProgressLine::~ProgressLine() {
  if (shown_ && terminal_) {
    std::fputs("\r\033[K", stderr);  // erase the line
    std::fflush(stderr);
  }
}

bool ProgressLine::Due() const {
  const auto now = Clock::now();
  if (now - start_ < (terminal_ ? Clock::duration(kTerminalFirst) : Clock::duration(kLogFirst))) return false;
  return !shown_ || now - last_ >= (terminal_ ? Clock::duration(kTerminalEvery) : Clock::duration(kLogEvery));
}

void ProgressLine::Show(const std::string& text) {
  last_ = Clock::now();
  shown_ = true;
  if (terminal_)
    std::fprintf(stderr, "\r%s\033[K", text.c_str());
  else
    std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

void ProgressLine::Close(const std::string& text) {
  if (!shown_ || terminal_) return;
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

double ProgressLine::seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

// ---- Stages -------------------------------------------------------------------
// One monitor for the process: the stack of the owning thread's open scopes
// and a thread that, while the stack is not empty, wakes every 100 ms and
// shows the innermost stage when the line is due. It is never destroyed (no
// order of destruction to get wrong at exit); its thread runs only while a
// scope is open, and the outermost scope joins it.

namespace {

struct Monitor {
  std::atomic<bool> enabled{false};
  std::mutex mu;
  std::condition_variable wake;
  std::thread::id owner;
  std::vector<std::string> stack;  // innermost last
  std::optional<ProgressLine> line;
  std::thread watcher;
  bool stop = false;

  void Watch() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stop) {
      wake.wait_for(lock, std::chrono::milliseconds(100));
      if (stop || stack.empty() || !line->Due()) continue;
      line->Show("paynter: " + stack.back() + " (" + std::to_string(std::lround(line->seconds())) + " s)");
    }
  }
};

Monitor& TheMonitor() {
  static Monitor* monitor = new Monitor;
  return *monitor;
}

}  // namespace

void SetStageProgress(bool on) { TheMonitor().enabled = on; }
bool StageProgress() { return TheMonitor().enabled; }

StageScope::StageScope(std::string what) {
  Monitor& m = TheMonitor();
  if (!m.enabled) return;
  std::lock_guard<std::mutex> lock(m.mu);
  if (m.stack.empty()) {
    m.owner = std::this_thread::get_id();
  } else if (m.owner != std::this_thread::get_id()) {
    return;
  }
  active_ = true;
  m.stack.push_back(std::move(what));
  if (m.stack.size() == 1) {
    m.line.emplace();
    m.stop = false;
    m.watcher = std::thread([&m] { m.Watch(); });
  }
}

StageScope::~StageScope() {
  if (!active_) return;
  Monitor& m = TheMonitor();
  std::thread watcher;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (m.stack.size() > 1) {
      m.stack.pop_back();
      return;
    }
    m.stop = true;
    watcher = std::move(m.watcher);
  }
  m.wake.notify_all();
  watcher.join();
  std::lock_guard<std::mutex> lock(m.mu);
  const long seconds = std::lround(m.line->seconds());
  m.line->Close("paynter: " + m.stack.back() +
                (std::uncaught_exceptions() > 0 ? " stopped after " : " done in ") + std::to_string(seconds) + " s");
  m.line.reset();  // erases the line on a terminal
  m.stack.clear();
}

}  // namespace paynter
