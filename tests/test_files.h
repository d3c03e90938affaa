// tests/test_files.h — the tests' helpers for files, commands and CSV tables,
// which need no part of paynter (the FMU importer uses them too); test_util.h
// includes them.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_paths.h"

namespace paynter::testing {

// A file's bytes ("" when it cannot be read).
inline std::string ReadFileBytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Writes `text` to `p`, creating its directory.
inline void WriteFileBytes(const std::filesystem::path& p, const std::string& text) {
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

struct CommandResult {
  int code;         // the exit status (-1 when it did not exit)
  std::string out;  // stdout and stderr
};

// Runs a shell command line written by the test, stderr with stdout.
inline CommandResult RunCommand(const std::string& command) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Runs the paynter program of this build (PAYNTER_EXE, test_paths.h) with
// `args`, a command line written by the test; stderr with stdout.
inline CommandResult RunPaynter(const std::string& args) { return RunCommand(std::string(PAYNTER_EXE) + " " + args); }

// A CSV of numbers under a header of names, as `paynter simulate` writes it.
struct CsvTable {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  // The index of a column, -1 when there is none.
  int Column(const std::string& name) const {
    for (size_t i = 0; i < columns.size(); ++i)
      if (columns[i] == name) return static_cast<int>(i);
    return -1;
  }
};

inline CsvTable ReadCsvTable(const std::filesystem::path& path) {
  CsvTable t;
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  std::stringstream head(line);
  for (std::string c; std::getline(head, c, ',');) t.columns.push_back(c);
  while (std::getline(f, line)) {
    std::stringstream row(line);
    std::vector<double> values;
    for (std::string c; std::getline(row, c, ',');) values.push_back(std::stod(c));
    t.rows.push_back(values);
  }
  return t;
}

}  // namespace paynter::testing
