#!/usr/bin/env python3
"""VIGIL_LAYOUT=shared (docs/trace-format.md "Shared layout"): many short processes
recorded into one trace directory with one metadata, while instrumented programs with
sensors of their own register types at the same time.

Four shell loops run at once, each starting /bin/true N times (Debian's, recorded
unmodified), beside three vg_subject processes that register `test.seq`/`test.all` and
record 2 x 300 sequenced events each. Checked, exactly:
* one directory `shared` with one `metadata`, no directory per image;
* every `true` (and every shell) is an image of its own with its 4 events
  (process.begin, thread.begin, thread.end, process.end; a shell forked to exec
  vg_subject: begin, thread.begin, exec), every test.seq event present
  once with seq 0..299 per thread;
* babeltrace2 reads as many events as `vigil dump`, with the same names; `vigil check`
  reads it; `vigil relations` finds the same tuples (counts per relation, open, unmatched
  ends) as in the same workload recorded with a directory per image;
* the bytes: at most one metadata plus, per image, a 124-byte packet header and 64
  bytes per event (a ceiling from the layout: these events are 16 to 60 bytes), and at
  most a fifth of the same workload recorded with a directory and metadata per image
  (VIGIL_LAYOUT=image).
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ.get("VIGIL_BIN", "build/bin")
VIGIL = os.path.join(BIN, "vigil")
SUBJECT = os.path.join(BIN, "vg_subject")
LOOPS, N, SUBJECTS, EVENTS, THREADS = 4, 60, 3, 300, 2


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(*cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    if p.returncode:
        fail(f"{cmd} exited {p.returncode}: {p.stderr[-600:]}")
    return p.stdout


def record(work, layout):
    trace = os.path.join(work, layout)
    loop = f"i=0; while [ $i -lt {N} ]; do /bin/true; i=$((i+1)); done"
    subj = f"{SUBJECT} --events {EVENTS} --threads {THREADS}"
    script = " ".join([f"({loop}) &" for _ in range(LOOPS)] +
                      [f"{subj} & " for _ in range(SUBJECTS)] + ["wait"])
    env = dict(os.environ, VIGIL_LAYOUT=layout)
    run(VIGIL, "record", "-o", trace, "--", "sh", "-c", script, env=env)
    return trace


def file_bytes(trace):
    total = 0
    for root, _, files in os.walk(trace):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def main():
    work = tempfile.mkdtemp(prefix="vigil-shared-")
    trace = record(work, "shared")
    entries = sorted(os.listdir(trace))
    dirs = [e for e in entries if os.path.isdir(os.path.join(trace, e))]
    if dirs != ["shared"]:
        fail(f"directories {dirs}, expected only 'shared'")
    metadata = [f for r, _, fs in os.walk(trace) for f in fs if f == "metadata"]
    if len(metadata) != 1:
        fail(f"{len(metadata)} metadata files")
    # the program's sensors and the busy built-ins keep the ids the compact event header
    # holds (0..30), as they would alone (the shared metadata gives a declaration the id
    # the registry prefers when it is still free)
    with open(os.path.join(trace, "shared", "metadata")) as f:
        ids = dict((m.group(1), int(m.group(2))) for m in re.finditer(
            r'event \{\n\tname = "([^"]+)";\n\tid = (\d+);', f.read()))
    mine = {n: i for n, i in ids.items() if n.startswith("test.") or n == "vg.entity.create"}
    if not mine or max(mine.values()) >= 31 or "vg.entity.create" not in mine:
        fail(f"ids {mine}: not all compact ones")

    events = [json.loads(l) for l in run(VIGIL, "dump", "--json", trace).splitlines()]
    by_image = collections.defaultdict(list)
    for e in events:
        by_image[(e["pid"], e["proc"])].append(e["name"])
    trues = [v for (pid, proc), v in by_image.items() if proc == "true"]
    shells = [v for (pid, proc), v in by_image.items() if proc == "sh"]
    four = ["vg.process.begin", "vg.thread.begin", "vg.thread.end", "vg.process.end"]
    if len(trues) != LOOPS * N or any(sorted(v) != sorted(four) for v in trues):
        fail(f"{len(trues)} images of true (expected {LOOPS * N}), event lists "
             f"{collections.Counter(tuple(v) for v in trues)}")
    # The shells: the script and its loops; the forks that exec vg_subject.
    forked = ["vg.process.begin", "vg.thread.begin", "vg.process.exec"]
    if sorted(sorted(v) for v in shells) != sorted(
            [sorted(four)] * (1 + LOOPS) + [sorted(forked)] * SUBJECTS):
        fail(f"shell images: {shells}")
    seqs = collections.defaultdict(list)
    for e in events:
        if e["name"] == "test.seq":
            seqs[(e["pid"], e["fields"]["thread"])].append(e["fields"]["seq"])
    if (len(seqs) != SUBJECTS * THREADS or
            any(sorted(v) != list(range(EVENTS)) for v in seqs.values())):
        fail(f"test.seq per thread: { {k: len(v) for k, v in seqs.items()} }")

    bt = subprocess.run(["babeltrace2", trace], capture_output=True, text=True, timeout=300)
    if bt.returncode:
        fail(f"babeltrace2 exited {bt.returncode}: {bt.stderr[-600:]}")
    # "[time] (+delta) host name: {...}"
    bt_names = collections.Counter(re.match(r"\[[^]]*\] \([^)]*\) \S+ ([^:]+):", l).group(1)
                                   for l in bt.stdout.splitlines())
    if bt_names != collections.Counter(e["name"] for e in events):
        fail(f"babeltrace2 read {sum(bt_names.values())} events {bt_names}, vigil dump "
             f"{len(events)} {collections.Counter(e['name'] for e in events)}")

    run(VIGIL, "check", trace)

    size = file_bytes(trace)
    md = os.path.getsize(os.path.join(trace, "shared", "metadata"))
    ceiling = md + len(by_image) * 124 + 64 * len(events)
    if size > ceiling:
        fail(f"{size} bytes for {len(events)} events of {len(by_image)} images: more than "
             f"the layout's ceiling of {ceiling}")
    other = record(work, "image")
    per_image = file_bytes(other)
    counts = [{r["name"]: (r["tuples"], r["open"], r.get("unmatched_ends"))
               for r in map(json.loads, run(VIGIL, "relations", "--json", t).splitlines())
               if r["name"] != "Clock"}  # its ticks follow the run's duration
              for t in (trace, other)]
    if counts[0] != counts[1]:
        fail(f"relations differ between the layouts: shared {counts[0]}, per image "
             f"{counts[1]}")
    if size * 5 > per_image:
        fail(f"shared layout {size} bytes, one directory per image {per_image}: "
             f"not a fifth")
    print(f"ok: {len(events)} events of {len(by_image)} images in {size} bytes "
          f"({size / len(events):.1f} per event; ceiling {ceiling}; one directory per "
          f"image: {per_image})")
    shutil.rmtree(work)


main()
