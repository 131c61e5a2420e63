#!/usr/bin/env python3
"""Records tests/lang_c/sensors.c (sensors generated from all.vgl) and checks that the
trace holds exactly the values passed, read back both by `vigil dump --json` and by
babeltrace2 (python3-bt2): every type, strings and bytes cut at their max, struct payloads,
and no event from a sensor whose flag (on the sensor or an entity) is off.

usage: check_trace.py SENSORS-PROGRAM TEST   (TEST: values | metadata | sensor_off)
Environment: VIGIL_BIN (the folder of the vigil binary)."""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import vigil_testlib as t  # noqa: E402

PROGRAM = sys.argv[1] if len(sys.argv) > 2 else None


def ref(i):
    return ("ref", i, 0)


def plain(n, worker, queue):
    """Base's fields as the PLAIN() macro of sensors.c passes them."""
    return {"i8": 1, "i16": 2, "i32": n, "i64": 4, "u8": 5, "u16": 6, "u32": 7, "u64": 8,
            "f": 0.5, "yes": 1, "name": "nm", "blob": "01", "worker": ref(worker),
            "queue": ref(queue)}


def conn_on(addr):
    return {"conn_fd": -3, "conn_peer": "peer-nam", "conn_key": "10203040", "conn_secure": 1,
            "conn_rtt": 0.125, "conn_session_id": 41, "conn_session_user": "user-t",
            "conn_session_account_number": 123456789012345,
            "conn_session_account_owner": "account-owner-na", "conn_backup_id": 42,
            "conn_backup_user": "bk", "conn_spare": addr["spare"], "conn_owner": ref(5),
            "conn_helper": ref(1)}


def conn_zero(fd=0, backup_id=0, backup_user="", owner=0):
    return {"conn_fd": fd, "conn_peer": "", "conn_key": "", "conn_secure": 0, "conn_rtt": 0.0,
            "conn_session_id": 0, "conn_session_user": "", "conn_session_account_number": 0,
            "conn_session_account_owner": "", "conn_backup_id": backup_id,
            "conn_backup_user": backup_user, "conn_spare": 0, "conn_owner": ref(owner),
            "conn_helper": ref(0)}


def expected(addr):
    """(event name, fields) of every event sensors.c records, in order."""
    return [
        ("allc.Tick", {"i8": -128, "i16": -32768, "i32": 1, "i64": -2**63, "u8": 255,
                       "u16": 65535, "u32": 2**32 - 1, "u64": 2**64 - 1, "f": -0.25, "yes": 1,
                       "name": "abcde", "blob": "00010203", "worker": ref(1),
                       "queue": ref(2)}),
        ("allc.Tick", {"i8": -1, "i16": -2, "i32": 2, "i64": -4, "u8": 0, "u16": 0, "u32": 0,
                       "u64": 0, "f": 1e300, "yes": 0, "name": "", "blob": "",
                       "worker": ref(0), "queue": ref(0)}),
        ("allc.Tick", {"i8": 0, "i16": 0, "i32": 3, "i64": 0, "u8": 0, "u16": 0, "u32": 0,
                       "u64": 0, "f": 0.0, "yes": 0, "name": "12345", "blob": "fffe",
                       "worker": ref(1), "queue": ref(2)}),
        ("allc.Job.begin", plain(4, 1, 2)),
        ("allc.Job.end", plain(5, 1, 4)),
        ("allc.Enqueue", plain(6, 3, 2)),
        ("allc.Pick", plain(7, 1, 4)),
        ("allc.Link", {**plain(8, 1, 2), **conn_on(addr), "whole": addr["on"], "tail": 2}),
        ("allc.Full", {**plain(9, 1, 2), **conn_on(addr), "whole": addr["off"], "tail": 3}),
        ("allc.Full", {**plain(10, 1, 2), **conn_zero(9, 43, "b2", 7), "whole": 0, "tail": 4}),
        ("allc.Full", {**plain(11, 0, 0), **conn_zero(), "whole": 0, "tail": 5}),
        ("allc.Ping", {}),
        ("allc.Note", {"text": "0123456789" * 300, "data": bytes(i % 256 for i in range(2000)).hex(),
                       "after": 1}),
        ("allc.Note", {"text": "", "data": "", "after": 2}),
    ]


def norm_dump(fields):
    out = {}
    for k, v in fields.items():
        if isinstance(v, dict):
            v = ("ref", v["id"], v["gen"])
        elif isinstance(v, str) and k in ("u64",) and v.isdigit():
            v = int(v)  # integers above 2^63-1 are printed as strings of digits
        out[k] = v
    return out


def norm_bt2(fields):
    out = {}
    for k, v in fields.items():
        data = fields.get(k.lstrip("_")[:-4]) if k.endswith("_len") else None
        if isinstance(data, list):  # the length of a bytes field (CTF strips its "_")
            t.check(v == len(data), f"babeltrace2: {k} is {v} for {len(data)} bytes")
            continue
        if isinstance(v, dict):
            v = ("ref", v["id"], v["gen"])
        elif isinstance(v, list):
            v = bytes(v).hex()
        out[k] = v
    return out


def record(name, env=None):
    trace = t.tmpdir(name)
    p = t.run([PROGRAM], env={"VIGIL_OUT": trace, **(env or {})}, check_rc=0)
    return trace, json.loads(p.stdout)


def compare(reader, got, want):
    t.check(len(got) == len(want),
            f"{reader}: {len(got)} allc events, expected {len(want)}: "
            f"{[(n, f.get('i32')) for n, f in got]}")
    for k, ((gn, gf), (wn, wf)) in enumerate(zip(got, want)):
        t.check(gn == wn, f"{reader}: event {k} is {gn}, expected {wn}")
        t.check(list(gf) == list(wf), f"{reader}: {gn} fields {list(gf)}, expected {list(wf)}")
        for f in wf:
            t.check(gf[f] == wf[f], f"{reader}: {gn} (event {k}) field {f} is {gf[f]!r:.200}, "
                    f"expected {wf[f]!r}")


def test_values():
    trace, addr = record("lang-c-values")
    try:
        want = expected(addr)
        events, _ = t.dump_json(trace)
        compare("vigil dump", [(e["name"], norm_dump(e["fields"])) for e in events
                               if e["name"].startswith("allc.")], want)
        bt, discarded = t.bt2_events(trace)
        t.check(discarded == 0, f"babeltrace2: {discarded} events discarded")
        compare("babeltrace2", [(n, norm_bt2(f)) for _, n, f in bt if n.startswith("allc.")],
                want)
    finally:
        shutil.rmtree(trace, ignore_errors=True)


def test_metadata():
    """Kinds, flag placements, relations, roles and entity kinds, as babeltrace2 reads the
    model.emf.uri of each event class."""
    import bt2

    want = {
        "allc.Tick": "kind=event;flag=sensor;traced;relation=Tick",
        "allc.Job.begin": "kind=begin;flag=performer;traced;relation=Job;performer=worker;"
                          "target=queue",
        "allc.Job.end": "kind=end;flag=performer;traced;relation=Job;performer=worker;"
                        "target=queue",
        "allc.Enqueue": "kind=event;flag=target;traced;relation=Enqueue;initiator=worker;"
                        "target=queue",
        "allc.Pick": "kind=event;flag=initiator;sampled;relation=Pick;initiator=worker;"
                     "target=queue",
        "allc.Link": "kind=state;flag=performer;traced;relation=Link;performer=conn_owner;"
                     "target=queue",
        "allc.Full": "kind=event;flag=sensor;traced;relation=Full",
        "allc.Ping": "kind=event;flag=sensor;traced;relation=Ping",
        "allc.Note": "kind=event;flag=sensor;traced;relation=Note",
    }
    trace, _ = record("lang-c-metadata")
    try:
        uris = {}
        for msg in bt2.TraceCollectionMessageIterator(trace):
            if type(msg) is bt2._EventMessageConst and msg.event.name.startswith("allc."):
                uris[msg.event.name] = msg.event.cls.emf_uri
        t.check(set(uris) == set(want), f"event classes {sorted(uris)}")
        for name, items in want.items():
            got = set(uris[name].removeprefix("vigil:").split(";"))
            refs = set() if name in ("allc.Ping", "allc.Note") else {"ref.worker=Worker",
                                                                     "ref.queue=Queue"}
            if name in ("allc.Link", "allc.Full"):
                refs |= {"ref.conn_owner=Worker", "ref.conn_helper=Worker"}
            t.check(got == set(items.split(";")) | refs, f"{name}: {uris[name]}")
    finally:
        shutil.rmtree(trace, ignore_errors=True)


def test_sensor_off():
    """A sensor switched off by name (its flag on the sensor) records nothing; the others
    do."""
    trace, _ = record("lang-c-off", {"VIGIL_SENSORS": "-allc.Tick,-allc.Full"})
    try:
        events, _ = t.dump_json(trace)
        names = [e["name"] for e in events if e["name"].startswith("allc.")]
        t.check(names == ["allc.Job.begin", "allc.Job.end", "allc.Enqueue", "allc.Pick",
                          "allc.Link", "allc.Ping", "allc.Note", "allc.Note"], f"events {names}")
    finally:
        shutil.rmtree(trace, ignore_errors=True)


if __name__ == "__main__":
    if PROGRAM is None:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.argv = [sys.argv[0], sys.argv[2]]
    t.main({"values": test_values, "metadata": test_metadata, "sensor_off": test_sensor_off})
