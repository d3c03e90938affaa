// The drawings of paynter's pages (report.js, studio.js): Graphviz's SVG text
// parsed and rebuilt from a list of allowed elements and attributes (no
// script, no event handler, no link, no foreign content), so that a model's
// names in it can only ever be text.
(function () {
  'use strict';
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const ALLOWED_TAGS = { svg: 1, g: 1, title: 1, polygon: 1, polyline: 1, path: 1, ellipse: 1, circle: 1, text: 1, line: 1, rect: 1 };
  const ALLOWED_ATTRS = {
    id: 1, class: 1, transform: 1, points: 1, d: 1, cx: 1, cy: 1, rx: 1, ry: 1, r: 1, x: 1, y: 1, x1: 1, y1: 1,
    x2: 1, y2: 1, width: 1, height: 1, viewBox: 1, fill: 1, stroke: 1, 'stroke-width': 1, 'stroke-dasharray': 1,
    'font-family': 1, 'font-size': 1, 'font-weight': 1, 'font-style': 1, 'text-anchor': 1, 'fill-opacity': 1,
    'stroke-opacity': 1, opacity: 1, preserveAspectRatio: 1
  };
  function cleanSvg(node) {
    const name = node.localName;
    if (node.namespaceURI !== SVG_NS || !ALLOWED_TAGS[name]) return null;
    const out = document.createElementNS(SVG_NS, name);
    for (const a of Array.from(node.attributes)) {
      if (!ALLOWED_ATTRS[a.name] || a.namespaceURI) continue;
      if (/url\s*\(|javascript:/i.test(a.value)) continue;
      out.setAttribute(a.name, a.value);
    }
    for (const c of Array.from(node.childNodes)) {
      if (c.nodeType === 3) out.appendChild(document.createTextNode(c.nodeValue));
      else if (c.nodeType === 1) { const k = cleanSvg(c); if (k) out.appendChild(k); }
    }
    return out;
  }
  // The cleaned <svg> element of an SVG text, or null.
  window.paynterSvg = function (text) {
    const parsed = new DOMParser().parseFromString(text, 'image/svg+xml');
    return cleanSvg(parsed.documentElement);
  };
})();
