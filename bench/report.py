#!/usr/bin/python3
"""bench/report.py RUNS.jsonl RESULTS.json KEY=VALUE...: medians of bench/run.sh's runs.

Prints a markdown table and the budget verdicts on stdout, writes the summary as JSON.
The KEY=VALUE pairs describe the environment of the run (numbers stay numbers).
"""
import json
import statistics
import sys

TOOLS = ("vigil", "lttng-ust")
KINDS = (
    ("baseline", "empty loop (no tracer)"),
    ("off", "disabled, recording off"),
    ("disabled", "disabled"),
    ("enabled-1t", "enabled"),
    ("enabled-2t", "enabled"),
    ("burst", "enabled, one burst"),
)


def summarize(runs):
    s = {
        "runs": len(runs),
        "threads": runs[0]["threads"],
        "events_per_thread": runs[0]["events_per_thread"],
        "ns_per_event": statistics.median(r["ns_per_event"] for r in runs),
        "ns_per_event_min": min(r["ns_per_event"] for r in runs),
        "ns_per_event_max": max(r["ns_per_event"] for r in runs),
        "events_per_s": statistics.median(r["events_per_s"] for r in runs),
        "user_ns_per_event": statistics.median(r["user_ns_per_event"] for r in runs),
        "sys_ns_per_event": statistics.median(r["sys_ns_per_event"] for r in runs),
        "faults_per_kevent": statistics.median(r["faults_per_kevent"] for r in runs),
        # Off the recording threads: the tool's other threads in the process (vigil's
        # worker), plus LTTng's consumer daemon.
        "helper_cpu_ns_per_event": statistics.median(
            max(r["process_cpu_ns_per_event"] - r["user_ns_per_event"] -
                r["sys_ns_per_event"], 0.0) + r.get("consumer_cpu_ns_per_event", 0.0)
            for r in runs),
    }
    s["off_cpu_ns_per_event"] = max(
        s["ns_per_event"] - s["user_ns_per_event"] - s["sys_ns_per_event"], 0.0)
    if "found" in runs[0]:
        unreadable = sum(1 for r in runs if r["found"] < 0)
        s["events_written"] = sum(r["events_written"] for r in runs)
        s["events_found"] = sum(r["found"] for r in runs if r["found"] >= 0)
        s["events_lost"] = sum(r["lost"] for r in runs if r["found"] >= 0)
        s["runs_with_loss"] = sum(1 for r in runs if r["found"] >= 0 and r["lost"] != 0)
        s["unreadable_traces"] = unreadable
        s["tracer_discarded"] = sum(max(r["tracer_discarded"], 0) for r in runs)
        sized = [r["trace_bytes"] / r["found"] for r in runs
                 if r.get("trace_bytes") and r["found"] > 0]
        if sized:
            # Every file of the trace (packet headers, unused packet space, metadata,
            # indexes) over the events in it, warm-up included.
            s["trace_bytes_per_event"] = statistics.median(sized)
        if "dump_found" in runs[0]:
            # vigil's own reader, next to babeltrace2: both must see every event.
            s["vigil_dump_found"] = sum(r["dump_found"] for r in runs)
            s["vigil_dump_unreadable"] = sum(1 for r in runs if r["dump_found"] < 0)
            s["vigil_dump_agrees"] = all(
                r["dump_found"] == r["found"] and r["dump_damaged"] == 0 for r in runs)
    return s


def fmt_bytes(s):
    """Trace bytes per event of a recorded mode, or '-'."""
    return "%.2f" % s["trace_bytes_per_event"] if s and "trace_bytes_per_event" in s else "-"


def fmt_ns(x):
    return "%.2f" % x if x < 10 else "%.1f" % x


def fmt_rate(x):
    return "%.1fM" % (x / 1e6) if x < 1e9 else "%.2fG" % (x / 1e9)


def fmt_lost(s):
    if s is None:
        return "-"
    if "events_lost" not in s:
        return ""
    text = "%d of %d" % (s["events_lost"], s["events_written"])
    if s["unreadable_traces"]:
        text += " (%d unreadable)" % s["unreadable_traces"]
    return text


def main():
    runs_path, out_path = sys.argv[1:3]
    env = {}
    for arg in sys.argv[3:]:
        key, _, value = arg.partition("=")
        try:
            env[key] = json.loads(value) if value[:1].isdigit() else value
        except ValueError:
            env[key] = value
    runs = [json.loads(line) for line in open(runs_path) if line.strip()]
    summary = {"environment": env, "modes": {}, "callgrind": {}}
    for kind, _ in KINDS:
        for tool in TOOLS:
            sel = [r for r in runs if r.get("kind") == kind and r["tool"] == tool]
            if sel:
                summary["modes"].setdefault(kind, {})[tool] = summarize(sel)
    for r in runs:
        if r.get("kind", "").startswith("callgrind-"):
            summary["callgrind"].setdefault(r["kind"][len("callgrind-"):], {})[r["tool"]] = {
                "events": r["events"],
                "instructions": r["instructions"],
                "instructions_per_event": r["instructions"] / r["events"],
            }

    print("vigil vs LTTng-UST, same loop of events with two int64 fields, cpus %s, "
          "median of %d runs (burst: of its runs); %s, %d cpus, kernel %s, load average "
          "%.2f at start, %.2f at end\n" % (
              env["cpus"], env["reps"], env["cpu"], env["nproc"], env["kernel"],
              env["loadavg_start"], env["loadavg_end"]))
    print("| mode | threads | events/thread | vigil ns/event | LTTng-UST ns/event | "
          "vigil/LTTng | vigil bytes/event | LTTng-UST bytes/event | vigil events/s | "
          "LTTng-UST events/s | vigil lost | LTTng-UST lost |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind, label in KINDS:
        m = summary["modes"].get(kind)
        if not m:
            continue
        v, lt = m.get("vigil"), m.get("lttng-ust")
        any_s = v or lt
        ratio = "%.3f" % (v["ns_per_event"] / lt["ns_per_event"]) if v and lt else "-"
        if v and lt:
            m["ratio_vigil_to_lttng"] = v["ns_per_event"] / lt["ns_per_event"]
        print("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, any_s["threads"], any_s["events_per_thread"],
            fmt_ns(v["ns_per_event"]) if v else "-",
            fmt_ns(lt["ns_per_event"]) if lt else "-", ratio,
            fmt_bytes(v), fmt_bytes(lt),
            fmt_rate(v["events_per_s"]) if v else "-",
            fmt_rate(lt["events_per_s"]) if lt else "-", fmt_lost(v), fmt_lost(lt)))

    print("\nwhere the time goes (medians; getrusage of the timed loop; helper: vigil's "
          "worker thread, LTTng's consumer daemon):\n")
    print("| mode | threads | tool | ns/event | user | system | waiting | "
          "page faults/1000 events | helper CPU ns/event |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for kind, label in KINDS:
        if not kind.startswith(("enabled", "burst")):
            continue
        for tool in TOOLS:
            t = summary["modes"].get(kind, {}).get(tool)
            if t:
                print("| %s | %d | %s | %s | %s | %s | %s | %.2f | %s |" % (
                    label, t["threads"], tool, fmt_ns(t["ns_per_event"]),
                    fmt_ns(t["user_ns_per_event"]), fmt_ns(t["sys_ns_per_event"]),
                    fmt_ns(t["off_cpu_ns_per_event"]), t["faults_per_kevent"],
                    fmt_ns(t["helper_cpu_ns_per_event"])))

    cg = summary["callgrind"]
    if cg:
        print("\ninstructions per event (callgrind, bench_loop and callees):\n")
        # BENCH_BEFORE: another build's vigil counted in the same run
        tools = TOOLS + (("vigil-before",) if any("vigil-before" in cg[m] for m in cg) else ())
        names = {"vigil": "vigil", "lttng-ust": "LTTng-UST", "vigil-before": "vigil (BENCH_BEFORE)"}
        print("| mode | %s |" % " | ".join(names[t] for t in tools))
        print("|---|%s" % ("---:|" * len(tools)))
        for mode in ("disabled", "enabled"):
            if mode in cg:
                row = [("%.1f" % cg[mode][t]["instructions_per_event"]) if t in cg[mode]
                       else "-" for t in tools]
                print("| %s | %s |" % (mode, " | ".join(row)))

    verdicts = []
    modes = summary["modes"]

    def verdict(name, ok, text):
        verdicts.append({"budget": name, "pass": ok, "measured": text})
        print("%s  %s: %s" % ("PASS" if ok else "MISS", name, text))

    print("\nbudgets (see bench/README.md):")
    d = modes.get("disabled", {}).get("vigil")
    b = modes.get("baseline", {}).get("vigil")
    if d:
        extra = ""
        if b:
            extra = " (empty loop %s ns: %+.2f ns for the check)" % (
                fmt_ns(b["ns_per_event"]), d["ns_per_event"] - b["ns_per_event"])
        verdict("disabled sensor under 1 ns", d["ns_per_event"] < 1.0,
                "%s ns/event%s" % (fmt_ns(d["ns_per_event"]), extra))
    for kind in ("enabled-1t", "enabled-2t"):
        m = modes.get(kind, {})
        if "vigil" in m and "lttng-ust" in m:
            r = m["vigil"]["ns_per_event"] / m["lttng-ust"]["ns_per_event"]
            verdict("enabled at most 1/4 of LTTng-UST (%s)" % kind, r <= 0.25,
                    "%s vs %s ns/event, ratio %.3f" % (
                        fmt_ns(m["vigil"]["ns_per_event"]),
                        fmt_ns(m["lttng-ust"]["ns_per_event"]), r))
    for kind in ("enabled-1t", "enabled-2t", "burst"):
        m = modes.get(kind, {})
        vb = m.get("vigil", {}).get("trace_bytes_per_event")
        lb = m.get("lttng-ust", {}).get("trace_bytes_per_event")
        if vb and lb:
            verdict("trace bytes per event at most LTTng-UST's (%s)" % kind, vb <= lb,
                    "%.2f vs %.2f bytes/event" % (vb, lb))
    bv = modes.get("burst", {}).get("vigil")
    if bv:
        ok = bv["events_lost"] == 0 and bv["unreadable_traces"] == 0 and \
            bv["tracer_discarded"] == 0
        agree = ""
        if bv.get("vigil_dump_unreadable"):
            agree = "; vigil dump could not count %d of the traces" % (
                bv["vigil_dump_unreadable"])
        elif "vigil_dump_agrees" in bv:
            agree = "; vigil dump %s babeltrace2" % (
                "agrees with" if bv["vigil_dump_agrees"] else "DISAGREES with")
            ok = ok and bv["vigil_dump_agrees"]
        verdict("no event lost in a burst of %d events" % bv["events_per_thread"], ok,
                "%d lost, %d discarded by the runtime, over %d runs%s" % (
                    bv["events_lost"], bv["tracer_discarded"], bv["runs"], agree))
    summary["budgets"] = verdicts
    with open(out_path, "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    # The answers (events written = events read back by both readers) are what a smoke
    # run checks; the timings never.
    wrong = answer_errors(modes)
    for w in wrong:
        print("bench: WRONG ANSWER: " + w, file=sys.stderr)
    if wrong and str(env.get("smoke")) == "1":
        sys.exit(1)


def answer_errors(modes):
    """What vigil's traces got wrong: events lost, unreadable, or the readers disagree."""
    wrong = []
    for kind, m in modes.items():
        v = m.get("vigil")
        if not v or "events_lost" not in v:
            continue
        if v["unreadable_traces"] or v["events_lost"] or v["tracer_discarded"]:
            wrong.append("%s: %d of %d events lost, %d traces unreadable, %d discarded" % (
                kind, v["events_lost"], v["events_written"], v["unreadable_traces"],
                v["tracer_discarded"]))
        if v.get("vigil_dump_unreadable") or v.get("vigil_dump_agrees") is False:
            wrong.append("%s: vigil dump counts %d events, babeltrace2 %d" % (
                kind, v.get("vigil_dump_found", -1), v["events_found"]))
    return wrong


if __name__ == "__main__":
    main()
