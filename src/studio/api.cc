// paynter studio's answers (api.h).
#include "api.h"

#include <fmt/format.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "paynter/equations.h"
#include "paynter/fmi.h"
#include "paynter/html_report.h"
#include "paynter/files.h"
#include "paynter/report.h"
#include "paynter/solvers.h"
#include "paynter/zcp.h"
#include "report_html/web_page.h"
#include "text_edit.h"

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

// The page's names for completion and for finding an element's line; each
// element's law and initial value as written in this file (the panel), and
// the bonds (turned round from the drawing; a bond at a submodel's port also
// as written, by its edge in the drawing), and the submodels' blocks.
// `here`: written in the model's own text, not a submodel's file or the
// multibody library.
void WriteNames(Json& j, const Model& m, const ModelSpec& written, const std::string& file,
                const DrawComponents& components, const ModelSpec& hierarchical) {
  std::map<std::string, const ModelSpec::ElementSpec*> spec;
  for (const auto& e : written.elements) spec[e.name] = &e;
  j.Key("elements").Open('[');
  for (size_t i = 0; i < m.elements.size(); ++i) {
    const Element& e = m.elements[i];
    j.Open('{').Field("id", fmt::format("el{}", i)).Field("name", e.name).Field("kind", KindName(e.kind));
    j.Field("line", static_cast<double>(e.where.line));
    const auto s = spec.find(e.name);
    const bool here = s != spec.end() && e.origin.empty() && (e.where.file.empty() || e.where.file == file);
    j.Key("here").Bool(here);
    if (here) {
      j.Field("law_key", s->second->laws.empty() ? std::string() : s->second->laws[0].first);
      j.Field("law", s->second->laws.empty() ? std::string() : s->second->laws[0].second);
      j.Field("initial", s->second->initial);
    }
    j.Close('}');
  }
  j.Close(']').Key("bonds").Open('[');
  for (size_t b = 0; b < m.bonds.size(); ++b) {
    const Bond& bond = m.bonds[b];
    j.Open('{').Field("id", fmt::format("bond{}", b)).Field("name", bond.name);
    j.Field("from", m.elements[bond.from].name).Field("to", m.elements[bond.to].name);
    j.Field("line", static_cast<double>(bond.where.line));
    j.Key("here").Bool(bond.origin.empty() && bond.where.line > 0 && (bond.where.file.empty() || bond.where.file == file));
    j.Close('}');
  }
  // A bond at a submodel's port, drawn between a block and another node: as
  // written (`motor.shaft`), for the panel's Flip.
  for (size_t k = 0; k < components.multibonds.size(); ++k) {
    const auto& mb = components.multibonds[k];
    if (mb.from_port.empty() && mb.to_port.empty()) continue;
    auto end = [](const std::string& node, const std::string& port) {
      return node.rfind("comp:", 0) == 0 ? node.substr(5) + "." + port : node;
    };
    const std::string from = end(mb.from, mb.from_port), to = end(mb.to, mb.to_port);
    for (const auto& b : hierarchical.bonds)
      if (b.from == from && b.to == to) {
        j.Open('{').Field("id", fmt::format("mb{}", k)).Field("name", b.name).Field("from", from).Field("to", to);
        j.Field("line", static_cast<double>(b.where.line)).Key("here").Bool(b.where.line > 0).Close('}');
        break;
      }
  }
  j.Close(']');
  // The submodels' instances, drawn as blocks: their `use`, their line and
  // the ports the written bonds join (a bond dragged to a block joins a port
  // not joined yet).
  std::map<std::string, const ModelSpec::InstanceSpec*> instances;
  for (const auto& inst : hierarchical.instances) instances[inst.name] = &inst;
  j.Key("components").Open('[');
  for (size_t c = 0; c < components.components.size(); ++c) {
    const auto& comp = components.components[c];
    j.Open('{').Field("id", fmt::format("comp{}", c)).Field("name", comp.name).Field("kind", comp.kind);
    const auto it = instances.find(comp.name);
    if (comp.kind == "submodel" && it != instances.end()) {
      j.Field("use", it->second->use).Field("line", static_cast<double>(it->second->where.line));
      j.Key("joined").Open('[');
      const std::string prefix = comp.name + ".";
      for (const auto& b : hierarchical.bonds)
        for (const std::string* e : {&b.from, &b.to})
          if (e->rfind(prefix, 0) == 0) j.Str(e->substr(prefix.size()));
      j.Close(']');
    }
    j.Close('}');
  }
  j.Close(']').Key("outputs").Open('[');
  for (const auto& o : m.outputs) j.Str(o.name);
  j.Close(']');
}

// The positions of the text's `layout:` (the loader has checked their form).
DotRenderer::Positions LayoutOf(const std::string& text) {
  DotRenderer::Positions out;
  if (text.find("layout:") == std::string::npos) return out;
  try {
    const YAML::Node root = YAML::Load(text);
    const YAML::Node layout = root.IsMap() ? root["layout"] : YAML::Node();
    if (layout && layout.IsMap())
      for (const auto& kv : layout)
        if (kv.first.IsScalar() && kv.second.IsSequence() && kv.second.size() == 2)
          out[kv.first.Scalar()] = {kv.second[0].as<double>(), kv.second[1].as<double>()};
  } catch (const YAML::Exception&) {
    out.clear();  // the loader said what is wrong
  }
  return out;
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
  css += web::InlineStyle(web::KatexStyle(dir / "node_modules/katex/dist")) + "\n";
  css += web::InlineStyle(web::ReadWebFile(dir / "view3d.css", page)) + "\n";
  css += web::InlineStyle(web::ReadWebFile(dir / "studio.css", page));
  for (const char* f : {"lib/codemirror.js", "mode/yaml/yaml.js", "addon/hint/show-hint.js"})
    js += "<script>\n" + web::InlineScript(web::ReadWebFile(cm / f, page)) + "\n</script>\n";
  js += "<script>\n" + web::InlineScript(web::ReadWebFile(dir / "node_modules/uplot/dist/uPlot.iife.min.js", page)) +
        "\n</script>\n";
  js += "<script>\n" + web::InlineScript(web::ReadWebFile(dir / "node_modules/katex/dist/katex.min.js", page)) +
        "\n</script>\n";
  js += "<script>\n" + web::InlineScript(web::ReadWebFile(dir / "svg.js", page) + "\n" +
                                           web::ReadWebFile(dir / "equations.js", page) + "\n" +
                                           web::ReadWebFile(dir / "view3d.js", page) + "\n" +
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
  const ModelSource source = ModelSource::Text(text, file.string());
  // The model analysed, or (a text that reads but does not load) its elements
  // and bonds as written: the sketch, drawn without causality.
  std::optional<LoadedModel> lm;
  std::optional<Analysis> a;
  std::optional<Model> sketch;
  ModelSpec written, hierarchical;
  try {
    LoadOptions lo;
    lo.keep_written = true;  // the drawing groups components by the model as written
    lm = Load(source, lo);
    done("load");
    a = Analyze(std::move(lm->model));
    done("causality");
    written = std::move(lm->written);
  } catch (const Error& e) {
    Diagnostic d = e.diagnostic();
    if (d.message.empty()) d.message = e.what();
    diagnostics.push_back(DiagnosticJson(d, shown, "error", file.string()));
    ok = false;
    // An element not bonded yet (a dangling element, a junction or a
    // transformer short of bonds), a law naming nothing, ...: the elements and
    // bonds as written are still drawn, so that the new element can be
    // chosen and bonded in the drawing.
    try {
      written = LoadSpec(source, {}, LoadPass::kSubmodels);
      sketch = BuildModelTopology(LoadSpec(source, {}, LoadPass::kVectorBonds));
    } catch (const Error&) {
      sketch.reset();  // the error above is what there is to say
    }
    done("sketch");
  }
  try {
    hierarchical = LoadSpec(source, {}, LoadPass::kRead);  // instances as written, for blocks and ports
  } catch (const Error&) {
    // (read above)
  }
  if (a || sketch) {
    const Model& m = a ? a->model : *sketch;
    const CausalGraph* g = a ? &a->graph : nullptr;
    int states = -1, loops = 0, blocks = 0;
    std::string equations;  // as `paynter equations --latex` writes them
    std::vector<ZeroOrderPath> paths;
    if (g) {
      for (const auto& c : g->conflicts) {
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
      for (int e : g->derivative_storage) {
        Diagnostic d;
        d.where = m.elements[e].where;
        d.element = m.elements[e].name;
        d.message = fmt::format("{} {} is in derivative causality: its energy variable is fixed by others, it has no "
                                "state of its own",
                                KindName(m.elements[e].kind), m.elements[e].name);
        diagnostics.push_back(DiagnosticJson(d, shown, "info", file.string()));
      }
      if (g->conflicts.empty()) {
        try {
          const EquationSystem eqs = BuildEquations(m, *g);
          equations = eqs.ToLatex(m);
          states = static_cast<int>(eqs.state_names.size());
          for (const auto& b : eqs.blocks) loops += b.derivative_causality ? 0 : 1;
          blocks = static_cast<int>(eqs.blocks.size());
        } catch (const Error& e) {
          diagnostics.push_back(DiagnosticJson(e.diagnostic(), shown, "error", file.string()));
          ok = false;
        }
      }
      done("equations");
      try {
        paths = FindZeroOrderPaths(m, *g);
      } catch (const Error&) {
        // A graph with conflicts has no zero-order causal paths to show.
      }
    }
    // Drawn as `paynter draw` draws it: submodels' instances as blocks with
    // their ports, at the level the model is written.
    const DrawComponents components = FindDrawComponents(m, written, &hierarchical);
    const DotRenderer::Positions pinned = LayoutOf(text);
    const DotRenderer::Drawn drawn =
        renderer.Draw(components.empty() ? BondGraphDot(m, g) : ComponentGraphDot(m, g, components), pinned);
    j.Field("svg", drawn.svg);
    j.Key("sketch").Bool(!g);
    // Where each node was placed, and whether the text keeps a layout.
    j.Key("layout").Open('{').Key("kept").Bool(!pinned.empty()).Key("positions").Open('{');
    for (const auto& [name, p] : drawn.positions) j.Key(name).Open('[').Num(p.first).Num(p.second).Close(']');
    j.Close('}').Close('}');
    done("drawing");
    j.Field("model", m.name).Field("equations", equations);
    j.Key("mechanism").Bool(lm && lm->mechanism);
    j.Key("summary").Open('{');
    j.Field("elements", static_cast<double>(m.elements.size())).Field("bonds", static_cast<double>(m.bonds.size()));
    if (g) {
      j.Field("integral", static_cast<double>(g->integral_storage.size()));
      j.Field("derivative", static_cast<double>(g->derivative_storage.size()));
      j.Field("conflicts", static_cast<double>(g->conflicts.size()));
      j.Field("states", static_cast<double>(states)).Field("loops", static_cast<double>(loops));
      j.Field("blocks", static_cast<double>(blocks));
    }
    j.Close('}');
    j.Key("paths").Open('[');
    for (size_t p = 0; p < paths.size(); ++p)
      j.Open('{')
          .Field("number", static_cast<double>(p + 1))
          .Field("class", static_cast<double>(paths[p].cls))
          .Field("description", paths[p].description)
          .Close('}');
    j.Close(']');
    if (g) WriteParameters(j, m);  // (a sketch reads no parameters: the sliders stay as they are)
    WriteNames(j, m, written, file.string(), components, hierarchical);
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

void RunProgress::Begin(const std::string& id, double t0, double t_end) {
  std::lock_guard<std::mutex> lock(mu_);
  id_ = id;
  running_ = true;
  t0_ = t0;
  t_end_ = t_end;
  t_ = t0;
  integrating_ = false;
  stop_ = false;
}

void RunProgress::End() {
  std::lock_guard<std::mutex> lock(mu_);
  running_ = false;
  integrating_ = false;
  stop_ = false;
}

bool RunProgress::Reached(double t) {
  t_.store(t, std::memory_order_relaxed);
  integrating_.store(true, std::memory_order_relaxed);
  return !stop_.load(std::memory_order_relaxed);
}

bool RunProgress::Stop(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_ || (!id.empty() && id != id_)) return false;
  stop_ = true;
  return true;
}

std::string RunProgress::ToJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  Json j;
  j.Open('{').Key("ok").Bool(true).Key("running").Bool(running_);
  if (running_) {
    const double t = t_.load(std::memory_order_relaxed);
    j.Field("id", id_).Field("phase", integrating_ ? "integrating" : "preparing");
    j.Field("t", t).Field("t0", t0_).Field("t_end", t_end_);
    j.Field("fraction", t_end_ > t0_ ? std::clamp((t - t0_) / (t_end_ - t0_), 0.0, 1.0) : 0.0);
    j.Key("stopping").Bool(stop_.load());
  }
  j.Close('}');
  return j.text();
}

// The last prepared model: its text and settings, and the parameter values
// it was prepared with.
struct Simulator::Kept {
  std::string key;
  PreparedModel prepared;
  std::string mechanism;  // a mechanism's bodies and joints (web::MechanismJson), prepared with its poses
};

Simulator::Simulator() = default;
Simulator::~Simulator() = default;

namespace {

// What a prepared model depends on besides the parameters' values.
std::string PrepareKey(const std::string& text, const fs::path& file, const RunOptions& o) {
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n", file.string(), FormulationName(o.form),
                     ConstraintMethodName(o.constraints), BackendName(o.backend), BlockSolveName(o.block_solve),
                     o.energy || o.project_energy, o.assemble, o.parasitic_stiffness, o.parasitic_damping) +
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
                               RunOptions options, RunProgress* progress, const std::string& run_id) {
  const auto t0 = std::chrono::steady_clock::now();
  options.progress = false;
  // Told how far the run is, and stopped when asked, for as long as it runs.
  struct Reporting {
    RunProgress* p;
    ~Reporting() {
      if (p) p->End();
    }
  } reporting{progress};
  if (progress) {
    progress->Begin(run_id, options.t0, options.t_end);
    options.on_progress = [progress](double t) { return progress->Reached(t); };
  }
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
      // A mechanism runs with its poses as outputs pose_* (the page's 3D view).
      k->mechanism = web::MechanismJson(LoadSpec(ModelSource::File(tmp.path), {}, LoadPass::kSubmodels));
      po.poses = !k->mechanism.empty();
      k->prepared = PrepareModel(po);
      kept_ = std::move(k);
    }
    RunOptions ro = options;
    ro.file = shown;
    ro.poses = !kept_->mechanism.empty();
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
    if (ro.poses) j.Key("mechanism").Raw(kept_->mechanism);
    const SolverOptions so = SolverOptionsFor(ro, p.method());
    j.Key("stats").Open('{');
    j.Field("integrator", IntegratorName(r.report.method, so.method));
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
  } catch (const RunStopped& e) {
    // Asked for: nothing of the run goes to the page; the prepared model,
    // which is complete, is kept for the next run.
    j.Key("ok").Bool(false).Key("stopped").Bool(true).Field("t", e.t());
    Diagnostic d = e.diagnostic();
    d.where.file = shown;
    j.Key("diagnostics").Open('[').Raw(DiagnosticJson(d, shown, "info")).Close(']');
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

namespace {

std::string Base64(const std::string& bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const unsigned a = static_cast<unsigned char>(bytes[i]);
    const unsigned b = i + 1 < bytes.size() ? static_cast<unsigned char>(bytes[i + 1]) : 0;
    const unsigned c = i + 2 < bytes.size() ? static_cast<unsigned char>(bytes[i + 2]) : 0;
    const unsigned v = (a << 16) | (b << 8) | c;
    out += digits[(v >> 18) & 63];
    out += digits[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? digits[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? digits[v & 63] : '=';
  }
  return out;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string ExportJson(const fs::path& file, const std::string& shown, const std::string& kind, RunOptions options,
                       const std::string& web_dir) {
  // Made in a private temporary file, read back and sent as data: the studio
  // writes nothing into the directory but the models it saves.
  const std::string ext = kind == "fmu" ? ".fmu" : ".html";
  Removed out{TemporaryBeside((fs::temp_directory_path() / ("paynter-studio" + ext)).string(), ext)};
  Json j;
  j.Open('{');
  if (kind == "report") {
    ReportOptions ro;
    ro.run = options;
    ro.run.file = file.string();
    ro.run.progress = false;
    ro.web_dir = web_dir;
    WriteHtmlReport(ro, out.path);
    j.Key("ok").Bool(true).Field("name", file.stem().string() + ".html").Field("type", "text/html");
    j.Field("text", Slurp(out.path));
  } else if (kind == "fmu") {
    FmuOptions fo;
    fo.model_file = file.string();
    fo.output = out.path;
    if (options.form != Formulation::kState) fo.form = FormulationName(options.form);
    fo.overrides = {options.params.begin(), options.params.end()};
    const FmuReport r = ExportFmu(fo);
    j.Key("ok").Bool(true).Field("name", r.model_identifier + ".fmu").Field("type", "application/octet-stream");
    j.Field("base64", Base64(Slurp(out.path)));
    j.Field("states", static_cast<double>(r.num_states)).Field("outputs", static_cast<double>(r.num_outputs));
  } else {
    ThrowAt({shown}, "", fmt::format("studio: no export '{}'", kind), "report or fmu", kind);
  }
  j.Close('}');
  return j.text();
}

std::string LibraryJson() {
  const fs::path root = LibraryDirectory();
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && it->path().extension() == ".yaml") files.push_back(it->path());
  std::sort(files.begin(), files.end());
  Json j;
  j.Open('{').Key("ok").Bool(true).Key("components").Open('[');
  for (const auto& f : files) {
    const std::string rel = fs::relative(f, root, ec).replace_extension().generic_string();
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    // Its description: the first comment line, without the library's prefix.
    std::string about;
    if (text.rfind("# ", 0) == 0) {
      about = text.substr(2, text.find('\n') - 2);
      const std::string prefix = "paynter component library: ";
      if (about.rfind(prefix, 0) == 0) about = about.substr(prefix.size());
    }
    YAML::Node doc;
    try {
      doc = YAML::Load(text);
    } catch (const YAML::Exception&) {
      continue;
    }
    if (!doc.IsMap()) continue;
    j.Open('{').Field("use", "lib:" + rel).Field("about", about);
    j.Key("ports").Open('[');
    if (doc["ports"] && doc["ports"].IsSequence())
      for (const auto& p : doc["ports"])
        if (p.IsMap() && p["name"] && p["name"].IsScalar()) {
          const bool required = !(p["required"] && p["required"].IsScalar() && p["required"].Scalar() == "false");
          j.Open('{').Field("name", p["name"].Scalar()).Key("required").Bool(required).Close('}');
        }
    j.Close(']').Key("parameters").Open('[');
    if (doc["parameters"] && doc["parameters"].IsMap())
      for (const auto& kv : doc["parameters"])
        if (kv.second.IsScalar()) j.Open('{').Field("name", kv.first.Scalar()).Field("value", kv.second.Scalar()).Close('}');
    j.Close(']').Close('}');
  }
  j.Close(']').Close('}');
  return j.text();
}

std::string EditJson(const std::string& text, const std::string& shown,
                     const std::multimap<std::string, std::string>& query) {
  auto get = [&](const std::string& key) {
    const auto it = query.find(key);
    return it == query.end() ? std::string() : it->second;
  };
  const EditInput in{text, shown};
  const std::string op = get("op");
  std::string out;
  if (op == "flip") {
    const auto line = Number(get("line"));
    out = FlipBond(in, get("from"), get("to"), line ? static_cast<int>(*line) : 0);
  } else if (op == "element") {
    out = SetElementField(in, get("element"), get("key"), get("value"));
  } else if (op == "parameter") {
    out = SetParameter(in, get("name"), get("value"));
  } else if (op == "layout") {
    DotRenderer::Positions positions;
    for (auto [it, end] = query.equal_range("at"); it != end; ++it) {
      const std::string& a = it->second;  // NAME=X,Y
      const size_t eq = a.rfind('='), comma = a.rfind(',');
      const auto x = eq != std::string::npos && comma > eq ? Number(a.substr(eq + 1, comma - eq - 1)) : std::nullopt;
      const auto y = comma != std::string::npos ? Number(a.substr(comma + 1)) : std::nullopt;
      if (!x || !y || eq == 0)
        ThrowAt({"studio"}, "", "studio: a position is NAME=X,Y", "NAME=X,Y with two numbers", a);
      positions[a.substr(0, eq)] = {*x, *y};
    }
    out = SetLayout(in, positions);
  } else {
    ThrowAt({"studio"}, "", fmt::format("studio: no edit '{}'", op), "op=flip, element, parameter or layout", op);
  }
  Json j;
  j.Open('{').Key("ok").Bool(true).Field("text", out).Close('}');
  return j.text();
}

}  // namespace paynter::studio
