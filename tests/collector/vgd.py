"""Helpers of the collector tests: start a real vigild on a free loopback port, speak
its frames (docs/protocol.md) with stdlib sockets and struct."""
import atexit
import ctypes
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

HELLO, WELCOME, METADATA, PACKET, SCHEMA, RECORDS, ACK, CONTROL, REPLY, NOTE, BYE = range(1, 12)
(INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, DOUBLE, STRING, BYTES,
 ENTITY) = range(12)


def bindir():
    return os.environ.get("VIGIL_BIN") or os.path.join(
        os.path.dirname(__file__), "..", "..", "build", "bin")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def missing(what):
    """Something this test needs is not installed: a failure under CI=true (make deps
    installs everything), elsewhere the test ends skipped (77, its SKIP_RETURN_CODE)."""
    if os.environ.get("CI") == "true":
        fail("%s is not installed (CI=true: a missing test dependency is an error)" % what)
    print("SKIP: %s is not installed (make deps installs it)" % what)
    sys.exit(77)


def check(cond, msg):
    if not cond:
        fail(msg)


_running = []  # Collectors with a process: ended when the test exits, however it exits
_subjects = []  # `vigil record` processes of the test, ended (SIGTERM, passed on) likewise


def started(p):
    """p (a `vigil record`) is ended with SIGTERM if the test exits before it ends."""
    _subjects.append(p)
    return p


@atexit.register
def _end_processes():
    for p in _subjects:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    for c in list(_running):
        if c.proc and c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait()


def _die_with_parent():
    """In the child before exec: SIGKILL when the test process dies (a CTest timeout)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Collector:
    """A vigild process: started, stopped (SIGTERM), killed, paused."""
    started = []  # killed by the test's end if still running

    def __init__(self, out, extra=(), port=0, sock=None, prefix=()):
        self.out = out
        self.extra = list(extra)
        self.prefix = list(prefix)  # e.g. prlimit --fsize=N --
        self.port = port
        self.sock = sock
        self.proc = None
        self.log = os.path.join(out + ".vigild.log") if out else None

    def start(self):
        ready = self.out + ".ready"
        if os.path.exists(ready):
            os.unlink(ready)
        args = self.prefix + [os.path.join(bindir(), "vigild"), "-o", self.out, "--listen",
                "127.0.0.1:%d" % self.port, "--ready", ready]
        args += ["--socket", self.sock] if self.sock else ["--no-socket"]
        args += self.extra
        self.logf = open(self.log, "a")
        self.proc = subprocess.Popen(args, stderr=self.logf, preexec_fn=_die_with_parent)
        if self not in _running:
            _running.append(self)
        Collector.started.append(self)
        deadline = time.time() + 20
        while not os.path.exists(ready):
            if self.proc.poll() is not None:
                fail("vigild exited with %d: %s" % (self.proc.returncode, self.logtext()))
            if time.time() > deadline:
                fail("vigild did not get ready")
            time.sleep(0.02)
        with open(ready) as f:
            info = json.load(f)
        self.port = info["port"]  # kept: a restart listens on the same port
        return self

    def addr(self):
        return "127.0.0.1:%d" % self.port

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                fail("vigild did not stop on SIGTERM")
        rc = self.proc.returncode if self.proc else 0
        self.proc = None
        self.logf.close()
        return rc

    def kill(self):
        self.proc.kill()
        self.proc.wait()
        self.proc = None
        self.logf.close()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def logtext(self):
        try:
            with open(self.log) as f:
                return f.read()
        except OSError:
            return ""


def s(text):
    b = text.encode() if isinstance(text, str) else text
    return struct.pack("<I", len(b)) + b


def frame(ftype, payload=b""):
    return struct.pack("<IB", len(payload) + 1, ftype) + payload


def hello(host="testhost", pid=4242, start=1, program="app.py", kind=1, token="", secret=None):
    """Version 1 HELLO, or version 2 with secret (bytes, b"" on a first HELLO)."""
    p = (struct.pack("<H", 1 if secret is None else 2) + s(token) + s(host)
         + struct.pack("<IQ", pid, start) + s(program) + struct.pack("<B", kind))
    return frame(HELLO, p + (s(secret) if secret is not None else b""))


def schema(sid, event, fields, relation="", kind=0, placement=0, strategy=0):
    p = struct.pack("<H", sid) + s(event) + s(relation) + struct.pack("<BBBH", kind, placement,
                                                                       strategy, len(fields))
    for name, ftype, ekind in fields:
        p += s(name) + struct.pack("<B", ftype) + s(ekind)
    return frame(SCHEMA, p)


def records(seq, recs):
    p = struct.pack("<QI", seq, len(recs))
    for sid, t, tid, data in recs:
        p += struct.pack("<HQI", sid, t, tid) + s(data)
    return frame(RECORDS, p)


class Peer:
    def __init__(self, port, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def read_frame(self):
        while True:
            if len(self.buf) >= 5:
                n, t = struct.unpack_from("<IB", self.buf)
                if len(self.buf) >= 4 + n:
                    payload = self.buf[5:4 + n]
                    self.buf = self.buf[4 + n:]
                    return t, payload
            chunk = self.sock.recv(65536)
            if not chunk:
                return None, None
            self.buf += chunk

    def welcome(self):
        t, p = self.read_frame()
        check(t == WELCOME, "expected WELCOME, got %r" % t)
        return struct.unpack("<QQ", p)

    def ack(self):
        t, p = self.read_frame()
        check(t == ACK, "expected ACK, got %r" % t)
        return struct.unpack("<Q", p)[0]

    def closed(self):
        """True once the collector closed the connection (reading all it sends)."""
        try:
            while True:
                t, _ = self.read_frame()
                if t is None:
                    return True
        except (ConnectionResetError, socket.timeout):
            return True

    def close(self):
        self.sock.close()


def run(args, timeout=90, **kw):
    try:
        return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        fail("%s did not end within %d s" % (" ".join(args), timeout))


def dump(path):
    r = run([os.path.join(bindir(), "vigil"), "dump", path])
    return r


def event_counts(text):
    """{event name: count} of `vigil dump --json` output."""
    counts = {}
    for line in text.splitlines():
        if line.startswith("{"):
            name = json.loads(line)["name"]
            counts[name] = counts.get(name, 0) + 1
    return counts


def dump_json(path):
    r = run([os.path.join(bindir(), "vigil"), "dump", "--json", path])
    return r


def discarded(stderr):
    """The events discarded that `vigil dump` reports on stderr."""
    import re
    m = re.search(r"(\d+) events discarded", stderr)
    return int(m.group(1)) if m else None


def run_cases(script, names):
    """The command line of a test script: `SCRIPT CASE` runs case_CASE of `names` (the
    script's globals) in a fresh folder, kills the collectors it left running, removes
    the folder when the case passed (or was skipped) and keeps it otherwise."""
    import shutil
    import tempfile
    cases = {k[5:]: v for k, v in names.items() if k.startswith("case_")}
    if len(sys.argv) != 2 or sys.argv[1] not in cases:
        print("usage: %s.py %s" % (script, "|".join(sorted(cases))))
        sys.exit(2)
    work = tempfile.mkdtemp(prefix="vigil-%s-%s-" % (script.split("_")[0], sys.argv[1]))
    passed = False
    try:
        cases[sys.argv[1]](work)
        passed = True
    except SystemExit as e:
        passed = e.code == 77  # skipped: nothing to look at
        raise
    finally:
        for c in Collector.started:
            if c.alive():
                c.proc.kill()
                c.proc.wait()
        if os.environ.get("VIGIL_TEST_VERBOSE"):
            for f in os.listdir(work):
                if f.endswith(".log"):
                    print(open(os.path.join(work, f)).read())
        if passed:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("%s: kept %s" % (script, work), file=sys.stderr)
    print("ok")
