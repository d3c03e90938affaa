// codegen/native_cache.cc — where native code is kept: the cache directory
// (the user's own, nobody else's to write) or a private directory of the run,
// the keys that name its files, and NativeProgram::Prepare, which finds what
// the cache holds for a plan and what a build must make (see native.h).
#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "emit_c.h"
#include "native.h"
#include "native_build.h"
#include "paynter/error.h"
#include "paynter/hash.h"

namespace paynter::codegen {
namespace {

namespace fs = std::filesystem;

// Part of every key: a change to the form of the generated code changes it.
constexpr const char* kFormatVersion = "paynter-codegen-c-3";

// Why `dir` may not hold native code: "" when it is a directory of the user's
// own that nobody else may write (a symbolic link to such a directory will do).
std::string UnsafeDirReason(const fs::path& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return fmt::format("'{}': {}", dir.string(), std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return fmt::format("'{}' is not a directory", dir.string());
  if (st.st_uid != ::geteuid())
    return fmt::format("'{}' belongs to another user (uid {})", dir.string(), static_cast<long>(st.st_uid));
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return fmt::format("'{}' is writable by group or others (mode {:04o})", dir.string(), st.st_mode & 07777);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return fmt::format("'{}' is not writable", dir.string());
  return "";
}

// Why the shared object at `path` may not be loaded: "" when it is a regular file
// of the user's own that nobody else may write.
std::string UnsafeObjectReason(const fs::path& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if (st.st_uid != ::geteuid()) return fmt::format("it belongs to another user (uid {})", static_cast<long>(st.st_uid));
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return fmt::format("it is writable by group or others (mode {:04o})", st.st_mode & 07777);
  return "";
}

// Creates `dir` (its last component private, 0700) unless it exists; then
// returns why it may not be used, or "".
std::string PrepareCacheDir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      return fmt::format("'{}' cannot be created: {}", dir.string(), std::strerror(errno));
  }
  return UnsafeDirReason(dir);
}

// Where native code is built and loaded from: the cache directory, or, when no
// safe one can be had, a private directory of this run (mkdtemp), removed once
// the object is loaded. There is no shared fallback under a predictable name.
struct ObjectDir {
  fs::path path;
  bool cached = true;
  std::string note;  // why the code is not cached
};

ObjectDir ChooseObjectDir(const CodegenOptions& options) {
  std::string reasons;
  const std::string dir = PrivateCacheDir(options.cache_dir, &reasons);
  if (!dir.empty()) return {dir, true, ""};
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  std::string templ = ((ec ? fs::path("/tmp") : tmp) / "paynter-XXXXXX").string();
  if (!::mkdtemp(templ.data()))
    ThrowAt({}, "",
            fmt::format("no cache directory for native code ({}), and no private directory in '{}': {}", reasons,
                        fs::path(templ).parent_path().string(), std::strerror(errno)),
            "", "", "set XDG_CACHE_HOME to a directory of your own, or use the tape backend");
  return {templ, false, "native code not cached: " + reasons};
}

}  // namespace

std::unique_ptr<NativeSource> NativeProgram::Prepare(const Plan& plan, const CodegenOptions& options,
                                                     const NativeTuning& tuning) {
  CUnits c = WriteCUnits(plan, tuning);
  auto src = std::make_unique<NativeSource>();
  src->units = std::move(c.units);
  src->compiler = FindCompiler();
  CompilerWords(src->compiler);
  const ObjectDir dir = ChooseObjectDir(options);
  src->dir = dir.path.string();
  src->cached = dir.cached;
  src->cache_note = dir.note;
  src->flags = tuning.flags.empty() ? CompileFlags(c.num_ops) : tuning.flags + " " + kExactFlags;
  const uint64_t command_key =
      Fnv1a64(fmt::format("{}\n{}\n{}\n{}\n", kFormatVersion, src->compiler, src->flags, kLinkFlags));
  uint64_t key = command_key;
  for (const std::string& unit : src->units) {
    src->unit_keys.push_back(Fnv1a64(unit, command_key));
    key = Fnv1a64(fmt::format("{:016x}\n", src->unit_keys.back()), key);
  }
  src->so_path = (dir.path / fmt::format("pn_{:016x}.so", key)).string();
  src->chunks = std::move(c.chunks);
  src->residual_fns = std::move(c.residual_fns);
  src->jacobian_fns = std::move(c.jacobian_fns);
  src->num_w = c.num_w;
  src->max_function_ops = c.max_function_ops;
  src->num_ops = c.num_ops;

  struct stat st;
  if (dir.cached && ::lstat(src->so_path.c_str(), &st) == 0) {
    const std::string why = UnsafeObjectReason(src->so_path);
    if (why.empty()) {
      src->handle = dlopen(src->so_path.c_str(), RTLD_NOW | RTLD_LOCAL);  // an unloadable file is rebuilt
    } else {
      // Never loaded: rebuilt in its place (the directory is the user's alone).
      src->cache_note = fmt::format("cached object '{}' not loaded: {}; rebuilt", src->so_path, why);
    }
  }
  src->cache_hit = src->handle != nullptr;
  if (src->handle) return src;
  for (size_t u = 0; u < src->units.size(); ++u) {
    // An object is linked into code that will run: reused only when safe to load.
    const fs::path object = dir.path / fmt::format("pn_o_{:016x}.o", src->unit_keys[u]);
    if (src->units.size() == 1 || !dir.cached || ::lstat(object.c_str(), &st) != 0) {
      src->todo.push_back(int(u));
    } else if (const std::string why = UnsafeObjectReason(object); !why.empty()) {
      src->todo.push_back(int(u));  // rebuilt in its place (the directory is the user's alone)
      if (src->cache_note.empty())
        src->cache_note = fmt::format("cached object '{}' not used: {}; rebuilt", object.string(), why);
    }
  }
  return src;
}

NativeSource::~NativeSource() {
  if (handle) dlclose(handle);
  std::error_code ec;
  if (!cached && !dir.empty()) fs::remove_all(dir, ec);  // the loaded object stays mapped
}

}  // namespace paynter::codegen

namespace paynter {

std::string PrivateCacheDir(const std::string& configured, std::string* why) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (!configured.empty()) {
    candidates.push_back(configured);
  } else {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    if (xdg && *xdg) candidates.push_back(fs::path(xdg) / "paynter");
    if (home && *home) candidates.push_back(fs::path(home) / ".cache" / "paynter");
  }
  std::string reasons;
  for (const fs::path& dir : candidates) {
    const std::string reason = codegen::PrepareCacheDir(dir);
    if (reason.empty()) return dir.string();
    reasons += (reasons.empty() ? "" : "; ") + reason;
  }
  if (why) *why = candidates.empty() ? "$XDG_CACHE_HOME and $HOME are not set" : reasons;
  return "";
}

}  // namespace paynter
