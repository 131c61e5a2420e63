"""`vigil net split` on the trace of a parallel build (issue 19; docs/net.md "Shared pipes
and sockets"): a generated C project (a top Makefile running one sub-make per directory,
GNU make's jobserver pipe shared by all of them) built with `make -j2` under `vigil
record`, then split. The peer is babeltrace2 reading the same trace to /dev/null (what
any reader of it costs); the build's wall time recorded against unrecorded is given too.

usage: python3 bench/net_build_bench.py [BUILD] (default build)
VIGIL_BENCH_SMOKE=1: 3 directories of 3 files, one run of each. Writes
BENCH_OUT/net_build.json (BENCH_OUT: BUILD/bench). Exits 1 when the split's answers are
wrong: a receive before its send, matches that contradict each other, refused pairs."""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
SMOKE = os.environ.get("VIGIL_BENCH_SMOKE") == "1"
DIRS, FILES, RUNS = (3, 3, 1) if SMOKE else (8, 25, 3)
OUT = os.environ.get("BENCH_OUT", os.path.join(BUILD, "bench"))
VIGIL = os.path.join(BUILD, "bin", "vigil")


def project(root):
    with open(os.path.join(root, "Makefile"), "w") as f:
        f.write("all: " + " ".join(f"d{i}" for i in range(DIRS)) + "\n")
        f.write(".PHONY: all " + " ".join(f"d{i}" for i in range(DIRS)) + "\n")
        for i in range(DIRS):
            f.write(f"d{i}:\n\t+@$(MAKE) -s -C d{i}\n")
        f.write("clean:\n\trm -f d*/*.o\n")
    for i in range(DIRS):
        d = os.path.join(root, f"d{i}")
        os.makedirs(d)
        objs = " ".join(f"f{j}.o" for j in range(FILES))
        with open(os.path.join(d, "Makefile"), "w") as f:
            f.write(f"all: {objs}\n%.o: %.c\n\t@cc -O1 -c $< -o $@\n")
        for j in range(FILES):
            with open(os.path.join(d, f"f{j}.c"), "w") as f:
                f.write(f"int f{i}_{j}(int x) {{ int s = 0; for (int k = 0; k < x; k++) "
                        f"s += k * {j + 1}; return s; }}\n")


def timed(cmd):
    """Seconds cmd took (its output to /dev/null); exits on failure."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        raise SystemExit(f"net_build_bench: {' '.join(cmd)} exited {p.returncode}: "
                         f"{p.stderr[-2000:]}")
    return time.monotonic() - t0


def main():
    tmp = tempfile.mkdtemp(prefix="vigil-net-build-")
    root = os.path.join(tmp, "proj")
    os.makedirs(root)
    project(root)
    # plain and recorded builds in turn, so that a busy machine slows both alike
    plain, recorded = [], []
    trace = os.path.join(tmp, "trace")
    for _ in range(RUNS):
        subprocess.run(["make", "-s", "-C", root, "clean"], check=True)
        plain.append(timed(["make", "-s", "-j2", "-C", root]))
        subprocess.run(["make", "-s", "-C", root, "clean"], check=True)
        shutil.rmtree(trace, ignore_errors=True)
        recorded.append(timed([VIGIL, "record", "-o", trace, "--", "make", "-s", "-j2", "-C",
                               root]))
    splits, index = [], None
    for _ in range(RUNS):
        nets = os.path.join(tmp, "nets")
        shutil.rmtree(nets, ignore_errors=True)
        # no input in a build (exit status 1, said so): the matching is what is measured
        t0 = time.monotonic()
        p = subprocess.run([VIGIL, "net", "split", trace, "-o", nets], capture_output=True,
                           text=True)
        splits.append(time.monotonic() - t0)
        if p.returncode not in (0, 1):
            raise SystemExit(f"net_build_bench: split exited {p.returncode}: {p.stderr}")
        with open(os.path.join(nets, "index.json")) as f:
            index = json.load(f)
    peer = []
    bt2 = shutil.which("babeltrace2")
    for _ in range(RUNS if bt2 else 0):
        peer.append(timed([bt2, trace]))
    m = index["messages"]
    res = {"dirs": DIRS, "files": FILES, "runs": RUNS, "events": index["events"],
           "structural_events": index["structural_events"], "messages": m,
           "backwards": index["backwards"], "forced": index["forced"],
           "split_s": statistics.median(splits), "splits_s": splits,
           "babeltrace2_s": statistics.median(peer) if peer else None,
           "build_plain_s": statistics.median(plain),
           "build_recorded_s": statistics.median(recorded),
           "build_ratio": statistics.median(r / p for r, p in zip(recorded, plain))}
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "net_build.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"build of {DIRS * FILES} files, make -j2: {res['build_plain_s']:.2f} s plain, "
          f"{res['build_recorded_s']:.2f} s recorded (medians of {RUNS}); trace {index['events']} events, "
          f"{m['sends']} sends, {m['recvs']} receives, {m['pairs']} pairs, "
          f"{m['shared_channels']} shared channels")
    print(f"vigil net split: {res['split_s']:.3f} s (median of {RUNS}); babeltrace2 read: "
          + (f"{res['babeltrace2_s']:.3f} s" if peer else "not installed"))
    bad = []
    if index["backwards"] or index["forced"] or m["refused"]:
        bad.append(f"backwards {index['backwards']}, forced {index['forced']}, "
                   f"refused {m['refused']}")
    if not m["shared_channels"] or not m["pairs"]:
        bad.append(f"no shared pipe matched: {m}")
    shutil.rmtree(tmp, ignore_errors=True)
    if bad:
        raise SystemExit("net_build_bench: wrong answers: " + "; ".join(bad))


if __name__ == "__main__":
    main()
