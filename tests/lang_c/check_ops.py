#!/usr/bin/env python3
"""Records tests/lang_c/ops.c (sensors with an op, generated from ops.vgl) and checks the
trace: the reported stream is exactly what docs/consistency.md says while reporting is
suspended and narrowed, and `vigil check` finds no violation (stream); each event class
says its op in model.emf.uri and enter events start with vg_depth, as babeltrace2 reads
them (metadata); with VIGIL_CONSISTENCY=off the same program gives a stream that
`vigil check` refuses, one violation of each rule (naive: what the tracking prevents).

usage: check_ops.py OPS-PROGRAM TEST   (TEST: stream | metadata | naive)
Environment: VIGIL_BIN (the folder of the vigil binary)."""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import vigil_testlib as t  # noqa: E402

PROGRAM = sys.argv[1] if len(sys.argv) > 2 else None


def record(name, env=None):
    trace = t.tmpdir(name)
    p = t.run([PROGRAM], env={"VIGIL_OUT": trace, **(env or {})}, check_rc=0)
    return trace, json.loads(p.stdout)


def expected(addr):
    """(event name, fields) of the opsc events and vg.report.synth, in order; an entity as
    (kind, id, generation)."""
    a, b = ("Obj", addr["a"], 0), ("Obj", addr["b"], 0)
    b2 = ("Obj", addr["b"], 1)  # the same address, created again
    lock = ("Lock", 1, 0)
    return [
        ("opsc.New", {"obj": a, "what": "a"}),
        ("opsc.Touch", {"obj": a, "n": 2}),
        ("opsc.Touch", {"obj": ("Obj", 0, 0), "n": 3}),
        ("opsc.Invoke.begin", {"vg_depth": 1, "fn": "outer"}),
        ("opsc.Invoke.begin", {"vg_depth": 2, "fn": "inner"}),
        ("opsc.Invoke.end", {"fn": "inner"}),
        ("opsc.Invoke.end", {"fn": "outer"}),
        ("opsc.Held.begin", {"lock": lock}),
        ("opsc.Held.end", {"lock": lock}),
        ("vg.report.synth", None),  # "at": the enter's own time
        ("opsc.Invoke.begin", {"vg_depth": 1, "fn": "hidden"}),
        ("opsc.Invoke.begin", {"vg_depth": 2, "fn": "shown"}),
        ("opsc.Invoke.end", {"fn": "shown"}),
        ("opsc.Invoke.end", {"fn": "hidden"}),
        ("opsc.New", {"obj": b, "what": "b"}),
        ("opsc.Free", {"obj": b, "what": "b"}),
        ("opsc.New", {"obj": b2, "what": "b2"}),
        ("opsc.Held.begin", {"lock": lock}),
        ("opsc.Held.end", {"lock": lock}),
        ("opsc.Touch", {"obj": b2, "n": 5}),
        ("opsc.Free", {"obj": b2, "what": "b2"}),
        ("opsc.Free", {"obj": a, "what": "a"}),
    ]


def norm(fields):
    return {k: (v["kind"], v["id"], v["gen"]) if isinstance(v, dict) else v
            for k, v in fields.items()}


def test_stream():
    trace, addr = record("lang-c-ops")
    try:
        events, _ = t.dump_json(trace)
        got = [(e["name"], norm(e["fields"])) for e in events
               if e["name"].startswith("opsc.") or e["name"] == "vg.report.synth"]
        want = expected(addr)
        t.check([n for n, _ in got] == [n for n, _ in want],
                "events:\n  " + "\n  ".join(f"{n} {f}" for n, f in got))
        for k, ((gn, gf), (wn, wf)) in enumerate(zip(got, want)):
            if wf is None:
                t.check(list(gf) == ["at"], f"event {k}: {gn} fields {gf}")
                continue
            t.check(gf == wf, f"event {k}: {gn} {gf}, expected {wf}")
        # The synthesized enter is written right after its marker, with the same time.
        synth = [i for i, e in enumerate(events) if e["name"] == "vg.report.synth"]
        t.check(len(synth) == 1 and events[synth[0] + 1]["fields"].get("fn") == "hidden" and
                events[synth[0] + 1]["ts"] == events[synth[0]]["ts"],
                f"vg.report.synth at {synth}")
        p = t.run([t.VIGIL, "check", trace])
        t.check(p.returncode == 0 and not p.stdout.strip(),
                f"vigil check exited {p.returncode}:\n{p.stdout}{p.stderr}")
    finally:
        shutil.rmtree(trace, ignore_errors=True)


def test_metadata():
    import bt2

    ops = {"opsc.Invoke.begin": "enter", "opsc.Invoke.end": "leave",
           "opsc.Held.begin": "acquire", "opsc.Held.end": "release",
           "opsc.New": "create", "opsc.Free": "reclaim", "opsc.Touch": None}
    trace, _ = record("lang-c-ops-meta")
    try:
        uris, fields = {}, {}
        for msg in bt2.TraceCollectionMessageIterator(trace):
            if type(msg) is bt2._EventMessageConst and msg.event.name.startswith("opsc."):
                uris[msg.event.name] = msg.event.cls.emf_uri
                fields[msg.event.name] = list(msg.event.payload_field.keys())
        t.check(set(uris) == set(ops), f"event classes {sorted(uris)}")
        for name, op in ops.items():
            items = uris[name].removeprefix("vigil:").split(";")
            got = [i for i in items if i.startswith("op=")]
            t.check(got == ([f"op={op}"] if op else []), f"{name}: {uris[name]}")
            first = fields[name][0] if fields[name] else None
            t.check((first == "vg_depth") == (op == "enter"), f"{name}: fields {fields[name]}")
        t.check(fields["opsc.Invoke.begin"] == ["vg_depth", "fn"],
                f"enter fields {fields['opsc.Invoke.begin']}")
    finally:
        shutil.rmtree(trace, ignore_errors=True)


def test_naive():
    trace, _ = record("lang-c-ops-naive", {"VIGIL_CONSISTENCY": "off"})
    try:
        p = t.run([t.VIGIL, "check", "--json", trace])
        t.check(p.returncode != 0, f"vigil check exited 0 on the naive stream:\n{p.stderr}")
        rules = sorted({json.loads(line).get("rule") for line in p.stdout.splitlines()
                        if line.strip() and "summary" not in json.loads(line)})
        t.check(rules == [1, 2, 3, 4, 5], f"rules violated: {rules}\n{p.stdout}")
    finally:
        shutil.rmtree(trace, ignore_errors=True)


if __name__ == "__main__":
    if PROGRAM is None:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.argv = [sys.argv[0], sys.argv[2]]
    t.main({"stream": test_stream, "metadata": test_metadata, "naive": test_naive})
