#!/usr/bin/python3
"""Operator state against the query's memory budget (docs/query.md, "Larger than memory:
the operators"): VIGIL_QUERY_MEMORY bounds what a statement's operators hold (materialised
bindings, hash tables, an aggregate's contributions, a parallel sort's merge buffer).
Bindings past it move to the spill file, hash joins and aggregates to partitioned spill
files (tests/query/spill_ops_test.py), and the answer is the same (`--stats`
spilled_memory says so); state that cannot spill stops the statement with one line
naming it and the budget, exit 2, nothing on stdout.

    memory_test.py --bin BUILD/bin [--keep DIR]

On a recording of diff_subject, for a hash join, an aggregate, a scan and a semi-join (its
table and its column result, docs/query.md):
  * at 1 thread (the order of allocations is fixed), `--stats` peak_memory P of the
    unbounded run; with VIGIL_QUERY_MEMORY=P the same answer, nothing spilled; with P - 1
    the one line, or the same answer with bindings spilled (so a budget that is ignored,
    or a peak that is not what was held, fails here);
  * with 4K: the scan answers the same from spilled bindings, the hash join is refused
    naming its partition (one partition of its table is past 4K), the aggregate naming
    its group, the semi-join its result's rows;
  * at 2 threads, budgets from P/8 to 2P: every run is the unbounded answer or the one
    line, those under P/2 spilled or refused, and some answer;
  * a budget that is not a size: one line, exit 2.
Every vigil runs with VIGIL_CACHE=off, the spill file and HOME inside the test's own
temporary directory."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cache_testlib  # noqa: E402
from cache_testlib import check  # noqa: E402

SHAPES = {
    "hash join": "range of E1 is E range of B1 is B retrieve (E1.tag, B1.val) valid at E1 "
                 "where E1.key = B1.key and E1.val = B1.val",
    "aggregate": "range of E1 is E retrieve (E1.tag, n = count(E1.key by E1.tag))",
    "scan": "range of E1 is E retrieve (E1.key, E1.tag, E1.u) where E1.val > 10",
    # the semi-join by columns and its column result (exec_semijoin_result.c)
    "semi-join": "range of E1 is E range of E2 is E retrieve (E1.key, E1.val) valid at E1 "
                 "where E2.key = E1.key when E2 precede E1",
}
REFUSED = re.compile(r"^.+:\d+:\d+: error: \S+: (the bindings of a [a-z -]+, materialised, need|"
                     r"the [a-z -]+'s [a-z]+(?: \([^()]+\))? needs) [0-9.]+ [A-Za-z]+ more "
                     r"with [0-9.]+ "
                     r"[A-Za-z]+ held, past the query's memory budget "
                     r"\(VIGIL_QUERY_MEMORY=[0-9.]+ [A-Za-z]+\); raise it, or select more")


class Vigil(cache_testlib.Vigil):
    def __init__(self, bin_dir, work):
        super().__init__(bin_dir, work)
        self.env["VIGIL_CACHE"] = "off"

    def query(self, trace, text, threads, budget=None):
        """(exit status, stdout, stderr lines but the stats, the stats)"""
        env = {} if budget is None else {"VIGIL_QUERY_MEMORY": str(budget)}
        return self.run_query(trace, text, env=env, args=["--threads", str(threads)])


def refused(got, what):
    check(got[0] == 2 and not got[1] and len(got[2]) == 1 and REFUSED.match(got[2][0]),
          "%s: not the one line of a refusal: exit %d, %d bytes out, stderr %s"
          % (what, got[0], len(got[1]), got[2]))


def answered(ref, got, what):
    check(got[0] == 0 and got[1] == ref[1] and not got[2],
          "%s: not the unbounded answer: exit %d, %d bytes (%d), stderr %s"
          % (what, got[0], len(got[1]), len(ref[1]), got[2]))


def spilled(got):
    return got[3]["statements"][0]["spilled_memory"]


def bounded(ref, got, what):
    """Past the budget: refused, or the same answer from spilled bindings."""
    if got[0] == 0:
        answered(ref, got, what)
        check(spilled(got) > 0, "%s: answered past the budget with nothing spilled: %s"
              % (what, got[3]))
        return "spilled"
    refused(got, what)
    return "refused"


def run(v, args, work):
    trace = v.record(os.path.join(work, "trace"), 7, 30000)
    for shape, text in SHAPES.items():
        ref = v.query(trace, text, 1)
        check(ref[0] == 0 and len(ref[1]) > 10000 and not ref[2],
              "%s: the unbounded query failed or answered little: exit %d, %s, %d bytes"
              % (shape, ref[0], ref[2], len(ref[1])))
        check(ref[3].get("query_memory", 0) > 0, "%s: no query_memory in %s" % (shape, ref[3]))
        peak = ref[3]["statements"][0]["peak_memory"]
        check(peak > 0, "%s: no operator state counted: %s" % (shape, ref[3]))
        if shape == "hash join":
            plan = subprocess.run([os.path.join(v.bin, "vigil"), "explain", trace, "-e", text],
                                  env=v.env, capture_output=True, text=True).stdout
            check("hash join[" in plan, "not a hash join:\n%s" % plan)
        if shape == "semi-join":
            plan = subprocess.run([os.path.join(v.bin, "vigil"), "explain", trace, "-e", text],
                                  env=v.env, capture_output=True, text=True).stdout
            check("semi-join[" in plan, "not a semi-join:\n%s" % plan)
        check(spilled(ref) == 0, "%s: the unbounded run spilled: %s" % (shape, ref[3]))
        at = v.query(trace, text, 1, peak)
        answered(ref, at, "%s, 1 thread, budget = its peak %d" % (shape, peak))
        check(spilled(at) == 0, "%s: spilled within the budget: %s" % (shape, at[3]))
        under = bounded(ref, v.query(trace, text, 1, peak - 1), "%s, 1 thread, budget %d"
                        % (shape, peak - 1))
        tiny = bounded(ref, v.query(trace, text, 1, 4096), "%s, 1 thread, budget 4K" % shape)
        # 4K holds no partition of a hash join's table or of an aggregate's groups (past
        # larger budgets they spill: tests/query/spill_ops_test.py)
        want = {"scan": "spilled", "hash join": "hash join's partition",
                "aggregate": "aggregate's group", "semi-join": "result's rows"}[shape]
        got = v.query(trace, text, 1, 4096)
        check(tiny == want if want == "spilled" else want in got[2][0],
              "%s, budget 4K: %s, not %s (%s)" % (shape, tiny, want, got[2]))
        print("%s: peak %d bytes of operator state; that budget answers, one byte less: %s; "
              "4K: %s" % (shape, peak, under, tiny))
        peak2 = v.query(trace, text, 2)[3]["statements"][0]["peak_memory"]
        outcomes = []
        for k in (1, 2, 3, 6, 7, 8, 9, 12, 16):
            budget = peak2 * k // 8
            got = v.query(trace, text, 2, budget)
            what = "%s, 2 threads, budget %d" % (shape, budget)
            if k < 4:
                outcomes.append(bounded(ref, got, what))
            elif got[0] == 0:
                answered(ref, got, what)
                outcomes.append("spilled" if spilled(got) else "answer")
            else:
                refused(got, what)
                outcomes.append("refused")
        check("answer" in outcomes, "%s, 2 threads: budgets P/8..2P (P = %d) gave %s"
              % (shape, peak2, outcomes))
        print("%s, 2 threads (peak %d): %s" % (shape, peak2, " ".join(outcomes)))
    bad = v.query(trace, SHAPES["scan"], 1, "lots")
    check(bad[0] == 2 and len(bad[2]) == 1 and "VIGIL_QUERY_MEMORY=lots" in bad[2][0]
          and not bad[1], "a budget that is not a size: exit %d, %s" % (bad[0], bad[2]))
    print("a budget that is not a size: one line, exit 2")


if __name__ == "__main__":
    sys.exit(cache_testlib.main("query.memory", __doc__, run, Vigil))
