// paynter studio's answers (api.h).
#include "api.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "paynter/equations.h"
#include "paynter/files.h"
#include "paynter/report.h"
#include "paynter/zcp.h"
#include "report_html/web_page.h"

namespace paynter::studio {

namespace fs = std::filesystem;
using web::Json;

namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// A number as a whole text ("2.5", "1e-3"); nullopt for anything else.
std::optional<double> Number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

void WriteParameters(Json& j, const Model& m) {
  j.Key("parameters").Open('[');
  for (const auto& p : m.parameters)
    j.Open('{')
        .Field("name", p.name)
        .Field("value", p.value)
        .Field("text", p.text)
        .Key("literal").Bool(Number(p.text).has_value())
        .Field("line", static_cast<double>(p.where.line))
        .Close('}');
  j.Close(']');
}

// The page's names for completion and for finding an element's line.
void WriteNames(Json& j, const Model& m) {
  j.Key("elements").Open('[');
  for (size_t i = 0; i < m.elements.size(); ++i) {
    const Element& e = m.elements[i];
    j.Open('{').Field("id", fmt::format("el{}", i)).Field("name", e.name).Field("kind", KindName(e.kind));
    j.Field("line", static_cast<double>(e.where.line)).Close('}');
  }
  j.Close(']').Key("outputs").Open('[');
  for (const auto& o : m.outputs) j.Str(o.name);
  j.Close(']');
}

}  // namespace

std::string DiagnosticJson(const Diagnostic& d, const std::string& shown, const std::string& severity,
                           const std::string& internal) {
  Diagnostic s = d;
  if (!internal.empty() && s.where.file == internal) s.where.file = shown;
  std::string text = s.ToString();
  if (!internal.empty())
    for (size_t at = 0; (at = text.find(internal, at)) != std::string::npos; at += shown.size())
      text.replace(at, internal.size(), shown);
  Json j;
  j.Open('{').Field("severity", severity);
  j.Field("file", s.where.file).Field("line", static_cast<double>(s.where.line));
  j.Field("column", static_cast<double>(s.where.column));
  j.Field("element", s.element).Field("message", s.message).Field("expected", s.expected).Field("got", s.got);
  j.Field("hint", s.hint).Field("text", text);
  // Whether the location is in the model's own text (not a submodel file's).
  j.Key("here").Bool(s.where.file.empty() || s.where.file == shown);
  j.Close('}');
  return j.text();
}

std::string StudioPage(const std::string& web_dir) {
  const fs::path dir = web::WebDir(web_dir);
  const fs::path cm = dir / "node_modules/codemirror";
  const std::string page = "studio";
  std::string css, js;
  for (const char* f : {"lib/codemirror.css", "addon/hint/show-hint.css"})
    css += web::InlineStyle(web::ReadWebFile(cm / f, page)) + "\n";
  css += web::InlineStyle(web::ReadWebFile(dir / "node_modules/uplot/dist/uPlot.min.css", page)) + "\n";
  css += web::InlineStyle(web::ReadWebFile(dir / "studio.css", page));
  for (const char* f : {"lib/codemirror.js", "mode/yaml/yaml.js", "addon/hint/show-hint.js"})
    js += "<script>\n" + web::InlineScript(web::ReadWebFile(cm / f, page)) + "\n</script>\n";
  js += "<script>\n" + web::InlineScript(web::ReadWebFile(dir / "node_modules/uplot/dist/uPlot.iife.min.js", page)) +
        "\n</script>\n";
  js += "<script>\n" + web::InlineScript(web::ReadWebFile(dir / "svg.js", page) + "\n" +
                                           web::ReadWebFile(dir / "studio.js", page)) +
        "\n</script>\n";
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing is fetched but the studio's own API (connect-src 'self').
  html += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
          "style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src 'self'\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<meta name=\"referrer\" content=\"no-referrer\">\n";
  html += "<title>paynter studio</title>\n";
  html += web::ErrorCaptureScript();
  html += "<style>\n" + css + "\n</style>\n</head>\n<body>\n" + js + "</body>\n</html>\n";
  return html;
}

std::string CheckJson(const std::string& text, const fs::path& file, const std::string& shown,
                      DotRenderer& renderer) {
  const auto t0 = std::chrono::steady_clock::now();
  auto lap = t0;
  std::vector<std::pair<const char*, double>> parts;  // the time of each part
  auto done = [&](const char* part) {
    parts.emplace_back(part, MillisecondsSince(lap));
    lap = std::chrono::steady_clock::now();
  };
  std::vector<std::string> diagnostics;
  Json j;
  j.Open('{');
  bool ok = true;
  try {
    LoadOptions lo;
    lo.keep_written = true;  // the drawing groups components by the model as written
    LoadedModel lm = Load(ModelSource::Text(text, file.string()), lo);
    done("load");
    Analysis a = Analyze(std::move(lm.model));
    done("causality");
    const Model& m = a.model;
    const CausalGraph& g = a.graph;
    for (const auto& c : g.conflicts) {
      Diagnostic d;
      if (c.element >= 0) {
        d.where = m.elements[c.element].where;
        d.element = m.elements[c.element].name;
      }
      d.message = "causal conflict: " + c.message;
      d.hint = "the drawing marks the bonds that disagree; `paynter causality` reports the conflicts";
      diagnostics.push_back(DiagnosticJson(d, shown, "error", file.string()));
      ok = false;
    }
    for (int e : g.derivative_storage) {
      Diagnostic d;
      d.where = m.elements[e].where;
      d.element = m.elements[e].name;
      d.message = fmt::format("{} {} is in derivative causality: its energy variable is fixed by others, it has no "
                              "state of its own",
                              KindName(m.elements[e].kind), m.elements[e].name);
      diagnostics.push_back(DiagnosticJson(d, shown, "info", file.string()));
    }
    int states = -1, loops = 0, blocks = 0;
    if (g.conflicts.empty()) {
      try {
        const EquationSystem eqs = BuildEquations(m, g);
        states = static_cast<int>(eqs.state_names.size());
        for (const auto& b : eqs.blocks) loops += b.derivative_causality ? 0 : 1;
        blocks = static_cast<int>(eqs.blocks.size());
      } catch (const Error& e) {
        diagnostics.push_back(DiagnosticJson(e.diagnostic(), shown, "error", file.string()));
        ok = false;
      }
    }
    done("equations");
    std::vector<ZeroOrderPath> paths;
    try {
      paths = FindZeroOrderPaths(m, g);
    } catch (const Error&) {
      // A graph with conflicts has no zero-order causal paths to show.
    }
    const DrawComponents components = FindDrawComponents(m, lm.written);
    j.Field("svg", renderer.Svg(components.empty() ? BondGraphDot(m, &g) : ComponentGraphDot(m, &g, components)));
    done("drawing");
    j.Field("model", m.name);
    j.Key("mechanism").Bool(lm.mechanism);
    j.Key("summary").Open('{');
    j.Field("elements", static_cast<double>(m.elements.size())).Field("bonds", static_cast<double>(m.bonds.size()));
    j.Field("integral", static_cast<double>(g.integral_storage.size()));
    j.Field("derivative", static_cast<double>(g.derivative_storage.size()));
    j.Field("conflicts", static_cast<double>(g.conflicts.size()));
    j.Field("states", static_cast<double>(states)).Field("loops", static_cast<double>(loops));
    j.Field("blocks", static_cast<double>(blocks));
    j.Close('}');
    j.Key("paths").Open('[');
    for (size_t p = 0; p < paths.size(); ++p)
      j.Open('{')
          .Field("number", static_cast<double>(p + 1))
          .Field("class", static_cast<double>(paths[p].cls))
          .Field("description", paths[p].description)
          .Close('}');
    j.Close(']');
    WriteParameters(j, m);
    WriteNames(j, m);
  } catch (const Error& e) {
    Diagnostic d = e.diagnostic();
    if (d.message.empty()) d.message = e.what();
    diagnostics.push_back(DiagnosticJson(d, shown, "error", file.string()));
    ok = false;
  }
  j.Key("ok").Bool(ok);
  j.Key("diagnostics").Open('[');
  for (const auto& d : diagnostics) j.Raw(d);
  j.Close(']');
  j.Key("parts").Open('{');
  for (const auto& [part, ms] : parts) j.Field(part, ms);
  j.Close('}');
  j.Field("ms", MillisecondsSince(t0));
  j.Close('}');
  return j.text();
}

RunOptions SimulateOptions(const std::multimap<std::string, std::string>& query) {
  RunOptions o;
  o.progress = false;
  o.t_end = 10;
  auto number = [&](const std::string& key, double& into) {
    const auto it = query.find(key);
    if (it == query.end()) return;
    const auto v = Number(it->second);
    if (!v) ThrowAt({"studio"}, "", fmt::format("simulate: '{}' is not a number", key), "a number", it->second);
    into = *v;
  };
  auto text = [&](const std::string& key) -> std::optional<std::string> {
    const auto it = query.find(key);
    if (it == query.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
  number("t-end", o.t_end);
  number("t0", o.t0);
  number("rtol", o.rtol);
  number("atol", o.atol);
  number("dt-out", o.dt_out);
  number("step", o.step);
  if (query.count("max-steps")) {
    double steps = 0;
    number("max-steps", steps);
    o.max_steps = static_cast<long>(steps);
    o.max_steps_given = true;
  }
  if (const auto m = text("method")) {
    o.method = ParseMethod(*m);
    o.method_given = true;
  }
  if (const auto f = text("form")) o.form = ParseFormulation(*f);
  if (const auto c = text("constraints")) o.constraints = ParseConstraintMethod(*c);
  if (const auto b = text("backend")) o.backend = ParseBackend(*b);
  std::vector<std::string> params;
  for (auto [it, end] = query.equal_range("param"); it != end; ++it) params.push_back(it->second);
  o.params = ParseParameterOverrides(params, "studio", "param");
  return o;
}

// The last prepared model: its text and settings, and the parameter values
// it was prepared with.
struct Simulator::Kept {
  std::string key;
  PreparedModel prepared;
};

Simulator::Simulator() = default;
Simulator::~Simulator() = default;

namespace {

// What a prepared model depends on besides the parameters' values.
std::string PrepareKey(const std::string& text, const fs::path& file, const RunOptions& o) {
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n", file.string(), FormulationName(o.form),
                     ConstraintMethodName(o.constraints), BackendName(o.backend), BlockSolveName(o.block_solve),
                     o.energy, o.assemble, o.parasitic_stiffness, o.parasitic_damping) +
         text;
}

// Removes a file when it goes out of scope.
struct Removed {
  std::string path;
  ~Removed() {
    if (!path.empty()) ::unlink(path.c_str());
  }
};

}  // namespace

std::string Simulator::RunJson(const std::string& text, const fs::path& file, const std::string& shown,
                               RunOptions options) {
  const auto t0 = std::chrono::steady_clock::now();
  options.progress = false;
  Json j;
  j.Open('{');
  std::string internal;
  try {
    CheckOutputRows(options);
    // Every row goes to the page as JSON: at most a million of them.
    const double span = options.t_end - options.t0;
    if (options.dt_out > 0 && span / options.dt_out > 1e6)
      ThrowAt({shown}, "", "studio: the run would send more than a million rows to the page",
              "an output interval of at least (t_end - t0)/1e6", fmt::format("dt out = {:g}", options.dt_out),
              fmt::format("a larger dt out, or `paynter simulate {} ... -o run.csv` for every row", shown));
    const std::string key = PrepareKey(text, file, options);
    bool reuse = kept_ && kept_->key == key;
    if (reuse) {
      // Every parameter the run sets is settable, or has the value prepared.
      const auto& names = kept_->prepared.parameter_names();
      const auto& values = kept_->prepared.parameter_values();
      for (const auto& [name, value] : options.params) {
        const auto it = std::find(names.begin(), names.end(), name);
        if (it != names.end() && !kept_->prepared.parameter_settable(name) && values[it - names.begin()] != value)
          reuse = false;
      }
    }
    const bool prepared_here = !reuse;
    if (!reuse) {
      kept_.reset();
      // The text as a model file beside the model's (its relative submodel
      // paths hold), for the run only.
      Removed tmp{TemporaryBeside(file.string(), ".yaml")};
      internal = tmp.path;
      WriteFileAtomically(tmp.path, text, "model (the studio's run)");
      RunOptions po = options;
      po.file = tmp.path;
      auto k = std::make_unique<Kept>();
      k->key = key;
      k->prepared = PrepareModel(po);
      kept_ = std::move(k);
    }
    RunOptions ro = options;
    ro.file = shown;
    PreparedModel& p = kept_->prepared;
    RunResult r = RunPrepared(p, p.compiled(), ro);
    const Solution& sol = r.solution;
    j.Key("ok").Bool(true);
    j.Key("columns").Open('[');
    for (const auto& c : sol.columns) j.Str(c);
    j.Close(']').Key("data").Open('[');
    for (size_t c = 0; c < sol.columns.size(); ++c) {
      j.Open('[');
      for (const auto& row : sol.rows) j.Num(row[c]);
      j.Close(']');
    }
    j.Close(']');
    const SolverOptions so = SolverOptionsFor(ro, p.method());
    j.Key("stats").Open('{');
    j.Field("integrator", r.report.method == ConstraintMethod::kZcp ? std::string("ida") : MethodName(so.method));
    j.Field("constraints", ConstraintMethodName(r.report.method));
    j.Field("backend", sol.backend).Field("steps", static_cast<double>(sol.stats.steps));
    j.Field("rejected", static_cast<double>(sol.stats.rejected));
    j.Field("integrate_seconds", sol.stats.integrate_seconds);
    j.Field("ready_seconds", prepared_here ? p.ready_seconds() : 0.0);
    j.Key("prepared").Bool(prepared_here);
    j.Field("rows", static_cast<double>(sol.num_rows()));
    j.Field("report", p.compiled().num_constraints() > 0 ? r.report.ToText() : "");
    j.Close('}');
    j.Key("settable").Open('[');
    for (const auto& name : p.parameter_names())
      if (p.parameter_settable(name)) j.Str(name);
    j.Close(']');
    j.Key("diagnostics").Open('[').Close(']');
  } catch (const Error& e) {
    kept_.reset();
    const ReportedError r = ReportError(e, shown);
    j.Key("ok").Bool(false);
    j.Key("diagnostics").Open('[').Raw(DiagnosticJson(r.diagnostic, shown, "error", internal)).Close(']');
  }
  j.Field("ms", MillisecondsSince(t0));
  j.Close('}');
  return j.text();
}

}  // namespace paynter::studio
