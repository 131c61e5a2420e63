// The model workbench's jump to the timeline (tests/ui.cmake: ui.models_timeline): two
// mailbox runs recorded with vigil record (seeds 2 and 5) given as traces, whose models
// vigil ui builds as vigil model does; each run is opened as a timeline too.
//  - choosing the first transition row (an edge A -> B of the graph) offers, for each run,
//    the first place its trace has that transition;
//  - the baseline's link opens the timeline of the baseline's trace (index.html?run=0, the
//    same server) with its line at an event of A whose next event in the same thread row
//    is one of B, and that row in view; the other's at one in the other trace;
//  - choosing an event offers its first occurrence in each run the same way.
// No console error. Screenshot: models-timeline.png.
const fs = require('fs');
const path = require('path');
const { BIN, run, startUi, main, check, waitExit } = require('./lib.cjs');
const { launch, watchErrors } = require('./browser.cjs');

const SHOTS = process.env.VIGIL_UI_SHOTS;
const vigil = path.join(BIN, 'vigil');

// The jump's timeline tab: its line, its row, and that row's events around the line.
async function landing(ctx, page, link, errors) {
  const [tab] = await Promise.all([ctx.waitForEvent('page', { timeout: 60000 }), page.click(link)]);
  watchErrors(tab, errors);
  await tab.waitForSelector('#trace-stats[data-jump="1"]', { timeout: 60000 });
  const jump = await tab.evaluate(() => window.vigilTimeline.jump);
  check(jump.row !== null, `${link}: no row for the jump`);
  const rel = await tab.evaluate(() => fetch(`api/relations${location.search}`).then((r) => r.json()));
  const w = await tab.evaluate((a) => fetch(`api/events${location.search}&from=${a.at}&to=${a.to}&px=2000&row=${a.row}&rows=1`).then((r) => r.json()),
    { at: jump.at, to: jump.to, row: jump.row });
  const types = await tab.evaluate(() => window.vigilTimeline.types.map((t) => t.name));
  return { tab, jump, rel, items: w.rows[0].items, types };
}

main('ui-models-timeline', async (dir) => {
  for (const [name, seed] of [['base', '2'], ['other', '5']])
    run(vigil, ['record', '-q', '-o', name, '--', path.join(BIN, 'mailbox'), '--seed', seed, '--messages', '60'], { cwd: dir, stdio: 'ignore' });
  const ctx = await launch(dir);
  const errors = [];
  const page = ctx.pages()[0] || (await ctx.newPage());
  watchErrors(page, errors);
  const ui = await startUi(['--models', 'base', 'other', '--port', '0'], dir);
  await page.goto(ui.url);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  const info = await page.evaluate(() => window.vigilModels.state.info);
  check(info.runs.every((r) => r.timeline), `runs without a timeline: ${JSON.stringify(info.runs)}`);

  // the first transition row: its edge, and where each trace first has it
  await page.click('#m-reports button[data-report=transitions]');
  await page.click('#m-table tbody tr:first-child');
  await page.waitForSelector('#m-timeline-0', { timeout: 60000 });
  const edge = await page.evaluate(() => {
    const s = window.vigilModels.state, id = Number(document.getElementById('m-detail').dataset.id), e = s.graph.edges[id];
    return { id, from: s.graph.nodes[e.from].site.replace(/^sensor:/, ''), to: s.graph.nodes[e.to].site.replace(/^sensor:/, ''), count: e.count };
  });
  if (SHOTS) { fs.mkdirSync(SHOTS, { recursive: true }); await page.screenshot({ path: path.join(SHOTS, 'models-timeline.png') }); }
  for (const r of [0, 1]) {
    if (!edge.count[r]) continue; // a transition of one run only has no place in the other
    const got = await landing(ctx, page, `#m-timeline-${r}`, errors);
    check(got.rel.traces.length === 1 && got.rel.traces[0] === (r ? 'other' : 'base'), `run ${r}'s timeline is of ${got.rel.traces}`);
    // the line at an event of A, the next event of that thread one of B
    check(got.items.length >= 2 && got.items[0][0] === got.jump.at, `run ${r}: no event at the line ${got.jump.at}: ${JSON.stringify(got.items.slice(0, 3))}`);
    const [a, b] = [got.types[got.items[0][2]], got.types[got.items[1][2]]];
    check(a === edge.from && b === edge.to, `run ${r}: the line at ${a} then ${b}, the transition is ${edge.from} -> ${edge.to}`);
    await got.tab.close();
  }
  // an event: its first occurrence
  const node = await page.evaluate(() => window.vigilModels.state.graph.nodes.find((n) => n.count[0] && n.count[1]));
  await page.evaluate((id) => window.vigilModels.cy.$id(`n${id}`).emit('tap'), node.id);
  await page.waitForFunction((id) => document.getElementById('m-detail').dataset.id === String(id) && document.getElementById('m-timeline-1'), node.id, { timeout: 60000 });
  const got = await landing(ctx, page, '#m-timeline-1', errors);
  check(got.rel.traces[0] === 'other' && got.items.length && got.items[0][0] === got.jump.at && got.types[got.items[0][2]] === node.site.replace(/^sensor:/, ''),
    `the event ${node.site}: the line at ${JSON.stringify(got.items[0])} (${got.types[got.items[0] ? got.items[0][2] : 0]})`);
  await got.tab.close();
  process.kill(ui.proc.pid, 'SIGINT');
  check((await waitExit(ui.proc)) === 0, 'vigil ui did not exit 0 on SIGINT');
  check(!errors.length, `console errors: ${errors.join('; ')}`);
  await ctx.close();
});
