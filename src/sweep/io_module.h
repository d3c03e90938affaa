/* The sweep's HDF5 files and MPI messages live in a module of their own,
 * libpaynter_sweep_io.so, loaded (dlopen) only by a sweep that writes HDF5 or
 * runs under an MPI launcher: HDF5 and OpenMPI bring some forty shared
 * libraries (curl, ssl, krb5, hwloc, ...) whose loading and relocation would
 * otherwise be paid by every start of the paynter program, about 16 million
 * instructions, more than a small model's whole simulation.
 *
 * This is the interface between the program and the module: C only, plain
 * data, no exception crosses it (the program may carry its own C++ runtime).
 * Calls returning int give 0 on success and -1 on failure; the caller knows
 * what it asked for and says so in its error. */
#ifndef PAYNTER_SWEEP_IO_MODULE_H
#define PAYNTER_SWEEP_IO_MODULE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PAYNTER_SWEEP_IO_ABI 1

typedef struct paynter_h5 paynter_h5; /* an HDF5 file being written */

/* The field types of a table (a compound dataset): little-endian on disk. */
enum paynter_h5_kind {
  PAYNTER_H5_F64 = 0,    /* double */
  PAYNTER_H5_I64 = 1,    /* int64_t */
  PAYNTER_H5_I8 = 2,     /* int8_t */
  PAYNTER_H5_STRING = 3  /* const char* (UTF-8), a variable-length string on disk */
};

typedef struct paynter_sweep_io {
  int abi; /* PAYNTER_SWEEP_IO_ABI */

  /* ---- HDF5 (null pointers when the module was built without it) ---- */
  /* Creates the file `path` (truncating it), with no modification times in
   * object headers, so that the same content gives the same bytes. Null on failure. */
  paynter_h5* (*h5_create)(const char* path);
  /* The dataset /data of doubles [runs, rows, columns], rows growing as runs
   * arrive (chunks of 1 x chunk_rows x columns), unwritten values `fill`. */
  int (*h5_create_data)(paynter_h5* f, uint64_t runs, uint64_t columns, uint64_t chunk_rows, double fill);
  /* Run `run`'s rows (row-major, rows x columns) into /data. */
  int (*h5_write_run)(paynter_h5* f, uint64_t run, uint64_t rows, const double* values);
  /* A UTF-8 string attribute on the file (on_data = 0) or on /data (1):
   * one string (scalar = 1, n = 1) or a list of n strings. */
  int (*h5_strings)(paynter_h5* f, int on_data, const char* name, const char* const* values, uint64_t n,
                    int scalar);
  /* The dataset /`name`, a table of n records. In memory record k starts at
   * records + k * record_size and field i at offsets[i]; kinds[i] says its type. */
  int (*h5_table)(paynter_h5* f, const char* name, uint64_t fields, const char* const* names, const int* kinds,
                  const uint64_t* offsets, uint64_t record_size, const void* records, uint64_t n);
  /* Flushes (flush = 1) and closes the file, and frees f (also after a failure). */
  int (*h5_close)(paynter_h5* f, int flush);

  /* ---- MPI (null pointers when the module was built without it) ---- */
  /* MPI_Init_thread (the calling thread alone uses MPI); this rank and the count. */
  int (*mpi_init)(int* rank, int* size);
  void (*mpi_finalize)(void);
  void (*mpi_abort)(int code);
  /* Bytes to rank 0, and from `rank` (its messages in the order it sent them). */
  int (*mpi_send)(const char* bytes, int64_t n);
  int64_t (*mpi_probe)(int rank); /* the size of rank's next message; -1 on failure */
  int (*mpi_receive)(int rank, char* bytes, int64_t n);
  /* The minimum of `mine` over all ranks (-1 stays for failure: ranks give >= 0). */
  int (*mpi_min)(int mine, int* min);
} paynter_sweep_io;

/* The module's single entry point. */
const paynter_sweep_io* paynter_sweep_io_v1(void);

#ifdef __cplusplus
}
#endif

#endif
