#!/usr/bin/env python3
"""libvigil's thread-local storage fits where a dlopen'ed library's must go.

libvigil's TLS is initial-exec (the fast path reads its thread state with one %fs
access). A library with initial-exec TLS that is loaded by dlopen after the program
started (a PostgreSQL module linking libvigil, a Python extension) gets its TLS from
glibc's static TLS surplus, 1664 bytes by default and shared with every other such
library; beyond it dlopen fails with "cannot allocate memory in static TLS block"
(logmodel.postgres saw it when a lock table grew by 1 KiB). This test reads the size of
libvigil's PT_TLS segment and fails above a budget that leaves room for others.

usage: static_tls_test.py LIBVIGIL"""
import subprocess
import sys

BUDGET = 1280  # bytes; 1208 on 2026-11-27


def main():
    lib = sys.argv[1]
    out = subprocess.run(["readelf", "-lW", lib], capture_output=True, text=True,
                         check=True).stdout
    tls = [line.split() for line in out.splitlines() if line.split()[:1] == ["TLS"]]
    if len(tls) != 1:
        print(f"{lib}: {len(tls)} TLS segments in readelf -l's output")
        return 1
    memsz = int(tls[0][5], 16)
    if memsz > BUDGET:
        print(f"{lib}: {memsz} bytes of initial-exec TLS, over the budget of {BUDGET}: "
              f"move large per-thread tables out of __thread (see track.c's lock_acq)")
        return 1
    print(f"{lib}: {memsz} bytes of TLS (budget {BUDGET})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
