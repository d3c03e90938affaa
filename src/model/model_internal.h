// Helpers shared by the model stage's files (not part of the public API).
#pragma once

#include <functional>
#include <string>

#include "paynter/error.h"
#include <vector>

namespace paynter {

std::vector<std::string> KindNames();
// "did you mean 'X'?" for the nearest candidate, or "" when none is close.
// `text` with control characters (C0, DEL, C1 as UTF-8) and bytes that are not
// UTF-8 written as \xNN, so that it can be shown on a terminal; newlines kept
// when `keep_newlines`. Diagnostic::ToString applies it to every part.

// The end of the name that starts at text[start] (a letter or '_'): letters,
// digits and underscores, and a submodel instance's path, parts joined by
// single dots (`motor.armature.L`, each part starting with a letter or '_').
size_t NameEnd(const std::string& text, size_t start);

// The signal functions of expressions (step_at, ramp, pulse, square, table):
// functions of time (expression.cc).
bool IsSignalFunction(const std::string& name);

// Where a unit in brackets in an expression text ends: for the '[' at
// text[open] that follows a number or a ')' (a unit, `9.81 [m/s^2]`), the
// index of its ']' (or text.size()); npos for any other '[' (a list).
size_t UnitBracketEnd(const std::string& text, size_t open);

// `text` with each name replaced by rename(name, is_call); numbers, units in
// brackets and operators are copied as they are (submodels.cc).
std::string MapNames(const std::string& text, const std::function<std::string(const std::string&, bool)>& rename);
// "a, b, c" ("none" for no names).
std::string JoinNames(const std::vector<std::string>& names);

}  // namespace paynter
