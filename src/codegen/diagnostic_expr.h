// codegen/diagnostic_expr.h — an expression a Plan keeps for error messages only.
//
// A plan lowered from a Program holds the GiNaC expressions themselves; a plan
// read back from the stage cache holds their printed text and parses it (in the
// names of the plan's slot symbols) the first time an error message needs it, so
// that a warm run does no symbolic work unless something fails.
#pragma once

#include <ginac/ginac.h>

#include <memory>
#include <string>
#include <vector>

namespace paynter::codegen {

// The names of a plan's slot symbols, and (made on first use) the symbols and
// the parser's table of them, shared by the expressions read back with them.
class SymbolNames {
 public:
  explicit SymbolNames(std::vector<std::string> names) : names_(std::move(names)) {}
  const std::vector<std::string>& names() const { return names_; }
  const GiNaC::symbol& Symbol(size_t i) const;
  const GiNaC::symtab& Table() const;

 private:
  void Make() const;
  std::vector<std::string> names_;
  mutable std::vector<GiNaC::symbol> symbols_;
  mutable GiNaC::symtab table_;
  mutable bool made_ = false;
};

class DiagnosticExpr {
 public:
  DiagnosticExpr() = default;
  DiagnosticExpr(const GiNaC::ex& e) : ex_(e), ready_(true) {}  // NOLINT: implicit, as an ex
  // Read back: the printed `text`, parsed on first use.
  static DiagnosticExpr FromText(std::string text, std::shared_ptr<const SymbolNames> names);
  // Read back: slot symbol `index` itself.
  static DiagnosticExpr FromSymbol(size_t index, std::shared_ptr<const SymbolNames> names);

  // The expression (parsed now if it was read back; text that does not parse
  // becomes a symbol of that name, so that it still prints as written).
  const GiNaC::ex& get() const;
  operator const GiNaC::ex&() const { return get(); }  // NOLINT: used where an ex is
  // The text to store (GiNaC's printed form).
  std::string text() const;

 private:
  mutable GiNaC::ex ex_;
  mutable bool ready_ = true;
  std::string text_;
  long symbol_ = -1;
  std::shared_ptr<const SymbolNames> names_;
};

}  // namespace paynter::codegen
