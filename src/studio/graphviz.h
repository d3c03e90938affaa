// The studio's drawings, rendered in this process by Graphviz's library
// (libgvc) when the studio was built with it: `dot` as a program (DotToSvg,
// paynter/report.h) spends about 100 ms starting up — loading its plugins and
// fonts — on every drawing, most of the time a check on every edit may take.
// The layout and the SVG are those of `dot -Tsvg` (the same library).
#pragma once

#include <string>

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

 private:
  void* context_ = nullptr;  // GVC_t*, null without libgvc
};

}  // namespace paynter::studio
