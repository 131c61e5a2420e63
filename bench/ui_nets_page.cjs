// The page side of bench/ui_nets_bench.py: opens the network browser in Debian's chromium
// (playwright-core) and measures navigation to the list drawn, then scroll steps of the
// virtualised list (each: scrollTop set, until the frame after the rows were drawn again),
// and, as the peer in the same page, a plain list of every row as an element (the time to
// make it, and the same scroll steps). One JSON line on stdout.
// usage: node bench/ui_nets_page.cjs URL PROFILE_DIR [STEPS]
const { launch } = require('./ui_browser.cjs');

// small steps (a wheel's) and every tenth a long jump, the same for both lists
function steps(rowsHeight, count) {
  let seed = 25;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const out = [];
  let y = 0;
  for (let i = 0; i < count; i++) {
    y = i % 10 === 9 ? Math.floor(rnd() * rowsHeight) : Math.max(0, y + Math.floor((rnd() - 0.3) * 600));
    out.push(y);
  }
  return out;
}

(async () => {
  const [url, profile, stepsArg] = process.argv.slice(2);
  const count = Number(stepsArg || 300);
  const { ctx, page, errors } = await launch(profile);
  try {
    const t0 = Date.now();
    await page.goto(url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 600000 });
    await page.waitForSelector('#n-list .n-row', { timeout: 600000 });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const ready = Date.now() - t0;
    const listed = await page.evaluate(() => window.vigilNets.state.all.length);
    const apiBytes = await page.evaluate(() => fetch('api/nets').then((r) => r.text()).then((t) => t.length));
    await page.selectOption('#n-sort', 'network');
    const total = await page.$eval('#n-list', (l) => l.scrollHeight);
    const plan = steps(total, count);
    // each step: scroll, then two frames (the scroll handler draws in the first)
    const measure = (sel, ys) => page.evaluate(async ({ sel, ys }) => {
      const l = document.querySelector(sel), out = [];
      for (const y of ys) {
        const t = performance.now();
        l.scrollTop = y;
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        out.push(performance.now() - t);
      }
      return out;
    }, { sel, ys });
    const scroll = await measure('#n-list', plan);
    const inPage = await page.$$eval('#n-list .n-row', (els) => els.length);
    // the peer: every row an element of one scrolling list, as a plain page would have it
    const peerBuild = await page.evaluate(() => new Promise((r) => {
      const t = performance.now();
      const box = document.createElement('div');
      box.id = 'peer-list';
      box.style.cssText = 'position:fixed;left:0;top:0;width:600px;height:' + document.getElementById('n-list').clientHeight + 'px;overflow:auto;background:#fff;z-index:10';
      const frag = document.createDocumentFragment();
      for (const n of window.vigilNets.state.rows) {
        const d = document.createElement('div');
        d.className = 'n-row';
        d.style.position = 'static';
        for (const v of [n.network, n.response_ns, n.start_ns, n.threads, n.messages, n.bytes, n.servers]) {
          const s = document.createElement('span');
          s.textContent = v;
          d.append(s);
        }
        frag.append(d);
      }
      box.append(frag);
      document.body.append(box);
      requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now() - t)));
    }));
    const peerTotal = await page.$eval('#peer-list', (l) => l.scrollHeight);
    const peerScroll = await measure('#peer-list', steps(peerTotal, count));
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Performance.enable');
    const metrics = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    console.log(JSON.stringify({ ready_ms: ready, listed, api_bytes: apiBytes, scroll_ms: scroll, rows_in_page: inPage,
      peer_build_ms: peerBuild, peer_scroll_ms: peerScroll, js_heap_bytes: metrics.JSHeapUsedSize, errors }));
  } finally {
    await ctx.close();
  }
})().catch((e) => { console.error(e); process.exit(1); });
