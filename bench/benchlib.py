"""bench/benchlib.py: what the benchmarks over a recording of bench/query-subject share
(first_query_bench.py, scale_bench.py, skip_bench.py, hugepages_bench.py, query_bench.py,
query_pg_bench.py, ui_bench.py, e2e_bench.py): their common arguments and smoke sizes,
recording the subject, running `vigil` timed (pinned with BENCH_RT=1, bench/pinned.py) and
reading its `--stats` line, the relations cache beside a trace and settled before warm
runs are timed (settle_cache), an environment free of the user's vigil settings, and
writing the results."""
import argparse
import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pinned

SMOKE = os.environ.get("VIGIL_BENCH_SMOKE") == "1"
SMOKE_EVENTS = 200_000
QUERY_SUBJECT_THREADS = 2  # the subject's recording threads in every benchmark

# query-bench's selective scan: mailbox 7 of 100, size above 58982 of 0..65535: 0.1%
SCAN = ("range of S is Send retrieve (S.conn, S.size) "
        "where S.mailbox = 7 and S.size > 58982")

# what a user's environment may set that would change what a benchmark measures
VIGIL_KNOBS = ("VIGIL_CACHE", "VIGIL_CACHE_DIR", "VIGIL_BUILD_MEMORY", "VIGIL_QUERY_MEMORY",
               "VIGIL_THREADS", "VIGIL_SKIP", "XDG_CACHE_HOME")


def say(*a):
    print(*a, file=sys.stderr, flush=True)


def parser(doc, reps, smoke_reps=1, events=10_000_000):
    """The arguments every such benchmark takes: BUILD_DIR, --events, --reps, --trace (an
    existing recording of the subject, never removed); smoke sizes with VIGIL_BENCH_SMOKE=1."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("build", help="a built vigil build directory")
    ap.add_argument("--events", type=int, default=SMOKE_EVENTS if SMOKE else events)
    ap.add_argument("--reps", type=int, default=smoke_reps if SMOKE else reps)
    ap.add_argument("--trace", help="an existing trace of the subject (not removed)")
    return ap


def paths(args):
    """args.bin, args.vigil, args.subject and args.out (BENCH_OUT, else BUILD/bench)."""
    args.bin = os.path.join(args.build, "bin")
    args.vigil = os.path.join(args.bin, "vigil")
    args.subject = os.path.join(args.build, "bench", "query-subject")
    args.out = os.environ.get("BENCH_OUT") or os.path.join(args.build, "bench")
    return args


def record_subject(build, trace, events, threads=QUERY_SUBJECT_THREADS):
    """Records `events` events of bench/query-subject under `vigil record` into `trace`;
    returns the subject's JSON line (its own counts). A failure ends the benchmark."""
    say("recording %d events of query-subject (%d threads) ..." % (events, threads))
    t0 = time.monotonic()
    p = subprocess.run([os.path.join(build, "bin", "vigil"), "record", "-q", "-o", trace, "--",
                        os.path.join(build, "bench", "query-subject"), "--events", str(events),
                        "--threads", str(threads)], capture_output=True, text=True)
    if p.returncode:
        sys.exit("vigil record: exit %d: %s" % (p.returncode, p.stderr[-2000:]))
    say("recorded in %.1f s, %.0f MB" % (time.monotonic() - t0, du(trace) / 1e6))
    return p.stdout.strip()


def trace_of(args, tmp):
    """args.trace, or a new recording of args.events events in tmp."""
    if args.trace:
        return args.trace
    trace = os.path.join(tmp, "trace")
    record_subject(args.build, trace, args.events)
    return trace


def clean_env(tmp, **extra):
    """The environment without the user's vigil settings, HOME in tmp (so no user cache
    directory is read or written), the cache written whatever the trace's size."""
    env = dict(os.environ)
    for k in VIGIL_KNOBS:
        env.pop(k, None)
    env.update({"HOME": os.path.join(tmp, "home"), "VIGIL_CACHE_MIN_EVENTS": "0"})
    env.update({k: str(v) for k, v in extra.items()})
    return env


def remove_cache(trace):
    """The relations cache beside the trace: .vigil-cache and .vigil-cache.*."""
    for name in os.listdir(trace):
        if name == ".vigil-cache" or name.startswith(".vigil-cache."):
            os.unlink(os.path.join(trace, name))


def cache_bytes(trace):
    return sum(os.path.getsize(os.path.join(trace, n)) for n in os.listdir(trace)
               if n == ".vigil-cache" or n.startswith(".vigil-cache."))


# ---- the relations cache settled ------------------------------------------------------

def _cache_files(d):
    """The relations cache's files in folder d: beside a trace (.vigil-cache*) or in a
    VIGIL_CACHE_DIR (relations-HASH.vgc*; made only when the trace's folder cannot be
    written: none if d does not exist)."""
    if not os.path.isdir(d):
        return []
    return [os.path.join(d, n) for n in os.listdir(d)
            if n.startswith(".vigil-cache") or n.startswith("relations-")]


def settle_cache(run_warm, dirs=(), tries=10):
    """Runs untimed warm queries until the relations cache is settled: until one sums
    none of the cached columns it reads (`--stats` cache_checked_bytes 0). A query sums
    the columns no earlier query recorded as checked in the same file
    (PATH.rel-NAME%checked, src/relations/cache_checked.c), and records them only for a
    file whose times are a second older than its check (racily clean): so the queries in
    the second after the cache was written sum every column they read again (about 174 MB
    at 10M events for the selective scan), and a timed run among them measures the sums,
    not the query. run_warm(): one untimed warm query, returning its --stats (a dict);
    dirs: the folders that may hold the cache's files (the trace's, VIGIL_CACHE_DIR),
    waited on until they are a second old
    (no query spent meanwhile). Returns the settled query's --stats; ends the benchmark
    when the cache does not settle (a cache the query cannot write is summed every time)."""
    newest = 0.0
    for d in dirs:
        for f in _cache_files(d):
            st = os.stat(f)
            newest = max(newest, st.st_mtime, st.st_ctime)
    wait = newest + 1.1 - time.time()
    if wait > 0:
        time.sleep(wait)
    summed = []
    for _ in range(tries):
        st = run_warm()
        if st.get("cache") != "warm":
            sys.exit("settling the relations cache: the query was not warm: %s" % st)
        if "cache_checked_bytes" not in st:
            sys.exit("settling the relations cache: --stats has no cache_checked_bytes")
        if st["cache_checked_bytes"] == 0:
            return st
        summed.append(st["cache_checked_bytes"])
        time.sleep(0.5)
    sys.exit("the relations cache did not settle: %d warm queries each summed cached "
             "columns again (%s bytes): is its folder writable?" % (tries, summed))


def check_settled(stats, what):
    """Ends the benchmark when a timed warm run summed cached columns (`--stats`
    cache_checked_bytes): it would time the check, not the query (settle_cache)."""
    n = stats.get("cache_checked_bytes")
    if n is None:
        sys.exit("%s: --stats has no cache_checked_bytes" % what)
    if n:
        sys.exit("%s: a timed warm run summed %d bytes of cached columns again: the "
                 "relations cache was not settled (bench/benchlib.py settle_cache)"
                 % (what, n))


def stats_of(stderr):
    """The "stats" object of `--stats`'s line on stderr ({} without one)."""
    for line in stderr.splitlines():
        if line.startswith('{"stats"'):
            return json.loads(line)["stats"]
    return {}


class Run:
    """One finished command: wall seconds, exit status, stdout (text, or None when it went
    to a file), stderr, its --stats (or {}), its peak RSS in bytes (wait4)."""

    def __init__(self, wall, rc, out, err, rss):
        self.wall, self.rc, self.out, self.err, self.rss = wall, rc, out, err, rss
        self.stats = stats_of(err)

    def lines(self):
        """stdout's lines sorted: an answer compared as a set of tuples"""
        return sorted(self.out.splitlines())

    def digest(self):
        """stdout's lines as (count, sum of their hashes): a large answer compared as a
        multiset of tuples without sorting it (equal within one process)"""
        lines = self.out.splitlines()
        return len(lines), sum(map(hash, lines)) & 0xFFFFFFFFFFFFFFFF


def _preexec(threads, more):
    rt = pinned.preexec(threads) if threads else None
    if not more:
        return rt

    def both():
        more()
        if rt:
            rt()
    return both


def run(cmd, env=None, threads=None, stdout_path=None, preexec=None):
    """Runs cmd, timed from spawn to exit; threads: a timed run, pinned with BENCH_RT=1 on
    that many CPUs; preexec: more to do in the child (thp_off). Never raises on a failure:
    see Run.rc."""
    with tempfile.TemporaryFile("w+") as err, \
            (open(stdout_path, "w") if stdout_path else tempfile.TemporaryFile("w+")) as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env,
                             preexec_fn=_preexec(threads, preexec))
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        err.seek(0)
        text = None
        if not stdout_path:
            out.seek(0)
            text = out.read()
        return Run(wall, os.waitstatus_to_exitcode(status), text, err.read(),
                   usage.ru_maxrss * 1024)


def vigil(args, argv, env=None, threads=None, preexec=None, ok=(0,), stdout_path=None):
    """`vigil ARGV...` (run()); an exit status outside ok ends the benchmark with stderr."""
    r = run([args.vigil] + list(argv), env=env, threads=threads, preexec=preexec,
            stdout_path=stdout_path)
    if r.rc not in ok:
        sys.exit("vigil %s: exit %d: %s" % (" ".join(argv[:2]), r.rc, r.err[-2000:]))
    return r


def query(args, trace, text, env=None, threads=None, preexec=None, stdout_path=None):
    """`vigil query TRACE --format csv --stats [--threads N] -e TEXT`"""
    argv = ["query", trace, "--format", "csv", "--stats", "-e", text]
    if threads:
        argv += ["--threads", str(threads)]
    return vigil(args, argv, env=env, threads=threads, preexec=preexec,
                 stdout_path=stdout_path)


def file_digest(path):
    """A file's SHA-1 (an answer whose order is fixed, compared without reading it into
    Python's strings) and its lines."""
    h, lines = hashlib.sha1(), 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
            lines += block.count(b"\n")
    return h.hexdigest(), lines


def thp_off():
    """A preexec: transparent huge pages off for the child and what it runs
    (prctl PR_SET_THP_DISABLE, kept across fork and execve): madvise(MADV_HUGEPAGE) is then
    ignored, as if vigil did not ask for huge pages."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(41, 1, 0, 0, 0) != 0:  # PR_SET_THP_DISABLE
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_THP_DISABLE)")


def du(path):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(d, f))
    return total


def load():
    return os.getloadavg()[0]


def write_json(out_dir, name, result):
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, name)
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    return path


class Workdir:
    """A temporary directory removed at the end (with: the block)."""

    def __init__(self, prefix):
        self.path = tempfile.mkdtemp(prefix=prefix)

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


def measure_in_workdir(args, prefix, measure):
    """A benchmark's main: pinned.check(), then measure(args, tmp) in a temporary
    directory named from prefix; a trace given by --trace is left without the relations
    cache the runs made beside it. Returns 0, the exit status."""
    pinned.check()
    with Workdir(prefix) as tmp:
        try:
            measure(args, tmp)
        finally:
            if args.trace:
                remove_cache(args.trace)
    return 0


# ---- DuckDB, the peer (bench/duckdb) ---------------------------------------------------

def duckdb_npm(build):
    """The folder holding DuckDB's npm package pinned in bench/duckdb/package-lock.json,
    installed once into BUILD/bench/duckdb-npm (npm ci, from the npm registry only), with
    duck.cjs beside it; None after saying why when node or npm is missing or npm ci failed."""
    here = os.path.dirname(os.path.abspath(__file__))
    d = os.path.join(build, "bench", "duckdb-npm")
    api = os.path.join(d, "node_modules", "@duckdb", "node-api")
    if not shutil.which("node") or not shutil.which("npm"):
        say("DuckDB left out: node or npm missing (make deps installs them)")
        return None
    lock = os.path.join(here, "duckdb", "package-lock.json")
    have = os.path.join(d, "package-lock.json")
    same = os.path.exists(have) and open(lock, "rb").read() == open(have, "rb").read()
    if not same or not os.path.isdir(api):
        say("installing DuckDB's npm package into %s (npm ci)" % d)
        os.makedirs(d, exist_ok=True)
        for f in ("package.json", "package-lock.json"):
            shutil.copy(os.path.join(here, "duckdb", f), d)
        if subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=d,
                          stdout=sys.stderr).returncode != 0:
            os.unlink(have)
            say("DuckDB left out: npm ci failed")
            return None
    shutil.copy(os.path.join(here, "duckdb", "duck.cjs"), d)
    return d


def duckdb_e2e(build):
    """bench/duckdb/duck_e2e.c built against the npm package's libduckdb.so (the command
    line's part the end-to-end benchmark needs); its path, or None after saying why."""
    d = duckdb_npm(build)
    if not d:
        return None
    # absolute: the run path is read from wherever duck-e2e runs (a relative BUILD given)
    lib = os.path.abspath(os.path.join(d, "node_modules", "@duckdb", "node-bindings-linux-x64"))
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "duckdb", "duck_e2e.c")
    exe = os.path.join(d, "duck-e2e")
    if not os.path.exists(os.path.join(lib, "libduckdb.so")):
        say("DuckDB's end to end left out: no libduckdb.so in %s" % lib)
        return None
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        p = subprocess.run(["cc", "-O2", "-std=c11", "-o", exe, src, "-L" + lib,
                            "-l:libduckdb.so", "-Wl,-rpath," + lib], capture_output=True,
                           text=True)
        if p.returncode:
            say("DuckDB's end to end left out: building duck-e2e failed: %s" % p.stderr)
            return None
    return exe


def export_csv(vigil_path, trace, relation, columns, path):
    """`vigil query --format csv` of every tuple of relation's columns (the peers' load)."""
    v = relation[0]
    text = "range of %s is %s retrieve (%s)" % (v, relation, ", ".join(
        "%s.%s" % (v, c) for c in columns))
    with open(path, "w") as f:
        rc = subprocess.run([vigil_path, "query", trace, "-e", text, "--format", "csv"],
                            stdout=f).returncode
    if rc not in (0, 1):
        sys.exit("exporting %s as CSV failed (status %d)" % (relation, rc))


if __name__ == "__main__":  # bench/query.sh: benchlib.py duckdb-npm BUILD_DIR
    if len(sys.argv) == 3 and sys.argv[1] == "duckdb-npm":
        print(duckdb_npm(os.path.abspath(sys.argv[2])) or "")
    else:
        sys.exit("usage: benchlib.py duckdb-npm BUILD_DIR")
