"""`vigil probes` end to end (docs/control.md "Probes"): a subject that registers sensors
over time (tests/probes/probes_subject.c) listens for monitors; `vigil probes --pid`
switches them by glob and %regex; `vigil dump --json` says what was recorded.

usage: probes_test.py TEST SUBJECT [record]   (VIGIL_BIN: the build's bin directory)
  record: run the subject under `vigil record --listen` (the preload), else with
  VIGIL_OUT + VIGIL_CONTROL=listen in its environment (works under the sanitizers).

Every firing carries a number n, so "recorded from the switch on" is checked on numbers,
not clocks."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("VIGIL_BIN", "build/bin")
VIGIL = os.path.join(BIN, "vigil")
SUBJECT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(BIN, "vg_probes_subject")
UNDER_RECORD = len(sys.argv) > 3 and sys.argv[3] == "record"


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Subject:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="vigil-probes-")
        self.trace = os.path.join(self.dir, "trace")
        env = {k: v for k, v in os.environ.items() if not k.startswith("VIGIL_")
               or k in ("VIGIL_BIN", "VIGIL_SRC")}
        if UNDER_RECORD:
            cmd = [VIGIL, "record", "--listen", "--quiet", "-o", self.trace, "--", SUBJECT]
        else:
            cmd = [SUBJECT]
            env.update({"VIGIL_OUT": self.trace, "VIGIL_SENSORS": "vg.*",
                        "VIGIL_ENTITY_FLAGS": "off", "VIGIL_CONTROL": "listen"})
        self.err_path = os.path.join(self.dir, "stderr")
        self.err = open(self.err_path, "w")
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, env=env, text=True)
        self.pid = None

    def do(self, *lines):
        out = []
        for line in lines:
            self.p.stdin.write(line + "\n")
            self.p.stdin.flush()
            ans = self.p.stdout.readline().strip()
            check(ans.startswith("done"), f"subject answered {ans!r} to {line!r}")
            out.append(ans)
        return out

    def find_pid(self):
        """The subject's pid (under vigil record it is the recorder's child): the process
        that listens on @vigil-control.<pid>."""
        self.do("fireall 0")  # its library is initialised: it listens
        if not UNDER_RECORD:
            self.pid = self.p.pid
            return
        end = time.monotonic() + 30
        while time.monotonic() < end:
            with open("/proc/net/unix") as f:
                names = re.findall(r"@vigil-control\.(\d+)", f.read())
            for n in names:
                try:
                    with open(f"/proc/{n}/status") as s:
                        if f"PPid:\t{self.p.pid}\n" in s.read():
                            self.pid = int(n)
                            return
                except OSError:
                    pass
            time.sleep(0.05)
        raise Failure("the subject under vigil record does not listen")

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

    def events(self):
        p = subprocess.run([VIGIL, "dump", "--json", self.trace], capture_output=True,
                           text=True, timeout=60)
        check(p.returncode == 0, f"vigil dump exited {p.returncode}: {p.stderr}")
        return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]

    def cleanup(self, keep=False):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        if keep:
            print(f"kept {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def probes(s, *args, rc=0):
    p = subprocess.run([VIGIL, "probes", "--pid", str(s.pid), *args], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == rc,
          f"vigil probes {' '.join(args)} exited {p.returncode} (expected {rc}): {p.stderr}")
    if rc == 0 and "--json" in args:
        return json.loads(p.stdout)
    return p


def attach(pid):
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(30)
    conn.connect(b"\0vigil-control.%d" % pid)
    f = conn.makefile("rwb")
    hello = f.readline().decode()
    check(hello.startswith(f"hello vigil-control 1 pid={pid} "), f"bad hello {hello!r}")
    return conn, f


def ask(f, line):
    f.write(line.encode() + b"\n")
    f.flush()
    return f.readline().decode().rstrip("\n")


def numbers(events, name):
    return sorted(e["fields"]["n"] for e in events if e["name"] == name)


def states(listing):
    return {e["name"]: e["on"] for e in listing["sensors"]}


# ---- the tests ----

def test_switch(s):
    """Globs and %regexes, later registrations, the subject's match count, detach, the
    monitor's `reset`, composition with `sensor` rules, `vigil probes reset`."""
    s.do("reg mailbox.Send mailbox.Wait other.x")
    s.find_pid()
    s.do("fireall 1")  # nothing asked: only vg.*
    base = probes(s, "list", "--json")
    builtin = {k: v for k, v in states(base).items() if k.startswith("vg.")}
    check(base["pattern_matches"] == 0, f"matches before any pattern: {base}")
    check(not any(v for k, v in states(base).items() if not k.startswith("vg.")),
          f"user sensors on before any switch: {base}")
    out = probes(s, "--json", "enable", "mailbox.*")
    check(out["matched"] == 2 and sorted(c["name"] for c in out["changed"]) ==
          ["mailbox.Send", "mailbox.Wait"], f"enable mailbox.*: {out}")
    again = probes(s, "--json", "enable", "mailbox.*")
    check(again["matched"] == 2 and again["changed"] == [], f"enable again: {again}")
    s.do("fireall 2")
    s.do("reg mailbox.Late other.late")  # after the pattern: matched at registration
    s.do("fireall 3")
    out = probes(s, "--json", "enable", "%^x\\.")
    check(out["matched"] == 0, f"%^x\\. before any x.*: {out}")
    out = probes(s, "--json", "disable", "%(Wait|Late)$")
    check(sorted(c["name"] for c in out["changed"]) == ["mailbox.Late", "mailbox.Wait"],
          f"disable %(Wait|Late)$: {out}")
    # Registered now: the patterns in order, the last match decides (x.Wait: on by
    # %^x\., then off by %(Wait|Late)$; x.Go: on; y.Late: off).
    s.do("reg x.Wait x.Go y.Late")
    s.do("fireall 4")
    now = states(probes(s, "list", "--json"))
    want = {"mailbox.Send": True, "mailbox.Wait": False, "other.x": False,
            "mailbox.Late": False, "other.late": False, "x.Wait": False, "x.Go": True,
            "y.Late": False}
    check({k: now[k] for k in want} == want, f"states {now}")
    # The subject matched strings only at registration: 2 sensors after 1 pattern, 3
    # after 3 patterns (list, probe and firing never match).
    matches = probes(s, "list", "--json")["pattern_matches"]
    check(matches == 2 * 1 + 3 * 3, f"pattern matches {matches}, expected 11")
    # A monitor's own rules add on top and go with it; the probes stay.
    conn, f = attach(s.pid)
    check(ask(f, "sensor +1 other.x").startswith("ok "), "sensor rule")
    check(ask(f, "sensor +1 mailbox.Send").startswith("ok "), "sensor rule")
    s.do("fireall 5")
    check(ask(f, "reset").startswith("ok "), "reset")
    s.do("fireall 6")
    f.close()
    conn.close()  # the next attach waits for the detach (the subject serves in order)
    s.do("fireall 7")
    check(probes(s, "list", "--json")["pattern_matches"] == 11, "matches changed")
    s.do("reg x.After")  # 3 patterns again
    # A built-in switched off stays off across detaches (which restore the built-ins).
    out = probes(s, "--json", "disable", "vg.net.close")
    check([c["name"] for c in out["changed"]] == ["vg.net.close"], f"vg.net.close: {out}")
    check(not states(probes(s, "list", "--json"))["vg.net.close"], "vg.net.close on again")
    out = probes(s, "--json", "reset")
    check(out["switched"] == 4, f"reset: {out}")  # mailbox.Send, x.Go, x.After, vg.net.close
    s.do("reg x.Reset", "fireall 8")
    after = probes(s, "list", "--json")
    check(after["pattern_matches"] == 14, f"matches after reset: {after['pattern_matches']}")
    check(not any(v for k, v in states(after).items() if not k.startswith("vg.")),
          f"user sensors on after reset: {after}")
    # A dozen monitors came and went: nothing on the host program's stderr about it
    # (VIGIL_VERBOSE is not set).
    check("monitor" not in s.stderr(), f"the subject's stderr: {s.stderr()!r}")
    check({k: v for k, v in states(after).items() if k.startswith("vg.")} == builtin,
          f"built-ins after reset: {after}")
    s.finish()
    evs = s.events()
    got = {n: numbers(evs, n) for n in sorted({e["name"] for e in evs})
           if not n.startswith("vg.")}
    want = {"mailbox.Send": [2, 3, 4, 5, 6, 7], "mailbox.Wait": [2, 3],
            "mailbox.Late": [3], "x.Go": [4, 5, 6, 7], "x.After": [], "other.x": [5]}
    want = {k: v for k, v in want.items() if v}
    check(got == want, f"recorded {got}, expected {want}")


def test_paging(s):
    """300 long names: `list` answers fit one line each; the command pages."""
    prefix = "paging.a_rather_long_sensor_name_to_fill_the_line_quickly_"
    s.do(f"regn {prefix} 300")
    s.find_pid()
    listing = probes(s, "list", "--json")
    names = [e["name"] for e in listing["sensors"]]
    check(listing["total"] == len(names) and [e["id"] for e in listing["sensors"]] ==
          list(range(len(names))), f"ids not 0..total-1: {listing['total']}")
    want = [f"{prefix}{i:04d}" for i in range(300)]
    check(names[-300:] == want, "the 300 sensors are not all listed, in order")
    # One raw page is one line of at most 1024 bytes, and not the whole table.
    conn, f = attach(s.pid)
    first = ask(f, "list 0")
    check(len(first.encode()) <= 1024, f"list line of {len(first)} bytes")
    entries = first.split(" ")[3:]
    check(0 < len(entries) < len(names), f"{len(entries)} entries on the first page")
    last = ask(f, f"list {len(names)}")
    check(last.split(" ")[2:] == [str(len(names))], f"list past the end: {last!r}")
    f.close()
    conn.close()
    out = probes(s, "--json", "enable", "%[05]$")  # 0000, 0005, ..., 0295
    want_on = sorted(n for n in want if re.search("[05]$", n))
    check(sorted(c["name"] for c in out["changed"]) == want_on,
          f"changed {len(out['changed'])}, expected {len(want_on)}")
    s.do("fireall 1")
    s.finish()
    evs = s.events()
    check(sorted({e["name"] for e in evs if e["name"].startswith("paging.")}) == want_on,
          "recorded sensors differ from the switched ones")


def test_bad(s):
    """Bad patterns and usage: one clear line, exit 2; unreachable process: exit 1."""
    s.do("reg app.a")
    s.find_pid()
    p = probes(s, "enable", "%(", rc=2)
    check(p.stdout == "" and p.stderr.count("\n") == 1 and
          "bad regular expression" in p.stderr, f"bad regex: {p.stderr!r}")
    for args in (["enable"], ["enable", "a", "b"], ["frobnicate", "x"], ["enable", "%"],
                 ["enable", "a b"], ["--bogus", "list"]):
        p = probes(s, *args, rc=2)
        check(p.stderr.count("\n") == 1 and p.stderr.startswith("vigil probes"),
              f"{args}: {p.stderr!r}")
    p = subprocess.run([VIGIL, "probes", "list"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "--pid" in p.stderr, f"no --pid: {p.stderr!r}")
    p = subprocess.run([VIGIL, "probes", "--collector", "127.0.0.1:7878", "list"],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and p.stderr.count("\n") == 1 and "--collector" in p.stderr,
          f"--collector without a collector: {p.returncode} {p.stderr!r}")
    for addr in ("127.0.0.1:99999", "127.0.0.1:", "nohostport"):
        p = subprocess.run([VIGIL, "probes", "--collector", addr, "list"],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and p.stderr.count("\n") == 1 and addr in p.stderr,
              f"--collector {addr}: {p.returncode} {p.stderr!r}")
    p = subprocess.run([VIGIL, "probes", "--pid", "1", "list"], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 1 and p.stderr.count("\n") == 1, f"pid 1: {p.stderr!r}")
    # The subject's own checks (a monitor that skips the command's).
    conn, f = attach(s.pid)
    for line in ("pattern enable %(", "pattern enable %", "pattern frob x", "pattern",
                 "probe 99999 on", "probe 0 maybe", "probe x on", "list", "list -1",
                 "list 1 2"):
        ans = ask(f, line)
        check(ans.startswith("error "), f"{line!r} -> {ans!r}")
    check(ask(f, "ping").startswith("ok "), "ping after garbage")
    f.close()
    conn.close()
    listing = probes(s, "list", "--json")
    check(listing["pattern_matches"] == 0 and not states(listing)["app.a"],
          f"garbage changed something: {listing}")
    s.do("fireall 1")
    s.finish()
    check(not [e for e in s.events() if e["name"] == "app.a"], "app.a recorded")


def test_exact(s):
    """A sensor firing in a tight loop: records exactly from the switch on (every
    firing after the first recorded one is recorded, until the switch off), never
    dated before the pattern was given."""
    s.do("reg loop.hot")
    s.find_pid()
    s.do("loop loop.hot 20000")  # 50000 firings a second: a small trace
    time.sleep(0.2)
    on = probes(s, "--json", "enable", "loop.hot")
    time.sleep(0.2)
    off = probes(s, "--json", "disable", "loop.*")
    time.sleep(0.1)
    fired = int(s.do("stop")[0].split()[1])
    s.finish()
    evs = [e for e in s.events() if e["name"] == "loop.hot"]
    ns = sorted(e["fields"]["n"] for e in evs)
    check(len(ns) > 0, "nothing recorded while on")
    check(ns == list(range(ns[0], ns[0] + len(ns))), "records are not one unbroken run")
    check(ns[0] > 1 and ns[-1] < fired, f"run {ns[0]}..{ns[-1]} of {fired}: not inside")
    first = min(e["clock"] for e in evs)
    check(first > on["since_ns"], f"first record {first} before the switch {on['since_ns']}")
    # After the switch off's answer at most one firing (already past its check) lands.
    late = [e for e in evs if e["clock"] > off["at_ns"]]
    check(len(late) <= 1, f"{len(late)} records after the switch off")



def test_entity(s):
    """Sensors whose flag sits on an entity (here a Box, the target): the entity flags
    start off (VIGIL_ENTITY_FLAGS=off, as vigil record --listen sets), yet a sensor
    `vigil probes` switches on records on every box, a traced-once one on every event,
    without taking the raises a monitor gave; a monitor's own `sensor` rule on another
    such sensor still records only on the entity it raised (box.b fires before box.once
    on each box: a raise box.once took would leave box.b nothing the second time);
    switched off, nothing."""
    s.do("boxes 3", "regbox box.a", "regbox box.b", "regbox box.once once")
    s.find_pid()
    s.do("firebox 1")  # nothing asked: every box's flag is down
    out = probes(s, "--json", "enable", "box.[ao]*")
    check(sorted(c["name"] for c in out["changed"]) == ["box.a", "box.once"],
          f"enable box.[ao]*: {out}")
    s.do("firebox 2")
    conn, f = attach(s.pid)  # a monitor raising box B1, for box.b only
    check(ask(f, "sensor +1 box.b").startswith("ok "), "sensor rule")
    ans = ask(f, "entities +1 Box B1")
    check(ans.startswith("ok ") and ans.split(" ")[2] == "1", f"entities rule: {ans!r}")
    s.do("firebox 3", "firebox 33")
    f.close()
    conn.close()
    conn, f = attach(s.pid)  # its hello comes once the detach is done (served in order)
    f.close()
    conn.close()
    s.do("firebox 4")
    out = probes(s, "--json", "disable", "box.*")
    check(sorted(c["name"] for c in out["changed"]) == ["box.a", "box.once"],
          f"disable box.*: {out}")
    s.do("firebox 5")
    s.finish()
    got = {}
    for e in s.events():
        if e["name"].startswith("box."):
            got.setdefault(e["name"], []).append((e["fields"]["n"], e["fields"]["box"]["name"]))
    every = [(n, b) for n in (2, 3, 33, 4) for b in ("B0", "B1", "B2")]
    want = {"box.a": every, "box.once": every, "box.b": [(3, "B1"), (33, "B1")]}
    check({k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()},
          f"recorded {got}, expected {want}")


IMPOSTOR = r"""
import socket, sys
pid = int(sys.argv[1])
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(b"\0vigil-control.%d" % pid)
srv.listen(4)
print("ready", flush=True)
while True:
    c, _ = srv.accept()
    c.sendall(b"hello vigil-control 1 pid=%d image=/tmp/fake\n" % pid)
    c.sendall(b"ok 1 1 0:fake.sensor:1\n" * 4)
    c.close()
"""


def test_impostor(s):
    """Someone else binds @vigil-control.PID first (here another user, nobody): `vigil
    probes --pid PID` checks the listener's credentials and refuses in one line."""
    target = subprocess.Popen(["sleep", "60"])
    fakes = []
    try:
        for user in (65534, None):  # another user; then ourselves, but not the target
            fake = subprocess.Popen(["/usr/bin/python3", "-c", IMPOSTOR, str(target.pid)],
                                    stdout=subprocess.PIPE, text=True, user=user)
            fakes.append(fake)
            check(fake.stdout.readline().strip() == "ready", "the impostor did not bind")
            p = subprocess.run([VIGIL, "probes", "--pid", str(target.pid), "list"],
                               capture_output=True, text=True, timeout=60)
            check(p.returncode == 1 and p.stderr.count("\n") == 1 and "refused" in p.stderr
                  and "held by pid %d" % fake.pid in p.stderr,
                  f"impostor (uid {user}) trusted: {p.returncode} {p.stdout!r} {p.stderr!r}")
            fake.kill()
            fake.wait()
    finally:
        for f in fakes:
            if f.poll() is None:
                f.kill()
                f.wait()
        target.kill()
        target.wait()


TESTS = {"switch": test_switch, "paging": test_paging, "bad": test_bad, "exact": test_exact,
         "impostor": test_impostor, "entity": test_entity}


def main():
    name = sys.argv[1]
    s = Subject()
    try:
        TESTS[name](s)
    except Failure as e:
        print(f"FAIL {name}: {e}\nsubject stderr:\n{s.stderr()}", file=sys.stderr)
        s.cleanup(keep=True)
        return 1
    except BaseException:
        s.cleanup(keep=True)
        raise
    s.cleanup()
    print(f"ok {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
