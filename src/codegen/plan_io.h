// codegen/plan_io.h — the binary form of lowered plans: the caches' writer and
// reader (paynter/byte_io.h) extended to diagnostic expressions, and each plan
// struct's fields listed once for both.
//
// The format is for the caches of this very build (their keys hold the build's
// identity). The reader never trusts the bytes (paynter/byte_io.h), and a plan
// read back is validated (ValidPlan) before anything uses it.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "paynter/byte_io.h"
#include "plan.h"

namespace paynter::codegen {

// The caches' writer and reader (paynter/byte_io.h) with the plans' diagnostic
// expressions, stored as their text and read back in the plan's symbol names.
class PlanWriter : public BasicByteWriter<PlanWriter> {
 public:
  using BasicByteWriter::BasicByteWriter;
  using BasicByteWriter::operator();
  void operator()(const DiagnosticExpr& e) { (*this)(e.text()); }
};

class PlanReader : public BasicByteReader<PlanReader> {
 public:
  using BasicByteReader::BasicByteReader;
  using BasicByteReader::operator();
  void operator()(DiagnosticExpr& e) {
    std::string text;
    (*this)(text);
    e = DiagnosticExpr::FromText(std::move(text), names);
  }
  // The symbol names of the plan being read, for its diagnostic expressions.
  std::shared_ptr<const SymbolNames> names;
};

// Each struct's stored fields, once for writing and reading: a new field is one line.
template <class F>
void Fields(F& f, Ref& r) {
  f(r.kind);
  f(r.index);
}
template <class F>
void Fields(F& f, Instr& i) {
  f(i.op);
  f(i.a);
  f(i.b);
  f(i.out);
}
template <class F>
void Fields(F& f, Section& s) {
  f(s.code);
}
template <class F>
void Fields(F& f, BlockPlan& b) {
  f(b.label);
  f(b.unknowns);
  f(b.linear);
  f(b.residual);
  f(b.jacobian);
  f(b.residual_out);
  f(b.jacobian_nz);
  f(b.jacobian_out);
  f(b.unmatched);
  f(b.residual_exprs);
  f(b.written_before);
}
template <class F>
void Fields(F& f, Group& g) {
  f(g.straight);
  f(g.block);
  f(g.written_end);
}
template <class F>
void Fields(F& f, WrittenSlot& w) {
  f(w.slot);
  f(w.block);
  f(w.expr);
}

// A plan: its symbol names first (the diagnostic expressions are read in them).
void WritePlan(PlanWriter& w, const Plan& plan);
// Reads and validates a plan; false (reader failed) when the bytes are not one.
bool ReadPlan(PlanReader& r, Plan* plan);
// Whether every index of `plan` is in range, so that both backends may run it.
bool ValidPlan(const Plan& plan);

// The requested backend for a lowered plan (codegen.cc; Compile without the lowering).
std::unique_ptr<CompiledProgram> CompilePlan(Plan plan, const CodegenOptions& options);
// Several plans of one model (tiered.cc; CompileAll without the lowering).
std::vector<std::unique_ptr<CompiledProgram>> CompilePlans(std::vector<Plan> plans, const CodegenOptions& options);

}  // namespace paynter::codegen

namespace paynter {
// The plan a lowered program holds (for code generators outside codegen: src/fmi/).
const codegen::Plan& PlanOf(const LoweredProgram& program);
}  // namespace paynter
