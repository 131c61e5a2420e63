#!/usr/bin/python3
"""Consistent partial reporting, end to end (docs/consistency.md).

  consistency_test.py fuzz    --bin DIR --fuzz PROGRAM
  consistency_test.py naive   --bin DIR --fuzz PROGRAM
  consistency_test.py example --bin DIR --example PROGRAM

fuzz: for each seed, records tests/consistency/fuzz_main.c twice with `vigil record`:
fully, and under its random reporting schedule (same operations). Both traces must pass
`vigil check` (exit 0), and the partial one must be a projection of the full one: per
thread, every reported event that is not synthesized is in the full stream, in the same
order (event name and payload, entity references as (kind, id, generation), objects by
their slot in the pool, threads by worker); each synthesized enter is, at the next real
event, the full stream's open invocation at its vg_depth. Across threads, events carry
the global operation number `seq`: the merged stream must keep it increasing.
VIGIL_CONSISTENCY_SEEDS: N (seeds 1..N), A..B, or a comma-separated list; seeds that fail
are printed.

naive: the same schedules recorded with VIGIL_CONSISTENCY=off: `vigil check` must find
violations (exit 1), so the checks above can fail.

example: examples/consistency recorded with reporting toggled while it runs: `vigil
check` passes; with VIGIL_CONSISTENCY=off it does not.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_SEEDS = 10
OPS = 140000  # operations per run (about 0.8 events each: some find nothing to do)


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def parse_seeds():
    text = os.environ.get("VIGIL_CONSISTENCY_SEEDS", "").strip()
    if not text:
        return list(range(1, DEFAULT_SEEDS + 1))
    try:
        if ".." in text:
            a, b = text.split("..", 1)
            return list(range(int(a), int(b) + 1))
        if "," in text:
            return [int(x) for x in text.split(",") if x.strip()]
        return list(range(1, int(text) + 1))
    except ValueError:
        fail("VIGIL_CONSISTENCY_SEEDS=%s: expected N, A..B or a comma-separated list" % text)


def threads_for(seed):
    return 2 + seed % 4  # 2..5 workers


def record(args, out, argv, env_extra=None):
    env = dict(os.environ)
    env.pop("VIGIL_CONSISTENCY", None)
    for k in ("VIGIL_REPORT", "VIGIL_REPORT_THREADS", "VIGIL_REPORT_SUSPENDED", "VIGIL_SENSORS"):
        env.pop(k, None)
    env.update(env_extra or {})
    p = subprocess.run([os.path.join(args.bin, "vigil"), "record", "-o", out, "--"] + argv,
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError("vigil record %s: exit %d\n%s%s" % (" ".join(argv), p.returncode,
                                                               p.stdout, p.stderr))


def check(args, trace):
    """Runs vigil check --json; returns (exit status, violations, summary)."""
    p = subprocess.run([os.path.join(args.bin, "vigil"), "check", "--json", "--max", "20", trace],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    violations, summary = [], None
    for line in p.stdout.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if "summary" in obj:
            summary = obj["summary"]
        else:
            violations.append(obj)
    return p.returncode, violations, summary, p.stderr


def read_map(path):
    m = {"threads": {}}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "main":
                m["main"] = int(w[1])
            elif w[0] == "thread":
                m["threads"][int(w[2])] = "w%s" % w[1]
            elif w[0] == "objbase":
                m["objbase"], m["objstride"] = int(w[1]), int(w[2])
            else:
                m[w[0]] = int(w[1])
    m["threads"].setdefault(m["main"], "main")
    return m


class Trace:
    """A trace's events per thread (by worker), normalized for comparison."""

    def __init__(self, args, path, m):
        self.m = m
        self.streams = {}
        self.order = []  # seq of real events in merged (time) order
        self.total = self.synth = 0
        p = subprocess.Popen([os.path.join(args.bin, "vigil"), "dump", "--json", path],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             bufsize=1 << 20)
        pending = {}
        for line in p.stdout:
            ev = json.loads(line)
            who = m["threads"].get(ev["tid"], "tid%s" % ev["tid"])
            name = ev["name"]
            if name == "vg.report.synth":
                pending[who] = True
                continue
            self.total += 1
            synth = pending.pop(who, False)
            self.synth += synth
            fields = ev["fields"]
            key = (name, self.norm(name, fields))
            depth = fields.get("vg_depth")
            self.streams.setdefault(who, []).append((key, synth, depth))
            if not synth and "seq" in fields:
                self.order.append(fields["seq"])
        if p.wait() not in (0,):
            raise RuntimeError("vigil dump %s: exit %d" % (path, p.returncode))
        if pending:
            raise RuntimeError("%s: vg.report.synth not followed by an event in %s" %
                               (path, sorted(pending)))

    def ref(self, r):
        kind, rid = r["kind"], int(r["id"])
        if rid == 0:
            return None
        if kind == "Obj":
            off = rid - self.m["objbase"]
            rid = "slot%d" % (off // self.m["objstride"]) if off >= 0 else rid
        elif kind == "thread":
            rid = self.m["threads"].get(rid, rid)
        return (kind, rid, r["gen"])

    def norm(self, name, fields):
        if name.startswith("vg.process."):
            return ()
        out = []
        for k, v in fields.items():
            if isinstance(v, dict):
                v = self.ref(v)
            elif k == "tid" and name.startswith("vg.thread."):
                v = self.m["threads"].get(v, v)
            out.append((k, v))
        return tuple(out)


def projection(full, part):
    """Returns a list of problems: `part` is not a consistent projection of `full`."""
    problems = []
    for who, pevents in part.streams.items():
        fevents = full.streams.get(who)
        if fevents is None:
            problems.append("%s: stream not in the full trace" % who)
            continue
        j, stack, pending = 0, [], []
        for i, (key, synth, depth) in enumerate(pevents):
            if synth:
                if depth is None:
                    problems.append("%s #%d: synthesized %s is not an enter" % (who, i, key[0]))
                pending.append((i, key, depth))
                continue
            while j < len(fevents) and fevents[j][0] != key:
                apply_stack(stack, fevents[j])
                j += 1
            if j == len(fevents):
                problems.append("%s #%d: %s not in the full stream (in this order)" %
                                (who, i, key))
                break
            for (si, skey, sdepth) in pending:
                if not (1 <= sdepth <= len(stack)) or stack[sdepth - 1] != skey:
                    problems.append("%s #%d: synthesized %s is not the open invocation at "
                                    "depth %s before %s" % (who, si, skey, sdepth, key))
            if pending and depth is not None and depth != pending[-1][2] + 1:
                problems.append("%s #%d: enter at depth %s after synthesized depth %s" %
                                (who, i, depth, pending[-1][2]))
            pending = []
            apply_stack(stack, fevents[j])
            j += 1
        if len(problems) > 20:
            break
    for name, t in (("full", full), ("partial", part)):
        for a, b in zip(t.order, t.order[1:]):
            if b <= a:
                problems.append("%s trace: seq %d after %d in time order" % (name, b, a))
                break
    return problems


def apply_stack(stack, ev):
    key, _, depth = ev
    if depth is not None:
        del stack[depth - 1:]
        stack.append(key)
    elif key[0].endswith(".end") and key[0].startswith("fz.call"):
        if stack:
            stack.pop()


def self_test(full, part):
    """The projection check must see a reordered event, a wrong generation and a wrong
    synthesized depth (otherwise it could not fail)."""
    problems = []
    who = max(part.streams, key=lambda w: len(part.streams[w]))
    s = part.streams[who]
    i = len(s) // 2
    s[i], s[i + 1] = s[i + 1], s[i]
    if s[i][0] != s[i + 1][0] and not projection(full, part):
        problems.append("self test: two events swapped in %s went unnoticed" % who)
    s[i], s[i + 1] = s[i + 1], s[i]
    for k, (key, synth, depth) in enumerate(s):
        if key[0] == "fz.obj.free":
            (fname, (kind, rid, gen)), rest = key[1][0], key[1][1:]
            s[k] = ((key[0], ((fname, (kind, rid, gen + 1)),) + rest), synth, depth)
            if not projection(full, part):
                problems.append("self test: a wrong generation went unnoticed")
            s[k] = (key, synth, depth)
            break
    for w, events in part.streams.items():
        k = next((k for k, e in enumerate(events) if e[1]), None)
        if k is not None:
            key, synth, depth = events[k]
            events[k] = (key, synth, depth + 1)
            if not projection(full, part):
                problems.append("self test: a wrong synthesized depth went unnoticed")
            events[k] = (key, synth, depth)
            break
    return problems


def run_seed(args, tmp, seed):
    """Returns (stats, problems) for one seed."""
    nthreads = threads_for(seed)
    stats = {"seed": seed, "threads": nthreads}
    traces = {}
    for mode in ("full", "partial"):
        out = os.path.join(tmp, "s%d-%s" % (seed, mode))
        mp = out + ".map"
        record(args, out, [args.fuzz, str(seed), mode, str(OPS), str(nthreads), mp])
        traces[mode] = (out, read_map(mp))
    problems = []
    fm, pm = traces["full"][1], traces["partial"][1]
    if fm["events"] != pm["events"] or fm["schedule"] != pm["schedule"]:
        problems.append("the two runs differ: %d/%d events, %d/%d schedule operations" %
                        (fm["events"], pm["events"], fm["schedule"], pm["schedule"]))
    stats["generated"] = fm["events"]
    stats["schedule"] = pm["schedule"]
    for mode in ("full", "partial"):
        rc, viol, summary, err = check(args, traces[mode][0])
        if rc != 0:
            problems.append("vigil check %s: exit %d: %s %s" %
                            (mode, rc, [v.get("message") for v in viol[:5]], err.strip()[-300:]))
    full = Trace(args, traces["full"][0], fm)
    part = Trace(args, traces["partial"][0], pm)
    stats["full"], stats["partial"], stats["synthesized"] = full.total, part.total, part.synth
    problems += projection(full, part)
    if not problems and seed == args.first_seed:
        problems += self_test(full, part)
    if not problems:
        for mode in ("full", "partial"):
            shutil.rmtree(traces[mode][0], ignore_errors=True)
    return stats, problems


def cmd_fuzz(args):
    seeds = parse_seeds()
    args.first_seed = seeds[0]
    start = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="vigil-consistency-")
    failed, totals = [], {"generated": 0, "full": 0, "partial": 0, "synthesized": 0}
    for seed in seeds:
        try:
            stats, problems = run_seed(args, tmp, seed)
        except RuntimeError as e:
            stats, problems = {"seed": seed}, [str(e)]
        for k in totals:
            totals[k] += stats.get(k, 0)
        print("seed %d: %s" % (seed, json.dumps(stats)), flush=True)
        if problems:
            failed.append(seed)
            print("seed %d FAILED (traces kept in %s):" % (seed, tmp))
            for p in problems[:20]:
                print("  " + p)
    elapsed = time.monotonic() - start
    print("consistency.fuzz: %d seeds, %d generated events, %d recorded in full runs, %d in "
          "partial runs (%d synthesized), %.1f s" %
          (len(seeds), totals["generated"], totals["full"], totals["partial"],
           totals["synthesized"], elapsed))
    if failed:
        fail("seeds %s (rerun: VIGIL_CONSISTENCY_SEEDS=%s)" %
             (failed, ",".join(str(s) for s in failed) + ("," if len(failed) == 1 else "")))
    shutil.rmtree(tmp, ignore_errors=True)
    # The test must be able to see something: partial runs leave events out and keep some,
    # and resume inside call stacks.
    if len(seeds) >= 3:
        ratio = totals["partial"] / max(1, totals["full"])
        if not 0.05 < ratio < 0.95:
            fail("partial runs reported %.0f%% of the full runs' events" % (100 * ratio))
        if totals["synthesized"] == 0:
            fail("no synthesized invocation in any partial run")
    if len(seeds) >= DEFAULT_SEEDS and totals["generated"] < 1000000:
        fail("only %d events generated (at least a million expected)" % totals["generated"])
    print("ok")


def cmd_naive(args):
    seeds = parse_seeds()[:3]
    tmp = tempfile.mkdtemp(prefix="vigil-consistency-naive-")
    rules = {}
    for seed in seeds:
        out = os.path.join(tmp, "s%d" % seed)
        record(args, out, [args.fuzz, str(seed), "partial", str(OPS // 4), str(threads_for(seed)),
                           out + ".map"], {"VIGIL_CONSISTENCY": "off"})
        rc, viol, summary, err = check(args, out)
        print("seed %d: vigil check exit %d, %s" % (seed, rc, summary), flush=True)
        if rc != 1:
            fail("seed %d: VIGIL_CONSISTENCY=off gave exit %d, expected 1 (violations); "
                 "traces in %s" % (seed, rc, tmp))
        for r, n in ((summary or {}).get("rules") or {}).items():
            rules[r] = rules.get(r, 0) + n
        # The same schedule with the tracking on is consistent.
        out2 = out + "-on"
        record(args, out2, [args.fuzz, str(seed), "partial", str(OPS // 4),
                            str(threads_for(seed)), out2 + ".map"])
        rc, viol, summary, err = check(args, out2)
        if rc != 0:
            fail("seed %d: the same schedule with the tracking on: exit %d %s" %
                 (seed, rc, [v.get("message") for v in viol[:5]]))
    print("violations per rule without the tracking: %s" % rules)
    missing = [r for r in "12345" if not rules.get(r)]
    if missing:
        fail("no violation of rule(s) %s without the tracking: the schedule is too tame" %
             ",".join(missing))
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


def cmd_example(args):
    # The controller toggles reporting at moments the scheduler decides: a run in which
    # no toggle fell inside an invocation (nothing synthesized) or, naive, produced no
    # violation is possible on a starved machine, so each is tried up to three times.
    tmp = tempfile.mkdtemp(prefix="vigil-consistency-example-")
    argv = [args.example, "--threads", "4", "--rounds", "20000", "--toggles", "40"]
    for attempt in range(3):
        out = os.path.join(tmp, "on%d" % attempt)
        record(args, out, argv)
        rc, viol, summary, err = check(args, out)
        print("tracking on: vigil check exit %d, %s" % (rc, summary), flush=True)
        if rc != 0:
            fail("example with the tracking on: exit %d %s (trace in %s)" %
                 (rc, [v.get("message") for v in viol[:5]], out))
        if summary and summary.get("synthesized"):
            break
    else:
        fail("example: no synthesized invocation in three runs (reporting never resumed "
             "inside a call?)")
    for attempt in range(3):
        out = os.path.join(tmp, "off%d" % attempt)
        record(args, out, argv, {"VIGIL_CONSISTENCY": "off"})
        rc, viol, summary, err = check(args, out)
        print("VIGIL_CONSISTENCY=off: vigil check exit %d, %s" % (rc, summary), flush=True)
        if rc == 1:
            break
        if rc != 0:
            fail("example with VIGIL_CONSISTENCY=off: exit %d (trace in %s)" % (rc, out))
    else:
        fail("example with VIGIL_CONSISTENCY=off: no violation in three runs")
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


def set_timer_slack(ns):
    """The timer slack this process (and so its children) sleep with: the resolution
    a reporting window is measured against (docs/consistency.md "Windows")."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(29, ctypes.c_ulong(ns), 0, 0, 0) != 0:  # PR_SET_TIMERSLACK
        fail("prctl(PR_SET_TIMERSLACK): errno %d" % ctypes.get_errno())


def refused_setting(args, tmp, var, value, says):
    """The fuzz subject recorded with a bad setting var=value: one line on stderr saying
    `says`, the subject unharmed and everything recorded. Returns the line."""
    out = os.path.join(tmp, "bad")
    env = dict(os.environ, **{var: value})
    p = subprocess.run([os.path.join(args.bin, "vigil"), "record", "-q", "-o", out, "--",
                        args.fuzz, "1", "full", "2000", "2", out + ".map"],
                       env=env, capture_output=True, text=True, timeout=120)
    lines = [l for l in p.stderr.splitlines() if var in l]
    if p.returncode != 0 or len(lines) != 1 or says not in lines[0]:
        fail("%s=%s: exit %d, stderr %r" % (var, value, p.returncode, p.stderr))
    rc, viol, summary, err = check(args, out)
    if rc != 0 or summary["events"] < read_map(out + ".map")["events"]:
        fail("%s=%s: not everything recorded: %s" % (var, value, summary))
    shutil.rmtree(out, ignore_errors=True)
    return lines[0]


def cmd_window(args):
    """VIGIL_REPORT_WINDOW=on:1ms,every:3ms: the fuzz subject recorded in full and under
    timer-driven windows (same operations); the windowed trace passes vigil check and is a
    projection of the full one, with events left out and resumes inside call stacks. Bad
    windows: one line on stderr, the subject unharmed and reporting as configured."""
    set_timer_slack(50000)
    seeds = parse_seeds()[:3]
    tmp = tempfile.mkdtemp(prefix="vigil-consistency-window-")
    totals = {"full": 0, "windowed": 0, "synthesized": 0}
    failed = []
    for seed in seeds:
        nthreads = threads_for(seed)
        traces = {}
        for mode, env in (("full", None), ("windowed", {"VIGIL_REPORT_WINDOW": "on:1ms,every:3ms"})):
            out = os.path.join(tmp, "s%d-%s" % (seed, mode))
            mp = out + ".map"
            record(args, out, [args.fuzz, str(seed), "full", str(OPS), str(nthreads), mp], env)
            traces[mode] = (out, read_map(mp))
        problems = []
        for mode in traces:
            rc, viol, summary, err = check(args, traces[mode][0])
            if rc != 0:
                problems.append("vigil check %s: exit %d: %s %s" %
                                (mode, rc, [v.get("message") for v in viol[:5]], err[-300:]))
        full = Trace(args, traces["full"][0], traces["full"][1])
        part = Trace(args, traces["windowed"][0], traces["windowed"][1])
        problems += projection(full, part)
        totals["full"] += full.total
        totals["windowed"] += part.total
        totals["synthesized"] += part.synth
        print("seed %d: %d events in full, %d windowed (%d synthesized)" %
              (seed, full.total, part.total, part.synth), flush=True)
        if problems:
            failed.append(seed)
            print("seed %d FAILED (traces kept in %s):" % (seed, tmp))
            for p in problems[:20]:
                print("  " + p)
    if failed:
        fail("windowed seeds %s" % failed)
    if not 0 < totals["windowed"] < totals["full"]:
        fail("the windows reported %d of %d events" % (totals["windowed"], totals["full"]))
    if totals["synthesized"] == 0:
        fail("no window opened inside a call stack (no synthesized invocation)")
    # Bad windows: one line each, the subject runs and reports everything.
    for value, says in (("on:10us,every:1s", "shorter than the clock's resolution here (50000 ns"),
                        ("on:2s,every:1s", "must be shorter than its period"),
                        ("on:5ms", "expected on:DURATION,every:DURATION"),
                        ("on:5ms,every:1parsec", "expected on:DURATION,every:DURATION")):
        line = refused_setting(args, tmp, "VIGIL_REPORT_WINDOW", value, says)
        print("ok  VIGIL_REPORT_WINDOW=%s: %s" % (value, line))
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


# The fuzz subject's sensors by kind (docs/consistency.md "Kinds"); lifetimes have none.
KIND_SENSORS = {
    "types": set(),  # the subject loads its types through vg.entity.load (below)
    "objects": {"fz.ref", "fz.touch"},
    "execution": {"fz.call.begin", "fz.call.end", "fz.thread.stop", "fz.thread.go"},
    "synchronization": {"fz.lock.acquire", "fz.lock.release", "fz.lock.wait", "fz.lock.got"},
}
LIFETIMES = {"fz.obj.new", "fz.obj.free"}


def names(args, trace):
    d = subprocess.run([os.path.join(args.bin, "vigil"), "dump", "--json", trace],
                       capture_output=True, text=True, timeout=300)
    c = {}
    for line in d.stdout.splitlines():
        if line.startswith("{"):
            n = json.loads(line).get("name")
            c[n] = c.get(n, 0) + 1
    return c


def cmd_kinds(args):
    """VIGIL_REPORT with one of the patent's four kinds: the fuzz subject recorded in full
    and with each kind alone (same operations); each trace passes vigil check, is a
    projection of the full one, and holds that kind's events and the lifetimes only."""
    seed, nthreads = 2, threads_for(2)
    tmp = tempfile.mkdtemp(prefix="vigil-consistency-kinds-")
    traces = {}
    for kind in ["full"] + list(KIND_SENSORS):
        out = os.path.join(tmp, kind)
        mp = out + ".map"
        env = None if kind == "full" else {"VIGIL_REPORT": kind}
        record(args, out, [args.fuzz, str(seed), "full", str(OPS // 4), str(nthreads), mp],
               env)
        traces[kind] = (out, read_map(mp))
    full = Trace(args, traces["full"][0], traces["full"][1])
    full_names = names(args, traces["full"][0])
    problems = []
    for kind, own in KIND_SENSORS.items():
        rc, viol, summary, err = check(args, traces[kind][0])
        if rc != 0:
            problems.append("%s: vigil check exit %d: %s %s" %
                            (kind, rc, [v.get("message") for v in viol[:5]], err[-300:]))
        part = Trace(args, traces[kind][0], traces[kind][1])
        problems += ["%s: %s" % (kind, p) for p in projection(full, part)[:10]]
        got = names(args, traces[kind][0])
        fz = {n for n in got if n.startswith("fz.")}
        others = fz - own - LIFETIMES
        if others:
            problems.append("%s: events of other kinds reported: %s" % (kind, sorted(others)))
        if own and not fz & own:
            problems.append("%s: none of its events reported" % kind)
        loads = got.get("vg.entity.load", 0)
        if (kind == "types") != (loads > 0) or (kind == "types" and
                                                loads != full_names.get("vg.entity.load")):
            problems.append("%s: %d loads reported of %d" %
                            (kind, loads, full_names.get("vg.entity.load", 0)))
        print("%s: %d events (%s)" % (kind, part.total,
                                      ", ".join("%s %d" % (n, got[n]) for n in sorted(fz))),
              flush=True)
    if problems:
        print("traces kept in %s" % tmp)
        fail("; ".join(problems[:20]))
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


# Several listeners (docs/consistency.md "Several listeners"): each VIGIL_LISTENERS filter
# and the environment that gives a single recording the same filter alone.
LISTENERS = [
    ("sync", "synchronization", {"VIGIL_REPORT": "synchronization"}),
    ("threads", "all threads=fz-1,fz-2", {"VIGIL_REPORT_THREADS": "fz-1,fz-2"}),
    ("sensors", "entity,activity sensors=fz.call.*,fz.obj.*",
     {"VIGIL_SENSORS": "fz.call.*,fz.obj.*"}),
    ("kinds", "execution,objects threads=-fz-0", {"VIGIL_REPORT": "execution,objects",
                                                  "VIGIL_REPORT_THREADS": "-fz-0"}),
]
# Runs of several listeners at once: the main output's own filter, then the listeners.
LISTENER_RUNS = [
    ({"VIGIL_REPORT": "objects"}, ["sync", "threads"]),     # three listeners
    ({}, ["sensors"]),                                        # two
    ({"VIGIL_REPORT_THREADS": "fz-0"}, ["kinds", "sync", "sensors"]),  # four
]


def listener_traces(args, tmp, seed, nthreads, ops):
    """Records the runs of LISTENER_RUNS; returns {name: (listener's dir, map)} and
    {name: env alone} (the main outputs are named main0, main1...)."""
    argv_for = lambda mp: [args.fuzz, str(seed), "full", str(ops), str(nthreads), mp]
    got, alone = {}, {}
    for r, (main_env, names) in enumerate(LISTENER_RUNS):
        out = os.path.join(tmp, "s%d-run%d" % (seed, r))
        spec = ";".join("%s-%s=%s" % (out, n, dict((a, b) for a, b, _ in LISTENERS)[n])
                        for n in names)
        env = dict(main_env, VIGIL_LISTENERS=spec)
        record(args, out, argv_for(out + ".map"), env)
        m = read_map(out + ".map")
        got["main%d" % r] = (out, m)
        alone["main%d" % r] = main_env
        for n in names:
            got["%s@%d" % (n, r)] = (out + "-" + n, m)
            alone["%s@%d" % (n, r)] = dict((a, c) for a, _, c in LISTENERS)[n]
    return got, alone


def cmd_listeners(args):
    """Several listeners with different filters on the fuzz subject (threads, objects,
    locks, invocations): each listener's directory passes vigil check and holds, per
    thread, exactly the events a single recording with that filter alone holds."""
    seeds = parse_seeds()[:3]
    tmp = tempfile.mkdtemp(prefix="vigil-consistency-listeners-")
    problems, totals = [], {}
    for seed in seeds:
        nthreads = max(3, threads_for(seed))
        ops = OPS // 4
        got, alone_env = listener_traces(args, tmp, seed, nthreads, ops)
        alone_cache = {}
        for name, (trace, m) in sorted(got.items()):
            rc, viol, summary, err = check(args, trace)
            if rc != 0:
                problems.append("seed %d %s: vigil check exit %d: %s %s" %
                                (seed, name, rc, [v.get("message") for v in viol[:5]],
                                 err[-300:]))
                continue
            key = json.dumps(alone_env[name], sort_keys=True)
            if key not in alone_cache:
                out = os.path.join(tmp, "s%d-alone%d" % (seed, len(alone_cache)))
                record(args, out, [args.fuzz, str(seed), "full", str(ops), str(nthreads),
                                   out + ".map"], alone_env[name])
                alone_cache[key] = Trace(args, out, read_map(out + ".map"))
            single = alone_cache[key]
            mine = Trace(args, trace, m)
            totals[name.split("@")[0]] = totals.get(name.split("@")[0], 0) + mine.total
            if mine.total == 0:
                problems.append("seed %d %s: nothing recorded" % (seed, name))
            for who in sorted(set(mine.streams) | set(single.streams)):
                a, b = mine.streams.get(who, []), single.streams.get(who, [])
                if a != b:
                    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y),
                             min(len(a), len(b)))
                    problems.append("seed %d %s, thread %s: %d events, %d alone; first "
                                    "difference at #%d: %s / %s" %
                                    (seed, name, who, len(a), len(b), i,
                                     a[i] if i < len(a) else None, b[i] if i < len(b) else None))
                    break
        print("seed %d: %s" % (seed, json.dumps(totals)), flush=True)
    if problems:
        print("traces kept in %s" % tmp)
        fail("; ".join(problems[:10]))
    # The filters must differ: a listener holding what another holds tests nothing.
    if len(set(totals.values())) < len(totals) - 1:
        fail("listeners recorded the same amounts: %s" % totals)
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


def cmd_listeners_bad(args):
    """Bad VIGIL_LISTENERS: one line on stderr, the subject runs and its main output
    records everything, no listener directory is written."""
    tmp = tempfile.mkdtemp(prefix="vigil-consistency-listeners-bad-")
    blocker = os.path.join(tmp, "a-file")
    with open(blocker, "w") as f:
        f.write("not a directory\n")
    l1 = os.path.join(tmp, "l1")
    cases = [
        ("%s=synchronization bogus" % l1, "listener 1: 'bogus': expected a list of entity"),
        ("%s" % l1, "expected DIR=FILTER"),
        ("%s=threads=fz-1;=all" % l1, "listener 2: '=all': expected DIR=FILTER"),
        (";".join("%s-%d=all" % (l1, i) for i in range(8)),
         "more than 8 listeners (the main output is one)"),
        ("%s=all;%s/sub=all" % (l1, blocker), "listener 2: cannot create directory %s/sub: "
         "Not a directory" % blocker),
    ]
    for value, says in cases:
        line = refused_setting(args, tmp, "VIGIL_LISTENERS", value, says)
        if "no listeners, recording as configured" not in line:
            fail("VIGIL_LISTENERS=%s: %r" % (value, line))
        written = [d for d in os.listdir(tmp) if d.startswith("l1")]
        for d in written:
            if any(os.scandir(os.path.join(tmp, d))):
                fail("VIGIL_LISTENERS=%s: %s written" % (value, d))
            os.rmdir(os.path.join(tmp, d))
        print("ok  VIGIL_LISTENERS=%s: %s" % (value[:60], line[:200]))
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


def dump_events(args, trace):
    d = subprocess.run([os.path.join(args.bin, "vigil"), "dump", "--json", trace],
                       capture_output=True, text=True, timeout=300)
    if d.returncode != 0:
        fail("vigil dump %s: exit %d: %s" % (trace, d.returncode, d.stderr[-300:]))
    return [json.loads(l) for l in d.stdout.splitlines() if l.startswith("{")]


def cmd_listeners_redis(args):
    """An unmodified Debian redis-server (and its clients) under the preload runtime with
    three listeners: each listener's directory passes vigil check, holds only what its
    filter allows and nothing the main output (everything) did not record."""
    server, bench, cli = (shutil.which(p) for p in ("redis-server", "redis-benchmark",
                                                    "redis-cli"))
    if not (server and bench and cli):
        fail("redis-server and redis-tools are not installed (scripts/install-deps.sh)")
    import socket
    with socket.socket() as s_:
        s_.bind(("127.0.0.1", 0))
        port = s_.getsockname()[1]
    tmp = tempfile.mkdtemp(prefix="vigil-consistency-listeners-redis-")
    script = f"""
{server} --port {port} --bind 127.0.0.1 --save '' --appendonly no --logfile '' \
    --loglevel warning --dir {tmp} &
for i in $(seq 1200); do {cli} -p {port} ping >/dev/null 2>&1 && break; sleep 0.05; done
{bench} -p {port} -n 400 -c 4 -t set,get,lpush,lpop -q >/dev/null; rc=$?
{cli} -p {port} shutdown nosave >/dev/null
wait
exit $rc
"""
    out = os.path.join(tmp, "main")
    lst = {"life": "entity", "net": "activity sensors=vg.net.*",
           "noserver": "all threads=-redis-server"}
    env = {"VIGIL_LISTENERS": ";".join("%s-%s=%s" % (out, k, v) for k, v in lst.items())}
    record(args, out, ["sh", "-c", script], env)
    main = dump_events(args, out)
    key = lambda e: (e["pid"], e["tid"], e["ts"], e["name"])
    everything = {key(e) for e in main}
    lifetimes = ("vg.process.begin", "vg.process.end", "vg.process.name", "vg.thread.begin",
                 "vg.thread.name", "vg.thread.end", "vg.entity.")
    for k in lst:
        trace = out + "-" + k
        rc, viol, summary, err = check(args, trace)
        if rc != 0:
            fail("%s: vigil check exit %d: %s %s" % (k, rc, [v.get("message") for v in viol[:5]],
                                                     err[-300:]))
        evs = dump_events(args, trace)
        names = {e["name"] for e in evs}
        if not evs:
            fail("%s: nothing recorded" % k)
        extra = [e for e in evs if key(e) not in everything]
        if extra:
            fail("%s: %d events the main output does not have: %s" % (k, len(extra), extra[:3]))
        if k == "life" and any(not n.startswith(lifetimes) for n in names):
            fail("life: events that are no lifetimes: %s" % sorted(names))
        # (built-in activities stay unless excluded by name, as with VIGIL_SENSORS)
        if k == "net" and (any(not n.startswith(("vg.net.", "vg.process.exec")) for n in names) or
                           "vg.net.send" not in names):
            fail("net: %s" % sorted(names))
        if k == "noserver":  # the server's main thread is left out, its clients are not
            srv = {e["tid"] for e in main if e["proc"].startswith("redis-server") and
                   e["tid"] == e["pid"] and e["name"].startswith("vg.net.")}
            if not srv:
                fail("no network event of redis-server's main thread in the main output")
            if any(e["tid"] in srv and e["name"].startswith("vg.net.") for e in evs):
                fail("noserver: network events of redis-server's main thread")
            if "vg.net.send" not in names:
                fail("noserver: no network events")
        print("ok  %s (%s): %d events of %d, %s" % (k, lst[k], len(evs), len(main),
                                                    ", ".join(sorted(names))[:150]), flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["fuzz", "naive", "example", "window", "kinds", "listeners",
                                     "listeners-bad", "listeners-redis"])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--fuzz")
    ap.add_argument("--example")
    args = ap.parse_args()
    if args.what not in ("example",) and not args.fuzz:
        fail("--fuzz PROGRAM is needed")
    if args.what == "example" and not args.example:
        fail("--example PROGRAM is needed")
    {"fuzz": cmd_fuzz, "naive": cmd_naive, "example": cmd_example,
     "window": cmd_window, "kinds": cmd_kinds, "listeners": cmd_listeners,
     "listeners-bad": cmd_listeners_bad, "listeners-redis": cmd_listeners_redis}[args.what](args)


if __name__ == "__main__":
    main()
