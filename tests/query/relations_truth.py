#!/usr/bin/env python3
"""Checks the relations built from a recording of the mailbox example (the tuples printed
by relations_dump) against the run's ground truth (mailbox --truth):

* entity relations Processor, Mailbox, Process: one closed tuple per entity, with its name
  (the recorded OS process itself is in OSProcess, named after its program, not in the
  example's own Process);
* ProcessState: per process, the same sequence of states, each tuple ending where the next
  begins, the last one open;
* SendMessage: per sending process, the same messages (mailbox, msg, payload);
* Waiting and RunningOn: per process, the same intervals in the same order, all closed;
* time: every tuple boundary matched to its step in the truth, times follow the steps
  (the example records its facts in step order), which checks the pairing of ends.

With LISTING.jsonl (`vigil relations --json --tick 1ms`), also checks the listing: kinds,
attribute types and tuple counts of the example's relations, and the Clock's ticks.

usage: relations_truth.py TRUTH.json DUMP.jsonl PROGRAM-NAME [LISTING.jsonl]"""
import collections
import json
import sys

failures = []


def fail(msg):
    failures.append(msg)


def by(items, key):
    out = collections.defaultdict(list)
    for it in items:
        out[key(it)].append(it)
    return out


def check_listing(truth, path):
    listing = {r["name"]: r for r in map(json.loads, open(path))}
    entity = {"type": "entity"}
    want = {
        "ProcessState": ("state", len(truth["ProcessState"]),
                         [{"name": "process", "entity": "Process"}, {"name": "state", "type": "string"}]),
        "SendMessage": ("event", len(truth["SendMessage"]),
                        [{"name": "process", "entity": "Process"}, {"name": "mailbox", "entity": "Mailbox"},
                         {"name": "msg", "type": "uint"}, {"name": "payload", "type": "uint"}]),
        "Waiting": ("interval", len(truth["Waiting"]),
                    [{"name": "process", "entity": "Process"}, {"name": "mailbox", "entity": "Mailbox"}]),
        "RunningOn": ("interval", len(truth["RunningOn"]),
                      [{"name": "process", "entity": "Process"}, {"name": "processor", "entity": "Processor"}]),
    }
    for kind in ("Processor", "Mailbox"):
        n = sum(1 for e in truth["entities"] if e["kind"] == kind)
        want[kind] = ("entity", n, [{"name": "name", "type": "string"}, {"name": "id", "type": "uint"},
                                    {"name": "gen", "type": "uint"}])
    for name, (kind, n, attrs) in want.items():
        r = listing.get(name)
        if not r:
            fail(f"listing: no relation {name}")
            continue
        attrs = [dict(entity, **a) if "entity" in a else a for a in attrs]
        if (r["kind"], r["tuples"], r["attributes"]) != (kind, n, attrs):
            fail(f"listing: {name} is {r['kind']}, {r['tuples']} tuples, {r['attributes']}; "
                 f"expected {kind}, {n}, {attrs}")
        if r["unmatched_ends"] or (kind == "interval" and r["open"]):
            fail(f"listing: {name} has unmatched ends or open intervals")
    clock = listing.get("Clock")
    recorded = [r for r in listing.values() if r["name"] != "Clock" and r["tuples"]]
    first, last = min(r["from"] for r in recorded), max(r["to"] for r in recorded)
    ticks = (last - first) // 1000000 + 1
    if not clock or (clock["kind"], clock["tuples"], clock["from"]) != ("event", ticks, first):
        fail(f"listing: Clock is {clock}; expected an event relation of {ticks} ticks from {first}")


def main():
    truth = json.load(open(sys.argv[1]))
    rows = [json.loads(line) for line in open(sys.argv[2])]
    program = sys.argv[3]
    rel = by(rows, lambda r: r["relation"])
    points = []  # (step, time ns, what)

    # entities
    for kind in ("Processor", "Mailbox", "Process"):
        want = sorted((e["id"], e["name"]) for e in truth["entities"] if e["kind"] == kind)
        tuples = rel.get(kind, [])
        got = sorted((r["values"]["id"], r["values"]["name"]) for r in tuples)
        if got != want:
            fail(f"{kind}: entity tuples {got}, truth {want}")
        if any(r["open"] or r["kind"] != "entity" for r in tuples):
            fail(f"{kind}: an entity tuple is open or not an entity relation")
        ends = {(e["id"], e["name"]): e["to"] for e in truth["entities"] if e["kind"] == kind}
        for r in tuples:
            key = (r["values"]["id"], r["values"]["name"])
            points.append((0, r["from"], f"{kind} {key[1]} created"))
            if key in ends:
                points.append((ends[key], r["to"], f"{kind} {key[1]} reclaimed"))
    if [r["values"]["name"] for r in rel.get("OSProcess", [])] != [program]:
        fail(f"OSProcess: {rel.get('OSProcess')}, not the recorded program {program} once")

    # ProcessState
    got = by(rel.get("ProcessState", []), lambda r: r["values"]["process"])
    want = by(truth["ProcessState"], lambda f: f["process"])
    if sorted(got) != sorted(want):
        fail(f"ProcessState: processes {sorted(got)}, truth {sorted(want)}")
    for p, facts in want.items():
        tuples = got.get(p, [])
        if [t["values"]["state"] for t in tuples] != [f["state"] for f in facts]:
            fail(f"ProcessState {p}: states {[t['values']['state'] for t in tuples]}, "
                 f"truth {[f['state'] for f in facts]}")
            continue
        for k, (t, f) in enumerate(zip(tuples, facts)):
            points.append((f["step"], t["from"], f"ProcessState {p} {f['state']}"))
            last = k == len(tuples) - 1
            if t["open"] != last or (not last and t["to"] != tuples[k + 1]["from"]):
                fail(f"ProcessState {p}: tuple {k} does not end where the next begins")

    # SendMessage
    got = by(rel.get("SendMessage", []), lambda r: r["values"]["process"])
    want = by(truth["SendMessage"], lambda f: f["process"])
    for p in sorted(set(got) | set(want)):
        g = [(t["values"]["mailbox"], t["values"]["msg"], t["values"]["payload"]) for t in got.get(p, [])]
        w = [(f["mailbox"], f["msg"], f["payload"]) for f in want.get(p, [])]
        if g != w:
            fail(f"SendMessage from {p}: {g}, truth {w}")
            continue
        for t, f in zip(got[p], want[p]):
            if t["kind"] != "event" or t["to"] is not None:
                fail("SendMessage: not an event relation")
            points.append((f["step"], t["from"], f"SendMessage {p} msg {f['msg']}"))

    # intervals
    for name, other in (("Waiting", "mailbox"), ("RunningOn", "processor")):
        tuples = rel.get(name, [])
        if len(tuples) != len(truth[name]):
            fail(f"{name}: {len(tuples)} tuples, truth {len(truth[name])}")
        got = by(tuples, lambda r: r["values"]["process"])
        want = by(truth[name], lambda f: f["process"])
        for p in sorted(set(got) | set(want)):
            g = [t["values"][other] for t in got.get(p, [])]
            w = [f[other] for f in want.get(p, [])]
            if g != w:
                fail(f"{name} {p}: {other} {g}, truth {w}")
                continue
            for t, f in zip(got[p], want[p]):
                if t["kind"] != "interval" or t["open"]:
                    fail(f"{name} {p}: a tuple is open or not an interval")
                what = f"{name} {p} {f[other]} [{f['from']}, {f['to']}]"
                points.append((f["from"], t["from"], what + " begins"))
                points.append((f["to"], t["to"], what + " ends"))

    # times follow steps: all times of a step precede all times of any later step
    points.sort()
    latest = None  # (time, what) of the latest time seen in earlier steps
    step_max = None
    for i, (step, ns, what) in enumerate(points):
        if i and step != points[i - 1][0]:
            latest = step_max if latest is None or step_max[0] > latest[0] else latest
            step_max = None
        if latest and ns <= latest[0]:
            fail(f"time order: {what} (step {step}) is not after {latest[1]}")
        if step_max is None or ns > step_max[0]:
            step_max = (ns, f"{what} (step {step})")

    if len(sys.argv) > 4:
        check_listing(truth, sys.argv[4])
    for f in failures[:20]:
        print("FAIL:", f)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print(f"ok: {len(rows)} tuples, {len(points)} time points matched to the truth")
    return 0


if __name__ == "__main__":
    sys.exit(main())
