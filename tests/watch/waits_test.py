#!/usr/bin/env python3
"""vigil watch over WaitFor, live: the wait-for graph of a subject's lock operations fed
event by event into the update network (docs/watch.md, docs/tquel.md "Derived
relations").

* watch_locks (threads waiting for real mutexes, sensors of locks.vgl) run by `vigil
  watch --keep`: WaitFor alone, and WaitFor joined with the primitive Held (who held the
  lock while a thread waited for it). Answers must be printed while the subject still
  runs (it waits between its two phases until the test has read one), the network must
  answer incrementally, and the lines printed live must equal `vigil query`'s over the
  kept trace, as a multiset.
* The same network fed by --replay from a recording answers as vigil query does.
* The analyses that cannot run live (all but the networks, tests/watch/messages_test.py) are
  refused before anything runs, in one line naming the relation, and so is WaitFor from
  an attach (--pid).

usage: waits_test.py BIN-DIR WATCH_LOCKS LOCKS.VGL MAILBOX.VGL"""
import os
import shutil
import subprocess
import sys
import tempfile

from watch_common import json_lines, live_watch, refused, stats_of

BIN, SUBJECT, LOCKS_VGL, MAILBOX_VGL = sys.argv[1:5]
VIGIL = os.path.join(BIN, "vigil")

QUERIES = {
    "waits": """range of W is WaitFor
retrieve (waiter = W.waiter, holder = W.holder, lock = W.lock)""",
    "held while waited": """range of W is WaitFor
range of H is Held
retrieve (waiter = W.waiter, holder = W.holder, lock = H.lock)
  where W.lock = H.lock
  when W overlap H""",
}


def live_run(work, name, query):
    """Runs the subject under vigil watch; returns (live lines, vigil query's lines, stats)."""
    kept = os.path.join(work, name.replace(" ", "-"))
    go = kept + ".go"
    # The first answer must come while the subject waits between its phases.
    out, err, _ = live_watch(
        [VIGIL, "watch", "--sensors", LOCKS_VGL, "--format", "json", "--stats", "--every",
         "50ms", "--keep", kept, "-e", query, "--", SUBJECT, "4", "2", "400", go], go, name, 120)
    st = stats_of(err)
    if not st:
        raise SystemExit(f"FAIL: {name}: no --stats: {err}")
    if st["evaluation"] != "incremental":
        raise SystemExit(f"FAIL: {name}: evaluated by {st['evaluation']}: {err}")
    q = subprocess.run([VIGIL, "query", kept, "--format", "json", "-e", query],
                       capture_output=True, text=True, timeout=120)
    if q.returncode != 0:
        raise SystemExit(f"FAIL: {name}: vigil query over the kept trace: {q.stderr}")
    return json_lines(out), json_lines(q.stdout), st


def main():
    work = tempfile.mkdtemp(prefix="vigil-watch-waits-")
    ok = False
    try:
        for name, query in QUERIES.items():
            got, want, st = live_run(work, name, query)
            if not want or got != want:
                raise SystemExit(
                    f"FAIL: {name}: {len(got)} lines live, vigil query has {len(want)} over "
                    f"the kept trace ({len(set(got) - set(want))} not in it, "
                    f"{len(set(want) - set(got))} missing)\n  e.g. not in it: "
                    f"{sorted(set(got) - set(want))[:3]}\n  e.g. missing: "
                    f"{sorted(set(want) - set(got))[:3]}")
            print(f"ok  {name}: {len(got)} tuples live = vigil query over the kept trace "
                  f"({len(st['update_ns'])} updates, state peak {st['state']['peak']})")
        # --replay feeds the same network from a finished recording (the sensors from it).
        rec = os.path.join(work, "recorded")
        r = subprocess.run([VIGIL, "record", "-o", rec, "--", SUBJECT, "4", "2", "300", "/"],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise SystemExit(f"FAIL: vigil record: {r.stderr}")
        query = QUERIES["waits"]
        r = subprocess.run([VIGIL, "watch", "--replay", rec, "--format", "json", "--stats",
                            "-e", query], capture_output=True, text=True, timeout=120)
        q = subprocess.run([VIGIL, "query", rec, "--format", "json", "-e", query],
                           capture_output=True, text=True, timeout=120)
        got, want, st = json_lines(r.stdout), json_lines(q.stdout), stats_of(r.stderr)
        if r.returncode != 0 or not st or st["evaluation"] != "incremental" or not want or \
                got != want:
            raise SystemExit(f"FAIL: --replay: exit {r.returncode}, {len(got)} lines, vigil "
                             f"query has {len(want)}: {r.stderr[-500:]}")
        print(f"ok  --replay: {len(got)} tuples = vigil query over the recording")
        # The analyses that need the whole trace: refused before the subject runs (the
        # command would fail if it ran: `false`). The networks are followed live
        # (messages_test.py).
        for relation in ("Violation",
                         "Deadlock", "LogEvent", "Transition", "ModelEvent",
                         "ModelTransition"):
            lines = refused(VIGIL, ["--sensors", MAILBOX_VGL, "--", "false"],
                            f"range of X is {relation}\nretrieve (X.all)", relation,
                            "cannot be followed live")
            print(f"ok  {relation} refused: {lines[0]}")
        lines = refused(VIGIL, ["--pid", str(os.getpid())], "range of W is WaitFor\nretrieve (W.all)",
                        "WaitFor", "cannot be followed from an attach")
        print(f"ok  WaitFor from an attach refused: {lines[0]}")
        ok = True
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"waits_test: kept {work}")


main()
