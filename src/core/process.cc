// core/process.cc — programs started without a shell (paynter/process.h).
#include "paynter/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace paynter {

std::vector<std::string> CommandWords(const std::string& text) {
  constexpr const char* kBlanks = " \t\n\r\v\f";
  std::vector<std::string> out;
  size_t i = 0;
  while ((i = text.find_first_not_of(kBlanks, i)) != std::string::npos) {
    const size_t e = std::min(text.size(), text.find_first_of(kBlanks, i));
    out.push_back(text.substr(i, e - i));
    i = e;
  }
  return out;
}

namespace {

bool IsExecutable(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string FindProgram(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return IsExecutable(name) ? name : "";
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (IsExecutable(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

PreparedCommand::PreparedCommand(std::vector<std::string> argv) : args_(std::move(argv)) {
  for (std::string& a : args_) argv_.push_back(a.data());
  argv_.push_back(nullptr);
  search_path_ = !args_.empty() && args_[0].find('/') == std::string::npos;
  posix_spawn_file_actions_init(&actions_);
  posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0);
  // The caller's handlers and ignored signals are not the program's (an
  // inherited SIG_IGN of SIGCHLD would hide the statuses of a compiler's own
  // children); nor is its signal mask.
  posix_spawnattr_init(&attr_);
  sigset_t all_signals, none;
  sigfillset(&all_signals);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr_, &all_signals);
  posix_spawnattr_setsigmask(&attr_, &none);
  posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
}

PreparedCommand::PreparedCommand(std::vector<std::string> argv, const std::string& output_file)
    : PreparedCommand(std::move(argv)) {
  posix_spawn_file_actions_addopen(&actions_, 1, output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions_, 1, 2);
}

PreparedCommand::PreparedCommand(std::vector<std::string> argv, int output_fd) : PreparedCommand(std::move(argv)) {
  posix_spawn_file_actions_adddup2(&actions_, output_fd, 1);
  posix_spawn_file_actions_adddup2(&actions_, output_fd, 2);
}

PreparedCommand::~PreparedCommand() {
  posix_spawn_file_actions_destroy(&actions_);
  posix_spawnattr_destroy(&attr_);
}

pid_t PreparedCommand::Start() const {
  if (args_.empty()) {
    errno = EINVAL;
    return -1;
  }
  pid_t pid = -1;
  char* const* argv = const_cast<char* const*>(argv_.data());
  const int rc = search_path_ ? ::posix_spawnp(&pid, argv_[0], &actions_, &attr_, argv, environ)
                              : ::posix_spawn(&pid, argv_[0], &actions_, &attr_, argv, environ);
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  return pid;
}

int RunTool(const std::vector<std::string>& argv, std::string* output) {
  if (argv.empty()) return -1;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    *output += fmt::format("cannot run {}: {}\n", argv[0], std::strerror(errno));
    return -1;
  }
  pid_t pid;
  {
    const PreparedCommand command(argv, pipe_fds[1]);
    pid = command.Start();
  }
  const int start_errno = errno;
  ::close(pipe_fds[1]);
  if (pid < 0) {
    ::close(pipe_fds[0]);
    *output += fmt::format("cannot run {}: {}\n", argv[0], std::strerror(start_errno));
    return -1;
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (output->size() < 100000) output->append(buf, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return status;
}

}  // namespace paynter
