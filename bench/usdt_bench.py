"""USDT probe sites as sensors (issue 26, docs/usdt.md): what a site costs.

usage: python3 bench/usdt_bench.py [BUILD] [RUNS]   (default build, 7 runs)
VIGIL_BENCH_SMOKE=1: 2 runs at a tiny size, no kernel uprobe (bench/README.md, "Smoke
run"). Writes BENCH_OUT/usdt.json (BENCH_OUT: BUILD/bench).

The subject is bench/usdt_bench.c (BUILD/bench/usdt-bench): a loop calling a function
whose SDT site (bench:hit, two arguments) is a 1-byte nop. Each configuration's figure is
the median of RUNS runs, ns per loop iteration, all in this run:

  plain      the program alone (the nop runs)
  disarmed   under vigil record --usdt 'bench:cold' (another site armed, this one not):
             the same instructions, so the same cost
  int3       under vigil record --usdt-int3 --usdt 'bench:hit': int3, the SIGTRAP
             handler decoding both operands and recording the event, sigreturn
  jump       under vigil record --usdt 'bench:hit': the site's jump into its trampoline
             (the registers and vector state saved, the same recorder), the displaced
             instructions, the jump back (docs/usdt.md, "The jump path")
  uprobe     the kernel's uprobe on the same site, counted by `perf stat -e` after
             `perf probe -x usdt-bench -a sdt_bench:hit=SITE` (where perf may add uprobes;
             said otherwise)

cost per hit = (armed - plain) at the same number of iterations, and the uprobe's the same
way. The armed runs' traces must hold exactly one bench.hit event per iteration with its two
values (i, 3i), or the benchmark fails."""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
SMOKE = os.environ.get("VIGIL_BENCH_SMOKE") == "1"
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else (2 if SMOKE else 7)
N_FAST = 20_000 if SMOKE else 50_000_000  # iterations through a nop
N_TRAP = 2_000 if SMOKE else 300_000  # iterations through a trap
N_JUMP = 20_000 if SMOKE else 2_000_000  # iterations through the jump path
OUT = os.environ.get("BENCH_OUT", os.path.join(BUILD, "bench"))
VIGIL = os.path.join(BUILD, "bin", "vigil")
SUBJECT = os.path.join(BUILD, "bench", "usdt-bench")


def say(msg):
    print(msg, file=sys.stderr, flush=True)


def once(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode:
        raise SystemExit("usdt_bench: %s exited %d: %s" % (" ".join(cmd), r.returncode,
                                                           r.stderr[-2000:]))
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("{")][0]
    return json.loads(line)["ns_per_iter"], r


def median(cmd_of, what):
    xs = []
    for k in range(RUNS):
        ns, _ = once(cmd_of(k))
        xs.append(ns)
    say("  %-9s %8.2f ns per iteration (median of %d)" % (what, statistics.median(xs), RUNS))
    return statistics.median(xs)


def check_trace(trace, n):
    """One bench.hit per iteration, in order, with arg1 = i and arg2 = 3 i (streamed)."""
    p = subprocess.Popen([VIGIL, "dump", "--json", "--name", "bench.hit", trace],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    i = 0
    for ln in p.stdout:
        f = json.loads(ln)["fields"]
        if int(f["arg1"]) != i or int(f["arg2"]) != 3 * i:
            p.kill()
            break
        i += 1
    p.wait()
    if i != n:
        raise SystemExit("usdt_bench: %s holds %d bench.hit events in order, %d expected "
                         "with arg2 = 3 * arg1" % (trace, i, n))


def uprobe(tmp):
    """ns per iteration with the kernel's uprobe on the site, or (None, why)."""
    perf = shutil.which("perf")
    if SMOKE:
        return None, "not in the smoke run (it adds a kernel probe)"
    if not perf:
        return None, "perf is not installed"
    exe = os.path.join(tmp, "usdt-bench")  # a copy: the probe names this file's inode
    shutil.copy(SUBJECT, exe)
    # at the site's address (from vigil usdt list): perf's own SDT names need its build-id
    # cache in ~/.debug to hold this copy, which a stale entry of the same build prevents
    doc = json.loads(subprocess.run([VIGIL, "usdt", "list", "--format", "json", exe],
                                    capture_output=True, text=True, timeout=60).stdout)
    pc = [p["pc"] for p in doc["objects"][0]["probes"] if p["name"] == "hit"][0]
    r = subprocess.run([perf, "probe", "-x", exe, "-a", "sdt_bench:hit=" + pc],
                       capture_output=True, text=True, timeout=60)
    if r.returncode:
        return None, "perf probe refused: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    try:
        xs = []
        for _ in range(RUNS):
            r = subprocess.run([perf, "stat", "-x", ",", "-e", "sdt_bench:hit", exe,
                                str(N_TRAP)], capture_output=True, text=True, timeout=600)
            count = [ln for ln in r.stderr.splitlines() if "sdt_bench:hit" in ln]
            if r.returncode or not count or not count[0].split(",")[0].isdigit():
                return None, "perf stat could not count the uprobe: " + r.stderr[-300:]
            if int(count[0].split(",")[0]) != N_TRAP:
                raise SystemExit("usdt_bench: the uprobe counted %s hits, %d expected" %
                                 (count[0], N_TRAP))
            xs.append(json.loads(r.stdout.strip().splitlines()[-1])["ns_per_iter"])
        say("  %-9s %8.2f ns per iteration (median of %d)" % ("uprobe", statistics.median(xs),
                                                              RUNS))
        return statistics.median(xs), None
    finally:
        subprocess.run([perf, "probe", "-d", "sdt_bench:*"], capture_output=True, timeout=60)


def main():
    if not os.path.exists(SUBJECT):
        raise SystemExit("usdt_bench: %s is not built (systemtap-sdt-dev missing?)" % SUBJECT)
    os.makedirs(OUT, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="vigil-usdt-bench-")
    os.environ["VIGIL_CACHE_DIR"] = os.path.join(tmp, "cache")  # the plan cache, ours
    try:
        say("usdt: %d runs; %d iterations through a nop, %d through a trap" %
            (RUNS, N_FAST, N_TRAP))
        plain = median(lambda k: [SUBJECT, str(N_FAST)], "plain")
        disarmed = median(lambda k: [VIGIL, "record", "-q", "-o", os.path.join(tmp, "d%d" % k),
                                     "--usdt", "bench:cold", "--", SUBJECT, str(N_FAST)],
                          "disarmed")
        plain_trap = median(lambda k: [SUBJECT, str(N_TRAP)], "plain")
        armed = median(lambda k: [VIGIL, "record", "-q", "-o", os.path.join(tmp, "a%d" % k),
                                  "--usdt-int3", "--usdt", "bench:hit", "--", SUBJECT,
                                  str(N_TRAP)], "int3")
        for k in range(RUNS):
            check_trace(os.path.join(tmp, "a%d" % k), N_TRAP)
        plain_jump = median(lambda k: [SUBJECT, str(N_JUMP)], "plain")
        jump = median(lambda k: [VIGIL, "record", "-q", "-o", os.path.join(tmp, "j%d" % k),
                                 "--usdt", "bench:hit", "--", SUBJECT, str(N_JUMP)], "jump")
        for k in range(RUNS):
            check_trace(os.path.join(tmp, "j%d" % k), N_JUMP)
        up, why = uprobe(tmp)
        res = {"plain_ns": plain, "disarmed_ns": disarmed, "plain_trap_ns": plain_trap,
               "armed_ns": armed, "armed_hit_ns": armed - plain_trap,
               "plain_jump_ns": plain_jump, "jump_ns": jump, "jump_hit_ns": jump - plain_jump,
               "uprobe_ns": up, "uprobe_hit_ns": up - plain_trap if up is not None else None,
               "uprobe_note": why, "runs": RUNS, "n_fast": N_FAST, "n_trap": N_TRAP,
               "n_jump": N_JUMP, "smoke": SMOKE}
        print("usdt site, ns per iteration     plain   vigil")
        print("  disarmed (nop)             %7.2f %7.2f" % (plain, disarmed))
        print("  armed, cost per hit: jump path %.0f, int3 path %.0f; kernel uprobe via "
              "perf: %s" % (jump - plain_jump, armed - plain_trap,
                            "%.0f" % (up - plain_trap) if up is not None else why))
        with open(os.path.join(OUT, "usdt.json"), "w") as f:
            json.dump(res, f, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
