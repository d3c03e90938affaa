// libFuzzer target: the sweep grammar. The first byte chooses what the rest is:
//  even: lines of `paynter sweep` texts, each a --param text (NAME=START:STOP:COUNT
//        or NAME=VALUE) or `log NAME` (a --log), through DefineSweep; then
//        the values of every range of at most 10^5 values are checked: finite,
//        between the ends, the ends as written, in order (a wrong value is
//        a finding as much as a crash);
//  odd:  a --params CSV table (written to a file of this process), through
//        ReadParameterTable; each row must have a value for each name.
// A paynter::Error is the expected end of bad input; any other exception, a
// crash, a sanitizer report, a hang or a message of an internal error is a
// finding.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "paynter/error.h"
#include "paynter/sweep.h"

namespace {

[[noreturn]] void Finding(const char* what, const std::string& detail) {
  paynter_fuzz::Finding("fuzz_sweep", what, detail);
}

void CheckValues(const paynter::SweepRange& r) {
  if (r.count > 100000) return;
  const std::vector<double> v = paynter::SweepValues(r);
  const double lo = std::min(r.start, r.stop), hi = std::max(r.start, r.stop);
  if (v.size() != static_cast<size_t>(r.count)) Finding("wrong number of values", r.name);
  if (v.front() != r.start || v.back() != r.stop) Finding("the ends are not as written", r.name);
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i]) || v[i] < lo || v[i] > hi)
      Finding("a value outside the range", r.name + " value " + std::to_string(i));
    if (i > 0 && (r.start <= r.stop ? v[i] < v[i - 1] : v[i] > v[i - 1]))
      Finding("values out of order", r.name + " value " + std::to_string(i));
  }
}

void Grammar(const std::string& text) {
  std::vector<std::string> params, log;
  size_t at = 0;
  while (at <= text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(at, nl - at);
    if (line.rfind("log ", 0) == 0) log.push_back(line.substr(4));
    else if (!line.empty()) params.push_back(line);
    at = nl + 1;
  }
  const paynter::SweepDefinition def = paynter::DefineSweep(paynter::RunOptions(), params, log, "");
  for (const auto& r : def.ranges) CheckValues(r);
  const long n = def.size();
  for (long k : {0L, n / 2, n - 1}) {
    const std::vector<double> values = def.RunValues(k);
    if (values.size() != def.names.size()) Finding("a run without a value for each name", std::to_string(k));
  }
}

void Table(const std::string& text) {
  static const std::string path = "/tmp/paynter-fuzz-sweep-" + std::to_string(getpid()) + ".csv";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) Finding("cannot write the table", path);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  const paynter::ParameterTable table = paynter::ReadParameterTable(path);
  for (const auto& row : table.rows)
    if (row.size() != table.names.size()) Finding("a table row without a value for each name", "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] % 2 == 0) Grammar(text);
    else Table(text);
  } catch (const paynter::Error& e) {
    // Its message is the diagnostic's (the input may be quoted in the rest).
    if (paynter_fuzz::IsInternal(e.diagnostic().message)) Finding("an internal error", e.what());
  } catch (const std::exception& e) {
    Finding("not a paynter::Error", e.what());
  } catch (...) {
    Finding("an exception of no std type", "");
  }
  return 0;
}
