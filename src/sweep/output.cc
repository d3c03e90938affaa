// A sweep's output files: CSV (long-format data + summary) and HDF5
// (paynter/sweep.h; the layouts are documented in docs/sweeps.md).
#include <fmt/format.h>

#include <charconv>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "paynter/files.h"
#include "paynter/sweep.h"

#include "io_loader.h"

namespace paynter {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

SweepRunSummary SummarizeSweepRun(const SweepRunResult& r, size_t columns) {
  SweepRunSummary s;
  s.ok = r.ok;
  s.error = r.error;
  s.rows = r.rows;
  s.steps = r.steps;
  s.rejected = r.rejected;
  s.rhs_evals = r.rhs_evals;
  s.jac_evals = r.jac_evals;
  s.own_build = r.own_build;
  const size_t n = columns - 1;
  s.final_values.assign(n, kNaN);
  s.min_values.assign(n, kNaN);
  s.max_values.assign(n, kNaN);
  if (r.rows > 0) s.t_final = r.data[(r.rows - 1) * columns];
  if (!r.ok || r.rows == 0) return s;
  for (size_t c = 0; c < n; ++c) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (long i = 0; i < r.rows; ++i) {
      const double v = r.data[i * columns + c + 1];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    s.min_values[c] = lo;
    s.max_values[c] = hi;
    s.final_values[c] = r.data[(r.rows - 1) * columns + c + 1];
  }
  return s;
}

std::vector<std::string> SweepSummaryColumns(const std::vector<std::string>& columns) {
  std::vector<std::string> out = {"ok", "error", "t_final", "rows", "steps", "rejected", "rhs_evals", "jac_evals",
                                  "own_build"};
  for (const char* what : {"final_", "min_", "max_"})
    for (size_t c = 1; c < columns.size(); ++c) out.push_back(what + columns[c]);
  return out;
}

namespace {

// The shortest text that reads back as the same double (as CsvWriter).
void AppendNumber(std::string* out, double v) {
  char buf[32];
  if (std::isnan(v)) {
    *out += "nan";
    return;
  }
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

std::string CsvQuoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// ---- CSV ---------------------------------------------------------------------

class CsvSweepOutput : public SweepSink {
 public:
  CsvSweepOutput(const std::string& path, const SweepDefinition& def)
      : def_(def), data_(path, "sweep data"), summary_path_(SummaryPath(path)), summary_(summary_path_, "sweep summary") {}

  static std::string SummaryPath(const std::string& path) {
    const std::filesystem::path p(path);
    return (p.parent_path() / (p.stem().string() + ".summary.csv")).string();
  }

  void Begin(const std::vector<std::string>& columns) override {
    columns_ = columns;
    std::string h = "run";
    for (const auto& c : columns) h += "," + c;
    data_.Write(h + "\n");
    h = "run";
    for (const auto& n : def_.names) h += "," + n;
    for (const auto& n : SweepSummaryColumns(columns)) h += "," + n;
    summary_.Write(h + "\n");
  }

  void Run(const SweepRunResult& r) override {
    std::string line;
    const size_t nc = columns_.size();
    for (long i = 0; i < r.rows; ++i) {
      line.clear();
      line += std::to_string(r.index);
      for (size_t c = 0; c < nc; ++c) {
        line += ',';
        AppendNumber(&line, r.data[i * nc + c]);
      }
      line += '\n';
      data_.Write(line);
    }
    const SweepRunSummary s = SummarizeSweepRun(r, nc);
    line = std::to_string(r.index);
    for (double v : def_.RunValues(r.index)) {
      line += ',';
      AppendNumber(&line, v);
    }
    line += fmt::format(",{},{},", s.ok ? 1 : 0, s.error.empty() ? "" : CsvQuoted(s.error));
    AppendNumber(&line, s.t_final);
    line += fmt::format(",{},{},{},{},{},{}", s.rows, s.steps, s.rejected, s.rhs_evals, s.jac_evals, s.own_build ? 1 : 0);
    for (const auto* v : {&s.final_values, &s.min_values, &s.max_values})
      for (double x : *v) {
        line += ',';
        AppendNumber(&line, x);
      }
    summary_.Write(line + "\n");
  }

  void Commit() override {
    data_.Commit();
    summary_.Commit();
  }

 private:
  const SweepDefinition& def_;
  OutputFile data_;
  std::string summary_path_;
  OutputFile summary_;
  std::vector<std::string> columns_;
};

// ---- HDF5 --------------------------------------------------------------------

#ifdef PAYNTER_HDF5

// Written through the sweep's I/O module (io_module.h), which alone links HDF5.
class Hdf5SweepOutput : public SweepSink {
 public:
  Hdf5SweepOutput(const std::string& path, const SweepDefinition& def)
      : io_(SweepIoModule()), def_(def), path_(path) {
    tmp_ = TemporaryBeside(path, ".h5.tmp");
    file_ = io_.h5_create(tmp_.c_str());
    Check(file_ ? 0 : -1, "create the file");
  }

  ~Hdf5SweepOutput() override {
    if (file_) io_.h5_close(file_, 0);
    if (!committed_) std::remove(tmp_.c_str());
  }

  void Begin(const std::vector<std::string>& columns) override {
    columns_ = columns;
    const RunOptions& b = def_.base;
    const double dt = b.dt_out > 0 ? b.dt_out : (b.t_end - b.t0) / 1000;
    const double expected = dt > 0 ? std::floor((b.t_end - b.t0) / dt) + 2 : 1;
    const auto chunk_rows = static_cast<uint64_t>(std::clamp(expected, 1.0, 65536.0));
    Check(io_.h5_create_data(file_, static_cast<uint64_t>(def_.size()), columns.size(), chunk_rows, kNaN),
          "create /data");
    Strings(1, "columns", columns, false);
  }

  void Run(const SweepRunResult& r) override {
    if (r.rows > 0)
      Check(io_.h5_write_run(file_, static_cast<uint64_t>(r.index), static_cast<uint64_t>(r.rows), r.data.data()),
            "write a run");
    summary_.push_back(SummarizeSweepRun(r, columns_.size()));
  }

  void Commit() override {
    WriteParameters();
    WriteSummary();
    const RunOptions& b = def_.base;
    Strings(0, "model_file", {b.file}, true);
    Strings(0, "paynter_version", {PAYNTER_VERSION}, true);
    std::string fixed;
    for (const auto& [name, value] : b.params) fixed += fmt::format("{}{}={}", fixed.empty() ? "" : " ", name, value);
    Strings(0, "fixed_parameters", {fixed}, true);
    Strings(0, "options",
            {fmt::format("form={} constraints={} method={} t0={} t_end={} rtol={} atol={} dt_out={} step={} "
                         "max_steps={} backend={}",
                         FormulationName(b.form), ConstraintMethodName(b.constraints), MethodName(b.method), b.t0,
                         b.t_end, b.rtol, b.atol, b.dt_out, b.step,
                         b.max_steps_given ? std::to_string(b.max_steps) : "default", BackendName(b.backend))},
            true);
    Strings(0, "parameters", def_.names, false);
    paynter_h5* f = file_;
    file_ = nullptr;
    Check(io_.h5_close(f, 1), "flush");
    MoveIntoPlace(tmp_, path_, "sweep results");
    committed_ = true;
  }

 private:
  void Check(int status, const std::string& what) const {
    if (status == 0) return;
    ThrowAt({path_}, "", fmt::format("HDF5 could not {}", what), "a writable file on a disk with room",
            "an HDF5 error");
  }

  // UTF-8 strings (h5py reads them as str): one (scalar) or a list.
  void Strings(int on_data, const char* name, const std::vector<std::string>& values, bool scalar) {
    std::vector<const char*> ptrs;
    for (const auto& v : values) ptrs.push_back(v.c_str());
    Check(io_.h5_strings(file_, on_data, name, ptrs.data(), ptrs.size(), scalar ? 1 : 0),
          std::string("write the attribute ") + name);
  }

  // A table (compound dataset) of doubles, one field per name, one record per run.
  void WriteParameters() {
    const size_t nf = def_.names.size();
    if (nf == 0) return;
    std::vector<const char*> names;
    std::vector<int> kinds(nf, PAYNTER_H5_F64);
    std::vector<uint64_t> offsets;
    for (size_t i = 0; i < nf; ++i) {
      names.push_back(def_.names[i].c_str());
      offsets.push_back(i * sizeof(double));
    }
    std::vector<double> buf;
    buf.reserve(static_cast<size_t>(def_.size()) * nf);
    for (long k = 0; k < def_.size(); ++k) {
      const std::vector<double> run = def_.RunValues(k);
      buf.insert(buf.end(), run.begin(), run.end());
    }
    Check(io_.h5_table(file_, "parameters", nf, names.data(), kinds.data(), offsets.data(), nf * sizeof(double),
                       buf.data(), static_cast<uint64_t>(def_.size())),
          "write /parameters");
  }

  void WriteSummary() {
    const size_t nout = columns_.size() - 1;
    // Packed records: run, ok, error (char*), t_final, rows..own_build, then
    // final/min/max per output.
    std::vector<std::string> names = {"run", "ok", "error", "t_final", "rows", "steps", "rejected", "rhs_evals",
                                      "jac_evals", "own_build"};
    std::vector<int> kinds = {PAYNTER_H5_I64, PAYNTER_H5_I8,  PAYNTER_H5_STRING, PAYNTER_H5_F64, PAYNTER_H5_I64,
                              PAYNTER_H5_I64, PAYNTER_H5_I64, PAYNTER_H5_I64,    PAYNTER_H5_I64, PAYNTER_H5_I8};
    for (const char* what : {"final_", "min_", "max_"})
      for (size_t c = 1; c < columns_.size(); ++c) {
        names.push_back(what + columns_[c]);
        kinds.push_back(PAYNTER_H5_F64);
      }
    std::vector<uint64_t> offsets;
    uint64_t size = 0;
    for (int k : kinds) {
      offsets.push_back(size);
      size += k == PAYNTER_H5_I8 ? 1 : k == PAYNTER_H5_STRING ? sizeof(char*) : 8;
    }
    const size_t n = summary_.size();
    std::vector<unsigned char> buf(n * size);
    for (size_t k = 0; k < n; ++k) {
      const SweepRunSummary& s = summary_[k];
      unsigned char* rec = buf.data() + k * size;
      size_t f = 0;
      auto put = [&](const auto& v) {
        std::memcpy(rec + offsets[f], &v, sizeof v);
        ++f;
      };
      put(static_cast<int64_t>(k));
      put(static_cast<int8_t>(s.ok ? 1 : 0));
      put(s.error.c_str());
      put(s.t_final);
      for (long v : {s.rows, s.steps, s.rejected, s.rhs_evals, s.jac_evals}) put(static_cast<int64_t>(v));
      put(static_cast<int8_t>(s.own_build ? 1 : 0));
      for (const auto* v : {&s.final_values, &s.min_values, &s.max_values})
        for (size_t c = 0; c < nout; ++c) put((*v)[c]);
    }
    std::vector<const char*> name_ptrs;
    for (const auto& nm : names) name_ptrs.push_back(nm.c_str());
    Check(io_.h5_table(file_, "summary", names.size(), name_ptrs.data(), kinds.data(), offsets.data(), size,
                       buf.data(), n),
          "write /summary");
  }

  const paynter_sweep_io& io_;
  const SweepDefinition& def_;
  std::string path_, tmp_;
  paynter_h5* file_ = nullptr;
  std::vector<std::string> columns_;
  std::vector<SweepRunSummary> summary_;
  bool committed_ = false;
};

#endif  // PAYNTER_HDF5

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool HaveHdf5() {
#ifdef PAYNTER_HDF5
  return true;
#else
  return false;
#endif
}

std::unique_ptr<SweepSink> OpenSweepOutput(const std::string& path, const SweepDefinition& def) {
  if (EndsWith(path, ".csv")) return std::make_unique<CsvSweepOutput>(path, def);
  if (EndsWith(path, ".h5") || EndsWith(path, ".hdf5")) {
#ifdef PAYNTER_HDF5
    return std::make_unique<Hdf5SweepOutput>(path, def);
#else
    ThrowAt({path}, "", "this build of paynter has no HDF5 output",
            "a build with libhdf5-dev installed (scripts/setup.sh)", path,
            "write a CSV (-o results.csv), or install libhdf5-dev and build again");
#endif
  }
  ThrowAt({path}, "", "sweep: unknown output format", "a file name ending in .h5 or .hdf5 (HDF5) or .csv", path);
}

}  // namespace paynter
