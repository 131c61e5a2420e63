// bench/duckdb/duck.cjs: DuckDB as a peer in bench/query_bench.py (bench/README.md).
//
//   node duck.cjs JOB.json
//
// JOB: {"tables": {NAME: {"csv": PATH, "columns": [[col, type], ...]}},
//       "queries": [{"key": K, "sql": SELECT, "check": SELECT}],
//       "threads": [1, 2], "reps": 3}
// Loads each CSV into a DuckDB table of its own (in memory; loading not timed with the
// queries), then at each thread count runs every query `reps` times as
// SELECT count(*) FROM (SQL) and keeps the best, and runs its `check` query once (its row,
// as texts, is compared with SQLite's by the caller). Prints one JSON object.
'use strict';
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');

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
      for (let i = 0; i < job.reps; i++) {
        const start = process.hrtime.bigint();
        await (await con.run(`SELECT count(*) FROM (${q.sql})`)).getRows();
        best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e9);
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
