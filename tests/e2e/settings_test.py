#!/usr/bin/env python3
"""Runtime settings of a real subject (the mailbox program, linked with libvigil): a bad
value is one line on stderr and a documented fallback, and the subject runs.
- VIGIL_OUT under a folder that does not exist: one line, nothing created, not recording
  (it used to create the whole path).
- VIGIL_SENSORS with a glob fnmatch would read literally ('['): that pattern is named and
  left out, the others apply (it used to drop the sensors silently).
- VIGIL_MAX_SIZE=1: one line, recorded without a cap (it was accepted: nothing kept).
- VIGIL_TO=127.0.0.1:99999: one line naming the port, not recording, no spool made (it was
  accepted); `vigil record --to` the same: one line, exit 2, nothing run.
- VIGIL_TO_LINGER=3s: one line in milliseconds (it said bytes), the default 3000 ms used.
- VIGIL_SPOOL under a folder that does not exist: one line naming VIGIL_SPOOL, nothing
  created, not recording.
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

        p = mailbox({"VIGIL_TO": "127.0.0.1:99999"})
        w = warnings(p)
        if p.returncode or len(w) != 1 or "the port '99999' is not a number from 1 to 65535" \
                not in w[0] or "not recording" not in w[0]:
            fail(f"VIGIL_TO=127.0.0.1:99999: exit {p.returncode}, warnings {w}")
        pid = w[0][len("vigil["):w[0].index("]")]
        for d in ("/dev/shm", "/tmp"):
            if os.path.exists(f"{d}/vigil-spool-{os.getuid()}-{pid}"):
                fail(f"VIGIL_TO with a bad port made a spool in {d}")
        r = subprocess.run([VIGIL, "record", "--to", "127.0.0.1:99999", "--", MAILBOX],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 2 or r.stderr.count("\n") != 1 or "99999" not in r.stderr or \
                r.stdout:
            fail(f"vigil record --to 127.0.0.1:99999: exit {r.returncode}, {r.stderr!r}")

        spool = os.path.join(work, "spool")
        os.mkdir(spool)
        sock = "unix:" + os.path.join(work, "no-collector.sock")
        p = mailbox({"VIGIL_TO": sock, "VIGIL_SPOOL": spool, "VIGIL_TO_LINGER": "3s"})
        w = warnings(p)
        if p.returncode or not w or w[0].split(": ", 1)[1] != \
                "VIGIL_TO_LINGER=3s is not a number of milliseconds from 0 to 600000; using 3000":
            fail(f"VIGIL_TO_LINGER=3s: exit {p.returncode}, warnings {w}")
        if not any("(3000 ms)" in l for l in w) or any("bytes" in l for l in w):
            fail(f"VIGIL_TO_LINGER=3s: warnings {w}")

        missing = os.path.join(work, "missing", "spool")
        p = mailbox({"VIGIL_TO": sock, "VIGIL_SPOOL": missing})
        w = warnings(p)
        if p.returncode or len(w) != 1 or not w[0].split(": ", 1)[1].startswith(
                f"VIGIL_SPOOL: cannot create trace directory {missing}") or \
                "parent folder does not exist" not in w[0]:
            fail(f"VIGIL_SPOOL={missing}: exit {p.returncode}, warnings {w}")
        if os.path.exists(os.path.dirname(missing)):
            fail("VIGIL_SPOOL under a missing folder created it")
        ok = True
        print("ok: a missing parent, a bad glob, a tiny cap, a bad port, a linger in seconds "
              "and a missing spool parent each one line, the subject ran")
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")


main()
