// bench/duckdb/duck.cjs: DuckDB as a peer in bench/query_bench.py (bench/README.md).
//
//   node duck.cjs JOB.json
//
// JOB: {"tables": {NAME: {"csv": PATH, "columns": [[col, type], ...]}},
//       "queries": [{"key": K, "sql": SELECT, "check": SELECT}],
//       "threads": [1, 2], "reps": 3,
//       "rt": {"1": {"priority": 50, "cpus": "0", "all_cpus": "0,1"}, "2": ...} (optional)}
// Loads each CSV into a DuckDB table of its own (in memory; loading not timed with the
// queries), then at each thread count runs every query `reps` times as
// SELECT count(*) FROM (SQL) and keeps the best, and runs its `check` query once (its row,
// as texts, is compared with SQLite's by the caller). Prints one JSON object.
// With `rt` (bench/pinned.py, BENCH_RT=1) the timed runs at a thread count run under
// SCHED_FIFO at its priority (`chrt -a -f -p`: every thread of this process) and on its
// CPUs (`taskset -a -p -c`), as the other sides' timed runs do; loading and checks do not.
'use strict';
const fs = require('fs');
const { execFileSync } = require('child_process');
const { DuckDBInstance } = require('@duckdb/node-api');

// The pinned mode on (rt) or off (null) for every thread of this process.
function pinned(rt, on) {
  const pid = String(process.pid);
  if (rt.cpus) {
    execFileSync('taskset', ['-a', '-p', '-c', on ? rt.cpus : rt.all_cpus, pid],
                 { stdio: 'ignore' });
  }
  execFileSync('chrt', on ? ['-a', '-f', '-p', String(rt.priority), pid]
                          : ['-a', '-o', '-p', '0', pid], { stdio: 'ignore' });
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
  for (const threads of job.threads) {
    await con.run(`SET threads = ${threads}`);
    const per = {};
    for (const q of job.queries) {
      const check = await (await con.run(q.check)).getRows();
      let best = Infinity;
      const rt = job.rt && job.rt[String(threads)];
      if (rt) pinned(rt, true);
      try {
        for (let i = 0; i < job.reps; i++) {
          const start = process.hrtime.bigint();
          await (await con.run(`SELECT count(*) FROM (${q.sql})`)).getRows();
          best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e9);
        }
      } finally {
        if (rt) pinned(rt, false);
      }
      per[q.key] = { best_s: best, check: check[0].map((x) => (x === null ? null : String(x))) };
    }
    out.runs[threads] = per;
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(`duck.cjs: ${e.message}\n`);
  process.exit(1);
});
