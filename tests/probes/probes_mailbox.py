"""The README's probes example on the mailbox example, as a user types it (issue 21,
item 5): `vigil record --listen -- mailbox ... &`, then `vigil probes --pid $! enable
'mailbox.*'`. Entity flags start off under --listen; the sensors the probe switches on
must record on every entity anyway: SendMessage (flag on the sending process), Waiting
(on the mailbox), RunningOn (on the processor). The run's ground truth (--truth) says
what was sent: the recorded sends are exactly its last ones, from the switch on.
A user's own VIGIL_ENTITY_FLAGS=on is kept by --listen: with --sensors 'mailbox.*' every
send is recorded without any probe.

usage: probes_mailbox.py VIGIL MAILBOX"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

VIGIL, MAILBOX = sys.argv[1], sys.argv[2]


def main():
    d = tempfile.mkdtemp(prefix="vigil-probes-mailbox-")
    truth, trace = os.path.join(d, "truth.json"), os.path.join(d, "srv")
    # 8000 messages paced 200 us a step: some seconds, long after the switch.
    rec = subprocess.Popen([VIGIL, "record", "--listen", "-q", "-o", trace, "--", MAILBOX,
                            "--seed", "2", "--messages", "8000", "--pace", "200", "--truth",
                            truth], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
    try:
        p = subprocess.run([VIGIL, "probes", "--pid", str(rec.pid), "enable", "mailbox.*"],
                           capture_output=True, text=True, timeout=60)
        err = rec.communicate(timeout=300)[1]
        fail = None
        if p.returncode != 0 or "6 switched on" not in p.stdout:
            fail = f"vigil probes exited {p.returncode}: {p.stdout}{p.stderr}"
        elif rec.returncode != 0:
            fail = f"vigil record exited {rec.returncode}: {err}"
        else:
            fail = check(truth, trace) or flags_kept(d)
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()
    if fail:
        print(f"FAIL: {fail}\nkept {d}", file=sys.stderr)
        return 1
    shutil.rmtree(d)
    print("ok mailbox: the probe's sensors recorded on every entity")
    return 0


def flags_kept(d):
    truth, trace = os.path.join(d, "truth2.json"), os.path.join(d, "kept")
    p = subprocess.run([VIGIL, "record", "--listen", "-q", "--sensors", "mailbox.*", "-o",
                        trace, "--", MAILBOX, "--seed", "2", "--truth", truth],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, VIGIL_ENTITY_FLAGS="on"))
    if p.returncode != 0:
        return f"vigil record (VIGIL_ENTITY_FLAGS=on) exited {p.returncode}: {p.stderr}"
    return check(truth, trace, every=True)


def check(truth_path, trace, every=False):
    """None if the trace's sends are the run's last ones (every=True: all of them)."""
    with open(truth_path) as f:
        truth = json.load(f)
    p = subprocess.run([VIGIL, "dump", "--json", trace], capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        return f"vigil dump exited {p.returncode}: {p.stderr}"
    evs = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    count = {}
    for e in evs:
        count[e["name"]] = count.get(e["name"], 0) + 1
    sends = [(e["fields"]["process"]["name"], e["fields"]["mailbox"]["name"],
              e["fields"]["msg"], e["fields"]["payload"])
             for e in evs if e["name"] == "mailbox.SendMessage"]
    want = [(s["process"], s["mailbox"], s["msg"], s["payload"]) for s in truth["SendMessage"]]
    print(f"recorded {len(sends)} of the run's {len(want)} sends; {count}")
    if not sends:
        return "no mailbox.SendMessage recorded after the probe switched it on"
    if every and len(sends) != len(want):
        return "VIGIL_ENTITY_FLAGS=on under --listen: not every send recorded"
    if sends != want[len(want) - len(sends):]:
        return "the recorded sends are not the run's last ones, in order"
    for name in ("mailbox.Waiting.begin", "mailbox.Waiting.end", "mailbox.RunningOn.begin",
                 "mailbox.RunningOn.end"):
        if not count.get(name):
            return f"no {name} recorded"
    return None


if __name__ == "__main__":
    sys.exit(main())
