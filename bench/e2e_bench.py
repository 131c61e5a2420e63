#!/usr/bin/python3
"""bench/e2e_bench.py: the warm selective scan end to end (`vigil query` wall time, trace
to answer, the relations cache warm), and what the two costs around the scan came to: the
process's start (shared libraries) and the cached columns' checks.

    e2e_bench.py BUILD_DIR [--events N] [--reps 9] [--trace DIR]

(`make bench` runs it as `e2e`; VIGIL_BENCH_SMOKE=1: 200,000 events, 3 repetitions; the
figures go to BENCH_OUT/e2e.json.)

Records --events events of bench/query-subject (2 threads) with `vigil record` (or uses
--trace), answers query-bench's selective scan (`where S.mailbox = 7 and S.size > 58982`)
once cold (it writes the cache beside the trace), then --reps rounds, interleaved, at
--threads 2 and 1, of four arms:

* `vigil-full`, every column checked: the program with every command linked (36 shared
  libraries here), its cached columns summed by every query (the records of an earlier
  check removed first): how every query ran before the split;
* `vigil`, every column checked: the front end (linked --as-needed: only the libraries
  its commands call), the same checks;
* `vigil`, checked once: the columns an earlier query checked in the same, unchanged
  file are not summed again (src/relations/cache_checked.c);
* `vigil-full`, checked once.

Before the rounds the cache is settled (bench/benchlib.py settle_cache: untimed warm
queries until one sums no cached column); a "checked once" run that sums a column, or an
"every column checked" run that sums none, stops the benchmark.

Wall time of the whole process, median and best; every answer must equal the cold one and
be warm. Beside them, `--version` of both programs (a process's start and exit alone) and
their `ldd` line counts. Load average with every figure; BENCH_RT=1 runs the timed
commands pinned (bench/pinned.py). The issue's target: under 100 ms at 10M events."""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import pinned  # noqa: E402

SCAN = "range of S is Send retrieve (S.conn, S.size) where S.mailbox = 7 and S.size > 58982"
ARMS = [("full_checked", "vigil-full", False), ("front_checked", "vigil", False),
        ("front_once", "vigil", True), ("full_once", "vigil-full", True)]


def timed(cmd, env, threads):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       preexec_fn=pinned.preexec(threads))
    return time.monotonic() - t0, p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", help="a built vigil build directory")
    smoke = os.environ.get("VIGIL_BENCH_SMOKE") == "1"
    ap.add_argument("--events", type=int, default=200_000 if smoke else 10_000_000)
    ap.add_argument("--reps", type=int, default=3 if smoke else 9)
    ap.add_argument("--trace", help="an existing trace of the subject (not removed)")
    args = ap.parse_args()
    pinned.check()
    bin_dir = os.path.join(args.build, "bin")
    out_dir = os.environ.get("BENCH_OUT") or os.path.join(args.build, "bench")
    tmp = tempfile.mkdtemp(prefix="vigil-e2ebench.")
    env = dict(os.environ)
    for k in ("VIGIL_CACHE", "VIGIL_CACHE_DIR", "VIGIL_THREADS", "XDG_CACHE_HOME"):
        env.pop(k, None)
    env.update({"HOME": os.path.join(tmp, "home"), "VIGIL_CACHE_MIN_EVENTS": "0"})
    try:
        trace = os.path.join(tmp, "trace")
        if args.trace:  # a copy of its streams: the cache is written beside it
            shutil.copytree(args.trace, trace,
                            ignore=shutil.ignore_patterns(".vigil-cache*"))
        else:
            print("recording %d events ..." % args.events, file=sys.stderr)
            p = subprocess.run([os.path.join(bin_dir, "vigil"), "record", "-q", "-o", trace,
                                "--", os.path.join(args.build, "bench", "query-subject"),
                                "--events", str(args.events), "--threads", "2"],
                               capture_output=True, text=True)
            if p.returncode:
                sys.exit("vigil record: %s" % p.stderr)
        query = ["query", trace, "-e", SCAN, "--format", "csv", "--stats"]
        _, cold = timed([os.path.join(bin_dir, "vigil")] + query, env, None)
        if cold.returncode or benchlib.stats_of(cold.stderr).get("cache") != "cold":
            sys.exit("the first query was not cold: exit %d, %s" % (cold.returncode,
                                                                      cold.stderr))
        answer = cold.stdout
        # untimed warm queries until none sums the cached columns again (the "checked
        # once" arms are then what they say; the "every column checked" arms remove the
        # records before each run)
        benchlib.settle_cache(lambda: benchlib.stats_of(timed(
            [os.path.join(bin_dir, "vigil")] + query, env, None)[1].stderr), dirs=[trace])
        result = {"events": args.events, "reps": args.reps, "mode": pinned.describe(),
                  "answers": answer.count("\n"), "ldd": {}, "version_s": {}, "threads": {}}
        for prog in ("vigil", "vigil-full"):
            p = subprocess.run(["ldd", os.path.join(bin_dir, prog)], capture_output=True,
                               text=True)
            result["ldd"][prog] = len(p.stdout.splitlines())
        for threads in (2, 1):
            walls = {name: [] for name, _, _ in ARMS}
            checked = {}
            versions = {"vigil": [], "vigil-full": []}
            for _ in range(args.reps):
                for name, prog, once in ARMS:
                    if not once:
                        for f in glob.glob(trace + "/.vigil-cache.rel-*%checked"):
                            os.unlink(f)
                    wall, p = timed([os.path.join(bin_dir, prog)] + query +
                                    ["--threads", str(threads)], env, threads)
                    st = benchlib.stats_of(p.stderr)
                    if p.returncode or st.get("cache") != "warm":
                        sys.exit("%s: not a warm answer: exit %d, %s" % (name, p.returncode,
                                                                          p.stderr))
                    if once:
                        benchlib.check_settled(st, "e2e: %s" % name)
                    elif not st["cache_checked_bytes"]:
                        sys.exit("e2e: %s summed no cached column: the arm measures "
                                 "nothing" % name)
                    if p.stdout != answer:
                        sys.exit("MISMATCH: %s answers otherwise than the cold query" % name)
                    walls[name].append(wall)
                    checked[name] = st["cache_checked_bytes"]
                for prog in versions:
                    versions[prog].append(timed([os.path.join(bin_dir, prog), "--version"],
                                                env, 1)[0])
            result["threads"][str(threads)] = {
                name: {"median_s": statistics.median(w), "best_s": min(w),
                       "checked_bytes": checked[name]} for name, w in walls.items()}
            result["threads"][str(threads)]["load"] = os.getloadavg()[0]
            for prog, w in versions.items():
                result["version_s"].setdefault(prog, []).extend(w)
        print("| warm selective scan, %d events (%d answers), %s | threads | median | best | "
              "columns summed | load |" % (args.events, result["answers"], result["mode"]))
        print("|---|---:|---:|---:|---:|---:|")
        labels = {"full_checked": "vigil-full (%d libraries), every column checked",
                  "front_checked": "vigil (%d libraries), every column checked",
                  "front_once": "vigil (%d libraries), checked once",
                  "full_once": "vigil-full (%d libraries), checked once"}
        for t in ("2", "1"):
            r = result["threads"][t]
            for name, prog, _ in ARMS:
                print("| %s | %s | %.1f ms | %.1f ms | %.1f MB | %.1f |" % (
                    labels[name] % (result["ldd"][prog] - 1), t, r[name]["median_s"] * 1e3,
                    r[name]["best_s"] * 1e3, r[name]["checked_bytes"] / 1e6, r["load"]))
        for prog, w in result["version_s"].items():
            print("| `%s --version` (start and exit) | 1 | %.1f ms | %.1f ms | | |" % (
                prog, statistics.median(w) * 1e3, min(w) * 1e3))
        for t in ("2", "1"):
            r = result["threads"][t]
            print("%s thread(s): %.2fx faster than before the split and the record "
                  "(medians)" % (t, r["full_checked"]["median_s"] / r["front_once"]["median_s"]))
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "e2e.json"), "w") as f:
            json.dump(result, f, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
