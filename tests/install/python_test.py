#!/usr/bin/env python3
"""The Python module (issue 28, item 7) against the CLI on a recording of the mailbox
example: vigil.relations equals `vigil relations --json`, vigil.query the tuples of
`vigil query --format json` (several retrieves, event and interval relations), the
DataFrame the same tuples with valid-time columns, vigil.events the lines of `vigil dump
--json`; bad statements and a missing trace raise vigil.Error with the CLI's message; a
time selection reaches the build (stats say events were passed over) and answers as the
whole build and the CLI do. Then docs/python.md's example runs as written."""
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.abspath(os.environ["VIGIL_BIN"])
SRC = os.path.abspath(os.environ["VIGIL_SRC"])
sys.path.insert(0, os.path.join(SRC, "python"))
import vigil  # noqa: E402


def cli(*args):
    p = subprocess.run([BIN + "/vigil", *args], capture_output=True, text=True, timeout=120)
    if p.returncode:
        raise SystemExit(f"FAIL: vigil {' '.join(args)}: {p.stderr}")
    return [json.loads(l) for l in p.stdout.splitlines()]


def fmt_ns(ns):
    """A TQuel date of ns since the epoch (UTC)."""
    secs, frac = divmod(ns, 10**9)
    d = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=secs)
    return d.strftime("%Y-%m-%d %H:%M:%S") + ".%09d" % frac


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def main():
    work = tempfile.mkdtemp(prefix="vigil-python-")
    ok = False
    try:
        trace = os.path.join(work, "run1")
        subprocess.run([BIN + "/vigil", "record", "-q", "-o", trace, "--", BIN + "/mailbox",
                        "--seed", "2"], check=True, capture_output=True, timeout=120)
        # (the CLI also lists the derived relations' attributes, docs/tquel.md)
        check(vigil.relations(trace) ==
              [r for r in cli("relations", "--json", trace) if "derived" not in r],
              "vigil.relations differs from vigil relations --json")
        q = ("range of S is SendMessage range of W is Waiting\n"
             "retrieve (S.process, S.msg) where S.msg < 10\n"
             "retrieve (W.process, W.mailbox)\n"
             "retrieve ResumedbyP1 (Process = W.Process) valid at end of W\n"
             "  where S.Mailbox = W.Mailbox and S.Process = \"P1\" when S precede end of W\n")
        want = cli("query", trace, "-e", q, "--format", "json")
        rows = vigil.query(trace, q)
        check(len(want) > 10 and len({o["relation"] for o in want}) == 3,
              f"the CLI answered {len(want)} tuples: the recording changed?")
        got = [{"relation": r.relation, "kind": r.kind, "values": r.values,
                **({"at": r.valid_at} if r.kind == "event" else
                   {"from": r.valid_from, "to": r.valid_to})} for r in rows]
        check(got == want, f"vigil.query: {len(got)} tuples, the CLI {len(want)}; first "
                           f"difference at {next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), None)}")
        # The DataFrame: the same tuples, valid time as UTC timestamps to the nanosecond.
        df = vigil.query(trace, q, frame=True)
        check(list(df.columns[:3]) == ["relation", "valid_from", "valid_to"],
              f"frame columns {list(df.columns)}")
        check(len(df) == len(want), f"frame has {len(df)} rows, the CLI {len(want)}")
        for i, o in enumerate(want):
            lo, hi = (o["at"], o["at"]) if o["kind"] == "event" else (o["from"], o["to"])
            check(df["valid_from"].iloc[i].value == lo and df["valid_to"].iloc[i].value == hi,
                  f"frame row {i}: valid time {df['valid_from'].iloc[i]} .. differs")
            for k, v in o["values"].items():
                check(df[k].iloc[i] == v, f"frame row {i}: {k}={df[k].iloc[i]!r}, CLI {v!r}")
        # The statements' selections reach the build (src/query/selections.c): a time
        # selection passes over the events of S outside it; the answer is the whole
        # build's (VIGIL_SKIP=off) and the CLI's.
        times = sorted(o["at"] for o in cli("query", trace, "-e",
                                            "range of S is SendMessage retrieve (S.msg)",
                                            "--format", "json"))
        lo, hi = times[len(times) // 3], times[2 * len(times) // 3]
        bq = ("range of S is SendMessage retrieve (S.process, S.msg) "
              f'when S overlap ("{fmt_ns(lo)}" extend "{fmt_ns(hi)}")')
        # (without the relations cache: a cold query through it builds whole relations to
        # cache them, as `vigil query` does; docs/query.md)
        stats, whole_stats = {}, {}
        os.environ["VIGIL_CACHE"] = "off"
        try:
            bounded = vigil.query(trace, bq, stats=stats)
            os.environ["VIGIL_SKIP"] = "off"
            whole = vigil.query(trace, bq, stats=whole_stats)
        finally:
            del os.environ["VIGIL_SKIP"], os.environ["VIGIL_CACHE"]
        check(stats.get("skip", {}).get("bounded") == 1 and stats["skip"]["events"] > 0,
              f"vigil.query did not build bounded: {stats}")
        check(whole_stats.get("skip", {}).get("bounded") == 0 and
              whole_stats["skip"]["events"] == 0, f"VIGIL_SKIP=off bounded: {whole_stats}")
        check(len(bounded) > 3 and [r.values for r in bounded] == [r.values for r in whole]
              and [r.values for r in bounded] ==
              [o["values"] for o in cli("query", trace, "-e", bq, "--format", "json")],
              f"bounded vigil.query: {len(bounded)} tuples, whole {len(whole)}")
        ev = vigil.query(trace, "range of S is SendMessage retrieve (S.process)", frame=True)
        check(list(ev.columns) == ["relation", "valid_at", "process"], f"{list(ev.columns)}")
        check(list(vigil.events(trace)) == cli("dump", "--json", trace),
              "vigil.events differs from vigil dump --json")
        # Errors: the CLI's diagnostics, as vigil.Error.
        for bad, want_msg in (("range of X is Nope retrieve (X.a)", r"no relation 'Nope'"),
                              ("retrieve (", r"expected a target")):
            try:
                vigil.query(trace, bad)
                raise AssertionError(f"{bad!r} answered")
            except vigil.Error as e:
                check(re.search(want_msg, str(e)), f"{bad!r}: {e}")
        for call in (lambda: vigil.relations(work + "/none"),
                     lambda: list(vigil.events(work + "/none"))):
            try:
                call()
                raise AssertionError("a missing trace was read")
            except vigil.Error as e:
                check("none" in str(e), f"missing trace: {e}")
        # docs/python.md's example, as written, in a folder with that recording.
        with open(os.path.join(SRC, "docs/python.md")) as f:
            example = re.search(r"^```python\n(.*?)^```", f.read(), re.S | re.M).group(1)
        p = subprocess.run(["/usr/bin/python3", "-c", example], cwd=work, capture_output=True,
                           text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=os.path.join(SRC, "python")))
        check(p.returncode == 0, f"docs/python.md's example failed: {p.stderr[-800:]}")
        check("ResumedbyP1" in p.stdout, f"docs/python.md's example printed: {p.stdout[-400:]}")
        print(f"ok: relations, {len(want)} tuples (rows and DataFrame) and every event as the CLI")
        ok = True
    except AssertionError as e:
        print(f"FAIL: {e}")
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")
    sys.exit(0 if ok else 1)


main()
