// Loading libpaynter_sweep_io.so (io_module.h) when a sweep first needs HDF5
// or MPI.
#pragma once

#include "io_module.h"

namespace paynter {

// The module's table, loaded on the first call. Looked for beside the file
// that holds this code (the paynter program in a build tree), then in the
// installed layout (<bin>/../lib/paynter/), then in this build's tree; the
// environment variable PAYNTER_SWEEP_IO names the one file to load instead. Throws
// Error, saying where it looked and why it failed, when none loads.
const paynter_sweep_io& SweepIoModule();

}  // namespace paynter
