// A sweep's runs: ranges, tables, their product (paynter/sweep.h).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>

#include "paynter/files.h"
#include "paynter/sweep.h"

namespace paynter {
namespace {

// A whole text as a finite double, or false.
bool ParseNumber(const std::string& text, double* v) {
  const char* b = text.data();
  const char* e = b + text.size();
  while (b < e && (*b == ' ' || *b == '\t')) ++b;
  while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) --e;
  if (b < e && *b == '+') ++b;
  const auto r = std::from_chars(b, e, *v);
  return r.ec == std::errc() && r.ptr == e && std::isfinite(*v);
}

bool ParseCount(const std::string& text, long* v) {
  const auto r = std::from_chars(text.data(), text.data() + text.size(), *v);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

bool IsName(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == ',') out.emplace_back();
    else if (c != '\r') out.back() += c;
  }
  for (auto& f : out) {
    while (!f.empty() && (f.front() == ' ' || f.front() == '\t')) f.erase(f.begin());
    while (!f.empty() && (f.back() == ' ' || f.back() == '\t')) f.pop_back();
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
  }
  return out;
}

[[noreturn]] void BadRange(const std::string& text, const std::string& why, const std::string& hint = "") {
  ThrowAt({}, "", fmt::format("bad --param range '{}': {}", text, why),
          "NAME=START:STOP:COUNT (COUNT values from START to STOP), or NAME=VALUE for a fixed value", text, hint);
}

}  // namespace

SweepRange ParseSweepRange(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) BadRange(text, "no '='");
  SweepRange r;
  r.name = text.substr(0, eq);
  if (!IsName(r.name)) BadRange(text, fmt::format("'{}' is not a parameter name", r.name));
  const std::string rest = text.substr(eq + 1);
  const auto c1 = rest.find(':');
  const auto c2 = c1 == std::string::npos ? c1 : rest.find(':', c1 + 1);
  if (c1 == std::string::npos || c2 == std::string::npos || rest.find(':', c2 + 1) != std::string::npos)
    BadRange(text, "a range has three parts separated by ':'");
  if (!ParseNumber(rest.substr(0, c1), &r.start)) BadRange(text, "START is not a finite number");
  if (!ParseNumber(rest.substr(c1 + 1, c2 - c1 - 1), &r.stop)) BadRange(text, "STOP is not a finite number");
  if (!ParseCount(rest.substr(c2 + 1), &r.count) || r.count < 1)
    BadRange(text, "COUNT is not a whole number of at least 1", "e.g. B=0:20:11 for 0, 2, ..., 20");
  if (r.count == 1 && r.start != r.stop) BadRange(text, "one value from START to STOP", "COUNT 1 needs START = STOP");
  return r;
}

double SweepValue(const SweepRange& r, long k) {
  if (k <= 0) return r.start;  // the ends exactly as written
  if (k >= r.count - 1) return r.stop;
  const double f = static_cast<double>(k) / static_cast<double>(r.count - 1);
  double v = 0;
  if (r.log) {
    v = std::exp(std::log(r.start) + f * (std::log(r.stop) - std::log(r.start)));
  } else if (std::isfinite(r.stop - r.start)) {
    v = r.start + f * (r.stop - r.start);
  } else {  // the span overflows: weigh the ends instead
    v = (1 - f) * r.start + f * r.stop;
  }
  // Between the ends, also where rounding would leave them.
  return std::clamp(v, std::min(r.start, r.stop), std::max(r.start, r.stop));
}

std::vector<double> SweepValues(const SweepRange& r) {
  const std::string text = fmt::format("{}={}:{}:{}", r.name, r.start, r.stop, r.count);
  if (r.count < 1) BadRange(text, "COUNT is below 1");
  if (r.log && !(r.start > 0 && r.stop > 0))
    BadRange(text, "a logarithmic range (--log) needs START and STOP above zero");
  std::vector<double> v(static_cast<size_t>(r.count));
  for (long i = 0; i < r.count; ++i) v[i] = SweepValue(r, i);
  return v;
}

ParameterTable ReadParameterTable(const std::string& path) {
  // A device (/dev/zero: one endless line), a FIFO or a socket is no table:
  // refused before it is opened, as a model file is.
  RequireRegularInput(path, "parameter table", "a CSV file: a header of parameter names, then one run per row",
                      "give the path of a .csv file");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ThrowAt({path, 0, 0}, "", "cannot read the parameter table",
            "a readable CSV file: a header of parameter names, then one run per row", std::strerror(errno));
  }
  ParameterTable t;
  std::string line;
  int line_no = 0;
  bool header = false;
  auto fail = [&](int column, const std::string& what, const std::string& expected, const std::string& got) {
    ThrowAt({path, line_no, column}, "", what, expected, got,
            "--params takes a CSV table: a header of parameter names, then one run per row of numbers");
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no > 100000000) fail(0, "the table has more than 10^8 rows", "at most 10^8 runs", "more");
    std::string trimmed = line;
    while (!trimmed.empty() && (trimmed.back() == '\r' || trimmed.back() == ' ')) trimmed.pop_back();
    if (trimmed.empty() || trimmed[0] == '#') continue;
    const auto fields = SplitCsvLine(trimmed);
    if (!header) {
      std::set<std::string> seen;
      int col = 1;
      for (const auto& f : fields) {
        if (!IsName(f)) fail(col, fmt::format("header field '{}' is not a parameter name", f), "a parameter name", f);
        if (!seen.insert(f).second) fail(col, fmt::format("parameter '{}' is named twice", f), "distinct names", f);
        t.names.push_back(f);
        col += static_cast<int>(f.size()) + 1;
      }
      header = true;
      continue;
    }
    if (fields.size() != t.names.size())
      fail(1, fmt::format("row has {} values for {} parameters", fields.size(), t.names.size()),
           fmt::format("{} comma-separated numbers", t.names.size()), trimmed);
    std::vector<double> row(fields.size());
    int col = 1;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (!ParseNumber(fields[i], &row[i]))
        fail(col, fmt::format("value of '{}' is not a finite number", t.names[i]), "a finite number", fields[i]);
      col += static_cast<int>(fields[i].size()) + 1;
    }
    t.rows.push_back(std::move(row));
  }
  if (!header) fail(0, "the parameter table is empty", "a header of parameter names", "nothing");
  if (t.rows.empty()) fail(line_no, "the parameter table has no rows", "one row of values per run", "the header only");
  return t;
}

long SweepDefinition::size() const {
  long n = static_cast<long>(rows.size());
  for (const auto& r : ranges) n *= r.count;  // MakeSweep bounds the product by 10^8
  return n;
}

std::vector<double> SweepDefinition::RunValues(long run) const {
  // run = ((row * n1 + i1) * n2 + i2) ...: the last range varies fastest.
  std::vector<double> v(names.size());
  size_t j = names.size();
  for (size_t r = ranges.size(); r-- > 0;) {
    v[--j] = SweepValue(ranges[r], run % ranges[r].count);
    run /= ranges[r].count;
  }
  const auto& row = rows[static_cast<size_t>(run)];
  std::copy(row.begin(), row.end(), v.begin());
  return v;
}

RunOptions SweepDefinition::OptionsFor(long run) const {
  RunOptions o = base;
  o.progress = false;
  const std::vector<double> values = RunValues(run);
  for (size_t i = 0; i < names.size(); ++i) o.params.emplace_back(names[i], values[i]);
  return o;
}

SweepDefinition MakeSweep(const RunOptions& base, const std::vector<SweepRange>& ranges,
                          const std::string& table_path) {
  if (table_path.empty()) return MakeSweep(base, ranges, ParameterTable{}, "");
  return MakeSweep(base, ranges, ReadParameterTable(table_path), table_path);
}

SweepDefinition MakeSweep(const RunOptions& base, const std::vector<SweepRange>& ranges, ParameterTable table,
                          const std::string& table_path) {
  SweepDefinition def;
  def.base = base;
  std::set<std::string> named;
  auto name_once = [&](const std::string& name, const std::string& where) {
    if (named.insert(name).second) return;
    ThrowAt({where == "the table" ? table_path : "", 0, 0}, "",
            fmt::format("parameter '{}' is given twice (in {} and before)", name, where),
            "each parameter fixed (NAME=VALUE), in one range or in the table, once", fmt::format("'{}' again", name));
  };
  for (const auto& p : base.params) name_once(p.first, "a fixed --param");
  for (const auto& n : table.names) name_once(n, "the table");
  for (size_t i = 0; i < table.rows.size(); ++i) {
    if (table.rows[i].size() == table.names.size()) continue;
    ThrowAt({table_path, 0, 0}, "", fmt::format("row {} of the table has {} values", i + 1, table.rows[i].size()),
            fmt::format("one value per name ({})", table.names.size()), std::to_string(table.rows[i].size()));
  }
  if (!table.names.empty() && table.rows.empty())
    ThrowAt({table_path, 0, 0}, "", "the table has no rows", "at least one run: a row of values");
  if (table.names.empty()) {
    table.rows.assign(1, {});  // one run with no values, crossed with the grid
  }
  double total = static_cast<double>(table.rows.size());
  for (const auto& r : ranges) {
    name_once(r.name, "a range");
    if (r.log && !(r.start > 0 && r.stop > 0))
      BadRange(fmt::format("{}={}:{}:{}", r.name, r.start, r.stop, r.count),
               "a logarithmic range (--log) needs START and STOP above zero");
    if (r.count < 1) BadRange(fmt::format("{}={}:{}:{}", r.name, r.start, r.stop, r.count), "COUNT is below 1");
    total *= static_cast<double>(r.count);
  }
  if (total > 1e8) {
    ThrowAt({}, "", fmt::format("the sweep has {:.3g} runs", total), "at most 10^8 runs",
            fmt::format("{:.3g} (the table's rows times each range's count)", total), "split it into several sweeps");
  }
  def.names = table.names;
  for (const auto& r : ranges) def.names.push_back(r.name);
  def.rows = std::move(table.rows);
  def.ranges = ranges;
  return def;
}

namespace {

// DefineSweep's texts read; `make` builds the definition from the ranges.
SweepDefinition DefineFromTexts(RunOptions base, const std::vector<std::string>& params,
                                const std::vector<std::string>& log,
                                const std::function<SweepDefinition(const RunOptions&, const std::vector<SweepRange>&)>& make) {
  std::vector<SweepRange> ranges;
  std::vector<std::string> fixed;
  for (const auto& p : params) {
    if (p.find(':') != std::string::npos) ranges.push_back(ParseSweepRange(p));
    else fixed.push_back(p);
  }
  for (auto& p : ParseParameterOverrides(fixed, base.file)) base.params.push_back(std::move(p));
  for (const auto& name : log) {
    bool found = false;
    for (auto& r : ranges)
      if (r.name == name) r.log = found = true;
    if (found) continue;
    ThrowAt({}, "", fmt::format("--log {}: no --param range of that name", name),
            "the name of a --param NAME=START:STOP:COUNT range", name);
  }
  return make(base, ranges);
}

}  // namespace

SweepDefinition DefineSweep(RunOptions base, const std::vector<std::string>& params,
                            const std::vector<std::string>& log, const std::string& table) {
  return DefineFromTexts(std::move(base), params, log, [&](const RunOptions& b, const std::vector<SweepRange>& ranges) {
    return MakeSweep(b, ranges, table);
  });
}

SweepDefinition DefineSweep(RunOptions base, const std::vector<std::string>& params,
                            const std::vector<std::string>& log, ParameterTable table, const std::string& table_where) {
  return DefineFromTexts(std::move(base), params, log, [&](const RunOptions& b, const std::vector<SweepRange>& ranges) {
    return MakeSweep(b, ranges, std::move(table), table_where);
  });
}

// ---- a run's result as bytes (MPI) -------------------------------------------

namespace {
template <typename T>
void Put(std::string* out, const T& v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <typename T>
T Get(const std::string& in, size_t* at) {
  T v{};
  if (*at + sizeof v > in.size()) throw Error("sweep: a run's result arrived truncated");
  std::memcpy(&v, in.data() + *at, sizeof v);
  *at += sizeof v;
  return v;
}
}  // namespace

void AppendSweepRunResult(const SweepRunResult& r, std::string* out) {
  Put<int64_t>(out, r.index);
  Put<uint8_t>(out, r.ok ? 1 : 0);
  Put<uint8_t>(out, r.own_build ? 1 : 0);
  Put<int64_t>(out, r.rows);
  Put<int64_t>(out, r.steps);
  Put<int64_t>(out, r.rejected);
  Put<int64_t>(out, r.rhs_evals);
  Put<int64_t>(out, r.jac_evals);
  Put<uint64_t>(out, r.error.size());
  out->append(r.error);
  Put<uint64_t>(out, r.data.size());
  out->append(reinterpret_cast<const char*>(r.data.data()), r.data.size() * sizeof(double));
}

SweepRunResult ReadSweepRunResult(const std::string& in) {
  size_t at = 0;
  SweepRunResult r;
  r.index = Get<int64_t>(in, &at);
  r.ok = Get<uint8_t>(in, &at) != 0;
  r.own_build = Get<uint8_t>(in, &at) != 0;
  r.rows = Get<int64_t>(in, &at);
  r.steps = Get<int64_t>(in, &at);
  r.rejected = Get<int64_t>(in, &at);
  r.rhs_evals = Get<int64_t>(in, &at);
  r.jac_evals = Get<int64_t>(in, &at);
  const uint64_t n = Get<uint64_t>(in, &at);
  if (n > in.size() - at) throw Error("sweep: a run's result arrived truncated");
  r.error = in.substr(at, n);
  at += n;
  const uint64_t m = Get<uint64_t>(in, &at);
  if (m > (in.size() - at) / sizeof(double)) throw Error("sweep: a run's result arrived truncated");
  r.data.resize(m);
  std::memcpy(r.data.data(), in.data() + at, m * sizeof(double));
  return r;
}

// ---- progress bar ----------------------------------------------------------

namespace {
double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

SweepProgressBar::SweepProgressBar(bool enabled) {
  const char* ci = std::getenv("CI");
  enabled_ = enabled && ::isatty(2) && !(ci && std::string(ci) == "true");
  start_ = Now();
}

void SweepProgressBar::Update(long done, long failed, long total) {
  if (!enabled_) return;
  const double now = Now();
  if (done < total && now - last_ < 0.1) return;  // at most ten lines a second
  last_ = now;
  const double elapsed = now - start_;
  const int width = 30;
  const int filled = total > 0 ? static_cast<int>(static_cast<double>(width) * done / total) : width;
  std::string bar(filled, '#');
  bar += std::string(width - filled, '.');
  std::string left = "--";
  if (done > 0) {
    const double rest = elapsed / done * (total - done);
    left = rest >= 3600 ? fmt::format("{}h{:02}m", static_cast<long>(rest / 3600), static_cast<long>(rest / 60) % 60)
           : rest >= 60 ? fmt::format("{}m{:02}s", static_cast<long>(rest / 60), static_cast<long>(rest) % 60)
                        : fmt::format("{:.0f}s", rest);
  }
  std::cerr << fmt::format("\r[{}] {}/{} runs, {} failed, {} left   ", bar, done, total, failed, left) << std::flush;
  drawn_ = true;
}

void SweepProgressBar::Finish() {
  if (drawn_) std::cerr << "\n" << std::flush;
  drawn_ = false;
}

}  // namespace paynter
