// codegen/plan_io.cc — lowered plans written and read back (plan_io.h), the
// expressions kept for diagnostics (diagnostic_expr.h), and the public
// LoweredProgram built on them (codegen.h).
#include "plan_io.h"

#include <sstream>

#include "native.h"
#include "paynter/c_source.h"
#include "paynter/codegen.h"
#include "paynter/error.h"

namespace paynter {

namespace codegen {

// ---------------------------------------------------------------------------
// Diagnostic expressions

void SymbolNames::Make() const {
  if (made_) return;
  made_ = true;
  symbols_.reserve(names_.size());
  for (const std::string& n : names_) {
    symbols_.emplace_back(n);
    table_.emplace(n, symbols_.back());
  }
}

const GiNaC::symbol& SymbolNames::Symbol(size_t i) const {
  Make();
  return symbols_[i];
}

const GiNaC::symtab& SymbolNames::Table() const {
  Make();
  return table_;
}

DiagnosticExpr DiagnosticExpr::FromText(std::string text, std::shared_ptr<const SymbolNames> names) {
  DiagnosticExpr e;
  e.ready_ = false;
  e.text_ = std::move(text);
  e.names_ = std::move(names);
  return e;
}

DiagnosticExpr DiagnosticExpr::FromSymbol(size_t index, std::shared_ptr<const SymbolNames> names) {
  DiagnosticExpr e;
  e.ready_ = false;
  e.symbol_ = static_cast<long>(index);
  e.names_ = std::move(names);
  return e;
}

const GiNaC::ex& DiagnosticExpr::get() const {
  if (ready_) return ex_;
  ready_ = true;
  if (symbol_ >= 0) {
    ex_ = names_->Symbol(static_cast<size_t>(symbol_));
    return ex_;
  }
  try {
    GiNaC::parser reader(names_ ? names_->Table() : GiNaC::symtab{});
    ex_ = reader(text_);
  } catch (const std::exception&) {
    ex_ = GiNaC::symbol(text_);  // prints as written
  }
  return ex_;
}

std::string DiagnosticExpr::text() const {
  if (!ready_ && symbol_ < 0) return text_;
  std::ostringstream os;
  os << get();
  return os.str();
}

// ---------------------------------------------------------------------------
// Plans

void WritePlan(PlanWriter& w, const Plan& plan) {
  std::vector<std::string> names;
  names.reserve(plan.symbols.size());
  for (const DiagnosticExpr& s : plan.symbols) names.push_back(s.text());
  w(names);
  w(plan.num_slots);
  w(plan.num_temps);
  w(plan.constants);
  w(plan.groups);
  w(plan.blocks);
  w(plan.written);
  w(plan.slot_names);
}

bool ReadPlan(PlanReader& r, Plan* plan) {
  std::vector<std::string> names;
  r(names);
  if (!r.ok()) return false;
  const size_t num_symbols = names.size();
  r.names = std::make_shared<const SymbolNames>(std::move(names));
  Plan p;
  p.symbols.reserve(num_symbols);
  for (size_t i = 0; i < num_symbols; ++i) p.symbols.push_back(DiagnosticExpr::FromSymbol(i, r.names));
  r(p.num_slots);
  r(p.num_temps);
  r(p.constants);
  r(p.groups);
  r(p.blocks);
  r(p.written);
  r(p.slot_names);
  if (!r.ok() || !ValidPlan(p)) {
    r.Fail();
    return false;
  }
  *plan = std::move(p);
  return true;
}

namespace {

bool ValidOp(Op op) { return static_cast<size_t>(op) <= static_cast<size_t>(Op::kCopy); }

struct RefCheck {
  const Plan& plan;
  bool operator()(const Ref& r) const {
    switch (r.kind) {
      case Ref::Kind::kSlot:
        return r.index >= 0 && r.index < plan.num_slots;
      case Ref::Kind::kConst:
        return r.index >= 0 && static_cast<size_t>(r.index) < plan.constants.size();
      case Ref::Kind::kTemp:
        return r.index >= 0 && r.index < plan.num_temps;
    }
    return false;
  }
  bool operator()(const Section& s) const {
    for (const Instr& in : s.code) {
      if (!ValidOp(in.op) || !(*this)(in.a) || !(*this)(in.out) || in.out.kind == Ref::Kind::kConst) return false;
      if (IsBinary(in.op) && !(*this)(in.b)) return false;
    }
    return true;
  }
};

}  // namespace

bool ValidPlan(const Plan& plan) {
  const RefCheck ok{plan};
  const size_t slots = static_cast<size_t>(plan.num_slots);
  if (plan.num_slots < 1 || plan.num_temps < 0 || plan.slot_names.size() != slots || plan.symbols.size() != slots)
    return false;
  // Every temporary is written by an instruction, so there are no more of them
  // than instructions (this also bounds the register file a reader allocates).
  size_t instructions = 0;
  for (const Group& g : plan.groups) instructions += g.straight.code.size();
  for (const BlockPlan& b : plan.blocks) instructions += b.residual.code.size() + b.jacobian.code.size();
  if (static_cast<size_t>(plan.num_temps) > instructions) return false;
  const int written = static_cast<int>(plan.written.size());
  const int blocks = static_cast<int>(plan.blocks.size());
  if (plan.groups.empty()) return false;
  for (const Group& g : plan.groups)
    if (!ok(g.straight) || g.block < -1 || g.block >= blocks || g.written_end < 0 || g.written_end > written)
      return false;
  for (const BlockPlan& b : plan.blocks) {
    const size_t n = b.unknowns.size();
    // jacobian_out holds the structural non-zeros at the increasing column-major
    // positions jacobian_nz, inside the n*n matrix the solver scatters them into.
    if (n == 0 || b.residual_out.size() != n || b.jacobian_out.size() != b.jacobian_nz.size()) return false;
    for (size_t k = 0; k < b.jacobian_nz.size(); ++k)
      if (b.jacobian_nz[k] < 0 || static_cast<size_t>(b.jacobian_nz[k]) >= n * n ||
          (k > 0 && b.jacobian_nz[k] <= b.jacobian_nz[k - 1]))
        return false;
    if (b.written_before < 0 || b.written_before > written || !ok(b.residual) || !ok(b.jacobian)) return false;
    for (int u : b.unknowns)
      if (u < 0 || u >= plan.num_slots) return false;
    for (const Ref& r : b.residual_out)
      if (!ok(r)) return false;
    for (const Ref& r : b.jacobian_out)
      if (!ok(r)) return false;
    for (int j : b.unmatched)
      if (j < 0 || static_cast<size_t>(j) >= n) return false;
  }
  for (const WrittenSlot& w : plan.written)
    if (w.slot < 0 || w.slot >= plan.num_slots || w.block < -1 || w.block >= blocks) return false;
  return true;
}

}  // namespace codegen

// ---------------------------------------------------------------------------
// LoweredProgram (codegen.h)

struct LoweredProgram {
  codegen::Plan plan;
};

std::shared_ptr<const LoweredProgram> LowerProgram(const Program& program) {
  return std::make_shared<const LoweredProgram>(LoweredProgram{codegen::Lower(program)});
}

std::unique_ptr<CompiledProgram> Compile(const LoweredProgram& program, const CodegenOptions& options) {
  return codegen::CompilePlan(program.plan, options);
}

std::vector<std::unique_ptr<CompiledProgram>> CompileAll(const std::vector<const LoweredProgram*>& programs,
                                                         const CodegenOptions& options) {
  std::vector<codegen::Plan> plans;
  for (const LoweredProgram* p : programs) plans.push_back(p->plan);
  return codegen::CompilePlans(std::move(plans), options);
}

int NumSlots(const LoweredProgram& program) { return program.plan.num_slots; }
int NumBlocks(const LoweredProgram& program) { return static_cast<int>(program.plan.blocks.size()); }

const codegen::Plan& PlanOf(const LoweredProgram& program) { return program.plan; }

std::string GeneratedC(const LoweredProgram& program) { return codegen::GenerateC(program.plan); }

CSource ProgramCSource(const LoweredProgram& program, const std::string& prefix) {
  const codegen::Plan& plan = program.plan;
  codegen::NativeTuning tuning;
  tuning.prefix = prefix;
  tuning.mark_unused = true;  // the FMU's units compile with every warning
  const codegen::CSource c = codegen::GenerateCSource(plan, tuning);
  CSource out;
  out.text = c.text;
  out.num_slots = plan.num_slots;
  out.num_w = c.num_w;
  out.num_ops = c.num_ops;
  for (size_t g = 0; g < plan.groups.size(); ++g) out.groups.push_back({c.group_fns[g], plan.groups[g].block});
  for (size_t b = 0; b < plan.blocks.size(); ++b) {
    const codegen::BlockPlan& bp = plan.blocks[b];
    out.blocks.push_back({bp.unknowns, bp.jacobian_nz, bp.linear, c.residual_fns[b], c.jacobian_fns[b]});
  }
  return out;
}

void WriteLoweredProgram(const LoweredProgram& program, std::string* out) {
  codegen::PlanWriter w(out);
  codegen::WritePlan(w, program.plan);
}

std::shared_ptr<const LoweredProgram> ReadLoweredProgram(std::string_view* in) {
  codegen::PlanReader r(*in);
  auto p = std::make_shared<LoweredProgram>();
  if (!codegen::ReadPlan(r, &p->plan)) return nullptr;
  *in = r.Rest();
  return p;
}

}  // namespace paynter
