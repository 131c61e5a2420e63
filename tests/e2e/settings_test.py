#!/usr/bin/env python3
"""Runtime settings of a real subject (the mailbox program, linked with libvigil): a bad
value is one line on stderr and a documented fallback, and the subject runs.
- VIGIL_OUT under a folder that does not exist: one line, nothing created, not recording
  (it used to create the whole path).
- VIGIL_SENSORS with a glob fnmatch would read literally ('['): that pattern is named and
  left out, the others apply (it used to drop the sensors silently).
- VIGIL_MAX_SIZE=1: one line, recorded without a cap (it was accepted: nothing kept).
Meaningful under the sanitizers."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ.get("VIGIL_BIN", "build/bin")
MAILBOX = os.path.join(BIN, "mailbox")
VIGIL = os.path.join(BIN, "vigil")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def mailbox(env):
    return subprocess.run([MAILBOX, "--seed", "7"], capture_output=True, text=True,
                          env=dict(os.environ, **env), timeout=120)


def warnings(p):
    return [l for l in p.stderr.splitlines() if l.startswith("vigil[")]


def names(trace):
    p = subprocess.run([VIGIL, "dump", "--json", trace], capture_output=True, text=True,
                       timeout=120)
    if p.returncode:
        fail(f"vigil dump {trace}: {p.stderr[-300:]}")
    return [json.loads(l)["name"] for l in p.stdout.splitlines()]


def main():
    work = tempfile.mkdtemp(prefix="vigil-settings-")
    ok = False
    try:
        missing = os.path.join(work, "missing", "trace")
        p = mailbox({"VIGIL_OUT": missing})
        w = warnings(p)
        if p.returncode or len(w) != 1 or "parent folder does not exist" not in w[0] or \
                missing not in w[0]:
            fail(f"VIGIL_OUT={missing}: exit {p.returncode}, warnings {w}")
        if os.path.exists(os.path.dirname(missing)):
            fail("VIGIL_OUT under a missing folder created it")

        trace = os.path.join(work, "globs")
        os.mkdir(trace)
        p = mailbox({"VIGIL_OUT": trace, "VIGIL_SENSORS": "mailbox.Send*,["})
        w = warnings(p)
        if p.returncode or len(w) != 1 or "VIGIL_SENSORS: pattern '['" not in w[0]:
            fail(f"VIGIL_SENSORS with '[': exit {p.returncode}, warnings {w}")
        got = {n for n in names(trace) if not n.startswith("vg.")}
        if got != {"mailbox.SendMessage"}:
            fail(f"VIGIL_SENSORS=mailbox.Send*,[ recorded {sorted(got)}")

        trace = os.path.join(work, "cap")
        os.mkdir(trace)
        p = mailbox({"VIGIL_OUT": trace, "VIGIL_MAX_SIZE": "1"})
        w = warnings(p)
        if p.returncode or len(w) != 1 or "VIGIL_MAX_SIZE=1" not in w[0]:
            fail(f"VIGIL_MAX_SIZE=1: exit {p.returncode}, warnings {w}")
        if not any(n == "mailbox.SendMessage" for n in names(trace)):
            fail("VIGIL_MAX_SIZE=1 recorded no SendMessage")
        ok = True
        print("ok: a missing parent, a bad glob and a tiny cap each one line, the subject ran")
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")


main()
