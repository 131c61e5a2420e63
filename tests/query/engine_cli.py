#!/usr/bin/env python3
"""vigil query and vigil explain on a recording of the mailbox example: the plans the
optimizer picks, aggregates against answers computed here from the base relations,
results ranged over by later statements, --into SQLite, every kind of bad input (one
error with file:line:col and a caret, exit 2), damaged traces (answer, exit 1).

usage: engine_cli.py BIN-DIR"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

BIN = sys.argv[1]
VIGIL = os.path.join(BIN, "vigil")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(*args, text=None):
    p = subprocess.run([VIGIL, *args], input=text, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def query(trace, q, *extra):
    rc, out, err = run("query", trace, "--format", "json", "-e", q, *extra)
    if rc != 0:
        fail(f"query exited {rc}: {q}\n{err}")
        return []
    return [json.loads(line) for line in out.splitlines()]


def main():
    work = tempfile.mkdtemp(prefix="vigil-engine-")
    trace = os.path.join(work, "trace")
    subprocess.run([VIGIL, "record", "-o", trace, "--", os.path.join(BIN, "mailbox"),
                    "--processors", "3", "--processes", "8", "--mailboxes", "3",
                    "--messages", "300", "--seed", "5"], check=True, capture_output=True)

    # ---- plans ----
    plans = {
        "semi-join[W.mailbox = S.mailbox; S precede end of W: least end of S per key]":
            'range of S is SendMessage range of W is Waiting retrieve (P = W.Process) '
            'valid at end of W where S.Mailbox = W.Mailbox and S.Process = "P1" '
            'when S precede end of W',
        "sweep join[RO overlap C]":
            'range of RO is RunningOn range of C is Clock[10] '
            'retrieve (P = RO.process) when C overlap RO',
        "hash join[S.msg = T.msg]":
            'range of S is SendMessage range of T is SendMessage '
            'retrieve (A = S.process, B = T.process) valid at S where S.msg = T.msg',
        'σ[S.process = "P1"]':
            'range of S is SendMessage retrieve (S.msg) where S.process = "P1"',
    }
    for want, q in plans.items():
        rc, out, err = run("explain", "-e", q, trace)
        algebra = out.split("\nsensors (")[0]  # the α section (vigil watch) comes after
        if rc != 0 or "before optimization:" not in out or want not in algebra.split(
                "after optimization:")[-1]:
            fail(f"explain: expected '{want}' after optimization, got rc {rc}:\n{out}{err}")
    rc, out, err = run("explain", "-e", plans["sweep join[RO overlap C]"])
    if rc != 0 or "×" not in out:
        fail(f"explain without a trace: rc {rc}\n{out}{err}")

    # ---- base data, through the engine itself (checked against the truth elsewhere) ----
    waits = query(trace, "range of W is Waiting retrieve (W.process, W.mailbox)")
    sends = query(trace, "range of S is SendMessage retrieve (S.process, S.mailbox, S.msg)")
    if not waits or not sends:
        fail("no Waiting or SendMessage tuples")
        return
    rc, out, err = run("relations", "--json", trace)
    span = [json.loads(l) for l in out.splitlines()]
    first = min(r["from"] for r in span if r["tuples"])
    last = max(r["to"] for r in span if r["tuples"])

    # cumulative count per mailbox, at each send (the send itself included)
    got = query(trace, "range of S is SendMessage retrieve (M = S.mailbox, "
                       "N = count(S.msg by S.mailbox for ever), X = max(S.msg by S.mailbox for ever)) "
                       "valid at S")
    want = set()
    for s in sends:
        before = [t for t in sends if t["values"]["mailbox"] == s["values"]["mailbox"]
                  and t["at"] <= s["at"]]
        want.add((s["values"]["mailbox"], len(before), max(t["values"]["msg"] for t in before),
                  s["at"]))
    have = {(g["values"]["M"], g["values"]["N"], g["values"]["X"], g["at"]) for g in got}
    if have != want:
        fail(f"count/max for ever by mailbox: {len(have ^ want)} tuples differ, e.g. "
             f"{sorted(have - want)[:3]} vs {sorted(want - have)[:3]}")

    # ---- joins whose output spans many batches (the executor resumes a join where a full
    # batch of 1,024 bindings stopped it): answers against pairs counted here ----
    states = query(trace, "range of P is ProcessState retrieve (P.process)")
    checks = [
        ("× then σ", "range of S is SendMessage range of T is SendMessage "
         "retrieve (A = S.msg, B = T.msg) valid at S where S.msg < T.msg",
         {(s["values"]["msg"], t["values"]["msg"], s["at"]) for s in sends for t in sends
          if s["values"]["msg"] < t["values"]["msg"]}),
        ("hash join", "range of S is SendMessage range of T is SendMessage "
         "retrieve (A = S.msg, B = T.msg) valid at S where S.process = T.process",
         {(s["values"]["msg"], t["values"]["msg"], s["at"]) for s in sends for t in sends
          if s["values"]["process"] == t["values"]["process"]}),
        ("sweep join", "range of S is SendMessage range of P is ProcessState "
         "retrieve (A = S.msg, B = P.process) when S overlap P",
         {(s["values"]["msg"], p["values"]["process"], s["at"]) for s in sends
          for p in states if p["from"] <= s["at"] < p["to"]}),
    ]
    for name, q, want in checks:
        rc, out, err = run("explain", "-e", q, trace)
        if name not in out.split("\nsensors (")[0].split("after optimization:")[-1]:
            fail(f"{name}: not in the plan:\n{out}{err}")
        have = {(g["values"]["A"], g["values"]["B"], g["at"]) for g in query(trace, q)}
        if have != want or len(want) < 1100:
            fail(f"{name} over batches: {len(have)} tuples, want {len(want)} (more than "
                 f"1,100); {len(have ^ want)} differ")

    # ---- explain --analyze: each operator's rows ----
    rc, out, err = run("explain", "--analyze", "-e", checks[1][1], trace)
    rows = {}
    for line in out.splitlines():
        if "(actual rows=" in line:
            rows[line.strip().split("  ")[0]] = int(line.split("actual rows=")[1].split()[0])
    pairs = len({(s["values"]["msg"], t["values"]["msg"]) for s in sends for t in sends
                 if s["values"]["process"] == t["values"]["process"]})
    if (rc != 0 or rows.get("SendMessage as S") != len(sends) or
            rows.get("SendMessage as T") != len(sends) or
            rows.get("hash join[S.process = T.process]") != pairs):
        fail(f"explain --analyze: rc {rc}, rows {rows}, want {len(sends)} per scan and "
             f"{pairs} joined\n{out}{err}")
    rc, out, err = run("explain", "--analyze", "-e", plans['σ[S.process = "P1"]'], trace)
    p1 = sum(1 for s in sends if s["values"]["process"] == "P1")
    if rc != 0 or f'σ[S.process = "P1"]  (actual rows={p1} ' not in out:
        fail(f"explain --analyze of a selection: rc {rc}, want {p1} rows\n{out}{err}")

    # instantaneous count of waiting processes (no by-list): a step function over the trace
    got = query(trace, "range of W is Waiting retrieve (N = count(W.process))")
    points = sorted({first, last + 1} | {w["from"] for w in waits} | {w["to"] for w in waits})
    want = []
    for a, b in zip(points, points[1:]):
        n = sum(1 for w in waits if w["from"] <= a < w["to"])
        if want and want[-1][0] == n and want[-1][2] == a:
            want[-1] = (n, want[-1][1], b)
        else:
            want.append((n, a, b))
    have = [(g["values"]["N"], g["from"], g["to"]) for g in got]
    if have != want:
        fail(f"count for each instant: got {have[:5]}..., want {want[:5]}...")

    # the queue length per mailbox while each process waits (TQuel's example)
    got = query(trace, "range of W is Waiting retrieve (M = W.mailbox, "
                       "N = count(W.process by W.mailbox))")
    # The aggregate: per mailbox, the count of waits on it at each instant, as constant
    # intervals (equal neighbours merged); each W is cut by the pieces it overlaps, its
    # tuple valid over the intersection; the result is a set.
    pieces = {}
    for m in {w["values"]["mailbox"] for w in waits}:
        same = [v for v in waits if v["values"]["mailbox"] == m]
        pts = sorted({v["from"] for v in same} | {v["to"] for v in same})
        ps = []
        for a, b in zip(pts, pts[1:]):
            n = sum(1 for v in same if v["from"] <= a < v["to"])
            if ps and ps[-1][0] == n and ps[-1][2] == a:
                ps[-1] = (n, ps[-1][1], b)
            else:
                ps.append((n, a, b))
        pieces[m] = ps
    want = set()
    for w in waits:
        m = w["values"]["mailbox"]
        for n, a, b in pieces[m]:
            lo, hi = max(a, w["from"]), min(b, w["to"])
            if lo < hi:
                want.add((m, n, lo, hi))
    rows = [(g["values"]["M"], g["values"]["N"], g["from"], g["to"]) for g in got]
    have = set(rows)
    dup = [r for r, k in Counter(rows).items() if k > 1]
    if dup:
        fail(f"count by mailbox: tuples printed more than once: {dup[:3]}")
    if have != want:
        fail(f"count by mailbox for each instant: {len(have - want)} tuples not expected, "
             f"e.g. {sorted(have - want)[:3]}; {len(want - have)} missing, e.g. "
             f"{sorted(want - have)[:3]}")
    if not any(n > 1 for _, n, _, _ in want):
        fail("count by mailbox: no mailbox ever had two waiters: the check proves little")

    # a result ranged over by a later statement
    got = query(trace, 'range of S is SendMessage retrieve into FromP1 (M = S.mailbox, K = S.msg) '
                       'where S.process = "P1" range of F is FromP1 retrieve (F.M) where F.K > 2')
    want = {(s["values"]["mailbox"], s["at"]) for s in sends
            if s["values"]["process"] == "P1" and s["values"]["msg"] > 2}
    have = {(g["values"]["M"], g["at"]) for g in got if g["relation"] != "FromP1"}
    if have != want:
        fail(f"retrieve into then range over it: {len(have)} tuples, expected {len(want)}")

    # ---- --into SQLite ----
    db = os.path.join(work, "out.db")
    rc, out, err = run("query", trace, "--into", db, "-e",
                       "range of W is Waiting retrieve into W2 (W.process, W.mailbox)")
    if rc != 0:
        fail(f"--into: rc {rc}: {err}")
    else:
        con = sqlite3.connect(db)
        rows = con.execute("select process, mailbox, valid_from, valid_to from W2").fetchall()
        want = sorted((w["values"]["process"], w["values"]["mailbox"], w["from"], w["to"])
                      for w in waits)
        if sorted(rows) != want:
            fail(f"--into: {len(rows)} rows in W2, expected {len(want)}")
        if out:
            fail("--into printed the result too")

    # ---- bad input: one error, file:line:col, the line, a caret; exit 2 ----
    bad = {
        "range of W is Wating\nretrieve (W.process)\n": ("2:15", ":1:15: error: no relation 'Wating' in the trace (did you mean Waiting?)"),
        "range of W is Waiting\nretrieve (W.proces)\n": ("", ":2:11: error: W (Waiting) has no attribute 'proces'; did you mean process?"),
        "range of W is Waiting\nretrieve (X.process)\n": ("", ":2:11: error: no tuple variable 'X'"),
        "range of W is Waiting\nretrieve (W.process)\nwhere W.process > 3\n": ("", ":3:7: error: cannot compare entity with int"),
        "range of W is Waiting\nretrieve (W.process)\nwhere W.process < W.mailbox\n": ("", ":3:7: error: cannot compare entity with entity by order (only '=' and '!=')"),
        "range of S is SendMessage\nretrieve (x = S.msg + S.process)\n": ("", ":2:15: error: '+' needs numbers, not uint and entity"),
        "range of W is Waiting\nretrieve (W.process) valid at W\n": ("", ":2:31: error: valid at needs an event"),
        "range of W is Waiting\nretrieve (W.process) where W.mailbox\n": ("", ":2:28: error: where needs a condition"),
        "range of W is Waiting\nretrieve into Waiting (W.process)\n": ("", ":2:15: error: 'Waiting' is already a relation"),
        "range of W is Waiting\nretrieve (W.process) where (W.process = \"P1\") = 1\n": ("", "error: cannot compare condition with int"),
        "range of W is Waiting\nretrieve (N = sum(W.process))\n": ("", "error: sum needs numbers, not entity"),
        "range of W is Waiting\nretrieve (x = 1)\n": ("", "error: a retrieve needs at least one tuple variable"),
        "range of W is Waiting\nretrieve (W.process\n": ("", "error: expected"),
    }
    for text, (_, want) in bad.items():
        path = os.path.join(work, "bad.tq")
        with open(path, "w") as f:
            f.write(text)
        rc, out, err = run("query", trace, "-f", path)
        lines = err.splitlines()
        if rc != 2 or not lines or not lines[0].startswith(path + ":") or want not in lines[0] \
                or len(lines) != 3 or not lines[2].strip() == "^":
            fail(f"bad query {text!r}: rc {rc}, stderr:\n{err}expected '{want}' and a caret")
        if out:
            fail(f"bad query {text!r} printed a result")

    # ---- a product beyond --max-tuples: one error, exit 2, nothing printed ----
    rc, out, err = run("query", trace, "--max-tuples", "1000", "-e",
                       "range of S is SendMessage range of T is SendMessage range of U is SendMessage "
                       "retrieve (A = S.msg, B = T.msg, C = U.msg) valid at S")
    if rc != 2 or "more than 1000 intermediate tuples" not in err or len(err.splitlines()) != 1:
        fail(f"--max-tuples: rc {rc}, stderr: {err}")

    # ---- usage ----
    for args in (["query"], ["query", trace], ["query", trace, "-e"], ["query", trace, "-e", "x", "--format", "xml"],
                 ["query", trace, "--bogus"], ["query", trace, "--max-tuples", "0", "-e", "x"], ["query", os.path.join(work, "nope"), "-e", "range of W is Waiting retrieve (W.process)"],
                 ["query", trace, "-f", os.path.join(work, "nope.tq")], ["explain"],
                 ["explain", "--analyze", "-e", "range of W is Waiting retrieve (W.process)"],
                 ["query", trace, "--analyze", "-e", "range of W is Waiting retrieve (W.process)"]):
        rc, out, err = run(*args)
        if rc != 2 or len(err.splitlines()) != 1:
            fail(f"vigil {' '.join(args)}: rc {rc}, expected 2 and one line; stderr:\n{err}")
    for cmd in ("query", "explain"):
        rc, out, err = run(cmd, "--help")
        if rc != 0 or "examples:" not in out:
            fail(f"vigil {cmd} --help: rc {rc}")

    # ---- a damaged trace: the end of a stream cut off ----
    cut = os.path.join(work, "cut")
    subprocess.run(["cp", "-r", trace, cut], check=True)
    streams = sorted(os.path.join(d, f) for d, _, fs in os.walk(cut) for f in fs
                     if d != cut and f != "metadata" and not f.startswith("."))
    size = os.path.getsize(streams[0])
    os.truncate(streams[0], size - 7)
    rc, out, err = run("query", cut, "--format", "json", "-e",
                       "range of S is SendMessage retrieve (S.msg)")
    if rc != 1 or "damaged" not in err or not out.strip():
        fail(f"damaged trace: rc {rc}, {len(out.splitlines())} tuples, stderr: {err}")

    subprocess.run(["rm", "-rf", work])


main()
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
