// bench/duckdb/duck.cjs: DuckDB as a peer in bench/query_bench.py (bench/README.md).
//
//   node duck.cjs JOB.json
//
// JOB: {"tables": {NAME: {"csv": PATH, "columns": [[col, type], ...]}},
//       "queries": [{"key": K, "sql": SELECT, "check": SELECT}],
//       "runs": [{"label": "1", "threads": 1, "rt": RT or null}, ...], "reps": 3}
//   RT: {"priority": 50, "main_priority": 49, "cpus": "0" or null, "all_cpus": "0,1"}
// Loads each CSV into a DuckDB table of its own (in memory; loading not timed with the
// queries), then for each run (a thread count, a mode) runs every query's `check` once (its
// row, as texts, is compared with SQLite's by the caller), then every query `reps` times as
// SELECT count(*) FROM (SQL), keeping each time and the best. Prints one JSON object, the
// runs by label.
// With `rt` (bench/pinned.py, BENCH_RT=1) a run's timed queries run under SCHED_FIFO and,
// with `cpus`, on those CPUs, as the other sides' timed runs do; loading and checks do not
// (the checks run first, so the mode is switched twice per run, not per query: each switch
// forks this large process).
// Every thread of this process gets `priority` (`chrt -a -f -p`: DuckDB's workers and the
// libuv worker running the query) except node's main thread, which gets `main_priority`,
// one lower: it only waits for the query's promise, and at the same FIFO priority a busy
// event loop on a bound CPU kept DuckDB's threads there from running at all (FIFO does not
// share a CPU between equal priorities). One lower, it still runs before any normal-priority
// process when the query ends, but never before DuckDB's own threads.
'use strict';
const fs = require('fs');
const { execFileSync } = require('child_process');
const { DuckDBInstance } = require('@duckdb/node-api');

// The pinned mode on (rt) or off (null) for every thread of this process: one shell,
// forked once, runs taskset, then chrt for all threads, then chrt for the main thread alone.
function pinned(rt, on) {
  const pid = String(process.pid);
  const cmds = [];
  if (rt.cpus) cmds.push(`taskset -a -p -c ${on ? rt.cpus : rt.all_cpus} ${pid}`);
  if (on) {
    cmds.push(`chrt -a -f -p ${rt.priority} ${pid}`);
    cmds.push(`chrt -f -p ${rt.main_priority} ${pid}`);
  } else {
    cmds.push(`chrt -a -o -p 0 ${pid}`);
  }
  execFileSync('/bin/sh', ['-c', cmds.join(' && ') + ' >/dev/null'], { stdio: 'ignore' });
}

async function main() {
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const instance = await DuckDBInstance.create(':memory:');
  const con = await instance.connect();
  const out = { version: null, load_s: {}, runs: {} };
  out.version = (await (await con.run('SELECT version()')).getRows())[0][0];
  for (const [name, t] of Object.entries(job.tables)) {
    const cols = t.columns.map(([c, ty]) => `'${c}': '${ty}'`).join(', ');
    const start = process.hrtime.bigint();
    await con.run(`CREATE TABLE "${name}" AS SELECT * FROM read_csv('${t.csv}', ` +
                  `header = true, columns = {${cols}})`);
    out.load_s[name] = Number(process.hrtime.bigint() - start) / 1e9;
  }
  for (const run of job.runs) {
    await con.run(`SET threads = ${run.threads}`);
    const per = {};
    for (const q of job.queries) {
      const check = await (await con.run(q.check)).getRows();
      per[q.key] = { best_s: Infinity, runs_s: [],
                     check: check[0].map((x) => (x === null ? null : String(x))) };
    }
    if (run.rt) pinned(run.rt, true);
    try {
      for (const q of job.queries) {
        for (let i = 0; i < job.reps; i++) {
          const start = process.hrtime.bigint();
          await (await con.run(`SELECT count(*) FROM (${q.sql})`)).getRows();
          const s = Number(process.hrtime.bigint() - start) / 1e9;
          per[q.key].runs_s.push(s);
          per[q.key].best_s = Math.min(per[q.key].best_s, s);
        }
      }
    } finally {
      if (run.rt) pinned(run.rt, false);
    }
    out.runs[run.label] = per;
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(`duck.cjs: ${e.message}\n`);
  process.exit(1);
});
