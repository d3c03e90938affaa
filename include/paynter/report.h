// paynter/report.h — what the stages show: causality reports, drawings, plots.
#pragma once

#include <string>
#include <vector>

#include "paynter/causality.h"
#include "paynter/equations.h"
#include "paynter/model.h"
#include "paynter/zcp.h"

namespace paynter {

// Each bond's causal stroke, storage in integral and derivative causality,
// conflicts, and the algebraic loops found when sorting the equations (pass the
// equation system, or nullptr when the graph has conflicts).
std::string CausalityReport(const Model& model, const CausalGraph& graph, const EquationSystem* equations);

// Graphviz source of the bond graph: half-arrows for power direction and a
// causal stroke (a bar) at the end of each bond that receives the effort.
// `highlight` (optional, from FindZeroOrderPaths): that zero-order causal
// path's bonds are drawn thick and blue, its elements blue.
std::string BondGraphDot(const Model& model, const CausalGraph* graph, const ZeroOrderPath* highlight = nullptr);

// Renders Graphviz source to a file (format from the extension: svg, png, pdf, dot).
// Throws Error if Graphviz is missing or fails; writes atomically.
void RenderDot(const std::string& dot_source, const std::string& path);

// The SVG Graphviz draws from `dot_source` (dot -Tsvg). Throws Error if
// Graphviz is missing or fails.
std::string DotToSvg(const std::string& dot_source);

// Plots columns of a CSV file against its first column (or against `x_column`)
// with gnuplot into a PNG/SVG/PDF file. Empty `columns` = all columns.
void PlotCsv(const std::string& csv_path, const std::string& out_path, const std::vector<std::string>& columns,
             const std::string& x_column = "", const std::string& title = "");

}  // namespace paynter
