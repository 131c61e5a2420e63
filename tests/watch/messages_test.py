#!/usr/bin/env python3
"""vigil watch over Message, live (docs/watch.md "Derived relations live"): the messages
vigil net split finds, followed as the subject runs.

* Subjects recorded by `vigil watch --keep` (the sensor description is empty: the vg.net
  events are vigil's own): the three-tier example (client, front, back end on loopback)
  and Debian's redis-server driven by redis-benchmark on a free loopback port, each
  started by a shell that then waits for the test's go file, so that answers must be
  printed while the subject still runs.
* The lines printed live must equal, as a multiset, `vigil query`'s over the kept trace
  (the whole trace's analysis): a message lost, printed twice or with another network
  number fails. The stored answer is checked against `vigil net split`'s network files
  (network, send and receive times, bytes): the network numbers are net split's.
  `vigil watch --replay` of the kept trace answers the same.
* The analyses that cannot be followed are refused before anything runs (Network,
  NetWaiting), and so is Message from an attach (--pid).

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
import threading

from watch_common import stats_of

BIN = sys.argv[1]
VIGIL = os.path.join(BIN, "vigil")
QUERY = """range of M is Message
retrieve (M.network, M.sender, M.receiver, M.send_host, M.recv_host, M.send_program,
          M.recv_program, M.bytes, M.send_off, M.recv_off, M.cross_host)"""
WAIT_GO = 'while [ ! -e "{go}" ]; do sleep 0.05; done'


def json_lines(text):
    return sorted(l for l in text.splitlines() if l.startswith("{"))


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
    """Runs the script under vigil watch; returns (live lines, stored lines, stats, kept)."""
    vgl = os.path.join(work, "empty.vgl")
    with open(vgl, "w") as f:
        f.write("package empty;\n")
    kept = os.path.join(work, name)
    go = kept + ".go"
    watch = subprocess.Popen(
        [VIGIL, "watch", "--sensors", vgl, "--format", "json", "--stats", "--every", "50ms",
         "--keep", kept, "-e", QUERY, "--", "sh", "-c", script.replace("{go}", go)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err, out = [], []
    first = threading.Event()

    def read_out():
        for line in watch.stdout:
            out.append(line)
            first.set()

    readers = [threading.Thread(target=lambda: err.append(watch.stderr.read())),
               threading.Thread(target=read_out)]
    for t in readers:
        t.start()
    try:
        # The first message must be printed while the subject waits for the go file.
        if not first.wait(timeout=180) or watch.poll() is not None:
            raise SystemExit(f"FAIL: {name}: no message printed while the subject ran "
                             f"(exit {watch.poll()}, {len(out)} lines)")
        before = len(out)
        open(go, "w").close()
        watch.wait(timeout=240)
    finally:
        if watch.poll() is None:  # a failure above: ours to end, by its pid
            open(go, "w").close()
            watch.terminate()
            try:
                watch.wait(timeout=60)
            except subprocess.TimeoutExpired:
                watch.kill()
                watch.wait()
        for t in readers:
            t.join()
    st = stats_of(err[0])
    if watch.returncode != 0 or not st:
        raise SystemExit(f"FAIL: {name}: vigil watch exited {watch.returncode}: {err[0]}")
    if st["evaluation"] != "incremental":
        raise SystemExit(f"FAIL: {name}: evaluated by {st['evaluation']}: {err[0]}")
    q = subprocess.run([VIGIL, "query", kept, "--format", "json", "-e", QUERY],
                       capture_output=True, text=True, timeout=300)
    if q.returncode != 0:
        raise SystemExit(f"FAIL: {name}: vigil query over the kept trace: {q.stderr}")
    return json_lines("".join(out)), json_lines(q.stdout), before, kept


def net_split_messages(work, trace):
    """(network, send ns, receive ns, bytes) of every message edge of vigil net split."""
    out = os.path.join(work, os.path.basename(trace) + "-nets")
    r = subprocess.run([VIGIL, "net", "split", trace, "-o", out], capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: vigil net split {trace}: {r.stderr}")
    c = collections.Counter()
    for path in glob.glob(os.path.join(out, "net-*.json")):
        with open(path) as f:
            g = json.load(f)
        vs = g["vertices"]
        for e in g["edges"]:
            if e["kind"] == "message":
                a, b = vs[e["from"]], vs[e["to"]]
                c[(g["network"], a["ts"], max(a["ts"], b["ts"]), e["bytes"])] += 1
    return c


def check_subject(work, name, script):
    got, want, before, kept = live_run(work, name, script)
    if not want or got != want:
        raise SystemExit(
            f"FAIL: {name}: {len(got)} lines live, vigil query has {len(want)} over the kept "
            f"trace ({len(set(got) - set(want))} not in it, {len(set(want) - set(got))} "
            f"missing)\n  e.g. not in it: {sorted(set(got) - set(want))[:2]}\n  e.g. "
            f"missing: {sorted(set(want) - set(got))[:2]}")
    stored = collections.Counter()
    for line in want:
        t = json.loads(line)
        stored[(t["values"]["network"], t["from"], t["to"], t["values"]["bytes"])] += 1
    split = net_split_messages(work, kept)
    if stored != split:
        raise SystemExit(f"FAIL: {name}: the stored Message differs from vigil net split: "
                         f"{list((stored - split).items())[:3]} / "
                         f"{list((split - stored).items())[:3]}")
    # --replay feeds the same network from the finished recording.
    r = subprocess.run([VIGIL, "watch", "--replay", kept, "--format", "json", "--stats", "-e",
                        QUERY], capture_output=True, text=True, timeout=300)
    st = stats_of(r.stderr)
    if r.returncode != 0 or not st or st["evaluation"] != "incremental" or \
            json_lines(r.stdout) != want:
        raise SystemExit(f"FAIL: {name}: --replay: exit {r.returncode}, "
                         f"{len(json_lines(r.stdout))} lines, vigil query has {len(want)}: "
                         f"{r.stderr[-500:]}")
    nets = {k[0] for k in stored}
    if len(nets) < 2:
        raise SystemExit(f"FAIL: {name}: {len(nets)} network(s): too few to tell numbers apart")
    print(f"ok  {name}: {len(got)} messages of {len(nets)} networks live = vigil query over "
          f"the kept trace = vigil net split = --replay ({before} printed before the subject "
          f"ended)")


def refused(args, query, relation, what):
    r = subprocess.run([VIGIL, "watch", "-e", query, *args], capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 2 or r.stdout or relation not in r.stderr or what not in r.stderr:
        raise SystemExit(f"FAIL: {relation}: not refused as expected (exit {r.returncode}): "
                         f"{r.stdout!r} {r.stderr!r}")
    print(f"ok  refused: {r.stderr.strip().splitlines()[0][:150]}")


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
        vgl = os.path.join(work, "empty.vgl")
        for rel in ("Network", "NetWaiting"):
            refused(["--sensors", vgl, "--", "true"],
                    f"range of N is {rel} retrieve (N.network)" if rel != "Network" else
                    "range of N is Network retrieve (N.id)", rel, "cannot be followed live")
        refused(["--pid", "1"], "range of M is Message retrieve (M.bytes)", "Message",
                "cannot be followed from an attach")
        ok = True
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"messages_test: kept {work}")


main()
