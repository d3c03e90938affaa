// The studio's drawings in this process (graphviz.h).
#include "graphviz.h"

#include <fmt/format.h>

#include "paynter/error.h"
#include "paynter/report.h"

#ifdef PAYNTER_STUDIO_GVC
#include <gvc.h>
#endif

namespace paynter::studio {

#ifdef PAYNTER_STUDIO_GVC

namespace {
// Graphviz's warnings ("falling back to straight line edges") would go to the
// server's stderr on every drawing; its failures are known by its return codes.
int Quiet(char*) { return 0; }
}  // namespace

DotRenderer::DotRenderer() {
  agseterrf(Quiet);
  context_ = gvContext();
}

DotRenderer::~DotRenderer() {
  if (context_) gvFreeContext(static_cast<GVC_t*>(context_));
}

std::string DotRenderer::Svg(const std::string& dot_source) { return Draw(dot_source, {}).svg; }

DotRenderer::Drawn DotRenderer::Draw(const std::string& dot_source, const Positions& pinned) {
  GVC_t* gvc = static_cast<GVC_t*>(context_);
  if (!gvc) return {DotToSvg(dot_source), {}};
  Agraph_t* g = agmemread(dot_source.c_str());
  if (!g) ThrowAt({"studio"}, "", "Graphviz could not read the drawing", "paynter's Graphviz source", "a syntax error");
  int held = 0;
  for (const auto& [name, p] : pinned) {
    Agnode_t* n = agnode(g, const_cast<char*>(name.c_str()), 0);  // 0: an existing node only
    if (!n) continue;
    agsafeset(n, const_cast<char*>("pos"), const_cast<char*>(fmt::format("{},{}!", p.first, p.second).c_str()),
              const_cast<char*>(""));
    ++held;
  }
  if (held > 0) {
    // Positions in points, edges routed around the nodes. (overlap=false
    // would move the pinned nodes apart: it scales the whole layout.)
    agsafeset(g, const_cast<char*>("inputscale"), const_cast<char*>("72"), const_cast<char*>(""));
    agsafeset(g, const_cast<char*>("splines"), const_cast<char*>("true"), const_cast<char*>(""));
  }
  if (gvLayout(gvc, g, held > 0 ? "neato" : "dot") != 0) {
    agclose(g);
    ThrowAt({"studio"}, "", "Graphviz could not lay out the drawing", "a layout", "an error of Graphviz's layout");
  }
  // neato keeps the pinned nodes where they are relative to one another but
  // moves the drawing as a whole (notranslate does not stop it in every
  // version): the positions are given in the layout's frame, that of the
  // pinned nodes, so that a position written back pins the node where it is.
  double dx = 0, dy = 0;
  for (const auto& [name, p] : pinned)
    if (Agnode_t* n = agnode(g, const_cast<char*>(name.c_str()), 0)) {
      dx = p.first - ND_coord(n).x;
      dy = p.second - ND_coord(n).y;
      break;
    }
  Drawn d;
  for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n))
    d.positions[agnameof(n)] = {ND_coord(n).x + dx, ND_coord(n).y + dy};
  char* data = nullptr;
  unsigned int size = 0;
  const int rendered = gvRenderData(gvc, g, "svg", &data, &size);
  d.svg = rendered == 0 && data ? std::string(data, size) : std::string();
  if (data) gvFreeRenderData(data);
  gvFreeLayout(gvc, g);
  agclose(g);
  if (rendered != 0) ThrowAt({"studio"}, "", "Graphviz could not render the drawing as SVG", "SVG", "an error");
  return d;
}

#else

DotRenderer::DotRenderer() = default;
DotRenderer::~DotRenderer() = default;
std::string DotRenderer::Svg(const std::string& dot_source) { return DotToSvg(dot_source); }
DotRenderer::Drawn DotRenderer::Draw(const std::string& dot_source, const Positions&) {
  return {DotToSvg(dot_source), {}};
}

#endif

}  // namespace paynter::studio
