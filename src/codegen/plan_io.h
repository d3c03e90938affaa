// codegen/plan_io.h — the binary form of lowered plans (and of what the stage
// cache stores with them): a writer, a defensive reader, and each struct's
// fields listed once for both.
//
// The format is for the cache of this very build (the cache key holds the build's
// identity), so it is native-endian and has no versioning of its own. The reader
// never trusts the bytes: every length is checked against what is left, a failed
// read leaves the reader failed (and the value empty), and a plan read back is
// validated (ValidPlan) before anything uses it.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tape.h"

namespace paynter::codegen {

class ByteWriter {
 public:
  explicit ByteWriter(std::string* out) : out_(out) {}
  template <class T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void operator()(const T& v) { out_->append(reinterpret_cast<const char*>(&v), sizeof v); }
  void operator()(const std::string& s) {
    Size(s.size());
    out_->append(s);
  }
  void operator()(const DiagnosticExpr& e) { (*this)(e.text()); }
  template <class T>
  void operator()(const std::vector<T>& v) {
    Size(v.size());
    for (const T& x : v) (*this)(x);
  }
  template <class T>
  requires std::is_class_v<T>
  void operator()(const T& v) {
    Fields(*this, const_cast<T&>(v));  // Fields only reads through a writer
  }

 private:
  void Size(size_t n) { (*this)(static_cast<uint64_t>(n)); }
  std::string* out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : p_(in.data()), end_(in.data() + in.size()) {}
  bool ok() const { return ok_; }
  void Fail() { ok_ = false; }
  size_t remaining() const { return ok_ ? size_t(end_ - p_) : 0; }
  std::string_view Rest() const { return std::string_view(p_, remaining()); }
  // The symbol names of the plan being read, for its diagnostic expressions.
  std::shared_ptr<const SymbolNames> names;

  void operator()(bool& v) {
    uint8_t b = 0;
    (*this)(b);
    v = b != 0;
  }
  template <class T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void operator()(T& v) {
    if (remaining() < sizeof v) {
      ok_ = false;
      v = T{};
      return;
    }
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
  }
  void operator()(std::string& s) {
    const size_t n = Size(1);
    s.assign(p_, n);
    p_ += n;
  }
  void operator()(DiagnosticExpr& e) {
    std::string text;
    (*this)(text);
    e = DiagnosticExpr::FromText(std::move(text), names);
  }
  template <class T>
  void operator()(std::vector<T>& v) {
    const size_t n = Size(1);  // every element takes a byte at least
    v.clear();
    v.resize(n);
    for (T& x : v) {
      (*this)(x);
      if (!ok_) break;
    }
    if (!ok_) v.clear();
  }
  template <class T>
  requires std::is_class_v<T>
  void operator()(T& v) { Fields(*this, v); }

 private:
  // A length, failed (0) unless `unit`-byte items of that many fit in what is left.
  size_t Size(size_t unit) {
    uint64_t n = 0;
    (*this)(n);
    if (!ok_ || n > remaining() / unit) {
      ok_ = false;
      return 0;
    }
    return static_cast<size_t>(n);
  }
  const char* p_;
  const char* end_;
  bool ok_ = true;
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
void WritePlan(ByteWriter& w, const Plan& plan);
// Reads and validates a plan; false (reader failed) when the bytes are not one.
bool ReadPlan(ByteReader& r, Plan* plan);
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
