// paynter/files.h — how paynter writes files: completely or not at all
// (other programs are started without a shell by paynter/process.h).
//
// Every output (CSV, drawing, plot, expanded model) is written to a temporary
// file beside its target and renamed into place when complete, so a failure
// never leaves a half-written file. Temporary files get unpredictable names and
// are created exclusively (mkstemp), so nothing planted under a guessed name is
// followed or overwritten. An output that exists and is not a regular file (a
// device such as /dev/null or /dev/stdout, a FIFO, a symbolic link) is written in
// place, never renamed over. A regular file replaced keeps its permissions.
// A temporary's name holds the host and the process that made it
// (.paynter-<host>-<pid>-XXXXXX.tmp); a process killed too hard to remove its
// own (SIGKILL) leaves it behind, and the next output written in that
// directory removes it: only a regular file of this user, named so, whose
// process no longer exists on this host.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace paynter {

// True when `path` exists and is not a regular file (lstat: a symbolic link
// counts as not regular). Such an output is written in place.
bool IsSpecialOutput(const std::string& path);

// An input paynter reads whole (a model file, a --params table, the CSV of
// `paynter plot`) is a regular file: one that exists and is a device
// (/dev/zero would be read for ever), a FIFO (opening it waits for a writer),
// a socket or a directory is refused before it is opened, with an Error naming
// the file: "the <what> is not a regular file", got "a device", "a pipe", ...
// (stat: a link to a regular file is one). A path that does not exist passes
// (the caller's open says so).
void RequireRegularInput(const std::string& path, const std::string& what, const std::string& expected,
                         const std::string& hint);

// Creates a new empty file with an unpredictable name ending in `suffix`, in the
// directory of `target` (so the rename into place is atomic), and returns its
// name. Its mode is that of the regular file `target` it will replace, else
// 0666 less the umask, as for any new file. For a special
// output (IsSpecialOutput), whose directory may not be writable (/dev), the file
// is made private (0600) in the temporary directory instead. Throws Error.
std::string TemporaryBeside(const std::string& target, const std::string& suffix = ".tmp");

// Renames `tmp` to `target`, or for a special target copies `tmp` into it and
// removes `tmp`. On failure removes `tmp` and throws Error naming the target and
// `what` it is.
void MoveIntoPlace(const std::string& tmp, const std::string& target, const std::string& what);

// Writes `text` beside `path`, then moves it into place (a special output is
// written directly). Throws Error.
void WriteFileAtomically(const std::string& path, const std::string& text, const std::string& what);

// An output written as it is produced: into a temporary file beside the target
// (TemporaryBeside), through a buffer flushed by whole blocks, and moved into
// place by Commit. Until then the target is untouched; an OutputFile destroyed
// without Commit (an error during the run) removes its temporary, so a failure
// never leaves a half-written file; nor does a signal that ends the process
// (SIGINT, SIGTERM, SIGHUP, SIGPIPE, when their action is the default): a
// handler removes the temporaries before the process ends as the signal
// says. Memory stays at the buffer's size however much is written.
class OutputFile {
 public:
  // Creates the temporary; throws Error (naming `target` and `what` it is).
  OutputFile(const std::string& target, const std::string& what);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void Write(const char* data, size_t size) {
    if (size > kBufferSize - used_) Flush();
    if (size > kBufferSize) return WriteThrough(data, size);
    std::memcpy(buffer_.get() + used_, data, size);
    used_ += size;
  }
  void Write(const std::string& text) { Write(text.data(), text.size()); }
  // Room for `size` bytes (at most kBufferSize) at the end of the buffer, to
  // format into; Advance(n) then keeps n of them.
  char* Reserve(size_t size) {
    if (size > kBufferSize - used_) Flush();
    return buffer_.get() + used_;
  }
  void Advance(size_t n) { used_ += n; }
  // Writes what is buffered, closes the temporary and moves it into place.
  // Throws Error (disk full, ...), the temporary removed.
  void Commit();

  static constexpr size_t kBufferSize = size_t{1} << 18;

 private:
  void Flush();  // throws Error on a failed write
  void WriteThrough(const char* data, size_t size);
  void Discard();

  std::string target_, what_, tmp_;
  int fd_ = -1;
  int slot_ = -1;  // in the table of temporaries a fatal signal removes
  std::unique_ptr<char[]> buffer_;
  size_t used_ = 0;
};

}  // namespace paynter
