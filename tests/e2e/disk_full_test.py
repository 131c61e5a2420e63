#!/usr/bin/env python3
"""A disk full before threads' first packets (a 100 KiB tmpfs the test mounts in its own
folder, root only): the threads that get no stream lose their events, and the trace says
how many: kept + discarded equals what the same run records on a free disk, exactly (the
mailbox run is logically deterministic), and `vigil dump` shows the loss (before: 10,632
lost and "0 discarded", exit 0)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ.get("VIGIL_BIN", "build/bin")
VIGIL = os.path.join(BIN, "vigil")
RUN = [os.path.join(BIN, "mailbox"), "--processors", "4", "--messages", "2000"]


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def record(trace):
    p = subprocess.run([VIGIL, "record", "-o", trace, "--", *RUN], capture_output=True,
                       text=True, timeout=120)
    if p.returncode:
        fail(f"vigil record exited {p.returncode}: {p.stderr[-500:]}")
    kept = re.search(r"vigil record: (\d+) events? from", p.stderr)
    lost = re.search(r"vigil record: (\d+) events were discarded", p.stderr)
    if not kept:
        fail(f"no summary: {p.stderr[-500:]}")
    return int(kept.group(1)), int(lost.group(1)) if lost else 0, p.stderr


def main():
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            fail("needs root to mount a small tmpfs (CI runs as root)")
        print("SKIP: needs root to mount a small tmpfs")
        sys.exit(77)
    work = tempfile.mkdtemp(prefix="vigil-diskfull-")
    full = os.path.join(work, "full")
    os.mkdir(full)
    mounted = False
    ok = False
    try:
        free_kept, free_lost, _ = record(os.path.join(work, "free"))
        if free_lost:
            fail(f"a free disk lost {free_lost} events")
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=100k", "tmpfs", full], check=True)
        mounted = True
        kept, lost, err = record(os.path.join(full, "t"))
        if not lost or "not recorded" not in err:
            fail(f"a full disk lost nothing? {err[-500:]}")
        if kept + lost != free_kept:
            fail(f"full disk: kept {kept} + discarded {lost} != {free_kept} on a free disk")
        d = subprocess.run([VIGIL, "dump", os.path.join(full, "t")], capture_output=True,
                           text=True, timeout=120)
        if f"{lost} events discarded" not in d.stderr:
            fail(f"vigil dump does not show the {lost} lost: {d.stderr[-400:]}")
        print(f"ok: {kept} kept + {lost} discarded = {free_kept} on a free disk")
        ok = True
    finally:
        if mounted:
            subprocess.run(["umount", full])
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")


main()
