// A sweep's runs over threads and MPI ranks, handed to a sink in run order
// (paynter/sweep.h).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "paynter/codegen.h"
#include "paynter/stage_cache.h"
#include "paynter/sweep.h"
#include "mpi_transport.h"

namespace paynter {
namespace {

using SymbolicLock = std::lock_guard<std::recursive_mutex>;

// Deletes under the symbolic lock: what holds expressions (a prepared model,
// a compiled instance) may be destroyed while other threads run.
struct SymbolicDelete {
  template <typename T>
  void operator()(T* p) const {
    SymbolicLock lock(SymbolicMutex());
    delete p;
  }
};
template <typename T>
using SymbolicPtr = std::unique_ptr<T, SymbolicDelete>;

// An error's text as `paynter simulate` prints it: a message about the model
// with no file of its own names the model file.
std::string ErrorText(const Error& e, const std::string& model_file) {
  const std::string what = e.what();
  if (e.diagnostic().where.file.empty() && !model_file.empty() && what.rfind("<model>", 0) == 0) {
    Diagnostic d = e.diagnostic();
    d.where.file = model_file;
    return d.ToString();
  }
  return what;
}

// Keeps a run's rows, also those recorded before a failure.
class RowCollector : public RowSink {
 public:
  explicit RowCollector(SweepRunResult* r) : r_(r) {}
  void Begin(const std::vector<std::string>& columns) override { n_ = columns.size(); }
  void Row(const double* values) override {
    r_->data.insert(r_->data.end(), values, values + n_);
    ++r_->rows;
  }

 private:
  SweepRunResult* r_;
  size_t n_ = 0;
};

// What every run shares: the prepared base model (its compiled model is
// constant: every run, on any thread, evaluates it with a workspace of its
// own), the check of physical parameters, and how a run is done.
struct SweepPlan {
  const SweepDefinition* def = nullptr;
  const PreparedModel* prepared = nullptr;
  const CompiledProgram* physical = nullptr;  // PhysicalParametersHold's program (tape), if any
  bool own_builds = false;    // a varied parameter the build computes numbers from
};

SweepRunResult DoRun(const SweepPlan& plan, long k) {
  const SweepDefinition& def = *plan.def;
  SweepRunResult r;
  r.index = k;
  RowCollector rows(&r);
  const RunOptions o = def.OptionsFor(k);
  try {
    std::map<std::string, double> overrides(o.params.begin(), o.params.end());
    // A value that makes a mass or a capacitance non-positive is refused by
    // the Model's check, as simulate refuses it: through a build of its own.
    bool own = plan.own_builds;
    if (!own) {
      own = !PhysicalParametersHold(plan.prepared->staged(), plan.physical, overrides);
    }
    // Built, or made, and destroyed under the symbolic lock; run without it.
    SymbolicPtr<PreparedModel> own_model;
    r.own_build = own;
    if (own) {
      SymbolicLock lock(SymbolicMutex());
      own_model.reset(new PreparedModel(PrepareModel(o)));
    }
    const PreparedModel& prepared = own_model ? *own_model : *plan.prepared;
    const RunResult run = RunPrepared(prepared, prepared.compiled(), o, &rows);
    r.ok = true;
    r.steps = run.solution.stats.steps;
    r.rejected = run.solution.stats.rejected;
    r.rhs_evals = run.solution.stats.rhs_evals;
    r.jac_evals = run.solution.stats.jac_evals;
  } catch (const Error& e) {
    r.ok = false;
    SymbolicLock lock(SymbolicMutex());
    r.error = ErrorText(e, def.base.file);
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = std::string("internal error: ") + e.what();
  }
  return r;
}

// This rank's runs (run numbers first, first + stride, ..., `count` of them,
// not stored: a sweep may have 10^8) on `threads` threads; Next()
// returns their results in that order. At most `window` results wait to be
// taken, so that memory stays bounded however many runs there are.
class LocalRunner {
 public:
  LocalRunner(const SweepPlan& plan, long first, long stride, long count, int threads)
      : plan_(plan), first_(first), stride_(stride), count_(count) {
    const int n = static_cast<int>(std::max<long>(1, std::min<long>(threads, count_)));
    window_ = 8L * n + 16;
    for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Work(); });
  }

  ~LocalRunner() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

  int threads() const { return static_cast<int>(threads_.size()); }
  bool Done() const { return taken_ == count_; }

  SweepRunResult Next() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return done_.count(taken_) > 0; });
    SweepRunResult r = std::move(done_[taken_]);
    done_.erase(taken_);
    ++taken_;
    lock.unlock();
    cv_.notify_all();
    return r;
  }

 private:
  void Work() {
    while (true) {
      long i;
      {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [&] { return stop_ || next_ >= count_ || next_ < taken_ + window_; });
        if (stop_ || next_ >= count_) return;
        i = next_++;
      }
      SweepRunResult r = DoRun(plan_, first_ + i * stride_);
      {
        std::lock_guard<std::mutex> lock(m_);
        done_.emplace(i, std::move(r));
      }
      cv_.notify_all();
    }
  }

  const SweepPlan& plan_;
  long first_, stride_, count_;
  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable cv_;
  std::map<long, SweepRunResult> done_;  // by position among this rank's runs
  long next_ = 0, taken_ = 0, window_ = 16;
  bool stop_ = false;
};

// A varied parameter the model does not have: an error before any run.
void RequireParameters(const SweepDefinition& def, const PreparedModel& prepared) {
  const auto& names = prepared.parameter_names();
  for (const auto& n : def.names) {
    if (std::find(names.begin(), names.end(), n) != names.end()) continue;
    std::string list;
    for (const auto& p : names) list += (list.empty() ? "" : ", ") + p;
    ThrowAt({def.base.file, 0, 0}, "", fmt::format("sweep: the model has no parameter '{}'", n),
            "one of the model's parameters", n, "the model's parameters: " + list);
  }
}

}  // namespace

SweepReport RunSweep(const SweepDefinition& def, const SweepSettings& settings, SweepSink* sink) {
  CheckOutputRows(def.base);
  SweepReport report;
  report.runs = def.size();
  report.ranks = MpiSession::Size();
  const int rank = MpiSession::Rank();
  report.writer = rank == 0;
  RunOptions base = def.base;
  base.progress = false;
  std::unique_ptr<PreparedModel> prepared;
  // Every rank prepares the model; when one cannot, none starts a run.
  bool ok = false;
  try {
    {
      SymbolicLock lock(SymbolicMutex());
      prepared = std::make_unique<PreparedModel>(PrepareModel(base));
    }
    RequireParameters(def, *prepared);
    ok = true;
  } catch (...) {
    if (report.ranks == 1) throw;
    const int first = MpiFirstFailure(false);
    if (first == rank) throw;
    ThrowAt({}, "", fmt::format("sweep: rank {} of the MPI job could not prepare the model", first), "", "",
            "run the same command without mpirun to see its error");
  }
  const int failed_rank = report.ranks > 1 ? MpiFirstFailure(ok) : -1;
  if (failed_rank >= 0) {
    ThrowAt({}, "", fmt::format("sweep: rank {} of the MPI job could not prepare the model", failed_rank), "", "",
            "run the same command without mpirun to see its error");
  }
  SweepPlan plan;
  plan.def = &def;
  plan.prepared = prepared.get();
  for (const auto& n : def.names) plan.own_builds = plan.own_builds || !prepared->parameter_settable(n);
  SymbolicPtr<CompiledProgram> physical;
  if (const StagedModel& staged = prepared->staged(); staged.physical && staged.physical_complete) {
    SymbolicLock lock(SymbolicMutex());
    CodegenOptions tape;
    tape.backend = Backend::kTape;
    physical.reset(Compile(*staged.physical, tape).release());
    plan.physical = physical.get();
  }
  report.compiled_once = !plan.own_builds;

  const std::vector<std::string> columns = [&] {
    std::vector<std::string> c{"t"};
    for (const auto& o : prepared->compiled().output_names()) c.push_back(o);
    return c;
  }();
  if (report.writer && sink) sink->Begin(columns);

  const long mine = rank < def.size() ? (def.size() - rank + report.ranks - 1) / report.ranks : 0;
  // Default: the hardware threads, shared by the ranks on this machine.
  int threads = settings.threads;
  if (threads <= 0) {
    threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (MpiSession::Active() && local && std::atoi(local) > 1) threads = std::max(1, threads / std::atoi(local));
  }
  {
    LocalRunner local(plan, rank, report.ranks, mine, threads);
    report.threads = local.threads();
    long done = 0;
    auto take = [&](SweepRunResult&& r) {
      ++done;
      if (!r.ok) ++report.failed;
      if (r.own_build) ++report.own_builds;
      if (sink) sink->Run(r);
      if (settings.progress) settings.progress(done, report.failed, def.size());
    };
    if (report.ranks == 1) {
      while (!local.Done()) take(local.Next());
    } else if (rank == 0) {
      // Run k is done by rank k mod ranks; each rank sends its runs in order.
      try {
        for (long k = 0; k < def.size(); ++k)
          take(k % report.ranks == 0 ? local.Next() : MpiReceiveRun(static_cast<int>(k % report.ranks)));
      } catch (const Error& e) {
        // The other ranks would wait for ever to send their runs.
        std::cerr << e.what() << "\n";
        MpiSession::Abort(1);
      }
    } else {
      std::string bytes;
      while (!local.Done()) {
        SweepRunResult r = local.Next();
        if (!r.ok) ++report.failed;
        if (r.own_build) ++report.own_builds;
        bytes.clear();
        AppendSweepRunResult(r, &bytes);
        MpiSendRun(bytes);
      }
    }
  }
  SymbolicLock lock(SymbolicMutex());
  physical.reset();
  prepared.reset();
  return report;
}

}  // namespace paynter
