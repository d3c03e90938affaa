// paynter/byte_io.h — a binary writer and a defensive reader for the caches'
// entries (the stage cache, lowered plans), each struct's stored fields listed
// once for both by a function `Fields(f, value)` found by argument-dependent
// lookup:
//
//   template <class F> void Fields(F& f, Row& r) { f(r.name); f(r.slots); }
//   std::string bytes;  ByteWriter w(&bytes);  w(rows);
//   ByteReader r(bytes);  r(rows);  if (!r.ok()) ...   // never trusts the bytes
//
// The format is for the caches of this very build: native-endian, no
// versioning of its own. The reader checks every length against what is left;
// a failed read leaves the reader failed and the value empty.
//
// A writer or reader for more types derives from BasicByteWriter<Self> or
// BasicByteReader<Self> and adds overloads (`using Base::operator()`): the
// base's containers and Fields call back into Self for each element.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace paynter {

template <class Self>
class BasicByteWriter {
 public:
  explicit BasicByteWriter(std::string* out) : out_(out) {}
  template <class T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void operator()(const T& v) { out_->append(reinterpret_cast<const char*>(&v), sizeof v); }
  void operator()(const std::string& s) {
    Size(s.size());
    out_->append(s);
  }
  template <class T>
  void operator()(const std::vector<T>& v) {
    Size(v.size());
    for (const T& x : v) self()(x);
  }
  template <class T>
  requires std::is_class_v<T>
  void operator()(const T& v) {
    Fields(self(), const_cast<T&>(v));  // Fields only reads through a writer
  }

 private:
  Self& self() { return static_cast<Self&>(*this); }
  void Size(size_t n) { (*this)(static_cast<uint64_t>(n)); }
  std::string* out_;
};

template <class Self>
class BasicByteReader {
 public:
  explicit BasicByteReader(std::string_view in) : p_(in.data()), end_(in.data() + in.size()) {}
  bool ok() const { return ok_; }
  void Fail() { ok_ = false; }
  size_t remaining() const { return ok_ ? size_t(end_ - p_) : 0; }
  std::string_view Rest() const { return std::string_view(p_, remaining()); }

  void operator()(bool& v) {
    uint8_t b = 0;
    (*this)(b);
    v = b != 0;
  }
  template <class T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void operator()(T& v) {
    if (remaining() < sizeof v) {
      ok_ = false;
      v = T{};
      return;
    }
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
  }
  void operator()(std::string& s) {
    const size_t n = Size(1);
    s.assign(p_, n);
    p_ += n;
  }
  template <class T>
  void operator()(std::vector<T>& v) {
    const size_t n = Size(1);  // every element takes a byte at least
    v.clear();
    v.resize(n);
    for (T& x : v) {
      self()(x);
      if (!ok_) break;
    }
    if (!ok_) v.clear();
  }
  template <class T>
  requires std::is_class_v<T>
  void operator()(T& v) { Fields(self(), v); }

 private:
  Self& self() { return static_cast<Self&>(*this); }
  // A length, failed (0) unless `unit`-byte items of that many fit in what is left.
  size_t Size(size_t unit) {
    uint64_t n = 0;
    (*this)(n);
    if (!ok_ || n > remaining() / unit) {
      ok_ = false;
      return 0;
    }
    return static_cast<size_t>(n);
  }
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

// The plain writer and reader: numbers, enums, strings, vectors and structs with Fields.
class ByteWriter final : public BasicByteWriter<ByteWriter> {
 public:
  using BasicByteWriter::BasicByteWriter;
};
class ByteReader final : public BasicByteReader<ByteReader> {
 public:
  using BasicByteReader::BasicByteReader;
};

}  // namespace paynter
