// paynter/formulations.h — the formulation table: for each form (--form), the
// causality procedure that gives it, how the front end expands a mechanism
// for it, and which constraint methods (--constraints) combine with it.
//
// The front end (the multibody pass), the pipeline's checks, the command
// line and the FMU export consult this table instead of testing forms by
// name; an error for a combination that does not apply is made from it
// (RequireCombination). docs/methods.md describes the same table for users,
// and a test holds the two together (formulation_table_test).
#pragma once

#include <string>

#include "paynter/causality.h"
#include "paynter/constrained.h"
#include "paynter/equations.h"

namespace paynter {

// How the front end expands a `multibody:` section for a form.
enum class Expansion {
  kNewtonEuler,          // the bodies' Newton-Euler equations, the joints as constraint sources
  kJointCoordinates,     // a spanning tree's joint coordinates; a closed chain is an error
  kJointCoordinatesCut,  // the same, a joint that closes a loop kept as constraint rows (multipliers)
  kMassMatrixField,      // joint coordinates, the bodies' kinetic energy one I field on the joint rates
  kQuasiVelocities,      // joint coordinates, the joints' quasi-velocity junctions
};

// A set of constraint methods (bits by ConstraintMethod).
using MethodSet = unsigned;
constexpr MethodSet MethodBit(ConstraintMethod m) { return 1u << static_cast<unsigned>(m); }
inline constexpr MethodSet kEveryMethod =
    MethodBit(ConstraintMethod::kAuto) | MethodBit(ConstraintMethod::kLagrangeMultipliers) |
    MethodBit(ConstraintMethod::kMinimalCoordinates) | MethodBit(ConstraintMethod::kParasitic) |
    MethodBit(ConstraintMethod::kZcp);
// Equations in joint coordinates leave no joint constraint to relax or to
// solve: what constraint rows remain (cut joints) are multipliers.
inline constexpr MethodSet kMultipliersOnly =
    MethodBit(ConstraintMethod::kAuto) | MethodBit(ConstraintMethod::kLagrangeMultipliers);

struct FormulationRow {
  Formulation form;
  const char* name;  // as --form takes it
  CausalityProcedure procedure;
  Expansion expansion;
  // The constraint methods that combine with the form, for a mechanism
  // written under `multibody:` and for a bond graph written by hand (whose
  // constraint sources Hamilton's form keeps).
  MethodSet mechanism_methods;
  MethodSet bond_graph_methods;
};

// In the order the documentation lists the forms.
inline constexpr FormulationRow kFormulations[] = {
    {Formulation::kState, "state", CausalityProcedure::kSCAP, Expansion::kNewtonEuler, kEveryMethod, kEveryMethod},
    {Formulation::kLagrange1, "lagrange1", CausalityProcedure::kLaCAP, Expansion::kJointCoordinatesCut,
     kMultipliersOnly, kMultipliersOnly},
    {Formulation::kLagrange2, "lagrange2", CausalityProcedure::kLaCAP, Expansion::kJointCoordinates,
     kMultipliersOnly, kMultipliersOnly},
    {Formulation::kHamilton, "hamilton", CausalityProcedure::kHaCAP, Expansion::kMassMatrixField, kMultipliersOnly,
     kEveryMethod},
    {Formulation::kBoltzmannHamel, "boltzmann-hamel", CausalityProcedure::kBHCAP, Expansion::kQuasiVelocities,
     kMultipliersOnly, kMultipliersOnly},
};

constexpr const FormulationRow& FormulationOf(Formulation form) {
  for (const FormulationRow& row : kFormulations)
    if (row.form == form) return row;
  return kFormulations[0];
}

// Lagrange's, Hamilton's and the Boltzmann-Hamel equations of a mechanism
// written under `multibody:` are formed in its joint coordinates; the state
// form keeps the bodies' Newton-Euler expansion with the joints as constraint forces.
constexpr bool InJointCoordinates(Formulation form) {
  return FormulationOf(form).expansion != Expansion::kNewtonEuler;
}

// Whether `method` combines with `form`, on a mechanism or on a bond graph.
constexpr bool Combines(Formulation form, ConstraintMethod method, bool mechanism) {
  const FormulationRow& row = FormulationOf(form);
  return ((mechanism ? row.mechanism_methods : row.bond_graph_methods) & MethodBit(method)) != 0;
}

// True when whether `method` combines with `form` depends on the model being
// a mechanism (the caller then needs to know that).
constexpr bool CombinationDependsOnModel(Formulation form, ConstraintMethod method) {
  return Combines(form, method, true) != Combines(form, method, false);
}

// Throws a located Error (the model file) when `method` does not combine
// with `form`: the forms that take the constraint methods, and those that do
// not, named from the table. `methods` restricts the methods considered to
// those the caller can run (the FMU export: those an FMU carries).
void RequireCombination(const std::string& file, Formulation form, ConstraintMethod method, bool mechanism,
                        MethodSet methods = kEveryMethod);

}  // namespace paynter
