// The studio's drawings, rendered in this process by Graphviz's library
// (libgvc) when the studio was built with it: `dot` as a program (DotToSvg,
// paynter/report.h) spends about 100 ms starting up — loading its plugins and
// fonts — on every drawing, most of the time a check on every edit may take.
// The layout and the SVG are those of `dot -Tsvg` (the same library).
#pragma once

#include <map>
#include <string>
#include <utility>

namespace paynter::studio {

class DotRenderer {
 public:
  DotRenderer();
  ~DotRenderer();
  DotRenderer(const DotRenderer&) = delete;
  DotRenderer& operator=(const DotRenderer&) = delete;
  // The SVG of a Graphviz source (paynter's own drawings); throws Error when
  // Graphviz fails. Not thread-safe: one drawing at a time.
  std::string Svg(const std::string& dot_source);

  // Positions in points (x to the right, y up), by node name.
  using Positions = std::map<std::string, std::pair<double, double>>;
  struct Drawn {
    std::string svg;
    Positions positions;  // where each node was placed (empty without libgvc)
  };
  // The drawing with the nodes of `pinned` held where it says (a model's
  // layout:, docs/studio.md) and the others placed around them (Graphviz's
  // neato; dot's layout when nothing is pinned). Names that are no node of
  // the drawing are left out. Without libgvc, the `dot` program's drawing,
  // nothing pinned.
  Drawn Draw(const std::string& dot_source, const Positions& pinned);

 private:
  void* context_ = nullptr;  // GVC_t*, null without libgvc
};

}  // namespace paynter::studio
