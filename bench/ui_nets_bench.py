#!/usr/bin/env python3
"""bench/ui_nets_bench.py BUILD_DIR: vigil ui's network browser over 100,000 networks
(issue 25: "a virtualised list that scrolls 100,000 networks smoothly").

Writes a folder as vigil net split writes it (BENCH_UI_NETS networks, default 100,000;
VIGIL_BENCH_SMOKE=1: 2,000): each network a client's request to one of 40 servers on 8
hosts and its reply (two threads, four vertices, two messages), response times drawn by a
seeded generator; serves it with `vigil ui DIR --port 0` and in Debian's chromium
(bench/ui_nets_page.cjs) measures navigation to the list drawn (histogram, sequences,
first rows), then 300 scroll steps (smoke: 40) of the list (small steps and long jumps), each until
its next frame is drawn; as the peer, in the same page, the same rows as plain elements
of one list (no virtualisation): the time to make them and its scroll steps.
Writes BENCH_OUT/ui_nets.json. Exit 1 when the page logged errors or lists another count.
"""
import json
import os
import random
import shutil
import sys
import tempfile

import ui_serve


def say(msg):
    print("[ui-nets-bench] " + msg, file=sys.stderr, flush=True)


def write_nets(d, n, seed=25):
    rnd = random.Random(seed)
    t = 1_700_000_000_000_000_000
    for i in range(1, n + 1):
        srv = rnd.randrange(40)
        host = "host%d" % (srv % 8)
        resp = int(rnd.lognormvariate(13, 1.2)) + 2000
        t += rnd.randint(10_000, 2_000_000)
        th = [{"id": 0, "host": "client", "pid": 100, "tid": 100 + i % 7, "program": "load", "name": "load"},
              {"id": 1, "host": host, "pid": 1000 + srv, "tid": 2000 + srv, "program": "srv%02d" % srv,
               "name": "worker"}]
        v = [{"id": 0, "kind": "send", "thread": 0, "ts": t, "off": 0, "len": 120, "matched": True, "input": True,
              "local": "10.0.0.1:5000", "remote": "10.0.1.%d:80" % srv},
             {"id": 1, "kind": "recv", "thread": 1, "ts": t + resp // 4, "off": 0, "len": 120, "matched": True,
              "local": "10.0.1.%d:80" % srv, "remote": "10.0.0.1:5000"},
             {"id": 2, "kind": "send", "thread": 1, "ts": t + resp * 3 // 4, "off": 0, "len": 900, "matched": True,
              "local": "10.0.1.%d:80" % srv, "remote": "10.0.0.1:5000"},
             {"id": 3, "kind": "recv", "thread": 0, "ts": t + resp, "off": 0, "len": 900, "matched": True,
              "local": "10.0.0.1:5000", "remote": "10.0.1.%d:80" % srv}]
        for x in v:
            x.update(host=th[x["thread"]]["host"], pid=th[x["thread"]]["pid"], tid=th[x["thread"]]["tid"],
                     program=th[x["thread"]]["program"])
        e = [{"kind": "message", "from": 0, "to": 1, "bytes": 120, "cross_host": True, "send_off": 0, "recv_off": 0},
             {"kind": "thread", "from": 1, "to": 2},
             {"kind": "message", "from": 2, "to": 3, "bytes": 900, "cross_host": True, "send_off": 0, "recv_off": 0},
             {"kind": "thread", "from": 0, "to": 3}]
        net = {"network": i, "input": 0, "start_ns": t, "end_ns": t + resp, "response_ns": resp,
               "threads": th, "vertices": v, "edges": e, "unmatched": []}
        with open(os.path.join(d, "net-%06d.json" % i), "w") as f:
            json.dump(net, f, separators=(",", ":"))
    with open(os.path.join(d, "index.json"), "w") as f:
        json.dump({"networks_count": n}, f)


def main():
    ready = ui_serve.prepare(say, "ui/analysis.js")
    if not ready:
        return 2
    build, smoke, out = ready
    n = int(os.environ.get("BENCH_UI_NETS", 2000 if smoke else 100000))
    tmp = tempfile.mkdtemp(prefix="vigil-uinets-")
    ui = None
    try:
        nets = os.path.join(tmp, "nets")
        os.mkdir(nets)
        write_nets(nets, n)
        say("%d networks written" % n)
        started = ui_serve.start(build, [nets], say)
        if not started:
            return 1
        ui, url, _, ready_s = started
        page = ui_serve.page(build, "ui_nets_page.cjs", url, os.path.join(tmp, "profile"), str(40 if smoke else 300))
        res = {"networks": n, "server_ready_s": ready_s, **page}
        ui_serve.save(out, "ui_nets.json", res)
        med = lambda v: sorted(v)[len(v) // 2]
        p95 = lambda v: sorted(v)[int(len(v) * 0.95)]
        print("vigil ui network browser, %d networks: server up in %.2f s; list drawn %.0f ms after navigation "
              "(/api/nets %.1f MiB); scroll step to its frame median %.1f ms, p95 %.1f ms, max %.1f ms, %d rows in the page; "
              "peer (all rows as elements): made in %.0f ms, scroll step median %.1f ms, p95 %.1f ms (ratio of medians %.2f)"
              % (n, ready_s, page["ready_ms"], page["api_bytes"] / 2**20, med(page["scroll_ms"]), p95(page["scroll_ms"]),
                 max(page["scroll_ms"]), page["rows_in_page"], page["peer_build_ms"], med(page["peer_scroll_ms"]),
                 p95(page["peer_scroll_ms"]), med(page["scroll_ms"]) / med(page["peer_scroll_ms"])))
        if page["errors"] or page["listed"] != n:
            say("errors, or not the folder's networks: %s" % {k: page[k] for k in ("errors", "listed")})
            return 1
        return 0
    finally:
        ui_serve.stop(ui)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
