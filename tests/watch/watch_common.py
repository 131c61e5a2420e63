"""What the watch tests share: reading `vigil watch`'s outputs, and running a live watch
of a subject that waits for a go file, so that answers must come while it still runs."""
import collections
import json
import subprocess
import threading


def values(text):
    """The explicit values of the JSON tuples in text, counted."""
    c = collections.Counter()
    for line in text.splitlines():
        if line.startswith("{"):
            c[json.dumps(json.loads(line)["values"], sort_keys=True)] += 1
    return c


def stats_of(err):
    """The --stats object on stderr, or None."""
    for line in err.splitlines():
        if line.startswith('{"watch"'):
            return json.loads(line)["watch"]
    return None


def json_lines(text):
    """The JSON tuple lines of text, sorted (a multiset)."""
    return sorted(l for l in text.splitlines() if l.startswith("{"))


def live_watch(cmd, go, name, first_timeout):
    """Runs `vigil watch` (the argument list cmd) whose subject waits for the file go: the
    first answer line must come within first_timeout s while it waits; then go is made and
    the watch must end. Returns (stdout, stderr, lines printed before go). On a failure the
    watch is ended by its pid (ours) and the test fails with one line."""
    watch = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
        if not first.wait(timeout=first_timeout) or watch.poll() is not None:
            raise SystemExit(f"FAIL: {name}: no answer while the subject ran "
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
    if watch.returncode != 0:
        raise SystemExit(f"FAIL: {name}: vigil watch exited {watch.returncode}: {err[0]}")
    return "".join(out), err[0], before


def refused(vigil, args, query, relation, what):
    """vigil watch refuses the query before running anything, in one line naming relation
    and saying `what`; returns stderr's lines."""
    r = subprocess.run([vigil, "watch", "-e", query, *args], capture_output=True, text=True,
                       timeout=60)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    if r.returncode != 2 or r.stdout or relation not in r.stderr or what not in r.stderr:
        raise SystemExit(f"FAIL: {relation}: not refused as expected (exit {r.returncode}): "
                         f"{r.stdout!r} {r.stderr!r}")
    return lines
