#include "paynter/error.h"

#include <cstdio>
#include <sstream>

#include <algorithm>
#include <vector>

namespace paynter {

int EditDistance(const std::string& a, const std::string& b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int sub = prev[j - 1] + (std::tolower(a[i - 1]) == std::tolower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  int best_d = 1 << 30;
  for (const auto& c : candidates) {
    int d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  if (best.empty() || best_d > std::max<int>(2, static_cast<int>(word.size()) / 3)) return "";
  return "did you mean '" + best + "'?";
}


std::string EscapeForTerminal(const std::string& text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  auto hex = [&](unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c == '\n' && keep_newlines) || c == '\t' || (c >= 0x20 && c < 0x7f)) {
      out += static_cast<char>(c);
      continue;
    }
    if (c < 0x80) {  // C0 controls, DEL, and a newline where none may be
      hex(c);
      continue;
    }
    // UTF-8: a well-formed sequence is kept, unless it encodes a C1 control
    // (U+0080..U+009F, which terminals may read as escape sequences).
    const size_t len = c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
    bool ok = len > 0 && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (ok && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) ok = false;
    if (!ok) {
      hex(c);
      continue;
    }
    out.append(text, i, len);
    i += len - 1;
  }
  return out;
}

std::string SourceLocation::ToString() const {
  std::ostringstream os;
  os << (file.empty() ? "<model>" : file);
  if (line > 0) {
    os << ':' << line;
    if (column > 0) os << ':' << column;
  }
  return os.str();
}

// Names, texts and paths come from the user's files and arguments: control
// characters are shown escaped (\x1b), never sent to the terminal as they are.
std::string Diagnostic::ToString() const {
  auto line = [](const std::string& s) { return EscapeForTerminal(s, false); };
  auto lines = [](const std::string& s) { return EscapeForTerminal(s, true); };
  std::ostringstream os;
  os << line(where.ToString()) << ": error: ";
  if (!element.empty()) os << "element '" << line(element) << "': ";
  if (!bond.empty()) os << "bond '" << line(bond) << "': ";
  os << lines(message);
  if (!expected.empty()) os << "\n  expected: " << lines(expected);
  if (!got.empty()) os << "\n  got:      " << lines(got);
  if (!hint.empty()) os << "\n  hint:     " << lines(hint);
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

void ThrowAtBond(const SourceLocation& where, const std::string& bond, const std::string& message,
                 const std::string& expected, const std::string& got, const std::string& hint) {
  Diagnostic d;
  d.where = where;
  d.bond = bond;
  d.message = message;
  d.expected = expected;
  d.got = got;
  d.hint = hint;
  throw Error(d);
}

Error::Error(Diagnostic d) : std::runtime_error(d.ToString()), diag_(std::move(d)) {}

Error::Error(const std::string& message) : std::runtime_error(EscapeForTerminal(message, true)) {
  diag_.message = message;
}

}  // namespace paynter
