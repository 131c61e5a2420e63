"""bench/pinned.py: the pinned mode of the benchmarks (`BENCH_RT=1`, bench/README.md).

On a shared machine a timed process at normal priority may get a tenth of a core, and
its figure is then mostly waiting. With BENCH_RT=1 each timed command (vigil and its
peers alike) runs under the real-time FIFO policy at priority 50 (what `chrt -f 50` sets)
and, unless BENCH_RT_PIN=0, on as many CPUs as it has threads (`taskset`): a 1-thread
figure on one CPU, a 2-thread figure on two (a peer's threads that only wait for the
timed work, node's main thread in bench/duckdb/duck.cjs, one priority lower: see job()).
Only the timed part runs so: not the loading,
indexing or checking around it. The kernel keeps 5% of each CPU for the others
(sched_rt_runtime_us), so nothing is starved for good; keep pinned runs short.

Needs root (or CAP_SYS_NICE); asked for without it, the benchmark stops with one line.
"""
import contextlib
import os

PRIORITY = 50


def enabled():
    return os.environ.get("BENCH_RT", "0") not in ("", "0")


def _pin():
    return os.environ.get("BENCH_RT_PIN", "1") not in ("", "0")


def cpus(threads):
    """The CPUs a run of `threads` threads is pinned to (None: not pinned)."""
    if not enabled() or not _pin() or not threads:
        return None
    have = sorted(os.sched_getaffinity(0))
    return have[:max(1, min(threads, len(have)))]


def check():
    """Stops the benchmark with one line when BENCH_RT=1 cannot be honoured."""
    if not enabled():
        return
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PRIORITY))
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except PermissionError:
        raise SystemExit("bench: BENCH_RT=1 needs root or CAP_SYS_NICE (real-time priority "
                         "for the timed runs); run as root or leave BENCH_RT unset")


def describe():
    if not enabled():
        return "normal priority"
    return "pinned: SCHED_FIFO %d (chrt -f %d)%s" % (
        PRIORITY, PRIORITY, ", one CPU per thread (taskset)" if _pin() else "")


def preexec(threads):
    """A subprocess preexec_fn putting the child in the pinned mode (None when off)."""
    if not enabled():
        return None
    pin = cpus(threads)

    def apply():
        if pin:
            os.sched_setaffinity(0, pin)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PRIORITY))
    return apply


@contextlib.contextmanager
def here(threads=1):
    """Runs the block (timed work in this process: SQLite) in the pinned mode."""
    if not enabled():
        yield
        return
    old = os.sched_getaffinity(0)
    pin = cpus(threads)
    if pin:
        os.sched_setaffinity(0, pin)
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PRIORITY))
    try:
        yield
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        os.sched_setaffinity(0, old)


def bound():
    """True when the pinned mode binds CPUs (BENCH_RT=1 and BENCH_RT_PIN not 0)."""
    return enabled() and _pin()


def job(threads, bind=True):
    """What a peer that sets its own mode (bench/duckdb/duck.cjs) is told: the priority of
    its threads, the lower one of its main thread (node's event loop: at the same FIFO
    priority it kept DuckDB's threads off a bound CPU), and the CPU list for `chrt -a -f
    -p` and `taskset -a -p -c` (None when off; bind=False: the CPUs left unbound)."""
    if not enabled():
        return None
    pin = cpus(threads) if bind else None
    return {"priority": PRIORITY, "main_priority": PRIORITY - 1,
            "cpus": ",".join(map(str, pin)) if pin else None,
            "all_cpus": ",".join(map(str, sorted(os.sched_getaffinity(0))))}
