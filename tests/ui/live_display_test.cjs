// vigil ui --watch --display (tests/ui.cmake: ui.live_display), in Debian's chromium.
// 1. vigil watch --display enables what the display needs and no more: with a display of
//    Process circles inside the Processor they run on, the kept trace of a mailbox run
//    has every RunningOn tuple of a full recording of the same run (the mailbox is
//    logically deterministic), no ProcessState or Waiting begin, and only P1's sends
//    (the query's); without --display, no RunningOn at all.
// 2. The page's Display tab shows the mailbox display's icons while the subject (a paced
//    mailbox) still runs: the circles of live processes, from a snapshot of the trace.
// 3. A short run ends: at an instant of `vigil display changes` over its kept trace, the
//    scene the page drew (and /api/display) is `vigil display render --json`'s there.
// A display with errors: vigil watch --display runs nothing; vigil ui --watch runs the
// subject and answers the errors at vigil display check's file:line:col. No console error.
const fs = require('fs');
const path = require('path');
const { BIN, run, runAny, rawGet, startUi, waitExit, main, check } = require('./lib.cjs');
const { launch, watchErrors } = require('./browser.cjs');

const RESUMED = `range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P1"
when S precede end of W
`;
const SMALL = `show Process as circle: x 10%, y by order of name, label name
show Processor as rectangle: x 50%, y by order of name, size 140 x 70, label name
show RunningOn as process inside processor
`;

// Tuples per relation of a trace, from vigil relations.
function counts(vigil, trace) {
  const out = {};
  for (const l of run(vigil, ['relations', trace]).split('\n')) {
    const m = l.match(/^(\S+)\s+\S+\s+(\d+) tuples?/);
    if (m) out[m[1]] = Number(m[2]);
  }
  return out;
}

function icons(page) {
  return page.$$eval('#display-svg g.icon', (gs) => gs.map((g) => ({
    id: g.dataset.id, relation: g.dataset.relation, parent: g.dataset.parent || null,
    flash: g.classList.contains('flash'), past: g.classList.contains('past'),
    shape: (g.querySelector('ellipse, rect, polygon, circle') || {}).tagName || null,
  })));
}

main('ui-live-display', async (dir) => {
  const vigil = path.join(BIN, 'vigil');
  const src = process.env.VIGIL_SRC;
  const vgl = path.join(src, 'examples', 'mailbox', 'mailbox.vgl');
  const vgd = path.join(src, 'examples', 'mailbox', 'mailbox.vgd');
  const mailbox = path.join(BIN, 'mailbox');
  fs.writeFileSync(path.join(dir, 'resumed.tq'), RESUMED);
  fs.writeFileSync(path.join(dir, 'small.vgd'), SMALL);
  const env = { TMPDIR: path.join(dir, 'tmp') }; // vigil ui keeps vigil watch's trace there
  fs.mkdirSync(env.TMPDIR);

  // 1. What vigil watch --display enables.
  const opts = { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] };
  run(vigil, ['record', '-o', 'full', '--', mailbox, '--seed', '2'], opts);
  run(vigil, ['watch', '--sensors', vgl, '-f', 'resumed.tq', '--display', 'small.vgd', '--keep', 'with', '--', mailbox, '--seed', '2'], opts);
  run(vigil, ['watch', '--sensors', vgl, '-f', 'resumed.tq', '--keep', 'without', '--', mailbox, '--seed', '2'], opts);
  const full = counts(vigil, path.join(dir, 'full')), withD = counts(vigil, path.join(dir, 'with')), without = counts(vigil, path.join(dir, 'without'));
  const p1 = run(vigil, ['query', 'full', '--format', 'json', '-e', 'range of S is SendMessage retrieve (S.mailbox) where S.process = "P1"'], opts).trim().split('\n').length;
  check(full.RunningOn > 0 && withD.RunningOn === full.RunningOn, `RunningOn: ${withD.RunningOn} tuples with --display, ${full.RunningOn} in a full recording`);
  check(without.RunningOn === 0, `RunningOn: ${without.RunningOn} tuples without --display`);
  check(full.ProcessState > 0 && withD.ProcessState === 0, `ProcessState (not shown): ${withD.ProcessState} tuples with --display`);
  check(withD.SendMessage === p1 && p1 < full.SendMessage, `SendMessage: ${withD.SendMessage} tuples, P1 sent ${p1} of ${full.SendMessage}`);
  check(withD.Waiting === 0 && full.Waiting > 0, `Waiting: ${withD.Waiting} whole tuples (the query asks for ends only)`);

  // A display with errors: vigil watch runs nothing; vigil ui --watch runs the subject
  // and answers the display's errors, as vigil display check prints them.
  fs.writeFileSync(path.join(dir, 'bad.vgd'), SMALL.replace('show Processor', 'show Processr'));
  const bad = runAny(vigil, ['watch', '--sensors', vgl, '-f', 'resumed.tq', '--display', 'bad.vgd', '--', mailbox, '--seed', '2'], { cwd: dir });
  const checked = runAny(vigil, ['display', 'check', 'bad.vgd', '--sensors', vgl], { cwd: dir }).stderr.split('\n');
  check(/^bad\.vgd:2:6: error: no relation 'Processr'/.test(checked[0]), `vigil display check: ${checked[0]}`);
  check(bad.status === 2 && bad.stderr.startsWith(checked.slice(0, 3).join('\n')) && !/mailbox: seed/.test(bad.stdout + bad.stderr),
    `vigil watch --display bad.vgd: status ${bad.status}: ${bad.stderr}`);
  const ub = await startUi(['--watch', '--sensors', vgl, '-f', 'resumed.tq', '--display', 'bad.vgd', '--port', '0', '--', mailbox, '--seed', '2'], dir, 120000, env);
  check(ub.stderr().startsWith(checked.slice(0, 3).join('\n') + '\n'), `vigil ui's stderr:\n${ub.stderr()}`);
  const errs = JSON.parse((await rawGet(ub.port, '/api/display/changes')).body);
  check(errs.errors && errs.errors[0].line === 2 && errs.errors[0].col === 6, `/api/display/changes: ${JSON.stringify(errs)}`);
  for (let i = 0; ; i++) { // the subject runs all the same, and its trace opens
    const l = JSON.parse((await rawGet(ub.port, '/api/live')).body);
    if (l.trace) break;
    check(i < 600 && !l.error, `the run with a bad display did not end with its trace open: ${JSON.stringify(l).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  process.kill(ub.proc.pid, 'SIGINT');
  check((await waitExit(ub.proc, 60000)) === 0, 'vigil ui --watch with a bad display did not stop cleanly');

  const ctx = await launch(dir);
  const errors = [];
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    watchErrors(page, errors);
    await page.setViewportSize({ width: 1400, height: 1300 });

    // 2. Icons while the subject still runs.
    const ui = await startUi(['--watch', '--sensors', vgl, '-f', 'resumed.tq', '--display', vgd, '--port', '0', '--',
      mailbox, '--seed', '2', '--messages', '100000', '--pace', '200'], dir, 120000, env);
    await page.goto(ui.url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    await page.click('#tabs button[data-tab=display]');
    // the four processes are created at the start: a snapshot may come before all are
    await page.waitForFunction(() => document.querySelector('#display[data-live="running"]') &&
      document.querySelectorAll('#display-svg g.icon[data-relation=Process]:not(.past)').length === 4, null, { timeout: 60000 });
    const seen = await icons(page);
    const live = JSON.parse(await page.evaluate(() => fetch('api/live?from=0').then((r) => r.text())));
    check(live.running && fs.existsSync(`/proc/${live.pid}`), 'the display was drawn after the subject ended');
    const circles = seen.filter((i) => i.relation === 'Process' && !i.past);
    check(circles.length === 4 && circles.every((c) => c.shape === 'ellipse'), `${circles.length} process circles while running: ${JSON.stringify(seen.slice(0, 4))}`);
    check(await page.isChecked('#display-follow'), 'the live display does not follow the present');
    const at0 = await page.evaluate(() => window.vigilDisplay.at);
    await page.waitForFunction((a) => window.vigilDisplay.at > a, at0, { timeout: 30000 });
    await page.goto('about:blank');
    process.kill(ui.proc.pid, 'SIGINT');
    check((await waitExit(ui.proc, 60000)) === 0, 'vigil ui --watch --display did not stop cleanly on SIGINT');

    // 3. A short run: after it, the scene at an instant is vigil display render's.
    const ui2 = await startUi(['--watch', '--sensors', vgl, '-f', 'resumed.tq', '--display', vgd, '--port', '0', '--',
      mailbox, '--seed', '2', '--messages', '400'], dir, 120000, env);
    await page.goto(ui2.url);
    await page.waitForSelector('body[data-live-done="1"]', { timeout: 60000 });
    await page.click('#tabs button[data-tab=display]');
    await page.waitForSelector('#display[data-live="ended"]', { timeout: 60000 });
    const info = JSON.parse(await page.evaluate(() => fetch('api/relations').then((r) => r.text())));
    const trace = info.traces[0];
    const changes = run(vigil, ['display', 'changes', vgd, trace]).trim().split('\n').map(Number);
    const T = changes[Math.floor(changes.length / 2)];
    const first = BigInt(run(vigil, ['display', 'render', vgd, trace, '--json', '--at', '0']).match(/"first":(\d+)/)[1]);
    const cliText = run(vigil, ['display', 'render', vgd, trace, '--json', '--at', `@${first + BigInt(T)}`]);
    const cli = JSON.parse(cliText);
    const served = await page.evaluate((t) => fetch(`api/display?at=${t}`).then((r) => r.text()), T);
    check(served.trim() === cliText.trim(), `/api/display?at=${T} differs from vigil display render --json over the kept trace`);
    await page.evaluate((t) => {
      const s = document.getElementById('display-at');
      s.value = String(t);
      s.dispatchEvent(new Event('input'));
    }, T);
    await page.waitForSelector(`#display-svg[data-at="${T}"]`, { timeout: 30000 });
    const key = (i) => `${i.id} parent=${i.parent} flash=${i.flash} past=${i.past}`;
    const pageKeys = (await icons(page)).map(key).sort(), cliKeys = cli.icons.map(key).sort();
    check(pageKeys.length > 0 && JSON.stringify(pageKeys) === JSON.stringify(cliKeys), `the page's icons at +${T}:\n${pageKeys.join('\n')}\nvigil display render's:\n${cliKeys.join('\n')}`);
    check(!(await page.isChecked('#display-follow')), 'moving the scrubber did not stop following');
    if (process.env.VIGIL_UI_SHOTS) {
      fs.mkdirSync(process.env.VIGIL_UI_SHOTS, { recursive: true });
      await page.screenshot({ path: path.join(process.env.VIGIL_UI_SHOTS, 'live-display.png') });
    }
    await page.goto('about:blank');
    process.kill(ui2.proc.pid, 'SIGINT');
    check((await waitExit(ui2.proc, 60000)) === 0, 'vigil ui did not stop cleanly');
    check(errors.length === 0, `console errors:\n${errors.join('\n')}`);
    check(fs.readdirSync(env.TMPDIR).length === 0, `vigil ui left ${fs.readdirSync(env.TMPDIR)} in its TMPDIR`);
  } finally {
    await ctx.close();
  }
});
