// paynter/files.h — how paynter writes files: completely or not at all.
//
// Every output (CSV, drawing, plot, expanded model) is written to a temporary
// name beside its target and renamed into place when complete, so a failure
// never leaves a half-written file.
#pragma once

#include <string>

namespace paynter {

// A temporary name beside `target` (same directory, so the rename is atomic).
std::string TemporaryBeside(const std::string& target);

// Renames `tmp` to `target`; on failure removes `tmp` and throws Error naming
// the target and `what` it is.
void MoveIntoPlace(const std::string& tmp, const std::string& target, const std::string& what);

// Writes `text` beside `path`, then moves it into place. Throws Error.
void WriteFileAtomically(const std::string& path, const std::string& text, const std::string& what);

// Runs an external tool through the shell; returns its exit status and puts
// what it printed (stdout and stderr) in `output`.
int RunTool(const std::string& command, std::string* output);

}  // namespace paynter
