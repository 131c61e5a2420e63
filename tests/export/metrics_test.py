#!/usr/bin/env python3
"""vigild --metrics (docs/export.md): scraped over HTTP and parsed with Debian's
python3-prometheus-client parser.

  metrics_test.py BIN   every metric there with its type, zero before any peer; a
                        subject sending to the collector (VIGIL_TO): the
                        bytes received cover the stored stream files, the packets
                        received cover the stored packets (vigil dump --stats), the
                        subject counted while connected and no longer after; a peer
                        sending garbage is one connection error; per-host lag: a
                        series per host that sent (its label), the lag finite and not
                        negative, the newest event's time within the run; a host
                        whose clock reads 30 s behind (VIGIL_CLOCK_SKEW_NS) lags 30 s
                        more, and its newest event is 30 s older; a records subject
                        (vgd.py frames) whose newest record is 5 s old lags 5 s and
                        shows that record's time exactly; only GET /metrics is
                        answered (405 with Allow: GET, 404 elsewhere); a bad or busy
                        --metrics address is one line and a non-zero exit.
"""
import json
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

BIN = sys.argv[1]
WANT = {
    "vigild_subjects_connected": "gauge", "vigild_connections_open": "gauge",
    "vigild_connections": "counter", "vigild_bytes_received": "counter",
    "vigild_packets_received": "counter", "vigild_records_received": "counter",
    "vigild_events_discarded": "counter", "vigild_connection_errors": "counter",
    "vigild_store_backlog": "gauge",
}
PER_HOST = ("vigild_host_lag_seconds", "vigild_host_newest_event_timestamp_seconds")
SKEWED = "vigil-lag-skewed"
RECORDS_HOST = "vigil-lag-records"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "collector"))
import vgd  # noqa: E402  (the collector tests' frames: a records subject)


def fail(msg):
    raise AssertionError(msg)


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
        if r.status != 200 or not r.headers["Content-Type"].startswith("text/plain; version=0.0.4"):
            fail(f"GET /metrics: {r.status} {r.headers['Content-Type']}")
        text = r.read().decode()
    values, types = {}, {}
    for fam in text_string_to_metric_families(text):
        types[fam.name] = fam.type
        for s in fam.samples:
            if fam.name in PER_HOST:  # {name: {host: value}}
                if set(s.labels) != {"host"}:
                    fail(f"{fam.name}: labels {s.labels}")
                values.setdefault(fam.name, {})[s.labels["host"]] = s.value
            else:
                values[fam.name] = s.value
    return values, types


def check_lag(v, start, end, rec_newest_ns, rec_sent, rec_scraped):
    """The per-host series, one per host that sent: this machine's, the skewed one, and
    the records subject's, whose newest record was 5 s old when sent."""
    me = socket.gethostname()
    for name in PER_HOST:
        if set(v.get(name, {})) != {me, SKEWED, RECORDS_HOST}:
            fail(f"{name}: hosts {v.get(name)}, expected {me}, {SKEWED}, {RECORDS_HOST}")
    lag, newest = v[PER_HOST[0]], v[PER_HOST[1]]
    if not (math.isfinite(lag[me]) and lag[me] >= 0):
        fail(f"lag of {me}: {lag[me]}")
    # the skewed host's clock reads 30 s behind: its data is 30 s later, within the run
    if not 30 <= lag[SKEWED] <= 30 + (end - start):
        fail(f"lag of {SKEWED} (clock 30 s behind): {lag[SKEWED]}, run {end - start:.1f} s")
    if not start <= newest[me] <= end:
        fail(f"newest event of {me}: {newest[me]}, not within the run {start}..{end}")
    if not start - 30 <= newest[SKEWED] <= end - 30:
        fail(f"newest event of {SKEWED}: {newest[SKEWED]}, run {start}..{end}")
    if abs(newest[RECORDS_HOST] - rec_newest_ns / 1e9) > 1e-6:
        fail(f"newest record of {RECORDS_HOST}: {newest[RECORDS_HOST]}, sent {rec_newest_ns}")
    if not 5 <= lag[RECORDS_HOST] <= 5 + (rec_scraped - rec_sent):
        fail(f"lag of {RECORDS_HOST}: {lag[RECORDS_HOST]}, its newest record 5 s old when sent")


def send_records(port):
    """A records subject (the frames of the Python, Java and Perl writers) whose newest
    record is 5 s old: (its time, when it was sent)."""
    p = vgd.Peer(port, timeout=60)
    p.send(vgd.hello(host=RECORDS_HOST, pid=77, start=1, program="lag.py"))
    p.welcome()
    p.send(vgd.schema(1, "lag.Tick", [("n", vgd.UINT32, "")]))
    sent = time.time()
    newest = time.time_ns() - 5_000_000_000
    p.send(vgd.records(1, [(1, newest - 1000 * (9 - i), 1, struct.pack("<I", i))
                           for i in range(10)]))
    if p.ack() != 1:
        fail("the records were not acknowledged")
    p.send(vgd.frame(vgd.BYE))
    p.close()
    return newest, sent


def wait_for(port, cond, what, bound=60):
    deadline = time.time() + bound
    while True:
        v, _ = scrape(port)
        if cond(v):
            return v
        if time.time() > deadline:
            fail(f"{what}: not within {bound} s; metrics {v}")
        time.sleep(0.05)


def status(port, method, path):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                 data=b"x" if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.headers


def main():
    work = tempfile.mkdtemp(prefix="vigil-metrics-")
    procs = []
    try:
        out, ready = os.path.join(work, "col"), os.path.join(work, "ready")
        log = open(os.path.join(work, "vigild.log"), "w")
        vd = subprocess.Popen([os.path.join(BIN, "vigild"), "-o", out, "--listen", "127.0.0.1:0",
                               "--no-socket", "--metrics", "127.0.0.1:0", "--ready", ready],
                              stderr=log)
        procs.append(vd)
        deadline = time.time() + 60
        while not os.path.exists(ready):
            if vd.poll() is not None or time.time() > deadline:
                fail(f"vigild not ready (exit {vd.poll()})")
            time.sleep(0.02)
        with open(ready) as f:
            info = json.load(f)
        port, mport = info["port"], info["metrics_port"]
        v, types = scrape(mport)
        for name, typ in WANT.items():
            if types.get(name) != typ:
                fail(f"{name}: type {types.get(name)}, expected {typ}")
        if any(v[n] for n in WANT):
            fail(f"not zero before any peer: {v}")
        if any(types.get(n) != "gauge" or v.get(n) for n in PER_HOST):
            fail(f"per-host gauges: types {types}, a host before any peer: {v}")

        # only GET /metrics
        for method, path, want in (("POST", "/metrics", 405), ("HEAD", "/metrics", 405),
                                   ("PUT", "/metrics", 405), ("GET", "/", 404),
                                   ("GET", "/metrics/x", 404)):
            st, hdrs = status(mport, method, path)
            if st != want or (want == 405 and hdrs.get("Allow") != "GET"):
                fail(f"{method} {path}: {st} (Allow {hdrs.get('Allow')}), expected {want}")

        # a subject (linked with libvigil, sending by VIGIL_TO: no preload, so the
        # sanitizer build too) that stays connected until it is ended by its pid; its
        # spool (kept by a killed subject) is in the test's folder, not /dev/shm
        spool = os.path.join(work, "spool")
        start = time.time()
        slow = subprocess.Popen([os.path.join(BIN, "mailbox"), "--messages", "1000000",
                                 "--pace", "1000"],
                                env=dict(os.environ, VIGIL_TO=f"127.0.0.1:{port}", VIGIL_SPOOL=spool),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(slow)
        wait_for(mport, lambda m: m["vigild_subjects_connected"] >= 1, "subject connected")
        slow.kill()
        slow.wait(120)
        wait_for(mport, lambda m: m["vigild_subjects_connected"] == 0, "subject gone")

        before, _ = scrape(mport)
        p = subprocess.run([os.path.join(BIN, "mailbox"), "--seed", "2"],
                           env=dict(os.environ, VIGIL_TO=f"127.0.0.1:{port}", VIGIL_SPOOL=spool),
                           capture_output=True, timeout=300)
        if p.returncode != 0:
            fail(f"mailbox with VIGIL_TO exited {p.returncode}: {p.stderr[-400:]}")
        # what the collector stored, read once the subject is gone (nothing is written then)
        after = wait_for(mport, lambda m: m["vigild_subjects_connected"] == 0, "subjects gone")
        hostdir = os.path.join(out, socket.gethostname())
        stats = subprocess.run([os.path.join(BIN, "vigil"), "dump", "--stats", "--json", hostdir],
                               capture_output=True, text=True, timeout=300)
        rows = [json.loads(l) for l in stats.stdout.splitlines()]
        packets = sum(r["packets"] for r in rows if "stream" in r)
        size = sum(r["bytes"] for r in rows if "stream" in r)
        if not packets or after["vigild_packets_received"] < packets:
            fail(f"{after['vigild_packets_received']} packets received, {packets} stored")
        if after["vigild_bytes_received"] < size:
            fail(f"{after['vigild_bytes_received']} bytes received, {size} bytes of streams stored")
        if after["vigild_connections"] <= before["vigild_connections"]:
            fail("no connection counted")
        if after["vigild_connection_errors"] != before["vigild_connection_errors"]:
            fail(f"connection errors from a clean run: {after}")

        # per-host lag: a host of its own whose clock reads 30 s behind
        p = subprocess.run([os.path.join(BIN, "mailbox"), "--seed", "3"],
                           env=dict(os.environ, VIGIL_TO=f"127.0.0.1:{port}", VIGIL_SPOOL=spool,
                                    VIGIL_HOST=SKEWED, VIGIL_CLOCK_SKEW_NS="-30000000000"),
                           capture_output=True, timeout=300)
        if p.returncode != 0:
            fail(f"mailbox on {SKEWED} exited {p.returncode}: {p.stderr[-400:]}")
        rec_newest, rec_sent = send_records(port)
        lagged = wait_for(mport, lambda m: m["vigild_subjects_connected"] == 0, "subject gone")
        check_lag(lagged, start, time.time(), rec_newest, rec_sent, time.time())

        # garbage: one connection error
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n" + b"\xff" * 64)
            try:
                s.recv(100)
            except OSError:
                pass
        wait_for(mport, lambda m: m["vigild_connection_errors"] ==
                 after["vigild_connection_errors"] + 1, "one connection error")
        wait_for(mport, lambda m: m["vigild_connections_open"] == 0, "connections closed")

        # bad and busy addresses
        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        for addr in ("nonsense", "127.0.0.1:x", f"127.0.0.1:{busy.getsockname()[1]}"):
            r = subprocess.run([os.path.join(BIN, "vigild"), "-o", os.path.join(work, "o2"),
                                "--listen", "127.0.0.1:0", "--no-socket", "--metrics", addr],
                               capture_output=True, text=True, timeout=60)
            lines = r.stderr.strip().splitlines()
            if r.returncode == 0 or len(lines) != 1 or "--metrics" not in lines[0]:
                fail(f"--metrics {addr}: exit {r.returncode}, {r.stderr!r}")
        busy.close()
        vd.terminate()
        if vd.wait(60) != 0:
            fail(f"vigild exited {vd.returncode} on SIGTERM")
        print(f"metrics: {after['vigild_packets_received']:.0f} packets, "
              f"{after['vigild_bytes_received']:.0f} bytes; lag per host "
              f"{lagged[PER_HOST[0]]}; errors and methods as documented")
    except (AssertionError, subprocess.TimeoutExpired, OSError) as e:
        print(f"FAIL: {e}\n(kept {work})")
        return 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
