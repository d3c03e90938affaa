// The page of `paynter studio` (docs/studio.md): the model's YAML in an
// editor (CodeMirror 5), checked and drawn by the server on every edit, errors
// shown at their lines; runs plotted with uPlot, parameter sliders that run
// again on release. Everything from the model or the server (names, messages,
// the drawing) is inserted as text, the drawing through web/svg.js's cleaner.
// Every request carries the token of the address the page was opened with.
(function () {
  'use strict';

  const token = new URLSearchParams(location.search).get('token') || '';
  const state = {
    path: '', saved: '', check: null, run: null, checks: 0, seq: 0, shown: 0, runs: 0,
    lastCheck: null, lastRun: null, params: {}
  };
  window.paynterStudio = state;  // for the browser test (tests/studio_browser.mjs)

  // ---- small DOM helpers (text only) ---------------------------------------
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

  // ---- the server ------------------------------------------------------------
  function api(method, path, query, body) {
    const q = new URLSearchParams();
    (query || []).forEach(function (kv) { q.append(kv[0], kv[1]); });
    const qs = q.toString();
    return fetch(path + (qs ? '?' + qs : ''), {
      method: method, body: body, cache: 'no-store',
      headers: { 'X-Paynter-Token': token, 'Content-Type': 'text/plain; charset=utf-8' }
    }).then(function (r) {
      return r.json().catch(function () { return { ok: false, error: 'HTTP ' + r.status }; })
        .then(function (j) { j.status = r.status; return j; });
    }, function () {
      return { ok: false, status: 0, error: 'the studio does not answer: was it stopped? (start it again and reload)' };
    }).then(function (j) {
      if (j.error) { status.textContent = j.error; status.className = 'bad'; }
      return j;
    });
  }

  // ---- the layout ----------------------------------------------------------
  const fileSelect = el('select', { id: 'file', title: 'model files in the studio\'s directory' });
  const newButton = el('button', { id: 'new', text: 'New', title: 'a new model file' });
  const saveButton = el('button', { id: 'save', text: 'Save', title: 'save (Ctrl-S); written completely or not at all' });
  const status = el('span', { id: 'status', class: 'muted' });
  const timing = el('span', { id: 'timing', class: 'muted' });
  document.body.appendChild(el('header', null, [
    el('h1', { text: 'paynter studio' }), fileSelect, newButton, saveButton, status, el('span', { class: 'grow' }), timing]));
  const editorBox = el('div', { id: 'editor' });
  const palette = el('div', { id: 'palette', title: 'add an element at the end of elements: (bonded to the element ' +
    'chosen by a shift-click in the drawing, if any); shift-click two elements to add a bond between them (power ' +
    'from the first to the second)' }, [el('span', { class: 'muted', text: 'add ' })]);
  const drawing = el('div', { id: 'drawing' });
  const summary = el('div', { id: 'summary', class: 'muted' });
  const diagList = el('ul', { id: 'diagnostics' });
  const paths = el('ul', { id: 'paths' });
  document.body.appendChild(el('main', null, [
    el('section', { id: 'left' }, [palette, editorBox]),
    el('section', { id: 'right' }, [drawing, summary, diagList, paths])]));

  // The run: simulate's options, the button, the sliders and the plot.
  function field(id, label, value, title) {
    const input = el('input', { id: id, value: value, size: '7', title: title });
    return { input: input, box: el('label', null, [label + ' ', input]) };
  }
  function choice(id, label, options, title) {
    const s = el('select', { id: id, title: title });
    options.forEach(function (o) { s.appendChild(el('option', { value: o, text: o })); });
    return { input: s, box: el('label', null, [label + ' ', s]) };
  }
  const opts = {
    't-end': field('t-end', 't end', '10', 'end time'),
    method: choice('method', 'method', ['dopri5', 'bdf', 'rk4'], 'integrator'),
    rtol: field('rtol', 'rtol', '1e-6', 'relative tolerance'),
    atol: field('atol', 'atol', '1e-9', 'absolute tolerance'),
    'dt-out': field('dt-out', 'dt out', '', 'output interval (default (t_end - t0)/1000)'),
    constraints: choice('constraints', 'constraints',
      ['auto', 'lagrange-multipliers', 'minimal-coordinates', 'parasitic', 'zcp'], 'mechanisms: the constraint method'),
    form: choice('form', 'form', ['state', 'lagrange1', 'lagrange2', 'hamilton'], 'the formulation')
  };
  const runButton = el('button', { id: 'simulate', text: 'Simulate', title: 'simulate the model in the editor' });
  const runStatus = el('span', { id: 'run-status', class: 'muted' });
  const sliders = el('div', { id: 'sliders' });
  const plotBox = el('div', { id: 'plot' });
  const runSec = el('section', { id: 'run' }, [
    el('div', { class: 'options' }, Object.keys(opts).map(function (k) { return opts[k].box; }).concat([runButton, runStatus])),
    sliders, plotBox]);
  document.body.appendChild(runSec);

  // ---- the editor ----------------------------------------------------------
  const KINDS = ['Se', 'Sf', 'MSe', 'MSf', 'C', 'I', 'R', 'TF', 'MTF', 'GY', 'MGY', '"0"', '"1"'];
  const KEYS = ['name', 'description', 'parameters', 'elements', 'bonds', 'outputs', 'displacements', 'definitions',
    'events', 'submodels', 'instances', 'ports', 'multibody', 'bodies', 'joints', 'loads', 'kind', 'effort', 'flow',
    'capacitance', 'inertance', 'resistance', 'ratio', 'initial', 'from', 'to', 'of', 'use', 'momentum', 'constraint',
    'when', 'reset', 'stop', 'domain', 'energy', 'generalized'];
  const cm = CodeMirror(editorBox, {
    value: '', mode: 'yaml', lineNumbers: true, indentUnit: 2, tabSize: 2, indentWithTabs: false,
    gutters: ['diag-gutter', 'CodeMirror-linenumbers'],
    extraKeys: {
      'Ctrl-Space': 'autocomplete', 'Ctrl-S': function () { save(false); }, 'Cmd-S': function () { save(false); },
      Tab: function (c) { c.replaceSelection('  '); }
    },
    hintOptions: { hint: hint, completeSingle: false }
  });
  state.editor = cm;
  // Completion: element kinds after `kind:`, otherwise the format's keys and
  // the model's element, parameter and output names (from the last check).
  function hint(c) {
    const cur = c.getCursor();
    const line = c.getLine(cur.line);
    let start = cur.ch;
    while (start > 0 && /[\w"]/.test(line.charAt(start - 1))) --start;
    const word = line.slice(start, cur.ch);
    const before = line.slice(0, start);
    let words;
    if (/kind:\s*$/.test(before)) words = KINDS;
    else {
      const k = state.check || {};
      words = KEYS.concat((k.elements || []).map(function (e) { return e.name; }),
        (k.parameters || []).map(function (p) { return p.name; }), k.outputs || []);
    }
    const seen = {};
    const list = words.filter(function (w) {
      if (seen[w] || w.indexOf(word) !== 0 || w === word) return false;
      seen[w] = 1;
      return true;
    });
    return { list: list, from: CodeMirror.Pos(cur.line, start), to: cur };
  }
  cm.on('inputRead', function (c, change) {
    if (change.origin === '+input' && /kind:\s$/.test(c.getLine(change.from.line).slice(0, change.from.ch + 1)))
      c.showHint();
  });

  // ---- diagnostics at their lines -------------------------------------------
  let marks = [];
  function clearMarks() {
    marks.forEach(function (m) { m.clear(); });
    marks = [];
    cm.clearGutter('diag-gutter');
  }
  function showDiagnostics(list) {
    clearMarks();
    diagList.textContent = '';
    (list || []).forEach(function (d) {
      const where = d.here && d.line > 0 ? d.line : 0;
      const item = el('li', { class: 'diag ' + d.severity });
      item.appendChild(el('span', { class: 'where', text: where ? 'line ' + where + (d.column ? ':' + d.column : '') : (d.file || '') }));
      item.appendChild(el('span', { class: 'msg', text: ' ' + (d.element ? d.element + ': ' : '') + d.message }));
      if (d.expected) item.appendChild(el('div', { class: 'detail', text: 'expected: ' + d.expected }));
      if (d.got) item.appendChild(el('div', { class: 'detail', text: 'got: ' + d.got }));
      if (d.hint) item.appendChild(el('div', { class: 'detail hint', text: 'hint: ' + d.hint }));
      diagList.appendChild(item);
      if (!where || where > cm.lineCount()) return;
      const ln = where - 1;
      item.addEventListener('click', function () { cm.setCursor({ line: ln, ch: Math.max(0, d.column - 1) }); cm.focus(); });
      const text = cm.getLine(ln);
      const from = d.column > 0 ? Math.min(d.column - 1, text.length) : text.search(/\S|$/);
      const to = text.length > from ? text.length : from + 1;
      marks.push(cm.markText({ line: ln, ch: from }, { line: ln, ch: to },
        { className: 'mark-' + d.severity, attributes: { 'data-line': String(where) }, title: d.message }));
      const dot = el('div', { class: 'gutter-' + d.severity, text: '\u25cf', title: d.message });
      cm.setGutterMarker(ln, 'diag-gutter', dot);
      if (d.severity === 'info') return;
      const w = el('div', { class: 'line-diag ' + d.severity, 'data-line': String(where) });
      w.appendChild(el('span', { text: d.message }));
      if (d.hint) w.appendChild(el('span', { class: 'hint', text: ' \u2014 ' + d.hint }));
      marks.push(cm.addLineWidget(ln, w, { coverGutter: false, noHScroll: true }));
    });
  }

  // ---- the drawing -----------------------------------------------------------
  let view = null;  // the viewBox kept across drawings of the same model
  function showDrawing(svgText) {
    const svg = window.paynterSvg(svgText);
    if (!svg) return;
    svg.removeAttribute('width');
    svg.removeAttribute('height');
    drawing.textContent = '';
    drawing.classList.remove('stale');
    drawing.appendChild(svg);
    svg.querySelectorAll('g.node').forEach(function (g) {
      if (bondFrom && g.querySelector('title') && g.querySelector('title').textContent === bondFrom) g.classList.add('bond-from');
      g.addEventListener('click', function (ev) { nodeClicked(g, ev); });
    });
    panZoom(svg);
  }
  function panZoom(svg) {
    const vb0 = svg.getAttribute('viewBox') ? svg.getAttribute('viewBox').split(/[\s,]+/).map(Number) : null;
    if (!vb0) return;
    let vb = vb0.slice();
    const set = function () { svg.setAttribute('viewBox', vb.join(' ')); };
    svg.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      const r = svg.getBoundingClientRect();
      const fx = (ev.clientX - r.left) / r.width, fy = (ev.clientY - r.top) / r.height;
      const k = ev.deltaY > 0 ? 1.15 : 1 / 1.15;
      const w = vb[2] * k, h = vb[3] * k;
      vb = [vb[0] + (vb[2] - w) * fx, vb[1] + (vb[3] - h) * fy, w, h];
      set();
    }, { passive: false });
    svg.addEventListener('dblclick', function () { vb = vb0.slice(); set(); });
  }

  // ---- graphical editing, as edits of the text ---------------------------------
  // An element from the palette, a bond from two shift-clicks in the drawing:
  // each is one line added to its section (`elements:`, `bonds:`), in block or
  // one-line flow style, and the rest of the text — comments, order — stays
  // as it is. An edit of the editor's text, so Ctrl-Z takes it back.
  const LAW = { Se: 'effort', Sf: 'flow', MSe: 'effort', MSf: 'flow', C: 'capacitance', I: 'inertance',
    R: 'resistance', TF: 'ratio', MTF: 'ratio', GY: 'ratio', MGY: 'ratio' };
  function addToSection(key, item) {
    const lines = cm.getValue().split('\n');
    const head = lines.findIndex(function (l) { return new RegExp('^' + key + ':').test(l); });
    if (head < 0) {  // no such section: a new one at the end
      const last = cm.lastLine();
      const tail = cm.getLine(last) === '' ? '' : '\n';
      cm.replaceRange(tail + key + ':\n  - ' + item + '\n', { line: last, ch: cm.getLine(last).length });
      return true;
    }
    const flow = lines[head].match(new RegExp('^' + key + ':\\s*\\[(.*)\\]\\s*(#.*)?$'));
    if (flow) {  // key: [a, b] on one line
      const close = lines[head].lastIndexOf(']', flow[2] ? lines[head].indexOf(flow[2]) : undefined);
      cm.replaceRange((flow[1].trim() ? ', ' : '') + item, { line: head, ch: close });
      return true;
    }
    if (!/^[A-Za-z_]+:\s*(#.*)?$/.test(lines[head])) return false;
    let last = head, indent = '  ';
    for (let i = head + 1; i < lines.length; ++i) {
      const l = lines[i];
      if (/^\S/.test(l) && !/^[-#]/.test(l)) break;  // the next key
      if (/^\s*-/.test(l)) { last = i; indent = l.match(/^\s*/)[0]; } else if (/^\s+\S/.test(l) && !/^\s*#/.test(l)) last = i;
    }
    cm.replaceRange('\n' + indent + '- ' + item, { line: last, ch: lines[last].length });
    return true;
  }
  function freeName(base) {
    const names = {};
    cm.getValue().replace(/name:\s*"?([\w.]+)/g, function (m, n) { names[n] = 1; return m; });
    for (let k = 1; ; ++k) if (!names[base + k]) return base + k;
  }
  // With an element chosen (shift-click), the new one is bonded to it.
  function addElement(kind) {
    const name = freeName(kind === '0' || kind === '1' ? 'j' : kind);
    const item = '{name: ' + name + ', kind: ' + (LAW[kind] ? kind + ', ' + LAW[kind] + ': 1' : '"' + kind + '"') + '}';
    const from = bondFrom;
    bondFrom = null;
    cm.operation(function () {
      if (!addToSection('elements', item)) window.alert('elements: is written in a form the palette does not edit; add it by hand');
      else if (from) addToSection('bonds', '[' + from + ', ' + name + ']');
    });
    cm.focus();
  }
  ['Se', 'Sf', 'MSe', 'MSf', 'C', 'I', 'R', 'TF', 'MTF', 'GY', 'MGY', '0', '1'].forEach(function (k) {
    const b = el('button', { text: k, 'data-kind': k, title: 'add a ' + k + ' element' });
    b.addEventListener('click', function () { addElement(k); });
    palette.appendChild(b);
  });
  let bondFrom = null;  // the first element of a bond being drawn
  function nodeClicked(g, ev) {
    const e = ((state.check && state.check.elements) || []).filter(function (x) { return x.id === g.id; })[0];
    if (!ev.shiftKey) {
      if (e && e.line > 0) { cm.setCursor({ line: e.line - 1, ch: 0 }); cm.scrollIntoView(null, 80); cm.focus(); }
      return;
    }
    if (!e) return;  // a component of a mechanism: its bonds are the multibody section's
    if (!bondFrom) { bondFrom = e.name; g.classList.add('bond-from'); return; }
    const from = bondFrom;
    bondFrom = null;
    if (from !== e.name) addToSection('bonds', '[' + from + ', ' + e.name + ']');
    cm.focus();
  }

  // ---- check on every edit -------------------------------------------------
  let timer = null;
  cm.on('changes', function () {
    updateStatus();
    clearTimeout(timer);
    timer = setTimeout(check, 120);
  });
  function check() {
    const seq = ++state.seq;
    const t0 = performance.now();
    const text = cm.getValue();
    return api('POST', '/api/check', [['path', state.path]], text).then(function (r) {
      if (seq < state.shown) return;  // an answer to an older text than the one shown
      if (r.error) return;  // refused or no server: said in the status line
      state.shown = seq;
      state.check = r;
      ++state.checks;
      if (r.svg) showDrawing(r.svg); else drawing.classList.add('stale');
      showDiagnostics(r.diagnostics);
      const s = r.summary;
      summary.textContent = s ? r.model + ': ' + s.elements + ' elements, ' + s.bonds + ' bonds; ' + s.integral +
        ' storage elements in integral causality, ' + s.derivative + ' in derivative causality, ' + s.conflicts +
        ' causal conflicts' + (s.states >= 0 ? '; ' + s.states + ' states, ' + s.loops + ' algebraic loops' : '') : '';
      paths.textContent = '';
      (r.paths || []).forEach(function (p) {
        paths.appendChild(el('li', { text: 'zero-order causal path ' + p.number + ' (class ' + p['class'] + '): ' + p.description }));
      });
      const ms = performance.now() - t0;
      state.lastCheck = { seq: seq, ms: ms, server_ms: r.ms, ok: r.ok };
      timing.textContent = 'check and drawing ' + ms.toFixed(0) + ' ms (server ' + r.ms.toFixed(0) + ' ms)';
      updateStatus();
      buildSliders();
    });
  }

  // ---- files ---------------------------------------------------------------
  function updateStatus() {
    const modified = cm.getValue() !== state.saved;
    const errors = state.check ? (state.check.diagnostics || []).filter(function (d) { return d.severity === 'error'; }).length : 0;
    status.textContent = (state.path || '(no file)') + (modified ? ' \u2022 modified' : ' \u2022 saved') +
      (errors ? ' \u2022 ' + errors + (errors === 1 ? ' error' : ' errors') : '');
    status.className = errors ? 'bad' : 'muted';
    document.title = (modified ? '* ' : '') + (state.path || 'paynter studio') + ' \u2014 paynter studio';
  }
  function open(path) {
    return api('GET', '/api/file', [['path', path]]).then(function (r) {
      if (!r.ok) { showDiagnostics(r.diagnostics); return; }
      state.path = path;
      state.saved = r.text;
      state.params = {};
      sliders.textContent = '';
      fileSelect.value = path;
      cm.setValue(r.text);
      cm.clearHistory();
      return check();
    });
  }
  function save(force) {
    const text = cm.getValue();
    return api('POST', '/api/save', [['path', state.path]].concat(force ? [['force', '1']] : []), text).then(function (r) {
      if (r.needs_force) {
        const d = r.diagnostics[0] || {};
        if (window.confirm('The model does not load (line ' + d.line + ': ' + d.message + '), and the file it would ' +
            'replace does. Save it anyway?')) return save(true);
        return;
      }
      if (!r.ok) { showDiagnostics(r.diagnostics); return; }
      state.saved = text;
      updateStatus();
      if (!Array.prototype.some.call(fileSelect.options, function (o) { return o.value === state.path; }))
        fileSelect.appendChild(el('option', { value: state.path, text: state.path }));
      fileSelect.value = state.path;
    });
  }
  state.save = save;
  state.open = open;
  fileSelect.addEventListener('change', function () {
    if (cm.getValue() !== state.saved && !window.confirm('Leave ' + state.path + ' without saving?')) {
      fileSelect.value = state.path;
      return;
    }
    open(fileSelect.value);
  });
  newButton.addEventListener('click', function () {
    const name = window.prompt('The new model file, relative to the studio\'s directory:', 'model.yaml');
    if (!name) return;
    state.path = name;
    state.saved = '';
    cm.setValue('name: ' + name.replace(/^.*\//, '').replace(/\.ya?ml$/, '') + '\nparameters: {}\nelements:\n  - {name: j, kind: "0"}\nbonds: []\n');
  });
  saveButton.addEventListener('click', function () { save(false); });
  window.addEventListener('beforeunload', function (ev) {
    if (cm.getValue() !== state.saved) { ev.preventDefault(); ev.returnValue = ''; }
  });

  // ---- run and look ----------------------------------------------------------
  const colours = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
  let plot = null;
  function simulate() {
    const q = [['path', state.path]];
    Object.keys(opts).forEach(function (k) { const v = opts[k].input.value.trim(); if (v) q.push([k, v]); });
    Object.keys(state.params).forEach(function (n) { q.push(['param', n + '=' + state.params[n]]); });
    const t0 = performance.now();
    runStatus.textContent = 'running\u2026';
    runButton.disabled = true;
    return api('POST', '/api/simulate', q, cm.getValue()).then(function (r) {
      runButton.disabled = false;
      if (r.error) { runStatus.textContent = ''; return; }
      const ms = performance.now() - t0;
      state.run = r;
      ++state.runs;
      state.lastRun = { ms: ms, server_ms: r.ms, ok: r.ok, prepared: r.stats ? r.stats.prepared : null };
      if (!r.ok) {
        runStatus.textContent = 'the run failed';
        runStatus.className = 'bad';
        showDiagnostics((state.check ? state.check.diagnostics : []).concat(r.diagnostics));
        return;
      }
      runStatus.className = 'muted';
      const s = r.stats;
      runStatus.textContent = s.integrator + ', ' + s.steps + ' steps, ' + s.rows + ' rows' +
        (s.constraints !== 'auto' ? ', constraints ' + s.constraints : '') + ' \u2014 ' + ms.toFixed(0) + ' ms' +
        (s.prepared ? ' (model prepared in ' + (1000 * s.ready_seconds).toFixed(0) + ' ms)' : ' (prepared model reused)');
      drawPlot(r);
      buildSliders();
    });
  }
  runButton.addEventListener('click', simulate);
  state.simulate = simulate;
  function drawPlot(r) {
    const keep = {};
    if (plot) { plot.series.forEach(function (s, i) { if (i > 0) keep[s.label] = s.show; }); plot.destroy(); }
    const outs = [];
    r.columns.forEach(function (c, i) { if (i > 0 && c.indexOf('pose_') !== 0) outs.push(i); });
    const series = [{ label: r.columns[0] }];
    outs.forEach(function (c, k) {
      const name = r.columns[c];
      series.push({ label: name, stroke: colours[k % colours.length], width: 1.5, show: name in keep ? keep[name] : k < 6 });
    });
    plot = new uPlot({
      width: Math.max(400, plotBox.clientWidth || 900), height: 300, series: series, scales: { x: { time: false } }
    }, [r.data[0]].concat(outs.map(function (c) { return r.data[c]; })), plotBox);
    state.plot = plot;
  }
  // A slider for each parameter written as a number: 0 to twice its value
  // (or -1 to 1 for 0); on release the model runs again with it.
  function buildSliders() {
    const k = state.check;
    if (!k || !k.parameters || !state.run || !state.run.ok) return;
    const have = {};
    sliders.querySelectorAll('.slider').forEach(function (s) { have[s.dataset.name] = s; });
    const want = k.parameters.filter(function (p) { return p.literal; });
    if (want.length === Object.keys(have).length && want.every(function (p) { return have[p.name]; })) return;
    sliders.textContent = '';
    want.forEach(function (p) {
      const v0 = p.value;
      const lo = v0 > 0 ? 0 : v0 < 0 ? 2 * v0 : -1, hi = v0 > 0 ? 2 * v0 : v0 < 0 ? 0 : 1;
      const input = el('input', { type: 'range', min: String(lo), max: String(hi), step: String((hi - lo) / 200),
        value: String(p.name in state.params ? state.params[p.name] : v0), 'data-name': p.name });
      const shown = el('span', { class: 'value', text: input.value });
      const box = el('label', { class: 'slider', title: p.name + ' = ' + p.text + ' in the file' }, [p.name + ' ', input, shown]);
      box.dataset.name = p.name;
      input.addEventListener('input', function () { shown.textContent = Number(input.value).toPrecision(4); });
      input.addEventListener('change', function () {
        state.params[p.name] = Number(input.value);
        simulate();
      });
      sliders.appendChild(box);
    });
  }

  // ---- start -----------------------------------------------------------------
  api('GET', '/api/files').then(function (r) {
    if (!r.ok) { status.textContent = r.error || 'the server refused the page: open the address paynter studio printed'; return; }
    r.files.forEach(function (f) { fileSelect.appendChild(el('option', { value: f, text: f })); });
    const first = r.first || r.files[0];
    if (first) open(first);
  });
})();
