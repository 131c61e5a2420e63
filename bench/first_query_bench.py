#!/usr/bin/python3
"""bench/first_query_bench.py: the first query over a trace (relations cache cold: the
relations built from the trace and written to the cache) at 1 thread and at 2, side by
side in one run, and the ratio.

    first_query_bench.py BUILD_DIR [--events N] [--reps 5] [--trace DIR]

(`make bench` runs it as `first-query`; VIGIL_BENCH_SMOKE=1: 200,000 events, 1
repetition; the figures go to BENCH_OUT/first_query.json.)

Records --events events of bench/query-subject (2 threads) with `vigil record` (or uses
--trace: its .vigil-cache files are removed before every run and at the end), then answers
query-bench's selective scan

    range of S is Send retrieve (S.conn, S.size) where S.mailbox = 7 and S.size > 58982

with the relations cache on and removed before each run (outcome "cold", the cache
written), `--threads 1` and `--threads 2` alternating (which goes first alternating too), --reps
times each. With BENCH_RT=1
(bench/pinned.py) each run is real-time FIFO and pinned: the 1-thread run on one CPU, the
2-thread run on two. Prints one markdown table (median wall time, the build's time and
the cache write's within it from --stats, load average) and the ratio 1 thread / 2
threads; the answers must be equal at both.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import pinned  # noqa: E402


def run(args, trace, env, threads):
    """One cold query: (wall s, build s, cache write s, sorted answer lines, events)."""
    benchlib.remove_cache(trace)
    r = benchlib.query(args, trace, benchlib.SCAN, env=env, threads=threads)
    st = r.stats
    if st.get("cache") != "cold" or not os.path.exists(os.path.join(trace, ".vigil-cache")):
        sys.exit("vigil query --threads %d: the cache was not cold and written (%s)" %
                 (threads, st.get("cache")))
    return (r.wall, st["build_ns"] / 1e9, st.get("cache_write_ns", 0) / 1e9, r.lines(),
            st.get("events", 0))


def main():
    args = benchlib.paths(benchlib.parser(__doc__, reps=5).parse_args())
    return benchlib.measure_in_workdir(args, "vigil-firstq.", measure)


def measure(args, tmp):
    trace = benchlib.trace_of(args, tmp)
    # the cache beside the trace only (never the user's cache directory), written whatever
    # the trace's size
    env = benchlib.clean_env(tmp, VIGIL_CACHE_DIR=os.path.join(tmp, "no-cache-dir"))
    runs = {1: [], 2: []}
    answers = {}
    loads = []
    for rep in range(args.reps):
        for threads in ((1, 2) if rep % 2 == 0 else (2, 1)):  # neither always first
            wall, build, write, ans, events = run(args, trace, env, threads)
            answers.setdefault(threads, ans)
            if ans != answers[threads]:
                sys.exit("answers differ between runs at %d thread(s)" % threads)
            runs[threads].append((wall, build, write))
            loads.append(benchlib.load())
    if answers[1] != answers[2]:
        sys.exit("MISMATCH: answers differ at 1 and 2 threads")
    med = {t: [statistics.median(x[i] for x in runs[t]) for i in range(3)] for t in (1, 2)}
    # the trace's own count (a --trace given is not of --events events)
    print("first query (cache cold), %d events, %s, median of %d:" % (
        events, pinned.describe(), args.reps))
    print("| threads | wall (min-max) | build (of it) | cache write (of the build) | tuples |")
    print("|---:|---:|---:|---:|---:|")
    for t in (1, 2):
        print("| %d | %.3f s (%.3f-%.3f) | %.3f s | %.3f s | %d |" % (
            t, med[t][0], min(x[0] for x in runs[t]), max(x[0] for x in runs[t]),
            med[t][1], med[t][2], max(len(answers[t]) - 1, 0)))
    ratio = med[1][0] / med[2][0]
    best = min(x[0] for x in runs[1]) / min(x[0] for x in runs[2])
    print("1 thread / 2 threads: %.2fx wall (best against best %.2fx), %.2fx build, "
          "%.2fx write; load %.1f-%.1f" % (
              ratio, best, med[1][1] / med[2][1], med[1][2] / med[2][2] if med[2][2] else 0,
              min(loads), max(loads)))
    result = {"events": events, "reps": args.reps, "mode": pinned.describe(),
              "wall_s": {"1": med[1][0], "2": med[2][0]},
              "build_s": {"1": med[1][1], "2": med[2][1]},
              "write_s": {"1": med[1][2], "2": med[2][2]},
              "ratio": ratio, "best_ratio": best, "load": [min(loads), max(loads)]}
    benchlib.write_json(args.out, "first_query.json", result)


if __name__ == "__main__":
    main()
