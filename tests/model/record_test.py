#!/usr/bin/python3
"""`vigil model` on a real recording (tests/model.cmake): records tests/model/subject.c
under `vigil record`, builds the model of the trace's events and checks it against
`vigil dump --json`: every event type's count, every transition's count and the sum of
its times; then checks that a raw call site of the subject symbolizes to its file:line,
and that `vigil cdf` answers on the trace's model.

    record_test.py --bin BUILD/bin --subject BUILD/bin/model_subject"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def read_model(path):
    """{id: (site, fmt, count)}, {(id1, id2): (count, sum)}"""
    events, trans = {}, {}
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    assert lines[0] == "vigil-model 1", lines[0]
    for line in lines[1:]:
        if line.startswith("event "):
            _, eid, count, rest = line.split(" ", 3)
            site, fmt = rest.split(' "', 1)
            events[int(eid)] = (site, json.loads('"' + fmt), int(count))
        elif line.startswith("transition "):
            f = line.split(" ")
            trans[(int(f[1]), int(f[2]))] = (int(f[3]), int(f[4]))
    return events, trans


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--subject", required=True)
    a = ap.parse_args()
    vigil = os.path.join(a.bin, "vigil")
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "run")
        r = run([vigil, "record", "-o", trace, "--", a.subject, "4"])
        if r.returncode:
            sys.exit("record failed: %s" % r.stderr)
        site_line = [l for l in r.stdout.splitlines() if l.startswith("SITE ")]
        d = run([vigil, "dump", "--json", trace])
        if d.returncode:  # the log models in the trace's root are no streams
            sys.exit("dump failed: %s" % d.stderr)
        evs = [json.loads(l) for l in d.stdout.splitlines()]
        counts = collections.Counter(e["name"] for e in evs)
        # consecutive events of one thread (the subject does not exec: (pid, tid) is a stream)
        last = {}
        want_trans = collections.Counter()
        want_sum = collections.Counter()
        for e in evs:
            key = (e["pid"], e["tid"])
            if key in last:
                prev = last[key]
                want_trans[(prev["name"], e["name"])] += 1
                want_sum[(prev["name"], e["name"])] += max(0, e["ts"] - prev["ts"])
            last[key] = e

        model = os.path.join(tmp, "run.vgm")
        m = run([vigil, "model", "--from-trace", trace, "-o", model])
        if m.returncode:
            sys.exit("vigil model failed: %s" % m.stderr)
        print(m.stderr.strip())
        if "%d events" % len(evs) not in m.stderr:
            fails.append("summary does not say %d events: %s" % (len(evs), m.stderr))
        events, trans = read_model(model)
        got = {fmt: count for (site, fmt, count) in events.values()}
        for (site, fmt, count) in events.values():
            if site != "sensor:" + fmt:
                fails.append("site %r of %r" % (site, fmt))
        if got != dict(counts):
            fails.append("event counts differ: model %s, dump %s" % (got, dict(counts)))
        name = {eid: fmt for eid, (site, fmt, count) in events.items()}
        got_trans = {(name[a], name[b]): c for (a, b), (c, s) in trans.items()}
        got_sum = {(name[a], name[b]): s for (a, b), (c, s) in trans.items()}
        if got_trans != dict(want_trans):
            fails.append("transitions differ: model %s, dump %s" % (got_trans, dict(want_trans)))
        if got_sum != dict(want_sum):
            fails.append("transition time sums differ: model %s, dump %s" % (got_sum, dict(want_sum)))
        print("model of %d events, %d types, %d transition kinds matches vigil dump"
              % (len(evs), len(events), len(trans)))

        # cdf on the trace's model: from a thread's start to its end
        c = run([vigil, "cdf", model, "--from", "vg.thread.begin", "--to", "vg.thread.end",
                 "--format", "json", "--walks", "2000"])
        if c.returncode:
            fails.append("cdf failed: %s" % c.stderr)
        else:
            doc = json.loads(c.stdout)
            if not (doc["walks_reached"] > 0 and doc["percentiles_ns"]["p50"] > 0):
                fails.append("cdf answer %s" % doc)

        # symbolization of a raw site of the subject
        if not site_line:
            fails.append("the subject printed no SITE line: %r" % r.stdout)
        else:
            _, raw, line = site_line[0].split(" ")
            rawfile = os.path.join(tmp, "raw.vgm")
            with open(rawfile, "w") as f:
                f.write('vigil-model 1\nevent 1 3 %s "at %%d"\n' % raw)
            out = os.path.join(tmp, "sym.vgm")
            s = run([vigil, "model", rawfile, "-o", out])
            events, _ = read_model(out)
            sites = [site for (site, fmt, count) in events.values()]
            if s.returncode or not sites or not sites[0].endswith("subject.c:" + line):
                fails.append("raw site %s symbolized to %s (want ...subject.c:%s): %s"
                             % (raw, sites, line, s.stderr))
            else:
                print("raw site %s -> %s" % (raw, sites[0]))
            if "1 of 1 raw sites symbolized" not in s.stderr:
                fails.append("summary: %s" % s.stderr)
        # The runtime's log capture (include/vigil/log.h, src/runtime/logcap*): messages
        # written to stderr become a log model that `vigil model` symbolizes.
        if os.path.exists(os.path.join(os.environ.get("VIGIL_SRC", ""), "include/vigil/log.h")):
            logrun = os.path.join(tmp, "logrun")
            r = run([vigil, "record", "-o", logrun, "--", a.subject, "log", "50"])
            line = [l.split()[1] for l in r.stdout.splitlines() if l.startswith("LOG ")]
            out = os.path.join(tmp, "log.vgm")
            s = run([vigil, "model", logrun, "-o", out])
            events, _ = read_model(out) if s.returncode == 0 else ({}, {})
            hit = [(site, count) for (site, fmt, count) in events.values()
                   if fmt == "tick %d\n"]
            if r.returncode or not line or len(hit) != 1 or hit[0][1] != 50 \
                    or not hit[0][0].endswith("subject.c:" + line[0]):
                fails.append("log capture model: %s (want subject.c:%s x50): %s %s"
                             % (hit, line, s.stderr, r.stderr[-300:]))
            else:
                print("captured log call -> %s x%d" % hit[0])
        else:
            print("no log capture in this tree (include/vigil/log.h): its check skipped")
    for f in fails:
        print("FAIL:", f)
    sys.exit(1 if fails else 0)


main()
