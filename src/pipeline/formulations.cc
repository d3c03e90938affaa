// The formulation table's errors (paynter/formulations.h).
#include "paynter/formulations.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "paynter/error.h"

namespace paynter {

// Each form once, and in the enum's range.
static_assert(std::size(kFormulations) == 5, "one row per Formulation");
static_assert(FormulationOf(Formulation::kState).form == Formulation::kState &&
                  FormulationOf(Formulation::kHamilton).form == Formulation::kHamilton &&
                  FormulationOf(Formulation::kLagrange1).form == Formulation::kLagrange1 &&
                  FormulationOf(Formulation::kLagrange2).form == Formulation::kLagrange2 &&
                  FormulationOf(Formulation::kBoltzmannHamel).form == Formulation::kBoltzmannHamel,
              "every Formulation has its row");

void RequireCombination(const std::string& file, Formulation form, ConstraintMethod method, bool mechanism,
                        MethodSet methods) {
  if (Combines(form, method, mechanism)) return;
  // The forms that take every method considered, and those that take none
  // but the multipliers (on a mechanism: what a user writes --form for).
  std::vector<std::string> with, alone, named;
  for (const FormulationRow& row : kFormulations)
    ((row.mechanism_methods & methods) == methods ? with : alone).push_back(row.name);
  for (ConstraintMethod m : ConstraintMethods())
    if (methods & MethodBit(m)) named.push_back(ConstraintMethodName(m));
  const std::string constraints = named.size() == 1 ? "--constraints " + named[0] : "--constraints";
  ThrowAt({file}, "",
          fmt::format("--constraints {} does not combine with --form {}", ConstraintMethodName(method),
                      FormulationName(form)),
          fmt::format("--form {} with {}, or --form {} alone", fmt::join(with, "|"), constraints,
                      fmt::join(alone, "|")),
          fmt::format("--form {} --constraints {}", FormulationName(form), ConstraintMethodName(method)),
          "Lagrange's, Hamilton's and the Boltzmann-Hamel equations of a mechanism are formed in its joint "
          "coordinates, which leave no joint constraint to relax or to solve");
}

}  // namespace paynter
