#!/usr/bin/python3
"""Differential test of the TQuel engine against SQLite (docs/tquel.md, *What a query means*).

For each seed: records a random trace (diff_subject SEED N under `vigil record`), loads its
relations A, B, E (diff_dump) into SQLite, generates random retrieves over 1-3 tuple
variables, each with its SQL, runs all of them in one `vigil query --format json` and
compares every result with the SQL answer as a set of (kind, times, values). Where the
cross product is small, a tiny Python evaluator of the same semantics is a third opinion.
Integer overflow (an error in vigil, docs/tquel.md "Values"): a statement the exact Python
evaluator finds past int64 must fail (or, where the plan decides, may fail or answer
exactly), each checked alone (overflow_class); --big-ints draws literals near the bounds.
Statements with time or key selections on an event variable (some are given one on
purpose) are run alone too, with VIGIL_CACHE=off, so that the selections reach the build
(docs/query.md "How selections reach decoding"), at 1 and 2 threads and with
VIGIL_SKIP=off, and so are nine simple key-selected statements over E.

    diff_test.py --bin BUILD/bin [--seeds 1,2,3] [--fresh] [--queries 100] [--events 240]
    --fresh: one more seed, new each run and printed; VIGIL_SEED=N makes it N
    diff_test.py --bin BUILD/bin --selfcheck        # SQL vs the Python evaluator only
    diff_test.py --bin BUILD/bin --replay CASE.json # one saved failing case again
    --empty-is-value: compare an unnamed entity as if named "" (the docs say: no name, null)
    --keep DIR: keep the traces and the generated queries-SEED.tq there
    --derived: range over the derived relations LogEvent and Transition too
    --budget S: each SQLite answer within S seconds of CPU time, or the seed and statement
    are printed and saved and the run exits 1 (kill -USR1 PID prints where it is);
    --sql-limit N: statements whose variables' cross product is past N are not generated

On a mismatch it prints the seed, the TQuel, the SQL and up to 5 tuples only in each side,
saves the case (with a copy of the trace) under --fail-dir for --replay, and exits 1."""
import argparse
import contextlib
import datetime
import faulthandler
import itertools
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

# ---- the relations ---------------------------------------------------------------------

# relation -> (kind, [(attribute, type)]); types: num, str, ent, uint (an unsigned 64-bit
# integer: compared with numbers, never in arithmetic; SQLite holds it as a REAL, exact for
# the values diff_subject draws but 2^64 - 1, which stays the largest, and as text u_txt
# to print it exactly)
SCHEMA = {
    "A": ("interval", [("key", "num"), ("val", "num"), ("tag", "str"), ("owner", "ent"),
                       ("u", "uint")]),
    "B": ("interval", [("key", "num"), ("val", "num")]),
    "E": ("event", [("key", "num"), ("val", "num"), ("tag", "str"), ("u", "uint")]),
}
# tuple variables, declared once at the top of every query file
VARS = {"A1": "A", "A2": "A", "A3": "A", "B1": "B", "B2": "B", "E1": "E", "E2": "E"}
# --derived: derived relations every trace has (docs/tquel.md "Derived relations"), built
# by vigil when a query names them, ranged over beside the recorded ones
DERIVED_SCHEMA = {
    "LogEvent": ("event", [("name", "str"), ("site", "str"), ("thread", "ent")]),
    "Transition": ("interval", [("duration", "num"), ("from_event", "str"),
                                ("to_event", "str"), ("thread", "ent")]),
}
DERIVED_VARS = {"L1": "LogEvent", "T1": "Transition", "T2": "Transition"}
# an entity attribute's kind, where it is not the default entity_kind gives: how vigil
# displays it unnamed (Kind#id), and which attributes compare (those of one kind)
ENT_KINDS = {}
# names an entity attribute is compared with (diff_derived.py adds its traces' names)
ENT_NAMES = ["O1", "O2", "O3", "O4", "", "Owner#4"]
# (relation, attribute) of entities that print alike though distinct (diff_derived.py: the
# three-tier example's threads are all named three_tier); answers compared as sets still
AMBIGUOUS = set()


def entity_kind(rel, attr):
    return ENT_KINDS.get((rel, attr), "OSThread" if attr == "thread" else "Owner")


def use_derived():
    SCHEMA.update(DERIVED_SCHEMA)
    VARS.update(DERIVED_VARS)


def is_event_var(v):
    return SCHEMA[VARS[v]][0] == "event"


def entity_display(ent, kind="Owner"):
    """How vigil prints an entity value: its name, or Kind#id without one."""
    return ent["name"] if ent["name"] is not None else "%s#%d" % (kind, ent["id"])


# --big-ints P: the share of integer literals drawn near the int64 bounds (so that integer
# overflow, an error in vigil, is met by every seed); 0 leaves the random stream as it was
BIG_INTS = [0.0]

# docs/tquel.md: an empty string is a value; an entity never named has no name (compared
# with a string: null). --empty-is-value compares it as if named "" instead.
EMPTY_IS_VALUE = False


def load_trace(bin_dir, trace):
    """{relation: [row]} with row = {"b", "e", attrs...}; an event has b = e = at; an
    entity attribute is its dump object {name, id, gen, image}; a uint an int. "_span" is
    (first, last): the times of the trace's first and last events. An interval still open
    at the end of the trace ends at its last event (docs/tquel.md "Time": the instant
    "now" is): set so here, not taken from vigil's tuple, which must say the same;
    "_open" counts them by relation."""
    rels = list(SCHEMA)  # A, B, E (and --derived's); diff_derived.py sets its own
    p = subprocess.run([os.path.join(bin_dir, "diff_dump"), trace] + rels,
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("diff_dump %s exited %d: %s" % (trace, p.returncode, p.stderr))
    rows = {r: [] for r in rels}
    rows["_open"] = {}
    still_open = []  # (row, vigil's end, line): ended at the span's last once it is read
    intervals = []  # (relation, row) of the kind interval: none may be empty
    for line in p.stdout.splitlines():
        o = json.loads(line)
        if "span" in o:
            rows["_span"] = (o["span"]["first"], o["span"]["last"])
            continue
        row = dict(o["values"])
        for a, t in SCHEMA[o["relation"]][1]:
            if t == "uint" and row[a] is not None:
                row[a] = int(row[a])
        if EMPTY_IS_VALUE:  # an unnamed entity compared as if named ""
            for a, v in row.items():
                if isinstance(v, dict) and v["name"] is None:
                    v["name"] = ""
        row["b"] = o["from"]
        if o["kind"] == "event":
            row["e"] = o["from"]
        elif o["to"] is None:
            sys.exit("trace %s: %s has an interval without an end: %s" %
                     (trace, o["relation"], line))
        elif o.get("open"):
            still_open.append((row, o["to"], line))
            rows["_open"][o["relation"]] = rows["_open"].get(o["relation"], 0) + 1
        else:
            row["e"] = o["to"]
        rows[o["relation"]].append(row)
        if o["kind"] == "interval":
            intervals.append((o["relation"], row))
    if "_span" not in rows:
        sys.exit("diff_dump %s: no span line" % trace)
    for row, vigil_end, line in still_open:
        row["e"] = rows["_span"][1]
        if vigil_end != row["e"]:
            sys.exit("trace %s: an interval still open at the end ends at %d, not at the "
                     "trace's last event %d: %s" % (trace, vigil_end, row["e"], line))
    for rel, row in intervals:
        if not row["b"] < row["e"]:
            sys.exit("trace %s: %s has an empty interval %s; the test assumes none" %
                     (trace, rel, row))
    return rows


def sql_table(rel):
    """A relation's SQL table name ("Clock[3]" is not an SQL name)."""
    return "".join(c if c.isalnum() else "_" for c in rel)


def make_db(rows, db=None, relations=None):
    """Loads the relations (all of SCHEMA, or those named) into SQLite."""
    if db is None:
        db = sqlite3.connect(":memory:")
        db.set_progress_handler(sqlite_over_budget, 20000)  # interrupted past a budget
    for rel in relations or [r for r in SCHEMA if r in rows]:
        attrs = SCHEMA[rel][1]
        cols = []
        for a, t in attrs:
            cols += (["%s_name" % a, "%s_id" % a, "%s_disp" % a] if t == "ent" else
                     [a, "%s_txt" % a] if t == "uint" else [a])
        db.execute("CREATE TABLE %s (%s)" % (sql_table(rel), ", ".join(
            cols + ["b INTEGER", "e INTEGER"])))
        data = []
        for r in rows[rel]:
            vals = []
            for a, t in attrs:
                v = r[a]
                if t == "ent":
                    vals += [v["name"], "%d.%d.%d" % (v["id"], v["gen"], v["image"]),
                             entity_display(v, entity_kind(rel, a))]
                elif t == "uint":  # sqlite3 binds no integer above 2^63 - 1
                    vals += [None, None] if v is None else [float(v), str(v)]
                else:
                    vals.append(v)
            data.append(vals + [r["b"], r["e"]])
        db.executemany("INSERT INTO %s VALUES (%s)" % (sql_table(rel), ",".join(
            "?" * (len(cols) + 2))), data)
    return db


# ---- query generation ------------------------------------------------------------------
# Value expressions (tuples): ("attr", V, a) ("int", n) ("real", x) ("str", s) ("neg", x)
# ("bin", op, x, y) ("cmp", op, x, y) ("and", x, y) ("or", x, y) ("not", x).
# Temporal expressions: ("var", V) ("begin", x) ("end", x) ("overlap", x, y) ("extend", x, y)
# ("const", text, ns): a temporal constant, an event at ns.
# Predicates: ("precede", x, y) ("toverlap", x, y) ("equal", x, y) ("tand", p, q)
# ("tor", p, q) ("tnot", p).


class Gen:
    def __init__(self, rng, variables, rows=None):
        """rows: the trace's relations, for temporal constants near its times (none
        without them)."""
        self.r = rng
        self.vars = variables
        self.rows = rows
        self.now = None  # "now" under as of

    def asof(self):
        """as of (docs/tquel.md "as of"): ("at", at, through, until, now), at and through
        temporal constants (through may be None). The statement ranges over the trace as
        recorded up to `until` (through's instant, else at's): tuples that began by then,
        intervals not yet ended cut at `now`, the last event recorded by then. The instant
        is one of the trace's events (an end, or an E) where no interval begins, "now" or
        "forever", so that `now` is known here without every event's time: the instant
        itself, or the trace's last event."""
        first, last = self.rows["_span"]
        r = self.r.random()
        if r < 0.15:
            at = ("const", "now", last)
        elif r < 0.25:
            at = ("const", "forever", 2**63 - 1)
        else:
            begins = {x["b"] for rel in ("A", "B") for x in self.rows[rel]}
            times = sorted({x["e"] for rel in ("A", "B") for x in self.rows[rel]} |
                           {x["b"] for x in self.rows["E"]})
            t = self.r.choice([t for t in times if t not in begins])
            at = ("const", date_text(t, self.r), t)
        through = None
        if self.r.random() < 0.3:  # as of E through at: what at gives
            through = at
            if self.r.random() < 0.3:
                at = ("const", "beginning", -2**63)
            else:
                t = self.r.randint(first - 10, min(through[2], last + 10))
                at = ("const", date_text(t, self.r), t)
        until = (through or at)[2]
        return ("at", at, through, until, min(until, last))

    def attrs_of(self, typ, vs=None):
        return [(v, a) for v in (vs or self.vars) for a, t in SCHEMA[VARS[v]][1] if t == typ]

    def num(self, depth):
        r = self.r.random()
        if depth <= 0 or r < 0.45:
            if self.r.random() < 0.7 and self.attrs_of("num"):
                v, a = self.r.choice(self.attrs_of("num"))
                return ("attr", v, a)
            if self.r.random() < 0.1:
                return ("real", self.r.choice(["2.5", "0.5", "0.0", "3.0"]))
            if BIG_INTS[0] and self.r.random() < BIG_INTS[0]:  # near the int64 bounds
                return ("int", self.r.choice([3037000500, 2**62, 2**63 - 1]))
            return ("int", self.r.randint(0, 5))
        if r < 0.55:
            return ("neg", self.num(depth - 1))
        return ("bin", self.r.choice("+-*/"), self.num(depth - 1), self.num(depth - 1))

    def cond(self, depth):
        r = self.r.random()
        if depth > 0 and r < 0.3:
            op = self.r.choice(["and", "or", "not"])
            if op == "not":
                return ("not", self.cond(depth - 1))
            return (op, self.cond(depth - 1), self.cond(depth - 1))
        r = self.r.random()
        strs, ents = self.attrs_of("str"), self.attrs_of("ent")
        if r < 0.15 and strs:
            v, a = self.r.choice(strs)
            x = ("attr", v, a)
            if self.r.random() < 0.4 and len(strs) > 1:
                v2, a2 = self.r.choice(strs)
                y = ("attr", v2, a2)
            else:
                y = ("str", self.r.choice(["x", "y", "z", "w", ""]))
            if self.r.random() < 0.5:
                x, y = y, x
            return ("cmp", self.r.choice(["=", "!=", "<", "<=", ">", ">="]), x, y)
        uints = self.attrs_of("uint")
        if 0.3 <= r < 0.42 and uints:  # unsigned with unsigned, signed, negative
            v, a = self.r.choice(uints)
            x = ("attr", v, a)
            r2 = self.r.random()
            if r2 < 0.3:
                v2, a2 = self.r.choice(uints)
                y = ("attr", v2, a2)
            elif r2 < 0.6:
                y = ("neg", ("int", self.r.choice([0, 1, 5])))
            else:
                y = self.num(self.r.choice([0, 1]))
            if self.r.random() < 0.5:
                x, y = y, x
            return ("cmp", self.r.choice(["=", "!=", "<", "<=", ">", ">="]), x, y)
        if r < 0.3 and ents:
            v, a = self.r.choice(ents)
            x = ("attr", v, a)
            # (entities of two kinds, an owner and a thread, are never comparable)
            kind = entity_kind(VARS[v], a)
            same = [e for e in ents if e != (v, a) and entity_kind(VARS[e[0]], e[1]) == kind]
            if self.r.random() < 0.4 and same:
                v2, a2 = self.r.choice(same)
                y = ("attr", v2, a2)
            else:
                y = ("str", self.r.choice(ENT_NAMES))
            if self.r.random() < 0.3:
                x, y = y, x
            return ("cmp", self.r.choice(["=", "!="]), x, y)
        return ("cmp", self.r.choice(["=", "!=", "<", "<=", ">", ">="]),
                self.num(self.r.choice([0, 0, 1, 2])), self.num(self.r.choice([0, 0, 1])))

    def constant(self):
        """A temporal constant ("const", text, ns): "now" (the trace's last event; under
        as of, the last event recorded by then), "beginning", "forever", or a date at or
        next to one of the trace's times."""
        first, last = self.rows["_span"]
        r = self.r.random()
        if r < 0.25:
            return ("const", self.r.choice(["now", "NOW", "Now"]),
                    last if self.now is None else self.now)
        if r < 0.35:
            return ("const", "beginning", -2**63)
        if r < 0.45:
            return ("const", "forever", 2**63 - 1)
        # (diff_derived.py's traces have no A, B, E: their own relations' times)
        rels = [r for r in ("A", "B", "E") if r in self.rows] or \
            [r for r in SCHEMA if r in self.rows]
        times = [x[k] for rel in rels for x in self.rows[rel] for k in ("b", "e")]
        t = self.r.choice(times) + self.r.choice([-1, 0, 0, 0, 1]) if self.r.random() < 0.8 \
            else self.r.randint(first - 10, last + 10)
        return ("const", date_text(t, self.r), t)

    def texpr(self, depth):
        r = self.r.random()
        if self.rows and r < 0.08:
            return self.constant()
        if depth <= 0 or r < 0.5:
            return ("var", self.r.choice(self.vars))
        if r < 0.6:
            return ("begin", self.texpr(depth - 1))
        if r < 0.7:
            return ("end", self.texpr(depth - 1))
        return (self.r.choice(["overlap", "extend"]), self.texpr(depth - 1),
                self.texpr(depth - 1))

    def event_texpr(self, depth):
        """An event expression (docs: valid at needs one)."""
        r = self.r.random()
        if self.rows and r < 0.05:
            return self.constant()
        events = [v for v in self.vars if is_event_var(v)]
        if events and r < 0.3:
            return ("var", self.r.choice(events))
        if r < 0.55 or depth <= 0:
            return ("begin", self.texpr(depth - 1))
        if r < 0.8:
            return ("end", self.texpr(depth - 1))
        x, y = self.event_texpr(depth - 1), self.texpr(depth - 1)
        return ("overlap", x, y) if self.r.random() < 0.5 else ("overlap", y, x)

    def pred(self, depth):
        r = self.r.random()
        if depth > 0 and r < 0.3:
            op = self.r.choice(["tand", "tor", "tnot"])
            if op == "tnot":
                return ("tnot", self.pred(depth - 1))
            return (op, self.pred(depth - 1), self.pred(depth - 1))
        op = self.r.choice(["precede", "toverlap", "toverlap", "equal"])
        return (op, self.texpr(self.r.choice([0, 0, 1, 2])), self.texpr(self.r.choice([0, 1])))

    def target(self, i, used_names):
        r = self.r.random()
        v = self.r.choice(self.vars)
        attrs = SCHEMA[VARS[v]][1]
        if r < 0.5 and attrs:
            a, _ = self.r.choice(attrs)
            # (not a result's attribute cN: computed targets take those names)
            if a not in used_names and self.r.random() < 0.5 and \
                    not (a[0] == "c" and a[1:].isdigit()):
                return (a, ("attr", v, a), True)  # bare V.attr keeps its name
            return ("c%d" % i, ("attr", v, a), False)
        return ("c%d" % i, self.num(2), False)

    def all_targets(self, names):
        """V.all: every attribute of V, named after it (bare "all" marks the group; the
        first item, index 0, prints V.all), or [] when a name is taken."""
        v = self.r.choice(self.vars)
        attrs = [a for a, _ in SCHEMA[VARS[v]][1]]
        if any(a in names for a in attrs):
            return []
        return [(a, ("attr", v, a), ("all", i)) for i, a in enumerate(attrs)]

    def query(self):
        asof = None
        if self.rows and all(VARS[v] in ("A", "B", "E") for v in self.vars) and \
                self.r.random() < 0.2:
            asof = self.asof()
            self.now = asof[4]
        q = self.statement()
        q["asof"] = asof
        self.now = None
        return q

    def statement(self):
        targets, names = [], set()
        if self.r.random() < 0.1:
            targets = self.all_targets(names)
            names.update(t[0] for t in targets)
        for i in range(self.r.randint(1 if not targets else 0, 3 if not targets else 1)):
            name, e, bare = self.target(i, names)
            k = i
            while name in names:  # after V.all: a result's attributes may be c0, c1, ...
                k += 1
                name = "c%d" % k
            names.add(name)
            targets.append((name, e, bare))
        valid = None
        r = self.r.random()
        if r < 0.25:
            valid = ("at", self.event_texpr(2))
        elif r < 0.5:
            valid = ("fromto", self.texpr(1), self.texpr(1))
        where = self.cond(2) if self.r.random() < 0.75 else None
        when = self.pred(2) if self.r.random() < 0.7 else None
        unique = self.r.random() < 0.15  # retrieve unique: intervals coalesced
        return {"targets": targets, "valid": valid, "where": where, "when": when,
                "unique": unique}


def date_text(ns, rng):
    """A date string for ns since the epoch, UTC, in one of the forms TQuel accepts."""
    secs, frac = divmod(ns, 10**9)
    d = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=secs)
    form = rng.randrange(3)
    if form == 0:
        return d.strftime("%Y-%m-%d %H:%M:%S") + ".%09d" % frac
    if form == 1:
        return d.strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % frac
    d += datetime.timedelta(hours=2)  # the same instant at +02:00
    return d.strftime("%Y-%m-%d %H:%M:%S") + ".%09d+02:00" % frac


def variables_of(q):
    """The tuple variables a query mentions, in a fixed order."""
    found = set()

    def walk(x):
        if isinstance(x, tuple):
            if x and x[0] in ("attr", "var"):
                found.add(x[1])
            for y in x[1:]:
                walk(y)
        elif isinstance(x, list):
            for y in x:
                walk(y)

    walk([t[1] for t in q["targets"]])
    walk(q["valid"])
    walk(q["where"])
    walk(q["when"])
    return sorted(found)


# ---- TQuel text ------------------------------------------------------------------------


def tq_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def tq_value(x):
    k = x[0]
    if k == "text":  # already TQuel (an aggregate, from diff_agg.py)
        return x[1]
    if k == "attr":
        return "%s.%s" % (x[1], x[2])
    if k == "int":
        return str(x[1])
    if k == "real":
        return x[1]
    if k == "str":
        return tq_str(x[1])
    if k == "neg":
        return "-(%s)" % tq_value(x[1])
    if k in ("bin", "cmp"):
        return "(%s %s %s)" % (tq_value(x[2]), x[1], tq_value(x[3]))
    if k in ("and", "or"):
        return "(%s %s %s)" % (tq_value(x[1]), k, tq_value(x[2]))
    if k == "not":
        return "not (%s)" % tq_value(x[1])
    raise ValueError(x)


def tq_time(x):
    k = x[0]
    if k == "var":
        return x[1]
    if k in ("begin", "end"):
        return "%s of (%s)" % (k, tq_time(x[1]))
    if k in ("overlap", "extend"):
        return "(%s %s %s)" % (tq_time(x[1]), k, tq_time(x[2]))
    if k == "const":
        return tq_str(x[1])
    if k == "text":  # already TQuel (an aggregate, from diff_agg.py)
        return x[1]
    raise ValueError(x)


def tq_pred(x):
    k = x[0]
    if k in ("precede", "equal"):
        return "(%s %s %s)" % (tq_time(x[1]), k, tq_time(x[2]))
    if k == "toverlap":  # operands in parentheses: the top overlap is the predicate
        return "(%s overlap %s)" % (tq_time(x[1]), tq_time(x[2]))
    if k in ("tand", "tor"):
        return "(%s %s %s)" % (tq_pred(x[1]), k[1:], tq_pred(x[2]))
    if k == "tnot":
        return "not %s" % tq_pred(x[1])
    raise ValueError(x)


def tq_target(n, e, bare):
    if isinstance(bare, (tuple, list)):  # ("all", i): V.all, printed by its first item
        return "%s.all" % e[1] if bare[1] == 0 else None
    return "%s.%s" % (e[1], e[2]) if bare else "%s = %s" % (n, tq_value(e))


def tquel(q, name):
    items = [x for x in (tq_target(*t) for t in q["targets"]) if x is not None]
    head = "retrieve unique" if q.get("unique") else "retrieve"
    if name.startswith("retrieve@"):  # unnamed: vigil names it after its line
        s = "%s (%s)" % (head, ", ".join(items))
    else:
        s = "%s into %s (%s)" % (head, name, ", ".join(items))
    if q["valid"] and q["valid"][0] == "at":
        s += "\n  valid at %s" % tq_time(q["valid"][1])
    elif q["valid"]:
        s += "\n  valid from %s to %s" % (tq_time(q["valid"][1]), tq_time(q["valid"][2]))
    if q["where"]:
        s += "\n  where %s" % tq_value(q["where"])
    if q["when"]:
        s += "\n  when %s" % tq_pred(q["when"])
    if q.get("asof"):
        a = q["asof"]
        s += "\n  as of %s" % tq_time(a[1])
        if a[2]:
            s += " through %s" % tq_time(a[2])
    return s


def range_lines():
    return "".join("range of %s is %s\n" % (v, r) for v, r in VARS.items())


# ---- SQL -------------------------------------------------------------------------------
# A temporal expression is three SQL expressions (k, b, e): k 0 nothing, 1 event at b (= e),
# 2 interval [b, e).


def sql_value(x, ctx="value"):
    """ctx: how an entity attribute is read: "value" (displayed), "name", "id"; "target":
    as "value", and a uint as its exact text."""
    k = x[0]
    if k == "attr":
        t = dict(SCHEMA[VARS[x[1]]][1])[x[2]]
        if t == "uint" and ctx == "target":
            return "%s.%s_txt" % (x[1], x[2])
        if t == "ent":
            ctx = "value" if ctx == "target" else ctx
            return "%s.%s_%s" % (x[1], x[2], {"value": "disp", "name": "name", "id": "id"}[ctx])
        return "%s.%s" % (x[1], x[2])
    if k in ("int", "real"):
        return str(x[1])
    if k == "str":
        return "'" + x[1].replace("'", "''") + "'"
    if k == "neg":
        return "(-%s)" % sql_value(x[1])
    if k == "bin":
        return "(%s %s %s)" % (sql_value(x[2]), x[1], sql_value(x[3]))
    if k == "cmp":
        a, b = x[2], x[3]
        ents = [y for y in (a, b) if y[0] == "attr" and value_type(y) == "ent"]
        c = "id" if len(ents) == 2 else "name"
        op = "<>" if x[1] == "!=" else x[1]
        return "(%s %s %s)" % (sql_value(a, c), op, sql_value(b, c))
    if k in ("and", "or"):
        return "(%s %s %s)" % (sql_value(x[1]), k.upper(), sql_value(x[2]))
    if k == "not":
        return "(NOT %s)" % sql_value(x[1])
    raise ValueError(x)


def value_type(x):
    if x[0] == "attr":
        return dict(SCHEMA[VARS[x[1]]][1])[x[2]]
    return {"str": "str"}.get(x[0], "num")


def sql_time(x):
    k = x[0]
    if k == "var":
        return ("1" if is_event_var(x[1]) else "2", "%s.b" % x[1], "%s.e" % x[1])
    if k == "const":  # -2^63 written so that SQLite reads an integer, not a REAL
        t = "(-9223372036854775807 - 1)" if x[2] == -2**63 else str(x[2])
        return ("1", t, t)
    if k in ("begin", "end"):
        kx, bx, ex = sql_time(x[1])
        t = bx if k == "begin" else ex
        return ("(CASE WHEN %s = 0 THEN 0 ELSE 1 END)" % kx, t, t)
    kx, bx, ex = sql_time(x[1])
    ky, by, ey = sql_time(x[2])
    if k == "overlap":
        kk = ("(CASE WHEN {kx} = 0 OR {ky} = 0 THEN 0"
              " WHEN {kx} = 2 AND {ky} = 2 THEN (CASE WHEN max({bx}, {by}) < min({ex}, {ey})"
              " THEN 2 ELSE 0 END)"
              " WHEN {kx} = 1 AND {ky} = 1 THEN (CASE WHEN {bx} = {by} THEN 1 ELSE 0 END)"
              " WHEN {kx} = 1 THEN (CASE WHEN {by} <= {bx} AND {bx} < {ey} THEN 1 ELSE 0 END)"
              " ELSE (CASE WHEN {bx} <= {by} AND {by} < {ex} THEN 1 ELSE 0 END) END)").format(
                  kx=kx, ky=ky, bx=bx, by=by, ex=ex, ey=ey)
        return (kk, "max(%s, %s)" % (bx, by), "min(%s, %s)" % (ex, ey))
    if k == "extend":
        kk = ("(CASE WHEN {kx} = 0 OR {ky} = 0 THEN 0 WHEN {bx} < {ey} THEN 2"
              " WHEN {bx} = {ey} THEN 1 ELSE 0 END)").format(kx=kx, ky=ky, bx=bx, ey=ey)
        return (kk, bx, ey)
    raise ValueError(x)


def sql_pred(x):
    k = x[0]
    if k in ("tand", "tor"):
        return "(%s %s %s)" % (sql_pred(x[1]), k[1:].upper(), sql_pred(x[2]))
    if k == "tnot":
        return "(NOT %s)" % sql_pred(x[1])
    if k == "toverlap":
        return "(%s <> 0)" % sql_time(("overlap", x[1], x[2]))[0]
    kx, bx, ex = sql_time(x[1])
    ky, by, ey = sql_time(x[2])
    if k == "precede":
        return "(%s <> 0 AND %s <> 0 AND %s <= %s)" % (kx, ky, ex, by)
    if k == "precede_strict":  # not TQuel: what a `<` in place of precede's `<=` would give
        return "(%s <> 0 AND %s <> 0 AND %s < %s)" % (kx, ky, ex, by)
    if k == "equal":
        return "(%s <> 0 AND %s = %s AND %s = %s AND %s = %s)" % (kx, kx, ky, bx, by, ex, ey)
    raise ValueError(x)


def result_kind(q, vs):
    v = q["valid"]
    if v:
        return "event" if v[0] == "at" else "interval"
    return "event" if any(is_event_var(x) for x in vs) else "interval"


def default_time(vs):
    t = ("var", vs[0])
    for v in vs[1:]:
        t = ("overlap", t, ("var", v))
    return t


def sql(q):
    vs = variables_of(q)
    cols = [sql_value(e, "target") for _, e, _ in q["targets"]]
    conds = []
    if q["where"]:
        conds.append(sql_value(q["where"]))
    if q["when"]:
        conds.append(sql_pred(q["when"]))
    v = q["valid"]
    if v and v[0] == "at":
        k, b, _ = sql_time(v[1])
        conds.append("%s <> 0" % k)
        cols.append(b)
    elif v:
        k1, b1, _ = sql_time(v[1])
        k2, _, e2 = sql_time(v[2])
        conds.append("%s <> 0 AND %s <> 0 AND %s < %s" % (k1, k2, b1, e2))
        cols += [b1, e2]
    else:
        k, b, e = sql_time(default_time(vs))
        conds.append("%s <> 0" % k)
        cols += [b] if result_kind(q, vs) == "event" else [b, e]
    s = "SELECT DISTINCT %s\nFROM %s" % (", ".join(cols), ", ".join(
        "%s AS %s" % (sql_from(VARS[x], q.get("asof")), x) for x in vs))
    if conds:
        s += "\nWHERE " + "\n  AND ".join(conds)
    if q.get("unique") and result_kind(q, vs) == "interval":
        s = sql_coalesce(s, len(q["targets"]))
    return s


# The relations recorded in the trace, which as of an instant cuts (others, as diff_agg.py's
# aggregates, are made from relations already cut).
RECORDED = ("A", "B", "E")


def sql_from(rel, asof):
    """A relation as a statement sees it: as of an instant, its tuples that began by then,
    an interval not yet ended then cut at the last event recorded by then."""
    if not asof or rel not in RECORDED:
        return sql_table(rel)
    cols = []
    for a, t in SCHEMA[rel][1]:
        cols += (["%s_name" % a, "%s_id" % a, "%s_disp" % a] if t == "ent" else
                 [a, "%s_txt" % a] if t == "uint" else [a])
    return "(SELECT %s MIN(e, %d) AS e FROM %s WHERE b <= %d)" % (
        "".join(c + ", " for c in cols + ["b"]), asof[4], sql_table(rel), asof[3])


def rows_asof(rows, asof):
    """The Python evaluator's rows as of an instant (sql_from)."""
    if not asof:
        return rows
    return dict(rows, **{rel: [dict(x, e=min(x["e"], asof[4])) for x in rows[rel]
                               if x["b"] <= asof[3]] for rel in RECORDED if rel in rows})


def sql_coalesce(s, n):
    """retrieve unique: value-equivalent tuples whose intervals overlap or meet, merged
    (gaps and islands: a tuple starts an island when it begins after every earlier end of
    its values)."""
    vals = ", ".join("v%d" % i for i in range(n))
    part = "PARTITION BY %s " % vals if n else ""
    names = ", ".join(["v%d" % i for i in range(n)] + ["b", "e"])
    return ("WITH r(%s) AS (%s),\n"
            "s AS (SELECT *, CASE WHEN b <= max(e) OVER (%sORDER BY b, e ROWS BETWEEN "
            "UNBOUNDED PRECEDING AND 1 PRECEDING) THEN 0 ELSE 1 END AS first FROM r),\n"
            "g AS (SELECT *, sum(first) OVER (%sORDER BY b, e ROWS UNBOUNDED PRECEDING) "
            "AS island FROM s)\n"
            "SELECT %s%smin(b), max(e) FROM g GROUP BY %s%sisland") % (
                names, s, part, part, vals, ", " if n else "", vals, ", " if n else "")


def sql_answer(db, q):
    """The SQL answer as a set of (kind, times..., values...)."""
    kind = result_kind(q, variables_of(q))
    nt = 1 if kind == "event" else 2
    n = len(q["targets"])
    uints = [i for i, (_, e, _) in enumerate(q["targets"]) if value_type(e) == "uint"]

    def exact(r):  # a uint target is read as text
        return tuple(int(v) if i in uints and v is not None else v for i, v in enumerate(r))

    return {(kind,) + tuple(r[n:n + nt]) + exact(r[:n]) for r in db.execute(sql(q))}


# ---- the Python evaluator (a third opinion) --------------------------------------------


def py_value(x, env, ctx="value", exact=False, lazy=True):
    """exact: an integer result past int64 raises Overflow (vigil fails there), and `and`,
    `or` stop once decided, left to right, as vigil evaluates them (lazy=False: every
    operand is evaluated, to find any overflow)."""
    if exact:
        def ev(y, c="value"):
            return py_value(y, env, c, True, lazy)
    else:
        def ev(y, c="value"):
            return py_value(y, env, c)
    k = x[0]
    if k == "attr":
        v = env[x[1]][x[2]]
        if isinstance(v, dict):  # an entity
            return {"value": entity_display(v, "OSThread" if x[2] == "thread" else "Owner"),
                    "name": v["name"],
                    "id": (v["id"], v["gen"], v["image"])}[ctx]
        return v
    if k == "int":
        return x[1]
    if k == "real":
        return float(x[1])
    if k == "str":
        return x[1]
    if k == "neg":
        a = ev(x[1])
        return None if a is None else checked(-a) if exact else -a
    if k == "bin":
        a, b = ev(x[2]), ev(x[3])
        if a is None or b is None:
            return None
        r = bin_value(x[1], a, b)
        return checked(r) if exact else r
    if k == "cmp":
        ents = [y for y in (x[2], x[3]) if y[0] == "attr" and value_type(y) == "ent"]
        c = "id" if len(ents) == 2 else "name"
        a, b = ev(x[2], c), ev(x[3], c)
        if a is None or b is None:
            return None
        if isinstance(a, str):
            a, b = a.encode(), b.encode()
        return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b,
                ">=": a >= b}[x[1]]
    if k == "and":
        a = ev(x[1])
        b = None if exact and lazy and a is False else ev(x[2])
        if a is False or b is False:
            return False
        return None if a is None or b is None else True
    if k == "or":
        a = ev(x[1])
        b = None if exact and lazy and a is True else ev(x[2])
        if a is True or b is True:
            return True
        return None if a is None or b is None else False
    if k == "not":
        a = ev(x[1])
        return None if a is None else not a
    raise ValueError(x)


def bin_value(op, a, b):
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def py_time(x, env):
    """None (nothing), ("e", t) or ("i", b, e)."""
    k = x[0]
    if k == "var":
        r = env[x[1]]
        return ("e", r["b"]) if is_event_var(x[1]) else ("i", r["b"], r["e"])
    if k == "const":
        return ("e", x[2])
    if k in ("begin", "end"):
        a = py_time(x[1], env)
        if a is None:
            return None
        return ("e", a[1] if k == "begin" or a[0] == "e" else a[2])
    a, b = py_time(x[1], env), py_time(x[2], env)
    if a is None or b is None:
        return None
    if k == "overlap":
        if a[0] == "e" and b[0] == "e":
            return a if a[1] == b[1] else None
        if a[0] == "e" or b[0] == "e":
            ev, iv = (a, b) if a[0] == "e" else (b, a)
            return ev if iv[1] <= ev[1] < iv[2] else None
        lo, hi = max(a[1], b[1]), min(a[2], b[2])
        return ("i", lo, hi) if lo < hi else None
    if k == "extend":
        lo, hi = a[1], b[-1]
        return ("i", lo, hi) if lo < hi else ("e", lo) if lo == hi else None
    raise ValueError(x)


def py_pred(x, env):
    k = x[0]
    if k == "tand":
        return py_pred(x[1], env) and py_pred(x[2], env)
    if k == "tor":
        return py_pred(x[1], env) or py_pred(x[2], env)
    if k == "tnot":
        return not py_pred(x[1], env)
    a, b = py_time(x[1], env), py_time(x[2], env)
    if a is None or b is None:
        return False
    if k == "precede":
        return a[-1] <= b[1]
    if k == "toverlap":
        return py_time(("overlap", x[1], x[2]), env) is not None
    if k == "equal":
        return a == b
    raise ValueError(x)


def raw_value(x, env):
    """A target's value as stored in a result relation: an entity stays its dump object,
    as a hashable ("ent", name, id, gen, image)."""
    if x[0] == "attr":
        v = env[x[1]][x[2]]
        return ("ent", v["name"], v["id"], v["gen"], v["image"]) if isinstance(v, dict) else v
    return py_value(x, env)


def valid_times(q, env, kind):
    """The result tuple's times for the combination env, or None when it has no valid
    time."""
    v = q["valid"]
    if v and v[0] == "at":
        t = py_time(v[1], env)
        return None if t is None else (t[1],)
    if v:
        a, b = py_time(v[1], env), py_time(v[2], env)
        return None if a is None or b is None or not a[1] < b[-1] else (a[1], b[-1])
    t = py_time(default_time(list(env)), env)
    if t is None:
        return None
    return t[1:] if kind == "interval" else (t[1],)


def py_answer(rows, q, raw=False, exact=False):
    """The answer as a set of (kind, times..., values...); raw: values as raw_value; exact:
    with vigil's order of evaluation, and integers past int64 raise Overflow where vigil
    would meet them (a statement that may fail is answered with it, when it does not)."""
    vs = variables_of(q)
    kind = result_kind(q, vs)
    rows = rows_asof(rows, q.get("asof"))
    out = set()
    for combo in itertools.product(*(rows[VARS[v]] for v in vs)):
        env = dict(zip(vs, combo))
        if q["when"] and not py_pred(q["when"], env):
            continue
        if exact:  # a conjunct false (or unknown) without overflowing rejects it
            res = []
            for c in conjuncts(q["where"]):
                try:
                    res.append(py_value(c, env, exact=True))
                except Overflow:
                    res.append("overflow")
            if any(r is not True and r != "overflow" for r in res):
                continue
            if "overflow" in res:
                raise Overflow()
        elif q["where"] and py_value(q["where"], env) is not True:
            continue
        times = valid_times(q, env, kind)
        if times is None:
            continue
        out.add((kind,) + times + tuple(
            raw_value(e, env) if raw else py_value(e, env, exact=exact)
            for _, e, _ in q["targets"]))
    if q.get("unique") and kind == "interval":
        out = py_coalesce(out)
    return out


def py_coalesce(tuples):
    """retrieve unique over (kind, b, e, values...): per values, the union of the intervals
    as maximal intervals (overlapping or meeting ones merged)."""
    by_values = {}
    for t in tuples:
        by_values.setdefault(t[3:], []).append((t[1], t[2]))
    out = set()
    for vals, spans in by_values.items():
        spans.sort()
        b, e = spans[0]
        for b2, e2 in spans[1:]:
            if b2 <= e:
                e = max(e, e2)
            else:
                out.add(("interval", b, e) + vals)
                b, e = b2, e2
        out.add(("interval", b, e) + vals)
    return out


# ---- the time budget of one statement's expected answer ---------------------------------


class OverBudget(Exception):
    pass


# The budget is the process's CPU time, not wall time: on a loaded machine (CI, eight
# builds on two cores) a statement's reference answer waits for a core, and a wall-time
# budget failed runs whose references were merely slow to be scheduled. What the budget
# covers (Python and SQLite computing an answer) never waits on anything but the CPU, so a
# runaway statement still spends its budget and is named; a blocked process is ctest's
# TIMEOUT's to catch.
DEADLINE = [None]  # process_time() the statement being computed must finish by


def on_alarm(signum, frame):
    raise OverBudget()


def sqlite_over_budget():
    """SQLite's progress handler: a long join is interrupted at the deadline (a Python
    signal handler does not run inside one sqlite3 call)."""
    return 1 if DEADLINE[0] is not None and time.process_time() > DEADLINE[0] else 0


@contextlib.contextmanager
def budget(args, seed, what, work_of, keep):
    """The expected answer of one statement within args.budget seconds of CPU time; past
    it, prints what() (the statement), work_of() (the sizes it ranges over) and the seed,
    calls keep() (saves the trace and statements) and exits 1."""
    wall = time.monotonic()
    DEADLINE[0] = time.process_time() + args.budget
    signal.setitimer(signal.ITIMER_PROF, args.budget)  # SIGPROF after that much CPU time
    try:
        yield
    except (OverBudget, sqlite3.OperationalError) as e:
        if isinstance(e, sqlite3.OperationalError) and "interrupt" not in str(e):
            raise
        print("seed %d: the expected answer of this statement took over --budget %g s of "
              "CPU time (%.1f s of wall time; a generated statement too expensive for the "
              "reference: bound the generator):\n%s\n  relations' sizes: %s" %
              (seed, args.budget, time.monotonic() - wall, what(), work_of()), flush=True)
        keep()
        raise SystemExit(1)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        DEADLINE[0] = None


def watch_budget():
    """Budgets' alarms (SIGPROF) raise OverBudget; kill -USR1 PID prints where the run is,
    on stderr."""
    signal.signal(signal.SIGPROF, on_alarm)
    faulthandler.register(signal.SIGUSR1)


def combos(rows, q):
    n = 1
    for v in variables_of(q):
        n *= len(rows[VARS[v]])
    return n


# ---- vigil -----------------------------------------------------------------------------


# The answers are computed on THREADS threads (more than CI's cores, so morsels are shared
# out unevenly) and again on one (same_on_one_thread): byte for byte the same output.
THREADS = 3


def vigil_answers(bin_dir, trace, text, extra=(), threads=None, env=None):
    """{relation: [tuple]} from `vigil query --format json` (extra: more arguments, such
    as --tick), and the process. trace may be a postgresql:// URL (extra: --schema).
    env: variables added to the environment."""
    with tempfile.NamedTemporaryFile("w", suffix=".tq", delete=False) as f:
        f.write(text)
    if threads:
        extra = list(extra) + ["--threads", str(threads)]
    try:
        p = subprocess.run([os.path.join(bin_dir, "vigil"), "query", trace, "-f", f.name,
                            "--format", "json"] + list(extra), capture_output=True, text=True,
                           env=dict(os.environ, **env) if env else None)
    finally:
        os.unlink(f.name)
    out = {}
    if p.returncode == 0:
        for line in p.stdout.splitlines():
            o = json.loads(line)
            times = (o["at"],) if o["kind"] == "event" else (o["from"], o["to"])
            out.setdefault(o["relation"], []).append((o["kind"], times, o["values"]))
    return out, p


def same_on_one_thread(bin_dir, trace, text, p, extra=()):
    """The run p (at THREADS threads) against the same statements at one thread: the same
    exit status and the same output, tuple for tuple in the same order."""
    _, p1 = vigil_answers(bin_dir, trace, text, extra, threads=1)
    if p1.returncode == p.returncode and p1.stdout == p.stdout:
        return True
    a, b = p.stdout.splitlines(), p1.stdout.splitlines()
    diff = [(i, x, y) for i, (x, y) in enumerate(zip(a, b)) if x != y][:3]
    print("vigil query at %d threads and at 1 differ: exit %d and %d, %d and %d lines; "
          "first differences (line, %d threads, 1 thread): %s\n%s" %
          (THREADS, p.returncode, p1.returncode, len(a), len(b), THREADS, diff,
           p1.stderr[-2000:]))
    return False


def vigil_set(got, q):
    """vigil's tuples of one result in the SQL answer's form (values in target order)."""
    return [(k,) + times + tuple(vals[n] if n in vals else "<no attribute %s>" % n
                                 for n, _, _ in q["targets"]) for k, times, vals in got]


# ---- running ---------------------------------------------------------------------------


def record(bin_dir, seed, events, work):
    trace = os.path.join(work, "trace-%d" % seed)
    p = subprocess.run([os.path.join(bin_dir, "vigil"), "record", "-o", trace, "--",
                        os.path.join(bin_dir, "diff_subject"), str(seed), str(events)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("vigil record of diff_subject %d %d exited %d: %s" %
                 (seed, events, p.returncode, p.stderr))
    return trace


def time_bound(rng, q, rows):
    """A selection on an event variable's time by constants (when E1 overlap (C1 extend
    C2), C precede E1, E1 precede C, or two of them with or), and-ed to q's when clause:
    what lets the build pass over the events outside it (docs/query.md "How selections
    reach decoding"). None when q has no event variable."""
    events = [v for v in sorted(variables_of(q)) if is_event_var(v)]
    if not events:
        return None
    v = ("var", rng.choice(events))
    times = sorted(x["b"] for x in rows["E"]) or [0]

    def const():
        t = rng.choice(times) + rng.choice([-1, 0, 0, 1])
        return ("const", date_text(t, rng), t)

    def one():
        r = rng.random()
        if r < 0.5:
            a, b = sorted([const(), const()], key=lambda c: c[2])
            return ("toverlap", v, ("extend", a, b))
        return ("precede", const(), v) if r < 0.75 else ("precede", v, const())

    p = one() if rng.random() < 0.8 else ("tor", one(), one())
    return p if q["when"] is None else ("tand", p, q["when"])


def key_selection(rng, q, rows):
    """A selection on an event variable's attribute by a constant (E1.key = 3,
    E1.val >= 40, 7 > E1.key, E1.tag != "x"), and-ed to q's where clause: what lets the
    build leave out the tuples it cannot select. None when q has no event variable."""
    events = [v for v in sorted(variables_of(q)) if is_event_var(v)]
    if not events:
        return None
    v = rng.choice(events)
    attr, typ = rng.choice([(a, t) for a, t in SCHEMA[VARS[v]][1] if t in ("num", "str")])
    if typ == "str":
        tags = sorted({x[attr] for x in rows[VARS[v]] if x.get(attr)}) or ["x"]
        c = ("cmp", rng.choice(["=", "!="]), ("attr", v, attr), ("str", rng.choice(tags)))
    else:
        vals = [x[attr] for x in rows[VARS[v]] if x.get(attr) is not None] or [0]
        n = rng.choice(vals) + rng.choice([-1, 0, 0, 0, 1])  # at a value: edges met
        k = ("int", n) if n >= 0 else ("neg", ("int", -n))
        op = rng.choice(["=", "!=", "<", "<=", ">", ">="])
        c = ("cmp", op, ("attr", v, attr), k) if rng.random() < 0.5 else \
            ("cmp", {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op), k,
             ("attr", v, attr))
    return c if q["where"] is None else ("and", c, q["where"])


def semijoin_shape(rng, general):
    """A statement the planner makes a semi-join of (docs/query.md "Semi-joins"): Y
    existential (in no target nor valid clause), tied to X by key equalities and one
    precede, as the paper's query (retrieve (R.conn) valid at end of R where S.conn =
    R.conn when S precede end of R). Y ranges over X's relation half the time: Y = X
    then gives equal endpoints (begin of A2 precede begin of A1 with A2 the tuple A1),
    where precede's `<=` and a `<` part. general: two keys (the semi-join's general path,
    exec_semijoin.c), else one integer key or none (its column path)."""
    x = rng.choice(["A1", "B1", "E1"])
    same = {"A1": "A2", "B1": "B2", "E1": "E2"}[x]
    y = same if rng.random() < 0.5 else rng.choice([v for v in ("A3", "B2", "E2") if v != same])

    def tx(v):
        return rng.choice([("var", v), ("begin", ("var", v)), ("end", ("var", v))])

    keys = []
    if general or rng.random() < 0.85:  # else none: one group
        keys.append(("cmp", "=", ("attr", y, "key"), ("attr", x, "key")))
    if general:
        keys.append(("cmp", "=", ("attr", x, "val"), ("attr", y, "val")))
    where = None
    for c in keys:
        where = c if where is None else ("and", where, c)
    if rng.random() < 0.4:  # a selection on Y alone, as S.process = "P1"
        c = ("cmp", rng.choice(["<", ">="]), ("attr", y, "val"), ("int", rng.randint(0, 5)))
        where = c if where is None else ("and", c, where)
    when = ("precede", tx(y), tx(x)) if rng.random() < 0.6 else ("precede", tx(x), tx(y))
    if is_event_var(x) and rng.random() < 0.5:
        valid = ("at", ("var", x))
    elif rng.random() < 0.8:
        valid = ("at", (rng.choice(["begin", "end"]), ("var", x)))
    else:
        valid = ("fromto", ("var", x), ("var", x))
    targets = [("key", ("attr", x, "key"), True)]
    if rng.random() < 0.5:
        targets.append(("val", ("attr", x, "val"), True))
    return {"targets": targets, "valid": valid, "where": where, "when": when,
            "unique": False, "asof": None}


def semijoin_statements(args, seed, rows, db):
    """args.semi statements of semijoin_shape (a third of them on the general path), each
    with its SQL answer; on each path some, and a third of all, have an answer that a
    strict `<` in precede would change: the generator is checked to give equal endpoints,
    so a `<=` broken into `<` on either path is seen."""
    srng = random.Random(seed * 104729 + 7)
    out, tight = [], [0, 0]  # telling statements: column path, general path

    def enough():
        return len(out) >= args.semi and all(tight) and sum(tight) * 3 >= len(out)

    for i in range(args.semi * 50):
        if not args.semi or enough():
            break
        general = i % 3 == 2 if len(out) < args.semi else not tight[1]
        q = semijoin_shape(srng, general)
        ans = sql_answer(db, q)
        if not ans or len(ans) > args.cap:
            continue
        strict = dict(q, when=("precede_strict",) + q["when"][1:])
        differs = sql_answer(db, strict) != ans
        if len(out) >= args.semi and not differs:
            continue  # enough statements: only those telling `<` from `<=`
        tight[general] += differs
        out.append((q, ans))
    if args.semi and not enough():
        sys.exit("seed %d: semi-join statements whose answers depend on equal endpoints: "
                 "%d on the column path, %d on the general path (want one each)"
                 % (seed, tight[0], tight[1]))
    print("seed %d: %d semi-join statements, %d of them telling precede's <= from < "
          "(%d on the general path)" % (seed, len(out), sum(tight), tight[1]))
    return out


def generate(args, seed, trace, rng, rows, db):
    """args.queries queries with moderate, mostly non-empty SQL answers. SQLite joins a
    statement's variables with nested loops (its temporal conditions are CASE expressions no
    index serves), so statements whose cross product is past args.sql_limit are not
    generated (those generated are still compared in full), and each answer must come
    within args.budget seconds or the run fails, printing and saving the statement."""
    out = []
    brng = random.Random(seed * 7919 + 1)
    while len(out) < args.queries:
        nvars = rng.choice([1, 2, 2, 3])
        q = Gen(rng, rng.sample(sorted(VARS), nvars), rows).query()
        if not variables_of(q) or combos(rows, q) > args.sql_limit:
            continue  # a retrieve needs a tuple variable; past the bound: see above
        if brng.random() < 0.3:  # its own generator: the others' statements stay as they were
            q["when"] = time_bound(brng, q, rows) or q["when"]
        if brng.random() < 0.2:
            q["where"] = key_selection(brng, q, rows) or q["where"]
        name = "Q%d" % len(out)
        case = {"seed": seed, "name": name, "query": q, "tquel": tquel(q, name), "sql": sql(q)}
        with budget(args, seed, lambda: range_lines() + case["tquel"],
                    lambda: {VARS[v]: len(rows[VARS[v]]) for v in variables_of(q)},
                    lambda: save_case(args.fail_dir, case, trace)):
            ovf = overflow_class(rows, q, args.py_limit)
            if ovf == "unknown":
                UNTOLD[0] += 1
                continue  # may overflow, and too large to tell exactly: not generated
            # SQLite turns an integer overflow into a REAL: where one may happen, the
            # answer is the Python evaluator's, in exact integers
            ans = sql_answer(db, q) if ovf is None else set() if ovf == "must" else \
                py_answer(rows, q, exact=True)
        if ovf:
            q["overflow"] = ovf
        if len(ans) <= args.cap and (ans or ovf or rng.random() < 0.2):
            out.append((q, ans))
    return out


# ---- integer overflow (docs/tquel.md "Values": an error, never a wrap) ------------------
# vigil fails a statement when an integer result it computes is past int64. Which tuples a
# where clause is evaluated for is the plan's (single-variable conjuncts on every tuple of
# their relation, join keys on each side's tuples; and/or left to right, stopping once
# decided), so the reference gives two bounds: a statement MUST fail when some combination
# of its tuples satisfying the when clause has every top-level where conjunct true or
# overflowing, one overflowing (no plan can reject it before), or passes and overflows in a
# target; it MAY fail when some expression overflows on some tuples of the variables it
# reads. Otherwise it must answer, exactly.

INT64_LO, INT64_HI = -2**63, 2**63 - 1
UNTOLD = [0]  # statements not generated: they might overflow, past --py-limit to tell


class Overflow(Exception):
    pass


def is_int_expr(x):
    """The expression's static type is int (no double in it)."""
    k = x[0]
    if k in ("int", "attr"):
        return k == "int" or value_type(x) in ("num", "uint")
    if k == "neg":
        return is_int_expr(x[1])
    if k == "bin":
        return is_int_expr(x[2]) and is_int_expr(x[3])
    return False


def checked(v):
    if isinstance(v, int) and not isinstance(v, bool) and not INT64_LO <= v <= INT64_HI:
        raise Overflow()
    return v


def conjuncts(w):
    """The where clause's top-level conjuncts, as vigil's planner splits them."""
    if w is None:
        return []
    if w[0] == "and":
        return conjuncts(w[1]) + conjuncts(w[2])
    return [w]


def int_range(x, ranges):
    """(lo, hi) bounding an int expression's values (ranges: per (var, attr)), or None for a
    double or a non-number; raises Overflow when a bound is past int64."""
    k = x[0]
    if k == "int":
        return (x[1], x[1])
    if k == "attr":
        return ranges.get((x[1], x[2]), (0, 0)) if value_type(x) in ("num", "uint") else None
    if k == "neg":
        r = int_range(x[1], ranges)
        return r and (checked(-r[1]), checked(-r[0]))
    if k == "bin":
        a, b = int_range(x[2], ranges), int_range(x[3], ranges)
        if a is None or b is None:
            return None
        op = x[1]
        if op == "+":
            return (checked(a[0] + b[0]), checked(a[1] + b[1]))
        if op == "-":
            return (checked(a[0] - b[1]), checked(a[1] - b[0]))
        if op == "*":
            c = [p * q for p in a for q in b]
            return (checked(min(c)), checked(max(c)))
        m = max(abs(a[0]), abs(a[1]))  # |x / y| <= |x|
        return (checked(-m), checked(m))
    if k in ("cmp", "and", "or", "not"):
        for y in x[1:]:
            if isinstance(y, tuple):
                int_range(y, ranges)
        return None
    return None


def may_overflow_bound(rows, q):
    """False when no expression of q can overflow on any tuples (bounds of the relations'
    values); True when some might."""
    ranges = {}
    for v in variables_of(q):
        for a, t in SCHEMA[VARS[v]][1]:
            vals = [r[a] for r in rows[VARS[v]] if isinstance(r.get(a), int)]
            if t in ("num", "uint") and vals:
                ranges[(v, a)] = (min(vals), max(vals))
    try:
        for _, e, _ in q["targets"]:
            int_range(e, ranges)
        if q["where"]:
            int_range(q["where"], ranges)
    except Overflow:
        return True
    return False


def subexpressions(x):
    if isinstance(x, tuple) and x and x[0] in ("neg", "bin", "cmp", "and", "or", "not"):
        yield x
        for y in x[1:]:
            yield from subexpressions(y)


def overflow_class(rows, q, limit):
    """None: q cannot overflow; "must" or "may" (see above); "unknown": it might, but its
    tuples are past `limit` combinations to tell."""
    if not may_overflow_bound(rows, q):
        return None
    rows = rows_asof(rows, q.get("asof"))
    if combos(rows, q) > limit:
        return "unknown"
    may = False
    for x in [e for _, e, _ in q["targets"]] + ([q["where"]] if q["where"] else []):
        for sub in subexpressions(x):
            vs = variables_of({"targets": [("x", sub, False)], "valid": None, "where": None,
                               "when": None})
            if prod(len(rows[VARS[v]]) for v in vs) > limit:
                return "unknown"
            for combo in itertools.product(*(rows[VARS[v]] for v in vs)):
                try:
                    py_value(sub, dict(zip(vs, combo)), exact=True, lazy=False)
                except Overflow:
                    may = True
                    break
            if may:
                break
        if may:
            break
    if not may:
        return None
    vs = variables_of(q)
    for combo in itertools.product(*(rows[VARS[v]] for v in vs)):
        env = dict(zip(vs, combo))
        if q["when"] and not py_pred(q["when"], env):
            continue
        results = []
        for c in conjuncts(q["where"]):
            try:
                results.append(py_value(c, env, exact=True))
            except Overflow:
                results.append("overflow")
        if any(r is not True and r != "overflow" for r in results):
            continue
        if "overflow" in results:
            return "must"
        if valid_times(q, env, result_kind(q, vs)) is None:
            continue
        try:
            for _, e, _ in q["targets"]:
                py_value(e, env, exact=True)
        except Overflow:
            return "must"
    return "may"


def prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def to_tuple(x):
    return tuple(to_tuple(y) for y in x) if isinstance(x, list) else x


def show(s, n=5):
    return "".join("    %r\n" % (t,) for t in sorted(s, key=repr)[:n]) or "    (none)\n"


def report(case, only_vigil, only_sql, other=None):
    print("MISMATCH (seed %s, %s)\n--- TQuel:\n%s%s\n--- SQL:\n%s" %
          (case["seed"], case["name"], range_lines(), case["tquel"], case["sql"]))
    print("  only in vigil (%d):\n%s  only in SQLite (%d):\n%s" %
          (len(only_vigil), show(only_vigil), len(only_sql), show(only_sql)), end="")
    if other:
        print(other)


def save_case(fail_dir, case, trace):
    d = os.path.join(fail_dir, "seed%s-%s" % (case["seed"], case["name"]))
    os.makedirs(d, exist_ok=True)
    dest = os.path.join(d, "trace")
    if os.path.abspath(trace) != os.path.abspath(dest):  # not a replay of this very case
        shutil.rmtree(dest, ignore_errors=True)  # from an earlier run
        shutil.copytree(trace, dest)
    case = dict(case, trace=os.path.join(os.path.abspath(d), "trace"),
                empty_is_value=EMPTY_IS_VALUE)
    path = os.path.join(d, "case.json")
    with open(path, "w") as f:
        json.dump(case, f, indent=1)
    with open(os.path.join(d, "query.tq"), "w") as f:
        f.write(range_lines() + case["tquel"] + "\n")
    print("  saved: %s (replay: diff_test.py --bin BIN --replay %s)" % (path, path))


def ambiguous_targets(q):
    """q has an entity target whose distinct entities print alike (AMBIGUOUS): two tuples
    of the result may then print the same."""
    return any(e[0] == "attr" and (VARS[e[1]], e[2]) in AMBIGUOUS for _, e, _ in q["targets"])


def compare(args, seed, trace, rows, name, q, ans, got, third):
    """Checks one query; prints and saves the case on a mismatch. True if equal."""
    case = {"seed": seed, "name": name, "query": q, "tquel": tquel(q, name), "sql": sql(q)}
    problems = []
    if got is not None:
        vt = vigil_set(got, q)
        if len(vt) != len(set(vt)) and not ambiguous_targets(q):
            problems.append("vigil printed duplicate tuples (results are sets)")
        only_v, only_s = set(vt) - ans, ans - set(vt)
    else:
        only_v = only_s = set()
    if third and combos(rows, q) <= args.py_limit:
        pa = py_answer(rows, q)
        if pa != ans:
            problems.append("the Python evaluator disagrees with SQLite (a harness bug):\n"
                            "  only in Python:\n%s  only in SQLite:\n%s" %
                            (show(pa - ans), show(ans - pa)))
    if only_v or only_s or problems:
        report(case, only_v, only_s, "\n".join(problems))
        save_case(args.fail_dir, case, trace)
        return False
    return True


def check_syntax(bin_dir, text, work):
    """The generated TQuel parses (tquel_fmt, the front end's test tool), if it was built."""
    fmt = os.path.join(bin_dir, "tquel_fmt")
    if not os.path.exists(fmt):
        return True
    path = os.path.join(work, "syntax.tq")
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run([fmt, path], capture_output=True, text=True)
    if p.returncode != 0:
        print("generated TQuel does not parse:\n%s" % p.stderr[-3000:])
    return p.returncode == 0


def run_seed(args, seed, work):
    trace = record(args.bin, seed, args.events, work)
    rows = load_trace(args.bin, trace)
    db = make_db(rows)
    rng = random.Random(seed)
    queries = generate(args, seed, trace, rng, rows, db)
    queries += semijoin_statements(args, seed, rows, db)
    # statements that must or may overflow (see overflow_class) are run one by one
    overflowing = [x for x in queries if x[0].get("overflow")]
    queries = [x for x in queries if not x[0].get("overflow")]
    sizes = {r: len(v) for r, v in rows.items() if not r.startswith("_")}
    nonempty = sum(1 for _, a in queries if a)
    print("seed %d: %s tuples (%s still open at the end); %d queries, %d with non-empty "
          "answers, %d answer tuples" % (seed, sizes, rows["_open"], len(queries), nonempty,
                                         sum(len(a) for _, a in queries)))
    # every fifth result unnamed: `retrieve (...)` is named retrieve@LINE
    names, text = [], range_lines()
    for i, (q, _) in enumerate(queries):
        names.append("retrieve@%d" % (text.count("\n") + 1) if i % 5 == 4 else "Q%d" % i)
        text += tquel(q, names[-1]) + "\n"
    if args.keep:
        with open(os.path.join(work, "queries-%d.tq" % seed), "w") as f:
            f.write(text)
    if args.selfcheck:
        ok = check_syntax(args.bin, text, work)
        return all([compare(args, seed, trace, rows, n, q, a, None, True)
                     for n, (q, a) in zip(names, queries)]) and ok
    out, p = vigil_answers(args.bin, trace, text, threads=THREADS)
    if p.returncode != 0:
        print("seed %d: vigil query exited %d:\n%s" % (seed, p.returncode, p.stderr[-3000:]))
        # find the statements it rejects, one by one
        for n, (q, _) in zip(names, queries):
            n = n if n.startswith("Q") else "retrieve@%d" % (range_lines().count("\n") + 1)
            _, p1 = vigil_answers(args.bin, trace, range_lines() + tquel(q, n) + "\n")
            if p1.returncode != 0:
                print("--- %s rejected (exit %d):\n%s\n%s" %
                      (n, p1.returncode, tquel(q, n), p1.stderr[-2000:]))
                save_case(args.fail_dir, {"seed": seed, "name": n, "query": q,
                                          "tquel": tquel(q, n), "sql": sql(q)}, trace)
                break
        return False
    unknown = set(out) - set(names)
    if unknown:
        print("seed %d: vigil printed unknown relations %s" % (seed, sorted(unknown)))
        return False
    print("seed %d: vigil answered %d tuples in %d results" %
          (seed, sum(len(v) for v in out.values()), len(out)))
    ok = same_on_one_thread(args.bin, trace, text, p)
    ok = bounded_alone(args, seed, trace, names, queries) and ok
    ok = keyed_alone(args, seed, trace, rows, db) and ok
    if args.pg:
        ok = store_both_ways(args, seed, trace, rows, names, queries, text, out)
    failures = 0
    for n, (q, a) in zip(names, queries):
        if not compare(args, seed, trace, rows, n, q, a, out.get(n, []), args.third):
            ok = False
            failures += 1
            if failures >= args.max_failures:
                print("seed %d: stopping after %d mismatches" % (seed, failures))
                break
    return check_overflowing(args, seed, trace, rows, overflowing) and ok


def check_overflowing(args, seed, trace, rows, overflowing):
    """Each statement the reference says must (may) overflow, alone: it must fail (fail or
    answer exactly) with exit 2 and vigil's line naming it, at 1 and THREADS threads alike;
    on the store (--pg) a statement that must fail fails with the overflow line too."""
    ok, counts = True, {"must": 0, "may": 0, "failed": 0}
    for i, (q, a) in enumerate(overflowing):
        name = "V%d" % i
        text = range_lines() + tquel(q, name) + "\n"
        out, p = vigil_answers(args.bin, trace, text, threads=THREADS)
        _, p1 = vigil_answers(args.bin, trace, text, threads=1)
        counts[q["overflow"]] += 1
        lines = p.stderr.splitlines()
        failed = p.returncode == 2 and len(lines) == 3 and not p.stdout and \
            re.match(r"^.*:\d+:\d+: error: %s: integer overflow in .+: .+ is past the 64-bit"
                     % name, lines[0]) is not None
        counts["failed"] += failed
        problem = None
        if p1.returncode != p.returncode:
            problem = "exit %d at %d threads, %d at 1" % (p.returncode, THREADS, p1.returncode)
        elif q["overflow"] == "must" and not failed:
            problem = "the reference overflows int64 here: vigil must fail with its line"
        elif not failed and p.returncode != 0:
            problem = "neither the overflow line nor an answer"
        elif not failed:  # a may: answered, so exactly
            case = {"seed": seed, "name": name, "query": q, "tquel": tquel(q, name),
                    "sql": sql(q)}
            if not compare(args, seed, trace, rows, name, q, a, out.get(name, []), False):
                save_case(args.fail_dir, case, trace)
                ok = False
            continue
        if problem:
            ok = False
            print("OVERFLOW MISMATCH (seed %d, %s, %s): %s\n--- TQuel:\n%s\n  vigil (exit %d):"
                  " %s" % (seed, name, q["overflow"], problem, text, p.returncode,
                           p.stderr[-1500:] or "%d results" % len(out)))
            save_case(args.fail_dir, {"seed": seed, "name": name, "query": q,
                                      "tquel": tquel(q, name), "sql": sql(q)}, trace)
        if args.pg and q["overflow"] == "must" and not q.get("asof"):  # (as of: refused)
            _, p = vigil_answers(args.bin, args.pg.url(), text, ["--schema", "seed%d" % seed])
            if p.returncode != 2 or "integer overflow: a value is past the 64-bit integers " \
                    "(PostgreSQL: bigint out of range" not in p.stderr:
                ok = False
                print("OVERFLOW MISMATCH on the store (seed %d, %s): exit %d, %s\n%s" %
                      (seed, name, p.returncode, p.stderr[-1000:], text))
    print("seed %d: %d statements overflow int64 in the reference (%d must fail, %d may), "
          "checked alone: %d failed with the overflow line, the others answered exactly%s; "
          "%d that might were past --py-limit to tell, not generated" %
          (seed, len(overflowing), counts["must"], counts["may"], counts["failed"],
           "" if ok else ": MISMATCH", UNTOLD[0]))
    UNTOLD[0] = 0
    return ok


def bounded_alone(args, seed, trace, names, queries, most=6):
    """Statements whose when clause bounds an event variable by constants, or whose where
    clause selects on its attributes, each alone (the relations it ranges over built for
    it only: VIGIL_CACHE=off), at 1 and 2 threads, with the build passing over the events
    outside the bound or not building the tuples the where clause cannot select, and with
    VIGIL_SKIP=off: every answer SQLite's. (That the build was bounded and keyed at all is
    required of keyed_alone's statements, which are made to be.)"""
    ok, tried, bounded, keyed = True, 0, 0, 0
    for n, (q, a) in zip(names, queries):
        timed = q["when"] and "'const'" in repr(q["when"])
        if tried >= most or not (timed or q["where"]) or \
                not any(is_event_var(v) for v in variables_of(q)):
            continue
        tried += 1
        text = range_lines() + tquel(q, "Q") + "\n"
        for threads, skip in ((1, "on"), (2, "on"), (2, "off")):
            got, p = vigil_answers(args.bin, trace, text, ["--stats"], threads,
                                   {"VIGIL_CACHE": "off", "VIGIL_SKIP": skip})
            stats = [json.loads(x) for x in p.stderr.splitlines() if x.startswith('{"stats"')]
            if p.returncode != 0 or not stats:
                print("seed %d %s alone (VIGIL_SKIP=%s, %d threads): exit %d\n%s" %
                      (seed, n, skip, threads, p.returncode, p.stderr[-2000:]))
                return False
            bounded += skip == "on" and stats[0]["stats"]["skip"]["bounded"] > 0
            keyed += skip == "on" and stats[0]["stats"]["skip"]["keyed"] > 0
            if not compare(args, seed, trace, None, n, q, a, got.get("Q", []), False):
                print("  (the statement alone, VIGIL_CACHE=off VIGIL_SKIP=%s, %d threads)" %
                      (skip, threads))
                ok = False
    print("seed %d: %d statements with selections alone, %d runs bounded in time, %d keyed%s"
          % (seed, tried, bounded, keyed, "" if ok else ": MISMATCH"))
    return ok


def keyed_alone(args, seed, trace, rows, db, most=9):
    """Statements over E alone, each with a key selection (some with a time selection
    too), each run alone (together, one statement's alternative would keep the tuples
    another's misread condition loses) with the selections pushed into the build
    (VIGIL_CACHE=off), at 1 and 2 threads in turn: every answer SQLite's; every third also
    bounded in time (E1 overlap (C1 extend C2)). --stats must say each was keyed, and those
    bounded."""
    rng = random.Random(seed * 104729 + 7)
    ok, total = True, 0
    for i in range(most):
        q = {"targets": [(a, ("attr", "E1", a), True) for a in ("key", "val", "tag")],
             "valid": None, "where": None, "when": None, "unique": False, "asof": None}
        q["where"] = key_selection(rng, q, rows)
        timed = i % 3 == 0
        if timed:
            times = sorted(x["b"] for x in rows["E"]) or [0]
            c1, c2 = sorted(rng.choice(times) + rng.choice([-1, 0, 1]) for _ in range(2))
            q["when"] = ("toverlap", ("var", "E1"), ("extend", ("const", date_text(c1, rng), c1),
                                                    ("const", date_text(c2, rng), c2)))
        a = sql_answer(db, q)
        total += len(a)
        threads = 1 + i % 2
        got, p = vigil_answers(args.bin, trace, range_lines() + tquel(q, "K") + "\n",
                               ["--stats"], threads, {"VIGIL_CACHE": "off"})
        stats = [json.loads(x) for x in p.stderr.splitlines() if x.startswith('{"stats"')]
        if p.returncode != 0 or not stats or not stats[0]["stats"]["skip"]["keyed"] or \
                timed != (stats[0]["stats"]["skip"]["bounded"] > 0):
            print("seed %d: a keyed statement (%d threads): exit %d, %s\n%s\n%s" %
                  (seed, threads, p.returncode, stats, tquel(q, "K"), p.stderr[-2000:]))
            return False
        if not compare(args, seed, trace, None, "K%d" % i, q, a, got.get("K", []), False):
            print("  (alone, its selections pushed into the build, %d threads)" % threads)
            ok = False
    print("seed %d: %d statements with key selections alone, %d answer tuples%s" %
          (seed, most, total, "" if ok else ": MISMATCH"))
    return ok


def store_both_ways(args, seed, trace, rows, names, queries, text, out):
    """The same statements compiled to SQL on the PostgreSQL store (`vigil store`, then
    `vigil query postgresql://...`): every answer equal, as a set, to the trace's and to
    SQLite's. A fresh schema per seed; the retrieve into tables are made there."""
    url, schema = args.pg.url(), "seed%d" % seed
    p = subprocess.run([os.path.join(args.bin, "vigil"), "store", trace, "--to", url,
                        "--schema", schema, "-q"], capture_output=True, text=True)
    if p.returncode != 0:
        print("seed %d: vigil store exited %d: %s" % (seed, p.returncode, p.stderr))
        return False
    if not meeting_both_ways(args, seed, trace, url, schema):
        return False
    # as of is refused by the store (it keeps valid times only): those statements are
    # left out, and one of them must be refused with one line
    asof = [(n, q) for n, (q, _) in zip(names, queries) if q.get("asof")]
    if asof:
        n, q = asof[0]
        _, p = vigil_answers(args.bin, url, range_lines() + tquel(q, n) + "\n",
                             ["--schema", schema])
        if p.returncode != 2 or "as of is not available on the store" not in p.stderr:
            print("seed %d: %s with as of on the store: exit %d, %s" %
                  (seed, n, p.returncode, p.stderr[-1000:]))
            return False
    # (name over the trace, over the store): an unnamed retrieve is named after its line
    pairs, text = [], range_lines()
    for n, (q, _) in zip(names, queries):
        if q.get("asof"):
            continue
        m = "retrieve@%d" % (text.count("\n") + 1) if n.startswith("retrieve@") else n
        pairs.append((n, m))
        text += tquel(q, m) + "\n"
    names, queries = [n for n, _ in pairs], [x for x in queries if not x[0].get("asof")]
    store_name = dict(pairs)
    got, p = vigil_answers(args.bin, url, text, ["--schema", schema])
    if p.returncode != 0:
        print("seed %d: vigil query %s exited %d:\n%s" % (seed, url, p.returncode,
                                                         p.stderr[-3000:]))
        return False
    ok, bad = True, 0
    for n, (q, a) in zip(names, queries):
        vt, pt = set(vigil_set(out.get(n, []), q)), vigil_set(got.get(store_name[n], []), q)
        if len(pt) != len(set(pt)):
            print("seed %d %s: PostgreSQL printed duplicate tuples" % (seed, n))
            ok = False
        if set(pt) != vt or set(pt) != a:
            ok = False
            bad += 1
            case = {"seed": seed, "name": n, "query": q, "tquel": tquel(q, n), "sql": sql(q)}
            report(case, set(pt) - a, a - set(pt),
                   "  (the first list: only from PostgreSQL; trace and PostgreSQL %s)" %
                   ("agree" if set(pt) == vt else "differ"))
            if bad >= args.max_failures:
                break
    print("seed %d: PostgreSQL answered %d tuples in %d results%s" %
          (seed, sum(len(v) for v in got.values()), len(got), "" if ok else ": MISMATCH"))
    return ok


MEETING = """retrieve into Meet (k = A1.key) valid from end of A1 to end of B1
  where A1.key = B1.key
range of M1 is Meet
retrieve MeetOverlap (k = M1.k, j = A2.key, v = A2.val) when M1 overlap A2
"""


def meeting_both_ways(args, seed, trace, url, schema):
    """Overlaps at the open end: Meet's intervals [end of A1, end of B1) meet A1's own
    [begin, end), and the stored intervals of a trace seldom meet, so the random queries
    do not test the end the compiled && of int8range must leave open. MeetOverlap over the
    trace and over the store (Meet a table there: its overlap with A compiles to &&) must
    be equal, and Meet must have intervals that meet an A."""
    text = range_lines() + MEETING
    want, p1 = vigil_answers(args.bin, trace, text)
    got, p2 = vigil_answers(args.bin, url, text, ["--schema", schema])
    if p1.returncode or p2.returncode:
        print("seed %d: the meeting intervals' statements exited %d (trace), %d (store):\n%s%s"
              % (seed, p1.returncode, p2.returncode, p1.stderr[-2000:], p2.stderr[-2000:]))
        return False
    tuples = {k: {(kind, t, tuple(sorted(v.items()))) for kind, t, v in rows}
              for k, rows in want.items()}
    meet = {(kind, t, tuple(sorted(v.items()))) for kind, t, v in got.get("MeetOverlap", [])}
    ok = set(want) == set(got) and all(
        tuples[k] == {(kind, t, tuple(sorted(v.items()))) for kind, t, v in got.get(k, [])}
        for k in tuples)
    print("seed %d: Meet has %d intervals, MeetOverlap %d tuples over the trace, %d over the "
          "store%s" % (seed, len(tuples.get("Meet", ())), len(tuples.get("MeetOverlap", ())),
                       len(meet), "" if ok else ": MISMATCH"))
    if not ok:
        print("  only on the store:\n%s  only over the trace:\n%s" % (
            show(meet - tuples.get("MeetOverlap", set())),
            show(tuples.get("MeetOverlap", set()) - meet)))
    return ok and len(tuples.get("Meet", ())) > 0


def replay(args):
    with open(args.replay) as f:
        case = json.load(f)
    q = {k: to_tuple(v) if v is not None else None for k, v in case["query"].items()}
    q["targets"] = [tuple(t) for t in q["targets"]]
    global EMPTY_IS_VALUE
    EMPTY_IS_VALUE = EMPTY_IS_VALUE or case.get("empty_is_value", False)
    rows = load_trace(args.bin, case["trace"])
    db = make_db(rows)
    ans = sql_answer(db, q)
    print("replaying %s on %s: SQLite has %d tuples" % (case["name"], case["trace"], len(ans)))
    name = case["name"]
    if name.startswith("retrieve@"):
        name = "retrieve@%d" % (range_lines().count("\n") + 1)
    out, p = vigil_answers(args.bin, case["trace"], range_lines() + tquel(q, name) + "\n")
    if p.returncode != 0:
        print("vigil query exited %d:\n%s" % (p.returncode, p.stderr))
        return False
    args.fail_dir = os.path.dirname(os.path.dirname(os.path.abspath(args.replay)))
    return compare(args, case["seed"], case["trace"], rows, name, q, ans, out.get(name, []),
                   True)


def start_pg(pg_bin, bin_dir):
    """A PostgreSQL server of its own (tests/logmodel/pgharness.py: a temporary directory,
    a Unix socket there), with .url()."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "logmodel"))
    from pgharness import PgServer
    pg = PgServer(pg_bin, bin_dir)
    try:
        pg.initdb({"fsync": "off"})
        pg.start()
    except Exception:
        pg.cleanup()
        raise
    pg.url = lambda: "postgresql://postgres@/postgres?host=%s&port=%s" % (pg.dir, pg.port)
    return pg


def seed_list(args):
    """The --seeds, and with --fresh one more: VIGIL_SEED if set (to rerun a failure),
    else a new random one, printed either way."""
    seeds = [int(s) for s in args.seeds.split(",") if s]
    if args.fresh:
        env = os.environ.get("VIGIL_SEED")
        fresh = int(env) if env else random.SystemRandom().randrange(1, 1 << 31)
        print("fresh seed %d (rerun it alone with VIGIL_SEED=%d --seeds '' --fresh)" %
              (fresh, fresh), flush=True)
        seeds.append(fresh)
    return seeds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="the build's bin directory")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--fresh", action="store_true",
                    help="one more seed: VIGIL_SEED, or a new one (printed)")
    ap.add_argument("--queries", type=int, default=100, help="per seed")
    ap.add_argument("--events", type=int, default=240, help="per trace")
    ap.add_argument("--semi", type=int, default=12,
                    help="semi-join statements per seed (semijoin_shape), beside --queries")
    ap.add_argument("--cap", type=int, default=5000, help="largest answer generated")
    ap.add_argument("--py-limit", type=int, default=4000,
                    help="largest cross product the Python evaluator checks")
    ap.add_argument("--no-third", dest="third", action="store_false",
                    help="skip the Python evaluator")
    ap.add_argument("--selfcheck", action="store_true",
                    help="compare SQLite with the Python evaluator only (no vigil query)")
    ap.add_argument("--sql-limit", type=int, default=50_000_000,
                    help="largest cross product of a statement's variables generated "
                    "(SQLite joins them with nested loops)")
    ap.add_argument("--budget", type=float, default=60,
                    help="CPU seconds the SQLite answer of one statement may take; past them "
                    "the statement and seed are printed and saved, and the run fails")
    ap.add_argument("--replay", help="a case.json saved by a failing run")
    ap.add_argument("--fail-dir", default="diff_failures")
    ap.add_argument("--max-failures", type=int, default=10, help="per seed")
    ap.add_argument("--keep", help="record the traces here and keep them")
    ap.add_argument("--empty-is-value", action="store_true",
                    help='read empty strings and names as "", not null')
    ap.add_argument("--big-ints", type=float, default=0.08,
                    help="share of integer literals drawn near the int64 bounds (2^62, "
                    "2^63 - 1, 3037000500), so that overflows are met")
    ap.add_argument("--derived", action="store_true",
                    help="range over the derived relations LogEvent and Transition too "
                         "(give it again with --replay)")
    ap.add_argument("--pg", metavar="PG_BIN",
                    help="also run every query on a PostgreSQL store (Debian's server in "
                         "PG_BIN, started here): vigil store, then vigil query postgresql://")
    args = ap.parse_args()
    watch_budget()
    global EMPTY_IS_VALUE
    EMPTY_IS_VALUE = args.empty_is_value
    BIG_INTS[0] = args.big_ints
    if args.derived:
        use_derived()
    if args.replay:
        return 0 if replay(args) else 1
    work = args.keep or tempfile.mkdtemp(prefix="vigil-diff-")
    os.makedirs(work, exist_ok=True)
    try:
        if args.pg:
            args.pg = start_pg(args.pg, args.bin)
        ok = True
        for s in seed_list(args):
            ok = run_seed(args, s, work) and ok
    finally:
        if args.pg:
            args.pg.cleanup()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("query.diff.sqlite: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
