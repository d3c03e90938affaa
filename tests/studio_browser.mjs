// paynter studio in a real browser: Debian's Chromium, headless, driven by
// puppeteer-core (web/package.json; installed by scripts/setup.sh, no
// download at test time). The page opens a model, every example's check and
// drawing are timed through the editor (the round trip from a key typed to
// the drawing shown), keys typed into the editor add an element and the
// drawing shows it, a wrong kind typed is underlined at its line with
// paynter's message and hint, Simulate plots, a slider runs again on the
// prepared model and the plot changes, and no console error is seen.
//
// Usage: node studio_browser.mjs PAYNTER SOURCE_DIR    ($CHROMIUM: the browser)
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [paynter, source] = process.argv.slice(2);
const require = createRequire(path.join(source, 'web', 'package.json'));
let puppeteer;
try {
  puppeteer = require('puppeteer-core');
} catch (e) {
  console.error('puppeteer-core is missing in web/node_modules: run scripts/setup.sh (npm ci in web/)');
  process.exit(1);
}

let failures = 0;
function check(ok, what, detail) {
  console.log((ok ? 'ok   ' : 'FAIL ') + what + (detail !== undefined ? ': ' + detail : ''));
  if (!ok) ++failures;
}

// A scratch directory with the examples the studio opens.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paynter-studio-'));
const examples = ['rlc.yaml', 'mass_spring_damper.yaml', 'B1_pendulum.yaml', 'dc_motor_load.yaml', 'B3_quick_return.yaml',
  'B4_spatial_arm.yaml'];
for (const f of examples) fs.copyFileSync(path.join(source, 'examples', f), path.join(dir, f));
// A model written in flow style, for the palette's edits of one-line sections.
fs.writeFileSync(path.join(dir, 'flow.yaml'), 'name: rc\nparameters: {R: 2, C: 0.5}\n' +
  'elements: [{name: cap, kind: C, capacitance: C, initial: 1}, {name: j, kind: "0"}, {name: res, kind: R, resistance: R}]' +
  '  # one-line\nbonds: [[j, cap], [j, res]]  # two bonds so far\noutputs: {q: q_cap}\n');

const server = spawn(paynter, ['studio', path.join(dir, 'B1_pendulum.yaml')], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+/);
    if (m) resolve(m[0]);
  });
  server.on('exit', (code) => reject(new Error('paynter studio exited with ' + code + ': ' + out)));
  setTimeout(() => reject(new Error('paynter studio printed no address: ' + out)), 20000);
});

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions'],
});
const consoleErrors = [];
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 1000 });
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  // Nothing but the studio's own address is asked for.
  const foreign = [];
  page.on('request', (r) => { if (!r.url().startsWith(url.replace(/\/\?.*$/, '/'))) foreign.push(r.url()); });
  await page.goto(url);
  await page.waitForFunction(() => window.paynterStudio && window.paynterStudio.checks >= 1, { timeout: 20000 });
  check(await page.$eval('#drawing', (d) => !!d.querySelector('svg g.node')), 'B1 drawn on opening');
  check(await page.$eval('#file', (s) => s.value) === 'B1_pendulum.yaml', 'the file given is opened');

  // Types `keys` at the end of line `line` (1-based) and waits for the check of the new text.
  async function typeAt(line, keys) {
    const before = await page.evaluate(() => window.paynterStudio.checks);
    await page.evaluate((ln) => {
      const cm = window.paynterStudio.editor;
      cm.focus();
      const at = ln > 0 ? ln - 1 : cm.lineCount() - 1;  // 0: the last line
      cm.setCursor({ line: at, ch: cm.getLine(at).length });
    }, line);
    const t0 = Date.now();
    await page.keyboard.type(keys);
    await page.waitForFunction((n) => window.paynterStudio.checks > n &&
      window.paynterStudio.shown === window.paynterStudio.seq, { timeout: 20000 }, before);
    return Date.now() - t0;
  }
  function lineOf(text, needle) { return text.split('\n').findIndex((l) => l.includes(needle)) + 1; }

  // The round trip of every example: a comment typed at its end, the check and
  // the drawing back (the page's own measure: request sent to drawing shown).
  const times = [];
  for (const f of examples) {
    await page.evaluate((p) => window.paynterStudio.open(p), f);
    await page.waitForFunction((p) => window.paynterStudio.path === p && window.paynterStudio.check, {}, f);
    const lines = [];
    for (let k = 0; k < 2; ++k) {
      await typeAt(0, k === 0 ? '\n# x' : 'x');
      lines.push(await page.evaluate(() => window.paynterStudio.lastCheck));
    }
    const ms = lines.map((l) => l.ms);
    const ok = lines.every((l) => l.ok);
    times.push([f, Math.min(...ms), Math.max(...ms)]);
    const last = await page.evaluate(() => window.paynterStudio.check);
    check(ok, f + ' checks without error', ok ? undefined : JSON.stringify(last.diagnostics));
    console.log(`     ${f}: check and drawing round trip ${ms.map((x) => x.toFixed(0)).join(', ')} ms ` +
      `(server ${lines.map((l) => l.server_ms.toFixed(0)).join(', ')} ms)`);
  }
  // A sanity bound only (speed is measured in bench/, and this machine is shared).
  check(times.every((t) => t[1] < 1000), 'every example checked and drawn within 1 s (the better of two)');

  // Typing an element and its bond into B1 adds it to the drawing.
  await page.evaluate(() => window.paynterStudio.open('B1_pendulum.yaml'));
  await page.waitForFunction(() => window.paynterStudio.path === 'B1_pendulum.yaml' && window.paynterStudio.check);
  const nodesBefore = await page.$$eval('#drawing svg g.node', (g) => g.length);
  let text = await page.evaluate(() => window.paynterStudio.editor.getValue());
  await typeAt(lineOf(text, 'name: weight'), '\n- {name: drag, kind: R, resistance: 1}');
  text = await page.evaluate(() => window.paynterStudio.editor.getValue());
  await typeAt(lineOf(text, '[weight, vG]'), '\n- [pivot, drag]');
  const nodesAfter = await page.$$eval('#drawing svg g.node', (g) => g.length);
  const titles = await page.$$eval('#drawing svg g.node title', (t) => t.map((x) => x.textContent));
  const drawnText = await page.$eval('#drawing svg', (s) => s.textContent);
  check(nodesAfter === nodesBefore + 1, 'the typed element is drawn', nodesBefore + ' -> ' + nodesAfter + ' nodes');
  check(/drag/.test(drawnText), 'its name is in the drawing', titles.join(' '));
  check(await page.evaluate(() => window.paynterStudio.check.ok), 'the model with it checks');

  // A wrong kind typed: the error is shown at its line, with message and hint.
  text = await page.evaluate(() => window.paynterStudio.editor.getValue());
  const wrongLine = lineOf(text, 'name: drag');
  await page.evaluate((ln) => {
    const cm = window.paynterStudio.editor;
    const at = cm.getLine(ln - 1).indexOf('kind: R') + 'kind: R'.length;
    cm.focus();
    cm.setCursor({ line: ln - 1, ch: at });
  }, wrongLine);
  const before = await page.evaluate(() => window.paynterStudio.checks);
  await page.keyboard.press('Backspace');
  await page.keyboard.type('Q');
  await page.waitForFunction((n) => window.paynterStudio.checks > n && window.paynterStudio.shown === window.paynterStudio.seq,
    { timeout: 20000 }, before);
  const shown = await page.evaluate(() => {
    const w = document.querySelector('.line-diag.error');
    const mark = document.querySelector('.mark-error');
    return {
      widgetLine: w && w.getAttribute('data-line'), widgetText: w && w.textContent,
      markLine: mark && mark.getAttribute('data-line'),
      list: Array.from(document.querySelectorAll('#diagnostics .diag.error')).map((d) => d.textContent),
      stale: document.getElementById('drawing').classList.contains('stale'),
    };
  });
  check(shown.widgetLine === String(wrongLine), 'the error is shown under its line ' + wrongLine, shown.widgetLine);
  check(shown.markLine === String(wrongLine), 'the error is underlined at its line', shown.markLine);
  check(/Q/.test(shown.widgetText || '') && /\u2014/.test(shown.widgetText || ''), 'with paynter\'s message and hint',
    shown.widgetText);
  check(shown.list.length === 1 && /hint:/.test(shown.list[0]), 'and in the list with its hint', shown.list.join(' | '));
  check(shown.stale, 'the last drawing is kept, greyed');
  // Put it right: the error goes away.
  const fixed = await page.evaluate(() => window.paynterStudio.checks);
  await page.keyboard.press('Backspace');
  await page.keyboard.type('R');
  await page.waitForFunction((n) => window.paynterStudio.checks > n && window.paynterStudio.shown === window.paynterStudio.seq,
    { timeout: 20000 }, fixed);
  check(await page.$$eval('.line-diag.error', (w) => w.length) === 0, 'the error goes when the kind is put right');

  // Run and look: Simulate plots; a slider runs again on the prepared model.
  await page.evaluate(() => { document.getElementById('t-end').value = '2'; });
  await page.click('#simulate');
  await page.waitForFunction(() => window.paynterStudio.runs >= 1, { timeout: 60000 });
  const run1 = await page.evaluate(() => ({ r: window.paynterStudio.lastRun, cols: window.paynterStudio.run.columns,
    y: window.paynterStudio.plot ? window.paynterStudio.plot.data[1].slice(-1)[0] : null }));
  check(run1.r.ok && run1.cols.includes('gamma'), 'Simulate runs the model in the editor', JSON.stringify(run1.cols));
  check(await page.$$eval('#plot .u-wrap canvas', (c) => c.length) === 1, 'and plots it');
  const sliders = await page.$$eval('#sliders input[type=range]', (s) => s.map((x) => x.dataset.name));
  check(sliders.includes('B'), 'a slider for each parameter written as a number', sliders.join(' '));
  await page.evaluate(() => {
    const s = document.querySelector('#sliders input[data-name="B"]');
    s.value = String(Number(s.max) * 0.1);
    s.dispatchEvent(new Event('input'));
    s.dispatchEvent(new Event('change'));
  });
  await page.waitForFunction(() => window.paynterStudio.runs >= 2, { timeout: 60000 });
  const run2 = await page.evaluate(() => ({ r: window.paynterStudio.lastRun,
    y: window.paynterStudio.plot.data[1].slice(-1)[0] }));
  check(run2.r.ok, 'the slider\'s run succeeds');
  check(run2.y !== run1.y, 'the plot changes with the slider', run1.y + ' -> ' + run2.y);
  console.log(`     slider run (B1, B = 2): ${run2.r.ms.toFixed(0)} ms in the page, server ${run2.r.server_ms.toFixed(0)} ms, ` +
    `prepared model ${run2.r.prepared ? 'rebuilt' : 'reused'}`);

  // Graphical editing as edits of the text: vG chosen in the drawing
  // (shift-click), a C from the palette is added and bonded to it; then two
  // shift-clicks add a bond between two elements, and Ctrl-Z takes it back.
  // The rest of the text (its comments) stays as it was.
  async function edited(action) {
    const k = await page.evaluate(() => window.paynterStudio.checks);
    await action();
    await page.waitForFunction((c) => window.paynterStudio.checks > c && window.paynterStudio.shown === window.paynterStudio.seq,
      { timeout: 20000 }, k);
    return page.evaluate(() => window.paynterStudio.editor.getValue());
  }
  const idOf = (name) => page.evaluate((nm) => window.paynterStudio.check.elements.filter((e) => e.name === nm)[0].id, name);
  // The drawing is redrawn after every check: a node found just before a
  // redraw is gone, or not laid out yet, when the click lands ("Node is
  // detached from document", "Node is either not clickable or not an
  // Element"), and the click is made again on the new drawing, as a user
  // would.
  async function shiftClick(name) {
    for (let attempt = 1; ; ++attempt) {
      const id = await idOf(name);
      await page.keyboard.down('Shift');
      try {
        await page.click('#drawing svg g.node#' + id);
        return;
      } catch (e) {
        if (attempt >= 5 || !/detached|not clickable/i.test(String(e))) throw e;
        await new Promise((r) => setTimeout(r, 100));
      } finally {
        await page.keyboard.up('Shift');
      }
    }
  }
  const count = async (what) => page.$$eval('#drawing svg g.' + what, (g) => g.length);
  const beforeEdit = await page.evaluate(() => window.paynterStudio.editor.getValue());
  const nodes0 = await count('node'), edges0 = await count('edge');
  await shiftClick('vG');
  const afterC = await edited(() => page.click('#palette button[data-kind="C"]'));
  const cLine = lineOf(afterC, '- {name: C1, kind: C, capacitance: 1}');
  const bLine = lineOf(afterC, '- [vG, C1]');
  check(cLine === lineOf(afterC, 'name: drag') + 1, 'the palette adds an element at the end of elements:', cLine);
  check(bLine === lineOf(afterC, '[pivot, drag]') + 1, 'bonded to the element chosen, at the end of bonds:', bLine);
  check(afterC.split('\n').filter((l, i) => i !== cLine - 1 && i !== bLine - 1).join('\n') === beforeEdit,
    'every other line as it was');
  check(await count('node') === nodes0 + 1 && await count('edge') === edges0 + 1 &&
    await page.evaluate(() => window.paynterStudio.check.ok), 'the element and its bond are drawn, and the model checks');
  await shiftClick('pivot');
  const afterBond = await edited(() => shiftClick('vG'));
  const pLine = lineOf(afterBond, '- [pivot, vG]');
  check(pLine === bLine + 1 && afterBond.split('\n').filter((l, i) => i !== pLine - 1).join('\n') === afterC,
    'two shift-clicks add a bond between two elements', pLine);
  check(await count('edge') === edges0 + 2, 'and it is drawn');
  const undone = await edited(() => page.keyboard.down('Control').then(() => page.keyboard.press('z'))
    .then(() => page.keyboard.up('Control')));
  check(undone === afterC, 'Ctrl-Z takes it back');
  check(beforeEdit.split('\n').filter((l) => /#/.test(l)).every((l) => undone.includes(l)), 'every comment is kept');
  // Sections written on one line (flow style) get the new item inside their brackets.
  await edited(() => page.evaluate(() => { window.paynterStudio.open('flow.yaml'); }));
  check(await page.evaluate(() => window.paynterStudio.check.ok), 'the one-line model checks',
    JSON.stringify(await page.evaluate(() => window.paynterStudio.check.diagnostics)));
  await shiftClick('j');
  const flow = await edited(() => page.click('#palette button[data-kind="R"]'));
  check(flow.includes('elements: [{name: cap, kind: C, capacitance: C, initial: 1}, {name: j, kind: "0"}, ' +
    '{name: res, kind: R, resistance: R}, {name: R1, kind: R, resistance: 1}]  # one-line\n' +
    'bonds: [[j, cap], [j, res], [j, R1]]  # two bonds so far\n'),
  'one-line sections: the item inside the brackets, the comment kept', JSON.stringify(flow));
  check(await page.evaluate(() => window.paynterStudio.check.ok), 'and the model checks');

  check(foreign.length === 0, 'nothing asked of any other address', foreign.join(' '));
  const pageErrors = await page.evaluate(() => window.paynterErrors || []);
  check(consoleErrors.length === 0 && pageErrors.length === 0, 'no console error',
    consoleErrors.concat(pageErrors).join(' | '));
  // The file on disk was not changed by any of this.
  check(fs.readFileSync(path.join(dir, 'B1_pendulum.yaml'), 'utf8') ===
    fs.readFileSync(path.join(source, 'examples', 'B1_pendulum.yaml'), 'utf8'), 'the model file is untouched');
} finally {
  await browser.close();
  // Stops the server by its API, then waits for it to end.
  const stopped = new Promise((resolve) => server.on('exit', (code) => resolve(code)));
  await fetch(url.replace(/\/\?token=/, '/api/shutdown?token='), { method: 'POST' }).catch(() => {});
  const code = await Promise.race([stopped, new Promise((r) => setTimeout(() => r('timeout'), 10000))]);
  check(code === 0, 'the server stops cleanly', code);
  fs.rmSync(dir, { recursive: true, force: true });
}
if (failures) {
  console.error(failures + ' check(s) failed');
  process.exit(1);
}
