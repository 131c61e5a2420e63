"""VIGIL_PROBES_FILE (docs/control.md "Pattern file"): the subject re-reads a pattern file
every VIGIL_PROBES_PERIOD and applies it as `vigil probes` would. With --vigild, the same
file kept by the collector instead (vigild --probes-file, docs/protocol.md "Pattern
file"): the subject sends to vigild (VIGIL_TO), which re-reads the file and applies it as
`vigil probes --collector` would, saying its problems in its log.

usage: probes_file_test.py SUBJECT [--vigild]   (VIGIL_BIN: the build's bin directory)

The subject (tests/probes/probes_subject.c) registers app.a and app.b (off: VIGIL_SENSORS
is vg.*) and fires them with increasing numbers n while the test changes the file; `ison`
says when a change took effect. Checked, on numbers rather than clocks:
  * a change takes effect, and only from then on: the recorded n of a sensor are exactly
    those fired while it was on (none fired before the file was written, every one fired
    while the subject said it was on before and after, none while it said off);
  * a malformed file, an empty one, a half-written one (written in two steps, the first
    without its last newline) and a missing one each leave the patterns in force and are
    said in exactly one line, however many times the file is read;
  * once the file is whole again, it applies.
Waits are on conditions (the subject's answer, a line on stderr), with 60 s deadlines."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("VIGIL_BIN", "build/bin")
VIGIL = os.path.join(BIN, "vigil")
SUBJECT = sys.argv[1]
VIGILD = "--vigild" in sys.argv[2:]
PERIOD_S = 0.02
# Whose lines: the subject's stderr, or vigild's log.
SAYS = "--probes-file" if VIGILD else "VIGIL_PROBES_FILE"


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Test:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="vigil-probesfile-")
        self.trace = os.path.join(self.dir, "trace")
        self.file = os.path.join(self.dir, "probes")
        self.write("# nothing yet\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("VIGIL_")}
        self.err_path = os.path.join(self.dir, "stderr")
        self.err = open(self.err_path, "w")
        self.vigild = None
        if VIGILD:
            self.start_vigild()
            env.update({"VIGIL_TO": f"127.0.0.1:{self.port}", "VIGIL_TO_LINGER": "60000",
                        "VIGIL_SPOOL": os.path.join(self.dir, "spool"),
                        "VIGIL_SENSORS": "vg.*"})
        else:
            env.update({"VIGIL_OUT": self.trace, "VIGIL_SENSORS": "vg.*",
                        "VIGIL_PROBES_FILE": self.file, "VIGIL_PROBES_PERIOD": "20ms"})
        self.p = subprocess.Popen([SUBJECT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err, env=env, text=True)
        self.n = 0
        self.fired = {"app.a": [], "app.b": []}  # (n, state the subject said before)
        self.known_on = {"app.a": [], "app.b": []}  # n fired after `ison` said 1
        self.known_off = {"app.a": [], "app.b": []}

    def start_vigild(self):
        ready = os.path.join(self.dir, "ready")
        self.log_path = os.path.join(self.dir, "vigild.log")
        self.log = open(self.log_path, "w")
        self.vigild = subprocess.Popen(
            [os.path.join(BIN, "vigild"), "-o", self.trace, "--listen", "127.0.0.1:0",
             "--no-socket", "--ready", ready, "--probes-file", self.file,
             "--probes-period", "20ms"], stderr=self.log)
        end = time.monotonic() + 60
        while not os.path.exists(ready):
            if self.vigild.poll() is not None or time.monotonic() > end:
                self.vigild.kill()
                self.vigild.wait()
                raise Failure(f"vigild did not get ready: {open(self.log_path).read()}")
            time.sleep(0.02)
        with open(ready) as f:
            self.port = json.load(f)["port"]

    def stop_vigild(self):
        """Ends vigild by its pid (SIGTERM: it stops in order) and returns the trace of
        this host."""
        self.vigild.terminate()
        check(self.vigild.wait(timeout=60) == 0, f"vigild exit {self.vigild.returncode}")
        hosts = [os.path.join(self.trace, h) for h in os.listdir(self.trace)
                 if not h.startswith(".")]
        check(len(hosts) == 1, f"hosts collected: {hosts}")
        return hosts[0]

    def write(self, text):
        tmp = self.file + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.rename(tmp, self.file)

    def do(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        ans = self.p.stdout.readline().strip()
        check(ans.startswith("done"), f"subject answered {ans!r} to {line!r}")
        return ans

    def fire_all(self):
        """Fires both sensors once each, asking whether each is on before and after: a
        firing is known on (off) when both answers say so (a change may land between
        them; each step of the test changes a sensor at most once)."""
        for s in ("app.a", "app.b"):
            before = self.do(f"ison {s}")
            self.n += 1
            self.do(f"fire {s} {self.n}")
            after = self.do(f"ison {s}")
            if before == after:
                (self.known_on if after == "done 1" else self.known_off)[s].append(self.n)

    def until(self, want, what):
        """Fires both sensors until the subject says each is as `want` says."""
        end = time.monotonic() + 60
        while time.monotonic() < end:
            self.fire_all()
            if all(self.do(f"ison {s}") == ("done 1" if on else "done 0")
                   for s, on in want.items()):
                self.fire_all()
                return
            time.sleep(PERIOD_S / 2)
        raise Failure(f"{what}: the file never took effect ({want})")

    def stderr_lines(self):
        """The problems said (the subject's stderr or vigild's log)."""
        with open(self.log_path if VIGILD else self.err_path) as f:
            return [l for l in f.read().splitlines() if SAYS in l and "stay in force" in l]

    def said(self, fragment, what):
        """Waits for a line with `fragment`; then lets the file be read many more times
        (reads are on their own, every 20 ms: a pause makes many, however loaded the
        machine; the check cannot fail for lack of them) and wants it said once."""
        end = time.monotonic() + 60
        while time.monotonic() < end and not any(fragment in l for l in self.stderr_lines()):
            time.sleep(PERIOD_S)
        check(any(fragment in l for l in self.stderr_lines()),
              f"{what}: nothing said ({self.stderr_lines()})")
        time.sleep(30 * PERIOD_S)
        lines = [l for l in self.stderr_lines() if fragment in l]
        check(len(lines) == 1, f"{what}: said {len(lines)} times: {lines}")
        check("stay in force" in lines[0], f"{what}: {lines[0]!r}")
        self.fire_all()

    def run(self):
        self.do("reg app.a app.b")
        self.fire_all()
        check(not self.known_on["app.a"] and not self.known_on["app.b"], "on before any file")
        written_at = self.n  # everything fired up to here came before the change
        self.write("# the first change\nenable app.a\n")
        self.until({"app.a": True, "app.b": False}, "enable app.a")
        self.write("disable app.a\nenable %^app\\.b$\n")
        self.until({"app.a": False, "app.b": True}, "disable app.a, enable app.b")

        before = len(self.stderr_lines())
        self.write("enable app.a\nfrobnicate app.b\n")
        self.said(":2: 'frobnicate' is not enable or disable", "a bad verb")
        self.write("enable %(\n")
        self.said(":1: bad regular expression", "a bad regex")
        self.write("")
        self.said("the file is empty", "an empty file")
        check(self.do("ison app.a") == "done 0" and self.do("ison app.b") == "done 1",
              "a bad file changed the patterns in force")
        # Half-written: the first part without its newline, then the rest.
        with open(self.file, "w") as f:
            f.write("enable app.a\ndisa")
            f.flush()
            self.said("the last line has no newline", "a half-written file")
            check(self.do("ison app.a") == "done 0", "a half-written file applied")
            f.write("ble app.b\n")
        self.until({"app.a": True, "app.b": False}, "the completed file")
        os.unlink(self.file)
        self.said("cannot read it (No such file or directory)", "a missing file")
        check(self.do("ison app.a") == "done 1" and self.do("ison app.b") == "done 0",
              "a missing file changed the patterns in force")
        self.write("enable app.b\n")
        self.until({"app.a": False, "app.b": True}, "the file back")
        lines = self.stderr_lines()[before:]
        check(len(lines) == 5, f"five problems, five lines: {lines}")
        self.p.stdin.write("quit\n")
        self.p.stdin.close()
        check(self.p.wait(timeout=120) == 0, f"subject exit {self.p.returncode}")
        trace = self.trace
        if VIGILD:
            with open(self.err_path) as f:
                check("stays in" not in f.read(), "the subject kept data in its spool")
            trace = self.stop_vigild()
            with open(self.log_path) as f:
                applied = [l for l in f if "pattern" in l and "in force," in l]
            check(len(applied) == 5, f"five contents applied, five lines: {applied}")
        self.check_trace(trace, written_at)

    def check_trace(self, trace, written_at):
        d = subprocess.run([VIGIL, "dump", "--json", trace], capture_output=True,
                           text=True)
        got = {"app.a": set(), "app.b": set()}
        for line in d.stdout.splitlines():
            o = json.loads(line)
            if o["name"] in got:
                got[o["name"]].add(o["fields"]["n"])
        for s in got:
            check(not any(n <= written_at for n in got[s]),
                  f"{s}: recorded before the file changed: {sorted(got[s])[:5]}")
            check(set(self.known_on[s]) <= got[s],
                  f"{s}: fired while on, not recorded: {sorted(set(self.known_on[s]) - got[s])}")
            check(not (set(self.known_off[s]) & got[s]),
                  f"{s}: fired while off, recorded: {sorted(set(self.known_off[s]) & got[s])}")
            check(self.known_on[s], f"{s}: never on")
        print(f"ok: app.a {len(got['app.a'])} events, app.b {len(got['app.b'])}; "
              f"{len(self.known_off['app.a']) + len(self.known_off['app.b'])} firings while off")


def main():
    t = Test()
    try:
        t.run()
    except Failure as e:
        print("FAIL:", e)
        for p in (t.p, t.vigild):
            if p and p.poll() is None:
                p.kill()
                p.wait()
        print(f"(kept {t.dir})")
        sys.exit(1)
    finally:
        t.err.close()
        if t.vigild:
            t.log.close()
    shutil.rmtree(t.dir)


if __name__ == "__main__":
    main()
