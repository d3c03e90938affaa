// The YAML of a model file as a small tree of paynter's own: libyaml's event
// parser reads the text; mappings keep their keys in file order, scalars their
// text and the place where they start. Only the model reader (yaml_loader.cc)
// uses it. docs/model-format.md says what a model file may hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace paynter::yaml {

// Where a node starts, from 0: the line, and the column in bytes from the
// line's start. line -1: nowhere (the root of a file without a document).
struct Mark {
  int line = -1;
  int column = -1;
};

enum class NodeType : uint8_t { Null, Scalar, Sequence, Map };

class Document;
class ItemIterator;
struct EntryRange;

// A node of a Document (which must outlive it), or no node (false): what
// looking up a key that a mapping does not have gives. An alias is the very
// node of its anchor. A node that is no mapping has no keys, one that is no
// list no items.
class Node {
 public:
  Node() = default;
  explicit operator bool() const { return doc_ != nullptr; }

  NodeType Type() const;
  bool IsNull() const { return Type() == NodeType::Null; }
  bool IsScalar() const { return Type() == NodeType::Scalar; }
  bool IsSequence() const { return Type() == NodeType::Sequence; }
  bool IsMap() const { return Type() == NodeType::Map; }
  // A scalar's text ("" for any other node).
  std::string_view Text() const;
  std::string Scalar() const { return std::string(Text()); }
  yaml::Mark Mark() const;
  // The items of a list, the entries of a mapping (0 for any other node).
  size_t size() const;
  Node operator[](size_t i) const;  // the i-th item of a list
  // The value of the first entry whose key is the scalar `key`, or no node.
  Node operator[](std::string_view key) const;
  // The same node (an alias and its anchor are).
  bool is(const Node& other) const { return doc_ == other.doc_ && id_ == other.id_; }

  // Iteration over a list's items: `for (Node x : list)`.
  ItemIterator begin() const;
  ItemIterator end() const;
  // Iteration over a mapping's entries: `for (auto kv : map.Entries())`, kv.first the key, kv.second the value.
  EntryRange Entries() const;

 private:
  friend class Document;
  friend class ItemIterator;
  friend class EntryIterator;
  Node(const Document* doc, uint32_t id) : doc_(doc), id_(id) {}
  const Document* doc_ = nullptr;
  uint32_t id_ = 0;
};

class ItemIterator {
 public:
  ItemIterator(const Document* doc, const uint32_t* p) : doc_(doc), p_(p) {}
  Node operator*() const { return Node(doc_, *p_); }
  ItemIterator& operator++() {
    ++p_;
    return *this;
  }
  bool operator!=(const ItemIterator& o) const { return p_ != o.p_; }

 private:
  const Document* doc_;
  const uint32_t* p_;
};

struct NodeEntry {
  Node first, second;  // the key, the value
};

class EntryIterator {
 public:
  EntryIterator(const Document* doc, const uint32_t* p) : doc_(doc), p_(p) {}
  NodeEntry operator*() const { return {Node(doc_, p_[0]), Node(doc_, p_[1])}; }
  EntryIterator& operator++() {
    p_ += 2;
    return *this;
  }
  bool operator!=(const EntryIterator& o) const { return p_ != o.p_; }

 private:
  const Document* doc_;
  const uint32_t* p_;
};

struct EntryRange {
  EntryIterator b, e;
  EntryIterator begin() const { return b; }
  EntryIterator end() const { return e; }
};

class Document {
 public:
  Document() = default;
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;
  Document(Document&&) = default;
  Document& operator=(Document&&) = default;

  Node Root() const { return Node(this, root_); }

 private:
  friend class Node;
  friend class Builder;
  struct Record {
    NodeType type;
    int32_t line, column;
    // A scalar: its text's offset in text_ and length; a list or mapping: the
    // offset of its children in children_ and their number (a mapping's
    // entries as key, value, key, value ...).
    uint32_t begin, count;
  };
  std::vector<Record> nodes_;
  std::vector<uint32_t> children_;
  std::string text_;
  uint32_t root_ = 0;
};

// Reads the first document of `text` (a model file's bytes; `label` names it
// in errors). Throws paynter::Error, located: malformed YAML; a second
// document; lists and mappings nested more than kMaxYamlDepth deep; a key
// given twice in one mapping; an alias of a list or mapping that contains it;
// a tree of more than kMaxYamlNodes nodes, an alias counted at each use (as
// soon as the file itself holds more: nothing past them is read).
// Bytes that are not UTF-8 and control characters are kept as they are in
// the scalars' text.
Document ReadYaml(std::string_view text, const std::string& label);

// Lists and mappings may nest this deep (a node at depth kMaxYamlDepth, the
// document's root at depth 1, is refused), those in brackets ([...], {...})
// kMaxYamlFlowDepth deep (libyaml's scanner checks every open bracket at each
// token: 2,000 levels of them made a 2 MB file cost 20 s).
inline constexpr int kMaxYamlDepth = 2000;
inline constexpr int kMaxYamlFlowDepth = 100;

}  // namespace paynter::yaml
