#!/usr/bin/env python3
"""vigil export (docs/export.md), checked against the trace itself.

  export_test.py BIN mailbox   the mailbox example recorded by itself (VIGIL_OUT, no
                               preload: runs in the sanitizer build too): the chrome JSON
                               validated against the Trace Event Format's documented
                               fields; every event of `vigil dump --json` in it exactly
                               once (an instant's vigil.event, a slice's vigil.event and
                               vigil.end_event), per name; processes and threads named as
                               in the trace; thread slices nest; async b/e pair by id; the
                               perfetto export decoded back by protobuf-c (pftrace_decode)
                               holds the same events, tracks and nesting.
  export_test.py BIN three_tier  recorded by `vigil record`: every message `vigil net
                               split` matched is one flow in both formats, from a send to
                               its receive (three_tier_linked: the instrumented tiers
                               recording themselves, no preload).
  export_test.py BIN otlp      `vigil net export --format otlp` of the instrumented three
                               tiers: OTLP/JSON field names and encodings, one trace per
                               network with its input's trace-id, CLIENT and SERVER spans
                               as `vigil net report` counts pairs, a run span per thread, a
                               link per message, resources as the network's processes;
                               recorded traceparents' parent-ids kept as span ids (and
                               as the root's parent when another tracer began it).
  export_test.py BIN otlp_proto  the same export decoded with OpenTelemetry's protobuf
                               definitions compiled by protobufjs (otlp_proto_check.cjs;
                               VIGIL_NODE, NODE_PATH): every key a field, every value of
                               its type, ids in hex; corrupted copies refused.
  export_test.py BIN sampled   tests/export/sampled.c recording itself: each numeric field
                               of its sampled sensors a counter series with the values of
                               `vigil dump`, in both formats; the sampled interval's open
                               count; no series of a traced sensor, a string or a reference.
  export_test.py BIN bad       damaged trace: what is readable is exported (counts equal
                               `vigil dump`'s), exit 1, the damage named; unknown format,
                               unwritable output: exit 2 and one line; -o /dev/null keeps
                               /dev/null a device.
"""
import base64
import collections
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

BIN = sys.argv[1]
VIGIL = os.path.join(BIN, "vigil")
PHASES = {"B", "E", "X", "i", "I", "C", "b", "n", "e", "s", "t", "f", "M", "N", "O", "D"}


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)


def fail(msg):
    raise AssertionError(msg)


def dump_events(trace):
    p = run([VIGIL, "dump", "--json", trace])
    if p.returncode not in (0, 1):
        fail(f"vigil dump exited {p.returncode}: {p.stderr[-400:]}")
    return [json.loads(l) for l in p.stdout.splitlines()]


def export(trace, fmt, out, expect_rc=0):
    p = run([VIGIL, "export", trace, "--format", fmt, "-o", out])
    if p.returncode != expect_rc:
        fail(f"vigil export --format {fmt} exited {p.returncode}, expected {expect_rc}: "
             f"{p.stderr[-600:]}")
    return p


def validate_chrome(doc):
    """The documented fields of the JSON Object Format and of each phase."""
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("not the JSON Object Format: no traceEvents array")
    if doc.get("displayTimeUnit") not in ("ms", "ns"):
        fail(f"displayTimeUnit {doc.get('displayTimeUnit')!r}")
    async_open = {}
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph not in PHASES:
            fail(f"unknown phase in {e}")
        for k in ("name", "pid", "tid", "ts"):
            if k not in e:
                fail(f"{ph} event without {k}: {e}")
        if not isinstance(e["ts"], (int, float)) or not isinstance(e["pid"], int) or \
                not isinstance(e["tid"], int):
            fail(f"ts/pid/tid of the wrong type: {e}")
        if "args" in e and not isinstance(e["args"], dict):
            fail(f"args not an object: {e}")
        if ph == "X" and (not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0):
            fail(f"X without a duration >= 0: {e}")
        if ph == "i" and e.get("s") not in ("g", "p", "t"):
            fail(f"instant without scope: {e}")
        if ph == "M":
            if e["name"] not in ("process_name", "thread_name", "process_labels",
                                 "process_sort_index", "thread_sort_index"):
                fail(f"unknown metadata event {e}")
            if "args" not in e:
                fail(f"metadata without args: {e}")
        if ph == "C" and not all(isinstance(v, (int, float)) for v in e.get("args", {}).values()):
            fail(f"counter with a non-numeric series: {e}")
        if ph in ("b", "e", "s", "f"):
            if "id" not in e or "cat" not in e:
                fail(f"{ph} without id or cat: {e}")
        if ph == "b":
            key = (e["cat"], e["name"], e["id"])
            if key in async_open:
                fail(f"async id used twice: {e}")
            async_open[key] = e["ts"]
        if ph == "e":
            key = (e["cat"], e["name"], e["id"])
            if key not in async_open:
                fail(f"async end without begin: {e}")
            if e["ts"] < async_open.pop(key):
                fail(f"async end before its begin: {e}")
        if ph == "f" and e.get("bp") != "e":
            fail(f"flow end not bound to its enclosing slice: {e}")
    if async_open:
        fail(f"{len(async_open)} async slices without end")


def chrome_counts(doc):
    """Trace events the export stands for, per name."""
    c = collections.Counter()
    for e in doc["traceEvents"]:
        if e["ph"] in ("i", "X", "b"):
            a = e["args"]
            c[a["vigil.event"]] += 1
            if "vigil.end_event" in a:
                c[a["vigil.end_event"]] += 1
    return c


def check_nesting(doc):
    """Slices of one thread nest (what a thread track shows)."""
    per = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            per[(e["pid"], e["tid"])].append((round(e["ts"] * 1000), -round(e["dur"] * 1000)))
    for key, v in per.items():
        v.sort()
        stack = []
        for ts, negdur in v:
            end = ts - negdur
            while stack and stack[-1] <= ts:
                stack.pop()
            if stack and end > stack[-1]:
                fail(f"thread {key}: slice [{ts}, {end}] ns overlaps its parent ending {stack[-1]}")
            stack.append(end)


def check_names(doc, events):
    procs = {(e["pid"], e["args"]["name"]) for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    want = {(e["pid"], e["proc"]) for e in events}
    if {n for _, n in procs} != {n for _, n in want}:
        fail(f"process names {procs} vs the trace's {want}")
    threads = {(e["tid"], e["args"]["name"]) for e in doc["traceEvents"]
               if e["ph"] == "M" and e["name"] == "thread_name"}
    last = {}
    for e in events:
        if e["name"] in ("vg.thread.begin", "vg.thread.name"):
            last[e["fields"]["tid"]] = e["fields"]["name"]
    for tid, name in last.items():
        if (tid, name) not in threads:
            fail(f"thread {tid} named {name!r} in the trace, not in the export: {threads}")


def decode_perfetto(path):
    p = run([os.path.join(BIN, "pftrace_decode"), path])
    if p.returncode != 0:
        fail(f"pftrace_decode: {p.stderr}")
    return [json.loads(l) for l in p.stdout.splitlines()]


def check_perfetto(packets, doc, trace_events):
    if not packets or packets[0].get("flags") != 1:
        fail("the first packet does not clear the sequence's incremental state")
    if any(p["seq"] != 1 for p in packets):
        fail("packets outside sequence 1")
    tracks = {p["track"]["uuid"]: p["track"] for p in packets if "track" in p}
    counts = collections.Counter()
    stacks = collections.defaultdict(list)
    last_ts = None
    for p in packets:
        if "event" not in p:
            continue
        e = p["event"]
        if e["track"] not in tracks:
            fail(f"event on an undeclared track: {p}")
        if last_ts is not None and p["ts"] < last_ts:
            fail("events not in time order")
        last_ts = p["ts"]
        if e["type"] in (1, 3):  # SLICE_BEGIN, INSTANT
            counts[e["args"]["vigil.event"]] += 1
            if "vigil.end_event" in e["args"]:
                counts[e["args"]["vigil.end_event"]] += 1
        if e["type"] == 1:
            stacks[e["track"]].append(p["ts"])
        elif e["type"] == 2:
            if not stacks[e["track"]]:
                fail(f"slice end without begin on track {e['track']}")
            stacks[e["track"]].pop()
        elif e["type"] == 4 and "counter" not in tracks[e["track"]]:
            fail("counter value on a track without CounterDescriptor")
    if any(stacks.values()):
        fail("slices left open in the perfetto export")
    want = collections.Counter(e["name"] for e in trace_events)
    if counts != want:
        fail(f"perfetto export vs vigil dump, per name: {dict(counts - want)} extra, "
             f"{dict(want - counts)} missing")
    # the same processes and threads as the chrome export
    pnames = {(t["process"]["pid"], t["process"]["name"]) for t in tracks.values()
              if "process" in t}
    cnames = {(e["pid"], e["args"]["name"]) for e in doc["traceEvents"]
              if e["ph"] == "M" and e["name"] == "process_name"}
    if pnames != cnames:
        fail(f"processes: perfetto {pnames} vs chrome {cnames}")
    tnames = {(t["thread"]["pid"], t["thread"]["tid"], t["thread"].get("name", ""))
              for t in tracks.values() if "thread" in t}
    ctn = {(e["pid"], e["tid"], e["args"]["name"]) for e in doc["traceEvents"]
           if e["ph"] == "M" and e["name"] == "thread_name"}
    if {(p, t) for p, t, _ in tnames} != {(p, t) for p, t, _ in ctn}:
        fail(f"threads: perfetto {tnames} vs chrome {ctn}")
    for t in tracks.values():
        if "thread" in t and t.get("parent") not in tracks:
            fail(f"thread track without its process track: {t}")


def chrome_series(doc, name, key):
    """{pid: [values in time order]} of a counter's series in the chrome export."""
    per = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e["ph"] == "C" and e["name"] == name and key in e["args"]:
            per[e["pid"]].append((e["ts"], e["args"][key]))
    return {pid: [x for _, x in sorted(v, key=lambda tv: tv[0])] for pid, v in per.items()}


def perfetto_series(packets, track_name):
    """{process pid: [values in time order]} of the counter tracks named track_name."""
    tracks = {p["track"]["uuid"]: p["track"] for p in packets if "track" in p}
    pids = {u: t["process"]["pid"] for u, t in tracks.items() if "process" in t}
    per = collections.defaultdict(list)
    for p in packets:
        e = p.get("event")
        if e and e["type"] == 4 and tracks[e["track"]].get("name") == track_name:
            t = tracks[e["track"]]
            if "counter" not in t or t.get("parent") not in pids:
                fail(f"counter track {t} without CounterDescriptor or process")
            per[pids[t["parent"]]].append(e["value"])
    return dict(per)


def check_sampled_open(trace, doc, packets, events, relation, sampled_names, traced=()):
    """A sampled interval relation's intervals open per process: a sample at each of its
    begins and ends (as many as `vigil dump` has), rising by one at a begin, falling by
    one at an end that closed one, ending at what `vigil relations` says is open; the
    same values in the perfetto export. Traced relations have no counter."""
    series = chrome_series(doc, relation, "vigil.open")
    n = sum(1 for e in events if e["name"] in sampled_names)
    if not n or sum(len(v) for v in series.values()) != n:
        fail(f"{relation}: {sum(len(v) for v in series.values())} counter samples, "
             f"{n} begins and ends in vigil dump")
    for pid, v in series.items():
        if min(v) < 0 or any(abs(b - a) > 1 for a, b in zip([0] + v, v)):
            fail(f"{relation} in {pid}: open count not stepping by one from 0: {v}")
    rel = [json.loads(l) for l in run([VIGIL, "relations", "--format", "json", trace]).stdout
           .splitlines()]
    want_open = sum(r["open"] for r in rel if r["name"] == relation)
    if sum(v[-1] for v in series.values()) != want_open:
        fail(f"{relation}: {sum(v[-1] for v in series.values())} open at the end, "
             f"vigil relations: {want_open}")
    if perfetto_series(packets, f"{relation} vigil.open") != series:
        fail(f"{relation}: perfetto counter values differ from chrome's")
    for t in traced:
        if any(e["ph"] == "C" and e["name"] == t for e in doc["traceEvents"]):
            fail(f"the traced relation {t} has a counter")
    return n


def case_mailbox(work):
    trace = os.path.join(work, "trace")
    p = run([os.path.join(BIN, "mailbox"), "--seed", "2"], env=dict(os.environ, VIGIL_OUT=trace))
    if p.returncode != 0:
        fail(f"mailbox exited {p.returncode}: {p.stderr[-400:]}")
    events = dump_events(trace)
    out = os.path.join(work, "m.json")
    export(trace, "chrome", out)
    with open(out) as f:
        doc = json.load(f)
    validate_chrome(doc)
    want = collections.Counter(e["name"] for e in events)
    got = chrome_counts(doc)
    if got != want:
        fail(f"chrome export vs vigil dump, per name: {dict(got - want)} extra, "
             f"{dict(want - got)} missing")
    if doc["otherData"]["events"] != len(events):
        fail(f"otherData.events {doc['otherData']['events']} != {len(events)}")
    check_names(doc, events)
    check_nesting(doc)
    # instants carry the fields of their event (SendMessage: process, mailbox)
    sends = [e for e in doc["traceEvents"] if e["ph"] == "i" and e["name"] == "mailbox.SendMessage"]
    dsends = [e for e in events if e["name"] == "mailbox.SendMessage"]
    if sorted(e["args"]["mailbox"] for e in sends) != sorted(e["fields"]["mailbox"]["name"] for e in dsends):
        fail("SendMessage instants do not carry the trace's mailbox names")
    pf = os.path.join(work, "m.pftrace")
    export(trace, "perfetto", pf)
    packets = decode_perfetto(pf)
    check_perfetto(packets, doc, events)
    nsampled = check_sampled_open(trace, doc, packets, events, "RunningOn",
                                  ("mailbox.RunningOn.begin", "mailbox.RunningOn.end"),
                                  traced=("Waiting",))
    print(f"mailbox: {len(events)} events, {len(doc['traceEvents'])} trace events; "
          f"both formats agree with vigil dump; {nsampled} samples of the sampled RunningOn")
    check_discarded(work)


def check_discarded(work):
    """A size cap makes the mailbox lose events: the counter rises in time to the count
    of `vigil dump --stats`, in both formats."""
    trace = os.path.join(work, "capped")
    p = run([os.path.join(BIN, "mailbox"), "--messages", "20000", "--seed", "3"],
            env=dict(os.environ, VIGIL_OUT=trace, VIGIL_MAX_SIZE="64K"))
    if p.returncode != 0:
        fail(f"capped mailbox exited {p.returncode}")
    st = run([VIGIL, "dump", "--stats", "--json", trace])
    lost = {r["pid"]: r["discarded"] for r in map(json.loads, st.stdout.splitlines())
            if "image" in r}
    if not sum(lost.values()):
        fail("a 64K cap lost nothing: the check would not check")
    out = os.path.join(work, "capped.json")
    export(trace, "chrome", out)
    with open(out) as f:
        doc = json.load(f)
    validate_chrome(doc)
    samples = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e["ph"] == "C" and e["name"] == "events_discarded":
            samples[e["pid"]].append((e["ts"], e["args"]["discarded"]))
    for pid, v in samples.items():
        v.sort()
        if [x for _, x in v] != sorted(x for _, x in v) or v[0][1] != 0:
            fail(f"pid {pid}: counter not rising from 0 in time: {v}")
    if {pid: v[-1][1] for pid, v in samples.items()} != {k: n for k, n in lost.items() if n}:
        fail(f"counters {dict(samples)} vs vigil dump --stats {lost}")
    pf = os.path.join(work, "capped.pftrace")
    export(trace, "perfetto", pf)
    packets = decode_perfetto(pf)
    values = [x for v in perfetto_series(packets, "events_discarded").values() for x in v]
    if max(values) != max(x for v in samples.values() for _, x in v) or \
            len(values) != sum(len(v) for v in samples.values()):
        fail(f"perfetto counter values {values} vs chrome {dict(samples)}")
    # what was lost leaves intervals of the sampled RunningOn open, or ends unmatched
    check_sampled_open(trace, doc, packets, dump_events(trace), "RunningOn",
                       ("mailbox.RunningOn.begin", "mailbox.RunningOn.end"))


def case_three_tier(work, linked=False):
    trace = os.path.join(work, "tt")
    cmd = [os.path.join(BIN, "three_tier"), "run"]
    if linked:  # the instrumented tiers record themselves: no preload (sanitizer build)
        p = run(cmd + ["--instrumented"], env=dict(os.environ, VIGIL_OUT=trace))
    else:
        p = run([VIGIL, "record", "-o", trace, "--"] + cmd)
    if p.returncode != 0:
        fail(f"vigil record three_tier exited {p.returncode}: {p.stderr[-400:]}")
    sp = run([VIGIL, "net", "split", trace, "-o", os.path.join(work, "nets")])
    m = re.search(r"(\d+) messages matched", sp.stderr)
    if sp.returncode != 0 or not m:
        fail(f"vigil net split: {sp.returncode} {sp.stderr[-400:]}")
    matched = int(m.group(1))
    out = os.path.join(work, "tt.json")
    export(trace, "chrome", out)
    with open(out) as f:
        doc = json.load(f)
    validate_chrome(doc)
    events = dump_events(trace)
    if chrome_counts(doc) != collections.Counter(e["name"] for e in events):
        fail("three_tier: chrome export vs vigil dump differ")
    slices = {(e["pid"], e["tid"], e["ts"]): e for e in doc["traceEvents"] if e["ph"] == "X"}
    starts = {e["id"]: e for e in doc["traceEvents"] if e["ph"] == "s"}
    ends = {e["id"]: e for e in doc["traceEvents"] if e["ph"] == "f"}
    if len(starts) != matched or set(starts) != set(ends):
        fail(f"{len(starts)} flow starts, {len(ends)} ends; vigil net matched {matched}")
    for i, s in starts.items():
        a = slices.get((s["pid"], s["tid"], s["ts"]))
        b = slices.get((ends[i]["pid"], ends[i]["tid"], ends[i]["ts"]))
        if not a or a["name"] != "vg.net.send" or not b or b["name"] != "vg.net.recv":
            fail(f"flow {i} not from a send to a receive: {a} -> {b}")
    pf = os.path.join(work, "tt.pftrace")
    export(trace, "perfetto", pf)
    packets = decode_perfetto(pf)
    check_perfetto(packets, doc, events)
    out_ids, in_ids = [], []
    for p in packets:
        e = p.get("event")
        if e and e["flow_ids"]:
            if e["name"] != "vg.net.send":
                fail(f"flow ids on {e['name']}")
            out_ids += e["flow_ids"]
        if e and e["terminating_flow_ids"]:
            if e["name"] != "vg.net.recv":
                fail(f"terminating flow ids on {e['name']}")
            in_ids += e["terminating_flow_ids"]
    if len(out_ids) != matched or sorted(out_ids) != sorted(in_ids):
        fail(f"perfetto flows: {len(out_ids)} out, {len(in_ids)} in; matched {matched}")
    print(f"three_tier: {matched} messages, {matched} flows in both formats")


def case_bad(work):
    trace = os.path.join(work, "trace")
    p = run([os.path.join(BIN, "mailbox"), "--seed", "2"], env=dict(os.environ, VIGIL_OUT=trace))
    if p.returncode != 0:
        fail(f"mailbox exited {p.returncode}")
    # damage: garbage over the middle of the largest stream file
    streams = [os.path.join(dp, f) for dp, _, fs in os.walk(trace) for f in fs
               if f.startswith("stream-")]
    big = max(streams, key=os.path.getsize)
    size = os.path.getsize(big)
    with open(big, "r+b") as f:
        f.seek(size // 2)
        f.write(b"\xff" * 64)
    events = dump_events(trace)
    out = os.path.join(work, "d.json")
    pr = export(trace, "chrome", out, expect_rc=1)
    if "not exported" not in pr.stderr or "damaged place" not in pr.stderr:
        fail(f"damage not said: {pr.stderr}")
    with open(out) as f:
        doc = json.load(f)
    validate_chrome(doc)
    if chrome_counts(doc) != collections.Counter(e["name"] for e in events):
        fail("damaged trace: the export holds other events than vigil dump reads")
    export(trace, "perfetto", os.path.join(work, "d.pftrace"), expect_rc=1)
    # usage errors: one line, exit 2
    for args, what in (([trace, "--format", "svg", "-o", out], "unknown format"),
                       ([trace, "--format", "chrome", "-o", os.path.join(work, "no", "x.json")],
                        "No such file"),
                       ([trace, "--format", "chrome", "-o", work], "directory"),
                       ([os.path.join(work, "nothing"), "--format", "chrome", "-o", out], ""),
                       ([trace, "-o", out], "--format")):
        r = run([VIGIL, "export"] + args)
        lines = r.stderr.strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or what not in lines[0]:
            fail(f"vigil export {args}: exit {r.returncode}, stderr {r.stderr!r}")
    before = os.stat("/dev/null")
    export(trace, "chrome", "/dev/null", expect_rc=1)
    after = os.stat("/dev/null")
    if not stat.S_ISCHR(after.st_mode) or after.st_rdev != before.st_rdev:
        fail("/dev/null is no longer the null device")
    print("bad input: damaged trace exported as far as readable; usage errors one line")


def case_formats(work):
    """--format json wherever a table is printed: the same as --json (or the documented
    JSON), parsed; --format text the default; anything else one line, exit 2."""
    trace = os.path.join(work, "trace")
    p = run([os.path.join(BIN, "three_tier"), "run", "--instrumented"],
            env=dict(os.environ, VIGIL_OUT=trace))
    if p.returncode != 0:
        fail(f"three_tier exited {p.returncode}: {p.stderr[-300:]}")
    nets = os.path.join(work, "nets")
    if run([VIGIL, "net", "split", trace, "-o", nets]).returncode != 0:
        fail("vigil net split failed")
    for cmd in (["relations", trace], ["check", trace], ["clock", trace],
                ["net", "report", nets]):
        a = run([VIGIL] + cmd[:-1] + ["--format", "json", cmd[-1]])
        b = run([VIGIL] + cmd[:-1] + ["--json", cmd[-1]])
        t = run([VIGIL] + cmd[:-1] + ["--format", "text", cmd[-1]])
        d = run([VIGIL] + cmd[:-1] + [cmd[-1]])
        if a.returncode != 0 or a.stdout != b.stdout or t.stdout != d.stdout:
            fail(f"vigil {' '.join(cmd)}: --format json/text differ from --json/default "
                 f"(exit {a.returncode}: {a.stderr[-300:]})")
        text = a.stdout.strip()
        try:  # one document, or JSON lines
            json.loads(text)
        except ValueError:
            for line in text.splitlines():
                json.loads(line)
        if not text or text == t.stdout.strip():
            fail(f"vigil {' '.join(cmd)} --format json printed {text[:100]!r}")
        x = run([VIGIL] + cmd[:-1] + ["--format", "xml", cmd[-1]])
        if x.returncode != 2 or len(x.stderr.strip().splitlines()) != 1 or \
                "text or json" not in x.stderr:
            fail(f"vigil {' '.join(cmd)} --format xml: exit {x.returncode}, {x.stderr!r}")
    print("--format json|text: relations, check, clock, net report")


def check_otlp(doc, nets, report):
    """OTLP/JSON (ExportTraceServiceRequest's JSON mapping) against the network files."""
    if set(doc) != {"resourceSpans"}:
        fail(f"top level {set(doc)}")
    spans = []
    for rs in doc["resourceSpans"]:
        attrs = {a["key"]: a["value"] for a in rs["resource"]["attributes"]}
        for k, t in (("host.name", "stringValue"), ("process.pid", "intValue"),
                     ("process.executable.name", "stringValue")):
            if set(attrs.get(k, {})) != {t}:
                fail(f"resource attribute {k}: {attrs.get(k)}")
        for ss in rs["scopeSpans"]:
            if ss["scope"]["name"] != "vigil":
                fail(f"scope {ss['scope']}")
            for sp in ss["spans"]:
                spans.append((attrs, sp))
    hexre = re.compile(r"^[0-9a-f]+$")
    by_trace = collections.defaultdict(list)
    for attrs, sp in spans:
        for k in ("traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano",
                  "endTimeUnixNano", "attributes", "links"):
            if k not in sp:
                fail(f"span without {k}: {sp}")
        if len(sp["traceId"]) != 32 or not hexre.match(sp["traceId"]) or \
                set(sp["traceId"]) == {"0"}:
            fail(f"traceId {sp['traceId']!r}")
        if len(sp["spanId"]) != 16 or not hexre.match(sp["spanId"]):
            fail(f"spanId {sp['spanId']!r}")
        if sp["kind"] not in (1, 2, 3, 4, 5):
            fail(f"kind {sp['kind']}")
        if not (sp["startTimeUnixNano"].isdigit() and sp["endTimeUnixNano"].isdigit()) or \
                int(sp["startTimeUnixNano"]) > int(sp["endTimeUnixNano"]):
            fail(f"times {sp['startTimeUnixNano']} {sp['endTimeUnixNano']}")
        for ln in sp["links"]:
            if ln["traceId"] != sp["traceId"] or len(ln["spanId"]) != 16:
                fail(f"link {ln}")
        by_trace[sp["traceId"]].append((attrs, sp))
    if len(by_trace) != len(nets):
        fail(f"{len(by_trace)} traces for {len(nets)} networks")
    pairs = {n["file"]: n["pairs"] for n in report["networks"]}
    for path, net in nets.items():
        tid = net.get("iid")
        cands = [t for t, v in by_trace.items()
                 if any(a["key"] == "vigil.network" and a["value"]["intValue"] == str(net["network"])
                        for _, sp in v for a in sp["attributes"])]
        if len(cands) != 1:
            fail(f"network {net['network']}: {len(cands)} traces")
        trace = by_trace[cands[0]]
        if tid and cands[0] != tid:
            fail(f"network {net['network']}: trace-id {cands[0]}, its input carried {tid}")
        ids = {sp["spanId"] for _, sp in trace}
        if len(ids) != len(trace):
            fail("span ids not unique")
        roots = [sp for _, sp in trace if not sp["parentSpanId"]]
        if len(roots) != 1:
            fail(f"network {net['network']}: {len(roots)} root spans")
        if any(sp["parentSpanId"] and sp["parentSpanId"] not in ids for _, sp in trace):
            fail("a parent span outside the trace")
        kinds = collections.Counter(sp["kind"] for _, sp in trace)
        want = pairs[path]
        if kinds[3] != want or kinds[2] != want or kinds[1] != len(net["threads"]):
            fail(f"network {net['network']}: spans {dict(kinds)}; report: {want} pairs, "
                 f"{len(net['threads'])} threads")
        links = sum(len(sp["links"]) for _, sp in trace)
        msgs = sum(1 for e in net["edges"] if e["kind"] == "message")
        if links != msgs:
            fail(f"network {net['network']}: {links} links, {msgs} messages")
        # traceparents: a CLIENT span whose request carried one has its parent-id as its
        # id (what the server's tracer parents its spans on): it starts at that send, and
        # its SERVER span is in the process whose receive recorded the same parent-id
        sends = {v["msg"]: v for v in net["vertices"] if v["kind"] == "send" and "msg" in v}
        recvs = collections.defaultdict(set)
        for v in net["vertices"]:
            if v["kind"] == "recv" and "msg" in v:
                recvs[v["msg"]].add(str(v["pid"]))
        joined = 0
        for a, sp in trace:
            if sp["kind"] == 3 and sp["spanId"] in sends:
                v = sends[sp["spanId"]]
                if sp["startTimeUnixNano"] != str(v["ts"]) or a["process.pid"]["intValue"] != str(v["pid"]):
                    fail(f"CLIENT span {sp['spanId']} is not its traceparent's send {v}")
                srv = [(b, x) for b, x in trace if x["parentSpanId"] == sp["spanId"] and x["kind"] == 2]
                if len(srv) != 1 or srv[0][0]["process.pid"]["intValue"] not in recvs[sp["spanId"]]:
                    fail(f"CLIENT span {sp['spanId']}: its SERVER span is not where the "
                         f"traceparent was received ({recvs[sp['spanId']]})")
                joined += 1
        if tid and not joined:
            fail(f"network {net['network']}: no CLIENT span carries a recorded traceparent's id")
        procs = {(t["host"], str(t["pid"]), t["program"]) for t in net["threads"]}
        got = {(a["host.name"]["stringValue"], a["process.pid"]["intValue"],
                a["process.executable.name"]["stringValue"]) for a, _ in trace}
        if got != procs:
            fail(f"resources {got} vs the network's processes {procs}")
    return sum(pairs.values())


def otlp_networks(work):
    """The instrumented three tiers split into networks: (dir, {file: network}, report)."""
    trace = os.path.join(work, "tt")
    p = run([os.path.join(BIN, "three_tier"), "run", "--instrumented"],
            env=dict(os.environ, VIGIL_OUT=trace))
    if p.returncode != 0:
        fail(f"three_tier exited {p.returncode}: {p.stderr[-300:]}")
    nets_dir = os.path.join(work, "nets")
    sp = run([VIGIL, "net", "split", "--inputs", "instrumented", trace, "-o", nets_dir])
    if sp.returncode != 0:
        fail(f"vigil net split: {sp.stderr[-300:]}")
    nets = {}
    for f in sorted(os.listdir(nets_dir)):
        if f.startswith("net-"):
            with open(os.path.join(nets_dir, f)) as fh:
                nets[os.path.join(nets_dir, f)] = json.load(fh)
    if not nets or not all(n.get("iid") for n in nets.values()):
        fail("no instrumented networks with an interaction id")
    rep = json.loads(run([VIGIL, "net", "report", "--json", nets_dir]).stdout)
    return nets_dir, nets, rep


def case_otlp(work):
    nets_dir, nets, rep = otlp_networks(work)
    out = os.path.join(work, "o.json")
    r = run([VIGIL, "net", "export", nets_dir, "--format", "otlp", "-o", out])
    if r.returncode != 0:
        fail(f"vigil net export: {r.returncode} {r.stderr}")
    with open(out) as f:
        npairs = check_otlp(json.load(f), nets, rep)
    # one network file alone; a damaged one is left out and said, the others written
    one = sorted(nets)[0]
    r = run([VIGIL, "net", "export", one, "--format", "otlp", "-o", out])
    with open(out) as f:
        check_otlp(json.load(f), {one: nets[one]}, rep)
    with open(os.path.join(nets_dir, "net-99999.json"), "w") as f:
        f.write('{"network": 9, "threads": [')
    r = run([VIGIL, "net", "export", nets_dir, "--format", "otlp", "-o", out])
    if r.returncode != 1 or "not exported" not in r.stderr or "net-99999" not in r.stderr:
        fail(f"damaged network file: exit {r.returncode}, {r.stderr!r}")
    with open(out) as f:
        check_otlp(json.load(f), nets, rep)
    os.unlink(os.path.join(nets_dir, "net-99999.json"))
    # a network started by another tracer's message: the root run's parent is the span
    # its traceparent named (a copy whose input thread first receives from outside)
    ext_dir = os.path.join(work, "ext")
    os.mkdir(ext_dir)
    net = json.loads(json.dumps(nets[one]))
    root = net["vertices"][net["input"]]["thread"]
    v0 = min((v for v in net["vertices"] if v["thread"] == root), key=lambda v: v["ts"])
    v0.update(kind="recv", matched=False, msg="00f067aa0ba902b7", len=55)
    with open(os.path.join(ext_dir, "net-00001.json"), "w") as f:
        json.dump(net, f)
    r = run([VIGIL, "net", "export", ext_dir, "--format", "otlp", "-o", out])
    with open(out) as f:
        ext = [sp for rs in json.load(f)["resourceSpans"] for ss in rs["scopeSpans"]
               for sp in ss["spans"]
               if any(a["key"] == "vigil.input" for a in sp["attributes"])]
    if r.returncode != 0 or len(ext) != 1 or ext[0]["parentSpanId"] != "00f067aa0ba902b7" \
            or ext[0]["traceId"] != net["iid"]:
        fail(f"a network begun by another tracer's traceparent: root {ext}, {r.stderr}")
    v0["msg"] = "not hex"
    with open(os.path.join(ext_dir, "net-00001.json"), "w") as f:
        json.dump(net, f)
    r = run([VIGIL, "net", "export", ext_dir, "--format", "otlp", "-o", out])
    if r.returncode != 1 or "msg of vertex" not in r.stderr:
        fail(f"a malformed msg: exit {r.returncode}, {r.stderr!r}")
    for args, what in (([nets_dir, "--format", "zipkin", "-o", out], "unknown format"),
                       ([nets_dir, "-o", out], "--format otlp"),
                       ([os.path.join(work, "none"), "--format", "otlp", "-o", out], "none"),
                       ([nets_dir, "--format", "otlp", "-o", os.path.join(work, "x", "y")],
                        "No such file")):
        r = run([VIGIL, "net", "export"] + args)
        lines = r.stderr.strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or what not in lines[0]:
            fail(f"vigil net export {args}: exit {r.returncode}, {r.stderr!r}")
    print(f"otlp: {len(nets)} networks, {npairs} request/reply pairs; trace-ids kept")


def case_sampled(work):
    """Sampled sensors' numeric fields as counter tracks: per field a series with the
    values of `vigil dump`, in time order, in both formats; the sampled interval's open
    count; a traced sensor's fields, strings and entity references are no series."""
    trace = os.path.join(work, "s")
    p = run([os.path.join(BIN, "export_sampled"), "60"], env=dict(os.environ, VIGIL_OUT=trace))
    if p.returncode != 0:
        fail(f"export_sampled exited {p.returncode}: {p.stderr[-400:]}")
    events = dump_events(trace)
    out, pf = os.path.join(work, "s.json"), os.path.join(work, "s.pftrace")
    export(trace, "chrome", out)
    with open(out) as f:
        doc = json.load(f)
    validate_chrome(doc)
    if chrome_counts(doc) != collections.Counter(e["name"] for e in events):
        fail("chrome export vs vigil dump, per name")
    export(trace, "perfetto", pf)
    packets = decode_perfetto(pf)
    check_perfetto(packets, doc, events)
    pid = events[0]["pid"]
    nseries = 0
    for relation, names in (("CpuLoad", ("smp.CpuLoad",)),
                            ("Busy", ("smp.Busy.begin", "smp.Busy.end"))):
        for field in ("queued", "delta", "util"):
            want = [e["fields"][field] for e in events if e["name"] in names]
            got = chrome_series(doc, relation, field)
            if got != {pid: want} or len(want) < 60:
                fail(f"{relation}.{field}: chrome series {got}, vigil dump {want}")
            if perfetto_series(packets, f"{relation} {field}") != got:
                fail(f"{relation}.{field}: perfetto series differ from chrome's")
            nseries += 1
    check_sampled_open(trace, doc, packets, events, "Busy", ("smp.Busy.begin", "smp.Busy.end"),
                       traced=("Tick",))
    keys = {k for e in doc["traceEvents"] if e["ph"] == "C" for k in e["args"]}
    if keys != {"queued", "delta", "util", "vigil.open"}:
        fail(f"counter series {keys}: only numeric fields (and vigil.open) are series")
    names = {p["track"]["name"] for p in packets if "track" in p and "counter" in p["track"]}
    want = {f"{r} {k}" for r in ("CpuLoad", "Busy") for k in ("queued", "delta", "util")}
    if names != want | {"Busy vigil.open"}:
        fail(f"perfetto counter tracks {names}")
    print(f"sampled: {nseries} field series and an open count agree with vigil dump "
          f"in both formats")


def proto_check(files):
    """otlp_proto_check.cjs: OpenTelemetry's compiled protobuf definitions decode them."""
    return run([os.environ["VIGIL_NODE"],
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "otlp_proto_check.cjs")]
               + files)


def corrupt(doc, how):
    """A copy of an OTLP/JSON document with one mistake a decoder must refuse."""
    doc = json.loads(json.dumps(doc))
    sp = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    if how == "unknown field":
        sp["startTime"] = sp.pop("startTimeUnixNano")
    elif how == "snake_case key":
        sp["attributes"][0]["value"] = {"int_value": "5"}
    elif how == "base64 span id":
        sp["spanId"] = base64.b64encode(bytes.fromhex(sp["spanId"])).decode()
    elif how == "short trace id":
        sp["traceId"] = sp["traceId"][2:]
    elif how == "enum as name":
        sp["kind"] = "SPAN_KIND_INTERNAL"
    elif how == "int64 as number":
        sp["endTimeUnixNano"] = int(sp["endTimeUnixNano"])
    elif how == "string as number":
        sp["name"] = 7
    elif how == "object for a list":
        sp["links"] = {"0": sp["links"][0] if sp["links"] else {}}
    return doc


def case_otlp_proto(work):
    """The export decoded with opentelemetry-proto compiled by pbjs (protobufjs), and each
    of a set of corrupted copies refused, naming the place."""
    nets_dir, nets, _ = otlp_networks(work)
    out = os.path.join(work, "o.json")
    r = run([VIGIL, "net", "export", nets_dir, "--format", "otlp", "-o", out])
    if r.returncode != 0:
        fail(f"vigil net export: {r.returncode} {r.stderr}")
    with open(out) as f:
        doc = json.load(f)
    nspans = sum(len(ss["spans"]) for rs in doc["resourceSpans"] for ss in rs["scopeSpans"])
    c = proto_check([out])
    if c.returncode != 0 or f"{nspans} spans" not in c.stdout:
        fail(f"the export does not decode as ExportTraceServiceRequest ({nspans} spans): "
             f"{c.stdout}{c.stderr}")
    # the negative controls: each corrupted copy is refused
    hows = ("unknown field", "snake_case key", "base64 span id", "short trace id",
            "enum as name", "int64 as number", "string as number", "object for a list")
    for i, how in enumerate(hows):
        bad = os.path.join(work, f"bad-{i}.json")
        with open(bad, "w") as f:
            json.dump(corrupt(doc, how), f)
        c = proto_check([bad])
        if c.returncode != 1 or "spans[0]" not in c.stdout and "Span" not in c.stdout:
            fail(f"a copy with a {how} is not refused: exit {c.returncode}, {c.stdout}{c.stderr}")
    print(f"otlp_proto: {nspans} spans of {len(nets)} networks decode as "
          f"ExportTraceServiceRequest; {len(hows)} corrupted copies refused")


def main():
    case = sys.argv[2]
    work = tempfile.mkdtemp(prefix=f"vigil-export-{case}-")
    try:
        {"mailbox": case_mailbox, "three_tier": case_three_tier, "bad": case_bad,
         "three_tier_linked": lambda w: case_three_tier(w, linked=True),
         "formats": case_formats, "otlp": case_otlp,
         "otlp_proto": case_otlp_proto, "sampled": case_sampled}[case](work)
    except (AssertionError, subprocess.TimeoutExpired) as e:
        print(f"FAIL: {e}\n(kept {work})")
        return 1
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
