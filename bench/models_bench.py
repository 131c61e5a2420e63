#!/usr/bin/python3
"""bench/models_bench.py (`make bench-models`): the precision of behaviour models of stock
PostgreSQL, evaluated as the behaviour-model paper does: scenarios, each with several
variations (magnitudes of one change) and repeated runs; a case is correct when an
event indicative of the change is in the top 3 of `vigil diff --events-by chi2`'s events
report. Zero lines of integration: Debian's PostgreSQL 15 at debug5, started here on a
Unix socket, pgbench as the load, its messages captured through syslog (one call site,
"[%lu-%d] %s") or written to stderr (write(2)), each message's template an event.

  checkpoint   a CHECKPOINT every 1, 2, 4 s against none
  autovacuum   autovacuum_naptime 1s, 2s, 5s against 1min

Each (scenario, destination, repeat) records one baseline and one run per variation.

Beside them, the synthetic subjects of tests/logmodel (synthetic.py's cases, whose
changes are injected at known magnitudes): lock (the hold of a lock 1.5x, 3x, 10x: the
transition lock.acquired -> lock.released in the times report), cache (hit rate 90% ->
80%, 60%: cache.miss/cache.hit in the events report, lookup -> cache.miss/hit in the
transitions report) and mix (10%, 30% of the requests after login moved from browse to
buy: login -> buy/browse in the transitions report). Each repeat records a baseline and
every variation with one seed (another seed per repeat); the models are the recorded
ones, measured times included (the test logmodel.synthetic.lock ranks exact sketches).

    models_bench.py BUILD [--repeats R] [--seconds N] [--dest syslog,stderr]
                          [--scenario checkpoint,autovacuum] [--synthetic lock,cache,mix]
                          [--smoke]

--scenario '' or --synthetic '' leaves that part out."""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "logmodel"))
import pg_stock  # noqa: E402
import pgharness  # noqa: E402
import synthetic  # noqa: E402

VARIATIONS = {"checkpoint": ["1", "2", "4"], "autovacuum": ["'1s'", "'2s'", "'5s'"]}


def synthetic_cases(build, names, repeats):
    """Ranks of the injected changes of the synthetic subjects: {(case, report): [(variation,
    rank)]}, recorded in a temporary directory."""
    import tempfile
    vigil = os.path.join(build, "bin", "vigil")
    env = dict(os.environ, VIGIL_LOG_PASS="none")  # modelled, never written
    env.pop("VIGIL_LOG", None)
    env.pop("VIGIL_LOG_TIMING", None)
    results = {}
    with tempfile.TemporaryDirectory(prefix="vigil-models-bench-") as tmp:
        for name in names:
            c = synthetic.CASES[name]
            subject = os.path.join(build, "bin", c["subject"])
            for rep in range(repeats):
                seed = synthetic.SEED + 100 * rep
                models = {}
                for var, value in [("base", c["base"])] + c["changes"]:
                    out = os.path.join(tmp, "%s-%s-%d" % (name, var, rep))
                    synthetic.run([vigil, "record", "-q", "-o", out, "--", subject, "run",
                                   "--n", str(c["n"]), c["param"], str(value), "--seed",
                                   str(seed)], env=env)
                    models[var] = out + ".vgm"
                    synthetic.run([vigil, "model", out, "-o", models[var]])
                for var, _ in c["changes"]:
                    doc = json.loads(synthetic.run([vigil, "diff", models["base"], models[var],
                                                    "--format", "json", "--top", "0"]).stdout)
                    for report, want in c["checks"]:
                        rank, _ = synthetic.rank_of(doc, report, want)
                        results.setdefault((name, report), []).append((var, rank))
                        print(f"{name} {var} {report} repeat {rep + 1}: injected change at "
                              f"rank {rank}", flush=True)
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=12)
    ap.add_argument("--dest", default="syslog,stderr")
    ap.add_argument("--scenario", default="checkpoint,autovacuum")
    ap.add_argument("--synthetic", default="lock,cache,mix")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    if a.smoke or os.environ.get("VIGIL_BENCH_SMOKE") == "1":
        a.repeats, a.seconds, a.dest = 1, 4, "syslog"
    build = os.path.abspath(a.build)
    synth = synthetic_cases(build, [n for n in a.synthetic.split(",") if n], a.repeats)
    pg_bins = sorted(os.path.join("/usr/lib/postgresql", v, "bin")
                     for v in os.listdir("/usr/lib/postgresql")) \
        if os.path.isdir("/usr/lib/postgresql") else []
    if not pg_bins and a.scenario:
        print("models_bench: PostgreSQL is not installed (scripts/install-deps.sh)")
        print_table([], synth)
        return 1

    class Args:
        pass
    results = {}  # (scenario, dest) -> [(variation, rank)]
    for scenario in [x for x in a.scenario.split(",") if x]:
        for dest in a.dest.split(","):
            for rep in range(a.repeats):
                o = Args()
                o.pg_bin, o.bin, o.keep = pg_bins[-1], os.path.join(build, "bin"), None
                o.syslog_sink = os.path.join(build, "bin", "logmodel_syslog_sink.so")
                pg = pg_stock.start_server(o, dest)
                try:
                    base = pg_stock.record_run(pg, o.bin, "base", scenario, False, None,
                                               dest, a.seconds)
                    for v in VARIATIONS[scenario]:
                        name = "var-" + v.strip("'")
                        other = pg_stock.record_run(pg, o.bin, name, scenario, True, v, dest,
                                                    a.seconds)
                        rank = pg_stock.rank_of_indicative(pg_stock.diff(o.bin, base, other),
                                                           scenario)
                        results.setdefault((scenario, dest), []).append((v, rank))
                        print(f"{scenario} {dest} {v} repeat {rep + 1}: first indicative "
                              f"event at rank {rank}", flush=True)
                except pgharness.PgError as e:
                    print(f"{scenario} {dest} repeat {rep + 1}: {e}")
                finally:
                    pg.cleanup()
    print_table(results, synth)
    return 0


# How each synthetic subject logs, and its variations as the table names them.
SYNTH_THROUGH = {"lock": "VG_LOG", "cache": "VG_LOG", "mix": "syslog (preload)"}


def print_table(results, synth):
    rows = [(scenario, dest, ", ".join(v.strip("'") for v in VARIATIONS[scenario]), r)
            for (scenario, dest), r in sorted(results.items())]
    rows += [("%s (synthetic), %s report" % (name, report), SYNTH_THROUGH[name],
              ", ".join(v for v, _ in synthetic.CASES[name]["changes"]), r)
             for (name, report), r in synth.items()]
    print("\n| scenario | through | variations | cases | correct (top 3) | precision | "
          "ranks |")
    print("|---|---|---|---:|---:|---:|---|")
    for scenario, dest, variations, r in rows:
        ok = sum(1 for _, rank in r if rank is not None and rank <= 3)
        print(f"| {scenario} | {dest} | {variations} | {len(r)} | {ok} | {ok / len(r):.2f} | "
              f"{' '.join(str(rank) for _, rank in r)} |")


if __name__ == "__main__":
    sys.exit(main())
