#!/usr/bin/env python3
"""The two queries of Snodgrass (TOCS 1988) on a recording of the mailbox example: their
answers computed from the run's ground truth (mailbox --truth), compared with vigil's.

Query 1, "which processes were resumed by P1":
    range of S is SendMessage
    range of W is Waiting
    retrieve ResumedbyP1 (Process = W.Process)
    valid at end of W
    where S.Mailbox = W.Mailbox and S.Process = "P1"
    when S precede end of W
Query 2, "RunningOn sampled every 10 ticks":
    range of RO is RunningOn
    range of C is Clock[10]
    retrieve RunningOnEvery10 (Process = RO.Process, Processor = RO.Processor)
    when C overlap RO

The truth has logical steps, the trace times. Each truth Waiting and RunningOn interval is
matched to its recorded tuple (per process the truth's intervals and the trace's come in
the same order; relations_truth.py checks the rest of that correspondence), which gives
its times. The clock is computed from `vigil dump --json` (docs/tquel.md, *Clocks*: ticks
at first + k*n*tick up to the last event, first/last = the trace's first and last event),
not from the relations layer, and checked against the Clock that `vigil relations` lists.

usage: paper_truth.py tick EVENTS.jsonl
           prints a base tick in ns that gives Clock[10] about 300 ticks over the trace
       paper_truth.py TRUTH.json TUPLES.jsonl EVENTS.jsonl LISTING.jsonl TICK_NS
                      [--print] [Q1.jsonl Q2.jsonl]
  TUPLES: relations_dump; EVENTS: vigil dump --json; LISTING: vigil relations --json
  --tick TICK_NS; Q1, Q2: vigil query --format json of each query. Without Q1 and Q2 it
  checks and summarizes the expected answers only; --print prints them as vigil would."""
import collections
import json
import sys

EVERY = 10  # Clock[10]
TICKS = 300  # about this many Clock[10] ticks per run

failures = []


def fail(msg):
    failures.append(msg)


def load_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def span(events_path):
    """(first, last): the times of the trace's first and last event."""
    ts = [e["ts"] for e in load_lines(events_path)]
    return min(ts), max(ts)


def timed_intervals(truth, tuples, name, other):
    """The truth's `name` intervals, each with `from_ns` and `to_ns` (None: open) from its
    recorded tuple."""
    got = collections.defaultdict(list)
    for t in tuples:
        if t["relation"] == name:
            got[t["values"]["process"]].append(t)
    want = collections.defaultdict(list)
    for f in truth[name]:
        want[f["process"]].append(f)
    out = []
    for p in sorted(set(got) | set(want)):
        g = sorted(got.get(p, []), key=lambda t: t["from"])
        w = want.get(p, [])
        if [t["values"][other] for t in g] != [f[other] for f in w]:
            fail(f"{name} {p}: the trace's intervals do not match the truth's; "
                 f"see relations_truth.py")
            continue
        for t, f in zip(g, w):
            out.append(dict(f, from_ns=t["from"], to_ns=None if t["open"] else t["to"]))
    return out


def timed_sends(truth, tuples):
    """The truth's sends with `at_ns`, matched per process in order."""
    got = collections.defaultdict(list)
    for t in tuples:
        if t["relation"] == "SendMessage":
            got[t["values"]["process"]].append(t)
    out = []
    for p, g in got.items():
        g.sort(key=lambda t: t["from"])
        w = [s for s in truth["SendMessage"] if s["process"] == p]
        if [t["values"]["msg"] for t in g] != [s["msg"] for s in w]:
            fail(f"SendMessage {p}: the trace's messages do not match the truth's")
            continue
        out += [dict(s, at_ns=t["from"]) for t, s in zip(g, w)]
    if len(out) != len(truth["SendMessage"]):
        fail(f"SendMessage: {len(out)} sends matched to the trace, truth "
             f"{len(truth['SendMessage'])}")
    return out


def resumed_by_p1(truth, waiting, sends):
    """Query 1 from the truth: (W.process, time of W's end) for every ended wait W such
    that P1 sent to W's mailbox at a step <= the step W ended.

    `S precede end of W` is S.at <= W.to. The trace's times follow the steps strictly
    (each processor records during its own turn, one step per turn), so a send at an
    earlier step precedes W's end and one at a later step does not. At the same step,
    the send is the operation of that step and W ends because of it: the kernel records
    SendMessage before the Waiting.end of the waiter it hands the message to
    (kernel.c: send), so S.at <= W.to holds there too."""
    p1 = collections.defaultdict(list)  # mailbox -> steps of P1's sends to it
    for s in truth["SendMessage"]:
        if s["process"] == "P1":
            p1[s["mailbox"]].append(s["step"])
    out = set()
    for w in waiting:
        if "to" not in w or w["to_ns"] is None:
            continue  # never resumed: the example ends every wait, see relations_truth.py
        if any(step <= w["to"] for step in p1.get(w["mailbox"], [])):
            out.add((w["to_ns"], w["process"]))

    # The same answer from the trace's times, as a check of the argument above.
    p1_at = [(s["mailbox"], s["at_ns"]) for s in sends if s["process"] == "P1"]
    by_time = set()
    for w in waiting:
        if w["to_ns"] is not None and any(m == w["mailbox"] and at <= w["to_ns"]
                                          for m, at in p1_at):
            by_time.add((w["to_ns"], w["process"]))
    if by_time != out:
        fail(f"query 1: the answer from the steps ({len(out)} tuples) differs from the one "
             f"from the recorded times ({len(by_time)}): the trace's time order does not "
             f"follow the steps")
    return out


def running_every_10(running, first, last, tick):
    """Query 2 from the truth: at every Clock[10] tick t, (process, processor) of each
    RunningOn interval [from, to) with from <= t < to."""
    period = EVERY * tick
    n = (last - first) // period + 1  # ticks first + k*period <= last
    out = set()
    for r in running:
        to = last if r["to_ns"] is None else r["to_ns"]  # open: ends at the last event
        k0 = max(0, -(-(r["from_ns"] - first) // period))  # first k with tick >= from
        k1 = min(n, -(-(to - first) // period))  # first k with tick >= to
        for k in range(k0, k1):
            out.add((first + k * period, r["process"], r["processor"]))
    return out, n


def compare(what, path, relation, key, want):
    """Compares vigil's json output at PATH with the expected set of keys."""
    try:
        rows = load_lines(path)
    except (OSError, ValueError) as e:
        fail(f"{what}: cannot read vigil's answer {path}: {e}")
        return
    before = len(failures)
    got = []
    for r in rows:
        if r.get("relation") != relation or r.get("kind") != "event" or "at" not in r:
            fail(f"{what}: not an event tuple of {relation}: {r}")
            return
        try:
            got.append(key(r))
        except (KeyError, TypeError):
            fail(f"{what}: a tuple without the expected values: {r}")
            return
    if len(set(got)) != len(got):
        fail(f"{what}: {len(got) - len(set(got))} duplicate tuple(s) (results are sets)")
    if [g[0] for g in got] != sorted(g[0] for g in got):
        fail(f"{what}: tuples not ordered by valid time")
    missing, extra = sorted(want - set(got)), sorted(set(got) - want)
    if missing or extra:
        fail(f"{what}: vigil gives {len(set(got))} tuples, the truth {len(want)}; "
             f"missing {len(missing)} {missing[:5]}, extra {len(extra)} {extra[:5]}")
    if len(failures) == before:
        print(f"  {what}: vigil's {len(got)} tuples are the truth's")


def main(argv):
    if len(argv) == 3 and argv[1] == "tick":
        first, last = span(argv[2])
        print(max(1, (last - first) // (EVERY * TICKS)))
        return 0
    show = "--print" in argv
    args = [a for a in argv[1:] if a != "--print"]
    if len(args) not in (5, 7):
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    truth = json.load(open(args[0]))
    tuples = load_lines(args[1])
    first, last = span(args[2])
    listing = {r["name"]: r for r in load_lines(args[3])}
    tick = int(args[4])

    # the clock the relations layer makes must be the one of docs/tquel.md
    clock = listing.get("Clock") or {}
    if (clock.get("from"), clock.get("tuples")) != (first, (last - first) // tick + 1):
        fail(f"Clock with tick {tick} ns is {clock}; expected {(last - first) // tick + 1} "
             f"ticks from the first event at {first}")

    waiting = timed_intervals(truth, tuples, "Waiting", "mailbox")
    running = timed_intervals(truth, tuples, "RunningOn", "processor")
    sends = timed_sends(truth, tuples)
    q1 = resumed_by_p1(truth, waiting, sends)
    q2, nticks = running_every_10(running, first, last, tick)

    p1 = [s for s in truth["SendMessage"] if s["process"] == "P1"]
    print(f"  trace: {last - first} ns, base tick {tick} ns, {nticks} Clock[10] ticks")
    if p1:
        print(f"  query 1: P1 sends {len(p1)} message(s) to "
              f"{', '.join(sorted({s['mailbox'] for s in p1}))}; expected {len(q1)} tuple(s), "
              f"processes {', '.join(sorted({p for _, p in q1})) or 'none'}")
    else:
        print("  query 1: P1 never sends in this run: the expected answer is empty")
    print(f"  query 2: expected {len(q2)} tuple(s) at {len({t for t, _, _ in q2})} tick(s)")
    if p1 and not q1:
        fail("query 1: P1 sends but resumes no one in this run: choose options where the "
             "answer is not empty")
    if not q2:
        fail("query 2: the expected answer is empty")

    if show:
        for at, p in sorted(q1):
            print(json.dumps({"relation": "ResumedbyP1", "kind": "event", "at": at,
                              "values": {"Process": p}}))
        for at, p, c in sorted(q2):
            print(json.dumps({"relation": "RunningOnEvery10", "kind": "event", "at": at,
                              "values": {"Process": p, "Processor": c}}))
    if len(args) == 7:
        compare("query 1", args[5], "ResumedbyP1", lambda r: (r["at"], r["values"]["Process"]), q1)
        compare("query 2", args[6], "RunningOnEvery10",
                lambda r: (r["at"], r["values"]["Process"], r["values"]["Processor"]), q2)

    for f in failures[:20]:
        print("FAIL:", f)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
