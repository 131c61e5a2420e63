// Derived relations in vigil ui's page (tests/ui.cmake: ui.derived; docs/tquel.md "Derived
// relations", docs/ui.md "Timeline"), in Debian's chromium driven by playwright-core:
//  - WaitFor (the wait-for graph of the lock activity, built with the trace): a recording
//    of watch_locks (tests/watch/locks.c: four threads taking two real mutexes in turn,
//    the path given as the first argument) opens with WaitFor's rows on the
//    timeline, one per waiting thread, whose bars are as many as vigil relations counts
//    and whose waiters are those of vigil query's answer; a click on a bar shows a
//    tuple (waiter, holder, lock, from, to) that vigil query's answer has; served with
//    --display waits.vgd (`show WaitFor as pointer from waiter to holder`), the Display
//    tab at an instant amid a wait draws one pointer per WaitFor tuple holding then (but
//    those vigil display render counts unplaced), between the icons of its waiter and
//    holder, the links of vigil display render --json at that instant;
//  - Message (built when a query names it): a recording of examples/three_tier; a query
//    over Message typed into the workbench gives the tuples of vigil query (times,
//    network, sender, receiver, bytes) and draws them as timeline rows `query: Msg`, one
//    per network, as many bars as tuples; a click on one shows a message vigil query has.
// No console error. Screenshots: derived-waitfor.png, derived-waitfor-display.png,
// derived-message.png.
const fs = require('fs');
const path = require('path');
const { BIN, run, startUi, waitExit, formatNs, main, check } = require('./lib.cjs');
const { launch, watchErrors } = require('./browser.cjs');

const SHOTS = process.env.VIGIL_UI_SHOTS;
const vigil = path.join(BIN, 'vigil');
const LOCKS = process.argv[2] || path.join(BIN, 'watch_locks');
const WAITS_VGD = `canvas 900 x 400
time animation
show OSThread as circle: x by order of id, y 50%, label name
show WaitFor as pointer from waiter to holder: colour red
`;

async function shot(page, name) {
  if (!SHOTS) return;
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, name) });
}

// vigil query's answer as JSON lines: {from, to (absolute ns, as digits), values}.
function query(dir, trace, text) {
  return run(vigil, ['query', trace, '-e', text, '--format', 'json'], { cwd: dir }).trim().split('\n').filter((l) => l)
    .map((l) => ({ from: l.match(/"from":(\d+)/)[1], to: (l.match(/"to":(\d+)/) || [])[1], values: JSON.parse(l).values }));
}

// The relation's rows of the page's timeline (those of kind `kind` naming it).
function rowsOf(page, relation, kind) {
  return page.evaluate(([rel, k]) => window.vigilTimeline.rows.filter((r) => r.relation === rel && r.kind === k)
    .map((r) => ({ row: r.row, label: r.label, group: r.group, items: r.items })), [relation, kind]);
}

// Clicks the middle of the first bar of the first of `rows` that has one in the whole
// view, and waits (bounded) for the Selection panel to show a tuple of `relation`.
async function clickBar(page, rows, relation) {
  await page.dblclick('#timeline');
  await page.waitForFunction(() => window.vigilTimeline.win && window.vigilTimeline.view.t0 === 0, null, { timeout: 30000 });
  // Every row in view, nothing scrolled: a click computed against one scroll position and
  // landing after a redraw at another hit a row above the one meant (ui.derived in CI).
  const tall = await page.evaluate(() => {
    const tl = window.vigilTimeline;
    return Math.ceil(tl.els.scroll.getBoundingClientRect().top + tl.Hpx + 200);
  });
  const size = page.viewportSize();
  await page.setViewportSize({ width: size.width, height: Math.min(Math.max(size.height, tall), 8000) });
  const ids = rows.map((r) => r.row);
  let tuple = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    const at = await page.evaluate(async ({ ids, attempt }) => {
      const tl = window.vigilTimeline;
      tl.els.scroll.scrollTop = 0;
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      let k = 0;
      for (const id of ids) {
        const row = tl.rows[id], d = tl.win && tl.win.byRow.get(id);
        if (!d || !d.items || !d.items.length) continue;
        for (const it of d.items) {
          if (k++ < attempt) continue;
          const r = tl.els.canvas.getBoundingClientRect();
          return { x: r.left + (tl.x(it[0]) + tl.x(it[1])) / 2, y: r.top + row.line * 18 + 9 - tl.els.scroll.scrollTop };
        }
      }
      return null;
    }, { ids, attempt });
    check(at, `no ${relation} bar drawn in the whole view`);
    await page.mouse.click(at.x, at.y);
    await page.waitForFunction((rel) => {
      const tr = document.querySelector('#tuple tr[data-key=relation]');
      return tr && tr.cells[1].textContent === rel;
    }, relation, { timeout: 10000 }).catch(() => {});
    tuple = await page.$$eval('#tuple tr', (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.key, tr.cells[1].textContent])));
    if (tuple.relation === relation) break;
  }
  await page.setViewportSize(size);
  return tuple;
}

async function waitFor(ctx, dir, errors) {
  run(vigil, ['record', '-q', '-o', 'locks', '--', LOCKS, '4', '2', '300', '/'], { cwd: dir, stdio: 'ignore' });
  const rel = run(vigil, ['relations', '--json', 'locks'], { cwd: dir }).trim().split('\n').map((l) => JSON.parse(l))
    .find((r) => r.name === 'WaitFor');
  check(rel && rel.tuples > 0, `vigil relations: no WaitFor tuple in the recording: ${JSON.stringify(rel)}`);
  const cli = query(dir, 'locks', 'range of W is WaitFor retrieve (W.waiter, W.holder, W.lock)');
  const waiters = new Set(cli.map((t) => t.values.waiter));

  fs.writeFileSync(path.join(dir, 'waits.vgd'), WAITS_VGD);
  const render = (at) => JSON.parse(run(vigil, ['display', 'render', 'waits.vgd', 'locks', '--json', '--at', at], { cwd: dir }));
  const first = BigInt(render('0').first);
  // the instant: amid a wait both of whose threads have an icon then (a thread whose
  // OSThread tuple was not reported, `OSThread#N`, has none: counted unplaced), the
  // longest such wait of the ten longest
  const mid = (t) => (BigInt(t.from) + BigInt(t.to)) / 2n;
  const candidates = cli.filter((t) => t.to).sort((a, b) => Number(BigInt(b.to) - BigInt(b.from) - (BigInt(a.to) - BigInt(a.from)))).slice(0, 10);
  const chosen = candidates.find((t) => render(`@${mid(t)}`).links.some((l) => l.relation === 'WaitFor'));
  check(chosen, `no WaitFor pointer drawn amid any of the ten longest waits: ${JSON.stringify(candidates)}`);
  const T = Number(mid(chosen) - first);
  const abs = first + BigInt(T);
  const holding = cli.filter((t) => BigInt(t.from) <= abs && (!t.to || abs < BigInt(t.to)));
  const scene = render(`@${abs}`);

  const ui = await startUi(['locks', '--port', '0', '--display', 'waits.vgd'], dir);
  const page = ctx.pages()[0] || (await ctx.newPage());
  watchErrors(page, errors);
  await page.goto(ui.url);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });

  // The Display tab at T: the wait-for graph then.
  await page.waitForSelector('#display-svg[data-at="0"]', { timeout: 30000 });
  await page.evaluate((t) => {
    const s = document.getElementById('display-at');
    s.value = String(t);
    s.dispatchEvent(new Event('input'));
  }, T);
  await page.waitForSelector(`#display-svg[data-at="${T}"]`, { timeout: 30000 });
  const svg = await page.evaluate(() => {
    const label = new Map([...document.querySelectorAll('#display-svg g.icon')].map((g) => {
      const t = [...g.querySelectorAll('text')].pop();
      return [g.dataset.id, t ? t.textContent : null];
    }));
    return [...document.querySelectorAll('#display-svg g.link[data-relation=WaitFor]:not(.past)')]
      .map((g) => ({ from: g.dataset.from, to: g.dataset.to, waiter: label.get(g.dataset.from), holder: label.get(g.dataset.to) }));
  });
  const pairs = (l) => l.map((x) => `${x.from} -> ${x.to}`).sort();
  const cliLinks = scene.links.filter((l) => l.relation === 'WaitFor' && !l.past);
  check(svg.length > 0 && JSON.stringify(pairs(svg)) === JSON.stringify(pairs(cliLinks)),
    `WaitFor pointers at +${T}: the page ${pairs(svg)}, vigil display render ${pairs(cliLinks)}`);
  check(cliLinks.reduce((s, l) => s + (l.count || 1), 0) + scene.unplaced === holding.length,
    `at +${T}: ${cliLinks.length} WaitFor pointers + ${scene.unplaced} unplaced, ${holding.length} WaitFor tuples hold (vigil query)`);
  const want = holding.map((t) => `${t.values.waiter} -> ${t.values.holder}`);
  check(svg.every((l) => want.includes(`${l.waiter} -> ${l.holder}`)),
    `pointers ${svg.map((l) => `${l.waiter} -> ${l.holder}`)}, waits holding at +${T} (vigil query) ${want}`);
  await shot(page, 'derived-waitfor-display.png');
  const rows = await rowsOf(page, 'WaitFor', 'interval');
  check(rows.length > 0, 'the timeline has no WaitFor row');
  const bars = rows.reduce((s, r) => s + r.items, 0);
  check(bars === rel.tuples, `the timeline's WaitFor rows have ${bars} bars, vigil relations counts ${rel.tuples} tuples`);
  const labels = rows.map((r) => r.label).sort();
  check(rows.every((r) => r.group === 'WaitFor') && JSON.stringify(labels) === JSON.stringify([...waiters].sort()),
    `WaitFor rows ${labels}, vigil query's waiters ${[...waiters].sort()}`);
  const tuple = await clickBar(page, rows, 'WaitFor');
  check(tuple.relation === 'WaitFor', `the click shows ${JSON.stringify(tuple)}, not a WaitFor tuple`);
  const same = cli.filter((t) => t.values.waiter === tuple.waiter && t.values.holder === tuple.holder && t.values.lock === tuple.lock);
  check(same.some((t) => formatNs(t.from) === tuple['valid from'] && (!t.to || formatNs(t.to) === tuple['valid to'])),
    `the selected WaitFor ${JSON.stringify(tuple)} is not in vigil query's answer`);
  await shot(page, 'derived-waitfor.png');
  await page.goto('about:blank');
  process.kill(ui.proc.pid, 'SIGINT');
  check((await waitExit(ui.proc)) === 0, 'vigil ui (locks) did not exit 0 on SIGINT');
}

const MESSAGES = 'range of M is Message\nretrieve into Msg (Net = M.network, Sender = M.sender, Receiver = M.receiver, Bytes = M.bytes)\n';

async function message(ctx, dir, errors) {
  run(vigil, ['record', '-q', '-o', 'tt', '--', path.join(BIN, 'three_tier'), 'run', '--threads', '2', '--requests', '3'],
    { cwd: dir, stdio: 'ignore' });
  const cli = query(dir, 'tt', MESSAGES);
  check(cli.length >= 6 && new Set(cli.map((t) => t.values.Net)).size >= 2, `vigil query found ${cli.length} messages in three requests (two connections: two networks)`);
  const line = (t) => `${formatNs(t.from)} ${formatNs(t.to)} ${t.values.Net} ${t.values.Sender} ${t.values.Receiver} ${t.values.Bytes}`;
  const want = cli.map(line).sort();

  const ui = await startUi(['tt', '--port', '0'], dir);
  const page = ctx.pages()[0] || (await ctx.newPage());
  await page.goto(ui.url);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  await page.fill('#editor', MESSAGES);
  await page.click('#run');
  await page.waitForSelector('table.result[data-relation=Msg] tbody tr', { timeout: 60000 });
  const got = (await page.$$eval('table.result[data-relation=Msg] tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent).join(' ')))).sort();
  check(JSON.stringify(got) === JSON.stringify(want), `workbench:\n${got.join('\n')}\nvigil query:\n${want.join('\n')}`);
  // drawn: one row per network under `query: Msg`, as many bars as messages (the table
  // comes first, the rows when the timeline has loaded them again: wait for them)
  const nets = new Set(cli.map((t) => String(t.values.Net)));
  await page.waitForFunction((n) => window.vigilTimeline.rows.filter((r) => r.kind === 'result').length === n, nets.size, { timeout: 30000 }).catch(() => {});
  const rows = await rowsOf(page, 'Msg', 'result');
  const bars = rows.reduce((s, r) => s + r.items, 0);
  check(rows.length === nets.size && rows.every((r) => r.group === 'query: Msg' && nets.has(r.label)) && bars === cli.length,
    `result rows ${JSON.stringify(rows)} for ${cli.length} messages of networks ${[...nets]}`);
  const tuple = await clickBar(page, rows, 'Msg');
  check(tuple.relation === 'Msg' && want.includes(`${tuple['valid from']} ${tuple['valid to']} ${tuple.Net} ${tuple.Sender} ${tuple.Receiver} ${tuple.Bytes}`),
    `the selected message ${JSON.stringify(tuple)} is not in vigil query's answer`);
  await shot(page, 'derived-message.png');
  await page.goto('about:blank');
  process.kill(ui.proc.pid, 'SIGINT');
  check((await waitExit(ui.proc)) === 0, 'vigil ui (three_tier) did not exit 0 on SIGINT');
}

main('ui-derived', async (dir) => {
  const ctx = await launch(dir);
  const errors = [];
  try {
    await waitFor(ctx, dir, errors);
    await message(ctx, dir, errors);
    check(!errors.length, `console errors:\n${errors.join('\n')}`);
  } finally {
    await ctx.close();
  }
});
