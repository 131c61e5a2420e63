"""What the vigil watch benches share (bench/watch.py, watch_incremental.py, watch_live.py):
the build's programs, the output folder, the smoke switch, running a command, and
reading `vigil watch --stats`'s line, the medians of updates."""
import json
import os
import statistics
import subprocess
import sys

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
