// The conditional functions (paynter/conditionals.h): evaluation when the
// condition or mode is a number, piecewise derivatives, printing.
#include "paynter/conditionals.h"

namespace paynter {
namespace {

using GiNaC::ex;

bool Holds(const ex& g, const ex& strict) {
  const GiNaC::numeric v = GiNaC::ex_to<GiNaC::numeric>(g);
  return strict.is_zero() ? v >= 0 : v > 0;
}

bool RealNumber(const ex& e) { return GiNaC::is_a<GiNaC::numeric>(e) && GiNaC::ex_to<GiNaC::numeric>(e).is_real(); }

ex IfEval(const ex& g, const ex& strict, const ex& a, const ex& b) {
  if (RealNumber(g)) return Holds(g, strict) ? a : b;
  if (a.is_equal(b)) return a;
  return pn_if(g, strict, a, b).hold();
}

ex IfDeriv(const ex& g, const ex& strict, const ex&, const ex&, unsigned param) {
  if (param == 2) return pn_if(g, strict, 1, 0);
  if (param == 3) return pn_if(g, strict, 0, 1);
  return 0;  // piecewise constant in the indicator (no impulse)
}

void IfPrint(const ex& g, const ex& strict, const ex& a, const ex& b, const GiNaC::print_context& c) {
  c.s << "if(" << g << (strict.is_zero() ? " >= 0, " : " > 0, ") << a << ", " << b << ")";
}

ex SelectEval(const ex& m, const ex& a, const ex& b) {
  if (RealNumber(m)) return GiNaC::ex_to<GiNaC::numeric>(m) > GiNaC::numeric(1, 2) ? a : b;
  if (a.is_equal(b)) return a;
  return pn_select(m, a, b).hold();
}

ex SelectDeriv(const ex& m, const ex&, const ex&, unsigned param) {
  if (param == 1) return pn_select(m, 1, 0);
  if (param == 2) return pn_select(m, 0, 1);
  return 0;  // a mode changes only at events
}

void SelectPrint(const ex& m, const ex& a, const ex& b, const GiNaC::print_context& c) {
  c.s << "if(" << m << ", " << a << ", " << b << ")";
}

void SelectLatex(const ex& m, const ex& a, const ex& b, const GiNaC::print_context& c) {
  c.s << "\\begin{cases}";
  a.print(c);
  c.s << " & " << m << " \\\\ ";
  b.print(c);
  c.s << " & \\text{otherwise}\\end{cases}";
}

}  // namespace

REGISTER_FUNCTION(pn_if, eval_func(IfEval).derivative_func(IfDeriv).print_func<GiNaC::print_dflt>(IfPrint))
REGISTER_FUNCTION(pn_select, eval_func(SelectEval)
                                 .derivative_func(SelectDeriv)
                                 .print_func<GiNaC::print_dflt>(SelectPrint)
                                 .print_func<GiNaC::print_latex>(SelectLatex))

bool HasCondition(const ex& e) {
  if (GiNaC::is_a<GiNaC::function>(e) && GiNaC::ex_to<GiNaC::function>(e).get_name() == "pn_if") return true;
  for (size_t i = 0; i < e.nops(); ++i)
    if (HasCondition(e.op(i))) return true;
  return false;
}

}  // namespace paynter
