// The studio's drawings in this process (graphviz.h).
#include "graphviz.h"

#include "paynter/error.h"
#include "paynter/report.h"

#ifdef PAYNTER_STUDIO_GVC
#include <gvc.h>
#endif

namespace paynter::studio {

#ifdef PAYNTER_STUDIO_GVC

DotRenderer::DotRenderer() { context_ = gvContext(); }

DotRenderer::~DotRenderer() {
  if (context_) gvFreeContext(static_cast<GVC_t*>(context_));
}

std::string DotRenderer::Svg(const std::string& dot_source) {
  GVC_t* gvc = static_cast<GVC_t*>(context_);
  if (!gvc) return DotToSvg(dot_source);
  Agraph_t* g = agmemread(dot_source.c_str());
  if (!g) ThrowAt({"studio"}, "", "Graphviz could not read the drawing", "paynter's Graphviz source", "a syntax error");
  if (gvLayout(gvc, g, "dot") != 0) {
    agclose(g);
    ThrowAt({"studio"}, "", "Graphviz could not lay out the drawing", "a layout", "an error of Graphviz's dot layout");
  }
  char* data = nullptr;
  unsigned int size = 0;
  const int rendered = gvRenderData(gvc, g, "svg", &data, &size);
  std::string svg = rendered == 0 && data ? std::string(data, size) : std::string();
  if (data) gvFreeRenderData(data);
  gvFreeLayout(gvc, g);
  agclose(g);
  if (rendered != 0) ThrowAt({"studio"}, "", "Graphviz could not render the drawing as SVG", "SVG", "an error");
  return svg;
}

#else

DotRenderer::DotRenderer() = default;
DotRenderer::~DotRenderer() = default;
std::string DotRenderer::Svg(const std::string& dot_source) { return DotToSvg(dot_source); }

#endif

}  // namespace paynter::studio
