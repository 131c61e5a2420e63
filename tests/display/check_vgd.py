#!/usr/bin/env python3
"""Runs `vigil display check` on one .vgd file against a recording of the mailbox
example, and checks what it reports.

  check_vgd.py BIN bad FILE    FILE's `// expect: ` lines are exactly the error lines, in
                               order; each error shows its source line and a caret under
                               its column; one last line says the file is not displayed;
                               the exit status is 2.
  check_vgd.py BIN good FILE   no error, exit status 0, and the scenes at the start, the
                               middle and the end render as SVG (well-formed XML) and JSON.

The command runs in FILE's folder with FILE's base name, so messages carry that name.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ERROR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): error: ")


def record(bin_dir, work):
    trace = os.path.join(work, "trace")
    # recorded by the program itself (linked with libvigil): no preload, so the test
    # also runs in the sanitizer build
    p = subprocess.run([os.path.join(bin_dir, "mailbox"), "--seed", "2"],
                       env=dict(os.environ, VIGIL_OUT=trace), capture_output=True, timeout=120)
    if p.returncode != 0:
        sys.exit(f"FAIL: mailbox with VIGIL_OUT exited with {p.returncode}: {p.stderr[-500:]}")
    return trace


def run(bin_dir, args, cwd):
    p = subprocess.run([os.path.join(bin_dir, "vigil"), "display"] + args, cwd=cwd,
                       capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def check_bad(bin_dir, path, trace):
    with open(path, "rb") as f:
        source = f.read().decode("utf-8", "replace")
    expected = [l[len("// expect: "):] for l in source.split("\n") if l.startswith("// expect: ")]
    if not expected:
        return ["no '// expect: ' line in the file"]
    folder, name = os.path.split(os.path.abspath(path))
    rc, out, err = run(bin_dir, ["check", name, trace], folder)
    problems = []
    if rc != 2:
        problems.append(f"exit status {rc}, expected 2")
    lines = err.split("\n")
    actual = [l for l in lines if ": error: " in l and not l.startswith("vigil display:")]
    if actual != expected:
        problems.append("errors differ:\n  expected:\n    " + "\n    ".join(expected) +
                        "\n  actual:\n    " + "\n    ".join(actual))
    src_lines = source.split("\n")
    for i, l in enumerate(lines):
        m = ERROR.match(l)
        if not m or m["file"] != name:
            continue
        line, col = int(m["line"]), int(m["col"])
        text = src_lines[line - 1] if line <= len(src_lines) else ""
        shown = lines[i + 1] if i + 1 < len(lines) else None
        caret = lines[i + 2] if i + 2 < len(lines) else ""
        if shown != text:
            problems.append(f"after {l!r}: source line {shown!r}, expected {text!r}")
        if len(caret) != col or not caret.endswith("^") or caret.strip() != "^":
            problems.append(f"after {l!r}: caret line {caret!r} is not under column {col}")
    if err.rstrip("\n").split("\n")[-1] != f"vigil display: {name}: not displayed (errors above)":
        problems.append(f"last line is not the summary: {err.rstrip().splitlines()[-1:]}")
    if out:
        problems.append(f"wrote on stdout: {out[:200]!r}")
    return problems


def check_good(bin_dir, path, trace, work):
    folder, name = os.path.split(os.path.abspath(path))
    rc, out, err = run(bin_dir, ["check", name, trace], folder)
    if rc != 0 or err:
        return [f"check: exit status {rc}, stderr {err[:1000]!r}"]
    problems = []
    for at in ["0", "50%", "end"]:
        svg = os.path.join(work, "scene.svg")
        rc, out, err = run(bin_dir, ["render", name, trace, "--at", at, "-o", svg], folder)
        if rc != 0 or err:
            problems.append(f"render --at {at}: exit status {rc}, stderr {err[:500]!r}")
            continue
        try:
            root = ET.parse(svg).getroot()
        except ET.ParseError as e:
            problems.append(f"render --at {at}: not XML: {e}")
            continue
        rc, out, err = run(bin_dir, ["render", name, trace, "--at", at, "--json"], folder)
        scene = json.loads(out)
        icons = [g for g in root.iter("{http://www.w3.org/2000/svg}g")
                 if "icon" in g.get("class", "").split()]
        if len(icons) != len(scene["icons"]):
            problems.append(f"--at {at}: {len(icons)} icons in the SVG, "
                            f"{len(scene['icons'])} in the JSON")
    return problems


def main():
    bin_dir, kind, path = sys.argv[1:4]
    bin_dir = os.path.abspath(bin_dir)
    work = tempfile.mkdtemp(prefix="vgd-check-")
    trace = record(bin_dir, work)
    problems = check_bad(bin_dir, path, trace) if kind == "bad" else \
        check_good(bin_dir, path, trace, work)
    if problems:
        print(f"FAIL: {path} (trace kept in {work})")
        for p in problems:
            print("  " + p)
        sys.exit(1)
    shutil.rmtree(work)
    print(f"ok: {path}")


if __name__ == "__main__":
    main()
