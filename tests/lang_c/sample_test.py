"""Sampling (docs/watch.md "Sampling", docs/control.md `sample`) end to end: a fake
monitor samples the generated sensor samp.Running of tests/lang_c/sample.c at the ticks
of a clock; the trace must hold exactly the intervals during which a tick fell, each
with its true begin (vg_since), and nothing of the others.

usage: sample_test.py TEST SUBJECT   (VIGIL_BIN: the build's bin directory)
  sampled   sampling at 1 ms ticks from the hello: exact against the subject's truth
  traced    `sensor` instead of `sample`: every interval, begins recorded, vg_since 0
  refused   sampling a traced sensor, a second clock, a zero period: errors, no change
  once      a sensor traced once: one event per raise of its flag (3 raises on cpu0, 1
            on cpu1), and in a recording with flags on, the first event of each cpu; the
            recording's answers equal those of vigil watch --replay with both plans
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

BIN = os.environ.get("VIGIL_BIN", "build/bin")
VIGIL = os.path.join(BIN, "vigil")
SUBJECT = sys.argv[2]
PERIOD = 1000000  # 1 ms
N = 3000


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


class Link:
    def __init__(self, conn):
        self.conn = conn
        self.buf = b""

    def line(self):
        while b"\n" not in self.buf:
            chunk = self.conn.recv(4096)
            if not chunk:
                fail("the subject closed the control connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def send(self, cmd):
        self.conn.sendall((cmd + "\n").encode())
        return self.line()


def run(commands, work, after=()):
    """Runs the subject under the fake monitor; commands (before go) and `after` (once
    its sensors are registered) may use {origin}. Returns (origin, answers, truth
    lines, events)."""
    sock_path = os.path.join(work, "ctl")
    trace = os.path.join(work, "trace")
    truth = os.path.join(work, "truth")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock_path)
    srv.listen(1)
    srv.settimeout(30)
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIGIL_")}
    env.update({"VIGIL_OUT": trace, "VIGIL_SENSORS": "vg.*", "VIGIL_ENTITY_FLAGS": "off",
                "VIGIL_CONTROL": sock_path})
    args = [SUBJECT, str(N), truth] + (["wait"] if after else [])
    p = subprocess.Popen(args, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    conn, _ = srv.accept()
    conn.settimeout(30)
    link = Link(conn)
    hello = link.line()
    origin = int(dict(w.split("=", 1) for w in hello.split(" ")[3:])["now"])
    answers = [link.send(c.format(origin=origin)) for c in commands]
    if link.send("go").split(" ")[0] != "ok":
        fail("go refused")
    if after:
        if p.stdout.readline().strip() != "ready":
            fail("the subject did not get ready")
        answers += [link.send(c.format(origin=origin)) for c in after]
        p.stdin.write("go\n")
        p.stdin.flush()
    p.stdin.close()
    rc = p.wait(timeout=120)
    p.stdout.close()
    conn.close()
    srv.close()
    if rc != 0:
        fail(f"subject exited {rc}")
    out = subprocess.run([VIGIL, "dump", "--json", trace], capture_output=True, text=True,
                         timeout=60)
    if out.returncode != 0:
        fail(f"vigil dump exited {out.returncode}: {out.stderr}")
    events = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
    with open(truth) as f:
        lines = [tuple(int(x) for x in l.split()) for l in f]
    return origin, answers, lines, events


def first_tick(origin, t):
    """The first tick at or after t."""
    if t <= origin:
        return origin
    return origin + (t - origin + PERIOD - 1) // PERIOD * PERIOD


def sampled(work):
    origin, answers, truth, events = run(
        ["entities +1 Cpu", f"sample +1 samp.Running.* {{origin}} {PERIOD}"], work)
    if answers[1].split(" ")[0] != "ok":  # the sensors register later, in main
        fail(f"sample answered {answers[1]!r}")
    if any(e["name"] == "samp.Running.begin" for e in events):
        fail("a begin was recorded while sampling")
    if any(e["name"].startswith("samp.Traced") for e in events):
        fail("the traced sensor recorded: nothing enabled it")
    ends = {0: [], 1: []}
    for e in events:
        if e["name"] == "samp.Running.end":
            cpu = 0 if e["fields"]["cpu"]["name"] == "cpu0" else 1
            ends[cpu].append((e["fields"]["vg_since"], e["clock"]))
    must = maybe = 0
    for cpu in (0, 1):
        got = ends[cpu]
        k = 0
        for (c, b0, b1, e0, e1) in (t for t in truth if t[0] == cpu):
            # a tick surely inside [begin, end): recorded; surely outside: not
            surely = first_tick(origin, b1) < e0
            possibly = first_tick(origin, b0) < e1
            rec = k < len(got) and b0 <= got[k][0] <= b1 and e0 <= got[k][1] <= e1
            if surely and not rec:
                fail(f"cpu{cpu}: interval begun in [{b0},{b1}], ended in [{e0},{e1}] holds "
                     f"a tick but was not recorded (next recorded: {got[k:k+1]})")
            if rec and not possibly:
                fail(f"cpu{cpu}: interval [{b0},{b1}]..[{e0},{e1}] holds no tick but was "
                     "recorded")
            if rec:
                since, end = got[k]
                if first_tick(origin, since) >= end:
                    fail(f"cpu{cpu}: recorded [{since}, {end}) holds no tick")
                k += 1
                must += surely
                maybe += not surely
        if k != len(got):
            fail(f"cpu{cpu}: {len(got) - k} recorded interval(s) match no interval of the "
                 "subject")
    total = len(truth)
    if not (0 < must < total):
        fail(f"{must} of {total} intervals held a tick: the test measures nothing")
    print(f"sampled: {must + maybe} of {total} intervals recorded ({maybe} at a boundary)")


def traced(work):
    _, answers, truth, events = run(["entities +1 Cpu", "sensor +1 samp.Running.*"], work)
    begins = [e for e in events if e["name"] == "samp.Running.begin"]
    ends = [e for e in events if e["name"] == "samp.Running.end"]
    if len(begins) != N or len(ends) != N:
        fail(f"{len(begins)} begins and {len(ends)} ends recorded, expected {N} each")
    if any(e["fields"]["vg_since"] != 0 for e in ends):
        fail("an end carries vg_since while not sampled")
    q = subprocess.run([VIGIL, "query", os.path.join(work, "trace"), "--format", "json", "-e",
                        "range of R is Running retrieve (R.cpu)"],
                       capture_output=True, text=True, timeout=60)
    if q.returncode != 0 or len(q.stdout.splitlines()) != N:
        fail(f"vigil query gave {len(q.stdout.splitlines())} Running tuples, expected {N}: "
             f"{q.stderr}")
    print(f"traced: {N} intervals recorded with their begins")


def refused(work):
    _, answers, _, events = run(["entities +1 Cpu"], work, after=[
        f"sample +1 samp.Traced.* {{origin}} {PERIOD}",
        f"sample +1 samp.Running.* {{origin}} {PERIOD}",
        f"sample +1 samp.Running.end {{origin}} {2 * PERIOD}",
        "sample +1 samp.Running.end 0 0",
        "sample +1 samp.Running.end 12x 5",
        f"sample -1 samp.Running.* {{origin}} {PERIOD}",
    ])
    expect = ["ok", "error", "ok", "error", "error", "error", "ok"]
    for a, want, i in zip(answers, expect, range(len(expect))):
        if a.split(" ")[0] != want:
            fail(f"command {i} answered {a!r}, expected {want}")
    if "not a sampled interval sensor" not in answers[1]:
        fail(f"sampling a traced sensor: {answers[1]!r}")
    if "another clock" not in answers[3]:
        fail(f"a second clock: {answers[3]!r}")
    if any(e["name"].startswith("samp.") for e in events):
        fail("a sensor recorded although every sampling request was withdrawn or refused")
    print("refused: every bad request refused, nothing recorded")


def once(work):
    _, answers, _, events = run(["entities +1 Cpu", "sensor +1 samp.Touched"], work,
                                after=["entities +2 Cpu cpu0"])
    if answers[-1].split(" ")[:1] != ["ok"] or answers[-1].split(" ")[2] != "1":
        fail(f"entities +2 Cpu cpu0 answered {answers[-1]!r}")
    got = [e["fields"]["cpu"]["name"] for e in events if e["name"] == "samp.Touched"]
    if sorted(got) != ["cpu0", "cpu0", "cpu0", "cpu1"]:
        fail(f"traced once under a monitor: {got.count('cpu0')} events on cpu0 and "
             f"{got.count('cpu1')} on cpu1, expected 3 and 1")
    # a recording with every flag on: one raise per entity, the first event of each
    trace = os.path.join(work, "full")
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIGIL_")}
    env["VIGIL_OUT"] = trace
    p = subprocess.run([SUBJECT, "50", os.path.join(work, "truth2")], env=env, timeout=60)
    if p.returncode != 0:
        fail(f"recording: subject exited {p.returncode}")
    vgl = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample.vgl")
    for q, rule in (("range of T is Touched retrieve (T.cpu) valid at T", None),
                    ('range of T is Touched retrieve (T.task) valid at T where T.cpu = "cpu1"',
                     "O2, O4")):
        full = subprocess.run([VIGIL, "query", trace, "--format", "json", "-e", q],
                              capture_output=True, text=True, timeout=60)
        if full.returncode != 0 or len(full.stdout.splitlines()) != (2 if rule is None else 1):
            fail(f"vigil query {q!r}: {full.stdout}{full.stderr}")
        for plan in ([], ["--unoptimized"]):
            r = subprocess.run([VIGIL, "watch", "--replay", trace, "--sensors", vgl,
                                "--format", "json", "-e", q, *plan],
                               capture_output=True, text=True, timeout=60)
            if sorted(r.stdout.splitlines()) != sorted(full.stdout.splitlines()):
                fail(f"replay {plan or ['optimized']} of {q!r}: {r.stdout}{r.stderr} "
                     f"differs from {full.stdout}")
        ex = subprocess.run([VIGIL, "explain", "-e", q, "--sensors", vgl], capture_output=True,
                            text=True, timeout=60)
        after = ex.stdout.split("after optimization:")[-1]
        if "traced once" not in after or (rule and rule not in after):
            fail(f"explain of {q!r} shows no traced-once α or no {rule}: {after}")
    print("once: one event per raise; replayed answers equal the recording's")


def main():
    tests = {"sampled": sampled, "traced": traced, "refused": refused, "once": once}
    work = tempfile.mkdtemp(prefix="vigil-sample-")
    try:
        tests[sys.argv[1]](work)
    except BaseException:
        print(f"sample_test: kept {work}", file=sys.stderr)
        raise
    shutil.rmtree(work, ignore_errors=True)


main()
