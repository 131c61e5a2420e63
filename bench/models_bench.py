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

    models_bench.py BUILD [--repeats R] [--seconds N] [--dest syslog,stderr]
                          [--scenario checkpoint,autovacuum] [--smoke]"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "logmodel"))
import pg_stock  # noqa: E402
import pgharness  # noqa: E402

VARIATIONS = {"checkpoint": ["1", "2", "4"], "autovacuum": ["'1s'", "'2s'", "'5s'"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=12)
    ap.add_argument("--dest", default="syslog,stderr")
    ap.add_argument("--scenario", default="checkpoint,autovacuum")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    if a.smoke or os.environ.get("VIGIL_BENCH_SMOKE") == "1":
        a.repeats, a.seconds, a.dest = 1, 4, "syslog"
    build = os.path.abspath(a.build)
    pg_bins = sorted(os.path.join("/usr/lib/postgresql", v, "bin")
                     for v in os.listdir("/usr/lib/postgresql")) \
        if os.path.isdir("/usr/lib/postgresql") else []
    if not pg_bins:
        print("models_bench: PostgreSQL is not installed (scripts/install-deps.sh)")
        return 1

    class Args:
        pass
    results = {}  # (scenario, dest) -> [(variation, rank)]
    for scenario in a.scenario.split(","):
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
    print("\n| scenario | through | variations | cases | correct (top 3) | precision | "
          "ranks |")
    print("|---|---|---|---:|---:|---:|---|")
    for (scenario, dest), rows in results.items():
        ok = sum(1 for _, r in rows if r is not None and r <= 3)
        print(f"| {scenario} | {dest} | {', '.join(v.strip(chr(39)) for v in VARIATIONS[scenario])}"
              f" | {len(rows)} | {ok} | {ok / len(rows):.2f} | "
              f"{' '.join(str(r) for _, r in rows)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
