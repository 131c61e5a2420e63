#!/usr/bin/env python3
"""Queries at the parser's bounds (TQUEL_MAX_HEIGHT, src/tquel/tquel.h): chains of
'or', 'and', '+' and temporal 'or' far longer than the bound are one error line with
file:line:col and a caret at the term that went over, exit 2, never a crash; chains just
under it are answered, and answered right (the same tuples as the one-term query).
Meaningful under the sanitizers: the mailbox program records with VIGIL_OUT."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ.get("VIGIL_BIN", "build/bin")
VIGIL = os.path.join(BIN, "vigil")
LIMIT = 10000


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def query(trace, path):
    return subprocess.run([VIGIL, "query", trace, "-f", path, "--format", "json"],
                          capture_output=True, text=True, timeout=300)


def main():
    work = tempfile.mkdtemp(prefix="vigil-qlimits-")
    ok = False
    try:
        trace = os.path.join(work, "t")
        os.mkdir(trace)
        p = subprocess.run([os.path.join(BIN, "mailbox"), "--seed", "7"], capture_output=True,
                           env=dict(os.environ, VIGIL_OUT=trace), timeout=120)
        if p.returncode:
            fail(f"mailbox exited {p.returncode}: {p.stderr[-500:]}")
        head = "range of W is Waiting\nretrieve R (P = W.Process)\n"
        over = {
            "or": "where " + " or ".join(f'W.Process = "P{i}"' for i in range(3 * LIMIT)),
            "and": "where " + " and ".join('W.Process != "nobody"' for _ in range(3 * LIMIT)),
            "plus": "where W.Mailbox = W.Mailbox + " + " + ".join("0" for _ in range(3 * LIMIT)),
            "when": "when " + " or ".join("W overlap W" for _ in range(3 * LIMIT)),
        }
        for name, clause in over.items():
            path = os.path.join(work, f"{name}.tq")
            with open(path, "w") as f:
                f.write(head + clause + "\n")
            r = query(trace, path)
            if r.returncode != 2:
                fail(f"{name}: {3 * LIMIT} terms exited {r.returncode} (expected 2): "
                     f"{r.stderr[-300:]}")
            lines = r.stderr.splitlines()
            if not lines or not lines[0].startswith(f"{path}:3:") or \
                    f"more than {LIMIT} operators deep" not in lines[0]:
                fail(f"{name}: expected '{path}:3:COL: error: ... more than {LIMIT} "
                     f"operators deep', got {r.stderr[:300]!r}")
            if len(lines) != 3 or lines[2].strip() != "^":
                fail(f"{name}: expected the line and a caret after the error, got {lines[1:]}")
        # Just under the bound: the same answer as the one-term query.
        base = os.path.join(work, "base.tq")
        with open(base, "w") as f:
            f.write(head + 'where W.Process != "nobody"\nwhen W overlap W\n')
        want = query(trace, base)
        if want.returncode or not want.stdout:
            fail(f"base query: {want.returncode} {want.stderr[-300:]}")
        n = LIMIT // 2 - 2  # each link adds a node, each comparison two more
        under = os.path.join(work, "under.tq")
        with open(under, "w") as f:
            f.write(head + "where " + " and ".join('W.Process != "nobody"' for _ in range(n)) +
                    "\nwhen " + " or ".join("W overlap W" for _ in range(n)) + "\n")
        got = query(trace, under)
        if got.returncode:
            fail(f"{n}-term chains: exit {got.returncode}: {got.stderr[-300:]}")
        norm = lambda out: sorted(json.dumps(json.loads(l), sort_keys=True)
                                  for l in out.splitlines())
        if norm(got.stdout) != norm(want.stdout):
            fail(f"{n}-term chains answer {len(got.stdout.splitlines())} tuples, the one-term "
                 f"query {len(want.stdout.splitlines())}")
        ok = True
        print(f"ok: chains of {3 * LIMIT} refused in one line, of {n} answered "
              f"({len(want.stdout.splitlines())} tuples)")
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")


main()
