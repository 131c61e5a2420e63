#!/usr/bin/env python3
"""vigil watch live, answered by the update network over the trace as it is written
(trace/follow.h): for each query shape the network takes, `vigil watch -- CMD` runs a
subject of two mailbox runs one after the other (so that process images appear mid-run,
each with its streams and its metadata growing while it is read), keeps the trace it
recorded (--keep), and must print exactly `vigil query`'s answer over that same kept
trace as a multiset (each answer once), having read the trace over many polls and
answered incrementally; an aggregate is answered by re-evaluation (said once) and equals
it too. The selection and the overlap join again with VIGIL_LAYOUT=shared (one folder for
every process, its writers' images made as their first packets appear), the runtime's
pool on: the second mailbox run takes over the pool files the first one's threads let go
mid-run, and the reader must cut each file where its writer changes as `vigil dump` cuts
it (the same images and streams; no damage). `vigil watch --pid` attached to a running mailbox (recorded with --listen: only
vg.* until the attach) answers incrementally as well, equal to `vigil query`'s over the
process's image.

usage: follow_test.py BIN-DIR MAILBOX-VGL"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from watch_common import stats_of

BIN, VGL = sys.argv[1], sys.argv[2]
VIGIL = os.path.join(BIN, "vigil")
MAILBOX = os.path.join(BIN, "mailbox")
failures = []

SHAPES = [
    ("selection and projection", """range of S is SendMessage
retrieve (S.process, S.msg) where S.mailbox = "M2" """, True),
    ("overlap join", """range of S is SendMessage
range of W is Waiting
retrieve (W.process, S.msg) where S.mailbox = W.mailbox when S overlap W""", True),
    ("default valid time", """range of W is Waiting
range of R is RunningOn
retrieve (W.process, R.processor) where W.process = R.process""", True),
    ("precede join (ResumedbyP1)", """range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P1"
when S precede end of W""", True),
    # The optimized plan records only the end of W here (a trigger): `vigil query`
    # reads a lone end as no tuple, so this one runs the plan as translated.
    ("aggregate: by re-evaluation", """range of S is SendMessage
retrieve (S.process, n = count(S.msg by S.process for ever))
where S.process = "P1" """, False),
]

RUN = ["--processes", "8", "--processors", "3", "--messages", "1500", "--pace", "300"]


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def query_lines(trace, q):
    p = subprocess.run([VIGIL, "query", trace, "--format", "json", "-e", q],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail(f"vigil query {trace}: exit {p.returncode}: {p.stderr}")
    return sorted(l for l in p.stdout.splitlines() if l.startswith("{"))


def live(work):
    script = (f'"{MAILBOX}" --seed 5 {" ".join(RUN)} && '
              f'"{MAILBOX}" --seed 6 {" ".join(RUN)}')
    # every shape with a folder per process image; the selection and the overlap join
    # again in the shared layout (one folder for every process, its pool files cut by
    # the packets' writers)
    cases = [(name, q, network, "image") for name, q, network in SHAPES]
    for name, q, network in SHAPES[:2]:
        cases.append((name + ", shared layout", q, network, "shared"))
    for i, (name, q, network, layout) in enumerate(cases):
        kept = os.path.join(work, f"kept{i}")
        plan = ["--unoptimized"] if "precede" in q else []
        p = subprocess.run([VIGIL, "watch", "--sensors", VGL, "--format", "json", "--stats", *plan,
                            "--every", "30ms", "--lateness", "1s", "--keep", kept, "-e", q,
                            "--", "sh", "-c", script],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "VIGIL_LAYOUT": layout})
        st = stats_of(p.stderr)
        if p.returncode != 0 or not st:
            fail(f"{name}: exit {p.returncode}: {p.stderr}")
            continue
        got = sorted(l for l in p.stdout.splitlines() if l.startswith("{"))
        want = query_lines(kept, q)
        if not want:
            fail(f"{name}: an empty answer proves nothing")
        if got != want:
            fail(f"{name}: {len(got)} lines printed live, vigil query has {len(want)} over "
                 f"the same trace ({len(set(got) - set(want))} not in it, "
                 f"{len(set(want) - set(got))} missing)")
        said = p.stderr.count("answering by re-evaluation at each update")
        if st["evaluation"] != ("incremental" if network else "re-evaluation") or \
                said != (0 if network else 1):
            fail(f"{name}: evaluated by {st['evaluation']}, the fallback said {said} times")
        if network:
            fo = st["follow"]
            updates = sum(1 for ns in st["update_ns"] if ns > 0)
            # two mailbox runs and the shell: images found while the run went on
            if fo["images"] < 3 or fo["polls"] < 10 or updates < 10:
                fail(f"{name}: read as {fo}, {updates} updates: expected several images "
                     "found over many polls")
            print(f"ok  {name}: {len(want)} tuples live = vigil query over the kept trace "
                  f"({fo['polls']} polls, {fo['images']} images, {fo['late']} late)")
        else:
            print(f"ok  {name}: {len(want)} tuples, by re-evaluation")
        if layout == "shared" and os.listdir(kept) != ["shared"]:
            fail(f"{name}: the kept trace holds {os.listdir(kept)}, not one shared folder")
        elif layout == "shared":
            same_cut(name, kept, st, p.stderr)
        shutil.rmtree(kept, ignore_errors=True)


def same_cut(name, kept, st, stderr):
    """The follower made the images and streams `vigil dump` makes of the kept trace:
    each pool file cut where its writer changed (a file read as its first writer's
    alone has fewer streams, and damage: another thread's packets in its stream)."""
    p = subprocess.run([VIGIL, "dump", "--stats", "--json", kept], capture_output=True,
                       text=True, timeout=300)
    rows = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    images = [r for r in rows if "image" in r]
    streams = [r for r in rows if "stream" in r]
    fo = st["follow"]
    if (fo["images"], fo["streams"]) != (len(images), len(streams)):
        fail(f"{name}: the follower made {fo['images']} images and {fo['streams']} streams, "
             f"vigil dump {len(images)} and {len(streams)}")
    # which image each stream line follows: a pool file in two images changed hands
    owners, image = {}, None
    for r in rows:
        if "image" in r:
            image = r["image"]
        elif "stream" in r:
            owners.setdefault(r["stream"], set()).add(image)
    shared = [f for f, o in owners.items() if len(o) > 1]
    if not shared:
        fail(f"{name}: no pool file changed hands ({owners}): the case proves nothing")
    damage = [l for l in stderr.splitlines() if "/shared/" in l and not l.startswith("{")]
    if damage:  # a damaged place names its stream file
        fail(f"{name}: damage reported: {damage[:3]}")


def attached(work):
    """--pid: the network over the attached process's growing image."""
    trace = os.path.join(work, "srv")
    q = SHAPES[0][1]
    # --per-image: the subject's pid is read from its image directory's name
    rec = subprocess.Popen([VIGIL, "record", "--listen", "--per-image", "-q", "-o", trace,
                            "--", MAILBOX,
                            "--seed", "7", "--processes", "8", "--processors", "3",
                            "--messages", "3000", "--pace", "500"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        # the subject listens once its image exists
        deadline = time.time() + 60
        pid = None
        while pid is None and time.time() < deadline:
            for d in os.listdir(trace) if os.path.isdir(trace) else []:
                if d.startswith("mailbox-") and os.path.exists(os.path.join(trace, d, "metadata")):
                    pid = int(d.split("-")[1])
            time.sleep(0.05)
        if pid is None:
            fail("attach: the subject made no image within 60 s")
            return
        w = None
        for _ in range(100):  # its control listener may not be up yet
            w = subprocess.run([VIGIL, "watch", "--sensors", VGL, "--format", "json",
                                "--stats", "--lateness", "1s", "--pid", str(pid), "-e", q],
                               capture_output=True, text=True, timeout=300)
            if w.returncode != 2:  # 2: not listening yet (or a real failure, said below)
                break
            time.sleep(0.1)
        rec.wait(timeout=300)
        st = stats_of(w.stderr)
        if w.returncode != 0 or not st:
            fail(f"attach: exit {w.returncode}: {w.stderr}")
            return
        if st["evaluation"] != "incremental":
            fail(f"attach: evaluated by {st['evaluation']}")
        got = sorted(l for l in w.stdout.splitlines() if l.startswith("{"))
        image = [os.path.join(trace, d) for d in os.listdir(trace) if d.startswith("mailbox-")]
        # only vg.* was recorded before the attach: the kept image holds what the plan
        # recorded, and the stored query over it must answer what was printed live
        want = query_lines(image[0], q)
        if not got or got != want:
            fail(f"attach: {len(got)} lines live, vigil query over the image has {len(want)}")
        else:
            print(f"ok  attach: {len(got)} tuples live = vigil query over the image "
                  f"({st['follow']['polls']} polls)")
    finally:
        if rec.poll() is None:
            os.killpg(rec.pid, signal.SIGKILL)
            rec.wait()


def main():
    work = tempfile.mkdtemp(prefix="vigil-follow-test-")
    try:
        live(work)
        attached(work)
    finally:
        if failures:
            print(f"follow_test: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("live answers by the update network equal vigil query's")


main()
