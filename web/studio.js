// The page of `paynter studio` (docs/studio.md): the model's YAML in an
// editor (CodeMirror 5), checked and drawn by the server on every edit, errors
// shown at their lines; runs plotted with uPlot, parameter sliders that run
// again on release; a mechanism's run also in the 3D view (web/view3d.js,
// shared with the report). Everything from the model or the server (names,
// messages, the drawing) is inserted as text, the drawing through web/svg.js's
// cleaner.
// Every request carries the token of the address the page was opened with.
(function () {
  'use strict';

  const token = new URLSearchParams(location.search).get('token') || '';
  const state = {
    path: '', saved: '', check: null, run: null, checks: 0, seq: 0, shown: 0, runs: 0, stops: 0,
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
  const panel = el('div', { id: 'panel' });
  const summary = el('div', { id: 'summary', class: 'muted' });
  const diagList = el('ul', { id: 'diagnostics' });
  const paths = el('ul', { id: 'paths' });
  // The equations of the text (state form, as `paynter equations --latex`
  // writes them), typeset with KaTeX (web/equations.js) while open.
  const equations = el('details', { id: 'equations' }, [el('summary', { text: 'Equations' })]);
  const eqBox = el('div', { class: 'eqbox' });
  equations.appendChild(eqBox);
  let eqShown = null;
  function showEquations() {
    const text = state.check && state.check.equations;
    if (!equations.open || text === eqShown) return;
    eqShown = text;
    eqBox.textContent = '';
    state.eqRows = text ? window.paynterEquations(eqBox, text) : [];
  }
  equations.addEventListener('toggle', showEquations);
  document.body.appendChild(el('main', null, [
    el('section', { id: 'left' }, [palette, editorBox]),
    el('section', { id: 'right' }, [drawing, panel, summary, diagList, paths, equations])]));

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
    'max-steps': field('max-steps', 'max steps', '', 'the step budget (default: the solvers\' own)'),
    constraints: choice('constraints', 'constraints',
      ['auto', 'lagrange-multipliers', 'minimal-coordinates', 'parasitic', 'zcp'], 'mechanisms: the constraint method'),
    form: choice('form', 'form', ['state', 'lagrange1', 'lagrange2', 'hamilton'], 'the formulation')
  };
  const runButton = el('button', { id: 'simulate', text: 'Simulate', title: 'simulate the model in the editor' });
  const runStatus = el('span', { id: 'run-status', class: 'muted' });
  // While a run goes on: how far it is (simulated time / end time), and Stop.
  const runProgress = el('progress', { id: 'run-progress', max: '1', value: '0', title: 'simulated time / end time' });
  const stopButton = el('button', { id: 'stop', text: 'Stop', title: 'stop the run (nothing of it is kept)' });
  const runBar = el('span', { id: 'run-bar', hidden: '' }, [runProgress, stopButton]);
  const overlayButton = el('button', { id: 'overlay', text: 'Overlay', title: 'keep this run in the plot (dashed) to compare the next ones with it' });
  const clearButton = el('button', { id: 'clear-overlay', text: 'Clear', title: 'remove the runs kept for comparison' });
  const csvButton = el('button', { id: 'export-csv', text: 'CSV', title: 'download the run\'s columns as CSV (as simulate -o writes them)' });
  const reportButton = el('button', { id: 'export-report', text: 'Report', title: 'download paynter report\'s page of the saved model, run with these options' });
  const fmuButton = el('button', { id: 'export-fmu', text: 'FMU', title: 'download an FMU (FMI 2.0) of the saved model, as paynter fmu makes it' });
  const sliders = el('div', { id: 'sliders' });
  const plotBox = el('div', { id: 'plot' });
  // A mechanism's run: its bodies and joints in 3D (made at its first run).
  const view3dBox = el('div', { id: 'view3d-box', hidden: '' });
  const runSec = el('section', { id: 'run' }, [
    el('div', { class: 'options' }, Object.keys(opts).map(function (k) { return opts[k].box; }).concat([runButton,
      runBar, overlayButton, clearButton, el('span', { class: 'muted', text: 'export' }), csvButton, reportButton, fmuButton,
      runStatus])),
    sliders, el('div', { id: 'results' }, [plotBox, view3dBox])]);
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
  // In one editor operation: each mark and widget would otherwise lay the
  // editor out again (B3's storage elements in derivative causality took
  // 140 ms marked one by one).
  function showDiagnostics(list) { cm.operation(function () { markDiagnostics(list); }); }
  function markDiagnostics(list) {
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
      const e = elementOf(g);
      if (bondFrom && e && (e.name === bondFrom || bondFrom.indexOf(e.name + '.') === 0)) g.classList.add('bond-from');
      if (e && selected && selected.type === 'element' && selected.name === e.name) g.classList.add('selected');
      g.addEventListener('click', function (ev) { if (!dragged) nodeClicked(g, ev); });
      g.addEventListener('mousedown', function (ev) { startBondDrag(svg, g, ev); });
    });
    svg.querySelectorAll('g.edge').forEach(function (g) {
      const b = bondOf(g);
      if (b && selected && selected.type === 'bond' && sameBond(selected, b)) g.classList.add('selected');
      g.addEventListener('click', function () { if (b) select({ type: 'bond', from: b.from, to: b.to, line: b.line }); });
    });
    window.paynterPanZoom(svg);  // web/svg.js: wheel, drag on the background, double click
    if (!panel.contains(document.activeElement)) showPanel();  // not under the user's typing
  }
  // What a node of the drawing is: an element, or a submodel's instance
  // drawn as a block ({name, component: true, use, line, joined}; a body,
  // joint or load of a mechanism is none: its bonds are the multibody
  // section's).
  function elementOf(g) {
    const k = state.check || {};
    const e = (k.elements || []).filter(function (x) { return x.id === g.id; })[0];
    if (e) return e;
    const c = (k.components || []).filter(function (x) { return x.id === g.id && x.kind === 'submodel'; })[0];
    return c ? { name: c.name, component: true, use: c.use, line: c.line, joined: c.joined || [] } : null;
  }
  // A bond's end at a node: an element by its name; a block by one of its
  // ports not joined yet (a required one first), from the component
  // library's list of its ports, or asked for.
  function endName(e) {
    if (!e.component) return e.name;
    const c = library[e.use];
    const free = c ? c.ports.filter(function (p) { return e.joined.indexOf(p.name) < 0; }) : [];
    const port = (free.filter(function (p) { return p.required; })[0] || free[0] || {}).name ||
      window.prompt('The port of ' + e.name + ' (' + e.use + ') the bond joins:', '');
    return port ? e.name + '.' + port : null;
  }
  state.endName = endName;
  function bondOf(g) {
    return ((state.check && state.check.bonds) || []).filter(function (x) { return x.id === g.id; })[0];
  }
  function sameBond(a, b) { return a.from === b.from && a.to === b.to && (!a.line || a.line === b.line); }
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
  // The component library: a list in the palette, by domain, each with its
  // ports; one chosen is added at the end of instances: (bonded by its first
  // port to the element chosen by a shift-click, if any).
  const moveMode = el('input', { type: 'checkbox', id: 'move-mode' });
  const keepButton = el('button', { id: 'keep-layout', text: 'keep layout',
    title: 'write every element\'s place in the drawing to layout: in the file, so that the drawing keeps it' });
  keepButton.addEventListener('click', function () { keepLayout(null, null); });
  const libSelect = el('select', { id: 'lib', title: 'add a component of the library (lib:) at the end of instances:' });
  libSelect.appendChild(el('option', { value: '', text: 'lib: component\u2026' }));
  palette.appendChild(libSelect);
  palette.appendChild(el('label', { title: 'dragging an element in the drawing moves it (its place kept in layout:); ' +
    'unticked, dragging from one element to another draws a bond (Alt-drag moves)' }, [moveMode, 'drag moves']));
  palette.appendChild(keepButton);
  const library = {};
  state.library = library;
  api('GET', '/api/library').then(function (r) {
    if (!r.ok) return;
    const groups = {};
    r.components.forEach(function (c) {
      library[c.use] = c;
      const domain = c.use.slice(4).split('/')[0];
      if (!groups[domain]) { groups[domain] = el('optgroup', { label: domain }); libSelect.appendChild(groups[domain]); }
      const ports = c.ports.map(function (p) { return p.name + (p.required ? '' : '?'); }).join(', ');
      groups[domain].appendChild(el('option', { value: c.use, text: c.use.slice(4).split('/')[1] + ' (' + ports + ')',
        title: c.about + '\nports: ' + ports + (c.parameters.length ? '\nparameters: ' +
          c.parameters.map(function (p) { return p.name + ' = ' + p.value; }).join(', ') : '') }));
    });
  });
  function addComponent(use) {
    const c = library[use];
    if (!c) return;
    const name = freeName(use.split('/').pop().replace(/[^A-Za-z0-9_]/g, '_'));
    const from = bondFrom;
    bondFrom = null;
    const port = c.ports.filter(function (p) { return p.required; })[0] || c.ports[0];
    cm.operation(function () {
      if (!addToSection('instances', '{name: ' + name + ', use: "' + use + '"}')) {
        window.alert('instances: is written in a form the palette does not edit; add it by hand');
      } else if (from && port) addToSection('bonds', '[' + from + ', ' + name + '.' + port.name + ']');
    });
    cm.focus();
  }
  libSelect.addEventListener('change', function () {
    const use = libSelect.value;
    libSelect.value = '';
    addComponent(use);
  });
  state.addComponent = addComponent;
  let bondFrom = null;  // the first element of a bond being drawn
  function nodeClicked(g, ev) {
    const e = elementOf(g);
    if (!ev.shiftKey) {
      if (e) select({ type: 'element', name: e.name });
      if (e && e.line > 0) { cm.setCursor({ line: e.line - 1, ch: 0 }); cm.scrollIntoView(null, 80); }
      return;
    }
    if (!e) return;  // a component of a mechanism: its bonds are the multibody section's
    if (!bondFrom) {
      const end = endName(e);
      if (end) { bondFrom = end; g.classList.add('bond-from'); }
      return;
    }
    const from = bondFrom;
    bondFrom = null;
    const to = from.split('.')[0] !== e.name ? endName(e) : null;
    if (to) addToSection('bonds', '[' + from + ', ' + to + ']');
    cm.focus();
  }

  // A bond drawn by dragging from one element to another (power from the
  // first to the second): a rubber band follows the pointer; released over
  // another element, the bond is added at the end of bonds:.
  let dragged = false;
  function startBondDrag(svg, g, ev) {
    if (ev.button !== 0 || ev.shiftKey) return;
    if (moveMode.checked || ev.altKey) { startMove(svg, g, ev); return; }
    const from = elementOf(g);
    if (!from) return;
    ev.preventDefault();
    ev.stopPropagation();
    dragged = false;
    const x0 = ev.clientX, y0 = ev.clientY;
    const root = svg.querySelector('g') || svg;
    const rootToSvg = function (x, y) {
      const pt = svg.createSVGPoint();
      pt.x = x; pt.y = y;
      return pt.matrixTransform(root.getScreenCTM().inverse());
    };
    let band = null;
    function move(e) {
      if (!dragged && Math.abs(e.clientX - x0) + Math.abs(e.clientY - y0) < 5) return;
      dragged = true;
      if (!band) {
        const a = rootToSvg(x0, y0);
        band = document.createElementNS('http://www.w3.org/2000/svg', 'line');
        band.setAttribute('class', 'rubber-band');
        band.setAttribute('x1', a.x); band.setAttribute('y1', a.y);
        root.appendChild(band);
      }
      const b = rootToSvg(e.clientX, e.clientY);
      band.setAttribute('x2', b.x); band.setAttribute('y2', b.y);
      drawing.querySelectorAll('g.node.drop').forEach(function (n) { n.classList.remove('drop'); });
      const over = nodeAt(e.clientX, e.clientY);
      if (over && over !== g) over.classList.add('drop');
    }
    function up(e) {
      window.removeEventListener('mousemove', move);
      window.removeEventListener('mouseup', up);
      if (band) band.remove();
      drawing.querySelectorAll('g.node.drop').forEach(function (n) { n.classList.remove('drop'); });
      if (!dragged) return;
      setTimeout(function () { dragged = false; });  // the click that ends the drag is not a click
      const over = nodeAt(e.clientX, e.clientY);
      const to = over && elementOf(over);
      if (!to || to.name === from.name) return;
      const a = endName(from), b = a && endName(to);
      if (a && b) { addToSection('bonds', '[' + a + ', ' + b + ']'); cm.focus(); }
    }
    window.addEventListener('mousemove', move);
    window.addEventListener('mouseup', up);
  }
  // A node moved by dragging (with "move" ticked, or Alt): the drawing's
  // positions written to layout: (every node's, so that none moves when the
  // graph changes), the moved one where it was dropped.
  function startMove(svg, g, ev) {
    const name = g.querySelector('title') ? g.querySelector('title').textContent : '';
    const at = state.check && state.check.layout && state.check.layout.positions[name];
    if (!at) return;
    ev.preventDefault();
    ev.stopPropagation();
    dragged = false;
    const root = svg.querySelector('g') || svg;
    const local = function (x, y) {
      const pt = svg.createSVGPoint();
      pt.x = x; pt.y = y;
      return pt.matrixTransform(root.getScreenCTM().inverse());
    };
    const p0 = local(ev.clientX, ev.clientY);
    let dx = 0, dy = 0;
    function move(e) {
      const p = local(e.clientX, e.clientY);
      dx = p.x - p0.x; dy = p.y - p0.y;
      if (!dragged && Math.abs(dx) + Math.abs(dy) < 3) return;
      dragged = true;
      g.setAttribute('transform', 'translate(' + dx + ' ' + dy + ')');
    }
    function up() {
      window.removeEventListener('mousemove', move);
      window.removeEventListener('mouseup', up);
      if (!dragged) return;
      setTimeout(function () { dragged = false; });
      keepLayout(name, [at[0] + dx, at[1] - dy]);  // SVG's y grows downwards, the layout's upwards
    }
    window.addEventListener('mousemove', move);
    window.addEventListener('mouseup', up);
  }
  function keepLayout(moved, to) {
    const pos = (state.check && state.check.layout && state.check.layout.positions) || {};
    const q = [['op', 'layout']];
    Object.keys(pos).forEach(function (n) {
      const p = n === moved ? to : pos[n];
      q.push(['at', n + '=' + Math.round(p[0]) + ',' + Math.round(p[1])]);
    });
    return edit(q);
  }
  state.keepLayout = keepLayout;
  function nodeAt(x, y) {
    const hit = document.elementFromPoint(x, y);
    const g = hit && hit.closest ? hit.closest('#drawing g.node') : null;
    return g;
  }

  // Edits made by the server on the text (op: flip, element, parameter;
  // src/studio/text_edit.h): the answer is the whole new text, and only the
  // part that differs is replaced in the editor, so Ctrl-Z takes it back and
  // the rest stays as it is.
  function edit(query) {
    const text = cm.getValue();
    return api('POST', '/api/edit', [['path', state.path]].concat(query), text).then(function (r) {
      if (!r.ok) {
        const d = (r.diagnostics || [])[0] || {};
        status.textContent = 'not changed: ' + (d.message || r.error || 'the edit failed') + (d.hint ? ' (' + d.hint + ')' : '');
        status.className = 'bad';
        return false;
      }
      if (cm.getValue() !== text) return false;  // typed meanwhile: the edit is not made over it
      replaceText(r.text);
      return true;
    });
  }
  function replaceText(next) {
    const text = cm.getValue();
    if (next === text) return;
    let a = 0;
    while (a < text.length && a < next.length && text[a] === next[a]) ++a;
    let z = 0;
    while (z < text.length - a && z < next.length - a && text[text.length - 1 - z] === next[next.length - 1 - z]) ++z;
    cm.replaceRange(next.slice(a, next.length - z), cm.posFromIndex(a), cm.posFromIndex(text.length - z), '+studio');
  }
  state.edit = edit;

  // ---- the panel of the element or bond chosen in the drawing ---------------
  let selected = null;  // {type: 'element', name} or {type: 'bond', from, to, line}
  function select(what) {
    selected = what;
    drawing.querySelectorAll('g.selected').forEach(function (n) { n.classList.remove('selected'); });
    drawing.querySelectorAll('g.node, g.edge').forEach(function (g) {
      const e = g.classList.contains('node') ? elementOf(g) : null, b = e ? null : bondOf(g);
      if ((e && what.type === 'element' && e.name === what.name) || (b && what.type === 'bond' && sameBond(what, b)))
        g.classList.add('selected');
    });
    showPanel();
  }
  state.select = select;
  function panelField(label, value, title, apply) {
    const input = el('input', { value: value, size: '14', title: title, 'data-field': label });
    input.addEventListener('change', function () { apply(input.value.trim()); });
    input.addEventListener('keydown', function (ev) { if (ev.key === 'Enter') input.blur(); });
    return el('label', null, [label + ' ', input]);
  }
  function showPanel() {
    panel.textContent = '';
    const k = state.check;
    if (!selected || !k || !k.elements) return;
    if (selected.type === 'bond') {
      const b = (k.bonds || []).filter(function (x) { return sameBond(selected, x); })[0];
      if (!b) return;
      panel.appendChild(el('span', { class: 'what', text: 'bond ' + b.name + ': ' + b.from + ' \u2192 ' + b.to }));
      const flip = el('button', { id: 'flip-bond', text: 'Flip direction', title: 'power from ' + b.to + ' to ' + b.from +
        ' (the bond written the other way round in bonds:)' });
      flip.disabled = !b.here;
      flip.addEventListener('click', function () {
        edit([['op', 'flip'], ['from', b.from], ['to', b.to], ['line', String(b.line)]]).then(function (done) {
          if (done) selected = { type: 'bond', from: b.to, to: b.from, line: b.line };
        });
      });
      panel.appendChild(flip);
      if (!b.here) panel.appendChild(el('span', { class: 'muted', text: ' written in a submodel or made by the multibody library' }));
      return;
    }
    const c = (k.components || []).filter(function (x) { return x.name === selected.name && x.kind === 'submodel'; })[0];
    if (c) {
      panel.appendChild(el('span', { class: 'what', text: 'submodel ' + c.name + ': ' + c.use }));
      const ports = library[c.use] ? library[c.use].ports.map(function (p) { return p.name; }) : c.joined;
      panel.appendChild(el('span', { class: 'muted', text: ' ports ' + ports.map(function (p) {
        return p + (c.joined.indexOf(p) >= 0 ? '' : ' (free)'); }).join(', ') + ' \u2014 its parameters are set in ' +
        'its line under instances:' }));
      return;
    }
    const e = k.elements.filter(function (x) { return x.name === selected.name; })[0];
    if (!e) return;
    panel.appendChild(el('span', { class: 'what', text: e.kind + ' ' + e.name }));
    if (!e.here) { panel.appendChild(el('span', { class: 'muted', text: ' written in a submodel or made by the multibody library' })); return; }
    const setField = function (key) {
      return function (v) { edit([['op', 'element'], ['element', e.name], ['key', key], ['value', v]]); };
    };
    if (e.law_key) panel.appendChild(panelField(e.law_key, e.law, 'the element\'s law: a number or an expression', setField(e.law_key)));
    if (e.kind === 'C' || e.kind === 'I')
      panel.appendChild(panelField('initial', e.initial, 'the initial ' + (e.kind === 'C' ? 'displacement' : 'momentum') +
        ' (empty: 0)', setField('initial')));
    // The parameters its law and initial value name, each set where it is declared.
    const used = {};
    (e.law + ' ' + e.initial).replace(/[A-Za-z_][\w]*/g, function (n) { used[n] = 1; return n; });
    (k.parameters || []).filter(function (p) { return used[p.name]; }).forEach(function (p) {
      panel.appendChild(panelField(p.name, p.text, 'parameter ' + p.name + ' (parameters:, line ' + p.line + ')',
        function (v) { edit([['op', 'parameter'], ['name', p.name], ['value', v]]); }));
    });
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
      const t1 = performance.now();
      if (r.svg) showDrawing(r.svg); else drawing.classList.add('stale');
      const t2 = performance.now();
      showDiagnostics(r.diagnostics);
      const t2b = performance.now();
      const s = r.summary;
      summary.textContent = s && r.sketch ? r.model + ': ' + s.elements + ' elements, ' + s.bonds + ' bonds, drawn as ' +
        'written: causality and equations once it loads' : s ? r.model + ': ' + s.elements + ' elements, ' + s.bonds + ' bonds; ' + s.integral +
        ' storage elements in integral causality, ' + s.derivative + ' in derivative causality, ' + s.conflicts +
        ' causal conflicts' + (s.states >= 0 ? '; ' + s.states + ' states, ' + s.loops + ' algebraic loops' : '') : '';
      if (r.svg) showEquations();
      paths.textContent = '';
      (r.paths || []).forEach(function (p) {
        paths.appendChild(el('li', { text: 'zero-order causal path ' + p.number + ' (class ' + p['class'] + '): ' + p.description }));
      });
      updateStatus();
      buildSliders();
      // The round trip: the answer (request, server, JSON), the drawing put in
      // the page, the rest; and, once the browser has laid it out and painted
      // it (the frame after), the whole of it as seen.
      const t3 = performance.now();
      const last = { seq: seq, ms: t3 - t0, server_ms: r.ms, ok: r.ok,
        parts: { answer: t1 - t0, drawing: t2 - t1, diagnostics: t2b - t2, rest: t3 - t2b }, painted_ms: null };
      state.lastCheck = last;
      requestAnimationFrame(function () {
        setTimeout(function () {
          last.painted_ms = performance.now() - t0;
          timing.textContent = 'check and drawing ' + last.painted_ms.toFixed(0) + ' ms (server ' + r.ms.toFixed(0) + ' ms)';
        });
      });
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
      state.overlays = [];
      state.run = null;
      show3d(null);
      drawPlot(null);
      runStatus.textContent = '';
      sliders.textContent = '';
      delete sliders.dataset.signature;
      fileSelect.value = path;
      cm.setValue(r.text);
      clearTimeout(timer);  // the check below is the text's: not a second one after the edit's pause
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
  function runQuery() {
    const q = [['path', state.path]];
    Object.keys(opts).forEach(function (k) { const v = opts[k].input.value.trim(); if (v) q.push([k, v]); });
    Object.keys(state.params).forEach(function (n) { q.push(['param', n + '=' + state.params[n]]); });
    return q;
  }
  // A run: while it goes on, the server is asked how far it is (every
  // 150 ms, a request at a time) and the bar shows it; Stop asks the server
  // to stop it. A stopped run says so and changes nothing: the last run's
  // plot, CSV and overlays stay as they were.
  let runId = 0;
  function simulate() {
    const q = runQuery();
    const id = String(++runId) + '-' + Math.random().toString(36).slice(2, 8);
    q.push(['run', id]);
    const t0 = performance.now();
    runStatus.textContent = 'running\u2026';
    runStatus.className = 'muted';
    runButton.disabled = true;
    runProgress.value = 0;
    runProgress.removeAttribute('value');  // indeterminate while the model is prepared
    runBar.hidden = false;
    stopButton.disabled = false;
    stopButton.onclick = function () {
      stopButton.disabled = true;
      runStatus.textContent = 'stopping\u2026';
      api('POST', '/api/stop', [['run', id]], '').then(function (r) {
        if (running && !r.stopping) stopButton.disabled = false;  // not started yet (waiting for a check): ask again
      });
    };
    let running = true;
    const poll = function () {
      if (!running) return;
      api('GET', '/api/progress').then(function (p) {
        if (!running) return;
        if (p.ok && p.running && p.id === id) {
          state.progress = p;
          if (p.phase === 'integrating') {
            runProgress.value = p.fraction;
            if (!stopButton.disabled) runStatus.textContent = 't = ' + Number(p.t).toPrecision(4) + ' of ' + p.t_end;
          } else if (!stopButton.disabled) runStatus.textContent = 'preparing the model\u2026';
        }
        setTimeout(poll, 150);
      });
    };
    setTimeout(poll, 150);
    return api('POST', '/api/simulate', q, cm.getValue()).then(function (r) {
      running = false;
      runBar.hidden = true;
      runButton.disabled = false;
      if (r.error) { runStatus.textContent = ''; return; }
      const ms = performance.now() - t0;
      if (r.stopped) {
        ++state.stops;
        state.lastStop = r;
        runStatus.textContent = 'stopped at t = ' + Number(r.t).toPrecision(4) + ': nothing of that run is kept';
        runStatus.className = 'muted';
        return;
      }
      state.run = r;
      ++state.runs;
      state.lastRun = { ms: ms, server_ms: r.ms, ok: r.ok, prepared: r.stats ? r.stats.prepared : null, painted_ms: null };
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
      show3d(r);
      drawPlot(r);
      buildSliders();
      // As for a check: the whole of it once the plot is painted.
      const last = state.lastRun;
      requestAnimationFrame(function () { setTimeout(function () { last.painted_ms = performance.now() - t0; }); });
    });
  }
  runButton.addEventListener('click', simulate);
  state.simulate = simulate;
  // The 3D view of a mechanism's run (the poses are its columns pose_*, which
  // the plot leaves out); a slider's run is shown in the view there is, the
  // camera, the trace and the time shown kept. Hidden for a bond graph.
  let view3d = null;
  function show3d(r) {
    const mechanism = r && r.ok && r.mechanism && r.columns.some(function (c) { return c.indexOf('pose_') === 0; });
    if (!mechanism) {
      if (view3d) view3d.pause();
      view3dBox.hidden = true;
    } else if (!view3d) {
      view3dBox.hidden = false;
      view3d = window.paynterView3d(view3dBox, r.mechanism, r.columns, r.data, { width: 480, height: 320 });
    } else {
      view3dBox.hidden = false;
      view3d.update(r.mechanism, r.columns, r.data);
    }
    state.view3d = mechanism ? view3d : null;
    // The plot takes the width the view leaves.
    if (plot) plot.setSize({ width: plotWidth(), height: 300 });
  }
  function plotWidth() { return Math.max(400, plotBox.clientWidth || 900); }
  // The plot of a run, with the runs kept for comparison (Overlay) drawn
  // dashed in the same colours, on the union of their times.
  state.overlays = [];
  function drawPlot(r) {
    const keep = {};
    if (plot) plot.series.forEach(function (s, i) { if (i > 0) keep[s.label] = s.show; });
    if (!r) { if (plot) plot.destroy(); plot = null; return; }
    const outs = [];
    r.columns.forEach(function (c, i) { if (i > 0 && c.indexOf('pose_') !== 0) outs.push(i); });
    const series = [{ label: r.columns[0] }];
    const tables = [[r.data[0]].concat(outs.map(function (c) { return r.data[c]; }))];
    outs.forEach(function (c, k) {
      const name = r.columns[c];
      series.push({ label: name, stroke: colours[k % colours.length], width: 1.5, show: name in keep ? keep[name] : k < 6 });
    });
    state.overlays.forEach(function (o) {
      const cols = [];
      outs.forEach(function (c, k) {
        const at = o.columns.indexOf(r.columns[c]);
        if (at < 0) return;
        const label = r.columns[c] + ' (' + o.label + ')';
        cols.push(o.data[at]);
        series.push({ label: label, stroke: colours[k % colours.length], width: 1, dash: [6, 4], spanGaps: true,
          show: label in keep ? keep[label] : series[k + 1].show });
      });
      tables.push([o.data[0]].concat(cols));
    });
    const data = tables.length > 1 ? uPlot.join(tables) : tables[0];
    if (tables.length > 1) series.forEach(function (s, i) { if (i > 0) s.spanGaps = true; });
    // The same series (a slider's run): new data in the plot there is.
    if (plot && plot.series.length === series.length &&
        plot.series.every(function (s, i) { return s.label === series[i].label; })) {
      plot.setData(data);
      return;
    }
    if (plot) { plot.destroy(); plot = null; }
    plot = new uPlot({
      width: plotWidth(), height: 300, series: series, scales: { x: { time: false } }
    }, data, plotBox);
    state.plot = plot;
  }
  overlayButton.addEventListener('click', function () {
    if (!state.run || !state.run.ok) return;
    const names = Object.keys(state.params).map(function (n) { return n + ' = ' + Number(state.params[n]).toPrecision(3); });
    state.overlays.push({ label: 'run ' + state.runs + (names.length ? ': ' + names.join(', ') : ''),
      columns: state.run.columns, data: state.run.data });
    drawPlot(state.run);
  });
  clearButton.addEventListener('click', function () { state.overlays = []; drawPlot(state.run && state.run.ok ? state.run : null); });

  // ---- export -----------------------------------------------------------------
  function download(name, blob) {
    const a = el('a', { href: URL.createObjectURL(blob), download: name });
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }
  // The run's columns as simulate -o writes them: a header line, then a row a time.
  function runCsv(r) {
    const lines = [r.columns.join(',')];
    for (let i = 0; i < r.data[0].length; ++i)
      lines.push(r.data.map(function (col) { return String(col[i]); }).join(','));
    return lines.join('\n') + '\n';
  }
  state.runCsv = runCsv;
  const stem = function () { return state.path.replace(/^.*\//, '').replace(/\.ya?ml$/, ''); };
  csvButton.addEventListener('click', function () {
    if (!state.run || !state.run.ok) { runStatus.textContent = 'simulate first: the CSV is the last run\'s'; return; }
    download(stem() + '.csv', new Blob([runCsv(state.run)], { type: 'text/csv' }));
  });
  // The report and the FMU are made from the file as saved (its name and
  // directory are the FMU's and the report's): the page saves first.
  function exportFile(kind) {
    const go = function () {
      runStatus.textContent = 'making the ' + kind + '\u2026';
      runStatus.className = 'muted';
      return api('POST', '/api/export', runQuery().concat([['kind', kind]]), '').then(function (r) {
        state.lastExport = r;
        if (!r.ok) {
          const d = (r.diagnostics || [])[0] || {};
          runStatus.textContent = kind + ': ' + (d.message || r.error || 'failed');
          runStatus.className = 'bad';
          return r;
        }
        runStatus.textContent = kind + ' ' + r.name + ' made';
        if (r.base64) {
          const bin = atob(r.base64), bytes = new Uint8Array(bin.length);
          for (let i = 0; i < bin.length; ++i) bytes[i] = bin.charCodeAt(i);
          download(r.name, new Blob([bytes], { type: r.type }));
        } else download(r.name, new Blob([r.text], { type: r.type }));
        return r;
      });
    };
    if (cm.getValue() === state.saved) return go();
    if (!window.confirm('The ' + kind + ' is made from the file: save ' + state.path + ' first?')) return Promise.resolve(null);
    return save(false).then(function () { return cm.getValue() === state.saved ? go() : null; });
  }
  state.exportFile = exportFile;
  reportButton.addEventListener('click', function () { exportFile('report'); });
  fmuButton.addEventListener('click', function () { exportFile('fmu'); });
  // A slider for each parameter written as a number: 0 to twice its value
  // (or -1 to 1 for 0); on release the model runs again with it.
  function buildSliders() {
    const k = state.check;
    if (!k || !k.parameters || !state.run || !state.run.ok) return;
    const want = k.parameters.filter(function (p) { return p.literal; });
    // Made again when a parameter or its value in the text changed (the panel, typing).
    const signature = want.map(function (p) { return p.name + '=' + p.value; }).join(' ');
    if (sliders.dataset.signature === signature) return;
    sliders.dataset.signature = signature;
    // A value changed in the text replaces the slider's.
    const before = {};
    sliders.querySelectorAll('.slider').forEach(function (b) { before[b.dataset.name] = Number(b.dataset.value); });
    want.forEach(function (p) { if (p.name in before && before[p.name] !== p.value) delete state.params[p.name]; });
    sliders.textContent = '';
    want.forEach(function (p) {
      const v0 = p.value;
      const lo = v0 > 0 ? 0 : v0 < 0 ? 2 * v0 : -1, hi = v0 > 0 ? 2 * v0 : v0 < 0 ? 0 : 1;
      const input = el('input', { type: 'range', min: String(lo), max: String(hi), step: String((hi - lo) / 200),
        value: String(p.name in state.params ? state.params[p.name] : v0), 'data-name': p.name });
      const shown = el('span', { class: 'value', text: input.value });
      const box = el('label', { class: 'slider', title: p.name + ' = ' + p.text + ' in the file' }, [p.name + ' ', input, shown]);
      box.dataset.name = p.name;
      box.dataset.value = String(p.value);
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
