#!/usr/bin/env python3
"""`as of` over a trace (docs/tquel.md "as of"), checked by hand on a recording of
diff_subject: the trace as recorded up to an instant T holds the tuples that began by T;
an interval still open at T ends at the last event recorded by T (its "now"); a tuple
recorded after T is not there; `through` gives what its second instant gives; Clock and
aggregates stop at that now. Expectations come from the whole trace's tuples and the
events' times (`vigil dump --json`), tuple by tuple. Then the refusals: one line with
file:line:col and a caret, exit 2.

usage: asof_test.py BIN-DIR"""
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

VIGIL = os.path.join(sys.argv[1], "vigil")
failures = []  # what failed, said as it happens


def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        failures.append(msg)


def date(ns):
    """A TQuel date for ns since the epoch, to the nanosecond, UTC."""
    s, f = divmod(ns, 10**9)
    d = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=s)
    return '"%s.%09d"' % (d.strftime("%Y-%m-%d %H:%M:%S"), f)


def run(*args):
    return subprocess.run([VIGIL, *args], capture_output=True, text=True, timeout=120)


def query(trace, q, *extra):
    """{relation: [(times, values)]}, times (at,) or (from, to)."""
    p = run("query", trace, "--format", "json", "-e", q, *extra)
    check(p.returncode == 0, "query exited %d: %s\n%s" % (p.returncode, q, p.stderr))
    if p.returncode != 0:
        return {}
    out = {}
    for line in p.stdout.splitlines():
        o = json.loads(line)
        times = (o["at"],) if o["kind"] == "event" else (o["from"], o["to"])
        out.setdefault(o["relation"], []).append((times, o["values"]))
    return out


def refused(trace, q, want, what):
    p = run("query", trace, "-e", q)
    lines = p.stderr.splitlines()
    check(p.returncode == 2 and p.stdout == "" and len(lines) == 3 and
          lines[0].startswith("<command line>:") and want in lines[0] and
          lines[2].strip() == "^", "%s: exit %d, %r" % (what, p.returncode, p.stderr))


def main():
    work = tempfile.mkdtemp(prefix="vigil-asof-")
    trace = os.path.join(work, "trace")
    subprocess.run([VIGIL, "record", "-o", trace, "--", os.path.join(os.path.dirname(VIGIL), "diff_subject"),
                    "7", "60"], check=True, capture_output=True)
    events = sorted(json.loads(line)["ts"] for line in
                    run("dump", "--json", trace).stdout.splitlines())
    whole = query(trace, "range of A is A retrieve (A.key, A.val)")["retrieve@1"]
    last = events[-1]
    begins = {t[0] for t, _ in whole}
    # T: an event where an interval X is open (began before, ends after) and none begins
    cands = [t for t in events if t not in begins and
             any(b < t < e for (b, e), _ in whole) and any(b > t for (b, _), _ in whole)]
    check(cands, "no instant with an open interval and a later tuple in the recording")
    if not cands:
        return finish(work)

    def open_at(t):
        return next(((b, e), v) for (b, e), v in whole if b < t < e)

    def gaps_in(x):  # two events more than 2 ns apart while x is open, after it began
        (b0, e0), _ = x
        return [(a, b) for a, b in zip(events, events[1:]) if b - a > 2 and a > b0 and b < e0]

    # (an instant in the middle that also has such a gap, for 2.)
    T = next((t for t in cands[len(cands) // 2:] + cands if gaps_in(open_at(t))),
             cands[len(cands) // 2])
    (xb, xe), xv = open_at(T)
    (yb, ye), yv = next(((b, e), v) for (b, e), v in whole if b > T)

    # 1. an interval open as of T ends at T (an event was recorded at T: its now); one
    # recorded after T is not there; the others are as in the whole trace
    got = query(trace, "range of A is A retrieve (A.key, A.val) as of %s" % date(T))
    got = got.get("retrieve@1", [])
    check(((xb, T), xv) in got, "as of T: the open interval %s %s is not [%d, T) in %s" %
          ((xb, xe), xv, xb, got))
    check(all(v != yv or b != yb for (b, _), v in got),
          "as of T: the tuple %s %s recorded after T is there" % ((yb, ye), yv))
    want = sorted(((b, min(e, T)), v) for (b, e), v in whole if b <= T)
    check(sorted(got, key=repr) == sorted(want, key=repr),
          "as of T: %d tuples, want %d" % (len(got), len(want)))

    # 2. an instant between events: now is the last event recorded by then
    gaps = gaps_in(((xb, xe), xv))
    check(gaps, "no gap between events while X is open")
    if gaps:
        a, b = gaps[0]
        U = a + (b - a) // 2
        got = query(trace, 'range of A is A retrieve (A.key, A.val) as of %s\n'
                    'retrieve Now (A.key) valid at "now" as of %s' % (date(U), date(U)))
        check(((xb, a), xv) in got.get("retrieve@1", []),
              "as of a time between events: X does not end at the last event before it")
        check({t for t, _ in got.get("Now", [])} == {(a,)},
              "as of a time between events: now is %s, want %d" %
              ({t for t, _ in got.get("Now", [])}, a))

    # 3. through: what its second instant gives; "now" and "forever": the whole trace
    q = "range of A is A retrieve (A.key, A.val) as of "
    a1 = query(trace, q + date(T)).get("retrieve@1")
    a2 = query(trace, q + '"beginning" through ' + date(T)).get("retrieve@1")
    check(a1 == a2, "as of beginning through T differs from as of T")
    for instant in ('"now"', '"forever"'):
        got = query(trace, q + instant).get("retrieve@1")
        check(sorted(got, key=repr) == sorted(whole, key=repr),
              "as of %s differs from the whole trace" % instant)
    check(query(trace, q + date(events[0] - 1)) == {},
          "as of before the first event: not empty")

    # 4. Clock ticks and aggregates stop at T
    first = events[0]
    tick = max(10000, (last - first) // 200)  # a few hundred ticks however long it ran
    got = query(trace, "range of C is Clock range of E is E retrieve (k = E.key) valid at C "
                "when E precede C as of %s" % date(T), "--tick", "%dns" % tick)
    ticks = {t[0] for t, _ in got.get("retrieve@1", [])}
    check(ticks and max(ticks) <= T and max(ticks) + tick > T and
          all((t - first) % tick == 0 for t in ticks),
          "Clock as of T: ticks %s, T %d" % (sorted(ticks)[-3:], T))
    got = query(trace, "range of A is A retrieve (n = count(A.key)) as of %s" % date(T))
    pieces = got.get("retrieve@1", [])
    check(pieces and max(e for (_, e), _ in pieces) == T + 1 and
          any(b <= xb < e and v["n"] >= 1 for (b, e), v in pieces),
          "count as of T: the time line does not end at T: %s" % pieces[-3:])
    n_at = [v["n"] for (b, e), v in pieces if b <= T - 1 < e]
    open_at = sum(1 for (b, e), _ in whole if b <= T - 1 < e)
    check(n_at == [open_at], "count as of T just before T: %s, want %d" % (n_at, open_at))

    # 5. refusals
    r = "range of A is A range of L is LogEvent "
    refused(trace, r + "retrieve (A.key) as of A", "not a tuple variable", "a variable")
    refused(trace, r + 'retrieve (A.key) as of "beginning" extend "now"', "an interval",
            "an interval")
    refused(trace, r + 'retrieve (A.key) as of "now" through "beginning"',
            "needs E2 at or after E", "through before")
    refused(trace, r + "retrieve (L.name) as of %s" % date(T), "no transaction time",
            "a derived relation")
    refused(trace, r + 'retrieve into R (A.key) range of S is R retrieve (S.key) as of "now"',
            "result of an earlier retrieve", "a result")
    refused(trace, r + 'retrieve (A.key) as of "now" as of "now"', "a second 'as of'",
            "two clauses")
    return finish(work)


def finish(work):
    if failures:
        print("%d failures; kept %s" % (len(failures), work))
        return 1
    shutil.rmtree(work)
    print("query.asof: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
