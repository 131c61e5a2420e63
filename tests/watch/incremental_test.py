#!/usr/bin/env python3
"""The update network over a long run: a recording of the mailbox example with 20,000
messages (every sensor on) replayed by `vigil watch --replay --update-events 997`, so
that each update takes the next 997 events of the merged reading. For each query shape
the network takes (selection and projection; joins whose when clause is an overlap, a
precede, or both, over two and three variables), the printed lines must equal `vigil
query`'s over the recording as a multiset (every answer tuple printed exactly once), the
network must have taken final tuples in more than one update, and where the when clause
lets it drop state (overlap) the state it kept at its peak must stay a small part of
what it took (20,000 messages, a peak under 1/20 of the tuples): state that does not
grow with the run. Shapes it cannot take (an aggregate) answer by re-evaluation, said
once on stderr, and equal `vigil query`'s too.

usage: incremental_test.py BIN-DIR MAILBOX-VGL"""
import os
import shutil
import subprocess
import sys
import tempfile

from watch_common import stats_of

BIN, VGL = sys.argv[1], sys.argv[2]
VIGIL = os.path.join(BIN, "vigil")
failures = []

# name, query, bounded state expected, by the network
SHAPES = [
    ("selection and projection", """range of S is SendMessage
retrieve (S.process, S.msg) where S.mailbox = "M2" """, True, True),
    ("overlap join", """range of S is SendMessage
range of W is Waiting
retrieve (W.process, S.msg) where S.mailbox = W.mailbox when S overlap W""", True, True),
    ("default valid time (an implicit overlap)", """range of W is Waiting
range of R is RunningOn
retrieve (W.process, R.processor) where W.process = R.process""", True, True),
    ("precede join (ResumedbyP1)", """range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P1"
when S precede end of W""", False, True),
    ("three variables", """range of S is SendMessage
range of W is Waiting
range of R is RunningOn
retrieve (W.process, R.processor, S.msg) valid at end of W
where S.mailbox = W.mailbox and R.process = W.process
when S overlap W and end of W precede R""", False, True),
    ("aggregate: by re-evaluation", """range of S is SendMessage
retrieve (S.process, n = count(S.msg by S.process for ever))
where S.process = "P1" """, False, False),
]


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(*args):
    return subprocess.run([VIGIL, *args], capture_output=True, text=True, timeout=600)


def main():
    work = tempfile.mkdtemp(prefix="vigil-incremental-")
    try:
        trace = os.path.join(work, "run")
        p = subprocess.run([VIGIL, "record", "-q", "-o", trace, "--",
                            os.path.join(BIN, "mailbox"), "--seed", "5", "--processes", "8",
                            "--processors", "3", "--messages", "20000"],
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            fail(f"recording: {p.stderr}")
            return
        for name, q, bounded, network in SHAPES:
            full = run("query", trace, "--format", "json", "-e", q)
            w = run("watch", "--replay", trace, "--sensors", VGL, "--format", "json",
                    "--stats", "--update-events", "997", "-e", q)
            if full.returncode or w.returncode:
                fail(f"{name}: query exited {full.returncode}, watch {w.returncode}: "
                     f"{full.stderr}{w.stderr}")
                continue
            want, got = sorted(full.stdout.splitlines()), sorted(w.stdout.splitlines())
            if got != want:
                fail(f"{name}: {len(got)} lines printed, vigil query has {len(want)} "
                     f"({len(set(got) - set(want))} not in it, {len(set(want) - set(got))} "
                     f"missing)")
            if not want:
                fail(f"{name}: an empty answer proves nothing")
            st = stats_of(w.stderr)
            said = w.stderr.count("answering by re-evaluation at each update")
            if st["evaluation"] != ("incremental" if network else "re-evaluation"):
                fail(f"{name}: evaluated by {st['evaluation']}")
            if said != (0 if network else 1):
                fail(f"{name}: the fallback is said {said} times")
            if network:
                busy = sum(1 for ns in st["update_ns"] if ns > 0)
                if len(st["update_ns"]) < 50 or busy < 50:
                    fail(f"{name}: {len(st['update_ns'])} updates; expected many")
                s = st["state"]
                if bounded and (s["unbounded"] or s["peak"] * 20 > s["deltas"]):
                    fail(f"{name}: state kept at its peak {s['peak']} of {s['deltas']} "
                         f"tuples taken (unbounded: {s['unbounded']})")
                if not bounded and name != "selection and projection" and not s["unbounded"]:
                    fail(f"{name}: a precede keeps its earlier side: expected unbounded")
            print(f"ok  {name}: {len(want)} tuples, {st['evaluation']}"
                  + (f", state peak {st['state']['peak']} of {st['state']['deltas']}"
                     if network else ""))
    finally:
        if failures:
            print(f"incremental_test: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


main()
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("every answer printed once, equal to vigil query's")
