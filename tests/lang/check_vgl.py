#!/usr/bin/env python3
"""Runs `vigil gen --check` on one .vgl file and checks what it reports.

  check_vgl.py VIGIL bad FILE    FILE's `// expect: ` lines are exactly the error lines,
                                 in order; each error shows its source line and a caret
                                 under its column; the exit status is 1.
  check_vgl.py VIGIL good FILE   no error, exit status 0.

The command runs in FILE's folder with FILE's base name, so messages carry that name.
"""
import os
import re
import subprocess
import sys

ERROR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): error: ")


def run(vigil, path):
    folder, name = os.path.split(os.path.abspath(path))
    p = subprocess.run([vigil, "gen", name, "--check"], cwd=folder, capture_output=True,
                       timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def check_bad(vigil, path):
    with open(path, "rb") as f:
        source = f.read().decode("utf-8", "replace")
    expected = [l[len("// expect: "):] for l in source.split("\n") if l.startswith("// expect: ")]
    if not expected:
        return ["no '// expect: ' line in the file"]
    rc, out, err = run(vigil, path)
    problems = []
    if rc != 1:
        problems.append(f"exit status {rc}, expected 1")
    lines = err.split("\n")
    actual = [l for l in lines if ": error: " in l and not l.startswith("vigil gen:")]
    if actual != expected:
        problems.append("errors differ:\n  expected:\n    " + "\n    ".join(expected) +
                        "\n  actual:\n    " + "\n    ".join(actual))
    src_lines = source.split("\n")
    for i, l in enumerate(lines):
        m = ERROR.match(l)
        if not m or m["file"] != os.path.basename(path):
            continue
        line, col = int(m["line"]), int(m["col"])
        text = src_lines[line - 1] if line <= len(src_lines) else ""
        shown = lines[i + 1] if i + 1 < len(lines) else None
        caret = lines[i + 2] if i + 2 < len(lines) else ""
        if len(text) <= 160 and col <= 80 and shown != text:
            problems.append(f"after {l!r}: source line {shown!r}, expected {text!r}")
        if len(text) <= 160 and col <= 80 and (len(caret) != col or not caret.endswith("^")):
            problems.append(f"after {l!r}: caret line {caret!r} is not under column {col}")
    if not err.rstrip("\n").split("\n")[-1].startswith("vigil gen: "):
        problems.append("no summary line")
    return problems


def check_good(vigil, path):
    rc, out, err = run(vigil, path)
    if rc != 0 or err:
        return [f"exit status {rc}, stderr:\n{err}"]
    return []


def main():
    vigil, kind, path = sys.argv[1:4]
    problems = (check_bad if kind == "bad" else check_good)(vigil, path)
    for p in problems:
        print(f"{path}: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
