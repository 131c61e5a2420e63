"""What the vigil watch benches share (bench/watch.py, watch_incremental.py, watch_live.py):
the build's programs, the output folder, the smoke switch, running a command, and
reading `vigil watch --stats`'s line, the medians of updates; and for the two per-update
benches (watch_incremental.py, watch_live.py) their common shapes, the two ways they
compare and their run in a folder of their own."""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

BUILD = os.path.abspath(sys.argv[1])
VIGIL = os.path.join(BUILD, "bin", "vigil")
MAILBOX = os.path.join(BUILD, "bin", "mailbox")
VGL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "mailbox",
                   "mailbox.vgl")
OUT = os.environ.get("BENCH_OUT", os.path.join(BUILD, "bench"))
SMOKE = os.environ.get("VIGIL_BENCH_SMOKE") == "1"


def say(*a):
    print(*a, file=sys.stderr, flush=True)


def run(args, env=None, timeout=600):
    """The finished command; a failure ends the bench with its stderr's tail."""
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, **(env or {})})
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])} ... exited {p.returncode}: {p.stderr[-2000:]}")
    return p


def stats_of(stderr):
    """The "watch" object of the --stats line on stderr."""
    for line in stderr.splitlines():
        if line.startswith('{"watch"'):
            return json.loads(line)["watch"]
    raise SystemExit("no --stats line:\n" + stderr[-2000:])


def ends(cpu):
    """Medians (ms) of the first three updates and of the last three before the final
    one (which also closes what is still open)."""
    body = cpu[:-1] if len(cpu) > 1 else cpu
    return (statistics.median(body[:3]) / 1e6, statistics.median(body[-3:]) / 1e6)


# The query shapes both per-update benches time.
SELECTION = ("selection, projection", """range of S is SendMessage
retrieve (S.process, S.msg) where S.mailbox = "M2" """)
OVERLAP = ("join, when overlap", """range of S is SendMessage
range of W is Waiting
retrieve (W.process, S.msg) where S.mailbox = W.mailbox when S overlap W""")

# The update network, and the re-evaluation it replaces, with the environment for each.
WAYS = (("incremental", {}), ("re-evaluation", {"VIGIL_WATCH_REEVALUATE": "1"}))


def table(title, columns, rows):
    """Prints a markdown table under a heading: `rows` holds each row's cells."""
    print(f"\n### {title}\n")
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for cells in rows:
        print("| " + " | ".join(cells) + " |")


def bench_in_folder(prefix, body, failure):
    """Runs body(folder) in a temporary folder removed after; body returns (ok, result,
    name): result is written to BENCH_OUT/name. Exits 1 saying `failure` if not ok."""
    work = tempfile.mkdtemp(prefix=prefix)
    try:
        ok, res, name = body(work)
        os.makedirs(OUT, exist_ok=True)
        with open(os.path.join(OUT, name), "w") as f:
            json.dump(res, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not ok:
        say(failure)
        sys.exit(1)
