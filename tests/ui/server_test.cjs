// vigil ui's server without a browser (tests/ui.cmake: ui.server, also under the
// sanitizers): it binds loopback unless told otherwise, refuses paths that leave the
// page's folder and foreign Host headers, answers bad API requests with 4xx and a JSON
// error, answers queries as vigil query does (same tuples, same error at the same
// line:col, the same CSV and JSON lines bytes, an SQLite file sqlite3 reads), and stops
// cleanly on SIGINT. With --display, the scenes and changes are vigil display's, a bad
// instant is a 400, and a .vgd with errors prints them as vigil display does while the
// timeline is still served (the display routes answer them).
const fs = require('fs');
const os = require('os');
const net = require('net');
const path = require('path');
const { BIN, run, runAny, startUi, waitExit, rawGet, formatNs, main, check } = require('./lib.cjs');

const RESUMED = `range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P1"
when S precede end of W
`;

function connectRefused(host, port) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.setTimeout(5000, () => { s.destroy(); resolve('timeout'); });
    s.on('connect', () => { s.destroy(); resolve('connected'); });
    s.on('error', (e) => resolve(e.code));
  });
}

main('ui-server', async (dir) => {
  const vigil = path.join(BIN, 'vigil');
  // recorded through VIGIL_OUT (mailbox links libvigil): no preload, so the sanitizer
  // build runs this test too
  fs.mkdirSync(path.join(dir, 'run1'));
  run(path.join(BIN, 'mailbox'), ['--seed', '2'], { cwd: dir, stdio: 'ignore', env: { ...process.env, VIGIL_OUT: path.join(dir, 'run1') } });
  const assets = path.join(dir, 'assets');
  fs.mkdirSync(assets);
  fs.writeFileSync(path.join(assets, 'index.html'), '<!doctype html><title>page</title>');
  fs.writeFileSync(path.join(assets, 'app.js'), '/* page */');
  fs.writeFileSync(path.join(assets, 'style.css'), '/* style */');
  fs.writeFileSync(path.join(dir, 'secret.txt'), 'SECRET-OUTSIDE-THE-PAGE');
  fs.symlinkSync('../secret.txt', path.join(assets, 'link.txt'));
  const ui = await startUi(['run1', '--port', '0', '--assets', assets], dir);
  check(ui.host === '127.0.0.1', `binds ${ui.host} by default, not loopback`);
  // No other address of this machine answers.
  for (const addrs of Object.values(os.networkInterfaces()))
    for (const a of addrs || [])
      if (!a.internal && a.family === 'IPv4') {
        const r = await connectRefused(a.address, ui.port);
        check(r !== 'connected', `port ${ui.port} answers on ${a.address}: not loopback only`);
      }

  const page = await rawGet(ui.port, '/');
  check(page.status === 200 && page.body.includes('<title>page</title>'), `GET / → ${page.status}`);
  for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/..%2fsecret.txt', '/link.txt',
    '/assets/../../secret.txt', '/%2E%2E/%2E%2E/etc/passwd', '/..\\secret.txt']) {
    const r = await rawGet(ui.port, p);
    check(r.status === 403 || r.status === 404, `${p} → ${r.status}, not refused`);
    check(!r.body.includes('SECRET') && !r.body.includes('root:'), `${p} leaked a file outside the page`);
    check(JSON.parse(r.body).error, `${p}: no JSON error`);
  }
  const foreign = await rawGet(ui.port, '/api/relations', '127.0.0.1', 'GET', { Host: 'attacker.example:80' });
  check(foreign.status === 403, `a foreign Host header → ${foreign.status}, not 403`);

  const bad = [['/api/events?px=abc', 400], ['/api/events?from=10&to=1', 400], ['/api/events?px=0', 400],
    ['/api/item?row=99999&i=0', 404], ['/api/item?row=0', 400], ['/api/item?row=0&i=99999999', 404],
    ['/api/query', 400], ['/api/query?q=x&format=xml', 400], ['/api/explain', 400],
    ['/api/search', 400], ['/api/nothing', 404], ['/api/display?at=0', 404], ['/api/display/changes', 404]];
  for (const [p, want] of bad) {
    const r = await rawGet(ui.port, p);
    check(r.status === want, `${p} → ${r.status}, want ${want}`);
    check(/json/.test(r.type || ''), `${p}: content type ${r.type}`);
    const j = JSON.parse(r.body);
    check(typeof j.error === 'string' || Array.isArray(j.errors), `${p}: no error in ${r.body}`);
  }
  const post = await rawGet(ui.port, '/api/relations', '127.0.0.1', 'POST');
  check(post.status === 405 && JSON.parse(post.body).error, `POST → ${post.status}`);

  // The relations are vigil relations'.
  const rels = JSON.parse((await rawGet(ui.port, '/api/relations')).body).relations.map((r) => `${r.relation}:${r.tuples}`);
  const cliRels = run(vigil, ['relations', '--json', 'run1'], { cwd: dir }).trim().split('\n').map((l) => JSON.parse(l))
    .filter((r) => r.name !== 'Clock' && !r.derived).map((r) => `${r.name}:${r.tuples}`);
  check(JSON.stringify(rels) === JSON.stringify(cliRels), `relations differ:\n${rels}\n${cliRels}`);

  // ResumedbyP1: the tuples of vigil query.
  fs.writeFileSync(path.join(dir, 'resumed.tq'), RESUMED);
  const q = encodeURIComponent(RESUMED);
  const ans = JSON.parse((await rawGet(ui.port, `/api/query?q=${q}`)).body);
  const cliJson = run(vigil, ['query', 'run1', '-f', 'resumed.tq', '--format', 'json'], { cwd: dir });
  const cli = cliJson.trim().split('\n').map((l) => {
    const at = l.match(/"at":(\d+)/)[1];
    return `${formatNs(at)} ${JSON.parse(l).values.Process}`;
  }).sort();
  const got = ans.results[0].values.map((t) => `${t.time} ${t.values.Process}`).sort();
  check(cli.length > 0, 'vigil query found no ResumedbyP1 tuple with seed 2');
  check(JSON.stringify(got) === JSON.stringify(cli), `ResumedbyP1 differs:\n${got.join('\n')}\nvigil query:\n${cli.join('\n')}`);
  // Downloads: the CLI's own bytes.
  const csv = await rawGet(ui.port, `/api/query?q=${q}&format=csv`);
  check(csv.body === run(vigil, ['query', 'run1', '-f', 'resumed.tq', '--format', 'csv'], { cwd: dir }), 'CSV download differs from vigil query --format csv');
  check(/attachment/.test(csv.headers['content-disposition'] || ''), 'CSV is not an attachment');
  const jl = await rawGet(ui.port, `/api/query?q=${q}&format=jsonl`);
  check(jl.body === cliJson, 'JSON lines download differs from vigil query --format json');
  const dbPath = path.join(dir, 'r.db');
  await new Promise((resolve, reject) => {
    require('http').get({ host: '127.0.0.1', port: ui.port, path: `/api/query?q=${q}&format=sqlite` }, (res) => {
      const out = fs.createWriteStream(dbPath);
      res.pipe(out);
      out.on('finish', resolve);
    }).on('error', reject);
  });
  const n = run('sqlite3', [dbPath, 'select count(*) from ResumedbyP1']).trim();
  check(Number(n) === cli.length, `SQLite download holds ${n} tuples, vigil query ${cli.length}`);

  // A syntax error: an answer (200) with the CLI's message at the CLI's line:col.
  const wrong = 'range of W is Waiting\nretrieve (W.process\nwhere W.process = "P1"\n';
  const wr = await rawGet(ui.port, `/api/query?q=${encodeURIComponent(wrong)}`);
  check(wr.status === 200, `a query with errors → ${wr.status}`);
  const e = JSON.parse(wr.body).errors[0];
  const cliErr = runAny(vigil, ['query', 'run1', '-e', wrong], { cwd: dir }).stderr.split('\n')[0];
  const m = cliErr.match(/^<command line>:(\d+):(\d+): error: (.*)$/);
  check(m, `vigil query said: ${cliErr}`);
  check(e.line === Number(m[1]) && e.col === Number(m[2]) && e.message === m[3],
    `error ${e.line}:${e.col} ${e.message} vs vigil query's ${cliErr}`);
  // A binding error too (an unknown relation).
  const unk = 'range of W is Waitin\nretrieve (W.process)\n';
  const e2 = JSON.parse((await rawGet(ui.port, `/api/query?q=${encodeURIComponent(unk)}`)).body).errors[0];
  const cliErr2 = runAny(vigil, ['query', 'run1', '-e', unk], { cwd: dir }).stderr.split('\n')[0];
  check(cliErr2 === `<command line>:${e2.line}:${e2.col}: error: ${e2.message}`, `binding error ${JSON.stringify(e2)} vs ${cliErr2}`);
  // Explain: the algebra of vigil explain.
  const ex = JSON.parse((await rawGet(ui.port, `/api/explain?q=${q}`)).body).text;
  const cliEx = run(vigil, ['explain', '-f', 'resumed.tq', 'run1'], { cwd: dir });
  check(ex.length > 0 && cliEx.startsWith(ex), 'explain differs from vigil explain');

  // Windows, items, search: well-formed answers (the page test checks what they show).
  const rowsAns = JSON.parse((await rawGet(ui.port, '/api/rows')).body);
  const win = JSON.parse((await rawGet(ui.port, `/api/events?from=0&to=${rowsAns.span}&px=4`)).body);
  check(win.rows.length === rowsAns.rows.length, 'a window answers every row');
  check(win.rows.some((r) => r.buckets) && win.rows.some((r) => r.items), 'a 4-pixel window has rows in buckets and rows of items');
  const ev = JSON.parse((await rawGet(ui.port, '/api/item?row=0&i=0')).body);
  check(ev.stream && Number.isInteger(ev.offset) && ev.values, `event 0: ${JSON.stringify(ev)}`);
  const relRow = rowsAns.rows.find((r) => r.relation === 'RunningOn');
  const tu = JSON.parse((await rawGet(ui.port, `/api/item?row=${relRow.row}&i=0`)).body);
  check(tu.relation === 'RunningOn' && tu.values.process && tu.rto >= tu.rfrom, `RunningOn tuple: ${JSON.stringify(tu)}`);
  const se = JSON.parse((await rawGet(ui.port, '/api/search?q=sendmessage')).body);
  const sends = Number(cliRels.find((r) => r.startsWith('SendMessage:')).split(':')[1]);
  check(se.sensors.length === 1 && se.sensors[0].count === sends && sends > 0 && se.sensors[0].first.length > 0, `search: ${JSON.stringify(se)}`);

  // Ctrl-C stops it, status 0.
  process.kill(ui.proc.pid, 'SIGINT');
  const code = await waitExit(ui.proc);
  check(code === 0 && /stopped/.test(ui.stderr()), `SIGINT: exit ${code}`);
  // The static copy: its data holds every row and every event.
  run(vigil, ['ui', '--export', 'page', '--assets', assets, 'run1'], { cwd: dir, stdio: 'ignore' });
  const data = fs.readFileSync(path.join(dir, 'page', 'data.js'), 'utf8');
  const parsed = JSON.parse(data.slice(data.indexOf('{'), data.lastIndexOf('}') + 1));
  check(parsed.rows.rows.length === rowsAns.rows.filter((r) => r.kind !== 'result').length && parsed.events.every((e) => e && e.stream), 'the static copy misses rows or events');
  const again = runAny(vigil, ['ui', '--export', 'page', '--assets', assets, 'run1'], { cwd: dir });
  check(again.status === 2 && /not empty/.test(again.stderr), `--export into a folder not empty: ${again.stderr}`);
  // --display: scenes and changes as vigil display gives them; a bad instant is a 400.
  const vgd = path.join(__dirname, '..', '..', 'examples', 'mailbox', 'mailbox.vgd');
  const ud = await startUi(['run1', '--port', '0', '--assets', assets, '--display', vgd], dir);
  const chText = (await rawGet(ud.port, '/api/display/changes')).body;
  const ch = JSON.parse(chText);
  const big = (text, key) => BigInt(text.match(new RegExp(`"${key}":(\\d+)`))[1]); // ns beyond 2^53
  const cliChanges = run(vigil, ['display', 'changes', vgd, 'run1'], { cwd: dir }).trim().split('\n').map(Number);
  check(JSON.stringify(ch.changes) === JSON.stringify(cliChanges) && cliChanges.length > 10, `changes differ from vigil display changes (${ch.changes.length} vs ${cliChanges.length})`);
  const relText = (await rawGet(ud.port, '/api/relations')).body;
  const first = big(chText, 'first');
  check(JSON.parse(relText).display === true && first === big(relText, 'first') && BigInt(ch.span) === big(relText, 'last') - first,
    `span ${chText.slice(0, 120)} vs the trace's ${relText.slice(-200)}`);
  for (const at of [0, ...cliChanges.filter((c, i) => i % 17 === 5), ch.span]) {
    const r = await rawGet(ud.port, `/api/display?at=${at}`);
    const cliScene = run(vigil, ['display', 'render', vgd, 'run1', '--json', '--at', `@${first + BigInt(at)}`], { cwd: dir });
    check(r.status === 200 && r.body.trim() === cliScene.trim(), `the scene at +${at} differs from vigil display render --json`);
    check(JSON.parse(r.body).since_first === at, `scene at +${at}: since_first ${JSON.parse(r.body).since_first}`);
  }
  // Windows of the changes: only those within [from, to], at most `limit` of them.
  const changesIn = async (q) => JSON.parse((await rawGet(ud.port, `/api/display/changes?${q}`)).body);
  const [A, B] = [cliChanges[3], cliChanges[cliChanges.length - 4]];
  const inAB = cliChanges.filter((c) => c >= A && c <= B);
  const w1 = await changesIn(`from=${A}&to=${B}`);
  check(JSON.stringify(w1.changes) === JSON.stringify(inAB) && !w1.truncated && w1.index === 3 && w1.count === cliChanges.length,
    `changes in [${A}, ${B}]: ${JSON.stringify(w1).slice(0, 300)}`);
  const w2 = await changesIn(`from=${A + 1}&to=${B - 1}`); // the bounds are instants, not indexes
  check(JSON.stringify(w2.changes) === JSON.stringify(inAB.slice(1, -1)), `changes in [${A + 1}, ${B - 1}]: ${w2.changes.length}`);
  const w3 = await changesIn(`from=${A}&to=${B}&limit=5`);
  check(JSON.stringify(w3.changes) === JSON.stringify(inAB.slice(0, 5)) && w3.truncated && w3.next === inAB[5], `first 5 in the window: ${JSON.stringify(w3)}`);
  const w4 = await changesIn(`to=${B}&take=last&limit=3`);
  const upToB = cliChanges.filter((c) => c <= B);
  check(JSON.stringify(w4.changes) === JSON.stringify(upToB.slice(-3)) && w4.truncated && w4.prev === upToB[upToB.length - 4] && w4.index === upToB.length - 3,
    `last 3 up to ${B}: ${JSON.stringify(w4)}`);
  const w5 = await changesIn('limit=0');
  check(w5.changes.length === 0 && w5.truncated && w5.count === cliChanges.length && w5.next === cliChanges[0], `limit=0: ${JSON.stringify(w5)}`);
  for (const q of ['limit=-1', 'limit=x', 'limit=1000001', 'take=middle', `from=${B}&to=${A}`, 'from=1.5']) {
    const r = await rawGet(ud.port, `/api/display/changes?${q}`);
    check(r.status === 400 && typeof JSON.parse(r.body).error === 'string', `/api/display/changes?${q} → ${r.status} ${r.body}`);
  }
  for (const p of ['/api/display', '/api/display?at=', '/api/display?at=abc', '/api/display?at=1.5', '/api/display?at=-1',
    `/api/display?at=${ch.span + 1}`, '/api/display?at=99999999999999999999999']) {
    const r = await rawGet(ud.port, p);
    check(r.status === 400 && /json/.test(r.type || '') && typeof JSON.parse(r.body).error === 'string', `${p} → ${r.status} ${r.body}`);
  }
  process.kill(ud.proc.pid, 'SIGINT');
  check((await waitExit(ud.proc)) === 0, 'vigil ui --display: SIGINT did not exit 0');
  // A .vgd with errors: vigil display's errors on stderr, the timeline served, the
  // display routes answer them at their file:line:col (changes 200, as a query's errors;
  // a scene 422).
  fs.writeFileSync(path.join(dir, 'bad.vgd'), fs.readFileSync(vgd, 'utf8').replace('show Process as circle', 'show Proces as circle'));
  const cliBad = runAny(vigil, ['display', 'check', 'bad.vgd', 'run1'], { cwd: dir });
  check(cliBad.status === 2 && /^bad\.vgd:\d+:\d+: error: no relation 'Proces'/.test(cliBad.stderr), `vigil display check: ${cliBad.stderr}`);
  const cliLines = cliBad.stderr.trim().split('\n').slice(0, -1); // its last line is vigil display's own
  const ub = await startUi(['run1', '--port', '0', '--assets', assets, '--display', 'bad.vgd'], dir);
  check(ub.stderr().startsWith(cliLines.join('\n') + '\n'), `vigil ui's stderr:\n${ub.stderr()}\nvigil display check's:\n${cliBad.stderr}`);
  check((await rawGet(ub.port, '/api/rows')).status === 200, 'the timeline is not served beside a bad display');
  for (const p of ['/api/display?at=0', '/api/display/changes']) {
    const r = await rawGet(ub.port, p);
    const j = JSON.parse(r.body);
    check(r.status === (p.includes('changes') ? 200 : 422) && typeof j.error === 'string' && !j.changes, `${p} with a bad display → ${r.status}`);
    check(j.errors.map((e) => e.text).join('\n') === cliLines.join('\n'), `${p}: errors ${JSON.stringify(j.errors)}`);
    const [, l0, c0] = cliLines[0].match(/^bad\.vgd:(\d+):(\d+)/);
    check(j.errors[0].file === 'bad.vgd' && j.errors[0].line === Number(l0) && j.errors[0].col === Number(c0), `first error at ${JSON.stringify(j.errors[0])}`);
  }
  process.kill(ub.proc.pid, 'SIGINT');
  check((await waitExit(ub.proc)) === 0, 'vigil ui with a bad display: SIGINT did not exit 0');
  // --export with it: the errors, nothing written, status 2
  const xb = runAny(vigil, ['ui', '--export', 'page3', '--assets', assets, '--display', 'bad.vgd', 'run1'], { cwd: dir });
  check(xb.status === 2 && xb.stderr.startsWith(cliLines.join('\n') + '\n') && /nothing written/.test(xb.stderr) && !fs.existsSync(path.join(dir, 'page3')),
    `vigil ui --export --display bad.vgd: status ${xb.status}: ${xb.stderr}`);

  // Bad command lines: one line, status 2.
  for (const args of [['--port', 'x', 'run1'], ['--bind', 'nowhere', '--port', '0', 'run1'], ['nosuchtrace'], []]) {
    const r = runAny(vigil, ['ui', ...args], { cwd: dir });
    check(r.status === 2 && r.stderr.trim().split('\n').length === 1, `vigil ui ${args.join(' ')}: status ${r.status}: ${r.stderr}`);
  }
});
