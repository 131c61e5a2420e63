#!/usr/bin/python3
"""The differential tests' per-statement budget (diff_test.py `budget`, used by diff_agg.py)
counts CPU time, not wall time: a statement that only waits (a loaded machine's process
waiting for a core) is not failed, while Python or SQLite computing past the budget is,
with the statement named, keep() called and exit status 1.

    diff_budget_test.py"""
import argparse
import contextlib
import io
import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diff_test as D  # noqa: E402

BUDGET = 0.5


class Fail(Exception):
    pass


def within(body):
    """Runs body() under a BUDGET-second budget: (exit status or None, printed, kept)."""
    args = argparse.Namespace(budget=BUDGET)
    kept, out = [], io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            with D.budget(args, 7, lambda: "retrieve (X.all)", lambda: {"X": 3},
                          lambda: kept.append(True)):
                body()
    except SystemExit as e:
        return e.code, out.getvalue(), kept
    return None, out.getvalue(), kept


def spin():
    while True:
        pass


def sqlite_spin():
    db = D.make_db({})  # with the budget's progress handler
    db.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
               "SELECT count(*) FROM n").fetchall()


def main():
    D.watch_budget()
    code, out, kept = within(lambda: time.sleep(3 * BUDGET))
    if code is not None or kept:
        raise Fail("waiting %g s (no CPU) failed a %g s budget: %s" % (3 * BUDGET, BUDGET, out))
    for name, body in (("Python", spin), ("SQLite", sqlite_spin)):
        t = time.process_time()
        code, out, kept = within(body)
        used = time.process_time() - t
        if code != 1 or not kept or "retrieve (X.all)" not in out or "seed 7" not in out:
            raise Fail("%s computing past the budget: exit %s, kept %s, printed %r"
                       % (name, code, kept, out))
        if used < 0.5 * BUDGET:  # (the kernel's CPU timer and process_time differ a little)
            raise Fail("%s stopped after %.2f s of CPU time, well before its %g s budget"
                       % (name, used, BUDGET))
        print("%s spinning: stopped after %.2f s of CPU time" % (name, used))
    print("waiting %g s under a %g s budget: not stopped" % (3 * BUDGET, BUDGET))


if __name__ == "__main__":
    try:
        main()
    except Fail as e:
        print("query.diff.budget: FAILED: %s" % e)
        sys.exit(1)
    print("query.diff.budget: ok")
