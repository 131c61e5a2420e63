// vigil ui --watch (tests/ui.cmake: ui.live), in Debian's chromium: the page shows
// ResumedbyP1's tuples while the subject (a paced mailbox) still runs, and vigil ui's
// Ctrl-C ends vigil watch and exits 0; a short run ends by itself, its kept trace opens in
// the timeline, and the workbench's ResumedbyP1 over it equals what was shown live. No
// console errors.
const fs = require('fs');
const path = require('path');
const { BIN, startUi, waitExit, main, check } = require('./lib.cjs');
const { launch, watchErrors } = require('./browser.cjs');

const RESUMED = `range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P1"
when S precede end of W
`;

main('ui-live', async (dir) => {
  fs.writeFileSync(path.join(dir, 'resumed.tq'), RESUMED);
  const vgl = path.join(process.env.VIGIL_SRC, 'examples', 'mailbox', 'mailbox.vgl');
  const mailbox = path.join(BIN, 'mailbox');
  // vigil ui keeps vigil watch's trace under TMPDIR: the test's own, checked empty at
  // the end (other tests may run vigil ui --watch at the same time)
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp);
  const ctx = await launch(dir);
  const errors = [];
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    watchErrors(page, errors);
    // A run long enough to be seen running.
    const ui = await startUi(['--watch', '--sensors', vgl, '-f', 'resumed.tq', '--port', '0', '--',
      mailbox, '--seed', '2', '--messages', '100000', '--pace', '200'], dir, 120000, { TMPDIR: tmp });
    await page.goto(ui.url);
    await page.waitForSelector('#live-table tbody tr', { timeout: 60000 });
    const seen = await page.evaluate(() => ({
      running: document.getElementById('live-status').dataset.running,
      rows: [...document.querySelectorAll('#live-table tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent)),
    }));
    const live = JSON.parse(await page.evaluate(() => fetch('api/live?from=0').then((r) => r.text())));
    check(seen.running === '1' && live.running && fs.existsSync(`/proc/${live.pid}`), 'the tuples came after the subject ended');
    check(seen.rows.every((r) => r[2] === 'ResumedbyP1' && /^Process=P[2-9]$/.test(r[3])), `live rows: ${JSON.stringify(seen.rows.slice(0, 3))}`);
    await page.goto('about:blank'); // it would go on polling the stopped server
    process.kill(ui.proc.pid, 'SIGINT');
    check((await waitExit(ui.proc, 60000)) === 0, 'vigil ui --watch did not stop cleanly on SIGINT');
    check(!fs.existsSync(`/proc/${live.pid}`), `vigil watch (${live.pid}) outlived vigil ui`);

    // A short run: it ends, its trace opens, the workbench agrees with the live answers.
    const ui2 = await startUi(['--watch', '--sensors', vgl, '-f', 'resumed.tq', '--port', '0', '--',
      mailbox, '--seed', '2', '--messages', '400'], dir, 120000, { TMPDIR: tmp });
    await page.goto(ui2.url);
    await page.waitForSelector('body[data-live-done="1"]', { timeout: 60000 });
    const liveRows = await page.$$eval('#live-table tbody tr', (trs) => trs.map((tr) => `${tr.cells[0].textContent} ${tr.cells[3].textContent.replace('Process=', '')}`));
    const threads = await page.$$eval('.row-label[data-kind=thread]', (els) => els.length);
    check(threads >= 3, `${threads} thread rows after the run (mailbox has a main and two processor threads)`);
    await page.click('#tabs button[data-tab=workbench]');
    await page.fill('#editor', RESUMED);
    await page.click('#run');
    await page.waitForSelector('table.result[data-relation=ResumedbyP1] tbody tr', { timeout: 30000 });
    const asked = await page.$$eval('table.result[data-relation=ResumedbyP1] tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent).join(' ')));
    check(liveRows.length > 0 && JSON.stringify([...liveRows].sort()) === JSON.stringify([...asked].sort()),
      `live ${liveRows.length} tuples vs the workbench's ${asked.length} over the kept trace`);
    if (process.env.VIGIL_UI_SHOTS) {
      fs.mkdirSync(process.env.VIGIL_UI_SHOTS, { recursive: true });
      await page.click('#tabs button[data-tab=live]');
      await page.screenshot({ path: path.join(process.env.VIGIL_UI_SHOTS, 'live.png') });
    }
    await page.goto('about:blank');
    process.kill(ui2.proc.pid, 'SIGINT');
    check((await waitExit(ui2.proc, 60000)) === 0, 'vigil ui did not stop cleanly');
    check(errors.length === 0, `console errors:\n${errors.join('\n')}`);
    const left = fs.readdirSync(tmp);
    check(left.length === 0, `vigil ui left ${left} in its TMPDIR`);
  } finally {
    await ctx.close();
  }
});
