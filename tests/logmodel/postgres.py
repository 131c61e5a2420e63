#!/usr/bin/python3
"""PostgreSQL from Debian's packages under `vigil record` (tests/logmodel.cmake,
logmodel.postgres; issue 5's validation on a real system).

The server runs at its most detailed level (log_min_messages = debug5, log_destination
= syslog) with vigil's logging adapter (pg_vigil_log.so, shared_preload_libraries) and
VIGIL_LOG_PASS=warning, driven by pgbench in two recorded runs that differ only in
checkpoint frequency: every second the driver sends "SELECT 1" (baseline) or
"CHECKPOINT" (frequent checkpoints) on one extra connection. Asserts:

  * the events report of `vigil diff` ranks checkpoint events first: at least two of its
    top three rows are checkpoint messages, and the only other row allowed there is the
    dominant event (xact.c's transaction state, 99.8% of a pgbench run's messages) when
    its share fell, diluted by the checkpoint events; and the baseline model holds the
    pgbench work itself (20 event types or more, 1000 events or more);
  * nothing below the pass-through threshold is written anywhere: the server's stderr
    holds no DEBUG or LOG line, and the syslog stand-in (syslog_sink.so, preloaded after
    libvigil: what the real syslog would have received) holds no message less severe
    than LOG_WARNING, but does hold the ERROR the driver provokes (a division by zero),
    so the check can see a message that passes.

The server starts at log_min_messages = warning and is reloaded at debug5 before the
workload: PostgreSQL writes its early start-up messages to stderr itself, before it
loads preload libraries or opens syslog.

    postgres.py --bin BUILD/bin --pg-bin /usr/lib/postgresql/15/bin --adapter SO
                --syslog-sink SO [--seconds N] [--keep DIR]
Exit status 77 (skipped) when PostgreSQL or its server headers are not installed."""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pgharness  # noqa: E402

# Where PostgreSQL 15's checkpoint logs: CreateCheckPoint and the WAL recycling it does
# (xlog.c), the checkpointer, and what CheckPointGuts and CreateCheckPoint call that logs
# at debug levels (replication slots, SLRU truncation, the standby snapshot).
CHECKPOINT_FILES = ("checkpointer.c", "xlog.c", "slot.c", "slru.c", "standby.c")


def checkpoint_related(ev):
    """An event of the checkpoint: its message says so, or it comes from the code a
    checkpoint runs (above)."""
    text = (ev.get("fmt") or "") + " " + (ev.get("name") or "")
    if re.search(r"checkpoint|restartpoint", text, re.I):
        return True
    site = (ev.get("site") or "").rsplit("/", 1)[-1]
    return site.split(":")[0] in CHECKPOINT_FILES


def label(ev):
    return "%s %s" % (ev.get("site"), json.dumps(ev.get("fmt"))[:90])


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise pgharness.PgError("%s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr))
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--pg-bin", default="")
    ap.add_argument("--adapter")
    ap.add_argument("--syslog-sink", required=True)
    ap.add_argument("--seconds", type=int, default=12)
    ap.add_argument("--keep")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    a.syslog_sink = os.path.abspath(a.syslog_sink)
    if a.adapter:
        a.adapter = os.path.abspath(a.adapter)
    if not a.pg_bin or not os.path.exists(os.path.join(a.pg_bin, "postgres")) \
            or not a.adapter:
        print("SKIP: PostgreSQL server and its headers are not installed (Debian packages "
              "postgresql postgresql-server-dev-all; scripts/install-deps.sh installs "
              "them), or CMake found none under /usr/lib/postgresql/*/bin")
        return 77
    for tool in ("initdb", "pg_ctl", "pgbench", "psql", "pg_isready"):
        if not os.path.exists(os.path.join(a.pg_bin, tool)):
            print("SKIP: %s not in %s" % (tool, a.pg_bin))
            return 77

    pg = pgharness.PgServer(a.pg_bin, a.bin, adapter=a.adapter, syslog_sink=a.syslog_sink,
                            keep=a.keep)
    fails = []
    try:
        pg.initdb({"log_min_messages": "warning", "log_destination": "'syslog'",
                   "fsync": "off", "synchronous_commit": "off", "log_checkpoints": "on"})
        # pgbench's tables, made by a server not recorded.
        pg.start(out="init.out")
        pg.pgbench(["-i", "-q", "-s", "2"])
        pg.stop()
        if os.path.exists(pg.path("syslog.txt")):  # that server passed everything on
            os.unlink(pg.path("syslog.txt"))

        models = {}
        for name, stmt in (("base", "SELECT 1;"), ("checkpoints", "CHECKPOINT;")):
            trace = pg.path("trace-" + name)
            pg.start(record=trace, env={"VIGIL_LOG_PASS": "warning"})
            pg.set_conf({"log_min_messages": "debug5"})
            pg.reload()
            pg.psql("SELECT 1")  # the reload has been read by then (a new backend)
            out = pg.pgbench(["-n", "-c", "2", "-T", str(a.seconds)], every=1.0,
                             statement=stmt)
            print("%s: %s tps" % (name, pgharness.tps(out)))
            r = pg.psql("SELECT 1/0", check=False)  # an ERROR: must reach syslog
            if "division by zero" not in r.stderr:
                fails.append("the provoked error did not happen: %r" % r.stderr)
            pg.set_conf({"log_min_messages": "warning"})
            pg.stop()
            models[name] = pg.path(name + ".vgm")
            r = run([os.path.join(a.bin, "vigil"), "model", trace, "-o", models[name]])
            print(r.stderr.strip())

        r = run([os.path.join(a.bin, "vigil"), "diff", models["base"], models["checkpoints"],
                 "--format", "json", "--top", "0"])
        d = json.loads(r.stdout)
        print("baseline: %d events of %d types; checkpoints: %d events of %d types" %
              (d["baseline"]["events"], d["baseline"]["types"], d["other"]["events"],
               d["other"]["types"]))
        print("events report, top 8:")
        for row in d["events"][:8]:
            print("  %d %s %+.5f (%d -> %d) %s" % (
                row["rank"], "C" if checkpoint_related(row["event"]) else " ",
                row["difference"], row["count_baseline"], row["count_other"],
                label(row["event"])))
        print("transitions report, top 5:")
        for row in d["transitions"][:5]:
            print("  %d %s x%.2f (%d -> %d) %s -> %s" % (
                row["rank"], "C" if checkpoint_related(row["from"]) or
                checkpoint_related(row["to"]) else " ", row["ratio"], row["count_baseline"],
                row["count_other"], label(row["from"]), label(row["to"])))
        # The events report ranks by the change of an event's share of all events. Almost
        # every event of a pgbench run is one message (xact.c's transaction state, 99.8%):
        # when checkpoint events appear, its share falls by the sum of their gains, so it
        # can rank first without having changed. Events counted as often in both runs
        # (each connection's exit callbacks) lose share too when the other run has more
        # events in all. Both are dilution, not change. The dominant message's share is one
        # minus the others' sum, so it moves against them in either direction: when the
        # other run commits more transactions, the exit callbacks' shares fall and its
        # share rises by as much (CI, 1967 -> 3120 tps: xact.c +0.00021, ranked first). It
        # says nothing the other rows do not: the top 3 of the other rows must be checkpoint
        # events.
        dominant = max(d["events"], key=lambda r: r["count_baseline"])
        changed = [r for r in d["events"]
                   if r is not dominant and
                   not (r["difference"] < 0 and r["count_baseline"] == r["count_other"])]
        top = changed[:3]
        if len(top) < 3 or not all(checkpoint_related(r["event"]) for r in top):
            fails.append("events report: the top 3 rows that are not dilution are not all "
                         "checkpoint events: %s" % [label(r["event"]) for r in top])
        if d["baseline"]["types"] < 20 or d["baseline"]["events"] < 1000:
            fails.append("the baseline model is too small to mean anything (%d events of "
                         "%d types)" % (d["baseline"]["events"], d["baseline"]["types"]))

        # Nothing below the threshold was written.
        debug_stderr = []
        for out in ("server.out",):
            with open(pg.path(out), errors="replace") as f:
                debug_stderr += [l for l in f if re.search(r"\b(DEBUG|LOG):", l)]
        if debug_stderr:
            fails.append("the server wrote %d DEBUG/LOG lines to stderr, e.g. %r" %
                         (len(debug_stderr), debug_stderr[0]))
        sys_lines = []
        if os.path.exists(pg.path("syslog.txt")):
            with open(pg.path("syslog.txt"), errors="replace") as f:
                sys_lines = f.read().splitlines()
        below = [l for l in sys_lines if int(l.split("\t", 1)[0]) > 4]
        print("syslog stand-in: %d messages, %d below warning" % (len(sys_lines), len(below)))
        if below:
            fails.append("%d messages below warning reached syslog, e.g. %r" %
                         (len(below), below[0]))
        if not any("division by zero" in l for l in sys_lines):
            fails.append("the provoked ERROR did not reach syslog: the check sees nothing")
    except pgharness.PgError as e:
        fails.append(str(e))
    finally:
        pg.cleanup()
    if fails:
        print("\n".join("FAIL: " + f for f in fails))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
