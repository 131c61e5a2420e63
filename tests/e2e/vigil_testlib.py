"""Shared helpers for vigil's end-to-end tests: run the real binaries, read traces with
`vigil dump --json` and with babeltrace2's Python bindings (python3-bt2)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("VIGIL_BIN", "build/bin")
VIGIL = os.path.join(BIN, "vigil")
SUBJECT = os.path.join(BIN, "vg_subject")


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


_made = []  # tmpdir()'s folders: main() removes them when the test passes


def tmpdir(name):
    """A new folder under /tmp, removed by main() if the test passes, kept (and named) if
    it fails."""
    d = tempfile.mkdtemp(prefix=f"vigil-{name}-")
    _made.append(d)
    return d


def _leave(passed):
    for d in _made:
        if passed:
            shutil.rmtree(d, ignore_errors=True)
        elif os.path.exists(d):
            print(f"kept {d}")


def run(cmd, env=None, check_rc=None, timeout=120, **kw):
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    p = subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=timeout, **kw)
    if check_rc is not None and p.returncode != check_rc:
        raise Failure(f"{cmd} exited {p.returncode}, expected {check_rc}\nstdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}")
    return p


def redis_script(requests, clients, commands="set,get"):
    """A shell script that starts Debian's redis-server on a free loopback port, drives it
    with redis-benchmark (`requests` of each of `commands` over `clients` connections),
    shuts it down and exits with redis-benchmark's status; with the server's path and
    port. None when redis is not installed."""
    import socket
    server, bench, cli = (shutil.which(p) for p in ("redis-server", "redis-benchmark",
                                                      "redis-cli"))
    if not (server and bench and cli):
        return None
    with socket.socket() as s_:
        s_.bind(("127.0.0.1", 0))
        port = s_.getsockname()[1]
    script = f"""
{server} --port {port} --bind 127.0.0.1 --save '' --appendonly no --logfile '' \
    --loglevel warning &
for i in $(seq 400); do {cli} -p {port} ping >/dev/null 2>&1 && break; sleep 0.05; done
{bench} -p {port} -n {requests} -c {clients} -t {commands} -q >/dev/null; rc=$?
{cli} -p {port} shutdown nosave >/dev/null
wait
exit $rc
"""
    return script, server, port


def record_deadlock(subject, trace, timeout=90):
    """Runs tests/check/deadlock_subject.c's `deadlock` (the path `subject`) recording into
    `trace`, killed once both threads wait (it never ends by itself). Returns the two
    thread ids it reported and None, or None and why it never reported both waits."""
    ready = trace + ".ready"
    p = subprocess.Popen([subject, "deadlock", ready], env=dict(os.environ, VIGIL_OUT=trace),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while not os.path.exists(ready) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if p.poll() is None:
        p.send_signal(signal.SIGKILL)
    so, se = p.communicate()
    if not os.path.exists(ready):
        return None, "the subject never reported both waits (exit %s): %s %s" % (
            p.returncode, so, se)
    with open(ready) as f:
        return f.read().split(), None


def dump_json(trace, *extra):
    p = run([VIGIL, "dump", "--json", *extra, trace])
    events = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    return events, p


def bt2_events(trace):
    """Every event message of the trace as (ns_from_origin, name, fields dict)."""
    import bt2  # python3-bt2, Debian's bindings of babeltrace2

    out = []
    discarded = 0
    for msg in bt2.TraceCollectionMessageIterator(trace):
        if type(msg) is bt2._EventMessageConst:
            ev = msg.event
            fields = {k: to_py(v) for k, v in ev.payload_field.items()}
            out.append((msg.default_clock_snapshot.ns_from_origin, ev.name, fields))
        elif type(msg) is bt2._DiscardedEventsMessageConst:
            discarded += msg.count or 0
    return out, discarded


def to_py(v):
    import bt2

    if isinstance(v, bt2._StringFieldConst):
        return str(v)
    if isinstance(v, (bt2._StructureFieldConst,)):
        return {k: to_py(x) for k, x in v.items()}
    if isinstance(v, (bt2._ArrayFieldConst,)):
        return [to_py(x) for x in v]
    if isinstance(v, bt2._RealFieldConst):
        return float(v)
    if isinstance(v, bt2._IntegerFieldConst):
        return int(v)
    return v


def main(tests):
    """Runs the test named by argv[1]; prints a closing line CTest shows."""
    name = sys.argv[1] if len(sys.argv) > 1 else None
    if name not in tests:
        print(f"unknown test {name}; known: {', '.join(tests)}")
        sys.exit(2)
    passed = False
    try:
        tests[name]()
        passed = True
    except Failure as e:
        print(f"FAIL {name}: {e}")
        sys.exit(1)
    except SystemExit as e:
        passed = e.code in (0, None, 77)  # 77: skipped, nothing to look at
        raise
    finally:
        _leave(passed)
    print(f"ok {name}")
