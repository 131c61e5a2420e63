#!/usr/bin/env python3
"""bench/pg_fork_bench.py BUILD_DIR: what recording a forking server costs each connection,
and `vigil net split` on its trace (issue 19; docs/net.md "Forking servers").

PostgreSQL from Debian's packages (tests/logmodel/pgharness.py), two servers at once on
their Unix sockets: one under `vigil record`, one not (the peer). Measured, interleaved
(one run on each in turn, the order swapped every repetition, so both see the same load):

  connect   pgbench -n -C -S -c 1 -t N: PostgreSQL's own "average connection time" (connect,
            the postmaster's accept and fork, the backend's start-up and authentication);
  psql      the wall time of one `psql -c 'select 1'` run (process start to exit), not
            recorded itself;
  split     `vigil net split` of the recorded server's trace with recorded psql runs and a
            recorded pgbench -C (the PostgreSQL trace of tests/net_fork): wall time, events,
            networks.

Where the recorded connection's extra time goes is read from the recorded trace itself:
per backend, accept -> the child's first event (fork, the child's atfork work: its own
trace files) and the child's first event -> its first receive (start-up). Writes
BENCH_OUT/pg_fork.json. Settings: BENCH_PGF_CONNECTS (pgbench -t, default 200),
BENCH_PGF_REPS (default 5), BENCH_PGF_PSQL (psql runs per repetition, 10).
VIGIL_BENCH_SMOKE=1: 10 connections, 1 repetition, 2 psql runs."""
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "logmodel"))
import pgharness  # noqa: E402

SMOKE = os.environ.get("VIGIL_BENCH_SMOKE") == "1"
CONNECTS = int(os.environ.get("BENCH_PGF_CONNECTS", "10" if SMOKE else "200"))
REPS = int(os.environ.get("BENCH_PGF_REPS", "1" if SMOKE else "5"))
PSQL = int(os.environ.get("BENCH_PGF_PSQL", "2" if SMOKE else "10"))
OUT = os.environ.get("BENCH_OUT", os.path.join(BUILD, "bench"))
VIGIL = os.path.join(BUILD, "bin", "vigil")


def say(msg):
    print(msg, file=sys.stderr, flush=True)


def pg_bin():
    found = []
    for b in glob.glob("/usr/lib/postgresql/*/bin"):
        ver = os.path.basename(os.path.dirname(b))
        if ver.isdigit() and os.path.exists(os.path.join(b, "pgbench")):
            found.append((int(ver), b))
    return max(found)[1] if found else None


def conn_time(pg):
    out = subprocess.run(pg.client("pgbench") + ["-n", "-C", "-S", "-c", "1", "-t",
                                                  str(CONNECTS), "postgres"],
                         capture_output=True, text=True)
    if out.returncode:
        raise pgharness.PgError("pgbench: " + out.stderr)
    for line in out.stdout.splitlines():
        if line.startswith("average connection time"):
            return float(line.split("=")[1].split()[0])
    raise pgharness.PgError("no connection time in pgbench's output:\n" + out.stdout)


def psql_time(pg):
    t = time.perf_counter()
    pg.psql("select 1")
    return (time.perf_counter() - t) * 1e3


def dump(trace):
    p = subprocess.run([VIGIL, "dump", "--json", trace], capture_output=True, text=True)
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def startup_split(trace, postmaster):
    """Per backend: accept -> first event of the child, and -> its first receive (ms)."""
    ev = dump(trace)
    accepts = {}  # (local, remote) -> ts, the postmaster's accepts
    first, recv1, names = {}, {}, {}
    for e in ev:
        f = e.get("fields", {})
        if e["pid"] == postmaster:
            if e["name"] == "vg.net.conn" and f.get("role") == "accept":
                accepts[(f["local"], f["remote"])] = e["ts"]
            continue
        first.setdefault(e["pid"], e["ts"])
        if e["name"] == "vg.net.conn" and f.get("role") == "accept":
            names.setdefault(e["pid"], (f["local"], f["remote"]))
        if e["name"] == "vg.net.recv" and e["pid"] in names:
            recv1.setdefault(e["pid"], e["ts"])
    fork, start = [], []
    for pid, key in names.items():
        if key in accepts and pid in recv1:
            fork.append((first[pid] - accepts[key]) / 1e6)
            start.append((recv1[pid] - first[pid]) / 1e6)
    return fork, start


def main():
    pgb = pg_bin()
    if not pgb:
        sys.exit("bench/pg_fork_bench.py: needs PostgreSQL (Debian: postgresql; "
                 "scripts/install-deps.sh)")
    bin_dir = os.path.join(BUILD, "bin")
    rec, plain = (pgharness.PgServer(pgb, bin_dir) for _ in range(2))
    plain.port = str(int(rec.port) + 1)
    res = {"connect_ms": {"recorded": [], "unrecorded": []},
           "psql_ms": {"recorded": [], "unrecorded": []}}
    work = tempfile.mkdtemp(prefix="vigil-pgf-")
    try:
        for pg in (rec, plain):
            pg.initdb({})
        rec.start(record=rec.path("srv"))
        plain.start()
        for pg in (rec, plain):
            pg.pgbench(["-i", "-q", "-s", "1"])
        servers = {"recorded": rec, "unrecorded": plain}
        for r in range(REPS):
            order = ["recorded", "unrecorded"] if r % 2 == 0 else ["unrecorded", "recorded"]
            for name in order:
                res["connect_ms"][name].append(conn_time(servers[name]))
            for i in range(PSQL):
                for name in order:
                    res["psql_ms"][name].append(psql_time(servers[name]))
            say("rep %d: connection %.3f ms recorded, %.3f ms not" %
                (r + 1, res["connect_ms"]["recorded"][-1], res["connect_ms"]["unrecorded"][-1]))
        # the trace to split: recorded clients as well
        traces = [rec.path("srv")]
        for i in range(max(PSQL, 5)):
            t = os.path.join(work, "psql%d" % i)
            subprocess.run([VIGIL, "record", "-q", "-o", t, "--"] + rec.client("psql") +
                           ["-X", "-At", "-o", "/dev/null", "-c", "select %d" % i, "postgres"],
                           check=True)
            traces.append(t)
        t = os.path.join(work, "pgbench")
        subprocess.run([VIGIL, "record", "-q", "-o", t, "--"] + rec.client("pgbench") +
                       ["-n", "-C", "-S", "-c", "1", "-t", str(CONNECTS), "postgres"],
                       check=True, capture_output=True)
        traces.append(t)
    finally:
        rec.stop()
        plain.stop()
    postmaster = None
    for e in dump(rec.path("srv")):
        if e["name"] == "vg.process.begin" and e.get("fields", {}).get("name") == "postgres":
            postmaster = e["pid"]
            break
    fork, start = startup_split(rec.path("srv"), postmaster)
    nets = os.path.join(work, "nets")
    t0 = time.perf_counter()
    p = subprocess.run([VIGIL, "net", "split", *traces, "-o", nets], capture_output=True,
                       text=True)
    split_s = time.perf_counter() - t0
    if p.returncode:
        sys.exit("bench/pg_fork_bench.py: vigil net split failed:\n" + p.stderr)
    with open(os.path.join(nets, "index.json")) as f:
        index = json.load(f)
    client_nets = [n for n in index["networks"] if n["program"] in ("psql", "pgbench")]
    want = max(PSQL, 5) + CONNECTS
    if len(client_nets) < want:  # one per client connection (pgbench adds its own)
        sys.exit("bench/pg_fork_bench.py: %d client networks, at least %d expected" %
                 (len(client_nets), want))
    say(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "")
    for pg in (rec, plain):
        pg.cleanup()
    subprocess.run(["rm", "-rf", work])
    med = {k: {n: statistics.median(v) for n, v in d.items()} for k, d in res.items()}
    summary = {
        "connects": CONNECTS, "reps": REPS, "psql_runs": PSQL * REPS, "raw": res,
        "connect_ms": med["connect_ms"], "psql_ms": med["psql_ms"],
        "connect_extra_ms": med["connect_ms"]["recorded"] - med["connect_ms"]["unrecorded"],
        "psql_extra_ms": med["psql_ms"]["recorded"] - med["psql_ms"]["unrecorded"],
        "fork_ms": statistics.median(fork) if fork else None,
        "startup_ms": statistics.median(start) if start else None,
        "backends": len(fork),
        "split_s": split_s, "split_events": index["events"],
        "split_structural": index["structural_events"], "split_networks": len(index["networks"]),
        "split_client_networks": len(client_nets), "split_unmatched": len(index["unmatched"]),
    }
    print("\nPostgreSQL %s on its Unix socket, recorded vs not (both at once)\n" % pgb)
    print("| measure | recorded | unrecorded | extra |")
    print("|---|---|---|---|")
    print("| pgbench -C connection time (median of %d x %d) | %.3f ms | %.3f ms | %+.3f ms |" % (
        REPS, CONNECTS, med["connect_ms"]["recorded"], med["connect_ms"]["unrecorded"],
        summary["connect_extra_ms"]))
    print("| psql -c 'select 1' run (median of %d) | %.2f ms | %.2f ms | %+.2f ms |" % (
        PSQL * REPS, med["psql_ms"]["recorded"], med["psql_ms"]["unrecorded"],
        summary["psql_extra_ms"]))
    if fork:
        print("\nrecorded backends (%d): accept -> child's first event %.3f ms, -> its first "
              "receive %.3f ms (medians)" % (len(fork), summary["fork_ms"],
                                            summary["startup_ms"]))
    print("\nvigil net split: %.2f s for %d events (%d structural), %d networks (%d of "
          "clients), %d unmatched" % (split_s, index["events"], index["structural_events"],
                                      len(index["networks"]), len(client_nets),
                                      len(index["unmatched"])))
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "pg_fork.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
