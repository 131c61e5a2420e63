// vigil ui's network browser in Debian's chromium (tests/ui.cmake: ui.nets), on the
// three-tier example recorded whole (as tests/net/analysis/net_test.py records it):
//  - vigil ui NETS (the folder of vigil net split --per exchange) lists as many networks as
//    vigil net split wrote, with vigil net report's percentiles;
//  - each network drawn has one arrow per message edge of its JSON file, with its bytes,
//    and each thread edge shaded as running or waiting (a receive of another thread's);
//    a click on an arrow shows that message's bytes and endpoints, a click on a column
//    head its thread's host and program;
//  - a click on a message shows its byte range in the sender's and the receiver's streams
//    (send_off, recv_off of its JSON), the send's and receive's own ranges and exact times;
//  - the network's "timeline" control opens the timeline of the trace (same server) at
//    the network's start, the input's thread in view (nets-timeline.png);
//  - vigil ui --nets TRACE (split here, vigil net split's defaults) lists as many networks
//    as vigil net split writes for it;
//  - 5,000 networks (copies of one) scroll in a virtualised list: the page holds only the
//    rows in view, and the last network is reached.
// No console error. Screenshots: nets.png (docs/ui-nets.png).
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

async function open(page, ui) {
  await page.goto(ui.url);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  return page.evaluate(() => window.vigilNets.state.all.length);
}

// The network's "timeline" control opens the timeline (index.html, the same server, the
// networks' trace) in another tab at the network's start: the view begins a tenth of the
// response time before the input's recorded time, its line is there, the input thread's
// row holds an event exactly at that time, and that row is in view.
async function jumpToTimeline(page, ctx, errors, j, raw) {
  const input = j.vertices[j.input];
  const at = raw.match(new RegExp(`\\{"id":\\s*${j.input},[^}]*?"ts":\\s*(\\d+)`))[1];
  check(!raw.includes('"recorded_ts"'), 'one host: no time should be corrected');
  const [tab] = await Promise.all([ctx.waitForEvent('page', { timeout: 60000 }), page.click('#n-timeline')]);
  watchErrors(tab, errors);
  await tab.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  await tab.waitForSelector('#trace-stats[data-jump="1"]', { timeout: 60000 });
  const info = await tab.evaluate(() => fetch('api/relations').then((r) => r.json()));
  const rel = Number(BigInt(at) - BigInt(info.first_digits));
  const pad = Math.max(1000, Math.round(j.response_ns / 10));
  const got = await tab.evaluate(() => ({ jump: window.vigilTimeline.jump, view: window.vigilTimeline.view }));
  check(got.jump.at === rel && got.view.t0 === rel - pad && got.view.t1 === rel + j.response_ns + pad,
    `timeline view ${JSON.stringify(got)}, expected [${rel - pad}, ${rel + j.response_ns + pad}] at ${rel}`);
  const th = j.threads[input.thread];
  check(got.jump.row !== null, `no timeline row for the input's thread ${th.pid}/${th.tid}`);
  const rowInfo = await tab.evaluate((r) => window.vigilTimeline.rows[r], got.jump.row);
  check(rowInfo.pid === th.pid && rowInfo.tid === th.tid, `row ${JSON.stringify(rowInfo)} is not thread ${th.pid}/${th.tid}`);
  const w = await tab.evaluate((a) => fetch(`api/events?from=${a.from}&to=${a.to}&px=2000&row=${a.row}&rows=1`).then((r) => r.json()),
    { from: rel - 1, to: rel + 1, row: got.jump.row });
  check(w.rows && w.rows[0] && w.rows[0].items.some((it) => it[0] === rel), `no event of the input's thread at its time: ${JSON.stringify(w).slice(0, 300)}`);
  const label = await tab.$eval(`.row-label[data-row="${got.jump.row}"]`, (d) => {
    const r = d.getBoundingClientRect(), s = document.getElementById('timeline-scroll').getBoundingClientRect();
    return r.top >= s.top && r.bottom <= s.bottom;
  });
  check(label, 'the input thread\'s row is not in view');
  await shot(tab, 'nets-timeline.png');
  await tab.close();
}

const netFiles = (dir) => fs.readdirSync(dir).filter((f) => /^net-\d+\.json$/.test(f)).sort();

main('ui-nets', async (dir) => {
  run(vigil, ['record', '-q', '-o', 'tt', '--', path.join(BIN, 'three_tier'), 'run', '--threads', '3', '--requests', '4'], { cwd: dir, stdio: 'ignore' });
  run(vigil, ['net', 'split', 'tt', '--per', 'exchange', '-o', 'nets'], { cwd: dir, stdio: 'ignore' });
  const index = JSON.parse(fs.readFileSync(path.join(dir, 'nets', 'index.json'), 'utf8'));
  const files = netFiles(path.join(dir, 'nets'));
  check(files.length === index.networks_count && files.length >= 12, `vigil net split wrote ${files.length} files, index says ${index.networks_count}`);
  const report = JSON.parse(run(vigil, ['net', 'report', '--json', 'nets'], { cwd: dir }));

  const ctx = await launch(dir);
  const errors = [];
  const page = ctx.pages()[0] || (await ctx.newPage());
  watchErrors(page, errors);
  const ui = await startUi(['nets', '--port', '0'], dir);
  const n = await open(page, ui);
  check(n === files.length, `the page lists ${n} networks, vigil net split wrote ${files.length}`);
  check((await page.textContent('#n-count')) === `${n} of ${n} networks`, `count line: ${await page.textContent('#n-count')}`);
  const api = await page.evaluate(() => fetch('api/nets').then((r) => r.json()));
  for (const p of ['p50', 'p90', 'p99', 'min', 'max'])
    check(Math.abs(api.response_ns[p] / 1e6 - report.summary.response_ms[p]) < 1e-6, `${p}: ${api.response_ns[p]} ns, vigil net report ${report.summary.response_ms[p]} ms`);
  check((await page.$$('#n-hist line.pmark')).length === 3, 'no percentile markers on the histogram');
  check(api.sequences[0].networks === report.summary.servers[0].networks && api.sequences[0].servers === report.summary.servers[0].servers, 'the most frequent server sequence differs from vigil net report');

  // every network: one arrow per message edge of its JSON, with its bytes
  const all = await page.evaluate(() => window.vigilNets.state.all.map((x) => ({ index: x.index, file: x.file, network: x.network })));
  let clicked = false;
  for (const x of all) {
    const j = JSON.parse(fs.readFileSync(path.join(dir, 'nets', x.file), 'utf8'));
    await page.evaluate((i) => window.vigilNets.choose(i), x.index);
    await page.waitForFunction((f) => document.getElementById('n-net-title').textContent.includes(`(${f})`), x.file, { timeout: 30000 });
    const arrows = await page.$$eval('#n-net .msg', (els) => els.map((e) => [Number(e.dataset.edge), Number(e.dataset.bytes)]));
    const msgs = j.edges.map((e, i) => [i, e]).filter(([, e]) => e.kind === 'message');
    check(arrows.length === msgs.length, `${x.file}: ${arrows.length} arrows, ${msgs.length} messages in its JSON`);
    check(msgs.every(([i, e]) => arrows.some(([k, b]) => k === i && b === e.bytes)), `${x.file}: an arrow's bytes differ from its JSON`);
    // each thread edge shaded: waiting (it ends in a receive of another thread's message) or running
    const recvOfMsg = new Set(j.edges.filter((e) => e.kind === 'message' && j.vertices[e.from].thread !== j.vertices[e.to].thread).map((e) => e.to));
    const thr = j.edges.filter((e) => e.kind === 'thread');
    const waiting = thr.filter((e) => recvOfMsg.has(e.to)).length;
    const shade = await page.evaluate(() => ({ running: document.querySelectorAll('#n-net rect.running').length, waiting: document.querySelectorAll('#n-net line.waiting').length }));
    check(shade.waiting === waiting && shade.running === thr.length - waiting, `${x.file}: shading ${JSON.stringify(shade)}, JSON ${waiting} waiting of ${thr.length} thread edges`);
    if (clicked || !msgs.length) continue;
    // a real click on an arrow's middle: the message chosen is shown with its JSON's bytes
    const mid = await page.$eval(`#n-net .msg[data-edge="${msgs[0][0]}"] line`, (l) => {
      const r = l.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
    });
    await page.mouse.click(mid.x, mid.y);
    await page.waitForSelector('#n-net .msg.selected', { timeout: 30000 });
    const k = Number(await page.$eval('#n-net .msg.selected', (e) => e.dataset.edge));
    const shown = await page.$$eval('#n-detail tr', (trs) => Object.fromEntries(trs.map((t) => [t.dataset.key, t.cells[1].textContent])));
    const e = j.edges[k], s = j.vertices[e.from];
    check(shown.bytes === String(e.bytes), `clicked message ${k}: ${shown.bytes} bytes shown, ${e.bytes} in ${x.file}`);
    check(shown["sender's endpoints"] === `${s.local} → ${s.remote}`, `endpoints ${shown["sender's endpoints"]} vs ${s.local} → ${s.remote}`);
    const tsDigits = (raw, id) => raw.match(new RegExp(`\\{"id":\\s*${id},[^}]*?"ts":\\s*(\\d+)`))[1];
    const raw = fs.readFileSync(path.join(dir, 'nets', x.file), 'utf8').replace(/\n\s*/g, '');
    check(shown.send.includes(`(${tsDigits(raw, e.from)} ns)`), `send time ${shown.send} vs ${tsDigits(raw, e.from)}`);
    check(shown.receive.includes(`(${tsDigits(raw, e.to)} ns)`), `receive time ${shown.receive} vs ${tsDigits(raw, e.to)}`);
    // the byte range carried, in the sender's and the receiver's streams, as in the JSON
    const r = j.vertices[e.to];
    check(shown['sent bytes'] === `${e.send_off}–${e.send_off + e.bytes} (${e.bytes})`, `sent bytes ${shown['sent bytes']}, JSON ${e.send_off}+${e.bytes}`);
    check(shown['received bytes'] === `${e.recv_off}–${e.recv_off + e.bytes} (${e.bytes})`, `received bytes ${shown['received bytes']}, JSON ${e.recv_off}+${e.bytes}`);
    check(shown.send.includes(`bytes ${s.off}–${s.off + s.len} (${s.len}) written`) && shown.receive.includes(`bytes ${r.off}–${r.off + r.len} (${r.len}) read`), `send/receive ranges: ${shown.send}; ${shown.receive}`);
    // and the JSON is consistent: the message's bytes lie within both the send's and the receive's
    check(e.send_off >= s.off && e.send_off + e.bytes <= s.off + s.len && e.recv_off >= r.off && e.recv_off + e.bytes <= r.off + r.len,
      `message ${k} of ${x.file}: [${e.send_off}, +${e.bytes}) not within the send [${s.off}, +${s.len}) and the receive [${r.off}, +${r.len})`);
    await shot(page, 'nets.png');
    await jumpToTimeline(page, ctx, errors, j, raw);
    // a column head: its thread
    await page.click('#n-net .col-head >> nth=0');
    await page.waitForSelector('#n-detail tr[data-key=program]');
    const th = await page.$$eval('#n-detail tr', (trs) => Object.fromEntries(trs.map((t) => [t.dataset.key, t.cells[1].textContent])));
    check(j.threads.some((t) => t.host === th.host && t.program === th.program && th.process === `${t.program} [${t.pid}]`), `thread head: ${JSON.stringify(th)}`);
    clicked = true;
  }
  check(clicked, 'no network with a message to click');
  process.kill(ui.proc.pid, 'SIGINT');

  // traces split here: as many networks as vigil net split writes with its defaults
  run(vigil, ['net', 'split', 'tt', '-o', 'nets2'], { cwd: dir, stdio: 'ignore' });
  const n2 = netFiles(path.join(dir, 'nets2')).length;
  const ui2 = await startUi(['--nets', 'tt', '--port', '0'], dir);
  check((await open(page, ui2)) === n2, `--nets tt lists ${await page.evaluate(() => window.vigilNets.state.all.length)} networks, vigil net split wrote ${n2}`);
  process.kill(ui2.proc.pid, 'SIGINT');

  // 5,000 networks: a virtualised list
  const big = path.join(dir, 'big');
  fs.mkdirSync(big);
  const one = JSON.parse(fs.readFileSync(path.join(dir, 'nets', files[0]), 'utf8'));
  for (let i = 1; i <= 5000; i++) {
    one.network = i;
    fs.writeFileSync(path.join(big, `net-${String(i).padStart(5, '0')}.json`), JSON.stringify(one));
  }
  fs.writeFileSync(path.join(big, 'index.json'), JSON.stringify({ networks_count: 5000 }));
  const ui3 = await startUi(['big', '--port', '0'], dir);
  check((await open(page, ui3)) === 5000, 'the big folder: not 5000 networks');
  // its index.json names no trace: the jump is off, and says why
  check(await page.$eval('#n-timeline', (a) => a.classList.contains('off') && !a.href && a.title.includes('names no trace')), 'no trace, yet the timeline control is on');
  await page.selectOption('#n-sort', 'network');
  const inPage = await page.$$eval('#n-list .n-row', (els) => els.length);
  check(inPage < 200, `${inPage} rows in the page for 5000 networks: the list is not virtualised`);
  await page.$eval('#n-list', (l) => { l.scrollTop = l.scrollHeight; });
  await page.waitForSelector('#n-list .n-row[data-network="5000"]', { timeout: 30000 });
  process.kill(ui3.proc.pid, 'SIGINT');
  check(!errors.length, `console errors: ${errors.join('; ')}`);
  await ctx.close();
});
