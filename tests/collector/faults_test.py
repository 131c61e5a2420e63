"""The collector cannot keep everything (docs/security.md "Quotas and a full disk"): what
it does not store is counted in the collected trace, exactly. Each case compares the
collected image (events kept + events discarded, as `vigil dump` reads them) with a local
recording of the same seed. A stalled collector (SIGSTOP, SIGCONT) is collector.stopped.
usage: faults_test.py quota|quota_restart|quota_records|disk_full"""
import glob
import os
import re
import struct
import subprocess
import time
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vgd import *  # noqa: E402,F401,F403

BIN = bindir()
VIGIL = os.path.join(BIN, "vigil")
MAILBOX = os.path.join(BIN, "mailbox")
ARGS = ["--messages", "20000", "--seed", "3", "--processes", "4"]


def stats(path):
    """(events, discarded) of the whole trace, from vigil dump's last line."""
    r = run([VIGIL, "dump", "--stats", path])
    check(r.returncode == 0, "vigil dump --stats %s: %s" % (path, r.stderr))
    m = re.search(r"vigil dump: (\d+) events \(.*; (\d+) events discarded", r.stderr + r.stdout)
    check(m is not None, "vigil dump's summary: %r" % r.stderr)
    return int(m.group(1)), int(m.group(2))


def mailbox(env):
    """The mailbox run directly (it links libvigil: no preload, so the sanitizer build
    runs it too), recording as env says."""
    e = dict(os.environ, **env)
    for k in ("VIGIL_OUT", "VIGIL_TO", "LD_PRELOAD"):
        if k not in env:
            e.pop(k, None)
    r = run([MAILBOX] + ARGS, env=e)
    check(r.returncode == 0, "mailbox (%r): %s" % (env, r.stderr))
    return r


def collect(work, extra=(), prefix=()):
    c = Collector(work + "/out", extra, prefix=prefix).start()
    r = mailbox({"VIGIL_TO": c.addr(), "VIGIL_SPOOL": work + "/spool"})
    check("did not acknowledge" not in r.stderr, "not everything acknowledged: %r" % r.stderr)
    check(c.stop() == 0, "vigild exit status")
    mailbox({"VIGIL_OUT": work + "/local"})
    kept, lost = stats(work + "/out")
    want, none = stats(work + "/local")
    check(none == 0, "the local recording discarded %d" % none)
    check(lost > 0 and kept > 0, "nothing was refused (kept %d, discarded %d): the limit "
          "is too high for this test" % (kept, lost))
    check(kept + lost == want, "kept %d + discarded %d != %d events recorded locally"
          % (kept, lost, want))
    return c


def case_quota(work):
    """--quota-per-subject 1M: the subject's packets past 1 MiB are counted, not stored."""
    c = collect(work, ["--quota-per-subject", "1M"])
    check("its --quota-per-subject is reached" in c.logtext(), c.logtext())
    size = sum(e.stat().st_size for d in os.scandir(os.path.join(work, "out", HOST))
               for e in os.scandir(d.path) if e.name.startswith("stream"))
    # A stub (a header and its 32-byte loss note) per packet refused may go past the quota.
    check(size <= (1 << 20) + 112 * 200, "%d bytes of streams stored, quota 1 MiB" % size)
    run([os.path.join(BIN, "vigild"), "--help"])
    r = run([os.path.join(BIN, "vigild"), "-o", work + "/x", "--quota-per-subject", "lots"])
    check(r.returncode == 2 and r.stderr.count("\n") == 1, "bad quota: %r" % r.stderr)


def case_disk_full(work):
    """vigild under a file size limit (RLIMIT_FSIZE, prlimit): its writes fail with EFBIG
    as on a full disk, and what it could not write is counted."""
    if not shutil.which("prlimit"):
        missing("prlimit (util-linux)")
    c = collect(work, prefix=["prlimit", "--fsize=400000", "--"])
    check("the disk is full" in c.logtext(), c.logtext())


def final_stub(out):
    """Does a stream file under out hold a stub (a packet header without events) that is
    not its last packet?"""
    for f in glob.glob(os.path.join(out, "*", "*", "stream*")):
        with open(f, "rb") as fh:
            b = fh.read()
        off, stub = 0, False
        while off + 80 <= len(b):
            content, size = struct.unpack_from("<QQ", b, off + 40)
            if size < 640 or off + size // 8 > len(b):
                break
            if stub:
                return True
            stub = content == 640
            off += size // 8
    return False


def case_quota_restart(work):
    """The quota reached, then vigild SIGKILLed and restarted while the subject still
    sends: the loss a stream carries on to its later packets is read back from the stream
    files (the stubs' loss notes), so kept + discarded is still exact."""
    c = Collector(work + "/out", ["--quota-per-subject", "512K"]).start()
    args = ARGS + ["--pace", "100"]  # about 5 s: the same events as unpaced
    # A 1 MiB buffer: packets of at most 256 KiB, so each stream has several.
    env = dict(os.environ, VIGIL_TO=c.addr(), VIGIL_SPOOL=work + "/spool",
               VIGIL_TO_LINGER="60000", VIGIL_TO_BUFFER="1M")
    env.pop("VIGIL_OUT", None)
    env.pop("LD_PRELOAD", None)
    # Its output to a pipe, as mailbox() has it: a write to a pipe is an event too.
    p = subprocess.Popen([MAILBOX] + args, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 60
        # Killed once a stream's loss is carried on: the stub of a packet refused, and a
        # later packet after it (a stub's own count is sent again while it grows).
        while not final_stub(work + "/out"):
            check(p.poll() is None, "the subject ended before a loss was carried on")
            check(time.time() < deadline, "no packet refused: %s" % c.logtext())
            time.sleep(0.02)
        check(p.poll() is None, "the subject ended before vigild was killed; make it slower")
        c.kill()
        c.start()  # same port, same directory
        _, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err = err.decode()
    check(p.returncode == 0, "mailbox: %s" % err)
    check("did not acknowledge" not in err, "not everything acknowledged: %r" % err)
    check(c.stop() == 0, "vigild exit status")
    mailbox({"VIGIL_OUT": work + "/local"})
    kept, lost = stats(work + "/out")
    want, none = stats(work + "/local")
    print("quota_restart: kept %d, discarded %d, recorded %d" % (kept, lost, want))
    r = run([VIGIL, "dump", "--stats", work + "/out"])
    check(" 0 damaged places" in r.stderr + r.stdout,
          "a count of discarded events went down: %s" % r.stderr)
    check(none == 0, "the local recording discarded %d" % none)
    check(lost > 0 and kept > 0, "kept %d, discarded %d" % (kept, lost))
    check(kept + lost == want, "kept %d + discarded %d != %d events recorded locally"
          % (kept, lost, want))


def case_quota_records(work):
    """The quota for a records subject (the Python and Java writers' RECORDS frames):
    records past it are counted as discarded; kept + discarded = records sent."""
    c = Collector(work + "/out", ["--quota-per-subject", "64K"]).start()
    p = Peer(c.port)
    p.send(hello(host="rec", pid=5, start=9, program="w.py"))
    p.welcome()
    p.send(schema(1, "w.Tick", [("n", UINT64, ""), ("s", STRING, "")]))
    t0, sent = time.time_ns(), 0
    for b in range(40):  # about 40 x 100 x 30 bytes: past 64 KiB
        recs = [(1, t0 + sent + i, 7 + i % 2, struct.pack("<Q", sent + i) + b"x" * 16 + b"\0")
                for i in range(100)]
        p.send(records(b + 1, recs))
        check(p.ack() == b + 1, "ACK of frame %d" % (b + 1))
        sent += len(recs)
    p.send(frame(BYE))
    check(c.stop() == 0, "vigild exit status")
    kept, lost = stats(work + "/out")
    print("records: kept %d, discarded %d, sent %d" % (kept, lost, sent))
    check(kept > 0 and lost > 0 and kept + lost == sent,
          "kept %d + discarded %d != %d records sent" % (kept, lost, sent))
    check("its --quota-per-subject is reached" in c.logtext(), c.logtext())


HOST = os.uname().nodename
if __name__ == "__main__":
    run_cases("faults_test", globals())
