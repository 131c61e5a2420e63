#!/usr/bin/python3
"""Differential test of TQuel aggregates, results ranged over and clocks (docs/tquel.md,
*Aggregates*, *retrieve*, *Clocks*): the part of the language diff_test.py does not generate.

For each seed: records a random trace (diff_subject), then generates three kinds of
statements, runs them all in one `vigil query --format json --tick T` and compares each
result with the expected set:

* aggregates: count, countU, sum, sumU, avg, avgU, min, max, with and without by-lists
  (correlated or not), for each instant / for ever, inner where and when clauses, in
  target lists and where clauses, with 0-2 outer variables (a clock among them). The
  aggregate is computed in Python from the dumped tuples (the maximal constant intervals
  per group, count 0 where nothing contributes from the trace's first event to its last);
  the outer statement then joins each aggregate's relation like a variable, answered by
  SQLite (the aggregate relations loaded as tables) and by the Python evaluator. Some are
  as of an instant (no clock then): the aggregates over the relations as recorded up to
  it, their time lines ending at its "now".
* results ranged over: `retrieve into R (...)` then `range of X is R` and a retrieve over
  X (R's expected tuples, entities kept as entities, are loaded as a relation).
* clocks: Clock[n] and Clock with --tick, mostly `when C overlap V`.

    diff_agg.py --bin BUILD/bin [--seeds 1,2,3] [--queries 60] [--keep DIR]

An integer sum past int64 at some instant of its time line (docs/tquel.md "Values") must
fail its statement: such statements (up to --max-overflows a seed) are checked alone.

Each statement's expected answer is computed within --budget seconds of CPU time (SQLite and
Python; CPU time, so that waiting for a core on a loaded machine does not count): past it
the script prints the seed and the statement, saves them, and exits 1 rather than hang
until ctest's timeout (SIGUSR1 also prints where it is).

On a mismatch it prints the seed, the statements, and up to 5 tuples only in each side, and
saves the trace and the query under --fail-dir."""
import argparse
import bisect
import itertools
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diff_test as D  # noqa: E402

FNS = ["count", "countU", "sum", "sumU", "avg", "avgU", "min", "max",
       "any", "stdev", "first", "last", "rate", "avgti", "varts"]
ORDERED = ("min", "max", "first", "last")  # numbers or strings
TIMED = ("count", "countU", "any", "avgti", "varts")  # any argument: only its time counts
BASE_VARS = dict(D.VARS)  # the trace's variables, before clocks and results are added

# ---- aggregates: generation ------------------------------------------------------------
# An aggregate: {"fn", "arg", "by": [expr], "window": None|"instant"|"ever"|("span", ns), "where",
# "when", "vars": [inner variables]}. In a query's expressions it is ("agg", i).


def is_double(x):
    """The static type of a numeric expression is double (docs: any double makes one)."""
    if x[0] == "real":
        return True
    if x[0] == "neg":
        return is_double(x[1])
    if x[0] == "bin":
        return is_double(x[2]) or is_double(x[3])
    return False


def gen_agg(rng, inner, outer):
    g = D.Gen(rng, inner)
    fn = rng.choice(FNS)
    uints = g.attrs_of("uint")
    if fn in TIMED:
        v = rng.choice(inner)
        arg = ("attr", v, rng.choice(attr_names(v))) if attr_names(v) else ("int", 1)
    elif fn in ORDERED and rng.random() < 0.3:
        pool = g.attrs_of("str") + uints
        arg = ("attr",) + rng.choice(pool) if pool else g.num(1)
    elif uints and rng.random() < 0.15:
        arg = ("attr",) + rng.choice(uints)
    else:
        arg = g.num(rng.choice([0, 0, 1]))
        if is_double(arg) and "/" in repr(arg):  # sums exact in any order: no 3.0 / x
            v, at = rng.choice(g.attrs_of("num"))
            arg = ("bin", "*", ("attr", v, at), ("real", "0.5"))
    by = []
    for _ in range(rng.choice([0, 0, 1, 1, 1, 2])):
        # prefer a variable that is also outside, so that the by-item is correlated
        shared = [v for v in inner if v in outer and attr_names(v)]
        valued = [v for v in inner if attr_names(v)]
        if not valued:
            break
        v = rng.choice(shared) if shared and rng.random() < 0.6 else rng.choice(valued)
        attrs = [a for a, t in D.SCHEMA[D.VARS[v]][1]]
        a = rng.choice(attrs)
        x = ("attr", v, a)
        if dict(D.SCHEMA[D.VARS[v]][1])[a] == "num" and rng.random() < 0.15:
            x = ("bin", "+", x, ("int", 1))
        if x not in by:
            by.append(x)
    a = {"fn": fn, "arg": arg, "by": by,
         "window": rng.choice([None, None, "instant", "ever", "ever", ("span", 1),
                               ("span", rng.choice([500, 3000, 20000, 100000]))]),
         "where": g.cond(1) if rng.random() < 0.35 else None,
         "when": g.pred(1) if rng.random() < 0.2 else None}
    clocks = [v for v in inner if not attr_names(v)]
    if clocks:  # a clock samples: count(1 when C overlap A1)
        p = ("toverlap", ("var", clocks[0]), ("var", rng.choice(inner)))
        a["when"] = p if a["when"] is None else ("tand", p, a["when"])
    # its variables are those named inside its parentheses (none: vigil crashes, see the
    # report; an aggregate over no variable is not generated)
    a["vars"] = sorted(set().union(*(vars_in(x) for x in [arg] + by + [a["where"]])) |
                       set(D.variables_of({"targets": [], "valid": None, "where": None,
                                           "when": a["when"]})))
    if not a["vars"]:
        v, at = rng.choice(g.attrs_of("num"))
        a["arg"] = ("attr", v, at)
        a["vars"] = [v]
    return a


def attr_names(v):
    return [a for a, _ in D.SCHEMA[D.VARS[v]][1]]


def gen_agg_query(rng, trace_vars, clock_vars):
    """A retrieve with 1-2 aggregates and 0-2 outer variables."""
    pool = sorted(trace_vars) + sorted(clock_vars)
    outer = rng.sample(pool, rng.choice([0, 1, 1, 1, 2]))
    aggs = []
    for _ in range(rng.choice([1, 1, 1, 2])):
        n = rng.choice([1, 1, 1, 2])
        # an inner variable shares the outer's name often (the by-item then correlates)
        cands = [v for v in outer if v in trace_vars]
        inner = set(rng.sample(cands, 1) if cands and rng.random() < 0.6 else [])
        while len(inner) < n:
            inner.add(rng.choice(sorted(trace_vars)))
        if rng.random() < 0.2:
            inner.add(rng.choice(sorted(clock_vars)))
        aggs.append(gen_agg(rng, sorted(inner), outer))
    targets, names = [], set()
    g = D.Gen(rng, outer) if outer else None
    for v in outer:  # an attribute of each outer variable, the correlated one first
        by = [b for a in aggs for b in a["by"] if b[0] == "attr" and b[1] == v]
        if by and rng.random() < 0.7:
            targets.append(("c%d" % len(targets), by[0], False))
        elif attr_names(v) and rng.random() < 0.7:
            targets.append(("c%d" % len(targets), ("attr", v, rng.choice(attr_names(v))),
                            False))
    where = None
    for i, a in enumerate(aggs):
        if targets and value_type_agg(a) != "str" and rng.random() < 0.2:  # where only
            c = ("cmp", rng.choice([">", ">=", "=", "!=", "<"]), ("agg", i),
                 ("int", rng.randint(0, 2)))
            where = c if where is None else ("and", where, c)
            continue
        x = ("agg", i)
        if a["fn"] == "count" and rng.random() < 0.1:
            x = ("bin", "+", x, ("int", 1))
        targets.append(("c%d" % len(targets), x, False))
    if g and rng.random() < 0.3 and g.attrs_of("num"):
        c = g.cond(1)
        where = c if where is None else ("and", where, c)
    when = valid = None
    if g and rng.random() < 0.3:
        when = g.pred(1)
    if g and rng.random() < 0.15:
        valid = ("at", g.event_texpr(1)) if rng.random() < 0.5 else (
            "fromto", g.texpr(0), g.texpr(0))
    if g and rng.random() < 0.25:
        # an aggregate of its own in the when (or valid) clause: the valid time of its
        # value, an interval variable over its relation
        inner = sorted({rng.choice(sorted(trace_vars))} |
                       ({rng.choice(outer)} if rng.random() < 0.5 else set()))
        aggs.append(gen_agg(rng, inner, outer))
        x = ("agg", len(aggs) - 1)
        if rng.random() < 0.3:
            x = ("begin", x) if rng.random() < 0.5 else ("end", x)
        v = ("var", rng.choice(outer))
        if valid is None and rng.random() < 0.25:
            valid = ("fromto", x, v) if rng.random() < 0.5 else ("fromto", v, x)
        else:
            op = rng.choice(["toverlap", "toverlap", "precede", "equal"])
            p = (op, x, v) if rng.random() < 0.5 else (op, v, x)
            when = p if when is None else ("tand", when, p)
    return {"targets": targets, "valid": valid, "where": where, "when": when, "aggs": aggs}


# ---- aggregates: TQuel -----------------------------------------------------------------


def tq_agg(a):
    s = "%s(%s" % (a["fn"], D.tq_value(a["arg"]))
    if a["by"]:
        s += " by " + ", ".join(D.tq_value(b) for b in a["by"])
    if a["window"] == "instant":
        s += " for each instant"
    elif a["window"] == "ever":
        s += " for ever"
    elif a["window"]:  # a moving window, in ns or us
        ns = a["window"][1]
        s += " for each %s" % ("%d ns" % ns if ns % 1000 else "%d us" % (ns // 1000))
    if a["where"]:
        s += " where " + D.tq_value(a["where"])
    if a["when"]:
        s += " when " + D.tq_pred(a["when"])
    return s + ")"


def subst(x, f):
    """x with every ("agg", i) node replaced by f(i)."""
    if isinstance(x, tuple):
        if x and x[0] == "agg":
            return f(x[1])
        return tuple(subst(y, f) for y in x)
    return x


def tquel_agg(q, name):
    texts = [tq_agg(a) for a in q["aggs"]]
    q2 = dict(q, targets=[(n, subst(e, lambda i: ("text", texts[i])), b)
                          for n, e, b in q["targets"]],
              where=subst(q["where"], lambda i: ("text", texts[i])),
              when=subst(q["when"], lambda i: ("text", texts[i])),
              valid=subst(q["valid"], lambda i: ("text", texts[i])))
    return D.tquel(q2, name)


# ---- aggregates: expected ---------------------------------------------------------------


def group_key(v):
    return ("ent", v["id"], v["gen"], v["image"]) if isinstance(v, dict) else v


def raw(x, env):
    """A value as a relation stores it (an entity: its dump object)."""
    if x[0] == "attr":
        return env[x[1]][x[2]]
    return D.py_value(x, env)


def order_key(v):
    return v.encode() if isinstance(v, str) else v


def stdev(d):
    """(population standard deviation, mean) of d, summed in ascending order as vigil
    does (a plain loop: Python's sum may compensate)."""
    d = sorted(d)
    total = 0.0
    for x in d:
        total += x
    m = total / len(d)
    sq = 0.0
    for x in d:
        sq += (x - m) * (x - m)
    return math.sqrt(sq / len(d)), m


def time_agg(fn, cs):
    """any, stdev, first, last, rate, avgti, varts of contributions (b, value)."""
    if fn == "any":
        return 1 if cs else 0
    if not cs:
        return None
    if fn == "stdev":
        return stdev([float(v) for _, v in cs])[0]
    f = min(cs, key=lambda c: (c[0], order_key(c[1])))
    lst = max(cs, key=lambda c: (c[0], order_key(c[1])))
    if fn in ("first", "last"):
        return f[1] if fn == "first" else lst[1]
    if fn == "rate":
        if f[0] == lst[0]:
            return None
        return (float(lst[1]) - float(f[1])) / ((lst[0] - f[0]) / 1e9)
    if len(cs) < 2:
        return None
    bs = sorted(b for b, _ in cs)
    if fn == "avgti":
        return (bs[-1] - bs[0]) / 1e9 / (len(bs) - 1)
    sd, m = stdev([float(y - x) for x, y in zip(bs, bs[1:])])
    return None if m == 0 else sd / m


def agg_value(a, vals):
    """The aggregate of the contributions' values; None when it has no value."""
    fn = a["fn"]
    if fn.endswith("U"):
        seen = {}
        for v in vals:
            seen.setdefault((type(v) is float, v), v)
        vals = list(seen.values())
        fn = fn[:-1]
    if fn == "count":
        return len(vals)
    if not vals:
        return None
    if fn == "sum":
        # an integer sum past int64 fails the statement (docs/tquel.md "Values")
        return float(sum(float(v) for v in vals)) if is_double(a["arg"]) else \
            D.checked(sum(vals))
    if fn == "avg":
        return sum(float(v) for v in vals) / len(vals)
    key = (lambda v: v.encode()) if isinstance(vals[0], str) else (lambda v: v)
    return (min if fn == "min" else max)(vals, key=key)


def agg_rows(rows, a, span):
    """The aggregate's relation: [{"b", "e", "g0"..., "value"}], its maximal constant
    intervals per group of the by-list. Per group, a sweep over its points: the cost is the
    contributions valid at each point (all of them only for ever), not all of the group's
    at every point."""
    first, last = span
    horizon = last + 1  # the trace's last instant included
    groups = {}
    vs = a["vars"]
    for combo in itertools.product(*(rows[D.VARS[v]] for v in vs)):
        env = dict(zip(vs, combo))
        if a["where"] and D.py_value(a["where"], env) is not True:
            continue
        if a["when"] and not D.py_pred(a["when"], env):
            continue
        t = D.py_time(D.default_time(vs), env)
        if t is None:
            continue
        v = D.py_value(a["arg"], env) if D.value_type(a["arg"]) != "ent" else \
            group_key(raw(a["arg"], env))
        if v is None:
            continue
        b, e = (t[1], t[1] + 1) if t[0] == "e" else (t[1], t[2])
        by = tuple(raw(x, env) for x in a["by"])
        key = tuple(group_key(x) for x in by)
        groups.setdefault(key, (by, []))[1].append((b, e, v))
    if not a["by"] and a["fn"].startswith(("count", "any")):
        groups.setdefault((), ((), []))  # count is 0 over the trace without contributions
    out = []
    ever = a["window"] == "ever"
    # a moving window of s ns holds a contribution until s - 1 after its end
    extra = a["window"][1] - 1 if isinstance(a["window"], (tuple, list)) else 0
    timed = a["fn"] in ("any", "stdev", "first", "last", "rate", "avgti", "varts")
    for key, (by, cs) in groups.items():
        points = sorted({first, horizon} | {c[0] for c in cs} |
                        (set() if ever else {c[1] + extra for c in cs}))
        # a sweep: the contributions valid at each point, kept in contribution order (the
        # order vigil adds them in), each added and removed once
        adds = sorted(range(len(cs)), key=lambda i: cs[i][0])
        ends = [] if ever else sorted(range(len(cs)), key=lambda i: cs[i][1] + extra)
        active, na, ne = [], 0, 0
        cur = None
        for p, p2 in zip(points, points[1:]):
            while na < len(adds) and cs[adds[na]][0] <= p:
                bisect.insort(active, adds[na])
                na += 1
            while ne < len(ends) and cs[ends[ne]][1] + extra <= p:
                i = bisect.bisect_left(active, ends[ne])
                if i < len(active) and active[i] == ends[ne]:
                    del active[i]
                ne += 1
            if p < first or p >= horizon:
                continue
            now = [cs[i] for i in active]
            val = time_agg(a["fn"], [(c[0], c[2]) for c in now]) if timed else \
                agg_value(a, [c[2] for c in now])
            if val is None:
                if cur:
                    out.append(cur)
                cur = None
                continue
            if cur and cur["e"] == p and cur["value"] == val and \
                    type(cur["value"]) is type(val):
                cur["e"] = min(p2, horizon)
                continue
            if cur:
                out.append(cur)
            cur = {"b": p, "e": min(p2, horizon), "value": val}
            cur.update(("g%d" % i, x) for i, x in enumerate(by))
        if cur:
            out.append(cur)
    return out


def value_type_agg(a):
    if a["fn"].startswith(("count", "sum", "avg", "any", "stdev", "rate", "varts")):
        return "num"
    return D.value_type(a["arg"])


def vars_in(x):
    return D.variables_of({"targets": [("x", x, False)], "valid": None, "where": None,
                           "when": None})


def outer_vars(q):
    """The variables the statement mentions outside its aggregates."""
    return D.variables_of(dict(q, aggs=None))


def expand(q, tag):
    """The aggregate query as a plain one over variables G<tag>_<i> that range over the
    aggregates' relations: correlated by-items become equalities; with a valid clause,
    the aggregate's interval must overlap the result's valid time."""
    outer = set(outer_vars(q))
    gv = ["G%s_%d" % (tag, i) for i in range(len(q["aggs"]))]
    where, when = q["where"], q["when"]
    where = subst(where, lambda i: ("attr", gv[i], "value"))
    # in when and valid clauses an aggregate is the valid time of its value
    when = subst(when, lambda i: ("var", gv[i]))
    valid = subst(q["valid"], lambda i: ("var", gv[i]))
    for i, a in enumerate(q["aggs"]):
        for k, b in enumerate(a["by"]):
            if set(vars_in(b)) <= outer:
                c = ("cmp", "=", b, ("attr", gv[i], "g%d" % k))
                where = c if where is None else ("and", where, c)
        v = valid
        if v:
            y = v[1] if v[0] == "at" else ("extend", v[1], v[2])
            c = ("toverlap", ("var", gv[i]), y)
            when = c if when is None else ("tand", when, c)
    targets = [(n, subst(e, lambda i: ("attr", gv[i], "value")), b)
               for n, e, b in q["targets"]]
    return {"targets": targets, "valid": valid, "where": where, "when": when,
            "asof": q.get("asof")}, gv


# ---- results ranged over and clocks ----------------------------------------------------


def result_relation(name, q, expected_raw):
    """Registers the expected result of q as relation `name` and returns its rows."""
    kind = D.result_kind(q, D.variables_of(q))
    attrs = [(n, D.value_type(e)) for n, e, _ in q["targets"]]
    D.SCHEMA[name] = (kind, attrs)
    rows = []
    for t in expected_raw:
        times, vals = (t[1:2], t[2:]) if kind == "event" else (t[1:3], t[3:])
        row = {"b": times[0], "e": times[-1]}
        for (n, _), v in zip(attrs, vals):
            if isinstance(v, tuple) and v[0] == "ent":
                v = {"name": v[1], "id": v[2], "gen": v[3], "image": v[4]}
            row[n] = v
        rows.append(row)
    return rows


def clock_rows(span, every, tick_ns):
    first, last = span
    return [{"b": t, "e": t} for t in range(first, last + 1, every * tick_ns)]


# ---- running ---------------------------------------------------------------------------


class Case:
    """One statement to check: its TQuel, the plain query SQLite answers, the expected set."""

    def __init__(self, name, text, plain, expected):
        self.name, self.text, self.plain, self.expected = name, text, plain, expected


def run_seed(args, seed, work):
    trace = D.record(args.bin, seed, args.events, work)
    rows = D.load_trace(args.bin, trace)
    span = rows["_span"]
    rng = random.Random(seed * 7919 + 1)
    asof_rng = random.Random(seed * 7919 + 2)
    every = rng.choice([2, 3, 5])
    tick_ns = rng.choice([20, 50, 100]) * 1000
    clocks = {"C1": "Clock[%d]" % every, "C2": "Clock"}
    D.VARS.clear()
    D.VARS.update(BASE_VARS)
    D.VARS.update(clocks)
    for v, rel in clocks.items():
        D.SCHEMA[rel] = ("event", [])
        rows[rel] = clock_rows(span, every if rel != "Clock" else 1, tick_ns)
    db = D.make_db(rows)  # (interrupted past the budget: D.sqlite_over_budget)
    text = D.range_lines()
    cases = []
    problems = []
    overflowing = []  # aggregate statements whose sums overflow: each run alone

    def line():
        return text.count("\n") + 1

    def sizes(rels):
        return lambda: {r: len(rows[r]) for r in rels}

    def within_budget(what, rels):
        return D.budget(args, seed, what, sizes(rels),
                        lambda: save(args, seed, trace, text + what() + "\n", "over budget"))

    def cross(vs):
        n = 1
        for v in vs:
            n *= len(rows[D.VARS[v]])
        return n

    # aggregates
    n_agg = tries = 0
    while n_agg < args.queries:
        q = gen_agg_query(rng, set(BASE_VARS), set(clocks))
        tries += 1
        tag = "%d" % tries
        # The references cost their cross products: agg_rows loops over the product of
        # each aggregate's variables (a clock's ticks grow with the trace's span, longer
        # on a loaded machine), and SQLite joins the expansion's variables with nested
        # loops (its temporal conditions are CASE expressions no index serves: seed
        # 1510002703's 5 variables of 46 x 147 x 358 x 84 x 50 tuples ran over 10 minutes).
        # Statements past --agg-limit or --sql-limit are not generated; those generated
        # are still compared in full.
        if any(cross(a["vars"]) > args.agg_limit for a in q["aggs"]):
            continue
        # as of an instant (diff_test.py's: the trace as recorded up to it), when no clock
        # takes part: the aggregates over the relations cut there, their time lines ending
        # at its "now" (docs/tquel.md "as of"). Drawn from a generator of its own: the
        # statements are those the seed gave before, some as of an instant.
        if asof_rng.random() < 0.15 and not set(clocks) & (
                {v for a in q["aggs"] for v in a["vars"]} | set(outer_vars(q))):
            q["asof"] = D.Gen(asof_rng, [], rows).asof()
        asof = q.get("asof")
        seen, seen_span = (D.rows_asof(rows, asof), (span[0], asof[4])) if asof else (rows,
                                                                                        span)
        plain, gv = expand(q, tag)
        rels = ["agg_%s_%d" % (tag, i) for i in range(len(q["aggs"]))]
        stmt = lambda: tquel_agg(q, "X")  # noqa: E731
        with within_budget(stmt, sorted({D.VARS[v] for a in q["aggs"] for v in a["vars"]})):
            try:
                for i, a in enumerate(q["aggs"]):
                    D.VARS[gv[i]] = rels[i]
                    D.SCHEMA[rels[i]] = ("interval", [("g%d" % k, D.value_type(b))
                                                      for k, b in enumerate(a["by"])] +
                                         [("value", value_type_agg(a))])
                    rows[rels[i]] = agg_rows(seen, a, seen_span)
                    D.make_db(rows, db, [rels[i]])
            except D.Overflow:
                # vigil computes every aggregate at every instant of every group before
                # the statement: an integer sum past int64 there must fail it
                if len(overflowing) < args.max_overflows:
                    overflowing.append(tquel_agg(q, "OV%d" % len(overflowing)))
                continue
        if D.combos(rows, plain) > args.sql_limit:
            continue
        with within_budget(stmt, [D.VARS[v] for v in D.variables_of(plain)]):
            exp = D.sql_answer(db, plain)
            if len(exp) > args.cap or (not exp and rng.random() < 0.7):
                continue
            if D.combos(rows, plain) <= args.py_limit:
                pa = D.py_answer(rows, plain)
                if pa != exp:
                    problems.append("harness: Python and SQLite disagree on %s:\n%s\n%s" %
                                    (tquel_agg(q, "X"), D.show(pa - exp), D.show(exp - pa)))
        name = "retrieve@%d" % line() if n_agg % 4 == 3 else "G%d" % n_agg
        t = tquel_agg(q, name)
        text += t + "\n"
        cases.append(Case(name, t, plain, exp))
        n_agg += 1

    # results ranged over: retrieve into R<i>, then range of X<i> is R<i>
    n_res = 0
    while n_res < args.queries // 3:
        vs = rng.sample(sorted(BASE_VARS), rng.choice([1, 1, 2]))
        q1 = D.Gen(rng, vs).query()
        if not D.variables_of(q1) or D.combos(rows, q1) > args.py_limit:
            continue
        if args.avoid_known and "/" in repr(q1["targets"]):
            continue  # a null (x / 0) in a result reads back as 0
        rname, xvar = "R%d" % n_res, "X%d" % n_res
        with within_budget(lambda: D.tquel(q1, rname), [D.VARS[v] for v in D.variables_of(q1)]):
            exp1 = D.sql_answer(db, q1)
            if not exp1 or len(exp1) > 300:
                continue
            rows[rname] = result_relation(rname, q1, D.py_answer(rows, q1, raw=True))
        D.make_db(rows, db, [rname])
        D.VARS[xvar] = rname
        other = [] if rng.random() < 0.4 else [rng.choice(sorted(BASE_VARS))]
        for _ in range(20):
            q2 = D.Gen(rng, [xvar] + other).query()
            if xvar in D.variables_of(q2):
                break
        exp2 = None
        if D.combos(rows, q2) <= args.sql_limit:  # (bounded as the aggregates are)
            with within_budget(lambda: "range of %s is %s\n%s" % (xvar, rname, D.tquel(
                    q2, "S%d" % n_res)), [D.VARS[v] for v in D.variables_of(q2)]):
                exp2 = D.sql_answer(db, q2)
        if exp2 is None or len(exp2) > args.cap:
            del D.VARS[xvar]
            db.execute("DROP TABLE %s" % D.sql_table(rname))  # R<n_res> is drawn again
            continue
        t1 = D.tquel(q1, rname)
        text += t1 + "\n"
        cases.append(Case(rname, t1, q1, exp1))
        text += "range of %s is %s\n" % (xvar, rname)
        t2 = D.tquel(q2, "S%d" % n_res)
        text += t2 + "\n"
        cases.append(Case("S%d" % n_res, "range of %s is %s\n%s" % (xvar, rname, t2), q2,
                          exp2))
        n_res += 1

    # clocks: C1 (Clock[every]) and C2 (Clock) sampling the trace's relations
    n_clk = 0
    while n_clk < args.queries // 3:
        c = rng.choice(sorted(clocks))
        vs = [c] + rng.sample(sorted(BASE_VARS), rng.choice([1, 1, 2]))
        q = D.Gen(rng, vs).query()
        if rng.random() < 0.7:
            p = ("toverlap", ("var", c), ("var", vs[1]))
            q["when"] = p if not q["when"] or rng.random() < 0.5 else ("tand", p, q["when"])
        if c not in D.variables_of(q) or D.combos(rows, q) > args.sql_limit:
            continue  # (bounded as the aggregates are)
        name = "K%d" % n_clk
        with within_budget(lambda: D.tquel(q, name), [D.VARS[v] for v in D.variables_of(q)]):
            exp = D.sql_answer(db, q)
        if len(exp) > args.cap or (not exp and rng.random() < 0.7):
            continue
        t = D.tquel(q, name)
        text += t + "\n"
        cases.append(Case(name, t, q, exp))
        n_clk += 1

    if args.keep:
        with open(os.path.join(work, "agg-%d.tq" % seed), "w") as f:
            f.write(text)
    tick = "%dns" % tick_ns
    print("seed %d: %s; %d statements (%d aggregate, %d of them as of an instant, %d "
          "into/over results, %d clock), --tick %s, %s every %d; %d expected tuples" %
          (seed, {r: len(rows[r]) for r in ("A", "B", "E")}, len(cases), n_agg,
           sum(1 for c in cases if c.plain.get("asof")), 2 * n_res, n_clk, tick, clocks["C1"],
           every, sum(len(c.expected) for c in cases)))
    for p in problems:
        print(p)
    out, p = D.vigil_answers(args.bin, trace, text, ["--tick", tick], threads=D.THREADS)
    if p.returncode != 0:
        print("seed %d: vigil query exited %d:\n%s" % (seed, p.returncode, p.stderr[-3000:]))
        save(args, seed, trace, text, "rejected")
        return False
    # the same statements on one thread: the same output, in the same order
    ok = D.same_on_one_thread(args.bin, trace, text, p, ["--tick", tick]) and not problems
    if not args.avoid_known:
        ok = check_last_tick(args, seed, trace, rows) and ok
    failures = 0
    for c in cases:
        got = set(D.vigil_set(out.get(c.name, []), c.plain))
        only_v, only_e = got - c.expected, c.expected - got
        if only_v or only_e:
            ok = False
            failures += 1
            print("MISMATCH (seed %d, %s, --tick %s)\n--- TQuel:\n%s\n--- SQL of the "
                  "expansion:\n%s\n  only in vigil (%d):\n%s  only expected (%d):\n%s" %
                  (seed, c.name, tick, c.text, D.sql(c.plain), len(only_v), D.show(only_v),
                   len(only_e), D.show(only_e)), end="")
            if failures >= args.max_failures:
                print("seed %d: stopping after %d mismatches" % (seed, failures))
                break
    ok = check_overflowing(args, seed, trace, overflowing, clocks, tick) and ok
    if args.pg:
        ok = aggregates_on_store(args, seed, trace, cases, out, clocks, tick) and ok
    if not ok:
        save(args, seed, trace, text, "mismatch")
    else:
        print("seed %d: vigil answered %d tuples in %d results, all as expected" %
              (seed, sum(len(v) for v in out.values()), len(out)))
    return ok


def check_overflowing(args, seed, trace, overflowing, clocks, tick):
    """Each statement with an integer sum past int64 in the reference, alone: exit 2,
    nothing printed, vigil's line naming the sum (at 1 and THREADS threads)."""
    ok = True
    ranges = "".join("range of %s is %s\n" % (v, r)
                     for v, r in list(BASE_VARS.items()) + list(clocks.items()))
    for i, t in enumerate(overflowing):
        text = ranges + t + "\n"
        for threads in (D.THREADS, 1):
            out, p = D.vigil_answers(args.bin, trace, text, ["--tick", tick], threads=threads)
            lines = p.stderr.splitlines()
            if p.returncode != 2 or p.stdout or len(lines) != 3 or not re.match(
                    r"^.*:\d+:\d+: error: OV%d: integer overflow in sum.*: the sum of \d+ "
                    r"values? is past the 64-bit integers$" % i, lines[0]):
                ok = False
                print("OVERFLOW MISMATCH (seed %d, OV%d, %d threads): a sum past int64 in "
                      "the reference must fail the statement\n--- TQuel:\n%s\n  vigil (exit "
                      "%d): %s" % (seed, i, threads, t, p.returncode,
                                   p.stderr[-1500:] or "%d results" % len(out)))
                save(args, seed, trace, text, "overflow")
                break
    print("seed %d: %d aggregate statements with a sum past int64, each failed alone%s" %
          (seed, len(overflowing), "" if ok else ": MISMATCH"))
    return ok


def aggregates_on_store(args, seed, trace, cases, out, clocks, tick):
    """--pg: the aggregate statements and those over clocks compiled to SQL on the
    PostgreSQL store (vigil store, then one vigil query postgresql:// run with all of them,
    over the trace's own relations and the clocks, the same --tick): each answer equal, as
    a set, to the trace's (stdev and varts too: the same doubles). Every one must be
    compiled; when the run fails, the statements are run one by one to name the culprit."""
    url, schema = args.pg.url(), "agg%d" % seed
    p = subprocess.run([os.path.join(args.bin, "vigil"), "store", trace, "--to", url,
                          "--schema", schema, "-q"], capture_output=True, text=True)
    if p.returncode:
        print("seed %d: vigil store exited %d: %s" % (seed, p.returncode, p.stderr))
        return False
    ranges = "".join("range of %s is %s\n" % (v, r)
                     for v, r in list(BASE_VARS.items()) + list(clocks.items()))
    extra = ["--schema", schema, "--tick", tick]
    # one text; an unnamed retrieve's result is named by its line there
    text, named = ranges, []
    for c in cases:
        if c.name.startswith(("G", "retrieve@", "K")) and not c.plain.get("asof"):
            # (as of is refused on the store: it keeps valid times only)
            line = text.count("\n") + 1
            named.append(("retrieve@%d" % line if c.name.startswith("retrieve@") else c.name,
                          c))
            text += c.text + "\n"
    got, p = D.vigil_answers(args.bin, url, text, extra)
    if p.returncode:
        print("seed %d: vigil query on the store exited %d:\n%s" %
              (seed, p.returncode, p.stderr[-2000:]))
        for _, c in named:
            _, p1 = D.vigil_answers(args.bin, url, ranges + c.text + "\n", extra)
            if p1.returncode:
                print("--- %s (exit %d):\n%s\n%s" % (c.name, p1.returncode, c.text,
                                                   p1.stderr[-2000:]))
                break
        return False
    ok, clocked = True, 0
    kinds = {"stdev": 0, "varts": 0, "valid/when": 0}
    for name, c in named:
        clocked += bool(re.search(r"\bC[12]\b", c.text))
        for what, needle in (("stdev", "stdev("), ("varts", "varts(")):
            kinds[what] += needle in c.text
        kinds["valid/when"] += bool(re.search(r"(of|when|overlap|precede|equal|from|to) *"
                                              r"[a-zA-Z]+\(", c.text))
        want = set(D.vigil_set(out.get(c.name, []), c.plain))
        have = D.vigil_set(got.get(name, []), c.plain)
        if set(have) != want or len(have) != len(set(have)):
            ok = False
            print("MISMATCH on the store (seed %d, %s)\n--- TQuel:\n%s\n  only on the "
                  "store (%d):\n%s  only over the trace (%d):\n%s" %
                  (seed, c.name, c.text, len(set(have) - want), D.show(set(have) - want),
                   len(want - set(have)), D.show(want - set(have))), end="")
    unknown = set(got) - {n for n, _ in named}
    if unknown:
        ok = False
        print("seed %d: the store's run printed unknown results %s" % (seed, sorted(unknown)))
    print("seed %d: on the PostgreSQL store, %d statements compared (with stdev %d, varts %d, "
          "an aggregate in a valid or when clause %d, clocks %d)%s" %
          (seed, len(named), kinds["stdev"], kinds["varts"], kinds["valid/when"], clocked,
           "" if ok else ": MISMATCH"))
    return ok


def check_last_tick(args, seed, trace, rows):
    """With --tick = the trace's span, Clock ticks at its first and its last event; count
    over the ticks is then 1, 0, 1 (the last 1 over the trace's last instant), and nothing
    after (the random statements rarely have a tick at the last event)."""
    first, last = rows["_span"]
    D.SCHEMA["Clock"] = ("event", [])
    D.VARS["C2"] = "Clock"
    rows = dict(rows, Clock=clock_rows((first, last), 1, last - first))
    a = {"fn": "count", "arg": ("int", 1), "by": [], "window": None, "where": None,
         "when": ("toverlap", ("var", "C2"), ("var", "C2")), "vars": ["C2"]}
    exp = {("interval", r["b"], r["e"], r["value"]) for r in agg_rows(rows, a, (first, last))}
    text = "range of C2 is Clock\nretrieve (N = count(1 when C2 overlap C2))\n"
    out, p = D.vigil_answers(args.bin, trace, text, ["--tick", "%dns" % (last - first)])
    got = {("interval",) + t + (v["N"],) for _, t, v in out.get("retrieve@2", [])}
    if p.returncode == 0 and got == exp:
        return True
    print("MISMATCH (seed %d, a clock tick at the last event, --tick %dns; first %d, last %d)"
          "\n--- TQuel:\n%s  vigil (exit %d):\n%s  expected:\n%s" %
          (seed, last - first, first, last, text, p.returncode, D.show(got, 9),
           D.show(exp, 9)))
    return False


def save(args, seed, trace, text, why):
    d = os.path.join(args.fail_dir, "agg-seed%d" % seed)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    shutil.copytree(trace, os.path.join(d, "trace"))
    with open(os.path.join(d, "query.tq"), "w") as f:
        f.write(text)
    print("  saved (%s): %s/query.tq and %s/trace" % (why, d, d))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="the build's bin directory")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--fresh", action="store_true",
                    help="one more seed: VIGIL_SEED, or a new one (printed)")
    ap.add_argument("--queries", type=int, default=60, help="aggregate statements per seed")
    ap.add_argument("--events", type=int, default=160, help="per trace")
    ap.add_argument("--cap", type=int, default=3000, help="largest answer generated")
    ap.add_argument("--py-limit", type=int, default=3000,
                    help="largest cross product the Python evaluator checks")
    ap.add_argument("--sql-limit", type=int, default=50_000_000,
                    help="largest cross product of a statement's variables generated "
                    "(SQLite joins them with nested loops)")
    ap.add_argument("--agg-limit", type=int, default=1_000_000,
                    help="largest cross product of an aggregate's own variables generated")
    ap.add_argument("--budget", type=float, default=60,
                    help="CPU seconds the expected answer of one statement may take; past "
                    "them the statement and seed are printed and the run fails")
    ap.add_argument("--max-overflows", type=int, default=5,
                    help="aggregate statements with a sum past int64 checked per seed "
                    "(each alone)")
    ap.add_argument("--fail-dir", default="diff_failures")
    ap.add_argument("--max-failures", type=int, default=10, help="per seed")
    ap.add_argument("--keep", help="record the traces here and keep them")
    ap.add_argument("--avoid-known", action="store_true",
                    help="generate no case of the engine bugs known on 2026-11-22: null "
                    "values in results ranged over, clock ticks at the trace's last event")
    ap.add_argument("--pg", metavar="PG_BIN",
                    help="also run the aggregate statements on a PostgreSQL store (Debian's "
                         "server in PG_BIN, started here)")
    args = ap.parse_args()
    D.watch_budget()
    work = args.keep or tempfile.mkdtemp(prefix="vigil-diffagg-")
    os.makedirs(work, exist_ok=True)
    schema = dict(D.SCHEMA)
    try:
        if args.pg:
            args.pg = D.start_pg(args.pg, args.bin)
        ok = True
        for s in D.seed_list(args):
            D.SCHEMA.clear()
            D.SCHEMA.update(schema)
            ok = run_seed(args, s, work) and ok
    finally:
        if args.pg:
            args.pg.cleanup()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("query.diff.aggregates: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
