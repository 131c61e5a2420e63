#!/usr/bin/env python3
"""Compares a recorded trace of the mailbox example with its ground truth.

usage: check_trace.py TRUTH.json TRACE --vigil PATH   read the trace with `PATH dump --json`
       check_trace.py TRUTH.json TRACE --babeltrace   read it with babeltrace2 (python3-bt2)

Prints, per sensor, the events in the trace and in the truth, then checks the order of
the facts per entity (states per process, messages per sender and per mailbox, Waiting
per mailbox, RunningOn per processor). Exits 0 if everything matches, 1 if not, 2 if the
trace cannot be read."""
import json
import subprocess
import sys
from collections import Counter, defaultdict

KINDS = ("Processor", "Process", "Mailbox")
# The entity kind of each reference field of the mailbox sensors.
REF_KIND = {"process": "Process", "mailbox": "Mailbox", "processor": "Processor"}


class TraceError(Exception):
    pass


def events_from_dump(vigil, trace):
    """(name, fields) of every event, as `vigil dump --json` prints them."""
    try:
        out = subprocess.run([vigil, "dump", "--json", trace], capture_output=True,
                             text=True, check=False)
    except OSError as e:
        raise TraceError(f"cannot run {vigil}: {e.strerror}")
    if out.returncode != 0:
        raise TraceError(f"vigil dump failed ({out.returncode}): {out.stderr.strip()}")
    events = []
    for n, line in enumerate(out.stdout.splitlines(), 1):
        try:
            e = json.loads(line)
            events.append((e["name"], e["fields"]))
        except (ValueError, KeyError) as err:
            raise TraceError(f"vigil dump --json line {n} is not an event: {err}")
    return events


def events_from_babeltrace(trace):
    try:
        import bt2
    except ImportError:
        raise TraceError("--babeltrace needs the python3-bt2 package (for this python3)")

    def value(f):
        if isinstance(f, bt2._StructureFieldConst):
            return {k: value(v) for k, v in f.items()}
        if isinstance(f, bt2._StringFieldConst):
            return str(f)
        if isinstance(f, bt2._IntegerFieldConst):
            return int(f)
        return repr(f)

    try:
        return [(m.event.name, value(m.event.payload_field))
                for m in bt2.TraceCollectionMessageIterator(trace)
                if type(m) is bt2._EventMessageConst]
    except Exception as e:
        raise TraceError(f"babeltrace2 cannot read {trace}: {e}")


def resolve(events):
    """Replaces entity references by entity names, as the truth has them."""
    names = {}
    for name, f in events:
        if name == "vg.entity.create":
            names[(f["kind"], f["id"], f["gen"])] = f["name"]
    out = []
    for name, f in events:
        if name.startswith("mailbox."):
            f = dict(f)
            for field, kind in REF_KIND.items():
                ref = f.get(field)
                if isinstance(ref, dict):
                    f[field] = ref.get("name") or names.get(
                        (ref.get("kind", kind), ref["id"], ref["gen"]), f"?{kind}#{ref['id']}")
        out.append((name, f))
    return out


def count(events):
    c = Counter()
    for name, f in events:
        if name.startswith("vg.entity.") and f.get("kind") not in KINDS:
            continue
        c[name] += 1
    return c


def interval_sequences(intervals, key, other):
    """Per `key` entity, the begin/end events of the intervals in step order."""
    points = defaultdict(list)
    for i in intervals:
        points[i[key]].append((i["from"], "begin", i[other]))
        if "to" in i:
            points[i[key]].append((i["to"], "end", i[other]))
    return {k: [(b, o) for _, b, o in sorted(v)] for k, v in points.items()}


def order_checks(truth, events):
    """(what, entity, trace sequence, truth sequence) for every per-entity order."""
    trace = defaultdict(lambda: defaultdict(list))
    for name, f in events:
        if name == "mailbox.ProcessState":
            trace["states of"][f["process"]].append(f["state"])
        elif name == "mailbox.SendMessage":
            trace["messages sent by"][f["process"]].append(f["msg"])
            trace["messages sent to"][f["mailbox"]].append((f["process"], f["msg"], f["payload"]))
        elif name.startswith("mailbox.Waiting."):
            trace["Waiting on"][f["mailbox"]].append((name.rsplit(".", 1)[1], f["process"]))
        elif name.startswith("mailbox.RunningOn."):
            trace["RunningOn"][f["processor"]].append((name.rsplit(".", 1)[1], f["process"]))
    expect = defaultdict(lambda: defaultdict(list))
    for s in truth["ProcessState"]:
        expect["states of"][s["process"]].append(s["state"])
    for s in truth["SendMessage"]:
        expect["messages sent by"][s["process"]].append(s["msg"])
        expect["messages sent to"][s["mailbox"]].append((s["process"], s["msg"], s["payload"]))
    expect["Waiting on"].update(interval_sequences(truth["Waiting"], "mailbox", "process"))
    expect["RunningOn"].update(interval_sequences(truth["RunningOn"], "processor", "process"))
    for what in expect.keys() | trace.keys():
        for entity in sorted(expect[what].keys() | trace[what].keys()):
            yield what, entity, trace[what][entity], expect[what][entity]


def main(argv):
    if len(argv) == 5 and argv[3] == "--vigil":
        reader = lambda: events_from_dump(argv[4], argv[2])
    elif len(argv) == 4 and argv[3] == "--babeltrace":
        reader = lambda: events_from_babeltrace(argv[2])
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        truth = json.load(f)
    try:
        events = resolve(reader())
    except TraceError as e:
        print(f"check_trace: {e}", file=sys.stderr)
        return 2

    ok = True
    got = count(events)
    print(f"  {'sensor':<26} {'trace':>7} {'truth':>7}")
    for name, want in truth["counts"].items():
        mark = "" if got[name] == want else "   <-- MISMATCH"
        ok &= not mark
        print(f"  {name:<26} {got[name]:>7} {want:>7}{mark}")

    created = sorted((f["kind"], f["name"]) for n, f in events
                     if n == "vg.entity.create" and f["kind"] in KINDS)
    if created != sorted((e["kind"], e["name"]) for e in truth["entities"]):
        ok = False
        print("  entities: the trace's names differ from the truth's")
    bad = [(w, e, t, x) for w, e, t, x in order_checks(truth, events) if t != x]
    for what, entity, t, x in bad[:5]:
        first = next(i for i in range(max(len(t), len(x))) if t[i:i + 1] != x[i:i + 1])
        print(f"  order: {what} {entity} differs at #{first + 1}: trace "
              f"{t[first:first + 3]}, truth {x[first:first + 3]}")
    ok &= not bad
    print("  per-entity order: " + ("same as the truth" if not bad else
                                      f"{len(bad)} sequence(s) differ"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
