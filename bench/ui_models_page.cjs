// The page side of bench/ui_models_bench.py: opens the model workbench in Debian's
// chromium (playwright-core) and measures in the page: navigation to ready (reports and
// graph loaded, laid out, drawn), the layout (cose-bilkent by groups, the page's own
// timing), the graph made, laid out and placed (graph_ms), its first frame, cytoscape's built-in CoSE on the same graph (the peer), and choosing the
// first transition row until its CDF is drawn; the JS heap (CDP). One JSON line on stdout.
// usage: node bench/ui_models_page.cjs URL PROFILE_DIR
const { launch } = require('./ui_browser.cjs');

(async () => {
  const [url, profile] = process.argv.slice(2);
  const { ctx, page, errors } = await launch(profile);
  try {
    const t0 = Date.now();
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.ready && window.vigilModels && window.vigilModels.state.layoutMs !== null, null, { timeout: 600000 });
    // one frame drawn after the layout (its time: the first drawing of the graph)
    const firstFrame = await page.evaluate(() => new Promise((r) => { const t = performance.now(); requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now() - t))); }));
    const ready = Date.now() - t0;
    const g = await page.evaluate(() => ({ layout: window.vigilModels.state.layoutMs, timings: window.vigilModels.state.timings, quiet: window.vigilModels.state.quiet,
      nodes: window.vigilModels.state.graph.nodes.length, edges: window.vigilModels.state.graph.edges.length }));
    const cose = await page.evaluate(() => window.vigilModels.timeLayout({ name: 'cose', animate: false, randomize: true, fit: true }));
    await page.click('#m-reports button[data-report=transitions]');
    const c0 = Date.now();
    await page.click('#m-table tbody tr:first-child');
    await page.waitForSelector('#m-detail svg.cdf', { timeout: 600000 });
    const choose = Date.now() - c0;
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Performance.enable');
    const metrics = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    console.log(JSON.stringify({ ready_ms: ready, layout_ms: g.layout, graph_ms: g.timings.graph_ms, construct_ms: g.timings.construct_ms,
      first_frame_ms: firstFrame, quiet_edges: g.quiet || 0, cose_ms: cose, choose_ms: choose, nodes: g.nodes, edges: g.edges, js_heap_bytes: metrics.JSHeapUsedSize, errors }));
  } finally {
    await ctx.close();
  }
})().catch((e) => { console.error(e); process.exit(1); });
