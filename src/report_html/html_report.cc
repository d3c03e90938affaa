// paynter report: one self-contained HTML page of a model and its run
// (paynter/html_report.h, docs/report.md).
//
// The page is data plus code: everything that comes from the model (names,
// laws, equations, reports, the drawing's SVG text, the results) is one JSON
// document in a <script type="application/json"> element, escaped by
// JsonString; the page's script (web/report.js) reads it and inserts text with
// textContent, and parses the SVG into a sanitized DOM. The libraries come from
// web/node_modules (npm ci) and are inlined, with KaTeX's fonts as data: URIs.
#include "paynter/html_report.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "paynter/data_dir.h"
#include "paynter/equations.h"
#include "paynter/error.h"
#include "paynter/files.h"
#include "paynter/multibody.h"
#include "paynter/report.h"
#include "paynter/zcp.h"
#include "web_page.h"

namespace paynter {

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\u{:04x}", c);
        } else if (c == 0xe2 && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x80 &&
                   (static_cast<unsigned char>(text[i + 2]) == 0xa8 || static_cast<unsigned char>(text[i + 2]) == 0xa9)) {
          out += static_cast<unsigned char>(text[i + 2]) == 0xa8 ? "\\u2028" : "\\u2029";
          i += 2;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

namespace {

namespace fs = std::filesystem;
using web::Json;

// The variable an alias chain ends at (copies at junctions were eliminated).
GiNaC::ex Representative(const EquationSystem& eqs, GiNaC::ex v) {
  for (int guard = 0; guard < 10000; ++guard) {
    auto it = eqs.aliases.find(v);
    if (it == eqs.aliases.end() || it->second.is_equal(v)) break;
    v = it->second;
  }
  return v;
}

std::string Origin(const Element& e) { return KindName(e.kind) + " " + e.name; }

// Where a bond variable (e_<bond> or f_<bond>) comes from: the element that
// imposes it by causality, the variable it is a copy of, and the equation
// (with the element it belongs to) or the state that computes it.
void WriteProvenance(Json& j, const Model& m, const CausalGraph& g, const EquationSystem& eqs,
                     const std::vector<ZeroOrderPath>& paths, int bond, bool effort) {
  const Bond& b = m.bonds[bond];
  const std::string var = (effort ? "e_" : "f_") + b.name;
  j.Open('{').Field("var", var).Field("latex", LatexName(var));
  if (g.effort_to[bond] >= 0) {
    const int receiver = g.effort_to[bond];
    const int other = receiver == b.from ? b.to : b.from;
    // The effort is imposed by the end without the stroke, the flow by the stroke end.
    j.Field("imposed_by", effort ? m.elements[other].name : m.elements[receiver].name);
  }
  j.Field("reason", bond < static_cast<int>(g.reason.size()) ? g.reason[bond] : "");
  GiNaC::ex sym;
  const auto s = m.symbols.find(var);
  if (s != m.symbols.end()) {
    sym = s->second;
    const GiNaC::ex rep = Representative(eqs, sym);
    if (!rep.is_equal(sym)) j.Field("copy_of", ExpressionText(rep)).Field("copy_of_latex", eqs.Latex(rep));
    for (size_t i = 0; i < eqs.states.size(); ++i)
      if (rep.is_equal(eqs.states[i])) j.Field("state", eqs.state_names[i]).Field("state_origin", eqs.state_origin[i]);
    for (const auto& eq : eqs.equations)
      if (GiNaC::ex(eq.var).is_equal(rep)) {
        j.Field("computed_by", eq.origin);
        j.Field("equation", eq.is_explicit ? eqs.Latex(eq.var) + " = " + eqs.Latex(eq.value)
                                           : "0 = " + eqs.Latex(eq.residual));
        break;
      }
  }
  j.Key("paths").Open('[');
  for (size_t p = 0; p < paths.size(); ++p)
    for (int pb : paths[p].bonds)
      if (pb == bond) {
        j.Num(static_cast<double>(p + 1));
        break;
      }
  j.Close(']').Close('}');
}

void WriteElements(Json& j, const Model& m, const CausalGraph& g, const EquationSystem* eqs,
                   const std::vector<ZeroOrderPath>& paths) {
  std::map<std::string, double> params;
  for (const auto& p : m.parameters) params[p.name] = p.value;
  j.Key("elements").Open('[');
  for (size_t i = 0; i < m.elements.size(); ++i) {
    const Element& e = m.elements[i];
    j.Open('{').Field("id", fmt::format("el{}", i)).Field("name", e.name).Field("kind", KindName(e.kind));
    j.Field("law", e.law_text.empty() && !e.law.is_zero() ? ExpressionText(e.law) : e.law_text)
        .Field("law_key", e.law_key);
    if (eqs && !e.law.is_zero()) j.Field("law_latex", eqs->Latex(e.law));
    if (!e.origin.empty()) j.Field("origin", e.origin);
    if (!e.joint.empty() && !e.direction.empty()) j.Field("joint", e.joint).Field("direction", e.direction);
    j.Field("line", static_cast<double>(e.where.line));
    // The parameters its law uses, with their values.
    std::set<std::string> used;
    for (GiNaC::const_preorder_iterator it = e.law.preorder_begin(); it != e.law.preorder_end(); ++it)
      if (GiNaC::is_a<GiNaC::symbol>(*it)) used.insert(GiNaC::ex_to<GiNaC::symbol>(*it).get_name());
    j.Key("parameters").Open('[');
    for (const auto& name : used)
      if (params.count(name)) j.Open('{').Field("name", name).Field("value", params[name]).Close('}');
    j.Close(']');
    j.Key("variables").Open('[');
    for (const auto& name : used)
      if (!params.count(name)) j.Str(name);
    j.Close(']');
    if (eqs) {
      j.Key("equations").Open('[');
      const std::string origin = Origin(e);
      for (const auto& eq : eqs->equations) {
        if (eq.origin != origin && eq.origin.rfind(origin + " ", 0) != 0) continue;
        j.Str(eq.is_explicit ? eqs->Latex(eq.var) + " = " + eqs->Latex(eq.value)
                             : "0 = " + eqs->Latex(eq.residual) + " \\quad (" + LatexName(eq.var.get_name()) + ")");
      }
      for (size_t s = 0; s < eqs->states.size(); ++s)
        if (eqs->state_origin[s].find(e.name) != std::string::npos) j.Str("\\text{state } " + eqs->Latex(eqs->states[s]));
      j.Close(']');
    }
    j.Key("bonds").Open('[');
    for (int b : e.bonds) {
      const Bond& bond = m.bonds[b];
      j.Open('{').Field("id", fmt::format("bond{}", b)).Field("name", bond.name);
      j.Field("other", m.elements[bond.from == static_cast<int>(i) ? bond.to : bond.from].name);
      j.Field("power", bond.from == static_cast<int>(i) ? "out" : "in");
      if (!bond.origin.empty()) j.Field("origin", bond.origin);
      if (g.effort_to[b] >= 0) j.Field("stroke_here", g.effort_to[b] == static_cast<int>(i) ? 1.0 : 0.0);
      j.Close('}');  // its variables' provenance is the bond's (below)
    }
    j.Close(']');
    bool derivative = false, conflict = false;
    for (int d : g.derivative_storage) derivative = derivative || d == static_cast<int>(i);
    for (const auto& c : g.conflicts) conflict = conflict || c.element == static_cast<int>(i);
    j.Key("derivative").Bool(derivative).Key("conflict").Bool(conflict);
    j.Close('}');
  }
  j.Close(']');
  j.Key("bonds").Open('[');
  for (size_t b = 0; b < m.bonds.size(); ++b) {
    const Bond& bond = m.bonds[b];
    j.Open('{').Field("id", fmt::format("bond{}", b)).Field("name", bond.name);
    j.Field("from", m.elements[bond.from].name).Field("to", m.elements[bond.to].name);
    j.Field("from_id", fmt::format("el{}", bond.from)).Field("to_id", fmt::format("el{}", bond.to));
    if (!bond.origin.empty()) j.Field("origin", bond.origin);
    if (eqs) {
      j.Key("effort");
      WriteProvenance(j, m, g, *eqs, paths, static_cast<int>(b), true);
      j.Key("flow");
      WriteProvenance(j, m, g, *eqs, paths, static_cast<int>(b), false);
    }
    bool derivative = false;
    for (int d : g.derivative_storage) derivative = derivative || d == bond.from || d == bond.to;
    j.Key("derivative").Bool(derivative);
    j.Close('}');
  }
  j.Close(']');
  j.Key("paths").Open('[');
  for (size_t p = 0; p < paths.size(); ++p) {
    const ZeroOrderPath& z = paths[p];
    j.Open('{').Field("number", static_cast<double>(p + 1)).Field("class", z.cls).Field("dae_index", z.dae_index);
    j.Field("description", z.description);
    j.Key("elements").Open('[');
    for (int e : z.elements) j.Str(fmt::format("el{}", e));
    j.Close(']').Key("bonds").Open('[');
    for (int b : z.bonds) j.Str(fmt::format("bond{}", b));
    j.Close(']').Close('}');
  }
  j.Close(']');
}

}  // namespace

void WriteHtmlReport(const ReportOptions& options, const std::string& path) {
  const fs::path dir = web::WebDir(options.web_dir);
  // The page's parts first: a missing library is reported before the run.
  const std::string uplot_js = web::ReadWebFile(dir / "node_modules/uplot/dist/uPlot.iife.min.js", "report");
  const std::string uplot_css = web::ReadWebFile(dir / "node_modules/uplot/dist/uPlot.min.css", "report");
  const std::string katex_js = web::ReadWebFile(dir / "node_modules/katex/dist/katex.min.js", "report");
  const std::string katex_css = web::KatexStyle(dir / "node_modules/katex/dist");
  // The parts shared with the studio's page: the drawing's cleaner, the
  // equations' typesetting, the 3D view.
  const std::string svg_js = web::ReadWebFile(dir / "svg.js", "report") + "\n" +
                             web::ReadWebFile(dir / "equations.js", "report") + "\n" +
                             web::ReadWebFile(dir / "view3d.js", "report");
  const std::string page_js = web::ReadWebFile(dir / "report.js", "report");
  const std::string page_css =
      web::ReadWebFile(dir / "view3d.css", "report") + "\n" + web::ReadWebFile(dir / "report.css", "report");

  RunOptions run = options.run;
  // The model as written, flat (the components' drawing groups by it; a mechanism's bodies and joints).
  const ModelSpec written = LoadSpec(ModelSource::File(run.file), {}, LoadPass::kSubmodels);
  const ModelSpec hierarchical = LoadSpec(ModelSource::File(run.file), {}, LoadPass::kRead);  // its instances
  const bool mechanism = written.multibody.present;
  run.poses = mechanism;
  run.progress = false;
  CheckOutputRows(run);
  PreparedModel prepared = PrepareModel(run);
  RunResult result = RunPrepared(prepared, prepared.compiled(), run);
  const Solution& sol = result.solution;

  // The model as the equations see it: the method's view, the form's causality.
  const MethodView view = LoadForMethod(run.file, run.constraints, run.form);
  Analysis a = Analyze(view.model, run.form);
  std::optional<EquationSystem> eqs;
  std::string equations_note;
  if (a.graph.conflicts.empty()) eqs = BuildEquations(a.model, a.graph);
  std::vector<ZeroOrderPath> paths;
  try {
    paths = FindZeroOrderPaths(a.model, a.graph);
  } catch (const Error&) {
    // A graph with conflicts has no zero-order causal paths to show.
  }
  const std::string svg = DotToSvg(BondGraphDot(a.model, &a.graph));
  // The drawing at the level the model was written (components, multibonds).
  const DrawComponents components = FindDrawComponents(a.model, written, &hierarchical);
  const std::string components_svg = components.empty() ? "" : DotToSvg(ComponentGraphDot(a.model, &a.graph, components));
  std::ostringstream equations_tex, causality_text;
  EquationsText(run.file, true, run.form, false, run.constraints, equations_tex);
  try {
    CausalityText(run.file, options.procedure, run.constraints, causality_text);
  } catch (const Error& e) {
    causality_text << e.what() << "\n";
  }

  Json j;
  j.Open('{');
  j.Field("model", a.model.name).Field("file", fs::path(run.file).filename().string());
  j.Field("form", FormulationName(run.form)).Field("constraints", ConstraintMethodName(result.report.method));
  j.Field("svg", svg);
  // A drawing's blocks and multibonds, with the ids ComponentGraphDot gives them.
  auto blocks = [&](const DrawComponents& d) {
    const std::string id = d.level > 1 ? fmt::format("l{}", d.level) : "";
    j.Key("components").Open('[');
    for (size_t c = 0; c < d.components.size(); ++c) {
      const auto& comp = d.components[c];
      j.Open('{').Field("id", fmt::format("{}comp{}", id, c)).Field("name", comp.name).Field("kind", comp.kind);
      j.Field("label", comp.label).Key("elements").Open('[');
      for (int e : comp.elements) j.Str(fmt::format("el{}", e));
      j.Close(']').Close('}');
    }
    j.Close(']').Key("multibonds").Open('[');
    for (size_t k = 0; k < d.multibonds.size(); ++k) {
      const auto& mb = d.multibonds[k];
      j.Open('{').Field("id", fmt::format("{}mb{}", id, k)).Field("label", mb.label).Key("bonds").Open('[');
      for (int b : mb.bonds) j.Str(fmt::format("bond{}", b));
      j.Close(']').Close('}');
    }
    j.Close(']');
  };
  if (!components.empty()) {
    j.Field("components_svg", components_svg);
    blocks(components);
    // Nested submodels: one drawing per level below the first, each opening
    // the blocks of the level above by one level.
    j.Key("deeper").Open('[');
    for (int level = 2; level <= components.levels; ++level) {
      const DrawComponents d = FindDrawComponents(a.model, written, &hierarchical, level);
      j.Open('{').Field("level", static_cast<double>(level));
      j.Field("svg", DotToSvg(ComponentGraphDot(a.model, &a.graph, d)));
      blocks(d);
      j.Close('}');
    }
    j.Close(']');
  }
  WriteElements(j, a.model, a.graph, eqs ? &*eqs : nullptr, paths);
  j.Field("equations", equations_tex.str()).Field("causality", causality_text.str());
  // The run: statistics and results, column by column.
  const SolverOptions so = SolverOptionsFor(run, prepared.method());
  j.Key("stats").Open('{');
  j.Field("integrator", IntegratorName(result.report.method, so.method));
  j.Field("backend", sol.backend).Field("steps", static_cast<double>(sol.stats.steps));
  j.Field("rejected", static_cast<double>(sol.stats.rejected));
  j.Field("rhs_evals", static_cast<double>(sol.stats.rhs_evals));
  j.Field("jacobians", static_cast<double>(sol.stats.jac_evals));
  j.Field("projections", static_cast<double>(sol.stats.projections));
  j.Field("integrate_seconds", sol.stats.integrate_seconds).Field("compile_seconds", sol.compile_seconds);
  j.Field("ready_seconds", prepared.ready_seconds());
  j.Field("stages", prepared.stages_cached() ? "from the stage cache" : "built");
  j.Field("t0", run.t0).Field("t_end", run.t_end).Field("rtol", run.rtol).Field("atol", run.atol);
  j.Field("rows", static_cast<double>(sol.num_rows()));
  j.Field("states", static_cast<double>(prepared.compiled().num_states()));
  j.Field("constrained", prepared.compiled().num_constraints() > 0 ? result.report.ToText() : "");
  j.Close('}');
  j.Key("columns").Open('[');
  for (const auto& c : sol.columns) j.Str(c);
  j.Close(']');
  j.Key("data").Open('[');
  for (size_t c = 0; c < sol.columns.size(); ++c) {
    j.Open('[');
    for (const auto& row : sol.rows) j.Num(row[c]);
    j.Close(']');
  }
  j.Close(']');
  if (mechanism) j.Key("mechanism").Raw(web::MechanismJson(written));
  j.Close('}');

  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing is fetched: no network, no other file.
  html += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
          "style-src 'unsafe-inline'; img-src data:; font-src data:\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<meta name=\"generator\" content=\"paynter report\">\n<title>paynter report</title>\n";
  // Errors are collected from the first script on (the self-test reports them).
  html += web::ErrorCaptureScript();  // errors are collected from the first script on (the self-test reports them)
  html += "<style>\n" + web::InlineStyle(uplot_css) + "\n" + web::InlineStyle(katex_css) + "\n" + web::InlineStyle(page_css) +
          "\n</style>\n</head>\n<body>\n";
  html += "<script type=\"application/json\" id=\"paynter-data\">" + j.text() + "</script>\n";
  html += "<script>\n" + web::InlineScript(uplot_js) + "\n</script>\n";
  html += "<script>\n" + web::InlineScript(katex_js) + "\n</script>\n";
  html += "<script>\n" + web::InlineScript(svg_js + "\n" + page_js) + "\n</script>\n";
  html += "</body>\n</html>\n";
  WriteFileAtomically(path, html, "report");
}

}  // namespace paynter
