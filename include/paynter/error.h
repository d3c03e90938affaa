// paynter/error.h — the one exception type paynter throws for user-facing errors.
//
// Every diagnostic says where it comes from (file, line, column, element, bond),
// what was expected, what was found, and a hint. Library code never aborts the
// process on bad input; it throws paynter::Error.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace paynter {

struct SourceLocation {
  std::string file;  // empty when the model was built in code
  int line = 0;      // 1-based; 0 = unknown
  int column = 0;    // 1-based; 0 = unknown
  std::string ToString() const;  // "file:line:col" with the known parts
};

struct Diagnostic {
  SourceLocation where;
  std::string element;   // element name, if any
  std::string bond;      // bond name, if any
  std::string message;   // what is wrong
  std::string expected;  // what was expected (optional)
  std::string got;       // what was found (optional)
  std::string hint;      // how to fix it (optional)
  std::string ToString() const;  // multi-line human-readable form
};

class Error;

// Throws an Error with the given parts: the one way library code reports a
// located user error.
[[noreturn]] void ThrowAt(const SourceLocation& where, const std::string& element, const std::string& message,
                          const std::string& expected = "", const std::string& got = "", const std::string& hint = "");
// The same for an error at a bond (the message names the bond, not an element).
[[noreturn]] void ThrowAtBond(const SourceLocation& where, const std::string& bond, const std::string& message,
                              const std::string& expected = "", const std::string& got = "",
                              const std::string& hint = "");

// `text` safe to print on a terminal: control characters (and, unless
// keep_newlines, line breaks) written as escapes.
std::string EscapeForTerminal(const std::string& text, bool keep_newlines);

// "did you mean 'x'?" for the candidate nearest to `word` (edit distance), or
// "" when none is near.
std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates);

class Error : public std::runtime_error {
 public:
  explicit Error(Diagnostic d);
  explicit Error(const std::string& message);
  const Diagnostic& diagnostic() const { return diag_; }

 private:
  Diagnostic diag_;
};

}  // namespace paynter
