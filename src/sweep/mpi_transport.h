// The sweep's messages between MPI ranks (src/sweep/mpi.cc; without MPI
// these are never called: a process is then rank 0 of 1).
#pragma once

#include <string>

#include "paynter/sweep.h"

namespace paynter {

// Sends a serialized run result to rank 0; runs are sent in run order.
void MpiSendRun(const std::string& bytes);
// The next run result from `rank` (its runs arrive in the order it sent them).
SweepRunResult MpiReceiveRun(int rank);
// The lowest rank for which `ok` is false, or -1 when it holds on every rank.
int MpiFirstFailure(bool ok);

}  // namespace paynter
