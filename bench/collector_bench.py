"""The collector's measured outcome (issue 9, docs/protocol.md): records/s one vigild
ingests from 1, 8 and 64 concurrent subjects over loopback, and the subject-side cost
per event when sending to the collector versus writing locally, in the same run.

usage: python3 bench/collector_bench.py BUILD_DIR
Settings (environment): COLLECTOR_BENCH_EVENTS (total events per ingest run, 12000000),
COLLECTOR_BENCH_REPS (3), COLLECTOR_BENCH_COST_EVENTS (2000000); VIGIL_BENCH_SMOKE=1:
300000, 1, 100000 (bench/README.md, "Smoke run"). Prints a markdown table and writes
BENCH_OUT/collector.json (BENCH_OUT: BUILD_DIR/bench). Exit status 1 when the collector
stored fewer records than were sent or discarded any."""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collector_tls  # noqa: E402


def die(msg):
    print("collector_bench: " + msg, file=sys.stderr)
    sys.exit(1)


def start_vigild(bindir, out, extra=()):
    ready = out + ".ready"
    if os.path.exists(ready):
        os.unlink(ready)
    p = subprocess.Popen([os.path.join(bindir, "vigild"), "-o", out, "--listen", "127.0.0.1:0",
                          "--no-socket", "--ready", ready, "--quiet"] + list(extra))
    deadline = time.time() + 20
    while not os.path.exists(ready):
        if p.poll() is not None or time.time() > deadline:
            die("vigild did not start")
        time.sleep(0.02)
    with open(ready) as f:
        return p, "127.0.0.1:%d" % json.load(f)["port"]


def stop(p):
    p.terminate()
    p.wait(60)


def stats(bindir, path):
    r = subprocess.run([os.path.join(bindir, "vigil"), "dump", "--stats", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.search(r"vigil dump: (\d+) events .*; (\d+) events discarded", r.stderr)
    if not m:
        die("vigil dump --stats %s: %s" % (path, r.stderr))
    return int(m.group(1)), int(m.group(2))


def ingest(build, bindir, work, n, total):
    """n subjects at once, total events in all; wall time until every subject exited,
    which each does once the collector acknowledged all it sent."""
    out = os.path.join(work, "ingest-%d" % n)
    vd, addr = start_vigild(bindir, out)
    per = total // n
    # A buffer that holds a whole run: the figure is ingestion, not the subject's drops.
    env = dict(os.environ, VIGIL_TO=addr, VIGIL_TO_LINGER="60000", VIGIL_TO_BUFFER="512M")
    env.pop("VIGIL_OUT", None)
    bench = os.path.join(build, "bench", "vigil-bench")
    t0 = time.monotonic()
    procs = [subprocess.Popen([bench, "--events", str(per), "--warmup", "0", "--cpus", "none"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for _ in range(n)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        if p.returncode:
            die("vigil-bench: %s" % err.decode())
    wall = time.monotonic() - t0
    stop(vd)
    events, lost = stats(bindir, out)
    shutil.rmtree(out, ignore_errors=True)
    # Every subject's bench.pair events (its built-in vg.* events come on top).
    check_stored("%d C subjects" % n, events, lost, per * n)
    return {"subjects": n, "events": events, "discarded": lost, "wall_s": wall,
            "records_per_s": events / wall}


def check_stored(what, events, discarded, sent):
    """The collector must store all that was sent: a wrong answer, whatever the speed."""
    if discarded or events < sent:
        die("WRONG ANSWER: %s: %d events stored, %d discarded, %d sent" %
            (what, events, discarded, sent))


def records_subject(port, conn_index, frames, per_frame, errors):
    """One records subject (what `vigil gen --lang python|java` writers send): SCHEMA, then
    RECORDS frames of per_frame records (two uint64 fields), the last one acknowledged."""
    import socket
    import struct

    def st(b):
        return struct.pack("<I", len(b)) + b

    def fr(t, p):
        return struct.pack("<IB", len(p) + 1, t) + p
    try:
        so = socket.create_connection(("127.0.0.1", port), timeout=120)
        so.sendall(fr(1, struct.pack("<H", 1) + st(b"") + st(b"bench") +
                      struct.pack("<IQ", 100000 + conn_index, 1) + st(b"bench.py") + b"\x01"))
        so.sendall(fr(5, struct.pack("<H", 1) + st(b"bench.pair") + st(b"") + b"\0\0\0" +
                      struct.pack("<H", 2) + st(b"a") + b"\x03" + st(b"") + st(b"b") + b"\x03" +
                      st(b"")))
        t0 = time.time_ns()
        body = b"".join(struct.pack("<HQI", 1, t0 + i, 1) + st(struct.pack("<qq", i, -i))
                        for i in range(per_frame))
        for seq in range(1, frames + 1):
            so.sendall(fr(6, struct.pack("<QI", seq, per_frame) + body))
        buf = b""
        while True:  # WELCOME, then ACKs up to the last frame
            chunk = so.recv(65536)
            if not chunk:
                raise RuntimeError("closed")
            buf += chunk
            last = None
            while len(buf) >= 5:
                n, t = struct.unpack_from("<IB", buf)
                if len(buf) < 4 + n:
                    break
                if t == 7:
                    last = struct.unpack_from("<Q", buf, 5)[0]
                buf = buf[4 + n:]
            if last == frames:
                break
        so.close()
    except Exception as e:  # noqa: BLE001
        errors.append(str(e))


def ingest_records(bindir, work, n, total, per_frame=1000):
    import threading
    out = os.path.join(work, "records-%d" % n)
    vd, addr = start_vigild(bindir, out)
    port = int(addr.rsplit(":", 1)[1])
    frames = max(1, total // n // per_frame)
    errors = []
    threads = [threading.Thread(target=records_subject, args=(port, i, frames, per_frame, errors))
               for i in range(n)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    stop(vd)
    if errors:
        die("records subject: %s" % errors[0])
    events, lost = stats(bindir, out)
    shutil.rmtree(out, ignore_errors=True)
    check_stored("%d RECORDS subjects" % n, events, lost, frames * per_frame * n)
    return {"subjects": n, "events": events, "discarded": lost, "wall_s": wall,
            "records_per_s": events / wall}


def cost(build, bindir, work, addr, events, sending):
    bench = os.path.join(build, "bench", "vigil-bench")
    env = dict(os.environ)
    local = os.path.join(work, "local")
    if sending:
        env["VIGIL_TO"] = addr
        env.pop("VIGIL_OUT", None)
    else:
        shutil.rmtree(local, ignore_errors=True)
        env["VIGIL_OUT"] = local
        env.pop("VIGIL_TO", None)
    r = subprocess.run([bench, "--events", str(events), "--cpus", "0"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    if r.returncode:
        die("vigil-bench: %s" % r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])["ns_per_event"]


def main():
    if len(sys.argv) != 2:
        die("usage: collector_bench.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    bindir = os.path.join(build, "bin")
    smoke = os.environ.get("VIGIL_BENCH_SMOKE") == "1"
    total = int(os.environ.get("COLLECTOR_BENCH_EVENTS", "300000" if smoke else "12000000"))
    reps = int(os.environ.get("COLLECTOR_BENCH_REPS", "1" if smoke else "3"))
    cost_events = int(os.environ.get("COLLECTOR_BENCH_COST_EVENTS",
                                     "100000" if smoke else "2000000"))
    out_dir = os.environ.get("BENCH_OUT", os.path.join(build, "bench"))
    work = tempfile.mkdtemp(prefix="collector-bench-")
    try:
        rows = []
        for n in (1, 8, 64):
            runs = [ingest(build, bindir, work, n, total) for _ in range(reps)]
            best = sorted(runs, key=lambda r: r["records_per_s"])[len(runs) // 2]
            rows.append(best)
            print("collector_bench: %d subjects: %.0f records/s" % (n, best["records_per_s"]),
                  file=sys.stderr)
        rec_rows = []
        for n in (1, 8, 64):
            runs = [ingest_records(bindir, work, n, total // 4) for _ in range(reps)]
            best = sorted(runs, key=lambda r: r["records_per_s"])[len(runs) // 2]
            rec_rows.append(best)
            print("collector_bench: %d records subjects: %.0f records/s"
                  % (n, best["records_per_s"]), file=sys.stderr)
        vd, addr = start_vigild(bindir, os.path.join(work, "cost"))
        local, sent = [], []
        for i in range(reps):  # alternating, in one run
            for sending in ((False, True) if i % 2 == 0 else (True, False)):
                (sent if sending else local).append(
                    cost(build, bindir, work, addr, cost_events, sending))
        stop(vd)
        tls = None
        if shutil.which("openssl"):  # TLS against in clear, in this run (collector_tls.py)
            ctx = {"bindir": bindir, "build": build, "die": die, "work": work, "stop": stop,
                   "stats": lambda path: stats(bindir, path),
                   "start": lambda out, extra: start_vigild(bindir, out, extra)}
            tls = collector_tls.run(ctx, total // 4, reps, cost_events)
        result = {"ingest": rows, "tls": tls, "ingest_records": rec_rows, "ns_per_event_local": statistics.median(local),
                  "ns_per_event_sending": statistics.median(sent), "local_runs": local,
                  "sending_runs": sent}
        print("\n### Collector (vigild over loopback)\n")
        print("| subjects | events | discarded | wall (s) | records/s ingested |")
        print("|---:|---:|---:|---:|---:|")
        for r in rows:
            print("| %d | %d | %d | %.2f | %.0f |" % (r["subjects"], r["events"], r["discarded"],
                                                     r["wall_s"], r["records_per_s"]))
        print("\nRECORDS frames (as the Python and Java writers send them, 1000 records of two "
              "int64 fields per frame), the collector encoding them into CTF packets:\n")
        print("| subjects | records | wall (s) | records/s ingested |")
        print("|---:|---:|---:|---:|")
        for r in rec_rows:
            print("| %d | %d | %.2f | %.0f |" % (r["subjects"], r["events"], r["wall_s"],
                                                r["records_per_s"]))
        print("\nsubject-side cost per event (vigil-bench, 1 thread, %d events, median of %d): "
              "writing locally %.1f ns, sending to vigild %.1f ns\n"
              % (cost_events, reps, result["ns_per_event_local"], result["ns_per_event_sending"]))
        if tls:
            collector_tls.table(tls, cost_events, reps)
        else:
            print("(no openssl command: TLS not measured)\n")
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "collector.json"), "w") as f:
            json.dump(result, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
