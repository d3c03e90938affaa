// paynter/html_report.h — one self-contained HTML page of a model and its run.
//
// `paynter report FILE -o report.html`: the bond graph drawing (Graphviz SVG)
// whose elements show their parameters, equations and where each of their
// variables is computed; plots of every output; the equations typeset; the
// causality and zero-order causal path reports; the run's statistics; for a
// mechanism a 3D view of its bodies animated from the results. The browser
// libraries (uPlot, KaTeX) and the page's own script and style (web/) are
// inlined: the page opens offline, without a server. Model text reaches the
// page only as JSON data, inserted as text (docs/report.md).
#pragma once

#include <string>

#include "paynter/run.h"

namespace paynter {

struct ReportOptions {
  RunOptions run;                   // the simulation (as `paynter simulate`)
  CausalityProcedure procedure = CausalityProcedure::kSCAP;  // the causality report's procedure
  // Where the page's script and style (report.js, report.css) and the npm
  // libraries (node_modules/) are: "" = $PAYNTER_WEB_DIR, else the source
  // tree's web/ this build was configured from.
  std::string web_dir;
};

// Simulates `options.run` and writes the report to `path` (atomically).
// Throws Error for a model that cannot be analysed or run, or when the web
// libraries are missing (hint: npm ci in web/).
void WriteHtmlReport(const ReportOptions& options, const std::string& path);

// `text` as a JSON string literal that is safe inside an HTML <script> element:
// quotes, backslashes and control characters escaped, and also <, >, &, U+2028
// and U+2029, so that no model text can close the element or start markup.
std::string JsonString(const std::string& text);

}  // namespace paynter
