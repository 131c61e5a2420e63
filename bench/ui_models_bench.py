#!/usr/bin/env python3
"""bench/ui_models_bench.py BUILD_DIR: vigil ui's model workbench on a large model pair
(issue 25: "a model with 1,000 event types and 10,000 transitions lays out in under 2 s").

Writes two models (BENCH_UI_MODEL_EVENTS event types, default 1,000, in 25 source files;
BENCH_UI_MODEL_TRANS transitions, default 10,000, each event with the same number of
successors drawn by a seeded generator; the other run with a tenth of the transitions'
counts and times changed; VIGIL_BENCH_SMOKE=1: 100 and 1,000), serves them with
`vigil ui BASE OTHER --port 0`, and in Debian's chromium (bench/ui_models_page.cjs) measures
the time from navigation to the page ready (reports and graph loaded, laid out, drawn),
the layout alone (cose-bilkent, compound: events grouped by file, timed in the page with
performance.now() around layout.run()), and, as the peer on the same graph in the same
page, cytoscape's own CoSE layout; then the time to choose the first transition row
(highlight and CDF drawn). Writes BENCH_OUT/ui_models.json. Exit 1 when the page logged
errors or the graph is not the models'.
"""
import os
import random
import shutil
import sys
import tempfile

import ui_serve


def say(msg):
    print("[ui-models-bench] " + msg, file=sys.stderr, flush=True)


def bucket(ns):
    if ns < 64:
        return ns
    octave = ns.bit_length() - 1
    return (octave - 6 + 1) * 64 + ((ns >> (octave - 6)) & 63)


def write_models(path_a, path_b, nev, ntr, seed=25):
    rnd = random.Random(seed)
    events = ["src/mod%02d.c:%d" % (i % 25, 100 + i) for i in range(nev)]
    per = max(1, ntr // nev)
    trans = {}
    for i in range(nev):
        succ = rnd.sample(range(nev), per)
        for j in succ:
            trans[(i + 1, j + 1)] = (rnd.randint(20, 2000), rnd.choice([800, 5000, 40000, 300000]))
    changed = set(rnd.sample(sorted(trans), max(1, len(trans) // 10)))
    for path, other in ((path_a, False), (path_b, True)):
        tr = {}
        for k, (n, t) in trans.items():
            if other and k in changed:
                n, t = n * rnd.choice([2, 3]), t * 2
            tr[k] = (n, t)
        counts = [0] * (nev + 1)
        for (i, j), (n, t) in tr.items():
            counts[j] += n
        with open(path, "w") as f:
            f.write("vigil-model 1\nsource ui_models_bench\n")
            for i, site in enumerate(events, 1):
                f.write('event %d %d %s "step %d"\n' % (i, max(1, counts[i]), site, i))
            for (i, j), (n, t) in sorted(tr.items()):
                f.write("transition %d %d %d %d %d:%d\n" % (i, j, n, n * t, bucket(t), n))
    return len(trans)


def main():
    ready = ui_serve.prepare(say, "ui/analysis.js")
    if not ready:
        return 2
    build, smoke, out = ready
    nev = int(os.environ.get("BENCH_UI_MODEL_EVENTS", 100 if smoke else 1000))
    ntr = int(os.environ.get("BENCH_UI_MODEL_TRANS", 1000 if smoke else 10000))
    tmp = tempfile.mkdtemp(prefix="vigil-uimodels-")
    ui = None
    try:
        a, b = os.path.join(tmp, "base.vgm"), os.path.join(tmp, "other.vgm")
        ntr = write_models(a, b, nev, ntr)
        say("%d event types, %d transitions" % (nev, ntr))
        started = ui_serve.start(build, [a, b], say)
        if not started:
            return 1
        ui, url, _, ready_s = started
        page = ui_serve.page(build, "ui_models_page.cjs", url, os.path.join(tmp, "profile"))
        res = {"event_types": nev, "transitions": ntr, "server_ready_s": ready_s, **page,
               "layout_budget_ratio": page["layout_ms"] / 2000.0}
        ui_serve.save(out, "ui_models.json", res)
        print("vigil ui model workbench, %d event types, %d transitions: server up in %.2f s; page ready in %.0f ms; "
              "layout cose-bilkent by groups %.0f ms (%.2f of the 2 s budget), cytoscape's cose (peer) %.0f ms (ratio %.3f); "
              "graph made, laid out and placed %.0f ms, first frame %.0f ms (%d quiet transitions not drawn); "
              "first row chosen in %.0f ms; JS heap %.1f MiB"
              % (nev, ntr, ready_s, page["ready_ms"], page["layout_ms"], page["layout_ms"] / 2000.0, page["cose_ms"],
                 page["layout_ms"] / page["cose_ms"], page["graph_ms"], page["first_frame_ms"], page["quiet_edges"],
                 page["choose_ms"], page["js_heap_bytes"] / 2**20))
        if page["errors"] or page["nodes"] != nev or page["edges"] != ntr:
            say("errors, or not the models' graph: %s" % {k: page[k] for k in ("errors", "nodes", "edges")})
            return 1
        return 0
    finally:
        ui_serve.stop(ui)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
