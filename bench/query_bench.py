#!/usr/bin/python3
"""bench/query_bench.py: vigil's TQuel engine against SQLite on one trace (bench/query.sh).

    query_bench.py --bin BUILD/bin --trace DIR --db FILE --out DIR [--reps N]
                   [--subject JSON] [--sql-timeout S] [--dry-run]

Loads the trace's relations Request, Lock and Send into SQLite (through `vigil query
--into` when the command has it, else through relations_dump), builds the indexes a
competent user would, then answers each query of QUERIES with `vigil query --stats` and
with each of its SQL variants, best of --reps. The answers must agree: equal counts, and
equal sets (compared through an order-independent digest of the tuples, and tuple by
tuple when the digests differ); otherwise MISMATCH, with examples, and exit status 1.
A markdown table goes to stdout, every figure to OUT/query.json, progress to stderr.
--dry-run skips the vigil side (the SQLite side, loading and checks of the trace run).
"""
import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time

import benchlib
import pinned

# Relations of the trace as SQL tables: time columns, then the values (TQuel names).
TABLES = {
    "Request": ("interval", [("conn", "INTEGER"), ("kind", "TEXT"), ("nbytes", "INTEGER")]),
    "Lock": ("interval", [("lock", "INTEGER"), ("conn", "INTEGER")]),
    "Send": ("event", [("conn", "INTEGER"), ("mailbox", "INTEGER"), ("process", "TEXT"),
                       ("size", "INTEGER")]),
}

# The B-tree indexes of a user who knows the queries: on the join keys, the selections
# and the times. The R*Trees are built by rtrees() (they need the trace's time origin).
INDEXES = [
    "CREATE INDEX send_mailbox_size ON Send(mailbox, size)",
    "CREATE INDEX send_conn_process_at ON Send(conn, process, at)",
    "CREATE INDEX request_conn_from ON Request(conn, valid_from)",
    "CREATE INDEX request_from ON Request(valid_from)",
    "CREATE INDEX lock_conn_from ON Lock(conn, valid_from)",
    "CREATE INDEX lock_from ON Lock(valid_from)",
    # The longest request, for the bounded range joins below (an index on an expression
    # makes max() one step).
    "CREATE INDEX request_duration ON Request(valid_to - valid_from)",
]

# The thread counts vigil answers at (`vigil query --threads N`), the first also in the main
# table: BENCH_QUERY_VIGIL_THREADS, comma-separated (default 1,2).
VIGIL_THREAD_COUNTS = [int(x) for x in
                       os.environ.get("BENCH_QUERY_VIGIL_THREADS", "1,2").split(",") if x]

# BENCH_QUERY_WARM=1: vigil's timed runs map the relations cache, made by one untimed run
# first (its exec then excludes the build and the first reads of the memory the build just
# wrote, as the peers' best of reps in a process that has read its tables already).
VIGIL_WARM = os.environ.get("BENCH_QUERY_WARM", "0") not in ("", "0")

# Selectivity of query a: mailbox 7 of 100, size above 58982 of 0..65535 (10%): 0.1%.
SCAN_MAILBOX, SCAN_SIZE = 7, 58982

# Each query: its TQuel, the names of its result's values, the relations it reads, and
# SQL variants giving the same set (time columns first: at, or valid_from and valid_to).
# Semantics (docs/tquel.md): intervals [from, to); an event at t overlaps [b, e) when
# b <= t < e; X precede Y when end(X) <= begin(Y); the default valid time is the
# intersection; results are sets. {T0}, {U}: the R*Trees' time origin and unit.
QUERIES = [
    {
        "name": "a. selective scan",
        "key": "scan",
        "tquel": "range of S is Send\n"
                 "retrieve (S.conn, S.size) where S.mailbox = %d and S.size > %d"
                 % (SCAN_MAILBOX, SCAN_SIZE),
        "kind": "event",
        "values": ["conn", "size"],
        "reads": ["Send"],
        "sql": {
            "full scan": "SELECT DISTINCT at, conn, size FROM Send NOT INDEXED "
                         "WHERE mailbox = %d AND size > %d" % (SCAN_MAILBOX, SCAN_SIZE),
            "index (mailbox, size)": "SELECT DISTINCT at, conn, size FROM Send "
                                     "INDEXED BY send_mailbox_size "
                                     "WHERE mailbox = %d AND size > %d"
                                     % (SCAN_MAILBOX, SCAN_SIZE),
        },
    },
    {
        "name": "b1. overlap join, R.conn = L.conn",
        "key": "overlap_eq",
        "tquel": "range of R is Request\nrange of L is Lock\n"
                 "retrieve (R.conn, L.lock) where R.conn = L.conn when R overlap L",
        "kind": "interval",
        "values": ["conn", "lock"],
        "reads": ["Request", "Lock"],
        "sql": {
            # Exact: a request overlapping L began after L.from - (longest request). Slow
            # when a few requests are long (a thread preempted while one is open); the
            # same plan without the equality (query b2) is left out for that reason.
            "B-tree, bounded range": """
                SELECT DISTINCT max(R.valid_from, L.valid_from), min(R.valid_to, L.valid_to),
                                R.conn, L.lock
                FROM Lock L CROSS JOIN Request R INDEXED BY request_conn_from
                  ON R.conn = L.conn
                 AND R.valid_from > L.valid_from -
                     (SELECT max(valid_to - valid_from) FROM Request)
                 AND R.valid_from < L.valid_to AND L.valid_from < R.valid_to""",
            "R*Tree (time, conn)": """
                SELECT DISTINCT max(R.valid_from, L.valid_from), min(R.valid_to, L.valid_to),
                                R.conn, L.lock
                FROM Lock L CROSS JOIN request_rt2 T CROSS JOIN Request R
                WHERE T.lo <= (L.valid_to - {T0}) / {U} + 1
                  AND T.hi >= (L.valid_from - {T0}) / {U}
                  AND T.clo <= L.conn AND T.chi >= L.conn
                  AND R.rowid = T.id AND R.conn = L.conn
                  AND R.valid_from < L.valid_to AND L.valid_from < R.valid_to""",
        },
    },
    {
        "name": "b2. overlap join, no equality",
        "key": "overlap",
        "tquel": "range of R is Request\nrange of L is Lock\n"
                 "retrieve (R.conn, L.lock) when R overlap L",
        "kind": "interval",
        "values": ["conn", "lock"],
        "reads": ["Request", "Lock"],
        "sql": {
            "R*Tree (time)": """
                SELECT DISTINCT max(R.valid_from, L.valid_from), min(R.valid_to, L.valid_to),
                                R.conn, L.lock
                FROM Lock L CROSS JOIN request_rt T CROSS JOIN Request R
                WHERE T.lo <= (L.valid_to - {T0}) / {U} + 1
                  AND T.hi >= (L.valid_from - {T0}) / {U}
                  AND R.rowid = T.id
                  AND R.valid_from < L.valid_to AND L.valid_from < R.valid_to""",
        },
    },
    {
        "name": "c. precede join (the paper's shape)",
        "key": "precede",
        "tquel": "range of S is Send\nrange of R is Request\n"
                 "retrieve (R.conn) valid at end of R\n"
                 "where S.conn = R.conn and S.process = \"P1\"\n"
                 "when S precede end of R",
        "kind": "event",
        "values": ["conn"],
        "reads": ["Send", "Request"],
        "sql": {
            "EXISTS": """
                SELECT DISTINCT R.valid_to, R.conn FROM Request R
                WHERE EXISTS (SELECT 1 FROM Send S
                              WHERE S.conn = R.conn AND S.process = 'P1'
                                AND S.at <= R.valid_to)""",
            "join": """
                SELECT DISTINCT R.valid_to, R.conn
                FROM Request R JOIN Send S
                  ON S.conn = R.conn AND S.process = 'P1' AND S.at <= R.valid_to""",
            # A rewrite by hand: only the first P1 send of each connection matters.
            "first send per conn": """
                SELECT DISTINCT R.valid_to, R.conn
                FROM (SELECT conn, min(at) AS first FROM Send
                      WHERE process = 'P1' GROUP BY conn) F
                JOIN Request R ON R.conn = F.conn AND F.first <= R.valid_to""",
        },
    },
]


# DuckDB (bench/duckdb): the same sets in its SQL, over the same tuples exported with
# `vigil query --format csv`. Its planner picks the joins (hash, IEJoin for the
# inequalities); no index is needed. "at" is a keyword of DuckDB's: quoted.
DUCK_SQL = {
    "scan": "SELECT DISTINCT \"at\", conn, size FROM Send WHERE mailbox = %d AND size > %d"
            % (SCAN_MAILBOX, SCAN_SIZE),
    "overlap_eq": "SELECT DISTINCT greatest(R.valid_from, L.valid_from), "
                  "least(R.valid_to, L.valid_to), R.conn, L.lock FROM Lock L JOIN Request R "
                  "ON R.conn = L.conn AND R.valid_from < L.valid_to "
                  "AND L.valid_from < R.valid_to",
    "overlap": "SELECT DISTINCT greatest(R.valid_from, L.valid_from), "
               "least(R.valid_to, L.valid_to), R.conn, L.lock FROM Lock L JOIN Request R "
               "ON R.valid_from < L.valid_to AND L.valid_from < R.valid_to",
    "precede": "SELECT DISTINCT R.valid_to, R.conn FROM Request R WHERE EXISTS "
               "(SELECT 1 FROM Send S WHERE S.conn = R.conn AND S.process = 'P1' "
               "AND S.\"at\" <= R.valid_to)",
}
DUCK_TYPES = {"INTEGER": "BIGINT", "TEXT": "VARCHAR"}


def check_sql(sql, q):
    """One row telling a set apart: its count and each column's sum modulo a prime (exact
    integers in SQLite and DuckDB alike)."""
    n = (1 if q["kind"] == "event" else 2) + len(q["values"])
    cols = ["c%d" % i for i in range(n)]
    return ("WITH x(%s) AS (%s) SELECT CAST(count(*) AS TEXT), %s FROM x"
            % (", ".join(cols), sql,
               ", ".join("CAST(sum(%s %% 1000000007) AS TEXT)" % c for c in cols)))


def duck_runs():
    """DuckDB's runs: 1 and 2 threads in the mode of the others' timed runs; with the CPUs
    bound (BENCH_RT=1), each again with them unbound (labels "1 unbound", "2 unbound"), so
    that every pinned table shows whether the binding held DuckDB back."""
    runs = [{"label": str(t), "threads": t, "rt": pinned.job(t)} for t in (1, 2)]
    if pinned.bound():
        runs += [{"label": "%d unbound" % t, "threads": t, "rt": pinned.job(t, bind=False)}
                 for t in (1, 2)]
    return runs


def duckdb_side(vigil, trace, tmp, queries, reps, node_dir):
    """DuckDB at 1 and 2 threads: the relations exported as CSV by vigil, loaded, each
    query best of reps. The result of duck.cjs (bench/duckdb), or None after saying why."""
    if not os.path.isdir(os.path.join(node_dir, "node_modules", "@duckdb", "node-api")):
        say("DuckDB skipped: run 'npm ci' in %s (make deps does)" % node_dir)
        return None
    tables = {}
    for name, (kind, cols) in TABLES.items():
        csv = os.path.join(tmp, name + ".csv")
        benchlib.export_csv(vigil, trace, name, [c for c, _ in cols], csv)
        columns = [[c, DUCK_TYPES[t]] for c, t in cols]
        columns += [[c, "BIGINT"] for c in time_cols(kind)]
        tables[name] = {"csv": csv, "columns": columns}
    job = {"tables": tables, "runs": duck_runs(), "reps": reps,
           "queries": [{"key": q["key"], "sql": DUCK_SQL[q["key"]],
                        "check": check_sql(DUCK_SQL[q["key"]], q)} for q in queries]}
    job_path = os.path.join(tmp, "duck.json")
    with open(job_path, "w") as f:
        json.dump(job, f)
    say("DuckDB: loading %s and running the queries at 1 and 2 threads" % ", ".join(tables))
    p = subprocess.run(["node", os.path.join(node_dir, "duck.cjs"), job_path],
                       capture_output=True, text=True, cwd=node_dir)
    for name in tables:
        os.unlink(tables[name]["csv"])
    os.unlink(job_path)
    if p.returncode != 0:
        raise SystemExit("query-bench: DuckDB failed: %s" % p.stderr.strip())
    return json.loads(p.stdout)


def say(*a):
    print("[query-bench]", *a, file=sys.stderr, flush=True)


def fmt_s(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return "%.0f us" % (s * 1e6)
    if s < 1:
        return "%.1f ms" % (s * 1e3)
    return "%.2f s" % s


# ---- the trace -----------------------------------------------------------------------

def relation_counts(vigil, trace):
    """Tuples per relation, as `vigil relations TRACE` lists them."""
    out = subprocess.run([vigil, "relations", trace], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit("query-bench: vigil relations %s failed: %s" % (trace, out.stderr))
    counts = {}
    for line in out.stdout.splitlines():
        m = re.match(r"^(\S+)\s+(event|interval|state|entity)\s+(\d+) tuples?", line)
        if m:
            counts[m.group(1)] = int(m.group(3))
    return counts


def has_into(vigil):
    h = subprocess.run([vigil, "query", "--help"], capture_output=True, text=True)
    return h.returncode == 0 and "--into" in h.stdout + h.stderr


def has_query(vigil):
    h = subprocess.run([vigil, "query", "--help"], capture_output=True, text=True)
    return h.returncode == 0


# ---- SQLite: load and index ----------------------------------------------------------

def connect(path):
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -4000000")  # up to 4 GB of pages: all in memory
    db.execute("PRAGMA temp_store = MEMORY")
    db.execute("PRAGMA mmap_size = 2147418112")
    return db


def time_cols(kind):
    return ["at"] if kind == "event" else ["valid_from", "valid_to"]


def create_tables(db):
    for name, (kind, cols) in TABLES.items():
        defs = ["%s INTEGER NOT NULL" % c for c in time_cols(kind)]
        defs += ['"%s" %s' % (c, t) for c, t in cols]
        db.execute('CREATE TABLE "%s" (%s)' % (name, ", ".join(defs)))


def empty_intervals(dump, trace):
    """How many tuples of each interval relation have begin = end (relations_dump)."""
    out = subprocess.run([dump, trace], capture_output=True, text=True).stdout
    n = {}
    for line in out.splitlines():
        t = json.loads(line)
        if t.get("kind") == "interval" and not t.get("open") and t["from"] == t["to"]:
            n[t["relation"]] = n.get(t["relation"], 0) + 1
    return n


def load_dump(db, dump, trace):
    """Loads the tables from relations_dump's JSON lines (one tuple a line)."""
    create_tables(db)
    proc = subprocess.Popen([dump, trace], stdout=subprocess.PIPE, bufsize=1 << 20)
    inserts = {}
    for name, (kind, cols) in TABLES.items():
        n = len(time_cols(kind)) + len(cols)
        inserts[name] = 'INSERT INTO "%s" VALUES (%s)' % (name, ", ".join("?" * n))
    batch, current, loads = [], None, json.loads
    db.execute("BEGIN")
    for line in proc.stdout:
        t = loads(line)
        rel = t["relation"]
        if rel not in TABLES:
            continue
        if rel != current:
            if batch:
                db.executemany(inserts[current], batch)
            batch, current = [], rel
        v = t["values"]
        if t["kind"] == "event":
            row = (t["from"],)
        else:
            row = (t["from"], t["to"])
        batch.append(row + tuple(v[c] for c, _ in TABLES[rel][1]))
        if len(batch) >= 200000:
            db.executemany(inserts[current], batch)
            batch = []
    if batch:
        db.executemany(inserts[current], batch)
    db.execute("COMMIT")
    if proc.wait() not in (0, 1):
        raise SystemExit("query-bench: relations_dump failed (status %d)" % proc.returncode)


def load_into(db_path, vigil, trace):
    """Loads the tables with `vigil query --into`: one retrieve into per relation, named
    Q_NAME (the trace's own names are taken), then renamed to the SQL names used here."""
    stmts = []
    for name, (kind, cols) in TABLES.items():
        v = name[0]
        stmts.append("range of %s is %s\nretrieve into Q_%s (%s)" % (
            v, name, name, ", ".join("%s.%s" % (v, c) for c, _ in cols)))
    cmd = [vigil, "query", trace, "-e", "\n".join(stmts), "--into", db_path,
           "--format", "csv"]
    with open(os.devnull, "w") as null:
        rc = subprocess.run(cmd, stdout=null).returncode
    if rc not in (0, 1):
        raise SystemExit("query-bench: %s failed (status %d)" % (" ".join(cmd), rc))
    db = connect(db_path)
    for name, (kind, cols) in TABLES.items():
        have = [r[1] for r in db.execute('PRAGMA table_info("Q_%s")' % name)]
        # Time columns: whatever the command calls them, they come before the values.
        times = [c for c in have if c not in [x for x, _ in cols]]
        want = time_cols(kind)
        if len(times) != len(want):
            raise SystemExit("query-bench: %s from --into has columns %s; expected %s and %s"
                             % (name, have, want, [c for c, _ in cols]))
        for old, new in zip(times, want):
            if old != new:
                db.execute('ALTER TABLE "Q_%s" RENAME COLUMN "%s" TO %s' % (name, old, new))
        db.execute('ALTER TABLE "Q_%s" RENAME TO "%s"' % (name, name))
    return db


def rtrees(db):
    """R*Trees on the requests' intervals (and connection), in integer units of U ns from
    T0, rounded outwards: a conservative filter, the queries re-check the exact times."""
    t0, t1 = db.execute("SELECT min(valid_from), max(valid_to) FROM Request").fetchone()
    unit = max(1, -(-(t1 - t0 + 1) // (1 << 30)))  # the span fits in 31 bits
    for name, dims in (("request_rt", "lo, hi"), ("request_rt2", "lo, hi, clo, chi")):
        db.execute("CREATE VIRTUAL TABLE %s USING rtree_i32(id, %s)" % (name, dims))
    db.execute("BEGIN")
    db.execute("INSERT INTO request_rt SELECT rowid, (valid_from - ?1) / ?2, "
               "(valid_to - ?1 + ?2 - 1) / ?2 FROM Request", (t0, unit))
    db.execute("INSERT INTO request_rt2 SELECT rowid, (valid_from - ?1) / ?2, "
               "(valid_to - ?1 + ?2 - 1) / ?2, conn, conn FROM Request", (t0, unit))
    db.execute("COMMIT")
    return t0, unit


# ---- timing --------------------------------------------------------------------------

class Timeout(Exception):
    pass


def sql_run(db, sql, limit):
    """Seconds to count the result of `sql` (the whole set is built: DISTINCT), and the
    count; Timeout when it takes longer than `limit` seconds."""
    deadline = time.perf_counter() + limit
    db.set_progress_handler(lambda: 1 if time.perf_counter() > deadline else 0, 100000)
    try:
        with pinned.here(1):  # SQLite runs on this thread: BENCH_RT=1 pins it
            t = time.perf_counter()
            n = db.execute("SELECT count(*) FROM (%s)" % sql).fetchone()[0]
            t = time.perf_counter() - t
    except sqlite3.OperationalError as e:
        if "interrupt" in str(e):
            raise Timeout() from None
        raise
    finally:
        db.set_progress_handler(None, 0)
    return t, n


def digest(rows):
    """Order-independent digest of a set of tuples (count, sum of hashes)."""
    n, h = 0, 0
    for r in rows:
        n += 1
        h = (h + hash(r)) & 0xFFFFFFFFFFFFFFFF
    return n, h


def vigil_rows(path, q):
    ntime = 1 if q["kind"] == "event" else 2
    with open(path) as f:
        for line in f:
            t = json.loads(line)
            v = t["values"]
            tm = (t["at"],) if ntime == 1 else (t["from"], t["to"])
            yield tm + tuple(v[c] for c in q["values"])


def vigil_run(vigil, trace, q, out_path, cache=False, threads=None):
    """One `vigil query --stats [--threads N]` run: (wall seconds, stats of the run, exit
    status, stderr, peak resident memory in bytes). Without the relations cache unless
    `cache`; threads None: the default (VIGIL_THREADS, else the machine's cores)."""
    cmd = [vigil, "query", trace, "-e", q["tquel"], "--format", "json", "--stats"]
    env = dict(os.environ)
    if cache:
        env.pop("VIGIL_CACHE", None)
    else:
        env["VIGIL_CACHE"] = "off"
    if threads:
        cmd += ["--threads", str(threads)]
    # BENCH_RT=1: on as many CPUs as it has threads (the default: every CPU it may use)
    r = benchlib.run(cmd, env=env, threads=threads or len(os.sched_getaffinity(0)),
                     stdout_path=out_path)
    return r.wall, r.stats or None, r.rc, r.err, r.rss


# ---- main ----------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="the build's bin/ (vigil, relations_dump)")
    ap.add_argument("--trace", required=True)
    ap.add_argument("--db", required=True, help="the SQLite file to create")
    ap.add_argument("--out", required=True, help="where query.json goes")
    ap.add_argument("--reps", type=int, default=int(os.environ.get("BENCH_QUERY_REPS", 3)))
    ap.add_argument("--sql-timeout", type=float,
                    default=float(os.environ.get("BENCH_QUERY_SQL_TIMEOUT", 20)))
    ap.add_argument("--subject", help="the subject's JSON line (its own counts)")
    ap.add_argument("--dry-run", action="store_true", help="skip the vigil side")
    ap.add_argument("--only", help="comma-separated query keys (scan, overlap_eq, ...)")
    ap.add_argument("--duckdb", default=os.path.join(os.path.dirname(os.path.abspath(
                        __file__)), "duckdb"),
                    help="the folder of duck.cjs and its node_modules (default bench/duckdb)")
    ap.add_argument("--no-duckdb", action="store_true", help="leave DuckDB out")
    a = ap.parse_args()
    pinned.check()
    vigil = os.path.join(a.bin, "vigil")
    dump = os.path.join(a.bin, "relations_dump")
    queries = [q for q in QUERIES if not a.only or q["key"] in a.only.split(",")]
    result = {"settings": {"reps": a.reps, "sql_timeout_s": a.sql_timeout,
                           "dry_run": a.dry_run, "sqlite_version": sqlite3.sqlite_version,
                           "vigil_threads": VIGIL_THREAD_COUNTS,
                           "mode": pinned.describe(), "load_start": os.getloadavg()[0],
                           "vigil_warm": VIGIL_WARM},
              "trace": {}, "sqlite": {}, "queries": []}
    failed = False

    # The trace: its relations as vigil lists them, against the subject's own counts.
    counts = relation_counts(vigil, a.trace)
    result["trace"]["relations"] = {k: counts.get(k) for k in TABLES}
    say("relations:", ", ".join("%s %s" % (k, counts.get(k)) for k in TABLES))
    if a.subject:
        subj = json.loads(a.subject)
        result["trace"]["subject"] = subj
        for k in TABLES:
            if counts.get(k) != subj.get(k):
                print("MISMATCH: the subject wrote %s %s tuples, vigil relations lists %s"
                      % (subj.get(k), k, counts.get(k)))
                failed = True

    # SQLite: load, index, analyze.
    if os.path.exists(a.db):
        os.unlink(a.db)
    t = time.perf_counter()
    if has_into(vigil):
        say("loading SQLite with vigil query --into")
        db = load_into(a.db, vigil, a.trace)
        result["sqlite"]["loader"] = "vigil query --into"
    else:
        say("loading SQLite from relations_dump (vigil query --into is not there yet)")
        db = connect(a.db)
        load_dump(db, dump, a.trace)
        result["sqlite"]["loader"] = "relations_dump + executemany"
    load_s = time.perf_counter() - t
    tables = {k: db.execute('SELECT count(*) FROM "%s"' % k).fetchone()[0] for k in TABLES}
    empty = {}
    if any(tables[k] != counts.get(k) for k in TABLES):
        empty = empty_intervals(dump, a.trace)
        result["sqlite"]["empty_intervals"] = empty
    for k in TABLES:
        if tables[k] != counts.get(k) and tables[k] + empty.get(k, 0) == counts.get(k):
            # a retrieve gives no tuple for an empty valid time (docs/tquel.md): an
            # interval that began and ended at the same nanosecond
            say("%s: %d intervals of no length (begin = end) are not in a retrieve's answer"
                % (k, empty[k]))
        elif tables[k] != counts.get(k):
            print("MISMATCH: SQLite's %s has %d tuples, vigil relations lists %s"
                  % (k, tables[k], counts.get(k)))
            failed = True
    say("loaded in %s: %s" % (fmt_s(load_s), tables))
    t = time.perf_counter()
    for sql in INDEXES:
        db.execute(sql)
    t0, unit = rtrees(db)
    index_s = time.perf_counter() - t
    t = time.perf_counter()
    db.execute("ANALYZE")
    analyze_s = time.perf_counter() - t
    say("indexed in %s (R*Tree unit %d ns), ANALYZE %s" % (fmt_s(index_s), unit,
                                                          fmt_s(analyze_s)))
    result["sqlite"].update({"load_s": load_s, "index_s": index_s, "analyze_s": analyze_s,
                             "tuples": tables, "indexes": INDEXES,
                             "rtree_origin_ns": t0, "rtree_unit_ns": unit,
                             "db_bytes": os.path.getsize(a.db)})

    run_vigil = not a.dry_run
    if run_vigil and not has_query(vigil):
        say("%s has no 'query' command yet: the vigil side is skipped" % vigil)
        run_vigil = False
    result["settings"]["vigil_side"] = run_vigil
    tmp = tempfile.mkdtemp(prefix="vigil-qbench.", dir=os.path.dirname(os.path.abspath(a.db)))
    duck = None if a.no_duckdb else duckdb_side(vigil, a.trace, tmp, queries, a.reps, a.duckdb)
    if duck:
        result["duckdb"] = {"version": duck["version"], "load_s": duck["load_s"]}

    for q in queries:
        say("%s" % q["name"])
        r = {"name": q["name"], "key": q["key"], "tquel": q["tquel"],
             "tuples_in": sum(tables[k] for k in q["reads"]), "sqlite": {"variants": []}}
        # SQLite: every variant, best of reps; all must give the same count.
        best = None
        for vname, sql in q["sql"].items():
            sql = sql.replace("{T0}", str(t0)).replace("{U}", str(unit))
            plan = [row[-1] for row in db.execute("EXPLAIN QUERY PLAN " + sql)]
            v = {"name": vname, "sql": " ".join(sql.split()), "plan": plan, "runs_s": []}
            try:
                for _ in range(a.reps):
                    s, n = sql_run(db, sql, a.sql_timeout)
                    v["runs_s"].append(s)
                    v["count"] = n
                v["best_s"] = min(v["runs_s"])
                say("  SQLite %-24s %9d tuples  %s" % (vname, n, fmt_s(v["best_s"])))
                if best is None or v["best_s"] < best["best_s"]:
                    best = v
            except Timeout:
                v["timed_out"] = True
                say("  SQLite %-24s stopped after %s" % (vname, fmt_s(a.sql_timeout)))
            r["sqlite"]["variants"].append(v)
        counts_sql = {v["count"] for v in r["sqlite"]["variants"] if "count" in v}
        if len(counts_sql) > 1:
            print("MISMATCH: %s: the SQL variants disagree: %s" % (q["name"], {
                v["name"]: v.get("count") for v in r["sqlite"]["variants"]}))
            failed = True
        if best:
            r["sqlite"]["best"] = best["name"]
            r["sqlite"]["best_s"] = best["best_s"]
            r["result_tuples"] = best["count"]
            best_sql = best["sql"]
        if duck and best:
            want = [str(x) for x in db.execute(check_sql(best_sql, q)).fetchone()]
            r["duckdb"] = {}
            for threads, per in duck["runs"].items():
                d = per[q["key"]]
                d["same_answer"] = d["check"] == want
                r["duckdb"][threads] = d
                n, _, how = threads.partition(" ")  # "2", or "2 unbound"
                say("  DuckDB %s thread%s%s %9s tuples  %s%s" % (
                    n, "" if n == "1" else "s", ", " + how if how else "", d["check"][0],
                    fmt_s(d["best_s"]), "" if d["same_answer"] else "  MISMATCH"))
                if not d["same_answer"]:
                    print("MISMATCH: %s: DuckDB (%s threads) %s, SQLite %s"
                          % (q["name"], threads, d["check"], want))
                    failed = True
        # vigil: best of reps (exec_ns of the statement, and the wall time of the run), at
        # each thread count of VIGIL_THREAD_COUNTS; "vigil" is the first (one thread).
        for nthreads in VIGIL_THREAD_COUNTS if run_vigil else ():
            vr = {"runs": [], "threads": nthreads}
            out_path = os.path.join(tmp, "out.jsonl")
            checked = False
            if VIGIL_WARM:  # the cache made (or found) and settled by untimed runs
                vigil_run(vigil, a.trace, q, out_path, cache=True, threads=nthreads)
                benchlib.settle_cache(lambda: warm_stats(vigil, a.trace, q, out_path, nthreads),
                                      dirs=[a.trace])
            for rep in range(a.reps):
                wall, stats, rc, err, rss = vigil_run(vigil, a.trace, q, out_path,
                                                      cache=VIGIL_WARM, threads=nthreads)
                if rc not in (0, 1) or not stats:
                    print("FAILED: vigil query on %s (status %d): %s"
                          % (q["name"], rc, err.strip()[-2000:]))
                    failed = True
                    break
                if VIGIL_WARM:
                    benchlib.check_settled(stats, "query-bench: %s" % q["name"])
                st = stats["statements"][-1]
                vr["runs"].append({"wall_s": wall, "build_ns": stats.get("build_ns"),
                                   "exec_ns": st["exec_ns"], "tuples": st["tuples"],
                                   "exec_cpu_ns": st.get("exec_cpu_ns"),
                                   "peak_state": st.get("peak_state"),
                                   "max_rss": stats.get("max_rss_kb", 0) * 1024 or rss,
                                   "status": rc})
                say("  vigil  %d thread%s: exec %s (CPU %s), wall %s, %d tuples, peak_state %s"
                    % (nthreads, "s" if nthreads > 1 else "", fmt_s(st["exec_ns"] / 1e9),
                       fmt_s(st.get("exec_cpu_ns", 0) / 1e9), fmt_s(wall), st["tuples"],
                       st.get("peak_state")))
                if not checked and best:
                    checked = True
                    failed |= not check(db, best_sql, q, out_path, st["tuples"], vr)
            if vr["runs"]:
                vr["exec_ns"] = min(x["exec_ns"] for x in vr["runs"])
                # the CPU of the run whose exec was best (a loaded machine shows as wall
                # time well above it)
                vr["exec_cpu_ns"] = min(vr["runs"], key=lambda x: x["exec_ns"]).get("exec_cpu_ns")
                vr["load"] = os.getloadavg()[0]
                vr["wall_s"] = min(x["wall_s"] for x in vr["runs"])
                vr["build_ns"] = min(x["build_ns"] for x in vr["runs"] if x["build_ns"])
                vr["peak_state"] = max(x["peak_state"] or 0 for x in vr["runs"])
                vr["max_rss"] = max(x["max_rss"] for x in vr["runs"])
                vr["tuples"] = vr["runs"][0]["tuples"]
                if q["key"] == "scan":
                    vr["scan_tuples_per_s"] = tables["Send"] / (vr["exec_ns"] / 1e9)
            if nthreads == VIGIL_THREAD_COUNTS[0]:
                r["vigil"] = vr
                if vr["runs"]:
                    r["vigil_cache"] = cache_runs(vigil, a.trace, q, out_path, a.reps)
            r.setdefault("vigil_threads", {})[str(nthreads)] = vr
        result["queries"].append(r)

    db.close()
    try:
        os.unlink(os.path.join(tmp, "out.jsonl"))
    except FileNotFoundError:
        pass
    os.rmdir(tmp)
    result["settings"]["load_end"] = os.getloadavg()[0]
    report(result)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "query.json"), "w") as f:
        json.dump(result, f, indent=1)
    say("summary: %s" % os.path.join(a.out, "query.json"))
    return 1 if failed else 0


def warm_stats(vigil, trace, q, out_path, threads=None):
    """An untimed run over the relations cache: its --stats ({} if it failed), for
    benchlib.settle_cache. Without a settled cache every query sums every column in build,
    which touches their pages there instead of in exec: timed runs just after the cache
    was (re)written would measure another state than the others (session 16's 2-thread
    scan: 2.2 ms against 17.8 at 1 thread)."""
    return vigil_run(vigil, trace, q, out_path, cache=True, threads=threads)[1] or {}


def cache_runs(vigil, trace, q, out_path, reps):
    """End to end with the relations cache (docs/query.md): the first query after the
    cache is removed (cold: reads the trace, builds, writes the cache), then best of reps
    warm (maps it). Wall seconds, max RSS, the outcome --stats names."""
    cache = os.path.join(trace, ".vigil-cache")
    out = {"warm_runs_s": []}
    if q["key"] == "scan":  # the first query, cache cold, at 1 thread and at 2 in turn
        for rep in range(reps):
            for threads in (1, 2):
                if os.path.exists(cache):
                    os.unlink(cache)
                wall, stats, rc, err, rss = vigil_run(vigil, trace, q, out_path,
                                                      cache=True, threads=threads)
                out.setdefault("cold_%d_thread_runs_s" % threads, []).append(wall)
                say("  vigil cold at %d thread%s: %s" % (threads, "s" * (threads > 1),
                                                         fmt_s(wall)))
        for threads in (1, 2):
            out["cold_%d_thread_s" % threads] = min(out["cold_%d_thread_runs_s" % threads])
    if os.path.exists(cache):
        os.unlink(cache)
    for rep in range(reps + 1):
        wall, stats, rc, err, rss = vigil_run(vigil, trace, q, out_path, cache=True)
        if rc not in (0, 1) or not stats:
            raise SystemExit("query-bench: vigil query with the cache failed: %s" % err)
        if rep == 0:
            out.update({"cold_s": wall, "cold_outcome": stats.get("cache"), "cold_rss": rss,
                        "cache_bytes": benchlib.cache_bytes(trace)})
            # untimed warm runs until none sums the cached columns again
            benchlib.settle_cache(lambda: warm_stats(vigil, trace, q, out_path),
                                  dirs=[trace])
        else:
            benchlib.check_settled(stats, "query-bench: %s with the cache" % q["name"])
            out["warm_runs_s"].append(wall)
            out["warm_outcome"] = stats.get("cache")
            # --stats's own VmHWM: wait4's maxrss keeps the forked Python's size
            out["warm_rss"] = stats.get("max_rss_kb", 0) * 1024 or rss
    out["warm_s"] = min(out["warm_runs_s"])
    say("  vigil with the cache: cold %s (%s), warm %s (%s), max RSS warm %.0f MB"
        % (fmt_s(out["cold_s"]), out["cold_outcome"], fmt_s(out["warm_s"]),
           out["warm_outcome"], out["warm_rss"] / 1e6))
    return out


def check(db, sql, q, out_path, vigil_tuples, vr):
    """vigil's answer against SQLite's: counts, then the sets (digest, then tuple by tuple
    when the digests differ). Prints MISMATCH and returns False when they differ."""
    t = time.perf_counter()
    s_rows = db.execute(sql)
    s_n, s_h = digest(tuple(r) for r in s_rows)
    v_n, v_h = digest(vigil_rows(out_path, q))
    vr["check"] = {"sqlite_tuples": s_n, "vigil_tuples": v_n, "vigil_stats_tuples": vigil_tuples,
                   "equal_sets": s_n == v_n and s_h == v_h}
    say("  check: SQLite %d, vigil %d (stats %d), sets %s (%s)"
        % (s_n, v_n, vigil_tuples, "equal" if vr["check"]["equal_sets"] else "DIFFERENT",
           fmt_s(time.perf_counter() - t)))
    if vr["check"]["equal_sets"] and vigil_tuples == v_n:
        return True
    print("MISMATCH: %s: SQLite %d tuples, vigil %d (its --stats: %d)"
          % (q["name"], s_n, v_n, vigil_tuples))
    if s_n != v_n or s_h != v_h:
        s_set = set(tuple(r) for r in db.execute(sql))
        v_set = set(vigil_rows(out_path, q))
        only_s, only_v = sorted(s_set - v_set), sorted(v_set - s_set)
        names = ("at" if q["kind"] == "event" else "from, to") + ", " + ", ".join(q["values"])
        print("  tuples (%s) only in SQLite: %d, e.g. %s" % (names, len(only_s), only_s[:5]))
        print("  tuples only in vigil: %d, e.g. %s" % (len(only_v), only_v[:5]))
        vr["check"]["only_sqlite"] = only_s[:20]
        vr["check"]["only_vigil"] = only_v[:20]
    return False


def report_duck_binding(res):
    """With the CPUs bound, DuckDB's runs bound beside the same runs unbound (same process,
    same tables, right after): a bound figure well above its unbound one would mean the
    binding held DuckDB back (as node's event loop did at equal FIFO priority)."""
    rows = [q for q in res["queries"] if "1 unbound" in q.get("duckdb", {})]
    if not rows:
        return
    print("\nDuckDB with the CPUs bound (as in the table above) and unbound (the same "
          "process, right after; best of %d; every run FIFO):\n" % res["settings"]["reps"])
    print("| query | 1 thread, bound | unbound | bound / unbound | 2 threads, bound | unbound "
          "| bound / unbound |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for q in rows:
        d = q["duckdb"]
        cells = []
        for t in ("1", "2"):
            b, u = d[t]["best_s"], d[t + " unbound"]["best_s"]
            cells += [fmt_s(b), fmt_s(u), "%.2f" % (b / u)]
        print("| %s | %s |" % (q["name"], " | ".join(cells)))


def report(res):
    s = res["sqlite"]
    print("## vigil query against SQLite %s\n" % res["settings"]["sqlite_version"])
    tr = res["trace"]
    print("Trace: %s. SQLite (%s): load %s, indexes %s, ANALYZE %s; %.0f MB.\n" % (
        ", ".join("%s %s tuples" % (k, v) for k, v in tr["relations"].items()),
        s["loader"], fmt_s(s["load_s"]), fmt_s(s["index_s"]), fmt_s(s["analyze_s"]),
        s["db_bytes"] / 1e6))
    st = res["settings"]
    print("Timed runs at %s; 1-minute load %.1f at the start, %.1f at the end. vigil's "
          "exec: %s.\n" % (st.get("mode", "normal priority"), st.get("load_start", 0),
                           st.get("load_end", 0),
                           "relations cache warm (BENCH_QUERY_WARM=1)" if st.get("vigil_warm")
                           else "relations built in the process (VIGIL_CACHE=off)"))
    print("| query | tuples in | result tuples | vigil exec | vigil total (reads the trace) "
          "| SQLite (best plan) | SQLite / vigil exec | vigil peak_state | vigil max RSS "
          "| same answer |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for q in res["queries"]:
        v = q.get("vigil", {})
        sq = q["sqlite"]
        ratio = "-"
        if v.get("exec_ns") and sq.get("best_s") is not None:
            ratio = "%.2f" % (sq["best_s"] / (v["exec_ns"] / 1e9))
        sqlite = "%s (%s)" % (fmt_s(sq.get("best_s")), sq.get("best", "none finished"))
        rss = "%.0f MB" % (v["max_rss"] / 1e6) if v.get("max_rss") else "-"
        same = "-"
        if "check" in v:
            same = "yes (sets)" if v["check"]["equal_sets"] else "**NO**"
        print("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            q["name"], q["tuples_in"], q.get("result_tuples", "-"),
            fmt_s(v["exec_ns"] / 1e9) if v.get("exec_ns") else "-",
            fmt_s(v.get("wall_s")), sqlite, ratio, v.get("peak_state", "-"), rss, same))
    if "duckdb" in res:
        print("\nAgainst DuckDB %s (the same tuples from `vigil query --format csv`, loaded "
              "into its tables; loading not counted; best of %d):\n"
              % (res["duckdb"]["version"], res["settings"]["reps"]))
        print("| query | vigil exec, 1 thread | DuckDB 1 thread | DuckDB / vigil, 1 "
              "| vigil exec, 2 threads | DuckDB 2 threads | DuckDB / vigil, 2 | same answer |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        for q in res["queries"]:
            d = q.get("duckdb")
            if not d:
                continue
            cells = []
            for t in ("1", "2"):
                ex = q.get("vigil_threads", {}).get(t, {}).get("exec_ns")
                ex = ex / 1e9 if ex else None
                cells += [fmt_s(ex), fmt_s(d[t]["best_s"]),
                          "%.1f" % (d[t]["best_s"] / ex) if ex else "-"]
            same = all(d[t]["same_answer"] for t in d)
            print("| %s | %s | %s |" % (q["name"], " | ".join(cells),
                                        "yes (count, sums)" if same else "**NO**"))
        report_duck_binding(res)
    if any("vigil_cache" in q for q in res["queries"]):
        print("\nEnd to end, `vigil query` wall time from the trace to the answer with the "
              "relations cache (docs/query.md): cold (no cache: reads the trace, builds, "
              "writes the cache), warm (best of %d):\n" % res["settings"]["reps"])
        for q in res["queries"]:
            c = q.get("vigil_cache", {})
            if "cold_1_thread_s" in c:
                print("First query, cache cold (%s; best of %d, 1 and 2 threads in turn): "
                      "%s at 1 thread, %s at 2: %.2fx "
                      "(target 1.8x)\n" % (q["name"], len(c["cold_1_thread_runs_s"]),
                                           fmt_s(c["cold_1_thread_s"]),
                                           fmt_s(c["cold_2_thread_s"]),
                                           c["cold_1_thread_s"] / c["cold_2_thread_s"]))
        print("| query | cold | warm | cold / warm | max RSS warm | cache file |")
        print("|---|---:|---:|---:|---:|---:|")
        for q in res["queries"]:
            c = q.get("vigil_cache")
            if c:
                print("| %s | %s | %s | %.0f | %.0f MB | %.0f MB |" % (
                    q["name"], fmt_s(c["cold_s"]), fmt_s(c["warm_s"]),
                    c["cold_s"] / c["warm_s"], c["warm_rss"] / 1e6, c["cache_bytes"] / 1e6))
    print("\nSQLite, every plan tried (best of %d; count(*) over the DISTINCT result):\n"
          % res["settings"]["reps"])
    print("| query | plan | time | tuples |")
    print("|---|---|---:|---:|")
    for q in res["queries"]:
        for v in q["sqlite"]["variants"]:
            tm = ("> %s (stopped)" % fmt_s(res["settings"]["sql_timeout_s"])
                  if v.get("timed_out") else fmt_s(v.get("best_s")))
            print("| %s | %s | %s | %s |" % (q["key"], v["name"], tm, v.get("count", "-")))
    counts = res["settings"].get("vigil_threads", [1])
    if len(counts) > 1:
        print("\nvigil at %s threads (`--threads N`; exec: the statement, best of %d; the "
              "answers checked against SQLite at each):\n"
              % (", ".join(map(str, counts)), res["settings"]["reps"]))
        print("| query | " + " | ".join("exec, %d thread%s" % (n, "s" if n > 1 else "")
                                        for n in counts) +
              " | " + " | ".join("SQLite / vigil, %d" % n for n in counts) +
              " | speedup %d → %d |" % (counts[0], counts[-1]))
        print("|---|" + "---:|" * (2 * len(counts) + 1))
        for q in res["queries"]:
            vt = q.get("vigil_threads", {})
            ex = [vt.get(str(n), {}).get("exec_ns") for n in counts]
            sq = q["sqlite"].get("best_s")
            ratios = ["%.2f" % (sq / (e / 1e9)) if e and sq is not None else "-" for e in ex]
            speed = "%.2f×" % (ex[0] / ex[-1]) if ex[0] and ex[-1] else "-"
            print("| %s | %s | %s | %s |" % (q["name"], " | ".join(
                fmt_s(e / 1e9) if e else "-" for e in ex), " | ".join(ratios), speed))
        print("\nCPU time of those runs (all threads, `exec_cpu_ns`; wall well above CPU / "
              "threads means the threads waited for a core) and the 1-minute load then:\n")
        print("| query | " + " | ".join("CPU, %d thread%s" % (n, "s" if n > 1 else "")
                                        for n in counts) + " | load |")
        print("|---|" + "---:|" * (len(counts) + 1))
        for q in res["queries"]:
            vt = q.get("vigil_threads", {})
            cpu = [vt.get(str(n), {}).get("exec_cpu_ns") for n in counts]
            loads = [vt.get(str(n), {}).get("load") for n in counts]
            print("| %s | %s | %s |" % (q["name"], " | ".join(
                fmt_s(c / 1e9) if c else "-" for c in cpu),
                " / ".join("%.0f" % x for x in loads if x is not None)))
    for q in res["queries"]:
        rate = q.get("vigil", {}).get("scan_tuples_per_s")
        if rate:
            print("\nSelective scan: %.1f M tuples/s scanned by vigil (target > 50 M): %s"
                  % (rate / 1e6, "PASS" if rate > 50e6 else "MISS"))
    if not res["settings"]["vigil_side"]:
        print("\n(vigil side not run: --dry-run, or `vigil query` not built)")
    print()


if __name__ == "__main__":
    sys.exit(main())
