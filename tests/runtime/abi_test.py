#!/usr/bin/env python3
"""A sensor compiled against an older vigil.h (ABI 0: 6-byte event headers) must fail
loudly against today's libvigil, never write events the trace's declaration misreads;
the same sensor compiled against today's vigil.h records every event.

The old program is refused by the dynamic linker before it runs (it references the
writer state by its ABI 0 name, vg__tls): one line naming the symbol, on its own and
under `vigil record` (a preload of the same library), and nothing of it in the trace.

usage: abi_test.py BIN_DIR OLD_SUBJECT NEW_SUBJECT"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

EVENTS = 25


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def ticks(vigil, trace, must_read=True):
    """The abi.tick events vigil dump reads from the trace, as (i, square)."""
    out = subprocess.run([vigil, "dump", "--json", trace], capture_output=True, text=True,
                         timeout=120)
    if out.returncode != 0 and not must_read:
        return []
    if out.returncode != 0:
        fail("vigil dump %s: exit %d: %s" % (trace, out.returncode, out.stderr[-300:]))
    got = []
    for line in out.stdout.splitlines():
        e = json.loads(line)
        if e.get("name") == "abi.tick":
            got.append((e["fields"]["i"], e["fields"]["square"]))
    return got


def main():
    bindir, old, new = sys.argv[1:4]
    vigil = os.path.join(bindir, "vigil")
    work = tempfile.mkdtemp(prefix="vigil-abi-")
    try:
        # Alone, recording through VIGIL_OUT: the loader refuses it before main.
        trace = os.path.join(work, "old-alone")
        r = subprocess.run([old, str(EVENTS)], env=dict(os.environ, VIGIL_OUT=trace),
                           capture_output=True, text=True, timeout=60)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        if r.returncode == 0 or "abi_subject:" in r.stdout:
            fail("the ABI 0 sensor ran (exit %d): %r" % (r.returncode, r.stdout))
        if len(lines) != 1 or "undefined symbol: vg__tls" not in lines[0]:
            fail("expected one loader line naming vg__tls, got: %r" % r.stderr)
        print("alone: exit %d, %s" % (r.returncode, lines[0]))
        if os.path.exists(trace):
            fail("the refused program left a trace directory %s" % trace)

        # Under vigil record (libvigil preloaded): the same refusal, said by the loader.
        trace = os.path.join(work, "old-record")
        r = subprocess.run([vigil, "record", "-q", "-o", trace, "--", old, str(EVENTS)],
                           capture_output=True, text=True, timeout=120)
        if r.returncode == 0 or "undefined symbol: vg__tls" not in r.stderr:
            fail("vigil record of the ABI 0 sensor: exit %d, stderr %r" %
                 (r.returncode, r.stderr[-400:]))
        if os.path.isdir(trace) and ticks(vigil, trace, must_read=False):
            fail("vigil record of the ABI 0 sensor recorded abi.tick events")
        print("record: exit %d" % r.returncode)

        # Today's header: every event, read back exactly.
        trace = os.path.join(work, "new")
        r = subprocess.run([vigil, "record", "-q", "-o", trace, "--", new, str(EVENTS)],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail("vigil record of today's sensor: exit %d: %s" % (r.returncode, r.stderr))
        got = ticks(vigil, trace)
        want = [(i, i * i) for i in range(EVENTS)]
        if got != want:
            fail("today's sensor: %d events read back, expected %d: %r" %
                 (len(got), EVENTS, got[:5]))
        print("today's header: %d events read back" % len(got))
        print("ok")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
