#!/usr/bin/python3
"""`vigil model`, `vigil diff` and `vigil cdf` on hand-written models with known answers
(tests/model.cmake): an injected change must rank first in the right report, rare
transitions stay out of the ranking, models without common events are an error, a chain
of known times gives a known CDF, bad input gives one line with FILE:LINE.

    cli_test.py --bin BUILD/bin"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def bucket(ns):
    """src/common/sketch_index.h"""
    if ns < 64:
        return ns
    octave = ns.bit_length() - 1
    shift = octave - 6
    return (octave - 6 + 1) * 64 + ((ns >> shift) & 63)


def bucket_value(b):
    """the middle of bucket b"""
    if b < 64:
        return float(b)
    shift = b // 64 - 1
    low = (64 + b % 64) << shift
    width = 1 << shift
    return low + (width / 2 if width > 1 else 0)


def model(events, trans, names=None):
    """events: [(site, fmt, count)], ids from 1; trans: {(i, j): (count, [times])}"""
    out = ["vigil-model 1", "source cli_test"]
    for i, (site, fmt, count) in enumerate(events, 1):
        out.append("event %d %d %s %s" % (i, count, site, json.dumps(fmt)))
    for i, n in (names or {}).items():
        out.append("name %d %s" % (i, json.dumps(n)))
    for (i, j), (count, times) in sorted(trans.items()):
        hist = {}
        for t in times:
            hist[bucket(t)] = hist.get(bucket(t), 0) + 1
        b = "".join(" %d:%d" % (k, hist[k]) for k in sorted(hist))
        out.append("transition %d %d %d %d%s" % (i, j, count, sum(times), b))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    a = ap.parse_args()
    vigil = os.path.join(a.bin, "vigil")

    def run(*args):
        return subprocess.run([vigil] + list(args), capture_output=True, text=True)

    tmp = tempfile.mkdtemp(prefix="model-cli-")

    def write(name, text):
        p = os.path.join(tmp, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
        return p

    for cmd in ("model", "diff", "cdf"):
        r = run(cmd, "--help")
        check(r.returncode == 0 and "examples:" in r.stdout, "%s --help" % cmd)

    # ---- diff: one injected change per report, amid small noise ----
    ev = [("src/q.c:10", "query start %d", 1000), ("src/q.c:20", "cache hit", 900),
          ("src/q.c:30", "cache miss", 100), ("src/q.c:40", "query done", 1000),
          ("src/w.c:5", "checkpoint", 10), ("src/w.c:9", "rare thing", 3)]
    base_tr = {(1, 2): (900, [20000] * 900), (1, 3): (100, [50000] * 100),
               (2, 4): (900, [100000] * 900), (3, 4): (100, [2000000] * 100),
               (4, 1): (999, [10000] * 999), (5, 6): (1, [5000])}
    base = write("base.vgm", model(ev, base_tr, {3: "cache miss"}))
    # other: the miss rate goes 10% -> 40% (transition probability and event shares),
    # and a hit's time 100 us -> 130 us (time distributions); the rare transition jumps
    # (1 -> 3 times) but stays below the support
    ev2 = [("src/q.c:10", "query start %d", 1000), ("src/q.c:20", "cache hit", 600),
           ("src/q.c:30", "cache miss", 400), ("src/q.c:40", "query done", 1000),
           ("src/w.c:5", "checkpoint", 11), ("src/w.c:9", "rare thing", 9),
           ("src/w.c:12", "new in other", 2)]
    other_tr = {(1, 2): (600, [21000] * 600), (1, 3): (400, [50000] * 400),
                (2, 4): (600, [130000] * 600), (3, 4): (400, [2000000] * 400),
                (4, 1): (999, [10000] * 999), (5, 6): (3, [5000] * 3)}
    other = write("other.vgm", model(ev2, other_tr))
    r = run("diff", "--format", "json", base, other)
    check(r.returncode == 0, "diff json: %s" % r.stderr)
    d = json.loads(r.stdout)
    top_ev = d["events"][0]
    check(top_ev["event"]["site"] in ("src/q.c:30", "src/q.c:20"),
          "event report top: %s" % top_ev["event"])
    check(top_ev["count_baseline"] in (100, 900), "event counts in the row")
    top_tr = d["transitions"][0]
    check((top_tr["from"]["site"], top_tr["to"]["site"]) == ("src/q.c:10", "src/q.c:30"),
          "transition report top: %s -> %s" % (top_tr["from"], top_tr["to"]))
    # smoothed ratio: (400+1)/(1000+2) / ((100+1)/(1000+2))
    check(abs(top_tr["ratio"] - 401 / 101) < 1e-9, "ratio %s" % top_tr["ratio"])
    check(top_tr["count_baseline"] == 100 and top_tr["count_other"] == 400, "counts")
    check(not any(t["from"]["site"] == "src/w.c:5" for t in d["transitions"]),
          "a transition below the support is ranked")
    check(d["transitions_below_support"] >= 1, "below support counted")
    top_t = d["times"][0]
    check((top_t["from"]["site"], top_t["to"]["site"]) == ("src/q.c:20", "src/q.c:40"),
          "time report top: %s" % top_t)
    want = bucket_value(bucket(130000)) - bucket_value(bucket(100000))  # about 30 us
    check(abs(top_t["emd_ns"] - want) < 1e-6, "emd %s (want %s)" % (top_t["emd_ns"], want))
    check(top_ev["event"].get("name") in (None, "cache miss"), "names in json")
    r = run("diff", "--top", "1", base, other)
    check(r.returncode == 0 and "cache miss" in r.stdout and "x3.97" in r.stdout,
          "text diff:\n" + r.stdout)
    r = run("diff", "--min-support", "1", "--format", "json", base, other)
    d1 = json.loads(r.stdout)
    check(any(t["from"]["site"] == "src/w.c:5" for t in d1["transitions"]),
          "--min-support 1 ranks the rare transition")

    # ---- no common events ----
    lone = write("lone.vgm", model([("x.c:1", "x", 5)], {}))
    r = run("diff", base, lone)
    check(r.returncode == 1 and "no event in common" in r.stderr and not r.stdout
          and r.stderr.count("\n") == 1, "no common events: %r %r" % (r.stdout, r.stderr))

    # ---- bad files: one line, FILE:LINE ----
    bad = write("bad.vgm", "vigil-model 1\nevent 1 2 a.c:1 \"x\"\ntransition 1 9 1 0\n")
    for cmd in (["diff", base, bad], ["cdf", bad, "--from", "1", "--to", "1"],
                ["model", bad, "-o", os.path.join(tmp, "o.vgm")]):
        r = run(*cmd)
        check(r.returncode != 0 and (bad + ":3: second event 9 is not declared") in r.stderr
              and r.stderr.count("\n") == 1, "%s: %r" % (cmd[0], r.stderr))
    v2 = write("v2.vgm", "vigil-model 2\n")
    r = run("diff", v2, base)
    check(r.returncode == 2 and v2 + ":1: model format version 2" in r.stderr, r.stderr)
    r = run("diff", "--format", "xml", base, other)
    check(r.returncode == 2 and "--format" in r.stderr, "bad option")

    # ---- cdf on a chain: A -> B 100 us, B -> C 200 us ----
    chain = write("chain.vgm", model([("c.c:1", "A", 1000), ("c.c:2", "B", 1000),
                                       ("c.c:3", "C", 1000)],
                                      {(1, 2): (1000, [100000] * 1000),
                                       (2, 3): (1000, [200000] * 1000)}, {1: "start"}))
    r = run("cdf", chain, "--from", "start", "--to", "c.c:3", "--format", "json",
            "--svg", os.path.join(tmp, "c.svg"))
    check(r.returncode == 0, "cdf: %s" % r.stderr)
    doc = json.loads(r.stdout)
    p50 = doc["percentiles_ns"]["p50"]
    check(abs(p50 - 300000) / 300000 < 0.01, "chain p50 %s" % p50)
    check(doc["walks_reached"] == 10000 and abs(doc["mass"] - 1) < 1e-9, "walks %s" % doc)
    svg = open(os.path.join(tmp, "c.svg")).read()
    check(svg.startswith("<svg") and "polyline" in svg and "fraction of walks" in svg, "svg")
    r = run("cdf", chain, "--from", "strat", "--to", "3")
    check(r.returncode == 2 and "unknown event 'strat'" in r.stderr and "start" in r.stderr,
          "unknown event: %r" % r.stderr)
    r = run("cdf", chain, "--from", "c.c:3", "--to", "start")
    check(r.returncode == 1 and "no path" in r.stderr, "no path: %r" % r.stderr)
    r = run("cdf", chain, "--from", "1", "--to", "3", "--seed", "5")
    check(r.returncode == 0 and "p50" in r.stdout and "300 us" in r.stdout, r.stdout)

    # ---- model: names, snapshots of a recording, stable output ----
    names = write("names.txt", "# later rules replace earlier names\nc.c:*=chain\n\nc.c:2=middle\n")
    out = os.path.join(tmp, "named.vgm")
    r = run("model", chain, "--names", names, "--name", "c.c:3=end", "-o", out)
    check(r.returncode == 0, "model --names: %s" % r.stderr)
    text = open(out).read()
    check('name 1 "chain"' in text and 'name 2 "middle"' in text and 'name 3 "end"' in text,
          "names:\n" + text)
    badnames = write("badnames.txt", "c.c:1=a\nno equals sign\n")
    r = run("model", chain, "--names", badnames, "-o", out)
    check(r.returncode != 0 and badnames + ":2:" in r.stderr, "bad names: %r" % r.stderr)
    rec = os.path.join(tmp, "rec")
    one = [("/nonexistent/app+0x10", "a %d", 1), ("/nonexistent/app+0x20", "b", 1)]
    write("rec/logmodel-app-10-1-1.vgm", model(one, {(1, 2): (1, [1000])}))
    two = [("/nonexistent/app+0x10", "a %d", 5), ("/nonexistent/app+0x20", "b", 4)]
    write("rec/logmodel-app-10-1-2.vgm", model(two, {(1, 2): (4, [1000] * 4)}))
    write("rec/logmodel-app-11-1-1.vgm", model(one, {(1, 2): (1, [3000])}))
    # pid 10's image before an exec (app-10-0): its own last snapshot counts too
    write("rec/logmodel-app-10-0-3.vgm", model(one, {(1, 2): (1, [1000])}))
    out = os.path.join(tmp, "rec.vgm")
    r = run("model", rec, "-o", out)
    check(r.returncode == 0 and "1 earlier snapshots skipped" in r.stderr, r.stderr)
    text = open(out).read()
    check('event 1 7 app+0x10 "a %d"' in text and "transition 1 2 6 8000" in text,
          "recording's snapshots:\n" + text)
    again = os.path.join(tmp, "again.vgm")
    run("model", out, "-o", again)
    check(open(again).read() == text, "writing a model read back is not stable")
    r = run("model", os.path.join(tmp, "nothing-here"), "-o", out)
    check(r.returncode != 0 and "nothing-here" in r.stderr, "missing input")

    shutil.rmtree(tmp)
    print("%d failures" % len(FAILS))
    sys.exit(1 if FAILS else 0)


main()
