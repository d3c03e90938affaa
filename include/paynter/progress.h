// paynter/progress.h — a word on stderr while long work goes on.
//
// Two kinds of work can take long: a run (the solvers' "t = … / t_end" line)
// and the symbolic stages before it (a mechanism's equations in joint
// coordinates, a large model's lowering, the compiler). Both speak through one
// ProgressLine, which decides how:
//
//   on a terminal   one line, rewritten in place after the first second,
//                   erased when the work is done;
//   otherwise       (a pipe, a log, a test) a line of its own after 5 s and
//                   every 5 s after that, so that nothing runs for longer
//                   than that without a word.
//
// A stage names itself with a StageScope; stage lines are off unless
// SetStageProgress(true) was called (the command line and the Python module
// do). Scopes nest; the line names the innermost and counts from the
// outermost. Only the thread that opened the outermost scope is followed
// (the runs of a sweep in other threads stay quiet).
//
//   SetStageProgress(true);
//   {
//     StageScope stage("forming the equations of B4_spatial_slider_crank.yaml");
//     ...  // after 5 s: "paynter: forming the equations of … (5 s)"
//   }
#pragma once

#include <chrono>
#include <string>

namespace paynter {

// Where progress lines go (stderr) and when they are due.
class ProgressLine {
 public:
  ProgressLine();
  ~ProgressLine();  // erases a line left on a terminal
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  // True when a line would be shown now: after the first second (terminal)
  // or 5 s (otherwise) since construction, and not sooner than 0.1 s
  // (terminal) or 5 s (otherwise) after the last one.
  bool Due() const;
  // Shows `text` (one line, no newline): rewritten in place on a terminal,
  // a line of its own otherwise.
  void Show(const std::string& text);
  // A closing line of its own (not on a terminal, where the line is erased):
  // only when something was shown.
  void Close(const std::string& text);
  bool shown() const { return shown_; }
  double seconds() const;  // since construction

 private:
  bool terminal_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

// Stage lines on or off for the whole process (off by default).
void SetStageProgress(bool on);
bool StageProgress();

// A named stage, for as long as the object lives. Cheap when stage lines are
// off or another thread owns them.
class StageScope {
 public:
  explicit StageScope(std::string what);
  ~StageScope();
  StageScope(const StageScope&) = delete;
  StageScope& operator=(const StageScope&) = delete;

 private:
  bool active_ = false;
};

}  // namespace paynter
