"""Trace bytes per event of a parallel build (issue 30, docs/trace-format.md "Shared
layout"): the generated C project of net_build_bench.py (every compiler process a short
image of its own) built with `make -j2` under `vigil record` twice, with a directory and
metadata per image (the peer: the layout before) and with `--shared`. Bytes are the
files' sizes (apparent) and the blocks the trace takes on disk, directories included.

usage: python3 bench/trace_size_bench.py [BUILD] (default build)
VIGIL_BENCH_SMOKE=1: 3 directories of 3 files. Writes BENCH_OUT/trace_size.json (BENCH_OUT:
BUILD/bench). Exits 1 when babeltrace2 and `vigil dump` do not read the same number of
events from a trace, or the two layouts' builds differ in their count of images."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from net_build_bench import DIRS, FILES, project  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
OUT = os.environ.get("BENCH_OUT", os.path.join(BUILD, "bench"))
VIGIL = os.path.join(BUILD, "bin", "vigil")


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode:
        raise SystemExit(f"trace_size_bench: {' '.join(cmd)} exited {p.returncode}: "
                         f"{p.stderr[-2000:]}")
    return p


def sizes(trace):
    apparent = disk = 0
    for root, dirs, files in os.walk(trace):
        for name in dirs + files:
            st = os.lstat(os.path.join(root, name))
            disk += st.st_blocks * 512
            apparent += st.st_size if name in files else 0
    return apparent, disk + os.lstat(trace).st_blocks * 512


def measure(tmp, root, layout):
    run(["make", "-s", "-C", root, "clean"])
    trace = os.path.join(tmp, layout)
    extra = ["--shared"] if layout == "shared" else ["--per-image"]
    run([VIGIL, "record", "-q", "-o", trace] + extra + ["--", "make", "-s", "-j2", "-C", root])
    summary = run([VIGIL, "dump", "--stats", trace]).stderr
    m = re.search(r"(\d+) events .* in (\d+) images", summary)
    events, images = int(m.group(1)), int(m.group(2))
    bt = subprocess.run(["babeltrace2", trace], capture_output=True, text=True)
    bt_events = bt.stdout.count("\n") if bt.returncode == 0 else -1
    apparent, disk = sizes(trace)
    print(f"  {layout:6} {images:5} images {events:7} events: {apparent:10} bytes "
          f"({apparent / events:7.1f} per event), on disk {disk:10} ({disk / events:7.1f}); "
          f"babeltrace2 read {bt_events}", file=sys.stderr)
    return {"images": images, "events": events, "babeltrace2_events": bt_events,
            "apparent": apparent, "disk": disk}


def main():
    tmp = tempfile.mkdtemp(prefix="vigil-trace-size-")
    root = os.path.join(tmp, "proj")
    os.makedirs(root)
    project(root)
    print(f"trace_size_bench: {DIRS * FILES} files, make -j2 under vigil record",
          file=sys.stderr)
    res = {"files": DIRS * FILES, "image": measure(tmp, root, "image"),
           "shared": measure(tmp, root, "shared")}
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "trace_size.json"), "w") as f:
        json.dump(res, f, indent=1)
    bad = [f"{k}: babeltrace2 read {v['babeltrace2_events']} of {v['events']} events"
           for k, v in res.items() if k != "files" and v["babeltrace2_events"] != v["events"]]
    if res["image"]["images"] != res["shared"]["images"]:
        bad.append(f"{res['image']['images']} images with a directory each, "
                   f"{res['shared']['images']} shared")
    shutil.rmtree(tmp)
    if bad:
        raise SystemExit("trace_size_bench: wrong answers: " + "; ".join(bad))


if __name__ == "__main__":
    main()
