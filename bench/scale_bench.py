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
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pinned  # noqa: E402

LOCK = "range of L is Lock retrieve (L.lock, L.conn) where L.conn = 7"
SCAN = "range of S is Send retrieve (S.conn, S.size) where S.mailbox = 7 and S.size > 58982"


def run(bin_dir, args, env, threads=None):
    """(wall, sorted stdout lines, --stats); threads: a timed run (BENCH_RT=1 pins it)"""
    pre = pinned.preexec(threads) if threads else None
    t0 = time.monotonic()
    p = subprocess.run([os.path.join(bin_dir, "vigil")] + args, capture_output=True, text=True,
                       env=env, preexec_fn=pre)
    wall = time.monotonic() - t0
    if p.returncode:
        sys.exit("vigil %s: exit %d: %s" % (" ".join(args[:2]), p.returncode, p.stderr))
    stats = [json.loads(x)["stats"] for x in p.stderr.splitlines() if x.startswith('{"stats"')]
    return wall, sorted(p.stdout.splitlines()), stats[0] if stats else {}


def tuples(bin_dir, trace, text, env):
    """The tuples of the relation the query's scan reads, from vigil explain."""
    _, out, _ = run(bin_dir, ["explain", trace, "-e", text], env)
    m = re.findall(r" (\d+) tuples\)", "\n".join(out))
    if not m:
        sys.exit("vigil explain: no tuple count in %s" % out)
    return int(m[-1])


def du(path):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(d, f))
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", help="a built vigil build directory")
    smoke = os.environ.get("VIGIL_BENCH_SMOKE") == "1"
    ap.add_argument("--events", type=int, default=200_000 if smoke else 10_000_000)
    ap.add_argument("--reps", type=int, default=2 if smoke else 5)
    ap.add_argument("--trace", help="an existing trace of the subject (not removed)")
    args = ap.parse_args()
    pinned.check()
    bin_dir = os.path.join(args.build, "bin")
    out_dir = os.environ.get("BENCH_OUT") or os.path.join(args.build, "bench")
    tmp = tempfile.mkdtemp(prefix="vigil-scalebench.")
    base = dict(os.environ)
    for k in ("VIGIL_CACHE", "VIGIL_BUILD_MEMORY", "VIGIL_QUERY_MEMORY", "VIGIL_THREADS",
              "XDG_CACHE_HOME"):
        base.pop(k, None)
    base.update({"HOME": os.path.join(tmp, "home"), "VIGIL_CACHE_MIN_EVENTS": "0"})
    try:
        trace = args.trace
        if not trace:
            trace = os.path.join(tmp, "trace")
            print("recording %d events ..." % args.events, file=sys.stderr)
            p = subprocess.run([os.path.join(bin_dir, "vigil"), "record", "-q", "-o", trace,
                                "--", os.path.join(args.build, "bench", "query-subject"),
                                "--events", str(args.events), "--threads", "2"],
                               capture_output=True, text=True)
            if p.returncode:
                sys.exit("vigil record: %s" % p.stderr)
        trace_bytes = du(trace)
        result = {"events": args.events, "trace_bytes": trace_bytes, "reps": args.reps,
                  "mode": pinned.describe()}

        # spill RSS: the first query's build, default budget and a sixteenth of the trace
        off = dict(base, VIGIL_CACHE="off")
        ntup = tuples(bin_dir, trace, LOCK, off)
        budget = max(trace_bytes // 16, 1 << 20)
        runs = {}
        for name, env in (("default", off), ("bounded", dict(off, VIGIL_BUILD_MEMORY=str(budget)))):
            wall, ans, st = run(bin_dir, ["query", trace, "-e", LOCK, "--format", "csv",
                                          "--stats", "--threads", "2"], env)
            runs[name] = {"wall_s": wall, "answer": ans, "max_rss": st["max_rss_kb"] * 1024,
                          "spilled_bytes": st["spilled_bytes"], "load": os.getloadavg()[0]}
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
        result["spill"] = {"tuples": ntup, "budget": budget,
                           "default": {k: v for k, v in d.items() if k != "answer"},
                           "bounded": {k: v for k, v in b.items() if k != "answer"}}

        # warm selective scan, end to end
        cache = dict(base, VIGIL_CACHE_DIR=os.path.join(tmp, "cache"))
        cold_wall, cold_ans, cold_st = run(bin_dir, ["query", trace, "-e", SCAN, "--format",
                                                     "csv", "--stats"], cache)
        if cold_st.get("cache") != "cold":
            sys.exit("the first query with the cache on was not cold: %s" % cold_st)
        nsend = tuples(bin_dir, trace, SCAN, cache)  # from the cache just written
        warm = {}
        for threads in (2, 1):
            walls, rss = [], []
            for _ in range(args.reps):
                wall, ans, st = run(bin_dir, ["query", trace, "-e", SCAN, "--format", "csv",
                                              "--stats", "--threads", str(threads)], cache,
                                    threads)
                if st.get("cache") != "warm":
                    sys.exit("a query after the cold one was not warm: %s" % st)
                if ans != cold_ans:
                    sys.exit("MISMATCH: the warm selective scan's answer differs from the "
                             "cold one's")
                walls.append(wall)
                rss.append(st["max_rss_kb"] * 1024)
            warm[threads] = {"best_s": min(walls), "median_s": statistics.median(walls),
                             "max_rss": max(rss), "load": os.getloadavg()[0]}
        # the floor: a vigil process that starts and exits (on a loaded machine, far from 0)
        floor = min(run(bin_dir, ["--version"], base, 1)[0] for _ in range(args.reps))
        print("\n| selective scan, %d events (`Send`: %d tuples), %s | wall best | median | "
              "max RSS | per `Send` tuple | load |" % (args.events, nsend, pinned.describe()))
        print("|---|---:|---:|---:|---:|---:|")
        print("| cold (cache written), 2 threads | %.3f s | | | | |" % cold_wall)
        for threads, w in warm.items():
            print("| warm, %d thread%s | %.1f ms | %.1f ms | %.1f MB | %.1f B | %.1f |" % (
                threads, "s" if threads > 1 else "", w["best_s"] * 1e3, w["median_s"] * 1e3,
                w["max_rss"] / 1e6, w["max_rss"] / max(nsend, 1), w["load"]))
        print("| `vigil --version`, the process's start and exit alone | %.1f ms | | | | |"
              % (floor * 1e3))
        result["warm"] = {"tuples": nsend, "cold_s": cold_wall, "floor_s": floor,
                          "answers": len(cold_ans),
                          "threads": {str(k): v for k, v in warm.items()}}
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "scale.json"), "w") as f:
            json.dump(result, f, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
