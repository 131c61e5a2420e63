#!/usr/bin/python3
"""The relations cache (docs/query.md, "The relations cache"): answers from the cache are
the trace's answers, whatever happened to the trace or the cache since.

    cache_test.py --bin BUILD/bin [--keep DIR]

1. differential: random retrieves (tests/query/diff_test.py's, checked there against
   SQLite while the cache is written) answered again from the cache and without it:
   the same bytes;
2. a trace grown after caching (one more process image) and damaged after caching (a
   stream cut short) answers as the trace now is, damage report and exit status
   included, cold and warm;
3. a trace directory vigil cannot write: the cache goes to the cache directory;
4. a cache file damaged anywhere (bytes changed, cut short; the manifest or a relation's
   file): one line at most, never another answer, and the next query is warm again;
5. a partial cache: a query over some relations caches those only (and the entity
   relations); a later query naming others adds them ("added") and answers as the trace,
   texts equal across relations cached apart (a join on a text attribute) included; a
   trace grown or damaged after a partial cache answers anew, and the files of relations
   it did not name, of the older trace, are removed (links, FIFOs, temporary and damaged
   files left alone);
6. queries at once on one trace (cold, naming different relations): every answer the
   trace's, and the cache they leave whole (warm answers the trace's, no damage said);
7. columns checked once (cache_checked.c): a later query sums none of them again while
   the file is the one checked, but a file written since, its modification time put back,
   is checked again: damage said, never another answer; a damaged record is no record;
8. time selections on a warm cache: an event relation every statement bounds in time is
   the rows of its file within the bound (`"skip":{"bounded":1}`), the answers those
   without the cache give, bounds at events' own instants, before and after them all;
9. columns an earlier query checked are read into memory of the query's own
   (cache_copy.c, `cache_copied_bytes`) under the default budget and mapped past half of
   a 256K one: the trace's answers either way, at 1 and 2 threads, a time slice included.
Every vigil runs with VIGIL_CACHE_MIN_EVENTS=0 (small traces are cached too) and a cache
directory and HOME inside the test's own temporary directory."""
import glob
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import random
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cache_testlib  # noqa: E402
from cache_testlib import check  # noqa: E402

QUERY = """range of A1 is A
range of A2 is A
range of B1 is B
range of E1 is E
retrieve (A1.all)
retrieve (A1.tag, B1.val) where A1.key = B1.key when A1 overlap B1
retrieve (E1.key, E1.tag, E1.u) where E1.val > 10
retrieve (A1.owner, n = count(A2.key by A2.tag))
"""


class Vigil(cache_testlib.Vigil):
    def query(self, trace, text, cache=True, user=None):
        """(exit status, stdout, stderr lines but the stats, the cache outcome)"""
        prefix = []
        if user:
            prefix = ["setpriv", "--reuid=%d" % user.pw_uid, "--regid=%d" % user.pw_gid,
                      "--clear-groups", "--"]
        got = self.run_query(trace, text, env=None if cache else {"VIGIL_CACHE": "off"},
                             prefix=prefix)
        return got[:3] + (got[3].get("cache"),)


def same_as_trace(v, trace, text, want_cache, what):
    """The cached answer (outcome want_cache) equals the answer without a cache."""
    ref = v.query(trace, text, cache=False)
    got = v.query(trace, text)
    check(got[3] == want_cache, "%s: cache %s, expected %s (stderr %s)"
          % (what, got[3], want_cache, got[2]))
    check(ref[:3] == got[:3], "%s: the answer differs from the trace's:\n"
          "without cache: exit %d, stderr %s, %d bytes\nwith cache:    exit %d, stderr %s, "
          "%d bytes" % (what, ref[0], ref[2], len(ref[1]), got[0], got[2], len(got[1])))
    return got


def differential(v, args, work):
    keep = os.path.join(work, "diff")
    p = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "diff_test.py"),
                        "--bin", args.bin, "--seeds", "5", "--queries", "60", "--keep", keep],
                       env=v.env, capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, "diff_test.py with the cache on: %s%s" % (p.stdout, p.stderr))
    trace = os.path.join(keep, "trace-5")
    check(os.path.exists(os.path.join(trace, ".vigil-cache")), "diff_test.py left no cache")
    with open(os.path.join(keep, "queries-5.tq")) as f:
        text = f.read()
    got = same_as_trace(v, trace, text, "warm", "random retrieves")
    print("differential: %d bytes of answers equal from the cache and the trace" % len(got[1]))


def grown_and_damaged(v, work):
    trace = v.record(os.path.join(work, "grow"), 11, 2000)
    same_as_trace(v, trace, QUERY, "cold", "first query")
    same_as_trace(v, trace, QUERY, "warm", "second query")
    before = v.query(trace, QUERY)[1]
    # grown: another recording's directory (its image, or its shared directory) in the trace
    extra = v.record(os.path.join(work, "extra"), 12, 1000)
    image = [d for d in os.listdir(extra) if os.path.isdir(os.path.join(extra, d))][0]
    shutil.copytree(os.path.join(extra, image), os.path.join(trace, "grown-" + image))
    got = same_as_trace(v, trace, QUERY, "cold", "grown trace")
    check(got[1] != before, "the grown trace answers as before it grew")
    same_as_trace(v, trace, QUERY, "warm", "grown trace, again")
    # damaged: the largest stream cut in the middle of a packet
    streams = [os.path.join(r, f) for r, _, fs in os.walk(trace) for f in fs
               if f != "metadata" and not f.startswith(".")]
    big = max(streams, key=os.path.getsize)
    os.truncate(big, os.path.getsize(big) * 2 // 3 + 3)
    got = same_as_trace(v, trace, QUERY, "cold", "damaged trace")
    check(got[0] == 1 and any("damaged place" in x for x in got[2]),
          "the damaged trace does not say so: exit %d, %s" % (got[0], got[2]))
    same_as_trace(v, trace, QUERY, "warm", "damaged trace, again")
    print("grown and damaged: new answers, damage said cold and warm")
    return trace


def read_only(v, work):
    trace = v.record(os.path.join(work, "ro"), 13, 1500)
    cachedir = v.env["VIGIL_CACHE_DIR"]
    if os.geteuid() == 0:  # root writes anywhere: ask as nobody
        user = pwd.getpwnam("nobody")
        os.makedirs(cachedir, exist_ok=True)
        os.chown(cachedir, user.pw_uid, user.pw_gid)
        os.chmod(work, 0o755)
    else:
        user = None
        os.chmod(trace, 0o555)
    try:
        ref = v.query(trace, QUERY, cache=False, user=user)
        for want in ("cold", "warm"):
            got = v.query(trace, QUERY, user=user)
            check(got[3] == want and got[:3] == ref[:3],
                  "read-only trace, %s: cache %s, stderr %s" % (want, got[3], got[2]))
    finally:
        os.chmod(trace, 0o755)
    check(not os.path.exists(os.path.join(trace, ".vigil-cache")),
          "a cache was written into the read-only trace directory")
    files = [f for f in os.listdir(cachedir) if f.endswith(".vgc")]
    check(len(files) == 1, "the cache directory holds %s" % files)
    print("read-only trace: cache in %s" % os.path.join(cachedir, files[0]))


def damaged_cache(v, trace):
    manifest = os.path.join(trace, ".vigil-cache")
    check(v.query(trace, QUERY)[3] == "warm", "no warm cache to damage")
    rels = sorted(glob.glob(manifest + ".rel-*"), key=os.path.getsize)
    check(len(rels) >= 4, "relation files: %s" % rels)
    # the manifest, the largest relation's file and an entity relation's
    for path, spread in ((manifest, 23), (rels[-1], 11), (manifest + ".rel-Owner", 7)):
        damaged_file(v, trace, path, spread)


def damaged_file(v, trace, path, spread):
    ref = v.query(trace, QUERY, cache=False)
    check(v.query(trace, QUERY)[3] == "warm", "no warm cache to damage")
    with open(path, "rb") as f:
        good = f.read()
    size = len(good)
    # bytes changed at places spread over the whole file, then the file cut short
    cases = [("byte %d changed" % at, at) for at in
             sorted({0, 8, 40, 63, 64, 100, size // 2, size - 8, size - 1} |
                    {size * k // spread + 5 for k in range(spread)})]
    cases.append(("cut to half", -1))
    detected = 0
    for what, at in cases:
        bad = bytearray(good)
        if at < 0:
            bad = bad[:size // 2]
        else:
            bad[at] ^= 0x5A
        with open(path, "wb") as f:
            f.write(bad)
        got = v.query(trace, QUERY)
        said = [x for x in got[2] if "relations cache" in x]
        check(got[0] == ref[0] and got[1] == ref[1],
              "damaged cache (%s): another answer (exit %d, stderr %s)" % (what, got[0], got[2]))
        check(len(said) <= 1 and got[2] == said + ref[2],
              "damaged cache (%s): stderr %s" % (what, got[2]))
        if said:
            detected += 1
            check(got[3] == "rebuilt", "damaged cache (%s): outcome %s" % (what, got[3]))
            check(v.query(trace, QUERY)[3] == "warm", "not warm after rebuilding (%s)" % what)
    check(detected >= len(cases) // 2, "only %d of %d damaged caches noticed (%s)"
          % (detected, len(cases), path))
    print("damaged cache %s: %d of %d damages said in one line, every answer the trace's"
          % (os.path.basename(path), detected, len(cases)))


def not_regular(v, trace):
    """A FIFO or a symbolic link where the cache would go is neither read (no hang) nor
    replaced; the query answers from the trace."""
    cache = os.path.join(trace, ".vigil-cache")
    text = "range of A is A retrieve (A.tag, A.key)"
    want = v.query(trace, text, cache=False)
    target = os.path.join(os.path.dirname(trace), "link-target")
    with open(target, "w") as f:
        f.write("not a cache\n")
    for kind in ("fifo", "symlink"):
        if os.path.lexists(cache):
            os.unlink(cache)
        if kind == "fifo":
            os.mkfifo(cache)
        else:
            os.symlink(target, cache)
        got = v.query(trace, text)
        check(got[:2] == want[:2], "%s in the cache's place: answer %r" % (kind, got[2]))
        st = os.lstat(cache)
        check((stat.S_ISFIFO(st.st_mode) if kind == "fifo" else stat.S_ISLNK(st.st_mode)),
              "the %s in the cache's place was replaced" % kind)
    with open(target) as f:
        check(f.read() == "not a cache\n", "the symbolic link's target was written")
    os.unlink(cache)
    print("not a regular file: left alone, answers from the trace")


QUERY_A = """range of A1 is A
retrieve (A1.all)
retrieve (A1.tag, A1.owner, n = count(A1.key by A1.tag))
"""
QUERY_EA = """range of A1 is A
range of E1 is E
retrieve (E1.key, E1.tag, E1.u) where E1.val > 10
retrieve (ak = A1.key, ek = E1.key, A1.tag) where A1.tag = E1.tag and A1.key = E1.key
    when E1 overlap A1
retrieve (A1.owner, n = count(E1.key by E1.tag))
retrieve (E1.key, E1.val) where E1.tag = "y"
retrieve (A1.key, A1.val) where A1.tag = "x"
"""
QUERY_B = """range of B1 is B
retrieve (B1.key, B1.val)
"""


def rel_files(trace):
    return sorted(os.path.basename(f)[len(".vigil-cache.rel-"):]
                  for f in glob.glob(os.path.join(trace, ".vigil-cache.rel-*")))


def partial(v, work):
    """A cache holding some relations: later queries add the others."""
    trace = v.record(os.path.join(work, "partial"), 21, 3000)
    same_as_trace(v, trace, QUERY_A, "cold", "partial: A alone")
    have = rel_files(trace)
    check("A" in have and "E" not in have and "B" not in have and "Owner" in have,
          "a query over A cached %s" % have)
    # E and A: A from its file, E built and added; a join on texts across the two
    got = same_as_trace(v, trace, QUERY_EA, "added", "partial: E and A")
    check(got[1].count('"ek"') > 10, "partial: no answer to the join: %r" % got[1][:300])
    check("E" in rel_files(trace), "E was not added: %s" % rel_files(trace))
    same_as_trace(v, trace, QUERY_EA, "warm", "partial: E and A again")
    same_as_trace(v, trace, QUERY, "added", "partial: A, B, E")
    same_as_trace(v, trace, QUERY_A, "warm", "partial: A again")
    # grown after a partial cache: every relation's answer anew
    trace2 = v.record(os.path.join(work, "partial2"), 22, 3000)
    same_as_trace(v, trace2, QUERY_B, "cold", "partial2: B alone")
    before = v.query(trace2, QUERY_EA, cache=False)[1]
    extra = v.record(os.path.join(work, "extra2"), 23, 1000)
    image = [d for d in os.listdir(extra) if os.path.isdir(os.path.join(extra, d))][0]
    shutil.copytree(os.path.join(extra, image), os.path.join(trace2, "grown-" + image))
    # beside the files of the older key: what cleaning them must leave alone (a link to a
    # stale file outside, a FIFO, a temporary file, a damaged file)
    cache = os.path.join(trace2, ".vigil-cache")
    outside = os.path.join(work, "outside-B")
    shutil.copyfile(cache + ".rel-B", outside)
    keep = [cache + ".rel-Zlink", cache + ".rel-Zfifo", cache + ".rel-B.tmp.1.2",
            cache + ".rel-Zcut"]
    os.symlink(outside, keep[0])
    os.mkfifo(keep[1])
    shutil.copyfile(cache + ".rel-B", keep[2])
    with open(cache + ".rel-B", "rb") as f, open(keep[3], "wb") as g:
        g.write(f.read(40))
    got = same_as_trace(v, trace2, QUERY_EA, "cold", "partial2 grown: E and A")
    check(got[1] != before, "the grown trace answers as before it grew")
    # the new key's manifest written: B's file of the older key is gone, the rest stays
    have = rel_files(trace2)
    check("B" not in have and "A" in have and "E" in have,
          "after the trace grew, a query over E and A left %s" % have)
    check(all(os.path.lexists(k) for k in keep) and os.path.exists(outside) and
          os.path.islink(keep[0]) and stat.S_ISFIFO(os.lstat(keep[1]).st_mode),
          "cleaning the older key's files touched others: %s" % os.listdir(trace2))
    for k in keep:
        os.unlink(k)
    same_as_trace(v, trace2, QUERY_B, "added", "partial2 grown: B (stale file)")
    same_as_trace(v, trace2, QUERY, "warm", "partial2 grown: A, B, E")
    # a relation's file damaged under a partial cache: said, rebuilt, the trace's answer
    path = os.path.join(trace2, ".vigil-cache.rel-E")
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        b = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([b[0] ^ 0x5A]))
    ref = v.query(trace2, QUERY_EA, cache=False)
    got = v.query(trace2, QUERY_EA)
    said = [x for x in got[2] if "relations cache" in x]
    check(got[3] == "rebuilt" and len(said) == 1 and got[:2] == ref[:2] and
          got[2] == said + ref[2], "partial2, E's file damaged: %s %s" % (got[3], got[2]))
    same_as_trace(v, trace2, QUERY_EA, "warm", "partial2: E rebuilt")
    # damaged trace after a partial cache
    streams = [os.path.join(r, f) for r, _, fs in os.walk(trace2) for f in fs
               if f != "metadata" and not f.startswith(".")]
    big = max(streams, key=os.path.getsize)
    os.truncate(big, os.path.getsize(big) * 2 // 3 + 3)
    same_as_trace(v, trace2, QUERY_B, "cold", "partial2 damaged: B")
    got = same_as_trace(v, trace2, QUERY_EA, "added", "partial2 damaged: E and A")
    check(got[0] == 1 and any("damaged place" in x for x in got[2]),
          "the damaged trace does not say so: exit %d, %s" % (got[0], got[2]))
    same_as_trace(v, trace2, QUERY, "warm", "partial2 damaged: A, B, E")
    print("partial cache: relations added as named, answers the trace's")


def concurrent(v, work):
    """Queries at once on a trace without a cache, naming different relations."""
    trace = v.record(os.path.join(work, "together"), 31, 4000)
    texts = [QUERY_A, QUERY_EA, QUERY_B, QUERY, QUERY_EA, QUERY_A, QUERY]
    refs = {t: v.query(trace, t, cache=False) for t in set(texts)}
    for round_ in range(2):
        for f in glob.glob(os.path.join(trace, ".vigil-cache*")):
            os.unlink(f)
        got = [None] * len(texts)

        def run(i):
            got[i] = v.query(trace, texts[i])
        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(texts))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i, t in enumerate(texts):
            check(got[i][:3] == refs[t][:3] and got[i][3] in ("cold", "added", "warm"),
                  "concurrent round %d, query %d: cache %s, stderr %s"
                  % (round_, i, got[i][3], got[i][2]))
        for t in set(texts):
            again = v.query(trace, t)
            check(again[3] == "warm" and again[:3] == refs[t][:3],
                  "after concurrent queries: cache %s, stderr %s" % (again[3], again[2]))
    check(not glob.glob(os.path.join(trace, ".vigil-cache*.tmp.*")),
          "temporary files left: %s" % glob.glob(os.path.join(trace, "*.tmp.*")))
    print("concurrent: %d queries at once, 2 rounds, every answer the trace's" % len(texts))


def checked_once(v, work):
    """Columns checked once are trusted while their file is unchanged, and only then."""
    trace = v.record(os.path.join(work, "checked"), 24, 3000)
    ref = v.query(trace, QUERY, cache=False)
    check(v.query(trace, QUERY)[3] == "cold", "checked: not cold")
    time.sleep(1.5)  # a record is kept only for files a second older than their check
    sums = []
    for _ in range(2):
        got = v.run_query(trace, QUERY)
        check(got[:3] == ref[:3] and got[3].get("cache") == "warm",
              "checked: warm answer differs or not warm: %s %s" % (got[2], got[3]))
        sums.append(got[3]["cache_checked_bytes"])
    check(sums[0] > 0 and sums[1] == 0, "checked: bytes summed by two warm queries %s "
          "(expected some, then none)" % sums)
    path = max((f for f in glob.glob(os.path.join(trace, ".vigil-cache.rel-*"))
                if not f.endswith("%checked")), key=os.path.getsize)
    # the records damaged: no record, every column checked again
    records = glob.glob(os.path.join(trace, ".vigil-cache.rel-*%checked"))
    check(path + "%checked" in records, "checked: no record of %s" % path)
    for rec in records:
        with open(rec, "r+b") as f:
            f.seek(40)
            b = f.read(1)
            f.seek(40)
            f.write(bytes([b[0] ^ 1]))
    got = v.run_query(trace, QUERY)
    check(got[:3] == ref[:3] and got[3]["cache_checked_bytes"] == sums[0],
          "checked: a damaged record was trusted (%d bytes summed)"
          % got[3]["cache_checked_bytes"])
    # the relation's file damaged in place, its modification time put back: checked again
    size, detected = os.path.getsize(path), 0
    for k in range(1, 6):
        time.sleep(1.2)  # the file a second old: the next query records its check
        pre = [v.run_query(trace, QUERY)[3]["cache_checked_bytes"] for _ in range(2)]
        check(pre[1] == 0, "checked: no record before the damage %d/6 (%s)" % (k, pre))
        st = os.stat(path)
        with open(path, "r+b") as f:
            f.seek(size * k // 6)
            b = f.read(1)
            f.seek(size * k // 6)
            f.write(bytes([b[0] ^ 0x5A]))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        got = v.run_query(trace, QUERY)
        check(got[0] == ref[0] and got[1] == ref[1], "checked: damaged at %d/6, mtime put "
              "back: another answer (stderr %s)" % (k, got[2]))
        check(got[3]["cache_checked_bytes"] > 0, "checked: damaged at %d/6, mtime put "
              "back: nothing checked again" % k)
        if got[3].get("cache") == "rebuilt":
            detected += 1
            path = max((f for f in glob.glob(os.path.join(trace, ".vigil-cache.rel-*"))
                        if not f.endswith("%checked")), key=os.path.getsize)
            size = os.path.getsize(path)
    check(detected >= 3, "checked: only %d of 5 in-place damages said" % detected)
    print("checked once: summed %d bytes, then none; a damaged record ignored; %d of 5 "
          "in-place damages (mtime put back) said, every answer the trace's"
          % (sums[0], detected))


def warm_slices(v, work):
    """Time-bounded statements over the event relation E answered from the warm cache."""
    from diff_test import date_text
    trace = v.record(os.path.join(work, "slices"), 25, 3000)
    got = v.query(trace, "range of E1 is E retrieve (E1.key)", cache=False)
    times = sorted(json.loads(x)["at"] for x in got[1].splitlines())
    check(len(times) > 100, "slices: %d events of E" % len(times))
    rng = random.Random(25)
    cuts = [(times[0] - 10, times[-1] + 10), (times[0] - 10, times[0] - 5),
            (times[-1] + 5, times[-1] + 10), (times[0], times[0]), (times[-1], times[-1])]
    for _ in range(8):
        a, b = sorted(rng.sample(times, 2))
        cuts.append((a + rng.choice([-1, 0, 1]), b + rng.choice([-1, 0, 1])))
    check(v.query(trace, "range of E1 is E retrieve (E1.key)")[3] == "cold", "slices: cold?")
    sliced = 0
    for a, b in cuts:
        ta, tb = date_text(a, rng), date_text(b, rng)
        for when in ('E1 overlap ("%s" extend "%s")' % (ta, tb),
                     '"%s" precede E1 and E1 precede "%s"' % (ta, tb)):
            text = ("range of E1 is E retrieve (E1.all) "
                    "when %s" % when)
            ref = v.query(trace, text, cache=False)
            warm = v.run_query(trace, text)
            check(warm[3].get("cache") == "warm" and warm[:3] == ref[:3],
                  "slices: %s: cache %s, answers %s" % (when, warm[3].get("cache"),
                                                         "equal" if warm[1] == ref[1]
                                                         else "differ"))
            sliced += warm[3]["skip"]["bounded"]
    check(sliced == 2 * len(cuts), "slices: %d of %d warm queries sliced" % (sliced,
                                                                          2 * len(cuts)))
    # another statement over E without a bound: E whole
    text = ('range of E1 is E retrieve (E1.key) when E1 overlap ("%s" extend "%s")\n'
            'retrieve (n = count(E1.key))' % (date_text(times[5], rng),
                                                date_text(times[9], rng)))
    warm, ref = v.run_query(trace, text), v.query(trace, text, cache=False)
    check(warm[:3] == ref[:3] and warm[3]["skip"]["bounded"] == 0,
          "slices: a statement without a bound: %s, bounded %d" % (
              "equal" if warm[1] == ref[1] else "another answer", warm[3]["skip"]["bounded"]))
    print("warm time slices: %d bounded statements answered as without the cache" %
          (2 * len(cuts)))


def copied_columns(v, work):
    """A warm query reads the columns an earlier query checked into memory of its own
    (src/relations/cache_copy.c) while they fit half the build's budget, and maps them
    past it, and with VIGIL_CACHE_COPY=off; by default where this machine's mapped pages
    are dear to load: the same answers every way, at 1 and 2 threads, time slices
    included."""
    from diff_test import date_text
    trace = v.record(os.path.join(work, "copied"), 26, 40000)
    got = v.query(trace, "range of E1 is E retrieve (E1.key)", cache=False)
    times = sorted(json.loads(x)["at"] for x in got[1].splitlines())
    check(len(times) > 5000, "copied: %d events of E" % len(times))
    rng = random.Random(26)
    bound = '"%s" precede E1 and E1 precede "%s"' % (
        date_text(times[len(times) // 5], rng), date_text(times[len(times) // 2], rng))
    text = QUERY + ("retrieve (E1.key, E1.val) where E1.val > 10 and E1.key != 3\n"
                    "retrieve (E1.all) when %s\n" % bound)
    ref = v.query(trace, text, cache=False)
    check(ref[0] in (0, 1) and ref[1], "copied: no answer without the cache: %s" % ref[2])
    check(v.query(trace, text)[3] == "cold", "copied: not cold")
    time.sleep(1.5)  # a record is kept only for files a second older than their check
    first = v.run_query(trace, text)  # sums the columns (they are mapped, not copied)
    check(first[:3] == ref[:3] and first[3]["cache_copied_bytes"] == 0,
          "copied: the query that sums copied %d bytes" % first[3]["cache_copied_bytes"])
    runs = {}
    # VIGIL_CACHE_COPY=on: copied wherever it fits (without it, only where a mapped
    # page's first load is dear on this machine, measured); off: mapped
    for threads in ("1", "2"):
        for budget, copied, mode in (("", True, "on"), ("256K", False, "on"),
                                     ("", False, "off"), ("", None, "")):
            env = {"VIGIL_BUILD_MEMORY": budget} if budget else {}
            if mode:
                env["VIGIL_CACHE_COPY"] = mode
            got = v.run_query(trace, text, env=env, args=("--threads", threads))
            n = got[3].get("cache_copied_bytes", -1)
            runs[(threads, budget, mode)] = n
            check(got[3].get("cache") == "warm" and got[3]["cache_checked_bytes"] == 0,
                  "copied: %s threads, budget %s: not warm and checked" % (threads, budget))
            check(copied is None or (n > 0) == copied,
                  "copied: %s threads, budget %s, VIGIL_CACHE_COPY=%s: %d bytes copied" %
                  (threads, budget or "default", mode, n))
            check(got[:3] == ref[:3], "copied: %s threads, budget %s: another answer"
                  " (stderr %s)" % (threads, budget or "default", got[2]))
    print("copied columns: %d bytes copied (default budget), none past half of 256K; "
          "answers the trace's at 1 and 2 threads" % runs[("1", "", "on")])


def run(v, args, work):
    differential(v, args, work)
    trace = grown_and_damaged(v, work)
    read_only(v, work)
    damaged_cache(v, trace)
    not_regular(v, trace)
    partial(v, work)
    concurrent(v, work)
    checked_once(v, work)
    warm_slices(v, work)
    copied_columns(v, work)


if __name__ == "__main__":
    sys.exit(cache_testlib.main("query.cache", __doc__, run, Vigil))
