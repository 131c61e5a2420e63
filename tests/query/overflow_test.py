#!/usr/bin/python3
"""Integer overflow in TQuel (docs/tquel.md "Values"): never a wrap. Over a diff_subject
recording (A, E: int keys and values, uints 0, 1, 5, 2^63, 2^64 - 1), each statement whose
integer arithmetic goes past 64 bits, alone, must fail with exit 2, nothing on stdout, and
one line `FILE:LINE:COL: error: NAME: integer overflow in EXPR: WHAT` naming the operands,
then the source line and a caret: every operator (+ - * / and unary -), -2^63 / -1, a uint
past 2^63 - 1 in arithmetic, an overflow in a where clause (a selection, a join condition,
a hash join's key), in an aggregate's argument, and integer sums (sum, sumU) past 64 bits.
The same at 1 and 3 threads. Results at the very bounds are answered exactly, a division
by zero is null, an `or` whose left side holds spares its right, doubles do not fail, and
a moving window as long as 100,000 days counts as `for ever` does (its end saturates at
"forever"). In a run of several statements, those before the failing one are printed, the
failing one is not.

With PostgreSQL (Debian's, started here on a Unix socket) and the store built, the trace
is stored and the same statements run on it: each overflow fails with exit 2 and vigil's
"integer overflow" line (PostgreSQL's bigint out of range), and the answers that do not
overflow (sums, the long moving window) equal the trace's.

    overflow_test.py --bin BUILD/bin [--pg PG_BIN]"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diff_test as D  # noqa: E402

MAX = 2**63 - 1
RANGES = "range of A1 is A\nrange of E1 is E\n"
UINT_PAST = r"(9223372036854775808|18446744073709551615)"

# (name, statement after `retrieve NAME`, what the error line says after the expression)
OVERFLOWS = [
    ("Add", "(x = (A1.key * 0 + 9223372036854775807) + 1)",
     r"9223372036854775807 \+ 1 is past the 64-bit integers"),
    ("Sub", "(x = (A1.key * 0 - 9223372036854775807) - 2)",
     r"-9223372036854775807 - 2 is past the 64-bit integers"),
    ("Mul", "(x = (A1.key * 0 + 4294967296) * 4294967296)",
     r"4294967296 \* 4294967296 is past the 64-bit integers"),
    ("Div", "(x = (A1.key * 0 - 9223372036854775807 - 1) / (A1.key * 0 - 1))",
     r"-9223372036854775808 / -1 is past the 64-bit integers"),
    ("Neg", "(x = -(A1.key * 0 - 9223372036854775807 - 1))",
     r"-\(-9223372036854775808\) is past the 64-bit integers"),
    ("Uint", "(x = A1.u + 0) where A1.u > 9223372036854775807",
     r"the uint %s is past the 64-bit signed integers that arithmetic is in" % UINT_PAST),
    ("UintNeg", "(x = -A1.u) where A1.u > 9223372036854775807",
     r"the uint %s is past the 64-bit signed integers that arithmetic is in" % UINT_PAST),
    ("Where", "(k = A1.key) where (A1.key * 0 + 9223372036854775807) * 2 > 0",
     r"9223372036854775807 \* 2 is past the 64-bit integers"),
    ("Join", "(k = A1.key) where A1.key = E1.key and "
     "(A1.val * 0 + 3037000500) * (E1.val * 0 + 3037000500) > 0",
     r"3037000500 \* 3037000500 is past the 64-bit integers"),
    ("HashKey", "(k = A1.key) where A1.key * 0 + 9223372036854775807 + 1 = E1.key",
     r"9223372036854775807 \+ 1 is past the 64-bit integers"),
    ("AggArg", "(n = count((A1.key * 0 + 9223372036854775807) + 1))",
     r"9223372036854775807 \+ 1 is past the 64-bit integers"),
    ("AggWhere", "(n = count(A1.key where (A1.key * 0 - 9223372036854775807) - 9 < 0))",
     r"-9223372036854775807 - 9 is past the 64-bit integers"),
    ("Sum", "(s = sum(A1.key * 0 + 4611686018427387904 for ever))",
     r"the sum of \d+ values? is past the 64-bit integers"),
    ("SumUint", "(s = sum(A1.u for ever))",
     r"the sum of \d+ values? is past the 64-bit integers"),
    ("SumU", "(s = sumU(A1.u for ever))",
     r"the sum of \d+ values? is past the 64-bit integers"),
]

# answered, not failed: name -> statement
ANSWERED = {
    "Bounds": "(a = (A1.key * 0 + 9223372036854775806) + 1, "
              "b = (A1.key * 0 - 9223372036854775807) - 1, "
              "c = (A1.key * 0 + 3037000499) * 3037000499, "
              "d = (A1.key * 0 - 9223372036854775807 - 1) / 1, "
              "e = -(A1.key * 0 + 9223372036854775807), "
              "f = (A1.key * 0 + 7) / (A1.key * 0), "
              "g = (A1.key * 0 + 9223372036854775807) * 2.0)",
    "SmallUint": "(x = A1.u + 0) where A1.u <= 9223372036854775807",
    "OrGuard": "(k = A1.key) where A1.key * 0 = 0 or "
               "(A1.key * 0 + 9223372036854775807) + 1 > 0",
    "LongWindow": "(n = count(A1.key for each 100000 d))",
    "Ever": "(n = count(A1.key for ever))",
    "SumFits": "(s = sum(A1.key * 0 + 1 for ever))",
}
BOUNDS = {"a": MAX, "b": -MAX - 1, "c": 3037000499 * 3037000499, "d": -MAX - 1, "e": -MAX,
          "f": None, "g": 2.0 * MAX}
# on the store: the answers that do not depend on a planner's order of evaluation
ON_STORE = ["Bounds", "SmallUint", "LongWindow", "Ever", "SumFits"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(bin_dir, trace, text, work, extra=()):
    path = os.path.join(work, "q.tq")
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run([os.path.join(bin_dir, "vigil"), "query", trace, "-f", path,
                        "--format", "json"] + list(extra), capture_output=True, text=True,
                       timeout=300)
    return path, p


def check_overflow(bin_dir, trace, work, name, stmt, what, extra=(), store=False):
    text = RANGES + "retrieve %s %s\n" % (name, stmt)
    path, p = run(bin_dir, trace, text, work, extra)
    if p.returncode != 2 or p.stdout:
        fail("%s%s: exit %d (expected 2), stdout %r, stderr %r" %
             (name, " on the store" if store else "", p.returncode, p.stdout[:300],
              p.stderr[-500:]))
    lines = p.stderr.splitlines()
    if store:
        want = (r"^.*%s \(line 3\): integer overflow: a value is past the 64-bit integers "
                r"\(PostgreSQL: bigint out of range; run it on the trace" % name)
        if not lines or not re.match(want, lines[0]) or len(lines) != 1:
            fail("%s on the store: expected one line matching %r, got %r" %
                 (name, want, p.stderr))
        return
    want = r"^%s:3:\d+: error: %s: integer overflow in .+: %s$" % (re.escape(path), name, what)
    if not lines or not re.match(want, lines[0]):
        fail("%s: expected a first line matching %r, got %r" % (name, want, p.stderr))
    if len(lines) != 3 or lines[1].strip() != text.splitlines()[2].strip() or \
            lines[2].strip() != "^":
        fail("%s: expected the statement's line and a caret after the error, got %r" %
             (name, lines[1:]))
    return lines[0]


def answers(bin_dir, trace, work, names, extra=()):
    text = RANGES + "".join("retrieve %s %s\n" % (n, ANSWERED[n]) for n in names)
    got, p = D.vigil_answers(bin_dir, trace, text, extra)
    if p.returncode:
        fail("the statements that do not overflow exited %d: %s" % (p.returncode, p.stderr))
    return {n: {(k, t, tuple(sorted(v.items()))) for k, t, v in got.get(n, [])}
            for n in names}


def check_answers(got, rows):
    if not got["Bounds"]:
        fail("Bounds: no tuples")
    for _, _, vals in got["Bounds"]:
        if dict(vals) != BOUNDS:
            fail("Bounds: %r, expected %r" % (dict(vals), BOUNDS))
    small = sorted({v for _, _, vals in got["SmallUint"] for _, v in vals})
    want = sorted({r["u"] for r in rows["A"] if r["u"] is not None and r["u"] <= MAX})
    if small != want:
        fail("SmallUint: values %r, expected %r" % (small, want))
    keys = sorted({v for _, _, vals in got["OrGuard"] for _, v in vals})
    if keys != sorted({r["key"] for r in rows["A"]}):
        fail("OrGuard: keys %r, expected every key of A" % keys)
    if got["LongWindow"] != got["Ever"] or not got["Ever"]:
        fail("LongWindow: count for each 100000 d differs from for ever:\n%s\n%s" %
             (D.show(got["LongWindow"] - got["Ever"]), D.show(got["Ever"] - got["LongWindow"])))
    if not got["SumFits"]:
        fail("SumFits: no tuples")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--pg", metavar="PG_BIN")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="vigil-overflow-")
    pg = None
    try:
        trace = D.record(args.bin, 7, 240, work)
        rows = D.load_trace(args.bin, trace)
        if not any(r["u"] is not None and r["u"] > MAX for r in rows["A"]) or \
                len(rows["A"]) < 2 or not {r["key"] for r in rows["A"]} & \
                {r["key"] for r in rows["E"]}:
            fail("the recording lacks what the test needs (a uint past 2^63 - 1 in A, two "
                 "A tuples, a key of A in E): %s" % {r: len(v) for r, v in rows.items()})
        for name, stmt, what in OVERFLOWS:
            one = check_overflow(args.bin, trace, work, name, stmt, what, ["--threads", "1"])
            three = check_overflow(args.bin, trace, work, name, stmt, what,
                                   ["--threads", "3"])
            if one != three and not name.startswith(("Uint", "Sum")):
                fail("%s: at 1 and 3 threads the errors differ:\n%s\n%s" % (name, one, three))
        print("%d overflowing statements failed, each with its line and caret" %
              len(OVERFLOWS))
        got = answers(args.bin, trace, work, list(ANSWERED))
        check_answers(got, rows)
        print("%d statements at the bounds answered exactly" % len(ANSWERED))
        # a run of two: the first answered and printed, the failing one not, exit 2
        text = RANGES + "retrieve First (k = A1.key)\nretrieve %s %s\n" % OVERFLOWS[0][:2]
        _, p = run(args.bin, trace, text, work)
        rels = {re.search(r'"relation": *"([^"]+)"', line).group(1)
                for line in p.stdout.splitlines()}
        if p.returncode != 2 or rels != {"First"}:
            fail("a run of First then %s: exit %d, results %s (expected 2, First only)" %
                 (OVERFLOWS[0][0], p.returncode, sorted(rels)))
        if args.pg:
            pg = D.start_pg(args.pg, args.bin)
            url = pg.url()
            p = subprocess.run([os.path.join(args.bin, "vigil"), "store", trace, "--to", url,
                                "--schema", "ovf", "-q"], capture_output=True, text=True)
            if p.returncode:
                fail("vigil store exited %d: %s" % (p.returncode, p.stderr))
            extra = ["--schema", "ovf"]
            for name, stmt, what in OVERFLOWS:
                check_overflow(args.bin, url, work, name, stmt, what, extra, store=True)
            on_store = answers(args.bin, url, work, ON_STORE, extra)
            for n in ON_STORE:
                if on_store[n] != got[n]:
                    fail("%s on the store differs from the trace:\n%s\n%s" %
                         (n, D.show(on_store[n] - got[n]), D.show(got[n] - on_store[n])))
            print("on the PostgreSQL store: %d overflows failed, %d answers equal" %
                  (len(OVERFLOWS), len(ON_STORE)))
    finally:
        if pg:
            pg.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    print("query.overflow: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
