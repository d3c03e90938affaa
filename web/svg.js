// The drawings of paynter's pages (report.js, studio.js): Graphviz's SVG text
// parsed and rebuilt from a list of allowed elements and attributes (no
// script, no event handler, no link, no foreign content), so that a model's
// names in it can only ever be text; and their zoom and pan.
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
  // Zoom (wheel, about the pointer), pan (drag) and fit (double click) of a
  // drawing through its viewBox; `box` (default the svg) takes the events.
  // The window listens only while a drag lasts, so a drawing made again
  // and again (the studio's) leaves nothing behind. A mousedown that an
  // element handles itself (stopPropagation) does not pan.
  window.paynterPanZoom = function (svg, box) {
    box = box || svg;
    const vb0 = svg.getAttribute('viewBox') ? svg.getAttribute('viewBox').split(/[\s,]+/).map(Number) : null;
    if (!vb0) return;
    let vb = vb0.slice();
    const set = function () { svg.setAttribute('viewBox', vb.join(' ')); };
    box.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      const r = box.getBoundingClientRect();
      const fx = (ev.clientX - r.left) / r.width, fy = (ev.clientY - r.top) / r.height;
      const k = ev.deltaY > 0 ? 1.15 : 1 / 1.15;
      const w = vb[2] * k, h = vb[3] * k;
      vb = [vb[0] + (vb[2] - w) * fx, vb[1] + (vb[3] - h) * fy, w, h];
      set();
    }, { passive: false });
    box.addEventListener('mousedown', function (ev) {
      if (ev.button !== 0) return;
      const drag = { x: ev.clientX, y: ev.clientY, vb: vb.slice() };
      const move = function (e) {
        const r = box.getBoundingClientRect();
        const k = Math.max(drag.vb[2] / r.width, drag.vb[3] / r.height);
        vb = [drag.vb[0] - (e.clientX - drag.x) * k, drag.vb[1] - (e.clientY - drag.y) * k, drag.vb[2], drag.vb[3]];
        set();
      };
      const up = function () { window.removeEventListener('mousemove', move); window.removeEventListener('mouseup', up); };
      window.addEventListener('mousemove', move);
      window.addEventListener('mouseup', up);
    });
    box.addEventListener('dblclick', function () { vb = vb0.slice(); set(); });
  };
})();
