// The page of `paynter report` (docs/report.md): reads the report's JSON data
// and builds the drawing, the element panel, the plots, the equations, the
// reports and the 3D view (web/view3d.js, shared with the studio). Every text
// that comes from the model is inserted with textContent (or rendered by
// KaTeX, which escapes it); the drawing's SVG is parsed and rebuilt from a
// list of allowed elements and attributes.
(function () {
  'use strict';

  const data = JSON.parse(document.getElementById('paynter-data').textContent);
  const byId = {};
  (data.elements || []).forEach(function (e) { byId[e.id] = { type: 'element', item: e }; });
  (data.bonds || []).forEach(function (b) { byId[b.id] = { type: 'bond', item: b }; });

  // ---- small DOM helpers (text only) -------------------------------------
  function el(tag, attrs, children) {
    const n = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (k === 'text') n.textContent = attrs[k];
      else if (k === 'class') n.className = attrs[k];
      else n.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) n.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return n;
  }
  const tex = window.paynterTex;  // web/equations.js
  function section(id, title, hint) {
    const s = el('section', { id: id }, [el('h2', { text: title })]);
    if (hint) s.appendChild(el('p', { class: 'hint', text: hint }));
    document.body.appendChild(s);
    return s;
  }

  // ---- header and navigation ---------------------------------------------
  document.title = 'paynter report: ' + data.model;
  const mechanism = data.mechanism && data.columns.some(function (c) { return c.indexOf('pose_') === 0; });
  document.body.appendChild(el('header', null, [
    el('h1', { text: data.model }),
    el('div', { class: 'sub', text: data.file + ' \u2014 form ' + data.form + ', constraints ' + data.constraints +
      ', t = ' + data.stats.t0 + ' \u2026 ' + data.stats.t_end })]));
  const nav = el('nav');
  [['drawing-sec', 'Bond graph'], ['plots', 'Plots'], mechanism ? ['view3d-sec', '3D view'] : null,
    ['equations', 'Equations'], ['causality', 'Causality'], ['stats', 'Run']].forEach(function (l) {
    if (l) nav.appendChild(el('a', { href: '#' + l[0], text: l[1] }));
  });
  document.body.appendChild(nav);

  // ---- the drawing -------------------------------------------------------
  const drawSec = section('drawing-sec', 'Bond graph',
    'Causal strokes as Graphviz draws them (bar = the end that receives the effort); red: storage in derivative ' +
    'causality; dashed: bonds on a zero-order causal path. Hover or click an element or bond for its parameters, ' +
    'equations and where each of its variables is computed. Wheel: zoom, drag: pan, double click: fit.');
  const row = el('div', { class: 'drawing-row' });
  const drawing = el('div', { id: 'drawing' });
  const info = el('div', { id: 'info' }, [el('p', { class: 'muted', text: 'Hover over an element or a bond.' })]);
  row.appendChild(drawing);
  row.appendChild(info);
  drawSec.appendChild(row);
  // A drawing: Graphviz's SVG, cleaned, with zoom (wheel), pan (drag) and fit
  // (double click) through its viewBox.
  function makeView(text) {
    const box = el('div', { class: 'view' });
    box.style.width = '100%';
    box.style.height = '100%';
    const svg = window.paynterSvg(text);  // web/svg.js
    if (!svg) return { box: box, svg: null };
    svg.removeAttribute('width');
    svg.removeAttribute('height');
    box.appendChild(svg);
    window.paynterPanZoom(svg, box);  // web/svg.js
    return { box: box, svg: svg };
  }
  const scalarView = makeView(data.svg);
  const svg = scalarView.svg;
  drawing.appendChild(scalarView.box);
  const compView = data.components_svg ? makeView(data.components_svg) : null;
  // The drawings at the levels of nested submodels: level 1 (as written),
  // then each level opening the blocks of the one above, then the scalar graph.
  const levels = [];
  if (compView) {
    levels.push({ level: 1, view: compView, components: data.components, multibonds: data.multibonds });
    (data.deeper || []).forEach(function (d) {
      levels.push({ level: d.level, view: makeView(d.svg), components: d.components, multibonds: d.multibonds });
    });
  }
  const toolbar = el('div', { class: 'toolbar' });
  let current = compView ? 'level1' : 'scalar';
  function viewOf(which) {
    if (which === 'scalar') return scalarView;
    const l = levels.find(function (x) { return 'level' + x.level === which; });
    return l ? l.view : null;
  }
  function showView(which) {
    current = which;
    scalarView.box.style.display = which === 'scalar' ? '' : 'none';
    levels.forEach(function (l) { l.view.box.style.display = which === 'level' + l.level ? '' : 'none'; });
    toolbar.querySelectorAll('button').forEach(function (b) { b.classList.toggle('on', b.dataset.view === which); });
  }
  if (compView) {
    const buttons = levels.length > 1
      ? levels.map(function (l) { return ['level' + l.level, l.level === 1 ? 'Level 1 (as written)' : 'Level ' + l.level]; })
      : [['level1', 'Components']];
    buttons.push(['scalar', 'Scalar bond graph']);
    levels.forEach(function (l) {
      drawing.appendChild(l.view.box);
      (l.components || []).forEach(function (c) { byId[c.id] = { type: 'component', item: c, level: l.level }; });
      (l.multibonds || []).forEach(function (m) { byId[m.id] = { type: 'multibond', item: m, level: l.level }; });
    });
    buttons.forEach(function (v) {
      const b = el('button', { text: v[1] });
      b.dataset.view = v[0];
      b.addEventListener('click', function () { showView(v[0]); });
      toolbar.appendChild(b);
    });
    drawSec.insertBefore(toolbar, row);
    showView('level1');
  }

  // The group of an id in the drawing shown, else in any drawing.
  function groupOf(id) {
    const sel = 'g[id="' + CSS.escape(id) + '"]';
    const shown = viewOf(current);
    const roots = [shown && shown.svg, svg].concat(levels.map(function (l) { return l.view.svg; }));
    for (let k = 0; k < roots.length; ++k) {
      const g = roots[k] && roots[k].querySelector(sel);
      if (g) return g;
    }
    return null;
  }

  function provenance(p) {
    const d = el('div', { class: 'prov' });
    const head = el('div');
    head.appendChild(tex(p.latex));
    if (p.imposed_by) head.appendChild(document.createTextNode(' imposed by ' + p.imposed_by));
    if (p.reason) head.appendChild(el('span', { class: 'muted', text: ' (' + p.reason + ')' }));
    d.appendChild(head);
    if (p.copy_of) {
      const c = el('div', { text: 'copy of ' });
      c.appendChild(tex(p.copy_of_latex));
      d.appendChild(c);
    }
    if (p.state) d.appendChild(el('div', { text: 'a state: ' + p.state + ' (' + p.state_origin + ')' }));
    if (p.computed_by) {
      const c = el('div', { text: 'computed by ' + p.computed_by + ': ' });
      c.appendChild(tex(p.equation));
      d.appendChild(c);
    }
    if (p.paths && p.paths.length) d.appendChild(el('div', { text: 'on zero-order causal path ' + p.paths.join(', ') }));
    return d;
  }

  function showElement(e) {
    info.textContent = '';
    info.appendChild(el('h3', { text: e.kind + ': ' + e.name }));
    if (e.origin) info.appendChild(el('div', { class: 'muted', text: 'part of ' + e.origin }));
    if (e.joint) info.appendChild(el('div', { class: 'muted', text: 'joint ' + e.joint + ', ' + e.direction }));
    if (e.derivative) info.appendChild(el('div', { text: 'storage in derivative causality' }));
    if (e.conflict) info.appendChild(el('div', { text: 'causal conflict' }));
    if (e.law) {
      const l = el('div', { text: (e.law_key || 'law') + ': ' });
      l.appendChild(e.law_latex ? tex(e.law_latex) : document.createTextNode(e.law));
      info.appendChild(l);
    }
    if (e.parameters.length) {
      info.appendChild(el('h4', { text: 'Parameters' }));
      const t = el('table');
      e.parameters.forEach(function (p) { t.appendChild(el('tr', null, [el('td', { text: p.name }), el('td', { text: String(p.value) })])); });
      info.appendChild(t);
    }
    if (e.variables.length) info.appendChild(el('div', { class: 'muted', text: 'uses ' + e.variables.join(', ') }));
    if (e.equations && e.equations.length) {
      info.appendChild(el('h4', { text: 'Equations' }));
      const eqs = el('div', { class: 'element-equations' });
      e.equations.forEach(function (q) { eqs.appendChild(el('div', { class: 'eq' }, [tex(q, false)])); });
      info.appendChild(eqs);
    }
    if (e.bonds.length) {
      info.appendChild(el('h4', { text: 'Bonds and where their variables are computed' }));
      e.bonds.forEach(function (b) {
        info.appendChild(el('div', { text: 'bond ' + b.name + ' (power ' + b.power + ', to ' + b.other + ')' +
          (b.stroke_here === 1 ? ', stroke here (effort in)' : b.stroke_here === 0 ? ', stroke at ' + b.other : '') +
          (b.origin ? ', part of ' + b.origin : '') }));
        const bond = byId[b.id] ? byId[b.id].item : null;
        if (bond && bond.effort) info.appendChild(provenance(bond.effort));
        if (bond && bond.flow) info.appendChild(provenance(bond.flow));
      });
    }
  }
  function showBond(b) {
    info.textContent = '';
    info.appendChild(el('h3', { text: 'bond ' + b.name + ': ' + b.from + ' \u2192 ' + b.to }));
    if (b.origin) info.appendChild(el('div', { class: 'muted', text: 'part of ' + b.origin }));
    if (b.derivative) info.appendChild(el('div', { text: 'at a storage element in derivative causality' }));
    if (b.effort) info.appendChild(provenance(b.effort));
    if (b.flow) info.appendChild(provenance(b.flow));
  }
  // Shows the scalar graph with these elements and bonds highlighted.
  function expandTo(ids, focus) {
    showView('scalar');
    if (svg) svg.querySelectorAll('.comp-hl').forEach(function (g) { g.classList.remove('comp-hl'); });
    ids.forEach(function (id) { const g = groupOf(id); if (g) g.classList.add('comp-hl'); });
    if (focus) show(focus);
  }
  // Shows the next level's drawing with the parts of block `c` marked: the
  // blocks and elements it is made of one level down.
  function openLevel(c, deeper) {
    showView('level' + deeper.level);
    deeper.view.svg.querySelectorAll('.comp-hl').forEach(function (g) { g.classList.remove('comp-hl'); });
    const marked = [];
    (deeper.components || []).forEach(function (d) {
      if (d.name.indexOf(c.name + '.') === 0) marked.push(d.id);
    });
    const inBlock = {};
    (deeper.components || []).forEach(function (d) { d.elements.forEach(function (id) { inBlock[id] = true; }); });
    c.elements.forEach(function (id) { if (!inBlock[id]) marked.push(id); });
    marked.forEach(function (id) {
      const g = deeper.view.svg.querySelector('g[id="' + CSS.escape(id) + '"]');
      if (g) g.classList.add('comp-hl');
    });
    return marked;
  }
  function showComponent(c) {
    info.textContent = '';
    info.appendChild(el('h3', { text: c.kind + ' ' + c.name }));
    c.label.split('\n').slice(1).forEach(function (l) { info.appendChild(el('div', { text: l })); });
    const inside = c.elements.slice();
    (data.bonds || []).forEach(function (b) {
      if (c.elements.indexOf(b.from_id) >= 0 && c.elements.indexOf(b.to_id) >= 0) inside.push(b.id);
    });
    const ex = el('button', { text: 'Expand: show its ' + c.elements.length + ' elements in the scalar bond graph' });
    ex.addEventListener('click', function () { expandTo(inside); });
    const level = byId[c.id] ? byId[c.id].level : 1;
    const deeper = levels.find(function (l) { return l.level === level + 1; });
    if (c.kind === 'submodel' && deeper) {
      // Opens this block one level: the next level's drawing, its parts marked.
      const open = el('button', { text: 'Open one level: show what ' + c.name + ' is made of' });
      open.addEventListener('click', function () { openLevel(c, deeper); });
      info.appendChild(el('p', null, [open, document.createTextNode(' '), ex]));
    } else {
      info.appendChild(el('p', null, [ex]));
    }
    info.appendChild(el('h4', { text: 'Elements' }));
    const ul = el('ul');
    c.elements.forEach(function (id) {
      const e = byId[id].item;
      const li = el('li', { text: e.kind + ': ' + e.name });
      li.style.cursor = 'pointer';
      li.addEventListener('click', function () { expandTo(inside, id); });
      ul.appendChild(li);
    });
    info.appendChild(ul);
  }
  function showMultibond(m) {
    info.textContent = '';
    info.appendChild(el('h3', { text: 'multibond ' + m.label }));
    const ex = el('button', { text: 'Expand: show its bonds in the scalar bond graph' });
    ex.addEventListener('click', function () { expandTo(m.bonds); });
    info.appendChild(el('p', null, [ex]));
    m.bonds.forEach(function (id) {
      const b = byId[id].item;
      info.appendChild(el('div', { text: 'bond ' + b.name + ': ' + b.from + ' \u2192 ' + b.to }));
      if (b.effort) info.appendChild(provenance(b.effort));
      if (b.flow) info.appendChild(provenance(b.flow));
    });
  }
  let pinned = null;
  function show(id) {
    const x = byId[id];
    if (!x) return;
    if (x.type === 'element') showElement(x.item);
    else if (x.type === 'bond') showBond(x.item);
    else if (x.type === 'component') showComponent(x.item);
    else showMultibond(x.item);
  }
  [svg].concat(levels.map(function (l) { return l.view.svg; })).forEach(function (root) {
    if (!root) return;
    root.querySelectorAll('g.node, g.edge').forEach(function (g) {
      g.addEventListener('mouseenter', function () { if (!pinned) show(g.id); });
      g.addEventListener('click', function (ev) {
        ev.stopPropagation();
        if (pinned) { const old = groupOf(pinned); if (old) old.classList.remove('selected'); }
        pinned = pinned === g.id ? null : g.id;
        if (pinned) { g.classList.add('selected'); show(g.id); }
      });
    });
  });
  if (svg) {
    // Bonds on any zero-order causal path are dashed.
    (data.paths || []).forEach(function (p) {
      p.bonds.forEach(function (b) { const g = groupOf(b); if (g) g.classList.add('on-zcp'); });
    });
  }
  // The zero-order causal paths: a click highlights one.
  if (data.paths && data.paths.length) {
    drawSec.appendChild(el('h3', { text: 'Zero-order causal paths (click to highlight)' }));
    const list = el('ol', { id: 'paths' });
    let active = null;
    data.paths.forEach(function (p) {
      const li = el('li', { text: 'class ' + p.class + ', DAE index ' + p.dae_index + ': ' + p.description });
      li.addEventListener('click', function () {
        if (svg) svg.querySelectorAll('.zcp-hl').forEach(function (g) { g.classList.remove('zcp-hl'); });
        list.querySelectorAll('li').forEach(function (x) { x.classList.remove('active'); });
        if (active === p) { active = null; return; }
        active = p;
        li.classList.add('active');
        showView('scalar');
        p.bonds.concat(p.elements).forEach(function (id) { const g = groupOf(id); if (g) g.classList.add('zcp-hl'); });
      });
      list.appendChild(li);
    });
    drawSec.appendChild(list);
  }

  // ---- plots -------------------------------------------------------------
  const plotSec = section('plots', 'Plots',
    'Every output against time. Drag: zoom into a time range; shift + drag: pan; wheel: zoom; double click: ' +
    'reset. In the first plot, click a legend entry to show or hide that output. Values under the cursor are in ' +
    'the legend; the cursors of all plots move together.');
  const t = data.data[0];
  const outputs = [];
  data.columns.forEach(function (c, i) { if (i > 0 && c.indexOf('pose_') !== 0) outputs.push(i); });
  const plots = [];
  const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
  function plotWidth(full) { return Math.max(320, Math.min(full ? 1200 : 560, (document.body.clientWidth || 1000) - (full ? 60 : 80))); }
  // Wheel zoom and shift-drag pan on the x axis.
  function panZoom() {
    return {
      hooks: {
        ready: function (u) {
          const over = u.over;
          over.addEventListener('wheel', function (ev) {
            ev.preventDefault();
            const x0 = u.scales.x.min, x1 = u.scales.x.max;
            const at = u.posToVal(ev.offsetX, 'x');
            const k = ev.deltaY > 0 ? 1.25 : 0.8;
            u.setScale('x', { min: at - (at - x0) * k, max: at + (x1 - at) * k });
          }, { passive: false });
          over.addEventListener('mousedown', function (ev) {
            if (!ev.shiftKey) return;
            ev.stopPropagation();
            ev.preventDefault();
            const x0 = u.scales.x.min, x1 = u.scales.x.max, px = ev.clientX;
            const per = (x1 - x0) / u.bbox.width * devicePixelRatio;
            function move(e) { const d = (e.clientX - px) * per; u.setScale('x', { min: x0 - d, max: x1 - d }); }
            function up() { window.removeEventListener('mousemove', move); window.removeEventListener('mouseup', up); }
            window.addEventListener('mousemove', move);
            window.addEventListener('mouseup', up);
          }, true);
        }
      }
    };
  }
  if (outputs.length) {
    const main = el('div', { class: 'plot-main' });
    plotSec.appendChild(main);
    const series = [{ label: 't' }];
    outputs.forEach(function (c, k) {
      series.push({ label: data.columns[c], stroke: palette[k % palette.length], width: 1.5, show: k < 4 });
    });
    plots.push(new uPlot({
      width: plotWidth(true), height: 320, series: series, cursor: { sync: { key: 'paynter' } },
      plugins: [panZoom()], scales: { x: { time: false } }
    }, [t].concat(outputs.map(function (c) { return data.data[c]; })), main));
    const grid = el('div', { class: 'plot-grid' });
    plotSec.appendChild(grid);
    outputs.forEach(function (c, k) {
      const box = el('div');
      grid.appendChild(box);
      plots.push(new uPlot({
        title: data.columns[c], width: plotWidth(false), height: 200,
        series: [{ label: 't' }, { label: data.columns[c], stroke: palette[k % palette.length], width: 1.5 }],
        cursor: { sync: { key: 'paynter' } }, plugins: [panZoom()], scales: { x: { time: false } }
      }, [t, data.data[c]], box));
    });
  } else {
    plotSec.appendChild(el('p', { text: 'The model has no outputs.' }));
  }

  // ---- the 3D view (web/view3d.js) ----------------------------------------
  let view3d = null;
  if (mechanism) view3d = window.paynterView3d(section('view3d-sec', '3D view',
    'The bodies as boxes with their inertia-equivalent dimensions (a uniform box of the same mass and principal ' +
    'inertias), joints as dots on the links between bodies, the world frame (x red, y green, z blue). Drag: ' +
    'rotate, wheel: zoom.'), data.mechanism, data.columns, data.data);

  // ---- equations ---------------------------------------------------------
  const eqSec = section('equations', 'Equations',
    'The equations of the ' + data.form + ' formulation as `paynter equations --latex` writes them.');
  const eqRows = window.paynterEquations(eqSec, data.equations);  // web/equations.js
  const typeset = window.paynterTypeset;

  // ---- reports -----------------------------------------------------------
  section('causality', 'Causality and zero-order causal paths').appendChild(el('pre', { class: 'report', text: data.causality }));
  const statSec = section('stats', 'Run');
  const s = data.stats;
  const st = el('table', { class: 'stats' });
  [['integrator', s.integrator + ' (' + s.backend + ' backend)'], ['constraint method', data.constraints],
    ['time', s.t0 + ' \u2026 ' + s.t_end + ' (rtol ' + s.rtol + ', atol ' + s.atol + ')'],
    ['states', s.states], ['steps', s.steps + ' (' + s.rejected + ' rejected)'], ['rhs evaluations', s.rhs_evals],
    ['Jacobians', s.jacobians], ['projections', s.projections], ['output rows', s.rows],
    ['model to ready', s.ready_seconds.toFixed(4) + ' s (symbolic stages ' + s.stages + ')'],
    ['compile', s.compile_seconds.toFixed(3) + ' s'], ['integrate', s.integrate_seconds.toFixed(6) + ' s']
  ].forEach(function (r) { st.appendChild(el('tr', null, [el('td', { text: r[0] }), el('td', { text: String(r[1]) })])); });
  statSec.appendChild(st);
  if (s.constrained) statSec.appendChild(el('pre', { class: 'report', text: s.constrained }));

  // ---- self-test (#selftest): checks written into the DOM -----------------
  function inked(canvas) {
    const c = canvas.getContext('2d');
    const d = c.getImageData(0, 0, canvas.width, canvas.height).data;
    let ink = 0;
    for (let k = 0; k < d.length; k += 4) if (d[k + 3] > 0 && (d[k] < 200 || d[k + 1] < 200 || d[k + 2] < 200)) ++ink;
    return ink;
  }
  function selftest() {
    const checks = [];
    function check(name, ok, detail) { checks.push({ name: name, ok: !!ok, detail: String(detail) }); }
    const nodes = svg ? svg.querySelectorAll('g.node').length : 0;
    check('drawing', svg && nodes === data.elements.length, nodes + ' nodes of ' + data.elements.length + ' elements');
    if (compView) {
      const comps = compView.svg.querySelectorAll('g.node[id^="comp"]').length;
      const g = groupOf(data.components[0].id);
      if (g) g.dispatchEvent(new MouseEvent('mouseenter'));
      check('components', comps === data.components.length && info.querySelector('h3').textContent ===
        data.components[0].kind + ' ' + data.components[0].name, comps + ' component nodes of ' + data.components.length);
    }
    if (levels.length > 1) {
      // Every level drawn with its blocks; a block of level 1 opened one level.
      let ok = true;
      const detail = [];
      levels.slice(1).forEach(function (l) {
        const n = l.view.svg.querySelectorAll('g.node[id^="l' + l.level + 'comp"]').length;
        detail.push('level ' + l.level + ': ' + n + ' blocks of ' + l.components.length);
        if (n !== l.components.length) ok = false;
      });
      const outer = data.components.find(function (c) {
        return levels[1].components.some(function (d) { return d.name.indexOf(c.name + '.') === 0; });
      });
      if (outer) {
        const marked = openLevel(outer, levels[1]);
        const hl = levels[1].view.svg.querySelectorAll('.comp-hl').length;
        detail.push('opened ' + outer.name + ': ' + hl + ' of ' + marked.length + ' parts marked');
        if (current !== 'level2' || hl === 0 || hl !== marked.length) ok = false;
      } else {
        ok = false;
        detail.push('no block of level 1 holds a block of level 2');
      }
      showView('level1');
      check('levels', ok, detail.join('; '));
    }
    const canvases = Array.from(document.querySelectorAll('#plots canvas'));
    check('plots', canvases.length === (outputs.length ? outputs.length + 1 : 0) &&
      canvases.every(function (c) { return inked(c) > 100; }), canvases.length + ' plot canvases, ink ' +
      canvases.map(inked).join(','));
    const withEq = data.elements.find(function (e) { return e.equations && e.equations.length; });
    if (withEq) {
      const g = groupOf(withEq.id);
      if (g) g.dispatchEvent(new MouseEvent('mouseenter'));
      const rendered = info.querySelectorAll('.element-equations .katex').length;
      check('hover', g && info.querySelector('h3').textContent === withEq.kind + ': ' + withEq.name &&
        rendered === withEq.equations.length, withEq.name + ': ' + rendered + ' equations rendered');
    }
    eqRows.slice(0, 40).forEach(typeset);
    const eqs = document.querySelectorAll('#equations .katex').length;
    const errs = document.querySelectorAll('#equations .katex-error').length;
    check('equations', eqs > 0 && errs === 0, eqs + ' rendered, ' + errs + ' errors');
    const finish = function () {
      check('no injection', !window.paynterInjected && !document.querySelector('img, iframe, object, embed'),
        String(window.paynterInjected || ''));
      check('console', window.paynterErrors.length === 0, window.paynterErrors.join(' | '));
      const ok = checks.every(function (c) { return c.ok; });
      const out = el('pre', { id: 'selftest', text: JSON.stringify({ ok: ok, checks: checks }) });
      document.body.appendChild(out);
      document.body.setAttribute('data-selftest', ok ? 'pass' : 'fail');
    };
    if (view3d) {
      view3d.setFrame(0);
      const ink0 = inked(view3d.canvas);
      const img0 = view3d.canvas.toDataURL();
      view3d.setFrame(Math.floor(view3d.frames / 2));
      const moved = view3d.canvas.toDataURL() !== img0;
      check('3d drawn', ink0 > 500, 'ink ' + ink0);
      check('3d frames differ', moved, 'frame 0 and frame ' + Math.floor(view3d.frames / 2));
      view3d.setFrame(0);
      view3d.play();
      // Playing moves the frame on (waits up to 4 s for the browser's frames).
      const started = Date.now();
      const poll = function () {
        const f = view3d.frame();
        if (f === 0 && Date.now() - started < 4000) { setTimeout(poll, 100); return; }
        view3d.pause();
        check('3d plays', f > 0, 'frame ' + f + ' after ' + (Date.now() - started) + ' ms');
        finish();
      };
      setTimeout(poll, 100);
    } else {
      finish();
    }
  }
  if (location.hash === '#selftest') setTimeout(selftest, 50);
  // #only=SECTION[&at=FRACTION][&trace=b:BODY]: that section alone (the 3D view
  // at a fraction of the run, tracing a point) -- for screenshots of one part.
  // #select=ELEMENT: that element's panel, as after a click.
  if (location.hash.indexOf('=') > 0 && location.hash !== '#selftest') {
    const opts = {};
    location.hash.slice(1).split('&').forEach(function (kv) { const i = kv.indexOf('='); opts[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); });
    const chosen = opts.select ? data.elements.find(function (e) { return e.name === opts.select; }) : null;
    if (chosen && groupOf(chosen.id)) groupOf(chosen.id).dispatchEvent(new MouseEvent('click'));
    if (opts.only) document.querySelectorAll('body > section, body > nav').forEach(function (x) { if (x.id !== opts.only) x.style.display = 'none'; });
    if (view3d && opts.trace) { const sel = document.getElementById('trace3d'); sel.value = opts.trace; }
    if (view3d) view3d.setFrame(Math.round(Number(opts.at || 0) * (view3d.frames - 1)));
  }
})();
