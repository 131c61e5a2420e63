#!/usr/bin/env python3
"""vigil watch --pid: attaching to a running process (docs/control.md, "Attaching").

The subject is the mailbox example slowed down (--pace) and recorded with
`vigil record --listen`: only vigil's own vg.* sensors record until a monitor attaches.

1. Nothing but vg.* is recorded before the first attach.
2. Three monitors attach one after the other to the same process: one detaches after
   --for, one is interrupted (SIGINT), one stays until the process ends. Each prints
   tuples, none extraneous, and every tuple is one the full recording of the same
   (logically deterministic) run also answers.
3. While one is attached, a second is refused (busy), exit 2.
4. A process that does not listen, and one that does not exist: exit 2, one line.
5. Afterwards the trace holds exactly the packets the three plans asked for: nothing
   was recorded while no monitor was attached, so detaching switched the plans off; the
   last monitor, reading the whole trace, counts the others' packets as earlier and its
   own as asked (asked + extraneous + earlier = the trace's user packets).

usage: attach_test.py BIN-DIR MAILBOX-VGL"""
import collections
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from watch_common import stats_of, values

BIN, VGL = sys.argv[1], sys.argv[2]
VIGIL = os.path.join(BIN, "vigil")
MAILBOX = os.path.join(BIN, "mailbox")
OPTS = ["--seed", "1", "--processes", "20", "--processors", "2", "--mailboxes", "5",
        "--messages", "20000"]
failures = []

RESUMED_P5 = """range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P5"
when S precede end of W"""
SENDS = 'range of S is SendMessage retrieve (S.Mailbox) where S.Process = "{p}"'


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def events(trace):
    d = subprocess.run([VIGIL, "dump", "--json", trace], capture_output=True, text=True,
                       timeout=120)
    return collections.Counter(json.loads(l)["name"] for l in d.stdout.splitlines()
                               if l.startswith("{"))


def user_events(trace):
    return collections.Counter({n: k for n, k in events(trace).items()
                                if not n.startswith("vg.")})


def wait_for(cond, what, timeout=60):
    """Polls cond() until it holds (True), or fails saying what did not happen."""
    deadline = time.time() + timeout
    while not cond():
        if time.time() > deadline:
            fail(f"{what} within {timeout} s")
            return False
        time.sleep(0.02)
    return True


def first_line(p, what, timeout=60):
    """The first line p prints (a tuple: the monitor is attached), or None."""
    ready, _, _ = select.select([p.stdout], [], [], timeout)
    line = p.stdout.readline() if ready else ""
    if not line:
        fail(f"{what}: printed nothing within {timeout} s")
    return line or None


def watch(pid, query, *extra):
    return subprocess.Popen([VIGIL, "watch", "--pid", str(pid), "--format", "json", "--stats",
                             "--every", "50ms", "-e", query, *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def check_watch(name, p, full, reason, head=""):
    out, err = p.communicate(timeout=120)
    out = head + out
    st = stats_of(err)
    got = values(out)
    if p.returncode != 0 or not st:
        fail(f"{name}: exit {p.returncode}: {err}")
        return None
    if f"({reason})" not in err:
        fail(f"{name}: expected to detach because {reason}: {err}")
    if not got:
        fail(f"{name}: no tuple while attached: {err}")
    if st["packets"]["extraneous"]:
        fail(f"{name}: {st['packets']['extraneous']} extraneous packets")
    beyond = {k: n for k, n in got.items() if n > full[k]}
    if beyond:
        fail(f"{name}: tuples the full recording does not answer: {beyond}")
    print(f"ok  {name}: {sum(got.values())} tuples from "
          f"{sum(a['packets'] for a in st['alphas'])} packets ({reason})")
    return st


def subject_pid(trace, deadline):
    while time.time() < deadline:
        for d in os.listdir(trace) if os.path.isdir(trace) else []:
            parts = d.rsplit("-", 2)
            if len(parts) == 3 and parts[0] == "mailbox" and \
                    os.path.exists(os.path.join(trace, d, "metadata")):
                return int(parts[1])
        time.sleep(0.02)
    return None


def main():
    work = tempfile.mkdtemp(prefix="vigil-attach-")
    rec = None
    try:
        full_trace = os.path.join(work, "full")
        subprocess.run([VIGIL, "record", "-q", "-o", full_trace, "--", MAILBOX, *OPTS],
                       check=True, capture_output=True, timeout=120)

        def full(q):
            r = subprocess.run([VIGIL, "query", full_trace, "--format", "json", "-e", q],
                               capture_output=True, text=True, timeout=120)
            return values(r.stdout)

        trace = os.path.join(work, "listen")
        # VIGIL_VERBOSE: the subject says each detach (counted below; silent by default)
        rec = subprocess.Popen([VIGIL, "record", "--listen", "-o", trace, "--", MAILBOX, *OPTS,
                                "--pace", "200"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, VIGIL_VERBOSE="1"))
        pid = subject_pid(trace, time.time() + 30)
        if pid is None:
            fail("the subject never started recording")
            return
        # Both processor threads run (they would record SendMessage with sensors on).
        if not wait_for(lambda: events(trace)["vg.thread.begin"] >= 3,
                        "the subject's processor threads did not begin"):
            return
        before = user_events(trace)
        if before:
            fail(f"recorded before any monitor attached: {before}")
        else:
            print("ok  nothing but vg.* recorded before the first attach")

        w1 = watch(pid, RESUMED_P5, "--for", "800ms")
        st1 = check_watch("ResumedbyP5 --for 800ms", w1, full(RESUMED_P5), "time is up")

        # w2 is attached once it printed a tuple: a second monitor is refused meanwhile,
        # then w2 is interrupted.
        w2 = watch(pid, SENDS.format(p="P2"))
        head = first_line(w2, "P2's sends") or ""
        busy = subprocess.run([VIGIL, "watch", "--pid", str(pid), "-e", SENDS.format(p="P2")],
                              capture_output=True, text=True, timeout=60)
        if busy.returncode != 2 or "busy" not in busy.stderr:
            fail(f"second monitor: exit {busy.returncode}: {busy.stderr!r}")
        else:
            print("ok  a second monitor is refused:", busy.stderr.strip())
        w2.send_signal(signal.SIGINT)
        st2 = check_watch("P2's sends, ^C", w2, full(SENDS.format(p="P2")), "interrupted",
                          head)

        w3 = watch(pid, SENDS.format(p="P3"))
        st3 = check_watch("P3's sends, to the end", w3, full(SENDS.format(p="P3")),
                          "the process ended")
        rec_out, rec_err = rec.communicate(timeout=120)
        if rec.returncode != 0:
            fail(f"the subject: exit {rec.returncode}: {rec_err}")
        detached = rec_err.count("monitor detached")
        if detached != 2:  # the third saw the process end first
            fail(f"the subject reported {detached} detaches, expected 2: {rec_err}")
        if st1 and st2 and st3:
            asked = sum(a["packets"] for st in (st1, st2, st3) for a in st["alphas"])
            recorded = sum(user_events(trace).values())
            if recorded != asked:
                fail(f"the trace holds {recorded} user events; the plans asked for {asked}")
            else:
                print(f"ok  the trace holds exactly the {asked} packets the plans asked for")
            # positive controls for `extraneous == 0`: the last monitor reads the whole
            # trace and counts every user packet once, the earlier monitors' as `earlier`
            p3 = st3["packets"]
            if p3["asked"] + p3["extraneous"] + p3["earlier"] != recorded or \
                    p3["earlier"] != recorded - p3["asked"] or not p3["earlier"]:
                fail(f"the last monitor's counts {p3} do not account for the trace's "
                     f"{recorded} user packets ({recorded - p3['asked']} before its attach)")
            else:
                print(f"ok  the last monitor counts {p3['earlier']} earlier packets, "
                      f"{p3['asked']} its own: the {recorded} recorded")

        sleeper = subprocess.Popen(["sleep", "30"])
        try:
            r = subprocess.run([VIGIL, "watch", "--pid", str(sleeper.pid), "-e",
                                SENDS.format(p="P2")], capture_output=True, text=True,
                               timeout=60)
            if r.returncode != 2 or "does not listen" not in r.stderr or \
                    r.stderr.count("\n") != 1:
                fail(f"not listening: exit {r.returncode}: {r.stderr!r}")
            else:
                print("ok  not listening:", r.stderr.strip())
        finally:
            sleeper.kill()
            sleeper.wait()
        r = subprocess.run([VIGIL, "watch", "--pid", "999999999", "-e", SENDS.format(p="P2")],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 2 or r.stderr.count("\n") != 1:
            fail(f"no such process: exit {r.returncode}: {r.stderr!r}")
    finally:
        if rec and rec.poll() is None:  # left early: vigil record passes SIGTERM on
            rec.terminate()
            try:
                rec.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                rec.kill()
                rec.communicate()
        if failures:
            print(f"attach_test: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("all attach checks passed")


main()
