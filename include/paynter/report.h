// paynter/report.h — what the stages show: causality reports, drawings, plots.
#pragma once

#include <string>
#include <utility>
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

// The components a model was written with, for a drawing at that level: the
// instances of submodels (`instances:` of the model as read, `hierarchical`:
// their elements are named <instance>.<...>), the bodies, joints and loads of
// a `multibody:` section (their elements are named <name>_...) and the vector
// elements of vector bonds (Element::origin). An element of none is drawn as
// it is. A bond between a submodel's block and another node is drawn as one
// bond (with its causal stroke) labelled at the block's end with the port it
// joins, as the model's `bonds:` name it (`motor.shaft`: port shaft).
//
// `level` says how deep the drawing looks into nested submodels: at level k,
// an element in an instance k or more levels deep is drawn inside the block of
// its enclosing instance k levels down (`drive.motor` at level 2), an element
// of a shallower instance as itself. Level 1 is the level the model is
// written at; `levels` is the deepest level with a block of a submodel (a
// level deeper than that is the flat graph, BondGraphDot's).
struct DrawComponents {
  struct Component {
    std::string name, kind, label;  // kind: submodel | body | joint | load | vector element
    std::vector<int> elements;
  };
  std::vector<Component> components;
  std::vector<int> component_of;  // per element: its component, -1 = none
  // The bonds drawn as one edge (a multibond): between two components, or a
  // component and an element, or a vector bond's scalar bonds.
  struct Multibond {
    std::string from, to, label;  // node names in the drawing
    std::vector<int> bonds;
    std::string from_port, to_port;  // a bond at a submodel's port: the port's name at that end
  };
  std::vector<Multibond> multibonds;
  int level = 1;   // the level drawn
  int levels = 0;  // how many levels have blocks of submodels (0: none)
  bool empty() const { return components.empty(); }
};
DrawComponents FindDrawComponents(const Model& model, const ModelSpec& written,
                                  const ModelSpec* hierarchical = nullptr, int level = 1);

// Graphviz source of the drawing at the components' level: one node per
// component (id comp<k>; at a level below the first, l<level>comp<k>), one
// edge per multibond (id mb<k>, or l<level>mb<k>: a double line
// labelled with its dimension; a single bond at a submodel's port: a bond
// with its causal stroke and the port's name), the other elements and bonds
// as BondGraphDot draws them.
std::string ComponentGraphDot(const Model& model, const CausalGraph* graph, const DrawComponents& components);

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

// A Bode diagram (magnitude in dB above, phase in degrees below, against a
// logarithmic angular frequency) from a CSV file with the columns omega,
// magnitude_db and phase_deg (paynter bode), into a PNG/SVG/PDF file.
// A loop gain's diagram (`marks` given) also shows the 0 dB and -180 deg
// (modulo 360) lines, each gain crossover with its phase margin and each phase crossover
// with its gain margin: pairs (w in rad/s, margin in deg or dB).
struct BodeMarks {
  std::vector<std::pair<double, double>> gain_crossovers, phase_crossovers;
  std::vector<double> phase_lines = {-180};  // the phases of -180 deg (modulo 360) the plot spans
};
void PlotBode(const std::string& csv_path, const std::string& out_path, const std::string& title,
              const BodeMarks* marks = nullptr);

}  // namespace paynter
