// Graphical edits as edits of a model's text (text_edit.h).
#include "text_edit.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cmath>
#include <optional>
#include <regex>

#include "paynter/error.h"

namespace paynter::studio {

namespace {

// The text, parsed once; the positions of its nodes are the parser's (Mark).
class Written {
 public:
  explicit Written(const EditInput& in) : in_(in) {
    try {
      root_ = YAML::Load(in.text);
    } catch (const YAML::Exception& e) {
      ThrowAt({in.file, e.mark.line + 1, e.mark.column + 1}, "", "the model's text is not YAML the studio can edit: " + e.msg,
              "a model file that loads", "a YAML syntax error", "put the text right first (the error is shown at its line)");
    }
    if (!root_.IsMap())
      ThrowAt({in.file, 1, 1}, "", "the model's top level is not a mapping", "keys such as elements: and bonds:",
              "something else");
  }
  const YAML::Node& root() const { return root_; }
  const std::string& text() const { return in_.text; }
  const std::string& file() const { return in_.file; }

  SourceLocation Where(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    return {in_.file, m.line + 1, m.column + 1};
  }
  [[noreturn]] void Refuse(const YAML::Node& n, const std::string& message, const std::string& expected,
                           const std::string& got, const std::string& hint = "") const {
    ThrowAt(Where(n), "", message, expected, got, hint);
  }

  static bool Flow(const YAML::Node& n) { return n.Style() == YAML::EmitterStyle::Flow; }

  // Where a scalar written at `pos` ends: after its closing quote, or before
  // what ends a plain scalar (a comment, a line break; in a flow collection
  // also , ] }), trailing blanks left out.
  size_t ScalarEnd(size_t pos, bool flow) const {
    const std::string& t = in_.text;
    const size_t n = t.size();
    if (pos < n && t[pos] == '"') {
      for (size_t i = pos + 1; i < n; ++i) {
        if (t[i] == '\\') ++i;
        else if (t[i] == '"') return i + 1;
      }
      return n;
    }
    if (pos < n && t[pos] == '\'') {
      for (size_t i = pos + 1; i < n; ++i)
        if (t[i] == '\'') {
          if (i + 1 < n && t[i + 1] == '\'') ++i;
          else return i + 1;
        }
      return n;
    }
    size_t i = pos;
    for (; i < n && t[i] != '\n'; ++i) {
      const char c = t[i];
      if (flow && (c == ',' || c == ']' || c == '}')) break;
      if (c == '#' && i > pos && std::isspace(static_cast<unsigned char>(t[i - 1]))) break;
      if (c == ':' && (i + 1 == n || std::isspace(static_cast<unsigned char>(t[i + 1])) ||
                       (flow && std::string(",]}").find(t[i + 1]) != std::string::npos)))
        break;
    }
    while (i > pos && (t[i - 1] == ' ' || t[i - 1] == '\t' || t[i - 1] == '\r')) --i;
    return i;
  }

  // Where a flow collection written at `pos` ([ or {) ends: after its closing
  // bracket (quotes and comments skipped).
  size_t FlowEnd(size_t pos) const {
    const std::string& t = in_.text;
    int depth = 0;
    for (size_t i = pos; i < t.size(); ++i) {
      const char c = t[i];
      if (c == '"' || c == '\'') {
        i = ScalarEnd(i, true) - 1;
      } else if (c == '#' && i > 0 && std::isspace(static_cast<unsigned char>(t[i - 1]))) {
        while (i < t.size() && t[i] != '\n') ++i;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if (c == ']' || c == '}') {
        if (--depth == 0) return i + 1;
      }
    }
    return t.size();
  }

  // The characters of a value written at its node: [begin, end).
  std::pair<size_t, size_t> Extent(const YAML::Node& n, bool in_flow) const {
    const size_t pos = static_cast<size_t>(n.Mark().pos);
    if (n.IsScalar()) return {pos, ScalarEnd(pos, in_flow)};
    if ((n.IsMap() || n.IsSequence()) && Flow(n)) return {pos, FlowEnd(pos)};
    Refuse(n, "the studio edits single values and one-line lists or mappings here", "a value on one line",
           "a block written over several lines", "edit it in the text");
  }

 private:
  const EditInput& in_;
  YAML::Node root_;
};

void CheckName(const std::string& name, const std::string& what, const std::string& file) {
  static const std::regex ident("[A-Za-z_][A-Za-z0-9_.]*");
  if (!std::regex_match(name, ident))
    ThrowAt({file}, "", fmt::format("studio: '{}' is not {}", name, what), "an identifier", name);
}

// The text with [begin, end) replaced by `with`.
std::string Replaced(const std::string& text, size_t begin, size_t end, const std::string& with) {
  return text.substr(0, begin) + with + text.substr(end);
}

// The text with `key: value` set in the mapping `map`: the old value
// replaced, or the pair added at its end (inside the braces of a one-line
// mapping; on a line of its own, at its keys' indentation, in a block one).
std::string SetInMap(const Written& w, const YAML::Node& map, const std::string& key, const std::string& given,
                     bool raw = false) {
  const std::string value = raw || given.empty() ? given : YamlValue(given);
  const std::string& t = w.text();
  const bool flow = Written::Flow(map);
  std::optional<YAML::Node> last_key, last_value;
  for (const auto& kv : map) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) {
      if (kv.second.IsNull() && kv.second.Mark().pos < 0)
        w.Refuse(kv.first, fmt::format("'{}' has no value written", key), "key: value", "key:", "edit it in the text");
      if (!value.empty()) {
        const auto [b, e] = w.Extent(kv.second, flow);
        return Replaced(t, b, e, value);
      }
      // Removed: the pair and the comma that joins it to the others (one-line
      // mappings), or its whole line (block ones).
      const size_t kb = static_cast<size_t>(kv.first.Mark().pos);
      const size_t ve = w.Extent(kv.second, flow).second;
      if (flow) {
        size_t b = kb, e = ve;
        size_t before = b;
        while (before > 0 && std::isspace(static_cast<unsigned char>(t[before - 1]))) --before;
        if (before > 0 && t[before - 1] == ',') {
          b = before - 1;
        } else {
          size_t after = e;
          while (after < t.size() && std::isspace(static_cast<unsigned char>(t[after]))) ++after;
          if (after < t.size() && t[after] == ',') {
            e = after + 1;
            while (e < t.size() && t[e] == ' ') ++e;
          }
        }
        return Replaced(t, b, e, "");
      }
      const size_t line_begin = t.rfind('\n', kb) == std::string::npos ? 0 : t.rfind('\n', kb) + 1;
      if (t.find_first_not_of(" \t", line_begin) != kb)
        w.Refuse(kv.first, fmt::format("'{}' shares its line with another key", key), "one key a line", "more",
                 "edit it in the text");
      const size_t line_end = t.find('\n', ve);
      return Replaced(t, line_begin, line_end == std::string::npos ? t.size() : line_end + 1, "");
    }
    last_key = kv.first;
    last_value = kv.second;
  }
  if (value.empty()) return t;  // nothing to remove
  const std::string pair = (raw ? YamlValue(key) : key) + ": " + value;
  if (flow) {
    size_t close = w.FlowEnd(static_cast<size_t>(map.Mark().pos)) - 1;  // the '}'
    size_t at = close;
    while (at > 0 && std::isspace(static_cast<unsigned char>(t[at - 1]))) --at;
    const bool empty = t[at - 1] == '{';
    return Replaced(t, at, at, (empty ? "" : ", ") + pair);
  }
  if (!last_key)
    w.Refuse(map, "the mapping has no key to place the new one by", "a mapping with keys", "an empty block");
  const size_t ve = w.Extent(*last_value, false).second;
  const size_t eol = t.find('\n', ve);
  const std::string indent(static_cast<size_t>(last_key->Mark().column), ' ');
  if (eol == std::string::npos) return t + "\n" + indent + pair + "\n";
  return Replaced(t, eol, eol, "\n" + indent + pair);
}

// A top-level section, nullopt when it is not there or empty.
std::optional<YAML::Node> Section(const Written& w, const std::string& key, YAML::NodeType::value type,
                                  const std::string& shape) {
  const YAML::Node s = w.root()[key];
  if (!s.IsDefined() || s.IsNull()) return std::nullopt;
  if (s.Type() != type) w.Refuse(s, fmt::format("'{}' is not {}", key, shape), shape, "something else");
  return s;
}

}  // namespace

std::string YamlValue(const std::string& value) {
  for (char c : value)
    if (c == '\n' || c == '\r')
      ThrowAt({"studio"}, "", "studio: a value is one line", "a number, name or expression", "a line break");
  static const std::regex plain(R"([A-Za-z0-9_.(]([A-Za-z0-9_.+*/^() -]*[A-Za-z0-9_.)])?|-[A-Za-z0-9_.(][A-Za-z0-9_.+*/^() -]*)");
  static const std::regex special("(?:null|Null|NULL|true|True|TRUE|false|False|FALSE|yes|Yes|no|No|on|On|off|Off|~)");
  if (std::regex_match(value, plain) && !std::regex_match(value, special) && value.back() != ' ') return value;
  std::string q = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

std::string FlipBond(const EditInput& in, const std::string& from, const std::string& to, int line) {
  const Written w(in);
  const auto bonds = Section(w, "bonds", YAML::NodeType::Sequence, "a list of bonds");
  const bool flow = bonds && Written::Flow(*bonds);
  std::optional<YAML::Node> found_a, found_b;
  bool found_flow = false;
  if (bonds)
    for (const auto& b : *bonds) {
      YAML::Node a, z;
      if (b.IsSequence() && b.size() == 2) {
        a = b[0];
        z = b[1];
      } else if (b.IsMap() && b["from"] && b["to"]) {
        a = b["from"];
        z = b["to"];
      } else {
        continue;
      }
      if (!a.IsScalar() || !z.IsScalar() || a.Scalar() != from || z.Scalar() != to) continue;
      if (found_a && line > 0 && b.Mark().line + 1 != line) continue;
      found_a = a;
      found_b = z;
      found_flow = flow || Written::Flow(b);
      if (line <= 0 || b.Mark().line + 1 == line) break;
    }
  if (!found_a)
    ThrowAt({in.file}, "", fmt::format("studio: no bond from {} to {} is written in bonds:", from, to),
            fmt::format("[{}, {}] or {{from: {}, to: {}}} in bonds:", from, to, from, to), "none",
            "a bond of a submodel, or of the multibody: section, is turned round where it is written");
  const auto ea = w.Extent(*found_a, found_flow), eb = w.Extent(*found_b, found_flow);
  const std::string ta = in.text.substr(ea.first, ea.second - ea.first);
  const std::string tb = in.text.substr(eb.first, eb.second - eb.first);
  // The later one first, so that the earlier's positions hold.
  if (ea.first < eb.first) return Replaced(Replaced(in.text, eb.first, eb.second, ta), ea.first, ea.second, tb);
  return Replaced(Replaced(in.text, ea.first, ea.second, tb), eb.first, eb.second, ta);
}

std::string SetElementField(const EditInput& in, const std::string& element, const std::string& key,
                            const std::string& value) {
  CheckName(element, "an element's name", in.file);
  CheckName(key, "a key", in.file);
  if (key == "name" || key == "kind")
    ThrowAt({in.file}, "", fmt::format("studio: the panel does not change an element's {}", key),
            "a law key or initial", key, "rename or change the kind in the text");
  const Written w(in);
  const auto elements = Section(w, "elements", YAML::NodeType::Sequence, "a list of elements");
  if (elements)
    for (const auto& e : *elements)
      if (e.IsMap() && e["name"] && e["name"].IsScalar() && e["name"].Scalar() == element)
        return SetInMap(w, e, key, value);
  ThrowAt({in.file}, "", fmt::format("studio: no element {} is written in elements:", element),
          "an element of this file", element, "an element of a submodel is changed in its own file");
}

std::string SetParameter(const EditInput& in, const std::string& name, const std::string& value) {
  CheckName(name, "a parameter's name", in.file);
  if (value.empty())
    ThrowAt({in.file}, "", fmt::format("studio: parameter {} needs a value", name), "a number or expression", "nothing");
  const Written w(in);
  const auto params = Section(w, "parameters", YAML::NodeType::Map, "a mapping of parameters");
  if (params) return SetInMap(w, *params, name, value);
  // No parameters yet: a section of its own, before elements: (or at the end).
  const std::string& t = in.text;
  const std::string section = "parameters:\n  " + name + ": " + YamlValue(value) + "\n";
  if (w.root()["parameters"].IsDefined()) {  // `parameters:` with nothing after it
    for (const auto& kv : w.root())
      if (kv.first.Scalar() == "parameters") {
        const size_t eol = t.find('\n', static_cast<size_t>(kv.first.Mark().pos));
        const std::string entry = "\n  " + name + ": " + YamlValue(value);
        return eol == std::string::npos ? t + entry + "\n" : Replaced(t, eol, eol, entry);
      }
  }
  for (const auto& kv : w.root())
    if (kv.first.Scalar() == "elements" && kv.first.Mark().column == 0) {
      const size_t at = static_cast<size_t>(kv.first.Mark().pos);
      return Replaced(t, at, at, section);
    }
  return t + (t.empty() || t.back() == '\n' ? "" : "\n") + section;
}

std::string SetLayout(const EditInput& in, const std::map<std::string, std::pair<double, double>>& positions) {
  std::string text = in.text;
  auto pos = [](const std::pair<double, double>& p) {
    return fmt::format("[{}, {}]", std::lround(p.first), std::lround(p.second));
  };
  {
    const Written w(in);
    if (!w.root()["layout"].IsDefined() || w.root()["layout"].IsNull()) {
      std::string section = "layout:  # where paynter studio draws each element (points; x to the right, y up)\n";
      for (const auto& [name, p] : positions) section += "  " + YamlValue(name) + ": " + pos(p) + "\n";
      if (w.root()["layout"].IsDefined())  // `layout:` with nothing after it: its line replaced
        for (const auto& kv : w.root())
          if (kv.first.Scalar() == "layout") {
            const size_t b = static_cast<size_t>(kv.first.Mark().pos), eol = text.find('\n', b);
            return Replaced(text, b, eol == std::string::npos ? text.size() : eol + 1, section);
          }
      return text + (text.empty() || text.back() == '\n' ? "" : "\n") + section;
    }
  }
  // One position at a time, each on the text the last one left.
  for (const auto& [name, p] : positions) {
    const EditInput now{text, in.file};
    const Written w(now);
    const auto layout = Section(w, "layout", YAML::NodeType::Map, "a mapping of names to [x, y]");
    text = SetInMap(w, *layout, name, pos(p), true);
  }
  return text;
}

}  // namespace paynter::studio
