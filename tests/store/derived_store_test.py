"""Derived relations in the PostgreSQL store (docs/store.md "Derived relations"): a
recording of the three-tier example (several processes: networks span them) and a
recording with a consistency violation and one with locks (WaitFor) are stored with `vigil store --derived`; then
queries naming Network, Message, NetRunning, NetWaiting, Violation, LogEvent, Transition,
ModelEvent and ModelTransition (alone, joined with each other on threads, on networks
and on strings, and joined with primitive relations) are answered over the trace and
over the store (vigil query postgresql://...) and the answers must be equal as sets,
and non-empty; the three-tier recording in both layouts (a directory per image, and the
shared layout whose writers' images are cut from common pool files). Storing again adds nothing; the analysis of one image stored first is
replaced by the whole trace's; --derived=NAMES stores those only; a bad name is one line.

usage: derived_store_test.py BIN_DIR PG_BIN [STORE_VIGIL]
STORE_VIGIL: the vigil that stores and queries (e.g. the sanitizers' build); BIN_DIR's
records."""
import json
import os
import sys
import tempfile

from store_testlib import check, compare as compare_at, finish, postgres, run

BIN, PG_BIN = sys.argv[1], sys.argv[2]
RECORD = os.path.join(BIN, "vigil")
VIGIL = sys.argv[3] if len(sys.argv) > 3 else RECORD

NET = """range of N is Network
range of M is Message
range of M2 is Message
range of R is NetRunning
range of W is NetWaiting
range of L is LogEvent
range of T is Transition
range of E is ModelEvent
range of X is ModelTransition
range of P is OSProcess
"""

NET_CASES = {
    "network": "retrieve (N.all)",
    "message": "retrieve (M.all)",
    "running": "retrieve (R.all)",
    "waiting": "retrieve (W.all)",
    "logevent": "retrieve (L.all)",
    "transition": "retrieve (T.all)",
    "modelevent": "retrieve (E.all)",
    "modeltransition": "retrieve (X.all)",
    # two analyses joined on the network, on threads (the NAME_load columns) and in time
    "net_x_message": "retrieve (M.network, M.bytes, N.response, N.program) "
                     "where M.network = N.id",
    "message_waiting": "retrieve (M.bytes, W.program, w = W.thread) "
                       "where M.receiver = W.thread and M.network = W.network when M overlap W",
    "message_same_receiver": "retrieve (a = M.bytes, b = M2.bytes, M2.network) "
                             "where M.receiver = M2.receiver and M.recv_off != M2.recv_off",
    "transition_message": "retrieve (T.from_event, T.to_event, M.bytes) "
                          "where T.thread = M.sender when T overlap M",
    "log_model": "retrieve (L.name, E.count) where L.site = E.site",
    # a primitive relation joined with derived ones
    "process_message": "retrieve (P.name, M.bytes) where P.name = M.send_program "
                       "when P overlap M",
    "aggregate": "retrieve (N.program, n = count(M.bytes by M.network where M.network = N.id))",
    "entity_string": "retrieve (M.sender, M.receiver) where M.sender != M.receiver",
}

# a primitive relation (WaitFor, built per image in the store) joined with a derived one
# on threads: the derived side's thread_load against the primitive side's vg_load
LOCK_CASES = {
    "waitfor_logevent": "range of F is WaitFor range of L is LogEvent retrieve (L.name, F.lock)"
                        " where F.waiter = L.thread when L equal begin of F",
    "violation_big": "range of V is Violation retrieve (V.all)",
}

VIOLATION_CASES = {
    "violation": "range of V is Violation retrieve (V.all)",
    "violation_logevent": "range of V is Violation range of L is LogEvent "
                          "retrieve (V.rule, L.name) where V.thread = L.thread when V equal L",
}


def compare(name, trace, url, text, schema=None):
    compare_at(name, VIGIL, trace, url, text, ["--schema", schema] if schema else [])


def images(trace):
    """The trace's process images as `vigil dump --stats --json` lists them."""
    r = run([VIGIL, "dump", "--stats", "--json", trace])
    return [x for x in map(json.loads, r.stdout.splitlines()) if "image" in x]


def store(trace, url, *extra):
    r = run([VIGIL, "store", trace, "--to", url, "--json", "-q"] + list(extra))
    check(r.returncode == 0, "vigil store %s: %s" % (" ".join(extra), r.stderr))
    return json.loads(r.stdout or "{}")


def main():
    tmp = tempfile.mkdtemp(prefix="vigil-dstore-")
    os.chmod(tmp, 0o755)
    trace = os.path.join(tmp, "tt")
    # a directory per image: one image stored first by its directory (the shared layout:
    # step 5)
    r = run([RECORD, "record", "-q", "--per-image", "-o", trace, "--", os.path.join(BIN, "three_tier"), "run",
             "--threads", "2", "--requests", "3"])
    if r.returncode:
        sys.exit("vigil record failed: " + r.stderr)
    bad = os.path.join(tmp, "rule2")
    r = run([os.path.join(BIN, "check_mktrace"), bad, "rule2"])
    if r.returncode:
        sys.exit("check_mktrace failed: " + r.stderr)
    locks = os.path.join(tmp, "locks")
    r = run([os.path.join(BIN, "check_mktrace"), locks, "big", "30000", "1"])
    if r.returncode:
        sys.exit("check_mktrace failed: " + r.stderr)
    with postgres(PG_BIN, BIN) as (pg, url):
        psql = lambda sql: pg.psql(sql).stdout.strip()  # noqa: E731

        # 1. one image first: its own analysis, replaced by the whole trace's below
        image = sorted(d for d in os.listdir(trace) if d.startswith("three_tier-"))[-1]
        st = store(os.path.join(trace, image), url, "--derived")
        check(st.get("derived", 0) > 0, "one image's derived relations: %s" % st)
        st = store(trace, url, "--derived")
        check(st.get("derived", 0) >= 8 and st.get("derived_rows", 0) > 0 and
              st.get("loaded") == len([d for d in os.listdir(trace)
                                       if d.startswith("three_tier-")]) - 1,
              "the whole trace: %s" % st)
        check(psql("SELECT count(*) FROM vigil.loads WHERE image_key LIKE 'derived/%'") == "1",
              "the one image's analysis was not replaced: %s" %
              psql("SELECT image_key FROM vigil.loads"))

        # 2. every derived relation and the joins: the trace's answer
        for name, stmts in NET_CASES.items():
            compare(name, trace, url, NET + stmts)
        print("three_tier: %d compared" % len(NET_CASES), file=sys.stderr)

        # 3. again: nothing added
        before = psql('SELECT count(*) FROM vigil."Message"')
        st = store(trace, url, "--derived")
        check(st.get("derived_skipped") == 1 and st.get("rows") == 0, "again: %s" % st)
        check(psql('SELECT count(*) FROM vigil."Message"') == before, "again: rows added")

        # 4. a trace with a violation, only the relations named
        # (check_mktrace's traces have the same images: a schema each)
        st = store(bad, url, "--derived=Violation,LogEvent", "--schema", "rule2")
        check(st.get("derived") == 2, "--derived=Violation,LogEvent: %s" % st)
        check(psql("SELECT string_agg(relation, ',' ORDER BY relation) FROM "
                   "rule2.vg_relations WHERE relation IN ('Violation', 'LogEvent', "
                   "'Transition')") == "LogEvent,Violation", "--derived=: other relations")
        for name, text in VIOLATION_CASES.items():
            compare(name, bad, url, text, "rule2")
        # all of them later: another analysis of the same images, replacing the first
        st = store(bad, url, "--derived", "--schema", "rule2")
        check(st.get("derived", 0) >= 4 and psql(
            "SELECT count(*) FROM rule2.loads WHERE image_key LIKE 'derived/%'") == "1",
            "--derived after --derived=Violation,LogEvent: %s" % st)
        for name, text in VIOLATION_CASES.items():
            compare(name + " (all stored)", bad, url, text, "rule2")
        check(psql("SELECT count(*) FROM vigil.derived_images") ==
              str(len([d for d in os.listdir(trace) if d.startswith("three_tier-")])),
              "derived_images: %s" % psql("SELECT * FROM vigil.derived_images"))

        st = store(locks, url, "--derived=LogEvent,Violation", "--schema", "locks")
        for name, text in LOCK_CASES.items():
            compare(name, locks, url, text, "locks")

        # 5. the shared layout (vigil record's default): one folder for every process;
        # one writer's image stored first by its path, then the whole trace (each image
        # from one cut of the folder's pool files)
        shared = os.path.join(tmp, "tts")
        r = run([RECORD, "record", "-q", "-o", shared, "--", os.path.join(BIN, "three_tier"),
                 "run", "--threads", "2", "--requests", "3"])
        check(r.returncode == 0 and os.listdir(shared) == ["shared"],
              "shared layout: %s %s" % (r.stderr, os.listdir(shared)))
        imgs = [x["image"] for x in images(shared)]
        one = sorted(i for i in imgs if os.path.basename(i).startswith("three_tier-"))[-1]
        st = store(one, url, "--derived", "--schema", "shared")
        check(st.get("loaded") == 1 and st.get("derived", 0) > 0, "one writer: %s" % st)
        st = store(shared, url, "--derived", "--schema", "shared")
        check(st.get("derived", 0) >= 8 and st.get("loaded") == len(imgs) - 1 and
              st.get("skipped") == 1, "the whole shared trace (%d images): %s" % (len(imgs), st))
        check(psql("SELECT count(*) FROM shared.loads WHERE image_key LIKE 'derived/%'") == "1",
              "shared: the one image's analysis was not replaced")
        for name, stmts in NET_CASES.items():
            compare(name + " (shared layout)", shared, url, NET + stmts, "shared")

        # 6. bad input: one line, exit 2, nothing stored
        r = run([VIGIL, "store", bad, "--to", url, "--derived=Network,Nope"])
        check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and
              "no derived relation 'Nope'" in r.stderr, "bad name: %d %r" %
              (r.returncode, r.stderr))
    return finish(tmp, "derived_store")


if __name__ == "__main__":
    sys.exit(main())
