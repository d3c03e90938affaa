// paynter/files.h — how paynter writes files: completely or not at all, and
// without handing any text to a shell.
//
// Every output (CSV, drawing, plot, expanded model) is written to a temporary
// file beside its target and renamed into place when complete, so a failure
// never leaves a half-written file. Temporary files get unpredictable names and
// are created exclusively (mkstemp), so nothing planted under a guessed name is
// followed or overwritten. An output that exists and is not a regular file (a
// device such as /dev/null or /dev/stdout, a FIFO, a symbolic link) is written in
// place, never renamed over.
#pragma once

#include <string>
#include <vector>

namespace paynter {

// True when `path` exists and is not a regular file (lstat: a symbolic link
// counts as not regular). Such an output is written in place.
bool IsSpecialOutput(const std::string& path);

// Creates a new empty file with an unpredictable name ending in `suffix`, in the
// directory of `target` (so the rename into place is atomic), and returns its
// name. Its mode is 0666 less the umask, as for any new file. For a special
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

// Runs an external program (looked up on PATH) with the arguments `argv`
// (argv[0] is the program), directly, without a shell; returns its wait status
// (0 on success) and puts what it printed (stdout and stderr) in `output`.
int RunTool(const std::vector<std::string>& argv, std::string* output);

}  // namespace paynter
