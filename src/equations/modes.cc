// ModeTable (equations_internal.h): the conditions of a model's expressions
// become modes, one per distinct condition.
#include <fmt/format.h>

#include "equations_internal.h"
#include "paynter/conditionals.h"

namespace paynter {

GiNaC::ex ModeTable::Replace(const GiNaC::ex& e) {
  if (!HasCondition(e)) return e;
  if (GiNaC::is_a<GiNaC::function>(e) && GiNaC::ex_to<GiNaC::function>(e).get_name() == "pn_if") {
    const GiNaC::ex g = Replace(e.op(0));
    const bool strict = !e.op(1).is_zero();
    const GiNaC::ex a = Replace(e.op(2)), b = Replace(e.op(3));
    for (const Entry& en : entries_)
      if (en.strict == strict && en.indicator.is_equal(g)) return pn_select(en.mode, a, b);
    // The same condition written the other way round (b < a for a > b) has the
    // indicator's negative: one mode, its values swapped. Strictness flips with it
    // (not (g > 0) is g <= 0), which only matters at the start.
    for (const Entry& en : entries_)
      if (en.strict != strict && en.indicator.is_equal(-g)) return pn_select(en.mode, b, a);
    Entry en;
    en.mode = GiNaC::symbol(fmt::format("mode{}", entries_.size() + 1), fmt::format("m_{{{}}}", entries_.size() + 1));
    en.indicator = g;
    en.strict = strict;
    entries_.push_back(en);
    return pn_select(en.mode, a, b);
  }
  struct Map : GiNaC::map_function {
    ModeTable* table;
    explicit Map(ModeTable* t) : table(t) {}
    GiNaC::ex operator()(const GiNaC::ex& x) override { return table->Replace(x); }
  } map(this);
  return e.map(map);
}

}  // namespace paynter
