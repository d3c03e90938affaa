// Finds and loads libpaynter_sweep_io.so (io_loader.h).
#include "io_loader.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "paynter/data_dir.h"
#include "paynter/error.h"

namespace paynter {
namespace {

namespace fs = std::filesystem;

constexpr const char* kModule = "libpaynter_sweep_io.so";

const paynter_sweep_io* Load(std::string* tried) {
  std::vector<fs::path> candidates;
  const fs::path own = CodeDirectory();
  if (const char* path = std::getenv("PAYNTER_SWEEP_IO"); path && *path) {
    candidates.push_back(path);  // this module and no other
  } else if (!own.empty()) {
    candidates.push_back(own / kModule);
    candidates.push_back(own / PAYNTER_SWEEP_IO_RELATIVE / kModule);  // installed: <bin>/../lib/paynter
  }
  if (candidates.size() != 1) candidates.push_back(PAYNTER_SWEEP_IO_BUILT);  // this build's own
  for (const fs::path& p : candidates) {
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      *tried += fmt::format("\n  {}: no such file", p.string());
      continue;
    }
    // Global: OpenMPI's own components resolve symbols of libmpi when it loads them.
    void* handle = dlopen(p.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
      const char* why = dlerror();
      *tried += fmt::format("\n  {}: {}", p.string(), why ? why : "could not be loaded");
      continue;
    }
    using Entry = const paynter_sweep_io* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "paynter_sweep_io_v1"));
    const paynter_sweep_io* io = entry ? entry() : nullptr;
    if (io && io->abi == PAYNTER_SWEEP_IO_ABI) return io;  // stays loaded for the process's life
    *tried += fmt::format("\n  {}: not this build's module (interface {})", p.string(), io ? io->abi : -1);
    dlclose(handle);
  }
  return nullptr;
}

}  // namespace

const paynter_sweep_io& SweepIoModule() {
  static std::once_flag once;
  static const paynter_sweep_io* io = nullptr;
  static std::string tried;
  std::call_once(once, [] { io = Load(&tried); });
  if (io) return *io;
  ThrowAt({}, "", fmt::format("sweep: the module for HDF5 files and MPI ({}) could not be loaded", kModule),
          "the module built or installed with this paynter", "looked in:" + tried,
          "build the target paynter_sweep_io (it is built with the paynter program), or write a CSV (-o results.csv)");
}

}  // namespace paynter
