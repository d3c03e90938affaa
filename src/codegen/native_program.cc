// codegen/native_program.cc — a native program: its built object loaded
// (dlopen) and its functions looked up, then run on the caller's slots with a
// workspace's scratch array and Newton solvers (see native.h).
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>

#include "native.h"
#include "native_build.h"
#include "newton.h"
#include "paynter/error.h"

namespace paynter::codegen {

// A block's callbacks on one workspace's scratch array, and its solver.
struct NativeWorkspace::Block final : BlockFns {
  Block(const NativeProgram::NativeBlock* c, double* scratch, const Plan& plan, int b, const CodegenOptions& o,
        const RuntimeChecks* checks)
      : code(c), w(scratch), solver(plan, b, o, checks) {}
  void Residual(double* s, double* r) override {
    for (NativeProgram::BlockFn f : code->res) f(s, w, r);
  }
  void Jacobian(double* s, double* J) override {
    for (NativeProgram::BlockFn f : code->jac) f(s, w, J);
  }
  const NativeProgram::NativeBlock* code;
  double* w;
  NewtonSolver solver;
};

NativeWorkspace::NativeWorkspace(const NativeProgram& program) : w_(size_t(program.num_w_), 0.0) {
  for (size_t b = 0; b < program.blocks_.size(); ++b)
    blocks_.push_back(std::make_unique<Block>(&program.blocks_[b], w_.data(), program.plan_, static_cast<int>(b),
                                              program.options_, program.checks_.get()));
}

NativeWorkspace::~NativeWorkspace() = default;

NewtonSolver& NativeWorkspace::solver(int b) { return blocks_[b]->solver; }

std::unique_ptr<NativeProgram> NativeProgram::Create(Plan& plan, const CodegenOptions& options,
                                                     const NativeTuning& tuning) {
  std::unique_ptr<NativeSource> src = Prepare(plan, options, tuning);
  if (!src->handle) {
    const auto build = NativeBuild::Start({src.get()}, tuning.jobs);  // (0: one compiler per CPU)
    if (build->Wait(0) != NativeBuild::State::kDone)
      ThrowAt({}, "", build->failure(0), "", "", build->failure_hint(0));
  }
  return Load(*src, plan, options);
}

std::unique_ptr<NativeProgram> NativeProgram::Load(NativeSource& src, Plan& plan, const CodegenOptions& options) {
  if (!src.handle) {
    src.handle = dlopen(src.so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!src.handle) {
      const char* err = dlerror();
      ThrowAt({}, "", fmt::format("cannot load the compiled model '{}': {}", src.so_path, err ? err : "unknown error"));
    }
  }
  auto sym = [&](const std::string& name) {
    void* f = dlsym(src.handle, name.c_str());
    if (!f)
      ThrowAt({}, "", fmt::format("'{}' lacks the function {} (a stale or foreign file?)", src.so_path, name), "", "",
              "delete the file from the cache directory");
    return f;
  };
  std::vector<std::vector<GroupFn>> group_fns(plan.groups.size());
  for (size_t g = 0; g < plan.groups.size(); ++g)
    for (const auto& c : src.chunks[g]) group_fns[g].push_back(reinterpret_cast<GroupFn>(sym(c.first)));
  std::vector<std::pair<std::vector<BlockFn>, std::vector<BlockFn>>> block_fns(plan.blocks.size());
  for (size_t b = 0; b < plan.blocks.size(); ++b) {
    for (const std::string& name : src.residual_fns[b]) block_fns[b].first.push_back(reinterpret_cast<BlockFn>(sym(name)));
    for (const std::string& name : src.jacobian_fns[b]) block_fns[b].second.push_back(reinterpret_cast<BlockFn>(sym(name)));
  }

  // Nothing can fail from here on: take the plan and the object.
  std::unique_ptr<NativeProgram> prog(new NativeProgram());
  prog->handle_ = src.handle;
  src.handle = nullptr;
  prog->compiler_ = src.compiler;
  prog->library_path_ = src.so_path;
  prog->cache_note_ = src.cache_note;
  prog->cache_hit_ = src.cache_hit;
  prog->num_units_ = static_cast<int>(src.units.size());
  if (!src.cache_hit) prog->compiled_units_ = src.todo;
  prog->max_function_ops_ = src.max_function_ops;
  prog->num_ops_ = src.num_ops;
  prog->flags_ = src.flags;
  prog->plan_ = std::move(plan);
  prog->options_ = options;
  prog->num_w_ = std::max(1, src.num_w);
  prog->checks_ = std::make_unique<RuntimeChecks>(prog->plan_);
  for (auto& fns : block_fns) prog->blocks_.push_back(NativeBlock{std::move(fns.first), std::move(fns.second)});
  for (size_t g = 0; g < group_fns.size(); ++g) {
    for (size_t c = 0; c < group_fns[g].size(); ++c)
      prog->stages_.push_back(Stage{group_fns[g][c], -1, src.chunks[g][c].second});
    const int b = prog->plan_.groups[g].block;
    if (b >= 0) prog->stages_.push_back(Stage{nullptr, b, 0});
  }
  return prog;
}

std::unique_ptr<ProgramWorkspace> NativeProgram::NewWorkspace() const {
  return std::make_unique<NativeWorkspace>(*this);
}

NativeProgram::~NativeProgram() {
  blocks_.clear();
  if (handle_) dlclose(handle_);
}

void NativeProgram::Run(double* slots, ProgramWorkspace& workspace) const {
  NativeWorkspace& ws = static_cast<NativeWorkspace&>(workspace);
  double* const w = ws.w_.data();
  for (const Stage& st : stages_) {
    // The generated code checks the slots it writes (the solver checks the
    // unknowns); only on trouble is the culprit looked up, in step order. No
    // culprit means the check's sum overflowed: a false alarm.
    if (st.straight && st.straight(slots, w)) checks_->CheckThrough(slots, st.written_end);
    if (st.block >= 0) {
      NativeWorkspace::Block& block = *ws.blocks_[st.block];
      block.solver.Solve(slots, block);
    }
  }
}

}  // namespace paynter::codegen
