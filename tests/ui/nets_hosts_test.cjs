// vigil ui's network browser over three hosts, one clock skewed (tests/ui.cmake:
// ui.nets_hosts), as tests/net/analysis/net_test.py's skewed_hosts records them: the back
// end on hostb with its clock 37 ms ahead, the front on hostf, the client on hostc.
//  - vigil ui NETS (vigil net split of the three traces) finds the traces of its
//    index.json and opens them as the timeline;
//  - machines coloured: one colour per host;
//  - a message between machines shows both hosts' clock corrections with the bounds of
//    vigil clock --json (the page's own format of them);
//  - its "the send in the timeline" control, for a send recorded on the skewed host,
//    lands at the send's recorded time (the network's JSON recorded_ts, not its corrected
//    ts) in the row of the sending thread, where the trace has an event at that time.
// No console error. Screenshot: nets-hosts.png.
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { BIN, run, startUi, main, check, waitExit, track } = require('./lib.cjs');
const { launch, watchErrors } = require('./browser.cjs');

const SHOTS = process.env.VIGIL_UI_SHOTS;
const vigil = path.join(BIN, 'vigil');
const SKEW = 37000000;

// A server recorded under its host name; resolves with its port once it prints it.
function server(dir, args, env, started) {
  return new Promise((resolve, reject) => {
    const p = spawn(vigil, ['record', '-q', '-o', args[0], '--', path.join(BIN, 'three_tier'), ...args.slice(1)],
      { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    started.push(track(p));
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${args[1]} printed no port in 60 s`)), 60000);
    p.stdout.on('data', (d) => {
      out += d;
      const m = out.match(new RegExp(`${args[1]} (\\d+)`));
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    p.on('exit', (c) => { clearTimeout(timer); reject(new Error(`${args[1]} exited (${c})`)); });
  });
}

// The page's numbers (ui/src/analysis/format.js ns)
function ns(v) {
  const a = Math.abs(v);
  if (a < 1e3) return `${Math.round(v)} ns`;
  if (a < 1e6) return `${(v / 1e3).toPrecision(3)} us`;
  if (a < 1e9) return `${(v / 1e6).toPrecision(3)} ms`;
  return `${(v / 1e9).toPrecision(3)} s`;
}

main('ui-nets-hosts', async (dir) => {
  const started = [];
  const back = await server(dir, ['back', 'back', '--pool', '2'], { VIGIL_HOST: 'hostb', VIGIL_CLOCK_SKEW_NS: String(SKEW) }, started);
  const front = await server(dir, ['front', 'front', '--back-port', back], { VIGIL_HOST: 'hostf' }, started);
  run(vigil, ['record', '-q', '-o', 'client', '--', path.join(BIN, 'three_tier'), 'client', '--front-port', front, '--threads', '2', '--requests', '4'],
    { cwd: dir, env: { ...process.env, VIGIL_HOST: 'hostc' }, stdio: 'ignore' });
  for (const p of started.reverse()) { p.kill('SIGTERM'); await waitExit(p, 60000); }
  run(vigil, ['net', 'split', 'client', 'front', 'back', '--per', 'exchange', '-o', 'nets'], { cwd: dir, stdio: 'ignore' });
  const clock = JSON.parse(run(vigil, ['clock', '--json', 'client', 'front', 'back'], { cwd: dir }));
  const hb = clock.hosts.find((h) => h.host === 'hostb');
  check(hb && hb.status !== 'reference' && hb.lo_ns !== null && hb.hi_ns !== null, `vigil clock: hostb ${JSON.stringify(hb)}`);

  // a network with a message sent on hostb to another host, and that send's times
  const files = fs.readdirSync(path.join(dir, 'nets')).filter((f) => /^net-\d+\.json$/.test(f)).sort();
  let pick = null;
  for (const [i, f] of files.entries()) {
    const raw = fs.readFileSync(path.join(dir, 'nets', f), 'utf8');
    const j = JSON.parse(raw);
    const k = j.edges.findIndex((e) => e.kind === 'message' && e.cross_host && j.vertices[e.from].host === 'hostb');
    if (k >= 0) { pick = { index: i, file: f, j, k, raw }; break; }
  }
  check(pick, 'no network with a message sent on hostb');
  const s = pick.j.vertices[pick.j.edges[pick.k].from];
  // exact digits of the send's recorded time (JSON numbers lose them in JavaScript)
  const rec = pick.raw.match(new RegExp(`\\{"id":\\s*${s.id},[^}]*?"recorded_ts":\\s*(\\d+)`));
  check(rec, `the send on the skewed host has no recorded_ts: ${JSON.stringify(s)}`);
  check(Math.abs(Number(rec[1]) - s.ts - SKEW) < 5e6, `recorded ${rec[1]} vs corrected ${s.ts}: not about the skew apart`);

  const ctx = await launch(dir);
  const errors = [];
  const page = ctx.pages()[0] || (await ctx.newPage());
  watchErrors(page, errors);
  const ui = await startUi(['nets', '--port', '0'], dir);
  await page.goto(ui.url);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  const tl = await page.evaluate(() => fetch('api/nets').then((r) => r.json()).then((d) => d.timeline));
  check(tl.open && tl.traces.length === 3, `timeline: ${JSON.stringify(tl)}`);
  await page.evaluate((i) => window.vigilNets.choose(i), pick.index);
  await page.waitForFunction((f) => document.getElementById('n-net-title').textContent.includes(`(${f})`), pick.file, { timeout: 30000 });
  // machines coloured: one colour per host, the same for all its columns
  const heads = await page.$$eval('#n-net .col-head', (hs) => hs.map((h) => [h.querySelector('text').textContent, h.querySelector('rect').getAttribute('stroke')]));
  const colours = new Map();
  for (const [host, c] of heads) check(!colours.has(host) || colours.get(host) === c, `host ${host} in two colours`);
  heads.forEach(([host, c]) => colours.set(host, c));
  check(colours.size >= 2 && new Set(colours.values()).size === colours.size, `colours per host: ${JSON.stringify([...colours])}`);
  await page.$eval(`#n-net .msg[data-edge="${pick.k}"]`, (g) => g.dispatchEvent(new MouseEvent('click', { bubbles: true })));
  await page.waitForSelector('#n-detail tr[data-key="between machines"]', { timeout: 30000 });
  const shown = await page.$$eval('#n-detail tr', (trs) => Object.fromEntries(trs.map((t) => [t.dataset.key, t.cells[1].textContent])));
  const want = `hostb ${hb.status}: corrected by ${ns(hb.offset_ns)}, offset in [${ns(hb.lo_ns)}, ${ns(hb.hi_ns)}]`;
  check(shown['between machines'].includes(want), `between machines: ${shown['between machines']}; expected ${want}`);
  if (SHOTS) { fs.mkdirSync(SHOTS, { recursive: true }); await page.screenshot({ path: path.join(SHOTS, 'nets-hosts.png') }); }

  // the send in the timeline: at its recorded time, in its thread's row
  const [tab] = await Promise.all([ctx.waitForEvent('page', { timeout: 60000 }), page.click('#n-msg-timeline')]);
  watchErrors(tab, errors);
  await tab.waitForSelector('#trace-stats[data-jump="1"]', { timeout: 60000 });
  const info = await tab.evaluate(() => fetch('api/relations').then((r) => r.json()));
  const at = Number(BigInt(rec[1]) - BigInt(info.first_digits));
  const jump = await tab.evaluate(() => window.vigilTimeline.jump);
  check(jump.at === at, `the timeline's line at ${jump.at}, the send recorded at ${at}`);
  const row = await tab.evaluate((r) => window.vigilTimeline.rows[r], jump.row);
  check(row && row.pid === s.pid && row.tid === s.tid, `row ${JSON.stringify(row)}, the send's thread ${s.pid}/${s.tid}`);
  const w = await tab.evaluate((a) => fetch(`api/events?from=${a.at - 1}&to=${a.at + 1}&px=2000&row=${a.row}&rows=1`).then((r) => r.json()), { at, row: jump.row });
  check(w.rows && w.rows[0] && w.rows[0].items.some((it) => it[0] === at), `no event of the sending thread at its recorded time: ${JSON.stringify(w).slice(0, 300)}`);
  await tab.close();
  process.kill(ui.proc.pid, 'SIGINT');
  check((await waitExit(ui.proc)) === 0, 'vigil ui did not exit 0 on SIGINT');
  check(!errors.length, `console errors: ${errors.join('; ')}`);
  await ctx.close();
});
