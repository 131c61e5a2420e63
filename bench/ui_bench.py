#!/usr/bin/env python3
"""bench/ui_bench.py BUILD_DIR: vigil ui on a large trace (issue 22, "Performance").

Records BENCH_UI_EVENTS events (default 10,000,000; VIGIL_BENCH_SMOKE=1: 20,000) of
bench/query-subject under vigil record, starts `vigil ui TRACE --port 0` and measures: the
time until it serves (trace read, relations and timeline built), its memory (VmHWM), then,
in Debian's chromium (bench/ui_page.cjs, playwright-core from build/ui-npm), the time from
navigation to the timeline's first paint, and the latency of zoom and pan steps, each from
the input event to the frame drawn with the server's answer (Performance API), and the
page's JS heap. Budgets (the issue's): first paint under 1 s after the server is up, each
step under 100 ms. No peer runs here (no trace viewer is installable from Debian): the
figures are quoted, not ratios. Writes BENCH_OUT/ui.json. Exit 1 when the page logged
errors or drew no rows.
"""
import os
import shutil
import sys
import tempfile

import benchlib
import ui_serve


def say(msg):
    print("[ui-bench] " + msg, file=sys.stderr, flush=True)


def vm(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    ready = ui_serve.prepare(say, "bench/query-subject", "ui/app.js")
    if not ready:
        return 2
    build, smoke, out = ready
    events = int(os.environ.get("BENCH_UI_EVENTS", 20000 if smoke else 10000000))
    steps = 3 if smoke else 10
    tmp = tempfile.mkdtemp(prefix="vigil-uibench-")
    ui = None
    try:
        trace = os.path.join(tmp, "trace")
        benchlib.record_subject(build, trace, events, threads=4)
        started = ui_serve.start(build, [trace], say)
        if not started:
            return 1
        ui, url, line, ready_s = started
        say("%s after %.1f s: %s" % (url, ready_s, line.strip()))
        page = ui_serve.page(build, "ui_page.cjs", url, os.path.join(tmp, "profile"), str(steps))
        res = {"events": events, "server_ready_s": ready_s, "server_rss_bytes": vm(ui.pid, "VmRSS"),
               "server_hwm_bytes": vm(ui.pid, "VmHWM"), **page}
        ui_serve.save(out, "ui.json", res)
        med = lambda v: sorted(v)[len(v) // 2] if v else float("nan")
        print("vigil ui, %d events: server up in %.1f s, %.0f MiB (peak %.0f MiB); first paint %.0f ms; "
              "zoom step median %.1f ms (max %.1f), pan step median %.1f ms (max %.1f); page JS heap %.1f MiB"
              % (events, ready_s, res["server_rss_bytes"] / 2**20, res["server_hwm_bytes"] / 2**20,
                 page["first_paint_ms"], med(page["zoom_ms"]), max(page["zoom_ms"]), med(page["pan_ms"]),
                 max(page["pan_ms"]), page["js_heap_bytes"] / 2**20))
        if page["errors"] or page["rows"] < 4:
            say("the page logged errors or drew no rows: %s" % page)
            return 1
        return 0
    finally:
        ui_serve.stop(ui)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
