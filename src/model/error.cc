#include "paynter/error.h"

#include <sstream>

namespace paynter {

std::string SourceLocation::ToString() const {
  std::ostringstream os;
  os << (file.empty() ? "<model>" : file);
  if (line > 0) {
    os << ':' << line;
    if (column > 0) os << ':' << column;
  }
  return os.str();
}

std::string Diagnostic::ToString() const {
  std::ostringstream os;
  os << where.ToString() << ": error: ";
  if (!element.empty()) os << "element '" << element << "': ";
  if (!bond.empty()) os << "bond '" << bond << "': ";
  os << message;
  if (!expected.empty()) os << "\n  expected: " << expected;
  if (!got.empty()) os << "\n  got:      " << got;
  if (!hint.empty()) os << "\n  hint:     " << hint;
  return os.str();
}

void ThrowAt(const SourceLocation& where, const std::string& element, const std::string& message,
             const std::string& expected, const std::string& got, const std::string& hint) {
  Diagnostic d;
  d.where = where;
  d.element = element;
  d.message = message;
  d.expected = expected;
  d.got = got;
  d.hint = hint;
  throw Error(d);
}

Error::Error(Diagnostic d) : std::runtime_error(d.ToString()), diag_(std::move(d)) {}

Error::Error(const std::string& message) : std::runtime_error(message) { diag_.message = message; }

}  // namespace paynter
