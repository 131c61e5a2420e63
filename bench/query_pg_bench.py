#!/usr/bin/env python3
"""bench/query_pg_bench.py BUILD_DIR: the query benchmark's queries (bench/query_bench.py,
QUERIES) three ways on one recording, same run (docs/tquel-sql.md, "Measured"):

  trace     `vigil query TRACE`: vigil's engine over the trace (wall time, building the
            relations from the trace included; --stats gives the evaluation alone);
  compiled  `vigil query postgresql://...`: the same TQuel compiled to SQL, run by
            PostgreSQL over the tables of `vigil store` after `vigil store --index`
            (wall time: connect, read the catalog, compile, run, fetch, print);
  by hand   the SQL a PostgreSQL user would write for the same question (psql, wall time),
            over the same tables and indexes (--index's GiST index on
            int8range(valid_from, valid_to) serves the hand-written overlaps too).

The three answers must be equal as sets (sorted text of the tuples; times in ns) or the
benchmark exits 1 (MISMATCH). Best of BENCH_QPG_REPS (default 3). PostgreSQL from
Debian's packages (tests/logmodel/pgharness.py) on a Unix socket of a temporary directory,
default settings but fsync off. Events: BENCH_QUERY_EVENTS (default 1000000; the query
benchmark uses 10000000, which the trace side answers too, but storing and indexing it
takes minutes on a 2-core machine). VIGIL_BENCH_SMOKE=1: 100000 events, 1 repetition. BENCH_QPG_ONLY=KEY,...: those queries
only (scan, overlap_eq, overlap, precede).
Writes BENCH_OUT/query_pg.json; a markdown table on stdout."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "logmodel"))
import benchlib  # noqa: E402
import pgharness  # noqa: E402
import query_bench  # noqa: E402

SMOKE = os.environ.get("VIGIL_BENCH_SMOKE") == "1"
EVENTS = int(os.environ.get("BENCH_QUERY_EVENTS", "100000" if SMOKE else "1000000"))
REPS = int(os.environ.get("BENCH_QPG_REPS", "1" if SMOKE else "3"))
ONLY = [k for k in os.environ.get("BENCH_QPG_ONLY", "").split(",") if k]
OUT = os.environ.get("BENCH_OUT", os.path.join(BUILD, "bench"))
VIGIL = os.path.join(BUILD, "bin", "vigil")

# Hand-written PostgreSQL, per query key: what a user who knows the tables writes (the
# time columns first, as the answers are compared).
BY_HAND = {
    "scan": 'SELECT DISTINCT valid_at, conn, size FROM vigil."Send" '
            "WHERE mailbox = %d AND size > %d" % (query_bench.SCAN_MAILBOX,
                                                  query_bench.SCAN_SIZE),
    # conn is unsigned (numeric): compared as the int8 that --index's GiST index on
    # (conn, valid time) holds; `R.conn = L.conn` hashes on conn and filters about 1e9
    # pairs at 10M events
    "overlap_eq": 'SELECT DISTINCT GREATEST(R.valid_from, L.valid_from), '
                  'LEAST(R.valid_to, L.valid_to), R.conn, L.lock '
                  'FROM vigil."Request" R JOIN vigil."Lock" L '
                  "ON (R.conn - 9223372036854775808)::int8 = "
                  "(L.conn - 9223372036854775808)::int8 "
                  "AND int8range(R.valid_from, R.valid_to) && "
                  "int8range(L.valid_from, L.valid_to)",
    "overlap": 'SELECT DISTINCT GREATEST(R.valid_from, L.valid_from), '
               'LEAST(R.valid_to, L.valid_to), R.conn, L.lock '
               'FROM vigil."Request" R JOIN vigil."Lock" L '
               "ON int8range(R.valid_from, R.valid_to) && int8range(L.valid_from, L.valid_to)",
    "precede": 'SELECT DISTINCT R.valid_to, R.conn FROM vigil."Request" R '
               'WHERE EXISTS (SELECT 1 FROM vigil."Send" S WHERE S.conn = R.conn '
               "AND S.process = 'P1' AND S.valid_at <= R.valid_to)",
}


def say(msg):
    print("[query-pg-bench]", msg, file=sys.stderr, flush=True)


def timed(cmd):
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode:
        raise SystemExit("query-pg-bench: %s exited %d: %s" % (" ".join(cmd[:3]), p.returncode,
                                                                p.stderr[-2000:]))
    return dt, p.stdout


def vigil_rows(out, q):
    """Tuples of vigil's CSV (values, then times) as sorted text, times first."""
    lines = out.splitlines()[1:]
    nt = 1 if q["kind"] == "event" else 2
    rows = []
    for line in lines:
        f = line.split(",")
        rows.append("|".join(f[-nt:] + f[:-nt]))
    return sorted(rows)


def best(fn):
    times, out = [], None
    for _ in range(REPS):
        dt, out = fn()
        times.append(dt)
    return min(times), out


def main():
    pgb = pgharness.newest_pg_bin()
    if not pgb:
        raise SystemExit("query-pg-bench: no PostgreSQL server (apt-get install postgresql)")
    tmp = tempfile.mkdtemp(prefix="vigil-qpgbench-")
    os.chmod(tmp, 0o755)
    pg = pgharness.PgServer(pgb, os.path.join(BUILD, "bin"))
    ok = True
    try:
        trace = os.path.join(tmp, "trace")
        benchlib.record_subject(BUILD, trace, EVENTS)
        pg.initdb({"fsync": "off", "shared_buffers": "'256MB'", "work_mem": "'64MB'"})
        pg.start()
        url = "postgresql://postgres@/postgres?host=%s&port=%s" % (pg.dir, pg.port)
        store_s, _ = timed([VIGIL, "store", trace, "--to", url, "-q"])
        index_s, _ = timed([VIGIL, "store", "--index", "--to", url, "-q"])
        say("stored in %.1f s, indexed in %.1f s" % (store_s, index_s))
        results = []
        for q in query_bench.QUERIES:
            if ONLY and q["key"] not in ONLY:
                continue
            tq = q["tquel"]
            t_trace, o1 = best(lambda: timed([VIGIL, "query", trace, "-e", tq, "--format",
                                              "csv"]))
            t_comp, o2 = best(lambda: timed([VIGIL, "query", url, "-e", tq, "--format",
                                             "csv"]))
            t_hand, o3 = best(lambda: timed(pg.client("psql") + [
                "-X", "-q", "-At", "-F", "|", "-c", BY_HAND[q["key"]], "postgres"]))
            a1, a2, a3 = vigil_rows(o1, q), vigil_rows(o2, q), sorted(o3.splitlines())
            same = a1 == a2 == a3
            if not same:
                ok = False
                say("MISMATCH %s: %d / %d / %d tuples; first differing: %s" % (
                    q["name"], len(a1), len(a2), len(a3),
                    [x for x in (set(a1) ^ set(a2)) | (set(a1) ^ set(a3))][:3]))
            results.append({"name": q["name"], "key": q["key"], "tuples": len(a1),
                            "trace_s": t_trace, "compiled_s": t_comp, "by_hand_s": t_hand,
                            "equal": same})
            say("%s: %d tuples, trace %.3f s, compiled %.3f s, by hand %.3f s" % (
                q["name"], len(a1), t_trace, t_comp, t_hand))
        print("| query (%d events) | tuples | vigil over the trace | vigil compiled to "
              "PostgreSQL | hand-written SQL on PostgreSQL | answers |" % EVENTS)
        print("|---|---|---|---|---|---|")
        for r in results:
            print("| %s | %d | %s | %s | %s | %s |" % (
                r["name"], r["tuples"], query_bench.fmt_s(r["trace_s"]),
                query_bench.fmt_s(r["compiled_s"]), query_bench.fmt_s(r["by_hand_s"]),
                "equal" if r["equal"] else "MISMATCH"))
        os.makedirs(OUT, exist_ok=True)
        with open(os.path.join(OUT, "query_pg.json"), "w") as f:
            json.dump({"events": EVENTS, "reps": REPS, "store_s": store_s, "index_s": index_s,
                       "queries": results, "time": time.time()}, f, indent=1)
    finally:
        pg.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
