#include "paynter/files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "paynter/error.h"

namespace paynter {

namespace fs = std::filesystem;

namespace {

// "-" is the standard output, as for the tools of the command line.
std::string OutputTarget(const std::string& path) { return path == "-" ? "/dev/stdout" : path; }

// The mode a new file gets from open(..., 0666): 0666 less the umask.
mode_t DefaultFileMode() {
  static const mode_t mode = [] {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return static_cast<mode_t>(0666 & ~mask);
  }();
  return mode;
}

// This host's name as a temporary's name holds it: letters, digits, '.' and
// '_' only, at most 64 of them.
const std::string& HostTag() {
  static const std::string tag = [] {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    std::string t;
    for (const char* c = host; *c && t.size() < 64; ++c)
      t += std::isalnum(static_cast<unsigned char>(*c)) || *c == '.' || *c == '_' ? *c : '_';
    return t.empty() ? std::string("host") : t;
  }();
  return tag;
}

// The suffixes of paynter's temporaries (TemporaryBeside's callers).
constexpr const char* kTemporarySuffixes[] = {".tmp", ".gp", ".gv", ".svg", ".h5.tmp"};

// Removes from `dir` the temporaries that a process of this host, now gone,
// left behind (a run killed with SIGKILL cannot remove its own). Only files
// named as CreateUnique names them, with this host's name and the number of
// a process that no longer exists, regular (not links) and ours.
void RemoveStaleTemporaries(const fs::path& dir) {
  const std::string prefix = ".paynter-" + HostTag() + "-";
  std::error_code ec;
  fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    // <prefix><pid>-XXXXXX<suffix>
    const size_t dash = name.find('-', prefix.size());
    if (dash == std::string::npos || dash == prefix.size() || dash - prefix.size() > 9) continue;
    const std::string pid_text = name.substr(prefix.size(), dash - prefix.size());
    if (pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string tail = name.substr(dash + 1);
    bool named_so = false;
    for (const char* suffix : kTemporarySuffixes)
      named_so = named_so || (tail.size() == 6 + std::strlen(suffix) && tail.compare(6, std::string::npos, suffix) == 0);
    if (!named_so) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to ask
    struct stat st;
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) continue;
    ::unlink(it->path().c_str());
  }
}

// Creates a file with an unpredictable name ending in `suffix` in `dir`,
// exclusively (mkstemps uses O_CREAT | O_EXCL, mode 0600); returns its
// descriptor and name, or -1. The name holds the host's name and the process
// number (.paynter-<host>-<pid>-XXXXXX<suffix>), so that a later run can tell
// a temporary whose process is gone (RemoveStaleTemporaries).
int CreateUnique(const fs::path& dir, const std::string& suffix, std::string* name) {
  std::string templ = (dir / fmt::format(".paynter-{}-{}-XXXXXX", HostTag(), ::getpid())).string() + suffix;
  const int fd = ::mkstemps(templ.data(), static_cast<int>(suffix.size()));
  if (fd >= 0) {
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    *name = templ;
  }
  return fd;
}

// A temporary file for `target` (see TemporaryBeside); returns an open descriptor.
int CreateTemporary(const std::string& target, const std::string& suffix, std::string* name) {
  if (IsSpecialOutput(target)) {
    std::error_code ec;
    const fs::path tmp_dir = fs::temp_directory_path(ec);
    const int fd = ec ? -1 : CreateUnique(tmp_dir, suffix, name);
    if (fd < 0)
      throw Error(fmt::format("{}: error: cannot create a temporary file in '{}': {}", target, tmp_dir.string(),
                              ec ? ec.message() : std::strerror(errno)));
    return fd;
  }
  fs::path dir = fs::path(target).parent_path();
  if (dir.empty()) dir = ".";
  RemoveStaleTemporaries(dir);
  const int fd = CreateUnique(dir, suffix, name);
  if (fd < 0) {
    ThrowAt({target, 0, 0}, "", fmt::format("cannot create a file in '{}': {}", dir.string(), std::strerror(errno)), "",
            "", "check that the directory exists and is writable");
  }
  // A file replaced keeps its permissions (a private 0600 output stays
  // private); a new one gets those of any new file.
  struct stat st;
  const bool replaces = ::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  ::fchmod(fd, replaces ? (st.st_mode & 0777) : DefaultFileMode());
  return fd;
}

// Writes all of `data`; false on error (errno set).
bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Opens a special output for writing in place (a dangling link gets its file);
// throws on failure.
int OpenInPlace(const std::string& target, const std::string& what) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY | O_CLOEXEC, 0666);
  if (fd < 0)
    throw Error(fmt::format("{}: error: cannot write the {}: {}", target, what, std::strerror(errno)));
  return fd;
}

}  // namespace

bool IsSpecialOutput(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

void RequireRegularInput(const std::string& path, const std::string& what, const std::string& expected,
                         const std::string& hint) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;
  ThrowAt({path, 0, 0}, "", fmt::format("the {} is not a regular file", what), expected,
          S_ISDIR(st.st_mode)                          ? "a directory"
          : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
          : S_ISFIFO(st.st_mode)                       ? "a pipe"
                                                       : "a special file",
          hint);
}

std::string TemporaryBeside(const std::string& target, const std::string& suffix) {
  std::string name;
  ::close(CreateTemporary(target, suffix, &name));
  return name;
}

void MoveIntoPlace(const std::string& tmp, const std::string& target, const std::string& what) {
  std::error_code ignored;
  if (IsSpecialOutput(target)) {
    // A device, FIFO or symbolic link stays what it is: copy the content into it.
    const int in = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) {
      const std::string why = std::strerror(errno);
      fs::remove(tmp, ignored);
      throw Error(fmt::format("{}: error: cannot read the {} back from '{}': {}", target, what, tmp, why));
    }
    int out = -1;
    try {
      out = OpenInPlace(target, what);
    } catch (...) {
      ::close(in);
      fs::remove(tmp, ignored);
      throw;
    }
    char buf[65536];
    bool ok = true;
    for (;;) {
      const ssize_t n = ::read(in, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ok = n == 0;
        break;
      }
      if (!WriteAll(out, buf, static_cast<size_t>(n))) {
        ok = false;
        break;
      }
    }
    const std::string why = std::strerror(errno);
    ::close(in);
    ok = ::close(out) == 0 && ok;
    fs::remove(tmp, ignored);
    if (!ok) throw Error(fmt::format("{}: error: writing the {} failed: {}", target, what, why));
    return;
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ignored);
    throw Error(fmt::format("{}: error: cannot move the {} into place: {}", target, what, ec.message()));
  }
}

void WriteFileAtomically(const std::string& path_given, const std::string& text, const std::string& what) {
  const std::string path = OutputTarget(path_given);
  if (IsSpecialOutput(path)) {
    const int fd = OpenInPlace(path, what);
    const bool ok = WriteAll(fd, text.data(), text.size());
    const std::string why = std::strerror(errno);
    if (::close(fd) != 0 || !ok) throw Error(fmt::format("{}: error: writing the {} failed: {}", path, what, why));
    return;
  }
  std::string tmp;
  const int fd = CreateTemporary(path, ".tmp", &tmp);
  const bool ok = WriteAll(fd, text.data(), text.size());
  if (::close(fd) != 0 || !ok) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw Error(fmt::format("{}: error: writing the {} failed (disk full?)", path, what));
  }
  MoveIntoPlace(tmp, path, what);
}

namespace {

// The temporaries of the OutputFiles alive, removed by a signal that ends the
// process (an interrupted run, `paynter simulate -o /dev/stdout | head`), so
// that not even a killed run leaves a file behind. The handler only reads
// these slots and calls unlink, which is async-signal-safe.
constexpr int kMaxTemporaries = 8;
constexpr size_t kMaxPath = 4096;
char g_temporary[kMaxTemporaries][kMaxPath];
std::atomic<bool> g_claimed[kMaxTemporaries];  // the slot belongs to an OutputFile
std::atomic<bool> g_armed[kMaxTemporaries];    // and holds a complete name: the handler may unlink it
constexpr int kFatalSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

void RemoveTemporariesAndDie(int sig) {
  for (int i = 0; i < kMaxTemporaries; ++i)
    if (g_armed[i].load()) ::unlink(g_temporary[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// Installs the handler for the signals left at their default action (once).
void InstallSignalHandlers() {
  static const bool installed = [] {
    for (int sig : kFatalSignals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = RemoveTemporariesAndDie;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
    return true;
  }();
  (void)installed;
}

// Registers a temporary for removal by a fatal signal; returns its slot, or -1
// when all are taken or the name is too long (then only the destructor
// removes it).
int RegisterTemporary(const std::string& path) {
  if (path.size() >= kMaxPath) return -1;
  InstallSignalHandlers();
  for (int i = 0; i < kMaxTemporaries; ++i) {
    bool expected = false;
    if (!g_claimed[i].compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_temporary[i], path.c_str(), path.size() + 1);
    g_armed[i].store(true);
    return i;
  }
  return -1;
}

void UnregisterTemporary(int slot) {
  if (slot < 0) return;
  g_armed[slot].store(false);
  g_claimed[slot].store(false);
}

}  // namespace

OutputFile::OutputFile(const std::string& target, const std::string& what)
    : target_(OutputTarget(target)), what_(what), buffer_(new char[kBufferSize]) {
  fd_ = CreateTemporary(target_, ".tmp", &tmp_);
  slot_ = RegisterTemporary(tmp_);
}

OutputFile::~OutputFile() { Discard(); }

void OutputFile::Discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) {
    std::error_code ignored;
    fs::remove(tmp_, ignored);
    tmp_.clear();
  }
  UnregisterTemporary(slot_);
  slot_ = -1;
}

void OutputFile::WriteThrough(const char* data, size_t size) {
  if (fd_ < 0) throw Error(fmt::format("{}: error: the {} is already closed", target_, what_));
  if (!WriteAll(fd_, data, size)) {
    const std::string why = std::strerror(errno);
    Discard();
    throw Error(fmt::format("{}: error: writing the {} failed: {}", target_, what_, why));
  }
}

void OutputFile::Flush() {
  if (used_ == 0) return;
  const size_t n = used_;
  used_ = 0;
  WriteThrough(buffer_.get(), n);
}

void OutputFile::Commit() {
  Flush();
  if (fd_ < 0) throw Error(fmt::format("{}: error: the {} is already closed", target_, what_));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    Discard();
    throw Error(fmt::format("{}: error: writing the {} failed (disk full?)", target_, what_));
  }
  const std::string tmp = tmp_;
  tmp_.clear();
  // Still registered while MoveIntoPlace copies into a special output (a
  // closed pipe ends the process there).
  try {
    MoveIntoPlace(tmp, target_, what_);  // removes tmp on failure
  } catch (...) {
    UnregisterTemporary(slot_);
    slot_ = -1;
    throw;
  }
  UnregisterTemporary(slot_);
  slot_ = -1;
}

}  // namespace paynter
