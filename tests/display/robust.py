#!/usr/bin/env python3
"""Mutated display specifications against a real trace: the checker and the scene
builder (not only the parser, which fuzz_vgd covers) on inputs nobody wrote. Each mutant
of the example files (a token replaced by another name, keyword or number of the
language, deleted or duplicated; a line dropped or repeated) is checked against a
recording of the mailbox example; one that checks is rendered as JSON and SVG at several
instants. Every run must exit 0 (checked or drawn) or 2 (errors), never crash or report a
sanitizer error; every error line is FILE:LINE:COL with a caret after it; every JSON
parses and every SVG is well-formed XML.

usage: robust.py BIN-DIR SRC-DIR [COUNT]   (VIGIL_SEED=N reruns one seed)
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

WORDS = ("show as inside from to flashing pointer line curve point circle oval rectangle "
         "text polygon label at x y size intensity colour rotation scale by value order of "
         "else time animation animationtrace axis hold clock canvas derive top left right "
         "bottom center Process Processor Mailbox ProcessState RunningOn Waiting SendMessage "
         "Thread ResumedbyP1 process processor mailbox name state msg payload id gen red "
         "grey 0 1 0.5 3 50% 200 1ms 20us : , ( ) = + { } \"Running\" \"#123456\"").split()
TOKEN = re.compile(r'"[^"\n]*"|[A-Za-z_][A-Za-z0-9_.]*|-?\d+(?:\.\d+)?[a-z%]*|\S')


def mutate(text, rng):
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(5)
        if kind == 3 and len(lines) > 1:
            del lines[rng.randrange(len(lines))]
            continue
        if kind == 4:
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
            continue
        i = rng.randrange(len(lines))
        toks = TOKEN.findall(lines[i])
        if not toks:
            continue
        j = rng.randrange(len(toks))
        if kind == 0:
            toks[j] = rng.choice(WORDS)
        elif kind == 1:
            del toks[j]
        else:
            toks.insert(j, rng.choice(WORDS))
        lines[i] = " ".join(toks)
    return "\n".join(lines)


def main():
    bin_dir, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    vigil = os.path.join(bin_dir, "vigil")
    seeds = [int(os.environ["VIGIL_SEED"])] if "VIGIL_SEED" in os.environ else \
        [1, 2, random.SystemRandom().randrange(1 << 30)]
    work = tempfile.mkdtemp(prefix="vgd-robust-")
    trace = os.path.join(work, "trace")
    p = subprocess.run([os.path.join(bin_dir, "mailbox"), "--seed", "2"], capture_output=True,
                       env=dict(os.environ, VIGIL_OUT=trace), timeout=120)
    if p.returncode:
        print(f"FAIL: mailbox did not record (kept {work})")
        sys.exit(1)
    shutil.copy(os.path.join(src, "tests", "display", "good", "every_form.tq"), work)
    bases = [os.path.join(src, "examples", "mailbox", "mailbox.vgd")] + \
        [os.path.join(src, "tests", "display", "good", f) for f in ("every_form.vgd", "axis.vgd")]
    texts = [open(b).read() for b in bases]
    problems, checked, drawn = [], 0, 0

    def run(args, what):
        p = subprocess.run([vigil, "display"] + args, capture_output=True, timeout=120)
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode not in (0, 2) or "runtime error" in err or "Sanitizer" in err:
            problems.append(f"{what}: exit {p.returncode}: {err[-600:]}")
        return p.returncode, p.stdout, err

    for seed in seeds:
        rng = random.Random(seed)
        for n in range(count):
            name = f"m{seed}_{n}.vgd"
            path = os.path.join(work, name)
            with open(path, "w") as f:
                f.write(mutate(rng.choice(texts), rng))
            what = f"seed {seed} mutant {n} ({path})"
            rc, out, err = run(["check", path, trace], what)
            if rc == 2:
                lines = err.split("\n")
                for i, l in enumerate(lines):
                    if ": error: " in l and l.startswith(path + ":"):
                        if not re.match(re.escape(path) + r":\d+:\d+: error: ", l) or \
                                i + 2 >= len(lines) or not lines[i + 2].endswith("^"):
                            problems.append(f"{what}: error without its caret: {l!r}")
                continue
            if rc:
                continue
            checked += 1
            for at in ("0", "37%", "71%", "end"):
                rc, out, err = run(["render", path, trace, "--at", at, "--json"], what)
                try:
                    json.loads(out)
                except ValueError:
                    problems.append(f"{what}: --at {at}: not JSON")
                rc, out, err = run(["render", path, trace, "--at", at], what)
                try:
                    ET.fromstring(out)
                except ET.ParseError as e:
                    problems.append(f"{what}: --at {at}: SVG not XML: {e}")
                drawn += 1
            if len(problems) > 10:
                break
        if problems:
            print(f"FAIL with VIGIL_SEED={seed} (kept {work}):")
            for pr in problems[:10]:
                print("  " + pr)
            sys.exit(1)
    if not checked:
        print(f"FAIL: no mutant checked: the renderer was never reached (kept {work})")
        sys.exit(1)
    shutil.rmtree(work)
    print(f"ok: seeds {seeds}, {count} mutants each; {checked} checked and drawn at "
          f"{drawn} instants")


if __name__ == "__main__":
    main()
