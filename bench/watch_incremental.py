#!/usr/bin/env python3
"""bench/watch_incremental.py BUILD_DIR: what one update of a live query costs at the start
and at the end of a long run, answered by the update network (src/live/delta*.c) and by
the re-evaluation it replaces (VIGIL_WATCH_REEVALUATE=1), over the same recording.

One recording of the mailbox example (--seed 5, 8 processes on 3 processors, 3 mailboxes,
BENCH_INCR_MESSAGES messages, default 200000; everything recorded) is replayed by
`vigil watch --replay --update-events N` (N = BENCH_INCR_UPDATE events, default 20000): each
update takes the next N events of the merged reading, as a live monitor takes what was
recorded since its last read. For each query shape below, both ways report the CPU time
of every update (--stats); the table gives the median of the first three updates and of
the last three before the final one (which also closes what is still open), and the
network's kept state. Both answers must equal `vigil query`'s over the recording (exit 1
otherwise). Writes BENCH_OUT/watch_incremental.json; progress on stderr.
VIGIL_BENCH_SMOKE=1: 3000 messages in updates of 1000 events."""
import os

from watch_common import (MAILBOX, OVERLAP, SELECTION, SMOKE, VGL, VIGIL, WAYS,
                          bench_in_folder, ends, run, say, stats_of, table)

MESSAGES = int(os.environ.get("BENCH_INCR_MESSAGES", "3000" if SMOKE else "200000"))
UPDATE = int(os.environ.get("BENCH_INCR_UPDATE", "1000" if SMOKE else "20000"))

SHAPES = [
    SELECTION,
    OVERLAP,
    ("join, when precede (ResumedbyP1)", """range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P1"
when S precede end of W"""),
]

def cells(r):
    """A row's cells in the table."""
    i, e = r["incremental"], r["re-evaluation"]
    return [r["shape"], f"{r['answer_tuples']}"
            f"{'' if i['same_answer'] and e['same_answer'] else ' DIFFER'}",
            f"{i['start_ms']:.2f} / {i['end_ms']:.2f}",
            f"{e['start_ms']:.2f} / {e['end_ms']:.2f}",
            f"{e['end_ms'] / max(i['end_ms'], 1e-3):.1f}x",
            f"{r['state']['peak']}{' (unbounded)' if r['state']['unbounded'] else ''}"]


def measure(work):
    ok = True
    rows = []
    trace = os.path.join(work, "run")
    say(f"watch-incremental: recording {MESSAGES} messages")
    run([VIGIL, "record", "-q", "-o", trace, "--", MAILBOX, "--seed", "5", "--processes",
         "8", "--processors", "3", "--messages", str(MESSAGES)], timeout=3600)
    for name, q in SHAPES:
        say(f"watch-incremental: {name}")
        full = sorted(run([VIGIL, "query", trace, "--format", "json", "-e", q])
                      .stdout.splitlines())
        row = {"shape": name, "answer_tuples": len(full)}
        base = [VIGIL, "watch", "--replay", trace, "--sensors", VGL, "--format", "json",
                "--stats", "--update-events", str(UPDATE), "-e", q]
        for how, env in WAYS:
            p = run(base, env, timeout=3600)
            st = stats_of(p.stderr)
            same = sorted(p.stdout.splitlines()) == full
            ok &= same and st["evaluation"] == how
            start, end = ends(st["update_cpu_ns"])
            row[how] = {"updates": len(st["update_cpu_ns"]), "start_ms": start,
                        "end_ms": end, "same_answer": same,
                        "total_cpu_ms": sum(st["update_cpu_ns"]) / 1e6}
            if how == "incremental":
                row["state"] = st["state"]
        rows.append(row)
    table(f"vigil watch per update: incremental vs re-evaluation ({MESSAGES} messages, "
          f"updates of {UPDATE} events, CPU ms)",
          ["shape", "answers", "incremental start / end", "re-evaluation start / end",
           "end ratio", "state kept (peak)"], [cells(r) for r in rows])
    res = {"messages": MESSAGES, "update_events": UPDATE, "rows": rows}
    return ok, res, "watch_incremental.json"


bench_in_folder("vigil-bench-incr-", measure,
                "watch-incremental: an answer differs from vigil query's")
