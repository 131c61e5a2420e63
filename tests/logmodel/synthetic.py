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
Timings are noisy on a loaded machine: the lock case alternates the configurations over
two rounds and merges each configuration's runs (`vigil model` of several recordings).
A control diff (the baseline against itself with another seed) is printed beside each
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
        "subject": "logmodel_lock", "param": "--hold", "n": 1500, "rounds": 2,
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
