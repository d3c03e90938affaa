// The equations of paynter's pages (report.js, studio.js): the text of
// `paynter equations --latex` typeset with KaTeX (which escapes what it
// shows; trust off, so no command reaches a link or HTML), a row for each
// equation or long sum, comments as text. Rows are typeset when they come
// into view: a mechanism's equations run to hundreds of long rows.
(function () {
  'use strict';
  // A LaTeX expression typeset in a span (the text itself when KaTeX fails).
  function tex(latex, display) {
    const span = document.createElement('span');
    span.className = 'eq';
    try {
      katex.render(latex, span, { displayMode: !!display, fleqn: true, throwOnError: false, trust: false, strict: 'ignore', maxExpand: 1000 });
    } catch (err) {
      span.textContent = latex;
    }
    return span;
  }
  window.paynterTex = tex;
  function typeset(row) {
    if (!row.paynterTex) return;
    row.appendChild(tex(row.paynterTex, true));
    row.paynterTex = null;
  }
  // Fills `box` with the equations of `text`; returns their rows, each with
  // typeset(row) to typeset it at once (a test, a print).
  window.paynterEquations = function (box, text) {
    const rows = [];
    let inAlign = false, group = [];
    const observer = 'IntersectionObserver' in window ? new IntersectionObserver(function (entries) {
      entries.forEach(function (en) { if (en.isIntersecting) typeset(en.target); });
    }, { rootMargin: '600px' }) : null;
    function flush() {
      if (!group.length) return;
      const row = document.createElement('div');
      row.className = 'eqrow';
      row.paynterTex = '\\begin{aligned}' + group.join(' \\\\ ') + '\\end{aligned}';
      rows.push(row);
      box.appendChild(row);
      if (observer) observer.observe(row); else typeset(row);
      group = [];
    }
    (text || '').split('\n').forEach(function (raw) {
      const line = raw.trim();
      if (line.indexOf('%') === 0) {
        flush();
        const c = document.createElement('div');
        c.className = 'comment';
        c.textContent = line.replace(/^%\s?/, '');
        box.appendChild(c);
        return;
      }
      if (line === '\\begin{align}') { inAlign = true; return; }
      if (line === '\\end{align}') { flush(); inAlign = false; return; }
      if (!inAlign || !line) return;
      const body = line.replace(/\\\\$/, '').trim();
      if (body.indexOf('&\\quad') === 0) { group.push(body); return; }  // a long sum's next line
      flush();
      group.push(body);
    });
    flush();
    return rows;
  };
  window.paynterTypeset = typeset;
})();
