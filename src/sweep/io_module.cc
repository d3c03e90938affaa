// libpaynter_sweep_io.so: the sweep's HDF5 writing and MPI messages
// (io_module.h says why they are a module of their own). Nothing here throws
// across the interface: every entry point returns a status.
#include "io_module.h"

#include <cstring>
#include <new>
#include <vector>

#ifdef PAYNTER_HDF5
#include <hdf5.h>
#endif
#ifdef PAYNTER_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#ifdef PAYNTER_HDF5
struct paynter_h5 {
  hid_t file = -1;
  hid_t data = -1;
  hsize_t runs = 0, columns = 0, rows = 0;  // /data's extent
};
#endif

namespace {

#ifdef PAYNTER_HDF5

// An HDF5 identifier closed by its destructor.
class Id {
 public:
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Id() {
    if (id_ >= 0) close_(id_);
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  operator hid_t() const { return id_; }  // NOLINT: used where a hid_t is
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

int Status(herr_t s) { return s < 0 ? -1 : 0; }

paynter_h5* H5Create(const char* path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are statuses, reported by the caller
  auto* f = new (std::nothrow) paynter_h5;
  if (!f) return nullptr;
  Id fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
  if (!fcpl.ok() || H5Pset_obj_track_times(fcpl, false) < 0 ||
      (f->file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT)) < 0) {
    delete f;
    return nullptr;
  }
  return f;
}

int H5CreateData(paynter_h5* f, uint64_t runs, uint64_t columns, uint64_t chunk_rows, double fill) {
  f->runs = runs;
  f->columns = columns;
  hsize_t dims[3] = {runs, 0, columns}, maxdims[3] = {runs, H5S_UNLIMITED, columns}, chunk[3] = {1, chunk_rows, columns};
  Id space(H5Screate_simple(3, dims, maxdims), H5Sclose);
  Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!space.ok() || !dcpl.ok() || H5Pset_chunk(dcpl, 3, chunk) < 0 ||
      H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill) < 0 || H5Pset_obj_track_times(dcpl, false) < 0)
    return -1;
  f->data = H5Dcreate2(f->file, "data", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  return f->data < 0 ? -1 : 0;
}

int H5WriteRun(paynter_h5* f, uint64_t run, uint64_t rows, const double* values) {
  if (rows == 0) return 0;
  if (rows > f->rows) {
    hsize_t dims[3] = {f->runs, rows, f->columns};
    if (H5Dset_extent(f->data, dims) < 0) return -1;
    f->rows = rows;
  }
  Id file_space(H5Dget_space(f->data), H5Sclose);
  hsize_t start[3] = {run, 0, 0}, count[3] = {1, rows, f->columns};
  if (!file_space.ok() || H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0)
    return -1;
  hsize_t mem_dims[2] = {rows, f->columns};
  Id mem_space(H5Screate_simple(2, mem_dims, nullptr), H5Sclose);
  if (!mem_space.ok()) return -1;
  return Status(H5Dwrite(f->data, H5T_NATIVE_DOUBLE, mem_space, file_space, H5P_DEFAULT, values));
}

// A variable-length UTF-8 string type: h5py reads it as a str.
hid_t StringType() {
  const hid_t type = H5Tcopy(H5T_C_S1);
  if (type < 0) return type;
  if (H5Tset_size(type, H5T_VARIABLE) < 0 || H5Tset_cset(type, H5T_CSET_UTF8) < 0) {
    H5Tclose(type);
    return -1;
  }
  return type;
}

int H5Strings(paynter_h5* f, int on_data, const char* name, const char* const* values, uint64_t n, int scalar) {
  Id type(StringType(), H5Tclose);
  hsize_t count = n;
  Id space(scalar ? H5Screate(H5S_SCALAR) : n ? H5Screate_simple(1, &count, nullptr) : H5Screate(H5S_NULL),
           H5Sclose);
  if (!type.ok() || !space.ok()) return -1;
  Id attr(H5Acreate2(on_data ? f->data : f->file, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.ok()) return -1;
  if (!scalar && n == 0) return 0;
  return Status(H5Awrite(attr, type, values));
}

int H5Table(paynter_h5* f, const char* name, uint64_t fields, const char* const* names, const int* kinds,
            const uint64_t* offsets, uint64_t record_size, const void* records, uint64_t n) {
  Id vlen(StringType(), H5Tclose);
  if (!vlen.ok()) return -1;
  // On disk the records are packed: 8 bytes for numbers of 64 bits, 1 for
  // int8, a pointer's size for a string.
  size_t disk_size = 0;
  std::vector<size_t> disk_offsets;
  for (uint64_t i = 0; i < fields; ++i) {
    disk_offsets.push_back(disk_size);
    disk_size += kinds[i] == PAYNTER_H5_I8 ? 1 : kinds[i] == PAYNTER_H5_STRING ? sizeof(char*) : 8;
  }
  Id mem(H5Tcreate(H5T_COMPOUND, record_size), H5Tclose);
  Id disk(H5Tcreate(H5T_COMPOUND, disk_size), H5Tclose);
  if (!mem.ok() || !disk.ok()) return -1;
  for (uint64_t i = 0; i < fields; ++i) {
    hid_t m = vlen, d = vlen;
    switch (kinds[i]) {
      case PAYNTER_H5_F64: m = H5T_NATIVE_DOUBLE, d = H5T_IEEE_F64LE; break;
      case PAYNTER_H5_I64: m = H5T_NATIVE_INT64, d = H5T_STD_I64LE; break;
      case PAYNTER_H5_I8: m = H5T_NATIVE_INT8, d = H5T_STD_I8LE; break;
      case PAYNTER_H5_STRING: break;
      default: return -1;
    }
    if (H5Tinsert(mem, names[i], offsets[i], m) < 0 || H5Tinsert(disk, names[i], disk_offsets[i], d) < 0) return -1;
  }
  hsize_t dims = n;
  Id space(H5Screate_simple(1, &dims, nullptr), H5Sclose);
  Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!space.ok() || !dcpl.ok() || H5Pset_obj_track_times(dcpl, false) < 0) return -1;
  Id ds(H5Dcreate2(f->file, name, disk, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose);
  if (!ds.ok()) return -1;
  return Status(H5Dwrite(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, records));
}

int H5Close(paynter_h5* f, int flush) {
  int status = 0;
  if (f->data >= 0 && H5Dclose(f->data) < 0) status = -1;
  if (flush && f->file >= 0 && H5Fflush(f->file, H5F_SCOPE_GLOBAL) < 0) status = -1;
  if (f->file >= 0 && H5Fclose(f->file) < 0) status = -1;
  delete f;
  return status;
}

#endif  // PAYNTER_HDF5

#ifdef PAYNTER_MPI

constexpr int kRunTag = 7;

int MpiInit(int* rank, int* size) {
  int provided = 0;
  // Only the main thread calls MPI; worker threads compute runs.
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return -1;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return 0;
}

void MpiFinalize() { MPI_Finalize(); }
void MpiAbort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

int MpiSend(const char* bytes, int64_t n) {
  return MPI_Send(bytes, static_cast<int>(n), MPI_BYTE, 0, kRunTag, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

int64_t MpiProbe(int rank) {
  MPI_Status status;
  if (MPI_Probe(rank, kRunTag, MPI_COMM_WORLD, &status) != MPI_SUCCESS) return -1;
  int size = 0;
  if (MPI_Get_count(&status, MPI_BYTE, &size) != MPI_SUCCESS) return -1;
  return size;
}

int MpiReceive(int rank, char* bytes, int64_t n) {
  return MPI_Recv(bytes, static_cast<int>(n), MPI_BYTE, rank, kRunTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
                 MPI_SUCCESS
             ? 0
             : -1;
}

int MpiMin(int mine, int* min) {
  return MPI_Allreduce(&mine, min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

#endif  // PAYNTER_MPI

// Wrappers that keep a C++ exception (an allocation failing) from crossing
// the C interface.
template <auto F, typename... Args>
int Guarded(Args... args) noexcept {
  try {
    return F(args...);
  } catch (...) {
    return -1;
  }
}

paynter_sweep_io MakeTable() {
  paynter_sweep_io io{};
  io.abi = PAYNTER_SWEEP_IO_ABI;
#ifdef PAYNTER_HDF5
  io.h5_create = [](const char* path) noexcept -> paynter_h5* {
    try {
      return H5Create(path);
    } catch (...) {
      return nullptr;
    }
  };
  io.h5_create_data = Guarded<H5CreateData, paynter_h5*, uint64_t, uint64_t, uint64_t, double>;
  io.h5_write_run = Guarded<H5WriteRun, paynter_h5*, uint64_t, uint64_t, const double*>;
  io.h5_strings = Guarded<H5Strings, paynter_h5*, int, const char*, const char* const*, uint64_t, int>;
  io.h5_table = Guarded<H5Table, paynter_h5*, const char*, uint64_t, const char* const*, const int*, const uint64_t*,
                        uint64_t, const void*, uint64_t>;
  io.h5_close = Guarded<H5Close, paynter_h5*, int>;
#endif
#ifdef PAYNTER_MPI
  io.mpi_init = MpiInit;
  io.mpi_finalize = MpiFinalize;
  io.mpi_abort = MpiAbort;
  io.mpi_send = MpiSend;
  io.mpi_probe = MpiProbe;
  io.mpi_receive = MpiReceive;
  io.mpi_min = MpiMin;
#endif
  return io;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const paynter_sweep_io* paynter_sweep_io_v1(void) {
  static const paynter_sweep_io io = MakeTable();
  return &io;
}
