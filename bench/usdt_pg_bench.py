#!/usr/bin/env python3
"""bench/usdt_pg_bench.py BUILD_DIR: pgbench throughput of stock PostgreSQL with its SDT
probe sites armed by vigil (issue 26, docs/usdt.md), against the server without vigil.

Debian's PostgreSQL (the newest /usr/lib/postgresql/VER/bin), started here in a temporary
directory (tests/logmodel/pgharness.py): one data directory, pgbench -i at scale 5,
fsync and synchronous_commit off and autovacuum off (CPU-bound runs). Configurations,
each a fresh start of the server on that data directory:

  none     postgres alone, no vigil
  record   under vigil record with no --usdt (processes, threads, sockets, the server's
           stderr): what the probes add comes on top of this
  buffer   under vigil record --usdt 'postgresql:buffer__*' (the buffer-pool probes)
  all      under vigil record --usdt 'postgresql:*' (all 71 sites, lwlock__* included;
           those the CLI could plan on the jump path, docs/usdt.md)
  all-int3 the same with --usdt-int3: every site on the breakpoint path

Each repetition runs the five in turn (the order rotated every repetition), each
driven by `pgbench -n -c 2 -j 2 -t T` (a count of transactions, not a time). Figures:
median over repetitions of tps(config) / tps(none) of the same repetition, and of the
server's CPU per transaction (the postmaster with its reaped backends and live
children, bench/logmodel_pg.py) config / none: on a shared machine tps scatters, CPU
per transaction much less. The traces are checked: each holds at least one
buffer__read__done per transaction, and the `all` trace as many transaction__commit as
transactions. First, the CPU time of planning the server's sites (`vigil usdt plan`)
with an empty plan cache and from the cache (docs/usdt.md, "Plan cache"), medians of 3.
Writes BENCH_OUT/usdt_pg.json. Settings: BENCH_USDT_PG_TX (transactions
per client, default 2000), BENCH_USDT_PG_REPS (default 5). VIGIL_BENCH_SMOKE=1: scale 1,
100 transactions per client, 1 repetition (bench/README.md, "Smoke run")."""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "logmodel"))
import pgharness  # noqa: E402
from logmodel_pg import pg_bin, server_cpu  # noqa: E402

SMOKE = os.environ.get("VIGIL_BENCH_SMOKE") == "1"
TX = int(os.environ.get("BENCH_USDT_PG_TX", "100" if SMOKE else "2000"))
REPS = int(os.environ.get("BENCH_USDT_PG_REPS", "1" if SMOKE else "5"))
SCALE = "1" if SMOKE else "5"
CLIENTS = 2
OUT = os.environ.get("BENCH_OUT", os.path.join(BUILD, "bench"))
VIGIL = os.path.join(BUILD, "bin", "vigil")
CONFIGS = {"none": None, "record": "", "buffer": "postgresql:buffer__*", "all": "postgresql:*",
           "all-int3": "postgresql:*"}


def say(msg):
    print(msg, file=sys.stderr, flush=True)


def count_events(trace, names):
    """{name: count} of the trace's events with those names, read as a stream."""
    counts = dict.fromkeys(names, 0)
    keys = {'"name":"%s"' % n: n for n in names}
    p = subprocess.Popen([VIGIL, "dump", "--json", trace], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    for line in p.stdout:
        for k, n in keys.items():
            if k in line.replace(" ", ""):
                counts[n] += 1
    if p.wait():
        raise SystemExit("usdt_pg_bench: vigil dump %s exited %d" % (trace, p.returncode))
    return counts


def run_config(pg, name, rep):
    """One start of the server under configuration NAME, one pgbench; returns (tps, CPU
    seconds per transaction). The trace is checked, then removed."""
    trace = pg.path("trace-%s-%d" % (name, rep))
    pattern = CONFIGS[name]
    if pattern is not None:
        pg.start(record=trace, record_args=(["--usdt", pattern] if pattern else []) +
                 (["--usdt-int3"] if name.endswith("-int3") else []))
    else:
        pg.start()
    try:
        cpu0 = server_cpu(pg)
        out = pg.pgbench(["-n", "-c", str(CLIENTS), "-j", str(CLIENTS), "-t", str(TX)])
        cpu1 = server_cpu(pg)
    finally:
        pg.stop()
    m = re.search(r"number of transactions actually processed: (\d+)", out)
    done = int(m.group(1)) if m else 0
    if done != CLIENTS * TX:
        raise SystemExit("usdt_pg_bench: pgbench processed %d transactions, %d expected"
                         % (done, CLIENTS * TX))
    if pattern and rep == 0:
        c = count_events(trace, ["postgresql.buffer__read__done",
                                 "postgresql.transaction__commit"])
        if c["postgresql.buffer__read__done"] < done or \
                (name.startswith("all") and c["postgresql.transaction__commit"] < done):
            raise SystemExit("usdt_pg_bench: %s: %s for %d transactions" % (trace, c, done))
    shutil.rmtree(trace, ignore_errors=True)
    return pgharness.tps(out), (cpu1 - cpu0) / done


def planning_cpu(postgres, cache):
    """CPU seconds of `vigil usdt plan` on the server binary, medians of 3: (cold, with the
    plan cache emptied first; warm, from the cache). Both must print the same plans."""
    def once(cold):
        if cold:
            shutil.rmtree(cache, ignore_errors=True)
        t0 = os.times()
        r = subprocess.run([VIGIL, "usdt", "plan", postgres, "postgresql:*"],
                           capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, VIGIL_CACHE_DIR=cache))
        t1 = os.times()
        if r.returncode or not r.stdout.strip():
            raise SystemExit("usdt_pg_bench: vigil usdt plan: " + r.stderr[-2000:])
        return (t1.children_user - t0.children_user + t1.children_system -
                t0.children_system), r.stdout

    cold = [once(True) for _ in range(3)]
    warm = [once(False) for _ in range(3)]
    if len({out for _, out in cold + warm}) != 1:
        raise SystemExit("usdt_pg_bench: the cached plans differ from the planned ones")
    return statistics.median(c for c, _ in cold), statistics.median(c for c, _ in warm)


def main():
    b = pg_bin()
    if not b or not os.path.exists(os.path.join(b, "pgbench")):
        raise SystemExit("usdt_pg_bench: Debian's PostgreSQL is not installed")
    os.makedirs(OUT, exist_ok=True)
    pg = pgharness.PgServer(b, os.path.join(BUILD, "bin"))
    os.environ["VIGIL_CACHE_DIR"] = pg.path("cache")  # the plan cache (docs/usdt.md), ours
    try:
        plan_cold, plan_warm = planning_cpu(os.path.join(b, "postgres"), pg.path("plans"))
        say("usdt-pg: planning postgres: %.3f s CPU cold, %.3f s from the plan cache" %
            (plan_cold, plan_warm))
        pg.initdb({"fsync": "off", "synchronous_commit": "off", "autovacuum": "off"})
        pg.start()
        r = subprocess.run(pg.client("pgbench") + ["-i", "-q", "-s", SCALE, "postgres"],
                           capture_output=True, text=True)
        if r.returncode:
            raise SystemExit("usdt_pg_bench: pgbench -i: " + r.stderr[-2000:])
        pg.stop()
        say("usdt-pg: %d repetitions of %d x %d transactions, scale %s, configurations %s"
            % (REPS, CLIENTS, TX, SCALE, ", ".join(CONFIGS)))
        names = list(CONFIGS)
        rows = []
        for rep in range(REPS):
            k = rep % len(names)
            order = names[k:] + names[:k]
            res = {n: run_config(pg, n, rep) for n in order}
            rows.append(res)
            say("rep %d: %s" % (rep, ", ".join("%s %.0f tps %.0f us CPU/tx" % (
                n, res[n][0], res[n][1] * 1e6) for n in names)))
    finally:
        pg.cleanup()
    summary = {"reps": REPS, "transactions": CLIENTS * TX, "scale": int(SCALE),
               "smoke": SMOKE, "patterns": CONFIGS,
               "plan_cpu_s": {"cold": plan_cold, "cached": plan_warm}}
    print("planning postgres's sites (vigil usdt plan, CPU s, median of 3): cold %.3f, "
          "from the plan cache %.3f" % (plan_cold, plan_warm))
    print("pgbench, stock PostgreSQL, vigil --usdt against no vigil (median of %d)" % REPS)
    print("| configuration | tps | tps ratio to none | CPU us/tx | CPU ratio to none |")
    print("|---|---|---|---|---|")
    for n in names:
        tps = statistics.median(r[n][0] for r in rows)
        cpu = statistics.median(r[n][1] for r in rows)
        tr = statistics.median(r[n][0] / r["none"][0] for r in rows)
        cr = statistics.median(r[n][1] / r["none"][1] for r in rows)
        summary[n] = {"tps": tps, "cpu_us_per_tx": cpu * 1e6, "tps_ratio": tr,
                      "cpu_ratio": cr, "tps_all": [r[n][0] for r in rows],
                      "cpu_us_all": [r[n][1] * 1e6 for r in rows]}
        print("| %s | %.0f | %.3f | %.0f | %.3f |" % (n, tps, tr, cpu * 1e6, cr))
    with open(os.path.join(OUT, "usdt_pg.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
