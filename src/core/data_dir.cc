// Where paynter's run-time data is (data_dir.h).
#include "paynter/data_dir.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

// Relative paths, fixed by cmake/install.cmake, from the installed program's
// directory and from the installed Python module's to <prefix>/share/paynter.
#ifndef PAYNTER_DATA_FROM_BIN
#define PAYNTER_DATA_FROM_BIN "../share/paynter"
#endif
#ifndef PAYNTER_DATA_FROM_PYTHON
#define PAYNTER_DATA_FROM_PYTHON "../../../../share/paynter"
#endif

namespace paynter {

std::string CodeDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&CodeDirectory), &info) == 0 || !info.dli_fname) return {};
  // The program itself is named as it was started (argv[0]): a name without
  // '/' was found on PATH and is no path from here; /proc/self/exe is its file.
  const std::string name = info.dli_fname;
  std::error_code ec;
  const std::filesystem::path self =
      std::filesystem::canonical(name.find('/') == std::string::npos ? "/proc/self/exe" : name, ec);
  return ec ? std::string() : self.parent_path().string();
}

std::string DataDirectory(const std::string& name, const char* env, const std::string& built) {
  namespace fs = std::filesystem;
  if (const char* value = env ? std::getenv(env) : nullptr; value && *value) return value;
  if (const std::string own = CodeDirectory(); !own.empty()) {
    for (const char* relative : {PAYNTER_DATA_FROM_BIN, PAYNTER_DATA_FROM_PYTHON}) {
      std::error_code ec;
      const fs::path installed = (fs::path(own) / relative / name).lexically_normal();
      if (fs::is_directory(installed, ec)) return installed.string();
    }
  }
  return built;
}

}  // namespace paynter
