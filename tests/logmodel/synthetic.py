#!/usr/bin/python3
"""Synthetic subjects with known injected changes (tests/logmodel.cmake; issue 5's
validation). Each case records a baseline and the changed subject at several magnitudes
under `vigil record`, builds their models with `vigil model` and checks that
`vigil diff --format json` puts the injected change in the top 3 of the right report:

  lock   longer lock holding (lock_subject.c, VG_LOG): the transition time
         "lock.acquired" -> "lock.released", in the times report (EMD);
  cache  lower cache hit rate (cache_subject.c, VG_LOG): the events cache.miss or
         cache.hit in the events report (proportions), and lookup -> cache.miss or
         lookup -> cache.hit in the transitions report (probabilities);
  mix    changed request mix after login (mix_subject.c, syslog through the preload):
         login -> buy or login -> browse in the transitions report.

The decisions of the subjects come from a seeded generator (the same seed in every run).
Measured times are not ranked: the lock case checks what the subject guarantees, every
timed hold at least the --hold it slept to an absolute deadline (within the sketch's
bucket and 1% for the clock's calibration) and exactly n acquire -> release transitions;
then each recorded model's sketches are replaced by exact ones (the lock transition at
its --hold, every other transition at the baseline's median for it, alike in both) and
`vigil diff` must rank the lock transition first, by the EMD of the two holds. A control
diff (the baseline against itself with another seed) is printed beside each
magnitude; for the count-based cases the smallest change must also score above anything
in the control's same report.

    synthetic.py lock|cache|mix --bin BUILD/bin [--keep DIR]"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

CASES = {
    "lock": {
        "subject": "logmodel_lock", "param": "--hold", "n": 1500, "rounds": 1,
        "base": 100, "changes": [("1.5x", 150), ("3x", 300), ("10x", 1000)],
        "checks": [("times", [("lock.acquired", "lock.released")])],
    },
    "cache": {
        "subject": "logmodel_cache", "param": "--hit", "n": 20000, "rounds": 1,
        "base": 0.9, "changes": [("90%->80%", 0.8), ("90%->60%", 0.6)],
        "checks": [("events", ["cache.miss", "cache.hit"]),
                   ("transitions", [("lookup key %u", "cache.miss"),
                                    ("lookup key %u", "cache.hit")])],
    },
    "mix": {
        "subject": "logmodel_mix", "param": "--shift", "n": 20000, "rounds": 1,
        "base": 0, "changes": [("10%", 0.1), ("30%", 0.3)],
        "checks": [("transitions", [("login request %d", "buy request %d"),
                                    ("login request %d", "browse request %d")])],
    },
}
SCORE = {"events": "difference", "transitions": "ratio", "times": "emd_ns"}
SEED = 7
CONTROL_SEED = 8


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        sys.exit("FAIL: %s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr[-2000:]))
    return r


def label(ev):
    return ev["name"] or ev["fmt"]


def matches(row, report, want):
    if report == "events":
        return label(row["event"]) in want
    return (label(row["from"]), label(row["to"])) in want


def rank_of(doc, report, want):
    """(rank, row) of the best-ranked row of `report` that is the injected change."""
    for row in doc[report]:
        if matches(row, report, want):
            return row["rank"], row
    return None, None


def show(row, report):
    if row is None:
        return "-"
    if report == "events":
        return "share %.4f -> %.4f (%d -> %d)" % (row["share_baseline"], row["share_other"],
                                                   row["count_baseline"], row["count_other"])
    if report == "transitions":
        return "x%.3f: P %.4f -> %.4f (%d/%d -> %d/%d)" % (
            row["ratio"], row["p_baseline"], row["p_other"], row["count_baseline"],
            row["out_baseline"], row["count_other"], row["out_other"])
    return "EMD %.1f us, p50 %.1f -> %.1f us (%d/%d timed)" % (
        row["emd_ns"] / 1e3, row["p50_baseline_ns"] / 1e3, row["p50_other_ns"] / 1e3,
        row["timed_baseline"], row["timed_other"])


# ---- the lock case: deterministic checks ----

def bucket(ns):
    """The sketch bucket of a duration (docs/model.md "Sketches")."""
    if ns < 64:
        return int(ns)
    k = int(ns).bit_length() - 1
    return (k - 6 + 1) * 64 + ((int(ns) >> (k - 6)) & 63)


def bucket_low(b):
    return b if b < 64 else (64 + b % 64) << (b // 64 - 1)


def bucket_value(b):
    return b if b < 64 else bucket_low(b) + (1 << (b // 64 - 1)) // 2


def read_model(path):
    """(lines, {id: (site, fmt)}, {id: name}) of a model file."""
    events, names = {}, {}
    lines = open(path).read().splitlines()
    for l in lines:
        if l.startswith("event "):
            head, fmt = l.rsplit(' "', 1)
            w = head.split(" ", 3)
            events[w[1]] = (w[3], '"' + fmt)
        elif l.startswith("name "):
            w = l.split(" ", 2)
            names[w[1]] = json.loads(w[2])
    return lines, events, names


def transitions(path):
    """{(from name or fmt, to ...): (count, {bucket: n})} of a model file."""
    lines, events, names = read_model(path)
    out = {}
    for l in lines:
        if l.startswith("transition "):
            w = l.split()
            key = tuple(names.get(e) or json.loads(events[e][1]) for e in w[1:3])
            out[key] = (int(w[3]), {int(b): int(n) for b, n in (x.split(":") for x in w[5:])})
    return out


def exact_model(path, out, hold_ns, medians):
    """A copy of the model with every transition's timed values moved to one bucket: the
    lock transition's to hold_ns, every other's to medians[key]."""
    lines, events, names = read_model(path)
    res = []
    for l in lines:
        if l.startswith("transition "):
            w = l.split()
            key = tuple(names.get(e) or json.loads(events[e][1]) for e in w[1:3])
            timed = sum(int(x.split(":")[1]) for x in w[5:])
            if timed:
                b = bucket(hold_ns) if key == LOCK else medians[key]
                l = "transition %s %s %s %d %d:%d" % (w[1], w[2], w[3],
                                                      bucket_value(b) * timed, b, timed)
        res.append(l)
    with open(out, "w") as f:
        f.write("\n".join(res) + "\n")


LOCK = ("lock.acquired", "lock.released")


def median_bucket(sketch):
    n, seen = sum(sketch.values()), 0
    for b in sorted(sketch):
        seen += sketch[b]
        if 2 * seen >= n:
            return b
    return 0


def lock_checks(vigil, tmp, c, configs, models):
    fails = []
    # what the subject guarantees, in every recorded model
    for name, value, _ in configs:
        t = transitions(models[name])
        count, sketch = t.get(LOCK, (0, {}))
        hold_ns = value * 1000
        short = {b: n for b, n in sketch.items()
                 if bucket_low(b) + (1 << max(b // 64 - 1, 0)) < 0.99 * hold_ns}
        timed = sum(sketch.values())
        print("  %-9s lock held %d times, %d timed, shortest bucket from %.1f us (--hold %s)"
              % (name, count, timed, bucket_low(min(sketch)) / 1e3 if sketch else -1, value))
        if count != c["n"]:
            fails.append("%s: %d acquire -> release transitions, expected %d" %
                         (name, count, c["n"]))
        if timed < 10:
            fails.append("%s: only %d lock holds timed" % (name, timed))
        if short:
            fails.append("%s: holds timed shorter than --hold %s us: %s" % (name, value, short))
    # the ranking, on exact sketches
    base_t = transitions(models["base"])
    medians = {k: median_bucket(sk) for k, (_, sk) in base_t.items() if sk}
    exact = {}
    for name, value, _ in configs:
        exact[name] = os.path.join(tmp, name + ".exact.vgm")
        exact_model(models[name], exact[name], value * 1000, medians)
    for name, value, _ in configs[1:]:
        r = run([vigil, "diff", exact["base"], exact[name], "--format", "json", "--top", "0"])
        times = json.loads(r.stdout)["times"]
        want = abs(bucket_value(bucket(value * 1000)) - bucket_value(bucket(c["base"] * 1000)))
        top = times[0] if times else None
        print("  %-9s exact sketches: top %s, EMD %s ns (expected %d)" %
              (name, top and (label(top["from"]), label(top["to"])), top and top["emd_ns"],
               want))
        if name == "control":  # the same holds: nothing moved
            if any(abs(r["emd_ns"]) > 0 for r in times):
                fails.append("control: exact sketches alike, yet EMD %s" %
                             [(label(r["from"]), r["emd_ns"]) for r in times if r["emd_ns"]])
            continue
        if not top or (label(top["from"]), label(top["to"])) != LOCK or \
                abs(top["emd_ns"] - want) > 0.5 or any(r["emd_ns"] for r in times[1:]):
            fails.append("%s: exact sketches: ranked %s, expected the lock transition "
                         "alone, EMD %d" % (name, [(label(r["from"]), label(r["to"]),
                                                    r["emd_ns"]) for r in times[:3]], want))
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--bin", required=True)
    ap.add_argument("--keep", help="keep the recordings and models in this directory")
    a = ap.parse_args()
    c = CASES[a.case]
    vigil = os.path.join(a.bin, "vigil")
    subject = os.path.join(a.bin, c["subject"])
    env = dict(os.environ)
    env["VIGIL_LOG_PASS"] = "none"  # modelled, never written: nothing on stderr or syslog
    env.pop("VIGIL_LOG", None)
    env.pop("VIGIL_LOG_TIMING", None)  # the default timing sample

    tmp_obj = None
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
        tmp = a.keep
    else:
        tmp_obj = tempfile.TemporaryDirectory()
        tmp = tmp_obj.name
    configs = [("base", c["base"], SEED), ("control", c["base"], CONTROL_SEED)]
    configs += [(name, value, SEED) for name, value in c["changes"]]
    traces = {name: [] for name, _, _ in configs}
    for rnd in range(c["rounds"]):  # alternate the configurations: load hits them alike
        for name, value, seed in configs:
            out = os.path.join(tmp, "%s.%d" % (name, rnd))
            run([vigil, "record", "-q", "-o", out, "--", subject, "run", "--n", str(c["n"]),
                 c["param"], str(value), "--seed", str(seed)], env=env)
            traces[name].append(out)
    models = {}
    for name in traces:
        models[name] = os.path.join(tmp, name + ".vgm")
        run([vigil, "model"] + traces[name] + ["-o", models[name]])

    def diff(other):
        r = run([vigil, "diff", models["base"], models[other], "--format", "json", "--top", "0"])
        return json.loads(r.stdout)

    if a.case == "lock":
        print("case lock: baseline --hold %s us, seed %d, %d calls" % (c["base"], SEED, c["n"]))
        fails = lock_checks(vigil, tmp, c, configs, models)
        for f in fails:
            print("FAIL: " + f)
        print("ok" if not fails else "(rerun with --keep DIR to look at the models)")
        return 1 if fails else 0

    control = diff("control")
    fails = []
    print("case %s: baseline %s %s, seed %d, %d x %d calls" %
          (a.case, c["param"], c["base"], SEED, c["rounds"], c["n"]))
    for name, value, _ in configs[2:]:
        doc = diff(name)
        for report, want in c["checks"]:
            rank, row = rank_of(doc, report, want)
            crank, crow = rank_of(control, report, want)
            top = doc[report][0] if doc[report] else None
            print("  %-9s %-11s rank %s of %d: %s" % (name, report, rank, len(doc[report]),
                                                      show(row, report)))
            print("  %-9s %-11s control (seed %d) rank %s: %s; its top: %s" %
                  ("", "", CONTROL_SEED, crank, show(crow, report),
                   show(control[report][0] if control[report] else None, report)))
            if rank is None or rank > 3:
                fails.append("%s %s: the injected change is ranked %s, not in the top 3 "
                             "(top: %s)" % (name, report, rank, show(top, report)))
            # Counts are exact functions of the seed: the smallest change must stand
            # above everything the control (same configuration, other seed) shows.
            if report != "times" and name == configs[2][0] and control[report]:
                key = SCORE[report]
                ctop = max(abs(r[key]) for r in control[report])
                if row is None or abs(row[key]) <= ctop:
                    fails.append("%s %s: score %s is not above the control's largest %s" %
                                 (name, report, row and row[key], ctop))
    if fails:
        print("\n".join("FAIL: " + f for f in fails))
        if not a.keep:
            print("(rerun with --keep DIR to look at the models)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
