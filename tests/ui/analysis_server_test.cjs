// The analysis views' server without a browser (tests/ui.cmake: ui.analysis_server; also
// in the sanitizer build): the model workbench's /api/model/diff is vigil diff --format
// json --top 0's document (plus each row's node or edge), for the default and another
// minimum support and alpha; the graph holds both models' events and transitions with
// their counts; an edge's CDF carries the sketch quantiles vigil diff reports; the path
// CDF is vigil cdf's; bad arguments are 4xx JSON. The network browser over a folder of
// networks (copies of one network of the three-tier example, tests/ui/fixtures) lists
// them all, answers each with its file's JSON, and refuses what is out of range. Bad
// command lines: one line, status 2. "/" is the analysis page.
const fs = require('fs');
const path = require('path');
const { BIN, run, runAny, startUi, waitExit, rawGet, main, check } = require('./lib.cjs');

const vigil = path.join(BIN, 'vigil');

function bucket(ns) {
  if (ns < 64) return ns;
  const octave = Math.floor(Math.log2(ns));
  return (octave - 6 + 1) * 64 + (Math.floor(ns / 2 ** (octave - 6)) & 63);
}

function model(events, trans) {
  const out = ['vigil-model 1', 'source analysis_server_test'];
  events.forEach(([site, fmt, n], i) => out.push(`event ${i + 1} ${n} ${site} ${JSON.stringify(fmt)}`));
  for (const [key, [n, t]] of Object.entries(trans)) out.push(`transition ${key} ${n} ${n * t} ${bucket(t)}:${n}`);
  return out.join('\n') + '\n';
}

async function json(port, p) {
  const r = await rawGet(port, p);
  return { status: r.status, body: JSON.parse(r.body) };
}

const strip = (d) => {
  for (const k of ['events', 'transitions', 'times']) for (const r of d[k]) { delete r.node; delete r.edge; }
  return d;
};

main('ui-analysis-server', async (dir) => {
  const assets = path.join(dir, 'assets');
  fs.mkdirSync(assets);
  fs.writeFileSync(path.join(assets, 'analysis.html'), '<!doctype html><title>analysis</title>');
  fs.writeFileSync(path.join(assets, 'index.html'), '<!doctype html><title>timeline</title>');
  const ev = [['src/a.c:1', 'start', 1000], ['src/a.c:2', 'hit', 900], ['src/a.c:3', 'miss', 100], ['src/b.c:4', 'done', 1000]];
  const ev2 = [['src/a.c:1', 'start', 1000], ['src/a.c:2', 'hit', 500], ['src/a.c:3', 'miss', 500], ['src/b.c:4', 'done', 1000], ['src/b.c:9', 'new', 5]];
  fs.writeFileSync(path.join(dir, 'base.vgm'), model(ev, { '1 2': [900, 20000], '1 3': [100, 50000], '2 4': [900, 100000], '3 4': [100, 2000000], '4 1': [999, 10000] }));
  fs.writeFileSync(path.join(dir, 'other.vgm'), model(ev2, { '1 2': [500, 20000], '1 3': [500, 50000], '2 4': [500, 150000], '3 4': [500, 2000000], '4 1': [999, 10000], '4 5': [5, 1000] }));

  const ui = await startUi(['base.vgm', 'other.vgm', '--port', '0', '--assets', assets], dir);
  const home = await rawGet(ui.port, '/');
  check(home.status === 200 && home.body.includes('analysis'), `/ is not the analysis page: ${home.status} ${home.body}`);
  for (const [args, q] of [[[], ''], [['--min-support', '200', '--alpha', '0.5'], '?min_support=200&alpha=0.5']]) {
    const want = JSON.parse(run(vigil, ['diff', '--format', 'json', '--top', '0', ...args, 'base.vgm', 'other.vgm'], { cwd: dir }));
    const got = await json(ui.port, `/api/model/diff${q}`);
    check(got.status === 200 && got.body.transitions.every((r) => Number.isInteger(r.edge)) && got.body.events.every((r) => Number.isInteger(r.node)), `diff${q}: rows without their node or edge`);
    check(JSON.stringify(strip(got.body)) === JSON.stringify(want), `diff${q} differs from vigil diff ${args.join(' ')}`);
  }
  const d = (await json(ui.port, '/api/model/diff')).body;
  const g = (await json(ui.port, '/api/model/graph')).body;
  check(g.nodes.length === 5 && g.edges.length === 6, `graph: ${g.nodes.length} nodes, ${g.edges.length} edges (5, 6 expected)`);
  const hit = g.nodes.find((n) => n.fmt === 'hit');
  check(hit.count[0] === 900 && hit.count[1] === 500, `hit counts ${hit.count}`);
  const nw = g.nodes.find((n) => n.fmt === 'new');
  check(nw.count[0] === 0 && nw.count[1] === 5, `new counts ${nw.count}`);
  // the times report's first row: its edge's CDF quantiles are vigil diff's
  const t0 = d.times[0];
  const c = (await json(ui.port, `/api/model/cdf?edge=${t0.edge}`)).body;
  check(c.runs[0].p50 === t0.p50_baseline_ns && c.runs[1].p50 === t0.p50_other_ns && c.emd_ns === t0.emd_ns,
    `cdf of edge ${t0.edge}: p50 ${c.runs[0].p50}/${c.runs[1].p50}, EMD ${c.emd_ns}; vigil diff ${t0.p50_baseline_ns}/${t0.p50_other_ns}, ${t0.emd_ns}`);
  check(c.runs.every((r) => r.points.length && r.points[r.points.length - 1][1] === 1), 'a CDF does not end at 1');
  // the path CDF is vigil cdf's, in each run
  const start = g.nodes.find((n) => n.fmt === 'start'), done = g.nodes.find((n) => n.fmt === 'done');
  const p = (await json(ui.port, `/api/model/path?from=${start.id}&to=${done.id}`)).body;
  for (const [i, f] of [[0, 'base.vgm'], [1, 'other.vgm']]) {
    const w = JSON.parse(run(vigil, ['cdf', f, '--from', 'src/a.c:1', '--to', 'src/b.c:4', '--format', 'json'], { cwd: dir }));
    check(p.runs[i].walks_reached === w.walks_reached && p.runs[i].paths === w.paths && p.runs[i].percentiles_ns.p50 === w.percentiles_ns.p50 &&
      p.runs[i].percentiles_ns.p99 === w.percentiles_ns.p99, `path CDF ${f}: ${JSON.stringify(p.runs[i])} vs vigil cdf ${JSON.stringify(w)}`);
  }
  const pm = (await json(ui.port, `/api/model/path?from=${nw.id}&to=${start.id}`)).body;
  check(pm.runs[0].missing === 'the start event', `an event of one run only: ${JSON.stringify(pm.runs[0])}`);
  for (const [q, status] of [['/api/model/diff?min_support=x', 400], ['/api/model/diff?min_support=-1', 400], ['/api/model/diff?alpha=0', 400],
    ['/api/model/cdf', 400], ['/api/model/cdf?edge=99', 404], ['/api/model/cdf?edge=-1', 404], ['/api/model/path?from=0', 400],
    ['/api/model/path?from=0&to=99', 404], ['/api/relations', 404], ['/api/nets', 404]]) {
    const r = await rawGet(ui.port, q);
    check(r.status === status && JSON.parse(r.body).error, `${q}: ${r.status} ${r.body}, ${status} expected`);
  }
  process.kill(ui.proc.pid, 'SIGINT');
  check((await waitExit(ui.proc)) === 0, 'vigil ui (models) did not exit 0 on SIGINT');

  // ---- the network browser over a folder of networks ----
  const nets = path.join(dir, 'nets');
  fs.mkdirSync(nets);
  // copies as text (ns since the epoch lose digits as JavaScript numbers)
  const one = fs.readFileSync(path.join(__dirname, 'fixtures', 'net-three-tier.json'), 'utf8');
  const N = 30;
  for (let i = 1; i <= N; i++)
    fs.writeFileSync(path.join(nets, `net-${String(i).padStart(5, '0')}.json`), one.replace(/^\{"network":\d+,/, `{"network":${i},`));
  fs.writeFileSync(path.join(nets, 'index.json'), JSON.stringify({ networks_count: N }));
  const report = JSON.parse(run(vigil, ['net', 'report', '--json', 'nets'], { cwd: dir }));
  const un = await startUi(['nets', '--port', '0', '--assets', assets], dir);
  const list = (await json(un.port, '/api/nets')).body;
  check(list.networks.length === N && list.networks.every((n, i) => n.network === i + 1), `${list.networks.length} networks listed, ${N} written`);
  const r0 = report.networks[0];
  check(list.networks[0].messages === r0.messages && list.networks[0].bytes === r0.bytes && list.networks[0].threads === r0.threads &&
    list.networks[0].servers === r0.servers, `figures ${JSON.stringify(list.networks[0])} vs vigil net report ${JSON.stringify(r0)}`);
  check(Math.abs(list.response_ns.p50 / 1e6 - report.summary.response_ms.p50) < 1e-6, 'p50 differs from vigil net report');
  const n7 = (await json(un.port, '/api/net?n=6')).body;
  const file7 = JSON.parse(fs.readFileSync(path.join(nets, 'net-00007.json'), 'utf8'));
  check(n7.file === 'net-00007.json', `n=6 is ${n7.file}`);
  delete n7.file;
  check(require('util').isDeepStrictEqual(n7, file7), '/api/net?n=6 is not the JSON of net-00007.json');
  for (const [q, status] of [['/api/net', 400], ['/api/net?n=-1', 404], [`/api/net?n=${N}`, 404], ['/api/net?n=1x', 400], ['/api/model/info', 404]]) {
    const r = await rawGet(un.port, q);
    check(r.status === status && JSON.parse(r.body).error, `${q}: ${r.status} ${r.body}, ${status} expected`);
  }
  process.kill(un.proc.pid, 'SIGINT');
  check((await waitExit(un.proc)) === 0, 'vigil ui (nets) did not exit 0 on SIGINT');

  // bad command lines: one line on stderr, status 2
  fs.writeFileSync(path.join(dir, 'bad.vgm'), 'vigil-model 2\n');
  fs.mkdirSync(path.join(dir, 'empty'));
  fs.writeFileSync(path.join(dir, 'empty', 'index.json'), '{}');
  for (const [args, words] of [[['base.vgm', 'missing.vgm'], 'missing.vgm'], [['base.vgm', 'bad.vgm'], 'bad.vgm:1'], [['--models', 'base.vgm'], 'BASE and OTHER'],
    [['empty'], 'no network'], [['--models', 'base.vgm', 'other.vgm', '--display', 'x.vgd'], 'without'], [['--models', '--nets', 'a', 'b'], 'alone']]) {
    const r = runAny(vigil, ['ui', ...args, '--port', '0', '--assets', assets], { cwd: dir, timeout: 60000 });
    const lines = r.stderr.trim().split('\n');
    check(r.status === 2 && lines.length === 1 && lines[0].includes(words), `vigil ui ${args.join(' ')}: status ${r.status}, ${r.stderr}`);
  }
});
