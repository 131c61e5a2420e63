#!/usr/bin/python3
"""bench/scale_bench.py: memory and wall time of selective queries as the trace grows past
memory budgets, in one run.

    scale_bench.py BUILD_DIR [--events N] [--reps 5] [--trace DIR] [--lock]

(`make bench` runs it as `scale`; VIGIL_BENCH_SMOKE=1: 200,000 events, 2 repetitions; the
figures go to BENCH_OUT/scale.json.)

Records --events events of bench/query-subject (2 threads) with `vigil record` (or uses
--trace), then:

* spill RSS: `range of L is Lock retrieve (L.lock, L.conn) where L.conn = 7` with
  VIGIL_CACHE=off (the first query: its build holds the relation), once with the default
  VIGIL_BUILD_MEMORY and once with a budget of a sixteenth of the trace's bytes (so the
  trace is larger than it and the build spills); `--stats` max_rss_kb per `Lock` tuple
  (the relation the query touches; its tuples from `vigil explain`) and the ratio of
  the two peaks. The answers must be equal, and the bounded run must have spilled.
* warm selective scan end to end: query-bench's selective scan (`where S.mailbox = 7 and
  S.size > 58982`) with the relations cache on (in a directory of its own), once cold (it
  writes the cache), then settled (benchlib.settle_cache: untimed warm queries until one
  sums none of the cached columns), then --reps times warm at --threads 2 and 1
  (interleaved: each rep runs both, and DuckDB's beside them): wall time of the whole
  `vigil query` process (trace to answer), best and median; max RSS per `Send` tuple. Every
  answer must equal the cold one, and no timed run may sum a cached column (`--stats`
  cache_checked_bytes: the benchmark stops otherwise). The brief's target: under 100 ms at
  10M. Beside it, the best of --reps `vigil --version` the same way: what starting and
  ending a process costs on the machine at the time. The peer: DuckDB's command line for
  the same scan (bench/duckdb/duck_e2e.c, linked against the libduckdb.so of the npm
  package query-bench uses): a process that opens a database file holding the same `Send`
  tuples (exported by vigil, loaded, not timed; its pages in the page cache) and prints the
  answer, timed the same way, the same number of tuples; and its own start and exit
  (`duck-e2e --version`). Left out with a line when node/npm or a C compiler is missing.

--lock (`make bench-scale`, not in `make bench`: at its default of 1,000,000,000 events it
records for about 20 minutes, needs about 40 bytes of disk per event and runs for an
hour): only `range of L is Lock retrieve (L.lock, L.conn) where L.conn = 7`, with the
cache off at the default budget and at VIGIL_BUILD_MEMORY=1G, then cold (cache built and
written), settled, and warm --reps times at 2 and 1 threads; wall, max RSS per `Lock`
tuple, spilled bytes, the evaluation's time, every answer equal; BENCH_OUT/scale_lock.json.
Only the warm runs are pinned with BENCH_RT=1.

* a query over a small relation: a selective query over each of `Send` (5.44M tuples at
  10M events), `Lock` (0.74M) and `Audit` (9.7K), as a user first meets it (relations
  cache cold: every cache file removed before each run, the relation built whole and
  written) and warm (settled), --reps times each at 2 threads, the relations in turn:
  median wall, max RSS, and each relation's share of `Send`'s tuples beside its share
  of `Send`'s time (warm: less the process's start, `vigil --version`'s wall). The
  brief's target: a query over a small relation costs in proportion to that relation,
  not to the trace. Every answer equal to its first.

Load average is printed with every figure (a shared machine's wall times are noisy);
BENCH_RT=1 runs the warm queries pinned (bench/pinned.py)."""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import pinned  # noqa: E402

LOCK = "range of L is Lock retrieve (L.lock, L.conn) where L.conn = 7"
SCAN = benchlib.SCAN


def tuples(args, trace, text, env):
    """The tuples of the relation the query's scan reads, from vigil explain."""
    out = benchlib.vigil(args, ["explain", trace, "-e", text], env=env).out
    m = re.findall(r" (\d+) tuples\)", out)
    if not m:
        sys.exit("vigil explain: no tuple count in %s" % out)
    return int(m[-1])


def main():
    ap = benchlib.parser(__doc__, reps=5, smoke_reps=2)
    ap.add_argument("--lock", action="store_true",
                    help="the Lock query alone, cache off and on (make bench-scale)")
    args = benchlib.paths(ap.parse_args())
    return benchlib.measure_in_workdir(args, "vigil-scalebench.", measure)


def spill(args, trace, trace_bytes, base):
    """The first query's build, at the default budget and at a sixteenth of the trace."""
    off = dict(base, VIGIL_CACHE="off")
    ntup = tuples(args, trace, LOCK, off)
    budget = max(trace_bytes // 16, 1 << 20)
    runs = {}
    for name, env in (("default", off), ("bounded", dict(off, VIGIL_BUILD_MEMORY=str(budget)))):
        r = benchlib.query(args, trace, LOCK, env=env)
        runs[name] = {"wall_s": r.wall, "answer": r.lines(),
                      "max_rss": r.stats["max_rss_kb"] * 1024,
                      "spilled_bytes": r.stats["spilled_bytes"], "load": benchlib.load()}
    if runs["default"]["answer"] != runs["bounded"]["answer"]:
        sys.exit("MISMATCH: the Lock query's answers differ with VIGIL_BUILD_MEMORY=%d"
                 % budget)
    if not runs["bounded"]["spilled_bytes"]:
        sys.exit("the bounded build spilled nothing (VIGIL_BUILD_MEMORY=%d): the figure "
                 "would prove nothing" % budget)
    d, b = runs["default"], runs["bounded"]
    print("| first query, `Lock` where conn = 7 (%d tuples, trace %.0f MB) | "
          "VIGIL_BUILD_MEMORY | max RSS | per `Lock` tuple | spilled | wall | load |"
          % (ntup, trace_bytes / 1e6))
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, r in (("default", d), ("bounded", b)):
        print("| %s | %s | %.1f MB | %.1f B | %.1f MB | %.2f s | %.1f |" % (
            name, "default" if name == "default" else "%.1f MB" % (budget / 1e6),
            r["max_rss"] / 1e6, r["max_rss"] / max(ntup, 1), r["spilled_bytes"] / 1e6,
            r["wall_s"], r["load"]))
    print("bounded / default max RSS: %.2fx" % (b["max_rss"] / d["max_rss"]))
    return {"tuples": ntup, "budget": budget,
            "default": {k: v for k, v in d.items() if k != "answer"},
            "bounded": {k: v for k, v in b.items() if k != "answer"}}


def warm_scan(args, trace, base, tmp):
    """The selective scan end to end, cache warm, at 2 and 1 threads, beside DuckDB's: the
    runs interleaved (each rep: vigil and DuckDB at 2 threads, then at 1), so that a burst
    of load on a shared machine falls on every arm alike, not on one arm's block of runs."""
    cache = dict(base, VIGIL_CACHE_DIR=os.path.join(tmp, "cache"))
    benchlib.remove_cache(trace)  # a --trace given may hold an earlier query's cache
    cold = benchlib.query(args, trace, SCAN, env=cache)
    if cold.stats.get("cache") != "cold":
        sys.exit("the first query with the cache on was not cold: %s" % cold.stats)
    cold_ans = cold.lines()
    nsend = tuples(args, trace, SCAN, cache)  # from the cache just written
    duck = duckdb_prepare(args, trace, tmp)  # its database loaded, not timed
    # untimed warm queries until none sums the cached columns again
    benchlib.settle_cache(lambda: benchlib.query(args, trace, SCAN, env=cache).stats,
                          dirs=[trace, cache["VIGIL_CACHE_DIR"]])
    runs = {t: {"walls": [], "rss": [], "copied": 0, "duck": []} for t in (2, 1)}
    for _ in range(args.reps):
        for threads in (2, 1):
            w = runs[threads]
            r = benchlib.query(args, trace, SCAN, env=cache, threads=threads)
            if r.stats.get("cache") != "warm":
                sys.exit("a query after the cold one was not warm: %s" % r.stats)
            benchlib.check_settled(r.stats, "scale: the warm selective scan")
            if r.lines() != cold_ans:
                sys.exit("MISMATCH: the warm selective scan's answer differs from the "
                         "cold one's")
            w["walls"].append(r.wall)
            w["rss"].append(r.stats["max_rss_kb"] * 1024)
            w["copied"] = max(w["copied"], r.stats.get("cache_copied_bytes", 0))
            if duck:
                w["duck"].append(duckdb_run(duck, threads, len(cold_ans) - 1))
    load = benchlib.load()
    warm = {t: {"best_s": min(w["walls"]), "median_s": statistics.median(w["walls"]),
                "max_rss": max(w["rss"]), "load": load, "copied_bytes": w["copied"]}
            for t, w in runs.items()}
    # the floor: a vigil process that starts and exits (on a loaded machine, far from 0)
    floor = min(benchlib.vigil(args, ["--version"], env=base, threads=1).wall
                for _ in range(args.reps))
    print("\n| selective scan, %d events (`Send`: %d tuples), %s | wall best | median | "
          "max RSS | per `Send` tuple | load |" % (args.events, nsend, pinned.describe()))
    print("|---|---:|---:|---:|---:|---:|")
    print("| cold (cache written), 2 threads | %.3f s | | | | |" % cold.wall)
    for threads, w in warm.items():
        print("| warm, %d thread%s | %.1f ms | %.1f ms | %.1f MB | %.1f B | %.1f |" % (
            threads, "s" if threads > 1 else "", w["best_s"] * 1e3, w["median_s"] * 1e3,
            w["max_rss"] / 1e6, w["max_rss"] / max(nsend, 1), w["load"]))
    print("| `vigil --version`, the process's start and exit alone | %.1f ms | | | | |"
          % (floor * 1e3))
    result = {"tuples": nsend, "cold_s": cold.wall, "floor_s": floor,
              "answers": len(cold_ans), "threads": {str(k): v for k, v in warm.items()}}
    if duck:
        d = {"version": duck["version"], "db_bytes": duck["db_bytes"], "threads": {
            str(t): {"best_s": min(w["duck"]), "median_s": statistics.median(w["duck"]),
                     "load": load} for t, w in runs.items()}}
        d["floor_s"] = min(benchlib.run([duck["exe"], "--version"], threads=1).wall
                           for _ in range(args.reps))
        result["duckdb"] = d
        print("\n| the same scan end to end, DuckDB %s command line (its database file "
              "of `Send`, in the page cache), %s | wall best | median | DuckDB / vigil, "
              "best | medians | load |" % (d["version"], pinned.describe()))
        print("|---|---:|---:|---:|---:|---:|")
        for t in ("2", "1"):
            x, v = d["threads"][t], warm[int(t)]
            print("| %s thread%s | %.1f ms | %.1f ms | %.2f | %.2f | %.1f |" % (
                t, "s" if t == "2" else "", x["best_s"] * 1e3, x["median_s"] * 1e3,
                x["best_s"] / v["best_s"], x["median_s"] / v["median_s"], x["load"]))
        print("| `duck-e2e --version`, the process's start (libduckdb.so loaded) and exit "
              "| %.1f ms | | | | |" % (d["floor_s"] * 1e3))
    return result


# a selective query over each relation, the largest first (small_relations)
SMALL = (("Send", SCAN), ("Lock", LOCK),
         ("Audit", "range of A is Audit retrieve (A.conn, A.level) where A.conn = 7"))


def small_relations(args, trace, base, tmp):
    """Each of SMALL's queries cold (the cache removed before each run) and warm, --reps
    times at 2 threads, the relations in turn; shares of Send's tuples and time."""
    cache = dict(base, VIGIL_CACHE_DIR=os.path.join(tmp, "cache"))
    runs = {name: {"cold": [], "warm": [], "rss": [], "warm_rss": []} for name, _ in SMALL}
    answers = {}
    for _ in range(args.reps):
        for name, text in SMALL:
            benchlib.remove_cache(trace)
            r = benchlib.query(args, trace, text, env=cache, threads=2)
            if r.stats.get("cache") != "cold":
                sys.exit("small relations: %s's first query was not cold: %s" % (name,
                                                                                   r.stats))
            if answers.setdefault(name, r.lines()) != r.lines():
                sys.exit("MISMATCH: %s's cold answers differ between runs" % name)
            runs[name]["cold"].append(r.wall)
            runs[name]["rss"].append(r.stats["max_rss_kb"] * 1024)
    ntuples = {name: tuples(args, trace, text, cache) for name, text in SMALL}
    # the cache of every relation (the last cold run wrote Audit's alone), settled
    both = "\n".join(text for _, text in SMALL)
    benchlib.query(args, trace, both, env=cache)
    benchlib.settle_cache(lambda: benchlib.query(args, trace, both, env=cache).stats,
                          dirs=[trace, cache["VIGIL_CACHE_DIR"]])
    for _ in range(args.reps):
        for name, text in SMALL:
            r = benchlib.query(args, trace, text, env=cache, threads=2)
            if r.stats.get("cache") != "warm":
                sys.exit("small relations: %s's query after the cold one was not warm" % name)
            benchlib.check_settled(r.stats, "scale: %s warm" % name)
            if r.lines() != answers[name]:
                sys.exit("MISMATCH: %s's warm answer differs from its cold one" % name)
            runs[name]["warm"].append(r.wall)
            runs[name]["warm_rss"].append(r.stats["max_rss_kb"] * 1024)
    floor = min(benchlib.vigil(args, ["--version"], env=base, threads=1).wall
                for _ in range(args.reps))
    load = benchlib.load()
    med = {name: {k: statistics.median(v) for k, v in x.items()} for name, x in runs.items()}
    ref = med["Send"]
    print("\n| a selective query over each relation, %d events, 2 threads, %s, median of %d "
          "| tuples | share of `Send`'s | cold (written) | share of `Send`'s | max RSS | warm "
          "| less the start (%.1f ms), share of `Send`'s | load |" % (
              args.events, pinned.describe(), args.reps, floor * 1e3))
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    result = {"floor_s": floor, "load": load, "relations": {}}
    for name, _ in SMALL:
        m = med[name]
        share_t = ntuples[name] / max(ntuples["Send"], 1)
        share_c = m["cold"] / ref["cold"]
        share_w = max(m["warm"] - floor, 0) / max(ref["warm"] - floor, 1e-9)
        print("| `%s` | %d | %.3f | %.3f s | %.2f | %.1f MB | %.1f ms | %.2f | %.1f |" % (
            name, ntuples[name], share_t, m["cold"], share_c, m["rss"] / 1e6,
            m["warm"] * 1e3, share_w, load))
        result["relations"][name] = {
            "tuples": ntuples[name], "answers": len(answers[name]) - 1, "cold_s": m["cold"],
            "max_rss": m["rss"], "warm_s": m["warm"], "warm_max_rss": m["warm_rss"],
            "tuple_share": share_t, "cold_share": share_c, "warm_share": share_w}
    return result


# DuckDB's SQL for the scan (bench/query_bench.py DUCK_SQL: the same set)
DUCK_SCAN = ("SELECT DISTINCT \"at\", conn, size FROM Send "
             "WHERE mailbox = 7 AND size > 58982")


def duckdb_prepare(args, trace, tmp):
    """DuckDB's side of the scan end to end: a database file holding `Send` (exported by
    vigil as CSV and loaded, not timed; the file read once so that its pages are in the
    page cache, as vigil's cache's are); {exe, db, version, db_bytes}, or None (said why)
    when DuckDB's package or a C compiler is missing."""
    exe = benchlib.duckdb_e2e(args.build)
    if not exe:
        return None
    csv, db = os.path.join(tmp, "Send.csv"), os.path.join(tmp, "send.duckdb")
    cols = ["conn", "mailbox", "process", "size"]
    benchlib.export_csv(args.vigil, trace, "Send", cols, csv)
    types = ", ".join("'%s': '%s'" % (c, "VARCHAR" if c == "process" else "BIGINT")
                      for c in cols + ["at"])
    load = benchlib.run([exe, db, "2", "CREATE TABLE Send AS SELECT * FROM read_csv('%s', "
                         "header = true, columns = {%s})" % (csv, types)])
    os.unlink(csv)
    if load.rc:
        sys.exit("DuckDB: loading Send failed: %s" % load.err)
    benchlib.run([exe, db, "2", DUCK_SCAN])  # its pages in the page cache
    return {"exe": exe, "db": db, "version": benchlib.run([exe, "--version"]).out.strip(),
            "db_bytes": os.path.getsize(db)}


def duckdb_run(duck, threads, answers):
    """One timed run of DuckDB's command line for the scan: its wall seconds; it must print
    as many tuples as vigil's answer holds."""
    r = benchlib.run([duck["exe"], duck["db"], str(threads), DUCK_SCAN], threads=threads)
    if r.rc:
        sys.exit("DuckDB: the scan failed: %s" % r.err)
    if len(r.out.splitlines()) != answers:
        sys.exit("MISMATCH: DuckDB's scan gave %d tuples, vigil's %d"
                 % (len(r.out.splitlines()), answers))
    return r.wall


def lock_at_scale(args, trace, base):
    """`make bench-scale` (--lock): the `Lock` query alone, as the 1B-event figures were
    made: cache off at the default budget and at VIGIL_BUILD_MEMORY=1G (the first query's
    build), then the cache on: cold (built and written), warm --reps times at 2 threads and
    at 1. Wall, max RSS per `Lock` tuple, spilled bytes, the evaluation's time; every
    answer equal."""
    ntup = None
    rows, answer = [], None
    cache = dict(base, VIGIL_CACHE_DIR=os.path.join(os.path.dirname(trace), "cache"))
    benchlib.remove_cache(trace)
    plan = [("cache off, default budget", dict(base, VIGIL_CACHE="off"), 2),
            ("cache off, VIGIL_BUILD_MEMORY=1G", dict(base, VIGIL_CACHE="off",
                                                      VIGIL_BUILD_MEMORY="1G"), 2),
            ("cache cold (built and written)", cache, 2)]
    plan += [("cache warm", cache, t) for t in (2, 1) for _ in range(args.reps)]
    settled = False
    for name, env, threads in plan:
        benchlib.say("Lock at %d events: %s, %d thread(s) ..." % (args.events, name, threads))
        if name == "cache warm" and not settled:  # untimed until none sums again
            benchlib.settle_cache(lambda: benchlib.vigil(
                args, ["query", trace, "--format", "csv", "--stats", "-e", LOCK],
                env=env).stats, dirs=[trace, env["VIGIL_CACHE_DIR"]])
            settled = True
        if name == "cache warm":  # seconds: pinned with BENCH_RT=1
            r = benchlib.query(args, trace, LOCK, env=env, threads=threads)
            benchlib.check_settled(r.stats, "scale --lock: the warm Lock query")
        else:  # minutes: never pinned (FIFO would hold both CPUs that long)
            r = benchlib.vigil(args, ["query", trace, "--format", "csv", "--stats",
                                      "--threads", str(threads), "-e", LOCK], env=env)
        if answer is None:
            answer = r.lines()
        elif r.lines() != answer:
            sys.exit("MISMATCH: the Lock query's answer differs (%s)" % name)
        st = r.stats
        rows.append({"run": name, "threads": threads, "wall_s": r.wall,
                     "max_rss": st["max_rss_kb"] * 1024, "spilled": st.get("spilled_bytes", 0),
                     "exec_s": st["statements"][-1]["exec_ns"] / 1e9,
                     "cache": st.get("cache"), "load": benchlib.load()})
    ntup = tuples(args, trace, LOCK, cache)
    print("| `Lock` where conn = 7, %d events (%.1f GB trace, `Lock` %d tuples, %d answers), "
          "%s | threads | wall | max RSS | per `Lock` tuple | spilled | evaluation | load |"
          % (args.events, benchlib.du(trace) / 1e9, ntup, len(answer) - 1,
             pinned.describe()))
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for x in rows:
        print("| %s | %d | %.2f s | %.2f GB | %.1f B | %.2f GB | %.2f s | %.1f |" % (
            x["run"], x["threads"], x["wall_s"], x["max_rss"] / 1e9, x["max_rss"] / ntup,
            x["spilled"] / 1e9, x["exec_s"], x["load"]))
    print("cache: %.2f GB beside the trace" % (benchlib.cache_bytes(trace) / 1e9
                                               + benchlib.du(cache["VIGIL_CACHE_DIR"]) / 1e9))
    return {"tuples": ntup, "answers": len(answer) - 1, "runs": rows}


def measure(args, tmp):
    if args.lock:
        need = args.events * 40  # the trace (about 17 B an event), the spill and the cache
        free = os.statvfs(tmp).f_bavail * os.statvfs(tmp).f_frsize
        if not args.trace and free < need:
            sys.exit("bench-scale: %d events need about %.0f GB free in %s, there are %.0f GB"
                     % (args.events, need / 1e9, tmp, free / 1e9))
    trace = benchlib.trace_of(args, tmp)
    if args.lock:
        result = {"events": args.events, "trace_bytes": benchlib.du(trace), "reps": args.reps,
                  "mode": pinned.describe(),
                  "lock": lock_at_scale(args, trace, benchlib.clean_env(tmp))}
        benchlib.write_json(args.out, "scale_lock.json", result)
        return
    base = benchlib.clean_env(tmp)
    trace_bytes = benchlib.du(trace)
    result = {"events": args.events, "trace_bytes": trace_bytes, "reps": args.reps,
              "mode": pinned.describe()}
    if benchlib.SMOKE:  # the smoke run covers bench-scale's code too, at its tiny size
        result["lock"] = lock_at_scale(args, trace, base)
        benchlib.remove_cache(trace)
    result["spill"] = spill(args, trace, trace_bytes, base)
    result["warm"] = warm_scan(args, trace, base, tmp)
    result["small"] = small_relations(args, trace, base, tmp)
    benchlib.remove_cache(trace)
    benchlib.write_json(args.out, "scale.json", result)


if __name__ == "__main__":
    sys.exit(main())
