// Where paynter finds the data it reads at run time (the component library,
// the report page's web/ files), built or installed (src/core/data_dir.cc).
#pragma once

#include <string>

namespace paynter {

// The directory `name` of paynter's data: $`env` when set and not empty; else
// <prefix>/share/paynter/<name> of an installed paynter, found from the file
// holding this code (the program <prefix>/bin/paynter, or the Python module
// under <prefix>/lib/python3/dist-packages/paynter/) when that directory
// exists; else `built`, the source tree's directory fixed when paynter was
// built.
std::string DataDirectory(const std::string& name, const char* env, const std::string& built);

// The directory of the file holding paynter's code (the program, or the
// shared library the Python module loads), without symbolic links; empty
// when it cannot be found.
std::string CodeDirectory();

}  // namespace paynter
