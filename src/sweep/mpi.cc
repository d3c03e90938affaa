// MPI for sweeps: initialised only under an MPI launcher (paynter/sweep.h).
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "paynter/sweep.h"
#include "sweep/mpi_transport.h"

#ifdef PAYNTER_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace paynter {
namespace {
bool g_active = false;
int g_rank = 0, g_size = 1;

// Set by OpenMPI's mpirun (OMPI_COMM_WORLD_SIZE), and by PMI-based launchers
// (MPICH's hydra, Slurm's srun) as PMI_SIZE or PMIX_RANK.
bool UnderLauncher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

constexpr int kRunTag = 7;
}  // namespace

bool MpiSession::Built() {
#ifdef PAYNTER_MPI
  return true;
#else
  return false;
#endif
}

MpiSession::MpiSession(int* argc, char*** argv) {
#ifdef PAYNTER_MPI
  if (!UnderLauncher() || g_active) return;
  int provided = 0;
  // Only the main thread calls MPI; worker threads compute runs.
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_active = true;
#else
  (void)argc;
  (void)argv;
  if (UnderLauncher() && std::getenv("OMPI_COMM_WORLD_RANK") && std::strcmp(std::getenv("OMPI_COMM_WORLD_RANK"), "0")) {
    // Each process would do every run and write the file: say so, and do nothing.
    std::cerr << "paynter: this build has no MPI (PAYNTER_MPI): run it without mpirun\n";
    std::exit(1);
  }
#endif
}

MpiSession::~MpiSession() {
#ifdef PAYNTER_MPI
  if (!g_active) return;
  MPI_Finalize();
  g_active = false;
  g_rank = 0;
  g_size = 1;
#endif
}

bool MpiSession::Active() { return g_active; }
int MpiSession::Rank() { return g_rank; }
int MpiSession::Size() { return g_size; }

void MpiSession::Abort(int code) {
#ifdef PAYNTER_MPI
  if (g_active) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

void MpiSendRun(const std::string& bytes) {
#ifdef PAYNTER_MPI
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kRunTag, MPI_COMM_WORLD);
#else
  (void)bytes;
  throw Error("sweep: MPI is not in this build");
#endif
}

SweepRunResult MpiReceiveRun(int rank) {
#ifdef PAYNTER_MPI
  MPI_Status status;
  MPI_Probe(rank, kRunTag, MPI_COMM_WORLD, &status);
  int size = 0;
  MPI_Get_count(&status, MPI_BYTE, &size);
  std::string bytes(static_cast<size_t>(size), '\0');
  MPI_Recv(bytes.data(), size, MPI_BYTE, rank, kRunTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return ReadSweepRunResult(bytes);
#else
  (void)rank;
  throw Error("sweep: MPI is not in this build");
#endif
}

int MpiFirstFailure(bool ok) {
#ifdef PAYNTER_MPI
  if (!g_active) return ok ? -1 : 0;
  int mine = ok ? g_size : g_rank, first = g_size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return first == g_size ? -1 : first;
#else
  return ok ? -1 : 0;
#endif
}

}  // namespace paynter
