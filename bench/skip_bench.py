#!/usr/bin/python3
"""bench/skip_bench.py: selective queries with the build passing over the events outside a
time range or not building the tuples a key selection leaves out, and without
(VIGIL_SKIP=off), side by side in one run.

    skip_bench.py BUILD_DIR [--events N] [--reps 3] [--threads 1] [--trace DIR]

(`make bench` runs it as `skip`; VIGIL_BENCH_SMOKE=1: 200,000 events, 1 repetition; the
figures go to BENCH_OUT/skip.json.)

Records --events events of bench/query-subject (2 threads) with `vigil record` (or uses
--trace), then answers, with VIGIL_CACHE=off (every query builds what it ranges over),

    range of S is Send
    retrieve (S.conn, S.size) where S.size > 60000
      when S overlap ("T1" extend "T2")

over the middle 5% of the trace's time, the same with `when` written as two precedes, and
query-bench's selective scan (`where S.mailbox = 7 and S.size > 58982`, a key selection),
each with VIGIL_SKIP on and off, median of --reps, alternating. The answers must be
equal. Prints one markdown table (wall time, the build's time from --stats, packets and
events passed over, load average) and the ratio off/on. Then a selective query over a
rare relation (Audit, about 0.1% of the events, in every packet), a small one (Lock) and
the flood (Send), cache off, cold and warm, with packet summaries' positions and without
(VIGIL_SUMMARY_POSITIONS=off): events decoded and wall time, and each one's cost against
Send's beside its share of Send's tuples (relation_size).
"""
import datetime
import json
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def query(args, trace, text, **env):
    """`vigil query` of text (csv, --stats, --threads) with env over the clean one; never
    pinned (its runs take seconds each)."""
    return benchlib.vigil(args, ["query", trace, "--format", "csv", "--stats", "--threads",
                                 str(args.threads), "-e", text], env=dict(args.env, **env))


def span(args, trace):
    """The span of Send's times (ns), from its few messages of size under 10 (about one in
    6,500, spread over the whole run)."""
    r = benchlib.vigil(args, ["query", trace, "--format", "json", "-e",
                              "range of S is Send retrieve (S.conn) where S.size < 10"],
                       env=dict(args.env, VIGIL_CACHE="off"))
    times = [json.loads(x)["at"] for x in r.out.splitlines()]
    return min(times), max(times)


def fmt(ns):
    secs, frac = divmod(ns, 10**9)
    d = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=secs)
    return d.strftime("%Y-%m-%d %H:%M:%S") + ".%09d" % frac


def tuple_counts(args, trace):
    """The tuples of each relation (`vigil relations --json`, every relation built once)."""
    r = benchlib.vigil(args, ["relations", "--json", trace], env=dict(args.env, VIGIL_CACHE="off"))
    rels = [json.loads(x) for x in r.out.splitlines() if x.strip()]
    return {x["name"]: x.get("tuples") or 0 for x in rels}


def relation_size(args, trace):
    """A query over a rare relation (Audit: about one event in 1,000, in every packet
    among the others), a small one (Lock, about 7%) and the flood (Send), on the same
    trace: with the relations cache off (the build alone), cold (a fresh cache directory,
    none beside the trace: the relation named built and written) and warm; the first two
    with packet summaries' positions (VIGIL_SUMMARY_POSITIONS on: only the events of the
    relation's classes decoded) and without (off: every header of every packet read),
    alternating. Summaries are made by a first read. Events decoded (read less those never
    decoded) and wall time, medians of --reps; then each relation's cost against Send's
    beside its tuples' share of Send's."""
    queries = {"Audit": "range of A is Audit retrieve (A.level) where A.conn = 7",
               "Lock": "range of L is Lock retrieve (L.lock) where L.lock = 7",
               "Send": "range of S is Send retrieve (S.conn) where S.mailbox = 7"}
    query(args, trace, queries["Send"], VIGIL_CACHE="off")  # the summaries made
    tuples = tuple_counts(args, trace)
    runs = {}
    for _ in range(args.reps):
        for name, text in queries.items():
            for cache in ("off", "cold", "warm"):
                for pos in (("on", "off") if cache != "warm" else ("-",)):
                    env = {"VIGIL_CACHE": "off"}
                    cdir = None
                    if cache != "off":
                        cdir = tempfile.mkdtemp(prefix="vigil-skipbench-cache.")
                        benchlib.remove_cache(trace)
                        env = {"VIGIL_CACHE_DIR": cdir}
                    if cache == "warm":
                        query(args, trace, text, **env)  # made cold first
                    if pos != "-":
                        env["VIGIL_SUMMARY_POSITIONS"] = pos
                    r = query(args, trace, text, **env)
                    if cdir:
                        shutil.rmtree(cdir, ignore_errors=True)
                        benchlib.remove_cache(trace)
                    key = (name, cache, pos)
                    runs.setdefault(key, []).append((r.wall, r.stats, benchlib.load(),
                                                     r.lines()))
    out = {"tuples": tuples}
    print("| relation | tuples | cache | positions | wall (median) | build | events decoded | "
          "events read | packets read by positions | load |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---|")
    for key, rs in runs.items():
        name, cache, pos = key
        if any(x[3] != rs[0][3] for x in rs) or any(
                runs[k][0][3] != rs[0][3] for k in runs if k[0] == name):
            sys.exit("MISMATCH: %s answers differ between runs (cache, positions)" % name)
        st = rs[-1][1]
        # warm: nothing decoded (the relation's files mapped; `events` is the cache's count)
        decoded = 0 if cache == "warm" else st["events"] - st["skip"].get("events_skipped", 0)
        wall = statistics.median(x[0] for x in rs)
        build = statistics.median(x[1]["build_ns"] for x in rs) / 1e9
        loads = [x[2] for x in rs]
        print("| %s | %d | %s | %s | %.3f s | %.3f s | %d | %d | %d of %d | %.1f-%.1f |" %
              (name, tuples.get(name, 0), cache, pos, wall, build, decoded, st["events"],
               st["skip"].get("packets_positioned", 0), st["skip"]["packets_read"],
               min(loads), max(loads)))
        out["%s_%s_%s" % (name, cache, pos)] = {"wall_s": wall, "build_s": build,
                                                "decoded": decoded, "read": st["events"]}
    send = max(tuples.get("Send", 1), 1)
    for name in ("Audit", "Lock"):
        share = tuples.get(name, 0) / send
        line = []
        for cache, pos in (("off", "on"), ("off", "off"), ("cold", "on"), ("cold", "off"),
                           ("warm", "-")):
            a = out["%s_%s_%s" % (name, cache, pos)]
            b = out["Send_%s_%s" % (cache, pos)]
            line.append("cache %s%s: wall %.3f, build %.3f" %
                        (cache, "" if pos == "-" else ", positions " + pos,
                         a["wall_s"] / b["wall_s"], a["build_s"] / max(b["build_s"], 1e-9)))
            out["%s_ratio_%s_%s" % (name, cache, pos)] = a["wall_s"] / b["wall_s"]
        print("%s against Send: tuples %.4f; cost %s" % (name, share, "; ".join(line)))
    return out


def main():
    ap = benchlib.parser(__doc__, reps=3)
    ap.add_argument("--threads", type=int, default=1, help="vigil query --threads")
    args = benchlib.paths(ap.parse_args())
    with benchlib.Workdir("vigil-skipbench.") as tmp:
        args.env = benchlib.clean_env(tmp)
        measure(args, benchlib.trace_of(args, tmp))
    return 0


def measure(args, trace):
    first, last = span(args, trace)
    t1 = first + (last - first) * 50 // 100
    t2 = first + (last - first) * 55 // 100
    queries = {
        "key": benchlib.SCAN,
        "overlap": 'range of S is Send retrieve (S.conn, S.size) where S.size > 60000 '
                   'when S overlap ("%s" extend "%s")' % (fmt(t1), fmt(t2)),
        "precede": 'range of S is Send retrieve (S.conn, S.size) where S.size > 60000 '
                   'when "%s" precede S and S precede "%s"' % (fmt(t1), fmt(t2)),
    }
    rows = []
    for name, text in queries.items():
        runs = {"on": [], "off": []}
        answers = {}
        for _ in range(args.reps):
            for skip in ("on", "off"):
                r = query(args, trace, text, VIGIL_CACHE="off", VIGIL_SKIP=skip)
                answers.setdefault(skip, r.lines())
                if r.lines() != answers[skip]:
                    sys.exit("%s: answers differ between runs" % name)
                runs[skip].append((r.wall, r.stats["build_ns"] / 1e9, r.stats["skip"],
                                   benchlib.load()))
        if answers["on"] != answers["off"]:
            sys.exit("MISMATCH: %s answers differ with and without skipping" % name)
        for skip in ("on", "off"):
            r = runs[skip]
            rows.append((name, skip, statistics.median(x[0] for x in r),
                         statistics.median(x[1] for x in r), r[-1][2],
                         min(x[3] for x in r), max(x[3] for x in r),
                         len(answers[skip]) - 1))
    print("| query | VIGIL_SKIP | wall (median) | build | packets outside | "
          "of them passed over whole | events passed over | keyed | tuples | load |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, skip, wall, build, sk, lo, hi, n in rows:
        print("| %s | %s | %.3f s | %.3f s | %d of %d | %d (%d events) | %d | %d | %d | "
              "%.1f-%.1f |" %
              (name, skip, wall, build, sk["packets"], sk["packets_read"],
               sk.get("packets_skipped", 0), sk.get("events_skipped", 0), sk["events"],
               sk["keyed"], n, lo, hi))
    result = {"events": args.events, "threads": args.threads, "reps": args.reps,
              "queries": {}}
    for name in queries:
        on = [r for r in rows if r[0] == name and r[1] == "on"][0]
        off = [r for r in rows if r[0] == name and r[1] == "off"][0]
        print("%s: off/on %.2fx wall, %.2fx build" % (name, off[2] / on[2], off[3] / on[3]))
        result["queries"][name] = {"on_s": on[2], "off_s": off[2], "on_build_s": on[3],
                                   "off_build_s": off[3], "skip": on[4],
                                   "load": [on[5], off[6]]}
    result["relations"] = relation_size(args, trace)
    benchlib.write_json(args.out, "skip.json", result)


if __name__ == "__main__":
    sys.exit(main())
