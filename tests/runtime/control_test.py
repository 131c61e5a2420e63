"""The control channel (docs/control.md) end to end: a fake monitor (a Unix socket served
here with the stdlib) drives tests/runtime/control_subject.c, a subject linked with
libvigil, through VIGIL_CONTROL; `vigil dump --json` then says what was recorded.

usage: control_test.py TEST SUBJECT   (VIGIL_BIN: the build's bin directory)

Each event a test expects or forbids carries a unique number n, so "recorded from here
on" and "nothing after the close" are checked without looking at clocks."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("VIGIL_BIN", "build/bin")
VIGIL = os.path.join(BIN, "vigil")
SUBJECT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(BIN, "vg_control_subject")
GONE = "monitor gone; sensors disabled"


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Run:
    """One subject process under a fake monitor (or none: monitor=False)."""

    def __init__(self, env=None, monitor=True):
        self.dir = tempfile.mkdtemp(prefix="vigil-control-")
        self.sock_path = os.path.join(self.dir, "ctl.sock")
        self.trace = os.path.join(self.dir, "trace")
        self.srv = None
        if monitor:
            self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.srv.bind(self.sock_path)
            self.srv.listen(8)
            self.srv.settimeout(30)
        full = dict(os.environ)
        for k in list(full):
            if k.startswith("VIGIL_") and k not in ("VIGIL_BIN", "VIGIL_SRC"):
                del full[k]
        full.update({"VIGIL_OUT": self.trace, "VIGIL_SENSORS": "vg.*",
                     "VIGIL_ENTITY_FLAGS": "off", "VIGIL_CONTROL": self.sock_path})
        # "{dir}" in a value: this run's directory (VIGIL_LISTENERS)
        full.update({k: v.replace("{dir}", self.dir) for k, v in (env or {}).items()})
        self.err_path = os.path.join(self.dir, "stderr")
        self.err = open(self.err_path, "w")
        self.p = subprocess.Popen([SUBJECT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, env=full, text=True)
        self.conn = None

    # ---- the monitor's side ----
    def accept(self):
        conn, _ = self.srv.accept()
        conn.settimeout(30)
        link = Link(conn)
        hello = link.readline()
        words = hello.split(" ")
        check(words[:3] == ["hello", "vigil-control", "1"], f"bad hello {hello!r}")
        fields = dict(w.split("=", 1) for w in words[3:])
        check(set(fields) == {"pid", "image", "now"}, f"bad hello {hello!r}")
        check(os.path.isabs(fields["image"]) and os.path.isdir(fields["image"]),
              f"hello names no image directory: {hello!r}")
        check(int(fields["now"]) > 0, f"bad now in {hello!r}")
        link.pid = int(fields["pid"])
        link.image = fields["image"]
        return link

    def start(self, *before_go):
        """Accepts the subject, sends the commands (each must answer ok), then go."""
        self.conn = self.accept()
        check(self.conn.pid == self.p.pid, f"hello pid {self.conn.pid}, subject {self.p.pid}")
        for c in before_go:
            self.conn.ok(c)
        self.conn.ok("go")
        return self.conn

    # ---- the subject's stdin ----
    def do(self, *lines):
        out = []
        for line in lines:
            self.p.stdin.write(line + "\n")
            self.p.stdin.flush()
            ans = self.p.stdout.readline().strip()
            check(ans.startswith("done"), f"subject answered {ans!r} to {line!r}")
            out.append(ans)
        return out

    def registered(self):
        """Returns once the subject's main has registered its sensors: it does so after
        `go`, before it answers its first line, so counts in replies after this are
        deterministic."""
        self.do("info 0")

    def wait_stderr(self, text, timeout=30):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text in self.stderr():
                return
            time.sleep(0.05)
        raise Failure(f"no {text!r} on the subject's stderr: {self.stderr()!r}")

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def finish(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.close()
        rc = self.p.wait(timeout=60)
        self.p.stdout.close()
        self.err.close()
        check(rc == 0, f"subject exited {rc}; stderr: {self.stderr()}")
        if self.conn:
            self.conn.close()
        if self.srv:
            self.srv.close()

    def events(self, trace=None):
        p = subprocess.run([VIGIL, "dump", "--json", trace or self.trace], capture_output=True,
                           text=True, timeout=60)
        check(p.returncode == 0, f"vigil dump exited {p.returncode}: {p.stderr}")
        return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]

    def numbers(self, name, events=None):
        evs = self.events() if events is None else events
        return sorted(e["fields"]["n"] for e in evs if e["name"] == name)

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class Link:
    def __init__(self, conn):
        self.conn = conn
        self.buf = b""

    def readline(self):
        while b"\n" not in self.buf:
            chunk = self.conn.recv(65536)
            if not chunk:
                raise Failure("the subject closed the control connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("utf-8", "replace")

    def send(self, data):
        self.conn.sendall(data if isinstance(data, bytes) else data.encode())

    def ask(self, line):
        self.send(line + "\n")
        return self.readline()

    def ok(self, line, count=None):
        ans = self.ask(line)
        w = ans.split(" ")
        check(w[0] == "ok" and len(w) in (2, 3) and int(w[1]) > 0, f"{line!r} -> {ans!r}")
        if count is not None:
            check(len(w) == 3 and int(w[2]) == count, f"{line!r} -> {ans!r}, expected count {count}")
        return ans

    def error(self, line):
        ans = self.ask(line) if isinstance(line, str) else (self.send(line), self.readline())[1]
        check(ans.startswith("error ") and len(ans) > 6, f"{line!r} -> {ans!r}, expected an error")
        return ans

    def close(self):
        self.conn.close()


def user_events(events):
    return [e for e in events if not e["name"].startswith("vg.")]


# ---- the tests ----

def test_none(r):
    """vg.* on, every user sensor off, nothing asked: only vg.* events."""
    r.start()
    r.do("create 0 box0", "tick 1", "deliver 0 2", "link 0 0 3")
    r.finish()
    evs = r.events()
    check(not user_events(evs), f"user events recorded: {user_events(evs)}")
    names = {e["name"] for e in evs}
    check({"vg.process.begin", "vg.thread.begin", "vg.entity.create"} <= names,
          f"vg.* events missing: {names}")


def test_sensor(r):
    """A rule sent before go applies to sensors registered later; counters compose."""
    c = r.start("sensor +1 ctl.tick")
    r.do("tick 1")
    c.ok("sensor +1 ctl.tick", count=1)
    c.ok("sensor -1 ctl.tick", count=1)
    r.do("tick 2")
    c.ok("sensor -1 ctl.tick", count=1)
    r.do("tick 3")
    c.ok("sensor +1 ctl.*", count=3)
    r.do("create 0 box0", "tick 4", "deliver 0 5", "link 0 0 6")
    c.ok("sensor -1 ctl.*", count=3)
    r.do("tick 7", "link 0 0 8")
    c.ok("sensor +1 nothing.matches", count=0)
    r.finish()
    evs = r.events()
    check(r.numbers("ctl.tick", evs) == [1, 2, 4], f"ticks {r.numbers('ctl.tick', evs)}")
    check(r.numbers("ctl.link", evs) == [6], f"links {r.numbers('ctl.link', evs)}")
    check(r.numbers("ctl.deliver", evs) == [], "deliver recorded with entity flags off")


def test_entities(r):
    """entities +1 Kind Name: only that entity's events, now and for later ones."""
    c = r.start("sensor +1 ctl.deliver")
    r.do("create 0 box0", "create 1 box1")
    c.ok("entities +1 Box box1", count=1)
    r.do("deliver 0 10", "deliver 1 11")
    r.do("create 2 box1", "deliver 2 12")           # created later with the name
    r.do("create 3 other", "deliver 3 13", "rename 3 box1", "deliver 3 14")  # renamed into it
    c.ok("entities -1 Box box1", count=3)
    r.do("deliver 1 15", "deliver 2 16", "deliver 3 17")
    c.ok("entities +1 Box", count=4)
    r.do("deliver 0 18")
    c.ok("entities +1 Nothing", count=0)
    r.finish()
    got = r.numbers("ctl.deliver")
    check(got == [11, 12, 14, 18], f"deliver {got}")


def test_trigger(r):
    """trigger +1 ctl.link to: ctl.deliver records on exactly the boxes linked to."""
    c = r.accept()
    c.ok("sensor +1 ctl.deliver", count=0)
    c.ok("sensor +1 ctl.link", count=0)
    c.ok("trigger +1 ctl.link to", count=0)   # not registered yet: the rule waits
    c.ok("go")
    r.registered()
    c.ok("trigger +1 ctl.link from", count=1)
    c.ok("trigger -1 ctl.link from", count=1)
    r.do("create 0 box0", "create 1 box1", "create 2 box2")
    r.do("deliver 0 20", "deliver 1 21", "deliver 2 22")
    r.do("link 0 1 23")
    r.do("deliver 0 24", "deliver 1 25", "deliver 2 26")
    r.do("link 2 0 27")
    r.do("deliver 0 28", "deliver 1 29", "deliver 2 30")
    c.error("trigger +1 ctl.link nosuch")
    c.error("trigger +1 ctl.tick n")   # n is not an entity field
    c.ok("sensor -1 ctl.link")         # a sensor that does not record fires no trigger
    r.do("link 0 2 31", "deliver 2 32")
    r.finish()
    evs = r.events()
    check(r.numbers("ctl.link", evs) == [23, 27], f"links {r.numbers('ctl.link', evs)}")
    check(r.numbers("ctl.deliver", evs) == [25, 28, 29], f"deliver {r.numbers('ctl.deliver', evs)}")


def test_entity(r):
    """entity +1 Kind id gen: a live entity; a reclaimed one is `not live`."""
    c = r.start("sensor +1 ctl.deliver")
    r.do("create 0 box0")
    _, ident, gen = r.do("info 0")[0].split()
    c.ok(f"entity +1 Box {ident} {gen}")
    r.do("deliver 0 40", "reclaim 0")
    check("not live" in c.error(f"entity +1 Box {ident} {gen}"), "reclaimed entity accepted")
    c.error(f"entity +1 Box {ident} {int(gen) + 5}")
    c.error(f"entity +1 Crate {ident} {gen}")
    r.do("create 0 box0", "deliver 0 41")   # a new lifetime: its flag starts off
    _, ident2, gen2 = r.do("info 0")[0].split()
    check(ident2 == ident and int(gen2) == int(gen) + 1, f"generations {gen} then {gen2}")
    c.ok(f"entity +1 Box {ident2} {gen2}")
    r.do("deliver 0 42")
    r.finish()
    got = r.numbers("ctl.deliver")
    check(got == [40, 42], f"deliver {got}")


def test_gone(r):
    """The monitor closes: one stderr line, the subject runs on and records nothing more
    but the ends of the thread and process whose begins were reported (rule 3 of
    docs/consistency.md: a reported creation gets its reported reclamation)."""
    c = r.start("sensor +1 ctl.tick")
    r.do("tick 50", "create 0 box0")
    c.close()
    r.conn = None
    r.wait_stderr(GONE)
    r.do("tick 51", "create 1 late", "deliver 1 52", "tick 53")
    r.finish()
    check(r.stderr().count(GONE) == 1, f"stderr: {r.stderr()!r}")
    evs = r.events()
    check(r.numbers("ctl.tick", evs) == [50], f"ticks {r.numbers('ctl.tick', evs)}")
    created = [e["fields"]["name"] for e in evs if e["name"] == "vg.entity.create"]
    check(created == ["box0"], f"entities recorded: {created}")
    # vg.net.*: the subject's stdin and stdout pipes, followed (docs/net.md) when its
    # stdio reads go through the hooks, as under the sanitizers; recorded before the close
    after = [e["name"] for e in evs if e["name"].startswith("vg.") and e["name"] not in
             ("vg.process.begin", "vg.thread.begin", "vg.entity.create") and
             not e["name"].startswith("vg.net.")]
    check(after == ["vg.thread.end", "vg.process.end"], f"vg.* recorded after the close: {after}")


def test_garbage(r):
    """Bad lines get `error`; the subject and the connection are unaffected."""
    c = r.start()
    for line in ["", " ", "foo", "PING", "ping extra", "go now", "sensor", "sensor +1",
                 "sensor x ctl.tick", "sensor +1x ctl.tick", "sensor ++1 ctl.tick",
                 "sensor 99999999999999999999 ctl.tick", "sensor +2000000 ctl.tick",
                 "sensor +1 ctl.tick extra", "sensor  +1 ctl.tick", "sensor +1 ctl.tick ",
                 "entities +1", "entities +1 Box a b", "entity +1 Box 12x 0",
                 "entity +1 Box 1 99999999999", "entity +1 Box -1 0", "entity +1 Box 1",
                 "trigger +1 ctl.link", "trigger -1", "a b c d e f g h", "\t", "sensor\t+1 x",
                 "a" * 1024]:
        c.error(line)
    c.error(b"\x00\xff\xfe sensor +1 ctl.tick\n")
    c.error(b"sensor +1 ctl.tick\x00\n")
    long_answer = c.error(b"x" * 5000 + b"\n")
    check("longer" in long_answer, f"over-long line: {long_answer!r}")
    c.error(b"sensor +1 " + b"c" * 3000 + b"\n")
    c.send("pi")                        # a command split across writes
    time.sleep(0.05)
    c.send("ng\nping\n")                # and two in one
    for _ in range(2):
        ans = c.readline()
        check(ans.startswith("ok "), f"ping -> {ans!r}")
    r.registered()
    c.ok("sensor +1 ctl.tick", count=1)
    c.ok("go")                          # a second go is harmless
    r.do("tick 60")
    c.ok("ping")
    r.finish()
    check(r.numbers("ctl.tick") == [60], f"ticks {r.numbers('ctl.tick')}")
    check(r.stderr() == "", f"stderr: {r.stderr()!r}")


def test_nogo(r):
    """No go within VIGIL_CONTROL_WAIT: one stderr line, the subject runs, sensors off."""
    c = r.accept()
    c.ok("sensor +1 ctl.tick", count=0)
    r.wait_stderr(GONE)
    r.do("tick 70", "create 0 box0")
    check(c.conn.recv(100) == b"", "the subject kept the connection open")
    r.finish()
    err = r.stderr()
    check(err.count("\n") == 1 and GONE in err and "VIGIL_CONTROL" in err, f"stderr: {err!r}")
    evs = r.events()
    check(not user_events(evs), f"user events recorded: {user_events(evs)}")
    check(not [e for e in evs if e["name"] == "vg.entity.create"], "vg.* recorded after the timeout")


def test_nomonitor(r):
    """VIGIL_CONTROL names nothing: one stderr line; the subject runs as configured."""
    r.do("tick 80")
    r.finish()
    err = r.stderr()
    check(err.count("\n") == 1 and "VIGIL_CONTROL=" in err and err.rstrip().endswith("no monitor"),
          f"stderr: {err!r}")
    check(r.numbers("ctl.tick") == [80], f"ticks {r.numbers('ctl.tick')}")


def test_fork(r):
    """A fork child connects anew with its own hello; the parent's link is untouched."""
    c = r.start()
    r.p.stdin.write("fork 90\n")
    r.p.stdin.flush()
    child = r.accept()
    check(child.pid != r.p.pid, "the child said hello with the parent's pid")
    check(child.image != c.image, "the child names the parent's image directory")
    child.ok("sensor +1 ctl.tick", count=1)
    child.ok("go")
    ans = r.p.stdout.readline().strip()
    check(ans == "done 0", f"fork -> {ans!r}")
    check(child.conn.recv(100) == b"", "the child's connection outlived it")
    child.close()
    c.ok("ping")
    r.do("tick 91")
    r.finish()
    evs = r.events()
    ticks = [(e["pid"], e["fields"]["n"]) for e in evs if e["name"] == "ctl.tick"]
    check(ticks == [(child.pid, 90)], f"ticks {ticks}")


def attach(pid):
    """Attaches to a subject listening with VIGIL_CONTROL=listen; its Link, or the
    refusal line (str) when it refuses."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(30)
    conn.connect(b"\0vigil-control.%d" % pid)
    link = Link(conn)
    hello = link.readline()
    if hello.startswith("error "):
        conn.close()
        return hello
    check(hello.startswith(f"hello vigil-control 1 pid={pid} image="), f"bad hello {hello!r}")
    return link


def test_listen(r):
    """VIGIL_CONTROL=listen: monitors attach later; detaching (or `reset`)
    lowers all they raised (sensors, entity flags from rules and triggers); a fork child
    starts from the configured counters."""
    r.do("create 0 box0", "create 1 box1", "tick 100", "deliver 0 101")  # no monitor yet
    m = attach(r.p.pid)
    check(isinstance(m, Link), f"first monitor refused: {m}")
    m.ok("sensor +1 ctl.deliver", count=1)
    m.ok("entities +1 Box box0", count=1)
    m.ok("sensor +1 ctl.link", count=1)
    m.ok("trigger +1 ctl.link to", count=1)
    r.do("deliver 0 102", "deliver 1 103", "link 0 1 104", "deliver 1 105")
    m.close()
    # The subject serves its socket in order: a monitor that attaches after the close
    # gets its hello once the detach is done.
    m2 = attach(r.p.pid)
    check(isinstance(m2, Link), f"monitor after a detach refused: {m2}")
    r.do("deliver 0 106", "deliver 1 107", "link 0 1 108")
    m2.ok("sensor +1 ctl.deliver", count=1)
    r.do("deliver 0 109", "deliver 1 110")  # the flags the first monitor raised are down
    m2.ok("entities +1 Box", count=2)
    m2.ok("sensor +1 ctl.tick", count=1)
    r.do("deliver 1 111", "tick 112")
    r.p.stdin.write("fork 113\n")  # the child's tick: its counters are the configured ones
    r.p.stdin.flush()
    ans = r.p.stdout.readline().strip()
    check(ans == "done 0", f"fork -> {ans!r}")
    m2.ok("reset")  # the plan off, answered, the monitor still attached
    r.do("deliver 1 114", "tick 115")
    m2.close()
    m3 = attach(r.p.pid)  # the second detach is done; this one stays to the end
    check(isinstance(m3, Link), f"monitor after the second detach refused: {m3}")
    r.finish()
    m3.close()
    evs = r.events()
    check(r.numbers("ctl.deliver", evs) == [102, 105, 111],
          f"deliver {r.numbers('ctl.deliver', evs)}")
    check(r.numbers("ctl.link", evs) == [104], f"links {r.numbers('ctl.link', evs)}")
    check(r.numbers("ctl.tick", evs) == [112], f"ticks {r.numbers('ctl.tick', evs)}")
    # Detaching is no problem: said only with VIGIL_VERBOSE (set here), once each.
    check(r.stderr().count("monitor detached") == 2, f"stderr: {r.stderr()!r}")
    # The relation of a sensor registered without a .vgl keeps its dotted name in TQuel.
    q = subprocess.run([VIGIL, "query", r.trace, "--format", "json", "-e",
                        "range of d is ctl.deliver retrieve (d.n)"],
                       capture_output=True, text=True, timeout=60)
    got = sorted(json.loads(l)["values"]["n"] for l in q.stdout.splitlines() if l.strip())
    check(q.returncode == 0 and got == [102, 105, 111], f"query: {got} {q.stderr}")


def settle(pid):
    """Returns once the subject has served every connection closed before this call: a
    new monitor's hello comes after the poll round that saw those ends."""
    s = attach(pid)
    check(isinstance(s, Link), f"a monitor attaching to settle was refused: {s}")
    s.close()


def test_monitors(r):
    """Several monitors at once (docs/control.md "Several monitors"): each installs its own
    rules, the subject records their union, and one that leaves (or sends `reset`) takes
    only its own share away; at most 8 at once, the 9th refused with one line."""
    r.do("create 0 box0", "create 1 box1")
    m1, m2, m3 = attach(r.p.pid), attach(r.p.pid), attach(r.p.pid)
    for m in (m1, m2, m3):
        check(isinstance(m, Link), f"a concurrent monitor was refused: {m}")
    m1.ok("sensor +1 ctl.deliver", count=1)
    m1.ok("entities +1 Box box0", count=1)
    m1.ok("sensor +1 ctl.tick", count=1)
    m2.ok("sensor +1 ctl.deliver", count=1)
    m2.ok("entities +1 Box box1", count=1)
    m3.ok("sensor +1 ctl.tick", count=1)
    m3.ok("entities +1 Box box0", count=1)  # the same rule as m1's: two shares
    m3.ok("sensor +1 ctl.deliver", count=1)
    r.do("deliver 0 200", "deliver 1 201", "tick 202")  # the union
    m1.close()
    settle(r.p.pid)
    r.do("deliver 0 203", "deliver 1 204", "tick 205")  # m3 still holds box0 and tick
    m3.ok("reset")  # m3's plan off, m2's stays
    r.do("deliver 0 206", "deliver 1 207", "tick 208")
    extra = [attach(r.p.pid) for _ in range(6)]  # m2, m3 and six more: eight
    for m in extra:
        check(isinstance(m, Link), f"monitor {extra.index(m) + 3} of 8 refused: {m}")
    ninth = attach(r.p.pid)
    check(isinstance(ninth, str) and "busy" in ninth, f"a ninth monitor: {ninth!r}")
    m2.ok("ping")  # the subject is unharmed and serves the others
    for m in extra:
        m.close()
    m2.close()
    settle(r.p.pid)
    r.do("deliver 0 209", "deliver 1 210", "tick 211")  # only m3 left, with no plan
    m3.close()
    r.finish()
    evs = r.events()
    check(r.numbers("ctl.deliver", evs) == [200, 201, 203, 204, 207],
          f"deliver {r.numbers('ctl.deliver', evs)}")
    check(r.numbers("ctl.tick", evs) == [202, 205], f"ticks {r.numbers('ctl.tick', evs)}")


def report(pid, *args):
    """vigil report --pid pid ARGS: its exit status and stderr."""
    p = subprocess.run([VIGIL, "report", "--pid", str(pid), *args], capture_output=True,
                       text=True, timeout=60)
    return p.returncode, p.stderr


def test_report(r):
    """vigil report --pid (docs/consistency.md "From outside"): suspend/resume, sensors,
    categories and threads changed in a running process; a bad change refused with one
    line, the subject unharmed; the trace consistent (vigil check)."""
    pid = r.p.pid
    r.do("create 0 box0", "tick 300")
    steps = [(["--suspend", "--json"], ["tick 301"]),
             (["--resume", "--sensors-off", "ctl.tick"], ["tick 302", "deliver 0 303"]),
             (["--sensors-on", "ctl.tick", "--categories", "entity"], ["tick 304"]),
             (["--categories", "all"], ["tick 305"]),
             (["--threads", "no-such-thread-*"], ["tick 306"]),
             (["--all-threads"], ["tick 307"]),
             (["--categories", "synchronization"], ["tick 320"]),  # ticks are object events
             (["--categories", "objects"], ["tick 321"])]
    for args, then in steps:
        rc, err = report(pid, *args)
        check(rc == 0, f"vigil report {args}: exit {rc}: {err}")
        r.do(*then)
    rc, err = report(pid, "--categories", "bogus")
    check(rc == 1 and err.count("\n") == 1 and "report categories: 'bogus'" in err,
          f"a bad category: exit {rc}: {err!r}")
    rc, err = report(pid)
    check(rc == 2 and "nothing to change" in err and err.count("\n") == 1,
          f"no change: exit {rc}: {err!r}")
    r.do("tick 308")
    rc, err = report(pid, "--window", "on:2s,every:1s")
    check(rc == 1 and err.count("\n") == 1 and "shorter than its period" in err,
          f"a window longer than its period: exit {rc}: {err!r}")
    # A window that closes after 1 ms for the rest of the run; off lifts the window's
    # suspension whenever it took hold (the windows' edges: consistency.window).
    rc, err = report(pid, "--window", "on:1ms,every:1000s")
    check(rc == 0, f"a window: exit {rc}: {err!r}")
    rc, err = report(pid, "--window", "off")
    check(rc == 0, f"window off: exit {rc}: {err!r}")
    r.do("tick 309")
    r.finish()
    evs = r.events()
    check(r.numbers("ctl.tick", evs) == [300, 305, 307, 308, 309, 321],
          f"ticks {r.numbers('ctl.tick', evs)}")
    check(r.numbers("ctl.deliver", evs) == [303], f"deliver {r.numbers('ctl.deliver', evs)}")
    c = subprocess.run([VIGIL, "check", r.trace], capture_output=True, text=True, timeout=60)
    check(c.returncode == 0, f"vigil check: exit {c.returncode}: {c.stdout} {c.stderr}")


def test_report_listeners(r):
    """vigil report --pid --listener N (docs/consistency.md "Several listeners"): each
    listener's filter changed alone in a running process (suspend, resume, categories,
    sensors), the main output's untouched; a listener that does not exist and a window
    for a listener refused with one line; every listener's trace consistent."""
    pid = r.p.pid
    r.do("create 0 box0", "tick 300")
    steps = [(["--listener", "1", "--suspend"], ["tick 301"]),
             (["--listener", "2", "--categories", "entity", "--listener", "1", "--resume"],
              ["tick 302"]),
             (["--listener", "2", "--categories", "all", "--sensors-on", "-ctl.tick"],
              ["tick 303", "deliver 0 310"]),
             (["--listener", "2", "--sensors-on", "*", "--threads", "no-such-thread-*"],
              ["tick 304"]),
             (["--listener", "2", "--all-threads", "--listener", "0", "--suspend"],
              ["tick 305"]),
             (["--resume"], ["tick 306"])]
    for args, then in steps:
        rc, err = report(pid, *args)
        check(rc == 0, f"vigil report {args}: exit {rc}: {err}")
        r.do(*then)
    for args, says in ((["--listener", "3", "--suspend"], "'3': no such listener (this "
                        "process has 3: the main output, 0, and 2 of VIGIL_LISTENERS)"),
                       (["--listener", "1", "--window", "on:1ms,every:1s"],
                        "windows are the main output's")):
        rc, err = report(pid, *args)
        check(rc == 1 and err.count("\n") == 1 and says in err, f"{args}: exit {rc}: {err!r}")
    rc, err = report(pid, "--listener", "9", "--suspend")
    check(rc == 2 and "expected 0 to 7" in err, f"--listener 9: exit {rc}: {err!r}")
    r.do("tick 307")
    r.finish()
    want = {r.trace: [300, 301, 302, 303, 304, 306, 307],
            os.path.join(r.dir, "l1"): [300, 302, 303, 304, 305, 306, 307],
            os.path.join(r.dir, "l2"): [300, 301, 305, 306, 307]}
    for trace, ticks in want.items():
        got = r.numbers("ctl.tick", r.events(trace))
        check(got == ticks, f"{trace}: ticks {got}, expected {ticks}")
        c = subprocess.run([VIGIL, "check", trace], capture_output=True, text=True, timeout=60)
        check(c.returncode == 0, f"vigil check {trace}: exit {c.returncode}: {c.stdout} {c.stderr}")
    delivers = r.numbers("ctl.deliver", r.events(os.path.join(r.dir, "l2")))
    check(delivers == [310], f"listener 2's deliver {delivers}")


TESTS = {
    "none": (test_none, {}, True),
    "sensor": (test_sensor, {}, True),
    "entities": (test_entities, {}, True),
    "trigger": (test_trigger, {}, True),
    "entity": (test_entity, {}, True),
    "gone": (test_gone, {}, True),
    "garbage": (test_garbage, {}, True),
    "nogo": (test_nogo, {"VIGIL_CONTROL_WAIT": "1"}, True),
    "nomonitor": (test_nomonitor, {"VIGIL_SENSORS": "vg.*,ctl.tick"}, False),
    "fork": (test_fork, {}, True),
    "listen": (test_listen, {"VIGIL_CONTROL": "listen", "VIGIL_VERBOSE": "1"}, False),
    "monitors": (test_monitors, {"VIGIL_CONTROL": "listen"}, False),
    "report": (test_report, {"VIGIL_CONTROL": "listen", "VIGIL_SENSORS": "vg.*,ctl.*",
                             "VIGIL_ENTITY_FLAGS": "on"}, False),
    "report_listeners": (test_report_listeners,
                         {"VIGIL_CONTROL": "listen", "VIGIL_SENSORS": "vg.*,ctl.*",
                          "VIGIL_ENTITY_FLAGS": "on",
                          "VIGIL_LISTENERS": "{dir}/l1=all;{dir}/l2=all"}, False),
}


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else None
    if name not in TESTS:
        print(f"unknown test {name}; known: {', '.join(TESTS)}")
        sys.exit(2)
    fn, env, monitor = TESTS[name]
    if not monitor and "VIGIL_CONTROL" not in env:
        env = dict(env, VIGIL_CONTROL="/nonexistent-vigil-dir/ctl.sock")
    r = Run(env, monitor)
    try:
        fn(r)
    except (Failure, OSError, subprocess.TimeoutExpired) as e:
        if r.p.poll() is None:
            r.p.kill()
        print(f"FAIL {name}: {e}\nsubject stderr: {r.stderr()}\n(kept {r.dir})")
        sys.exit(1)
    r.cleanup()
    print(f"ok {name}")


if __name__ == "__main__":
    main()
