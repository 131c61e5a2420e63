"""A real server recorded whole (issue 18, docs/net.md): Debian's nginx with Debian's
configuration (tests/net/record/nginx_server.py: user www-data, sendfile on) but one
worker, serving a static file on loopback to wrk, recorded by `vigil record` against the
same server unrecorded, alternated in one run (ABBA order), and what following stdio
costs per call (bench/stdio_cost.c, plain against recorded).

usage: python3 bench/nginx_bench.py [BUILD] [--smoke]   (VIGIL_BENCH_SMOKE=1: --smoke)

Per round and mode: nginx is started (recorded: under `vigil record`; wrk never is),
warmed up by a 1 s wrk run, then measured by `wrk -t1 -c4 -d D --latency`: requests
per second and the p99 latency wrk reports; then stopped (SIGQUIT to its master, by
pid). Recorded rounds also give the events kept and discarded (`vigil dump --stats`).
Then the nginx worker's CPU time per request (all its threads, from
/proc/PID/task/*/schedstat, vigil's worker thread apart) over a second wrk run of the
same length with one connection (each request wakes the worker alone, so batching under
load does not change the count) is printed too: it counts what recording costs the server itself, whatever else runs on the
machine. Printed: the medians per mode, and the median of each round's ratio recorded/unrecorded
(a round's two runs are adjacent in time, so a ratio is less exposed than the medians to
load that changes during the run: on a shared 2-core machine the spread between rounds
is larger than the cost measured, so look at the spread printed too). Full run: 8
rounds of 3+3 s (about 3 minutes); smoke: 1 round of 1+1 s. Results also go to
BUILD/bench/nginx.json."""
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "net", "record"))
import nginx_server  # noqa: E402

args = [a for a in sys.argv[1:] if not a.startswith("--")]
SMOKE = "--smoke" in sys.argv or os.environ.get("VIGIL_BENCH_SMOKE") == "1"
BUILD = args[0] if args else "build"
VIGIL = os.path.join(BUILD, "bin", "vigil")
ROUNDS, SECONDS = (1, 1) if SMOKE else (8, 3)
FILE = bytes((i * 31) % 251 for i in range(4096))  # a 4 KiB static file


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def wait_ready(port, pidfile, proc, limit=20.0):
    import socket
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"nginx exited: {proc.stderr.read()}")
        if os.path.exists(pidfile) and os.path.getsize(pidfile) > 0:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return
            except OSError:
                pass
        time.sleep(0.02)
    raise RuntimeError("nginx did not start")


def cpu_ns(pid):
    """CPU time of each thread of pid by name, ns (the scheduler's own count)."""
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{t}/comm") as f:
            name = f.read().strip()
        with open(f"/proc/{pid}/task/{t}/schedstat") as f:
            out[name] = out.get(name, 0) + int(f.read().split()[0])
    return out


def wrk(url, seconds, conns=4):
    p = subprocess.run(["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--latency", url],
                       capture_output=True, text=True, timeout=seconds + 60)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", p.stdout).group(1))
    m = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", p.stdout, re.M)
    p99 = float(m.group(1)) * {"us": 1, "ms": 1000, "s": 1e6}[m.group(2)]
    n = int(re.search(r"(\d+) requests in", p.stdout).group(1))
    return rps, p99, n


def one(recorded):
    d = tempfile.mkdtemp(prefix="vigil-nginx-bench-")
    try:
        conf, port = nginx_server.make(d, {"file": FILE}, workers=1)
        cmd = nginx_server.command(conf, d)
        trace = os.path.join(d, "trace")
        if recorded:
            cmd = [VIGIL, "record", "-o", trace, "--"] + cmd
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        pidfile = os.path.join(d, "nginx.pid")
        try:
            wait_ready(port, pidfile, proc)
            url = f"http://127.0.0.1:{port}/file"
            # warm-up: connections, page cache, the trace's first packets
            n0 = wrk(url, 1)[2]
            with open(pidfile) as f:
                master = f.read().split()[0]
            worker = subprocess.run(["pgrep", "-P", master], capture_output=True,
                                    text=True).stdout.split()[0]
            rps, p99, n = wrk(url, SECONDS)
            # CPU per request with one connection: every request wakes the worker alone,
            # so the count does not depend on how requests batch at a given load.
            before = cpu_ns(worker)
            n1 = wrk(url, SECONDS, conns=1)[2]
            after = cpu_ns(worker)
        finally:
            if os.path.exists(pidfile):
                with open(pidfile) as f:
                    os.kill(int(f.read().split()[0]), signal.SIGQUIT)
            else:
                proc.terminate()
            proc.wait(timeout=60)
        helper = sum(v for k, v in after.items() if k != "nginx") - \
            sum(v for k, v in before.items() if k != "nginx")
        out = {"rps": rps, "p99_us": p99, "requests": n0 + n + n1 + 1,
               "cpu_us_per_req": (sum(after.values()) - sum(before.values())) / n1 / 1000,
               "helper_us_per_req": helper / n1 / 1000}
        if recorded:
            stats = subprocess.run([VIGIL, "dump", "--stats", "--json", trace],
                                   capture_output=True, text=True).stdout.splitlines()
            rows = [json.loads(x) for x in stats if x.strip()]
            out["events"] = sum(r["events"] for r in rows if "stream" in r)
            out["discarded"] = sum(r["discarded"] for r in rows if "stream" in r)
        return out
    finally:
        shutil.rmtree(d, ignore_errors=True)


def stdio_cost(rounds):
    prog = os.path.join(BUILD, "bench", "stdio-cost")
    n = "50000" if SMOKE else "300000"
    res = {"plain": [], "recorded": []}
    for i in range(rounds):
        for mode in (("plain", "recorded") if i % 2 == 0 else ("recorded", "plain")):
            d = tempfile.mkdtemp(prefix="vigil-stdio-bench-")
            cmd = [prog, n] if mode == "plain" else [VIGIL, "record", "-o", d + "/t", "--", prog, n]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            shutil.rmtree(d, ignore_errors=True)
            res[mode].append(json.loads(p.stdout.strip().splitlines()[-1]))
    return {m: {k: statistics.median(r[k] for r in rs)
                for k in ("flushed_ns", "buffered_ns", "read_ns")} for m, rs in res.items()}


def main():
    if not shutil.which("wrk") or not os.path.exists(nginx_server.NGINX):
        log("nginx_bench: nginx and wrk are not installed (scripts/install-deps.sh)")
        return 2
    runs = {"unrecorded": [], "recorded": []}
    for i in range(ROUNDS):
        order = ("unrecorded", "recorded") if i % 2 == 0 else ("recorded", "unrecorded")
        for mode in order:
            r = one(mode == "recorded")
            runs[mode].append(r)
            log(f"nginx round {i + 1}/{ROUNDS} {mode}: {r}")
    med = {m: {k: statistics.median(x[k] for x in rs) for k in rs[0]} for m, rs in runs.items()}
    u, r = med["unrecorded"], med["recorded"]
    rps_ratios = [b["rps"] / a["rps"] for a, b in zip(runs["unrecorded"], runs["recorded"])]
    p99_ratios = [b["p99_us"] / a["p99_us"] for a, b in zip(runs["unrecorded"], runs["recorded"])]
    per_req = statistics.median(x["events"] / x["requests"] for x in runs["recorded"])
    stdio = stdio_cost(1 if SMOKE else 5)
    print(f"nginx (bench/nginx_bench.py{' --smoke' if SMOKE else ''}: one worker, a 4 KiB "
          f"file, wrk -t1 -c4, {ROUNDS} x {SECONDS} s alternated, medians):")
    print(f"  unrecorded  {u['rps']:10.0f} req/s   p99 {u['p99_us']:8.0f} us")
    print(f"  recorded    {r['rps']:10.0f} req/s   p99 {r['p99_us']:8.0f} us   "
          f"events kept {r['events']:.0f}, discarded {r['discarded']:.0f}")
    print(f"  ratio       {statistics.median(rps_ratios):10.3f} x       p99 "
          f"{statistics.median(p99_ratios):8.3f} x   (median of the rounds' ratios; req/s "
          f"ratios {min(rps_ratios):.3f}..{max(rps_ratios):.3f})")
    print(f"  {per_req:.2f} events per request (receive, header writev, sendfile)")
    cpu_ratios = [b["cpu_us_per_req"] / a["cpu_us_per_req"]
                  for a, b in zip(runs["unrecorded"], runs["recorded"])]
    print(f"  nginx worker CPU per request (wrk -c1): {u['cpu_us_per_req']:.2f} -> "
          f"{r['cpu_us_per_req']:.2f} us (ratio {statistics.median(cpu_ratios):.3f}, of which "
          f"vigil's worker thread {r['helper_us_per_req']:.3f} us): the scheduler's count, "
          "less exposed to other load than req/s")
    print("stdio on a followed pipe (bench/stdio_cost.c, ns per call, medians):")
    for k, what in (("flushed_ns", "fputs+fflush (one send each)"),
                    ("buffered_ns", "fprintf into the buffer"),
                    ("read_ns", "fgets (a refill every 64)")):
        a, b = stdio["plain"][k], stdio["recorded"][k]
        print(f"  {what:30s} {a:8.1f} -> {b:8.1f} ns  (+{b - a:.1f})")
    out = os.path.join(os.environ.get("BENCH_OUT", os.path.join(BUILD, "bench")), "nginx.json")
    with open(out, "w") as f:
        json.dump({"smoke": SMOKE, "rounds": ROUNDS, "seconds": SECONDS, "runs": runs,
                   "median": med, "rps_ratios": rps_ratios,
                   "p99_ratios": p99_ratios, "rps_ratio": statistics.median(rps_ratios),
                   "p99_ratio": statistics.median(p99_ratios),
                   "cpu_ratios": cpu_ratios, "stdio": stdio}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
