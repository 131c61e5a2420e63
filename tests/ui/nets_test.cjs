// vigil ui's network browser in Debian's chromium (tests/ui.cmake: ui.nets), on the
// three-tier example recorded whole (as tests/net/analysis/net_test.py records it):
//  - vigil ui NETS (the folder of vigil net split --per exchange) lists as many networks as
//    vigil net split wrote, with vigil net report's percentiles;
//  - each network drawn has one arrow per message edge of its JSON file, with its bytes;
//    a click on an arrow shows that message's bytes and endpoints, a click on a column
//    head its thread's host and program;
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
    check(shown.send.includes(`(${s.ts} ns)`), `send time ${shown.send} vs ${s.ts}`);
    await shot(page, 'nets.png');
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
  await page.selectOption('#n-sort', 'network');
  const inPage = await page.$$eval('#n-list .n-row', (els) => els.length);
  check(inPage < 200, `${inPage} rows in the page for 5000 networks: the list is not virtualised`);
  await page.$eval('#n-list', (l) => { l.scrollTop = l.scrollHeight; });
  await page.waitForSelector('#n-list .n-row[data-network="5000"]', { timeout: 30000 });
  process.kill(ui3.proc.pid, 'SIGINT');
  check(!errors.length, `console errors: ${errors.join('; ')}`);
  await ctx.close();
});
