"""Derived relations (docs/tquel.md "Derived relations", issue 32): the time to the first
answer of a query over `Message` on the three-tier example's trace, against its peer, what
a user did before: `vigil net split` to files, then a script joining its JSON (each
network's messages with the network's input program).

    python3 bench/derived_bench.py [BUILD]        (default build)

The question, both ways: the messages of more than 50 bytes (payloads), with their
network and the program of the network's input. vigil answers
    range of N is Network  range of M is Message
    retrieve (M.network, M.bytes, N.program) where M.network = N.id and M.bytes > 50
and the peer runs `vigil net split TRACE -o DIR` and then reads index.json and every
net-N.json. Time to first answer: from the start until the first answer line is read.
Both answers must be the same multiset of rows (else exit 1).

The same query from the relations cache (docs/query.md "The relations cache"): cold (no
cache: the trace read, the networks analysed, both written to TRACE/.vigil-cache and
.vigil-cache.derived-Network) against warm (both read from the cache, the analysis not run
again), and without a cache (VIGIL_CACHE=off, the figure compared with the peer). All
answers must be the same.

The lazy path must cost nothing to a query naming no derived relation (`OSThread`): the
same build runs it with the derived relations offered (the default) and with
VIGIL_DERIVED=off (no analysis registered: neither the lookup nor the cache's placing of
derived files is reachable), in turn, without a cache and from a warm one; the ratio
on / off of the medians is printed (1.00 within noise). With VIGIL_DERIVED=off the
Message query must be refused, else the comparison would be of one path with itself.
The code linked in is the same both ways: for that, VIGIL_BASE_BUILD naming another build
(e.g. one without src/derived) times the query with that one too.

The warm query's max RSS is kept too. BENCH_DERIVED_WARM_ONLY=1: only the cache's
cold and warm runs (no uncached query, no peer), each build on a trace of its own (a
hard-linked copy for VIGIL_BASE_BUILD: the cache is keyed on the executable), the builds
in turn: the warm read side by side with another build.

VIGIL_BENCH_SMOKE=1: 400 requests, one run. Writes BENCH_OUT/derived.json (BENCH_OUT:
BUILD/bench), or derived_warm.json."""
import collections
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
SMOKE = os.environ.get("VIGIL_BENCH_SMOKE") == "1"
REQUESTS, THREADS, RUNS = (400, 4, 1) if SMOKE else (100000, 4, 3)
PLAIN_RUNS = 2 if SMOKE else 9  # pairs (on, off) per cache mode: fast, so more
OUT = os.environ.get("BENCH_OUT", os.path.join(BUILD, "bench"))
VIGIL = os.path.join(BUILD, "bin", "vigil")
QUERY = ("range of N is Network range of M is Message "
         "retrieve (M.network, M.bytes, N.program) where M.network = N.id and M.bytes > 50")
PLAIN = "range of T is OSThread retrieve (T.name)"

# The peer's join, a script of the kind a user writes against vigil net split's files.
JOIN = r'''
import glob, json, os, sys
d = sys.argv[1]
with open(os.path.join(d, "index.json")) as f:
    program = {n["network"]: n["program"] for n in json.load(f)["networks"]}
for path in sorted(glob.glob(os.path.join(d, "net-*.json"))):
    with open(path) as f:
        g = json.load(f)
    for e in g["edges"]:
        if e["kind"] == "message" and e["bytes"] > 50:
            print(json.dumps([g["network"], e["bytes"], program[g["network"]]]), flush=True)
'''


def first_and_total(cmd, t0=None, env=None, rss=None):
    """Seconds to the first line of cmd's stdout and to its end (from t0, default now),
    and its lines; its max RSS (kB) appended to the list rss if given."""
    t0 = t0 or time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    first = p.stdout.readline()
    t_first = time.monotonic() - t0
    rest = p.stdout.read()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if rss is not None:
        rss.append(usage.ru_maxrss)
    if p.returncode:
        raise SystemExit(f"derived_bench: {' '.join(cmd)} exited {p.returncode}: {err[-2000:]}")
    return t_first, time.monotonic() - t0, ([first] if first else []) + rest.splitlines()


def vigil_side(trace, cache="off", vigil=VIGIL, rss=None):
    """cache: off (VIGIL_CACHE=off), cold (the cache files removed first) or warm."""
    if cache == "cold":
        for f in glob.glob(os.path.join(trace, ".vigil-cache*")):
            os.unlink(f)
    env = dict(os.environ, VIGIL_CACHE="off" if cache == "off" else "on")
    if SMOKE:
        env["VIGIL_CACHE_MIN_EVENTS"] = "0"
    t_first, t_total, lines = first_and_total([vigil, "query", trace, "--format", "json",
                                               "-e", QUERY], env=env, rss=rss)
    rows = collections.Counter()
    for line in lines:
        v = json.loads(line)["values"]
        rows[(v["network"], v["bytes"], v["program"])] += 1
    return t_first, t_total, rows


def peer_side(trace, tmp):
    nets = os.path.join(tmp, "nets")
    shutil.rmtree(nets, ignore_errors=True)
    t0 = time.monotonic()
    p = subprocess.run([VIGIL, "net", "split", trace, "-o", nets], capture_output=True,
                       text=True)
    if p.returncode:
        raise SystemExit(f"derived_bench: split exited {p.returncode}: {p.stderr[-2000:]}")
    t_first, t_total, lines = first_and_total([sys.executable, "-c", JOIN, nets], t0)
    rows = collections.Counter(tuple(json.loads(x)) for x in lines)
    return t_first, t_total, rows


def plain_query(build, trace, derived=None, cache=None):
    """Seconds and answer lines of PLAIN; derived: VIGIL_DERIVED, cache: VIGIL_CACHE (on,
    off; None: as the environment has them)."""
    env = dict(os.environ)
    for name, value in (("VIGIL_DERIVED", derived), ("VIGIL_CACHE", cache)):
        if value:
            env[name] = value
    if SMOKE:
        env["VIGIL_CACHE_MIN_EVENTS"] = "0"
    t0 = time.monotonic()
    p = subprocess.Popen([os.path.join(build, "bin", "vigil"), "query", trace, "--format",
                          "json", "-e", PLAIN], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    out, err = p.stdout.read(), p.stderr.read()  # its stderr: a line or two
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    t = time.monotonic() - t0
    if p.returncode:
        raise SystemExit(f"derived_bench: {PLAIN} exited {p.returncode}: {err}")
    # CPU time too: on a loaded machine it varies less than the wall time
    return t, sorted(out.splitlines()), usage.ru_utime + usage.ru_stime


def lazy_path(trace):
    """Medians of PLAIN with the derived relations offered and with VIGIL_DERIVED=off, the
    two in turn (order swapped each pair), without a cache and from a warm one."""
    env = dict(os.environ, VIGIL_DERIVED="off", VIGIL_CACHE="off")
    p = subprocess.run([VIGIL, "query", trace, "-e", QUERY], capture_output=True, text=True,
                       env=env)
    if p.returncode != 2 or "no relation 'Message'" not in p.stderr:
        raise SystemExit(f"derived_bench: VIGIL_DERIVED=off did not take the derived "
                         f"relations away: exit {p.returncode}: {p.stderr[-500:]}")
    res, answer = {}, None
    for cache in ("off", "on"):
        plain_query(BUILD, trace, "on", cache)  # a warm cache for "on" (both ways alike)
        times, cpu = {"on": [], "off": []}, {"on": [], "off": []}
        for i in range(PLAIN_RUNS):
            for derived in (("on", "off") if i % 2 == 0 else ("off", "on")):
                t, lines, c = plain_query(BUILD, trace, derived, cache)
                times[derived].append(t)
                cpu[derived].append(c)
                answer = answer or lines
                if lines != answer or not lines:
                    raise SystemExit(f"derived_bench: {PLAIN} answers {len(lines)} rows with "
                                     f"VIGIL_DERIVED={derived}, cache {cache}; {len(answer)} "
                                     f"before")
        name = "cold" if cache == "off" else "warm"
        res[f"plain_{name}_s"] = statistics.median(times["on"])
        res[f"plain_{name}_underived_s"] = statistics.median(times["off"])
        res[f"plain_{name}_ratio"] = res[f"plain_{name}_s"] / res[f"plain_{name}_underived_s"]
        res[f"plain_{name}_all_s"] = times
        res[f"plain_{name}_cpu_ratio"] = statistics.median(cpu["on"]) / max(
            statistics.median(cpu["off"]), 1e-6)
    return res


def record(tmp):
    trace = os.path.join(tmp, "trace")
    print(f"recording three_tier: {REQUESTS} requests on {THREADS} client threads",
          file=sys.stderr, flush=True)
    subprocess.run([VIGIL, "record", "-o", trace, "--", os.path.join(BUILD, "bin",
                    "three_tier"), "run", "--threads", str(THREADS), "--requests",
                    str(REQUESTS // THREADS)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return trace


def warm_only(tmp, trace):
    """The cache's cold and warm first answers and the warm max RSS, per build, in turn."""
    builds = [("this", VIGIL, trace)]
    base = os.environ.get("VIGIL_BASE_BUILD")
    if base:
        copy = os.path.join(tmp, "trace-base")
        subprocess.run(["cp", "-al", trace, copy], check=True)
        builds.append(("base", os.path.join(os.path.abspath(base), "bin", "vigil"), copy))
    runs = {name: {"cold": [], "warm": [], "rss": []} for name, _, _ in builds}
    answer = None
    for name, vigil, t in builds:
        f, _, rows = vigil_side(t, "cold", vigil)
        runs[name]["cold"].append(f)
        answer = answer or rows
        if rows != answer:
            raise SystemExit(f"derived_bench: the {name} build's answer differs")
    for _ in range(RUNS):
        for name, vigil, t in builds:
            f, _, rows = vigil_side(t, "warm", vigil, runs[name]["rss"])
            runs[name]["warm"].append(f)
            if rows != answer:
                raise SystemExit(f"derived_bench: the {name} build's warm answer differs")
    res = {"requests": REQUESTS, "runs": RUNS, "rows": sum(answer.values()),
           "load": os.getloadavg()}
    for name, r in runs.items():
        res[name] = {"cache_cold_first_s": r["cold"][0],
                     "cache_warm_first_s": statistics.median(r["warm"]),
                     "cache_warm_first_all_s": r["warm"],
                     "cache_warm_max_rss_kb": statistics.median(r["rss"])}
        each = ", ".join(f"{x:.3f}" for x in r["warm"])
        print(f"  {name} build: cold {r['cold'][0]:.2f} s, warm first answer "
              f"{res[name]['cache_warm_first_s']:.3f} s (runs {each}), warm max RSS "
              f"{res[name]['cache_warm_max_rss_kb'] / 1024:.0f} MB")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "derived_warm.json"), "w") as f:
        json.dump(res, f, indent=1)


def main():
    tmp = tempfile.mkdtemp(prefix="vigil-derived-bench-")
    trace = record(tmp)
    if os.environ.get("BENCH_DERIVED_WARM_ONLY") == "1":
        warm_only(tmp, trace)
        shutil.rmtree(tmp, ignore_errors=True)
        return
    ours, peers, plain, base, cold, warm, warm_rss = [], [], [], [], [], [], []
    base_build = os.environ.get("VIGIL_BASE_BUILD")
    rows = None
    for _ in range(RUNS):  # in turn, so that a busy machine slows both alike
        f, t, mine = vigil_side(trace)
        ours.append((f, t))
        f, t, theirs = peer_side(trace, tmp)
        peers.append((f, t))
        if mine != theirs or not mine:
            raise SystemExit(f"derived_bench: answers differ: vigil {sum(mine.values())} "
                             f"rows, split + script {sum(theirs.values())}")
        rows = sum(mine.values())
        for runs, mode in ((cold, "cold"), (warm, "warm")):
            f, t, cached = vigil_side(trace, mode, rss=warm_rss if mode == "warm" else None)
            runs.append((f, t))
            if cached != mine:
                raise SystemExit(f"derived_bench: the {mode} answer differs: "
                                 f"{sum(cached.values())} rows, uncached {rows}")
        plain.append(plain_query(BUILD, trace)[0])
        if base_build:
            base.append(plain_query(base_build, trace)[0])
    med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
    res = {"requests": REQUESTS, "runs": RUNS, "rows": rows,
           "trace_bytes": sum(os.path.getsize(os.path.join(r, f))
                              for r, _, fs in os.walk(trace) for f in fs),
           "query_first_s": med(ours, 0), "query_total_s": med(ours, 1),
           "split_script_first_s": med(peers, 0), "split_script_total_s": med(peers, 1),
           "cache_cold_first_s": med(cold, 0), "cache_warm_first_s": med(warm, 0),
           "cache_cold_total_s": med(cold, 1), "cache_warm_total_s": med(warm, 1),
           "cache_warm_max_rss_kb": statistics.median(warm_rss),
           "plain_query_s": statistics.median(plain),
           "plain_query_base_s": statistics.median(base) if base else None,
           "load": os.getloadavg()}
    res.update(lazy_path(trace))
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "derived.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"three_tier, {REQUESTS} requests ({res['trace_bytes'] / 1e6:.0f} MB), "
          f"{rows} messages answered, medians of {RUNS}:")
    print(f"  vigil query over Message x Network: first answer {res['query_first_s']:.2f} s, "
          f"all {res['query_total_s']:.2f} s")
    print(f"  vigil net split + join script:      first answer "
          f"{res['split_script_first_s']:.2f} s, all {res['split_script_total_s']:.2f} s "
          f"({res['split_script_first_s'] / res['query_first_s']:.2f}x)")
    print(f"  the relations cache: first answer cold {res['cache_cold_first_s']:.2f} s, "
          f"warm {res['cache_warm_first_s']:.3f} s "
          f"({res['cache_cold_first_s'] / res['cache_warm_first_s']:.0f}x), warm max RSS "
          f"{res['cache_warm_max_rss_kb'] / 1024:.0f} MB")
    print(f"  a query naming no derived relation: {res['plain_query_s']:.3f} s" +
          (f" (base build {res['plain_query_base_s']:.3f} s)" if base else ""))
    print(f"  the same, derived relations offered / VIGIL_DERIVED=off, medians of "
          f"{PLAIN_RUNS} pairs: no cache {res['plain_cold_s']:.3f} / "
          f"{res['plain_cold_underived_s']:.3f} s ({res['plain_cold_ratio']:.2f}x, CPU "
          f"{res['plain_cold_cpu_ratio']:.2f}x), warm cache {res['plain_warm_s']:.3f} / "
          f"{res['plain_warm_underived_s']:.3f} s ({res['plain_warm_ratio']:.2f}x, CPU "
          f"{res['plain_warm_cpu_ratio']:.2f}x); load {res['load'][0]:.1f}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
