// fmi_test_support.h — what the FMU importer tests (fmi_importer.cc: FMI 2.0,
// fmi3_importer.cc: FMI 3.0) share: running commands, a small XML reader for
// model descriptions, tables of outputs over time, `paynter simulate` as the
// reference and the comparisons with it. The program and the source tree
// come from test_paths.h.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_paths.h"

namespace fmi_test {

namespace fs = std::filesystem;

// A file of the source tree (a path relative to it), or a test's own (absolute).
inline std::string Source(const std::string& rel) {
  return fs::path(rel).is_absolute() ? rel : std::string(PAYNTER_SOURCE_DIR) + "/" + rel;
}

struct Result {
  int status;
  std::string output;
};

inline Result Shell(const std::string& cmd) {
  Result r{-1, ""};
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  r.status = pclose(p);
  return r;
}

inline std::string ReadText(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// ---- a small XML reader: elements and attributes (what modelDescription.xml uses) ----

struct Node {
  std::string name;
  std::map<std::string, std::string> attr;
  std::vector<Node> children;
  std::vector<const Node*> All(const std::string& n) const {
    std::vector<const Node*> out;
    for (const Node& c : children)
      if (c.name == n) out.push_back(&c);
    return out;
  }
  const Node* First(const std::string& n) const {
    for (const Node& c : children)
      if (c.name == n) return &c;
    return nullptr;
  }
  bool Has(const std::string& a) const { return attr.count(a) > 0; }
  std::string Get(const std::string& a) const { return Has(a) ? attr.at(a) : ""; }
};

class XmlReader {
 public:
  explicit XmlReader(std::string text) : s_(std::move(text)) {}
  Node Document() {
    SkipMisc();
    Node root = Element();
    SkipMisc();
    if (i_ != s_.size()) throw std::runtime_error("text after the root element");
    return root;
  }

 private:
  void SkipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void SkipMisc() {  // declarations, comments, whitespace
    for (;;) {
      SkipSpace();
      if (s_.compare(i_, 2, "<?") == 0) {
        i_ = s_.find("?>", i_);
        if (i_ == std::string::npos) throw std::runtime_error("unterminated <?");
        i_ += 2;
      } else if (s_.compare(i_, 4, "<!--") == 0) {
        i_ = s_.find("-->", i_);
        if (i_ == std::string::npos) throw std::runtime_error("unterminated comment");
        i_ += 3;
      } else {
        return;
      }
    }
  }
  std::string Name() {
    const size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == ':' ||
                              s_[i_] == '-' || s_[i_] == '.'))
      ++i_;
    if (b == i_) throw std::runtime_error("name expected at " + std::to_string(i_));
    return s_.substr(b, i_ - b);
  }
  static std::string Decode(const std::string& v) {
    std::string out;
    for (size_t k = 0; k < v.size(); ++k) {
      if (v[k] == '<') throw std::runtime_error("'<' in an attribute");
      if (v[k] != '&') {
        out += v[k];
        continue;
      }
      const size_t e = v.find(';', k);
      if (e == std::string::npos) throw std::runtime_error("bad entity");
      const std::string ent = v.substr(k + 1, e - k - 1);
      const std::map<std::string, char> known = {{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
      if (!known.count(ent)) throw std::runtime_error("unknown entity &" + ent + ";");
      out += known.at(ent);
      k = e;
    }
    return out;
  }
  Node Element() {
    if (s_[i_] != '<') throw std::runtime_error("'<' expected");
    ++i_;
    Node n;
    n.name = Name();
    for (;;) {
      SkipSpace();
      if (s_.compare(i_, 2, "/>") == 0) {
        i_ += 2;
        return n;
      }
      if (s_[i_] == '>') {
        ++i_;
        break;
      }
      const std::string a = Name();
      SkipSpace();
      if (s_[i_++] != '=') throw std::runtime_error("'=' expected");
      SkipSpace();
      const char q = s_[i_++];
      const size_t e = s_.find(q, i_);
      if ((q != '"' && q != '\'') || e == std::string::npos) throw std::runtime_error("bad attribute value");
      if (n.attr.count(a)) throw std::runtime_error("attribute " + a + " twice");
      n.attr[a] = Decode(s_.substr(i_, e - i_));
      i_ = e + 1;
    }
    for (;;) {
      SkipMisc();
      if (s_.compare(i_, 2, "</") == 0) {
        i_ += 2;
        if (Name() != n.name) throw std::runtime_error("mismatched end tag of " + n.name);
        SkipSpace();
        if (s_[i_++] != '>') throw std::runtime_error("'>' expected");
        return n;
      }
      if (i_ >= s_.size()) throw std::runtime_error("unterminated element " + n.name);
      if (s_[i_] == '<') {
        n.children.push_back(Element());
      } else {
        while (i_ < s_.size() && s_[i_] != '<') ++i_;  // text: not used in a model description
      }
    }
  }
  std::string s_;
  size_t i_ = 0;
};

// A table of outputs over time (t first).
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  int Column(const std::string& name) const {
    for (size_t i = 0; i < columns.size(); ++i)
      if (columns[i] == name) return static_cast<int>(i);
    return -1;
  }
};

inline Table ReadCsv(const fs::path& path) {
  Table t;
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  std::stringstream head(line);
  for (std::string c; std::getline(head, c, ',');) t.columns.push_back(c);
  while (std::getline(f, line)) {
    std::stringstream row(line);
    std::vector<double> values;
    for (std::string c; std::getline(row, c, ',');) values.push_back(std::stod(c));
    t.rows.push_back(values);
  }
  return t;
}

// `paynter simulate` (dopri5 at rtol 1e-10, atol 1e-12 unless `options` say otherwise).
inline Table Simulate(const std::string& model, const std::string& options, double t_end, double dt_out, const fs::path& dir) {
  const fs::path csv = dir / "simulate.csv";
  const Result r = Shell(std::string(PAYNTER_EXE) + " simulate " + Source(model) + " --rtol 1e-10 --atol 1e-12 " +
                         options + " --t-end " + std::to_string(t_end) + " --dt-out " + std::to_string(dt_out) +
                         " -o " + csv.string());
  EXPECT_EQ(r.status, 0) << r.output;
  return ReadCsv(csv);
}

// The largest difference per output of `got` against `ref` (same times).
inline std::map<std::string, double> MaxDifferences(const Table& ref, const Table& got) {
  std::map<std::string, double> diff;
  EXPECT_EQ(ref.rows.size(), got.rows.size());
  for (size_t c = 1; c < got.columns.size(); ++c) {
    const int rc = ref.Column(got.columns[c]);
    EXPECT_GE(rc, 0) << got.columns[c] << " is not a column of simulate's CSV";
    if (rc < 0) continue;
    double m = 0;
    for (size_t i = 0; i < std::min(ref.rows.size(), got.rows.size()); ++i) {
      EXPECT_NEAR(ref.rows[i][0], got.rows[i][0], 1e-12);
      const double d = std::fabs(ref.rows[i][rc] - got.rows[i][c]);
      m = std::isnan(d) ? INFINITY : std::max(m, d);
    }
    diff[got.columns[c]] = m;
  }
  return diff;
}

// Every output within `tol` times (1 + its largest magnitude).
inline void ExpectClose(const char* what, const Table& ref, const Table& got, double tol) {
  for (const auto& [name, d] : MaxDifferences(ref, got)) {
    double scale = 0;
    const int rc = ref.Column(name);
    for (const auto& row : ref.rows) scale = std::max(scale, std::fabs(row[rc]));
    std::printf("%s %-10s max |FMU - simulate| = %.3e (scale %.3g)\n", what, name.c_str(), d, scale);
    EXPECT_LE(d, tol * (1 + scale)) << what << " " << name;
  }
}

// simulate's rows at the output times k dt_out of a model with events: its
// CSV also has two rows at each event (before and after, the same t), which
// are left out; at an output time that an event falls on, the first row of
// that time is the output's, the state before the event (docs/events.md).
inline Table GridRows(const Table& csv, double t_end, double dt_out) {
  Table grid;
  grid.columns = csv.columns;
  const int num = static_cast<int>(std::lround(t_end / dt_out)) + 1;
  for (size_t i = 0; i < csv.rows.size();) {
    size_t j = i + 1;
    while (j < csv.rows.size() && csv.rows[j][0] == csv.rows[i][0]) ++j;
    const double next = static_cast<double>(grid.rows.size()) * dt_out;
    if (std::fabs(csv.rows[i][0] - next) <= 1e-12) grid.rows.push_back(csv.rows[i]);
    i = j;
  }
  EXPECT_EQ(static_cast<int>(grid.rows.size()), num);
  for (size_t k = 0; k < grid.rows.size(); ++k)
    EXPECT_NEAR(grid.rows[k][0], static_cast<double>(k) * dt_out, 1e-12) << "row " << k;
  return grid;
}

inline std::string Num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// examples/<model>.yaml with `from` replaced by `to` (once), as <name>.yaml in `dir`.
inline fs::path ModelVariant(const std::string& model, const std::string& from, const std::string& to, const fs::path& dir,
                      const std::string& name) {
  std::string yaml = ReadText(Source("examples/" + model + ".yaml"));
  const size_t at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) yaml.replace(at, from.size(), to);
  const fs::path p = dir / (name + ".yaml");
  std::ofstream(p) << yaml;
  return p;
}

// `paynter simulate` of a model file at rtol 1e-10, atol 1e-12; an event's
// rows (the output time, and two rows where the event was located, within
// 1e-12 s of it) become the last (the values after it, at the output time).
inline Table SimulateFile(const fs::path& model, const std::string& options, double t_end, double dt_out, const fs::path& dir,
                   const std::string& name) {
  const fs::path csv = dir / (name + ".csv");
  const Result r = Shell(std::string(PAYNTER_EXE) + " simulate " + model.string() + " --rtol 1e-10 --atol 1e-12 " +
                         options + " --t-end " + Num(t_end) + " --dt-out " + Num(dt_out) + " -o " + csv.string());
  EXPECT_EQ(r.status, 0) << r.output;
  Table t = ReadCsv(csv), out;
  out.columns = t.columns;
  for (auto& row : t.rows) {
    if (!out.rows.empty() && std::fabs(out.rows.back()[0] - row[0]) < 1e-12)
      out.rows.back() = row;
    else
      out.rows.push_back(row);
  }
  return out;
}

// Every output of `got` within `tol` of `ref`'s relative to the output's
// largest magnitude; the largest relative difference is printed.
inline void ExpectAgree(const char* what, const Table& ref, const Table& got, double tol) {
  ASSERT_EQ(ref.rows.size(), got.rows.size()) << what;
  for (const auto& [name, d] : MaxDifferences(ref, got)) {
    double scale = 0;
    const int rc = ref.Column(name);
    for (const auto& row : ref.rows) scale = std::max(scale, std::fabs(row[rc]));
    std::printf("%s %-8s max |FMU - simulate| = %.3e, relative to its largest %.3g: %.3e\n", what, name.c_str(), d,
                scale, d / scale);
    EXPECT_LE(d, tol * scale) << what << " " << name;
  }
}

}  // namespace fmi_test
