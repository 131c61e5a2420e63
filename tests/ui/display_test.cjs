// vigil ui's Display tab in Debian's chromium (tests/ui.cmake: ui.display): a mailbox
// recording served with --display examples/mailbox/mailbox.vgd. At an instant chosen from
// vigil query's answers (amid a ResumedbyP1 event's hold, while RunningOn holds for some
// process), the SVG the page drew has one circle per live process, each inside its
// processor's rectangle exactly when RunningOn says it runs there, and the flashing
// circles are ResumedbyP1's; its icons (ids, parents, flashing, past) are those of
// `vigil display render --json` at the same instant. Stepping goes to the next and the
// previous instant of `vigil display changes`; playing moves the instant. A .vgd with an
// unknown relation: vigil ui's stderr has vigil display's error at file:line:col and the
// tab shows the same text with the caret under its column. The static copy (--export
// --display) opened from file:// draws the same icons at the instant. No console error. Screenshots
// go to VIGIL_UI_SHOTS (display.png is docs/ui-display.png).
const fs = require('fs');
const path = require('path');
const { BIN, run, runAny, startUi, waitExit, main, check } = require('./lib.cjs');
const { launch, watchErrors } = require('./browser.cjs');

const SHOTS = process.env.VIGIL_UI_SHOTS;
const VGD = path.join(__dirname, '..', '..', 'examples', 'mailbox', 'mailbox.vgd');
const RESUMED = `range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P1"
when S precede end of W
`;

// vigil query's tuples with times relative to `first` (absolute ns exceed 2^53: BigInt).
function query(vigil, dir, text, first) {
  const rel = (l, k) => {
    const m = l.match(new RegExp(`"${k}":(\\d+)`));
    return m ? Number(BigInt(m[1]) - first) : undefined;
  };
  return run(vigil, ['query', 'run1', '--format', 'json', '-e', text], { cwd: dir }).trim().split('\n').filter(Boolean)
    .map((l) => ({ from: rel(l, 'from'), to: rel(l, 'to'), at: rel(l, 'at'), values: JSON.parse(l).values }));
}

// What the page drew: every icon group of the SVG, its label and its shape's box on screen.
function drawn(page) {
  return page.$$eval('#display-svg g.icon', (gs) => gs.map((g) => {
    const shape = g.querySelector('ellipse, rect, polygon, circle');
    const b = shape ? shape.getBoundingClientRect() : null;
    const label = [...g.children].find((c) => c.tagName === 'text');
    return {
      id: g.dataset.id, relation: g.dataset.relation, parent: g.dataset.parent || null,
      flash: g.classList.contains('flash'), past: g.classList.contains('past'),
      shape: shape ? shape.tagName : null, label: label ? label.textContent : null,
      box: b ? { l: b.left, r: b.right, t: b.top, b: b.bottom } : null,
    };
  }));
}

async function shot(page, name, locator) {
  if (!SHOTS) return;
  fs.mkdirSync(SHOTS, { recursive: true });
  await (locator || page).screenshot({ path: path.join(SHOTS, name) });
}

async function seek(page, at) {
  await page.evaluate((t) => {
    const s = document.getElementById('display-at');
    s.value = String(t);
    s.dispatchEvent(new Event('input'));
  }, at);
  await page.waitForSelector(`#display-svg[data-at="${at}"]`, { timeout: 30000 });
}

main('ui-display', async (dir) => {
  const vigil = path.join(BIN, 'vigil');
  run(vigil, ['record', '-o', 'run1', '--', path.join(BIN, 'mailbox'), '--seed', '2'], { cwd: dir, stdio: 'ignore' });
  const scene0 = run(vigil, ['display', 'render', VGD, 'run1', '--json', '--at', '0'], { cwd: dir });
  const first = BigInt(scene0.match(/"first":(\d+)/)[1]);
  const hold = JSON.parse(scene0).time.hold;
  const changes = run(vigil, ['display', 'changes', VGD, 'run1'], { cwd: dir }).trim().split('\n').map(Number);
  const procs = query(vigil, dir, 'range of P is Process retrieve (P.name)', first);
  const running = query(vigil, dir, 'range of R is RunningOn retrieve (R.process, R.processor)', first);
  const resumed = query(vigil, dir, RESUMED, first);
  const holds = (t, at) => t.from <= at && at < t.to;
  // The instant: amid the hold of a ResumedbyP1 event, while some process runs.
  const T = resumed.map((r) => r.at + Math.floor(hold / 2)).find((t) => running.some((r) => holds(r, t)));
  check(T !== undefined, `no ResumedbyP1 event (of ${resumed.length}) while RunningOn holds: pick another seed`);
  const live = procs.filter((t) => holds(t, T)).map((t) => t.values.name).sort();
  const cpu = Object.fromEntries(running.filter((r) => holds(r, T)).map((r) => [r.values.process, r.values.processor]));
  const flashing = [...new Set(resumed.filter((r) => r.at <= T && T < r.at + hold).map((r) => r.values.Process))].sort();

  const ui = await startUi(['run1', '--port', '0', '--display', VGD], dir);
  const ctx = await launch(dir);
  const errors = [];
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    watchErrors(page, errors);
    await page.setViewportSize({ width: 1400, height: 1300 });
    await page.goto(ui.url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    check(await page.isVisible('#display-svg'), 'the Display tab is not in front with --display');
    await page.waitForSelector('#display-svg[data-at="0"]', { timeout: 30000 });

    // At T: what vigil query says holds, drawn.
    await seek(page, T);
    const icons = await drawn(page);
    const cli = JSON.parse(run(vigil, ['display', 'render', VGD, 'run1', '--json', '--at', `@${first + BigInt(T)}`], { cwd: dir }));
    const key = (i) => `${i.id} parent=${i.parent} flash=${i.flash} past=${i.past}`;
    const pageKeys = icons.map(key).sort(), cliKeys = cli.icons.map(key).sort();
    check(JSON.stringify(pageKeys) === JSON.stringify(cliKeys), `the page's icons:\n${pageKeys.join('\n')}\nvigil display render's:\n${cliKeys.join('\n')}`);
    const byId = new Map(icons.map((i) => [i.id, i]));
    const circles = icons.filter((i) => i.relation === 'Process' && !i.past);
    check(circles.every((c) => c.shape === 'ellipse'), 'a live process is not drawn as a circle');
    const names = circles.map((c) => c.label).sort();
    check(JSON.stringify(names) === JSON.stringify(live), `circles ${names}, live processes (vigil query) ${live}`);
    let inside = 0;
    for (const c of circles) {
      const parent = c.parent ? byId.get(c.parent) : null;
      const where = parent ? parent.label : undefined;
      check(where === cpu[c.label], `${c.label} drawn inside ${where}, RunningOn says ${cpu[c.label]}`);
      if (!parent) continue;
      const [a, b] = [c.box, parent.box];
      check(parent.relation === 'Processor' && parent.shape === 'rect', `${c.label}'s container is a ${parent.relation} ${parent.shape}`);
      check(b.l <= a.l + 0.5 && a.r <= b.r + 0.5 && b.t <= a.t + 0.5 && a.b <= b.b + 0.5, `${c.label}'s circle ${JSON.stringify(a)} is not inside ${where}'s rectangle ${JSON.stringify(b)}`);
      inside++;
    }
    check(inside > 0, 'no process inside a processor at the chosen instant');
    const flash = icons.filter((i) => i.flash).map((i) => i.label).sort();
    check(flash.length > 0 && JSON.stringify(flash) === JSON.stringify(flashing), `flashing ${flash}, ResumedbyP1 (vigil query) ${flashing}`);
    check(await page.evaluate(() => window.vigilTimeline.cursor) === T, 'the timeline does not mark the instant shown');
    const time = await page.textContent('#display-time');
    const [div, unit, dec] = [[1e9, 's', 9], [1e6, 'ms', 6], [1e3, 'µs', 3], [1, 'ns', 0]].find(([d]) => T >= d);
    check(time === `+${(T / div).toFixed(dec)} ${unit}`, `the instant shown is ${time}, not +${T} ns`);
    // the pictures with the flashing circles at full opacity (the SMIL clock at 0)
    await page.evaluate(() => { const s = document.getElementById('display-svg'); s.pauseAnimations(); s.setCurrentTime(0); });
    await shot(page, 'display.png', page.locator('#display-svg > rect')); // the canvas
    await shot(page, 'display-page.png');
    await page.evaluate(() => document.getElementById('display-svg').unpauseAnimations());

    // Step: the next change after T, then the one before it.
    const next = changes.find((c) => c > T);
    await page.click('#display-next');
    await page.waitForSelector(`#display-svg[data-at="${next}"]`, { timeout: 30000 });
    const prev = changes.filter((c) => c < next).pop();
    await page.click('#display-prev');
    await page.waitForSelector(`#display-svg[data-at="${prev}"]`, { timeout: 30000 });
    check(prev <= T, `prev went to ${prev}, after ${T}`);
    // Play (change by change, 20 a second) moves the instant forward; pause stops it.
    await page.selectOption('#display-speed', 'changes:20');
    await page.click('#display-play');
    await page.waitForFunction((p) => Number(document.getElementById('display-svg').dataset.at) > p, prev, { timeout: 30000 });
    await page.click('#display-play');
    check(await page.getAttribute('#display-play', 'data-playing') === '0', 'pause did not stop the movie');
    const at1 = await page.evaluate(() => window.vigilDisplay.at);
    check(changes.includes(at1) && at1 > prev, `playing change by change stopped at +${at1}, not a change after +${prev}`);
    // Play in valid time (the slowest rate offered) also moves it.
    await page.selectOption('#display-speed', { index: 0 });
    await page.click('#display-play');
    await page.waitForFunction((p) => Number(document.getElementById('display-svg').dataset.at) > p, at1, { timeout: 30000 });
    await page.click('#display-play');

    // The static copy (--export --display) opened from disk, no server: at T the same
    // icons as the served page drew; stepping goes to the same next change.
    run(vigil, ['ui', '--export', 'page', '--display', VGD, 'run1'], { cwd: dir, stdio: 'ignore' });
    check(fs.readdirSync(path.join(dir, 'page', 'scenes')).length > 0, 'no scene files in the static copy');
    const disk = await ctx.newPage();
    watchErrors(disk, errors);
    await disk.setViewportSize({ width: 1400, height: 1300 });
    await disk.goto(`file://${path.join(dir, 'page', 'index.html')}`);
    await disk.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    check(await disk.isVisible('#display-svg'), 'the Display tab is not in front in the static copy');
    await disk.waitForSelector('#display-svg[data-at="0"]', { timeout: 30000 });
    await seek(disk, T);
    const diskKeys = (await drawn(disk)).map(key).sort();
    check(JSON.stringify(diskKeys) === JSON.stringify(pageKeys), `the static copy's icons at +${T}:\n${diskKeys.join('\n')}\nthe served page's:\n${pageKeys.join('\n')}`);
    const diskCircles = (await drawn(disk)).filter((i) => i.relation === 'Process' && !i.past).map((c) => c.label).sort();
    check(JSON.stringify(diskCircles) === JSON.stringify(live), `static copy: circles ${diskCircles}, live processes ${live}`);
    await disk.click('#display-next');
    await disk.waitForSelector(`#display-svg[data-at="${next}"]`, { timeout: 30000 });
    await shot(disk, 'display-static.png');
    await disk.close();
    check(errors.length === 0, `console errors:\n${errors.join('\n')}`);
  } finally {
    await ctx.close();
  }
  process.kill(ui.proc.pid, 'SIGINT');
  check((await waitExit(ui.proc)) === 0, 'vigil ui did not stop cleanly');

  // A .vgd naming an unknown relation: vigil display's errors on stderr and in the tab.
  fs.writeFileSync(path.join(dir, 'bad.vgd'), fs.readFileSync(VGD, 'utf8').replace('show Process as circle', 'show Proces as circle'));
  const cliBad = runAny(vigil, ['display', 'check', 'bad.vgd', 'run1'], { cwd: dir }).stderr.split('\n');
  const m = cliBad[0].match(/^bad\.vgd:(\d+):(\d+): error: no relation 'Proces'/);
  check(m, `vigil display check said ${cliBad[0]}`);
  const ub = await startUi(['run1', '--port', '0', '--display', 'bad.vgd'], dir);
  check(ub.stderr().startsWith(cliBad.slice(0, 3).join('\n') + '\n'), `vigil ui's stderr:\n${ub.stderr()}`);
  const ctx2 = await launch(path.join(dir, 'p2'));
  try {
    const page = ctx2.pages()[0] || (await ctx2.newPage());
    const errs = [];
    watchErrors(page, errs);
    await page.goto(ub.url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    await page.waitForSelector('#display[data-state="errors"] .error', { timeout: 30000 });
    const e = await page.$eval('#display .error', (d) => {
      const pre = d.querySelector('pre.caret-line');
      const lines = pre.textContent.split('\n');
      return { line: Number(d.dataset.line), col: Number(d.dataset.col), msg: d.querySelector('.msg').textContent,
        src: lines[0], caretAt: lines[1].indexOf('^'), mark: pre.querySelector('.caret-mark') !== null };
    });
    check(e.msg === cliBad[0] && e.line === Number(m[1]) && e.col === Number(m[2]), `the tab says ${e.msg} (${e.line}:${e.col}), vigil display ${cliBad[0]}`);
    check(e.src === cliBad[1] && e.caretAt === e.col - 1 && e.mark, `caret at column ${e.caretAt + 1} under "${e.src}"`);
    check(!(await page.isVisible('#display-play')) && !(await page.isVisible('#display-svg')), 'movie controls shown for a display that did not load');
    // the timeline is served all the same
    const rows = await page.$$eval('.row-label[data-kind=thread]', (els) => els.length);
    check(rows > 0, 'no timeline beside a display with errors');
    await shot(page, 'display-errors.png');
    check(errs.length === 0, `console errors:\n${errs.join('\n')}`);
  } finally {
    await ctx2.close();
  }
  process.kill(ub.proc.pid, 'SIGINT');
  check((await waitExit(ub.proc)) === 0, 'vigil ui (bad display) did not stop cleanly');
});
