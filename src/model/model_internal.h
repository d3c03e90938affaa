// Helpers shared by the model stage's files (not part of the public API).
#pragma once

#include <string>
#include <vector>

namespace paynter {

std::vector<std::string> KindNames();
int EditDistance(const std::string& a, const std::string& b);
// "did you mean 'X'?" for the nearest candidate, or "" when none is close.
std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates);
// `text` with control characters (C0, DEL, C1 as UTF-8) and bytes that are not
// UTF-8 written as \xNN, so that it can be shown on a terminal; newlines kept
// when `keep_newlines`. Diagnostic::ToString applies it to every part.
std::string EscapeForTerminal(const std::string& text, bool keep_newlines);

}  // namespace paynter
