// paynter studio's answers: the page, and the JSON of check and simulate on a
// model's text as the editor holds it (docs/studio.md). No HTTP here
// (server.cc): each function takes the request's parts and gives the body.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphviz.h"
#include "paynter/run.h"

namespace paynter::studio {

// The page: the studio's script and style (web/studio.js, studio.css) and the
// libraries (CodeMirror, uPlot) inlined; `web_dir` as ReportOptions::web_dir.
// Throws Error when a file of it is missing (hint: npm ci in web/).
std::string StudioPage(const std::string& web_dir);

// check and causality on `text`, read as the model file `file` (its relative
// submodel paths are the file's; errors name `shown`): the diagnostics (each
// with its line, message, expected, got and hint; causal conflicts and
// storage in derivative causality at their elements' lines), the drawing
// (Graphviz SVG, as `paynter draw` makes it), the parameters, outputs and
// element names (for completion and sliders), and the time taken by each
// part (load, causality, equations, drawing) and in all.
std::string CheckJson(const std::string& text, const std::filesystem::path& file, const std::string& shown,
                      DotRenderer& renderer);

// The options of a simulate request: `simulate`'s, by their command-line names
// without the dashes (t-end, t0, method, form, rtol, atol, dt-out, step,
// constraints, backend, max-steps, param as NAME=VALUE, repeatable).
// Throws Error naming a bad one.
RunOptions SimulateOptions(const std::multimap<std::string, std::string>& query);

// The run going on, between the request that runs it (Simulator::RunJson)
// and those that ask how far it is or stop it (GET /api/progress, POST
// /api/stop), which come on other threads of the server.
class RunProgress {
 public:
  // A run named `id` (the page's) begins: preparing until the solver first
  // reports a time; Stop before that stops it when it starts to integrate.
  void Begin(const std::string& id, double t0, double t_end);
  void End();
  // The solver's hook (RunOptions::on_progress): records t; false once a
  // stop was asked for.
  bool Reached(double t);
  // Asks the run `id` (empty: whichever runs) to stop; false when no such
  // run is going on.
  bool Stop(const std::string& id);
  // {ok, running, id, phase ("preparing" | "integrating"), t, t0, t_end,
  // fraction}; {ok, running: false} between runs.
  std::string ToJson() const;

 private:
  mutable std::mutex mu_;  // the run's id, span and whether one runs (Reached, on every step, takes no lock)
  std::string id_;
  bool running_ = false;
  double t0_ = 0, t_end_ = 0;
  std::atomic<bool> stop_{false}, integrating_{false};
  std::atomic<double> t_{0};
};

// Runs `text` (written for the run to a temporary model file beside `file`,
// removed after) with `options`: the columns and their values, the run's
// statistics; an error as a diagnostic. A mechanism (a `multibody:` section)
// runs with its poses as outputs (RunOptions::poses: columns pose_*) and its
// bodies and joints as `mechanism` (web::MechanismJson), for the 3D view. The last prepared model is kept, so
// that a run with other values of settable parameters (sliders) skips the
// symbolic stages and the compile.
class Simulator {
 public:
  Simulator();
  ~Simulator();
  // With `progress`, the run reports to it and stops when asked: the answer
  // is then {ok: false, stopped: true, t, diagnostics}, and nothing of the
  // run is kept (the prepared model is, being complete).
  std::string RunJson(const std::string& text, const std::filesystem::path& file, const std::string& shown,
                      RunOptions options, RunProgress* progress = nullptr, const std::string& run_id = "");

 private:
  struct Kept;
  std::unique_ptr<Kept> kept_;
};

// A graphical edit of `text` (text_edit.h), named by the request's query:
// op=flip&from=A&to=B[&line=N], op=element&element=E&key=K&value=V,
// op=parameter&name=N&value=V. The answer: {ok, text}, the whole new text.
// Throws Error (located in `shown`) when the edit cannot be made.
std::string EditJson(const std::string& text, const std::string& shown,
                     const std::multimap<std::string, std::string>& query);

// The model file `file` as saved, exported (kind "report": `paynter report`'s
// page, run with `options`; "fmu": `paynter fmu`'s FMU with the options'
// form and parameters), sent back as data for the page to download:
// {ok, name, type, text} or {ok, name, type, base64}. Nothing is written into
// the studio's directory. Throws Error as the commands do.
std::string ExportJson(const std::filesystem::path& file, const std::string& shown, const std::string& kind,
                       RunOptions options, const std::string& web_dir);

// The component library (LibraryDirectory()) for the palette: each file as
// {use: "lib:<domain>/<name>", about, ports: [{name, required}], parameters:
// [{name, value}]}, in the order of their names.
std::string LibraryJson();

// A diagnostic as JSON ({line, column, message, expected, got, hint, element,
// severity, text}); a location in `internal` (a temporary) is shown as `shown`.
std::string DiagnosticJson(const Diagnostic& d, const std::string& shown, const std::string& severity = "error",
                           const std::string& internal = "");

}  // namespace paynter::studio
