"""bench/figures.py: the figures README.md quotes, read from one run's results in BENCH_OUT,
each with the design brief's performance budget it is held against (PASS/MISS).

One function per benchmark of bench/all.py: f(out_dir) -> list of Figure. A figure with
no budget has verdict None; a budget that needs a peer the run does not have is printed
with verdict None too ("not judged"), never guessed. A missing or malformed result raises
(KeyError, OSError, ValueError): the smoke run fails on it.
"""
import json
import os
from collections import namedtuple

# what: the figure; value: as printed; budget: text ('' when none); verdict: True (PASS),
# False (MISS), None (no budget, or not judged in this run).
Figure = namedtuple("Figure", "bench what value budget verdict")


# Results older than this (seconds since the epoch) are from an earlier run: bench/all.py
# sets it to the start of the benchmark whose figures it reads (0: any age).
NOT_BEFORE = 0.0


def _open(out, name):
    path = os.path.join(out, name)
    if os.path.getmtime(path) < NOT_BEFORE:
        raise ValueError("%s is from an earlier run" % path)
    return open(path)


def _load(out, name):
    with _open(out, name) as f:
        return json.load(f)


def _ns(x):
    return "%.2f ns" % x if x < 10 else "%.1f ns" % x


def _s(x):
    return "%.1f ms" % (x * 1e3) if x < 1 else "%.2f s" % x


def recording(out):
    r = _load(out, "results.json")
    m, f = r["modes"], []
    d, b = m["disabled"]["vigil"], m["baseline"]["vigil"]
    f.append(Figure("recording", "empty loop (vigil / LTTng-UST)", "%s / %s" % (
        _ns(b["ns_per_event"]), _ns(m["baseline"]["lttng-ust"]["ns_per_event"])), "", None))
    f.append(Figure("recording", "disabled sensor (vigil / LTTng-UST)", "%s / %s" % (
        _ns(d["ns_per_event"]), _ns(m["disabled"]["lttng-ust"]["ns_per_event"])),
        "vigil under 1 ns", d["ns_per_event"] < 1.0))
    for kind, label in (("enabled-1t", "enabled, 1 thread"), ("enabled-2t", "enabled, 2 threads"),
                        ("burst", "enabled, one burst")):
        v, lt = m[kind]["vigil"], m[kind]["lttng-ust"]
        ratio = v["ns_per_event"] / lt["ns_per_event"]
        f.append(Figure("recording", "%s (vigil / LTTng-UST)" % label, "%s / %s = %.3f" % (
            _ns(v["ns_per_event"]), _ns(lt["ns_per_event"]), ratio),
            "ratio at most 0.25", ratio <= 0.25))
        if "trace_bytes_per_event" in v and "trace_bytes_per_event" in lt:
            vb, lb = v["trace_bytes_per_event"], lt["trace_bytes_per_event"]
            f.append(Figure("recording", "%s: trace bytes/event (vigil / LTTng-UST)" % label,
                            "%.2f / %.2f" % (vb, lb), "vigil at most LTTng-UST's", vb <= lb))
        f.append(Figure("recording", "%s: events lost (vigil / LTTng-UST)" % label,
                        "%d / %d of %d" % (v["events_lost"], lt["events_lost"],
                                           v["events_written"]),
                        "vigil none", v["events_lost"] == 0 and v["unreadable_traces"] == 0))
    cg = r.get("callgrind", {})
    for mode in ("disabled", "enabled"):
        if mode in cg:
            f.append(Figure("recording", "instructions per event, %s (vigil / LTTng-UST)" % mode,
                            "%.1f / %.1f" % (cg[mode]["vigil"]["instructions_per_event"],
                                             cg[mode]["lttng-ust"]["instructions_per_event"]),
                            "", None))
    return f


def query(out):
    r, f = _load(out, "query.json"), []
    for q in r["queries"]:
        v, sq = q["vigil"], q["sqlite"]
        ratio = sq["best_s"] / (v["exec_ns"] / 1e9)
        same = v["check"]["equal_sets"]
        text = "vigil %s, SQLite %s (%s), %.1fx%s" % (
            _s(v["exec_ns"] / 1e9), _s(sq["best_s"]), sq["best"], ratio,
            "" if same else ", ANSWERS DIFFER")
        if q["key"] == "scan":
            rate = v["scan_tuples_per_s"]
            f.append(Figure("query", q["name"], text + "; %.0fM tuples/s" % (rate / 1e6),
                            "over 50M tuples/s per core", rate > 50e6 and same))
        else:
            f.append(Figure("query", q["name"], text, "at least 10x SQLite",
                            ratio >= 10 and same))
        # DuckDB at equal threads (vigil --threads N against DuckDB's SET threads = N)
        for t, d in sorted(q.get("duckdb", {}).items()):
            if t not in ("1", "2"):  # "1 unbound", "2 unbound": the binding's check
                continue
            vt = q.get("vigil_threads", {}).get(t, {})
            if not vt.get("exec_ns"):
                continue
            ratio = d["best_s"] / (vt["exec_ns"] / 1e9)
            f.append(Figure("query", "%s, %s thread%s: vigil / DuckDB" % (
                q["name"], t, "" if t == "1" else "s"), "%s / %s, %.1fx%s" % (
                _s(vt["exec_ns"] / 1e9), _s(d["best_s"]), ratio,
                "" if d["same_answer"] else ", ANSWERS DIFFER"),
                "at least 3x DuckDB at equal threads", ratio >= 3 and d["same_answer"]))
    binding = [q["duckdb"][t]["best_s"] / q["duckdb"][t + " unbound"]["best_s"]
               for q in r["queries"] for t in ("1", "2")
               if t + " unbound" in q.get("duckdb", {})]
    if binding:  # pinned with the CPUs bound: did the binding hold DuckDB back?
        f.append(Figure("query", "DuckDB with the CPUs bound / unbound, same process "
                        "(pinned mode's check), over every query and thread count",
                        "%.2f to %.2f" % (min(binding), max(binding)), "", None))
    if r["settings"].get("mode"):
        f.append(Figure("query", "timed runs", "%s, load %.1f to %.1f" % (
            r["settings"]["mode"], r["settings"].get("load_start", 0),
            r["settings"].get("load_end", 0)), "", None))
    return f


def watch(out):
    r, f = _load(out, "watch.json"), []
    for row in r["rows"]:
        same = row["unoptimized_same_answer"] and row["optimized_same_answer"]
        f.append(Figure("watch", "%s, %d messages: packets recorded / unoptimized / optimized" % (
            row["query"], row["messages"]), "%d / %d / %d%s" % (
            row["full_packets"], row["unoptimized_packets"], row["optimized_packets"],
            "" if same else ", ANSWERS DIFFER"), "", None))
    c = r["control"]["send_applied"]
    f.append(Figure("watch", "control command send -> applied", "median %.1f us, p99 %.1f us" % (
        c["median_us"], c["p99_us"]), "", None))
    return f


def watch_incremental(out):
    r, f = _load(out, "watch_incremental.json"), []
    for row in r["rows"]:
        i, e = row["incremental"], row["re-evaluation"]
        same = i["same_answer"] and e["same_answer"]
        f.append(Figure("watch-incremental", "%s, %d messages: CPU per update of %d events, "
                        "start / end, incremental vs re-evaluation" % (
                            row["shape"], r["messages"], r["update_events"]),
                        "%.1f / %.1f ms vs %.1f / %.1f ms%s" % (
                            i["start_ms"], i["end_ms"], e["start_ms"], e["end_ms"],
                            "" if same else ", ANSWERS DIFFER"), "", None))
    return f


def watch_live(out):
    r, f = _load(out, "watch_live.json"), []
    for row in r["rows"]:
        i, e = row["incremental"], row["re-evaluation"]
        same = i["same_answer"] and e["same_answer"]
        f.append(Figure("watch-live", "%s, %d messages live: CPU per update, start / end, "
                        "update network over the growing trace vs re-evaluation" % (
                            row["shape"], r["messages"]),
                        "%.1f / %.1f ms vs %.1f / %.1f ms (end %.1fx)%s" % (
                            i["start_ms"], i["end_ms"], e["start_ms"], e["end_ms"],
                            e["end_ms"] / max(i["end_ms"], 1e-3),
                            "" if same else ", ANSWERS DIFFER"), "", None))
    return f


def logcap(out):
    rows = {}
    with _open(out, "logcap.json") as fh:
        for line in fh:
            if line.strip():
                j = json.loads(line)
                rows[j["config"]] = j
    s, e = rows["sampled"], rows["every"]
    # design.md: at most half of Sentinel's in-memory tracer in the same run (the peer of
    # bench/sentinel_tracer.c), for VG_LOG and intercepted calls alike; timing sampled 1/16.
    sen = s["sentinel"]
    budget = "at most half of the Sentinel-style tracer's %s" % _ns(sen)
    f = [Figure("logcap", "Sentinel-style in-memory tracer (peer)", _ns(sen), "", None),
         Figure("logcap", "VG_LOG captured (timing 1/16 / every)", "%s / %s" % (
             _ns(s["vg_log"]), _ns(e["vg_log"])), budget, s["vg_log"] <= sen / 2),
         Figure("logcap", "syslog intercepted, captured (timing 1/16 / every)", "%s / %s" % (
             _ns(s["syslog"]), _ns(e["syslog"])), budget, s["syslog"] <= sen / 2),
         Figure("logcap", "fprintf(stderr) intercepted, captured (timing 1/16)",
                _ns(s["fprintf_stderr"]), budget, s["fprintf_stderr"] <= sen / 2),
         Figure("logcap", "templated: syslog(\"[%lu-%d] %s\") / write(2) of a line to fd 2 "
                "(timing 1/16)", "%s / %s (%.1fx / %.1fx an identifying syslog)" % (
                    _ns(s["syslog_tmpl"]), _ns(s["write_stderr"]), s["syslog_tmpl"] / s["syslog"],
                    s["write_stderr"] / s["syslog"]), "", None),
         Figure("logcap", "disk logger: buffered fprintf / write(2) per line",
                "%s / %s" % (_ns(s["disk_fprintf"]), _ns(s["disk_write"])), "", None)]
    q = rows["q-sampled"]
    f.append(Figure("logcap", "transition-time quantile error, worst (timing 1/16 / every)",
                    "%.2f%% / %.2f%% (%d transitions)" % (
                        q["worst"] * 100, rows["q-every"]["worst"] * 100, q["transitions"]),
                    "", None))
    return f


def consistency(out):
    r = _load(out, "consistency.json")["results"]
    f = []
    for op in ("activity", "enter+leave", "acquire+release", "create+reclaim"):
        ns = {x["mode"]: x["ns_per_event"] for x in r if x["api"] == "inline" and x["op"] == op}
        f.append(Figure("consistency", "%s: baseline / tracking / reporting" % op,
                        "%s / %s / %s" % (_ns(ns["baseline"]), _ns(ns["tracking"]),
                                          _ns(ns["reporting"])), "", None))
    return f


def _cpu_pairs(pair):
    """(lowest, highest per-pair CPU ratio, verdict of 'under 3%'): the verdict needs pairs
    that agree; when the middle half of the per-pair ratios spans more than twice the
    budget (other work on the machine), it is None (not judged)."""
    ratios = sorted(a / b for a, b in zip(pair["cpu_us_on"], pair["cpu_us_other"]))
    q1, q3 = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
    return ratios[0], ratios[-1], (pair["cpu_cost_pct"] < 3.0) if q3 - q1 <= 0.06 else None


JUDGED = "judged when the pairs' middle half spans at most 6%"


def logmodel_pg(out):
    r = _load(out, "logmodel_pg.json")
    p, s, f = r["pairs"], r["stock"], []
    if p:  # absent when run with BENCH_PG_ONLY=stock
        off, prod = p["off"], p["production"]
        lo, hi, verdict = _cpu_pairs(off)
        f.append(Figure("logmodel-pg", "adapter: server CPU per transaction, capture on vs off "
                        "/ vs production (tps loss)", "%+.2f%% / %+.2f%% (tps %.1f%% / %.1f%%; "
                        "%d pairs, CPU ratios vs off %.2f-%.2f)" % (
                            off["cpu_cost_pct"], prod["cpu_cost_pct"], off["loss_pct"],
                            prod["loss_pct"], len(off["tps_on"]), lo, hi),
                        "under 3%% (CPU on vs off; %s)" % JUDGED, verdict))
    # Issue 23: stock PostgreSQL at debug5, captured from its stderr, against the server at
    # its default level, at debug5 written to /dev/null and to a file.
    d, z, w = s["stock-default"], s["stock-null"], s["stock-file"]
    lo, hi, verdict = _cpu_pairs(d)
    f.append(Figure("logmodel-pg", "stock PostgreSQL at debug5 captured: server CPU per "
                    "transaction vs default level / debug5 to /dev/null / debug5 to a file "
                    "(tps loss)", "%+.2f%% / %+.2f%% / %+.2f%% (tps %.1f%% / %.1f%% / %.1f%%; "
                    "%d pairs, CPU ratios vs default %.2f-%.2f)" % (
                        d["cpu_cost_pct"], z["cpu_cost_pct"], w["cpu_cost_pct"], d["loss_pct"],
                        z["loss_pct"], w["loss_pct"], len(d["tps_on"]), lo, hi),
                    "under 3%% (CPU vs default level; %s)" % JUDGED, verdict))
    return f


def probes(out):
    p = _load(out, "probes.json")
    diff = p["disabled_ns"] - p["empty_ns"]
    return [Figure("probes", "vigil probes enable -> first record (pattern given -> record)",
                   "%.1f ms (%.0f us)" % (p["command_us"] / 1e3, p["in_command_us"]), "", None),
            Figure("probes", "switched-off probe over the empty loop", "%+.2f ns" % diff,
                   "under 1 ns", diff < 1.0)]


def usdt(out):
    u = _load(out, "usdt.json")
    peer = ("%.0f ns" % u["uprobe_hit_ns"]) if u["uprobe_hit_ns"] is not None else \
        "n/a (%s)" % u["uprobe_note"]
    return [Figure("usdt", "USDT site disarmed / the program alone (ns per loop)",
                   "%.2f / %.2f" % (u["disarmed_ns"], u["plain_ns"]), "", None),
            Figure("usdt", "USDT site armed, cost per hit: jump path / int3 path / kernel "
                   "uprobe (perf)", "%.0f ns / %.0f ns / %s" % (
                       u["jump_hit_ns"], u["armed_hit_ns"], peer), "", None)]


def usdt_pg(out):
    u = _load(out, "usdt_pg.json")
    rows = (("record", "under vigil record, no --usdt"),
            ("buffer", "with its buffer__* USDT probes armed"),
            ("all", "with its 71 USDT probes armed"),
            ("all-int3", "with its 71 USDT probes armed, int3 path only"))
    return [Figure("usdt-pg", "pgbench %s / no vigil: tps, server CPU per transaction" % what,
                   "%.2f x, %.2f x" % (u[key]["tps_ratio"], u[key]["cpu_ratio"]), "", None)
            for key, what in rows]


def collector(out):
    c, f = _load(out, "collector.json"), []
    for key, label in (("ingest", "C subjects"), ("ingest_records", "RECORDS subjects")):
        f.append(Figure("collector", "records/s ingested, %s (1 / 8 / 64)" % label, " / ".join(
            "%.1fM" % (r["records_per_s"] / 1e6) for r in c[key]), "", None))
    f.append(Figure("collector", "subject cost per event, local / sending", "%s / %s" % (
        _ns(c["ns_per_event_local"]), _ns(c["ns_per_event_sending"])), "", None))
    t = c.get("tls")
    if t:
        f.append(Figure("collector", "records/s via vigil record --to, clear / TLS (1 / 8)",
                        " / ".join("%.1fM / %.1fM" % (r["plain"]["records_per_s"] / 1e6,
                                                       r["tls"]["records_per_s"] / 1e6)
                                   for r in t["rows"]), "", None))
        f.append(Figure("collector", "subject cost per event via vigil record --to, clear / TLS",
                        "%s / %s" % (_ns(t["ns_per_event_plain"]), _ns(t["ns_per_event_tls"])),
                        "", None))
    return f


def nginx(out):
    n = _load(out, "nginx.json")
    f = [Figure("nginx", "requests/s recorded / unrecorded (wrk, one worker, median ratio)",
                "%.3fx" % n["rps_ratio"], "at least 0.99x", n["rps_ratio"] >= 0.99),
         Figure("nginx", "p99 latency recorded / unrecorded (median ratio)",
                "%.2fx" % n["p99_ratio"], "within 10%", n["p99_ratio"] <= 1.10)]
    if n.get("cpu_ratios"):
        cpu = sorted(n["cpu_ratios"])[len(n["cpu_ratios"]) // 2]
        f.append(Figure("nginx", "worker CPU per request recorded / unrecorded (wrk -c1)",
                        "%.3fx" % cpu, "", None))
    st = n["stdio"]
    for k, label in (("flushed_ns", "fputs+fflush on a followed pipe"),
                     ("buffered_ns", "fprintf into the buffer")):
        if k in st["plain"]:
            f.append(Figure("nginx", "stdio: %s, plain -> recorded" % label, "%.0f -> %.0f ns" % (
                st["plain"][k], st["recorded"][k]), "", None))
    return f


def net_build(out):
    n = _load(out, "net_build.json")
    m = n["messages"]
    peer = n["babeltrace2_s"]
    return [Figure("net-build", "vigil net split on a make -j2 build's trace (%d events, %d "
                   "pairs) / babeltrace2 reading it" % (n["events"], m["pairs"]),
                   "%s / %s (%s)" % (_s(n["split_s"]), _s(peer) if peer else "-",
                                     "%.2fx" % (n["split_s"] / peer) if peer else "no peer"),
                   "", None),
            Figure("net-build", "the build's wall time recorded / plain (%d files, median "
                   "ratio)" % (n["dirs"] * n["files"]), "%.2fx" % n["build_ratio"], "", None)]
def trace_size(out):
    t = _load(out, "trace_size.json")
    i, s = t["image"], t["shared"]
    return [Figure("trace-size", "bytes per event of a make -j2 build's trace (%d images), "
                   "--shared / a directory per image" % s["images"],
                   "%.0f / %.0f B (%.3fx)" % (s["apparent"] / s["events"],
                                             i["apparent"] / i["events"],
                                             s["apparent"] / i["apparent"]), "", None),
            Figure("trace-size", "the same on disk (4 KiB blocks)",
                   "%.0f / %.0f B (%.3fx)" % (s["disk"] / s["events"], i["disk"] / i["events"],
                                             s["disk"] / i["disk"]), "", None)]


def skip(out):
    d = _load(out, "skip.json")
    q = d["queries"]
    figs = [Figure("skip", "selective Send query without a cache, %d events, %d thread(s): "
                   "%s, selections pushed into the build / not (VIGIL_SKIP=off)" % (
                       d["events"], d["threads"], what), "%s / %s (%.2fx)" % (
                       _s(q[k]["on_s"]), _s(q[k]["off_s"]), q[k]["off_s"] / q[k]["on_s"]),
                   "", None)
            for k, what in (("overlap", "5% of the time (when S overlap ...)"),
                            ("key", "mailbox 7, size > 58982 (where)")) if k in q]
    r = d.get("relations", {})
    tuples = r.get("tuples", {})
    for name in ("Audit", "Lock"):
        for cache, pos in (("off", "on"), ("off", "off"), ("cold", "on"), ("cold", "off"),
                           ("warm", "-")):
            one, send = r.get("%s_%s_%s" % (name, cache, pos)), r.get("Send_%s_%s" % (cache, pos))
            if not (one and send):
                continue
            figs.append(Figure(
                "skip", "query over %s (%d tuples) / over Send (%d), cache %s%s: wall, events "
                "decoded" % (name, tuples.get(name, 0), tuples.get("Send", 0), cache,
                             "" if pos == "-" else ", summaries' positions " + pos),
                "%s / %s (%.3f); %d / %d" % (_s(one["wall_s"]), _s(send["wall_s"]),
                                             one["wall_s"] / send["wall_s"], one["decoded"],
                                             send["decoded"]),
                "", None))
    return figs


def first_query(out):
    d = _load(out, "first_query.json")
    w, b = d["wall_s"], d["build_s"]
    pinned = d["mode"].startswith("pinned")
    return [Figure("first-query", "first query (relations cache cold: built and written), "
                   "selective Send scan, %d events, %s: 1 thread / 2 threads (build of it: "
                   "%s / %s), load %.1f-%.1f" % (d["events"], d["mode"], _s(b["1"]), _s(b["2"]),
                                                 d["load"][0], d["load"][1]),
                   "%s / %s (%.2fx)" % (_s(w["1"]), _s(w["2"]), d["ratio"]),
                   "2 threads at least 1.8x faster" + ("" if pinned else
                                                       " (judged pinned: BENCH_RT=1)"),
                   d["ratio"] >= 1.8 if pinned else None)]
def scale(out):
    d = _load(out, "scale.json")
    sp, w = d["spill"], d["warm"]
    bd, bb = sp["default"], sp["bounded"]
    n, nt = sp["tuples"] or 1, w["tuples"] or 1
    figs = [Figure("scale", "first query's max RSS per tuple touched, `Lock` where conn = 7, "
                   "%d events (%.0f MB trace): VIGIL_BUILD_MEMORY %.1f MB / default" % (
                       d["events"], d["trace_bytes"] / 1e6, sp["budget"] / 1e6),
                   "%.1f / %.1f B (%.2fx)" % (bb["max_rss"] / n, bd["max_rss"] / n,
                                             bb["max_rss"] / bd["max_rss"]), "", None)]
    for t in ("2", "1"):
        r = w["threads"][t]
        at10m = d["events"] >= 10_000_000
        figs.append(Figure("scale", "warm selective scan end to end, %d events, %s thread(s): "
                           "best wall (max RSS per Send tuple; vigil --version's wall)"
                           % (d["events"], t),
                           "%s (%.1f B; %s)" % (_s(r["best_s"]), r["max_rss"] / nt,
                                                _s(w["floor_s"])),
                           "under 100 ms at 10M events" if t == "2" else "",
                           (r["best_s"] < 0.1) if (t == "2" and at10m) else None))
    small = d.get("small")
    for name in ("Lock", "Audit") if small else ():
        r = small["relations"][name]
        figs.append(Figure("scale", "a query over a small relation, %d events, 2 threads: "
                           "`%s` (%d tuples, %.3f of `Send`'s): cold (written) and warm "
                           "(less the process's start) as shares of `Send`'s query" % (
                               d["events"], name, r["tuples"], r["tuple_share"]),
                           "%s (%.2f), %s (%.2f); max RSS %.1f MB" % (
                               _s(r["cold_s"]), r["cold_share"], _s(r["warm_s"]),
                               r["warm_share"], r["max_rss"] / 1e6),
                           "in proportion to the relation, not to the trace", None))
    duck = w.get("duckdb")
    for t in ("2", "1") if duck else ():
        v, dk = w["threads"][t]["best_s"], duck["threads"][t]["best_s"]
        figs.append(Figure("scale", "warm selective scan end to end, %d events, %s thread(s): "
                           "vigil query / DuckDB %s command line over its database file "
                           "(process start alone: vigil --version / duck-e2e --version)"
                           % (d["events"], t, duck["version"]),
                           "%s / %s (DuckDB / vigil %.2fx; %s / %s)" % (
                               _s(v), _s(dk), dk / v, _s(w["floor_s"]), _s(duck["floor_s"])),
                           "", None))
    return figs


def e2e(out):
    d = _load(out, "e2e.json")
    figs = []
    for t in ("2", "1"):
        r = d["threads"][t]
        at10m = d["events"] >= 10_000_000
        figs.append(Figure("e2e", "warm selective scan end to end, %d events, %s thread(s): "
                           "median wall, vigil checked once / vigil-full every column checked"
                           % (d["events"], t),
                           "%s / %s (%.2fx)" % (_s(r["front_once"]["median_s"]),
                                                _s(r["full_checked"]["median_s"]),
                                                r["full_checked"]["median_s"] /
                                                r["front_once"]["median_s"]),
                           "under 100 ms at 10M events" if t == "2" else "",
                           (r["front_once"]["median_s"] < 0.1) if (t == "2" and at10m)
                           else None))
    return figs


def hugepages(out):
    d = _load(out, "hugepages.json")
    c, j = d["cold"], d["join"]
    return [Figure("hugepages", "transparent huge pages refused / as vigil asks (kernel "
                   "\"%s\"), %d events, 1 thread, %s: first query's build (cache cold); "
                   "overlap join's exec (cache warm)" % (d["kernel_thp"], d["events"], d["mode"]),
                   "%s / %s (%.2fx); %s / %s (%.2fx)" % (
                       _s(c["off"]["part_s"]), _s(c["on"]["part_s"]),
                       c["off"]["part_s"] / c["on"]["part_s"], _s(j["off"]["part_s"]),
                       _s(j["on"]["part_s"]), j["off"]["part_s"] / j["on"]["part_s"]),
                   "", None)]


def derived(out):
    d = _load(out, "derived.json")
    figs = [Figure("derived", "time to first answer over Message x Network, three_tier %d "
                   "requests: vigil query / vigil net split + join script" % d["requests"],
                   "%s / %s (%.2fx)" % (_s(d["query_first_s"]), _s(d["split_script_first_s"]),
                                        d["split_script_first_s"] / d["query_first_s"]),
                   "", None)]
    if "cache_warm_first_s" in d:
        figs.append(Figure("derived", "first answer over Message x Network from the relations "
                           "cache: cold / warm (networks cached)",
                           "%s / %s (%.0fx)" % (_s(d["cache_cold_first_s"]),
                                                _s(d["cache_warm_first_s"]),
                                                d["cache_cold_first_s"] /
                                                d["cache_warm_first_s"]), "", None))
    base = d["plain_query_base_s"]
    figs.append(Figure("derived", "a query naming no derived relation" +
                       (": this build / base build" if base else ""),
                       "%s / %s" % (_s(d["plain_query_s"]), _s(base)) if base
                       else _s(d["plain_query_s"]), "", None))
    if "plain_cold_ratio" in d:  # the lazy path's cost, one build (VIGIL_DERIVED=off)
        figs.append(Figure("derived", "a query naming no derived relation, derived relations "
                           "offered / not (VIGIL_DERIVED=off): no cache; warm cache",
                           "%s / %s (%.2fx, CPU %.2fx); %s / %s (%.2fx, CPU %.2fx)" % (
                               _s(d["plain_cold_s"]), _s(d["plain_cold_underived_s"]),
                               d["plain_cold_ratio"], d["plain_cold_cpu_ratio"],
                               _s(d["plain_warm_s"]), _s(d["plain_warm_underived_s"]),
                               d["plain_warm_ratio"], d["plain_warm_cpu_ratio"]),
                           "", None))
    return figs


def pg_fork(out):
    p = _load(out, "pg_fork.json")
    c, q = p["connect_ms"], p["psql_ms"]
    return [Figure("pg-fork", "PostgreSQL connection time, server recorded / unrecorded "
                   "(pgbench -C)", "%.2f / %.2f ms (%+.2f ms)" % (
                       c["recorded"], c["unrecorded"], p["connect_extra_ms"]), "", None),
            Figure("pg-fork", "psql -c 'select 1' run, server recorded / unrecorded",
                   "%.1f / %.1f ms (%+.1f ms)" % (q["recorded"], q["unrecorded"],
                                                  p["psql_extra_ms"]), "", None),
            Figure("pg-fork", "vigil net split on the PostgreSQL trace",
                   "%.2f s, %d events, %d networks" % (p["split_s"], p["split_events"],
                                                       p["split_networks"]), "", None)]
def query_pg(out):
    p = _load(out, "query_pg.json")
    figs = [Figure("query-pg", "vigil store + --index, %d events" % p["events"],
                   "%s + %s" % (_s(p["store_s"]), _s(p["index_s"])), "", None)]
    for q in p["queries"]:
        figs.append(Figure("query-pg", "%s: trace / compiled to PostgreSQL / hand-written SQL"
                           % q["name"], "%s / %s / %s" % (_s(q["trace_s"]), _s(q["compiled_s"]),
                                                         _s(q["by_hand_s"])),
                           "answers equal", q["equal"]))
    return figs


def ui(out):
    u = _load(out, "ui.json")
    med = lambda v: sorted(v)[len(v) // 2]
    ev = "%.0fM" % (u["events"] / 1e6) if u["events"] >= 1e6 else "%dk" % (u["events"] // 1000)
    return [
        Figure("ui", "vigil ui, %s events: server up (trace read, timeline built)" % ev,
               _s(u["server_ready_s"]), "", None),
        Figure("ui", "vigil ui: first paint of the timeline after the server is up",
               "%.0f ms" % u["first_paint_ms"], "under 1 s", u["first_paint_ms"] < 1000),
        Figure("ui", "vigil ui: zoom / pan step, median (max)", "%.1f (%.1f) / %.1f (%.1f) ms" % (
            med(u["zoom_ms"]), max(u["zoom_ms"]), med(u["pan_ms"]), max(u["pan_ms"])),
            "each under 100 ms", max(u["zoom_ms"] + u["pan_ms"]) < 100),
        Figure("ui", "vigil ui: memory, server peak RSS / page JS heap", "%.0f / %.1f MiB" % (
            u["server_hwm_bytes"] / 2**20, u["js_heap_bytes"] / 2**20), "", None),
    ]


def ui_models(out):
    u = _load(out, "ui_models.json")
    return [
        Figure("ui-models", "vigil ui model workbench, %d event types and %d transitions: layout "
               "(cose-bilkent by groups; peer: cytoscape's CoSE over the whole graph)" % (
                   u["event_types"], u["transitions"]),
               "%.0f ms (peer %.0f ms, ratio %.3f; %.2f of the budget)" % (
                   u["layout_ms"], u["cose_ms"], u["layout_ms"] / u["cose_ms"], u["layout_ms"] / 2000),
               "under 2 s", u["layout_ms"] < 2000),
        Figure("ui-models", "vigil ui model workbench: graph made, laid out and placed / its first frame",
               "%.0f / %.0f ms" % (u.get("graph_ms", 0), u.get("first_frame_ms", 0)), "", None),
        Figure("ui-models", "vigil ui model workbench: page ready / first row chosen (CDF drawn)",
               "%.0f / %.0f ms" % (u["ready_ms"], u["choose_ms"]), "", None),
    ]


def ui_nets(out):
    u = _load(out, "ui_nets.json")
    med = lambda v: sorted(v)[len(v) // 2]
    p95 = lambda v: sorted(v)[int(len(v) * 0.95)]
    return [
        Figure("ui-nets", "vigil ui network browser, %d networks: server up / list drawn after "
               "navigation" % u["networks"], "%.1f s / %.0f ms" % (u["server_ready_s"], u["ready_ms"]), "", None),
        Figure("ui-nets", "vigil ui network browser: a scroll step until its second frame, median "
               "(p95); peer: every row an element", "%.1f (%.1f) ms; peer %.1f (%.1f) ms, made in %.0f ms" % (
                   med(u["scroll_ms"]), p95(u["scroll_ms"]), med(u["peer_scroll_ms"]), p95(u["peer_scroll_ms"]),
                   u["peer_build_ms"]),
               "median within two frames (50 ms)", med(u["scroll_ms"]) < 50),
    ]
