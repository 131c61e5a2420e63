#!/usr/bin/python3
"""Differential test of the derived relations against SQLite (docs/tquel.md "Derived
relations"): diff_test.py's random retrieves (selections, joins, temporal predicates,
valid clauses, retrieve unique) over the analyses' relations of real recordings, each
answered by `vigil query` and by the same statement compiled to SQL over the relations
dumped by diff_dump (the analysis run by the engine's own code, vgq_database_derived),
compared as sets; the Python evaluator is a third opinion where the cross product is
small. A few aggregates per subject (count, sum, min, max for ever, by an attribute) are
compared with SQL's GROUP BY over the same tables. The subjects:

* three_tier: the three-tier example (examples/three_tier) recorded: Network, Message,
  NetRunning, NetWaiting, joined with each other and with the primitive OSThread;
* violations: check_mktrace's rule2 and rule5 traces: Violation with LogEvent;
* waits: tests/check/deadlock_subject.c deadlocking for real (WaitFor with Deadlock), and
  taking its mutexes in order (hundreds of WaitFor edges).

Joins between two relations are drawn on purpose too (Message.network = Network.id,
M.receiver = R.thread, V.thread = L.thread...), so that they have answers.

    diff_derived.py --bin BUILD/bin [--subjects three_tier,violations,waits]
                    [--seed N] [--queries 60] [--keep DIR]

On a mismatch it prints the subject, the TQuel, the SQL and up to 5 tuples only in each
side, saves the case under --fail-dir and exits 1."""
import argparse
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import diff_test as D  # noqa: E402
from vigil_testlib import record_deadlock  # noqa: E402

NET_REL = [("network", "uint"), ("thread", "ent"), ("host", "str"), ("program", "str")]
SUBJECTS = {
    "three_tier": {
        "Network": ("interval", [
            ("id", "uint"), ("input", "str"), ("what", "str"), ("host", "str"),
            ("program", "str"), ("last_program", "str"), ("servers", "str"),
            ("hosts", "uint"), ("threads", "uint"), ("messages", "uint"), ("bytes", "uint"),
            ("response", "num"), ("thread", "ent")]),
        "Message": ("interval", [
            ("network", "uint"), ("sender", "ent"), ("receiver", "ent"),
            ("send_host", "str"), ("recv_host", "str"), ("send_program", "str"),
            ("recv_program", "str"), ("bytes", "uint"), ("send_off", "uint"),
            ("recv_off", "uint"), ("cross_host", "num")]),
        "NetRunning": ("interval", NET_REL),
        "NetWaiting": ("interval", NET_REL),
        # primitive: every thread, one tuple per lifetime (docs/query.md)
        "OSThread": ("interval", [("name", "str"), ("id", "uint"), ("gen", "uint")]),
    },
    "violations": {
        "Violation": ("event", [
            ("rule", "num"), ("event", "str"), ("message", "str"), ("file", "str"),
            ("offset", "uint"), ("thread", "ent"), ("kind1", "str"), ("kind2", "str")]),
        "LogEvent": D.DERIVED_SCHEMA["LogEvent"],
    },
    "waits": {
        "WaitFor": ("interval", [("waiter", "ent"), ("holder", "ent"), ("lock", "ent")]),
        "Deadlock": ("event", [
            ("cycle", "uint"), ("step", "uint"), ("steps", "uint"), ("thread", "ent"),
            ("lock", "ent"), ("since", "num"), ("standing", "num")]),
    },
}
# tuple variables of each subject (two of a relation for self-joins)
SUBJECT_VARS = {
    "three_tier": {"N1": "Network", "N2": "Network", "M1": "Message", "M2": "Message",
                   "R1": "NetRunning", "W1": "NetWaiting", "O1": "OSThread"},
    "violations": {"V1": "Violation", "V2": "Violation", "L1": "LogEvent"},
    "waits": {"F1": "WaitFor", "F2": "WaitFor", "D1": "Deadlock"},
}
# entity attributes that are not threads (Owner is diff_test's default for those)
SUBJECT_KINDS = {
    "three_tier": {("Message", "sender"): "OSThread", ("Message", "receiver"): "OSThread"},
    "violations": {},
    "waits": {("WaitFor", "waiter"): "OSThread", ("WaitFor", "holder"): "OSThread",
              ("WaitFor", "lock"): "Lock", ("Deadlock", "lock"): "Lock"},
}
# values that join two relations: (relation, attribute) pairs of one domain
JOIN_KEYS = [
    [("Network", "id"), ("Message", "network"), ("NetRunning", "network"),
     ("NetWaiting", "network")],
    [("Network", "thread"), ("Message", "sender"), ("Message", "receiver"),
     ("NetRunning", "thread"), ("NetWaiting", "thread"), ("Violation", "thread"),
     ("LogEvent", "thread"), ("WaitFor", "waiter"), ("WaitFor", "holder"),
     ("Deadlock", "thread"), ("OSThread", "name")],
    [("WaitFor", "lock"), ("Deadlock", "lock")],
    [("Network", "host"), ("Message", "send_host"), ("Message", "recv_host"),
     ("NetRunning", "host"), ("NetWaiting", "host")],
    [("Network", "program"), ("Message", "send_program"), ("Message", "recv_program"),
     ("NetRunning", "program"), ("NetWaiting", "program")],
    [("Violation", "event"), ("LogEvent", "name")],
]


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
    return p


def record_three_tier(bin_dir, work):
    trace = os.path.join(work, "three_tier")
    run([os.path.join(bin_dir, "vigil"), "record", "-o", trace, "--",
         os.path.join(bin_dir, "three_tier"), "run", "--threads", "4", "--requests", "3"])
    return [trace]


def record_violations(bin_dir, work):
    traces = []
    for scenario in ("rule2", "rule5"):
        traces.append(os.path.join(work, scenario))
        run([os.path.join(bin_dir, "check_mktrace"), traces[-1], scenario])
    return traces


def record_waits(bin_dir, work):
    """deadlock_subject deadlocks; killed once both threads wait (tests/derived)."""
    trace = os.path.join(work, "deadlock")
    tids, why = record_deadlock(os.path.join(bin_dir, "deadlock_subject"), trace)
    if tids is None:
        sys.exit(why)
    # and hundreds of wait-for edges (no cycle): the mutexes taken in one order
    ordered = os.path.join(work, "ordered")
    run([os.path.join(bin_dir, "deadlock_subject"), "ordered"],
        env=dict(os.environ, VIGIL_OUT=ordered))
    return [trace, ordered]


# relations each trace of the subject must have tuples of (else it tests nothing)
REQUIRED = {"three_tier": ["Network", "Message", "NetRunning", "NetWaiting", "OSThread"],
            "violations": ["Violation", "LogEvent"], "waits": ["WaitFor"]}
RECORD = {"three_tier": record_three_tier, "violations": record_violations,
          "waits": record_waits}


def use_subject(name):
    D.SCHEMA.clear()
    D.SCHEMA.update(SUBJECTS[name])
    D.VARS.clear()
    D.VARS.update(SUBJECT_VARS[name])
    D.ENT_KINDS.clear()
    D.ENT_KINDS.update(SUBJECT_KINDS[name])


def join_condition(rng, q):
    """An equality between two of q's variables on attributes of one domain (JOIN_KEYS),
    and-ed to its where clause, or None when no two of its variables share one."""
    vs = D.variables_of(q)
    pairs = []
    for dom in JOIN_KEYS:
        have = [(v, a) for v in vs for rel, a in dom if D.VARS[v] == rel]
        pairs += [(x, y) for x in have for y in have if x[0] < y[0]]
    if not pairs:
        return None
    (v1, a1), (v2, a2) = rng.choice(pairs)
    c = ("cmp", "=", ("attr", v1, a1), ("attr", v2, a2))
    return c if q["where"] is None else ("and", c, q["where"])


def names_of(rows):
    """Entity names and strings of the trace: constants that select something."""
    names = set()
    for rel in D.SCHEMA:
        for r in rows.get(rel, [])[:200]:
            for a, t in D.SCHEMA[rel][1]:
                v = r[a]
                if t == "ent" and v["name"]:
                    names.add(v["name"])
    return sorted(names)


def generate(args, rng, rows, db):
    out, tries = [], 0
    while len(out) < args.queries and tries < 50 * args.queries:
        tries += 1
        q = D.Gen(rng, rng.sample(sorted(D.VARS), rng.choice([1, 2, 2, 3])), rows).query()
        if not D.variables_of(q) or D.combos(rows, q) > args.sql_limit:
            continue
        if len(D.variables_of(q)) > 1 and rng.random() < 0.7:
            q["where"] = join_condition(rng, q) or q["where"]
        if q["unique"] and D.ambiguous_targets(q):
            q["unique"] = False  # SQL would coalesce two entities' intervals as one's
        if D.overflow_class(rows, q, args.py_limit) is not None:
            continue  # overflows are diff_test.py's: here the relations' values
        ans = D.sql_answer(db, q)
        if len(ans) <= args.cap and (ans or rng.random() < 0.2):
            out.append((q, ans))
    return out


# ---- aggregates: for ever, by an attribute, against SQL's GROUP BY ---------------------


def agg_statements(rng, most):
    """(TQuel, SQL) pairs: each tuple's group g with fn(V.a by V.g for ever) valid at
    "now" (the trace's last event: the cumulative value over the whole relation,
    docs/tquel.md "Aggregates"); SQL answers the same with GROUP BY over the dumped
    table. Nulls are skipped, and a group with nothing to aggregate has no tuple."""
    out = []
    for _ in range(most):
        v = rng.choice(sorted(D.VARS))
        rel = D.VARS[v]
        attrs = D.SCHEMA[rel][1]
        groups = [a for a, t in attrs if t in ("str", "num", "ent")]
        nums = [a for a, t in attrs if t == "num"]
        fn = rng.choice(["count", "sum", "min", "max"] if nums else ["count"])
        arg = rng.choice(nums) if fn != "count" else rng.choice([a for a, _ in attrs])
        g = rng.choice(groups)
        col = arg + ("_id" if dict(attrs)[arg] == "ent" else "")
        tq = ('retrieve unique into G%d (g = %s.%s, x = %s(%s.%s by %s.%s for ever))'
              ' valid at "now"' % (len(out), v, g, fn, v, arg, v, g))
        # an outer tuple whose g is null selects no group (it compares as SQL's does)
        # (an entity groups by identity and prints as its name, or Kind#id)
        gsel, gkey = (g + "_disp", g + "_id") if dict(attrs)[g] == "ent" else (g, g)
        sql = ("SELECT %s, %s(%s) FROM %s WHERE %s IS NOT NULL GROUP BY %s "
               "HAVING COUNT(%s) > 0" % (gsel, fn.upper(), col, D.sql_table(rel), gkey, gkey,
                                         col))
        out.append((tq, sql))
    return out


def check_aggregates(args, subject, trace, rows, db, rng):
    stmts = agg_statements(rng, args.aggregates)
    text = D.range_lines() + "".join(tq + "\n" for tq, _ in stmts)
    out, p = D.vigil_answers(args.bin, trace, text, threads=D.THREADS)
    if p.returncode != 0:
        print("%s: aggregates: vigil query exited %d:\n%s\n%s" %
              (subject, p.returncode, text, p.stderr[-2000:]))
        return False
    ok = True
    for i, (tq, sql) in enumerate(stmts):
        want = {(g, x) for g, x in db.execute(sql)}
        got = {(t[2]["g"], t[2]["x"]) for t in out.get("G%d" % i, [])}
        if got != want:
            ok = False
            print("MISMATCH (%s, aggregate G%d)\n--- TQuel:\n%s%s\n--- SQL:\n%s\n"
                  "  only in vigil:\n%s  only in SQLite:\n%s" %
                  (subject, i, D.range_lines(), tq, sql, D.show(got - want),
                   D.show(want - got)), end="")
    print("%s: %d aggregates for ever, %d groups%s" %
          (subject, len(stmts), sum(len(v) for v in out.values()), "" if ok else ": MISMATCH"))
    return ok


def check_into(args, subject, trace, rows, work):
    """The tables `vigil query --into` writes of each relation (retrieve into T (V.all))
    hold, as sets, the tuples the SQL side was loaded with (entities by name there, as
    docs/query.md "--into" says; empty strings and missing values as NULL)."""
    db_path = os.path.join(work, "into-%s.db" % os.path.basename(trace))
    text = "".join("range of X%d is %s\nretrieve into T%d (X%d.all)\n" % (i, rel, i, i)
                   for i, rel in enumerate(D.SCHEMA))
    p = subprocess.run([os.path.join(args.bin, "vigil"), "query", trace, "-e", text,
                        "--into", db_path, "--format", "json"], capture_output=True, text=True)
    if p.returncode != 0:
        print("%s: vigil query --into exited %d: %s" % (subject, p.returncode, p.stderr[-2000:]))
        return False
    ok = True
    con = sqlite3.connect(db_path)
    for i, (rel, (kind, attrs)) in enumerate(D.SCHEMA.items()):
        times = "valid_at, valid_at" if kind == "event" else "valid_from, valid_to"
        cols = ", ".join('"%s"' % a for a, _ in attrs)
        got = {tuple(None if v == "" else v for v in r)
               for r in con.execute('SELECT %s, %s FROM "T%d"' % (cols, times, i))}
        want = {tuple([(x[a]["name"] if t == "ent" else x[a]) for a, t in attrs] +
                      [x["b"], x["e"]]) for x in rows[rel]}
        want = {tuple(None if v == "" else v for v in w) for w in want}
        if got != want:
            ok = False
            print("MISMATCH (%s, --into table of %s)\n  only in the table:\n%s"
                  "  only in diff_dump's:\n%s" % (subject, rel, D.show(got - want),
                                                  D.show(want - got)), end="")
    con.close()
    os.unlink(db_path)
    print("%s %s: --into tables of %d relations%s" % (
        subject, os.path.basename(trace), len(D.SCHEMA), "" if ok else ": MISMATCH"))
    return ok


def check_trace(args, subject, trace, rng):
    rows = D.load_trace(args.bin, trace)
    db = D.make_db(rows)
    D.ENT_NAMES[:] = ["", "nobody"] + names_of(rows)
    D.AMBIGUOUS.clear()
    for rel, (_, attrs) in D.SCHEMA.items():
        for a, t in attrs:
            ids = {}
            for r in rows[rel]:
                if t == "ent":
                    ids.setdefault(D.entity_display(r[a], D.entity_kind(rel, a)),
                                   set()).add(r[a]["id"])
            if any(len(x) > 1 for x in ids.values()):
                D.AMBIGUOUS.add((rel, a))
    sizes = {r: len(rows[r]) for r in D.SCHEMA}
    if not all(sizes[r] for r in REQUIRED[subject]):
        print("%s %s: a relation is empty, nothing to compare: %s" % (subject, trace, sizes))
        return False
    queries = generate(args, rng, rows, db)
    names, text = [], D.range_lines()
    for i, (q, _) in enumerate(queries):
        names.append("Q%d" % i)
        text += D.tquel(q, names[-1]) + "\n"
    out, p = D.vigil_answers(args.bin, trace, text, threads=D.THREADS)
    if p.returncode != 0:
        print("%s: vigil query exited %d:\n%s" % (subject, p.returncode, p.stderr[-3000:]))
        return False
    ok = D.same_on_one_thread(args.bin, trace, text, p)
    bad = 0
    for n, (q, a) in zip(names, queries):
        if not D.compare(args, subject, trace, rows, n, q, a, out.get(n, []), True):
            ok, bad = False, bad + 1
            if bad >= args.max_failures:
                break
    print("%s %s: %s tuples; %d queries, %d with answers, %d answer tuples%s" %
          (subject, os.path.basename(trace), sizes, len(queries),
           sum(1 for _, a in queries if a), sum(len(a) for _, a in queries),
           "" if ok else ": MISMATCH"))
    ok = check_into(args, subject, trace, rows, os.path.dirname(trace)) and ok
    return check_aggregates(args, subject, trace, rows, db, rng) and ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="the build's bin directory")
    ap.add_argument("--subjects", default=",".join(SUBJECTS))
    ap.add_argument("--seed", type=int, help="default: a new one, printed")
    ap.add_argument("--queries", type=int, default=60, help="per trace")
    ap.add_argument("--aggregates", type=int, default=8, help="per trace")
    ap.add_argument("--cap", type=int, default=3000, help="largest answer generated")
    ap.add_argument("--py-limit", type=int, default=4000,
                    help="largest cross product the Python evaluator checks")
    ap.add_argument("--sql-limit", type=int, default=2_000_000,
                    help="largest cross product of a statement's variables generated")
    ap.add_argument("--fail-dir", default="diff_failures")
    ap.add_argument("--max-failures", type=int, default=10, help="per trace")
    ap.add_argument("--keep", help="record the traces here and keep them")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else \
        int(os.environ.get("VIGIL_SEED") or random.SystemRandom().randrange(1, 1 << 31))
    print("seed %d (rerun it with --seed %d)" % (seed, seed), flush=True)
    work = args.keep or tempfile.mkdtemp(prefix="vigil-diffder-")
    os.makedirs(work, exist_ok=True)
    ok = True
    try:
        for subject in args.subjects.split(","):
            use_subject(subject)
            rng = random.Random("%s/%d" % (subject, seed))
            for trace in RECORD[subject](args.bin, work):
                ok = check_trace(args, subject, trace, rng) and ok
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("query.diff.derived_analyses: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
