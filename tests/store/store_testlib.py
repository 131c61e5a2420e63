"""What the PostgreSQL store tests share (store_test.py, query_store_test.py,
derived_store_test.py): failures counted as they are found, commands run, a query's
answers by result relation, a query answered over a trace and over the store and the two
answers compared, Debian's PostgreSQL started in a temporary directory on a Unix socket,
and a run's end (its directory kept when something failed)."""
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "logmodel"))
from pgharness import PgServer  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(vigil, source, text, extra=()):
    """{relation: list of (kind, times, values)} and the process."""
    p = run([vigil, "query", source, "-e", text, "--format", "json"] + list(extra))
    out = {}
    if p.returncode == 0:
        for line in p.stdout.splitlines():
            o = json.loads(line)
            times = (o["at"],) if o["kind"] == "event" else (o["from"], o["to"])
            vals = tuple(sorted((k, json.dumps(v)) for k, v in o["values"].items()))
            out.setdefault(o["relation"], []).append((o["kind"], times, vals))
    return out, p


def compare(name, vigil, trace, url, text, store_extra=(), as_sets=False):
    """`text` answered over the trace and over the store at url (with store_extra): both
    exit 0, the trace's answer is not empty and the two are equal, as multisets (as sets
    with as_sets, each tuple once from the store)."""
    want, p1 = answers(vigil, trace, text)
    got, p2 = answers(vigil, url, text, store_extra)
    if not check(p1.returncode == 0 and p2.returncode == 0,
                 "%s: exits %d (trace) and %d (store): %s %s" %
                 (name, p1.returncode, p2.returncode, p1.stderr[-400:], p2.stderr[-400:])):
        return
    check(want and all(want.values()), "%s: the trace's answer is empty" % name)
    check(set(want) == set(got), "%s: results %s vs %s" % (name, set(want), set(got)))
    for rel, tuples in want.items():
        g = got.get(rel, [])
        if as_sets:
            check(len(g) == len(set(g)), "%s: duplicate tuples from the store" % name)
            tuples, g = list(set(tuples)), list(set(g))
        check(sorted(tuples) == sorted(g),
              "%s %s: %d tuples over the trace, %d over the store; only trace %s; "
              "only store %s" % (name, rel, len(tuples), len(g),
                                 sorted(set(tuples) - set(g))[:3],
                                 sorted(set(g) - set(tuples))[:3]))


@contextlib.contextmanager
def postgres(pg_bin, bin_dir):
    """A PostgreSQL server of its own (fsync off) on a Unix socket: (server, URL)."""
    pg = PgServer(pg_bin, bin_dir)
    try:
        pg.initdb({"fsync": "off"})
        pg.start()
        yield pg, "postgresql://postgres@/postgres?host=%s&port=%s" % (pg.dir, pg.port)
    finally:
        pg.cleanup()


def finish(tmp, name):
    """The exit status: 1 when a check failed (tmp kept), else 0 (tmp removed)."""
    if failures:
        print("%d failure(s); kept %s" % (len(failures), tmp), file=sys.stderr)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("%s: ok" % name, file=sys.stderr)
    return 0
