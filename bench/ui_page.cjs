// The page side of bench/ui_bench.py: opens vigil ui's page in Debian's chromium
// (playwright-core), and measures with the Performance API: time from navigation to
// the timeline's first paint with data, then zoom steps (wheel) and pan steps (drag),
// each from the input event to the frame drawn with the server's answer for the new
// view; and the page's JS heap (CDP Performance.getMetrics). One JSON object on stdout.
// usage: node bench/ui_page.cjs URL PROFILE_DIR STEPS
const { launch } = require('./ui_browser.cjs');

(async () => {
  const [url, profile, stepsArg] = process.argv.slice(2);
  const steps = Number(stepsArg || 10);
  const { ctx, page, errors } = await launch(profile, ['--enable-precise-memory-info']);
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.vigilPerf && window.vigilPerf.firstPaint !== null, null, { timeout: 600000 });
    const firstPaint = await page.evaluate(() => window.vigilPerf.firstPaint);
    const box = await page.locator('#timeline').boundingBox();
    const cx = box.x + box.width / 2, cy = box.y + 10;
    const wait = async (kind, n) => page.waitForFunction(([k, c]) => window.vigilPerf.steps.filter((s) => s.kind === k).length >= c, [kind, n], { timeout: 120000 });
    // zoom in around the middle, step by step (each waited for), then pan by drags
    for (let i = 1; i <= steps; i++) {
      await page.mouse.move(cx, cy);
      await page.mouse.wheel(0, -300);
      await wait('zoom', i);
    }
    for (let i = 1; i <= steps; i++) {
      await page.mouse.move(cx, cy);
      await page.mouse.down();
      await page.mouse.move(cx - 150, cy, { steps: 1 });
      await page.mouse.up();
      await wait('pan', i);
    }
    const perf = await page.evaluate(() => window.vigilPerf.steps);
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Performance.enable');
    const metrics = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    const rows = await page.$$eval('.row-label', (els) => els.length);
    console.log(JSON.stringify({
      first_paint_ms: firstPaint, zoom_ms: perf.filter((s) => s.kind === 'zoom').map((s) => s.ms),
      pan_ms: perf.filter((s) => s.kind === 'pan').map((s) => s.ms), js_heap_bytes: metrics.JSHeapUsedSize,
      rows, errors,
    }));
  } finally {
    await ctx.close();
  }
})().catch((e) => { console.error(e); process.exit(1); });
