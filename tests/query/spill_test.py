#!/usr/bin/python3
"""Columns spilled past the build's memory budget (docs/query.md, "Traces larger than
memory") answer as the heap's, byte for byte.

    spill_test.py --bin BUILD/bin [--keep DIR]

A recording of diff_subject answers retrieves (a scan, joins, an aggregate: the engine's
results are grown by the same column store) with the default budget (nothing spilled) and
with VIGIL_BUILD_MEMORY=0 (every column of a page or more in the spill file, its pages
dropped at every look of the governor), without a cache at 1 and 2 threads, and with the
cache: the cold query writes the cache from spilled columns, the warm one maps it.
`--stats` must show columns spilled, else the comparison proves nothing. Also: a budget
that is not a size is one line and exit status 2, and a spill directory that cannot be
made is one line and the same answers (columns stay on the heap).
Every vigil runs with a cache directory and HOME inside the test's own temporary
directory."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cache_testlib  # noqa: E402
from cache_testlib import check  # noqa: E402

QUERY = """range of A1 is A
range of B1 is B
range of E1 is E
retrieve (A1.all)
retrieve (E1.key, E1.tag, E1.u) where E1.val > 10
retrieve (A1.tag, B1.val) where A1.key = B1.key when A1 overlap B1
retrieve (E1.key, B1.val) where E1.key = B1.key when E1 precede B1
retrieve (E1.tag, n = count(E1.key by E1.tag))
"""


class Vigil(cache_testlib.Vigil):
    def query(self, trace, threads, budget=None, cache=False, cachedir=None):
        """(exit status, stdout, stderr lines but the stats, the stats)"""
        env = {}
        if budget is not None:
            env["VIGIL_BUILD_MEMORY"] = budget
        if not cache:
            env["VIGIL_CACHE"] = "off"
        if cachedir:
            env["VIGIL_CACHE_DIR"] = cachedir
        return self.run_query(trace, QUERY, env=env, args=["--threads", str(threads)])


def same(ref, got, what):
    check(ref[:3] == got[:3], "%s: the answer differs from the heap's:\n"
          "heap:    exit %d, stderr %s, %d bytes\n%s: exit %d, stderr %s, %d bytes"
          % (what, ref[0], ref[2], len(ref[1]), what, got[0], got[2], len(got[1])))


def spilled(got, what):
    check(got[3].get("spilled_columns", 0) > 0,
          "%s: no column spilled (stats %s)" % (what, got[3]))


def run(v, args, work):
    trace = v.record(os.path.join(work, "trace"), 7, 30000)
    ref = v.query(trace, 1)
    check(ref[0] == 0 and len(ref[1]) > 100000, "the reference query failed or answered little:"
          " exit %d, %s, %d bytes" % (ref[0], ref[2], len(ref[1])))
    check(ref[3].get("spilled_columns") == 0, "the default budget spilled: %s" % ref[3])
    for threads in (1, 2):
        what = "no budget, no cache, %d threads" % threads
        got = v.query(trace, threads, budget="0")
        same(ref, got, what)
        spilled(got, what)
        print("%s: %d columns spilled (%d bytes), %d drops, the same %d bytes" % (
            what, got[3]["spilled_columns"], got[3]["spilled_bytes"], got[3]["spill_trims"],
            len(got[1])))
    cold = v.query(trace, 2, budget="64K", cache=True)
    check(cold[3].get("cache") == "cold", "the cache was not written: %s" % cold[3])
    same(ref, cold, "budget 64K, cache written")
    spilled(cold, "budget 64K, cache written")
    warm = v.query(trace, 1, budget="64K", cache=True)
    check(warm[3].get("cache") == "warm", "the cache written from spilled columns was not "
          "used: %s %s" % (warm[3], warm[2]))
    same(ref, warm, "budget 64K, from the cache written from spilled columns")
    print("cache written from spilled columns: cold and warm the same")

    bad = v.query(trace, 1, budget="lots")
    check(bad[0] == 2 and len(bad[2]) == 1 and "VIGIL_BUILD_MEMORY=lots" in bad[2][0]
          and not bad[1], "a budget that is not a size: exit %d, %s" % (bad[0], bad[2]))
    blocker = os.path.join(work, "a-file")
    with open(blocker, "w") as f:
        f.write("not a directory\n")
    nodir = v.query(trace, 1, budget="0", cachedir=os.path.join(blocker, "cache"))
    check(nodir[0] == 0 and nodir[1] == ref[1] and len(nodir[2]) == 1
          and "cannot spill columns" in nodir[2][0],
          "an unmakeable spill directory: exit %d, %s" % (nodir[0], nodir[2]))
    print("bad budget: one line, exit 2; no spill directory: one line, the same answers")


if __name__ == "__main__":
    sys.exit(cache_testlib.main("query.spill", __doc__, run, Vigil))
