#!/usr/bin/python3
"""Stock PostgreSQL from Debian under `vigil record`, with zero lines of integration (no
adapter, no emit_log_hook): its log messages are captured where they leave the server,
through syslog (one call site, format "[%lu-%d] %s") or written to stderr (write(2)),
and each message's template is an event (docs/logcapture.md, "Templates").

A scenario is two recorded runs that differ in one setting, pgbench driving both:

  checkpoint   baseline: no checkpoint asked; variation: a CHECKPOINT every PERIOD
               seconds on one extra connection (checkpoint frequency); autovacuum off
               in both, so that a worker launched in one run only is no other change
  autovacuum   baseline: autovacuum_naptime = 1min; variation: autovacuum_naptime = NAP

A case is correct when an event indicative of the change (its template names a
checkpoint, resp. autovacuum) is in the top 3 of the events report of `vigil diff
--events-by chi2` (by share, the dominant transaction messages, diluted, come first).

    pg_stock.py --bin BUILD/bin --pg-bin /usr/lib/postgresql/15/bin --syslog-sink SO
                --scenario checkpoint|autovacuum [--dest syslog|stderr]
                [--transactions N | --transactions 0 --seconds N]
                [--keep DIR]

Also checks that nothing less severe than WARNING was written (the default threshold):
the syslog stand-in (syslog_sink.so) or the server's stderr holds no DEBUG or LOG
message, but does hold the ERROR the driver provokes. Exit status 77 (skipped) when
PostgreSQL is not installed. bench/models_bench.py runs the same cases at several
magnitudes and repeats (`make bench-models`)."""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pgharness  # noqa: E402

# Events indicative of each change, by their text (Debian's postgres has no symbols to
# name the source file): a checkpoint's messages name it; autovacuum's are those of its
# launcher and workers (autovacuum.c: "autovacuum: ...", "autovac_balance_cost", the
# "%s: vac: %.0f (threshold %.0f), ..." of relation_needs_vacanalyze) and of the
# VACUUM and ANALYZE they run.
INDICATIVE = {
    "checkpoint": re.compile(r"checkpoint|restartpoint", re.I),
    "autovacuum": re.compile(r"autovac|vacuum|: vac: |analyz", re.I),
}


def label(ev):
    return json.dumps(ev.get("name") or ev.get("fmt"))[:110]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise pgharness.PgError("%s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr))
    return r


def settings(scenario, variation, magnitude):
    """(postgresql.conf settings, side statement or None) of one run."""
    conf = {}
    if scenario == "checkpoint":  # a worker launched in one run only is another change
        conf["autovacuum"] = "off"
    if scenario == "autovacuum":
        conf["autovacuum_naptime"] = magnitude if variation else "'1min'"
    return conf, ("CHECKPOINT;" if scenario == "checkpoint" and variation else None)


def record_run(pg, vigil_bin, name, scenario, variation, magnitude, dest, seconds,
               transactions=None):
    """One recorded run of pgbench for `seconds`, or for `transactions` per client when
    given; returns the path of its model (.vgm)."""
    conf, stmt = settings(scenario, variation, magnitude)
    trace = pg.path("trace-" + name)
    pg.start(record=trace, out="server-%s.out" % name)
    base = {"log_min_messages": "debug5"}
    base.update(conf)
    pg.set_conf(base)
    pg.reload()
    pg.psql("SELECT 1")  # the reload has been read by then (a new backend)
    period = float(magnitude) if scenario == "checkpoint" and variation else 1.0
    length = ["-t", str(transactions)] if transactions else ["-T", str(seconds)]
    out = pg.pgbench(["-n", "-c", "2"] + length, every=period,
                     statement=stmt or "SELECT 1;")
    print("%s: %s tps" % (name, pgharness.tps(out)))
    r = pg.psql("SELECT 1/0", check=False)  # an ERROR: must be written
    if "division by zero" not in r.stderr:
        raise pgharness.PgError("the provoked error did not happen: %r" % r.stderr)
    pg.set_conf({"log_min_messages": "warning", "autovacuum_naptime": "'1min'",
                 "autovacuum": "on"})
    pg.stop()
    model = pg.path(name + ".vgm")
    r = run([os.path.join(vigil_bin, "vigil"), "model", trace, "-o", model])
    print(r.stderr.strip())
    return model


def diff(vigil_bin, a, b):
    r = run([os.path.join(vigil_bin, "vigil"), "diff", a, b, "--format", "json", "--top", "0",
             "--events-by", "chi2"])
    return json.loads(r.stdout)


def rank_of_indicative(d, scenario):
    """The rank (1-based) of the first indicative event in the events report, or None."""
    for i, row in enumerate(d["events"]):
        ev = row["event"]
        if INDICATIVE[scenario].search((ev.get("fmt") or "") + " " + (ev.get("name") or "")):
            return i + 1
    return None


def start_server(a, dest):
    pg = pgharness.PgServer(a.pg_bin, a.bin, syslog_sink=a.syslog_sink, keep=a.keep)
    pg.initdb({"log_min_messages": "warning", "log_destination": "'%s'" % dest,
               "logging_collector": "off", "fsync": "off", "synchronous_commit": "off",
               "log_checkpoints": "on", "autovacuum_naptime": "'1min'"})
    pg.start(out="init.out")  # pgbench's tables, made by a server not recorded
    pg.pgbench(["-i", "-q", "-s", "2"])
    pg.stop()
    if os.path.exists(pg.path("syslog.txt")):  # that server passed everything on
        os.unlink(pg.path("syslog.txt"))
    return pg


def written_below_warning(pg, dest):
    """Messages less severe than WARNING that were written, and whether the ERROR was."""
    lines = []
    if dest == "syslog":
        if os.path.exists(pg.path("syslog.txt")):
            with open(pg.path("syslog.txt"), errors="replace") as f:
                lines = f.read().splitlines()
    else:
        for name in sorted(os.listdir(pg.dir)):
            if name.startswith("server-") and name.endswith(".out"):
                with open(pg.path(name), errors="replace") as f:
                    lines += f.read().splitlines()
    below = [ln for ln in lines if re.search(r"\b(DEBUG\d?|LOG|INFO):", ln)]
    return below, any("division by zero" in ln for ln in lines), len(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--pg-bin", default="")
    ap.add_argument("--syslog-sink", required=True)
    ap.add_argument("--scenario", choices=sorted(INDICATIVE), required=True)
    ap.add_argument("--dest", choices=("syslog", "stderr"), default="syslog")
    ap.add_argument("--magnitude", help="checkpoint period in s, or autovacuum_naptime")
    ap.add_argument("--seconds", type=int, default=12, help="with --transactions 0")
    # Runs of a fixed number of transactions, not of a fixed time: when other work on the
    # machine slows one run of the pair, a timed run makes fewer transactions, and the
    # events whose count does not depend on the load (each backend's exit messages) gain
    # a share large enough to outrank the change (seen: 24k events against 76k, the exit
    # messages first).
    ap.add_argument("--transactions", type=int, default=8000,
                    help="pgbench transactions per client (0: run --seconds)")
    ap.add_argument("--keep")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    a.syslog_sink = os.path.abspath(a.syslog_sink)
    if not a.pg_bin or not all(os.path.exists(os.path.join(a.pg_bin, t)) for t in
                               ("postgres", "initdb", "pg_ctl", "pgbench", "psql",
                                "pg_isready")):
        print("SKIP: PostgreSQL's server is not installed (Debian package postgresql; "
              "scripts/install-deps.sh installs it)")
        return 77
    # The test's variation: a checkpoint every 0.5 s (about 20 in a run), where every 4 s
    # (2 or 3) is too few to outrank the noise (bench/models_bench.py's table).
    magnitude = a.magnitude or ("0.5" if a.scenario == "checkpoint" else "'1s'")
    fails = []
    pg = None
    try:
        pg = start_server(a, a.dest)
        base = record_run(pg, a.bin, "base", a.scenario, False, magnitude, a.dest, a.seconds,
                          a.transactions)
        other = record_run(pg, a.bin, "variation", a.scenario, True, magnitude, a.dest,
                           a.seconds, a.transactions)
        d = diff(a.bin, base, other)
        print("baseline: %d events of %d types; variation: %d events of %d types" %
              (d["baseline"]["events"], d["baseline"]["types"], d["other"]["events"],
               d["other"]["types"]))
        print("events report, top 8:")
        for row in d["events"][:8]:
            ind = INDICATIVE[a.scenario].search(row["event"].get("fmt") or "")
            print("  %d %s %+.5f (%d -> %d) %s" % (row["rank"], "*" if ind else " ",
                                                  row["difference"], row["count_baseline"],
                                                  row["count_other"], label(row["event"])))
        rank = rank_of_indicative(d, a.scenario)
        print("first %s event at rank %s" % (a.scenario, rank))
        if rank is None or rank > 3:
            fails.append("no %s event in the top 3 of the events report (first at rank %s)"
                         % (a.scenario, rank))
        if d["baseline"]["types"] < 20 or d["baseline"]["events"] < 1000:
            fails.append("the baseline model is too small to mean anything (%d events of "
                         "%d types): templates are not being made" %
                         (d["baseline"]["events"], d["baseline"]["types"]))
        below, error_written, nlines = written_below_warning(pg, a.dest)
        print("written (%s): %d lines, %d below WARNING" % (a.dest, nlines, len(below)))
        if below:
            fails.append("%d messages below WARNING were written, e.g. %r" %
                         (len(below), below[0]))
        if not error_written:
            fails.append("the provoked ERROR was not written: the check sees nothing")
    except pgharness.PgError as e:
        fails.append(str(e))
    finally:
        if pg:
            if fails and not a.keep:
                pg.keep = pg.dir  # kept for a look
                print("kept in %s" % pg.dir)
            pg.cleanup()
    if fails:
        print("\n".join("FAIL: " + f for f in fails))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
