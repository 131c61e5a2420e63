"""Derived relations (docs/tquel.md "Derived relations") against the outputs they replace:
Network, Message, NetRunning and NetWaiting against `vigil net split` (its index and
network files) and `vigil net report --json`; Violation against `vigil check --json`;
Deadlock against `vigil check --deadlocks --json`; queries joining two analyses against
answers computed here from those outputs. Run: derived_test.py NAME."""
import collections
import glob
import json
import os
import stat
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from vigil_testlib import (VIGIL, Failure, check, main, record_deadlock, redis_script,  # noqa: E402
                           run, tmpdir)

BIN = os.environ.get("VIGIL_BIN", "build/bin")
MKTRACE = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--mktrace" else \
    os.path.join(BIN, "check_mktrace")


def query(trace, text, rc=0):
    p = run([VIGIL, "query", trace, "--format", "json", "-e", text], check_rc=rc)
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def split(trace):
    out = os.path.join(tmpdir("derived-nets"), "nets")
    run([VIGIL, "net", "split", trace, "-o", out], check_rc=0)
    with open(os.path.join(out, "index.json")) as f:
        index = json.load(f)
    nets = {}
    for path in glob.glob(os.path.join(out, "net-*.json")):
        with open(path) as f:
            g = json.load(f)
        nets[g["network"]] = g
    rep = json.loads(run([VIGIL, "net", "report", "--json", out], check_rc=0).stdout)
    return index, nets, rep


def check_networks(trace):
    """Every derived net relation equals what vigil net split wrote; returns the nets."""
    index, nets, rep = split(trace)
    got = query(trace, "range of N is Network retrieve (N.all)")
    want = {n["network"]: n for n in index["networks"]}
    check(len(got) == len(want) and len(want) > 0,
          f"{len(got)} Network tuples, {len(want)} networks split")
    reports = {n["network"]: n for n in rep["networks"]}
    for t in got:
        v = t["values"]
        n, r = want[v["id"]], reports[v["id"]]
        check((v["input"], v["program"], v["host"], v["threads"], v["messages"],
               v["response"], t["from"]) ==
              (n["input"], n["program"], n["host"], n["threads"], n["messages"],
               n["response_ns"], n["start_ns"]), f"network {v['id']}: {t} vs {n}")
        check((v["servers"], v["bytes"], v["hosts"]) ==
              (r["servers"], r["bytes"], r["machines"]), f"network {v['id']}: {t} vs {r}")
        check(t["to"] - t["from"] == v["response"], f"network {v['id']}: valid time")
    # messages: one tuple per message edge of each network file
    want_m = collections.Counter()
    for g in nets.values():
        vs = g["vertices"]
        for e in g["edges"]:
            if e["kind"] != "message":
                continue
            a, b = vs[e["from"]], vs[e["to"]]
            want_m[(g["network"], a["ts"], max(a["ts"], b["ts"]), e["bytes"],
                    e.get("send_off"), e.get("recv_off"))] += 1
    got_m = collections.Counter(
        (t["values"]["network"], t["from"], t["to"], t["values"]["bytes"],
         t["values"]["send_off"], t["values"]["recv_off"])
        for t in query(trace, "range of M is Message retrieve (M.all)"))
    check(got_m == want_m and sum(want_m.values()) > 0,
          f"Message: {sum(got_m.values())} tuples, {sum(want_m.values())} message edges; "
          f"differ: {list((got_m - want_m).items())[:3]} / {list((want_m - got_m).items())[:3]}")
    # running and waiting: summed per network, the report's per-thread times
    for rel, key in (("NetRunning", "running_ms"), ("NetWaiting", "waiting_ms")):
        sums = collections.Counter()
        for t in query(trace, f"range of R is {rel} retrieve (R.network, R.thread)"):
            sums[t["values"]["network"]] += t["to"] - t["from"]
        for n, r in reports.items():
            want_ms = sum(th[key] for th in r["per_thread"])
            check(abs(sums[n] / 1e6 - want_ms) < 1e-5,
                  f"{rel} network {n}: {sums[n]} ns, report {want_ms} ms")
    return index, nets


def record_three_tier(requests, *layout):
    trace = os.path.join(tmpdir("derived-tt"), "t")
    run([VIGIL, "record", "-o", trace, *layout, "--", os.path.join(BIN, "three_tier"), "run",
         "--threads", "2", "--requests", str(requests)], check_rc=0)
    return trace


def test_three_tier():
    trace = record_three_tier(3)
    index, nets = check_networks(trace)
    # listed by vigil relations beside the primitive ones
    names = {"Network", "Message", "NetRunning", "NetWaiting", "Violation", "Deadlock",
             "LogEvent", "Transition", "ModelEvent", "ModelTransition"}
    for opts in ([], ["--derived"]):
        rels = [json.loads(x) for x in run([VIGIL, "relations", "--json", *opts, trace],
                                           check_rc=0).stdout.splitlines()]
        derived = {r["name"]: r for r in rels if "derived" in r}
        check(set(derived) == names, f"derived relations listed {opts}: {sorted(derived)}")
        want = len(index["networks"]) if opts else None
        check(derived["Network"]["tuples"] == want and
              [a["name"] for a in derived["Message"]["attributes"]][:3] ==
              ["network", "sender", "receiver"], f"listed Network {opts}: {derived['Network']}")
    # a join of two analyses, against the answer computed from the split's files: the
    # messages of each network whose input came from the client program, with the
    # network's response time
    got = collections.Counter(
        (t["values"]["network"], t["values"]["bytes"], t["values"]["response"]) for t in query(
            trace, "range of N is Network range of M is Message "
                   "retrieve (network = M.network, M.bytes, N.response) "
                   "where M.network = N.id and N.program = \"three_tier\""))
    want = collections.Counter()
    for n in index["networks"]:
        if n["program"] != "three_tier":
            continue
        for e in nets[n["network"]]["edges"]:
            if e["kind"] == "message":
                want[(n["network"], e["bytes"], n["response_ns"])] += 1
    check(got == want and want, f"join Network x Message: {got} vs {want}")
    # the same join answered from the relations cache (written even for this small trace):
    # a warm database reads the derived relations from the trace as a cold one does
    join = ("range of N is Network range of M is Message "
            "retrieve (M.network, M.bytes, N.response) where M.network = N.id")
    answers = []
    for outcome in ("cold", "warm"):
        p = run([VIGIL, "query", trace, "--format", "json", "--stats", "-e", join], check_rc=0,
                env=dict(os.environ, VIGIL_CACHE_MIN_EVENTS="0", VIGIL_CACHE="on"))
        check('"cache":"%s"' % outcome in p.stderr, f"cache {outcome}: {p.stderr[-300:]}")
        answers.append(sorted(p.stdout.splitlines()))
    nocache = sorted(run([VIGIL, "query", trace, "--format", "json", "-e", join], check_rc=0,
                         env=dict(os.environ, VIGIL_CACHE="off")).stdout.splitlines())
    check(answers[0] == answers[1] == nocache and nocache,
          f"derived join from the cache: {len(answers[1])} rows warm, {len(nocache)} without")
    # retrieve into, --into SQLite
    db = os.path.join(tmpdir("derived-into"), "o.db")
    run([VIGIL, "query", trace, "--into", db, "-e",
         "range of M is Message retrieve into Big (M.network, M.bytes) where M.bytes > 50 "
         "range of B is Big range of N is Network retrieve into J (N.id, B.bytes) "
         "where B.network = N.id"], check_rc=0)
    import sqlite3
    with sqlite3.connect(db) as con:
        got_j = sorted(con.execute("select * from J").fetchall())
    want_j = sorted((g["network"], e["bytes"]) for g in nets.values() for e in g["edges"]
                    if e["kind"] == "message" and e["bytes"] > 50)
    check([r[:2] for r in got_j] == want_j and want_j, f"--into: {len(got_j)} rows in J, "
                                                       f"{len(want_j)} expected")
    # the Python module (libvigilquery) ranges over them too
    sys.path.insert(0, os.path.join(os.environ.get("VIGIL_SRC", "."), "python"))
    os.environ["VIGIL_QUERY_LIB"] = os.path.join(BIN, "libvigilquery.so")
    import vigil  # noqa: E402
    rows = vigil.query(trace, "range of M is Message retrieve (M.network, M.bytes)")
    check(len(rows) == sum(1 for g in nets.values() for e in g["edges"]
                           if e["kind"] == "message"), f"python: {len(rows)} messages")


def test_redis():
    """redis-server from Debian with redis-benchmark, recorded unmodified."""
    made = redis_script(100, 2)
    if not made:
        print("skipped: redis-server and redis-tools not installed (scripts/install-deps.sh)")
        sys.exit(77)
    script = made[0]
    trace = os.path.join(tmpdir("derived-redis"), "t")
    run([VIGIL, "record", "-o", trace, "--", "sh", "-c", script], check_rc=0)
    index, _ = check_networks(trace)
    check(len(index["networks"]) >= 2, f"{len(index['networks'])} redis networks")


def redis_logging_script(d, requests, clients):
    """A shell script that starts Debian's redis-server on a free loopback port with its
    directory and its log file (verbose: a line per connection) in d, drives it with
    redis-benchmark, and ends it by its pid (SIGTERM: redis's own orderly shutdown);
    exits with redis-benchmark's status. None when redis is not installed."""
    import shutil
    import socket
    server, bench, cli = (shutil.which(p) for p in ("redis-server", "redis-benchmark",
                                                      "redis-cli"))
    if not (server and bench and cli):
        return None
    with socket.socket() as s_:
        s_.bind(("127.0.0.1", 0))
        port = s_.getsockname()[1]
    return f"""
{server} --port {port} --bind 127.0.0.1 --save '' --appendonly no --dir {d} \
    --logfile {d}/redis.log --loglevel verbose &
pid=$!
for i in $(seq 400); do {cli} -p {port} ping >/dev/null 2>&1 && break; sleep 0.05; done
{bench} -p {port} -n {requests} -c {clients} -t set,get,incr -q >/dev/null; rc=$?
kill $pid
wait $pid
exit $rc
"""


def test_redis_analyses():
    """Debian's redis-server and redis-benchmark recorded unmodified, the server's log file
    captured (VIGIL_LOG_FILES): Violation equals vigil check --json, LogEvent and
    Transition the model vigil model --from-trace writes, ModelEvent and ModelTransition
    the model vigil model writes of the recording, on that one trace."""
    d = tmpdir("derived-redis-an")
    script = redis_logging_script(d, 200, 3)
    if not script:
        print("skipped: redis-server and redis-tools not installed (scripts/install-deps.sh)")
        sys.exit(77)
    trace = os.path.join(d, "t")
    run([VIGIL, "record", "-o", trace, "--", "sh", "-c", script], check_rc=0,
        env={"VIGIL_LOG_FILES": os.path.join(d, "redis.log")})
    violations = compare_violations(trace, "redis")
    (events, transitions), (model_events, _) = compare_models(trace, "redis")
    # the model is the log models' (the server's own lines among its events), not the
    # trace's events. redis writes its log file through stdio, which is not captured
    # (docs/logcapture.md): what it writes itself is, its signal handler's line.
    formats = [t["values"]["format"] for t in
               query(trace, "range of E is ModelEvent retrieve (E.format)")]
    check(any("Received SIGTERM" in f for f in formats),
          f"no redis log line among {len(formats)} model events: {formats[:8]}")
    print(f"redis: {violations} violations, {events} log events, {transitions} transitions, "
          f"{model_events} model events")


def test_nginx_analyses():
    """Debian's nginx with Debian's configuration, asked for a page and a missing one by
    curl, recorded unmodified with its access and error logs captured (VIGIL_LOG_FILES:
    nginx writes them with write): Violation equals vigil check --json, the model
    relations the models vigil model writes, on that one trace; the access log's line
    is a model event counted once per request, the error log's once per missing page."""
    import shutil
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "net", "record"))
    import nginx_server
    curl = shutil.which("curl")
    if not (os.path.exists(nginx_server.NGINX) and curl):
        print("skipped: nginx and curl not installed (scripts/install-deps.sh)")
        sys.exit(77)
    d = tmpdir("derived-nginx")
    conf, port = nginx_server.make(d, {"index.html": b"<p>hello from nginx</p>\n"})
    url = f"http://127.0.0.1:{port}"
    n = 40
    script = f"""
{' '.join(f"'{a}'" for a in nginx_server.command(conf, d))} &
ok=0
for i in $(seq 400); do
  [ -s {d}/nginx.pid ] && {curl} -s -o /dev/null {url}/index.html && ok=1 && break; sleep 0.05
done
[ $ok = 1 ] || {{ echo nginx did not answer >&2; kill $!; wait; exit 1; }}
for i in $(seq {n}); do {curl} -s -o /dev/null {url}/index.html {url}/missing; done
kill -QUIT $(cat {d}/nginx.pid)
wait
"""
    trace = os.path.join(d, "t")
    run([VIGIL, "record", "-o", trace, "--", "sh", "-c", script], check_rc=0,
        env={"VIGIL_LOG_FILES": f"{d}/access.log:{d}/error.log"})
    violations = compare_violations(trace, "nginx")
    (events, transitions), (model_events, _) = compare_models(trace, "nginx")
    counts = collections.Counter()
    for t in query(trace, "range of E is ModelEvent retrieve (E.format, E.count)"):
        counts[t["values"]["format"]] += t["values"]["count"]
    # each request once (the first answered readiness probe, then 2 per round); each
    # missing page once in the error log
    missing = sum(c for f, c in counts.items() if "No such file or directory" in f)
    check(counts["<n> <n> <n>"] == 2 * n + 1 and missing == n,
          f"the access log's lines: {counts['<n> <n> <n>']} counted, {2 * n + 1} requests; "
          f"the error log's: {missing}, {n} missing pages; model events {dict(counts)}")
    print(f"nginx: {violations} violations, {events} log events, {transitions} transitions, "
          f"{model_events} model events")


def mktrace(scenario):
    d = os.path.join(tmpdir("derived-check"), scenario)
    run([MKTRACE, d, scenario], check_rc=0)
    return d


def compare_violations(trace, name):
    """Violation equals `vigil check --json` on trace, as multisets; returns how many."""
    p = run([VIGIL, "check", "--json", "--max", "0", trace])
    check(p.returncode in (0, 1), f"{name}: vigil check exited {p.returncode}: {p.stderr}")
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    want = collections.Counter(
        (v.get("valid_ts", v["ts"]), v["rule"], v["event"], v["message"], v["file"],
         v["offset"], tuple((e["kind"], e.get("name")) for e in v["entities"]))
        for v in lines if "rule" in v)
    got = collections.Counter(
        (t["at"], t["values"]["rule"], t["values"]["event"], t["values"]["message"],
         t["values"]["file"], t["values"]["offset"],
         tuple((t["values"][k], t["values"][e]) for k, e in
               (("kind1", "entity1"), ("kind2", "entity2")) if t["values"][k] is not None))
        for t in query(trace, "range of V is Violation retrieve (V.all)"))
    check(all(t["values"]["entity2"] is None for t in
              query(trace, "range of V is Violation retrieve (V.kind2, V.entity2)")
              if t["values"]["kind2"] is None), f"{name}: a missing entity is NULL")
    # an entity without a name prints as kind#id: compare kinds and names only
    norm = collections.Counter(
        (k[:6] + (tuple((kind, name if name and "#" not in name else None)
                        for kind, name in k[6]),), n) for k, n in got.items())
    want_n = collections.Counter(
        (k[:6] + (tuple((kind, name) for kind, name in k[6]),), n) for k, n in want.items())
    check(dict(norm) == dict(want_n),
          f"{name}: Violation {sum(got.values())} tuples, check {sum(want.values())}: "
          f"{list((norm - want_n).items())[:2]} vs {list((want_n - norm).items())[:2]}")
    return sum(want.values())


def test_violations():
    for scenario in ("rule1", "rule2", "rule3", "rule4", "rule5", "consistent"):
        n = compare_violations(mktrace(scenario), scenario)
        check(scenario == "consistent" or n, f"{scenario}: no violation to compare")


def test_join_violation_thread():
    """Two analyses joined (vigil check's and the model's): each violation with the log
    events of its thread at its instant, which is the violating event itself, so the
    answer is check --json's (rule, event) pairs."""
    for scenario in ("rule2", "rule5"):
        trace = mktrace(scenario)
        p = run([VIGIL, "check", "--json", "--max", "0", trace])
        want = collections.Counter((v["rule"], v["event"]) for v in
                                   map(json.loads, p.stdout.splitlines()) if "rule" in v)
        got = collections.Counter(
            (t["values"]["rule"], t["values"]["name"]) for t in query(
                trace, "range of V is Violation range of L is LogEvent "
                       "retrieve (V.rule, L.name) where V.thread = L.thread when V equal L"))
        check(got == want and want, f"{scenario}: Violation x LogEvent: {got} vs {want}")


def test_deadlock():
    """tests/check/deadlock_subject.c really deadlocks (killed once both threads wait):
    Deadlock against vigil check --deadlocks --json, step by step."""
    trace = os.path.join(tmpdir("derived-dl"), "t")
    tids, why = record_deadlock(os.path.join(BIN, "deadlock_subject"), trace)
    check(tids is not None, why)
    out = run([VIGIL, "check", "--deadlocks", "--json", trace]).stdout
    want = collections.Counter()
    for c in (json.loads(x)["cycle"] for x in out.splitlines() if '"cycle"' in x):
        for i, st in enumerate(c["steps"]):
            want[(c["ts"], i + 1, len(c["steps"]), st["thread"]["name"], st["lock"]["name"],
                  st["since_ts"], int(c["standing"]))] += 1
    got = collections.Counter(
        (t["at"], v["step"], v["steps"], v["thread"], v["lock"], v["since"], v["standing"])
        for t in query(trace, "range of D is Deadlock retrieve (D.all)")
        for v in [t["values"]])
    check(got == want and sum(want.values()) == 2, f"Deadlock {got} vs {want}")


def compare_models(trace, name):
    """LogEvent and Transition counted per name and pair equal the model vigil model
    --from-trace writes; ModelEvent and ModelTransition equal the model vigil model
    writes of the recording's model files. Returns the event and transition totals."""
    d = tmpdir("derived-model")
    run([VIGIL, "model", "--from-trace", trace, "-o", os.path.join(d, "t.vgm")], check_rc=0)
    run([VIGIL, "model", trace, "-o", os.path.join(d, "m.vgm")], check_rc=0)
    totals = []
    for file, rels in (("t.vgm", ("LogEvent", "Transition")),
                       ("m.vgm", ("ModelEvent", "ModelTransition"))):
        model = read_model(os.path.join(d, file))
        if rels[0] == "LogEvent":
            ev = collections.Counter(t["values"]["name"] for t in
                                     query(trace, "range of L is LogEvent retrieve (L.all)"))
            tr = collections.Counter((t["values"]["from_event"], t["values"]["to_event"])
                                     for t in query(trace,
                                                    "range of T is Transition retrieve (T.all)"))
        else:
            # summed per format, as read_model does: two sites may share a format
            ev, tr = collections.Counter(), collections.Counter()
            for t in query(trace, "range of E is ModelEvent retrieve (E.all)"):
                ev[t["values"]["format"]] += t["values"]["count"]
            for t in query(trace, "range of T is ModelTransition retrieve (T.all)"):
                tr[(t["values"]["from_format"], t["values"]["to_format"])] += \
                    t["values"]["count"]
        check(ev == model[0] and sum(ev.values()) > 0,
              f"{name} {rels[0]}: {ev} vs {model[0]}")
        check(tr == model[1], f"{name} {rels[1]}: {tr} vs {model[1]}")
        totals.append((sum(ev.values()), sum(tr.values())))
    return totals


def test_model():
    compare_models(record_three_tier(2), "three_tier")


def read_model(path):
    """Event counts by format and transition counts by (format, format) of a model file
    (docs/model.md: `event <E> <count> <site> <fmt-json>`, `transition <E1> <E2> <count>
    ...`)."""
    fmt, events, trans = {}, collections.Counter(), collections.Counter()
    with open(path) as f:
        for line in f:
            w = line.rstrip("\n").split(" ", 4)
            if w[0] == "event":
                fmt[w[1]] = json.loads(w[4])
                events[fmt[w[1]]] += int(w[2])
            elif w[0] == "transition":
                trans[(fmt[w[1]], fmt[w[2]])] += int(w[3])
    return events, trans


def render(vgd, trace, at_ns=None):
    """The scene at at_ns ns after the trace's first event (the start without one)."""
    at = "0%" if at_ns is None else "%.6fms" % (at_ns / 1e6)
    p = run([VIGIL, "display", "render", vgd, trace, "--at", at, "--json"], check_rc=0)
    return json.loads(p.stdout)


def test_display():
    """examples/three_tier/messages.vgd: at instants inside messages, the pointers drawn
    between thread icons are the Message tuples valid then (but those whose thread has
    no icon yet, counted as unplaced)."""
    trace = record_three_tier(3)
    vgd = os.path.join(os.environ.get("VIGIL_SRC", "."), "examples", "three_tier",
                       "messages.vgd")
    first = render(vgd, trace)["first"]
    msgs = [(t["from"], t["to"]) for t in
            query(trace, "range of M is Message retrieve (M.bytes)")]
    spans = sorted({(a, b) for a, b in msgs if b - a > 2})
    check(len(spans) >= 10, f"{len(spans)} messages in flight for some time")
    drawn = 0
    for a, b in spans[:: max(1, len(spans) // 10)]:
        at = (a + b) // 2
        scene = render(vgd, trace, at - first)
        got = sum(link["count"] for link in scene["links"] if link["relation"] == "Message")
        want = sum(1 for x, y in msgs if x <= scene["at"] < y)
        # a message to a thread not begun yet (the front's thread for a connection
        # accepted before it) has no receiver icon to point at: unplaced
        drawn += got
        check(got + scene["unplaced"] == want,
              f"at {scene['at']}: {got} Message pointers + {scene['unplaced']} unplaced, "
              f"{want} messages in flight")
        icons = {i["id"] for i in scene["icons"]}
        check(all(link["from"] in icons and link["to"] in icons for link in scene["links"]),
              "every pointer joins two thread icons")
    check(drawn > 0, "no message pointer drawn at any instant")


def test_errors():
    trace = mktrace("consistent")
    # no network events: the derived net relations are not there, with suggestions
    p = run([VIGIL, "query", trace, "-e", "range of M is Message retrieve (M.bytes)"])
    check(p.returncode == 2 and "no relation 'Message'" in p.stderr,
          f"Message on a trace without vg.net: {p.returncode} {p.stderr}")
    p = run([VIGIL, "query", trace, "-e", "range of V is Violaton retrieve (V.rule)"])
    check(p.returncode == 2 and "Violation" in p.stderr, f"suggestion: {p.stderr}")
    # VIGIL_DERIVED=off offers none (bench/derived_bench.py times the lazy path so); a
    # bad value: one line, and on
    v = "range of V is Violation retrieve (V.rule)"
    p = run([VIGIL, "query", trace, "-e", v], env={"VIGIL_DERIVED": "off"})
    check(p.returncode == 2 and "no relation 'Violation'" in p.stderr,
          f"VIGIL_DERIVED=off: {p.returncode} {p.stderr}")
    p = run([VIGIL, "query", trace, "-e", v], env={"VIGIL_DERIVED": "of"})
    check(p.returncode == 0 and p.stderr.splitlines() ==
          ["vigil: VIGIL_DERIVED='of' is not on or off: on"],
          f"VIGIL_DERIVED=of: {p.returncode} {p.stderr}")
    # vigil watch reads the trace in part: derived relations are refused, said so
    p = run([VIGIL, "watch", "-e", "range of V is Violation retrieve (V.rule)", "--replay",
             trace])
    check(p.returncode != 0 and "derived from the whole trace by vigil check" in p.stderr,
          f"watch over Violation: {p.returncode} {p.stderr}")


CACHED_QUERIES = {
    "net": "range of N is Network range of M is Message "
           "retrieve (M.network, M.bytes, M.sender, N.response) where M.network = N.id",
    "waits": "range of R is NetRunning range of W is NetWaiting retrieve (R.all)\n"
             "retrieve (W.all)",
    "steps": "range of L is LogEvent range of T is Transition "
             "retrieve (L.name, T.to_event, T.duration) where L.thread = T.thread "
             "when L equal begin of T",
    "model": "range of E is ModelEvent range of X is ModelTransition "
             "retrieve (E.all)\nretrieve (X.all)",
    "violation": "range of V is Violation retrieve (V.all)",
}


M64 = (1 << 64) - 1


def _mix(h):
    h ^= h >> 30
    h = h * 0xbf58476d1ce4e5b9 & M64
    h ^= h >> 27
    h = h * 0x94d049bb133111eb & M64
    return h ^ (h >> 31)


def _checksum(b):
    """vgc_checksum (src/relations/cache_internal.h) of the bytes b."""
    rows = len(b) // 32
    a, s = [0] * 4, [0] * 4
    for w in struct.iter_unpack("<4Q", b[:rows * 32]):
        for k in range(4):
            a[k] = (a[k] + w[k]) & M64
            s[k] = (s[k] + a[k]) & M64
    h = len(b)
    for c in b[rows * 32:]:
        h = (h * 31 + c) & M64
    for k in range(4):
        h = (_mix(h ^ ((k + 1 + a[k]) & M64)) + _mix((rows * (k + 1) + s[k] + k) & M64)) & M64
    return h


def forge_derived(path, what, attr=None):
    """Rewrites the cache file of derived relations at path (src/relations/cache_derived.c)
    with its checksum made right again after `what`: "text", the first value of the text
    or entity attribute `attr` naming no text (an offset before the first); "count", the
    first relation holding more tuples than the file has bytes. Only the structure's
    checks can tell it from a good file."""
    with open(path, "rb") as f:
        b = bytearray(f.read())
    at = 32
    word = lambda: struct.unpack_from("<Q", b, at)[0]  # noqa: E731
    pad = lambda n: (n + 7) // 8 * 8  # noqa: E731

    def text(off):  # a text by the file offset of its bytes
        n = struct.unpack_from("<Q", b, off - 8)[0]
        return bytes(b[off:off + n]).decode()
    at += 8 + pad(word())  # the key
    ntexts = word()
    at += 8
    for _ in range(ntexts):
        at += 8 + pad(word() + 1)
    at += 8  # the error
    nrels = word()
    at += 8
    for _ in range(nrels):
        at += 8  # the name
        kind, nattrs = struct.unpack_from("<2Q", b, at)
        at += 16
        schema = [struct.unpack_from("<3Q", b, at + 24 * i) for i in range(nattrs)]
        at += 24 * nattrs
        n = word()
        if what == "count":
            struct.pack_into("<Q", b, at, 1 << 40)
            break
        at += 8 + 8 * n + (8 * n + pad(n) if kind else 0)
        done = False
        for name, t, _ in schema:
            if word():  # NULL flags
                at += pad(n)
            at += 8
            if t in (3, 5) and n and text(name) == attr:  # a text, an entity's third word
                struct.pack_into("<Q", b, at + (16 if t == 5 else 0), 24)
                done = True
                break
            at += (24 if t == 5 else 8) * n
        if done:
            break
    else:
        raise Failure(f"{path}: nothing to forge ({what} {attr})")
    struct.pack_into("<Q", b, 24, _checksum(bytes(b[32:])))
    with open(path, "wb") as f:
        f.write(b)


def cached_query(trace, text, mode):
    """stdout, stderr (without the stats line), exit status and the stats of a query
    with the relations cache off, or on (written whatever the trace's size)."""
    env = {"VIGIL_CACHE": "off"} if mode == "off" else {"VIGIL_CACHE": "on",
                                                       "VIGIL_CACHE_MIN_EVENTS": "0"}
    p = run([VIGIL, "query", trace, "--format", "json", "--stats", "-e", text], env=env)
    stats = [json.loads(x)["stats"] for x in p.stderr.splitlines() if x.startswith('{"stats"')]
    rest = "\n".join(x for x in p.stderr.splitlines() if not x.startswith('{"stats"'))
    check(len(stats) == 1 or p.returncode == 2, f"no stats line: {p.stderr}")
    return p.stdout, rest, p.returncode, stats[0] if stats else {}


def same_three_ways(trace, name, text, cached=True, answer=True):
    """Uncached, cold and warm answers byte for byte; the warm one from the cache."""
    cache = os.path.join(trace, ".vigil-cache")
    for f in [cache] + glob.glob(cache + ".derived-*"):
        if os.path.exists(f):
            os.unlink(f)
    off = cached_query(trace, text, "off")
    cold = cached_query(trace, text, "on")
    warm = cached_query(trace, text, "on")
    check(off[0] or not answer, f"{name}: no answer")
    check(off[:3] == cold[:3] == warm[:3],
          f"{name}: uncached / cold / warm differ: rc {off[2]} {cold[2]} {warm[2]}; "
          f"stderr {off[1]!r} {cold[1]!r} {warm[1]!r}; stdout lines "
          f"{len(off[0].splitlines())} {len(cold[0].splitlines())} "
          f"{len(warm[0].splitlines())}")
    check(cold[3]["cache"] == "cold" and cold[3]["derived_cached"] == 0,
          f"{name}: cold {cold[3]}")
    if cached:
        check(warm[3]["cache"] == "warm" and warm[3]["derived_cached"] >= 1 and
              glob.glob(cache + ".derived-*"), f"{name}: warm {warm[3]}")
    return off


def images(trace):
    """The trace's process images as `vigil dump --stats --json` lists them."""
    p = run([VIGIL, "dump", "--stats", "--json", trace], check_rc=0)
    return [x for x in map(json.loads, p.stdout.splitlines()) if "image" in x]


def cache_keeps_derived(trace, layout):
    """Uncached = cold = warm; a stream touched or a model file appearing: stale."""
    for name in ("net", "waits", "steps", "model"):
        same_three_ways(trace, f"{name} {layout}", CACHED_QUERIES[name])
    # the trace changed (a stream touched): stale, analysed again, same answer
    stream = next(os.path.join(r, f) for r, _, fs in os.walk(trace) for f in fs
                  if r != trace and f != "metadata" and not f.startswith("."))
    want = cached_query(trace, CACHED_QUERIES["net"], "on")
    os.utime(stream, None)
    again = cached_query(trace, CACHED_QUERIES["net"], "on")
    check(again[3]["cache"] == "cold" and again[3]["derived_cached"] == 0 and
          again[:3] == want[:3], f"{layout}: after a stream changed: {again[3]}")
    # the new key's manifest written: the other analyses' files of the old key are gone
    left = sorted(os.path.basename(f) for f in glob.glob(trace + "/.vigil-cache.derived-*"))
    check(left == [".vigil-cache.derived-Network"],
          f"{layout}: files of the older key left beside the new one: {left}")
    again = cached_query(trace, CACHED_QUERIES["net"], "on")
    check(again[3]["derived_cached"] == 1 and again[:3] == want[:3],
          f"{layout}: after a stream changed, warm again: {again[3]}")
    # a model file appearing beside the images: ModelEvent is made of it, analysed again
    stale = cached_query(trace, CACHED_QUERIES["model"], "on")  # kept before the change
    check(stale[3]["derived_cached"] == 0, f"{layout}: model after a stream changed: {stale[3]}")
    model = cached_query(trace, CACHED_QUERIES["model"], "on")
    check(model[3]["derived_cached"] == 1, f"{layout}: model warm: {model[3]}")
    run([VIGIL, "model", "--from-trace", trace, "-o", os.path.join(trace, "logmodel-x.vgm")],
        check_rc=0)
    model2 = cached_query(trace, CACHED_QUERIES["model"], "on")
    check(model2[3]["derived_cached"] == 0, f"{layout}: a new model file: {model2[3]}")
    check(model2[:3] == cached_query(trace, CACHED_QUERIES["model"], "off")[:3],
          f"{layout}: a new model file: the answer differs from the uncached one")
    os.unlink(os.path.join(trace, "logmodel-x.vgm"))


def test_cache():
    """The relations cache keeps derived relations (docs/query.md "The relations cache"):
    a warm query naming them reads them instead of analysing the trace again, and
    answers byte for byte as without a cache, damage and failed analyses included; the
    trace changing, a model file appearing, a damaged or foreign file in the cache's
    place: analysed again."""
    # a directory per image, and the shared layout (vigil record's default: one folder
    # for every process, its pool files written by several processes in turn)
    for layout in (["--per-image"], []):
        trace = record_three_tier(3, *layout)
        shared = os.path.join(trace, "shared")
        check(os.path.isdir(shared) != bool(layout), f"{layout}: {os.listdir(trace)}")
        if not layout:  # the analyses span writers whose streams are in pool files
            check(any(f.startswith("pool-") for f in os.listdir(shared)) and
                  len(images(trace)) >= 3,
                  f"shared layout: {os.listdir(shared)}, {len(images(trace))} images")
        cache_keeps_derived(trace, layout)
    # a damaged file: one line, analysed again, the same answer, the file written anew
    derived = os.path.join(trace, ".vigil-cache.derived-Network")
    cached_query(trace, CACHED_QUERIES["net"], "on")  # the key changed back: analysed
    want = cached_query(trace, CACHED_QUERIES["net"], "on")
    check(want[3]["derived_cached"] >= 1, f"before damage: {want[3]}")
    for at in (3, 40, os.path.getsize(derived) // 2, os.path.getsize(derived) - 5):
        with open(derived, "r+b") as f:
            f.seek(at)
            b = f.read(1)
            f.seek(at)
            f.write(bytes([b[0] ^ 0x5a]))
        got = cached_query(trace, CACHED_QUERIES["net"], "on")
        lines = got[1].splitlines()
        check(got[0] == want[0] and got[2] == want[2] and got[3]["derived_cached"] == 0 and
              len(lines) == 1 and "is damaged" in lines[0] and "analysed again" in lines[0],
              f"byte {at} changed: rc {got[2]}, stderr {got[1]!r}, {got[3]}")
        check(cached_query(trace, CACHED_QUERIES["net"], "on")[3]["derived_cached"] >= 1,
              f"byte {at} changed: not written anew")
    # an attribute the query does not name is not made (its offsets never read): a text
    # offset forged in Network.input goes unseen by the query, not by one naming it
    forge_derived(derived, "text", "input")
    got = cached_query(trace, CACHED_QUERIES["net"], "on")
    check(got[:3] == want[:3] and got[3]["derived_cached"] >= 1,
          f"forged input, not named: rc {got[2]}, stderr {got[1]!r}, {got[3]}")
    got = cached_query(trace, "range of N is Network retrieve (N.id, N.input)", "on")
    check(got[3]["derived_cached"] == 0 and "is damaged (a text is out of place)" in got[1],
          f"forged input, named: rc {got[2]}, stderr {got[1]!r}, {got[3]}")
    cached_query(trace, CACHED_QUERIES["net"], "on")  # written anew
    # damage the checksum cannot see (a file written so, or changed with it made right
    # again): the columns the relations map are checked too, never trusted
    for what, why in (("text", "a text is out of place"),
                      ("count", "a relation's count is not one")):
        forge_derived(derived, what, "sender")
        got = cached_query(trace, CACHED_QUERIES["net"], "on")
        lines = got[1].splitlines()
        check(got[0] == want[0] and got[2] == want[2] and got[3]["derived_cached"] == 0 and
              len(lines) == 1 and f"is damaged ({why})" in lines[0],
              f"forged {what}: rc {got[2]}, stderr {got[1]!r}, {got[3]}")
        check(cached_query(trace, CACHED_QUERIES["net"], "on")[3]["derived_cached"] >= 1,
              f"forged {what}: not written anew")
    # a FIFO in its place: neither opened blocking nor renamed over
    os.unlink(derived)
    os.mkfifo(derived)
    got = cached_query(trace, CACHED_QUERIES["net"], "on")
    check(got[0] == want[0] and stat.S_ISFIFO(os.lstat(derived).st_mode),
          f"a FIFO in the cache's place: {got[1]!r}")
    os.unlink(derived)
    # failed analyses and damage: a damaged trace answers warm as cold, exit 1 and all
    for scenario in ("rule2", "damaged"):
        d = mktrace(scenario)
        v = same_three_ways(d, scenario, CACHED_QUERIES["violation"],
                            answer=scenario == "rule2")
        s = same_three_ways(d, scenario + " steps", CACHED_QUERIES["steps"])
        check((v[2], s[2]) == ((0, 0) if scenario == "rule2" else (1, 1)) and
              (scenario == "rule2") == ("damaged place" not in v[1]),
              f"{scenario}: exits {v[2]}, {s[2]}: {v[1]!r}")


main({"three_tier": test_three_tier, "cache": test_cache, "redis": test_redis,
      "redis_analyses": test_redis_analyses, "nginx_analyses": test_nginx_analyses,
      "violations": test_violations, "join_violation_thread": test_join_violation_thread,
      "errors": test_errors, "deadlock": test_deadlock, "model": test_model,
      "display": test_display})
