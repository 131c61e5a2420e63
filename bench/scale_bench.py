#!/usr/bin/python3
"""bench/scale_bench.py: memory and wall time of selective queries as the trace grows past
memory budgets, in one run.

    scale_bench.py BUILD_DIR [--events N] [--reps 5] [--trace DIR]

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
  S.size > 58982`) with the relations cache on (in a directory of its own), once cold
  (it writes the cache), then --reps times warm at --threads 2 and 1: wall time of the
  whole `vigil query` process (trace to answer), best and median; max RSS per `Send`
  tuple. Every answer must equal the cold one. The brief's target: under 100 ms at 10M.
  Beside it, the best of --reps `vigil --version` the same way: what starting and ending
  a process costs on the machine at the time.

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
    args = benchlib.paths(benchlib.parser(__doc__, reps=5, smoke_reps=2).parse_args())
    pinned.check()
    with benchlib.Workdir("vigil-scalebench.") as tmp:
        measure(args, tmp)
    return 0


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
    """The selective scan end to end, cache warm, at 2 and 1 threads."""
    cache = dict(base, VIGIL_CACHE_DIR=os.path.join(tmp, "cache"))
    cold = benchlib.query(args, trace, SCAN, env=cache)
    if cold.stats.get("cache") != "cold":
        sys.exit("the first query with the cache on was not cold: %s" % cold.stats)
    cold_ans = cold.lines()
    nsend = tuples(args, trace, SCAN, cache)  # from the cache just written
    warm = {}
    for threads in (2, 1):
        walls, rss = [], []
        for _ in range(args.reps):
            r = benchlib.query(args, trace, SCAN, env=cache, threads=threads)
            if r.stats.get("cache") != "warm":
                sys.exit("a query after the cold one was not warm: %s" % r.stats)
            if r.lines() != cold_ans:
                sys.exit("MISMATCH: the warm selective scan's answer differs from the "
                         "cold one's")
            walls.append(r.wall)
            rss.append(r.stats["max_rss_kb"] * 1024)
        warm[threads] = {"best_s": min(walls), "median_s": statistics.median(walls),
                         "max_rss": max(rss), "load": benchlib.load()}
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
    return {"tuples": nsend, "cold_s": cold.wall, "floor_s": floor, "answers": len(cold_ans),
            "threads": {str(k): v for k, v in warm.items()}}


def measure(args, tmp):
    trace = benchlib.trace_of(args, tmp)
    base = benchlib.clean_env(tmp)
    trace_bytes = benchlib.du(trace)
    result = {"events": args.events, "trace_bytes": trace_bytes, "reps": args.reps,
              "mode": pinned.describe()}
    result["spill"] = spill(args, trace, trace_bytes, base)
    result["warm"] = warm_scan(args, trace, base, tmp)
    benchlib.write_json(args.out, "scale.json", result)


if __name__ == "__main__":
    sys.exit(main())
