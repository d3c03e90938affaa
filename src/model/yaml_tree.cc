// Model files' YAML read with libyaml's event parser into paynter's own tree
// (yaml_tree.h). A node is a record of 20 bytes, a scalar's text a slice of
// one buffer: reading a model of 10^5 bonds builds no object per scalar.
#include "yaml_tree.h"

#include <fmt/format.h>
#include <yaml.h>

#include <algorithm>
#include <bitset>
#include <optional>
#include <unordered_map>

#include "paynter/error.h"
#include "paynter/model.h"

namespace paynter::yaml {

// ---------------------------------------------------------------------------
// Node

NodeType Node::Type() const { return doc_ ? doc_->nodes_[id_].type : NodeType::Null; }

std::string_view Node::Text() const {
  if (!doc_) return {};
  const auto& r = doc_->nodes_[id_];
  if (r.type != NodeType::Scalar) return {};
  return std::string_view(doc_->text_).substr(r.begin, r.count);
}

Mark Node::Mark() const {
  if (!doc_) return {};
  const auto& r = doc_->nodes_[id_];
  return {r.line, r.column};
}

size_t Node::size() const {
  if (!doc_) return 0;
  const auto& r = doc_->nodes_[id_];
  return r.type == NodeType::Sequence || r.type == NodeType::Map ? r.count : 0;
}

Node Node::operator[](size_t i) const {
  if (!IsSequence() || i >= size()) return {};
  return Node(doc_, doc_->children_[doc_->nodes_[id_].begin + i]);
}

Node Node::operator[](std::string_view key) const {
  if (!IsMap()) return {};
  for (const auto [k, v] : Entries())
    if (k.IsScalar() && k.Text() == key) return v;
  return {};
}

ItemIterator Node::begin() const {
  if (!IsSequence()) return {doc_, nullptr};
  return {doc_, doc_->children_.data() + doc_->nodes_[id_].begin};
}

ItemIterator Node::end() const {
  if (!IsSequence()) return {doc_, nullptr};
  const auto& r = doc_->nodes_[id_];
  return {doc_, doc_->children_.data() + r.begin + r.count};
}

EntryRange Node::Entries() const {
  if (!IsMap()) return {{doc_, nullptr}, {doc_, nullptr}};
  const auto& r = doc_->nodes_[id_];
  const uint32_t* p = doc_->children_.data() + r.begin;
  return {{doc_, p}, {doc_, p + 2 * size_t(r.count)}};
}

namespace {

// ---------------------------------------------------------------------------
// What libyaml reads. Its reader refuses bytes that are not UTF-8 and control
// characters, and takes U+0085, U+2028 and U+2029 for line breaks and U+FEFF
// at a line's start for a byte order mark; a model file may hold any of them
// in a scalar (a name shown escaped, a description) as it always could. Each
// such byte is given to libyaml as a private-use character of plane 15 or 16
// (placeholder base + the byte), from a block of 256 that the file does not
// use, and put back in the scalars' text.

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The length of the UTF-8 sequence at s[i] and its code point, or 0 when the
// bytes there are no valid sequence (bad lead, short, overlong, surrogate).
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n;
  uint32_t v;
  if (c >= 0xC2 && c <= 0xDF) n = 2, v = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, v = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, v = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if (!IsContinuation(b(k))) return 0;
    v = (v << 6) | (b(k) & 0x3F);
  }
  if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10FFFF)) || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return n;
}

// A character that libyaml reads as yaml-cpp did: printable, no line break
// of its own, no byte order mark past the start.
bool PassesAsIs(uint32_t cp, size_t at) {
  if (cp < 0x80) return cp == 0x09 || cp == 0x0A || cp == 0x0D || (cp >= 0x20 && cp <= 0x7E);
  if (cp < 0xA0 || cp == 0x2028 || cp == 0x2029 || cp == 0xFFFE || cp == 0xFFFF) return false;
  if (cp == 0xFEFF) return at == 0;
  return true;
}

constexpr uint32_t kPlaceholderPlanes = 0xF0000;  // planes 15 and 16: 512 blocks of 256

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

struct Input {
  std::string_view fed;    // what libyaml reads: the file's bytes, or `own`
  std::string own;         // the file with placeholders, when it needs them
  bool placeholders = false;
  uint32_t base = 0;       // the placeholder of byte 0
  bool utf16 = false;      // a UTF-16 file (its byte order mark): libyaml decodes it, columns in characters
  size_t bom = 0;          // the UTF-8 byte order mark's length at the start (0 or 3)
};

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

Input PrepareInput(std::string_view text, const std::string& label) {
  Input in;
  in.fed = text;
  if (text.size() >= 2 && ((text[0] == '\xFF' && text[1] == '\xFE') || (text[0] == '\xFE' && text[1] == '\xFF'))) {
    in.utf16 = true;
    return in;
  }
  if (text.substr(0, 3) == "\xEF\xBB\xBF") in.bom = 3;
  std::bitset<512> used;  // the placeholder blocks that the file's characters (or its \U escapes) use
  bool bad = false;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c <= 0x7E) {  // the common case
      if (c == '\\' && i + 10 <= text.size() && text[i + 1] == 'U' &&
          std::all_of(text.begin() + i + 2, text.begin() + i + 10, IsHex)) {
        const uint32_t cp = static_cast<uint32_t>(std::stoul(std::string(text.substr(i + 2, 8)), nullptr, 16));
        if (cp >= kPlaceholderPlanes && cp <= 0x10FFFF) used.set((cp - kPlaceholderPlanes) >> 8);
      }
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = DecodeUtf8(text, i, &cp);
    if (n == 0 || !PassesAsIs(cp, i == in.bom ? 0 : i)) {
      bad = true;
      i += std::max<size_t>(n, 1);
      continue;
    }
    if (cp >= kPlaceholderPlanes) used.set((cp - kPlaceholderPlanes) >> 8);
    i += n;
  }
  if (!bad) return in;
  size_t block = 0;
  while (block < used.size() && used[block]) ++block;
  if (block == used.size())
    ThrowAt({label, 0, 0}, "", "the model file holds bytes that are not UTF-8 (or control characters) beside 512 blocks of private-use characters",
            "UTF-8 text", "bytes that cannot be read", "save the file as UTF-8");
  in.placeholders = true;
  in.base = kPlaceholderPlanes + static_cast<uint32_t>(block) * 256;
  in.own.reserve(text.size() + text.size() / 8);
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const size_t n = DecodeUtf8(text, i, &cp);
    if (n != 0 && PassesAsIs(cp, i == in.bom ? 0 : i)) {
      in.own.append(text.substr(i, n));
      i += n;
    } else {
      for (size_t k = 0; k < std::max<size_t>(n, 1); ++k)
        AppendUtf8(&in.own, in.base + static_cast<unsigned char>(text[i + k]));
      i += std::max<size_t>(n, 1);
    }
  }
  in.fed = in.own;
  return in;
}

// `s` (a scalar's text from libyaml) with each placeholder as its byte again.
void RestoreBytes(const Input& in, std::string_view s, std::string* out) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0xF3) {
      uint32_t cp = 0;
      const size_t n = DecodeUtf8(s, i, &cp);
      if (n == 4 && cp >= in.base && cp < in.base + 256) {
        out->push_back(static_cast<char>(cp - in.base));
        i += 4;
        continue;
      }
    }
    out->push_back(s[i]);
    ++i;
  }
}

// ---------------------------------------------------------------------------
// Places. libyaml counts a mark's column in characters of what it read;
// paynter's messages (as yaml-cpp's marks did) count bytes of the file from
// the line's start. A cursor walks the text once as the events come in order.
class Locator {
 public:
  explicit Locator(const Input& in) : in_(in) { Reset(); }

  // The line and byte column (from 0) of libyaml's mark.
  Mark At(const yaml_mark_t& m) {
    if (in_.utf16) return {static_cast<int>(m.line), static_cast<int>(m.column)};
    if (m.index < index_) Reset();
    while (index_ < m.index && fed_ < in_.fed.size()) Step();
    return {static_cast<int>(m.line), static_cast<int>(file_ - line_start_)};
  }

  // The byte where the cursor stands (0 at the end).
  char Here() const { return !in_.utf16 && fed_ < in_.fed.size() ? in_.fed[fed_] : 0; }

  // Where the next token after the mark starts (past blanks, line breaks and
  // comments): yaml-cpp's place of an empty value, which libyaml puts at the
  // ':' or '-' before it.
  Mark NextTokenAfter(const yaml_mark_t& m) {
    Mark at = At(m);
    if (in_.utf16) return at;
    Locator c = *this;  // the cursor stays at the mark
    int line = at.line;
    while (c.fed_ < in_.fed.size()) {
      const char ch = in_.fed[c.fed_];
      if (ch == ' ' || ch == '\t') {
        c.Step();
      } else if (ch == '\n' || ch == '\r') {
        const bool crlf = ch == '\r' && c.fed_ + 1 < in_.fed.size() && in_.fed[c.fed_ + 1] == '\n';
        c.Step();
        if (crlf) c.Step();
        ++line;
      } else if (ch == '#') {
        while (c.fed_ < in_.fed.size() && in_.fed[c.fed_] != '\n' && in_.fed[c.fed_] != '\r') c.Step();
      } else {
        break;
      }
    }
    return {line, static_cast<int>(c.file_ - c.line_start_)};
  }

  // The line and byte column of a byte offset in what libyaml read (its
  // reader's errors give one).
  Mark AtOffset(size_t offset) {
    if (in_.utf16) return {0, 0};
    Reset();
    int line = 0;
    while (fed_ < offset && fed_ < in_.fed.size()) {
      const char ch = in_.fed[fed_];
      if (ch == '\n' || (ch == '\r' && !(fed_ + 1 < in_.fed.size() && in_.fed[fed_ + 1] == '\n'))) ++line;
      Step();
    }
    return {line, static_cast<int>(file_ - line_start_)};
  }

 private:
  void Reset() {
    index_ = 0;
    fed_ = file_ = line_start_ = in_.bom;
  }
  // One character on.
  void Step() {
    const unsigned char c = static_cast<unsigned char>(in_.fed[fed_]);
    if (c < 0x80) {
      ++fed_;
      ++file_;
      ++index_;
      if (c == '\n' || (c == '\r' && !(fed_ < in_.fed.size() && in_.fed[fed_] == '\n'))) line_start_ = file_;
      return;
    }
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    n = std::min(n, in_.fed.size() - fed_);
    size_t bytes = n;
    if (in_.placeholders && n == 4) {
      uint32_t cp = 0;
      if (DecodeUtf8(in_.fed, fed_, &cp) == 4 && cp >= in_.base && cp < in_.base + 256) bytes = 1;
    }
    fed_ += n;
    file_ += bytes;
    ++index_;
  }

  const Input& in_;
  size_t index_ = 0;       // characters read
  size_t fed_ = 0;         // bytes of what libyaml reads
  size_t file_ = 0;        // bytes of the file
  size_t line_start_ = 0;  // the file's byte where the line starts
};

// ---------------------------------------------------------------------------
// The tree, built from the events.

bool IsNullText(std::string_view s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

struct Located {
  SourceLocation where;
  std::string message, expected, got, hint;
  std::string element = "";
};

}  // namespace

class Builder {
 public:
  Builder(std::string_view text, const std::string& label) : label_(label), in_(PrepareInput(text, label)), at_(in_) {}

  Document Run() {
    struct Parser {
      yaml_parser_t p;
      Parser() { yaml_parser_initialize(&p); }
      ~Parser() { yaml_parser_delete(&p); }
    } parser;
    struct Event {
      yaml_event_t e;
      bool live = false;
      ~Event() {
        if (live) yaml_event_delete(&e);
      }
    };
    yaml_parser_set_input_string(&parser.p, reinterpret_cast<const unsigned char*>(in_.fed.data()), in_.fed.size());
    int documents = 0;
    bool root_set = false;
    for (;;) {
      Event ev;
      if (!yaml_parser_parse(&parser.p, &ev.e)) Malformed(parser.p);
      ev.live = true;
      const yaml_event_t& e = ev.e;
      switch (e.type) {
        case YAML_STREAM_END_EVENT:
          return Finish(root_set);
        case YAML_DOCUMENT_START_EVENT:
          if (++documents > 1)
            ThrowAt(Where(at_.At(e.start_mark)), "", "the model file holds more than one YAML document",
                    "one document", "a second one here",
                    "a model is one document: remove this '---' and what follows it, or move that to a file of its own");
          break;
        case YAML_DOCUMENT_END_EVENT:
        case YAML_STREAM_START_EVENT:
        case YAML_NO_EVENT:
          break;
        case YAML_ALIAS_EVENT: {
          const Mark m = at_.At(e.start_mark);
          CheckDepth(m);
          const auto it = anchors_.find(reinterpret_cast<const char*>(e.data.alias.anchor));
          if (it == anchors_.end())
            ThrowAt(Where(m), "", "malformed YAML: the referenced anchor is not defined", "an anchor (&name) before its alias (*name)",
                    std::string("*") + reinterpret_cast<const char*>(e.data.alias.anchor),
                    "write the anchor (&name) on the node to repeat, above its first alias");
          const uint32_t id = it->second;
          if (sizes_[id] == 0 && !first_error_) {  // a list or mapping still open
            const auto& r = doc_.nodes_[id];
            Record({Where({r.line, r.column}), "an alias refers to a list or mapping that contains it",
                    "an alias of a finished node", "a node that holds itself",
                    "an alias (*name) may only repeat a node whose anchor (&name) is closed"});
          }
          Add(id);
          root_set = true;
          break;
        }
        case YAML_SCALAR_EVENT: {
          const auto& s = e.data.scalar;
          const std::string_view value(reinterpret_cast<const char*>(s.value), s.length);
          const bool null = s.tag == nullptr && s.style == YAML_PLAIN_SCALAR_STYLE && IsNullText(value);
          // An empty node without anchor or tag has no width: yaml-cpp put it
          // where the next token starts.
          const bool empty = e.start_mark.index == e.end_mark.index;
          const Mark m = empty ? at_.NextTokenAfter(e.start_mark) : at_.At(e.start_mark);
          CheckDepth(m);
          const uint32_t id = NewNode(null ? NodeType::Null : NodeType::Scalar, m);
          if (!null) {
            auto& r = doc_.nodes_[id];
            r.begin = static_cast<uint32_t>(doc_.text_.size());
            if (in_.placeholders)
              RestoreBytes(in_, value, &doc_.text_);
            else
              doc_.text_.append(value);
            r.count = static_cast<uint32_t>(doc_.text_.size() - r.begin);
          }
          sizes_.push_back(1);
          Anchor(s.anchor, id);
          Add(id);
          root_set = true;
          break;
        }
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
          const bool map = e.type == YAML_MAPPING_START_EVENT;
          const bool flow = map ? e.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE
                                : e.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
          const Mark m = at_.At(e.start_mark);
          CheckDepth(m);
          if (flow && ++flow_depth_ >= kMaxYamlFlowDepth)
            ThrowAt(Where(m), "", fmt::format("malformed YAML: lists and mappings in brackets nested {} deep", kMaxYamlFlowDepth),
                    fmt::format("at most {} levels of [...] and {{...}}", kMaxYamlFlowDepth - 1), "more",
                    "a model's lists and mappings nest a few levels: look for unclosed '[' or '{'");
          const uint32_t id = NewNode(map ? NodeType::Map : NodeType::Sequence, m);
          sizes_.push_back(0);  // 0: open
          Anchor(map ? e.data.mapping_start.anchor : e.data.sequence_start.anchor, id);
          const bool in_list = !open_.empty() && doc_.nodes_[open_.back().id].type == NodeType::Sequence;
          Add(id);
          open_.push_back({id, pending_.size(), in_list, flow});
          root_set = true;
          break;
        }
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
          Close();
          break;
      }
    }
  }

 private:
  static constexpr const char* kMalformedHint = "check indentation and that lists use '- ' and mappings 'key: value'";

  struct Open {
    uint32_t id;
    size_t first;  // its children's start in pending_
    bool in_list;  // an item of a list (an element, a bond, ...)
    bool flow;     // in brackets
  };

  SourceLocation Where(const Mark& m) const {
    if (m.line < 0) return {label_, 0, 0};
    return {label_, m.line + 1, m.column + 1};
  }

  [[noreturn]] void Malformed(const yaml_parser_t& p) {
    Mark m;
    char at = 0;  // the character where libyaml stopped
    if (p.error == YAML_READER_ERROR) {
      m = at_.AtOffset(p.problem_offset);
    } else {
      m = at_.At(p.problem_mark);
      at = at_.Here();
    }
    const std::string problem = p.problem ? p.problem : "cannot be read";
    std::string message = "malformed YAML: " + problem;
    std::string hint = kMalformedHint;
    if (problem == "did not find expected <document start>") {
      // The top level ended (a line indented less than the first) and text follows.
      message = "malformed YAML: a line outside the top-level mapping";
      hint = "the top level's keys (name:, elements:, bonds: ...) all start in the same column, "
             "and no line is indented less than they are";
    } else {
      if (p.context) {
        const Mark c = at_.At(p.context_mark);
        message += fmt::format(" ({} at line {}, column {})", p.context, c.line + 1, c.column + 1);
      }
      if (at == '\t') hint = "YAML indents with spaces, not tabs";
    }
    ThrowAt(Where(m), "", message, "", "", hint);
  }

  // A node at depth kMaxYamlDepth (yaml-cpp's bound too) is refused before
  // anything nested deeper can cost stack further on.
  void CheckDepth(const Mark& m) const {
    if (static_cast<int>(open_.size()) + 1 >= kMaxYamlDepth)
      ThrowAt(Where(m), "", fmt::format("malformed YAML: lists and mappings nested {} deep", kMaxYamlDepth),
              fmt::format("at most {} levels", kMaxYamlDepth - 1), "more",
              "a model's lists and mappings nest a few levels: look for unclosed '[' or '{'");
  }

  uint32_t NewNode(NodeType type, const Mark& m) {
    // More nodes than kMaxYamlNodes in the file itself: its tree is larger
    // still. Said at once, at the innermost list or mapping that holds more
    // (the nodes after an open one's start are its own).
    if (doc_.nodes_.size() >= kMaxYamlNodes) {
      const size_t n = doc_.nodes_.size() + 1;
      auto it = std::find_if(open_.rbegin(), open_.rend(), [&](const Open& o) { return n - o.id > kMaxYamlNodes; });
      const auto& r = doc_.nodes_[it != open_.rend() ? it->id : 0];
      ThrowAt(Where({r.line, r.column}), "",
              fmt::format("the YAML expands to more than {} nodes (kMaxYamlNodes)", kMaxYamlNodes),
              fmt::format("at most {} lists, mappings, keys and values, an alias counted at each use", kMaxYamlNodes),
              fmt::format("{} or more under this node", n - (it != open_.rend() ? it->id : 0)),
              "a model of this size is better written as submodels (instances: with use: <file>)");
    }
    doc_.nodes_.push_back({type, m.line, m.column, 0, 0});
    return static_cast<uint32_t>(doc_.nodes_.size() - 1);
  }

  void Anchor(const yaml_char_t* name, uint32_t id) {
    if (name) anchors_[reinterpret_cast<const char*>(name)] = id;
  }

  void Add(uint32_t id) {
    if (open_.empty()) {
      doc_.root_ = id;
      return;
    }
    pending_.push_back(id);
  }

  void Record(Located e) {
    if (!first_error_) first_error_ = std::move(e);
  }

  void Close() {
    const Open o = open_.back();
    open_.pop_back();
    if (o.flow) --flow_depth_;
    auto& r = doc_.nodes_[o.id];
    const size_t n = pending_.size() - o.first;
    r.begin = static_cast<uint32_t>(doc_.children_.size());
    r.count = static_cast<uint32_t>(r.type == NodeType::Map ? n / 2 : n);
    doc_.children_.insert(doc_.children_.end(), pending_.begin() + o.first, pending_.end());
    pending_.resize(o.first);
    const uint32_t* c = doc_.children_.data() + r.begin;
    // Its size: itself and its children's, an alias counted at each use.
    uint64_t size = 1;
    for (size_t i = 0; i < n; ++i) size += sizes_[c[i]];
    if (size > kMaxYamlNodes) {
      Record({Where({r.line, r.column}), fmt::format("the YAML expands to more than {} nodes (kMaxYamlNodes)", kMaxYamlNodes),
              fmt::format("at most {} lists, mappings, keys and values, an alias counted at each use", kMaxYamlNodes),
              fmt::format("{} or more under this node", size),
              "aliases (*name) of aliases multiply the tree: write the parts out, or use submodels"});
      size = kMaxYamlNodes + 1;
    }
    sizes_[o.id] = static_cast<uint32_t>(size);
    if (r.type == NodeType::Map && !first_error_) CheckDuplicateKeys(o, c, n / 2);
  }

  // A key given twice in one mapping is an error (YAML forbids it; a reader
  // would otherwise see only one of them).
  void CheckDuplicateKeys(const Open& o, const uint32_t* c, size_t entries) {
    const auto key = [&](size_t i) -> std::string_view {
      const auto& k = doc_.nodes_[c[2 * i]];
      return std::string_view(doc_.text_).substr(k.begin, k.count);
    };
    const auto scalar_key = [&](size_t i) { return doc_.nodes_[c[2 * i]].type == NodeType::Scalar; };
    std::optional<std::pair<size_t, size_t>> dup;  // the first key given again, and its first place
    if (entries <= 16) {
      for (size_t j = 1; j < entries && !dup; ++j)
        for (size_t i = 0; i < j && scalar_key(j); ++i)
          if (scalar_key(i) && key(i) == key(j)) {
            dup = {j, i};
            break;
          }
    } else {
      std::unordered_map<std::string_view, size_t> seen;
      seen.reserve(entries);
      for (size_t j = 0; j < entries && !dup; ++j) {
        if (!scalar_key(j)) continue;
        auto [it, fresh] = seen.emplace(key(j), j);
        if (!fresh) dup = {j, it->second};
      }
    }
    if (!dup) return;
    const auto [j, i] = *dup;
    // An entry of a list (an element, a bond) is named by its name, when that comes before.
    std::string name;
    if (o.in_list)
      for (size_t k = 0; k < j; ++k)
        if (scalar_key(k) && key(k) == "name") {
          const auto& v = doc_.nodes_[c[2 * k + 1]];
          if (v.type == NodeType::Scalar) name = std::string(std::string_view(doc_.text_).substr(v.begin, v.count));
          break;
        }
    const auto& first = doc_.nodes_[c[2 * i]];
    const auto& again = doc_.nodes_[c[2 * j]];
    const std::string k(key(j));
    Located e{Where({again.line, again.column}), fmt::format("duplicate key '{}'", k), "each key once in a mapping",
              fmt::format("'{}' at {}:{} and again at {}:{}", k, first.line + 1, first.column + 1, again.line + 1,
                          again.column + 1),
              "remove one of them (YAML keeps only one, silently)", name};
    Record(std::move(e));
  }

  Document Finish(bool root_set) {
    if (first_error_) {
      const Located& e = *first_error_;
      ThrowAt(e.where, e.element, e.message, e.expected, e.got, e.hint);
    }
    if (!root_set) {  // no document: the root is nothing, nowhere
      doc_.nodes_.push_back({NodeType::Null, -1, -1, 0, 0});
      doc_.root_ = static_cast<uint32_t>(doc_.nodes_.size() - 1);
    }
    return std::move(doc_);
  }

  const std::string& label_;
  Input in_;
  Locator at_;
  Document doc_;
  std::vector<uint32_t> sizes_;  // per node: 1 for a scalar, 0 for a list or mapping still open, else its size
  std::vector<Open> open_;
  std::vector<uint32_t> pending_;  // the children of the open lists and mappings, each's after its parent's
  std::unordered_map<std::string, uint32_t> anchors_;
  std::optional<Located> first_error_;
  int flow_depth_ = 0;  // the lists and mappings in brackets open
};

Document ReadYaml(std::string_view text, const std::string& label) { return Builder(text, label).Run(); }

}  // namespace paynter::yaml
