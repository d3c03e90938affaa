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

#ifdef PAYNTER_HDF5
#include <hdf5.h>
#endif

namespace paynter {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Per run: what the summary holds besides the parameter values.
struct SummaryRow {
  bool ok = false;
  std::string error;
  double t_final = kNaN;
  long rows = 0, steps = 0, rejected = 0, rhs_evals = 0, jac_evals = 0;
  bool own_build = false;
  std::vector<double> final_values, min_values, max_values;  // per output (not t)
};

SummaryRow Summarize(const SweepRunResult& r, size_t columns) {
  SummaryRow s;
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

// The summary's numeric columns after the parameters, as both formats name them.
std::vector<std::string> SummaryColumns(const std::vector<std::string>& columns) {
  std::vector<std::string> out = {"ok", "error", "t_final", "rows", "steps", "rejected", "rhs_evals", "jac_evals",
                                  "own_build"};
  for (const char* what : {"final_", "min_", "max_"})
    for (size_t c = 1; c < columns.size(); ++c) out.push_back(what + columns[c]);
  return out;
}

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
    for (const auto& n : SummaryColumns(columns)) h += "," + n;
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
    const SummaryRow s = Summarize(r, nc);
    line = std::to_string(r.index);
    for (double v : def_.runs[r.index]) {
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

// An HDF5 identifier closed by its destructor.
class Id {
 public:
  Id(hid_t id = -1, herr_t (*close)(hid_t) = nullptr) : id_(id), close_(close) {}
  ~Id() { reset(); }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id& operator=(Id&& o) noexcept {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
    return *this;
  }
  operator hid_t() const { return id_; }  // NOLINT: used where a hid_t is
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
  }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

class Hdf5SweepOutput : public SweepSink {
 public:
  Hdf5SweepOutput(const std::string& path, const SweepDefinition& def) : def_(def), path_(path) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become paynter::Error
    tmp_ = TemporaryBeside(path, ".h5.tmp");
    // No modification times in object headers: the same sweep gives the same bytes.
    Id fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
    Check(H5Pset_obj_track_times(fcpl, false), "file properties");
    file_ = Id(H5Fcreate(tmp_.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT), H5Fclose);
    Check(file_, "create the file");
  }

  ~Hdf5SweepOutput() override {
    data_.reset();
    file_.reset();
    if (!committed_) std::remove(tmp_.c_str());
  }

  void Begin(const std::vector<std::string>& columns) override {
    columns_ = columns;
    const hsize_t n = static_cast<hsize_t>(def_.size()), nc = columns.size();
    const RunOptions& b = def_.base;
    const double dt = b.dt_out > 0 ? b.dt_out : (b.t_end - b.t0) / 1000;
    const double expected = dt > 0 ? std::floor((b.t_end - b.t0) / dt) + 2 : 1;
    const hsize_t chunk_rows = static_cast<hsize_t>(std::clamp(expected, 1.0, 65536.0));
    hsize_t dims[3] = {n, 0, nc}, maxdims[3] = {n, H5S_UNLIMITED, nc}, chunk[3] = {1, chunk_rows, nc};
    Id space(H5Screate_simple(3, dims, maxdims), H5Sclose);
    Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    Check(H5Pset_chunk(dcpl, 3, chunk), "chunks");
    Check(H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &kNaN), "fill value");
    Check(H5Pset_obj_track_times(dcpl, false), "dataset properties");
    data_ = Id(H5Dcreate2(file_, "data", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose);
    Check(data_, "create /data");
    StringListAttribute(data_, "columns", columns);
    summary_.reserve(static_cast<size_t>(def_.size()));
  }

  void Run(const SweepRunResult& r) override {
    const hsize_t nc = columns_.size();
    if (r.rows > 0) {
      const hsize_t rows = static_cast<hsize_t>(r.rows);
      if (rows > rows_) {
        rows_ = rows;
        hsize_t dims[3] = {static_cast<hsize_t>(def_.size()), rows_, nc};
        Check(H5Dset_extent(data_, dims), "extend /data");
      }
      Id file_space(H5Dget_space(data_), H5Sclose);
      hsize_t start[3] = {static_cast<hsize_t>(r.index), 0, 0}, count[3] = {1, rows, nc};
      Check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr), "select a run");
      hsize_t mem_dims[2] = {rows, nc};
      Id mem_space(H5Screate_simple(2, mem_dims, nullptr), H5Sclose);
      Check(H5Dwrite(data_, H5T_NATIVE_DOUBLE, mem_space, file_space, H5P_DEFAULT, r.data.data()), "write a run");
    }
    summary_.push_back(Summarize(r, nc));
  }

  void Commit() override {
    WriteParameters();
    WriteSummary();
    const RunOptions& b = def_.base;
    StringAttribute(file_, "model_file", b.file);
    StringAttribute(file_, "paynter_version", PAYNTER_VERSION);
    std::string fixed;
    for (const auto& [name, value] : b.params) fixed += fmt::format("{}{}={}", fixed.empty() ? "" : " ", name, value);
    StringAttribute(file_, "fixed_parameters", fixed);
    StringAttribute(file_, "options",
                    fmt::format("form={} constraints={} method={} t0={} t_end={} rtol={} atol={} dt_out={} step={} "
                                "max_steps={} backend={}",
                                b.form, b.constraints, b.method, b.t0, b.t_end, b.rtol, b.atol, b.dt_out, b.step,
                                b.max_steps_given ? std::to_string(b.max_steps) : "default", b.backend));
    StringListAttribute(file_, "parameters", def_.names);
    data_.reset();
    Check(H5Fflush(file_, H5F_SCOPE_GLOBAL), "flush");
    file_.reset();
    MoveIntoPlace(tmp_, path_, "sweep results");
    committed_ = true;
  }

 private:
  void Check(hid_t status, const std::string& what) const {
    if (status >= 0) return;
    Diagnostic d;
    d.where.file = path_;
    d.message = fmt::format("HDF5 could not {}", what);
    d.expected = "a writable file on a disk with room";
    d.got = "an HDF5 error";
    throw Error(std::move(d));
  }

  // A variable-length UTF-8 string: h5py reads it as a str.
  void StringAttribute(hid_t on, const char* name, const std::string& value) {
    Id type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    Id space(H5Screate(H5S_SCALAR), H5Sclose);
    Id attr(H5Acreate2(on, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    Check(attr, std::string("write the attribute ") + name);
    const char* text = value.c_str();
    Check(H5Awrite(attr, type, &text), std::string("write the attribute ") + name);
  }

  void StringListAttribute(hid_t on, const char* name, const std::vector<std::string>& values) {
    Id type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    hsize_t n = values.size();
    Id space(n ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_NULL), H5Sclose);
    Id attr(H5Acreate2(on, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    Check(attr, std::string("write the attribute ") + name);
    std::vector<const char*> ptrs;
    for (const auto& v : values) ptrs.push_back(v.c_str());
    if (n) Check(H5Awrite(attr, type, ptrs.data()), std::string("write the attribute ") + name);
  }

  // A table (compound dataset) of doubles, one field per name, one record per run.
  void WriteParameters() {
    const size_t nf = def_.names.size();
    hsize_t n = static_cast<hsize_t>(def_.size());
    Id space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_obj_track_times(dcpl, false);
    if (nf == 0) return;
    Id mem(H5Tcreate(H5T_COMPOUND, nf * sizeof(double)), H5Tclose);
    Id disk(H5Tcreate(H5T_COMPOUND, nf * 8), H5Tclose);
    for (size_t i = 0; i < nf; ++i) {
      H5Tinsert(mem, def_.names[i].c_str(), i * sizeof(double), H5T_NATIVE_DOUBLE);
      H5Tinsert(disk, def_.names[i].c_str(), i * 8, H5T_IEEE_F64LE);
    }
    std::vector<double> buf;
    buf.reserve(n * nf);
    for (const auto& run : def_.runs) buf.insert(buf.end(), run.begin(), run.end());
    Id ds(H5Dcreate2(file_, "parameters", disk, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose);
    Check(ds, "create /parameters");
    Check(H5Dwrite(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), "write /parameters");
  }

  void WriteSummary() {
    const size_t nout = columns_.size() - 1;
    // Memory layout: run, ok, error (char*), t_final, rows..own_build, then
    // final/min/max per output.
    struct Field {
      std::string name;
      hid_t mem, disk;
      size_t size;
    };
    Id vlen(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(vlen, H5T_VARIABLE);
    H5Tset_cset(vlen, H5T_CSET_UTF8);
    std::vector<Field> fields = {{"run", H5T_NATIVE_INT64, H5T_STD_I64LE, 8},
                                 {"ok", H5T_NATIVE_INT8, H5T_STD_I8LE, 1},
                                 {"error", vlen, vlen, sizeof(char*)},
                                 {"t_final", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 8}};
    for (const char* name : {"rows", "steps", "rejected", "rhs_evals", "jac_evals"})
      fields.push_back({name, H5T_NATIVE_INT64, H5T_STD_I64LE, 8});
    fields.push_back({"own_build", H5T_NATIVE_INT8, H5T_STD_I8LE, 1});
    for (const char* what : {"final_", "min_", "max_"})
      for (size_t c = 1; c < columns_.size(); ++c)
        fields.push_back({what + columns_[c], H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 8});
    // Packed records in memory and on disk (sizes are those of the disk types
    // for numbers; the string is a pointer in memory).
    size_t mem_size = 0, disk_size = 0;
    std::vector<size_t> mem_off, disk_off;
    for (const auto& f : fields) {
      mem_off.push_back(mem_size);
      disk_off.push_back(disk_size);
      mem_size += f.size;
      disk_size += f.mem == vlen ? sizeof(char*) : f.size;
    }
    Id mem(H5Tcreate(H5T_COMPOUND, mem_size), H5Tclose);
    Id disk(H5Tcreate(H5T_COMPOUND, disk_size), H5Tclose);
    for (size_t i = 0; i < fields.size(); ++i) {
      Check(H5Tinsert(mem, fields[i].name.c_str(), mem_off[i], fields[i].mem), "summary type");
      Check(H5Tinsert(disk, fields[i].name.c_str(), disk_off[i], fields[i].disk), "summary type");
    }
    const size_t n = summary_.size();
    std::vector<unsigned char> buf(n * mem_size);
    for (size_t k = 0; k < n; ++k) {
      const SummaryRow& s = summary_[k];
      unsigned char* rec = buf.data() + k * mem_size;
      size_t f = 0;
      auto put = [&](const auto& v) {
        std::memcpy(rec + mem_off[f], &v, sizeof v);
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
    hsize_t dims = n;
    Id space(H5Screate_simple(1, &dims, nullptr), H5Sclose);
    Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_obj_track_times(dcpl, false);
    Id ds(H5Dcreate2(file_, "summary", disk, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose);
    Check(ds, "create /summary");
    Check(H5Dwrite(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), "write /summary");
  }

  const SweepDefinition& def_;
  std::string path_, tmp_;
  Id file_, data_;
  std::vector<std::string> columns_;
  hsize_t rows_ = 0;
  std::vector<SummaryRow> summary_;
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
    Diagnostic d;
    d.where.file = path;
    d.message = "this build of paynter has no HDF5 output";
    d.expected = "a build with libhdf5-dev installed (scripts/setup.sh)";
    d.got = path;
    d.hint = "write a CSV (-o results.csv), or install libhdf5-dev and build again";
    throw Error(std::move(d));
#endif
  }
  Diagnostic d;
  d.where.file = path;
  d.message = "sweep: unknown output format";
  d.expected = "a file name ending in .h5 or .hdf5 (HDF5) or .csv";
  d.got = path;
  throw Error(std::move(d));
}

}  // namespace paynter
