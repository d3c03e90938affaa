// Helpers shared by the model stage's files (not part of the public API).
#pragma once

#include <string>
#include <vector>

namespace paynter {

std::vector<std::string> KindNames();
int EditDistance(const std::string& a, const std::string& b);
// "did you mean 'X'?" for the nearest candidate, or "" when none is close.
std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace paynter
