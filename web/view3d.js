// The 3D view of a mechanism, shared by paynter's pages (report.js,
// studio.js): the bodies as boxes with their inertia-equivalent dimensions at
// their poses, the joints as dots linked to their bodies' centres, the world
// frame; play, pause, speed, a time slider, the trace of a point; drag
// rotates, the wheel zooms. The poses are a run's columns pose_* (the outputs
// RunOptions::poses adds); the bodies' and joints' names come as data and are
// drawn with fillText or inserted with textContent, never as HTML.
//
//   const v = window.paynterView3d(parent, mechanism, columns, data[, {width, height}]);
//
// builds the canvas (720 x 520 unless given) and its controls in `parent`; `mechanism` is {bodies:
// [{name}], joints: [{name, body1, body2}]}, `columns` the run's column names
// (time first) and `data` its values, column by column. v.update(mechanism,
// columns, data) shows another run in the same view (the camera, the trace and
// the time shown are kept); v.setFrame(k), v.frame(), v.frames, v.play(),
// v.pause(), v.canvas, v.time() for the pages and their tests.
(function () {
  'use strict';

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

  const CUBE = [[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1], [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]];
  const FACES = [[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [2, 3, 7, 6], [1, 2, 6, 5], [0, 4, 7, 3]];
  const COLOURS = ['#4f81bd', '#c0504d', '#9bbb59', '#8064a2', '#4bacc6', '#f79646'];

  // The bodies and joints with their pose columns, the extent of the motion
  // and each body's box.
  function scene(mechanism, columns, data) {
    function column(name) { const i = columns.indexOf(name); return i < 0 ? null : data[i]; }
    const t = data[0];
    const n = t.length;
    const bodies = [];
    (mechanism.bodies || []).forEach(function (b) {
      const g = function (s) { return column('pose_' + b.name + '_' + s); };
      const x = g('x'), y = g('y'), z = g('z');
      if (!x || !y || !z) return;
      const R = [];
      for (let i = 1; i <= 3; ++i) for (let j = 1; j <= 3; ++j) R.push(g('R' + i + j));
      const m = g('mass') ? g('mass')[0] : 1;
      const I = [g('I1'), g('I2'), g('I3')].map(function (c) { return c ? c[0] : null; });
      bodies.push({ name: b.name, x: x, y: y, z: z, R: R, m: m, I: I });
    });
    const joints = [];
    (mechanism.joints || []).forEach(function (j) {
      const x = column('pose_' + j.name + '_x'), y = column('pose_' + j.name + '_y'), z = column('pose_' + j.name + '_z');
      if (x && y && z) joints.push({ name: j.name, body1: j.body1, body2: j.body2, x: x, y: y, z: z });
    });
    // The extent of the motion, for the camera and the sizes.
    const lo = [0, 0, 0], hi = [0, 0, 0];
    function grow(p) { for (let k = 0; k < 3; ++k) { lo[k] = Math.min(lo[k], p[k]); hi[k] = Math.max(hi[k], p[k]); } }
    bodies.forEach(function (b) { for (let i = 0; i < n; ++i) grow([b.x[i], b.y[i], b.z[i]]); });
    joints.forEach(function (j) { for (let i = 0; i < n; ++i) grow([j.x[i], j.y[i], j.z[i]]); });
    let span = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-3);
    const centre = [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2];
    // Box dimensions: Ixx = m (b^2 + c^2) / 12 ... solved for a, b, c.
    bodies.forEach(function (b) {
      let d = [span * 0.08, span * 0.08, span * 0.08];
      if (b.I[0] !== null && b.I[1] !== null && b.I[2] !== null && b.m > 0) {
        d = [0, 1, 2].map(function (k) {
          const s = 6 * (b.I[(k + 1) % 3] + b.I[(k + 2) % 3] - b.I[k]) / b.m;
          return Math.sqrt(Math.max(s, 0));
        });
      }
      const big = Math.max(d[0], d[1], d[2], 1e-9);
      b.dims = d.map(function (v) { return Math.max(v, big * 0.05, span * 0.01); });
    });
    // The view holds the bodies too (a body may be larger than its motion).
    bodies.forEach(function (b) { span = Math.max(span, 1.2 * Math.max(b.dims[0], b.dims[1], b.dims[2])); });
    return { t: t, n: n, bodies: bodies, joints: joints, span: span, centre: centre };
  }

  window.paynterView3d = function (parent, mechanism, columns, data, size) {
    let s = scene(mechanism, columns, data);

    const row = el('div', { class: 'view3d-row' });
    const canvas = el('canvas', { id: 'view3d', width: String((size && size.width) || 720),
      height: String((size && size.height) || 520) });
    row.appendChild(canvas);
    const controls = el('div', { class: 'view3d-controls' });
    const play = el('button', { id: 'play3d', text: 'Play' });
    const speed = el('select', { id: 'speed3d' });
    ['0.1', '0.25', '0.5', '1', '2', '4'].forEach(function (v) {
      const o = el('option', { value: v, text: v + '\u00d7' });
      if (v === '1') o.selected = true;
      speed.appendChild(o);
    });
    const slider = el('input', { id: 'time3d', type: 'range', min: '0', max: String(s.n - 1), value: '0', step: '1' });
    const label = el('span', { id: 'timelabel3d' });
    const trace = el('select', { id: 'trace3d' });
    function traceOptions() {
      const chosen = trace.value;
      trace.textContent = '';
      trace.appendChild(el('option', { value: '', text: 'no trace' }));
      s.bodies.forEach(function (b) { trace.appendChild(el('option', { value: 'b:' + b.name, text: 'centre of ' + b.name })); });
      s.joints.forEach(function (j) { trace.appendChild(el('option', { value: 'j:' + j.name, text: 'joint ' + j.name })); });
      trace.value = chosen;
      if (trace.value !== chosen) trace.value = '';
    }
    traceOptions();
    controls.appendChild(el('div', null, [play, ' speed ', speed]));
    controls.appendChild(el('div', null, [slider]));
    controls.appendChild(el('div', null, ['t = ', label]));
    controls.appendChild(el('div', null, ['trace: ', trace]));
    row.appendChild(controls);
    parent.appendChild(row);

    const ctx = canvas.getContext('2d');
    let az = -0.9, elev = 0.45, zoom = 1, frame = 0, playing = false, simTime = s.t[0], last = null;
    // World (z up) to the camera: orbit by azimuth and elevation, orthographic.
    function project(p) {
      const x = p[0] - s.centre[0], y = p[1] - s.centre[1], z = p[2] - s.centre[2];
      const ca = Math.cos(az), sa = Math.sin(az), ce = Math.cos(elev), se = Math.sin(elev);
      const xr = ca * x - sa * y, yr = sa * x + ca * y;
      const depth = ce * yr + se * z;
      const up = -se * yr + ce * z;
      const k = zoom * Math.min(canvas.width, canvas.height) / (1.6 * s.span);
      return [canvas.width / 2 + xr * k, canvas.height / 2 - up * k, depth];
    }
    function draw() {
      const i = frame;
      const bodies = s.bodies, joints = s.joints, span = s.span;
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      // World frame.
      const o = project([0, 0, 0]);
      [[1, 0, 0, '#d62728'], [0, 1, 0, '#2ca02c'], [0, 0, 1, '#1f5fd6']].forEach(function (a) {
        const e = project([a[0] * span * 0.3, a[1] * span * 0.3, a[2] * span * 0.3]);
        ctx.strokeStyle = a[3];
        ctx.lineWidth = 2;
        ctx.beginPath(); ctx.moveTo(o[0], o[1]); ctx.lineTo(e[0], e[1]); ctx.stroke();
      });
      // Trace of the chosen point up to now.
      if (trace.value) {
        const name = trace.value.slice(2);
        const src = trace.value[0] === 'b' ? bodies.find(function (b) { return b.name === name; })
          : joints.find(function (j) { return j.name === name; });
        if (src) {
          ctx.strokeStyle = '#ff7f0e';
          ctx.lineWidth = 1.5;
          ctx.beginPath();
          for (let k = 0; k <= i; ++k) {
            const p = project([src.x[k], src.y[k], src.z[k]]);
            if (k === 0) ctx.moveTo(p[0], p[1]); else ctx.lineTo(p[0], p[1]);
          }
          ctx.stroke();
        }
      }
      // Faces of every body, far ones first, shaded by their normal.
      const faces = [];
      bodies.forEach(function (b, bi) {
        const R = b.R.map(function (c) { return c[i]; });
        const world = CUBE.map(function (v) {
          const l = [v[0] * b.dims[0] / 2, v[1] * b.dims[1] / 2, v[2] * b.dims[2] / 2];
          return [b.x[i] + R[0] * l[0] + R[1] * l[1] + R[2] * l[2], b.y[i] + R[3] * l[0] + R[4] * l[1] + R[5] * l[2],
            b.z[i] + R[6] * l[0] + R[7] * l[1] + R[8] * l[2]];
        });
        const pts = world.map(project);
        FACES.forEach(function (f) {
          const a = pts[f[0]], bq = pts[f[1]], c = pts[f[2]];
          const nz = (bq[0] - a[0]) * (c[1] - a[1]) - (bq[1] - a[1]) * (c[0] - a[0]);
          const depth = f.reduce(function (sum, k) { return sum + pts[k][2]; }, 0) / 4;
          faces.push({ pts: f.map(function (k) { return pts[k]; }), depth: depth, shade: nz, colour: COLOURS[bi % COLOURS.length] });
        });
      });
      faces.sort(function (a, b) { return b.depth - a.depth; });
      faces.forEach(function (f) {
        if (f.shade < 0) return;  // facing away (screen y points down)
        ctx.beginPath();
        f.pts.forEach(function (p, k) { if (k === 0) ctx.moveTo(p[0], p[1]); else ctx.lineTo(p[0], p[1]); });
        ctx.closePath();
        ctx.fillStyle = f.colour;
        ctx.globalAlpha = 0.85;
        ctx.fill();
        ctx.globalAlpha = 1;
        ctx.strokeStyle = '#222';
        ctx.lineWidth = 0.8;
        ctx.stroke();
      });
      // Joints: a link from each body's centre to the joint point, and a dot.
      joints.forEach(function (j) {
        const p = project([j.x[i], j.y[i], j.z[i]]);
        ctx.strokeStyle = '#555';
        ctx.lineWidth = 2;
        [j.body1, j.body2].forEach(function (bn) {
          const b = bodies.find(function (x) { return x.name === bn; });
          if (!b) return;
          const q = project([b.x[i], b.y[i], b.z[i]]);
          ctx.beginPath(); ctx.moveTo(q[0], q[1]); ctx.lineTo(p[0], p[1]); ctx.stroke();
        });
        ctx.fillStyle = '#111';
        ctx.beginPath(); ctx.arc(p[0], p[1], 5, 0, 2 * Math.PI); ctx.fill();
        ctx.fillStyle = '#111';
        ctx.font = '12px sans-serif';
        ctx.fillText(j.name, p[0] + 7, p[1] - 7);
      });
      bodies.forEach(function (b) {
        const p = project([b.x[i], b.y[i], b.z[i]]);
        ctx.fillStyle = '#000';
        ctx.font = '12px sans-serif';
        ctx.fillText(b.name, p[0] + 6, p[1] + 14);
      });
      slider.value = String(i);
      label.textContent = s.t[i].toPrecision(4);
    }
    function setFrame(k) { frame = Math.max(0, Math.min(s.n - 1, k)); simTime = s.t[frame]; draw(); }
    function tick(now) {
      if (!playing) { last = null; return; }
      if (last !== null) {
        const t = s.t, n = s.n;
        // A slow frame moves the clock on by 0.1 s at most (no jump past the end).
        simTime += Math.min((now - last) / 1000, 0.1) * Number(speed.value);
        if (simTime > t[n - 1]) simTime = t[0];
        let k = frame;
        if (t[k] > simTime) k = 0;
        while (k + 1 < n && t[k + 1] <= simTime) ++k;
        frame = k;
        draw();
      }
      last = now;
      requestAnimationFrame(tick);
    }
    play.addEventListener('click', function () {
      playing = !playing;
      play.textContent = playing ? 'Pause' : 'Play';
      if (playing) requestAnimationFrame(tick);
    });
    slider.addEventListener('input', function () { setFrame(Number(slider.value)); });
    trace.addEventListener('change', draw);
    let drag = null;
    canvas.addEventListener('mousedown', function (ev) { drag = { x: ev.clientX, y: ev.clientY, az: az, el: elev }; });
    window.addEventListener('mouseup', function () { drag = null; });
    window.addEventListener('mousemove', function (ev) {
      if (!drag) return;
      az = drag.az + (ev.clientX - drag.x) * 0.01;
      elev = Math.max(-1.5, Math.min(1.5, drag.el + (ev.clientY - drag.y) * 0.01));
      draw();
    });
    canvas.addEventListener('wheel', function (ev) { ev.preventDefault(); zoom *= ev.deltaY > 0 ? 0.9 : 1.1; draw(); }, { passive: false });

    const view = {
      canvas: canvas, setFrame: setFrame, frames: s.n,
      frame: function () { return frame; },
      time: function () { return s.t[frame]; },
      play: function () { if (!playing) play.click(); },
      pause: function () { if (playing) play.click(); },
      // Another run (a slider's): the frame at the time shown, or the last.
      update: function (m, cols, values) {
        const at = simTime;
        s = scene(m, cols, values);
        view.frames = s.n;
        slider.max = String(s.n - 1);
        traceOptions();
        let k = 0;
        while (k + 1 < s.n && s.t[k + 1] <= at) ++k;
        setFrame(k);
      }
    };
    draw();
    return view;
  };
})();
