"""Adaptive monitoring (issue 9, docs/control.md "Probes"): how long from `vigil probes
enable` to the first record of the enabled sensor, and what a switched-off probe costs.

usage: python3 bench/probes_bench.py [BUILD] [RUNS]   (default build, 15 runs)
VIGIL_BENCH_SMOKE=1: 2 runs, 2 million firings of the disabled path (bench/README.md,
"Smoke run"). Writes BENCH_OUT/probes.json (BENCH_OUT: BUILD/bench).

The subject is tests/probes/probes_subject.c (BUILD/bin/vg_probes_subject) with
VIGIL_CONTROL=listen and VIGIL_CLOCK=mono, so its trace's clock is this script's
CLOCK_MONOTONIC. A thread fires `bench.hot` in a tight loop, switched off. Per run:

  command:  `vigil probes --pid P enable bench.hot` started -> first record
            (the whole command: exec, attach, pattern, list, probe)
  in cmd:   the subject's stamp after `pattern enable` (before the table is read)
            -> first record
  probe:    a monitor already attached sends `probe ID on` -> first record
            (and from the subject's stamp right after the switch: negative when the
            loop recorded before the stamp was taken)

and the disabled path: N firings of a switched-off sensor against the same loop
without it (ns per firing; the probe path is one load and one branch)."""
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import shutil

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
SMOKE = os.environ.get("VIGIL_BENCH_SMOKE") == "1"
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else (2 if SMOKE else 15)
FIRINGS = 2_000_000 if SMOKE else 200_000_000
OUT = os.environ.get("BENCH_OUT", os.path.join(BUILD, "bench"))
VIGIL = os.path.join(BUILD, "bin", "vigil")
SUBJECT = os.path.join(BUILD, "bin", "vg_probes_subject")


class Subject:
    def __init__(self, tmp):
        self.trace = os.path.join(tmp, "trace")
        env = {k: v for k, v in os.environ.items() if not k.startswith("VIGIL_")}
        env.update({"VIGIL_OUT": self.trace, "VIGIL_CONTROL": "listen", "VIGIL_SENSORS": "vg.*",
                    "VIGIL_ENTITY_FLAGS": "off", "VIGIL_CLOCK": "mono"})
        self.p = subprocess.Popen([SUBJECT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, text=True)

    def do(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        ans = self.p.stdout.readline().split()
        if not ans or ans[0] != "done":
            raise SystemExit(f"probes_bench: subject answered {ans} to {line!r}")
        return ans[1:]

    def quit(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.close()
        self.p.wait(timeout=120)

    def first_clock(self, name):
        d = subprocess.Popen([VIGIL, "dump", "--json", "--name", name, self.trace],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = d.stdout.readline()
        d.kill()
        d.wait()
        return json.loads(line)["clock"] if line.strip() else None


def one_run(tmp, attached):
    s = Subject(tmp)
    s.do("reg bench.hot")
    s.do("loop bench.hot")
    time.sleep(0.05)
    since = applied = None
    if attached:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(b"\0vigil-control.%d" % s.p.pid)
        f = conn.makefile("rwb")
        f.readline()  # hello
        f.write(b"list 16\n")
        f.flush()
        entry = [e for e in f.readline().decode().split()[3:] if e.endswith(":bench.hot:0")]
        sid = entry[0].split(":")[0]
        time.sleep(0.02)
        t0 = time.monotonic_ns()
        f.write(f"probe {sid} on\n".encode())
        f.flush()
        applied = int(f.readline().split()[1])  # the subject's stamp after the switch
        f.close()
        conn.close()
    else:
        t0 = time.monotonic_ns()
        out = subprocess.run([VIGIL, "probes", "--pid", str(s.p.pid), "--json", "enable",
                              "bench.hot"], capture_output=True, text=True, timeout=60)
        if out.returncode:
            raise SystemExit(f"probes_bench: vigil probes: {out.stderr}")
        since = json.loads(out.stdout)["since_ns"]
    # The loop thread must run once after the switch before it is stopped: on a loaded
    # machine it may not have been scheduled yet. Wait (bounded) until the live trace,
    # which vigil dump reads, holds the first record.
    deadline = time.monotonic() + 30
    while s.first_clock("bench.hot") is None and time.monotonic() < deadline:
        time.sleep(0.01)
    s.do("stop")
    s.quit()
    first = s.first_clock("bench.hot")
    shutil.rmtree(s.trace, ignore_errors=True)
    if first is None:
        raise SystemExit("probes_bench: no record of the enabled sensor")
    return first - t0, (first - since if since is not None else first - applied)


def disabled_cost(tmp, n=FIRINGS):
    s = Subject(tmp)
    s.do("reg bench.off")
    fire_ns, empty_ns = (int(x) for x in s.do(f"cost bench.off {n}"))
    s.quit()
    shutil.rmtree(s.trace, ignore_errors=True)
    return fire_ns / n, empty_ns / n


def fmt(v):
    return f"median {statistics.median(v) / 1e3:8.1f} us   min {min(v) / 1e3:8.1f} us   " \
           f"max {max(v) / 1e3:8.1f} us"


def main():
    for exe in (VIGIL, SUBJECT):
        if not os.access(exe, os.X_OK):
            raise SystemExit(f"probes_bench: {exe} not built (cmake --build {BUILD})")
    tmp = tempfile.mkdtemp(prefix="vigil-probes-bench-")
    try:
        cmd, incmd, probe, applied = [], [], [], []
        for _ in range(RUNS):
            a, b = one_run(tmp, attached=False)
            cmd.append(a)
            incmd.append(b)
            a, b = one_run(tmp, attached=True)
            probe.append(a)
            applied.append(b)
        fire, empty = disabled_cost(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"probes (bench/probes_bench.py, {RUNS} runs, a sensor fired in a tight loop):")
    print(f"  vigil probes enable -> first record   {fmt(cmd)}")
    print(f"    of which pattern given -> record    {fmt(incmd)}")
    print(f"  probe ID on (attached) -> record      {fmt(probe)}")
    print(f"    of which switched -> record         {fmt(applied)}")
    print(f"  switched-off probe: {fire:.2f} ns per firing, loop alone {empty:.2f} ns "
          f"(difference {fire - empty:+.2f} ns: one load, one branch)")
    med = statistics.median
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "probes.json"), "w") as f:
        json.dump({"runs": RUNS, "command_us": med(cmd) / 1e3, "in_command_us": med(incmd) / 1e3,
                   "probe_us": med(probe) / 1e3, "switched_us": med(applied) / 1e3,
                   "disabled_ns": fire, "empty_ns": empty}, f, indent=1)


if __name__ == "__main__":
    main()
