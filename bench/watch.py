#!/usr/bin/env python3
"""bench/watch.py BUILD_DIR: what a live query costs the subject, plan by plan.

For the mailbox example (examples/mailbox, --seed 1, 50 processes on 4 processors, 10
mailboxes) at several run lengths, and for the two queries of Snodgrass (TOCS 1988):
  * ResumedbyP1: which processes were resumed by a message of P1;
  * RunningOnEvery10: which process ran on which processor, every 10 ticks of Clock;
it counts the data packets the subject produced when recording everything (`vigil
record`), under `vigil watch --unoptimized` (the α operators as translated: every sensor
the query names, on every entity) and under `vigil watch` (the optimized plan), with the
answer of each. The mailbox run is logically deterministic, so the explicit values of
ResumedbyP1 must be the same in all three runs; RunningOnEvery10 depends on real time, so
its plans are compared by replaying both against the full recording (`--replay`), which
must give the full recording's answer. Prints a markdown table on stdout, writes
BENCH_OUT/watch.json; progress on stderr. Settings: BENCH_WATCH_MESSAGES (comma list,
default 2000,20000,200000), BENCH_WATCH_CONTROL (commands sent by control-latency, 10000).
VIGIL_BENCH_SMOKE=1: 2000 messages, 200 commands (bench/README.md, "Smoke run").
Exit status 1 when an answer differs or control-latency fails."""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

from watch_common import BUILD, MAILBOX, OUT, SMOKE, VGL, VIGIL, run, say, stats_of

MESSAGES = [int(x) for x in os.environ.get(
    "BENCH_WATCH_MESSAGES", "2000" if SMOKE else "2000,20000,200000").split(",")]
CONTROL = os.environ.get("BENCH_WATCH_CONTROL", "200" if SMOKE else "10000")

RESUMED = """range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P1"
when S precede end of W"""
RUNNING = """range of RO is RunningOn
range of C is Clock[10]
retrieve RunningOnEvery10 (Process = RO.Process, Processor = RO.Processor)
when C overlap RO"""


def values(stdout):
    c = collections.Counter()
    for line in stdout.splitlines():
        if line.startswith("{"):
            try:
                t = json.loads(line)
            except ValueError as e:
                raise SystemExit(f"bench/watch: not a JSON line ({e}): {line[:300]!r}")
            c[tuple(sorted(t["values"].items()))] += 1
    return c


def parse_latency(text):
    """control-latency's medians and p99s, in us: {"send_applied": {...}, "round_trip": ...}."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        key = {"send": "send_applied", "round": "round_trip"}.get(parts[0] if parts else "")
        if key and "median" in parts and "p99" in parts:
            out[key] = {"median_us": float(parts[parts.index("median") + 1]),
                        "p99_us": float(parts[parts.index("p99") + 1])}
    return out


def mailbox(n):
    return [MAILBOX, "--seed", "1", "--processes", "50", "--processors", "4", "--mailboxes",
            "10", "--messages", str(n)]


def main():
    os.makedirs(OUT, exist_ok=True)
    work = tempfile.mkdtemp(prefix="vigil-bench-watch-")
    rows = []
    try:
        for n in MESSAGES:
            trace = os.path.join(work, f"full{n}")
            say(f"bench/watch: {n} messages: recording everything ...")
            run([VIGIL, "record", "-q", "-o", trace, "--", *mailbox(n)])
            for name, q, tick in (("ResumedbyP1", RESUMED, None),
                                  ("RunningOnEvery10", RUNNING, "1ms")):
                extra = ["--tick", tick] if tick else []
                full = run([VIGIL, "query", trace, "--format", "json", "-e", q, *extra])
                rep = stats_of(run([VIGIL, "watch", "--replay", trace, "--sensors", VGL,
                                    "--format", "json", "--stats", "-e", q, *extra]).stderr)
                total = rep["packets"]["asked"] + rep["packets"]["extraneous"] + rep["packets"]["sources"]
                row = {"messages": n, "query": name, "full_packets": total,
                       "full_tuples": sum(values(full.stdout).values())}
                p1 = run([VIGIL, "query", trace, "--format", "json", "-e",
                          'range of S is SendMessage retrieve (S.mailbox) valid at S '
                          'where S.process = "P1"'])
                row["p1_sends"] = len(p1.stdout.splitlines())
                for plan in ("unoptimized", "optimized"):
                    say(f"bench/watch: {n} messages: {name}, live, {plan} plan ...")
                    flags = ["--unoptimized"] if plan == "unoptimized" else []
                    live = run([VIGIL, "watch", "--sensors", VGL, "--format", "json",
                                "--stats", "-q", *flags, "-e", q, *extra, "--", *mailbox(n)])
                    st = stats_of(live.stderr)
                    produced = st["packets"]["asked"] + st["packets"]["extraneous"] + st["packets"]["sources"]
                    row[f"{plan}_packets"] = produced
                    row[f"{plan}_asked"] = st["packets"]["asked"]
                    row[f"{plan}_tuples"] = sum(values(live.stdout).values())
                    if name == "ResumedbyP1":
                        row[f"{plan}_same_answer"] = values(live.stdout) == values(full.stdout)
                    else:  # real time: compare the plan replayed on the full recording
                        r = run([VIGIL, "watch", "--replay", trace, "--sensors", VGL, "--format",
                                 "json", *flags, "-e", q, *extra])
                        row[f"{plan}_same_answer"] = sorted(r.stdout.splitlines()) == sorted(
                            full.stdout.splitlines())
                rows.append(row)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n### vigil watch: packets the subject produced, per plan (mailbox, seed 1, 50 processes)\n")
    print("| messages | query | P1's sends | record everything | unoptimized plan | optimized plan | "
          "reduction | answer (tuples) | same answer |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        same = "yes" if r["unoptimized_same_answer"] and r["optimized_same_answer"] else "NO"
        red = r["full_packets"] / max(1, r["optimized_packets"])
        print(f"| {r['messages']} | {r['query']} | {r['p1_sends']} | {r['full_packets']} | "
              f"{r['unoptimized_packets']} | {r['optimized_packets']} | {red:.0f}x | "
              f"{r['optimized_tuples']} | {same} |")
    print("\nPackets include the entity sources (vg.* events: entities, processes, threads), "
          "which are always on. RunningOnEvery10 depends on real time: its 'same answer' "
          "compares each plan replayed on the full recording with the full recording's answer.")
    lat = subprocess.run([os.path.join(BUILD, "bench", "control-latency"), CONTROL],
                         capture_output=True, text=True, timeout=600)
    control = parse_latency(lat.stdout)
    with open(os.path.join(OUT, "watch.json"), "w") as f:
        json.dump({"rows": rows, "control": control, "control_exit": lat.returncode}, f,
                  indent=1)
    print("\n### Enabling latency\n")
    print("The plan's name rules and triggers are applied by the subject itself: a trigger "
          "raises the entity's flag right after the packet that calls for it is committed, "
          "on the same thread (one atomic add), so the next packet already sees it. A "
          "command from the monitor (bench/control_latency.c, sensor +1/-1 through the "
          "control channel; both ends read the same clock):\n")
    print("```")
    print(lat.stdout.strip() or lat.stderr.strip())
    print("```")
    if lat.returncode != 0:
        say(f"bench/watch: control-latency exited {lat.returncode}")
        sys.exit(1)
    if not all(r["unoptimized_same_answer"] and r["optimized_same_answer"] for r in rows):
        say("bench/watch: WRONG ANSWER: a plan's answer differs from the full recording's")
        sys.exit(1)


main()
