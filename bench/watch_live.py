#!/usr/bin/env python3
"""bench/watch_live.py BUILD_DIR: `vigil watch -- CMD` live over a long run, answered by
the update network fed from the trace as it is written (trace/follow.h) and by the
re-evaluation of snapshots it replaces (VIGIL_WATCH_REEVALUATE=1): what one update costs
at the start and at the end of the run.

The subject is the mailbox example (--seed 5, 8 processes on 3 processors, 3 mailboxes,
BENCH_LIVE_MESSAGES messages, default 200000) under the query's plan, read every 200 ms
(--every). Each way reports the CPU time of every update and the events it took
(--stats: an update of the network is one read of what was written and the answers that
became final; one of re-evaluation is one snapshot answered whole, over every event read
so far); the table gives, over the updates that took events (at least a quarter of the
median; the final one left out),
the median of the first three and of the last three, the network's CPU per event taken
over its first and last five, the ratio of the two ways' ends, and the CPU of the whole
watch. The network's answer must equal `vigil
query`'s over the trace the run kept (--keep; exit 1 otherwise); re-evaluation's is
compared too and a difference is shown (its snapshots take every event visible at once,
so an event committed late by a preempted writer can make it print a tuple too early).
Writes BENCH_OUT/watch_live.json; progress on stderr. VIGIL_BENCH_SMOKE=1: 3000 messages.
BENCH_LIVE_ONLY=PREFIX: only the shapes whose name starts with it."""
import os
import shutil
import statistics

from watch_common import (BUILD, MAILBOX, OVERLAP, SELECTION, SMOKE, VGL, VIGIL, WAYS,
                          bench_in_folder, ends, run, say, stats_of, table)

MESSAGES = int(os.environ.get("BENCH_LIVE_MESSAGES", "3000" if SMOKE else "200000"))

MAILBOX_RUN = ["--sensors", VGL, "--", MAILBOX, "--seed", "5", "--processes", "8",
               "--processors", "3", "--messages", str(MESSAGES)]
# WaitFor (the wait-for graph followed live): tests/watch/locks.c, 4 threads taking 2
# mutexes for 2 x LOCK_ROUNDS rounds (its pause between phases skipped: GO exists).
LOCK_ROUNDS = 300 if SMOKE else 10000
LOCKS = os.path.join(BUILD, "bin", "watch_locks")
LOCKS_VGL = os.path.join(os.path.dirname(VGL), "..", "..", "tests", "watch", "locks.vgl")
# Message: the three-tier example (examples/three_tier), TIER_REQUESTS requests on 3 threads.
MESSAGE_SHAPE = "Message (live net split)"
TIER_REQUESTS = 100 if SMOKE else 3000
THREE_TIER = os.path.join(BUILD, "bin", "three_tier")
SHAPES = [
    (*SELECTION, MAILBOX_RUN),
    (*OVERLAP, MAILBOX_RUN),
    ("WaitFor (live wait-for graph)", """range of W is WaitFor
retrieve (W.waiter, W.holder, W.lock)""",
     ["--sensors", LOCKS_VGL, "--", LOCKS, "4", "2", str(LOCK_ROUNDS), "/"]),
    # Message (net split's analysis run again over the trace so far at each update);
    # re-evaluation answers each snapshot with the stored analysis over it.
    (MESSAGE_SHAPE, """range of M is Message
retrieve (M.network, M.sender, M.receiver, M.bytes)""",
     ["--sensors", "{empty_vgl}", "--", "sh", "-c",
      f"{THREE_TIER} run --threads 3 --requests {TIER_REQUESTS} >/dev/null"]),
]

def cells(r):
    """A row's cells in the table."""
    i, e = r["incremental"], r["re-evaluation"]
    return [r["shape"], f"{r['answer_tuples']}"
            f"{'' if i['same_answer'] else ' NETWORK DIFFERS'}"
            f"{'' if e['same_answer'] else ' (re-evaluation differs)'}",
            f"{r['events']}", f"{i['start_ms']:.2f} / {i['end_ms']:.2f} ({i['updates']})",
            f"{i['start_us_per_event']:.2f} / {i['end_us_per_event']:.2f}",
            f"{e['start_ms']:.2f} / {e['end_ms']:.2f} ({e['updates']})",
            f"{e['end_ms'] / max(i['end_ms'], 1e-3):.1f}x",
            f"{i['total_cpu_ms']:.0f} / {e['total_cpu_ms']:.0f} ms"]


def measure(work):
    ok = True
    rows = []
    only = os.environ.get("BENCH_LIVE_ONLY", "")  # a shape's name starts with it
    empty_vgl = os.path.join(work, "empty.vgl")
    with open(empty_vgl, "w") as f:
        f.write("package empty;\n")
    for name, q, subject in [x for x in SHAPES if x[0].startswith(only)]:
        row = {"shape": name}
        subject = [a.replace("{empty_vgl}", empty_vgl) for a in subject]
        for how, env in WAYS:
            say(f"watch-live: {name}, {how}, {MESSAGES} messages")
            kept = os.path.join(work, "kept")
            p = run([VIGIL, "watch", "--format", "json", "--stats", "--keep", kept,
                     "-e", q, *subject], env, timeout=3600)
            st = stats_of(p.stderr)
            got = sorted(l for l in p.stdout.splitlines() if l.startswith("{"))
            want = sorted(run([VIGIL, "query", kept, "--format", "json", "-e", q])
                          .stdout.splitlines())
            shutil.rmtree(kept, ignore_errors=True)
            same = got == want and bool(want)
            ok &= st["evaluation"] == how and (same or how != "incremental")
            took = list(zip(st["update_cpu_ns"][:-1], st["update_taken"][:-1]))
            # updates that took a real share of events (a subject winding down leaves
            # reads that take a handful: fixed costs, not the cost of the run so far)
            typical = statistics.median([n for _, n in took if n] or [0])
            busy = [(c, n) for c, n in took if n and n * 4 >= typical]
            start, end = ends([c for c, _ in busy] + [0])
            per = [sum(c for c, _ in part) / max(1, sum(n for _, n in part)) / 1e3
                   for part in (busy[:5], busy[-5:])]
            row["answer_tuples"] = len(want)
            row[how] = {"updates": len(busy), "start_ms": start, "end_ms": end,
                        "start_us_per_event": per[0], "end_us_per_event": per[1],
                        "same_answer": same,
                        "total_cpu_ms": sum(st["update_cpu_ns"]) / 1e6}
            if how == "incremental":
                row["events"] = st["state"]["events"]
                row["follow"] = st["follow"]
        rows.append(row)
    table(f"vigil watch live, per update: update network over the growing trace vs "
          f"re-evaluated snapshots ({MESSAGES} messages, every 200 ms, CPU ms)",
          ["shape", "answers", "events", "network ms per update, start / end (updates)",
           "network µs per event, start / end",
           "re-evaluation ms per snapshot, start / end (snapshots)", "end ratio",
           "whole watch CPU (network / re-evaluation)"], [cells(r) for r in rows])
    return ok, {"messages": MESSAGES, "rows": rows}, "watch_live.json"


bench_in_folder("vigil-bench-live-", measure,
                "watch-live: an answer differs from vigil query's over the kept trace")
