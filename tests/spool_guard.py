#!/usr/bin/env python3
"""Run a test and fail it if it leaves a runtime spool of its own behind.

Usage: spool_guard.py -- COMMAND [ARGS...]

A subject recording with VIGIL_TO and no VIGIL_SPOOL spools into
/dev/shm/vigil-spool-UID-PID (or /tmp/...), and keeps it when the collector never took
everything (a killed subject, an unreachable collector): that is for `vigil send`, not
for a test, which must point VIGIL_SPOOL into its own temporary folder. This wrapper
watches both folders (inotify) while COMMAND runs; a spool is the test's when the process
named by its PID descends from this wrapper at the moment it is made (other tests and
other programs on the machine make theirs too). One that is still there when COMMAND
ends is removed and fails the test with one line. COMMAND's exit status is kept
otherwise (77, a skip, included).
"""
import ctypes
import os
import re
import select
import shutil
import struct
import subprocess
import sys

ROOTS = ("/dev/shm", "/tmp")
NAME = re.compile(r"^vigil-spool-(\d+)-(\d+)$")
IN_CREATE, IN_MOVED_TO, IN_ISDIR = 0x100, 0x80, 0x40000000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2:].split()[1])  # after "pid (comm) state"


def descends_from_us(pid):
    me, seen = os.getpid(), 0
    while pid and pid > 1 and seen < 4096:
        if pid == me:
            return True
        pid, seen = parent_of(pid), seen + 1
    return False


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("usage: spool_guard.py -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
    roots = {}
    for root in ROOTS:
        wd = libc.inotify_add_watch(fd, root.encode(), IN_CREATE | IN_MOVED_TO) if fd >= 0 else -1
        if wd >= 0:
            roots[wd] = root
    if fd < 0 or not roots:
        print("spool_guard: inotify is unavailable; the spool check is off", file=sys.stderr)
    ours = {}  # path -> pid

    def drain():
        while fd >= 0:
            try:
                buf = os.read(fd, 65536)
            except BlockingIOError:
                return
            off = 0
            while off + 16 <= len(buf):
                wd, mask, _, length = struct.unpack_from("iIII", buf, off)
                name = buf[off + 16:off + 16 + length].split(b"\0", 1)[0].decode(errors="replace")
                off += 16 + length
                m = NAME.match(name)
                if m and mask & IN_ISDIR and wd in roots and descends_from_us(int(m.group(2))):
                    ours[os.path.join(roots[wd], name)] = int(m.group(2))

    proc = subprocess.Popen(argv)
    while proc.poll() is None:
        if fd >= 0:
            select.select([fd], [], [], 0.5)
            drain()
        else:
            proc.wait()
    drain()
    rc = proc.returncode
    left = sorted(p for p in ours if os.path.isdir(p))
    for path in left:
        print(f"spool_guard: the test left {path} (the default spool of its pid "
              f"{ours[path]}, a VIGIL_TO subject): set VIGIL_SPOOL into the test's own "
              f"folder; removed", file=sys.stderr)
        shutil.rmtree(path, ignore_errors=True)
    if left and rc in (0, 77):
        return 1
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
