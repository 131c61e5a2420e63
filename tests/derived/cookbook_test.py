"""docs/cookbook.md's queries still run and give the answers printed there.

Each question of the cookbook is a ```tquel block whose info string names the trace it
runs on (three_tier, mailbox, rule5), followed by an ```answer block: the distinct rows of
the query's answer (valid times left out: they differ from run to run), sorted, columns
separated by two spaces, NULL for no value. The traces are made here as the cookbook
says. Run: cookbook_test.py check [--mktrace PATH]; cookbook_test.py write rewrites the
answers from the queries (how the cookbook's answers were produced)."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from vigil_testlib import VIGIL, Failure, check, main, run, tmpdir  # noqa: E402

BIN = os.environ.get("VIGIL_BIN", "build/bin")
SRC = os.environ.get("VIGIL_SRC", ".")
DOC = os.path.join(SRC, "docs", "cookbook.md")
MKTRACE = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--mktrace" else \
    os.path.join(BIN, "check_mktrace")
BLOCK = re.compile(r"```tquel (\w+)\n(.*?)```\n+```answer\n(.*?)```", re.S)


def traces():
    d = tmpdir("cookbook")
    t = {k: os.path.join(d, k) for k in ("three_tier", "mailbox", "rule5")}
    run([VIGIL, "record", "-o", t["three_tier"], "--", os.path.join(BIN, "three_tier"), "run",
         "--threads", "2", "--requests", "4"], check_rc=0)
    run([VIGIL, "record", "-o", t["mailbox"], "--", os.path.join(BIN, "mailbox"), "--seed",
         "2"], check_rc=0)
    run([MKTRACE, t["rule5"], "rule5"], check_rc=0)
    return t


def text(v):
    return "NULL" if v is None else str(v)


def answer(trace, q):
    p = run([VIGIL, "query", trace, "--format", "json", "-e", q], check_rc=0)
    rows, names = set(), None
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        vals = json.loads(line)["values"]
        names = list(vals)
        rows.add(tuple(text(vals[k]) for k in names))
    out = ["  ".join(names or ["(no tuples)"])]
    out += ["  ".join(r) for r in sorted(rows)]
    return "\n".join(out) + "\n"


def blocks():
    with open(DOC) as f:
        doc = f.read()
    return doc, list(BLOCK.finditer(doc))


def test_check():
    doc, found = blocks()
    check(len(found) >= 10, f"{len(found)} questions in {DOC}")
    t = traces()
    for m in found:
        got = answer(t[m.group(1)], m.group(2))
        check(got == m.group(3), f"{m.group(2).strip()}\nprinted:\n{m.group(3)}\ngot:\n{got}")


def test_write():
    doc, found = blocks()
    t = traces()
    out, last = [], 0
    for m in found:
        out.append(doc[last:m.start(3)])
        out.append(answer(t[m.group(1)], m.group(2)))
        last = m.end(3)
    out.append(doc[last:])
    with open(DOC, "w") as f:
        f.write("".join(out))


main({"check": test_check, "write": test_write})
