#!/usr/bin/env python3
"""bench/all.py BUILD_DIR [--smoke] [--summary] [--only NAME,...] [--list]: every benchmark
of `make bench`.

Full run (`make bench`): runs each benchmark below in turn (its tables on stdout, progress
on stderr, its results in BENCH_OUT, default BUILD_DIR/bench), goes on when one fails,
then prints one summary: every figure README.md quotes, from this run, with the budget it
is held against and PASS/MISS; also written to BENCH_OUT/summary.json. Exit status 1 when
a benchmark failed (a MISS is a result, not a failure). --summary runs nothing: it prints
the summary again from the results already in BENCH_OUT.

--smoke (`make bench-smoke`, and one CTest entry per benchmark, label `bench`): the same
commands with VIGIL_BENCH_SMOKE=1, which each benchmark reads to run at a tiny size, and
BENCH_OUT in a temporary directory. A benchmark passes when it exits 0 (each one exits
non-zero when its answers disagree: vigil against SQLite, a plan against the full
recording, events written against events read back) and its results give the summary's
figures. Timings are never judged. The directory is removed when everything passed, kept
(and named) otherwise.

Adding a benchmark: one line in BENCHES (name, command, the function of bench/figures.py
that reads its figures, or None); `make bench`, `make bench-smoke` and CTest pick it up.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import figures  # noqa: E402

# name, command ({build}: BUILD_DIR, {out}: BENCH_OUT, {src}: bench/, {python}: this
# interpreter), the function of bench/figures.py that reads its figures (or None).
BENCHES = [
    ("recording", ["{src}/run.sh", "{build}"], figures.recording),
    ("query", ["{src}/query.sh", "{build}"], figures.query),
    ("query-pg", ["{python}", "{src}/query_pg_bench.py", "{build}"], figures.query_pg),
    ("skip", ["{python}", "{src}/skip_bench.py", "{build}"], figures.skip),
    ("first-query", ["{python}", "{src}/first_query_bench.py", "{build}"], figures.first_query),
    ("scale", ["{python}", "{src}/scale_bench.py", "{build}"], figures.scale),
    ("e2e", ["{python}", "{src}/e2e_bench.py", "{build}"], figures.e2e),
    ("hugepages", ["{python}", "{src}/hugepages_bench.py", "{build}"], figures.hugepages),
    ("watch", ["{python}", "{src}/watch.py", "{build}"], figures.watch),
    ("watch-incremental", ["{python}", "{src}/watch_incremental.py", "{build}"],
     figures.watch_incremental),
    ("watch-live", ["{python}", "{src}/watch_live.py", "{build}"], figures.watch_live),
    ("logcap", ["{build}/bench/logcap-bench", "--json", "{out}/logcap.json"], figures.logcap),
    ("consistency", ["{build}/bench/consistency-bench", "--json", "{out}/consistency.json"],
     figures.consistency),
    ("logmodel-pg", ["{python}", "{src}/logmodel_pg.py", "{build}"], figures.logmodel_pg),
    ("probes", ["{python}", "{src}/probes_bench.py", "{build}"], figures.probes),
    ("collector", ["{python}", "{src}/collector_bench.py", "{build}"], figures.collector),
    ("nginx", ["{python}", "{src}/nginx_bench.py", "{build}"], figures.nginx),
    ("net-build", ["{python}", "{src}/net_build_bench.py", "{build}"], figures.net_build),
    ("trace-size", ["{python}", "{src}/trace_size_bench.py", "{build}"], figures.trace_size),
    ("derived", ["{python}", "{src}/derived_bench.py", "{build}"], figures.derived),
    ("pg-fork", ["{python}", "{src}/pg_fork_bench.py", "{build}"], figures.pg_fork),
    ("ui", ["{python}", "{src}/ui_bench.py", "{build}"], figures.ui),
    ("ui-models", ["{python}", "{src}/ui_models_bench.py", "{build}"], figures.ui_models),
    ("usdt", ["{python}", "{src}/usdt_bench.py", "{build}"], figures.usdt),
    ("ui-nets", ["{python}", "{src}/ui_nets_bench.py", "{build}"], figures.ui_nets),
    ("usdt-pg", ["{python}", "{src}/usdt_pg_bench.py", "{build}"], figures.usdt_pg),
]

SMOKE_TIMEOUT = 300  # seconds per benchmark: a hang fails instead of blocking CI


def say(msg):
    print(msg, file=sys.stderr, flush=True)


def usage(msg):
    say("bench/all.py: " + msg)
    say("usage: bench/all.py BUILD_DIR [--smoke | --summary] [--only NAME,...] | --list")
    sys.exit(2)


def parse(argv):
    build, smoke, only, summary = None, False, None, False
    it = iter(argv)
    for a in it:
        if a == "--list":
            print("\n".join(b[0] for b in BENCHES))
            sys.exit(0)
        elif a == "--smoke":
            smoke = True
        elif a == "--summary":
            summary = True
        elif a == "--only":
            only = next(it, None)
            if not only:
                usage("--only needs a list of names")
        elif build is None and not a.startswith("-"):
            build = a
        else:
            usage("unexpected argument '%s'" % a)
    if build is None or not os.path.isdir(build):
        usage("BUILD_DIR is missing or not a directory")
    names = [b[0] for b in BENCHES]
    sel = BENCHES
    if only:
        wanted = only.split(",")
        for w in wanted:
            if w not in names:
                usage("no benchmark '%s' (there are: %s)" % (w, ", ".join(names)))
        sel = [b for b in BENCHES if b[0] in wanted]
    if smoke and summary:
        usage("--smoke and --summary exclude each other")
    return os.path.abspath(build), smoke, summary, sel


def run_one(name, cmd, env, log, timeout):
    """Runs one benchmark; returns (exit status, seconds). With log, its output goes there."""
    t0 = time.monotonic()
    try:
        if log:
            with open(log, "w") as f:
                rc = subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT,
                                    timeout=timeout).returncode
        else:
            rc = subprocess.run(cmd, env=env, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        rc = "timeout after %d s" % timeout
    except OSError as e:
        rc = "cannot start: %s" % e
    return rc, time.monotonic() - t0


def tail(path, n=25):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def print_summary(figs, failed):
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(x.split(":", 1)[1].strip() for x in f if x.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print("\n## Summary: the figures README.md quotes, from this run\n")
    print("%s, %d cpus, kernel %s; load average %s now (figures taken under load are not "
          "comparable: run again)\n" % (cpu, os.cpu_count(), os.uname().release,
                                         "%.2f" % os.getloadavg()[0]))
    print("| benchmark | figure | this run | budget | verdict |")
    print("|---|---|---|---|---|")
    for f in figs:
        v = "" if not f.budget else ("not judged" if f.verdict is None else
                                    "PASS" if f.verdict else "MISS")
        print("| %s | %s | %s | %s | %s |" % (f.bench, f.what, f.value, f.budget, v))
    for name, why in failed:
        print("| %s | (no figures: %s) | | | FAILED |" % (name, why))
    print()


def main():
    build, smoke, summary_only, sel = parse(sys.argv[1:])
    env = dict(os.environ)
    if smoke:
        out = tempfile.mkdtemp(prefix="vigil-bench-smoke-")
        env["VIGIL_BENCH_SMOKE"] = "1"
    else:
        out = env.get("BENCH_OUT", os.path.join(build, "bench"))
        os.makedirs(out, exist_ok=True)
    env["BENCH_OUT"] = out
    figs, failed, took = [], [], {}
    for name, cmd, fig in sel:
        cmd = [c.format(build=build, out=out, src=HERE, python=sys.executable) for c in cmd]
        log = os.path.join(out, name + ".log") if smoke else None
        figures.NOT_BEFORE = 0.0 if summary_only else time.time() - 1
        if summary_only:
            rc, secs = 0, 0.0
        else:
            if not smoke:
                say("\n[bench] ==== %s: %s" % (name, " ".join(cmd)))
            rc, secs = run_one(name, cmd, env, log, SMOKE_TIMEOUT if smoke else None)
        took[name] = secs
        if rc != 0:
            why = "exit status %s" % rc
            failed.append((name, why))
            if smoke:
                say("bench-smoke: FAIL %s: %s after %.1f s; its output (%s) ends:\n%s" % (
                    name, why, secs, log, tail(log)))
            else:
                say("[bench] %s FAILED: %s" % (name, why))
            continue
        try:
            got = fig(out) if fig else []
        except (KeyError, OSError, ValueError, TypeError, IndexError, ZeroDivisionError) as e:
            why = "its results lack the summary's figures: %s: %s" % (type(e).__name__, e)
            failed.append((name, why))
            say("bench%s: FAIL %s: %s" % ("-smoke" if smoke else "", name, why))
            continue
        figs += got
        if smoke:
            say("bench-smoke: ok %s (%.1f s, %d figures)" % (name, secs, len(got)))
    if smoke:
        if failed:
            say("bench-smoke: %d of %d failed (%s); outputs kept in %s" % (
                len(failed), len(sel), ", ".join(n for n, _ in failed), out))
            return 1
        shutil.rmtree(out, ignore_errors=True)
        say("bench-smoke: all %d passed in %.0f s" % (len(sel), sum(took.values())))
        return 0
    print_summary(figs, failed)
    if summary_only:
        return 1 if failed else 0
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"figures": [f._asdict() for f in figs],
                   "failed": [{"bench": n, "why": w} for n, w in failed],
                   "seconds": took}, f, indent=1)
    say("[bench] summary: %s" % os.path.join(out, "summary.json"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
