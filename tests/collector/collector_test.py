"""End-to-end tests of the collector (docs/protocol.md): a real vigild on a free loopback
port, C subjects through `vigil record --to`, frames written by hand for the rest.
usage: collector_test.py CASE"""
import json
import re
import os
import shutil
import signal
import struct
import subprocess
import sys
import socket
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vgd import *  # noqa: E402,F401,F403

BIN = bindir()
VIGIL = os.path.join(BIN, "vigil")
MAILBOX = os.path.join(BIN, "mailbox")


def record_to(addr, args, env=None, **kw):
    e = dict(os.environ)
    e.update(env or {})
    return run([VIGIL, "record", "--to", addr, "--", MAILBOX] + args, env=e, **kw)


def record_local(out, args):
    r = run([VIGIL, "record", "-o", out, "--", MAILBOX] + args)
    check(r.returncode == 0, "local vigil record: %s" % r.stderr)


def counts_of(path):
    r = dump_json(path)
    check(r.returncode == 0, "vigil dump %s: exit %d: %s" % (path, r.returncode, r.stderr))
    return event_counts(r.stdout), r.stderr


def same_counts(a, b, what):
    if a != b:
        diff = {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)}
        fail("%s: event counts differ (collector, local): %s" % (what, diff))


QUERY = """range of S is SendMessage
range of W is Waiting
retrieve Resumed (Process = W.Process, Mailbox = W.Mailbox)
where S.Mailbox = W.Mailbox
when S precede end of W
"""


def query_rows(path):
    r = run([VIGIL, "query", path, "-e", QUERY, "--format", "csv"])
    check(r.returncode == 0, "vigil query %s: %s" % (path, r.stderr))
    return len(r.stdout.splitlines())


def spools():
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else "/tmp"
    return [n for n in os.listdir(base) if n.startswith("vigil-spool-")]


def case_help(work):
    r = run([os.path.join(BIN, "vigild"), "--help"])
    check(r.returncode == 0 and "examples:" in r.stdout, "vigild --help")
    r = run([os.path.join(BIN, "vigild"), "--bogus"])
    check(r.returncode == 2 and r.stderr.count("\n") == 1, "vigild --bogus: %r" % r.stderr)
    r = run([os.path.join(BIN, "vigild"), "-o", work + "/x", "--listen", "nonsense:1",
             "--insecure"])
    check(r.returncode == 1 and "--listen nonsense" in r.stderr, "bad --listen: %r" % r.stderr)
    # Beyond loopback: not without a token or --insecure (nothing is bound: it stops first).
    r = run([os.path.join(BIN, "vigild"), "-o", work + "/x", "--listen", "0.0.0.0:0"])
    check(r.returncode == 2 and "--insecure" in r.stderr and r.stderr.count("\n") == 1,
          "non-loopback --listen without a credential: %r" % r.stderr)


def case_mailbox(work):
    """The mailbox through the collector reads like a local recording of the same seed."""
    spools_before = set(spools())
    c = Collector(work + "/out").start()
    args = ["--messages", "5000", "--seed", "11", "--processes", "6"]
    r = record_to(c.addr(), args)
    check(r.returncode == 0, "vigil record --to: %s" % r.stderr)
    check("sent to the collector" in r.stderr, "no summary: %r" % r.stderr)
    record_local(work + "/local", args)
    check(c.stop() == 0, "vigild did not exit 0 on SIGTERM")
    host = os.listdir(work + "/out")
    check(sorted(host) == [".vigild", os.uname().nodename], "hosts: %r" % host)
    a, _ = counts_of(work + "/out")
    b, _ = counts_of(work + "/local")
    same_counts(a, b, "mailbox")
    check(a.get("mailbox.SendMessage") == 5000, "SendMessage count %r" % a.get("mailbox.SendMessage"))
    qa, qb = query_rows(work + "/out"), query_rows(work + "/local")
    check(qa == qb and qa > 1, "query rows: collector %d, local %d" % (qa, qb))
    # The spool `vigil record --to` made went away with the subject.
    check(not set(spools()) - spools_before, "spool left: %r" % (set(spools()) - spools_before))


def case_unix(work):
    sock = work + "/vigild.sock"
    c = Collector(work + "/out", sock=sock).start()
    r = record_to("unix:" + sock, ["--messages", "300", "--seed", "2"])
    check(r.returncode == 0, "vigil record --to unix: %s" % r.stderr)
    # Another user (nobody) who can reach the socket file is refused by its uid.
    os.chmod(work, 0o711)
    os.chmod(sock, 0o777)
    probe = ("import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.settimeout(20)\n"
             "s.connect(sys.argv[1])\nprint('closed' if s.recv(100) == b'' else 'open')\n")
    r = subprocess.run(["/usr/bin/python3", "-c", probe, sock], user=65534, capture_output=True,
                       text=True, timeout=60)
    check(r.stdout.strip() == "closed", "another user's connection: %r %r" % (r.stdout, r.stderr))
    wait_for(lambda: "neither root nor vigild's user; refused" in c.logtext(), "the refusal")
    check(c.stop() == 0, "vigild exit status")
    check(not os.path.exists(sock), "the socket stays after SIGTERM")
    a, _ = counts_of(work + "/out")
    check(a.get("mailbox.SendMessage") == 300, "counts %r" % a)


def case_fork_exec(work):
    """A shell that forks and execs: every process image reaches the collector (an
    exec'd image ships what its predecessor left in the spool)."""
    c = Collector(work + "/out").start()
    cmd = ["/bin/sh", "-c", "ls / >/dev/null; (echo hi | cat >/dev/null); true"]
    sent = run([VIGIL, "record", "--to", c.addr(), "--"] + cmd)
    check(sent.returncode == 0, "vigil record --to: %s" % sent.stderr)
    r = run([VIGIL, "record", "-o", work + "/local", "--"] + cmd)
    check(r.returncode == 0, "vigil record: %s" % r.stderr)
    check(c.stop() == 0, "vigild exit status")
    a, _ = counts_of(work + "/out")
    b, _ = counts_of(work + "/local")
    same_counts(a, b, "fork and exec (vigil record --to said: %r)" % sent.stderr)
    # the process images by name, as the reader lists them in either layout (vigild's
    # directory per image, vigil record's shared directory)
    names, local = (sorted(o["proc"] for o in map(json.loads, run(
        [VIGIL, "dump", "--stats", "--json", d]).stdout.splitlines()) if "image" in o)
        for d in (os.path.join(work, "out", os.uname().nodename), work + "/local"))
    check(names and names == local, "images %r, locally %r" % (names, local))


def case_control_relay(work):
    """A CONTROL frame to a C subject is answered by its control channel's parser (REPLY),
    in order; the subject keeps shipping meanwhile (a fake collector, stdlib sockets)."""
    import socket as so
    srv = so.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(30)
    env = dict(os.environ, VIGIL_TO="127.0.0.1:%d" % srv.getsockname()[1],
               VIGIL_SPOOL=work + "/spool", VIGIL_TO_LINGER="200")
    env.pop("VIGIL_OUT", None)
    lib = os.path.join(BIN, "libvigil.so")
    env["LD_PRELOAD"] = lib
    p = subprocess.Popen([MAILBOX, "--messages", "2000", "--pace", "1000"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    conn, _ = srv.accept()
    peer = Peer.__new__(Peer)
    peer.sock, peer.buf = conn, b""
    conn.settimeout(30)
    t, payload = peer.read_frame()
    check(t == HELLO, "first frame %r" % t)
    peer.send(frame(WELCOME, struct.pack("<QQ", 1, 0)))
    peer.send(frame(CONTROL, s("list 0")) + frame(CONTROL, s("ping")) + frame(CONTROL, s("bogus")))
    replies, types = [], set()
    while len(replies) < 3:
        t, payload = peer.read_frame()
        check(t is not None, "connection closed before the replies")
        types.add(t)
        if t == REPLY:
            replies.append(payload[4:].decode())
    check(replies[0].startswith("ok ") and "vg.process.begin" in replies[0], "list: %r" % replies[0])
    check(replies[1].startswith("ok ") and replies[2].startswith("error"), "replies %r" % replies)
    check(METADATA in types or PACKET in types or NOTE in types, "nothing else came: %r" % types)
    p.kill()
    p.wait()
    conn.close()
    srv.close()


def sends_and_marks(path, mark):
    """The SendMessage events (msg number, ts) and the first `mark` event's ts in a
    (possibly still growing) collected trace, as `vigil dump --json` reads it."""
    r = dump_json(path)
    sends, first_mark = [], None
    for line in r.stdout.splitlines():
        if not line.startswith("{"):
            continue
        e = json.loads(line)
        if e["name"] == "mailbox.SendMessage":
            sends.append((e["fields"]["msg"], e["ts"]))
        elif e["name"] == mark and (first_mark is None or e["ts"] < first_mark):
            first_mark = e["ts"]
    return sends, first_mark


def case_probes(work):
    """vigil probes --collector (docs/protocol.md "Probes"): vigild reads each subject's
    sensor table, matches a pattern once and pushes only the switches by id; the switch
    shows in the collected trace, a pattern that names nothing switches nothing, and a
    bad pattern is refused before anything is sent.

    Sequenced by conditions, not sleeps: SendMessage is switched off once the collected
    trace holds some of its (numbered) sends, small packets making them arrive early;
    then ProcessState is switched on. The subject applies the two switches in order, so
    its first ProcessState event marks a time after the disable: no send may come later,
    and the subject must have gone on running (it has marks)."""
    c = Collector(work + "/out").start()
    args = ["--messages", "3000", "--seed", "3", "--pace", "300"]
    p = subprocess.Popen([VIGIL, "record", "--to", c.addr(), "--sensors", "vg.*", "--",
                          MAILBOX] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, VIGIL_PACKET_SIZE="4096"))

    def probes(*a):
        return run([VIGIL, "probes", "--collector", c.addr()] + list(a))

    # wait until the subject is connected (vigild wrote its metadata); then the first
    # list shows its sensors (it used to show none: the table was only asked for then)
    deadline = time.time() + 20
    while not any(os.path.exists(os.path.join(work, "out", h, i, "metadata"))
                  for h in os.listdir(work + "/out") if os.path.isdir(work + "/out/" + h)
                  for i in os.listdir(os.path.join(work, "out", h))):
        check(p.poll() is None and time.time() < deadline, "the subject never connected")
        time.sleep(0.02)
    r = probes("--json", "list")
    check(r.returncode == 0, "list: %s" % r.stderr)
    table = json.loads(r.stdout)["sensors"]
    check(any(e["name"] == "mailbox.SendMessage" for e in table),
          "the first list after the subject connected: %r" % table)
    send = [e for e in table if e["name"] == "mailbox.SendMessage"][0]
    check(not send["on"], "SendMessage is on before any probe: %r" % send)
    r = probes("enable", "nothing.*")
    check(r.returncode == 0 and " 0 sensor(s) switched" in r.stdout, "no match: %r" % r.stdout)
    r = probes("enable", "%^mailbox\\.Send")
    check(r.returncode == 0 and " 1 sensor(s) switched" in r.stdout,
          "enable: %r %r" % (r.stdout, r.stderr))
    r = probes("--json", "list", "mailbox.*")
    listed = {e["name"]: e["on"] for e in json.loads(r.stdout)["sensors"]}
    check(listed.get("mailbox.SendMessage") is True and listed.get("mailbox.Waiting.end") is False,
          "after enable: %r" % listed)
    try:
        # sends recorded while on: wait until the collector has some
        deadline = time.time() + 60
        while not sends_and_marks(work + "/out", "-")[0]:
            check(p.poll() is None, "the subject ended before any send reached the collector")
            check(time.time() < deadline, "no SendMessage reached the collector within 60 s")
            time.sleep(0.05)
        r = probes("disable", "mailbox.SendMessage")
        check(r.returncode == 0 and " 1 sensor(s) switched" in r.stdout,
              "disable: %r" % r.stdout)
        r = probes("enable", "mailbox.ProcessState")
        check(r.returncode == 0 and " 1 sensor(s) switched" in r.stdout, "mark: %r" % r.stdout)
        check(p.poll() is None, "the subject ended before the disable: the test proves nothing")
        r = probes("enable", "%(")
        check(r.returncode == 2 and "regular expression" in r.stderr, "bad regex: %r" % r.stderr)
        sequenced = True
    finally:
        if not sequenced and p.poll() is None:
            p.kill()  # a failed check: the subject is not left running
            p.wait()
            c.stop()
    _, err = p.communicate(timeout=120)
    check(p.returncode == 0, "subject: %s" % err.decode())
    check(c.stop() == 0, "vigild exit status")
    a, _ = counts_of(work + "/out")
    sends, mark = sends_and_marks(work + "/out", "mailbox.ProcessState")
    n = len(sends)
    msgs = [m for m, _ in sends]
    check(0 < n < 3000 and len(set(msgs)) == n and all(1 <= m <= 3000 for m in msgs),
          "SendMessage recorded %d times (%d distinct msg numbers in 1..3000)" %
          (n, len(set(msgs))))
    check(mark is not None and a.get("mailbox.ProcessState", 0) > 0,
          "no ProcessState after the disable: the subject did not go on running")
    late = sorted(m for m, ts in sends if ts >= mark)
    check(not late, "%d send(s) recorded after the disable (msg %s)" % (len(late), late[:5]))
    check(not a.get("mailbox.Waiting.end"), "a sensor never enabled recorded: %r" % a)
    print("probes: %d of 3000 sends recorded while the probe was on, none after the disable "
          "(%d ProcessState events after it)" % (n, a["mailbox.ProcessState"]))


def case_concurrent(work):
    """Ten subjects at once, each complete in its host trace."""
    c = Collector(work + "/out", extra=["--quiet"]).start()
    n = 10
    procs = []
    for i in range(n):
        env = dict(os.environ, VIGIL_HOST="host%d" % (i % 3))
        procs.append(subprocess.Popen(
            [VIGIL, "record", "--to", c.addr(), "--", MAILBOX, "--messages", str(1000 + i),
             "--seed", str(i)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in procs:
        _, err = p.communicate(timeout=120)
        check(p.returncode == 0, "subject: %s" % err.decode())
    check(c.stop() == 0, "vigild exit status")
    check(sorted(os.listdir(work + "/out")) == [".vigild", "host0", "host1", "host2"],
          "hosts %r" % os.listdir(work + "/out"))
    sends = []
    for h in ("host0", "host1", "host2"):
        for img in os.listdir(os.path.join(work, "out", h)):
            a, err = counts_of(os.path.join(work, "out", h, img))
            check(discarded(err) == 0, "%s: discarded: %s" % (img, err))
            check(a.get("vg.process.end") == 1, "%s: no process end" % img)
            sends.append(a.get("mailbox.SendMessage"))
    check(sorted(sends) == [1000 + i for i in range(n)], "SendMessage per subject %r" % sends)


def wait_for(cond, what, timeout=60):
    """Polls cond() until it holds; fails saying what did not happen within timeout s."""
    deadline = time.time() + timeout
    while not cond():
        check(time.time() < deadline, "%s within %d s" % (what, timeout))
        time.sleep(0.01)


def subject_of(p, program):
    """The pid of program once `vigil record` (p) runs it (its child that exec'd it)."""
    found = []
    exe = os.path.realpath(program)

    def child():
        try:
            with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            kids = []
        for k in kids:
            try:
                if os.readlink("/proc/%d/exe" % k) == exe:
                    found.append(k)
            except OSError:
                pass
        return found or p.poll() is not None
    wait_for(child, "vigil record did not run %s" % program)
    if not found:
        fail("vigil record ended without running %s: %s" % (program, p.communicate()[1].decode()))
    return found[0]


def pause(pid, what):
    """SIGSTOP, then checks the process is stopped (not ended) so that what comes next
    happens while it is alive, whatever the machine's speed."""
    os.kill(pid, signal.SIGSTOP)

    def state():
        try:
            with open("/proc/%d/stat" % pid) as f:
                return f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return "gone"
    wait_for(lambda: state() in ("T", "Z", "gone"), "pid %d did not stop" % pid)
    check(state() == "T", "the subject ended before %s; give it more messages" % what)


def stored(out):
    """Bytes of stream files the collector has written under out."""
    n = 0
    for root, _, files in os.walk(out):
        n += sum(os.path.getsize(os.path.join(root, f)) for f in files if f.startswith("stream-"))
    return n


def case_restart(work):
    """The collector killed mid-run and restarted: the subject reconnects, resends what
    was not acknowledged, and nothing is lost. The subject is paused (SIGSTOP) from just
    before each kill until the new collector listens, so that it is alive then."""
    c = Collector(work + "/out").start()
    args = ["--messages", "2000", "--seed", "5", "--pace", "1000"]
    env = dict(os.environ, VIGIL_TO_LINGER="20000")
    p = started(subprocess.Popen([VIGIL, "record", "--to", c.addr(), "--", MAILBOX] + args,
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    sub = subject_of(p, MAILBOX)
    try:
        wait_for(lambda: stored(work + "/out") > 0, "the collector stored nothing")
        pause(sub, "the first kill")
        c.kill()
        before = stored(work + "/out")
        c.start()  # same port, same directory
        os.kill(sub, signal.SIGCONT)
        # the second time with packets acknowledged after a restart
        wait_for(lambda: c.logtext().count("subject mailbox") >= 2
                 and stored(work + "/out") > before, "the subject did not reconnect and ship")
        pause(sub, "the second kill")
        c.kill()
        c.start()
    finally:
        try:
            os.kill(sub, signal.SIGCONT)
        except ProcessLookupError:  # it ended: the failure being reported says why
            pass
    _, err = p.communicate(timeout=120)
    check(p.returncode == 0, "subject: %s" % err.decode())
    check(c.stop() == 0, "vigild exit status")
    log = c.logtext()
    acked = [int(line.rsplit("acked ", 1)[1]) for line in log.splitlines()
             if "subject mailbox" in line]
    check(len(acked) == 3 and acked[2] > acked[1], "the subject did not reconnect twice, "
          "with packets acknowledged by the restarted collector:\n" + log)
    record_local(work + "/local", args)
    a, err = counts_of(work + "/out")
    check(discarded(err) == 0, "discarded: %s" % err)
    b, _ = counts_of(work + "/local")
    same_counts(a, b, "restart")


def state_acked(out):
    """{state file name: acked} of the collector's subjects (DIR/.vigild/HOST/*.state)."""
    acked = {}
    base = os.path.join(out, ".vigild")
    for h in os.listdir(base) if os.path.isdir(base) else []:
        if not os.path.isdir(os.path.join(base, h)):
            continue
        for n in os.listdir(os.path.join(base, h)):
            if n.endswith(".state"):
                try:
                    with open(os.path.join(base, h, n)) as f:
                        m = re.search(r"^acked (\d+)$", f.read(), re.M)
                except OSError:
                    continue
                acked[h + "/" + n] = int(m.group(1)) if m else 0
    return acked


def wait_for(cond, what, timeout=60):
    deadline = time.time() + timeout
    while not cond():
        if time.time() > deadline:
            fail("timed out waiting for " + what)
        time.sleep(0.02)


def case_crash(work):
    """The collector SIGKILLed twice and restarted under many subjects: every subject
    resumes from what the collector made durable, and every image holds exactly the
    events its program emitted (mailbox: SendMessage = --messages), none discarded."""
    n = int(os.environ.get("VIGIL_CRASH_SUBJECTS", "48"))
    c = Collector(work + "/out", extra=["--quiet"]).start()
    host = os.path.join(work, "out", os.uname().nodename)
    env = dict(os.environ, VIGIL_TO_LINGER="60000")
    procs = []
    for i in range(n):
        procs.append(subprocess.Popen(
            [VIGIL, "record", "--to", c.addr(), "--", MAILBOX, "--messages", str(1500 + i),
             "--seed", str(100 + i), "--pace", "8000"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    try:
        for kill in range(2):
            # Each subject has something acknowledged in this collector's life.
            before = state_acked(work + "/out")
            wait_for(lambda: len(state_acked(work + "/out")) == n and all(
                v > before.get(k, 0) for k, v in state_acked(work + "/out").items()),
                "every subject acknowledged (kill %d)" % kill)
            check(all(p.poll() is None for p in procs),
                  "a subject ended before the collector was killed; make them slower")
            c.kill()
            if kill == 0:
                # A write the crash cut: half a packet at the end of a stream file (the
                # first half of its own first packet), cut off when its subject is back.
                img = os.path.join(host, sorted(os.listdir(host))[0])
                st = os.path.join(img, sorted(x for x in os.listdir(img) if x.startswith("stream"))[0])
                with open(st, "rb") as f:
                    head = f.read(200)
                check(len(head) == 200, "no packet in " + st)
                with open(st, "ab") as f:
                    f.write(head)
            else:
                c.extra.append("--sync")  # the stricter policy for the last part of the run
            c.start()  # same port, same directory
        errs = []
        deadline = time.time() + 180
        for p in procs:
            _, err = p.communicate(timeout=max(1, deadline - time.time()))
            errs.append(err.decode())
            check(p.returncode == 0, "subject: %s" % err.decode())
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    check(c.stop() == 0, "vigild exit status")
    check("bytes of a packet not written whole" in c.logtext(), "the cut packet was not repaired")
    sends = []
    for img in sorted(os.listdir(host)):
        a, err = counts_of(os.path.join(host, img))
        check(discarded(err) == 0, "%s: discarded: %s" % (img, err))
        check(a.get("vg.process.end") == 1, "%s: no process end: %r" % (img, a))
        sends.append(a.get("mailbox.SendMessage"))
    check(sorted(sends, key=lambda x: x or 0) == [1500 + i for i in range(n)],
          "SendMessage per subject %r" % sends)
    for e in errs:
        check("did not acknowledge" not in e, "a subject kept data: %s" % e)


def case_foreign(work):
    """A local peer that opens a session as a running subject (host, pid and start are
    readable in /proc) with a forged sequence number is refused without the secret the
    collector issued at the subject's first HELLO; the real subject loses nothing."""
    c = Collector(work + "/out").start()
    env = dict(os.environ, VIGIL_TO_LINGER="30000")
    p = subprocess.Popen([VIGIL, "record", "--to", c.addr(), "--", MAILBOX, "--messages",
                          "3000", "--seed", "21", "--pace", "700"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: any(v > 0 for v in state_acked(work + "/out").values()),
                 "the subject's first acknowledgement")
        (key,) = state_acked(work + "/out").keys()
        host, name = key.split("/")
        pid, start = (int(x) for x in name[:-len(".state")].split("-"))
        st = os.stat(os.path.join(work, "out", ".vigild", key))
        check(st.st_mode & 0o077 == 0, "state file (the secret) readable by others")
        forged = frame(PACKET, struct.pack("<I", 0) + s("stream-1-0")
                       + struct.pack("<Q", 1 << 60) + s(b"\xc1\x1f\xfc\xc1" + b"\0" * 76))
        for what, secret in (("no secret (version 1)", None), ("an empty secret", b""),
                             ("a wrong secret", os.urandom(32))):
            f = Peer(c.port)
            f.send(hello(host=host, pid=pid, start=start, program="mailbox", kind=0,
                         secret=secret) + forged)
            t, _ = f.read_frame()
            check(t is None, "%s: the foreign session was answered (frame %r)" % (what, t))
            f.close()
            check(p.poll() is None, "the subject ended before the forgeries; slow it down")
        _, err = p.communicate(timeout=120)
        check(p.returncode == 0, "subject: %s" % err.decode())
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    check(c.stop() == 0, "vigild exit status")
    log = c.logtext()
    check(log.count("without its secret; refused") == 3, "refusals:\n" + log)
    a, err = counts_of(work + "/out")
    check(discarded(err) == 0 and a.get("mailbox.SendMessage") == 3000 and
          a.get("vg.process.end") == 1, "the real subject lost events: %r %s" % (a, err))


def leave_spool(c, work, seed):
    """A subject whose collector stops (SIGSTOP) as it ends: its spool is left."""
    args = ["--messages", "4000", "--seed", str(seed), "--pace", "300"]
    env = dict(os.environ, VIGIL_TO_LINGER="300")
    before = state_acked(work + "/out")
    p = subprocess.Popen([VIGIL, "record", "--to", c.addr(), "--", MAILBOX] + args, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: any(v > 0 for k, v in state_acked(work + "/out").items()
                             if k not in before), "the subject's first acknowledgement")
        os.kill(c.proc.pid, signal.SIGSTOP)
        try:
            _, err = p.communicate(timeout=120)
        finally:
            os.kill(c.proc.pid, signal.SIGCONT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    check(p.returncode == 0 and "the rest stays in " in err, "subject: %r" % err)
    spool = err.rsplit("the rest stays in ", 1)[1].split()[0]
    check(os.path.isdir(spool), "no spool kept: " + spool)
    return spool


def case_send(work):
    """What a subject could not ship (its collector stopped as it ended) stays in its
    spool; `vigil send SPOOL` ships it later, and so does the next `vigil record --to`
    to the same collector, resuming the subject's session with its secret; the collected
    images then hold exactly what the programs emitted."""
    c = Collector(work + "/out").start()
    spool = leave_spool(c, work, 31)
    try:
        r = run([VIGIL, "send", "--to", c.addr(), spool])
        check(r.returncode == 0 and r.stderr.count("\n") == 1, "vigil send: %r" % r.stderr)
        sent = int(r.stderr.split("vigil send: ", 1)[1].split()[0])
        check(sent > 0, "vigil send sent nothing: the test shipped all before; %r" % r.stderr)
        check(not os.path.exists(spool), "vigil send left " + spool)
    finally:
        shutil.rmtree(spool, ignore_errors=True)
    spool = leave_spool(c, work, 32)
    try:
        r = record_to(c.addr(), ["--messages", "10", "--seed", "1"])
        check(r.returncode == 0 and "a spool left by an earlier run" in r.stderr and
              spool in r.stderr, "the next vigil record --to: %r" % r.stderr)
        check(not os.path.exists(spool), "the next vigil record --to left " + spool)
    finally:
        shutil.rmtree(spool, ignore_errors=True)
    check(c.stop() == 0, "vigild exit status")
    check("without its secret" not in c.logtext(), "a resumption was refused")
    host = os.path.join(work, "out", os.uname().nodename)
    sends = []
    for img in sorted(os.listdir(host)):
        a, err = counts_of(os.path.join(host, img))
        check(discarded(err) == 0 and a.get("vg.process.end") == 1, "%s: %r %s" % (img, a, err))
        sends.append(a.get("mailbox.SendMessage"))
    check(sorted(sends) == [10, 4000, 4000], "SendMessage per image %r" % sends)
    r = run([VIGIL, "send", "--to", c.addr(), work + "/nothing"])
    check(r.returncode == 1 and r.stderr.count("\n") == 1, "send of nothing: %r" % r.stderr)

def case_stopped(work):
    """A stopped collector never blocks the subject: it drops what exceeds its buffer,
    counts it, and the count reaches the trace once the collector runs again."""
    c = Collector(work + "/out").start()
    # Stopped for the whole run: the subject runs to its end anyway, waits for the
    # collector only VIGIL_TO_LINGER at exit, says what it could not ship and keeps it.
    os.kill(c.proc.pid, signal.SIGSTOP)
    r = record_to(c.addr(), ["--messages", "20000", "--seed", "9"], env={"VIGIL_TO_BUFFER": "1M", "VIGIL_TO_LINGER": "300"})
    check(r.returncode == 0, "subject with a stopped collector: %s" % r.stderr)
    check("did not acknowledge everything" in r.stderr and "the rest stays in" in r.stderr,
          "no word of what was not shipped: %r" % r.stderr)
    spool = r.stderr.rsplit("the rest stays in ", 1)[1].split()[0]
    shutil.rmtree(spool, ignore_errors=True)
    os.kill(c.proc.pid, signal.SIGCONT)
    c.stop()
    shutil.rmtree(work + "/out")
    c = Collector(work + "/out").start()
    # Stopped for a while: drops are counted and reach the trace once it runs again, and
    # the subject records again once the collector acknowledges.
    args = ["--messages", "100000", "--seed", "9"]
    env = dict(os.environ, VIGIL_TO_BUFFER="1M", VIGIL_TO_LINGER="30000")
    os.kill(c.proc.pid, signal.SIGSTOP)
    try:
        p = started(subprocess.Popen([VIGIL, "record", "--to", c.addr(), "--", MAILBOX] + args,
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        sub = subject_of(p, MAILBOX)
        with open("/proc/%d/environ" % sub) as f:
            spool = [e[12:] for e in f.read().split("\0") if e.startswith("VIGIL_SPOOL=")][0]

        # The collector runs again once the subject has discarded events (its spool, as
        # `vigil dump` reads it, counts them): it cannot have ended by then, it waits for
        # the collector up to VIGIL_TO_LINGER.
        def dropping():
            n = discarded(run([VIGIL, "dump", spool]).stderr)
            return n and n > 0
        wait_for(dropping, "the subject discarded nothing while its collector was stopped")
        check(p.poll() is None, "the subject ended while its collector was stopped")
        check(len(list(os.scandir(work + "/out"))) <= 1, "written while stopped")
    finally:
        os.kill(c.proc.pid, signal.SIGCONT)
    _, err = p.communicate(timeout=120)
    check(p.returncode == 0, "subject: %s" % err.decode())
    check(c.stop() == 0, "vigild exit status")
    a, err = counts_of(work + "/out")
    lost = discarded(err)
    check(lost and lost > 0, "no discarded events reported: %s" % err)
    record_local(work + "/local", args)
    b, _ = counts_of(work + "/local")
    check(sum(a.values()) + lost == sum(b.values()),
          "recorded %d + discarded %d != local %d" % (sum(a.values()), lost, sum(b.values())))
    # Every thread recorded again after the drops: its end is in the trace.
    check(a.get("vg.thread.end") == b.get("vg.thread.end") and a.get("vg.process.end") == 1,
          "ends: %r, locally %r" % ({k: v for k, v in a.items() if k.endswith(".end")},
                                    {k: v for k, v in b.items() if k.endswith(".end")}))


def good_subject(port, n_batches, out, token=""):
    """A records subject that keeps sending while bad peers come and go."""
    p = Peer(port)
    p.send(hello(host="good", pid=77, start=5, program="good.py", token=token))
    p.welcome()
    p.send(schema(3, "good.Tick", [("n", UINT64, ""), ("s", STRING, "")]))
    t0 = time.time_ns()
    for b in range(n_batches):
        recs = [(3, t0 + (b * 100 + i) * 1000, 1, struct.pack("<Q", b * 100 + i) + b"x\0")
                for i in range(100)]
        p.send(records(b + 1, recs))
        out.append(p.ack())
        time.sleep(0.01)
    p.send(frame(BYE))
    p.close()


def case_bad_peers(work):
    r = run([os.path.join(BIN, "vigild"), "-o", work + "/x", "--token", "sesame"])
    check(r.returncode == 2 and "--token-file" in r.stderr and r.stderr.count("\n") == 1,
          "a token on the command line accepted: %r" % r.stderr)
    with open(work + "/token", "w") as f:
        f.write("sesame\n")
    with open(work + "/control-token", "w") as f:
        f.write("open sesame\n")
    c = Collector(work + "/out", extra=["--token-file", work + "/token", "--max-frame",
                                        "1048576", "--control-token-file",
                                        work + "/control-token"]).start()
    # Roles: probes need the control token; the subjects' token does not serve, nor
    # the control token for a subject.
    for tok, ok in (("sesame", False), ("open sesame", True)):
        r = run([VIGIL, "probes", "--collector", c.addr(), "list"],
                env=dict(os.environ, VIGIL_TO_TOKEN=tok))
        check((r.returncode == 0) == ok, "vigil probes with token %r: %d %r" %
              (tok, r.returncode, r.stderr))
    p = Peer(c.port)
    p.send(hello(token="open sesame", pid=10, program="sub", kind=1))
    check(p.closed(), "a subject with the control token was let in")
    p.close()
    acks = []
    t = threading.Thread(target=good_subject, args=(c.port, 40, acks, "sesame"))
    t.start()
    bad = {
        "garbage": b"\x07\x00\x00\x00GARBAGE-GARBAGE",
        "oversized": struct.pack("<IB", 1 << 30, RECORDS) + b"\0" * 64,
        "wrong token": hello(token="open"),
        "before hello": records(1, []),
        "unknown type": hello(token="sesame", pid=1) + frame(99, b"x"),
        "unknown schema": hello(token="sesame", pid=2) + records(1, [(9, 1, 1, b"")]),
        "cut payload": hello(token="sesame", pid=3) + frame(SCHEMA, b"\x01\x00\xff\xff\xff\x7f"),
        "bad record": hello(token="sesame", pid=4) + schema(1, "a.B", [("v", UINT64, "")])
        + records(1, [(1, 1, 1, b"\x01\x02")]),
        "evil names": hello(token="sesame", pid=5) + frame(METADATA, struct.pack("<I", 0)
                                                           + s("../../etc") + s("/* CTF 1.8 */")),
        "image named metadata": hello(token="sesame", pid=6) + frame(
            METADATA, struct.pack("<I", 0) + s("metadata") + s("/* CTF 1.8 */")),
        "host named metadata": hello(token="sesame", host="metadata", pid=7),
        "dot dot": hello(token="sesame", host="..", pid=8),
    }
    bad["control bytes"] = hello(token="sesame", pid=9, program="evil\n\x1b[31mvigild: forged") + \
        frame(METADATA, struct.pack("<I", 0) + s("x") + s("not TSDL"))
    for name, data in bad.items():
        p = Peer(c.port)
        p.send(data)
        check(p.closed(), "%s: not disconnected" % name)
        p.close()
        check(c.alive(), "vigild died on %s" % name)
    t.join(60)
    check(len(acks) == 40 and acks[-1] == 40, "good subject's acks %r" % acks[-3:])
    check(c.stop() == 0, "vigild exit status")
    log = c.logtext()
    for reason in ("frame length outside", "wrong token", "wrong control token", "before HELLO", "unknown frame type",
                   "unknown schema id 9", "cut short", "does not parse", "unusable"):
        check(reason in log, "no log line for %r:\n%s" % (reason, log))
    check(not os.path.exists(os.path.join(work, "etc")), "a path escaped the output directory")
    check(not os.path.exists(os.path.join(work, "out", "metadata")) and
          not os.path.exists(os.path.join(work, "out", "testhost", "metadata")),
          "a directory named metadata was made")
    # A peer's strings are logged escaped: its newline and terminal escape stay visible
    # in one line.
    check("evil\\x0a\\x1b[31mvigild: forged" in log and "\x1b" not in log,
          "peer string not escaped in the log")
    a, err = counts_of(work + "/out/good")
    check(a == {"good.Tick": 4000}, "good subject's records: %r %s" % (a, err))
    r = dump_json(work + "/out")
    check(r.returncode == 0, "damage in the collector's trace: %s" % r.stderr)


def vm_hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    fail("no VmHWM for %d" % pid)


def closed_by_peer(sock, timeout):
    """True when the other side closed (EOF or reset) within timeout: a timeout is False."""
    sock.settimeout(timeout)
    try:
        while True:
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def case_limits(work):
    """Peers that never authenticate cost the collector little and are let go: 64
    connections each sending a 15 MiB HELLO, slow and silent peers, a connection cap."""
    _s = socket
    c = Collector(work + "/out", extra=["--handshake-timeout", "2",
                                        "--max-connections", "80"]).start()
    base = vm_hwm_kb(c.proc.pid)
    big = struct.pack("<IB", 15 << 20, HELLO) + b"\x01\x00" + b"A" * (1 << 20)

    def flood(out):
        try:
            sk = _s.create_connection(("127.0.0.1", c.port), timeout=10)
            try:
                for _ in range(15):
                    sk.sendall(big)
            except OSError:
                pass
            out.append(closed_by_peer(sk, 10))
            sk.close()
        except OSError as e:
            out.append(repr(e))
    res = []
    ts = [threading.Thread(target=flood, args=(res,)) for _ in range(64)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    check(res == [True] * 64, "flooding peers not all disconnected: %r" % res)
    hwm = vm_hwm_kb(c.proc.pid)
    check(hwm < base + 32 * 1024, "vigild peak RSS grew from %d to %d kB" % (base, hwm))
    # Slow (half a header) and silent peers: disconnected by the handshake timeout.
    slow = _s.create_connection(("127.0.0.1", c.port))
    slow.sendall(b"\x10\x00")
    silent = _s.create_connection(("127.0.0.1", c.port))
    check(closed_by_peer(slow, 30) and closed_by_peer(silent, 30),
          "slow or silent peer not disconnected")
    # The cap: 80 idle connections held, the next one closed at once.
    held = [_s.create_connection(("127.0.0.1", c.port)) for _ in range(80)]
    extra = _s.create_connection(("127.0.0.1", c.port))
    check(closed_by_peer(extra, 1.5), "connection above --max-connections not closed")
    for h in held:
        h.close()
    # A real subject still gets in once they are gone.
    wait_for(lambda: c.logtext().count("connection closed") >= 80, "the held ones closed")
    acks = []
    good_subject(c.port, 5, acks)
    check(acks == [1, 2, 3, 4, 5], "good subject's acks %r" % acks)
    check(c.stop() == 0, "vigild exit status")
    log = c.logtext()
    for reason in ("before HELLO", "no HELLO within 2 s", "--max-connections"):
        check(reason in log, "no log line for %r:\n%s" % (reason, log[-3000:]))


def case_metadata_bomb(work):
    """Metadata with many declarations from a peer that then vanishes (it cost the
    recovery 2.1 GB: declarations regrown one by one): a real recording's metadata with
    20,000 event declarations, 10,000 env blocks and 5,000 clocks added is kept and
    recovered within a bound that linear growth meets and quadratic misses by far."""
    base = os.path.join(work, "base")
    p = subprocess.run([MAILBOX, "--seed", "7"], capture_output=True, timeout=120,
                       env=dict(os.environ, VIGIL_OUT=base))
    check(p.returncode == 0, "mailbox: %r" % p.stderr)
    image = [d for d in os.listdir(base) if os.path.isdir(os.path.join(base, d))][0]
    with open(os.path.join(base, image, "metadata")) as f:
        text = f.read()
    text += "".join('event {\n\tname = "x.e%d";\n\tid = %d;\n\tstream_id = 0;\n'
                    '\tfields := struct {\n\t\tuint64_t a;\n\t};\n};\n' % (i, 60000 - i)
                    for i in range(20000))
    text += "".join("env {\n\tx%d = %d;\n};\n" % (i, i) for i in range(10000))
    text += "".join('clock {\n\tname = "c%d";\n\tfreq = 1000;\n};\n' % i
                    for i in range(5000))
    c = Collector(work + "/out", extra=["--max-frame", str(64 << 20)]).start()
    base_kb = vm_hwm_kb(c.proc.pid)
    p = Peer(c.port)
    p.send(hello(pid=77, program="bomb", kind=0, secret=b""))
    t, _ = p.read_frame()
    check(t == WELCOME, "no WELCOME: %r" % t)
    p.send(frame(METADATA, struct.pack("<I", 0) + s("bomb-77-0") + s(text)))
    p.close()  # gone without BYE: the collector recovers what it kept
    wait_for(lambda: "vm/77" in c.logtext() or "testhost/77" in c.logtext(), "the peer's session")
    wait_for(lambda: c.logtext().count("testhost/77") >= 2, "the peer's end")
    grown = vm_hwm_kb(c.proc.pid) - base_kb
    check(c.alive(), "vigild died on the declarations")
    check(c.stop() == 0, "vigild exit status")
    kept = os.path.join(work, "out", "testhost", "bomb-77-0", "metadata")
    check(os.path.exists(kept), "the metadata was not kept: %s" % c.logtext()[-2000:])
    print("metadata of %d bytes: vigild peak RSS grew by %d MiB" % (len(text), grown // 1024))
    # Linear: tens of MiB (the text, once or twice, and its declarations); as before: GBs.
    check(grown < 300 * 1024, "vigild grew by %d MiB on %d bytes of metadata" %
          (grown // 1024, len(text)))


def case_records(work):
    """SCHEMA + RECORDS: an image per process, a stream per tid, read by vigil dump and
    babeltrace2; a resend after a reconnection or restart is not stored twice."""
    c = Collector(work + "/out").start()
    p = Peer(c.port)
    p.send(hello(host="py", pid=99, start=123, program="/usr/bin/app.py --x"))
    check(p.welcome()[1] == 0, "acked of a new subject")
    p.send(schema(1, "app.Request", [("path", STRING, ""), ("size", UINT32, ""),
                                     ("user", ENTITY, "User"), ("blob", BYTES, ""),
                                     ("ratio", DOUBLE, "")], relation="Request"))
    p.send(schema(2, "app.Old", [("a", INT8, ""), ("b", STRING, "")]))
    # ids past 30 and gaps of 2^27 ns and more take the extended event header
    p.send(schema(40, "app.Far", [("n", UINT32, "")]))
    t0 = time.time_ns()
    recs = [(1, t0 + i, 10 + i % 3, b"/p%d\0" % i + struct.pack("<I", i) + struct.pack("<QI", i, 0)
             + struct.pack("<I", 2) + b"ab" + struct.pack("<d", 0.5)) for i in range(30)]
    recs.append((2, t0 + 40, 10, b"\x05"))           # b missing: defaults to ""
    recs.append((2, t0 + 41, 10, b"\x06z\0extra"))   # bytes after known fields: skipped
    recs.append((1, t0 + 10 ** 10, 10, b"/late\0"))  # 10 s later: an extended header
    for k, gap in enumerate((2 ** 27 - 1, 2 ** 27, 2 ** 27 + 1)):  # thread 12's last is t0 + 29
        recs.append((40 if k == 1 else 2, t0 + 29 + gap, 12, struct.pack("<I", k)
                     if k == 1 else b"\x09g%d\0" % k))
    p.send(records(1, recs))
    check(p.ack() == 1, "ack 1")
    p.close()  # no BYE: a reconnection resends the same frame
    c.kill()
    c.start()
    p = Peer(c.port)
    p.send(hello(host="py", pid=99, start=123, program="/usr/bin/app.py --x"))
    check(p.welcome()[1] == 1, "acked after a restart")
    p.send(records(1, recs))  # already stored: acknowledged, not stored again
    check(p.ack() == 1, "ack of the resend")
    p.send(records(2, [(2, t0 + 50, 11, b"\x07q\0")]))  # no SCHEMA in this connection
    check(p.ack() == 2, "ack 2")
    p.send(frame(BYE))
    p.close()
    time.sleep(0.2)
    check(c.stop() == 0, "vigild exit status")
    img = os.path.join(work, "out", "py", "app.py-99-0")
    check(os.path.isdir(img), "image dir: %r" % os.listdir(os.path.join(work, "out", "py")))
    r = dump_json(img)
    check(r.returncode == 0, "vigil dump: %s" % r.stderr)
    evs = [json.loads(x) for x in r.stdout.splitlines()]
    check(len(evs) == 37, "%d events" % len(evs))
    first = [e for e in evs if e["name"] == "app.Request"][0]
    check(first["fields"]["path"] == "/p0" and first["fields"]["size"] == 0
          and first["fields"]["ratio"] == 0.5, "fields %r" % first["fields"])
    olds = [e["fields"] for e in evs if e["name"] == "app.Old"]
    check(olds == [{"a": 5, "b": ""}, {"a": 6, "b": "z"}, {"a": 7, "b": "q"},
                   {"a": 9, "b": "g0"}, {"a": 9, "b": "g2"}], "defaults %r" % olds)
    late = [e for e in evs if e["fields"].get("path") == "/late"]
    check(len(late) == 1 and late[0]["ts"] == t0 + 10 ** 10, "late event %r" % late)
    check(sorted(f for f in os.listdir(img)) ==
          ["metadata", "stream-10-0", "stream-11-0", "stream-12-0"], "files %r" % os.listdir(img))
    rel = run([VIGIL, "relations", img])
    check(rel.returncode == 0 and "Request" in rel.stdout, "vigil relations: %s%s"
          % (rel.stdout, rel.stderr))
    try:
        import bt2  # noqa: F401
    except ImportError:
        missing("python3-bt2 (for %s: the babeltrace2 check of the image)" % sys.executable)
    # babeltrace2 reads every event as vigil dump does: name, time and scalar fields
    code = ("import bt2,json,sys\n"
            "conv = ((bt2._IntegerFieldConst, int), (bt2._RealFieldConst, float),\n"
            "        (bt2._StringFieldConst, str))\n"
            "for m in bt2.TraceCollectionMessageIterator(sys.argv[1]):\n"
            "    if type(m) is not bt2._EventMessageConst: continue\n"
            "    e, f = m.event, {}\n"
            "    for k in e.payload_field:\n"
            "        v = e.payload_field[k]\n"
            "        for t, c in conv:\n"
            "            if isinstance(v, t): f[k] = c(v)\n"
            "    print(json.dumps([e.name, m.default_clock_snapshot.ns_from_origin, f]))\n")
    r = run(["/usr/bin/python3", "-c", code, img])
    check(r.returncode == 0, "babeltrace2: %s" % r.stderr[-400:])
    bt = sorted(json.loads(x) for x in r.stdout.splitlines())
    mine = sorted([e["name"], e["ts"], {k: v for k, v in e["fields"].items()
                                        if not isinstance(v, (dict, list)) and k != "blob"
                                        and not k.startswith("_")}] for e in evs)
    bt = [[n, ts, {k: v for k, v in f.items() if k not in ("blob", "blob_len")}]
          for n, ts, f in bt]  # (the bytes field and its length: compared by count only)
    check(len(bt) == 37 and bt == mine, "babeltrace2 and vigil dump differ: %r" %
          [(a, b) for a, b in zip(bt, mine) if a != b][:3] if len(bt) == len(mine)
          else "babeltrace2 read %d events, vigil dump %d" % (len(bt), len(mine)))
    meta = open(os.path.join(img, "metadata")).read()
    check("enum : uint5_t { compact = 0 ... 30, extended = 31 } id;" in meta,
          "the stored metadata does not declare the compact event header libvigil writes")
    far = [e for e in evs if e["name"] == "app.Far"]
    check(len(far) == 1 and far[0]["ts"] == t0 + 29 + 2 ** 27 and far[0]["fields"]["n"] == 1,
          "app.Far (id 40) %r" % far)


def case_store(work):
    """--store: each completed image's relations also go into a real PostgreSQL server
    (Debian's binaries, started here): at BYE, and at the stop for a subject that
    vanished (before its grace period ended)."""
    import glob
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "logmodel"))
    from pgharness import PgServer
    pg_bin = os.environ.get("VIGIL_PG_BIN") or sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
    os.chmod(work, 0o755)
    pg = PgServer(pg_bin, BIN)
    so = __import__("socket").socket()
    so.bind(("127.0.0.1", 0))
    pg.port = str(so.getsockname()[1])
    so.close()
    try:
        pg.initdb({"listen_addresses": "'127.0.0.1'", "fsync": "off"})
        pg.start()
        url = "postgresql://postgres@127.0.0.1:%s/postgres" % pg.port
        c = Collector(work + "/out", extra=["--store", url]).start()
        r = record_to(c.addr(), ["--messages", "300", "--seed", "4"])
        check(r.returncode == 0, "vigil record --to: %s" % r.stderr)
        p = Peer(c.port)
        p.send(hello(host="py", pid=31, start=9, program="gone.py"))
        p.welcome()
        p.send(schema(1, "gone.Tick", [("n", UINT64, "")], relation="Tick"))
        p.send(records(1, [(1, time.time_ns() + i, 1, struct.pack("<Q", i)) for i in range(25)]))
        check(p.ack() == 1, "ack")
        p.close()  # no BYE: stored after a grace period, or when vigild stops
        time.sleep(0.3)
        check(c.stop() == 0, "vigild exit status")
        log = c.logtext()
        check(log.count("vigild: stored ") == 2, "stored lines:\n" + log)
        n = pg.psql('SELECT count(*) FROM vigil."SendMessage"').stdout.strip()
        check(n == "300", "SendMessage rows in PostgreSQL: %s" % n)
        n = pg.psql('SELECT count(*) FROM vigil."Tick"').stdout.strip()
        check(n == "25", "Tick rows in PostgreSQL: %s" % n)
    finally:
        pg.stop()
        pg.cleanup()


if __name__ == "__main__":
    run_cases("collector_test", globals())
