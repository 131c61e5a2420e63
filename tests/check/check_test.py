#!/usr/bin/python3
"""vigil check on traces with known violations (tests/check/check_mktrace.c).

  rules   each rule's scenario: exactly the expected (position, rule) pairs, in text and
          JSON, with the summary's counts; a consistent trace exits 0; a damaged one 3
  cli     --help, bad input (not a trace, a file, a missing path, bad options) gives one
          line and exit 2; --max and --quiet
  record  tests/check/check_subject.c recorded with VIGIL_CONSISTENCY=off breaks each rule
          once (at the documented events); with consistency on, no violation
  deadlocks  --deadlocks on tests/check/deadlock_subject.c: two threads that really
          deadlock on two mutexes (killed once both wait) give one standing cycle naming
          both threads, both locks and their wait times (text, --json, and --svg parsed
          as XML: four nodes, four red edges; --at just before it formed: no cycle); the
          same threads taking the mutexes in one order give none; a release made while
          reporting was suspended gives no false cycle, and the same run with naive
          filtering (VIGIL_CONSISTENCY=off, the negative control) does
  waitfor the WaitFor relation (docs/query.md) of recordings of the same subject, through
          TQuel queries, equals the wait-for edges computed here from the trace's own
          lock events (vigil dump --json): contention without a cycle, the deadlock
          (two edges still open at the end), and a query filtering on a lock and thread
  random  a random consistent workload of a million events with injected violations
          (fixed seeds and one fresh seed, printed; VIGIL_SEED=N reruns it), every kind
          of violation of every rule injected several times
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from vigil_testlib import record_deadlock  # noqa: E402

LINE = re.compile(r"^(\S+@\d+) t=(\d+\.\d{9}): rule ([1-5]): (.+)$")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


class Test:
    def __init__(self, a):
        self.vigil = os.path.join(a.bin, "vigil")
        self.mktrace = a.mktrace
        self.subject = a.subject
        self.tmp = tempfile.mkdtemp(prefix="vigil-check-")
        self.failures = 0
        self.injected = {}

    def fail(self, what):
        print("FAIL:", what)
        self.failures += 1

    def expect(self, cond, what):
        if not cond:
            self.fail(what)
        return cond

    def make(self, scenario, *args):
        self.n = getattr(self, "n", 0) + 1
        d = os.path.join(self.tmp, "%s-%d" % (scenario, self.n))
        p = run([self.mktrace, d, scenario] + [str(a) for a in args])
        if p.returncode:
            sys.exit("check_mktrace %s failed: %s" % (scenario, p.stderr))
        exp, synth, summary = set(), set(), {}
        for line in p.stdout.splitlines():
            w = line.split()
            if w[0] == "expect":
                exp.add((w[1], int(w[2])))
                if len(w) > 3 and w[3] == "synth":
                    synth.add(w[1])
            elif w[0] == "summary":
                summary[w[1]] = int(w[2])
            elif w[0] == "inject":
                self.injected[w[1]] = self.injected.get(w[1], 0) + 1
        return d, exp, synth, summary

    def check_json(self, name, trace, exp, synth, summary, code):
        p = run([self.vigil, "check", "--json", "--max", "0", trace])
        self.expect(p.returncode == code, "%s: --json exit %d, want %d: %s" %
                    (name, p.returncode, code, p.stderr))
        got, got_synth, summ = set(), set(), None
        for line in p.stdout.splitlines():
            o = json.loads(line)
            if "summary" in o:
                summ = o["summary"]
                continue
            pos = "%s@%d" % (o["file"], o["offset"])
            got.add((pos, o["rule"]))
            if o["synthesized"]:
                got_synth.add(pos)
            self.expect(o["message"] and o["event"] and isinstance(o["entities"], list) and
                        o["entities"], "%s: JSON violation incomplete: %s" % (name, line))
            self.expect(isinstance(o["ts"], int) and o["ts"] > 1700000000 * 10**9 and
                        0 <= o["t"] < 10, "%s: JSON times: %s" % (name, line))
        self.expect(got == exp, "%s: violations\n  missing %s\n  unexpected %s" %
                    (name, sorted(exp - got), sorted(got - exp)))
        self.expect(got_synth == synth, "%s: synthesized %s, want %s" %
                    (name, sorted(got_synth), sorted(synth)))
        if not self.expect(summ is not None, "%s: no JSON summary" % name):
            return
        rules = {"rule%s" % k: v for k, v in summ["rules"].items()}
        for k, v in summary.items():
            have = rules[k] if k in rules else summ.get(k)
            self.expect(have == v, "%s: summary %s = %s, want %s" % (name, k, have, v))
        self.expect(summ["violations"] == len(exp), "%s: summary violations %s, want %d" %
                    (name, summ["violations"], len(exp)))
        return summ

    def check_text(self, name, trace, exp, code):
        p = run([self.vigil, "check", "--max", "0", trace])
        self.expect(p.returncode == code, "%s: exit %d, want %d: %s" %
                    (name, p.returncode, code, p.stderr))
        got = set()
        for line in p.stdout.splitlines():
            m = LINE.match(line)
            if self.expect(m, "%s: line not in the documented form: %r" % (name, line)):
                got.add((m.group(1), int(m.group(3))))
        self.expect(got == exp, "%s: text violations differ from the expected" % name)
        self.expect(re.search(r"vigil check: \d+ events", p.stderr),
                    "%s: no summary on stderr: %r" % (name, p.stderr))
        return p

    def rules(self):
        d, exp, synth, summary = self.make("consistent")
        self.expect(not exp, "consistent scenario expects nothing")
        self.check_json("consistent", d, exp, synth, summary, 0)
        p = self.check_text("consistent", d, exp, 0)
        self.expect(p.stdout == "" and "no violation" in p.stderr,
                    "consistent: output %r %r" % (p.stdout, p.stderr))
        for r in range(1, 6):
            name = "rule%d" % r
            d, exp, synth, summary = self.make(name)
            self.expect(exp and all(rule == r for _, rule in exp), name + ": scenario")
            self.check_json(name, d, exp, synth, summary, 1)
            self.check_text(name, d, exp, 1)
        # Damage: reported as the reader does (file: byte N: ...), exit 3 without violations.
        d, exp, synth, summary = self.make("damaged")
        self.check_json("damaged", d, exp, synth, summary, 3)
        p = self.check_text("damaged", d, exp, 3)
        self.expect(re.search(r"stream-43-0: byte \d+: bad packet magic", p.stderr) and
                    "unknown op 'frobnicate'" in p.stderr,
                    "damaged: damage not reported: %r" % p.stderr)
        # Several paths: their images are merged, as by every vigil command.
        d, exp, synth, summary = self.make("rule3")
        p = run([self.vigil, "check", "--json", "--max", "0", os.path.join(d, "srv-7-0"),
                 os.path.join(d, "app-42-0")])
        got = {("%s@%d" % (o["file"], o["offset"]), o["rule"])
               for o in map(json.loads, p.stdout.splitlines()) if "summary" not in o}
        self.expect(p.returncode == 1 and got == exp, "two paths: %s" % sorted(got))

    def cli(self):
        p = run([self.vigil, "check", "--help"])
        self.expect(p.returncode == 0 and "examples:" in p.stdout and "exit status" in p.stdout,
                    "--help")
        p = run([self.vigil, "--help"])
        self.expect("check" in p.stdout, "vigil --help lists check")
        empty = os.path.join(self.tmp, "empty")
        os.mkdir(empty)
        afile = os.path.join(self.tmp, "afile")
        with open(afile, "w") as f:
            f.write("not a trace\n")
        notrace = os.path.join(self.tmp, "notrace")
        os.mkdir(notrace)
        os.mkdir(os.path.join(notrace, "img"))
        with open(os.path.join(notrace, "img", "metadata"), "w") as f:
            f.write("garbage\n")
        for what, args in (("empty directory", [empty]), ("a file", [afile]),
                           ("missing path", [os.path.join(self.tmp, "nope")]),
                           ("unreadable metadata", [notrace]), ("no trace", []),
                           ("bad option", ["--frob", empty]), ("bad --max", ["--max", "x", empty]),
                           ("--max without value", ["--max"]),
                           ("--svg without --deadlocks", ["--svg", os.path.join(self.tmp, "x.svg"), empty]),
                           ("bad --at", ["--deadlocks", "--at", "soon", empty])):
            p = run([self.vigil, "check"] + args)
            lines = [l for l in p.stderr.splitlines() if l.startswith("vigil check:")]
            self.expect(p.returncode == 2 and len(lines) == 1 and p.stdout == "",
                        "%s: exit %d, stderr %r" % (what, p.returncode, p.stderr))
        for what, args, name in (("file", [afile], "afile"), ("missing", [empty + "x"], "emptyx"),
                                 ("empty", [empty], "empty")):
            p = run([self.vigil, "check"] + args)
            self.expect(name in p.stderr, "%s: the error names the path: %r" % (what, p.stderr))
        d, exp, _, _ = self.make("rule1")
        p = run([self.vigil, "check", "--max", "3", d])
        lines = p.stdout.splitlines()
        self.expect(p.returncode == 1 and len(lines) == 4 and
                    lines[3] == "... %d more violations not shown (--max 0 shows all)" %
                    (len(exp) - 3), "--max 3: %r" % lines)
        p = run([self.vigil, "check", "-q", d])
        self.expect(p.returncode == 1 and p.stdout == "" and
                    "%d violations" % len(exp) in p.stderr, "-q: %r %r" % (p.stdout, p.stderr))
        p = run([self.vigil, "check", "--json", "--max", "2", d])
        objs = [json.loads(l) for l in p.stdout.splitlines()]
        self.expect(len(objs) == 3 and objs[-1]["summary"]["violations"] == len(exp) and
                    objs[-1]["summary"]["printed"] == 2, "--json --max 2")

    def record(self):
        want = [(1, "obj.free"), (2, "obj.use"), (3, "obj.new"), (4, "call.enter"),
                (5, "lock.release")]
        for mode in ("off", "on"):
            out = os.path.join(self.tmp, "rec-" + mode)
            env = dict(os.environ, VIGIL_OUT=out, VIGIL_CONSISTENCY=mode)
            p = run([self.subject], env=env)
            if not self.expect(p.returncode == 0 and p.stdout == "done\n",
                               "subject (%s): %d %r" % (mode, p.returncode, p.stderr)):
                continue
            p = run([self.vigil, "check", "--json", "--max", "0", out])
            objs = [json.loads(l) for l in p.stdout.splitlines()]
            got = [(o["rule"], o["event"]) for o in objs if "summary" not in o]
            summ = objs[-1]["summary"] if objs and "summary" in objs[-1] else {}
            if mode == "off":
                self.expect(p.returncode == 1 and got == want,
                            "naive reporting: %s (exit %d), want %s\n%s" %
                            (got, p.returncode, want, p.stdout))
            else:
                self.expect(p.returncode == 0 and not got and summ.get("synthesized", 0) >= 1,
                            "consistent reporting: exit %d, %s, summary %s\n%s" %
                            (p.returncode, got, summ, p.stderr))

    def deadlocks(self):
        # The deadlocking subject, killed once both threads' second waits are reported.
        out = os.path.join(self.tmp, "deadlock")
        tids = self.record_deadlock(out)
        if not tids:
            return
        r = run([self.vigil, "check", "--deadlocks", out])
        lines = r.stdout.splitlines()
        self.expect(r.returncode == 1 and len(lines) == 1, "deadlock: exit %d, %r\n%s" %
                    (r.returncode, r.stdout, r.stderr))
        if lines:
            m = re.match(r"^deadlock t=(\d+\.\d{9}) \(standing at the end of the trace\): "
                         r"thread (\d+)(?: '[^']*')? gen \d+ waits for Lock 0x(\d+) '(m\d)' gen \d+ "
                         r"\(since t=\d+\.\d{9}\) held by thread (\d+)(?: '[^']*')? gen \d+; "
                         r"thread (\d+)(?: '[^']*')? gen \d+ waits for Lock 0x(\d+) '(m\d)' gen \d+ "
                         r"\(since t=\d+\.\d{9}\) held by thread (\d+)(?: '[^']*')? gen \d+$", lines[0])
            if self.expect(m, "deadlock line: %r" % lines[0]):
                a, lock_a, name_a, b, b2, lock_b, name_b, a2 = m.groups()[1:]
                self.expect(sorted([a, b]) == sorted(tids) and a2 == a and b2 == b and a != b,
                            "deadlock threads %s, the subject's %s" % (m.groups(), tids))
                self.expect({name_a, name_b} == {"m0", "m1"} and lock_a != lock_b,
                            "deadlock locks %s" % (m.groups(),))
        self.deadlock_json(out, tids)
        self.deadlock_svg(out, tids)
        # Without --deadlocks the same trace is consistent: an open wait is no violation.
        r = run([self.vigil, "check", out])
        self.expect(r.returncode in (0, 3) and not r.stdout, "plain check of the deadlock "
                    "trace: exit %d %r %s" % (r.returncode, r.stdout, r.stderr))
        # The same two threads taking the mutexes in one order: contention, no cycle.
        out = os.path.join(self.tmp, "ordered")
        p = run([self.subject, "ordered"], env=dict(os.environ, VIGIL_OUT=out), timeout=120)
        if self.expect(p.returncode == 0 and p.stdout == "done\n",
                       "ordered subject: %d %r" % (p.returncode, p.stderr)):
            r = run([self.vigil, "check", "--deadlocks", out])
            self.expect(r.returncode == 0 and not r.stdout and "0 wait-for cycles" in r.stderr,
                        "ordered: exit %d %r %s" % (r.returncode, r.stdout, r.stderr))
            svg = self.svg(out, "ordered.svg", [])
            self.expect(svg is not None and svg.get("data-cycles") == "0" and
                        not self.svg_nodes(svg), "ordered: the graph at the end is empty")
        self.partial()

    def partial(self):
        """A release dlw-0 made while its reporting was suspended (or while the thread
        filter left it out): consistent reporting
        still reports it (its acquire was), so no cycle; naive filtering
        (VIGIL_CONSISTENCY=off, the negative control) loses it, and the graph then shows
        a cycle that never was: dlw-1 waiting for m0, which dlw-0 no longer held."""
        for mode, how in (("on", []), ("off", []), ("on", ["filter"]), ("off", ["filter"])):
            out = os.path.join(self.tmp, "partial-%s%s" % (mode, "-filter" if how else ""))
            p = run([self.subject, "partial"] + how, timeout=120,
                    env=dict(os.environ, VIGIL_OUT=out, VIGIL_CONSISTENCY=mode))
            if not self.expect(p.returncode == 0 and p.stdout == "done\n",
                               "partial subject (%s %s): %d %r" %
                               (mode, how, p.returncode, p.stderr)):
                continue
            r = run([self.vigil, "check", "--deadlocks", "--json", out])
            cycles = [json.loads(l)["cycle"] for l in r.stdout.splitlines()
                      if "cycle" in json.loads(l)]
            if mode == "on":
                self.expect(r.returncode == 0 and not cycles,
                            "partial reporting: a false cycle %s (exit %d) %s" %
                            (cycles, r.returncode, r.stderr))
                continue
            ok = (r.returncode == 1 and len(cycles) == 1 and not cycles[0]["standing"] and
                  {s["thread"]["name"] for s in cycles[0]["steps"]} == {"dlw-0", "dlw-1"} and
                  {s["lock"]["name"] for s in cycles[0]["steps"]} == {"m0", "m1"})
            self.expect(ok, "negative control: naive filtering should show the false cycle "
                        "dlw-0/dlw-1 over m0/m1, got %s (exit %d)" % (cycles, r.returncode))

    def deadlock_json(self, out, tids):
        r = run([self.vigil, "check", "--deadlocks", "--format", "json", out])
        objs = [json.loads(l) for l in r.stdout.splitlines()]
        cycles = [o["cycle"] for o in objs if "cycle" in o]
        summ = [o["summary"] for o in objs if "summary" in o]
        if not self.expect(r.returncode == 1 and len(cycles) == 1 and len(summ) == 1 and
                           summ[0]["cycles"] == 1, "--json: %r" % r.stdout):
            return
        c = cycles[0]
        steps = c["steps"]
        self.expect(c["kind"] == "deadlock" and c["standing"] and len(steps) == 2 and
                    isinstance(c["ts"], int) and c["t"] >= 0, "--json cycle %s" % c)
        self.expect(sorted(str(s["thread"]["id"]) for s in steps) == sorted(tids) and
                    {s["thread"]["name"] for s in steps} == {"dlw-0", "dlw-1"} and
                    all(s["thread"]["kind"] == "thread" for s in steps),
                    "--json threads %s, the subject's %s" % (steps, tids))
        self.expect({(s["lock"]["kind"], s["lock"]["name"]) for s in steps} ==
                    {("Lock", "m0"), ("Lock", "m1")}, "--json locks %s" % steps)
        # Each step's holder is the next step's thread; each waits since before it formed.
        for i, s in enumerate(steps):
            self.expect(s["holder"] == steps[(i + 1) % 2]["thread"] and
                        s["since_ts"] <= c["ts"], "--json step %d: %s" % (i, s))
        self.cycle_ts = c["ts"]

    def svg(self, trace, name, extra):
        path = os.path.join(self.tmp, name)
        r = run([self.vigil, "check", "--deadlocks", "--svg", path] + extra + [trace])
        if not self.expect(r.returncode in (0, 1) and os.path.exists(path),
                           "--svg %s: exit %d %s" % (extra, r.returncode, r.stderr)):
            return None
        import xml.etree.ElementTree as ET
        try:
            return ET.parse(path).getroot()
        except ET.ParseError as e:
            self.fail("%s: not well-formed XML: %s" % (name, e))
            return None

    @staticmethod
    def svg_nodes(root):
        ns = "{http://www.w3.org/2000/svg}"
        return [g for g in root.iter(ns + "g")
                if g.get("class", "").split()[:1] in (["thread"], ["lock"])]

    @staticmethod
    def svg_edges(root):
        ns = "{http://www.w3.org/2000/svg}"
        return [g for g in root.iter(ns + "g")
                if g.get("class", "").split()[:1] in (["wait"], ["hold"])]

    def deadlock_svg(self, out, tids):
        root = self.svg(out, "deadlock.svg", [])
        if root is None:
            return
        nodes = {g.get("id"): g for g in self.svg_nodes(root)}
        threads = {g.get("data-id") for g in nodes.values() if g.get("class").startswith("thread")}
        locks = {g.get("data-name") for g in nodes.values() if g.get("class").startswith("lock")}
        self.expect(root.get("data-cycles") == "1" and threads == set(tids) and
                    locks == {"m0", "m1"} and len(nodes) == 4 and
                    all("cycle" in g.get("class") for g in nodes.values()),
                    "deadlock.svg nodes: %s" % [(g.get("class"), g.get("data-name"))
                                                for g in nodes.values()])
        edges = self.svg_edges(root)
        kinds = sorted(g.get("class") for g in edges)
        self.expect(kinds == ["hold cycle", "hold cycle", "wait cycle", "wait cycle"],
                    "deadlock.svg edges: %s" % kinds)
        # Edges join a thread and a lock: waits thread -> lock, holds lock -> thread, each
        # labelled with its time.
        for g in edges:
            a, b = nodes.get(g.get("data-from")), nodes.get(g.get("data-to"))
            wait = g.get("class").startswith("wait")
            self.expect(a is not None and b is not None and
                        a.get("class").startswith("thread" if wait else "lock") and
                        b.get("class").startswith("lock" if wait else "thread") and
                        re.search(r"(waits|held) since t=\d", "".join(g.itertext())),
                        "deadlock.svg edge %s" % g.attrib)
        # Just before the cycle formed: no cycle, nothing red.
        if not getattr(self, "cycle_ts", None):
            return
        d = run([self.vigil, "dump", "--json", out])
        first = min(json.loads(l)["ts"] for l in d.stdout.splitlines())
        at = "%dns" % (self.cycle_ts - first - 1)
        root = self.svg(out, "before.svg", ["--at", at])
        r = run([self.vigil, "check", "--deadlocks", "--at", at, out])
        self.expect(root is not None and root.get("data-cycles") == "0" and
                    self.svg_nodes(root) and
                    not any("cycle" in g.get("class") for g in root.iter()
                            if g.get("class")) and r.returncode == 0 and not r.stdout,
                    "before the cycle (--at %s): %s %r" % (at, root is not None and
                                                          root.attrib, r.stdout))

    def record_deadlock(self, out):
        """Runs the deadlocking subject into `out`, kills it once both waits are reported;
        returns the two thread ids, or None."""
        tids, why = record_deadlock(self.subject, out, timeout=60)
        self.expect(tids is not None, why)
        return tids

    @staticmethod
    def expected_edges(events):
        """The wait-for edges of a trace's lock events (op from the sensor names of
        tests/check/deadlock_subject.c), as (from, to, waiter, holder, lock) with thread
        names; edges still open end at the last event. Edges of no duration are none."""
        op = {"lock.wait": "wait", "lock.got": "got", "lock.acquire": "acq",
              "lock.release": "rel"}
        names, holds, waits, open_, done = {}, {}, {}, {}, []
        last = max(e["ts"] for e in events)

        def close(key, ts):
            start = open_.pop(key)
            if ts > start:
                done.append((start, ts) + key)

        for e in events:
            if e["name"] in ("vg.thread.begin", "vg.thread.name"):
                names[e["fields"]["tid"]] = e["fields"]["name"]
            if e["name"] not in op:
                continue
            t, lock, ts = e["tid"], e["fields"]["l"]["name"], e["ts"]
            k = op[e["name"]]
            holders = holds.setdefault(lock, {})
            if k == "wait":
                waits[t] = lock
                for h in holders:
                    if h != t:
                        open_[(t, h, lock)] = ts
            elif k == "got":
                waits.pop(t, None)
                for key in [key for key in open_ if key[0] == t and key[2] == lock]:
                    close(key, ts)
            elif k == "acq":
                holders[t] = holders.get(t, 0) + 1
                if holders[t] == 1:
                    for w, l in waits.items():
                        if l == lock and w != t:
                            open_[(w, t, lock)] = ts
            else:
                holders[t] -= 1
                if not holders[t]:
                    del holders[t]
                    for key in [key for key in open_ if key[1] == t and key[2] == lock]:
                        close(key, ts)
        edges = done + [(start, last) + key for key, start in open_.items() if last > start]
        return {(a, b, names[w], names[h], l) for a, b, w, h, l in edges}

    def query(self, trace, text):
        q = os.path.join(self.tmp, "q.tq")
        with open(q, "w") as f:
            f.write(text)
        r = run([self.vigil, "query", trace, "-f", q, "--format", "json"])
        self.expect(r.returncode == 0, "query %r: exit %d %s" % (text, r.returncode, r.stderr))
        return [json.loads(l) for l in r.stdout.splitlines()]

    def waitfor(self):
        out = os.path.join(self.tmp, "ordered")
        p = run([self.subject, "ordered"], env=dict(os.environ, VIGIL_OUT=out), timeout=120)
        self.expect(p.returncode == 0, "ordered subject: %d %r" % (p.returncode, p.stderr))
        dead = os.path.join(self.tmp, "deadlock")
        if not self.record_deadlock(dead):
            return
        for trace, what in ((out, "ordered"), (dead, "deadlock")):
            d = run([self.vigil, "dump", "--json", trace])
            events = [json.loads(l) for l in d.stdout.splitlines()]
            want = self.expected_edges(events)
            got = {(o["from"], o["to"], o["values"]["Waiter"], o["values"]["Holder"],
                    o["values"]["Lock"])
                   for o in self.query(trace, "range of W is WaitFor\nretrieve (Waiter = "
                                       "W.waiter, Holder = W.holder, Lock = W.lock)\n")}
            self.expect(got == want and want, "%s: WaitFor\n  missing %s\n  unexpected %s" %
                        (what, sorted(want - got)[:5], sorted(got - want)[:5]))
            if what == "ordered":
                # The handoff: dlw-1 waits for m0 held by dlw-0, at least once.
                self.expect(any(w == "dlw-1" and h == "dlw-0" and l == "m0"
                                for _, _, w, h, l in want), "ordered: no handoff edge")
            else:
                last = max(e["ts"] for e in events)
                self.expect(len(want) == 2 and all(b == last for _, b, _, _, _ in want) and
                            {(w, h, l) for _, _, w, h, l in want} ==
                            {("dlw-0", "dlw-1", "m1"), ("dlw-1", "dlw-0", "m0")},
                            "deadlock: edges %s" % sorted(want))
            # A filter on the lock and a join of two edges (a cycle of two threads: each
            # waits for the other, at overlapping times).
            sub = self.query(trace, "range of W is WaitFor\nretrieve (Holder = W.holder) "
                                    "where W.lock = \"m0\" and W.waiter = \"dlw-1\"\n")
            self.expect(sorted((o["from"], o["to"], o["values"]["Holder"]) for o in sub) ==
                        sorted((a, b, h) for a, b, w, h, l in want if l == "m0" and w == "dlw-1"),
                        "%s: filtered WaitFor %s" % (what, sub[:3]))
            cyc = self.query(trace, "range of A is WaitFor\nrange of B is WaitFor\n"
                                    "retrieve (T = A.waiter, U = B.waiter) "
                                    "where A.holder = B.waiter and B.holder = A.waiter\n")
            self.expect(bool(cyc) == (what == "deadlock") and
                        all(o["values"]["T"] != o["values"]["U"] for o in cyc),
                        "%s: two-thread cycles %s" % (what, cyc))

    # Every kind of violation the random workload injects (check_mktrace.c `kinds`).
    KINDS = {"free_unborn": 1, "use_dead": 2, "move_dead": 2, "new_live": 3,
             "skip_parent": 4, "leave_empty": 4, "leave_missing": 4, "release_unheld": 5,
             "wait_again": 5, "acquire_waiting": 5, "waited_unwaited": 5,
             "suspend_again": 5, "resume_unsuspended": 5}
    # Fixed seeds (the same every run) and one fresh seed, printed: VIGIL_SEED=N reruns it.
    SEEDS = [1, 781299748, 424242]

    def random(self):
        env = os.environ.get("VIGIL_SEED") or os.environ.get("VIGIL_CHECK_SEED")
        fresh = int(env) if env else random.randrange(1 << 30)
        print("random: fresh seed %d (rerun with VIGIL_SEED=%d)" % (fresh, fresh))
        for seed in self.SEEDS + [fresh]:
            self.random_seed(seed)

    def random_seed(self, seed):
        n = 1200000
        self.injected = {}
        d, exp, synth, summary = self.make("big", n, seed)
        before = self.failures
        summ = self.check_json("random", d, exp, synth, summary, 1 if exp else 0)
        self.expect(len(exp) >= 10, "random: only %d violations injected" % len(exp))
        # every kind of every rule injected, so that each is checked (exp by position)
        for kind in self.KINDS:
            self.expect(self.injected.get(kind, 0) >= 2, "random seed %d: %s injected %d "
                        "times" % (seed, kind, self.injected.get(kind, 0)))
        self.expect(set(self.injected) <= set(self.KINDS),
                    "random: unknown kinds %s" % sorted(set(self.injected) - set(self.KINDS)))
        for r in range(1, 6):
            want = sum(v for k, v in self.injected.items() if self.KINDS.get(k) == r)
            self.expect(summary.get("rule%d" % r) == want and want > 0,
                        "random seed %d: rule %d: %s expected, %d injected" %
                        (seed, r, summary.get("rule%d" % r), want))
        if summ:
            self.expect(summ["events"] == n, "random: %s events" % summ["events"])
            print("random seed %d: %d events, %d violations (%s), %d synthesized, "
                  "%d invocations" % (seed, summ["events"], summ["violations"],
                                      summ["rules"], summ["synthesized"],
                                      summ["invocations"]))
        if self.failures > before:
            print("random: failed with VIGIL_SEED=%d" % seed)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("test", choices=["rules", "cli", "record", "deadlocks", "waitfor", "random"])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mktrace", required=True)
    ap.add_argument("--subject")
    a = ap.parse_args()
    t = Test(a)
    getattr(t, a.test)()
    if t.failures:
        sys.exit("%d failures (kept %s)" % (t.failures, t.tmp))
    subprocess.run(["rm", "-rf", t.tmp])
    print("ok")


if __name__ == "__main__":
    main()
