#!/usr/bin/env python3
"""A thread goes on across its process's exec (`sh -c 'exec /bin/sleep 0.01'`, Debian's
dash and sleep, recorded unmodified): it begins in the first image and ends in the second.
The OSThread relation holds one lifetime, closed at the thread's vg.thread.end: one tuple
per name (sh, then sleep: a name is valid over time), each ending where the next begins,
with no open tuple and no unmatched end (before: open at the end of the trace, one
unmatched end, named sh); a model of the recorded events chains the thread's
events across the exec (one transition fewer than events). Runs a shell script that
execs three times too."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ.get("VIGIL_BIN", "build/bin")
VIGIL = os.path.join(BIN, "vigil")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(*cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode:
        fail(f"{cmd} exited {p.returncode}: {p.stderr[-400:]}")
    return p.stdout


def check(work, name, command, names):
    trace = os.path.join(work, name)
    run(VIGIL, "record", "-o", trace, "--", "sh", "-c", command)
    events = [json.loads(l) for l in run(VIGIL, "dump", "--json", trace).splitlines()]
    images = {(e["pid"], e["proc"]) for e in events}
    ends = [e["ts"] for e in events if e["name"] == "vg.thread.end"]
    if len(ends) != 1:
        fail(f"{name}: {len(ends)} thread ends in {[e['name'] for e in events]}")
    rel = [json.loads(l) for l in run(VIGIL, "relations", "--json", trace).splitlines()]
    th = [r for r in rel if r["name"] == "OSThread"][0]
    if (th["tuples"], th["open"], th["unmatched_ends"]) != (len(names), 0, 0):
        fail(f"{name}: Thread relation {th}")
    q = os.path.join(work, f"{name}.tq")
    with open(q, "w") as f:
        f.write("range of T is OSThread\nretrieve (T.name, T.id)\n")
    rows = [json.loads(l) for l in run(VIGIL, "query", trace, "-f", q, "--format",
                                           "json").splitlines()]
    rows.sort(key=lambda r: r["from"])
    if ([r["values"]["name"] for r in rows] != names or rows[-1]["to"] != ends[0] or
            len({r["values"]["id"] for r in rows}) != 1 or
            any(a["to"] != b["from"] for a, b in zip(rows, rows[1:]))):
        fail(f"{name}: Thread tuples {rows}, thread end at {ends[0]}")
    model = os.path.join(work, f"{name}.vgm")
    run(VIGIL, "model", "--from-trace", trace, "-o", model)
    with open(model) as f:
        transitions = sum(int(l.split()[3]) for l in f if l.startswith("transition "))
    if transitions != len(events) - 1:
        fail(f"{name}: {transitions} transitions over {len(events)} events of one thread "
             f"(images {sorted(images)})")


def main():
    work = tempfile.mkdtemp(prefix="vigil-execthr-")
    ok = False
    try:
        check(work, "one", "exec /bin/sleep 0.01", ["sh", "sleep"])
        check(work, "three", "exec sh -c 'exec sh -c \"exec /bin/true\"'", ["sh", "true"])
        ok = True
        print("ok: threads continue across exec in relations, queries and models")
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")


main()
