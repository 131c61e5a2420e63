#!/usr/bin/env python3
"""vigil watch over the networks, live (docs/watch.md "Derived relations live"): the
messages and the threads' running and waiting vigil net split finds, followed as the
subject runs, and its networks given at the end.

* Subjects recorded by `vigil watch --keep` (the sensor description is empty: the vg.net
  events are vigil's own): the three-tier example (client, front, back end on loopback)
  and Debian's redis-server driven by redis-benchmark on a free loopback port, each
  started by a shell that then waits for the test's go file, so that answers must be
  printed while the subject still runs.
* The lines printed live (Message, NetRunning, NetWaiting, Network) must equal, as a
  multiset, `vigil query`'s over the kept trace (the whole trace's analysis): a tuple
  lost or with another network number fails. The stored Message is checked against
  `vigil net split`'s network files (network, send and receive times, bytes): the network
  numbers are net split's. `vigil watch --replay` of the kept trace answers the same.
* The update network takes each of net split's networks, message edges and thread edges
  exactly once (--stats deltas), live and --replay: a tuple given twice across updates,
  which the printed set would hide, fails. --replay binds the relations from their
  schemas: no analysis of the whole trace runs (--stats "analyses" 0).
* The networks from an attach (--pid) are refused, and Network where the statements
  would be re-evaluated (a snapshot's networks are not final).

usage: messages_test.py BIN-DIR"""
import collections
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

from watch_common import json_lines, live_watch, refused, stats_of

BIN = sys.argv[1]
VIGIL = os.path.join(BIN, "vigil")
# Message, NetRunning and NetWaiting followed at each update, Network given at the end.
QUERY = """range of M is Message
range of R is NetRunning
range of W is NetWaiting
range of N is Network
retrieve (M.network, M.sender, M.receiver, M.send_host, M.recv_host, M.send_program,
          M.recv_program, M.bytes, M.send_off, M.recv_off, M.cross_host)
retrieve (R.network, R.thread, R.host, R.program)
retrieve (W.network, W.thread, W.host, W.program)
retrieve (N.id, N.input, N.what, N.program, N.last_program, N.servers, N.hosts, N.threads,
          N.messages, N.bytes, N.response, N.thread)"""
WAIT_GO = 'while [ ! -e "{go}" ]; do sleep 0.05; done'


def three_tier(work, go):
    return (f"{os.path.join(BIN, 'three_tier')} run --threads 5 --requests 40 >/dev/null\n"
            + WAIT_GO.format(go=go))


def redis(work, go):
    """Debian's redis-server on a free loopback port, redis-benchmark's requests, then the
    go file, then SHUTDOWN (the server ends itself; the test ends vigil watch by pid on a
    failure)."""
    server, bench, cli = (shutil.which(p) for p in ("redis-server", "redis-benchmark",
                                                      "redis-cli"))
    if not (server and bench and cli):
        return None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"""{server} --port {port} --bind 127.0.0.1 --save '' --appendonly no --logfile '' \\
    --loglevel warning --dir {work} &
for i in $(seq 400); do {cli} -p {port} ping >/dev/null 2>&1 && break; sleep 0.05; done
{bench} -p {port} -n 200 -c 2 -t set,get -q >/dev/null
{WAIT_GO.format(go=go)}
{cli} -p {port} shutdown nosave >/dev/null
wait
"""


def live_run(work, name, script):
    """Runs the script under vigil watch; returns (live lines, stored lines, lines printed
    before the subject ended, kept trace, --stats)."""
    vgl = os.path.join(work, "empty.vgl")
    with open(vgl, "w") as f:
        f.write("package empty;\n")
    kept = os.path.join(work, name)
    go = kept + ".go"
    # The first message must be printed while the subject waits for the go file.
    out, err, before = live_watch(
        [VIGIL, "watch", "--sensors", vgl, "--format", "json", "--stats", "--every", "50ms",
         "--keep", kept, "-e", QUERY, "--", "sh", "-c", script.replace("{go}", go)], go, name,
        180)
    st = stats_of(err)
    if not st:
        raise SystemExit(f"FAIL: {name}: no --stats: {err}")
    if st["evaluation"] != "incremental":
        raise SystemExit(f"FAIL: {name}: evaluated by {st['evaluation']}: {err}")
    q = subprocess.run([VIGIL, "query", kept, "--format", "json", "-e", QUERY],
                       capture_output=True, text=True, timeout=300)
    if q.returncode != 0:
        raise SystemExit(f"FAIL: {name}: vigil query over the kept trace: {q.stderr}")
    return json_lines(out), json_lines(q.stdout), before, kept, st


def given_once(name, how, st, want):
    """Every network, message and thread edge of net split taken by the update network
    exactly once: the printed answer is a set (docs/tquel.md), so a tuple the analysis
    gave twice across updates would print once; the count of final tuples the network
    took (one variable per retrieve) shows it, and a lost one."""
    if st["state"]["deltas"] != want:
        raise SystemExit(f"FAIL: {name}: {how}: the update network took "
                         f"{st['state']['deltas']} Network, Message, NetRunning and NetWaiting "
                         f"tuples, vigil net split has {want} networks and edges (given twice "
                         f"or lost across updates)")


def net_split_messages(work, trace):
    """(network, send ns, receive ns, bytes) of every message edge of vigil net split, and
    the number of its networks, message edges and thread edges (Network, Message,
    NetRunning + NetWaiting tuples)."""
    out = os.path.join(work, os.path.basename(trace) + "-nets")
    r = subprocess.run([VIGIL, "net", "split", trace, "-o", out], capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: vigil net split {trace}: {r.stderr}")
    c = collections.Counter()
    tuples = 0
    for path in glob.glob(os.path.join(out, "net-*.json")):
        with open(path) as f:
            g = json.load(f)
        vs = g["vertices"]
        tuples += 1 + sum(e["kind"] in ("message", "thread") for e in g["edges"])
        for e in g["edges"]:
            if e["kind"] == "message":
                a, b = vs[e["from"]], vs[e["to"]]
                c[(g["network"], a["ts"], max(a["ts"], b["ts"]), e["bytes"])] += 1
    return c, tuples


def check_subject(work, name, script):
    got, want, before, kept, live_st = live_run(work, name, script)
    if not want or got != want:
        raise SystemExit(
            f"FAIL: {name}: {len(got)} lines live, vigil query has {len(want)} over the kept "
            f"trace ({len(set(got) - set(want))} not in it, {len(set(want) - set(got))} "
            f"missing)\n  e.g. not in it: {sorted(set(got) - set(want))[:2]}\n  e.g. "
            f"missing: {sorted(set(want) - set(got))[:2]}")
    stored = collections.Counter()
    for line in want:
        t = json.loads(line)
        if "sender" not in t["values"]:
            continue
        stored[(t["values"]["network"], t["from"], t["to"], t["values"]["bytes"])] += 1
    split, split_tuples = net_split_messages(work, kept)
    if stored != split:
        raise SystemExit(f"FAIL: {name}: the stored Message differs from vigil net split: "
                         f"{list((stored - split).items())[:3]} / "
                         f"{list((split - stored).items())[:3]}")
    given_once(name, "live", live_st, split_tuples)
    # --replay feeds the same network from the finished recording.
    r = subprocess.run([VIGIL, "watch", "--replay", kept, "--format", "json", "--stats", "-e",
                        QUERY], capture_output=True, text=True, timeout=300)
    st = stats_of(r.stderr)
    if r.returncode != 0 or not st or st["evaluation"] != "incremental" or \
            json_lines(r.stdout) != want:
        raise SystemExit(f"FAIL: {name}: --replay: exit {r.returncode}, "
                         f"{len(json_lines(r.stdout))} lines, vigil query has {len(want)}: "
                         f"{r.stderr[-500:]}")
    given_once(name, "--replay", st, split_tuples)
    # Bound from the derived relations' schemas: no analysis of the whole recording ran,
    # at bind or after (the update network's live operations made every tuple).
    if st.get("analyses") != 0:
        raise SystemExit(f"FAIL: {name}: --replay ran {st.get('analyses')} analyses of the "
                         f"whole trace (binding needs the schemas only)")
    nets = {k[0] for k in stored}
    if len(nets) < 2:
        raise SystemExit(f"FAIL: {name}: {len(nets)} network(s): too few to tell numbers apart")
    print(f"ok  {name}: {sum(stored.values())} messages of {len(nets)} networks, "
          f"{len(got)} Message, NetRunning, NetWaiting and Network tuples live = vigil query "
          f"over the kept trace = vigil net split = --replay ({before} printed before the "
          f"subject ended; {split_tuples} tuples taken once each)")


def main():
    work = tempfile.mkdtemp(prefix="vigil-watch-messages-")
    ok = False
    try:
        check_subject(work, "three_tier", three_tier(work, "{go}"))
        script = redis(work, "{go}")
        if script is None:
            print("skipped: redis-server and redis-tools not installed "
                  "(scripts/install-deps.sh)")
        else:
            check_subject(work, "redis", script)
        # Network re-evaluated (a shape the update network does not take) would print a
        # snapshot's networks, not final: refused before the subject runs.
        refused(VIGIL, ["--sensors", os.path.join(work, "empty.vgl"), "--", "false"],
                "range of N is Network retrieve unique (N.id)", "Network",
                "a snapshot's networks are not final")
        for rel in ("Message", "NetRunning", "NetWaiting", "Network"):
            refused(VIGIL, ["--pid", "1"], f"range of M is {rel} retrieve (M.network)"
                    if rel != "Network" else "range of M is Network retrieve (M.id)", rel,
                    "cannot be followed from an attach")
        ok = True
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"messages_test: kept {work}")


main()
