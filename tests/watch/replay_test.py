#!/usr/bin/env python3
"""The α transformations keep every answer: for recordings of the mailbox example (every
sensor on), each query is answered by `vigil query` over the full recording and by
`vigil watch --replay` with the optimized and the unoptimized plan (keeping only the
packets each plan's sensors would have recorded). The three answers must be equal, the
optimizer must have applied the transformation the query is there to exercise
(`vigil explain --sensors`), and the optimized plan must ask for no more packets than the
unoptimized one (strictly fewer where the transformation narrows).

The packet counts are checked against babeltrace2's reading of the same recording: every
user-sensor packet is counted once (asked + extraneous + earlier = the recording's user
packets, sources = its vg.* packets), every plan leaves some packets out (a positive
control for the live tests' `extraneous == 0`), and the plan for one mailbox asks for
exactly the Waiting packets on that mailbox.

Each replay is also answered by the update network in updates of a few events (every
answer tuple printed exactly once: the sorted lines equal vigil query's) and by the
re-evaluation it replaces (VIGIL_WATCH_REEVALUATE=1); shapes the network cannot take
(aggregates, Clock) must say so once on stderr and answer by re-evaluation.

usage: replay_test.py BIN-DIR MAILBOX-VGL"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN, VGL = sys.argv[1], sys.argv[2]
VIGIL = os.path.join(BIN, "vigil")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(*args):
    p = subprocess.run([VIGIL, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


# (name, query, rule the optimized plan must show or None, strictly fewer packets)
QUERIES = [
    ("resumed-by (O2, O4, O3 end only)", """
range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "{p}"
when S precede end of W""", ["O2, O4", "O3", "end only"], True),
    ("waiting on one mailbox (O2 on the target, whole intervals)", """
range of W is Waiting
retrieve (W.process, W.mailbox) where W.mailbox = "M1" """, ["O2, O4"], True),
    ("sends after a first send (O3 on an event relation)", """
range of S is SendMessage
range of T is SendMessage
retrieve (T.mailbox, T.msg) valid at T
where S.process = "{p}" and T.process = S.process and S.msg != T.msg
when S precede T""", ["O2, O4", "O3"], True),
    ("running on one processor joined with waits (O2 on the performer)", """
range of W is Waiting
range of R is RunningOn
retrieve (W.process, R.processor) where W.process = R.process and R.processor = "A" """,
     ["O2, O4"], True),
    ("aggregate: never narrowed", """
range of S is SendMessage
retrieve (S.process, n = count(S.msg by S.process for ever where S.process = "{p}"))
where S.process = "{p}" """, None, False),
    ("state sensor: flag on the sensor", """
range of PS is ProcessState
retrieve (PS.process, PS.state) where PS.state = "Blocked" """, None, False),
    ("a later statement over an earlier result", """
range of S is SendMessage
retrieve into Mine (m = S.mailbox) where S.process = "{p}"
range of X is Mine
range of W is Waiting
retrieve (W.process) valid at end of W where W.mailbox = X.m when X precede end of W""",
     ["O2, O4"], True),
    ("a name that never exists", """
range of S is SendMessage
retrieve (S.mailbox) where S.process = "nobody" """, ["O2, O4"], True),
    ("sampled every 10 ticks (O6)", """
range of RO is RunningOn
range of C is Clock[10]
retrieve RunningOnEvery10 (Process = RO.Process, Processor = RO.Processor)
when C overlap RO""", ["O6"], True, ["--tick", "50us"]),
    ("sampled on one processor, clock first (O2, O4, O6)", """
range of C is Clock[5]
range of RO is RunningOn
retrieve (RO.process) valid at C where RO.processor = "A" when RO overlap C""",
     ["O2, O4, O6"], True, ["--tick", "50us"]),
    ("sends while someone waits on the mailbox (overlap: both sides dropped)", """
range of S is SendMessage
range of W is Waiting
retrieve (W.process, S.msg) where S.mailbox = W.mailbox and S.process = "{p}"
when S overlap W""", ["O2, O4"], True),
    ("three variables: a send, the wait it ends, the run after (semi-naive, 3 runs)", """
range of S is SendMessage
range of W is Waiting
range of R is RunningOn
retrieve (W.process, R.processor, S.msg) valid at end of W
where S.mailbox = W.mailbox and R.process = W.process and S.process = "{p}"
when S overlap W and end of W precede R""", ["O2, O4"], False),
    ("a clock that only precedes: no O6", """
range of C is Clock[10]
range of RO is RunningOn
retrieve (RO.process) valid at begin of RO when C precede RO""", None, False,
     ["--tick", "50us"]),
]


BT_LINE = re.compile(r"^\[[^]]*\] \([^)]*\) \S+ (\S+): ")


def packets(trace):
    """babeltrace2's reading of a recording: user and vg.* packet counts, and per mailbox
    name the Waiting packets (begin and end) on it."""
    p = subprocess.run(["babeltrace2", trace], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"babeltrace2 {trace}: {p.stderr}")
        return None
    user = vg = 0
    mailbox_of, waiting = {}, collections.Counter()
    for line in p.stdout.splitlines():
        m = BT_LINE.match(line)
        if not m:
            fail(f"babeltrace2 line not understood: {line!r}")
            continue
        name = m.group(1)
        if name.startswith("vg."):
            vg += 1
            c = re.search(r'kind = "Mailbox", id = (\d+), gen = (\d+), name = "(\w+)"', line)
            if name == "vg.entity.create" and c:
                mailbox_of[(c.group(1), c.group(2))] = c.group(3)
        else:
            user += 1
            w = re.search(r"mailbox = \{ id = (\d+), gen = (\d+) \}", line)
            if name.startswith("mailbox.Waiting.") and w:
                waiting[mailbox_of.get((w.group(1), w.group(2)), "?")] += 1
    return {"user": user, "vg": vg, "waiting": waiting}


def accounting(name, plan, st, truth):
    """Every packet of the recording counted once, and some left out."""
    pk = st["packets"]
    if pk["asked"] + pk["extraneous"] + pk["earlier"] != truth["user"]:
        fail(f"{name} ({plan}): asked {pk['asked']} + extraneous {pk['extraneous']} + "
             f"earlier {pk['earlier']} != {truth['user']} user packets recorded")
    if pk["sources"] != truth["vg"]:
        fail(f"{name} ({plan}): {pk['sources']} sources, the recording has {truth['vg']}")
    if pk["earlier"]:
        fail(f"{name} ({plan}): {pk['earlier']} packets 'earlier' in a replay")
    if not pk["extraneous"]:
        fail(f"{name} ({plan}): no packet left out (extraneous 0 of {truth['user']}): the "
             f"filter's count of what it drops is not working")


def answer(args, env=None):
    p = subprocess.run([VIGIL, *args], capture_output=True, text=True, timeout=120,
                       env={**os.environ, **(env or {})})
    rc, out, err = p.returncode, p.stdout, p.stderr
    if rc != 0:
        fail(f"{' '.join(args[:3])} exited {rc}: {err.strip()}")
        return None, None
    stats = None
    for line in err.splitlines():
        if line.startswith('{"watch"'):
            stats = json.loads(line)["watch"]
    return sorted(out.splitlines()), stats


def check(trace, truth, name, q, rules, narrows, extra=()):
    extra = list(extra)
    rc, out, err = run("explain", "-e", q, "--sensors", VGL)
    if rc != 0:
        fail(f"{name}: explain exited {rc}: {err}")
        return
    after = out.split("after optimization:\n")[-1]
    for rule in rules or []:
        if rule not in after:
            fail(f"{name}: the optimized α plan does not show {rule!r}:\n{after}")
    if rules is None and ("O2" in after or "O3" in after or "O6" in after):
        fail(f"{name}: narrowed although it must not be:\n{after}")
    full, _ = answer(["query", trace, "--format", "json", "-e", q, *extra])
    opt, s_opt = answer(["watch", "--replay", trace, "--sensors", VGL, "--format", "json",
                         "--stats", "-e", q, *extra])
    un, s_un = answer(["watch", "--replay", trace, "--sensors", VGL, "--format", "json",
                       "--stats", "--unoptimized", "-e", q, *extra])
    if full is None or opt is None or un is None:
        return
    if opt != full:
        fail(f"{name}: the optimized plan's answer differs ({len(opt)} vs {len(full)} tuples)")
    incremental = not any(w in q for w in ("count(", "Clock", "range of X is Mine"))
    base = ["watch", "--replay", trace, "--sensors", VGL, "--format", "json", "--stats",
            "-e", q, *extra]
    for every in (7,):
        inc, s_inc = answer([*base, "--update-events", str(every)])
        if inc is None:
            continue
        if inc != full:
            fail(f"{name}: updates of {every} events answer differently ({len(inc)} vs "
                 f"{len(full)} tuples)")
        want = "incremental" if incremental else "re-evaluation"
        if s_inc.get("evaluation") != want:
            fail(f"{name}: evaluated by {s_inc.get('evaluation')}, expected {want}")
        if incremental and s_inc["state"]["deltas"] == 0 and full:
            fail(f"{name}: the network took no final tuple")
    if not incremental:
        _, _, err = run(*base)
        if err.count("answering by re-evaluation at each update: ") != 1:
            fail(f"{name}: the fallback to re-evaluation is not said once:\n{err}")
    re, s_re = answer([*base, "--update-events", "113"], {"VIGIL_WATCH_REEVALUATE": "1"})
    if re is not None and (re != full or s_re.get("evaluation") != "re-evaluation"):
        fail(f"{name}: re-evaluation in updates answers differently ({len(re)} vs {len(full)})")
    if un != full:
        fail(f"{name}: the unoptimized plan's answer differs ({len(un)} vs {len(full)})")
    if truth:
        accounting(name, "optimized", s_opt, truth)
        accounting(name, "unoptimized", s_un, truth)
        if "one mailbox" in name and s_opt["packets"]["asked"] != truth["waiting"]["M1"]:
            fail(f"{name}: asked for {s_opt['packets']['asked']} packets, the recording "
                 f"has {truth['waiting']['M1']} Waiting packets on M1")
    a_opt, a_un = s_opt["packets"]["asked"], s_un["packets"]["asked"]
    if a_opt > a_un or (narrows and a_opt >= a_un):
        fail(f"{name}: optimized plan asks for {a_opt} packets, unoptimized {a_un}")
    print(f"ok  {name}: {len(full)} tuples; packets {a_opt} optimized, {a_un} unoptimized")
    return len(full)


def main():
    work = tempfile.mkdtemp(prefix="vigil-replay-")
    try:
        nonempty = 0
        for seed, procs in ((3, 6), (7, 12), (11, 30)):
            trace = os.path.join(work, f"t{seed}")
            p = subprocess.run([VIGIL, "record", "-q", "-o", trace, "--",
                                os.path.join(BIN, "mailbox"), "--seed", str(seed),
                                "--processes", str(procs), "--processors", "3",
                                "--messages", "300"], capture_output=True, text=True,
                               timeout=120)
            if p.returncode != 0:
                fail(f"recording seed {seed}: {p.stderr}")
                continue
            # a process that sends (the answer must not be trivially empty)
            rc, out, _ = run("query", trace, "--format", "json", "-e",
                             "range of S is SendMessage retrieve (p = S.process)")
            senders = sorted({json.loads(l)["values"]["p"] for l in out.splitlines()})
            truth = packets(trace)
            for who in senders[:2]:
                for name, q, rules, narrows, *extra in QUERIES:
                    n = check(trace, truth, f"seed {seed}, {who}: {name}",
                              q.replace("{p}", who),
                              rules, narrows, *extra)
                    nonempty += bool(n)
        if nonempty < 10:
            fail(f"only {nonempty} checks had a non-empty answer: the test proves too little")
    finally:
        if failures:
            print(f"replay_test: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("all answers equal")


main()
