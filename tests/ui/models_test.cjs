// vigil ui's model workbench in Debian's chromium (tests/ui.cmake: ui.models): subjects
// with injected changes, whose change each report of vigil diff ranks first.
//  1. hand-written models (as tests/model/cli_test.py): the cache miss rate 10% -> 40%
//     (transitions) and a hit's time 100 -> 130 us (times). Each report's table in the page
//     is vigil diff --format json --top 0's, row for row; its first row is the injected
//     change, and choosing it highlights that edge in the graph and draws both runs'
//     CDFs with the quantiles of vigil diff. A click on a node of the graph marks the
//     rows that name it. A new minimum support gives vigil diff --min-support's rows.
//  2. the cache subject of tests/logmodel (a lower hit rate, 0.9 -> 0.6) recorded twice
//     under vigil record and given as recordings (--models: built on the fly as vigil
//     model builds them): the page's tables are vigil diff's over vigil model's files,
//     the first transition row is lookup -> cache.miss or cache.hit and choosing it
//     highlights that edge. Shift-click of two events: vigil cdf's path statistics.
// No console error. Screenshots: models.png (docs/ui-models.png), models-recorded.png.
const fs = require('fs');
const path = require('path');
const { BIN, run, startUi, main, check } = require('./lib.cjs');
const { launch, watchErrors } = require('./browser.cjs');

const SHOTS = process.env.VIGIL_UI_SHOTS;
const vigil = path.join(BIN, 'vigil');

async function shot(page, name) {
  if (!SHOTS) return;
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, name) });
}

// src/common/sketch_index.h
function bucket(ns) {
  if (ns < 64) return ns;
  const octave = Math.floor(Math.log2(ns));
  const shift = octave - 6;
  return (octave - 6 + 1) * 64 + (Math.floor(ns / 2 ** shift) & 63);
}

// A model file (docs/model.md): events [site, fmt, count], ids from 1; transitions
// {"i j": [count, [times]]}.
function model(events, trans, names = {}) {
  const out = ['vigil-model 1', 'source models_test'];
  events.forEach(([site, fmt, n], i) => out.push(`event ${i + 1} ${n} ${site} ${JSON.stringify(fmt)}`));
  for (const [i, n] of Object.entries(names)) out.push(`name ${i} ${JSON.stringify(n)}`);
  for (const key of Object.keys(trans).sort((a, b) => a.split(' ')[0] - b.split(' ')[0] || a.split(' ')[1] - b.split(' ')[1])) {
    const [n, times] = trans[key];
    const h = new Map();
    for (const t of times) h.set(bucket(t), (h.get(bucket(t)) || 0) + 1);
    const b = [...h.keys()].sort((x, y) => x - y).map((k) => ` ${k}:${h.get(k)}`).join('');
    out.push(`transition ${key} ${n} ${times.reduce((s, t) => s + t, 0)}${b}`);
  }
  return out.join('\n') + '\n';
}

const rep = (n, v) => new Array(n).fill(v);

function writeModels(dir) {
  const ev = [['src/q.c:10', 'query start %d', 1000], ['src/q.c:20', 'cache hit', 900], ['src/q.c:30', 'cache miss', 100],
    ['src/q.c:40', 'query done', 1000], ['src/w.c:5', 'checkpoint', 10], ['src/w.c:9', 'rare thing', 3]];
  const base = { '1 2': [900, rep(900, 20000)], '1 3': [100, rep(100, 50000)], '2 4': [900, rep(900, 100000)],
    '3 4': [100, rep(100, 2000000)], '4 1': [999, rep(999, 10000)], '5 6': [1, [5000]] };
  const ev2 = [['src/q.c:10', 'query start %d', 1000], ['src/q.c:20', 'cache hit', 600], ['src/q.c:30', 'cache miss', 400],
    ['src/q.c:40', 'query done', 1000], ['src/w.c:5', 'checkpoint', 11], ['src/w.c:9', 'rare thing', 9], ['src/w.c:12', 'new in other', 2]];
  const other = { '1 2': [600, rep(600, 21000)], '1 3': [400, rep(400, 50000)], '2 4': [600, rep(600, 130000)],
    '3 4': [400, rep(400, 2000000)], '4 1': [999, rep(999, 10000)], '5 6': [3, rep(3, 5000)] };
  fs.writeFileSync(path.join(dir, 'base.vgm'), model(ev, base, { 3: 'cache miss' }));
  fs.writeFileSync(path.join(dir, 'other.vgm'), model(ev2, other));
}

function diffJson(dir, a, b, ...opts) {
  return JSON.parse(run(vigil, ['diff', '--format', 'json', '--top', '0', ...opts, a, b], { cwd: dir }));
}

const same = (x, y) => x.site === y.site && x.fmt === y.fmt;
const labelOf = (e) => e.name || e.fmt;

// The page's rows of the current report, with their place in the graph.
async function pageRows(page) {
  return page.evaluate(() => {
    const g = window.vigilModels.state.graph;
    return [...document.querySelectorAll('#m-table tbody tr')].map((tr) => ({
      rank: Number(tr.dataset.rank),
      cells: [...tr.cells].map((c) => c.textContent),
      node: tr.dataset.node === undefined ? null : g.nodes[Number(tr.dataset.node)],
      edge: tr.dataset.edge === undefined ? null : { from: g.nodes[g.edges[Number(tr.dataset.edge)].from], to: g.nodes[g.edges[Number(tr.dataset.edge)].to] },
      cls: tr.className,
    }));
  });
}

async function showReport(page, name, top = '0') {
  await page.click(`#m-reports button[data-report=${name}]`);
  await page.fill('#m-top', top);
  await page.waitForFunction((n) => document.querySelector(`#m-reports button[data-report=${n}]`).classList.contains('active'), name);
}

// Every row of each report is vigil diff's, in its order.
async function checkReports(page, d, what) {
  for (const name of ['events', 'transitions', 'times']) {
    await showReport(page, name);
    const rows = await pageRows(page);
    check(rows.length === d[name].length, `${what} ${name}: ${rows.length} rows in the page, vigil diff has ${d[name].length}`);
    rows.forEach((r, i) => {
      const w = d[name][i];
      check(r.rank === w.rank, `${what} ${name} row ${i}: rank ${r.rank}, vigil diff ${w.rank}`);
      if (name === 'events') check(same(r.node, w.event), `${what} events #${w.rank}: ${r.node.site} in the page, ${w.event.site} in vigil diff`);
      else check(same(r.edge.from, w.from) && same(r.edge.to, w.to), `${what} ${name} #${w.rank}: ${r.edge.from.site} -> ${r.edge.to.site}, vigil diff ${w.from.site} -> ${w.to.site}`);
      const text = r.cells.join(' | ');
      if (name === 'transitions') check(r.cells[1] === `×${w.ratio.toPrecision(4)}` && text.includes(`(${w.count_baseline.toLocaleString('en')}/${w.out_baseline.toLocaleString('en')})`),
        `${what} transitions #${w.rank}: ${text} vs ratio ${w.ratio}, ${w.count_baseline}/${w.out_baseline}`);
      if (name === 'events') check(text.includes(`(${w.count_baseline.toLocaleString('en')})`) && text.includes(`(${w.count_other.toLocaleString('en')})`),
        `${what} events #${w.rank}: counts ${w.count_baseline}, ${w.count_other} not in ${text}`);
      if (name === 'times') check(r.cells[4] === `${w.timed_baseline.toLocaleString('en')}/${w.timed_other.toLocaleString('en')}`, `${what} times #${w.rank}: timed ${r.cells[4]}`);
    });
  }
}

// The graph's view stands still (a choice animates it): positions read now are where
// a click lands.
async function settle(page) {
  await page.waitForFunction(() => !window.vigilModels.cy.animated(), null, { timeout: 30000 });
}

// Choosing the first row of a report highlights its edge (or node) and no other.
async function chooseFirst(page, name) {
  await showReport(page, name);
  await page.click('#m-table tbody tr:first-child');
  await page.waitForFunction(() => window.vigilModels.cy.elements('.focus').length > 0);
  return page.evaluate(() => window.vigilModels.chosen());
}

main('ui-models', async (dir) => {
  writeModels(dir);
  const d = diffJson(dir, 'base.vgm', 'other.vgm');
  // the injected changes are ranked first by vigil diff itself
  check(same(d.transitions[0].from, { site: 'src/q.c:10', fmt: 'query start %d' }) && same(d.transitions[0].to, { site: 'src/q.c:30', fmt: 'cache miss' }), 'vigil diff: transitions');
  check(same(d.times[0].from, { site: 'src/q.c:20', fmt: 'cache hit' }) && same(d.times[0].to, { site: 'src/q.c:40', fmt: 'query done' }), 'vigil diff: times');

  const ctx = await launch(dir);
  const errors = [];
  const page = ctx.pages()[0] || (await ctx.newPage());
  watchErrors(page, errors);
  const ui = await startUi(['base.vgm', 'other.vgm', '--port', '0'], dir);
  await page.goto(ui.url);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  await page.waitForFunction(() => window.vigilModels.state.layoutMs !== null, null, { timeout: 60000 });
  await checkReports(page, d, 'models');

  // the transition report's first row: the miss rate; its edge and only it is highlighted
  let c = await chooseFirst(page, 'transitions');
  check(c.edges.length === 1 && c.nodes.length === 0 && same(c.edges[0].from, d.transitions[0].from) && same(c.edges[0].to, d.transitions[0].to),
    `transitions #1 highlights ${JSON.stringify(c)}`);
  check(await page.evaluate((id) => window.vigilModels.cy.$id(`e${id}`).selected(), c.edges[0].id), 'the edge is not selected in the graph');
  // the times report's first row: the hit's time; both runs' CDFs with vigil diff's p50
  c = await chooseFirst(page, 'times');
  check(c.edges.length === 1 && same(c.edges[0].from, d.times[0].from) && same(c.edges[0].to, d.times[0].to), `times #1 highlights ${JSON.stringify(c)}`);
  await page.waitForSelector('#m-detail svg.cdf path[data-run=other]', { timeout: 30000 });
  const legend = await page.textContent('#m-detail .cdf-legend');
  const fmt = (v) => `${(v / 1e3).toPrecision(3)} us`;
  check(legend.includes(`baseline: p50 ${fmt(d.times[0].p50_baseline_ns)}`) && legend.includes(`other: p50 ${fmt(d.times[0].p50_other_ns)}`),
    `CDF legend ${legend} vs p50 ${d.times[0].p50_baseline_ns} -> ${d.times[0].p50_other_ns}`);
  check((await page.$$('#m-detail svg.cdf path[data-run]')).length === 2, 'not two CDF curves');
  await shot(page, 'models.png');

  // graph -> table: a click on the cache-miss node marks the rows that name it
  await showReport(page, 'transitions');
  await settle(page);
  const miss = await page.evaluate(() => {
    const g = window.vigilModels.state.graph, cy = window.vigilModels.cy;
    const n = g.nodes.find((x) => x.fmt === 'cache miss');
    const p = cy.$id(`n${n.id}`).renderedPosition(), r = cy.container().getBoundingClientRect();
    return { id: n.id, x: r.left + p.x, y: r.top + p.y };
  });
  await page.mouse.click(miss.x, miss.y);
  await page.waitForFunction(() => document.querySelectorAll('#m-table tbody tr.linked').length > 0, null, { timeout: 30000 });
  const linked = (await pageRows(page)).filter((r) => r.cls.includes('linked'));
  const want = d.transitions.filter((r) => r.from.fmt === 'cache miss' || r.to.fmt === 'cache miss');
  check(linked.length === want.length && linked.every((r) => r.edge.from.fmt === 'cache miss' || r.edge.to.fmt === 'cache miss'),
    `node click: ${linked.length} rows marked, ${want.length} transitions name cache miss`);
  c = await page.evaluate(() => window.vigilModels.chosen());
  check(c.nodes.length === 1 && c.nodes[0].fmt === 'cache miss', `the node click chose ${JSON.stringify(c)}`);

  // search filters rows; another minimum support is vigil diff --min-support's ranking
  await page.fill('#m-search', 'hit');
  const hits = await pageRows(page);
  check(hits.length > 0 && hits.every((r) => /hit/.test(r.edge.from.fmt + r.edge.to.fmt)), 'search: rows without "hit"');
  await page.fill('#m-search', '');
  await page.fill('#m-support', '500');
  await page.dispatchEvent('#m-support', 'change');
  await page.waitForFunction(() => window.vigilModels.state.diff.min_support === 500, null, { timeout: 30000 });
  await checkReports(page, diffJson(dir, 'base.vgm', 'other.vgm', '--min-support', '500'), 'min-support 500');
  process.kill(ui.proc.pid, 'SIGINT');

  // ---- recordings of the cache subject: models built on the fly ----
  const env = { ...process.env, VIGIL_LOG_PASS: 'none' };
  delete env.VIGIL_LOG;
  delete env.VIGIL_LOG_TIMING;
  for (const [name, hit] of [['cache-base', '0.9'], ['cache-slow', '0.6']]) {
    run(vigil, ['record', '-q', '-o', name, '--', path.join(BIN, 'logmodel_cache'), 'run', '--n', '5000', '--hit', hit, '--seed', '7'], { cwd: dir, env, stdio: 'ignore' });
    run(vigil, ['model', name, '-o', `${name}.vgm`], { cwd: dir, stdio: 'ignore' });
  }
  const d2 = diffJson(dir, 'cache-base.vgm', 'cache-slow.vgm');
  const t0 = d2.transitions[0];
  check(labelOf(t0.from) === 'lookup key %u' && ['cache.miss', 'cache.hit'].includes(labelOf(t0.to)), `vigil diff ranks ${labelOf(t0.from)} -> ${labelOf(t0.to)} first`);
  const ui2 = await startUi(['--models', 'cache-base', 'cache-slow', '--port', '0'], dir);
  await page.goto(ui2.url);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  await page.waitForFunction(() => window.vigilModels.state.layoutMs !== null, null, { timeout: 60000 });
  // the same reports as vigil diff over vigil model's files (paths aside)
  await checkReports(page, d2, 'recordings');
  c = await chooseFirst(page, 'transitions');
  check(c.edges.length === 1 && same(c.edges[0].from, t0.from) && same(c.edges[0].to, t0.to), `recordings: transitions #1 highlights ${JSON.stringify(c)}`);
  c = await chooseFirst(page, 'events');
  check(c.nodes.length === 1 && same(c.nodes[0], d2.events[0].event), `recordings: events #1 highlights ${JSON.stringify(c)}`);

  // two events: lookup, then shift-click reply: the path CDF of vigil cdf in both runs
  const [a, b] = await page.evaluate(() => ['lookup key %u', 'reply %d'].map((f) => window.vigilModels.state.graph.nodes.find((x) => x.fmt === f)));
  // the whole graph in view, once the choice's animation has ended
  await page.waitForFunction(() => !window.vigilModels.cy.animated(), null, { timeout: 30000 });
  await page.evaluate(() => window.vigilModels.cy.fit(undefined, 20));
  const pos = async (id) => (await settle(page)) || page.evaluate((i) => {
    const cy = window.vigilModels.cy, p = cy.$id(`n${i}`).renderedPosition(), r = cy.container().getBoundingClientRect();
    return { x: r.left + p.x, y: r.top + p.y };
  }, id);
  let p = await pos(a.id);
  await page.mouse.click(p.x, p.y);
  await page.waitForFunction((i) => document.getElementById('m-detail').dataset.id === String(i), a.id);
  p = await pos(b.id);
  await page.keyboard.down('Shift');
  await page.mouse.click(p.x, p.y);
  await page.keyboard.up('Shift');
  await page.waitForSelector('#m-detail[data-kind=path] svg.cdf', { timeout: 60000 });
  const pathText = await page.textContent('#m-detail .cdf-legend');
  for (const [i, m] of [['cache-base', 0], ['cache-slow', 1]]) {
    const j = JSON.parse(run(vigil, ['cdf', `${i}.vgm`, '--from', a.site, '--to', b.site, '--format', 'json'], { cwd: dir }));
    const line = `${m ? 'other' : 'baseline'}: ${j.walks_reached.toLocaleString('en')} of ${j.walks.toLocaleString('en')} walks reached it, ${j.paths.toLocaleString('en')} paths, mass ${j.mass.toFixed(4)}`;
    check(pathText.includes(line), `path CDF: "${line}" (vigil cdf) not in "${pathText}"`);
  }
  await shot(page, 'models-recorded.png');
  check(!errors.length, `console errors: ${errors.join('; ')}`);
  await ctx.close();
  process.kill(ui2.proc.pid, 'SIGINT');
});
