// What every libFuzzer target of fuzz/ counts as a finding besides a crash,
// a sanitizer report, a leak or a hang.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace paynter_fuzz {

// Reports a finding on stderr and aborts (libFuzzer keeps the input).
[[noreturn]] inline void Finding(const char* target, const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s: %s\n", target, what, detail.c_str());
  std::abort();
}

// Whether an error message is an internal error's: paynter raises those as
// "internal: ..." or "internal error ..." (the program adds "paynter:
// internal error:" to an exception of no diagnostic). A located message may
// begin with a name from the input ("internalxyz() ..."), so the words are
// matched whole.
inline bool IsInternal(const std::string& message) {
  return message.rfind("internal:", 0) == 0 || message.rfind("internal error", 0) == 0;
}

}  // namespace paynter_fuzz
