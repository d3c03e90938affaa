// tests/fmi_importer_calls.cc — an exported FMU unpacked and checked (its
// files, its shared object's dependencies and exports), its fmi2 functions
// loaded; the shell and the FMUs' logger (fmi_importer.h).
#include "fmi_importer.h"

namespace fmi_import {

std::string Source(const std::string& rel) {
  return fs::path(rel).is_absolute() ? rel : std::string(PAYNTER_SOURCE_DIR) + "/" + rel;
}

Result Shell(const std::string& cmd) {
  Result r{-1, ""};
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  r.status = pclose(p);
  return r;
}

std::vector<std::string> g_log;
void Logger(fmi2ComponentEnvironment, fmi2String instance, fmi2Status status, fmi2String category, fmi2String message,
            ...) {
  char buf[1000];
  va_list ap;
  va_start(ap, message);
  std::vsnprintf(buf, sizeof buf, message, ap);
  va_end(ap);
  (void)status;
  g_log.push_back(std::string(instance) + " [" + category + "] " + buf);
}

const fmi2CallbackFunctions kCallbacks = {Logger, nullptr, nullptr, nullptr, nullptr};

fs::path TestDir(const std::string& name) {
  const fs::path d = fs::path(PAYNTER_BINARY_DIR) / "fmi_importer" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Exports `model` with `options` and unpacks it; the checks of the files and
// the description are made here.
void ExportAndUnpack(const std::string& model, const std::string& options, Unpacked* u) {
  const std::string name = fs::path(model).stem().string();
  // A directory per test: CTest runs the importer's tests in parallel.
  u->dir = TestDir(std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" + name);
  const fs::path fmu = u->dir / (name + ".fmu");
  const Result r = Shell(std::string(PAYNTER_EXE) + " fmu " + Source(model) + " " + options + " -o " + fmu.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const Result z = Shell("cd " + u->dir.string() + " && unzip -q " + fmu.string() + " -d unpacked");
  ASSERT_EQ(z.status, 0) << z.output;
  const fs::path root = u->dir / "unpacked";
  for (const char* f : {"modelDescription.xml", "sources/fmu.c", "sources/model.h", "sources/model.c", "sources/rhs.c",
                        "sources/outputs.c"})
    EXPECT_TRUE(fs::exists(root / f)) << f;
  u->desc = CheckModelDescription(paynter::testing::ReadFileBytes(root / "modelDescription.xml"));
  // <SourceFiles> lists every C file of sources/, and nothing else (parameters.c was missing).
  std::set<std::string> c_files;
  for (const auto& entry : fs::directory_iterator(root / "sources"))
    if (entry.path().extension() == ".c") c_files.insert(entry.path().filename().string());
  EXPECT_EQ(u->desc.source_files, c_files);
  const std::string id = u->desc.identifier_me.empty() ? u->desc.identifier_cs : u->desc.identifier_me;
  u->so = (root / "binaries" / "linux64" / (id + ".so")).string();
  ASSERT_TRUE(fs::exists(u->so)) << u->so;
  // The shared object needs libc and libm only.
  const Result needed = Shell("readelf -d " + u->so);
  ASSERT_EQ(needed.status, 0) << needed.output;
  std::istringstream lines(needed.output);
  int num_needed = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.find("(NEEDED)") != std::string::npos) {
      ++num_needed;
      EXPECT_TRUE(line.find("[libc.so.6]") != std::string::npos || line.find("[libm.so.6]") != std::string::npos)
          << line;
    }
  EXPECT_GE(num_needed, 1);
  // Its undefined symbols are C library functions (versioned GLIBC), or weak.
  const Result undef = Shell("nm -u " + u->so);
  ASSERT_EQ(undef.status, 0) << undef.output;
  std::istringstream syms(undef.output);
  for (std::string line; std::getline(syms, line);) {
    std::istringstream w(line);
    std::string kind, sym;
    w >> kind >> sym;
    if (kind == "w") continue;
    EXPECT_NE(sym.find("@GLIBC_"), std::string::npos) << line;
    EXPECT_NE(sym.rfind("_Z", 0), 0u) << "C++ symbol " << line;
  }
  // It exports the fmi2 functions and nothing else.
  const Result defined = Shell("nm -D --defined-only " + u->so);
  std::istringstream exported(defined.output);
  for (std::string line; std::getline(exported, line);) {
    std::istringstream w(line);
    std::string addr, kind, sym;
    w >> addr >> kind >> sym;
    EXPECT_EQ(sym.rfind("fmi2", 0), 0u) << "exported: " << line;
  }
  u->fmu.Load(u->so);
}

}  // namespace fmi_import
