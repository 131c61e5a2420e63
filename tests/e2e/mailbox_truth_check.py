#!/usr/bin/env python3
"""Checks that a ground truth written by `mailbox --truth` describes a correct run of the
mailbox system: the invariants of processes, mailboxes and processors hold, and the
counts agree with the facts. Usage: mailbox_truth_check.py TRUTH.json
Prints one line per violation and exits 1 if there is any."""
import json
import sys
from collections import defaultdict

TRANSITIONS = {
    None: {"Ready"},
    "Ready": {"Running"},
    "Running": {"Ready", "Blocked", "Done"},
    "Blocked": {"Ready"},
    "Done": set(),
}


def check(t):
    errors = []
    err = errors.append
    cfg = t["config"]
    steps = t["steps"]

    # Entities: the configured number of each kind, named as documented, living the run.
    names = defaultdict(list)
    for e in t["entities"]:
        names[e["kind"]].append(e["name"])
        if e["from"] != 0 or e["to"] != steps + 1:
            err(f"entity {e['name']} lives {e['from']}..{e['to']}, not 0..{steps + 1}")
    if names["Process"] != [f"P{i + 1}" for i in range(cfg["processes"])]:
        err(f"process names {names['Process']}")
    if names["Mailbox"] != [f"M{i + 1}" for i in range(cfg["mailboxes"])]:
        err(f"mailbox names {names['Mailbox']}")
    if len(names["Processor"]) != cfg["processors"] or names["Processor"][:2] != ["A", "B"][
        : cfg["processors"]
    ]:
        err(f"processor names {names['Processor']}")

    # Process states: legal transitions in step order, every process ends Done.
    last = {}
    state_at = defaultdict(list)  # process -> [(step, state)]
    prev_step = 0
    for s in t["ProcessState"]:
        p, state = s["process"], s["state"]
        if s["step"] < prev_step:
            err(f"state change of {p} at step {s['step']} listed after step {prev_step}")
        prev_step = s["step"]
        if state not in TRANSITIONS[last.get(p)]:
            err(f"{p}: {last.get(p)} -> {state} at step {s['step']}")
        last[p] = state
        state_at[p].append((s["step"], state))
    for p in names["Process"]:
        if last.get(p) != "Done":
            err(f"{p} ends {last.get(p)}, not Done")

    def has_state(p, step, state):
        return (step, state) in state_at[p]

    # Messages: ids 1..messages, each sent once and received once from the same mailbox,
    # never before it was sent, and in the order sent (mailboxes are FIFO).
    sent = {}
    sent_order = defaultdict(list)
    for s in t["SendMessage"]:
        if s["msg"] in sent:
            err(f"message {s['msg']} sent twice")
        sent[s["msg"]] = s
        sent_order[s["mailbox"]].append(s["msg"])
    if sorted(sent) != list(range(1, cfg["messages"] + 1)):
        err(f"sent {len(sent)} distinct messages, configured {cfg['messages']}")
    received = {}
    received_order = defaultdict(list)
    for r in t["Receive"]:
        m = r["msg"]
        if m in received:
            err(f"message {m} received twice")
        received[m] = r
        received_order[r["mailbox"]].append(m)
        s = sent.get(m)
        if not s:
            err(f"message {m} received, never sent")
        elif s["mailbox"] != r["mailbox"] or r["step"] < s["step"]:
            err(f"message {m} sent to {s['mailbox']} at {s['step']}, "
                f"received from {r['mailbox']} at {r['step']}")
    if set(received) != set(sent):
        err(f"{len(sent)} messages sent, {len(received)} received")
    if dict(received_order) != dict(sent_order):
        err("some mailbox did not deliver its messages in the order they were sent")

    # Waiting: a process blocks on an empty mailbox and is woken, at a later step, by a
    # message sent to that mailbox then, which it receives.
    for w in t["Waiting"]:
        p, mb, frm, to = w["process"], w["mailbox"], w["from"], w.get("to")
        if to is None or to <= frm:
            err(f"Waiting {p} on {mb} from {frm} to {to}")
            continue
        if not has_state(p, frm, "Blocked") or not has_state(p, to, "Ready"):
            err(f"Waiting {p} on {mb} {frm}..{to}: not Blocked then Ready at those steps")
        wake = [r for r in t["Receive"] if r["process"] == p and r["step"] == to]
        if len(wake) != 1 or not wake[0]["waited"] or wake[0]["mailbox"] != mb:
            err(f"Waiting {p} on {mb} ends at {to} without receiving from it")
        elif sent[wake[0]["msg"]]["step"] != to:
            err(f"Waiting {p} on {mb} ends at {to}, not when its message was sent")
    blocked = sum(1 for s in t["ProcessState"] if s["state"] == "Blocked")
    if blocked != len(t["Waiting"]):
        err(f"{blocked} Blocked states but {len(t['Waiting'])} Waiting intervals")

    # RunningOn: a processor runs one process at a time, a process runs on one
    # processor at a time, each run starts Running and ends leaving the processor.
    by_processor = defaultdict(list)
    by_process = defaultdict(list)
    for r in t["RunningOn"]:
        p, c, frm, to = r["process"], r["processor"], r["from"], r.get("to")
        if to is None or to <= frm:
            err(f"RunningOn {p} on {c} from {frm} to {to}")
            continue
        if c not in names["Processor"]:
            err(f"RunningOn names unknown processor {c}")
        if not has_state(p, frm, "Running"):
            err(f"RunningOn {p} on {c} starts at {frm} but {p} is not Running then")
        by_processor[c].append((frm, to))
        by_process[p].append((frm, to))
    for what, runs in list(by_processor.items()) + list(by_process.items()):
        runs.sort()
        for a, b in zip(runs, runs[1:]):
            if b[0] < a[1]:
                err(f"{what} has overlapping runs {a} and {b}")
    running = sum(1 for s in t["ProcessState"] if s["state"] == "Running")
    if running != len(t["RunningOn"]):
        err(f"{running} Running states but {len(t['RunningOn'])} RunningOn intervals")

    # Facts happen within the run; the counts are those of the lists.
    for key in ("ProcessState", "SendMessage", "Receive"):
        for f in t[key]:
            if not 0 <= f["step"] <= steps:
                err(f"{key} fact at step {f['step']} outside 0..{steps}")
    ended = lambda rel: sum(1 for i in t[rel] if "to" in i)
    expected = {
        "mailbox.ProcessState": len(t["ProcessState"]),
        "mailbox.SendMessage": len(t["SendMessage"]),
        "mailbox.Waiting.begin": len(t["Waiting"]),
        "mailbox.Waiting.end": ended("Waiting"),
        "mailbox.RunningOn.begin": len(t["RunningOn"]),
        "mailbox.RunningOn.end": ended("RunningOn"),
        "vg.entity.create": len(t["entities"]),
        "vg.entity.reclaim": ended("entities"),
    }
    if t["counts"] != expected:
        err(f"counts {t['counts']} but the facts give {expected}")
    return errors


def main():
    if len(sys.argv) != 2:
        print("usage: mailbox_truth_check.py TRUTH.json", file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        truth = json.load(f)
    errors = check(truth)
    for e in errors[:20]:
        print(f"{sys.argv[1]}: {e}")
    if len(errors) > 20:
        print(f"{sys.argv[1]}: ... and {len(errors) - 20} more")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
