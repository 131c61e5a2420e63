#!/usr/bin/python3
"""bench/hugepages_bench.py: what transparent huge pages give vigil's queries: the same
binary with them as vigil asks for them and with them refused, side by side in one run.

    hugepages_bench.py BUILD_DIR [--events N] [--reps 3] [--trace DIR]

(`make bench` runs it as `hugepages`; VIGIL_BENCH_SMOKE=1: 200,000 events, 1 repetition;
the figures go to BENCH_OUT/hugepages.json.)

vigil advises its large blocks (src/base/alloc.c: 1 MiB and more) and the build's large
columns (src/relations/spill.c) to transparent huge pages (MADV_HUGEPAGE; the kernel's
"madvise" mode), since a first touch of a 4 KiB page costs about 25 us on this VM. Here
each run is made twice, once as it is ("on") and once with huge pages refused to the
process (prctl PR_SET_THP_DISABLE in the child before exec: the kernel then ignores the
advice; "off"), alternating which goes first, --reps times, at 1 thread:

* the first query (relations cache cold: built and written): query-bench's selective scan,
  wall time and `--stats` build_ns;
* the overlap join `range of R is Request range of L is Lock retrieve (R.conn, L.lock)
  when R overlap L`, cache warm (made once first): `--stats` exec_ns, the statement alone.

The answers must be equal with and without. Prints one markdown table (medians, off/on)
with the load average; BENCH_RT=1 runs each timed query pinned (bench/pinned.py). Needs
the kernel's huge pages in "madvise" or "always" mode (/sys/kernel/mm/
transparent_hugepage/enabled): with "never" both runs are the same and the table says so.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import pinned  # noqa: E402

OVERLAP = ("range of R is Request range of L is Lock "
           "retrieve (R.conn, L.lock) when R overlap L")
MODES = {"on": None, "off": benchlib.thp_off}


def thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().split("[", 1)[1].split("]", 1)[0]
    except (OSError, IndexError):
        return "unknown"


def cold(args, trace, env, mode):
    benchlib.remove_cache(trace)
    r = benchlib.query(args, trace, benchlib.SCAN, env=env, threads=1, preexec=MODES[mode])
    if r.stats.get("cache") != "cold":
        sys.exit("the first query was not cold: %s" % r.stats.get("cache"))
    return r.wall, r.stats["build_ns"] / 1e9, r.digest()


def join(args, trace, env, mode):
    """The join's answer (millions of lines at 10M events) compared by its file's digest:
    at one thread its order is fixed."""
    out = os.path.join(os.path.dirname(env["VIGIL_CACHE_DIR"]), "join.csv")
    r = benchlib.query(args, trace, OVERLAP, env=env, threads=1, preexec=MODES[mode],
                       stdout_path=out)
    if r.stats.get("cache") != "warm":
        sys.exit("the overlap join's cache was not warm: %s" % r.stats.get("cache"))
    digest, lines = benchlib.file_digest(out)
    os.unlink(out)
    return r.wall, r.stats["statements"][-1]["exec_ns"] / 1e9, (lines, digest)


def measure(args, tmp):
    trace = benchlib.trace_of(args, tmp)
    env = benchlib.clean_env(tmp, VIGIL_CACHE_DIR=os.path.join(tmp, "no-cache-dir"))
    rows = {}
    for name, fn, prepare in (("first query (cache cold), selective scan", cold, None),
                              ("overlap join (cache warm), exec", join, "warm")):
        if prepare:  # the cache, made once
            benchlib.remove_cache(trace)
            benchlib.query(args, trace, OVERLAP, env=env)
        runs, answers, loads = {"on": [], "off": []}, {}, []
        for rep in range(args.reps):
            for mode in (("on", "off") if rep % 2 == 0 else ("off", "on")):
                wall, part, ans = fn(args, trace, env, mode)
                answers.setdefault(mode, ans)
                if ans != answers[mode]:
                    sys.exit("%s: answers differ between runs" % name)
                runs[mode].append((wall, part))
                loads.append(benchlib.load())
        if answers["on"] != answers["off"]:
            sys.exit("MISMATCH: %s: answers differ with and without huge pages" % name)
        rows[name] = {m: {"wall_s": statistics.median(x[0] for x in runs[m]),
                          "part_s": statistics.median(x[1] for x in runs[m]),
                          "runs": runs[m]} for m in runs}
        rows[name]["tuples"] = max(answers["on"][0] - 1, 0)
        rows[name]["load"] = [min(loads), max(loads)]
    benchlib.remove_cache(trace)
    print("transparent huge pages as vigil asks for them (on) and refused (off), %d events, "
          "1 thread, %s, kernel mode \"%s\", median of %d:\n"
          % (args.events, pinned.describe(), thp_mode(), args.reps))
    print("| run | measured | on | off | off / on | tuples | load |")
    print("|---|---|---:|---:|---:|---:|---|")
    for name, r in rows.items():
        for what, key in (("wall", "wall_s"), ("build" if "cold" in name else "exec",
                                               "part_s")):
            print("| %s | %s | %.3f s | %.3f s | %.2fx | %d | %.1f-%.1f |" % (
                name, what, r["on"][key], r["off"][key], r["off"][key] / r["on"][key],
                r["tuples"], r["load"][0], r["load"][1]))
    result = {"events": args.events, "reps": args.reps, "mode": pinned.describe(),
              "kernel_thp": thp_mode(),
              "cold": rows["first query (cache cold), selective scan"],
              "join": rows["overlap join (cache warm), exec"]}
    benchlib.write_json(args.out, "hugepages.json", result)


def main():
    args = benchlib.paths(benchlib.parser(__doc__, reps=3).parse_args())
    return benchlib.measure_in_workdir(args, "vigil-hugepages.", measure)


if __name__ == "__main__":
    sys.exit(main())
