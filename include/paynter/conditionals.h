// paynter/conditionals.h — the conditional functions of paynter's expressions.
//
// `if(a > b, x, y)` in a model reads as pn_if(a - b, 1, x, y): the indicator
// g = a - b (the condition holds when g > 0, or g >= 0 when the second
// argument is 0: `>=`, `<=`), then the two values. The equation builder
// turns each distinct condition into a mode m (a slot, 0 or 1, held constant
// between events) and an event indicator g, and every pn_if into
// pn_select(m, x, y), which codegen compiles (docs/events.md). Derivatives
// are taken piecewise: d/du pn_select(m, x, y) = pn_select(m, dx/du, dy/du).
#pragma once

#include <ginac/ginac.h>

namespace paynter {

DECLARE_FUNCTION_4P(pn_if)
DECLARE_FUNCTION_3P(pn_select)

// Whether e holds a pn_if (a condition not yet given a mode).
bool HasCondition(const GiNaC::ex& e);

}  // namespace paynter
