// vigil ui's page in Debian's chromium (tests/ui.cmake: ui.page): the timeline of a
// mailbox recording has one row per thread of the trace (vigil dump's threads), a click
// on a mark shows its tuple with stream and offset, wheel and drag move the view;
// ResumedbyP1 typed into the workbench shows vigil query's tuples and draws them as rows;
// a syntax error shows vigil query's message with the caret at its line:col; the copy
// made by --export opens from disk; a damaged copy opens with vigil dump's damage listed;
// the page logs no console error. Screenshots go to
// VIGIL_UI_SHOTS (kept with the test's output).
const fs = require('fs');
const path = require('path');
const { BIN, run, runAny, startUi, waitExit, formatNs, main, check } = require('./lib.cjs');
const { launch, watchErrors } = require('./browser.cjs');

const SHOTS = process.env.VIGIL_UI_SHOTS;
const RESUMED = `range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P1"
when S precede end of W
`;

async function shot(page, name) {
  if (!SHOTS) return;
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, name) });
}

main('ui-page', async (dir) => {
  const vigil = path.join(BIN, 'vigil');
  run(vigil, ['record', '-o', 'run1', '--', path.join(BIN, 'mailbox'), '--seed', '2'], { cwd: dir, stdio: 'ignore' });
  // The threads of the trace, as vigil dump gives them.
  const events = run(vigil, ['dump', '--json', 'run1'], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n').map((l) => JSON.parse(l));
  const threads = new Set(events.map((e) => `${e.pid}/${e.tid}`));
  const times = new Set(events.map((e) => `${e.name} ${e.time}`));

  const ui = await startUi(['run1', '--port', '0'], dir);
  const ctx = await launch(dir);
  const errors = [];
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    watchErrors(page, errors);
    await page.goto(ui.url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    await page.waitForFunction(() => window.vigilPerf && window.vigilPerf.firstPaint !== null, null, { timeout: 60000 });

    // One row per thread, each named with its thread id under its process.
    const rows = await page.$$eval('.row-label[data-kind=thread]', (els) => els.map((e) => ({ label: e.textContent, title: e.title })));
    check(rows.length === threads.size, `${rows.length} thread rows, the trace has ${threads.size} threads`);
    for (const t of threads) {
      const [pid, tid] = t.split('/');
      check(rows.some((r) => r.label.includes(`[${tid}]`) && r.title.includes(`[${pid}]`)), `no row for thread ${tid} of process ${pid}`);
    }
    await shot(page, 'timeline.png');

    // A click on a mark shows its event: every field, the time vigil dump gives, stream, offset.
    const target = await page.evaluate(() => {
      const tl = window.vigilTimeline;
      for (const row of tl.rows) {
        if (row.kind !== 'thread') continue;
        const d = tl.win.byRow.get(row.row);
        if (d && d.items && d.items.length) {
          const it = d.items[Math.floor(d.items.length / 2)];
          const r = tl.els.canvas.getBoundingClientRect();
          return { x: r.left + tl.x(it[0]), y: r.top + row.line * 18 + 9 };
        }
      }
      return null;
    });
    check(target, 'no mark to click');
    await page.evaluate((y) => { document.getElementById('timeline-scroll').scrollTop = 0; }, target.y);
    await page.mouse.click(target.x, target.y);
    await page.waitForSelector('#tuple tr[data-key=offset]', { timeout: 30000 });
    const tuple = await page.$$eval('#tuple tr', (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.key, tr.cells[1].textContent])));
    // a stream file of an image directory, or a pool file of the shared layout
    check(/(stream-\d+-\d+|pool-\d+)$/.test(tuple.stream) && /^\d+$/.test(tuple.offset), `selection: ${JSON.stringify(tuple)}`);
    check(times.has(`${tuple.sensor || tuple.relation} ${tuple['valid at']}`), `selected event ${JSON.stringify(tuple)} is not in vigil dump`);

    // Two selections in quick succession, the first one's answer held back until the
    // second's is shown: the second stays (the server answers requests out of order).
    const pair = await page.evaluate(async () => {
      const tl = window.vigilTimeline;
      for (const row of tl.rows) {
        const d = row.kind === 'thread' && tl.win.byRow.get(row.row);
        if (!d || !d.items || d.items.length < 2) continue;
        const a = d.items[0], b = d.items[d.items.length - 1];
        const offset = async (it) => (await (await fetch(`api/item?row=${row.row}&i=${it[1]}`)).json()).offset;
        return { row: row.row, a, b, offA: String(await offset(a)), offB: String(await offset(b)) };
      }
      return null;
    });
    check(pair && pair.offA !== pair.offB, `no two events of one thread to select: ${JSON.stringify(pair)}`);
    let release;
    const held = new Promise((r) => { release = r; });
    let items = 0;
    await page.route('**/api/item*', async (route) => {
      if (items++ === 0) await held;
      await route.continue();
    });
    await page.evaluate((p) => {
      const tl = window.vigilTimeline;
      tl.select(p.row, p.a[1], p.a[0]);
      tl.select(p.row, p.b[1], p.b[0]);
    }, pair);
    const shownOffset = () => page.evaluate(() => {
      const tr = document.querySelector('#tuple tr[data-key=offset]');
      return tr ? tr.cells[1].textContent : null;
    });
    await page.waitForFunction((want) => {
      const tr = document.querySelector('#tuple tr[data-key=offset]');
      return tr && tr.cells[1].textContent === want;
    }, pair.offB, { timeout: 30000 }).catch(() => {});
    release();
    await page.waitForTimeout(500); /* the first answer arrives now */
    const shown = await shownOffset();
    await page.unroute('**/api/item*');
    check(items === 2 && shown === pair.offB, `the later selection (offset ${pair.offB}) lost to the earlier (${pair.offA}): shown ${shown}, ${items} requests`);

    // Wheel zooms, drag pans: each step is measured and the ruler changes.
    const box = await page.locator('#timeline').boundingBox();
    const before = await page.evaluate(() => ({ ...window.vigilTimeline.view }));
    await page.mouse.move(box.x + box.width / 2, box.y + 20);
    await page.mouse.wheel(0, -400);
    await page.waitForFunction(() => window.vigilPerf.steps.some((s) => s.kind === 'zoom'), null, { timeout: 30000 });
    const zoomed = await page.evaluate(() => ({ ...window.vigilTimeline.view }));
    check(zoomed.t1 - zoomed.t0 < before.t1 - before.t0, 'the wheel did not zoom in');
    await page.mouse.move(box.x + box.width / 2, box.y + 20);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 - 200, box.y + 20, { steps: 5 });
    await page.mouse.up();
    await page.waitForFunction(() => window.vigilPerf.steps.some((s) => s.kind === 'pan'), null, { timeout: 30000 });
    const panned = await page.evaluate(() => ({ ...window.vigilTimeline.view }));
    check(panned.t0 > zoomed.t0, 'dragging left did not move the view later');

    // The workbench: ResumedbyP1, the tuples of vigil query.
    fs.writeFileSync(path.join(dir, 'resumed.tq'), RESUMED);
    const cli = run(vigil, ['query', 'run1', '-f', 'resumed.tq', '--format', 'json'], { cwd: dir }).trim().split('\n')
      .map((l) => `${formatNs(l.match(/"at":(\d+)/)[1])} ${JSON.parse(l).values.Process}`).sort();
    check(cli.length > 0, 'vigil query found no ResumedbyP1 tuple with seed 2');
    await page.fill('#editor', RESUMED);
    await page.click('#run');
    await page.waitForSelector('table.result[data-relation=ResumedbyP1] tbody tr', { timeout: 30000 });
    const got = (await page.$$eval('table.result[data-relation=ResumedbyP1] tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent).join(' ')))).sort();
    check(JSON.stringify(got) === JSON.stringify(cli), `workbench:\n${got.join('\n')}\nvigil query:\n${cli.join('\n')}`);
    // drawn on the timeline: one row per process it names (the table comes first, the
    // timeline's rows when it has loaded them again: wait for them, or show what is there)
    const procs = new Set(cli.map((l) => l.split(' ').pop()));
    await page.waitForFunction((n) => document.querySelectorAll('.row-label[data-kind=result]').length === n, procs.size, { timeout: 30000 }).catch(() => {});
    const resultRows = await page.$$eval('.row-label[data-kind=result]', (els) => els.map((e) => e.textContent));
    check(resultRows.length === procs.size && resultRows.every((r) => procs.has(r)), `result rows ${resultRows} for ${[...procs]}`);
    // sortable: by Process, descending after two clicks
    await page.click('table.result[data-relation=ResumedbyP1] th:nth-child(2)');
    await page.click('table.result[data-relation=ResumedbyP1] th:nth-child(2)');
    const col = await page.$$eval('table.result[data-relation=ResumedbyP1] tbody tr', (trs) => trs.map((tr) => tr.cells[1].textContent));
    check(JSON.stringify(col) === JSON.stringify([...col].sort().reverse()), `sorted descending: ${col}`);
    await shot(page, 'workbench.png');
    // The picture of the README: everything in view, a RunningOn bar selected.
    await page.setViewportSize({ width: 1400, height: 1300 });
    await page.dblclick('#timeline');
    await page.waitForFunction(() => window.vigilTimeline.win && window.vigilTimeline.view.t0 === 0, null, { timeout: 30000 });
    const bar = await page.evaluate(() => {
      const tl = window.vigilTimeline;
      tl.els.scroll.scrollTop = 0;
      const row = tl.rows.find((r) => r.relation === 'RunningOn');
      const d = row && tl.win.byRow.get(row.row);
      if (!d || !d.items || !d.items.length) return null;
      const it = d.items[0], r = tl.els.canvas.getBoundingClientRect();
      return { x: r.left + (tl.x(it[0]) + tl.x(it[1])) / 2, y: r.top + row.line * 18 + 9 };
    });
    check(bar, 'no RunningOn bar to click');
    await page.mouse.click(bar.x, bar.y);
    // the selection shown before this click may be an interval too: wait for this one's
    // answer (a RunningOn tuple), or time out and show what is there
    await page.waitForFunction(() => {
      const tr = document.querySelector('#tuple tr[data-key=relation]');
      return tr && tr.cells[1].textContent === 'RunningOn';
    }, null, { timeout: 30000 }).catch(() => {});
    const tuple2 = await page.$$eval('#tuple tr', (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.key, tr.cells[1].textContent])));
    check(tuple2.relation === 'RunningOn' && tuple2.process && tuple2.processor, `RunningOn selection: ${JSON.stringify(tuple2)}`);
    await shot(page, 'overview.png');
    await page.setViewportSize({ width: 1400, height: 900 });

    // A syntax error: vigil query's message, the caret under its column.
    const wrong = 'range of W is Waiting\nretrieve (W.process\nwhere W.process = "P1"\n';
    const cliErr = runAny(vigil, ['query', 'run1', '-e', wrong], { cwd: dir }).stderr.split('\n');
    const m = cliErr[0].match(/^<command line>:(\d+):(\d+): error: (.*)$/);
    check(m, `vigil query said ${cliErr[0]}`);
    await page.fill('#editor', wrong);
    await page.click('#run');
    await page.waitForSelector('.error', { timeout: 30000 });
    const err = await page.$eval('.error', (e) => {
      const pre = e.querySelector('pre.caret-line');
      const lines = pre.textContent.split('\n');
      return { line: Number(e.dataset.line), col: Number(e.dataset.col), msg: e.querySelector('.msg').textContent, src: lines[0], caretAt: lines[1].indexOf('^') };
    });
    check(err.line === Number(m[1]) && err.col === Number(m[2]), `caret at ${err.line}:${err.col}, vigil query says ${m[1]}:${m[2]}`);
    check(err.msg === `${m[1]}:${m[2]}: ${m[3]}`, `message ${err.msg} vs ${cliErr[0]}`);
    check(err.src === wrong.split('\n')[err.line - 1] && err.caretAt === err.col - 1, `caret drawn at column ${err.caretAt + 1} of "${err.src}"`);
    await shot(page, 'syntax-error.png');
    check(errors.length === 0, `console errors:\n${errors.join('\n')}`);
  } finally {
    await ctx.close();
  }

  // The static copy opens from disk, with the same rows, and no console error.
  process.kill(ui.proc.pid, 'SIGINT');
  check((await waitExit(ui.proc)) === 0, 'vigil ui did not stop cleanly');
  run(vigil, ['ui', '--export', 'page', 'run1'], { cwd: dir, stdio: 'ignore' });
  const ctx2 = await launch(path.join(dir, 'p2'));
  try {
    const page = ctx2.pages()[0] || (await ctx2.newPage());
    const errs = [];
    watchErrors(page, errs);
    await page.goto('file://' + path.join(dir, 'page', 'index.html'));
    await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    const n = await page.$$eval('.row-label[data-kind=thread]', (els) => els.length);
    check(n === threads.size, `the static copy shows ${n} thread rows, not ${threads.size}`);
    const marks = await page.evaluate(() => [...window.vigilTimeline.win.byRow.values()].reduce((s, r) => s + (r.items ? r.items.length : 0), 0));
    check(marks >= events.length, `the static copy draws ${marks} items, the trace has ${events.length} events`);
    await shot(page, 'export.png');
    check(errs.length === 0, `console errors in the static copy:\n${errs.join('\n')}`);

    // A damaged copy (the end of a stream cut off) opens with the damage listed: every
    // place vigil dump reports, and the timeline all the same.
    fs.cpSync(path.join(dir, 'run1'), path.join(dir, 'cut'), { recursive: true });
    const image = fs.readdirSync(path.join(dir, 'cut')).find((f) => fs.statSync(path.join(dir, 'cut', f)).isDirectory());
    const stream = fs.readdirSync(path.join(dir, 'cut', image)).filter((f) => f !== 'metadata' && !f.startsWith('.')).sort()[0];
    const cutFile = path.join(dir, 'cut', image, stream);
    fs.truncateSync(cutFile, fs.statSync(cutFile).size - 7);
    const dumped = runAny(vigil, ['dump', 'cut'], { cwd: dir });
    const places = dumped.stderr.split('\n').filter((l) => l.startsWith('cut/'));
    check(dumped.status === 1 && places.length > 0, `vigil dump of the cut copy: status ${dumped.status}: ${dumped.stderr}`);
    const uc = await startUi(['cut', '--port', '0'], dir);
    await page.goto(uc.url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    check(await page.isVisible('#damage'), 'the damage of the cut copy is not shown');
    const listed = (await page.textContent('#damage')).split('\n');
    check(places.every((p) => listed.includes(p)) && listed.length === places.length + 1, `the page lists:\n${listed.join('\n')}\nvigil dump:\n${places.join('\n')}`);
    check(await page.$$eval('.row-label[data-kind=thread]', (els) => els.length) > 0, 'no timeline for the damaged copy');
    await shot(page, 'damage.png');
    await page.goto('about:blank');
    process.kill(uc.proc.pid, 'SIGINT');
    check((await waitExit(uc.proc)) === 0, 'vigil ui (damaged trace) did not stop cleanly');
    check(errs.length === 0, `console errors:\n${errs.join('\n')}`);
  } finally {
    await ctx2.close();
  }
});
