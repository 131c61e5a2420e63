#!/usr/bin/env python3
"""What a subject and the commands print names only what stays (issue 21, item 8: under
`vigil watch` and `vigil record --to` the mailbox example printed the path of a trace
directory removed right after). Every absolute path in their output must exist once the
command is done:
- `vigil watch` (its trace is a working copy, removed once answered): the subject says
  it recorded, not where; with `--keep DIR` it names DIR's image, which stays;
- `vigil record --to` a vigild on a Unix socket of the test's own: the spool is shipped
  and removed, the subject names no spool."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

BIN = os.path.abspath(os.environ.get("VIGIL_BIN", "build/bin"))
SRC = os.path.abspath(os.environ.get("VIGIL_SRC", "."))
VIGIL, VIGILD, MAILBOX = (os.path.join(BIN, n) for n in ("vigil", "vigild", "mailbox"))
QUERY = 'range of S is SendMessage retrieve (S.mailbox) where S.process = "P1"'


def fail(msg):
    raise SystemExit(f"FAIL: {msg}")


def check_paths(what, p, want):
    text = p.stdout + p.stderr
    if p.returncode:
        fail(f"{what}: exit {p.returncode}: {text[-500:]}")
    if want not in p.stdout:
        fail(f"{what}: no {want!r} in {p.stdout!r}")
    gone = [x for x in re.findall(r"(?:^|[\s(])(/[^\s:()',]+)", text, re.M) if not os.path.exists(x)]
    if gone:
        fail(f"{what} printed paths that are gone: {gone}\n{text}")


def main():
    work = tempfile.mkdtemp(prefix="vigil-paths-")
    vigild = None
    ok = False
    try:
        vgl = os.path.join(SRC, "examples/mailbox/mailbox.vgl")
        p = subprocess.run([VIGIL, "watch", "--sensors", vgl, "-e", QUERY, "--", MAILBOX,
                            "--seed", "2"], capture_output=True, text=True, timeout=120)
        check_paths("vigil watch", p, "mailbox: recorded (0 events discarded)")
        keep = os.path.join(work, "kept")
        p = subprocess.run([VIGIL, "watch", "--keep", keep, "--sensors", vgl, "-e", QUERY,
                            "--", MAILBOX, "--seed", "2"], capture_output=True, text=True,
                           timeout=120)
        check_paths("vigil watch --keep", p, f"mailbox: recorded into {keep}/mailbox-")

        sock = os.path.join(work, "vigild.sock")
        vigild = subprocess.Popen([VIGILD, "-o", os.path.join(work, "collected"), "--listen",
                                   "127.0.0.1:0", "--socket", sock],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        end = time.monotonic() + 30
        while not os.path.exists(sock):
            if vigild.poll() is not None or time.monotonic() > end:
                fail(f"vigild did not listen on {sock}: {vigild.stderr.read()!r}")
            time.sleep(0.02)
        p = subprocess.run([VIGIL, "record", "--to", "unix:" + sock, "--", MAILBOX, "--seed",
                            "2"], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, VIGIL_TO_LINGER="30000"))
        check_paths("vigil record --to", p, "mailbox: recorded (0 events discarded)")
        ok = True
        print("ok: under watch, watch --keep and record --to, every printed path exists")
    finally:
        if vigild and vigild.poll() is None:
            vigild.terminate()
            vigild.wait(timeout=60)
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}", file=sys.stderr)


main()
