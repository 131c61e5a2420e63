#!/usr/bin/env python3
"""vigil watch --pid: attaching to a running process (docs/control.md, "Attaching").

The subject is the mailbox example slowed down (--pace) and recorded with
`vigil record --listen`: only vigil's own vg.* sensors record until a monitor attaches.

1. Nothing but vg.* is recorded before the first attach.
2. Monitors attach to the same process: one alone, which detaches after --for; then
   four at once with different queries (P2's sends, P3's sends, P4's states, a sampled
   RunningOn): two are interrupted (SIGINT) while the others stay, two stay until the
   process ends. Each prints tuples, every tuple one the full recording of the same
   (logically deterministic) run also answers; the one alone reads nothing extraneous.
3. A plan that conflicts with an attached one (another sampling clock) is refused
   whole: exit 2, one line saying so, nothing of it left on.
4. A process that does not listen, and one that does not exist: exit 2, one line.
5. Afterwards the trace holds exactly the packets the plans asked for (their packets
   are disjoint): nothing was recorded that no attached monitor asked for, so each
   detach switched off its own plan and only it; the last monitors, reading the whole
   trace, count the others' packets as earlier or extraneous and their own as asked
   (asked + extraneous + earlier = the trace's user packets).

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
STATES_P4 = 'range of P is ProcessState retrieve (P.State) where P.Process = "P4"'
SAMPLED = """range of RO is RunningOn
range of C is Clock[10]
retrieve (RO.Process) valid at C when C overlap RO"""
RAN = "range of RO is RunningOn retrieve (RO.Process)"  # what SAMPLED may answer


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


def check_watch(name, p, full, reason, head="", alone=True, timed=False):
    """Checks a monitor's answers against the full recording's. alone: no other monitor
    was attached, so nothing it read was extraneous. timed: the tuples depend on when the
    clock ticked (sampling), so only their values are compared, not how often each
    comes."""
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
    if alone and st["packets"]["extraneous"]:
        fail(f"{name}: {st['packets']['extraneous']} extraneous packets")
    beyond = {k: n for k, n in got.items() if n > full[k]}
    if timed:
        beyond = {k: n for k, n in got.items() if not full[k]}
    if beyond:
        fail(f"{name}: tuples the full recording does not answer: {beyond}")
    print(f"ok  {name}: {sum(got.values())} tuples from "
          f"{sum(a['packets'] for a in st['alphas'])} packets ({reason})")
    return st


def subject_pid(rec, trace, deadline):
    """The pid of the subject `vigil record` (process rec) runs, once its recording has
    begun: its image directory (mailbox-PID-GEN) or, in the shared layout (the default),
    shared/metadata written and the subject the child of vigil record."""
    while time.time() < deadline:
        names = os.listdir(trace) if os.path.isdir(trace) else []
        for d in names:
            parts = d.rsplit("-", 2)
            if len(parts) == 3 and parts[0] == "mailbox" and \
                    os.path.exists(os.path.join(trace, d, "metadata")):
                return int(parts[1])
        if "shared" in names and os.path.exists(os.path.join(trace, "shared", "metadata")):
            try:
                with open(f"/proc/{rec.pid}/task/{rec.pid}/children") as f:
                    kids = f.read().split()
            except OSError:
                kids = []
            if len(kids) == 1:
                return int(kids[0])
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
        pid = subject_pid(rec, trace, time.time() + 30)
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

        # Three monitors at once, with different queries (docs/control.md "Several
        # monitors"): each is attached once it printed a tuple. Each answers only from
        # its own plan (the others' packets are extraneous to it, dropped before its
        # query), every tuple one the full recording answers; w2 leaves first (^C) and
        # takes only its own part of the union away.
        w2 = watch(pid, SENDS.format(p="P2"))
        head2 = first_line(w2, "P2's sends") or ""
        w3 = watch(pid, SENDS.format(p="P3"))
        head3 = first_line(w3, "P3's sends") or ""
        w4 = watch(pid, STATES_P4)
        head4 = first_line(w4, "P4's states") or ""
        # A plan that conflicts with one attached: another sampling clock on RunningOn.
        s1 = watch(pid, SAMPLED, "--tick", "50us")
        head_s1 = first_line(s1, "RunningOn sampled") or ""
        s2 = subprocess.run([VIGIL, "watch", "--pid", str(pid), "--tick", "70us", "-e",
                             SAMPLED], capture_output=True, text=True, timeout=60)
        if s2.returncode != 2 or "conflicts with another monitor's" not in s2.stderr or \
                "sampled with another clock already" not in s2.stderr:
            fail(f"conflicting plan: exit {s2.returncode}: {s2.stderr!r}")
        else:
            print("ok  a conflicting plan is refused:",
                  s2.stderr.strip().splitlines()[-1])
        s1.send_signal(signal.SIGINT)
        st_s1 = check_watch("RunningOn sampled, ^C", s1, full(RAN), "interrupted", head_s1,
                    alone=False, timed=True)
        w2.send_signal(signal.SIGINT)
        st2 = check_watch("P2's sends, ^C, beside two others", w2, full(SENDS.format(p="P2")),
                          "interrupted", head2, alone=False)
        st3 = check_watch("P3's sends, to the end, beside P4's states", w3,
                          full(SENDS.format(p="P3")), "the process ended", head3, alone=False)
        st4 = check_watch("P4's states, to the end, beside P3's sends", w4, full(STATES_P4),
                          "the process ended", head4, alone=False)
        rec_out, rec_err = rec.communicate(timeout=120)
        if rec.returncode != 0:
            fail(f"the subject: exit {rec.returncode}: {rec_err}")
        detached = rec_err.count("monitor detached")
        if detached != 4:  # w1, s1, s2 (refused), w2; w3 and w4 saw the process end
            fail(f"the subject reported {detached} detaches, expected 4: {rec_err}")
        sts = (st1, st_s1, st2, st3, st4)
        if all(sts):
            # The plans' packets are disjoint (other relations or other processes), so
            # the union the subject recorded is exactly what they asked for together:
            # nothing is left on of a plan whose monitor left, even while others stay.
            asked = sum(a["packets"] for st in sts for a in st["alphas"])
            recorded = sum(user_events(trace).values())
            if recorded != asked:
                fail(f"the trace holds {recorded} user events; the plans asked for {asked}")
            else:
                print(f"ok  the trace holds exactly the {asked} packets the plans asked for")
            # positive controls for the extraneous counts: the last monitors read the
            # whole trace and count every user packet once: their own as asked, the
            # others' as earlier (before their attach) or extraneous (after it)
            for name, st, other in (("P3's", st3, st4), ("P4's", st4, st3)):
                p = st["packets"]
                if p["asked"] + p["extraneous"] + p["earlier"] != recorded or \
                        not p["earlier"] or p["extraneous"] < other["packets"]["asked"]:
                    fail(f"{name} monitor's counts {p} do not account for the trace's "
                         f"{recorded} user packets")
                else:
                    print(f"ok  {name} monitor counts {p['earlier']} earlier packets, "
                          f"{p['extraneous']} extraneous (the other one's), {p['asked']} "
                          f"its own: the {recorded} recorded")

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


main()
# after main(): a check that gave up early (return) still fails the test
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all attach checks passed")
