// paynter/process.h — programs started without a shell.
//
// paynter starts other programs (the C compiler, Graphviz, gnuplot) with an
// argument vector, never through a shell: no text of a model, and no quoting
// of a setting, can become a command. One way does it: posix_spawn, with
// everything the start needs made beforehand (PreparedCommand), so that a
// start is safe even in a process forked from one with other threads (the
// native backend's detached build process, src/codegen/native_build.cc).
#pragma once

#include <spawn.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace paynter {

// The words of a command setting ($CC, compiler flags), split at blanks
// (space, tab, line breaks): no shell reads them, so there is no quoting.
std::vector<std::string> CommandWords(const std::string& text);

// The path of the program `name`: `name` itself when it holds a '/', else the
// first executable regular file of that name in the directories of $PATH
// (/usr/local/bin:/usr/bin:/bin when it is unset); "" when there is none.
std::string FindProgram(const std::string& name);

// A program started with the argument vector `argv` (argv[0]: a path, or a
// name looked up on $PATH), its standard input /dev/null and its standard
// output and error both into one file (created 0600, truncated) or one
// descriptor of the caller's; it gets the caller's environment, every signal
// at its default and none blocked. Everything is made when the command is
// made, so Start allocates nothing and makes only async-signal-safe calls.
class PreparedCommand {
 public:
  PreparedCommand(std::vector<std::string> argv, const std::string& output_file);
  PreparedCommand(std::vector<std::string> argv, int output_fd);
  PreparedCommand(const PreparedCommand&) = delete;
  PreparedCommand& operator=(const PreparedCommand&) = delete;
  ~PreparedCommand();
  // Starts the program: its process id, or -1 with errno set (no program of
  // that name, or no process to be had). The caller waits for it (waitpid).
  pid_t Start() const;
  const std::vector<std::string>& argv() const { return args_; }

 private:
  explicit PreparedCommand(std::vector<std::string> argv);
  std::vector<std::string> args_;
  std::vector<char*> argv_;  // into args_, null-terminated
  bool search_path_ = false;
  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
};

// Runs a program to its end (argv as for PreparedCommand); returns its wait
// status (0 on success), or -1 when it could not be started, and puts what it
// printed on its standard output and error (at most about 100 kB), or why it
// could not be started, in `output`.
int RunTool(const std::vector<std::string>& argv, std::string* output);

}  // namespace paynter
