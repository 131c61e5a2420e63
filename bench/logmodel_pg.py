#!/usr/bin/env python3
"""bench/logmodel_pg.py BUILD_DIR: pgbench throughput with log capture on versus off.

PostgreSQL from Debian's packages (the newest /usr/lib/postgresql/VER/bin), started here
in temporary directories (tests/logmodel/pgharness.py), always under `vigil record` with
vigil's logging adapter (build/bin/pg_vigil_log.so, shared_preload_libraries) and
VIGIL_LOG_PASS=warning. Configurations:

  off         log_min_messages = debug5, VIGIL_LOG=off: the server formats every debug
              message and hands it to the adapter, which drops it (not captured, not
              written). Only capture differs from `on`.
  on          log_min_messages = debug5, capture on: every message is counted in the
              in-memory model (events, transitions, sampled times); none is written.
  production  log_min_messages = warning, VIGIL_LOG=off: no debug message is formatted at
              all (what a server runs without debug logging).

Paired and concurrent: this machine's load from other work swings pgbench by +-50% from
one run to the next, so the two configurations compared run at the same time, as two
servers (two data directories, pgbench -i at scale 5 in each), each driven by
`pgbench -n -c 1 -j 1 -T S` (TPC-B-like, synchronous_commit = off so the runs are
CPU-bound, not waiting on fsync). Both see the same load; on a CPU-bound machine the
scheduler gives both about the same CPU time, so their tps ratio is the ratio of their
costs per transaction. Each repetition runs the pairs on|off and on|production with fresh
servers, and swaps which data directory gets which configuration every repetition. The
loss is 1 - median(tps_on / tps_other), in %.

Then the same pairs with stock PostgreSQL (issue 23: no adapter, nothing loaded into the
server, log_destination = stderr, the server's stderr a file), under `vigil record`:

  stock-on       log_min_messages = debug5, capture on (the default threshold, warning):
                 each message PostgreSQL writes to stderr with write(2) is templated and
                 counted; none is written
  stock-file     log_min_messages = debug5, VIGIL_LOG=off: every message written to the
                 file (what debug logging costs without vigil)
  stock-null     log_min_messages = debug5, VIGIL_LOG=off, the server's stderr /dev/null:
                 what PostgreSQL itself spends making its debug messages, with writing
                 them nearly free (the part of the debug5 cost capture cannot remove)
  stock-default  log_min_messages = warning (PostgreSQL's default), VIGIL_LOG=off

with the pairs stock-on|stock-default (target: under 3% loss, as the behaviour-model
paper's design), stock-on|stock-null and stock-on|stock-file.

Besides tps, each run measures the CPU time the server's processes used per
transaction (/proc: the postmaster with the backends it reaped, and its children, read
before and after pgbench): on a shared machine tps pairs scatter by +-30% while CPU per
transaction does not depend on what else runs. Capture's cost is CPU in the server, so
the budget is judged on it: cost = median(cpu_on / cpu_other) - 1. A CPU-bound server
loses at most that share of its throughput (the client's time is in each transaction
too). Writes BENCH_OUT/logmodel_pg.json.
Settings: BENCH_PG_SECONDS (default 10), BENCH_PG_REPS (default 6), BENCH_PG_SCALE
(pgbench -i scale, 5), BENCH_PG_ONLY=stock (only the stock pairs). VIGIL_BENCH_SMOKE=1: 2 s, 1 repetition, scale 1 (bench/README.md,
"Smoke run"). Progress on stderr."""
import glob
import json
import os
import re
import statistics
import subprocess
import sys

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "logmodel"))
import pgharness  # noqa: E402

SMOKE = os.environ.get("VIGIL_BENCH_SMOKE") == "1"
SECONDS = int(os.environ.get("BENCH_PG_SECONDS", "2" if SMOKE else "10"))
REPS = int(os.environ.get("BENCH_PG_REPS", "1" if SMOKE else "6"))
SCALE = os.environ.get("BENCH_PG_SCALE", "1" if SMOKE else "5")
OUT = os.environ.get("BENCH_OUT", os.path.join(BUILD, "bench"))
CONFIGS = {
    "off": ({"VIGIL_LOG": "off"}, "debug5"),
    "on": ({}, "debug5"),
    "production": ({"VIGIL_LOG": "off"}, "warning"),
}
STOCK_CONFIGS = {
    "stock-on": ({}, "debug5"),
    "stock-file": ({"VIGIL_LOG": "off"}, "debug5"),
    "stock-null": ({"VIGIL_LOG": "off"}, "debug5"),  # its stderr is /dev/null (NULL_OUT)
    "stock-default": ({"VIGIL_LOG": "off"}, "warning"),
}
NULL_OUT = {"stock-null"}
MESSAGES = []  # messages captured per transaction, in each stock-on run


def pg_bin():
    found = []
    for b in glob.glob("/usr/lib/postgresql/*/bin"):
        ver = os.path.basename(os.path.dirname(b))
        if ver.isdigit() and os.path.exists(os.path.join(b, "postgres")):
            found.append((int(ver), b))
    return max(found)[1] if found else None


def _ticks(pid):
    """utime + stime + cutime + cstime of a process, in clock ticks, and its parent."""
    with open("/proc/%d/stat" % pid) as f:
        f_ = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in f_[11:15]), int(f_[1])


def server_cpu(pg):
    """CPU seconds the server's processes have used so far: the postmaster with the
    backends it has reaped, and its live (or not yet reaped) children. Read children,
    postmaster, children again: a child reaped in between would count twice, so read
    again then."""
    with open(os.path.join(pg.data, "postmaster.pid")) as f:
        pm = int(f.readline())

    def children():
        kids = {}
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    t, ppid = _ticks(int(d))
                except (OSError, IndexError, ValueError):
                    continue
                if ppid == pm:
                    kids[int(d)] = t
        return kids
    for _ in range(100):
        kids = children()
        own, _ = _ticks(pm)
        if set(kids) <= set(children()):
            break
    return (own + sum(kids.values())) / os.sysconf("SC_CLK_TCK")


def transactions(pgbench_out):
    for line in pgbench_out.splitlines():
        if line.startswith("number of transactions actually processed:"):
            return int(line.split(":")[1].split()[0])
    raise pgharness.PgError("no transaction count in pgbench's output:\n" + pgbench_out)


def run_pair(servers, configs, names, rep):
    """Both servers under their configurations at once; returns ({name: tps}, {name: CPU
    us of the server per transaction}, {name: bytes the server wrote to its stderr
    file})."""
    for pg, name in zip(servers, names):
        env, level = configs[name]
        pg.start(record=pg.path("trace-%d" % rep), env=dict(env, VIGIL_LOG_PASS="warning"),
                 out="/dev/null" if name in NULL_OUT else "server-%d.out" % rep)
        pg.set_conf({"log_min_messages": level})
        pg.reload()
        pg.psql("SELECT 1")
    cpu0 = [server_cpu(pg) for pg in servers]
    procs = [pg.pgbench_start(["-n", "-c", "1", "-j", "1", "-T", str(SECONDS)])
             for pg in servers]
    res, cpu, written, ntx = {}, {}, {}, {}
    for pg, name, p, c0 in zip(servers, names, procs, cpu0):
        out, err = p.communicate()
        if p.returncode:
            raise pgharness.PgError("pgbench exited %d: %s" % (p.returncode, err))
        res[name] = pgharness.tps(out)
        ntx[name] = transactions(out)
        cpu[name] = (server_cpu(pg) - c0) * 1e6 / ntx[name]
    for pg, name in zip(servers, names):
        pg.set_conf({"log_min_messages": "warning"})
        pg.stop()
        if name == "stock-on":  # how many messages capture took per transaction
            trace = pg.path("trace-%d" % rep)
            r = subprocess.run([os.path.join(BUILD, "bin", "vigil"), "model", trace, "-o",
                                trace + ".vgm"], capture_output=True, text=True)
            m = re.search(r"(\d+) events of", r.stderr)
            if m:
                MESSAGES.append(int(m.group(1)) / ntx[name])
            if os.path.exists(trace + ".vgm"):
                os.unlink(trace + ".vgm")
        subprocess.run(pg.prefix + ["rm", "-rf", pg.path("trace-%d" % rep)])
        if name in NULL_OUT:
            written[name] = 0
        else:  # a file of ours in the server's directory, never /dev/null
            written[name] = os.path.getsize(pg.out)
            os.unlink(pg.out)
    return res, cpu, written


def suite(servers, configs, on, others):
    """REPS repetitions of the pairs on|other; returns {other: [(tps_on, tps_other,
    bytes written on, bytes written other, server CPU us per transaction on, other)]}."""
    pairs = {o: [] for o in others}
    for rep in range(REPS):
        for other in others:
            names = [on, other] if rep % 2 == 0 else [other, on]
            r, c, w = run_pair(servers, configs, names, rep)
            pairs[other].append((r[on], r[other], w[on], w[other], c[on], c[other]))
            print("rep %d: %s %.1f tps, %s %.1f tps (ratio %.4f); server CPU per transaction "
                  "%.1f us vs %.1f us (ratio %.4f)" %
                  (rep + 1, on, r[on], other, r[other], r[on] / r[other], c[on], c[other],
                   c[on] / c[other]), file=sys.stderr)
    return pairs


def servers_for(pgb, adapter, conf):
    servers = [pgharness.PgServer(pgb, os.path.join(BUILD, "bin"), adapter=adapter)
               for _ in range(2)]
    servers[1].port = str(int(servers[0].port) + 1)
    for pg in servers:
        pg.initdb(dict(conf, log_min_messages="warning", synchronous_commit="off"))
        pg.start(out="init.out")
        pg.pgbench(["-i", "-q", "-s", SCALE])
        pg.stop()
    return servers


def table(title, on, pairs):
    print("\n%s\n" % title)
    print("| pair | median tps %s / other | median tps ratio | loss | server CPU us per "
          "transaction, median %s / other | median CPU ratio | CPU cost | MB written "
          "(%s / other) |" % (on, on, on))
    print("|---|---|---|---|---|---|---|---|")
    summary = {}
    for other, v in pairs.items():
        ratio = statistics.median(x[0] / x[1] for x in v)
        cratio = statistics.median(x[4] / x[5] for x in v)
        summary[other] = {"tps_on": [x[0] for x in v], "tps_other": [x[1] for x in v],
                          "bytes_on": [x[2] for x in v], "bytes_other": [x[3] for x in v],
                          "cpu_us_on": [x[4] for x in v], "cpu_us_other": [x[5] for x in v],
                          "median_ratio": ratio, "loss_pct": 100 * (1 - ratio),
                          "median_cpu_ratio": cratio, "cpu_cost_pct": 100 * (cratio - 1)}
        print("| %s vs %s | %.1f / %.1f | %.4f | %.2f%% | %.1f / %.1f | %.4f | %+.2f%% | "
              "%.1f / %.1f |" %
              (on, other, statistics.median(x[0] for x in v),
               statistics.median(x[1] for x in v), ratio, 100 * (1 - ratio),
               statistics.median(x[4] for x in v), statistics.median(x[5] for x in v),
               cratio, 100 * (cratio - 1), statistics.median(x[2] for x in v) / 1e6,
               statistics.median(x[3] for x in v) / 1e6))
    return summary


def main():
    pgb = pg_bin()
    adapter = os.path.join(BUILD, "bin", "pg_vigil_log.so")
    if not pgb or not os.path.exists(adapter):
        sys.exit("bench/logmodel_pg.py: needs PostgreSQL and its server headers (Debian: "
                 "postgresql postgresql-server-dev-all; scripts/install-deps.sh) and a "
                 "build with %s" % adapter)
    only_stock = os.environ.get("BENCH_PG_ONLY") == "stock"
    pairs, stock = {}, {}
    servers = []
    try:
        if not only_stock:
            servers = servers_for(pgb, adapter, {"log_destination": "'syslog'"})
            pairs = suite(servers, CONFIGS, "on", ("off", "production"))
            for pg in servers:
                pg.cleanup()
        servers = servers_for(pgb, None, {"log_destination": "'stderr'",
                                          "logging_collector": "off"})
        stock = suite(servers, STOCK_CONFIGS, "stock-on",
                      ("stock-default", "stock-null", "stock-file"))
    finally:
        for pg in servers:
            pg.cleanup()
    head = "pgbench -n -c 1 -j 1 -T %d on each of two concurrent servers, %d repetitions, " \
           "PostgreSQL in %s" % (SECONDS, REPS, pgb)
    summary = table(head + "; with the adapter (pg_vigil_log.so)", "on", pairs) \
        if pairs else {}
    stock_summary = table(head + "; stock (no adapter), log_destination = stderr",
                          "stock-on", stock)
    if summary:
        print("\ncapture on vs off (adapter, both at debug5): %.2f%% loss (target < 3%%)" %
              summary["off"]["loss_pct"])
    d, w = stock_summary["stock-default"], stock_summary["stock-file"]
    z = stock_summary["stock-null"]
    print("stock PostgreSQL, capture on at debug5 vs the default level: %.2f%% tps loss, "
          "%+.2f%% server CPU per transaction (target < 3%%: %s); vs debug5 to /dev/null: "
          "%.2f%% tps loss, %+.2f%% CPU; vs debug5 written to a file: %.2f%% tps loss, "
          "%+.2f%% CPU" % (
              d["loss_pct"], d["cpu_cost_pct"], "PASS" if d["cpu_cost_pct"] < 3 else "MISS",
              z["loss_pct"], z["cpu_cost_pct"], w["loss_pct"], w["cpu_cost_pct"]))
    if MESSAGES:
        print("stock-on: %.2f messages captured per transaction (median of %d runs)" %
              (statistics.median(MESSAGES), len(MESSAGES)))
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "logmodel_pg.json"), "w") as f:
        json.dump({"seconds": SECONDS, "reps": REPS, "pairs": summary,
                   "stock": stock_summary, "stock_messages_per_transaction":
                   statistics.median(MESSAGES) if MESSAGES else None}, f, indent=1)


if __name__ == "__main__":
    main()
