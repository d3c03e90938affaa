// MPI for sweeps: initialised only under an MPI launcher (paynter/sweep.h),
// through the sweep's I/O module (io_module.h), which alone links MPI.
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "paynter/sweep.h"
#include "io_loader.h"
#include "mpi_transport.h"

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

// The module's MPI calls: a failed one ends every rank (a rank left waiting
// for a message would hang the job).
void Require(int status, const char* what) {
  if (status == 0) return;
  std::cerr << "paynter: sweep: MPI failed to " << what << "\n";
  MpiSession::Abort(1);
}
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
  (void)argc;  // MPI_Init_thread takes none: OpenMPI's launcher passes what it needs in the environment
  (void)argv;
  const paynter_sweep_io* io = nullptr;
  try {
    io = &SweepIoModule();
  } catch (const Error& e) {
    std::cerr << "paynter: " << e.what() << "\n";
    std::exit(1);
  }
  if (!io->mpi_init || io->mpi_init(&g_rank, &g_size) != 0) return;
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
  SweepIoModule().mpi_finalize();
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
  if (g_active) SweepIoModule().mpi_abort(code);
#endif
  std::exit(code);
}

void MpiSendRun(const std::string& bytes) {
#ifdef PAYNTER_MPI
  Require(SweepIoModule().mpi_send(bytes.data(), static_cast<int64_t>(bytes.size())), "send a run");
#else
  (void)bytes;
  throw Error("sweep: MPI is not in this build");
#endif
}

SweepRunResult MpiReceiveRun(int rank) {
#ifdef PAYNTER_MPI
  const paynter_sweep_io& io = SweepIoModule();
  const int64_t size = io.mpi_probe(rank);
  if (size < 0) Require(-1, "receive a run");
  std::string bytes(static_cast<size_t>(size), '\0');
  Require(io.mpi_receive(rank, bytes.data(), size), "receive a run");
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
  Require(SweepIoModule().mpi_min(mine, &first), "gather the ranks' failures");
  return first == g_size ? -1 : first;
#else
  return ok ? -1 : 0;
#endif
}

}  // namespace paynter
