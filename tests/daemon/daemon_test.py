"""Recording survives what daemons do to themselves (docs/architecture.md "Surviving the
subject"): daemon_subject does one thing (drops privileges, chroots, daemonizes, closes
every descriptor, lowers a resource limit), then emits known events in its main thread, a
new thread and a fork child. The trace must hold exactly those events, none discarded
(RLIMIT_FSIZE: the file may not grow, so what is missing must be counted exactly).
Run: daemon_test.py SCENARIO."""
import collections
import glob
import os
import subprocess
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from vigil_testlib import VIGIL, Failure, check, main, run, tmpdir  # noqa: E402
import json  # noqa: E402

BIN = os.environ.get("VIGIL_BIN", "build/bin")
SUBJECT = os.path.join(BIN, "daemon_subject")
BEFORE, AFTER, THREAD, CHILD, LATE = 1000, 200000, 50000, 50000, 10
ROOT_ONLY = {"setuid", "capabilities", "chroot", "chroot_setuid", "record_setuid", "to_setuid",
             "to_chroot"}


def wait_gone(pid, bound_s=60):
    """Waits for a daemonized process (not our child) to end."""
    deadline = time.monotonic() + bound_s
    while os.path.exists(f"/proc/{pid}"):
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        check(time.monotonic() < deadline, f"daemon {pid} still running after {bound_s} s")
        time.sleep(0.02)


def record(scenario):
    work = tmpdir("daemon-" + scenario)
    trace = os.path.join(work, "trace")
    env = {"VIGIL_OUT": trace}
    if scenario == "fsize":  # only d.*: what the main thread emits is known exactly
        env["VIGIL_SENSORS"] = "d.*,-vg.*"
    if scenario.startswith("to_"):
        # To a collector (VIGIL_TO): the spool in /dev/shm is read by the runtime's sender
        # thread, which must keep reaching it after the act. The default spool on purpose
        # (later images must never make one named by their new uid): removed below
        # whatever happens, as tests/spool_guard.py requires.
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "collector"))
        import vgd
        scenario = scenario[len("to_"):]
        col = vgd.Collector(os.path.join(work, "col")).start()
        env = dict(os.environ, VIGIL_TO=col.addr())
        env.pop("VIGIL_OUT", None)
        proc = subprocess.Popen([SUBJECT, scenario, work], env=env, stderr=subprocess.PIPE,
                                text=True)
        try:
            _, err = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
            col.stop()
            # What a chroot keeps the runtime from removing: the spool's empty root (and
            # directories fork children leave, docs/architecture.md).
            spool = f"/dev/shm/vigil-spool-{os.geteuid()}-{proc.pid}"
            left = sorted(os.listdir(spool)) if os.path.isdir(spool) else []
            shutil.rmtree(spool, ignore_errors=True)
        # Outside a jail every image ships what it and the images before it recorded
        # (the fork child's first image, before its exec, too) and the spool is removed.
        check(scenario == "chroot" or not left,
              f"left in the spool: {left} (kept {work})")
        if proc.returncode != 0:
            raise Failure(f"subject exited {proc.returncode}: {err[-2000:]} (kept {work})")
        hosts = glob.glob(os.path.join(work, "col", "*", ""))
        check(len(hosts) == 1, f"collected hosts: {hosts} (kept {work})")
        trace = hosts[0]
        # Every image of a process resumes its one session: an exec'd image after the
        # privilege drop finds the session's secret in the spool its process holds (the
        # spool named by its new uid and pid is never made), so the collector refuses
        # nothing, whichever image connected first.
        pids = {d.rsplit("-", 2)[1] for d in os.listdir(trace) if d.count("-") >= 2}
        strays = [s for s in glob.glob("/dev/shm/vigil-spool-*-*")
                  if s.rsplit("-", 1)[1] in pids]
        for s in strays:
            shutil.rmtree(s, ignore_errors=True)
        check(not strays, f"spools made by later images of the subject: {strays} (kept {work})")
        log = os.path.join(work, "col.vigild.log")
        refused = [l for l in open(log) if "refused" in l] if os.path.exists(log) else []
        check(not refused, f"the collector refused the subject: {refused[:3]} (kept {work})")
        p = subprocess.CompletedProcess(proc.args, proc.returncode, "", err)
    elif scenario.startswith("record_"):
        # Through `vigil record` (preload, then recover and the summary over files the
        # subject gave to nobody).
        scenario = scenario[len("record_"):]
        p = run([VIGIL, "record", "-o", trace, "--", SUBJECT, scenario, work], timeout=300)
        check(re.search(r"vigil record: \d+ events from 3 process image", p.stderr)
              and "discarded" not in p.stderr, f"vigil record said: {p.stderr}")
    else:
        p = run([SUBJECT, scenario, work], env=env, timeout=300)
    if p.returncode != 0:
        raise Failure(f"subject exited {p.returncode}: {p.stderr[-2000:]} (kept {work})")
    if scenario == "daemonize":
        with open(os.path.join(work, "daemon.pid")) as f:
            wait_gone(int(f.read()))
    d = run([VIGIL, "dump", "--json", trace], check_rc=0, timeout=300)
    counts = collections.Counter()
    main_n = []
    events = [json.loads(line) for line in d.stdout.splitlines()]
    for e in events:
        counts[e["name"]] += 1
        if e["name"] == "d.main":
            main_n.append(e["fields"]["n"])

    m = re.search(r"(\d+) events discarded; (\d+) damaged", d.stderr)
    check(m, f"no summary from vigil dump: {d.stderr}")
    # Identities stay whole (a chroot hides /proc: the runtime keeps a descriptor of it).
    for e in events:
        f = e["fields"]
        if e["name"] == "vg.process.begin":
            check(f["gen"] != 0 and f["name"] and f["exe"], f"process identity lost: {e}")
        if e["name"] == "vg.thread.begin":
            check(f["name"], f"thread name lost: {e}")
    return work, trace, p, counts, sorted(main_n), int(m.group(1)), int(m.group(2))


def scenario(name):
    def test():
        if name in ROOT_ONLY and os.geteuid() != 0:
            print(f"skip {name}: needs root")
            sys.exit(77)
        work, trace, p, counts, main_n, discarded, damaged = record(name)
        where = f" (trace kept in {trace})"
        check(damaged == 0, f"{damaged} damaged places" + where)
        if name == "fsize":
            # The file may not grow past 1 MiB: what the main thread loses is counted,
            # exactly, and said on stderr; the subject is not killed by SIGXFSZ.
            check(discarded > 0, "RLIMIT_FSIZE of 1 MiB lost nothing?" + where)
            # The main thread emits d.main, then d.late (vg.* are off): kept +
            # discarded is exactly that many.
            want = BEFORE + AFTER + LATE
            kept = len(main_n) + counts["d.late"]
            check(kept + discarded == want,
                  f"kept {kept} + discarded {discarded} != {want}" + where)
            check(main_n == list(range(len(main_n))), "d.main kept out of order" + where)
            check("were not recorded" in p.stderr, f"loss not said: {p.stderr}" + where)
        else:
            check(discarded == 0, f"{discarded} events discarded" + where)
            check(main_n == list(range(BEFORE + AFTER)),
                  f"d.main: {len(main_n)} events, want 0..{BEFORE + AFTER - 1}" + where)
        want = {"d.thread": THREAD, "d.child": CHILD}
        if name != "fsize":
            want["d.late"] = LATE
        for k, v in want.items():
            check(counts[k] == v, f"{k}: {counts[k]} events, want {v}" + where)
        shutil.rmtree(work)
    return test


NAMES = ["setuid", "capabilities", "chroot", "chroot_setuid", "daemonize", "close_range",
         "closefrom", "close_loop_proc", "close_loop_all", "dup2", "nofile", "fsize", "as",
         "record_setuid", "to_setuid", "to_chroot"]
if __name__ == "__main__":
    main({n: scenario(n) for n in NAMES})
