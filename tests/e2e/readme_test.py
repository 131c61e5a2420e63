#!/usr/bin/env python3
"""The README's examples as written (issue: the live examples answered 0 tuples with the
default seed, `$!` was vigil record's pid). Every ```sh block of README.md that names no
placeholder (a program of the reader's own: ./server, ./app, app.vgl; a database URL; the
make targets; traces of hosts the reader has) runs, in order, with bash in one folder where
`build` and `examples` are this checkout's; each must exit 0 with no error line, and a
block that asks ResumedbyP1 must print some of its tuples. Background jobs a block starts
are ended with it."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.abspath(os.environ.get("VIGIL_BIN", "build/bin"))
SRC = os.path.abspath(os.environ.get("VIGIL_SRC", "."))
PLACEHOLDERS = ("./server", "./app", "app.vgl", "postgresql://", "make ", "clock a b c")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def blocks():
    with open(os.path.join(SRC, "README.md")) as f:
        text = f.read()
    return re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)


def main():
    work = tempfile.mkdtemp(prefix="vigil-readme-")
    ok = False
    try:
        os.symlink(os.path.dirname(BIN), os.path.join(work, "build"))
        os.symlink(os.path.join(SRC, "examples"), os.path.join(work, "examples"))
        ran = 0
        for i, block in enumerate(blocks(), 1):
            if any(p in block for p in PLACEHOLDERS):
                continue
            script = ("set -e\ntrap 'rc=$?; for j in $(jobs -p); do kill $j; done; wait; "
                      "exit $rc' EXIT\n" + block)
            p = subprocess.run(["bash", "-c", script], cwd=work, capture_output=True,
                               text=True, timeout=180)
            first = block.strip().splitlines()[0]
            if p.returncode:
                fail(f"README block {i} ({first}) exited {p.returncode}: {p.stderr[-800:]}")
            errors = [l for l in p.stderr.splitlines() if "error" in l.lower()]
            if errors:
                fail(f"README block {i} ({first}) said: {errors[:3]}")
            asks = re.search(r"vigil (query|watch) .*resumed\.tq", block)
            if asks and '"relation":"ResumedbyP1"' not in p.stdout:
                fail(f"README block {i} ({first}) answered no ResumedbyP1 tuple")
            ran += 1
        if ran < 3:
            fail(f"only {ran} README blocks ran: the examples changed shape?")
        ok = True
        print(f"ok: {ran} README blocks ran as written")
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")


main()
