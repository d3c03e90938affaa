#include "paynter/files.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "paynter/error.h"

namespace paynter {

namespace fs = std::filesystem;

std::string TemporaryBeside(const std::string& target) {
  const fs::path t(target);
  return (t.parent_path() / (".paynter-" + std::to_string(::getpid()) + "-" + t.filename().string() + ".tmp")).string();
}

void MoveIntoPlace(const std::string& tmp, const std::string& target, const std::string& what) {
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw Error(fmt::format("{}: error: cannot move the {} into place: {}", target, what, ec.message()));
  }
}

void WriteFileAtomically(const std::string& path, const std::string& text, const std::string& what) {
  const std::string tmp = TemporaryBeside(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      Diagnostic d;
      d.where = {path, 0, 0};
      d.message = fmt::format("cannot write the {}", what);
      d.hint = "check that the directory exists and is writable";
      throw Error(d);
    }
    out << text;
    out.flush();
    if (!out) {
      out.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      throw Error(fmt::format("{}: error: writing the {} failed (disk full?)", path, what));
    }
  }
  MoveIntoPlace(tmp, path, what);
}

int RunTool(const std::string& command, std::string* output) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) *output += buf;
  return pclose(p);
}

}  // namespace paynter
