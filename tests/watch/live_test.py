#!/usr/bin/env python3
"""vigil watch with a real subject (the mailbox example, every sensor off until the plan
enables it through the control channel):

1. ResumedbyP (the paper's ResumedbyP1 for a process that sends) answered live, with the
   optimized and the unoptimized plan, gives the same explicit values as `vigil query`
   on a full recording of the same (logically deterministic) run; the optimized run
   produces fewer packets, none extraneous, and the counts account for every packet
   babeltrace2 reads in the kept trace;
2. tuples are printed while the subject runs, not only at its end (--every 20ms, a
   subject slowed down between steps by a pipe it reads);
3. a query naming a relation the subject has no sensor for: one error with a caret,
   exit 2, and the subject is not started;
4. the subject killed mid-watch: what was answered is printed, the exit is reported,
   exit status 128+9, nothing hangs;
5. the monitor killed mid-watch: the subject reports the monitor gone, runs to its end.

usage: live_test.py BIN-DIR MAILBOX-VGL"""
import os
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
failures = []

RESUMED = """range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "{p}"
when S precede end of W"""


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def watch(args, **kw):
    return subprocess.run([VIGIL, "watch", "--sensors", VGL, "--format", "json", *args],
                          capture_output=True, text=True, timeout=120, **kw)


def packet_counts(trace):
    """(user-sensor packets, vg.* packets) in a trace, as babeltrace2 reads it."""
    p = subprocess.run(["babeltrace2", trace], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"babeltrace2 {trace}: {p.stderr}")
        return -1, -1
    names = [l.split(" ", 4)[3] for l in p.stdout.splitlines()]
    vg = sum(n.startswith("vg.") for n in names)
    return len(names) - vg, vg


def same_answers(work):
    opts = ["--seed", "1", "--processes", "20", "--processors", "3", "--mailboxes", "5",
            "--messages", "600"]
    trace = os.path.join(work, "full")
    subprocess.run([VIGIL, "record", "-q", "-o", trace, "--", MAILBOX, *opts], check=True,
                   capture_output=True, timeout=120)
    checked = 0
    for who in [f"P{i}" for i in range(1, 21)]:
        q = RESUMED.replace("{p}", who)
        full = subprocess.run([VIGIL, "query", trace, "--format", "json", "-e", q],
                              capture_output=True, text=True, timeout=120)
        expect = values(full.stdout)
        if not expect:
            continue  # P resumed nobody in this run: a check would prove nothing
        checked += 1
        if checked > 2:
            break
        produced = {}
        for plan in ("optimized", "unoptimized"):
            flags = ["--unoptimized"] if plan == "unoptimized" else []
            kept = os.path.join(work, f"kept-{who}-{plan}")
            p = watch(["--stats", *flags, "--keep", kept, "-e", q, "--", MAILBOX, *opts])
            st = stats_of(p.stderr)
            if p.returncode != 0 or not st:
                fail(f"{who} {plan}: exit {p.returncode}: {p.stderr}")
                continue
            # every packet the subject recorded is counted once (babeltrace2 reads the
            # kept trace): what makes `extraneous == 0` mean none came
            user, vg = packet_counts(kept)
            pk = st["packets"]
            if pk["asked"] + pk["extraneous"] + pk["earlier"] != user or \
                    pk["sources"] != vg or not pk["asked"]:
                fail(f"{who} {plan}: counts {pk} do not account for the {user} user and "
                     f"{vg} vg.* packets babeltrace2 reads in the kept trace")
            shutil.rmtree(kept, ignore_errors=True)
            if values(p.stdout) != expect:
                fail(f"{who} {plan}: live answer {sorted(values(p.stdout).items())} != "
                     f"full recording's {sorted(expect.items())}")
            if st["packets"]["extraneous"]:
                fail(f"{who} {plan}: {st['packets']['extraneous']} extraneous packets")
            produced[plan] = st["packets"]["asked"]
            print(f"ok  {who} {plan}: {sum(expect.values())} tuples from "
                  f"{st['packets']['asked']} packets")
        if len(produced) == 2 and not produced["optimized"] < produced["unoptimized"]:
            fail(f"{who}: optimized plan produced {produced['optimized']} packets, "
                 f"unoptimized {produced['unoptimized']}")
    if checked < 2:
        fail("fewer than two processes resumed another one: the run proves nothing")


def printed_while_running(work):
    """The subject is the mailbox run behind a shell that waits for us: tuples printed
    before we let it finish were printed live."""
    gate = os.path.join(work, "gate")
    os.mkfifo(gate)
    q = 'range of S is SendMessage retrieve (S.mailbox) valid at S where S.process = "P1"'
    script = f'"{MAILBOX}" --seed 1 --processes 20 --messages 300; read x < "{gate}"'
    p = subprocess.Popen([VIGIL, "watch", "--sensors", VGL, "--format", "json", "--every",
                          "20ms", "-e", q, "--", "sh", "-c", script],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    first = p.stdout.readline()
    while first and not first.startswith("{") and time.time() < deadline:
        first = p.stdout.readline()
    with open(gate, "w") as g:  # now let the shell end
        g.write("go\n")
    out, err = p.communicate(timeout=60)
    if not first.startswith("{"):
        fail(f"no tuple printed while the subject ran: {err}")
    elif p.returncode != 0:
        fail(f"live printing: exit {p.returncode}: {err}")
    else:
        print("ok  a tuple was printed while the subject was still running")


def unknown_relation(work):
    marker = os.path.join(work, "ran")
    p = watch(["-e", "range of X is Nonexistent retrieve (X.a)", "--", "touch", marker])
    lines = [l for l in p.stderr.splitlines() if "error" in l]
    if p.returncode != 2 or not lines or "Nonexistent" not in p.stderr or "^" not in p.stderr \
            or "in the sensor description" not in p.stderr:
        fail(f"unknown relation: exit {p.returncode}, stderr {p.stderr!r}")
    elif os.path.exists(marker):
        fail("unknown relation: the subject was started anyway")
    else:
        print("ok  unknown relation: error before anything runs:", lines[0])


def subject_killed(work):
    q = 'range of S is SendMessage retrieve (S.mailbox) valid at S where S.process = "P1"'
    script = f'"{MAILBOX}" --seed 1 --processes 20 --messages 300; kill -9 $$'
    p = watch(["-e", q, "--", "sh", "-c", script])
    if p.returncode != 128 + 9:
        fail(f"killed subject: exit {p.returncode} (expected 137): {p.stderr}")
    elif "killed by signal 9" not in p.stderr:
        fail(f"killed subject: the exit is not reported: {p.stderr}")
    elif not values(p.stdout):
        fail("killed subject: the tuples answered before the kill are missing")
    else:
        print(f"ok  subject killed: {sum(values(p.stdout).values())} tuples printed, exit reported")


def monitor_tmp(pid):
    """The temporary folder of the `vigil watch` pid, read from its subject's VIGIL_CONTROL
    (the socket in it), or None before the subject runs."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
        for k in kids:
            with open(f"/proc/{k}/environ", "rb") as f:
                for e in f.read().split(b"\0"):
                    if e.startswith(b"VIGIL_CONTROL=/tmp/vigil-watch-"):
                        return os.path.dirname(e[len(b"VIGIL_CONTROL="):].decode())
    except OSError:
        pass
    return None


def monitor_killed(work):
    keep = os.path.join(work, "kept")
    q = 'range of S is SendMessage retrieve (S.mailbox) valid at S where S.process = "P1"'
    script = f'sleep 1; "{MAILBOX}" --seed 1 --processes 20 --messages 300; echo subject-done'
    log = open(os.path.join(work, "subject.log"), "w+")
    p = subprocess.Popen([VIGIL, "watch", "--sensors", VGL, "--keep", keep, "-e", q, "--", "sh",
                          "-c", script], stdout=log, stderr=log, start_new_session=True)
    # Killed once its subject runs; the folder it made (VIGIL_CONTROL's) is then removed
    # here, as the killed monitor cannot.
    tmp = None
    deadline = time.time() + 60
    while tmp is None and time.time() < deadline and p.poll() is None:
        tmp = monitor_tmp(p.pid)
        time.sleep(0.02)
    p.send_signal(signal.SIGKILL)
    p.wait()
    if tmp is None:
        fail("monitor killed: it started no subject within 60 s")
        return
    deadline = time.time() + 60
    text = ""
    while time.time() < deadline:
        log.seek(0)
        text = log.read()
        if "subject-done" in text:
            break
        time.sleep(0.1)
    if "subject-done" not in text:
        fail(f"monitor killed: the subject did not run to its end:\n{text}")
    elif "monitor gone" not in text:
        fail(f"monitor killed: the subject did not report the monitor gone:\n{text}")
    else:
        print("ok  monitor killed: the subject reported it and ran to its end")
    shutil.rmtree(tmp, ignore_errors=True)


def main():
    work = tempfile.mkdtemp(prefix="vigil-watch-test-")
    try:
        same_answers(work)
        printed_while_running(work)
        unknown_relation(work)
        subject_killed(work)
        monitor_killed(work)
    finally:
        if failures:
            print(f"live_test: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("all live checks passed")


main()
