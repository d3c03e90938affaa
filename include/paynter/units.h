// paynter/units.h — units and physical domains (docs/model-format.md, "Units
// and domains").
//
// A unit is a vector of exponents of the SI base dimensions (kg, m, s, A, K,
// mol, cd) and a scale to SI (exact: 1/100 for cm, pi/180 for deg). Parameters
// and outputs may carry one (`m: 2 kg`); the loader splits it off and writes
// the value in SI units (SplitUnits). BuildModel then infers each bond's
// domain from the units of the parameters, the elements' laws and `domain:`
// declarations, and checks that efforts, flows, parameters and laws agree
// (CheckUnits). A model with no unit and no `domain:` is not checked.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ginac/ginac.h>

#include "paynter/model.h"

namespace paynter {

// Exponents of kg, m, s, A, K, mol, cd, in sixths (so that sqrt of m^2 is m
// and a cube root of m^3 is m).
struct Dimension {
  std::array<int, 7> e{};
  bool operator==(const Dimension& o) const { return e == o.e; }
  bool operator!=(const Dimension& o) const { return e != o.e; }
  Dimension operator*(const Dimension& o) const;
  Dimension operator/(const Dimension& o) const;
  bool dimensionless() const;
};

struct Unit {
  Dimension dim;
  GiNaC::ex scale = 1;  // SI value of one unit
};

// Reads a unit ("kg", "m/s^2", "N m s/rad", "kg/(m s^2)", "1/s", "uF", "kOhm").
// Factors are separated by spaces, '*', '.' or a middle dot, '/' divides by
// the next factor (or parenthesized group), '^' takes an integer exponent
// (or (p/q)). Returns nullopt, with the reason in *why, for text that is not a unit.
std::optional<Unit> ParseUnit(const std::string& text, std::string* why = nullptr);

// The dimension as a readable SI unit: a named one where it is exactly one
// ("N", "V", "N m"), else base units ("kg m^2 s^-3 A^-1"); "1" when dimensionless.
std::string DimensionText(const Dimension& d);

// The domains: name, effort unit, flow unit.
struct Domain {
  std::string name;
  Dimension effort, flow;
};
const std::vector<Domain>& Domains();

// Splits `text` into an expression and a trailing unit ("9.81 m/s^2" ->
// "9.81", "m/s^2"): the unit is what follows the first blank at the top level
// after which the rest reads as a unit and before which the text ends a
// number or a parenthesis (or, with `after_name`, a name too). *unit is empty
// when there is none. Throws a located Error for a trailing word that looks
// like a unit but is none.
void SplitUnit(const std::string& text, std::string* expression, std::string* unit, const SourceLocation& where,
               const std::string& what, bool after_name);

// Applies SplitUnit to every parameter and output of a spec read from a file:
// the unit goes to Item::unit, and `text` becomes the SI value (the
// expression times the unit's scale for a parameter, divided by it for an
// output).
void SplitUnits(ModelSpec* spec);

// Infers the domain and the effort and flow units of every bond, and checks
// dimensional consistency; sets Bond::domain, effort_unit, flow_unit. Throws
// a located Error naming the element and the two units on a mismatch. Does
// nothing for a model with no unit and no `domain:`.
void CheckUnits(const ModelSpec& spec, Model* model);

// The SI dimensions the check finds, by name: parameters, states (p_<I>,
// q_<C>, displacements), bonds' efforts and flows (e_<bond>, f_<bond>) and
// outputs; a name whose dimension stays unknown is absent, and a model with
// no unit and no `domain:` gives none. `model` is BuildModel's from `spec`.
std::map<std::string, Dimension> FindDimensions(const ModelSpec& spec, const Model& model);

// The bonds grouped by domain, with their effort and flow units, for
// `paynter check` ("" for a model whose bonds' domains are all unknown).
std::string DomainReport(const Model& model);

}  // namespace paynter
