"""The collector cannot keep everything (docs/security.md "Quotas and a full disk"): what
it does not store is counted in the collected trace, exactly. Each case compares the
collected image (events kept + events discarded, as `vigil dump` reads them) with a local
recording of the same seed. A stalled collector (SIGSTOP, SIGCONT) is collector.stopped.
usage: faults_test.py quota|disk_full"""
import os
import re
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
    # A stub (a packet's 80-byte header) per packet refused may go past the quota.
    check(size <= (1 << 20) + 80 * 200, "%d bytes of streams stored, quota 1 MiB" % size)
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


HOST = os.uname().nodename
CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print("usage: faults_test.py %s" % "|".join(sorted(CASES)))
        sys.exit(2)
    work = tempfile.mkdtemp(prefix="vigil-faults-%s-" % sys.argv[1])
    passed = False
    try:
        CASES[sys.argv[1]](work)
        passed = True
    except SystemExit as e:
        passed = e.code == 77
        raise
    finally:
        for c in Collector.started:
            if c.alive():
                c.proc.kill()
                c.proc.wait()
        if passed:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("faults_test: kept %s" % work, file=sys.stderr)
    print("ok")
