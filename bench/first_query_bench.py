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
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pinned  # noqa: E402

QUERY = ("range of S is Send retrieve (S.conn, S.size) "
         "where S.mailbox = 7 and S.size > 58982")


def remove_cache(trace):
    """The relations cache beside the trace: .vigil-cache and .vigil-cache.rel-NAME."""
    for name in os.listdir(trace):
        if name == ".vigil-cache" or name.startswith(".vigil-cache."):
            os.unlink(os.path.join(trace, name))


def run(args, trace, threads):
    """One cold query: (wall s, build s, cache write s, sorted answer lines)."""
    remove_cache(trace)
    # the cache beside the trace only, written whatever the trace's size
    env = dict(os.environ, VIGIL_CACHE_MIN_EVENTS="0", VIGIL_CACHE_DIR=args.nodir)
    env.pop("VIGIL_CACHE", None)
    cmd = [os.path.join(args.bin, "vigil"), "query", trace, "--format", "csv", "--stats",
           "--threads", str(threads), "-e", QUERY]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       preexec_fn=pinned.preexec(threads))
    wall = time.monotonic() - t0
    if p.returncode:
        sys.exit("vigil query --threads %d: %s" % (threads, p.stderr))
    st = json.loads([x for x in p.stderr.splitlines() if x.startswith('{"stats"')][0])["stats"]
    if st["cache"] != "cold" or not os.path.exists(os.path.join(trace, ".vigil-cache")):
        sys.exit("vigil query --threads %d: the cache was not cold and written (%s)" %
                 (threads, st["cache"]))
    return (wall, st["build_ns"] / 1e9, st.get("cache_write_ns", 0) / 1e9,
            sorted(p.stdout.splitlines()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", help="a built vigil build directory")
    smoke = os.environ.get("VIGIL_BENCH_SMOKE") == "1"
    ap.add_argument("--events", type=int, default=200_000 if smoke else 10_000_000)
    ap.add_argument("--reps", type=int, default=1 if smoke else 5)
    ap.add_argument("--trace", help="an existing trace of the subject (not removed)")
    args = ap.parse_args()
    pinned.check()
    args.bin = os.path.join(args.build, "bin")
    subject = os.path.join(args.build, "bench", "query-subject")
    out_dir = os.environ.get("BENCH_OUT") or os.path.join(args.build, "bench")
    tmp = tempfile.mkdtemp(prefix="vigil-firstq.")
    args.nodir = os.path.join(tmp, "no-cache-dir")  # never the user's cache directory
    trace = args.trace
    try:
        if not trace:
            trace = os.path.join(tmp, "trace")
            print("recording %d events ..." % args.events, file=sys.stderr)
            p = subprocess.run([os.path.join(args.bin, "vigil"), "record", "-o", trace, "--",
                                subject, "--events", str(args.events), "--threads", "2"],
                               capture_output=True, text=True)
            if p.returncode:
                sys.exit("vigil record: %s" % p.stderr)
        runs = {1: [], 2: []}
        answers = {}
        loads = []
        for rep in range(args.reps):
            for threads in ((1, 2) if rep % 2 == 0 else (2, 1)):  # neither always first
                wall, build, write, ans = run(args, trace, threads)
                answers.setdefault(threads, ans)
                if ans != answers[threads]:
                    sys.exit("answers differ between runs at %d thread(s)" % threads)
                runs[threads].append((wall, build, write))
                loads.append(os.getloadavg()[0])
        if answers[1] != answers[2]:
            sys.exit("MISMATCH: answers differ at 1 and 2 threads")
        med = {t: [statistics.median(x[i] for x in runs[t]) for i in range(3)]
               for t in (1, 2)}
        print("first query (cache cold), %d events, %s, median of %d:" % (
            args.events, pinned.describe(), args.reps))
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
        result = {"events": args.events, "reps": args.reps, "mode": pinned.describe(),
                  "wall_s": {"1": med[1][0], "2": med[2][0]},
                  "build_s": {"1": med[1][1], "2": med[2][1]},
                  "write_s": {"1": med[1][2], "2": med[2][2]},
                  "ratio": ratio, "best_ratio": best, "load": [min(loads), max(loads)]}
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "first_query.json"), "w") as f:
            json.dump(result, f, indent=1)
    finally:
        if args.trace:
            remove_cache(args.trace)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
